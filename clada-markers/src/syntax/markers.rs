//! The vocabulary of the format: marker characters, the minimum fence length
//! and the keywords, each defined once.
//!
//! A marker line is a run of at least [`MIN_FENCE`] identical marker
//! characters at column 0, followed by a space or the end of the line. What
//! follows the run decides the rest: a keyword and attributes for an opener,
//! nothing for a separator, a keyword for a closer.

use serde::Serialize;

/// The shortest run of marker characters that makes a marker line.
pub(crate) const MIN_FENCE: usize = 7;

/// Starts a unit or a nested region: `<<<<<<< KEYWORD attrs`.
pub(crate) const OPEN_CHAR: u8 = b'<';
/// Separates the sections of SEARCH and SEARCH-START tasks: `=======`.
pub(crate) const SEPARATOR_CHAR: u8 = b'=';
/// Ends a unit or a nested region: `>>>>>>> KEYWORD`.
pub(crate) const CLOSE_CHAR: u8 = b'>';

/// The UTF-8 byte-order mark; dropped at the start of a document.
pub(crate) const BOM: &str = "\u{feff}";

/// Which of the three marker characters a marker line is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    Opener,
    Separator,
    Closer,
}

impl Shape {
    pub fn from_byte(b: u8) -> Option<Shape> {
        match b {
            OPEN_CHAR => Some(Shape::Opener),
            SEPARATOR_CHAR => Some(Shape::Separator),
            CLOSE_CHAR => Some(Shape::Closer),
            _ => None,
        }
    }

    pub const fn byte(self) -> u8 {
        match self {
            Shape::Opener => OPEN_CHAR,
            Shape::Separator => SEPARATOR_CHAR,
            Shape::Closer => CLOSE_CHAR,
        }
    }

    /// The marker run of this shape with `fence` characters.
    pub fn run(self, fence: usize) -> String {
        String::from(self.byte() as char).repeat(fence)
    }
}

/// Every keyword the format knows, on openers and closers alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Keyword {
    Tasks,
    Write,
    Search,
    Edit,
    SearchStart,
    SearchEnd,
    Run,
    Move,
    Remove,
    End,
    Replace,
}

impl Keyword {
    pub const ALL: [Keyword; 11] = [
        Keyword::Tasks,
        Keyword::Write,
        Keyword::Search,
        Keyword::Edit,
        Keyword::SearchStart,
        Keyword::SearchEnd,
        Keyword::Run,
        Keyword::Move,
        Keyword::Remove,
        Keyword::End,
        Keyword::Replace,
    ];

    /// Keywords that may follow `<<<<<<<` at the start of a unit.
    pub const OPENERS: [Keyword; 8] = [
        Keyword::Tasks,
        Keyword::Write,
        Keyword::Search,
        Keyword::Edit,
        Keyword::SearchStart,
        Keyword::Run,
        Keyword::Move,
        Keyword::Remove,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Keyword::Tasks => "TASKS",
            Keyword::Write => "WRITE",
            Keyword::Search => "SEARCH",
            Keyword::Edit => "EDIT",
            Keyword::SearchStart => "SEARCH-START",
            Keyword::SearchEnd => "SEARCH-END",
            Keyword::Run => "RUN",
            Keyword::Move => "MOVE",
            Keyword::Remove => "REMOVE",
            Keyword::End => "END",
            Keyword::Replace => "REPLACE",
        }
    }

    pub fn from_word(word: &str) -> Option<Keyword> {
        Keyword::ALL.into_iter().find(|k| k.as_str() == word)
    }

    /// The task this keyword opens, if it opens one.
    pub const fn task(self) -> Option<TaskKind> {
        match self {
            Keyword::Write => Some(TaskKind::Write),
            Keyword::Search => Some(TaskKind::Search),
            Keyword::Edit => Some(TaskKind::Edit),
            Keyword::SearchStart => Some(TaskKind::SearchStart),
            Keyword::Run => Some(TaskKind::Run),
            Keyword::Move => Some(TaskKind::Move),
            Keyword::Remove => Some(TaskKind::Remove),
            _ => None,
        }
    }
}

impl std::fmt::Display for Keyword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The keyword of a task's opener.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TaskKind {
    Write,
    Search,
    Edit,
    SearchStart,
    Run,
    Move,
    Remove,
}

impl TaskKind {
    pub const ALL: [TaskKind; 7] = [
        TaskKind::Write,
        TaskKind::Search,
        TaskKind::Edit,
        TaskKind::SearchStart,
        TaskKind::Run,
        TaskKind::Move,
        TaskKind::Remove,
    ];

    pub const fn keyword(self) -> Keyword {
        match self {
            TaskKind::Write => Keyword::Write,
            TaskKind::Search => Keyword::Search,
            TaskKind::Edit => Keyword::Edit,
            TaskKind::SearchStart => Keyword::SearchStart,
            TaskKind::Run => Keyword::Run,
            TaskKind::Move => Keyword::Move,
            TaskKind::Remove => Keyword::Remove,
        }
    }

    /// The closer keyword that ends this task.
    pub const fn closer(self) -> Keyword {
        match self {
            TaskKind::Search | TaskKind::Edit | TaskKind::SearchStart => Keyword::Replace,
            _ => Keyword::End,
        }
    }

    /// The section markers a task of this kind has between opener and
    /// closer, in order.
    pub(crate) const fn section_markers(self) -> &'static [SectionMarker] {
        match self {
            TaskKind::Search | TaskKind::Edit => &[SectionMarker::Separator],
            TaskKind::SearchStart => &[SectionMarker::SearchEnd, SectionMarker::Separator],
            _ => &[],
        }
    }

    /// The attribute names this task takes, required ones first.
    pub(crate) const fn attributes(self) -> &'static [AttrSpec] {
        const PATH: AttrSpec = AttrSpec::required("path");
        const COUNT: AttrSpec = AttrSpec::optional("count");
        const WRITE: &[AttrSpec] = &[PATH, AttrSpec::optional("append")];
        const EDIT: &[AttrSpec] = &[PATH, COUNT];
        const RUN: &[AttrSpec] = &[AttrSpec::optional("dir"), AttrSpec::optional("path")];
        const MOVE: &[AttrSpec] = &[AttrSpec::required("from"), AttrSpec::required("to")];
        const REMOVE: &[AttrSpec] = &[PATH];
        match self {
            TaskKind::Write => WRITE,
            TaskKind::Search | TaskKind::Edit | TaskKind::SearchStart => EDIT,
            TaskKind::Run => RUN,
            TaskKind::Move => MOVE,
            TaskKind::Remove => REMOVE,
        }
    }
}

impl std::fmt::Display for TaskKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.keyword().as_str())
    }
}

/// A structural line between a task's opener and closer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum SectionMarker {
    /// `=======`
    Separator,
    /// `<<<<<<< SEARCH-END`
    SearchEnd,
}

/// One attribute a keyword accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AttrSpec {
    pub(crate) name: &'static str,
    pub(crate) required: bool,
}

impl AttrSpec {
    const fn required(name: &'static str) -> Self {
        AttrSpec {
            name,
            required: true,
        }
    }
    const fn optional(name: &'static str) -> Self {
        AttrSpec {
            name,
            required: false,
        }
    }
}

/// Attributes of the `TASKS` opener.
pub(crate) const TASKS_ATTRIBUTES: &[AttrSpec] = &[AttrSpec::optional("version")];

/// The protocol versions a `TASKS` block may declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Version {
    #[serde(rename = "1.0")]
    V1_0,
    #[serde(rename = "1.1")]
    V1_1,
    #[serde(rename = "2.0")]
    V2_0,
}

impl Version {
    pub const ALL: [Version; 3] = [Version::V1_0, Version::V1_1, Version::V2_0];

    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V1_0 => "1.0",
            Version::V1_1 => "1.1",
            Version::V2_0 => "2.0",
        }
    }

    pub fn parse(s: &str) -> Option<Version> {
        Version::ALL.into_iter().find(|v| v.as_str() == s)
    }
}
