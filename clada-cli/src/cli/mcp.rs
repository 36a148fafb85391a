//! `clada mcp -C ROOT`: a Model Context Protocol server on stdio (rmcp),
//! PROTOCOL §10.2.
//!
//! Tools: `apply` (a document's text, `dry_run`, `atomic`, `match`) and
//! `check` (a document's text); both return the text report (what `clada apply` and
//! `clada check` print: what a model reads) as content and the JSON report
//! as structured content, with its schema as the output schema. The
//! server's instructions and its prompt `clada` are the text of `clada
//! prompt`. The root and every policy flag come from the command line when
//! the server starts; a call carries only the document and the three
//! switches that narrow a run (a dry run, atomic units, exact matching),
//! never a root, an approval or a wider policy: a call's switch only
//! narrows the server's (`dry_run` only turns a dry run on, `atomic` only
//! moves from none to `unit` to `document`, `match` only to `exact`). The server never prompts: stdin is the protocol.
//! A server whose root cannot be opened answers every request, `initialize`
//! first, with an error that says why, and ends.

mod transport;

use std::sync::Arc;

use clada_markers::CheckReport;
use clada_markers::MatchMode;
use clada_markers::dialect::Dialect;
use clada_markers::engine::{Atomic, Cancel};
use clada_markers::mcp::{self, Switches};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, Content, CustomRequest, CustomResult, ErrorCode,
    ErrorData, GetPromptRequestParams, GetPromptResult, Implementation, JsonRpcMessage,
    ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage,
    PromptMessageRole, ServerCapabilities, ServerInfo, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, TxJsonRpcMessage};
use rmcp::transport::Transport as _;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

use super::{ApplyArgs, AtomicArg, MatchArg};

pub(crate) fn run(mut args: ApplyArgs, prompt: &'static str) -> u8 {
    args.no_prompt = true;
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("clada: cannot start the MCP server: {e}");
            return 2;
        }
    };
    if let Err(e) = clada_markers::Apply::new(&args.policy.root) {
        let message = format!(
            "cannot open the root directory {}: {e}; start `clada mcp` with -C DIR, an existing directory",
            args.policy.root.display()
        );
        eprintln!("clada: {message}");
        runtime.block_on(refuse(&message, &args.policy.root));
        return 2;
    }
    let server = Server {
        args: Arc::new(args),
        prompt,
        order: Arc::new(Order(tokio::sync::watch::Sender::new(0))),
    };
    runtime.block_on(async move {
        match server.serve(transport::Stdio::new()).await {
            Ok(running) => match running.waiting().await {
                Ok(_) => 0,
                Err(e) => {
                    eprintln!("clada: the MCP server stopped: {e}");
                    1
                }
            },
            Err(e) => {
                eprintln!("clada: the MCP session did not start: {e}");
                1
            }
        }
    })
}

/// Answers every request with `message` until `initialize` has been
/// answered, then returns: the client learns why there is no server, not
/// only that its connection closed.
async fn refuse(message: &str, root: &std::path::Path) {
    let mut io = transport::Stdio::new();
    while let Some(m) = io.receive().await {
        let JsonRpcMessage::Request(r) = m else {
            continue;
        };
        let initialize = matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_));
        let error = ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            message.to_owned(),
            Some(json!({"root": root.display().to_string()})),
        );
        let answer: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::error(error, Some(r.id));
        if io.send(answer).await.is_err() || initialize {
            return;
        }
    }
}

#[derive(Clone)]
struct Server {
    args: Arc<ApplyArgs>,
    prompt: &'static str,
    order: Arc<Order>,
}

/// The `apply` calls run one after another, in the order they were read
/// (their [`transport::Ticket`]s): a client that sends a WRITE and then a
/// SEARCH of the same file without waiting gets what it sent. The number
/// is the ticket whose turn it is.
struct Order(tokio::sync::watch::Sender<u64>);

/// A call's turn, held while it runs: the next one's when let go, however
/// the call ends.
struct Turn(Arc<Order>);

impl Order {
    async fn turn(self: &Arc<Self>, ticket: transport::Ticket) -> Turn {
        let mut now = self.0.subscribe();
        // The sender lives in `self`: the wait ends only at the turn.
        let _ = now.wait_for(|&n| n >= ticket.0).await;
        Turn(self.clone())
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.0.0.send_modify(|n| *n += 1);
    }
}

/// A JSON Schema as rmcp takes it.
fn object(v: Value) -> Arc<Map<String, Value>> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

/// What the server tells a client first: how to write a document (the
/// text of `clada prompt`), after how to use the tools.
fn instructions(prompt: &str) -> String {
    format!(
        "clada applies edits to the project at this server's root. Write them as a document \
         in the format below (aider's SEARCH/REPLACE blocks, codex patches and CML are read \
         too), then call `check` to validate it (nothing is touched) or `apply` to carry it \
         out. Each call returns the text report (read it) and the JSON report as structured \
         content. When something failed, the text ends with `Resend:`: send a new document \
         with only the tasks it says to send again, fixed where they failed; never resend an \
         applied task. Calls may be sent without waiting: answers come back in any \
         order (match them by id), and `apply` calls run in the order sent. The same \
         text is the prompt `clada`.\n\n{prompt}"
    )
}

/// The tools; `dry_run`: the server's own `--dry-run`, under which
/// `apply` changes nothing.
fn tools(dry_run: bool) -> Vec<Tool> {
    let document = json!({
        "type": "string",
        "description": "The document: a model's reply with clada blocks (or aider, codex, unified-diff, Cline, Roo or CML edits)"
    });
    let mut apply = Tool::new(
        "apply",
        "Apply a document to the project: writes, edits, moves, removes and approved commands, \
         never outside the root. Returns the text report (what `clada apply` prints: each task \
         with ✓ or ✗ and why, then what to resend) and the JSON report as structured content \
         (PROTOCOL §9.2). The result is an error when a task failed or the document has an error.",
        object(json!({
            "type": "object",
            "properties": {
                "document": document,
                "dry_run": {"type": "boolean", "description": "Plan everything, change nothing, report a diff per file (false never undoes the server's --dry-run)"},
                "atomic": {"type": "string", "enum": ["unit", "document"], "description": "Roll back a unit that fails, or the whole document (never less than the server's --atomic)"},
                "match": {"type": "string", "enum": ["exact", "whitespace"], "description": "How an edit finds its text: as written only, or also at another indentation (one uniform shift) and with other white space at line ends, re-indenting the replacement (the default, unless the server was started with --match exact)"},
                "allow_empty": {"type": "boolean", "description": "Accept a document without any edit (prose only) as a success; by default it is an error (no_tasks), since a reply meant to change files changed nothing"},
                "diff": {"type": "boolean", "description": "Show what the run changed at the end of the text report, as `clada apply --diff`: a line per changed path with the lines added and removed, and its unified diff (cut at 400 lines a file, 2000 in all). The structured content has it either way (`changes`)"}
            },
            "required": ["document"],
            "additionalProperties": false
        })),
    );
    apply.output_schema = Some(object(
        serde_json::to_value(clada_markers::report::apply_schema()).unwrap_or_default(),
    ));
    // Its changes stay in the root, and commands run only when approved;
    // a run can remove and overwrite files, and is not idempotent (an
    // edit applied twice changes nothing the second time, but its commands
    // run again).
    apply.annotations = Some(
        ToolAnnotations::with_title("Apply edits")
            .read_only(dry_run)
            .destructive(!dry_run)
            .idempotent(dry_run)
            .open_world(false),
    );
    let mut check = Tool::new(
        "check",
        "Parse and validate a document without touching anything. Returns the text report of \
         `clada check` (each unit with its tasks, every problem with its line and how to fix \
         it) and its JSON report as structured content.",
        object(json!({
            "type": "object",
            "properties": {"document": document},
            "required": ["document"],
            "additionalProperties": false
        })),
    );
    check.output_schema = Some(object(
        serde_json::to_value(clada_markers::report::check_schema()).unwrap_or_default(),
    ));
    check.annotations = Some(
        ToolAnnotations::with_title("Check edits")
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    vec![apply, check]
}

fn bad(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

/// A tool's answer: the text report and the JSON report.
struct Answer {
    text: String,
    report: Value,
}

/// The name the text report gives the document of a call.
const DOCUMENT: &str = "<document>";

impl Server {
    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        cancel: Cancel,
    ) -> Result<Answer, ErrorData> {
        // The arguments are checked in the library (`clada_markers::mcp`,
        // where the fuzz target `mcp_args` reaches them); a call's
        // switches only narrow the server's.
        let server = Switches {
            dry_run: self.args.dry_run,
            atomic: self.args.policy.atomic.map(|a| match a {
                AtomicArg::Unit => Atomic::Unit,
                AtomicArg::Document => Atomic::Document,
            }),
            matching: self.args.policy.matching.mode(),
            allow_empty: false,
            diff: false,
        };
        let call = match mcp::call(name, &arguments, server) {
            Ok(call) => call,
            // A tool nobody has is the protocol's error; arguments a tool
            // refuses are a tool result the model reads and corrects
            // (MCP 2025-11-25, SEP-1303: input validation is a tool error).
            Err(e) if mcp::Tool::named(name).is_none() => return Err(bad(e.0)),
            Err(e) => {
                return Ok(Answer {
                    text: format!(
                        "Error: invalid arguments: {}; nothing ran. Send the call again with arguments the tool takes (see its input schema).\n",
                        e.0
                    ),
                    report: Value::Null,
                });
            }
        };
        match call.tool {
            mcp::Tool::Check => {
                let (dialect, doc) = self
                    .args
                    .dialect
                    .read(call.document, self.args.policy.allow_escape);
                let report = CheckReport::read_in(&doc, dialect);
                // As `clada check` prints it.
                let mut text = String::new();
                if dialect != Dialect::Clada {
                    text = format!("Dialect: {dialect}\n");
                }
                text += &clada_markers::report::render_check_text(&doc, DOCUMENT, false);
                Ok(Answer {
                    text,
                    report: serde_json::to_value(&report)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                })
            }
            mcp::Tool::Apply => {
                let mut args = (*self.args).clone();
                args.dry_run = call.switches.dry_run;
                args.allow_empty = call.switches.allow_empty;
                args.diff = call.switches.diff;
                args.policy.atomic = call.switches.atomic.map(|a| match a {
                    Atomic::Unit => AtomicArg::Unit,
                    Atomic::Document => AtomicArg::Document,
                });
                args.policy.matching = match call.switches.matching {
                    MatchMode::Exact => MatchArg::Exact,
                    MatchMode::Whitespace => MatchArg::Whitespace,
                };
                let (report, text) =
                    super::apply::report_of(&args, call.document, DOCUMENT, cancel)
                        .map_err(|e| ErrorData::internal_error(e, None))?;
                Ok(Answer {
                    text,
                    report: serde_json::to_value(&report)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                })
            }
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("clada", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions(self.prompt))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: `{}`; clada's MCP server answers initialize, ping, tools/list, tools/call (tools `apply`, `check`), prompts/list and prompts/get (prompt `clada`)",
                request.method
            ),
            None,
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools(self.args.dry_run)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let _turn = match context.extensions.get::<transport::Ticket>() {
            Some(&ticket) => Some(self.order.turn(ticket).await),
            None => None,
        };
        // Cancelled while it waited: never run (its answer is not sent).
        if context.ct.is_cancelled() {
            return Err(ErrorData::internal_error("cancelled by the client", None));
        }
        let server = self.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        // Cancelled by the client (MCP `notifications/cancelled`): the run
        // stops between tasks, its running command ended as at a timeout;
        // its answer is not sent (the transport drops it).
        let (cancel, stop) = Cancel::new();
        let ct = context.ct.clone();
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        // The run blocks (files, commands): off the protocol's thread.
        let ran = tokio::task::spawn_blocking(move || server.call(&name, arguments, cancel)).await;
        watch.abort();
        let Answer { text, report } =
            ran.map_err(|e| ErrorData::internal_error(e.to_string(), None))??;
        let ok = report.get("ok").and_then(Value::as_bool).unwrap_or(false);
        let mut result = if ok {
            CallToolResult::success(vec![Content::text(text)])
        } else {
            CallToolResult::error(vec![Content::text(text)])
        };
        // Arguments refused: no report, only the text that says why.
        result.structured_content = (!report.is_null()).then_some(report);
        Ok(result)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "clada",
            Some("How to write edits clada applies (the text of `clada prompt`)"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResult, ErrorData> {
        if request.name != "clada" {
            return Err(bad(format!(
                "no prompt `{}`: the prompt is `clada`",
                request.name
            )));
        }
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            PromptMessageRole::User,
            self.prompt,
        )]))
    }
}
