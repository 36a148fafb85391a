//! Many edits to one big file: 5,000 one-line SEARCH edits in a file of
//! 200,000 lines, in one TASKS block and as 5,000 standalone units, against
//! `git apply` of the same diff. Median of 5, each on a fresh copy.
//!
//! Then how the cost grows: standalone units with the file doubled, the
//! edits doubled, and both, side by side in rotating order, all within one
//! batch of 8,192 tasks (a run writes its files and reads them again
//! between batches). One pass over the file plus the edits doubles at most
//! when both do; a search of the whole file per edit would double with
//! either and quadruple with both.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench bigfile
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{big_file_fixture, clada_binary, median, standalone};

const RUNS: usize = 5;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary();
    let fx = big_file_fixture(200_000, 5_000);
    let dir = std::env::temp_dir().join(format!("clada-bench-bigfile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let (block, alone, patch) = (
        dir.join("block.md"),
        dir.join("alone.md"),
        dir.join("edits.diff"),
    );
    std::fs::write(&block, &fx.document).expect("write");
    std::fs::write(&alone, standalone(&fx.document)).expect("write");
    std::fs::write(&patch, &fx.diff).expect("write");
    let (path, text) = &fx.files[0];
    let want = &fx.changed[0].1;
    let fresh = |name: &str| fresh_tree(&dir.join(name), path, text);
    let run = |c: Command, d: &Path, who: &str| timed(c, &d.join(path), want, who);
    let (mut g, mut b, mut s) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..=RUNS {
        let mut times = [0.0; 3];
        for k in 0..3 {
            match (i + k) % 3 {
                0 => {
                    let d = fresh("git");
                    let mut c = Command::new("git");
                    c.arg("apply").arg(&patch).current_dir(&d);
                    times[0] = run(c, &d, "git apply");
                }
                1 => {
                    let d = fresh("block");
                    let mut c = Command::new(&clada);
                    c.args(["apply", "--no-git", "-C"]).arg(&d).arg(&block);
                    times[1] = run(c, &d, "clada, one block");
                }
                _ => {
                    let d = fresh("alone");
                    let mut c = Command::new(&clada);
                    c.args(["apply", "--no-git", "-C"]).arg(&d).arg(&alone);
                    times[2] = run(c, &d, "clada, standalone units");
                }
            }
        }
        if i > 0 {
            g.push(times[0]);
            b.push(times[1]);
            s.push(times[2]);
        }
    }
    let (g, b, s) = (median(g), median(b), median(s));
    scaling(&clada, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    println!("\n5000 edits in one file of 200000 lines, median of {RUNS}");
    println!("git apply                  {g:9.1} ms");
    println!(
        "clada, one TASKS block     {b:9.1} ms   {:.2}x git apply (target <= 1.5x)",
        b / g
    );
    println!(
        "clada, 5000 standalone     {s:9.1} ms   {:.2}x git apply (target <= 1.5x)",
        s / g
    );
}

/// Standalone units at four sizes, each doubling the file or the edits.
fn scaling(clada: &Path, dir: &Path) {
    let sizes = [
        (200_000, 4_000),
        (400_000, 4_000),
        (200_000, 8_000),
        (400_000, 8_000),
    ];
    let cases: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, &(lines, edits))| {
            let fx = big_file_fixture(lines, edits);
            let doc = dir.join(format!("scale{i}.md"));
            std::fs::write(&doc, standalone(&fx.document)).expect("write");
            (fx, doc)
        })
        .collect();
    let mut times = vec![Vec::new(); cases.len()];
    for round in 0..=RUNS {
        for k in 0..cases.len() {
            let i = (round + k) % cases.len();
            let (fx, doc) = &cases[i];
            let (path, text) = &fx.files[0];
            let d = fresh_tree(&dir.join(format!("scale-tree{i}")), path, text);
            let mut c = Command::new(clada);
            c.args(["apply", "--no-git", "-C"]).arg(&d).arg(doc);
            let ms = timed(c, &d.join(path), &fx.changed[0].1, "clada");
            if round > 0 {
                times[i].push(ms);
            }
        }
    }
    let m: Vec<f64> = times.into_iter().map(median).collect();
    println!("standalone units, median of {RUNS}: how the cost grows");
    for (&(lines, edits), t) in sizes.iter().zip(&m) {
        println!(
            "{lines:7} lines, {edits:6} edits  {t:9.1} ms   {:.2}x the first",
            t / m[0]
        );
    }
}

/// A tree at `d` holding only `text` at `path`.
fn fresh_tree(d: &Path, path: &str, text: &str) -> PathBuf {
    let _ = std::fs::remove_dir_all(d);
    std::fs::create_dir_all(d.join("src")).expect("tree");
    std::fs::write(d.join(path), text).expect("tree");
    d.to_path_buf()
}

/// Runs `c` and returns its wall time in ms, once it is checked to have
/// succeeded and left `file` as `want`.
fn timed(mut c: Command, file: &Path, want: &str, who: &str) -> f64 {
    let start = Instant::now();
    let ok = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run");
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    assert!(ok.success(), "{who} failed");
    assert!(
        std::fs::read_to_string(file).unwrap_or_default() == want,
        "{who} left the file wrong"
    );
    ms
}
