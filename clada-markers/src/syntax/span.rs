//! Byte spans into a document and their translation to lines and columns.
//!
//! Everything in the library measures positions in bytes. Lines and columns
//! exist only for people: they are computed on demand by [`LineIndex`], with
//! 1-based lines and 1-based columns that count Unicode scalar values.

use schemars::JsonSchema;
use serde::Serialize;

/// A half-open byte range `start..end` into the document.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema,
)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// An empty span at `at`.
    pub const fn empty(at: usize) -> Self {
        Span { start: at, end: at }
    }

    pub const fn len(self) -> usize {
        self.end - self.start
    }

    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    pub fn contains(self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(r: std::ops::Range<usize>) -> Self {
        Span::new(r.start, r.end)
    }
}

/// A position for people: 1-based line, 1-based column in Unicode scalar
/// values, and the byte offset it was computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    pub offset: usize,
}

/// Positions of offsets asked for in increasing order, found in one pass
/// over the text with no index: the report's positions of every block and
/// task cost one scan of the document. An offset before the last one asked
/// starts the scan again from the top.
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    source: &'a str,
    offset: usize,
    /// 0-based line of `offset`, and where that line starts.
    line: usize,
    line_start: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(source: &'a str) -> Self {
        Cursor {
            source,
            offset: 0,
            line: 0,
            line_start: 0,
        }
    }

    /// The position of `offset`, clamped to the end as [`LineIndex`] does.
    pub fn position(&mut self, offset: usize) -> Position {
        let offset = offset.min(self.source.len());
        if offset < self.offset {
            *self = Cursor::new(self.source);
        }
        let bytes = self.source.as_bytes();
        for nl in memchr::memchr_iter(b'\n', &bytes[self.offset..offset]) {
            self.line += 1;
            self.line_start = self.offset + nl + 1;
        }
        self.offset = offset;
        let prefix = &bytes[self.line_start..offset];
        Position {
            line: self.line + 1,
            column: prefix.iter().filter(|&&b| (b & 0xC0) != 0x80).count() + 1,
            offset,
        }
    }
}

/// Line starts of a document, for turning byte offsets into [`Position`]s.
#[derive(Clone, Debug)]
pub struct LineIndex<'a> {
    source: &'a str,
    /// Byte offset of the first byte of every line; `starts[0] == 0`.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(source: &'a str) -> Self {
        let mut starts = Vec::with_capacity(source.len() / 32 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', source.as_bytes()).map(|i| i + 1));
        LineIndex { source, starts }
    }

    /// The position of `offset`. Offsets past the end are clamped to the end;
    /// an offset inside a multi-byte character counts as that character.
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.source.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let prefix = &self.source.as_bytes()[start..offset];
        // Count scalar values by counting bytes that do not continue a
        // UTF-8 sequence, which is also right for a cut inside one.
        let column = prefix.iter().filter(|&&b| (b & 0xC0) != 0x80).count() + 1;
        Position {
            line: line + 1,
            column,
            offset,
        }
    }

    /// The text the index is of.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// The 1-based line number holding `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.position(offset).line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_scalar_values() {
        let idx = LineIndex::new("ab\nçé x\n");
        assert_eq!(
            idx.position(0),
            Position {
                line: 1,
                column: 1,
                offset: 0
            }
        );
        assert_eq!(idx.position(3).line, 2);
        // "çé " is 5 bytes and 3 scalar values.
        assert_eq!(
            idx.position(8),
            Position {
                line: 2,
                column: 4,
                offset: 8
            }
        );
    }

    #[test]
    fn offsets_past_the_end_are_clamped() {
        let idx = LineIndex::new("a\nb");
        assert_eq!(
            idx.position(99),
            Position {
                line: 2,
                column: 2,
                offset: 3
            }
        );
    }

    #[test]
    fn offset_at_a_line_feed_belongs_to_its_line() {
        let idx = LineIndex::new("a\nb\n");
        assert_eq!(idx.position(1).line, 1);
        assert_eq!(idx.position(2).line, 2);
        assert_eq!(
            idx.position(4),
            Position {
                line: 3,
                column: 1,
                offset: 4
            }
        );
    }

    #[test]
    fn the_cursor_agrees_with_the_index() {
        let src = "ab\nçd\n\nlast";
        let index = LineIndex::new(src);
        let mut cursor = Cursor::new(src);
        for offset in [0, 1, 3, 5, 6, 7, 8, 12, 99] {
            assert_eq!(cursor.position(offset), index.position(offset), "{offset}");
        }
        // Backwards starts again.
        assert_eq!(cursor.position(4), index.position(4));
    }
}
