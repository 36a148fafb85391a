//! `clada check` on a 48 MiB document against `grep -c '^<<<<<<< '` on the
//! same file: wall time (medians over alternating runs) and peak memory.
//!
//! Build the binary first, then run the bench:
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench check_cli
//! ```
//!
//! Each command runs under a small measuring process (this bench binary,
//! started again with `--measure`), which reports the child's wall time and
//! its peak resident set size from `getrusage(RUSAGE_CHILDREN)`.

use clada_benches::{MIB, clada_binary, content_heavy, run_measured};

const RUNS: usize = 15;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        clada_benches::measure(&args[i + 1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary();
    let doc = content_heavy(48 * MIB);
    let path = std::env::temp_dir().join(format!("clada-bench-{}.md", std::process::id()));
    if let Err(e) = std::fs::write(&path, &doc) {
        eprintln!("cannot write {}: {e}", path.display());
        std::process::exit(1);
    }
    let file = path.to_string_lossy().into_owned();
    let clada_cmd = vec![
        clada.to_string_lossy().into_owned(),
        "check".into(),
        file.clone(),
    ];
    let grep_cmd = vec![
        "grep".to_owned(),
        "-c".into(),
        "^<<<<<<< ".into(),
        file.clone(),
    ];

    // Warm the page cache and both binaries.
    run_measured(&clada_cmd);
    run_measured(&grep_cmd);
    let mut clada_runs = Vec::new();
    let mut grep_runs = Vec::new();
    for i in 0..RUNS {
        // Alternate the order so neither side always runs second.
        if i % 2 == 0 {
            clada_runs.push(run_measured(&clada_cmd));
            grep_runs.push(run_measured(&grep_cmd));
        } else {
            grep_runs.push(run_measured(&grep_cmd));
            clada_runs.push(run_measured(&clada_cmd));
        }
    }
    let _ = std::fs::remove_file(&path);

    let size_mib = doc.len() as f64 / MIB as f64;
    let (ct, cm) = medians(&clada_runs);
    let (gt, gm) = medians(&grep_runs);
    let peak = clada_runs.iter().map(|r| r.1).max().unwrap_or(0);
    println!("document: {size_mib:.1} MiB, content-heavy, {RUNS} runs each");
    println!(
        "grep -c '^<<<<<<< '  median {gt:8.2} ms   median peak RSS {:7.1} MiB",
        gm as f64 / 1024.0
    );
    println!(
        "clada check          median {ct:8.2} ms   median peak RSS {:7.1} MiB (max {:.1})",
        cm as f64 / 1024.0,
        peak as f64 / 1024.0
    );
    println!("time ratio clada/grep: {:.2}x (target <= 1.5x)", ct / gt);
    println!(
        "clada peak RSS / document size: {:.2}x (target <= 1.2x)",
        peak as f64 / 1024.0 / size_mib
    );
}

fn medians(runs: &[(f64, u64)]) -> (f64, u64) {
    let mut t: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let mut m: Vec<u64> = runs.iter().map(|r| r.1).collect();
    t.sort_by(f64::total_cmp);
    m.sort_unstable();
    (t[t.len() / 2], m[m.len() / 2])
}
