//! Dialects (PROTOCOL §11): other edit formats models write, read into the
//! same [`Document`] so that one engine, one set of rules and one report
//! serve them all.
//!
//! Each front end lowers its blocks to units and tasks with spans into the
//! original text, so positions, excerpts and diagnostics work unchanged;
//! bodies are borrowed where they are one slice of the input and owned
//! where they are not. Matching is the same in every dialect (PROTOCOL
//! §3); a front end may give an edit a matching policy and a line hint
//! beside its `count` ([`crate::Matching`]). A document that holds no task
//! but edits in a format its dialect does not read is an error, never an
//! empty success (`foreign`).

use crate::syntax::Document;
use crate::syntax::ParseOptions;

pub(crate) mod aider;
pub(crate) mod cline;
pub(crate) mod cml;
pub(crate) mod codex;
mod convert;
pub(crate) mod edges;
mod fix;
pub(crate) mod foreign;
mod kind;
mod lines;
pub(crate) mod udiff;

pub use convert::{ConvertError, convert};
pub use fix::{Fixed, apply_fixes, diff as fix_diff, fix};
pub use kind::Dialect;

/// The dialect `auto` reads `source` in (PROTOCOL §11): clada, unless no
/// opener has attributes and the document holds another dialect's blocks.
/// One document is never read in two dialects.
pub fn detect(source: &str) -> Dialect {
    let mut aider = false;
    // A codex patch, a unified diff and Cline's or Roo's blocks are
    // unmistakable: the first found decides (a diff may show a patch's
    // lines, and a patch a diff's).
    let mut first: Option<Dialect> = None;
    let mut before: [&str; 3] = [""; 3];
    for line in source.lines() {
        if let Some(m) = crate::syntax::classify(line, 1)
            && m.shape == crate::syntax::Shape::Opener
            && m.keyword.is_some()
            && !m.rest().is_empty()
        {
            return Dialect::Clada;
        }
        if first.is_none() {
            if codex::is_begin(line) {
                first = Some(Dialect::Codex);
            } else if udiff::is_header(&before, line) {
                first = Some(Dialect::Udiff);
            } else if cline::shows_blocks(before[2], line) {
                first = Some(Dialect::Cline);
            }
        }
        if !aider && aider::is_head(line) && aider::file_name(&before).is_some() {
            aider = true;
        }
        before = [before[1], before[2], line];
    }
    // aider blocks may sit in a patch's prose.
    if let Some(d) = first {
        d
    } else if cml::has_elements(source) {
        Dialect::Cml
    } else if aider {
        Dialect::Aider
    } else {
        Dialect::Clada
    }
}

/// A model's reply read as the command line, the MCP and language servers
/// and the Python package read it: in the dialect [`detect`] finds, with
/// other formats' edits beside its tasks reported (`foreign_format`,
/// PROTOCOL §11.7). The one front door for a reply whose format is not
/// known; [`crate::parse`] reads clada's own format only.
///
/// ```
/// use clada_markers::{Dialect, ParseOptions, read};
///
/// let reply = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n";
/// let (dialect, doc) = read(reply, ParseOptions::default());
/// assert_eq!(dialect, Dialect::Udiff);
/// assert_eq!(doc.tasks().count(), 1);
/// ```
pub fn read(source: &str, options: ParseOptions) -> (Dialect, Document<'_>) {
    let dialect = detect(source);
    (dialect, parse_dialect(source, dialect, options))
}

/// The units of `source` read as `dialect`, each with its diagnostics:
/// a clada document a window at a time ([`crate::syntax::units`]), so that
/// a caller that drops each unit once used never holds the tree; aider's a
/// block at a time, each its own unit; the other dialects, whose units
/// hold a file's hunks, are lowered whole first (PROTOCOL §11).
pub fn parse_units(
    source: &str,
    dialect: Dialect,
    options: ParseOptions,
) -> Box<dyn Iterator<Item = crate::syntax::Parsed<'_>> + '_> {
    match dialect {
        Dialect::Clada => {
            // Whether the document holds a task is known at its end.
            let mut any_task = false;
            // Where the units are: the prose between them is looked at
            // for other formats' edits when the document holds tasks.
            let mut spans = Vec::new();
            let mut units = crate::syntax::units(source, options);
            let mut ended = false;
            Box::new(std::iter::from_fn(move || {
                if let Some(p) = units.next() {
                    any_task |= p.unit.as_ref().is_some_and(|u| !u.tasks().is_empty());
                    spans.extend(p.unit.as_ref().map(crate::Unit::span));
                    return Some(p);
                }
                if std::mem::replace(&mut ended, true) {
                    return None;
                }
                let diagnostics = if any_task {
                    foreign::between(source, &spans, dialect)
                } else {
                    foreign::foreign(source, dialect)
                };
                (!diagnostics.is_empty()).then_some(crate::syntax::Parsed {
                    unit: None,
                    diagnostics,
                })
            }))
        }
        // Each aider block is its own unit, read when asked for.
        Dialect::Aider => Box::new(aider::units(source, options)),
        _ => Box::new(parse_dialect(source, dialect, options).into_parsed()),
    }
}

/// Pushes `item` onto `list`, growing it by an eighth when full, not by
/// doubling: a block of many small tasks (a file's hunks) is held whole,
/// and a doubled list may stand half empty at its largest.
pub(crate) fn push_tight<T>(list: &mut Vec<T>, item: T) {
    if list.len() == list.capacity() {
        list.reserve_exact((list.len() / 8).max(4));
    }
    list.push(item);
}

/// Parses `source` as `dialect` (after [`detect`] for `auto`). Whatever
/// the dialect, an edit whose replacement is its search text is refused
/// (PROTOCOL §3), and a document that holds no task but edits in another
/// format, or a dialect's markers written almost right, is an error
/// (PROTOCOL §11.7).
pub fn parse_dialect(source: &str, dialect: Dialect, options: ParseOptions) -> Document<'_> {
    let mut doc = match dialect {
        Dialect::Clada => crate::syntax::parse_with(source, options),
        Dialect::Aider => aider::parse(source, options),
        Dialect::Codex => codex::parse(source, options),
        Dialect::Cml => cml::parse(source, options),
        Dialect::Udiff => udiff::parse(source, options),
        Dialect::Cline => cline::parse(source, options),
    };
    if dialect != Dialect::Clada {
        // clada's own validation warns of them already.
        warn_unchanged(&mut doc);
    }
    foreign::check(&mut doc, dialect);
    doc
}

/// Warns of every edit of `doc` whose replacement is its search text
/// (`unchanged_edit`): it runs, and changes nothing (PROTOCOL §3).
fn warn_unchanged(doc: &mut Document<'_>) {
    let mut found = Vec::new();
    for unit in &mut doc.units {
        let number = unit.number();
        let tasks = match unit {
            crate::syntax::Unit::Block(b) => &mut b.tasks[..],
            crate::syntax::Unit::Task(t) => std::slice::from_mut(t),
        };
        found.extend(tasks.iter().filter_map(|t| unchanged(t, number)));
    }
    if !found.is_empty() {
        doc.diagnostics.extend(found);
        crate::syntax::sort_in_document_order(&mut doc.diagnostics);
    }
}

/// The `unchanged_edit` warning of task `t` of unit `block`, when its
/// replacement is its search text.
fn unchanged(t: &crate::syntax::Task<'_>, block: usize) -> Option<crate::syntax::Diagnostic> {
    let Some(crate::syntax::Op::Edit {
        search, replace, ..
    }) = &t.op
    else {
        return None;
    };
    (search == replace).then(|| {
        let at = |i: usize| t.sections.get(i).copied().unwrap_or(t.opener);
        let mut d = crate::syntax::unchanged_edit(at(0), at(1));
        d.block = Some(block);
        d.task = Some(t.number);
        d
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn read_is_the_front_door_the_command_line_uses() {
        // A unified diff alone: read as one, its edit a task (parse, which
        // reads clada's format only, finds none).
        let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n";
        let (dialect, doc) = read(diff, ParseOptions::default());
        assert_eq!((dialect, doc.tasks().count()), (Dialect::Udiff, 1));
        assert_eq!(crate::parse(diff).tasks().count(), 0);
        // Beside a clada task: the diff is a foreign format, an error.
        let mixed = format!("<<<<<<< WRITE path=\"a.txt\"\na\n>>>>>>> END\n\n```diff\n{diff}```\n");
        let (dialect, doc) = read(&mixed, ParseOptions::default());
        assert_eq!(dialect, Dialect::Clada);
        assert!(
            doc.diagnostics
                .iter()
                .any(|d| d.is_error() && d.kind == crate::syntax::DiagnosticKind::ForeignFormat),
            "{:?}",
            doc.diagnostics
        );
    }

    use super::*;

    /// Every front end gives each path of its operations the place
    /// validation resolved it to (`TaskPath`), so that the engine never
    /// resolves text again: with and without `--allow-escape`.
    #[test]
    fn every_dialect_fills_the_place_of_every_path() {
        use crate::syntax::Op;
        let cases = [
            (
                Dialect::Clada,
                "<<<<<<< WRITE path=\"a/../b.txt\"\nx\n>>>>>>> END\n<<<<<<< MOVE from=\"b.txt\" to=\"c/d.txt\"\n>>>>>>> END\n<<<<<<< RUN dir=\"c\"\nls\n>>>>>>> END\n",
            ),
            (
                Dialect::Aider,
                "b.txt\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n",
            ),
            (
                Dialect::Codex,
                "*** Begin Patch\n*** Update File: b.txt\n*** Move to: c/d.txt\n@@\n-x\n+y\n*** Delete File: e.txt\n*** End Patch\n",
            ),
            (
                Dialect::Cml,
                "<tasks><edit path=\"b.txt\"><search>x</search><replace>y</replace></edit><move from=\"b.txt\" to=\"c.txt\"/></tasks>\n",
            ),
            (
                Dialect::Udiff,
                "diff --git a/b.txt b/c.txt\nrename from b.txt\nrename to c.txt\n--- a/b.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-x\n+y\n",
            ),
            (
                Dialect::Cline,
                "<replace_in_file>\n<path>b.txt</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n",
            ),
        ];
        for allow_escape in [false, true] {
            for (dialect, src) in cases {
                let doc = parse_dialect(src, dialect, ParseOptions { allow_escape });
                assert!(!doc.has_errors(), "{dialect}: {:?}", doc.diagnostics);
                let mut paths = 0;
                for task in doc.tasks() {
                    let Some(op) = &task.op else { continue };
                    let named: Vec<&crate::syntax::TaskPath<'_>> = match op {
                        Op::Write { path, .. }
                        | Op::Edit { path, .. }
                        | Op::EditRange { path, .. }
                        | Op::Remove { path } => vec![path],
                        Op::Move { from, to } => vec![from, to],
                        Op::Run { dir, .. } => dir.iter().collect(),
                    };
                    for p in named {
                        paths += 1;
                        let at = p
                            .at()
                            .unwrap_or_else(|| panic!("{dialect}: `{p}` has no place"));
                        assert_eq!(
                            Some(at),
                            crate::syntax::resolve_path(p, allow_escape).ok().as_ref(),
                            "{dialect}: `{p}`"
                        );
                    }
                }
                assert!(paths > 0, "{dialect}: no path read");
            }
        }
    }

    #[test]
    fn auto_reads_each_dialect_by_what_only_it_writes() {
        let cases = [
            ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", Dialect::Udiff),
            (
                "Here:\n```diff\ndiff --git a/x b/x\nindex 1..2\n",
                Dialect::Udiff,
            ),
            ("*** Begin Patch\n*** End Patch\n", Dialect::Codex),
            (
                "x.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
                Dialect::Aider,
            ),
            (
                "<edit path=\"x\"><search>a</search><replace>b</replace></edit>\n",
                Dialect::Cml,
            ),
            ("--- a rule of prose\n+++ and more\n", Dialect::Clada),
            // A diff of a clada document is a diff; an opener with
            // attributes makes the whole document clada's.
            (
                "--- a/d.md\n+++ b/d.md\n@@ @@\n-<<<<<<< WRITE path=\"x\"\n+y\n",
                Dialect::Udiff,
            ),
            (
                "<<<<<<< WRITE path=\"p.diff\"\n--- a/x\n+++ b/x\n@@ @@\n>>>>>>> END\n",
                Dialect::Clada,
            ),
            // A diff that shows a patch's lines, and a patch first.
            (
                "--- a/p\n+++ b/p\n@@ @@\n *** Begin Patch\n",
                Dialect::Udiff,
            ),
            (
                "*** Begin Patch\n*** End Patch\n--- a/x\n+++ b/x\n@@ @@\n",
                Dialect::Codex,
            ),
            (
                "a.py\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n",
                Dialect::Cline,
            ),
            (
                "I'll edit it.\n<replace_in_file>\n<path>a</path>\n",
                Dialect::Cline,
            ),
            ("<apply_diff><path>a</path><diff>\n", Dialect::Cline),
            (
                "<write_to_file>\n<path>a</path>\n<content>\nx\n</content>\n</write_to_file>\n",
                Dialect::Cline,
            ),
            // A diff in a list item, a bare hunk, a rename alone.
            (
                "1. Fix:\n\n   ```diff\n   --- a/y\n   +++ b/y\n   @@ ... @@\n   -e\n   +f\n   ```\n",
                Dialect::Udiff,
            ),
            ("```diff\n@@\n-a\n+b\n```\n", Dialect::Udiff),
            ("@@ ... @@\n a\n-b\n", Dialect::Udiff),
            (
                "diff --git a/o b/n\nsimilarity index 100%\nrename from o\nrename to n\n",
                Dialect::Udiff,
            ),
            ("@@ is how hunks start\n- a list item\n", Dialect::Clada),
            (
                "a.py\n<<<<<<< SEARCH\n:start_line:3\n-------\nx\n=======\ny\n>>>>>>> REPLACE\n",
                Dialect::Cline,
            ),
        ];
        for (src, want) in cases {
            assert_eq!(detect(src), want, "{src}");
        }
    }
}

/// What the front ends' tests share: the operations a document read, and
/// an edit to compare them with.
#[cfg(test)]
pub(crate) mod testing {
    use std::num::NonZeroUsize;

    use crate::syntax::Diagnostic;
    use crate::syntax::{Count, Document, Matching, Op, Policy};

    /// The operations of `doc` without their line hints (see
    /// [`line_hints`]) and kept lines, and its diagnostics.
    pub(crate) fn ops(doc: Document<'_>) -> (Vec<Op<'_>>, Vec<Diagnostic>) {
        let mut ops: Vec<Op<'_>> = doc.tasks().filter_map(|t| t.op.clone()).collect();
        for op in &mut ops {
            if let Op::Edit { matching, .. } = op {
                matching.line = None;
                matching.kept = None;
                matching.as_written = None;
            }
        }
        (ops, doc.diagnostics)
    }

    /// The line hint of each edit of `doc`.
    pub(crate) fn line_hints(doc: &Document<'_>) -> Vec<Option<usize>> {
        doc.tasks()
            .filter_map(|t| match &t.op {
                Some(Op::Edit { matching, .. }) => Some(matching.line.map(NonZeroUsize::get)),
                _ => None,
            })
            .collect()
    }

    /// A line-based dialect's SEARCH of `search` in `path` (whole lines),
    /// replaced by `replace`.
    pub(crate) fn edit(path: &str, search: &str, replace: &str) -> Op<'static> {
        Op::Edit {
            path: path.to_owned().into(),
            count: Count::default(),
            matching: Matching::lines(Policy::Clada, None),
            search: search.to_owned().into(),
            replace: replace.to_owned().into(),
        }
    }

    /// [`edit`], which ends at the file's end.
    pub(crate) fn edit_at_end(path: &str, search: &str, replace: &str) -> Op<'static> {
        let mut op = edit(path, search, replace);
        if let Op::Edit { matching, .. } = &mut op {
            matching.at_end = true;
        }
        op
    }
}
