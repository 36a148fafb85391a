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

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{clada_binary, median};
use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::{Op, ParseOptions, Settings, apply_files};

const ROUNDS: usize = 7;
/// In-memory passes over all replies per round (one is too short to time).
const PASSES: usize = 20;

/// The replies of a chat history as aider's test splits it: at each
/// `####` followed by white space.
fn replies(history: &str) -> Vec<&str> {
    let b = history.as_bytes();
    let mut cuts: Vec<usize> = (0..b.len().saturating_sub(4))
        .filter(|&i| &b[i..i + 4] == b"####" && b[i + 4].is_ascii_whitespace())
        .collect();
    cuts.insert(0, 0);
    cuts.push(history.len());
    cuts.windows(2).map(|w| &history[w[0]..w[1]]).collect()
}

/// A reply's files: each path it edits, holding its SEARCH texts.
fn files_of(reply: &str) -> Option<BTreeMap<String, Vec<u8>>> {
    let doc = parse_dialect(reply, Dialect::Aider, ParseOptions::default());
    if doc.has_errors() {
        return None;
    }
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in doc.tasks() {
        if let Some(Op::Edit { path, search, .. }) = &t.op {
            let texts = files.entry(path.to_string()).or_default();
            if !search.is_empty() && !texts.iter().any(|s| s == search.as_ref()) {
                texts.push(search.to_string());
            }
        }
    }
    if files.is_empty() {
        return None;
    }
    Some(
        files
            .into_iter()
            .map(|(p, texts)| {
                let mut body = String::from("# filler\n");
                for s in texts {
                    body.push_str(&s);
                    if !s.ends_with('\n') {
                        body.push('\n');
                    }
                    body.push_str("# filler\n");
                }
                (p, body.into_bytes())
            })
            .collect(),
    )
}

fn statuses(report: &serde_json::Value) -> Vec<String> {
    report["blocks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|b| b["tasks"].as_array().into_iter().flatten())
        .map(|t| t["status"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/aider-history");
    let history = std::fs::read_to_string(corpus.join("chat-history.md")).expect("corpus");
    let cases: Vec<(&str, BTreeMap<String, Vec<u8>>)> = replies(&history)
        .into_iter()
        .filter_map(|r| files_of(r).map(|f| (r, f)))
        // A reply that names a file with a `\` (Windows paths) names no
        // key a map may hold: left out.
        .filter(|(_, f)| apply_files("", f.clone(), &Settings::default()).is_ok())
        .collect();
    let settings = Settings {
        dialect: Dialect::Aider,
        ..Settings::default()
    };
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
