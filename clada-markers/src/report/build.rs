//! The report of `clada apply` made a unit at a time: [`ApplyBuilder`]
//! turns each unit's final outcome into its [`BlockReport`] and keeps the
//! totals, and [`JsonReport`] writes the JSON report with each block as it
//! comes, so that a run holds a batch of units, never the document's.

use std::io::{self, Write};

use super::{ApplyReport, ApplySummary, BlockReport, DiagnosticReport, GitReport, Resend};
use crate::apply::Listener;
use crate::ast::Unit;
use crate::diagnostics::Diagnostic;
use crate::dialect::Dialect;
use crate::engine::outcome::UnitOutcome;
use crate::engine::{Observer, TaskOutcome};
use crate::span::{Cursor, LineIndex};

/// Builds the report of a run from its units' outcomes, in order.
#[derive(Debug)]
pub(crate) struct ApplyBuilder<'s> {
    source: &'s str,
    at: Cursor<'s>,
    summary: ApplySummary,
    resend: Resend,
}

impl<'s> ApplyBuilder<'s> {
    pub(crate) fn new(source: &'s str) -> Self {
        ApplyBuilder {
            source,
            at: Cursor::new(source),
            summary: ApplySummary::default(),
            resend: Resend::default(),
        }
    }

    /// The report of `unit`, whose outcome is final, placed in the
    /// document and counted.
    pub(crate) fn block(&mut self, unit: &Unit<'_>, outcome: UnitOutcome) -> BlockReport {
        let mut b = super::words::block(unit, outcome);
        super::place_block(&mut self.at, unit, &mut b);
        super::tally(&mut self.summary, &mut self.resend, &b);
        b
    }

    /// Tasks and successful tasks so far.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.summary.tasks, self.summary.succeeded)
    }

    /// The report: `blocks` are those kept (none when they were handed
    /// out as they came), `diagnostics` every diagnostic of the document
    /// in order.
    pub(crate) fn finish(
        self,
        blocks: Vec<BlockReport>,
        diagnostics: &[Diagnostic],
        git: GitReport,
    ) -> ApplyReport {
        // A clean document of many megabytes should not pay for a line
        // index.
        let lines = LineIndex::new(if diagnostics.is_empty() {
            ""
        } else {
            self.source
        });
        let errors = diagnostics.iter().any(Diagnostic::is_error);
        let ok = self.summary.succeeded == self.summary.tasks && !errors && git.error.is_none();
        ApplyReport {
            blocks,
            ok,
            summary: self.summary,
            diagnostics: diagnostics
                .iter()
                .map(|d| DiagnosticReport::new(d, &lines))
                .collect(),
            git,
            resend: Some(self.resend),
            ..ApplyReport::empty(Dialect::Clada)
        }
    }
}

/// Writes the JSON report of a run (pretty-printed, as
/// `serde_json::to_writer_pretty` writes an [`ApplyReport`]) with each
/// block as soon as it is final: the fields before `blocks` are known
/// from the start, those after it once the run ends.
pub struct JsonReport<W: Write> {
    out: W,
    /// Blocks written so far.
    blocks: usize,
    dialect: Dialect,
    /// The first write error; nothing more is written after it.
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
    pub fn new(out: W, dialect: Dialect) -> Self {
        JsonReport {
            out,
            blocks: 0,
            dialect,
            error: None,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }

    /// Writes `report` (whose blocks were written already, if it has
    /// none) and a newline; the first error met on the way, if any.
    pub fn finish(mut self, report: &ApplyReport) -> io::Result<W> {
        if self.blocks > 0 && !report.blocks.is_empty() {
            return Err(io::Error::other("a report's blocks were given twice"));
        }
        if self.blocks > 0 && report.dialect != self.dialect {
            return Err(io::Error::other(
                "the report's dialect is not the one its blocks were written under",
            ));
        }
        let whole = serde_json::to_string_pretty(report).map_err(io::Error::from)?;
        match whole.find(BLOCKS) {
            Some(at) if self.blocks > 0 => {
                // `"blocks": []`: the list was opened with the first block.
                let rest = &whole[at + BLOCKS.len()..];
                self.write(b"\n  ");
                self.write(rest.as_bytes());
            }
            _ => self.write(whole.as_bytes()),
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

impl<W: Write> Observer for JsonReport<W> {
    fn task_finished(&mut self, _task: &crate::ast::Task<'_>, _outcome: &TaskOutcome) {}
}

impl<W: Write> Listener for JsonReport<W> {
    fn block(&mut self, report: BlockReport) {
        if self.blocks == 0 {
            // What comes before the blocks: the same for every run.
            let empty = ApplyReport::empty(self.dialect);
            let head = serde_json::to_string_pretty(&empty).unwrap_or_default();
            let head = match head.find(BLOCKS) {
                Some(at) => &head[..at + BLOCKS.len()],
                None => "",
            };
            let head = head.to_owned();
            self.write(head.as_bytes());
        } else {
            self.write(b",");
        }
        self.blocks += 1;
        // A JSON string holds no raw newline: each one is a line break
        // of the pretty printer, indented two levels further here.
        let text = match serde_json::to_string_pretty(&report) {
            Ok(text) => text,
            Err(e) => {
                self.error.get_or_insert(e.into());
                return;
            }
        };
        self.write(b"\n    ");
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                self.write(b"\n    ");
            }
            self.write(line.as_bytes());
        }
    }
}
