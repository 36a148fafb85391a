//! Diagnostics about a document, as data, and the one place that renders
//! them for people.
//!
//! A [`Diagnostic`] has a stable [`DiagnosticKind`] (tests and programs match
//! on it, never on wording), the protocol's error type, a byte span, a
//! message that says what is wrong and what would be right, secondary
//! labels and an optional help line. [`render`] is the only caller of
//! ariadne.

use ariadne::{Config, IndexType, Label as AriadneLabel, Report, ReportKind, Source};
use schemars::JsonSchema;
use serde::Serialize;

use std::borrow::Cow;

use crate::error_type::ErrorType;
use crate::escape::{escape_controls, escape_line, escape_mapped, shifted};
use crate::syntax::span::{LineIndex, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// What a diagnostic is about. The names are stable: they appear in JSON
/// output as `kind` and in the corpus expectations.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DiagnosticKind {
    /// An opener (task or block) with no closer.
    UnclosedOpener,
    /// A closer at depth 0 with another keyword than the task expects.
    WrongCloser,
    /// A separator at depth 0 where the task has none (or no more).
    UnexpectedSeparator,
    /// A task closed before one of its section markers.
    MissingSection,
    /// `<<<<<<< SEARCH-END` where no SEARCH-START section can end.
    MisplacedSearchEnd,
    /// A marker line that fits no shape: an opener with no keyword, text
    /// after a separator or after a closer's keyword.
    MalformedMarker,
    /// An opener whose keyword the format does not know.
    UnknownKeyword,
    /// (warning) An unknown keyword in a versioned block, passed over.
    SkippedUnknownKeyword,
    /// (warning) A separator or closer outside any task, ignored.
    StrayMarker,
    UnknownAttribute,
    DuplicateAttribute,
    MissingAttribute,
    InvalidAttributeValue,
    /// Attribute text that is not `name=value`.
    MalformedAttribute,
    UnsupportedVersion,
    EmptySearch,
    /// A SEARCH whose replacement is its search text: it changes nothing.
    UnchangedEdit,
    EmptyRangeStart,
    EmptyRangeEnd,
    /// A body in a MOVE or REMOVE task.
    UnexpectedBody,
    /// A path that is empty, holds NUL, is absolute or climbs out of the root.
    PathEscape,
    /// A path into `.clada/` or a `.git` directory, which documents never
    /// change.
    ProtectedPath,
    /// A RUN task without a command.
    EmptyCommand,
    /// (warning) A document without a single task.
    NoTasks,
    /// A change a dialect describes that clada does not carry out: a
    /// binary diff, a copy, a symbolic link or a submodule.
    UnsupportedChange,
    /// (warning) A file mode a diff sets, which clada does not change.
    IgnoredMode,
    /// (warning) Line numbers (`12 | `) before every line of a Cline or
    /// Roo block's side, as Roo's `read_file` shows a file: taken off
    /// (PROTOCOL §11.9).
    StrippedLineNumbers,
    /// A document without a task that holds edits in a format its dialect
    /// does not read (PROTOCOL §11.7).
    ForeignFormat,
    InvalidUtf8,
    InputTooLarge,
    /// A unit that appeared in a watched file while the watch ran a unit
    /// with a command (PROTOCOL §11.6): what a command writes is never
    /// applied.
    WrittenDuringCommand,
    /// A unit whose text a watched file held before, at another place,
    /// and the watch ran (PROTOCOL §11.6): it never runs twice.
    RepeatedUnit,
    /// A fault of clada itself; never expected.
    Internal,
}

impl DiagnosticKind {
    /// The stable name of this kind, as in reports: `wrong_closer`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The protocol's error type for this kind.
    pub fn error_type(self) -> ErrorType {
        match self {
            DiagnosticKind::PathEscape | DiagnosticKind::ProtectedPath => ErrorType::PathEscape,
            DiagnosticKind::InvalidUtf8 => ErrorType::InvalidUtf8,
            DiagnosticKind::InputTooLarge => ErrorType::InputTooLarge,
            DiagnosticKind::WrittenDuringCommand => ErrorType::CommandNotAllowed,
            DiagnosticKind::RepeatedUnit => ErrorType::AlreadyApplied,
            _ => ErrorType::MalformedStructure,
        }
    }

    /// Whether this kind is only a warning.
    pub fn severity(self) -> Severity {
        match self {
            DiagnosticKind::SkippedUnknownKeyword
            | DiagnosticKind::StrayMarker
            | DiagnosticKind::NoTasks
            | DiagnosticKind::IgnoredMode
            | DiagnosticKind::UnchangedEdit
            | DiagnosticKind::StrippedLineNumbers => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl std::fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A secondary place a diagnostic points at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Label {
    pub span: Span,
    pub message: Cow<'static, str>,
}

/// A repair: replace the text of `span` with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub span: Span,
    pub replacement: String,
    /// The replacement leaves a value for the model to give (`path=""`):
    /// an editor may offer it, `clada check --fix` does not make it.
    pub placeholder: bool,
}

impl Fix {
    /// The lines the fix touches as they read once it is made: the first
    /// and last 1-based line of `source` it rewrites (whole lines, from
    /// the start of the fix's first line to the end of its last), and
    /// their new text, without a final line feed. The one reading of a
    /// fix for people: the text report shows it (PROTOCOL §2.1).
    pub fn fixed_lines(&self, source: &str, lines: &LineIndex<'_>) -> (usize, usize, String) {
        let floor = |mut i: usize| {
            i = i.min(source.len());
            while !source.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let start = floor(self.span.start);
        let end = floor(self.span.end).max(start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[end..].find('\n').map_or(source.len(), |i| end + i);
        let mut text = String::with_capacity(line_end - line_start + self.replacement.len());
        text.push_str(&source[line_start..start]);
        text.push_str(&self.replacement);
        text.push_str(&source[end..line_end]);
        if text.ends_with('\n') {
            text.pop();
            if text.ends_with('\r') {
                text.pop();
            }
        }
        (lines.line(start), lines.line(line_end), text)
    }

    /// The fix in words and lines for a text report: `the fix makes
    /// lines 1-5 read:` and the lines (the first and last few of a long
    /// run), control characters escaped (PROTOCOL §9.1).
    pub fn describe(&self, source: &str, lines: &LineIndex<'_>) -> String {
        let (first, last, text) = self.fixed_lines(source, lines);
        let which = if first == last {
            format!("line {first}")
        } else {
            format!("lines {first}-{last}")
        };
        if self.span.is_empty() && self.span.start >= source.len() {
            // Only what is added: a line feed before it ends the last line.
            let added = self.replacement.trim_matches(['\r', '\n']);
            return format!("the fix adds at the end:\n{}", shortened(added));
        }
        if text.is_empty() {
            return format!("the fix leaves {which} empty");
        }
        // A value the model must give is said to be one, not left to
        // look like the answer.
        let fill = if self.placeholder {
            ", its empty value yours to fill in"
        } else {
            ""
        };
        format!("the fix makes {which} read{fill}:\n{}", shortened(&text))
    }
}

/// The most lines of a fix the text report shows: the first and last of a
/// longer one, with how many are left out between.
const FIX_LINES: usize = 24;

/// `text` escaped, its middle left out past [`FIX_LINES`] lines.
fn shortened(text: &str) -> String {
    let count = text.lines().count();
    if count <= FIX_LINES {
        return escape_controls(text).into_owned();
    }
    let (head, tail) = (FIX_LINES / 2, FIX_LINES / 2 - 2);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i < head || i >= count - tail {
            out.push_str(&escape_controls(line));
            out.push('\n');
        } else if i == head {
            out.push_str(&format!("… {} lines more …\n", count - head - tail));
        }
    }
    out.pop();
    out
}

/// One problem (or warning) in a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub severity: Severity,
    /// The offending text: an attribute, a marker line, a body.
    pub span: Span,
    /// What is wrong, and what would be right. A message that quotes
    /// nothing of the document is borrowed, never copied: a document of
    /// many malformed lines holds one diagnostic for each.
    pub message: Cow<'static, str>,
    /// Other places worth showing: an opener, a probable closer.
    pub labels: Vec<Label>,
    pub help: Option<Cow<'static, str>>,
    /// A replacement that repairs the document, for editors to offer
    /// (boxed: few diagnostics have one).
    pub fix: Option<Box<Fix>>,
    /// The unit (block or standalone task) it belongs to, if any.
    pub block: Option<usize>,
    /// The task it belongs to, if any.
    pub task: Option<usize>,
}

/// Puts diagnostics in document order, by where they start and then end:
/// the order of every list of them clada gives out.
///
/// A stable sort of the diagnostics themselves would take room for half of
/// them (a diagnostic is over a hundred bytes, and a hostile document has
/// one for every few bytes): a list already in order is left as it is, and
/// another is put in order by sorting their indices (ties kept in the order
/// found, as a stable sort keeps them) and moving each diagnostic once.
pub(crate) fn sort_in_document_order(diagnostics: &mut [Diagnostic]) {
    let key = |d: &Diagnostic| (d.span.start, d.span.end);
    if !diagnostics.is_sorted_by_key(key) {
        arrange(diagnostics, key);
    }
}

/// Puts `diagnostics` in the order of `key`, ties in the order found (as
/// a stable sort would), by sorting their indices and moving each
/// diagnostic once: room for an index each, not for half of them.
pub(crate) fn arrange<K: Ord>(diagnostics: &mut [Diagnostic], key: impl Fn(&Diagnostic) -> K) {
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    order.sort_unstable_by_key(|&i| (diagnostics.get(i).map(&key), i));
    // Diagnostic `order[j]` goes to `j`: each cycle of the permutation is
    // followed once, each place marked done as it is filled.
    const DONE: usize = usize::MAX;
    for i in 0..order.len() {
        let mut j = i;
        while order[j] != DONE {
            let k = std::mem::replace(&mut order[j], DONE);
            if k == i {
                break;
            }
            diagnostics.swap(j, k);
            j = k;
        }
    }
}

impl Diagnostic {
    pub fn new(kind: DiagnosticKind, span: Span, message: impl Into<Cow<'static, str>>) -> Self {
        Diagnostic {
            kind,
            severity: kind.severity(),
            span,
            message: message.into(),
            labels: Vec::new(),
            help: None,
            fix: None,
            block: None,
            task: None,
        }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<Cow<'static, str>>) -> Self {
        // Most diagnostics have one label or none: no room for more.
        self.labels.reserve_exact(1);
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_help(mut self, help: impl Into<Cow<'static, str>>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Offers `replacement` for the text of `span`.
    pub fn with_fix(mut self, span: Span, replacement: impl Into<String>) -> Self {
        self.fix = Some(Box::new(Fix {
            span,
            replacement: replacement.into(),
            placeholder: false,
        }));
        self
    }

    /// Offers `replacement` for the text of `span`, a value in it left for
    /// the model to give.
    pub fn with_placeholder_fix(mut self, span: Span, replacement: impl Into<String>) -> Self {
        self = self.with_fix(span, replacement);
        if let Some(f) = &mut self.fix {
            f.placeholder = true;
        }
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn error_type(&self) -> ErrorType {
        self.kind.error_type()
    }
}

/// Renders diagnostics with source excerpts, as a person reads them.
///
/// `name` is how the document is called in the excerpt headers; `color`
/// turns on ANSI colours (the caller decides: only on a terminal and never
/// with `NO_COLOR`).
pub fn render(diagnostics: &[Diagnostic], source: &str, name: &str, color: bool) -> String {
    Renderer::new(source, name, color).render(diagnostics)
}

/// Renders diagnostics of one document, again and again: the document's
/// line index is built once, at the first diagnostic, so that rendering
/// each unit's diagnostics in turn costs what its excerpts cost, not the
/// document's length each time.
pub struct Renderer<'s> {
    source: &'s str,
    name: String,
    color: bool,
    /// The source as shown, as far as the excerpts so far reached.
    shown: std::cell::RefCell<Option<Shown<'s>>>,
    /// The lines of the source, for the fixes shown: built at the first.
    lines: std::cell::OnceCell<LineIndex<'s>>,
}

/// What [`Renderer`] shows of its source: the text up to `end` (a line's
/// end), control characters escaped (PROTOCOL §9.1), indexed by line, and
/// where the escapes moved its offsets.
struct Shown<'s> {
    cache: (String, Source<Cow<'s, str>>),
    shifts: Vec<(usize, usize)>,
    end: usize,
}

/// Where the line holding byte `at` of `source` ends, after its line
/// break (the source's end at most).
fn line_end(source: &str, at: usize) -> usize {
    let at = at.min(source.len());
    memchr::memchr(b'\n', &source.as_bytes()[at..]).map_or(source.len(), |i| at + i + 1)
}

impl std::fmt::Debug for Renderer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<'s> Renderer<'s> {
    pub fn new(source: &'s str, name: &str, color: bool) -> Self {
        Renderer {
            source,
            name: name.to_owned(),
            color,
            shown: std::cell::RefCell::new(None),
            lines: std::cell::OnceCell::new(),
        }
    }

    /// The diagnostics with their excerpts.
    pub fn render(&self, diagnostics: &[Diagnostic]) -> String {
        if diagnostics.is_empty() {
            return String::new();
        }
        let (source, name) = (self.source, &self.name);
        // The excerpts show the lines their labels are on: the source is
        // indexed up to the line after the last of them, and again, twice
        // as far at least, when a later diagnostic reaches past it. An
        // error near the start of a large document does not index all its
        // lines, and rendering unit after unit stays linear.
        let reach = diagnostics
            .iter()
            .flat_map(|d| std::iter::once(d.span).chain(d.labels.iter().map(|l| l.span)))
            .map(|s| s.end.max(s.start))
            .max()
            .unwrap_or(0);
        let needed = line_end(source, line_end(source, reach));
        let mut slot = self.shown.borrow_mut();
        if slot.as_ref().is_none_or(|s| s.end < needed) {
            let covered = slot.as_ref().map_or(0, |s| s.end);
            let end = needed.max(line_end(source, covered * 2));
            let (text, shifts) = escape_mapped(&source[..end]);
            *slot = Some(Shown {
                cache: (name.clone(), Source::from(text)),
                shifts,
                end,
            });
        }
        let Some(shown) = slot.as_mut() else {
            return String::new();
        };
        let (cache, shifts) = (&mut shown.cache, &shown.shifts[..]);
        let mut out = Vec::new();
        let config = Config::default()
            .with_index_type(IndexType::Byte)
            .with_color(self.color);
        // ariadne wants spans on character boundaries and inside the text.
        let clamp = |s: Span| -> std::ops::Range<usize> {
            let fix = |mut i: usize| {
                i = i.min(source.len());
                while !source.is_char_boundary(i) {
                    i -= 1;
                }
                i
            };
            let (start, end) = (fix(s.start), fix(s.end).max(fix(s.start)));
            shifted(shifts, start)..shifted(shifts, end)
        };
        for d in diagnostics {
            let kind = match d.severity {
                Severity::Error => ReportKind::Error,
                Severity::Warning => ReportKind::Warning,
            };
            let mut report = Report::build(kind, (name.clone(), clamp(d.span)))
                .with_config(config)
                .with_code(d.kind.name())
                .with_message(escape_line(&d.message));
            // In the order of the lines they end on: ariadne starts a new
            // excerpt at a label above the one before, and heads it with
            // the diagnostic's own location, not the lines it shows. In
            // order, the labels share one excerpt, headed by the
            // diagnostic's location, as rustc's are.
            let mut labels = vec![(clamp(d.span), d.kind.name().replace('_', " "))];
            labels.extend(
                d.labels
                    .iter()
                    .map(|l| (clamp(l.span), escape_line(&l.message).into_owned())),
            );
            labels.sort_by_key(|(span, _)| span.end);
            for (span, message) in labels {
                report = report
                    .with_label(AriadneLabel::new((name.clone(), span)).with_message(message));
            }
            if let Some(help) = &d.help {
                report = report.with_help(escape_line(help));
            }
            // The corrected lines themselves, not only what the fix does:
            // a model reading the report copies them (PROTOCOL §2.1).
            if let Some(fix) = &d.fix {
                let lines = self.lines.get_or_init(|| LineIndex::new(source));
                report = report.with_note(fix.describe(source, lines));
            }
            // Writing to a Vec cannot fail.
            let _ = report.finish().write(&mut *cache, &mut out);
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    /// Excerpts shown from the part of the source indexed so far are the
    /// excerpts of the whole source: whatever the lines (line breaks
    /// `\r\n` and `\r`, control characters, several bytes a character),
    /// wherever the labels start and end (a line's start or end, the
    /// document's end, past it), and in whatever order the diagnostics
    /// come, each call reaching further or not.
    #[test]
    fn excerpts_of_the_part_indexed_are_the_whole_sources() {
        let pieces = [
            "abc",
            "\n",
            "\r\n",
            "\r",
            "\u{1b}[0m",
            "é",
            "\t",
            "",
            "x y",
            "\n\n",
        ];
        let mut seed = 11u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n.max(1)
        };
        for round in 0..200 {
            let source: String = (0..next(60)).map(|_| pieces[next(pieces.len())]).collect();
            let at = |n: usize| if n == 0 { 0 } else { n - 1 };
            let mut calls: Vec<Vec<Diagnostic>> = Vec::new();
            for _ in 0..1 + next(5) {
                let list = (0..1 + next(3))
                    .map(|_| {
                        let start = at(next(source.len() + 3));
                        let end = start + next(12);
                        let mut d = Diagnostic::new(
                            DiagnosticKind::StrayMarker,
                            Span::new(start, end),
                            "m",
                        );
                        if next(2) == 0 {
                            let s = at(next(source.len() + 2));
                            d = d.with_label(Span::new(s, s + next(8)), "l");
                        }
                        d
                    })
                    .collect();
                calls.push(list);
            }
            let part = Renderer::new(&source, "d", false);
            // A diagnostic at the end first: the whole source indexed.
            let whole = Renderer::new(&source, "d", false);
            let end = Span::new(source.len(), source.len());
            whole.render(&[Diagnostic::new(DiagnosticKind::StrayMarker, end, "end")]);
            for list in &calls {
                assert_eq!(
                    part.render(list),
                    whole.render(list),
                    "round {round}: {source:?} {list:?}"
                );
            }
        }
    }

    /// Sorting by moving each diagnostic once gives the order a stable
    /// sort gives: by start, then end, ties in the order found.
    #[test]
    fn document_order_is_a_stable_sort() {
        // A pseudo-random list with many ties, in every length to 300.
        let mut seed = 7u64;
        for n in 0..300 {
            let list: Vec<Diagnostic> = (0..n)
                .map(|i| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let start = ((seed >> 33) % 13) as usize;
                    let end = start + ((seed >> 40) % 3) as usize;
                    Diagnostic::new(
                        DiagnosticKind::StrayMarker,
                        Span::new(start, end),
                        format!("{i}"),
                    )
                })
                .collect();
            let mut want = list.clone();
            want.sort_by_key(|d| (d.span.start, d.span.end));
            let mut got = list;
            sort_in_document_order(&mut got);
            assert_eq!(got, want, "{n}");
        }
    }

    /// Each excerpt's header (`╭─[ name:line:col ]`, `├─[ … ]`) names a
    /// line the excerpt under it shows: labels above the diagnostic's line
    /// (the opener a wrong closer belongs to) are in the same excerpt.
    #[test]
    fn each_excerpt_header_names_a_line_it_shows() {
        let documents = [
            "<<<<<<< SEARCH path=\"a.rs\"\nfn main() {}\n=======\nfn main() { run(); }\n>>>>>>> END\n",
            "intro\n\n<<<<<<< WRITE path=\"é.txt\"\néé\n\n\n\n>>>>>>> REPLACE\n",
            "<<<<<<< TASKS\n<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n<<<<<<< WRITE path=\"a\"\ny\n>>>>>>> END\n",
        ];
        let mut labelled = 0;
        for text in documents {
            let doc = crate::parse(text);
            assert!(!doc.diagnostics.is_empty(), "{text}");
            labelled += doc
                .diagnostics
                .iter()
                .filter(|d| !d.labels.is_empty())
                .count();
            let out = render(&doc.diagnostics, text, "typo.md", false);
            let mut header: Option<usize> = None;
            let mut shown: Vec<usize> = Vec::new();
            let check = |header: Option<usize>, shown: &mut Vec<usize>| {
                if let Some(h) = header {
                    assert!(
                        shown.contains(&h),
                        "header line {h}, lines {shown:?}:\n{out}"
                    );
                }
                shown.clear();
            };
            for line in out.lines() {
                if let Some((_, at)) = line.split_once("─[ typo.md:") {
                    check(header, &mut shown);
                    header = at.split(':').next().and_then(|n| n.parse().ok());
                    assert!(header.is_some(), "{line}");
                } else if let Some((number, _)) = line.split_once(" │")
                    && let Ok(n) = number.trim().parse()
                {
                    shown.push(n);
                } else if line.starts_with('[') {
                    check(header.take(), &mut shown);
                }
            }
            check(header, &mut shown);
        }
        assert!(labelled >= 2, "the documents have labels");
    }

    #[test]
    fn a_fix_is_described_by_the_lines_it_makes() {
        let describe = |text: &str| {
            let doc = crate::parse(text);
            let fix = doc.diagnostics.iter().find_map(|d| d.fix.as_ref()).unwrap();
            fix.describe(text, &LineIndex::new(text))
        };
        // Only what is added at the end, whether the last line ends or not.
        for text in [
            "<<<<<<< WRITE path=\"a\"\nx",
            "<<<<<<< WRITE path=\"a\"\nx\n",
        ] {
            assert_eq!(describe(text), "the fix adds at the end:\n>>>>>>> END");
        }
        assert_eq!(
            describe("<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> REPLACE\n"),
            "the fix makes line 3 read:\n>>>>>>> END"
        );
        assert_eq!(
            describe("<<<<<<< WRITE\nx\n>>>>>>> END\n"),
            "the fix makes line 1 read, its empty value yours to fill in:\n<<<<<<< WRITE path=\"\""
        );
        // A long block: its first and last lines, the middle counted.
        let body = "b\n".repeat(40);
        let out = describe(&format!("<<<<< WRITE path=\"a\"\n{body}>>>>> END\n"));
        assert!(
            out.starts_with("the fix makes lines 1-42 read:\n<<<<<<< WRITE path=\"a\"\n"),
            "{out}"
        );
        assert!(out.contains("\n… 20 lines more …\n"), "{out}");
        assert!(out.ends_with("\nb\n>>>>>>> END"), "{out}");
        assert_eq!(out.lines().count(), 1 + 12 + 1 + 10);
    }

    #[test]
    fn the_name_is_the_one_json_carries() {
        for k in DiagnosticKind::iter() {
            assert_eq!(serde_json::to_value(k).unwrap(), k.name());
        }
    }
}
