//! What `clada check` reports: [`CheckReport`] (JSON, PROTOCOL §9.2 without
//! execution results) and its text rendering.

use schemars::JsonSchema;
use serde::Serialize;

use super::DiagnosticReport;
use super::group::{Repeats, numbers};
use crate::dialect::Dialect;
use crate::syntax::Diagnostic;
use crate::syntax::TaskKind;
use crate::syntax::{Cursor, LineIndex, Position};
use crate::syntax::{Document, OpName, Task, Unit};

/// The JSON object of `clada check`. As in `apply`'s, the blocks come
/// before the totals: the report is written as the units are read.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CheckReport {
    pub version: u32,
    /// The edit format the document was read in (PROTOCOL §11).
    pub dialect: Dialect,
    pub blocks: Vec<CheckBlock>,
    pub ok: bool,
    pub summary: CheckSummary,
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
    /// The report of `doc`, a clada document.
    pub fn new(doc: &Document<'_>) -> Self {
        CheckReport::read_in(doc, Dialect::Clada)
    }

    /// The report of `doc`, read in `dialect` (PROTOCOL §11), which it
    /// names.
    pub fn read_in(doc: &Document<'_>, dialect: Dialect) -> Self {
        let mut report = CheckBuilder::new(doc.source).dialect(dialect);
        let blocks = doc
            .units
            .iter()
            .map(|u| report.unit(u, doc.diagnostics_of(u.number())))
            .collect();
        report.finish(blocks, &doc.diagnostics)
    }

    /// A report of nothing, read in `dialect`.
    pub fn empty(dialect: Dialect) -> Self {
        CheckReport {
            version: 1,
            dialect,
            blocks: Vec::new(),
            ok: true,
            summary: CheckSummary {
                blocks: 0,
                tasks: 0,
                errors: 0,
                warnings: 0,
            },
            diagnostics: Vec::new(),
        }
    }

    /// A report for a document that could not be read at all. `prefix` is
    /// the part of it that is valid UTF-8 ([`crate::syntax::valid_prefix`]), where
    /// positions are counted.
    pub fn unreadable(diagnostic: &Diagnostic, prefix: &str) -> Self {
        let mut report = CheckReport::empty(Dialect::Clada);
        report.ok = false;
        report.summary.errors = 1;
        report.diagnostics = vec![DiagnosticReport::unreadable(diagnostic, prefix)];
        report
    }
}

/// Builds the JSON report of `clada check` a unit at a time, so that a
/// caller reading [`crate::syntax::units`] can drop each unit once it is
/// counted, and write its block ([`super::JsonReport`]) or keep it.
#[derive(Debug)]
pub struct CheckBuilder<'s> {
    source: &'s str,
    at: Cursor<'s>,
    blocks: usize,
    tasks: usize,
    dialect: Dialect,
}

impl<'s> CheckBuilder<'s> {
    pub fn new(source: &'s str) -> Self {
        CheckBuilder {
            source,
            at: Cursor::new(source),
            blocks: 0,
            tasks: 0,
            dialect: Dialect::Clada,
        }
    }

    /// The dialect the document is read in, which the report names.
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// The block of a unit, counted, given diagnostics that include
    /// those filed under it (the others are passed over).
    pub fn unit<'d>(
        &mut self,
        u: &Unit<'_>,
        diagnostics: impl IntoIterator<Item = &'d Diagnostic>,
    ) -> CheckBlock {
        let at = &mut self.at;
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
        self.blocks += 1;
        self.tasks += u.tasks().len();
        CheckBlock {
            number: u.number(),
            kind: match u {
                Unit::Block(_) => "tasks",
                Unit::Task(_) => "standalone",
            },
            valid: !diagnostics
                .into_iter()
                .any(|d| d.block == Some(u.number()) && d.is_error()),
            start,
            end: at.position(extent.end),
            tasks,
        }
    }

    /// The report, given the blocks kept (none when they were written as
    /// they came) and every diagnostic of the document, in order.
    pub fn finish(self, blocks: Vec<CheckBlock>, diagnostics: &[Diagnostic]) -> CheckReport {
        // Positions are only needed for diagnostics; a clean document of
        // many megabytes should not pay for a line index.
        let lines = LineIndex::new(if diagnostics.is_empty() {
            ""
        } else {
            self.source
        });
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        CheckReport {
            version: 1,
            dialect: self.dialect,
            blocks,
            ok: errors == 0,
            summary: CheckSummary {
                blocks: self.blocks,
                tasks: self.tasks,
                errors,
                warnings: diagnostics.len() - errors,
            },
            diagnostics: diagnostics
                .iter()
                .map(|d| DiagnosticReport::new(d, &lines))
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
    let mut text = CheckText::new(doc.source, Vec::new());
    for u in &doc.units {
        text.unit(u, doc.diagnostics_of(u.number()));
    }
    let out = text
        .finish(&doc.diagnostics, name, color)
        .unwrap_or_default();
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the text of `clada check` (see [`render_check_text`]) a unit at
/// a time: the lines about units go out as the units come, the rendered
/// diagnostics and the summary at the end.
#[derive(Debug)]
pub struct CheckText<'s, W: std::io::Write> {
    source: &'s str,
    out: W,
    /// Malformed units waiting to be printed as one line: their numbers,
    /// and their kind and state.
    run: Option<(Vec<usize>, (&'static str, String))>,
    blocks: usize,
    tasks: usize,
    wrote: bool,
    /// The first error in writing: the rest is not written.
    failed: Option<std::io::Error>,
}

impl<'s, W: std::io::Write> CheckText<'s, W> {
    pub fn new(source: &'s str, out: W) -> Self {
        CheckText {
            source,
            out,
            run: None,
            blocks: 0,
            tasks: 0,
            wrote: false,
            failed: None,
        }
    }

    fn write(&mut self, args: std::fmt::Arguments<'_>) {
        if self.failed.is_none() {
            self.wrote = true;
            if let Err(e) = self.out.write_fmt(args) {
                self.failed = Some(e);
            }
        }
    }

    fn flush_run(&mut self) {
        if let Some((ns, (kind, state))) = self.run.take() {
            match ns.as_slice() {
                [n] => self.write(format_args!("Block {n} ({kind}): {state}\n")),
                _ => self.write(format_args!(
                    "Blocks {} ({kind}s): {}\n",
                    numbers(&ns),
                    state.replacen(", ", " each, ", 1)
                )),
            }
        }
    }

    /// Adds a unit, given diagnostics that include those filed under it
    /// (the others are passed over).
    pub fn unit<'d>(
        &mut self,
        u: &Unit<'_>,
        diagnostics: impl IntoIterator<Item = &'d Diagnostic>,
    ) {
        self.blocks += 1;
        self.tasks += u.tasks().len();
        let kind = if u.is_block() {
            "TASKS block"
        } else {
            "standalone task"
        };
        let errors = diagnostics
            .into_iter()
            .filter(|d| d.block == Some(u.number()) && d.is_error())
            .count();
        if errors > 0 {
            let state = match errors {
                1 => "1 error, will not run".to_owned(),
                n => format!("{n} errors, will not run"),
            };
            let key = (kind, state);
            match &mut self.run {
                Some((ns, same)) if *same == key => ns.push(u.number()),
                _ => {
                    self.flush_run();
                    self.run = Some((vec![u.number()], key));
                }
            }
            return;
        }
        self.flush_run();
        self.write(format_args!("Block {} ({kind}): ok\n", u.number()));
        for t in u.tasks() {
            // Paths and commands are the document's: PROTOCOL §9.1.
            let described = describe(t, self.source);
            let line = crate::escape::escape_line(&described);
            self.write(format_args!("  [task-{}] {line}\n", t.number));
        }
    }

    /// Writes the diagnostics, given all of them in order, and the summary
    /// line; gives the writer back.
    pub fn finish(
        mut self,
        diagnostics: &[Diagnostic],
        name: &str,
        color: bool,
    ) -> std::io::Result<W> {
        self.flush_run();
        if !diagnostics.is_empty() {
            if self.wrote {
                self.write(format_args!("\n"));
            }
            let mut repeats = Repeats::default();
            let shown = repeats.first_seen(diagnostics, &mut Cursor::new(self.source));
            let rendered = crate::syntax::render(&shown, self.source, name, color);
            self.write(format_args!("{rendered}"));
            let repeated = repeats.summary();
            if !repeated.is_empty() {
                self.write(format_args!("\nRepeated problems:\n{repeated}"));
            }
        }
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let summary = format!(
            "{}: {}, {}, {}, {}\n",
            if errors == 0 { "OK" } else { "FAILED" },
            plural(self.blocks, "block"),
            plural(self.tasks, "task"),
            plural(errors, "error"),
            plural(diagnostics.len() - errors, "warning"),
        );
        self.write(format_args!("{summary}"));
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
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

#[cfg(test)]
mod stream_tests {
    use proptest::prelude::{ProptestConfig, proptest};

    use super::*;
    use crate::syntax::parser::tests::soup;
    use crate::{ParseOptions, parse};

    /// What `clada check` prints reading the document a unit at a time,
    /// as JSON and as text.
    fn streamed(doc: &str) -> (String, String) {
        let mut report = CheckBuilder::new(doc);
        let mut json =
            super::super::JsonReport::new(Vec::new(), &CheckReport::empty(Dialect::Clada));
        let mut text = CheckText::new(doc, Vec::new());
        let units = crate::syntax::units(doc, ParseOptions::default());
        let all = crate::syntax::each_unit(units, |u, ds| {
            json.write_block(&report.unit(u, ds));
            text.unit(u, ds);
        });
        let json = json
            .finish(&report.finish(Vec::new(), &all))
            .unwrap_or_default();
        let text = String::from_utf8(text.finish(&all, "doc", false).unwrap_or_default());
        (
            String::from_utf8(json).unwrap_or_default(),
            text.unwrap_or_default(),
        )
    }

    fn whole(doc: &str) -> (String, String) {
        let parsed = parse(doc);
        (
            serde_json::to_string_pretty(&CheckReport::new(&parsed)).unwrap_or_default() + "\n",
            render_check_text(&parsed, "doc", false),
        )
    }

    #[test]
    fn a_streamed_check_reports_what_a_whole_one_does() {
        for doc in [
            "",
            "<<<<<<< REMOVE path=\"a\"\n>>>>>>> END\n",
            "<<<<<<< TASKS\n<<<<<<< REMOVE path=\"\"\n>>>>>>> END\n>>>>>>> TASKS\n<<<<<<< REMOVE path=\"/x\"\n>>>>>>> END\n<<<<<<< WRITE\n",
        ] {
            let (json, text) = streamed(doc);
            assert!(json.contains("\"summary\""), "{json}");
            assert!(text.contains(": "), "{text}");
            assert_eq!((json, text), whole(doc), "{doc:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 512,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn any_document_is_reported_the_same_streamed(doc in soup()) {
            assert_eq!(streamed(&doc), whole(&doc), "{doc:?}");
        }
    }
}
