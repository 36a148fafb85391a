//! The engine's outcomes in words (PROTOCOL §9.1): what each task did or
//! would do, why it was skipped, what a rollback left. Every sentence a
//! report says about a task is written here.

use super::{BlockReport, ErrorReport, TaskReport};
use crate::ast::{Document, Task, Unit};
use crate::engine::TaskOutcome;
use crate::engine::outcome::{Rollback, Skip, UnitOutcome};
use crate::engine::plan::Effect;
use crate::outcome::TaskStatus;

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
        if let Some(Effect::Edited { lines, .. }) = &o.effect {
            r.lines = Some(lines.clone());
        }
        r.message = match (o.status, &o.error, &o.skip) {
            (TaskStatus::Failed, Some(e), _) => e.message().to_owned(),
            (TaskStatus::Skipped, _, Some(why)) => format!("Skipped ({})", skip(why)),
            _ => match (&o.effect, &o.preview) {
                // A dry run's command says how it would run.
                (Some(Effect::Ran { .. }), Some(how)) if o.dry_run => how.clone(),
                (Some(effect), _) if o.dry_run => describe_dry(effect),
                (Some(effect), _) => describe(effect),
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

/// The reports of `units`, the outcomes of `doc`'s units in order.
pub(crate) fn blocks(doc: &Document<'_>, units: Vec<UnitOutcome>) -> Vec<BlockReport> {
    units
        .into_iter()
        .map(|u| {
            let unit = doc.units.iter().find(|d| d.number() == u.number);
            block(unit, u)
        })
        .collect()
}

fn block(unit: Option<&Unit<'_>>, u: UnitOutcome) -> BlockReport {
    let tasks = unit.map(Unit::tasks).unwrap_or_default();
    BlockReport {
        number: u.number,
        kind: if u.block { "tasks" } else { "standalone" },
        status: u.status,
        start: None,
        end: None,
        tasks: u
            .tasks
            .iter()
            .filter_map(|o| {
                let task = tasks.iter().find(|t| t.number == o.number)?;
                Some(TaskReport::of_outcome(task, o))
            })
            .collect(),
        note: u.rollback.as_ref().map(note),
    }
}

fn skip(why: &Skip) -> String {
    match why {
        Skip::BlockStopped { at } => format!("block stopped at task {at}"),
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
        notes.push(format!(
            "file changes rolled back; what the command of task {} did stays: commands cannot be undone",
            tasks.join(", ")
        ));
    }
    notes.extend(left.problems.iter().cloned());
    notes.join("; ")
}

/// What a task would do, in a dry run.
fn describe_dry(effect: &Effect) -> String {
    match effect {
        Effect::Created { path } => format!("Would create {path}"),
        Effect::Replaced { path } => format!("Would write {path}"),
        Effect::Appended { path } => format!("Would append to {path}"),
        Effect::Edited {
            path, replacements, ..
        } => {
            let s = if *replacements == 1 { "" } else { "s" };
            format!("Would edit {path} ({replacements} replacement{s})")
        }
        Effect::Moved { from, to } => format!("Would move {from} to {to}"),
        Effect::Removed { path } => format!("Would remove {path}"),
        Effect::Ran { command } => format!("Would run {command}"),
    }
}

/// What a task did.
fn describe(effect: &Effect) -> String {
    match effect {
        Effect::Created { path } => format!("Created {path}"),
        Effect::Replaced { path } => format!("Wrote {path}"),
        Effect::Appended { path } => format!("Appended to {path}"),
        Effect::Edited {
            path, replacements, ..
        } => {
            let s = if *replacements == 1 { "" } else { "s" };
            format!("Edited {path} ({replacements} replacement{s})")
        }
        Effect::Moved { from, to } => format!("Moved {from} to {to}"),
        Effect::Removed { path } => format!("Removed {path}"),
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
