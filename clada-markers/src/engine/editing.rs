//! A file's text while a run edits it: many edits of one file cost one
//! pass over the file plus the edits (PROTOCOL §3 SEARCH and SEARCH-START,
//! §7).
//!
//! The text is kept in chunks of about 16 KiB, so a splice moves the bytes
//! of one chunk, never the whole file's, and where a chunk starts (in bytes
//! and lines) is kept in a Fenwick tree. Where the search texts of the
//! edits still to come occur is found once, by one pass over the file
//! ([`Editing::index`], [`super::keys`]), and kept true under splices: a splice
//! forgets the occurrences that touch what it replaced and searches again
//! only around what it wrote. An edit then takes its occurrences from the
//! index instead of searching the file. With each occurrence the index
//! notes what stands before it on its line (a line start, white space
//! only), and counts each kind per key: an edit that takes a few of a
//! text's many occurrences (a hunk's line hint among equal lines, a count
//! that does not match) decides from the counts and reads only the
//! occurrences it takes or shows ([`Hay::tally`]).
//!
//! Searching is [`super::seek`]'s, as on the whole text, and sequential in
//! meaning: each edit sees the text the edits before it left. The index
//! also holds each search text's first non-blank line (and the
//! replacement's), so that the white-space tier finds its candidates
//! there too (the tests hold the two against each other), and, once an
//! edit of the batch misses, the replacements, so that an edit applied
//! before is told from the index too. Whatever the
//! index cannot answer (a text it does not hold, a range for the tier,
//! codex's Unicode pass, an error that needs the closest region) is
//! answered by [`super::matching`] on the whole text.
//!
//! Matching here is on the file's own bytes with the search written in the
//! file's line break style. That is exact only when the file's line breaks
//! are all LF or all CRLF and nothing else holds a CR: [`Editing::new`]
//! refuses any other file, and [`Editing::find`] any search or replacement
//! holding a CR, and those are edited on the whole text as before.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::engine::keys::Keys;
use crate::engine::matching::Found;
use crate::engine::seek::{self, Hay, How, Kind, LINE_START, MIN_PIVOT, Mismatch, Miss, Plan};
use crate::engine::seek::{SHIFTED, Search, Tally};
use crate::engine::tier::is_space;
use crate::syntax::BOM;

/// A chunk is cut to about this many bytes, and cut again once edits have
/// grown it past four times as many.
const CHUNK: usize = 16 * 1024;
/// An index key is the first (at most) this many bytes of a search text;
/// a longer text is checked in full where its key occurs. So a splice
/// searches again at most this far on either side of what it wrote. An
/// automaton's build (the keys without a line feed have one) grows with the keys' bytes: for the 187 hunks of one
/// real diff (context lines and all, 74 KB), 128 bytes build it in a fifth
/// of 1,024's time, and its keys still occur where their texts do (189
/// occurrences for 187 texts; 64 bytes: 618).
pub(crate) const KEY_MAX: usize = 128;
/// A chunk holding more occurrences than this is cut smaller: a splice
/// walks the occurrences of its chunk.
const MAX_OCC: usize = 1024;

/// The index holds at most a quarter of the file's size plus this many
/// occurrences: keys that occur nearly everywhere are not worth keeping,
/// and the plain search serves them.
const SPARE_OCCURRENCES: usize = 1 << 16;

/// A text found more often than this is counted, not listed, by an edit
/// that takes a few of its occurrences ([`Hay::tally`]): fewer cost less
/// listed.
const COUNT_FROM: usize = 64;

/// A file is edited in chunks with an index when at least this many of
/// the edits to come change it: fewer cost less searched one by one
/// (each at most a pass over the file, so at most this many passes).
pub(crate) const INDEX_FROM: usize = 16;

/// The key that stands for `search` in an index: its first bytes.
pub(crate) fn key(search: &str) -> &[u8] {
    key_of_bytes(search.as_bytes())
}

/// The key that stands for `text` in an index: its first bytes.
pub(crate) fn key_of_bytes(text: &[u8]) -> &[u8] {
    &text[..text.len().min(KEY_MAX)]
}

/// Where an edit found its occurrences in an [`Editing`]: what it will
/// replace and with what, in the editing's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Planned {
    /// Byte ranges of the text (sorted, disjoint).
    ranges: Vec<(usize, usize)>,
    /// The replacement, in the file's line break style.
    replacement: Vec<u8>,
    pub(crate) replacements: usize,
    /// The 1-based line of each replaced occurrence (of the first
    /// `MAX_LISTED_LINES`).
    pub(crate) lines: Vec<usize>,
    /// How the search text was found.
    pub(crate) how: How,
}

/// An edit found and ready to be made: on the whole text of the file, or
/// on its [`Editing`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Splice {
    Plain(Found),
    Indexed(Planned),
}

impl Splice {
    /// How many occurrences it replaces.
    pub(crate) fn replacements(&self) -> usize {
        match self {
            Splice::Plain(f) => f.replacements,
            Splice::Indexed(p) => p.replacements,
        }
    }

    /// The 1-based line of each replaced occurrence (of the first 100).
    pub(crate) fn lines(&self) -> &[usize] {
        match self {
            Splice::Plain(f) => &f.lines,
            Splice::Indexed(p) => &p.lines,
        }
    }

    /// How the search text was found.
    pub(crate) fn how(&self) -> &How {
        match self {
            Splice::Plain(f) => &f.how,
            Splice::Indexed(p) => &p.how,
        }
    }
}

/// What an index says of an edit.
#[derive(Debug)]
pub(crate) enum Answer {
    /// Where it replaces.
    Found(Planned),
    /// Why it cannot: all but the closest region, which needs the whole
    /// text.
    Miss(Box<Mismatch>),
    /// The index does not hold what the search needs.
    Unknown,
}

#[derive(Clone, Debug, Default)]
struct Chunk {
    bytes: Vec<u8>,
    /// How many line feeds `bytes` holds.
    lines: usize,
    /// Occurrences of index keys that start in this chunk: offset, key,
    /// and what stands before it on its line ([`LINE_START`],
    /// [`SHIFTED`]), sorted.
    occ: Vec<(usize, u32, u8)>,
}

/// The sums of the chunks' bytes and line feeds by rank, as a Fenwick
/// tree: where a chunk starts is found in log time while chunks change
/// size. Entries wrap: only the sums they add up to are meaningful.
#[derive(Clone, Debug, Default)]
struct Sums(Vec<[usize; 2]>);

impl Sums {
    fn build(values: impl Iterator<Item = [usize; 2]>) -> Sums {
        let mut t: Vec<[usize; 2]> = values.collect();
        for i in 0..t.len() {
            let j = i | (i + 1);
            if j < t.len() {
                let v = t[i];
                t[j][0] = t[j][0].wrapping_add(v[0]);
                t[j][1] = t[j][1].wrapping_add(v[1]);
            }
        }
        Sums(t)
    }

    /// Adds `d` (wrapping: a negative change is its two's complement) to
    /// rank `i`.
    fn add(&mut self, mut i: usize, d: [usize; 2]) {
        while i < self.0.len() {
            self.0[i][0] = self.0[i][0].wrapping_add(d[0]);
            self.0[i][1] = self.0[i][1].wrapping_add(d[1]);
            i |= i + 1;
        }
    }

    /// Bytes and line feeds of the ranks before `i`.
    fn before(&self, mut i: usize) -> [usize; 2] {
        let mut s = [0usize; 2];
        while i > 0 {
            let v = self.0[i - 1];
            s[0] = s[0].wrapping_add(v[0]);
            s[1] = s[1].wrapping_add(v[1]);
            i &= i - 1;
        }
        s
    }

    /// The rank of the chunk holding line feed number `feeds` (1-based)
    /// and how many line feeds the chunks before it hold; past the last
    /// line feed, the number of chunks.
    fn seek_lines(&self, feeds: usize) -> (usize, usize) {
        let n = self.0.len();
        let mut idx = 0;
        let mut seen = 0;
        let mut step = n.next_power_of_two();
        while step > 0 {
            let next = idx + step;
            if next <= n && seen + self.0[next - 1][1] < feeds {
                idx = next;
                seen += self.0[next - 1][1];
            }
            step >>= 1;
        }
        (idx, seen)
    }

    /// How many leading ranks hold at most `pos` bytes together, and how
    /// many bytes that is: for `pos` inside the text, the rank of the
    /// chunk holding byte `pos` and where that chunk starts.
    fn seek(&self, pos: usize) -> (usize, usize) {
        let n = self.0.len();
        let mut idx = 0;
        let mut rest = pos;
        let mut step = n.next_power_of_two();
        while step > 0 {
            let next = idx + step;
            if next <= n && self.0[next - 1][0] <= rest {
                idx = next;
                rest -= self.0[next - 1][0];
            }
            step >>= 1;
        }
        (idx, pos - rest)
    }
}

/// Where the keys of the edits to come occur.
#[derive(Clone, Debug)]
struct Index {
    keys: Vec<Vec<u8>>,
    ids: HashMap<Vec<u8>, u32>,
    finder: Keys,
    longest: usize,
    /// For each key, the chunks (by id) holding occurrences of it, and
    /// how many of each kind.
    chunks_of: Vec<HashMap<usize, Tally>>,
    /// For each key, how many occurrences of each kind.
    totals: Vec<Tally>,
    held: usize,
    budget: usize,
}

/// A file's text in chunks, with an index of where the coming edits'
/// search texts occur (see the module's documentation).
#[derive(Clone, Debug)]
pub(crate) struct Editing {
    bom: bool,
    /// Every line break is CRLF (else every one is LF).
    crlf: bool,
    /// The text ends with a line break the file lacks (a file without a
    /// final line feed is matched as if it had one).
    virtual_final: bool,
    /// By id; a chunk keeps its id while it lives.
    chunks: Vec<Chunk>,
    /// Chunk ids in text order.
    order: Vec<usize>,
    /// The rank of each chunk id in `order`.
    rank: Vec<usize>,
    sums: Sums,
    len: usize,
    index: Option<Index>,
    /// The set of expected keys the index was last built for.
    generation: Option<u64>,
    /// The batch whose first lines (for the white-space tier) the index
    /// was built with, if any: they are indexed once per batch, at most.
    pivots_for: Option<u64>,
    /// The batch whose replacements (to tell an edit applied before) the
    /// index was built with, if any: they are indexed once per batch, at
    /// most, when an edit first misses.
    replacements_for: Option<u64>,
    /// The size chunks are cut to ([`CHUNK`]; tests cut smaller ones).
    chunk: usize,
    /// The longest key ([`KEY_MAX`]; tests use shorter ones).
    key_max: usize,
    /// The shortest line the passes look for in the index
    /// ([`MIN_PIVOT`]; tests look for any).
    min_pivot: usize,
    /// A key found more often than this is counted by the edits that
    /// take a few ([`COUNT_FROM`]; tests count any).
    count_from: usize,
}

impl Editing {
    /// The editing of `text`, or `None` when its line breaks are mixed or
    /// it holds a CR outside a CRLF: such a file is edited on its whole
    /// text.
    pub(crate) fn new(text: &str) -> Option<Editing> {
        Editing::with_sizes(text, CHUNK, KEY_MAX)
    }

    fn with_sizes(text: &str, chunk: usize, key_max: usize) -> Option<Editing> {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let b = body.as_bytes();
        let crs = memchr::memchr_iter(b'\r', b).count();
        let crlf = if crs == 0 {
            false
        } else {
            let pairs = memchr::memmem::find_iter(b, b"\r\n").count();
            let lfs = memchr::memchr_iter(b'\n', b).count();
            if pairs != crs || pairs != lfs {
                return None;
            }
            true
        };
        let virtual_final = !b.is_empty() && !b.ends_with(b"\n");
        let brk: &[u8] = if crlf { b"\r\n" } else { b"\n" };
        let total = b.len() + if virtual_final { brk.len() } else { 0 };
        let mut chunks = Vec::with_capacity(total / chunk + 1);
        let mut at = 0;
        while at < b.len() {
            let end = cut(body, at, chunk);
            chunks.push(Chunk {
                lines: memchr::memchr_iter(b'\n', &b[at..end]).count(),
                bytes: b[at..end].to_vec(),
                occ: Vec::new(),
            });
            at = end;
        }
        if chunks.is_empty() {
            chunks.push(Chunk::default());
        }
        if virtual_final && let Some(last) = chunks.last_mut() {
            last.bytes.extend_from_slice(brk);
            last.lines += 1;
        }
        let order: Vec<usize> = (0..chunks.len()).collect();
        let mut editing = Editing {
            bom,
            crlf,
            virtual_final,
            rank: order.clone(),
            order,
            sums: Sums::default(),
            chunks,
            len: total,
            index: None,
            generation: None,
            pivots_for: None,
            replacements_for: None,
            chunk,
            key_max,
            min_pivot: MIN_PIVOT,
            count_from: COUNT_FROM,
        };
        editing.reorder();
        Some(editing)
    }

    /// The file's text as the edits left it.
    pub(crate) fn text(&self) -> String {
        let mut out = Vec::with_capacity(self.len + BOM.len());
        if self.bom {
            out.extend_from_slice(BOM.as_bytes());
        }
        for &id in &self.order {
            out.extend_from_slice(&self.chunks[id].bytes);
        }
        if self.virtual_final {
            out.truncate(out.len() - self.brk().len());
        }
        // Splices are made at character boundaries with text: the result
        // is text.
        String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }

    /// The set of expected keys the index was built for.
    pub(crate) fn generation(&self) -> Option<u64> {
        self.generation
    }

    /// Builds the index anew for `keys` (see [`Editing::index`]), saying
    /// what they hold besides the batch's search texts: its first lines
    /// (`pivots`) and its replacements (`replacements`), each indexed once
    /// a batch at most, when an edit first needs them.
    pub(crate) fn index_with<'k>(
        &mut self,
        keys: impl Iterator<Item = &'k [u8]>,
        generation: u64,
        pivots: bool,
        replacements: bool,
    ) {
        self.index(keys, generation);
        self.pivots_for = pivots.then_some(generation);
        self.replacements_for = replacements.then_some(generation);
    }

    /// Whether the index was built with the first lines of batch
    /// `generation`.
    pub(crate) fn has_pivots_of(&self, generation: u64) -> bool {
        self.pivots_for == Some(generation)
    }

    /// Whether the index was built with the replacements of batch
    /// `generation`.
    pub(crate) fn has_replacements_of(&self, generation: u64) -> bool {
        self.replacements_for == Some(generation)
    }

    /// Forgets which set of expected keys the index was built for (the
    /// file moved: the keys of its new path are others).
    pub(crate) fn forget_generation(&mut self) {
        self.generation = None;
        self.pivots_for = None;
        self.replacements_for = None;
    }

    /// Whether the index holds the key of `search`.
    pub(crate) fn knows(&self, search: &str) -> bool {
        self.knows_bytes(&self.raw_vec(search))
    }

    /// Whether the index holds the key of `raw`, a text in the file's
    /// style.
    pub(crate) fn knows_bytes(&self, raw: &[u8]) -> bool {
        self.index
            .as_ref()
            .is_some_and(|i| i.ids.contains_key(self.key_of(raw)))
    }

    /// Builds the index anew for `keys` (in the LF form of the
    /// documents), in one pass over the text. With no key, or where the
    /// keys occur too often, there is no index.
    pub(crate) fn index<'k>(&mut self, keys: impl Iterator<Item = &'k [u8]>, generation: u64) {
        self.generation = Some(generation);
        self.index = None;
        for c in &mut self.chunks {
            c.occ.clear();
        }
        let mut raw: Vec<Vec<u8>> = keys
            .filter(|k| !k.is_empty() && !k.contains(&b'\r'))
            .map(|k| {
                let mut r = if self.crlf { crlf_of(k) } else { k.to_vec() };
                r.truncate(self.key_max);
                r
            })
            .collect();
        raw.sort_unstable();
        raw.dedup();
        if raw.is_empty() {
            return;
        }
        let Some(finder) = Keys::new(&raw) else {
            return;
        };
        let budget = self.len / 4 + SPARE_OCCURRENCES;
        let longest = raw.iter().map(Vec::len).max().unwrap_or(0);
        // A chunk at a time, after the bytes before it that an occurrence
        // ending in it may start in; each occurrence is found in the chunk
        // where it ends.
        let mut found: Vec<(usize, u32)> = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut at = 0;
        for &id in &self.order {
            let bytes = &self.chunks[id].bytes;
            let keep = buf.len().min(longest - 1);
            buf.drain(..buf.len() - keep);
            buf.extend_from_slice(bytes);
            let from = at - keep;
            let was = found.len();
            finder.find(&buf, keep, &mut found);
            if found.len() > budget {
                return;
            }
            for o in &mut found[was..] {
                o.0 += from;
            }
            at += bytes.len();
        }
        found.sort_unstable();
        // What stands before each occurrence on its line, in one pass.
        let mut flags = Vec::with_capacity(found.len());
        let mut before = Before::LINE;
        let mut start = 0;
        for &id in &self.order {
            let bytes = &self.chunks[id].bytes;
            let end = start + bytes.len();
            let mut at = start;
            while let Some(&(a, _)) = found.get(flags.len()).filter(|o| o.0 < end) {
                before.skip(&bytes[at - start..a - start]);
                at = a;
                flags.push(before.flags());
            }
            before.skip(&bytes[at - start..]);
            start = end;
        }
        flags.resize(found.len(), before.flags());
        let mut chunks_of = vec![HashMap::new(); raw.len()];
        let mut totals = vec![Tally::default(); raw.len()];
        let mut r = 0;
        let mut start = 0;
        for (&(a, k), &f) in found.iter().zip(&flags) {
            while r + 1 < self.order.len() && a >= start + self.chunks[self.order[r]].bytes.len() {
                start += self.chunks[self.order[r]].bytes.len();
                r += 1;
            }
            let id = self.order[r];
            self.chunks[id].occ.push((a - start, k, f));
            add(chunks_of[k as usize].entry(id).or_default(), f);
            add(&mut totals[k as usize], f);
        }
        let ids = raw
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        self.index = Some(Index {
            keys: raw,
            ids,
            finder,
            longest,
            chunks_of,
            totals,
            held: found.len(),
            budget,
        });
        let all: Vec<usize> = (0..self.order.len()).collect();
        self.rebalance(&all);
    }

    /// Where the edit `search` would replace, if the index can say;
    /// `None` when it cannot be done on this editing at all (a CR in its
    /// texts or replacement).
    pub(crate) fn find(&self, search: Search<'_>) -> Option<Answer> {
        if search
            .texts()
            .chain([search.replace])
            .any(|t| t.contains('\r'))
        {
            return None;
        }
        Some(match seek::seek(self, &search) {
            Ok(plan) => Answer::Found(self.planned(plan)),
            Err(Miss::Mismatch(m)) => Answer::Miss(m),
            Err(Miss::Unknown | Miss::Stopped) => Answer::Unknown,
        })
    }

    /// A plan of the search as a splice of this editing.
    fn planned(&self, plan: Plan) -> Planned {
        Planned {
            replacements: plan.ranges.len(),
            replacement: self.raw_vec(&plan.written),
            ranges: plan.ranges,
            lines: plan.lines,
            how: plan.how,
        }
    }

    /// The ranges from an occurrence of `start` to the nearest occurrence
    /// of `end` after it, without overlap, and the start with no end after
    /// it that ended the search, if one did; `None` when the index does
    /// not hold both.
    #[allow(clippy::type_complexity)]
    fn ranges(
        &self,
        start_raw: &[u8],
        end_raw: &[u8],
    ) -> Option<(Vec<(usize, usize)>, Option<usize>)> {
        let starts = self.occurrences(start_raw)?;
        let ends = self.occurrences(end_raw)?;
        let mut ranges = Vec::new();
        let mut pos = 0;
        let mut s_at = 0;
        loop {
            let i = s_at + starts[s_at..].partition_point(|&a| a < pos);
            let Some(&s) = starts.get(i) else { break };
            let after = s + start_raw.len();
            let j = ends.partition_point(|&b| b < after);
            let Some(&e) = ends.get(j) else {
                // A start with no end after it ends the search.
                return Some((ranges, Some(s)));
            };
            ranges.push((s, e + end_raw.len()));
            pos = e + end_raw.len();
            s_at = i;
            if pos >= self.len {
                break;
            }
        }
        Some((ranges, None))
    }

    /// The edit found in `found` by the search of the whole text (its
    /// ranges in the file's bytes), as a splice of this editing.
    pub(crate) fn planned_from(&self, found: &Found) -> Planned {
        let offset = if self.bom { BOM.len() } else { 0 };
        let mut ranges: Vec<(usize, usize)> = found
            .ranges()
            .iter()
            .map(|&(s, e)| (s.saturating_sub(offset), e.saturating_sub(offset)))
            .collect();
        if found.trims_final()
            && self.virtual_final
            && let Some(last) = ranges.last_mut()
        {
            last.1 = self.len;
        }
        Planned {
            ranges,
            replacement: found.replacement().as_bytes().to_vec(),
            replacements: found.replacements,
            lines: found.lines.clone(),
            how: found.how.clone(),
        }
    }

    /// Makes the edit.
    pub(crate) fn apply(&mut self, planned: &Planned) {
        let Some(&(_, last_end)) = planned.ranges.last() else {
            return;
        };
        let reaches_end = last_end == self.len;
        self.splice(&planned.ranges, &planned.replacement);
        self.keep_final_break(reaches_end);
        // An edit that leaves a byte-order mark at the start of a file
        // without one makes it the file's mark: never matched from then
        // on, as a search of the whole text would have it.
        if !self.bom && self.bytes_in(0, BOM.len()) == BOM.as_bytes() {
            self.splice(&[(0, BOM.len())], b"");
            self.bom = true;
            if self.virtual_final && self.len == self.brk().len() {
                self.splice(&[(0, self.len)], b"");
                self.virtual_final = false;
            }
        }
        // A file's style is that of its first line break: with none left,
        // the next edit writes LF. The keys were in CRLF: the index goes.
        let breaks = self.sums.before(self.order.len())[1];
        if self.crlf && breaks == usize::from(self.virtual_final) {
            self.drop_index();
            self.generation = None;
            self.pivots_for = None;
            self.replacements_for = None;
            if self.virtual_final {
                self.splice(&[(self.len - 2, self.len)], b"\n");
            }
            self.crlf = false;
        }
    }

    /// Keeps the text what a search of the whole file would see: the file
    /// as written, plus a line break where it lacks a final one (so that
    /// a final line without one is matched as if it had it).
    fn keep_final_break(&mut self, reaches_end: bool) {
        let brk = self.brk();
        let n = brk.len();
        // Where the file as written ends: a line break the file lacked is
        // not part of it, and neither is one an edit put in its place
        // (the file keeps lacking it).
        let ends_in_break = |e: &Editing, at: usize| at >= n && e.bytes_in(at - n, at) == brk;
        let mut real = self.len;
        if self.virtual_final && (!reaches_end || ends_in_break(self, self.len)) {
            real -= n;
        }
        if real == 0 || ends_in_break(self, real) {
            if real < self.len {
                self.splice(&[(real, self.len)], b"");
            }
            self.virtual_final = false;
        } else {
            if real == self.len {
                self.splice(&[(self.len, self.len)], brk);
            }
            self.virtual_final = true;
        }
    }

    /// The key of a search text already in the file's style.
    fn key_of<'t>(&self, raw: &'t [u8]) -> &'t [u8] {
        &raw[..raw.len().min(self.key_max)]
    }

    /// Makes the file end with a line break: the one it is matched as
    /// having becomes its own (codex ends every file it updates so).
    pub(crate) fn end_with_line_break(&mut self) {
        self.virtual_final = false;
    }

    fn brk(&self) -> &'static [u8] {
        if self.crlf { b"\r\n" } else { b"\n" }
    }

    /// `text` (LF line breaks) in the file's style.
    fn raw_vec(&self, text: &str) -> Vec<u8> {
        if self.crlf {
            crlf_of(text.as_bytes())
        } else {
            text.as_bytes().to_vec()
        }
    }

    /// Every occurrence of `raw` (overlapping ones included), in order;
    /// `None` when the index does not hold its key.
    fn occurrences(&self, raw: &[u8]) -> Option<Vec<usize>> {
        let index = self.index.as_ref()?;
        let &k = index.ids.get(self.key_of(raw))?;
        let mut ids: Vec<usize> = index.chunks_of[k as usize].keys().copied().collect();
        ids.sort_unstable_by_key(|&id| self.rank[id]);
        let mut out = Vec::new();
        for id in ids {
            let start = self.sums.before(self.rank[id])[0];
            out.extend(
                self.chunks[id]
                    .occ
                    .iter()
                    .filter(|o| o.1 == k)
                    .map(|o| start + o.0),
            );
        }
        if raw.len() > self.key_max {
            // Checked in full where the key occurs, unless that would read
            // more than searching the whole text does.
            if out.len().saturating_mul(raw.len()) > 4 * self.len + SPARE_OCCURRENCES {
                return None;
            }
            out.retain(|&a| self.holds_at(a, raw));
        }
        Some(out)
    }

    /// Whether the text holds `raw` at `at`.
    fn holds_at(&self, at: usize, raw: &[u8]) -> bool {
        if at + raw.len() > self.len {
            return false;
        }
        let (mut r, start) = self.locate(at);
        let mut off = at - start;
        let mut rest = raw;
        while !rest.is_empty() {
            let Some(&id) = self.order.get(r) else {
                return false;
            };
            let bytes = &self.chunks[id].bytes;
            let b = &bytes[off.min(bytes.len())..];
            let n = b.len().min(rest.len());
            if b[..n] != rest[..n] {
                return false;
            }
            rest = &rest[n..];
            r += 1;
            off = 0;
        }
        true
    }

    /// The rank of the chunk holding byte `pos` and where it starts (for
    /// the end of the text, the last chunk).
    fn locate(&self, pos: usize) -> (usize, usize) {
        if pos >= self.len {
            let last = self.order.len() - 1;
            return (last, self.sums.before(last)[0]);
        }
        self.sums.seek(pos)
    }

    /// A copy of the bytes from `from` to `to`.
    fn bytes_in(&self, from: usize, to: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        if from >= to {
            return out;
        }
        let (mut r, mut start) = self.locate(from);
        while r < self.order.len() && start < to {
            let b = &self.chunks[self.order[r]].bytes;
            let lo = from.max(start) - start;
            let hi = to.min(start + b.len()) - start;
            if lo < hi {
                out.extend_from_slice(&b[lo..hi]);
            }
            start += b.len();
            r += 1;
        }
        out
    }

    /// The 1-based line of each position (sorted).
    fn lines_of(&self, positions: impl Iterator<Item = usize>) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at: Option<(usize, usize, usize)> = None; // rank, offset, line
        for p in positions {
            let (r, start) = self.locate(p);
            let b = &self.chunks[self.order[r]].bytes;
            let off = (p - start).min(b.len());
            let line = match at {
                Some((ar, aoff, aline)) if ar == r && aoff <= off => {
                    aline + memchr::memchr_iter(b'\n', &b[aoff..off]).count()
                }
                _ => 1 + self.sums.before(r)[1] + memchr::memchr_iter(b'\n', &b[..off]).count(),
            };
            at = Some((r, off, line));
            out.push(line);
        }
        out
    }

    /// Replaces `ranges` (sorted, disjoint; empty ones insert) with
    /// `repl`, keeping the index true.
    fn splice(&mut self, ranges: &[(usize, usize)], repl: &[u8]) {
        if ranges.is_empty() {
            return;
        }
        let longest = self.index.as_ref().map_or(0, |i| i.longest);
        if longest > 0 {
            self.forget_touching(ranges, longest);
        }
        let touched = self.rewrite(ranges, repl);
        if longest > 0 {
            let mut shift = 0isize;
            let new: Vec<(usize, usize)> = ranges
                .iter()
                .map(|&(s, e)| {
                    let at = s.wrapping_add_signed(shift);
                    shift += repl.len() as isize - (e - s) as isize;
                    (at, at + repl.len())
                })
                .collect();
            self.find_touching(&new, longest);
            for &(_, end) in &new {
                self.refresh_from(end);
            }
        }
        self.rebalance(&touched);
    }

    /// Forgets the occurrences that touch a range (overlap it, or, for an
    /// empty range, straddle it).
    fn forget_touching(&mut self, ranges: &[(usize, usize)], longest: usize) {
        let mut ranks: Vec<usize> = Vec::new();
        for &(s, e) in ranges {
            let from = s.saturating_sub(longest - 1);
            let to = e.max(s + 1).min(self.len);
            if from >= to {
                continue;
            }
            let (r0, _) = self.locate(from);
            let (r1, _) = self.locate(to - 1);
            let first = ranks.last().map_or(r0, |&l| r0.max(l + 1));
            ranks.extend(first..=r1);
        }
        let Some(index) = &mut self.index else { return };
        for r in ranks {
            let id = self.order[r];
            let start = self.sums.before(r)[0];
            let chunk = &mut self.chunks[id];
            chunk.occ.retain(|&(off, k, f)| {
                let a = start + off;
                let touches = touches(ranges, a, index.keys[k as usize].len());
                if touches {
                    forget(index, k, id, f);
                }
                !touches
            });
        }
    }

    /// Finds the occurrences that touch a new range (as it stands after
    /// the splice), searching only around it.
    fn find_touching(&mut self, ranges: &[(usize, usize)], longest: usize) {
        let mut i = 0;
        while i < ranges.len() {
            // Ranges whose surroundings overlap are searched together.
            let from = ranges[i].0.saturating_sub(longest - 1);
            let mut to = (ranges[i].1 + longest - 1).min(self.len);
            let mut j = i + 1;
            while j < ranges.len() && ranges[j].0.saturating_sub(longest - 1) < to {
                to = (ranges[j].1 + longest - 1).min(self.len);
                j += 1;
            }
            let group = &ranges[i..j];
            let bytes = self.bytes_in(from, to);
            let mut before = self.before_at(from);
            let Some(index) = &self.index else { return };
            let mut near = Vec::new();
            index.finder.find(&bytes, 0, &mut near);
            let mut found: Vec<(usize, u32, u8)> = near
                .into_iter()
                .map(|(a, k)| (from + a, k, 0))
                .filter(|&(a, k, _)| touches(group, a, index.keys[k as usize].len()))
                .collect();
            found.sort_unstable();
            let mut pos = from;
            for o in &mut found {
                before.skip(&bytes[pos - from..o.0 - from]);
                pos = o.0;
                o.2 = before.flags();
            }
            if !self.remember(&found) {
                return;
            }
            i = j;
        }
    }

    /// Notes occurrences (sorted by position), merging each chunk's new
    /// ones into its list at once. Past the index's budget the index is
    /// dropped (`false`): the plain search serves from then on.
    fn remember(&mut self, found: &[(usize, u32, u8)]) -> bool {
        let Some(index) = &mut self.index else {
            return false;
        };
        if index.held + found.len() > index.budget {
            self.drop_index();
            return false;
        }
        index.held += found.len();
        let mut i = 0;
        while i < found.len() {
            let (r, start) = self.locate(found[i].0);
            let id = self.order[r];
            let end = start + self.chunks[id].bytes.len();
            let mut here: Vec<(usize, u32, u8)> = Vec::new();
            while let Some(&(a, k, f)) = found.get(i).filter(|o| o.0 < end || here.is_empty()) {
                here.push((a - start, k, f));
                i += 1;
            }
            if let Some(index) = &mut self.index {
                for &(_, k, f) in &here {
                    add(index.chunks_of[k as usize].entry(id).or_default(), f);
                    add(&mut index.totals[k as usize], f);
                }
            }
            let occ = &mut self.chunks[id].occ;
            *occ = merged(std::mem::take(occ), here);
        }
        true
    }

    /// What stands before `pos` on its line.
    fn before_at(&self, pos: usize) -> Before {
        let mut at = pos.min(self.len);
        let mut start = true;
        while at > 0 {
            let (r, chunk_start) = self.locate(at - 1);
            let b = &self.chunks[self.order[r]].bytes;
            for &c in b[..(at - chunk_start).min(b.len())].iter().rev() {
                if c == b'\n' {
                    return Before { start, blank: true };
                }
                if !is_space(c) {
                    return Before {
                        start: false,
                        blank: false,
                    };
                }
                start = false;
            }
            if chunk_start >= at {
                break;
            }
            at = chunk_start;
        }
        Before { start, blank: true }
    }

    /// Notes anew what stands before the occurrences after `from` on its
    /// line (a splice ended there): those up to the first byte that is
    /// not white space, past which nothing changed.
    fn refresh_from(&mut self, from: usize) {
        let mut before = self.before_at(from);
        let mut at = from;
        while at < self.len {
            let (r, chunk_start) = self.locate(at);
            let id = self.order[r];
            let Some(index) = &mut self.index else { return };
            let chunk = &mut self.chunks[id];
            let mut i = chunk.occ.partition_point(|o| chunk_start + o.0 < at);
            let end = chunk_start + chunk.bytes.len();
            while at < end {
                while let Some(o) = chunk.occ.get_mut(i).filter(|o| chunk_start + o.0 == at) {
                    let f = before.flags();
                    if o.2 != f {
                        let k = o.1 as usize;
                        for t in [
                            index.chunks_of[k].entry(id).or_default(),
                            &mut index.totals[k],
                        ] {
                            take(t, o.2);
                            add(t, f);
                        }
                        o.2 = f;
                    }
                    i += 1;
                }
                let b = chunk.bytes[at - chunk_start];
                if !is_space(b) {
                    return;
                }
                before.step(b);
                at += 1;
            }
            if end <= chunk_start {
                return;
            }
        }
    }

    /// The ranks of the chunks holding occurrences of key `k` of `kind`,
    /// in text order.
    fn ranks_holding(&self, k: u32, kind: Kind) -> Vec<usize> {
        let Some(index) = &self.index else {
            return Vec::new();
        };
        let mut ranks: Vec<usize> = index.chunks_of[k as usize]
            .iter()
            .filter(|(_, t)| t.of(kind) > 0)
            .map(|(&id, _)| self.rank[id])
            .collect();
        ranks.sort_unstable();
        ranks
    }

    /// The id of the key `needle` is, if the index holds it whole.
    fn counted_key(&self, needle: &[u8]) -> Option<u32> {
        let index = self.index.as_ref()?;
        if needle.len() > self.key_max {
            return None;
        }
        index.ids.get(needle).copied()
    }

    fn drop_index(&mut self) {
        self.index = None;
        for c in &mut self.chunks {
            c.occ.clear();
        }
    }

    /// Rewrites the chunks the ranges lie in: the bytes between ranges
    /// kept, each range's bytes replaced by `repl` (in the chunk holding
    /// the range's start), the occurrences left moved with their bytes.
    /// Returns the ranks rewritten.
    fn rewrite(&mut self, ranges: &[(usize, usize)], repl: &[u8]) -> Vec<usize> {
        // The ranks each range lies in (a range at the very end lies in
        // the last chunk), and where they start, before anything changes.
        let mut ranks: Vec<usize> = Vec::new();
        for &(s, e) in ranges {
            let (r0, _) = self.locate(s);
            let r1 = if e > s { self.locate(e - 1).0 } else { r0 };
            let first = ranks.last().map_or(r0, |&l| r0.max(l + 1));
            ranks.extend(first..=r1);
        }
        let starts: Vec<usize> = ranks.iter().map(|&r| self.sums.before(r)[0]).collect();
        let (last_rank, old_len) = (self.order.len() - 1, self.len);
        let mut delta: isize = 0;
        for (&r, &start) in ranks.iter().zip(&starts) {
            let id = self.order[r];
            let old = std::mem::take(&mut self.chunks[id].bytes);
            let end = start + old.len();
            let holds = |s: usize| (start <= s && s < end) || (s == old_len && r == last_rank);
            // Kept pieces: old offset, new offset, length.
            let mut pieces: Vec<(usize, usize, usize)> = Vec::new();
            let mut out = Vec::with_capacity(old.len() + repl.len());
            let mut pos = start;
            let lines = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as isize;
            // Line feeds written less those taken away: only the changed
            // bytes are counted, not the chunk's.
            let mut d_lines = 0;
            let mut k = ranges.partition_point(|&(s, e)| e < start || (e == start && s < start));
            while let Some(&(s, e)) = ranges.get(k) {
                if s >= end && !holds(s) {
                    break;
                }
                let a = s.max(start);
                if a > pos {
                    pieces.push((pos - start, out.len(), a - pos));
                    out.extend_from_slice(&old[pos - start..a - start]);
                }
                if holds(s) {
                    out.extend_from_slice(repl);
                    d_lines += lines(repl);
                }
                let b = e.min(end);
                if b > a {
                    d_lines -= lines(&old[a - start..b - start]);
                }
                pos = pos.max(b);
                if e > end {
                    break;
                }
                k += 1;
            }
            if pos < end {
                pieces.push((pos - start, out.len(), end - pos));
                out.extend_from_slice(&old[pos - start..]);
            }
            // The occurrences left lie in kept pieces.
            let chunk = &mut self.chunks[id];
            let mut p = 0;
            for o in &mut chunk.occ {
                while p + 1 < pieces.len() && o.0 >= pieces[p].0 + pieces[p].2 {
                    p += 1;
                }
                if let Some(&(old_at, new_at, _)) = pieces.get(p) {
                    o.0 = o.0 - old_at + new_at;
                }
            }
            let d_bytes = out.len() as isize - old.len() as isize;
            chunk.bytes = out;
            chunk.lines = chunk.lines.wrapping_add_signed(d_lines);
            self.sums.add(r, [d_bytes as usize, d_lines as usize]);
            delta += d_bytes;
        }
        self.len = self.len.wrapping_add_signed(delta);
        ranks
    }

    /// Cuts the rewritten chunks that grew too big and drops emptied ones.
    fn rebalance(&mut self, ranks: &[usize]) {
        let big: Vec<usize> = ranks
            .iter()
            .map(|&r| self.order[r])
            .filter(|&id| self.too_big(id))
            .collect();
        let empty = ranks
            .iter()
            .any(|&r| self.chunks[self.order[r]].bytes.is_empty());
        if big.is_empty() && !(empty && self.order.len() > 1) {
            return;
        }
        let mut order = Vec::with_capacity(self.order.len() + big.len() * 4);
        for i in 0..self.order.len() {
            let id = self.order[i];
            let len = self.chunks[id].bytes.len();
            if len == 0 && self.order.len() > 1 {
                continue;
            }
            if !self.too_big(id) {
                order.push(id);
                continue;
            }
            let bytes = std::mem::take(&mut self.chunks[id].bytes);
            let occ = std::mem::take(&mut self.chunks[id].occ);
            let text = String::from_utf8_lossy(&bytes);
            // Pieces of the chunk's size, or smaller where occurrences are
            // dense: every splice walks its chunk's occurrences.
            let size = if occ.len() > MAX_OCC {
                (bytes.len() * (MAX_OCC / 2) / occ.len()).clamp(1, self.chunk)
            } else {
                self.chunk
            };
            let mut at = 0;
            let mut o = 0;
            let mut first = true;
            while at < bytes.len() {
                let end = if text.len() == bytes.len() {
                    cut(&text, at, size)
                } else {
                    (at + size).min(bytes.len())
                };
                let new_id = if first {
                    id
                } else {
                    self.chunks.push(Chunk::default());
                    self.rank.push(usize::MAX);
                    self.chunks.len() - 1
                };
                first = false;
                let mut piece_occ = Vec::new();
                while o < occ.len() && occ[o].0 < end {
                    let (off, k, f) = occ[o];
                    piece_occ.push((off - at, k, f));
                    if new_id != id
                        && let Some(index) = &mut self.index
                    {
                        uncount(index, k, id, f);
                        add(index.chunks_of[k as usize].entry(new_id).or_default(), f);
                    }
                    o += 1;
                }
                self.chunks[new_id] = Chunk {
                    lines: memchr::memchr_iter(b'\n', &bytes[at..end]).count(),
                    bytes: bytes[at..end].to_vec(),
                    occ: piece_occ,
                };
                order.push(new_id);
                at = end;
            }
        }
        if order.is_empty() {
            order.push(self.order[0]);
        }
        self.order = order;
        self.reorder();
    }

    /// Whether chunk `id` is to be cut: grown past four times the size, or
    /// holding more occurrences than a splice should walk.
    fn too_big(&self, id: usize) -> bool {
        let c = &self.chunks[id];
        c.bytes.len() > 4 * self.chunk || (c.occ.len() > MAX_OCC && c.bytes.len() > 1)
    }

    /// Makes the ranks and sums anew from `order`.
    fn reorder(&mut self) {
        self.rank.resize(self.chunks.len(), usize::MAX);
        for (r, &id) in self.order.iter().enumerate() {
            self.rank[id] = r;
        }
        let chunks = &self.chunks;
        self.sums = Sums::build(
            self.order
                .iter()
                .map(|&id| [chunks[id].bytes.len(), chunks[id].lines]),
        );
    }
}

impl Hay for Editing {
    fn len(&self) -> usize {
        self.len
    }

    fn virtual_final(&self) -> bool {
        self.virtual_final
    }

    fn raw<'t>(&self, text: &'t str) -> Cow<'t, [u8]> {
        if self.crlf {
            Cow::Owned(crlf_of(text.as_bytes()))
        } else {
            Cow::Borrowed(text.as_bytes())
        }
    }

    fn starts(&self, needle: &[u8]) -> Option<Vec<usize>> {
        self.occurrences(needle)
    }

    fn range_starts(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Option<(Vec<(usize, usize)>, Option<usize>)> {
        self.ranges(start, end)
    }

    fn bytes(&self, from: usize, to: usize) -> Cow<'_, [u8]> {
        Cow::Owned(self.bytes_in(from, to.min(self.len)))
    }

    fn byte(&self, pos: usize) -> Option<u8> {
        if pos >= self.len {
            return None;
        }
        let (r, start) = self.locate(pos);
        self.chunks[self.order[r]].bytes.get(pos - start).copied()
    }

    fn line_start(&self, pos: usize) -> usize {
        let mut pos = pos.min(self.len);
        while pos > 0 {
            let (r, start) = self.locate(pos - 1);
            let b = &self.chunks[self.order[r]].bytes;
            if let Some(i) = memchr::memrchr(b'\n', &b[..pos - start]) {
                return start + i + 1;
            }
            pos = start;
        }
        0
    }

    fn line_end_within(&self, start: usize, max: usize) -> Option<(usize, usize)> {
        let until = start.saturating_add(max).saturating_add(2).min(self.len);
        let mut at = start;
        while at < until {
            let (r, chunk_start) = self.locate(at);
            let b = &self.chunks[self.order[r]].bytes;
            let to = (until - chunk_start).min(b.len());
            if let Some(i) = memchr::memchr(b'\n', &b[at - chunk_start..to]) {
                let lf = at + i;
                return Some((lf, lf + 1));
            }
            at = chunk_start + to;
        }
        (until >= self.len).then_some((self.len, self.len))
    }

    fn lines_of(&self, positions: &mut dyn Iterator<Item = usize>) -> Vec<usize> {
        Editing::lines_of(self, positions)
    }

    fn lines_holding(&self, body: &[u8], whole: bool) -> Option<Vec<usize>> {
        if body.len() < self.min_pivot {
            return None;
        }
        let mut out = Vec::new();
        for a in self.occurrences(body)? {
            let Some(indent) = self.indent_before(a) else {
                continue;
            };
            if whole {
                let (end, _) = self.line_end(a);
                let rest = self.bytes_in(a + body.len(), end);
                let rest = rest.strip_suffix(b"\r").unwrap_or(&rest);
                if !rest.iter().all(|&c| super::tier::is_space(c)) {
                    continue;
                }
            }
            out.push(a - indent.len());
        }
        Some(out)
    }

    fn whole(&self) -> bool {
        false
    }

    fn tally(&self, needle: &[u8]) -> Option<Tally> {
        let k = self.counted_key(needle)?;
        let t = self.index.as_ref()?.totals.get(k as usize).copied()?;
        (t.all > self.count_from && !seek::overlaps_itself(needle)).then_some(t)
    }

    fn first_of(&self, needle: &[u8], kind: Kind, from: usize, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let Some(k) = self.counted_key(needle) else {
            return out;
        };
        for r in self.ranks_holding(k, kind) {
            let start = self.sums.before(r)[0];
            let chunk = &self.chunks[self.order[r]];
            if start + chunk.bytes.len() <= from {
                continue;
            }
            for o in &chunk.occ {
                if out.len() >= n {
                    return out;
                }
                if o.1 == k && kind.holds(o.2) && start + o.0 >= from {
                    out.push(start + o.0);
                }
            }
            if out.len() >= n {
                break;
            }
        }
        out
    }

    fn last_before(&self, needle: &[u8], kind: Kind, pos: usize) -> Option<usize> {
        let k = self.counted_key(needle)?;
        for r in self.ranks_holding(k, kind).into_iter().rev() {
            let start = self.sums.before(r)[0];
            if start >= pos {
                continue;
            }
            let chunk = &self.chunks[self.order[r]];
            let last = chunk
                .occ
                .iter()
                .rev()
                .find(|o| o.1 == k && kind.holds(o.2) && start + o.0 < pos);
            if let Some(o) = last {
                return Some(start + o.0);
            }
        }
        None
    }

    fn line_pos(&self, line: usize) -> usize {
        // After the line feed that ends line `line - 1`.
        let Some(feeds) = line.checked_sub(1).filter(|&f| f > 0) else {
            return 0;
        };
        let (r, before) = self.sums.seek_lines(feeds);
        let Some(&id) = self.order.get(r) else {
            return self.len;
        };
        let start = self.sums.before(r)[0];
        memchr::memchr_iter(b'\n', &self.chunks[id].bytes)
            .nth(feeds - before - 1)
            .map_or(self.len, |i| start + i + 1)
    }
}

/// What stands before a place on its line.
#[derive(Clone, Copy, Debug)]
struct Before {
    /// The line starts there.
    start: bool,
    /// Only white space stands before it on its line.
    blank: bool,
}

impl Before {
    const LINE: Before = Before {
        start: true,
        blank: true,
    };

    /// What stands before the next place, after byte `b`.
    fn step(&mut self, b: u8) {
        if b == b'\n' {
            *self = Before::LINE;
        } else {
            self.start = false;
            self.blank &= is_space(b);
        }
    }

    /// What stands before the place after `bytes`, read from here: the
    /// text after its last line feed is read only as far as its first
    /// byte that is not white space.
    fn skip(&mut self, bytes: &[u8]) {
        let rest = match memchr::memrchr(b'\n', bytes) {
            Some(i) => {
                *self = Before::LINE;
                &bytes[i + 1..]
            }
            None => bytes,
        };
        if !rest.is_empty() {
            self.start = false;
            self.blank = self.blank && rest.iter().all(|&b| is_space(b));
        }
    }

    /// The flags of an occurrence here.
    fn flags(self) -> u8 {
        let mut f = 0;
        if self.start {
            f |= LINE_START;
        } else if self.blank {
            f |= SHIFTED;
        }
        f
    }
}

/// Counts one occurrence with `flags` more in `t`.
fn add(t: &mut Tally, flags: u8) {
    t.all += 1;
    t.line_start += usize::from(flags & LINE_START != 0);
    t.shifted += usize::from(flags & SHIFTED != 0);
}

/// Counts one occurrence with `flags` fewer in `t`.
fn take(t: &mut Tally, flags: u8) {
    t.all = t.all.saturating_sub(1);
    t.line_start = t
        .line_start
        .saturating_sub(usize::from(flags & LINE_START != 0));
    t.shifted = t.shifted.saturating_sub(usize::from(flags & SHIFTED != 0));
}

/// Two sorted lists as one.
fn merged(a: Vec<(usize, u32, u8)>, b: Vec<(usize, u32, u8)>) -> Vec<(usize, u32, u8)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        out.extend(next);
    }
    out
}

/// Forgets one occurrence of key `k` with `flags` in chunk `id`.
fn forget(index: &mut Index, k: u32, id: usize, flags: u8) {
    index.held = index.held.saturating_sub(1);
    uncount(index, k, id, flags);
    if let Some(t) = index.totals.get_mut(k as usize) {
        take(t, flags);
    }
}

/// Counts one occurrence of key `k` with `flags` fewer in chunk `id` (it
/// is forgotten, or moves to another chunk).
fn uncount(index: &mut Index, k: u32, id: usize, flags: u8) {
    let map = &mut index.chunks_of[k as usize];
    if let Some(t) = map.get_mut(&id) {
        take(t, flags);
        if t.all == 0 {
            map.remove(&id);
        }
    }
}

/// Whether an occurrence at `a` of `len` bytes touches one of `ranges`
/// (sorted, disjoint): overlaps it, or straddles an empty one.
fn touches(ranges: &[(usize, usize)], a: usize, len: usize) -> bool {
    let i = ranges.partition_point(|r| r.1 <= a);
    ranges
        .get(i)
        .is_some_and(|&(s, e)| a < e.max(s + 1) && a + len > s && (s < e || a < s))
}

/// `text` with every LF written CRLF.
fn crlf_of(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for &b in text {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Where a chunk starting at `at` ends: about `size` bytes on, at a
/// character boundary.
fn cut(text: &str, at: usize, size: usize) -> usize {
    let mut end = (at + size).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use proptest::prelude::*;

    use super::*;
    use crate::engine::matching::HintBudget;
    use crate::engine::seek::Target;
    use crate::engine::tier::Pass;
    use crate::syntax::Count;

    fn n(k: usize) -> Count {
        Count::Exactly(NonZeroUsize::new(k).unwrap())
    }

    fn edit_of<'a>(search: &'a str, replace: &'a str, count: Count) -> Search<'a> {
        Search::text(search, replace, count)
    }

    /// An edit as the tests write it, with the passes it may use.
    #[derive(Clone, Debug)]
    enum Edit {
        Text(String, String, Count, &'static [Pass]),
        /// A line-based dialect's edit: whole lines.
        Lines(String, String, Count, &'static [Pass]),
        Range(String, String, String, Count, &'static [Pass]),
        /// An edit with a line hint (a dialect's), whole lines or not.
        Hinted(String, String, Count, NonZeroUsize, bool),
    }

    impl Edit {
        fn search(&self) -> Search<'_> {
            match self {
                Edit::Text(search, replace, count, passes) => Search {
                    passes,
                    ..Search::text(search, replace, *count)
                },
                Edit::Lines(search, replace, count, passes) => Search {
                    passes,
                    whole_lines: true,
                    ..Search::text(search, replace, *count)
                },
                Edit::Hinted(search, replace, count, line, whole) => Search {
                    line: Some(*line),
                    whole_lines: *whole,
                    ..Search::text(search, replace, *count)
                },
                Edit::Range(start, end, replace, count, passes) => Search {
                    target: Target::Range(start, end),
                    passes,
                    ..Search::text(start, replace, *count)
                },
            }
        }
    }

    /// Makes an edit as the view does: from the index where it answers,
    /// else from the whole text. Checks that what the index answers is
    /// what the whole text says.
    fn step(e: &mut Editing, edit: &Edit) -> Result<(usize, Vec<usize>), ()> {
        let search = edit.search();
        let answer = e.find(search);
        let hints = HintBudget::new(usize::MAX);
        let whole = search.find_in(&e.text(), None, &hints);
        let planned = match (answer, whole) {
            (Some(Answer::Found(p)), Ok(f)) => {
                assert_eq!((p.replacements, &p.lines), (f.replacements, &f.lines));
                assert_eq!(p, e.planned_from(&f), "index and whole text disagree");
                p
            }
            (Some(Answer::Found(_)), Err(m)) => {
                panic!("the index found what the text does not: {m:?}")
            }
            (Some(Answer::Miss(m)), Ok(f)) => {
                panic!("the index missed what the text has: {f:?}, {m:?}")
            }
            (Some(Answer::Miss(m)), Err(mut whole)) => {
                // Made from the index alone, the error is the whole
                // text's but for the closest region.
                whole.closest = None;
                whole.closest_skipped = false;
                assert_eq!(m, whole, "the index's error differs");
                return Err(());
            }
            (Some(Answer::Unknown), Err(_)) => return Err(()),
            (Some(Answer::Unknown), Ok(f)) => e.planned_from(&f),
            (None, _) => panic!("no CR in these tests"),
        };
        e.apply(&planned);
        Ok((planned.replacements, planned.lines))
    }

    /// What the same edit does to the whole text.
    fn plain(text: &mut String, edit: &Edit) -> Result<(usize, Vec<usize>), ()> {
        let hints = HintBudget::new(usize::MAX);
        let found = edit.search().find_in(text, None, &hints).map_err(|_| ())?;
        found.apply_text(text);
        Ok((found.replacements, found.lines))
    }

    /// Every occurrence the index holds, by position and key, with what
    /// stands before it on its line.
    fn held(e: &Editing) -> Vec<(usize, Vec<u8>, u8)> {
        let Some(index) = &e.index else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (r, &id) in e.order.iter().enumerate() {
            let start = e.sums.before(r)[0];
            for &(off, k, f) in &e.chunks[id].occ {
                out.push((start + off, index.keys[k as usize].clone(), f));
            }
        }
        out.sort();
        out
    }

    /// What stands before `a` on its line, read the plain way.
    fn flags_at(raw: &[u8], a: usize) -> u8 {
        let line = raw[..a]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if line == a {
            LINE_START
        } else if raw[line..a].iter().all(|&b| is_space(b)) {
            SHIFTED
        } else {
            0
        }
    }

    /// The structure is what it says: sums, ranks, counts of the index,
    /// and the index holds exactly the occurrences a fresh pass finds.
    fn check(e: &Editing, keys: &[Vec<u8>]) {
        let mut start = 0;
        let mut lines = 0;
        for (r, &id) in e.order.iter().enumerate() {
            assert_eq!(e.rank[id], r);
            assert_eq!(e.sums.before(r), [start, lines], "sums before rank {r}");
            let b = &e.chunks[id].bytes;
            start += b.len();
            lines += memchr::memchr_iter(b'\n', b).count();
            assert!(e.chunks[id].occ.is_sorted());
        }
        assert_eq!(start, e.len);
        let Some(index) = &e.index else { return };
        for (k, map) in index.chunks_of.iter().enumerate() {
            let mut total = Tally::default();
            for (&id, &count) in map {
                let mut here = Tally::default();
                for o in e.chunks[id].occ.iter().filter(|o| o.1 as usize == k) {
                    add(&mut here, o.2);
                    add(&mut total, o.2);
                }
                assert_eq!(here, count, "count of key {k} in chunk {id}");
                assert!(count.all > 0, "an empty count is kept");
            }
            assert_eq!(index.totals[k], total, "the totals of key {k}");
        }
        // Every occurrence of every key, overlapping ones included, found
        // by looking at every position, and what stands before it.
        let raw = e.bytes_in(0, e.len);
        let mut every: Vec<(usize, Vec<u8>, u8)> = Vec::new();
        for k in &index.keys {
            for a in 0..raw.len() {
                if raw[a..].starts_with(k) {
                    every.push((a, k.clone(), flags_at(&raw, a)));
                }
            }
        }
        every.sort();
        assert_eq!(held(e), every, "the index misses or invents occurrences");
        let mut fresh = Editing::with_sizes(&e.text(), e.chunk, e.key_max).unwrap();
        fresh.index(keys.iter().map(|k| &k[..]), 0);
        assert_eq!(
            held(e),
            held(&fresh),
            "the index is not what a fresh pass finds"
        );
        assert_eq!(index.held, held(e).len());
    }

    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "a", "b", "ab", "\n", "é", "a\n", "\n\n", "\u{feff}", "  ", "\t", "  a\n", " b ",
            "\n  ab\n",
        ])
    }

    fn text_of(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 0..max).prop_map(|v| v.concat())
    }

    fn some_text(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 1..max).prop_map(|v| v.concat())
    }

    fn count() -> impl Strategy<Value = Count> {
        prop_oneof![Just(n(1)), Just(n(2)), Just(Count::All)]
    }

    /// The passes an edit may use: none (`--match exact`), clada's
    /// white-space tier, codex's passes.
    fn passes() -> impl Strategy<Value = &'static [Pass]> {
        use crate::syntax::Policy;
        prop_oneof![
            1 => Just(crate::engine::tier::passes(Policy::Clada, false)),
            2 => Just(crate::engine::tier::passes(Policy::Clada, true)),
            1 => Just(crate::engine::tier::passes(Policy::Codex, true)),
        ]
    }

    fn edit() -> impl Strategy<Value = Edit> {
        prop_oneof![
            3 => (some_text(5), text_of(5), count(), passes())
                .prop_map(|(s, r, c, p)| Edit::Text(s, r, c, p)),
            1 => (some_text(3), some_text(3), text_of(4), count(), passes())
                .prop_map(|(s, e, r, c, p)| Edit::Range(s, e, r, c, p)),
            2 => hinted(),
        ]
    }

    /// An edit with a line hint, of short texts that occur often.
    fn hinted() -> impl Strategy<Value = Edit> {
        (
            some_text(3),
            text_of(3),
            prop_oneof![3 => Just(n(1)), 1 => count()],
            1usize..30,
            any::<bool>(),
        )
            .prop_map(|(s, r, c, line, whole)| {
                let line = NonZeroUsize::new(line).unwrap_or(NonZeroUsize::MIN);
                Edit::Hinted(s, r, c, line, whole)
            })
    }

    /// The keys of `edits`, as the view is told them (LF line breaks):
    /// search texts, replacements, and the lines the passes look for.
    fn keys_of(edits: &[Edit]) -> Vec<Vec<u8>> {
        edits
            .iter()
            .flat_map(|e| {
                let search = e.search();
                let mut keys: Vec<Vec<u8>> = search.texts().map(|t| key(t).to_vec()).collect();
                keys.push(key(search.replace).to_vec());
                keys.extend(search.pivots().map(|p| key_of_bytes(p).to_vec()));
                keys
            })
            .collect()
    }

    /// Lines at a few indentations, some with white space at their ends:
    /// texts made of them meet the passes often.
    fn indented_line() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["", "  ", "    ", "\t", "\t  "]),
            prop::sample::select(vec!["ab", "a", "b b", "é"]),
            prop::sample::select(vec!["", " ", "\t"]),
        )
            .prop_map(|(i, t, end)| format!("{i}{t}{end}\n"))
    }

    fn lines_of(min: usize, max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(indented_line(), min..max).prop_map(|v| v.concat())
    }

    fn line_edit() -> impl Strategy<Value = Edit> {
        (
            lines_of(1, 4),
            lines_of(0, 4),
            count(),
            passes(),
            any::<bool>(),
        )
            .prop_map(|(s, r, c, p, whole)| {
                if whole {
                    Edit::Lines(s, r, c, p)
                } else {
                    Edit::Text(s, r, c, p)
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The passes through the index find what they find on the whole
        /// text: occurrences, shifts, refusals and errors alike.
        #[test]
        fn indexed_passes_do_what_whole_text_passes_do(
            body in lines_of(0, 24),
            crlf in any::<bool>(),
            edits in prop::collection::vec(line_edit(), 1..8),
            chunk in 1usize..24,
            key_max in 1usize..12,
            count_from in 0usize..3,
        ) {
            let mut text = if crlf { body.replace('\n', "\r\n") } else { body };
            let mut e = Editing::with_sizes(&text, chunk, key_max).unwrap();
            e.min_pivot = 1;
            e.count_from = count_from;
            let keys = keys_of(&edits);
            e.index(keys.iter().map(|k| &k[..]), 1);
            check(&e, &keys);
            for edit in &edits {
                let want = plain(&mut text, edit);
                let got = step(&mut e, edit);
                prop_assert_eq!(&got, &want, "{:?}", edit);
                prop_assert_eq!(&e.text(), &text, "after {:?}", edit);
                check(&e, &keys);
            }
        }

        /// Edits through the index do what edits of the whole text do,
        /// whatever the chunks and keys, and the index stays exactly
        /// what a fresh pass over the text finds.
        #[test]
        fn indexed_edits_do_what_whole_text_edits_do(
            body in text_of(40),
            crlf in any::<bool>(),
            bom in any::<bool>(),
            edits in prop::collection::vec(edit(), 1..10),
            chunk in 1usize..12,
            key_max in 1usize..8,
            unindexed in prop::collection::vec(any::<bool>(), 10),
            count_from in 0usize..3,
        ) {
            let body = if crlf { body.replace('\n', "\r\n") } else { body };
            let mut text = if bom { format!("{BOM}{body}") } else { body };
            let mut e = Editing::with_sizes(&text, chunk, key_max).unwrap();
            // Lines of any length are looked for in the index, and keys
            // found more than `count_from` times are counted.
            e.min_pivot = 1;
            e.count_from = count_from;
            // Some edits' texts are not in the index: they are searched
            // plainly, and the index is kept true all the same.
            let known: Vec<Edit> = edits
                .iter()
                .zip(&unindexed)
                .filter(|(_, u)| !**u)
                .map(|(e, _)| e.clone())
                .collect();
            let keys = keys_of(&known);
            e.index(keys.iter().map(|k| &k[..]), 1);
            check(&e, &keys);
            for edit in &edits {
                let want = plain(&mut text, edit);
                let got = step(&mut e, edit);
                prop_assert_eq!(&got, &want, "{:?}", edit);
                prop_assert_eq!(&e.text(), &text, "after {:?}", edit);
                check(&e, &keys);
            }
        }
    }

    #[test]
    fn a_byte_order_mark_an_edit_leaves_at_the_start_is_never_matched() {
        for chunk in [1, 4, 64] {
            let mut e = Editing::with_sizes("a\nb\n", chunk, 4).unwrap();
            e.index([&b"a\n"[..], "\u{feff}a\n".as_bytes()].into_iter(), 1);
            let Some(Answer::Found(p)) = e.find(edit_of("a\n", "\u{feff}a\n", n(1))) else {
                panic!("not found");
            };
            e.apply(&p);
            assert_eq!(e.text(), "\u{feff}a\nb\n");
            // The whole-text search strips the mark: no match.
            assert!(matches!(
                e.find(edit_of("\u{feff}a\n", "c\n", n(1))),
                Some(Answer::Miss(_) | Answer::Unknown)
            ));
        }
    }

    #[test]
    fn the_index_answers_the_white_space_tier() {
        use crate::status::Matched;
        for crlf in [false, true] {
            let file = "class A:\n    def f(self):\n        return 1  \n";
            let file = if crlf {
                file.replace('\n', "\r\n")
            } else {
                file.to_owned()
            };
            let e0 = Edit::Text(
                "def f(self):\n    return 1\n".into(),
                "def f(self):\n    return 2\n".into(),
                n(1),
                crate::engine::tier::passes(crate::syntax::Policy::Clada, true),
            );
            let keys = keys_of(std::slice::from_ref(&e0));
            let mut e = Editing::with_sizes(&file, 8, 16).unwrap();
            e.index(keys.iter().map(|k| &k[..]), 1);
            let Some(Answer::Found(p)) = e.find(e0.search()) else {
                panic!("the index did not answer");
            };
            assert_eq!(p.how.matched, Matched::Whitespace);
            let mut text = file.clone();
            assert_eq!(step(&mut e, &e0), plain(&mut text, &e0));
            assert_eq!(e.text(), text);
            assert!(text.contains("        return 2"), "{text:?}");
            // Sent again, the replacement stands there: not applied twice.
            assert!(matches!(e.find(e0.search()), Some(Answer::Miss(m)) if m.already_applied));
        }
    }

    #[test]
    fn mixed_line_breaks_are_edited_on_the_whole_text() {
        assert!(Editing::new("a\r\nb\n").is_none());
        assert!(Editing::new("a\rb\n").is_none());
        assert!(Editing::new("a\r\nb\r\n").is_some());
        assert!(Editing::new("a\nb").is_some());
    }

    #[test]
    fn a_cr_in_the_search_or_replacement_is_left_to_the_whole_text() {
        let e = Editing::new("a\nb\n").unwrap();
        assert!(e.find(edit_of("a\r", "x", n(1))).is_none());
        assert!(e.find(edit_of("a\n", "x\r", n(1))).is_none());
        let range = Search {
            target: Target::Range("a", "b\r"),
            ..Search::text("a", "x", n(1))
        };
        assert!(e.find(range).is_none());
    }

    #[test]
    fn an_edit_of_the_last_line_keeps_the_file_without_a_final_line_feed() {
        for (text, search, replace, want) in [
            ("a\nb", "b\n", "c\n", "a\nc"),
            ("a\nb", "b\n", "c", "a\nc"),
            ("a\nb", "b\n", "", "a"),
            ("a", "a\n", "\n", ""),
            ("a", "a\n", "x\n\n", "x\n"),
            ("a\r\nb", "b\n", "c\n", "a\r\nc"),
            ("a\nb\n", "b\n", "b", "a\nb"),
        ] {
            let mut e = Editing::with_sizes(text, 1, 4).unwrap();
            e.index([key(search)].into_iter(), 1);
            let Some(Answer::Found(p)) = e.find(edit_of(search, replace, n(1))) else {
                panic!("{text:?}: {search:?} not found");
            };
            e.apply(&p);
            assert_eq!(e.text(), want, "{text:?}: {search:?} -> {replace:?}");
            let mut plain = text.to_owned();
            super::tests::plain(
                &mut plain,
                &Edit::Text(
                    search.into(),
                    replace.into(),
                    n(1),
                    crate::engine::tier::passes(crate::syntax::Policy::Clada, true),
                ),
            )
            .unwrap();
            assert_eq!(plain, want, "the whole-text edit agrees");
        }
    }

    #[test]
    fn a_long_search_is_found_by_its_key_and_checked_in_full() {
        let file: String = (0..200).map(|i| format!("line {}\n", i % 7)).collect();
        let search: String = (0..30).map(|i| format!("line {}\n", (i + 3) % 7)).collect();
        let mut e = Editing::with_sizes(&file, 64, 8).unwrap();
        e.index([key(&search)].into_iter(), 1);
        let whole = crate::engine::matching::edit(&file, &search, "x\n", Count::All).unwrap();
        let Some(Answer::Found(p)) = e.find(edit_of(&search, "x\n", Count::All)) else {
            panic!("not found");
        };
        assert_eq!(p.replacements, whole.replacements);
        e.apply(&p);
        assert_eq!(e.text(), whole.text);
    }

    #[test]
    fn chunks_dense_with_occurrences_are_cut_smaller() {
        let file = format!("mark A\n{}mark B\n{}", "\n".repeat(3000), "x\n".repeat(100));
        let edits = [
            Edit::Text(
                "mark A\n".into(),
                "mark C\n\n".into(),
                n(1),
                crate::engine::tier::passes(crate::syntax::Policy::Clada, true),
            ),
            Edit::Text(
                "\n\n\n".into(),
                "\n".into(),
                n(1),
                crate::engine::tier::passes(crate::syntax::Policy::Clada, true),
            ),
            Edit::Text(
                "mark B\n".into(),
                "\n\n".into(),
                n(1),
                crate::engine::tier::passes(crate::syntax::Policy::Clada, true),
            ),
            Edit::Text(
                "\n\n".into(),
                "y\n".into(),
                Count::All,
                crate::engine::tier::passes(crate::syntax::Policy::Clada, true),
            ),
        ];
        let keys = keys_of(&edits);
        let mut e = Editing::new(&file).unwrap();
        e.index(keys.iter().map(|k| &k[..]), 1);
        assert!(e.order.len() > 1, "the dense chunk is cut");
        assert!(
            e.chunks
                .iter()
                .all(|c| c.occ.len() <= MAX_OCC || c.bytes.len() == 1)
        );
        check(&e, &keys);
        let mut text = file.clone();
        for edit in &edits {
            assert_eq!(step(&mut e, edit), plain(&mut text, edit));
            assert_eq!(e.text(), text);
            check(&e, &keys);
        }
    }

    /// A text found on every line, edited hunk after hunk near a line
    /// hint, or refused for its count: the counts answer as the listing
    /// does, with the same choice, candidates and error.
    #[test]
    fn a_text_on_every_line_is_counted_not_listed() {
        for (whole, body) in [
            (true, "x\n"),
            (false, "x\n"),
            (false, "  x\n"),
            (false, "x\n  x\n"),
        ] {
            let mut text = body.repeat(300);
            let mut e = Editing::with_sizes(&text, 256, KEY_MAX).unwrap();
            let edits: Vec<Edit> = (1..40)
                .map(|i| {
                    let line = NonZeroUsize::new(i * 7).unwrap_or(NonZeroUsize::MIN);
                    if i % 5 == 0 {
                        Edit::Text("x\n".into(), "y\n".into(), n(1), &[])
                    } else {
                        Edit::Hinted("x\n".into(), "y\n".into(), n(1), line, whole)
                    }
                })
                .collect();
            let keys = keys_of(&edits);
            e.index(keys.iter().map(|k| &k[..]), 1);
            assert!(e.tally(b"x\n").is_some(), "the text is counted");
            for edit in &edits {
                let want = plain(&mut text, edit);
                let got = step(&mut e, edit);
                assert_eq!(got, want, "{edit:?}");
                assert_eq!(e.text(), text);
            }
            check(&e, &keys);
        }
    }

    #[test]
    fn chunks_grown_by_edits_are_cut_again() {
        let mut e = Editing::with_sizes("a\nb\nc\n", 2, 4).unwrap();
        e.index([&b"b\n"[..]].into_iter(), 1);
        let big = "y\n".repeat(50);
        let Some(Answer::Found(p)) = e.find(edit_of("b\n", &big, n(1))) else {
            panic!("not found");
        };
        e.apply(&p);
        assert!(e.chunks.iter().all(|c| c.bytes.len() <= 4 * 2 + 2));
        assert_eq!(e.text(), format!("a\n{big}c\n"));
        check(&e, &[b"b\n".to_vec()]);
    }
}
