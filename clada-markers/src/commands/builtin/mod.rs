//! Built-in commands (PROTOCOL §6), carried out inside clada.
//!
//! No external program ever runs for a built-in command. The file tools read
//! and write through the engine's [`Root`], one component at a time and never
//! through a link, so every path, whatever flag carries it, is checked the
//! way task paths are ([`Env::read_path`], [`Env::write_path`]). Git's read
//! commands go through libgit2 on the run's one repository, where no
//! configured program (diff driver, textconv, filter, hook, pager) exists.
//!
//! Each tool takes its arguments after the command name, an [`Env`] and an
//! [`Out`], and returns its exit status: 0 for success, non-zero for an
//! ordinary failure it has already described on `out` (GNU style,
//! `grep: x: No such file or directory`). A refusal that is about the
//! document (an unknown flag, a path outside the root, a link, a protected
//! place) is a [`TaskError`] instead.

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use crate::engine::fs::{Content, Files, FsError, Kind, Root};
use crate::engine::listing::{Entry, Meta};
use crate::engine::view::{By, Seen, View};
use crate::engine::{Observer, TaskError};
use crate::error_type::ErrorType;
use crate::syntax::Location;

use super::process::Output;

mod args;
mod diff;
mod files;
mod git;
mod search;

pub(crate) use args::Flags;

/// The commands run in-process, by first word.
pub(crate) const COMMANDS: &[&str] = &[
    "cat", "head", "tail", "grep", "find", "ls", "pwd", "tree", "wc", "diff", "file", "stat",
    "realpath", "xxd", "mv", "rm", "cp", "mkdir", "touch", "git",
];

/// Git's subcommands run in-process.
pub(crate) const GIT_SUBCOMMANDS: &[&str] = &[
    "status", "diff", "log", "show", "branch", "stash", "ls-files",
];

/// Whether `argv` names a built-in command (its flags are judged later, by
/// the tool itself).
pub(crate) fn is_builtin(argv: &[String]) -> bool {
    match argv.first().map(String::as_str) {
        Some("git") => argv
            .get(1)
            .is_some_and(|sub| GIT_SUBCOMMANDS.contains(&sub.as_str())),
        Some(name) => COMMANDS.contains(&name),
        None => false,
    }
}

/// The tree as every built-in sees it: the root itself, or in a dry run
/// the run's view, where the built-ins that change it (`mkdir touch rm mv
/// cp`) are carried out in memory so that the tasks after them see their
/// effect, and the others read what the run would have made (PROTOCOL
/// §7). A dry run thus runs each built-in through the very checks of the
/// real run, and ends as it would. Every method refuses a link the way
/// [`Root`] does.
pub(crate) trait Tree {
    /// The kind of what is at `at`, never following a link; `NotFound`
    /// when nothing is.
    fn kind(&self, at: &Location) -> Result<Kind, FsError>;
    /// The names in the directory `at`, in byte order.
    fn names(&self, at: &Location) -> Result<Vec<String>, FsError> {
        Ok(self.list(at)?.into_iter().map(|e| e.name).collect())
    }
    /// The entries of the directory `at`, in byte order of their names,
    /// with their kinds.
    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError>;
    /// The metadata of what is at `at`, never following a link.
    fn metadata(&self, at: &Location) -> Result<Meta, FsError>;
    /// The target of the link at `at`, as text.
    fn read_link(&self, at: &Location) -> Result<String, FsError>;
    /// That no link is at `at` (what is missing is no link).
    fn check_no_links(&self, at: &Location) -> Result<(), FsError> {
        if at.parts().is_empty() {
            return Ok(());
        }
        match self.kind(at) {
            Ok(Kind::Symlink) => Err(FsError::Symlink { path: at.display() }),
            Ok(_) | Err(FsError::NotFound { .. } | FsError::NotDirectory { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
    /// Makes the directory `at`; `Ok(false)` when one is there already.
    fn create_dir(&self, at: &Location) -> Result<bool, FsError>;
    /// Makes the directory `at` and its missing parents, in one walk down
    /// it: `step` hears each directory on the way (its number of
    /// components, and whether it was made) and may stop the walk by
    /// returning `false` (then `Ok(false)`).
    fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError>;
    /// Opens the file `at` for reading.
    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError>;
    /// Replaces or creates the file `at`, atomically.
    fn write(&self, at: &Location, data: &[u8]) -> Result<(), FsError>;
    /// Copies the file `from` to `to` without reading it here, when the
    /// tree can, and says how many bytes it copied: `None` when it cannot
    /// (read and write it then).
    fn copy_file(&self, _from: &Location, _to: &Location) -> Option<Result<u64, FsError>> {
        None
    }
    fn remove(&self, at: &Location) -> Result<(), FsError>;
    fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError>;
    /// Sets the access and modification times of what is at `at` to now
    /// (those asked for).
    fn touch(&self, at: &Location, access: bool, modify: bool) -> Result<(), FsError>;
    /// That `at` is a directory a command may work in (no link on the way).
    fn check_dir(&self, at: &Location) -> Result<(), FsError>;
    /// See [`Root::check_lands`].
    fn check_lands(&self, at: &Location) -> Result<(), FsError>;
    /// See [`Root::check_takes_away`].
    fn check_takes_away(&self, at: &Location) -> Result<(), FsError>;
}

impl Tree for Root {
    fn kind(&self, at: &Location) -> Result<Kind, FsError> {
        self.metadata(at).map(|m| m.kind)
    }

    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        Root::list(self, at)
    }

    fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        Root::metadata(self, at)
    }

    fn read_link(&self, at: &Location) -> Result<String, FsError> {
        Root::read_link(self, at)
    }

    fn check_no_links(&self, at: &Location) -> Result<(), FsError> {
        Root::check_no_links(self, at)
    }

    fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        Root::create_dir(self, at)
    }

    fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        Root::create_dirs(self, at, step)
    }

    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError> {
        Ok(Box::new(self.open_file(at)?))
    }

    fn write(&self, at: &Location, data: &[u8]) -> Result<(), FsError> {
        Root::write(self, at, data).map(drop)
    }

    fn remove(&self, at: &Location) -> Result<(), FsError> {
        Root::remove(self, at)
    }

    fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        Root::rename(self, from, to)
    }

    fn touch(&self, at: &Location, access: bool, modify: bool) -> Result<(), FsError> {
        let meta = self.metadata(at)?;
        let keep = |t: (i64, i64), set: bool| if set { None } else { Some(t) };
        self.set_times(at, keep(meta.accessed, access), keep(meta.modified, modify))
    }

    fn check_dir(&self, at: &Location) -> Result<(), FsError> {
        self.directory(at).map(drop)
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        Root::check_lands(self, at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        Root::check_takes_away(self, at)
    }
}

/// A dry run's view, as the task `by` changes it.
pub(crate) struct Planned<'v, 'r> {
    pub(crate) view: &'v View<'r>,
    pub(crate) by: By,
}

impl Tree for Planned<'_, '_> {
    fn kind(&self, at: &Location) -> Result<Kind, FsError> {
        Files::kind(self.view, at)?.ok_or_else(|| FsError::NotFound { path: at.display() })
    }

    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        Ok(self
            .view
            .list(at)?
            .into_iter()
            .map(|(name, kind)| Entry { name, kind })
            .collect())
    }

    fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        let root = self.view.root();
        match self.view.seen(at)? {
            Seen::Disk(on_disk) => root.metadata(&on_disk).map_err(|e| moved(e, &on_disk, at)),
            Seen::File { origin } => {
                let size = self.view.contents(at)?.as_bytes().len() as u64;
                let mut meta = Meta::planned(Kind::File, size);
                // An edited file keeps its permission bits (PROTOCOL §3).
                if let Some(old) = origin.and_then(|o| root.metadata(&o).ok()) {
                    (meta.mode, meta.nlink) = (old.mode, old.nlink);
                    (meta.uid, meta.gid) = (old.uid, old.gid);
                    (meta.dev, meta.ino) = (old.dev, old.ino);
                }
                Ok(meta)
            }
            Seen::NewDir => Ok(Meta::planned(Kind::Dir, 4096)),
            Seen::Nothing => Err(FsError::NotFound { path: at.display() }),
        }
    }

    fn read_link(&self, at: &Location) -> Result<String, FsError> {
        match self.view.seen(at)? {
            Seen::Disk(on_disk) => {
                let root = self.view.root();
                root.read_link(&on_disk).map_err(|e| moved(e, &on_disk, at))
            }
            Seen::Nothing => Err(FsError::NotFound { path: at.display() }),
            Seen::File { .. } | Seen::NewDir => Err(FsError::Os {
                path: at.display(),
                op: "read the link",
                errno: rustix::io::Errno::INVAL,
            }),
        }
    }

    fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        self.view.create_dir(at, self.by)
    }

    fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        self.view.create_dirs(at, self.by, step)
    }

    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError> {
        // What the run has not changed is read from the disk as it comes
        // (a dry run's `grep -r` keeps no tree in memory).
        if let Seen::Disk(on_disk) = self.view.seen(at)? {
            let file = self.view.root().open_file(&on_disk);
            return Ok(Box::new(file.map_err(|e| moved(e, &on_disk, at))?));
        }
        let data = self.view.contents(at)?;
        Ok(Box::new(std::io::Cursor::new(data.as_bytes().to_vec())))
    }

    fn write(&self, at: &Location, data: &[u8]) -> Result<(), FsError> {
        self.view
            .write(at, Content::from_bytes(data.to_vec()), self.by)
            .map(drop)
    }

    fn copy_file(&self, from: &Location, to: &Location) -> Option<Result<u64, FsError>> {
        // The copy shares the contents in memory: a plan of many copies
        // costs no more than the files it read.
        Some(self.view.contents(from).and_then(|data| {
            let bytes = data.as_bytes().len() as u64;
            self.view.write(to, data, self.by).map(|_| bytes)
        }))
    }

    fn remove(&self, at: &Location) -> Result<(), FsError> {
        self.view.remove(at, self.by)
    }

    fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        self.view.rename(from, to, self.by)
    }

    fn touch(&self, at: &Location, _access: bool, _modify: bool) -> Result<(), FsError> {
        // Times are not part of the plan: only that something is there.
        Tree::kind(self, at).map(drop)
    }

    fn check_dir(&self, at: &Location) -> Result<(), FsError> {
        // As the plan has it: made, moved or removed by earlier tasks.
        match Tree::kind(self, at)? {
            Kind::Dir => Ok(()),
            Kind::Symlink => Err(FsError::Symlink { path: at.display() }),
            _ => Err(FsError::NotDirectory { path: at.display() }),
        }
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        Files::check_lands(self.view, at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        Files::check_takes_away(self.view, at)
    }
}

/// An error about what is on disk at `on_disk`, about `at` where the view
/// has it (moved there by an earlier task).
fn moved(e: FsError, on_disk: &Location, at: &Location) -> FsError {
    if on_disk == at {
        e
    } else {
        as_written(e, &at.display())
    }
}

/// Where a built-in command runs and what it may touch.
/// What built-in `cp` may copy in one run (PROTOCOL §6), files and
/// directories: a document of a few lines cannot make a run copy without
/// end (`cp -r d e` then `mv e d/x`, repeated, doubles `d` each time).
pub(crate) const MAX_COPIED_ENTRIES: u64 = 100_000;

/// What built-in `cp` may copy in one run, in bytes.
pub(crate) const MAX_COPIED_BYTES: u64 = 1 << 30;

/// What built-in `cp` has copied so far in a run.
#[derive(Debug, Default)]
pub(crate) struct Copied {
    entries: std::cell::Cell<u64>,
    bytes: std::cell::Cell<u64>,
}

impl Copied {
    /// Whether the run may copy one more entry.
    pub(crate) fn allows_more(&self) -> bool {
        self.entries.get() < MAX_COPIED_ENTRIES && self.bytes.get() < MAX_COPIED_BYTES
    }

    /// Counts an entry of `bytes` copied.
    pub(crate) fn add(&self, bytes: u64) {
        self.entries.set(self.entries.get().saturating_add(1));
        self.bytes.set(self.bytes.get().saturating_add(bytes));
    }
}

pub(crate) struct Env<'a> {
    /// What the tools read and change: the root, or a dry run's view.
    pub(crate) tree: &'a dyn Tree,
    /// Where the root is, for `pwd` and `realpath`.
    pub(crate) root_path: &'a Path,
    /// The RUN's `dir`, or the root.
    pub(crate) cwd: Location,
    pub(crate) allow_escape: bool,
    /// Past this the command stops with `exec_timeout`.
    pub(crate) deadline: Instant,
    /// The run's repository, found once before any task; `None` outside
    /// a work tree (`--no-git` only turns the commits off).
    pub(crate) repo: Option<&'a git2::Repository>,
    /// The command line as written, for messages.
    pub(crate) shown: &'a str,
    /// What built-in `cp` has copied in this run so far.
    pub(crate) copied: &'a Copied,
}

impl std::fmt::Debug for Env<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("cwd", &self.cwd)
            .field("allow_escape", &self.allow_escape)
            .finish_non_exhaustive()
    }
}

impl Env<'_> {
    /// Resolves a path argument relative to the working directory. It must
    /// stay inside the root unless `--allow-escape` was given; links are
    /// refused when the path is used, by [`Root`].
    pub(crate) fn read_path(&self, arg: &str) -> Result<Location, TaskError> {
        let text = if crate::syntax::is_absolute_path(arg) || self.cwd.is_root() {
            arg.to_owned()
        } else {
            format!("{}/{arg}", self.cwd.display())
        };
        crate::syntax::resolve_path(&text, self.allow_escape).map_err(|problem| {
            use crate::syntax::{PathProblem, TooDeep};
            let message = match problem {
                PathProblem::TooDeep => {
                    let deep = TooDeep::of(&text, self.allow_escape).unwrap_or(TooDeep {
                        components: crate::syntax::MAX_PATH_COMPONENTS + 1,
                    });
                    format!(
                        "`{}`: {}; {}",
                        crate::syntax::abbreviated_path(self.shown),
                        deep.message("the argument", arg),
                        TooDeep::help()
                    )
                }
                PathProblem::Absolute | PathProblem::ParentEscape => format!(
                    "`{}`: the argument `{}` names a path outside the root",
                    self.shown,
                    crate::escape::escape_line(arg)
                ),
                other => format!(
                    "`{}`: the argument `{}` {}",
                    self.shown,
                    crate::escape::escape_line(arg),
                    other.describe()
                ),
            };
            TaskError::new(ErrorType::PathEscape, message)
        })
    }

    /// Like [`Env::read_path`], for a path the command will change: it must
    /// not be a protected place (PROTOCOL §5).
    pub(crate) fn write_path(&self, arg: &str) -> Result<Location, TaskError> {
        let at = self.read_path(arg)?;
        self.check_lands(&at)?;
        Ok(at)
    }

    /// Refuses a change that lands in a protected place (PROTOCOL §5): the
    /// final destination is checked, after a target directory was joined.
    pub(crate) fn check_lands(&self, at: &Location) -> Result<(), TaskError> {
        self.tree.check_lands(at).map_err(|e| self.refusal(e))
    }

    /// Refuses moving, copying or removing what holds a protected place: a
    /// directory with a `.git` below it, or clada's own directories.
    pub(crate) fn check_takes_away(&self, at: &Location) -> Result<(), TaskError> {
        self.in_time()?;
        self.tree.check_takes_away(at).map_err(|e| self.refusal(e))
    }

    fn refusal(&self, e: FsError) -> TaskError {
        let mut e = TaskError::from(e);
        *e.message_mut() = format!("`{}`: {}", self.shown, e.message());
        e
    }

    /// Reports a failed file access: a refusal about the document (a path
    /// outside the root, a link) is the task's error; anything else is an
    /// ordinary failure, written GNU style, and the tool goes on.
    pub(crate) fn failed(
        &self,
        out: &mut Out<'_>,
        tool: &str,
        e: FsError,
    ) -> Result<(), TaskError> {
        match e {
            FsError::Escape { .. }
            | FsError::TooDeep { .. }
            | FsError::TimedOut { .. }
            | FsError::Symlink { .. }
            | FsError::Protected { .. } => Err(e.into()),
            other => {
                out.error(tool, describe(&other));
                Ok(())
            }
        }
    }

    /// Fails with `exec_timeout` once the deadline has passed; long walks
    /// call it between entries.
    pub(crate) fn in_time(&self) -> Result<(), TaskError> {
        if Instant::now() >= self.deadline {
            return Err(TaskError::new(
                ErrorType::ExecTimeout,
                format!("`{}` ran past its limit and was stopped", self.shown),
            ));
        }
        Ok(())
    }

    /// The refusal of a flag the tool does not support.
    pub(crate) fn unsupported(&self, flag: &str) -> TaskError {
        TaskError::new(
            ErrorType::CommandNotAllowed,
            format!(
                "`{}`: the flag `{flag}` is not supported by the built-in `{}`; \
                 see the README's list of built-in flags",
                self.shown,
                self.shown.split_whitespace().next().unwrap_or("")
            ),
        )
    }
}

/// A built-in command's output: passed on line by line as it is written,
/// kept up to `--max-output`, like an external command's.
pub(crate) struct Out<'o> {
    output: Output<'o>,
}

impl std::fmt::Debug for Out<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Out").finish_non_exhaustive()
    }
}

impl<'o> Out<'o> {
    pub(crate) fn new(task: usize, observer: &'o mut dyn Observer, max: usize) -> Self {
        Out {
            output: Output::new(task, observer, max),
        }
    }

    /// Writes a GNU-style error line, `tool: message`.
    pub(crate) fn error(&mut self, tool: &str, message: impl std::fmt::Display) {
        self.output.bytes(format!("{tool}: {message}\n").as_bytes());
    }

    /// Everything kept, with the truncation marker if output was cut.
    pub(crate) fn finish(self) -> String {
        self.output.finish()
    }
}

impl std::io::Write for Out<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.output.bytes(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A name read from the disk as a built-in prints it: control characters
/// escaped (`\x0a`, PROTOCOL §9.1), so that a name holding a line feed
/// never prints a line of its own in a listing.
pub(crate) fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    crate::escape::escape_line(name)
}

/// The error about `arg` as the user wrote it, rather than as resolved.
pub(crate) fn as_written(e: FsError, arg: &str) -> FsError {
    let path = arg.to_owned();
    match e {
        FsError::NotFound { .. } => FsError::NotFound { path },
        FsError::IsDirectory { .. } => FsError::IsDirectory { path },
        FsError::NotDirectory { .. } => FsError::NotDirectory { path },
        FsError::NotRegular { .. } => FsError::NotRegular { path },
        FsError::Os { op, errno, .. } => FsError::Os { path, op, errno },
        other => other,
    }
}

/// An OS error in GNU style: `name: No such file or directory`.
pub(crate) fn describe(e: &FsError) -> String {
    match e {
        FsError::NotFound { path } => format!("{path}: No such file or directory"),
        FsError::IsDirectory { path } => format!("{path}: Is a directory"),
        FsError::NotDirectory { path } => format!("{path}: Not a directory"),
        FsError::NotRegular { path } => format!("{path}: not a regular file"),
        FsError::Symlink { path } => format!("{path}: is a symbolic link, not followed"),
        FsError::Escape { path } => format!("{path}: outside the root"),
        FsError::TooDeep { path, .. } => format!("{path}: too many components"),
        FsError::Protected { path, .. } => format!("{path}: a protected place"),
        FsError::Changed { path } => format!("{path}: changed on disk meanwhile"),
        FsError::TimedOut { path } => format!("{path}: stopped at the time limit"),
        FsError::Os { path, errno, .. } => {
            let what = std::io::Error::from_raw_os_error(errno.raw_os_error());
            format!("{path}: {what}")
        }
    }
}

/// Runs the built-in command `argv` (first word included) and returns its
/// exit status.
pub(crate) fn run(argv: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, TaskError> {
    let Some((name, args)) = argv.split_first() else {
        return Err(env.unsupported(""));
    };
    match name.as_str() {
        "cat" => files::cat(args, env, out),
        "head" => files::head_tail(args, env, out, files::End::Head),
        "tail" => files::head_tail(args, env, out, files::End::Tail),
        "wc" => files::wc(args, env, out),
        "pwd" => files::pwd(args, env, out),
        "ls" => files::ls(args, env, out),
        "stat" => files::stat(args, env, out),
        "file" => files::file(args, env, out),
        "realpath" => files::realpath(args, env, out),
        "xxd" => files::xxd(args, env, out),
        "mkdir" => files::mkdir(args, env, out),
        "touch" => files::touch(args, env, out),
        "rm" => files::rm(args, env, out),
        "mv" => files::mv(args, env, out),
        "cp" => files::cp(args, env, out),
        "grep" => search::grep(args, env, out),
        "find" => search::find(args, env, out),
        "tree" => search::tree(args, env, out),
        "diff" => diff::diff(args, env, out),
        "git" => git::git(args, env, out),
        other => Err(TaskError::new(
            ErrorType::CommandNotAllowed,
            format!("the built-in `{other}` is not available"),
        )),
    }
}
