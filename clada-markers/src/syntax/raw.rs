//! What the parser found, before it is checked: tasks and bodies as the
//! parser delimited them, and the structural problems it met on the way.
//! `validate` turns them into AST nodes and diagnostics.

use crate::syntax::lexer::Marker;
use crate::syntax::span::Span;
use crate::syntax::{SectionMarker, TaskKind};

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
