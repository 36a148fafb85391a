//! A long-running server gives back the memory of a large call (issue 31).
//!
//! glibc's allocator maps a block of its own only for requests above its
//! mmap threshold, and raises that threshold to the size of each mapped
//! block freed (up to 32 MiB): after one 10 MB document, the buffers of the
//! next ones come from the heap of the thread that asked, and stay resident
//! once freed, in every thread's arena. `clada mcp` idled at 17 times its
//! largest document. A threshold that is set is never raised: every block
//! of [`THRESHOLD`] or more is mapped on its own and given back to the
//! system when freed (the server idles within a few MiB of a fresh one).
//!
//! The threshold is a tunable glibc reads when a process starts
//! (`GLIBC_TUNABLES`), and setting it later takes `mallopt`, which safe
//! code cannot call: so the server starts itself again, once, before it
//! reads anything, with the tunable added (the same process id, arguments
//! and standard streams: `exec`). A threshold the environment already sets
//! is left as it is; when the program cannot be started again, the server
//! runs as it is. A program started with raised privileges (setuid, file
//! capabilities: `AT_SECURE`) is not started again: glibc may drop its
//! tunables, and the server would start itself again and again.

/// The glibc tunable.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TUNABLE: &str = "glibc.malloc.mmap_threshold";

/// The size from which a block is mapped on its own: past a line of a
/// message, a document and its reports (benches/README.md, servers under
/// soak).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const THRESHOLD: usize = 1 << 20;

/// Starts this program again with a fixed mmap threshold unless the
/// environment has one; returns only when it does not (or cannot).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn return_large_blocks() {
    use std::os::unix::process::CommandExt as _;

    if !plain() {
        return;
    }
    let Some(tunables) = tunables(std::env::var_os("GLIBC_TUNABLES")) else {
        return;
    };
    let Ok(program) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new(program);
    if let Some(name) = args.next() {
        again.arg0(name);
    }
    // Only returns on failure: then the server runs with the threshold it has.
    let _ = again.args(args).env("GLIBC_TUNABLES", tunables).exec();
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn return_large_blocks() {}

/// Whether the kernel started this program without raised privileges:
/// `AT_SECURE` (23) is 0 in its auxiliary vector. Not when it cannot be
/// read.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn plain() -> bool {
    const AT_SECURE: usize = 23;
    const WORD: usize = std::mem::size_of::<usize>();
    let Ok(auxv) = std::fs::read("/proc/self/auxv") else {
        return false;
    };
    let word = |b: &[u8]| b.try_into().map(usize::from_ne_bytes).ok();
    auxv.chunks_exact(2 * WORD)
        .find_map(|pair| {
            let (key, value) = pair.split_at(WORD);
            (word(key)? == AT_SECURE).then(|| word(value))?
        })
        .is_some_and(|secure| secure == 0)
}

/// `GLIBC_TUNABLES` with the threshold added, or `None` when it sets one.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tunables(current: Option<std::ffi::OsString>) -> Option<std::ffi::OsString> {
    let ours = format!("{TUNABLE}={THRESHOLD}");
    let Some(mut current) = current.filter(|c| !c.is_empty()) else {
        return Some(ours.into());
    };
    let set = current
        .to_string_lossy()
        .split(':')
        .any(|t| t.split('=').next() == Some(TUNABLE));
    if set {
        return None;
    }
    current.push(":");
    current.push(ours);
    Some(current)
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn a_test_runs_without_raised_privileges() {
        assert!(plain());
    }

    #[test]
    fn the_threshold_is_added_to_the_tunables_unless_they_set_one() {
        let t = |v: Option<&str>| tunables(v.map(Into::into)).map(|s| s.into_string().unwrap());
        let ours = "glibc.malloc.mmap_threshold=1048576";
        assert_eq!(t(None).as_deref(), Some(ours));
        assert_eq!(t(Some("")).as_deref(), Some(ours));
        assert_eq!(
            t(Some("glibc.malloc.arena_max=2")),
            Some(format!("glibc.malloc.arena_max=2:{ours}"))
        );
        assert_eq!(t(Some("glibc.malloc.mmap_threshold=65536")), None);
        assert_eq!(
            t(Some(
                "glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=1"
            )),
            None
        );
        // Another tunable whose name begins the same is not it.
        assert!(t(Some("glibc.malloc.mmap_threshold_x=1")).is_some());
    }
}
