//! The paths written in a document (PROTOCOL §5), resolved once into one
//! type, [`Location`], by [`resolve`]: validation reports its problems
//! (`values`), and the engine and the built-in commands access what it
//! names through `Root`, which checks links and protection where a change
//! lands.

// Without the engine, locations are made by the parser's path checks only.
#![cfg_attr(not(feature = "engine"), allow(dead_code))]

use std::sync::Arc;

/// Why a path cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathProblem {
    Empty,
    Nul,
    /// Holds a control character other than NUL (C0, DEL, C1): a line
    /// feed in a name would print lines of its own in a report or in a
    /// file clada appends to.
    Control,
    /// Starts with `/`, `\` or a drive letter such as `C:`.
    Absolute,
    /// Climbs above the root through `..`.
    ParentEscape,
    /// Names the root directory itself (`.`, `a/..`).
    Root,
    /// Has more than 1,024 components (`MAX_PATH_COMPONENTS`), once resolved.
    TooDeep,
}

impl PathProblem {
    /// Whether `--allow-escape` lifts this problem.
    pub fn allowed_by_escape(self) -> bool {
        matches!(self, PathProblem::Absolute | PathProblem::ParentEscape)
    }

    pub fn describe(self) -> &'static str {
        match self {
            PathProblem::Empty => "is empty",
            PathProblem::Nul => "contains a NUL character",
            PathProblem::Control => {
                "holds a control character (a line feed, tab, escape, DEL or C1 control)"
            }
            PathProblem::Absolute => "is absolute",
            PathProblem::ParentEscape => "climbs out of the root through `..`",
            PathProblem::Root => "names the root directory itself",
            PathProblem::TooDeep => "has more components than a path may have",
        }
    }
}

/// The components of a relative path after `.` and `..` are resolved, or
/// why it is not one. An empty result means the root itself.
pub(crate) fn normalize_path(path: &str) -> Result<Vec<String>, PathProblem> {
    resolve_path(path, false).map(|l| l.parts.to_vec())
}

/// Whether the text of `path` is absolute on any common system.
pub(crate) fn is_absolute_path(path: &str) -> bool {
    let b = path.as_bytes();
    matches!(b.first(), Some(b'/' | b'\\'))
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// Whether a location is `.clada/` at the top of the root (where
/// approvals once lived, and older versions may still read them) or inside
/// a git repository's internals (a `.git` component anywhere). Documents
/// never change these: one that could write `.git/config` could make git
/// run anything. With clada's own directories, `Root::check_lands` checks
/// where every change lands.
pub(crate) fn is_protected(at: &Location) -> bool {
    let parts = at.parts();
    (at.anchor == Anchor::Root && parts.first().is_some_and(|p| p == ".clada"))
        || parts.iter().any(|p| p == ".git")
}

/// A path resolved as text: where it starts and its components.
///
/// The components are shared: the view keeps a location as a key, in its
/// steps and in what a rollback restores, and a run of a million tasks
/// would otherwise hold four copies of every path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Location {
    pub(crate) anchor: Anchor,
    pub(crate) parts: Arc<[String]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Anchor {
    Root,
    /// So many levels above the root (`--allow-escape`).
    Up(usize),
    /// The file system root (`--allow-escape`).
    Slash,
}

impl Location {
    /// A location below the root, from plain components.
    pub(crate) fn below_root(parts: &[&str]) -> Location {
        Location {
            anchor: Anchor::Root,
            parts: parts.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    /// The components, after `.` and `..` were resolved.
    pub(crate) fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The path as people see it.
    pub(crate) fn display(&self) -> String {
        let joined = self.parts.join("/");
        match self.anchor {
            Anchor::Root if joined.is_empty() => ".".to_owned(),
            Anchor::Root => joined,
            Anchor::Up(n) => {
                let mut s = "../".repeat(n);
                s.push_str(&joined);
                s.trim_end_matches('/').to_owned()
            }
            Anchor::Slash => format!("/{joined}"),
        }
    }

    /// The last component, if the path names something below its anchor.
    pub(crate) fn name(&self) -> Option<&str> {
        self.parts.last().map(String::as_str)
    }

    /// This location with `name` added.
    pub(crate) fn join(&self, name: &str) -> Location {
        let parts = self.parts.iter().cloned();
        Location {
            anchor: self.anchor,
            parts: parts.chain([name.to_owned()]).collect(),
        }
    }

    pub(crate) fn prefix(&self, n: usize) -> String {
        Location {
            anchor: self.anchor,
            parts: self.parts[..n].into(),
        }
        .display()
    }

    /// The directory holding this location, if it names something below
    /// its anchor.
    pub(crate) fn parent(&self) -> Option<Location> {
        let (_, rest) = self.parts.split_last()?;
        Some(Location {
            anchor: self.anchor,
            parts: rest.into(),
        })
    }

    /// This location cut to its first `n` components.
    pub(crate) fn truncated(&self, n: usize) -> Location {
        Location {
            anchor: self.anchor,
            parts: self.parts[..n.min(self.parts.len())].into(),
        }
    }

    /// This location with its anchor and first `depth` components
    /// replaced by `onto` (where it is when what `onto` names moved), in
    /// one copy.
    pub(crate) fn rebased(&self, depth: usize, onto: &Location) -> Location {
        let rest = self.parts.get(depth..).unwrap_or(&[]);
        Location {
            anchor: onto.anchor,
            parts: onto.parts.iter().chain(rest).cloned().collect(),
        }
    }

    /// Whether `other` lies below this location.
    pub(crate) fn is_ancestor_of(&self, other: &Location) -> bool {
        self.anchor == other.anchor
            && other.parts.len() > self.parts.len()
            && other.parts.starts_with(&self.parts)
    }

    /// Whether this names the root itself.
    pub(crate) fn is_root(&self) -> bool {
        self.anchor == Anchor::Root && self.parts.is_empty()
    }
}

/// Whether `path` holds a control character (C0, DEL or C1), which no
/// path may (PROTOCOL §5): in every dialect, attribute, built-in argument
/// and MOVE target alike, since they all come here.
fn has_control(path: &str) -> bool {
    path.chars().any(char::is_control)
}

/// Resolves the text of a path, once, into a [`Location`]: `/` and `\\`
/// separate components, `.` and `..` are resolved. Empty text, NUL and a
/// drive letter are always refused; an absolute path or `..` above the
/// root only without `allow_escape`. Whether the path crosses a link is
/// for the file system to say, at the moment of access.
pub(crate) fn resolve_path(path: &str, allow_escape: bool) -> Result<Location, PathProblem> {
    let at = resolve_any_depth(path, allow_escape)?;
    TooDeep::check(&at).map_err(|_| PathProblem::TooDeep)?;
    Ok(at)
}

/// The most components a path may have once `.` and `..` are resolved,
/// each `..` above the root counted as one (PROTOCOL §5). Every lookup,
/// plan and built-in argument is then bounded: no project nests anywhere
/// near this deep (Linux's `PATH_MAX` of 4,096 bytes holds at most 2,048
/// components, and tools that pass whole paths fail long before that).
pub(crate) const MAX_PATH_COMPONENTS: usize = 1024;

/// A path with more components than [`MAX_PATH_COMPONENTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooDeep {
    /// How many it has, resolved.
    pub(crate) components: usize,
}

impl TooDeep {
    /// Refuses a location deeper than the limit.
    pub(crate) fn check(at: &Location) -> Result<(), TooDeep> {
        let components = at.parts.len()
            + match at.anchor {
                Anchor::Up(n) => n,
                Anchor::Root | Anchor::Slash => 0,
            };
        if components > MAX_PATH_COMPONENTS {
            return Err(TooDeep { components });
        }
        Ok(())
    }

    /// How many components the text `path` has, if that is more than the
    /// limit (for the message of a refused path).
    pub(crate) fn of(path: &str, allow_escape: bool) -> Option<TooDeep> {
        resolve_any_depth(path, allow_escape)
            .ok()
            .and_then(|at| TooDeep::check(&at).err())
    }

    /// Says what is wrong with `path`, named as `what` ("path", "the
    /// argument").
    pub(crate) fn message(self, what: &str, path: &str) -> String {
        format!(
            "{what} `{}` has {} components (`.` and `..` resolved), more than the \
             {MAX_PATH_COMPONENTS} a path may have",
            abbreviated_path(path),
            self.components
        )
    }

    /// What to write instead.
    pub(crate) fn help() -> String {
        format!(
            "no project nests this deep: name a path of at most {MAX_PATH_COMPONENTS} components"
        )
    }
}

/// The start and the end of a long path, for a message that names it.
pub(crate) fn abbreviated_path(path: &str) -> String {
    const KEEP: usize = 40;
    if path.len() <= 2 * KEEP + 3 {
        return path.to_owned();
    }
    let mut head = KEEP;
    while !path.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = path.len() - KEEP;
    while !path.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}…{}", &path[..head], &path[tail..])
}

/// [`resolve`] without the limit on components.
fn resolve_any_depth(path: &str, allow_escape: bool) -> Result<Location, PathProblem> {
    if path.is_empty() {
        return Err(PathProblem::Empty);
    }
    if path.contains('\0') {
        return Err(PathProblem::Nul);
    }
    if has_control(path) {
        return Err(PathProblem::Control);
    }
    let absolute = is_absolute_path(path);
    if absolute && (!allow_escape || !matches!(path.as_bytes()[0], b'/' | b'\\')) {
        // A drive letter names nothing on this system.
        return Err(PathProblem::Absolute);
    }
    let mut parts: Vec<String> = Vec::new();
    let mut ups = 0;
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() && !absolute {
                    ups += 1;
                }
            }
            _ => parts.push(part.to_owned()),
        }
    }
    let anchor = match (absolute, ups) {
        (true, _) => Anchor::Slash,
        (false, 0) => Anchor::Root,
        (false, n) if allow_escape => Anchor::Up(n),
        _ => return Err(PathProblem::ParentEscape),
    };
    Ok(Location {
        anchor,
        parts: parts.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::diagnostics::DiagnosticKind as K;

    #[test]
    fn resolves_dots() {
        assert_eq!(normalize_path("a/./b/../c").unwrap(), ["a", "c"]);
        assert_eq!(normalize_path(r"a\b").unwrap(), ["a", "b"]);
        assert_eq!(normalize_path("a/").unwrap(), ["a"]);
    }

    #[test]
    fn rejects_what_leaves_the_root() {
        assert_eq!(normalize_path(""), Err(PathProblem::Empty));
        assert_eq!(normalize_path("a\0b"), Err(PathProblem::Nul));
        for bad in [
            "a\nb", "a\tb", "x\r", "\x1b[31m", "a\x7f", "a\u{85}b", "a\u{9b}",
        ] {
            assert_eq!(normalize_path(bad), Err(PathProblem::Control), "{bad:?}");
            assert_eq!(
                resolve_path(bad, true),
                Err(PathProblem::Control),
                "{bad:?}"
            );
        }
        assert_eq!(normalize_path("/etc"), Err(PathProblem::Absolute));
        assert_eq!(normalize_path(r"\x"), Err(PathProblem::Absolute));
        assert_eq!(normalize_path("C:/x"), Err(PathProblem::Absolute));
        assert_eq!(normalize_path(".."), Err(PathProblem::ParentEscape));
        assert_eq!(normalize_path("a/../../b"), Err(PathProblem::ParentEscape));
        assert_eq!(normalize_path(r"a\..\..\b"), Err(PathProblem::ParentEscape));
    }

    fn at(p: &str) -> Location {
        resolve_path(p, true).unwrap()
    }

    #[test]
    fn protects_clada_and_git_internals() {
        assert!(is_protected(&at(".clada/allowed-commands.json")));
        assert!(is_protected(&at("a/../.git/config")));
        assert!(is_protected(&at("vendor/lib/.git/hooks/x")));
        assert!(is_protected(&at("../elsewhere/.git/config")));
        assert!(!is_protected(&at("src/.clada")));
        assert!(!is_protected(&at("../.clada")));
        assert!(!is_protected(&at(".gitignore")));
        assert!(!is_protected(&at(".github/workflows/ci.yml")));
    }

    #[test]
    fn tells_the_root_itself_apart() {
        assert!(at("a/..").is_root() && at(".").is_root() && at("./").is_root());
        assert!(!at("a..b").is_root() && !at("..").is_root());
    }

    #[test]
    fn escapes_only_when_allowed() {
        assert_eq!(resolve_path("../x", true).unwrap().display(), "../x");
        assert_eq!(resolve_path("/etc/x", true).unwrap().display(), "/etc/x");
        assert_eq!(resolve_path("C:/x", true), Err(PathProblem::Absolute));
        assert_eq!(resolve_path("", true), Err(PathProblem::Empty));
        assert_eq!(
            resolve_path("a/../..", false),
            Err(PathProblem::ParentEscape)
        );
    }

    #[test]
    fn refuses_a_path_deeper_than_the_limit_after_resolving_it() {
        let deep = |n: usize| "d/".repeat(n - 1) + "f";
        assert_eq!(
            resolve_path(&deep(MAX_PATH_COMPONENTS), false)
                .unwrap()
                .parts()
                .len(),
            1024
        );
        assert_eq!(
            resolve_path(&deep(MAX_PATH_COMPONENTS + 1), false),
            Err(PathProblem::TooDeep)
        );
        assert_eq!(
            TooDeep::of(&deep(64_000), false),
            Some(TooDeep { components: 64_000 })
        );
        // What counts is the path resolved: `.` and `..` cost nothing...
        let back_and_forth = format!("{}{}", "a/../".repeat(10_000), deep(1000));
        assert!(resolve_path(&back_and_forth, false).is_ok());
        // ...but each `..` above the root is a step.
        let up = format!("{}{}", "../".repeat(30), deep(1000));
        assert_eq!(resolve_path(&up, true), Err(PathProblem::TooDeep));
        assert_eq!(TooDeep::of(&up, true), Some(TooDeep { components: 1030 }));
        assert!(resolve_path(&format!("/{}", deep(1024)), true).is_ok());
    }

    #[test]
    fn the_message_of_a_path_too_deep_names_the_limit_and_the_count_briefly() {
        let path = "dir/".repeat(5000) + "f.txt";
        let message = TooDeep { components: 5001 }.message("path", &path);
        assert!(message.contains("5001 components"), "{message}");
        assert!(message.contains("more than the 1024"), "{message}");
        assert!(message.len() < 200, "{message}");
        assert!(TooDeep::help().contains("at most 1024 components"));
        assert_eq!(abbreviated_path("short/path"), "short/path");
        assert_eq!(abbreviated_path(&"é".repeat(100)).chars().count(), 41);
    }

    #[test]
    fn a_document_naming_a_path_too_deep_is_refused_where_it_names_it() {
        let deep = "d/".repeat(1500) + "f";
        let src = format!(
            "<<<<<<< WRITE path=\"{deep}\"\nx\n>>>>>>> END\n\
             <<<<<<< MOVE from=\"a\" to=\"{deep}\"\n>>>>>>> END\n\
             <<<<<<< RUN dir=\"{deep}\"\nls\n>>>>>>> END\n"
        );
        let doc = crate::parse(&src);
        let found: Vec<_> = doc
            .diagnostics
            .iter()
            .map(|d| (d.kind, src[d.span.range()].trim_matches('"')))
            .collect();
        assert_eq!(found, vec![(K::PathEscape, deep.as_str()); 3]);
        assert!(doc.diagnostics[0].message.starts_with("path `d/d/"));
        assert!(doc.diagnostics[1].message.starts_with("`to` path `d/d/"));
        assert!(doc.diagnostics[0].message.contains("1501 components"));
        assert!(doc.tasks().all(|t| t.op.is_none()));
    }
}
