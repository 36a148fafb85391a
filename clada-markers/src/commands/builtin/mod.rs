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

use std::path::Path;
use std::time::Instant;

use crate::engine::fs::{Location, Root, locate};
use crate::engine::{Observer, TaskError};
use crate::error_type::ErrorType;

use super::process::Output;

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

/// Where a built-in command runs and what it may touch.
pub(crate) struct Env<'a> {
    pub(crate) root: &'a Root,
    /// Where the root is, for `pwd` and `realpath`.
    pub(crate) root_path: &'a Path,
    /// The RUN's `dir`, or the root.
    pub(crate) cwd: Location,
    pub(crate) allow_escape: bool,
    /// Past this the command stops with `exec_timeout`.
    pub(crate) deadline: Instant,
    /// The run's repository, found once before any task; `None` outside
    /// a work tree or with `--no-git`.
    pub(crate) repo: Option<&'a git2::Repository>,
    /// The command line as written, for messages.
    pub(crate) shown: &'a str,
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
        let text = if crate::path::is_absolute(arg) || self.cwd.is_root() {
            arg.to_owned()
        } else {
            format!("{}/{arg}", self.cwd.display())
        };
        locate(&text, self.allow_escape).map_err(|_| {
            TaskError::new(
                ErrorType::PathEscape,
                format!(
                    "`{}`: the argument `{arg}` names a path outside the root",
                    self.shown
                ),
            )
        })
    }

    /// Like [`Env::read_path`], for a path the command will change: it must
    /// not be a protected place (PROTOCOL §5).
    pub(crate) fn write_path(&self, arg: &str) -> Result<Location, TaskError> {
        let at = self.read_path(arg)?;
        if crate::path::is_protected(at.parts()) {
            return Err(TaskError::new(
                ErrorType::PathEscape,
                format!(
                    "`{}`: the argument `{arg}` lands in a protected place, which documents never change",
                    self.shown
                ),
            ));
        }
        Ok(at)
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

/// Runs the built-in command `argv` (first word included).
pub(crate) fn run(argv: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, TaskError> {
    let (name, args) = match argv.split_first() {
        Some((name, args)) => (name.as_str(), args),
        None => return Err(env.unsupported("")),
    };
    let _ = args;
    Err(TaskError::new(
        ErrorType::CommandNotAllowed,
        format!("the built-in `{name}` is not available yet"),
    ))
}
