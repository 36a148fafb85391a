//! CML v1.0, the XML format clada descends from (PROTOCOL §11.3), read
//! with `quick-xml` into the same units.
//!
//! ~~~text
//! <tasks version="1.0">
//!   <write path="src/app.js"><![CDATA[console.log("hello");]]></write>
//!   <edit path="src/app.js">
//!     <search><![CDATA["hello"]]></search>
//!     <replace><![CDATA["world"]]></replace>
//!   </edit>
//!   <run>node src/app.js</run>
//! </tasks>
//! <remove path="temp/"/>
//! ~~~
//!
//! Elements are found among prose: each `<tasks>`, `<write>`, `<edit>`,
//! `<move>`, `<remove>` or `<run>` that starts an element is read to its
//! end by an XML reader; everything between elements is prose. Bodies are
//! the element's text and CDATA sections as written, entities decoded and
//! `]]&gt;` inside CDATA read as `]]>` (the CML escape): a body written as
//! one piece (one CDATA section, or text with no entity or CR) is borrowed
//! from the document, any other is owned.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::syntax::Attribute;
use crate::syntax::Span;
use crate::syntax::{Block, Count, Document, Matching, Op, Task, Unit};
use crate::syntax::{Context, ParseOptions};
use crate::syntax::{Diagnostic, DiagnosticKind as K};
use crate::syntax::{TaskKind, Version};

/// The elements a CML document is made of.
const UNITS: &[&str] = &["tasks", "write", "edit", "move", "remove", "run"];

/// Where `source` holds the start tag of a CML unit at `at` (`<write `,
/// `<tasks>`, `<remove/>`…), its name.
fn unit_at(source: &str, at: usize) -> Option<&'static str> {
    let rest = source.get(at + 1..)?;
    UNITS.iter().copied().find(|name| {
        rest.starts_with(name)
            && rest[name.len()..]
                .chars()
                .next()
                .is_some_and(|c| c == '>' || c == '/' || c.is_whitespace())
    })
}

/// Whether `line` holds the start tag of a CML unit (what a stream keeps
/// from, §11.5).
pub(crate) fn starts_unit(line: &str) -> bool {
    first_unit(line).is_some()
}

/// The first start tag of a CML unit in `line`: its name, and where it is.
pub(crate) fn first_unit(line: &str) -> Option<(&'static str, usize)> {
    line.match_indices('<')
        .find_map(|(at, _)| unit_at(line, at).map(|name| (name, at)))
}

/// Whether `source` holds a CML element (for `--dialect auto`): a `<tasks>`
/// or a task element with the attribute it needs.
pub(crate) fn has_elements(source: &str) -> bool {
    [
        "<tasks>",
        "<tasks ",
        "<write path=",
        "<edit path=",
        "<move from=",
        "<remove path=",
        "<run>",
        "<run dir=",
    ]
    .iter()
    .any(|p| source.contains(p))
}

/// An element as read: name, attributes (name, value, span of the value),
/// children, text, and where it is. Everything borrows from the document
/// where it is one slice of it: a name, a value without entities, a text
/// of one piece (one CDATA section, or text without entities).
#[derive(Debug, Default)]
struct Element<'a> {
    name: &'a str,
    attrs: Vec<(Cow<'a, str>, Cow<'a, str>, Span)>,
    children: Vec<Element<'a>>,
    text: Cow<'a, str>,
    /// Whether any text or CDATA was inside (not counting children).
    has_text: bool,
    span: Span,
    /// The start tag.
    tag: Span,
}

impl<'a> Element<'a> {
    fn attr(&self, name: &str) -> Option<&(Cow<'a, str>, Cow<'a, str>, Span)> {
        self.attrs.iter().find(|a| a.0 == name)
    }

    /// Appends a piece of text: the first piece is kept as it is (borrowed
    /// when it is a slice of the document), later ones are copied after it.
    fn push(&mut self, piece: Cow<'a, str>) {
        if self.text.is_empty() {
            self.text = piece;
        } else {
            self.text.to_mut().push_str(&piece);
        }
    }
}

/// `part` as the slice of `source` it is (found by address: the reader
/// lends slices of the document), or a copy when it is not one.
fn within<'a>(source: &'a str, part: &str) -> Cow<'a, str> {
    offset(source, part)
        .and_then(|start| source.get(start..start + part.len()))
        .map_or_else(|| Cow::Owned(part.to_owned()), Cow::Borrowed)
}

/// Where `part` starts in `source`, when it is a slice of it.
fn offset(source: &str, part: &str) -> Option<usize> {
    let (base, at) = (source.as_ptr() as usize, part.as_ptr() as usize);
    at.checked_sub(base)
        .filter(|start| start + part.len() <= source.len())
}

/// Whether the name is of an element whose own text is never read (only
/// whether it has any): its text need not be kept.
fn ignores_text(name: &str) -> bool {
    matches!(name, "tasks" | "edit" | "move" | "remove")
}

/// Reads one element starting at `at`; on failure, the diagnostic.
#[allow(clippy::result_large_err)] // one per malformed element, on the way out
/// `stack` is scratch space, lent so that it is allocated once per document.
fn element<'a>(
    source: &'a str,
    at: usize,
    stack: &mut Vec<Element<'a>>,
) -> Result<Element<'a>, Diagnostic> {
    let mut reader = Reader::from_str(&source[at..]);
    stack.clear();
    loop {
        let before = at + reader.buffer_position() as usize;
        let event = reader.read_event().map_err(|e| {
            let offset = at + reader.error_position() as usize;
            Diagnostic::new(
                K::MalformedMarker,
                Span::new(offset.min(source.len()), offset.min(source.len())),
                format!("malformed XML: {e}"),
            )
            .with_help("CML elements are XML: close every element, quote attribute values, and put text with `<` or `&` in `<![CDATA[…]]>`")
        })?;
        let after = at + reader.buffer_position() as usize;
        let span = Span::new(before, after);
        match event {
            Event::Start(e) => stack.push(open(source, &e, span)),
            Event::Empty(e) => {
                let el = open(source, &e, span);
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::End(_) => {
                let Some(mut el) = stack.pop() else {
                    return Err(Diagnostic::new(
                        K::MalformedMarker,
                        span,
                        "a closing tag without its element",
                    ));
                };
                el.span = Span::new(el.span.start, after);
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::Text(t) => {
                if let Some(el) = stack.last_mut() {
                    el.has_text |= !t.trim().is_empty();
                    let raw = t.into_inner();
                    if ignores_text(el.name) {
                        // Only whether there is text matters.
                    } else if memchr::memchr(b'\r', raw.as_bytes()).is_some() {
                        el.push(Cow::Owned(raw.replace("\r\n", "\n")));
                    } else {
                        el.push(raw);
                    }
                }
            }
            Event::CData(t) => {
                if let Some(el) = stack.last_mut() {
                    let raw = t.into_inner();
                    if memchr::memchr2(b'\r', b'&', raw.as_bytes()).is_some()
                        && (raw.contains('\r') || raw.contains("]]&gt;"))
                    {
                        el.push(Cow::Owned(
                            raw.replace("]]&gt;", "]]>").replace("\r\n", "\n"),
                        ));
                    } else {
                        el.push(raw);
                    }
                    el.has_text = true;
                }
            }
            Event::GeneralRef(r) => {
                if let Some(el) = stack.last_mut() {
                    let name: &str = &r;
                    let c = match name {
                        "lt" => Some('<'),
                        "gt" => Some('>'),
                        "amp" => Some('&'),
                        "quot" => Some('"'),
                        "apos" => Some('\''),
                        _ => r.resolve_char_ref().ok().flatten(),
                    };
                    match c {
                        Some(c) => el.text.to_mut().push(c),
                        None => {
                            return Err(Diagnostic::new(
                                K::MalformedMarker,
                                span,
                                format!("unknown entity `&{name};`"),
                            )
                            .with_help("use `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;` or a character reference, or CDATA"));
                        }
                    }
                    el.has_text = true;
                }
            }
            Event::Eof => {
                let open = stack.first().map_or(Span::empty(at), |e| e.tag);
                return Err(Diagnostic::new(
                    K::UnclosedOpener,
                    open,
                    format!(
                        "`<{}>` is never closed",
                        stack.last().map_or("?", |e| e.name)
                    ),
                )
                .with_help("close it with its end tag, or write it as an empty element `<…/>`"));
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
}

fn open<'a>(source: &'a str, e: &BytesStart<'_>, span: Span) -> Element<'a> {
    let tag = source.get(span.range()).unwrap_or_default();
    // The tag is `<` and the name: borrow the name from the document.
    let name_len = e.name().as_ref().len();
    let name = tag
        .get(1..1 + name_len)
        .filter(|n| *n == e.name().as_ref())
        .unwrap_or_default();
    let attrs = e
        .attributes()
        .flatten()
        .map(|a| {
            let key = within(source, a.key.as_ref());
            let value = match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                Ok(Cow::Borrowed(v)) => within(source, v),
                Ok(Cow::Owned(v)) => Cow::Owned(v),
                Err(_) => within(source, &a.value),
            };
            // The value's place in the document, for positions: by address
            // (the reader lends slices of it), else found in the tag.
            let raw: &str = &a.value;
            let at = offset(source, raw)
                .filter(|&v| span.start <= v && v + raw.len() <= span.end)
                .map(|v| v - span.start)
                .or_else(|| {
                    tag.find(&*key)
                        .and_then(|k| tag[k..].find(raw).map(|v| k + v))
                })
                .map_or(span, |v| {
                    Span::new(span.start + v, span.start + v + raw.len())
                });
            (key, value, at)
        })
        .collect();
    Element {
        name,
        attrs,
        children: Vec::new(),
        text: Cow::Borrowed(""),
        has_text: false,
        span,
        tag: span,
    }
}

/// Reads `source` as CML: elements among prose.
pub(crate) fn parse(source: &str, options: ParseOptions) -> Document<'_> {
    let cx = Context::new(source, options);
    let mut units = Vec::new();
    let mut diagnostics = Vec::new();
    let mut at = 0;
    let mut stack = Vec::new();
    while let Some(i) = memchr::memchr(b'<', &source.as_bytes()[at..]).map(|i| at + i) {
        let Some(name) = unit_at(source, i) else {
            at = i + 1;
            continue;
        };
        match element(source, i, &mut stack) {
            Ok(el) => {
                at = el.span.end.max(i + 1);
                if name == "tasks" {
                    units.push(block(&cx, el, &mut diagnostics));
                } else {
                    units.push(Unit::Task(task(&cx, el, None, &mut diagnostics)));
                }
            }
            Err(d) => {
                diagnostics.push(d);
                at = i + 1;
            }
        }
    }
    super::codex::number(&mut units, &mut diagnostics);
    if units.is_empty() && !diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.push(
            Diagnostic::new(K::NoTasks, Span::empty(0), "the document has no CML element")
                .with_help("CML elements are `<tasks>`, `<write path=…>`, `<edit path=…>`, `<move from=… to=…/>`, `<remove path=…/>` and `<run>`"),
        );
    }
    crate::syntax::sort_in_document_order(&mut diagnostics);
    Document {
        source,
        units,
        diagnostics,
    }
}

fn block<'a>(cx: &Context<'a>, el: Element<'a>, out: &mut Vec<Diagnostic>) -> Unit<'a> {
    let version = match el.attr("version") {
        None => None,
        Some((_, v, span)) => match Version::ALL.into_iter().find(|x| x.as_str() == v) {
            Some(x) => Some(x),
            None => {
                out.push(
                    Diagnostic::new(
                        K::UnsupportedVersion,
                        *span,
                        format!("version `{v}` is not supported"),
                    )
                    .with_help("use version=\"1.0\", or leave version out"),
                );
                None
            }
        },
    };
    let versioned = el.attr("version").is_some();
    let mut tasks = Vec::new();
    for child in el.children {
        if UNITS[1..].contains(&child.name) {
            super::push_tight(&mut tasks, task(cx, child, Some(versioned), out));
        } else if versioned {
            out.push(Diagnostic::new(
                K::SkippedUnknownKeyword,
                child.tag,
                format!(
                    "unknown element `<{}>` in a versioned block: passed over",
                    child.name
                ),
            ));
        } else {
            out.push(
                Diagnostic::new(
                    K::UnknownKeyword,
                    child.tag,
                    format!("unknown element `<{}>`", child.name),
                )
                .with_help(
                    "a `<tasks>` block holds `<write>`, `<edit>`, `<move>`, `<remove>` and `<run>`",
                ),
            );
        }
    }
    if el.has_text {
        out.push(
            Diagnostic::new(
                K::UnexpectedBody,
                el.tag,
                "a `<tasks>` block holds elements, not text",
            )
            .with_help("put text inside a `<write>`, `<edit>` or `<run>`"),
        );
    }
    // What the list did not fill is given back.
    tasks.shrink_to_fit();
    Unit::Block(Block {
        number: 0,
        span: el.span,
        opener: el.tag,
        fence: crate::syntax::MIN_FENCE,
        attributes: Vec::new(),
        version,
        tasks,
        closer: None,
        rules: Default::default(),
    })
}

/// A task element; `in_block` is whether it is in a versioned block
/// (`Some(true)`), an unversioned one, or none.
fn task<'a>(
    cx: &Context<'a>,
    mut el: Element<'a>,
    _in_block: Option<bool>,
    out: &mut Vec<Diagnostic>,
) -> Task<'a> {
    let before = out.iter().filter(|d| d.is_error()).count();
    let (kind, names): (TaskKind, &[&'static str]) = match el.name {
        "write" => (TaskKind::Write, &["path"]),
        "edit" if el.children.iter().any(|c| c.name == "search-start") => {
            (TaskKind::SearchStart, &["path"])
        }
        "edit" => (TaskKind::Search, &["path"]),
        "move" => (TaskKind::Move, &["from", "to"]),
        "remove" => (TaskKind::Remove, &["path"]),
        _ => (TaskKind::Run, &["dir"]),
    };
    let mut attributes = Vec::new();
    for (key, _, span) in &el.attrs {
        if !names.contains(&&**key) {
            out.push(
                Diagnostic::new(
                    K::UnknownAttribute,
                    *span,
                    format!("`<{}>` has no attribute `{key}`", el.name),
                )
                .with_help(format!(
                    "`<{}>` takes {}",
                    el.name,
                    crate::syntax::quoted_list(names)
                )),
            );
        }
    }
    let mut places: Vec<(&str, Option<crate::syntax::Location>)> = Vec::new();
    for &name in names {
        match el.attr(name) {
            Some((_, value, span)) => {
                let a = Attribute::implied(name, value.clone(), *span);
                places.push((name, crate::syntax::check_path_attribute(cx, &a, out)));
                attributes.push(a);
            }
            None if name == "dir" => {}
            None => out.push(
                Diagnostic::new(
                    K::MissingAttribute,
                    el.tag,
                    format!("`<{}>` needs a `{name}` attribute", el.name),
                )
                .with_help(format!("add `{name}=\"…\"` to the start tag")),
            ),
        }
    }
    // Bodies are moved out of the element, never copied.
    let mut children = std::mem::take(&mut el.children);
    let text = std::mem::take(&mut el.text);
    let value = |name: &str| {
        let place = places
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, p)| p.clone());
        el.attr(name)
            .map(|a| crate::syntax::TaskPath::resolved(a.1.clone(), place))
    };
    let mut child = |name: &str| {
        children
            .iter_mut()
            .find(|c| c.name == name)
            .map(|c| std::mem::take(&mut c.text))
    };
    let op = match kind {
        TaskKind::Write => value("path").map(|path| Op::Write {
            path,
            append: false,
            content: text,
        }),
        TaskKind::Search | TaskKind::Edit => {
            let search = child("search").unwrap_or_default();
            if search.is_empty() {
                out.push(
                    Diagnostic::new(K::EmptySearch, el.tag, "an `<edit>` needs a non-empty `<search>`")
                        .with_help("put the exact text to find in `<search>`, and its replacement in `<replace>`"),
                );
            }
            value("path").map(|path| Op::Edit {
                path,
                count: Count::default(),
                matching: Matching::default(),
                search,
                replace: child("replace").unwrap_or_default(),
            })
        }
        TaskKind::SearchStart => {
            let (start, end) = (
                child("search-start").unwrap_or_default(),
                child("search-end").unwrap_or_default(),
            );
            if start.is_empty() || end.is_empty() {
                out.push(
                    Diagnostic::new(
                        K::EmptyRangeStart,
                        el.tag,
                        "a range `<edit>` needs a non-empty `<search-start>` and `<search-end>`",
                    )
                    .with_help("name the first and the last text of the region to replace"),
                );
            }
            value("path").map(|path| Op::EditRange {
                path,
                count: Count::default(),
                matching: Matching::default(),
                start,
                end,
                replace: child("replace").unwrap_or_default(),
            })
        }
        TaskKind::Move => match (value("from"), value("to")) {
            (Some(from), Some(to)) => Some(Op::Move { from, to }),
            _ => None,
        },
        TaskKind::Remove => value("path").map(|path| Op::Remove { path }),
        TaskKind::Run => {
            let command = match text {
                Cow::Borrowed(t) => Cow::Borrowed(t.trim()),
                Cow::Owned(t) => Cow::Owned(t.trim().to_owned()),
            };
            if command.is_empty() {
                out.push(Diagnostic::new(
                    K::EmptyCommand,
                    el.tag,
                    "a `<run>` needs a command",
                ));
            }
            Some(Op::Run {
                dir: value("dir"),
                command,
            })
        }
    };
    if matches!(kind, TaskKind::Move | TaskKind::Remove) && el.has_text {
        out.push(Diagnostic::new(
            K::UnexpectedBody,
            el.tag,
            format!("`<{}>` takes no text", el.name),
        ));
    }
    let ok = out.iter().filter(|d| d.is_error()).count() == before;
    Task {
        number: 0,
        block: 0,
        kind,
        fence: crate::syntax::MIN_FENCE,
        span: el.span,
        opener: el.tag,
        attributes,
        sections: Vec::new(),
        closer: None,
        op: if ok { op } else { None },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> Document<'_> {
        parse(src, ParseOptions::default())
    }

    #[test]
    fn one_piece_bodies_are_borrowed_and_decoded_ones_owned() {
        let src = "<edit path=\"a\">\n<search><![CDATA[x]]></search>\n<replace>y &amp; z</replace>\n</edit>\n<write path=\"b\"><![CDATA[w]]><![CDATA[v]]></write>\n";
        let doc = read(src);
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.as_ref()).collect();
        let Op::Edit {
            path,
            search,
            replace,
            ..
        } = ops[0]
        else {
            panic!("{ops:?}")
        };
        assert!(matches!(path.written(), Cow::Borrowed("a")), "{path:?}");
        assert!(matches!(search, Cow::Borrowed("x")), "{search:?}");
        assert!(
            matches!(replace, Cow::Owned(r) if r == "y & z"),
            "{replace:?}"
        );
        let Op::Write { content, .. } = ops[1] else {
            panic!("{ops:?}")
        };
        assert!(matches!(content, Cow::Owned(c) if c == "wv"), "{content:?}");
    }

    #[test]
    fn an_attribute_span_is_where_its_value_is_written() {
        let src = "<move from=\"to=x\" to=\"x\"/>";
        let doc = read(src);
        let spans: Vec<(&str, usize)> = doc
            .tasks()
            .flat_map(|t| &t.attributes)
            .map(|a| (&src[a.span.range()], a.span.start))
            .collect();
        assert_eq!(spans, [("to=x", 12), ("x", 22)]);
    }

    #[test]
    fn the_protocol_example_reads_as_units() {
        let src = "<!-- Block 1 -->\n<tasks version=\"1.0\">\n  <write path=\"src/app.js\"><![CDATA[console.log(\"hello\");]]></write>\n  <edit path=\"src/app.js\">\n    <search><![CDATA[\"hello\"]]></search>\n    <replace><![CDATA[\"world\"]]></replace>\n  </edit>\n  <run><![CDATA[node src/app.js]]></run>\n</tasks>\n\nThen: <remove path=\"temp/\"/>\n";
        let doc = read(src);
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        assert_eq!(doc.units.len(), 2);
        let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.clone()).collect();
        assert_eq!(
            ops,
            vec![
                Op::Write {
                    path: "src/app.js".into(),
                    append: false,
                    content: "console.log(\"hello\");".into()
                },
                Op::Edit {
                    path: "src/app.js".into(),
                    count: Count::default(),
                    matching: Matching::default(),
                    search: "\"hello\"".into(),
                    replace: "\"world\"".into()
                },
                Op::Run {
                    dir: None,
                    command: "node src/app.js".into()
                },
                Op::Remove {
                    path: "temp/".into()
                },
            ]
        );
    }

    #[test]
    fn entities_cdata_escape_and_ranges() {
        let src = "<edit path=\"a\"><search-start>a &lt; b</search-start><search-end><![CDATA[x ]]&gt; y]]></search-end><replace>z</replace></edit>";
        let doc = read(src);
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        assert_eq!(
            doc.tasks().next().and_then(|t| t.op.clone()),
            Some(Op::EditRange {
                path: "a".into(),
                count: Count::default(),
                matching: Matching::default(),
                start: "a < b".into(),
                end: "x ]]> y".into(),
                replace: "z".into()
            })
        );
    }

    #[test]
    fn malformed_xml_and_refused_paths_are_diagnosed() {
        let doc = read("<write path=\"a\">unclosed");
        assert_eq!(doc.diagnostics[0].kind, K::UnclosedOpener);
        let doc = read(
            "<remove path=\"/etc/passwd\"/>\n<run dir=\"/app\">ls</run>\n<write path=\"a\" mode=\"x\">y</write>",
        );
        let kinds: Vec<K> = doc.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(
            kinds,
            vec![K::PathEscape, K::PathEscape, K::UnknownAttribute]
        );
        assert!(doc.tasks().all(|t| t.op.is_none()));
        let doc = read("<tasks version=\"9\"><remove path=\"a\"/></tasks>");
        assert!(doc.has_errors());
    }

    #[test]
    fn a_path_too_deep_is_refused_with_the_limit_and_the_count() {
        let deep = "d/".repeat(1024) + "f";
        let src = format!(
            "<write path=\"{deep}\">x</write>\n<move from=\"a\" to=\"{deep}\"/>\n<run dir=\"{deep}\">ls</run>"
        );
        let doc = read(&src);
        let kinds: Vec<K> = doc.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, vec![K::PathEscape; 3]);
        assert!(doc.diagnostics[0].message.contains("1025 components"));
        assert!(doc.tasks().all(|t| t.op.is_none()));
    }
}
