//! What a run did to one file, as a report shows it: the lines it added
//! and removed, and a unified diff, cut to a budget.
//!
//! The one place a change of contents becomes a diff, for a dry run (what
//! would change) and a real run (what changed) alike. It never reads
//! anything: the caller hands it both contents. Its time and memory stay
//! linear: the diff (Myers, from `similar`) has a deadline, after which
//! the rest of a file is given as replaced (more lines than needed, never
//! wrong), and only the lines that fit the budget are written out; the
//! rest are counted, never formatted.

use std::cell::Cell;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use similar::{Algorithm, ChangeTag, DiffOp, DiffTag, TextDiff};

/// Lines of diff one file shows at most.
pub(crate) const FILE_LINES: usize = 400;
/// Bytes of diff one file shows at most.
pub(crate) const FILE_BYTES: usize = 32 * 1024;
/// Lines of diff one report shows at most, all files together.
pub(crate) const REPORT_LINES: usize = 2000;
/// Bytes of diff one report shows at most, all files together.
pub(crate) const REPORT_BYTES: usize = 128 * 1024;
/// How long one file's diff may take before the rest of it is coarse.
const FILE_TIME: Duration = Duration::from_millis(250);
/// How long a report's diffs may take, all files together.
const REPORT_TIME: Duration = Duration::from_secs(2);

/// What one file's change shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Diff {
    pub(crate) added: usize,
    pub(crate) removed: usize,
    /// The unified diff (3 lines of context, `a/` and `b/` headers), or as
    /// much of it as the budget let in; `None` for bytes that are not
    /// UTF-8, for no difference, or when the budget was spent.
    pub(crate) text: Option<String>,
    /// Lines of the diff left out of `text`.
    pub(crate) omitted: usize,
    /// Not UTF-8, before or after: counts only (lines split at line
    /// feeds).
    pub(crate) binary: bool,
}

impl Diff {
    /// The change from `old` (`None`: no file) at `from` to `new`
    /// (`None`: removed) at `to`, shown within `budget`.
    pub(crate) fn of(
        from: &str,
        to: &str,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
        budget: &Budget,
    ) -> Diff {
        let deadline = budget.deadline();
        let (before, after) = (old.unwrap_or_default(), new.unwrap_or_default());
        let (Ok(a), Ok(b)) = (std::str::from_utf8(before), std::str::from_utf8(after)) else {
            let (a, b): (Vec<&[u8]>, Vec<&[u8]>) = (
                before.split_inclusive(|&c| c == b'\n').collect(),
                after.split_inclusive(|&c| c == b'\n').collect(),
            );
            let ops =
                similar::capture_diff_slices_deadline(Algorithm::Myers, &a, &b, Some(deadline));
            let (added, removed) = counts(&ops);
            return Diff {
                added,
                removed,
                binary: true,
                ..Diff::default()
            };
        };
        let diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .deadline(deadline)
            .diff_lines(a, b);
        let (added, removed) = counts(diff.ops());
        // A header is one line: a name read from the disk (a file `cp -r`
        // copied) may hold a line feed, shown escaped as git quotes it.
        let shown = crate::escape::escape_line;
        let from = match old {
            Some(_) => format!("a/{}", shown(from)),
            None => "/dev/null".to_owned(),
        };
        let to = match new {
            Some(_) => format!("b/{}", shown(to)),
            None => "/dev/null".to_owned(),
        };
        let mut out = Cut::new(budget);
        let mut udiff = diff.unified_diff();
        udiff.context_radius(3).missing_newline_hint(true);
        let mut line = String::new();
        for (i, hunk) in udiff.iter_hunks().enumerate() {
            if i == 0 {
                out.push(&format!("--- {from}\n"));
                out.push(&format!("+++ {to}\n"));
            }
            out.push(&format!("{}\n", hunk.header()));
            for change in hunk.iter_changes() {
                if out.full() {
                    out.omitted += 1 + usize::from(change.missing_newline());
                    continue;
                }
                line.clear();
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let _ = write!(line, "{sign}{}", change.value());
                if change.missing_newline() {
                    line.push_str("\n\\ No newline at end of file\n");
                }
                out.push(&line);
            }
        }
        let omitted = out.omitted;
        Diff {
            added,
            removed,
            text: out.finish(),
            omitted,
            binary: false,
        }
    }

    /// The change from a file too large to read whole, of `old_lines`
    /// lines, to `new`: every old line counts as removed and every new one
    /// as added, and the diff is left out.
    pub(crate) fn unread(old_lines: usize, new: Option<&[u8]>) -> Diff {
        let new = new.unwrap_or_default();
        let added = new.split_inclusive(|&c| c == b'\n').count();
        Diff {
            added,
            removed: old_lines,
            text: None,
            omitted: added + old_lines,
            binary: false,
        }
    }

    /// This change, then `next` (the same file written again later in the
    /// run): the counts add up, and the diffs follow each other.
    pub(crate) fn then(mut self, next: Diff) -> Diff {
        self.added += next.added;
        self.removed += next.removed;
        self.omitted += next.omitted;
        self.binary |= next.binary;
        self.text = match (self.text, next.text) {
            (Some(a), Some(b)) => Some(a + &b),
            (a, b) => a.or(b),
        };
        self
    }
}

/// Lines added and removed by `ops`.
fn counts(ops: &[DiffOp]) -> (usize, usize) {
    ops.iter().fold((0, 0), |(added, removed), op| {
        let (tag, old, new) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => (added, removed),
            DiffTag::Delete => (added, removed + old.len()),
            DiffTag::Insert => (added + new.len(), removed),
            DiffTag::Replace => (added + new.len(), removed + old.len()),
        }
    })
}

/// What a report's diffs may still show, and until when they are exact.
#[derive(Debug)]
pub(crate) struct Budget {
    lines: Cell<usize>,
    bytes: Cell<usize>,
    /// Set at the first diff.
    until: Cell<Option<Instant>>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            lines: Cell::new(REPORT_LINES),
            bytes: Cell::new(REPORT_BYTES),
            until: Cell::new(None),
        }
    }
}

impl Budget {
    /// When the next file's diff goes coarse.
    fn deadline(&self) -> Instant {
        let now = Instant::now();
        let until = *self.until.get().get_or_insert(now + REPORT_TIME);
        self.until.set(Some(until));
        until.min(now + FILE_TIME)
    }
}

/// A diff written line by line into what a file and the report may show.
struct Cut<'b> {
    budget: &'b Budget,
    text: String,
    lines: usize,
    /// Lines left out; once one is, every later one is too.
    omitted: usize,
}

impl<'b> Cut<'b> {
    fn new(budget: &'b Budget) -> Self {
        Cut {
            budget,
            text: String::new(),
            lines: 0,
            omitted: 0,
        }
    }

    fn full(&self) -> bool {
        self.omitted > 0
    }

    /// Adds `line` (with its line break; a missing newline's hint makes
    /// it two lines), or counts it as left out.
    fn push(&mut self, line: &str) {
        let n = line.matches('\n').count().max(1);
        let lines = FILE_LINES.min(self.budget.lines.get());
        let bytes = FILE_BYTES.min(self.budget.bytes.get());
        if self.full() || self.lines + n > lines || self.text.len() + line.len() > bytes {
            self.omitted += n;
            return;
        }
        self.lines += n;
        self.text.push_str(line);
    }

    /// The text shown, its lines and bytes taken from the report's budget.
    fn finish(self) -> Option<String> {
        let b = self.budget;
        b.lines.set(b.lines.get().saturating_sub(self.lines));
        b.bytes.set(b.bytes.get().saturating_sub(self.text.len()));
        // Headers alone show nothing.
        (self.lines > 2).then_some(self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_shows_a_change_of_lines() {
        let d = Diff::of(
            "a.txt",
            "a.txt",
            Some(b"one\ntwo\nthree\n"),
            Some(b"one\n2\nthree\nfour\n"),
            &Budget::default(),
        );
        assert_eq!((d.added, d.removed, d.omitted, d.binary), (2, 1, 0, false));
        assert_eq!(
            d.text.as_deref(),
            Some("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n")
        );
    }

    #[test]
    fn a_new_file_and_a_removed_one_diff_against_dev_null() {
        let budget = Budget::default();
        let new = Diff::of("n", "n", None, Some(b"x"), &budget);
        assert_eq!(
            new.text.as_deref(),
            Some("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n")
        );
        let gone = Diff::of("g", "g", Some(b"a\nb\n"), None, &budget);
        assert_eq!((gone.added, gone.removed), (0, 2));
        assert!(
            gone.text
                .is_some_and(|t| t.starts_with("--- a/g\n+++ /dev/null\n"))
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_get_counts_without_a_diff() {
        let d = Diff::of(
            "b.bin",
            "b.bin",
            Some(b"\xff\n1\n"),
            Some(b"\xff\n2\n"),
            &Budget::default(),
        );
        assert_eq!((d.added, d.removed, d.binary, d.text), (1, 1, true, None));
    }

    #[test]
    fn a_long_diff_is_cut_and_says_how_many_lines_were_left_out() {
        let new: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let budget = Budget::default();
        let d = Diff::of("big", "big", None, Some(new.as_bytes()), &budget);
        assert_eq!(d.added, 1000);
        let shown = d.text.as_deref().map_or(0, |t| t.lines().count());
        assert_eq!(shown, FILE_LINES);
        // 2 headers, a hunk header and 1000 lines in all.
        assert_eq!(shown + d.omitted, 1003);
        // The report's budget is shared: the files after it get less.
        let mut left = 0;
        for _ in 0..10 {
            let d = Diff::of("big", "big", None, Some(new.as_bytes()), &budget);
            left += d.text.map_or(0, |t| t.lines().count());
        }
        assert_eq!(left + FILE_LINES, REPORT_LINES);
    }

    #[test]
    fn one_huge_line_is_left_out_rather_than_shown_in_part() {
        let line = "x".repeat(FILE_BYTES * 2);
        let d = Diff::of(
            "min.js",
            "min.js",
            Some(b"a\n"),
            Some(line.as_bytes()),
            &Budget::default(),
        );
        assert_eq!((d.added, d.removed), (1, 1));
        let text = d.text.unwrap_or_default();
        assert!(text.len() < FILE_BYTES, "{}", text.len());
        assert!(d.omitted >= 1);
    }

    #[test]
    fn a_pathological_diff_stays_fast() {
        // Two long files with no line in common in the same places: Myers
        // at its worst, stopped by the deadline.
        let a: String = (0..200_000).map(|i| format!("{}\n", i % 7)).collect();
        let b: String = (0..200_000).map(|i| format!("{}\n", i % 11)).collect();
        let started = Instant::now();
        let d = Diff::of(
            "p",
            "p",
            Some(a.as_bytes()),
            Some(b.as_bytes()),
            &Budget::default(),
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(d.added > 0 && d.removed > 0);
    }
}
