//! A whole run (PROTOCOL §7): the lock, the commit before, the tasks, the
//! commit after, and the report.
//!
//! The document has been read and parsed already (step 1). Then: take the
//! lock when asked (waiting up to its timeout; else `lock_timeout` and
//! nothing runs); commit every change when the root is in a git work tree
//! and the document has a task (a failure here runs nothing); run the units;
//! commit what the tasks changed; report.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::ast::Document;
use crate::commands::approve::Approver;
use crate::commands::{CommandRunner, RunOptions};
use crate::dirs::Dirs;
use crate::engine::fs::Root;
use crate::engine::{self, ApplyOptions, Atomic, Observer};
use crate::error_type::ErrorType;
use crate::git::{Author, WorkTree};
use crate::journal::Journal;
use crate::report::{ApplyReport, ErrorReport, FileChange, GitReport};

/// Everything a run needs beyond the document.
#[derive(Clone, Debug)]
pub(crate) struct RunConfig {
    /// Where the root is (commands start there).
    pub(crate) root_path: PathBuf,
    pub(crate) allow_escape: bool,
    pub(crate) total_timeout: Option<Duration>,
    /// Who commits; `None` for `--no-git`.
    pub(crate) git: Option<Author>,
    /// `--lock-file`; without it, a lock on the root is taken by default
    /// ([`default_lock`]).
    pub(crate) lock_file: Option<PathBuf>,
    /// `--lock-timeout`.
    pub(crate) lock_timeout: Duration,
    pub(crate) commands: RunOptions,
    /// clada's own directories: where the default lock goes.
    pub(crate) dirs: Option<Dirs>,
    /// `--dry-run`: plan everything, write nothing, run nothing, commit
    /// nothing.
    pub(crate) dry_run: bool,
    /// `--atomic[=unit|document]`.
    pub(crate) atomic: Option<Atomic>,
}

/// Runs `doc` under `root`, telling `observer` as it goes.
pub(crate) fn run(
    doc: &Document<'_>,
    root: &Root,
    config: &RunConfig,
    approver: Box<dyn Approver + '_>,
    observer: &mut dyn Observer,
) -> ApplyReport {
    let started = Instant::now();
    let elapsed = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let refuse = |kind, message: String, git: GitReport| {
        let blocks = crate::report::blocks(doc, engine::not_run(doc, &message));
        let mut report = ApplyReport::new(doc, blocks, git, elapsed());
        report.ok = false;
        report.error = Some(ErrorReport::new(kind, message));
        report
    };

    // The run's one repository (PROTOCOL §6): found before any task, used
    // by the lock, the commits and the built-in git alike.
    let work_tree = match doc.tasks().next() {
        Some(_) => WorkTree::discover(&config.root_path),
        None => None,
    };

    // The lock, and the journal of temporary files beside it (PROTOCOL §7).
    // A dry run writes nothing, not even a lock file: it reads the tree
    // as it is.
    let mut _lock = None;
    let mut journal_done = None;
    if doc.tasks().next().is_some() && !config.dry_run {
        let path = match &config.lock_file {
            Some(path) => Some(path.clone()),
            None => match default_lock(work_tree.as_ref(), config.dirs.as_ref(), &config.root_path)
            {
                Ok(path) => path,
                Err(e) => {
                    return refuse(e.error_type(), e.to_string(), GitReport::default());
                }
            },
        };
        if let Some(path) = path {
            match Lock::acquire(&path, config.lock_timeout) {
                Ok(lock) => _lock = Some(lock),
                Err(e) => {
                    return refuse(e.error_type(), e.to_string(), GitReport::default());
                }
            }
            let journal = Journal::beside(&path, &config.root_path);
            // What killed runs left is removed before anything else.
            let _ = journal.sweep(root);
            if let Ok(writer) = journal.writer() {
                root.keep_journal(writer);
            }
            journal_done = Some(journal);
        }
    }

    let mut git = GitReport::default();
    let commits = match (&config.git, doc.tasks().next(), &work_tree) {
        (None, _, _) | (Some(_), None, _) => None,
        (Some(_), Some(_), _) if config.dry_run => {
            git.note = Some("dry run: nothing committed".to_owned());
            None
        }
        (Some(_), Some(_), None) => {
            git.note = Some("not in a git work tree: nothing committed".to_owned());
            None
        }
        (Some(author), Some(_), Some(tree)) => {
            let message = format!("clada: before apply {}", now());
            match tree.commit_all(&message, author) {
                Ok(id) => git.before = id,
                Err(e) => {
                    let message = format!("the commit before the tasks failed, so none ran: {e}");
                    git.error = Some(message.clone());
                    return refuse(ErrorType::GitOperationFailed, message, git);
                }
            }
            Some((tree, author))
        }
    };

    let options = ApplyOptions {
        allow_escape: config.allow_escape,
        total_timeout: config.total_timeout,
        dry_run: config.dry_run,
        atomic: config.atomic,
    };
    let mut runner = CommandRunner::new(
        root,
        config.root_path.clone(),
        config.commands.clone(),
        approver,
    )
    .with_repository(work_tree.as_ref().map(WorkTree::repository));
    let outcome = engine::apply_with(doc, root, &options, &mut runner, observer);
    let blocks = crate::report::blocks(doc, outcome.units);

    if let Some((tree, author)) = commits {
        let tasks: usize = blocks.iter().map(|b| b.tasks.len()).sum();
        let ok = blocks
            .iter()
            .flat_map(|b| &b.tasks)
            .filter(|t| t.status == crate::report::TaskStatus::Success)
            .count();
        let message = format!(
            "clada: after apply {} ({ok}/{tasks} tasks succeeded)",
            now()
        );
        match tree.commit_all(&message, author) {
            Ok(id) => git.after = id,
            Err(e) => git.error = Some(format!("the commit after the tasks failed: {e}")),
        }
    }
    // Every temporary file of this run is renamed or removed by now.
    if let Some(journal) = journal_done {
        let _ = journal.sweep(root);
    }
    let mut report = ApplyReport::new(doc, blocks, git, elapsed());
    if config.dry_run {
        report.dry_run = true;
        report.resend = None;
        report.changes = Some(outcome.changes.into_iter().map(FileChange::of).collect());
    }
    report
}

/// Where the lock on a root is without `--lock-file`: `clada.lock` in the
/// repository's git directory, else a file named after the root's
/// canonical path in `locks/` of clada's runtime directory (a per-user
/// 0700 directory). Never a new file in the tree. `None` without a
/// repository and without clada's directories (no home to find them in).
pub(crate) fn default_lock(
    tree: Option<&WorkTree>,
    dirs: Option<&Dirs>,
    root: &Path,
) -> Result<Option<PathBuf>, LockError> {
    if let Some(tree) = tree {
        let path = tree.repository().path().join("clada.lock");
        let writable = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .is_ok();
        if writable {
            return Ok(Some(path));
        }
    }
    let Some(dirs) = dirs else {
        return Ok(None);
    };
    let locks = dirs.runtime.join("locks");
    Dirs::ensure(&dirs.runtime)
        .and_then(|()| Dirs::ensure(&locks))
        .map_err(|source| LockError::Directory {
            dir: locks.clone(),
            source,
        })?;
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let key = git2::Oid::hash_object(
        git2::ObjectType::Blob,
        canonical.as_os_str().as_encoded_bytes(),
    )
    .map_err(|source| LockError::Name { source })?;
    Ok(Some(locks.join(format!("{key}.lock"))))
}

fn now() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// Why the run's lock was not taken (PROTOCOL §7): nothing runs then.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error(
        "cannot make the directory of the default lock, {}: {source}; pass --lock-file PATH",
        .dir.display()
    )]
    Directory {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot name the default lock: {}", .source.message())]
    Name {
        #[source]
        source: git2::Error,
    },
    #[error("cannot open the lock file {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot lock {}: {source}", .path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another run holds the lock {}; gave up after {}s", .path.display(), .waited.as_secs_f64())]
    Timeout { path: PathBuf, waited: Duration },
}

impl LockError {
    /// The protocol's error type: `lock_timeout` when another run held the
    /// lock, else `permission_denied`.
    pub(crate) fn error_type(&self) -> ErrorType {
        match self {
            LockError::Timeout { .. } => ErrorType::LockTimeout,
            _ => ErrorType::PermissionDenied,
        }
    }
}

/// An exclusive advisory lock (`flock`) on a file, held while the run
/// lasts and released when the file is closed.
struct Lock {
    _file: std::fs::File,
}

impl Lock {
    /// Waits up to `timeout` for the lock on `path` (created if missing).
    fn acquire(path: &Path, timeout: Duration) -> Result<Lock, LockError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|source| LockError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let until = Instant::now() + timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {}
                Err(errno) => {
                    return Err(LockError::Lock {
                        path: path.to_path_buf(),
                        source: errno.into(),
                    });
                }
            }
            if Instant::now() >= until {
                return Err(LockError::Timeout {
                    path: path.to_path_buf(),
                    waited: timeout,
                });
            }
            std::thread::sleep(pause.min(until.saturating_duration_since(Instant::now())));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}
