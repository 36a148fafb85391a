//! The text report of `clada apply` (PROTOCOL §9.1), printed as things happen.
//!
//! [`TextPrinter`] is an [`Observer`]: it prints a block's header when the
//! block starts (with the diagnostics of a malformed block under it), each
//! task's line when the task ends, command output as it comes or after the
//! task, and the summary at the end. Write errors are ignored: a reader that
//! goes away must not stop a run half way.

use std::io::Write;

#[cfg(feature = "engine")]
use crate::engine::{Observer, TaskOutcome};
use crate::escape::{escape_controls as esc, escape_line as line_of};
use crate::report::group::{Repeats, numbers};
use crate::report::{
    ApplyReport, BlockReport, BlockStatus, FileChange, GitReport, Resend, TaskReport, TaskStatus,
};
use crate::syntax::{Cursor, LineIndex};
use crate::syntax::{Diagnostic, Renderer};
use crate::syntax::{Task, Unit};

/// Diffs of at most this many lines are shown in the default output.
const SHORT_DIFF: usize = 10;

/// A summary line's tasks in effect (applied now or before), those of
/// them applied before, its tasks, its block's status, and whether a
/// rollback took its changes back.
type Tally = (usize, usize, usize, BlockStatus, bool);

/// How much to say about a failure (`--error-detail`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// The error line and at most one hint line.
    #[default]
    Minimal,
    /// Also the task's source text and the diff to the closest text.
    Full,
    /// Also spans, timings and OS error detail.
    Debug,
}

/// What to do with command output (`--output-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExecOutput {
    /// Print each line as it comes.
    #[default]
    Stream,
    /// Print a task's output when it ends.
    Buffer,
    /// Print none.
    Silent,
}

/// Prints the text report while a document is applied.
pub struct TextPrinter<'d, W: Write> {
    out: W,
    source: &'d str,
    detail: Detail,
    exec: ExecOutput,
    color: bool,
    blocks_seen: usize,
    /// Excerpts come from one line index of the document, built once.
    renderer: Renderer<'d>,
    /// Problems already shown in full, and where they repeat.
    repeats: Repeats,
    at: Cursor<'d>,
    /// Whether the block being reported is malformed: its tasks are not
    /// listed one by one after its diagnostics.
    malformed: bool,
    /// The summary's lines so far: the first and last of consecutive
    /// blocks with the same line (`Blocks 2-700`), the line's tasks that
    /// succeeded, its tasks and its block's status, and a block's note.
    lines: Vec<(usize, usize, Tally, Option<String>)>,
    /// The `clada allow` line of each command that needs approval, by
    /// task.
    approvals: Vec<(usize, String)>,
    /// The document's line index, for `--error-detail debug`: built once.
    index: Option<LineIndex<'d>>,
    /// Whether a TASKS block has both applied and unapplied tasks.
    split: bool,
    /// Whether the blocks' reports came as the run went ([`Listener`]): the
    /// report given to [`TextPrinter::finish`] then adds none.
    heard_blocks: bool,
    /// The blocks, tasks and lines before the document in a stream: its
    /// blocks and tasks are numbered in the stream, as JSON Lines number
    /// them ([`TextPrinter::numbered_from`]).
    before: Before,
    /// How many blocks had been seen when the last `=== Document ===`
    /// section began: problems that come before another block belong to
    /// it, under the one header.
    document_at: Option<usize>,
    /// Whether the document is a unit of a stream ([`TextPrinter::numbered_from`]).
    stream: bool,
    /// Whether what a real run changed is shown (`--diff`); what a dry run
    /// would change always is.
    diffs: bool,
}

/// Blocks, tasks and lines of a stream before the unit printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Before {
    blocks: usize,
    tasks: usize,
    lines: usize,
}

impl<W: Write> std::fmt::Debug for TextPrinter<'_, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextPrinter")
            .field("detail", &self.detail)
            .finish_non_exhaustive()
    }
}

impl<'d, W: Write> TextPrinter<'d, W> {
    /// `name` is how diagnostics call the document; `color` turns on ANSI
    /// colours (the caller decides: a terminal, and no `NO_COLOR`).
    pub fn new(
        out: W,
        source: &'d str,
        name: &str,
        detail: Detail,
        exec: ExecOutput,
        color: bool,
    ) -> Self {
        TextPrinter {
            out,
            source,
            detail,
            exec,
            color,
            blocks_seen: 0,
            heard_blocks: false,
            renderer: Renderer::new(source, name, color),
            repeats: Repeats::default(),
            at: Cursor::new(source),
            malformed: false,
            lines: Vec::new(),
            approvals: Vec::new(),
            index: None,
            split: false,
            before: Before::default(),
            document_at: None,
            stream: false,
            diffs: false,
        }
    }

    /// Shows what a real run changed, a line per path with its counts and
    /// each file's diff (`--diff`), when its report has it.
    pub fn diffs(mut self, on: bool) -> Self {
        self.diffs = on;
        self
    }

    /// Numbers the document's blocks and tasks after `blocks` blocks and
    /// `tasks` tasks, and its lines after `lines` lines: a unit of a
    /// stream or a watched file, said as the stream's, never `Block 1`
    /// and `task-1` again for each (PROTOCOL §11.5).
    pub fn numbered_from(mut self, blocks: usize, tasks: usize, lines: usize) -> Self {
        self.stream = true;
        self.before = Before {
            blocks,
            tasks,
            lines,
        };
        self
    }

    /// A task's report, numbered in the stream.
    fn renumbered(&self, mut r: TaskReport) -> TaskReport {
        let tasks = self.before.tasks;
        if tasks == 0 {
            return r;
        }
        r.number += tasks;
        r.message = crate::report::shift_stopped_at(&r.message, tasks);
        r
    }

    /// The writer, once the report is printed.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn diagnostics(&mut self, ds: &[Diagnostic]) {
        if ds.is_empty() {
            return;
        }
        let text = self.renderer.render(ds);
        let _ = self.out.write_all(text.as_bytes());
    }

    /// Adds `b`'s line to the summary: every block's report comes here,
    /// in order, as the run hands it out ([`Listener::block`]) or, for a
    /// report of the whole run, from [`TextPrinter::finish`].
    fn record(&mut self, b: &BlockReport) {
        let ok = b.tasks.iter().filter(|t| t.status.holds()).count();
        let before = b
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::AlreadyApplied)
            .count();
        // A block whose changes a rollback took back gets no ✓.
        let rolled_back = b.tasks.iter().any(|t| t.rolled_back);
        let line = (ok, before, b.tasks.len(), b.status, rolled_back);
        let (number, tasks) = (b.number + self.before.blocks, self.before.tasks);
        self.approvals.extend(b.tasks.iter().filter_map(|t| {
            let approve = t.error.as_ref()?.approve.as_ref()?;
            Some((t.number + tasks, approve.clone()))
        }));
        match self.lines.last_mut() {
            Some((_, last, same, None)) if *same == line && b.note.is_none() => *last = number,
            _ => self.lines.push((number, number, line, b.note.clone())),
        }
        // A TASKS block with applied and unapplied tasks must not be sent
        // whole again.
        let applied = |t: &&TaskReport| {
            b.status != BlockStatus::Malformed && t.status.holds() && !t.rolled_back
        };
        self.split |= b.tasks.iter().any(|t| applied(&t)) && !b.tasks.iter().all(|t| applied(&t));
    }

    /// Prints the summary; call once, after the run.
    pub fn finish(&mut self, report: &ApplyReport) {
        if !self.heard_blocks {
            for b in &report.blocks {
                self.record(b);
            }
        }
        if let Some(e) = &report.error {
            let _ = writeln!(
                self.out,
                "{} Error: {} ({})",
                self.paint("31", "✗"),
                e.kind,
                line_of(&e.message)
            );
        }
        if let Some(changes) = &report.changes
            && (report.dry_run || self.diffs)
        {
            self.changes(changes, report.dry_run);
        }
        let repeated = self.repeats.summary();
        if !repeated.is_empty() {
            let _ = writeln!(
                self.out,
                "\n{}",
                self.paint("1", "=== Repeated problems ===")
            );
            let _ = self.out.write_all(repeated.as_bytes());
        }
        let s = &report.summary;
        let _ = writeln!(self.out, "\n{}", self.paint("1", "=== Summary ==="));
        let rolled = if s.rolled_back > 0 {
            format!(" ({} rolled back)", s.rolled_back)
        } else {
            String::new()
        };
        // A dry run says what would happen, throughout.
        let succeeded = if report.dry_run {
            "would succeed"
        } else {
            "succeeded"
        };
        // A unit of a stream is not the whole: its line says so.
        let whole = if !self.stream { "Overall" } else { "This unit" };
        let _ = writeln!(
            self.out,
            "{whole}: {}/{} tasks {succeeded}{}{rolled}{}",
            s.succeeded + s.already_applied,
            s.tasks,
            before_words(s.already_applied, s.tasks),
            refused_words(report)
        );
        for (first, last, (ok, before, tasks, status, rolled_back), note) in
            std::mem::take(&mut self.lines)
        {
            // Blocks with the same line share it: the counts are each
            // block's, not their sum.
            let (name, each) = if first == last {
                (format!("Block {first}"), "")
            } else {
                (format!("Blocks {first}-{last}"), " in each")
            };
            let mark = match status {
                BlockStatus::Success if rolled_back => {
                    format!("{} rolled back", self.paint("33", "↺"))
                }
                BlockStatus::Success => self.paint("32", "✓"),
                BlockStatus::Failed => self.paint("31", "✗"),
                BlockStatus::Malformed => {
                    format!("{} (malformed, not run)", self.paint("31", "✗"))
                }
            };
            let before = before_words(before, tasks);
            let _ = writeln!(
                self.out,
                "{name}: {ok}/{tasks} tasks {succeeded}{each}{before} {mark}"
            );
            if let Some(note) = note {
                let _ = writeln!(self.out, "  note: {}", line_of(&note));
            }
        }
        let g = &report.git;
        if let Some(line) = git_words(g) {
            let _ = writeln!(self.out, "Git: {line}");
        }
        if let Some(e) = &g.error {
            // A failure before the tasks was said already, as the run's error.
            if report.error.is_none() {
                let _ = writeln!(
                    self.out,
                    "Git: {} ({})",
                    self.paint("31", "✗ Error: git_operation_failed"),
                    line_of(e)
                );
            }
        } else if let Some(n) = &g.note {
            let _ = writeln!(self.out, "Git: {}", line_of(n));
        }
        if let Some(undo) = &report.undo {
            // The command names the root; the text says it without the path.
            let line = if undo.starts_with("clada undo") {
                "`clada undo` on this root takes this run back".to_owned()
            } else {
                line_of(undo).into_owned()
            };
            let _ = writeln!(self.out, "Undo: {line}");
        }
        // A dry run applied nothing: nothing to send again yet.
        if let Some(r) = report.resend.as_ref().filter(|_| !report.dry_run) {
            let r = r.shifted(self.before.tasks, self.before.lines);
            self.resend(&r, self.split);
        }
        let _ = self.out.flush();
    }

    /// What to send again (PROTOCOL §9.1): the end of the summary.
    fn resend(&mut self, r: &Resend, split: bool) {
        // Nothing to resend: the summary has said so.
        if r.is_done() {
            return;
        }
        let _ = writeln!(self.out, "Resend:");
        let failed = r.failed_tasks();
        let lines = [
            (&r.applied, "applied, never send again"),
            (
                &r.already_applied,
                "already applied before, never send again",
            ),
            (&failed, "failed, fix and send again"),
        ];
        for (tasks, what) in lines {
            if !tasks.is_empty() {
                let _ = writeln!(self.out, "  {}: {what}", task_ranges(tasks));
            }
        }
        // An edit no task came of, by its place: the model knows it by
        // its first line.
        for u in r.unread() {
            let _ = writeln!(
                self.out,
                "  the edit at line {} (`{}`): not read as a task ({}), fix and send again",
                u.line,
                line_of(&u.first_line),
                u.kind
            );
        }
        if !r.needs_approval.is_empty() {
            let _ = writeln!(
                self.out,
                "  {}: need the user's approval, then send again as written:",
                task_ranges(&r.needs_approval)
            );
            let approvals = std::mem::take(&mut self.approvals);
            let mut said: Vec<&str> = Vec::new();
            for n in &r.needs_approval {
                if let Some((_, line)) = approvals.iter().find(|(t, _)| t == n)
                    && !said.contains(&line.as_str())
                {
                    let _ = writeln!(self.out, "    {}", esc(line));
                    said.push(line);
                }
            }
        }
        if !r.skipped.is_empty() {
            let _ = writeln!(
                self.out,
                "  {}: not applied, send again as written",
                task_ranges(&r.skipped)
            );
        }
        if split {
            let _ = writeln!(
                self.out,
                "  send only these tasks, in a new document: a TASKS block sent whole again would apply its applied tasks twice"
            );
        }
    }

    /// What the run changed, or a dry run would change: a line per path
    /// with the lines added and removed, and a diff per file.
    fn changes(&mut self, changes: &[FileChange], dry_run: bool) {
        let title = if dry_run {
            "=== Dry run: nothing was written, run or committed ==="
        } else {
            "=== Changed ==="
        };
        let _ = writeln!(self.out, "\n{}", self.paint("1", title));
        if changes.is_empty() {
            let none = if dry_run {
                "No file would change."
            } else {
                "No file changed."
            };
            let _ = writeln!(self.out, "{none}");
        }
        for c in changes {
            let counts = if c.binary {
                format!(" (+{} -{}, binary: no diff)", c.added, c.removed)
            } else if c.added + c.removed > 0 {
                format!(" (+{} -{})", c.added, c.removed)
            } else {
                String::new()
            };
            let _ = match &c.from {
                Some(from) => writeln!(
                    self.out,
                    "{} {} -> {}{counts}",
                    c.change,
                    line_of(from),
                    line_of(&c.path)
                ),
                None => writeln!(self.out, "{} {}{counts}", c.change, line_of(&c.path)),
            };
            let diff = esc(c.diff.as_deref().unwrap_or_default());
            for line in diff.lines() {
                let painted = if line.starts_with("+++") || line.starts_with("---") {
                    self.paint("1", line)
                } else if line.starts_with('+') {
                    self.paint("32", line)
                } else if line.starts_with('-') {
                    self.paint("31", line)
                } else if line.starts_with("@@") {
                    self.paint("36", line)
                } else {
                    line.to_owned()
                };
                let _ = writeln!(self.out, "{painted}");
            }
            if c.omitted > 0 {
                let s = if c.omitted == 1 { "" } else { "s" };
                let _ = writeln!(
                    self.out,
                    "… {} more line{s} of diff left out (a report shows at most {} lines of diff a file, {} in all)",
                    c.omitted,
                    crate::engine::diff::FILE_LINES,
                    crate::engine::diff::REPORT_LINES,
                );
            }
        }
    }

    fn exec_line(&mut self, task: usize, line: &str) {
        let _ = writeln!(self.out, "[task-{task}:exec] {}", esc(line));
    }
}

#[cfg(feature = "engine")]
impl<W: Write> super::Listener for TextPrinter<'_, W> {
    fn block(&mut self, report: BlockReport) {
        self.heard_blocks = true;
        self.record(&report);
    }
}

#[cfg(feature = "engine")]
impl<W: Write> Observer for TextPrinter<'_, W> {
    fn loose_diagnostics(&mut self, diagnostics: &[Diagnostic]) {
        // A problem shown before is only counted, as in a block.
        let diagnostics = self.repeats.first_seen(diagnostics, &mut self.at);
        if diagnostics.is_empty() {
            return;
        }
        // Still the section begun before: no second header.
        if self.document_at != Some(self.blocks_seen) {
            if self.blocks_seen > 0 {
                let _ = writeln!(self.out);
            }
            let _ = writeln!(self.out, "{}", self.paint("1", "=== Document ==="));
            self.document_at = Some(self.blocks_seen);
        }
        self.diagnostics(&diagnostics);
        if self.blocks_seen == 0 {
            let _ = writeln!(self.out);
        }
        let _ = self.out.flush();
    }

    fn block_started(&mut self, unit: &Unit<'_>, diagnostics: &[Diagnostic], runnable: bool) {
        self.blocks_seen += 1;
        self.malformed = !runnable;
        let ds = self.repeats.first_seen(diagnostics, &mut self.at);
        // A malformed block whose every problem was shown before is only
        // counted (PROTOCOL §9.1).
        if !runnable && ds.is_empty() && !diagnostics.is_empty() {
            return;
        }
        if self.blocks_seen > 1 {
            let _ = writeln!(self.out);
        }
        let header = format!("=== Block {} ===", unit.number() + self.before.blocks);
        let _ = writeln!(self.out, "{}", self.paint("1", &header));
        self.diagnostics(&ds);
        let _ = self.out.flush();
    }

    fn output_line(&mut self, task: usize, line: &str) {
        if self.exec == ExecOutput::Stream {
            self.exec_line(task + self.before.tasks, line);
            let _ = self.out.flush();
        }
    }

    fn task_finished(&mut self, task: &Task<'_>, outcome: &TaskOutcome) {
        let r = &self.renumbered(TaskReport::of_outcome(task, outcome));
        // The block's diagnostics said why its tasks do not run.
        if self.malformed {
            return;
        }
        if self.exec == ExecOutput::Buffer
            && let Some(output) = &r.output
        {
            for line in output.lines() {
                self.exec_line(r.number, line);
            }
        }
        let n = r.number;
        match r.status {
            TaskStatus::Success if r.rolled_back => {
                let _ = writeln!(
                    self.out,
                    "[task-{n}] {} {}",
                    self.paint("33", "↺"),
                    line_of(&r.message)
                );
            }
            TaskStatus::Success => {
                let _ = writeln!(
                    self.out,
                    "[task-{n}] {} {}",
                    self.paint("32", "✓"),
                    line_of(&r.message)
                );
            }
            TaskStatus::Skipped => {
                let _ = writeln!(
                    self.out,
                    "[task-{n}] {} {}",
                    self.paint("33", "⊘"),
                    line_of(&r.message)
                );
            }
            TaskStatus::AlreadyApplied => {
                let _ = writeln!(
                    self.out,
                    "[task-{n}] {} {}",
                    self.paint("32", "✓"),
                    line_of(&r.message)
                );
                if let Some(h) = r.error.as_ref().and_then(|e| e.hint.as_ref()) {
                    let _ = writeln!(self.out, "  hint: {}", line_of(h));
                }
            }
            TaskStatus::Failed => self.failure(task, r),
        }
        if self.detail == Detail::Debug
            && let Some(ms) = r.duration_ms
        {
            let _ = writeln!(self.out, "  took: {ms} ms");
        }
    }
}

impl<W: Write> TextPrinter<'_, W> {
    fn failure(&mut self, task: &Task<'_>, r: &TaskReport) {
        let n = r.number;
        let cross = self.paint("31", "✗");
        let Some(e) = &r.error else {
            let _ = writeln!(
                self.out,
                "[task-{n}] {cross} Error: {}",
                line_of(&r.message)
            );
            return;
        };
        let line = match &r.path {
            Some(p) if !e.message.contains(p.as_str()) => {
                format!("Error: {} in {p} ({})", e.kind, e.message)
            }
            _ => format!("Error: {} ({})", e.kind, e.message),
        };
        let _ = writeln!(self.out, "[task-{n}] {cross} {}", line_of(&line));
        if let Some(code) = r.exit_code {
            let _ = writeln!(self.out, "  exit code: {code}");
        }
        if let Some(h) = &e.hint {
            let _ = writeln!(self.out, "  hint: {}", line_of(h));
        }
        // Each occurrence with a line either side: what to add as context
        // without reading the file again.
        for x in &e.excerpts {
            let _ = writeln!(self.out, "  line {}:", x.line);
            for (k, l) in x.text.iter().enumerate() {
                let _ = writeln!(self.out, "    {:>5} | {}", x.start_line + k, esc(l));
            }
        }
        if self.detail == Detail::Minimal {
            // A short diff says more than any hint (PROTOCOL §9.1).
            if let Some(c) = &e.closest
                && c.diff.lines().count() <= SHORT_DIFF
            {
                for l in esc(&c.diff).lines() {
                    let _ = writeln!(self.out, "  {l}");
                }
            }
            return;
        }
        let source = self.source.get(task.span.range()).unwrap_or_default();
        let _ = writeln!(self.out, "  task source:");
        for l in esc(source).lines() {
            let _ = writeln!(self.out, "  | {l}");
        }
        if let Some(c) = &e.closest {
            let place = if c.start_line == c.end_line {
                format!("line {}", c.start_line)
            } else {
                format!("lines {}-{}", c.start_line, c.end_line)
            };
            let _ = writeln!(
                self.out,
                "  closest text ({place}, {:.0}% alike):",
                c.similarity * 100.0
            );
            for l in esc(&c.diff).lines() {
                let _ = writeln!(self.out, "  {l}");
            }
        }
        if self.detail == Detail::Debug {
            let source = self.source;
            let idx = self.index.get_or_insert_with(|| LineIndex::new(source));
            let t = task;
            let (a, b) = (idx.position(t.span.start), idx.position(t.span.end));
            let _ = writeln!(
                self.out,
                "  span: bytes {}..{} (line {} column {} to line {} column {})",
                t.span.start, t.span.end, a.line, a.column, b.line, b.column
            );
            if let Some(os) = &e.os_error {
                let _ = writeln!(self.out, "  os error: {}", line_of(os));
            }
        }
    }
}

/// What a run refused beside its tasks, after the count of those that
/// succeeded: the summary never reads as all done when something was not
/// (PROTOCOL §9.1). Nothing when the run is `ok`, or a task's failure or
/// the run's error says it already.
fn refused_words(report: &ApplyReport) -> String {
    let s = &report.summary;
    if report.ok || s.succeeded + s.already_applied < s.tasks || report.error.is_some() {
        return String::new();
    }
    let unread = report.resend.as_ref().map_or(0, |r| r.unread().count());
    let errors = report
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::syntax::Severity::Error)
        .count();
    match (unread, errors) {
        (0, 0) => String::new(),
        (1, _) => "; 1 edit was refused, not read as a task ✗".to_owned(),
        (0, 1) => "; the document has an error ✗".to_owned(),
        (0, n) => format!("; the document has {n} errors ✗"),
        (n, _) => format!("; {n} edits were refused, not read as tasks ✗"),
    }
}

/// ` (1 of them already applied before)` after a count of tasks that
/// succeeded, when some of them had nothing to do; else nothing.
/// How many of `tasks` tasks were applied before: `(1 of them …)` says
/// there were others, so a single task, or every one, is said otherwise.
fn before_words(already: usize, tasks: usize) -> String {
    match (already, tasks) {
        (0, _) => String::new(),
        (1, 1) => " (already applied before)".to_owned(),
        (a, t) if a == t => " (all already applied before)".to_owned(),
        (1, _) => " (1 of them already applied before)".to_owned(),
        (n, _) => format!(" ({n} of them already applied before)"),
    }
}

/// `task 3`, `tasks 1-4, 7, 9-10`.
fn task_ranges(tasks: &[usize]) -> String {
    let noun = if tasks.len() == 1 { "task" } else { "tasks" };
    format!("{noun} {}", numbers(tasks))
}

/// What the commits of a run were, in words (PROTOCOL §9.1): the hashes
/// alone do not say which commit holds whose changes. `None` when nothing
/// was committed (a failure or a note says why, on a line of its own).
fn git_words(g: &GitReport) -> Option<String> {
    let short = |s: &str| s.chars().take(7).collect::<String>();
    let before = g.before.as_deref().map(|h| {
        format!(
            "committed your uncommitted changes of the files it changes as {} before applying",
            short(h)
        )
    });
    let after = match (g.after.as_deref(), &g.error) {
        (Some(h), _) => Some(format!("committed the changes as {}", short(h))),
        // The failure is said on its own line.
        (None, Some(_)) => None,
        (None, None) => before
            .as_ref()
            .map(|_| "the tasks changed nothing to commit".to_owned()),
    };
    let before = before.or_else(|| {
        after
            .as_ref()
            .map(|_| "the files it changes had no uncommitted changes".to_owned())
    });
    match (before, after) {
        (Some(b), Some(a)) => Some(format!("{b}; {a}")),
        (Some(b), None) => Some(b),
        (None, _) => None,
    }
}

#[cfg(test)]
mod git_words_tests {
    use super::{GitReport, git_words};

    fn git(before: Option<&str>, after: Option<&str>, error: Option<&str>) -> GitReport {
        GitReport {
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
            error: error.map(str::to_owned),
            note: None,
        }
    }

    #[test]
    fn commits_are_said_in_words() {
        let (b, a) = (Some("abc1234ffff"), Some("def5678ffff"));
        assert_eq!(
            git_words(&git(b, a, None)).as_deref(),
            Some(
                "committed your uncommitted changes of the files it changes as abc1234 before applying; committed the changes as def5678"
            )
        );
        assert_eq!(
            git_words(&git(None, a, None)).as_deref(),
            Some(
                "the files it changes had no uncommitted changes; committed the changes as def5678"
            )
        );
        assert_eq!(
            git_words(&git(b, None, None)).as_deref(),
            Some(
                "committed your uncommitted changes of the files it changes as abc1234 before applying; the tasks changed nothing to commit"
            )
        );
        assert_eq!(
            git_words(&git(b, None, Some("x"))).as_deref(),
            Some(
                "committed your uncommitted changes of the files it changes as abc1234 before applying"
            )
        );
        assert_eq!(git_words(&git(None, None, None)), None);
    }
}
