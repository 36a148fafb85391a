//! The engine: carries out a parsed document against a directory.
//!
//! Units run in document order. Inside a block tasks run in order and the
//! first failure marks the rest skipped; units are independent, and a unit
//! with a validation error does not run at all (PROTOCOL §2.6, §7). Each task is
//! first planned ([`plan`], pure: paths, reads, matches, new contents) and
//! then applied ([`apply_action`], the side effects), so a later task sees
//! what earlier ones did.
//!
//! What happens is reported twice: as it happens, to an [`Observer`] (the
//! text output streams from there), and at the end as a
//! [`crate::report::ApplyReport`].

pub mod fs;
pub(crate) mod listing;
pub mod matching;
pub mod plan;
mod session;

use std::time::{Duration, Instant};

use crate::ast::{Document, Op, Task, Unit};
use crate::error_type::ErrorType;
use crate::report::{BlockReport, BlockStatus, ErrorReport, TaskReport, TaskStatus};
use fs::{FsError, Location, Root};
use matching::Mismatch;
use plan::{Action, Effect, Plan};
use session::Session;

/// Options of a run that the engine itself needs.
#[derive(Clone, Debug, Default)]
pub struct ApplyOptions {
    /// Let paths be absolute or climb out of the root.
    pub allow_escape: bool,
    /// Stop starting tasks after this long (`--total-timeout`).
    pub total_timeout: Option<Duration>,
}

/// Why a task failed.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskError {
    pub kind: ErrorType,
    pub message: String,
    /// The path the error is about, when there is one.
    pub path: Option<String>,
    pub failure: Option<Failure>,
    /// The OS error behind a system failure.
    pub os_error: Option<String>,
}

/// Facts that come with some errors.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    Mismatch(Box<Mismatch>),
}

impl TaskError {
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        TaskError {
            kind,
            message: message.into(),
            path: None,
            failure: None,
            os_error: None,
        }
    }
}

impl From<FsError> for TaskError {
    fn from(e: FsError) -> Self {
        let kind = match &e {
            FsError::NotFound { .. } => ErrorType::FileNotFound,
            FsError::Symlink { .. } => ErrorType::SymlinkNotAllowed,
            FsError::Escape { .. } | FsError::Protected { .. } => ErrorType::PathEscape,
            FsError::Os { errno, .. } if *errno == rustix::io::Errno::NOENT => {
                ErrorType::FileNotFound
            }
            FsError::IsDirectory { .. }
            | FsError::NotDirectory { .. }
            | FsError::NotRegular { .. }
            | FsError::Os { .. } => ErrorType::PermissionDenied,
        };
        TaskError {
            kind,
            message: e.to_string(),
            path: Some(e.path().to_owned()),
            failure: None,
            os_error: e.os_detail(),
        }
    }
}

/// What a command run produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOutput {
    pub output: String,
    pub exit_code: Option<i32>,
}

/// Runs the commands of RUN tasks.
pub trait Runner {
    /// Runs `command` for task `task`, in `dir` (the root when `None`),
    /// within `deadline` if there is one. Output lines go to `observer` as
    /// they come.
    fn run(
        &mut self,
        task: usize,
        command: &str,
        dir: Option<&Location>,
        deadline: Option<Instant>,
        observer: &mut dyn Observer,
    ) -> Result<RunOutput, (TaskError, RunOutput)>;
}

/// A runner that refuses every command.
#[derive(Debug, Default)]
pub struct NoCommands;

impl Runner for NoCommands {
    fn run(
        &mut self,
        _task: usize,
        command: &str,
        _dir: Option<&Location>,
        _deadline: Option<Instant>,
        _observer: &mut dyn Observer,
    ) -> Result<RunOutput, (TaskError, RunOutput)> {
        Err((
            TaskError::new(
                ErrorType::CommandNotAllowed,
                format!("running commands is not enabled here: `{command}`"),
            ),
            RunOutput::default(),
        ))
    }
}

/// Hears what happens while a document is applied.
pub trait Observer {
    /// A unit is about to run (or be reported, if it is malformed).
    fn block_started(&mut self, _unit: &Unit<'_>, _runnable: bool) {}
    fn task_finished(&mut self, _task: &TaskReport) {}
    /// A line of a command's output.
    fn output_line(&mut self, _task: usize, _line: &str) {}
}

/// An observer that hears nothing.
#[derive(Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}

/// Applies every unit of `doc` under `root`.
pub fn apply(
    doc: &Document<'_>,
    root: &Root,
    options: &ApplyOptions,
    runner: &mut dyn Runner,
    observer: &mut dyn Observer,
) -> Vec<BlockReport> {
    let deadline = options.total_timeout.map(|t| Instant::now() + t);
    doc.units
        .iter()
        .map(|unit| {
            let runnable = doc.is_runnable(unit.number());
            observer.block_started(unit, runnable);
            let tasks = if runnable {
                run_unit(unit, root, options, deadline, runner, observer)
            } else {
                malformed_unit(doc, unit, observer)
            };
            let status = if !runnable {
                BlockStatus::Malformed
            } else if tasks.iter().all(|t| t.status == TaskStatus::Success) {
                BlockStatus::Success
            } else {
                BlockStatus::Failed
            };
            BlockReport {
                number: unit.number(),
                kind: if unit.is_block() {
                    "tasks"
                } else {
                    "standalone"
                },
                status,
                tasks,
            }
        })
        .collect()
}

/// Reports for a document none of whose tasks ran.
pub fn not_run(doc: &Document<'_>, why: &str) -> Vec<BlockReport> {
    doc.units
        .iter()
        .map(|unit| BlockReport {
            number: unit.number(),
            kind: if unit.is_block() {
                "tasks"
            } else {
                "standalone"
            },
            status: if doc.is_runnable(unit.number()) {
                BlockStatus::Failed
            } else {
                BlockStatus::Malformed
            },
            tasks: unit
                .tasks()
                .iter()
                .map(|t| skipped(t, format!("not run: {why}")))
                .collect(),
        })
        .collect()
}

fn run_unit(
    unit: &Unit<'_>,
    root: &Root,
    options: &ApplyOptions,
    deadline: Option<Instant>,
    runner: &mut dyn Runner,
    observer: &mut dyn Observer,
) -> Vec<TaskReport> {
    let mut session = Session::new(root);
    let mut stopped_at = None;
    let mut out: Vec<TaskReport> = Vec::new();
    for task in unit.tasks() {
        // Moves, removals and commands need the disk to be current.
        if stopped_at.is_none()
            && matches!(
                task.op,
                Some(Op::Move { .. } | Op::Remove { .. } | Op::Run { .. })
            )
        {
            stopped_at = flush(&mut session, &mut out, observer);
        }
        let report = if let Some(at) = stopped_at {
            skipped(task, format!("block stopped at task {at}"))
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            skipped(
                task,
                "the total timeout passed before it started".to_owned(),
            )
        } else {
            let r = run_task(task, &mut session, options, deadline, runner, observer);
            if r.status == TaskStatus::Failed {
                stopped_at = Some(task.number);
            }
            r
        };
        observer.task_finished(&report);
        out.push(report);
    }
    flush(&mut session, &mut out, observer);
    out
}

/// Writes what the unit has staged. A write that fails now is the failure
/// of the task that staged it; its report is changed and heard again.
/// Returns the first such task.
fn flush(
    session: &mut Session<'_>,
    reports: &mut [TaskReport],
    observer: &mut dyn Observer,
) -> Option<usize> {
    let mut first = None;
    for (task, e) in session.flush() {
        first = Some(first.map_or(task, |f: usize| f.min(task)));
        if let Some(r) = reports.iter_mut().find(|r| r.number == task) {
            let e = TaskError::from(e);
            r.status = TaskStatus::Failed;
            r.message = e.message.clone();
            r.error = Some(ErrorReport::from_task_error(e));
            observer.task_finished(r);
        }
    }
    first
}

fn malformed_unit(
    doc: &Document<'_>,
    unit: &Unit<'_>,
    observer: &mut dyn Observer,
) -> Vec<TaskReport> {
    let tasks = unit.tasks();
    let mut out = Vec::new();
    for task in tasks {
        let report = match unit {
            Unit::Task(_) => {
                // A standalone task with an error fails alone, with it.
                let first = doc.diagnostics_of(unit.number()).find(|d| d.is_error());
                let (kind, message) = first.map_or(
                    (
                        ErrorType::MalformedStructure,
                        "the task is malformed".to_owned(),
                    ),
                    |d| (d.error_type(), d.message.clone()),
                );
                TaskReport {
                    status: TaskStatus::Failed,
                    message: message.clone(),
                    error: Some(ErrorReport::new(kind, message)),
                    ..TaskReport::of(task)
                }
            }
            Unit::Block(_) => skipped(task, "block is malformed".to_owned()),
        };
        observer.task_finished(&report);
        out.push(report);
    }
    out
}

fn skipped(task: &Task<'_>, why: String) -> TaskReport {
    TaskReport {
        status: TaskStatus::Skipped,
        message: format!("Skipped ({why})"),
        ..TaskReport::of(task)
    }
}

fn run_task(
    task: &Task<'_>,
    session: &mut Session<'_>,
    options: &ApplyOptions,
    deadline: Option<Instant>,
    runner: &mut dyn Runner,
    observer: &mut dyn Observer,
) -> TaskReport {
    let started = Instant::now();
    let mut report = TaskReport::of(task);
    let Some(op) = &task.op else {
        // A runnable unit has no malformed task; be safe anyway.
        report.status = TaskStatus::Failed;
        report.error = Some(ErrorReport::new(
            ErrorType::MalformedStructure,
            "the task is malformed",
        ));
        return report;
    };
    let root = session.root();
    let result = plan::plan(op, &*session, options.allow_escape).and_then(|p| {
        let Plan { action, effect } = p;
        match action {
            Action::Write { at, contents } => {
                let written = session.stage(at, contents, task.number)?;
                Ok(match (effect, written) {
                    (Effect::Created { path }, fs::Written::Replaced) => Effect::Replaced { path },
                    (Effect::Replaced { path }, fs::Written::Created) => Effect::Created { path },
                    (e, _) => e,
                })
            }
            Action::Run { command, dir } => {
                let ran = runner.run(task.number, &command, dir.as_ref(), deadline, observer);
                // The command may have changed any directory.
                root.forget_dirs();
                match ran {
                    Ok(out) => {
                        report.output = Some(out.output);
                        report.exit_code = out.exit_code;
                        Ok(effect)
                    }
                    Err((e, out)) => {
                        if !out.output.is_empty() {
                            report.output = Some(out.output);
                        }
                        report.exit_code = out.exit_code;
                        Err(e)
                    }
                }
            }
            other => apply_action(root, other).map(|_| effect),
        }
    });
    report.duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    match result {
        Ok(effect) => {
            report.status = TaskStatus::Success;
            report.message = describe(&effect);
            if let Effect::Edited { lines, .. } = effect {
                report.lines = Some(lines);
            }
        }
        Err(e) => {
            report.status = TaskStatus::Failed;
            report.message = e.message.clone();
            report.error = Some(ErrorReport::from_task_error(e));
        }
    }
    report
}

/// Performs a planned action.
pub fn apply_action(root: &Root, action: Action) -> Result<Option<fs::Written>, TaskError> {
    match action {
        Action::Write { at, contents } => Ok(Some(root.write(&at, &contents)?)),
        Action::Move { from, to } => root.rename(&from, &to).map(|()| None).map_err(Into::into),
        Action::Remove { at } => root.remove(&at).map(|()| None).map_err(Into::into),
        Action::Run { .. } | Action::Nothing => Ok(None),
    }
}

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
