//! The parser: line tokens to units, with recovery.
//!
//! The grammar it implements (see `grammar/clada.ebnf` for the full text):
//!
//! ```text
//! document = { block | task | other-marker | text } ;
//! block    = tasks-opener , { task | other-marker | text } , ( tasks-closer | ? next TASKS opener ? | ? end ? ) ;
//! task     = task-opener , section , { section-marker , section } , closer ;
//! ```
//!
//! The structure of units and blocks is written with chumsky combinators;
//! the body of a task is read by [`scan_task`], a depth counter (PROTOCOL
//! §2.4): inside a task with fence length N only marker lines of exactly N
//! characters count, an opener raises the depth, a closer at depth > 0 lowers
//! it, and only at depth 0 do the task's own separator, `SEARCH-END` and
//! closer apply. Counting instead of recursing means a deeply nested body
//! costs no stack.
//!
//! The tokens of the whole document are never held at once: [`units`]
//! lexes a window of them at a time and parses the top-level items in it one
//! by one, growing the window when an item reads to its end. What an item
//! needs to know about the rest of the document, where each opener's
//! extent ends, is found first by bracket matching over the marker lines
//! ([`Nesting`]), keyed by line offset.
//!
//! The grammar is total: every token sequence parses, and every problem
//! becomes a [`Diagnostic`] emitted through chumsky's error channel, so a
//! single pass reports everything. The parser never touches the file
//! system and never panics.

// chumsky's error channel carries `Diagnostic`s by value. The ones made for
// failed alternatives are built without allocating; boxing them would
// allocate for every alternative tried.
#![allow(clippy::result_large_err)]

use std::cell::RefCell;

use chumsky::error::LabelError;
use chumsky::input::{Checkpoint, InputRef};
use chumsky::prelude::*;
use chumsky::util::MaybeRef;

use crate::syntax::ast::{Block, Document, Parsed, Unit};
use crate::syntax::attributes::Attribute;
use crate::syntax::context::{Context, ParseOptions};
use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind as K};
use crate::syntax::lexer::{self, Marker, PIECE, Token, TokenKind};
use crate::syntax::near_miss;
use crate::syntax::nesting::{Nesting, opens_unit};
use crate::syntax::raw::{Problem, RawSection, RawTask, UnclosedHint};
use crate::syntax::span::Span;
use crate::syntax::suggest::{nearest, quoted_list};
use crate::syntax::validate;
use crate::syntax::{Keyword, SectionMarker, Shape, TaskKind, Version};

type Tokens<'t> = &'t [Token];
type Extra<C> = extra::Full<Diagnostic, (), C>;

impl<'t> chumsky::error::Error<'t, Tokens<'t>> for Diagnostic {}

impl<'t, L> LabelError<'t, Tokens<'t>, L> for Diagnostic {
    // Failed alternatives produce these all the time and throw them away, so
    // they must be cheap: no message is built here. One reaching the user
    // would be a fault of the grammar; see `parse_with`.
    fn expected_found<E: IntoIterator<Item = L>>(
        _expected: E,
        found: Option<MaybeRef<'t, Token>>,
        _span: SimpleSpan,
    ) -> Self {
        let span = found.map(|t| t.span()).unwrap_or_default();
        Diagnostic::new(K::Internal, span, String::new())
    }
}

/// Where a parser stands: at the top of the document or inside a block.
trait Scope {
    /// The fence length of the enclosing block, and whether it declares a
    /// version.
    fn block(&self) -> Option<(usize, bool)>;
}

impl Scope for () {
    fn block(&self) -> Option<(usize, bool)> {
        None
    }
}

/// A `TASKS` opener, read; it is the context of everything in its block.
#[derive(Clone, Debug)]
struct BlockHead<'a> {
    start: usize,
    marker: Marker,
    attributes: Vec<Attribute<'a>>,
    version: Option<Version>,
}

impl Scope for BlockHead<'_> {
    fn block(&self) -> Option<(usize, bool)> {
        Some((self.marker.fence(), self.version.is_some()))
    }
}

/// What a parser inside a unit list produced.
// Items are moved into the unit list as they are; boxing the large variant
// would cost an allocation per unit.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Item<'a> {
    Unit(Unit<'a>),
    /// A separator or closer outside any task (kept to find likely closers).
    Stray(Marker),
    Nothing,
}

/// How a block ended.
#[derive(Clone, Copy, Debug)]
enum BlockEnd {
    Closer(Marker),
    /// A new `TASKS` opener before this block's closer.
    NextBlock(Marker),
    Eof,
}

/// Parses a document with default options.
pub fn parse(source: &str) -> Document<'_> {
    parse_with(source, ParseOptions::default())
}

/// Parses and checks a document. Never fails: problems are diagnostics.
pub fn parse_with(source: &str, options: ParseOptions) -> Document<'_> {
    parse_in_pieces(source, options, None)
}

/// [`parse_with`]; with `Some(piece)`, always in windows, lexing `piece`
/// bytes at a time (as the tests do, to exercise the windows).
fn parse_in_pieces(source: &str, options: ParseOptions, piece: Option<usize>) -> Document<'_> {
    let mut units: Vec<Unit<'_>> = Vec::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for parsed in Units::new(source, options, piece) {
        units.extend(parsed.unit);
        diagnostics.extend(parsed.diagnostics);
    }
    crate::syntax::diagnostics::sort_in_document_order(&mut diagnostics);
    Document {
        source,
        units,
        diagnostics,
    }
}

/// Parses a document one unit at a time: what [`parse_with`] finds, handed
/// out as it is found, so that a caller that is done with a unit can drop
/// it. Memory is then the document and the unit at hand, not the whole
/// tree: `clada check` reads a document of half a million tasks this way.
pub fn units(source: &str, options: ParseOptions) -> Units<'_> {
    Units::new(source, options, None)
}

/// Hands each unit of `parsed` to `unit` with the diagnostics of its
/// parse, dropping it after; returns every diagnostic, in document order.
/// How a report is made from [`units`] without holding the tree.
pub fn each_unit<'a>(
    parsed: impl IntoIterator<Item = Parsed<'a>>,
    mut unit: impl FnMut(&Unit<'a>, &[Diagnostic]),
) -> Vec<Diagnostic> {
    let mut all = Vec::new();
    for p in parsed {
        if let Some(u) = &p.unit {
            unit(u, &p.diagnostics);
        }
        if all.is_empty() {
            // Moved, not copied: a document's diagnostics filed under no
            // unit come as one list.
            all = p.diagnostics;
        } else {
            all.extend(p.diagnostics);
        }
    }
    crate::syntax::diagnostics::sort_in_document_order(&mut all);
    all
}

/// The iterator of [`units`].
#[derive(Debug)]
pub struct Units<'a> {
    items: Option<Items<'a>>,
    /// A document that cannot be parsed at all, said once.
    refused: Option<Diagnostic>,
    blocks: usize,
    tasks: usize,
    any_task: bool,
}

impl<'a> Units<'a> {
    fn new(source: &'a str, options: ParseOptions, piece: Option<usize>) -> Self {
        let too_large = source.len() > crate::syntax::MAX_DOCUMENT_SIZE;
        Units {
            items: (!too_large).then(|| Items::new(source, options, piece)),
            refused: too_large.then(crate::syntax::too_large),
            blocks: 0,
            tasks: 0,
            any_task: false,
        }
    }
}

impl<'a> Iterator for Units<'a> {
    type Item = Parsed<'a>;

    fn next(&mut self) -> Option<Parsed<'a>> {
        if let Some(d) = self.refused.take() {
            return Some(Parsed {
                unit: None,
                diagnostics: vec![d],
            });
        }
        let items = self.items.as_mut()?;
        let Some(mut parsed) = items.next_item() else {
            // At the end: a document without a task says so.
            let cx = self.items.take()?.cx;
            return (!self.any_task).then(|| Parsed {
                unit: None,
                diagnostics: vec![no_tasks(&cx)],
            });
        };
        if let Some(unit) = &mut parsed.unit {
            self.blocks += 1;
            number(unit, self.blocks, &mut self.tasks, &mut parsed.diagnostics);
            self.any_task |= !unit.tasks().is_empty();
        }
        crate::syntax::diagnostics::sort_in_document_order(&mut parsed.diagnostics);
        Some(parsed)
    }
}

/// A document's top-level items, parsed one at a time from a window of
/// tokens that is lexed as the parse goes: the tokens of the whole
/// document are never held at once.
///
/// An item is parsed from the window; if its parse read to the window's
/// end (a task or block not closed within it, say) before the document's
/// end, the window grows to at least twice its size and the item is
/// parsed again, so what comes out is what a parse of all the tokens
/// gives, and the work stays linear. What the parse needs to know about
/// the whole document, how openers nest, is found first ([`Nesting`]).
#[derive(Debug)]
struct Items<'a> {
    cx: Context<'a>,
    pieces: lexer::Pieces<'a>,
    /// The window: the tokens from `pos` on are not parsed yet.
    tokens: Vec<Token>,
    pos: usize,
    /// How many bytes to lex at a time.
    piece: usize,
}

/// Whether a diagnostic is one made for a failed alternative (see
/// [`LabelError`] above): one reaching the user is a fault of the grammar.
fn is_alternative(d: &Diagnostic) -> bool {
    d.kind == K::Internal && d.message.is_empty()
}

impl<'a> Items<'a> {
    /// Windows of `piece` bytes if given; else of [`PIECE`] bytes, and a
    /// document whose tokens are worth at most a tenth of it keeps them
    /// from the first pass and is parsed as one window.
    fn new(source: &'a str, options: ParseOptions, piece: Option<usize>) -> Self {
        let mut cx = Context::new(source, options);
        let budget = if piece.is_none() {
            source.len() / 10
        } else {
            0
        };
        let (nesting, tokens) = Nesting::with_tokens(source, budget);
        cx.nesting = nesting;
        let mut pieces = lexer::Pieces::new(source);
        if tokens.is_some() {
            pieces.skip_all();
        }
        Items {
            cx,
            pieces,
            tokens: tokens.unwrap_or_default(),
            pos: 0,
            piece: piece.unwrap_or(PIECE),
        }
    }

    /// Whether the item that starts with `tok` reads on to the end of the
    /// document, or to a place the nesting pass does not know: a block
    /// never closed (it ends at the next block's opener, or at the end),
    /// or a task never closed with no opener to stop at.
    fn reads_to_the_end(&self, tok: &Token) -> bool {
        let Some(m) = tok.marker() else {
            return false;
        };
        let at = tok.span().start;
        m.shape == Shape::Opener
            && self.cx.nesting.unclosed(at)
            && match m.keyword {
                Some(Keyword::Tasks) => true,
                Some(k) => k.task().is_some() && self.cx.nesting.stop(at).is_none(),
                None => false,
            }
    }

    fn next_item(&mut self) -> Option<Parsed<'a>> {
        loop {
            if self.pos == self.tokens.len() {
                self.tokens.clear();
                self.pos = 0;
                if self.pieces.done() {
                    return None;
                }
                self.pieces.more(self.piece, &mut self.tokens);
                continue;
            }
            if !self.pieces.done() && self.reads_to_the_end(&self.tokens[self.pos]) {
                // Windows would only be grown and parsed again, the whole
                // item each time: lex the rest at once.
                self.pieces.more(usize::MAX, &mut self.tokens);
            }
            self.cx.take_reached_end();
            self.cx.set_last_window(self.pieces.done());
            let slot = RefCell::new(None);
            let (_, errors) = item(&self.cx, &slot)
                .parse(&self.tokens[self.pos..])
                .into_output_errors();
            let cut = self.cx.take_reached_end();
            if cut && !self.pieces.done() {
                // The item may go on past the window: grow it, parse again.
                self.tokens.drain(..self.pos);
                self.pos = 0;
                let held = match (self.tokens.first(), self.tokens.last()) {
                    (Some(a), Some(b)) => b.span().end.saturating_sub(a.span().start),
                    _ => 0,
                };
                self.pieces.more(held.max(self.piece), &mut self.tokens);
                continue;
            }
            let parsed = slot.into_inner();
            // The parse ends with a failure to find the end of the input
            // right after the item: that failure, made without a message,
            // is not the document's.
            let diagnostics = errors
                .into_iter()
                .filter(|d| parsed.is_none() || !is_alternative(d))
                .map(|mut d| {
                    if is_alternative(&d) {
                        d.message = "clada could not parse this line; please report it".into();
                    }
                    d
                })
                .collect();
            let (item, used) = parsed.unwrap_or((Item::Nothing, 1));
            self.pos = (self.pos + used.max(1)).min(self.tokens.len());
            let unit = match item {
                Item::Unit(u) => Some(u),
                Item::Stray(_) | Item::Nothing => None,
            };
            return Some(Parsed { unit, diagnostics });
        }
    }
}

/// One item at the top of the document, put in `slot` with how many
/// tokens it took. The parse then fails where the input goes on: the
/// rest of the window is never read.
fn item<'t, 'a: 't>(
    cx: &'t Context<'a>,
    slot: &'t RefCell<Option<(Item<'a>, usize)>>,
) -> impl Parser<'t, Tokens<'t>, (), Extra<()>> + 't {
    choice((
        text::<()>(cx).to(Item::Nothing),
        task::<()>(cx).map(Item::Unit),
        block(cx).map(Item::Unit),
        other::<()>(cx),
    ))
    .map_with(move |item, e| {
        *slot.borrow_mut() = Some((item, e.span().end));
    })
}

/// A run of lines that are not marker lines outside any task: prose, where
/// a line that is almost a marker is a near miss (PROTOCOL §2.1). Bodies
/// never come here: a task reads its own lines.
fn text<'t, 'a: 't, C: Scope + 't>(
    cx: &'t Context<'a>,
) -> impl Parser<'t, Tokens<'t>, (), Extra<C>> + Clone + 't {
    select! { tok @ Token { kind: TokenKind::Text, .. } => tok.span() }.validate(
        move |span: Span,
              extra: &mut chumsky::input::MapExtra<'t, '_, Tokens<'t>, Extra<C>>,
              emitter| {
            let fence = extra.ctx().block().map(|(f, _)| f);
            near_miss::scan(cx.src, span, fence, &cx.near_blocks, &mut |d| {
                emitter.emit(d)
            });
        },
    )
}

fn block<'t, 'a: 't>(cx: &'t Context<'a>) -> impl Parser<'t, Tokens<'t>, Unit<'a>, Extra<()>> + 't {
    let opener = select! {
        tok @ Token { kind: TokenKind::Marker(m), .. }
            if m.shape == Shape::Opener && m.keyword == Some(Keyword::Tasks) => (tok.span().start, m)
    }
    .validate(|(start, marker), _, emitter| {
        let mut out = Vec::new();
        let (attributes, version, _) = validate::block_opener(cx, &marker, &mut out);
        out.into_iter().for_each(|d| emitter.emit(d));
        BlockHead {
            start,
            marker,
            attributes,
            version,
        }
    });
    let items = choice((
        text::<BlockHead<'a>>(cx).to(Item::Nothing),
        task::<BlockHead<'a>>(cx).map(Item::Unit),
        other::<BlockHead<'a>>(cx),
    ))
    .repeated()
    .collect::<Vec<_>>();
    opener.then_with_ctx(items.then(block_end(cx))).validate(
        move |(head, (items, end)), _, emitter| {
            finish_block(cx, head, items, end, &mut |d| emitter.emit(d))
        },
    )
}

/// The end of a block: its closer, the next block's opener (not consumed),
/// or the end of the document.
fn block_end<'t, 'a: 't>(
    cx: &'t Context<'a>,
) -> impl Parser<'t, Tokens<'t>, BlockEnd, Extra<BlockHead<'a>>> + Clone + 't {
    custom(
        move |inp: &mut InputRef<'t, '_, Tokens<'t>, Extra<BlockHead<'a>>>| {
            let fence = inp.ctx().marker.fence();
            let Some(tok) = inp.peek() else {
                cx.reached_end();
                return Ok(BlockEnd::Eof);
            };
            match tok.marker() {
                Some(m) if m.keyword == Some(Keyword::Tasks) && m.shape == Shape::Opener => {
                    Ok(BlockEnd::NextBlock(*m))
                }
                Some(m) if is_block_closer(m, fence) => {
                    inp.skip();
                    Ok(BlockEnd::Closer(*m))
                }
                _ => Err(Diagnostic::new(K::Internal, tok.span(), String::new())),
            }
        },
    )
}

fn is_block_closer(m: &Marker, block_fence: usize) -> bool {
    m.shape == Shape::Closer && m.keyword == Some(Keyword::Tasks) && m.fence() == block_fence
}

fn finish_block<'a>(
    cx: &Context<'a>,
    head: BlockHead<'a>,
    items: Vec<Item<'a>>,
    end: BlockEnd,
    emit: &mut dyn FnMut(Diagnostic),
) -> Unit<'a> {
    let fence = head.marker.fence();
    let closer_text = format!("{} TASKS", Shape::Closer.run(fence));
    let (closer, span_end) = match end {
        BlockEnd::Closer(m) => {
            if !m.rest().is_empty() {
                emit(Diagnostic::new(
                    K::MalformedMarker,
                    m.rest(),
                    format!("nothing may follow `{closer_text}` on its line"),
                ));
            }
            (Some(m.line()), m.line().end)
        }
        BlockEnd::NextBlock(next) => {
            emit(
                Diagnostic::new(
                    K::UnclosedOpener,
                    head.marker.line(),
                    format!("the TASKS block opened here has no closer `{closer_text}`"),
                )
                .with_label(
                    next.line(),
                    "a new TASKS block starts here: blocks do not nest",
                )
                .with_help(format!(
                    "add `{closer_text}` before line {}",
                    cx.line(next.text_start())
                )),
            );
            (None, last_end(&items, head.marker.line().end))
        }
        BlockEnd::Eof => {
            let probable = items.iter().find_map(|i| match i {
                Item::Stray(m) if m.shape == Shape::Closer && m.keyword == Some(Keyword::Tasks) => {
                    Some(*m)
                }
                _ => None,
            });
            let mut d = Diagnostic::new(
                K::UnclosedOpener,
                head.marker.line(),
                format!("the TASKS block opened here has no closer `{closer_text}`"),
            );
            d = match probable {
                Some(m) => d
                    .with_label(
                        m.line(),
                        format!(
                            "this closer has {} characters but the opener has {fence}: a closer must have its opener's fence length",
                            m.fence()
                        ),
                    )
                    .with_help(format!("write `{closer_text}` with exactly {fence} `>`")),
                None => d.with_help(format!("add `{closer_text}` after the block's last task")),
            };
            emit(d);
            (None, cx.src.len())
        }
    };
    let mut tasks: Vec<_> = items
        .into_iter()
        .filter_map(|i| match i {
            Item::Unit(Unit::Task(t)) => Some(t),
            _ => None,
        })
        .collect();
    // The collection may reuse the items' larger allocation.
    tasks.shrink_to_fit();
    Unit::Block(Block {
        number: 0,
        span: Span::new(head.start, span_end),
        opener: head.marker.line(),
        fence,
        attributes: head.attributes,
        version: head.version,
        tasks,
        closer,
        rules: Default::default(),
    })
}

fn last_end(items: &[Item<'_>], default: usize) -> usize {
    items
        .iter()
        .rev()
        .find_map(|i| match i {
            Item::Unit(u) => Some(u.span().end),
            Item::Stray(m) => Some(m.text_end()),
            Item::Nothing => None,
        })
        .unwrap_or(default)
}

fn task<'t, 'a: 't, C: Scope + 't>(
    cx: &'t Context<'a>,
) -> impl Parser<'t, Tokens<'t>, Unit<'a>, Extra<C>> + 't {
    custom(move |inp: &mut InputRef<'t, '_, Tokens<'t>, Extra<C>>| scan_task(cx, inp)).validate(
        move |raw, _, emitter| {
            let mut out = Vec::new();
            let task = validate::task(cx, raw, &mut out);
            out.into_iter().for_each(|d| emitter.emit(d));
            Unit::Task(task)
        },
    )
}

fn task_opener(tok: &Token) -> Option<(Marker, TaskKind)> {
    let m = tok.marker()?;
    let kind = m.keyword?.task()?;
    (m.shape == Shape::Opener).then_some((*m, kind))
}

/// Reads a task from its opener to its closer by counting depth.
fn scan_task<'t, 'p, C: Scope>(
    cx: &Context<'_>,
    inp: &mut InputRef<'t, 'p, Tokens<'t>, Extra<C>>,
) -> Result<RawTask, Diagnostic> {
    let Some(tok) = inp.peek() else {
        return Err(Diagnostic::new(K::Internal, Span::default(), String::new()));
    };
    let Some((opener, kind)) = task_opener(&tok) else {
        return Err(Diagnostic::new(K::Internal, tok.span(), String::new()));
    };
    let stop = cx.nesting.stop(tok.span().start);
    inp.skip();
    let fence = opener.fence();
    let block_fence = inp.ctx().block().map(|(f, _)| f);
    let markers = kind.section_markers();
    let closer_kw = kind.closer();

    let mut raw = RawTask {
        kind,
        opener,
        start: tok.span().start,
        sections: Vec::with_capacity(markers.len() + 1),
        closer: None,
        end: tok.span().end,
        problems: Vec::new(),
    };
    let mut section_start = tok.span().end;
    // Whether a line of the current section ends in CR LF.
    let mut crlf = false;
    let mut depth = 0usize;
    let mut fence_mismatch = None;
    let mut nested_closer = None;
    let mut first_nested: Option<(Checkpoint<'t, 'p, Tokens<'t>, ()>, Marker)> = None;

    loop {
        let before = inp.save();
        let next = match inp.next() {
            // Past `stop`, the rest of the document cannot close the task:
            // reading on would only come back to `first_nested`.
            Some(tok) if stop.is_some_and(|k| tok.span().start > k) => {
                inp.rewind(before.clone());
                None
            }
            Some(tok) => Some(tok),
            None => {
                cx.reached_end();
                if !cx.in_last_window() {
                    // The task goes on past the window: it will be read
                    // again in a larger one, so it is not checked now
                    // (which could mean reporting it unclosed).
                    return Err(Diagnostic::new(K::Internal, tok.span(), String::new()));
                }
                None
            }
        };
        let Some(tok) = next else {
            // The document ended inside the task. If a unit opener was
            // swallowed as nested content, the closer was most likely
            // meant to come before it: end the task there and go on.
            let hint = match first_nested {
                Some((checkpoint, m)) => {
                    inp.rewind(checkpoint);
                    let cut = m.text_start();
                    raw.end = cut;
                    // Forget what was read after the cut.
                    if let Some(i) = raw.sections.iter().position(|s| s.span.end > cut) {
                        section_start = raw.sections[i].span.start;
                        raw.sections.truncate(i);
                    }
                    raw.problems.retain(|p| p.at() < cut);
                    Some(UnclosedHint::NestedOpener(m))
                }
                None => {
                    raw.end = cx.src.len();
                    fence_mismatch
                        .map(UnclosedHint::FenceMismatch)
                        .or(nested_closer.map(UnclosedHint::NestedCloser))
                }
            };
            raw.sections.push(RawSection {
                span: Span::new(section_start, raw.end.max(section_start)),
                crlf,
            });
            raw.problems.push(Problem::Unclosed(hint));
            return Ok(raw);
        };
        // Every line is content unless it turns out to be structure below.
        let content_crlf = crlf;
        crlf |= tok.crlf;
        let Some(m) = tok.marker().copied() else {
            continue;
        };
        if m.fence() != fence {
            if m.shape == Shape::Closer && m.keyword == Some(closer_kw) && fence_mismatch.is_none()
            {
                fence_mismatch = Some(m);
            }
            continue;
        }
        let mut end_section = |sections: &mut Vec<RawSection>| {
            sections.push(RawSection {
                span: Span::new(section_start, tok.span().start),
                crlf: content_crlf,
            });
            section_start = tok.span().end;
            crlf = false;
        };
        // A section marker (`SEARCH-END` is never a nesting opener): what
        // it ends the section with, whether text follows it on its line,
        // and the problem it is where the task expects no such marker.
        let section = match m.shape {
            Shape::Opener if m.keyword == Some(Keyword::SearchEnd) => Some((
                SectionMarker::SearchEnd,
                !m.rest().is_empty(),
                Problem::MisplacedSearchEnd(m),
            )),
            Shape::Separator => Some((
                SectionMarker::Separator,
                !m.word().is_empty(),
                Problem::UnexpectedSeparator(m),
            )),
            _ => None,
        };
        if let Some((marker, text_after, misplaced)) = section {
            if depth > 0 {
                continue;
            }
            if markers.get(raw.sections.len()) == Some(&marker) {
                end_section(&mut raw.sections);
                if text_after {
                    raw.problems.push(Problem::TextAfterMarker(m));
                }
            } else {
                raw.problems.push(misplaced);
            }
            continue;
        }
        match m.shape {
            // Section markers were dealt with above.
            Shape::Separator => {}
            Shape::Opener => {
                if depth == 0 && first_nested.is_none() && opens_unit(&m) {
                    first_nested = Some((before, m));
                }
                depth += 1;
            }
            Shape::Closer if depth > 0 => {
                depth -= 1;
                if m.keyword == Some(closer_kw) && nested_closer.is_none() {
                    nested_closer = Some(m);
                }
            }
            Shape::Closer => {
                end_section(&mut raw.sections);
                if m.keyword == Some(closer_kw) {
                    if let Some(missing) = markers.get(raw.sections.len() - 1) {
                        raw.problems.push(Problem::MissingSection(*missing, m));
                    }
                    if !m.rest().is_empty() {
                        raw.problems.push(Problem::TextAfterMarker(m));
                    }
                    raw.closer = Some(m);
                    raw.end = tok.span().end;
                } else if m.keyword == Some(Keyword::Tasks) && block_fence == Some(fence) {
                    // The enclosing block's own closer: leave it to the block.
                    inp.rewind(before);
                    raw.end = tok.span().start;
                    raw.problems.push(Problem::WrongCloser(m));
                } else {
                    raw.end = tok.span().end;
                    raw.problems.push(Problem::WrongCloser(m));
                }
                return Ok(raw);
            }
        }
    }
}

/// Any other marker line: stray separators and closers (warnings), openers
/// with unknown or missing keywords (passed over with their balanced extent)
/// and misplaced `SEARCH-END` lines.
fn other<'t, 'a: 't, C: Scope + 't>(
    cx: &'t Context<'a>,
) -> impl Parser<'t, Tokens<'t>, Item<'a>, Extra<C>> + 't {
    custom(move |inp: &mut InputRef<'t, '_, Tokens<'t>, Extra<C>>| {
        let Some(tok) = inp.peek() else {
            return Err(Diagnostic::new(K::Internal, Span::default(), String::new()));
        };
        let fail = || Err(Diagnostic::new(K::Internal, tok.span(), String::new()));
        let Some(m) = tok.marker().copied() else {
            return fail();
        };
        let block = inp.ctx().block();
        match m.shape {
            Shape::Opener if opens_unit(&m) => fail(),
            Shape::Closer if block.is_some_and(|(f, _)| is_block_closer(&m, f)) => fail(),
            Shape::Opener if m.keyword == Some(Keyword::SearchEnd) => {
                inp.skip();
                Ok((Item::Nothing, Some(Diagnostic::new(
                    K::MisplacedSearchEnd,
                    m.line(),
                    "`SEARCH-END` outside a SEARCH-START task",
                )
                .with_help("a range edit is: `<<<<<<< SEARCH-START path=\"…\"`, start text, `<<<<<<< SEARCH-END`, end text, `=======`, replacement, `>>>>>>> REPLACE`"))))
            }
            Shape::Opener => {
                let unclosed = cx.nesting.unclosed(tok.span().start);
                inp.skip();
                // Never closed: only the opener line is passed over.
                let extent_end = if unclosed {
                    None
                } else {
                    skip_extent(cx, inp, &m, block.map(|(f, _)| f))
                };
                Ok((Item::Nothing, Some(unknown_opener(cx, &m, block, extent_end))))
            }
            Shape::Closer if block.is_some_and(|(f, _)| m.fence() > f) => {
                inp.skip();
                let fence = block.map_or(m.fence(), |(f, _)| f);
                let d = near_miss::closer_of_another_length(cx.src, &m, fence);
                Ok((Item::Stray(m), Some(d)))
            }
            Shape::Separator | Shape::Closer => {
                inp.skip();
                let what = if m.shape == Shape::Separator { "separator" } else { "closer" };
                Ok((Item::Stray(m), Some(Diagnostic::new(
                    K::StrayMarker,
                    m.line(),
                    format!("stray {what} `{}` outside any task is ignored", cx.text(m.line()).trim_end()),
                ))))
            }
        }
    })
    .validate(|(item, diagnostic), _, emitter| {
        if let Some(d) = diagnostic {
            emitter.emit(d);
        }
        item
    })
}

/// Passes over the balanced extent of an opener that is not a unit, up to
/// its closer of the same fence length. Returns where the extent ends; when
/// it never closes, only the opener line is passed over.
fn skip_extent<'t, C>(
    cx: &Context<'_>,
    inp: &mut InputRef<'t, '_, Tokens<'t>, Extra<C>>,
    opener: &Marker,
    block_fence: Option<usize>,
) -> Option<usize> {
    let start = inp.save();
    let mut depth = 1usize;
    loop {
        let before = inp.save();
        let Some(tok) = inp.next() else {
            cx.reached_end();
            inp.rewind(start);
            return None;
        };
        let Some(m) = tok.marker() else { continue };
        if m.fence() != opener.fence() {
            continue;
        }
        match m.shape {
            Shape::Opener if m.keyword != Some(Keyword::SearchEnd) => depth += 1,
            Shape::Closer => {
                if depth == 1 && block_fence.is_some_and(|f| is_block_closer(m, f)) {
                    inp.rewind(before);
                    return Some(tok.span().start);
                }
                depth -= 1;
                if depth == 0 {
                    return Some(m.text_end());
                }
            }
            _ => {}
        }
    }
}

fn unknown_opener(
    cx: &Context<'_>,
    m: &Marker,
    block: Option<(usize, bool)>,
    extent_end: Option<usize>,
) -> Diagnostic {
    let word = cx.text(m.word());
    let extent = extent_end.map(|end| {
        let (a, b) = (
            cx.line(m.text_start()),
            cx.line(end.saturating_sub(1).max(m.text_start())),
        );
        if a == b {
            format!("line {a}")
        } else {
            format!("lines {a}–{b}")
        }
    });
    if word.is_empty() {
        return Diagnostic::new(K::MalformedMarker, m.line(), "an opener needs a keyword")
            .with_help(format!(
                "write one of {} after the `<` characters",
                quoted_list(&Keyword::OPENERS.map(Keyword::as_str))
            ));
    }
    let versioned = block.is_some_and(|(_, versioned)| versioned);
    let passed_over = |d: Diagnostic| match &extent {
        Some(lines) => d.with_label(
            Span::new(m.text_start(), extent_end.unwrap_or(m.text_end())),
            format!("{lines} passed over"),
        ),
        None => d,
    };
    if let Some(d) = near_miss::misspelt_keyword(m.shape, word, m.word(), versioned) {
        return passed_over(d);
    }
    if versioned {
        let skipped = extent.unwrap_or_else(|| "this line".to_owned());
        return Diagnostic::new(
            K::SkippedUnknownKeyword,
            m.line(),
            format!("unknown keyword `{word}` in a versioned block: {skipped} passed over"),
        );
    }
    let openers = Keyword::OPENERS.map(Keyword::as_str);
    let mut d = Diagnostic::new(
        K::UnknownKeyword,
        m.word(),
        format!("unknown keyword `{word}`"),
    );
    d = match nearest(word, &openers) {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d.with_help(format!(
            "an opener takes one of {}; if this is content, put it inside a task",
            quoted_list(&openers)
        )),
    };
    passed_over(d)
}

/// Numbers a unit `block` and its tasks on from `tasks`, and files the
/// diagnostics of its parse that lie in it under it and their task.
fn number(unit: &mut Unit<'_>, block: usize, tasks: &mut usize, diagnostics: &mut [Diagnostic]) {
    match unit {
        Unit::Block(b) => {
            b.number = block;
            for t in &mut b.tasks {
                *tasks += 1;
                t.number = *tasks;
                t.block = block;
            }
        }
        Unit::Task(t) => {
            *tasks += 1;
            t.number = *tasks;
            t.block = block;
        }
    }
    let span = unit.span();
    for d in diagnostics.iter_mut() {
        let at = d.span.start;
        if !(span.start <= at && at < span.end) {
            continue;
        }
        d.block = Some(block);
        let tasks = unit.tasks();
        let j = tasks.partition_point(|t| t.span.end <= at);
        d.task = tasks
            .get(j)
            .filter(|t| t.span.start <= at)
            .map(|t| t.number);
    }
}

fn no_tasks(cx: &Context<'_>) -> Diagnostic {
    let d = Diagnostic::new(K::NoTasks, Span::empty(0), "the document has no task");
    let indented = cx.src.lines().enumerate().find(|(_, l)| {
        let t = l.trim_start();
        t.len() < l.len() && lexer::classify(t, 1).is_some_and(|m| m.keyword.is_some())
    });
    match indented {
        Some((n, _)) => d.with_help(format!(
            "line {} holds a marker line indented by white space: markers start at column 0",
            n + 1
        )),
        None => d.with_help("a task starts with a marker line at column 0, such as `<<<<<<< WRITE path=\"notes.txt\"`"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::{ProptestConfig, Strategy, any, prop, proptest};

    use super::*;

    /// The parse as it was before windows: every token lexed, the whole
    /// document parsed in one go. The reference the windows must match.
    fn parse_whole(source: &str, options: ParseOptions) -> Document<'_> {
        let tokens = lexer::lex(source);
        let mut cx = Context::new(source, options);
        cx.nesting = Nesting::of(source);
        let document = choice((
            text::<()>(&cx).to(Item::Nothing),
            task::<()>(&cx).map(Item::Unit),
            block(&cx).map(Item::Unit),
            other::<()>(&cx),
        ))
        .repeated()
        .collect::<Vec<_>>();
        let (items, errors) = document.parse(tokens.as_slice()).into_output_errors();
        let mut units: Vec<Unit<'_>> = items
            .unwrap_or_default()
            .into_iter()
            .filter_map(|i| match i {
                Item::Unit(u) => Some(u),
                _ => None,
            })
            .collect();
        let mut diagnostics = errors;
        number_all(&mut units, &mut diagnostics);
        if units.iter().all(|u| u.tasks().is_empty()) {
            diagnostics.push(no_tasks(&cx));
        }
        crate::syntax::diagnostics::sort_in_document_order(&mut diagnostics);
        Document {
            source,
            units,
            diagnostics,
        }
    }

    /// Numbering as it was: every unit, then every diagnostic filed under
    /// the unit it lies in, whichever parsed it.
    fn number_all(units: &mut [Unit<'_>], diagnostics: &mut [Diagnostic]) {
        let mut task_no = 0;
        for (i, unit) in units.iter_mut().enumerate() {
            let block_no = i + 1;
            match unit {
                Unit::Block(b) => {
                    b.number = block_no;
                    for t in &mut b.tasks {
                        task_no += 1;
                        t.number = task_no;
                        t.block = block_no;
                    }
                }
                Unit::Task(t) => {
                    task_no += 1;
                    t.number = task_no;
                    t.block = block_no;
                }
            }
        }
        for d in diagnostics.iter_mut() {
            let at = d.span.start;
            let i = units.partition_point(|u| u.span().end <= at);
            let Some(unit) = units.get(i).filter(|u| u.span().start <= at) else {
                continue;
            };
            d.block = Some(unit.number());
            let tasks = unit.tasks();
            let j = tasks.partition_point(|t| t.span.end <= at);
            d.task = tasks
                .get(j)
                .filter(|t| t.span.start <= at)
                .map(|t| t.number);
        }
    }

    fn windows_change_nothing(doc: &str) {
        let options = ParseOptions::default();
        let whole = parse_whole(doc, options);
        let want = (
            format!("{:?}", whole.units),
            format!("{:?}", whole.diagnostics),
        );
        for piece in [Some(1), Some(5), Some(40), Some(PIECE), None] {
            let got = parse_in_pieces(doc, options, piece);
            assert_eq!(
                (format!("{:?}", got.units), format!("{:?}", got.diagnostics)),
                want,
                "pieces of {piece:?} bytes: {doc:?}"
            );
        }
    }

    #[test]
    fn units_that_reach_past_a_window_are_read_whole() {
        for doc in [
            "",
            "prose\n",
            "<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n",
            // Closed far away, after nested units.
            "<<<<<<< WRITE path=\"a\"\n<<<<<<< WRITE path=\"b\"\ny\n>>>>>>> END\nz\n>>>>>>> END\n",
            // Never closed: reads to the next unit opener of its length.
            "<<<<<<< WRITE path=\"a\"\nx\n<<<<<<< WRITE path=\"b\"\ny\n>>>>>>> END\n",
            // Never closed, with an unknown opener on the way.
            "<<<<<<< WRITE path=\"a\"\n<<<<<<< FOO\nx\n<<<<<<< REMOVE path=\"b\"\n>>>>>>> END\n",
            // A block ended by the next block, and one by the end.
            "<<<<<<< TASKS\n<<<<<<< REMOVE path=\"a\"\n>>>>>>> END\n<<<<<<< TASKS\n<<<<<<< REMOVE path=\"b\"\n>>>>>>> END\n",
            // An unknown opener whose extent is closed late.
            "<<<<<<< FOO\na\nb\nc\n>>>>>>> FOO\n<<<<<<< REMOVE path=\"a\"\n>>>>>>> END\n",
            "<<<<<<< SEARCH path=\"a\"\r\nx\r\n=======\r\ny\r\n>>>>>>> REPLACE",
            "\u{feff}<<<<<<< REMOVE path=\"a\"\n>>>>>>> END\n",
        ] {
            windows_change_nothing(doc);
        }
    }

    /// Lines that exercise every rule that reads ahead: openers, closers
    /// and separators of two fence lengths, blocks, unknown keywords,
    /// near misses and text, with either line break.
    pub(crate) fn soup() -> impl Strategy<Value = String> {
        const LINES: &[&str] = &[
            "<<<<<<< WRITE path=\"a\"",
            "<<<<<<< SEARCH path=\"a\"",
            "<<<<<<< SEARCH-START path=\"a\"",
            "<<<<<<< SEARCH-END",
            "<<<<<<< RUN",
            "<<<<<<< MOVE from=\"a\" to=\"b\"",
            "<<<<<<< REMOVE path=\"a\"",
            "<<<<<<< TASKS",
            "<<<<<<< TASKS version=\"1\"",
            "<<<<<<< FOO",
            "<<<<<<<",
            "=======",
            "======= x",
            ">>>>>>> END",
            ">>>>>>> REPLACE",
            ">>>>>>> TASKS",
            ">>>>>>> FOO",
            "<<<<<<<< WRITE path=\"b\"",
            "<<<<<<<< TASKS",
            "========",
            ">>>>>>>> END",
            ">>>>>>>> TASKS",
            "  <<<<<<< REMOVE path=\"c\"",
            "<<<<<< WRITE path=\"d\"",
            "<<<<<<< HEAD",
            "\u{feff}<<<<<<< REMOVE path=\"a\"",
            "<<<<<<<<<<<<<<<< WRITE path=\"x\"",
            ">>>>>>>>>>>>>>>> END",
            "<<<<<<< SEARCH-START path=\"a\" count=\"2\"",
            "<<<<<<< WRITE path=\"a\" bad",
            "<<<<<<<WRITE",
            "=======\r",
            "text",
            "",
        ];
        (
            prop::collection::vec((0..LINES.len(), any::<bool>()), 0..60),
            any::<bool>(),
        )
            .prop_map(|(lines, last_break)| {
                let mut doc = String::new();
                let n = lines.len();
                for (k, (i, crlf)) in lines.into_iter().enumerate() {
                    doc.push_str(LINES[i]);
                    if k + 1 < n || last_break {
                        doc.push_str(if crlf { "\r\n" } else { "\n" });
                    }
                }
                doc
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 1024,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn a_parse_in_windows_is_the_parse_of_the_whole(doc in soup()) {
            windows_change_nothing(&doc);
        }
    }
}
