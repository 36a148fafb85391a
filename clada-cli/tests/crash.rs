//! Crash safety: `clada apply` killed with SIGKILL at random moments leaves
//! every file with its old content or its new content, never a mix; the
//! next run removes the temporary files (and directories set aside) a
//! killed one left.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 150;

fn old(i: usize) -> String {
    format!("header {i}\n{}", format!("old {i}\n").repeat(4096))
}

fn new(i: usize) -> String {
    format!("new content of file {i}\n").repeat(2048)
}

fn edited(i: usize) -> String {
    old(i).replacen(&format!("header {i}\n"), &format!("edited header {i}\n"), 1)
}

/// A document that rewrites half the files and edits the other half.
fn document() -> String {
    let mut doc = String::new();
    for i in 0..FILES {
        if i % 2 == 0 {
            let _ = write!(
                doc,
                "<<<<<<< WRITE path=\"f{i}.txt\"\n{}>>>>>>> END\n",
                new(i)
            );
        } else {
            let _ = write!(
                doc,
                "<<<<<<< SEARCH path=\"f{i}.txt\"\nheader {i}\n=======\nedited header {i}\n>>>>>>> REPLACE\n"
            );
        }
    }
    doc
}

fn setup(dir: &Path) {
    for i in 0..FILES {
        std::fs::write(dir.join(format!("f{i}.txt")), old(i)).unwrap();
    }
}

/// Checks every file; returns how many hold their new content.
fn check(dir: &Path) -> usize {
    let mut new_count = 0;
    for i in 0..FILES {
        let text = std::fs::read_to_string(dir.join(format!("f{i}.txt"))).unwrap();
        let want_new = if i % 2 == 0 { new(i) } else { edited(i) };
        if text == want_new {
            new_count += 1;
        } else {
            assert!(
                text == old(i),
                "f{i}.txt is neither old nor new ({} bytes)",
                text.len()
            );
        }
    }
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let known = name.starts_with('f') && name.ends_with(".txt");
        assert!(
            known || clada_markers_is_temp(&name),
            "unexpected file {name}"
        );
    }
    new_count
}

/// Temporary files of an interrupted run may stay behind; they are named
/// `.NAME.clada-PID-N.tmp`.
fn clada_markers_is_temp(name: &str) -> bool {
    name.starts_with('.') && name.contains(".clada-") && name.ends_with(".tmp")
}

fn run(dir: &Path, doc: &Path) -> std::process::Child {
    // clada's runtime directory (default lock and journal) beside the
    // trees, given in the child's environment only.
    let home = dir.parent().unwrap_or(dir).join("home");
    Command::new(env!("CARGO_BIN_EXE_clada"))
        .args(["apply", "--no-git", "-C"])
        .arg(dir)
        .arg(doc)
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_killed_apply_leaves_every_file_old_or_new() {
    let scratch = tempfile::tempdir().unwrap();
    let doc = scratch.path().join("doc.md");
    std::fs::write(&doc, document()).unwrap();

    // A full run first: it must finish with every file new, and says how
    // long a run takes.
    let full = scratch.path().join("full");
    std::fs::create_dir(&full).unwrap();
    setup(&full);
    let started = Instant::now();
    let status = run(&full, &doc).wait().unwrap();
    let took = started.elapsed();
    assert!(status.success());
    assert_eq!(check(&full), FILES);

    // Then kill runs at random moments within that time: at least 30, and
    // on until one lands in the middle of the writes (files are written
    // together at the end of the run, so that window is short, and on a
    // loaded machine its place moves).
    let mut seed = u64::from(std::process::id()) ^ 0x9e37_79b9_7f4a_7c15;
    let mut partial = 0;
    let mut rounds = 0;
    while rounds < 30 || (partial == 0 && rounds < 300) {
        let round = rounds;
        rounds += 1;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let dir = scratch.path().join(format!("round{round}"));
        std::fs::create_dir(&dir).unwrap();
        setup(&dir);
        let mut child = run(&dir, &doc);
        let delay = Duration::from_micros(seed % (took.as_micros() as u64).max(1));
        std::thread::sleep(delay);
        child.kill().unwrap();
        child.wait().unwrap();
        let done = check(&dir);
        if 0 < done && done < FILES {
            partial += 1;
        }
    }
    // The kills did land in the middle of runs.
    assert!(partial > 0, "no kill interrupted a run half way");
    // The next run on each tree removes what the killed one left, and
    // finishes the edits.
    let mut left_before = 0;
    for round in 0..rounds {
        let dir = scratch.path().join(format!("round{round}"));
        left_before += temp_files(&dir);
        // Edits already made fail as mismatches now; that is fine.
        let _ = run(&dir, &doc).wait().unwrap();
        assert_eq!(temp_files(&dir), 0, "round {round} kept temporary files");
    }
    eprintln!("{left_before} temporary files left by killed runs, all removed");
}

fn temp_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            clada_markers_is_temp(&name.to_string_lossy())
        })
        .count()
}

#[test]
fn the_next_run_removes_a_directory_a_killed_run_set_aside() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    std::fs::create_dir_all(root.join("d/sub")).unwrap();
    std::fs::write(root.join("d/sub/x.txt"), "old").unwrap();
    // The unit removes `d` (set aside under a temporary name until the
    // unit ends); its command kills clada before the unit ends.
    let doc = scratch.path().join("doc.md");
    std::fs::write(
        &doc,
        "<<<<<<< TASKS\n<<<<<<< REMOVE path=\"d\"\n>>>>>>> END\n\
         <<<<<<< RUN\nkill -9 $PPID\n>>>>>>> END\n>>>>>>> TASKS\n",
    )
    .unwrap();
    let home = scratch.path().join("home");
    let apply = |doc: &Path, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_clada"))
            .args(["apply", "--no-git", "--atomic"])
            .args(extra)
            .arg("-C")
            .arg(&root)
            .arg(doc)
            .env("HOME", &home)
            .env("XDG_RUNTIME_DIR", home.join("run"))
            .env("XDG_CONFIG_HOME", home.join("config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
    };
    // Unconfined: the sandbox may one day keep a command from signalling
    // clada.
    let killed = apply(&doc, &["--allow-any-command", "--sandbox=off"]);
    assert_eq!(killed.code(), None, "clada was not killed: {killed:?}");
    let left: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        left.len() == 1 && clada_markers_is_temp(&left[0]),
        "the killed run left {left:?}"
    );
    // Any next run on the root removes it, with all it holds.
    let next = scratch.path().join("next.md");
    std::fs::write(&next, "<<<<<<< WRITE path=\"a.txt\"\na\n>>>>>>> END\n").unwrap();
    assert!(apply(&next, &[]).success());
    let names: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.txt"]);
}
