//! Running a command as its own process group, with a time limit and a
//! bounded record of its output.
//!
//! The child gets an empty stdin and one pipe for both stdout and stderr,
//! so their lines stay in the order they were written. A reader thread
//! passes lines over a bounded channel; the caller's thread forwards them
//! as they come and keeps at most `max_output` bytes. On a timeout the whole
//! group gets SIGTERM, then SIGKILL after a short grace; when the command
//! ends, whatever it left running in its group is killed too, so no process
//! of a RUN outlives it.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use crate::engine::{Observer, RunOutput, TaskError};
use crate::error_type::ErrorType;

/// How long a process group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

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
}

enum Chunk {
    Line(Vec<u8>),
    Eof,
}

/// The marker printed once when output goes past the limit.
pub const TRUNCATED: &str = "[output truncated]";

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
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args).stdin(Stdio::null()).process_group(0);
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
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
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end: let them go,
    // so that the end of output is seen when the children close theirs.
    drop(cmd);
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

    let (tx, rx) = mpsc::sync_channel::<Chunk>(256);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 16 * 1024];
        let mut line = Vec::new();
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    for part in buf[..n].split_inclusive(|&b| b == b'\n') {
                        line.extend_from_slice(part);
                        if (line.ends_with(b"\n") || line.len() >= 64 * 1024)
                            && tx.send(Chunk::Line(std::mem::take(&mut line))).is_err()
                        {
                            return;
                        }
                    }
                }
            }
        }
        if !line.is_empty() {
            let _ = tx.send(Chunk::Line(line));
        }
        let _ = tx.send(Chunk::Eof);
    });

    let started = Instant::now();
    let deadline = started + spec.timeout;
    let mut kept: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut status: Option<ExitStatus> = None;
    let mut timed_out = false;
    let mut eof = false;
    let mut exited_at: Option<Instant> = None;

    while !(eof && status.is_some()) {
        let now = Instant::now();
        if status.is_none() && now >= deadline && !timed_out {
            timed_out = true;
            status = Some(stop_group(group, &mut child));
            exited_at = Some(Instant::now());
        }
        if status.is_none()
            && let Ok(Some(s)) = child.try_wait()
        {
            status = Some(s);
            exited_at = Some(Instant::now());
            // What the command left behind in its group goes with it.
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
        if eof {
            if status.is_none() {
                std::thread::sleep(Duration::from_millis(5));
            }
            continue;
        }
        // Output still coming after the command ended is from a process
        // that left the group; stop waiting for it.
        if exited_at.is_some_and(|t| t.elapsed() > Duration::from_millis(500)) {
            break;
        }
        let wait = if status.is_some() {
            Duration::from_millis(50)
        } else {
            deadline
                .saturating_duration_since(now)
                .min(Duration::from_millis(20))
        };
        match rx.recv_timeout(wait) {
            Ok(Chunk::Line(bytes)) => {
                if truncated {
                    continue;
                }
                let room = spec.max_output.saturating_sub(kept.len());
                let take = if bytes.len() <= room {
                    bytes.len()
                } else {
                    room
                };
                let piece = &bytes[..take];
                kept.extend_from_slice(piece);
                let shown = String::from_utf8_lossy(piece);
                if !shown.is_empty() {
                    observer.output_line(task, shown.trim_end_matches(['\n', '\r']));
                }
                if take < bytes.len() {
                    truncated = true;
                    observer.output_line(task, TRUNCATED);
                }
            }
            Ok(Chunk::Eof) | Err(RecvTimeoutError::Disconnected) => eof = true,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }

    let mut output = String::from_utf8_lossy(&kept).into_owned();
    if truncated {
        if !output.ends_with('\n') && !output.is_empty() {
            output.push('\n');
        }
        output.push_str(TRUNCATED);
        output.push('\n');
    }
    let status = status.unwrap_or_else(|| ExitStatus::from_raw(0));
    let out = RunOutput {
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
            out,
        );
    }
    match (status.code(), status.signal()) {
        (Some(0), _) => Ok(out),
        (Some(code), _) => fail(
            ErrorType::ExecFailed,
            format!("`{}` exited with code {code}", spec.shown),
            out,
        ),
        (None, Some(sig)) => fail(
            ErrorType::ExecFailed,
            format!("`{}` was killed by signal {sig}", spec.shown),
            out,
        ),
        (None, None) => fail(
            ErrorType::ExecFailed,
            format!("`{}` ended abnormally", spec.shown),
            out,
        ),
    }
}

/// SIGTERM to the group, SIGKILL after the grace period; waits for the
/// command itself.
fn stop_group(group: Pid, child: &mut std::process::Child) -> ExitStatus {
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
