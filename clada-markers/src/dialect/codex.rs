//! codex's patches (`*** Begin Patch` … `*** End Patch`), read as clada
//! TASKS blocks (PROTOCOL §11.2).
//!
//! ~~~text
//! *** Begin Patch
//! *** Add File: docs/hello.txt
//! +Hello
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -    print("Hi")
//! +    print("Hello")
//! *** Delete File: old.txt
//! *** End Patch
//! ~~~
//!
//! A patch is one TASKS block: codex applies a patch as a unit. `Add File`
//! is a WRITE, `Delete File` a REMOVE, each hunk of `Update File` a SEARCH
//! of its context and removed lines (one occurrence, found with codex's
//! passes: the edit carries [`Policy::Codex`]) replaced by its context and
//! added lines, then `Move to` a MOVE. Marker lines may be padded with
//! white space, as codex's parser allows; a hunk that only adds lines after
//! an `@@ anchor` line replaces the anchor line by itself and the added
//! lines; with no anchor it appends to the file. An `@@` anchor is not
//! searched for, and `*** End of File` does not pin a hunk to the end (both
//! only guide codex's own search). As codex: hunks match whole lines, a
//! hunk ending in an empty line is looked for again without it when not
//! found, and blank lines between hunks are passed over.

use super::lines::{Line, lines};
use std::borrow::Cow;

use crate::syntax::Attribute;
use crate::syntax::Span;
use crate::syntax::TaskKind;
use crate::syntax::{Block, BlockRules, Count, Document, Matching, Op, Policy, Task, Unit};
use crate::syntax::{Context, ParseOptions};
use crate::syntax::{Diagnostic, DiagnosticKind as K};

const BEGIN: &str = "*** Begin Patch";
pub(crate) const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Whether a line opens a patch.
pub(crate) fn is_begin(line: &str) -> bool {
    line.trim() == BEGIN
}

/// Whether `line` names a file operation (`*** Add File: `, `*** Update
/// File: `, `*** Delete File: `).
pub(crate) fn is_file_operation(line: &str) -> bool {
    let t = line.trim_start();
    [ADD, UPDATE, DELETE].iter().any(|op| t.starts_with(op))
}

/// How codex finds a hunk's lines: whole lines, by its passes, again
/// without a last empty line when they are not found (PROTOCOL §11.2).
fn codex_matching() -> Matching {
    Matching {
        blank_end_optional: true,
        ..Matching::lines(Policy::Codex, None)
    }
}

/// Where `part`, a slice of `line`'s text, starts in the document: found
/// by address (a search could land on an earlier copy of the same text,
/// as `A` in `*** Add File: A`), by search when it is not such a slice.
fn place(line: Line<'_>, part: &str) -> usize {
    let (base, at) = (line.text.as_ptr() as usize, part.as_ptr() as usize);
    let within = at >= base && at + part.len() <= base + line.text.len();
    let offset = if within && !part.is_empty() {
        at - base
    } else {
        line.text.find(part).unwrap_or(0)
    };
    line.start + offset
}

/// Reads `source` as codex patches: each patch a TASKS block, everything
/// outside patches prose.
pub(crate) fn parse(source: &str, options: ParseOptions) -> Document<'_> {
    let cx = Context::new(source, options);
    let lines = lines(source);
    let mut units = Vec::new();
    let mut diagnostics = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_begin(lines[i].text) {
            i += 1;
            continue;
        }
        let (block, next) = patch(&cx, &lines, i, &mut diagnostics);
        units.push(block);
        i = next;
    }
    number(&mut units, &mut diagnostics);
    if units.is_empty() {
        diagnostics.push(
            Diagnostic::new(
                K::NoTasks,
                Span::empty(0),
                "the document has no codex patch",
            )
            .with_help("a patch starts with `*** Begin Patch` and ends with `*** End Patch`"),
        );
    }
    crate::syntax::sort_in_document_order(&mut diagnostics);
    Document {
        source,
        units,
        diagnostics,
    }
}

/// One patch from its `*** Begin Patch` line at `begin`; returns the block
/// and the line after it.
fn patch<'a>(
    cx: &Context<'a>,
    lines: &[Line<'a>],
    begin: usize,
    out: &mut Vec<Diagnostic>,
) -> (Unit<'a>, usize) {
    let opener = lines[begin].span();
    let mut tasks = Vec::new();
    let mut i = begin + 1;
    let mut closer = None;
    while i < lines.len() {
        let line = lines[i];
        let t = line.text.trim();
        if t == END {
            closer = Some(line.span());
            i += 1;
            break;
        }
        if is_begin(t) {
            break;
        }
        if let Some(path) = t.strip_prefix(ADD.trim_end()).map(str::trim) {
            let mut j = i + 1;
            let added = |l: &&Line<'_>| l.text.starts_with('+');
            let size = lines[j..]
                .iter()
                .take_while(added)
                .map(|l| l.text.len())
                .sum();
            let mut content = String::with_capacity(size);
            while let Some(l) = lines.get(j).filter(added) {
                content.push_str(&l.text[1..]);
                content.push('\n');
                j += 1;
            }
            let span = Span::new(line.start, lines[j - 1].span().end);
            let op = Op::Write {
                path: path.into(),
                append: false,
                content: Cow::Owned(content),
            };
            tasks.push(task(cx, TaskKind::Write, span, line, path, op, out));
            i = j;
        } else if let Some(path) = t.strip_prefix(DELETE.trim_end()).map(str::trim) {
            let op = Op::Remove { path: path.into() };
            tasks.push(task(cx, TaskKind::Remove, line.span(), line, path, op, out));
            i += 1;
        } else if let Some(path) = t.strip_prefix(UPDATE.trim_end()).map(str::trim) {
            i = update(cx, lines, i, path, &mut tasks, out);
        } else if t.is_empty() {
            i += 1;
        } else {
            out.push(
                Diagnostic::new(
                    K::MalformedMarker,
                    line.span(),
                    format!("`{t}` is not a line of a patch here"),
                )
                .with_help("a patch holds `*** Add File: PATH`, `*** Delete File: PATH` and `*** Update File: PATH` sections, then `*** End Patch`"),
            );
            i += 1;
        }
    }
    if closer.is_none() {
        out.push(
            Diagnostic::new(
                K::UnclosedOpener,
                opener,
                "this patch has no `*** End Patch` line",
            )
            .with_help("end the patch with `*** End Patch`"),
        );
    }
    let end = closer.map_or_else(
        || {
            lines
                .get(i.saturating_sub(1))
                .map_or(opener.end, |l| l.span().end)
        },
        |c| c.end,
    );
    // What the list did not fill is given back.
    tasks.shrink_to_fit();
    let block = Block {
        number: 0,
        span: Span::new(opener.start, end),
        opener,
        fence: crate::syntax::MIN_FENCE,
        attributes: Vec::new(),
        version: None,
        tasks,
        closer,
        // codex deletes and moves files, not directories, and ends every
        // file it updates with a line break.
        rules: BlockRules {
            files_only: true,
            final_line_break: true,
            ..BlockRules::default()
        },
    };
    (Unit::Block(block), i)
}

/// An `*** Update File:` section from line `at`: a SEARCH per hunk, then a
/// MOVE. Returns the line after it.
fn update<'a>(
    cx: &Context<'a>,
    lines: &[Line<'a>],
    at: usize,
    path: &'a str,
    tasks: &mut Vec<Task<'a>>,
    out: &mut Vec<Diagnostic>,
) -> usize {
    let header = lines[at];
    let mut i = at + 1;
    let mut to = None;
    if let Some(l) = lines.get(i)
        && let Some(new) = l.text.trim().strip_prefix(MOVE.trim_end())
    {
        to = Some((new.trim(), *l));
        i += 1;
    }
    let mut hunks = 0;
    // The file's path is checked once, for its first hunk; the others share
    // its place (and are told what it was told).
    let mut checked = None;
    while let Some(first) = lines.get(i) {
        let t = first.text.trim_start();
        if t.starts_with("***") && t.trim() != END_OF_FILE {
            break;
        }
        // Blank lines between hunks (and after `*** End of File`) are
        // passed over, as codex's parser does: no hunk starts with one.
        if t.is_empty() {
            i += 1;
            continue;
        }
        // A hunk: an optional `@@` line, then ' ', '-', '+' lines (an empty
        // line is empty context), up to the next `@@` or section.
        let mut anchor = None;
        let start = i;
        if let Some(rest) = t.strip_prefix("@@") {
            let rest = rest.trim();
            anchor = (!rest.is_empty()).then(|| rest.to_owned());
            i += 1;
        }
        // The exact size of each text, so each is allocated once.
        let (mut old_size, mut new_size) = (0, 0);
        for l in &lines[i..] {
            let t = l.text.trim_start();
            if t.starts_with("@@") || t.starts_with("***") {
                break;
            }
            let n = l.text.len().max(1);
            match l.text.as_bytes().first() {
                Some(b'+') => new_size += n,
                Some(b'-') => old_size += n,
                Some(b' ') | None => {
                    old_size += n;
                    new_size += n;
                }
                Some(_) => break,
            }
        }
        let (mut old, mut new) = (
            String::with_capacity(old_size),
            String::with_capacity(new_size),
        );
        let mut changed = false;
        while let Some(l) = lines.get(i) {
            let text = l.text;
            if text.trim_start().starts_with("@@") || text.trim_start().starts_with("***") {
                if text.trim() == END_OF_FILE {
                    i += 1;
                }
                break;
            }
            match text.as_bytes().first() {
                Some(b'+') => {
                    new.push_str(&text[1..]);
                    new.push('\n');
                    changed = true;
                }
                Some(b'-') => {
                    old.push_str(&text[1..]);
                    old.push('\n');
                    changed = true;
                }
                Some(b' ') => {
                    old.push_str(&text[1..]);
                    old.push('\n');
                    new.push_str(&text[1..]);
                    new.push('\n');
                }
                None => {
                    old.push('\n');
                    new.push('\n');
                }
                Some(_) => {
                    out.push(
                        Diagnostic::new(
                            K::MalformedMarker,
                            l.span(),
                            "a hunk line starts with ` ` (context), `-` (removed) or `+` (added)",
                        )
                        .with_help("prefix every line of the hunk, context lines with one space"),
                    );
                    changed = false;
                    old.clear();
                    i += 1;
                    break;
                }
            }
            i += 1;
        }
        if i == start {
            break;
        }
        let span = Span::new(lines[start].start, lines[i - 1].span().end);
        if !changed && old.is_empty() {
            continue;
        }
        hunks += 1;
        let p: crate::syntax::TaskPath<'_> = path.into();
        let (kind, op) = match (old.is_empty(), anchor) {
            (false, _) => (
                TaskKind::Search,
                Op::Edit {
                    path: p,
                    count: Count::default(),
                    matching: codex_matching(),
                    search: Cow::Owned(old),
                    replace: Cow::Owned(new),
                },
            ),
            // Only additions: after the anchor line, or at the end.
            (true, Some(anchor)) => (
                TaskKind::Search,
                Op::Edit {
                    path: p,
                    count: Count::default(),
                    matching: codex_matching(),
                    search: Cow::Owned(format!("{anchor}\n")),
                    replace: Cow::Owned(format!("{anchor}\n{new}")),
                },
            ),
            (true, None) => (
                TaskKind::Write,
                Op::Write {
                    path: p,
                    append: true,
                    content: Cow::Owned(new),
                },
            ),
        };
        super::push_tight(
            tasks,
            task_of(cx, kind, span, header, path, op, out, &mut checked),
        );
    }
    if let Some((to, line)) = to {
        let op = Op::Move {
            from: path.into(),
            to: to.into(),
        };
        let mut t = task(cx, TaskKind::Move, line.span(), header, path, op, out);
        let at = place(line, to);
        let attr = Attribute::implied("to", Cow::Borrowed(to), Span::new(at, at + to.len()));
        let to_place = crate::syntax::check_path_attribute(cx, &attr, out);
        if out.iter().any(|d| d.is_error() && d.span == attr.span) {
            t.op = None;
        }
        if let Some(Op::Move { to, .. }) = &mut t.op {
            to.set_place(to_place);
        }
        t.attributes.push(attr);
        tasks.push(t);
    } else if hunks == 0 {
        super::push_tight(
            out,
            Diagnostic::new(
                K::MissingSection,
                header.span(),
                format!("the update of `{path}` has no hunk"),
            )
            .with_help(
                "follow `*** Update File:` with `@@` and lines starting with ` `, `-` or `+`",
            ),
        );
    }
    i
}

/// A task acting on `path`, named on `header`; its operation is dropped
/// when the path is refused.
fn task<'a>(
    cx: &Context<'a>,
    kind: TaskKind,
    span: Span,
    header: Line<'_>,
    path: &'a str,
    op: Op<'a>,
    out: &mut Vec<Diagnostic>,
) -> Task<'a> {
    task_of(cx, kind, span, header, path, op, out, &mut None)
}

/// What checking a path found: its place, and the diagnostics said of it.
type Checked = (Option<crate::syntax::Location>, Vec<Diagnostic>);

/// [`task`], with the check of the path made once for the tasks of one
/// header (`checked`: what the first found, given again to the others).
#[allow(clippy::too_many_arguments)]
fn task_of<'a>(
    cx: &Context<'a>,
    kind: TaskKind,
    span: Span,
    header: Line<'_>,
    path: &'a str,
    op: Op<'a>,
    out: &mut Vec<Diagnostic>,
    checked: &mut Option<Checked>,
) -> Task<'a> {
    let at = place(header, path);
    let name = if kind == TaskKind::Move {
        "from"
    } else {
        "path"
    };
    let attr = Attribute::implied(name, Cow::Borrowed(path), Span::new(at, at + path.len()));
    let before = out.len();
    let path_place = if let Some((place, said)) = checked {
        out.extend(said.iter().cloned());
        place.clone()
    } else {
        let place = crate::syntax::check_path_attribute(cx, &attr, out);
        if path.is_empty() {
            out.push(
                Diagnostic::new(
                    K::MissingAttribute,
                    header.span(),
                    "this section names no file",
                )
                .with_help("write the file's path after the colon"),
            );
        }
        *checked = Some((place.clone(), out[before..].to_vec()));
        place
    };
    let refused = out[before..].iter().any(Diagnostic::is_error);
    let mut op = op;
    if let Some(p) = op.first_path_mut() {
        p.set_place(path_place);
    }
    Task {
        number: 0,
        block: 0,
        kind,
        fence: crate::syntax::MIN_FENCE,
        span,
        opener: header.span(),
        attributes: vec![attr],
        sections: Vec::new(),
        closer: None,
        op: (!refused).then_some(op),
    }
}

/// Numbers units and tasks, and files each diagnostic under the unit and
/// task it lies in (units are in document order and do not overlap: each
/// is found by binary search, so that many of both stay cheap). Shared by
/// the front ends that lower to blocks and standalone tasks.
pub(crate) fn number(units: &mut [Unit<'_>], diagnostics: &mut [Diagnostic]) {
    let mut task_no = 0;
    for (n, unit) in units.iter_mut().enumerate() {
        match unit {
            Unit::Block(b) => {
                b.number = n + 1;
                for t in &mut b.tasks {
                    task_no += 1;
                    t.number = task_no;
                    t.block = n + 1;
                }
            }
            Unit::Task(t) => {
                task_no += 1;
                t.number = task_no;
                t.block = n + 1;
            }
        }
    }
    for d in diagnostics.iter_mut() {
        let at = d.span.start;
        let i = units.partition_point(|u| u.span().start <= at);
        let Some(u) = i
            .checked_sub(1)
            .map(|i| &units[i])
            .filter(|u| at <= u.span().end)
        else {
            continue;
        };
        d.block = Some(u.number());
        // Tasks are mostly in document order (a codex MOVE or a diff's
        // REMOVE, named in the header, comes last): a binary search, then
        // a look at each when it misses.
        let tasks = u.tasks();
        let holds = |t: &&Task<'_>| t.span.start <= at && at <= t.span.end;
        let k = tasks.partition_point(|t| t.span.start <= at);
        d.task = k
            .checked_sub(1)
            .map(|k| &tasks[k])
            .filter(holds)
            .or_else(|| tasks.iter().find(holds))
            .or_else(|| {
                tasks
                    .iter()
                    .find(|t| t.opener.start <= at && at <= t.opener.end)
            })
            .map(|t| t.number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(src: &str) -> (Vec<Op<'_>>, Vec<Diagnostic>) {
        let doc = parse(src, ParseOptions::default());
        (
            doc.tasks().filter_map(|t| t.op.clone()).collect(),
            doc.diagnostics,
        )
    }

    #[test]
    fn every_section_becomes_a_task_of_one_block() {
        let src = "Here:\n*** Begin Patch\n*** Add File: hello.txt\n+Hello\n+world\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello\")\n*** Delete File: old.txt\n*** End Patch\n";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(
            ops,
            vec![
                Op::Write {
                    path: "hello.txt".into(),
                    append: false,
                    content: "Hello\nworld\n".into()
                },
                Op::Edit {
                    path: "src/app.py".into(),
                    count: Count::default(),
                    matching: codex_matching(),
                    search: "    print(\"Hi\")\n".into(),
                    replace: "    print(\"Hello\")\n".into(),
                },
                Op::Move {
                    from: "src/app.py".into(),
                    to: "src/main.py".into()
                },
                Op::Remove {
                    path: "old.txt".into()
                },
            ]
        );
        let doc = parse(src, ParseOptions::default());
        assert_eq!(doc.units.len(), 1);
        assert!(doc.units[0].is_block());
    }

    #[test]
    fn padded_markers_context_and_additions_after_an_anchor() {
        let src = "  *** Begin Patch\n*** Update File: a.py\n@@ class A:\n+    x = 1\n@@\n a\n-b\n\n+c\n  *** End Patch  \n";
        let (ops, ds) = ops(src);
        assert!(ds.is_empty(), "{ds:?}");
        assert_eq!(
            ops,
            vec![
                Op::Edit {
                    path: "a.py".into(),
                    count: Count::default(),
                    matching: codex_matching(),
                    search: "class A:\n".into(),
                    replace: "class A:\n    x = 1\n".into(),
                },
                Op::Edit {
                    path: "a.py".into(),
                    count: Count::default(),
                    matching: codex_matching(),
                    search: "a\nb\n\n".into(),
                    replace: "a\n\nc\n".into(),
                },
            ]
        );
    }

    #[test]
    fn a_path_span_points_at_the_path_not_an_earlier_copy() {
        let src = "*** Begin Patch\n*** Add File: A\n+x\n*** Update File: d\n*** Move to: e\n@@\n-x\n+y\n*** End Patch\n";
        let doc = parse(src, ParseOptions::default());
        let spans: Vec<&str> = doc
            .tasks()
            .flat_map(|t| &t.attributes)
            .map(|a| &src[a.span.range()])
            .collect();
        assert_eq!(spans, ["A", "d", "d", "e"]);
        let at = src.find(": A").map(|i| i + 2);
        assert_eq!(doc.tasks().next().map(|t| t.attributes[0].span.start), at);
    }

    #[test]
    fn bad_patches_are_diagnosed() {
        let (_, ds) = ops("*** Begin Patch\n*** Update File: a.py\n*** Frobnicate: x\n");
        let kinds: Vec<K> = ds.iter().map(|d| d.kind).collect();
        assert!(kinds.contains(&K::UnclosedOpener), "{kinds:?}");
        assert!(kinds.contains(&K::MissingSection), "{kinds:?}");
        assert!(kinds.contains(&K::MalformedMarker), "{kinds:?}");
        let (ops, ds) = ops("*** Begin Patch\n*** Add File: /etc/x\n+y\n*** End Patch\n");
        assert!(ops.is_empty());
        assert_eq!(ds[0].kind, K::PathEscape);
    }

    #[test]
    fn a_path_too_deep_is_refused_with_the_limit_and_the_count() {
        let deep = "d/".repeat(1024) + "f";
        let src = format!("*** Begin Patch\n*** Add File: {deep}\n+y\n*** End Patch\n");
        let (added, ds) = ops(&src);
        assert!(added.is_empty());
        assert_eq!(ds[0].kind, K::PathEscape);
        assert!(
            ds[0].message.contains("1025 components"),
            "{}",
            ds[0].message
        );
        let src = format!(
            "*** Begin Patch\n*** Update File: a\n*** Move to: {deep}\n@@\n-x\n+y\n*** End Patch\n"
        );
        let (moved, ds) = ops(&src);
        assert!(!moved.iter().any(|op| matches!(op, Op::Move { .. })));
        assert!(ds.iter().any(|d| d.kind == K::PathEscape));
    }
}
