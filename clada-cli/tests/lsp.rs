//! `clada lsp` end to end: JSON-RPC over the child's standard input and
//! output, as an editor speaks it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use insta_cmd::get_cargo_bin;
use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start(root: &std::path::Path) -> Client {
        Client::start_with(root, &[])
    }

    fn start_with(root: &std::path::Path, args: &[&str]) -> Client {
        let mut child = Command::new(get_cargo_bin("clada"))
            .args(["lsp", "-C"])
            .arg(root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.unwrap()];
                reader.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
            next_id: 1,
        }
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response, passing over
    /// notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(|m| m["id"] == id)
    }

    fn wait(&mut self, want: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self
                .messages
                .recv_timeout(Duration::from_secs(20))
                .expect("no answer from clada lsp");
            if want(&m) {
                return m;
            }
        }
    }

    fn diagnostics(&mut self) -> Vec<Value> {
        let m = self.wait(|m| m["method"] == "textDocument/publishDiagnostics");
        m["params"]["diagnostics"].as_array().unwrap().clone()
    }
}

const URI: &str = "file:///work/reply.clada";

#[test]
fn an_editor_session() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("app.py"), "x = 1\ny = 2\ny = 2\n").unwrap();
    let mut c = Client::start(root.path());
    let init = c.request("initialize", json!({"capabilities": {}}));
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["hoverProvider"], true, "{init}");
    assert_eq!(caps["codeActionProvider"], true);
    c.notify("initialized", json!({}));

    // Open: an indented opener (a near miss) whose line holds characters
    // of 2 and 4 bytes (1 and 2 UTF-16 units), and a SEARCH.
    let text = "  <<<<<<< WRITE path=\"é😀.txt\"\n<<<<<<< SEARCH path=\"app.py\"\nx = 1\n=======\nx = 2 # é\n>>>>>>> REPLACE\n";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "clada", "version": 1, "text": text}}),
    );
    let ds = c.diagnostics();
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["code"], "malformed_marker");
    assert_eq!(ds[0]["severity"], 1);
    assert_eq!(
        ds[0]["range"],
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 30}})
    );

    // A code action fixes it, and applying the edit clears the diagnostic.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": ds[0]["range"], "context": {"diagnostics": ds}}),
    );
    let action = &actions["result"][0];
    let edit = &action["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "<<<<<<< WRITE path=\"é😀.txt\"");
    assert_eq!(edit["range"], ds[0]["range"]);
    let fixed = text.replacen("  <<<<<<<", "<<<<<<<", 1);
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": fixed}]}),
    );
    let ds = c.diagnostics();
    // The WRITE now swallows the SEARCH as its body and has no closer.
    assert!(ds.iter().all(|d| d["code"] != "malformed_marker"), "{ds:?}");
    let unclosed = ds.iter().find(|d| d["code"] == "unclosed_opener").unwrap();
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": unclosed["range"], "context": {"diagnostics": ds}}),
    );
    assert_eq!(
        actions["result"][0]["edit"]["changes"][URI][0]["newText"],
        ">>>>>>> END\n"
    );

    // Hover on a task: what a dry run says, and the file is untouched.
    let search = "<<<<<<< SEARCH path=\"app.py\"\ny = 2\n=======\ny = 3\n>>>>>>> REPLACE\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 3}, "contentChanges": [{"text": search}]}),
    );
    assert!(c.diagnostics().is_empty());
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 1, "character": 2}}),
    );
    let shown = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("match_count_mismatch"), "{shown}");
    assert!(
        shown.contains("2, 3") || shown.contains("lines 2"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("app.py")).unwrap(),
        "x = 1\ny = 2\ny = 2\n"
    );

    // Symbols and formatting.
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": URI}}),
    );
    assert_eq!(symbols["result"][0]["name"], "task 1: edit app.py");
    let messy = "<<<<<<< WRITE   path='n.txt'  \nhi\n>>>>>>> END\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 4}, "contentChanges": [{"text": messy}]}),
    );
    c.diagnostics();
    let format = c.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": URI}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(
        format["result"][0]["newText"],
        "<<<<<<< WRITE path='n.txt'\nhi\n>>>>>>> END"
    );

    // A malformed request is an error, and the server goes on.
    let bad = c.request("textDocument/hover", json!({"nothing": true}));
    assert!(bad["error"]["message"].as_str().is_some(), "{bad}");
    let unknown = c.request("clada/unknown", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);

    let down = c.request("shutdown", Value::Null);
    assert!(down.get("error").is_none(), "{down}");
    c.notify("exit", Value::Null);
    drop(c.stdin);
    let status = c.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_hover_of_a_deep_document_answers_within_its_deadline() {
    let root = tempfile::tempdir().unwrap();
    let mut c = Client::start_with(root.path(), &["--hover-timeout", "300ms"]);
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));
    // Paths as deep as a path may be: a built-in that makes four of them,
    // then writes into forty more (minutes each to plan, once).
    let deep = |top: &str| format!("{top}/{}f", "d/".repeat(1022));
    let mut text = String::from("<<<<<<< RUN\nmkdir -p");
    for top in ["a", "b", "c", "e"] {
        text.push(' ');
        text.push_str(&deep(top));
    }
    text.push_str("\n>>>>>>> END\n");
    for i in 0..40 {
        text.push_str(&format!(
            "<<<<<<< WRITE path=\"{}\"\nx\n>>>>>>> END\n",
            deep(&format!("w{i}"))
        ));
    }
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "clada", "version": 1, "text": text}}),
    );
    assert!(c.diagnostics().is_empty());
    let last_line = text.lines().count() - 2;
    for line in [0, last_line] {
        let hover = c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": 2}}),
        );
        let shown = hover["result"]["contents"]["value"].as_str().unwrap();
        // Planned within the limit, or stopped by it: an answer either
        // way, and never another failure.
        let planned = shown.contains("Would create") || shown.contains("built-in, inside clada");
        let stopped = shown.contains("total timeout passed") || shown.contains("exec_timeout");
        assert!(planned || stopped, "{}", &shown[..200]);
        assert!(
            !shown.contains("would fail") || stopped,
            "{}",
            &shown[..200]
        );
    }
    // A dry run: nothing was made.
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}
