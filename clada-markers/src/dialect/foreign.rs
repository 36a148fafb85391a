//! Edits no task came of (PROTOCOL §11.7): a document read in one dialect
//! that holds no task, but holds edits in a format this dialect does not
//! read (a unified diff, Cline's blocks, a codex patch read as clada…), is
//! an error that names the format and the `--dialect` that reads it; and
//! lines almost a dialect's markers are errors in every dialect, never
//! prose. An edit is never dropped in silence.
//!
//! The formats and their readers are one table, [`FORMATS`]: a new front
//! end is one line there.

use super::lines::{Line, lines, lines_in};
use crate::syntax::Document;
use crate::syntax::Span;
use crate::syntax::{Diagnostic, DiagnosticKind as K};

use super::kind::Dialect;

/// A format of edits clada recognises in a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Clada,
    Aider,
    Codex,
    Cml,
    UnifiedDiff,
    Cline,
    Gptme,
}

/// Each format, what it is in words, and the dialect that reads it
/// (`None`: no front end reads it yet).
pub(crate) const FORMATS: &[(Format, &str, Option<Dialect>)] = &[
    (
        Format::Clada,
        "clada tasks (`<<<<<<< SEARCH path=…`)",
        Some(Dialect::Clada),
    ),
    (
        Format::Aider,
        "aider SEARCH/REPLACE blocks",
        Some(Dialect::Aider),
    ),
    (
        Format::Codex,
        "a codex patch (`*** Begin Patch`)",
        Some(Dialect::Codex),
    ),
    (
        Format::Cml,
        "CML elements (`<edit path=…>`)",
        Some(Dialect::Cml),
    ),
    (
        Format::UnifiedDiff,
        "a unified diff (`--- a/…`, `+++ b/…`, `@@ … @@`)",
        Some(Dialect::Udiff),
    ),
    (
        Format::Cline,
        "Cline/Roo SEARCH blocks (`------- SEARCH`, `=======`, `+++++++ REPLACE`) or calls (`<replace_in_file>`, `<apply_diff>`, `<write_to_file>`)",
        Some(Dialect::Cline),
    ),
    (
        Format::Gptme,
        "gptme patch blocks (`<<<<<<< ORIGINAL`, `=======`, `>>>>>>> UPDATED`)",
        None,
    ),
];

/// Adds to `doc`, read in `dialect`, the errors of this module: near-miss
/// markers of the dialect, and each format of edits found that the dialect
/// does not read: anywhere in a document that holds no task, in the prose
/// between units of one that does (a reply that mixes two formats: the
/// edits of the other are said, the units read still run).
pub(crate) fn check(doc: &mut Document<'_>, dialect: Dialect) {
    let source = doc.source;
    let spans: Vec<Span> = doc.units.iter().map(|u| u.span()).collect();
    let found = in_prose(source, &spans, doc.tasks().next().is_some(), dialect);
    if found.is_empty() {
        return;
    }
    doc.diagnostics.extend(found);
    crate::syntax::sort_in_document_order(&mut doc.diagnostics);
}

/// What [`check`] finds in the prose of `source` between `units` (their
/// spans, in document order) read as `dialect`, `tasks` telling whether
/// the document holds a task: near misses and other formats' edits.
pub(crate) fn in_prose(
    source: &str,
    units: &[Span],
    tasks: bool,
    dialect: Dialect,
) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    if dialect == Dialect::Aider {
        aider_near_misses(source, units, &mut found);
    }
    if dialect == Dialect::Codex {
        codex_strays(source, units, &mut found);
    }
    if tasks {
        found.extend(between(source, units, dialect));
    } else {
        found.extend(foreign(source, dialect));
    }
    found
}

/// The errors of this module in `diagnostics` of `source`, a part of a
/// longer text (a unit of a stream) that starts `lines` lines into it: the
/// line their message names made the longer text's.
pub(crate) fn renumber(diagnostics: &mut [Diagnostic], source: &str, lines: usize) {
    let mut index = None;
    for d in diagnostics
        .iter_mut()
        .filter(|d| d.kind == K::ForeignFormat)
    {
        let Some((_, rest)) = d
            .message
            .strip_prefix("line ")
            .and_then(|m| m.split_once(" starts "))
        else {
            continue;
        };
        let index = index.get_or_insert_with(|| crate::syntax::LineIndex::new(source));
        let line = index.position(d.span.start).line + lines;
        d.message = format!("line {line} starts {rest}").into();
    }
}

/// The errors for the formats that `dialect` does not read in the prose
/// between `units` (their spans, in document order) of a document that
/// holds tasks: each run of prose on its own, and the help says to send
/// those edits again in `dialect`.
pub(crate) fn between(source: &str, units: &[Span], dialect: Dialect) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    // The line a run starts on, counted from the end of the run before.
    let (mut line, mut counted) = (0, 0);
    for (from, to) in gaps(source.len(), units) {
        let seen = source.get(counted..from).unwrap_or_default();
        line += memchr::memchr_iter(b'\n', seen.as_bytes()).count();
        counted = from;
        if may_hold_edits(source.get(from..to).unwrap_or_default()) {
            found.extend(foreign_in(source, from, to, line, dialect, true));
        }
    }
    found
}

/// The runs of prose between `units` (their spans, in document order) of
/// a text `len` bytes long, each as its start and end.
fn gaps(len: usize, units: &[Span]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    units
        .iter()
        .map(|u| (u.start, u.end))
        .chain([(len, len)])
        .filter_map(move |(to, next)| {
            let gap = (to > from).then_some((from, to));
            from = from.max(next);
            gap
        })
}

/// Whether a run of prose has a line that any format's first line could
/// be (each starts with `<`, `*`, `-`, `@` or `diff --git`, white space
/// aside): most
/// runs between units are blank lines and words, passed over in one look.
fn may_hold_edits(prose: &str) -> bool {
    prose.lines().any(|l| {
        let t = l.trim_start();
        matches!(t.as_bytes().first(), Some(b'<' | b'*' | b'-' | b'@'))
            || t.starts_with("diff --git ")
    })
}

/// The errors for the formats in `source` that `dialect` does not read
/// (the document holds no task), and for codex's markers written almost
/// right.
pub(crate) fn foreign(source: &str, dialect: Dialect) -> Vec<Diagnostic> {
    foreign_in(source, 0, source.len(), 0, dialect, false)
}

/// [`foreign`] of `source[from..to]`, whose first line is the document's
/// line `line_base` (0-based); `mixed`: the document holds tasks of
/// `dialect`, so the help says to send these edits in it.
fn foreign_in(
    source: &str,
    from: usize,
    to: usize,
    line_base: usize,
    dialect: Dialect,
    mixed: bool,
) -> Vec<Diagnostic> {
    let lines = lines_in(source, from, to);
    let source = source.get(from..to).unwrap_or_default();
    let mut out = Vec::new();
    for &(format, what, reader) in FORMATS {
        if reader == Some(dialect) {
            continue;
        }
        let Some(at) = first(format, source, &lines, mixed, dialect) else {
            continue;
        };
        let line = &lines[at];
        let span = line.span();
        let help = match reader {
            Some(_) if mixed => format!(
                "the rest of this document is read as {dialect}: send these edits again as {dialect}, or alone in a reply of their own"
            ),
            Some(d) => format!(
                "read the document with `--dialect {d}` (a whole document also with `--dialect auto`; a stream, `--stream --dialect {d}`), or send these edits as clada tasks"
            ),
            None => "clada does not read this format: send these edits as clada SEARCH tasks (`clada prompt` shows how)".to_owned(),
        };
        out.push(
            Diagnostic::new(
                K::ForeignFormat,
                span,
                format!(
                    "line {} starts {what}, which the {dialect} dialect does not read: none of its edits was applied",
                    line_base + at + 1
                ),
            )
            .with_help(help),
        );
    }
    for line in &lines {
        if let Some(fixed) = codex_near_miss(line.text) {
            let span = line.span();
            out.push(
                Diagnostic::new(
                    K::MalformedMarker,
                    span,
                    format!(
                        "`{}` is almost codex's `{fixed}`, so the patch is not read",
                        line.text.trim()
                    ),
                )
                .with_fix(span, fixed)
                .with_help(format!("write the line as `{fixed}`")),
            );
        }
    }
    out
}

/// The index of the line where the first block of `format` starts. One
/// pass over the lines: what a block needs further down is looked up once.
fn first<'a>(
    format: Format,
    source: &str,
    lines: &[Line<'a>],
    mixed: bool,
    dialect: Dialect,
) -> Option<usize> {
    let line = |i: usize| lines.get(i).map_or("", |l| l.text);
    // A hunk without a header after a codex patch's first line, or after a
    // codex file operation (read as codex, one outside a patch), is the
    // patch's (codex writes its chunks so).
    let codex_at = match format {
        Format::UnifiedDiff => lines.iter().position(|l| {
            super::codex::is_begin(l.text)
                || (dialect == Dialect::Codex && super::codex::is_file_operation(l.text.trim_end()))
        }),
        _ => None,
    };
    let last = |test: &dyn Fn(&str) -> bool| lines.iter().rposition(|l| test(l.text));
    let last_end = match format {
        Format::Cline => last(&|l| is_cline(l, '+', "REPLACE")),
        Format::Gptme => last(&|l| l.trim_end() == ">>>>>>> UPDATED"),
        _ => None,
    };
    let later = |from: usize| last_end.is_some_and(|k| k >= from);
    let cml_end = format == Format::Cml && source.contains("</edit>");
    (0..lines.len()).find(|&i| {
        let t = line(i);
        match format {
            Format::Clada => crate::syntax::classify(t, 1).is_some_and(|m| {
                m.shape == crate::syntax::Shape::Opener
                    && m.keyword.is_some()
                    && !m.rest().is_empty()
            }),
            Format::Aider => {
                super::aider::is_head(t)
                    && super::aider::file_name(
                        &lines[i.saturating_sub(3)..i]
                            .iter()
                            .map(|l| l.text)
                            .collect::<Vec<_>>(),
                    )
                    .is_some()
            }
            Format::Codex => super::codex::is_begin(t),
            // Between the units of a document with tasks, only an element
            // at the start of its line: prose that names one (`the <run>
            // step`) does not fail a good document.
            Format::Cml if mixed => {
                let t = t.trim_start();
                super::cml::has_elements(t)
                    && super::cml::first_unit(t).is_some_and(|(_, at)| at == 0)
            }
            Format::Cml => super::cml::has_elements(t) || (cml_end && t.contains("<edit")),
            // A file's headers (a `diff --git` line alone: a rename), or a
            // hunk with or without numbers (`@@`, `@@ ... @@`, as aider's
            // udiff writes), indented as a whole or not.
            Format::UnifiedDiff => {
                super::udiff::starts_diff(&line, i)
                    && (codex_at.is_none_or(|c| c > i)
                        || !super::udiff::is_hunk_header(t.trim_start()))
            }
            Format::Cline => {
                // A call of either tool at the start of its line, closed
                // or not.
                let t = t.trim_start();
                (is_cline(t, '-', "SEARCH") && later(i + 1))
                    || ["<replace_in_file>", "<apply_diff>", "<write_to_file>"]
                        .iter()
                        .any(|tag| t.starts_with(tag))
            }
            Format::Gptme => t.trim_end() == "<<<<<<< ORIGINAL" && later(i + 1),
        }
    })
}

/// Where in `source`, a run of prose the text goes on after, a block of
/// another format may have started without its end in `source` yet: at the
/// earliest opener of any format with no closer of its own after it (a
/// Cline `SEARCH`, a gptme `ORIGINAL`, a CML `<edit` tag), else at the last
/// two lines (a diff's `---`, `+++` and `@@` lines read together). What
/// comes before is done with: no block it starts can end later. One pass.
pub(crate) fn unfinished(source: &str) -> usize {
    let lines = lines(source);
    let mut keep = lines.len().saturating_sub(2);
    let (mut cline_end, mut gptme_end, mut cml_end) = (false, false, false);
    for (i, line) in lines.iter().enumerate().rev() {
        let t = line.text;
        cline_end |= closes(t, Closer::Cline);
        gptme_end |= closes(t, Closer::Gptme);
        cml_end |= closes(t, Closer::Cml);
        let opens = (!cline_end && is_cline(t, '-', "SEARCH"))
            || (!gptme_end && t.trim_end() == "<<<<<<< ORIGINAL")
            || (!cml_end && has_tag(t, "<edit"));
        if opens {
            keep = keep.min(i);
        }
    }
    lines.get(keep).map_or(source.len(), |l| l.start)
}

/// A line that can end a block of another format begun before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Closer {
    Cline,
    Gptme,
    Cml,
}

/// Whether `line` ends a block of the format of `closer`.
pub(crate) fn closes(line: &str, closer: Closer) -> bool {
    match closer {
        Closer::Cline => is_cline(line, '+', "REPLACE"),
        Closer::Gptme => line.trim_end() == ">>>>>>> UPDATED",
        Closer::Cml => line.contains("</edit>"),
    }
}

/// Whether `line` holds the tag `tag` (`<edit`) as a tag: followed by
/// white space, `>`, `/` or the line's end, never `<editor>`.
fn has_tag(line: &str, tag: &str) -> bool {
    line.match_indices(tag).any(|(i, _)| {
        matches!(
            line[i + tag.len()..].chars().next(),
            None | Some(' ' | '\t' | '>' | '/')
        )
    })
}

/// Cline's `------- SEARCH` and `+++++++ REPLACE`: a run of `c`, then the
/// word.
fn is_cline(line: &str, c: char, word: &str) -> bool {
    let t = line.trim();
    let n = t.chars().take_while(|&x| x == c).count();
    n >= 3 && t[n..].trim() == word
}

/// The line codex meant, when `text` is almost one of its envelope lines
/// (`***Begin Patch`, `*** begin patch`, `** End Patch`) but is not one.
fn codex_near_miss(text: &str) -> Option<&'static str> {
    let t = text.trim();
    let stars = t.chars().take_while(|&c| c == '*').count();
    if stars < 2 {
        return None;
    }
    let words: String = t[stars..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    let fixed = match words.as_str() {
        "begin patch" => "*** Begin Patch",
        "end patch" => "*** End Patch",
        _ => return None,
    };
    (t != fixed).then_some(fixed)
}

/// aider's SEARCH and REPLACE lines written almost right, outside every
/// block read: errors, each with the line as aider reads it.
/// The lines of `source` that start outside `units` (their spans, in
/// document order), found in the runs between them: a document of many
/// units costs no list of all its lines.
fn prose_lines<'a, 'u>(
    source: &'a str,
    units: &'u [Span],
) -> impl Iterator<Item = Line<'a>> + use<'a, 'u> {
    gaps(source.len(), units).flat_map(move |(from, to)| {
        // A run that starts inside a line (after a unit that ends there)
        // starts at the next line.
        let bytes = source.as_bytes();
        let at = if from > 0 && bytes.get(from - 1) != Some(&b'\n') {
            memchr::memchr(b'\n', &bytes[from..to]).map_or(to, |i| from + i + 1)
        } else {
            from
        };
        super::lines::lines_between(source, at, to)
    })
}

/// A codex file operation outside any patch (after its `*** End Patch`,
/// or with no `*** Begin Patch`): an error, never prose.
fn codex_strays(source: &str, units: &[Span], out: &mut Vec<Diagnostic>) {
    for Line { start, text } in prose_lines(source, units) {
        if !super::codex::is_file_operation(text.trim_end()) {
            continue;
        }
        out.push(
            Diagnostic::new(
                K::MalformedMarker,
                Span::new(start, start + text.len()),
                format!(
                    "`{}` is outside a patch, so it is not applied",
                    text.trim()
                ),
            )
            .with_help("put every file operation between `*** Begin Patch` and `*** End Patch`, and send it again"),
        );
    }
}

fn aider_near_misses(source: &str, units: &[Span], out: &mut Vec<Diagnostic>) {
    for Line { start, text } in prose_lines(source, units) {
        let Some(fixed) = aider_meant(text) else {
            continue;
        };
        let span = Span::new(start, start + text.len());
        out.push(
            Diagnostic::new(
                K::MalformedMarker,
                span,
                format!(
                    "`{}` is almost aider's `{fixed}`, so this block is read as prose",
                    text.trim()
                ),
            )
            .with_fix(span, fixed)
            .with_help(format!("write the line as `{fixed}`")),
        );
    }
}

/// The line aider meant, when `text` is almost its SEARCH or REPLACE line:
/// another number of characters, no space after them, the word in another
/// case, or more than one `>` after SEARCH.
fn aider_meant(text: &str) -> Option<&'static str> {
    let t = text.trim();
    let (c, fixed, word) = match t.chars().next()? {
        '<' => ('<', "<<<<<<< SEARCH", "search"),
        '>' => ('>', ">>>>>>> REPLACE", "replace"),
        _ => return None,
    };
    let n = t.chars().take_while(|&x| x == c).count();
    if n < 3 {
        return None;
    }
    let rest = t[n..].trim().trim_end_matches('>').trim_end();
    if !rest.eq_ignore_ascii_case(word) {
        return None;
    }
    let line = format!("{text}\n");
    let accepted = if c == '<' {
        super::aider::is_head(&line)
    } else {
        super::aider::is_updated(&line)
    };
    (!accepted).then_some(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, dialect: Dialect) -> Vec<(K, String)> {
        foreign(text, dialect)
            .into_iter()
            .map(|d| (d.kind, d.message.into_owned()))
            .collect()
    }

    #[test]
    fn each_foreign_format_is_named() {
        let diff = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
        let ks = kinds(diff, Dialect::Clada);
        assert_eq!(ks.len(), 1);
        assert!(ks[0].1.contains("a unified diff"), "{ks:?}");
        let cline = "x.py\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n";
        assert!(kinds(cline, Dialect::Clada)[0].1.contains("Cline"));
        // Each names the dialect that reads it; gptme's, none.
        let help = |text: &str| {
            foreign(text, Dialect::Clada)[0]
                .help
                .clone()
                .unwrap_or_default()
        };
        assert!(help(diff).contains("--dialect udiff"), "{}", help(diff));
        assert!(help(cline).contains("--dialect cline"), "{}", help(cline));
        assert!(kinds(diff, Dialect::Udiff).is_empty());
        assert!(kinds(cline, Dialect::Cline).is_empty());
        let gptme = "```patch x.py\n<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED\n```\n";
        assert!(kinds(gptme, Dialect::Clada)[0].1.contains("gptme"));
        assert!(help(gptme).contains("does not read this format"));
        let codex = "*** Begin Patch\n*** Update File: a\n@@\n-a\n+b\n*** End Patch\n";
        assert!(kinds(codex, Dialect::Clada)[0].1.contains("codex"));
        assert!(kinds(codex, Dialect::Codex).is_empty());
        assert!(kinds("just prose\n--- not a diff\n", Dialect::Clada).is_empty());
        // A diff in a list item, a rename alone, a bare hunk, a write
        // call: each edit-shaped, each named.
        for (text, what) in [
            (
                "1. Fix:\n\n   --- a/y\n   +++ b/y\n   @@ ... @@\n   -e\n   +f\n",
                "a unified diff",
            ),
            (
                "diff --git a/o b/n\nsimilarity index 100%\nrename from o\nrename to n\n",
                "a unified diff",
            ),
            ("```diff\n@@\n-a\n+b\n```\n", "a unified diff"),
            ("@@ ... @@\n a\n-b\n", "a unified diff"),
            (
                "<write_to_file>\n<path>a</path>\n<content>\nx\n</content>\n</write_to_file>\n",
                "write_to_file",
            ),
        ] {
            let ks = kinds(text, Dialect::Clada);
            assert!(
                ks.first().is_some_and(|k| k.1.contains(what)),
                "{text}: {ks:?}"
            );
            assert!(
                kinds(text, Dialect::Aider)
                    .first()
                    .is_some_and(|k| k.1.contains(what)),
                "{text}"
            );
        }
        // Prose that names `@@` or `diff --git`, and a codex patch's own
        // `@@` lines, are not a diff.
        assert!(kinds("@@ is how a hunk starts\n- a list item\n", Dialect::Clada).is_empty());
        assert!(kinds("run diff --git on it\n", Dialect::Clada).is_empty());
        let codex = "*** Begin Patch\n*** Update File: a\n@@\n-a\n+b\n*** End Patch\n";
        assert_eq!(kinds(codex, Dialect::Clada).len(), 1);
        // A hunk line without numbers, under file headers, is a diff too.
        for bare in ["@@", "@@ @@", "@@ ... @@"] {
            let diff = format!("--- a/f.txt\n+++ b/f.txt\n{bare}\n-hello\n+bye\n");
            let ks = kinds(&diff, Dialect::Clada);
            assert!(ks[0].1.contains("a unified diff"), "{bare}: {ks:?}");
        }
    }

    /// Between units, prose that names a CML element is no edit; an
    /// element at the start of its line is.
    #[test]
    fn prose_that_names_an_element_between_units_is_not_an_edit() {
        let said = |text: &str| {
            let doc = crate::dialect::parse_dialect(text, Dialect::Clada, Default::default());
            let found = doc
                .diagnostics
                .iter()
                .filter(|d| d.kind == K::ForeignFormat);
            found.count()
        };
        let task = "<<<<<<< WRITE path=\"w\"\nx\n>>>>>>> END\n";
        assert_eq!(
            said(&format!(
                "I dropped the `<run>` step and the <tasks> wrapper.\n{task}"
            )),
            0
        );
        assert_eq!(
            said(&format!("{task}Also:\n<write path=\"v\">y</write>\n")),
            1
        );
    }

    #[test]
    fn near_misses_of_codex_and_aider_are_errors_with_a_fix() {
        let ds = foreign("***Begin Patch\n", Dialect::Clada);
        assert_eq!(ds.len(), 1);
        assert_eq!(
            ds[0].fix.as_ref().map(|f| f.replacement.as_str()),
            Some("*** Begin Patch")
        );
        for line in [
            "<<<<<<<SEARCH",
            "<<<<<<< SEARCH>>",
            "<<<< SEARCH",
            "<<<<<<<<<<< SEARCH",
            "<<<<<<< search",
        ] {
            assert_eq!(aider_meant(line), Some("<<<<<<< SEARCH"), "{line}");
        }
        assert_eq!(aider_meant(">>>>>>>REPLACE"), Some(">>>>>>> REPLACE"));
        assert_eq!(aider_meant("<<<<<<< SEARCH"), None);
        assert_eq!(aider_meant("<<<<<<< SEARCH>"), None);
        assert_eq!(aider_meant("<<<<<<< HEAD"), None);
    }
}
