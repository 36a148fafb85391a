//! The report of `clada apply` made a unit at a time: [`ApplyBuilder`]
//! turns each unit's final outcome into its [`BlockReport`] and keeps the
//! totals, and [`JsonReport`] (a [`Listener`]) writes the JSON report with
//! each block as it comes, so that a run holds a batch of units, never the
//! document's.

use std::collections::HashSet;
use std::io::Write;

use super::Listener;
use super::{
    ApplyReport, ApplySummary, BlockReport, BlockStatus, DiagnosticReport, GitReport, JsonReport,
    Resend, ResendEntry, TaskStatus, UnreadEdit,
};
use crate::dialect::Dialect;
use crate::engine::outcome::UnitOutcome;
use crate::engine::{Observer, TaskOutcome};
use crate::syntax::Unit;
use crate::syntax::{Cursor, LineIndex};
use crate::syntax::{Diagnostic, DiagnosticKind};

/// Builds the report of a run from its units' outcomes, in order.
#[derive(Debug)]
pub(crate) struct ApplyBuilder<'s> {
    source: &'s str,
    at: Cursor<'s>,
    summary: ApplySummary,
    resend: Resend,
    /// The malformed units without a task: each is an edit the lists must
    /// name by its place.
    taskless: Vec<usize>,
}

impl<'s> ApplyBuilder<'s> {
    pub(crate) fn new(source: &'s str) -> Self {
        ApplyBuilder {
            source,
            at: Cursor::new(source),
            summary: ApplySummary::default(),
            resend: Resend::default(),
            taskless: Vec::new(),
        }
    }

    /// The report of `unit`, whose outcome is final, placed in the
    /// document and counted.
    pub(crate) fn block(&mut self, unit: &Unit<'_>, outcome: UnitOutcome) -> BlockReport {
        let mut b = super::words::block(unit, outcome);
        place_block(&mut self.at, unit, &mut b);
        tally(&mut self.summary, &mut self.resend, &b);
        if b.tasks.is_empty() && b.status == BlockStatus::Malformed {
            self.taskless.push(b.number);
        }
        b
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
        // Every task in effect, applied now or before (PROTOCOL §7).
        let s = &self.summary;
        let ok = s.succeeded + s.already_applied == s.tasks && !errors && git.error.is_none();
        let mut resend = self.resend;
        resend.failed.extend(
            unread(self.source, diagnostics, &self.taskless, &lines).map(ResendEntry::Edit),
        );
        ApplyReport {
            blocks,
            ok,
            summary: self.summary,
            diagnostics: diagnostics
                .iter()
                .map(|d| DiagnosticReport::new(d, &lines))
                .collect(),
            git,
            resend: Some(resend),
            ..ApplyReport::empty(Dialect::Clada)
        }
    }
}

/// The longest first line an [`UnreadEdit`] carries, in characters.
const FIRST_LINE: usize = 200;

/// The edits of `diagnostics` no task came of (PROTOCOL §9.1), in order:
/// each error outside every unit (a marker written wrong, an edit in a
/// format the dialect does not read) and each malformed unit without a
/// task (`taskless`), once. An error inside the span the one before it
/// rewrites (its fix: the rest of a near-miss block) is that edit again;
/// a document without any task is no edit.
fn unread<'a>(
    source: &'a str,
    diagnostics: &'a [Diagnostic],
    taskless: &'a [usize],
    lines: &'a LineIndex<'_>,
) -> impl Iterator<Item = UnreadEdit> + 'a {
    // Sets, so that a document of many such units stays linear.
    let taskless: HashSet<usize> = taskless.iter().copied().collect();
    let mut named: HashSet<usize> = HashSet::new();
    let mut covered = 0..0;
    diagnostics.iter().filter_map(move |d| {
        if !d.is_error() || d.kind == DiagnosticKind::NoTasks {
            return None;
        }
        match d.block {
            Some(n) if !taskless.contains(&n) || !named.insert(n) => return None,
            Some(_) => {}
            None if covered.contains(&d.span.start) => return None,
            None => {}
        }
        covered = d.fix.as_ref().map_or(d.span.range(), |f| f.span.range());
        let line = lines.line(d.span.start);
        let start = source
            .get(..d.span.start)
            .and_then(|before| before.rfind('\n'))
            .map_or(0, |i| i + 1);
        // Only as far as it is shown: a long line is not read to its end.
        let first_line = source
            .get(start..)
            .unwrap_or_default()
            .chars()
            .take_while(|&c| c != '\n')
            .take(FIRST_LINE)
            .collect::<String>();
        Some(UnreadEdit {
            line,
            first_line: first_line.trim_end_matches('\r').to_owned(),
            kind: d.kind.name(),
        })
    })
}

/// Keeps every unit's report, for a report printed whole at the end
/// (`report.blocks = blocks`).
impl Observer for Vec<BlockReport> {}

impl Listener for Vec<BlockReport> {
    fn block(&mut self, report: BlockReport) {
        self.push(report);
    }
}

impl<W: Write> Observer for JsonReport<W> {
    fn task_finished(&mut self, _task: &crate::syntax::Task<'_>, _outcome: &TaskOutcome) {}
}

impl<W: Write> Listener for JsonReport<W> {
    fn block(&mut self, report: BlockReport) {
        self.write_block(&report);
    }
}

/// Counts `b` into the summary, and its tasks into what to send again.
fn tally(summary: &mut ApplySummary, resend: &mut Resend, b: &BlockReport) {
    summary.blocks += 1;
    for t in &b.tasks {
        summary.tasks += 1;
        match t.status {
            TaskStatus::Success => summary.succeeded += 1,
            TaskStatus::Failed => summary.failed += 1,
            TaskStatus::Skipped => summary.skipped += 1,
            TaskStatus::AlreadyApplied => summary.already_applied += 1,
        }
        summary.rolled_back += usize::from(t.rolled_back);
        resend.add(b.status, t);
    }
}

/// Gives `b` the positions of `unit` and its tasks; `at` moves on.
fn place_block(at: &mut Cursor<'_>, unit: &crate::syntax::Unit<'_>, b: &mut BlockReport) {
    let extent = unit.extent();
    b.start = Some(at.position(extent.start));
    for (report, task) in b.tasks.iter_mut().zip(unit.tasks()) {
        if report.number == task.number {
            let extent = task.extent();
            report.start = Some(at.position(extent.start));
            report.end = Some(at.position(extent.end));
        }
    }
    b.end = Some(at.position(extent.end));
}
