//! `clada apply --stream`: each unit applied as soon as its closer is read
//! (PROTOCOL §11.5), reported as it goes (text, or JSON Lines).

use std::io::BufRead;

use clada_markers::report::text::TextPrinter;
use clada_markers::stream::{Chunk, Splitter};
use clada_markers::syntax::DiagnosticKind;
use clada_markers::{Apply, ParseOptions, Position};
use serde_json::{Value, json};

use super::{ApplyArgs, Format};
use crate::output;

/// What the stream has done so far.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    blocks: usize,
    tasks: usize,
    succeeded: usize,
    failed: usize,
    skipped: usize,
    errors: usize,
    ok: bool,
}

pub(crate) fn run(args: &ApplyArgs, apply: &mut Apply, color: bool) -> u8 {
    let reader: Box<dyn BufRead> = match args.file.as_deref() {
        None => Box::new(std::io::stdin().lock()),
        Some(p) if p == std::path::Path::new("-") => Box::new(std::io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("clada: cannot read {}: {e}", p.display());
                return 2;
            }
        },
    };
    let mut totals = Totals::new();
    let mut splitter = Splitter::new();
    let mut reader = reader;
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("clada: cannot read the stream: {e}");
                return 2;
            }
        }
        if let Some(chunk) = splitter.push_bytes(&line) {
            unit(args, apply, color, &chunk, None, &mut totals);
        }
    }
    if let Some(chunk) = splitter.finish() {
        unit(args, apply, color, &chunk, None, &mut totals);
    }
    totals.finish(args.format);
    u8::from(!totals.ok)
}

impl Totals {
    /// The units reported so far.
    pub(crate) fn units(&self) -> usize {
        self.blocks
    }

    pub(crate) fn new() -> Totals {
        Totals {
            ok: true,
            ..Totals::default()
        }
    }

    /// The summary: a JSON line, or the totals in words.
    pub(crate) fn finish(&self, format: Format) {
        if format == Format::Jsonl {
            print_line(&json!({
                "event": "summary",
                "ok": self.ok,
                "blocks": self.blocks,
                "tasks": self.tasks,
                "succeeded": self.succeeded,
                "failed": self.failed,
                "skipped": self.skipped,
                "errors": self.errors,
            }));
        } else {
            output::print(&format!(
                "\n=== Stream ===\n{} units, {}/{} tasks succeeded\n",
                self.blocks, self.succeeded, self.tasks
            ));
        }
    }
}

fn print_line(v: &Value) {
    output::print(&format!("{v}\n"));
}

/// Why a unit is refused before it runs, in the report's words.
pub(crate) struct Refusal {
    pub(crate) kind: DiagnosticKind,
    pub(crate) message: String,
    pub(crate) help: &'static str,
}

/// Parses, numbers, runs and reports one unit, or reports it `refused`.
pub(crate) fn unit(
    args: &ApplyArgs,
    apply: &mut Apply,
    color: bool,
    chunk: &Chunk,
    refused: Option<Refusal>,
    totals: &mut Totals,
) {
    let options = ParseOptions {
        allow_escape: args.allow_escape,
    };
    // A unit that is not UTF-8 comes with its error: refused, not run.
    let doc = match refused {
        None => chunk.document(options),
        Some(r) => chunk.refused(options, r.kind, r.message, r.help),
    };
    // Numbers in the stream: the unit is parsed alone (its own block 1,
    // task 1), and its report is moved on by what came before.
    let (blocks_before, tasks_before) = (totals.blocks, totals.tasks);
    if args.format == Format::Text {
        output::print(&format!(
            "--- unit {} (line {} of the stream) ---\n",
            blocks_before + 1,
            chunk.line
        ));
    }
    let mut printer = TextPrinter::new(
        output::progress_writer(),
        doc.source,
        "<stream>",
        super::apply::detail(args),
        super::apply::exec(args),
        color,
    );
    let mut quiet = clada_markers::engine::Quiet;
    let observer: &mut dyn clada_markers::engine::Observer = match args.format {
        Format::Text => &mut printer,
        _ => &mut quiet,
    };
    let report = apply.run_observed(&doc, observer);
    totals.blocks += doc.units.len();
    totals.tasks += report.summary.tasks;
    totals.succeeded += report.summary.succeeded;
    totals.failed += report.summary.failed;
    totals.skipped += report.summary.skipped;
    totals.errors += doc.diagnostics.iter().filter(|d| d.is_error()).count();
    totals.ok &= report.ok;
    // Positions in the unit's text, moved to the stream's.
    let shift = |p: Position| Position {
        line: p.line + chunk.line - 1,
        column: p.column,
        offset: p.offset + chunk.offset,
    };
    match args.format {
        Format::Jsonl => {
            for d in &report.diagnostics {
                let mut d = d.clone();
                d.start = shift(d.start);
                d.end = shift(d.end);
                d.block = d.block.map(|b| b + blocks_before);
                d.task = d.task.map(|t| t + tasks_before);
                for l in &mut d.labels {
                    l.start = shift(l.start);
                    l.end = shift(l.end);
                }
                if let Some(f) = &mut d.fix {
                    f.start = shift(f.start);
                    f.end = shift(f.end);
                }
                let mut v = serde_json::to_value(&d).unwrap_or(Value::Null);
                v["event"] = json!("diagnostic");
                print_line(&v);
            }
            for b in &report.blocks {
                for t in &b.tasks {
                    let mut t = t.clone();
                    t.number += tasks_before;
                    t.start = t.start.map(shift);
                    t.end = t.end.map(shift);
                    let mut v = serde_json::to_value(&t).unwrap_or(Value::Null);
                    v["event"] = json!("task");
                    v["block"] = json!(b.number + blocks_before);
                    print_line(&v);
                }
            }
        }
        _ => printer.finish(&report),
    }
}
