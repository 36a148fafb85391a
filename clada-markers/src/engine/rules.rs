//! What a dialect's block asks beyond clada's rules ([`BlockRules`],
//! PROTOCOL §11): checked before a task is planned, against the tree as
//! the run sees it. Nothing here changes anything.

use crate::engine::TaskError;
use crate::engine::fs::{Files, FsError, Kind, locate};
use crate::error_type::ErrorType;
use crate::syntax::ast::{BlockRules, Op};

/// Why `op`, a task of a block under `rules`, must not run, if it must
/// not. Paths that do not resolve are left to the plan to refuse.
pub(crate) fn check(
    op: &Op<'_>,
    rules: BlockRules,
    files: &dyn Files,
    allow_escape: bool,
) -> Result<(), TaskError> {
    let kind = |p: &str| match locate(p, allow_escape) {
        Ok(at) => files.kind(&at).map(|k| k.map(|k| (k, at))),
        Err(_) => Ok(None),
    };
    let not_a_file = |path: &str, what: &str| {
        let mut e = TaskError::from(FsError::IsDirectory {
            path: path.to_owned(),
        });
        e.message_mut().push_str(&format!(
            "; {what} takes a file (a clada REMOVE or MOVE takes a directory)"
        ));
        e
    };
    match op {
        Op::Remove { path } if rules.files_only => {
            if let Some((Kind::Dir, _)) = kind(path)? {
                return Err(not_a_file(path, "a deletion"));
            }
        }
        Op::Move { from, to } => {
            if rules.files_only {
                if let Some((Kind::Dir, _)) = kind(from)? {
                    return Err(not_a_file(from, "a rename"));
                }
                if to.ends_with('/') || matches!(kind(to)?, Some((Kind::Dir, _))) {
                    return Err(not_a_file(to, "a rename"));
                }
            }
            if rules.create_only && kind(to)?.is_some() {
                return Err(exists(to, "the file it would be renamed to"));
            }
        }
        Op::Write {
            path,
            content,
            append: false,
        } if rules.create_only => match kind(path)? {
            Some((Kind::File, at)) if files.read(&at)? == content.as_bytes() => {
                return Err(TaskError::new(
                    ErrorType::AlreadyApplied,
                    format!(
                        "{path} exists already with exactly this content: it was created before"
                    ),
                ));
            }
            Some(_) => return Err(exists(path, "the file to create")),
            None => {}
        },
        // Lines with nothing around them can go anywhere in a file that
        // holds any: only an empty (or new) file gives them one place.
        Op::Write {
            path, append: true, ..
        } if rules.create_only => {
            if let Some((Kind::File, at)) = kind(path)?
                && !files.read(&at)?.is_empty()
            {
                return Err(TaskError::new(
                    ErrorType::MatchCountMismatch,
                    format!(
                        "these lines come with no context or removed lines, and {path} is not empty: they could go anywhere in it"
                    ),
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

fn exists(path: &str, what: &str) -> TaskError {
    TaskError::new(
        ErrorType::FileExists,
        format!("{path} exists already, and it is {what}"),
    )
}
