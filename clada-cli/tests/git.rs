//! Commits before and after a run, in temporary repositories.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["config", "user.name", "Someone"]);
    git(p, &["config", "user.email", "someone@example.com"]);
    std::fs::write(p.join("app.txt"), "one\ntwo\n").unwrap();
    std::fs::write(p.join(".gitignore"), "*.log\n").unwrap();
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "initial"]);
    dir
}

const EDIT: &str = "<<<<<<< SEARCH path=\"app.txt\"\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n";

fn apply(dir: &Path, extra: &[&str]) -> serde_json::Value {
    // The document lives outside the repository, so that it is no change.
    let elsewhere = tempfile::tempdir().unwrap();
    let doc = elsewhere.path().join("doc.md");
    std::fs::write(&doc, EDIT).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clada"))
        .args([
            "apply",
            "--format",
            "json",
            "--git-author",
            "Test Bot <bot@example.com>",
        ])
        .args(extra)
        .arg(&doc)
        .current_dir(dir)
        .output()
        .unwrap();
    let mut json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["exit"] = out.status.code().into();
    json
}

fn log(dir: &Path) -> Vec<String> {
    git(dir, &["log", "--format=%an <%ae>|%cn <%ce>|%s"])
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_dirty_file_the_run_edits_gets_a_commit_before_and_one_after() {
    let dir = repo();
    let p = dir.path();
    std::fs::write(p.join("app.txt"), "one\ntwo\nthree\n").unwrap();
    let report = apply(p, &[]);
    assert_eq!(report["exit"], 0, "{report:#}");
    let log = log(p);
    assert_eq!(log.len(), 3, "{log:?}");
    let bot = "Test Bot <bot@example.com>";
    assert_eq!(log[0], format!("{bot}|{bot}|clada: edit app.txt (1 task)"));
    assert_eq!(
        log[1],
        format!("{bot}|{bot}|clada: save uncommitted changes of app.txt before applying")
    );
    // The commit before holds the file's uncommitted change.
    assert_eq!(git(p, &["show", "HEAD~1:app.txt"]), "one\ntwo\nthree");
    // The commit after holds the tasks' changes.
    assert_eq!(git(p, &["show", "HEAD:app.txt"]), "one\nTWO\nthree");
    assert_eq!(report["git"]["before"], git(p, &["rev-parse", "HEAD~1"]));
    assert_eq!(report["git"]["after"], git(p, &["rev-parse", "HEAD"]));
    assert_eq!(git(p, &["status", "--porcelain"]), "");
}

#[test]
fn never_commits_an_untracked_secret_an_ignored_file_or_a_dirty_file_it_did_not_change() {
    let dir = repo();
    let p = dir.path();
    std::fs::write(p.join("lib.txt"), "lib\n").unwrap();
    git(p, &["add", "lib.txt"]);
    git(p, &["commit", "-q", "-m", "lib"]);
    std::fs::write(p.join(".env"), "API_KEY=sk-secret\n").unwrap();
    std::fs::write(p.join("debug.log"), "ignored\n").unwrap();
    std::fs::write(p.join("lib.txt"), "my own work in progress\n").unwrap();
    let report = apply(p, &[]);
    assert_eq!(report["exit"], 0, "{report:#}");
    // Only the commit after: the edited file had nothing uncommitted.
    assert_eq!(report["git"]["before"], serde_json::Value::Null);
    assert_eq!(log(p).len(), 3);
    let all = git(p, &["log", "--all", "--name-only", "--format="]);
    assert!(!all.contains(".env"), "{all}");
    assert!(!all.contains("debug.log"), "{all}");
    assert_eq!(
        git(p, &["show", "HEAD", "--name-only", "--format="]),
        "app.txt"
    );
    // What the run did not write is as it was, uncommitted.
    assert_eq!(git(p, &["status", "--porcelain"]), "M lib.txt\n?? .env");
    assert_eq!(
        std::fs::read_to_string(p.join("lib.txt")).unwrap(),
        "my own work in progress\n"
    );
}

#[test]
fn a_file_the_run_writes_is_committed_unless_ignored_and_an_untracked_one_it_overwrites_is_kept_by_undo()
 {
    let dir = repo();
    let p = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(p.join("notes.txt"), "untracked, about to be replaced\n").unwrap();
    let doc = "<<<<<<< WRITE path=\"notes.txt\"\nnew\n>>>>>>> END\n\
               <<<<<<< WRITE path=\"out.log\"\nlog\n>>>>>>> END\n\
               <<<<<<< WRITE path=\"src/new.txt\"\nmade\n>>>>>>> END\n";
    let out = clada_in(p, home.path(), &["apply", "--git-author", "bot"], Some(doc));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // No commit before: the untracked file it replaced never enters history.
    assert_eq!(log(p).len(), 2);
    assert_eq!(git(p, &["show", "HEAD:notes.txt"]), "new");
    assert_eq!(git(p, &["show", "HEAD:src/new.txt"]), "made");
    let files = git(p, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!files.contains("out.log"), "{files}");
    assert_eq!(
        log(p)[0],
        "bot <bot@localhost>|bot <bot@localhost>|clada: write notes.txt, create out.log, \
         create src/new.txt (3 tasks)"
    );
    // Undo puts it back as it was, untracked, and removes what was made.
    let out = clada_in(p, home.path(), &["undo"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(p.join("notes.txt")).unwrap(),
        "untracked, about to be replaced\n"
    );
    assert!(!p.join("src/new.txt").exists());
    assert_eq!(git(p, &["status", "--porcelain"]), "?? notes.txt");
    let all = git(p, &["log", "--all", "--format=", "-p"]);
    assert!(!all.contains("untracked, about to be replaced"), "{all}");
}

#[test]
fn a_clean_tree_gets_only_the_commit_after() {
    let dir = repo();
    let report = apply(dir.path(), &[]);
    assert_eq!(report["exit"], 0);
    assert_eq!(report["git"]["before"], serde_json::Value::Null);
    assert_eq!(log(dir.path()).len(), 2);
}

#[test]
fn no_change_no_commit() {
    let dir = repo();
    std::fs::write(dir.path().join("app.txt"), "something else\n").unwrap();
    let report = apply(dir.path(), &[]);
    assert_eq!(report["exit"], 1, "the edit fails");
    assert_ne!(report["git"]["before"], serde_json::Value::Null);
    assert_eq!(report["git"]["after"], serde_json::Value::Null);
    assert_eq!(log(dir.path()).len(), 2);
}

#[test]
fn no_git_makes_no_commit() {
    let dir = repo();
    std::fs::write(dir.path().join("new.txt"), "new\n").unwrap();
    let report = apply(dir.path(), &["--no-git"]);
    assert_eq!(report["exit"], 0);
    assert_eq!(log(dir.path()).len(), 1);
}

#[test]
fn outside_a_work_tree_there_is_no_git() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.txt"), "one\ntwo\n").unwrap();
    let report = apply(dir.path(), &[]);
    assert_eq!(report["exit"], 0);
    assert_eq!(report["git"]["before"], serde_json::Value::Null);
    assert!(
        report["git"]["note"]
            .as_str()
            .unwrap()
            .contains("not in a git work tree")
    );
    assert!(!dir.path().join(".git").exists());
}

#[test]
fn a_failing_commit_before_runs_nothing() {
    let dir = repo();
    let p = dir.path();
    // Uncommitted, so the commit before has something to save.
    std::fs::write(p.join("app.txt"), "one\ntwo\n\n").unwrap();
    std::fs::write(p.join(".git/index.lock"), "").unwrap();
    let report = apply(p, &[]);
    assert_eq!(report["exit"], 1);
    assert_eq!(report["error"]["type"], "git_operation_failed");
    assert!(
        report["git"]["error"].as_str().unwrap().contains("locked"),
        "{report:#}"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("app.txt")).unwrap(),
        "one\ntwo\n\n",
        "nothing ran"
    );
    assert_eq!(report["blocks"][0]["tasks"][0]["status"], "skipped");
}

#[test]
fn a_bare_name_is_an_author_too() {
    let dir = repo();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("doc.md"), EDIT).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clada"))
        .args(["apply", "--git-author", "robot"])
        .arg(elsewhere.path().join("doc.md"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let log = log(dir.path());
    assert!(
        log[0].starts_with("robot <robot@localhost>|robot <robot@localhost>|"),
        "{log:?}"
    );
}

#[test]
fn temporary_files_are_never_committed() {
    let dir = repo();
    let p = dir.path();
    // Left by a run killed mid-write, and not in any journal.
    std::fs::write(p.join(".app.txt.clada-4242-7.tmp"), "half").unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    std::fs::write(p.join("sub/.x.clada-1-1.tmp"), "half").unwrap();
    let report = apply(p, &[]);
    assert_eq!(report["ok"], true, "{report}");
    let files = git(p, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(files.contains("app.txt"), "{files}");
    assert!(!files.contains(".clada-"), "{files}");
}

#[test]
fn a_dry_run_commits_nothing_and_leaves_no_lock() {
    let dir = repo();
    let p = dir.path();
    std::fs::write(p.join("dirty.txt"), "uncommitted\n").unwrap();
    let before = log(p);
    let json = apply(p, &["--dry-run"]);
    assert_eq!(json["exit"], 0, "{json}");
    assert_eq!(json["dry_run"], true);
    assert_eq!(json["git"]["before"], serde_json::Value::Null);
    assert_eq!(json["git"]["after"], serde_json::Value::Null);
    assert_eq!(log(p), before);
    assert_eq!(
        std::fs::read_to_string(p.join("app.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert!(
        !p.join(".git/clada.lock").exists(),
        "a dry run took the lock"
    );
    let changes = json["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{json}");
    assert_eq!(changes[0]["path"], "app.txt");
    assert_eq!(changes[0]["change"], "modified");
    let diff = changes[0]["diff"].as_str().unwrap();
    assert!(diff.contains("\n-two\n+TWO\n"), "{diff}");
}

#[test]
fn an_atomic_run_commits_what_it_kept() {
    let dir = repo();
    let json = apply(dir.path(), &["--atomic"]);
    assert_eq!(json["exit"], 0, "{json}");
    assert!(json["git"]["after"].is_string(), "{json}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.txt")).unwrap(),
        "one\nTWO\n"
    );
}

#[test]
fn the_text_report_says_in_words_what_was_committed() {
    let dir = repo();
    let p = dir.path();
    std::fs::write(p.join("app.txt"), "one\ntwo\nthree\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let doc = elsewhere.path().join("doc.md");
    std::fs::write(&doc, EDIT).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clada"))
        .arg("apply")
        .arg(&doc)
        .current_dir(p)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let head = git(p, &["rev-parse", "--short=7", "HEAD"]);
    let before = git(p, &["rev-parse", "--short=7", "HEAD~1"]);
    let line = format!(
        "Git: committed your uncommitted changes of the files it changes as {before} before applying; committed the changes as {head}\n"
    );
    assert!(text.contains(&line), "{text}");
    // A clean tree: nothing before.
    std::fs::write(
        &doc,
        EDIT.replace("two", "TWO").replace("\nTWO\n>", "\n2\n>"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clada"))
        .arg("apply")
        .arg(&doc)
        .current_dir(p)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let head = git(p, &["rev-parse", "--short=7", "HEAD"]);
    assert!(
        text.contains(&format!(
            "Git: the files it changes had no uncommitted changes; committed the changes as {head}\n"
        )),
        "{text}"
    );
}

#[test]
fn what_a_command_changed_is_committed_in_tracked_files_and_new_ones_only_when_asked() {
    for new_files in [false, true] {
        let dir = repo();
        let p = dir.path();
        std::fs::write(p.join(".env"), "API_KEY=sk-secret\n").unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let doc = elsewhere.path().join("doc.md");
        std::fs::write(
            &doc,
            "<<<<<<< RUN\necho three >> app.txt && echo made > made.txt\n>>>>>>> END\n",
        )
        .unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_clada"));
        cmd.args([
            "apply",
            "--allow-any-command",
            "--sandbox=off",
            "--git-author",
            "bot",
        ]);
        if new_files {
            cmd.arg("--commit-new-files");
        }
        let out = cmd.arg(&doc).current_dir(p).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let files = git(p, &["show", "HEAD", "--name-only", "--format="]);
        let want = if new_files {
            "app.txt\nmade.txt"
        } else {
            "app.txt"
        };
        assert_eq!(files, want);
        let tail = if new_files {
            ", made.txt (1 task)"
        } else {
            " (1 task)"
        };
        let want = format!(
            "clada: run `echo three >> app.txt && echo made > made.txt`; commands changed app.txt{tail}"
        );
        assert!(log(p)[0].ends_with(&want), "{:?}", log(p));
        let all = git(p, &["log", "--all", "--name-only", "--format="]);
        assert!(!all.contains(".env"), "{all}");
    }
}

/// `clada ARGS` in `dir`, with clada's directories in `home`.
fn clada_in(dir: &Path, home: &Path, args: &[&str], doc: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clada"));
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"));
    let elsewhere = tempfile::tempdir().unwrap();
    if let Some(doc) = doc {
        let at = elsewhere.path().join("doc.md");
        std::fs::write(&at, doc).unwrap();
        cmd.arg(at);
    }
    cmd.output().unwrap()
}

#[test]
fn undo_reverts_the_runs_commit_and_is_refused_after_a_later_commit_of_the_same_file() {
    let dir = repo();
    let p = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(p.join("app.txt"), "one\ntwo\nmine\n").unwrap();
    let out = clada_in(p, home.path(), &["apply", "--format", "json"], Some(EDIT));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["undo"]
            .as_str()
            .unwrap()
            .starts_with("clada undo -C "),
        "{report:#}"
    );
    let out = clada_in(p, home.path(), &["undo"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Undone: app.txt"));
    // The user's own change, committed before the run, stays.
    assert_eq!(
        std::fs::read_to_string(p.join("app.txt")).unwrap(),
        "one\ntwo\nmine\n"
    );
    assert_eq!(
        log(p)[0],
        "clada <clada@localhost>|clada <clada@localhost>|clada: undo \"clada: edit app.txt (1 task)\""
    );
    assert_eq!(git(p, &["status", "--porcelain"]), "");
    // One run back: nothing more.
    let out = clada_in(p, home.path(), &["undo"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to undo"));

    // A later commit of the same file: refused, nothing changed.
    clada_in(p, home.path(), &["apply"], Some(EDIT));
    std::fs::write(p.join("app.txt"), "later\n").unwrap();
    git(p, &["commit", "-qam", "later work"]);
    let out = clada_in(p, home.path(), &["undo", "--format", "json"], None);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], false);
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"later work\") changed app.txt after the run"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("app.txt")).unwrap(),
        "later\n"
    );
}

#[test]
fn undo_without_git_puts_back_what_the_run_replaced_unless_it_changed_since() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(p.join("app.txt"), "one\ntwo\n").unwrap();
    std::fs::create_dir(p.join("old")).unwrap();
    std::fs::write(p.join("old/x.txt"), "x\n").unwrap();
    let doc = format!(
        "{EDIT}<<<<<<< WRITE path=\"new/deep/n.txt\"\nn\n>>>>>>> END\n\
         <<<<<<< REMOVE path=\"old\"\n>>>>>>> END\n"
    );
    let out = clada_in(p, home.path(), &["apply"], Some(&doc));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("Undo: `clada undo` on this root takes this run back")
    );
    let out = clada_in(p, home.path(), &["undo"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(p.join("app.txt")).unwrap(),
        "one\ntwo\n"
    );
    assert_eq!(std::fs::read_to_string(p.join("old/x.txt")).unwrap(), "x\n");
    assert!(!p.join("new").exists());
    // Changed after the run: refused, nothing touched.
    clada_in(p, home.path(), &["apply"], Some(&doc));
    std::fs::write(p.join("new/deep/n.txt"), "mine\n").unwrap();
    let out = clada_in(p, home.path(), &["undo"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("new/deep/n.txt changed since the run"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(p.join("app.txt")).unwrap(),
        "one\nTWO\n"
    );
}

#[test]
fn undo_never_writes_through_a_link_planted_after_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let p = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(p.join("src")).unwrap();
    std::fs::write(p.join("src/a.txt"), "a\n").unwrap();
    let doc = "<<<<<<< WRITE path=\"src/a.txt\"\nb\n>>>>>>> END\n";
    let out = clada_in(p, home.path(), &["apply"], Some(doc));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The directory swapped for a link to elsewhere, holding the file as
    // the run left it: undo must not write there.
    std::fs::rename(p.join("src"), outside.path().join("src")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("src"), p.join("src")).unwrap();
    let out = clada_in(p, home.path(), &["undo"], None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("src/a.txt")).unwrap(),
        "b\n"
    );
}

#[test]
fn a_watch_commits_each_unit_with_only_what_it_wrote() {
    let dir = repo();
    let p = dir.path();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(p.join(".env"), "API_KEY=sk-secret\n").unwrap();
    let replies = home.path().join("replies.md");
    std::fs::write(&replies, "Replies go here.\n").unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_clada"))
        .args(["watch", "--format", "jsonl"])
        .arg(&replies)
        .arg("-C")
        .arg(p)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Given time to start following the file.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut text = std::fs::read_to_string(&replies).unwrap();
    text.push_str("<<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n");
    std::fs::write(&replies, text).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while log(p).len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let _ = child.wait_with_output();
    assert_eq!(
        git(p, &["show", "HEAD", "--name-only", "--format=%s"]),
        "clada: create b.txt (1 task)\n\nb.txt"
    );
    let all = git(p, &["log", "--all", "--name-only", "--format="]);
    assert!(!all.contains(".env"), "{all}");
}
