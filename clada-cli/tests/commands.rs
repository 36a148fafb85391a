//! RUN through the binary: a prompt answered on a pseudo-terminal, the
//! approval file round trip, and memory under a flood of output.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn clada(root: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clada"));
    c.current_dir(root);
    c
}

fn write_doc(root: &Path, body: &str) -> std::path::PathBuf {
    let doc = root.join("doc.md");
    std::fs::write(&doc, format!("<<<<<<< RUN\n{body}\n>>>>>>> END\n")).unwrap();
    doc
}

#[test]
fn a_prompt_on_the_terminal_runs_once_or_remembers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_doc(root, "echo from-the-prompt | tr a-z A-Z");
    let bin = env!("CARGO_BIN_EXE_clada");
    let run = |answer: &str| {
        let mut cmd = Command::new(bin);
        cmd.args(["apply", "--no-git", "doc.md"]).current_dir(root);
        let mut p = rexpect::session::spawn_command(cmd, Some(10_000)).unwrap();
        p.exp_string("Run it? [o]nce, [a]lways (remember it), [n]o:")
            .unwrap();
        p.send_line(answer).unwrap();
        p.exp_eof().unwrap()
    };
    let out = run("n");
    assert!(out.contains("declined"), "{out}");
    assert!(!root.join(".clada").exists());
    let out = run("o");
    assert!(out.contains("[task-1:exec] FROM-THE-PROMPT"), "{out}");
    assert!(!root.join(".clada").exists());
    let out = run("a");
    assert!(out.contains("FROM-THE-PROMPT"), "{out}");
    let saved = std::fs::read_to_string(root.join(".clada/allowed-commands.json")).unwrap();
    assert!(
        saved.contains("\"echo from-the-prompt | tr a-z A-Z\""),
        "{saved}"
    );
    // Remembered: no terminal needed any more.
    let out = clada(root)
        .args(["apply", "--no-git", "--no-prompt", "doc.md"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn without_a_terminal_the_refusal_says_how_to_approve() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_doc(root, "echo hi | wc -c");
    // --no-prompt: the same as having no terminal, even when the tests run
    // in one.
    let out = clada(root)
        .args(["apply", "--no-git", "--no-prompt", "doc.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("command_not_allowed"), "{text}");
    assert!(text.contains("clada allow 'echo hi | wc -c'"), "{text}");
    // The command it names works.
    let allow = clada(root)
        .args(["allow", "echo hi | wc -c"])
        .output()
        .unwrap();
    assert!(allow.status.success());
    let out = clada(root)
        .args(["apply", "--no-git", "--no-prompt", "doc.md"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn allow_adds_lists_and_removes_in_a_stable_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let ok = |args: &[&str]| {
        let out = clada(root).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(ok(&["allow", "npm test"]).1, "Approved: npm test\n");
    assert_eq!(
        ok(&["allow", "cargo", "build"]).1,
        "Approved: cargo build\n"
    );
    assert_eq!(ok(&["allow", "npm test"]).1, "Already approved: npm test\n");
    let (_, list) = ok(&["allow", "--list"]);
    let names: Vec<&str> = list
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(names, ["cargo build", "npm test"]);
    let file = std::fs::read_to_string(root.join(".clada/allowed-commands.json")).unwrap();
    let commands_at = file.find("\"commands\"").unwrap();
    assert!(file.find("\"cargo build\"").unwrap() > commands_at);
    assert!(file.ends_with("}\n"));
    assert_eq!(
        ok(&["allow", "--remove", "npm test"]),
        (Some(0), "Withdrawn: npm test\n".to_owned())
    );
    assert_eq!(ok(&["allow", "--remove", "npm test"]).0, Some(1));
    let (_, list) = ok(&["allow", "--list"]);
    assert!(!list.contains("npm test"));
    // -C names another root.
    let other = tempfile::tempdir().unwrap();
    let out = clada(root)
        .args(["allow", "-C"])
        .arg(other.path())
        .arg("make")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(other.path().join(".clada/allowed-commands.json").exists());
}

#[test]
fn a_flood_of_output_keeps_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // 400 MB of output; 1 MB kept.
    write_doc(
        root,
        "yes 'a line of output that goes on and on' | head -c 400000000",
    );
    let mut child = clada(root)
        .args([
            "apply",
            "--no-git",
            "--allow-any-command",
            "--max-output",
            "1MB",
            "--output-mode",
            "silent",
            "--timeout",
            "120s",
            "doc.md",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak_kib = 0u64;
    loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            for line in status.lines() {
                if let Some(v) = line.strip_prefix("VmHWM:") {
                    let kib: u64 = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                    peak_kib = peak_kib.max(kib);
                }
            }
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(peak_kib > 0, "never saw the process");
    eprintln!("peak resident memory: {peak_kib} KiB while 400 MB went through");
    assert!(peak_kib < 64 * 1024, "peak resident memory {peak_kib} KiB");
}
