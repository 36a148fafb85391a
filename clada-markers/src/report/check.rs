//! What `clada check` reports: [`CheckReport`] (JSON, PROTOCOL §9.2 without
//! execution results) and its text rendering.

use schemars::JsonSchema;
use serde::Serialize;

use super::DiagnosticReport;
use super::group::{Repeats, numbers};
use crate::ast::{Document, OpName, Task, Unit};
use crate::diagnostics::Diagnostic;
use crate::dialect::Dialect;
use crate::span::{Cursor, LineIndex, Position};
use crate::syntax::TaskKind;

/// The JSON object of `clada check`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CheckReport {
    pub version: u32,
    pub ok: bool,
    /// The edit format the document was read in (PROTOCOL §11).
    pub dialect: Dialect,
    pub summary: CheckSummary,
    pub blocks: Vec<CheckBlock>,
    pub diagnostics: Vec<DiagnosticReport>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CheckSummary {
    pub blocks: usize,
    pub tasks: usize,
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CheckBlock {
    pub number: usize,
    pub kind: &'static str,
    /// Whether the unit would run: it has no error.
    pub valid: bool,
    /// The opener line's start and the closer line's end (PROTOCOL §9.2).
    pub start: Position,
    pub end: Position,
    pub tasks: Vec<CheckTask>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CheckTask {
    pub number: usize,
    pub op: OpName,
    pub path: Option<String>,
    pub valid: bool,
    pub start: Position,
    pub end: Position,
}

impl CheckReport {
    pub fn new(doc: &Document<'_>) -> Self {
        // Positions are only needed for diagnostics; a clean document of
        // many megabytes should not pay for a line index.
        let text = if doc.diagnostics.is_empty() {
            ""
        } else {
            doc.source
        };
        Self::from_parts(doc, &doc.diagnostics, &LineIndex::new(text), true)
    }

    /// A report for a document that could not be read at all. `prefix` is
    /// the part of it that is valid UTF-8 ([`crate::syntax::valid_prefix`]), where
    /// positions are counted.
    pub fn unreadable(diagnostic: &Diagnostic, prefix: &str) -> Self {
        CheckReport {
            version: 1,
            dialect: Dialect::Clada,
            ok: false,
            summary: CheckSummary {
                blocks: 0,
                tasks: 0,
                errors: 1,
                warnings: 0,
            },
            blocks: Vec::new(),
            diagnostics: vec![DiagnosticReport::unreadable(diagnostic, prefix)],
        }
    }

    /// `positions`: whether blocks and tasks get theirs (the JSON report);
    /// the text report does not show them, and a clean document of many
    /// megabytes should not pay a scan for them.
    fn from_parts(
        doc: &Document<'_>,
        diagnostics: &[Diagnostic],
        lines: &LineIndex<'_>,
        positions: bool,
    ) -> Self {
        let mut at = Cursor::new(if positions { doc.source } else { "" });
        let blocks: Vec<CheckBlock> = doc
            .units
            .iter()
            .map(|u| {
                let valid = doc.is_runnable(u.number());
                let extent = u.extent();
                let start = at.position(extent.start);
                let tasks = u
                    .tasks()
                    .iter()
                    .map(|t| {
                        let extent = t.extent();
                        CheckTask {
                            number: t.number,
                            op: t.op_name(),
                            path: t.display_path().map(str::to_owned),
                            valid: t.op.is_some(),
                            start: at.position(extent.start),
                            end: at.position(extent.end),
                        }
                    })
                    .collect();
                CheckBlock {
                    number: u.number(),
                    kind: match u {
                        Unit::Block(_) => "tasks",
                        Unit::Task(_) => "standalone",
                    },
                    valid,
                    start,
                    end: at.position(extent.end),
                    tasks,
                }
            })
            .collect();
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        CheckReport {
            version: 1,
            dialect: Dialect::Clada,
            ok: errors == 0,
            summary: CheckSummary {
                blocks: blocks.len(),
                tasks: blocks.iter().map(|b| b.tasks.len()).sum(),
                errors,
                warnings: diagnostics.len() - errors,
            },
            blocks,
            diagnostics: diagnostics
                .iter()
                .map(|d| DiagnosticReport::new(d, lines))
                .collect(),
        }
    }
}

/// The text `clada check` prints: each unit with its tasks, the rendered
/// diagnostics, and a summary line. A malformed unit's tasks are not listed
/// (its diagnostics say why it will not run), consecutive malformed units
/// in the same state share a line, and a problem repeated over many units is
/// rendered once, then counted (PROTOCOL §9.1).
pub fn render_check_text(doc: &Document<'_>, name: &str, color: bool) -> String {
    use std::fmt::Write as _;
    let report = CheckReport::from_parts(doc, &doc.diagnostics, &LineIndex::new(""), false);
    let mut out = String::new();
    // Malformed units waiting to be printed as one line: their numbers, and
    // their kind and state.
    let mut run: Option<(Vec<usize>, (&str, String))> = None;
    let flush = |out: &mut String, run: &mut Option<(Vec<usize>, (&str, String))>| {
        if let Some((ns, (kind, state))) = run.take() {
            let _ = match ns.as_slice() {
                [n] => writeln!(out, "Block {n} ({kind}): {state}"),
                _ => writeln!(
                    out,
                    "Blocks {} ({kind}s): {}",
                    numbers(&ns),
                    state.replacen(", ", " each, ", 1)
                ),
            };
        }
    };
    for b in &report.blocks {
        let kind = if b.kind == "tasks" {
            "TASKS block"
        } else {
            "standalone task"
        };
        let errors = doc
            .diagnostics_of(b.number)
            .filter(|d| d.is_error())
            .count();
        if errors > 0 {
            let state = match errors {
                1 => "1 error, will not run".to_owned(),
                n => format!("{n} errors, will not run"),
            };
            let key = (kind, state);
            match &mut run {
                Some((ns, same)) if *same == key => ns.push(b.number),
                _ => {
                    flush(&mut out, &mut run);
                    run = Some((vec![b.number], key));
                }
            }
            continue;
        }
        flush(&mut out, &mut run);
        let _ = writeln!(out, "Block {} ({kind}): ok", b.number);
        for t in doc
            .units
            .get(b.number - 1)
            .map(Unit::tasks)
            .unwrap_or_default()
        {
            let _ = writeln!(
                out,
                "  [task-{}] {}",
                t.number,
                // Paths and commands are the document's: PROTOCOL §9.1.
                crate::escape::escape_controls(&describe(t, doc.source))
            );
        }
    }
    flush(&mut out, &mut run);
    if !doc.diagnostics.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let mut repeats = Repeats::default();
        let shown = repeats.first_seen(&doc.diagnostics, &mut Cursor::new(doc.source));
        out.push_str(&crate::diagnostics::render(&shown, doc.source, name, color));
        let repeated = repeats.summary();
        if !repeated.is_empty() {
            out.push_str("\nRepeated problems:\n");
            out.push_str(&repeated);
        }
    }
    let s = &report.summary;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{}: {}, {}, {}, {}",
        if report.ok { "OK" } else { "FAILED" },
        plural(s.blocks, "block"),
        plural(s.tasks, "task"),
        plural(s.errors, "error"),
        plural(s.warnings, "warning"),
    );
    out
}

/// One line about a task for people: its operation and what it acts on.
pub fn describe(task: &Task<'_>, source: &str) -> String {
    let attr = |n: &str| task.attribute(n).map(|a| a.value.as_ref()).unwrap_or("?");
    match task.kind {
        TaskKind::Write if task.attribute("append").is_some_and(|a| a.value == "true") => {
            format!("append to {}", attr("path"))
        }
        TaskKind::Write => format!("write {}", attr("path")),
        TaskKind::Search | TaskKind::Edit => format!("edit {}", attr("path")),
        TaskKind::SearchStart => format!("edit a range of {}", attr("path")),
        TaskKind::Move => format!("move {} to {}", attr("from"), attr("to")),
        TaskKind::Remove => format!("remove {}", attr("path")),
        TaskKind::Run => {
            let first = task
                .sections
                .first()
                .and_then(|s| source.get(s.range()))
                .unwrap_or_default();
            let line = first.trim().lines().next().unwrap_or("");
            let more = if first.trim().lines().nth(1).is_some() {
                " …"
            } else {
                ""
            };
            match task.display_path() {
                Some(dir) => format!("run `{line}`{more} in {dir}"),
                None => format!("run `{line}`{more}"),
            }
        }
    }
}
