//! Confining approved and prompted commands (`--sandbox`, PROTOCOL §6)
//! with Landlock, and making sure no process of theirs outlives them.
//!
//! Landlock restricts the thread that asks and everything it starts
//! afterwards. The workspace forbids `unsafe`, so there is no `pre_exec`
//! hook: a fresh thread restricts itself, spawns the command (which
//! inherits the restriction) and ends; no other work ever runs on it.
//!
//! The command may read and execute anything, write only below the root
//! and its own temporary directory (`commands::temp`; and `/dev/null`,
//! `/dev/tty`), and neither
//! connect nor bind TCP sockets. Landlock does not govern UDP, abstract
//! Unix sockets, signals to other processes or ptrace of non-descendants;
//! see the README. Where the kernel cannot enforce all of this, the
//! command does not run (`sandbox_unavailable`).
//!
//! Processes that leave the command's process group (`setsid`) are found
//! afterwards: clada is a child subreaper, so orphans of the command
//! become its children, and every process of the command carries a
//! marker in its environment.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};

/// What a confined command may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Confinement {
    pub(crate) writable: Vec<PathBuf>,
    /// The temporary directory it may write, given to it as `TMPDIR`.
    pub(crate) temp: PathBuf,
}

impl Confinement {
    /// Writes below `root` and `temp` (the temporary directory when
    /// `None`).
    pub(crate) fn for_root(root: &Path, temp: Option<&Path>) -> Confinement {
        let temp = temp.map_or_else(std::env::temp_dir, Path::to_path_buf);
        Confinement {
            writable: vec![root.to_path_buf(), temp.clone()],
            temp,
        }
    }
}

/// Why a command could not be confined.
#[derive(Debug)]
pub(crate) struct Unavailable(pub(crate) String);

/// The Landlock version that governs TCP.
const ABI_NET: ABI = ABI::V4;

/// Spawns `cmd` confined: on a thread of its own that restricts itself
/// first.
pub(crate) fn spawn_confined(
    mut cmd: Command,
    rules: &Confinement,
) -> Result<std::io::Result<Child>, Unavailable> {
    let rules = rules.clone();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                restrict_this_thread(&rules)?;
                Ok(cmd.spawn())
            })
            .join()
            .unwrap_or_else(|_| Err(Unavailable("the sandbox thread panicked".to_owned())))
    })
}

fn restrict_this_thread(rules: &Confinement) -> Result<(), Unavailable> {
    let fail = |what: &str, e: &dyn std::fmt::Display| Unavailable(format!("{what}: {e}"));
    let abi = ABI_NET;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| fail("the kernel cannot confine file access", &e))?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(|e| fail("the kernel cannot confine the network", &e))?
        .create()
        .map_err(|e| fail("cannot create a Landlock ruleset", &e))?
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(|e| fail("cannot open /", &e))?,
            AccessFs::from_read(abi),
        ))
        .map_err(|e| fail("cannot allow reading", &e))?;
    for dir in &rules.writable {
        let fd =
            PathFd::new(dir).map_err(|e| fail(&format!("cannot open {}", dir.display()), &e))?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
            .map_err(|e| fail("cannot allow writing", &e))?;
    }
    for device in ["/dev/null", "/dev/tty"] {
        if let Ok(fd) = PathFd::new(device) {
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, AccessFs::from_file(abi)))
                .map_err(|e| fail(&format!("cannot allow {device}"), &e))?;
        }
    }
    let status = ruleset
        .restrict_self()
        .map_err(|e| fail("cannot restrict the command", &e))?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(Unavailable(format!(
            "the kernel enforces the sandbox only partly ({:?})",
            status.ruleset
        )));
    }
    Ok(())
}

/// The environment variable that marks a command's processes.
pub(crate) const MARK: &str = "CLADA_RUN";

/// Makes this process the subreaper of its descendants, once.
pub(crate) fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    });
}

/// A marker for one command's processes, unique in this process.
pub(crate) fn new_mark() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// Kills every process that carries `mark` in its environment, and reaps
/// those that were handed to us as their subreaper. Bounded: a few rounds,
/// for processes started while the last ones were killed.
pub(crate) fn kill_marked(mark: &str) -> usize {
    let needle = format!("{MARK}={mark}\0");
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut killed = 0;
    for _ in 0..8 {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return killed;
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if pid != me && memchr::memmem::find(&environ, needle.as_bytes()).is_some() {
                found.push((pid, parent_of(pid) == Some(me)));
            }
        }
        if found.is_empty() {
            break;
        }
        for (pid, ours) in found {
            let Some(pid) = rustix::process::Pid::from_raw(pid) else {
                continue;
            };
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            killed += 1;
            if ours {
                // An orphan handed to us: killed, it ends at once.
                let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            }
        }
    }
    killed
}

/// The parent of `pid`, from `/proc/PID/stat`.
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Whether the kernel can confine commands as `--sandbox` asks.
pub fn available() -> bool {
    let probe = Confinement::for_root(&std::env::temp_dir(), None);
    std::thread::spawn(move || restrict_this_thread(&probe).is_ok())
        .join()
        .unwrap_or(false)
}
