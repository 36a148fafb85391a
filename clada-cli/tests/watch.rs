//! `clada watch` run twice, and with commands that write the file it
//! follows (PROTOCOL §11.6).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{eventually, jsonl};

/// A watched file beside a root, and clada's directories in a home of
/// their own (the test process's environment is never changed).
struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    replies: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let (root, home, replies) = (
            dir.path().join("root"),
            dir.path().join("home"),
            dir.path().join("replies.md"),
        );
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(&replies, "Replies go here.\n").unwrap();
        Scene {
            _dir: dir,
            root,
            home,
            replies,
        }
    }

    fn clada(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_clada"));
        cmd.env("HOME", &self.home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_RUNTIME_DIR");
        cmd
    }

    fn watch(&self) -> Child {
        self.watch_with(&[])
    }

    /// A watch with these flags too (`--dialect codex`).
    fn watch_with(&self, flags: &[&str]) -> Child {
        self.clada()
            .args(["watch", "--no-git", "--format", "jsonl"])
            .args(flags)
            .arg(&self.replies)
            .arg("-C")
            .arg(&self.root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn append(&self, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.replies)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    fn read(&self, p: &str) -> String {
        std::fs::read_to_string(self.root.join(p)).unwrap_or_default()
    }
}

/// Stops a watch with Ctrl-C; its JSON Lines events.
fn stop(child: Child) -> Vec<Value> {
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    jsonl(&out.stdout)
}

fn tasks(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["event"] == "task").collect()
}

#[test]
fn two_watches_of_one_file_apply_each_unit_once() {
    let scene = Scene::new();
    let (a, b) = (scene.watch(), scene.watch());
    for n in 1..=3 {
        scene.append(&format!(
            "<<<<<<< WRITE path=\"a.txt\" append=\"true\"\n{n}\n>>>>>>> END\n"
        ));
        eventually("a unit was not applied", || {
            scene.read("a.txt").lines().count() >= n
        });
    }
    // Long enough for the other watch to see the changes too.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(scene.read("a.txt"), "1\n2\n3\n", "a unit was applied twice");
    let (a, b) = (stop(a), stop(b));
    assert_eq!(tasks(&a).len() + tasks(&b).len(), 3, "{a:?}\n{b:?}");
}

/// A codex patch pasted into the watched file is not applied (the watch
/// reads clada's format) but said, once, as an error naming the dialect
/// that reads it; a unit pasted after it applies.
#[test]
fn a_patch_in_another_format_is_said_once_never_applied() {
    let scene = Scene::new();
    let watch = scene.watch();
    scene.append("*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n");
    std::thread::sleep(Duration::from_millis(500));
    scene.append("<<<<<<< WRITE path=\"a.txt\"\na\n>>>>>>> END\n");
    eventually("the unit after the patch was not applied", || {
        scene.read("a.txt") == "a\n"
    });
    std::thread::sleep(Duration::from_millis(300));
    let events = stop(watch);
    assert!(!scene.root.join("b.txt").exists());
    let foreign: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "foreign_format")
        .collect();
    assert_eq!(foreign.len(), 1, "{events:#?}");
    let help = foreign[0]["help"].as_str().unwrap();
    // What to send next in a stream: `auto` would read clada's again.
    assert!(help.contains("--stream --dialect codex"), "{help}");
    assert!(
        events.iter().all(|e| e["kind"] != "no_tasks"),
        "{events:#?}"
    );
}

/// `watch --dialect codex`: each patch pasted is applied once, at its
/// `*** End Patch`, even a last line written without its line feed; a
/// clada block pasted there is another format, said and never applied.
#[test]
fn a_watch_in_another_dialect_applies_its_units_once() {
    let scene = Scene::new();
    let watch = scene.watch_with(&["--dialect", "codex"]);
    scene.append("*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n");
    eventually("the first patch was not applied", || {
        scene.read("a.txt") == "a\n"
    });
    scene.append("Again:\n*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch");
    eventually(
        "the patch ending without a line feed was not applied",
        || scene.read("b.txt") == "b\n",
    );
    scene.append("\n<<<<<<< WRITE path=\"c.txt\"\nc\n>>>>>>> END\n");
    std::thread::sleep(Duration::from_millis(500));
    scene.append("*** Begin Patch\n*** Add File: d.txt\n+d\n*** End Patch\n");
    eventually("the patch after the clada block was not applied", || {
        scene.read("d.txt") == "d\n"
    });
    std::thread::sleep(Duration::from_millis(300));
    let events = stop(watch);
    assert!(!scene.root.join("c.txt").exists());
    assert_eq!(tasks(&events).len(), 3, "{events:#?}");
    let foreign = events
        .iter()
        .filter(|e| e["kind"] == "foreign_format")
        .count();
    assert_eq!(foreign, 1, "{events:#?}");
}

/// In another dialect a unit comes with the prose before it: the same
/// aider block pasted again after other words is still a repeat, said
/// once, never run twice.
#[test]
fn a_block_of_another_dialect_pasted_again_after_other_words_is_a_repeat() {
    let scene = Scene::new();
    let watch = scene.watch_with(&["--dialect", "aider"]);
    let block = "log.txt\n<<<<<<< SEARCH\n=======\nline\n>>>>>>> REPLACE\n";
    scene.append(&format!("First:\n{block}"));
    eventually("the block was not applied", || {
        scene.read("log.txt") == "line\n"
    });
    scene.append(&format!("And once more, as I said:\n{block}"));
    std::thread::sleep(Duration::from_millis(800));
    let events = stop(watch);
    assert_eq!(scene.read("log.txt"), "line\n");
    let repeats = events
        .iter()
        .filter(|e| e["kind"] == "repeated_unit")
        .count();
    assert_eq!(repeats, 1, "{events:#?}");
}

/// The same unit pasted again further down (a resend) never runs twice and
/// is said once, `repeated_unit` with the line it ran from; the file saved
/// whole again (a new inode, as editors write) and the watch started
/// again say nothing new.
#[test]
fn a_unit_pasted_again_is_said_once_never_run_twice() {
    let scene = Scene::new();
    let unit = "<<<<<<< WRITE path=\"a.txt\" append=\"true\"\nx\n>>>>>>> END\n";
    let watch = scene.watch();
    scene.append(unit);
    eventually("the unit was not applied", || scene.read("a.txt") == "x\n");
    scene.append("Sent again:\n");
    scene.append(unit);
    scene.append("<<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n");
    eventually("the unit after the resend was not applied", || {
        scene.read("b.txt") == "b\n"
    });
    // Saved whole, as an editor does: read again from its start.
    let text = std::fs::read_to_string(&scene.replies).unwrap();
    let saved = scene.replies.with_extension("tmp");
    std::fs::write(&saved, &text).unwrap();
    std::fs::rename(&saved, &scene.replies).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let events = stop(watch);
    assert_eq!(scene.read("a.txt"), "x\n", "the resend was applied");
    let repeats: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "repeated_unit")
        .collect();
    assert_eq!(repeats.len(), 1, "{events:#?}");
    assert_eq!(repeats[0]["code"], "already_applied", "{events:#?}");
    let message = repeats[0]["message"].as_str().unwrap();
    assert!(message.contains("at line 2 of"), "{message}");
    assert_eq!(repeats[0]["start"]["line"], 6, "{events:#?}");
    // Its task is reported not run, never to be sent again.
    let statuses: Vec<(&Value, &Value)> = tasks(&events)
        .iter()
        .map(|t| (&t["status"], &t["error"]["type"]))
        .collect();
    assert_eq!(
        statuses,
        [
            (&json!("success"), &Value::Null),
            (&json!("failed"), &json!("already_applied")),
            (&json!("success"), &Value::Null),
        ],
        "{events:#?}"
    );
    // Started again: everything is known, nothing is said or run.
    let watch = scene.watch();
    std::thread::sleep(Duration::from_millis(600));
    let events = stop(watch);
    assert!(
        events.iter().all(|e| e["event"] == "summary"),
        "{events:#?}"
    );
    assert_eq!(scene.read("a.txt"), "x\n");
}

/// A unit whose first run took no effect (its edit failed: nothing
/// applied, no command run) runs again when pasted again: running it twice
/// cannot apply anything twice, and the file may have been put right.
#[test]
fn a_failed_unit_pasted_again_runs_again() {
    let scene = Scene::new();
    std::fs::write(scene.root.join("a.txt"), "one\n").unwrap();
    let unit = "<<<<<<< SEARCH path=\"a.txt\"\ntwo\n=======\n2\n>>>>>>> REPLACE\n";
    let watch = scene.watch();
    scene.append(unit);
    std::thread::sleep(Duration::from_millis(600));
    std::fs::write(scene.root.join("a.txt"), "two\n").unwrap();
    scene.append("Again, now that the file holds it:\n");
    scene.append(unit);
    eventually("the unit pasted again did not run", || {
        scene.read("a.txt") == "2\n"
    });
    let events = stop(watch);
    let statuses: Vec<&Value> = tasks(&events).iter().map(|t| &t["status"]).collect();
    assert_eq!(
        statuses,
        [&json!("failed"), &json!("success")],
        "{events:#?}"
    );
    assert!(
        events.iter().all(|e| e["kind"] != "repeated_unit"),
        "{events:#?}"
    );
}

#[test]
fn units_a_command_writes_into_the_watched_file_are_refused() {
    let scene = Scene::new();
    // An approved command that appends a new unit (a new number each
    // time) which runs the command again: without end, were it applied.
    std::fs::write(
        scene.root.join("again.sh"),
        "n=$(wc -l < ran.txt 2>/dev/null || echo 0)\necho ran >> ran.txt\n\
         printf '<<<<<<< TASKS\\n<<<<<<< WRITE path=\"n.txt\"\\n%s\\n>>>>>>> END\\n<<<<<<< RUN\\nsh again.sh\\n>>>>>>> END\\n>>>>>>> TASKS\\n' \"$n\" >> ../replies.md\n",
    )
    .unwrap();
    let allowed = scene
        .clada()
        .args(["allow", "-C"])
        .arg(&scene.root)
        .arg("sh again.sh")
        .output()
        .unwrap();
    assert!(allowed.status.success(), "{allowed:?}");
    let watch = scene.watch();
    scene.append("<<<<<<< RUN\nsh again.sh\n>>>>>>> END\n");
    eventually("the command did not run", || {
        !scene.read("ran.txt").is_empty()
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        scene.read("ran.txt"),
        "ran\n",
        "what the command wrote was applied"
    );
    assert!(!scene.root.join("n.txt").exists());
    // Refused and said so, once; the next watch does not apply it either.
    let events = stop(watch);
    let refused: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "diagnostic" && e["kind"] == "written_during_command")
        .collect();
    assert_eq!(refused.len(), 1, "{events:?}");
    assert_eq!(refused[0]["code"], "command_not_allowed");
    let watch = scene.watch();
    std::thread::sleep(Duration::from_millis(800));
    let events = stop(watch);
    assert!(tasks(&events).is_empty(), "{events:?}");
    assert_eq!(scene.read("ran.txt"), "ran\n");
    // A unit that is not UTF-8 is refused where it is, never written.
    let watch = scene.watch();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&scene.replies)
        .unwrap()
        .write_all(b"<<<<<<< WRITE path=\"u.txt\"\ncaf\xe9\n>>>>>>> END\n")
        .unwrap();
    // Remembered: the command's unit, the one it wrote, and this one.
    eventually("the unit was not reported", || applied(&scene.home) == 3);
    let events = stop(watch);
    assert!(!scene.root.join("u.txt").exists());
    assert!(
        events.iter().any(|e| e["code"] == "invalid_utf8"),
        "{events:?}"
    );
}

/// How many units the watches of the scene remember.
fn applied(home: &Path) -> usize {
    let dir = home.join(".local/state/clada/watch");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".applied"))
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .lines()
                .count()
        })
        .sum()
}
