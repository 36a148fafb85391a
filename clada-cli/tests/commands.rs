//! RUN through the binary: a prompt answered on a pseudo-terminal, the
//! approval file round trip, and memory under a flood of output.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The binary, run in `root`, with clada's own directories under `home`
/// (given in the child's environment only).
fn clada_at(root: &Path, home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clada"));
    c.current_dir(root);
    with_home(&mut c, home);
    c
}

fn with_home(c: &mut Command, home: &Path) {
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_RUNTIME_DIR", home.join("run"));
}

/// The approvals file under `home`.
fn approvals(home: &Path) -> std::path::PathBuf {
    home.join("config/clada/approvals.json")
}

fn write_doc(root: &Path, body: &str) -> std::path::PathBuf {
    let doc = root.join("doc.md");
    std::fs::write(&doc, format!("<<<<<<< RUN\n{body}\n>>>>>>> END\n")).unwrap();
    doc
}

#[test]
fn a_prompt_on_the_terminal_runs_once_or_remembers() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let root = dir.path();
    let clada = |root: &Path| clada_at(root, home);
    write_doc(root, "echo from-the-prompt | tr a-z A-Z");
    let bin = env!("CARGO_BIN_EXE_clada");
    let run = |answer: &str| {
        let mut cmd = Command::new(bin);
        cmd.args(["apply", "--no-git", "doc.md"]).current_dir(root);
        with_home(&mut cmd, home);
        let mut p = rexpect::session::spawn_command(cmd, Some(10_000)).unwrap();
        p.exp_string("Run it? [o]nce, [a]lways (remember it at the root), [n]o:")
            .unwrap();
        p.send_line(answer).unwrap();
        p.exp_eof().unwrap()
    };
    let out = run("n");
    assert!(out.contains("declined"), "{out}");
    assert!(!approvals(home).exists());
    let out = run("o");
    assert!(out.contains("[task-1:exec] FROM-THE-PROMPT"), "{out}");
    assert!(!approvals(home).exists());
    let out = run("a");
    assert!(out.contains("FROM-THE-PROMPT"), "{out}");
    // Kept outside the tree, under the root's canonical path.
    assert!(!root.join(".clada").exists());
    let saved = std::fs::read_to_string(approvals(home)).unwrap();
    let key = std::fs::canonicalize(root).unwrap();
    assert!(
        saved.contains(&format!("{:?}", key.display().to_string())),
        "{saved}"
    );
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
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    let clada = |root: &Path| clada_at(root, home.path());
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
    let canonical = std::fs::canonicalize(root).unwrap();
    let hint = format!(
        "clada allow -C {} 'echo hi | wc -c'",
        shell_words::quote(&canonical.display().to_string())
    );
    assert!(text.contains(&hint), "{text}");
    // The command it names works, from anywhere.
    let words = shell_words::split(&hint).unwrap();
    let allow = clada(home.path()).args(&words[1..]).output().unwrap();
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
fn an_approval_holds_only_in_the_directory_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("sub")).unwrap();
    let clada = |root: &Path| clada_at(root, home.path());
    let allow = clada(root)
        .args(["allow", "echo hi | wc -c"])
        .output()
        .unwrap();
    assert!(allow.status.success());
    std::fs::write(
        root.join("doc.md"),
        "<<<<<<< RUN dir=\"sub\"\necho hi | wc -c\n>>>>>>> END\n",
    )
    .unwrap();
    let apply = || {
        clada(root)
            .args([
                "apply",
                "--no-git",
                "--no-prompt",
                "--format",
                "json",
                "doc.md",
            ])
            .output()
            .unwrap()
    };
    // Approved at the root, not in `sub`: refused, saying so and naming
    // the approval that would hold there.
    let out = apply();
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = &report["blocks"][0]["tasks"][0]["error"];
    assert_eq!(error["type"], "command_not_allowed");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("approved at the root, not in `sub`"),
        "{message}"
    );
    let canonical = std::fs::canonicalize(root).unwrap();
    let hint = format!(
        "clada allow -C {} --dir sub 'echo hi | wc -c'",
        shell_words::quote(&canonical.display().to_string())
    );
    assert!(message.contains(&hint), "{message}");
    let words = shell_words::split(&hint).unwrap();
    let allow = clada(home.path()).args(&words[1..]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&allow.stdout),
        "Approved: echo hi | wc -c\t(in sub)\n"
    );
    let out = apply();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let list = clada(root).args(["allow", "--list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.contains("echo hi | wc -c\t(in sub, approved "),
        "{list}"
    );
    // An approval of another directory is no approval of this one.
    let removed = clada(root)
        .args(["allow", "--dir", "sub", "--remove", "echo hi | wc -c"])
        .output()
        .unwrap();
    assert!(removed.status.success());
    let elsewhere = clada(root)
        .args(["allow", "--dir", "other", "echo hi | wc -c"])
        .output()
        .unwrap();
    assert!(elsewhere.status.success());
    assert_eq!(apply().status.code(), Some(1));
    // A directory outside the root is no place to approve.
    let out = clada(root)
        .args(["allow", "--dir", "../x", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn allow_adds_lists_and_removes_in_a_stable_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let root = dir.path();
    let clada = |root: &Path| clada_at(root, home);
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
    let mut lines = list.lines();
    // The first line says where the approvals are kept.
    let header = lines.next().unwrap();
    assert!(
        header.ends_with(&approvals(home).display().to_string()),
        "{header}"
    );
    let names: Vec<&str> = lines.map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(names, ["cargo build", "npm test"]);
    let file = std::fs::read_to_string(approvals(home)).unwrap();
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
    let file = std::fs::read_to_string(approvals(home)).unwrap();
    let other_key = std::fs::canonicalize(other.path()).unwrap();
    assert!(
        file.contains(&format!("{:?}", other_key.display().to_string())),
        "{file}"
    );
    assert!(!other.path().join(".clada").exists());
}

#[test]
fn a_document_never_approves_its_own_commands() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    let canary = dir.path().join("canary");
    // An approval file of the old kind, as a document or anyone could
    // have left it: ignored, with a warning.
    std::fs::create_dir_all(root.join(".clada")).unwrap();
    std::fs::write(
        root.join(".clada/allowed-commands.json"),
        r#"{"commands": ["echo pwned > canary"]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("s/.clada")).unwrap();
    std::fs::write(root.join("s/.clada/allowed-commands.json"), "{}").unwrap();
    let doc = root.join("doc.md");
    std::fs::write(
        &doc,
        "<<<<<<< MOVE from=\"s/.clada\" to=\"./\"\n>>>>>>> END\n\
         <<<<<<< RUN\ncp -r s/. .\n>>>>>>> END\n\
         <<<<<<< RUN\nmv s/.clada .\n>>>>>>> END\n\
         <<<<<<< RUN\necho pwned > canary\n>>>>>>> END\n",
    )
    .unwrap();
    let out = clada_at(root, home.path())
        .args([
            "apply",
            "--no-git",
            "--no-prompt",
            "--format",
            "json",
            "doc.md",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: ignoring"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = report["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["tasks"].as_array().unwrap())
        .map(|t| t["error"]["type"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(
        kinds,
        [
            "path_escape",
            "path_escape",
            "path_escape",
            "command_not_allowed"
        ]
    );
    assert!(!canary.exists());
    assert!(!approvals(home.path()).exists());
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
    let home = tempfile::tempdir().unwrap();
    let mut child = clada_at(root, home.path())
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

#[test]
fn allow_approves_exactly_the_text_a_run_carries() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    let clada = || clada_at(root, home.path());
    let stdout = |c: &mut Command| {
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Nothing approved yet: said in a sentence.
    let list = stdout(clada().args(["allow", "--list"]));
    assert!(list.contains("No command is approved for "), "{list}");
    // One argument: as written, spaces and quotes kept.
    let one = "echo \"a  b\" | tr a-z A-Z";
    assert_eq!(
        stdout(clada().args(["allow", one])),
        format!("Approved: {one}\n")
    );
    // Several: joined with shell quoting where a word needs it.
    assert_eq!(
        stdout(clada().args(["allow", "echo", "a  b"])),
        "Approved: echo 'a  b'\n"
    );
    let list = stdout(clada().args(["allow", "--list"]));
    let names: Vec<&str> = list
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(names, [one, "echo 'a  b'"]);
    // Both run as RUN bodies with that exact text.
    write_doc(
        root,
        &format!("{one}\n>>>>>>> END\n<<<<<<< RUN\necho 'a  b'"),
    );
    let out = stdout(clada().args(["apply", "--no-git", "--no-prompt", "doc.md"]));
    assert!(out.contains("[task-1:exec] A  B"), "{out}");
    assert!(out.contains("[task-2:exec] a  b"), "{out}");
}

#[test]
fn pasting_the_refusal_hint_approves_exactly_that_command() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // A root whose name needs quoting too.
    let root = dir.path().join("my 'root' $x");
    std::fs::create_dir(&root).unwrap();
    let command = "printf '%s\\n' \"it's  $((1 + 2))\" | tr a-z A-Z";
    write_doc(&root, command);
    let apply = |format: &str| {
        clada_at(&root, home.path())
            .args([
                "apply",
                "--no-git",
                "--no-prompt",
                "--format",
                format,
                "doc.md",
            ])
            .output()
            .unwrap()
    };
    let out = apply("json");
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = &report["blocks"][0]["tasks"][0]["error"];
    // The hint is the command to paste; the message ends with it too.
    let hint = error["hint"].as_str().unwrap();
    assert!(hint.starts_with("clada allow -C "), "{hint}");
    assert!(error["message"].as_str().unwrap().ends_with(hint));
    let (_, text) = {
        let out = apply("text");
        (
            out.status,
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert!(text.contains(&format!("\n  hint: {hint}\n")), "{text}");
    let canonical = std::fs::canonicalize(&root).unwrap();
    assert!(
        hint.contains(&*shell_words::quote(&canonical.display().to_string())),
        "{hint}"
    );
    // Pasted into a shell, from elsewhere.
    let sh = Command::new("sh")
        .arg("-c")
        .arg(hint)
        .env(
            "PATH",
            format!(
                "{}:{}",
                Path::new(env!("CARGO_BIN_EXE_clada"))
                    .parent()
                    .unwrap()
                    .display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_RUNTIME_DIR", home.path().join("run"))
        .output()
        .unwrap();
    assert!(sh.status.success(), "{sh:?}");
    assert_eq!(
        String::from_utf8_lossy(&sh.stdout),
        format!("Approved: {command}\n")
    );
    let out = apply("text");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("[task-1:exec] IT'S  3"), "{text}");
}

#[test]
fn the_prompt_shows_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = dir.path();
    // An escape sequence that would clear the line and show another
    // command in its place.
    write_doc(root, "rm -rf ./x \x1b[2K\recho harmless | cat");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clada"));
    cmd.args(["apply", "--no-git", "doc.md"])
        .current_dir(root)
        .env("NO_COLOR", "1");
    with_home(&mut cmd, home.path());
    let mut p = rexpect::session::spawn_command(cmd, Some(10_000)).unwrap();
    let shown = p.exp_string("Run it? [o]nce").unwrap();
    assert!(
        shown.contains("rm -rf ./x \\x1b[2K\\x0decho harmless | cat"),
        "{shown:?}"
    );
    assert!(!shown.contains('\x1b'), "{shown:?}");
    p.send_line("n").unwrap();
    let rest = p.exp_eof().unwrap();
    assert!(rest.contains("declined"), "{rest}");
    assert!(!approvals(home.path()).exists());
}
