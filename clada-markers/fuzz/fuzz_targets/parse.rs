//! Feeds arbitrary bytes through decode, parse, render and print, checking
//! the parser's invariants: no panic, every span in bounds, tokens that tile
//! the input, and printing a clean document round-trips its operations.

#![no_main]

#[path = "common/mod.rs"]
mod common;

use clada_markers::syntax::lex;
use clada_markers::{decode, parse, print, render};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > common::MAX_INPUT {
        return;
    }
    let Ok(src) = decode(data) else { return };
    let mut at = 0;
    for t in lex(src) {
        assert_eq!(t.span().start, at);
        at = t.span().end;
    }
    assert_eq!(at, src.len());

    let doc = parse(src);
    common::spans_in_bounds(src, &doc);
    for d in &doc.diagnostics {
        assert_ne!(d.kind, clada_markers::syntax::DiagnosticKind::Internal, "{d:?}");
    }
    let _ = render(&doc.diagnostics, src, "fuzz", false);

    if !doc.has_errors() {
        if let Ok(printed) = print(&doc.units) {
            let again = parse(&printed);
            assert!(!again.has_errors(), "{printed}");
            let a: Vec<_> = doc.tasks().map(|t| &t.op).collect();
            let b: Vec<_> = again.tasks().map(|t| &t.op).collect();
            assert_eq!(a, b, "{printed}");
        }
    }
});
