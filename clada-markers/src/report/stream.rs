//! The report of a stream (`clada apply --stream`, `clada watch`,
//! PROTOCOL §11.5–11.6): each unit is parsed and run on its own, its
//! report numbered and placed in its own text. [`StreamReport`] adds the
//! units' reports up and moves their numbers and positions to the
//! stream's, in one place, as JSON Lines events; the caller only prints
//! them. It reads nothing and runs nothing.

use serde_json::{Value, json};

use super::{ApplyReport, ApplySummary, Resend};
use crate::syntax::{Position, Severity};

/// Where a unit's text starts in the stream: its byte offset and 1-based
/// line (a [`crate::stream::Chunk`]'s `offset` and `line`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub offset: usize,
    pub line: usize,
}

impl Origin {
    /// `p`, a position in the unit's text, in the stream.
    fn place(self, p: Position) -> Position {
        Position {
            line: p.line + self.line - 1,
            column: p.column,
            offset: p.offset + self.offset,
        }
    }
}

/// What a stream has done so far: the totals of its units' reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamReport {
    /// The units' summaries added up (`blocks` counts the units).
    pub summary: ApplySummary,
    /// Errors among the units' diagnostics.
    pub errors: usize,
    /// Whether every unit so far was `ok`.
    pub ok: bool,
    /// The units' resend lists, in the stream's numbers and lines.
    pub resend: Resend,
}

impl Default for StreamReport {
    fn default() -> Self {
        StreamReport::new()
    }
}

impl StreamReport {
    /// A stream that has done nothing (and so nothing wrong).
    pub fn new() -> Self {
        StreamReport {
            summary: ApplySummary::default(),
            errors: 0,
            ok: true,
            resend: Resend::default(),
        }
    }

    /// Adds `report`, the run of the next unit, whose text starts at `at`
    /// in the stream; returns its JSON Lines events: a `diagnostic` event
    /// for each diagnostic, then a `task` event for each task, with the
    /// stream's block and task numbers and positions.
    pub fn add(&mut self, report: &ApplyReport, at: Origin) -> Vec<Value> {
        let mut events = Vec::new();
        self.each(report, at, |e| events.push(e));
        events
    }

    /// [`StreamReport::add`], each event handed to `emit` as it is made:
    /// a unit with many diagnostics or tasks never holds all its events
    /// at once (a JSON value is many times the text it says).
    pub fn each(&mut self, report: &ApplyReport, at: Origin, mut emit: impl FnMut(Value)) {
        let (blocks, tasks) = (self.summary.blocks, self.summary.tasks);
        for d in &report.diagnostics {
            let mut d = d.clone();
            d.start = at.place(d.start);
            d.end = at.place(d.end);
            d.block = d.block.map(|b| b + blocks);
            d.task = d.task.map(|t| t + tasks);
            for l in &mut d.labels {
                l.start = at.place(l.start);
                l.end = at.place(l.end);
            }
            if let Some(f) = &mut d.fix {
                f.start = at.place(f.start);
                f.end = at.place(f.end);
                f.lines.start_line += at.line - 1;
                f.lines.end_line += at.line - 1;
            }
            emit(event("diagnostic", &d));
        }
        for b in &report.blocks {
            for t in &b.tasks {
                let mut t = t.clone();
                t.number += tasks;
                #[cfg(feature = "engine")]
                {
                    t.message = crate::report::shift_stopped_at(&t.message, tasks);
                }
                t.start = t.start.map(|p| at.place(p));
                t.end = t.end.map(|p| at.place(p));
                let mut v = event("task", &t);
                v["block"] = json!(b.number + blocks);
                emit(v);
            }
        }
        if let Some(r) = &report.resend {
            self.resend
                .extend(r.shifted(tasks, at.line.saturating_sub(1)));
        }
        self.summary += &report.summary;
        self.errors += report
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        self.ok &= report.ok;
    }

    /// The last event: the totals.
    pub fn summary_event(&self) -> Value {
        let s = &self.summary;
        json!({
            "event": "summary",
            "ok": self.ok,
            "blocks": s.blocks,
            "tasks": s.tasks,
            "succeeded": s.succeeded,
            "failed": s.failed,
            "skipped": s.skipped,
            "errors": self.errors,
            "already_applied": s.already_applied,
            "resend": self.resend,
        })
    }
}

/// `value` as an object with `"event": name` added.
fn event(name: &str, value: &impl serde::Serialize) -> Value {
    let mut v = serde_json::to_value(value).unwrap_or(Value::Null);
    v["event"] = json!(name);
    v
}

#[cfg(all(test, feature = "engine"))]
mod tests {
    use super::*;

    /// The report of `text` run alone in a fresh directory.
    fn run(text: &str) -> ApplyReport {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("a.txt"), "one\n").expect("a.txt written");
        let doc = crate::parse(text);
        crate::Apply::new(dir.path())
            .expect("the root opens")
            .git(None)
            .run(&doc)
    }

    #[test]
    fn numbers_and_positions_are_the_streams() {
        let mut stream = StreamReport::new();
        let first = run("<<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n");
        let events = stream.add(
            &first,
            Origin {
                offset: 18,
                line: 2,
            },
        );
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["event"], "task");
        assert_eq!(
            (events[0]["number"].as_u64(), events[0]["block"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(events[0]["start"]["line"], 2);
        assert_eq!(events[0]["start"]["offset"], 18);
        // The second unit fails its search: its diagnostic-free report has
        // a failed task, numbered after the first unit's.
        let second = run("<<<<<<< SEARCH path=\"a.txt\"\nnone\n=======\nx\n>>>>>>> REPLACE\n");
        let events = stream.add(
            &second,
            Origin {
                offset: 100,
                line: 9,
            },
        );
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["number"], 2);
        assert_eq!(events[0]["block"], 2);
        assert_eq!(events[0]["status"], "failed");
        assert_eq!(events[0]["start"]["line"], 9);
        assert_eq!(events[0]["start"]["offset"], 100);
        // A malformed unit: its diagnostic comes first, placed and numbered.
        let third = run("<<<<<<< WRITE path=\"c.txt\"\nc\n");
        let events = stream.add(
            &third,
            Origin {
                offset: 200,
                line: 20,
            },
        );
        assert_eq!(events[0]["event"], "diagnostic");
        assert_eq!(events[0]["block"], 3);
        assert!(events[0]["start"]["line"].as_u64() >= Some(20));
        assert!(events[0]["start"]["offset"].as_u64() >= Some(200));
        assert_eq!(events.last().map(|e| &e["event"]), Some(&json!("task")));
        assert_eq!(
            (
                stream.summary.blocks,
                stream.summary.tasks,
                stream.summary.succeeded
            ),
            (3, 3, 1)
        );
        assert_eq!(stream.summary.failed + stream.summary.skipped, 2);
        assert_eq!(stream.errors, 1);
        assert!(!stream.ok);
        let summary = stream.summary_event();
        assert_eq!(summary["event"], "summary");
        assert_eq!(
            (summary["blocks"].as_u64(), summary["errors"].as_u64()),
            (Some(3), Some(1))
        );
        assert_eq!(summary["ok"], false);
        // What to send again, in the stream's numbers.
        assert_eq!(summary["resend"]["applied"], json!([1]));
        assert_eq!(summary["resend"]["failed"], json!([2, 3]));
    }

    /// Events handed out one at a time are those `add` gives, and the
    /// totals move alike.
    #[test]
    fn each_event_is_handed_out_as_add_gives_it() {
        let report =
            run("<<<<<<< WRITE path=\"c.txt\"\nc\n<<<<<<< WRITE path=\"d.txt\"\nd\n>>>>>>> END\n");
        let at = Origin { offset: 7, line: 3 };
        let mut one = StreamReport::new();
        let mut other = one.clone();
        let events = one.add(&report, at);
        let mut handed = Vec::new();
        other.each(&report, at, |e| handed.push(e));
        assert!(events.len() >= 2, "{events:?}");
        assert_eq!(handed, events);
        assert_eq!(one, other);
    }

    #[test]
    fn summaries_add_up() {
        let mut total = ApplySummary::default();
        let one = ApplySummary {
            blocks: 1,
            tasks: 3,
            succeeded: 2,
            already_applied: 1,
            failed: 1,
            skipped: 0,
            rolled_back: 1,
        };
        total += &one;
        total += &one;
        assert_eq!(
            total,
            ApplySummary {
                blocks: 2,
                tasks: 6,
                succeeded: 4,
                already_applied: 2,
                failed: 2,
                skipped: 0,
                rolled_back: 2,
            }
        );
    }
}
