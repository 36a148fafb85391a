//! Units as they arrive (`clada apply --stream`, PROTOCOL §11.5): a
//! [`Splitter`] takes a document line by line and hands out each unit the
//! moment its closer is read, with where it started; prose between units is
//! passed over and never kept. Memory is the current unit, not the stream.
//!
//! The stream is read as bytes ([`Splitter::push_bytes`]): a unit holding
//! bytes that are not UTF-8 is handed out with where the first one is, and
//! [`Chunk::document`] parses it with an `invalid_utf8` error at that
//! place, so that it is reported and never applied (the whole-document
//! rule of PROTOCOL §4, per unit); the stream goes on with the next unit.
//! Prose is not read, whatever its bytes.
//!
//! Prose is checked as it is passed over, never applied: a run of prose
//! that holds edits in another format (a codex patch, a unified diff, CML)
//! or marker lines written almost right (indented, lower case) is handed
//! out too, when it ends (at the next unit, at [`Splitter::finish`], or
//! every 1 MiB, `PROSE_WINDOW`), as a chunk whose [`Chunk::document`] has
//! those errors, so that no edit is dropped in silence (PROTOCOL §11.7).
//! A window that finds nothing keeps its end when a block of another format
//! may have begun there (a Cline `SEARCH` line with no `REPLACE` after it,
//! a diff's header lines), so that a block a window would cut is checked
//! whole; the next window is then twice what was kept, up to the unit limit.
//!
//! Limits apply per unit (PROTOCOL §11.5), by the rule of every document
//! (`syntax::within_limit`): a unit that grows past
//! [`MAX_DOCUMENT_SIZE`] is handed out as far as it was kept, and
//! [`Chunk::document`] refuses it (`input_too_large`); the rest of it, up
//! to its closer, is passed over unkept, so that nothing inside it is
//! taken for a unit of its own. A line is read with
//! [`crate::input::read_line`], which keeps no more of it than the limit.
//!
//! The depth rule is the parser's (PROTOCOL §2.4): inside a unit opened with
//! N characters, only marker lines of exactly N count; an opener raises the
//! depth, a closer at depth 0 ends the unit (a TASKS block ends at its
//! `TASKS` closer), and `SEARCH-END` never changes it. The unit's text is
//! then parsed on its own, so a malformed unit is reported alone and the
//! stream goes on.

mod chunk;
mod other;

pub use chunk::Chunk;
pub(crate) use chunk::PROSE_WINDOW;
use chunk::has_problems;

use crate::dialect::Dialect;
use crate::syntax::MAX_DOCUMENT_SIZE;
use crate::syntax::classify;
use crate::syntax::{Keyword, Shape};

#[derive(Clone, Debug, Default)]
enum State {
    #[default]
    Prose,
    Unit {
        fence: usize,
        depth: usize,
        block: bool,
        /// Grew past the limit and was handed out: the rest of it, up to
        /// its closer, is passed over unkept.
        over: bool,
    },
}

/// Splits a stream of lines into units.
#[derive(Clone, Debug, Default)]
pub struct Splitter {
    /// The run of prose being passed over (at most [`PROSE_WINDOW`] and a
    /// line), its stream offset and first line.
    prose: String,
    prose_start: usize,
    prose_line: usize,
    /// The size at which the prose is checked next: [`PROSE_WINDOW`], or
    /// twice what the last window kept.
    window: usize,
    /// How long the prose was when [`Splitter::prose_so_far`] last checked
    /// it, and whether it found anything then.
    checked: (usize, bool),
    buf: String,
    /// Stream offset of `buf`'s first byte.
    start: usize,
    /// Stream offset of the next line.
    at: usize,
    /// Lines read so far, and the line `buf` starts on.
    lines: usize,
    start_line: usize,
    state: State,
    /// Where in the line being pushed its first byte that is not UTF-8
    /// was, and where in `buf` the first of the unit's was.
    bad_in_line: Option<usize>,
    bad: Option<usize>,
    /// A stream of another dialect is read by its own rules.
    other: Option<other::Other>,
}

impl Splitter {
    /// A splitter of clada documents.
    pub fn new() -> Self {
        Splitter::default()
    }

    /// A splitter of a stream written in `dialect`: clada's units by their
    /// closers (§2.4); another dialect's by its front end, which reads
    /// what the stream holds when a line may end a unit (aider's `>>>>>>>
    /// REPLACE`, `*** End Patch`, a CML unit's end tag, the end of a Cline
    /// call or block, the first line after a unified diff's file that
    /// cannot go on it).
    pub fn for_dialect(dialect: Dialect) -> Self {
        Splitter {
            other: (dialect != Dialect::Clada).then(|| other::Other::new(dialect)),
            ..Splitter::default()
        }
    }

    /// Whether `line`, the last of a file and without its line break, may
    /// complete a unit: a closer written whole (its marker run and its
    /// keyword, `END`, `REPLACE` or `TASKS`, nothing after it). What
    /// `clada watch` reads of a file whose last line is not finished: a
    /// closer cut short (`>>>>>>> E`, the rest of it still being written)
    /// is no line yet.
    pub fn may_end(&self, line: &[u8]) -> bool {
        let Ok(line) = std::str::from_utf8(line) else {
            return false;
        };
        match &self.other {
            None => classify(line, 0).is_some_and(|m| {
                m.shape == Shape::Closer
                    && matches!(
                        m.keyword,
                        Some(Keyword::End | Keyword::Replace | Keyword::Tasks)
                    )
                    && m.rest().is_empty()
            }),
            Some(o) => o.may_end(line),
        }
    }

    /// Takes `line`, the last of what was read so far and without its line
    /// feed (more may follow on it): only a whole closer
    /// ([`Splitter::may_end`]) that completes a unit is taken, and the unit
    /// handed out; anything else is left for when its line is complete
    /// (`None`, and the splitter is as it was). What `clada watch` does
    /// with a file whose last line is not finished.
    pub fn push_unfinished(&mut self, line: &[u8]) -> Option<Chunk> {
        if !self.may_end(line) {
            return None;
        }
        let mut ahead = self.clone();
        let unit = ahead.push_bytes(line)?;
        *self = ahead;
        Some(unit)
    }

    /// Takes the next line as bytes (with its line break, if it has one);
    /// returns the unit it completes, if any. A unit with bytes that are
    /// not UTF-8 is handed out with where the first was
    /// ([`Chunk::invalid_utf8`]).
    pub fn push_bytes(&mut self, line: &[u8]) -> Option<Chunk> {
        self.push_read(line, line.len())
    }

    /// Adds `line` to the unit's text.
    fn keep(&mut self, line: &str) {
        if let (Some(at), None) = (self.bad_in_line, self.bad) {
            self.bad = Some(self.buf.len() + at);
        }
        self.buf.push_str(line);
    }

    /// Takes the next line (with its line break, if it has one); returns
    /// the unit it completes, if any.
    pub fn push_line(&mut self, line: &str) -> Option<Chunk> {
        self.push(line, line.len())
    }

    /// Takes `line`, which was `raw` bytes of the stream.
    fn push(&mut self, line: &str, raw: usize) -> Option<Chunk> {
        if let Some(o) = &mut self.other {
            return o.push(line, raw, self.bad_in_line);
        }
        let offset = self.at;
        self.at += raw;
        self.lines += 1;
        let marker = classify(line, offset);
        if matches!(self.state, State::Unit { over: false, .. }) {
            self.keep(line);
        }
        match self.state {
            State::Prose => {
                let opener = marker
                    .filter(|m| m.shape == Shape::Opener)
                    .and_then(|m| Some((m, m.keyword?)))
                    .filter(|(_, k)| *k == Keyword::Tasks || k.task().is_some());
                let Some((m, keyword)) = opener else {
                    if self.prose.is_empty() {
                        self.prose_start = offset;
                        self.prose_line = self.lines;
                    }
                    self.prose.push_str(line);
                    return if self.prose.len() >= self.window.max(PROSE_WINDOW) {
                        self.take_window()
                    } else {
                        None
                    };
                };
                let prose = self.take_prose();
                self.keep(line);
                self.start = offset;
                self.start_line = self.lines;
                self.state = State::Unit {
                    fence: m.fence(),
                    depth: 0,
                    block: keyword == Keyword::Tasks,
                    over: false,
                };
                prose
            }
            State::Unit {
                fence,
                ref mut depth,
                block,
                ref mut over,
            } => {
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
                // limit is handed on as it is (and refused there); the
                // rest of it is passed over to its closer.
                if *over {
                    if done {
                        self.state = State::Prose;
                    }
                    None
                } else if done {
                    self.take()
                } else if self.buf.len() > MAX_DOCUMENT_SIZE {
                    *over = true;
                    self.take_over()
                } else {
                    None
                }
            }
        }
    }

    /// Takes the next line as read by [`crate::input::read_line`]: `line`
    /// holds what was kept of it, `raw` how many bytes of the stream it
    /// took (more than `line` holds for a line longer than the limit).
    pub fn push_read(&mut self, line: &[u8], raw: usize) -> Option<Chunk> {
        match std::str::from_utf8(line) {
            Ok(text) => self.push(text, raw),
            Err(e) => {
                self.bad_in_line = Some(e.valid_up_to());
                let chunk = self.push(&String::from_utf8_lossy(line), raw);
                self.bad_in_line = None;
                chunk
            }
        }
    }

    /// Ends the stream: an unfinished unit is handed on as it is (its
    /// parse says what is missing).
    pub fn finish(mut self) -> Option<Chunk> {
        if let Some(o) = self.other {
            return o.finish();
        }
        if matches!(self.state, State::Unit { over: true, .. }) {
            return None;
        }
        if self.buf.is_empty() {
            self.take_prose()
        } else {
            self.take()
        }
    }

    /// The prose passed over since the last unit, as a chunk, if it holds
    /// edits in another format or near-miss markers (errors of its
    /// document); else nothing. Either way the run is done with.
    fn take_prose(&mut self) -> Option<Chunk> {
        let problems = has_problems(&self.prose, Dialect::Clada);
        self.end_prose(problems)
    }

    /// Ends the run of prose: handed out as a chunk when it has `problems`.
    fn end_prose(&mut self, problems: bool) -> Option<Chunk> {
        self.window = PROSE_WINDOW;
        self.checked = (0, false);
        let text = std::mem::take(&mut self.prose);
        problems.then_some(Chunk {
            text,
            offset: self.prose_start,
            line: self.prose_line,
            invalid_utf8: None,
            dialect: Dialect::Clada,
            unit_start: 0,
        })
    }

    /// A full window of prose, which goes on: handed out as a chunk when it
    /// holds problems, else dropped up to where a block of another format
    /// may have begun without its end yet, which is kept for the next
    /// window (twice its size). A run kept up to the unit limit is done
    /// with, as a unit that large would be refused.
    fn take_window(&mut self) -> Option<Chunk> {
        let problems = has_problems(&self.prose, Dialect::Clada);
        if problems {
            return self.end_prose(true);
        }
        if self.prose.len() >= MAX_DOCUMENT_SIZE {
            // Kept from an opener whose block has not ended within the
            // unit limit: handed out whole, it is refused as too large
            // ([`Chunk::document`]), as the same text would be by `apply`.
            return self.end_prose(true);
        }
        let keep = crate::dialect::foreign::unfinished(&self.prose);
        let dropped = &self.prose.as_bytes()[..keep];
        self.prose_line += memchr::memchr_iter(b'\n', dropped).count();
        self.prose_start += keep;
        self.prose.drain(..keep);
        self.window = (2 * self.prose.len()).min(MAX_DOCUMENT_SIZE);
        self.checked = (0, false);
        None
    }

    /// What [`Splitter::finish`] hands out when the stream ends in prose,
    /// without ending it: for a reader that reads the same text again
    /// later (`clada watch`), which never waits for an unfinished unit but
    /// reports what the prose after the last unit holds.
    ///
    /// Its cost stays linear in what is read: prose longer than a window
    /// (kept from an opener of another format) is checked again only once
    /// it has doubled, or when a line that can end a block arrives and
    /// nothing was found since the last check.
    pub fn prose_so_far(&mut self) -> Option<Chunk> {
        if let Some(o) = &mut self.other {
            return o.prose_so_far();
        }
        if matches!(self.state, State::Unit { .. }) || self.prose.is_empty() {
            return None;
        }
        let len = self.prose.len();
        if len > PROSE_WINDOW && len < 2 * self.checked.0 {
            let added = self.prose.get(self.checked.0..).unwrap_or_default();
            let closer = added.lines().any(|l| {
                use crate::dialect::foreign::{Closer, closes};
                [Closer::Cline, Closer::Gptme, Closer::Cml]
                    .into_iter()
                    .any(|c| closes(l, c))
            });
            if self.checked.1 || !closer {
                return None;
            }
        }
        let mut copy = Splitter {
            prose: self.prose.clone(),
            prose_start: self.prose_start,
            prose_line: self.prose_line,
            ..Splitter::default()
        };
        let found = copy.take_prose();
        self.checked = (len, found.is_some());
        found
    }

    fn take(&mut self) -> Option<Chunk> {
        self.state = State::Prose;
        self.take_over()
    }

    /// The unit so far, handed out; the state stays as it is.
    fn take_over(&mut self) -> Option<Chunk> {
        Some(Chunk {
            text: std::mem::take(&mut self.buf),
            offset: self.start,
            line: self.start_line,
            invalid_utf8: self.bad.take(),
            dialect: Dialect::Clada,
            unit_start: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::DiagnosticKind;

    fn split(doc: &str) -> Vec<Chunk> {
        split_in(Dialect::Clada, doc)
    }

    /// Every chunk of `doc` streamed in `dialect`, line by line.
    pub(super) fn split_in(dialect: Dialect, doc: &str) -> Vec<Chunk> {
        let mut s = Splitter::for_dialect(dialect);
        let mut out: Vec<Chunk> = doc
            .split_inclusive('\n')
            .filter_map(|l| s.push_line(l))
            .collect();
        out.extend(s.finish());
        out
    }

    /// Plain prose is passed over; a run that holds a codex patch or an
    /// indented marker is handed out when it ends, its document with the
    /// errors, and never runs.
    #[test]
    fn prose_that_holds_edits_is_handed_out_with_its_errors() {
        let doc = "Plain words.\n<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n\
                   Then:\n*** Begin Patch\n*** Add File: b\n+b\n*** End Patch\n\
                   <<<<<<< WRITE path=\"c\"\nc\n>>>>>>> END\n  <<<<<<< WRITE path=\"d\"\n  d\n  >>>>>>> END\n";
        let chunks = split(doc);
        let starts: Vec<(usize, &str)> = chunks
            .iter()
            .map(|c| (c.line, c.text.lines().next().unwrap_or_default()))
            .collect();
        assert_eq!(
            starts,
            [
                (2, "<<<<<<< WRITE path=\"a\""),
                (5, "Then:"),
                (10, "<<<<<<< WRITE path=\"c\""),
                (13, "  <<<<<<< WRITE path=\"d\""),
            ]
        );
        let options = crate::ParseOptions::default();
        for (prose, kind) in [
            (&chunks[1], DiagnosticKind::ForeignFormat),
            (&chunks[3], DiagnosticKind::MalformedMarker),
        ] {
            let d = prose.document(options);
            assert!(d.units.is_empty());
            assert!(
                d.diagnostics.iter().any(|x| x.kind == kind && x.is_error()),
                "{:?}",
                d.diagnostics
            );
        }
        // The watch's view of a file that ends in such prose.
        let mut s = Splitter::new();
        for l in "<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n*** Begin Patch\n".split_inclusive('\n')
        {
            s.push_line(l);
        }
        assert_eq!(s.prose_so_far().map(|c| c.line), Some(4));
        let mut plain = Splitter::new();
        plain.push_line("just words\n");
        assert_eq!(plain.prose_so_far(), None);
        assert_eq!(plain.finish(), None);
    }

    /// A long run of prose is checked in windows: memory stays bounded.
    #[test]
    fn prose_is_checked_in_windows() {
        let mut s = Splitter::new();
        let line = "words words words words words words words words words\n";
        let mut out = Vec::new();
        for _ in 0..(3 * PROSE_WINDOW / line.len()) {
            out.extend(s.push_line(line));
            assert!(s.prose.len() <= PROSE_WINDOW + line.len());
        }
        out.extend(s.push_line("*** Begin Patch\n"));
        out.extend(s.finish());
        assert_eq!(out.len(), 1);
        assert!(out[0].text.ends_with("*** Begin Patch\n"));
    }

    /// A block of another format that a window would cut is checked whole:
    /// a Cline block longer than a window, and a diff whose header lines a
    /// window edge parts, are each reported once, where they start.
    #[test]
    fn a_block_a_window_would_cut_is_checked_whole() {
        let filler = "words words words words words words words words words\n";
        let fill = |s: &mut Splitter, bytes: usize, out: &mut Vec<Chunk>| {
            for _ in 0..bytes / filler.len() {
                out.extend(s.push_line(filler));
            }
        };
        let foreign = |c: &Chunk| {
            let doc = c.document(crate::ParseOptions::default());
            let d: Vec<_> = doc
                .diagnostics
                .iter()
                .filter(|d| d.kind == DiagnosticKind::ForeignFormat)
                .map(|d| {
                    let at = crate::syntax::LineIndex::new(&c.text).position(d.span.start);
                    (d.message.clone(), c.line + at.line - 1)
                })
                .collect();
            d
        };
        // A Cline block of 2.5 windows, opened near the end of the first.
        let mut s = Splitter::new();
        let mut out = Vec::new();
        fill(&mut s, PROSE_WINDOW - 4096, &mut out);
        let opener_line = s.lines + 1;
        out.extend(s.push_line("------- SEARCH\n"));
        fill(&mut s, 5 * PROSE_WINDOW / 2, &mut out);
        for l in ["=======\n", "new\n", "+++++++ REPLACE\n"] {
            out.extend(s.push_line(l));
        }
        // Once the block is reported, prose is checked in windows again.
        let mut most = 0;
        for _ in 0..(5 * PROSE_WINDOW / filler.len()) {
            out.extend(s.push_line(filler));
            if !out.is_empty() {
                most = most.max(s.prose.len());
            }
        }
        assert!(most <= PROSE_WINDOW + filler.len(), "{most}");
        out.extend(s.finish());
        assert_eq!(out.len(), 1, "one report of the block");
        let found = foreign(&out[0]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].0.contains("Cline"), "{found:?}");
        assert_eq!(found[0].1, opener_line);

        // A diff whose `---` line is the one that fills the window.
        let header = "--- a/x.txt\n";
        let mut s = Splitter::new();
        let mut out = Vec::new();
        let n = (PROSE_WINDOW - header.len()) / filler.len() + 1;
        for _ in 0..n {
            out.extend(s.push_line(filler));
        }
        assert!(n * filler.len() < PROSE_WINDOW && n * filler.len() + header.len() >= PROSE_WINDOW);
        let header_line = s.lines + 1;
        for l in [header, "+++ b/x.txt\n", "@@ ... @@\n", "-a\n", "+b\n"] {
            out.extend(s.push_line(l));
        }
        out.extend(s.finish());
        assert_eq!(out.len(), 1);
        let found = foreign(&out[0]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].0.contains("unified diff"), "{found:?}");
        assert_eq!(found[0].1, header_line);
        assert_eq!(out[0].offset, (n - 1) * filler.len());
    }

    /// The earliest opener with no closer of its own is kept, whatever
    /// lines that look like another format's opener follow it (`<editor>`
    /// is no CML tag either); prose kept past the unit limit is handed out
    /// whole, and refused as too large rather than dropped.
    #[test]
    fn a_kept_block_is_never_dropped_by_what_follows_or_by_its_size() {
        let filler = "words words words words words words words words words\n";
        let mut s = Splitter::new();
        let mut out = Vec::new();
        for _ in 0..(PROSE_WINDOW - 4096) / filler.len() {
            out.extend(s.push_line(filler));
        }
        let opener_line = s.lines + 1;
        out.extend(s.push_line("------- SEARCH\n"));
        out.extend(s.push_line("<editor> and <edit notes\n"));
        for _ in 0..PROSE_WINDOW / filler.len() {
            out.extend(s.push_line(filler));
        }
        for l in ["=======\n", "new\n", "+++++++ REPLACE\n"] {
            out.extend(s.push_line(l));
        }
        out.extend(s.finish());
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].line, opener_line, "kept from the Cline opener");
        let doc = out[0].document(crate::ParseOptions::default());
        assert!(
            doc.diagnostics
                .iter()
                .any(|d| d.kind == DiagnosticKind::ForeignFormat && d.message.contains("Cline")),
            "{:?}",
            doc.diagnostics
        );

        let mut s = Splitter::new();
        let mut out = Vec::new();
        out.extend(s.push_line("------- SEARCH\n"));
        let big = filler.repeat(1 << 14);
        while out.is_empty() {
            assert!(
                s.prose.len() <= MAX_DOCUMENT_SIZE + big.len(),
                "kept past the limit"
            );
            out.extend(s.push_line(&big));
        }
        assert_eq!(out.len(), 1, "handed out at the unit limit");
        let doc = out[0].document(crate::ParseOptions::default());
        assert!(
            doc.diagnostics
                .iter()
                .any(|d| d.kind == DiagnosticKind::InputTooLarge),
            "{:?}",
            doc.diagnostics
        );
        assert!(s.prose.is_empty(), "and let go");
    }

    /// The watch's look at the prose after the last unit checks a long run
    /// again only when something can have changed what it finds: a line
    /// that ends a block (or the run doubling).
    #[test]
    fn prose_so_far_checks_a_long_run_again_when_a_block_can_end() {
        let filler = "words words words words words words words words words\n";
        let mut s = Splitter::new();
        s.push_line("------- SEARCH\n");
        for _ in 0..(3 * PROSE_WINDOW / 2) / filler.len() {
            assert_eq!(s.push_line(filler), None);
        }
        assert!(s.prose.len() > PROSE_WINDOW, "kept from the opener");
        assert_eq!(s.prose_so_far(), None);
        for _ in 0..100 {
            s.push_line(filler);
        }
        assert_eq!(s.prose_so_far(), None);
        s.push_line("=======\n");
        s.push_line("+++++++ REPLACE\n");
        let found = s.prose_so_far().expect("the block, once it ends");
        assert_eq!(found.line, 1);
        s.push_line(filler);
        assert_eq!(s.prose_so_far(), None, "said once");
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

    /// Limits apply per unit: a unit past the limit is refused whole,
    /// what its body holds is never a unit of its own, and the units
    /// after its closer are handed out as usual.
    #[test]
    fn a_unit_over_the_limit_is_refused_and_the_stream_goes_on() {
        let mut s = Splitter::new();
        let mut out = Vec::new();
        out.extend(s.push_line("<<<<<<< WRITE path=\"big.txt\"\n"));
        let filler = format!("{}\n", "x".repeat(1023));
        for _ in 0..(MAX_DOCUMENT_SIZE / filler.len() + 1) {
            out.extend(s.push_line(&filler));
        }
        assert_eq!(out.len(), 1, "handed out once past the limit");
        assert!(s.buf.is_empty(), "the rest is not kept");
        // Inside the refused unit: a nested unit and its closer, a line
        // longer than the limit (as `read_line` keeps it), then its closer.
        for l in ["<<<<<<< WRITE path=\"inner.txt\"\n", "i\n", ">>>>>>> END\n"] {
            out.extend(s.push_line(l));
        }
        let long = vec![b'<'; MAX_DOCUMENT_SIZE + 1];
        out.extend(s.push_read(&long, MAX_DOCUMENT_SIZE + 100));
        out.extend(s.push_line(">>>>>>> END\n"));
        assert_eq!(out.len(), 1, "nothing inside it is a unit");
        let after = s.at;
        out.extend(s.push_line("<<<<<<< WRITE path=\"after.txt\"\n"));
        out.extend(s.push_line("a\n"));
        out.extend(s.push_line(">>>>>>> END\n"));
        out.extend(s.finish());
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].offset, after);
        let options = crate::ParseOptions::default();
        let refused = out[0].document(options);
        let kinds: Vec<_> = refused.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [DiagnosticKind::InputTooLarge]);
        assert_eq!(refused.diagnostics[0].block, Some(1));
        assert!(refused.has_errors());
        assert!(!out[1].document(options).has_errors());
    }

    #[test]
    fn a_unit_with_bytes_that_are_not_utf8_is_refused_where_they_are() {
        let stream: &[&[u8]] = &[
            b"prose \xff is not read\n",
            b"<<<<<<< WRITE path=\"a.txt\"\n",
            b"ok\n",
            b"caf\xe9\n",
            b">>>>>>> END\n",
            b"<<<<<<< WRITE path=\"b.txt\"\n",
            b"fine\n",
            b">>>>>>> END\n",
        ];
        let mut s = Splitter::new();
        let chunks: Vec<Chunk> = stream.iter().filter_map(|l| s.push_bytes(l)).collect();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].invalid_utf8, Some(33));
        assert_eq!(chunks[1].invalid_utf8, None);
        let doc = chunks[0].document(crate::ParseOptions::default());
        let d = &doc.diagnostics[0];
        assert_eq!(d.kind, DiagnosticKind::InvalidUtf8);
        assert_eq!((d.span.start, d.block), (33, Some(1)));
        assert!(
            d.message
                .contains("line 4, column 4 of the stream (byte offset 53)"),
            "{}",
            d.message
        );
        assert!(doc.has_errors());
        assert!(
            !chunks[1]
                .document(crate::ParseOptions::default())
                .has_errors()
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
