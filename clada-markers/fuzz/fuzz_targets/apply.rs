//! Applies arbitrary documents to a small scratch tree (only built-in
//! commands run, nothing is approved),
//! checking the engine's promises: no panic, nothing written, moved or
//! removed outside the root, no link followed out of it, and no
//! temporary file left behind.

#![no_main]

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use clada_markers::{Apply, decode, parse};
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

fuzz_target!(|data: &[u8]| {
    let Ok(src) = decode(data) else { return };
    let doc = parse(src);
    let n = RUN.fetch_add(1, Ordering::Relaxed);
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
    let mut before = Vec::new();
    snapshot(&outside, &mut before);

    let _ = Apply::new(&root_dir).expect("root").git(None).run(&doc);

    let mut after = Vec::new();
    snapshot(&outside, &mut after);
    assert_eq!(before, after, "something outside the root changed");
    let mut left = Vec::new();
    temp_files(&root_dir, &mut left);
    assert!(left.is_empty(), "temporary files left: {left:?}");
    let _ = std::fs::remove_dir_all(&scratch);
});
