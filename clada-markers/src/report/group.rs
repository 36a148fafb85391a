//! Grouping for the text reports (PROTOCOL §9.1): a problem repeated over
//! hundreds of units is shown once in full, then counted with its first
//! places; runs of numbers are joined. JSON lists everything.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use crate::syntax::Cursor;
use crate::syntax::{Diagnostic, DiagnosticKind};

/// How many places of a repeated problem are named.
const PLACES_SHOWN: usize = 5;

/// A distinct problem: its kind, message and help.
type Problem = (DiagnosticKind, Cow<'static, str>, Option<Cow<'static, str>>);

/// The diagnostics seen so far, by distinct problem: the same kind, message
/// and help.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    seen: HashMap<Problem, usize>,
    groups: Vec<Group>,
}

#[derive(Debug)]
struct Group {
    kind: DiagnosticKind,
    message: Cow<'static, str>,
    /// Lines of the repeats (not of the first, shown in full), the first
    /// few only.
    lines: Vec<usize>,
    repeats: usize,
}

impl Repeats {
    /// The diagnostics of `ds` to show in full: those whose problem was not
    /// seen before. The others are counted, with their lines from `at`.
    pub(crate) fn first_seen(&mut self, ds: &[Diagnostic], at: &mut Cursor<'_>) -> Vec<Diagnostic> {
        let mut fresh = Vec::new();
        for d in ds {
            let key = (d.kind, d.message.clone(), d.help.clone());
            match self.seen.get(&key) {
                Some(&g) => {
                    let group = &mut self.groups[g];
                    group.repeats += 1;
                    if group.lines.len() < PLACES_SHOWN {
                        group.lines.push(at.position(d.span.start).line);
                    }
                }
                None => {
                    self.seen.insert(key, self.groups.len());
                    self.groups.push(Group {
                        kind: d.kind,
                        message: d.message.clone(),
                        lines: Vec::new(),
                        repeats: 0,
                    });
                    fresh.push(d.clone());
                }
            }
        }
        fresh
    }

    /// One line per repeated problem, or nothing when none repeated.
    pub(crate) fn summary(&self) -> String {
        let mut out = String::new();
        for g in self.groups.iter().filter(|g| g.repeats > 0) {
            let times = if g.repeats == 1 { "time" } else { "times" };
            let more = g.repeats - g.lines.len();
            let places = numbers(&g.lines);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "[{}] {}: {} more {times}, at line{} {places}{tail}",
                g.kind,
                crate::escape::escape_line(&g.message),
                g.repeats,
                if g.lines.len() == 1 { "" } else { "s" },
            );
        }
        out
    }
}

/// `3`, `1-4, 7, 9-10`: numbers in increasing order with runs joined.
pub(crate) fn numbers(ns: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ns.len() {
        let mut j = i;
        while j + 1 < ns.len() && ns[j + 1] == ns[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ns[i].to_string()
        } else {
            format!("{}-{}", ns[i], ns[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Span;

    #[test]
    fn numbers_join_runs() {
        assert_eq!(numbers(&[3]), "3");
        assert_eq!(numbers(&[1, 2, 3, 4, 7, 9, 10]), "1-4, 7, 9-10");
        assert_eq!(numbers(&[]), "");
    }

    #[test]
    fn a_problem_is_shown_once_and_counted_after() {
        let src = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let d = |line: usize, msg: &'static str| {
            Diagnostic::new(
                DiagnosticKind::MissingAttribute,
                Span::empty(2 * (line - 1)),
                msg,
            )
        };
        let mut r = Repeats::default();
        let mut at = Cursor::new(src);
        let shown = r.first_seen(&[d(1, "needs path"), d(2, "other")], &mut at);
        assert_eq!(shown.len(), 2);
        for line in 3..=8 {
            assert!(r.first_seen(&[d(line, "needs path")], &mut at).is_empty());
        }
        assert_eq!(
            r.summary(),
            "[missing_attribute] needs path: 6 more times, at lines 3-7 and 1 more\n"
        );
    }
}
