//! `check` of a 100 KB document through the servers against the CLI: a
//! `tools/call check` round trip to `clada mcp`, a `didChange` to
//! `clada lsp` until its `publishDiagnostics`, and `clada check --format
//! json FILE` spawned each time. Medians of 100, the three interleaved.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench servers
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use clada_benches::{clada_binary, median, task_heavy};
use serde_json::{Value, json};

const CALLS: usize = 100;
const SIZE: usize = 100 * 1000;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary();
    let doc = task_heavy(SIZE);
    let tasks = doc.matches("<<<<<<< SEARCH").count();
    let root = tempfile::tempdir().expect("scratch");
    let file = root.path().join("reply.md");
    std::fs::write(&file, &doc).expect("document");

    let mut mcp = Mcp::start(&clada, root.path());
    let mut lsp = Lsp::start(&clada, root.path(), &doc);
    let (mut cli_ms, mut mcp_ms, mut lsp_ms) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..CALLS {
        let t = Instant::now();
        let out = Command::new(&clada)
            .args(["check", "--format", "json"])
            .arg(&file)
            .stdout(Stdio::null())
            .status()
            .expect("clada check");
        assert!(out.success(), "clada check failed");
        cli_ms.push(ms(t));

        let t = Instant::now();
        let report = mcp.check(&doc, i);
        mcp_ms.push(ms(t));
        if let Some(report) = report {
            assert_eq!(report["summary"]["tasks"], tasks, "the MCP report");
        }

        let t = Instant::now();
        lsp.change(&doc, i);
        lsp_ms.push(ms(t));
    }
    let cli = median(cli_ms);
    println!("{SIZE} B document of {tasks} tasks, median of {CALLS}:");
    println!("  clada check --format json FILE (spawned)  {cli:8.2} ms  1");
    for (name, v) in [
        ("clada mcp: tools/call check", mcp_ms),
        ("clada lsp: didChange -> diagnostics", lsp_ms),
    ] {
        let m = median(v);
        println!("  {name:<40} {m:8.2} ms  {:.2}x", m / cli);
    }
    mcp.stop();
    lsp.stop();
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn spawn(clada: &std::path::Path, args: &[&str], root: &std::path::Path) -> Child {
    Command::new(clada)
        .args(args)
        .arg("-C")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server")
}

/// An MCP client over stdio: one JSON message per line.
struct Mcp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Mcp {
    fn start(clada: &std::path::Path, root: &std::path::Path) -> Mcp {
        let mut child = spawn(clada, &["mcp"], root);
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let mut m = Mcp {
            child,
            input,
            output,
        };
        m.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}}),
        );
        m.answer(0);
        m.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, v: &Value) {
        writeln!(self.input, "{v}").expect("write to the MCP server");
        self.input.flush().expect("flush");
    }

    /// The answer to request `id` as a line (notifications before it are
    /// skipped). Only its head is looked at: the client's own parse of a
    /// large answer is not the server's time (the CLI's output is not
    /// parsed either).
    fn answer(&mut self, id: usize) -> String {
        let head = format!("\"id\":{id},");
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.output.read_line(&mut line).expect("read");
            assert!(n > 0, "the MCP server closed its output");
            if line
                .get(..line.len().min(64))
                .is_some_and(|h| h.contains(&head))
            {
                return line;
            }
        }
    }

    /// Calls `check`; the report is parsed for the first call only.
    fn check(&mut self, doc: &str, i: usize) -> Option<Value> {
        let id = i + 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "check", "arguments": {"document": doc}}}));
        let line = self.answer(id);
        (i == 0).then(|| {
            let v: Value = serde_json::from_str(&line).expect("JSON");
            v["result"]["structuredContent"].clone()
        })
    }

    fn stop(mut self) {
        drop(self.input);
        let _ = self.child.wait();
    }
}

/// An LSP client over stdio: `Content-Length` framing.
struct Lsp {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    uri: String,
}

impl Lsp {
    fn start(clada: &std::path::Path, root: &std::path::Path, doc: &str) -> Lsp {
        let mut child = spawn(clada, &["lsp"], root);
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let uri = format!("file://{}/reply.clada", root.display());
        let mut l = Lsp {
            child,
            input,
            output,
            uri,
        };
        l.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"capabilities": {}}}));
        while l.read()["id"] != 0 {}
        l.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        let uri = l.uri.clone();
        l.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "clada", "version": 0, "text": doc}}}),
        );
        l.diagnostics(0);
        l
    }

    fn send(&mut self, v: &Value) {
        let body = v.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.input.flush().expect("flush");
    }

    fn read(&mut self) -> Value {
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.output.read_line(&mut line).expect("read");
            assert!(n > 0, "the LSP server closed its output");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some(v) = header.strip_prefix("Content-Length: ") {
                length = v.parse().expect("length");
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).expect("body");
        serde_json::from_slice(&body).expect("JSON")
    }

    /// Waits for the diagnostics of `version` (a later publication, once
    /// the document has settled, is not waited for), or the next ones from
    /// a server that gives no version.
    fn diagnostics(&mut self, version: usize) {
        loop {
            let m = self.read();
            let v = &m["params"]["version"];
            if m["method"] == "textDocument/publishDiagnostics" && (v.is_null() || *v == version) {
                return;
            }
        }
    }

    fn change(&mut self, doc: &str, i: usize) {
        let uri = self.uri.clone();
        self.send(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": i + 1},
            "contentChanges": [{"text": doc}]}}),
        );
        self.diagnostics(i + 1);
    }

    fn stop(mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown"}));
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        drop(self.input);
        let _ = self.child.wait();
    }
}
