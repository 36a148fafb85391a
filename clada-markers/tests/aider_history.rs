//! aider's own chat history read as aider reads it: each reply's blocks
//! (file, SEARCH text, replacement) are the blocks of aider's gold parse,
//! block for block, and a reply aider rejects is an error.
//!
//! `corpus/aider-history/` holds a sample of aider's fixture
//! (`tests/fixtures/chat-history.md`) and the gold aider's parser gives
//! for it (see its README). The whole fixture, with the gold of aider's
//! own test, is compared by the ignored test below:
//!
//! ```sh
//! CLADA_AIDER_FIXTURES=AIDER/tests/fixtures cargo test -p clada-markers --test all -- --ignored aider
//! ```

use std::path::Path;

use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::{Op, ParseOptions};

/// A block as aider's gold prints it: file, SEARCH text, replacement.
type Block = (String, String, String);

/// What aider made of one reply: its blocks, or an error.
#[derive(Debug, PartialEq, Eq)]
enum Gold {
    Blocks(Vec<Block>),
    Error,
}

const BAR: &str = "@@@@@@@@@@@@@@@@@@@@";

/// Where the first line of `text` that starts with `marker` starts.
fn line_starting(text: &str, marker: &str) -> Option<usize> {
    if text.starts_with(marker) {
        return Some(0);
    }
    text.find(&format!("\n{marker}")).map(|i| i + 1)
}

/// The gold file: each reply aider read blocks (or an error) from, by its
/// header, in order. A reply's header starts with `####` (the text is cut
/// there); a block is `@@@ SEARCH: FILE`, its SEARCH text, a bar, its
/// replacement and `@@@ REPLACE`, each marker at a line start.
fn read_gold(text: &str) -> Vec<(String, Gold)> {
    let mut out = Vec::new();
    for entry in text.split("\n\n@@@ ####").skip(1) {
        let (head, body) = entry.split_once('\n').unwrap_or((entry, ""));
        let head = head.strip_suffix(BAR).unwrap_or(head).trim_end();
        let header = format!("####{head}");
        let mut blocks = Vec::new();
        let mut rest = body;
        let mut error = true;
        loop {
            if let Some(r) = rest.strip_prefix("@@@ SEARCH: ") {
                error = false;
                let (name, r) = r.split_once('\n').unwrap_or((r, ""));
                let name = name.strip_suffix(BAR).unwrap_or(name).trim_end();
                let bar = format!("{BAR}\n");
                let at = line_starting(r, &bar).unwrap_or(r.len());
                let (search, r) = (&r[..at], r.get(at + bar.len()..).unwrap_or_default());
                let end = line_starting(r, "@@@ REPLACE ").unwrap_or(r.len());
                blocks.push((name.to_owned(), search.to_owned(), r[..end].to_owned()));
                rest = r[end..].split_once('\n').map_or("", |x| x.1);
            } else if let Some(r) = rest.strip_prefix("@@@ SHELL ") {
                error = false;
                let end = line_starting(r, "@@@ ENDSHELL ").unwrap_or(r.len());
                rest = r[end..].split_once('\n').map_or("", |x| x.1);
            } else {
                break;
            }
        }
        let gold = if error && blocks.is_empty() {
            Gold::Error
        } else {
            Gold::Blocks(blocks)
        };
        out.push((header, gold));
    }
    out
}

/// The replies of a chat history as aider's test splits it: at each
/// `####` followed by white space, its first line the header.
fn replies(history: &str) -> Vec<(String, &str)> {
    let b = history.as_bytes();
    let mut cuts: Vec<usize> = (0..b.len().saturating_sub(4))
        .filter(|&i| &b[i..i + 4] == b"####" && b[i + 4].is_ascii_whitespace())
        .collect();
    cuts.insert(0, 0);
    cuts.push(history.len());
    cuts.windows(2)
        .map(|w| &history[w[0]..w[1]])
        .filter(|s| !s.contains("editblock_coder.py") && !s.contains("test_editblock.py"))
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            let header = s.split('\n').next().unwrap_or_default().trim().to_owned();
            let body = s.split_once('\n').map_or("", |x| x.1);
            (header, body)
        })
        .collect()
}

/// clada's reading of one reply: its blocks, or an error.
fn clada(reply: &str) -> Gold {
    let doc = parse_dialect(reply, Dialect::Aider, ParseOptions { allow_escape: true });
    if doc.has_errors() {
        return Gold::Error;
    }
    let blocks = doc
        .tasks()
        .filter_map(|t| match t.op.as_ref()? {
            Op::Edit {
                path,
                search,
                replace,
                ..
            } => Some((path.to_string(), search.to_string(), replace.to_string())),
            Op::Write { path, content, .. } => {
                Some((path.to_string(), String::new(), content.to_string()))
            }
            _ => None,
        })
        .collect();
    Gold::Blocks(blocks)
}

/// Compares every reply of `history` with `gold`: returns the blocks that
/// match and the gold's number of blocks, and every difference. aider
/// prints a reply only when it has blocks or an error, by its header: an
/// entry of the gold goes to the reply with its header (before the next
/// entry's header follows it) that clada reads the same (else to the first that clada reads
/// blocks or an error from, else to the first); every other reply must
/// have nothing.
fn compare(history: &str, gold: &str) -> (usize, usize, Vec<String>) {
    let gold = read_gold(gold);
    let replies: Vec<(String, Gold)> = replies(history)
        .into_iter()
        .map(|(h, r)| (h, clada(r)))
        .collect();
    let (mut same, mut total, mut diffs) = (0, 0, Vec::new());
    let mut diff = |header: &str, theirs: &Gold, ours: &Gold, diffs: &mut Vec<String>| {
        if let (Gold::Blocks(b), Gold::Blocks(o)) = (theirs, ours) {
            same += b.iter().zip(o).filter(|(x, y)| x == y).count();
        }
        if ours != theirs {
            diffs.push(format!("{header}:\n  aider: {theirs:?}\n  clada: {ours:?}"));
        }
    };
    let nothing = Gold::Blocks(Vec::new());
    let mut pos = 0;
    for (g, (header, theirs)) in gold.iter().enumerate() {
        if let Gold::Blocks(b) = theirs {
            total += b.len();
        }
        let first = (pos..replies.len()).find(|&k| replies[k].0 == *header);
        let limit = gold
            .get(g + 1)
            .filter(|(h, _)| h != header)
            .zip(first)
            .and_then(|((h, _), f)| replies[f..].iter().position(|r| &r.0 == h).map(|i| f + i))
            .unwrap_or(replies.len());
        let candidates: Vec<usize> = (pos..limit).filter(|&k| replies[k].0 == *header).collect();
        let pick = candidates
            .iter()
            .find(|&&k| replies[k].1 == *theirs)
            .or_else(|| candidates.iter().find(|&&k| replies[k].1 != nothing))
            .or(candidates.first())
            .copied();
        let Some(k) = pick else {
            diffs.push(format!("{header}: in the gold, not among the replies"));
            continue;
        };
        for (h, ours) in &replies[pos..k] {
            diff(h, &nothing, ours, &mut diffs);
        }
        diff(header, theirs, &replies[k].1, &mut diffs);
        pos = k + 1;
    }
    for (h, ours) in &replies[pos..] {
        diff(h, &nothing, ours, &mut diffs);
    }
    (same, total, diffs)
}

fn check(history: &Path, gold: &Path, blocks: usize) {
    let read =
        |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let (same, total, diffs) = compare(&read(history), &read(gold));
    assert!(
        diffs.is_empty(),
        "{same}/{total} blocks match; differences:\n{}",
        diffs.join("\n")
    );
    assert_eq!((same, total), (blocks, blocks));
}

#[test]
fn aiders_chat_history_sample_reads_as_aiders_gold_block_for_block() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/aider-history");
    check(
        &dir.join("chat-history.md"),
        &dir.join("chat-history-search-replace-gold.txt"),
        70,
    );
}

#[test]
#[ignore = "needs aider's fixtures: CLADA_AIDER_FIXTURES=AIDER/tests/fixtures"]
fn aiders_whole_chat_history_reads_as_aiders_gold_block_for_block() {
    let dir = std::env::var_os("CLADA_AIDER_FIXTURES")
        .expect("set CLADA_AIDER_FIXTURES to aider's tests/fixtures directory");
    let dir = Path::new(&dir);
    check(
        &dir.join("chat-history.md"),
        &dir.join("chat-history-search-replace-gold.txt"),
        577,
    );
}
