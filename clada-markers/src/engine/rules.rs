//! What a dialect's block asks beyond clada's rules ([`BlockRules`],
//! PROTOCOL §11): checked before a task is planned, against the tree as
//! the run sees it. Nothing here changes anything.

use crate::engine::fs::locate_task;
use crate::engine::task_error::TaskError;
use crate::engine::tree::{FsError, Kind, Tree};
use crate::error_type::ErrorType;
use crate::syntax::{BlockRules, Op, TaskPath};

/// Why `op`, a task of a block under `rules`, must not run, if it must
/// not. Paths that do not resolve are left to the plan to refuse.
pub(crate) fn check(
    op: &Op<'_>,
    rules: BlockRules,
    files: &dyn Tree,
    allow_escape: bool,
) -> Result<(), TaskError> {
    let kind = |p: &TaskPath<'_>| match locate_task(p, allow_escape) {
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
        Op::Remove { path } => match kind(path)? {
            Some((Kind::Dir, _)) if rules.files_only => {
                return Err(not_a_file(path, "a deletion"));
            }
            Some((Kind::File, at)) if rules.remove_emptied => {
                let left = files.read(&at)?;
                if !left.is_empty() {
                    return Err(not_emptied(path, &left));
                }
            }
            _ => {}
        },
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

/// A deletion whose removed lines were not all of its file: `left` is what
/// they left of it.
fn not_emptied(path: &str, left: &[u8]) -> TaskError {
    let text = String::from_utf8_lossy(left);
    let lines = text.lines().count().max(1);
    let first = match text.lines().find(|l| !l.trim().is_empty()) {
        Some(l) => format!(
            "the first holding `{}`",
            l.chars().take(80).collect::<String>()
        ),
        None => "blank".to_owned(),
    };
    TaskError::new(
        ErrorType::MatchCountMismatch,
        format!(
            "the diff deletes {path}, but its removed lines are not all of the file: {lines} line{s} would remain ({first}), so nothing was deleted",
            s = if lines == 1 { "" } else { "s" },
        ),
    )
    .with_hint(format!(
        "to delete {path}, list every line of it with `-`; to keep it, send a diff that edits it (`--- a/{path}` and `+++ b/{path}`)"
    ))
}

fn exists(path: &str, what: &str) -> TaskError {
    TaskError::new(
        ErrorType::FileExists,
        format!("{path} exists already, and it is {what}"),
    )
}
