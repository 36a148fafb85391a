//! What agents and editors read in the report: positions of blocks and
//! tasks, `already_applied`, the resend advice (and the prompt's retry
//! advice following it), grouped text output.

use std::path::Path;
use std::process::Command;

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};
use serde_json::{Value, json};

use crate::support::{eventually, jsonl};

fn clada() -> Command {
    Command::new(get_cargo_bin("clada"))
}

fn json(cmd: &mut Command) -> (Option<i32>, Value) {
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (out.status.code(), value)
}

fn apply_json(root: &Path, doc: &Path) -> (Option<i32>, Value) {
    json(
        clada()
            .args(["apply", "--no-git", "--no-prompt", "--format", "json", "-C"])
            .arg(root)
            .arg(doc),
    )
}

fn numbers(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

/// Every file under `dir` with its contents, for comparing trees.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

const POSITIONED: &str = "Intro line\n\n<<<<<<< TASKS\n<<<<<<< WRITE path=\"a.txt\"\nà\n>>>>>>> END\n<<<<<<< SEARCH path=\"a.txt\"\nà\n=======\nb\n>>>>>>> REPLACE\n>>>>>>> TASKS\n<<<<<<< REMOVE path=\"a.txt\"\n>>>>>>> END\n";

#[test]
fn blocks_and_tasks_carry_their_positions_in_check_and_apply() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc.md");
    std::fs::write(&doc, POSITIONED).unwrap();
    let (_, check) = json(clada().args(["check", "--format", "json"]).arg(&doc));
    let root = tempfile::tempdir().unwrap();
    let (code, apply) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(0), "{apply}");
    for report in [&check, &apply] {
        let blocks = report["blocks"].as_array().unwrap();
        let pos = |v: &Value| {
            (
                v["line"].as_u64().unwrap(),
                v["column"].as_u64().unwrap(),
                v["offset"].as_u64().unwrap() as usize,
            )
        };
        // The TASKS block: from its opener (line 3) to its closer's end.
        assert_eq!(pos(&blocks[0]["start"]), (3, 1, 12));
        let (line, column, end) = pos(&blocks[0]["end"]);
        assert_eq!((line, column), (12, 14));
        assert!(POSITIONED[..end].ends_with(">>>>>>> TASKS"));
        let tasks: Vec<&Value> = blocks
            .iter()
            .flat_map(|b| b["tasks"].as_array().unwrap())
            .collect();
        assert_eq!(tasks.len(), 3);
        let expect = [((4, 1), (6, 12)), ((7, 1), (11, 16)), ((13, 1), (14, 12))];
        for (t, (start, end)) in tasks.iter().zip(expect) {
            let (sl, sc, so) = pos(&t["start"]);
            let (el, ec, eo) = pos(&t["end"]);
            assert_eq!(((sl, sc), (el, ec)), (start, end), "{t}");
            let text = &POSITIONED[so..eo];
            assert!(text.starts_with("<<<<<<< "), "{text:?}");
            assert!(
                text.ends_with("END") || text.ends_with("REPLACE"),
                "{text:?}"
            );
        }
    }
}

#[test]
fn a_failed_match_lists_the_ranges_of_its_occurrences() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f.txt"), "a\nb\nx\na\nb\n").unwrap();
    let doc = root.path().join("doc.md");
    std::fs::write(
        &doc,
        "<<<<<<< SEARCH path=\"f.txt\"\na\nb\n=======\nc\n>>>>>>> REPLACE\n",
    )
    .unwrap();
    let (code, report) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(1));
    let error = &report["blocks"][0]["tasks"][0]["error"];
    assert_eq!(error["type"], "match_count_mismatch");
    assert_eq!(numbers(&error["lines"]), [1, 4]);
    assert_eq!(error["ranges"], serde_json::json!([[1, 2], [4, 5]]));
}

#[test]
fn an_edit_applied_before_is_already_applied_and_a_success() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("v.txt"), "[package]\nversion 2\n").unwrap();
    let doc = root.path().join("doc.md");
    std::fs::write(
        &doc,
        "<<<<<<< SEARCH path=\"v.txt\"\n[package]\nversion 1\n=======\n[package]\nversion 2\n>>>>>>> REPLACE\n",
    )
    .unwrap();
    let (code, report) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true);
    let task = &report["blocks"][0]["tasks"][0];
    assert_eq!(task["status"], "already_applied");
    assert_eq!(report["blocks"][0]["status"], "success");
    let error = &task["error"];
    assert_eq!(error["type"], "already_applied");
    assert_eq!(numbers(&error["applied_lines"]), [1]);
    assert!(error["hint"].as_str().unwrap().contains("do not send"));
    let summary = &report["summary"];
    assert_eq!(
        (
            &summary["succeeded"],
            &summary["already_applied"],
            &summary["failed"]
        ),
        (&json!(0), &json!(1), &json!(0)),
        "{summary}"
    );
    assert_eq!(report["resend"]["already_applied"], json!([1]));
    assert_eq!(report["resend"]["failed"], json!([]));
    assert_eq!(
        std::fs::read_to_string(root.path().join("v.txt")).unwrap(),
        "[package]\nversion 2\n"
    );
    // In words: a success, counted on its own; nothing to resend.
    let out = clada()
        .args(["apply", "--no-git", "--no-prompt", "-C"])
        .arg(root.path())
        .arg(&doc)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("[task-1] ✓ Already applied in v.txt"),
        "{text}"
    );
    assert!(
        text.contains("Overall: 1/1 tasks succeeded (already applied before)"),
        "{text}"
    );
    assert!(!text.contains("Resend:"), "{text}");
}

/// Finding the replacement proves an edit was applied only where the edit
/// would have put it (issue 30): the hint says where it stands instead.
#[test]
fn a_replacement_found_elsewhere_is_a_mismatch_that_says_where() {
    let root = tempfile::tempdir().unwrap();
    let app = "def f():\n    print(\"debug\")\n    return 1\n\n\ndef g():\n    x = 2\n";
    std::fs::write(root.path().join("app.py"), app).unwrap();
    let doc = root.path().join("doc.md");
    std::fs::write(
        &doc,
        "<<<<<<< SEARCH path=\"app.py\"\n    print('debug')\n    return 1\n=======\n    return 1\n>>>>>>> REPLACE\n\
         <<<<<<< SEARCH path=\"app.py\"\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n",
    )
    .unwrap();
    let (code, report) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["ok"], false);
    for (block, line) in [(0, 3), (1, 7)] {
        let task = &report["blocks"][block]["tasks"][0];
        assert_eq!(task["status"], "failed", "{task}");
        let error = &task["error"];
        assert_eq!(error["type"], "match_count_mismatch", "{error}");
        assert_eq!(error["replacement_present"], true);
        assert_eq!(numbers(&error["applied_lines"]), [line]);
        let hint = error["hint"].as_str().unwrap();
        assert!(
            hint.contains(&format!(
                "the replacement text already stands at line {line}: if that is this change, drop the edit"
            )),
            "{hint}"
        );
    }
    assert_eq!(report["summary"]["already_applied"], 0);
    assert_eq!(report["resend"]["failed"], json!([1, 2]));
    assert_eq!(
        std::fs::read_to_string(root.path().join("app.py")).unwrap(),
        app
    );
}

#[test]
fn invalid_utf8_is_positioned_where_its_message_says() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc.md");
    std::fs::write(&doc, b"ok\nab\xffcd\n").unwrap();
    let (_, check) = json(clada().args(["check", "--format", "json"]).arg(&doc));
    let (_, apply) = apply_json(dir.path(), &doc);
    for report in [check, apply] {
        let d = &report["diagnostics"][0];
        assert_eq!(d["code"], "invalid_utf8");
        assert!(
            d["message"].as_str().unwrap().contains("line 2, column 3"),
            "{d}"
        );
        assert_eq!(
            d["start"],
            serde_json::json!({"line": 2, "column": 3, "offset": 5})
        );
        assert_eq!(
            d["end"],
            serde_json::json!({"line": 2, "column": 4, "offset": 6})
        );
    }
}

/// A project on which every example of `clada prompt` applies, except the
/// merge-conflict edit of `notes.txt`, which the MOVE example before it
/// takes away.
fn prompt_project(dir: &Path) {
    let files = [
        (
            "src/app.py",
            "import sys\n\ndef greet(name):\n    print(\"Hello \" + name)\n\ndef main():\n    greet(\"world\")\n",
        ),
        (
            "notes.txt",
            "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n",
        ),
        ("docs/index.md", "docs\n"),
        ("build/tmp/cache", "x\n"),
    ];
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// The document made of the prompt's examples, in order.
fn prompt_examples() -> String {
    let out = clada().arg("prompt").output().unwrap();
    let prompt = String::from_utf8(out.stdout).unwrap();
    prompt
        .split("```clada\n")
        .skip(1)
        .map(|b| format!("{}\n", b.split("\n```").next().unwrap()))
        .collect()
}

#[test]
fn following_the_resend_advice_never_applies_an_edit_twice() {
    let root = tempfile::tempdir().unwrap();
    prompt_project(root.path());
    let doc_dir = tempfile::tempdir().unwrap();
    let doc = doc_dir.path().join("reply.md");
    let examples = prompt_examples();
    std::fs::write(&doc, &examples).unwrap();

    let (code, first) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(1), "{first}");
    let resend = &first["resend"];
    let (applied, failed, skipped) = (
        numbers(&resend["applied"]),
        numbers(&resend["failed"]),
        numbers(&resend["skipped"]),
    );
    let total = first["summary"]["tasks"].as_u64().unwrap();
    assert_eq!(failed.len(), 1, "only the conflict edit fails: {resend}");
    assert_eq!(
        (applied.len() + failed.len() + skipped.len()) as u64,
        total,
        "every task is in one list"
    );
    let after_first = tree(root.path());
    let app = std::fs::read_to_string(root.path().join("src/app.py")).unwrap();
    assert_eq!(app.matches("from util import double").count(), 1, "{app}");

    // The resend document: the failed and skipped tasks only, cut out of
    // the reply by their positions.
    let tasks: Vec<&Value> = first["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["tasks"].as_array().unwrap())
        .collect();
    let again: String = tasks
        .iter()
        .filter(|t| {
            let n = t["number"].as_u64().unwrap();
            failed.contains(&n) || skipped.contains(&n)
        })
        .map(|t| {
            let (a, b) = (
                t["start"]["offset"].as_u64().unwrap() as usize,
                t["end"]["offset"].as_u64().unwrap() as usize,
            );
            format!("{}\n", &examples[a..b])
        })
        .collect();
    assert!(again.contains("<<<<<<< HEAD"), "{again}");
    let resend_doc = doc_dir.path().join("resend.md");
    std::fs::write(&resend_doc, &again).unwrap();
    let (_, second) = apply_json(root.path(), &resend_doc);
    assert_eq!(second["summary"]["succeeded"], 0, "{second}");
    assert_eq!(
        tree(root.path()),
        after_first,
        "the resend changed nothing twice"
    );

    // Sending the whole reply again (what the advice forbids) is caught
    // where it can be: the first edit's text is gone and its replacement
    // stands, so it is already_applied, not done twice.
    let (_, whole) = apply_json(root.path(), &doc);
    let edit = &whole["blocks"][1]["tasks"][0];
    assert_eq!(edit["error"]["type"], "already_applied", "{edit}");
}

/// A reply in another format: six blocks without `path`, one good block.
fn repeated_problems() -> String {
    let mut doc = String::new();
    for i in 1..=6 {
        doc.push_str(&format!(
            "app.py\n```\n<<<<<<< SEARCH\nold {i}\n=======\nnew {i}\n>>>>>>> REPLACE\n```\n\n"
        ));
    }
    doc.push_str("<<<<<<< WRITE path=\"ok.txt\"\nfine\n>>>>>>> END\n");
    doc
}

#[test]
fn repeated_problems_are_grouped_in_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("reply.md"), repeated_problems()).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        let mut apply = clada();
        apply
            .args(["apply", "--no-git", "--no-prompt", "-C", ".", "reply.md"])
            .current_dir(dir.path())
            .env("NO_COLOR", "1");
        assert_cmd_snapshot!("grouped_apply_text", apply);
        let mut check = clada();
        check
            .args(["check", "reply.md"])
            .current_dir(dir.path())
            .env("NO_COLOR", "1");
        assert_cmd_snapshot!("grouped_check_text", check);
    });
    // JSON keeps every diagnostic.
    let (_, report) = json(
        clada()
            .args(["check", "--format", "json", "reply.md"])
            .current_dir(dir.path()),
    );
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 6);
}

#[test]
fn the_committed_schemas_are_what_the_code_produces() {
    for which in ["check", "apply"] {
        let out = clada().args(["schema", which]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let committed = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../grammar/schema")
            .join(format!("{which}.json"));
        let committed = std::fs::read_to_string(&committed).unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout) == committed,
            "grammar/schema/{which}.json is stale: run `clada schema {which} > grammar/schema/{which}.json`"
        );
        let schema: Value = serde_json::from_str(&committed).unwrap();
        assert_eq!(schema["type"], "object");
        assert!(schema["$defs"].is_object());
    }
}

#[test]
fn convert_rewrites_a_reply_in_another_dialect() {
    let dir = tempfile::tempdir().unwrap();
    let aider = dir.path().join("aider.md");
    std::fs::write(
        &aider,
        "Change it:\n\napp.py\n```python\n<<<<<<< SEARCH\na = 1\n=======\na = 2\n>>>>>>> REPLACE\n```\n",
    )
    .unwrap();
    let out = clada().args(["convert"]).arg(&aider).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let clada_text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        clada_text,
        "<<<<<<< SEARCH path=\"app.py\"\na = 1\n=======\na = 2\n>>>>>>> REPLACE\n"
    );
    // And on to codex, from the clada text.
    let clada_doc = dir.path().join("doc.clada");
    std::fs::write(&clada_doc, &clada_text).unwrap();
    let out = clada()
        .args(["convert", "--to", "codex"])
        .arg(&clada_doc)
        .output()
        .unwrap();
    let codex = String::from_utf8(out.stdout).unwrap();
    assert!(
        codex.starts_with("*** Begin Patch\n*** Update File: app.py\n@@\n-a = 1\n+a = 2\n"),
        "{codex}"
    );
    // A command cannot be written as a patch: an error naming the task.
    let run = dir.path().join("run.clada");
    std::fs::write(&run, "<<<<<<< RUN\nls\n>>>>>>> END\n").unwrap();
    let out = clada()
        .args(["convert", "--to", "codex"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("task 1") && err.contains("no commands"),
        "{err}"
    );
    // A document with errors is not converted.
    std::fs::write(&run, "<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n").unwrap();
    let out = clada()
        .args(["convert", "--from", "clada"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has errors"));
}

/// `clada apply --stream --no-git --format jsonl` with `flags` too, into
/// `root`, its standard input and output piped.
fn stream_into(root: &Path, flags: &[&str]) -> std::process::Child {
    clada()
        .args(["apply", "--stream", "--no-git", "--format", "jsonl"])
        .args(flags)
        .arg("-C")
        .arg(root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_stream_applies_each_unit_as_it_arrives() {
    use std::io::Write as _;
    let root = tempfile::tempdir().unwrap();
    let mut child = stream_into(root.path(), &[]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"Some prose first.\n<<<<<<< WRITE path=\"a.txt\"\none\n>>>>>>> END\n")
        .unwrap();
    stdin.flush().unwrap();
    // The unit is applied before anything more is written.
    let a = root.path().join("a.txt");
    eventually("the first unit was not applied", || a.exists());
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\n");
    // A malformed unit is reported, and the stream goes on.
    stdin
        .write_all(b"<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n<<<<<<< SEARCH path=\"a.txt\"\none\n=======\ntwo\n>>>>>>> REPLACE\n")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "two\n");
    let events = jsonl(&out.stdout);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["task", "diagnostic", "task", "task", "summary"]);
    assert_eq!(events[0]["start"]["line"], 2);
    assert_eq!(events[1]["start"]["line"], 5, "positions are the stream's");
    assert_eq!(events[3]["number"], 3);
    assert_eq!(events[3]["block"], 3);
    assert_eq!(events[3]["status"], "success");
    assert_eq!(events[4]["succeeded"], 2);
    assert_eq!(events[4]["failed"], 1);
}

/// `--stream --dialect aider`: each block is applied at its `>>>>>>>
/// REPLACE`, before the rest of the reply arrives, at the stream's lines;
/// a block without its file name is said, naming what to add, and the
/// stream goes on (PROTOCOL §11.5).
#[test]
fn a_stream_in_another_dialect_applies_each_of_its_units_as_it_ends() {
    use std::io::Write as _;
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.py"), "x = 1\n").unwrap();
    let mut child = stream_into(root.path(), &["--dialect", "aider"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"Two edits.\n\na.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n")
        .unwrap();
    stdin.flush().unwrap();
    let a = root.path().join("a.py");
    eventually("the block was not applied at its REPLACE line", || {
        std::fs::read_to_string(&a).unwrap() == "x = 2\n"
    });
    stdin
        .write_all(b"```\n\n```python\n<<<<<<< SEARCH\nx = 2\n=======\nx = 3\n>>>>>>> REPLACE\n```\nb.py\n```\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n```\n")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "x = 2\n");
    assert_eq!(
        std::fs::read_to_string(root.path().join("b.py")).unwrap(),
        "new\n"
    );
    let events = jsonl(&out.stdout);
    let seen: Vec<(&str, Value)> = events
        .iter()
        .map(|e| {
            let what = e["event"].as_str().unwrap();
            let at = match what {
                "task" => e["start"]["line"].clone(),
                "diagnostic" => e["kind"].clone(),
                _ => e["succeeded"].clone(),
            };
            (what, at)
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("task", json!(3)),
            ("diagnostic", json!("missing_attribute")),
            ("task", json!(13)),
            ("task", json!(19)),
            ("summary", json!(2)),
        ],
        "{events:#?}"
    );
    let said = events[1]["message"].as_str().unwrap_or_default();
    assert!(said.contains("file"), "{said}");
}

/// Edits a stream cannot read are said, never dropped: a codex patch and
/// markers indented as in a list, in the prose between units, are errors
/// (exit 1) where they are, nothing of them is applied, and the units
/// around them still apply (PROTOCOL §11.5).
#[test]
fn a_stream_reports_edits_in_prose_it_does_not_read() {
    let root = tempfile::tempdir().unwrap();
    let stream = "<<<<<<< WRITE path=\"a.txt\"\na\n>>>>>>> END\n\
                  Here is the patch:\n*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n\
                  <<<<<<< WRITE path=\"c.txt\"\nc\n>>>>>>> END\n\
                  1. and a list:\n   <<<<<<< WRITE path=\"d.txt\"\n   d\n   >>>>>>> END\n";
    let run = |format: &str| {
        let mut child = clada()
            .args(["apply", "--stream", "--no-git", "--format", format, "-C"])
            .arg(root.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(stream.as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, out) = run("jsonl");
    assert_eq!(code, Some(1), "{out}");
    let events = jsonl(out.as_bytes());
    let said: Vec<(&str, &str, u64)> = events
        .iter()
        .filter(|e| e["event"] != "summary")
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["kind"].as_str().or(e["status"].as_str()).unwrap(),
                e["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            ("task", "success", 1),
            ("diagnostic", "foreign_format", 5),
            ("task", "success", 9),
            ("diagnostic", "malformed_marker", 13),
            ("diagnostic", "malformed_marker", 15),
        ],
        "{out}"
    );
    assert!(
        events[1]["message"]
            .as_str()
            .unwrap()
            .contains("codex patch")
    );
    assert!(!root.path().join("b.txt").exists());
    assert!(!root.path().join("d.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.path().join("c.txt")).unwrap(),
        "c\n"
    );
    let summary = events.last().unwrap();
    assert_eq!(
        (summary["ok"].clone(), summary["errors"].clone()),
        (serde_json::json!(false), serde_json::json!(3))
    );
    // In text, under a heading of its own, with no `no_tasks` warning.
    let (code, out) = run("text");
    assert_eq!(code, Some(1));
    assert!(
        out.contains("--- prose (line 4 of the stream) ---"),
        "{out}"
    );
    assert!(
        out.contains("--- unit 2 (line 9 of the stream) ---"),
        "{out}"
    );
    assert!(!out.contains("no_tasks"), "{out}");
}

/// A unit holding bytes that are not UTF-8 is refused with its position,
/// never written with replacement characters; the stream goes on
/// (PROTOCOL §11.5).
#[test]
fn a_stream_refuses_a_unit_that_is_not_utf8_and_goes_on() {
    let root = tempfile::tempdir().unwrap();
    let stream: &[u8] = b"prose \xff\n<<<<<<< WRITE path=\"a.txt\"\ncaf\xe9\n>>>>>>> END\n\
        <<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n";
    let mut child = clada()
        .args(["apply", "--stream", "--no-git", "--format", "jsonl", "-C"])
        .arg(root.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), stream).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!root.path().join("a.txt").exists(), "the unit was applied");
    assert_eq!(
        std::fs::read_to_string(root.path().join("b.txt")).unwrap(),
        "b\n"
    );
    let events = jsonl(&out.stdout);
    let d = &events[0];
    assert_eq!(
        (d["event"].as_str(), d["code"].as_str()),
        (Some("diagnostic"), Some("invalid_utf8"))
    );
    assert_eq!(
        (d["start"]["line"].as_u64(), d["start"]["column"].as_u64()),
        (Some(3), Some(4))
    );
    assert_eq!(d["start"]["offset"], 38);
    assert_eq!(events[1]["error"]["type"], "invalid_utf8");
    assert_eq!(events[2]["status"], "success");
    let summary = events.last().unwrap();
    assert_eq!(
        (summary["succeeded"].as_u64(), summary["failed"].as_u64()),
        (Some(1), Some(1))
    );
}

/// Limits apply per unit (PROTOCOL §11.5): a unit past 50 MiB is refused
/// whole, what its body holds never runs as a unit of its own (it did when
/// the unit was cut at the limit), and the stream goes on after its closer.
#[test]
fn a_stream_refuses_a_unit_over_the_limit_and_nothing_inside_it_runs() {
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stream.md");
    let mut stream = b"<<<<<<< WRITE path=\"big.txt\"\n".to_vec();
    let line = [b"x".repeat(1023), b"\n".to_vec()].concat();
    for _ in 0..(50 * 1024 + 1) {
        stream.extend_from_slice(&line);
    }
    stream.extend_from_slice(b"<<<<<<< WRITE path=\"inner.txt\"\ni\n>>>>>>> END\n>>>>>>> END\n");
    stream.extend_from_slice(b"<<<<<<< WRITE path=\"after.txt\"\na\n>>>>>>> END\n");
    std::fs::write(&file, &stream).unwrap();
    let out = clada()
        .args(["apply", "--stream", "--no-git", "--format", "jsonl", "-C"])
        .arg(root.path())
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!root.path().join("big.txt").exists());
    assert!(!root.path().join("inner.txt").exists(), "a unit inside ran");
    assert_eq!(
        std::fs::read_to_string(root.path().join("after.txt")).unwrap(),
        "a\n"
    );
    let events = jsonl(&out.stdout);
    assert_eq!(events[0]["code"], "input_too_large");
    let summary = events.last().unwrap();
    assert_eq!(
        (summary["blocks"].as_u64(), summary["succeeded"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn watch_applies_each_unit_once_when_it_is_complete() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let (root, home, replies) = (
        dir.path().join("root"),
        dir.path().join("home"),
        dir.path().join("replies.md"),
    );
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(&replies, "Replies go here.\n").unwrap();
    let start = || {
        clada()
            .args(["watch", "--no-git", "--format", "jsonl"])
            .arg(&replies)
            .arg("-C")
            .arg(&root)
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_RUNTIME_DIR")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let append = |text: &str| {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&replies)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    };
    let a = root.join("a.txt");
    let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
    let child = start();
    append("<<<<<<< WRITE path=\"a.txt\"\none\n>>>>>>> END\n");
    eventually("the WRITE was not applied", || read(&a) == "one\n");
    // Half a unit waits for the rest.
    append("<<<<<<< WRITE path=\"a.txt\" append=\"true\"\ntwo\n");
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(read(&a), "one\n", "an unfinished unit ran");
    append(">>>>>>> END\n");
    eventually("the appending WRITE was not applied", || {
        read(&a) == "one\ntwo\n"
    });
    // Ctrl-C stops it cleanly, with its summary.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "summary");
    assert_eq!(last["succeeded"], 2);
    // Started again, it applies nothing twice: the appends stay two.
    let child = start();
    append("<<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n");
    eventually("the new unit was not applied", || {
        root.join("b.txt").exists()
    });
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(read(&a), "one\ntwo\n", "a unit was applied twice");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("\"event\":\"task\""))
            .count(),
        1,
        "{text}"
    );
    // Nothing of the watch's memory is in the tree.
    let names: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A block a rollback took back (`--atomic=document`, a later unit
/// failing) gets no ✓ in the text summary: its changes are not there.
#[test]
fn a_rolled_back_block_gets_no_tick() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("reply.md"),
        "<<<<<<< WRITE path=\"a.txt\"\nhi\n>>>>>>> END\n<<<<<<< SEARCH path=\"missing.txt\"\nx\n=======\ny\n>>>>>>> REPLACE\n",
    )
    .unwrap();
    let out = clada()
        .args([
            "apply",
            "--no-git",
            "--atomic=document",
            "-C",
            ".",
            "reply.md",
        ])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text.contains("Block 1: 1/1 tasks succeeded ↺ rolled back\n"),
        "{text}"
    );
    assert!(!dir.path().join("a.txt").exists());
}

/// An edit whose replacement is its search text (issue 30): a warning, and
/// a task that succeeds leaving its file as it is, so that the good edit
/// beside it applies in the same round.
#[test]
fn an_edit_that_changes_nothing_is_a_warning_and_leaves_the_file() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("same.py"), "b = 2\n").unwrap();
    std::fs::write(root.path().join("a.py"), "a = 1\n").unwrap();
    let before = std::fs::metadata(root.path().join("same.py"))
        .unwrap()
        .modified()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let doc = root.path().join("doc.md");
    std::fs::write(
        &doc,
        "<<<<<<< SEARCH path=\"same.py\"\nb = 2\n=======\nb = 2\n>>>>>>> REPLACE\n\
         <<<<<<< SEARCH path=\"a.py\"\na = 1\n=======\na = 3\n>>>>>>> REPLACE\n",
    )
    .unwrap();
    let (code, report) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true);
    let d = &report["diagnostics"][0];
    assert_eq!(
        (&d["kind"], &d["severity"]),
        (&json!("unchanged_edit"), &json!("warning"))
    );
    assert_eq!(d["task"], 1);
    let task = &report["blocks"][0]["tasks"][0];
    assert_eq!(task["status"], "success", "{task}");
    assert_eq!(
        task["message"],
        "Left same.py unchanged (the replacement is the search text, found at line 1)"
    );
    assert_eq!(report["resend"]["applied"], json!([1, 2]));
    assert_eq!(
        std::fs::read_to_string(root.path().join("a.py")).unwrap(),
        "a = 3\n"
    );
    let after = std::fs::metadata(root.path().join("same.py"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "the unchanged file was written");
    // Its search text absent: a mismatch as any edit.
    std::fs::write(
        &doc,
        "<<<<<<< SEARCH path=\"same.py\"\nzz\n=======\nzz\n>>>>>>> REPLACE\n",
    )
    .unwrap();
    let (code, report) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(1), "{report}");
    let error = &report["blocks"][0]["tasks"][0]["error"];
    assert_eq!(error["type"], "match_count_mismatch", "{error}");
}

/// A reply without any edit (issue 30): `no_tasks` is an error of `apply`
/// (exit 1), as `git apply` refuses an empty patch; `--allow-empty` takes it
/// for pipelines that pass every reply.
#[test]
fn a_reply_without_edits_is_refused_unless_allowed() {
    let root = tempfile::tempdir().unwrap();
    let doc = root.path().join("reply.md");
    std::fs::write(&doc, "I think the code is fine as it is.\n").unwrap();
    let (code, report) = apply_json(root.path(), &doc);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["ok"], false);
    let d = &report["diagnostics"][0];
    assert_eq!(
        (&d["kind"], &d["severity"]),
        (&json!("no_tasks"), &json!("error"))
    );
    assert!(d["help"].as_str().unwrap().contains("--allow-empty"), "{d}");
    // Empty standard input, in words.
    let out = clada()
        .args(["apply", "--no-git", "--no-prompt", "-C"])
        .arg(root.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("[no_tasks] Error: the document has no task"),
        "{text}"
    );
    // Allowed: a success that did nothing.
    let (code, report) = json(
        clada()
            .args([
                "apply",
                "--no-git",
                "--allow-empty",
                "--format",
                "json",
                "-C",
            ])
            .arg(root.path())
            .arg(&doc),
    );
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["diagnostics"][0]["severity"], "warning");
}

/// Every edit of a reply has a place in `resend` (issue 30): a WRITE whose
/// marker has a typo, a unified diff beside a WRITE in a clada reply. The
/// summary never reads as all done when one was refused.
#[test]
fn an_edit_no_task_came_of_has_a_place_in_resend() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f.txt"), "a\nb\n").unwrap();
    let typo = "Here:\n\n<<<<<<<WRITE path=\"new.txt\"\nhello\n>>>>>>> END\n\n\
                <<<<<<< SEARCH path=\"f.txt\"\na\n=======\nA\n>>>>>>> REPLACE\n";
    let diff = "<<<<<<< WRITE path=\"n2.txt\"\nhello\n>>>>>>> END\n\n```diff\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-b\n+B\n```\n";
    for (name, doc, line, first, kind) in [
        (
            "typo.md",
            typo,
            3,
            "<<<<<<<WRITE path=\"new.txt\"",
            "malformed_marker",
        ),
        ("diff.md", diff, 6, "--- a/f.txt", "foreign_format"),
    ] {
        let path = root.path().join(name);
        std::fs::write(&path, doc).unwrap();
        // A dry run says it too.
        let (code, report) = json(
            clada()
                .args(["apply", "--no-git", "--dry-run", "--format", "json", "-C"])
                .arg(root.path())
                .arg(&path),
        );
        assert_eq!(code, Some(1), "{report}");
        assert_eq!(report["resend"]["applied"], json!([1]), "{report}");
        assert_eq!(
            report["resend"]["failed"],
            json!([{"line": line, "first_line": first, "kind": kind}]),
            "{report}"
        );
        let out = clada()
            .args(["apply", "--no-git", "--no-prompt", "-C"])
            .arg(root.path())
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains("Overall: 1/1 tasks succeeded; 1 edit was refused, not read as a task ✗"),
            "{text}"
        );
        assert!(
            text.contains("Resend:\n  task 1: applied, never send again\n"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "  the edit at line {line} (`{first}`): not read as a task ({kind}), fix and send again"
            )),
            "{text}"
        );
    }
}

/// `--stream --format jsonl` ends with the resend lists of the whole
/// stream, in its numbers (issue 30).
#[test]
fn a_streams_summary_carries_resend() {
    use std::io::Write as _;
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "one\n").unwrap();
    let mut child = stream_into(root.path(), &[]);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"<<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n\
              <<<<<<< SEARCH path=\"a.txt\"\nnone\n=======\nx\n>>>>>>> REPLACE\n",
        )
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let events = jsonl(&out.stdout);
    let summary = events.last().unwrap();
    assert_eq!(summary["event"], "summary", "{events:#?}");
    assert_eq!(summary["resend"]["applied"], json!([1]), "{summary}");
    assert_eq!(summary["resend"]["failed"], json!([2]), "{summary}");
}
