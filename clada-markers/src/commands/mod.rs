//! Commands of RUN tasks, in three tiers (PROTOCOL §6).
//!
//! 1. **Built-in**: a single line whose first word is on the built-in list,
//!    without shell syntax. It is carried out inside clada (`builtin`),
//!    never by an external program: every path it names is checked like a
//!    task's path, and only documented flags are accepted. Limit: 5 s, or
//!    `--timeout` if smaller.
//! 2. **Approved**: the trimmed body equals a command approved for this
//!    root and the RUN's directory, in clada's configuration directory
//!    (`allowlist`), where no document can write. It runs as `sh -c
//!    BODY`, never where git would find a repository other than the
//!    root's. Limit: `--timeout`.
//! 3. **Anything else**: a person is asked on the terminal (once, always,
//!    no); without one, `command_not_allowed`, with the `clada allow`
//!    command that would approve it.
//!
//! `--allow-any-command` runs every command as tier 2. `--sandbox` confines
//! tiers 2 and 3 (`sandbox`). Each command is a session of its own
//! (`process`), and every process it started ends with it (`reaper`).
//!
//! Its public face: the approvals ([`Approvals`],
//! [`Allowlist`]), who is asked ([`Approver`], [`Terminal`], [`NoPrompt`])
//! and whether the sandbox is there ([`sandbox_available`],
//! [`sandbox_scoped`]).

pub(crate) mod allowlist;
pub(crate) mod approve;
pub(crate) mod builtin;
mod process;
mod reaper;
pub(crate) mod sandbox;
mod shell;
mod temp;
mod writable;

pub use allowlist::{Allowlist, AllowlistError, Approvals, LEGACY_PATH};
pub use approve::{Answer, Approver, NoPrompt, Terminal};
pub use sandbox::{available as sandbox_available, scoped as sandbox_scoped};

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use crate::engine::fs::Root;
use crate::engine::git::WorkTree;
use crate::engine::repo_check::RepoError;
use crate::engine::tree::{Tree, TreeMut};
use crate::engine::{Observer, RunOutput, Runner, Settings, TaskError};
use crate::error_type::ErrorType;
use crate::syntax::Location;

/// The longest a built-in command may run.
pub(crate) const BUILTIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs RUN tasks under a root.
pub(crate) struct CommandRunner<'r> {
    root: &'r Root,
    root_path: PathBuf,
    /// The run's: limits, `--allow-any-command`, `--sandbox`, the commands
    /// approved for the run.
    settings: &'r Settings,
    /// Where this root's approvals are kept.
    approvals: Option<Approvals>,
    approver: Box<dyn Approver + 'r>,
    /// The run's repository (PROTOCOL §6), for the built-in git and to
    /// tell it from other repositories; or why it is not used.
    repo: Result<Option<&'r WorkTree>, &'r RepoError>,
    /// What built-in `cp` has copied in this run.
    copied: builtin::Copied,
    /// What a confined command may never write: clada's own directories.
    kept_out: Vec<PathBuf>,
}

impl std::fmt::Debug for CommandRunner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandRunner")
            .field("root", &self.root_path)
            .field("settings", &self.settings)
            .finish()
    }
}

impl<'r> CommandRunner<'r> {
    /// `root_path` is where `root` was opened (a command's working
    /// directory is given to it as a path).
    pub(crate) fn new(
        root: &'r Root,
        root_path: PathBuf,
        settings: &'r Settings,
        approvals: Option<Approvals>,
        approver: Box<dyn Approver + 'r>,
    ) -> Self {
        CommandRunner {
            root,
            root_path,
            settings,
            approvals,
            approver,
            repo: Ok(None),
            copied: builtin::Copied::default(),
            kept_out: Vec::new(),
        }
    }

    /// Keeps confined commands out of `dirs` (clada's own), even where
    /// they lie inside the root.
    pub(crate) fn keep_out(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        self.kept_out.extend(dirs);
        self
    }

    /// Gives the built-in git the run's repository, found once before any
    /// task (PROTOCOL §6), or why it is not used. Without one, built-in
    /// git reports that there is no repository.
    pub(crate) fn with_repository(
        mut self,
        repo: Result<Option<&'r WorkTree>, &'r RepoError>,
    ) -> Self {
        self.repo = repo;
        self
    }

    /// The repository the built-in git reads, checked again first (a
    /// command may have planted a link in it since).
    fn checked_repository(&self) -> Result<Option<&'r git2::Repository>, TaskError> {
        let refused = |e: &RepoError| {
            TaskError::new(
                ErrorType::GitOperationFailed,
                format!("the built-in git does not read this repository: {e}"),
            )
        };
        match self.repo {
            Ok(None) => Ok(None),
            Ok(Some(tree)) => {
                tree.check().map_err(|e| refused(&e))?;
                Ok(Some(tree.repository()))
            }
            Err(e) => Err(refused(e)),
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

    /// Carries out a built-in command inside clada.
    #[allow(clippy::too_many_arguments)]
    fn run_builtin(
        &self,
        task: usize,
        command: &str,
        argv: &[String],
        dir: Option<&Location>,
        timeout: Duration,
        tree: &dyn TreeMut,
        observer: &mut dyn Observer,
    ) -> Result<RunOutput, (TaskError, RunOutput)> {
        let shown = shell_words::join(argv);
        let repo = match argv.first().map(String::as_str) {
            Some("git") => self
                .checked_repository()
                .map_err(|e| (e, RunOutput::default()))?,
            _ => None,
        };
        let cwd = match dir {
            Some(dir) => {
                tree.check_dir(dir)
                    .map_err(|e| (TaskError::from(e), RunOutput::default()))?;
                dir.clone()
            }
            None => Location::below_root(&[]),
        };
        let env = builtin::Env {
            tree,
            root_path: &self.root_path,
            cwd,
            allow_escape: self.settings.allow_escape,
            deadline: Instant::now() + timeout,
            repo,
            shown: &shown,
            copied: &self.copied,
        };
        let mut out = builtin::Out::new(process::Output::new(
            task,
            observer,
            self.settings.max_output,
        ));
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
            Err(refusal) => {
                let e = if refusal.error_type() == ErrorType::CommandNotAllowed {
                    let hint = self.hint(command, dir);
                    TaskError::NotApproved {
                        message: format!(
                            "{}; to run it anyway, approve this exact command: {hint}",
                            refusal.message()
                        ),
                        approve: hint.into(),
                    }
                } else {
                    refused(refusal)
                };
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

    /// The commands approved for this root, and for this run only.
    fn allowlist(&self) -> Result<Allowlist, TaskError> {
        let mut list = match &self.approvals {
            None => Allowlist::default(),
            Some(approvals) => approvals.load().map_err(|e| {
                TaskError::new(
                    ErrorType::CommandNotAllowed,
                    format!("cannot read the approved commands: {e}"),
                )
            })?,
        };
        // At the root, as `clada allow` without `--dir` approves.
        for command in &self.settings.approved {
            list.add(command, None, SystemTime::now());
        }
        Ok(list)
    }
}

impl CommandRunner<'_> {
    /// The command that would approve `command` in `dir` for this root,
    /// ready to paste in a shell.
    fn hint(&self, command: &str, dir: Option<&Location>) -> String {
        let mut hint = "clada allow".to_owned();
        if let Some(a) = &self.approvals {
            hint.push_str(&format!(" -C {}", shell_words::quote(a.root())));
        }
        if let Some(dir) = dir_key(dir) {
            hint.push_str(&format!(" --dir {}", shell_words::quote(&dir)));
        }
        hint.push(' ');
        hint.push_str(&shell_words::quote(command));
        hint
    }

    fn not_allowed(&self, command: &str, dir: Option<&Location>, why: &str) -> TaskError {
        let hint = self.hint(command, dir);
        TaskError::NotApproved {
            message: format!("`{command}` is not allowed ({why}); to approve it, run: {hint}"),
            approve: hint.into(),
        }
    }

    /// Why `command`, approved somewhere, is not approved in `dir`.
    fn approved_elsewhere(
        list: &Allowlist,
        command: &str,
        dir: Option<&Location>,
    ) -> Option<String> {
        let (_, other, _) = list.commands().find(|(c, _, _)| *c == command)?;
        let there = match other {
            None => "at the root".to_owned(),
            Some(d) => format!("in `{d}`"),
        };
        let here = match dir_key(dir) {
            None => "at the root".to_owned(),
            Some(d) => format!("in `{d}`"),
        };
        Some(format!(
            "it is approved {there}, not {here}: an approval holds only where it was given"
        ))
    }

    /// Refuses to run `command` in `dir` when git, started there, would
    /// find a repository other than the root's (whose configuration can
    /// make it run programs nobody approved): a `.git` in `dir` or in a
    /// directory between it and the root, or a directory shaped like a
    /// git directory (`HEAD`, `objects`, `refs`) on the way, the root
    /// included when it has no `.git` of its own. Looked up in `files`:
    /// the disk, or a dry run's plan.
    fn foreign_repository(
        files: &dyn Tree,
        command: &str,
        dir: Option<&Location>,
    ) -> Result<(), TaskError> {
        let root = Location::below_root(&[]);
        let start = dir.cloned().unwrap_or_else(|| root.clone());
        let exists = |at: &Location| matches!(files.kind(at), Ok(Some(_)));
        let root_repo = exists(&root.join(".git"));
        let mut level = Some(start);
        while let Some(at) = level {
            let own = at.is_root() && root_repo;
            let dot_git = at.join(".git");
            let found = if own {
                None
            } else if exists(&dot_git) {
                Some(format!("the repository of `{}`", dot_git.display()))
            } else if ["HEAD", "objects", "refs"]
                .iter()
                .all(|name| exists(&at.join(name)))
            {
                Some(format!(
                    "`{}` as a git directory (it holds HEAD, objects and refs)",
                    at.display()
                ))
            } else {
                None
            };
            if let Some(found) = found {
                return Err(TaskError::new(
                    ErrorType::CommandNotAllowed,
                    format!(
                        "`{}` was not run: git started in `{}` would use {found}, not the root's \
                         repository, and its configuration can run programs nobody approved; an \
                         approved command never runs there (remove what makes it a repository, \
                         or run the command elsewhere)",
                        first_line(command),
                        start_display(dir),
                    ),
                ));
            }
            level = at.parent();
        }
        Ok(())
    }

    /// Runs `command` as `sh -c` in `cwd`: confined in a fresh temporary
    /// directory of its own with `--sandbox`, and with git's discovery
    /// stopped above the root's repository.
    fn external(
        &self,
        task: usize,
        command: &str,
        cwd: &Path,
        timeout: Duration,
        observer: &mut dyn Observer,
    ) -> Result<RunOutput, (TaskError, RunOutput)> {
        let mut env = Vec::new();
        if let Some(ceiling) = self.git_ceiling() {
            env.push(("GIT_CEILING_DIRECTORIES".to_owned(), ceiling));
        }
        let mut temp = None;
        let sandbox = if self.settings.sandbox {
            let base = self
                .settings
                .sandbox_temp
                .clone()
                .unwrap_or_else(std::env::temp_dir);
            let dir = temp::PrivateTemp::new(&base).map_err(|e| {
                (
                    TaskError::new(
                        ErrorType::SandboxUnavailable,
                        format!(
                            "`{}` was not run: cannot make its temporary directory in {}: {e}",
                            first_line(command),
                            base.display()
                        ),
                    ),
                    RunOutput::default(),
                )
            })?;
            if let Some(path) = dir.path().to_str() {
                for name in ["TMP", "TEMP", "TEMPDIR"] {
                    env.push((name.to_owned(), path.to_owned()));
                }
            }
            let rules =
                sandbox::Confinement::for_root(&self.root_path, Some(dir.path()), &self.kept_out);
            temp = Some(dir);
            Some(rules)
        } else {
            None
        };
        let spec = process::Spawn {
            program: "sh".to_owned(),
            args: vec!["-c".to_owned(), command.to_owned()],
            env,
            cwd: Some(cwd.to_path_buf()),
            shown: first_line(command),
            timeout,
            max_output: self.settings.max_output,
            sandbox,
            cancel: self.settings.cancel.clone(),
        };
        let ran = process::run(&spec, task, observer);
        // Removed with all the command left in it.
        drop(temp);
        ran
    }

    /// `GIT_CEILING_DIRECTORIES` for a command: git looks for a
    /// repository no higher than the root's (the work tree's top, or the
    /// root outside one), before any the environment named.
    fn git_ceiling(&self) -> Option<String> {
        let top = match self.repo {
            Ok(Some(tree)) => tree.top().to_path_buf(),
            _ => self.root_path.canonicalize().ok()?,
        };
        let mut ceiling = top.parent()?.to_str()?.to_owned();
        if let Some(more) = std::env::var_os("GIT_CEILING_DIRECTORIES")
            .and_then(|v| v.into_string().ok())
            .filter(|v| !v.is_empty())
        {
            ceiling.push(':');
            ceiling.push_str(&more);
        }
        Some(ceiling)
    }
}

/// How approvals name where a RUN runs: `None` at the root.
fn dir_key(dir: Option<&Location>) -> Option<String> {
    dir.filter(|d| !d.is_root()).map(Location::display)
}

fn start_display(dir: Option<&Location>) -> String {
    dir.map_or_else(|| ".".to_owned(), Location::display)
}

impl Runner for CommandRunner<'_> {
    fn preview(&mut self, command: &str, dir: Option<&Location>) -> Result<String, TaskError> {
        let command = command.trim();
        let shown = first_line(command);
        let confined = if self.settings.sandbox {
            ", confined"
        } else {
            ""
        };
        if self.settings.allow_any {
            return Ok(format!(
                "Would run {shown} (any command is allowed{confined})"
            ));
        }
        let list = self.allowlist()?;
        if list.contains(command, dir_key(dir).as_deref()) {
            let place = match dir_key(dir) {
                None => "for this root".to_owned(),
                Some(d) => format!("in `{d}`"),
            };
            return Ok(format!("Would run {shown} (approved {place}{confined})"));
        }
        match builtin_argv(command) {
            Ok(_) => Ok(format!("Would run {shown} (built-in, inside clada)")),
            Err(why) if self.approver.can_ask() => Ok(format!(
                "Would ask on the terminal whether to run {shown} ({why})"
            )),
            Err(why) => {
                let why = Self::approved_elsewhere(&list, command, dir).unwrap_or(why);
                Err(self.not_allowed(command, dir, &why))
            }
        }
    }

    fn simulate(
        &mut self,
        task: usize,
        command: &str,
        dir: Option<&Location>,
        deadline: Option<Instant>,
        tree: &dyn TreeMut,
        observer: &mut dyn Observer,
    ) -> Option<Result<RunOutput, (TaskError, RunOutput)>> {
        let command = command.trim();
        // As in a real run, any command's `dir` is checked first (on the
        // plan: made, moved or removed by the tasks before).
        if let Some(dir) = dir
            && let Err(e) = tree.check_dir(dir)
        {
            return Some(Err((TaskError::from(e), RunOutput::default())));
        }
        // What runs as an approved command is a program whose effect is
        // not known: previewed only, after the check of where it would
        // run, made on the plan.
        if self.settings.allow_any {
            return None;
        }
        // An approved line, and one a person would be asked about, never
        // runs (nor is asked about) where git would find another
        // repository: refused here as in the real run, never previewed as
        // if it would run.
        let approved = self
            .allowlist()
            .ok()?
            .contains(command, dir_key(dir).as_deref());
        let asked = !approved && builtin_argv(command).is_err() && self.approver.can_ask();
        if approved || asked {
            return Self::foreign_repository(tree, command, dir)
                .err()
                .map(|e| Err((e, RunOutput::default())));
        }
        // Every built-in runs on the plan, through the real run's checks
        // of every flag and path: a dry run ends as the real run would.
        let argv = builtin_argv(command).ok()?;
        let mut limit = self.settings.timeout.min(BUILTIN_TIMEOUT);
        if let Some(d) = deadline {
            limit = limit.min(d.saturating_duration_since(Instant::now()));
        }
        Some(self.run_builtin(task, command, &argv, dir, limit, tree, observer))
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
        let timeout = left(self.settings.timeout);
        if self.settings.allow_any {
            return self.external(task, command, &cwd, timeout, observer);
        }
        let key = dir_key(dir);
        let list = self.allowlist().map_err(none)?;
        if list.contains(command, key.as_deref()) {
            Self::foreign_repository(self.root, command, dir).map_err(none)?;
            return self.external(task, command, &cwd, timeout, observer);
        }
        let why = match builtin_argv(command) {
            Ok(argv) => {
                let limit = left(self.settings.timeout.min(BUILTIN_TIMEOUT));
                return self.run_builtin(task, command, &argv, dir, limit, self.root, observer);
            }
            Err(why) => Self::approved_elsewhere(&list, command, dir).unwrap_or(why),
        };
        if !self.approver.can_ask() {
            return Err(none(self.not_allowed(command, dir, &why)));
        }
        // Nobody is asked about what would be refused anyway.
        Self::foreign_repository(self.root, command, dir).map_err(none)?;
        match self.approver.ask(command, key.as_deref()) {
            Some(Answer::Once) => self.external(task, command, &cwd, timeout, observer),
            Some(Answer::Always) => {
                let saved = match &self.approvals {
                    Some(approvals) => approvals
                        .update(|list| list.add(command, key.as_deref(), SystemTime::now()))
                        .map_err(|e| e.to_string()),
                    None => Err("there is no configuration directory to keep it in".to_owned()),
                };
                saved.map_err(|e| {
                    none(TaskError::new(
                        ErrorType::PermissionDenied,
                        format!("cannot save the approval: {e}"),
                    ))
                })?;
                self.external(task, command, &cwd, timeout, observer)
            }
            Some(Answer::No) => Err(none(TaskError::new(
                ErrorType::CommandNotAllowed,
                format!("`{}` was declined", first_line(command)),
            ))),
            None => Err(none(self.not_allowed(command, dir, &why))),
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
    if builtin::named(first).is_none() {
        return Err(format!("`{first}` is not one of the built-in commands"));
    }
    if let Some(c) = shell::shell_syntax(command) {
        return Err(format!("it uses shell syntax (`{c}`)"));
    }
    let argv = shell_words::split(command).map_err(|_| "its quotes do not balance".to_owned())?;
    if !builtin::is_builtin(&argv) {
        let sub = argv.get(1).map_or("", String::as_str);
        let subs = builtin::named("git").map_or(&[][..], |b| b.subcommands);
        let names: Vec<&str> = subs.iter().map(|s| s.name).collect();
        return Err(format!(
            "`git {sub}` is not one of git's built-in subcommands ({})",
            names.join(", ")
        ));
    }
    Ok(argv)
}

/// The task's error for a built-in's refusal.
fn refused(refusal: builtin::Refusal) -> TaskError {
    match refusal {
        builtin::Refusal::File { error, message } => {
            let mut e = TaskError::from(error);
            *e.message_mut() = message;
            e
        }
        builtin::Refusal::Other { kind, message } => TaskError::new(kind, message),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Quiet;
    use crate::engine::outcome::By;
    use crate::engine::tree::Kind;
    use crate::engine::view::{Planned, View};

    #[test]
    fn a_dry_run_stops_a_built_in_at_the_runs_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let settings = Settings::default();
        let mut runner = CommandRunner::new(
            &root,
            dir.path().to_owned(),
            &settings,
            None,
            Box::new(approve::NoPrompt),
        );
        let view = View::new(&root, 1);
        let by = By { unit: 1, task: 1 };
        let tree = Planned { view: &view, by };
        let deep = format!("mkdir -p {}x", "d/".repeat(1000));
        // The run's time limit has passed: the plan of the built-in stops
        // (its own limit, 5 s, is far off).
        let past = Some(Instant::now());
        let ran = runner.simulate(1, &deep, None, past, &tree, &mut Quiet);
        let Some(Err((e, _))) = ran else {
            panic!("not stopped: {ran:?}");
        };
        assert_eq!(e.error_type(), ErrorType::ExecTimeout);
        // Without one, it is carried out on the plan.
        let ran = runner.simulate(1, "mkdir -p a/b", None, None, &tree, &mut Quiet);
        assert!(matches!(ran, Some(Ok(_))), "{ran:?}");
        let made = Location::below_root(&["a", "b"]);
        assert_eq!(Tree::kind(&view, &made).unwrap(), Some(Kind::Dir));
        assert!(!dir.path().join("a").exists());
    }
}
