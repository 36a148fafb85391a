//! Text from a document, a file or a command, made safe to show on a
//! terminal (PROTOCOL §9.1).
//!
//! A hostile document can hold escape sequences that, written raw, would
//! recolour, move the cursor, retitle the window or hide a line: a refused
//! command could be shown as a harmless one. Text reports therefore show
//! every control character as an escape (`\x1b`, `\x07`, `\u{9b}`), and the
//! bidirectional formatting characters that reorder what is displayed
//! (`\u{202e}`) too. Line feeds and tabs stay; a carriage return stays only
//! before a line feed or at the end of the text (a CRLF line). JSON and XML
//! keep the raw text: their encoders escape it.

use std::borrow::Cow;

/// Whether `c` is shown as an escape; `next` is the character after it.
fn needs_escape(c: char, next: Option<char>) -> bool {
    match c {
        '\n' | '\t' => false,
        '\r' => !matches!(next, None | Some('\n')),
        _ => c.is_control() || is_bidi(c),
    }
}

/// The bidirectional formatting characters, which reorder what is shown.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escape(out: &mut String, c: char) {
    use std::fmt::Write as _;
    let code = u32::from(c);
    let _ = if code < 0x80 {
        write!(out, "\\x{code:02x}")
    } else {
        write!(out, "\\u{{{code:x}}}")
    };
}

/// `text` with every control character escaped; borrowed when there is
/// none (the usual case).
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape_mapped(text).0
}

/// `text` as one line of a report: every control character escaped,
/// line feeds, tabs and carriage returns too (`\x0a`). For what a report
/// prints on a line of its own: a task's line, an error, a hint, a path, a
/// name read from the disk. A name holding a line feed can then never
/// print a line of its own (a forged `[task-9] ✓` line).
pub fn escape_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() || is_bidi(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c.is_control() || is_bidi(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` escaped, and where it grew: for each escaped character, its
/// byte offset in `text` and the bytes added up to and including it, so
/// that a span of `text` can be found in the escaped text.
pub(crate) fn escape_mapped(text: &str) -> (Cow<'_, str>, Vec<(usize, usize)>) {
    let mut chars = text.char_indices().peekable();
    let mut out: Option<String> = None;
    let mut shifts = Vec::new();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if needs_escape(c, next) {
            let buf = out.get_or_insert_with(|| {
                let mut s = String::with_capacity(text.len() + 16);
                s.push_str(&text[..i]);
                s
            });
            let before = buf.len();
            push_escape(buf, c);
            let added = buf.len() - before - c.len_utf8();
            let total = shifts.last().map_or(0, |&(_, t)| t) + added;
            shifts.push((i, total));
        } else if let Some(buf) = &mut out {
            buf.push(c);
        }
    }
    match out {
        Some(s) => (Cow::Owned(s), shifts),
        None => (Cow::Borrowed(text), shifts),
    }
}

/// Where byte offset `pos` of the original text is in the escaped text.
pub(crate) fn shifted(shifts: &[(usize, usize)], pos: usize) -> usize {
    // The escapes of characters before `pos` moved it.
    let before = shifts.partition_point(|&(at, _)| at < pos);
    match before.checked_sub(1).and_then(|i| shifts.get(i)) {
        Some(&(_, total)) => pos + total,
        None => pos,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_text_is_kept() {
        assert_eq!(escape_controls("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(escape_controls("plain"), Cow::Borrowed(_)));
        assert_eq!(escape_controls("a\x1b[31mred\x07"), "a\\x1b[31mred\\x07");
        assert_eq!(escape_controls("x\u{9b}2J"), "x\\u{9b}2J");
        assert_eq!(escape_controls("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape_controls("crlf\r\nend\r"), "crlf\r\nend\r");
        assert_eq!(escape_controls("over\rwrite"), "over\\x0dwrite");
        assert_eq!(escape_controls("\x7f"), "\\x7f");
        assert_eq!(escape_controls("é\u{0}"), "é\\x00");
    }

    #[test]
    fn a_line_never_holds_a_line_break() {
        assert_eq!(escape_line("a\n[task-9] ✓ x"), "a\\x0a[task-9] ✓ x");
        assert_eq!(escape_line("t\tab\r\n"), "t\\x09ab\\x0d\\x0a");
        assert_eq!(escape_line("x\u{9b}\u{202e}"), "x\\u{9b}\\u{202e}");
        assert!(matches!(escape_line("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn spans_follow_the_escapes() {
        let text = "a\x1bb\u{9b}c";
        let (shown, shifts) = escape_mapped(text);
        assert_eq!(shown, "a\\x1bb\\u{9b}c");
        // a: 0 -> 0; ESC: 1 -> 1; b: 2 -> 5; C1: 3 -> 6; c: 5 -> 12.
        for (from, to) in [(0, 0), (1, 1), (2, 5), (3, 6), (5, 12), (6, 13)] {
            assert_eq!(shifted(&shifts, from), to, "{from}");
            assert!(shown.is_char_boundary(to));
        }
    }
}
