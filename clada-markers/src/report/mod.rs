//! Reports as data (serde), and their renderings.
//!
//! [`ApplyReport`] is the outcome of `clada apply`: JSON is its
//! serialisation (PROTOCOL §9.2, field names fixed), [`text`] prints it as it
//! happens (§9.1) and [`xml`] renders the XML protocol's result element
//! (§9.3). [`CheckReport`] is the outcome of `clada check`. Positions are
//! given for people (line, column in Unicode scalar values) and programs
//! (byte offset).

mod check;
mod group;
mod json;
mod schema;
mod stream;
pub mod xml;

pub use json::JsonReport;
pub use schema::{Schema, apply_schema, check_schema};
pub use stream::{Origin, StreamReport};

// What needs the engine (feature `engine`): the report of a run built a
// unit at a time, what hears a run, the engine's outcomes in a report,
// their words and the text printer. Nothing else here does.
#[cfg(feature = "engine")]
mod build;
#[cfg(feature = "engine")]
pub(crate) mod listener;
#[cfg(feature = "engine")]
mod outcomes;
#[cfg(feature = "engine")]
pub mod text;
#[cfg(feature = "engine")]
mod words;
#[cfg(feature = "engine")]
pub(crate) use build::ApplyBuilder;
#[cfg(feature = "engine")]
pub(crate) use listener::Listener;
#[cfg(feature = "engine")]
pub(crate) use words::shift_stopped_at;

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Serialize;

pub use crate::status::{
    BlockStatus, Chosen, ChosenBy, Closest, Excerpt, IndentProblem, Indentation, Matched, Shift,
    TaskStatus,
};
pub use check::{CheckBuilder, CheckReport, CheckText, describe, render_check_text};

use crate::dialect::Dialect;
use crate::error_type::{Category, ErrorType};
use crate::syntax::{Count, OpName, Task};
use crate::syntax::{Diagnostic, Severity};
use crate::syntax::{LineIndex, Position};

/// The JSON object of `clada apply`. The blocks come before the totals:
/// the report is written as the run goes, each block once it is final
/// (PROTOCOL §9.2).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ApplyReport {
    pub version: u32,
    /// The edit format the document was read in (PROTOCOL §11).
    pub dialect: Dialect,
    pub blocks: Vec<BlockReport>,
    pub ok: bool,
    pub summary: ApplySummary,
    pub diagnostics: Vec<DiagnosticReport>,
    pub git: GitReport,
    /// What stopped the whole run before any task (a lock not acquired, a
    /// failed commit before the tasks).
    pub error: Option<ErrorReport>,
    pub duration_ms: u64,
    /// `--dry-run`: nothing was written, run or committed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// What the run changed (in a dry run: would change), path by path:
    /// what its tasks wrote, moved and removed, not what commands did.
    /// Absent when not asked for (`clada apply` in text without `--diff`).
    // Absent when `None`, never `null`: the schema says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<FileChange>")]
    pub changes: Option<Vec<FileChange>>,
    /// What to send again (PROTOCOL §9.1); in a dry run, what would be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Resend")]
    pub resend: Option<Resend>,
    /// How to take this run back (`clada undo -C ROOT`, PROTOCOL §7.5), or
    /// why it cannot be; absent when no task took effect, in a dry run and
    /// without clada's directories.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undo: Option<String>,
}

/// The tasks of a run by what an agent should do with them next, as task
/// numbers, and the edits no task came of (PROTOCOL §9.1). Every task, and
/// every edit refused before it became one, is in exactly one list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Resend {
    /// In effect: never send these again.
    pub applied: Vec<usize>,
    /// Edits whose change the file already has (`already_applied`): in
    /// effect, never send them again.
    pub already_applied: Vec<usize>,
    /// Failed, or in a malformed unit: fix them, then send them again.
    /// Task numbers first, then the edits no task came of (a marker
    /// written wrong, a format the dialect does not read), by where they
    /// start.
    pub failed: Vec<ResendEntry>,
    /// Commands nobody approved: the user must approve them (the error's
    /// `approve` line), then they can be sent again as written.
    pub needs_approval: Vec<usize>,
    /// Not carried out, or undone (`--atomic`): send them again as written.
    pub skipped: Vec<usize>,
}

/// An entry of `resend.failed`: a task by its number, or an edit no task
/// came of by its place, so that a model can tell which of its edits it
/// is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ResendEntry {
    Task(usize),
    Edit(UnreadEdit),
}

/// An edit no task came of: refused as a whole before anything ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnreadEdit {
    /// The 1-based line it starts on.
    pub line: usize,
    /// That line, as the document has it (at most 200 characters).
    pub first_line: String,
    /// Why: the error's kind (`malformed_marker`, `foreign_format`, …).
    pub kind: &'static str,
}

impl ResendEntry {
    /// The task's number, if it is one.
    pub fn task(&self) -> Option<usize> {
        match self {
            ResendEntry::Task(n) => Some(*n),
            ResendEntry::Edit(_) => None,
        }
    }
}

impl Resend {
    pub fn of(blocks: &[BlockReport]) -> Resend {
        let mut r = Resend::default();
        for b in blocks {
            for t in &b.tasks {
                r.add(b.status, t);
            }
        }
        r
    }

    /// Files task `t` of a block in state `block`.
    pub fn add(&mut self, block: BlockStatus, t: &TaskReport) {
        let error = t.error.as_deref();
        let list = match (block, t.status) {
            (BlockStatus::Malformed, _) => {
                self.failed.push(ResendEntry::Task(t.number));
                return;
            }
            (_, TaskStatus::Failed) if error.is_some_and(|e| e.approve.is_some()) => {
                &mut self.needs_approval
            }
            (_, TaskStatus::AlreadyApplied) => &mut self.already_applied,
            (_, TaskStatus::Failed) => {
                self.failed.push(ResendEntry::Task(t.number));
                return;
            }
            (_, TaskStatus::Success) if !t.rolled_back => &mut self.applied,
            _ => &mut self.skipped,
        };
        list.push(t.number);
    }

    /// The failed tasks' numbers.
    pub fn failed_tasks(&self) -> Vec<usize> {
        self.failed.iter().filter_map(ResendEntry::task).collect()
    }

    /// The edits no task came of.
    pub fn unread(&self) -> impl Iterator<Item = &UnreadEdit> {
        self.failed.iter().filter_map(|e| match e {
            ResendEntry::Edit(u) => Some(u),
            ResendEntry::Task(_) => None,
        })
    }

    /// Moves every task number on by `tasks` and every line by `lines`:
    /// the lists of one unit of a stream, in the stream.
    pub fn shifted(&self, tasks: usize, lines: usize) -> Resend {
        let on = |ns: &[usize]| ns.iter().map(|n| n + tasks).collect();
        Resend {
            applied: on(&self.applied),
            already_applied: on(&self.already_applied),
            failed: self
                .failed
                .iter()
                .map(|e| match e {
                    ResendEntry::Task(n) => ResendEntry::Task(n + tasks),
                    ResendEntry::Edit(u) => ResendEntry::Edit(UnreadEdit {
                        line: u.line + lines,
                        ..u.clone()
                    }),
                })
                .collect(),
            needs_approval: on(&self.needs_approval),
            skipped: on(&self.skipped),
        }
    }

    /// Adds `other`'s lists after this one's.
    pub fn extend(&mut self, other: Resend) {
        self.applied.extend(other.applied);
        self.already_applied.extend(other.already_applied);
        self.failed.extend(other.failed);
        self.needs_approval.extend(other.needs_approval);
        self.skipped.extend(other.skipped);
    }

    /// Whether every task is in effect: applied now, or before.
    pub fn is_done(&self) -> bool {
        self.failed.is_empty() && self.needs_approval.is_empty() && self.skipped.is_empty()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ApplySummary {
    pub blocks: usize,
    pub tasks: usize,
    /// Applied by this run.
    pub succeeded: usize,
    /// Applied before (`already_applied`): nothing to do, and no failure.
    /// Not counted in `succeeded`.
    pub already_applied: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Succeeded, then undone (`--atomic`); counted in `succeeded` too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rolled_back: usize,
}

/// Totals of several runs (the units of a stream) add up.
impl std::ops::AddAssign<&ApplySummary> for ApplySummary {
    fn add_assign(&mut self, other: &ApplySummary) {
        self.blocks += other.blocks;
        self.tasks += other.tasks;
        self.succeeded += other.succeeded;
        self.already_applied += other.already_applied;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.rolled_back += other.rolled_back;
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One path a run changed, or a dry run would change (PROTOCOL §9.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileChange {
    pub path: String,
    /// `created`, `modified`, `removed` or `moved`.
    pub change: &'static str,
    /// Where a moved file or directory is now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Lines added to the file (0 for what is not a file's contents).
    pub added: usize,
    /// Lines removed from the file (a removed file's lines).
    pub removed: usize,
    /// A unified diff of the file (`a/` and `b/` headers, 3 lines of
    /// context), as much of it as fits the report: a file shows at most
    /// 400 lines and 32 KiB of diff, a report 2000 lines and 128 KiB.
    /// Absent for what is not a file's text (`binary`), and when nothing of
    /// it fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Lines of the diff left out (it was cut, or the file held more than
    /// 16 MiB: then its old lines all count as removed and its new ones as
    /// added, and no diff is shown); absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
    /// The contents are not UTF-8: counts (of lines split at line feeds)
    /// without a diff.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct BlockReport {
    pub number: usize,
    /// `tasks` for a TASKS block, `standalone` for a task of its own.
    pub kind: &'static str,
    pub status: BlockStatus,
    /// The opener line's start and the closer line's end (PROTOCOL §9.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<Position>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<Position>,
    pub tasks: Vec<TaskReport>,
    /// What a rollback could not undo, or left in place (`--atomic`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct TaskReport {
    pub number: usize,
    pub op: OpName,
    /// The opener line's start and the closer line's end (PROTOCOL §9.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<Position>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<Position>,
    pub path: Option<String>,
    pub status: TaskStatus,
    pub message: String,
    /// A command's kept output (`null` for other operations).
    pub output: Option<String>,
    pub exit_code: Option<i32>,
    pub error: Option<Box<ErrorReport>>,
    /// For edits: the 1-based line of each replaced occurrence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<usize>>,
    /// For edits: how the search text was found (PROTOCOL §3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Matched>,
    /// For edits: how far the replacement was re-indented, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shift: Option<Shift>,
    /// For edits with a line hint: which of several candidates was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<Chosen>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Done, then undone because its unit (or, with `--atomic=document`,
    /// the document) failed: it left no trace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rolled_back: bool,
}

impl TaskReport {
    /// A report for `task` with nothing decided yet.
    pub fn of(task: &Task<'_>) -> Self {
        TaskReport {
            number: task.number,
            op: task.op_name(),
            start: None,
            end: None,
            path: task.display_path().map(str::to_owned),
            status: TaskStatus::Skipped,
            message: String::new(),
            output: None,
            exit_code: None,
            error: None,
            lines: None,
            matched: None,
            shift: None,
            chosen: None,
            duration_ms: None,
            rolled_back: false,
        }
    }
}

/// An error for programs: its type, category and retryability from the
/// protocol's table, and the facts that come with it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ErrorReport {
    #[serde(rename = "type")]
    pub kind: ErrorType,
    pub category: Category,
    pub retryable: bool,
    pub message: String,
    /// What to do about it, in one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Count>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<usize>>,
    /// First and last line of each occurrence (PROTOCOL §9.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<[usize; 2]>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest: Option<Closest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacement_present: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dangling_starts: Vec<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_lines: Vec<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end_lines: Vec<usize>,
    /// The occurrences found (the first five), each with a line either
    /// side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excerpts: Vec<Excerpt>,
    /// The occurrences were found by a pass beyond exact text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<Matched>,
    /// Why a match at another indentation was not applied: the three
    /// indentations (`indentation_mismatch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indentation: Option<Indentation>,
    /// Where the replacement already stands (the edit was applied there
    /// before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_lines: Vec<usize>,
    /// Where the search text occurs, but not as whole lines, which a
    /// line-based dialect's edit matches (PROTOCOL §11).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inside_lines: Vec<usize>,
    /// Where the search text occurs as whole lines but does not end the
    /// file, as `\ No newline at end of file` asks (PROTOCOL §11.8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_at_end: Vec<usize>,
    /// For `file_not_found`: the existing path most like the one named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest_path: Option<String>,
    /// For a command nobody approved: the `clada allow` line that approves
    /// exactly it, for the user to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approve: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os_error: Option<String>,
}

impl ErrorReport {
    pub fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        ErrorReport {
            kind,
            category: kind.category(),
            retryable: kind.retryable(),
            message: message.into(),
            hint: None,
            expected: None,
            found: None,
            lines: None,
            ranges: None,
            closest: None,
            replacement_present: None,
            dangling_starts: Vec::new(),
            start_lines: Vec::new(),
            end_lines: Vec::new(),
            excerpts: Vec::new(),
            matched: None,
            indentation: None,
            applied_lines: Vec::new(),
            inside_lines: Vec::new(),
            not_at_end: Vec::new(),
            closest_path: None,
            approve: None,
            os_error: None,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct GitReport {
    pub before: Option<String>,
    pub after: Option<String>,
    pub error: Option<String>,
    /// Why git was not used, when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ApplyReport {
    /// The report of a document that could not be read at all (too large,
    /// not UTF-8): nothing ran. `prefix` is the part of it that is valid
    /// UTF-8 ([`crate::syntax::valid_prefix`]), where positions are counted.
    pub fn unreadable(diagnostic: &Diagnostic, prefix: &str, duration_ms: u64) -> Self {
        ApplyReport {
            ok: false,
            diagnostics: vec![DiagnosticReport::unreadable(diagnostic, prefix)],
            duration_ms,
            resend: Some(Resend::default()),
            ..ApplyReport::empty(Dialect::Clada)
        }
    }

    /// A report of nothing, read in `dialect`.
    pub fn empty(dialect: Dialect) -> Self {
        ApplyReport {
            version: 1,
            dialect,
            blocks: Vec::new(),
            ok: true,
            summary: ApplySummary::default(),
            diagnostics: Vec::new(),
            git: GitReport::default(),
            error: None,
            duration_ms: 0,
            dry_run: false,
            changes: None,
            resend: None,
            undo: None,
        }
    }

    /// 0 when everything succeeded, 1 otherwise (PROTOCOL §7).
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.ok)
    }
}

/// A diagnostic for programs.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DiagnosticReport {
    pub severity: Severity,
    /// The protocol's error type.
    pub code: ErrorType,
    /// The stable name of the problem.
    pub kind: &'static str,
    // Borrowed, as the diagnostic's, when it quotes nothing of the
    // document.
    pub message: Cow<'static, str>,
    pub help: Option<Cow<'static, str>>,
    pub block: Option<usize>,
    pub task: Option<usize>,
    pub start: Position,
    pub end: Position,
    pub labels: Vec<LabelReport>,
    /// A replacement that repairs the document (PROTOCOL §2.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixReport>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FixReport {
    pub start: Position,
    pub end: Position,
    pub replacement: String,
    /// The whole lines the fix rewrites as they read once it is made:
    /// what the text report shows (PROTOCOL §2.1).
    pub lines: FixedLines,
}

/// Whole lines of a document as a fix leaves them.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct FixedLines {
    /// The first and last line the fix rewrites, 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// Their new text, without the last line feed.
    pub text: String,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct LabelReport {
    pub message: Cow<'static, str>,
    pub start: Position,
    pub end: Position,
}

impl DiagnosticReport {
    /// The diagnostic of a document that could not be read, positioned in
    /// `prefix`, its valid UTF-8 start: the span starts at the prefix's end
    /// (or before) and its end lies past it, one column on.
    pub fn unreadable(d: &Diagnostic, prefix: &str) -> Self {
        let lines = LineIndex::new(prefix);
        let start = lines.position(d.span.start);
        let end = Position {
            column: start.column + usize::from(d.span.end > d.span.start),
            offset: d.span.end,
            ..start
        };
        DiagnosticReport {
            start,
            end,
            ..DiagnosticReport::new(d, &lines)
        }
    }

    pub fn new(d: &Diagnostic, lines: &LineIndex<'_>) -> Self {
        DiagnosticReport {
            severity: d.severity,
            code: d.error_type(),
            kind: d.kind.name(),
            message: d.message.clone(),
            help: d.help.clone(),
            block: d.block,
            task: d.task,
            start: lines.position(d.span.start),
            end: lines.position(d.span.end),
            labels: d
                .labels
                .iter()
                .map(|l| LabelReport {
                    message: l.message.clone(),
                    start: lines.position(l.span.start),
                    end: lines.position(l.span.end),
                })
                .collect(),
            fix: d.fix.as_ref().map(|f| {
                let (start_line, end_line, text) = f.fixed_lines(lines.source(), lines);
                FixReport {
                    start: lines.position(f.span.start),
                    end: lines.position(f.span.end),
                    replacement: f.replacement.clone(),
                    lines: FixedLines {
                        start_line,
                        end_line,
                        text,
                    },
                }
            }),
        }
    }
}
