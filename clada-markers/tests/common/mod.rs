//! Helpers shared by the integration tests: invariants every parse must
//! hold, and a readable dump of a parsed document for snapshots.

#![allow(dead_code)]

use std::fmt::Write as _;

use clada_markers::report::TaskReport;
use clada_markers::syntax::{DiagnosticKind, LineIndex, TokenKind, lex};
use clada_markers::{ApplyReport, Diagnostic, Document, Op, Span, Task, Unit};

/// The reports of a run's tasks, in order.
pub(crate) fn tasks(report: ApplyReport) -> Vec<TaskReport> {
    report.blocks.into_iter().flat_map(|b| b.tasks).collect()
}

/// Checks what must hold for any input: tokens tile it, every span is in
/// bounds and on character boundaries, units are ordered and numbered, and
/// no diagnostic is a fault of the parser.
pub(crate) fn check_invariants(src: &str, doc: &Document<'_>) {
    let tokens = lex(src);
    let mut at = 0;
    for t in &tokens {
        let span = t.span();
        assert_eq!(span.start, at, "tokens must be contiguous");
        assert!(span.end > span.start, "tokens are never empty");
        if let TokenKind::Marker(m) = &t.kind {
            for s in [m.word(), m.rest(), m.line()] {
                in_bounds(src, s, span);
            }
        }
        at = span.end;
    }
    assert_eq!(at, src.len(), "tokens must cover the input");

    let whole = Span::new(0, src.len());
    let mut last_end = 0;
    let mut task_no = 0;
    for (i, unit) in doc.units.iter().enumerate() {
        assert_eq!(unit.number(), i + 1, "units are numbered in order");
        let us = unit.span();
        in_bounds(src, us, whole);
        assert!(us.start >= last_end, "units do not overlap");
        last_end = us.end;
        if let Unit::Block(b) = unit {
            in_bounds(src, b.opener, us);
            if let Some(c) = b.closer {
                in_bounds(src, c, us);
            }
            for a in &b.attributes {
                in_bounds(src, a.span, us);
            }
        }
        for t in unit.tasks() {
            task_no += 1;
            assert_eq!(t.number, task_no, "tasks are numbered in order");
            assert_eq!(t.block, unit.number());
            in_bounds(src, t.span, us);
            in_bounds(src, t.opener, t.span);
            for s in t.sections.iter().chain(t.closer.iter()) {
                in_bounds(src, *s, t.span);
            }
            for a in &t.attributes {
                for s in [a.span, a.name_span, a.value_span] {
                    in_bounds(src, s, t.opener);
                }
            }
        }
    }
    for d in &doc.diagnostics {
        assert_ne!(d.kind, DiagnosticKind::Internal, "parser fault: {d:?}");
        in_bounds(src, d.span, whole);
        for l in &d.labels {
            in_bounds(src, l.span, whole);
        }
    }
    // Rendering must cope with every diagnostic.
    let _ = clada_markers::render(&doc.diagnostics, src, "doc", false);
}

fn in_bounds(src: &str, span: Span, within: Span) {
    assert!(span.start <= span.end, "span {span:?} is reversed");
    assert!(
        within.start <= span.start && span.end <= within.end,
        "span {span:?} is outside {within:?}"
    );
    assert!(
        src.is_char_boundary(span.start) && src.is_char_boundary(span.end),
        "span {span:?} cuts a character"
    );
}

/// The operations of every task, in order (`None` for malformed ones).
pub(crate) fn ops<'a>(doc: &'a Document<'_>) -> Vec<Option<&'a Op<'a>>> {
    doc.tasks().map(|t| t.op.as_ref()).collect()
}

/// A readable, stable dump of a parsed document.
pub(crate) fn dump(src: &str, doc: &Document<'_>) -> String {
    let lines = LineIndex::new(src);
    let pos = |s: Span| {
        let (a, b) = (lines.position(s.start), lines.position(s.end));
        format!(
            "{}:{}-{}:{} [{}..{}]",
            a.line, a.column, b.line, b.column, s.start, s.end
        )
    };
    let mut out = String::new();
    for unit in &doc.units {
        match unit {
            Unit::Block(b) => {
                let _ = writeln!(
                    out,
                    "block {} TASKS fence={} {}{}{}",
                    b.number,
                    b.fence,
                    pos(b.span),
                    b.version
                        .map(|v| format!(" version={}", v.as_str()))
                        .unwrap_or_default(),
                    if b.closer.is_none() { " unclosed" } else { "" },
                );
                for t in &b.tasks {
                    dump_task(&mut out, "  ", t, &pos);
                }
            }
            Unit::Task(t) => {
                let _ = writeln!(out, "standalone {}", t.block);
                dump_task(&mut out, "  ", t, &pos);
            }
        }
    }
    if doc.diagnostics.is_empty() {
        out.push_str("no diagnostics\n");
    }
    for d in &doc.diagnostics {
        dump_diagnostic(&mut out, d, &pos);
    }
    out
}

fn dump_task(out: &mut String, indent: &str, t: &Task<'_>, pos: &dyn Fn(Span) -> String) {
    let _ = writeln!(
        out,
        "{indent}task {} {} fence={} {}",
        t.number,
        t.kind,
        t.fence,
        pos(t.span)
    );
    for a in &t.attributes {
        let _ = writeln!(
            out,
            "{indent}  attr {}={:?} ({:?}) {}",
            a.name,
            a.value,
            a.quote,
            pos(a.span)
        );
    }
    for (i, s) in t.sections.iter().enumerate() {
        let _ = writeln!(out, "{indent}  section {i} {}", pos(*s));
    }
    match &t.op {
        Some(op) => {
            // clada's documents always give an edit the default matching:
            // said only when it is another.
            let shown = format!("{op:?}").replace(
                &format!(", matching: {:?}", clada_markers::Matching::default()),
                "",
            );
            let _ = writeln!(out, "{indent}  op {shown}");
        }
        None => {
            let _ = writeln!(out, "{indent}  malformed");
        }
    }
}

fn dump_diagnostic(out: &mut String, d: &Diagnostic, pos: &dyn Fn(Span) -> String) {
    let severity = if d.is_error() { "error" } else { "warning" };
    let _ = writeln!(
        out,
        "{severity}[{}] ({}) {} block={} task={}",
        d.kind,
        d.error_type(),
        pos(d.span),
        d.block.map_or("-".into(), |b| b.to_string()),
        d.task.map_or("-".into(), |t| t.to_string()),
    );
    let _ = writeln!(out, "  {}", d.message);
    for l in &d.labels {
        let _ = writeln!(out, "  label {}: {}", pos(l.span), l.message);
    }
    if let Some(h) = &d.help {
        let _ = writeln!(out, "  help: {h}");
    }
    if let Some(f) = &d.fix {
        let _ = writeln!(out, "  fix {}: {:?}", pos(f.span), f.replacement);
    }
}

/// Checks `report` against the JSON Schema the library publishes for it
/// (`clada schema check|apply`): every report the corpora produce is one.
pub(crate) fn assert_matches_schema(
    schema: clada_markers::report::Schema,
    report: &impl serde::Serialize,
) {
    use std::sync::LazyLock;
    static CHECK: LazyLock<jsonschema::Validator> =
        LazyLock::new(|| validator(clada_markers::report::check_schema()));
    static APPLY: LazyLock<jsonschema::Validator> =
        LazyLock::new(|| validator(clada_markers::report::apply_schema()));
    fn validator(schema: schemars::Schema) -> jsonschema::Validator {
        let value = serde_json::to_value(schema).unwrap();
        // Strict: a format the draft does not define is an error.
        jsonschema::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(&value)
            .unwrap()
    }
    let value = serde_json::to_value(report).unwrap();
    let v = match schema {
        clada_markers::report::Schema::Check => &*CHECK,
        clada_markers::report::Schema::Apply => &*APPLY,
    };
    let errors: Vec<String> = v
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the report does not match its schema: {errors:#?}\n{value:#}"
    );
}

/// What a test gives a run about its commands: the run's [`Settings`]
/// and the approvals it reads (passed through the API, never the
/// process's environment).
#[derive(Clone, Debug, Default)]
pub(crate) struct RunOptions {
    pub(crate) settings: clada_markers::Settings,
    pub(crate) approvals: Option<clada_markers::commands::Approvals>,
}

impl RunOptions {
    /// `apply` given these settings and approvals.
    pub(crate) fn give(self, apply: clada_markers::Apply) -> clada_markers::Apply {
        let apply = apply.settings(self.settings);
        match self.approvals {
            Some(a) => apply.approvals_in(a),
            None => apply,
        }
    }
}

/// Checks what every report of `apply` must hold (PROTOCOL §9.1): the
/// resend lists partition the document's tasks (each in exactly one list)
/// and name each edit no task came of by its place, and `ok` is true
/// exactly when every task is applied or already applied and nothing else
/// went wrong.
pub(crate) fn assert_resend_partitions(report: &ApplyReport, doc: &Document<'_>) {
    use clada_markers::Severity;
    use clada_markers::report::ResendEntry;
    let r = report.resend.as_ref().expect("a report with resend lists");
    let mut tasks: Vec<usize> = r
        .applied
        .iter()
        .chain(&r.already_applied)
        .chain(&r.needs_approval)
        .chain(&r.skipped)
        .copied()
        .chain(r.failed_tasks())
        .collect();
    tasks.sort_unstable();
    let want: Vec<usize> = doc.tasks().map(|t| t.number).collect();
    assert_eq!(tasks, want, "every task in exactly one list: {r:?}");
    // The errors no task came of: outside every unit, or of a malformed
    // unit without a task.
    let taskless: Vec<usize> = report
        .blocks
        .iter()
        .filter(|b| b.tasks.is_empty())
        .map(|b| b.number)
        .collect();
    let refused: Vec<usize> = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error && d.kind != "no_tasks")
        .filter(|d| d.block.is_none_or(|n| taskless.contains(&n)))
        .map(|d| d.start.line)
        .collect();
    let unread: Vec<usize> = r
        .failed
        .iter()
        .filter_map(|e| match e {
            ResendEntry::Edit(u) => Some(u.line),
            ResendEntry::Task(_) => None,
        })
        .collect();
    assert_eq!(
        unread.is_empty(),
        refused.is_empty(),
        "an edit refused has a place in the lists: {r:?}"
    );
    assert!(unread.windows(2).all(|w| w[0] < w[1]), "{unread:?}");
    assert!(
        unread.iter().all(|l| refused.contains(l)) && unread.first() == refused.first(),
        "unread {unread:?}, refused at {refused:?}"
    );
    let errors = report
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error);
    let held = tasks.len() == r.applied.len() + r.already_applied.len();
    let clean = !errors && report.error.is_none() && report.git.error.is_none();
    assert_eq!(report.ok, held && clean, "ok: {r:?}");
    assert_eq!(r.is_done() && clean, report.ok, "done: {r:?}");
}
