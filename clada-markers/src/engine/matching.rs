//! Matching and replacement in a file's whole text (PROTOCOL §3 SEARCH and
//! SEARCH-START, §4).
//!
//! Everything here is a pure function of strings: no file system. The
//! search itself is [`super::seek`]'s, over the text prepared here: CRLF
//! and LF count as the same line break; a file without a final line feed
//! is matched as if it had one and keeps lacking it; a byte-order mark is
//! kept and never matched. Only the matched bytes change: the replacement
//! is written in the file's line break style (that of its first line
//! break) and every other byte stays as it was.
//!
//! When nothing can be replaced, [`Mismatch`] carries what an agent needs
//! to fix its edit: where the occurrences are (with the lines around
//! them), or the most similar region of the file with a diff, whether the
//! replacement is already there, or why a shifted match could not be
//! re-indented. The closest region is a hint only; nothing is ever applied
//! by a fuzzy match.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::engine::seek::{self, Hay, How, Mismatch, Miss, Plan};
use crate::engine::seek::{Search, Target};
use crate::status::Matched;
use crate::syntax::BOM;
use crate::syntax::Count;

/// A region less like the search text than this (the mean of the share of
/// words in place and the share of characters in common) is not offered as
/// a hint: a diff against unrelated text only misleads.
pub(crate) const MIN_SIMILARITY: f64 = 0.5;

/// How much file text the closest-region hints of one run may read, in
/// bytes: looking for the closest region reads the whole file, so a
/// document of many failing edits of one big file would cost the file's
/// size times the failures. Past it a failure says no closest region was
/// looked for; the first failure always looks.
pub(crate) const HINT_BUDGET: usize = 128 * 1024 * 1024;

/// What is left of a run's [`HINT_BUDGET`].
#[derive(Debug)]
pub(crate) struct HintBudget(Cell<usize>);

impl HintBudget {
    pub(crate) fn new(bytes: usize) -> Self {
        HintBudget(Cell::new(bytes))
    }

    /// Whether nothing is left.
    pub(crate) fn spent(&self) -> bool {
        self.0.get() == 0
    }

    /// Whether a hint may read `len` more bytes, taking them if so.
    fn take(&self, len: usize) -> bool {
        let left = self.0.get();
        self.0.set(left.saturating_sub(len));
        left > 0
    }
}

/// A successful edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edited {
    /// The whole new file text.
    pub text: String,
    /// How many occurrences were replaced.
    pub replacements: usize,
    /// The 1-based line of each replaced occurrence (of the first
    /// `MAX_LISTED_LINES`, 100).
    pub lines: Vec<usize>,
    /// How the search text was found.
    pub matched: Matched,
    /// How far the replacement was re-indented, if it was.
    pub shift: Option<crate::status::Shift>,
}

/// An edit found and ready to be made: which bytes of the file change to
/// what. [`Found::apply`] changes the file's bytes in place, so that many
/// edits of one file cost a search and a splice each, never a copy of the
/// whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    /// Byte ranges of the file (sorted, disjoint) to replace.
    ranges: Vec<(usize, usize)>,
    /// The replacement, in the file's line break style.
    replacement: String,
    /// The last range took the final line of a file without a final line
    /// feed: the result lacks one too.
    trim_final: bool,
    /// How many occurrences are replaced.
    pub(crate) replacements: usize,
    /// The 1-based line of each replaced occurrence (of the first
    /// `MAX_LISTED_LINES`, 100).
    pub(crate) lines: Vec<usize>,
    /// How the search text was found.
    pub(crate) how: How,
}

impl Found {
    /// Makes the edit in `file`, the bytes it was found in.
    pub(crate) fn apply(&self, file: &mut Vec<u8>) {
        let repl = self.replacement.as_bytes();
        match self.ranges.as_slice() {
            [] => {}
            [(s, e)] => {
                file.splice(*s..*e, repl.iter().copied());
            }
            ranges => {
                let mut out = Vec::with_capacity(file.len() + ranges.len() * repl.len());
                let mut prev = 0;
                for &(s, e) in ranges {
                    out.extend_from_slice(&file[prev..s]);
                    out.extend_from_slice(repl);
                    prev = e;
                }
                out.extend_from_slice(&file[prev..]);
                *file = out;
            }
        }
        // The virtual final line feed was replaced along with the last
        // line: keep the file without a final line break.
        if self.trim_final {
            if file.ends_with(b"\r\n") {
                file.truncate(file.len() - 2);
            } else if file.ends_with(b"\n") {
                file.truncate(file.len() - 1);
            }
        }
    }

    /// Makes the edit in `file`, the text it was found in.
    pub(crate) fn apply_text(&self, file: &mut String) {
        match self.ranges.as_slice() {
            [] => {}
            [(s, e)] => file.replace_range(*s..*e, &self.replacement),
            ranges => {
                let mut out =
                    String::with_capacity(file.len() + ranges.len() * self.replacement.len());
                let mut prev = 0;
                for &(s, e) in ranges {
                    out.push_str(file.get(prev..s).unwrap_or_default());
                    out.push_str(&self.replacement);
                    prev = e;
                }
                out.push_str(file.get(prev..).unwrap_or_default());
                *file = out;
            }
        }
        if self.trim_final {
            if file.ends_with("\r\n") {
                file.truncate(file.len() - 2);
            } else if file.ends_with('\n') {
                file.truncate(file.len() - 1);
            }
        }
    }

    /// The byte ranges of the file it replaces (sorted, disjoint).
    pub(crate) fn ranges(&self) -> &[(usize, usize)] {
        &self.ranges
    }

    /// The replacement, in the file's line break style.
    pub(crate) fn replacement(&self) -> &str {
        &self.replacement
    }

    /// Whether the last range takes the final line of a file that lacks a
    /// final line feed (matched as if it had one).
    pub(crate) fn trims_final(&self) -> bool {
        self.trim_final
    }

    /// Whether the replacement brings a CR into the file.
    pub(crate) fn adds_cr(&self) -> bool {
        self.replacement.contains('\r')
    }

    /// The edit made on a copy of `file`.
    fn edited(self, file: &str) -> Edited {
        Edited {
            text: self.applied_to(file),
            replacements: self.replacements,
            lines: self.lines,
            matched: self.how.matched,
            shift: self.how.shift,
        }
    }

    /// The new text of `file`.
    fn applied_to(&self, file: &str) -> String {
        let mut bytes = file.as_bytes().to_vec();
        self.apply(&mut bytes);
        // Ranges end and start at character boundaries and the
        // replacement is text: the result is text.
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into())
    }
}

use crate::status::Closest;

/// A file's text prepared for matching: the byte-order mark split off, line
/// breaks normalised to LF, and a line feed added where the file lacks a
/// final one.
struct Prepared<'a> {
    bom: bool,
    /// The file without its byte-order mark.
    body: &'a str,
    /// `body` with every CR before a line feed removed, plus a virtual line
    /// feed when `body` lacks a final one: `body` itself for most files.
    norm: std::borrow::Cow<'a, str>,
    /// Positions in `norm` of the line feeds whose CR was removed.
    crs: Vec<usize>,
    /// The file's style: its first line break is CRLF.
    crlf: bool,
    missing_final: bool,
}

impl<'a> Prepared<'a> {
    fn new(file: &'a str, cr: Option<bool>) -> Self {
        let (bom, body) = match file.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, file),
        };
        let crlf = memchr::memchr(b'\n', body.as_bytes())
            .is_some_and(|i| i > 0 && body.as_bytes()[i - 1] == b'\r');
        let missing_final = !body.is_empty() && !body.ends_with('\n');
        let mut crs = Vec::new();
        let has_cr = cr.unwrap_or_else(|| memchr::memchr(b'\r', body.as_bytes()).is_some());
        let norm = if !missing_final && !has_cr {
            std::borrow::Cow::Borrowed(body)
        } else {
            let mut norm = String::with_capacity(body.len() + 1);
            let mut last = 0;
            for i in memchr::memmem::find_iter(body.as_bytes(), b"\r\n") {
                norm.push_str(&body[last..i]);
                crs.push(norm.len());
                last = i + 1;
            }
            norm.push_str(&body[last..]);
            if missing_final {
                norm.push('\n');
            }
            std::borrow::Cow::Owned(norm)
        };
        Prepared {
            bom,
            body,
            norm,
            crs,
            crlf,
            missing_final,
        }
    }

    /// The position in `body` of position `p` of `norm`. A position at a
    /// line feed whose CR was removed maps to the CR, so that the CR goes
    /// with its line feed.
    fn body_pos(&self, p: usize) -> usize {
        let before = self.crs.partition_point(|&q| q < p);
        (p + before).min(self.body.len())
    }

    /// Writes `text` (LF line breaks) in the file's style.
    fn styled<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self.crlf && text.contains('\n') {
            std::borrow::Cow::Owned(text.replace('\n', "\r\n"))
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    /// The edit `plan` found in `norm`, in the file's bytes.
    fn found(&self, plan: Plan) -> Found {
        let offset = if self.bom { BOM.len() } else { 0 };
        let ranges = &plan.ranges;
        Found {
            trim_final: self.missing_final && ranges.last().is_some_and(|r| r.1 == self.norm.len()),
            replacements: ranges.len(),
            ranges: ranges
                .iter()
                .map(|&(s, e)| (offset + self.body_pos(s), offset + self.body_pos(e)))
                .collect(),
            replacement: self.styled(&plan.written).into_owned(),
            lines: plan.lines,
            how: plan.how,
        }
    }

    /// The 1-based line of each position (sorted ascending).
    fn lines_of(&self, positions: impl Iterator<Item = usize>) -> Vec<usize> {
        let bytes = self.norm.as_bytes();
        let mut line = 1;
        let mut at = 0;
        positions
            .map(|p| {
                line += memchr::memchr_iter(b'\n', &bytes[at..p]).count();
                at = p;
                line
            })
            .collect()
    }
}

impl Search<'_> {
    /// Finds where the edit would replace in `file`, the whole text;
    /// `cr` says whether the file holds a CR, when that is known.
    pub(crate) fn find_in(
        &self,
        file: &str,
        cr: Option<bool>,
        hints: &HintBudget,
    ) -> Result<Found, Box<Mismatch>> {
        let view = Prepared::new(file, cr);
        match seek::seek(&view, self) {
            Ok(plan) => Ok(view.found(plan)),
            Err(Miss::Mismatch(mut m)) => {
                if m.found == 0 && !m.already_applied {
                    let looked_for = match self.target {
                        Target::Text(search) => search,
                        Target::Range(start, _) => start,
                    };
                    if hints.take(view.norm.len()) {
                        m.closest = closest(&view.norm, looked_for);
                    } else {
                        m.closest_skipped = true;
                    }
                }
                Err(m)
            }
            // The whole text answers everything.
            Err(Miss::Unknown | Miss::Stopped) => {
                Err(Box::new(Mismatch::of(&view, &[], self.count)))
            }
        }
    }
}

impl Hay for Prepared<'_> {
    fn len(&self) -> usize {
        self.norm.len()
    }

    fn virtual_final(&self) -> bool {
        self.missing_final
    }

    fn raw<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, [u8]> {
        std::borrow::Cow::Borrowed(text.as_bytes())
    }

    fn starts(&self, needle: &[u8]) -> Option<Vec<usize>> {
        if needle.is_empty() {
            return Some(Vec::new());
        }
        Some(memchr::memmem::find_iter(self.norm.as_bytes(), needle).collect())
    }

    /// A line feed and the needle are looked for, and the search goes on
    /// from the last byte of each occurrence taken (a line feed, when the
    /// needle ends with one, that may start the next): the text is read
    /// once, and adjacent occurrences are all found.
    fn line_starts_of(&self, needle: &[u8]) -> Option<Vec<usize>> {
        let hay = self.norm.as_bytes();
        let mut out = Vec::new();
        if needle.is_empty() {
            return Some(out);
        }
        let back = usize::from(needle.ends_with(b"\n"));
        let mut from = 0;
        if hay.starts_with(needle) {
            out.push(0);
            from = needle.len() - back;
        }
        let mut pattern = Vec::with_capacity(needle.len() + 1);
        pattern.push(b'\n');
        pattern.extend_from_slice(needle);
        let finder = memchr::memmem::Finder::new(&pattern);
        while let Some(i) = hay.get(from..).and_then(|h| finder.find(h)) {
            let start = from + i + 1;
            out.push(start);
            from = start + needle.len() - back;
        }
        Some(out)
    }

    fn range_starts(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Option<(Vec<(usize, usize)>, Option<usize>)> {
        let hay = self.norm.as_bytes();
        let start_finder = memchr::memmem::Finder::new(start);
        let end_finder = memchr::memmem::Finder::new(end);
        let mut ranges = Vec::new();
        let mut dangling = None;
        let mut pos = 0;
        if !start.is_empty() && !end.is_empty() {
            while let Some(s) = start_finder.find(&hay[pos..]).map(|i| pos + i) {
                let after = s + start.len();
                match end_finder.find(&hay[after..]) {
                    Some(i) => {
                        let e = after + i + end.len();
                        ranges.push((s, e));
                        pos = e;
                    }
                    None => {
                        dangling = Some(s);
                        break;
                    }
                }
                if pos >= hay.len() {
                    break;
                }
            }
        }
        Some((ranges, dangling))
    }

    fn bytes(&self, from: usize, to: usize) -> std::borrow::Cow<'_, [u8]> {
        let b = self.norm.as_bytes();
        let to = to.min(b.len());
        std::borrow::Cow::Borrowed(&b[from.min(to)..to])
    }

    fn byte(&self, pos: usize) -> Option<u8> {
        self.norm.as_bytes().get(pos).copied()
    }

    fn line_start(&self, pos: usize) -> usize {
        let b = self.norm.as_bytes();
        memchr::memrchr(b'\n', &b[..pos.min(b.len())]).map_or(0, |i| i + 1)
    }

    fn line_end_within(&self, start: usize, max: usize) -> Option<(usize, usize)> {
        let b = self.norm.as_bytes();
        let start = start.min(b.len());
        let until = start.saturating_add(max).saturating_add(2).min(b.len());
        match memchr::memchr(b'\n', &b[start..until]) {
            Some(i) => Some((start + i, start + i + 1)),
            None if until == b.len() => Some((b.len(), b.len())),
            None => None,
        }
    }

    fn lines_of(&self, positions: &mut dyn Iterator<Item = usize>) -> Vec<usize> {
        Prepared::lines_of(self, positions)
    }

    fn lines_holding(&self, body: &[u8], whole: bool) -> Option<Vec<usize>> {
        let b = self.norm.as_bytes();
        if body.is_empty() {
            return Some(Vec::new());
        }
        let mut out = Vec::new();
        for a in memchr::memmem::find_iter(b, body) {
            let Some(indent) = self.indent_before(a) else {
                continue;
            };
            if whole {
                let (end, _) = self.line_end(a);
                if !b[a + body.len()..end]
                    .iter()
                    .all(|&c| super::tier::is_space(c))
                {
                    continue;
                }
            }
            out.push(a - indent.len());
        }
        Some(out)
    }

    fn whole(&self) -> bool {
        true
    }
}

/// Replaces the occurrences of `search` in `file` with `replace`, if there
/// are as many as `count` asks (PROTOCOL §3: exactly, or else through the
/// white-space tier).
pub fn edit(
    file: &str,
    search: &str,
    replace: &str,
    count: Count,
) -> Result<Edited, Box<Mismatch>> {
    let hints = HintBudget::new(usize::MAX);
    Search::text(search, replace, count)
        .find_in(file, None, &hints)
        .map(|f| f.edited(file))
}

/// Replaces each range from an occurrence of `start` to the nearest
/// occurrence of `end` after it (both included), if there are as many
/// ranges as `count` asks. The tests' way in: the engine goes through
/// [`Search`].
#[cfg(test)]
pub(crate) fn edit_range(
    file: &str,
    start: &str,
    end: &str,
    replace: &str,
    count: Count,
) -> Result<Edited, Box<Mismatch>> {
    let hints = HintBudget::new(usize::MAX);
    let search = Search {
        target: Target::Range(start, end),
        ..Search::text(start, replace, count)
    };
    search.find_in(file, None, &hints).map(|f| f.edited(file))
}

/// At most this many lines of the search text are compared with each
/// window of the file: the work of the closest-region hint is at most file
/// lines × this.
pub(crate) const HINT_SAMPLE_LINES: usize = 48;

/// Texts longer than this (search plus region, in bytes) are compared line
/// by line instead of character by character.
const CHAR_DIFF_LIMIT: usize = 16 * 1024;

/// How long each diff of the hint may take before `similar` settles for a
/// coarser answer.
const DIFF_TIME: Duration = Duration::from_millis(40);

/// Lines of the hint's diff shown at most.
const MAX_DIFF_LINES: usize = 120;

/// The region of `text` with as many lines as `search` that is most like
/// it, if any is at least [`MIN_SIMILARITY`] alike.
///
/// Every window of lines is scored line by line: its lines against the
/// search lines in the same places, by the words they share. At most
/// [`HINT_SAMPLE_LINES`] search lines, evenly spread, take part, so the
/// work is bounded by the file's length times that, whatever the sizes.
/// The best windows are then compared character by character (line by
/// line past [`CHAR_DIFF_LIMIT`]), each diff bounded in time, and the best
/// of those is the answer.
fn closest(text: &str, search: &str) -> Option<Closest> {
    // The search as written, and without what a model copies around it: a
    // Markdown fence, a file-name line, blank lines at its ends. The region
    // closest to either is compared with the search as written.
    let (core, stripped) = strip_copied(search);
    let mut best = closest_window(text, search);
    // The likeness of the region to the search as written, when it was
    // found by it (else measured below).
    let mut ratio = best.as_ref().map(|w| w.ratio);
    if !stripped.is_empty() && !core.is_empty() {
        let other = closest_window(text, core);
        if other.as_ref().map(|c| c.rank) > best.as_ref().map(|c| c.rank) {
            best = other;
            ratio = None;
        }
    }
    let best = best?;
    let region = &best.region;
    let similarity = ratio.unwrap_or_else(|| {
        let mut config = similar::TextDiff::configure();
        config.deadline(Instant::now() + DIFF_TIME);
        if search.len() + region.len() <= CHAR_DIFF_LIMIT {
            config.diff_chars(search, region.as_str()).ratio()
        } else {
            config.diff_lines(search, region.as_str()).ratio()
        }
    });
    let (start_line, end_line) = (best.start_line, best.end_line);
    let lines = if start_line == end_line {
        format!("line {start_line}")
    } else {
        format!("lines {start_line}-{end_line}")
    };
    let mut config = similar::TextDiff::configure();
    config.deadline(Instant::now() + DIFF_TIME);
    let full = config
        .diff_lines(search, region.as_str())
        .unified_diff()
        .context_radius(3)
        .header("search text", &format!("file, {lines}"))
        .to_string();
    let total = full.lines().count();
    let diff = if total > MAX_DIFF_LINES {
        let mut cut: String = full.split_inclusive('\n').take(MAX_DIFF_LINES).collect();
        cut.push_str(&format!(
            "… {} more lines of diff\n",
            total - MAX_DIFF_LINES
        ));
        cut
    } else {
        full
    };
    let difference = white_space_difference(search, region).or_else(|| {
        (!stripped.is_empty() && core == region.as_str()).then(|| {
            format!(
                "the search text has {} that the file does not",
                stripped.join(" and ")
            )
        })
    });
    Some(Closest {
        start_line,
        end_line,
        similarity: (f64::from(similarity) * 100.0).round() / 100.0,
        diff,
        difference,
    })
}

/// A candidate region: its lines, text and score.
struct Window {
    start_line: usize,
    end_line: usize,
    region: String,
    rank: f64,
    /// The diff's likeness of the region to the text looked for.
    ratio: f32,
}

/// `search` without what a model copies around a search text, and what
/// was taken away, in words.
fn strip_copied(search: &str) -> (&str, Vec<&'static str>) {
    let mut lines: Vec<&str> = search.split_inclusive('\n').collect();
    let mut what: Vec<&'static str> = Vec::new();
    let blank = |l: &&str| l.trim().is_empty();
    let fence = |l: &&str| l.trim_start().starts_with("```") || l.trim_start().starts_with("~~~");
    if lines.last().is_some_and(fence) {
        lines.pop();
        what.push("a Markdown fence line");
    }
    if lines.first().is_some_and(fence) {
        lines.remove(0);
        if what.is_empty() {
            what.push("a Markdown fence line");
        }
    }
    // A file name copied above the text: one word with a `.` or `/`.
    let looks_like_name = |l: &&str| {
        let t = l
            .trim()
            .trim_end_matches(':')
            .trim_matches(|c| c == '`' || c == '*' || c == '#')
            .trim();
        !t.is_empty()
            && !t.contains(char::is_whitespace)
            && (t.contains('.') || t.contains('/'))
            && !t.contains(['(', ')', '=', ';', '{', '}', '"', '\''])
    };
    if lines.len() > 1
        && lines.first().is_some_and(looks_like_name)
        && lines.get(1).is_some_and(fence)
    {
        lines.drain(..2);
        what.push("a file-name line");
        if !what.contains(&"a Markdown fence line") {
            what.push("a Markdown fence line");
        }
    }
    let before = lines.len();
    while lines.first().is_some_and(blank) {
        lines.remove(0);
    }
    while lines.len() > 1 && lines.last().is_some_and(blank) {
        lines.pop();
    }
    if lines.len() < before {
        what.push("blank lines at its ends");
    }
    if what.is_empty() || lines.is_empty() {
        return (search, Vec::new());
    }
    // In the order they stand in a copied block.
    let order = [
        "a file-name line",
        "a Markdown fence line",
        "blank lines at its ends",
    ];
    what.sort_by_key(|w| order.iter().position(|o| o == w));
    // The kept lines are one slice of the search.
    let start = lines[0].as_ptr() as usize - search.as_ptr() as usize;
    let len: usize = lines.iter().map(|l| l.len()).sum();
    (&search[start..start + len], what)
}

/// When `search` and `region` differ only in white space: how, in words.
fn white_space_difference(search: &str, region: &str) -> Option<String> {
    if search == region {
        return None;
    }
    let squash = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    if squash(search) != squash(region) {
        return None;
    }
    // The first line whose indentation differs, in each.
    let indent = |l: &str| l[..l.len() - l.trim_start().len()].to_owned();
    let (is, ir) = search
        .lines()
        .zip(region.lines())
        .map(|(s, r)| (indent(s), indent(r)))
        .find(|(s, r)| s != r)
        .unwrap_or_default();
    let say = |i: &str| {
        let (tabs, spaces) = (i.matches('\t').count(), i.matches(' ').count());
        match (tabs, spaces) {
            (0, 0) => "no indentation".to_owned(),
            (0, s) => format!("{s} space{}", if s == 1 { "" } else { "s" }),
            (t, 0) => format!("{t} tab{}", if t == 1 { "" } else { "s" }),
            (t, s) => format!("{t} tabs and {s} spaces"),
        }
    };
    let trimmed = |t: &str| -> Vec<String> { t.lines().map(|l| l.trim_end().to_owned()).collect() };
    Some(if is != ir {
        format!(
            "only white space differs: the indentation: the file uses {}, the search {}",
            say(&ir),
            say(&is)
        )
    } else if trimmed(search) == trimmed(region) {
        "only white space differs: white space at line ends".to_owned()
    } else {
        "only white space differs: spaces inside lines".to_owned()
    })
}

/// Each window of `n` of `lines` scored by the likeness of its `sample`
/// lines to those of `wanted`, as (score, first line), best scores first
/// and earlier windows first among equals.
fn scored_windows(
    lines: &[&str],
    wanted: &[&str],
    n: usize,
    sample: &[usize],
) -> Vec<(f64, usize)> {
    let want: Vec<Vec<&str>> = sample.iter().map(|&k| words(wanted[k])).collect();
    let have: Vec<Vec<&str>> = lines.iter().map(|l| words(l)).collect();
    let mut ranked: Vec<(f64, usize)> = (0..=lines.len() - n)
        .map(|i| {
            let score: f64 = sample
                .iter()
                .zip(&want)
                .map(|(&k, w)| line_likeness(w, &have[i + k], wanted[k], lines[i + k]))
                .sum();
            (score / sample.len() as f64, i)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked
}

/// The window of `text` with as many lines as `search` most like it, if
/// any ranks at least [`MIN_SIMILARITY`].
fn closest_window(text: &str, search: &str) -> Option<Window> {
    const CANDIDATES: usize = 8;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let wanted: Vec<&str> = search.split_inclusive('\n').collect();
    if lines.is_empty() || wanted.is_empty() {
        return None;
    }
    let n = wanted.len().min(lines.len());
    let sample: Vec<usize> = if n <= HINT_SAMPLE_LINES {
        (0..n).collect()
    } else {
        (0..HINT_SAMPLE_LINES)
            .map(|s| s * (n - 1) / (HINT_SAMPLE_LINES - 1))
            .collect()
    };
    let ranked = scored_windows(&lines, &wanted, n, &sample);
    // The highest rank, the earliest window among equals. The candidates
    // come best score first, and a rank is at most (1 + score) / 2 (a
    // likeness of 1): once that is below the best rank found, no
    // candidate left can reach it, and none is diffed.
    let mut best: Option<(f64, f32, usize, String)> = None;
    for &(score, i) in ranked.iter().take(CANDIDATES) {
        if best.as_ref().is_some_and(|b| (1.0 + score) / 2.0 < b.0) {
            break;
        }
        let region: String = lines[i..i + n].concat();
        let mut config = similar::TextDiff::configure();
        config.deadline(Instant::now() + DIFF_TIME);
        let ratio = if search.len() + region.len() <= CHAR_DIFF_LIMIT {
            config.diff_chars(search, region.as_str()).ratio()
        } else {
            config.diff_lines(search, region.as_str()).ratio()
        };
        // Words in place and characters in common count alike.
        let rank = (f64::from(ratio) + score) / 2.0;
        let better = best
            .as_ref()
            .is_none_or(|b| rank.total_cmp(&b.0).then(b.2.cmp(&i)).is_gt());
        if better {
            best = Some((rank, ratio, i, region));
        }
    }
    let (rank, ratio, i, region) = best?;
    if rank < MIN_SIMILARITY {
        return None;
    }
    Some(Window {
        start_line: i + 1,
        end_line: i + n,
        region,
        rank,
        ratio,
    })
}

/// The words of a line: runs of letters, digits and underscores.
fn words(line: &str) -> Vec<&str> {
    let mut w: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// How alike two lines are, 0 to 1: equal lines 1, otherwise the share of
/// words they have in common (sorted word lists, merged).
fn line_likeness(a: &[&str], b: &[&str], a_line: &str, b_line: &str) -> f64 {
    if a_line.trim() == b_line.trim() {
        return 1.0;
    }
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common as f64 / (a.len() + b.len() - common) as f64
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use super::*;

    fn n(k: usize) -> Count {
        Count::Exactly(NonZeroUsize::new(k).unwrap())
    }

    fn one(file: &str, search: &str, replace: &str) -> String {
        edit(file, search, replace, n(1)).unwrap().text
    }

    #[test]
    fn hints_stop_looking_once_the_budget_is_spent() {
        let file = "fn main() {\n    println!(\"hello\");\n}\n";
        let hints = HintBudget::new(10);
        let miss = |hints: &HintBudget| {
            Search::text("    println!(\"helo\");\n", "x\n", n(1))
                .find_in(file, None, hints)
                .unwrap_err()
        };
        let first = miss(&hints);
        assert!(first.closest.is_some() && !first.closest_skipped);
        let second = miss(&hints);
        assert!(second.closest.is_none() && second.closest_skipped);
        assert_eq!((second.expected, second.found), (n(1), 0));
    }

    #[test]
    fn replaces_exact_text() {
        assert_eq!(one("a\nb\nc\n", "b\n", "x\n"), "a\nx\nc\n");
    }

    #[test]
    fn empty_replacement_deletes() {
        assert_eq!(one("a\nb\nc\n", "b\n", ""), "a\nc\n");
    }

    #[test]
    fn keeps_crlf_when_editing() {
        assert_eq!(
            one("a\r\nb\r\nc\r\n", "b\nc\n", "x\ny\n"),
            "a\r\nx\r\ny\r\n"
        );
    }

    #[test]
    fn keeps_other_lines_of_a_mixed_file_as_they_are() {
        // The first break is LF: the replacement is LF, the CRLF line stays.
        assert_eq!(one("a\nb\r\nc\n", "c\n", "x\ny\n"), "a\nb\r\nx\ny\n");
        assert_eq!(one("a\nb\r\nc\n", "b\n", "q\n"), "a\nq\nc\n");
    }

    #[test]
    fn matches_a_missing_final_line_feed_and_keeps_it_missing() {
        assert_eq!(one("a\nb", "b\n", "c\n"), "a\nc");
        assert_eq!(one("a\nb", "b\n", ""), "a");
        assert_eq!(one("a\r\nb", "b\n", "c\nd\n"), "a\r\nc\r\nd");
        assert_eq!(one("a\nb", "a\n", "z\n"), "z\nb");
    }

    #[test]
    fn keeps_the_byte_order_mark_out_of_matching() {
        assert_eq!(one("\u{feff}a\nb\n", "a\n", "c\n"), "\u{feff}c\nb\n");
        assert!(edit("\u{feff}a\n", "\u{feff}a", "x", n(1)).is_err());
    }

    #[test]
    fn counts_non_overlapping_occurrences_leftmost_first() {
        let e = edit("aaaa", "aa", "b", n(2)).unwrap();
        assert_eq!(e.text, "bb");
        let m = edit("aaa", "aa", "b", n(2)).unwrap_err();
        assert_eq!((m.found, m.lines.clone()), (1, vec![1]));
    }

    #[test]
    fn count_all_needs_at_least_one() {
        assert_eq!(edit("x x x", "x", "y", Count::All).unwrap().text, "y y y");
        assert_eq!(edit("abc", "x", "y", Count::All).unwrap_err().found, 0);
    }

    #[test]
    fn reports_the_lines_of_every_occurrence() {
        let m = edit("f\nx\ng\nx\n", "x\n", "y\n", n(1)).unwrap_err();
        assert_eq!(
            (m.expected, m.found, m.lines.clone()),
            (n(1), 2, vec![2, 4])
        );
    }

    #[test]
    fn offers_the_closest_region_and_says_if_the_edit_is_done() {
        let file = "fn main() {\n    println!(\"hello\");\n}\n";
        let m = edit(
            file,
            "fn main() {\n    println!(\"helo\");\n}\n",
            "x\n",
            n(1),
        )
        .unwrap_err();
        let c = m.closest.clone().unwrap();
        assert_eq!((c.start_line, c.end_line), (1, 3));
        assert!(c.similarity > 0.9, "{c:?}");
        assert!(c.diff.contains("-    println!(\"helo\");"), "{}", c.diff);
        assert!(c.diff.contains("+    println!(\"hello\");"), "{}", c.diff);
        assert_eq!(m.replacement_present, Some(false));

        let m = edit("new\n", "old\n", "new\n", n(1)).unwrap_err();
        assert_eq!(m.replacement_present, Some(true));
    }

    #[test]
    fn the_closest_region_is_the_one_with_the_most_words_in_place() {
        let file = "import sys\n\n\ndef greet(name, greeting=\"Hello\"):\n    print(f\"{greeting}, {name}\")\n";
        let search = "def greet(name):\n    print(\"Hello, \" + name)\n";
        let c = edit(file, search, "x\n", n(1))
            .unwrap_err()
            .closest
            .unwrap();
        assert_eq!((c.start_line, c.end_line), (4, 5));
    }

    #[test]
    fn unrelated_text_gets_no_closest_region() {
        let m = edit("completely\ndifferent\n", "zzz qqq\n", "", n(1)).unwrap_err();
        assert_eq!(m.closest, None);
        assert_eq!(m.replacement_present, None);
    }

    #[test]
    fn a_git_conflict_region_is_ordinary_search_text() {
        let file = "x\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\ny\n";
        let search = "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n";
        assert_eq!(one(file, search, "merged\n"), "x\nmerged\ny\n");
    }

    #[test]
    fn ranges_run_from_start_to_the_nearest_end() {
        let file = "a\nstart\n1\nend\n2\nend\nz\n";
        let e = edit_range(file, "start", "end\n", "R\n", n(1)).unwrap();
        assert_eq!(e.text, "a\nR\n2\nend\nz\n");
    }

    #[test]
    fn a_range_may_begin_mid_line() {
        let e = edit_range("let x = old(1, 2);\n", "old(", ");", "new()", n(1)).unwrap();
        assert_eq!(e.text, "let x = new()\n");
    }

    #[test]
    fn ranges_do_not_overlap_and_are_counted() {
        let file = "s\ne\ns\ne\n";
        assert_eq!(edit_range(file, "s", "e\n", "", n(2)).unwrap().text, "");
        let m = edit_range(file, "s", "e\n", "", n(1)).unwrap_err();
        assert_eq!((m.found, m.lines.clone()), (2, vec![1, 3]));
    }

    #[test]
    fn an_end_before_the_start_is_no_range() {
        let m = edit_range("end\nstart\n", "start", "end", "", n(1)).unwrap_err();
        assert_eq!(m.found, 0);
        assert_eq!(m.dangling_starts, vec![2]);
        assert_eq!(m.start_lines, vec![2]);
        assert_eq!(m.end_lines, vec![1]);
    }

    #[test]
    fn the_end_must_begin_after_the_start_ends() {
        // "ab" then "b": the b inside the start does not end the range.
        let e = edit_range("ab-b", "ab", "b", "X", n(1)).unwrap();
        assert_eq!(e.text, "X");
    }

    #[test]
    fn a_copied_fence_file_name_and_blank_lines_are_seen_through() {
        let (core, what) = strip_copied("app.py\n```python\n\ndef g():\n    pass\n```\n");
        assert_eq!(core, "def g():\n    pass\n");
        assert_eq!(
            what,
            [
                "a file-name line",
                "a Markdown fence line",
                "blank lines at its ends"
            ]
        );
        assert_eq!(
            strip_copied("def g():\n    pass\n"),
            ("def g():\n    pass\n", Vec::new())
        );
        let file = "x = 0\ndef g():\n    pass\ny = 1\n";
        let c = closest(file, "\n\ndef g():\n    pass\n").unwrap_or_else(|| panic!("no hint"));
        assert_eq!((c.start_line, c.end_line), (2, 3));
        assert_eq!(
            c.difference.as_deref(),
            Some("the search text has blank lines at its ends that the file does not")
        );
    }

    #[test]
    fn a_white_space_difference_is_named() {
        let d = |s: &str, r: &str| white_space_difference(s, r);
        assert_eq!(
            d("if x:\n    go()\n", "if x:\n        go()\n").as_deref(),
            Some(
                "only white space differs: the indentation: the file uses 8 spaces, the search 4 spaces"
            )
        );
        assert_eq!(
            d("if x:\n    go()\n", "if x:\n\tgo()\n").as_deref(),
            Some(
                "only white space differs: the indentation: the file uses 1 tab, the search 4 spaces"
            )
        );
        assert_eq!(
            d("a \nb\n", "a\nb\n").as_deref(),
            Some("only white space differs: white space at line ends")
        );
        assert_eq!(
            d("a  b\n", "a b\n").as_deref(),
            Some("only white space differs: spaces inside lines")
        );
        assert_eq!(d("a\n", "b\n"), None);
    }
}

#[cfg(test)]
mod closest_tests {
    use super::*;

    /// The closest window as found before candidates were cut short: each
    /// of the eight best by score diffed, the highest rank kept (the
    /// earliest among equals).
    fn every_candidate(text: &str, search: &str) -> Option<(usize, f64)> {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let wanted: Vec<&str> = search.split_inclusive('\n').collect();
        let n = wanted.len().min(lines.len());
        let sample: Vec<usize> = (0..n.min(HINT_SAMPLE_LINES)).collect();
        scored_windows(&lines, &wanted, n, &sample)
            .iter()
            .take(8)
            .map(|&(score, i)| {
                let region: String = lines[i..i + n].concat();
                let ratio = similar::TextDiff::configure()
                    .diff_chars(search, region.as_str())
                    .ratio();
                ((f64::from(ratio) + score) / 2.0, i)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .filter(|(rank, _)| *rank >= MIN_SIMILARITY)
            .map(|(rank, i)| (i + 1, rank))
    }

    #[test]
    fn candidates_cut_short_find_the_window_every_candidate_finds() {
        let file: String = (0..60)
            .map(|i| match i % 7 {
                0 => format!("def f{i}(x):\n"),
                1 => format!("    return x + {i}\n"),
                2 => "\n".to_owned(),
                3 => format!("    y = f{}(x) * 2\n", i / 2),
                4 => "    # same comment\n".to_owned(),
                5 => format!("class C{i}:\n"),
                _ => "    pass\n".to_owned(),
            })
            .collect();
        let searches = [
            "def f7(x):\n    return x + 9\n",
            "    # same comment\nclass C12:\n    pass\n",
            "    pass\n\n",
            "def f14(y):\n    return y + 15\n\n    z = f8(y) * 2\n",
            "nothing like it at all\n",
            "    # same comment\n",
            "class C40:\n    pass\ndef f42(x):\n",
        ];
        for search in searches {
            let cut = closest_window(&file, search).map(|w| (w.start_line, w.rank));
            assert_eq!(cut, every_candidate(&file, search), "{search:?}");
        }
    }
}
