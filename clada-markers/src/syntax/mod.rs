//! The syntax layer (PROTOCOL §2): everything that reads, checks and
//! writes documents, a pure function of the text, with no file system.
//!
//! The pipeline: [`decode`](crate::decode) checks the size and encoding of
//! the bytes (`input`); [`lex`] turns the text into line tokens, one per
//! marker line and one per run of other lines (`lexer`);
//! [`parse`](crate::parse) reads units from the tokens by depth counting,
//! recovering from every malformed unit (`parser`), and checks attributes,
//! paths and bodies (`validate`, `near_miss`) into a
//! [`Document`] with [`Diagnostic`]s
//! (`diagnostics`); [`print()`] writes a document back as
//! canonical text (`printer`).
//!
//! The crate root re-exports what most users need; this module holds the
//! rest: the tokens, the marker vocabulary, attributes, positions and the
//! limits of the input.

// The files, bottom first: each imports only files listed before it.
//   span         byte spans, lines and columns
//   markers      the marker vocabulary: characters, fences, keywords
//   suggest      the nearest known word, a list of choices
//   path         a path's text resolved into a Location
//   attributes   an opener's attributes as written
//   diagnostics  a diagnostic as data, and its rendering
//   lexer        text into line tokens
//   input        the size limit and UTF-8
//   raw          tasks as the parser delimited them
//   nesting      how openers nest, found before parsing
//   ast          the document model
//   near_block   a near-miss block and its one fix
//   near_miss    lines that are almost marker lines
//   context      the document being checked, and the options
//   structure    structural diagnostics
//   values       attribute names and values, paths included
//   validate     raw tasks into checked AST nodes
//   parser       tokens into units, with recovery
//   printer      units back to canonical text

pub(crate) mod ast;
pub(crate) mod attributes;
pub(crate) mod context;
pub(crate) mod diagnostics;
pub(crate) mod input;
pub(crate) mod lexer;
pub(crate) mod markers;
pub(crate) mod near_block;
pub(crate) mod near_miss;
mod nesting;
pub(crate) mod parser;
pub(crate) mod path;
pub(crate) mod printer;
pub(crate) mod raw;
pub(crate) mod span;
pub(crate) mod structure;
mod suggest;
pub(crate) mod validate;
pub(crate) mod values;

pub use ast::{BlockRules, OpName, Parsed, TaskPath};
pub use attributes::{Attribute, Quote};
pub(crate) use diagnostics::sort_in_document_order;
pub use diagnostics::{DiagnosticKind, Label, Renderer};
pub use input::{MAX_DOCUMENT_SIZE, valid_prefix};
pub(crate) use input::{read_limited, too_large, within_limit};
pub use lexer::{Lexer, Marker, Token, TokenKind, lex};
pub use markers::{Keyword, Shape, TaskKind, Version};
pub use parser::{Units, each_unit, units};
#[cfg(feature = "engine")]
pub(crate) use path::MAX_PATH_COMPONENTS;
pub use path::PathProblem;
pub use printer::PrintError;
pub use span::{Cursor, LineIndex};

pub(crate) use markers::*;

// The door the other layers come in by: each name the library needs from
// the syntax layer, by one path (`crate::syntax::Op`). Only the crate root
// names the modules, for its public re-exports.
pub(crate) use ast::{Block, Count, Document, Kept, Matching, Op, Policy, Task, Unit};
pub(crate) use context::{Context, ParseOptions};
pub(crate) use diagnostics::{Diagnostic, Severity, render};
pub(crate) use lexer::classify;
pub(crate) use parser::parse_with;
#[cfg(any(feature = "engine", feature = "proptest", feature = "arbitrary"))]
pub(crate) use path::normalize_path;
#[cfg(feature = "engine")]
pub(crate) use path::{Anchor, TooDeep, abbreviated_path, is_absolute_path, is_protected};
pub(crate) use path::{Location, resolve_path};
pub(crate) use printer::print;
pub(crate) use span::{Position, Span};
pub(crate) use suggest::quoted_list;
pub(crate) use validate::unchanged_edit;
pub(crate) use values::check_path_attribute;
