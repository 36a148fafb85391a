//! Which dialect a document is read in ([`Dialect`]): the names of the edit
//! formats clada reads, each front end a file beside this one.

use serde::Serialize;

/// The edit formats clada reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// clada's own format.
    #[default]
    Clada,
    /// aider's SEARCH/REPLACE blocks after a file-name line.
    Aider,
    /// codex's patches, `*** Begin Patch` … `*** End Patch`.
    Codex,
    /// CML v1.0, the XML format clada descends from.
    Cml,
    /// Unified diffs (`git diff`, `diff -u`), one TASKS block per file.
    Udiff,
    /// Cline's and Roo's SEARCH/REPLACE blocks, in their tool calls or
    /// after a file-name line.
    Cline,
}

impl Dialect {
    /// Every dialect, in the order the documentation lists them: one list,
    /// so that a new dialect is one line here for every place that offers
    /// them all (`--dialect`, the Python package, the fuzzers).
    pub const ALL: [Dialect; 6] = [
        Dialect::Clada,
        Dialect::Aider,
        Dialect::Codex,
        Dialect::Cml,
        Dialect::Udiff,
        Dialect::Cline,
    ];

    /// The dialect called `name` ([`Dialect::name`]), if one is.
    pub fn named(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Clada => "clada",
            Dialect::Aider => "aider",
            Dialect::Codex => "codex",
            Dialect::Cml => "cml",
            Dialect::Udiff => "udiff",
            Dialect::Cline => "cline",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
