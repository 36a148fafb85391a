//! Unified diffs as models write them (`--dialect udiff`, PROTOCOL §11.8),
//! read as clada TASKS blocks: one block per file, one task per hunk.
//!
//! ~~~text
//! diff --git a/src/app.py b/src/app.py
//! index 3b18e51..a4c2f0e 100644
//! --- a/src/app.py
//! +++ b/src/app.py
//! @@ -10,3 +10,3 @@ def greet():
//!      name = "world"
//! -    print("Hi")
//! +    print("Hello")
//! ~~~
//!
//! What `git diff`, `diff -u` and models write is read: bare or inside
//! fences among prose, one or many files, `--- a/p` / `+++ b/p` headers
//! with or without the `a/` `b/` prefixes and with timestamps, `/dev/null`
//! for a new or deleted file, git's extended headers, `\ No newline at end
//! of file`. A hunk is found by its text, not by its `@@` numbers, which
//! models get wrong or leave out (`@@ ... @@`): each hunk becomes a SEARCH
//! of its context and removed lines replaced by its context and added
//! lines, found once as a SEARCH is (as written, then the white-space
//! tier), as whole lines; a hunk with `\ No newline at end of file` ends at
//! the file's end. The numbers are kept only to choose between equal candidates
//! ([`Hunk::line`], the edit's line hint); the counts are not trusted to
//! end a hunk (it ends where its lines do).
//!
//! A file's block is all or none, as `git apply` applies a file
//! ([`BlockRules`]): a new file is created only where nothing is, a rename
//! lands only where nothing is, deletions and renames take files. Paths are
//! checked like `path` attributes. Nothing here reads the file system.

use super::lines::{Line, lines};
use std::borrow::Cow;
use std::num::NonZeroUsize;

use crate::syntax::Attribute;
use crate::syntax::Span;
use crate::syntax::TaskKind;
use crate::syntax::{Block, BlockRules, Count, Document, Matching, Op, Policy, Task, Unit};
use crate::syntax::{Context, ParseOptions};
use crate::syntax::{Diagnostic, DiagnosticKind as K};

/// `diff --git a/p b/p`: a git file section.
const GIT: &str = "diff --git ";
const OLD: &str = "--- ";
const NEW: &str = "+++ ";
const HUNK: &str = "@@";
const DEV_NULL: &str = "/dev/null";
/// `\ No newline at end of file` (the text after `\` varies with the
/// locale: only the backslash counts).
const NO_NEWLINE: u8 = b'\\';
/// A diff indented further than this (inside a list item, say) is not
/// looked for.
const MAX_INDENT: usize = 16;

/// The text of `line` in a diff indented by `indent` spaces: `None` when
/// the line is not indented so (a blank line is an empty one).
fn body(line: Line<'_>, indent: usize) -> Option<&str> {
    let t = line.text;
    match t.get(..indent) {
        Some(pad) if pad.bytes().all(|b| b == b' ') => t.get(indent..),
        _ if t.trim().is_empty() => Some(""),
        _ => None,
    }
}

/// The body of the line at `i`, if there is one.
fn body_at<'a>(lines: &[Line<'a>], i: usize, indent: usize) -> Option<&'a str> {
    lines.get(i).and_then(|&l| body(l, indent))
}

/// Where a file's diff starts at line `i`: its indentation, and whether it
/// is git's (`diff --git`) or a plain `---`/`+++` pair.
fn section_start(lines: &[Line<'_>], i: usize) -> Option<(usize, bool)> {
    let t = lines.get(i)?.text;
    let indent = t.len() - t.trim_start_matches(' ').len();
    if indent > MAX_INDENT {
        return None;
    }
    let rest = &t[indent..];
    if rest.starts_with(GIT) {
        return Some((indent, true));
    }
    let new = body_at(lines, i + 1, indent).is_some_and(|b| b.starts_with(NEW));
    (rest.starts_with(OLD) && new).then_some((indent, false))
}

/// `line` without the indentation of a diff indented as a whole (in a list
/// item), and that indentation; `None` past [`MAX_INDENT`].
fn unindented(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start_matches(' ');
    let indent = line.len() - t.len();
    (indent <= MAX_INDENT).then_some((indent, t))
}

/// Whether `t` (unindented) is a hunk's `@@` line: with numbers (`@@ -3,7
/// +3,8 @@`, text after it aside), or bare, as models write one without
/// numbers (`@@`, `@@ @@`, `@@ ... @@`).
pub(crate) fn is_hunk_header(t: &str) -> bool {
    let t = t.trim_end();
    if numbers(t).is_some() && t[HUNK.len()..].contains(HUNK) {
        return true;
    }
    let Some(rest) = t.strip_prefix(HUNK) else {
        return false;
    };
    let rest = rest.trim();
    rest.is_empty() || rest == HUNK || rest.strip_suffix(HUNK).is_some_and(|m| m.trim() == "...")
}

/// Whether a line of a hunk (context, removed or added) starts `t`.
fn is_hunk_line(t: &str) -> bool {
    matches!(t.as_bytes().first(), Some(b' ' | b'-' | b'+'))
}

/// Whether a unified diff starts at line `i` of the lines `at` gives (the
/// empty text past the end): a `diff --git` line followed by one of git's
/// extended headers or a `---` line (a rename alone has no hunk); a `---`,
/// `+++`, `@@` header; or a hunk's `@@` line without a header, followed by
/// a hunk's line. Indented as a whole or not. What `auto` and the check
/// for other formats' edits (PROTOCOL §11.7) look for.
pub(crate) fn starts_diff<'a>(at: &dyn Fn(usize) -> &'a str, i: usize) -> bool {
    let Some((indent, t)) = unindented(at(i)) else {
        return false;
    };
    let next = |k: usize| {
        let l = at(i + k);
        l.get(..indent)
            .filter(|pad| pad.bytes().all(|b| b == b' '))
            .and_then(|_| l.get(indent..))
            .unwrap_or_default()
    };
    if t.starts_with(GIT) {
        let n = next(1);
        return n.starts_with(OLD) || EXTENDED.iter().any(|h| n.starts_with(h));
    }
    (t.starts_with(OLD) && next(1).starts_with(NEW) && next(2).starts_with(HUNK))
        || (is_hunk_header(t) && is_hunk_line(next(1)))
}

/// Whether `line`, after the lines `before` (nearest last), shows a
/// unified diff (what `auto` looks for): a `diff --git` line, a hunk's
/// `@@` line after a `---`/`+++` pair, or a hunk's line after an `@@` line
/// (a hunk without a header: [`starts_diff`] of the lines read so far).
pub(crate) fn is_header(before: &[&str], line: &str) -> bool {
    let all = |k: usize| match k {
        k if k < before.len() => before[k],
        k if k == before.len() => line,
        _ => "",
    };
    if unindented(line).is_some_and(|(_, t)| t.starts_with(GIT)) {
        return true;
    }
    // The diff may start two lines up (`---`, `+++`, `@@`) or one (`@@`
    // and a hunk line): each start is looked at once it can be told.
    let n = before.len();
    let hunk_at = |k: usize| unindented(all(k)).is_some_and(|(_, t)| is_hunk_header(t));
    (n >= 2 && starts_diff(&all, n - 2)) || (n >= 1 && hunk_at(n - 1) && starts_diff(&all, n - 1))
}

/// A path named by a header line: its text (unquoted) and where it is.
#[derive(Clone, Debug)]
struct Named<'a> {
    path: Cow<'a, str>,
    span: Span,
}

/// The path of a `---` or `+++` line's rest (after the marker, starting at
/// `at` in the document): `None` for `/dev/null`. git's `a/` (or `b/`)
/// prefix is dropped; a timestamp after a tab (or after spaces, as `diff
/// -u` writes one) is not part of the path.
fn header_path<'a>(
    rest: &'a str,
    at: usize,
    prefix: &str,
) -> Result<Option<Named<'a>>, &'static str> {
    let (raw, span) = if rest.starts_with('"') {
        let (path, len) = unquote(rest)?;
        (path, Span::new(at, at + len))
    } else {
        let end = rest.find('\t').unwrap_or(rest.len());
        let mut text = &rest[..end];
        if end == rest.len()
            && let Some(cut) = timestamp_at(text)
        {
            text = &text[..cut];
        }
        let text = text.trim_end();
        (Cow::Borrowed(text), Span::new(at, at + text.len()))
    };
    if raw == DEV_NULL {
        return Ok(None);
    }
    Ok(Some(strip_prefix(raw, span, prefix)))
}

/// `a/` or `b/` taken off a path.
fn strip_prefix<'a>(raw: Cow<'a, str>, span: Span, prefix: &str) -> Named<'a> {
    match raw {
        Cow::Borrowed(t) => match t.strip_prefix(prefix) {
            Some(rest) => Named {
                path: Cow::Borrowed(rest),
                span: Span::new(span.start + prefix.len(), span.end),
            },
            None => Named {
                path: Cow::Borrowed(t),
                span,
            },
        },
        Cow::Owned(t) => Named {
            path: Cow::Owned(t.strip_prefix(prefix).map(str::to_owned).unwrap_or(t)),
            span,
        },
    }
}

/// Where a `diff -u` timestamp starts in `text` (`file.py 2024-01-31
/// 10:00:00.000000000 +0100`): at the space before a date and a time that
/// run to the end of the line.
pub(crate) fn timestamp_at(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let stamp = |i: usize| {
        let shape = b"dddd-dd-dd dd:dd";
        let fits = shape.iter().enumerate().all(|(j, &c)| {
            b.get(i + j).is_some_and(|&x| {
                if c == b'd' {
                    x.is_ascii_digit()
                } else {
                    x == c
                }
            })
        });
        fits && b[i + shape.len()..]
            .iter()
            .all(|&x| x.is_ascii_digit() || matches!(x, b':' | b'.' | b' ' | b'+' | b'-'))
    };
    (1..b.len())
        .find(|&i| b[i - 1] == b' ' && stamp(i))
        .map(|i| text[..i].trim_end().len())
}

/// A C-quoted path as git writes one (`"a/caf\303\251.txt"`): the path,
/// and the length of the quoted text.
fn unquote(text: &str) -> Result<(Cow<'static, str>, usize), &'static str> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                let path = String::from_utf8(out).map_err(|_| "the quoted path is not UTF-8")?;
                return Ok((Cow::Owned(path), i + 1));
            }
            b'\\' => {
                let e = *b
                    .get(i + 1)
                    .ok_or("the quoted path ends inside an escape")?;
                i += 2;
                out.push(match e {
                    b'a' => 7,
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 11,
                    b'f' => 12,
                    b'r' => b'\r',
                    b'0'..=b'3' => {
                        let d = |j: usize| b.get(j).filter(|c| (b'0'..=b'7').contains(*c));
                        let (Some(x), Some(y)) = (d(i), d(i + 1)) else {
                            return Err("a quoted path has a bad octal escape");
                        };
                        i += 2;
                        (e - b'0') * 64 + (x - b'0') * 8 + (y - b'0')
                    }
                    other => other,
                });
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("the quoted path has no closing `\"`")
}

/// One hunk as read.
#[derive(Debug)]
struct Hunk {
    /// From the `@@` line to its last line.
    span: Span,
    header: Span,
    /// Its lines (after the `@@` line), for the task's section.
    lines: Span,
    /// The text it replaces: its context and removed lines.
    old: String,
    /// The text it leaves: its context and added lines.
    new: String,
    /// Whether it adds or removes anything.
    changes: bool,
    /// Where its old text starts in the file as the hunks before it left
    /// it (1-based), from the `@@` numbers when it has them: what chooses
    /// between equal candidates (the line hint of an edit, PROTOCOL §3),
    /// never where the hunk is looked for.
    line: Option<usize>,
    /// `@@ -0,0`: the hunk says the file was empty.
    from_empty: bool,
    /// A side's last line has no line break (`\ No newline at end of
    /// file`): the hunk ends at the file's end.
    at_end: bool,
    /// Which of its old and new lines are context lines.
    kept: crate::syntax::Kept,
}

/// The numbers of `@@ -a,b +c,d @@`, when it has them.
fn numbers(header: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = header.strip_prefix(HUNK)?.trim_start();
    let mut parts = rest.split_whitespace();
    let range = |s: Option<&str>, sign: char| -> Option<(usize, usize)> {
        let s = s?.strip_prefix(sign)?;
        let (start, count) = s.split_once(',').unwrap_or((s, "1"));
        Some((start.parse().ok()?, count.parse().ok()?))
    };
    let (a, b) = range(parts.next(), '-')?;
    let (c, d) = range(parts.next(), '+')?;
    Some((a, b, c, d))
}

/// What a hunk line is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Both,
    Old,
    New,
}

/// What follows a blank line where a hunk may end (its counts met, or no
/// counts): the blank lines, then a run of lines that may be the hunk's,
/// up to a line that cannot (prose, a file header, `@@`, a signature).
#[derive(Debug, PartialEq, Eq)]
enum Rest {
    /// No line of a hunk follows: the hunk ends before the blank line.
    None,
    /// Hunk lines follow, up to the line at this index: they are the
    /// hunk's (models miscount; the counts are not trusted).
    Lines(usize),
    /// Only lines that read as a Markdown list follow (`- item`, `+ item`),
    /// up to this index: the hunk's or prose, clada cannot tell.
    Unclear(usize),
}

/// [`Rest`] from the blank line at `from`. One look, up to the first line
/// that cannot be a hunk's.
fn rest_of_hunk(lines: &[Line<'_>], from: usize, indent: usize) -> Rest {
    let mut k = from;
    let mut last = None;
    let mut after_blank = true;
    let mut bullets = true;
    while let Some(b) = body_at(lines, k, indent) {
        let Some(&first) = b.as_bytes().first() else {
            after_blank = true;
            k += 1;
            continue;
        };
        let file_header =
            b.starts_with(OLD) && body_at(lines, k + 1, indent).is_some_and(|n| n.starts_with(NEW));
        let rule = b.len() >= 3 && b.bytes().all(|c| c == b'-');
        let hunk_line = match first {
            b' ' | b'-' | b'+' => !file_header && !rule && b != "-- ",
            NO_NEWLINE => !after_blank,
            _ => false,
        };
        if !hunk_line {
            break;
        }
        // A list item: one mark, one space, a word (a removed or added
        // line of a file indented by one space, or prose).
        let bytes = b.as_bytes();
        let item = first != b' '
            && first != NO_NEWLINE
            && bytes.get(1) == Some(&b' ')
            && bytes.get(2).is_some_and(|c| !c.is_ascii_whitespace());
        bullets &= item || first == NO_NEWLINE;
        after_blank = false;
        k += 1;
        last = Some(k);
    }
    match last {
        None => Rest::None,
        Some(end) if bullets => Rest::Unclear(end),
        Some(end) => Rest::Lines(end),
    }
}

/// Reads the hunk whose `@@` line is at `at`; returns it and the line after
/// it. Its lines are those that start with ` `, `-`, `+` or `\` (and empty
/// lines among them, as empty context). The counts of the `@@` line are
/// not trusted to end it: where they are met (or absent) at a blank line,
/// the lines after it that can be a hunk's are its lines ([`Rest`]), and
/// where those read as a Markdown list it is an error, never half a hunk.
/// A signature (`-- `) ends a hunk that has all its lines, and a
/// `---`/`+++` pair is a removed and an added line only while the counts
/// say lines remain.
fn hunk(lines: &[Line<'_>], at: usize, indent: usize, out: &mut Vec<Diagnostic>) -> (Hunk, usize) {
    let header = lines[at];
    let head = body(header, indent).unwrap_or_default();
    let nums = numbers(head);
    let (mut old_left, mut new_left) = nums.map_or((usize::MAX, usize::MAX), |n| (n.1, n.3));
    let counted = |o: usize, n: usize| o == 0 && n == 0;
    // First the extent, so that each text is allocated once.
    let mut end = at + 1;
    let (mut old_size, mut new_size) = (0, 0);
    let mut pending_blank = 0;
    // Where the lines after a blank line, taken as the hunk's, end.
    let mut until: Option<usize> = None;
    while let Some(b) = body_at(lines, end, indent) {
        if until == Some(end) {
            break;
        }
        let done = counted(old_left, new_left);
        let Some(&first) = b.as_bytes().first() else {
            if (done || nums.is_none()) && until.is_none() {
                match rest_of_hunk(lines, end, indent) {
                    Rest::None => break,
                    Rest::Lines(k) => until = Some(k),
                    Rest::Unclear(k) => {
                        until = Some(k);
                        let first_line = (end..k)
                            .find(|&j| body_at(lines, j, indent).is_some_and(|b| !b.is_empty()))
                            .map_or(lines[end].span(), |j| lines[j].span());
                        out.push(
                            Diagnostic::new(
                                K::MalformedMarker,
                                first_line,
                                "after a blank line, this hunk goes on with lines that read as a list (`- item`, `+ item`): clada cannot tell whether they are the hunk's removed and added lines or prose",
                            )
                            .with_label(header.span(), "the hunk")
                            .with_help("write an empty context line as a single space, and put the diff in a ```diff fence with the prose outside it"),
                        );
                    }
                }
            }
            pending_blank += 1;
            end += 1;
            continue;
        };
        let file_header = b.starts_with(OLD)
            && body_at(lines, end + 1, indent).is_some_and(|n| n.starts_with(NEW));
        if (file_header && (done || nums.is_none())) || (done && b == "-- ") {
            break;
        }
        let side = match first {
            b' ' => Side::Both,
            b'-' => Side::Old,
            b'+' => Side::New,
            NO_NEWLINE if pending_blank == 0 => {
                end += 1;
                continue;
            }
            _ => break,
        };
        // Blank lines before a hunk line are empty context.
        for _ in 0..pending_blank {
            old_size += 1;
            new_size += 1;
            old_left = old_left.saturating_sub(1);
            new_left = new_left.saturating_sub(1);
        }
        pending_blank = 0;
        let n = b.len();
        if side != Side::New {
            old_size += n;
            old_left = old_left.saturating_sub(1);
        }
        if side != Side::Old {
            new_size += n;
            new_left = new_left.saturating_sub(1);
        }
        end += 1;
    }
    // Blank lines at the end belong to what follows.
    let end = end - pending_blank;
    let mut h = Hunk {
        span: Span::new(header.start, lines[end - 1].span().end),
        header: header.span(),
        lines: if end > at + 1 {
            Span::new(lines[at + 1].start, lines[end - 1].span().end)
        } else {
            Span::empty(header.span().end)
        },
        old: String::with_capacity(old_size),
        new: String::with_capacity(new_size),
        changes: false,
        line: nums.map(|(_, _, c, d)| {
            if d == 0 {
                c.saturating_add(1)
            } else {
                c.max(1)
            }
        }),
        from_empty: nums.is_some_and(|(a, b, _, _)| a == 0 && b == 0),
        at_end: false,
        kept: crate::syntax::Kept::default(),
    };
    let mut last = None;
    let (mut old_ended, mut new_ended) = (false, false);
    for &line in &lines[at + 1..end] {
        let b = body(line, indent).unwrap_or_default();
        let (side, text) = match b.as_bytes().first() {
            None => (Side::Both, ""),
            Some(b' ') => (Side::Both, &b[1..]),
            Some(b'-') => (Side::Old, &b[1..]),
            Some(b'+') => (Side::New, &b[1..]),
            _ => {
                // `\ No newline at end of file`: the line before it ends
                // its file without a line break.
                match last {
                    Some(side) => {
                        if side != Side::New && h.old.pop().is_some() {
                            old_ended = true;
                        }
                        if side != Side::Old && h.new.pop().is_some() {
                            new_ended = true;
                        }
                    }
                    None => out.push(
                        Diagnostic::new(
                            K::MalformedMarker,
                            line.span(),
                            "`\\ No newline at end of file` must follow the line it is about",
                        )
                        .with_help("put it right after the last line of the file"),
                    ),
                }
                last = None;
                continue;
            }
        };
        if (side != Side::New && old_ended) || (side != Side::Old && new_ended) {
            out.push(
                Diagnostic::new(
                    K::MalformedMarker,
                    line.span(),
                    "this line follows the end of its file (`\\ No newline at end of file` came before it)",
                )
                .with_help("`\\ No newline at end of file` goes after the file's last line only"),
            );
        }
        if side != Side::New {
            h.old.push_str(text);
            h.old.push('\n');
        }
        if side != Side::Old {
            h.new.push_str(text);
            h.new.push('\n');
        }
        h.changes |= side != Side::Both;
        h.kept.push(side != Side::New, side != Side::Old);
        last = Some(side);
    }
    h.at_end = old_ended || new_ended;
    (h, end)
}

/// What a file's diff does to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    Modify,
    Create,
    Delete,
}

/// What a file's headers say.
#[derive(Debug, Default)]
struct Headers<'a> {
    /// From `---` (`None`: `/dev/null` or no such line).
    old: Option<Named<'a>>,
    new: Option<Named<'a>>,
    /// `---`/`+++` lines were read, one of them `/dev/null`.
    dev_null_old: bool,
    dev_null_new: bool,
    /// From `diff --git a/x b/y`, when it can be split.
    git_names: Option<(Named<'a>, Named<'a>)>,
    new_file: Option<Span>,
    deleted_file: Option<Span>,
    rename_from: Option<Named<'a>>,
    rename_to: Option<Named<'a>>,
    /// Lines clada does not carry out.
    unsupported: Vec<(Span, &'static str)>,
    modes: Vec<Span>,
}

/// The two names of `diff --git a/x b/y`: split where the halves are the
/// same file (git's own rule for names with spaces), else at ` b/`.
fn git_names(rest: &str, at: usize) -> Option<(Named<'_>, Named<'_>)> {
    if rest.starts_with('"') {
        let (a, len) = unquote(rest).ok()?;
        let tail = rest.get(len..)?.strip_prefix(' ')?;
        let b_at = at + len + 1;
        let b = if tail.starts_with('"') {
            let (b, blen) = unquote(tail).ok()?;
            strip_prefix(b, Span::new(b_at, b_at + blen), "b/")
        } else {
            strip_prefix(
                Cow::Borrowed(tail),
                Span::new(b_at, b_at + tail.len()),
                "b/",
            )
        };
        let a = strip_prefix(a, Span::new(at, at + len), "a/");
        return Some((a, b));
    }
    let n = rest.len();
    let split = if n % 2 == 1 && rest.as_bytes()[n / 2] == b' ' {
        let (a, b) = (&rest[..n / 2], &rest[n / 2 + 1..]);
        let same = a
            .strip_prefix("a/")
            .zip(b.strip_prefix("b/"))
            .is_some_and(|(x, y)| x == y);
        (same || a == b).then_some(n / 2)
    } else {
        None
    };
    let split = split.or_else(|| rest.find(" b/"))?;
    let (a, b) = (&rest[..split], &rest[split + 1..]);
    let b_at = at + split + 1;
    Some((
        strip_prefix(Cow::Borrowed(a), Span::new(at, at + a.len()), "a/"),
        strip_prefix(Cow::Borrowed(b), Span::new(b_at, b_at + b.len()), "b/"),
    ))
}

/// How each of git's extended header lines starts: what [`extended`]
/// reads after `diff --git` (and what a stream lets go on a file's diff).
pub(crate) const EXTENDED: [&str; 13] = [
    "index ",
    "new file mode ",
    "deleted file mode ",
    "old mode ",
    "new mode ",
    "similarity index ",
    "dissimilarity index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "Binary files ",
    "GIT binary patch",
];

/// Reads git's extended headers from line `j`; returns the line after them.
fn extended<'a>(lines: &[Line<'a>], mut j: usize, indent: usize, h: &mut Headers<'a>) -> usize {
    while let Some(b) = body_at(lines, j, indent) {
        let line = lines[j];
        let at = line.start + (line.text.len() - b.len());
        let value = |key: &str| b.strip_prefix(key).map(|v| (v, at + key.len()));
        let named = |v: &'a str, at: usize| -> Option<Named<'a>> {
            if v.starts_with('"') {
                let (p, len) = unquote(v).ok()?;
                Some(Named {
                    path: p,
                    span: Span::new(at, at + len),
                })
            } else {
                Some(Named {
                    path: Cow::Borrowed(v),
                    span: Span::new(at, at + v.len()),
                })
            }
        };
        let mode_kind = |m: &str| match m.trim() {
            "120000" => Some("a symbolic link"),
            "160000" => Some("a submodule"),
            _ => None,
        };
        if let Some((m, _)) = value("new file mode ") {
            h.new_file = Some(line.span());
            if let Some(what) = mode_kind(m) {
                h.unsupported.push((line.span(), what));
            } else if m.trim() != "100644" {
                h.modes.push(line.span());
            }
        } else if let Some((m, _)) = value("deleted file mode ") {
            h.deleted_file = Some(line.span());
            if let Some(what) = mode_kind(m) {
                h.unsupported.push((line.span(), what));
            }
        } else if let Some((m, _)) = value("new mode ") {
            match mode_kind(m) {
                Some(what) => h.unsupported.push((line.span(), what)),
                None => h.modes.push(line.span()),
            }
        } else if let Some((m, _)) = value("old mode ") {
            if let Some(what) = mode_kind(m) {
                h.unsupported.push((line.span(), what));
            }
        } else if let Some((v, at)) = value("rename from ") {
            h.rename_from = named(v, at);
        } else if let Some((v, at)) = value("rename to ") {
            h.rename_to = named(v, at);
        } else if value("copy from ").is_some() {
            h.unsupported.push((line.span(), "a copy"));
        } else if b.starts_with("copy to ")
            || b.starts_with("similarity index ")
            || b.starts_with("dissimilarity index ")
            || b.starts_with("index ")
        {
        } else if b.starts_with("Binary files ") {
            h.unsupported.push((line.span(), "a binary file"));
        } else if b == "GIT binary patch" {
            h.unsupported.push((line.span(), "a binary file"));
            // Its data: a `literal` or `delta` block, then maybe another
            // (the reverse), each ending at a blank line.
            while body_at(lines, j + 1, indent)
                .is_some_and(|n| n.starts_with("literal ") || n.starts_with("delta "))
            {
                j += 1;
                while body_at(lines, j + 1, indent).is_some_and(|n| !n.is_empty()) {
                    j += 1;
                }
                j += 1;
            }
        } else {
            break;
        }
        j += 1;
    }
    j
}

/// The section of one file from line `i`: a TASKS block, and the line
/// after it.
struct Section<'a> {
    unit: Unit<'a>,
    /// Where its hunks go: the path and its attribute, when later hunks
    /// without a header may follow it (a changed file, not a new or
    /// deleted one).
    carry: Option<Attribute<'a>>,
    next: usize,
}

fn section<'a>(
    cx: &Context<'a>,
    lines: &[Line<'a>],
    i: usize,
    indent: usize,
    git: bool,
    out: &mut Vec<Diagnostic>,
) -> Section<'a> {
    let first = lines[i];
    let mut heads = Headers::default();
    let mut j = i;
    if git {
        let b = body(first, indent).unwrap_or_default();
        let at = first.start + indent + GIT.len();
        heads.git_names = git_names(&b[GIT.len()..], at);
        j = extended(lines, i + 1, indent, &mut heads);
    }
    if let (Some(a), Some(b)) = (body_at(lines, j, indent), body_at(lines, j + 1, indent))
        && a.starts_with(OLD)
        && b.starts_with(NEW)
    {
        for (k, text, prefix, marker) in [(j, a, "a/", OLD), (j + 1, b, "b/", NEW)] {
            let line = lines[k];
            let at = line.start + (line.text.len() - text.len()) + marker.len();
            match header_path(&text[marker.len()..], at, prefix) {
                Ok(named) => {
                    let dev_null = named.is_none();
                    if marker == OLD {
                        heads.old = named;
                        heads.dev_null_old = dev_null;
                    } else {
                        heads.new = named;
                        heads.dev_null_new = dev_null;
                    }
                }
                Err(why) => out.push(
                    Diagnostic::new(K::MalformedMarker, line.span(), format!("{why}: this file header cannot be read"))
                        .with_help("write the path as it is, or quoted as git quotes it (`\"a/caf\\303\\251.txt\"`)"),
                ),
            }
        }
        j += 2;
    }
    let header_end = j;
    // The hunks are read where they are lowered, one at a time: a file's
    // hunks are never all held beside its tasks.
    let hunks_from = j;
    let opener = first.span();
    let change = if heads.new_file.is_some() || heads.dev_null_old {
        Change::Create
    } else if heads.deleted_file.is_some() || heads.dev_null_new {
        Change::Delete
    } else {
        Change::Modify
    };
    for (at, what) in &heads.unsupported {
        out.push(
            Diagnostic::new(
                K::UnsupportedChange,
                *at,
                format!("this diff changes {what}, which clada does not do"),
            )
            .with_help("send text files only: as a diff of their lines, or as a new file"),
        );
    }
    for at in &heads.modes {
        out.push(
            Diagnostic::new(
                K::IgnoredMode,
                *at,
                "clada does not change file modes: this mode is not set",
            )
            .with_help("set the mode with a command (`chmod`) if it matters"),
        );
    }
    // The paths: where the hunks go, where a rename comes from.
    let git_old = heads.git_names.as_ref().map(|(a, _)| a.clone());
    let git_new = heads.git_names.as_ref().map(|(_, b)| b.clone());
    let target = match change {
        Change::Delete => heads
            .old
            .clone()
            .or(heads.rename_from.clone())
            .or(git_old.clone()),
        _ => heads
            .rename_to
            .clone()
            .or(heads.new.clone())
            .or(git_new.clone()),
    };
    let renamed_from = match (&heads.rename_from, &heads.rename_to) {
        (Some(from), Some(_)) => Some(from.clone()),
        (Some(_), None) | (None, Some(_)) => {
            out.push(
                Diagnostic::new(
                    K::MissingAttribute,
                    opener,
                    "a rename needs both `rename from` and `rename to`",
                )
                .with_help(
                    "name the old path after `rename from ` and the new one after `rename to `",
                ),
            );
            None
        }
        (None, None) => {
            // Without git's rename lines, `---` and `+++` must name one
            // file.
            if let (Some(a), Some(b)) = (&heads.old, &heads.new)
                && a.path != b.path
            {
                out.push(
                    Diagnostic::new(
                        K::InvalidAttributeValue,
                        b.span,
                        format!(
                            "the `---` line names `{}` and the `+++` line `{}`: which file is changed?",
                            a.path, b.path
                        ),
                    )
                    .with_label(a.span, "the old name")
                    .with_help("name the same file on both lines; a rename is `diff --git`, `rename from OLD` and `rename to NEW`"),
                );
            }
            None
        }
    };
    let Some(target) = target else {
        out.push(
            Diagnostic::new(K::MissingAttribute, opener, "this diff names no file")
                .with_help("start a file's diff with `--- a/PATH` and `+++ b/PATH`"),
        );
        let j = read_hunks(lines, hunks_from, indent, out, |_, _| {});
        let span = Span::new(first.start, lines[j.max(i + 1) - 1].span().end);
        return Section {
            unit: block(span, opener, Vec::new()),
            carry: None,
            next: j.max(i + 1),
        };
    };
    // One check of each path, shared by the tasks that name it.
    let attr = |name: &'static str, n: &Named<'a>, out: &mut Vec<Diagnostic>| {
        let a = Attribute::implied(name, n.path.clone(), n.span);
        let place = crate::syntax::check_path_attribute(cx, &a, out);
        let ok = place.is_some();
        (
            a,
            ok,
            crate::syntax::TaskPath::resolved(n.path.clone(), place),
        )
    };
    let (path, path_ok, target_path) = attr("path", &target, out);
    let mut tasks = Vec::new();
    let header_span = Span::new(first.start, lines[header_end.max(i + 1) - 1].span().end);
    let bad_hunk = |h: &Hunk, why: &'static str, help: &'static str, out: &mut Vec<Diagnostic>| {
        super::push_tight(
            out,
            Diagnostic::new(K::MalformedMarker, h.header, why).with_help(help),
        );
    };
    if let Some(from) = &renamed_from {
        let (from_attr, from_ok, from_path) = attr("from", from, out);
        let mut to = path.clone();
        to.name = "to";
        let op = Op::Move {
            from: from_path,
            to: target_path.clone(),
        };
        tasks.push(task(
            TaskKind::Move,
            header_span,
            opener,
            vec![from_attr, to],
            (from_ok && path_ok).then_some(op),
        ));
    }
    match change {
        Change::Create => {
            let mut content = String::new();
            j = read_hunks(lines, hunks_from, indent, out, |h, out| {
                if !h.old.is_empty() {
                    bad_hunk(
                        &h,
                        "a new file's hunk has context or removed lines",
                        "a new file's lines all start with `+`",
                        out,
                    );
                }
                content.push_str(&h.new);
            });
            content.shrink_to_fit();
            let span = Span::new(first.start, lines[j.max(i + 1) - 1].span().end);
            let op = Op::Write {
                path: target_path.clone(),
                append: false,
                content: Cow::Owned(content),
            };
            tasks.push(task(
                TaskKind::Write,
                span,
                opener,
                vec![path.clone()],
                path_ok.then_some(op),
            ));
        }
        Change::Modify | Change::Delete => {
            let mut hunks = 0;
            j = read_hunks(lines, hunks_from, indent, out, |mut h, out| {
                hunks += 1;
                let h = &mut h;
                if change == Change::Delete && !h.new.is_empty() {
                    bad_hunk(
                        h,
                        "a deleted file's hunk keeps or adds lines",
                        "a deleted file's lines all start with `-`",
                        out,
                    );
                }
                let op = if !h.changes {
                    bad_hunk(
                        h,
                        "this hunk changes nothing (no line starts with `-` or `+`)",
                        "mark removed lines with `-` and added lines with `+`, or leave the hunk out",
                        out,
                    );
                    None
                } else if h.old.is_empty() {
                    if h.from_empty || h.line.is_none() {
                        // `@@ -0,0 +1,N @@`, or no numbers: lines for an
                        // empty file (the block's rules refuse a file
                        // that is not).
                        Some((
                            TaskKind::Write,
                            Op::Write {
                                path: target_path.clone(),
                                append: true,
                                content: Cow::Owned(std::mem::take(&mut h.new)),
                            },
                        ))
                    } else {
                        bad_hunk(
                            h,
                            "this hunk only adds lines, with no context: it cannot be found by its text",
                            "include a few unchanged lines around the added ones, as context lines starting with a space",
                            out,
                        );
                        None
                    }
                } else {
                    Some((TaskKind::Search, edit(&target_path, h)))
                };
                let kind = op.as_ref().map_or(TaskKind::Search, |(k, _)| *k);
                let op = op.map(|(_, o)| o).filter(|_| path_ok);
                let mut t = task(kind, h.span, h.header, vec![path.clone()], op);
                t.sections = vec![h.lines];
                super::push_tight(&mut tasks, t);
            });
            if change == Change::Delete {
                let op = Op::Remove {
                    path: target_path.clone(),
                };
                tasks.push(task(
                    TaskKind::Remove,
                    header_span,
                    opener,
                    vec![path.clone()],
                    path_ok.then_some(op),
                ));
            } else if hunks == 0
                && renamed_from.is_none()
                && heads.modes.is_empty()
                && heads.unsupported.is_empty()
            {
                out.push(
                    Diagnostic::new(K::MissingSection, opener, format!("the diff of `{}` has no hunk", target.path))
                        .with_help("follow the file's header with hunks: an `@@ ... @@` line, then lines starting with ` `, `-` or `+`"),
                );
            }
        }
    }
    tasks.shrink_to_fit();
    let span = Span::new(first.start, lines[j.max(i + 1) - 1].span().end);
    let carry = (change == Change::Modify && path_ok).then(|| path.clone());
    Section {
        unit: block(span, opener, tasks),
        carry,
        next: j.max(i + 1),
    }
}

/// Reads the hunks from line `j` on, handing each to `each` as it is read:
/// the line after the last.
fn read_hunks(
    lines: &[Line<'_>],
    mut j: usize,
    indent: usize,
    out: &mut Vec<Diagnostic>,
    mut each: impl FnMut(Hunk, &mut Vec<Diagnostic>),
) -> usize {
    while body_at(lines, j, indent).is_some_and(|b| b.starts_with(HUNK)) {
        let (h, next) = hunk(lines, j, indent, out);
        each(h, out);
        j = next;
    }
    j
}

/// The SEARCH a hunk lowers to: its old text, found once, replaced by its
/// new text; among several equal candidates, the one nearest the hunk's
/// line (PROTOCOL §3). The hunk's texts move into it.
fn edit<'a>(path: &crate::syntax::TaskPath<'a>, h: &mut Hunk) -> Op<'a> {
    Op::Edit {
        path: path.clone(),
        count: Count::default(),
        // `git apply` compares whole lines; a line without its line
        // break is the file's last.
        // Context lines keep the file's bytes where the white-space tier
        // found them.
        matching: Matching {
            at_end: h.at_end,
            kept: h
                .kept
                .any()
                .then(|| std::sync::Arc::new(std::mem::take(&mut h.kept))),
            ..Matching::lines(Policy::Clada, h.line.and_then(NonZeroUsize::new))
        },
        search: Cow::Owned(std::mem::take(&mut h.old)),
        replace: Cow::Owned(std::mem::take(&mut h.new)),
    }
}

fn task<'a>(
    kind: TaskKind,
    span: Span,
    opener: Span,
    attributes: Vec<Attribute<'a>>,
    op: Option<Op<'a>>,
) -> Task<'a> {
    Task {
        number: 0,
        block: 0,
        kind,
        fence: crate::syntax::MIN_FENCE,
        span,
        opener,
        attributes,
        sections: Vec::new(),
        closer: None,
        op,
    }
}

fn block<'a>(span: Span, opener: Span, tasks: Vec<Task<'a>>) -> Unit<'a> {
    Unit::Block(Block {
        number: 0,
        span,
        opener,
        fence: crate::syntax::MIN_FENCE,
        attributes: Vec::new(),
        version: None,
        tasks,
        closer: None,
        // A file's hunks stand together, as `git apply` applies a file;
        // a new file or a rename lands only where nothing is.
        rules: BlockRules {
            all_or_none: true,
            files_only: true,
            create_only: true,
            remove_emptied: true,
            ordered: true,
            ..BlockRules::default()
        },
    })
}

/// Reads `source` as unified diffs: each file's diff a TASKS block,
/// everything else prose.
pub(crate) fn parse(source: &str, options: ParseOptions) -> Document<'_> {
    let cx = Context::new(source, options);
    let lines = lines(source);
    // A file's section has a `+++` line (or its diff is under 64 bytes):
    // the blocks, counted once, so that they are not moved as they grow.
    let files = memchr::memmem::find_iter(source.as_bytes(), "\n+++ ").count();
    let mut units: Vec<Unit<'_>> = Vec::with_capacity(files.min(source.len() / 64) + 1);
    let mut out = Vec::new();
    // Where hunks without a header of their own go: the last changed file.
    let mut carry: Option<Attribute<'_>> = None;
    let mut i = 0;
    while i < lines.len() {
        if let Some((indent, git)) = section_start(&lines, i) {
            let s = section(&cx, &lines, i, indent, git, &mut out);
            units.push(s.unit);
            carry = s.carry;
            i = s.next;
            continue;
        }
        let line = lines[i];
        let t = line.text.trim_start_matches(' ');
        let indent = line.text.len() - t.len();
        let hunk_follows = body_at(&lines, i + 1, indent)
            .and_then(|b| b.bytes().next())
            .is_some_and(|c| matches!(c, b' ' | b'-' | b'+'));
        if !(t.starts_with(HUNK) && hunk_follows && indent <= MAX_INDENT) {
            // A codex patch's header in the prose: the hunks after it are
            // the patch's, not the last file's.
            let t = t.trim_end();
            if super::codex::is_begin(t) || super::codex::is_file_operation(t) {
                carry = None;
            }
            i += 1;
            continue;
        }
        // A hunk after prose, without a header of its own.
        let (mut h, next) = hunk(&lines, i, indent, &mut out);
        match (&carry, units.last_mut()) {
            (Some(path), Some(Unit::Block(b))) => {
                let op = if h.old.is_empty() || !h.changes {
                    out.push(
                        Diagnostic::new(
                            K::MalformedMarker,
                            h.header,
                            "this hunk has no removed or context lines to be found by",
                        )
                        .with_help("include a few unchanged lines around the change, as context lines starting with a space"),
                    );
                    None
                } else {
                    // The file before it passed the checks (only such a
                    // file is carried): its place is its path's.
                    let place = crate::syntax::resolve_path(&path.value, cx.opts.allow_escape).ok();
                    let p = crate::syntax::TaskPath::resolved(path.value.clone(), place);
                    Some(edit(&p, &mut h))
                };
                let mut t = task(TaskKind::Search, h.span, h.header, vec![path.clone()], op);
                t.sections = vec![h.lines];
                b.span = Span::new(b.span.start, h.span.end);
                b.tasks.push(t);
            }
            _ => out.push(
                Diagnostic::new(K::MissingAttribute, h.header, "this hunk names no file")
                    .with_help("put the file's header before it: `--- a/PATH`, then `+++ b/PATH`"),
            ),
        }
        i = next;
    }
    super::codex::number(&mut units, &mut out);
    // A block with an error runs nothing: its tasks carry no operation.
    let mut broken = vec![false; units.len() + 1];
    for d in out.iter().filter(|d| d.is_error()) {
        if let Some(b) = d.block.and_then(|b| broken.get_mut(b)) {
            *b = true;
        }
    }
    for u in &mut units {
        if let Unit::Block(b) = u
            && broken.get(b.number).copied().unwrap_or(false)
        {
            b.tasks.iter_mut().for_each(|t| t.op = None);
        }
    }
    if units.is_empty() && out.is_empty() {
        out.push(
            Diagnostic::new(
                K::NoTasks,
                Span::empty(0),
                "the document has no unified diff",
            )
            .with_help(
                "a file's diff starts with `--- a/PATH` and `+++ b/PATH`, then `@@ ... @@` hunks",
            ),
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

    /// Each line [`EXTENDED`] names is read as a header, none left over.
    #[test]
    fn every_extended_header_is_read_as_one() {
        for h in EXTENDED {
            // A header with a value has one; `GIT binary patch` is whole.
            let value = if h.ends_with(' ') { "x" } else { "" };
            let text = format!("{h}{value}\n");
            let lines = lines(&text);
            let mut heads = Headers::default();
            assert_eq!(extended(&lines, 0, 0, &mut heads), 1, "{h}");
        }
    }
    use crate::dialect::testing::{self, edit, edit_at_end};

    /// The operations of `src`, without their line hints (see
    /// `lines_of`).
    fn ops(src: &str) -> (Vec<Op<'_>>, Vec<Diagnostic>) {
        testing::ops(parse(src, ParseOptions::default()))
    }

    fn lines_of(src: &str) -> Vec<Option<usize>> {
        testing::line_hints(&parse(src, ParseOptions::default()))
    }

    #[test]
    fn every_header_form_names_the_same_file() {
        for (old, new) in [
            ("a/src/x.py", "b/src/x.py"),
            ("src/x.py", "src/x.py"),
            (
                "a/src/x.py\t2024-01-31 10:00:00.0 +0100",
                "b/src/x.py\t(revision 3)",
            ),
            (
                "src/x.py 2024-01-31 10:00:00.000000000 +0100",
                "src/x.py  2024-02-01 09:30:00 -0500",
            ),
            ("\"a/src/x.py\"", "\"b/src/x.py\""),
        ] {
            let src = format!("--- {old}\n+++ {new}\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
            let (ops, ds) = ops(&src);
            assert!(ds.is_empty(), "{src}\n{ds:?}");
            assert_eq!(ops, vec![edit("src/x.py", "a\nb\n", "a\nc\n")], "{src}");
        }
    }

    #[test]
    fn quoted_paths_are_unquoted_as_git_writes_them() {
        let (p, len) = unquote("\"a/caf\\303\\251 \\\"x\\\".txt\" rest").unwrap_or_default();
        assert_eq!((p.as_ref(), len), ("a/café \"x\".txt", 25));
        assert!(unquote("\"a/\\3\"").is_err());
        assert!(unquote("\"open").is_err());
        assert_eq!(timestamp_at("notes 2024-01-31.txt"), None);
        assert_eq!(timestamp_at("a b 2024-01-31 10:00"), Some(3));
    }

    #[test]
    fn a_hunk_carries_the_line_it_starts_at_in_the_file_its_hunks_before_left() {
        // The `+` start: where the hunk's text is once the hunks before it
        // in the file are applied; one past it when the hunk leaves no
        // line; none without numbers.
        let src = "--- a/x\n+++ b/x\n@@ -3,2 +3,3 @@\n a\n+b\n c\n@@ -20,2 +21,0 @@\n-d\n-e\n@@ @@\n-f\n+g\n";
        assert_eq!(lines_of(src), [Some(3), Some(22), None]);
        // A number at the end of usize's range is a hint, not an overflow.
        let huge = format!("--- a/x\n+++ b/x\n@@ -1 +{},0 @@\n-a\n", usize::MAX);
        assert_eq!(lines_of(&huge), [Some(usize::MAX)]);
    }

    #[test]
    fn hunks_are_found_by_their_lines_not_their_numbers() {
        // No numbers, aider's `@@ ... @@`, and counts that are wrong both
        // ways: the lines decide.
        for head in [
            "@@ @@",
            "@@ ... @@",
            "@@",
            "@@ -1,1 +1,1 @@",
            "@@ -90,9 +90,9 @@ fn f()",
        ] {
            let src = format!("--- a/x\n+++ b/x\n{head}\n a\n-b\n+c\n d\n");
            let (ops, ds) = ops(&src);
            assert!(ds.is_empty(), "{src}\n{ds:?}");
            assert_eq!(ops, vec![edit("x", "a\nb\nd\n", "a\nc\nd\n")], "{head}");
        }
    }

    #[test]
    fn a_hunk_keeps_the_line_it_names_for_choosing_between_candidates() {
        let lines = lines("@@ -10,3 +12,4 @@\n a\n+b\n c\n@@ -20,2 +23,0 @@\n-x\n-y\n@@ @@\n-z\n");
        let mut out = Vec::new();
        let (h, next) = hunk(&lines, 0, 0, &mut out);
        assert_eq!((h.line, next), (Some(12), 4));
        let (h, next) = hunk(&lines, 4, 0, &mut out);
        assert_eq!((h.line, next), (Some(24), 7));
        let (h, _) = hunk(&lines, 7, 0, &mut out);
        assert_eq!(h.line, None);
        assert!(out.is_empty());
    }

    #[test]
    fn blank_lines_are_empty_context_inside_a_hunk_only() {
        let src =
            "```diff\n--- a/x\n+++ b/x\n@@ ... @@\n a\n\n-b\n+c\n\n```\n\n- a bullet of prose\n";
        let (got, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(got, vec![edit("x", "a\n\nb\n", "a\n\nc\n")]);
        // Once a hunk has all the lines its counts say, a blank line
        // followed by prose, a header or `@@`, or a signature, ends it.
        for after in ["Done.\n", "--- a/y\n+++ b/y\n@@ @@\n-p\n+q\n", "```\n"] {
            let src = format!("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\n{after}");
            assert_eq!(ops(&src).0[0], edit("x", "a\nb\n", "a\nc\n"), "{after}");
            assert!(ops(&src).1.is_empty(), "{after}");
        }
        let src = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n-- \n2.40.0\n";
        assert_eq!(ops(src).0, vec![edit("x", "a\nb\n", "a\nc\n")]);
        // A list after the blank line may be the hunk's or prose: an
        // error of the hunk's file, never half a hunk.
        let src = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\n- not a line of the hunk\n-- \n2.40.0\n";
        let (got, ds) = ops(src);
        assert_eq!(
            ds.iter().map(|d| d.kind).collect::<Vec<_>>(),
            [K::MalformedMarker]
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn counts_too_small_never_cut_a_hunk_at_an_empty_context_line() {
        // The counts say 2 lines; the hunk has 4 old and 4 new, one of
        // them an empty context line written without its space.
        let tail = " def g():\n-    return 3\n+    return 4\n";
        let want = edit(
            "x.py",
            "def f():\n    return 1\n\ndef g():\n    return 3\n",
            "def f():\n    return 2\n\ndef g():\n    return 4\n",
        );
        for (head, end) in [
            ("@@ -1,2 +1,2 @@", ""),
            ("@@ -1,2 +1,2 @@", "\nDone.\n"),
            ("@@ -1,3 +1,3 @@", "```\n"),
            ("@@ @@", ""),
        ] {
            let src = format!(
                "--- a/x.py\n+++ b/x.py\n{head}\n def f():\n-    return 1\n+    return 2\n\n{tail}{end}"
            );
            let (got, ds) = ops(&src);
            assert!(ds.is_empty(), "{src}\n{ds:?}");
            assert_eq!(got, vec![want.clone()], "{src}");
        }
    }

    #[test]
    fn a_file_header_inside_a_hunk_is_lines_while_the_counts_say_so() {
        // Removing `-- x` and adding `++ y` reads as a `---`/`+++` pair.
        let src = "--- a/f.sql\n+++ b/f.sql\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n a\n";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(ops, vec![edit("f.sql", "-- x\na\n", "++ y\na\n")]);
    }

    #[test]
    fn a_hunk_s_context_lines_are_its_kept_lines() {
        let src = "--- a/x\n+++ b/x\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n+C\n\n d\n";
        let doc = parse(src, ParseOptions::default());
        let kept: Vec<Vec<(usize, usize)>> = doc
            .tasks()
            .filter_map(|t| match &t.op {
                Some(Op::Edit { matching, .. }) => Some(matching.kept.as_ref()?.pairs().collect()),
                _ => None,
            })
            .collect();
        // `a`, the empty line and `d`: lines 0, 2, 3 of the old side, 0,
        // 3, 4 of the new.
        assert_eq!(kept, [vec![(0, 0), (2, 3), (3, 4)]]);
    }

    #[test]
    fn no_newline_at_end_of_file_takes_the_line_break_off_its_side() {
        let src = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
        assert_eq!(ops(src).0, vec![edit_at_end("x", "a\nb", "a\nb\n")]);
        let src = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\\ Kein Zeilenumbruch am Dateiende.\n";
        assert_eq!(ops(src).0, vec![edit_at_end("x", "a\n", "b")]);
        let src = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n\\ No newline at end of file\n";
        assert_eq!(ops(src).1[0].kind, K::MalformedMarker);
        let src = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+c\n";
        assert_eq!(ops(src).1[0].kind, K::MalformedMarker);
    }

    #[test]
    fn git_sections_create_delete_rename_and_warn_of_modes() {
        let src = "diff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\ndiff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\ndiff --git a/old.txt b/old.txt\ndeleted file mode 100644\nindex 5626abf..0000000\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\ndiff --git a/a b.txt b/c d.txt\nsimilarity index 90%\nrename from a b.txt\nrename to c d.txt\nindex 1..2 100644\n--- a/a b.txt\n+++ b/c d.txt\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
        let doc = parse(src, ParseOptions::default());
        let (ops, _) = ops(src);
        assert_eq!(
            ops,
            vec![
                Op::Write {
                    path: "new.txt".into(),
                    append: false,
                    content: "one\ntwo\n".into()
                },
                Op::Write {
                    path: "empty".into(),
                    append: false,
                    content: "".into()
                },
                edit("old.txt", "gone\n", ""),
                Op::Remove {
                    path: "old.txt".into()
                },
                Op::Move {
                    from: "a b.txt".into(),
                    to: "c d.txt".into()
                },
                edit("c d.txt", "x\n", "y\n"),
            ]
        );
        assert_eq!(doc.units.len(), 5);
        let kinds: Vec<_> = doc
            .diagnostics
            .iter()
            .map(|d| (d.kind, d.is_error()))
            .collect();
        assert_eq!(kinds, vec![(K::IgnoredMode, false)]);
        assert!(
            doc.units
                .iter()
                .all(|u| matches!(u, Unit::Block(b) if b.rules.all_or_none))
        );
    }

    #[test]
    fn what_clada_does_not_do_is_an_error_of_its_file_only() {
        let src = "diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\ndiff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\ndiff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\ndiff --git a/ok b/ok\n--- a/ok\n+++ b/ok\n@@ @@\n-a\n+b\n";
        let doc = parse(src, ParseOptions::default());
        let errors: Vec<_> = doc
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| (d.kind, d.block))
            .collect();
        assert_eq!(
            errors,
            vec![
                (K::UnsupportedChange, Some(1)),
                (K::UnsupportedChange, Some(2)),
                (K::UnsupportedChange, Some(3)),
            ]
        );
        let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.clone()).collect();
        assert_eq!(ops, vec![edit("ok", "a\n", "b\n")]);
    }

    #[test]
    fn near_misses_are_errors_not_prose() {
        let cases = [
            ("@@ -1 +1 @@\n-a\n+b\n", K::MissingAttribute),
            ("--- a/x\n+++ b/x\nno hunk here\n", K::MissingSection),
            ("--- a/x\n+++ b/x\n@@ @@\n a\n b\n", K::MalformedMarker),
            (
                "--- a/x\n+++ b/x\n@@ -3,0 +4 @@\n+only added\n",
                K::MalformedMarker,
            ),
            (
                "--- a/x\n+++ b/y\n@@ @@\n-a\n+b\n",
                K::InvalidAttributeValue,
            ),
            (
                "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ @@\n-root\n+toor\n",
                K::PathEscape,
            ),
            (
                "--- a/.git/config\n+++ b/.git/config\n@@ @@\n-a\n+b\n",
                K::ProtectedPath,
            ),
            ("--- a/x\0\n+++ b/x\0\n@@ @@\n-a\n+b\n", K::PathEscape),
        ];
        for (src, kind) in cases {
            let doc = parse(src, ParseOptions::default());
            assert_eq!(
                doc.diagnostics.first().map(|d| d.kind),
                Some(kind),
                "{src:?}: {:?}",
                doc.diagnostics
            );
            assert!(doc.tasks().all(|t| t.op.is_none()), "{src:?}");
        }
    }

    #[test]
    fn prose_and_fences_around_diffs_are_passed_over() {
        let src = "Here you go:\n\n```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```\n\nThen, later in the same file:\n\n```diff\n@@ -9 +9 @@\n-c\n+d\n```\n\n1. And in a list:\n\n   ```diff\n   --- y\n   +++ y\n   @@ ... @@\n    keep\n   -e\n   +f\n   ```\n";
        let doc = parse(src, ParseOptions::default());
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        let (ops, _) = ops(src);
        assert_eq!(
            ops,
            vec![
                edit("x", "a\n", "b\n"),
                edit("x", "c\n", "d\n"),
                edit("y", "keep\ne\n", "keep\nf\n")
            ]
        );
        assert_eq!(doc.units.len(), 2);
        // Each hunk a task with its own place.
        let spans: Vec<&str> = doc.tasks().map(|t| &src[t.span.range()]).collect();
        assert_eq!(spans[1], "@@ -9 +9 @@\n-c\n+d");
    }

    #[test]
    fn a_hunk_without_lines_keeps_its_spans_in_order() {
        // Found by the fuzzer: an `@@` line followed by another.
        let src = "--- a/x\n+++ b/x\n@@commit\n@-0 @,0 +1 @@\n+evil\n";
        let doc = parse(src, ParseOptions::default());
        for t in doc.tasks() {
            for s in std::iter::once(t.span).chain(t.sections.iter().copied()) {
                assert!(s.start <= s.end && s.end <= src.len(), "{s:?}");
            }
        }
        assert!(doc.has_errors());
    }

    #[test]
    fn a_crlf_document_reads_as_lf() {
        let src = "--- a/x\r\n+++ b/x\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\r\n";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(ops, vec![edit("x", "a\nb\n", "a\nc\n")]);
    }
}
