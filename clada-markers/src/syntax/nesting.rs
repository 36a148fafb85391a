//! How openers nest (PROTOCOL §2.4), found before parsing: bracket
//! matching over the marker lines of the whole document, a piece at a
//! time, keeping no tokens. The parser reads one window of tokens at a
//! time; what it must know of the rest of the document, where an opener's
//! extent ends, it asks here.

use crate::syntax::lexer::{self, Marker, PIECE, Token};
use crate::syntax::{Keyword, Shape};

/// How openers nest, found before parsing in passes over the document
/// that keep no tokens, so that no opener is read to the end of the
/// document more than once and a parse of one window of tokens knows what
/// the whole document says.
///
/// An opener's extent ends at the first closer of its fence length where
/// as many openers of that length as closers lie between: bracket
/// matching, one stack per fence length. `SEARCH-END` lines and
/// separators do not count, as in the parser's `scan_task` and
/// `skip_extent`.
/// Openers are named by the offset of their line.
#[derive(Debug, Default)]
pub(crate) struct Nesting {
    /// The openers that have no closer before the end, in order.
    unclosed: Vec<usize>,
    /// For an unclosed task opener: the next opener of its fence length,
    /// when that opens a unit. The task's reading stops there: it would
    /// end there anyway (PROTOCOL §2.4).
    stop: Vec<(usize, usize)>,
}

impl Nesting {
    #[cfg(test)]
    pub(crate) fn of(src: &str) -> Nesting {
        Nesting::with_tokens(src, 0).0
    }

    /// How openers nest in `src`, and its tokens when they take at most
    /// `budget` bytes: a document with few marker lines is then lexed once,
    /// not again window by window.
    pub(crate) fn with_tokens(src: &str, budget: usize) -> (Nesting, Option<Vec<Token>>) {
        let counts = |m: &Marker| m.shape == Shape::Opener && m.keyword != Some(Keyword::SearchEnd);
        let mut open: std::collections::HashMap<usize, Vec<usize>> = Default::default();
        let mut kept = Some(Vec::new());
        each_piece(src, |tokens| {
            for (at, m) in markers(tokens) {
                if counts(m) {
                    open.entry(m.fence()).or_default().push(at);
                } else if m.shape == Shape::Closer {
                    open.entry(m.fence()).or_default().pop();
                }
            }
            if let Some(all) = &mut kept {
                if (all.len() + tokens.len()) * std::mem::size_of::<Token>() <= budget {
                    all.extend_from_slice(tokens);
                } else {
                    kept = None;
                }
            }
        });
        let mut unclosed: Vec<usize> = open.into_values().flatten().collect();
        if unclosed.is_empty() {
            return (Nesting::default(), kept);
        }
        unclosed.sort_unstable();
        // Each unclosed opener waits for the next counting opener of its
        // fence length.
        let mut stop = Vec::new();
        let mut waiting: std::collections::HashMap<usize, usize> = Default::default();
        each_piece(src, |tokens| {
            for (at, m) in markers(tokens).filter(|(_, m)| counts(m)) {
                if let Some(u) = waiting.remove(&m.fence())
                    && opens_unit(m)
                {
                    stop.push((u, at));
                }
                if unclosed.binary_search(&at).is_ok() {
                    waiting.insert(m.fence(), at);
                }
            }
        });
        stop.sort_unstable();
        (Nesting { unclosed, stop }, kept)
    }

    /// Whether the opener whose line starts at `at` is never closed.
    pub(crate) fn unclosed(&self, at: usize) -> bool {
        self.unclosed.binary_search(&at).is_ok()
    }

    /// Where reading the unclosed task opened at `at` may stop: the offset
    /// of the opener it would end at.
    pub(crate) fn stop(&self, at: usize) -> Option<usize> {
        let i = self.stop.binary_search_by_key(&at, |&(u, _)| u).ok()?;
        Some(self.stop[i].1)
    }
}

/// Calls `f` with the tokens of `src`, a piece at a time, in order.
fn each_piece(src: &str, mut f: impl FnMut(&[Token])) {
    let mut pieces = lexer::Pieces::new(src);
    let mut tokens = Vec::new();
    while !pieces.done() {
        tokens.clear();
        pieces.more(PIECE, &mut tokens);
        f(&tokens);
    }
}

/// The marker lines among `tokens`, with their offsets.
fn markers(tokens: &[Token]) -> impl Iterator<Item = (usize, &Marker)> {
    tokens
        .iter()
        .filter_map(|t| t.marker().map(|m| (t.span().start, m)))
}

/// Whether an opener starts a unit: a task or a block.
pub(crate) fn opens_unit(m: &Marker) -> bool {
    m.keyword
        .is_some_and(|k| k == Keyword::Tasks || k.task().is_some())
}
