//! Applies arbitrary documents to a small scratch tree (only built-in
//! commands run, nothing is approved),
//! checking the engine's promises: no panic, nothing written, moved or
//! removed outside the root, no link followed out of it, and no
//! temporary file left behind; and that a run reading the document a
//! window at a time (`Apply::run_units`) does what a whole one does.
//!
//! Cheap per input: documents over [`MAX_INPUT`] bytes are passed over,
//! and the two scratch trees (one per way of running) are made once per
//! process, in memory where the system allows, and put back only when an
//! input changed them.

#![no_main]

#[path = "common/scratch.rs"]
mod scratch;

use std::path::Path;
use std::sync::Mutex;

use clada_markers::engine::Observer;
use clada_markers::report::BlockReport;
use clada_markers::syntax::units;
use clada_markers::{Apply, Listener, ParseOptions, decode, parse};
use libfuzzer_sys::fuzz_target;
use scratch::Scratch;

/// The largest document tried: a few dozen tasks, enough for every
/// interplay of operations on a tree of five entries.
const MAX_INPUT: usize = 4096;

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

/// The root: a file, a directory with a file and an empty directory, a
/// link to the directory beside the root and one to the secret in it.
fn fill_root(root: &Path) {
    std::fs::create_dir_all(root.join("d/e")).expect("root");
    std::fs::write(root.join("a.txt"), "alpha\nbeta\n").expect("file");
    std::fs::write(root.join("d/b.txt"), "b\n").expect("file");
    std::os::unix::fs::symlink("../outside", root.join("out")).expect("link");
    std::os::unix::fs::symlink("../../outside/secret.txt", root.join("d/leak")).expect("link");
}

/// Beside the root: `outside/secret.txt`.
fn fill_beside(dir: &Path) {
    std::fs::create_dir_all(dir.join("outside")).expect("outside");
    std::fs::write(dir.join("outside/secret.txt"), "secret\n").expect("file");
}

/// The trees of the whole run and of the run a window at a time.
static TREES: Mutex<Option<(Scratch, Scratch)>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(src) = decode(data) else { return };
    let doc = parse(src);
    let mut trees = TREES.lock().unwrap_or_else(|e| e.into_inner());
    let (one, other) = trees.get_or_insert_with(|| {
        (
            Scratch::new("whole", fill_root, fill_beside),
            Scratch::new("units", fill_root, fill_beside),
        )
    });

    let whole = Apply::new(one.root()).expect("root").git(None).run(&doc);

    // The same document read a window at a time does the same.
    let mut kept = Kept::default();
    let streamed = Apply::new(other.root()).expect("root").git(None).run_units(
        src,
        units(src, ParseOptions::default()),
        &mut kept,
    );
    assert_eq!(
        statuses(&whole.blocks),
        statuses(&kept.0),
        "statuses differ"
    );
    assert_eq!(whole.ok, streamed.ok, "ok differs");

    // Nothing beside either root changed (checked by `finish`), both roots
    // hold the same, and no temporary file is left in either.
    let (a, b) = (one.finish(), other.finish());
    assert_eq!(a, b, "trees differ");
    let left = scratch::temp_files(&a);
    assert!(left.is_empty(), "temporary files left: {left:?}");
});
