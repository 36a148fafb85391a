//! Ending every process a command started (PROTOCOL §6), however it
//! detached: `setsid`, a double fork, an emptied environment, a handler
//! that ignores SIGTERM.
//!
//! Processes are followed by parentage. clada is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`): a process whose parent ends is handed to
//! clada, not to init, so whatever a command leaves running is, once the
//! command's main process has ended, a child of clada or below one. When
//! the command ends (success, failure or timeout), [`Tracked::end_all`]
//! kills every such child with everything below it and reaps it, round
//! after round until none is left (a killed process forks no more; a
//! round finds what was forked while the last one was killed).
//!
//! Never touched: the main processes of clada's other running commands,
//! children that started before the command, and, when the command runs
//! in a session of its own (`setsid`, the
//! program, when the system has it), every child in clada's own session: a
//! command's processes can never join that session again, so what is
//! there was started by the program that uses clada. Without `setsid` a
//! command runs in a process group of its own, and every child clada was
//! handed while it ran counts as the command's.
//!
//! It does not reach what a command had another program start (`at`,
//! `systemd-run`, a daemon it talks to), nor anything once clada itself is
//! killed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};

/// The most rounds of killing one command's processes.
const ROUNDS: usize = 100;

/// How long killed children may take to end before they are left
/// unreaped.
const REAP_WITHIN: Duration = Duration::from_secs(2);

/// Where the `setsid` program is looked for (never on `PATH`, which the
/// user's environment sets).
const SETSID: [&str; 2] = ["/usr/bin/setsid", "/bin/setsid"];

/// The main processes of commands running now, in this process. Held
/// while a command is started and until its main process is listed here
/// ([`Starting`]), and while a round of killing decides what to kill: no
/// round takes a command that has just started for what another left.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<i32>> {
    LIVE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Held while a command is started, until [`Tracked::new`].
#[derive(Debug)]
pub(crate) struct Starting(MutexGuard<'static, Vec<i32>>);

impl Starting {
    /// Makes this process the subreaper of its descendants, and waits
    /// for any round of killing to end.
    pub(crate) fn now() -> Starting {
        become_subreaper();
        Starting(live())
    }
}

/// Makes this process the subreaper of its descendants, once.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    });
}

/// The `setsid` program, which starts a command in a session of its own.
pub(crate) fn setsid_program() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<&'static Path>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        SETSID
            .iter()
            .map(Path::new)
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
    })
}

/// What `/proc/PID/stat` says of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    pid: i32,
    ppid: i32,
    session: i32,
    /// Ticks after boot.
    started: u64,
    zombie: bool,
}

impl Stat {
    fn read(pid: i32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Stat::parse(pid, &text)
    }

    /// `pid (comm) state ppid pgrp session … starttime …`; comm may hold
    /// spaces and parentheses, so the fields are counted after the last
    /// `)`.
    fn parse(pid: i32, text: &str) -> Option<Stat> {
        let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
        Some(Stat {
            pid,
            ppid: fields.get(1)?.parse().ok()?,
            session: fields.get(3)?.parse().ok()?,
            started: fields.get(19)?.parse().ok()?,
            zombie: *fields.first()? == "Z",
        })
    }
}

/// Every process the system lists now.
fn processes() -> Vec<Stat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(Stat::read)
        .collect()
}

fn me() -> i32 {
    rustix::process::getpid().as_raw_nonzero().get()
}

/// A running command's main process, and what tells its processes from
/// others.
#[derive(Debug)]
pub(crate) struct Tracked {
    main: i32,
    /// When the main process started: every process of the command
    /// started later.
    started: u64,
    /// clada's session, when the command runs in a session of its own.
    own_session: Option<i32>,
}

impl Tracked {
    /// Follows the command whose main process is `main`, a child of this
    /// process started while `starting` was held. `isolated`: it runs in a
    /// session of its own.
    pub(crate) fn new(starting: Starting, main: Pid, isolated: bool) -> Tracked {
        let main = main.as_raw_nonzero().get();
        let Starting(mut live) = starting;
        live.push(main);
        drop(live);
        let started = Stat::read(main).map_or(0, |s| s.started);
        // Read from /proc: getsid(2) gives 0 when the session's leader
        // lies outside this PID namespace (a container), which rustix's
        // `Pid` cannot hold.
        let own_session = isolated
            .then(|| Stat::read(me()).map(|s| s.session))
            .flatten();
        Tracked {
            main,
            started,
            own_session,
        }
    }

    /// Kills and reaps every process the command left, whatever group or
    /// session it is in. Call once the main process has been waited for.
    /// Returns how many processes were killed.
    pub(crate) fn end_all(&self) -> usize {
        let me = me();
        let until = Instant::now() + REAP_WITHIN;
        let mut killed = 0;
        for _ in 0..ROUNDS {
            let live = live();
            let others: Vec<i32> = live.iter().copied().filter(|&p| p != self.main).collect();
            let table = processes();
            let roots: Vec<Stat> = table
                .iter()
                .filter(|p| p.ppid == me && self.is_left_over(p, &others))
                .copied()
                .collect();
            if roots.is_empty() {
                break;
            }
            let targets = with_descendants(&table, &roots);
            for p in &targets {
                if !p.zombie && kill(p) {
                    killed += 1;
                }
            }
            // The roots are children of this process: their pids are not
            // given again until they are reaped.
            drop(live);
            for p in &roots {
                reap(p.pid, until);
            }
            if Instant::now() >= until {
                break;
            }
        }
        killed
    }

    /// Whether `child`, a child of clada, is something the command left.
    fn is_left_over(&self, child: &Stat, others: &[i32]) -> bool {
        if child.pid == self.main || child.started < self.started || others.contains(&child.pid) {
            return false;
        }
        match self.own_session {
            // Another command's session (its main process leads it) is
            // that command's to end.
            Some(own) => child.session != own && !others.contains(&child.session),
            None => true,
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        live().retain(|&p| p != self.main);
    }
}

/// `roots` and every process below them in `table`.
fn with_descendants(table: &[Stat], roots: &[Stat]) -> Vec<Stat> {
    let mut children: HashMap<i32, Vec<Stat>> = HashMap::new();
    for p in table {
        children.entry(p.ppid).or_default().push(*p);
    }
    let mut out = roots.to_vec();
    let mut i = 0;
    while let Some(p) = out.get(i).copied() {
        out.extend(children.get(&p.pid).into_iter().flatten().copied());
        i += 1;
    }
    out
}

/// Sends SIGKILL to `p`, unless its pid now names another process (it
/// ended and the number was given again).
fn kill(p: &Stat) -> bool {
    let Some(pid) = Pid::from_raw(p.pid) else {
        return false;
    };
    match rustix::process::pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => {
            // The descriptor holds one process: the one listed if it
            // started when the listing said.
            let same = Stat::read(p.pid).is_some_and(|now| now.started == p.started);
            same && rustix::process::pidfd_send_signal(&fd, Signal::KILL).is_ok()
        }
        Err(rustix::io::Errno::NOSYS) => rustix::process::kill_process(pid, Signal::KILL).is_ok(),
        Err(_) => false,
    }
}

/// Waits for the child `pid` to end, until `until`.
fn reap(pid: i32, until: Instant) {
    let Some(pid) = Pid::from_raw(pid) else {
        return;
    };
    loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::NOHANG) {
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
            Err(rustix::io::Errno::INTR) => {}
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_stat_line_whose_name_holds_parentheses_and_spaces() {
        let line =
            "4242 (a) b) (c) S 17 4242 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 50";
        let s = Stat::parse(4242, line).unwrap();
        assert_eq!(
            (s.ppid, s.session, s.started, s.zombie),
            (17, 4240, 98765, false)
        );
        let zombie = "7 (sh) Z 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0";
        assert!(Stat::parse(7, zombie).unwrap().zombie);
        assert_eq!(Stat::parse(1, "garbage"), None);
    }

    #[test]
    fn descendants_are_found_below_each_root() {
        let p = |pid, ppid| Stat {
            pid,
            ppid,
            session: 0,
            started: 0,
            zombie: false,
        };
        let table = [p(10, 1), p(11, 10), p(12, 11), p(20, 1), p(21, 20)];
        let got: Vec<i32> = with_descendants(&table, &[p(10, 1)])
            .iter()
            .map(|s| s.pid)
            .collect();
        assert_eq!(got, [10, 11, 12]);
    }
}
