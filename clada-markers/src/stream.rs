//! Units as they arrive (`clada apply --stream`, PROTOCOL §11.5): a
//! [`Splitter`] takes a document line by line and hands out each unit the
//! moment its closer is read, with where it started; prose between units is
//! passed over and never kept. Memory is the current unit, not the stream.
//!
//! The depth rule is the parser's (PROTOCOL §2.4): inside a unit opened with
//! N characters, only marker lines of exactly N count; an opener raises the
//! depth, a closer at depth 0 ends the unit (a TASKS block ends at its
//! `TASKS` closer), and `SEARCH-END` never changes it. The unit's text is
//! then parsed on its own, so a malformed unit is reported alone and the
//! stream goes on.

use crate::input::MAX_DOCUMENT_SIZE;
use crate::lexer::classify;
use crate::syntax::{Keyword, Shape};

/// A complete unit: its text, and the stream offset and 1-based line it
/// starts at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub text: String,
    pub offset: usize,
    pub line: usize,
}

#[derive(Debug, Default)]
enum State {
    #[default]
    Prose,
    Unit {
        fence: usize,
        depth: usize,
        block: bool,
    },
}

/// Splits a stream of lines into units.
#[derive(Debug, Default)]
pub struct Splitter {
    buf: String,
    /// Stream offset of `buf`'s first byte.
    start: usize,
    /// Stream offset of the next line.
    at: usize,
    /// Lines read so far, and the line `buf` starts on.
    lines: usize,
    start_line: usize,
    state: State,
}

impl Splitter {
    pub fn new() -> Self {
        Splitter::default()
    }

    /// Takes the next line (with its line break, if it has one); returns
    /// the unit it completes, if any.
    pub fn push_line(&mut self, line: &str) -> Option<Chunk> {
        let offset = self.at;
        self.at += line.len();
        self.lines += 1;
        let marker = classify(line, offset);
        match self.state {
            State::Prose => {
                let m = marker.filter(|m| m.shape == Shape::Opener)?;
                let keyword = m.keyword?;
                if keyword != Keyword::Tasks && keyword.task().is_none() {
                    return None;
                }
                self.buf.push_str(line);
                self.start = offset;
                self.start_line = self.lines;
                self.state = State::Unit {
                    fence: m.fence(),
                    depth: 0,
                    block: keyword == Keyword::Tasks,
                };
                None
            }
            State::Unit {
                fence,
                ref mut depth,
                block,
            } => {
                self.buf.push_str(line);
                let mut done = false;
                if let Some(m) = marker.filter(|m| m.fence() == fence) {
                    match m.shape {
                        Shape::Opener if m.keyword == Some(Keyword::SearchEnd) => {}
                        Shape::Opener => *depth += 1,
                        Shape::Closer if *depth > 0 => *depth -= 1,
                        Shape::Closer => {
                            // A block ends only at its TASKS closer.
                            done = !block || m.keyword == Some(Keyword::Tasks);
                        }
                        Shape::Separator => {}
                    }
                }
                // Limits apply per unit: one that grows past the document
                // limit is handed on as it is (and refused there).
                if done || self.buf.len() > MAX_DOCUMENT_SIZE {
                    self.take()
                } else {
                    None
                }
            }
        }
    }

    /// Ends the stream: an unfinished unit is handed on as it is (its
    /// parse says what is missing).
    pub fn finish(mut self) -> Option<Chunk> {
        if self.buf.is_empty() {
            None
        } else {
            self.take()
        }
    }

    fn take(&mut self) -> Option<Chunk> {
        self.state = State::Prose;
        Some(Chunk {
            text: std::mem::take(&mut self.buf),
            offset: self.start,
            line: self.start_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(doc: &str) -> Vec<Chunk> {
        let mut s = Splitter::new();
        let mut out: Vec<Chunk> = doc
            .split_inclusive('\n')
            .filter_map(|l| s.push_line(l))
            .collect();
        out.extend(s.finish());
        out
    }

    #[test]
    fn units_come_out_as_their_closers_arrive() {
        let doc = "prose\n<<<<<<< WRITE path=\"a\"\n<<<<<<< HEAD\nx\n>>>>>>> END\n>>>>>>> END\nmore prose\n<<<<<<< TASKS\n<<<<<<< SEARCH path=\"b\"\n1\n=======\n2\n>>>>>>> REPLACE\n>>>>>>> TASKS\n<<<<<<< RUN\nls";
        let chunks = split(doc);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "<<<<<<< WRITE path=\"a\"\n<<<<<<< HEAD\nx\n>>>>>>> END\n>>>>>>> END\n",
                "<<<<<<< TASKS\n<<<<<<< SEARCH path=\"b\"\n1\n=======\n2\n>>>>>>> REPLACE\n>>>>>>> TASKS\n",
                "<<<<<<< RUN\nls",
            ]
        );
        assert_eq!((chunks[0].offset, chunks[0].line), (6, 2));
        assert_eq!(chunks[1].line, 8);
        assert_eq!(
            &doc[chunks[1].offset..chunks[1].offset + 13],
            "<<<<<<< TASKS"
        );
    }

    #[test]
    fn every_unit_of_a_document_is_what_the_parser_finds() {
        let doc = "a\n<<<<<<<< WRITE path=\"x\"\n<<<<<<< SEARCH path=\"y\"\n>>>>>>>> END\n<<<<<<< SEARCH-START path=\"z\"\nq\n<<<<<<< SEARCH-END\nr\n=======\ns\n>>>>>>> REPLACE\n";
        let whole = crate::parse(doc);
        let parts: Vec<_> = split(doc)
            .iter()
            .flat_map(|c| {
                crate::parse(&c.text)
                    .tasks()
                    .filter_map(|t| t.op.clone())
                    .map(|o| format!("{o:?}"))
                    .collect::<Vec<_>>()
            })
            .collect();
        let want: Vec<_> = whole
            .tasks()
            .filter_map(|t| t.op.clone())
            .map(|o| format!("{o:?}"))
            .collect();
        assert_eq!(parts, want);
    }
}
