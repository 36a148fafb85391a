//! clada-markers reads edit documents written with git-style conflict
//! markers, checks them, and applies them to a directory (PROTOCOL, in
//! `grammar/PROTOCOL.md` of the repository).
//!
//! # The pipeline
//!
//! ```text
//!  bytes ──decode──▶ text ──parse──▶ Document ──Apply::run──▶ ApplyReport
//!                     │   (units,      │                      (JSON, text, XML)
//!                     │   diagnostics) ├──render──▶ diagnostics for people
//!                     │                ├──print───▶ canonical text
//!                     │                └──CheckReport::new──▶ check report
//!                     └──dialect::parse_dialect (aider, codex, CML, udiff, cline)──▶ Document
//! ```
//!
//! The layers, each importing only those before it: [`syntax`] (lexing,
//! parsing, validation, printing, diagnostics: pure functions of the text;
//! the rest of the crate names its items through `syntax` itself),
//! [`dialect`] (other edit formats read into the same [`Document`]),
//! [`engine`] (the tree, through the root's handle and as the run's view;
//! planning, matching, git, the lock and the journal; a run's [`Settings`]),
//! [`commands`] (RUN's tiers, the built-ins, listed once in a registry and
//! seeing only the tree, the sandbox, approvals), [`report`] (what happened,
//! for people and for programs; the [`Listener`] a run is heard through) and
//! [`Apply`] (the entry point: a run of a document, unit by unit, which
//! builds its report as it goes). [`input`] reads a document (a file,
//! standard input, a string) under the one limit rule. The engine,
//! the commands and `Apply` are the `engine` cargo feature, on by default;
//! without it the crate parses, checks, prints and converts, with no git2,
//! rustix or process code: for editor plugins and fuzzers.
//!
//! # Parsing and walking units
//!
//! ```
//! use clada_markers::{Op, Unit, parse};
//!
//! let doc = parse("<<<<<<< WRITE path=\"hello.txt\"\nhi\n>>>>>>> END\n");
//! assert!(!doc.has_errors());
//! for unit in &doc.units {
//!     assert!(matches!(unit, Unit::Task(_)));
//!     for task in unit.tasks() {
//!         let Some(Op::Write { path, content, .. }) = &task.op else { unreachable!() };
//!         assert_eq!((path.as_ref(), content.as_ref()), ("hello.txt", "hi\n"));
//!     }
//! }
//! ```
//!
//! # Rendering diagnostics
//!
//! ```
//! use clada_markers::{ErrorType, parse, render};
//!
//! let text = "<<<<<<< WRITE path=\"a.txt\"\nhi\n";
//! let doc = parse(text);
//! let d = &doc.diagnostics[0];
//! assert_eq!(d.error_type(), ErrorType::MalformedStructure);
//! // With a source excerpt, as `clada check` shows it (no colour here).
//! let shown = render(&doc.diagnostics, text, "reply.md", false);
//! assert!(shown.contains("reply.md"));
//! // The fix a diagnostic offers: here, the missing closer.
//! assert_eq!(d.fix.as_ref().map(|f| f.replacement.as_str()), Some(">>>>>>> END\n"));
//! ```
//!
//! # Applying to a directory
//!
//! ```
//! # #[cfg(feature = "engine")] {
//! use clada_markers::{Apply, parse};
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("a.txt"), "one\ntwo\n")?;
//! let doc = parse("<<<<<<< SEARCH path=\"a.txt\"\ntwo\n=======\n2\n>>>>>>> REPLACE\n");
//! // No git commits; `.dry_run(true)` would write nothing and say what would change.
//! let report = Apply::new(dir.path())?.git(None).run(&doc);
//! assert!(report.ok);
//! assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "one\n2\n");
//! println!("{}", serde_json::to_string_pretty(&report)?);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(feature = "engine")]
mod apply;
#[cfg(feature = "engine")]
pub mod commands;
pub mod dialect;
#[cfg(feature = "engine")]
pub mod engine;
mod error_type;
pub mod escape;
pub mod generate;
pub mod input;
#[cfg(feature = "engine")]
pub mod mcp;
pub mod report;
mod status;
pub mod stream;
pub mod syntax;
pub mod units;
#[cfg(feature = "engine")]
pub mod watch;

#[cfg(feature = "engine")]
pub use apply::Apply;
#[cfg(feature = "engine")]
pub use apply::files::{FilesError, MAX_FILES_SIZE, apply_files};
pub use dialect::{Dialect, read};
#[cfg(feature = "engine")]
pub use engine::seek::MatchMode;
#[cfg(feature = "engine")]
pub use engine::settings::Settings;
#[cfg(feature = "engine")]
pub use engine::undo::{UndoError, Undone};
pub use error_type::{Category, ErrorType};
#[cfg(feature = "engine")]
pub use report::listener::Listener;
pub use report::{ApplyReport, CheckReport};
pub use syntax::ast::{Block, Count, Document, Kept, Matching, Op, Policy, Task, Unit};
pub use syntax::context::ParseOptions;
pub use syntax::diagnostics::{Diagnostic, Fix, Severity, render};
pub use syntax::input::decode;
pub use syntax::parser::{parse, parse_with};
pub use syntax::printer::print;
pub use syntax::span::{Position, Span};

/// The README's Rust snippets, compiled by `cargo test` as doctests: a
/// change of the library that breaks one fails the tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeSnippets;
