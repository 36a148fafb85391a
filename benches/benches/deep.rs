//! Deep paths and moves of whole directories (PROTOCOL §5: a path has at
//! most 1,024 components), `clada apply --no-git` in one run per figure:
//!
//! 1. 200 SEARCH edits of files at depth n (a lookup each), written and in
//!    a dry run (the lookups and reads alone);
//! 2. 4 WRITEs of a new file at depth n (each makes n directories);
//! 3. the same WRITEs in a dry run;
//! 4. 2 built-in `mkdir -p` of n directories each, and the same in a dry
//!    run;
//!
//! for n = 128 to 1,024 (the limit), each doubling ideally at most 2.2×
//! the time; then paths past the limit (2k to 64k components: refused at
//! once, at the cost of reading them);
//!
//! 5. k WRITEs into a new directory, then k MOVEs of it, k = 500 to 4,000,
//!    in a dry run (the plan alone) and written;
//! 6. k MOVEs of a directory of 20,000 files on disk, k = 100 to 400.
//!
//! CPU time (user and system) of the `clada` process, median of 3 runs:
//! the machine is shared, and wall time moves with what else runs.
//! Reported, never asserted. `CLADA_BIN` measures another build side by
//! side (the same inputs); `DEEP_MAX` caps the depths measured (for a
//! build that takes minutes there).
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench deep
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clada_benches::{clada_binary, median, run_measured_cpu};

const RUNS: usize = 3;
const DEPTHS: [usize; 4] = [128, 256, 512, 1024];
const PAST: [usize; 4] = [2_000, 8_000, 32_000, 64_000];
const MOVES: [usize; 4] = [500, 1_000, 2_000, 4_000];
const TREE_MOVES: [usize; 3] = [100, 200, 400];

/// A path of `n` components under `top`: `top/d/d/…/leaf`.
fn deep(top: &str, n: usize, leaf: &str) -> String {
    let mut p = String::with_capacity(2 * n + top.len() + leaf.len());
    p.push_str(top);
    for _ in 0..n.saturating_sub(2) {
        p.push_str("/d");
    }
    p.push('/');
    p.push_str(leaf);
    p
}

struct Bench {
    clada: String,
    scratch: PathBuf,
}

impl Bench {
    /// Runs `doc` against a root made fresh by `setup` before each run;
    /// the median CPU time (user and system, ms: the machine is shared)
    /// and the largest peak RSS (KiB).
    fn measure(&self, doc: &str, flags: &[&str], setup: &dyn Fn(&Path)) -> (f64, u64) {
        let root = self.scratch.join("root");
        let file = self.scratch.join("doc.md");
        std::fs::write(&file, doc).expect("document");
        let mut times = Vec::new();
        let mut rss = 0;
        for _ in 0..RUNS {
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).expect("root");
            setup(&root);
            let mut cmd = vec![self.clada.clone(), "apply".into(), "--no-git".into()];
            cmd.extend(flags.iter().map(|f| (*f).to_owned()));
            cmd.extend([
                "-C".into(),
                root.display().to_string(),
                file.display().to_string(),
            ]);
            let (_, ms, kib) = run_measured_cpu(&cmd);
            times.push(ms);
            rss = rss.max(kib);
        }
        (median(times), rss)
    }
}

fn row(name: &str, figures: &[(f64, u64)], memory: bool) {
    let times: Vec<f64> = figures.iter().map(|f| f.0).collect();
    let mut line = format!("{name:<34}");
    for (ms, kib) in figures {
        if memory {
            let _ = write!(line, " {ms:>9.1} ({:>6.1} MB)", *kib as f64 / 1024.0);
        } else {
            let _ = write!(line, " {ms:>9.1}");
        }
    }
    println!("{line}   {}", doubling(&times));
}

fn nothing(_: &Path) {}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--measure") {
        clada_benches::measure(&args[1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let scratch = std::env::temp_dir().join(format!("clada-bench-deep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let bench = Bench {
        clada: clada_binary().display().to_string(),
        scratch: scratch.clone(),
    };
    let cap: usize = std::env::var("DEEP_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let depths: Vec<usize> = DEPTHS.into_iter().filter(|&n| n <= cap).collect();

    println!("clada: {}", bench.clada);
    println!("Paths of n components, median CPU time of {RUNS} runs, ms (peak RSS)");
    let head: String = depths.iter().map(|n| format!(" {n:>9}")).collect();
    println!("{:<34}{head}   doubling ratios", "n");

    // 1. Lookups: 200 edits of files at depth n.
    let searches = |n: usize| {
        let mut doc = String::new();
        for i in 0..200 {
            let _ = write!(
                doc,
                "<<<<<<< SEARCH path=\"{}\"\none\n=======\ntwo\n>>>>>>> REPLACE\n",
                deep("s", n, &format!("f{i}"))
            );
        }
        doc
    };
    let search_tree = |n: usize| {
        move |root: &Path| {
            let dir = root.join(deep("s", n, "x"));
            let dir = dir.parent().expect("a parent");
            std::fs::create_dir_all(dir).expect("deep directories");
            for i in 0..200 {
                std::fs::write(dir.join(format!("f{i}")), "one\n").expect("file");
            }
        }
    };
    let figures: Vec<_> = depths
        .iter()
        .map(|&n| bench.measure(&searches(n), &[], &search_tree(n)))
        .collect();
    row("200 SEARCH at depth n", &figures, false);
    let figures: Vec<_> = depths
        .iter()
        .map(|&n| bench.measure(&searches(n), &["--dry-run"], &search_tree(n)))
        .collect();
    row("the same, --dry-run", &figures, false);

    // 2, 3. Writes that make their directories.
    let writes = |n: usize| {
        let mut doc = String::new();
        for i in 0..4 {
            let _ = write!(
                doc,
                "<<<<<<< WRITE path=\"{}\"\nx\n>>>>>>> END\n",
                deep(&format!("w{i}"), n, "f")
            );
        }
        doc
    };
    let figures: Vec<_> = depths
        .iter()
        .map(|&n| bench.measure(&writes(n), &[], &nothing))
        .collect();
    row("4 WRITE making n directories", &figures, true);
    let figures: Vec<_> = depths
        .iter()
        .map(|&n| bench.measure(&writes(n), &["--dry-run"], &nothing))
        .collect();
    row("the same, --dry-run", &figures, true);

    // 4. Built-in mkdir -p.
    let mkdirs = |n: usize| {
        let mut doc = String::new();
        for i in 0..2 {
            let _ = write!(
                doc,
                "<<<<<<< RUN\nmkdir -p {}\n>>>>>>> END\n",
                deep(&format!("m{i}"), n, "d")
            );
        }
        doc
    };
    let figures: Vec<_> = depths
        .iter()
        .map(|&n| bench.measure(&mkdirs(n), &[], &nothing))
        .collect();
    row("2 mkdir -p of n directories", &figures, false);
    let figures: Vec<_> = depths
        .iter()
        .map(|&n| bench.measure(&mkdirs(n), &["--dry-run"], &nothing))
        .collect();
    row("the same, --dry-run", &figures, false);

    println!();
    println!("Past the limit: one task at n components, median CPU time of {RUNS} runs, ms");
    let head: String = PAST.iter().map(|n| format!(" {n:>9}")).collect();
    println!("{:<34}{head}   doubling ratios", "n");
    let one = |op: &str, n: usize| match op {
        "SEARCH" => format!(
            "<<<<<<< SEARCH path=\"{}\"\none\n=======\ntwo\n>>>>>>> REPLACE\n",
            deep("s", n, "f")
        ),
        "WRITE" => format!(
            "<<<<<<< WRITE path=\"{}\"\nx\n>>>>>>> END\n",
            deep("w", n, "f")
        ),
        _ => format!("<<<<<<< RUN\nmkdir -p {}\n>>>>>>> END\n", deep("m", n, "d")),
    };
    for op in ["SEARCH", "WRITE", "mkdir -p"] {
        let figures: Vec<_> = PAST
            .iter()
            .filter(|&&n| n <= cap)
            .map(|&n| bench.measure(&one(op, n), &[], &nothing))
            .collect();
        row(&format!("one {op}"), &figures, false);
    }

    println!();
    println!("Moves of a whole directory, median CPU time of {RUNS} runs, ms");
    let head: String = MOVES.iter().map(|k| format!(" {k:>9}")).collect();
    println!("{:<34}{head}   doubling ratios", "k");
    // 5. k WRITEs into a directory, then k MOVEs of it: each MOVE takes
    // all it holds along.
    let moves = |k: usize| {
        let mut doc = String::new();
        for i in 0..k {
            let _ = write!(doc, "<<<<<<< WRITE path=\"m0/f{i}\"\nx\n>>>>>>> END\n");
        }
        for i in 0..k {
            let _ = write!(
                doc,
                "<<<<<<< MOVE from=\"m{i}\" to=\"m{}\"\n>>>>>>> END\n",
                i + 1
            );
        }
        doc
    };
    let figures: Vec<_> = MOVES
        .iter()
        .map(|&k| bench.measure(&moves(k), &["--dry-run"], &nothing))
        .collect();
    row("k WRITE, k MOVE of their dir, dry", &figures, false);
    let figures: Vec<_> = MOVES
        .iter()
        .map(|&k| bench.measure(&moves(k), &[], &nothing))
        .collect();
    row("the same, written", &figures, false);

    // 6. k MOVEs of a directory of 20,000 files on disk: each looks for a
    // `.git` below what it takes away.
    let head: String = TREE_MOVES.iter().map(|k| format!(" {k:>9}")).collect();
    println!("{:<34}{head}   doubling ratios", "k");
    let tree_moves = |k: usize| {
        let mut doc = String::new();
        for i in 0..k {
            let _ = write!(
                doc,
                "<<<<<<< MOVE from=\"t{i}\" to=\"t{}\"\n>>>>>>> END\n",
                i + 1
            );
        }
        doc
    };
    let tree = |root: &Path| {
        for d in 0..200 {
            let dir = root.join(format!("t0/d{d}"));
            std::fs::create_dir_all(&dir).expect("directory");
            for f in 0..100 {
                std::fs::write(dir.join(format!("f{f}")), "").expect("file");
            }
        }
    };
    let figures: Vec<_> = TREE_MOVES
        .iter()
        .map(|&k| bench.measure(&tree_moves(k), &[], &tree))
        .collect();
    row("k MOVE of a 20,000-file tree", &figures, false);

    let _ = std::fs::remove_dir_all(&scratch);
}

/// Each time against the one before it.
fn doubling(times: &[f64]) -> String {
    let ratios: Vec<String> = times
        .windows(2)
        .map(|w| format!("{:.2}x", w[1] / w[0]))
        .collect();
    ratios.join(" ")
}
