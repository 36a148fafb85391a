//! Lexical checks of the paths written in a document (PROTOCOL §5).
//!
//! These look only at the text: whether it is empty, holds NUL, is absolute,
//! or climbs out of the root through `..`. Whether a path crosses a symbolic
//! link is a question for the file system, answered by the engine at the
//! moment of access.

/// Why a path cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathProblem {
    Empty,
    Nul,
    /// Starts with `/`, `\` or a drive letter such as `C:`.
    Absolute,
    /// Climbs above the root through `..`.
    ParentEscape,
    /// Names the root directory itself (`.`, `a/..`).
    Root,
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
            PathProblem::Absolute => "is absolute",
            PathProblem::ParentEscape => "climbs out of the root through `..`",
            PathProblem::Root => "names the root directory itself",
        }
    }
}

/// The components of a relative path after `.` and `..` are resolved, or
/// why it is not one. `/` and `\` both separate components. An empty result
/// means the root itself.
pub fn normalize(path: &str) -> Result<Vec<&str>, PathProblem> {
    if path.is_empty() {
        return Err(PathProblem::Empty);
    }
    if path.contains('\0') {
        return Err(PathProblem::Nul);
    }
    if is_absolute(path) {
        return Err(PathProblem::Absolute);
    }
    let mut parts = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathProblem::ParentEscape);
                }
            }
            _ => parts.push(part),
        }
    }
    Ok(parts)
}

/// Whether the text of `path` is absolute on any common system.
pub(crate) fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    matches!(b.first(), Some(b'/' | b'\\'))
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
}

/// Whether resolved components name `.clada/` at the root (where
/// approvals once lived, and may still be read by older versions) or a git
/// repository's internals (any `.git`). Documents never change these: one
/// that could write `.git/config` could make git run anything. The full
/// check, with clada's own directories, is `Root::check_lands`.
pub(crate) fn is_protected(parts: &[impl AsRef<str>]) -> bool {
    parts.first().is_some_and(|p| p.as_ref() == ".clada")
        || parts.iter().any(|p| p.as_ref() == ".git")
}

/// Checks a path that must name something below the root; returns its
/// resolved components.
pub(crate) fn check_below_root(path: &str) -> Result<Vec<&str>, PathProblem> {
    let parts = normalize(path)?;
    if parts.is_empty() {
        return Err(PathProblem::Root);
    }
    Ok(parts)
}

/// Checks a path that may also name the root itself (a directory to run
/// in, a directory to move into); returns its resolved components.
pub(crate) fn check_within_root(path: &str) -> Result<Vec<&str>, PathProblem> {
    normalize(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_dots() {
        assert_eq!(normalize("a/./b/../c").unwrap(), ["a", "c"]);
        assert_eq!(normalize(r"a\b").unwrap(), ["a", "b"]);
        assert_eq!(normalize("a/").unwrap(), ["a"]);
    }

    #[test]
    fn rejects_what_leaves_the_root() {
        assert_eq!(normalize(""), Err(PathProblem::Empty));
        assert_eq!(normalize("a\0b"), Err(PathProblem::Nul));
        assert_eq!(normalize("/etc"), Err(PathProblem::Absolute));
        assert_eq!(normalize(r"\x"), Err(PathProblem::Absolute));
        assert_eq!(normalize("C:/x"), Err(PathProblem::Absolute));
        assert_eq!(normalize(".."), Err(PathProblem::ParentEscape));
        assert_eq!(normalize("a/../../b"), Err(PathProblem::ParentEscape));
        assert_eq!(normalize(r"a\..\..\b"), Err(PathProblem::ParentEscape));
    }

    #[test]
    fn protects_clada_and_git_internals() {
        assert!(is_protected(
            &normalize(".clada/allowed-commands.json").unwrap()
        ));
        assert!(is_protected(&normalize("a/../.git/config").unwrap()));
        assert!(is_protected(&normalize("vendor/lib/.git/hooks/x").unwrap()));
        assert!(!is_protected(&normalize("src/.clada").unwrap()));
        assert!(!is_protected(&normalize(".gitignore").unwrap()));
        assert!(!is_protected(
            &normalize(".github/workflows/ci.yml").unwrap()
        ));
    }

    #[test]
    fn tells_the_root_itself_apart() {
        assert_eq!(check_below_root("a/.."), Err(PathProblem::Root));
        assert_eq!(check_below_root("."), Err(PathProblem::Root));
        assert_eq!(check_within_root("./").map(drop), Ok(()));
        assert_eq!(check_below_root("a..b").map(drop), Ok(()));
    }
}
