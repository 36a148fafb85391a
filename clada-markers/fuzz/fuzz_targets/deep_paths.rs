//! Deep paths through the planner: documents whose task paths, RUN
//! directories and built-in arguments have thousands of components (`..`,
//! `.`, empty ones, long names, a link, both separators), parsed and run
//! as a dry run against a small root. Checked: no panic, the report
//! serializes, and the dry run writes nothing, inside the root or beside
//! it; and, with libFuzzer's `-timeout`, that no input takes long: every
//! lookup and plan is meant to be linear in a path's depth, with a limit
//! on components (PROTOCOL §5).
//!
//! An input is a short recipe (components and how often each repeats),
//! so that a few bytes make a deep path: `-max_len=256` is plenty. With
//! `CLADA_FUZZ_SHOW=1` in the environment the document made is printed
//! (to see what a reproducer in `regressions/deep_paths/` holds).

#![no_main]

#[path = "common/scratch.rs"]
mod scratch;

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use clada_markers::{Apply, parse};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use scratch::Scratch;

/// Components a path is made of.
const PARTS: &[&str] = &[
    "a", "d", "e", "..", ".", "", "out", "a.txt", "LONG", "TOO_LONG",
];
/// At most this many components in one path (four times PROTOCOL's
/// limit), and this many bytes.
const MAX_COMPONENTS: usize = 4096;
const MAX_PATH_BYTES: usize = 64 * 1024;
/// At most this many tasks in a document.
const MAX_TASKS: usize = 4;
/// Built-in commands given paths: (name and flags, how many paths).
const BUILTINS: &[(&str, usize)] = &[
    ("mkdir -p", 1),
    ("ls", 1),
    ("cat", 1),
    ("find", 1),
    ("touch", 1),
    ("rm -r", 1),
    ("stat", 1),
    ("realpath", 1),
    ("tree", 1),
    ("cp -r", 2),
    ("mv", 2),
];

fn path(u: &mut Unstructured<'_>) -> Result<String> {
    let sep = if u.ratio(1, 8)? { '\\' } else { '/' };
    let mut out = String::new();
    let mut components = 0;
    for _ in 0..u.int_in_range(1..=6)? {
        let part = match *u.choose(PARTS)? {
            "LONG" => "n".repeat(255),
            "TOO_LONG" => "n".repeat(256),
            p => p.to_owned(),
        };
        // Once, a few times, or 16 to 8,191 times (cut at the limits).
        let times = match u.choose_index(4)? {
            0 => 1,
            1 => u.int_in_range(2..=8)?,
            _ => {
                let bits = u.int_in_range(4..=12)?;
                (1usize << bits) + u.int_in_range(0..=(1usize << bits) - 1)?
            }
        };
        for _ in 0..times {
            if components == MAX_COMPONENTS || out.len() + part.len() + 1 > MAX_PATH_BYTES {
                return Ok(out);
            }
            if components > 0 {
                out.push(sep);
            }
            out.push_str(&part);
            components += 1;
        }
    }
    Ok(out)
}

fn document(u: &mut Unstructured<'_>) -> Result<String> {
    let mut doc = String::new();
    for _ in 0..u.int_in_range(1..=MAX_TASKS)? {
        let p = path(u)?;
        let _ = match u.choose_index(5)? {
            0 => writeln!(doc, "<<<<<<< WRITE path=\"{p}\"\nx\n>>>>>>> END"),
            1 => writeln!(
                doc,
                "<<<<<<< SEARCH path=\"{p}\"\nalpha\n=======\nbeta\n>>>>>>> REPLACE"
            ),
            2 => writeln!(
                doc,
                "<<<<<<< MOVE from=\"{p}\" to=\"{}\"\n>>>>>>> END",
                path(u)?
            ),
            3 => writeln!(doc, "<<<<<<< REMOVE path=\"{p}\"\n>>>>>>> END"),
            _ => {
                let (name, paths) = *u.choose(BUILTINS)?;
                let mut line = format!("{name} {p}");
                for _ in 1..paths {
                    line.push(' ');
                    line.push_str(&path(u)?);
                }
                if u.arbitrary()? {
                    writeln!(doc, "<<<<<<< RUN dir=\"{}\"\n{line}\n>>>>>>> END", path(u)?)
                } else {
                    writeln!(doc, "<<<<<<< RUN\n{line}\n>>>>>>> END")
                }
            }
        };
    }
    Ok(doc)
}

/// The root: a file, two directories, and a link to the directory beside.
fn fill_root(root: &Path) {
    std::fs::create_dir_all(root.join("d/e")).expect("root");
    std::fs::write(root.join("a.txt"), "alpha\n").expect("file");
    std::os::unix::fs::symlink("../outside", root.join("out")).expect("link");
}

fn fill_beside(dir: &Path) {
    std::fs::create_dir_all(dir.join("outside")).expect("outside");
    std::fs::write(dir.join("outside/secret.txt"), "secret\n").expect("file");
}

static TREE: Mutex<Option<Scratch>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let Ok(text) = document(&mut Unstructured::new(data)) else {
        return;
    };
    static SHOW: OnceLock<bool> = OnceLock::new();
    if *SHOW.get_or_init(|| std::env::var_os("CLADA_FUZZ_SHOW").is_some()) {
        eprintln!("{text}");
    }
    let doc = parse(&text);
    let mut tree = TREE.lock().unwrap_or_else(|e| e.into_inner());
    let tree = tree.get_or_insert_with(|| Scratch::new("deep", fill_root, fill_beside));
    let report = Apply::new(tree.root())
        .expect("root")
        .git(None)
        .dry_run(true)
        .run(&doc);
    assert!(
        serde_json::to_vec(&report).is_ok(),
        "the report does not serialize"
    );
    assert!(tree.finish_unchanged(), "a dry run changed the root");
});
