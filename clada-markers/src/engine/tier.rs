//! Matching beyond exact text, line by line (PROTOCOL §3): clada's
//! white-space tier and codex's passes, and how a replacement is
//! re-indented to stand where its search text was found shifted.
//!
//! Pure functions of bytes: a search text is split into lines once
//! ([`Lines`]), and a line of the file is compared with a line of the
//! search under a [`Pass`]. What a comparison finds is the indentation
//! [`Delta`] between the two: an occurrence is applied only when every
//! non-blank line has the same one, and the replacement is then written
//! shifted by it ([`write_shifted`]). Nothing here decides counts or
//! reads a file: `seek` does.

use std::borrow::Cow;

use crate::status::{IndentProblem, Matched, Shift};
use crate::syntax::Policy;

/// How a line of the file is compared with a line of the search once no
/// exact occurrence exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// clada's white-space tier: one uniform indentation shift, white
    /// space at line ends ignored, blank lines match blank lines.
    Whitespace,
    /// codex: white space at line ends ignored, indentation as written.
    Trailing,
    /// codex: white space at both ends ignored (clada: one uniform shift).
    Trimmed,
    /// codex: as trimmed, with Unicode dashes, quotes and spaces read as
    /// ASCII.
    Unicode,
}

impl Pass {
    pub(crate) fn matched(self) -> Matched {
        match self {
            Pass::Whitespace => Matched::Whitespace,
            Pass::Trailing => Matched::Trailing,
            Pass::Trimmed => Matched::Trimmed,
            Pass::Unicode => Matched::Unicode,
        }
    }
}

/// The passes an edit of `policy` may use after the exact search; none
/// when `loose` is off (`--match exact`).
pub(crate) fn passes(policy: Policy, loose: bool) -> &'static [Pass] {
    match (loose, policy) {
        (false, _) => &[],
        (true, Policy::Clada) => &[Pass::Whitespace],
        (true, Policy::Codex) => &[Pass::Trailing, Pass::Trimmed, Pass::Unicode],
    }
}

/// Spaces and tabs: indentation, and the white space at line ends the
/// passes ignore.
pub(crate) fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The indentation of a line: its leading spaces and tabs.
pub(crate) fn indent(line: &[u8]) -> &[u8] {
    let n = line.iter().take_while(|&&b| is_space(b)).count();
    &line[..n]
}

/// Whether a line holds nothing but spaces and tabs.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_space(b))
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b.iter().rev().take_while(|&&c| is_space(c)).count();
    &b[..b.len() - n]
}

/// How the file's indentation of a line differs from the search's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Delta {
    Zero,
    /// The file indents by these characters more.
    Deeper(Vec<u8>),
    /// The file indents by these characters less.
    Shallower(Vec<u8>),
}

impl Delta {
    /// From the file's indentation of a line to the search's, when one is
    /// the other with characters added in front (`None`: tabs against
    /// spaces, say).
    pub(crate) fn between(file: &[u8], search: &[u8]) -> Option<Delta> {
        if file == search {
            Some(Delta::Zero)
        } else if file.ends_with(search) {
            Some(Delta::Deeper(file[..file.len() - search.len()].to_vec()))
        } else if search.ends_with(file) {
            Some(Delta::Shallower(
                search[..search.len() - file.len()].to_vec(),
            ))
        } else {
            None
        }
    }

    /// What a report says of it.
    pub(crate) fn shift(&self) -> Option<Shift> {
        let (by, chars) = match self {
            Delta::Zero => return None,
            Delta::Deeper(c) => (1, c),
            Delta::Shallower(c) => (-1, c),
        };
        Some(Shift {
            by: by * i64::try_from(chars.len()).unwrap_or(i64::MAX),
            indent: String::from_utf8_lossy(chars).into_owned(),
        })
    }
}

/// One line of a search text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line<'s> {
    /// Without its line feed.
    pub(crate) text: &'s [u8],
    /// It ends with a line feed (only a search's last line may not).
    pub(crate) complete: bool,
    /// It is compared with a whole line of the file: a complete line, or
    /// the last line of a line-based dialect's text (PROTOCOL §11), which
    /// ends where the file's line does. A partial line otherwise is
    /// compared with the start of the file's line.
    pub(crate) whole: bool,
}

impl Line<'_> {
    pub(crate) fn blank(&self) -> bool {
        is_blank(self.text)
    }
}

/// A search text split into lines, for the passes.
#[derive(Clone, Debug)]
pub(crate) struct Lines<'s> {
    pub(crate) lines: Vec<Line<'s>>,
    /// The first non-blank line: where candidates are looked for.
    pub(crate) pivot: usize,
}

impl<'s> Lines<'s> {
    /// `text` in lines, or `None` when the passes cannot look for it: it
    /// has no non-blank line, or it ends in a partial line that is blank
    /// (an occurrence would end inside an indentation). `whole_lines`: its
    /// last line, partial or not, is a whole line (a line-based dialect's
    /// text).
    pub(crate) fn new(text: &'s str, whole_lines: bool) -> Option<Lines<'s>> {
        let lines: Vec<Line<'s>> = text
            .as_bytes()
            .split_inclusive(|&b| b == b'\n')
            .map(|l| match l.strip_suffix(b"\n") {
                Some(t) => Line {
                    text: t,
                    complete: true,
                    whole: true,
                },
                None => Line {
                    text: l,
                    complete: false,
                    whole: whole_lines,
                },
            })
            .collect();
        let pivot = lines.iter().position(|l| !l.blank())?;
        if lines.last().is_some_and(|l| !l.whole && l.blank()) {
            return None;
        }
        Some(Lines { lines, pivot })
    }

    /// What candidates for the pivot line hold, whole (`true`: the line's
    /// content with white space at both ends trimmed) or at its start
    /// (`false`: a partial last line, after its indentation).
    pub(crate) fn pivot_body(&self) -> (&'s [u8], bool) {
        let l = self.lines[self.pivot];
        let body = &l.text[indent(l.text).len()..];
        if l.whole {
            (trim_end(body), true)
        } else {
            (body, false)
        }
    }

    /// The indentation of the first non-blank line.
    pub(crate) fn first_indent(&self) -> &'s [u8] {
        indent(self.lines[self.pivot].text)
    }
}

/// What comparing a file line with a search line found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    /// Both blank.
    Blank,
    /// The same text, indented by `Delta` more or less in the file.
    Same(Delta),
    /// The same text, with indentation in other characters (file, search).
    Characters,
    /// Different text.
    Differ,
}

/// Compares `file` (a line without its break) with the search line `s`
/// under `pass`. A partial search line that is not whole is compared with
/// the start of the file line's text.
pub(crate) fn compare(file: &[u8], s: &Line<'_>, pass: Pass) -> Cmp {
    if s.blank() {
        return if is_blank(file) {
            Cmp::Blank
        } else {
            Cmp::Differ
        };
    }
    let (fi, si) = (indent(file), indent(s.text));
    let (fb, sb) = (&file[fi.len()..], &s.text[si.len()..]);
    let same = match (pass, s.whole) {
        (_, false) => fb.starts_with(sb),
        (Pass::Unicode, true) => {
            let (Ok(f), Ok(t)) = (std::str::from_utf8(fb), std::str::from_utf8(sb)) else {
                return Cmp::Differ;
            };
            normalise(f) == normalise(t)
        }
        (_, true) => trim_end(fb) == trim_end(sb),
    };
    if !same {
        return Cmp::Differ;
    }
    match Delta::between(fi, si) {
        Some(Delta::Zero) => Cmp::Same(Delta::Zero),
        // codex's second pass keeps the indentation as written.
        Some(_) | None if pass == Pass::Trailing => Cmp::Differ,
        Some(d) => Cmp::Same(d),
        None => Cmp::Characters,
    }
}

/// codex's normalisation of a line (`seek_sequence`): white space at both
/// ends trimmed, and Unicode dashes, quotes and spaces read as ASCII.
pub(crate) fn normalise(s: &str) -> Cow<'_, str> {
    let t = s.trim();
    if t.is_ascii() {
        return Cow::Borrowed(t);
    }
    Cow::Owned(
        t.chars()
            .map(|c| match c {
                '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
                | '\u{2212}' => '-',
                '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
                '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
                '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
                | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
                | '\u{3000}' => ' ',
                other => other,
            })
            .collect(),
    )
}

/// Why a replacement cannot be re-indented, with the indentations to name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NotDetermined {
    pub(crate) problem: IndentProblem,
    /// Which line of the occurrence (0-based) the indentations are of.
    pub(crate) line: usize,
    pub(crate) file: Vec<u8>,
    pub(crate) search: Vec<u8>,
}

/// The replacement `replace` as written where an occurrence of `search`
/// was found shifted by `delta`: each non-blank line shifted, blank lines
/// as they are. `first_in_place`: the occurrence begins after the file's
/// indentation (a byte occurrence inside it), so the first line goes in
/// place and only the others are shifted. The replacement's first
/// non-blank line must be indented like the search's, and a shift that
/// takes indentation away must find it on every line.
pub(crate) fn write_shifted(
    search_indent: &[u8],
    replace: &str,
    delta: &Delta,
    first_in_place: bool,
) -> Result<String, IndentProblem> {
    let first = replace
        .split_inclusive('\n')
        .map(str::as_bytes)
        .find(|l| !is_blank(strip_break(l)))
        .map_or(&b""[..], |l| indent(l));
    if *delta == Delta::Zero {
        return Ok(replace.to_owned());
    }
    if first != search_indent && replace.bytes().any(|b| !is_space(b) && b != b'\n') {
        return Err(IndentProblem::Replacement);
    }
    let mut out = Vec::with_capacity(replace.len() + replace.len() / 8);
    for (i, line) in replace
        .as_bytes()
        .split_inclusive(|&b| b == b'\n')
        .enumerate()
    {
        if is_blank(strip_break(line)) || (i == 0 && first_in_place) {
            out.extend_from_slice(line);
            continue;
        }
        match delta {
            Delta::Zero => out.extend_from_slice(line),
            Delta::Deeper(add) => {
                out.extend_from_slice(add);
                out.extend_from_slice(line);
            }
            Delta::Shallower(take) => match line.strip_prefix(take.as_slice()) {
                Some(rest) => out.extend_from_slice(rest),
                None => return Err(IndentProblem::Shallow),
            },
        }
    }
    // Lines are split at line feeds and whole indentation strings added
    // or taken away: the result is text.
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()))
}

fn strip_break(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// `text` read back with the inverse of `delta`: what [`write_shifted`]
/// wrote, as the edit wrote it (for tests).
#[cfg(test)]
pub(crate) fn unshift(text: &str, delta: &Delta) -> String {
    let inverse = match delta {
        Delta::Zero => Delta::Zero,
        Delta::Deeper(c) => Delta::Shallower(c.clone()),
        Delta::Shallower(c) => Delta::Deeper(c.clone()),
    };
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        if is_blank(strip_break(line.as_bytes())) {
            out.push_str(line);
            continue;
        }
        match &inverse {
            Delta::Zero => out.push_str(line),
            Delta::Deeper(c) => {
                out.push_str(&String::from_utf8_lossy(c));
                out.push_str(line);
            }
            Delta::Shallower(c) => {
                let c = String::from_utf8_lossy(c);
                out.push_str(line.strip_prefix(c.as_ref()).unwrap_or(line));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t: &str) -> Line<'_> {
        match t.strip_suffix('\n') {
            Some(t) => Line {
                text: t.as_bytes(),
                complete: true,
                whole: true,
            },
            None => Line {
                text: t.as_bytes(),
                complete: false,
                whole: false,
            },
        }
    }

    #[test]
    fn a_line_compares_by_its_text_and_says_the_shift() {
        let deeper = |s: &str| Cmp::Same(Delta::Deeper(s.as_bytes().to_vec()));
        let w = Pass::Whitespace;
        assert_eq!(compare(b"    x = 1", &line("x = 1\n"), w), deeper("    "));
        assert_eq!(compare(b"\tx = 1  ", &line("x = 1\n"), w), deeper("\t"));
        assert_eq!(
            compare(b"  x", &line("    x\n"), w),
            Cmp::Same(Delta::Shallower(b"  ".to_vec()))
        );
        assert_eq!(compare(b"\tx", &line("    x\n"), w), Cmp::Characters);
        assert_eq!(compare(b"   ", &line("\n"), w), Cmp::Blank);
        assert_eq!(compare(b"x", &line("\n"), w), Cmp::Differ);
        assert_eq!(compare(b"x = 12", &line("x = 1\n"), w), Cmp::Differ);
        // A partial last line is the start of the file's line.
        assert_eq!(compare(b"  foo(bar)", &line("foo("), w), deeper("  "));
        // codex's second pass keeps the indentation.
        assert_eq!(
            compare(b"x = 1 \t", &line("x = 1\n"), Pass::Trailing),
            Cmp::Same(Delta::Zero)
        );
        assert_eq!(
            compare(b"  x = 1", &line("x = 1\n"), Pass::Trailing),
            Cmp::Differ
        );
        assert_eq!(
            compare(
                "  a \u{2014} “b”".as_bytes(),
                &line("a - \"b\"\n"),
                Pass::Unicode
            ),
            deeper("  ")
        );
    }

    #[test]
    fn a_search_without_text_is_no_tier_search() {
        assert!(Lines::new("\n  \n", false).is_none());
        assert!(Lines::new("x\n  ", false).is_none());
        let l = Lines::new("\n  foo(1)  \nbar", false).unwrap_or_else(|| panic!("lines"));
        assert_eq!(l.pivot, 1);
        assert_eq!(l.pivot_body(), (&b"foo(1)"[..], true));
        assert_eq!(l.first_indent(), b"  ");
    }

    #[test]
    fn the_replacement_is_shifted_in_the_file_s_characters() {
        let d = Delta::Deeper(b"\t".to_vec());
        assert_eq!(
            write_shifted(b"", "if a:\n    b\n\nc\n", &d, false),
            Ok("\tif a:\n\t    b\n\n\tc\n".to_owned())
        );
        // In place: the first line lands after the file's indentation.
        assert_eq!(
            write_shifted(b"", "x = 2\ny = 3\n", &d, true),
            Ok("x = 2\n\ty = 3\n".to_owned())
        );
        let up = Delta::Shallower(b"    ".to_vec());
        assert_eq!(
            write_shifted(b"    ", "    a\n        b\n", &up, false),
            Ok("a\n    b\n".to_owned())
        );
        assert_eq!(
            write_shifted(b"    ", "    a\n  b\n", &up, false),
            Err(IndentProblem::Shallow)
        );
        assert_eq!(
            write_shifted(b"  ", "    x = 2\n", &Delta::Deeper(b"  ".to_vec()), true),
            Err(IndentProblem::Replacement)
        );
        assert_eq!(
            unshift("\tif a:\n\t    b\n\n\tc\n", &d),
            "if a:\n    b\n\nc\n"
        );
    }

    #[test]
    fn codex_normalises_dashes_quotes_and_spaces() {
        assert_eq!(
            normalise("  a\u{2013}b \u{2018}c\u{2019} \u{201C}d\u{201D}\u{00A0}e "),
            "a-b 'c' \"d\" e"
        );
    }
}
