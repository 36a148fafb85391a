//! Where an edit replaces (PROTOCOL §3 SEARCH and SEARCH-START): one
//! algorithm, over a file's whole text (`matching`) or over a file kept in
//! chunks with an index (`editing`), so that the two give the same
//! answers.
//!
//! In order:
//!
//! 1. The search text's occurrences as written, counted without overlap,
//!    leftmost first. One that begins after nothing but white space on its
//!    line is *shifted*: the model left out indentation the file has. All
//!    of them are taken when there are as many as `count` asks and every
//!    shifted one can be re-indented; else the exact ones, when they alone
//!    are as many (exact beats shifted); else, with a line hint and
//!    `count` 1, the candidate nearest the hint.
//! 2. Only when the text does not occur at all: the passes of the edit's
//!    policy ([`tier`]), line by line, each in turn; the first that finds
//!    anything decides.
//!
//! A shifted match is applied only when the result is determined: one
//! shift for every line of each occurrence, the replacement's first
//! non-blank line indented like the search's, one written text for every
//! occurrence. The replacement is then written re-indented. An edit whose
//! replacement already stands around an occurrence of its search text is
//! not made again (`already_applied`).
//!
//! The file is read through [`Hay`], in its own line break style; texts
//! of the edit are in LF and turned into the file's style by the hay.

use std::borrow::Cow;
use std::num::NonZeroUsize;

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::tier::{self, Cmp, Delta, Lines, NotDetermined, Pass};
use crate::status::{
    Chosen, ChosenBy, Closest, Excerpt, IndentProblem, Indentation, Matched, Shift,
};
use crate::syntax::{Count, Kept, Matching, Op, TaskPath};

/// At most this many occurrence lines are reported.
pub(crate) const MAX_REPORTED_LINES: usize = 20;

/// A report lists the lines of at most this many replaced occurrences.
pub(crate) const MAX_LISTED_LINES: usize = 100;

/// At most this many occurrences are shown with the lines around them.
pub(crate) const MAX_EXCERPTS: usize = 5;
/// Lines of an occurrence shown in an excerpt, at most.
const EXCERPT_LINES: usize = 6;
/// Characters of a line shown in an excerpt, at most.
const EXCERPT_WIDTH: usize = 240;
/// A pivot line shorter than this is not worth an index key: the plain
/// search serves it.
pub(crate) const MIN_PIVOT: usize = 4;
/// A file line is compared with a search line only when it is at most
/// this much longer: beyond that it is not the same line with white space
/// around it.
const LINE_SLACK: usize = 512;
/// What the passes may compare for one edit, in bytes of search lines
/// (each counted [`LINE_SLACK`] more): past it they stop, and the error
/// says so. It bounds an edit's passes whatever the file and the search.
const PASS_WORK: usize = 16 << 20;

/// How far edits look for their text (`--match`, PROTOCOL §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MatchMode {
    /// As written only (a shifted occurrence is still re-indented).
    Exact,
    /// Then the white-space tier (or, for a dialect that asks, codex's
    /// passes).
    #[default]
    Whitespace,
}

/// What an edit looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// SEARCH: this text.
    Text(&'a str),
    /// SEARCH-START: from an occurrence of the start to the nearest
    /// occurrence of the end after it.
    Range(&'a str, &'a str),
}

/// What an edit searches for (SEARCH or SEARCH-START), what replaces it,
/// and how it may be found.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Search<'a> {
    pub(crate) target: Target<'a>,
    pub(crate) replace: &'a str,
    pub(crate) count: Count,
    /// The line the edit was written for (a dialect's hint).
    pub(crate) line: Option<NonZeroUsize>,
    /// The passes after the exact search.
    pub(crate) passes: &'static [Pass],
    /// Occurrences are whole lines: they start at a line start and end
    /// at a line end (a line-based dialect's edit, [`Matching`]).
    pub(crate) whole_lines: bool,
    /// The occurrence ends at the file's end (`\ No newline at end of
    /// file`).
    pub(crate) at_end: bool,
    /// Not found, the text is looked for again without a last empty line
    /// (codex's retry, [`Matching`]).
    pub(crate) blank_end_optional: bool,
    /// The lines kept (context lines), written as the file has them when
    /// a pass found the text.
    pub(crate) kept: Option<&'a Kept>,
    /// The texts as written before line numbers were taken off them:
    /// looked for first ([`Matching`]).
    pub(crate) as_written: Option<(&'a str, &'a str)>,
}

impl<'a> Search<'a> {
    /// A plain edit of `search` (exact, then clada's tier).
    pub(crate) fn text(search: &'a str, replace: &'a str, count: Count) -> Self {
        Search {
            target: Target::Text(search),
            replace,
            count,
            line: None,
            passes: tier::passes(crate::syntax::Policy::Clada, true),
            whole_lines: false,
            at_end: false,
            blank_end_optional: false,
            kept: None,
            as_written: None,
        }
    }

    /// The path `op` edits and what it searches for, if it is an edit
    /// (SEARCH or SEARCH-START); `loose`: whether the passes beyond
    /// exact text may run (`--match whitespace`).
    pub(crate) fn of(op: &'a Op<'_>, loose: bool) -> Option<(&'a TaskPath<'a>, Search<'a>)> {
        let with = |target, replace: &'a str, count: &Count, m: &'a Matching| Search {
            target,
            replace,
            count: *count,
            line: m.line,
            passes: tier::passes(m.policy, loose),
            whole_lines: m.whole_lines,
            at_end: m.at_end,
            blank_end_optional: m.blank_end_optional,
            kept: m.kept.as_deref(),
            as_written: m
                .as_written
                .as_deref()
                .map(|(s, r)| (s.as_str(), r.as_str())),
        };
        match op {
            Op::Edit {
                path,
                count,
                matching,
                search,
                replace,
            } => Some((path, with(Target::Text(search), replace, count, matching))),
            Op::EditRange {
                path,
                count,
                matching,
                start,
                end,
                replace,
            } => Some((
                path,
                with(Target::Range(start, end), replace, count, matching),
            )),
            _ => None,
        }
    }

    /// The texts searched for.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &'a str> {
        let (a, b) = match self.target {
            Target::Text(search) => (search, None),
            Target::Range(start, end) => (start, Some(end)),
        };
        std::iter::once(a).chain(b)
    }

    /// What an index needs to answer the passes for this edit: the pivot
    /// line of the search text and of the replacement (the replacement's,
    /// to tell an edit applied before).
    pub(crate) fn pivots(&self) -> impl Iterator<Item = &'a [u8]> {
        let lines = self.passes.iter().any(|&p| p != Pass::Unicode);
        let texts = match (lines, self.target) {
            (true, Target::Text(search)) => vec![search, self.replace],
            _ => Vec::new(),
        };
        texts
            .into_iter()
            .filter_map(|t| Some(Lines::new(t, self.whole_lines)?.pivot_body().0))
    }
}

/// A file's text as a search reads it: in its own line break style (all
/// LF, or all CRLF), with a line break at the end where the file lacks
/// one.
pub(crate) trait Hay {
    /// Bytes of text.
    fn len(&self) -> usize;
    /// `text` (LF line breaks) in the text's style.
    fn raw<'t>(&self, text: &'t str) -> Cow<'t, [u8]>;
    /// The starts of `needle`'s occurrences, sorted, such that taking
    /// them without overlap, leftmost first, gives the occurrences a
    /// search counts; `None` when this hay cannot say.
    fn starts(&self, needle: &[u8]) -> Option<Vec<usize>>;
    /// The starts of `needle`'s occurrences that begin at a line start,
    /// sorted, such that taking them without overlap, leftmost first,
    /// gives the whole-line occurrences a search counts. The default reads
    /// [`Hay::starts`], which must then list overlapping occurrences too.
    fn line_starts_of(&self, needle: &[u8]) -> Option<Vec<usize>> {
        let mut starts = self.starts(needle)?;
        starts.retain(|&a| a == 0 || self.byte(a - 1) == Some(b'\n'));
        Some(starts)
    }
    /// The ranges from an occurrence of `start` to the nearest occurrence
    /// of `end` after it, without overlap, and the start with no end after
    /// it that ended the search, if one did.
    #[allow(clippy::type_complexity)]
    fn range_starts(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> Option<(Vec<(usize, usize)>, Option<usize>)>;
    /// Whether the line break at the end is not the file's but added (the
    /// file lacks a final one).
    fn virtual_final(&self) -> bool;
    /// The bytes from `from` to `to`.
    fn bytes(&self, from: usize, to: usize) -> Cow<'_, [u8]>;
    /// The byte at `pos`.
    fn byte(&self, pos: usize) -> Option<u8>;
    /// Where the line that holds `pos` starts.
    fn line_start(&self, pos: usize) -> usize;
    /// Where the text of the line starting at `start` ends (its line
    /// feed, a CR before it included), and where the next line starts;
    /// `None` when the line feed is more than `max` + 1 bytes on.
    fn line_end_within(&self, start: usize, max: usize) -> Option<(usize, usize)>;

    /// [`Hay::line_end_within`] for a line of any length.
    fn line_end(&self, start: usize) -> (usize, usize) {
        self.line_end_within(start, usize::MAX)
            .unwrap_or((self.len(), self.len()))
    }
    /// The 1-based line of each position (sorted).
    fn lines_of(&self, positions: &mut dyn Iterator<Item = usize>) -> Vec<usize>;
    /// Where the lines start whose text, white space at both ends trimmed,
    /// is `body` (`whole`), or whose text after its indentation starts
    /// with `body` (not `whole`); `None` when this hay cannot say.
    fn lines_holding(&self, body: &[u8], whole: bool) -> Option<Vec<usize>>;
    /// Whether every line may be read one by one (the whole text); an
    /// index answers only what it holds.
    fn whole(&self) -> bool;

    /// How many occurrences of `needle` there are, of each kind, when the
    /// hay can count them without listing them: only for a needle whose
    /// occurrences never overlap (no proper prefix of it is also its
    /// suffix), so that every occurrence counts without overlap.
    fn tally(&self, _needle: &[u8]) -> Option<Tally> {
        None
    }
    /// The first `n` occurrences of `needle` of `kind` that start at or
    /// after `from`, in order (where [`Hay::tally`] answers).
    fn first_of(&self, _needle: &[u8], _kind: Kind, _from: usize, _n: usize) -> Vec<usize> {
        Vec::new()
    }
    /// The last occurrence of `needle` of `kind` that starts before
    /// `pos` (where [`Hay::tally`] answers).
    fn last_before(&self, _needle: &[u8], _kind: Kind, _pos: usize) -> Option<usize> {
        None
    }
    /// Where the 1-based line `line` starts (the end of the text past the
    /// last line).
    fn line_pos(&self, _line: usize) -> usize {
        self.len()
    }

    /// The white space between the start of `pos`'s line and `pos`, when
    /// there is nothing else (empty at a line start).
    fn indent_before(&self, pos: usize) -> Option<Vec<u8>> {
        let mut at = pos;
        while at > 0 {
            match self.byte(at - 1) {
                Some(b) if tier::is_space(b) => at -= 1,
                Some(b'\n') => break,
                _ => return None,
            }
        }
        Some(self.bytes(at, pos).into_owned())
    }
}

/// Occurrences of a text, counted by what stands before them on their
/// line: what a search needs to decide without listing them
/// ([`Hay::tally`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Every occurrence.
    pub(crate) all: usize,
    /// Those that start a line.
    pub(crate) line_start: usize,
    /// Those after nothing but (some) white space on their line: shifted.
    pub(crate) shifted: usize,
}

impl Tally {
    /// How many are of `kind`.
    pub(crate) fn of(&self, kind: Kind) -> usize {
        match kind {
            Kind::All => self.all,
            Kind::LineStart => self.line_start,
            Kind::Plain => self.all.saturating_sub(self.shifted),
        }
    }
}

/// Which occurrences of a text a counted search takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    All,
    /// Those that start a line (a whole-line edit's).
    LineStart,
    /// Those not shifted: at a line start, or after something else than
    /// white space.
    Plain,
}

/// An occurrence that starts a line.
pub(crate) const LINE_START: u8 = 1;
/// An occurrence after nothing but (some) white space on its line.
pub(crate) const SHIFTED: u8 = 2;

impl Kind {
    /// Whether an occurrence with `flags` ([`LINE_START`], [`SHIFTED`]) is
    /// of this kind.
    pub(crate) fn holds(self, flags: u8) -> bool {
        match self {
            Kind::All => true,
            Kind::LineStart => flags & LINE_START != 0,
            Kind::Plain => flags & SHIFTED == 0,
        }
    }
}

/// Whether two occurrences of `needle` may overlap: some proper prefix of
/// it is also its suffix.
pub(crate) fn overlaps_itself(needle: &[u8]) -> bool {
    // The border of each prefix (Knuth-Morris-Pratt): the whole needle's
    // is what tells.
    let mut border = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = border[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        border[i] = k;
    }
    border.last().is_some_and(|&b| b > 0)
}

/// The occurrences an error shows (the first [`MAX_REPORTED_LINES`]) and
/// how many were found.
#[derive(Clone, Debug)]
pub(crate) struct Shown {
    pub(crate) first: Vec<(usize, usize)>,
    pub(crate) found: usize,
}

impl Shown {
    pub(crate) fn of(ranges: &[(usize, usize)]) -> Shown {
        Shown {
            first: ranges[..ranges.len().min(MAX_REPORTED_LINES)].to_vec(),
            found: ranges.len(),
        }
    }
}

/// Where an edit replaces, found: what the caller turns into a splice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Byte ranges of the hay (sorted, disjoint).
    pub(crate) ranges: Vec<(usize, usize)>,
    /// What each range is replaced with, in LF.
    pub(crate) written: String,
    pub(crate) how: How,
    /// The 1-based line of each replaced occurrence (of the first
    /// `MAX_LISTED_LINES`).
    pub(crate) lines: Vec<usize>,
}

/// How an edit found its text, for the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct How {
    pub(crate) matched: Matched,
    /// The replacement was written re-indented by this.
    pub(crate) shift: Option<Shift>,
    /// A line hint chose among several candidates.
    pub(crate) chosen: Option<Chosen>,
}

/// Why a search gave no plan.
#[derive(Debug)]
pub(crate) enum Miss {
    /// The wrong number of occurrences, a shift that cannot be applied, or
    /// an edit applied before.
    Mismatch(Box<Mismatch>),
    /// The hay cannot say (an index that does not hold a text).
    Unknown,
    /// The passes did what [`PASS_WORK`] allows (never out of a search).
    Stopped,
}

/// What the passes of one edit may still compare ([`PASS_WORK`]).
#[derive(Debug)]
struct Work(std::cell::Cell<usize>);

impl Work {
    fn new() -> Work {
        Work(std::cell::Cell::new(PASS_WORK))
    }

    /// Counts comparing a search line of `len` bytes; `Stopped` when the
    /// work is spent.
    fn take(&self, len: usize) -> Result<(), Miss> {
        let cost = len + LINE_SLACK;
        let left = self.0.get();
        if left < cost {
            return Err(Miss::Stopped);
        }
        self.0.set(left - cost);
        Ok(())
    }
}

/// Why an edit found the wrong number of occurrences.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Mismatch {
    pub expected: Count,
    pub found: usize,
    /// 1-based lines of the occurrences found (at most
    /// `MAX_REPORTED_LINES`, 20).
    pub lines: Vec<usize>,
    /// The first and last line of each occurrence found (at most
    /// `MAX_REPORTED_LINES`, 20).
    pub ranges: Vec<(usize, usize)>,
    /// When nothing was found: the most similar region of the file.
    pub closest: Option<Closest>,
    /// When nothing was found and the replacement is not empty: whether the
    /// replacement text is already in the file (the edit may have been
    /// applied before).
    pub replacement_present: Option<bool>,
    /// When nothing was found: the replacement stands in the file as many
    /// times as `count` asks (at least once for `all`), so the edit was
    /// applied before (PROTOCOL §8, `already_applied`).
    pub already_applied: bool,
    /// For ranges: lines where the start text occurs with no end text after
    /// it.
    pub dangling_starts: Vec<usize>,
    /// For ranges that found nothing: where the start and end texts occur
    /// on their own.
    pub start_lines: Vec<usize>,
    pub end_lines: Vec<usize>,
    /// No closest region was looked for: the run's earlier failures used
    /// up what hints may read (128 MiB of file text).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub closest_skipped: bool,
    /// The occurrences were found by a pass beyond exact text (the
    /// white-space tier, codex's passes), not as written.
    pub matched: Option<Matched>,
    /// Why a match that needs re-indenting was not applied.
    pub indentation: Option<Indentation>,
    /// The lines of the occurrences where the replacement already stands
    /// (the edit was applied there before).
    pub applied_lines: Vec<usize>,
    /// The first occurrences found, with a line either side.
    pub excerpts: Vec<Excerpt>,
    /// The passes beyond exact text stopped looking: the file has too
    /// many lines like the search's for the work one edit may take.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub passes_stopped: bool,
    /// When nothing was found by a line-based dialect's edit: lines where
    /// its text occurs, but starts or ends inside a line (it matches whole
    /// lines, PROTOCOL §11).
    pub inside_lines: Vec<usize>,
    /// When nothing was found by an edit that ends the file (`\ No newline
    /// at end of file`): lines where its text occurs as whole lines
    /// elsewhere.
    pub not_at_end: Vec<usize>,
}

impl Mismatch {
    /// The mismatch of an edit that found `ranges` (sorted, disjoint) in
    /// `hay`: nothing said yet about a closest region or the replacement.
    pub(crate) fn of(hay: &dyn Hay, ranges: &[(usize, usize)], count: Count) -> Mismatch {
        Mismatch::shown(hay, &Shown::of(ranges), count)
    }

    /// The mismatch of an edit that found `shown.found` occurrences, the
    /// first of them `shown.first`.
    pub(crate) fn shown(hay: &dyn Hay, shown: &Shown, count: Count) -> Mismatch {
        let found = shown.found;
        let shown = &shown.first[..];
        let lines = hay.lines_of(&mut shown.iter().map(|r| r.0));
        // Starts and last bytes alternate in increasing order: one pass.
        let bounds = hay.lines_of(
            &mut shown
                .iter()
                .flat_map(|&(s, e)| [s, e.saturating_sub(1).max(s)]),
        );
        Mismatch {
            expected: count,
            found,
            lines,
            ranges: bounds.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
            closest: None,
            replacement_present: None,
            already_applied: false,
            dangling_starts: Vec::new(),
            start_lines: Vec::new(),
            end_lines: Vec::new(),
            closest_skipped: false,
            matched: None,
            indentation: None,
            applied_lines: Vec::new(),
            excerpts: excerpts(hay, shown),
            passes_stopped: false,
            inside_lines: Vec::new(),
            not_at_end: Vec::new(),
        }
    }
}

pub(crate) fn count_ok(count: Count, found: usize) -> bool {
    match count {
        Count::Exactly(n) => found == n.get(),
        Count::All => found >= 1,
    }
}

impl From<Box<Mismatch>> for Miss {
    fn from(m: Box<Mismatch>) -> Self {
        Miss::Mismatch(m)
    }
}

/// Finds where `search` replaces in `hay`.
pub(crate) fn seek(hay: &dyn Hay, search: &Search<'_>) -> Result<Plan, Miss> {
    // The texts as written first: line numbers are taken off only when
    // the file does not hold the numbered lines.
    if let Some((text, replace)) = search.as_written {
        let written = Search {
            target: Target::Text(text),
            replace,
            as_written: None,
            ..*search
        };
        match seek(hay, &written) {
            Err(Miss::Mismatch(m)) if m.found == 0 && !m.already_applied => {}
            other => return other,
        }
    }
    let work = Work::new();
    let found = match search.target {
        Target::Text(text) => match seek_text(hay, text, search, &work) {
            Err(Miss::Mismatch(m)) if m.found == 0 && search.blank_end_optional => {
                match without_blank_end(search) {
                    // codex's retry: its answer, unless it found nothing
                    // either (the text as written is what was asked).
                    Some(again) => match seek_text(hay, text_of(&again), &again, &work) {
                        Err(Miss::Mismatch(n)) if n.found == 0 => Err(Miss::Mismatch(m)),
                        other => other,
                    },
                    None => Err(Miss::Mismatch(m)),
                }
            }
            other => other,
        },
        Target::Range(start, end) => seek_range(hay, start, end, search, &work),
    };
    match found {
        // The passes gave up: nothing is applied, and the error says so.
        Err(Miss::Stopped) => {
            let mut m = Mismatch::of(hay, &[], search.count);
            m.passes_stopped = true;
            Err(Box::new(m).into())
        }
        other => other,
    }
}

/// `search` without the last line of its text when that line is empty,
/// and its replacement likewise: codex's retry.
fn without_blank_end<'a>(search: &Search<'a>) -> Option<Search<'a>> {
    let Target::Text(text) = search.target else {
        return None;
    };
    let text = text.strip_suffix('\n')?;
    if !text.ends_with('\n') {
        return None;
    }
    let replace = match search.replace.strip_suffix('\n') {
        Some(r) if r.ends_with('\n') || r.is_empty() => r,
        _ => search.replace,
    };
    Some(Search {
        target: Target::Text(text),
        replace,
        blank_end_optional: false,
        ..*search
    })
}

/// The text a SEARCH looks for (empty for a range).
fn text_of<'a>(search: &Search<'a>) -> &'a str {
    match search.target {
        Target::Text(t) => t,
        Target::Range(..) => "",
    }
}

/// An occurrence found: its range, and how it is shifted.
#[derive(Clone, Debug)]
struct Occurrence {
    range: (usize, usize),
    /// `None`: exact. Otherwise what re-indenting it needs.
    shift: Option<Shifted>,
}

#[derive(Clone, Debug)]
enum Shifted {
    /// Found as written after this indentation of its line: the
    /// replacement's first line goes in place, the others are shifted.
    InPlace(Delta),
    /// Found by a pass, from the start of its first line.
    Lines(Delta),
    /// Cannot be re-indented.
    Not(NotDetermined),
}

/// The occurrences of `needle` (a text in the hay's style) that `search`
/// counts, without overlap, leftmost first: anywhere (clada's SEARCH), as
/// whole lines, or the one that ends at the file's end.
fn occurrences(
    hay: &dyn Hay,
    search: &Search<'_>,
    needle: &[u8],
) -> Result<Vec<(usize, usize)>, Miss> {
    if needle.is_empty() {
        return Ok(Vec::new());
    }
    if search.at_end {
        return Ok(end_occurrence(hay, needle, search.whole_lines)
            .into_iter()
            .collect());
    }
    if !search.whole_lines {
        let starts = hay.starts(needle).ok_or(Miss::Unknown)?;
        return Ok(apart(&starts, needle.len()));
    }
    let mut starts = hay.line_starts_of(needle).ok_or(Miss::Unknown)?;
    if !needle.ends_with(b"\n") {
        starts.retain(|&a| at_line_end(hay, a + needle.len()));
    }
    Ok(apart(&starts, needle.len()))
}

/// Whether a line of the hay ends at `pos` (its line break follows, or the
/// text ends).
fn at_line_end(hay: &dyn Hay, pos: usize) -> bool {
    match hay.byte(pos) {
        None | Some(b'\n') => true,
        Some(b'\r') => hay.byte(pos + 1) == Some(b'\n'),
        Some(_) => false,
    }
}

/// Whether `pos` is the end of the file: of its text, or (a file without
/// a final line break) before the one the hay adds.
fn at_file_end(hay: &dyn Hay, pos: usize) -> bool {
    pos == hay.len() || (hay.virtual_final() && pos + hay.raw("\n").len() == hay.len())
}

/// The occurrence of `needle` that ends at the file's end, if there is
/// one (starting at a line start, when `whole`).
fn end_occurrence(hay: &dyn Hay, needle: &[u8], whole: bool) -> Option<(usize, usize)> {
    let mut ends = vec![hay.len()];
    if hay.virtual_final() {
        ends.push(hay.len().saturating_sub(hay.raw("\n").len()));
    }
    ends.into_iter().find_map(|e| {
        let s = e.checked_sub(needle.len())?;
        let aligned = !whole || s == 0 || hay.byte(s - 1) == Some(b'\n');
        (aligned && *hay.bytes(s, e) == *needle).then_some((s, e))
    })
}

fn seek_text(hay: &dyn Hay, text: &str, search: &Search<'_>, work: &Work) -> Result<Plan, Miss> {
    let needle = hay.raw(text);
    if let Some(answer) = counted(hay, text, search, &needle) {
        return answer;
    }
    let apart = occurrences(hay, search, &needle)?;
    if !apart.is_empty() {
        let first = text.split('\n').next().unwrap_or_default();
        let occurrences = apart
            .into_iter()
            .map(|range| Occurrence {
                range,
                shift: shift_of(hay, text, search, range.0),
            })
            .collect();
        let first_indent = tier::indent(first.as_bytes());
        return decide(hay, search, occurrences, Matched::Exact, first_indent, true);
    }
    for &pass in search.passes {
        if pass == Pass::Unicode && !hay.whole() {
            return Err(Miss::Unknown);
        }
        let Some(lines) = Lines::new(text, search.whole_lines) else {
            break;
        };
        let found = by_lines(hay, &lines, pass, search.at_end, work)?;
        if found.is_empty() {
            continue;
        }
        return decide(
            hay,
            search,
            found,
            pass.matched(),
            lines.first_indent(),
            false,
        );
    }
    Err(nothing_found(hay, search, work)?.into())
}

/// How an occurrence of `text` as written at `at` is shifted: `None` when
/// nothing but white space stands before it on its line, or it is a
/// whole-line occurrence (which starts at a line start: no line of the
/// file is read).
fn shift_of(hay: &dyn Hay, text: &str, search: &Search<'_>, at: usize) -> Option<Shifted> {
    let first = text.split('\n').next().unwrap_or_default();
    if search.whole_lines || tier::is_blank(first.as_bytes()) {
        return None;
    }
    let add = hay.indent_before(at).filter(|i| !i.is_empty())?;
    let one_line = text
        .split_inclusive('\n')
        .skip(1)
        .all(|l| tier::is_blank(l.trim_end_matches('\n').as_bytes()));
    Some(if one_line {
        Shifted::InPlace(Delta::Deeper(add))
    } else {
        // Its other lines are as written: not one shift.
        let search_indent = tier::indent(first.as_bytes());
        let mut file = add;
        file.extend_from_slice(search_indent);
        Shifted::Not(NotDetermined {
            problem: IndentProblem::Uneven,
            line: 0,
            file,
            search: search_indent.to_vec(),
        })
    })
}

/// The search of `text` as written, decided from the hay's counts of its
/// occurrences ([`Hay::tally`]) where it keeps them: what [`decide`]
/// decides on the listed occurrences, reading only those it takes and
/// those an error shows. A text found as many times as the edit replaces
/// is listed as before (each occurrence is replaced); so is one the hay
/// does not count (`None`).
fn counted(
    hay: &dyn Hay,
    text: &str,
    search: &Search<'_>,
    needle: &[u8],
) -> Option<Result<Plan, Miss>> {
    if search.at_end || needle.is_empty() || (search.whole_lines && !needle.ends_with(b"\n")) {
        return None;
    }
    let tally = hay.tally(needle)?;
    let first = text.split('\n').next().unwrap_or_default();
    let kind = if search.whole_lines {
        Kind::LineStart
    } else {
        Kind::All
    };
    let found = tally.of(kind);
    // Occurrences that are not shifted: all of them, where none can be.
    let unshifted = search.whole_lines || tier::is_blank(first.as_bytes());
    let plain_kind = if unshifted { kind } else { Kind::Plain };
    let plain = tally.of(plain_kind);
    let Count::Exactly(n) = search.count else {
        return None;
    };
    if found == 0 || found == n.get() {
        return None;
    }
    let len = needle.len();
    let occurrence = |at: usize, plain: bool| Occurrence {
        range: (at, at + len),
        shift: if plain {
            None
        } else {
            shift_of(hay, text, search, at)
        },
    };
    let shown = || Shown {
        first: hay
            .first_of(needle, kind, 0, MAX_REPORTED_LINES)
            .into_iter()
            .map(|a| (a, a + len))
            .collect(),
        found,
    };
    let mut chosen_of = None;
    let chosen: Option<Vec<Occurrence>> = if plain == n.get() {
        let at = hay.first_of(needle, plain_kind, 0, n.get());
        Some(at.into_iter().map(|a| occurrence(a, true)).collect())
    } else if let Some(hint) = search.line
        && n.get() == 1
        && found > 1
    {
        // The nearest to the line the edit was written for, among the
        // exact ones if any.
        let (pool, candidates) = if plain > 0 {
            (plain_kind, plain)
        } else {
            (kind, found)
        };
        chosen_of = Some(Chosen {
            candidates,
            by: ChosenBy::Line,
            hint: Some(hint.get()),
        });
        nearest_counted(hay, needle, pool, hint.get()).map(|a| vec![occurrence(a, plain > 0)])
    } else {
        None
    };
    let first_indent = tier::indent(first.as_bytes());
    Some(match chosen {
        Some(picked) => finish(
            hay,
            search,
            &shown(),
            picked,
            chosen_of,
            Matched::Exact,
            first_indent,
            true,
        ),
        None => Err(Box::new(Mismatch::shown(hay, &shown(), search.count)).into()),
    })
}

/// Of the occurrences of `needle` of `kind`, the first on the line
/// nearest to `hint` (ties: the earlier line), as [`nearest`] finds it
/// among listed ones.
fn nearest_counted(hay: &dyn Hay, needle: &[u8], kind: Kind, hint: usize) -> Option<usize> {
    let at = hay.line_pos(hint);
    let line = |p: usize| hay.lines_of(&mut std::iter::once(p)).first().copied();
    let before = hay.last_before(needle, kind, at);
    let after = hay.first_of(needle, kind, at, 1).first().copied();
    let (lb, la) = (before.and_then(line), after.and_then(line));
    let best = [lb, la]
        .into_iter()
        .flatten()
        .min_by_key(|l| l.abs_diff(hint))?;
    if lb == Some(best) {
        hay.first_of(needle, kind, hay.line_pos(best), 1)
            .first()
            .copied()
    } else {
        after
    }
}

/// The occurrences of `lines` under `pass`, counted without overlap,
/// leftmost first: those whose lines are all alike, shifted or not (and
/// that end at the file's end, when `at_end`).
fn by_lines(
    hay: &dyn Hay,
    lines: &Lines<'_>,
    pass: Pass,
    at_end: bool,
    work: &Work,
) -> Result<Vec<Occurrence>, Miss> {
    let mut out = Vec::new();
    let mut free = 0;
    for p in candidates(hay, lines, pass, work)? {
        let Some(start) = first_line(hay, lines, p, work)? else {
            continue;
        };
        if start < free {
            continue;
        }
        if let Some(found) = verify(hay, lines, pass, start, work)?
            && (!at_end || at_file_end(hay, found.range.1))
        {
            free = found.range.1.max(found.range.0 + 1);
            out.push(found);
        }
    }
    Ok(out)
}

/// Where the candidate whose pivot line starts at `pivot` starts: back
/// over the lines before the pivot (`None`: the file starts before them).
fn first_line(
    hay: &dyn Hay,
    lines: &Lines<'_>,
    pivot: usize,
    work: &Work,
) -> Result<Option<usize>, Miss> {
    let mut start = pivot;
    for _ in 0..lines.pivot {
        if start == 0 {
            return Ok(None);
        }
        work.take(0)?;
        start = hay.line_start(start - 1);
    }
    Ok(Some(start))
}

/// The lines where the pivot line of `lines` may be, sorted.
fn candidates(
    hay: &dyn Hay,
    lines: &Lines<'_>,
    pass: Pass,
    work: &Work,
) -> Result<Vec<usize>, Miss> {
    if pass != Pass::Unicode {
        let (body, whole) = lines.pivot_body();
        return hay.lines_holding(body, whole).ok_or(Miss::Unknown);
    }
    if !hay.whole() {
        return Err(Miss::Unknown);
    }
    // Normalised text is found by reading every line.
    let s = lines.lines[lines.pivot];
    let mut out = Vec::new();
    let mut at = 0;
    while at < hay.len() {
        work.take(s.text.len())?;
        let Some((end, next)) = hay.line_end_within(at, s.text.len() + LINE_SLACK) else {
            at = hay.line_end(at).1;
            continue;
        };
        let line = hay.bytes(at, end);
        if matches!(
            tier::compare(&line, &s, pass),
            Cmp::Same(_) | Cmp::Characters
        ) {
            out.push(at);
        }
        at = next;
    }
    Ok(out)
}

/// The occurrence of `lines` whose first line starts at `start`, if its
/// lines are alike under `pass`: shifted by one delta, or not
/// determined.
fn verify(
    hay: &dyn Hay,
    lines: &Lines<'_>,
    pass: Pass,
    start: usize,
    work: &Work,
) -> Result<Option<Occurrence>, Miss> {
    let mut at = start;
    let mut delta: Option<(usize, Delta)> = None;
    let mut problem: Option<NotDetermined> = None;
    let mut end = start;
    for (i, s) in lines.lines.iter().enumerate() {
        if at >= hay.len() {
            return Ok(None);
        }
        work.take(s.text.len())?;
        // A line much longer than the search's is not it.
        let Some((line_end, next)) = hay.line_end_within(at, s.text.len() + LINE_SLACK) else {
            return Ok(None);
        };
        let file = hay.bytes(at, line_end);
        let file = file.strip_suffix(b"\r").unwrap_or(&file);
        if file.len() > s.text.len() + LINE_SLACK {
            return Ok(None);
        }
        match tier::compare(file, s, pass) {
            Cmp::Differ => return Ok(None),
            Cmp::Blank => {}
            Cmp::Characters => {
                problem.get_or_insert(NotDetermined {
                    problem: IndentProblem::Characters,
                    line: i,
                    file: tier::indent(file).to_vec(),
                    search: tier::indent(s.text).to_vec(),
                });
            }
            Cmp::Same(d) => match &delta {
                None => delta = Some((i, d)),
                Some((_, first)) if *first == d => {}
                Some(_) => {
                    problem.get_or_insert(NotDetermined {
                        problem: IndentProblem::Uneven,
                        line: i,
                        file: tier::indent(file).to_vec(),
                        search: tier::indent(s.text).to_vec(),
                    });
                }
            },
        }
        end = if s.complete {
            next
        } else if s.whole {
            at + file.len()
        } else {
            at + tier::indent(file).len() + (s.text.len() - tier::indent(s.text).len())
        };
        at = next;
    }
    let shift = match (problem, delta) {
        (Some(p), _) => Some(Shifted::Not(p)),
        (None, Some((_, Delta::Zero)) | None) => None,
        (None, Some((_, d))) => Some(Shifted::Lines(d)),
    };
    // A pass that found the lines as written but for white space at
    // their ends has no shift to apply: it is still not the exact text.
    Ok(Some(Occurrence {
        range: (start, end),
        shift: shift.or(Some(Shifted::Lines(Delta::Zero))),
    }))
}

/// Chooses among `found` (counted without overlap) what `search` replaces,
/// and how the replacement is written there. `exact`: the occurrences are
/// of the text as written (some perhaps shifted); otherwise of a pass.
/// Of `pool` (indices into `found`, in text order), the first occurrence
/// on the line nearest to `hint`. Lines grow with positions: the nearest
/// line is found by halving, reading the lines of a few occurrences, not
/// of every one (a text found on every line of a long file, hunk after
/// hunk, would otherwise read the file once per hunk).
fn nearest(hay: &dyn Hay, found: &[Occurrence], pool: &[usize], hint: usize) -> Option<usize> {
    let line = |k: usize| {
        let at = pool.get(k).map(|&i| found[i].range.0);
        at.and_then(|p| hay.lines_of(&mut std::iter::once(p)).first().copied())
    };
    let first_at =
        |target: usize| pool_partition(pool.len(), |k| line(k).is_some_and(|l| l < target));
    let k = first_at(hint);
    // The lines just before and from the hint; on a tie the earlier.
    let best = [k.checked_sub(1).and_then(line), line(k)]
        .into_iter()
        .flatten()
        .min_by_key(|l| l.abs_diff(hint))?;
    pool.get(first_at(best)).copied()
}

/// The first index in `0..len` for which `before` is false, `before`
/// holding for a prefix.
fn pool_partition(len: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

fn decide(
    hay: &dyn Hay,
    search: &Search<'_>,
    found: Vec<Occurrence>,
    matched: Matched,
    search_indent: &[u8],
    exact: bool,
) -> Result<Plan, Miss> {
    let count = search.count;
    let all: Vec<usize> = (0..found.len()).collect();
    let plain: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| found[i].shift.is_none())
        .collect();
    let mut chosen_of = None;
    let chosen: Option<Vec<usize>> = if count_ok(count, found.len()) {
        Some(all)
    } else if let (true, Count::Exactly(n)) = (exact, count)
        && plain.len() == n.get()
    {
        Some(plain)
    } else if let (Some(hint), Count::Exactly(n)) = (search.line, count)
        && n.get() == 1
        && found.len() > 1
    {
        // The nearest to the line the edit was written for, among the
        // exact ones if any.
        let pool = if exact && !plain.is_empty() {
            plain
        } else {
            all
        };
        let near = nearest(hay, &found, &pool, hint.get());
        chosen_of = Some(Chosen {
            candidates: pool.len(),
            by: ChosenBy::Line,
            hint: Some(hint.get()),
        });
        near.map(|i| vec![i])
    } else {
        None
    };
    let ranges: Vec<(usize, usize)> = found.iter().map(|o| o.range).collect();
    let shown = Shown::of(&ranges);
    let Some(chosen) = chosen else {
        let mut m = Mismatch::shown(hay, &shown, count);
        if !exact {
            m.matched = Some(matched);
        }
        return Err(Box::new(m).into());
    };
    let picked: Vec<Occurrence> = chosen.iter().map(|&i| found[i].clone()).collect();
    finish(
        hay,
        search,
        &shown,
        picked,
        chosen_of,
        matched,
        search_indent,
        exact,
    )
}

/// The plan of replacing `chosen` (of the occurrences `shown` tells of),
/// or why it cannot be made: re-indenting that is not determined, or a
/// replacement already standing there.
#[allow(clippy::too_many_arguments)]
fn finish(
    hay: &dyn Hay,
    search: &Search<'_>,
    shown: &Shown,
    chosen: Vec<Occurrence>,
    chosen_of: Option<Chosen>,
    matched: Matched,
    search_indent: &[u8],
    exact: bool,
) -> Result<Plan, Miss> {
    let count = search.count;
    // The text written at each occurrence, and the shift it took.
    let mut written: Option<(String, Option<Shift>)> = None;
    for o in &chosen {
        let w = match &o.shift {
            None => Ok((search.replace.to_owned(), None)),
            Some(Shifted::InPlace(d)) => {
                tier::write_shifted(search_indent, search.replace, d, true)
                    .map(|w| (w, d.shift()))
                    .map_err(|p| not_determined(p, d, search_indent))
            }
            Some(Shifted::Lines(d)) => tier::write_shifted(search_indent, search.replace, d, false)
                .map(|w| (w, d.shift()))
                .map_err(|p| not_determined(p, d, search_indent)),
            Some(Shifted::Not(n)) => Err(n.clone()),
        };
        let w = match w {
            Ok(w) => w,
            Err(n) => {
                let m = indentation_mismatch(hay, shown, count, o.range.0, &n, search.replace);
                return Err(m.into());
            }
        };
        match &written {
            None => written = Some(w),
            Some((text, _)) if *text == w.0 => {}
            Some(_) => {
                let n = NotDetermined {
                    problem: IndentProblem::Occurrences,
                    line: 0,
                    file: line_indent(hay, o.range.0),
                    search: search_indent.to_vec(),
                };
                let m = indentation_mismatch(hay, shown, count, o.range.0, &n, search.replace);
                return Err(m.into());
            }
        }
    }
    let (written, shift) = written.unwrap_or_default();
    // What replaces a range that is written as it stands changes nothing
    // the report must name.
    let shift = shift.filter(|_| written != search.replace);
    let picked: Vec<(usize, usize)> = chosen.iter().map(|o| o.range).collect();
    let written = match (search.kept, exact, picked.as_slice()) {
        (Some(kept), false, [range]) => keep_file_lines(hay, *range, &written, kept),
        _ => written,
    };
    // An edit that changes nothing (its replacement is its search text)
    // stands wherever its text is: found is all it needs (PROTOCOL §3).
    let unchanged = search.target == Target::Text(search.replace);
    let standing = if unchanged {
        Vec::new()
    } else {
        standing(hay, &picked, &hay.raw(&written), search.whole_lines)
    };
    if !standing.is_empty() {
        let mut m = Mismatch::shown(hay, shown, count);
        let at: Vec<usize> = standing.iter().map(|&i| picked[i].0).collect();
        m.applied_lines = hay.lines_of(&mut at.iter().copied().take(MAX_REPORTED_LINES));
        m.replacement_present = Some(true);
        m.already_applied = standing.len() == picked.len();
        if !exact {
            m.matched = Some(matched);
        }
        return Err(Box::new(m).into());
    }
    let lines = hay.lines_of(&mut picked.iter().take(MAX_LISTED_LINES).map(|r| r.0));
    Ok(Plan {
        ranges: picked,
        written,
        how: How {
            matched,
            shift,
            chosen: chosen_of,
        },
        lines,
    })
}

/// `written` with each kept line as the file has it in `range`, an
/// occurrence a pass found (one line of the file for each line of the
/// search): only the lines the edit removes and adds change.
fn keep_file_lines(hay: &dyn Hay, range: (usize, usize), written: &str, kept: &Kept) -> String {
    let occurrence = hay.bytes(range.0, range.1);
    let file: Vec<&[u8]> = occurrence
        .split_inclusive(|&b| b == b'\n')
        .map(|l| {
            let l = l.strip_suffix(b"\n").unwrap_or(l);
            l.strip_suffix(b"\r").unwrap_or(l)
        })
        .collect();
    let mut out: Vec<Cow<'_, str>> = written.split_inclusive('\n').map(Cow::Borrowed).collect();
    for (i, j) in kept.pairs() {
        let (Some(f), Some(w)) = (file.get(i), out.get_mut(j)) else {
            continue;
        };
        let text = w.strip_suffix('\n').unwrap_or(w);
        if text.as_bytes() == *f {
            continue;
        }
        if let Ok(f) = std::str::from_utf8(f) {
            let brk = if w.ends_with('\n') { "\n" } else { "" };
            *w = Cow::Owned(format!("{f}{brk}"));
        }
    }
    out.concat()
}

fn not_determined(problem: IndentProblem, delta: &Delta, search_indent: &[u8]) -> NotDetermined {
    let mut file = match delta {
        Delta::Deeper(add) => add.clone(),
        _ => Vec::new(),
    };
    match delta {
        Delta::Shallower(take) => {
            file = search_indent
                .strip_prefix(take.as_slice())
                .unwrap_or(search_indent)
                .to_vec();
        }
        _ => file.extend_from_slice(search_indent),
    }
    NotDetermined {
        problem,
        line: 0,
        file,
        search: search_indent.to_vec(),
    }
}

/// The error of a shifted match that cannot be applied.
fn indentation_mismatch(
    hay: &dyn Hay,
    shown: &Shown,
    count: Count,
    at: usize,
    n: &NotDetermined,
    replace: &str,
) -> Box<Mismatch> {
    let mut m = Mismatch::shown(hay, shown, count);
    let first = hay
        .lines_of(&mut std::iter::once(at))
        .first()
        .copied()
        .unwrap_or(1);
    let replacement = replace
        .split_inclusive('\n')
        .map(str::as_bytes)
        .find(|l| !tier::is_blank(l.strip_suffix(b"\n").unwrap_or(l)))
        .map_or(&b""[..], tier::indent);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    m.indentation = Some(Indentation {
        line: first + n.line,
        file: text(&n.file),
        search: text(&n.search),
        replacement: text(replacement),
        problem: n.problem,
    });
    Box::new(m)
}

/// The indentation of the line holding `pos`.
fn line_indent(hay: &dyn Hay, pos: usize) -> Vec<u8> {
    let start = hay.line_start(pos);
    let (end, _) = hay.line_end(start);
    tier::indent(&hay.bytes(start, end.min(start + 4096))).to_vec()
}

/// Which of `ranges` already have `written` standing around them: the
/// text there is the replacement, and holds what the range would replace
/// (an insertion that keeps its search text, sent again). The work is
/// bounded by the text's size. `whole`: the replacement stands from a
/// line start.
fn standing(hay: &dyn Hay, ranges: &[(usize, usize)], written: &[u8], whole: bool) -> Vec<usize> {
    let mut out = Vec::new();
    if written.is_empty() {
        return out;
    }
    let mut budget = hay.len().saturating_mul(4).saturating_add(1 << 20);
    let mut same: Option<(Vec<u8>, Vec<usize>)> = None;
    for (i, &(s, e)) in ranges.iter().enumerate() {
        if e <= s || e - s > written.len() {
            continue;
        }
        let occ = hay.bytes(s, e);
        // Where the occurrence stands in the replacement: found once for
        // occurrences of the same text.
        let offsets = match &same {
            Some((t, at)) if **t == *occ => at.clone(),
            _ => {
                // Where the two are of about one length, comparing at each
                // place costs less than making a searcher.
                let places = written.len() - occ.len() + 1;
                let at: Vec<usize> = if places <= 16 {
                    (0..places)
                        .filter(|&j| written[j..j + occ.len()] == *occ)
                        .take(4)
                        .collect()
                } else {
                    memchr::memmem::find_iter(written, &occ).take(4).collect()
                };
                same = Some((occ.to_vec(), at.clone()));
                at
            }
        };
        for j in offsets {
            let Some(from) = s.checked_sub(j) else {
                continue;
            };
            if whole && from > 0 && hay.byte(from - 1) != Some(b'\n') {
                continue;
            }
            let to = from + written.len();
            // The file's text reaches that far. The line break a file
            // lacks (added to its text) does not stand for one a
            // replacement adds after a search without one (a unified
            // diff's `\ No newline at end of file` on the old side only).
            let adds_final = !occ.ends_with(b"\n") && written.ends_with(b"\n");
            if to > hay.len() || (to == hay.len() && adds_final && hay.virtual_final()) {
                continue;
            }
            if budget < written.len() {
                return out;
            }
            budget -= written.len();
            if *hay.bytes(from, to) == *written {
                out.push(i);
                break;
            }
        }
    }
    out
}

/// The error of a search that found nothing: whether the replacement is
/// there already, as often as `count` asks (as written, or as the passes
/// would find it).
fn nothing_found(hay: &dyn Hay, search: &Search<'_>, work: &Work) -> Result<Box<Mismatch>, Miss> {
    let mut m = Mismatch::of(hay, &[], search.count);
    if let Target::Range(start, end) = search.target {
        let lines = |t: &str| -> Result<Vec<usize>, Miss> {
            let raw = hay.raw(t);
            let starts = hay.starts(&raw).ok_or(Miss::Unknown)?;
            let apart = apart(&starts, raw.len());
            Ok(hay.lines_of(&mut apart.iter().take(MAX_REPORTED_LINES).map(|r| r.0)))
        };
        m.start_lines = lines(start)?;
        m.end_lines = lines(end)?;
    }
    // Where the text occurs but not as the dialect asks: said, so that
    // the model sees why nothing was found.
    if let Target::Text(text) = search.target
        && (search.whole_lines || search.at_end)
    {
        let needle = hay.raw(text);
        let elsewhere = if search.at_end {
            let lines = Search {
                at_end: false,
                ..*search
            };
            occurrences(hay, &lines, &needle)?
        } else {
            let starts = hay.starts(&needle).ok_or(Miss::Unknown)?;
            apart(&starts, needle.len())
        };
        let at = hay.lines_of(&mut elsewhere.iter().take(MAX_REPORTED_LINES).map(|r| r.0));
        if search.at_end {
            m.not_at_end = at;
        } else {
            m.inside_lines = at;
        }
    }
    let replace = search.replace;
    if replace.is_empty() {
        return Ok(Box::new(m));
    }
    let raw = hay.raw(replace);
    let mut at = occurrences(hay, search, &raw)?;
    let mut n = at.len();
    if n == 0 && matches!(search.target, Target::Text(_)) {
        for &pass in search.passes {
            if pass == Pass::Unicode && !hay.whole() {
                return Err(Miss::Unknown);
            }
            let Some(lines) = Lines::new(replace, search.whole_lines) else {
                break;
            };
            let found = match by_lines(hay, &lines, pass, search.at_end, work) {
                // A hint only: where the passes gave up, nothing is said.
                Err(Miss::Stopped) => break,
                other => other?,
            };
            let alike = found
                .iter()
                .filter(|o| !matches!(o.shift, Some(Shifted::Not(_))))
                .count();
            if !found.is_empty() {
                n = alike;
                at = found.iter().map(|o| o.range).collect();
                break;
            }
        }
    }
    m.replacement_present = Some(n > 0);
    m.applied_lines = hay.lines_of(&mut at.iter().take(MAX_REPORTED_LINES).map(|r| r.0));
    m.already_applied = n > 0 && count_ok(search.count, n) && proves(search);
    Ok(Box::new(m))
}

/// Whether finding the replacement of `search` (whose search text is
/// absent) proves the edit was applied before (PROTOCOL §8): only when the
/// replacement is where the edit would have put it. The replacement keeps
/// lines of the search text at its start or end (the edit's context, one
/// of them more than white space and punctuation), so that finding it
/// finds the new lines beside that context; and it is not part of the
/// search text, which the file held before any edit. A replacement with
/// no context (`x = 1` to `x = 2`) could stand anywhere for any reason, and
/// a deletion leaves nothing to find.
pub(crate) fn proves(search: &Search<'_>) -> bool {
    let replace = search.replace;
    let (first, last) = match search.target {
        Target::Text(text) => (text, text),
        Target::Range(start, end) => (start, end),
    };
    if replace.trim().is_empty() || first.contains(replace) || last.contains(replace) {
        return false;
    }
    let lines = |t: &'_ str| -> Vec<String> {
        t.split_inclusive('\n')
            .map(|l| l.trim_end().to_owned())
            .collect()
    };
    let (head, tail, new) = (lines(first), lines(last), lines(replace));
    let meant = |l: &String| l.chars().any(char::is_alphanumeric);
    let before = head.iter().zip(&new).take_while(|(a, b)| a == b);
    let after = tail
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take_while(|(a, b)| a == b);
    before
        .map(|(a, _)| a)
        .chain(after.map(|(a, _)| a))
        .any(meant)
}

fn seek_range(
    hay: &dyn Hay,
    start: &str,
    end: &str,
    search: &Search<'_>,
    work: &Work,
) -> Result<Plan, Miss> {
    let (s_raw, e_raw) = (hay.raw(start), hay.raw(end));
    let (ranges, dangling) = hay.range_starts(&s_raw, &e_raw).ok_or(Miss::Unknown)?;
    let first = start.split('\n').next().unwrap_or_default();
    let start_indent = tier::indent(first.as_bytes());
    if !ranges.is_empty() {
        let one_line = start
            .split_inclusive('\n')
            .skip(1)
            .all(|l| tier::is_blank(l.trim_end_matches('\n').as_bytes()));
        let end_first_blank = tier::is_blank(end.split('\n').next().unwrap_or_default().as_bytes());
        let occurrences = ranges
            .into_iter()
            .map(|range| {
                // A whole-line occurrence starts at a line start: nothing
                // stands before it (and no line of the file is read).
                let before = if search.whole_lines || tier::is_blank(first.as_bytes()) {
                    None
                } else {
                    hay.indent_before(range.0).filter(|i| !i.is_empty())
                };
                let shift = before.map(|add| {
                    let mut file = add.clone();
                    file.extend_from_slice(start_indent);
                    let uneven = |line| {
                        Shifted::Not(NotDetermined {
                            problem: IndentProblem::Uneven,
                            line,
                            file: file.clone(),
                            search: start_indent.to_vec(),
                        })
                    };
                    if !one_line {
                        return uneven(0);
                    }
                    // The end, when it begins after white space only, is
                    // shifted alike.
                    let end_at = range.1 - e_raw.len();
                    let end_before = if end_first_blank {
                        None
                    } else {
                        hay.indent_before(end_at)
                    };
                    match end_before {
                        Some(b) if b != add => {
                            let lines = hay.lines_of(&mut [range.0, end_at].into_iter());
                            uneven(lines[1].saturating_sub(lines[0]))
                        }
                        _ => Shifted::InPlace(Delta::Deeper(add)),
                    }
                });
                Occurrence { range, shift }
            })
            .collect();
        return decide(hay, search, occurrences, Matched::Exact, start_indent, true).map_err(
            |miss| match miss {
                Miss::Mismatch(mut m) => {
                    m.dangling_starts = hay.lines_of(&mut dangling.into_iter());
                    Miss::Mismatch(m)
                }
                other => other,
            },
        );
    }
    for &pass in search.passes {
        if !hay.whole() {
            return Err(Miss::Unknown);
        }
        let (Some(s_lines), Some(e_lines)) = (Lines::new(start, false), Lines::new(end, false))
        else {
            break;
        };
        let found = ranges_by_lines(hay, &s_lines, &e_lines, pass, work)?;
        if found.is_empty() {
            continue;
        }
        return decide(
            hay,
            search,
            found,
            pass.matched(),
            s_lines.first_indent(),
            false,
        );
    }
    let mut m = nothing_found(hay, search, work)?;
    m.dangling_starts = hay.lines_of(&mut dangling.into_iter());
    Err(m.into())
}

/// The ranges of a pass: a start found by the pass, to the nearest end
/// after it found by the pass, shifted alike.
fn ranges_by_lines(
    hay: &dyn Hay,
    start: &Lines<'_>,
    end: &Lines<'_>,
    pass: Pass,
    work: &Work,
) -> Result<Vec<Occurrence>, Miss> {
    let starts = by_lines(hay, start, pass, false, work)?;
    let ends = by_lines_all(hay, end, pass, work)?;
    let mut out: Vec<Occurrence> = Vec::new();
    let mut free = 0;
    for s in starts {
        if s.range.0 < free {
            continue;
        }
        let Some(e) = ends.iter().find(|e| e.range.0 >= s.range.1) else {
            break;
        };
        let shift = match (&s.shift, &e.shift) {
            (Some(Shifted::Not(n)), _) => Some(Shifted::Not(n.clone())),
            (Some(Shifted::Lines(a)), Some(Shifted::Lines(b))) if a == b => s.shift.clone(),
            (_, Some(Shifted::Not(n))) => Some(Shifted::Not(n.clone())),
            (Some(Shifted::Lines(a)), _) => {
                let lines = hay.lines_of(&mut [s.range.0, e.range.0].into_iter());
                Some(Shifted::Not(NotDetermined {
                    problem: IndentProblem::Uneven,
                    line: lines[1].saturating_sub(lines[0]),
                    file: match a {
                        Delta::Deeper(x) => x.clone(),
                        _ => Vec::new(),
                    },
                    search: start.first_indent().to_vec(),
                }))
            }
            _ => s.shift.clone(),
        };
        free = e.range.1;
        out.push(Occurrence {
            range: (s.range.0, e.range.1),
            shift,
        });
    }
    Ok(out)
}

/// Every occurrence of `lines` under `pass`, overlapping ones included.
fn by_lines_all(
    hay: &dyn Hay,
    lines: &Lines<'_>,
    pass: Pass,
    work: &Work,
) -> Result<Vec<Occurrence>, Miss> {
    let mut out = Vec::new();
    for p in candidates(hay, lines, pass, work)? {
        if let Some(start) = first_line(hay, lines, p, work)?
            && let Some(found) = verify(hay, lines, pass, start, work)?
        {
            out.push(found);
        }
    }
    Ok(out)
}

/// Occurrences (sorted, overlapping ones included) of a text `len` bytes
/// long, counted without overlap, leftmost first: the ranges they take.
pub(crate) fn apart(starts: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut end = 0;
    for &a in starts {
        if a >= end {
            end = a + len;
            ranges.push((a, end));
        }
    }
    ranges
}

/// The occurrences at `ranges` (the first [`MAX_EXCERPTS`]) with a line
/// either side.
pub(crate) fn excerpts(hay: &dyn Hay, ranges: &[(usize, usize)]) -> Vec<Excerpt> {
    let shown = &ranges[..ranges.len().min(MAX_EXCERPTS)];
    let starts: Vec<usize> = shown.iter().map(|r| r.0).collect();
    let lines = hay.lines_of(&mut starts.iter().copied());
    shown
        .iter()
        .zip(lines)
        .map(|(&(s, e), line)| {
            let first = hay.line_start(s);
            let mut from = first;
            let mut start_line = line;
            if first > 0 {
                from = hay.line_start(first - 1);
                start_line -= 1;
            }
            let mut text = Vec::new();
            let mut at = from;
            // The line before, the occurrence's lines (a few), the line
            // after.
            let last_of_occurrence = hay.line_start(e.saturating_sub(1).max(s));
            let mut past = 0;
            while at < hay.len() && text.len() < EXCERPT_LINES + 2 {
                let (end, next) = hay.line_end(at);
                // What is shown of a line, at most: no copy of a huge one.
                let bytes = hay.bytes(at, end.min(at + 4 * EXCERPT_WIDTH));
                let bytes = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
                let mut t = String::from_utf8_lossy(bytes).into_owned();
                if t.chars().count() > EXCERPT_WIDTH {
                    t = t.chars().take(EXCERPT_WIDTH).collect::<String>() + "…";
                }
                text.push(t);
                if at > last_of_occurrence {
                    past += 1;
                    if past == 1 {
                        break;
                    }
                }
                at = next;
            }
            Excerpt {
                start_line,
                line,
                text,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use super::*;
    use crate::engine::matching::{Edited, HintBudget, edit, edit_range};

    fn one() -> Count {
        Count::Exactly(NonZeroUsize::MIN)
    }

    fn shift(by: i64, indent: &str) -> Option<Shift> {
        Some(Shift {
            by,
            indent: indent.to_owned(),
        })
    }

    fn problem(m: &Mismatch) -> Option<IndentProblem> {
        m.indentation.as_ref().map(|i| i.problem)
    }

    #[test]
    fn a_shifted_occurrence_whose_replacement_is_indented_otherwise_is_refused() {
        // The model's search lacks 2 of the line's 4 spaces and its
        // replacement has all 4: writing it in place would give 6.
        let m = edit("def f():\n    x = 1\n", "  x = 1\n", "    x = 2\n", one()).unwrap_err();
        let i = m.indentation.clone().unwrap_or_else(|| panic!("{m:?}"));
        assert_eq!(i.problem, IndentProblem::Replacement);
        assert_eq!(
            (
                i.line,
                i.file.as_str(),
                i.search.as_str(),
                i.replacement.as_str()
            ),
            (2, "    ", "  ", "    ")
        );
    }

    #[test]
    fn a_shifted_range_is_re_indented_as_a_whole() {
        let file = "class A:\n    def f(self):\n        return a\n";
        let e = edit_range(
            file,
            "def f(self):",
            "    return a\n",
            "def f(self):\n    return b\n",
            one(),
        )
        .unwrap();
        assert_eq!(e.text, "class A:\n    def f(self):\n        return b\n");
        assert_eq!((e.matched, e.shift), (Matched::Exact, shift(4, "    ")));
        // An end found at another indentation than the start's is not one
        // shift.
        let file = "class A:\n    def f(self):\nreturn a\n";
        let m = edit_range(file, "def f(self):", "return a\n", "x\n", one()).unwrap_err();
        assert_eq!(problem(&m), Some(IndentProblem::Uneven));
    }

    #[test]
    fn a_uniformly_shifted_block_is_found_by_the_tier_and_re_indented() {
        let file = "class A:\n    def f(self):\n        return 1\n";
        let e: Edited = edit(
            file,
            "def f(self):\n    return 1\n",
            "def f(self):\n    # one\n    return 2\n",
            one(),
        )
        .unwrap();
        assert_eq!(
            e.text,
            "class A:\n    def f(self):\n        # one\n        return 2\n"
        );
        assert_eq!(
            (e.matched, e.shift),
            (Matched::Whitespace, shift(4, "    "))
        );
        // Shallower: the file indents less than the search.
        let e = edit(
            "if a:\n  b()\n",
            "    if a:\n      b()\n",
            "    if a:\n      c()\n",
            one(),
        )
        .unwrap();
        assert_eq!(e.text, "if a:\n  c()\n");
        assert_eq!(e.shift, shift(-4, "    "));
    }

    #[test]
    fn tabs_against_spaces() {
        // The shift is the file's own characters.
        let e = edit(
            "\tif a:\n\t\tb()\n",
            "if a:\n\tb()\n",
            "if a:\n\tc()\n",
            one(),
        )
        .unwrap();
        assert_eq!(e.text, "\tif a:\n\t\tc()\n");
        assert_eq!(e.shift, shift(1, "\t"));
        // Spaces where the file has tabs are no shift at all.
        let m = edit("\tx = 1\n", "    x = 1\n", "    x = 2\n", one()).unwrap_err();
        assert_eq!(problem(&m), Some(IndentProblem::Characters));
    }

    #[test]
    fn several_shifted_occurrences_are_a_mismatch_and_exact_beats_shifted() {
        let m = edit(
            "if a:\n    x = 1\nif b:\n    x = 1\n",
            "x = 1\n",
            "x = 2\n",
            one(),
        )
        .unwrap_err();
        assert_eq!((m.found, m.lines.clone()), (2, vec![2, 4]));
        let e = edit("x = 1\nif a:\n    x = 1\n", "x = 1\n", "x = 2\n", one()).unwrap();
        assert_eq!(e.text, "x = 2\nif a:\n    x = 1\n");
        assert_eq!(e.matched, Matched::Exact);
        // count="all" takes every one, each shifted alike.
        let e = edit(
            "x = 1\nif a:\n    x = 1\n",
            "x = 1\n",
            "x = 2\n",
            Count::All,
        )
        .unwrap();
        assert_eq!(e.text, "x = 2\nif a:\n    x = 2\n");
    }

    #[test]
    fn an_insertion_sent_twice_is_already_applied() {
        let once = edit(
            "import os\n",
            "import os\n",
            "import os\nimport sys\n",
            one(),
        )
        .unwrap();
        assert_eq!(once.text, "import os\nimport sys\n");
        let m = edit(&once.text, "import os\n", "import os\nimport sys\n", one()).unwrap_err();
        assert!(m.already_applied, "{m:?}");
        assert_eq!(m.applied_lines, vec![1]);
        // Shifted too: the replacement stands re-indented.
        let file = "def f():\n    import os\n";
        let once = edit(file, "import os\n", "import os\nimport sys\n", one()).unwrap();
        assert_eq!(once.text, "def f():\n    import os\n    import sys\n");
        let m = edit(&once.text, "import os\n", "import os\nimport sys\n", one()).unwrap_err();
        assert!(m.already_applied, "{m:?}");
        // A replacement that is there re-indented, its search gone, with
        // the edit's context.
        let file = "if a:\n  x = 2\n";
        let m = edit(file, "  if a:\n    x = 1\n", "  if a:\n    x = 2\n", one()).unwrap_err();
        assert!(m.already_applied, "{m:?}");
        // An insertion into a file without a final line break, sent
        // twice: the file still lacks one, and the insertion stands.
        let once = edit("import os", "import os\n", "import os\nimport sys\n", one()).unwrap();
        assert_eq!(once.text, "import os\nimport sys");
        let m = edit(&once.text, "import os\n", "import os\nimport sys\n", one()).unwrap_err();
        assert!(m.already_applied, "{m:?}");
    }

    #[test]
    fn a_replacement_found_proves_nothing_without_the_edits_context() {
        // `x = 2` stands in another function: the edit's line could be
        // anywhere, so finding it proves nothing; the error says where.
        let file = "def f():\n    y = 0\n\ndef g():\n    x = 2\n";
        let m = edit(file, "x = 1\n", "x = 2\n", one()).unwrap_err();
        assert!(!m.already_applied, "{m:?}");
        assert_eq!(m.replacement_present, Some(true));
        assert_eq!(m.applied_lines, vec![5]);
        // The replacement is part of its own search text: the file held
        // it before any edit (a deletion by its text alone).
        let file = "def f():\n    print(\"debug\")\n    return 1\n";
        let m = edit(
            file,
            "    print('debug')\n    return 1\n",
            "    return 1\n",
            one(),
        );
        let m = m.unwrap_err();
        assert!(!m.already_applied, "{m:?}");
        assert_eq!(m.applied_lines, vec![3]);
        // Context of white space and punctuation alone places nothing.
        let m = edit("}\nx = 2\n", "}\nx = 1\n", "}\nx = 2\n", one()).unwrap_err();
        assert!(!m.already_applied, "{m:?}");
        // A deletion with context on both sides that now stand together.
        let file = "def f():\n    return 1\n";
        let m = edit(
            file,
            "def f():\n    print('debug')\n    return 1\n",
            "def f():\n    return 1\n",
            one(),
        )
        .unwrap_err();
        assert!(m.already_applied, "{m:?}");
        // The context after the changed line proves it as well.
        let m = edit(
            "x = 2\nreturn x\n",
            "x = 1\nreturn x\n",
            "x = 2\nreturn x\n",
            one(),
        );
        assert!(m.unwrap_err().already_applied);
    }

    #[test]
    fn a_final_line_break_added_after_a_last_line_without_one_is_not_already_there() {
        // A unified diff's `\ No newline at end of file` on the old side
        // only: the search lacks the final line break, the replacement
        // has it. The file's added line break is not the one the edit
        // adds.
        let file = "a: 1\n  extra:\n      ";
        let done = edit(file, "  extra:\n      ", "  extra:\n      \n", one()).unwrap();
        assert_eq!(done.text, "a: 1\n  extra:\n      \n");
        let m = edit(&done.text, "  extra:\n      ", "  extra:\n      \n", one()).unwrap_err();
        assert!(m.already_applied, "{m:?}");
    }

    #[test]
    fn trailing_white_space_in_the_file_is_ignored() {
        let e = edit(
            "x = 1   \ny = 2\n",
            "x = 1\ny = 2\n",
            "x = 3\ny = 2\n",
            one(),
        )
        .unwrap();
        assert_eq!(e.text, "x = 3\ny = 2\n");
        assert_eq!((e.matched, e.shift), (Matched::Whitespace, None));
    }

    #[test]
    fn exact_mode_never_looks_beyond_the_text() {
        let hints = HintBudget::new(usize::MAX);
        let search = Search {
            passes: &[],
            ..Search::text("x = 1\ny = 2\n", "z\n", one())
        };
        let m = search.find_in("x = 1 \ny = 2\n", None, &hints).unwrap_err();
        assert_eq!(m.found, 0);
        // A shifted occurrence of the text as written is still re-indented.
        let search = Search {
            passes: &[],
            ..Search::text("x = 1\n", "x = 2\ny = 3\n", one())
        };
        let f = search.find_in("if a:\n  x = 1\n", None, &hints).unwrap();
        let mut text = "if a:\n  x = 1\n".to_owned();
        f.apply_text(&mut text);
        assert_eq!(text, "if a:\n  x = 2\n  y = 3\n");
    }

    #[test]
    fn a_line_hint_takes_the_nearest_of_equal_candidates() {
        let file = "a\nx\nb\nx\nc\nx\n";
        let hints = HintBudget::new(usize::MAX);
        let search = |line| Search {
            line: NonZeroUsize::new(line),
            ..Search::text("x\n", "y\n", one())
        };
        let f = search(5).find_in(file, None, &hints).unwrap();
        assert_eq!(f.lines, vec![4]);
        assert_eq!(
            f.how.chosen,
            Some(Chosen {
                candidates: 3,
                by: ChosenBy::Line,
                hint: Some(5)
            })
        );
        let f = search(1).find_in(file, None, &hints).unwrap();
        assert_eq!(f.lines, vec![2]);
        // Without a hint, several candidates are a mismatch.
        let m = Search::text("x\n", "y\n", one())
            .find_in(file, None, &hints)
            .unwrap_err();
        assert_eq!(m.found, 3);
    }

    /// The text of `file` after `search`, or how many it found.
    fn applied(search: Search<'_>, file: &str) -> Result<String, usize> {
        let hints = HintBudget::new(usize::MAX);
        match search.find_in(file, None, &hints) {
            Ok(f) => {
                let mut text = file.to_owned();
                f.apply_text(&mut text);
                Ok(text)
            }
            Err(m) => Err(m.found),
        }
    }

    fn lines<'a>(s: &'a str, r: &'a str) -> Search<'a> {
        Search {
            whole_lines: true,
            ..Search::text(s, r, one())
        }
    }

    #[test]
    fn a_line_based_edit_matches_whole_lines_only() {
        // Inside a line: no match, as written or through the tier.
        assert_eq!(applied(lines("oo()\n", "bar()\n"), "foo()\nx\n"), Err(0));
        assert_eq!(applied(lines("oo()\n", "bar()\n"), "  foo()  \n"), Err(0));
        assert_eq!(
            applied(lines("x = 1\ny = 2\n", "z\n"), "max = 1\ny = 2\n"),
            Err(0)
        );
        // The whole line is found where a part of another line comes
        // first, CRLF too; clada's own SEARCH would have found both.
        assert_eq!(
            applied(lines("a\n", "b\n"), "xa\na\n").as_deref(),
            Ok("xa\nb\n")
        );
        assert_eq!(
            applied(lines("a\n", "b\n"), "xa\r\na\r\n").as_deref(),
            Ok("xa\r\nb\r\n")
        );
        assert_eq!(
            applied(Search::text("a\n", "b\n", one()), "xa\na\n"),
            Err(2)
        );
        // Adjacent whole-line occurrences are all counted.
        let two = Search {
            count: Count::Exactly(NonZeroUsize::new(2).unwrap_or(NonZeroUsize::MIN)),
            ..lines("a\na\n", "b\n")
        };
        assert_eq!(applied(two, "a\na\na\na\n").as_deref(), Ok("b\nb\n"));
        assert_eq!(applied(lines("a\na\n", "b\n"), "a\na\na\na\n"), Err(2));
        // Through the tier: the last line compares whole.
        assert_eq!(
            applied(lines("  x = 1\n", "  x = 2\n"), "if a:\n    x = 1  \n").as_deref(),
            Ok("if a:\n    x = 2\n")
        );
        // An edit applied before is told by whole lines too.
        assert_eq!(applied(lines("oo\n", "foo\n"), "foo\n"), Err(0));
    }

    #[test]
    fn an_edit_at_the_end_ends_at_the_file_s_end() {
        let at_end = |s, r| Search {
            at_end: true,
            ..lines(s, r)
        };
        assert_eq!(applied(at_end("a\nb", "a\nc\n"), "a\nbxyz\nq\n"), Err(0));
        assert_eq!(applied(at_end("a\nb", "a\nc\n"), "a\nb\n"), Err(0));
        assert_eq!(
            applied(at_end("a\nb", "a\nc\n"), "a\nb").as_deref(),
            Ok("a\nc\n")
        );
        assert_eq!(applied(at_end("a\nb\n", "a\nc"), "a\nb\nq\n"), Err(0));
        assert_eq!(
            applied(at_end("a\nb\n", "a\nc"), "q\na\nb\n").as_deref(),
            Ok("q\na\nc")
        );
        // Only the last of equal candidates ends the file.
        assert_eq!(applied(at_end("b\n", "c"), "b\nb\n").as_deref(), Ok("b\nc"));
        // Through the tier.
        assert_eq!(
            applied(at_end("b", "c"), "a\n  b  ").as_deref(),
            Ok("a\n  c")
        );
    }

    #[test]
    fn a_whole_line_miss_says_where_the_text_stands_otherwise() {
        let hints = HintBudget::new(usize::MAX);
        let m = lines("oo()\n", "bar()\n")
            .find_in("x\nfoo()\n", None, &hints)
            .unwrap_err();
        assert_eq!((m.found, m.inside_lines.clone()), (0, vec![2]));
        let at_end = Search {
            at_end: true,
            ..lines("b", "c")
        };
        let m = at_end.find_in("b\nq\nb\n", None, &hints).unwrap_err();
        assert_eq!((m.found, m.not_at_end.clone()), (0, vec![1, 3]));
    }

    #[test]
    fn the_texts_as_written_are_looked_for_before_the_numbers_are_taken_off() {
        let numbered = |file| {
            applied(
                Search {
                    as_written: Some(("1 | a\n", "1 | b\n")),
                    ..lines("a\n", "b\n")
                },
                file,
            )
        };
        assert_eq!(numbered("1 | a\na\n").as_deref(), Ok("1 | b\na\n"));
        assert_eq!(numbered("x\na\n").as_deref(), Ok("x\nb\n"));
    }

    #[test]
    fn codex_looks_again_without_a_last_empty_line() {
        let retry = |s, r| Search {
            blank_end_optional: true,
            ..lines(s, r)
        };
        assert_eq!(
            applied(retry("foo\nbar\n\n", "foo\nBAR\n\n"), "foo\nbar\n").as_deref(),
            Ok("foo\nBAR\n")
        );
        // Found with it, it stays.
        assert_eq!(
            applied(retry("foo\n\n", "x\n\n"), "foo\n\nfoo\n").as_deref(),
            Ok("x\n\nfoo\n")
        );
        // Without the retry, nothing.
        assert_eq!(applied(lines("foo\nbar\n\n", "x\n"), "foo\nbar\n"), Err(0));
    }

    #[test]
    fn an_edit_carries_its_hint_and_policy_to_the_search() {
        use crate::syntax::{Matching, Policy};
        let op = Op::Edit {
            path: "a".into(),
            count: one(),
            matching: Matching::lines(Policy::Codex, NonZeroUsize::new(6)),
            search: "x\n".into(),
            replace: "y\n".into(),
        };
        let hints = HintBudget::new(usize::MAX);
        let (_, search) = Search::of(&op, true).unwrap_or_else(|| panic!("an edit"));
        assert_eq!(search.passes, tier::passes(Policy::Codex, true));
        assert!(search.whole_lines && !search.at_end);
        let f = search.find_in("x\na\nb\nc\nd\nx\n", None, &hints).unwrap();
        assert_eq!(f.lines, vec![6]);
        // `--match exact` turns every pass off, codex's too.
        let (_, exact) = Search::of(&op, false).unwrap_or_else(|| panic!("an edit"));
        assert!(exact.passes.is_empty());
    }

    #[test]
    fn codex_passes_say_which_matched() {
        let hints = HintBudget::new(usize::MAX);
        let codex = |s: &'static str, r: &'static str| Search {
            passes: tier::passes(crate::syntax::Policy::Codex, true),
            ..Search::text(s, r, one())
        };
        let run = |file: &str, s, r| {
            let f = codex(s, r).find_in(file, None, &hints).unwrap();
            let mut t = file.to_owned();
            f.apply_text(&mut t);
            (t, f.how.matched)
        };
        assert_eq!(
            run("a\nb\n", "a\n", "c\n"),
            ("c\nb\n".to_owned(), Matched::Exact)
        );
        assert_eq!(
            run("a  \nb\n", "a\nb\n", "a\nc\n"),
            ("a\nc\n".to_owned(), Matched::Trailing)
        );
        assert_eq!(
            run("  a\n  b\n", "a\nb\n", "a\nc\n"),
            ("  a\n  c\n".to_owned(), Matched::Trimmed)
        );
        assert_eq!(
            run(
                "x = \u{201C}a\u{201D} \u{2014} 1\n",
                "x = \"a\" - 1\n",
                "x = 2\n"
            ),
            ("x = 2\n".to_owned(), Matched::Unicode)
        );
    }

    fn indented_lines(min: usize, max: usize) -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop::collection::vec(
            (
                prop::sample::select(vec!["", "  ", "    ", "\t"]),
                prop::sample::select(vec!["x = 1", "y", "if a:", "x = 1 "]),
            )
                .prop_map(|(i, t)| format!("{i}{t}\n")),
            min..max,
        )
        .prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// The white-space tier never applies when the search text occurs
        /// as written, and what it writes, read back with the inverse
        /// shift, is the replacement.
        #[test]
        fn the_tier_only_applies_without_an_exact_occurrence_and_its_shift_inverts(
            file in indented_lines(0, 12),
            search in indented_lines(1, 4),
            replace in indented_lines(0, 4),
            all in proptest::prelude::any::<bool>(),
        ) {
            let count = if all { Count::All } else { one() };
            let hints = HintBudget::new(usize::MAX);
            let Ok(found) = Search::text(&search, &replace, count).find_in(&file, None, &hints) else {
                return Ok(());
            };
            let exact = memchr::memmem::find(file.as_bytes(), search.as_bytes()).is_some();
            proptest::prop_assert!(
                !exact || found.how.matched == Matched::Exact,
                "{:?} applied though the text occurs", found.how.matched
            );
            if found.how.matched == Matched::Whitespace {
                let delta = match &found.how.shift {
                    None => Delta::Zero,
                    Some(s) if s.by > 0 => Delta::Deeper(s.indent.as_bytes().to_vec()),
                    Some(s) => Delta::Shallower(s.indent.as_bytes().to_vec()),
                };
                proptest::prop_assert_eq!(tier::unshift(found.replacement(), &delta), replace);
            }
        }
    }

    #[test]
    fn the_passes_stop_when_too_many_lines_are_alike() {
        // Every line of the file is a candidate, and each would be read a
        // thousand lines on: the passes give up, and apply nothing.
        let file = "a\n".repeat(200_000);
        let search = format!("{}  b\n", "  a\n".repeat(999));
        let m = edit(&file, &search, "c\n", one()).unwrap_err();
        assert!(m.passes_stopped, "{:?}", (m.found, m.matched));
        assert_eq!(m.found, 0);
    }

    #[test]
    fn a_count_mismatch_shows_each_occurrence_with_a_line_either_side() {
        let m = edit("a\nx\nb\nc\nx\n", "x\n", "y\n", one()).unwrap_err();
        assert_eq!(
            m.excerpts,
            vec![
                Excerpt {
                    start_line: 1,
                    line: 2,
                    text: vec!["a".into(), "x".into(), "b".into()]
                },
                Excerpt {
                    start_line: 4,
                    line: 5,
                    text: vec!["c".into(), "x".into()]
                },
            ]
        );
    }
}
