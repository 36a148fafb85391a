//! `clada._clada`, the extension module of the Python package `clada`
//! (`clada-py/python/clada/`): `check`, `apply`, `convert`, `prompt`
//! and `schema`, each what the command of the same name does, in
//! process.
//!
//! Reports are the command line's `--format json` reports as Python data;
//! a call that cannot run raises `clada.CladaError` with the protocol's
//! error type (PROTOCOL §8). The interpreter's lock is released while a
//! document is read, checked, applied or converted. Nothing prompts: a
//! command runs when it is built in, approved with `clada allow`, or
//! named in `allow=` (this call only, at the root, never written
//! anywhere).
//!
//! The work is in `calls` (no Python) and `settings` (the arguments
//! as clada's settings); this file only converts between the two worlds.

mod calls;
mod settings;

use std::path::PathBuf;

use pyo3::exceptions::{PyRuntimeError, PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyString, PyType};

use calls::{Failure, Report};
use settings::{ApplySettings, BadArgument, DialectChoice, Matching, Timeout};

/// The system prompt of `clada prompt`, kept beside the command line.
const PROMPT: &str = include_str!("../../clada-cli/prompt.md");

/// `clada.CladaError` and `clada.ConvertError`, found once.
static CLADA_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static CONVERT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
/// `clada._render.Report`: the dict `check` and `apply` return.
static REPORT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A report as Python data: what `json.loads` makes of its JSON (dicts,
/// lists, strings, numbers, booleans and `None`, the keys in the report's
/// order), built directly, without the JSON text.
fn data<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot hand over the report: {e}")))
}

/// A report as `check` and `apply` return it: the dict of its JSON, with
/// the text report the command line prints beside it (an attribute, not a
/// key), for `clada.render`.
fn report_with_text<'py>(
    py: Python<'py>,
    report: &impl serde::Serialize,
    text: String,
) -> PyResult<Bound<'py, PyAny>> {
    let dict = data(py, report)?;
    let class = REPORT.import(py, "clada._render", "Report")?;
    let report = class.call1((dict,))?;
    report.setattr("_clada_text", text)?;
    Ok(report)
}

impl From<BadArgument> for PyErr {
    fn from(BadArgument(message): BadArgument) -> PyErr {
        PyValueError::new_err(message)
    }
}

/// The Python exception of a call that could not run.
fn raise(py: Python<'_>, failure: Failure) -> PyErr {
    exception(py, failure).unwrap_or_else(|e| e)
}

fn exception(py: Python<'_>, failure: Failure) -> PyResult<PyErr> {
    match failure {
        Failure::Clada {
            kind,
            message,
            report,
        } => {
            let report = match report {
                None => py.None().into_bound(py),
                Some(Report::Apply(r)) => data(py, &r)?,
                Some(Report::Check(r)) => data(py, &r)?,
            };
            // Its name in reports: `validation`, `runtime`, `system`.
            let category = serde_json::to_value(kind.category())
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let class = CLADA_ERROR.import(py, "clada._errors", "CladaError")?;
            let error =
                class.call1((message, kind.as_str(), category, kind.retryable(), report))?;
            Ok(PyErr::from_value(error))
        }
        Failure::Convert { task, message } => {
            let class = CONVERT_ERROR.import(py, "clada._errors", "ConvertError")?;
            Ok(PyErr::from_value(class.call1((message, task))?))
        }
    }
}

/// The bytes of a document given as `str` (UTF-8) or `bytes` (decoded
/// as the command line decodes a file: not UTF-8 is a report).
fn document_bytes<'a>(document: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(text) = document.cast::<PyString>() {
        return Ok(text.to_str()?.as_bytes());
    }
    if let Ok(bytes) = document.cast::<PyBytes>() {
        return Ok(bytes.as_bytes());
    }
    Err(PyTypeError::new_err(format!(
        "document must be str or bytes (a model's reply), not {}",
        document.get_type().name()?
    )))
}

/// Reads, checks and reports on a document; touches nothing.
///
/// `dialect`: "auto" (default), "clada", "aider", "codex", "cml", "udiff"
/// or "cline". Returns the report of `clada check --format json` as a
/// dict; a document with errors is a report whose `ok` is False. Raises
/// `clada.CladaError` (`input_too_large`) for a document over 50 MiB.
#[pyfunction]
#[pyo3(signature = (document, dialect = "auto"))]
fn check<'py>(
    py: Python<'py>,
    document: &Bound<'py, PyAny>,
    dialect: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = document_bytes(document)?;
    let dialect = DialectChoice::parse(dialect, "dialect")?;
    let (report, text) = py
        .detach(|| calls::check(bytes, dialect))
        .map_err(|f| raise(py, f))?;
    report_with_text(py, &report, text)
}

/// Applies a document to the directory `root`, as `clada apply --no-prompt
/// --format json` would.
///
/// Returns the report as a dict; a document that fails (in part or whole)
/// is a report whose `ok` is False, with `resend` saying what to send
/// again, and `changes` what the run changed, path by path (lines `added`
/// and `removed`, a unified `diff` cut at 400 lines a file and 2000 a
/// report, `omitted` the lines left out). Raises `clada.CladaError` when
/// the call cannot run: a root that cannot be opened, a document over 50
/// MiB, the lock not taken in time (`lock_timeout`, retryable), a failed
/// commit before the tasks.
///
/// - `dialect`: as for `check`.
/// - `dry_run`: plan everything, change nothing, report a diff per file.
/// - `atomic`: None, "unit" (or True: a unit that fails leaves no trace)
///   or "document" (all or nothing).
/// - `match`: "whitespace" (default) or "exact", how a SEARCH finds its
///   text.
/// - `git`: False (default: no commits), True (commit before and after, as
///   `clada <clada@localhost>`), or the author, e.g. "Ada <ada@example.com>".
/// - `allow`: command lines approved for this call only (exact text of a
///   RUN's body), besides built-in commands and those of `clada allow`;
///   never written anywhere. They hold at the root, as `clada allow`
///   without `--dir` approves: a RUN whose `dir` is below the root runs
///   only what `clada allow --dir DIR` approved there. Nothing else runs,
///   and nobody is asked.
/// - `timeout`: seconds (e.g. 120 or 1.5) or a duration as the command
///   line writes it ("30s", "500ms", "2m"); no command runs longer, and
///   tasks not started by then are skipped. None: 30 s per command, no
///   limit on the run.
/// - `allow_empty`: a document without any task (prose only, empty) is
///   then not an error (`no_tasks`), for pipelines that pass every reply.
///   A document that is only the name of an existing file raises, either
///   way: a path was passed where the text belongs.
#[pyfunction]
#[pyo3(signature = (
    document,
    root,
    *,
    dialect = "auto",
    dry_run = false,
    atomic = None,
    r#match = "whitespace",
    git = None,
    allow = None,
    timeout = None,
    allow_empty = false,
),
// What a Python user reads: `False` and `()` mean what `None` means.
text_signature = "(document, root, *, dialect=\"auto\", dry_run=False, atomic=None, match=\"whitespace\", git=False, allow=(), timeout=None, allow_empty=False)")]
#[allow(clippy::too_many_arguments)]
fn apply<'py>(
    py: Python<'py>,
    document: &Bound<'py, PyAny>,
    root: PathBuf,
    dialect: &str,
    dry_run: bool,
    atomic: Option<&Bound<'py, PyAny>>,
    r#match: &str,
    git: Option<&Bound<'py, PyAny>>,
    allow: Option<&Bound<'py, PyAny>>,
    timeout: Option<&Bound<'py, PyAny>>,
    allow_empty: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = document_bytes(document)?;
    let settings = ApplySettings {
        dialect: DialectChoice::parse(dialect, "dialect")?,
        dry_run,
        atomic: settings::atomic(atomic_name(atomic)?.as_deref())?,
        matching: Matching::parse(r#match)?,
        git: git_setting(git)?,
        allow: settings::allow(commands(allow)?)?,
        timeout: timeout_setting(timeout)?,
        allow_empty,
    };
    // The environment is read here, holding the interpreter's lock: no
    // other Python thread changes it meanwhile.
    let dirs = clada_markers::engine::Dirs::from_env();
    let mut warnings = Vec::new();
    let result = py.detach(|| calls::apply(bytes, &root, &settings, dirs, &mut warnings));
    for warning in warnings {
        let message = std::ffi::CString::new(warning.replace('\0', " ")).unwrap_or_default();
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &message, 1)?;
    }
    let (report, text) = result.map_err(|f| raise(py, f))?;
    report_with_text(py, &report, text)
}

/// Applies a document to files held in memory, as `apply` would to a
/// directory holding them, touching no disk: no lock, no git, no undo
/// record, and RUN tasks do not run (each is skipped: "not run: commands
/// do not run on files in memory").
///
/// `files` maps each file's path below the root (`src/a.py`: no `.` or
/// `..`, no `//`, not absolute) to its contents, `bytes` or `str` (as
/// UTF-8). Returns the files after the document (a dict of `bytes`; only
/// files, directories are implied) and the report, as `apply` gives it.
/// Raises `clada.CladaError`: a key that is not such a path, or a file
/// where another key needs a directory (`path_escape`), a document over
/// 50 MiB or files over 400 MiB together (`input_too_large`).
///
/// - `dialect`, `match`, `atomic`, `dry_run`, `allow_empty`: as for `apply`.
/// - `changes`: the report has `changes` (what the run changed, path by
///   path, with a unified diff per file, as `apply` gives them) only when
///   True, or in a dry run; the files after are the answer otherwise, and
///   the diffs cost most of a small call.
#[pyfunction]
#[pyo3(signature = (document, files, *, dialect = "auto", r#match = "whitespace", atomic = None, dry_run = false, allow_empty = false, changes = false),
text_signature = "(document, files, *, dialect=\"auto\", match=\"whitespace\", atomic=None, dry_run=False, allow_empty=False, changes=False)")]
#[allow(clippy::too_many_arguments)]
fn apply_files<'py>(
    py: Python<'py>,
    document: &Bound<'py, PyAny>,
    files: &Bound<'py, PyAny>,
    dialect: &str,
    r#match: &str,
    atomic: Option<&Bound<'py, PyAny>>,
    dry_run: bool,
    allow_empty: bool,
    changes: bool,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyAny>)> {
    let bytes = document_bytes(document)?;
    let settings = ApplySettings {
        dialect: DialectChoice::parse(dialect, "dialect")?,
        dry_run,
        atomic: settings::atomic(atomic_name(atomic)?.as_deref())?,
        matching: Matching::parse(r#match)?,
        git: None,
        allow: Vec::new(),
        timeout: None,
        allow_empty,
    };
    let files = file_map(files)?;
    let result = py.detach(|| calls::apply_files(bytes, files, &settings, changes));
    let (after, report) = result.map_err(|f| raise(py, f))?;
    let out = PyDict::new(py);
    for (path, contents) in after {
        out.set_item(path, PyBytes::new(py, &contents))?;
    }
    Ok((out, data(py, &report)?))
}

/// `files=`: a mapping of str paths to `bytes` or `str` contents.
fn file_map(files: &Bound<'_, PyAny>) -> PyResult<std::collections::BTreeMap<String, Vec<u8>>> {
    let wrong = || {
        PyTypeError::new_err("files must be a mapping of paths (str) to contents (bytes or str)")
    };
    let mut out = std::collections::BTreeMap::new();
    // A dict (not a subclass, whose `items` may say otherwise) is read
    // without asking for its items.
    if let Ok(dict) = files.cast_exact::<PyDict>() {
        for (key, value) in dict.iter() {
            one_file(&key, &value, &mut out)?;
        }
        return Ok(out);
    }
    let items = files.call_method0("items").map_err(|_| wrong())?;
    for item in items.try_iter().map_err(|_| wrong())? {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        one_file(&key, &value, &mut out)?;
    }
    Ok(out)
}

/// A file of `files=`, its path and contents, into `out`.
fn one_file(
    key: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    out: &mut std::collections::BTreeMap<String, Vec<u8>>,
) -> PyResult<()> {
    let path: String = key.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "files has the key {}: each path is a str",
            key.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    let contents = if let Ok(text) = value.cast::<PyString>() {
        text.to_str()?.as_bytes().to_vec()
    } else if let Ok(bytes) = value.cast::<PyBytes>() {
        bytes.as_bytes().to_vec()
    } else {
        return Err(PyTypeError::new_err(format!(
            "files[{path:?}] is {}: contents are bytes or str",
            value.get_type().name()?
        )));
    };
    // A mapping has each key once; one that says otherwise is refused.
    if out.insert(path.clone(), contents).is_some() {
        return Err(PyValueError::new_err(format!(
            "files gives {path:?} twice: each file once"
        )));
    }
    Ok(())
}

/// `atomic=`: None, a bool, or a name.
fn atomic_name(atomic: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(value) = atomic else {
        return Ok(None);
    };
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(on) = value.cast::<PyBool>() {
        return Ok(on.is_true().then(|| "unit".to_owned()));
    }
    value
        .extract::<String>()
        .map(Some)
        .map_err(|_| PyTypeError::new_err("atomic must be None, a bool, \"unit\" or \"document\""))
}

/// `timeout=`: None, seconds (an int or a float), or a duration as the
/// command line writes it (a str: "30s", "500ms", "2m").
fn timeout_setting(timeout: Option<&Bound<'_, PyAny>>) -> PyResult<Option<std::time::Duration>> {
    let Some(value) = timeout.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(text) = value.cast::<PyString>() {
        let text = text.to_str()?;
        return Ok(settings::timeout(Some(Timeout::Text(text)))?);
    }
    // A bool is an int to Python, but `timeout=True` is no time limit.
    let seconds = (!value.is_instance_of::<PyBool>())
        .then(|| value.extract::<f64>().ok())
        .flatten()
        .ok_or_else(|| {
            PyTypeError::new_err(format!(
                "timeout must be seconds (an int or a float), a duration such as \"30s\" or \"500ms\", or None, not {}",
                value.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
        })?;
    Ok(settings::timeout(Some(Timeout::Seconds(seconds)))?)
}

/// `git=`: a bool, or the author as a str.
fn git_setting(git: Option<&Bound<'_, PyAny>>) -> PyResult<Option<clada_markers::engine::Author>> {
    let Some(value) = git.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if let Ok(on) = value.cast::<PyBool>() {
        return Ok(settings::git(None, on.is_true())?);
    }
    let author: String = value.extract().map_err(|_| {
        PyTypeError::new_err("git must be a bool or the author, e.g. \"Ada <ada@example.com>\"")
    })?;
    Ok(settings::git(Some(&author), true)?)
}

/// `allow=`: any iterable of str, but not a str itself (whose letters
/// would each be approved).
fn commands(allow: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(value) = allow.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let wrong = || {
        PyTypeError::new_err(
            "allow must be a sequence of command lines, e.g. allow=(\"npm test\",), not a str",
        )
    };
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        return Err(wrong());
    }
    let mut out = Vec::new();
    for item in value.try_iter().map_err(|_| wrong())? {
        let item = item?;
        out.push(item.extract::<String>().map_err(|_| {
            PyTypeError::new_err(format!(
                "allow holds {}: each approval is a command line, a str",
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?);
    }
    Ok(out)
}

/// Rewrites a document in another dialect, as `clada convert --from FROM_
/// --to TO` does.
///
/// `to`: "clada", "aider", "codex" or "udiff". `from_`: "auto" (default),
/// "clada", "aider", "codex", "cml", "udiff" or "cline". Prose is dropped. Raises `clada.CladaError`
/// when the document has errors (the type of the first; `.report` is the
/// check report) and `clada.ConvertError` (a `ValueError`) when `to`
/// cannot express one of its tasks.
#[pyfunction]
#[pyo3(signature = (document, to, from_ = "auto"))]
fn convert(py: Python<'_>, document: &Bound<'_, PyAny>, to: &str, from_: &str) -> PyResult<String> {
    let bytes = document_bytes(document)?;
    let to = settings::target(to)?;
    let from = DialectChoice::parse(from_, "from_")?;
    py.detach(|| calls::convert(bytes, to, from))
        .map_err(|f| raise(py, f))
}

/// The system prompt of `clada prompt`: how to write edits clada applies.
#[pyfunction]
fn prompt() -> &'static str {
    PROMPT
}

/// The JSON Schema (draft 2020-12) of a report, as `clada schema`
/// prints it: `which` is "apply" or "check".
#[pyfunction]
fn schema<'py>(py: Python<'py>, which: &str) -> PyResult<Bound<'py, PyAny>> {
    let schema = match which {
        "apply" => clada_markers::report::apply_schema(),
        "check" => clada_markers::report::check_schema(),
        other => {
            return Err(PyValueError::new_err(format!(
                "schema({other:?}): there are two reports, \"apply\" and \"check\""
            )));
        }
    };
    data(py, &schema)
}

/// The extension module; `clada/__init__.py` is its public face.
#[pymodule]
#[pyo3(name = "_clada")]
fn extension(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(apply, m)?)?;
    m.add_function(wrap_pyfunction!(apply_files, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(prompt, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
