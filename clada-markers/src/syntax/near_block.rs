//! A near-miss block (PROTOCOL §2.1): an opener that is almost a marker
//! line, and the lines of its task up to its closer. Each bad marker line
//! of the block (opener, separator, SEARCH-END, closer) gets a diagnostic,
//! and the opener's carries one fix for the whole block: markers dedented,
//! recounted and in upper case, the body dedented with them when every
//! line carries the opener's indentation (a block indented in a Markdown
//! list). Applying it leaves no error behind: one round.
//!
//! The block is read from the text alone, never across another opener:
//! the work is the block's lines, whatever the document.

use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind};
use crate::syntax::span::Span;
use crate::syntax::suggest::nearest;
use crate::syntax::{Keyword, MIN_FENCE, Shape};

/// The shortest run a marker-like line has.
const MIN_RUN: usize = 5;
/// The longest fence a fix is given while it avoids the body's markers.
const MAX_FIX_FENCE: usize = 32;

/// A line that looks like a marker line, right or not.
#[derive(Clone, Debug)]
pub(crate) struct MarkerLike<'l> {
    pub(crate) shape: Shape,
    /// The leading white space.
    pub(crate) indent: &'l str,
    pub(crate) run: usize,
    /// Space or tab between the run and the word.
    pub(crate) spaced: bool,
    pub(crate) word: &'l str,
    /// The keyword the word stands for (itself, in another case, or
    /// misspelt).
    pub(crate) keyword: Option<Keyword>,
    /// What follows the word (attributes), trailing white space trimmed.
    pub(crate) tail: &'l str,
}

impl MarkerLike<'_> {
    /// Whether the line is a well-formed marker line.
    fn well_formed(&self) -> bool {
        self.indent.is_empty()
            && self.run >= MIN_FENCE
            && (self.spaced || self.word.is_empty())
            && self.keyword.is_none_or(|k| k.as_str() == self.word)
    }
}

/// `text` (a line without its break) read as a marker-like line.
pub(crate) fn read(text: &str) -> Option<MarkerLike<'_>> {
    let body = text.trim_start_matches([' ', '\t']);
    let indent = &text[..text.len() - body.len()];
    let shape = Shape::from_byte(*body.as_bytes().first()?)?;
    let run = body.bytes().take_while(|&b| b == shape.byte()).count();
    if run < MIN_RUN {
        return None;
    }
    let after = &body[run..];
    let rest = after.trim_start_matches([' ', '\t']);
    let word_len = rest.find([' ', '\t']).unwrap_or(rest.len());
    let (word, tail) = rest.split_at(word_len);
    Some(MarkerLike {
        shape,
        indent,
        run,
        spaced: after.len() > rest.len(),
        word,
        keyword: keyword_meant(shape, word),
        tail: tail.trim_end(),
    })
}

/// The keyword `word` stands for on a line of `shape`: the keyword itself,
/// in another case, or misspelt by a little (PROTOCOL §2.1). Only operation
/// keywords count.
pub(crate) fn keyword_meant(shape: Shape, word: &str) -> Option<Keyword> {
    if word.is_empty() {
        return None;
    }
    let names: Vec<&str> = match shape {
        // Every keyword but the closers' own.
        Shape::Opener => Keyword::ALL
            .into_iter()
            .filter(|k| !matches!(k, Keyword::End | Keyword::Replace))
            .map(Keyword::as_str)
            .collect(),
        Shape::Closer => [Keyword::End, Keyword::Replace, Keyword::Tasks]
            .map(Keyword::as_str)
            .to_vec(),
        Shape::Separator => Vec::new(),
    };
    let name = nearest(word, &names)?;
    Keyword::from_word(name)
}

/// What a line of the block is to its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Opener,
    Separator,
    SearchEnd,
    Closer,
    Content,
}

/// A near-miss block found: where it ends, its diagnostics, and the fix.
#[derive(Debug)]
pub(crate) struct Block {
    /// The end of the closer line's text.
    pub(crate) end: usize,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// The block opened by the near-miss line `opener` (its text, without the
/// break) at `start` of `src`, whose keyword is `keyword`; `fence` is the
/// open TASKS block's. `None` when the lines after it do not make a task
/// of that keyword up to a closer.
pub(crate) fn block(
    src: &str,
    start: usize,
    opener: &MarkerLike<'_>,
    keyword: Keyword,
    fence: Option<usize>,
    describe: &dyn Fn(&str, &MarkerLike<'_>) -> String,
) -> Option<Block> {
    let closer_keyword = match keyword {
        Keyword::Write | Keyword::Run | Keyword::Move | Keyword::Remove => Keyword::End,
        Keyword::Search | Keyword::Edit | Keyword::SearchStart => Keyword::Replace,
        _ => return None,
    };
    // The lines after the opener, to the closer.
    let mut lines: Vec<(usize, &str, &str, Role)> = Vec::new();
    let first_break = src[start..].find('\n').map_or(src.len(), |i| start + i);
    let opener_text = src[start..first_break].trim_end_matches('\r');
    lines.push((
        start,
        opener_text,
        &src[start + opener_text.len()..(first_break + 1).min(src.len())],
        Role::Opener,
    ));
    let mut at = (first_break + 1).min(src.len());
    let mut closed = false;
    while at < src.len() {
        let end = src[at..].find('\n').map_or(src.len(), |i| at + i);
        let text = src[at..end].trim_end_matches('\r');
        let brk = &src[at + text.len()..(end + 1).min(src.len())];
        let role = match read(text) {
            Some(m) if m.shape == Shape::Opener && m.keyword == Some(Keyword::SearchEnd) => {
                Role::SearchEnd
            }
            // Another task begins: this one has no closer.
            Some(m) if m.shape == Shape::Opener && m.keyword.is_some() => return None,
            Some(m) if m.shape == Shape::Separator && m.word.is_empty() => Role::Separator,
            Some(m) if m.shape == Shape::Closer => match m.keyword {
                Some(Keyword::End | Keyword::Replace) => Role::Closer,
                Some(_) => return None,
                None => Role::Content,
            },
            _ => Role::Content,
        };
        lines.push((at, text, brk, role));
        if role == Role::Closer {
            closed = true;
            break;
        }
        at = end + 1;
    }
    if !closed {
        return None;
    }
    // Which separator and SEARCH-END lines are the task's own.
    let like_opener =
        |text: &str| read(text).is_some_and(|m| m.indent == opener.indent && m.run == opener.run);
    let pick = |role: Role, lines: &[(usize, &str, &str, Role)]| -> Option<Option<usize>> {
        let all: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].3 == role).collect();
        match all.as_slice() {
            [] => Some(None),
            [one] => Some(Some(*one)),
            many => {
                let alike: Vec<usize> = many
                    .iter()
                    .copied()
                    .filter(|&i| like_opener(lines[i].1))
                    .collect();
                match alike.as_slice() {
                    [one] => Some(Some(*one)),
                    _ => None,
                }
            }
        }
    };
    let wants_separator = closer_keyword == Keyword::Replace;
    if !wants_separator {
        // A task closed by END has no separator: a line of `=` is its
        // content.
        for line in &mut lines {
            if line.3 == Role::Separator {
                line.3 = Role::Content;
            }
        }
    }
    let separator = pick(Role::Separator, &lines)?;
    let search_end = pick(Role::SearchEnd, &lines)?;
    let wants_end = keyword == Keyword::SearchStart;
    if wants_separator != separator.is_some() || wants_end != search_end.is_some() {
        return None;
    }
    if let (Some(e), Some(s)) = (search_end, separator)
        && e > s
    {
        return None;
    }
    for (i, line) in lines.iter_mut().enumerate() {
        if line.3 == Role::Separator && Some(i) != separator
            || line.3 == Role::SearchEnd && Some(i) != search_end
        {
            line.3 = Role::Content;
        }
    }
    // Dedent the body too when every line carries the opener's
    // indentation.
    let dedent = !opener.indent.is_empty()
        && lines
            .iter()
            .all(|l| l.1.trim().is_empty() || l.1.starts_with(opener.indent));
    let body = |text: &str| -> String {
        if dedent {
            text.strip_prefix(opener.indent)
                .unwrap_or(text.trim_start())
                .to_owned()
        } else {
            text.to_owned()
        }
    };
    // The fence: the block's own (at least 7, or the TASKS block's), longer
    // while a body line would read as a marker of that length.
    let mut f = fence.unwrap_or(MIN_FENCE).max(if opener.run < MIN_FENCE {
        MIN_FENCE
    } else {
        opener.run
    });
    let clashes = |f: usize| {
        lines.iter().filter(|l| l.3 == Role::Content).any(|l| {
            let t = body(l.1);
            read(&t).is_some_and(|m| {
                m.indent.is_empty() && m.run == f && (m.spaced || m.word.is_empty())
            })
        })
    };
    while clashes(f) && f < MAX_FIX_FENCE {
        f += 1;
    }
    let mut fixed = String::new();
    for (i, (_, text, brk, role)) in lines.iter().enumerate() {
        let line = match role {
            Role::Opener => {
                let tail = opener.tail;
                format!("{} {}{tail}", Shape::Opener.run(f), keyword.as_str())
            }
            Role::Separator => Shape::Separator.run(f),
            Role::SearchEnd => format!("{} {}", Shape::Opener.run(f), Keyword::SearchEnd.as_str()),
            Role::Closer => format!("{} {}", Shape::Closer.run(f), closer_keyword.as_str()),
            Role::Content => body(text),
        };
        fixed.push_str(&line);
        if i + 1 < lines.len() {
            fixed.push_str(brk);
        }
    }
    let (last_start, last_text, _, _) = lines[lines.len() - 1];
    let end = last_start + last_text.len();
    let span = Span::new(start, end);
    let mut diagnostics = Vec::new();
    for (i, (at, text, _, role)) in lines.iter().enumerate() {
        let Some(m) = read(text) else { continue };
        let expected = match role {
            Role::Opener => Some(keyword),
            Role::SearchEnd => Some(Keyword::SearchEnd),
            Role::Closer => Some(closer_keyword),
            Role::Separator => None,
            Role::Content => continue,
        };
        let keyword_ok = expected.is_none_or(|k| m.word == k.as_str());
        if *role != Role::Opener && m.well_formed() && keyword_ok {
            continue;
        }
        let line_span = Span::new(*at, at + text.len());
        let mut message = describe(text, &m);
        if let Some(k) = expected.filter(|k| m.word != k.as_str()) {
            if m.word.eq_ignore_ascii_case(k.as_str()) {
                message.push_str(&format!("; keywords are upper case: `{k}`"));
            } else {
                message.push_str(&format!("; here `{k}` is meant"));
            }
        }
        let d = Diagnostic::new(DiagnosticKind::MalformedMarker, line_span, message);
        diagnostics.push(if *role == Role::Opener {
            d.with_fix(span, fixed.clone()).with_help(format!(
                "the fix rewrites the block, this line and the {} after it, with its marker lines at column 0, {f} characters long, keywords in upper case{}",
                lines.len() - 1,
                if dedent { ", and its lines dedented" } else { "" }
            ))
        } else {
            d.with_help(format!(
                "part of the block opened {i} line{} above: that line's fix rewrites the block",
                if i == 1 { "" } else { "s" }
            ))
        });
    }
    Some(Block { end, diagnostics })
}
