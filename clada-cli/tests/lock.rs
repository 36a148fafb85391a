//! `--lock-file`: runs on the same tree take turns.

use std::process::{Command, Stdio};

#[test]
fn concurrent_runs_with_a_lock_lose_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("log.txt"), "").unwrap();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let doc = p.join(format!("doc{i}.md"));
            // Each run reads the log, appends its line and writes it back,
            // with a command in between to widen the window.
            std::fs::write(
                &doc,
                format!("<<<<<<< TASKS\n<<<<<<< RUN\nsleep 0.05\n>>>>>>> END\n<<<<<<< WRITE path=\"log.txt\" append=\"true\"\nrun {i}\n>>>>>>> END\n>>>>>>> TASKS\n"),
            )
            .unwrap();
            Command::new(env!("CARGO_BIN_EXE_clada"))
                .args(["apply", "--no-git", "--allow-any-command", "--lock-file", "run.lock", "--lock-timeout", "60s"])
                .arg(&doc)
                .current_dir(p)
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let log = std::fs::read_to_string(p.join("log.txt")).unwrap();
    let mut lines: Vec<&str> = log.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        (0..8).map(|i| format!("run {i}")).collect::<Vec<_>>()
    );
}

#[test]
fn a_lock_held_too_long_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let held = std::fs::File::create(p.join("run.lock")).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
    std::fs::write(
        p.join("doc.md"),
        "<<<<<<< WRITE path=\"x.txt\"\nx\n>>>>>>> END\n",
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_clada"))
        .args([
            "apply",
            "--no-git",
            "--format",
            "json",
            "--lock-file",
            "run.lock",
            "--lock-timeout",
            "300ms",
            "doc.md",
        ])
        .current_dir(p)
        .output()
        .unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["error"]["type"], "lock_timeout");
    assert_eq!(report["error"]["retryable"], true);
    assert!(!p.join("x.txt").exists());
    drop(held);
    // Free again: the same run goes through.
    let out = Command::new(env!("CARGO_BIN_EXE_clada"))
        .args(["apply", "--no-git", "--lock-file", "run.lock", "doc.md"])
        .current_dir(p)
        .output()
        .unwrap();
    assert!(out.status.success());
}
