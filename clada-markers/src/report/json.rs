//! A JSON report written a block at a time: the fields before `blocks`
//! are known from the start, those after it once every block is written.
//! The bytes are those `serde_json::to_writer_pretty` writes for the whole
//! report.

use std::io::{self, Write};

use serde::Serialize;

/// Writes a report whose `blocks` come third, after `version` and
/// `dialect` ([`super::ApplyReport`], [`super::CheckReport`]): each block
/// as it comes, then the rest.
pub struct JsonReport<W: Write> {
    out: W,
    /// The report up to and including the `[` that opens its blocks.
    head: String,
    /// Blocks written so far.
    blocks: usize,
    /// The first error; nothing more is written after it.
    error: Option<io::Error>,
}

impl<W: Write> std::fmt::Debug for JsonReport<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonReport")
            .field("blocks", &self.blocks)
            .finish_non_exhaustive()
    }
}

/// The key that opens the list of blocks, at the report's top level.
const BLOCKS: &str = "\n  \"blocks\": [";

impl<W: Write> JsonReport<W> {
    /// A writer to `out` of reports that begin as `empty`, a report of
    /// nothing with the same fields before its blocks (its version and
    /// dialect).
    pub fn new(out: W, empty: &impl Serialize) -> Self {
        let mut error = None;
        let head = match serde_json::to_string_pretty(empty) {
            Ok(text) => match text.find(BLOCKS) {
                Some(at) => text[..at + BLOCKS.len()].to_owned(),
                None => {
                    error = Some(io::Error::other("the report has no blocks to write"));
                    String::new()
                }
            },
            Err(e) => {
                error = Some(e.into());
                String::new()
            }
        };
        JsonReport {
            out,
            head,
            blocks: 0,
            error,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }

    /// Writes the next block.
    pub fn write_block(&mut self, block: &impl Serialize) {
        // A JSON string holds no raw newline: each one is a line break of
        // the pretty printer, indented two levels further here.
        let text = match serde_json::to_string_pretty(block) {
            Ok(text) => text,
            Err(e) => {
                self.error.get_or_insert(e.into());
                return;
            }
        };
        if self.blocks == 0 {
            let head = std::mem::take(&mut self.head);
            self.write(head.as_bytes());
            self.head = head;
        } else {
            self.write(b",");
        }
        self.blocks += 1;
        self.write(b"\n    ");
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.write(b"\n    ");
            }
            self.write(line.as_bytes());
        }
    }

    /// Writes the rest of `report`, whose blocks were written already (it
    /// has none of its own) or are its own (none were written), and a
    /// newline; the first error met on the way, if any.
    pub fn finish(mut self, report: &impl Serialize) -> io::Result<W> {
        let whole = serde_json::to_string_pretty(report).map_err(io::Error::from)?;
        if self.blocks > 0 {
            // What was written before the blocks must be what the report
            // says, its version and dialect; and its own list is empty.
            let empty = format!("{}]", self.head);
            if !whole.starts_with(&empty) {
                return Err(io::Error::other(
                    "the report does not begin as its blocks were written, or has blocks of its own",
                ));
            }
            let rest = &whole[self.head.len()..];
            self.write(b"\n  ");
            self.write(rest.as_bytes());
        } else {
            self.write(whole.as_bytes());
        }
        self.write(b"\n");
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}
