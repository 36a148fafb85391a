//! The document being checked ([`Context`]): its text, the options it is
//! checked with ([`ParseOptions`]), its line index, built once, and what
//! the parse of one window must know of the whole document. Every check of
//! the syntax layer and of the dialects reads the document through it.

use std::cell::OnceCell;

use crate::syntax::span::{LineIndex, Span};

/// How a document is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Accept absolute paths and paths that climb out of the root
    /// (`--allow-escape`).
    pub allow_escape: bool,
}

/// The document being checked, with its line index built on first use.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub(crate) src: &'a str,
    pub(crate) opts: ParseOptions,
    lines: OnceCell<LineIndex<'a>>,
    /// Where each opener's extent ends, computed once for the document.
    pub(crate) nesting: crate::syntax::nesting::Nesting,
    /// Set when a parser read to the end of the tokens it was given: when
    /// those are a window of the document, its result may be wrong, and
    /// the window must grow.
    reached_end: std::cell::Cell<bool>,
    /// Whether the tokens given reach the end of the document.
    last_window: std::cell::Cell<bool>,
    /// The near-miss blocks found so far (PROTOCOL §2.1).
    pub(crate) near_blocks: crate::syntax::near_miss::Blocks,
    /// Whether an opener of the document has attributes: found once, when
    /// a bare `<<<<<<< SEARCH` asks.
    attributed: OnceCell<bool>,
}

impl<'a> Context<'a> {
    pub(crate) fn new(src: &'a str, opts: ParseOptions) -> Self {
        Context {
            src,
            opts,
            lines: OnceCell::new(),
            nesting: crate::syntax::nesting::Nesting::default(),
            reached_end: std::cell::Cell::new(false),
            last_window: std::cell::Cell::new(true),
            near_blocks: crate::syntax::near_miss::Blocks::default(),
            attributed: OnceCell::new(),
        }
    }

    /// Says whether the tokens the parsers are given reach the end of the
    /// document.
    pub(crate) fn set_last_window(&self, last: bool) {
        self.last_window.set(last);
    }

    /// Whether reading to the end of the tokens means the end of the
    /// document: if not, what is read will be read again in a larger
    /// window, and need not be checked now.
    pub(crate) fn in_last_window(&self) -> bool {
        self.last_window.get()
    }

    pub(crate) fn reached_end(&self) {
        self.reached_end.set(true);
    }

    /// Whether a parser read to the end since the last call.
    pub(crate) fn take_reached_end(&self) -> bool {
        self.reached_end.replace(false)
    }

    /// Whether an opener of the document (a marker line with its keyword)
    /// has attributes after the keyword: the mark of clada's own format,
    /// by which `auto` reads a document as clada's (PROTOCOL §11).
    pub(crate) fn has_attributed_opener(&self) -> bool {
        *self.attributed.get_or_init(|| {
            self.src.lines().any(|line| {
                crate::syntax::classify(line, 1).is_some_and(|m| {
                    m.shape == crate::syntax::Shape::Opener
                        && m.keyword.is_some()
                        && !m.rest().is_empty()
                })
            })
        })
    }

    pub(crate) fn line(&self, offset: usize) -> usize {
        self.lines
            .get_or_init(|| LineIndex::new(self.src))
            .line(offset)
    }

    pub(crate) fn text(&self, span: Span) -> &'a str {
        self.src.get(span.range()).unwrap_or_default()
    }
}
