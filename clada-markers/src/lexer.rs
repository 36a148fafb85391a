//! The lexer: turns a document into line tokens.
//!
//! A document is a sequence of lines, and only marker lines matter to the
//! grammar. The lexer therefore makes one [`Token`] per marker line and one
//! per *run* of other lines: content is skipped with `memchr` from line feed
//! to line feed, looking only at the first byte of each line, and never gets
//! a token of its own. The tokens tile the input: their spans are contiguous
//! and cover every byte, line breaks included.
//!
//! The lexer does not know about nesting or fence lengths of units; it only
//! classifies lines. Attributes on an opener are lexed later, on demand, by
//! [`crate::attributes`].
//!
//! [`Lexer`] accepts the input in chunks of any size and produces exactly the
//! tokens that [`lex`] produces for the whole input at once, so an editor can
//! lex as text arrives.

use crate::span::Span;
use crate::syntax::{BOM, Keyword, MIN_FENCE, Shape};

/// A line token: a marker line, or a run of lines that are not marker lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    /// The whole line or lines, line breaks included.
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// One or more consecutive lines that are not marker lines.
    Text,
    /// A single marker line.
    Marker(Marker),
}

/// What the lexer reads off a marker line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    pub shape: Shape,
    /// The number of marker characters at the start of the line.
    pub fence: usize,
    /// The first word after the run (empty span when there is none).
    pub word: Span,
    /// `word` when it is one of the format's keywords.
    pub keyword: Option<Keyword>,
    /// Everything after the word, without surrounding white space: the
    /// attributes of an opener, junk anywhere else.
    pub rest: Span,
    /// Where the marker run starts: the line start, after a byte-order mark
    /// on the first line.
    pub text_start: usize,
    /// The end of the line's text, before its line break.
    pub text_end: usize,
}

impl Marker {
    /// The line's text without its line break.
    pub fn line(&self) -> Span {
        Span::new(self.text_start, self.text_end)
    }
}

impl Token {
    pub fn marker(&self) -> Option<&Marker> {
        match &self.kind {
            TokenKind::Marker(m) => Some(m),
            TokenKind::Text => None,
        }
    }
}

/// Lexes a whole document.
pub fn lex(source: &str) -> Vec<Token> {
    let mut lexer = Lexer::new();
    let mut tokens = Vec::new();
    lexer.feed(source, &mut tokens);
    lexer.finish(&mut tokens);
    tokens
}

/// An incremental lexer: feed it the document in chunks, then finish it.
#[derive(Debug, Default)]
pub struct Lexer {
    /// Offset of the next byte to be fed.
    offset: usize,
    /// Offset where the current, incomplete line starts.
    line_start: usize,
    /// The incomplete line so far, kept only when it might be a marker line.
    pending: String,
    /// Whether the incomplete line might be a marker line (and is in `pending`).
    candidate: bool,
    /// Start of the run of non-marker lines not yet emitted.
    text_start: Option<usize>,
}

impl Lexer {
    pub fn new() -> Self {
        Lexer::default()
    }

    /// Lexes `chunk`, the next piece of the document, pushing every token
    /// that is complete onto `out`.
    pub fn feed(&mut self, chunk: &str, out: &mut Vec<Token>) {
        let bytes = chunk.as_bytes();
        let base = self.offset;
        self.offset += bytes.len();
        let mut pos = 0;

        // Finish the line left incomplete by the previous chunk.
        if self.line_start < base {
            let Some(nl) = memchr::memchr(b'\n', bytes) else {
                if self.candidate {
                    self.pending.push_str(chunk);
                }
                return;
            };
            pos = nl + 1;
            if self.candidate {
                self.pending.push_str(&chunk[..pos]);
                let line = std::mem::take(&mut self.pending);
                self.line(&line, self.line_start, out);
                self.pending = line;
                self.pending.clear();
            } else {
                self.text_line(self.line_start);
            }
            self.line_start = base + pos;
        }

        // Complete lines inside this chunk: only candidates are looked at.
        while pos < bytes.len() {
            let Some(nl) = memchr::memchr(b'\n', &bytes[pos..]) else {
                break;
            };
            let end = pos + nl + 1;
            let start = base + pos;
            if might_be_marker(bytes[pos], start) {
                self.line(&chunk[pos..end], start, out);
            } else {
                self.text_line(start);
            }
            pos = end;
        }

        // Keep the start of an incomplete last line.
        self.line_start = base + pos;
        if pos < bytes.len() {
            self.candidate = might_be_marker(bytes[pos], self.line_start);
            if self.candidate {
                self.pending.push_str(&chunk[pos..]);
            }
        }
    }

    /// Ends the document: lexes a last line without a line break and flushes
    /// the pending run of text.
    pub fn finish(mut self, out: &mut Vec<Token>) {
        if self.line_start < self.offset {
            if self.candidate {
                let line = std::mem::take(&mut self.pending);
                self.line(&line, self.line_start, out);
            } else {
                self.text_line(self.line_start);
            }
        }
        self.flush_text(self.offset, out);
    }

    fn text_line(&mut self, start: usize) {
        self.text_start.get_or_insert(start);
    }

    fn flush_text(&mut self, end: usize, out: &mut Vec<Token>) {
        if let Some(start) = self.text_start.take() {
            out.push(Token {
                kind: TokenKind::Text,
                span: Span::new(start, end),
            });
        }
    }

    /// Classifies one whole line (with its line break, if it has one)
    /// starting at document offset `start`.
    fn line(&mut self, line: &str, start: usize, out: &mut Vec<Token>) {
        match classify(line, start) {
            Some(marker) => {
                self.flush_text(start, out);
                out.push(Token {
                    kind: TokenKind::Marker(marker),
                    span: Span::new(start, start + line.len()),
                });
            }
            None => self.text_line(start),
        }
    }
}

/// Whether a line starting with `first` at `offset` can be a marker line.
/// The first line may begin with a byte-order mark, which is skipped.
#[inline]
fn might_be_marker(first: u8, offset: usize) -> bool {
    Shape::from_byte(first).is_some() || (offset == 0 && first == BOM.as_bytes()[0])
}

/// Reads a marker line, or returns `None` for an ordinary line.
pub(crate) fn classify(line: &str, start: usize) -> Option<Marker> {
    let skip = if start == 0 && line.starts_with(BOM) {
        BOM.len()
    } else {
        0
    };
    let text = strip_line_break(&line[skip..]);
    let bytes = text.as_bytes();
    let shape = Shape::from_byte(*bytes.first()?)?;
    let fence = bytes.iter().take_while(|&&b| b == shape.byte()).count();
    if fence < MIN_FENCE || !matches!(bytes.get(fence), None | Some(b' ')) {
        return None;
    }
    let at = |i: usize| start + skip + i;
    let is_blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let word_start = fence + bytes[fence..].iter().take_while(|b| is_blank(b)).count();
    let word_end = word_start
        + bytes[word_start..]
            .iter()
            .take_while(|b| !is_blank(b))
            .count();
    let rest_start = word_end + bytes[word_end..].iter().take_while(|b| is_blank(b)).count();
    let rest_end = bytes.len()
        - bytes[rest_start..]
            .iter()
            .rev()
            .take_while(|b| is_blank(b))
            .count();
    Some(Marker {
        shape,
        fence,
        word: Span::new(at(word_start), at(word_end)),
        keyword: Keyword::from_word(&text[word_start..word_end]),
        rest: Span::new(at(rest_start), at(rest_end)),
        text_start: at(0),
        text_end: at(bytes.len()),
    })
}

/// A line without its line break: `\n`, `\r\n`, or a lone `\r` ending the
/// document.
fn strip_line_break(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markers(src: &str) -> Vec<(Shape, usize, Option<Keyword>, &str, &str)> {
        lex(src)
            .iter()
            .filter_map(|t| t.marker())
            .map(|m| {
                (
                    m.shape,
                    m.fence,
                    m.keyword,
                    &src[m.word.range()],
                    &src[m.rest.range()],
                )
            })
            .collect()
    }

    #[test]
    fn recognises_marker_lines_only_at_column_zero() {
        let src = "  <<<<<<< WRITE path=a\n<<<<<<< WRITE path=a\n";
        let toks = lex(src);
        assert_eq!(toks.len(), 2);
        assert_eq!(toks[0].kind, TokenKind::Text);
        assert_eq!(
            markers(src),
            vec![(Shape::Opener, 7, Some(Keyword::Write), "WRITE", "path=a")]
        );
    }

    #[test]
    fn needs_seven_characters_and_a_space_or_end_of_line() {
        assert!(markers("<<<<<< WRITE\n").is_empty());
        assert!(markers("<<<<<<<WRITE\n").is_empty());
        assert!(markers("=======\t\n").is_empty());
        assert_eq!(markers("=========").len(), 1);
        assert_eq!(
            markers(">>>>>>> END  \r\n")[0],
            (Shape::Closer, 7, Some(Keyword::End), "END", "")
        );
    }

    #[test]
    fn coalesces_content_lines_into_one_token() {
        let src = "a\nb\nc\n=======\nd\ne";
        let toks = lex(src);
        assert_eq!(toks.len(), 3);
        assert_eq!(toks[0].span, Span::new(0, 6));
        assert_eq!(toks[2].span, Span::new(14, 17));
    }

    #[test]
    fn skips_a_byte_order_mark_on_the_first_line() {
        let src = "\u{feff}<<<<<<< RUN\nls\n>>>>>>> END\n";
        let m = markers(src);
        assert_eq!(m[0].2, Some(Keyword::Run));
        assert_eq!(lex(src)[0].span.start, 0);
    }

    #[test]
    fn chunked_input_gives_the_same_tokens() {
        let src = "x\n<<<<<<< WRITE path=\"a b\"\r\nbody\n>>>>>>> END\n=======";
        let whole = lex(src);
        for size in 1..src.len() {
            let mut lexer = Lexer::new();
            let mut out = Vec::new();
            let mut rest = src;
            while !rest.is_empty() {
                let mut cut = size.min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                lexer.feed(&rest[..cut], &mut out);
                rest = &rest[cut..];
            }
            lexer.finish(&mut out);
            assert_eq!(out, whole, "chunk size {size}");
        }
    }
}
