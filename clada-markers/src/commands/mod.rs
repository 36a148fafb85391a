//! Commands of RUN tasks, in three tiers (PROTOCOL §6).
//!
//! 1. **Built-in**: a single line whose first word is on the built-in list,
//!    without shell syntax. It is carried out inside clada (`builtin`),
//!    never by an external program: every path it names is checked like a
//!    task's path, and only documented flags are accepted. Limit: 5 s, or
//!    `--timeout` if smaller.
//! 2. **Approved**: the trimmed body equals a command approved for this
//!    root, in clada's configuration directory ([`allowlist`]), where no
//!    document can write. It runs as `sh -c BODY`. Limit: `--timeout`.
//! 3. **Anything else**: a person is asked on the terminal (once, always,
//!    no); without one, `command_not_allowed`, with the `clada allow`
//!    command that would approve it.
//!
//! `--allow-any-command` runs every command as tier 2. `--sandbox` confines
//! tiers 2 and 3 ([`sandbox`]). Each command is a process group of its
//! own (`process`).

pub(crate) mod allowlist;
pub(crate) mod approve;
pub(crate) mod builtin;
mod process;
pub(crate) mod sandbox;
mod shell;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use crate::engine::fs::{Location, Root};
use crate::engine::view::{By, View};
use crate::engine::{Observer, RunOutput, Runner, TaskError};
use crate::error_type::ErrorType;
use allowlist::{Allowlist, Approvals};
use approve::{Answer, Approver};

/// The longest a built-in command may run.
pub(crate) const BUILTIN_TIMEOUT: Duration = Duration::from_secs(5);

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
    /// Where this root's approvals are kept; `None`: nothing is approved,
    /// and an "always" answer cannot be kept.
    pub approvals: Option<Approvals>,
    /// `--sandbox`: approved and prompted commands run confined
    /// (Landlock, PROTOCOL §6), or not at all.
    pub sandbox: bool,
    /// The temporary directory a confined command may write (and gets as
    /// `TMPDIR`); the process's own when `None`.
    pub sandbox_temp: Option<PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            timeout: Duration::from_secs(30),
            max_output: 10 * 1000 * 1000,
            allow_any: false,
            allow_escape: false,
            approvals: None,
            sandbox: false,
            sandbox_temp: None,
        }
    }
}

/// Runs RUN tasks under a root.
pub(crate) struct CommandRunner<'r> {
    root: &'r Root,
    root_path: PathBuf,
    options: RunOptions,
    approver: Box<dyn Approver + 'r>,
    /// The run's repository, for the built-in git (PROTOCOL §6).
    repo: Option<&'r git2::Repository>,
    /// What built-in `cp` has copied in this run.
    copied: builtin::Copied,
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
    pub(crate) fn new(
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
            repo: None,
            copied: builtin::Copied::default(),
        }
    }

    /// Gives the built-in git the run's repository, found once before any
    /// task (PROTOCOL §6). Without one, built-in git reports that there is
    /// no repository.
    pub(crate) fn with_repository(mut self, repo: Option<&'r git2::Repository>) -> Self {
        self.repo = repo;
        self
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

    /// Carries out a built-in command inside clada.
    #[allow(clippy::too_many_arguments)]
    fn run_builtin(
        &self,
        task: usize,
        command: &str,
        argv: &[String],
        dir: Option<&Location>,
        timeout: Duration,
        tree: &dyn builtin::Tree,
        observer: &mut dyn Observer,
    ) -> Result<RunOutput, (TaskError, RunOutput)> {
        let shown = shell_words::join(argv);
        let cwd = match dir {
            Some(dir) => {
                tree.check_dir(dir)
                    .map_err(|e| (TaskError::from(e), RunOutput::default()))?;
                dir.clone()
            }
            None => Location::below_root(&[]),
        };
        let env = builtin::Env {
            root: self.root,
            tree,
            root_path: &self.root_path,
            cwd,
            allow_escape: self.options.allow_escape,
            deadline: Instant::now() + timeout,
            repo: self.repo,
            shown: &shown,
            copied: &self.copied,
        };
        let mut out = builtin::Out::new(task, observer, self.options.max_output);
        // Its walks stop at its limit.
        let outer = self.root.deadline();
        self.root
            .set_deadline(Some(outer.map_or(env.deadline, |d| d.min(env.deadline))));
        let result = builtin::run(argv, &env, &mut out);
        self.root.set_deadline(outer);
        // A built-in may have moved or removed directories.
        self.root.forget_dirs();
        let output = out.finish();
        match result {
            Ok(0) => Ok(RunOutput {
                output,
                exit_code: Some(0),
            }),
            Ok(code) => Err((
                TaskError::new(
                    ErrorType::ExecFailed,
                    format!("`{shown}` exited with code {code}"),
                ),
                RunOutput {
                    output,
                    exit_code: Some(code),
                },
            )),
            Err(mut e) => {
                if e.error_type() == ErrorType::CommandNotAllowed {
                    let hint = self.hint(command);
                    e = TaskError::NotApproved {
                        message: format!(
                            "{}; to run it anyway, approve this exact command: {hint}",
                            e.message()
                        ),
                        approve: hint.into(),
                    };
                }
                Err((
                    e,
                    RunOutput {
                        output,
                        exit_code: None,
                    },
                ))
            }
        }
    }

    fn allowlist(&self) -> Result<Allowlist, TaskError> {
        let Some(approvals) = &self.options.approvals else {
            return Ok(Allowlist::default());
        };
        approvals.load().map_err(|e| {
            TaskError::new(
                ErrorType::CommandNotAllowed,
                format!("cannot read the approved commands: {e}"),
            )
        })
    }
}

impl CommandRunner<'_> {
    /// The command that would approve `command` for this root, ready to
    /// paste in a shell.
    fn hint(&self, command: &str) -> String {
        match &self.options.approvals {
            Some(a) => format!(
                "clada allow -C {} {}",
                shell_words::quote(a.root()),
                shell_words::quote(command)
            ),
            None => format!("clada allow {}", shell_words::quote(command)),
        }
    }

    fn not_allowed(&self, command: &str, why: &str) -> TaskError {
        let hint = self.hint(command);
        TaskError::NotApproved {
            message: format!("`{command}` is not allowed ({why}); to approve it, run: {hint}"),
            approve: hint.into(),
        }
    }
}

impl Runner for CommandRunner<'_> {
    fn preview(&mut self, command: &str, _dir: Option<&Location>) -> Result<String, TaskError> {
        let command = command.trim();
        let shown = first_line(command);
        let confined = if self.options.sandbox {
            ", confined"
        } else {
            ""
        };
        if self.options.allow_any {
            return Ok(format!(
                "Would run {shown} (any command is allowed{confined})"
            ));
        }
        if self.allowlist()?.contains(command) {
            return Ok(format!(
                "Would run {shown} (approved for this root{confined})"
            ));
        }
        match builtin_argv(command) {
            Ok(_) => Ok(format!("Would run {shown} (built-in, inside clada)")),
            Err(why) if self.approver.can_ask() => Ok(format!(
                "Would ask on the terminal whether to run {shown} ({why})"
            )),
            Err(why) => Err(self.not_allowed(command, &why)),
        }
    }

    fn simulate(
        &mut self,
        task: usize,
        command: &str,
        dir: Option<&Location>,
        view: &View<'_>,
        by: By,
        deadline: Option<Instant>,
        observer: &mut dyn Observer,
    ) -> Option<Result<RunOutput, (TaskError, RunOutput)>> {
        let command = command.trim();
        // What runs as an approved command is a program whose effect is
        // not known: previewed only.
        if self.options.allow_any || self.allowlist().ok()?.contains(command) {
            return None;
        }
        let argv = builtin_argv(command).ok()?;
        if !argv
            .first()
            .is_some_and(|name| builtin::CHANGING.contains(&name.as_str()))
        {
            return None;
        }
        let tree = builtin::Planned { view, by };
        // The run's time limit bounds the plan as it bounds a real run.
        let mut limit = self.options.timeout.min(BUILTIN_TIMEOUT);
        if let Some(deadline) = deadline {
            limit = limit.min(deadline.saturating_duration_since(Instant::now()));
        }
        // What it does stays, even when its unit is rolled back, as on disk.
        let ran =
            view.untracked(|| self.run_builtin(task, command, &argv, dir, limit, &tree, observer));
        Some(ran)
    }

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
            sandbox: self.options.sandbox.then(|| {
                sandbox::Confinement::for_root(
                    &self.root_path,
                    self.options.sandbox_temp.as_deref(),
                )
            }),
        };
        let timeout = left(self.options.timeout);
        if self.options.allow_any {
            return process::run(&approved(timeout), task, observer);
        }
        let list = self.allowlist().map_err(none)?;
        if list.contains(command) {
            return process::run(&approved(timeout), task, observer);
        }
        let why = match builtin_argv(command) {
            Ok(argv) => {
                let limit = left(self.options.timeout.min(BUILTIN_TIMEOUT));
                return self.run_builtin(task, command, &argv, dir, limit, self.root, observer);
            }
            Err(why) => why,
        };
        match self.approver.ask(command) {
            Some(Answer::Once) => process::run(&approved(timeout), task, observer),
            Some(Answer::Always) => {
                let saved = match &self.options.approvals {
                    Some(approvals) => approvals
                        .update(|list| list.add(command, SystemTime::now()))
                        .map_err(|e| e.to_string()),
                    None => Err("there is no configuration directory to keep it in".to_owned()),
                };
                saved.map_err(|e| {
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
            None => Err(none(self.not_allowed(command, &why))),
        }
    }
}

/// The words of a built-in command, or why `command` is not one (it then
/// needs approval).
fn builtin_argv(command: &str) -> Result<Vec<String>, String> {
    if command.contains('\n') {
        return Err("it has more than one line".to_owned());
    }
    let first = command.split_whitespace().next().unwrap_or("");
    if !builtin::COMMANDS.contains(&first) {
        return Err(format!("`{first}` is not one of the built-in commands"));
    }
    if let Some(c) = shell::shell_syntax(command) {
        return Err(format!("it uses shell syntax (`{c}`)"));
    }
    let argv = shell_words::split(command).map_err(|_| "its quotes do not balance".to_owned())?;
    if !builtin::is_builtin(&argv) {
        let sub = argv.get(1).map_or("", String::as_str);
        return Err(format!(
            "`git {sub}` is not one of git's built-in subcommands ({})",
            builtin::GIT_SUBCOMMANDS.join(", ")
        ));
    }
    Ok(argv)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Quiet;
    use crate::engine::fs::{Files, Kind};

    #[test]
    fn a_dry_run_stops_a_built_in_at_the_runs_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut runner = CommandRunner::new(
            &root,
            dir.path().to_owned(),
            RunOptions::default(),
            Box::new(approve::NoPrompt),
        );
        let view = View::new(&root, 1);
        let by = By { unit: 1, task: 1 };
        let deep = format!("mkdir -p {}x", "d/".repeat(1000));
        // The run's time limit has passed: the plan of the built-in stops
        // (its own limit, 5 s, is far off).
        let past = Some(Instant::now());
        let ran = runner.simulate(1, &deep, None, &view, by, past, &mut Quiet);
        let Some(Err((e, _))) = ran else {
            panic!("not stopped: {ran:?}");
        };
        assert_eq!(e.error_type(), ErrorType::ExecTimeout);
        // Without one, it is carried out on the plan.
        let ran = runner.simulate(1, "mkdir -p a/b", None, &view, by, None, &mut Quiet);
        assert!(matches!(ran, Some(Ok(_))), "{ran:?}");
        let made = Location::below_root(&["a", "b"]);
        assert_eq!(Files::kind(&view, &made).unwrap(), Some(Kind::Dir));
        assert!(!dir.path().join("a").exists());
    }
}
