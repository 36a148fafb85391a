//! Cline's and Roo's SEARCH/REPLACE blocks (`--dialect cline`, PROTOCOL
//! §11.9), read as clada tasks.
//!
//! ~~~text
//! <replace_in_file>
//! <path>src/app.py</path>
//! <diff>
//! ------- SEARCH
//!     print("Hi")
//! =======
//!     print("Hello")
//! +++++++ REPLACE
//! </diff>
//! </replace_in_file>
//! ~~~
//!
//! Cline writes `------- SEARCH` / `=======` / `+++++++ REPLACE` inside a
//! `replace_in_file` call; Roo writes `<<<<<<< SEARCH`, an optional
//! `:start_line:N` (and `:end_line:N`) and `-------`, then `=======` and
//! `>>>>>>> REPLACE`, inside an `apply_diff` call (`<path>` and `<diff>`, or
//! `<args><file><path>…<diff><content>…`). A block's file is the `<path>` of
//! its call, or, outside any call, a file-name line above it (found as
//! aider's is), carried over to the blocks after it. A `write_to_file`
//! call (either tool's) is a WRITE of its `<content>` to its `<path>`.
//!
//! What each tool's own parser accepts for structure is accepted: Cline's
//! markers of three or more characters, `<<<<<<<` and `>>>>>>>` for its
//! legacy ones, a missing `+++++++ REPLACE` at the end of a `<diff>`; Roo's
//! escaped markers (`\=======`) in bodies. Matching is clada's SEARCH of
//! whole lines: found once, as written or by the white-space tier; Roo's
//! `:start_line:` is the edit's line hint. Line numbers copied from Roo's
//! `read_file` (`12 | `) before every line of a side are taken off, as Roo
//! takes them off, with a warning, unless the file holds the lines as
//! written; the SEARCH's first number is then the hint. A
//! `replace_in_file` call applies all its blocks or none, as Cline writes
//! a file only when every block matched; an empty SEARCH
//! there fills a new or empty file. Roo applies each block that matches:
//! each is a unit of its own. Nothing here reads the file system.

use super::lines::{Line, lines_in};
use std::borrow::Cow;
use std::num::NonZeroUsize;

use crate::syntax::Attribute;
use crate::syntax::Location;
use crate::syntax::Span;
use crate::syntax::TaskKind;
use crate::syntax::{Block, BlockRules, Count, Document, Matching, Op, Policy, Task, Unit};
use crate::syntax::{Context, ParseOptions};
use crate::syntax::{Diagnostic, DiagnosticKind as K};

/// Cline's file-editing call.
const CLINE_CALL: &str = "replace_in_file";
/// Roo's.
const ROO_CALL: &str = "apply_diff";
/// Cline's and Roo's call that writes a whole file: `<path>` and
/// `<content>` (Roo's `<line_count>` beside them is passed over).
const WRITE_CALL: &str = "write_to_file";
/// What Roo's markers in a body are escaped as: a backslash before them.
const ESCAPED: [&str; 6] = [
    "\\<<<<<<<",
    "\\=======",
    "\\>>>>>>>",
    "\\-------",
    "\\:start_line:",
    "\\:end_line:",
];

/// Whose rules a stretch of text is read by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Inside `replace_in_file`: Cline's markers, as Cline matches them
    /// (the whole line, three or more characters).
    Cline,
    /// Inside `apply_diff`: Roo's markers (`<<<<<<< SEARCH`, `:start_line:`,
    /// `-------`, `=======`, `>>>>>>> REPLACE`, white space after them).
    Roo,
    /// Outside any call: either tool's markers.
    Free,
}

/// `run` of at least `min` `c`, then exactly `rest` (and maybe `>`).
fn marker(t: &str, c: char, min: usize, rest: &str) -> bool {
    let n = t.chars().take_while(|&x| x == c).count();
    n >= min && matches!(t[n..].strip_suffix('>').unwrap_or(&t[n..]), r if r == rest)
}

/// Whether `line` starts a block outside any call (either tool's
/// markers).
pub(crate) fn is_free_start(line: &str) -> bool {
    is_start(line, Mode::Free)
}

/// Whether `line` ends a block outside any call.
pub(crate) fn is_free_end(line: &str) -> bool {
    is_end(line, Mode::Free)
}

fn is_start(line: &str, mode: Mode) -> bool {
    let cline = marker(line, '-', 3, " SEARCH") || marker(line, '<', 3, " SEARCH");
    let roo = matches!(line.trim_end(), "<<<<<<< SEARCH" | "<<<<<<< SEARCH>");
    match mode {
        Mode::Cline => cline,
        Mode::Roo => roo,
        Mode::Free => cline || roo,
    }
}

fn is_separator(line: &str, mode: Mode) -> bool {
    let cline = !line.is_empty() && line.bytes().all(|b| b == b'=') && line.len() >= 3;
    let roo = line.trim_end() == "=======";
    match mode {
        Mode::Cline => cline,
        Mode::Roo => roo,
        Mode::Free => cline || roo,
    }
}

fn is_end(line: &str, mode: Mode) -> bool {
    let cline = marker(line, '+', 3, " REPLACE") || marker(line, '>', 3, " REPLACE");
    let roo = matches!(line.trim_end(), ">>>>>>> REPLACE" | ">>>>>>> REPLACE>");
    match mode {
        Mode::Cline => cline,
        Mode::Roo => roo,
        Mode::Free => cline || roo,
    }
}

/// Whether `line` shows Cline's or Roo's blocks (what `auto` looks for): a
/// `------- SEARCH` line, a `replace_in_file`, `apply_diff` or
/// `write_to_file` call, or
/// Roo's `:start_line:` after a SEARCH line.
pub(crate) fn shows_blocks(before: &str, line: &str) -> bool {
    marker(line, '-', 3, " SEARCH")
        || line.contains("<replace_in_file>")
        || line.contains("<apply_diff>")
        || line.contains("<write_to_file>")
        || (line.starts_with(":start_line:") && is_start(before, Mode::Roo))
}

/// A block as read: where it is, its texts, and the line Roo says it
/// starts at.
#[derive(Debug)]
struct Read {
    span: Span,
    opener: Span,
    closer: Option<Span>,
    search: Span,
    replace: Span,
    old: String,
    new: String,
    /// `:start_line:N` (or the `<start_line>` of its `<diff>`): what
    /// chooses between equal candidates (the line hint of an edit,
    /// PROTOCOL §3), never where the block is looked for.
    line: Option<usize>,
    /// The search and replacement as written, when line numbers were
    /// taken off either.
    written: Option<(String, String)>,
}

/// A body's lines joined, each with its line break, Roo's escapes undone,
/// then (`numbered`) the line number before each line taken off.
fn body(lines: &[Line<'_>], mode: Mode, numbered: bool) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.text.len() + 1).sum());
    for l in lines {
        let t = l.text;
        let escaped = mode != Mode::Cline && ESCAPED.iter().any(|e| t.starts_with(e));
        let t = if escaped { &t[1..] } else { t };
        let t = match line_number(t) {
            Some((_, at)) if numbered => &t[at..],
            _ => t,
        };
        out.push_str(t);
        out.push('\n');
    }
    out
}

/// The line number before `line` as Roo's `read_file` writes it (`12 |
/// text`: white space, digits, white space, one `|` not followed by
/// another, and one space or tab), and where the text after it starts;
/// what Roo's `stripLineNumbers` takes off.
fn line_number(line: &str) -> Option<(usize, usize)> {
    let s = line.trim_start();
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &s[digits..];
    let after = rest.trim_start();
    if digits == 0 || after.len() == rest.len() {
        return None;
    }
    let after = after.strip_prefix('|')?;
    if after.starts_with('|') {
        return None;
    }
    let text = after
        .strip_prefix(' ')
        .or_else(|| after.strip_prefix('\t'))
        .unwrap_or(after);
    let number = s[..digits].parse().ok()?;
    Some((number, line.len() - text.len()))
}

/// The first line number of `lines` when every line of them that is not
/// blank starts with one (and one does), as Roo's `read_file` shows a
/// file: Roo takes them off before matching.
fn numbered(lines: &[Line<'_>]) -> Option<usize> {
    let mut first = None;
    for l in lines {
        if l.text.trim().is_empty() {
            continue;
        }
        let (n, _) = line_number(l.text)?;
        first.get_or_insert(n);
    }
    first
}

/// The warning that a side's line numbers were taken off.
fn stripped(side: &str, span: Span, hint: Option<usize>) -> Diagnostic {
    let then = hint.map_or_else(String::new, |n| {
        format!(", and line {n} chooses among equal candidates")
    });
    Diagnostic::new(
        K::StrippedLineNumbers,
        span,
        format!("every line of the {side} starts with a line number (`12 | `), as Roo's read_file shows a file: unless the file holds the lines so numbered, they are matched without the numbers{then}"),
    )
    .with_help("copy the file's lines without the `N | ` prefixes")
}

fn span_of(lines: &[Line<'_>], or: usize) -> Span {
    match (lines.first(), lines.last()) {
        (Some(a), Some(b)) => Span::new(a.start, b.span().end),
        _ => Span::empty(or),
    }
}

/// The blocks of `lines`, read by `mode`'s rules; what is malformed goes
/// to `out`. `hint` is the `<start_line>` of their `<diff>`, if any.
/// Inside a call (`region`), a stray marker is an error and a block cut
/// off by the end of the region ends there, as the tools read it.
fn blocks(
    lines: &[Line<'_>],
    mode: Mode,
    region: bool,
    hint: Option<usize>,
    out: &mut Vec<Diagnostic>,
) -> Vec<(usize, Read)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !is_start(line.text, mode) {
            if region && (is_separator(line.text, mode) || is_end(line.text, mode)) {
                out.push(
                    Diagnostic::new(
                        K::UnexpectedSeparator,
                        line.span(),
                        format!("`{}` outside a SEARCH/REPLACE block", line.text.trim()),
                    )
                    .with_help("a block is `------- SEARCH`, the text to find, `=======`, the replacement, `+++++++ REPLACE`"),
                );
            }
            i += 1;
            continue;
        }
        let first = i;
        let mut j = i + 1;
        let mut line_no = hint;
        if mode != Mode::Cline {
            if let Some(n) = lines
                .get(j)
                .and_then(|l| l.text.trim().strip_prefix(":start_line:"))
            {
                line_no = n.trim().parse().ok().or(line_no);
                j += 1;
            }
            if lines
                .get(j)
                .is_some_and(|l| l.text.trim().starts_with(":end_line:"))
            {
                j += 1;
            }
            if lines.get(j).is_some_and(|l| l.text.trim_end() == "-------") {
                j += 1;
            }
        }
        let search_from = j;
        while j < lines.len()
            && !is_separator(lines[j].text, mode)
            && !is_start(lines[j].text, mode)
            && !is_end(lines[j].text, mode)
        {
            j += 1;
        }
        if lines.get(j).is_none_or(|l| !is_separator(l.text, mode)) {
            let at = lines.get(j).map(|l| l.span());
            let mut d = Diagnostic::new(
                K::UnclosedOpener,
                line.span(),
                "this SEARCH block has no `=======` line",
            )
            .with_help("end the text to find with `=======` on its own line, then the replacement and `+++++++ REPLACE`");
            if let Some(at) = at {
                d = d.with_label(at, "the block's next marker");
            }
            out.push(d);
            i = j.max(i + 1);
            continue;
        }
        let sep = j;
        j += 1;
        let replace_from = j;
        while j < lines.len()
            && !is_separator(lines[j].text, mode)
            && !is_start(lines[j].text, mode)
            && !is_end(lines[j].text, mode)
        {
            if mode != Mode::Cline {
                let t = lines[j].text.trim();
                if t.starts_with(":start_line:") || t.starts_with(":end_line:") {
                    out.push(
                        Diagnostic::new(
                            K::MalformedMarker,
                            lines[j].span(),
                            "a line marker (`:start_line:`, `:end_line:`) in a REPLACE section",
                        )
                        .with_help("line markers go right after the SEARCH line; escape one in text as `\\:start_line:`"),
                    );
                }
            }
            j += 1;
        }
        let closed = lines.get(j).is_some_and(|l| is_end(l.text, mode));
        // Cline reads a block whose end marker is missing at the end of its
        // `<diff>` as ending there (Roo does not).
        let cut_off = j >= lines.len() && region && mode == Mode::Cline;
        if !closed && !cut_off {
            let at = lines.get(j).map(|l| l.span());
            let mut d = Diagnostic::new(
                K::UnclosedOpener,
                line.span(),
                "this SEARCH block has no `+++++++ REPLACE` line",
            )
            .with_label(lines[sep].span(), "its replacement starts after this line")
            .with_help("end the replacement with `+++++++ REPLACE` (or `>>>>>>> REPLACE`)");
            if let Some(at) = at {
                d = d.with_label(at, "the block's next marker");
            }
            out.push(d);
            i = j.max(i + 1);
            continue;
        }
        let search = &lines[search_from..sep];
        let replace = &lines[replace_from..j];
        // Lines copied with Roo's `read_file` numbers: taken off, and the
        // first number is the line hint when no `:start_line:` gives one.
        let search_numbers = numbered(search);
        let replace_numbers = numbered(replace);
        if let Some(n) = search_numbers {
            line_no = line_no.or(Some(n));
            let hint = line_no.filter(|&h| h == n);
            out.push(stripped(
                "SEARCH text",
                span_of(search, lines[sep].start),
                hint,
            ));
        }
        if replace_numbers.is_some() {
            out.push(stripped(
                "replacement",
                span_of(replace, lines[sep].span().end),
                None,
            ));
        }
        // Roo asks for a marker in a body to be escaped (`\=======`): an
        // unescaped one is a block gone wrong, not text.
        if mode == Mode::Roo {
            for l in search.iter().chain(replace) {
                let t = l.text.trim();
                if t.starts_with("<<<<<<<") || t.starts_with(">>>>>>>") {
                    out.push(
                        Diagnostic::new(
                            K::MalformedMarker,
                            l.span(),
                            "a conflict marker inside a SEARCH/REPLACE block",
                        )
                        .with_help("escape a marker that is text with a backslash: `\\<<<<<<<`, `\\=======`, `\\>>>>>>>`"),
                    );
                }
            }
        }
        let closer = closed.then(|| lines[j].span());
        let end = closer.map_or_else(|| span_of(replace, lines[sep].span().end).end, |c| c.end);
        found.push((
            first,
            Read {
                span: Span::new(line.start, end),
                opener: line.span(),
                closer,
                search: span_of(search, lines[sep].start),
                replace: span_of(replace, lines[sep].span().end),
                old: body(search, mode, search_numbers.is_some()),
                new: body(replace, mode, replace_numbers.is_some()),
                line: line_no,
                written: (search_numbers.is_some() || replace_numbers.is_some())
                    .then(|| (body(search, mode, false), body(replace, mode, false))),
            },
        ));
        i = if closed { j + 1 } else { j };
    }
    found
}

/// The SEARCH a block lowers to (an empty SEARCH: a WRITE that fills a
/// new or empty file, in a `replace_in_file` call only). `path` is the
/// block's file and where it resolved to when it passed the path checks
/// (a refused one has its own error).
fn task<'a>(
    b: Read,
    path: Option<(&Attribute<'a>, Option<&Location>)>,
    empty_fills: bool,
    out: &mut Vec<Diagnostic>,
) -> Task<'a> {
    let mut t = Task {
        number: 0,
        block: 0,
        kind: TaskKind::Search,
        fence: crate::syntax::MIN_FENCE,
        span: b.span,
        opener: b.opener,
        attributes: path.iter().map(|(a, _)| (*a).clone()).collect(),
        sections: vec![b.search, b.replace],
        closer: b.closer,
        op: None,
    };
    let Some((path, place)) = path else {
        out.push(
            Diagnostic::new(K::MissingAttribute, b.opener, "this SEARCH block names no file")
                .with_help("put it in a `replace_in_file` call with `<path>PATH</path>`, or put the file's path on its own line before it"),
        );
        return t;
    };
    let ok = place.is_some();
    let p = crate::syntax::TaskPath::resolved(path.value.clone(), place.cloned());
    if b.old.is_empty() {
        if empty_fills {
            t.kind = TaskKind::Write;
            t.op = ok.then_some(Op::Write {
                path: p,
                append: true,
                content: Cow::Owned(b.new),
            });
        } else {
            out.push(
                Diagnostic::new(K::EmptySearch, b.opener, "this SEARCH block has no text to find")
                    .with_help("put the lines to replace between the SEARCH line and `=======`; a new file is a `replace_in_file` call on it with an empty SEARCH"),
            );
        }
        return t;
    }
    t.op = ok.then_some(Op::Edit {
        path: p,
        count: Count::default(),
        // Cline and Roo compare whole lines; lines with numbers as
        // written are looked for before the numbers are taken off.
        matching: Matching {
            as_written: b.written.map(std::sync::Arc::new),
            ..Matching::lines(Policy::Clada, b.line.and_then(NonZeroUsize::new))
        },
        search: Cow::Owned(b.old),
        replace: Cow::Owned(b.new),
    });
    t
}

/// A tool call found in the text: which, where its tags are.
struct Call {
    mode: Mode,
    /// A `write_to_file` call (its `mode` is unused).
    write: bool,
    /// The opening tag.
    open: Span,
    /// Its content, between the tags (to the end of the text when it is
    /// not closed).
    inner: (usize, usize),
    close: Option<Span>,
}

/// The calls of `source`, in order, found where Cline finds them: an
/// opening tag anywhere, its content up to the first closing tag. Where
/// each kind of tag is next is remembered, so that the text is searched
/// once for each.
fn calls(source: &str) -> Vec<Call> {
    let kinds = [
        (CLINE_CALL, Mode::Cline),
        (ROO_CALL, Mode::Roo),
        (WRITE_CALL, Mode::Free),
    ];
    let find = |name: &str, from: usize| {
        source
            .get(from..)
            .and_then(|s| s.find(&format!("<{name}>")))
            .map(|i| from + i)
    };
    let mut next: Vec<Option<usize>> = kinds.iter().map(|(n, _)| find(n, 0)).collect();
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        // A tag found before `at` lay inside the last call: look again.
        for (k, (name, _)) in kinds.iter().enumerate() {
            if next[k].is_some_and(|p| p < at) {
                next[k] = find(name, at);
            }
        }
        let Some((k, start)) = next
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.map(|p| (k, p)))
            .min_by_key(|&(_, p)| p)
        else {
            break;
        };
        let (name, mode) = kinds[k];
        let open = Span::new(start, start + name.len() + 2);
        let closing = format!("</{name}>");
        // A file's content may hold the call's closing tag: it is looked
        // for after the content's end (`</content>`), as Cline reads it.
        let write = name == WRITE_CALL;
        let after = if write {
            content_end(source, open.end)
        } else {
            open.end
        };
        let (inner_end, close) = match source[after..].find(&closing).map(|i| after + i - open.end)
        {
            Some(i) => {
                let c = open.end + i;
                (c, Some(Span::new(c, c + closing.len())))
            }
            None => (source.len(), None),
        };
        out.push(Call {
            mode,
            write,
            open,
            inner: (open.end, inner_end),
            close,
        });
        at = close.map_or(source.len(), |c| c.end);
        next[k] = find(name, at);
    }
    out
}

/// Where the content of a `write_to_file` call opened at `from` ends: after
/// the first `</content>` that follows its `<content>`, when the
/// `<content>` comes before the call's first closing tag; else `from`.
fn content_end(source: &str, from: usize) -> usize {
    let rest = &source[from..];
    let close = rest.find("</write_to_file>");
    let Some(open) = rest
        .find("<content>")
        .filter(|&o| close.is_none_or(|c| o < c))
    else {
        return from;
    };
    let start = open + "<content>".len();
    rest[start..]
        .find("</content>")
        .map_or(source.len(), |e| from + start + e + "</content>".len())
}

/// The text a `write_to_file` call's `<content>` holds, as a file: the
/// line break right after `<content>` and a last line of white space
/// before `</content>` are the layout's, not the file's; a fence around
/// the whole (` ```python ` … ` ``` `, as weaker models write, and Cline
/// and Roo take off) is taken off; a last line without a line break gets
/// one.
fn file_content(raw: &str) -> String {
    let mut t = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    // A last line of white space only (the indentation of `</content>`).
    if let Some(i) = t.rfind('\n')
        && t[i + 1..].bytes().all(|b| b == b' ' || b == b'\t')
    {
        t = &t[..i + 1];
    } else if t
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || b == b'\n' || b == b'\r')
    {
        t = "";
    }
    if let Some(first_end) = t.find('\n')
        && t.starts_with("```")
    {
        let body = &t[first_end + 1..];
        let trimmed = body.trim_end_matches(['\n', '\r']);
        let k = trimmed.rfind('\n').map_or(0, |k| k + 1);
        if trimmed[k..].trim_end() == "```" {
            t = &body[..k];
        }
    }
    let mut out = t.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Says that call `c` has no closing tag, naming it, if so.
fn unclosed(source: &str, c: &Call, out: &mut Vec<Diagnostic>) {
    if c.close.is_none() {
        let tag = &source[c.open.start + 1..c.open.end - 1];
        out.push(
            Diagnostic::new(
                K::UnclosedOpener,
                c.open,
                format!("this `{tag}` call has no closing tag"),
            )
            .with_help(format!("end the call with `</{tag}>`")),
        );
    }
}

/// The unit of a `write_to_file` call: a WRITE of its `<content>` to its
/// `<path>`, a whole file as Cline and Roo write it.
fn write_call<'a>(
    cx: &Context<'a>,
    c: &Call,
    units: &mut Vec<Unit<'a>>,
    out: &mut Vec<Diagnostic>,
) {
    let source = cx.src;
    let (from, to) = c.inner;
    let span = Span::new(c.open.start, c.close.map_or(to, |s| s.end));
    unclosed(source, c, out);
    let contents = elements(source, from, to, "content");
    let content = contents.first().copied();
    // The `<path>` before the content (a `<path>` in it is the file's text).
    let path = elements(source, from, content.map_or(to, |c| c.start), "path")
        .first()
        .map(|s| {
            let raw = &source[s.range()];
            let value = raw.trim();
            let at = s.start + (raw.len() - raw.trim_start().len());
            Attribute::implied(
                "path",
                Cow::Borrowed(value),
                Span::new(at, at + value.len()),
            )
        });
    let mut t = Task {
        number: 0,
        block: 0,
        kind: TaskKind::Write,
        fence: crate::syntax::MIN_FENCE,
        span,
        opener: c.open,
        attributes: path.iter().cloned().collect(),
        sections: content.into_iter().collect(),
        closer: c.close,
        op: None,
    };
    match (&path, content) {
        (None, _) => out.push(
            Diagnostic::new(
                K::MissingAttribute,
                c.open,
                "this `write_to_file` call names no file",
            )
            .with_help("name the file in `<path>PATH</path>` before its `<content>`"),
        ),
        (Some(_), None) => out.push(
            Diagnostic::new(
                K::MissingSection,
                c.open,
                "this `write_to_file` call has no `<content>`",
            )
            .with_help("put the whole file between `<content>` and `</content>`"),
        ),
        (Some(a), Some(body)) => {
            let place = crate::syntax::check_path_attribute(cx, a, out);
            if let Some(place) = place {
                let p = crate::syntax::TaskPath::resolved(a.value.clone(), Some(place));
                t.op = Some(Op::Write {
                    path: p,
                    append: false,
                    content: Cow::Owned(file_content(&source[body.range()])),
                });
            }
        }
    }
    units.push(Unit::Task(t));
}

/// The elements `<tag>…</tag>` of `source[from..to]`: each element's
/// content span, in order (an element not closed runs to `to`).
fn elements(source: &str, from: usize, to: usize, tag: &str) -> Vec<Span> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut at = from;
    while let Some(i) = source.get(at..to).and_then(|s| s.find(&open)) {
        let start = at + i + open.len();
        let end = source
            .get(start..to)
            .and_then(|s| s.find(&close))
            .map_or(to, |j| start + j);
        out.push(Span::new(start, end));
        at = end;
    }
    out
}

/// The units of one call.
fn call<'a>(cx: &Context<'a>, c: &Call, units: &mut Vec<Unit<'a>>, out: &mut Vec<Diagnostic>) {
    let source = cx.src;
    let (from, to) = c.inner;
    let span = Span::new(c.open.start, c.close.map_or(to, |s| s.end));
    unclosed(source, c, out);
    // Each `<path>` names the file of the `<diff>`s after it, up to the
    // next `<path>`.
    let diffs = elements(source, from, to, "diff");
    // A `<path>` inside a diff is its text (a file being edited may hold
    // one), not the call's: as Cline reads a parameter to its closing tag.
    let mut k = 0;
    let paths: Vec<Span> = elements(source, from, to, "path")
        .into_iter()
        .filter(|p| {
            while diffs.get(k).is_some_and(|d| d.end < p.start) {
                k += 1;
            }
            !diffs
                .get(k)
                .is_some_and(|d| d.start <= p.start && p.start <= d.end)
        })
        .collect();
    let mut tasks = Vec::new();
    // The `<path>` before the current `<diff>` (both lists are in order),
    // checked once.
    let mut p = 0;
    let mut checked: Option<(usize, Attribute<'a>, Option<Location>)> = None;
    for d in &diffs {
        while paths.get(p).is_some_and(|s| s.end <= d.start) {
            p += 1;
        }
        let path = p.checked_sub(1).map(|k| {
            let s = paths[k];
            let raw = &source[s.range()];
            let value = raw.trim();
            let at = s.start + (raw.len() - raw.trim_start().len());
            (k, value, Span::new(at, at + value.len()))
        });
        let attr = path.map(|(key, value, span)| match &checked {
            Some((k, a, place)) if *k == key => (a.clone(), place.clone()),
            _ => {
                let a = Attribute::implied("path", Cow::Borrowed(value), span);
                let place = crate::syntax::check_path_attribute(cx, &a, out);
                checked = Some((key, a.clone(), place.clone()));
                (a, place)
            }
        });
        // Roo's `<args>` form: the blocks are in `<content>`s, a
        // `<start_line>` beside them.
        let contents = elements(source, d.start, d.end, "content");
        let hint = elements(source, d.start, d.end, "start_line")
            .first()
            .and_then(|s| source[s.range()].trim().parse().ok());
        let regions = if contents.is_empty() {
            vec![*d]
        } else {
            contents
        };
        for r in regions {
            let lines = lines_in(source, r.start, r.end);
            let read = blocks(&lines, c.mode, true, hint, out);
            if read.is_empty() {
                out.push(
                    Diagnostic::new(K::MissingSection, Span::new(r.start, r.end.max(r.start)), "this diff holds no SEARCH/REPLACE block")
                        .with_help("write `------- SEARCH`, the text to find, `=======`, the replacement, `+++++++ REPLACE`"),
                );
            }
            for (_, b) in read {
                let named = attr.as_ref().map(|(a, place)| (a, place.as_ref()));
                super::push_tight(&mut tasks, task(b, named, c.mode == Mode::Cline, out));
            }
        }
    }
    if diffs.is_empty() {
        out.push(
            Diagnostic::new(K::MissingSection, c.open, "this call has no `<diff>`")
                .with_help("put the SEARCH/REPLACE blocks inside `<diff>…</diff>`"),
        );
    }
    let rules = if c.mode == Mode::Cline {
        // Cline writes a file only when each of the call's blocks matched.
        BlockRules {
            all_or_none: true,
            create_only: true,
            ..BlockRules::default()
        }
    } else {
        // Roo applies each block that matches.
        BlockRules {
            independent: true,
            ..BlockRules::default()
        }
    };
    // What the list did not fill is given back.
    tasks.shrink_to_fit();
    units.push(Unit::Block(Block {
        number: 0,
        span,
        opener: c.open,
        fence: crate::syntax::MIN_FENCE,
        attributes: Vec::new(),
        version: None,
        tasks,
        closer: c.close,
        rules,
    }));
}

/// Reads `source` as Cline's and Roo's blocks.
pub(crate) fn parse(source: &str, options: ParseOptions) -> Document<'_> {
    let cx = Context::new(source, options);
    let mut units = Vec::new();
    let mut out = Vec::new();
    // Outside the calls, a file-name line names a block's file, carried
    // over to the next blocks.
    let mut carried: Option<Cow<'_, str>> = None;
    let mut at = 0;
    let calls = calls(source);
    for stretch in calls.iter().map(Some).chain([None]) {
        let until = stretch.map_or(source.len(), |c| c.open.start);
        let lines = lines_in(source, at, until);
        for (i, mut b) in blocks(&lines, Mode::Free, false, None, &mut out) {
            let before: Vec<&str> = lines[i.saturating_sub(3)..i]
                .iter()
                .map(|l| l.text)
                .collect();
            // The name's line starts the unit, so that what is said about
            // the name belongs to it; a name carried over is shown on the
            // block's SEARCH line.
            let named = super::aider::file_name_at(&before).map(|(k, name)| {
                let line = lines[i - before.len() + k];
                let offset = line.start + line.text.find(name).unwrap_or(0);
                b.span = Span::new(line.start, b.span.end);
                (Cow::Borrowed(name), Span::new(offset, offset + name.len()))
            });
            let name = named.or_else(|| carried.clone().map(|n| (n, b.opener)));
            let attr = name.map(|(n, span)| {
                carried = Some(n.clone());
                let a = Attribute::implied("path", n, span);
                let place = crate::syntax::check_path_attribute(&cx, &a, &mut out);
                (a, place)
            });
            let t = task(
                b,
                attr.as_ref().map(|(a, place)| (a, place.as_ref())),
                false,
                &mut out,
            );
            units.push(Unit::Task(t));
        }
        if let Some(c) = stretch {
            if c.write {
                write_call(&cx, c, &mut units, &mut out);
            } else {
                call(&cx, c, &mut units, &mut out);
            }
            at = c.close.map_or(source.len(), |s| s.end);
        }
    }
    super::codex::number(&mut units, &mut out);
    // A unit with an error runs nothing: its tasks carry no operation.
    let mut broken = vec![false; units.len() + 1];
    for d in out.iter().filter(|d| d.is_error()) {
        if let Some(b) = d.block.and_then(|b| broken.get_mut(b)) {
            *b = true;
        }
    }
    for u in &mut units {
        if broken.get(u.number()).copied().unwrap_or(false) {
            match u {
                Unit::Block(b) => b.tasks.iter_mut().for_each(|t| t.op = None),
                Unit::Task(t) => t.op = None,
            }
        }
    }
    if units.is_empty() && out.is_empty() {
        out.push(
            Diagnostic::new(K::NoTasks, Span::empty(0), "the document has no Cline or Roo block")
                .with_help("a block is `------- SEARCH`, the text to find, `=======`, the replacement, `+++++++ REPLACE`, inside `<replace_in_file>` with `<path>` and `<diff>`"),
        );
    }
    crate::syntax::sort_in_document_order(&mut out);
    Document {
        source,
        units,
        diagnostics: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::testing::{self, edit};

    /// The operations of `src`, without their line hints (see
    /// `lines_of`).
    fn ops(src: &str) -> (Vec<Op<'_>>, Vec<Diagnostic>) {
        testing::ops(parse(src, ParseOptions::default()))
    }

    fn lines_of(src: &str) -> Vec<Option<usize>> {
        testing::line_hints(&parse(src, ParseOptions::default()))
    }

    #[test]
    fn roo_read_file_line_numbers_are_taken_off_each_side() {
        let kinds = |ds: &[Diagnostic]| {
            ds.iter()
                .map(|d| (d.kind, d.is_error()))
                .collect::<Vec<_>>()
        };
        // Every non-blank SEARCH line numbered; the REPLACE as written.
        let src = "a.py\n<<<<<<< SEARCH\n12 | def f():\n\n14 |     return 1\n=======\ndef f():\n    return 2\n>>>>>>> REPLACE\n";
        let (got, ds) = ops(src);
        assert_eq!(
            got,
            vec![edit(
                "a.py",
                "def f():\n\n    return 1\n",
                "def f():\n    return 2\n"
            )]
        );
        assert_eq!(kinds(&ds), [(K::StrippedLineNumbers, false)]);
        assert_eq!(lines_of(src), [Some(12)]);
        // Both sides; `:start_line:` keeps its own hint; a tab after the bar.
        let src = "a.py\n<<<<<<< SEARCH\n:start_line:3\n-------\n 9 | x\n=======\n9 |\ty\n>>>>>>> REPLACE\n";
        assert_eq!(ops(src).0, vec![edit("a.py", "x\n", "y\n")]);
        assert_eq!(ops(src).1.len(), 2);
        assert_eq!(lines_of(src), [Some(3)]);
        // A line without a number, `||`, or no space before the bar: as
        // written.
        for side in ["1 | x\ny\n", "1 || x\n", "1| x\n"] {
            let src = format!("a.py\n------- SEARCH\n{side}=======\nz\n+++++++ REPLACE\n");
            let (got, ds) = ops(&src);
            assert_eq!(got, vec![edit("a.py", side, "z\n")], "{side:?}");
            assert!(ds.is_empty(), "{ds:?}");
        }
    }

    #[test]
    fn roo_start_line_is_the_edits_line_hint() {
        let src = "<apply_diff>\n<path>a.py</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:7\n-------\nx\n=======\ny\n>>>>>>> REPLACE\n\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n";
        assert_eq!(lines_of(src), [Some(7), None]);
        let cline = "a.py\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n";
        assert_eq!(lines_of(cline), [None]);
    }

    #[test]
    fn markers_as_cline_and_roo_read_them() {
        for l in [
            "------- SEARCH",
            "--- SEARCH",
            "----------- SEARCH>",
            "<<< SEARCH",
        ] {
            assert!(is_start(l, Mode::Cline), "{l}");
        }
        for l in [
            "-- SEARCH",
            "-------SEARCH",
            "<<-- SEARCH",
            " ------- SEARCH",
            "------- SEARCH ",
        ] {
            assert!(!is_start(l, Mode::Cline), "{l}");
        }
        assert!(is_separator("===", Mode::Cline) && !is_separator("======= ", Mode::Cline));
        assert!(is_separator("======= ", Mode::Roo) && !is_separator("=====", Mode::Roo));
        assert!(is_end("+++++++ REPLACE", Mode::Cline) && is_end(">>> REPLACE", Mode::Cline));
        assert!(is_start("<<<<<<< SEARCH>  ", Mode::Roo) && !is_start("------- SEARCH", Mode::Roo));
    }

    #[test]
    fn a_replace_in_file_call_is_one_block_of_its_path() {
        let src = "I'll fix it.\n\n<replace_in_file>\n<path>src/app.py</path>\n<diff>\n------- SEARCH\na = 1\n=======\na = 2\n+++++++ REPLACE\n\n------- SEARCH\nb = 1\n=======\n+++++++ REPLACE\n</diff>\n<task_progress>- [x] fix</task_progress>\n</replace_in_file>\n";
        let doc = parse(src, ParseOptions::default());
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        assert_eq!(doc.units.len(), 1);
        let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.clone()).collect();
        assert_eq!(
            ops,
            vec![
                edit("src/app.py", "a = 1\n", "a = 2\n"),
                edit("src/app.py", "b = 1\n", "")
            ]
        );
        assert!(matches!(&doc.units[0], Unit::Block(b) if b.rules.all_or_none));
        let path = doc
            .tasks()
            .next()
            .map(|t| &src[t.attributes[0].span.range()]);
        assert_eq!(path, Some("src/app.py"));
    }

    #[test]
    fn a_missing_replace_marker_at_the_end_of_a_diff_ends_the_block() {
        let src = "<replace_in_file><path>a</path><diff>------- SEARCH\nx\n=======\ny</diff></replace_in_file>";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(ops, vec![edit("a", "x\n", "y\n")]);
    }

    #[test]
    fn roo_calls_with_line_markers_escapes_and_the_args_form() {
        let src = "<apply_diff>\n<path>t.ts</path>\n<diff>\nt.ts\n<<<<<<< SEARCH\n:start_line:2\n:end_line:2\n-------\n\\=======\n=======\nsep\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n<apply_diff>\n<args>\n<file>\n  <path>a.py</path>\n  <diff>\n    <content>\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n    </content>\n    <start_line>7</start_line>\n  </diff>\n</file>\n<file>\n  <path>b.py</path>\n  <diff>\n    <content>\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n    </content>\n  </diff>\n</file>\n</args>\n</apply_diff>\n";
        let doc = parse(src, ParseOptions::default());
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        // `:start_line:` and `<start_line>` are the edits' line hints.
        assert_eq!(lines_of(src), [Some(2), Some(7), None]);
        let (ops, _) = ops(src);
        assert_eq!(
            ops,
            vec![
                edit("t.ts", "=======\n", "sep\n"),
                edit("a.py", "x\n", "y\n"),
                edit("b.py", "z\n", "w\n")
            ]
        );
        assert!(
            doc.units
                .iter()
                .all(|u| matches!(u, Unit::Block(b) if b.rules.independent))
        );
        // The line each block says it starts at is kept.
        let lines: Vec<_> = doc
            .units
            .iter()
            .flat_map(|u| match u {
                Unit::Block(b) => {
                    let region = lines_in(src, b.span.start, b.span.end);
                    blocks(&region, Mode::Roo, true, None, &mut Vec::new())
                        .into_iter()
                        .map(|(_, r)| r.line)
                        .collect::<Vec<_>>()
                }
                Unit::Task(_) => Vec::new(),
            })
            .collect();
        assert_eq!(lines[0], Some(2));
    }

    #[test]
    fn blocks_outside_calls_take_the_file_named_above_them() {
        let src = "test.ts\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n<<<<<<< SEARCH\n:start_line:5\n-------\nc\n=======\nd\n>>>>>>> REPLACE\n\nother.md\n```\n------- SEARCH\ne\n=======\nf\n+++++++ REPLACE\n```\n";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(
            ops,
            vec![
                edit("test.ts", "a\n", "b\n"),
                edit("test.ts", "c\n", "d\n"),
                edit("other.md", "e\n", "f\n")
            ]
        );
    }

    #[test]
    fn a_path_tag_inside_a_diff_is_text() {
        let src = "<apply_diff>\n<path>a.xml</path>\n<diff>\n<<<<<<< SEARCH\n<path>x</path>\n=======\n<path>y</path>\n>>>>>>> REPLACE\n</diff>\n<diff>\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(
            ops,
            vec![
                edit("a.xml", "<path>x</path>\n", "<path>y</path>\n"),
                edit("a.xml", "z\n", "w\n")
            ]
        );
    }

    #[test]
    fn near_misses_are_errors_not_prose() {
        let call = |diff: &str| {
            format!(
                "<replace_in_file>\n<path>a.txt</path>\n<diff>\n{diff}\n</diff>\n</replace_in_file>\n"
            )
        };
        let cases = [
            (call("<<-- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE"), K::UnexpectedSeparator),
            (call("------- SEARCH\nline2\n+++++++ REPLACE\nreplaced"), K::UnclosedOpener),
            (call("------- SEARCH\nline2\n======= \nreplaced\n+++++++ REPLACE"), K::UnclosedOpener),
            (call("------- SEARCH\nline2\n------- =======\nreplaced\n+++++++ REPLACE"), K::UnclosedOpener),
            (call("just prose"), K::MissingSection),
            ("<replace_in_file>\n<diff>\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n".to_owned(), K::MissingAttribute),
            ("<replace_in_file>\n<path>../x</path>\n<diff>\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n".to_owned(), K::PathEscape),
            ("<apply_diff>\n<path>a</path>\n<diff>\n<<<<<<< SEARCH\nx\n=======\n:start_line:3\ny\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n".to_owned(), K::MalformedMarker),
            ("<apply_diff>\n<path>a</path>\n<diff>\n<<<<<<< SEARCH\n=======\ny\n>>>>>>> REPLACE\n</diff>\n</apply_diff>\n".to_owned(), K::EmptySearch),
            ("------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n".to_owned(), K::MissingAttribute),
            ("<replace_in_file>\n<path>a</path>\n<diff>\n------- SEARCH\na\n=======\nb\n".to_owned(), K::UnclosedOpener),
        ];
        for (src, kind) in cases {
            let doc = parse(&src, ParseOptions::default());
            assert!(
                doc.diagnostics
                    .iter()
                    .any(|d| d.kind == kind && d.is_error()),
                "{src}: {:?}",
                doc.diagnostics
            );
            assert!(doc.tasks().all(|t| t.op.is_none()), "{src}");
        }
    }

    #[test]
    fn write_to_file_is_a_write_of_the_whole_file() {
        let src = "<replace_in_file>\n<path>a.py</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n<write_to_file>\n<path>b.py</path>\n<content>\nprint(\"</write_to_file>\")\n</content>\n</write_to_file>\n<write_to_file>\n<path> c.txt </path>\n<content>\n```text\nhello\n```\n</content>\n<line_count>1</line_count>\n</write_to_file>\n";
        let (got, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        let write = |p: &'static str, c: &'static str| Op::Write {
            path: p.into(),
            append: false,
            content: c.to_owned().into(),
        };
        assert_eq!(
            got,
            vec![
                edit("a.py", "x\n", "y\n"),
                write("b.py", "print(\"</write_to_file>\")\n"),
                write("c.txt", "hello\n"),
            ]
        );
        // Without a path or content: an error, nothing written.
        for bad in [
            "<write_to_file>\n<content>\nx\n</content>\n</write_to_file>\n",
            "<write_to_file>\n<path>a</path>\n</write_to_file>\n",
            "<write_to_file>\n<path>a</path>\n<content>\nx\n",
        ] {
            let (got, ds) = ops(bad);
            assert!(
                got.is_empty() && ds.iter().any(Diagnostic::is_error),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_files_content_is_its_lines() {
        for (raw, want) in [
            ("\na\nb\n", "a\nb\n"),
            ("a", "a\n"),
            ("\n  a\n  ", "  a\n"),
            ("\n", ""),
            ("", ""),
            ("\r\na\r\n", "a\r\n"),
            ("\n```py\nx\n```\n", "x\n"),
            ("\n```py\nx\n", "```py\nx\n"),
        ] {
            assert_eq!(file_content(raw), want, "{raw:?}");
        }
    }
}
