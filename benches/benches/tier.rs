//! What the white-space tier costs (PROTOCOL §3): the same runs with
//! `--match exact` and with the default `--match whitespace`, side by side
//! in rotating order, median of 5.
//!
//! 1. 1,000 failing edits of a 1 MiB file (standalone units): each failure
//!    is looked for by the tier too, in the index of the edits' first
//!    lines.
//! 2. 5,000 edits of the 200,000-line file (`big_file_fixture`), as
//!    standalone units: they all occur as written, so the tier never runs;
//!    the index holds the first lines of the searches and replacements as
//!    well.
//! 3. How the failing run grows with the tier on: the file doubled, the
//!    edits doubled, both.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench tier
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{MIB, big_file_fixture, clada_binary, failing_fixture, median, standalone};

const RUNS: usize = 5;

/// A case: its document, the tree it runs on, and what the file must be
/// after, with the exit code the run must have.
struct Case {
    name: String,
    doc: PathBuf,
    path: String,
    before: String,
    after: String,
    exit: i32,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary();
    let dir = std::env::temp_dir().join(format!("clada-bench-tier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");

    let failing = |mib: usize, edits: usize| {
        let (path, text, doc) = failing_fixture(mib * MIB, edits);
        let file = dir.join(format!("failing-{mib}-{edits}.md"));
        std::fs::write(&file, doc).expect("write");
        Case {
            name: format!("{edits} failing edits, {mib} MiB"),
            doc: file,
            path,
            after: text.clone(),
            before: text,
            exit: 1,
        }
    };
    let big = {
        let fx = big_file_fixture(200_000, 5_000);
        let file = dir.join("big.md");
        std::fs::write(&file, standalone(&fx.document)).expect("write");
        Case {
            name: "5000 edits, 200000 lines".to_owned(),
            doc: file,
            path: fx.files[0].0.clone(),
            before: fx.files[0].1.clone(),
            after: fx.changed[0].1.clone(),
            exit: 0,
        }
    };
    let pairs = [failing(1, 1000), big];
    println!("median of {RUNS}, ms: --match exact, --match whitespace, ratio");
    for case in &pairs {
        let (mut exact, mut tier) = (Vec::new(), Vec::new());
        for round in 0..=RUNS {
            for k in 0..2 {
                let with_tier = (round + k) % 2 == 1;
                let ms = run(&clada, &dir, case, with_tier);
                if round > 0 {
                    if with_tier { &mut tier } else { &mut exact }.push(ms);
                }
            }
        }
        let (e, t) = (median(exact), median(tier));
        println!(
            "{:28} {e:9.1} {t:9.1}   {:.2}x (target <= 1.5x)",
            case.name,
            t / e
        );
    }

    let scaling = [
        failing(1, 1000),
        failing(2, 1000),
        failing(1, 2000),
        failing(2, 2000),
    ];
    let mut times = vec![Vec::new(); scaling.len()];
    for round in 0..=RUNS {
        for k in 0..scaling.len() {
            let i = (round + k) % scaling.len();
            let ms = run(&clada, &dir, &scaling[i], true);
            if round > 0 {
                times[i].push(ms);
            }
        }
    }
    let m: Vec<f64> = times.into_iter().map(median).collect();
    println!("failing edits with the tier, how the cost grows:");
    for (c, t) in scaling.iter().zip(&m) {
        println!("{:28} {t:9.1}   {:.2}x the first", c.name, t / m[0]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `case` on a fresh tree, with or without the tier; its wall time in
/// ms, once checked to have exited as it must and left the file right.
fn run(clada: &Path, dir: &Path, case: &Case, tier: bool) -> f64 {
    let tree = dir.join("tree");
    let _ = std::fs::remove_dir_all(&tree);
    let file = tree.join(&case.path);
    std::fs::create_dir_all(file.parent().unwrap_or(&tree)).expect("tree");
    std::fs::write(&file, &case.before).expect("tree");
    let mut c = Command::new(clada);
    c.args(["apply", "--no-git", "--match"])
        .arg(if tier { "whitespace" } else { "exact" })
        .arg("-C")
        .arg(&tree)
        .arg(&case.doc)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let start = Instant::now();
    let status = c.status().expect("run");
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(status.code(), Some(case.exit), "{}: exit code", case.name);
    assert!(
        std::fs::read_to_string(&file).unwrap_or_default() == case.after,
        "{}: the file is not what it should be",
        case.name
    );
    ms
}
