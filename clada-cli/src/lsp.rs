//! `clada lsp`: a language server over stdio (PROTOCOL §10.3).
//!
//! For documents of language `clada`, and Markdown documents that hold a
//! marker line: diagnostics as the user types, document symbols (blocks
//! and tasks), hover on a task with what it would do to the workspace (a
//! dry run: nothing is written, no command runs), code actions for the
//! fixes diagnostics carry, and formatting through the printer. Positions
//! are UTF-16, as LSP requires.
//!
//! The root a hover's dry run reads is fixed when the server starts (`-C`,
//! else the client's root folder, else the working directory); a document
//! can never name another. Nothing is printed on stdout but the protocol.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clada_markers::dialect::{detect, parse_dialect};
use clada_markers::engine::Dirs;
use clada_markers::report::{ApplyReport, TaskStatus};
use clada_markers::{Apply, Diagnostic, Document, ParseOptions, Severity, Span, Unit, print};
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use serde_json::{Value, json};

/// Runs the server until the client shuts it down. Returns the exit code.
pub(crate) fn run(root: Option<PathBuf>, matching: clada_markers::MatchMode) -> u8 {
    let (connection, io) = Connection::stdio();
    let code = match serve(&connection, root, matching) {
        Ok(()) => 0,
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

fn serve(
    connection: &Connection,
    root: Option<PathBuf>,
    matching: clada_markers::MatchMode,
) -> Result<(), String> {
    let params = connection
        .initialize(capabilities())
        .map_err(|e| e.to_string())?;
    let root = root
        .or_else(|| client_root(&params))
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let mut server = Server {
        root,
        matching,
        docs: HashMap::new(),
    };
    for message in &connection.receiver {
        match message {
            Message::Request(req) => {
                if connection
                    .handle_shutdown(&req)
                    .map_err(|e| e.to_string())?
                {
                    return Ok(());
                }
                let response = server.request(req);
                send(connection, Message::Response(response));
            }
            Message::Notification(n) => {
                for out in server.notification(n) {
                    send(connection, Message::Notification(out));
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
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
    /// `--match`: how a hover's dry run finds an edit's text.
    matching: clada_markers::MatchMode,
    /// Open documents by URI: language and text.
    docs: HashMap<String, (String, String)>,
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
                self.docs.insert(
                    uri.clone(),
                    (p.text_document.language_id, p.text_document.text),
                );
            }
            "textDocument/didChange" => {
                let Ok(p) = serde_json::from_value::<lsp::DidChangeTextDocumentParams>(n.params)
                else {
                    return Vec::new();
                };
                // Full sync: the last change is the whole text.
                let Some(change) = p.content_changes.into_iter().last() else {
                    return Vec::new();
                };
                match self.docs.get_mut(&uri) {
                    Some(doc) => doc.1 = change.text,
                    None => {
                        self.docs.insert(uri.clone(), ("clada".into(), change.text));
                    }
                }
            }
            "textDocument/didClose" => {
                self.docs.remove(&uri);
                return vec![publish(&uri, Vec::new())];
            }
            _ => return Vec::new(),
        }
        let diagnostics = self
            .doc(&uri)
            .map(|text| diagnostics(&uri, text))
            .unwrap_or_default();
        vec![publish(&uri, diagnostics)]
    }

    /// The text of an open document that clada reads: a `clada` document,
    /// or a Markdown one with a marker line in it.
    fn doc(&self, uri: &str) -> Option<&str> {
        let (language, text) = self.docs.get(uri)?;
        let ours = language == "clada"
            || (language == "markdown"
                && text
                    .lines()
                    .any(|l| l.starts_with("<<<<<<< ") || l.starts_with(">>>>>>> ")));
        ours.then_some(text.as_str())
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
            "textDocument/formatting" => self.with_doc(&req, |_, text, _| Some(format(text))),
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
        Ok(f(self, text, &req.params).unwrap_or(Value::Null))
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
                    format!("**{what}**: would fail: `{}`: {}{hint}", e.kind, e.message)
                }
                (TaskStatus::Skipped, _) => format!("**{what}**: {}", t.message),
                _ => format!("**{what}**: {}", t.message),
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
                .git(None)
                .matching(self.matching)
                .dry_run(true)
                // A hover never waits on a hostile document's plan.
                .total_timeout(Some(std::time::Duration::from_secs(2)))
                .run(doc),
        )
    }
}

fn method_not_found(id: RequestId, method: &str) -> Response {
    Response::new_err(id, -32601, format!("clada lsp does not handle {method}"))
}

fn publish(uri: &str, diagnostics: Vec<Value>) -> Notification {
    Notification::new(
        "textDocument/publishDiagnostics".into(),
        json!({"uri": uri, "diagnostics": diagnostics}),
    )
}

fn diagnostics(uri: &str, text: &str) -> Vec<Value> {
    let doc = parse(text);
    let lines = Utf16::new(text);
    doc.diagnostics
        .iter()
        .map(|d| {
            let message = match &d.help {
                Some(h) => format!("{}\nhelp: {h}", d.message),
                None => d.message.clone(),
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
            json!({
                "range": lines.range(d.span),
                "severity": if d.severity == Severity::Error { 1 } else { 2 },
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
            let title = if fix.span.is_empty() {
                format!("Insert `{}`", fix.replacement.trim())
            } else {
                format!("Write `{}`", fix.replacement.trim())
            };
            Some(json!({
                "title": title,
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

/// Each well-formed unit rewritten by the printer; prose and units with
/// errors are left as they are.
fn format(text: &str) -> Value {
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
    Value::Array(edits)
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

/// A document in whichever dialect it is written in (PROTOCOL §11).
fn parse(text: &str) -> Document<'_> {
    parse_dialect(text, detect(text), ParseOptions::default())
}
