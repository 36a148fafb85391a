//! The one way to apply a document to a directory (PROTOCOL §7): the
//! command line, the MCP and LSP servers and the corpus all go through
//! [`Apply`]. The top layer: it runs the engine and turns its outcomes
//! into a report.

mod changed;
pub(crate) mod files;
mod run;

use std::path::Path;

use crate::commands::allowlist::Approvals;
use crate::commands::approve::{Approver, NoPrompt};
use crate::engine::dirs::{Dirs, locations_in};
use crate::engine::fs::Root;
use crate::engine::git::Author;
use crate::engine::{Atomic, Observer, Settings, TaskOutcome};
use crate::report::{ApplyReport, BlockReport, Listener};
use crate::syntax::Diagnostic;
use crate::syntax::Parsed;
use crate::syntax::{Document, Task, Unit};
use run::{Fed, RunConfig};

/// Applies documents to one directory, the root, given once.
///
/// The root is opened when the `Apply` is made and every path of every
/// document is checked against it (PROTOCOL §5). By default: git commits
/// before and after (as `clada <clada@localhost>`) when the root is in a
/// work tree, the root's default lock, nobody asked about commands (only
/// built-in ones run), no approvals, no `--atomic`.
///
/// ```
/// use clada_markers::{Apply, parse};
///
/// let dir = tempfile::tempdir()?;
/// let doc = parse("<<<<<<< WRITE path=\"hello.txt\"\nhi\n>>>>>>> END\n");
/// let report = Apply::new(dir.path())?.git(None).run(&doc);
/// assert!(report.ok);
/// assert_eq!(std::fs::read_to_string(dir.path().join("hello.txt"))?, "hi\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Apply {
    root: Root,
    config: RunConfig,
    approver: Box<dyn Approver>,
}

impl std::fmt::Debug for Apply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apply")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Apply {
    /// Opens the directory `root`; fails if it cannot be opened as one.
    /// The run's settings are [`Settings::default`] until
    /// [`Apply::settings`] gives others.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Apply> {
        let path = root.as_ref().to_path_buf();
        Ok(Apply {
            root: Root::open(&path)?,
            config: RunConfig {
                root_path: path,
                settings: Settings::default(),
                dirs: None,
                approvals: None,
            },
            approver: Box::new(NoPrompt),
        })
    }

    /// A run on `tree`, held in memory, with `settings` ([`files::apply_files`]).
    pub(crate) fn in_memory(
        tree: std::rc::Rc<crate::engine::memory::MemoryTree>,
        settings: Settings,
    ) -> Apply {
        Apply {
            root: Root::in_memory(tree),
            config: RunConfig {
                root_path: std::path::PathBuf::from("."),
                settings,
                dirs: None,
                approvals: None,
            },
            approver: Box::new(NoPrompt),
        }
    }

    /// Where the root is, as given.
    pub fn root(&self) -> &Path {
        &self.config.root_path
    }

    /// Every setting of the runs (the flags of `clada apply`). Parse the
    /// documents with [`Settings::parse_options`].
    pub fn settings(mut self, settings: Settings) -> Self {
        self.config.settings = settings;
        self
    }

    /// The settings of the runs, to change one (the dialect of the next
    /// document, say).
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.config.settings
    }

    /// `--dry-run` (a shorthand for [`Settings::dry_run`]): plan
    /// everything, write nothing, run no command, commit nothing, take no
    /// lock; the report says what would change.
    pub fn dry_run(mut self, on: bool) -> Self {
        self.config.settings.dry_run = on;
        self
    }

    /// Who commits before and after the tasks; `None` is `--no-git` (a
    /// shorthand for [`Settings::git`]).
    pub fn git(mut self, author: Option<Author>) -> Self {
        self.config.settings.git = author;
        self
    }

    /// `--atomic[=unit|document]` (a shorthand for [`Settings::atomic`]):
    /// a unit (or the document) that fails leaves no trace.
    pub fn atomic(mut self, atomic: Option<Atomic>) -> Self {
        self.config.settings.atomic = atomic;
        self
    }

    /// Where this root's approvals are kept, instead of those
    /// [`Apply::dirs`] finds.
    pub fn approvals_in(mut self, approvals: Approvals) -> Self {
        self.config.approvals = Some(approvals);
        self
    }

    /// clada's own directories (configuration, state, runtime): the
    /// approvals of this root are read there, the default lock is there
    /// outside a repository, and no document may touch them when they lie
    /// inside the root.
    pub fn dirs(mut self, dirs: Option<Dirs>) -> Self {
        if let Some(dirs) = &dirs {
            self.root.protect(dirs.inside(&self.config.root_path));
        }
        // Approvals given through `approvals_in` stay.
        if self.config.approvals.is_none() {
            self.config.approvals = dirs
                .as_ref()
                .and_then(|d| Approvals::new(d, &self.config.root_path).ok());
        }
        self.config.dirs = dirs;
        self
    }

    /// A place in the root no document may write, move or remove (a file
    /// being watched, for one): a path, absolute or relative to the
    /// current directory. A path outside the root needs no protection and
    /// is ignored.
    pub fn protect(mut self, place: impl AsRef<Path>) -> Self {
        self.root
            .protect(locations_in(&self.config.root_path, place.as_ref()));
        self
    }

    /// Who is asked about a command that is neither built in nor approved
    /// (default: nobody, and it is refused).
    pub fn approver(mut self, approver: Box<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// The approvals this run reads, when [`Apply::dirs`] found them.
    pub fn approvals(&self) -> Option<&Approvals> {
        self.config.approvals.as_ref()
    }

    /// Takes back the last run on this root that changed something
    /// (PROTOCOL §7.5), under the root's lock as a run takes it: with git,
    /// by a commit that reverts the run's commit after its tasks; without,
    /// from the contents the run replaced, kept in clada's state directory.
    /// Refused, with why, when a file changed since the run. Needs clada's
    /// directories ([`Apply::dirs`]), where the record is kept.
    pub fn undo(&self) -> Result<crate::engine::undo::Undone, crate::engine::undo::UndoError> {
        use crate::engine::undo::UndoError;
        let canonical = std::fs::canonicalize(&self.config.root_path)?;
        let Some(dirs) = &self.config.dirs else {
            return Err(UndoError::Nothing(canonical.display().to_string()));
        };
        let found = crate::engine::git::WorkTree::discover(&self.config.root_path)
            .map_err(|e| UndoError::Refused(e.to_string()))?;
        let place = match &self.config.settings.lock_file {
            Some(path) => Some(crate::engine::lock::Place::named(path)),
            None => run::default_lock(found.as_ref(), Some(dirs), &canonical).transpose(),
        }
        .transpose()
        .map_err(|e| UndoError::Refused(e.to_string()))?;
        let _lock = place
            .map(|p| crate::engine::lock::Lock::acquire(&p, self.config.settings.lock_timeout))
            .transpose()
            .map_err(|e| UndoError::Refused(e.to_string()))?;
        let author = self.config.settings.git.clone().unwrap_or_default();
        crate::engine::undo::undo(dirs, &canonical, &self.root, found.as_ref(), &author)
    }

    /// Applies `doc`, every unit in order: [`Apply::run_with`], heard by
    /// nobody.
    pub fn run(&mut self, doc: &Document<'_>) -> ApplyReport {
        self.run_collected(doc, None)
    }

    /// Applies `doc`, telling `listener` of each unit, task and line of
    /// command output as it happens, and of each unit's report once it is
    /// final; the report returned has every block too. The run is
    /// [`Apply::run_units`]'s, with the document's units parsed already.
    pub fn run_with(&mut self, doc: &Document<'_>, listener: &mut dyn Listener) -> ApplyReport {
        self.run_collected(doc, Some(listener))
    }

    fn run_collected(
        &mut self,
        doc: &Document<'_>,
        listener: Option<&mut dyn Listener>,
    ) -> ApplyReport {
        let mut collect = Collect {
            listener,
            blocks: Vec::new(),
        };
        let mut report = run::run(
            doc.source,
            run::feed(doc),
            doc.has_errors(),
            &self.root,
            &self.config,
            Box::new(&mut *self.approver),
            &mut collect,
        );
        report.blocks = collect.blocks;
        report
    }

    /// Applies the units of `source` as [`crate::syntax::units`] reads
    /// them, a window at a time: each unit's report goes to `listener`
    /// once it is final (its changes are on disk), and the report returned
    /// has the totals but no blocks. A run holds a few thousand units at a
    /// time, not the document's; with `--atomic=document` it reads the
    /// whole document first, since an error anywhere stops every unit.
    pub fn run_units<'d>(
        &mut self,
        source: &'d str,
        units: impl IntoIterator<Item = Parsed<'d>>,
        listener: &mut dyn Listener,
    ) -> ApplyReport {
        let approver = Box::new(&mut *self.approver);
        if self.config.settings.atomic == Some(Atomic::Document) {
            let all: Vec<Parsed<'d>> = units.into_iter().collect();
            let errors = all
                .iter()
                .flat_map(|p| &p.diagnostics)
                .any(Diagnostic::is_error);
            let feed = all.into_iter().map(Fed::from);
            return run::run(
                source,
                feed,
                errors,
                &self.root,
                &self.config,
                approver,
                listener,
            );
        }
        let feed = units.into_iter().map(Fed::from);
        run::run(
            source,
            feed,
            false,
            &self.root,
            &self.config,
            approver,
            listener,
        )
    }

    /// Whether the root holds a file of approvals from an older clada
    /// (`.clada/allowed-commands.json`), which is ignored: approvals live
    /// outside the tree (PROTOCOL §6).
    pub fn has_legacy_approvals(&self) -> bool {
        crate::commands::allowlist::legacy_file(&self.root)
    }
}

/// Keeps every unit's report, for a report of the whole run, and tells
/// `listener`, if any, everything.
struct Collect<'l> {
    listener: Option<&'l mut dyn Listener>,
    blocks: Vec<BlockReport>,
}

impl Observer for Collect<'_> {
    fn block_started(&mut self, unit: &Unit<'_>, diagnostics: &[Diagnostic], runnable: bool) {
        if let Some(l) = &mut self.listener {
            l.block_started(unit, diagnostics, runnable);
        }
    }

    fn loose_diagnostics(&mut self, diagnostics: &[Diagnostic]) {
        if let Some(l) = &mut self.listener {
            l.loose_diagnostics(diagnostics);
        }
    }

    fn task_finished(&mut self, task: &Task<'_>, outcome: &TaskOutcome) {
        if let Some(l) = &mut self.listener {
            l.task_finished(task, outcome);
        }
    }

    fn output_line(&mut self, task: usize, line: &str) {
        if let Some(l) = &mut self.listener {
            l.output_line(task, line);
        }
    }
}

impl Listener for Collect<'_> {
    fn block(&mut self, report: BlockReport) {
        if let Some(l) = &mut self.listener {
            l.block(report.clone());
        }
        self.blocks.push(report);
    }
}
