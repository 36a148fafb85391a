//! What `clada apply`, `--stream` and `watch` share: the text printer's
//! settings from the flags, and one unit of a stream, run and reported as
//! it ends (text, or the library's JSON Lines events, PROTOCOL §11.5).
//! `apply`, `stream` and `watch` import this module; it imports none of
//! them.

use clada_markers::report::text::{Detail, ExecOutput, TextPrinter};
use clada_markers::report::{Origin, StreamReport};
use clada_markers::stream::Chunk;
use clada_markers::syntax::DiagnosticKind;
use clada_markers::{Apply, ParseOptions};

use super::{ApplyArgs, ErrorDetail, Format, OutputMode};
use crate::output;

pub(crate) fn detail(args: &ApplyArgs) -> Detail {
    match args.error_detail {
        ErrorDetail::Minimal => Detail::Minimal,
        ErrorDetail::Full => Detail::Full,
        ErrorDetail::Debug => Detail::Debug,
    }
}

pub(crate) fn exec(args: &ApplyArgs) -> ExecOutput {
    match args.output_mode {
        OutputMode::Stream => ExecOutput::Stream,
        OutputMode::Buffer => ExecOutput::Buffer,
        OutputMode::Silent => ExecOutput::Silent,
    }
}

/// The end of a stream: the summary event, or the totals in words.
pub(crate) fn finish(totals: &StreamReport, format: Format) {
    if format == Format::Jsonl {
        output::print(&format!("{}\n", totals.summary_event()));
    } else {
        output::print(&format!(
            "\n=== Stream ===\n{} units, {}/{} tasks succeeded\n",
            totals.summary.blocks,
            // Applied before is in effect too (PROTOCOL §8).
            totals.summary.succeeded + totals.summary.already_applied,
            totals.summary.tasks
        ));
    }
}

/// Why a unit is refused before it runs, in the report's words.
pub(crate) struct Refusal {
    pub(crate) kind: DiagnosticKind,
    pub(crate) message: String,
    pub(crate) help: &'static str,
}

/// Parses, runs and reports one unit, or reports it `refused`; its report
/// is added to `totals`, which number it in the stream.
pub(crate) fn unit(
    args: &ApplyArgs,
    apply: &mut Apply,
    color: bool,
    chunk: &Chunk,
    refused: Option<Refusal>,
    totals: &mut StreamReport,
    source: &str,
) -> bool {
    let options = ParseOptions {
        allow_escape: args.policy.allow_escape,
    };
    // A unit that is not UTF-8, or over the size limit, comes with its
    // error: refused, not run.
    let mut doc = match refused {
        None => chunk.document(options),
        Some(r) => chunk.refused(options, r.kind, r.message, r.help),
    };
    if doc.units.is_empty() {
        // Prose is not meant to hold a task: only what it holds is said.
        doc.diagnostics
            .retain(|d| d.kind != DiagnosticKind::NoTasks);
    }
    if args.format == Format::Text {
        // Prose handed on for what it holds: edits in another format or
        // near-miss markers, errors that apply nothing.
        let what = if doc.units.is_empty() {
            "prose".to_owned()
        } else {
            format!("unit {}", totals.summary.blocks + 1)
        };
        output::print(&format!(
            "--- {what} (line {} of {}) ---\n",
            chunk.line,
            clada_markers::escape::escape_line(source)
        ));
    }
    let mut printer = TextPrinter::new(
        output::progress_writer(),
        doc.source,
        "<stream>",
        detail(args),
        exec(args),
        color,
    )
    .numbered_from(
        totals.summary.blocks,
        totals.summary.tasks,
        chunk.line.saturating_sub(1),
    )
    .diffs(args.diff);
    let mut quiet = clada_markers::engine::Quiet;
    let listener: &mut dyn clada_markers::Listener = match args.format {
        Format::Text => &mut printer,
        _ => &mut quiet,
    };
    let report = apply.run_with(&doc, listener);
    let at = Origin {
        offset: chunk.offset,
        line: chunk.line,
    };
    match args.format {
        // Each event printed as it is made, never all of a unit's at once.
        Format::Jsonl => totals.each(&report, at, |event| output::print(&format!("{event}\n"))),
        _ => {
            totals.each(&report, at, drop);
            printer.finish(&report);
        }
    }
    // Whether the unit took effect: a task applied, or a command run.
    report
        .blocks
        .iter()
        .flat_map(|b| &b.tasks)
        .any(|t| t.status == clada_markers::report::TaskStatus::Success || t.exit_code.is_some())
}
