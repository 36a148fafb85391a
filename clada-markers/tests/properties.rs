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

/// Two versions of a file, A and B: lines from a small alphabet (so that
/// text repeats), blank ones and ones with white space at their ends among
/// them; B is A with lines deleted, replaced and inserted. Both in one line
/// break style (LF or CRLF), each with or without a final line break.
fn file_pair() -> impl Strategy<Value = (String, String)> {
    let line = " ?[ab]{0,2}[ \t]{0,2}";
    (
        prop::collection::vec(line, 0..10),
        prop::collection::vec((0u8..6, line), 0..12),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(a, changes, crlf, a_final, b_final)| {
            let mut b = Vec::new();
            let mut changes = changes.into_iter();
            for l in &a {
                match changes.next() {
                    Some((0, _)) => {}
                    Some((1, new)) => b.push(new),
                    Some((2, new)) => {
                        b.push(l.clone());
                        b.push(new);
                    }
                    _ => b.push(l.clone()),
                }
            }
            b.extend(changes.filter(|c| c.0 == 2).map(|c| c.1));
            let br = if crlf { "\r\n" } else { "\n" };
            let join = |lines: &[String], last: bool| {
                let mut t = lines.join(br);
                if last && !lines.is_empty() {
                    t.push_str(br);
                }
                t
            };
            (join(&a, a_final), join(&b, b_final))
        })
}

/// `doc` applied to a directory holding `f.txt` with `text`: whether the
/// run succeeded, and the file after it.
fn applied_to(
    text: &str,
    doc: &clada_markers::Document<'_>,
) -> Result<(bool, String), TestCaseError> {
    let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let file = dir.path().join("f.txt");
    std::fs::write(&file, text).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let apply =
        clada_markers::Apply::new(dir.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let report = apply.git(None).run(doc);
    let after = std::fs::read_to_string(&file).unwrap_or_default();
    Ok((report.ok, after))
}

/// A and B with two spaces at the end of each line the diff of A into B
/// keeps (a line both hold, in place).
fn padded_kept_lines(a: &str, b: &str) -> (String, String) {
    let diff = similar::TextDiff::from_lines(a, b);
    let (mut keep_a, mut keep_b) = (Vec::new(), Vec::new());
    for op in diff.ops() {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = *op
        {
            keep_a.extend(old_index..old_index + len);
            keep_b.extend(new_index..new_index + len);
        }
    }
    let pad = |text: &str, keep: &[usize]| -> String {
        text.split_inclusive('\n')
            .enumerate()
            .map(|(i, line)| {
                if !keep.contains(&i) {
                    return line.to_owned();
                }
                let body = line.trim_end_matches(['\r', '\n']);
                format!("{body}  {}", &line[body.len()..])
            })
            .collect()
    };
    (pad(a, &keep_a), pad(b, &keep_b))
}

/// The edits of a unified diff as Cline's blocks in one `replace_in_file`
/// call: `None` where a block cannot say them (a body that does not end
/// with a line break, or an operation that is not an edit).
fn cline_blocks(doc: &clada_markers::Document<'_>) -> Option<String> {
    let mut out = String::from("<replace_in_file>\n<path>f.txt</path>\n<diff>\n");
    for t in doc.tasks() {
        let (search, replace) = match t.op.as_ref()? {
            Op::Edit {
                search, replace, ..
            } => (search.as_ref(), replace.as_ref()),
            _ => return None,
        };
        let whole = |s: &str| s.is_empty() || s.ends_with('\n');
        if search.is_empty() || !whole(search) || !whole(replace) {
            return None;
        }
        out.push_str(&format!(
            "------- SEARCH\n{search}=======\n{replace}+++++++ REPLACE\n"
        ));
    }
    out.push_str("</diff>\n</replace_in_file>\n");
    Some(out)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 160,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/properties.txt"))),
        ..ProptestConfig::default()
    })]

    /// The exact oracle (PROTOCOL §11.8): the unified diff of A into B as
    /// `similar` writes it, applied to A through `--dialect udiff`, gives
    /// B, byte for byte; without its numbers, B or an error. The same edit as aider blocks, a codex patch and
    /// Cline blocks gives B too, or an error: never another file with ✓
    /// (codex ends a file it updates with a line break, PROTOCOL §11.2).
    #[test]
    fn a_unified_diff_of_a_into_b_applied_to_a_gives_b((a, b) in file_pair()) {
        use clada_markers::dialect::{Dialect, convert, parse_dialect};
        prop_assume!(a != b);
        // A file without a line break has no style to keep: clada writes
        // LF in it (PROTOCOL §4).
        prop_assume!(a.contains("\r\n") || !b.contains("\r\n"));
        let diff = similar::TextDiff::from_lines(&a, &b)
            .unified_diff()
            .context_radius(3)
            .header("a/f.txt", "b/f.txt")
            .to_string();
        let options = clada_markers::ParseOptions::default();
        let doc = parse_dialect(&diff, Dialect::Udiff, options);
        prop_assert!(!doc.has_errors(), "{}\n{:?}", diff, doc.diagnostics);
        let (ok, after) = applied_to(&a, &doc)?;
        prop_assert!(ok, "not applied:\n{}", diff);
        prop_assert_eq!(&after, &b, "{}", diff);

        // Without its `@@` numbers (as aider's prompt has models write a
        // diff), nothing chooses between equal candidates: B, or an error.
        let bare: String = diff
            .split_inclusive('\n')
            .map(|l| if l.starts_with("@@ ") { "@@ @@\n" } else { l })
            .collect();
        let doc_bare = parse_dialect(&bare, Dialect::Udiff, options);
        prop_assert!(!doc_bare.has_errors(), "{}\n{:?}", bare, doc_bare.diagnostics);
        let (ok, after) = applied_to(&a, &doc_bare)?;
        if ok {
            prop_assert_eq!(&after, &b, "✓ but another file:\n{}", bare);
        }

        // The lines the diff keeps, given white space at their ends in A
        // (a Markdown hard break): the hunks are found by the white-space
        // tier, and their context lines keep the file's bytes (PROTOCOL
        // §11.8). B with the same lines so ended, or an error.
        let (a_ws, b_ws) = padded_kept_lines(&a, &b);
        let (ok, after) = applied_to(&a_ws, &doc)?;
        if ok {
            prop_assert_eq!(&after, &b_ws, "✓ but another file, from:\n{:?}\n{}", a_ws, diff);
        }

        let mut others: Vec<(Dialect, String)> = [Dialect::Aider, Dialect::Codex]
            .into_iter()
            .filter_map(|to| Some((to, convert(&doc, to).ok()?)))
            .collect();
        others.extend(cline_blocks(&doc).map(|t| (Dialect::Cline, t)));
        for (dialect, text) in others {
            let again = parse_dialect(&text, dialect, options);
            if again.has_errors() {
                continue;
            }
            let (ok, after) = applied_to(&a, &again)?;
            if !ok {
                continue;
            }
            let mut want = b.clone();
            let br = if a.contains("\r\n") { "\r\n" } else { "\n" };
            if dialect == Dialect::Codex && !want.is_empty() && !want.ends_with('\n') {
                want.push_str(br);
            }
            prop_assert_eq!(&after, &want, "{} ✓ but another file:\n{}\nfrom:\n{}", dialect, text, diff);
        }
    }
}

/// A unit each dialect reads, naming `ok.txt`: the tasks a reply holds
/// beside an edit of another shape.
fn own_unit(dialect: clada_markers::dialect::Dialect) -> &'static str {
    use clada_markers::dialect::Dialect;
    match dialect {
        Dialect::Clada => "<<<<<<< WRITE path=\"ok.txt\"\nok\n>>>>>>> END\n",
        Dialect::Aider => "ok.txt\n```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n",
        Dialect::Codex => "*** Begin Patch\n*** Add File: ok.txt\n+ok\n*** End Patch\n",
        Dialect::Cml => "<write path=\"ok.txt\">ok</write>\n",
        Dialect::Udiff => "--- a/ok.txt\n+++ b/ok.txt\n@@ @@\n-a\n+b\n",
        Dialect::Cline => {
            "<replace_in_file>\n<path>ok.txt</path>\n<diff>\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n"
        }
    }
}

/// Edit-shaped texts as models write them, each as the text before it (a
/// fence, a list item), its edit, and the text after it: every format's
/// blocks, and the shapes that were once dropped (a diff in a list item,
/// a rename alone, a bare hunk, a hunk whose counts are too small before
/// an empty context line, a `write_to_file` call).
const EDIT_SHAPES: &[(&str, &str, &str)] = &[
    (
        "",
        "<<<<<<< WRITE path=\"edited.txt\"\nx\n>>>>>>> END\n",
        "",
    ),
    (
        "",
        "edited.txt\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
        "",
    ),
    (
        "",
        "*** Begin Patch\n*** Update File: edited.txt\n@@\n-a\n+b\n*** End Patch\n",
        "",
    ),
    ("", "<write path=\"edited.txt\">x</write>\n", ""),
    (
        "",
        "--- a/edited.txt\n+++ b/edited.txt\n@@ -1 +1 @@\n-a\n+b\n",
        "",
    ),
    (
        "```diff\n",
        "--- a/edited.txt\n+++ b/edited.txt\n@@ ... @@\n a\n-b\n+c\n",
        "```\n",
    ),
    (
        "1. Then:\n\n   ```diff\n",
        "   --- a/edited.txt\n   +++ b/edited.txt\n   @@ ... @@\n    a\n   -b\n   +c\n",
        "   ```\n",
    ),
    (
        "",
        "diff --git a/edited.txt b/moved.txt\nsimilarity index 100%\nrename from edited.txt\nrename to moved.txt\n",
        "",
    ),
    ("```diff\n", "@@\n-a\n+b\n", "```\n"),
    (
        "",
        "--- a/edited.txt\n+++ b/edited.txt\n@@ -1,2 +1,2 @@\n f\n-a\n+b\n\n g\n-c\n+d\n",
        "",
    ),
    (
        "",
        "edited.txt\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n",
        "",
    ),
    (
        "",
        "<replace_in_file>\n<path>edited.txt</path>\n<diff>\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n",
        "",
    ),
    (
        "",
        "<apply_diff>\n<path>edited.txt</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:1\n-------\na\n=======\nb\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n",
        "",
    ),
    (
        "",
        "<write_to_file>\n<path>edited.txt</path>\n<content>\nx\n</content>\n</write_to_file>\n",
        "",
    ),
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/properties.txt"))),
        ..ProptestConfig::default()
    })]

    /// In every dialect, a reply holding an edit-shaped text either reads
    /// all of it into its units, or has an error (never `ok: true` with
    /// the edit dropped, or cut short), beside the dialect's own tasks or
    /// alone, among prose.
    #[test]
    fn an_edit_shaped_text_is_read_or_refused_in_every_dialect(
        shape in prop::sample::select(EDIT_SHAPES),
        own in any::<bool>(),
        before in prop::collection::vec("[a-z][a-z ]{0,20}", 0..3),
        after in prop::collection::vec("[a-z][a-z ]{0,20}", 0..3),
    ) {
        use clada_markers::dialect::{Dialect, parse_dialect};
        let (open, core, close) = shape;
        for dialect in Dialect::ALL {
            let mut reply = String::new();
            for l in &before {
                reply.push_str(l);
                reply.push_str("\n\n");
            }
            if own {
                reply.push_str(own_unit(dialect));
                reply.push('\n');
            }
            reply.push_str(open);
            let start = reply.len();
            reply.push_str(core);
            // The last line of the edit, without its line break.
            let end = reply.len() - 1;
            reply.push_str(close);
            for l in &after {
                reply.push('\n');
                reply.push_str(l);
                reply.push('\n');
            }
            let doc = parse_dialect(&reply, dialect, clada_markers::ParseOptions::default());
            let read = doc.units.iter().any(|u| {
                let s = u.span();
                s.start <= start && end <= s.end
            });
            prop_assert!(
                read || doc.has_errors(),
                "{dialect}: the edit is dropped without an error:\n{reply}\n{:#?}",
                doc.diagnostics
            );
        }
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
