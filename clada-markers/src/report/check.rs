//! What `clada check` reports: [`CheckReport`] (JSON, PROTOCOL §9.2 without
//! execution results) and its text rendering.

use serde::Serialize;

use super::DiagnosticReport;
use crate::ast::{Document, OpName, Task, Unit};
use crate::diagnostics::Diagnostic;
use crate::span::{LineIndex, Position};
use crate::syntax::TaskKind;

/// The JSON object of `clada check`.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    pub version: u32,
    pub ok: bool,
    pub summary: CheckSummary,
    pub blocks: Vec<CheckBlock>,
    pub diagnostics: Vec<DiagnosticReport>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckSummary {
    pub blocks: usize,
    pub tasks: usize,
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckBlock {
    pub number: usize,
    pub kind: &'static str,
    /// Whether the unit would run: it has no error.
    pub valid: bool,
    pub tasks: Vec<CheckTask>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckTask {
    pub number: usize,
    pub op: OpName,
    pub path: Option<String>,
    pub valid: bool,
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
        Self::from_parts(doc, &doc.diagnostics, &LineIndex::new(text))
    }

    /// A report for a document that could not be read at all.
    pub fn unreadable(diagnostic: &Diagnostic) -> Self {
        let lines = LineIndex::new("");
        CheckReport {
            version: 1,
            ok: false,
            summary: CheckSummary {
                blocks: 0,
                tasks: 0,
                errors: 1,
                warnings: 0,
            },
            blocks: Vec::new(),
            diagnostics: vec![DiagnosticReport {
                start: Position {
                    line: 0,
                    column: 0,
                    offset: diagnostic.span.start,
                },
                end: Position {
                    line: 0,
                    column: 0,
                    offset: diagnostic.span.end,
                },
                ..DiagnosticReport::new(diagnostic, &lines)
            }],
        }
    }

    fn from_parts(doc: &Document<'_>, diagnostics: &[Diagnostic], lines: &LineIndex<'_>) -> Self {
        let blocks: Vec<CheckBlock> = doc
            .units
            .iter()
            .map(|u| {
                let valid = doc.is_runnable(u.number());
                CheckBlock {
                    number: u.number(),
                    kind: match u {
                        Unit::Block(_) => "tasks",
                        Unit::Task(_) => "standalone",
                    },
                    valid,
                    tasks: u
                        .tasks()
                        .iter()
                        .map(|t| CheckTask {
                            number: t.number,
                            op: t.op_name(),
                            path: t.display_path().map(str::to_owned),
                            valid: t.op.is_some(),
                        })
                        .collect(),
                }
            })
            .collect();
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        CheckReport {
            version: 1,
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
/// diagnostics, and a summary line.
pub fn render_check_text(doc: &Document<'_>, name: &str, color: bool) -> String {
    use std::fmt::Write as _;
    let report = CheckReport::new(doc);
    let mut out = String::new();
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
        let state = match errors {
            0 => "ok".to_owned(),
            1 => "1 error, will not run".to_owned(),
            n => format!("{n} errors, will not run"),
        };
        let _ = writeln!(out, "Block {} ({kind}): {state}", b.number);
        for t in doc
            .units
            .get(b.number - 1)
            .map(Unit::tasks)
            .unwrap_or_default()
        {
            let mark = if t.op.is_some() { "" } else { " (malformed)" };
            let _ = writeln!(
                out,
                "  [task-{}] {}{mark}",
                t.number,
                // Paths and commands are the document's: PROTOCOL §9.1.
                crate::escape::escape_controls(&describe(t, doc.source))
            );
        }
    }
    if !doc.diagnostics.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&crate::diagnostics::render(
            &doc.diagnostics,
            doc.source,
            name,
            color,
        ));
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
