//! Built-in commands (PROTOCOL §6), carried out inside clada.
//!
//! No external program ever runs for a built-in command. The file tools read
//! and write through the tree ([`TreeMut`]: the root, one component at a
//! time and never through a link, or in a dry run the run's view), so every
//! path, whatever flag carries it, is checked the way task paths are
//! ([`Env::read_path`], [`Env::write_path`]). They see nothing else of the
//! engine. Git's read
//! commands go through libgit2 on the run's one repository, where no
//! configured program (diff driver, textconv, filter, hook, pager) exists.
//!
//! Each tool takes its arguments after the command name, an [`Env`] and an
//! [`Out`], and returns its exit status: 0 for success, non-zero for an
//! ordinary failure it has already described on `out` (GNU style,
//! `grep: x: No such file or directory`). A refusal that is about the
//! document (an unknown flag, a path outside the root, a link, a protected
//! place) is a [`Refusal`] instead.

use std::path::Path;
use std::time::Instant;

use crate::engine::tree::{FsError, TreeMut};
use crate::error_type::ErrorType;
use crate::syntax::Location;

use super::process::Output;

mod args;
mod diff;
mod files;
mod git_command;
mod git_format;
mod refusal;
mod registry;
mod search;

pub(crate) use args::Flags;
pub(crate) use refusal::Refusal;
pub(crate) use registry::{is_builtin, named, run};

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
    pub(crate) tree: &'a dyn TreeMut,
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
    pub(crate) fn read_path(&self, arg: &str) -> Result<Location, Refusal> {
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
            Refusal::new(ErrorType::PathEscape, message)
        })
    }

    /// Like [`Env::read_path`], for a path the command will change: it must
    /// not be a protected place (PROTOCOL §5).
    pub(crate) fn write_path(&self, arg: &str) -> Result<Location, Refusal> {
        let at = self.read_path(arg)?;
        self.check_lands(&at)?;
        Ok(at)
    }

    /// Refuses a change that lands in a protected place (PROTOCOL §5): the
    /// final destination is checked, after a target directory was joined.
    pub(crate) fn check_lands(&self, at: &Location) -> Result<(), Refusal> {
        self.tree.check_lands(at).map_err(|e| self.refusal(e))
    }

    /// Refuses moving, copying or removing what holds a protected place: a
    /// directory with a `.git` below it, or clada's own directories.
    pub(crate) fn check_takes_away(&self, at: &Location) -> Result<(), Refusal> {
        self.in_time()?;
        self.tree.check_takes_away(at).map_err(|e| self.refusal(e))
    }

    fn refusal(&self, error: FsError) -> Refusal {
        Refusal::File {
            message: format!("`{}`: {error}", self.shown),
            error,
        }
    }

    /// Reports a failed file access: a refusal about the document (a path
    /// outside the root, a link) is the task's error; anything else is an
    /// ordinary failure, written GNU style, and the tool goes on.
    pub(crate) fn failed(&self, out: &mut Out<'_>, tool: &str, e: FsError) -> Result<(), Refusal> {
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
    pub(crate) fn in_time(&self) -> Result<(), Refusal> {
        if Instant::now() >= self.deadline {
            return Err(Refusal::new(
                ErrorType::ExecTimeout,
                format!("`{}` ran past its limit and was stopped", self.shown),
            ));
        }
        Ok(())
    }

    /// The refusal of a flag the tool does not support.
    pub(crate) fn unsupported(&self, flag: &str) -> Refusal {
        Refusal::new(
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
    pub(crate) fn new(output: Output<'o>) -> Self {
        Out { output }
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
