//! A stream of any bytes in any dialect (`--stream --dialect D`): no panic;
//! the chunks handed out come in stream order without overlapping, each
//! where the stream says (its text the stream's bytes at its offset, for a
//! stream that is UTF-8), and each parses without panic.

#![no_main]

use clada_markers::ParseOptions;
use clada_markers::dialect::Dialect;
use clada_markers::stream::{Chunk, Splitter};
use libfuzzer_sys::fuzz_target;

/// How many bytes of `from` the lossy `text` was made of (whole lines).
fn raw_len(from: &[u8], text: &str) -> usize {
    let lines = text.matches('\n').count();
    let mut n = 0;
    for (i, line) in from.split_inclusive(|&b| b == b'\n').enumerate() {
        if i == lines {
            // A last line without its line break.
            return if text.ends_with('\n') {
                n
            } else {
                n + line.len()
            };
        }
        n += line.len();
    }
    n
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, stream)) = data.split_first() else {
        return;
    };
    let dialect = Dialect::ALL[usize::from(pick) % Dialect::ALL.len()];
    let mut splitter = Splitter::for_dialect(dialect);
    let mut chunks: Vec<Chunk> = Vec::new();
    for line in stream.split_inclusive(|&b| b == b'\n') {
        chunks.extend(splitter.push_bytes(line));
    }
    chunks.extend(splitter.finish());
    let mut end = 0;
    for c in &chunks {
        // The stream's bytes at the chunk's offset, bytes that are not
        // UTF-8 replaced, are its text; chunks follow one another.
        assert!(c.offset >= end, "chunks overlap or go back: {chunks:?}");
        let from = stream.get(c.offset..).expect("an offset in the stream");
        let there = String::from_utf8_lossy(from);
        assert!(there.starts_with(&c.text), "{c:?} is not at its offset");
        end = c.offset + raw_len(from, &c.text);
        let line = 1 + stream[..c.offset].iter().filter(|&&b| b == b'\n').count();
        assert_eq!(c.line, line);
        let doc = c.document(ParseOptions::default());
        for d in &doc.diagnostics {
            assert!(d.span.end <= c.text.len());
        }
    }
});
