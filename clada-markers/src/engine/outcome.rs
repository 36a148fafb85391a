//! What the engine decided for each unit and task, typed. The engine says
//! nothing in words; the reports (`crate::report`) turn these into text,
//! JSON and XML and own every sentence.

use super::plan::Effect;
use super::task_error::TaskError;
use crate::status::{BlockStatus, TaskStatus};

/// What became of one task.
#[derive(Clone, Debug)]
pub struct TaskOutcome {
    pub(crate) number: usize,
    pub(crate) status: TaskStatus,
    /// What the task did, or in a dry run would do.
    pub(crate) effect: Option<Effect>,
    /// In a dry run: how its command would run (its tier), or why not.
    pub(crate) preview: Option<String>,
    /// Why it did not run.
    pub(crate) skip: Option<Skip>,
    pub(crate) error: Option<TaskError>,
    /// A command's kept output.
    pub(crate) output: Option<String>,
    pub(crate) exit_code: Option<i32>,
    pub(crate) duration_ms: Option<u64>,
    /// Done, then undone by `--atomic`.
    pub(crate) rolled_back: bool,
    /// Planned in a dry run: nothing was written or run.
    pub(crate) dry_run: bool,
}

impl TaskOutcome {
    pub(crate) fn new(number: usize, dry_run: bool) -> Self {
        TaskOutcome {
            number,
            status: TaskStatus::Skipped,
            effect: None,
            preview: None,
            skip: None,
            error: None,
            output: None,
            exit_code: None,
            duration_ms: None,
            rolled_back: false,
            dry_run,
        }
    }

    pub(crate) fn skipped(number: usize, why: Skip) -> Self {
        TaskOutcome {
            skip: Some(why),
            ..TaskOutcome::new(number, false)
        }
    }

    pub(crate) fn failed(number: usize, error: TaskError) -> Self {
        TaskOutcome {
            status: TaskStatus::Failed,
            error: Some(error),
            ..TaskOutcome::new(number, false)
        }
    }

    /// The task's number in the document.
    pub fn number(&self) -> usize {
        self.number
    }

    pub fn status(&self) -> TaskStatus {
        self.status
    }
}

/// Why a task did not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// A task before it in its block failed.
    BlockStopped { at: usize },
    /// `--total-timeout` passed before it started.
    TotalTimeout,
    /// `--atomic=document`, and the document has errors.
    DocumentHasErrors,
    /// `--atomic=document`, and an earlier unit failed.
    UnitFailed { unit: usize },
    /// Its block has a validation error.
    BlockMalformed,
    /// Nothing ran: the lock or the commit before the tasks failed.
    NotRun { why: String },
}

/// What became of one unit.
#[derive(Clone, Debug)]
pub(crate) struct UnitOutcome {
    pub(crate) number: usize,
    /// A TASKS block (else a standalone task).
    pub(crate) is_block: bool,
    pub(crate) status: BlockStatus,
    pub(crate) tasks: Vec<TaskOutcome>,
    /// What a rollback left (`--atomic`).
    pub(crate) rollback: Option<Rollback>,
}

/// What a rollback could not undo.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rollback {
    /// Tasks whose commands ran: their effects stay.
    pub(crate) commands_stay: Vec<usize>,
    /// What a command changed or made after a task's change: left as the
    /// command left it (PROTOCOL §7.4).
    pub(crate) kept: Vec<Kept>,
    /// Changes on disk the rollback could not undo, said by the view.
    pub(crate) problems: Vec<String>,
}

/// The task that made a change: unit and task numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct By {
    pub(crate) unit: usize,
    pub(crate) task: usize,
}

/// A place a rollback left as a command made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Kept {
    pub(crate) path: String,
    pub(crate) why: KeptWhy,
    /// The tasks whose change the command's work followed.
    pub(crate) by: Vec<By>,
    /// The tasks of the commands that may have made it (the one that did,
    /// when known).
    pub(crate) commands: Vec<usize>,
}

/// Why a place was left as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeptWhy {
    /// Changed after a task wrote it.
    Written,
    /// Changed after a task moved it here from `from`: it stays here, and
    /// so does the move.
    MovedHere { from: String },
    /// Made anew after a task moved what was here to `to`: both stay, and
    /// so does the move.
    MadeWhereMovedFrom { to: String },
    /// The directory that held it was removed after a task moved it to
    /// `to`: it stays there, and so does the move.
    PlaceGone { to: String },
    /// Made anew after a task removed (or moved something over) what was
    /// here: the old one is deleted, and the task's change stays.
    MadeWhereRemoved,
    /// A directory a task made holds what a command put there.
    DirHolds,
    /// Removed after a task changed it (or the directory holding it was):
    /// nothing to put back, and the task's change stays.
    Gone,
}

impl Kept {
    /// Whether the tasks' change stays (else only a directory they made
    /// does).
    pub(crate) fn change_stays(&self) -> bool {
        self.why != KeptWhy::DirHolds
    }
}
