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
//! `/dev/tty`), never clada's own directories even where they lie inside
//! the root ([`super::writable`]), and neither
//! connect nor bind TCP sockets (Landlock ABI 4, required: where the
//! kernel cannot enforce this, the command does not run,
//! `sandbox_unavailable`). Where the kernel has Landlock ABI 6, it can
//! also neither signal a process outside its own sandbox (clada, the
//! user's other programs, another command) nor connect to an abstract
//! Unix socket made outside it; on an older kernel these two are left
//! open and the command still runs ([`scoped`] says which). Landlock
//! never governs UDP; ptrace of a process outside the sandbox is refused
//! at every ABI. See the README.
//!
//! That no process of a command outlives it is not the sandbox's work but
//! [`super::reaper`]'s, confined or not.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

/// What a confined command may write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Confinement {
    pub(crate) writable: Vec<PathBuf>,
    /// The temporary directory it may write, given to it as `TMPDIR`.
    pub(crate) temp: PathBuf,
    /// What it may never write, even inside `writable`: clada's own
    /// directories ([`super::writable`]).
    pub(crate) kept_out: Vec<PathBuf>,
}

impl Confinement {
    /// Writes below `root` and `temp` (the temporary directory when
    /// `None`), never in `kept_out`.
    pub(crate) fn for_root(root: &Path, temp: Option<&Path>, kept_out: &[PathBuf]) -> Confinement {
        let temp = temp.map_or_else(std::env::temp_dir, Path::to_path_buf);
        Confinement {
            writable: vec![root.to_path_buf(), temp.clone()],
            temp,
            kept_out: kept_out.to_vec(),
        }
    }
}

/// Why a command could not be confined.
#[derive(Debug)]
pub(crate) struct Unavailable(pub(crate) String);

/// The Landlock version that governs TCP.
const ABI_NET: ABI = ABI::V4;

/// The Landlock version that scopes signals and abstract Unix sockets to
/// the sandbox.
const ABI_SCOPES: ABI = ABI::V6;

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

/// Restricts the calling thread; returns whether signals and abstract
/// Unix sockets are scoped too (Landlock ABI 6).
fn restrict_this_thread(rules: &Confinement) -> Result<bool, Unavailable> {
    let fail = |what: &str, e: &dyn std::fmt::Display| Unavailable(format!("{what}: {e}"));
    let abi = ABI_NET;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| fail("the kernel cannot confine file access", &e))?
        .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
        .map_err(|e| fail("the kernel cannot confine the network", &e))?
        // Best effort: an older kernel runs the command without them.
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI_SCOPES))
        .map_err(|e| fail("cannot scope signals and abstract sockets", &e))?
        .set_compatibility(CompatLevel::HardRequirement)
        .create()
        .map_err(|e| fail("cannot create a Landlock ruleset", &e))?
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(|e| fail("cannot open /", &e))?,
            AccessFs::from_read(abi),
        ))
        .map_err(|e| fail("cannot allow reading", &e))?;
    for grant in super::writable::grants(&rules.writable, &rules.kept_out).map_err(Unavailable)? {
        let access = if grant.dir {
            AccessFs::from_all(abi)
        } else {
            AccessFs::from_file(abi)
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(grant.fd, access))
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
    let scoped = matches!(
        status.landlock,
        LandlockStatus::Available { effective_abi, .. } if effective_abi >= ABI_SCOPES
    );
    // Everything but the scopes was a hard requirement: only their absence,
    // on a kernel without them, may leave the ruleset partly enforced.
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(scoped),
        RulesetStatus::PartiallyEnforced if !scoped => Ok(false),
        other => Err(Unavailable(format!(
            "the kernel enforces the sandbox only partly ({other:?})"
        ))),
    }
}

/// Restricts a probe thread, which then ends.
fn probe() -> Option<bool> {
    let probe = Confinement::for_root(&std::env::temp_dir(), None, &[]);
    std::thread::spawn(move || restrict_this_thread(&probe).ok())
        .join()
        .ok()
        .flatten()
}

/// Whether the kernel can confine commands as `--sandbox` asks.
pub fn available() -> bool {
    probe().is_some()
}

/// Whether a confined command is also kept from signalling processes
/// outside its sandbox (clada included) and from connecting to abstract
/// Unix sockets made outside it (Landlock ABI 6); `false` also when there
/// is no sandbox at all.
pub fn scoped() -> bool {
    probe().unwrap_or(false)
}
