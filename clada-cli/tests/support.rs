//! What several of these test files need: waiting for a condition, and a
//! JSON Lines report read back.

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
