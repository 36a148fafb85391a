//! The document model: units, tasks, attributes and bodies.
//!
//! Everything borrows from the document text: a body is a slice of the
//! input, copied only when the document uses CRLF line breaks (a CR before a
//! line feed is never part of content, so such a body must be rebuilt
//! without it). Every node carries the byte spans of its parts.
//!
//! A task that has any error diagnostic keeps its keyword, attributes and
//! spans, but has no [`Op`]: only well-formed tasks say what to do.

use std::borrow::Cow;
use std::num::NonZeroUsize;

use schemars::JsonSchema;
use serde::Serialize;

use crate::syntax::attributes::Attribute;
use crate::syntax::diagnostics::Diagnostic;
use crate::syntax::path::Location;
use crate::syntax::span::Span;
use crate::syntax::{TaskKind, Version};

/// A parsed document: its units in order and every diagnostic found.
#[derive(Clone, Debug)]
pub struct Document<'a> {
    pub source: &'a str,
    pub units: Vec<Unit<'a>>,
    /// Sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl<'a> Document<'a> {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Every task in document order.
    pub fn tasks(&self) -> impl Iterator<Item = &Task<'a>> {
        self.units.iter().flat_map(Unit::tasks)
    }

    /// The diagnostics that belong to the unit numbered `block`: those that
    /// start within its span, found by binary search (the diagnostics are
    /// sorted by position), so that asking for every unit stays linear.
    pub fn diagnostics_of(&self, block: usize) -> impl Iterator<Item = &Diagnostic> {
        let range = match block.checked_sub(1).and_then(|i| self.units.get(i)) {
            Some(unit) => {
                let span = unit.span();
                let lo = self
                    .diagnostics
                    .partition_point(|d| d.span.start < span.start);
                let hi = self
                    .diagnostics
                    .partition_point(|d| d.span.start <= span.end);
                lo..hi.max(lo)
            }
            None => 0..0,
        };
        self.diagnostics[range]
            .iter()
            .filter(move |d| d.block == Some(block))
    }

    /// The document as [`crate::syntax::units`] hands it out: each unit with
    /// the diagnostics filed under it, then those filed under none.
    pub fn into_parsed(self) -> impl Iterator<Item = Parsed<'a>> {
        // The diagnostics are laid out in place, those filed under no unit
        // first, then the last unit's, …, the first unit's last: each unit
        // takes its own off the end as it is handed out (the whole list when
        // they are all its own), so that a document of many malformed lines
        // never holds its diagnostics twice.
        let count = self.units.len();
        let unit_of = |d: &Diagnostic| d.block.filter(|b| (1..=count).contains(b));
        let mut counts = vec![0usize; count];
        for b in self.diagnostics.iter().filter_map(unit_of) {
            if let Some(c) = counts.get_mut(b - 1) {
                *c += 1;
            }
        }
        let mut diagnostics = self.diagnostics;
        if counts.iter().any(|&c| c > 0) {
            crate::syntax::diagnostics::arrange(&mut diagnostics, |d| {
                unit_of(d).map_or(0, |b| count + 1 - b)
            });
        }
        let mut units = self.units.into_iter().zip(counts);
        let mut rest = Some(());
        std::iter::from_fn(move || {
            let mut take = |n: usize| {
                if n >= diagnostics.len() {
                    std::mem::take(&mut diagnostics)
                } else {
                    diagnostics.split_off(diagnostics.len() - n)
                }
            };
            match units.next() {
                Some((unit, n)) => Some(Parsed {
                    unit: Some(unit),
                    diagnostics: take(n),
                }),
                None => {
                    rest.take()?;
                    let rest = take(usize::MAX);
                    (!rest.is_empty()).then_some(Parsed {
                        unit: None,
                        diagnostics: rest,
                    })
                }
            }
        })
    }

    /// Whether the unit numbered `block` may run: it has no error.
    pub fn is_runnable(&self, block: usize) -> bool {
        !self.diagnostics_of(block).any(Diagnostic::is_error)
    }
}

/// A unit, or what lies between units (text, stray markers, openers passed
/// over), with the diagnostics that belong to it, sorted by position. Units
/// and tasks are numbered, and diagnostics filed under them, as in
/// [`parse_with`](crate::parse_with)'s [`Document`].
#[derive(Clone, Debug)]
pub struct Parsed<'a> {
    pub unit: Option<Unit<'a>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A block, or a standalone task: the thing that succeeds or fails alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unit<'a> {
    Block(Block<'a>),
    Task(Task<'a>),
}

impl<'a> Unit<'a> {
    /// 1-based, in document order; a standalone task is a block of its own.
    pub fn number(&self) -> usize {
        match self {
            Unit::Block(b) => b.number,
            Unit::Task(t) => t.block,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Unit::Block(b) => b.span,
            Unit::Task(t) => t.span,
        }
    }

    pub fn tasks(&self) -> &[Task<'a>] {
        match self {
            Unit::Block(b) => &b.tasks,
            Unit::Task(t) => std::slice::from_ref(t),
        }
    }

    pub fn is_block(&self) -> bool {
        matches!(self, Unit::Block(_))
    }

    /// From the start of the opener line to the end of the closer line's
    /// text (or to where the unit was cut off): what reports call its
    /// `start` and `end` (PROTOCOL §9.2).
    pub fn extent(&self) -> Span {
        match self {
            Unit::Block(b) => extent(b.span, b.closer),
            Unit::Task(t) => t.extent(),
        }
    }
}

fn extent(span: Span, closer: Option<Span>) -> Span {
    Span::new(span.start, closer.map_or(span.end, |c| c.end))
}

/// `<<<<<<< TASKS` … `>>>>>>> TASKS`: tasks that run in order, fail-fast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block<'a> {
    pub number: usize,
    /// From the opener to the closer, or to where the block was cut off.
    pub span: Span,
    /// The opener line, without its line break.
    pub opener: Span,
    pub fence: usize,
    pub attributes: Vec<Attribute<'a>>,
    pub version: Option<Version>,
    pub tasks: Vec<Task<'a>>,
    /// The closer line, when the block has one.
    pub closer: Option<Span>,
    /// How a dialect's block applies where it differs from a TASKS block.
    pub rules: BlockRules,
}

/// What a dialect asks of a block beyond a TASKS block's rules (PROTOCOL
/// §11): set by front ends, never by clada's own syntax.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockRules {
    /// The block's changes stand together or not at all, as `--atomic`
    /// would have it for this block alone (a file of a unified diff, as
    /// `git apply` applies it).
    pub all_or_none: bool,
    /// REMOVE and MOVE take files, never directories, and a MOVE's `to` is
    /// the file's new path, never a directory to move into (codex's and
    /// unified diffs' file operations).
    pub files_only: bool,
    /// A WRITE creates, and a MOVE lands, only where nothing is
    /// (`file_exists` otherwise), and an appending WRITE adds only to an
    /// empty file: a unified diff's new file, rename, or lines without
    /// context, as `git apply` places them.
    pub create_only: bool,
    /// A REMOVE takes only a file the block's edits before it emptied: a
    /// unified diff's deletion lists every line of its file, as `git
    /// apply` requires (`match_count_mismatch` otherwise).
    pub remove_emptied: bool,
    /// A file an edit changed ends with a line break (codex adds one).
    pub final_line_break: bool,
    /// A failed task does not stop the block: each task stands alone (Roo
    /// applies each block of a call that matches).
    pub independent: bool,
    /// The block's edits come in the order of their file (a unified
    /// diff's hunks): an occurrence before the end of the edit before it
    /// cannot be an edit's, which may leave one of several candidates.
    pub ordered: bool,
}

/// One operation, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task<'a> {
    /// 1-based across the whole document.
    pub number: usize,
    /// The number of the unit this task belongs to.
    pub block: usize,
    pub kind: TaskKind,
    pub fence: usize,
    /// From the start of the opener to the end of the closer line.
    pub span: Span,
    /// The opener line, without its line break.
    pub opener: Span,
    pub attributes: Vec<Attribute<'a>>,
    /// The bodies between the structural lines, in order.
    pub sections: Vec<Span>,
    /// The closer line, when the task has one.
    pub closer: Option<Span>,
    /// What to do; `None` when the task has an error.
    pub op: Option<Op<'a>>,
}

impl<'a> Task<'a> {
    /// The value of attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&Attribute<'a>> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The path the task acts on, for reports: `path`, else `from`, else
    /// `dir`.
    pub fn display_path(&self) -> Option<&str> {
        ["path", "from", "dir"]
            .into_iter()
            .find_map(|n| self.attribute(n))
            .map(|a| a.value.as_ref())
    }

    /// From the start of the opener line to the end of the closer line's
    /// text (or to where the task was cut off).
    pub fn extent(&self) -> Span {
        extent(self.span, self.closer)
    }

    /// The name of the operation in reports.
    pub fn op_name(&self) -> OpName {
        OpName::of(self.kind)
    }
}

/// How many occurrences an edit must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Count {
    Exactly(NonZeroUsize),
    /// At least one; every occurrence is replaced.
    All,
}

impl Default for Count {
    fn default() -> Self {
        Count::Exactly(NonZeroUsize::MIN)
    }
}

impl Serialize for Count {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Count::Exactly(n) => s.serialize_u64(n.get() as u64),
            Count::All => s.serialize_str("all"),
        }
    }
}

/// A positive integer, or `"all"`.
impl JsonSchema for Count {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Count".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "oneOf": [
                {"type": "integer", "minimum": 1},
                {"const": "all"}
            ]
        })
    }
}

impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Count::Exactly(n) => write!(f, "{n}"),
            Count::All => f.write_str("all"),
        }
    }
}

/// How an edit finds its text beyond an exact occurrence (PROTOCOL §3):
/// what a dialect asks for, next to `count`. clada's own documents always
/// carry the default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Matching {
    /// The passes that may find the text when it does not occur exactly.
    pub policy: Policy,
    /// The 1-based line of the file the edit was written for (a unified
    /// diff hunk's line number, as `git apply` reads it): when an edit
    /// with `count` 1 finds several equal candidates, the one nearest this
    /// line is taken. Without it, several candidates are a mismatch.
    pub line: Option<NonZeroUsize>,
    /// An occurrence starts at the start of a line of the file and ends at
    /// the end of one, in every pass: the edits of the line-based dialects
    /// (unified diffs, aider, codex, Cline and Roo), whose tools compare
    /// whole lines (PROTOCOL §11). clada's own SEARCH matches any text.
    pub whole_lines: bool,
    /// The occurrence ends at the end of the file: a unified diff hunk
    /// with `\ No newline at end of file` (PROTOCOL §11.8), whose marked
    /// line is its file's last.
    pub at_end: bool,
    /// When the text is not found, it is looked for again without its
    /// last line if that line is empty, and the replacement written
    /// without its own last empty line: codex's retry, for the empty
    /// context line a model leaves before `*** End Patch` (PROTOCOL
    /// §11.2).
    pub blank_end_optional: bool,
    /// The lines the edit keeps (a unified diff's context lines): found
    /// through a pass beyond exact text, each is written as the file has
    /// it, not as the edit does (PROTOCOL §11.8).
    pub kept: Option<std::sync::Arc<Kept>>,
    /// The search text and replacement as the document wrote them, where a
    /// front end took line numbers a model copied off them (Roo's
    /// `read_file` numbers, PROTOCOL §11.9): looked for first, so that a
    /// file that holds such lines is edited where it holds them; the
    /// edit's own texts only when these are not found.
    pub as_written: Option<std::sync::Arc<(String, String)>>,
}

/// Which lines of an edit's search text and of its replacement are one
/// line kept (a unified diff's context lines): the k-th such line of the
/// search is the k-th of the replacement.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Kept {
    search: Vec<bool>,
    replace: Vec<bool>,
}

impl Kept {
    /// Notes the next line of the search (`search`), of the replacement
    /// (`replace`), or of both (a kept line).
    pub(crate) fn push(&mut self, search: bool, replace: bool) {
        let kept = search && replace;
        if search {
            self.search.push(kept);
        }
        if replace {
            self.replace.push(kept);
        }
    }

    /// Whether any line is kept.
    pub(crate) fn any(&self) -> bool {
        self.search.contains(&true)
    }

    /// Each kept line: its index among the search's lines and among the
    /// replacement's. (The engine writes them; without it nothing does.)
    #[cfg(feature = "engine")]
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let at = |v: &'_ [bool]| {
            v.iter()
                .enumerate()
                .filter(|(_, k)| **k)
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        at(&self.search).into_iter().zip(at(&self.replace))
    }
}

impl Matching {
    /// What a line-based dialect's edit asks: whole lines, found by
    /// `policy`, the nearest to `line` among equal candidates.
    pub fn lines(policy: Policy, line: Option<NonZeroUsize>) -> Self {
        Matching {
            policy,
            line,
            whole_lines: true,
            at_end: false,
            blank_end_optional: false,
            kept: None,
            as_written: None,
        }
    }
}

/// Which passes look for an edit's text once no exact occurrence exists
/// (PROTOCOL §3). `--match exact` turns them all off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Policy {
    /// clada's white-space tier: lines equal but for one uniform
    /// indentation shift and white space at their ends.
    #[default]
    Clada,
    /// codex's passes (its `seek_sequence`), in order: white space at line
    /// ends ignored, then at both ends, then with Unicode dashes, quotes
    /// and spaces read as ASCII.
    Codex,
}

/// A path as a task names it: the text written, and where it lies, resolved
/// once by validation (PROTOCOL §5) in every dialect. The engine takes the
/// place from here and never resolves the text again; a path made by hand
/// (a test, the generator) has no place yet, and the engine resolves it.
/// Two paths are equal when their texts are, and one shows as its text.
#[derive(Clone, Default)]
pub struct TaskPath<'a> {
    written: Cow<'a, str>,
    at: Option<Location>,
}

impl<'a> TaskPath<'a> {
    /// A path with its text only.
    pub fn new(written: impl Into<Cow<'a, str>>) -> Self {
        TaskPath {
            written: written.into(),
            at: None,
        }
    }

    /// A path and the place validation resolved it to.
    pub(crate) fn resolved(written: Cow<'a, str>, at: Option<Location>) -> Self {
        TaskPath { written, at }
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    /// The text as written, borrowed from the document where it can be.
    pub fn written(&self) -> &Cow<'a, str> {
        &self.written
    }

    /// Where validation found it, if it did.
    #[cfg(any(feature = "engine", test))]
    pub(crate) fn at(&self) -> Option<&Location> {
        self.at.as_ref()
    }

    /// Gives it the place validation found (a front end that checks the
    /// path after building the operation).
    pub(crate) fn set_place(&mut self, at: Option<Location>) {
        self.at = at;
    }

    /// The same path, owning its text.
    pub fn into_owned(self) -> TaskPath<'static> {
        TaskPath {
            written: Cow::Owned(self.written.into_owned()),
            at: self.at,
        }
    }
}

impl std::ops::Deref for TaskPath<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.written
    }
}

impl AsRef<str> for TaskPath<'_> {
    fn as_ref(&self) -> &str {
        &self.written
    }
}

impl std::fmt::Debug for TaskPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.written, f)
    }
}

impl std::fmt::Display for TaskPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.written)
    }
}

impl PartialEq for TaskPath<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl Eq for TaskPath<'_> {}

impl std::hash::Hash for TaskPath<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.written.hash(state);
    }
}

impl PartialEq<str> for TaskPath<'_> {
    fn eq(&self, other: &str) -> bool {
        self.written == other
    }
}

impl PartialEq<&str> for TaskPath<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.written == *other
    }
}

impl<'a> From<&'a str> for TaskPath<'a> {
    fn from(s: &'a str) -> Self {
        TaskPath::new(s)
    }
}

impl From<String> for TaskPath<'_> {
    fn from(s: String) -> Self {
        TaskPath::new(s)
    }
}

impl<'a> From<Cow<'a, str>> for TaskPath<'a> {
    fn from(s: Cow<'a, str>) -> Self {
        TaskPath::new(s)
    }
}

/// A well-formed operation with its texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    Write {
        path: TaskPath<'a>,
        append: bool,
        content: Cow<'a, str>,
    },
    Edit {
        path: TaskPath<'a>,
        count: Count,
        matching: Matching,
        search: Cow<'a, str>,
        replace: Cow<'a, str>,
    },
    EditRange {
        path: TaskPath<'a>,
        count: Count,
        matching: Matching,
        start: Cow<'a, str>,
        end: Cow<'a, str>,
        replace: Cow<'a, str>,
    },
    Run {
        dir: Option<TaskPath<'a>>,
        command: Cow<'a, str>,
    },
    Move {
        from: TaskPath<'a>,
        to: TaskPath<'a>,
    },
    Remove {
        path: TaskPath<'a>,
    },
}

impl<'a> Op<'a> {
    /// The path the operation names first (`path`, a MOVE's `from`, a
    /// RUN's `dir`), to give it its place.
    pub(crate) fn first_path_mut(&mut self) -> Option<&mut TaskPath<'a>> {
        match self {
            Op::Write { path, .. }
            | Op::Edit { path, .. }
            | Op::EditRange { path, .. }
            | Op::Remove { path } => Some(path),
            Op::Move { from, .. } => Some(from),
            Op::Run { dir, .. } => dir.as_mut(),
        }
    }
}

/// The operation names used in reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpName {
    Write,
    Edit,
    EditRange,
    Run,
    Move,
    Remove,
}

impl OpName {
    pub fn of(kind: TaskKind) -> OpName {
        match kind {
            TaskKind::Write => OpName::Write,
            TaskKind::Search | TaskKind::Edit => OpName::Edit,
            TaskKind::SearchStart => OpName::EditRange,
            TaskKind::Run => OpName::Run,
            TaskKind::Move => OpName::Move,
            TaskKind::Remove => OpName::Remove,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::syntax::DiagnosticKind;

    /// Each unit gets the diagnostics filed under it, in order, and those
    /// filed under none (or under a unit the document has not) come last,
    /// in order: none is lost or copied twice.
    #[test]
    fn into_parsed_files_every_diagnostic_once() {
        let text =
            "<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n<<<<<<< WRITE path=\"b\"\ny\n>>>>>>> END\n";
        let mut doc = crate::parse(text);
        assert_eq!(doc.units.len(), 2);
        let d = |block: Option<usize>, at: usize| {
            let mut d = crate::Diagnostic::new(
                DiagnosticKind::StrayMarker,
                crate::Span::empty(at),
                format!("{block:?} at {at}"),
            );
            d.block = block;
            d
        };
        doc.diagnostics = vec![
            d(None, 0),
            d(Some(1), 1),
            d(Some(2), 2),
            d(None, 3),
            d(Some(1), 4),
            d(Some(9), 5),
            d(Some(0), 6),
        ];
        let parsed: Vec<_> = doc.into_parsed().collect();
        let messages = |i: usize| -> Vec<String> {
            parsed[i]
                .diagnostics
                .iter()
                .map(|d| d.message.to_string())
                .collect()
        };
        assert_eq!(parsed.len(), 3);
        assert_eq!(messages(0), ["Some(1) at 1", "Some(1) at 4"]);
        assert_eq!(messages(1), ["Some(2) at 2"]);
        assert!(parsed[2].unit.is_none());
        assert_eq!(
            messages(2),
            ["None at 0", "None at 3", "Some(9) at 5", "Some(0) at 6"]
        );
    }
}
