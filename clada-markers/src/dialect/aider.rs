//! aider's SEARCH/REPLACE blocks (its `editblock` format), read as clada
//! tasks (PROTOCOL §11).
//!
//! ~~~text
//! src/app.py
//! ```python
//! <<<<<<< SEARCH
//! old lines
//! =======
//! new lines
//! >>>>>>> REPLACE
//! ```
//! ~~~
//!
//! What aider's own parser accepts for structure is accepted, as it
//! accepts it: markers of 5 to 9 characters, indented or not; every fence
//! aider knows (```` ``` ````, ```` ```` ````, `<source>`, `<code>`, `<pre>`,
//! `<codeblock>`, `<sourcecode>`); the file name where aider's
//! `find_filename` finds it (the three lines above the SEARCH line,
//! nearest first, going on past fence lines only: a line naming a file,
//! or a fence's info string with a `.` or `/`); a block without one takes
//! the previous block's file; a REPLACE section may end at a second
//! `=======`; a shell fence (```` ```bash ````…) holds commands, not
//! blocks. An empty SEARCH means "create the file, or append to it" (a
//! WRITE with `append="true"`). Everything else is prose (but lines almost
//! aider's markers, which `super::foreign` reports). Matching is clada's
//! SEARCH: one occurrence, as written or at one uniform indentation shift;
//! the file name is checked like a `path` attribute.

use std::borrow::Cow;

use crate::syntax::Attribute;
use crate::syntax::Span;
use crate::syntax::TaskKind;
use crate::syntax::{Context, ParseOptions};
use crate::syntax::{Count, Document, Matching, Op, Policy, Task, Unit};
use crate::syntax::{Diagnostic, DiagnosticKind as K};

/// A line's text without its line break.
fn text(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// The fences aider knows (its `all_fences`): ```` ``` ```` (and longer),
/// `<source>`, `<code>`, `<pre>`, `<codeblock>`, `<sourcecode>`. aider
/// uses one of them for a chat; clada knows none in advance, so it knows
/// them all.
const FENCES: [&str; 6] = [
    "```",
    "<source>",
    "<code>",
    "<pre>",
    "<codeblock>",
    "<sourcecode>",
];

/// The closing tags of the HTML-like fences: passed over like fences,
/// never a file name.
const CLOSERS: [&str; 5] = [
    "</source>",
    "</code>",
    "</pre>",
    "</codeblock>",
    "</sourcecode>",
];

/// The fences whose content aider offers to run as shell commands, not
/// reads as blocks (unless a SEARCH line follows within two lines).
const SHELL_FENCES: [&str; 12] = [
    "```bash",
    "```sh",
    "```shell",
    "```cmd",
    "```batch",
    "```powershell",
    "```ps1",
    "```zsh",
    "```fish",
    "```ksh",
    "```csh",
    "```tcsh",
];

/// The length of a run of 5 to 9 `c` starting `t`, if `t` starts so (a
/// longer run is none).
fn run_of(t: &str, c: char) -> Option<usize> {
    let n = t.chars().take_while(|&x| x == c).count();
    (5..=9).contains(&n).then_some(n)
}

/// `<<<<<<< SEARCH` (aider also takes `SEARCH>`): aider's `^<{5,9}
/// SEARCH>?\s*$` on the stripped line.
pub(crate) fn is_head(line: &str) -> bool {
    let t = text(line).trim();
    run_of(t, '<').is_some_and(|n| matches!(&t[n..], " SEARCH" | " SEARCH>"))
}

/// `=======`: aider's `^={5,9}\s*$`.
fn is_divider(line: &str) -> bool {
    let t = text(line).trim();
    run_of(t, '=').is_some_and(|n| n == t.len())
}

/// `>>>>>>> REPLACE`: aider's `^>{5,9} REPLACE\s*$`.
pub(crate) fn is_updated(line: &str) -> bool {
    let t = text(line).trim();
    run_of(t, '>').is_some_and(|n| &t[n..] == " REPLACE")
}

/// Whether a line (as written, not trimmed, as aider looks) is a fence.
fn is_fence(line: &str) -> bool {
    let t = text(line);
    FENCES.iter().chain(&CLOSERS).any(|f| t.starts_with(f))
}

/// The file name among the (up to three) lines before a SEARCH line,
/// nearest last, as aider's `find_filename` finds it.
pub(crate) fn file_name<'l>(before: &[&'l str]) -> Option<&'l str> {
    file_name_at(before).map(|(_, name)| name)
}

/// [`file_name`], with the index in `before` of the line it is on. The
/// lines are read nearest first, going on only past fence lines; of the
/// names found, the first with a `.` wins, else the first (aider's
/// choice when it does not ask the repository).
pub(crate) fn file_name_at<'l>(before: &[&'l str]) -> Option<(usize, &'l str)> {
    let mut found: Vec<(usize, &str)> = Vec::new();
    for (i, line) in before.iter().enumerate().rev().take(3) {
        if let Some(name) = strip_name(text(line)) {
            found.push((i, name));
        }
        if !is_fence(line) {
            break;
        }
    }
    found
        .iter()
        .find(|(_, n)| n.contains('.'))
        .or(found.first())
        .copied()
}

/// A line that names a file, as aider's `strip_filename` reads it: a
/// fence's info string when it has a `.` or `/` (```` ```app.py ````,
/// `<source>app.py`), else the line without `#`, `` ` ``, `*` around it
/// or a final `:` (`app.py`, `# app.py`, `` `app.py` ``, `**app.py**`,
/// `app.py:`). A closing tag names none; a line with white space inside is
/// prose, not a file name (clada decides this where aider would ask the
/// repository).
fn strip_name(line: &str) -> Option<&str> {
    let t = line.trim();
    if t == "..." || CLOSERS.iter().any(|c| t.starts_with(c)) {
        return None;
    }
    if let Some(f) = FENCES.iter().find(|f| t.starts_with(*f)) {
        // A longer backtick fence is a fence too: its info string starts
        // after all its backticks.
        let info = t[f.len()..].trim_start_matches('`');
        let named = !info.is_empty() && (info.contains('.') || info.contains('/'));
        return (named && !info.contains(char::is_whitespace)).then_some(info);
    }
    let t = t.trim_end_matches(':').trim_start_matches('#').trim();
    let t = t.trim_matches('`').trim_matches('*');
    let plausible = !t.is_empty() && !t.contains(char::is_whitespace);
    plausible.then_some(t)
}

/// Reads `source` as aider blocks.
pub(crate) fn parse(source: &str, options: ParseOptions) -> Document<'_> {
    let cx = Context::new(source, options);
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for line in source.split_inclusive('\n') {
        lines.push((at, line));
        at += line.len();
    }
    let mut units = Vec::new();
    let mut diagnostics = Vec::new();
    let mut carried: Option<(String, Span)> = None;
    let mut i = 0;
    while i < lines.len() {
        let (start, line) = lines[i];
        // A shell block, unless a SEARCH line follows within two lines:
        // its content is commands, not blocks (aider offers to run them).
        let trimmed = line.trim();
        let shell =
            trimmed.starts_with("```") && SHELL_FENCES.iter().any(|f| trimmed.starts_with(f));
        let head_follows = || (1..=2).any(|k| lines.get(i + k).is_some_and(|l| is_head(l.1)));
        if shell && !head_follows() {
            i += 1;
            while i < lines.len() && !lines[i].1.trim().starts_with("```") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if !is_head(line) {
            i += 1;
            continue;
        }
        let opener = Span::new(start, start + text(line).len());
        let before: Vec<&str> = lines[i.saturating_sub(3)..i].iter().map(|l| l.1).collect();
        // The name's line starts the unit, so that what is said about the
        // name belongs to it.
        let mut unit_start = start;
        let named = file_name_at(&before).map(|(at, name)| {
            let (s, l) = lines[i - before.len() + at];
            unit_start = s;
            let offset = s + l.find(name).unwrap_or(0);
            (name.to_owned(), Span::new(offset, offset + name.len()))
        });
        // A name carried over from the previous block is shown on this
        // block's SEARCH line.
        let name = named.or_else(|| carried.clone().map(|(n, _)| (n, opener)));
        // The SEARCH section, up to a divider.
        let search_start = start + line.len();
        let mut j = i + 1;
        while j < lines.len() && !is_divider(lines[j].1) {
            j += 1;
        }
        if j >= lines.len() {
            diagnostics.push(
                Diagnostic::new(K::UnclosedOpener, opener, "this SEARCH block has no `=======` line")
                    .with_help("an aider block is `<<<<<<< SEARCH`, the text to find, `=======`, the replacement, `>>>>>>> REPLACE`"),
            );
            break;
        }
        let search = Span::new(search_start, lines[j].0);
        let replace_start = lines[j].0 + lines[j].1.len();
        let mut k = j + 1;
        while k < lines.len() && !(is_updated(lines[k].1) || is_divider(lines[k].1)) {
            k += 1;
        }
        if k >= lines.len() {
            diagnostics.push(
                Diagnostic::new(
                    K::UnclosedOpener,
                    opener,
                    "this SEARCH block has no `>>>>>>> REPLACE` line",
                )
                .with_label(
                    Span::new(lines[j].0, lines[j].0 + text(lines[j].1).len()),
                    "its replacement starts after this line",
                )
                .with_help("end the replacement with `>>>>>>> REPLACE`"),
            );
            break;
        }
        let replace = Span::new(replace_start, lines[k].0);
        let closer = Span::new(lines[k].0, lines[k].0 + text(lines[k].1).len());
        let end = lines[k].0 + lines[k].1.len();
        let mut task = Task {
            number: 0,
            block: 0,
            kind: TaskKind::Search,
            fence: text(line).trim().chars().take_while(|&c| c == '<').count(),
            span: Span::new(unit_start, end),
            opener,
            attributes: Vec::new(),
            sections: vec![search, replace],
            closer: Some(closer),
            op: None,
        };
        let errors_before = diagnostics.len();
        let mut place = None;
        match &name {
            Some((name, at)) => {
                let attr = Attribute::implied("path", Cow::Owned(name.clone()), *at);
                place = crate::syntax::check_path_attribute(&cx, &attr, &mut diagnostics);
                task.attributes.push(attr);
                carried = Some((name.clone(), *at));
            }
            None => diagnostics.push(
                Diagnostic::new(
                    K::MissingAttribute,
                    opener,
                    "this SEARCH block names no file",
                )
                .with_help(
                    "put the file's path on its own line just before the block (or its fence)",
                ),
            ),
        }
        let body = |s: Span| -> Cow<'_, str> {
            let t = &source[s.range()];
            if t.contains("\r\n") {
                Cow::Owned(t.replace("\r\n", "\n"))
            } else {
                Cow::Borrowed(t)
            }
        };
        if diagnostics[errors_before..].iter().all(|d| !d.is_error())
            && let Some((name, _)) = &name
        {
            let path = crate::syntax::TaskPath::resolved(Cow::Owned(name.clone()), place);
            task.op = Some(if search.is_empty() {
                task.kind = TaskKind::Write;
                Op::Write {
                    path,
                    append: true,
                    content: body(replace),
                }
            } else {
                Op::Edit {
                    path,
                    count: Count::default(),
                    // aider's matcher compares whole lines.
                    matching: Matching::lines(Policy::Clada, None),
                    search: body(search),
                    replace: body(replace),
                }
            });
        }
        units.push(Unit::Task(task));
        i = k + 1;
    }
    // Number units and tasks, and file each diagnostic under its unit.
    for (n, unit) in units.iter_mut().enumerate() {
        if let Unit::Task(t) = unit {
            t.number = n + 1;
            t.block = n + 1;
        }
    }
    for d in &mut diagnostics {
        if let Some(u) = units.iter().find(|u| {
            let s = u.span();
            s.start <= d.span.start && d.span.start < s.end.max(s.start + 1)
        }) {
            d.block = Some(u.number());
            d.task = Some(u.number());
        }
    }
    if units.is_empty() && diagnostics.is_empty() {
        diagnostics.push(
            Diagnostic::new(K::NoTasks, Span::empty(0), "the document has no aider block")
                .with_help("an aider block is a file name line, then `<<<<<<< SEARCH`, the text to find, `=======`, the replacement, `>>>>>>> REPLACE`"),
        );
    }
    crate::syntax::sort_in_document_order(&mut diagnostics);
    Document {
        source,
        units,
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_of_five_to_nine_characters() {
        assert!(is_head("<<<<<<< SEARCH\n"));
        assert!(is_head("<<<<< SEARCH"));
        assert!(is_head("  <<<<<<<<< SEARCH  \r\n"));
        assert!(is_head("<<<<<<< SEARCH>"));
        assert!(!is_head("<<<< SEARCH"));
        assert!(!is_head("<<<<<<<<<< SEARCH"));
        assert!(!is_head("<<<<<<<SEARCH"));
        assert!(!is_head("<<<<<<< SEARCH path=\"a\""));
        assert!(!is_head("<<<<<<<  SEARCH") && !is_updated(">>>>>>>  REPLACE"));
        assert!(is_divider("=====\n") && is_divider("=========") && !is_divider("===="));
        assert!(is_updated(">>>>>>> REPLACE") && !is_updated(">>>>>>> END"));
    }

    #[test]
    fn every_fence_aider_knows_is_passed_over_never_a_file_name() {
        for (open, close) in [
            ("```python", "```"),
            ("````python", "````"),
            ("<source>python", "</source>"),
            ("<code>python", "</code>"),
            ("<pre>python", "</pre>"),
            ("<codeblock>python", "</codeblock>"),
            ("<sourcecode>python", "</sourcecode>"),
        ] {
            assert_eq!(
                file_name(&["notes/new.py", open]),
                Some("notes/new.py"),
                "{open}"
            );
            assert_eq!(file_name(&[open]), None, "{open}");
            // aider's Deepseek case: the name fenced on its own, then the
            // block's fence.
            assert_eq!(
                file_name(&[open, "app.py", close, open][1..]),
                Some("app.py"),
                "{open}"
            );
            let src = format!(
                "notes/new.py\n{open}\n<<<<<<< SEARCH\n=======\nprint(\"hi\")\n>>>>>>> REPLACE\n{close}\n"
            );
            let doc = parse(&src, ParseOptions::default());
            assert!(doc.diagnostics.is_empty(), "{open}: {:?}", doc.diagnostics);
            let path = doc
                .tasks()
                .next()
                .and_then(|t| t.display_path())
                .map(str::to_owned);
            assert_eq!(path.as_deref(), Some("notes/new.py"), "{open}");
        }
        assert_eq!(file_name(&["<source>app.py"]), Some("app.py"));
        assert_eq!(file_name(&["````app.py"]), Some("app.py"));
        // Indented, a fence line ends the look back as in aider.
        assert_eq!(file_name(&["a.py", "  ```python"]), None);
    }

    #[test]
    fn of_several_names_the_first_with_a_dot_wins() {
        assert_eq!(file_name(&["x.py", "```src/app"]), Some("x.py"));
        assert_eq!(file_name(&["Makefile", "```python"]), Some("Makefile"));
    }

    #[test]
    fn a_shell_fence_holds_commands_not_blocks() {
        let src = "app.py\n```bash\necho hi\necho there\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n";
        let doc = parse(src, ParseOptions::default());
        assert_eq!(doc.tasks().count(), 0);
        // Unless the SEARCH line follows at once.
        let src = "app.py\n```sh\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n";
        let doc = parse(src, ParseOptions::default());
        assert_eq!(doc.tasks().count(), 1);
    }

    #[test]
    fn file_names_as_aider_finds_them() {
        assert_eq!(file_name(&["src/app.py", "```python"]), Some("src/app.py"));
        assert_eq!(file_name(&["x", "**src/app.py**"]), Some("src/app.py"));
        assert_eq!(file_name(&["`a.py`:"]), Some("a.py"));
        assert_eq!(file_name(&["# a.py"]), Some("a.py"));
        assert_eq!(file_name(&["```src/app.py"]), Some("src/app.py"));
        assert_eq!(file_name(&["Here is the change:", "```"]), None);
        assert_eq!(file_name(&["```python"]), None);
        assert_eq!(file_name(&[]), None);
    }

    #[test]
    fn blocks_become_tasks_with_the_file_carried_over() {
        let src = "Change app.py:\n\napp.py\n```python\n<<<<<<< SEARCH\na = 1\n=======\na = 2\n>>>>>>> REPLACE\n```\n\n```python\n<<<<<<< SEARCH\n=======\nb = 3\n>>>>>>> REPLACE\n```\n";
        let doc = parse(src, ParseOptions::default());
        assert!(doc.diagnostics.is_empty(), "{:?}", doc.diagnostics);
        let ops: Vec<_> = doc.tasks().filter_map(|t| t.op.clone()).collect();
        assert_eq!(
            ops,
            vec![
                Op::Edit {
                    path: "app.py".into(),
                    count: Count::default(),
                    matching: Matching::lines(Policy::Clada, None),
                    search: "a = 1\n".into(),
                    replace: "a = 2\n".into(),
                },
                Op::Write {
                    path: "app.py".into(),
                    append: true,
                    content: "b = 3\n".into(),
                },
            ]
        );
        let t = doc.tasks().next().map(|t| (t.span, t.attributes[0].span));
        assert_eq!(t.map(|(_, a)| &src[a.range()]), Some("app.py"));
    }

    #[test]
    fn a_path_out_of_the_root_is_refused_like_a_path_attribute() {
        let src = "../../etc/passwd\n<<<<<<< SEARCH\nroot\n=======\ntoor\n>>>>>>> REPLACE\n";
        let doc = parse(src, ParseOptions::default());
        assert!(doc.has_errors());
        assert_eq!(doc.diagnostics[0].kind, K::PathEscape);
        assert!(doc.tasks().all(|t| t.op.is_none()));
    }

    #[test]
    fn a_path_too_deep_is_refused_with_the_limit_and_the_count() {
        let deep = "d/".repeat(2000) + "f.py";
        let src = format!("{deep}\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n");
        let doc = parse(&src, ParseOptions::default());
        assert_eq!(doc.diagnostics[0].kind, K::PathEscape);
        assert!(doc.diagnostics[0].message.contains("2001 components"));
        assert!(doc.tasks().all(|t| t.op.is_none()));
        let ok = "d/".repeat(1023) + "f.py";
        let src = format!("{ok}\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n");
        assert!(!parse(&src, ParseOptions::default()).has_errors());
    }
}
