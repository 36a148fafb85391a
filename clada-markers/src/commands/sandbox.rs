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
//! That no process of a command outlives it is not the sandbox's work but
//! [`super::reaper`]'s, confined or not.

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

/// Whether the kernel can confine commands as `--sandbox` asks.
pub fn available() -> bool {
    let probe = Confinement::for_root(&std::env::temp_dir(), None);
    std::thread::spawn(move || restrict_this_thread(&probe).is_ok())
        .join()
        .unwrap_or(false)
}
