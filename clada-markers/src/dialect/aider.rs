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
use crate::syntax::{Count, Document, Matching, Op, Parsed, Policy, Task, Unit};
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

/// The line of `source` that starts at `at`, with its line break; `None`
/// at the end.
fn line_at(source: &str, at: usize) -> Option<&str> {
    let rest = source.get(at..).filter(|r| !r.is_empty())?;
    Some(match memchr::memchr(b'\n', rest.as_bytes()) {
        Some(i) => &rest[..=i],
        None => rest,
    })
}

/// The (up to three) lines before the one at `start`, in order, each with
/// where it starts.
fn lines_before(source: &str, start: usize) -> Vec<(usize, &str)> {
    let mut found = Vec::with_capacity(3);
    let mut end = start;
    while found.len() < 3 && end > 0 {
        let from = memchr::memrchr(b'\n', &source.as_bytes()[..end - 1]).map_or(0, |p| p + 1);
        found.push((from, source.get(from..end).unwrap_or_default()));
        end = from;
    }
    found.reverse();
    found
}

/// aider's blocks, read one at a time: each block's task (not numbered
/// yet) with the diagnostics its reading found, in the order found. A
/// block cut short ends the reading, with its diagnostic and no task. No
/// list of the document's lines is made: a line is found where it is
/// needed, so that a reader that drops each block holds only the source.
struct Blocks<'a> {
    cx: Context<'a>,
    source: &'a str,
    /// Where the next line to read starts.
    at: usize,
    /// The file of the block before, for a block that names none.
    carried: Option<(&'a str, Span)>,
    ended: bool,
}

impl<'a> Blocks<'a> {
    fn new(source: &'a str, options: ParseOptions) -> Self {
        Blocks {
            cx: Context::new(source, options),
            source,
            at: 0,
            carried: None,
            ended: false,
        }
    }
}

impl<'a> Iterator for Blocks<'a> {
    type Item = (Option<Task<'a>>, Vec<Diagnostic>);

    fn next(&mut self) -> Option<Self::Item> {
        let source = self.source;
        let mut diagnostics = Vec::new();
        while !self.ended {
            let Some(line) = line_at(source, self.at) else {
                self.ended = true;
                break;
            };
            let start = self.at;
            let after = start + line.len();
            // A shell block, unless a SEARCH line follows within two lines:
            // its content is commands, not blocks (aider offers to run them).
            let trimmed = line.trim();
            let shell =
                trimmed.starts_with("```") && SHELL_FENCES.iter().any(|f| trimmed.starts_with(f));
            let head_follows = || {
                let next = line_at(source, after);
                next.is_some_and(is_head)
                    || next
                        .and_then(|l| line_at(source, after + l.len()))
                        .is_some_and(is_head)
            };
            if shell && !head_follows() {
                self.at = after;
                while let Some(l) = line_at(source, self.at) {
                    self.at += l.len();
                    if l.trim().starts_with("```") {
                        break;
                    }
                }
                continue;
            }
            if !is_head(line) {
                self.at = after;
                continue;
            }
            let opener = Span::new(start, start + text(line).len());
            let before_lines = lines_before(source, start);
            let before: Vec<&str> = before_lines.iter().map(|l| l.1).collect();
            // The name's line starts the unit, so that what is said about the
            // name belongs to it.
            let mut unit_start = start;
            let named = file_name_at(&before).map(|(at, name)| {
                let (s, l) = before_lines[at];
                unit_start = s;
                let offset = s + l.find(name).unwrap_or(0);
                (name, Span::new(offset, offset + name.len()))
            });
            // A name carried over from the previous block is shown on this
            // block's SEARCH line.
            let name = named.or_else(|| self.carried.map(|(n, _)| (n, opener)));
            // The SEARCH section, up to a divider.
            let search_start = after;
            let mut j = after;
            let divider = loop {
                match line_at(source, j) {
                    Some(l) if is_divider(l) => break Some(l),
                    Some(l) => j += l.len(),
                    None => break None,
                }
            };
            let Some(divider) = divider else {
                diagnostics.push(
                    Diagnostic::new(K::UnclosedOpener, opener, "this SEARCH block has no `=======` line")
                        .with_help("an aider block is `<<<<<<< SEARCH`, the text to find, `=======`, the replacement, `>>>>>>> REPLACE`"),
                );
                self.ended = true;
                break;
            };
            let search = Span::new(search_start, j);
            let replace_start = j + divider.len();
            let mut k = replace_start;
            let closing = loop {
                match line_at(source, k) {
                    Some(l) if is_updated(l) || is_divider(l) => break Some(l),
                    Some(l) => k += l.len(),
                    None => break None,
                }
            };
            let Some(closing) = closing else {
                diagnostics.push(
                    Diagnostic::new(
                        K::UnclosedOpener,
                        opener,
                        "this SEARCH block has no `>>>>>>> REPLACE` line",
                    )
                    .with_label(
                        Span::new(j, j + text(divider).len()),
                        "its replacement starts after this line",
                    )
                    .with_help("end the replacement with `>>>>>>> REPLACE`"),
                );
                self.ended = true;
                break;
            };
            let replace = Span::new(replace_start, k);
            let closer = Span::new(k, k + text(closing).len());
            let end = k + closing.len();
            self.at = end;
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
            let mut place = None;
            match name {
                Some((name, at)) => {
                    // The name is a slice of the document: borrowed, never
                    // copied.
                    let attr = Attribute::implied("path", Cow::Borrowed(name), at);
                    place = crate::syntax::check_path_attribute(&self.cx, &attr, &mut diagnostics);
                    task.attributes.push(attr);
                    self.carried = Some((name, at));
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
            let body = |s: Span| -> Cow<'a, str> {
                let t = source.get(s.range()).unwrap_or_default();
                if t.contains("\r\n") {
                    Cow::Owned(t.replace("\r\n", "\n"))
                } else {
                    Cow::Borrowed(t)
                }
            };
            if diagnostics.iter().all(|d| !d.is_error())
                && let Some((name, _)) = name
            {
                let path = crate::syntax::TaskPath::resolved(Cow::Borrowed(name), place);
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
            return Some((Some(task), diagnostics));
        }
        (!diagnostics.is_empty()).then_some((None, diagnostics))
    }
}

/// Reads `source` as aider blocks.
pub(crate) fn parse(source: &str, options: ParseOptions) -> Document<'_> {
    let mut units = Vec::new();
    let mut diagnostics = Vec::new();
    for (task, found) in Blocks::new(source, options) {
        units.extend(task.map(Unit::Task));
        diagnostics.extend(found);
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
        diagnostics.push(no_block());
    }
    crate::syntax::sort_in_document_order(&mut diagnostics);
    Document {
        source,
        units,
        diagnostics,
    }
}

/// [`parse`] as [`Document::into_parsed`] hands it out, with what
/// [`super::parse_dialect`] adds (`unchanged_edit`, other formats' edits
/// and near misses in the prose), a block at a time: each block is its own
/// unit, so that a caller that drops each unit once used holds the source,
/// the units' spans and the diagnostics filed under no unit, never the
/// tasks. The same units and diagnostics, in the same order.
pub(crate) struct Units<'a> {
    blocks: Blocks<'a>,
    /// The unit read last, not yet handed out: a block's name may sit on
    /// the line that closed the block before (`=======`), so what the next
    /// block's reading finds may belong to it.
    held: Option<Parsed<'a>>,
    /// Where the units are: the prose between them is looked at last.
    spans: Vec<Span>,
    /// The diagnostics filed under no unit, handed out last.
    rest: Vec<Diagnostic>,
    /// Whether the reading found any diagnostic (a document with neither a
    /// block nor one has no aider block).
    any_diagnostic: bool,
    read: bool,
    done: bool,
}

pub(crate) fn units(source: &str, options: ParseOptions) -> Units<'_> {
    Units {
        blocks: Blocks::new(source, options),
        held: None,
        spans: Vec::new(),
        rest: Vec::new(),
        any_diagnostic: false,
        read: false,
        done: false,
    }
}

impl<'a> Units<'a> {
    /// Files `d` under the held unit or `next`, whichever holds where it
    /// starts (the first, as [`parse`] files it), else under none.
    fn file(&mut self, mut d: Diagnostic, next: &mut Option<Parsed<'a>>) {
        let holds = |p: &Option<Parsed<'a>>| {
            p.as_ref().and_then(|p| p.unit.as_ref()).is_some_and(|u| {
                let s = u.span();
                s.start <= d.span.start && d.span.start < s.end.max(s.start + 1)
            })
        };
        let unit = if holds(&self.held) {
            &mut self.held
        } else if holds(next) {
            next
        } else {
            self.rest.push(d);
            return;
        };
        if let Some(p) = unit {
            let n = p.unit.as_ref().map(Unit::number);
            d.block = n;
            d.task = n;
            p.diagnostics.push(d);
        }
    }
}

/// A unit as handed out: its `unchanged_edit` warning added, its
/// diagnostics in document order.
fn finish(mut p: Parsed<'_>) -> Parsed<'_> {
    if let Some(Unit::Task(t)) = &p.unit
        && let Some(d) = super::unchanged(t, t.block)
    {
        p.diagnostics.push(d);
    }
    crate::syntax::sort_in_document_order(&mut p.diagnostics);
    p
}

impl<'a> Iterator for Units<'a> {
    type Item = Parsed<'a>;

    fn next(&mut self) -> Option<Parsed<'a>> {
        while !self.read {
            let Some((task, found)) = self.blocks.next() else {
                self.read = true;
                break;
            };
            self.any_diagnostic |= !found.is_empty();
            let mut next = task.map(|mut t| {
                let n = self.spans.len() + 1;
                t.number = n;
                t.block = n;
                self.spans.push(t.span);
                Parsed {
                    unit: Some(Unit::Task(t)),
                    diagnostics: Vec::new(),
                }
            });
            for d in found {
                self.file(d, &mut next);
            }
            if next.is_some()
                && let Some(done) = std::mem::replace(&mut self.held, next)
            {
                return Some(finish(done));
            }
        }
        if let Some(last) = self.held.take() {
            return Some(finish(last));
        }
        if std::mem::replace(&mut self.done, true) {
            return None;
        }
        let mut rest = std::mem::take(&mut self.rest);
        if self.spans.is_empty() && !self.any_diagnostic {
            rest.push(no_block());
        }
        let source = self.blocks.source;
        let found = super::foreign::in_prose(
            source,
            &self.spans,
            !self.spans.is_empty(),
            super::Dialect::Aider,
        );
        // Moved, not copied, when it is all there is.
        if rest.is_empty() {
            rest = found;
        } else {
            rest.extend(found);
        }
        crate::syntax::sort_in_document_order(&mut rest);
        (!rest.is_empty()).then_some(Parsed {
            unit: None,
            diagnostics: rest,
        })
    }
}

/// A document with no aider block and nothing almost one.
fn no_block() -> Diagnostic {
    Diagnostic::new(K::NoTasks, Span::empty(0), "the document has no aider block")
        .with_help("an aider block is a file name line, then `<<<<<<< SEARCH`, the text to find, `=======`, the replacement, `>>>>>>> REPLACE`")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The units handed out a block at a time are those of the whole
    /// document read at once, with the same diagnostics in the same order:
    /// aider's real replies, and the shapes where a block's reading finds
    /// what belongs to the block before, to none, or to no block at all.
    #[test]
    fn units_one_at_a_time_are_the_whole_documents() {
        let history = include_str!("../../../corpus/aider-history/chat-history.md");
        let block = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n";
        let mut cases: Vec<String> = history
            .split("\n#### ")
            .map(str::to_owned)
            .chain([history.to_owned()])
            .collect();
        cases.extend(
            [
                "",
                "prose only\n",
                block,
                "a.py\n<<<<<<< SEARCH\nx\n=======\nx\n>>>>>>> REPLACE\n",
                // A name on the line that closed the block before.
                "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n=======\n<<<<<<< SEARCH\nz\n=======\nw\n>>>>>>> REPLACE\n",
                "../up.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nq\n=======\nr\n>>>>>>> REPLACE\n",
                "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
                "a.py\n<<<<<<< SEARCH\nx\n",
                "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n",
                "a.py\r\n<<<<<<< SEARCH\r\nx\r\n=======\r\ny\r\n>>>>>>> REPLACE\r\n",
                "```bash\nls\n```\na.py\n<<<<<<< SEARCH\n\n=======\nnew\n>>>>>>> REPLACE\n",
                "a.py\n<<<<<< SEARCH\nx\n=======\ny\n>>>>>> REPLACE\n<<<<<<<SEARCH\n",
                "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n--- a/b\n+++ b/b\n@@ @@\n-a\n+b\n",
                "--- a/b\n+++ b/b\n@@ @@\n-a\n+b\n",
            ]
            .map(str::to_owned),
        );
        cases.push(block.repeat(50));
        for case in &cases {
            let whole: Vec<_> = super::super::parse_dialect(
                case,
                super::super::Dialect::Aider,
                ParseOptions::default(),
            )
            .into_parsed()
            .collect();
            let streamed: Vec<_> = units(case, ParseOptions::default()).collect();
            assert_eq!(format!("{streamed:?}"), format!("{whole:?}"), "{case}");
        }
    }

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
