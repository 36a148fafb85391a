//! `clada mcp` end to end: rmcp's client over a child process, raw
//! JSON-RPC lines, and the official MCP Python SDK when it is installed.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use serde_json::{Map, Value, json};

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[test]
fn an_agent_session() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("app.py"), "x = 1\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let bin = insta_cmd::get_cargo_bin("clada");
        let command = tokio::process::Command::new(bin).configure(|c| {
            c.args(["mcp", "--no-git", "-C"]).arg(root.path());
        });
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();

        // Initialized, with the prompt as instructions; both tools, with
        // input and output schemas and what they do to the project.
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.name, "clada");
        let instructions = info.instructions.as_deref().unwrap_or_default();
        assert!(instructions.contains("call `check`"), "{instructions}");
        assert!(
            instructions.ends_with(include_str!("../prompt.md")),
            "the instructions do not carry the prompt"
        );
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["apply", "check"]);
        assert!(tools.iter().all(|t| t.input_schema.contains_key("properties")));
        assert!(tools.iter().all(|t| t.output_schema.is_some()));
        let hints = |i: usize| {
            let a = tools[i].annotations.clone().unwrap();
            (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        };
        assert_eq!(hints(0), (Some(false), Some(true), Some(false)), "apply");
        assert_eq!(hints(1), (Some(true), Some(false), Some(true)), "check");

        // check: a document with an error comes back as a report.
        let r = client
            .call_tool(
                CallToolRequestParams::new("check")
                    .with_arguments(args(json!({"document": "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"}))),
            )
            .await
            .unwrap();
        let report = r.structured_content.unwrap();
        assert_eq!(report["ok"], false);
        assert_eq!(report["diagnostics"][0]["kind"], "missing_attribute");
        // The text is the text report, not the JSON again.
        let text = &r.content[0].as_text().unwrap().text;
        // A bare SEARCH, as aider writes it: the help speaks aider's format.
        assert!(text.contains("[missing_attribute] Error: this SEARCH block names no file"), "{text}");
        assert!(text.contains("Help: put the file's path on its own line just before the block"), "{text}");
        assert!(text.contains("<document>:1:1"), "{text}");
        assert!(text.ends_with("FAILED: 1 block, 1 task, 1 error, 0 warnings\n"), "{text}");

        // apply: a dry run writes nothing, a real one does.
        let doc = "<<<<<<< SEARCH path=\"app.py\"\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n";
        let r = client
            .call_tool(
                CallToolRequestParams::new("apply")
                    .with_arguments(args(json!({"document": doc, "dry_run": true}))),
            )
            .await
            .unwrap();
        assert_eq!(r.structured_content.unwrap()["dry_run"], true);
        assert_eq!(std::fs::read_to_string(root.path().join("app.py")).unwrap(), "x = 1\n");
        let r = client
            .call_tool(CallToolRequestParams::new("apply").with_arguments(args(json!({"document": doc}))))
            .await
            .unwrap();
        assert_eq!(r.structured_content.unwrap()["ok"], true);
        assert_eq!(std::fs::read_to_string(root.path().join("app.py")).unwrap(), "x = 2\n");

        // A call cannot leave the root or run an unapproved command.
        let hostile = format!(
            "<<<<<<< WRITE path=\"{}/pwned\"\nx\n>>>>>>> END\n<<<<<<< WRITE path=\"../pwned\"\nx\n>>>>>>> END\n<<<<<<< RUN\necho pwned > {}/ran\n>>>>>>> END\n",
            outside.path().display(),
            outside.path().display()
        );
        let r = client
            .call_tool(CallToolRequestParams::new("apply").with_arguments(args(json!({"document": hostile}))))
            .await
            .unwrap();
        let report = r.structured_content.unwrap();
        assert_eq!(report["ok"], false);
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
        let tasks = report["blocks"].as_array().unwrap();
        assert_eq!(tasks[2]["tasks"][0]["error"]["type"], "command_not_allowed");
        // Nor name a root or widen the policy.
        let bad = client
            .call_tool(
                CallToolRequestParams::new("apply")
                    .with_arguments(args(json!({"document": doc, "root": "/"}))),
            )
            .await;
        // Refused as a tool error the model reads (SEP-1303), not as a
        // protocol error: it names the argument, and nothing ran.
        let bad = bad.unwrap();
        assert_eq!(bad.is_error, Some(true), "an unknown argument was accepted");
        assert!(bad.structured_content.is_none());
        let text = &bad.content[0].as_text().unwrap().text;
        assert!(text.contains("takes no argument `root`"), "{text}");
        // A tool nobody has stays the protocol's error (-32602).
        let missing = client
            .call_tool(
                CallToolRequestParams::new("delete").with_arguments(args(json!({"document": doc}))),
            )
            .await;
        match missing {
            Err(rmcp::ServiceError::McpError(e)) => {
                assert_eq!(e.code.0, clada_markers::mcp::InvalidParams::CODE);
                assert!(e.message.contains("no tool `delete`"), "{}", e.message);
            }
            other => panic!("not an MCP error: {other:?}"),
        }

        // The prompt.
        let p = client
            .get_prompt(GetPromptRequestParams::new("clada"))
            .await
            .unwrap();
        assert_eq!(p.messages.len(), 1);

        // A bad call is an error, and the server goes on.
        assert!(
            client
                .call_tool(CallToolRequestParams::new("nope"))
                .await
                .is_err()
        );
        // A call without its document: a tool error that says so.
        let r = client
            .call_tool(CallToolRequestParams::new("check"))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true));
        let text = &r.content[0].as_text().unwrap().text;
        assert!(text.contains("`check` needs `document`"), "{text}");
        assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
        client.cancel().await.unwrap();
    });
}

/// A call's switches only narrow the server's (PROTOCOL §10.2): `atomic`
/// never goes from the server's `document` down to `unit`, and `dry_run`
/// never turns the server's dry run off.
#[test]
fn a_call_only_narrows_the_servers_switches() {
    let root = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let serve = |flags: &'static [&'static str]| {
            let bin = insta_cmd::get_cargo_bin("clada");
            let command = tokio::process::Command::new(bin).configure(|c| {
                c.args(["mcp", "--no-git"])
                    .args(flags)
                    .arg("-C")
                    .arg(root.path());
            });
            ().serve(TokioChildProcess::new(command).unwrap())
        };
        // One unit applies, the next fails: the server's whole-document
        // rollback undoes the first, whatever the call asks.
        let doc = "<<<<<<< WRITE path=\"a.txt\"\na\n>>>>>>> END\n\
                   <<<<<<< SEARCH path=\"a.txt\"\nabsent\n=======\nx\n>>>>>>> REPLACE\n";
        let client = serve(&["--atomic=document"]).await.unwrap();
        for atomic in [json!("unit"), json!("document")] {
            let r = client
                .call_tool(
                    CallToolRequestParams::new("apply")
                        .with_arguments(args(json!({"document": doc, "atomic": atomic}))),
                )
                .await
                .unwrap();
            let report = r.structured_content.unwrap();
            assert_eq!(
                report["blocks"][0]["tasks"][0]["rolled_back"], true,
                "{report}"
            );
            assert!(
                !root.path().join("a.txt").exists(),
                "atomic {atomic} widened the policy"
            );
        }
        client.cancel().await.unwrap();
        // A call may narrow: `unit` on a server without `--atomic`.
        let client = serve(&[]).await.unwrap();
        let r = client
            .call_tool(
                CallToolRequestParams::new("apply")
                    .with_arguments(args(json!({"document": doc, "atomic": "unit"}))),
            )
            .await
            .unwrap();
        assert_eq!(r.structured_content.unwrap()["ok"], false);
        assert!(root.path().join("a.txt").exists(), "the first unit is kept");
        std::fs::remove_file(root.path().join("a.txt")).unwrap();
        client.cancel().await.unwrap();
        // A server's dry run stays one.
        let client = serve(&["--dry-run"]).await.unwrap();
        let r = client
            .call_tool(
                CallToolRequestParams::new("apply")
                    .with_arguments(args(json!({"document": doc, "dry_run": false}))),
            )
            .await
            .unwrap();
        assert_eq!(r.structured_content.unwrap()["dry_run"], true);
        assert!(!root.path().join("a.txt").exists(), "dry_run false wrote");
        client.cancel().await.unwrap();
    });
}

fn clada() -> Command {
    Command::new(insta_cmd::get_cargo_bin("clada"))
}

/// Sends `lines` to `clada mcp ARGS`, closes its input and gives back its
/// answers, one JSON value per line, and its exit code.
fn raw(args: &[&str], lines: &[&str]) -> (Vec<Value>, Option<i32>) {
    let mut child = clada()
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let answers = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    (answers, child.wait().unwrap().code())
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// JSON-RPC 2.0 §5.1: a parse error and an invalid request whose id cannot
/// be read are answered with `"id": null`; parameters that do not fit a
/// method are -32602 under the request's id; an unknown method -32601 with
/// a message that says what the server answers.
#[test]
fn json_rpc_errors_have_the_shapes_of_the_specification() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let (answers, code) = raw(
        &["-C", root],
        &[
            INITIALIZE,
            INITIALIZED,
            "{not json",
            "[1, 2]",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"check","arguments":"text"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"check","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"clada/nothing","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"check","arguments":{"document":"x"}}}"#,
        ],
    );
    assert_eq!(code, Some(0));
    let errors: Vec<(Value, i64)> = answers
        .iter()
        .filter(|a| a.get("error").is_some())
        .map(|a| {
            let o = a.as_object().unwrap();
            assert!(o.contains_key("id"), "an error without an id: {a}");
            (a["id"].clone(), a["error"]["code"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(
        errors,
        [
            (Value::Null, -32700),
            (Value::Null, -32600),
            (Value::Null, -32600),
            (json!(2), -32602),
            (json!(3), -32602),
            (json!(4), -32601),
        ],
        "{answers:#?}"
    );
    let by_id = |id: i64| answers.iter().find(|a| a["id"] == id).unwrap();
    let message = by_id(2)["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`arguments` must be an object"),
        "{message}"
    );
    let message = by_id(4)["error"]["message"].as_str().unwrap();
    assert!(message.contains("`clada/nothing`"), "{message}");
    assert!(message.contains("tools/call"), "{message}");
    // The server went on after each.
    assert_eq!(by_id(5)["result"]["structuredContent"]["ok"], true);
}

/// A root that cannot be opened fails `initialize` with why (not only a
/// closed connection), and the server ends with exit code 2.
#[test]
fn a_server_without_its_root_fails_initialize_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let (answers, code) = raw(&["-C", missing.to_str().unwrap()], &[INITIALIZE]);
    assert_eq!(code, Some(2));
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 0);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot open the root directory")
            && message.contains(missing.to_str().unwrap())
            && message.contains("-C DIR"),
        "{message}"
    );
}

/// The text content of a call is what the command line prints for the same
/// document and the same files: `clada check` and `clada apply`.
#[test]
fn the_text_content_is_what_the_command_line_prints() {
    let mcp_root = tempfile::tempdir().unwrap();
    let cli_root = tempfile::tempdir().unwrap();
    for root in [&mcp_root, &cli_root] {
        std::fs::write(root.path().join("app.py"), "x = 1\ny = 2\n").unwrap();
    }
    // An edit that applies, one that fails with a hint, and a command.
    let doc = "<<<<<<< SEARCH path=\"app.py\"\nx = 1\n=======\nx = 3\n>>>>>>> REPLACE\n\
               <<<<<<< SEARCH path=\"app.py\"\ny  = 2\n=======\ny = 4\n>>>>>>> REPLACE\n\
               <<<<<<< RUN\ncat app.py\n>>>>>>> END\n";
    let cli = |args: &[&str]| {
        let mut child = clada()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(doc.as_bytes())
            .unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap()
    };
    let root = cli_root.path().to_str().unwrap();
    let check = cli(&["check"]);
    let apply = cli(&["apply", "--no-git", "--output-mode", "buffer", "-C", root]);
    assert!(apply.contains("hint: "), "{apply}");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let command =
            tokio::process::Command::new(insta_cmd::get_cargo_bin("clada")).configure(|c| {
                c.args(["mcp", "--no-git", "-C"]).arg(mcp_root.path());
            });
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        for (tool, expected) in [("check", &check), ("apply", &apply)] {
            let r = client
                .call_tool(
                    CallToolRequestParams::new(tool).with_arguments(args(json!({"document": doc}))),
                )
                .await
                .unwrap();
            assert_eq!(r.content.len(), 1);
            assert_eq!(&r.content[0].as_text().unwrap().text, expected, "{tool}");
        }
        client.cancel().await.unwrap();
    });
}

/// Every `format` keyword in `schema` (a schema, not a property named
/// `format`), with where it is.
fn formats(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::String(f)) = o.get("format") {
                out.push((at.to_owned(), f.clone()));
            }
            for (k, v) in o {
                let at = format!("{at}/{k}");
                if matches!(k.as_str(), "properties" | "$defs" | "patternProperties") {
                    for (name, sub) in v.as_object().into_iter().flatten() {
                        formats(sub, &format!("{at}/{name}"), out);
                    }
                } else {
                    formats(v, &at, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                formats(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The formats draft 2020-12 defines (§7.3 of its validation vocabulary).
const DRAFT_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Standard JSON Schema only, by a strict validator: the schema is valid
/// against its meta-schema, and a format the draft does not define (like
/// schemars' `uint`) is an error. For the tools' input and output schemas
/// as a client lists them, `clada schema`, and the committed files.
#[test]
fn every_schema_is_standard_json_schema() {
    let root = tempfile::tempdir().unwrap();
    let (answers, _) = raw(
        &["-C", root.path().to_str().unwrap()],
        &[
            INITIALIZE,
            INITIALIZED,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        ],
    );
    let tools = answers.iter().find(|a| a["id"] == 1).unwrap()["result"]["tools"]
        .as_array()
        .unwrap()
        .clone();
    let mut schemas: Vec<(String, Value)> = Vec::new();
    for t in &tools {
        for which in ["inputSchema", "outputSchema"] {
            schemas.push((format!("{}.{which}", t["name"]), t[which].clone()));
        }
    }
    for which in ["apply", "check"] {
        let out = clada().args(["schema", which]).output().unwrap();
        schemas.push((
            format!("clada schema {which}"),
            serde_json::from_slice(&out.stdout).unwrap(),
        ));
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../grammar/schema/{which}.json"));
        schemas.push((
            format!("grammar/schema/{which}.json"),
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap(),
        ));
    }
    assert_eq!(schemas.len(), 8);
    for (name, schema) in &schemas {
        if let Err(e) = jsonschema::options()
            .should_validate_formats(true)
            .should_ignore_unknown_formats(false)
            .build(schema)
        {
            panic!("{name} is not standard JSON Schema: {e}");
        }
        let mut found = Vec::new();
        formats(schema, "", &mut found);
        found.retain(|(_, f)| !DRAFT_FORMATS.contains(&f.as_str()));
        assert!(
            found.is_empty(),
            "{name} has formats no draft defines: {found:?}"
        );
        if let Some(root) = schema.get("$schema") {
            assert_eq!(
                root, "https://json-schema.org/draft/2020-12/schema",
                "{name}"
            );
        }
    }
    // The walk finds a format where there is one.
    let mut found = Vec::new();
    formats(
        &json!({"properties": {"format": {"type": "integer", "format": "uint"}}}),
        "",
        &mut found,
    );
    assert_eq!(
        found,
        [("/properties/format".to_owned(), "uint".to_owned())]
    );
}

/// The Python interpreter to drive `clada mcp` with the official MCP SDK:
/// `CLADA_MCP_PYTHON`, else `python3` when it can import `mcp`.
fn python_with_mcp() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("CLADA_MCP_PYTHON") {
        return Some(p.into());
    }
    let found = Command::new("python3")
        .args(["-c", "import mcp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    found.then(|| "python3".into())
}

/// A session of the official MCP Python SDK (`tests/mcp_client.py`): the
/// SDK's own checks (the structured content against the output schema)
/// and the script's (instructions, annotations, text reports, errors, a
/// missing root). Skipped, saying so, where the SDK is not installed; CI
/// (`.ci/run`) installs it and sets `CLADA_MCP_PYTHON`.
#[test]
fn a_python_sdk_session() {
    let Some(python) = python_with_mcp() else {
        assert!(
            std::env::var_os("CLADA_MCP_PYTHON").is_some() || std::env::var_os("CI").is_none(),
            "CI runs the MCP Python SDK: set CLADA_MCP_PYTHON (see .ci/run)"
        );
        eprintln!("skipped: no Python with the `mcp` package (set CLADA_MCP_PYTHON)");
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("app.py"), "x = 1\n").unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(insta_cmd::get_cargo_bin("clada"))
        .arg(root.path())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (CLADA_MCP_PYTHON, relative to {}): {e}",
                python.display(),
                env!("CARGO_MANIFEST_DIR")
            )
        });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.ends_with("ok\n"),
        "the MCP Python SDK session failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn match_narrows_and_a_foreign_document_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("a.py");
    std::fs::write(&file, "def f():\n    x = 1\n    return x\n").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let bin = insta_cmd::get_cargo_bin("clada");
        let command = tokio::process::Command::new(bin).configure(|c| {
            c.args(["mcp", "--no-git", "-C"]).arg(root.path());
        });
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        // A search shifted uniformly: refused with `match: exact`, applied
        // re-indented without it.
        let doc = "<<<<<<< SEARCH path=\"a.py\"\nx = 1\nreturn x\n=======\nx = 2\nreturn x\n>>>>>>> REPLACE\n";
        let call = |v: Value| CallToolRequestParams::new("apply").with_arguments(args(v));
        let r = client
            .call_tool(call(json!({"document": doc, "match": "exact"})))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true));
        let report = r.structured_content.unwrap();
        assert_eq!(report["blocks"][0]["tasks"][0]["error"]["type"], "match_count_mismatch");
        let r = client.call_tool(call(json!({"document": doc}))).await.unwrap();
        let report = r.structured_content.unwrap();
        assert_eq!(report["ok"], true);
        let task = &report["blocks"][0]["tasks"][0];
        assert_eq!(task["matched"], "whitespace");
        assert_eq!(task["shift"]["by"], 4);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "def f():\n    x = 2\n    return x\n"
        );
        // A unified diff is read (auto) and applied.
        let diff = "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    x = 2\n+    x = 3\n";
        let r = client.call_tool(call(json!({"document": diff}))).await.unwrap();
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.structured_content.unwrap()["dialect"], "udiff");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "def f():\n    x = 3\n    return x\n"
        );
        // A reply whose only edits are in a format no dialect reads is an
        // error, not an empty success.
        let gptme = "```patch a.py\n<<<<<<< ORIGINAL\n    x = 3\n=======\n    x = 4\n>>>>>>> UPDATED\n```\n";
        let r = client.call_tool(call(json!({"document": gptme}))).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let report = r.structured_content.unwrap();
        assert_eq!(report["ok"], false);
        let kinds: Vec<&str> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"foreign_format"), "{kinds:?}");
        client.cancel().await.unwrap();
    });
    // A server started with --match exact refuses a call that widens it.
    runtime.block_on(async {
        let bin = insta_cmd::get_cargo_bin("clada");
        let command = tokio::process::Command::new(bin).configure(|c| {
            c.args(["mcp", "--no-git", "--match", "exact", "-C"])
                .arg(root.path());
        });
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        let r = client
            .call_tool(CallToolRequestParams::new("apply").with_arguments(args(
                json!({"document": "<<<<<<< WRITE path=\"b\"\nb\n>>>>>>> END\n", "match": "whitespace"}),
            )))
            .await
            .unwrap();
        // A tool error the model reads, and nothing ran.
        assert_eq!(r.is_error, Some(true), "a call widened the matching");
        let text = &r.content[0].as_text().unwrap().text;
        assert!(text.contains("--match exact"), "{text}");
        assert!(!root.path().join("b").exists());
        client.cancel().await.unwrap();
    });
}

/// The git rule holds through MCP as through the command line: the commit
/// after an apply holds what the document wrote, never an untracked secret
/// beside it.
#[test]
fn an_apply_commits_only_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(p)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&["init", "-q"]);
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "start"]);
    std::fs::write(p.join(".env"), "API_KEY=sk-secret\n").unwrap();
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "apply", "arguments": {
            "document": "<<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n"
        }}
    })
    .to_string();
    let (answers, _) = raw(
        &["-C", p.to_str().unwrap()],
        &[INITIALIZE, INITIALIZED, &call],
    );
    let result = answers.iter().find(|a| a["id"] == 1).unwrap();
    assert_eq!(result["result"]["isError"], false, "{result:#}");
    assert_eq!(
        git(&["show", "HEAD", "--name-only", "--format=%s"]),
        "clada: create b.txt (1 task)\n\nb.txt"
    );
    let all = git(&["log", "--all", "--name-only", "--format="]);
    assert!(!all.contains(".env"), "{all}");
    assert_eq!(git(&["status", "--porcelain"]), "?? .env");
}

/// What a model reads back (issue 30): an edit already applied is a
/// success, not a tool error; a reply without any edit is one, unless the
/// call allows it (`allow_empty`).
#[test]
fn already_applied_is_a_success_and_an_empty_reply_an_error() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("app.py"), "import os\n").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let bin = insta_cmd::get_cargo_bin("clada");
        let command = tokio::process::Command::new(bin).configure(|c| {
            c.args(["mcp", "--no-git", "-C"]).arg(root.path());
        });
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        let call = |arguments: Value| {
            let client = &client;
            async move {
                client
                    .call_tool(CallToolRequestParams::new("apply").with_arguments(args(arguments)))
                    .await
                    .unwrap()
            }
        };
        let insert = "<<<<<<< SEARCH path=\"app.py\"\nimport os\n=======\nimport os\nimport sys\n>>>>>>> REPLACE\n";
        let first = call(json!({"document": insert})).await;
        assert_eq!(first.is_error, Some(false), "{first:?}");
        let again = call(json!({"document": insert})).await;
        assert_eq!(again.is_error, Some(false), "{again:?}");
        let report = again.structured_content.clone().unwrap();
        assert_eq!(report["ok"], true);
        assert_eq!(report["blocks"][0]["tasks"][0]["status"], "already_applied");
        assert_eq!(report["summary"]["already_applied"], 1);
        assert_eq!(report["summary"]["failed"], 0);
        assert_eq!(report["resend"]["already_applied"], json!([1]));
        let text = &again.content[0].as_text().unwrap().text;
        assert!(text.contains("[task-1] ✓ Already applied in app.py"), "{text}");
        assert_eq!(
            std::fs::read_to_string(root.path().join("app.py")).unwrap(),
            "import os\nimport sys\n"
        );

        // Prose alone: nothing to apply is an error the model reads.
        let prose = call(json!({"document": "I would change app.py like this."})).await;
        assert_eq!(prose.is_error, Some(true), "{prose:?}");
        let report = prose.structured_content.clone().unwrap();
        assert_eq!(report["ok"], false);
        assert_eq!(report["diagnostics"][0]["kind"], "no_tasks");
        assert_eq!(report["diagnostics"][0]["severity"], "error");
        let text = &prose.content[0].as_text().unwrap().text;
        assert!(text.contains("[no_tasks] Error"), "{text}");
        let allowed = call(json!({"document": "Nothing to change.", "allow_empty": true})).await;
        assert_eq!(allowed.is_error, Some(false), "{allowed:?}");
        assert_eq!(allowed.structured_content.unwrap()["ok"], true);
        let bad = client
            .call_tool(
                CallToolRequestParams::new("apply")
                    .with_arguments(args(json!({"document": "x", "allow_empty": "yes"}))),
            )
            .await;
        // Refused: as a protocol error, or a tool error the model reads.
        assert!(
            !bad.as_ref().is_ok_and(|r| r.is_error != Some(true)),
            "a bad allow_empty was accepted: {bad:?}"
        );
        client.cancel().await.unwrap();
    });
}

/// A `clada mcp` whose input stays open: lines are written without waiting
/// for answers, and answers read as they come.
struct Live {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    answers: std::sync::mpsc::Receiver<Value>,
}

impl Live {
    fn start(root: &str, more: &[&str]) -> Live {
        let mut child = clada()
            .args(["mcp", "-C", root])
            .args(more)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut live = Live {
            child,
            stdin,
            answers,
        };
        live.send(INITIALIZE);
        live.send(INITIALIZED);
        live
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Every answer that comes within `wait`, or until `enough` answers
    /// (besides `initialize`'s) have come.
    fn answers(&self, enough: usize, wait: std::time::Duration) -> Vec<Value> {
        let end = std::time::Instant::now() + wait;
        let mut got = Vec::new();
        while got.len() < enough {
            let left = end.saturating_duration_since(std::time::Instant::now());
            match self.answers.recv_timeout(left) {
                Ok(a) if a["id"] == 0 => {}
                Ok(a) => got.push(a),
                Err(_) => break,
            }
        }
        got
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(id: impl std::fmt::Display, tool: &str, document: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id.to_string().parse::<i64>().map_or(json!(id.to_string()), Value::from), "method": "tools/call",
        "params": {"name": tool, "arguments": {"document": document}}})
    .to_string()
}

/// Issue 31: a client that writes without waiting (applies, a 1 MB check,
/// malformed lines, a request just before each) lost answers: rmcp
/// dropped the transport's read of a line when an answer was ready first,
/// and with it the line half read or the answer to a malformed line half
/// written. Every line gets its one answer, the input left open.
#[test]
fn every_pipelined_request_is_answered_once() {
    let root = tempfile::tempdir().unwrap();
    let mut live = Live::start(root.path().to_str().unwrap(), &[]);
    let applies = 100;
    for i in 1..=applies {
        live.send(&call(
            i,
            "apply",
            &format!("<<<<<<< WRITE path=\"f{i}.txt\"\n{i}\n>>>>>>> END\n"),
        ));
    }
    let big = format!(
        "<<<<<<< WRITE path=\"big.txt\"\n{}>>>>>>> END\n",
        "a line of the big document\n".repeat(40_000)
    );
    live.send(&call(1000, "check", &big));
    for i in 0..5 {
        live.send(&json!({"jsonrpc": "2.0", "id": 2000 + i, "method": "ping"}).to_string());
        live.send("{this is not json");
        live.send(&json!({"jsonrpc": "2.0", "id": 3000 + i, "method": "tools/list"}).to_string());
    }
    let want = applies + 1 + 5 * 3;
    let answers = live.answers(want, std::time::Duration::from_secs(20));
    let mut ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    let parse_errors = answers
        .iter()
        .filter(|a| a["id"].is_null() && a["error"]["code"] == -32700)
        .count();
    assert_eq!(parse_errors, 5, "{answers:#?}");
    ids.retain(|id| !id.is_null());
    ids.sort_by_key(|id| id.as_i64());
    let mut expected: Vec<Value> = (1..=applies as i64).map(Value::from).collect();
    expected.push(json!(1000));
    expected.extend((0..5).flat_map(|i| [json!(2000 + i), json!(3000 + i)]));
    expected.sort_by_key(|id| id.as_i64());
    assert_eq!(ids, expected, "each request answered once");
    // The big check answered with its report, not lost.
    let check = answers.iter().find(|a| a["id"] == 1000).unwrap();
    assert_eq!(check["result"]["structuredContent"]["ok"], true, "{check}");
    assert!(
        live.answers(1, std::time::Duration::from_millis(300))
            .is_empty()
    );
}

/// Issue 31: applies to one root run in the order they were read. A
/// client that sends a WRITE then a SEARCH of the same file without
/// waiting gets what it sent; before, the SEARCH could run first and fail.
#[test]
fn pipelined_applies_run_in_the_order_sent() {
    let root = tempfile::tempdir().unwrap();
    let mut live = Live::start(root.path().to_str().unwrap(), &[]);
    let pairs = 40;
    for i in 0..pairs {
        live.send(&call(
            2 * i + 1,
            "apply",
            &format!("<<<<<<< WRITE path=\"o{i}.txt\"\nfirst {i}\n>>>>>>> END\n"),
        ));
        live.send(&call(
            2 * i + 2,
            "apply",
            &format!(
                "<<<<<<< SEARCH path=\"o{i}.txt\"\nfirst {i}\n=======\nsecond {i}\n>>>>>>> REPLACE\n"
            ),
        ));
    }
    let answers = live.answers(2 * pairs, std::time::Duration::from_secs(60));
    assert_eq!(answers.len(), 2 * pairs);
    for a in &answers {
        assert_eq!(a["result"]["structuredContent"]["ok"], true, "{a}");
    }
    for i in 0..pairs {
        let text = std::fs::read_to_string(root.path().join(format!("o{i}.txt"))).unwrap();
        assert_eq!(text, format!("second {i}\n"));
    }
}

/// Issue 31: MCP says a cancelled request gets no answer. An apply that
/// waits behind a slow one and is cancelled is never answered and never
/// runs; the server answers the next request.
#[test]
fn a_cancelled_apply_gets_no_answer_and_a_waiting_one_never_runs() {
    let root = tempfile::tempdir().unwrap();
    let mut live = Live::start(
        root.path().to_str().unwrap(),
        &["--allow-any-command", "--no-git"],
    );
    live.send(&call(1, "apply", "<<<<<<< RUN\nsleep 2\n>>>>>>> END\n"));
    live.send(&call(
        2,
        "apply",
        "<<<<<<< WRITE path=\"never.txt\"\nno\n>>>>>>> END\n",
    ));
    std::thread::sleep(std::time::Duration::from_millis(500));
    live.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "test"}})
        .to_string(),
    );
    live.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string());
    let answers = live.answers(2, std::time::Duration::from_secs(10));
    let ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    assert!(
        ids.contains(&json!(3)) && ids.contains(&json!(1)),
        "{answers:#?}"
    );
    assert!(
        live.answers(1, std::time::Duration::from_secs(1))
            .is_empty()
    );
    assert!(!root.path().join("never.txt").exists());
}

/// Issue 31: `notifications/cancelled` during an apply was ignored (the
/// command ran its 6 s, the tasks after it too, the report was sent). The
/// run stops: its command is ended, the tasks after it never run, no
/// answer is sent for its id, and the next request is answered at once;
/// under `atomic: "document"` what it wrote is taken back.
#[test]
fn a_cancelled_apply_stops_and_is_not_answered() {
    for atomic in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let mut live = Live::start(
            root.path().to_str().unwrap(),
            &["--allow-any-command", "--no-git"],
        );
        let doc = "<<<<<<< WRITE path=\"first.txt\"\n1\n>>>>>>> END\n\
                   <<<<<<< RUN\nsleep 6\n>>>>>>> END\n\
                   <<<<<<< WRITE path=\"second.txt\"\n2\n>>>>>>> END\n";
        let mut arguments = json!({"document": doc});
        if atomic {
            arguments["atomic"] = json!("document");
        }
        live.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "apply", "arguments": arguments}})
            .to_string(),
        );
        let sent = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let cancelled = std::time::Instant::now();
        live.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 1, "reason": "the user stopped it"}})
            .to_string(),
        );
        live.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string());
        let answers = live.answers(1, std::time::Duration::from_secs(10));
        assert_eq!(answers.len(), 1, "{answers:#?}");
        assert_eq!(answers[0]["id"], 2, "{answers:#?}");
        assert!(
            cancelled.elapsed() < std::time::Duration::from_secs(2),
            "answered after {:?}",
            cancelled.elapsed()
        );
        // The next apply runs after the cancelled one has stopped.
        live.send(&call(
            3,
            "apply",
            "<<<<<<< WRITE path=\"after.txt\"\n3\n>>>>>>> END\n",
        ));
        let answers = live.answers(1, std::time::Duration::from_secs(10));
        assert_eq!(answers[0]["id"], 3, "{answers:#?}");
        // Past the end the command would have had: still no answer for 1,
        // and the task after it never ran.
        let past = (sent + std::time::Duration::from_millis(6500))
            .saturating_duration_since(std::time::Instant::now());
        assert!(live.answers(1, past).is_empty());
        assert!(
            !root.path().join("second.txt").exists(),
            "the task after it never ran"
        );
        assert_eq!(
            root.path().join("first.txt").exists(),
            !atomic,
            "atomic: {atomic}"
        );
        assert!(root.path().join("after.txt").exists());
    }
}

/// Issue 31: a client that closes its input right after its last request
/// gets its answer, however long the work takes (rmcp gave the work still
/// running 5 s, then ended without its answer).
#[test]
fn a_request_sent_just_before_input_closes_is_answered() {
    let root = tempfile::tempdir().unwrap();
    let apply = call(
        1,
        "apply",
        "<<<<<<< RUN\nsleep 6\n>>>>>>> END\n<<<<<<< WRITE path=\"done.txt\"\nx\n>>>>>>> END\n",
    );
    let (answers, code) = raw(
        &[
            "-C",
            root.path().to_str().unwrap(),
            "--allow-any-command",
            "--no-git",
        ],
        &[INITIALIZE, INITIALIZED, &apply],
    );
    assert_eq!(code, Some(0));
    let answer = answers.iter().find(|a| a["id"] == 1);
    let answer = answer.unwrap_or_else(|| panic!("no answer: {answers:#?}"));
    assert_eq!(
        answer["result"]["structuredContent"]["ok"], true,
        "{answer}"
    );
    assert!(root.path().join("done.txt").exists());
}

/// Issue 31, the soak of CI (the bench's `--soak` at a small size, by
/// hand at 10 MB): a long-running server given calls one after another,
/// `check` and `apply` in turn, a 1 MB document every fifth, small ones
/// between. Every call is answered once, under its id, with its report;
/// each file holds what the last apply to it wrote.
#[test]
fn a_soak_of_large_and_small_calls_answers_each_under_its_id() {
    let root = tempfile::tempdir().unwrap();
    let mut live = Live::start(root.path().to_str().unwrap(), &["--no-git"]);
    let line = "a line of the document, with a few words on it\n";
    let mut last = std::collections::BTreeMap::new();
    for i in 1..=30_usize {
        let lines = if i % 5 == 1 { 20_000 } else { 40 };
        let text = format!("{i}\n{}", line.repeat(lines));
        let (tool, path) = if i % 2 == 1 {
            ("check", "c.txt".to_owned())
        } else {
            ("apply", format!("f{}.txt", i % 7))
        };
        let doc = format!("<<<<<<< WRITE path=\"{path}\"\n{text}>>>>>>> END\n");
        live.send(&call(i, tool, &doc));
        let answers = live.answers(1, std::time::Duration::from_secs(60));
        let [answer] = answers.as_slice() else {
            panic!("call {i}: {answers:#?}");
        };
        assert_eq!(answer["id"], i, "call {i} answered under another id");
        let report = &answer["result"]["structuredContent"];
        assert_eq!(report["ok"], true, "call {i}: {answer}");
        assert_eq!(report["summary"]["tasks"], 1, "call {i}: {report}");
        if tool == "apply" {
            last.insert(path, text);
        }
    }
    for (path, text) in &last {
        let written = std::fs::read_to_string(root.path().join(path)).unwrap();
        assert!(
            written == *text,
            "{path} is not the last text written to it"
        );
    }
    assert!(!root.path().join("c.txt").exists(), "a check wrote a file");
    live.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}).to_string());
    let answers = live.answers(1, std::time::Duration::from_secs(20));
    assert_eq!(answers.first().map(|a| &a["id"]), Some(&json!(99)));
}

/// Issue 31: the memory of a large call goes back once it is answered.
/// glibc kept it (its mmap threshold rises with each large block freed):
/// after eight calls of 4 MB the server held 21 MB more than fresh, and
/// more with each call; now it holds less than the document more.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn after_large_calls_the_server_holds_about_what_it_held_fresh() {
    let root = tempfile::tempdir().unwrap();
    let mut live = Live::start(root.path().to_str().unwrap(), &["--no-git"]);
    let pid = live.child.id();
    let mut id = 0;
    let mut run = |live: &mut Live, tool: &str, lines: usize| {
        id += 1;
        let text = "a line of the document, with a few words on it\n".repeat(lines);
        let doc = format!(
            "<<<<<<< WRITE path=\"f{}.txt\"\n{text}>>>>>>> END\n",
            id % 3
        );
        live.send(&call(id, tool, &doc));
        let answers = live.answers(1, std::time::Duration::from_secs(60));
        assert_eq!(answers.first().map(|a| &a["id"]), Some(&json!(id)));
    };
    // Each path run once (its first allocations are not a call's).
    run(&mut live, "check", 10);
    run(&mut live, "apply", 10);
    let fresh = crate::support::anonymous_memory(pid);
    let lines = 4_000_000 / 47;
    for i in 0..8 {
        run(&mut live, if i % 2 == 0 { "check" } else { "apply" }, lines);
    }
    let after = crate::support::anonymous_memory(pid);
    let document = (lines * 47) as u64;
    assert!(
        after < fresh + document,
        "fresh {fresh} B, after eight calls of {document} B: {after} B"
    );
}
