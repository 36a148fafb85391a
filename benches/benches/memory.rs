//! Peak memory of the release `clada` binary, each run under
//! `/usr/bin/time -f %M`, against the size of what it reads:
//!
//! - `clada check` of the 48 MiB content-heavy (target: at most 1.2× the
//!   document) and task-heavy (at most 3×) documents, text and JSON;
//! - `clada apply --no-git --format json` of a million small tasks
//!   (`small_tasks`: REMOVE tasks of a million empty files; at most 4×),
//!   and the same with `--stream --format jsonl` (one unit at a time);
//! - a `count="all"` edit with 2,000,000 matches (`count_all_fixture`),
//!   `--format json`: peak RSS against the edited file, and the report's
//!   size;
//! - `clada check` of 100,000 units each with one error
//!   (`every_unit_an_error`), text and JSON;
//! - every dialect (`dialects`, issue 29 item 9): each family of
//!   `MEMORY_FAMILIES` at 1, 2, 4 and 8 MiB (`MEMORY_SIZES=1,2` for
//!   others), `clada check`, `clada apply --dry-run --format json` and
//!   `clada apply --stream --format jsonl` (`MEMORY_COMMANDS=check,dry-run`
//!   for some): peak RSS above the binary's
//!   own (`clada check` of an empty file) against the document, and how it
//!   grows with each doubling (target: at most 4x the document). With
//!   `CLADA_BEFORE=OLD`, the binary OLD is measured beside it, case by case.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench memory
//! cargo bench -p clada-benches --bench memory -- dialects   # the dialects only
//! ```
//!
//! Every input can be written with `gen` (see `src/bin/gen.rs`). Each run
//! that changes a tree gets a fresh one, and its result is checked. RSS is
//! the largest of the runs, the time their median.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{
    MEMORY_FAMILIES, MIB, clada_binary, content_heavy, count_all_fixture, every_unit_an_error,
    median, memory_family, small_tasks, task_heavy, write_small_tree,
};

/// What a run needs in its root and what it must leave there.
enum Tree {
    /// No tree: `clada check`.
    None,
    /// The empty files of `small_tasks(n)`; none must remain.
    Small(usize),
    /// `ticks.txt` of `count_all_fixture(n)`; every line must be `tock`.
    Ticks(usize),
}

struct Case {
    name: String,
    /// The document.
    doc: PathBuf,
    /// `clada` arguments before `-C ROOT` (for a tree) and the document.
    args: Vec<String>,
    tree: Tree,
    /// The size the peak RSS is set against, bytes (the document's, or the
    /// edited file's when the document is tiny).
    against: u64,
    runs: usize,
    /// The largest peak RSS allowed, in multiples of `against`.
    target: Option<f64>,
    /// The exit code the run must have.
    code: i32,
}

struct Run {
    kib: u64,
    ms: f64,
    /// The size of what clada wrote to stdout (the report; `clada check`
    /// prints a repeated problem once).
    bytes: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.iter().any(|a| a == "dialects") {
        dialects();
        return;
    }
    let clada = clada_binary();
    let dir = std::env::temp_dir().join(format!("clada-bench-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("document");
        p
    };
    let strings = |a: &[&str]| -> Vec<String> { a.iter().map(|s| (*s).to_owned()).collect() };
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);

    let content = write("content-heavy.md", &content_heavy(48 * MIB));
    let tasks = write("task-heavy.md", &task_heavy(48 * MIB));
    const SMALL: usize = 1_000_000;
    let small = write("small-tasks.md", &small_tasks(SMALL));
    const MATCHES: usize = 2_000_000;
    let (ticks, count_doc) = count_all_fixture(MATCHES);
    let count_all = write("count-all.md", &count_doc);
    let errors = write("errors.md", &every_unit_an_error(100_000));

    let mut cases = Vec::new();
    for (doc, what, target) in [
        (&content, "content-heavy", 1.2),
        (&tasks, "task-heavy", 3.0),
    ] {
        for format in ["text", "json"] {
            cases.push(Case {
                name: format!("check {what} 48 MiB, {format}"),
                doc: doc.clone(),
                args: strings(&["check", "--format", format]),
                tree: Tree::None,
                against: size(doc),
                runs: 3,
                target: Some(target),
                code: 0,
            });
        }
    }
    for (how, flags) in [
        ("json, --no-git", &["--format", "json"][..]),
        ("--stream jsonl", &["--stream", "--format", "jsonl"][..]),
    ] {
        let mut args = strings(&["apply", "--no-git"]);
        args.extend(strings(flags));
        cases.push(Case {
            name: format!("apply 1M REMOVE tasks, {how}"),
            doc: small.clone(),
            args,
            tree: Tree::Small(SMALL),
            against: size(&small),
            runs: 1,
            target: Some(4.0),
            code: 0,
        });
    }
    cases.push(Case {
        name: "apply count=all 2M matches, json (file)".into(),
        doc: count_all.clone(),
        args: strings(&["apply", "--no-git", "--format", "json"]),
        tree: Tree::Ticks(MATCHES),
        against: ticks.len() as u64,
        runs: 3,
        target: None,
        code: 0,
    });
    for format in ["text", "json"] {
        cases.push(Case {
            name: format!("check 100k error units, {format}"),
            doc: errors.clone(),
            args: strings(&["check", "--format", format]),
            tree: Tree::None,
            against: size(&errors),
            runs: 3,
            target: None,
            code: 1,
        });
    }

    println!(
        "peak RSS of {} (/usr/bin/time -f %M): the largest of the runs; time: their median",
        clada.display()
    );
    println!(
        "{:<42} {:>9} {:>9} {:>8} {:>8} {:>6} {:>12} {:>8}",
        "case", "input MiB", "RSS MiB", "RSS/in", "target", "met", "report B", "ms"
    );
    let root = dir.join("root");
    let out = dir.join("out");
    for c in &cases {
        let mut runs = Vec::new();
        for _ in 0..c.runs {
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).expect("root");
            match c.tree {
                Tree::None => {}
                Tree::Small(n) => write_small_tree(n, &root).expect("tree"),
                Tree::Ticks(_) => std::fs::write(root.join("ticks.txt"), &ticks).expect("tree"),
            }
            let at = match c.tree {
                Tree::None => None,
                _ => Some(root.as_path()),
            };
            let (run, code) = run(&clada, &c.args, at, &c.doc, &out, &dir.join("time"));
            assert_eq!(code, c.code, "{}: exit code", c.name);
            check_tree(&c.tree, &root, &c.name);
            runs.push(run);
        }
        let input = c.against as f64 / MIB as f64;
        let rss = runs.iter().map(|r| r.kib).max().unwrap_or(0) as f64 / 1024.0;
        let ms = median(runs.iter().map(|r| r.ms).collect());
        let bytes = runs.iter().map(|r| r.bytes).max().unwrap_or(0);
        let ratio = rss / input;
        let (target, met) = match c.target {
            Some(t) => (
                format!("<= {t}x"),
                if ratio <= t { "yes" } else { "no" }.to_owned(),
            ),
            None => (String::new(), String::new()),
        };
        println!(
            "{:<42} {input:>9.1} {rss:>9.1} {ratio:>7.2}x {target:>8} {met:>6} {bytes:>12} {ms:>8.0}",
            c.name
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `clada ARGS [-C ROOT] DOC` under `/usr/bin/time -f %M`, its output
/// written to `out`: the run and clada's exit code.
fn run(
    clada: &Path,
    args: &[String],
    root: Option<&Path>,
    doc: &Path,
    out: &Path,
    time: &Path,
) -> (Run, i32) {
    let stdout = File::create(out).expect("output file");
    let mut cmd = Command::new("/usr/bin/time");
    cmd.args(["-f", "%M", "-o"]).arg(time).arg(clada).args(args);
    if let Some(root) = root {
        cmd.arg("-C").arg(root);
    }
    let start = Instant::now();
    let status = cmd
        .arg(doc)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot run /usr/bin/time: {e}"));
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let report = std::fs::read_to_string(time).unwrap_or_default();
    // `time -o` writes "Command exited with non-zero status N" before %M.
    let kib = report
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no peak RSS from /usr/bin/time: {report:?}"));
    let bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    (Run { kib, ms, bytes }, status.code().unwrap_or(-1))
}

/// Panics unless the run left the tree it should have.
fn check_tree(tree: &Tree, root: &Path, name: &str) {
    match tree {
        Tree::None => {}
        Tree::Small(_) => {
            let left = std::fs::read_dir(root)
                .expect("root")
                .flatten()
                .filter_map(|d| std::fs::read_dir(d.path()).ok())
                .map(|files| files.count())
                .sum::<usize>();
            assert_eq!(left, 0, "{name}: files left");
        }
        Tree::Ticks(n) => {
            let text = std::fs::read_to_string(root.join("ticks.txt")).expect("ticks.txt");
            assert_eq!(text, "tock\n".repeat(*n), "{name}: ticks.txt");
        }
    }
}

/// The dialects' families (`MEMORY_FAMILIES`) at doubling sizes, each
/// run once per binary (the RSS of one run moves by well under 1%).
fn dialects() {
    let mut binaries = vec![("clada", clada_binary())];
    if let Some(old) = std::env::var_os("CLADA_BEFORE") {
        binaries.insert(0, ("before", PathBuf::from(old)));
    }
    let sizes: Vec<usize> = std::env::var("MEMORY_SIZES")
        .unwrap_or_else(|_| "1,2,4,8".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let families: Vec<String> = match std::env::var("MEMORY_FAMILIES") {
        Ok(list) => list.split(',').map(str::to_owned).collect(),
        Err(_) => MEMORY_FAMILIES.iter().map(|s| (*s).to_owned()).collect(),
    };
    // A stream runs each unit on its own (a lock and a journal each):
    // slow for the families of many small units.
    let commands: Vec<String> = std::env::var("MEMORY_COMMANDS")
        .unwrap_or_else(|_| "check,dry-run,stream".into())
        .split(',')
        .map(str::to_owned)
        .collect();
    let dir = std::env::temp_dir().join(format!("clada-bench-dialects-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let (doc, root, out, time) = (
        dir.join("doc"),
        dir.join("root"),
        dir.join("out"),
        dir.join("time"),
    );
    std::fs::write(&doc, "").expect("document");
    let base: Vec<u64> = binaries
        .iter()
        .map(|(_, bin)| run(bin, &["check".into()], None, &doc, &out, &time).0.kib)
        .collect();
    for ((name, bin), kib) in binaries.iter().zip(&base) {
        println!(
            "baseline of {name} ({}): {:.1} MiB (clada check of an empty file)",
            bin.display(),
            *kib as f64 / 1024.0
        );
    }
    println!(
        "peak RSS above the baseline / the document's size, at each size; then the doubling ratios of that RSS"
    );
    let header: Vec<String> = sizes.iter().map(|s| format!("{s} MiB")).collect();
    println!(
        "{:<18} {:<7} {:<7} {:>9} {}",
        "family",
        "command",
        "binary",
        "",
        header.join(" ")
    );
    for family in &families {
        let mut made = Vec::new();
        for &mib in &sizes {
            let Some((dialect, text, file)) = memory_family(family, mib * MIB) else {
                eprintln!("no family {family}");
                return;
            };
            made.push((dialect, text, file));
        }
        for (command, flags) in [
            ("check", &["check"][..]),
            (
                "dry-run",
                &["apply", "--no-git", "--dry-run", "--format", "json"][..],
            ),
            (
                "stream",
                &["apply", "--no-git", "--stream", "--format", "jsonl"][..],
            ),
        ] {
            if !commands.iter().any(|c| c == command) {
                continue;
            }
            for ((name, bin), base) in binaries.iter().zip(&base) {
                let mut above = Vec::new();
                let mut cells = Vec::new();
                for (dialect, text, file) in &made {
                    std::fs::write(&doc, text).expect("document");
                    let _ = std::fs::remove_dir_all(&root);
                    std::fs::create_dir_all(&root).expect("root");
                    std::fs::write(root.join("f.txt"), file).expect("tree");
                    let mut args: Vec<String> = flags.iter().map(|s| (*s).to_owned()).collect();
                    args.extend(["--dialect".to_owned(), (*dialect).to_owned()]);
                    let at = (command != "check").then_some(root.as_path());
                    let (r, _) = run(bin, &args, at, &doc, &out, &time);
                    let rss = r.kib.saturating_sub(*base) as f64 * 1024.0;
                    above.push(rss);
                    cells.push(format!("{:>6.1}x", rss / text.len() as f64));
                }
                let doubling: Vec<String> = above
                    .windows(2)
                    .map(|w| format!("{:.2}x", w[1] / w[0].max(1.0)))
                    .collect();
                println!(
                    "{family:<18} {command:<7} {name:<7} {:>9} {}   doubling {}",
                    format!(
                        "{:.1} MiB",
                        above.last().copied().unwrap_or(0.0) / MIB as f64
                    ),
                    cells.join(" "),
                    doubling.join(" ")
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
