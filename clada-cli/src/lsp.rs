//! `clada lsp`: a language server over stdio (PROTOCOL §10.1).
//!
//! For documents of language `clada` or `markdown`, or whose file name ends
//! in `.clada`, `.md` or `.markdown` (whatever the language id), in every
//! dialect `clada check` reads: diagnostics as the user types (near misses
//! included, so a Markdown reply whose markers are all indented is told
//! so), then, once the document has settled, a warning on every task that
//! would fail against the root (from a dry run); document symbols (blocks
//! and tasks), hover on a task with what it would do to the workspace and
//! the diff, code actions for the fixes diagnostics carry, and formatting
//! of clada documents through the printer. Positions are UTF-16, as LSP
//! requires. In Markdown, the fences of other languages are not read
//! ([`fences`]): documentation is no reply.
//!
//! Changes are full text; one of a range, or of an older version, is
//! refused with an error in the client's log. Shutdown is as the
//! specification has it: after `shutdown`, requests are refused with
//! `InvalidRequest`, and `exit` is status 0 (1 without `shutdown`).
//!
//! The root a dry run reads is fixed when the server starts (`-C`, else
//! the client's root folder, else the working directory); a document can
//! never name another. A dry run writes nothing and runs no command.
//! Nothing is printed on stdout but the protocol.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clada_markers::dialect::{Dialect, detect};
use clada_markers::engine::Dirs;
use clada_markers::escape::{escape_controls, escape_line};
use clada_markers::report::{ApplyReport, BlockStatus, TaskStatus};
use clada_markers::syntax::DiagnosticKind;
use clada_markers::{
    Apply, Diagnostic, Document, ParseOptions, Settings, Severity, Span, Unit, print,
};
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use serde_json::{Value, json};

mod fences;

const SHUTDOWN: &str = "shutdown";
const EXIT: &str = "exit";

/// The language ids the server reads.
const LANGUAGES: &[&str] = &["clada", "markdown"];

/// The file name endings it reads whatever the client calls the language.
const EXTENSIONS: &[&str] = &["clada", "md", "markdown"];

/// How long a document stays unchanged before its tasks are tried against
/// the root: a dry run per keystroke would be wasted work.
const SETTLE: Duration = Duration::from_millis(300);

/// The most lines of a diff a hover shows.
const HOVER_DIFF_LINES: usize = 40;

/// Runs the server until the client shuts it down. Returns the exit code.
pub(crate) fn run(
    root: Option<PathBuf>,
    matching: clada_markers::MatchMode,
    hover_timeout: Duration,
) -> u8 {
    let (connection, io) = Connection::stdio();
    let code = match serve(&connection, root, matching, hover_timeout) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("clada lsp: {e}");
            1
        }
    };
    drop(connection);
    let _ = io.join();
    code
}

fn capabilities() -> Value {
    json!({
        "textDocumentSync": 1,
        "hoverProvider": true,
        "documentSymbolProvider": true,
        "codeActionProvider": true,
        "documentFormattingProvider": true,
    })
}

/// Serves until `exit` (status 0 after `shutdown`, 1 before, as the
/// specification says) or until the client closes the stream (0).
fn serve(
    connection: &Connection,
    root: Option<PathBuf>,
    matching: clada_markers::MatchMode,
    hover_timeout: Duration,
) -> Result<u8, String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    connection
        .initialize_finish(
            id,
            json!({
                "capabilities": capabilities(),
                "serverInfo": {"name": "clada", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
        .map_err(|e| e.to_string())?;
    let root = root
        .or_else(|| client_root(&params))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let mut server = Server {
        root,
        matching,
        docs: HashMap::new(),
        hover_timeout,
        due: HashMap::new(),
    };
    loop {
        // The next message, or the moment a document has settled.
        let message = match server.due.values().min() {
            None => match connection.receiver.recv() {
                Ok(m) => m,
                Err(_) => return Ok(0),
            },
            Some(at) => {
                let wait = at.saturating_duration_since(Instant::now());
                match connection.receiver.recv_timeout(wait) {
                    Ok(m) => m,
                    Err(e) if e.is_timeout() => {
                        for out in server.settled(Instant::now()) {
                            send(connection, Message::Notification(out));
                        }
                        continue;
                    }
                    Err(_) => return Ok(0),
                }
            }
        };
        match message {
            Message::Request(req) if req.method == SHUTDOWN => {
                send(connection, Message::Response(Response::new_ok(req.id, ())));
                return Ok(shut_down(connection));
            }
            Message::Request(req) => {
                let response = server.request(req);
                send(connection, Message::Response(response));
            }
            // `exit` before `shutdown`.
            Message::Notification(n) if n.method == EXIT => return Ok(1),
            Message::Notification(n) => {
                for out in server.notification(n) {
                    send(connection, Message::Notification(out));
                }
            }
            Message::Response(_) => {}
        }
    }
}

/// After `shutdown`: each request is answered `InvalidRequest`, each
/// notification but `exit` dropped, until `exit`. Returns the exit status:
/// 0, also when the client closes the stream instead.
fn shut_down(connection: &Connection) -> u8 {
    loop {
        match connection.receiver.recv() {
            Ok(Message::Notification(n)) if n.method == EXIT => return 0,
            Ok(Message::Request(req)) => {
                let refusal = Response::new_err(
                    req.id,
                    lsp_server::ErrorCode::InvalidRequest as i32,
                    format!(
                        "clada lsp is shut down: {} is not answered; send `exit`",
                        req.method
                    ),
                );
                send(connection, Message::Response(refusal));
            }
            Ok(_) => {}
            Err(_) => return 0,
        }
    }
}

fn send(connection: &Connection, message: Message) {
    // The client went away: the loop ends when the channel closes.
    let _ = connection.sender.send(message);
}

/// The client's root folder, when it is a local path.
fn client_root(params: &Value) -> Option<PathBuf> {
    let uri = params
        .pointer("/workspaceFolders/0/uri")
        .or_else(|| params.get("rootUri"))?
        .as_str()?;
    file_path(uri)
}

/// The path of a `file:` URI, percent-decoded.
fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = rest
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok().map(PathBuf::from)
}

struct Server {
    root: PathBuf,
    /// `--match`: how the dry run of warnings and hovers finds an edit's
    /// text.
    matching: clada_markers::MatchMode,
    /// Open documents by URI.
    docs: HashMap<String, Open>,
    /// When each changed document will have settled, for its dry run.
    due: HashMap<String, Instant>,
    /// How long a hover's dry run may take (`--hover-timeout`).
    hover_timeout: Duration,
}

/// An open document.
struct Open {
    language: String,
    version: Option<i32>,
    text: String,
}

/// What clada reads a document of this language and URI as, if anything:
/// by its language id, else by the end of its file name.
fn reads(language: &str, uri: &str) -> Option<Kind> {
    let kind = |name: &str| match name {
        "clada" => Some(Kind::Clada),
        _ => Some(Kind::Markdown),
    };
    if LANGUAGES.contains(&language) {
        return kind(language);
    }
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let name = path.rsplit('/').next().unwrap_or_default();
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    EXTENSIONS.contains(&ext.as_str()).then_some(())?;
    kind(&ext)
}

/// A document written for clada, or prose that may hold edits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Clada,
    /// Markdown: a file without a task is no problem (`no_tasks` is not
    /// said), and one whose markers are all indented gets its near misses.
    Markdown,
}

impl Server {
    fn notification(&mut self, n: Notification) -> Vec<Notification> {
        // The URI as the client spelt it: diagnostics go back under it.
        let Some(uri) = n
            .params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Vec::new();
        };
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let Ok(p) = serde_json::from_value::<lsp::DidOpenTextDocumentParams>(n.params)
                else {
                    return Vec::new();
                };
                let d = p.text_document;
                self.docs.insert(
                    uri.clone(),
                    Open {
                        language: d.language_id,
                        version: Some(d.version),
                        text: d.text,
                    },
                );
            }
            "textDocument/didChange" => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(n.params)
                else {
                    return Vec::new();
                };
                // Full sync: the last change is the whole text. A change
                // of a range (a client that did not read the capabilities)
                // or of an older version is refused, and the text kept.
                let version = p.text_document.version;
                let last = self.version(&uri);
                if p.content_changes.iter().any(|c| c.range.is_some()) {
                    let kept = match last {
                        Some(v) => format!("kept the text of version {v}"),
                        None => "the document has no text yet".to_owned(),
                    };
                    return vec![log_error(format!(
                        "clada lsp: a change of a range to {uri} (version {version}) is refused: \
                         the server takes each change as the whole text (full sync); {kept}"
                    ))];
                }
                if let Some(last) = last.filter(|&last| version < last) {
                    return vec![log_error(format!(
                        "clada lsp: version {version} of {uri} is older than version {last}: \
                         refused; kept the text of version {last}"
                    ))];
                }
                let Some(change) = p.content_changes.into_iter().last() else {
                    return Vec::new();
                };
                let version = Some(version);
                match self.docs.get_mut(&uri) {
                    Some(doc) => {
                        doc.text = change.text;
                        doc.version = version;
                    }
                    // A change of a document never opened: read by its name.
                    None => {
                        self.docs.insert(
                            uri.clone(),
                            Open {
                                language: String::new(),
                                version,
                                text: change.text,
                            },
                        );
                    }
                }
            }
            "textDocument/didClose" => {
                self.docs.remove(&uri);
                self.due.remove(&uri);
                return vec![publish(&uri, None, Vec::new())];
            }
            _ => return Vec::new(),
        }
        let read = self.docs.get(&uri).and_then(|o| reads(&o.language, &uri));
        if read.is_none() {
            return vec![publish(&uri, None, Vec::new())];
        }
        let diagnostics = self.diagnostics(&uri);
        self.due.insert(uri.clone(), Instant::now() + SETTLE);
        vec![publish(&uri, self.version(&uri), diagnostics)]
    }

    /// The text of an open document that clada reads ([`reads`]) and
    /// that is within the size limit (the library's rule, as for every
    /// document: one over it has only that diagnostic), as it is read
    /// ([`read`]).
    fn doc(&self, uri: &str) -> Option<Cow<'_, str>> {
        let open = self.docs.get(uri)?;
        let kind = reads(&open.language, uri)?;
        let text = clada_markers::input::text(&open.text).ok()?;
        Some(read(text, kind))
    }

    /// The diagnostics of an open document clada reads.
    fn diagnostics(&self, uri: &str) -> Vec<Value> {
        let Some(open) = self.docs.get(uri) else {
            return Vec::new();
        };
        match reads(&open.language, uri) {
            None => Vec::new(),
            Some(kind) => diagnostics(uri, &open.text, kind),
        }
    }

    fn version(&self, uri: &str) -> Option<i32> {
        self.docs.get(uri).and_then(|d| d.version)
    }

    /// The diagnostics of each document that has settled by `now`, with a
    /// warning on each task that would fail against the root; nothing for
    /// a document none of whose tasks would.
    fn settled(&mut self, now: Instant) -> Vec<Notification> {
        let ready: Vec<String> = self
            .due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(uri, _)| uri.clone())
            .collect();
        let mut out = Vec::new();
        for uri in ready {
            self.due.remove(&uri);
            let Some(text) = self.doc(&uri) else {
                continue;
            };
            let doc = parse(&text);
            if doc.tasks().next().is_none() {
                continue;
            }
            let Some(report) = self.dry_run(&doc) else {
                continue;
            };
            let warnings = would_fail(&doc, &report, &text);
            if warnings.is_empty() {
                continue;
            }
            let mut all = self.diagnostics(&uri);
            all.extend(warnings);
            out.push(publish(&uri, self.version(&uri), all));
        }
        out
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            "textDocument/documentSymbol" => self.with_doc(&req, |_, text, _| symbols(text)),
            "textDocument/hover" => self.with_doc(&req, |s, text, params| {
                let at = params.get("position").and_then(position)?;
                s.hover(text, at)
            }),
            "textDocument/codeAction" => self.with_doc(&req, |_, text, params| {
                let uri = params.pointer("/textDocument/uri")?.as_str()?;
                let (from, to) = params.get("range").and_then(range)?;
                let lines = Utf16::new(text);
                Some(code_actions(
                    uri,
                    text,
                    (lines.offset(from), lines.offset(to)),
                ))
            }),
            "textDocument/formatting" => self.with_doc(&req, |_, text, _| format(text)),
            _ => return method_not_found(id, &req.method),
        };
        match result {
            Ok(value) => Response::new_ok(id, value),
            Err(message) => Response::new_err(id, -32602, message),
        }
    }

    /// Runs `f` on the request's document; `null` when clada does not read
    /// that document, an error when the parameters are malformed.
    fn with_doc(
        &self,
        req: &Request,
        f: impl FnOnce(&Server, &str, &Value) -> Option<Value>,
    ) -> Result<Value, String> {
        let uri = req
            .params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{}: params need textDocument.uri", req.method))?;
        let Some(text) = self.doc(uri) else {
            return Ok(Value::Null);
        };
        Ok(f(self, &text, &req.params).unwrap_or(Value::Null))
    }

    /// What the task under `at` would do: a dry run of the document against
    /// the root, which writes nothing and runs no command.
    fn hover(&self, text: &str, at: (u32, u32)) -> Option<Value> {
        let lines = Utf16::new(text);
        let offset = lines.offset(at);
        let doc = parse(text);
        let task = doc.tasks().find(|t| t.extent().contains(offset))?;
        let errors: Vec<&Diagnostic> = doc
            .diagnostics
            .iter()
            .filter(|d| d.task == Some(task.number) && d.is_error())
            .collect();
        let what = clada_markers::report::describe(task, text);
        let body = if !errors.is_empty() {
            let list: Vec<String> = errors.iter().map(|d| format!("- {}", d.message)).collect();
            format!("**{what}**: will not run\n\n{}", list.join("\n"))
        } else {
            let report = self.dry_run(&doc)?;
            let t = report
                .blocks
                .iter()
                .flat_map(|b| &b.tasks)
                .find(|t| t.number == task.number)?;
            match (&t.status, &t.error) {
                (TaskStatus::Failed, Some(e)) => {
                    let hint = e
                        .hint
                        .as_deref()
                        .map_or(String::new(), |h| format!("\n\n{h}"));
                    // The closest text, as a diff from the search text.
                    let diff = e
                        .closest
                        .as_ref()
                        .map_or(String::new(), |c| format!("\n\n{}", fenced(&c.diff)));
                    format!(
                        "**{what}**: would fail: `{}`: {}{hint}{diff}",
                        e.kind, e.message
                    )
                }
                (TaskStatus::Skipped, _) => format!("**{what}**: {}", t.message),
                _ => {
                    // What the document would make of the task's file.
                    let diffs: Vec<String> = report
                        .changes
                        .iter()
                        .flatten()
                        .filter(|c| {
                            t.path
                                .as_deref()
                                .is_some_and(|p| c.path == p || c.from.as_deref() == Some(p))
                        })
                        .filter_map(|c| c.diff.as_deref())
                        .map(fenced)
                        .collect();
                    let diffs = if diffs.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "\n\nThe document's changes to the file:\n\n{}",
                            diffs.join("\n\n")
                        )
                    };
                    format!("**{what}**: {}{diffs}", t.message)
                }
            }
        };
        Some(json!({
            "contents": {"kind": "markdown", "value": body},
            "range": lines.range(task.extent()),
        }))
    }

    fn dry_run(&self, doc: &Document<'_>) -> Option<ApplyReport> {
        let apply = Apply::new(Path::new(&self.root)).ok()?;
        // What the approvals of this root allow is said as it would be.
        Some(
            apply
                .dirs(Dirs::from_env().ok())
                .settings(Settings {
                    git: None,
                    matching: self.matching,
                    dry_run: true,
                    // A hover never waits on a hostile document's plan:
                    // the engine stops it there, also in the middle of a
                    // task.
                    total_timeout: Some(self.hover_timeout),
                    ..Settings::default()
                })
                .run(doc),
        )
    }
}

fn method_not_found(id: RequestId, method: &str) -> Response {
    Response::new_err(id, -32601, format!("clada lsp does not handle {method}"))
}

/// An error in the client's log (`window/logMessage`, type Error).
fn log_error(message: String) -> Notification {
    Notification::new(
        "window/logMessage".into(),
        json!({"type": 1, "message": message}),
    )
}

fn publish(uri: &str, version: Option<i32>, diagnostics: Vec<Value>) -> Notification {
    let mut params = json!({"uri": uri, "diagnostics": diagnostics});
    if let Some(v) = version {
        params["version"] = json!(v);
    }
    Notification::new("textDocument/publishDiagnostics".into(), params)
}

/// A diff as a Markdown code block: at most [`HOVER_DIFF_LINES`] lines,
/// control characters escaped, in a fence no line of it can close.
fn fenced(diff: &str) -> String {
    let diff = escape_controls(diff);
    let lines: Vec<&str> = diff.lines().collect();
    let mut shown = lines[..lines.len().min(HOVER_DIFF_LINES)].join("\n");
    if lines.len() > HOVER_DIFF_LINES {
        shown += &format!("\n… {} more lines", lines.len() - HOVER_DIFF_LINES);
    }
    let longest = shown.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}diff\n{shown}\n{fence}")
}

/// A warning on the opener of each task that a dry run says would fail,
/// with its error, message and hint; tasks of units with errors are said
/// already.
fn would_fail(doc: &Document<'_>, report: &ApplyReport, text: &str) -> Vec<Value> {
    let lines = Utf16::new(text);
    report
        .blocks
        .iter()
        .filter(|b| b.status != BlockStatus::Malformed)
        .flat_map(|b| &b.tasks)
        .filter(|t| t.status == TaskStatus::Failed)
        .filter_map(|t| {
            let e = t.error.as_ref()?;
            let task = doc.tasks().find(|d| d.number == t.number)?;
            let hint = e
                .hint
                .as_deref()
                .map_or(String::new(), |h| format!("\nhint: {}", escape_line(h)));
            // Names read from the disk may hold control characters.
            let message = escape_line(&e.message);
            Some(json!({
                "range": lines.range(task.opener),
                "severity": 2,
                "code": e.kind.to_string(),
                "source": "clada",
                "message": format!("would fail against the root: {message}{hint}"),
            }))
        })
        .collect()
}

fn diagnostics(uri: &str, text: &str, kind: Kind) -> Vec<Value> {
    let text = read(text, kind);
    let (doc, too_large);
    let found: &[Diagnostic] = match clada_markers::input::text(&text) {
        Ok(text) => {
            doc = parse(text);
            &doc.diagnostics
        }
        Err(d) => {
            too_large = [d];
            &too_large
        }
    };
    let lines = Utf16::new(&text);
    found
        .iter()
        .filter(|d| kind == Kind::Clada || d.kind != DiagnosticKind::NoTasks)
        .map(|d| {
            let message = match &d.help {
                Some(h) => format!("{}\nhelp: {h}", d.message),
                None => d.message.to_string(),
            };
            let related: Vec<Value> = d
                .labels
                .iter()
                .map(|l| {
                    json!({
                        "location": {"uri": uri, "range": lines.range(l.span)},
                        "message": l.message,
                    })
                })
                .collect();
            // Prose about edits (a README's diff) is no error in Markdown:
            // said, as information, not flagged.
            let severity = match (d.severity, kind, d.kind) {
                (_, Kind::Markdown, DiagnosticKind::ForeignFormat) => 3,
                (Severity::Error, ..) => 1,
                _ => 2,
            };
            json!({
                "range": lines.range(d.span),
                "severity": severity,
                "code": d.kind.name(),
                "source": "clada",
                "message": message,
                "relatedInformation": related,
            })
        })
        .collect()
}

/// Blocks and tasks, tasks inside their block.
fn symbols(text: &str) -> Option<Value> {
    let doc = parse(text);
    let lines = Utf16::new(text);
    let task_symbol = |t: &clada_markers::Task<'_>| {
        json!({
            "name": format!("task {}: {}", t.number, clada_markers::report::describe(t, text)),
            "kind": 12,
            "range": lines.range(t.extent()),
            "selectionRange": lines.range(t.opener),
        })
    };
    let out: Vec<Value> = doc
        .units
        .iter()
        .map(|u| match u {
            Unit::Block(b) => json!({
                "name": format!("block {}: TASKS", b.number),
                "kind": 2,
                "range": lines.range(u.extent()),
                "selectionRange": lines.range(b.opener),
                "children": b.tasks.iter().map(task_symbol).collect::<Vec<_>>(),
            }),
            Unit::Task(t) => task_symbol(t),
        })
        .collect();
    Some(Value::Array(out))
}

/// A quick fix for each diagnostic with a fix that touches `range`.
fn code_actions(uri: &str, text: &str, range: (usize, usize)) -> Value {
    let doc = parse(text);
    let lines = Utf16::new(text);
    let (from, to) = range;
    let actions: Vec<Value> = doc
        .diagnostics
        .iter()
        .filter(|d| d.span.start <= to && from <= d.span.end.max(d.span.start + 1))
        .filter_map(|d| {
            let fix = d.fix.as_ref()?;
            Some(json!({
                "title": action_title(fix),
                "kind": "quickfix",
                "isPreferred": d.is_error(),
                "diagnostics": [{
                    "range": lines.range(d.span),
                    "message": d.message,
                    "code": d.kind.name(),
                    "source": "clada",
                }],
                "edit": {"changes": {uri: [{
                    "range": lines.range(fix.span),
                    "newText": fix.replacement,
                }]}},
            }))
        })
        .collect();
    Value::Array(actions)
}

/// The most characters of a fix's text a code action's title quotes.
const TITLE_TEXT: usize = 48;

/// A quick fix's title: one short line, as editors show it in a menu. The
/// fix's first line, cut at [`TITLE_TEXT`] characters, and how many lines
/// follow it.
fn action_title(fix: &clada_markers::Fix) -> String {
    let text = fix.replacement.trim();
    let mut lines = text.lines();
    let first = escape_line(lines.next().unwrap_or_default());
    let more = lines.count();
    let verb = match (fix.span.is_empty(), text.is_empty()) {
        (_, true) => return "Delete the marked text".to_owned(),
        (true, false) => "Insert",
        (false, false) => "Write",
    };
    let mut quoted: String = first.chars().take(TITLE_TEXT).collect();
    if quoted.len() < first.len() {
        quoted.push('…');
    }
    // Backticks of the text would end the quote early.
    let tick = if quoted.contains('`') { "``" } else { "`" };
    match more {
        0 => format!("{verb} {tick}{quoted}{tick}"),
        1 => format!("{verb} {tick}{quoted}{tick} and 1 more line"),
        n => format!("{verb} {tick}{quoted}{tick} and {n} more lines"),
    }
}

/// Each well-formed unit rewritten by the printer; prose and units with
/// errors are left as they are, and so is a document in another dialect
/// (the printer writes clada's).
fn format(text: &str) -> Option<Value> {
    if detect(text) != Dialect::Clada {
        return Some(Value::Array(Vec::new()));
    }
    let doc = parse(text);
    let lines = Utf16::new(text);
    let edits: Vec<Value> = doc
        .units
        .iter()
        .filter(|u| doc.is_runnable(u.number()))
        .filter_map(|u| {
            let extent = u.extent();
            let printed = print(std::slice::from_ref(u)).ok()?;
            let printed = printed.strip_suffix('\n').unwrap_or(&printed);
            let current = text.get(extent.range())?;
            (current != printed).then(|| json!({"range": lines.range(extent), "newText": printed}))
        })
        .collect();
    Some(Value::Array(edits))
}

fn position(v: &Value) -> Option<(u32, u32)> {
    let line = u32::try_from(v.get("line")?.as_u64()?).ok()?;
    let character = u32::try_from(v.get("character")?.as_u64()?).ok()?;
    Some((line, character))
}

/// The two positions of an LSP range.
fn range(v: &Value) -> Option<((u32, u32), (u32, u32))> {
    Some((position(v.get("start")?)?, position(v.get("end")?)?))
}

/// Line starts of a text, for LSP positions: 0-based lines, columns in
/// UTF-16 code units.
struct Utf16<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Utf16<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Utf16 { text, starts }
    }

    fn position(&self, offset: usize) -> Value {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let prefix = self.text.get(start..offset).unwrap_or_default();
        json!({"line": line, "character": prefix.encode_utf16().count()})
    }

    fn range(&self, span: Span) -> Value {
        json!({"start": self.position(span.start), "end": self.position(span.end)})
    }

    /// The byte offset of an LSP position, clamped to its line.
    fn offset(&self, (line, character): (u32, u32)) -> usize {
        let Some(&start) = self.starts.get(line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(line as usize + 1)
            .copied()
            .unwrap_or(self.text.len());
        let mut units = 0;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= character as usize || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }
}

/// What clada reads of a document: a clada document whole, a Markdown
/// one without the fences of other languages ([`fences`]).
fn read(text: &str, kind: Kind) -> Cow<'_, str> {
    match kind {
        Kind::Clada => Cow::Borrowed(text),
        Kind::Markdown => fences::readable(text),
    }
}

/// A document in whichever dialect it is written in (PROTOCOL §11).
fn parse(text: &str) -> Document<'_> {
    clada_markers::read(text, ParseOptions::default()).1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size limit of every document holds in an editor too: one over
    /// it is not parsed, and says so.
    #[test]
    fn a_document_over_the_limit_has_only_that_diagnostic() {
        let big = "x".repeat(clada_markers::syntax::MAX_DOCUMENT_SIZE);
        let text = format!("<<<<<<< WRITE path=\"a.txt\"\n{big}");
        let found = diagnostics("file:///r.clada", &text, Kind::Clada);
        let codes: Vec<&Value> = found.iter().map(|d| &d["code"]).collect();
        assert_eq!(codes, [&json!("input_too_large")]);
        // Within the limit, the document is read: here, its unit unclosed.
        let found = diagnostics("file:///r.clada", &text[..1000], Kind::Clada);
        assert!(found.iter().all(|d| d["code"] != "input_too_large"));
        assert!(!found.is_empty());
    }
}
