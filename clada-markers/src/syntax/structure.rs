//! Structural diagnostics (PROTOCOL §2.6): a wrong or missing closer, a
//! separator or section marker out of place, text after a marker. Each
//! message, help and fix is written here, once.

use crate::syntax::context::Context;
use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind as K};
use crate::syntax::lexer::Marker;
use crate::syntax::raw::{Problem, RawTask, UnclosedHint};
use crate::syntax::span::Span;
use crate::syntax::{Keyword, SectionMarker, Shape, TaskKind};

/// "a WRITE", "an EDIT".
pub(crate) fn a(kind: TaskKind) -> String {
    let article = if kind == TaskKind::Edit { "an" } else { "a" };
    format!("{article} {kind}")
}

pub(crate) fn closer_line(kind: Keyword, fence: usize) -> String {
    format!("{} {}", Shape::Closer.run(fence), kind)
}

fn longer_fence_help(fence: usize) -> String {
    format!(
        "if this line is content, open the task with a longer fence (`{}`): markers of other lengths are content",
        Shape::Opener.run(fence + 1)
    )
}

/// The repair an editor can offer for a structural problem: the right
/// closer in place of a wrong one, a missing closer where the task ends.
pub(crate) fn with_structural_fix(
    cx: &Context<'_>,
    d: Diagnostic,
    kind: TaskKind,
    raw: &RawTask,
    problem: &Problem,
) -> Diagnostic {
    let expected = closer_line(kind.closer(), raw.opener.fence());
    match problem {
        Problem::WrongCloser(m) => d.with_fix(m.line(), expected),
        // A closer of another length was probably meant.
        Problem::Unclosed(Some(UnclosedHint::FenceMismatch(m))) => d.with_fix(m.line(), expected),
        // A body line that is almost the closer (no space after the run,
        // a short run, indented) was probably meant as it: made right.
        Problem::Unclosed(None) if let Some(line) = near_closer(cx, kind, raw) => {
            let found = cx.text(line).trim();
            d.with_label(
                line,
                format!("`{found}` is almost the closer: a marker line starts at column 0 with at least 7 `>`, a space, then the keyword"),
            )
            .with_help(format!(
                "write `{expected}` in place of line {}",
                cx.line(line.start)
            ))
            .with_fix(line, expected)
        }
        // Where the task ends: at the end of the document, or before the
        // unit opener it would otherwise swallow.
        Problem::Unclosed(None | Some(UnclosedHint::NestedOpener(_))) => {
            // A document without a final line break gets one first.
            let at = raw.end.min(cx.src.len());
            let newline = if at > 0 && !cx.src[..at].ends_with('\n') {
                "\n"
            } else {
                ""
            };
            d.with_fix(Span::empty(at), format!("{newline}{expected}\n"))
        }
        _ => d,
    }
}

/// The last line of an unclosed task's body that is almost its closer
/// (`>>>>>>>REPLACE`, `>>>>> REPLACE`, an indented `>>>>>>> REPLACE`), as
/// its line without the line break.
fn near_closer(cx: &Context<'_>, kind: TaskKind, raw: &RawTask) -> Option<Span> {
    let from = raw.opener.line().end;
    let body = cx.src.get(from..raw.end.min(cx.src.len()))?;
    let mut at = from;
    let mut found = None;
    for line in body.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let text = line.trim_end_matches(['\n', '\r']);
        if let Some(m) = crate::syntax::near_block::read(text)
            && m.shape == Shape::Closer
            && m.keyword == Some(kind.closer())
            && m.tail.is_empty()
            && crate::syntax::near_miss::defect(&m).is_some()
        {
            found = Some(Span::new(start, start + text.len()));
        }
    }
    found
}

pub(crate) fn structural(
    cx: &Context<'_>,
    kind: TaskKind,
    opener: &Marker,
    problem: &Problem,
) -> Diagnostic {
    let fence = opener.fence();
    let opener_line = cx.line(opener.text_start());
    let expected = closer_line(kind.closer(), fence);
    let opener_label =
        |d: Diagnostic| d.with_label(opener.line(), format!("the {kind} opens here"));
    match problem {
        Problem::WrongCloser(m) => {
            let found = cx.text(m.line()).trim_end();
            opener_label(Diagnostic::new(
                K::WrongCloser,
                m.line(),
                format!(
                    "`{found}` cannot close the {kind} opened at line {opener_line}: {} ends with `{expected}`",
                    a(kind)
                ),
            ))
            .with_help(format!(
                "write `{expected}` here to close it; if this line is content, open the task with a longer fence (`{}`)",
                Shape::Opener.run(fence + 1)
            ))
        }
        Problem::Unclosed(hint) => {
            let d = Diagnostic::new(
                K::UnclosedOpener,
                opener.line(),
                format!("the {kind} opened here has no closer `{expected}`"),
            );
            match hint {
                Some(UnclosedHint::FenceMismatch(m)) => d
                    .with_label(
                        m.line(),
                        format!(
                            "this closer has {} characters but the opener has {fence}: a closer must have its opener's fence length",
                            m.fence()
                        ),
                    )
                    .with_help(format!("write `{expected}` with exactly {fence} `>`")),
                Some(UnclosedHint::NestedOpener(m)) => {
                    let line = cx.line(m.text_start());
                    d.with_label(
                        m.line(),
                        format!("this opener was read as content of the {kind}: openers of the same fence length nest"),
                    )
                    .with_help(format!("add `{expected}` before line {line}"))
                }
                Some(UnclosedHint::NestedCloser(m)) => d
                    .with_label(
                        m.line(),
                        "this closer was read as the end of a nested region: an opener of the same fence length in the body raised the depth",
                    )
                    .with_help(format!(
                        "if the body holds openers without closers, open the task with a longer fence (`{}`)",
                        Shape::Opener.run(fence + 1)
                    )),
                None => d.with_help(format!("add `{expected}` after the body")),
            }
        }
        Problem::UnexpectedSeparator(m) => {
            let message = match kind.section_markers() {
                [] => format!("{} has no `=======` separator", a(kind)),
                [SectionMarker::Separator] => {
                    format!("{} has one separator; this is a second one", a(kind))
                }
                _ => format!(
                    "this separator comes before the SEARCH-END marker of the {kind} opened at line {opener_line}, or after its own separator"
                ),
            };
            opener_label(Diagnostic::new(K::UnexpectedSeparator, m.line(), message))
                .with_help(longer_fence_help(fence))
        }
        Problem::MisplacedSearchEnd(m) => {
            let message = if kind == TaskKind::SearchStart {
                format!(
                    "the SEARCH-START opened at line {opener_line} already has its SEARCH-END section marker"
                )
            } else {
                format!(
                    "`SEARCH-END` belongs in a SEARCH-START task, not in {}",
                    a(kind)
                )
            };
            opener_label(Diagnostic::new(K::MisplacedSearchEnd, m.line(), message))
                .with_help(longer_fence_help(fence))
        }
        Problem::MissingSection(section, m) => {
            let message = match section {
                SectionMarker::Separator => format!(
                    "this {kind} has no `{}` separator before its closer",
                    Shape::Separator.run(fence)
                ),
                SectionMarker::SearchEnd => format!(
                    "this {kind} has no `{} SEARCH-END` marker before its closer",
                    Shape::Opener.run(fence)
                ),
            };
            let help = match (kind, section) {
                (TaskKind::SearchStart, _) => {
                    "a SEARCH-START is: start text, `<<<<<<< SEARCH-END`, end text, `=======`, replacement, `>>>>>>> REPLACE`"
                }
                _ => "a SEARCH is: search text, `=======`, replacement, `>>>>>>> REPLACE`",
            };
            opener_label(Diagnostic::new(K::MissingSection, m.line(), message)).with_help(help)
        }
        Problem::TextAfterMarker(m) => {
            let what = match m.shape {
                Shape::Separator => {
                    "a separator line holds nothing but its `=` characters".to_owned()
                }
                _ => format!(
                    "nothing may follow `{}` on its line",
                    cx.text(Span::new(m.text_start(), m.word().end))
                ),
            };
            let span = if m.shape == Shape::Separator {
                m.word().to(m.rest())
            } else {
                m.rest()
            };
            Diagnostic::new(K::MalformedMarker, span, what).with_help(longer_fence_help(fence))
        }
    }
}
