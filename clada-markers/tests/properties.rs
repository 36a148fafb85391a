//! Property tests: the parser never panics and keeps its spans in bounds,
//! printing then parsing gives the same operations back, and lexing in
//! chunks changes nothing.

use clada_markers::engine as matching;
use clada_markers::generate::strategy::{document, model};
use clada_markers::syntax::{Lexer, Quote, lex};
use clada_markers::{Count, Op, Task, Unit, parse, print};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use crate::common::check_invariants;

fn values_of<'a>(task: &'a Task<'a>) -> Option<Vec<&'a str>> {
    Some(match task.op.as_ref()? {
        Op::Write { path, .. }
        | Op::Edit { path, .. }
        | Op::EditRange { path, .. }
        | Op::Remove { path } => vec![path],
        Op::Move { from, to } => vec![from, to],
        Op::Run { dir, .. } => dir.iter().map(|d| d.as_ref()).collect(),
    })
}

/// A text file: lines from a small alphabet (so that text repeats), one
/// line break style throughout, maybe a byte-order mark, maybe no final
/// line feed. Returns the file and its text as matching sees it (LF breaks,
/// no mark, a final line feed).
fn text_file() -> impl Strategy<Value = (String, String)> {
    (
        prop::collection::vec("[ab é\t]{0,5}", 1..12),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf, bom, final_break)| {
            let br = if crlf { "\r\n" } else { "\n" };
            let mut file = String::new();
            if bom {
                file.push('\u{feff}');
            }
            file.push_str(&lines.join(br));
            if final_break {
                file.push_str(br);
            }
            let mut seen = file.trim_start_matches('\u{feff}').replace("\r\n", "\n");
            if !seen.is_empty() && !seen.ends_with('\n') {
                seen.push('\n');
            }
            (file, seen)
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/properties.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn never_panics_and_keeps_spans_in_bounds(src in document()) {
        let doc = parse(&src);
        check_invariants(&src, &doc);
    }

    #[test]
    fn every_front_end_reads_any_text_and_keeps_spans_in_bounds(src in prop_oneof![document(), any::<String>()]) {
        use clada_markers::dialect::{Dialect, parse_dialect};
        for dialect in [Dialect::Aider, Dialect::Codex, Dialect::Cml, Dialect::Udiff, Dialect::Cline] {
            let doc = parse_dialect(&src, dialect, clada_markers::ParseOptions::default());
            for u in &doc.units {
                for s in std::iter::once(u.span()).chain(u.tasks().iter().map(|t| t.span)) {
                    prop_assert!(s.start <= s.end && s.end <= src.len(), "{dialect}: {s:?}");
                    prop_assert!(src.is_char_boundary(s.start) && src.is_char_boundary(s.end));
                }
            }
            for d in &doc.diagnostics {
                prop_assert!(d.span.end <= src.len() && src.is_char_boundary(d.span.start) && src.is_char_boundary(d.span.end), "{dialect}: {d:?}");
            }
        }
    }

    #[test]
    fn never_panics_on_arbitrary_text(src in any::<String>()) {
        let doc = parse(&src);
        check_invariants(&src, &doc);
    }

    #[test]
    fn arbitrary_models_print_and_parse_back(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        use arbitrary::Arbitrary as _;
        let mut u = arbitrary::Unstructured::new(&bytes);
        let Ok(model) = clada_markers::generate::Model::arbitrary(&mut u) else {
            return Ok(());
        };
        let printed = model.print().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let doc = parse(&printed);
        prop_assert!(!doc.has_errors(), "{printed}\n{:#?}", doc.diagnostics);
        let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.clone()).collect();
        prop_assert_eq!(ops, model.ops(), "{}", printed);
    }

    #[test]
    fn converting_to_another_dialect_keeps_every_operation(model in model()) {
        use clada_markers::dialect::{Dialect, convert, parse_dialect};
        let printed = model.print().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let doc = parse(&printed);
        for to in [Dialect::Aider, Dialect::Codex, Dialect::Udiff] {
            // What the target cannot say is refused; what it can, it says
            // exactly.
            let Ok(text) = convert(&doc, to) else { continue };
            let again = parse_dialect(&text, to, clada_markers::ParseOptions::default());
            prop_assert!(!again.has_errors(), "{}:\n{}\n{:#?}", to, text, again.diagnostics);
            // The same tasks, but for the matching policy each dialect
            // gives its edits (codex's passes).
            let ops: Vec<_> = again
                .tasks()
                .filter_map(|t| t.op.clone())
                .map(|mut op| {
                    if let Op::Edit { matching, .. } | Op::EditRange { matching, .. } = &mut op {
                        *matching = clada_markers::Matching::default();
                    }
                    op
                })
                .collect();
            prop_assert_eq!(ops, model.ops(), "{}:\n{}", to, text);
        }
    }

    #[test]
    fn printing_then_parsing_gives_the_same_units(model in model()) {
        let units = model.to_units();
        let printed = model.print().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let doc = parse(&printed);
        prop_assert!(!doc.has_errors(), "{printed}\n{:#?}", doc.diagnostics);
        prop_assert_eq!(doc.units.len(), units.len(), "{}", printed);
        for (got, want) in doc.units.iter().zip(&units) {
            prop_assert_eq!(got.is_block(), want.is_block());
            if let (Unit::Block(g), Unit::Block(w)) = (got, want) {
                prop_assert_eq!(g.version, w.version);
                prop_assert_eq!(g.fence, w.fence);
            }
            prop_assert_eq!(got.tasks().len(), want.tasks().len());
            for (g, w) in got.tasks().iter().zip(want.tasks()) {
                prop_assert_eq!(g.kind, w.kind);
                prop_assert_eq!(&g.op, &w.op, "{}", printed);
                // The printer lengthens a fence only when a body needs it.
                prop_assert!(g.fence >= w.fence);
                // Quoting is kept where the value allows it.
                let want_quote = w.attributes.first().map_or(Quote::Double, |a| a.quote);
                for (a, value) in g.attributes.iter().zip(values_of(g).unwrap_or_default()) {
                    let representable = match want_quote {
                        Quote::Double => true,
                        Quote::Single => !value.contains('\''),
                        Quote::Bare => !value.contains([' ', '\t', '"', '\'']) && !value.is_empty(),
                    };
                    if representable {
                        prop_assert_eq!(a.quote, want_quote, "{}", printed);
                    }
                }
            }
        }
        // Printing is canonical: printing the parsed units again changes nothing.
        prop_assert_eq!(print(&doc.units).ok(), Some(printed));
    }

    #[test]
    fn lexing_in_chunks_changes_nothing(src in document(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        // Cut points on character boundaries, from 0 to the end.
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(src.len() + 1)).collect();
        points.extend([0, src.len()]);
        for p in &mut points {
            while !src.is_char_boundary(*p) { *p -= 1; }
        }
        points.sort_unstable();
        points.dedup();
        let mut lexer = Lexer::new();
        let mut tokens = Vec::new();
        for w in points.windows(2) {
            lexer.feed(&src[w[0]..w[1]], &mut tokens);
        }
        lexer.finish(&mut tokens);
        prop_assert_eq!(tokens, lex(&src));
    }

    #[test]
    fn an_edit_and_its_inverse_give_back_the_original_bytes(
        (file, seen) in text_file(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        // A search text taken from the file, occurring exactly once.
        let chars: Vec<(usize, char)> = seen.char_indices().collect();
        prop_assume!(!chars.is_empty());
        let (i, j) = (a.index(chars.len()), b.index(chars.len()));
        let (i, j) = (i.min(j), i.max(j) + 1);
        let start = chars[i].0;
        let end = chars.get(j).map_or(seen.len(), |c| c.0);
        let search = &seen[start..end];
        prop_assume!(seen.matches(search).count() == 1);
        // And that occurrence is this one (`matches` does not overlap:
        // "\n\n" of "\n\n\n" is counted once, at the first line break).
        prop_assume!(seen.find(search) == Some(start));
        // Not from inside a line's indentation: such an occurrence is
        // re-indented, never replaced as it stands (PROTOCOL §3).
        let before = &seen[seen[..start].rfind('\n').map_or(0, |k| k + 1)..start];
        prop_assume!(before.is_empty() || !before.chars().all(|c| c == ' ' || c == '\t'));
        // A replacement that is surely unique, ending like the search text
        // and keeping a line break if the search text had one (else the
        // file's line break style may go with it).
        let inner = if search.contains('\n') { "\n" } else { "" };
        let last = if search.ends_with('\n') { "\n" } else { "" };
        let replace = &format!("«{inner}X»{last}");

        let one = Count::default();
        let edited = matching::edit(&file, search, replace, one).map_err(|m| TestCaseError::fail(format!("{m:?}")))?;
        prop_assert_eq!(edited.replacements, 1);
        let back = matching::edit(&edited.text, replace, search, one).map_err(|m| TestCaseError::fail(format!("{m:?}")))?;
        prop_assert_eq!(back.text, file);
    }
}

/// The report of `src` applied to a small project (no git, no approvals:
/// only built-in commands run, the run bounded in time).
fn applied(src: &str) -> (clada_markers::Document<'_>, clada_markers::ApplyReport) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.path().join("x"), "x\n").unwrap();
    let doc = parse(src);
    let settings = clada_markers::Settings {
        git: None,
        total_timeout: Some(std::time::Duration::from_secs(5)),
        ..clada_markers::Settings::default()
    };
    let report = clada_markers::Apply::new(dir.path())
        .unwrap()
        .settings(settings)
        .run(&doc);
    (doc, report)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/properties.txt"))),
        ..ProptestConfig::default()
    })]

    /// PROTOCOL §9.1 (issue 30): for any document, the five resend lists
    /// partition every block it holds (each task in exactly one list, each
    /// edit no task came of named by its place), and `ok` is true exactly
    /// when every task is applied or already applied and nothing else
    /// went wrong.
    #[test]
    fn the_resend_lists_partition_every_block_and_ok_follows_them(
        src in prop_oneof![
            document(),
            model().prop_filter_map("printable", |m| m.print().ok()),
        ],
    ) {
        let (doc, report) = applied(&src);
        crate::common::assert_resend_partitions(&report, &doc);
    }
}
