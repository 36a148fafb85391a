//! The real aider replies of `corpus/aider-history/` as cases of the
//! in-memory apply: each reply with SEARCH/REPLACE blocks and the files it
//! edits, each made of the SEARCH texts of its blocks (once each, between
//! lines of filler), so that its edits find their text.
//!
//! One set of cases for `--bench in_memory`, for `gen aider-replies` (JSON
//! Lines, the records of `examples/batch/apply.py`) and so for the Python
//! and Ray benchmarks that read them.

use std::collections::BTreeMap;
use std::path::Path;

use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::{Op, ParseOptions, Settings, apply_files};

/// A reply and the files it edits: path below the root to contents.
pub type Case = (String, BTreeMap<String, Vec<u8>>);

/// The replies of a chat history as aider's test splits it: at each
/// `####` followed by white space.
pub fn replies(history: &str) -> Vec<&str> {
    let b = history.as_bytes();
    let mut cuts: Vec<usize> = (0..b.len().saturating_sub(4))
        .filter(|&i| &b[i..i + 4] == b"####" && b[i + 4].is_ascii_whitespace())
        .collect();
    cuts.insert(0, 0);
    cuts.push(history.len());
    cuts.windows(2).map(|w| &history[w[0]..w[1]]).collect()
}

/// A reply's files: each path it edits, holding its SEARCH texts; `None`
/// for a reply without SEARCH/REPLACE blocks.
pub fn files_of(reply: &str) -> Option<BTreeMap<String, Vec<u8>>> {
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

/// The cases of the chat history in `corpus/aider-history/`.
pub fn corpus_cases() -> std::io::Result<Vec<Case>> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/aider-history");
    let history = std::fs::read_to_string(corpus.join("chat-history.md"))?;
    Ok(replies(&history)
        .into_iter()
        .filter_map(|r| files_of(r).map(|f| (r.to_owned(), f)))
        // A reply that names a file with a `\` (Windows paths) names no
        // key a map may hold: left out.
        .filter(|(_, f)| apply_files("", f.clone(), &Settings::default()).is_ok())
        .collect())
}

/// The cases as JSON Lines, one `{"files", "reply", "dialect": "aider"}`
/// a line.
pub fn jsonl(cases: &[Case]) -> String {
    let mut out = String::new();
    for (reply, files) in cases {
        let files: BTreeMap<&str, String> = files
            .iter()
            .map(|(p, c)| (p.as_str(), String::from_utf8_lossy(c).into_owned()))
            .collect();
        let record = serde_json::json!({ "files": files, "reply": reply, "dialect": "aider" });
        out.push_str(&record.to_string());
        out.push('\n');
    }
    out
}
