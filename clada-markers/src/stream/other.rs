//! A stream of another dialect than clada's (`--stream --dialect aider`,
//! PROTOCOL §11.5): its text since the last unit handed out is kept, and
//! parsed by the dialect's front end when a line may end a unit
//! ([`Edges`]) after a line where one may begin; the units it holds then
//! are handed out, with the prose before them, as one chunk.
//!
//! Each byte is parsed a bounded number of times, and what is kept stays
//! bounded: a parse reads from the first line a unit may begin on (and the
//! few lines above it that may name its file); one that finds no unit
//! complete makes the next wait until that text has doubled (a unified
//! diff's file that a line cannot go on is done with instead). Prose
//! without a unit is checked, as clada's is, every [`PROSE_WINDOW`]:
//! handed out when it has errors (edits in another format, near misses),
//! else let go, but for where a block may have begun.

use crate::dialect::Dialect;
use crate::dialect::edges::{Edge, Edges, LOOKBACK};
use crate::syntax::MAX_DOCUMENT_SIZE;

use super::chunk::{Chunk, PROSE_WINDOW, has_problems, problems};

#[derive(Clone, Debug, Default)]
pub(super) struct Other {
    dialect: Dialect,
    edges: Edges,
    /// The text since the last chunk, its stream offset and first line.
    buf: String,
    start: usize,
    start_line: usize,
    /// Stream offset of the next line, and lines read.
    at: usize,
    lines: usize,
    /// Where in `buf` the last lines start (at most [`LOOKBACK`]).
    recent: Vec<usize>,
    /// Where in `buf` a unit may have begun: the first line that may open
    /// one, less the lines above it that may name its file.
    from: Option<usize>,
    /// How long `buf[from..]` was when a parse last found no unit complete:
    /// the next waits until it is twice that.
    waited: usize,
    /// Where in `buf` the first byte that is not UTF-8 was.
    bad: Option<usize>,
    /// A unit grew past the limit and was handed out: lines are passed
    /// over unkept up to the next that may end a unit.
    over: bool,
    /// How much of `buf` [`Other::prose_so_far`] handed out (its errors
    /// said): not handed out again, but for a unit's first lines.
    said: usize,
    /// Where a line of `buf` took another number of bytes of the stream
    /// than it holds (bytes that are not UTF-8 replaced, a line cut at the
    /// limit): the end of the line in `buf`, and how many more bytes of
    /// `buf` than of the stream lie before it. Stream offsets are the
    /// stream's.
    shifts: Vec<(usize, isize)>,
}

impl Other {
    pub(super) fn new(dialect: Dialect) -> Other {
        Other {
            dialect,
            edges: Edges::new(dialect),
            ..Other::default()
        }
    }

    /// Takes `line` (`raw` bytes of the stream; `bad` where in it the first
    /// byte that is not UTF-8 was); returns what it completes.
    pub(super) fn push(&mut self, line: &str, raw: usize, bad: Option<usize>) -> Option<Chunk> {
        let offset = self.at;
        self.at += raw;
        self.lines += 1;
        let edge = self.edges.line(line);
        if self.over {
            self.over = edge == Edge::None;
            return None;
        }
        if self.buf.is_empty() {
            self.start = offset;
            self.start_line = self.lines;
        }
        let line_start = self.buf.len();
        if let (Some(at), None) = (bad, self.bad) {
            self.bad = Some(line_start + at);
        }
        if self.recent.len() == LOOKBACK {
            self.recent.remove(0);
        }
        self.recent.push(line_start);
        self.buf.push_str(line);
        if raw != line.len() {
            let before = self.shifts.last().map_or(0, |&(_, s)| s);
            let more = line.len() as isize - raw as isize;
            self.shifts.push((self.buf.len(), before + more));
        }
        if self.from.is_none() && self.edges.opens(line) {
            self.from = self.recent.first().copied();
        }
        if self.buf.len() > MAX_DOCUMENT_SIZE {
            // Handed out as far as it was kept: refused as too large
            // (`Chunk::document`); the rest of it is passed over.
            self.over = edge == Edge::None;
            let len = self.buf.len();
            return Some(self.take(len, Some(0)));
        }
        let cut = match edge {
            Edge::Ends => self.buf.len(),
            Edge::Before => line_start,
            Edge::None => return self.window(),
        };
        let Some(from) = self.from.filter(|&f| f < cut) else {
            return self.window();
        };
        if cut - from < 2 * self.waited {
            return self.window();
        }
        let doc = crate::dialect::parse_dialect(&self.buf[from..cut], self.dialect, options());
        let first = doc.units.first().map(|u| from + u.span().start);
        let open = edge == Edge::Ends && open_after_units(&doc);
        drop(doc);
        if let Some(first) = first.filter(|_| !open) {
            return Some(self.take(cut, Some(first)));
        }
        if edge == Edge::Before {
            // Nothing before this line can go on: a unit may begin only
            // at it.
            self.from = self.edges.opens(line).then_some(line_start);
            self.waited = 0;
        } else {
            self.waited = cut - from;
        }
        self.window()
    }

    /// Ends the stream: what is kept, if it holds a unit or an error.
    pub(super) fn finish(mut self) -> Option<Chunk> {
        if self.over || self.buf.is_empty() {
            return None;
        }
        let len = self.buf.len();
        let doc = crate::dialect::parse_dialect(&self.buf, self.dialect, options());
        let first = doc.units.first().map(|u| u.span().start);
        // Prose said already (`prose_so_far`) is not said again: the rest
        // is read on its own.
        let worth = first.is_some()
            || if self.said == 0 {
                problems(&doc)
            } else {
                has_problems(&self.buf[self.said.min(len)..], self.dialect)
            };
        drop(doc);
        worth.then(|| self.take(len, first))
    }

    /// The prose kept before where a unit may have begun, when it holds
    /// errors, as [`Other::finish`] would hand it out, without ending it
    /// (`clada watch`); what it hands out is not handed out again (but for
    /// the first lines of a unit after it, which may name its file).
    pub(super) fn prose_so_far(&mut self) -> Option<Chunk> {
        let keep = self.from.unwrap_or(self.buf.len());
        if keep <= self.said {
            return None;
        }
        let prose = &self.buf[self.said..keep];
        let doc = crate::dialect::parse_dialect(prose, self.dialect, options());
        let found = doc.units.is_empty() && problems(&doc);
        drop(doc);
        let chunk = found.then(|| self.chunk_from(self.said, keep, None, None));
        if found {
            self.said = keep;
        }
        chunk
    }

    /// Whether `line`, the last of a file and without its line break,
    /// may complete a unit.
    pub(super) fn may_end(&self, line: &str) -> bool {
        self.edges.clone().line(line) == Edge::Ends
    }

    /// Prose that fills a window: the text before where a block (of this
    /// dialect, or of another) may have begun is done with, handed out
    /// when it has errors.
    fn window(&mut self) -> Option<Chunk> {
        let kept = self.buf.len() - self.from.unwrap_or(self.buf.len());
        if self.buf.len() < PROSE_WINDOW.max(2 * kept) {
            return None;
        }
        let lookback = self.recent.first().copied().unwrap_or(self.buf.len());
        let keep = [
            self.from.unwrap_or(lookback),
            lookback,
            crate::dialect::foreign::unfinished(&self.buf),
        ]
        .into_iter()
        .min()
        .unwrap_or(0);
        let from = self.said.min(keep);
        let doc = crate::dialect::parse_dialect(&self.buf[from..keep], self.dialect, options());
        // A unit the line-by-line view did not see begin (its opener is
        // not one [`Edges::opens`] knows) is kept from its line, as one
        // that may have begun there: never let go with the prose.
        let unit = doc
            .units
            .first()
            .map(|u| line_start(&self.buf, from + u.span().start));
        let found = match unit {
            None => problems(&doc),
            // The prose is only what comes before the unit: read alone.
            Some(u) => u > from && has_problems(&self.buf[from..u], self.dialect),
        };
        drop(doc);
        let keep = unit.map_or(keep, |u| u.min(keep));
        if unit.is_some() {
            self.from = Some(self.from.map_or(keep, |f| f.min(keep)));
        }
        let chunk = found.then(|| self.chunk_from(from, keep, None, None));
        self.drop_front(keep);
        chunk
    }

    /// Hands out `buf[..cut]`, whose first unit starts at `first` (none:
    /// it is prose); keeps the rest. Bytes that are not UTF-8 refuse it
    /// only from `first` on: prose is not read, whatever its bytes.
    fn take(&mut self, cut: usize, first: Option<usize>) -> Chunk {
        let bad = self
            .bad
            .filter(|&b| first.is_some_and(|f| b >= f) && b < cut);
        let from = self.said.min(first.unwrap_or(cut));
        let chunk = self.chunk_from(from, cut, bad, first);
        self.drop_front(cut);
        self.from = None;
        self.waited = 0;
        // What is kept (a diff's next file) may open a unit.
        if self.buf.split_inclusive('\n').any(|l| self.edges.opens(l)) {
            self.from = Some(0);
        }
        chunk
    }

    /// `buf[from..to]` as a chunk (`invalid_utf8` and `unit`, where its
    /// first unit starts, indices in `buf`).
    fn chunk_from(
        &self,
        from: usize,
        to: usize,
        invalid_utf8: Option<usize>,
        unit: Option<usize>,
    ) -> Chunk {
        let before = &self.buf.as_bytes()[..from];
        Chunk {
            text: self.buf[from..to].to_owned(),
            offset: self.stream_offset(from),
            line: self.start_line + memchr::memchr_iter(b'\n', before).count(),
            invalid_utf8: invalid_utf8.map(|b| b - from),
            dialect: self.dialect,
            unit_start: unit.map_or(0, |u| u - from),
        }
    }

    /// `buf` without its first `n` bytes (whole lines).
    fn drop_front(&mut self, n: usize) {
        let gone = &self.buf.as_bytes()[..n];
        self.start_line += memchr::memchr_iter(b'\n', gone).count();
        let shift = self.shift_at(n);
        self.start = self.stream_offset(n);
        self.shifts.retain(|&(at, _)| at > n);
        for (at, s) in &mut self.shifts {
            *at -= n;
            *s -= shift;
        }
        self.bad = self.bad.and_then(|b| b.checked_sub(n));
        self.from = self.from.and_then(|f| f.checked_sub(n));
        self.said = self.said.saturating_sub(n);
        self.recent.retain(|&r| r >= n);
        self.recent.iter_mut().for_each(|r| *r -= n);
        self.buf.drain(..n);
    }

    /// How many more bytes of `buf` than of the stream lie before `at` (a
    /// line's start).
    fn shift_at(&self, at: usize) -> isize {
        let before = self.shifts.partition_point(|&(end, _)| end <= at);
        before
            .checked_sub(1)
            .and_then(|i| self.shifts.get(i))
            .map_or(0, |&(_, s)| s)
    }

    /// The stream offset of `buf[at..]` (`at` a line's start).
    fn stream_offset(&self, at: usize) -> usize {
        (self.start as isize + at as isize - self.shift_at(at)).max(0) as usize
    }
}

fn options() -> crate::ParseOptions {
    crate::ParseOptions::default()
}

/// Whether the parse of a stream's text up to a line that may end a unit
/// found a unit still open after the last one it read (a CML element or a
/// Cline call opened on the line that closed the one before): the text
/// does not end there, and handing it out would cut that unit in two.
fn open_after_units(doc: &crate::Document<'_>) -> bool {
    let Some(end) = doc.units.iter().map(|u| u.span().end).max() else {
        return false;
    };
    doc.diagnostics
        .iter()
        .any(|d| d.kind == crate::syntax::DiagnosticKind::UnclosedOpener && d.span.start >= end)
}

/// Where the line that holds `at` starts in `buf`.
fn line_start(buf: &str, at: usize) -> usize {
    memchr::memrchr(b'\n', &buf.as_bytes()[..at]).map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::super::Splitter;
    use super::*;

    use super::super::tests::split_in as split;

    /// Each chunk: its first line in the stream, its units' paths, and
    /// whether its document has errors.
    fn seen(chunks: &[Chunk]) -> Vec<(usize, Vec<String>, bool)> {
        chunks
            .iter()
            .map(|c| {
                let doc = c.document(options());
                let paths = doc
                    .tasks()
                    .filter_map(|t| t.display_path().map(str::to_owned))
                    .collect();
                (c.line, paths, doc.has_errors())
            })
            .collect()
    }

    fn owned(v: &[(usize, &[&str], bool)]) -> Vec<(usize, Vec<String>, bool)> {
        v.iter()
            .map(|(l, p, e)| (*l, p.iter().map(|s| (*s).to_owned()).collect(), *e))
            .collect()
    }

    /// Two units of each dialect, prose around them: each unit is handed
    /// out as its last line (or, for a diff, the line after it) is read,
    /// with the prose before it, and parses without error.
    #[test]
    fn each_dialect_hands_out_each_unit_when_it_ends() {
        let aider = "Edits:\n\na.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n\nb.py\n```\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n```\nDone.\n";
        assert_eq!(
            seen(&split(Dialect::Aider, aider)),
            owned(&[(1, &["a.py"], false), (10, &["b.py"], false)])
        );
        let codex = "One:\n*** Begin Patch\n*** Add File: a\n+a\n*** End Patch\nTwo:\n*** Begin Patch\n*** Delete File: b\n*** End Patch\n";
        assert_eq!(
            seen(&split(Dialect::Codex, codex)),
            owned(&[(1, &["a"], false), (6, &["b"], false)])
        );
        let cml = "<write path=\"a\"><![CDATA[</run>\n</tasks>\n]]></write>\nthen\n<tasks>\n<remove path=\"b\"/>\n<run>ls</run>\n</tasks>\n";
        let chunks = split(Dialect::Cml, cml);
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        assert_eq!(chunks[0].line, 1);
        assert_eq!(chunks[1].line, 4);
        assert!(chunks.iter().all(|c| !c.document(options()).has_errors()));
        let cline = "<replace_in_file>\n<path>a.py</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n\n------- SEARCH\nz\n=======\nw\n+++++++ REPLACE\n</diff>\n</replace_in_file>\nb.py\n------- SEARCH\nq\n=======\nr\n+++++++ REPLACE\n";
        assert_eq!(
            seen(&split(Dialect::Cline, cline)),
            owned(&[(1, &["a.py", "a.py"], false), (17, &["b.py"], false)])
        );
        let udiff = "Fix:\n```diff\ndiff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n\n w\ndiff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-p\n+q\n```\n";
        assert_eq!(
            seen(&split(Dialect::Udiff, udiff)),
            owned(&[(1, &["a"], false), (13, &["b"], false)])
        );
    }

    /// A unit is handed out at its end, not at the end of the stream.
    #[test]
    fn a_unit_is_handed_out_as_soon_as_it_ends() {
        let mut s = Splitter::for_dialect(Dialect::Codex);
        for l in ["*** Begin Patch\n", "*** Add File: a\n", "+a\n"] {
            assert_eq!(s.push_line(l), None);
        }
        let chunk = s.push_line("*** End Patch\n").expect("the patch");
        assert_eq!(chunk.dialect, Dialect::Codex);
        assert!(chunk.text.starts_with("*** Begin Patch"));
        // A diff's file at the first line that cannot go on it.
        let mut s = Splitter::for_dialect(Dialect::Udiff);
        for l in [
            "--- a/x\n",
            "+++ b/x\n",
            "@@ -1 +1 @@\n",
            "-a\n",
            "+b\n",
            "\n",
        ] {
            assert_eq!(s.push_line(l), None);
        }
        let chunk = s.push_line("```\n").expect("the file's diff");
        assert!(chunk.text.ends_with("+b\n\n"), "{:?}", chunk.text);
    }

    /// Prose is checked and let go a window at a time; prose with errors
    /// in it (another format's edits) is handed out, refused, and the unit
    /// after it is not held back.
    #[test]
    fn prose_is_let_go_in_windows_and_its_errors_are_said() {
        let words = "Words about the change, and more words.\n";
        let mut s = Splitter::for_dialect(Dialect::Udiff);
        let mut most = 0;
        for _ in 0..3 * PROSE_WINDOW / words.len() {
            assert_eq!(s.push_line(words), None);
            most = most.max(s.other.as_ref().map_or(0, |o| o.buf.len()));
        }
        assert!(most <= PROSE_WINDOW + words.len(), "{most}");

        let mut s = Splitter::for_dialect(Dialect::Aider);
        let mut out = Vec::new();
        for l in
            "Plan:\n*** Begin Patch\n*** Add File: a\n+a\n*** End Patch\n".split_inclusive('\n')
        {
            out.extend(s.push_line(l));
        }
        for _ in 0..2 * PROSE_WINDOW / words.len() {
            out.extend(s.push_line(words));
        }
        for l in "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n".split_inclusive('\n') {
            out.extend(s.push_line(l));
        }
        out.extend(s.finish());
        let found: Vec<_> = out
            .iter()
            .map(|c| {
                let d = c.document(options());
                let kinds: Vec<_> = d
                    .diagnostics
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| d.kind)
                    .collect();
                (c.line, d.units.len(), kinds)
            })
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0],
            (1, 0, vec![crate::syntax::DiagnosticKind::ForeignFormat])
        );
        assert_eq!((found[1].1, found[1].2.len()), (1, 0), "{found:?}");
    }

    /// What the watch's look at the prose after the last unit hands out
    /// is not handed out again with the next unit; a file name written
    /// right after it still reaches its block.
    #[test]
    fn prose_said_so_far_is_said_once() {
        let mut s = Splitter::for_dialect(Dialect::Aider);
        for l in "*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\n".split_inclusive('\n') {
            assert_eq!(s.push_line(l), None);
        }
        let said = s.prose_so_far().expect("the codex patch");
        assert!(said.document(options()).has_errors());
        assert_eq!(s.prose_so_far(), None, "said once");
        let mut out = Vec::new();
        for l in "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n".split_inclusive('\n') {
            out.extend(s.push_line(l));
        }
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].line, out[0].text.lines().next()), (5, Some("a.py")));
        let doc = out[0].document(options());
        assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
        assert_eq!(doc.tasks().count(), 1);
    }

    /// A unit whose body holds lines that look like ends (a CML write of
    /// XML) waits for its own: many of them cost a bounded number of
    /// parses, and the unit comes out whole.
    #[test]
    fn false_ends_inside_a_unit_do_not_cut_it() {
        let mut s = Splitter::for_dialect(Dialect::Cml);
        assert_eq!(s.push_line("<write path=\"x.xml\"><![CDATA[\n"), None);
        for _ in 0..20_000 {
            assert_eq!(s.push_line("<a/>\n"), None);
        }
        let chunk = s.push_line("]]></write>\n").expect("the write");
        let doc = chunk.document(options());
        assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
        assert_eq!(doc.tasks().count(), 1);
    }

    /// A CML write whose CDATA body holds `</write>`, then two units on
    /// one line (the first closed, the next opened): each comes out whole,
    /// as the whole document reads it, at its own end.
    #[test]
    fn a_unit_is_not_cut_at_an_end_tag_in_its_body_or_at_the_next_ones_opener() {
        let doc = "<write path=\"p.xml\"><![CDATA[\n</write>\n]]></write>\n<write path=\"q.xml\"><![CDATA[\n</write>\nmore\n]]></write>\n<remove path=\"a\"/><tasks>\n<write path=\"b\">x</write>\n</tasks>\n";
        assert_eq!(
            seen(&split(Dialect::Cml, doc)),
            owned(&[
                (1, &["p.xml"], false),
                (4, &["q.xml"], false),
                (8, &["a", "b"], false)
            ])
        );
        let cline = "<replace_in_file>\n<path>a.py</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n</replace_in_file><replace_in_file>\n<path>b.py</path>\n<diff>\n------- SEARCH\nz\n=======\nw\n+++++++ REPLACE\n</diff>\n</replace_in_file>\n";
        assert_eq!(
            seen(&split(Dialect::Cline, cline)),
            owned(&[(1, &["a.py", "b.py"], false)])
        );
    }

    /// A diff indented as a whole (in a list item), followed by more than
    /// a window of prose, is handed out when its file ends, never let go
    /// with the prose; so is a unit whose opener the line-by-line view
    /// does not know (a CML start tag over two lines).
    #[test]
    fn a_unit_in_a_window_of_prose_is_handed_out_not_let_go() {
        let words = "Words about the change, and more words.\n";
        let prose = words.repeat(2 * PROSE_WINDOW / words.len());
        let diff =
            "1. Fix:\n\n   --- a/b.txt\n   +++ b/b.txt\n   @@ -1 +1 @@\n   -one\n   +uno\n\n";
        let chunks = split(Dialect::Udiff, &format!("{diff}{prose}"));
        assert_eq!(seen(&chunks), owned(&[(1, &["b.txt"], false)]));
        assert!(chunks[0].text.len() < 200, "handed out when its file ended");
        let cml = "<write\n path=\"x.txt\">hello</write>\n";
        let chunks = split(Dialect::Cml, &format!("{cml}{prose}"));
        assert_eq!(seen(&chunks), owned(&[(1, &["x.txt"], false)]));
    }

    /// Another format's edits in the prose before a unit are said with
    /// the stream's line, in the message as in the position (§11.5).
    #[test]
    fn another_formats_edits_are_said_at_the_streams_line() {
        let doc = "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\nthen\nmore\n*** Begin Patch\n*** Add File: z\n+z\n*** End Patch\nb.py\n<<<<<<< SEARCH\nq\n=======\nr\n>>>>>>> REPLACE\n";
        let chunks = split(Dialect::Aider, doc);
        assert_eq!(chunks.len(), 2);
        let second = chunks[1].document(options());
        let said: Vec<_> = second
            .diagnostics
            .iter()
            .filter(|d| d.kind == crate::syntax::DiagnosticKind::ForeignFormat)
            .map(|d| d.message.split(" (").next().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(said, ["line 9 starts a codex patch"]);
    }

    /// Bytes that are not UTF-8 refuse the unit they are in, never one
    /// whose prose holds them; a unit left open is handed out at the end
    /// with its error.
    #[test]
    fn bad_bytes_refuse_their_unit_and_an_open_one_is_said() {
        let mut s = Splitter::for_dialect(Dialect::Codex);
        assert_eq!(s.push_bytes(b"caf\xe9 prose\n"), None);
        for l in ["*** Begin Patch\n", "*** Add File: a\n", "+a\n"] {
            assert_eq!(s.push_line(l), None);
        }
        let clean = s.push_line("*** End Patch\n").expect("the patch");
        assert_eq!(clean.invalid_utf8, None);
        for l in ["*** Begin Patch\n", "*** Add File: b\n"] {
            assert_eq!(s.push_line(l), None);
        }
        assert_eq!(s.push_bytes(b"+\xff\n"), None);
        let bad = s.push_line("*** End Patch\n").expect("the second patch");
        assert!(bad.invalid_utf8.is_some());
        // Offsets are the stream's, whatever was replaced before.
        let before = b"caf\xe9 prose\n".len() + clean.text.len() - "caf\u{fffd} prose\n".len();
        assert_eq!((bad.offset, bad.line), (before, 6));
        assert!(bad.document(options()).has_errors());
        let mut s = Splitter::for_dialect(Dialect::Codex);
        s.push_line("*** Begin Patch\n");
        s.push_line("*** Add File: c\n");
        let open = s.finish().expect("the open patch");
        assert!(open.document(options()).has_errors());
    }
}
