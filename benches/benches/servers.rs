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

use clada_benches::{clada_binary, content_heavy, median, task_heavy};
use serde_json::{Value, json};

const CALLS: usize = 100;
const SIZE: usize = 100 * 1000;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if std::env::args().any(|a| a == "--soak") {
        soak();
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

/// A number from the environment, else `default`.
fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The resident memory of process `pid`, in MiB.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The `p` quantile of `v` (0.5: the median), by rank.
fn quantile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 * p).ceil() as usize).saturating_sub(1);
    v.get(i).copied().unwrap_or(f64::NAN)
}

fn latency(name: &str, v: &[f64]) {
    println!(
        "  {name}: p50 {:8.2} ms  p99 {:8.2} ms  ({} calls)",
        quantile(v.to_vec(), 0.5),
        quantile(v.to_vec(), 0.99),
        v.len()
    );
}

/// `--soak [mcp|lsp]`: a long-running server under sequential calls of
/// documents up to `SOAK_SIZE` bytes (a large one every fifth call, small
/// ones of 2 KB between), its resident memory printed every `SOAK_EVERY`
/// calls; `SOAK_CALLS` calls, or fewer if `SOAK_SECS` runs out first;
/// then, after `SOAK_IDLE` seconds without a call, its memory at rest.
/// Both servers unless one is named.
///
/// ```sh
/// SOAK_SIZE=10000000 SOAK_CALLS=1000 SOAK_EVERY=100 \
///   cargo bench -p clada-benches --bench servers -- --soak
/// ```
fn soak() {
    let which = std::env::args().skip_while(|a| a != "--soak").nth(1);
    let settings = Soak {
        size: env_or("SOAK_SIZE", 1_000_000),
        calls: env_or("SOAK_CALLS", 200),
        every: env_or("SOAK_EVERY", 20).max(1),
        secs: env_or("SOAK_SECS", 120),
        idle: env_or("SOAK_IDLE", 2),
    };
    let clada = clada_binary();
    if which.as_deref() != Some("lsp") {
        soak_mcp(&clada, &settings);
    }
    if which.as_deref() != Some("mcp") {
        soak_lsp(&clada, &settings);
    }
}

struct Soak {
    size: usize,
    calls: usize,
    every: usize,
    secs: usize,
    idle: usize,
}

impl Soak {
    fn end(&self) -> Instant {
        Instant::now() + std::time::Duration::from_secs(self.secs as u64)
    }

    /// Waits `SOAK_IDLE` seconds: memory at rest, not mid-call.
    fn rest(&self) {
        std::thread::sleep(std::time::Duration::from_secs(self.idle as u64));
    }

    fn mib(&self) -> f64 {
        self.size as f64 / (1024.0 * 1024.0)
    }
}

/// `clada mcp`: `check` and `apply` in turn, so large checks and large
/// applies; the last RSS as a multiple of the largest document (none is
/// held once its call is answered).
fn soak_mcp(clada: &std::path::Path, s: &Soak) {
    let root = tempfile::tempdir().expect("scratch");
    let line = "a line of the document, with a few words on it\n";
    let body = |bytes: usize| line.repeat(bytes / line.len() + 1);
    let big = body(s.size);
    let small = body(2000);
    let mut mcp = Mcp::start(clada, root.path());
    let pid = mcp.child.id();
    let fresh = rss_mib(pid);
    println!(
        "clada mcp soak: {} calls (check, apply in turn), a {} B document every fifth",
        s.calls, s.size
    );
    println!("  calls  RSS MiB");
    println!("  {:>5}  {fresh:7.1}", 0);
    let end = s.end();
    let (mut check_ms, mut apply_ms) = (Vec::new(), Vec::new());
    let mut peak: f64 = 0.0;
    let mut done = 0;
    for i in 0..s.calls {
        if Instant::now() >= end {
            break;
        }
        let text = if i % 5 == 0 { &big } else { &small };
        let (tool, doc) = if i % 2 == 0 {
            (
                "check",
                format!("<<<<<<< WRITE path=\"c.txt\"\n{text}>>>>>>> END\n"),
            )
        } else {
            (
                "apply",
                format!("<<<<<<< WRITE path=\"f{}.txt\"\n{text}>>>>>>> END\n", i % 7),
            )
        };
        let id = i + 1;
        // Made before the clock starts: the client's work is not the
        // server's.
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"document": doc}}})
        .to_string();
        let t = Instant::now();
        writeln!(mcp.input, "{message}").expect("write to the MCP server");
        mcp.input.flush().expect("flush");
        drop(message);
        let answer = mcp.answer(id);
        let took = ms(t);
        assert!(!answer.contains("\"error\":{\"code\""), "call {id} failed");
        if tool == "check" {
            check_ms.push(took);
        } else {
            apply_ms.push(took);
        }
        done = i + 1;
        let rss = rss_mib(pid);
        peak = peak.max(rss);
        if done % s.every == 0 {
            println!("  {done:>5}  {rss:7.1}");
        }
    }
    s.rest();
    let last = rss_mib(pid);
    latency("check", &check_ms);
    latency("apply", &apply_ms);
    println!(
        "  {done} calls: RSS fresh {fresh:.1} MiB, peak {peak:.1} MiB, idle after {last:.1} MiB \
         ({:.1}x the largest document, {:.1} MiB; {:+.1} MiB over fresh)",
        last / s.mib(),
        s.mib(),
        last - fresh
    );
    mcp.stop();
}

/// `clada lsp`: a storm of `didChange`, each waited for until its
/// diagnostics: a large document of content (`content_heavy`) every
/// fifth change and last, small ones of tasks (`task_heavy`) between; then, once settled (its dry run done), its memory
/// against a fresh server given the same last text.
fn soak_lsp(clada: &std::path::Path, s: &Soak) {
    let root = tempfile::tempdir().expect("scratch");
    let big = content_heavy(s.size);
    let small = task_heavy(2000);
    let mut lsp = Lsp::start(clada, root.path(), &small);
    let pid = lsp.child.id();
    println!(
        "clada lsp soak: {} changes, a {} B document every fifth and last",
        s.calls,
        big.len()
    );
    println!("  changes  RSS MiB");
    println!("  {:>7}  {:7.1}", 0, rss_mib(pid));
    let end = s.end();
    let mut change_ms = Vec::new();
    let mut peak: f64 = 0.0;
    let mut done = 0;
    for i in 0..s.calls {
        let last = i + 1 == s.calls || Instant::now() >= end;
        let text = if i % 5 == 0 || last { &big } else { &small };
        let t = Instant::now();
        lsp.change(text, i);
        change_ms.push(ms(t));
        done = i + 1;
        let rss = rss_mib(pid);
        peak = peak.max(rss);
        if done % s.every == 0 {
            println!("  {done:>7}  {rss:7.1}");
        }
        if last {
            break;
        }
    }
    // Past the settling time (300 ms) and its dry run.
    s.rest();
    let after = rss_mib(pid);
    lsp.stop();
    let fresh = Lsp::start(clada, root.path(), &big);
    s.rest();
    let alone = rss_mib(fresh.child.id());
    fresh.stop();
    latency("didChange -> diagnostics", &change_ms);
    println!(
        "  {done} changes: RSS peak {peak:.1} MiB, idle after {after:.1} MiB; a fresh server \
         given the last text {alone:.1} MiB ({:+.1} MiB; the document {:.1} MiB)",
        after - alone,
        s.mib()
    );
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
