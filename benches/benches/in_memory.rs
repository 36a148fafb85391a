//! The in-memory apply (`clada_markers::apply_files`) against spawning
//! the CLI per reply, on the real aider replies of
//! `corpus/aider-history/` (`--dialect aider`), in one run.
//!
//! Each reply with SEARCH/REPLACE blocks gets the files it edits, each
//! made of the SEARCH texts of its blocks (once each, between lines of
//! filler), so that its edits find their text. In memory: every reply
//! applied to its files, one after the other, in this process; the CLI:
//! `clada apply --dialect aider --no-git --format json` on a copy of the
//! same files written before the clock starts. Both give the same
//! statuses (checked). Medians of the rounds; replies per second on one
//! core.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench in_memory
//! ```
//!
//! `-- loop N`: only the in-memory apply, N passes over the replies, for
//! `perf record` (`target/release/deps/in_memory-* loop 2000` after
//! `cargo bench --no-run`); prints the time per reply. `changes`: the
//! reports with their `changes` (off by default in memory).

use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{aider_replies, clada_binary, median};
use clada_markers::dialect::Dialect;
use clada_markers::{Settings, apply_files};

const ROUNDS: usize = 7;
/// In-memory passes over all replies per round (one is too short to time).
const PASSES: usize = 20;

fn statuses(report: &serde_json::Value) -> Vec<String> {
    report["blocks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|b| b["tasks"].as_array().into_iter().flatten())
        .map(|t| t["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The CPU time of this process so far, user and system, in ms.
fn cpu_ms() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |u| {
        let ms = |t: nix::sys::time::TimeVal| {
            t.tv_sec() as f64 * 1000.0 + f64::from(t.tv_usec() as i32) / 1000.0
        };
        ms(u.user_time()) + ms(u.system_time())
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let cases = aider_replies::corpus_cases().expect("corpus/aider-history");
    let args: Vec<String> = std::env::args().collect();
    let settings = Settings {
        dialect: Dialect::Aider,
        changes: args.iter().any(|a| a == "changes"),
        ..Settings::in_memory()
    };
    if let Some(at) = args.iter().position(|a| a == "loop") {
        let passes: usize = args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
        let (start, cpu) = (Instant::now(), cpu_ms());
        for _ in 0..passes {
            for (reply, files) in &cases {
                let out = apply_files(reply, files.clone(), &settings).expect("apply_files");
                std::hint::black_box(out);
            }
        }
        let calls = (passes * cases.len()) as f64;
        let wall = start.elapsed().as_secs_f64() * 1000.0 / calls;
        let cpu = (cpu_ms() - cpu) / calls;
        println!("in memory (apply_files): {wall:8.4} ms per reply, {cpu:8.4} ms CPU");
        return;
    }
    let clada = clada_binary();
    let scratch = tempfile::tempdir().expect("scratch");

    // The answers agree: the same statuses, task for task.
    let mut memory_reports = Vec::new();
    for (reply, files) in &cases {
        let (_, report) = apply_files(reply, files.clone(), &settings).expect("apply_files");
        memory_reports.push(statuses(&serde_json::to_value(&report).expect("json")));
    }

    let mut memory_ms = Vec::new();
    let mut cli_ms = Vec::new();
    for round in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..PASSES {
            for (reply, files) in &cases {
                let out = apply_files(reply, files.clone(), &settings).expect("apply_files");
                std::hint::black_box(out);
            }
        }
        memory_ms.push(start.elapsed().as_secs_f64() * 1000.0 / PASSES as f64);

        // Copies written before the clock starts.
        let dirs: Vec<_> = cases
            .iter()
            .enumerate()
            .map(|(i, (reply, files))| {
                let dir = scratch.path().join(format!("{round}-{i}"));
                for (p, c) in files {
                    let at = dir.join("root").join(p);
                    std::fs::create_dir_all(at.parent().expect("parent")).expect("dir");
                    std::fs::write(at, c).expect("file");
                }
                std::fs::write(dir.join("reply.md"), reply).expect("reply");
                dir
            })
            .collect();
        let start = Instant::now();
        let mut outputs = Vec::new();
        for dir in &dirs {
            let out = Command::new(&clada)
                .args([
                    "apply",
                    "--dialect",
                    "aider",
                    "--no-git",
                    "--format",
                    "json",
                    "-C",
                ])
                .arg(dir.join("root"))
                .arg(dir.join("reply.md"))
                .env("HOME", scratch.path())
                .stderr(Stdio::null())
                .output()
                .expect("clada");
            outputs.push(out.stdout);
        }
        cli_ms.push(start.elapsed().as_secs_f64() * 1000.0);
        if round == 0 {
            for (i, out) in outputs.iter().enumerate() {
                let report: serde_json::Value = serde_json::from_slice(out).expect("json");
                assert_eq!(statuses(&report), memory_reports[i], "reply {i}");
            }
        }
    }
    let n = cases.len() as f64;
    let (m, c) = (median(memory_ms), median(cli_ms));
    let tasks: usize = memory_reports.iter().map(Vec::len).sum();
    println!(
        "{} aider replies, {tasks} edits (corpus/aider-history)",
        cases.len()
    );
    println!(
        "in memory (apply_files): {:8.3} ms per reply, {:8.0} replies/s",
        m / n,
        n * 1000.0 / m
    );
    println!(
        "CLI per reply (spawn):   {:8.3} ms per reply, {:8.0} replies/s",
        c / n,
        n * 1000.0 / c
    );
    println!("in memory is {:.1}x the CLI per reply", c / m);
}
