//! `clada mcp -C ROOT`: a Model Context Protocol server on stdio (rmcp),
//! PROTOCOL §10.2.
//!
//! Tools: `apply` (a document's text, `dry_run`, `atomic`) and `check` (a
//! document's text); both return the JSON report as structured content,
//! with its schema as the output schema. The prompt of `clada prompt` is
//! the prompt `clada`. The root and every policy flag come from the command
//! line when the server starts; a call carries only the document and the
//! two switches that narrow a run (a dry run, atomic units), never a root,
//! an approval or a wider policy: a call's switch only narrows the
//! server's (`dry_run` only turns a dry run on, `atomic` only moves from
//! none to `unit` to `document`). The server never prompts: stdin is the
//! protocol.

use std::sync::Arc;

use clada_markers::CheckReport;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, Content, ErrorData, GetPromptRequestParams,
    GetPromptResult, Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptMessage, PromptMessageRole, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
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
    if let Err(e) = clada_markers::Apply::new(&args.root) {
        eprintln!(
            "clada: cannot open the root directory {}: {e}",
            args.root.display()
        );
        return 2;
    }
    let server = Server {
        args: Arc::new(args),
        prompt,
    };
    runtime.block_on(async move {
        match server.serve(rmcp::transport::stdio()).await {
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

#[derive(Clone)]
struct Server {
    args: Arc<ApplyArgs>,
    prompt: &'static str,
}

/// A JSON Schema as rmcp takes it.
fn object(v: Value) -> Arc<Map<String, Value>> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

fn tools() -> Vec<Tool> {
    let document = json!({
        "type": "string",
        "description": "The document: a model's reply with clada blocks (or aider, codex, unified-diff, Cline, Roo or CML edits)"
    });
    let mut apply = Tool::new(
        "apply",
        "Apply a document to the project: writes, edits, moves, removes and approved commands, confined to the root. Returns the JSON report (PROTOCOL §9.2).",
        object(json!({
            "type": "object",
            "properties": {
                "document": document,
                "dry_run": {"type": "boolean", "description": "Plan everything, change nothing, report a diff per file (false never undoes the server's --dry-run)"},
                "atomic": {"type": "string", "enum": ["unit", "document"], "description": "Roll back a unit that fails, or the whole document (never less than the server's --atomic)"},
                "match": {"type": "string", "enum": ["exact", "whitespace"], "description": "How an edit finds its text: as written only, or also at another indentation (one uniform shift) and with other white space at line ends, re-indenting the replacement (the default, unless the server was started with --match exact)"}
            },
            "required": ["document"],
            "additionalProperties": false
        })),
    );
    apply.output_schema = Some(object(
        serde_json::to_value(clada_markers::report::apply_schema()).unwrap_or_default(),
    ));
    let mut check = Tool::new(
        "check",
        "Parse and validate a document without touching anything. Returns the JSON report of `clada check`.",
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
    vec![apply, check]
}

fn bad(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

impl Server {
    fn call(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, ErrorData> {
        if name != "apply" && name != "check" {
            return Err(bad(format!(
                "no tool `{name}`: the tools are `apply` and `check`"
            )));
        }
        for key in arguments.keys() {
            let known = match name {
                "apply" => ["document", "dry_run", "atomic", "match"].contains(&key.as_str()),
                _ => key == "document",
            };
            if !known {
                return Err(bad(format!("`{name}` takes no argument `{key}`")));
            }
        }
        let document = arguments
            .get("document")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("`{name}` needs `document`, a string")))?;
        if document.len() > clada_markers::syntax::MAX_DOCUMENT_SIZE {
            return Err(bad(clada_markers::syntax::too_large().message));
        }
        match name {
            "check" => {
                let (dialect, doc) = self.args.dialect.read(document, self.args.allow_escape);
                let report = CheckReport::read_in(&doc, dialect);
                serde_json::to_value(&report)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
            }
            "apply" => {
                let mut args = (*self.args).clone();
                match arguments.get("dry_run") {
                    None | Some(Value::Null) => {}
                    Some(Value::Bool(b)) => args.dry_run |= *b,
                    Some(_) => return Err(bad("`dry_run` is a boolean")),
                }
                // A call narrows the server's policy, never widens it: the
                // whole document, then each unit, then nothing rolls back.
                let asked = match arguments.get("atomic").map(|v| v.as_str()) {
                    None => None,
                    Some(Some("unit")) => Some(AtomicArg::Unit),
                    Some(Some("document")) => Some(AtomicArg::Document),
                    Some(_) => return Err(bad("`atomic` is \"unit\" or \"document\"")),
                };
                args.atomic = match (args.atomic, asked) {
                    (Some(AtomicArg::Document), _) | (_, Some(AtomicArg::Document)) => {
                        Some(AtomicArg::Document)
                    }
                    (Some(AtomicArg::Unit), _) | (_, Some(AtomicArg::Unit)) => {
                        Some(AtomicArg::Unit)
                    }
                    (None, None) => None,
                };
                // A call may narrow the matching, never widen it.
                match arguments.get("match").map(|v| v.as_str()) {
                    None => {}
                    Some(Some("exact")) => args.matching = MatchArg::Exact,
                    Some(Some("whitespace")) if args.matching == MatchArg::Whitespace => {}
                    Some(Some("whitespace")) => {
                        return Err(bad(
                            "the server was started with --match exact: a call cannot widen it",
                        ));
                    }
                    Some(_) => return Err(bad("`match` is \"exact\" or \"whitespace\"")),
                }
                let report = super::apply::report_of(&args, document)
                    .map_err(|e| ErrorData::internal_error(e, None))?;
                serde_json::to_value(&report)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))
            }
            _ => Err(bad(format!(
                "no tool `{name}`: the tools are `apply` and `check`"
            ))),
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
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let server = self.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        // The run blocks (files, commands): off the protocol's thread.
        let report = tokio::task::spawn_blocking(move || server.call(&name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))??;
        let text = serde_json::to_string(&report).unwrap_or_default();
        let ok = report.get("ok").and_then(Value::as_bool).unwrap_or(false);
        let mut result = if ok {
            CallToolResult::success(vec![Content::text(text)])
        } else {
            CallToolResult::error(vec![Content::text(text)])
        };
        result.structured_content = Some(report);
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
