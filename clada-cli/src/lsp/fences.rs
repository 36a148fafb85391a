//! What of a Markdown document the language server reads (PROTOCOL
//! §10.1): edits outside code fences, and in the fences an edit format is
//! written in (no language, `clada`, `diff`, `patch`, `udiff`, `xml`, and
//! aider's fence named after the file's language, which opens on
//! `<<<<<<< SEARCH`). The lines of a fence of any other language
//! (` ```text `, ` ```python `, ` ```sh `…) are code or an example: they
//! are blanked before the document is read, so nothing in them is ever
//! called a broken edit.
//!
//! Blanking keeps every byte offset (each byte of such a line but its line
//! break becomes a space), so a span of what is read is a span of the text.
//! A fence is looked for where Markdown would see one: not inside a clada
//! unit, whose body may hold a Markdown file's own fences.

use std::borrow::Cow;

use clada_markers::syntax::{Shape, TokenKind, lex};

/// The languages of the fences an edit format is written in: clada's
/// prompt fences its blocks in `clada`, diffs and patches come in `diff` or
/// `patch`, CML is XML.
const EDIT_LANGUAGES: &[&str] = &["clada", "diff", "patch", "udiff", "xml"];

/// A fence as CommonMark reads it: its character and length.
#[derive(Clone, Copy)]
struct Fence {
    char: u8,
    len: usize,
}

#[derive(Clone, Copy)]
enum State {
    /// Outside any fence.
    Prose,
    /// Inside a fence an edit format is written in: read as prose.
    Edit(Fence),
    /// Inside a clada unit, until its closer; then back outside, or in the
    /// fence it was opened in.
    Unit(Option<Fence>),
    /// Inside a fence of another language: blanked.
    Other(Fence),
}

/// `text` with the lines of fences of other languages blanked; borrowed
/// when it has none.
pub(super) fn readable(text: &str) -> Cow<'_, str> {
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut state = State::Prose;
    let mut lines = line_spans(text).peekable();
    while let Some((start, end)) = lines.next() {
        let line = &text[start..end];
        state = match state {
            State::Prose => match opens(line) {
                Some((fence, language)) => {
                    let aider = lines
                        .peek()
                        .is_some_and(|&(s, e)| is_aider_head(&text[s..e]));
                    if language.is_empty()
                        || EDIT_LANGUAGES.contains(&language.to_ascii_lowercase().as_str())
                        || aider
                    {
                        State::Edit(fence)
                    } else {
                        State::Other(fence)
                    }
                }
                None if marker(line) == Some(Shape::Opener) => State::Unit(None),
                None => State::Prose,
            },
            State::Edit(fence) if closes(line, fence) => State::Prose,
            State::Edit(fence) if marker(line) == Some(Shape::Opener) => State::Unit(Some(fence)),
            State::Unit(back) if marker(line) == Some(Shape::Closer) => {
                back.map_or(State::Prose, State::Edit)
            }
            State::Other(fence) if closes(line, fence) => State::Prose,
            State::Other(fence) => {
                blank.push((start, end));
                State::Other(fence)
            }
            same => same,
        };
    }
    if blank.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = text.as_bytes().to_vec();
    for (start, end) in blank {
        for b in &mut out[start..end] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    }
    // Only whole characters were replaced, by spaces.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_owned()))
}

/// The byte range of each line, its line break included.
fn line_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    text.split_inclusive('\n').scan(0, |at, line| {
        let start = *at;
        *at += line.len();
        Some((start, *at))
    })
}

/// The shape of a marker line of clada's, if the line is one.
fn marker(line: &str) -> Option<Shape> {
    if !line.starts_with(['<', '>']) {
        return None;
    }
    match lex(line).first()?.kind {
        TokenKind::Marker(m) => Some(m.shape),
        TokenKind::Text => None,
    }
}

/// Up to three spaces of indentation, as CommonMark allows before a fence.
fn unindent(line: &str) -> &str {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    if spaces > 3 { line } else { &line[spaces..] }
}

/// A fence's opening line: the fence and the first word of its info
/// string.
fn opens(line: &str) -> Option<(Fence, &str)> {
    let line = unindent(line);
    let char = *line.as_bytes().first()?;
    if char != b'`' && char != b'~' {
        return None;
    }
    let len = line.bytes().take_while(|&b| b == char).count();
    if len < 3 {
        return None;
    }
    let info = line[len..].trim();
    // A backtick fence's info string holds no backtick (it would be code
    // in a line of prose).
    if char == b'`' && info.contains('`') {
        return None;
    }
    let language = info.split_whitespace().next().unwrap_or_default();
    Some((Fence { char, len }, language))
}

/// Whether `line` closes `fence`: the same character, at least as many,
/// nothing after.
fn closes(line: &str, fence: Fence) -> bool {
    let line = unindent(line);
    let len = line.bytes().take_while(|&b| b == fence.char).count();
    len >= fence.len && line[len..].trim().is_empty()
}

/// aider's `<<<<<<< SEARCH` (5 to 9 `<`, `SEARCH>` too), which opens its
/// fence named after the file's language.
fn is_aider_head(line: &str) -> bool {
    let t = line.trim();
    let run = t.bytes().take_while(|&b| b == b'<').count();
    (5..=9).contains(&run) && matches!(&t[run..], " SEARCH" | " SEARCH>")
}

#[cfg(test)]
mod tests {
    use super::readable;

    fn shown(text: &str) -> Vec<String> {
        readable(text)
            .lines()
            .map(|l| l.trim().to_owned())
            .collect()
    }

    #[test]
    fn blanks_fences_of_other_languages_and_keeps_offsets() {
        let text = "# Doc\n\n```text\n--- a/x\n+++ b/x\n```\n\n~~~~python é\nprint('é')\n~~~\n~~~~\nafter\n";
        let read = readable(text);
        assert_eq!(read.len(), text.len());
        assert_eq!(
            shown(text),
            [
                "# Doc",
                "",
                "```text",
                "",
                "",
                "```",
                "",
                "~~~~python é",
                "",
                "",
                "~~~~",
                "after"
            ]
        );
    }

    #[test]
    fn reads_edit_fences_and_aider_fences() {
        let text = "```clada\n<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n```\n\
                    ```diff\n-a\n+b\n```\n\
                    a.py\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\
                    ```\n<<<<<<< HEAD\n```\n";
        assert!(matches!(readable(text), std::borrow::Cow::Borrowed(_)));
    }

    /// Cut anywhere, a document is read to the same length, its line
    /// breaks where they were, each line kept or blanked whole.
    #[test]
    fn every_cut_keeps_the_lines() {
        let text = "a\r\n```python é\r\n<<<<<<< WRITE\r\n😀\n   ~~~~\n```\n<<<<<<< WRITE path=\"a\"\n```sh\n>>>>>>> END\n````text\n`\n";
        for (cut, _) in text.char_indices() {
            let part = &text[..cut];
            let read = readable(part);
            assert_eq!(read.len(), part.len(), "{part:?}");
            for (a, b) in read.split_inclusive('\n').zip(part.split_inclusive('\n')) {
                assert_eq!(a.len(), b.len());
                assert!(a == b || a.trim().is_empty(), "{a:?} for {b:?}");
            }
        }
    }

    /// A unit's body is the file's text: a Markdown file written by a WRITE
    /// keeps its fences, and what follows the unit is read.
    #[test]
    fn a_fence_inside_a_unit_is_the_unit_s_text() {
        let text = "<<<<<<< WRITE path=\"a.md\"\n```python\nx\n>>>>>>> END\n```json\n{}\n```\n";
        assert_eq!(
            shown(text),
            [
                "<<<<<<< WRITE path=\"a.md\"",
                "```python",
                "x",
                ">>>>>>> END",
                "```json",
                "",
                "```"
            ]
        );
        // Inside a clada fence too: its closing line is the unit's.
        let text = "````clada\n<<<<<<< WRITE path=\"a.md\"\n```\n```sh\n>>>>>>> END\n````\n```sh\nls\n```\n";
        assert_eq!(shown(text)[7], "");
        assert_eq!(shown(text)[3], "```sh");
    }
}
