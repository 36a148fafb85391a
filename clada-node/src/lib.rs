//! The addon of the Node package `clada` (`clada-node/`, loaded by
//! `index.js`): `check`, `apply`, `convert`, `prompt` and `schema`, each
//! what the command of the same name does, in process.
//!
//! The steps and the settings are the Python package's, the very files
//! (`clada-py/src/calls.rs` and `settings.rs`, which touch no Python):
//! one door's rules are the other's. This file only converts: each call
//! answers with one JSON text, an outcome that `index.js` turns into a
//! value or a thrown error (`CladaError` and its subclasses,
//! `ConvertError`, `TypeError`), so that reports reach JavaScript as plain
//! objects, key for key the command line's `--format json`.
//!
//! `apply` runs on a thread of libuv's pool (napi's `AsyncTask`): the
//! event loop goes on while a document is applied and its commands run.
//! `applySync` is the same call on the calling thread.

#[path = "../../clada-py/src/calls.rs"]
mod calls;
#[path = "../../clada-py/src/settings.rs"]
mod settings;

use clada_markers::engine::{Dirs, DirsError};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi::{Env, Task};
use napi_derive::napi;
use serde_json::{Value, json};

use calls::{Failure, Report};
use settings::{ApplySettings, BadArgument, DialectChoice, Matching};

/// The system prompt of `clada prompt`, kept beside the command line.
const PROMPT: &str = include_str!("../../clada-cli/prompt.md");

/// What a call answers, as `index.js` reads it: `{"value": …,
/// "warnings": […]}`, or `{"error": {"class": …}, …}` with what the error
/// carries. Reports are written as text, not through `serde_json::Value`,
/// whose maps would sort their keys: the fields keep the report's order.
fn outcome(result: Result<String, Failure>, warnings: &[String]) -> String {
    let warnings = Value::from(warnings).to_string();
    match result {
        Ok(value) => format!(r#"{{"value":{value},"warnings":{warnings}}}"#),
        Err(failure) => format!(
            r#"{{"error":{},"warnings":{warnings}}}"#,
            failure_json(failure)
        ),
    }
}

fn bad_argument(BadArgument(message): BadArgument) -> String {
    json!({ "error": { "class": "TypeError", "message": message } }).to_string()
}

/// A report (or any value) as JSON text.
fn text(report: &impl serde::Serialize) -> String {
    // A report always serialises (plain data); were it ever to fail, the
    // JavaScript side sees `null` and says so rather than crashing here.
    serde_json::to_string(report).unwrap_or_else(|_| "null".to_owned())
}

fn failure_json(failure: Failure) -> String {
    match failure {
        Failure::Clada {
            kind,
            message,
            report,
        } => {
            let report = match report {
                None => "null".to_owned(),
                Some(Report::Apply(r)) => text(&r),
                Some(Report::Check(r)) => text(&r),
            };
            let fields = json!({
                "class": "CladaError",
                "message": message,
                "type": kind.as_str(),
                // Its name in reports: `validation`, `runtime`, `system`.
                "category": kind.category(),
                "retryable": kind.retryable(),
            })
            .to_string();
            // The fields, then the report as written.
            let fields = fields.strip_suffix('}').unwrap_or(&fields);
            format!(r#"{fields},"report":{report}}}"#)
        }
        Failure::Convert { task, message } => json!({
            "class": "ConvertError",
            "message": message,
            "task": task,
        })
        .to_string(),
    }
}

/// `check(document, dialect)`: the report of `clada check --format json`.
#[napi(js_name = "checkJson")]
pub fn check_json(document: Buffer, dialect: String) -> String {
    let dialect = match DialectChoice::parse(&dialect, "dialect") {
        Ok(d) => d,
        Err(e) => return bad_argument(e),
    };
    // A copy: shared memory could change under the reading (applyFiles).
    let copy = document.to_vec();
    outcome(calls::check(&copy, dialect).map(|(r, _)| text(&r)), &[])
}

/// The options of `apply`, as `index.js` passes them on (checked there
/// for their JavaScript types; their values are checked here).
#[napi(object)]
#[derive(Debug)]
pub struct ApplyOptions {
    pub dialect: String,
    pub dry_run: bool,
    /// `"unit"`, `"document"`, or none.
    pub atomic: Option<String>,
    pub r#match: String,
    /// Commits before and after.
    pub git: bool,
    /// The author of the commits, when not clada.
    pub author: Option<String>,
    pub allow: Vec<String>,
    /// Seconds.
    pub timeout: Option<f64>,
    /// A duration as the command line writes one ("30s", "500ms").
    pub timeout_text: Option<String>,
    /// A document without any task is not an error (`no_tasks`).
    pub allow_empty: bool,
    /// `applyFiles` only: the report has its `changes` (a diff per file).
    pub changes: Option<bool>,
}

impl ApplyOptions {
    fn settings(self) -> Result<ApplySettings, BadArgument> {
        Ok(ApplySettings {
            dialect: DialectChoice::parse(&self.dialect, "dialect")?,
            dry_run: self.dry_run,
            atomic: settings::atomic(self.atomic.as_deref())?,
            matching: Matching::parse(&self.r#match)?,
            git: settings::git(self.author.as_deref(), self.git)?,
            allow: settings::allow(self.allow)?,
            timeout: settings::timeout(match (&self.timeout_text, self.timeout) {
                (Some(text), _) => Some(settings::Timeout::Text(text)),
                (None, seconds) => seconds.map(settings::Timeout::Seconds),
            })?,
            allow_empty: self.allow_empty,
        })
    }
}

/// One `apply`: everything it needs, owned, so that it can run on
/// another thread.
#[derive(Debug)]
pub struct ApplyCall {
    document: Vec<u8>,
    root: std::path::PathBuf,
    settings: ApplySettings,
    /// Taken by the run (once).
    dirs: Option<Result<Dirs, DirsError>>,
}

impl ApplyCall {
    fn new(document: &[u8], root: String, options: ApplyOptions) -> Result<Self, BadArgument> {
        Ok(ApplyCall {
            document: document.to_vec(),
            root: root.into(),
            settings: options.settings()?,
            // The environment is read on JavaScript's thread, when the
            // call is made, not later on the pool's.
            dirs: Some(Dirs::from_env()),
        })
    }

    fn run(&mut self) -> String {
        let mut warnings = Vec::new();
        let dirs = self.dirs.take().unwrap_or_else(Dirs::from_env);
        let result = calls::apply(
            &self.document,
            &self.root,
            &self.settings,
            dirs,
            &mut warnings,
        )
        .map(|(r, _)| text(&r));
        outcome(result, &warnings)
    }
}

/// `applySync(document, root, options)`: `clada apply --no-prompt
/// --format json`, on the calling thread.
#[napi(js_name = "applySyncJson")]
pub fn apply_sync_json(document: Buffer, root: String, options: ApplyOptions) -> String {
    match ApplyCall::new(&document, root, options) {
        Ok(mut call) => call.run(),
        Err(e) => bad_argument(e),
    }
}

/// The task of `apply`: run on libuv's pool, answered on JavaScript's
/// thread.
#[derive(Debug)]
pub struct ApplyTask {
    call: Result<ApplyCall, String>,
}

impl Task for ApplyTask {
    type Output = String;
    type JsValue = String;

    fn compute(&mut self) -> napi::Result<String> {
        Ok(match &mut self.call {
            Ok(call) => call.run(),
            Err(answer) => answer.clone(),
        })
    }

    fn resolve(&mut self, _env: Env, output: String) -> napi::Result<String> {
        Ok(output)
    }
}

/// `apply(document, root, options)`: as `applySync`, on a thread of the
/// pool; a promise of the answer.
#[napi(js_name = "applyJson")]
pub fn apply_json(document: Buffer, root: String, options: ApplyOptions) -> AsyncTask<ApplyTask> {
    let call = ApplyCall::new(&document, root, options).map_err(bad_argument);
    AsyncTask::new(ApplyTask { call })
}

// applyFiles, the in-memory apply over the library's `apply_files`.
pub mod files;

/// `convert(document, to, from)`: the document in another dialect.
#[napi(js_name = "convertJson")]
pub fn convert_json(document: Buffer, to: String, from: String) -> String {
    let to = match settings::target(&to) {
        Ok(to) => to,
        Err(e) => return bad_argument(e),
    };
    let from = match DialectChoice::parse(&from, "from") {
        Ok(from) => from,
        Err(e) => return bad_argument(e),
    };
    let copy = document.to_vec();
    outcome(calls::convert(&copy, to, from).map(|c| text(&c)), &[])
}

/// The system prompt of `clada prompt`: how to write edits clada applies.
#[napi]
pub fn prompt() -> &'static str {
    PROMPT
}

/// The JSON Schema of a report, as `clada schema apply|check` prints it.
#[napi(js_name = "schemaJson")]
pub fn schema_json(which: String) -> String {
    let schema = match which.as_str() {
        "apply" => clada_markers::report::apply_schema(),
        "check" => clada_markers::report::check_schema(),
        other => {
            return bad_argument(BadArgument(format!(
                "schema({other:?}): there are two reports, \"apply\" and \"check\""
            )));
        }
    };
    outcome(Ok(text(&schema)), &[])
}

/// The version of the package, the workspace's.
#[napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ApplyOptions {
        ApplyOptions {
            dialect: "auto".to_owned(),
            dry_run: false,
            atomic: None,
            r#match: "whitespace".to_owned(),
            git: false,
            author: None,
            allow: Vec::new(),
            timeout: None,
            timeout_text: None,
            allow_empty: false,
            changes: None,
        }
    }

    fn answer(json: &str) -> Value {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_bad_option_is_a_type_error_naming_it() {
        let mut bad = options();
        bad.r#match = "fuzzy".to_owned();
        let Err(e) = ApplyCall::new(b"", ".".to_owned(), bad) else {
            panic!("accepted match=fuzzy");
        };
        let a = answer(&bad_argument(e));
        assert_eq!(a["error"]["class"], "TypeError");
        assert!(a["error"]["message"].as_str().unwrap().contains("fuzzy"));
    }

    #[test]
    fn a_missing_root_is_a_clada_error_with_its_type_and_category() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("nowhere").display().to_string();
        let mut call = ApplyCall::new(b"", root, options()).unwrap();
        let a = answer(&call.run());
        assert_eq!(a["error"]["class"], "CladaError");
        assert_eq!(a["error"]["type"], "file_not_found");
        assert_eq!(a["error"]["category"], "runtime");
        assert_eq!(a["error"]["retryable"], false);
    }

    #[test]
    fn a_report_is_the_value_and_a_failed_document_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().display().to_string();
        let document = b"<<<<<<< SEARCH path=\"a.txt\"\nmissing\n=======\nx\n>>>>>>> REPLACE\n";
        std::fs::write(dir.path().join("a.txt"), "present\n").unwrap();
        let mut call = ApplyCall::new(document, root, options()).unwrap();
        let a = answer(&call.run());
        assert_eq!(a["value"]["ok"], false, "{a}");
        assert!(a["value"]["resend"].is_object(), "{a}");
    }
}
