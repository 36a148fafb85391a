//! Near misses (PROTOCOL §2.1): lines outside task bodies that are almost
//! marker lines.
//!
//! A model that indents its markers (as in a Markdown list), leaves out the
//! space after the run, writes five or six characters, or gets a keyword's
//! case or spelling wrong meant an edit. Such a line is read as prose, so
//! without a word the edit would silently not happen. These lines are found
//! only in the runs of text the parser passes over between units (never in
//! a body: content is content), and each becomes a diagnostic with a fix:
//! an error when the line carries an operation keyword, a warning otherwise
//! (an indented `<<<<<<< HEAD` in prose about git).
//!
//! Lines of `=` alone are never near misses: Markdown writes headings and
//! rules with them, except inside the block of a near-miss opener, whose
//! every bad marker line is reported and fixed at once
//! ([`super::near_block`]).

use std::cell::RefCell;

use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind, Severity};
use crate::syntax::lexer::Marker;
use crate::syntax::near_block::{self, MarkerLike, keyword_meant};
use crate::syntax::span::Span;
use crate::syntax::{MIN_FENCE, Shape};

/// The shortest run that makes a line a near miss.
const MIN_NEAR_RUN: usize = 5;

/// What is wrong with a line that is almost a marker line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Defect {
    Indented,
    ShortRun,
    NoSpace,
}

/// The near-miss blocks found so far in a document: where each opener
/// starts, and where its block ends. A line inside one was reported with
/// its block, from whichever run of text holds the opener.
pub(crate) type Blocks = RefCell<std::collections::BTreeMap<usize, usize>>;

/// Reports every near miss among the lines of `span`, a run of text outside
/// any task. `fence` is the open TASKS block's fence length, if any: the
/// length a fixed line is given (else the minimum, 7). A near-miss opener
/// of a task is reported with every bad marker line of its block and one
/// fix for the whole block; the block's lines are noted in `blocks`.
pub(crate) fn scan(
    src: &str,
    span: Span,
    fence: Option<usize>,
    blocks: &Blocks,
    emit: &mut dyn FnMut(Diagnostic),
) {
    let Some(text) = src.get(span.range()) else {
        return;
    };
    let mut at = span.start;
    let mut past = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if start < past || inside(blocks, start) {
            continue;
        }
        // Cheap rejection first: most prose lines start with a letter.
        let first = line
            .as_bytes()
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t'))
            .copied();
        if !matches!(first, Some(b'<' | b'>')) {
            continue;
        }
        let bare = line.strip_suffix('\n').unwrap_or(line);
        let bare = bare.strip_suffix('\r').unwrap_or(bare);
        if let Some(m) = near_block::read(bare)
            && m.shape == Shape::Opener
            && let Some(k) = m.keyword
            && defect(&m).is_some()
            && let Some(b) = near_block::block(src, start, &m, k, fence, &describe)
        {
            b.diagnostics.into_iter().for_each(&mut *emit);
            blocks.borrow_mut().insert(start, b.end);
            past = b.end;
            continue;
        }
        if let Some(d) = near_miss(line, start, fence) {
            emit(d);
        }
    }
}

/// Whether `at` lies past the opener of a noted block and within it
/// (blocks do not overlap: the nearest opener before `at` says).
fn inside(blocks: &Blocks, at: usize) -> bool {
    blocks
        .borrow()
        .range(..at)
        .next_back()
        .is_some_and(|(_, &e)| at <= e)
}

/// What is wrong with a marker-like line, if anything.
pub(crate) fn defect(m: &MarkerLike<'_>) -> Option<Defect> {
    if !m.indent.is_empty() {
        Some(Defect::Indented)
    } else if m.run < MIN_FENCE {
        Some(Defect::ShortRun)
    } else if !m.spaced && !m.word.is_empty() {
        Some(Defect::NoSpace)
    } else {
        None
    }
}

/// What is wrong with the marker-like line `text`, in words.
fn describe(text: &str, m: &MarkerLike<'_>) -> String {
    let shown = text.trim();
    let c = m.shape.byte() as char;
    match defect(m) {
        Some(Defect::Indented) => format!(
            "`{shown}` is indented by {} {}: a marker line starts at column 0, so this line is read as prose",
            m.indent.len(),
            if m.indent.contains('\t') {
                "characters of white space"
            } else {
                "spaces"
            }
        ),
        Some(Defect::ShortRun) => format!(
            "`{shown}` has {} `{c}` characters: a marker line has at least {MIN_FENCE}, so this line is read as prose",
            m.run
        ),
        Some(Defect::NoSpace) => format!(
            "`{shown}` has no space after its `{c}` characters, so this line is read as prose"
        ),
        None => format!("`{shown}` is not the marker line its block needs"),
    }
}

/// The diagnostic for one line (line break included) at `start`, if it is
/// a near miss.
fn near_miss(line: &str, start: usize, fence: Option<usize>) -> Option<Diagnostic> {
    let text = line.strip_suffix('\n').unwrap_or(line);
    let text = text.strip_suffix('\r').unwrap_or(text);
    let indent = text.len() - text.trim_start_matches([' ', '\t']).len();
    let t = &text[indent..];
    let shape = Shape::from_byte(*t.as_bytes().first()?)?;
    if shape == Shape::Separator {
        return None;
    }
    let run = t.bytes().take_while(|&b| b == shape.byte()).count();
    if run < MIN_NEAR_RUN {
        return None;
    }
    let after = &t[run..];
    let spaced = after.starts_with([' ', '\t']);
    let defect = if indent > 0 {
        Defect::Indented
    } else if run < MIN_FENCE {
        Defect::ShortRun
    } else if !spaced && !after.is_empty() {
        Defect::NoSpace
    } else {
        // A well-formed marker line: the lexer's, not ours.
        return None;
    };
    let rest = after.trim_start_matches([' ', '\t']);
    let word_len = rest.find([' ', '\t']).unwrap_or(rest.len());
    let (word, tail) = rest.split_at(word_len);
    let keyword = keyword_meant(shape, word);

    let fixed_run = shape.run(
        fence
            .unwrap_or(MIN_FENCE)
            .max(if defect == Defect::ShortRun {
                MIN_FENCE
            } else {
                run
            }),
    );
    let fixed_word = keyword.map_or(word, |k| k.as_str());
    let fixed = if fixed_word.is_empty() {
        fixed_run
    } else {
        format!("{fixed_run} {fixed_word}{tail}")
    };
    let shown = t.trim_end();
    let what = match defect {
        Defect::Indented => format!(
            "`{shown}` is indented by {indent} {}: a marker line starts at column 0, so this line is read as prose",
            if text[..indent].contains('\t') {
                "characters of white space"
            } else {
                "spaces"
            }
        ),
        Defect::ShortRun => format!(
            "`{shown}` has {run} `{}` characters: a marker line has at least {MIN_FENCE}, so this line is read as prose",
            shape.byte() as char
        ),
        Defect::NoSpace => format!(
            "`{shown}` has no space after its `{}` characters, so this line is read as prose",
            shape.byte() as char
        ),
    };
    let case = keyword.filter(|k| k.as_str() != word && k.as_str().eq_ignore_ascii_case(word));
    let spelling = keyword.filter(|k| !k.as_str().eq_ignore_ascii_case(word));
    let mut message = what;
    if let Some(k) = case {
        message.push_str(&format!("; keywords are upper case: `{k}`"));
    } else if let Some(k) = spelling {
        message.push_str(&format!("; `{word}` is not a keyword: `{k}`?"));
    }
    let span = Span::new(start, start + text.len());
    let mut d = Diagnostic::new(DiagnosticKind::MalformedMarker, span, message)
        .with_fix(span, fixed.clone());
    if keyword.is_some() {
        d = d.with_help(format!(
            "write the line as `{fixed}` if it was meant as a marker"
        ));
    } else {
        d.severity = Severity::Warning;
        d = d.with_help(format!(
            "if it was meant as a marker, write `{fixed}`; as prose it changes nothing"
        ));
    }
    Some(d)
}

/// The near miss of a well-formed marker line whose keyword is an
/// operation keyword in the wrong case or misspelt (`<<<<<<< search`), or
/// `None` when the word is unknown. In a versioned block only the wrong
/// case counts: a later version may add keywords.
pub(crate) fn misspelt_keyword(
    shape: Shape,
    word: &str,
    word_span: Span,
    versioned: bool,
) -> Option<Diagnostic> {
    let k = keyword_meant(shape, word)?;
    let case = k.as_str().eq_ignore_ascii_case(word);
    if versioned && !case {
        return None;
    }
    let message = if case {
        format!("`{word}` is not a keyword: keywords are upper case, `{k}`")
    } else {
        format!("`{word}` is not a keyword: `{k}`?")
    };
    Some(
        Diagnostic::new(DiagnosticKind::MalformedMarker, word_span, message)
            .with_fix(word_span, k.as_str())
            .with_help(format!("write `{k}`")),
    )
}

/// A closer inside a TASKS block of fence `fence` whose run is longer
/// and so matches nothing open: an error when it carries an
/// operation keyword (`>>>>>>>>> TASKS` meant to close the block), else the
/// stray marker warning of PROTOCOL §2.6.
pub(crate) fn closer_of_another_length(src: &str, m: &Marker, fence: usize) -> Diagnostic {
    let line = m.line();
    let shown = src.get(line.range()).unwrap_or_default().trim_end();
    let word = src.get(m.word().range()).unwrap_or_default();
    match keyword_meant(Shape::Closer, word) {
        Some(k) => {
            let fixed = format!("{} {k}", Shape::Closer.run(fence));
            let message = format!(
                "`{shown}` has {} `>` characters but the open TASKS block has {fence}: it closes nothing",
                m.fence()
            );
            Diagnostic::new(DiagnosticKind::MalformedMarker, line, message)
                .with_fix(Span::new(line.start, m.word().end), fixed.clone())
                .with_help(format!(
                    "write `{fixed}` if it was meant to close something; a closer has its opener's fence length"
                ))
        }
        None => Diagnostic::new(
            DiagnosticKind::StrayMarker,
            line,
            format!("stray closer `{shown}` outside any task is ignored"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(src: &str, fence: Option<usize>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let blocks = Blocks::default();
        scan(src, Span::new(0, src.len()), fence, &blocks, &mut |d| {
            out.push(d)
        });
        out
    }

    #[test]
    fn each_form_is_found_with_its_fix() {
        let cases = [
            (
                "    <<<<<<< SEARCH path=\"a\"\n",
                "<<<<<<< SEARCH path=\"a\"",
                true,
            ),
            (
                "<<<<<<<SEARCH path=\"a\"\n",
                "<<<<<<< SEARCH path=\"a\"",
                true,
            ),
            ("<<<<< WRITE path=\"a\"\n", "<<<<<<< WRITE path=\"a\"", true),
            (
                "<<<<<< write path=\"a\"\n",
                "<<<<<<< WRITE path=\"a\"",
                true,
            ),
            ("\t>>>>>>> REPLACE\n", ">>>>>>> REPLACE", true),
            ("  >>>>>>> REPLCE\r\n", ">>>>>>> REPLACE", true),
            ("  <<<<<<< HEAD\n", "<<<<<<< HEAD", false),
            ("<<<<<<<HEAD\n", "<<<<<<< HEAD", false),
        ];
        for (line, fix, error) in cases {
            let ds = scan_all(line, None);
            assert_eq!(ds.len(), 1, "{line:?}");
            let d = &ds[0];
            assert_eq!(d.kind, DiagnosticKind::MalformedMarker, "{line:?}");
            assert_eq!(d.is_error(), error, "{line:?}: {}", d.message);
            assert_eq!(d.fix.as_ref().map(|f| f.replacement.as_str()), Some(fix));
            // The fix replaces the line's text, not its line break.
            assert_eq!(d.span.end, line.trim_end().len());
        }
    }

    #[test]
    fn prose_and_markdown_are_not_near_misses() {
        let prose = "a <<< b\n<<<< not five\n=====\n======\n    =======\n> quote\n>> reply\n  <div>\n<<<<<<< SEARCH path=\"well-formed\"\n";
        assert!(scan_all(prose, None).is_empty());
    }

    #[test]
    fn a_fix_inside_a_block_takes_the_block_fence() {
        let ds = scan_all("  <<<<<<<<< SEARCH path=\"a\"\n", Some(9));
        let fix = ds[0].fix.as_ref().map(|f| f.replacement.as_str());
        assert_eq!(fix, Some("<<<<<<<<< SEARCH path=\"a\""));
    }
}
