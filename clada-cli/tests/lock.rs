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

/// 8 runs with no flags at all, each appending 25 lines to one file, in
/// `dir`; clada's runtime directory is under `home` (the child's
/// environment only).
fn eight_appenders(dir: &std::path::Path, home: &std::path::Path, extra: &[&str]) {
    std::fs::write(dir.join("log.txt"), "").unwrap();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let doc = home.join(format!("doc{i}.md"));
            let body: String = (0..25)
                .map(|n| {
                    format!("<<<<<<< WRITE path=\"log.txt\" append=\"true\"\nrun {i} line {n}\n>>>>>>> END\n")
                })
                .collect();
            std::fs::write(&doc, body).unwrap();
            Command::new(env!("CARGO_BIN_EXE_clada"))
                .arg("apply")
                .args(extra)
                .arg(&doc)
                .current_dir(dir)
                .env("HOME", home)
                .env("XDG_RUNTIME_DIR", home.join("run"))
                .env("XDG_CONFIG_HOME", home.join("config"))
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let log = std::fs::read_to_string(dir.join("log.txt")).unwrap();
    let lines: std::collections::BTreeSet<&str> = log.lines().collect();
    assert_eq!(lines.len(), 200, "lines were lost:\n{log}");
}

#[test]
fn concurrent_runs_take_a_lock_on_the_root_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    eight_appenders(dir.path(), home.path(), &[]);
    // The lock is in clada's runtime directory, never in the tree.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let locks = std::fs::read_dir(home.path().join("run/clada/locks"))
        .unwrap()
        .count();
    assert!(locks >= 1);
}

#[test]
fn in_a_repository_the_default_lock_is_in_the_runtime_directory_never_in_git() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path()).unwrap();
    eight_appenders(
        dir.path(),
        home.path(),
        &["--git-author", "t <t@example.com>"],
    );
    // Nothing of clada's in `.git`, where a command may write.
    let in_git: Vec<_> = std::fs::read_dir(dir.path().join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("clada"))
        .collect();
    assert!(in_git.is_empty(), "{in_git:?}");
    // One lock for the repository, in a directory nobody else may use.
    let locks = home.path().join("run/clada/locks");
    let names: Vec<_> = std::fs::read_dir(&locks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".lock"))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&locks).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}
