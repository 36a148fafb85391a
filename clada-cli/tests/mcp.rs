//! `clada mcp` end to end: rmcp's client over a child process.

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

        // Initialized; both tools, with input and output schemas.
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.name, "clada");
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["apply", "check"]);
        assert!(tools.iter().all(|t| t.input_schema.contains_key("properties")));
        assert!(tools.iter().all(|t| t.output_schema.is_some()));

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
        assert!(bad.is_err(), "an unknown argument was accepted");

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
        assert!(
            client
                .call_tool(CallToolRequestParams::new("check"))
                .await
                .is_err()
        );
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
            .await;
        assert!(r.is_err(), "a call widened the matching");
        assert!(!root.path().join("b").exists());
        client.cancel().await.unwrap();
    });
}
