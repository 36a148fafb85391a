//! What each Python function does, in Rust and without Python: the same
//! steps as `clada check|apply --format json` and `clada convert`, so
//! that the reports are the command line's, field for field.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use clada_markers::dialect::{Dialect, parse_dialect, parse_units};
use clada_markers::engine::{Dirs, DirsError, Observer, TaskOutcome};
use clada_markers::report::text::{Detail, ExecOutput, TextPrinter};
use clada_markers::report::{BlockReport, CheckBuilder, CheckText};
use clada_markers::syntax::{self, valid_prefix};
use clada_markers::{
    Apply, ApplyReport, CheckReport, Diagnostic, ErrorType, Listener, ParseOptions, Settings, Task,
    Unit, decode, render,
};

use crate::settings::{ApplySettings, DialectChoice};

/// A report, as the command line prints it with `--format json`.
#[derive(Debug)]
pub(crate) enum Report {
    Apply(Box<ApplyReport>),
    Check(Box<CheckReport>),
}

/// Why a call could not run (a document that fails is a report, not one
/// of these).
#[derive(Debug)]
pub(crate) enum Failure {
    /// An error of the protocol (PROTOCOL §8): `clada.CladaError`, with
    /// the report when there is one.
    Clada {
        kind: ErrorType,
        message: String,
        report: Option<Report>,
    },
    /// A document without errors that the target dialect cannot express:
    /// `clada.ConvertError`.
    Convert {
        task: Option<usize>,
        message: String,
    },
}

impl Failure {
    fn clada(kind: ErrorType, message: impl Into<String>) -> Self {
        Failure::Clada {
            kind,
            message: message.into(),
            report: None,
        }
    }
}

/// The document's text, or the diagnostic of a document that is not
/// UTF-8. A document over the size limit cannot be read at all: that is
/// a failure of the call (`input_too_large`), not a report.
fn text(bytes: &[u8]) -> Result<Result<&str, Diagnostic>, Failure> {
    match decode(bytes) {
        Err(d) if d.error_type() == ErrorType::InputTooLarge => {
            let help = d.help.as_deref().unwrap_or_default();
            Err(Failure::clada(
                ErrorType::InputTooLarge,
                format!("{} ({} bytes); {help}", d.message, bytes.len()),
            ))
        }
        decoded => Ok(decoded),
    }
}

/// What the text report calls the document, as the MCP server's does.
const DOCUMENT: &str = "<document>";

/// The text report of a document that cannot be read (not UTF-8), as
/// `clada check` and `clada apply` print it.
fn unreadable_text(document: &[u8], d: &Diagnostic) -> String {
    let shown = String::from_utf8_lossy(document);
    let text = render(std::slice::from_ref(d), &shown, DOCUMENT, false);
    if text.is_empty() {
        format!("error[{}]: {}\n", d.kind, d.message)
    } else {
        text
    }
}

/// `Dialect: NAME` before the text report of a document in another
/// dialect than clada's, as the command line prints it.
fn dialect_line(dialect: Dialect) -> String {
    if dialect == Dialect::Clada {
        String::new()
    } else {
        format!("Dialect: {dialect}\n")
    }
}

fn elapsed(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// `clada check --format json`, and the text `clada check` prints (what
/// the MCP server's `check` tool returns).
pub(crate) fn check(
    document: &[u8],
    dialect: DialectChoice,
) -> Result<(CheckReport, String), Failure> {
    let text = match text(document)? {
        Ok(text) => text,
        Err(d) => {
            let report = CheckReport::unreadable(&d, valid_prefix(document));
            return Ok((report, unreadable_text(document, &d)));
        }
    };
    let dialect = dialect.of(text);
    let parsed = parse_units(text, dialect, ParseOptions::default());
    let mut builder = CheckBuilder::new(text);
    let mut printer = CheckText::new(text, dialect_line(dialect).into_bytes());
    let mut blocks = Vec::new();
    let diagnostics = syntax::each_unit(parsed, |u, ds| {
        blocks.push(builder.unit(u, ds));
        printer.unit(u, ds);
    });
    let mut report = builder.finish(blocks, &diagnostics);
    report.dialect = dialect;
    let printed = printer
        .finish(&diagnostics, DOCUMENT, false)
        .map(|out| String::from_utf8_lossy(&out).into_owned())
        .unwrap_or_default();
    Ok((report, printed))
}

/// Hears a run for the Python caller: each block's report kept for the
/// report returned, and the text report printed as `clada apply` prints
/// it (the MCP server's `apply` tool's text).
struct Hear<'d> {
    printer: TextPrinter<'d, Vec<u8>>,
    blocks: Vec<BlockReport>,
}

impl Observer for Hear<'_> {
    fn block_started(&mut self, unit: &Unit<'_>, diagnostics: &[Diagnostic], runnable: bool) {
        self.printer.block_started(unit, diagnostics, runnable);
    }
    fn loose_diagnostics(&mut self, diagnostics: &[Diagnostic]) {
        self.printer.loose_diagnostics(diagnostics);
    }
    fn task_finished(&mut self, task: &Task<'_>, outcome: &TaskOutcome) {
        self.printer.task_finished(task, outcome);
    }
    fn output_line(&mut self, task: usize, line: &str) {
        self.printer.output_line(task, line);
    }
}

impl Listener for Hear<'_> {
    fn block(&mut self, report: BlockReport) {
        self.printer.block(report.clone());
        self.blocks.push(report);
    }
}

/// The protocol's error type for a root that cannot be opened.
fn root_error(e: &std::io::Error) -> ErrorType {
    match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => ErrorType::FileNotFound,
        _ => ErrorType::PermissionDenied,
    }
}

/// What `apply` warns about on the way (Python's `warnings`), as the
/// command line does on stderr.
pub(crate) type Warnings = Vec<String>;

/// `clada apply --no-prompt --format json` with `settings`. `dirs`:
/// clada's own directories as the environment gives them
/// ([`Dirs::from_env`], read by the caller while no other thread of the
/// interpreter can change the environment).
pub(crate) fn apply(
    document: &[u8],
    root: &Path,
    settings: &ApplySettings,
    dirs: Result<Dirs, DirsError>,
    warnings: &mut Warnings,
) -> Result<(ApplyReport, String), Failure> {
    let started = Instant::now();
    let text = text(document)?;
    let apply = Apply::new(root).map_err(|e| {
        Failure::clada(
            root_error(&e),
            format!(
                "cannot open the root directory {}: {e}; pass the directory the document's paths are relative to",
                root.display()
            ),
        )
    })?;
    let dirs = match dirs {
        Ok(dirs) => Some(dirs),
        Err(e) => {
            warnings.push(format!(
                "{e}: no approvals of `clada allow` and no default lock outside a git repository"
            ));
            None
        }
    };
    let mut apply = settings.configure(apply, dirs);
    if apply.has_legacy_approvals() {
        warnings.push(format!(
            "ignoring {}: approvals live outside the tree now; approve again with `clada allow -C ROOT CMD`, or pass allow=",
            root.join(clada_markers::commands::LEGACY_PATH).display()
        ));
    }
    let text = match text {
        Ok(text) => text,
        Err(d) => {
            // Nothing runs: the document is refused as a whole.
            let report = ApplyReport::unreadable(&d, valid_prefix(document), elapsed(started));
            return Ok((report, unreadable_text(document, &d)));
        }
    };
    let dialect = settings.dialect.of(text);
    let parsed = parse_units(text, dialect, ParseOptions::default());
    // As the MCP server runs it: command output after each task.
    let mut hear = Hear {
        printer: TextPrinter::new(
            Vec::new(),
            text,
            DOCUMENT,
            Detail::Minimal,
            ExecOutput::Buffer,
            false,
        ),
        blocks: Vec::new(),
    };
    let mut report = apply.run_units(text, parsed, &mut hear);
    report.blocks = hear.blocks;
    report.duration_ms = elapsed(started);
    report.dialect = dialect;
    // A path passed where the text belongs: said, whatever `allow_empty`.
    if report.summary.tasks == 0
        && let Some(name) = names_a_file(text, root)
    {
        return Err(Failure::Clada {
            kind: ErrorType::MalformedStructure,
            message: format!(
                "the document is {name:?}, the name of a file, and holds no task: did you pass a path? read the file and pass its text, e.g. clada.apply(pathlib.Path({name:?}).read_text(), root)"
            ),
            report: Some(Report::Apply(Box::new(report))),
        });
    }
    // A run refused as a whole (the lock, the commit before the tasks)
    // ran nothing: the call failed, and the report goes with the error.
    if let Some(error) = &report.error {
        return Err(Failure::Clada {
            kind: error.kind,
            message: error.message.clone(),
            report: Some(Report::Apply(Box::new(report))),
        });
    }
    hear.printer.finish(&report);
    let mut printed = dialect_line(dialect);
    if !printed.is_empty() {
        printed.push('\n');
    }
    printed += &String::from_utf8_lossy(&hear.printer.into_inner());
    Ok((report, printed))
}

/// The document when it is one line naming an existing file (from the
/// working directory, or the root), as a path passed for the text is.
fn names_a_file<'t>(text: &'t str, root: &Path) -> Option<&'t str> {
    let name = text.trim();
    if name.is_empty() || name.len() > 4096 || name.contains('\n') {
        return None;
    }
    let path = Path::new(name);
    (path.is_file() || root.join(path).is_file()).then_some(name)
}

/// `clada_markers::apply_files` with `settings` (their dialect,
/// matching and `atomic`; no git, no lock, no commands): the files after
/// the document, and its report, with its `changes` when `changes` (or a
/// dry run) asks. A document not UTF-8 is a report, the files unchanged.
pub(crate) fn apply_files(
    document: &[u8],
    files: BTreeMap<String, Vec<u8>>,
    settings: &ApplySettings,
    changes: bool,
) -> Result<(BTreeMap<String, Vec<u8>>, ApplyReport), Failure> {
    let started = Instant::now();
    let text = match text(document)? {
        Ok(text) => text,
        Err(d) => {
            let report = ApplyReport::unreadable(&d, valid_prefix(document), elapsed(started));
            return Ok((files, report));
        }
    };
    let dialect = settings.dialect.of(text);
    let settings = Settings {
        dialect,
        atomic: settings.atomic,
        matching: settings.matching.into(),
        dry_run: settings.dry_run,
        allow_empty: settings.allow_empty,
        changes,
        ..Settings::in_memory()
    };
    let (after, mut report) = clada_markers::apply_files(text, files, &settings)
        .map_err(|e| Failure::clada(e.error_type(), e.to_string()))?;
    report.duration_ms = elapsed(started);
    report.dialect = dialect;
    Ok((after, report))
}

/// `clada convert --from FROM --to TO`.
pub(crate) fn convert(
    document: &[u8],
    to: Dialect,
    from: DialectChoice,
) -> Result<String, Failure> {
    let text = text(document)?.map_err(|d| {
        let report = CheckReport::unreadable(&d, valid_prefix(document));
        Failure::Clada {
            kind: d.error_type(),
            message: format!("{}; {}", d.message, d.help.as_deref().unwrap_or_default()),
            report: Some(Report::Check(Box::new(report))),
        }
    })?;
    let from = from.of(text);
    let doc = parse_dialect(text, from, ParseOptions::default());
    if let Some(first) = doc.diagnostics.iter().find(|d| d.is_error()) {
        let errors: Vec<Diagnostic> = doc
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        let shown = render(&errors, text, "<document>", false);
        let mut report = CheckReport::new(&doc);
        report.dialect = from;
        return Err(Failure::Clada {
            kind: first.error_type(),
            message: format!(
                "the document ({from}) has errors: fix them before converting it\n{shown}"
            ),
            report: Some(Report::Check(Box::new(report))),
        });
    }
    clada_markers::dialect::convert(&doc, to).map_err(|e| Failure::Convert {
        task: e.task,
        message: format!("cannot write this document as {to}: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Matching;

    fn settings() -> ApplySettings {
        ApplySettings {
            dialect: DialectChoice::Auto,
            dry_run: false,
            atomic: None,
            matching: Matching::Whitespace,
            git: None,
            allow: Vec::new(),
            timeout: None,
            allow_empty: false,
        }
    }

    #[test]
    fn a_document_over_the_limit_is_a_failure_not_a_report() {
        let big = vec![b'x'; syntax::MAX_DOCUMENT_SIZE + 1];
        let Err(Failure::Clada { kind, .. }) = check(&big, DialectChoice::Auto) else {
            panic!("a report for a document over the limit");
        };
        assert_eq!(kind, ErrorType::InputTooLarge);
    }

    #[test]
    fn a_document_not_in_utf8_is_a_report() {
        let (report, text) = check(b"ok\n\xff\n", DialectChoice::Auto).unwrap();
        assert!(text.contains("UTF-8"), "{text}");
        assert!(!report.ok);
        assert_eq!(report.diagnostics[0].code, ErrorType::InvalidUtf8);
    }

    #[test]
    fn a_missing_root_is_file_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nowhere");
        let Err(Failure::Clada { kind, message, .. }) = apply(
            b"",
            &missing,
            &settings(),
            Dirs::from_env(),
            &mut Vec::new(),
        ) else {
            panic!("a report for a missing root");
        };
        assert_eq!(kind, ErrorType::FileNotFound);
        assert!(message.contains("nowhere"), "{message}");
    }

    #[test]
    fn a_document_without_a_task_is_an_error_unless_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let run = |doc: &[u8], allow_empty: bool| {
            let settings = ApplySettings {
                allow_empty,
                ..settings()
            };
            apply(
                doc,
                dir.path(),
                &settings,
                Dirs::from_env(),
                &mut Vec::new(),
            )
        };
        for doc in [&b"Only prose.\n"[..], b""] {
            let Ok((report, _)) = run(doc, false) else {
                panic!("no report");
            };
            assert!(!report.ok);
            assert_eq!(report.exit_code(), 1);
            assert_eq!(report.diagnostics[0].kind, "no_tasks");
            let Ok((report, _)) = run(doc, true) else {
                panic!("no report");
            };
            assert!(report.ok);
        }
        // A path where the text belongs: said, allowed or not.
        std::fs::write(
            dir.path().join("reply.md"),
            "<<<<<<< WRITE path=\"a\"\nx\n>>>>>>> END\n",
        )
        .unwrap();
        for allow_empty in [false, true] {
            let Err(Failure::Clada {
                message, report, ..
            }) = run(b"reply.md", allow_empty)
            else {
                panic!("a path passed as the document was taken for prose");
            };
            assert!(message.contains("did you pass a path?"), "{message}");
            assert!(report.is_some());
        }
        assert!(!dir.path().join("a").exists());
    }

    #[test]
    fn a_root_the_system_refuses_is_permission_denied() {
        use std::io::{Error, ErrorKind};
        assert_eq!(
            root_error(&Error::from(ErrorKind::PermissionDenied)),
            ErrorType::PermissionDenied
        );
        assert_eq!(
            root_error(&Error::from(ErrorKind::NotADirectory)),
            ErrorType::FileNotFound
        );
    }

    #[test]
    fn a_document_with_errors_is_not_converted() {
        let Err(Failure::Clada { kind, report, .. }) = convert(
            b"<<<<<<< WRITE path=\"a\"\nx\n",
            Dialect::Aider,
            DialectChoice::Auto,
        ) else {
            panic!("converted a document with an error");
        };
        assert_eq!(kind, ErrorType::MalformedStructure);
        assert!(matches!(report, Some(Report::Check(r)) if !r.ok));
    }
}
