//! What every fuzz target checks of a document: spans in bounds and on
//! character boundaries, and for another dialect, that what reads without
//! errors converts to clada text that parses back to the same operations.

#![allow(dead_code)] // each target uses part of it

use clada_markers::dialect::{Dialect, convert, parse_dialect};
use clada_markers::{Document, Matching, Op, ParseOptions, Span, decode, parse};

/// The largest input the text targets read: larger ones are passed over
/// (the parser is linear; a larger document only costs more per input,
/// and `-max_len=4096` keeps libFuzzer's well below).
pub const MAX_INPUT: usize = 64 * 1024;

pub fn in_bounds(src: &str, s: Span) {
    assert!(s.start <= s.end && s.end <= src.len(), "{s:?} out of bounds");
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
