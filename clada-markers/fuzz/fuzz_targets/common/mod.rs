//! What every fuzz target checks of a document: spans in bounds and on
//! character boundaries, and for another dialect, that what reads without
//! errors converts to clada text that parses back to the same operations.

#![allow(dead_code)] // each target uses part of it

use std::collections::BTreeMap;

use clada_markers::dialect::{Dialect, convert, parse_dialect};
use clada_markers::report::{Matched, TaskStatus};
use clada_markers::{
    Document, Matching, Op, ParseOptions, Settings, Span, apply_files, decode, parse,
};

/// The largest input the text targets read: larger ones are passed over
/// (the parser is linear; a larger document only costs more per input,
/// and `-max_len=4096` keeps libFuzzer's well below).
pub const MAX_INPUT: usize = 64 * 1024;

pub fn in_bounds(src: &str, s: Span) {
    assert!(
        s.start <= s.end && s.end <= src.len(),
        "{s:?} out of bounds"
    );
    assert!(src.is_char_boundary(s.start) && src.is_char_boundary(s.end));
}

/// Every span of `doc`: units, tasks, attributes, sections, diagnostics.
pub fn spans_in_bounds(src: &str, doc: &Document<'_>) {
    for u in &doc.units {
        in_bounds(src, u.span());
        for t in u.tasks() {
            in_bounds(src, t.span);
            for a in &t.attributes {
                in_bounds(src, a.span);
            }
            for s in &t.sections {
                in_bounds(src, *s);
            }
        }
    }
    for d in &doc.diagnostics {
        in_bounds(src, d.span);
    }
}

/// The front end of `dialect` on any bytes.
pub fn dialect(data: &[u8], dialect: Dialect) {
    if data.len() > MAX_INPUT {
        return;
    }
    let Ok(src) = decode(data) else { return };
    let doc = parse_dialect(src, dialect, ParseOptions::default());
    spans_in_bounds(src, &doc);
    if !doc.has_errors()
        && let Ok(text) = convert(&doc, Dialect::Clada)
    {
        let again = parse(&text);
        assert!(!again.has_errors(), "{text}");
        assert_eq!(ops(&doc), ops(&again), "{text}");
    }
    applied_in_memory(src, &doc, dialect, data.first().copied().unwrap_or(0));
}

/// The document applied in memory to files made of its own search texts
/// (each file's edits' search texts, in order, the whole repeated when
/// `shape` says so, to make candidates several, or after a first
/// byte that makes its first line longer): the engine's paths for
/// the dialect (whole lines, the end of the file, kept context lines,
/// order, line hints) on any input. No panic; the report serializes; `ok`
/// exactly when every task holds; and an exact whole-line edit, its file's
/// last, leaves each line of its replacement standing as a whole line.
pub fn applied_in_memory(src: &str, doc: &Document<'_>, dialect: Dialect, shape: u8) {
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for op in doc.tasks().filter_map(|t| t.op.as_ref()) {
        if let Op::Edit { path, search, .. } = op {
            let file = files.entry(path.to_string()).or_default();
            file.extend_from_slice(search.as_bytes());
            if shape & 1 == 1 && !search.ends_with('\n') {
                file.push(b'\n');
            }
        }
    }
    for file in files.values_mut() {
        if shape & 2 == 2 {
            file.extend_from_within(..);
        }
        if shape & 4 == 4 {
            file.splice(0..0, *b"x\n");
        }
        // The search text inside a longer first line: a whole-line edit
        // must not take it.
        if shape & 8 == 8 {
            file.insert(0, b'f');
        }
    }
    let settings = Settings {
        dialect,
        ..Settings::default()
    };
    let Ok((after, report)) = apply_files(src, files, &settings) else {
        return;
    };
    serde_json::to_string(&report).expect("the report serializes");
    let tasks: Vec<_> = report.blocks.iter().flat_map(|b| &b.tasks).collect();
    if report.ok {
        assert!(
            tasks.iter().all(|t| t.status.holds()),
            "ok with a task that does not hold"
        );
    }
    // The last edit of each file, when it is the file's last task.
    let mut last: BTreeMap<&str, Option<(&Op<'_>, usize)>> = BTreeMap::new();
    for task in doc.tasks() {
        let Some(op) = &task.op else { continue };
        let paths = match op {
            Op::Write { path, .. }
            | Op::Edit { path, .. }
            | Op::EditRange { path, .. }
            | Op::Remove { path } => vec![path.as_str()],
            Op::Move { from, to } => vec![from.as_str(), to.as_str()],
            Op::Run { .. } => continue,
        };
        let edit = matches!(op, Op::Edit { .. }).then_some((op, task.number));
        for path in paths {
            last.insert(path, edit);
        }
    }
    for (path, edit) in last {
        let Some((
            Op::Edit {
                replace, matching, ..
            },
            number,
        )) = edit
        else {
            continue;
        };
        let Some(task) = tasks.iter().find(|t| t.number == number) else {
            continue;
        };
        if !matching.whole_lines
            || task.status != TaskStatus::Success
            || task.matched != Some(Matched::Exact)
        {
            continue;
        }
        let Some(file) = after.get(path) else {
            continue;
        };
        let lines: Vec<&[u8]> = file.split(|&b| b == b'\n').collect();
        for line in replace.split_terminator('\n') {
            assert!(
                lines.contains(&line.as_bytes()),
                "{path}: the replacement's line {line:?} is not a whole line of the result"
            );
        }
    }
}

/// The operations of `doc`, without the matching policy and line hint its
/// dialect gave them: what clada text and `@@ ... @@` hunks do not carry.
pub fn ops<'a>(doc: &Document<'a>) -> Vec<Option<Op<'a>>> {
    doc.tasks()
        .map(|t| {
            let mut op = t.op.clone();
            if let Some(Op::Edit { matching, .. } | Op::EditRange { matching, .. }) = &mut op {
                *matching = Matching::default();
            }
            op
        })
        .collect()
}
