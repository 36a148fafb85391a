//! The unified-diff front end on any bytes: no panic, every span in
//! bounds and on character boundaries, what reads without errors converts
//! to clada text that parses back to the same operations, and what
//! converts back to a unified diff reads as the same operations again
//! (but their line hints: the diff it writes has no `@@` numbers).

#![no_main]

#[path = "common/mod.rs"]
mod common;

use clada_markers::ParseOptions;
use clada_markers::dialect::{Dialect, convert, parse_dialect};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::dialect(data, Dialect::Udiff);
    let Ok(src) = clada_markers::decode(data) else { return };
    let doc = parse_dialect(src, Dialect::Udiff, ParseOptions::default());
    if !doc.has_errors()
        && let Ok(text) = convert(&doc, Dialect::Udiff)
    {
        let again = parse_dialect(&text, Dialect::Udiff, ParseOptions::default());
        assert!(!again.has_errors(), "{text}");
        assert_eq!(common::ops(&doc), common::ops(&again), "{text}");
    }
});
