//! clada-markers reads edit documents written with git-style conflict
//! markers and checks them.
//!
//! The pipeline: [`decode`] checks the size and encoding of the bytes;
//! [`lex`] turns the text into line tokens, one per marker line and one per
//! run of other lines; [`parse`] reads units from the tokens by depth
//! counting, recovering from every malformed unit, and validates attributes,
//! paths and bodies into a [`Document`] of [`Unit`]s with [`Diagnostic`]s;
//! [`render`] shows diagnostics to people and [`print()`] writes a document
//! back as canonical text. Nothing here touches the file system.
//!
//! ```
//! let doc = clada_markers::parse("<<<<<<< WRITE path=\"hello.txt\"\nhi\n>>>>>>> END\n");
//! assert!(!doc.has_errors());
//! let task = doc.tasks().next().unwrap();
//! assert_eq!(task.op, Some(clada_markers::Op::Write {
//!     path: "hello.txt".into(),
//!     append: false,
//!     content: "hi\n".into(),
//! }));
//! ```

#[cfg(feature = "engine")]
mod apply;
mod ast;
mod attributes;
#[cfg(feature = "engine")]
pub mod commands;
mod diagnostics;
pub mod dialect;
#[cfg(feature = "engine")]
pub mod dirs;
#[cfg(feature = "engine")]
pub mod engine;
mod error_type;
pub mod escape;
pub mod generate;
#[cfg(feature = "engine")]
pub mod git;
mod input;
#[cfg(feature = "engine")]
pub mod journal;
mod lexer;
mod near_miss;
mod parser;
mod path;
mod printer;
pub mod report;
#[cfg(feature = "engine")]
pub mod run;
mod span;
pub mod stream;
mod syntax;
mod validate;

#[cfg(feature = "engine")]
pub use apply::Apply;
pub use ast::{Block, Count, Document, Op, OpName, Task, Unit};
pub use attributes::{Attribute, Quote};
pub use diagnostics::{Diagnostic, DiagnosticKind, Fix, Label, Renderer, Severity, render};
pub use error_type::{Category, ErrorType};
pub use input::{MAX_DOCUMENT_SIZE, decode, read_limited, too_large, valid_prefix};
pub use lexer::{Lexer, Marker, Token, TokenKind, lex};
pub use parser::{parse, parse_with};
pub use path::{PathProblem, normalize as normalize_path};
pub use printer::{PrintError, print};
pub use report::{ApplyReport, CheckReport, describe, render_check_text};
pub use span::{Cursor, LineIndex, Position, Span};
pub use syntax::{Keyword, MIN_FENCE, Shape, TaskKind, Version};
pub use validate::ParseOptions;
