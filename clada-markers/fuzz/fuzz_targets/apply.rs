//! Applies arbitrary documents to a small scratch tree (only built-in
//! commands run, nothing is approved),
//! checking the engine's promises: no panic, nothing written, moved or
//! removed outside the root, no link followed out of it, and no
//! temporary file left behind; and that a run reading the document a
//! window at a time (`Apply::run_units`) does what a whole one does.

#![no_main]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use clada_markers::engine::Observer;
use clada_markers::report::BlockReport;
use clada_markers::syntax::units;
use clada_markers::{Apply, Listener, ParseOptions, decode, parse};
use libfuzzer_sys::fuzz_target;

static RUN: AtomicU64 = AtomicU64::new(0);

/// Every entry below `dir`, with file contents and link targets.
fn snapshot(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let meta = std::fs::symlink_metadata(&p).expect("metadata");
        let what = if meta.file_type().is_symlink() {
            format!("-> {:?}", std::fs::read_link(&p).expect("link"))
        } else if meta.is_dir() {
            snapshot(&p, out);
            "dir".to_owned()
        } else {
            format!("{:?}", std::fs::read(&p).expect("file"))
        };
        out.push((p.display().to_string(), what));
    }
}

fn temp_files(dir: &Path, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // clada's temporary files: `.NAME.clada-PID-N.tmp`.
        if name.starts_with('.') && name.ends_with(".tmp") && name.contains(".clada-") {
            found.push(e.path().display().to_string());
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            temp_files(&e.path(), found);
        }
    }
}

/// Keeps the reports a run hands out.
#[derive(Default)]
struct Kept(Vec<BlockReport>);

impl Observer for Kept {}

impl Listener for Kept {
    fn block(&mut self, report: BlockReport) {
        self.0.push(report);
    }
}

/// The statuses of every block and task.
fn statuses(blocks: &[BlockReport]) -> Vec<String> {
    blocks
        .iter()
        .flat_map(|b| {
            std::iter::once(format!("{} {:?}", b.number, b.status)).chain(
                b.tasks
                    .iter()
                    .map(|t| format!("  {} {:?} {}", t.number, t.status, t.rolled_back)),
            )
        })
        .collect()
}

/// Makes the scratch tree of run `n`: the root, and the canary beside it.
fn scratch_tree(n: u64) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let scratch = std::env::temp_dir().join(format!("clada-fuzz-{}-{n}", std::process::id()));
    let root_dir = scratch.join("root");
    let outside = scratch.join("outside");
    std::fs::create_dir_all(root_dir.join("d/e")).expect("root");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(root_dir.join("a.txt"), "alpha\nbeta\n").expect("file");
    std::fs::write(root_dir.join("d/b.txt"), "b\n").expect("file");
    std::fs::write(outside.join("secret.txt"), "secret\n").expect("file");
    std::os::unix::fs::symlink("../outside", root_dir.join("out")).expect("link");
    std::os::unix::fs::symlink("../../outside/secret.txt", root_dir.join("d/leak")).expect("link");
    (scratch, root_dir, outside)
}

/// Every entry below `dir`, named relative to it.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    snapshot(dir, &mut out);
    let base = dir.display().to_string();
    out.into_iter()
        .map(|(p, what)| (p.trim_start_matches(&base).to_owned(), what))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = decode(data) else { return };
    let doc = parse(src);
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    let (scratch, root_dir, outside) = scratch_tree(n);
    let mut before = Vec::new();
    snapshot(&outside, &mut before);

    let whole = Apply::new(&root_dir).expect("root").git(None).run(&doc);

    // The same document read a window at a time does the same.
    let (other, other_root, _) = scratch_tree(n + (1 << 40));
    let mut kept = Kept::default();
    let streamed = Apply::new(&other_root).expect("root").git(None).run_units(
        src,
        units(src, ParseOptions::default()),
        &mut kept,
    );
    assert_eq!(statuses(&whole.blocks), statuses(&kept.0), "statuses differ");
    assert_eq!(whole.ok, streamed.ok, "ok differs");
    assert_eq!(tree(&root_dir), tree(&other_root), "trees differ");
    let _ = std::fs::remove_dir_all(&other);

    let mut after = Vec::new();
    snapshot(&outside, &mut after);
    assert_eq!(before, after, "something outside the root changed");
    let mut left = Vec::new();
    temp_files(&root_dir, &mut left);
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let _ = std::fs::remove_dir_all(&scratch);
});
