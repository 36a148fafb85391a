//! Turns what the parser found into checked AST nodes and diagnostics:
//! structural problems, attributes (names, values, paths) and bodies.
//!
//! The parser decides where units start and end; this module decides
//! whether what is written there is a valid task, and says precisely why
//! not. It never touches the file system.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::num::NonZeroUsize;

use crate::ast::{Count, Op, Task};
use crate::attributes::{self, AttrSyntaxError, Attribute};
use crate::diagnostics::{Diagnostic, DiagnosticKind as K};
use crate::lexer::Marker;
use crate::path::{self, PathProblem};
use crate::span::{LineIndex, Span};
use crate::syntax::{AttrSpec, Keyword, SectionMarker, Shape, TASKS_ATTRIBUTES, TaskKind, Version};

/// How a document is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Accept absolute paths and paths that climb out of the root
    /// (`--allow-escape`).
    pub allow_escape: bool,
}

/// The document being checked, with its line index built on first use.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub(crate) src: &'a str,
    pub(crate) opts: ParseOptions,
    lines: OnceCell<LineIndex<'a>>,
    /// Where each opener's extent ends, computed once from the tokens.
    pub(crate) nesting: crate::parser::Nesting,
}

impl<'a> Context<'a> {
    pub(crate) fn new(src: &'a str, opts: ParseOptions) -> Self {
        Context {
            src,
            opts,
            lines: OnceCell::new(),
            nesting: crate::parser::Nesting::default(),
        }
    }

    pub(crate) fn line(&self, offset: usize) -> usize {
        self.lines
            .get_or_init(|| LineIndex::new(self.src))
            .line(offset)
    }

    pub(crate) fn text(&self, span: Span) -> &'a str {
        self.src.get(span.range()).unwrap_or_default()
    }
}

/// A body as the parser delimited it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawSection {
    pub(crate) span: Span,
    /// Whether a line of it ends in CR LF (and so must be rebuilt).
    pub(crate) crlf: bool,
}

/// A task as the parser delimited it.
#[derive(Clone, Debug)]
pub(crate) struct RawTask {
    pub(crate) kind: TaskKind,
    pub(crate) opener: Marker,
    pub(crate) start: usize,
    pub(crate) sections: Vec<RawSection>,
    pub(crate) closer: Option<Marker>,
    pub(crate) end: usize,
    pub(crate) problems: Vec<Problem>,
}

/// Structural problems the parser met inside a task.
#[derive(Clone, Debug)]
pub(crate) enum Problem {
    /// The task was ended by this closer, whose keyword is not its own.
    WrongCloser(Marker),
    /// The document ended (or the task was cut) before a closer.
    Unclosed(Option<UnclosedHint>),
    UnexpectedSeparator(Marker),
    MisplacedSearchEnd(Marker),
    /// The closer came before this section marker.
    MissingSection(SectionMarker, Marker),
    /// Text after a separator, a closer's keyword or `SEARCH-END`.
    TextAfterMarker(Marker),
}

impl Problem {
    /// Where the problem's line starts.
    pub(crate) fn at(&self) -> usize {
        match self {
            Problem::WrongCloser(m)
            | Problem::UnexpectedSeparator(m)
            | Problem::MisplacedSearchEnd(m)
            | Problem::MissingSection(_, m)
            | Problem::TextAfterMarker(m) => m.text_start(),
            Problem::Unclosed(_) => usize::MAX,
        }
    }
}

/// Where the closer of an unclosed task probably was.
#[derive(Clone, Copy, Debug)]
pub(crate) enum UnclosedHint {
    /// A closer with the right keyword but another fence length.
    FenceMismatch(Marker),
    /// An opener of a unit that the task swallowed as nested content.
    NestedOpener(Marker),
    /// A closer with the right keyword taken as the end of a nested region.
    NestedCloser(Marker),
}

/// "a WRITE", "an EDIT".
fn a(kind: TaskKind) -> String {
    let article = if kind == TaskKind::Edit { "an" } else { "a" };
    format!("{article} {kind}")
}

fn closer_line(kind: Keyword, fence: usize) -> String {
    format!("{} {}", Shape::Closer.run(fence), kind)
}

fn longer_fence_help(fence: usize) -> String {
    format!(
        "if this line is content, open the task with a longer fence (`{}`): markers of other lengths are content",
        Shape::Opener.run(fence + 1)
    )
}

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

/// The repair an editor can offer for a structural problem: the right
/// closer in place of a wrong one, a missing closer where the task ends.
fn with_structural_fix(
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

fn structural(cx: &Context<'_>, kind: TaskKind, opener: &Marker, problem: &Problem) -> Diagnostic {
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

/// Parses the attributes of an opener and checks their names against
/// `specs`: unknown, repeated and missing names.
pub(crate) fn attributes_of<'a>(
    cx: &Context<'a>,
    opener: &Marker,
    keyword: Keyword,
    specs: &[AttrSpec],
    out: &mut Vec<Diagnostic>,
) -> Vec<Attribute<'a>> {
    let text = cx.text(opener.rest());
    let (attrs, syntax) = attributes::parse(text, opener.rest().start);
    for e in syntax {
        let (message, help) = match &e {
            AttrSyntaxError::Unterminated { quote, .. } => (
                format!("this value has no closing `{quote}`"),
                "close the quote; inside double quotes write `\\\"` for a quote".to_owned(),
            ),
            AttrSyntaxError::MissingValue { name, .. } => (
                format!("attribute `{name}` has no value"),
                format!("write `{name}=\"…\"`"),
            ),
            AttrSyntaxError::Junk { span } => (
                format!("`{}` is not an attribute", cx.text(*span)),
                "attributes are written `name=\"value\"`, separated by spaces".to_owned(),
            ),
        };
        out.push(Diagnostic::new(K::MalformedAttribute, e.span(), message).with_help(help));
    }
    for (i, a) in attrs.iter().enumerate() {
        if !specs.iter().any(|s| s.name == a.name) {
            let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
            let mut d = Diagnostic::new(
                K::UnknownAttribute,
                a.span,
                format!("{keyword} has no attribute `{}`", a.name),
            );
            d = match nearest(a.name, &names) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None if names.is_empty() => d.with_help(format!("{keyword} takes no attributes")),
                None => d.with_help(format!("{keyword} takes {}", list(&names))),
            };
            out.push(d);
        } else if let Some(first) = attrs[..i].iter().find(|b| b.name == a.name) {
            out.push(
                Diagnostic::new(
                    K::DuplicateAttribute,
                    a.span,
                    format!("attribute `{}` is given twice", a.name),
                )
                .with_label(first.span, "first given here")
                .with_help("keep one of them"),
            );
        }
    }
    for spec in specs.iter().filter(|s| s.required) {
        if !attrs.iter().any(|a| a.name == spec.name) {
            out.push(
                Diagnostic::new(
                    K::MissingAttribute,
                    opener.line(),
                    format!("{keyword} needs a `{}` attribute", spec.name),
                )
                .with_help(format!("add `{}=\"…\"` after `{keyword}`", spec.name))
                .with_fix(
                    Span::empty(opener.word().end),
                    format!(" {}=\"\"", spec.name),
                ),
            );
        }
    }
    attrs
}

/// The checked values of a task's attributes.
#[derive(Debug, Default)]
struct Values<'a> {
    path: Option<Cow<'a, str>>,
    from: Option<Cow<'a, str>>,
    to: Option<Cow<'a, str>>,
    dir: Option<Cow<'a, str>>,
    count: Count,
    append: bool,
}

impl<'a> Values<'a> {
    fn check(
        cx: &Context<'a>,
        kind: TaskKind,
        attrs: &[Attribute<'a>],
        out: &mut Vec<Diagnostic>,
    ) -> Values<'a> {
        let mut v = Values::default();
        let first = |name: &str| attrs.iter().find(|a| a.name == name);
        if kind == TaskKind::Run
            && let (Some(dir), Some(path)) = (first("dir"), first("path"))
        {
            {
                out.push(
                    Diagnostic::new(
                        K::DuplicateAttribute,
                        path.span,
                        "`path` is a synonym of `dir` on RUN; give only one",
                    )
                    .with_label(dir.span, "`dir` given here"),
                );
            }
        }
        let specs = kind.attributes();
        for a in attrs {
            if !specs.iter().any(|s| s.name == a.name)
                || first(a.name).map(|f| f.span) != Some(a.span)
            {
                continue;
            }
            match (kind, a.name) {
                (_, "count") => match parse_count(&a.value) {
                    Some(c) => v.count = c,
                    None if is_number(&a.value) && a.value.bytes().any(|b| b != b'0') => out.push(
                        invalid_value(a, "a positive whole number or `all`").with_help(format!(
                            "no file holds that many occurrences; the largest count clada takes is {}",
                            usize::MAX
                        )),
                    ),
                    None => out.push(invalid_value(a, "a positive whole number or `all`")),
                },
                (_, "append") => match a.value.as_ref() {
                    "true" => v.append = true,
                    "false" => v.append = false,
                    _ => out.push(invalid_value(a, "`true` or `false`")),
                },
                (TaskKind::Run, "dir" | "path") => {
                    check_path(cx, a, false, out);
                    v.dir = Some(a.value.clone());
                }
                (_, "to") => {
                    check_path(cx, a, false, out);
                    v.to = Some(a.value.clone());
                }
                (_, "from") => {
                    check_path(cx, a, true, out);
                    v.from = Some(a.value.clone());
                }
                (_, "path") => {
                    check_path(cx, a, true, out);
                    v.path = Some(a.value.clone());
                }
                _ => {}
            }
        }
        v
    }
}

fn is_number(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

fn parse_count(value: &str) -> Option<Count> {
    if value == "all" {
        return Some(Count::All);
    }
    if !is_number(value) {
        return None;
    }
    value.parse::<NonZeroUsize>().ok().map(Count::Exactly)
}

fn invalid_value(a: &Attribute<'_>, expected: &str) -> Diagnostic {
    Diagnostic::new(
        K::InvalidAttributeValue,
        a.value_span,
        format!("`{}` must be {expected}, not `{}`", a.name, a.value),
    )
}

/// Checks the path of a file another dialect names as if it were a `path`
/// attribute (PROTOCOL §5, §11).
pub(crate) fn check_path_attribute(cx: &Context<'_>, a: &Attribute<'_>, out: &mut Vec<Diagnostic>) {
    check_path(cx, a, true, out);
}

fn check_path(cx: &Context<'_>, a: &Attribute<'_>, below_root: bool, out: &mut Vec<Diagnostic>) {
    let resolved = path::resolve(&a.value, cx.opts.allow_escape).and_then(|at| {
        if below_root && at.is_root() {
            Err(PathProblem::Root)
        } else {
            Ok(at)
        }
    });
    let problem = match resolved {
        Ok(at) => {
            if path::is_protected(&at) {
                out.push(
                Diagnostic::new(
                    K::ProtectedPath,
                    a.value_span,
                    format!("`{}` is inside `.clada/` or a `.git` directory, which documents never change", a.value),
                )
                .with_help("clada's approvals and git's internals are changed only by people: use `clada allow` or git itself"),
            );
            }
            return;
        }
        Err(problem) => problem,
    };
    let shown = a.value.replace('\0', "\\0");
    let what = if a.name == "path" {
        "path".to_owned()
    } else {
        format!("`{}` path", a.name)
    };
    let mut d = Diagnostic::new(
        K::PathEscape,
        a.value_span,
        format!("{what} `{shown}` {}", problem.describe()),
    );
    d = d.with_help(match problem {
        PathProblem::Absolute if !a.value.starts_with(['/', '\\']) => {
            "a drive letter names nothing on this system: write a path relative to the root"
        }
        PathProblem::Absolute | PathProblem::ParentEscape => {
            "paths are relative to the root; run with --allow-escape to permit absolute paths and `..`"
        }
        PathProblem::Root => "name a file or directory below the root",
        PathProblem::Empty | PathProblem::Nul => "give a relative path such as `src/main.rs`",
    });
    out.push(d);
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
            Some(Op::Edit {
                path: path(),
                count: v.count,
                search,
                replace: text(1),
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
                        list(&Version::ALL.map(Version::as_str))
                    )),
                );
            }
        }
    }
    (attrs, version, supported)
}

/// The known word nearest to `word`, if it is near enough to be a likely
/// typo (or differs only in case).
pub(crate) fn nearest<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(word)) {
        return Some(k);
    }
    let upper = word.to_ascii_uppercase();
    known
        .iter()
        .map(|k| {
            (
                strsim::damerau_levenshtein(&upper, &k.to_ascii_uppercase()),
                *k,
            )
        })
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `a`, `a or b`, `a, b or c`, each in backquotes.
pub(crate) fn list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn counts_are_positive_integers_or_all() {
        assert_eq!(parse_count("all"), Some(Count::All));
        assert_eq!(
            parse_count("3"),
            Some(Count::Exactly(NonZeroUsize::new(3).unwrap()))
        );
        for bad in ["0", "-1", "+2", "", "ALL", "1.5", "99999999999999999999999"] {
            assert_eq!(parse_count(bad), None, "{bad}");
        }
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
