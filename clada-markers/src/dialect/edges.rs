//! Where a unit of each dialect can end and begin, a line at a time: what a
//! stream of another dialect than clada's (PROTOCOL §11.5) waits for before
//! it parses what it holds. A line is only a hint: the dialect's parser
//! decides what the text holds.

use super::Dialect;

/// What a line of a stream says of the units before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    /// Nothing ends here.
    None,
    /// The line may end a unit (aider's `>>>>>>> REPLACE`, `*** End
    /// Patch`, `</write>`, the end of a Cline call): the units up to and
    /// with it may be complete.
    Ends,
    /// The line cannot go on a unit before it (a unified diff's file ends
    /// at a line that is no hunk's and no header's): the units before it
    /// may be complete; the line itself may start the next.
    Before,
}

/// How far above the line a unit begins on the unit's text may start:
/// aider's and Cline's file-name line is up to three lines above the
/// `SEARCH` line, past a fence.
pub(crate) const LOOKBACK: usize = 4;

/// The line-by-line view of one dialect's units, with the little it must
/// remember: whether a Cline call is open, and which CML element (their
/// inner closers end nothing).
#[derive(Clone, Debug, Default)]
pub(crate) struct Edges {
    dialect: Dialect,
    open: bool,
    /// The end tag of the CML unit open (`</write>`).
    element: Option<&'static str>,
    /// Inside a CML CDATA section or comment: the text that ends it.
    skipping: Option<&'static str>,
    /// The Cline call open is a `write_to_file`, and inside its
    /// `<content>` (a file's text, where the call's closing tag ends
    /// nothing).
    writing: bool,
    content: bool,
}

impl Edges {
    pub(crate) fn new(dialect: Dialect) -> Edges {
        Edges {
            dialect,
            ..Edges::default()
        }
    }

    /// What `line` (with or without its line break) says; takes note of
    /// what it opens and closes.
    pub(crate) fn line(&mut self, line: &str) -> Edge {
        let t = line.trim_end_matches(['\n', '\r']);
        match self.dialect {
            Dialect::Clada => Edge::None,
            Dialect::Aider => ends(super::aider::is_updated(t)),
            Dialect::Codex => ends(t.trim() == super::codex::END),
            Dialect::Cline => {
                // A file's text in a `write_to_file` call ends at the
                // first `</content>`, as the parser reads it.
                let mut t = t;
                if self.content {
                    let Some(i) = t.find("</content>") else {
                        return Edge::None;
                    };
                    self.content = false;
                    t = &t[i + "</content>".len()..];
                }
                // The last call tag on the line says whether one is open:
                // a line that closes a call and opens the next ends
                // nothing yet.
                let last = |tags: [&str; 3]| tags.iter().filter_map(|tag| t.rfind(tag)).max();
                let opened = last(["<replace_in_file>", "<apply_diff>", "<write_to_file>"]);
                let closed = last(["</replace_in_file>", "</apply_diff>", "</write_to_file>"]);
                let edge = match (opened, closed) {
                    (Some(o), c) if c.is_none_or(|c| o > c) => {
                        self.open = true;
                        self.writing = t[o..].starts_with("<write_to_file>");
                        Edge::None
                    }
                    (_, Some(_)) => {
                        self.open = false;
                        Edge::Ends
                    }
                    _ => ends(!self.open && super::cline::is_free_end(t)),
                };
                if self.open
                    && self.writing
                    && let Some(c) = t.rfind("<content>")
                    && !t[c..].contains("</content>")
                {
                    self.content = true;
                }
                edge
            }
            Dialect::Cml => ends(self.cml_line(t)),
            Dialect::Udiff => {
                if goes_on_a_diff(t) {
                    Edge::None
                } else {
                    Edge::Before
                }
            }
        }
    }

    /// Whether a unit may begin at `line` (its text, or the lines
    /// [`LOOKBACK`] above it).
    pub(crate) fn opens(&self, line: &str) -> bool {
        let t = line.trim_end_matches(['\n', '\r']);
        match self.dialect {
            Dialect::Clada => false,
            Dialect::Aider => super::aider::is_head(t),
            Dialect::Codex => super::codex::is_begin(t),
            Dialect::Cline => {
                t.contains("<replace_in_file>")
                    || t.contains("<apply_diff>")
                    || t.contains("<write_to_file>")
                    || super::cline::is_free_start(t)
            }
            Dialect::Cml => super::cml::starts_unit(t),
            // A diff indented as a whole (in a list item) is read too.
            Dialect::Udiff => {
                let t = t.trim_start();
                t.starts_with("diff ") || t.starts_with("--- ")
            }
        }
    }

    /// Reads a CML line from start to end: the units it opens and closes,
    /// passing over the CDATA sections and comments inside a unit (a
    /// `</write>` in a CDATA body ends nothing). Whether a unit ended on it and none is open at
    /// its end (a line that ends one unit and opens the next ends nothing
    /// yet: the next one's end does).
    fn cml_line(&mut self, line: &str) -> bool {
        const CDATA: (&str, &str) = ("<![CDATA[", "]]>");
        const COMMENT: (&str, &str) = ("<!--", "-->");
        let mut rest = line;
        let mut ended = false;
        loop {
            if let Some(close) = self.skipping {
                let Some(i) = rest.find(close) else { break };
                self.skipping = None;
                rest = &rest[i + close.len()..];
                continue;
            }
            // The first of: a CDATA section or a comment in the open unit,
            // its end tag, or (none open) the start tag of a unit, found
            // anywhere as the parser finds it (in a comment of prose too).
            let skip = [CDATA, COMMENT]
                .into_iter()
                .filter(|_| self.element.is_some())
                .filter_map(|(open, close)| rest.find(open).map(|i| (i, open.len(), close)))
                .min();
            let tag = match self.element {
                Some(end) => rest.find(end).map(|i| (i, None)),
                None => super::cml::first_unit(rest).map(|(name, i)| (i, Some(name))),
            };
            match (skip, tag) {
                (Some((i, n, close)), t) if t.is_none_or(|(j, _)| i < j) => {
                    self.skipping = Some(close);
                    rest = &rest[i + n..];
                }
                (_, Some((i, None))) => {
                    self.element = None;
                    ended = true;
                    rest = &rest[i + 1..];
                }
                (_, Some((i, Some(name)))) => {
                    let tag = &rest[i..];
                    match tag.find('>') {
                        Some(j) if tag[..j].ends_with('/') => ended = true,
                        _ => self.element = Some(end_tag(name)),
                    }
                    rest = &tag[tag.find('>').map_or(1, |j| j + 1)..];
                }
                _ => break,
            }
        }
        ended && self.element.is_none()
    }
}

/// The end tag of the CML unit `name` (one of `cml`'s units).
fn end_tag(name: &str) -> &'static str {
    match name {
        "tasks" => "</tasks>",
        "write" => "</write>",
        "edit" => "</edit>",
        "move" => "</move>",
        "remove" => "</remove>",
        _ => "</run>",
    }
}

fn ends(yes: bool) -> Edge {
    if yes { Edge::Ends } else { Edge::None }
}

/// Whether `line` can be part of a unified diff's file section: blank, a
/// hunk's line (` `, `-`, `+`, `\`, `@@`, indented ones too), or one of
/// git's extended headers.
fn goes_on_a_diff(line: &str) -> bool {
    match line.as_bytes().first() {
        None | Some(b' ' | b'\t' | b'-' | b'+' | b'\\' | b'@') => true,
        // A file's `diff --git` line ends the file before it.
        _ if line.starts_with("diff --git ") => false,
        _ => super::udiff::EXTENDED.iter().any(|h| line.starts_with(h)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(dialect: Dialect, text: &str) -> Vec<Edge> {
        let mut e = Edges::new(dialect);
        text.lines().map(|l| e.line(l)).collect()
    }

    #[test]
    fn each_dialect_ends_its_units_where_its_closers_are() {
        use Edge::{Before, Ends, None as N};
        let aider = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n";
        assert_eq!(edges(Dialect::Aider, aider), [N, N, N, N, N, N, Ends, N]);
        let codex = "*** Begin Patch\n*** Add File: a\n+a\n*** End Patch\n";
        assert_eq!(edges(Dialect::Codex, codex), [N, N, N, Ends]);
        // Inside a call, a block's REPLACE ends nothing: the call does.
        let cline = "<replace_in_file>\n<path>a</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n</replace_in_file>\na.py\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n";
        assert_eq!(
            edges(Dialect::Cline, cline),
            [N, N, N, N, N, N, N, N, N, Ends, N, N, N, N, N, Ends]
        );
        // Inside `<tasks>`, only its end; inside a `<write>`, only its.
        let cml = "<tasks>\n<write path=\"a\">x</write>\n</tasks>\n<remove path=\"b\"/>\n<edit path=\"c\">\n<search>x</search>\n</edit>\n<write path=\"d\"><![CDATA[</run>\n<a/>\n]]></write>\n";
        assert_eq!(
            edges(Dialect::Cml, cml),
            [N, N, Ends, Ends, N, N, Ends, N, N, Ends]
        );
        let udiff = "diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n\n x\n```\ndiff --git a/b b/b\n";
        assert_eq!(
            edges(Dialect::Udiff, udiff),
            [Before, N, N, N, N, N, N, N, N, Before, Before]
        );
    }

    /// A line that closes a unit and opens the next ends nothing yet (the
    /// next one's end does), and an end tag inside a CML body's CDATA or
    /// comment ends nothing: else a stream would cut the open unit in two.
    #[test]
    fn a_line_that_opens_the_next_unit_or_an_end_tag_in_cdata_ends_nothing() {
        use Edge::{Ends, None as N};
        let cml = "<write path=\"a\">A</write><write path=\"b\">\nB\n</write>\n<remove path=\"c\"/><tasks>\n<run>ls</run>\n</tasks>\n";
        assert_eq!(edges(Dialect::Cml, cml), [N, N, Ends, N, N, Ends]);
        let cdata = "<write path=\"p\"><![CDATA[\n</write>\n]]></write>\n<write path=\"q\"><!-- </write>\n--></write>\n";
        assert_eq!(edges(Dialect::Cml, cdata), [N, N, Ends, N, Ends]);
        // Prose outside a unit is read as the parser reads it: a start
        // tag in a comment there is one.
        assert_eq!(edges(Dialect::Cml, "<!-- <remove path=\"x\"/>\n"), [Ends]);
        let cline = "<replace_in_file>\n<path>a</path>\n<diff>\n------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n</diff>\n</replace_in_file><replace_in_file>\n<path>b</path>\n</replace_in_file>\n";
        let seen = edges(Dialect::Cline, cline);
        assert_eq!(seen[9..], [N, N, Ends]);
        assert!(seen[..9].iter().all(|e| *e == N), "{seen:?}");
    }

    #[test]
    fn each_cml_unit_has_its_own_end_tag() {
        for name in ["tasks", "write", "edit", "move", "remove", "run"] {
            assert_eq!(end_tag(name), format!("</{name}>"));
        }
    }

    #[test]
    fn openers_are_each_dialects_first_line() {
        let e = |d| Edges::new(d);
        assert!(e(Dialect::Aider).opens("<<<<<<< SEARCH"));
        assert!(e(Dialect::Codex).opens("*** Begin Patch"));
        assert!(e(Dialect::Cline).opens("<replace_in_file>"));
        assert!(e(Dialect::Cline).opens("------- SEARCH"));
        assert!(e(Dialect::Cml).opens("<write path=\"a\">"));
        assert!(e(Dialect::Udiff).opens("diff --git a/a b/a"));
        // A diff indented as a whole, as the parser reads it.
        assert!(e(Dialect::Udiff).opens("   --- a/a"));
        assert!(!e(Dialect::Udiff).opens("plain words"));
        assert!(!e(Dialect::Cml).opens("<editor>"));
    }
}
