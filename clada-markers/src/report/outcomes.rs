//! What the engine's outcomes become in a report: a failed task's
//! [`ErrorReport`] with the hint that says what to send instead, and a
//! change of the tree as a [`FileChange`] with its counts and diff. The only
//! part of this module's parent that needs the engine.

use super::{ErrorReport, FileChange, IndentProblem, Indentation, Matched};
use crate::engine::TaskError;
use crate::engine::seek::Mismatch;
use crate::error_type::ErrorType;
use crate::syntax::Count;

impl FileChange {
    /// The report of one change of the tree.
    pub(crate) fn of(change: crate::engine::view::Change) -> FileChange {
        use crate::engine::view::Change;
        let plain = |path: String, change: &'static str| FileChange {
            path,
            change,
            from: None,
            added: 0,
            removed: 0,
            diff: None,
            omitted: 0,
            binary: false,
        };
        match change {
            Change::File {
                path,
                created,
                diff,
                ..
            } => FileChange {
                added: diff.added,
                removed: diff.removed,
                diff: diff.text,
                omitted: diff.omitted,
                binary: diff.binary,
                ..plain(path, if created { "created" } else { "modified" })
            },
            Change::Removed { path, diff, .. } => {
                let diff = diff.unwrap_or_default();
                FileChange {
                    added: diff.added,
                    removed: diff.removed,
                    diff: diff.text,
                    omitted: diff.omitted,
                    binary: diff.binary,
                    ..plain(path, "removed")
                }
            }
            Change::Dir { path } => plain(path, "created"),
            Change::Moved { from, to } => FileChange {
                from: Some(from),
                ..plain(to, "moved")
            },
        }
    }
}

impl ErrorReport {
    pub(crate) fn from_task_error(e: TaskError) -> Self {
        let mut r = ErrorReport::new(e.error_type(), e.message().to_owned());
        r.hint = default_hint(e.error_type());
        match e {
            TaskError::File { os, closest, .. } => {
                r.os_error = os.map(String::from);
                if let Some(c) = closest {
                    r.hint = Some(format!(
                        "{c} exists: did you mean it? (check the path; WRITE creates a file)"
                    ));
                    r.closest_path = Some(c.into());
                }
            }
            // The command alone, ready to paste (PROTOCOL §6).
            TaskError::NotApproved { approve, .. } => {
                r.hint = Some(approve.clone().into());
                r.approve = Some(approve.into());
            }
            TaskError::Mismatch { mismatch, .. } => {
                r.hint = Some(mismatch_hint(&mismatch));
                let Mismatch {
                    expected,
                    found,
                    lines,
                    ranges,
                    closest,
                    replacement_present,
                    already_applied: _,
                    dangling_starts,
                    start_lines,
                    end_lines,
                    closest_skipped: _,
                    matched,
                    indentation,
                    applied_lines,
                    excerpts,
                    passes_stopped: _,
                    inside_lines,
                    not_at_end,
                } = *mismatch;
                r.inside_lines = inside_lines;
                r.not_at_end = not_at_end;
                r.matched = matched;
                r.indentation = indentation;
                r.applied_lines = applied_lines;
                r.excerpts = excerpts;
                r.expected = Some(expected);
                r.found = Some(found);
                r.lines = Some(lines);
                r.ranges = Some(ranges.into_iter().map(|(a, b)| [a, b]).collect());
                r.closest = closest;
                r.replacement_present = replacement_present;
                r.dangling_starts = dangling_starts;
                r.start_lines = start_lines;
                r.end_lines = end_lines;
            }
            TaskError::Other { hint, .. } => {
                if let Some(h) = hint {
                    r.hint = Some(h.into());
                }
            }
        }
        r
    }
}

fn default_hint(kind: ErrorType) -> Option<String> {
    let h = match kind {
        ErrorType::FileNotFound => "check the path; WRITE creates a file",
        ErrorType::FileExists => {
            "the file exists already: send a change of its contents instead, or remove it first"
        }
        ErrorType::SymlinkNotAllowed => {
            "clada never reads or writes through a symbolic link; name the real path"
        }
        ErrorType::InvalidUtf8 => "clada edits UTF-8 text only",
        ErrorType::AlreadyApplied => {
            "nothing to do: the file already has this change; do not send this task again"
        }
        _ => return None,
    };
    Some(h.to_owned())
}

fn list_lines(lines: &[usize]) -> String {
    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
    shown.join(", ")
}

/// One line that tells an agent how to fix its edit.
fn mismatch_hint(m: &Mismatch) -> String {
    let at = |lines: &[usize]| {
        if lines.len() == 1 {
            format!("line {}", lines[0])
        } else {
            format!("lines {}", list_lines(lines))
        }
    };
    if let Some(i) = &m.indentation {
        return indentation_hint(i);
    }
    if m.already_applied && m.found > 0 {
        return format!(
            "nothing to do: the file already has this change at {}; do not send this edit again",
            at(&m.applied_lines)
        );
    }
    if !m.applied_lines.is_empty() && m.found > 0 {
        return format!(
            "the replacement already stands at {}; add context so that the search text matches only where the edit is still to be made",
            at(&m.applied_lines)
        );
    }
    if m.found > 0 {
        let more = if m.found > m.lines.len() { " …" } else { "" };
        let how = match m.matched {
            Some(Matched::Whitespace) => " (ignoring white space)",
            Some(Matched::Trailing) => " (ignoring white space at line ends)",
            Some(Matched::Trimmed) => " (ignoring white space at both line ends)",
            Some(Matched::Unicode) => " (with Unicode punctuation read as ASCII)",
            Some(Matched::Exact) | None => "",
        };
        let fix = match m.expected {
            Count::Exactly(n) if m.found > n.get() => {
                format!(
                    "add context to the search text, or set count=\"{}\" or count=\"all\"",
                    m.found
                )
            }
            _ => format!("set count=\"{}\", or check the search text", m.found),
        };
        return format!("matches{how} at {}{more}; {fix}", at(&m.lines));
    }
    let mut parts = Vec::new();
    if !m.dangling_starts.is_empty() {
        parts.push(format!(
            "the start text at {} has no end text after it",
            at(&m.dangling_starts)
        ));
    } else if !m.end_lines.is_empty() && m.start_lines.is_empty() {
        parts.push(format!(
            "the end text occurs at {} but the start text does not occur",
            at(&m.end_lines)
        ));
    }
    if m.already_applied {
        return "nothing to do: the file already has this change; do not send this edit again"
            .to_owned();
    }
    if m.replacement_present == Some(true) {
        // Not proven (PROTOCOL §8): the model knows whether it is.
        let place = if m.applied_lines.is_empty() {
            String::new()
        } else {
            format!(" at {}", at(&m.applied_lines))
        };
        parts.push(format!(
            "the replacement text already stands{place}: if that is this change, drop the edit"
        ));
    }
    if !m.inside_lines.is_empty() {
        parts.push(format!(
            "the text occurs inside a line at {}: a diff's or a block's lines match whole lines of the file; copy each line whole",
            at(&m.inside_lines)
        ));
    }
    if !m.not_at_end.is_empty() {
        parts.push(format!(
            "the text occurs at {}, but `\\ No newline at end of file` says it ends the file, and the file does not end there; leave that marker out unless the hunk's last line is the file's",
            at(&m.not_at_end)
        ));
    }
    if let Some(c) = &m.closest {
        let place = if c.start_line == c.end_line {
            format!("line {}", c.start_line)
        } else {
            format!("lines {}-{}", c.start_line, c.end_line)
        };
        let what = c.difference.as_deref().unwrap_or("copy the text exactly");
        parts.push(format!(
            "closest text at {place} ({:.0}% alike): {what}",
            c.similarity * 100.0
        ));
    }
    if m.closest_skipped {
        parts.push("the closest text was not looked for (earlier failed edits in this run took the time for it)".to_owned());
    }
    if m.passes_stopped {
        parts.push("the white-space tier stopped looking: too many lines of the file are like the search text's".to_owned());
    }
    if parts.is_empty() || m.closest_skipped {
        parts.push("the search text does not occur in the file; read the file again and copy the text exactly".to_owned());
    }
    parts.join("; ")
}

/// What to do about a match at another indentation that was not applied.
fn indentation_hint(i: &Indentation) -> String {
    let say = |t: &str| super::words::indentation_words(t);
    let (f, s, r) = (say(&i.file), say(&i.search), say(&i.replacement));
    let line = i.line;
    match i.problem {
        IndentProblem::Replacement => format!(
            "the file indents line {line} by {f}, the search by {s} and the replacement by {r}: clada re-indents a replacement only when it starts indented like the search; write the search and the replacement with the file's indentation"
        ),
        IndentProblem::Uneven => format!(
            "the search's lines are not shifted alike: the file indents line {line} by {f}, the search by {s}, and its other lines differ otherwise; copy the lines with the file's indentation"
        ),
        IndentProblem::Characters => format!(
            "the file indents line {line} with {f}, the search with {s}: write the search text with the file's indentation characters"
        ),
        IndentProblem::Shallow => format!(
            "the file indents line {line} by {f}, the search by {s}, and a line of the replacement has less indentation than that difference; write the replacement with the file's indentation"
        ),
        IndentProblem::Occurrences => {
            "the occurrences are indented differently, so the replacement would be written differently at each: send one edit per occurrence, with context that makes each unique".to_owned()
        }
    }
}
