//! Commands of RUN tasks, in three tiers (SPEC §6).
//!
//! 1. **Built-in**: a single line whose first word is on the built-in list,
//!    without shell syntax, with flags the per-command table knows
//!    ([`rules`]). It runs directly, without a shell, after every path among
//!    its arguments has been checked like a task's path (no escape from the
//!    root, no link on the way). Limit: 5 s, or `--timeout` if smaller.
//! 2. **Approved**: the trimmed body equals an entry of
//!    `.clada/allowed-commands.json`. It runs as `sh -c BODY`. Limit:
//!    `--timeout`.
//! 3. **Anything else**: a person is asked on the terminal (once, always,
//!    no); without one, `command_not_allowed`, with the `clada allow`
//!    command that would approve it.
//!
//! `--allow-any-command` runs every command as tier 2. Each command is a
//! process group of its own; see [`process`].

pub mod allowlist;
pub mod approve;
pub(crate) mod builtin;
mod process;
pub(crate) mod rules;
mod shell;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use crate::engine::fs::{Location, Root, locate};
use crate::engine::{Observer, RunOutput, Runner, TaskError};
use crate::error_type::ErrorType;
use allowlist::Allowlist;
use approve::{Answer, Approver};
use rules::{Judgement, PathArg};

pub use process::{KILL_GRACE, TRUNCATED};

/// The longest a built-in command may run.
pub const BUILTIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Limits and switches for commands.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `--timeout`: the limit of approved commands, and of built-in ones if
    /// smaller than 5 s.
    pub timeout: Duration,
    /// `--max-output`: bytes of output kept per task.
    pub max_output: usize,
    /// `--allow-any-command`: run everything as an approved command.
    pub allow_any: bool,
    /// `--allow-escape`: path arguments may leave the root.
    pub allow_escape: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(30),
            max_output: 10 * 1000 * 1000,
            allow_any: false,
            allow_escape: false,
        }
    }
}

/// The tier a command ran in, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Builtin,
    Approved,
}

/// Runs RUN tasks under a root.
pub struct CommandRunner<'r> {
    root: &'r Root,
    root_path: PathBuf,
    options: RunOptions,
    approver: Box<dyn Approver + 'r>,
}

impl std::fmt::Debug for CommandRunner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandRunner")
            .field("root", &self.root_path)
            .field("options", &self.options)
            .finish()
    }
}

impl<'r> CommandRunner<'r> {
    /// `root_path` is where `root` was opened (a command's working
    /// directory is given to it as a path).
    pub fn new(
        root: &'r Root,
        root_path: PathBuf,
        options: RunOptions,
        approver: Box<dyn Approver + 'r>,
    ) -> Self {
        CommandRunner {
            root,
            root_path,
            options,
            approver,
        }
    }

    /// The working directory of a command: the root, or `dir` below it,
    /// checked (no link on the way) and named through the open handle.
    ///
    /// The handle returned must stay open until the command has started.
    fn working_dir(
        &self,
        dir: Option<&Location>,
    ) -> Result<(PathBuf, Option<Rc<OwnedFd>>), TaskError> {
        let Some(dir) = dir else {
            return Ok((self.root_path.clone(), None));
        };
        let fd = self.root.directory(dir)?;
        // The kernel resolves this to the very directory that was checked.
        let via_fd = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        if via_fd.exists() {
            Ok((via_fd, Some(fd)))
        } else {
            Ok((self.root_path.join(dir.display()), Some(fd)))
        }
    }

    /// Checks the paths a built-in command names, relative to its working
    /// directory.
    fn check_paths(
        &self,
        paths: &[PathArg],
        dir: Option<&Location>,
        writes: bool,
    ) -> Result<(), TaskError> {
        for p in paths {
            let text = match dir {
                Some(d) if !crate::path::is_absolute(&p.text) => {
                    format!("{}/{}", d.display(), p.text)
                }
                _ => p.text.clone(),
            };
            let at = locate(&text, self.options.allow_escape).map_err(|_| {
                TaskError::new(
                    ErrorType::PathEscape,
                    format!("the argument `{}` names a path outside the root", p.text),
                )
            })?;
            if writes && crate::path::is_protected(at.parts()) {
                return Err(TaskError::new(
                    ErrorType::CommandNotAllowed,
                    format!(
                        "the argument `{}` is inside `.clada/` or a `.git` directory, which documents never change",
                        p.text
                    ),
                ));
            }
            if !p.lexical_only {
                self.root.check_no_links(&at)?;
            }
        }
        Ok(())
    }

    fn allowlist(&self) -> Result<Allowlist, TaskError> {
        Allowlist::load(self.root).map_err(|e| {
            TaskError::new(
                ErrorType::CommandNotAllowed,
                format!("cannot read the approved commands: {e}"),
            )
        })
    }
}

/// The command that would approve `command`, ready to paste in a shell.
pub fn allow_hint(command: &str) -> String {
    format!("clada allow {}", shell_words::quote(command))
}

fn not_allowed(command: &str, why: &str) -> TaskError {
    let mut e = TaskError::new(
        ErrorType::CommandNotAllowed,
        format!(
            "`{command}` is not allowed ({why}); to approve it, run: {}",
            allow_hint(command)
        ),
    );
    e.path = None;
    e
}

impl Runner for CommandRunner<'_> {
    fn run(
        &mut self,
        task: usize,
        command: &str,
        dir: Option<&Location>,
        deadline: Option<Instant>,
        observer: &mut dyn Observer,
    ) -> Result<RunOutput, (TaskError, RunOutput)> {
        let none = |e: TaskError| (e, RunOutput::default());
        let command = command.trim();
        let (cwd, _dir_handle) = self.working_dir(dir).map_err(none)?;
        let left = |limit: Duration| match deadline {
            Some(d) => limit.min(d.saturating_duration_since(Instant::now())),
            None => limit,
        };
        let approved = |timeout| process::Spawn {
            program: "sh".to_owned(),
            args: vec!["-c".to_owned(), command.to_owned()],
            env: Vec::new(),
            cwd: Some(cwd.clone()),
            shown: first_line(command),
            timeout,
            max_output: self.options.max_output,
        };
        let timeout = left(self.options.timeout);
        if self.options.allow_any {
            return process::run(&approved(timeout), task, observer);
        }
        let mut list = self.allowlist().map_err(none)?;
        if list.contains(command) {
            return process::run(&approved(timeout), task, observer);
        }
        let why = match rules::judge(command) {
            Judgement::Builtin {
                argv,
                paths,
                writes,
            } => {
                self.check_paths(&paths, dir, writes).map_err(|mut e| {
                    if e.kind == ErrorType::CommandNotAllowed {
                        e.message = format!(
                            "{}; to approve this exact command, run: {}",
                            e.message,
                            allow_hint(command)
                        );
                    }
                    none(e)
                })?;
                let spawn = builtin(
                    argv,
                    cwd.clone(),
                    left(self.options.timeout.min(BUILTIN_TIMEOUT)),
                    self.options.max_output,
                );
                return process::run(&spawn, task, observer);
            }
            Judgement::Refused { kind, message } => {
                let e = TaskError::new(
                    kind,
                    format!(
                        "{message}; to approve this exact command, run: {}",
                        allow_hint(command)
                    ),
                );
                return Err(none(e));
            }
            Judgement::NotBuiltin { why } => why,
        };
        match self.approver.ask(command) {
            Some(Answer::Once) => process::run(&approved(timeout), task, observer),
            Some(Answer::Always) => {
                list.add(command, SystemTime::now());
                list.save(self.root).map_err(|e| {
                    none(TaskError::new(
                        ErrorType::PermissionDenied,
                        format!("cannot save the approval: {e}"),
                    ))
                })?;
                process::run(&approved(timeout), task, observer)
            }
            Some(Answer::No) => Err(none(TaskError::new(
                ErrorType::CommandNotAllowed,
                format!("`{}` was declined", first_line(command)),
            ))),
            None => Err(none(not_allowed(command, &why))),
        }
    }
}

/// A built-in command, run directly. git runs without pager, editor,
/// hooks or file system monitor, whatever the repository's configuration.
fn builtin(
    mut argv: Vec<String>,
    cwd: PathBuf,
    timeout: Duration,
    max_output: usize,
) -> process::Spawn {
    let shown = shell_words::join(&argv);
    let program = argv.remove(0);
    let mut env = Vec::new();
    if program == "git" {
        let mut safe: Vec<String> = [
            "--no-pager",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "diff.external=",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        safe.append(&mut argv);
        argv = safe;
        env = vec![
            ("GIT_EDITOR".to_owned(), "true".to_owned()),
            ("GIT_PAGER".to_owned(), "cat".to_owned()),
            ("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()),
        ];
    }
    process::Spawn {
        program,
        args: argv,
        env,
        cwd: Some(cwd),
        shown,
        timeout,
        max_output,
    }
}

fn first_line(command: &str) -> String {
    let mut lines = command.lines();
    let first = lines.next().unwrap_or("").to_owned();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first
    }
}
