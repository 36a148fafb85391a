//! Running a command in a session of its own (a process group of its own
//! where the system has no `setsid`), with a time limit and a bounded
//! record of its output.
//!
//! The child gets an empty stdin and one pipe for both stdout and stderr,
//! so their lines stay in the order they were written. One loop waits on
//! the pipe and on the child (a pidfd) at once with `poll`: lines are passed
//! on as they come and at most `max_output` bytes are kept; the rest is read
//! and dropped. On a timeout the whole group gets SIGTERM, then SIGKILL
//! after a short grace; when the command ends, whatever it left running,
//! in its group or not, is killed ([`super::reaper`]) before the rest of
//! its output is read, so no process of a RUN outlives it.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, PidfdFlags, Signal};

use super::reaper;
use crate::engine::{Observer, RunOutput, TaskError};
use crate::error_type::ErrorType;

/// How long a process group gets between SIGTERM and SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_millis(500);

/// How long output may keep coming after the command and what it left
/// were killed (from a process out of clada's reach that holds the pipe).
const AFTER_EXIT: Duration = Duration::from_millis(500);

/// What to run and under which limits.
#[derive(Clone, Debug)]
pub(crate) struct Spawn {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: Option<PathBuf>,
    /// How the command is named in messages.
    pub(crate) shown: String,
    pub(crate) timeout: Duration,
    pub(crate) max_output: usize,
    /// Run confined (`--sandbox`).
    pub(crate) sandbox: Option<super::sandbox::Confinement>,
    /// The run's stop switch: pulled, the command ends as at its timeout.
    pub(crate) cancel: crate::engine::Cancel,
}

/// The marker printed once when output goes past the limit.
pub(crate) const TRUNCATED: &str = "[output truncated]";

/// Output as it arrives: split into lines, passed on, kept up to a limit.
pub(crate) struct Output<'o> {
    task: usize,
    observer: &'o mut dyn Observer,
    max: usize,
    kept: Vec<u8>,
    partial: Vec<u8>,
    truncated: bool,
}

impl<'o> Output<'o> {
    pub(crate) fn new(task: usize, observer: &'o mut dyn Observer, max: usize) -> Self {
        Output {
            task,
            observer,
            max,
            kept: Vec::new(),
            partial: Vec::new(),
            truncated: false,
        }
    }

    pub(crate) fn bytes(&mut self, mut data: &[u8]) {
        while let Some(i) = memchr::memchr(b'\n', data) {
            self.partial.extend_from_slice(&data[..=i]);
            self.line();
            data = &data[i + 1..];
        }
        self.partial.extend_from_slice(data);
        // A very long line is passed on in pieces.
        if self.partial.len() >= 64 * 1024 {
            self.line();
        }
    }

    fn line(&mut self) {
        let line = std::mem::take(&mut self.partial);
        if self.truncated || line.is_empty() {
            return;
        }
        let room = self.max.saturating_sub(self.kept.len());
        let take = line.len().min(room);
        self.kept.extend_from_slice(&line[..take]);
        let shown = String::from_utf8_lossy(&line[..take]);
        if take > 0 {
            self.observer
                .output_line(self.task, shown.trim_end_matches(['\n', '\r']));
        }
        if take < line.len() {
            self.truncated = true;
            self.observer.output_line(self.task, TRUNCATED);
        }
    }

    pub(crate) fn finish(mut self) -> String {
        self.line();
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.truncated {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(TRUNCATED);
            text.push('\n');
        }
        text
    }
}

/// Runs `spec` for task `task`, forwarding output lines to `observer`.
pub(crate) fn run(
    spec: &Spawn,
    task: usize,
    observer: &mut dyn Observer,
) -> Result<RunOutput, (TaskError, RunOutput)> {
    let fail = |kind, message: String, out: RunOutput| Err((TaskError::new(kind, message), out));
    let (mut reader, writer) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => {
            return fail(
                ErrorType::ExecFailed,
                format!("cannot make a pipe: {e}"),
                RunOutput::default(),
            );
        }
    };
    let starting = reaper::Starting::now();
    // A session of its own: none of its processes can ever join clada's
    // again, so they are told from the processes of a program using clada.
    let setsid = reaper::setsid_program();
    let mut cmd = match setsid {
        Some(setsid) => {
            let mut cmd = Command::new(setsid);
            cmd.arg(&spec.program);
            cmd
        }
        None => {
            let mut cmd = Command::new(&spec.program);
            cmd.process_group(0);
            cmd
        }
    };
    cmd.args(&spec.args).stdin(Stdio::null());
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    if let Some(rules) = &spec.sandbox {
        // The one temporary directory it may write.
        cmd.env("TMPDIR", &rules.temp);
    }
    match writer.try_clone() {
        Ok(w) => {
            cmd.stdout(w).stderr(writer);
        }
        Err(e) => {
            return fail(
                ErrorType::ExecFailed,
                format!("cannot make a pipe: {e}"),
                RunOutput::default(),
            );
        }
    }
    let spawned = match &spec.sandbox {
        None => {
            let spawned = cmd.spawn();
            // Our copies of the pipe's write end go with it.
            drop(cmd);
            spawned
        }
        Some(rules) => match super::sandbox::spawn_confined(cmd, rules) {
            Ok(spawned) => spawned,
            Err(super::sandbox::Unavailable(why)) => {
                return fail(
                    ErrorType::SandboxUnavailable,
                    format!(
                        "`{}` was not run: --sandbox was asked for and {why}",
                        spec.shown
                    ),
                    RunOutput::default(),
                );
            }
        },
    };
    // The command held our copies of the pipe's write end (dropped by
    // now): the end of output is seen when the children close theirs.
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let out = RunOutput {
                output: String::new(),
                exit_code: Some(127),
            };
            return fail(
                ErrorType::ExecFailed,
                format!("cannot run `{}`: {e}", spec.program),
                out,
            );
        }
    };
    let Some(group) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        let _ = child.kill();
        return fail(
            ErrorType::ExecFailed,
            "the command has no process id".to_owned(),
            RunOutput::default(),
        );
    };
    let tracked = reaper::Tracked::new(starting, group, setsid.is_some());
    // Where pidfds are missing, the child is polled every few milliseconds.
    let pidfd: Option<OwnedFd> = rustix::process::pidfd_open(group, PidfdFlags::empty()).ok();

    let mut out = Output::new(task, observer, spec.max_output);
    let deadline = Instant::now() + spec.timeout;
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut status: Option<ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    let mut timed_out = false;

    loop {
        if status.is_none()
            && let Ok(Some(s)) = child.try_wait()
        {
            status = Some(s);
            // What the command left behind goes with it, in its group or
            // not.
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
            tracked.end_all();
            exited_at = Some(Instant::now());
        }
        if eof && status.is_some() {
            break;
        }
        let now = Instant::now();
        if status.is_none() && (now >= deadline || spec.cancel.is_set()) {
            timed_out = true;
            status = Some(stop_group(group, &mut child));
            tracked.end_all();
            exited_at = Some(Instant::now());
            continue;
        }
        // Output after the end is from a process out of reach.
        if exited_at.is_some_and(|t| t.elapsed() > AFTER_EXIT) {
            break;
        }
        let until = if status.is_some() {
            exited_at.map_or(now, |t| t + AFTER_EXIT)
        } else if pidfd.is_none() {
            deadline.min(now + Duration::from_millis(5))
        } else if spec.cancel.armed() {
            // Wakes up to look at the stop switch.
            deadline.min(now + Duration::from_millis(20))
        } else {
            deadline
        };
        let wait = until.saturating_duration_since(now);
        let timeout = Timespec {
            tv_sec: i64::try_from(wait.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(wait.subsec_nanos()),
        };
        let mut fds = Vec::with_capacity(2);
        if !eof {
            fds.push(PollFd::new(&reader, PollFlags::IN));
        }
        if let (Some(p), None) = (&pidfd, status) {
            fds.push(PollFd::new(p, PollFlags::IN));
        }
        if fds.is_empty() {
            continue;
        }
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
        let readable = !eof && !fds[0].revents().is_empty();
        drop(fds);
        if readable {
            match reader.read(&mut buf) {
                Ok(0) => eof = true,
                Ok(n) => out.bytes(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => eof = true,
            }
        }
    }

    let output = out.finish();
    let status = status.unwrap_or_else(|| ExitStatus::from_raw(0));
    let result = RunOutput {
        output,
        exit_code: status.code(),
    };
    if timed_out {
        let secs = spec.timeout.as_secs_f64();
        return fail(
            ErrorType::ExecTimeout,
            format!(
                "`{}` ran past its limit of {secs}s and was stopped",
                spec.shown
            ),
            result,
        );
    }
    match (status.code(), status.signal()) {
        (Some(0), _) => Ok(result),
        (Some(code), _) => fail(
            ErrorType::ExecFailed,
            format!("`{}` exited with code {code}", spec.shown),
            result,
        ),
        (None, Some(sig)) => fail(
            ErrorType::ExecFailed,
            format!("`{}` was killed by signal {sig}", spec.shown),
            result,
        ),
        (None, None) => fail(
            ErrorType::ExecFailed,
            format!("`{}` ended abnormally", spec.shown),
            result,
        ),
    }
}

/// SIGTERM to the group, SIGKILL after the grace period; waits for the
/// command itself.
fn stop_group(group: Pid, child: &mut Child) -> ExitStatus {
    let _ = rustix::process::kill_process_group(group, Signal::TERM);
    let until = Instant::now() + KILL_GRACE;
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Anything left in the group, the command included, dies now.
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
    child.wait().unwrap_or_else(|_| ExitStatus::from_raw(9))
}
