//! Hostile inputs, side by side in one run:
//!
//! 1. `clada check` on 25k/50k/100k/200k openers that never close, of each
//!    kind (task openers, TASKS blocks, unknown keywords in a versioned
//!    block): each doubling should cost at most 2.2× the time.
//! 2. The closest-region hint of a failed SEARCH: a 32k-line search text in
//!    a 64k-line file (target: under 1 s).
//! 3. Peak memory rejecting a 53 MB document, from a file and from stdin
//!    (target: under 64 MiB).
//! 4. `clada apply` of 2.5k/5k/10k SEARCH edits that all fail, of one file
//!    of 200,000 lines: each doubling should cost at most 2.2× the time
//!    (each failure's closest region reads the whole file, until the run's
//!    hints have read 128 MiB; then the index of the coming edits answers).
//! 5. A dry run (`--atomic=document`) of 2k/4k/8k WRITEs and one built-in
//!    `rm` of all their files: what the command undid is matched with the
//!    tasks before it in one pass (doubling: at most 2.2×).
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench hostile
//! ```

use std::fmt::Write as _;
use std::time::Instant;

use clada_benches::{big_file_fixture, clada_binary, median, run_measured};
use clada_markers::Count;
use clada_markers::engine as matching;

const RUNS: usize = 3;
const SIZES: [usize; 4] = [25_000, 50_000, 100_000, 200_000];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--measure") {
        clada_benches::measure(&args[1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("clada-bench-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let clada = clada_binary().display().to_string();

    println!("1. clada check on n unclosed openers, median of {RUNS} runs (ms)");
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>10}   doubling ratios",
        "kind", "25k", "50k", "100k", "200k"
    );
    let kinds: [(&str, &str, &str); 4] = [
        ("WRITE", "", "<<<<<<< WRITE path=\"a\"\n"),
        ("SEARCH", "", "<<<<<<< SEARCH path=\"a\"\nx\n"),
        ("TASKS", "", "<<<<<<< TASKS\n"),
        (
            "unknown, versioned block",
            "<<<<<<< TASKS version=\"2.0\"\n",
            "<<<<<<< FOO\n",
        ),
    ];
    for (name, head, line) in kinds {
        let mut times = Vec::new();
        for n in SIZES {
            let path = dir.join("doc.md");
            std::fs::write(&path, format!("{head}{}", line.repeat(n))).expect("document");
            let cmd = [clada.clone(), "check".into(), path.display().to_string()];
            let runs: Vec<f64> = (0..RUNS).map(|_| run_measured(&cmd).0).collect();
            times.push(median(runs));
        }
        println!(
            "{name:<28} {:>10.0} {:>10.0} {:>10.0} {:>10.0}   {}",
            times[0],
            times[1],
            times[2],
            times[3],
            doubling(&times)
        );
    }

    println!();
    let mut file = String::new();
    for i in 0..64_000 {
        let _ = writeln!(
            file,
            "    let value_{i} = compute(input_{i}, {i}) + offset;"
        );
    }
    let mut search = String::new();
    for i in 16_000..48_000 {
        let _ = writeln!(
            search,
            "    let value_{i} = compute(input_{i}, {}) + offset;",
            i + 1
        );
    }
    let hint: Vec<f64> = (0..5)
        .map(|_| {
            let start = Instant::now();
            let m = matching::edit(
                &file,
                &search,
                "x\n",
                Count::Exactly(std::num::NonZeroUsize::MIN),
            );
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            assert!(m.is_err(), "the search must fail");
            ms
        })
        .collect();
    println!(
        "2. failed SEARCH of 32k lines in a 64k-line file, hint included: median {:.0} ms (target < 1000 ms)",
        median(hint)
    );

    println!();
    let big = dir.join("big.md");
    {
        let line = "<<<<<<< WRITE path=\"a\"\nsome content line\n>>>>>>> END\n";
        let doc = line.repeat(53_000_000 / line.len() + 1);
        std::fs::write(&big, doc).expect("big document");
    }
    let from_file = run_measured(&[clada.clone(), "check".into(), big.display().to_string()]);
    let from_stdin = run_measured(&[
        "sh".into(),
        "-c".into(),
        format!("{clada} check - < {}", big.display()),
    ]);
    println!(
        "3. rejecting a 53 MB document: peak RSS {:.1} MiB from a file, {:.1} MiB from stdin (target < 64 MiB)",
        from_file.1 as f64 / 1024.0,
        from_stdin.1 as f64 / 1024.0
    );

    println!();
    failing_edits(&clada, &dir);
    println!();
    command_after_writes(&clada, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dry run of n WRITEs, then one built-in `rm` naming each file.
fn command_after_writes(clada: &str, dir: &std::path::Path) {
    let tree = dir.join("empty");
    std::fs::create_dir_all(&tree).expect("tree");
    let counts = [2_000, 4_000, 8_000];
    let mut times = Vec::new();
    for n in counts {
        let mut doc = String::new();
        for i in 0..n {
            let _ = write!(doc, "<<<<<<< WRITE path=\"d/f{i}.txt\"\nx\n>>>>>>> END\n");
        }
        doc.push_str("<<<<<<< RUN\nrm");
        for i in 0..n {
            let _ = write!(doc, " d/f{i}.txt");
        }
        doc.push_str("\n>>>>>>> END\n");
        let file = dir.join("writes.md");
        std::fs::write(&file, doc).expect("document");
        let cmd = [
            clada.to_owned(),
            "apply".into(),
            "--no-git".into(),
            "--dry-run".into(),
            "--atomic=document".into(),
            "-C".into(),
            tree.display().to_string(),
            file.display().to_string(),
        ];
        let runs: Vec<f64> = (0..RUNS).map(|_| run_measured(&cmd).0).collect();
        times.push(median(runs));
    }
    println!(
        "5. dry run of n WRITEs and one rm of their files, median of {RUNS} (ms): 2k {:.0}, 4k {:.0}, 8k {:.0}   doubling ratios {}",
        times[0],
        times[1],
        times[2],
        doubling(&times)
    );
}

/// Standalone SEARCH edits of one big file, none of which matches.
fn failing_edits(clada: &str, dir: &std::path::Path) {
    let fx = big_file_fixture(200_000, 1);
    let (path, text) = &fx.files[0];
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("src")).expect("tree");
    std::fs::write(tree.join(path), text).expect("tree");
    let mut times = Vec::new();
    let counts = [2_500, 5_000, 10_000];
    for n in counts {
        let doc: String = (0..n)
            .map(|i| {
                let l = i * 20;
                format!(
                    "<<<<<<< SEARCH path=\"{path}\"\n    let value_{l} = compute_slower({l});\n=======\n    x\n>>>>>>> REPLACE\n"
                )
            })
            .collect();
        let file = dir.join("failing.md");
        std::fs::write(&file, doc).expect("document");
        let cmd = [
            clada.to_owned(),
            "apply".into(),
            "--no-git".into(),
            "-C".into(),
            tree.display().to_string(),
            file.display().to_string(),
        ];
        let runs: Vec<f64> = (0..RUNS).map(|_| run_measured(&cmd).0).collect();
        times.push(median(runs));
        assert_eq!(
            std::fs::read_to_string(tree.join(path)).unwrap_or_default(),
            *text,
            "a failing edit changed the file"
        );
    }
    println!(
        "4. n failing SEARCH edits of a 200,000-line file, median of {RUNS} (ms): 2.5k {:.0}, 5k {:.0}, 10k {:.0}   doubling ratios {}",
        times[0],
        times[1],
        times[2],
        doubling(&times)
    );
}

/// Each time against the one before it.
fn doubling(times: &[f64]) -> String {
    let ratios: Vec<String> = times
        .windows(2)
        .map(|w| format!("{:.2}x", w[1] / w[0]))
        .collect();
    ratios.join(" ")
}
