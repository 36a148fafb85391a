//! Writing a document in another dialect (`clada convert`, PROTOCOL
//! §11.4): clada through the printer, aider's blocks, codex's patches,
//! unified diffs.
//! What a dialect cannot say is an error naming the task, never a silent
//! loss.

use std::fmt::Write as _;

use super::kind::Dialect;
use crate::syntax::print;
use crate::syntax::{Count, Document, Op, Unit};

/// Why a document cannot be written in a dialect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertError {
    /// The task, 1-based, when one task is the reason.
    pub task: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task {
            Some(t) => write!(f, "task {t}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ConvertError {}

/// The texts of an operation.
fn bodies<'o>(op: Option<&'o Op<'_>>) -> Vec<&'o str> {
    match op {
        Some(Op::Write { content, .. }) => vec![content],
        Some(Op::Edit {
            search, replace, ..
        }) => vec![search, replace],
        Some(Op::EditRange {
            start,
            end,
            replace,
            ..
        }) => vec![start, end, replace],
        Some(Op::Run { command, .. }) => vec![command],
        _ => Vec::new(),
    }
}

fn refuse(task: usize, message: impl Into<String>) -> ConvertError {
    ConvertError {
        task: Some(task),
        message: message.into(),
    }
}

/// Writes the units of `doc` in `to`. The document must have no error:
/// only well-formed tasks say what to do.
pub fn convert(doc: &Document<'_>, to: Dialect) -> Result<String, ConvertError> {
    if let Some(d) = doc.diagnostics.iter().find(|d| d.is_error()) {
        return Err(ConvertError {
            task: d.task,
            message: format!("the document has errors (the first: {})", d.message),
        });
    }
    // aider and codex read line by line: a CR in a body would be lost.
    if to != Dialect::Clada
        && let Some(t) = doc
            .tasks()
            .find(|t| bodies(t.op.as_ref()).iter().any(|b| b.contains('\r')))
    {
        return Err(refuse(
            t.number,
            format!("{to} cannot keep a carriage return in a body"),
        ));
    }
    // A file a unified diff or Cline creates is made only where none is;
    // clada's and aider's WRITE would replace one.
    if matches!(to, Dialect::Clada | Dialect::Aider)
        && let Some(t) = doc
            .units
            .iter()
            .filter_map(|u| match u {
                Unit::Block(b) if b.rules.create_only => Some(&b.tasks),
                _ => None,
            })
            .flatten()
            .find(|t| matches!(t.op, Some(Op::Write { .. } | Op::Move { .. })))
    {
        return Err(refuse(
            t.number,
            format!(
                "{to} cannot say \"only where no file is\": its WRITE and MOVE replace what is there; convert to codex or udiff, or write the task in clada by hand"
            ),
        ));
    }
    match to {
        Dialect::Clada => print(&doc.units).map_err(|e| ConvertError {
            task: None,
            message: e.to_string(),
        }),
        Dialect::Aider => aider(doc),
        Dialect::Codex => codex(doc),
        Dialect::Udiff => udiff(doc),
        Dialect::Cml => Err(ConvertError {
            task: None,
            message: "writing CML is not supported; read it with --from cml and write clada".into(),
        }),
        Dialect::Cline => Err(ConvertError {
            task: None,
            message: "writing Cline's blocks is not supported; read them with --from cline and write clada, aider, codex or udiff".into(),
        }),
    }
}

/// A fence longer than any run of backticks at a line start of `texts`.
fn fence_for(texts: &[&str]) -> String {
    let longest = texts
        .iter()
        .flat_map(|t| t.lines())
        .map(|l| l.bytes().take_while(|&b| b == b'`').count())
        .max()
        .unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// Whether a body line would be read as one of aider's markers.
fn aider_marker(line: &str) -> bool {
    let t = line.trim();
    let run = |c: u8| {
        let n = t.bytes().take_while(|&b| b == c).count();
        (5..=9).contains(&n).then(|| t[n..].trim())
    };
    matches!(run(b'<'), Some("SEARCH" | "SEARCH>"))
        || matches!(run(b'='), Some(""))
        || matches!(run(b'>'), Some("REPLACE"))
}

fn aider(doc: &Document<'_>) -> Result<String, ConvertError> {
    let mut out = String::new();
    for t in doc.tasks() {
        let n = t.number;
        let (path, search, replace) = match &t.op {
            Some(Op::Edit {
                path,
                count,
                search,
                replace,
                ..
            }) => {
                if *count != Count::default() {
                    return Err(refuse(
                        n,
                        "aider's blocks replace exactly one occurrence; this edit has a count",
                    ));
                }
                (path, search.as_ref(), replace.as_ref())
            }
            Some(Op::Write {
                path,
                append: true,
                content,
            }) => (path, "", content.as_ref()),
            Some(Op::Write { .. }) => {
                return Err(refuse(
                    n,
                    "aider's format cannot replace a whole file (an empty SEARCH appends); use --to clada or --to codex",
                ));
            }
            Some(other) => {
                let what = match other {
                    Op::EditRange { .. } => "range edits",
                    Op::Run { .. } => "commands",
                    Op::Move { .. } => "moves",
                    _ => "removals",
                };
                return Err(refuse(n, format!("aider's format has no {what}")));
            }
            None => return Err(refuse(n, "the task has errors")),
        };
        // aider finds the file name on the line before the fence.
        let plain = |c: char| !c.is_whitespace() && !matches!(c, '#' | '`' | '*');
        if !path.chars().all(plain) || path.ends_with(':') || path.as_ref() == "..." {
            return Err(refuse(
                n,
                format!(
                    "aider cannot name the file `{path}` (white space, `#`, `` ` ``, `*` or a final `:`)"
                ),
            ));
        }
        for body in [search, replace] {
            if body.lines().any(aider_marker) {
                return Err(refuse(
                    n,
                    "a body holds a line aider would read as a marker",
                ));
            }
            if !body.is_empty() && !body.ends_with('\n') {
                return Err(refuse(
                    n,
                    "aider's bodies are whole lines; this one does not end with a line break",
                ));
            }
        }
        let fence = fence_for(&[search, replace]);
        let _ = write!(
            out,
            "{path}\n{fence}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n{fence}\n\n"
        );
    }
    Ok(out)
}

/// `text`'s lines, each prefixed.
fn prefixed(text: &str, prefix: char) -> String {
    text.lines().map(|l| format!("{prefix}{l}\n")).collect()
}

fn codex(doc: &Document<'_>) -> Result<String, ConvertError> {
    // codex trims its marker lines: a path must survive that.
    for t in doc.tasks() {
        let paths: Vec<&str> = match &t.op {
            Some(Op::Move { from, to }) => vec![from, to],
            Some(Op::Write { path, .. } | Op::Edit { path, .. } | Op::Remove { path }) => {
                vec![path]
            }
            _ => Vec::new(),
        };
        if let Some(p) = paths.iter().find(|p| p.trim() != **p || p.contains('\n')) {
            return Err(refuse(
                t.number,
                format!("codex cannot name the file `{p}` (white space at an end)"),
            ));
        }
    }
    let mut out = String::new();
    // A unit is a patch: codex applies a patch as a unit.
    for unit in &doc.units {
        out.push_str("*** Begin Patch\n");
        for t in unit.tasks() {
            let n = t.number;
            let whole = |s: &str| s.is_empty() || s.ends_with('\n');
            match &t.op {
                Some(Op::Write {
                    path,
                    append: false,
                    content,
                }) if whole(content) => {
                    let _ = write!(out, "*** Add File: {path}\n{}", prefixed(content, '+'));
                }
                Some(Op::Write {
                    append: true,
                    content,
                    ..
                }) if content.is_empty() => {
                    return Err(refuse(n, "codex has no hunk that adds nothing"));
                }
                Some(Op::Write {
                    path,
                    append: true,
                    content,
                }) if whole(content) => {
                    let _ = write!(
                        out,
                        "*** Update File: {path}\n@@\n{}",
                        prefixed(content, '+')
                    );
                }
                Some(Op::Edit {
                    path,
                    count,
                    search,
                    replace,
                    ..
                }) if *count == Count::default() && whole(search) && whole(replace) => {
                    let _ = write!(
                        out,
                        "*** Update File: {path}\n@@\n{}{}",
                        prefixed(search, '-'),
                        prefixed(replace, '+')
                    );
                }
                Some(Op::Edit { .. }) => {
                    return Err(refuse(
                        n,
                        "codex's hunks are whole lines found once; this edit has a count or a partial line",
                    ));
                }
                Some(Op::Write { .. }) => {
                    return Err(refuse(
                        n,
                        "codex's files are whole lines; this content does not end with a line break",
                    ));
                }
                Some(Op::Move { from, to }) => {
                    let _ = write!(out, "*** Update File: {from}\n*** Move to: {to}\n");
                }
                Some(Op::Remove { path }) => {
                    let _ = writeln!(out, "*** Delete File: {path}");
                }
                Some(Op::EditRange { .. }) => {
                    return Err(refuse(n, "codex's patches have no range edits"));
                }
                Some(Op::Run { .. }) => return Err(refuse(n, "codex's patches run no commands")),
                None => return Err(refuse(n, "the task has errors")),
            }
        }
        out.push_str("*** End Patch\n\n");
    }
    Ok(out)
}

/// A path as a diff header names it: quoted as git quotes one when it
/// holds a quote, a backslash, a control character or white space at an
/// end, or ends in what reads as a timestamp.
fn diff_path(p: &str) -> String {
    let plain = !p.starts_with('"')
        && p.trim() == p
        && !p.chars().any(|c| c == '\\' || c.is_control())
        && super::udiff::timestamp_at(p).is_none();
    if plain {
        return p.to_owned();
    }
    let mut out = String::from("\"");
    for c in p.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                let mut b = [0; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    let _ = write!(out, "\\{byte:03o}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text`'s lines, each prefixed, and `\ No newline at end of file` after
/// a last line without a line break.
fn diff_lines(out: &mut String, text: &str, prefix: char) {
    for line in text.split_inclusive('\n') {
        out.push(prefix);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// A hunk's lines for the edit of `old` into `new`: the lines both start
/// and end with as context, the rest removed and added. `false` when the
/// last removed line and the first added one would read as a file header
/// (`--- x`, `+++ y`).
fn hunk_lines(out: &mut String, old: &str, new: &str) -> bool {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    // An edit that changes nothing is still one: its lines removed and
    // added again, not all context (a hunk of context only says nothing).
    let (head, tail) = if a == b {
        (0, 0)
    } else {
        let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let tail = a[head..]
            .iter()
            .rev()
            .zip(b[head..].iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        (head, tail)
    };
    let part = |lines: &[&str]| lines.concat();
    let removed = &a[head..a.len() - tail];
    let added = &b[head..b.len() - tail];
    if removed.last().is_some_and(|l| l.starts_with("-- "))
        && added.first().is_some_and(|l| l.starts_with("++ "))
    {
        return false;
    }
    diff_lines(out, &part(&a[..head]), ' ');
    diff_lines(out, &part(removed), '-');
    diff_lines(out, &part(added), '+');
    diff_lines(out, &part(&a[a.len() - tail..]), ' ');
    true
}

fn udiff(doc: &Document<'_>) -> Result<String, ConvertError> {
    let mut out = String::new();
    // The path whose section is open: consecutive edits of a file in one
    // unit are hunks of one section.
    let mut open: Option<(usize, String)> = None;
    for unit in &doc.units {
        for t in unit.tasks() {
            let n = t.number;
            let section = |out: &mut String, a: &str, b: &str| {
                let _ = writeln!(
                    out,
                    "diff --git {} {}",
                    diff_path(&format!("a/{a}")),
                    diff_path(&format!("b/{b}"))
                );
            };
            let path_of = |op: &Op<'_>| match op {
                Op::Write { path, .. } | Op::Edit { path, .. } | Op::Remove { path } => {
                    vec![path.to_string()]
                }
                Op::Move { from, to } => vec![from.to_string(), to.to_string()],
                _ => Vec::new(),
            };
            if let Some(op) = &t.op
                && path_of(op).iter().any(|p| p == "/dev/null" || p.is_empty())
            {
                return Err(refuse(
                    n,
                    "a unified diff cannot name `/dev/null` or an empty path",
                ));
            }
            match &t.op {
                Some(Op::Edit {
                    path,
                    count,
                    search,
                    replace,
                    ..
                }) if *count == Count::default() => {
                    let mut hunk = String::from("@@ ... @@\n");
                    if !hunk_lines(&mut hunk, search, replace) {
                        return Err(refuse(
                            n,
                            "a removed line `-- …` and an added line `++ …` would read as a diff's file header",
                        ));
                    }
                    let key = (unit.number(), path.to_string());
                    if open.as_ref() != Some(&key) {
                        let p = diff_path(&format!("a/{path}"));
                        let q = diff_path(&format!("b/{path}"));
                        section(&mut out, path, path);
                        let _ = write!(out, "--- {p}\n+++ {q}\n");
                        open = Some(key);
                    }
                    out.push_str(&hunk);
                    continue;
                }
                Some(Op::Edit { .. }) => {
                    return Err(refuse(
                        n,
                        "a unified diff's hunk is found once; this edit has a count",
                    ));
                }
                Some(Op::Write {
                    path,
                    append: false,
                    content,
                }) => {
                    section(&mut out, path, path);
                    out.push_str("new file mode 100644\n");
                    if !content.is_empty() {
                        let lines = content.split_inclusive('\n').count();
                        let _ = write!(
                            out,
                            "--- /dev/null\n+++ {}\n@@ -0,0 +1,{lines} @@\n",
                            diff_path(&format!("b/{path}"))
                        );
                        diff_lines(&mut out, content, '+');
                    }
                }
                Some(Op::Write { .. }) => {
                    return Err(refuse(
                        n,
                        "a unified diff cannot append to a file; send the lines around the end as context",
                    ));
                }
                Some(Op::Move { from, to }) => {
                    if to.ends_with('/') {
                        return Err(refuse(
                            n,
                            "a unified diff renames a file to a path, not into a directory",
                        ));
                    }
                    section(&mut out, from, to);
                    let _ = write!(
                        out,
                        "similarity index 100%\nrename from {}\nrename to {}\n",
                        diff_path(from),
                        diff_path(to)
                    );
                }
                Some(Op::Remove { path }) => {
                    section(&mut out, path, path);
                    out.push_str("deleted file mode 100644\n");
                }
                Some(Op::EditRange { .. }) => {
                    return Err(refuse(n, "a unified diff has no range edits"));
                }
                Some(Op::Run { .. }) => return Err(refuse(n, "a unified diff runs no commands")),
                None => return Err(refuse(n, "the task has errors")),
            }
            open = None;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::parse_dialect;
    use crate::syntax::ParseOptions;

    /// The operations of `text`, without the matching policy its dialect
    /// gives its edits (codex's passes): the same tasks in every dialect.
    fn ops(text: &str, dialect: Dialect) -> Vec<Op<'_>> {
        let doc = parse_dialect(text, dialect, ParseOptions::default());
        assert!(!doc.has_errors(), "{text}\n{:?}", doc.diagnostics);
        doc.tasks()
            .filter_map(|t| t.op.clone())
            .map(|mut op| {
                if let Op::Edit { matching, .. } | Op::EditRange { matching, .. } = &mut op {
                    *matching = crate::syntax::Matching::default();
                }
                op
            })
            .collect()
    }

    #[test]
    fn edits_round_trip_through_every_dialect() {
        let src = "<<<<<<< SEARCH path=\"a.py\"\nx = 1\n=======\nx = 2\n```\n>>>>>>> REPLACE\n<<<<<<< WRITE path=\"log.txt\" append=\"true\"\nmore\n>>>>>>> END\n";
        let doc = crate::parse(src);
        let want = ops(src, Dialect::Clada);
        for to in [Dialect::Clada, Dialect::Aider, Dialect::Codex] {
            let text = convert(&doc, to).unwrap_or_else(|e| panic!("{to}: {e}"));
            assert_eq!(ops(&text, to), want, "{to}:\n{text}");
        }
    }

    #[test]
    fn file_operations_round_trip_through_a_unified_diff() {
        let src = "<<<<<<< TASKS\n<<<<<<< SEARCH path=\"a b.py\"\nkeep\nx = 1\ntail\n=======\nkeep\nx = 2\ntail\n>>>>>>> REPLACE\n<<<<<<< SEARCH path=\"a b.py\"\n-- x\n=======\n+y\n>>>>>>> REPLACE\n>>>>>>> TASKS\n<<<<<<< WRITE path=\"new.txt\"\none\n>>>>>>> END\n<<<<<<< MOVE from=\"old\" to=\"new 2024-01-31 10:05:00 +0000\"\n>>>>>>> END\n<<<<<<< REMOVE path=\"gone\"\n>>>>>>> END\n";
        let doc = crate::parse(src);
        let text = convert(&doc, Dialect::Udiff).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            ops(&text, Dialect::Udiff),
            ops(src, Dialect::Clada),
            "{text}"
        );
        // The two edits of one file in one unit are hunks of one section,
        // the lines both texts share its context.
        assert_eq!(text.matches("diff --git").count(), 4, "{text}");
        assert!(
            text.contains("@@ ... @@\n keep\n-x = 1\n+x = 2\n tail\n"),
            "{text}"
        );
        assert!(
            text.contains("rename to \"new 2024-01-31 10:05:00 +0000\"\n"),
            "{text}"
        );
        // Found by the fuzz target: a path ending in what reads as a
        // timestamp is quoted.
        let src = "<<<<<<< SEARCH path=\"a/x 2024-01-31 10:05:00 +0000\"\none\n=======\ntwo\n>>>>>>> REPLACE\n";
        let text = convert(&crate::parse(src), Dialect::Udiff).unwrap_or_default();
        assert_eq!(
            ops(&text, Dialect::Udiff),
            ops(src, Dialect::Clada),
            "{text}"
        );
    }

    #[test]
    fn what_a_dialect_cannot_say_is_refused() {
        // A unified diff's new file is made only where none is: clada's and
        // aider's WRITE would replace one.
        let diff = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n";
        let doc =
            crate::dialect::parse_dialect(diff, Dialect::Udiff, crate::ParseOptions::default());
        for to in [Dialect::Clada, Dialect::Aider] {
            let e = convert(&doc, to).unwrap_err();
            assert_eq!(e.task, Some(1), "{to}");
            assert!(e.message.contains("only where no file is"), "{}", e.message);
        }
        assert!(convert(&doc, Dialect::Codex).is_ok());
        assert!(convert(&doc, Dialect::Udiff).is_ok());
        let doc = crate::parse("<<<<<<< RUN\nls\n>>>>>>> END\n");
        assert_eq!(convert(&doc, Dialect::Aider).unwrap_err().task, Some(1));
        assert!(convert(&doc, Dialect::Codex).is_err());
        let doc =
            crate::parse("<<<<<<< SEARCH path=\"a\" count=\"2\"\nx\n=======\ny\n>>>>>>> REPLACE\n");
        assert!(convert(&doc, Dialect::Aider).is_err());
        let doc = crate::parse("<<<<<<< WRITE path=\"a\"\n<<<<<<< SEARCH\n>>>>>>> END\n");
        assert!(convert(&doc, Dialect::Aider).is_err());
        for src in [
            "<<<<<<< WRITE path=\"a\" append=\"true\"\nx\n>>>>>>> END\n",
            "<<<<<<< SEARCH path=\"a\" count=\"all\"\nx\n=======\ny\n>>>>>>> REPLACE\n",
            "<<<<<<< SEARCH path=\"a\"\n-- x\n=======\n++ y\n>>>>>>> REPLACE\n",
            "<<<<<<< MOVE from=\"a\" to=\"d/\"\n>>>>>>> END\n",
            "<<<<<<< REMOVE path=\"/dev/null\"\n>>>>>>> END\n",
        ] {
            let doc = crate::parse_with(src, crate::ParseOptions { allow_escape: true });
            assert_eq!(
                convert(&doc, Dialect::Udiff).map_err(|e| e.task),
                Err(Some(1)),
                "{src}"
            );
        }
    }
}
