//! A document's lines with their places, as the dialects' front ends read
//! them.

use crate::syntax::Span;

/// A line of a document: where it starts, and its text without the line
/// break (a CR before it is dropped: CRLF and LF read alike).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line<'a> {
    pub(crate) start: usize,
    pub(crate) text: &'a str,
}

impl Line<'_> {
    pub(crate) fn span(&self) -> Span {
        Span::new(self.start, self.start + self.text.len())
    }
}

/// The lines of `source`, split with `memchr` into a vector allocated
/// once.
pub(crate) fn lines(source: &str) -> Vec<Line<'_>> {
    lines_in(source, 0, source.len())
}

/// The lines of `source[from..to]`, with their places in `source`; `from`
/// and `to` are on character boundaries (else: no lines).
pub(crate) fn lines_in(source: &str, from: usize, to: usize) -> Vec<Line<'_>> {
    let count = source
        .get(from..to)
        .map_or(0, |r| memchr::memchr_iter(b'\n', r.as_bytes()).count() + 1);
    let mut out = Vec::with_capacity(count);
    out.extend(lines_between(source, from, to));
    out
}

/// [`lines_in`], one at a time: no list of them.
pub(crate) fn lines_between(
    source: &str,
    from: usize,
    to: usize,
) -> impl Iterator<Item = Line<'_>> {
    let region = source.get(from..to).unwrap_or_default();
    let bytes = region.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= region.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(region.len(), |i| at + i);
        // `at` and `end` sit beside ASCII bytes (or at the ends): boundaries.
        let text = region.get(at..end).unwrap_or_default();
        let text = text.strip_suffix('\r').unwrap_or(text);
        let line = Line {
            start: from + at,
            text,
        };
        at = end + 1;
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_places_without_line_breaks() {
        let src = "a\r\nbc\n\nd";
        let got: Vec<(usize, &str)> = lines(src).iter().map(|l| (l.start, l.text)).collect();
        assert_eq!(got, [(0, "a"), (3, "bc"), (6, ""), (7, "d")]);
        let got: Vec<(usize, &str)> = lines_in(src, 3, 7)
            .iter()
            .map(|l| (l.start, l.text))
            .collect();
        assert_eq!(got, [(3, "bc"), (6, "")]);
        assert!(lines("").is_empty());
        assert_eq!(lines("a\n")[0].span(), Span::new(0, 1));
    }
}
