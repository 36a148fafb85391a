//! The engine: carries out a parsed document against a directory.
//!
//! Units run in document order. Inside a block tasks run in order and the
//! first failure marks the rest skipped; units are independent, and a unit
//! with a validation error does not run at all (PROTOCOL §2.6, §7). Each task is
//! first planned (`plan`, pure: paths, reads, matches, new contents) and
//! then carried out on the run's view of the tree (`view`), so a later
//! task sees what earlier ones did. The view is written to disk before each
//! command and at the end (never in a dry run); with `--atomic`, a unit
//! that fails is rolled back, and with `--atomic=document` everything is.
//!
//! What happens is told twice, typed (`outcome`), never in words: as it
//! happens, to an [`Observer`] (the text output streams from there), and at
//! the end as the outcome of every unit. The reports (`crate::report`)
//! put both into words; the engine never depends on them.

// The files, bottom first: each imports only files listed before it.
//   tree         what is at a path, and the traits a tree is read and changed by
//   memory       a tree held in memory, which a root may stand on instead of the disk
//   fs           the root's handle: every access, one component at a time
//   listing      looking at the tree without changing it, for the built-ins
//   diff         a change of a file's contents as lines added, removed and a cut diff
//   fingerprint  one place of the tree summed up in a number
//   nearby       the existing path most like one not found
//   paths        a map from locations to entries, kept as a tree of names
//   dirs         clada's own directories
//   lock         the run's lock
//   journal      the temporary names a run noted, swept after a kill
//   repo_check   the check a repository passes before clada commits to it
//   tree_check   the rules files git reads in the work tree, checked
//   git          the run's repository and its commits
//   tier         matching beyond exact text, line by line
//   seek         where an edit replaces (one algorithm), or why not (Mismatch)
//   matching     an edit of a file's whole text
//   editing      an edit of a file kept in chunks with an index
//   settings     every setting of a run
//   task_error   why a task failed
//   plan         what a task will do, decided without changing anything
//   rules        what a dialect's block asks beyond clada's rules
//   outcome      what became of each unit and task
//   view         the tree as a run sees it, written once
//   mod.rs       the engine: a document's units run in order (Observer, Runner)
//   model        (tests only) the engine against a plain model of the tree

pub(crate) mod diff;
pub(crate) mod dirs;
pub(crate) mod editing;
pub(crate) mod fingerprint;
pub(crate) mod fs;
pub(crate) mod git;
pub(crate) mod journal;
mod keys;
pub(crate) mod listing;
pub(crate) mod lock;
pub(crate) mod matching;
pub(crate) mod memory;
pub(crate) mod nearby;
pub(crate) mod outcome;
pub(crate) mod paths;
pub(crate) mod plan;
pub(crate) mod repo_check;
mod rules;
pub(crate) mod seek;
pub(crate) mod settings;
mod task_error;
pub(crate) mod tier;
pub(crate) mod tree;
pub(crate) mod tree_check;
pub(crate) mod undo;
pub(crate) mod view;

pub use dirs::{Dirs, DirsError};
pub use git::Author;
pub use matching::{Edited, edit};
pub(crate) use seek::MatchMode;
pub use seek::Mismatch;
pub(crate) use settings::Settings;
pub(crate) use settings::Tuning;
pub use settings::{Atomic, Cancel};
pub(crate) use task_error::TaskError;

#[cfg(test)]
mod model;

use std::borrow::Cow;
use std::time::Instant;

use crate::error_type::ErrorType;
use crate::status::{BlockStatus, TaskStatus};
use crate::syntax::Diagnostic;
#[cfg(test)]
use crate::syntax::Document;
use crate::syntax::Location;
use crate::syntax::{BlockRules, Op, Task, Unit};
use fs::Root;
pub use outcome::TaskOutcome;
use outcome::{By, Kept, Rollback, Skip, UnitOutcome};
use plan::{Action, Effect, Plan};
use view::{Change, Failed, View};

/// What a command run produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunOutput {
    pub(crate) output: String,
    pub(crate) exit_code: Option<i32>,
}

/// Runs the commands of RUN tasks.
pub(crate) trait Runner {
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

    /// In a dry run: carries out `command` on `tree`, the run's view as
    /// the task changes it (within `deadline`, as [`Runner::run`]), if it
    /// is a built-in, through every check of the real run: the ones that
    /// change the tree (`mkdir touch rm mv cp`) change the view, so that
    /// the tasks after them see their effect, and the others read it
    /// (PROTOCOL §7). `None` when it is not one: it is previewed instead.
    #[allow(clippy::too_many_arguments)]
    fn simulate(
        &mut self,
        _task: usize,
        _command: &str,
        _dir: Option<&Location>,
        _deadline: Option<Instant>,
        _tree: &dyn tree::TreeMut,
        _observer: &mut dyn Observer,
    ) -> Option<Result<RunOutput, (TaskError, RunOutput)>> {
        None
    }

    /// What running `command` would do, for a dry run: how it would run,
    /// or why it would be refused. Runs nothing.
    fn preview(&mut self, command: &str, _dir: Option<&Location>) -> Result<String, TaskError> {
        Err(TaskError::new(
            ErrorType::CommandNotAllowed,
            format!("running commands is not enabled here: `{command}`"),
        ))
    }
}

/// A runner that refuses every command.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct NoCommands;

#[cfg(test)]
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
    /// A unit is about to run (or be reported, if it is malformed), with
    /// the diagnostics filed under it.
    fn block_started(&mut self, _unit: &Unit<'_>, _diagnostics: &[Diagnostic], _runnable: bool) {}
    /// Diagnostics that belong to no unit, in document order, as the run
    /// reaches them.
    fn loose_diagnostics(&mut self, _diagnostics: &[Diagnostic]) {}
    /// A task is decided (again, when a later write or a rollback changes
    /// it): `task` as written, and what became of it.
    fn task_finished(&mut self, _task: &Task<'_>, _outcome: &TaskOutcome) {}
    /// A line of a command's output.
    fn output_line(&mut self, _task: usize, _line: &str) {}
}

/// An observer that hears nothing.
#[derive(Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}

/// What applying a document did.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) units: Vec<UnitOutcome>,
    /// What the run changed (in a dry run, would change).
    pub(crate) changes: Vec<Change>,
}

/// Applies every unit of `doc` under `root`, with what a dry run would
/// change.
#[cfg(test)]
pub(crate) fn apply_with(
    doc: &Document<'_>,
    root: &Root,
    settings: &Settings,
    tuning: Tuning,
    runner: Box<dyn Runner + '_>,
    observer: &mut dyn Observer,
) -> Outcome {
    let mut engine = Engine::new(root, settings, tuning, doc.has_errors(), runner);
    engine.expect(doc.units.iter());
    let mut units = Vec::new();
    for unit in &doc.units {
        let diagnostics: Vec<Diagnostic> = doc.diagnostics_of(unit.number()).cloned().collect();
        engine.unit(Cow::Borrowed(unit), &diagnostics, observer);
        units.extend(engine.settled(false, observer).into_iter().map(|(_, u)| u));
    }
    let (rest, changes) = engine.finish(observer);
    units.extend(rest.into_iter().map(|(_, u)| u));
    Outcome { units, changes }
}

/// A unit run and its outcome: the unit is borrowed from a whole
/// document, or owned when the document is read a window at a time.
pub(crate) type Ran<'h, 'd> = (Cow<'h, Unit<'d>>, UnitOutcome);

/// How many tasks' outcomes wait, at most, before the view is written
/// and they are handed out ([`Engine::settled`]): a run holds that many,
/// not the document's, and a file changed by many of them is written
/// once.
pub(crate) const SETTLE_AFTER: usize = 8192;

/// Runs units one after the other, on one view of the tree.
///
/// A unit's outcome is final only once its changes are on disk (a write
/// that fails marks the tasks whose change it was as failed): units are
/// held until [`Engine::settled`] writes the view and hands them out, and
/// [`Engine::finish`] hands out the rest. With `--atomic=document`
/// nothing is final before the end.
pub(crate) struct Engine<'e, 'r, 'h, 'd> {
    view: View<'r>,
    settings: &'e Settings,
    tuning: Tuning,
    deadline: Option<Instant>,
    /// Units run whose outcomes are not final yet, in order.
    held: Vec<Ran<'h, 'd>>,
    /// Their tasks, a unit without tasks counted as one.
    held_tasks: usize,
    /// With `--atomic=document`: why the units left do not run.
    stop: Option<Skip>,
    runner: Box<dyn Runner + 'e>,
    /// What the unit just run must say about its rollback.
    note: Option<Rollback>,
    /// The tree's files, for the path most like one not found.
    nearby: nearby::Nearby,
    /// In a block whose edits come in file order ([`BlockRules::ordered`]):
    /// the unit, the file, and the first line after the last edit's text.
    order: Option<(usize, Box<str>, usize)>,
}

/// Tells `observer` what became of a task of `unit`.
fn tell(observer: &mut dyn Observer, unit: &Unit<'_>, outcome: &TaskOutcome) {
    let tasks = unit.tasks();
    if let Ok(i) = tasks.binary_search_by_key(&outcome.number, |t| t.number) {
        observer.task_finished(&tasks[i], outcome);
    }
}

impl<'e, 'r, 'h, 'd> Engine<'e, 'r, 'h, 'd> {
    /// An engine for a run under `root`. `errors`: whether the document
    /// has an error, which with `--atomic=document` stops every unit.
    pub(crate) fn new(
        root: &'r Root,
        settings: &'e Settings,
        tuning: Tuning,
        errors: bool,
        runner: Box<dyn Runner + 'e>,
    ) -> Self {
        let deadline = settings.total_timeout.map(|t| Instant::now() + t);
        // A task's plan stops at the run's time limit too, not only the
        // tasks after it (the walk below what a task takes away).
        root.set_deadline(deadline);
        let mut engine = Engine {
            view: View::new(root, tuning.index_from.unwrap_or(editing::INDEX_FROM))
                .recording(settings.changes && !settings.dry_run),
            settings,
            tuning,
            deadline,
            held: Vec::new(),
            held_tasks: 0,
            stop: None,
            runner,
            note: None,
            nearby: nearby::Nearby::default(),
            order: None,
        };
        if engine.whole() {
            if errors {
                engine.stop = Some(Skip::DocumentHasErrors);
            }
            engine.view.begin();
        }
        engine
    }

    /// Tells the view the edits of `units`, the next ones to run, so that
    /// a file many of them edit is searched once for all of them.
    pub(crate) fn expect<'u, 'x: 'u>(&self, units: impl Iterator<Item = &'u Unit<'x>>) {
        // With `--atomic` each unit's files are written when it ends, and
        // read again by the next: what counts is the unit's own edits,
        // told as it starts.
        if self.settings.atomic != Some(Atomic::Unit) {
            self.tell_view(units);
        }
    }

    /// Tells the view the edits of `units`, the next ones to run before
    /// it is written.
    fn tell_view<'u, 'x: 'u>(&self, units: impl Iterator<Item = &'u Unit<'x>>) {
        let allow_escape = self.settings.allow_escape;
        let edits = units
            .flat_map(|u| u.tasks())
            .filter_map(|t| seek::Search::of(t.op.as_ref()?, self.loose()))
            .filter_map(|(path, search)| Some((fs::locate_task(path, allow_escape).ok()?, search)));
        self.view.expect(edits);
    }

    fn whole(&self) -> bool {
        self.settings.atomic == Some(Atomic::Document)
    }

    /// Whether edits may look beyond exact text (`--match whitespace`).
    fn loose(&self) -> bool {
        self.settings.matching == MatchMode::Whitespace
    }

    /// Runs `unit`, or reports it malformed if `diagnostics` (those filed
    /// under it, at least) hold an error.
    pub(crate) fn unit(
        &mut self,
        unit: Cow<'h, Unit<'d>>,
        diagnostics: &[Diagnostic],
        observer: &mut dyn Observer,
    ) {
        let number = unit.number();
        let first_error = diagnostics
            .iter()
            .find(|d| d.block == Some(number) && d.is_error());
        let runnable = first_error.is_none();
        observer.block_started(&unit, diagnostics, runnable);
        let tasks = if !runnable {
            let tasks = malformed_unit(&unit, first_error);
            tasks.iter().for_each(|t| tell(observer, &unit, t));
            tasks
        } else if let Some(why) = self.stop.clone() {
            skip_all(&unit, &why, observer)
        } else {
            let tasks = self.run(&unit, observer);
            if self.whole() && tasks.iter().any(|t| t.status == TaskStatus::Failed) {
                self.stop = Some(Skip::UnitFailed { unit: number });
            }
            tasks
        };
        // An empty block weighs as much as a task: a run of them is
        // handed out too.
        self.held_tasks += tasks.len().max(1);
        let outcome = UnitOutcome {
            number,
            is_block: unit.is_block(),
            status: if runnable {
                BlockStatus::Success
            } else {
                BlockStatus::Malformed
            },
            tasks,
            rollback: self.note.take(),
        };
        self.held.push((unit, outcome));
    }

    /// The units whose outcomes are final, in order, once enough tasks
    /// wait (or `now`): the view is written first. Nothing with
    /// `--atomic=document` before [`Engine::finish`].
    pub(crate) fn settled(&mut self, now: bool, observer: &mut dyn Observer) -> Vec<Ran<'h, 'd>> {
        let after = self.tuning.settle_after.unwrap_or(SETTLE_AFTER);
        if self.whole() || (!now && self.held_tasks < after) {
            return Vec::new();
        }
        if !self.settings.dry_run {
            let failures = self.view.flush();
            self.fail_unwritten(failures, None, observer);
        }
        self.held_tasks = 0;
        let mut out = std::mem::take(&mut self.held);
        out.iter_mut().for_each(|(_, u)| decide(u));
        out
    }

    /// Ends the run: writes the view (or with `--atomic=document`, rolls
    /// everything back if anything failed). Returns the units not handed
    /// out yet, and what the run changed (in a dry run, would change).
    pub(crate) fn finish(mut self, observer: &mut dyn Observer) -> (Vec<Ran<'h, 'd>>, Vec<Change>) {
        if !self.whole() {
            let rest = self.settled(true, observer);
            return (rest, self.changes());
        }
        if !self.settings.dry_run {
            let failures = self.view.flush();
            self.fail_unwritten(failures, None, observer);
        }
        let mut held = std::mem::take(&mut self.held);
        let failed = held
            .iter()
            .flat_map(|(_, u)| &u.tasks)
            .any(|t| t.status == TaskStatus::Failed);
        if failed || self.stop.is_some() {
            let undone = self.view.rollback();
            let stays = stays(&undone.kept);
            for (i, (unit, u)) in held.iter_mut().enumerate() {
                // What could not be undone is said once; what was kept, by
                // the unit whose task's change it followed.
                let problems: &[String] = if i == 0 { &undone.problems } else { &[] };
                let number = unit.number();
                let kept: Vec<Kept> = undone
                    .kept
                    .iter()
                    .filter(|k| k.by.first().is_some_and(|b| b.unit == number))
                    .cloned()
                    .collect();
                u.rollback = self.rolled_back(unit, &mut u.tasks, kept, &stays, problems, observer);
            }
        } else {
            self.view.commit();
        }
        held.iter_mut().for_each(|(_, u)| decide(u));
        (held, self.changes())
    }

    /// What the run changed: in a dry run, what it would.
    fn changes(&self) -> Vec<Change> {
        if self.settings.dry_run {
            self.view.changes()
        } else {
            self.view.written()
        }
    }

    /// Runs a unit that has no error.
    fn run(&mut self, unit: &Unit<'_>, observer: &mut dyn Observer) -> Vec<TaskOutcome> {
        let rules = match unit {
            Unit::Block(b) => b.rules,
            Unit::Task(_) => BlockRules::default(),
        };
        let own = self.settings.atomic == Some(Atomic::Unit);
        if own {
            self.tell_view(std::iter::once(unit));
            // Whatever earlier units left is written by now: the
            // transaction covers this unit's changes only.
            self.view.begin();
        }
        // A block whose changes stand together, in a run without
        // `--atomic`: its changes are kept in the view until it ends (no
        // command of it writes them earlier), so a failure takes them back
        // there, with nothing on disk to undo.
        let together = rules.all_or_none && self.settings.atomic.is_none();
        if together {
            self.view.begin();
        }
        let mut out: Vec<TaskOutcome> = Vec::with_capacity(unit.tasks().len());
        let mut stopped_at = None;
        for (k, task) in unit.tasks().iter().enumerate() {
            let later = unit.tasks().get(k + 1..).unwrap_or_default();
            // A command sees what the tasks before it did.
            if stopped_at.is_none()
                && !self.settings.dry_run
                && matches!(task.op, Some(Op::Run { .. }))
                && self.view.pending()
            {
                let failures = self.view.flush();
                stopped_at = self.fail_unwritten(failures, Some((unit, &mut out)), observer);
            }
            let report = if let Some(at) = stopped_at {
                TaskOutcome::skipped(task.number, Skip::BlockStopped { at })
            } else if self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.settings.cancel.is_set()
            {
                // Cancelled (MCP), the run stops as at its time limit: its
                // report is never sent.
                TaskOutcome::skipped(task.number, Skip::TotalTimeout)
            } else {
                let r = self.task(unit.number(), task, later, rules, observer);
                if r.status == TaskStatus::Failed && !rules.independent {
                    stopped_at = Some(task.number);
                }
                r
            };
            tell(observer, unit, &report);
            out.push(report);
        }
        if together {
            self.end_transaction(unit, &mut out, observer);
        }
        if own {
            if out.iter().all(|t| t.status != TaskStatus::Failed) && !self.settings.dry_run {
                let failures = self.view.flush();
                self.fail_unwritten(failures, Some((unit, &mut out)), observer);
            }
            self.end_transaction(unit, &mut out, observer);
        }
        out
    }

    /// Marks what a rollback undid among `tasks`, those of `unit`: all
    /// but commands and the tasks whose change `stays`. Returns what it
    /// left, if anything (`kept`: what it left of this unit's).
    fn rolled_back(
        &mut self,
        unit: &Unit<'_>,
        tasks: &mut [TaskOutcome],
        kept: Vec<Kept>,
        stays: &[usize],
        problems: &[String],
        observer: &mut dyn Observer,
    ) -> Option<Rollback> {
        let mut left = Rollback {
            commands_stay: Vec::new(),
            kept,
            problems: problems.to_vec(),
        };
        for t in tasks {
            if t.status != TaskStatus::Success || stays.contains(&t.number) {
                continue;
            }
            if matches!(t.effect, Some(plan::Effect::Ran { .. })) {
                // A dry run carries out built-ins only (they have an exit
                // code); the others it only previews.
                if !self.settings.dry_run || t.exit_code.is_some() {
                    left.commands_stay.push(t.number);
                }
                continue;
            }
            t.rolled_back = true;
            tell(observer, unit, t);
        }
        (left != Rollback::default()).then_some(left)
    }

    /// Ends the transaction of `unit`, whose tasks' outcomes are `out`:
    /// kept when none failed, else rolled back, with the note of what
    /// stayed.
    fn end_transaction(
        &mut self,
        unit: &Unit<'_>,
        out: &mut [TaskOutcome],
        observer: &mut dyn Observer,
    ) {
        if out.iter().all(|t| t.status != TaskStatus::Failed) {
            self.view.commit();
            return;
        }
        let undone = self.view.rollback();
        let stays = stays(&undone.kept);
        self.note = self.rolled_back(unit, out, undone.kept, &stays, &undone.problems, observer);
    }

    /// Marks the tasks whose changes could not be written as failed.
    /// `current` is the unit being run, whose outcomes are not held yet.
    /// Returns the first failed task of the current unit.
    fn fail_unwritten(
        &mut self,
        failures: Vec<Failed>,
        mut current: Option<(&Unit<'_>, &mut Vec<TaskOutcome>)>,
        observer: &mut dyn Observer,
    ) -> Option<usize> {
        let mut first: Option<usize> = None;
        for Failed { by, error } in failures {
            for By { unit, task } in by {
                let (at, outcomes) = match &mut current {
                    Some((u, outcomes)) if u.number() == unit => {
                        first = Some(first.map_or(task, |f| f.min(task)));
                        (&**u, &mut **outcomes)
                    }
                    _ => match self.held.binary_search_by_key(&unit, |(u, _)| u.number()) {
                        Ok(i) => {
                            let (u, o) = &mut self.held[i];
                            (&**u, &mut o.tasks)
                        }
                        Err(_) => continue,
                    },
                };
                let i = outcomes.binary_search_by_key(&task, |r| r.number);
                if let Some(r) = i.ok().and_then(|i| outcomes.get_mut(i)) {
                    r.status = TaskStatus::Failed;
                    r.error = Some(TaskError::from(error.clone()));
                    tell(observer, at, r);
                }
            }
        }
        first
    }

    fn task(
        &mut self,
        unit: usize,
        task: &Task<'_>,
        later: &[Task<'_>],
        rules: BlockRules,
        observer: &mut dyn Observer,
    ) -> TaskOutcome {
        let started = Instant::now();
        let mut report = TaskOutcome::new(task.number, self.settings.dry_run);
        let Some(op) = &task.op else {
            // A runnable unit has no malformed task; be safe anyway.
            return TaskOutcome::failed(
                task.number,
                TaskError::new(ErrorType::MalformedStructure, "the task is malformed"),
            );
        };
        // A tree in memory has no processes: a command is reported, not
        // run (PROTOCOL §7.6); the tasks after it run.
        if matches!(op, Op::Run { .. }) && self.view.root().memory().is_some() {
            return TaskOutcome::skipped(
                task.number,
                Skip::NotRun {
                    why: NOT_RUN_IN_MEMORY.to_owned(),
                },
            );
        }
        let by = By {
            unit,
            task: task.number,
        };
        let dry = self.settings.dry_run;
        let loose = self.loose();
        let checked = rules::check(op, rules, &self.view, self.settings.allow_escape);
        let find = |at: &Location, search: seek::Search<'_>| self.view.find_edit(at, search);
        let planned = |op: &Op<'_>| {
            checked
                .clone()
                .and_then(|()| plan::plan(op, &self.view, &find, self.settings.allow_escape, loose))
        };
        let mut result = planned(op);
        if rules.ordered
            && let Some(ordered) = self.in_order(unit, op, later, &result, &planned)
        {
            result = Ok(ordered);
        }
        if rules.ordered {
            self.order = after_edit(unit, op, &result).or(self.order.take());
        }
        let result = result.and_then(|p| {
            let Plan { action, effect } = p;
            match action {
                Action::Write { at, contents } => {
                    let written = self.view.write(&at, contents, by)?;
                    Ok(match (effect, written) {
                        (Effect::Created { path }, fs::Written::Replaced) => {
                            Effect::Replaced { path }
                        }
                        (Effect::Replaced { path }, fs::Written::Created) => {
                            Effect::Created { path }
                        }
                        (e, _) => e,
                    })
                }
                Action::Edit { at, splice } => {
                    self.view.splice(&at, &splice, by)?;
                    if rules.final_line_break {
                        self.view.end_with_line_break(&at);
                    }
                    Ok(effect)
                }
                Action::Move { from, to } => {
                    self.view.rename(&from, &to, by)?;
                    Ok(effect)
                }
                Action::Remove { at } => {
                    self.view.remove(&at, by)?;
                    Ok(effect)
                }
                Action::Nothing => Ok(effect),
                Action::Run { command, dir } => {
                    let ran = if dry {
                        let planned = view::Planned {
                            view: &self.view,
                            by,
                        };
                        // What it does stays, even when its unit is rolled
                        // back, as on disk.
                        let simulated = self.view.untracked(by, || {
                            self.runner.simulate(
                                task.number,
                                &command,
                                dir.as_ref(),
                                self.deadline,
                                &planned,
                                observer,
                            )
                        });
                        let Some(ran) = simulated else {
                            report.preview = Some(self.runner.preview(&command, dir.as_ref())?);
                            return Ok(effect);
                        };
                        // A refusal is the real run's, which runs nothing
                        // after it.
                        if ran.is_ok() {
                            report.preview = Some(self.runner.preview(&command, dir.as_ref())?);
                        }
                        ran
                    } else {
                        let before = self.view.before_command();
                        let ran = self.runner.run(
                            task.number,
                            &command,
                            dir.as_ref(),
                            self.deadline,
                            observer,
                        );
                        // The command may have changed any directory.
                        self.view.root().forget_dirs();
                        let started = match &ran {
                            Ok(_) => true,
                            Err((e, _)) => matches!(
                                e.error_type(),
                                ErrorType::ExecFailed | ErrorType::ExecTimeout
                            ),
                        };
                        if started {
                            self.view.after_command(before, by);
                        }
                        ran
                    };
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
            }
        });
        report.duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        match result {
            Ok(effect) => {
                report.status = TaskStatus::Success;
                report.effect = Some(effect);
            }
            Err(mut e) => {
                // A path not found: the one most like it, to save a read.
                if let TaskError::File {
                    kind: ErrorType::FileNotFound,
                    path,
                    closest,
                    ..
                } = &mut e
                {
                    *closest = self
                        .nearby
                        .closest(self.view.root(), path)
                        .map(String::into_boxed_str);
                }
                // The change stands already: nothing to do, and nothing
                // failed (PROTOCOL §8).
                report.status = if e.error_type() == ErrorType::AlreadyApplied {
                    TaskStatus::AlreadyApplied
                } else {
                    TaskStatus::Failed
                };
                report.error = Some(e);
            }
        }
        report
    }
}

impl Engine<'_, '_, '_, '_> {
    /// An edit of a block in file order that found several candidates
    /// (`result`) without a line hint to choose: when only one of them
    /// starts at or after the end of the block's edit before it and ends
    /// before the candidates of the block's edits after it (`later`, a few
    /// looked at, in the text as it is now), its plan (by `planned`),
    /// chosen by order; else `None`.
    fn in_order(
        &self,
        unit: usize,
        op: &Op<'_>,
        later: &[Task<'_>],
        result: &Result<Plan, TaskError>,
        planned: &dyn Fn(&Op<'_>) -> Result<Plan, TaskError>,
    ) -> Option<Plan> {
        let Err(TaskError::Mismatch {
            kind: ErrorType::MatchCountMismatch,
            path,
            mismatch,
            ..
        }) = result
        else {
            return None;
        };
        let Op::Edit {
            matching,
            search,
            path: file,
            ..
        } = op
        else {
            return None;
        };
        let listed = |m: &seek::Mismatch| {
            // Every candidate is listed (at most MAX_REPORTED_LINES are).
            m.found > 0 && m.lines.len() == m.found && m.applied_lines.is_empty()
        };
        if matching.line.is_some() || mismatch.found < 2 || !listed(mismatch) {
            return None;
        }
        // Where the edit before it left off, in this file.
        let floor = match &self.order {
            Some((u, f, floor)) if *u == unit && f == path => *floor,
            _ => 1,
        };
        // Where the edits after it may start, at the latest: each one's
        // last candidate from the floor on, the nearest of them.
        let mut ceiling = usize::MAX;
        for t in later.iter().take(ORDER_LOOKAHEAD) {
            let Some(next @ Op::Edit { path: p, .. }) = &t.op else {
                continue;
            };
            if p != file {
                break;
            }
            let found = match planned(next) {
                Ok(Plan {
                    effect: Effect::Edited { lines, .. },
                    ..
                }) => lines,
                Err(TaskError::Mismatch { mismatch: m, .. }) if listed(&m) => m.lines,
                _ => continue,
            };
            let mut from = found.into_iter().filter(|&l| l >= floor);
            let first = from.next();
            let last = from.next_back().or(first);
            if let Some(last) = last {
                ceiling = ceiling.min(last);
            }
            if first.is_some() && last == first {
                break;
            }
        }
        let old_lines = memchr::memchr_iter(b'\n', search.as_bytes()).count();
        let mut after = mismatch
            .lines
            .iter()
            .filter(|&&l| l >= floor && l.saturating_add(old_lines) <= ceiling);
        let (Some(&line), None) = (after.next(), after.next()) else {
            return None;
        };
        // The one left, taken as a line hint takes the nearest: itself.
        let mut hinted = op.clone();
        if let Op::Edit { matching, .. } = &mut hinted {
            matching.line = std::num::NonZeroUsize::new(line);
        }
        let mut plan = planned(&hinted).ok()?;
        let Effect::Edited { lines, how, .. } = &mut plan.effect else {
            return None;
        };
        if lines.as_slice() != [line] {
            return None;
        }
        how.chosen = Some(crate::status::Chosen {
            candidates: mismatch.found,
            by: crate::status::ChosenBy::Order,
            hint: None,
        });
        Some(plan)
    }
}

/// How many of a block's edits after an ambiguous one are looked for to
/// bound where it may lie ([`Engine::in_order`]).
const ORDER_LOOKAHEAD: usize = 8;

/// After an edit of a block in file order: the unit, its file, and the
/// first line after the text it wrote (where the next edit's text may
/// start), when it planned to replace one occurrence.
fn after_edit(
    unit: usize,
    op: &Op<'_>,
    result: &Result<Plan, TaskError>,
) -> Option<(usize, Box<str>, usize)> {
    let (
        Op::Edit { replace, .. },
        Ok(Plan {
            effect: Effect::Edited { path, lines, .. },
            ..
        }),
    ) = (op, result)
    else {
        return None;
    };
    let [line] = lines.as_slice() else {
        return None;
    };
    let written = memchr::memchr_iter(b'\n', replace.as_bytes()).count()
        + usize::from(!replace.is_empty() && !replace.ends_with('\n'));
    Some((unit, path.clone().into_boxed_str(), line + written))
}

/// The tasks whose change stays after a rollback, since a command's work
/// that followed it was `kept`.
fn stays(kept: &[Kept]) -> Vec<usize> {
    kept.iter()
        .filter(|k| k.change_stays())
        .flat_map(|k| &k.by)
        .map(|b| b.task)
        .collect()
}

/// Why a command of a document applied to files in memory was skipped.
pub(crate) const NOT_RUN_IN_MEMORY: &str =
    "commands do not run on files in memory (apply_files); run it on a directory";

/// A unit none of whose tasks ran, for `why`: the lock or the commit
/// before the tasks failed. A unit without tasks has nothing that failed.
pub(crate) fn not_run(unit: &Unit<'_>, runnable: bool, why: &str) -> UnitOutcome {
    if unit.tasks().is_empty() {
        return empty_unit(unit, runnable);
    }
    UnitOutcome {
        number: unit.number(),
        is_block: unit.is_block(),
        status: if runnable {
            BlockStatus::Failed
        } else {
            BlockStatus::Malformed
        },
        tasks: unit
            .tasks()
            .iter()
            .map(|t| {
                TaskOutcome::skipped(
                    t.number,
                    Skip::NotRun {
                        why: why.to_owned(),
                    },
                )
            })
            .collect(),
        rollback: None,
    }
}

/// Every task of `unit` skipped, for `why`.
fn skip_all(unit: &Unit<'_>, why: &Skip, observer: &mut dyn Observer) -> Vec<TaskOutcome> {
    unit.tasks()
        .iter()
        .map(|t| {
            let r = TaskOutcome::skipped(t.number, why.clone());
            tell(observer, unit, &r);
            r
        })
        .collect()
}

/// A unit without tasks, reported before any task ran.
pub(crate) fn empty_unit(unit: &Unit<'_>, runnable: bool) -> UnitOutcome {
    UnitOutcome {
        number: unit.number(),
        is_block: unit.is_block(),
        status: if runnable {
            BlockStatus::Success
        } else {
            BlockStatus::Malformed
        },
        tasks: Vec::new(),
        rollback: None,
    }
}

/// A unit's status once its tasks are final.
fn decide(u: &mut UnitOutcome) {
    if u.status != BlockStatus::Malformed {
        u.status = if u.tasks.iter().all(|t| t.status.holds()) {
            BlockStatus::Success
        } else {
            BlockStatus::Failed
        };
    }
}

/// A unit with a validation error (`first`, its first): a standalone
/// task fails with it; the tasks of a block are skipped.
fn malformed_unit(unit: &Unit<'_>, first: Option<&Diagnostic>) -> Vec<TaskOutcome> {
    unit.tasks()
        .iter()
        .map(|task| match unit {
            Unit::Task(_) => {
                let error = first.map_or_else(
                    || TaskError::new(ErrorType::MalformedStructure, "the task is malformed"),
                    |d| TaskError::new(d.error_type(), d.message.clone()),
                );
                TaskOutcome::failed(task.number, error)
            }
            Unit::Block(_) => TaskOutcome::skipped(task.number, Skip::BlockMalformed),
        })
        .collect()
}
