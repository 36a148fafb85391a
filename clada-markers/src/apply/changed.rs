//! What a run changes, as its commits and its undo name it (PROTOCOL §7):
//! the paths a batch of units is about to change, read from their tasks
//! before they run, and what the tasks that took effect did, in words for
//! the commit's message.
//!
//! It never reads a file's contents: paths come from the tasks, and only
//! where a MOVE lands (into a directory or onto a path) is asked of the
//! tree.

use crate::engine::fs::{Root, locate_task};
use crate::engine::git::Touch;
use crate::engine::plan::Effect;
use crate::engine::tree::{Kind, Tree};
use crate::syntax::{Op, Unit};

/// The paths the tasks of `units` are about to change, as the commit
/// before them saves their uncommitted changes: a file a task writes or
/// edits (and a MOVE's target, which it replaces), and the tracked files
/// at or below what a task moves away or removes. A path that does not
/// resolve is left out: its task fails before it changes anything.
pub(crate) fn about_to_change<'a, 'd: 'a>(
    units: impl Iterator<Item = &'a Unit<'d>>,
    root: &Root,
    allow_escape: bool,
) -> Vec<Touch> {
    let mut out = Vec::new();
    for task in units.flat_map(|u| u.tasks()) {
        let Some(op) = &task.op else { continue };
        let at = |path| locate_task(path, allow_escape).ok();
        match op {
            Op::Write { path, .. } | Op::Edit { path, .. } | Op::EditRange { path, .. } => {
                out.extend(at(path).map(|l| Touch::File(l.display())));
            }
            Op::Remove { path } => out.extend(at(path).map(|l| Touch::Tracked(l.display()))),
            Op::Move { from, to } => {
                let Some(from) = at(from) else { continue };
                out.push(Touch::Tracked(from.display()));
                let (Some(to_loc), Some(name)) = (at(to), from.name()) else {
                    continue;
                };
                let into = to.ends_with(['/', '\\'])
                    || to_loc.is_root()
                    || matches!(root.kind(&to_loc), Ok(Some(Kind::Dir)));
                let target = if into { to_loc.join(name) } else { to_loc };
                out.push(Touch::File(target.display()));
            }
            Op::Run { .. } => {}
        }
    }
    out
}

/// What a task that took effect changed, as the commit after the tasks
/// names it (a command's changes are found by the work tree's status).
pub(crate) fn touched_by(effect: &Effect) -> Option<Touch> {
    match effect {
        Effect::Created { path }
        | Effect::Replaced { path }
        | Effect::Appended { path }
        | Effect::Edited { path, .. } => Some(Touch::File(path.clone())),
        Effect::Removed { path } => Some(Touch::Tracked(path.clone())),
        Effect::Moved { from, to } => Some(Touch::Moved {
            from: from.clone(),
            to: to.clone(),
        }),
        Effect::Ran { .. } => None,
    }
}

/// What a run did, in the words of its commit's message:
/// `clada: edit src/a.py, create src/b.py (3 tasks)`.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    /// What the tasks did, each said once, in the order they did it.
    said: Vec<String>,
    /// The same, to say each once without a look through them all.
    seen: std::collections::HashSet<String>,
    applied: usize,
    tasks: usize,
}

/// How many things a message names before it says how many more.
const NAMED: usize = 6;

impl Summary {
    /// Counts a task, and says what it did when it took effect.
    pub(crate) fn task(&mut self, effect: Option<&Effect>) {
        self.tasks += 1;
        let Some(effect) = effect else { return };
        self.applied += 1;
        let words = match effect {
            Effect::Created { path } => format!("create {path}"),
            Effect::Replaced { path } => format!("write {path}"),
            Effect::Appended { path } => format!("append to {path}"),
            Effect::Edited { path, .. } => format!("edit {path}"),
            Effect::Moved { from, to } => format!("move {from} to {to}"),
            Effect::Removed { path } => format!("remove {path}"),
            Effect::Ran { command } => {
                let line = command.lines().next().unwrap_or_default();
                let short: String = line.chars().take(60).collect();
                let cut = short.len() < line.len() || command.lines().nth(1).is_some();
                format!("run `{short}{}`", if cut { "…" } else { "" })
            }
        };
        if self.seen.insert(words.clone()) {
            self.said.push(words);
        }
    }

    /// Whether a task took effect.
    pub(crate) fn took_effect(&self) -> bool {
        self.applied > 0
    }

    /// The message of the commit after the tasks; `commands`: the files
    /// the commands changed, if any.
    pub(crate) fn message(&self, commands: &[String]) -> String {
        let mut what = if self.said.is_empty() {
            "apply".to_owned()
        } else {
            named(&self.said, ", ")
        };
        if !commands.is_empty() {
            what.push_str(&format!("; commands changed {}", named(commands, " and ")));
        }
        let count = match (self.applied, self.tasks) {
            (1, 1) => "1 task".to_owned(),
            (a, t) if a == t => format!("{t} tasks"),
            (a, t) => format!("{a} of {t} tasks"),
        };
        format!("clada: {what} ({count})")
    }
}

/// The message of the commit before the tasks, which saves the
/// uncommitted changes of `paths` (below the work tree's top), the files
/// they are about to change.
pub(crate) fn before_message(paths: &[String]) -> String {
    format!(
        "clada: save uncommitted changes of {} before applying",
        named(paths, " and ")
    )
}

/// The first [`NAMED`] of `items`, then how many more, after `last`
/// (`", "`: `a, b, 3 more`; `" and "`: `a, b and 3 more`).
fn named(items: &[String], last: &str) -> String {
    let mut out = items
        .iter()
        .take(NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    let more = items.len().saturating_sub(NAMED);
    if more > 0 {
        out.push_str(&format!("{last}{more} more"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_the_tasks_did() {
        let mut s = Summary::default();
        s.task(Some(&Effect::Created {
            path: "src/b.py".into(),
        }));
        s.task(Some(&Effect::Edited {
            path: "src/a.py".into(),
            replacements: 1,
            lines: vec![1],
            how: crate::engine::seek::How::default(),
        }));
        s.task(Some(&Effect::Created {
            path: "src/b.py".into(),
        }));
        assert_eq!(
            s.message(&[]),
            "clada: create src/b.py, edit src/a.py (3 tasks)"
        );
        s.task(None);
        s.task(Some(&Effect::Ran {
            command: "cargo fmt --all && cargo clippy --workspace --all-targets -- -D warnings"
                .into(),
        }));
        assert_eq!(
            s.message(&["Cargo.lock".to_owned()]),
            "clada: create src/b.py, edit src/a.py, run `cargo fmt --all && cargo clippy --workspace --all-targets --…`; \
             commands changed Cargo.lock (4 of 5 tasks)"
        );
    }

    #[test]
    fn names_a_few_and_counts_the_rest() {
        let mut s = Summary::default();
        for i in 0..9 {
            s.task(Some(&Effect::Removed {
                path: format!("f{i}"),
            }));
        }
        let m = s.message(&[]);
        assert!(m.ends_with("remove f5, 3 more (9 tasks)"), "{m}");
        let paths: Vec<String> = (0..8).map(|i| format!("f{i}")).collect();
        assert_eq!(
            before_message(&paths),
            "clada: save uncommitted changes of f0, f1, f2, f3, f4, f5 and 2 more before applying"
        );
    }
}
