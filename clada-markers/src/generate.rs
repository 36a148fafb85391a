//! Documents for people who fuzz and property-test: an owned document
//! model the printer renders to text, and generators for it.
//!
//! A parsed [`Unit`] points into its text, so it cannot be generated
//! without one. A [`Model`] owns everything: operations, fence lengths,
//! quoting, block versions; [`Model::print`] renders it as a canonical
//! document, and parsing that text gives the same operations back (the
//! round trip the tests check). With the `proptest` feature,
//! `strategy` has the strategies clada's own property tests use: models,
//! and raw document text full of near-marker lines. With the `arbitrary`
//! feature, [`Model`] implements `arbitrary::Arbitrary`, for
//! structure-aware `cargo fuzz` targets.
//!
//! ```
//! use clada_markers::generate::{Model, ModelTask, ModelUnit};
//! use clada_markers::Op;
//! use clada_markers::syntax::Quote;
//!
//! let model = Model {
//!     units: vec![ModelUnit::Task(ModelTask {
//!         op: Op::Write { path: "a.txt".into(), append: false, content: ">>>>>>> END\n".into() },
//!         fence: 7,
//!         quote: Quote::Double,
//!         edit_alias: false,
//!     })],
//! };
//! let text = model.print().unwrap();
//! // The body holds a closer of the same length: the printer lengthens the fence.
//! assert!(text.starts_with("<<<<<<<< WRITE"));
//! let doc = clada_markers::parse(&text);
//! assert_eq!(doc.tasks().next().and_then(|t| t.op.clone()), Some(model.ops()[0].clone()));
//! ```

use std::borrow::Cow;

use crate::syntax::Span;
use crate::syntax::{Attribute, Quote};
use crate::syntax::{Block, Op, Task, Unit};
use crate::syntax::{PrintError, print};
use crate::syntax::{TaskKind, Version};

/// A document as data: its units in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Model {
    pub units: Vec<ModelUnit>,
}

/// A TASKS block or a standalone task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelUnit {
    Task(ModelTask),
    Block(ModelBlock),
}

/// A TASKS block: its fence length (at least 7), version, tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelBlock {
    pub fence: usize,
    pub version: Option<Version>,
    pub tasks: Vec<ModelTask>,
}

/// One operation and how it is written: the fence length it asks for (the
/// printer lengthens it when a body needs that), the quoting of its
/// attribute values, and `EDIT` instead of `SEARCH` for an edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelTask {
    pub op: Op<'static>,
    pub fence: usize,
    pub quote: Quote,
    pub edit_alias: bool,
}

impl ModelTask {
    /// The keyword this task is written with.
    pub fn kind(&self) -> TaskKind {
        match &self.op {
            Op::Write { .. } => TaskKind::Write,
            Op::Edit { .. } if self.edit_alias => TaskKind::Edit,
            Op::Edit { .. } => TaskKind::Search,
            Op::EditRange { .. } => TaskKind::SearchStart,
            Op::Run { .. } => TaskKind::Run,
            Op::Move { .. } => TaskKind::Move,
            Op::Remove { .. } => TaskKind::Remove,
        }
    }

    /// The task as the printer takes it.
    pub fn to_task(&self) -> Task<'static> {
        let names: &[&'static str] = match &self.op {
            Op::Move { .. } => &["from", "to"],
            Op::Run { .. } => &["dir"],
            _ => &["path", "count", "append"],
        };
        Task {
            number: 0,
            block: 0,
            kind: self.kind(),
            fence: self.fence,
            span: Span::default(),
            opener: Span::default(),
            // Only the quoting preference matters to the printer.
            attributes: names
                .iter()
                .map(|&name| Attribute {
                    name,
                    value: Cow::Borrowed(""),
                    quote: self.quote,
                    span: Span::default(),
                    name_span: Span::default(),
                    value_span: Span::default(),
                })
                .collect(),
            sections: Vec::new(),
            closer: None,
            op: Some(self.op.clone()),
        }
    }
}

impl Model {
    /// The units as the printer takes them.
    pub fn to_units(&self) -> Vec<Unit<'static>> {
        self.units
            .iter()
            .map(|u| match u {
                ModelUnit::Task(t) => Unit::Task(t.to_task()),
                ModelUnit::Block(b) => Unit::Block(Block {
                    number: 0,
                    span: Span::default(),
                    opener: Span::default(),
                    fence: b.fence,
                    attributes: Vec::new(),
                    version: b.version,
                    tasks: b.tasks.iter().map(ModelTask::to_task).collect(),
                    closer: None,
                    rules: Default::default(),
                }),
            })
            .collect()
    }

    /// The document as canonical text.
    pub fn print(&self) -> Result<String, PrintError> {
        print(&self.to_units())
    }

    /// Every operation in document order.
    pub fn ops(&self) -> Vec<Op<'static>> {
        self.units
            .iter()
            .flat_map(|u| match u {
                ModelUnit::Task(t) => std::slice::from_ref(t),
                ModelUnit::Block(b) => b.tasks.as_slice(),
            })
            .map(|t| t.op.clone())
            .collect()
    }
}

/// Whether `op` can be written at all: a search and a range's start and
/// end are never empty, a search differs from its replacement, a command
/// is not blank, paths are relative and below the root.
#[cfg(any(feature = "proptest", feature = "arbitrary"))]
pub(crate) fn is_writable(op: &Op<'_>) -> bool {
    let path_ok = |p: &str| {
        crate::syntax::normalize_path(p).is_ok_and(|c| !c.is_empty())
            && p.as_bytes().get(1).is_none_or(|&b| b != b':')
    };
    match op {
        Op::Write { path, .. } | Op::Remove { path } => path_ok(path),
        Op::Edit {
            path,
            search,
            replace,
            ..
        } => path_ok(path) && !search.is_empty() && search != replace,
        Op::EditRange {
            path, start, end, ..
        } => path_ok(path) && !start.is_empty() && !end.is_empty() && !start.ends_with('\r'),
        Op::Run { dir, command } => {
            dir.as_deref().is_none_or(path_ok) && !command.trim().is_empty()
        }
        Op::Move { from, to } => path_ok(from) && path_ok(to),
    }
}

/// The strategies of clada's property tests (feature `proptest`).
#[cfg(feature = "proptest")]
pub mod strategy {
    use std::borrow::Cow;
    use std::num::NonZeroUsize;

    use proptest::prelude::*;

    use super::{Model, ModelBlock, ModelTask, ModelUnit, is_writable};
    use crate::syntax::Quote;
    use crate::syntax::Version;
    use crate::syntax::{Count, Op};

    /// Lines that stress the grammar: marker runs of every nearby length
    /// with every keyword, attributes, near misses, prose, white space and
    /// odd characters.
    pub fn line() -> impl Strategy<Value = String> {
        let run = (prop::sample::select(vec!['<', '=', '>']), 5usize..11)
            .prop_map(|(c, n)| c.to_string().repeat(n));
        let word = prop::sample::select(vec![
            "",
            "TASKS",
            "WRITE",
            "SEARCH",
            "EDIT",
            "SEARCH-START",
            "SEARCH-END",
            "RUN",
            "MOVE",
            "REMOVE",
            "END",
            "REPLACE",
            "HEAD",
            "feature",
            "write",
            "TASKS version=\"2.0\"",
            "TASKS version=9",
            "WRITE path=\"a.txt\"",
            "WRITE path='b c' append=true",
            "SEARCH path=x count=all",
            "EDIT path=../x",
            "SEARCH-START path=y",
            "MOVE from=a to=b/",
            "REMOVE path=\"q\\\"r\"",
            "RUN dir=sub",
            "WRITE path=\"unterminated",
            "WRITE pth=x",
            "END extra",
        ]);
        let marker = (
            run,
            prop::sample::select(vec![" ", "", "  ", "\t"]),
            word,
            prop::sample::select(vec!["", " ", "\r"]),
        )
            .prop_map(|(r, sep, w, tail)| format!("{r}{sep}{w}{tail}"));
        let text = prop::sample::select(vec![
            "",
            "hello",
            "  <<<<<<< WRITE path=x",
            "```",
            "é ü 漢字",
            "\u{feff}x",
            "a\rb",
            "\t",
            "=",
            "<",
            ">>",
        ])
        .prop_map(str::to_owned);
        prop_oneof![3 => marker, 2 => text, 1 => any::<String>().prop_map(|s| s.replace('\n', ""))]
    }

    /// Raw document text: lines of [`line`] with LF or CRLF breaks, maybe a
    /// byte-order mark, maybe no final line break. Mostly not well formed.
    pub fn document() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((line(), prop::sample::select(vec!["\n", "\r\n"])), 0..40),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(lines, bom, final_break)| {
                let mut s = String::new();
                if bom {
                    s.push('\u{feff}');
                }
                for (l, br) in lines {
                    s.push_str(&l);
                    s.push_str(br);
                }
                if !final_break && s.ends_with('\n') {
                    s.pop();
                }
                s
            })
    }

    fn body_line() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => line(),
            1 => "[a-z ]{0,12}",
        ]
    }

    /// A body: whole lines, each ending in a line feed, full of marker-like
    /// lines (some with a CR before the line feed, which the printer must
    /// protect).
    pub fn body(min_lines: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(body_line(), min_lines..6)
            .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect::<String>())
    }

    /// A relative path below the root, with quotes, spaces and `=` in it.
    pub fn path() -> impl Strategy<Value = String> {
        prop::collection::vec("[a-zA-Z0-9 _'\"=é-]{1,6}", 1..4)
            .prop_map(|parts| parts.join("/"))
            .prop_filter("a relative path below the root", |p| {
                crate::syntax::normalize_path(p).is_ok_and(|c| !c.is_empty())
                    && p.as_bytes().get(1).is_none_or(|&b| b != b':')
            })
    }

    pub fn count() -> impl Strategy<Value = Count> {
        prop_oneof![
            Just(Count::All),
            (1usize..5)
                .prop_map(|n| Count::Exactly(NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN))),
        ]
    }

    /// Every operation, with bodies that are hard to print.
    pub fn op() -> impl Strategy<Value = Op<'static>> {
        let c = |s: String| Cow::Owned(s);
        let t = |s: String| crate::syntax::TaskPath::new(s);
        prop_oneof![
            (path(), any::<bool>(), body(0)).prop_map(move |(p, append, content)| Op::Write {
                path: t(p),
                append,
                content: c(content)
            }),
            (path(), count(), body(1), body(0)).prop_map(move |(p, count, search, replace)| {
                Op::Edit {
                    path: t(p),
                    count,
                    matching: crate::syntax::Matching::default(),
                    search: c(search),
                    replace: c(replace),
                }
            }),
            (path(), count(), body(1), body(1), body(0), any::<bool>()).prop_map(
                move |(p, count, start, end, replace, cut)| {
                    // The start section drops its final line feed; keep one
                    // sometimes so the start text ends with a line feed.
                    let start = if cut {
                        start.strip_suffix('\n').unwrap_or(&start).to_owned()
                    } else {
                        start
                    };
                    Op::EditRange {
                        path: t(p),
                        count,
                        matching: crate::syntax::Matching::default(),
                        start: c(start),
                        end: c(end),
                        replace: c(replace),
                    }
                }
            ),
            (prop::option::of(path()), body(0)).prop_map(move |(dir, command)| Op::Run {
                dir: dir.map(t),
                command: c(command)
            }),
            (path(), path()).prop_map(move |(from, to)| Op::Move {
                from: t(from),
                to: t(to)
            }),
            path().prop_map(move |p| Op::Remove { path: t(p) }),
        ]
        .prop_filter("an operation that can be written", is_writable)
    }

    pub fn quote() -> impl Strategy<Value = Quote> {
        prop::sample::select(vec![Quote::Double, Quote::Single, Quote::Bare])
    }

    pub fn task() -> impl Strategy<Value = ModelTask> {
        (op(), 7usize..11, quote(), any::<bool>()).prop_map(|(op, fence, quote, edit_alias)| {
            ModelTask {
                op,
                fence,
                quote,
                edit_alias,
            }
        })
    }

    pub fn unit() -> impl Strategy<Value = ModelUnit> {
        prop_oneof![
            task().prop_map(ModelUnit::Task),
            (
                prop::collection::vec(task(), 0..4),
                prop::option::of(prop::sample::select(Version::ALL.to_vec())),
                7usize..10,
            )
                .prop_map(|(tasks, version, fence)| ModelUnit::Block(ModelBlock {
                    fence,
                    version,
                    tasks,
                })),
        ]
    }

    /// A document of 1 to 4 units.
    pub fn model() -> impl Strategy<Value = Model> {
        prop::collection::vec(unit(), 1..5).prop_map(|units| Model { units })
    }
}

#[cfg(feature = "arbitrary")]
mod arbitrary_impls {
    use std::borrow::Cow;
    use std::num::NonZeroUsize;

    use arbitrary::{Arbitrary, Result, Unstructured};

    use super::{Model, ModelBlock, ModelTask, ModelUnit, is_writable};
    use crate::syntax::Quote;
    use crate::syntax::{Count, Op};
    use crate::syntax::{MIN_FENCE, Version};

    /// Lines a body is made of: markers of nearby lengths, near misses,
    /// prose.
    const LINES: &[&str] = &[
        "<<<<<<< HEAD",
        "=======",
        ">>>>>>> feature",
        ">>>>>>> END",
        ">>>>>>> REPLACE",
        "<<<<<<< SEARCH path=\"x\"",
        "<<<<<<< SEARCH-END",
        "<<<<<<<< WRITE path=y",
        ">>>>>>>> END",
        "  <<<<<<< WRITE path=x",
        "<<<<<<<SEARCH",
        "<<<<< RUN",
        "```",
        "text",
        "",
        "a\r",
    ];

    fn body(u: &mut Unstructured<'_>, min_lines: usize) -> Result<Cow<'static, str>> {
        let n = u.int_in_range(min_lines..=min_lines + 5)?;
        let mut s = String::new();
        for _ in 0..n {
            if u.ratio(1, 4)? {
                let line: &str = u.arbitrary()?;
                s.push_str(&line.replace(['\n', '\r'], ""));
            } else {
                s.push_str(u.choose(LINES)?);
            }
            s.push('\n');
        }
        Ok(Cow::Owned(s))
    }

    fn path(u: &mut Unstructured<'_>) -> Result<Cow<'static, str>> {
        const PARTS: &[&str] = &["src", "a b", "é", "x'y", "q\"r", "n=1", "f.rs", "-"];
        let n = u.int_in_range(1..=3)?;
        let parts: Vec<&str> = (0..n)
            .map(|_| u.choose(PARTS).copied())
            .collect::<Result<_>>()?;
        Ok(Cow::Owned(parts.join("/")))
    }

    fn count(u: &mut Unstructured<'_>) -> Result<Count> {
        Ok(if u.ratio(1, 4)? {
            Count::All
        } else {
            Count::Exactly(NonZeroUsize::new(u.int_in_range(1..=4)?).unwrap_or(NonZeroUsize::MIN))
        })
    }

    fn op(u: &mut Unstructured<'_>) -> Result<Op<'static>> {
        let op = match u.int_in_range(0..=5)? {
            0 => Op::Write {
                path: path(u)?.into(),
                append: u.arbitrary()?,
                content: body(u, 0)?,
            },
            1 => Op::Edit {
                path: path(u)?.into(),
                count: count(u)?,
                matching: crate::syntax::Matching::default(),
                search: body(u, 1)?,
                replace: body(u, 0)?,
            },
            2 => {
                let start = body(u, 1)?;
                let start = Cow::Owned(start.strip_suffix('\n').unwrap_or(&start).to_owned());
                Op::EditRange {
                    path: path(u)?.into(),
                    count: count(u)?,
                    matching: crate::syntax::Matching::default(),
                    start,
                    end: body(u, 1)?,
                    replace: body(u, 0)?,
                }
            }
            3 => Op::Run {
                dir: if u.arbitrary()? {
                    Some(path(u)?.into())
                } else {
                    None
                },
                command: Cow::Borrowed("ls\n"),
            },
            4 => Op::Move {
                from: path(u)?.into(),
                to: path(u)?.into(),
            },
            _ => Op::Remove {
                path: path(u)?.into(),
            },
        };
        // What cannot be written becomes the simplest task that can.
        Ok(if is_writable(&op) {
            op
        } else {
            Op::Remove { path: "x".into() }
        })
    }

    impl<'a> Arbitrary<'a> for ModelTask {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(ModelTask {
                op: op(u)?,
                fence: u.int_in_range(MIN_FENCE..=MIN_FENCE + 3)?,
                quote: *u.choose(&[Quote::Double, Quote::Single, Quote::Bare])?,
                edit_alias: u.arbitrary()?,
            })
        }
    }

    impl<'a> Arbitrary<'a> for ModelUnit {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            Ok(if u.ratio(2, 3)? {
                ModelUnit::Task(u.arbitrary()?)
            } else {
                let n = u.int_in_range(0..=3)?;
                ModelUnit::Block(ModelBlock {
                    fence: u.int_in_range(MIN_FENCE..=MIN_FENCE + 2)?,
                    version: if u.arbitrary()? {
                        Some(*u.choose(&Version::ALL)?)
                    } else {
                        None
                    },
                    tasks: (0..n).map(|_| u.arbitrary()).collect::<Result<_>>()?,
                })
            })
        }
    }

    impl<'a> Arbitrary<'a> for Model {
        fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
            let n = u.int_in_range(1..=4)?;
            Ok(Model {
                units: (0..n).map(|_| u.arbitrary()).collect::<Result<_>>()?,
            })
        }
    }
}
