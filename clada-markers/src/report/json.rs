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

    /// Writes the next block, straight to the output: a block of many
    /// tasks is never held as text as well.
    pub fn write_block(&mut self, block: &impl Serialize) {
        if self.error.is_some() {
            return;
        }
        if self.blocks == 0 {
            let head = std::mem::take(&mut self.head);
            self.write(head.as_bytes());
            self.head = head;
        } else {
            self.write(b",");
        }
        self.blocks += 1;
        self.write(b"\n    ");
        let mut out = Indented {
            out: &mut self.out,
            error: None,
        };
        if let Err(e) = serde_json::to_writer_pretty(&mut out, block) {
            self.error
                .get_or_insert(out.error.unwrap_or_else(|| e.into()));
        }
    }

    /// Writes the rest of `report`, whose blocks were written already (it
    /// has none of its own) or are its own (none were written), and a
    /// newline; the first error met on the way, if any.
    pub fn finish(mut self, report: &impl Serialize) -> io::Result<W> {
        if self.error.is_none() {
            // Written as it is serialised: a report of many diagnostics is
            // never held as text.
            let head = std::mem::take(&mut self.head);
            let mut out = Rest {
                out: &mut self.out,
                // What was written before the blocks must be what the
                // report says, its version and dialect; and its own list
                // is empty.
                expected: if self.blocks > 0 {
                    format!("{head}]").into_bytes()
                } else {
                    Vec::new()
                },
                skip: if self.blocks > 0 { head.len() } else { 0 },
                seen: 0,
                error: None,
            };
            if let Err(e) = serde_json::to_writer_pretty(&mut out, report) {
                self.error = Some(out.error.unwrap_or_else(|| e.into()));
            } else if out.seen < out.expected.len() {
                self.error = Some(io::Error::other("the report ends before its blocks"));
            }
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

/// Writes what it is given to `out` with each line after the first
/// indented two levels further: a JSON string holds no raw newline, so
/// each one is a line break of the pretty printer.
struct Indented<'w, W: Write> {
    out: &'w mut W,
    /// The output's own error, kept whole (serde_json wraps it).
    error: Option<io::Error>,
}

impl<W: Write> Write for Indented<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut lines = buf.split(|&b| b == b'\n');
        let result = (|| -> io::Result<()> {
            if let Some(first) = lines.next() {
                self.out.write_all(first)?;
            }
            for line in lines {
                self.out.write_all(b"\n    ")?;
                self.out.write_all(line)?;
            }
            Ok(())
        })();
        kept(&mut self.error, buf.len(), result)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `len` bytes written, or the output's error, kept whole in `error`
/// (serde_json wraps what a writer returns) and returned by its kind.
fn kept(error: &mut Option<io::Error>, len: usize, result: io::Result<()>) -> io::Result<usize> {
    match result {
        Ok(()) => Ok(len),
        Err(e) => {
            let kind = e.kind();
            error.get_or_insert(e);
            Err(kind.into())
        }
    }
}

/// Writes a whole report after its blocks: checks that it begins with
/// `expected`, leaves out its first `skip` bytes (what was written before
/// the blocks) and puts the list's end on a line of its own.
struct Rest<'w, W: Write> {
    out: &'w mut W,
    expected: Vec<u8>,
    skip: usize,
    /// Bytes of the report seen so far.
    seen: usize,
    error: Option<io::Error>,
}

impl<W: Write> Rest<'_, W> {
    fn put(&mut self, buf: &[u8]) -> io::Result<()> {
        let at = self.seen;
        self.seen += buf.len();
        let checked = self.expected.len().saturating_sub(at).min(buf.len());
        if self
            .expected
            .get(at..at + checked)
            .is_some_and(|e| e != &buf[..checked])
        {
            return Err(io::Error::other(
                "the report does not begin as its blocks were written, or has blocks of its own",
            ));
        }
        let from = self.skip.saturating_sub(at).min(buf.len());
        if self.skip > 0 && at <= self.skip && from < buf.len() {
            self.out.write_all(b"\n  ")?;
        }
        self.out.write_all(&buf[from..])
    }
}

impl<W: Write> Write for Rest<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.put(buf);
        kept(&mut self.error, buf.len(), result)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Report {
        version: u32,
        dialect: &'static str,
        blocks: Vec<Vec<&'static str>>,
        ok: bool,
    }

    fn report(blocks: Vec<Vec<&'static str>>) -> Report {
        Report {
            version: 1,
            dialect: "clada",
            blocks,
            ok: true,
        }
    }

    /// Blocks written one by one, straight to the output, and the rest
    /// after them, give the bytes of the whole report.
    #[test]
    fn blocks_written_as_they_come_make_the_whole_report() {
        let blocks = vec![vec!["a", "b\nc"], vec![], vec!["d"]];
        let mut json = JsonReport::new(Vec::new(), &report(Vec::new()));
        for b in &blocks {
            json.write_block(b);
        }
        let written = json.finish(&report(Vec::new())).expect("written");
        let whole = serde_json::to_string_pretty(&report(blocks)).expect("serialised") + "\n";
        assert_eq!(String::from_utf8(written).expect("UTF-8"), whole);
        // No block: the report as it is.
        let json = JsonReport::new(Vec::new(), &report(Vec::new()));
        let written = json.finish(&report(vec![vec!["x"]])).expect("written");
        let whole = serde_json::to_string_pretty(&report(vec![vec!["x"]])).expect("serialised");
        assert_eq!(String::from_utf8(written).expect("UTF-8"), whole + "\n");
    }

    /// A report that does not begin as its blocks were written, or has
    /// blocks of its own, is refused, and nothing of it is written.
    #[test]
    fn refuses_a_report_that_does_not_begin_as_written() {
        for rest in [
            report(vec![vec!["own"]]),
            Report {
                version: 2,
                ..report(Vec::new())
            },
        ] {
            let mut json = JsonReport::new(Vec::new(), &report(Vec::new()));
            json.write_block(&vec!["a"]);
            assert!(json.finish(&rest).is_err());
        }
    }
}
