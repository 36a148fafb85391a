//! Turns what the parser found (`raw`) into checked AST nodes and
//! diagnostics: structural problems (`structure`), attributes and their
//! paths (`values`) and bodies (here).
//!
//! The parser decides where units start and end; this module decides
//! whether what is written there is a valid task, and says precisely why
//! not. It never touches the file system.

use std::borrow::Cow;

use crate::syntax::ast::{Matching, Op, Task};
use crate::syntax::attributes::Attribute;
use crate::syntax::context::Context;
use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind as K};
use crate::syntax::lexer::Marker;
use crate::syntax::raw::{RawSection, RawTask};
use crate::syntax::span::Span;
use crate::syntax::structure::{a, closer_line, structural, with_structural_fix};
use crate::syntax::suggest::quoted_list;
use crate::syntax::values::{Values, attributes_of};
use crate::syntax::{Keyword, TASKS_ATTRIBUTES, TaskKind, Version};

/// Checks a task and builds its AST node, pushing diagnostics onto `out`.
pub(crate) fn task<'a>(cx: &Context<'a>, raw: RawTask, out: &mut Vec<Diagnostic>) -> Task<'a> {
    let errors_before = out.iter().filter(|d| d.is_error()).count();
    let kind = raw.kind;
    let fence = raw.opener.fence();
    let opener_span = raw.opener.line();

    for problem in &raw.problems {
        let d = structural(cx, kind, &raw.opener, problem);
        out.push(with_structural_fix(cx, d, kind, &raw, problem));
    }
    let structure_ok = raw.problems.is_empty();

    let attributes = attributes_of(cx, &raw.opener, kind.keyword(), kind.attributes(), out);
    let values = Values::check(cx, kind, &attributes, out);

    let mut op = None;
    if structure_ok {
        op = bodies(cx, kind, &raw, &values, out);
    }
    let has_errors = out.iter().filter(|d| d.is_error()).count() > errors_before;
    Task {
        number: 0,
        block: 0,
        kind,
        fence,
        span: Span::new(raw.start, raw.end),
        opener: opener_span,
        attributes,
        sections: raw.sections.iter().map(|s| s.span).collect(),
        closer: raw.closer.map(|m| m.line()),
        op: if has_errors { None } else { op },
    }
}

/// The text of a body: its lines, each ending in a line feed. A CR before a
/// line feed is never content, so CRLF bodies are rebuilt without it.
pub(crate) fn body_text(src: &str, section: RawSection) -> Cow<'_, str> {
    let text = src.get(section.span.range()).unwrap_or_default();
    if section.crlf {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The warning of an edit whose replacement is its search text (PROTOCOL
/// §3): it runs, finds its text as any edit does, and leaves the file as
/// it is (as aider does), so that the edits beside it need no second
/// round. `search` and `replace` point at the two texts.
pub(crate) fn unchanged_edit(search: Span, replace: Span) -> Diagnostic {
    Diagnostic::new(
        K::UnchangedEdit,
        search,
        "the replacement is the search text itself: this edit changes nothing",
    )
    .with_label(replace, "the same text again")
    .with_help("if the file already has the change, drop this edit; otherwise write the new text as the replacement")
}

/// Drops the final line feed of a SEARCH-START section.
fn drop_final_line_feed(text: Cow<'_, str>) -> Cow<'_, str> {
    match text {
        Cow::Borrowed(s) => Cow::Borrowed(s.strip_suffix('\n').unwrap_or(s)),
        Cow::Owned(mut s) => {
            if s.ends_with('\n') {
                s.pop();
            }
            Cow::Owned(s)
        }
    }
}

/// Checks the bodies of a well-delimited task and builds its operation.
fn bodies<'a>(
    cx: &Context<'a>,
    kind: TaskKind,
    raw: &RawTask,
    v: &Values<'a>,
    out: &mut Vec<Diagnostic>,
) -> Option<Op<'a>> {
    let raw_section = |i: usize| {
        raw.sections.get(i).copied().unwrap_or(RawSection {
            span: Span::default(),
            crlf: false,
        })
    };
    let section = |i: usize| raw_section(i).span;
    let text = |i: usize| body_text(cx.src, raw_section(i));
    // An empty body has an empty span; point at the line after it instead.
    let at = |i: usize| {
        let s = section(i);
        if s.is_empty() {
            let end = cx.src[s.end..]
                .find('\n')
                .map_or(cx.src.len(), |n| s.end + n);
            Span::new(s.end, end)
        } else {
            s
        }
    };
    let path = || v.path.clone().unwrap_or_default();
    match kind {
        TaskKind::Write => Some(Op::Write {
            path: path(),
            append: v.append,
            content: text(0),
        }),
        TaskKind::Search | TaskKind::Edit => {
            let search = text(0);
            if search.is_empty() {
                out.push(
                    Diagnostic::new(K::EmptySearch, at(0), format!("the {kind} has no search text"))
                        .with_help("name the text to find between the opener and `=======`; to replace a whole file, use WRITE"),
                );
                return None;
            }
            let replace = text(1);
            if search == replace {
                out.push(unchanged_edit(at(0), at(1)));
            }
            Some(Op::Edit {
                path: path(),
                count: v.count,
                matching: Matching::default(),
                search,
                replace,
            })
        }
        TaskKind::SearchStart => {
            let start = drop_final_line_feed(text(0));
            let end = text(1);
            if start.is_empty() {
                out.push(
                    Diagnostic::new(K::EmptyRangeStart, at(0), "the range has no start text")
                        .with_help("write the text where the range begins between the opener and `<<<<<<< SEARCH-END`"),
                );
            }
            if end.is_empty() {
                out.push(
                    Diagnostic::new(K::EmptyRangeEnd, at(1), "the range has no end text")
                        .with_help("write the text where the range ends between `<<<<<<< SEARCH-END` and `=======`"),
                );
            }
            if start.is_empty() || end.is_empty() {
                return None;
            }
            Some(Op::EditRange {
                path: path(),
                count: v.count,
                matching: Matching::default(),
                start,
                end,
                replace: text(2),
            })
        }
        TaskKind::Run => {
            let command = text(0);
            if command.trim().is_empty() {
                out.push(
                    Diagnostic::new(K::EmptyCommand, at(0), "the RUN has no command")
                        .with_help("write the command between the opener and `>>>>>>> END`"),
                );
                return None;
            }
            Some(Op::Run {
                dir: v.dir.clone(),
                command,
            })
        }
        TaskKind::Move | TaskKind::Remove => {
            let body = section(0);
            if !cx.text(body).trim().is_empty() {
                out.push(
                    Diagnostic::new(K::UnexpectedBody, body, format!("{} has no body", a(kind)))
                        .with_help(format!(
                            "remove these lines; {} is only its opener and `{}`",
                            a(kind),
                            closer_line(Keyword::End, raw.opener.fence())
                        )),
                );
                return None;
            }
            Some(match kind {
                TaskKind::Move => Op::Move {
                    from: v.from.clone().unwrap_or_default(),
                    to: v.to.clone().unwrap_or_default(),
                },
                _ => Op::Remove { path: path() },
            })
        }
    }
}

/// The attributes and version of a `TASKS` opener.
pub(crate) fn block_opener<'a>(
    cx: &Context<'a>,
    opener: &Marker,
    out: &mut Vec<Diagnostic>,
) -> (Vec<Attribute<'a>>, Option<Version>, bool) {
    let attrs = attributes_of(cx, opener, Keyword::Tasks, TASKS_ATTRIBUTES, out);
    let mut version = None;
    let mut supported = true;
    if let Some(a) = attrs.iter().find(|a| a.name == "version") {
        match Version::parse(&a.value) {
            Some(v) => version = Some(v),
            None => {
                supported = false;
                out.push(
                    Diagnostic::new(
                        K::UnsupportedVersion,
                        a.value_span,
                        format!("unsupported version `{}`", a.value),
                    )
                    .with_help(format!(
                        "this clada reads versions {}; the block is not run",
                        quoted_list(&Version::ALL.map(Version::as_str))
                    )),
                );
            }
        }
    }
    (attrs, version, supported)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::suggest::nearest;

    #[test]
    fn suggests_near_names() {
        assert_eq!(nearest("pth", &["path", "count"]), Some("path"));
        assert_eq!(nearest("write", &["WRITE", "RUN"]), Some("WRITE"));
        assert_eq!(
            nearest("SEARCH_START", &["SEARCH-START", "SEARCH"]),
            Some("SEARCH-START")
        );
        assert_eq!(nearest("xyz", &["path", "count"]), None);
    }

    #[test]
    fn crlf_bodies_lose_their_carriage_returns() {
        let src = "a\r\nb\r\n";
        let all = |crlf| RawSection {
            span: Span::new(0, src.len()),
            crlf,
        };
        assert_eq!(body_text(src, all(true)), "a\nb\n");
        assert!(matches!(body_text(src, all(false)), Cow::Borrowed(_)));
    }
}
