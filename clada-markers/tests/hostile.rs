//! Hostile documents: thousands of openers that never close. Each is read
//! once (the parser's `Nesting`), and what is reported is the same as for
//! a single one: every opener is its own unit, with its own diagnostic.
//! How long this takes is measured in `benches/benches/hostile.rs`.

use clada_markers::parse;
use clada_markers::syntax::DiagnosticKind;

fn kinds_per_line(doc: &clada_markers::Document<'_>) -> Vec<(usize, DiagnosticKind)> {
    let lines = clada_markers::syntax::LineIndex::new(doc.source);
    doc.diagnostics
        .iter()
        .map(|d| (lines.line(d.span.start), d.kind))
        .collect()
}

#[test]
fn unclosed_task_openers_each_end_at_the_next() {
    let n = 2000;
    let text = "<<<<<<< WRITE path=\"a\"\n".repeat(n);
    let doc = parse(&text);
    assert_eq!(doc.units.len(), n);
    let kinds = kinds_per_line(&doc);
    assert_eq!(kinds.len(), n);
    for (i, (line, kind)) in kinds.iter().enumerate() {
        assert_eq!((*line, *kind), (i + 1, DiagnosticKind::UnclosedOpener));
    }
    // Every unit is reported against itself: none may run.
    assert!((1..=n).all(|b| !doc.is_runnable(b)));
    assert!((1..=n).all(|b| doc.diagnostics_of(b).count() == 1));
}

#[test]
fn the_last_unclosed_opener_still_reads_to_the_end() {
    let text = "<<<<<<< WRITE path=\"a\"\n<<<<<<< WRITE path=\"b\"\nbody\n<<<<<<< FOO\nmore\n";
    let doc = parse(text);
    assert_eq!(doc.units.len(), 2);
    // The second swallows the unknown opener as content, up to the end.
    assert_eq!(doc.units[1].span().end, text.len());
}

#[test]
fn unclosed_blocks_and_unknown_keywords_are_passed_over_once() {
    let n = 2000;
    let text = "<<<<<<< TASKS\n".repeat(n);
    let doc = parse(&text);
    assert_eq!(doc.units.len(), n);
    assert_eq!(
        doc.diagnostics
            .iter()
            .filter(|d| d.kind == DiagnosticKind::UnclosedOpener)
            .count(),
        n
    );
    let text = format!(
        "<<<<<<< TASKS version=\"2.0\"\n{}",
        "<<<<<<< FOO\n".repeat(n)
    );
    let doc = parse(&text);
    let skipped = doc
        .diagnostics
        .iter()
        .filter(|d| d.kind == DiagnosticKind::SkippedUnknownKeyword)
        .count();
    assert_eq!(skipped, n);
    // A closed unknown opener still passes over its whole extent.
    let doc = parse("<<<<<<< TASKS version=\"2.0\"\n<<<<<<< FOO\nx\n>>>>>>> FOO\n>>>>>>> TASKS\n");
    let d = doc
        .diagnostics
        .iter()
        .find(|d| d.kind == DiagnosticKind::SkippedUnknownKeyword)
        .unwrap();
    assert!(d.message.contains("lines 2–4"), "{}", d.message);
}

#[test]
fn a_document_over_the_size_limit_is_refused_unparsed() {
    let unit = "<<<<<<< REMOVE path=\"a\"\n>>>>>>> END\n";
    let text = unit.repeat(clada_markers::syntax::MAX_DOCUMENT_SIZE / unit.len() + 1);
    let doc = parse(&text);
    assert!(doc.units.is_empty());
    assert_eq!(doc.diagnostics.len(), 1);
    assert_eq!(doc.diagnostics[0].kind, DiagnosticKind::InputTooLarge);
    assert!(doc.has_errors());
}
