//! What a run is told: every setting of a run (the flags of `clada apply`,
//! PROTOCOL §12) in one struct, given once to [`crate::Apply`] and borrowed
//! by the engine and the commands. Nothing copies it field by field; the
//! parse options of a document are made from it
//! ([`Settings::parse_options`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::dialect::Dialect;
use crate::engine::git::Author;
use crate::engine::seek::MatchMode;
use crate::syntax::ParseOptions;

/// What a failure rolls back (`--atomic[=unit|document]`, PROTOCOL §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Atomic {
    /// The failing unit leaves no trace.
    Unit,
    /// The whole document, or nothing.
    Document,
}

/// Every setting of a run. [`Settings::default`] is `clada apply`'s
/// defaults but for the prompt: git commits as `clada <clada@localhost>`,
/// the root's default lock waited for 10 s, commands limited to 30 s and
/// 10 MB of output each, no `--atomic`, no `--dry-run`.
///
/// ```
/// # #[cfg(feature = "engine")] {
/// use clada_markers::{Apply, Settings, parse};
///
/// let dir = tempfile::tempdir()?;
/// let settings = Settings { git: None, dry_run: true, ..Settings::default() };
/// let doc = parse("<<<<<<< WRITE path=\"a.txt\"\nhi\n>>>>>>> END\n");
/// let report = Apply::new(dir.path())?.settings(settings).run(&doc);
/// assert!(report.ok);
/// assert!(!dir.path().join("a.txt").exists());
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Settings {
    /// `--allow-escape`: task paths and the path arguments of built-in
    /// commands may be absolute or climb out of the root (links are
    /// refused anyway). Parse with the same ([`Settings::parse_options`]).
    pub allow_escape: bool,
    /// `--dry-run`: plan everything, write nothing, run no command, commit
    /// nothing, take no lock; the report says what would change.
    pub dry_run: bool,
    /// What a real run changed goes in its report (`changes`: per path,
    /// lines added and removed and a diff cut to a budget, PROTOCOL §9.2);
    /// on by default, off in [`Settings::in_memory`]. A dry run always
    /// says what it would change.
    pub changes: bool,
    /// `--atomic[=unit|document]`: a unit (or the document) that fails
    /// leaves no trace.
    pub atomic: Option<Atomic>,
    /// `--match`: how far edits look for their text (PROTOCOL §3).
    pub matching: MatchMode,
    /// `--total-timeout`: after this, the tasks left are skipped.
    pub total_timeout: Option<Duration>,
    /// Who commits before and after the tasks; `None` is `--no-git`.
    /// The commits hold only what the run changes (PROTOCOL §7).
    pub git: Option<Author>,
    /// `--commit-new-files`: the commit after the tasks also holds the
    /// untracked files the commands made (never ignored ones); without it,
    /// a command's changes are committed in tracked files only.
    pub commit_untracked: bool,
    /// `--lock-file`; `None`: the root's default lock.
    pub lock_file: Option<PathBuf>,
    /// `--lock-timeout`.
    pub lock_timeout: Duration,
    /// `--timeout`: the limit of approved commands, and of built-in ones if
    /// smaller than 5 s.
    pub timeout: Duration,
    /// `--max-output`: bytes of output kept per task.
    pub max_output: usize,
    /// `--allow-any-command`: run everything as an approved command.
    pub allow_any: bool,
    /// `--sandbox`: approved and prompted commands run confined
    /// (Landlock, PROTOCOL §6), or not at all.
    pub sandbox: bool,
    /// Where a confined command's own temporary directory is made (a fresh
    /// 0700 directory for each command, the only one it may write, given
    /// to it as `TMPDIR`, removed when it ends); the process's temporary
    /// directory when `None`.
    pub sandbox_temp: Option<PathBuf>,
    /// Commands approved for this run only, as `clada allow` approves
    /// them (the exact text of a RUN's body, trimmed), besides those of
    /// the root's approvals ([`crate::Apply::dirs`]). Kept in memory:
    /// never written anywhere.
    pub approved: Vec<String>,
    /// The dialect the documents were read in (PROTOCOL §11), which the
    /// report names.
    pub dialect: Dialect,
    /// `--allow-empty`: a document without any task is not an error
    /// (`no_tasks` stays a warning), for pipelines that pass every reply.
    pub allow_empty: bool,
    /// Set from elsewhere to stop the run (an MCP client's
    /// `notifications/cancelled`): the running command is ended as at its
    /// timeout, and the tasks left are skipped, as at `--total-timeout`.
    pub cancel: Cancel,
}

/// A run's stop switch, shared with whoever may pull it; none by default.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Option<Arc<AtomicBool>>);

impl Cancel {
    /// A switch, and the run's side of it.
    pub fn new() -> (Cancel, Arc<AtomicBool>) {
        let flag = Arc::new(AtomicBool::new(false));
        (Cancel(Some(flag.clone())), flag)
    }

    /// Whether the run was told to stop.
    pub fn is_set(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Whether anyone can pull it (a command's wait then wakes up to look).
    pub(crate) fn armed(&self) -> bool {
        self.0.is_some()
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            allow_escape: false,
            dry_run: false,
            changes: true,
            atomic: None,
            matching: MatchMode::default(),
            total_timeout: None,
            git: Some(Author::default()),
            commit_untracked: false,
            lock_file: None,
            lock_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_output: 10 * 1000 * 1000,
            allow_any: false,
            sandbox: false,
            sandbox_temp: None,
            approved: Vec::new(),
            dialect: Dialect::Clada,
            allow_empty: false,
            cancel: Cancel::default(),
        }
    }
}

impl Settings {
    /// The defaults of an apply to files in memory ([`crate::apply_files`],
    /// PROTOCOL §7.6): [`Settings::default`] without git, and without
    /// `changes` in the report (the caller has the files before and after;
    /// set `changes` to have the diffs too).
    pub fn in_memory() -> Self {
        Settings {
            changes: false,
            git: None,
            ..Settings::default()
        }
    }

    /// How documents for this run are parsed: with its `allow_escape`.
    pub fn parse_options(&self) -> ParseOptions {
        ParseOptions {
            allow_escape: self.allow_escape,
        }
    }
}

/// How the engine batches its work, which a run never changes: tests set
/// these to take every path of the engine with few tasks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tuning {
    /// How many tasks' outcomes wait before they are settled (default:
    /// [`super::SETTLE_AFTER`]); tests settle after every unit with 1.
    pub(crate) settle_after: Option<usize>,
    /// From how many coming edits a file is edited with an index
    /// (default: [`super::editing::INDEX_FROM`]); tests index from 1.
    pub(crate) index_from: Option<usize>,
}
