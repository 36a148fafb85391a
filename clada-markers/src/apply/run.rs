//! A whole run (PROTOCOL §7): the lock, the commit before, the tasks, the
//! commit after, and the report.
//!
//! The document is read (step 1) and parsed a window at a time as the
//! units run, or was parsed whole. Before the first task: take the lock
//! when asked (waiting up to its timeout; else `lock_timeout` and nothing
//! runs). When the root is in a git work tree, before each batch of
//! units: commit the uncommitted changes of the files they are about to
//! change (a failure here runs nothing more). Then run the units,
//! reporting each once it is final; commit what the tasks changed (and the
//! tracked files the commands changed); report the totals.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::commands::approve::{Approver, NoPrompt};
use crate::commands::{Approvals, CommandRunner};
use crate::engine::dirs::Dirs;
use crate::engine::fs::Root;
use crate::engine::git::{Snapshot, Touch, WorkTree};
use crate::engine::journal::Journal;
use crate::engine::lock::{Lock, LockError, Place};
use crate::engine::repo_check::RepoError;
use crate::engine::{self, Engine, Settings, Tuning};
use crate::error_type::ErrorType;
use crate::report::{ApplyBuilder, ApplyReport, ErrorReport, FileChange, GitReport, Listener};
use crate::syntax::Parsed;
use crate::syntax::{Diagnostic, DiagnosticKind, Severity};
use crate::syntax::{Document, Op, Unit};

/// Everything a run needs beyond the document: where the root is, its
/// settings, clada's own directories and the root's approvals.
#[derive(Clone, Debug)]
pub(crate) struct RunConfig {
    /// Where the root is (commands start there).
    pub(crate) root_path: PathBuf,
    pub(crate) settings: Settings,
    /// clada's own directories: where the default lock goes.
    pub(crate) dirs: Option<Dirs>,
    /// Where this root's approvals are kept (found in `dirs`, or given).
    pub(crate) approvals: Option<Approvals>,
}

/// A unit as a run reads it, with the diagnostics filed under it; or,
/// without a unit, diagnostics that lie between units.
pub(crate) struct Fed<'h, 'd> {
    pub(crate) unit: Option<Cow<'h, Unit<'d>>>,
    pub(crate) diagnostics: Cow<'h, [Diagnostic]>,
}

impl<'d> From<Parsed<'d>> for Fed<'_, 'd> {
    fn from(p: Parsed<'d>) -> Self {
        Fed {
            unit: p.unit.map(Cow::Owned),
            diagnostics: Cow::Owned(p.diagnostics),
        }
    }
}

/// The units of a whole document as a run reads them: each with its
/// diagnostics, and those filed under no unit where they lie.
pub(crate) fn feed<'h, 'd>(doc: &'h Document<'d>) -> impl Iterator<Item = Fed<'h, 'd>> {
    let all = &doc.diagnostics;
    let mut next = 0;
    doc.units
        .iter()
        .map(Some)
        .chain(std::iter::once(None))
        .flat_map(move |unit| {
            let until = unit.map_or(usize::MAX, |u| u.span().start);
            let mut loose = Vec::new();
            while let Some(d) = all.get(next).filter(|d| d.span.start < until) {
                // What no unit claims (a document made by hand may file a
                // diagnostic under a unit it does not lie in) is said
                // where it lies.
                if !claimed(doc, d) {
                    loose.push(d.clone());
                }
                next += 1;
            }
            let loose = (!loose.is_empty()).then_some(Fed {
                unit: None,
                diagnostics: Cow::Owned(loose),
            });
            let unit = unit.map(|u| Fed {
                unit: Some(Cow::Borrowed(u)),
                diagnostics: Cow::Owned(doc.diagnostics_of(u.number()).cloned().collect()),
            });
            loose.into_iter().chain(unit)
        })
}

/// Whether `d` is filed under a unit it lies in, as
/// [`Document::diagnostics_of`] finds it.
fn claimed(doc: &Document<'_>, d: &Diagnostic) -> bool {
    let unit = d
        .block
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| doc.units.get(i));
    unit.is_some_and(|u| {
        let span = u.span();
        (span.start..=span.end).contains(&d.span.start)
    })
}

/// How many tasks' units a run reads ahead of the one it runs: as many as
/// the engine holds before it writes its view, after which a file is read
/// again anyway.
const READ_AHEAD: usize = engine::SETTLE_AFTER;

/// Runs the units of `feed`, read from `source`, under `root`, telling
/// `listener` as it goes and handing it each unit's report once final.
/// `errors`: whether the document has an error (`--atomic=document`
/// runs nothing then; the caller knows it only if it read the whole
/// document). The report returned has no blocks: the listener had them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'h, 'd: 'h>(
    source: &'d str,
    feed: impl Iterator<Item = Fed<'h, 'd>>,
    errors: bool,
    root: &Root,
    config: &RunConfig,
    approver: Box<dyn Approver + '_>,
    listener: &mut dyn Listener,
) -> ApplyReport {
    let started = Instant::now();
    let settings = &config.settings;
    let mut builder = ApplyBuilder::new(source);
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut git = GitReport::default();
    // Set up at the first task: the run's one repository (PROTOCOL §6),
    // found before any task and used by the lock, the commits and the
    // built-in git alike; the lock and its journal; the commit before.
    let tree_slot: std::cell::OnceCell<Result<Option<WorkTree>, RepoError>> =
        std::cell::OnceCell::new();
    let mut held: Option<Held> = None;
    let mut approver = Some(approver);
    let mut engine: Option<Engine<'_, '_, 'h, 'd>> = None;
    let mut refused: Option<(ErrorType, String)> = None;
    let mut commit_after = false;
    // What the commits name: the paths the batches were about to change
    // (saved once each), what the tasks did, and where the commands were
    // seen from.
    let mut saved: std::collections::HashSet<Touch> = std::collections::HashSet::new();
    let mut touched: Vec<Touch> = Vec::new();
    let mut summary = super::changed::Summary::default();
    let mut commands_from: Option<Snapshot> = None;
    // What takes the run back without its commits: the contents it is
    // about to replace (not in a dry run, nor without clada's directories).
    let mut capture =
        (!settings.dry_run && config.dirs.is_some()).then(crate::engine::undo::Capture::default);
    let mut empty: Option<Diagnostic> = None;

    // Units are read a batch ahead, so that the engine knows the edits to
    // come: a file many of them change is searched once for all of them.
    // A batch ends after a command, which has the view written and read
    // again (not in a dry run): the edits after it are the next batch's.
    let mut feed = feed;
    let mut ahead: VecDeque<Fed<'h, 'd>> = VecDeque::new();
    let mut told = false;
    loop {
        if ahead.is_empty() {
            let mut tasks = 0;
            while tasks < READ_AHEAD {
                let Some(fed) = feed.next() else { break };
                let tasks_of = fed.unit.as_ref().map_or(&[][..], |u| u.tasks());
                tasks += tasks_of.len();
                let runs = tasks_of
                    .iter()
                    .any(|t| matches!(t.op, Some(Op::Run { .. })));
                ahead.push_back(fed);
                if runs && !config.settings.dry_run {
                    break;
                }
            }
            told = false;
        }
        let Some(fed) = ahead.pop_front() else { break };
        let Some(unit) = fed.unit else {
            let mut loose = fed.diagnostics.into_owned();
            // Said at the end, once it is known whether it is the
            // document's only problem.
            if let Some(i) = loose.iter().position(|d| d.kind == DiagnosticKind::NoTasks) {
                empty = Some(loose.remove(i));
            }
            if !loose.is_empty() {
                listener.loose_diagnostics(&loose);
            }
            diagnostics.extend(loose);
            continue;
        };
        let runnable = !fed
            .diagnostics
            .iter()
            .any(|d| d.block == Some(unit.number()) && d.is_error());
        if engine.is_none() && refused.is_none() && !unit.tasks().is_empty() {
            // A tree in memory is in no repository.
            let found = tree_slot.get_or_init(|| match root.memory() {
                Some(_) => Ok(None),
                None => WorkTree::discover(&config.root_path),
            });
            match begin(root, config, found, &mut git) {
                Ok((kept, commits)) => {
                    held = Some(kept);
                    commit_after = commits;
                    let runner = CommandRunner::new(
                        root,
                        config.root_path.clone(),
                        settings,
                        config.approvals.clone(),
                        approver.take().unwrap_or_else(|| Box::new(NoPrompt)),
                    )
                    .with_repository(found.as_ref().map(Option::as_ref))
                    .keep_out(
                        config
                            .dirs
                            .iter()
                            .flat_map(|d| d.all().map(Path::to_path_buf)),
                    );
                    engine = Some(Engine::new(
                        root,
                        settings,
                        Tuning::default(),
                        errors,
                        Box::new(runner),
                    ));
                }
                Err(refusal) => refused = Some(refusal),
            }
        }
        if !told
            && refused.is_none()
            && engine.is_some()
            && let Some(capture) = capture.as_mut()
        {
            let batch =
                std::iter::once(&*unit).chain(ahead.iter().filter_map(|f| f.unit.as_deref()));
            capture.note(
                root,
                &super::changed::about_to_change(batch, root, settings.allow_escape),
            );
        }
        if !told
            && refused.is_none()
            && engine.is_some()
            && commit_after
            && let (Some(Ok(Some(tree))), Some(author)) = (tree_slot.get(), &settings.git)
        {
            let batch =
                std::iter::once(&*unit).chain(ahead.iter().filter_map(|f| f.unit.as_deref()));
            let first = git.before.is_none() && saved.is_empty();
            let runs = batch
                .clone()
                .flat_map(|u| u.tasks())
                .any(|t| matches!(t.op, Some(Op::Run { .. })));
            let new: Vec<Touch> =
                super::changed::about_to_change(batch, root, settings.allow_escape)
                    .into_iter()
                    // Tracked files only: an untracked file a task
                    // overwrites is kept by the run's undo record, outside
                    // the tree, never committed.
                    .map(|t| match t {
                        Touch::File(p) => Touch::Tracked(p),
                        t => t,
                    })
                    .filter(|t| saved.insert(t.clone()))
                    .collect();
            // Nothing named, nothing to save (the commit after the tasks
            // still checks the repository).
            let saving = if new.is_empty() {
                Ok(None)
            } else {
                tree.commit_touched(&new, &super::changed::before_message, author)
            };
            match saving {
                Ok(id) => {
                    git.before = git.before.take().or(id);
                }
                Err(e) => {
                    let message = if first {
                        format!("the commit before the tasks failed, so none ran: {e}")
                    } else {
                        format!(
                            "the commit before unit {} failed, so it and the units after it did not run: {e}",
                            unit.number()
                        )
                    };
                    git.error = Some(message.clone());
                    refused = Some((ErrorType::GitOperationFailed, message));
                }
            }
            // What the commands will change is told from here.
            if runs && commands_from.is_none() && refused.is_none() {
                match tree.snapshot(settings.commit_untracked) {
                    Ok(s) => commands_from = Some(s),
                    Err(e) => {
                        let message = format!(
                            "cannot read the work tree before the commands, so they did not run: {e}"
                        );
                        git.error = Some(message.clone());
                        refused = Some((ErrorType::GitOperationFailed, message));
                    }
                }
            }
        }
        match (&mut engine, &refused) {
            (_, Some((_, why))) => {
                // Nothing runs: said once, at the end.
                let b = builder.block(&unit, engine::not_run(&unit, runnable, why));
                listener.block(b);
            }
            (Some(e), None) => {
                if !told {
                    let batch = ahead.iter().filter_map(|f| f.unit.as_deref());
                    e.expect(std::iter::once(&*unit).chain(batch));
                    told = true;
                }
                e.unit(unit, &fed.diagnostics, listener);
                for (u, o) in e.settled(false, listener) {
                    took_effect(&o, &mut touched, &mut summary);
                    let b = builder.block(&u, o);
                    listener.block(b);
                }
            }
            (None, None) => {
                // A unit without tasks before any with one.
                listener.block_started(&unit, &fed.diagnostics, runnable);
                let b = builder.block(&unit, engine::empty_unit(&unit, runnable));
                listener.block(b);
            }
        }
        diagnostics.extend(fed.diagnostics.into_owned());
    }
    if let Some(mut d) = empty {
        // A document with nothing to apply, and no other error to say
        // why, is refused (PROTOCOL §7).
        if !settings.allow_empty && !diagnostics.iter().any(Diagnostic::is_error) {
            refuse_empty(&mut d);
        }
        listener.loose_diagnostics(std::slice::from_ref(&d));
        diagnostics.push(d);
    }
    let mut changes = Vec::new();
    if let Some(e) = engine {
        let (rest, planned) = e.finish(listener);
        for (u, o) in rest {
            took_effect(&o, &mut touched, &mut summary);
            let b = builder.block(&u, o);
            listener.block(b);
        }
        changes = planned;
    }

    if commit_after
        && let (Some(Ok(Some(tree))), Some(author)) = (tree_slot.get(), &config.settings.git)
    {
        // What the commands changed, told by the work tree's status (read
        // only once the repository passed its check again).
        let by_commands = match &commands_from {
            Some(before) => tree.changed_since(before),
            None => Ok(Vec::new()),
        };
        match by_commands {
            Ok(by_commands) => {
                let named: Vec<String> = by_commands
                    .iter()
                    .filter_map(|t| match t {
                        Touch::File(p) | Touch::Tracked(p) => Some(p.clone()),
                        Touch::Moved { .. } | Touch::Forget(_) => None,
                    })
                    .collect();
                touched.extend(by_commands);
                let message = summary.message(&named);
                match tree.commit_touched(&touched, &|_| message.clone(), author) {
                    Ok(id) => git.after = id,
                    Err(e) => git.error = Some(format!("the commit after the tasks failed: {e}")),
                }
            }
            Err(e) => git.error = Some(format!("the commit after the tasks failed: {e}")),
        }
    }
    // What takes it back: kept when a task took effect.
    let mut undo = None;
    if summary.took_effect()
        && let Some(dirs) = &config.dirs
        && let Some(canonical) = held.as_ref().and_then(|h| h.canonical.as_deref())
    {
        let kept = crate::engine::undo::keep(dirs, canonical, root, git.after.as_deref(), capture);
        undo = Some(match kept {
            Ok(()) => format!(
                "clada undo -C {}",
                shell_words::quote(&canonical.to_string_lossy())
            ),
            Err(e) => format!("cannot be undone: its record could not be kept: {e}"),
        });
    }
    // Every temporary file of this run is renamed or removed by now.
    if let Some(Held {
        journal: Some(journal),
        ..
    }) = &held
    {
        let _ = journal.sweep(root);
    }
    drop(held);
    crate::syntax::sort_in_document_order(&mut diagnostics);
    let mut report = builder.finish(Vec::new(), &diagnostics, git);
    report.dialect = config.settings.dialect;
    report.undo = undo;
    if let Some((kind, message)) = refused {
        report.ok = false;
        report.error = Some(ErrorReport::new(kind, message));
    }
    if config.settings.dry_run {
        report.dry_run = true;
    }
    if config.settings.dry_run || config.settings.changes {
        report.changes = Some(changes.into_iter().map(FileChange::of).collect());
    }
    report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report
}

/// Notes what the tasks of `o` that took effect changed, for the commit
/// after them.
fn took_effect(
    o: &engine::outcome::UnitOutcome,
    touched: &mut Vec<Touch>,
    summary: &mut super::changed::Summary,
) {
    for t in &o.tasks {
        let effect = t.effect.as_ref().filter(|_| {
            t.status == crate::status::TaskStatus::Success && !t.rolled_back && !t.dry_run
        });
        summary.task(effect);
        touched.extend(effect.and_then(super::changed::touched_by));
    }
}

/// Makes `d`, which says the document has no task, an error (PROTOCOL §7):
/// a reply with nothing to apply is refused, as `git apply` and `patch`
/// refuse one, unless the run allows it (`--allow-empty`).
fn refuse_empty(d: &mut Diagnostic) {
    d.severity = Severity::Error;
    d.message = format!("{}: there is nothing to apply", d.message).into();
    let allow = "a pipeline that passes every reply accepts one without edits with --allow-empty (Python, MCP: allow_empty)";
    d.help = Some(match d.help.take() {
        Some(h) => format!("{h}; {allow}").into(),
        None => allow.into(),
    });
}

/// What a run holds while it lasts: its lock, and the journal of its
/// temporary files beside it.
struct Held {
    _lock: Option<Lock>,
    journal: Option<Journal>,
    /// The root's canonical path, resolved once (a run that writes).
    canonical: Option<PathBuf>,
}

/// Before the first task (PROTOCOL §7): takes the lock when asked
/// (waiting up to its timeout; else `lock_timeout` and nothing runs), and
/// commits every change when the root is in a git work tree (a failure
/// here runs nothing). Returns what the run holds and whether to commit
/// after the tasks; or why nothing runs.
fn begin(
    root: &Root,
    config: &RunConfig,
    found: &Result<Option<WorkTree>, RepoError>,
    git: &mut GitReport,
) -> Result<(Held, bool), (ErrorType, String)> {
    let mut held = Held {
        _lock: None,
        journal: None,
        canonical: None,
    };
    // A repository clada does not use is not committed to: nothing runs
    // (with `--no-git`, only the built-in git refuses it).
    let tree = match found {
        Ok(tree) => tree.as_ref(),
        Err(e) if config.settings.git.is_some() => {
            let message = format!("{e}; nothing ran and nothing was committed");
            git.error = Some(message.clone());
            return Err((ErrorType::GitOperationFailed, message));
        }
        Err(_) => None,
    };
    // A dry run writes nothing, not even a lock file: it reads the tree
    // as it is.
    // A tree in memory has no lock and no journal: nothing else sees it.
    if !config.settings.dry_run && root.memory().is_none() {
        // Resolved once, for the lock's name and the journal's lines.
        let canonical =
            std::fs::canonicalize(&config.root_path).unwrap_or_else(|_| config.root_path.clone());
        let place = match &config.settings.lock_file {
            Some(path) => Some(Place::named(path)),
            None => default_lock(tree, config.dirs.as_ref(), &canonical).transpose(),
        }
        .transpose()
        .map_err(|e| (e.error_type(), e.to_string()))?;
        if let Some(place) = place {
            let lock = Lock::acquire(&place, config.settings.lock_timeout)
                .map_err(|e| (e.error_type(), e.to_string()))?;
            held._lock = Some(lock);
            let journal = Journal::beside(&place, &canonical);
            // A run that cannot note its temporary names does not write:
            // killed, it would leave names no later run removes.
            let unusable = |e: std::io::Error| {
                (
                    ErrorType::PermissionDenied,
                    format!(
                        "cannot use the journal {}: {e}; nothing ran, since a temporary name \
                         it could not note would outlive a killed run (or pass --lock-file \
                         PATH, for another lock and journal)",
                        journal.path().display()
                    ),
                )
            };
            // What killed runs left is removed before anything else.
            journal.sweep(root).map_err(unusable)?;
            root.keep_journal(journal.writer().map_err(unusable)?);
            held.journal = Some(journal);
        }
        held.canonical = Some(canonical);
    }
    let commits = match (&config.settings.git, tree) {
        (None, _) => false,
        (Some(_), tree) if config.settings.dry_run => {
            // Refused as the real run would refuse it.
            if let Some(Err(e)) = tree.map(WorkTree::check) {
                let message = format!("{e}; nothing would run");
                git.error = Some(message.clone());
                return Err((ErrorType::GitOperationFailed, message));
            }
            git.note = Some("dry run: nothing committed".to_owned());
            false
        }
        (Some(_), None) => {
            git.note = Some("not in a git work tree: nothing committed".to_owned());
            false
        }
        // Each batch of units commits what it is about to change first.
        (Some(_), Some(_)) => true,
    };
    Ok((held, commits))
}

/// Where the lock on a root is without `--lock-file`: a file in `locks/`
/// of clada's runtime directory named after the repository's work tree
/// (so that runs on one repository, which commit to it, exclude each
/// other), else after the root's canonical path, `canonical_root`. Never a
/// file in the tree or in `.git`. `None` without clada's directories (no
/// home to find them in).
pub(crate) fn default_lock(
    tree: Option<&WorkTree>,
    dirs: Option<&Dirs>,
    canonical_root: &Path,
) -> Result<Option<Place>, LockError> {
    let Some(dirs) = dirs else {
        return Ok(None);
    };
    let key = match tree {
        Some(tree) => tree.top(),
        None => canonical_root,
    };
    Place::default_lock(dirs, key).map(Some)
}
