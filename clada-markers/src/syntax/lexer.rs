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
//! [`crate::syntax::attributes`].
//!
//! [`Lexer`] accepts the input in chunks of any size and produces exactly the
//! tokens that [`lex`] produces for the whole input at once, so an editor can
//! lex as text arrives.

use crate::syntax::span::Span;
use crate::syntax::{BOM, Keyword, MIN_FENCE, Shape};

/// A line token: a marker line, or a run of lines that are not marker lines.
///
/// Tokens are kept small (offsets as `u32`, 44 bytes in all): a document of
/// many short tasks has a few tokens per line. Offsets past `u32::MAX`
/// saturate; [`crate::parse`] refuses documents over
/// [`crate::syntax::MAX_DOCUMENT_SIZE`] before lexing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    start: u32,
    end: u32,
    /// Whether a line of the token ends in CR LF. Bodies made only of
    /// tokens without one are borrowed from the input as they are.
    pub crlf: bool,
}

#[inline]
fn narrow(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
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
    /// `word` when it is one of the format's keywords.
    pub keyword: Option<Keyword>,
    fence: u32,
    word: (u32, u32),
    rest: (u32, u32),
    text_start: u32,
    text_end: u32,
}

impl Marker {
    /// The number of marker characters at the start of the line.
    pub fn fence(&self) -> usize {
        self.fence as usize
    }

    /// The first word after the run (empty span when there is none).
    pub fn word(&self) -> Span {
        Span::new(self.word.0 as usize, self.word.1 as usize)
    }

    /// Everything after the word, without surrounding white space: the
    /// attributes of an opener, junk anywhere else.
    pub fn rest(&self) -> Span {
        Span::new(self.rest.0 as usize, self.rest.1 as usize)
    }

    /// Where the marker run starts: the line start, after a byte-order mark
    /// on the first line.
    pub fn text_start(&self) -> usize {
        self.text_start as usize
    }

    /// The end of the line's text, before its line break.
    pub fn text_end(&self) -> usize {
        self.text_end as usize
    }

    /// The line's text without its line break.
    pub fn line(&self) -> Span {
        Span::new(self.text_start(), self.text_end())
    }
}

impl Token {
    fn new(kind: TokenKind, span: Span, crlf: bool) -> Token {
        Token {
            kind,
            start: narrow(span.start),
            end: narrow(span.end),
            crlf,
        }
    }

    /// The whole line or lines, line breaks included.
    pub fn span(&self) -> Span {
        Span::new(self.start as usize, self.end as usize)
    }

    pub fn marker(&self) -> Option<&Marker> {
        match &self.kind {
            TokenKind::Marker(m) => Some(m),
            TokenKind::Text => None,
        }
    }
}

/// Lexes a whole document.
pub fn lex(source: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut run = None;
    let used = scan(source, 0, true, &mut run, &mut tokens);
    flush_text(&mut run, used, &mut tokens);
    tokens
}

/// A run of text lines not yet emitted: where it starts, and whether a line
/// of it so far ends in CR LF.
type Run = Option<(usize, bool)>;

/// An incremental lexer: feed it the document in chunks, then finish it.
///
/// It keeps the last, incomplete line of what it was fed, and lexes lines
/// as soon as they are complete; the tokens it produces are exactly those of
/// [`lex`] on the whole document.
#[derive(Debug, Default)]
pub struct Lexer {
    /// Document offset of `pending`'s first byte, which starts a line.
    base: usize,
    /// Fed text not yet lexed: the current incomplete line.
    pending: String,
    /// The run of text lines not yet emitted.
    run: Run,
}

impl Lexer {
    pub fn new() -> Self {
        Lexer::default()
    }

    /// Lexes `chunk`, the next piece of the document, pushing every token
    /// that is complete onto `out`.
    pub fn feed(&mut self, chunk: &str, out: &mut Vec<Token>) {
        self.pending.push_str(chunk);
        // Nothing completes a line without a line feed.
        if memchr::memchr(b'\n', chunk.as_bytes()).is_none() {
            return;
        }
        let used = scan(&self.pending, self.base, false, &mut self.run, out);
        self.pending.drain(..used);
        self.base += used;
    }

    /// Ends the document: lexes a last line without a line break and flushes
    /// the pending run of text.
    pub fn finish(mut self, out: &mut Vec<Token>) {
        let used = scan(&self.pending, self.base, true, &mut self.run, out);
        flush_text(&mut self.run, self.base + used, out);
    }
}

/// How much of the document is lexed at a time: the parser's window, and
/// the pieces the nesting pass reads.
pub(crate) const PIECE: usize = 256 * 1024;

/// Lexes a document a piece at a time, straight from its text, so that a
/// parser can hold the tokens of a window instead of the whole document's.
/// Together the pieces are exactly the tokens of [`lex`].
#[derive(Debug)]
pub(crate) struct Pieces<'a> {
    src: &'a str,
    /// Where the next piece starts: always at a line start.
    at: usize,
    run: Run,
    done: bool,
}

impl<'a> Pieces<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Pieces {
            src,
            at: 0,
            run: None,
            done: false,
        }
    }

    /// Hands out nothing more: the caller has the document's tokens.
    pub(crate) fn skip_all(&mut self) {
        self.at = self.src.len();
        self.run = None;
        self.done = true;
    }

    /// Whether every token of the document has been handed out.
    pub(crate) fn done(&self) -> bool {
        self.done
    }

    /// Lexes the whole lines of at least the next `bytes` bytes (all that
    /// is left, if less), pushing the tokens they complete onto `out`. A
    /// run of text lines is pushed when it ends, as [`lex`] would: at the
    /// next marker line, or at the end of the document.
    pub(crate) fn more(&mut self, bytes: usize, out: &mut Vec<Token>) {
        if self.done {
            return;
        }
        let b = self.src.as_bytes();
        let want = self.at.saturating_add(bytes.max(1)).min(b.len());
        let end = if want == b.len() {
            want
        } else {
            memchr::memchr(b'\n', &b[want - 1..]).map_or(b.len(), |i| want + i)
        };
        let complete = end == b.len();
        let used = scan(
            &self.src[self.at..end],
            self.at,
            complete,
            &mut self.run,
            out,
        );
        self.at += used;
        if complete {
            flush_text(&mut self.run, self.at, out);
            self.done = true;
        }
    }
}

fn flush_text(run: &mut Run, end: usize, out: &mut Vec<Token>) {
    if let Some((start, crlf)) = run.take() {
        out.push(Token::new(TokenKind::Text, Span::new(start, end), crlf));
    }
}

/// Adds the text `b[from..to]` (whole lines at document offset `base +
/// from`) to the run. `maybe_cr` says whether a CR was seen there; only then
/// is the text searched for a CR LF.
fn extend_run(run: &mut Run, b: &[u8], base: usize, from: usize, to: usize, maybe_cr: bool) {
    if from >= to {
        return;
    }
    let crlf = maybe_cr && memchr::memmem::find(&b[from..to], b"\r\n").is_some();
    let (_, seen) = run.get_or_insert((base + from, false));
    *seen |= crlf;
}

/// Lexes the complete lines of `text`, which starts a line at document
/// offset `base` (all of it when `complete`, else up to its last line feed).
/// Returns how many bytes it consumed. Only lines that [`next_candidate`]
/// finds are looked at; everything between them is a run of text.
fn scan(text: &str, base: usize, complete: bool, run: &mut Run, out: &mut Vec<Token>) -> usize {
    let b = text.as_bytes();
    let limit = if complete {
        b.len()
    } else {
        memchr::memrchr(b'\n', b).map_or(0, |i| i + 1)
    };
    // `done`: where the bytes not yet given to a token or the run start.
    let mut done = 0;
    // Whether a CR was seen since `done`.
    let mut maybe_cr = false;
    // The first line starts a line by construction; later ones are found.
    let mut line = Some(0).filter(|_| limit > 0);
    while let Some(start) = line {
        let end = memchr::memchr(b'\n', &b[start..limit]).map_or(limit, |i| start + i + 1);
        let marker = if might_be_marker(b[start], base + start) {
            classify(&text[start..end], base + start)
        } else {
            None
        };
        match marker {
            Some(marker) => {
                extend_run(run, b, base, done, start, maybe_cr);
                flush_text(run, base + start, out);
                out.push(Token::new(
                    TokenKind::Marker(marker),
                    Span::new(base + start, base + end),
                    b[start..end].ends_with(b"\r\n"),
                ));
                done = end;
                maybe_cr = false;
            }
            None => maybe_cr |= b[start..end].ends_with(b"\r\n"),
        }
        let (next, cr) = next_candidate(b, end.saturating_sub(1), limit);
        maybe_cr |= cr;
        line = next;
    }
    extend_run(run, b, base, done, limit, maybe_cr);
    limit
}

/// Whether a line starting with `first` at `offset` can be a marker line.
/// The first line may begin with a byte-order mark, which is skipped.
#[inline]
fn might_be_marker(first: u8, offset: usize) -> bool {
    Shape::from_byte(first).is_some() || (offset == 0 && first == BOM.as_bytes()[0])
}

/// `<`, `=` or `>`: the three are consecutive in ASCII.
#[inline(always)]
fn is_marker_byte(b: u8) -> bool {
    b.wrapping_sub(b'<') < 3
}

/// Finds the next line start before `limit`, after the line feed at or
/// after `from`, that may begin a marker line: a line feed followed by a
/// marker character whose seventh character is the same. Every marker line
/// passes this test; the few other lines that do are rejected by
/// [`classify`].
///
/// The work is done 128 bytes at a time with a branch-free test that the
/// compiler turns into SIMD instructions, so content is skipped at close to
/// the speed of counting line feeds. The same pass notes whether it saw a
/// CR, so that text without one is never searched again.
fn next_candidate(b: &[u8], from: usize, limit: usize) -> (Option<usize>, bool) {
    const W: usize = 128;
    #[inline(always)]
    fn hit(c: &[u8; W + 8], k: usize) -> bool {
        (c[k] == b'\n') & is_marker_byte(c[k + 1]) & (c[k + 7] == c[k + 1])
    }
    // A candidate is a line feed at k with k + 1 < limit.
    let last = limit.saturating_sub(1);
    let mut i = from;
    let mut cr = false;
    while i + W <= last && i + W + 8 <= b.len() {
        let Ok(c) = <&[u8; W + 8]>::try_from(&b[i..i + W + 8]) else {
            break;
        };
        let mut any = false;
        for k in 0..W {
            any |= hit(c, k);
            cr |= c[k] == b'\r';
        }
        if any {
            for k in 0..W {
                if hit(c, k) {
                    return (Some(i + k + 1), cr);
                }
            }
        }
        i += W;
    }
    while i < last {
        cr |= b[i] == b'\r';
        if b[i] == b'\n' && is_marker_byte(b[i + 1]) && b.get(i + 7).is_none_or(|&x| x == b[i + 1])
        {
            return (Some(i + 1), cr);
        }
        i += 1;
    }
    // The bytes from `last` to `limit` belong to the last line.
    cr |= b.get(last..limit).is_some_and(|t| t.contains(&b'\r'));
    (None, cr)
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
    let at = |i: usize| narrow(start + skip + i);
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
        keyword: Keyword::from_word(&text[word_start..word_end]),
        fence: narrow(fence),
        word: (at(word_start), at(word_end)),
        rest: (at(rest_start), at(rest_end)),
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
                    m.fence(),
                    m.keyword,
                    &src[m.word().range()],
                    &src[m.rest().range()],
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
        assert_eq!(toks[0].span(), Span::new(0, 6));
        assert_eq!(toks[2].span(), Span::new(14, 17));
    }

    #[test]
    fn skips_a_byte_order_mark_on_the_first_line() {
        let src = "\u{feff}<<<<<<< RUN\nls\n>>>>>>> END\n";
        let m = markers(src);
        assert_eq!(m[0].2, Some(Keyword::Run));
        assert_eq!(lex(src)[0].span().start, 0);
    }

    /// The plain way: classify every line.
    fn naive(src: &str) -> Vec<Token> {
        let mut out = Vec::new();
        let mut run: Run = None;
        let mut at = 0;
        for line in src.split_inclusive('\n') {
            let crlf = line.ends_with("\r\n");
            match classify(line, at) {
                Some(m) => {
                    flush_text(&mut run, at, &mut out);
                    out.push(Token::new(
                        TokenKind::Marker(m),
                        Span::new(at, at + line.len()),
                        crlf,
                    ));
                }
                None => run.get_or_insert((at, false)).1 |= crlf,
            }
            at += line.len();
        }
        flush_text(&mut run, at, &mut out);
        out
    }

    proptest::proptest! {
        /// The skipping scan finds every marker line a line-by-line reading
        /// finds, wherever it falls in the 128-byte windows.
        #[test]
        fn skipping_finds_what_reading_every_line_finds(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("<<<<<<< WRITE path=x".to_owned()),
                    proptest::strategy::Just("=======".to_owned()),
                    proptest::strategy::Just(">>>>>>>> END".to_owned()),
                    proptest::strategy::Just("<<<<<<".to_owned()),
                    proptest::strategy::Just("<<<<<<<x".to_owned()),
                    "[<=> a-z]{0,40}",
                ],
                0..200,
            ),
            crlf in proptest::bool::ANY,
        ) {
            let src = lines.join(if crlf { "\r\n" } else { "\n" });
            proptest::prop_assert_eq!(lex(&src), naive(&src));
        }
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
