//! The aider front end on any bytes: no panic, every span in bounds and on
//! character boundaries, and what reads without errors converts to clada
//! text that parses back to the same operations.

#![no_main]

use clada_markers::dialect::{Dialect, convert, parse_dialect};
use clada_markers::{ParseOptions, Span, decode, parse};
use libfuzzer_sys::fuzz_target;

fn in_bounds(src: &str, s: Span) {
    assert!(s.start <= s.end && s.end <= src.len(), "{s:?} out of bounds");
    assert!(src.is_char_boundary(s.start) && src.is_char_boundary(s.end));
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = decode(data) else { return };
    let doc = parse_dialect(src, Dialect::Aider, ParseOptions::default());
    for u in &doc.units {
        in_bounds(src, u.span());
        for t in u.tasks() {
            in_bounds(src, t.span);
            for a in &t.attributes {
                in_bounds(src, a.span);
            }
        }
    }
    for d in &doc.diagnostics {
        in_bounds(src, d.span);
    }
    if !doc.has_errors()
        && let Ok(text) = convert(&doc, Dialect::Clada)
    {
        let again = parse(&text);
        assert!(!again.has_errors(), "{text}");
        let a: Vec<_> = doc.tasks().map(|t| &t.op).collect();
        let b: Vec<_> = again.tasks().map(|t| &t.op).collect();
        assert_eq!(a, b, "{text}");
    }
});
