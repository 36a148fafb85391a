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
//! 6. In memory (`apply_files`), one file of n lines `x` (issue 29, item
//!    9): a unified diff of n/2 hunks `@@ -i,1 +i,1 @@` `-x` `+y`; Roo
//!    blocks with `:start_line:i` (`--dialect cline`) of the same shape;
//!    n/2 clada SEARCHes of `x`, each found n times (count 1: each
//!    fails, its report counting them). n = 4k to 32k: each doubling
//!    should cost at most 2.3× the time.
//! 7. In memory, 1,000 distinct SEARCH edits, each found once, of one
//!    file of 20,000 lines (issue 32; Cline's `constructNewFileContent`
//!    takes 7–12 ms for it): the time per document (without the
//!    report's `changes`, as Cline writes none).
//! 8. In memory, n WRITEs of n files, n = 10k to 80k: each doubling
//!    should cost at most 2.3× the time (the commit message's list of
//!    what the tasks did was looked through for each task).
//! 9. In memory, the Node bench's second synthetic set in Rust
//!    (benches/peers/cline): 200 files of 500 lines, 5 Cline edits each,
//!    a call per file: the time per call, with and without the report's
//!    `changes` (what the engine costs, apart from the binding).
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench hostile
//! cargo bench -p clada-benches --bench hostile -- linear   # 6 and 7 only
//! cargo bench -p clada-benches --bench hostile -- distinct # 7 only
//! ```

use std::fmt::Write as _;
use std::time::Instant;

use clada_benches::{big_file_fixture, clada_binary, median, run_measured};
use std::collections::BTreeMap;

use clada_markers::engine as matching;
use clada_markers::{Count, Dialect, Settings, apply_files};

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
    if args.iter().any(|a| a == "linear") {
        equal_lines();
        println!();
        distinct_edits();
        many_writes();
        small_calls();
        return;
    }
    if args.iter().any(|a| a == "distinct") {
        distinct_edits();
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
    println!();
    equal_lines();
    println!();
    distinct_edits();
    many_writes();
    small_calls();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The documents of section 6 for a file of `n` lines `x`.
fn equal_lines_documents(n: usize) -> [(&'static str, Dialect, String); 3] {
    let mut udiff = String::from("--- a/f.txt\n+++ b/f.txt\n");
    let mut roo = String::from("<apply_diff>\n<path>f.txt</path>\n<diff>\n");
    let mut clada = String::new();
    for k in 0..n / 2 {
        let i = 2 * k + 1;
        let _ = write!(udiff, "@@ -{i},1 +{i},1 @@\n-x\n+y\n");
        let _ = write!(
            roo,
            "<<<<<<< SEARCH\n:start_line:{i}\n-------\nx\n=======\ny\n>>>>>>> REPLACE\n"
        );
        clada.push_str("<<<<<<< SEARCH path=\"f.txt\"\nx\n=======\ny\n>>>>>>> REPLACE\n");
    }
    roo.push_str("</diff>\n</apply_diff>\n");
    [
        ("udiff, numbered hunks", Dialect::Udiff, udiff),
        ("Roo, :start_line:", Dialect::Cline, roo),
        ("clada, each found n times", Dialect::Clada, clada),
    ]
}

/// Section 6: edits of a file of equal lines, in memory.
fn equal_lines() {
    let sizes = [4_000, 8_000, 16_000, 32_000];
    println!("6. in memory, a file of n lines `x`, n/2 edits, median of {RUNS} (ms)");
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>10}   doubling ratios",
        "family", "4k", "8k", "16k", "32k"
    );
    for family in 0..3 {
        let mut times = Vec::new();
        let mut name = "";
        for n in sizes {
            let (label, dialect, doc) = equal_lines_documents(n)[family].clone();
            name = label;
            let files = BTreeMap::from([("f.txt".to_owned(), "x\n".repeat(n).into_bytes())]);
            let settings = Settings {
                dialect,
                ..Settings::default()
            };
            let runs: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let files = files.clone();
                    let start = Instant::now();
                    let (after, report) = apply_files(&doc, files, &settings).expect("apply_files");
                    let ms = start.elapsed().as_secs_f64() * 1000.0;
                    let text = String::from_utf8_lossy(&after["f.txt"]).into_owned();
                    if family == 2 {
                        assert!(
                            !report.ok && text == "x\n".repeat(n),
                            "{name}: nothing changes"
                        );
                    } else {
                        assert!(report.ok, "{name}: every edit applies");
                        assert_eq!(text, "y\nx\n".repeat(n / 2), "{name}");
                    }
                    std::hint::black_box(report);
                    ms
                })
                .collect();
            times.push(median(runs));
        }
        println!(
            "{name:<28} {:>10.1} {:>10.1} {:>10.1} {:>10.1}   {}",
            times[0],
            times[1],
            times[2],
            times[3],
            doubling(&times)
        );
    }
}

/// Section 7: 1,000 distinct SEARCH edits of one 20,000-line file, in
/// memory: the time per document.
fn distinct_edits() {
    let mut file = String::new();
    for i in 0..20_000 {
        let _ = writeln!(
            file,
            "    let value_{i} = compute(input_{i}, {i}) + offset;"
        );
    }
    let mut doc = String::new();
    for e in 0..1_000 {
        let i = e * 20 + 7;
        let _ = write!(
            doc,
            "<<<<<<< SEARCH path=\"src/big.rs\"\n    let value_{i} = compute(input_{i}, {i}) + offset;\n=======\n    let value_{i} = compute(input_{i}, {i}) - offset;\n>>>>>>> REPLACE\n"
        );
    }
    let files = BTreeMap::from([("src/big.rs".to_owned(), file.into_bytes())]);
    let settings = Settings {
        changes: false,
        ..Settings::default()
    };
    let runs: Vec<f64> = (0..15)
        .map(|_| {
            let files = files.clone();
            let start = Instant::now();
            let (_, report) = apply_files(&doc, files, &settings).expect("apply_files");
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            assert!(report.ok, "every edit applies");
            std::hint::black_box(report);
            ms
        })
        .collect();
    println!(
        "7. in memory, 1,000 distinct SEARCH edits of a 20,000-line file: median of 15 {:.2} ms per document (Cline: 7-12 ms)",
        median(runs)
    );
}

/// Section 8: n WRITEs of n files, in memory.
fn many_writes() {
    let sizes = [10_000, 20_000, 40_000, 80_000];
    let times: Vec<f64> = sizes
        .iter()
        .map(|&n| {
            let mut doc = String::new();
            for i in 0..n {
                let _ = write!(doc, "<<<<<<< WRITE path=\"d/f{i}.txt\"\nx\n>>>>>>> END\n");
            }
            let runs: Vec<f64> = (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    let (files, report) = apply_files(&doc, BTreeMap::new(), &Settings::default())
                        .expect("apply_files");
                    let ms = start.elapsed().as_secs_f64() * 1000.0;
                    assert!(report.ok && files.len() == n, "every file written");
                    ms
                })
                .collect();
            median(runs)
        })
        .collect();
    println!(
        "8. in memory, 10k/20k/40k/80k WRITEs: {:.0} / {:.0} / {:.0} / {:.0} ms (doubling: {})",
        times[0],
        times[1],
        times[2],
        times[3],
        doubling(&times)
    );
}

/// Section 9: 200 calls of 5 Cline edits, each of its own 500-line file.
fn small_calls() {
    let line = |p: usize, i: usize| {
        format!(
            "    let value_{i} = compute({i}, \"src/m{p}.rs\") + {}; // line {i}\n",
            i * 7
        )
    };
    let calls: Vec<(String, BTreeMap<String, Vec<u8>>)> = (0..200)
        .map(|p| {
            let original: String = (0..500).map(|i| line(p, i)).collect();
            let mut diff = String::new();
            for k in 0..5 {
                let i = k * 100 + 1;
                let _ = write!(
                    diff,
                    "------- SEARCH\n{}{}{}=======\n{}{}{}+++++++ REPLACE\n",
                    line(p, i - 1),
                    line(p, i),
                    line(p, i + 1),
                    line(p, i - 1),
                    line(p, i).replace("compute", "recompute"),
                    line(p, i + 1)
                );
            }
            let path = format!("src/m{p}.rs");
            let doc = format!(
                "<replace_in_file>\n<path>{path}</path>\n<diff>\n{diff}</diff>\n</replace_in_file>\n"
            );
            (doc, BTreeMap::from([(path, original.into_bytes())]))
        })
        .collect();
    for changes in [false, true] {
        let settings = Settings {
            dialect: Dialect::Cline,
            changes,
            ..Settings::default()
        };
        let runs: Vec<f64> = (0..7)
            .map(|_| {
                let start = Instant::now();
                for (doc, files) in &calls {
                    let (_, report) =
                        apply_files(doc, files.clone(), &settings).expect("apply_files");
                    assert!(report.ok, "every call applies");
                }
                start.elapsed().as_secs_f64() * 1e6 / calls.len() as f64
            })
            .collect();
        println!(
            "9. in memory, 200 calls of 5 Cline edits of a 500-line file ({} changes): median {:.1} µs per call",
            if changes { "with" } else { "without" },
            median(runs)
        );
    }
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
