//! What the engine decides and the reports show: the status of each task
//! and unit, and the region of a file closest to a search text that was
//! not found (PROTOCOL §9). Plain data, shared by both layers.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Success,
    Failed,
    Skipped,
    /// Nothing to do: the file already has the change (PROTOCOL §8,
    /// `already_applied`). A success: the document's intent holds.
    AlreadyApplied,
}

impl TaskStatus {
    /// Whether the task's change is in effect: done now, or before.
    pub fn holds(self) -> bool {
        matches!(self, TaskStatus::Success | TaskStatus::AlreadyApplied)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockStatus {
    Success,
    Failed,
    /// Not run: the unit has a validation error.
    Malformed,
}

/// The region of a file most like the search text.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Closest {
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// 0 to 1: the share of characters the two texts have in common.
    pub similarity: f64,
    /// A unified diff from the search text to the region.
    pub diff: String,
    /// When the two differ only in white space, or the search has lines the
    /// file cannot have (a copied fence or file name, blank lines at its
    /// ends): what exactly, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<String>,
}

/// How an edit found the text it replaced (PROTOCOL §3): exactly, or by a
/// pass that looks beyond exact text once no exact occurrence exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Matched {
    /// The search text occurs as written.
    #[default]
    Exact,
    /// clada's white-space tier: lines equal but for one uniform
    /// indentation shift and white space at their ends.
    Whitespace,
    /// codex's second pass: white space at line ends ignored.
    Trailing,
    /// codex's third pass: white space at both ends of lines ignored
    /// (clada asks for one uniform indentation shift).
    Trimmed,
    /// codex's last pass: as trimmed, with Unicode dashes, quotes and
    /// spaces read as their ASCII forms.
    Unicode,
}

impl Matched {
    /// The stable name, as in reports: `whitespace`.
    pub fn as_str(self) -> &'static str {
        match self {
            Matched::Exact => "exact",
            Matched::Whitespace => "whitespace",
            Matched::Trailing => "trailing",
            Matched::Trimmed => "trimmed",
            Matched::Unicode => "unicode",
        }
    }
}

/// How far the replacement was re-indented to stand where the search text
/// was found (PROTOCOL §3): the file indents those lines by `indent` more
/// (or less) than the edit wrote them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Shift {
    /// Characters of indentation added to each non-blank line of the
    /// replacement; negative when taken away.
    pub by: i64,
    /// The characters added (or taken away), the file's own.
    pub indent: String,
}

/// When an edit found several equal candidates and one was taken: how
/// many, and what chose it (the nearest to its line hint, or the order of
/// a file's hunks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Chosen {
    pub candidates: usize,
    pub by: ChosenBy,
    /// The line the edit was written for (`by: "line"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<usize>,
}

/// What chose one of several equal candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChosenBy {
    /// The edit's line hint: the candidate nearest to it.
    Line,
    /// The order of a file's hunks (PROTOCOL §11.8): the only candidate
    /// after the end of the hunk before it.
    Order,
}

/// Why a match that needs re-indenting was not applied (PROTOCOL §3): the
/// three indentations, and what keeps the result from being determined.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Indentation {
    /// The 1-based line of the file the indentations are of.
    pub line: usize,
    /// How the file indents that line.
    pub file: String,
    /// How the search text indents it.
    pub search: String,
    /// How the replacement indents its first non-blank line.
    pub replacement: String,
    pub problem: IndentProblem,
}

/// What keeps a shifted match from being applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IndentProblem {
    /// The replacement's first non-blank line is indented unlike the
    /// search's: where its lines belong is not determined.
    Replacement,
    /// The lines of the occurrence are shifted by different amounts (the
    /// search's first line lacks its indentation, its other lines do not).
    Uneven,
    /// The file indents with other characters than the search (tabs
    /// against spaces).
    Characters,
    /// A line of the replacement has less indentation than the shift takes
    /// away.
    Shallow,
    /// The occurrences are indented differently, so the replacement would
    /// be written differently at each.
    Occurrences,
}

/// An occurrence of a search text, with a line either side (PROTOCOL §9).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Excerpt {
    /// The 1-based line of the first line shown.
    pub start_line: usize,
    /// The line the occurrence starts on.
    pub line: usize,
    /// The lines shown, without their line breaks.
    pub text: Vec<String>,
}
