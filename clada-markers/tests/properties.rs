//! Property tests: the parser never panics and keeps its spans in bounds,
//! printing then parsing gives the same operations back, and lexing in
//! chunks changes nothing.

use std::borrow::Cow;
use std::num::NonZeroUsize;

use clada_markers::engine::matching;
use clada_markers::{
    Attribute, Block, Count, Lexer, Op, Quote, Span, Task, TaskKind, Unit, Version, lex, parse,
    print,
};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use crate::common::check_invariants;

/// Lines that stress the grammar: marker runs of every nearby length with
/// every keyword, attributes, prose, white space and odd characters.
fn line() -> impl Strategy<Value = String> {
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

fn document() -> impl Strategy<Value = String> {
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

// ---------------------------------------------------------------- generated ASTs

fn body_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => line(),
        1 => "[a-z ]{0,12}",
    ]
}

/// A body: whole lines, each ending in a line feed (some with a CR before
/// it, which the printer must protect).
fn body(min_lines: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(body_line(), min_lines..6)
        .prop_map(|lines| lines.iter().map(|l| format!("{l}\n")).collect::<String>())
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec("[a-zA-Z0-9 _'\"=é-]{1,6}", 1..4)
        .prop_map(|parts| parts.join("/"))
        .prop_filter("a relative path below the root", |p| {
            clada_markers::normalize_path(p).is_ok_and(|c| !c.is_empty())
                && p.as_bytes().get(1).is_none_or(|&b| b != b':')
        })
}

fn count() -> impl Strategy<Value = Count> {
    prop_oneof![
        Just(Count::All),
        (1usize..5).prop_map(|n| Count::Exactly(NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN))),
    ]
}

fn op() -> impl Strategy<Value = Op<'static>> {
    let c = |s: String| Cow::Owned(s);
    prop_oneof![
        (path(), any::<bool>(), body(0)).prop_map(move |(p, append, content)| Op::Write {
            path: c(p),
            append,
            content: c(content)
        }),
        (path(), count(), body(1), body(0)).prop_map(move |(p, count, search, replace)| Op::Edit {
            path: c(p),
            count,
            search: c(search),
            replace: c(replace)
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
                    path: c(p),
                    count,
                    start: c(start),
                    end: c(end),
                    replace: c(replace),
                }
            }
        ),
        (prop::option::of(path()), body(0)).prop_map(move |(dir, command)| Op::Run {
            dir: dir.map(c),
            command: c(command)
        }),
        (path(), path()).prop_map(move |(from, to)| Op::Move {
            from: c(from),
            to: c(to)
        }),
        path().prop_map(move |p| Op::Remove { path: c(p) }),
    ]
    .prop_filter("the start text of a range is never empty", |op| match op {
        Op::EditRange { start, end, .. } => {
            !start.is_empty() && !end.is_empty() && !start.ends_with('\r')
        }
        Op::Edit { search, .. } => !search.is_empty(),
        Op::Run { command, .. } => !command.trim().is_empty(),
        _ => true,
    })
}

fn quote() -> impl Strategy<Value = Quote> {
    prop::sample::select(vec![Quote::Double, Quote::Single, Quote::Bare])
}

fn task() -> impl Strategy<Value = Task<'static>> {
    (op(), 7usize..11, quote(), any::<bool>()).prop_map(|(op, fence, quote, edit_alias)| {
        let kind = match &op {
            Op::Write { .. } => TaskKind::Write,
            Op::Edit { .. } if edit_alias => TaskKind::Edit,
            Op::Edit { .. } => TaskKind::Search,
            Op::EditRange { .. } => TaskKind::SearchStart,
            Op::Run { .. } => TaskKind::Run,
            Op::Move { .. } => TaskKind::Move,
            Op::Remove { .. } => TaskKind::Remove,
        };
        let names: &[&'static str] = match &op {
            Op::Move { .. } => &["from", "to"],
            Op::Run { .. } => &["dir"],
            _ => &["path", "count", "append"],
        };
        Task {
            number: 0,
            block: 0,
            kind,
            fence,
            span: Span::default(),
            opener: Span::default(),
            attributes: names.iter().map(|n| attribute(n, quote)).collect(),
            sections: Vec::new(),
            closer: None,
            op: Some(op),
        }
    })
}

/// An attribute that only carries a quoting preference for the printer.
fn attribute(name: &'static str, quote: Quote) -> Attribute<'static> {
    Attribute {
        name,
        value: Cow::Borrowed(""),
        quote,
        span: Span::default(),
        name_span: Span::default(),
        value_span: Span::default(),
    }
}

fn unit() -> impl Strategy<Value = Unit<'static>> {
    prop_oneof![
        task().prop_map(Unit::Task),
        (
            prop::collection::vec(task(), 0..4),
            prop::option::of(prop::sample::select(Version::ALL.to_vec())),
            7usize..10,
        )
            .prop_map(|(tasks, version, fence)| Unit::Block(Block {
                number: 0,
                span: Span::default(),
                opener: Span::default(),
                fence,
                attributes: Vec::new(),
                version,
                tasks,
                closer: None,
            })),
    ]
}

fn values_of<'a>(task: &'a Task<'a>) -> Option<Vec<&'a str>> {
    Some(match task.op.as_ref()? {
        Op::Write { path, .. }
        | Op::Edit { path, .. }
        | Op::EditRange { path, .. }
        | Op::Remove { path } => vec![path],
        Op::Move { from, to } => vec![from, to],
        Op::Run { dir, .. } => dir.iter().map(|d| d.as_ref()).collect(),
    })
}

/// A text file: lines from a small alphabet (so that text repeats), one
/// line break style throughout, maybe a byte-order mark, maybe no final
/// line feed. Returns the file and its text as matching sees it (LF breaks,
/// no mark, a final line feed).
fn text_file() -> impl Strategy<Value = (String, String)> {
    (
        prop::collection::vec("[ab é\t]{0,5}", 1..12),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf, bom, final_break)| {
            let br = if crlf { "\r\n" } else { "\n" };
            let mut file = String::new();
            if bom {
                file.push('\u{feff}');
            }
            file.push_str(&lines.join(br));
            if final_break {
                file.push_str(br);
            }
            let mut seen = file.trim_start_matches('\u{feff}').replace("\r\n", "\n");
            if !seen.is_empty() && !seen.ends_with('\n') {
                seen.push('\n');
            }
            (file, seen)
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/properties.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn never_panics_and_keeps_spans_in_bounds(src in document()) {
        let doc = parse(&src);
        check_invariants(&src, &doc);
    }

    #[test]
    fn never_panics_on_arbitrary_text(src in any::<String>()) {
        let doc = parse(&src);
        check_invariants(&src, &doc);
    }

    #[test]
    fn printing_then_parsing_gives_the_same_units(units in prop::collection::vec(unit(), 1..5)) {
        let printed = print(&units).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let doc = parse(&printed);
        prop_assert!(!doc.has_errors(), "{printed}\n{:#?}", doc.diagnostics);
        prop_assert_eq!(doc.units.len(), units.len(), "{}", printed);
        for (got, want) in doc.units.iter().zip(&units) {
            prop_assert_eq!(got.is_block(), want.is_block());
            if let (Unit::Block(g), Unit::Block(w)) = (got, want) {
                prop_assert_eq!(g.version, w.version);
                prop_assert_eq!(g.fence, w.fence);
            }
            prop_assert_eq!(got.tasks().len(), want.tasks().len());
            for (g, w) in got.tasks().iter().zip(want.tasks()) {
                prop_assert_eq!(g.kind, w.kind);
                prop_assert_eq!(&g.op, &w.op, "{}", printed);
                // The printer lengthens a fence only when a body needs it.
                prop_assert!(g.fence >= w.fence);
                // Quoting is kept where the value allows it.
                let want_quote = w.attributes.first().map_or(Quote::Double, |a| a.quote);
                for (a, value) in g.attributes.iter().zip(values_of(g).unwrap_or_default()) {
                    let representable = match want_quote {
                        Quote::Double => true,
                        Quote::Single => !value.contains('\''),
                        Quote::Bare => !value.contains([' ', '\t', '"', '\'']) && !value.is_empty(),
                    };
                    if representable {
                        prop_assert_eq!(a.quote, want_quote, "{}", printed);
                    }
                }
            }
        }
        // Printing is canonical: printing the parsed units again changes nothing.
        prop_assert_eq!(print(&doc.units).ok(), Some(printed));
    }

    #[test]
    fn lexing_in_chunks_changes_nothing(src in document(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12)) {
        // Cut points on character boundaries, from 0 to the end.
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(src.len() + 1)).collect();
        points.extend([0, src.len()]);
        for p in &mut points {
            while !src.is_char_boundary(*p) { *p -= 1; }
        }
        points.sort_unstable();
        points.dedup();
        let mut lexer = Lexer::new();
        let mut tokens = Vec::new();
        for w in points.windows(2) {
            lexer.feed(&src[w[0]..w[1]], &mut tokens);
        }
        lexer.finish(&mut tokens);
        prop_assert_eq!(tokens, lex(&src));
    }

    #[test]
    fn an_edit_and_its_inverse_give_back_the_original_bytes(
        (file, seen) in text_file(),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
    ) {
        // A search text taken from the file, occurring exactly once.
        let chars: Vec<(usize, char)> = seen.char_indices().collect();
        prop_assume!(!chars.is_empty());
        let (i, j) = (a.index(chars.len()), b.index(chars.len()));
        let (i, j) = (i.min(j), i.max(j) + 1);
        let start = chars[i].0;
        let end = chars.get(j).map_or(seen.len(), |c| c.0);
        let search = &seen[start..end];
        prop_assume!(seen.matches(search).count() == 1);
        // A replacement that is surely unique, ending like the search text
        // and keeping a line break if the search text had one (else the
        // file's line break style may go with it).
        let inner = if search.contains('\n') { "\n" } else { "" };
        let last = if search.ends_with('\n') { "\n" } else { "" };
        let replace = &format!("«{inner}X»{last}");

        let one = Count::default();
        let edited = matching::edit(&file, search, replace, one).map_err(|m| TestCaseError::fail(format!("{m:?}")))?;
        prop_assert_eq!(edited.replacements, 1);
        let back = matching::edit(&edited.text, replace, search, one).map_err(|m| TestCaseError::fail(format!("{m:?}")))?;
        prop_assert_eq!(back.text, file);
    }
}
