//! Corpus tests: one test per case under `corpus/`.
//!
//! `corpus/parse/`: each case is a document (`NAME.clada`) with, beside it,
//! its expectations written by hand from the spec (`NAME.expect`) and the
//! parser's full output as an insta snapshot (`NAME.snap`). The
//! expectations name the number of units and tasks and every diagnostic by
//! severity, kind and line; the snapshot pins spans, messages and
//! operations.
//!
//! `corpus/apply/`: each case is a directory with the tree before
//! (`input/`), the document (`patch.txt`), the tree after (`expected/`) and
//! an `expect` file with the exit code, each task's outcome and any setup
//! (links, modes, files outside the root). See `apply.rs`.
//!
//! `corpus/codex-scenarios/`: codex's own apply-patch scenarios, compared
//! as whole trees. See `scenarios.rs`.
//!
//! `corpus/udiff-history/`: real commits' diffs applied to their parents'
//! files, compared with what `git apply` leaves. See `history.rs`.

#![allow(clippy::unwrap_used)] // test support code: a failure should panic

mod apply;
mod common;
mod history;
mod scenarios;

use std::collections::BTreeMap;
use std::path::Path;

use clada_markers::{ParseOptions, decode, parse_with, print};

fn parse_case(path: &Path, bytes: Vec<u8>) -> datatest_stable::Result<()> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or("bad case name")?;
    let expect_path = path.with_extension("expect");
    let expect = std::fs::read_to_string(&expect_path)
        .map_err(|e| format!("{}: {e}", expect_path.display()))?;
    let expect = Expectation::read(&expect)?;

    let (actual, snapshot) = match decode(&bytes) {
        Err(d) => {
            let upto = bytes.get(..d.span.start).unwrap_or_default();
            let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
            let mut a = Actual::default();
            a.diagnostics.insert(format!("error {} {line}", d.kind), 1);
            (
                a,
                format!("unreadable: {} at {:?}\n  {}\n", d.kind, d.span, d.message),
            )
        }
        Ok(src) => {
            let options = ParseOptions {
                allow_escape: expect.allow_escape,
            };
            let doc = parse_with(src, options);
            common::check_invariants(src, &doc);
            common::assert_matches_schema(
                clada_markers::report::Schema::Check,
                &clada_markers::CheckReport::new(&doc),
            );
            round_trip(src, &doc, options);
            fixes_work_in_one_round(src, &doc, options);
            let lines = clada_markers::syntax::LineIndex::new(src);
            let mut a = Actual {
                blocks: doc.units.len(),
                tasks: doc.tasks().count(),
                ..Actual::default()
            };
            for d in &doc.diagnostics {
                let sev = if d.is_error() { "error" } else { "warning" };
                *a.diagnostics
                    .entry(format!("{sev} {} {}", d.kind, lines.line(d.span.start)))
                    .or_default() += 1;
            }
            (a, common::dump(src, &doc))
        }
    };

    if let Some(blocks) = expect.blocks {
        assert_eq!(actual.blocks, blocks, "number of units");
    }
    if let Some(tasks) = expect.tasks {
        assert_eq!(actual.tasks, tasks, "number of tasks");
    }
    assert_eq!(
        actual.diagnostics, expect.diagnostics,
        "diagnostics (severity kind line)"
    );

    let dir = path
        .parent()
        .ok_or("case without a directory")?
        .canonicalize()?;
    insta::with_settings!({
        snapshot_path => dir,
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(stem.to_owned(), snapshot);
    });
    Ok(())
}

/// A document with a near-miss marker (PROTOCOL §2.1): applying every fix
/// its errors offer gives a document without an error, in one round. (A
/// warning's fix is for a line that may be prose: it is not applied.)
fn fixes_work_in_one_round(src: &str, doc: &clada_markers::Document<'_>, options: ParseOptions) {
    let near_miss = doc
        .diagnostics
        .iter()
        .any(|d| d.kind.name() == "malformed_marker" && d.is_error() && d.fix.is_some());
    if !near_miss {
        return;
    }
    let mut fixes: Vec<&clada_markers::Fix> = doc
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .filter_map(|d| d.fix.as_deref())
        .collect();
    fixes.sort_by_key(|f| (f.span.start, f.span.end));
    let mut fixed = String::new();
    let mut at = 0;
    for f in fixes {
        // Fixes that overlap one already applied are the same repair.
        if f.span.start < at {
            continue;
        }
        fixed.push_str(&src[at..f.span.start]);
        fixed.push_str(&f.replacement);
        at = f.span.end;
    }
    fixed.push_str(&src[at..]);
    let again = parse_with(&fixed, options);
    let errors: Vec<_> = again.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(
        errors.is_empty(),
        "the fixes leave errors:\n{fixed}\n{errors:#?}"
    );
}

/// When every task is well formed, printing the document and parsing the
/// result gives the same operations.
fn round_trip(src: &str, doc: &clada_markers::Document<'_>, options: ParseOptions) {
    if doc.has_errors() || doc.tasks().count() == 0 {
        return;
    }
    let printed = print(&doc.units).unwrap_or_else(|e| panic!("cannot print {src:?}: {e}"));
    let again = parse_with(&printed, options);
    assert!(
        !again.has_errors(),
        "printed text has errors:\n{printed}\n{:?}",
        again.diagnostics
    );
    assert_eq!(common::ops(&again), common::ops(doc), "printed:\n{printed}");
}

#[derive(Default, Debug)]
struct Actual {
    blocks: usize,
    tasks: usize,
    diagnostics: BTreeMap<String, usize>,
}

#[derive(Default, Debug)]
struct Expectation {
    blocks: Option<usize>,
    tasks: Option<usize>,
    allow_escape: bool,
    /// "severity kind line" -> how many times.
    diagnostics: BTreeMap<String, usize>,
}

impl Expectation {
    /// Lines: `blocks N`, `tasks N`, `allow-escape`, `error KIND LINE`,
    /// `warning KIND LINE`; `#` starts a comment.
    fn read(text: &str) -> Result<Self, String> {
        let mut e = Expectation::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = |w: &str| {
                w.parse::<usize>()
                    .map_err(|_| format!("line {}: `{w}` is not a number", n + 1))
            };
            match words.as_slice() {
                [] => {}
                ["blocks", v] => e.blocks = Some(number(v)?),
                ["tasks", v] => e.tasks = Some(number(v)?),
                ["allow-escape"] => e.allow_escape = true,
                [sev @ ("error" | "warning"), kind, line] => {
                    number(line)?;
                    *e.diagnostics
                        .entry(format!("{sev} {kind} {line}"))
                        .or_default() += 1;
                }
                _ => return Err(format!("line {}: cannot read `{line}`", n + 1)),
            }
        }
        Ok(e)
    }
}

datatest_stable::harness! {
    { test = parse_case, root = "../corpus/parse", pattern = r"\.clada$" },
    { test = apply::apply_case, root = "../corpus/apply", pattern = r"patch\.txt$" },
    { test = scenarios::codex_scenario, root = "../corpus/codex-scenarios", pattern = r"patch\.txt$" },
    { test = history::udiff_history, root = "../corpus/udiff-history", pattern = r"patch\.diff$" },
}
