//! The engine's outcomes in words (PROTOCOL §9.1): what each task did or
//! would do, why it was skipped, what a rollback left. Every sentence a
//! report says about a task is written here.

use super::{BlockReport, ErrorReport, TaskReport};
use crate::engine::TaskOutcome;
use crate::engine::outcome::{Kept, KeptWhy, Rollback, Skip, UnitOutcome};
use crate::engine::plan::Effect;
use crate::engine::seek::How;
use crate::status::{Matched, Shift, TaskStatus};
use crate::syntax::{Task, Unit};

const ALL_OR_NOTHING: &str = "--atomic=document applies all of the document or nothing";

impl TaskReport {
    /// The report of `task`, as the engine decided it.
    pub fn of_outcome(task: &Task<'_>, o: &TaskOutcome) -> TaskReport {
        let mut r = TaskReport::of(task);
        r.status = o.status;
        r.output.clone_from(&o.output);
        r.exit_code = o.exit_code;
        r.duration_ms = o.duration_ms;
        r.rolled_back = o.rolled_back;
        if let Some(Effect::Edited { lines, how, .. }) = &o.effect {
            r.lines = Some(lines.clone());
            r.matched = Some(how.matched);
            r.shift.clone_from(&how.shift);
            r.chosen = how.chosen;
        }
        r.message = match (o.status, &o.error, &o.skip) {
            (TaskStatus::Failed, Some(e), _) => e.message().to_owned(),
            (TaskStatus::AlreadyApplied, Some(e), _) => match &r.path {
                Some(p) if !e.message().contains(p.as_str()) => {
                    format!("Already applied in {p}: {}", e.message())
                }
                _ => format!("Already applied: {}", e.message()),
            },
            (TaskStatus::Skipped, _, Some(why)) => format!("Skipped ({})", skip(why)),
            _ => match (&o.effect, &o.preview) {
                // A dry run's command says how it would run.
                (Some(Effect::Ran { .. }), Some(how)) if o.dry_run => how.clone(),
                (Some(effect), _) => describe(effect, o.dry_run),
                (None, _) => String::new(),
            },
        };
        if o.rolled_back {
            r.message.push_str(" (rolled back)");
        }
        if let Some(e) = &o.error {
            r.error = Some(Box::new(ErrorReport::from_task_error(e.clone())));
        }
        r
    }
}

pub(super) fn block(unit: &Unit<'_>, u: UnitOutcome) -> BlockReport {
    BlockReport {
        number: u.number,
        kind: if u.is_block { "tasks" } else { "standalone" },
        status: u.status,
        start: None,
        end: None,
        tasks: unit
            .tasks()
            .iter()
            .zip(&u.tasks)
            .map(|(task, o)| TaskReport::of_outcome(task, o))
            .collect(),
        note: u.rollback.as_ref().map(note),
    }
}

/// The words of a task skipped because its block stopped, before the
/// number of the task it stopped at.
pub(super) const STOPPED_AT: &str = "block stopped at task ";

/// `message` with the number of the task its block stopped at moved on by
/// `tasks`: a task of a unit of a stream, said in the stream's numbers.
pub(crate) fn shift_stopped_at(message: &str, tasks: usize) -> String {
    let shifted = message.split_once(STOPPED_AT).and_then(|(head, rest)| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let at: usize = rest[..digits].parse().ok()?;
        Some(format!(
            "{head}{STOPPED_AT}{}{}",
            at + tasks,
            &rest[digits..]
        ))
    });
    shifted.unwrap_or_else(|| message.to_owned())
}

fn skip(why: &Skip) -> String {
    match why {
        Skip::BlockStopped { at } => format!("{STOPPED_AT}{at}"),
        Skip::TotalTimeout => "the total timeout passed before it started".to_owned(),
        Skip::DocumentHasErrors => {
            format!("not run: the document has errors, and {ALL_OR_NOTHING}")
        }
        Skip::UnitFailed { unit } => format!("not run: unit {unit} failed, and {ALL_OR_NOTHING}"),
        Skip::BlockMalformed => "block is malformed".to_owned(),
        Skip::NotRun { why } => format!("not run: {why}"),
    }
}

fn note(left: &Rollback) -> String {
    let mut notes = Vec::new();
    if !left.commands_stay.is_empty() {
        let tasks: Vec<String> = left.commands_stay.iter().map(usize::to_string).collect();
        let except = if left.kept.iter().any(Kept::change_stays) {
            ", except where a command's work followed them"
        } else {
            ""
        };
        notes.push(format!(
            "file changes rolled back{except}; what the command of task {} did stays: commands cannot be undone",
            tasks.join(", ")
        ));
    }
    notes.extend(left.kept.iter().map(kept));
    notes.extend(left.problems.iter().cloned());
    notes.join("; ")
}

/// What a rollback left as a command made it, and why.
fn kept(k: &Kept) -> String {
    let tasks: Vec<String> = k.by.iter().map(|b| b.task.to_string()).collect();
    let task = match tasks.as_slice() {
        [one] => format!("task {one}"),
        many => format!("tasks {}", many.join(", ")),
    };
    let command = match k.commands.as_slice() {
        [] => "another writer".to_owned(),
        [one] => format!("the command of task {one}"),
        many => {
            let many: Vec<String> = many.iter().map(usize::to_string).collect();
            format!("a command (tasks {})", many.join(", "))
        }
    };
    let path = &k.path;
    match &k.why {
        KeptWhy::Written => format!(
            "{path} was changed by {command} after {task} wrote it: kept as the command left it, and {task} stays applied"
        ),
        KeptWhy::MovedHere { from } => format!(
            "{path} was changed by {command} after {task} moved it there from {from}: it stays at {path}, and {task} stays applied"
        ),
        KeptWhy::MadeWhereMovedFrom { to } => format!(
            "{command} made a new {path} after {task} moved the old one to {to}: both stay, and {task} stays applied"
        ),
        KeptWhy::PlaceGone { to } => format!(
            "{command} removed what held {path} after {task} moved it to {to}: it stays at {to}, and {task} stays applied"
        ),
        KeptWhy::MadeWhereRemoved => format!(
            "{command} made a new {path} after {task} removed or replaced the old one: the command's stays, the old one is deleted, and {task} stays applied"
        ),
        KeptWhy::DirHolds => {
            format!("{path}, made for {task}, stays: it holds what {command} put there")
        }
        KeptWhy::Gone => format!(
            "{path} was removed (or what held it) by {command} after {task} changed it: nothing to put back, and {task} stays applied"
        ),
    }
}

/// How an edit found its text, in words, when not simply as written
/// (PROTOCOL §9.1): `indented 4 more spaces`.
fn how_found(how: &How) -> Vec<String> {
    let mut out = Vec::new();
    match how.matched {
        Matched::Exact => {}
        Matched::Whitespace if how.shift.is_some() => {}
        Matched::Whitespace => out.push("white space at line ends ignored".to_owned()),
        Matched::Trailing => out.push("matched ignoring white space at line ends".to_owned()),
        Matched::Trimmed => out.push("matched ignoring white space at both line ends".to_owned()),
        Matched::Unicode => {
            out.push("matched with Unicode dashes, quotes and spaces read as ASCII".to_owned());
        }
    }
    if let Some(shift) = &how.shift {
        out.push(shift_words(shift));
    }
    if let Some(c) = how.chosen {
        out.push(match (c.by, c.hint) {
            (crate::status::ChosenBy::Line, Some(hint)) => {
                format!("the nearest to line {hint} of {} candidates", c.candidates)
            }
            _ => format!(
                "the only one of {} candidates after the file's hunk before it",
                c.candidates
            ),
        });
    }
    out
}

/// `indented 4 more spaces`, `indented 1 fewer tab`, `indented more by 1
/// tab and 2 spaces`.
pub(crate) fn shift_words(shift: &Shift) -> String {
    let more = if shift.by > 0 { "more" } else { "fewer" };
    let (tabs, spaces) = (
        shift.indent.matches('\t').count(),
        shift.indent.matches(' ').count(),
    );
    let n =
        |k: usize, one: &str, many: &str| format!("{k} {more} {}", if k == 1 { one } else { many });
    match (tabs, spaces) {
        (0, s) => format!("indented {}", n(s, "space", "spaces")),
        (t, 0) => format!("indented {}", n(t, "tab", "tabs")),
        _ => {
            let by = if shift.by > 0 { "more" } else { "less" };
            format!("indented {by} by {}", indentation_words(&shift.indent))
        }
    }
}

/// What a task did, or in a dry run would do.
fn describe(effect: &Effect, dry: bool) -> String {
    let verb = |done: &'static str, would: &'static str| if dry { would } else { done };
    match effect {
        Effect::Created { path } => format!("{} {path}", verb("Created", "Would create")),
        Effect::Replaced { path } => format!("{} {path}", verb("Wrote", "Would write")),
        Effect::Appended { path } => format!("{} {path}", verb("Appended to", "Would append to")),
        // An edit whose replacement is its search text, found.
        Effect::Edited {
            path,
            replacements: 0,
            lines,
            ..
        } => {
            let at = match lines.as_slice() {
                [one] => format!(", found at line {one}"),
                [] => String::new(),
                more => format!(", found at lines {}", super::group::numbers(more)),
            };
            format!(
                "{} {path} unchanged (the replacement is the search text{at})",
                verb("Left", "Would leave")
            )
        }
        Effect::Edited {
            path,
            replacements,
            how,
            ..
        } => {
            let s = if *replacements == 1 { "" } else { "s" };
            let v = verb("Edited", "Would edit");
            let mut said = vec![format!("{replacements} replacement{s}")];
            said.extend(how_found(how));
            format!("{v} {path} ({})", said.join(", "))
        }
        Effect::Moved { from, to } => format!("{} {from} to {to}", verb("Moved", "Would move")),
        Effect::Removed { path } => format!("{} {path}", verb("Removed", "Would remove")),
        Effect::Ran { command } if dry => format!("Would run {command}"),
        Effect::Ran { command } => {
            let first = command.lines().next().unwrap_or("");
            let more = if command.lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            format!("Ran {first}{more}")
        }
    }
}

/// An indentation in words: `4 spaces`, `1 tab`, `no indentation`.
pub(crate) fn indentation_words(i: &str) -> String {
    let (tabs, spaces) = (i.matches('\t').count(), i.matches(' ').count());
    let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    match (tabs, spaces) {
        (0, 0) => "no indentation".to_owned(),
        (0, s) => n(s, "space", "spaces"),
        (t, 0) => n(t, "tab", "tabs"),
        (t, s) => format!("{} and {}", n(t, "tab", "tabs"), n(s, "space", "spaces")),
    }
}
