//! What several of these test files need: waiting for a condition, a
//! JSON Lines report read back, and the memory a server holds.

use std::time::{Duration, Instant};

use serde_json::Value;

/// Waits until `f` holds, or fails with `what` after 20 s.
pub(crate) fn eventually(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Each line of `stdout` as JSON (`--format jsonl`).
pub(crate) fn jsonl(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The anonymous memory a process holds (its heap, not its program's
/// pages), in bytes.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn anonymous_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap();
    kb * 1024
}
