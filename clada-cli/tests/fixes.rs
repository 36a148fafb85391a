//! Issue 30, items 5, 9 and 10: the report an agent acts on. The fix a
//! diagnostic offers is shown as the lines it makes (text, JSON, XML, MCP)
//! and made by `clada check --fix` or shown by `--diff`; every format gets
//! the hints; help speaks the dialect a block was written in; the summary
//! says what happened.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use insta_cmd::get_cargo_bin;
use serde_json::Value;

fn clada() -> Command {
    let mut c = Command::new(get_cargo_bin("clada"));
    c.env("NO_COLOR", "1");
    c
}

/// A near-miss block: markers of 5 characters, read as prose.
const NEAR: &str = "<<<<< SEARCH path=\"a.txt\"\nold\n=====\nnew\n>>>>> REPLACE\n";
/// The lines its fix makes.
const FIXED: &str = "<<<<<<< SEARCH path=\"a.txt\"\nold\n=======\nnew\n>>>>>>> REPLACE\n";

fn run(cmd: &mut Command, stdin: Option<&str>) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    (
        status.code(),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

fn doc(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("reply.md");
    std::fs::write(&path, text).unwrap();
    path
}

fn apply(root: &Path, doc: &Path, format: &str) -> (Option<i32>, String) {
    let (code, out, _) = run(
        clada()
            .args(["apply", "--no-git", "--no-prompt", "--format", format, "-C"])
            .arg(root)
            .arg(doc),
        None,
    );
    (code, out)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn the_text_report_shows_the_lines_a_fix_makes() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(dir.path(), NEAR);
    let (code, check, _) = run(clada().arg("check").arg(&path), None);
    assert_eq!(code, Some(1));
    let (code, applied) = apply(dir.path(), &path, "text");
    assert_eq!(code, Some(1));
    for out in [&check, &applied] {
        assert!(out.contains("Note: the fix makes lines 1-5 read:"), "{out}");
        // Each line as the fix leaves it, under the note.
        let shown: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.contains("the fix makes lines 1-5 read:"))
            .skip(1)
            .take(5)
            .map(|l| l.trim_start_matches([' ', '│']).trim_end())
            .collect();
        assert_eq!(shown, FIXED.lines().collect::<Vec<_>>(), "{out}");
    }
}

#[test]
fn json_fix_carries_the_lines_it_makes() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(dir.path(), NEAR);
    let (_, check, _) = run(clada().args(["check", "--format", "json"]).arg(&path), None);
    let (_, applied) = apply(dir.path(), &path, "json");
    for report in [json(&check), json(&applied)] {
        let fix = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|d| d.get("fix"))
            .unwrap_or_else(|| panic!("{report}"));
        assert_eq!(fix["lines"]["start_line"], 1);
        assert_eq!(fix["lines"]["end_line"], 5);
        assert_eq!(fix["lines"]["text"], FIXED.trim_end());
    }
}

#[test]
fn check_fix_rewrites_the_file_and_checks_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{NEAR}\n<<<<<<< WRITE path=\"b\"\nx\n>>>>>>> REPLACE\n");
    let path = doc(dir.path(), &text);
    let (code, out, err) = run(clada().args(["check", "--fix"]).arg(&path), None);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{FIXED}\n<<<<<<< WRITE path=\"b\"\nx\n>>>>>>> END\n")
    );
    assert!(out.contains("OK: 2 blocks, 2 tasks, 0 errors"), "{out}");
    assert!(err.contains("fixed 2 problems; no error left"), "{err}");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // Nothing left to fix: the file is not written again.
    let (code, _, err) = run(clada().args(["check", "--fix"]).arg(&path), None);
    assert_eq!(code, Some(0));
    assert!(err.contains("nothing to fix; no error left"), "{err}");
}

#[test]
fn check_fix_keeps_the_file_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = doc(dir.path(), NEAR);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let (code, _, _) = run(clada().args(["check", "--fix"]).arg(&path), None);
    assert_eq!(code, Some(0));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[test]
fn check_fix_on_standard_input_prints_the_fixed_document() {
    let (code, out, err) = run(clada().args(["check", "--fix"]), Some(NEAR));
    assert_eq!((code, out.as_str()), (Some(0), FIXED), "{err}");
    assert!(err.contains("fixed 1 problem; no error left"), "{err}");
}

#[test]
fn check_diff_prints_the_fixes_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(dir.path(), NEAR);
    let (code, out, _) = run(clada().args(["check", "--diff"]).arg(&path), None);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("--- a/"), "{out}");
    assert!(
        out.contains("\n-<<<<< SEARCH path=\"a.txt\"\n+<<<<<<< SEARCH path=\"a.txt\"\n"),
        "{out}"
    );
    assert!(
        out.contains("\n->>>>> REPLACE\n+>>>>>>> REPLACE\n"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), NEAR);
    // --fix and --diff together: a wrong command line.
    let (code, _, _) = run(clada().args(["check", "--fix", "--diff"]).arg(&path), None);
    assert_eq!(code, Some(2));
}

/// A fix that leaves a value for the model (`path=""`) is not made: the
/// error stays, exit 1, and the closer that could be put right is.
#[test]
fn check_fix_leaves_what_only_the_model_can_give() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(
        dir.path(),
        "<<<<<<< WRITE path=\"c\"\nx\n>>>>>>> END\n<<<<<<< WRITE\nx\n>>>>>>> REPLACE\n",
    );
    let (code, out, err) = run(clada().args(["check", "--fix"]).arg(&path), None);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "<<<<<<< WRITE path=\"c\"\nx\n>>>>>>> END\n<<<<<<< WRITE\nx\n>>>>>>> END\n"
    );
    assert!(out.contains("WRITE needs a `path` attribute"), "{out}");
    assert!(err.contains("fixed 1 problem; 1 error remains"), "{err}");
}

/// The document named is a link to a file elsewhere: `--fix` neither
/// writes through it nor puts a file in its place.
#[test]
fn check_fix_refuses_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = doc(outside.path(), NEAR);
    let link = dir.path().join("reply.md");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (code, _, err) = run(clada().args(["check", "--fix"]).arg(&link), None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), NEAR);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // --diff only reads: it shows the fixes of the file the link names.
    let (code, out, _) = run(clada().args(["check", "--diff"]).arg(&link), None);
    assert_eq!(code, Some(0));
    assert!(out.contains("+<<<<<<< SEARCH"), "{out}");
}

#[test]
fn xml_gives_the_hints_the_text_gives() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    let path = doc(
        dir.path(),
        "<<<<<<< TASKS\n<<<<<<< SEARCH path=\"a.rs\"\n    println!(\"hello\");\n=======\n    println!(\"bye\");\n>>>>>>> REPLACE\n\
         <<<<<<< WRITE path=\"b.txt\"\nb\n>>>>>>> END\n>>>>>>> TASKS\n",
    );
    let (code, out) = apply(dir.path(), &path, "xml");
    assert_eq!(code, Some(1), "{out}");
    for part in [
        r#"<error type="match_count_mismatch">found 0 matches, expected 1</error>"#,
        "<hint>closest text at line 2 (88% alike): copy the text exactly</hint>",
        r#"<closest start_line="2" end_line="2" similarity="0.88"><![CDATA[--- search text"#,
        "-    println!(\"hello\");\n+    println!(\"hi\");\n]]></closest>",
        r#"<resend failed="0" skipped="1"/>"#,
    ] {
        assert!(out.contains(part), "{part}\n{out}");
    }
    // An edit refused before it became a task: the error, its help, its
    // fix (the lines as they read once fixed) and the edit to resend.
    let path = doc(dir.path(), NEAR);
    let (code, out) = apply(dir.path(), &path, "xml");
    assert_eq!(code, Some(1), "{out}");
    for part in [
        r#"<error type="malformed_structure" kind="malformed_marker" line="1">"#,
        "<help>the fix rewrites the block",
        &format!(
            r#"<fix start_line="1" end_line="5"><![CDATA[{}]]></fix>"#,
            FIXED.trim_end()
        ),
        r#"<edit line="1" kind="malformed_marker">&lt;&lt;&lt;&lt;&lt; SEARCH path=&quot;a.txt&quot;</edit>"#,
    ] {
        assert!(out.contains(part), "{part}\n{out}");
    }
}

/// An aider block with no file name above it, in a document where no
/// opener has attributes: the help says what aider's format wants, not
/// clada's `path="…"`, in the text, JSON and XML reports, and offers no
/// clada fix. Beside a clada opener, the help is clada's.
#[test]
fn an_aider_block_without_a_file_is_told_in_aiders_words() {
    let dir = tempfile::tempdir().unwrap();
    let aider = "Here:\n\n```python\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n";
    let path = doc(dir.path(), aider);
    let help = "put the file's path on its own line just before the block (or its fence)";
    let (code, text, _) = run(clada().arg("check").arg(&path), None);
    assert_eq!(code, Some(1));
    assert!(
        text.contains("Error: this SEARCH block names no file"),
        "{text}"
    );
    assert!(text.contains(help) && !text.contains("path=\""), "{text}");
    let (code, out) = apply(dir.path(), &path, "json");
    assert_eq!(code, Some(1));
    let d = &json(&out)["diagnostics"][0];
    assert_eq!(d["kind"], "missing_attribute");
    assert!(d["help"].as_str().unwrap().starts_with(help), "{d}");
    assert!(d.get("fix").is_none(), "{d}");
    let (_, xml) = apply(dir.path(), &path, "xml");
    assert!(
        xml.contains(&format!("<help>{}", help.replace('\'', "&apos;"))),
        "{xml}"
    );
    // The file name put where the help says: the block applies.
    std::fs::write(dir.path().join("x.py"), "old\n").unwrap();
    doc(dir.path(), &aider.replace("```python", "x.py\n```python"));
    let (code, out) = apply(dir.path(), &path, "text");
    assert_eq!(code, Some(0), "{out}");
    // Beside an opener with attributes, the document is clada's.
    doc(
        dir.path(),
        "<<<<<<< WRITE path=\"y\"\ny\n>>>>>>> END\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n",
    );
    let (_, text, _) = run(clada().arg("check").arg(&path), None);
    assert!(
        text.contains("Help: add `path=\"…\"` after `SEARCH`"),
        "{text}"
    );
}

/// Blocks with the same outcome share a summary line: its counts are each
/// block's, and the line says so.
#[test]
fn a_shared_summary_line_says_its_counts_are_each_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(
        dir.path(),
        "<<<<<<< SEARCH path=\"a\"\nx\n=======\ny\n>>>>>>> REPLACE\n<<<<<<< SEARCH path=\"b\"\nx\n=======\ny\n>>>>>>> REPLACE\n",
    );
    let (code, out) = apply(dir.path(), &path, "text");
    assert_eq!(code, Some(1));
    assert!(
        out.contains("Blocks 1-2: 0/1 tasks succeeded in each ✗"),
        "{out}"
    );
}

/// A stream's units (and a watched file's, which run the same way) are
/// numbered in the stream in the text report, as in JSON Lines: never
/// `Block 1` and `task-1` again for each unit.
#[test]
fn each_unit_of_a_stream_is_numbered_in_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(
        dir.path(),
        "<<<<<<< WRITE path=\"w1\"\na\n>>>>>>> END\n<<<<<<< WRITE path=\"w2\"\nb\n>>>>>>> END\n\
         <<<<<<< TASKS\n<<<<<<< SEARCH path=\"w1\"\nnope\n=======\nq\n>>>>>>> REPLACE\n\
         <<<<<<< WRITE path=\"w3\"\nz\n>>>>>>> END\n>>>>>>> TASKS\n",
    );
    let root = tempfile::tempdir().unwrap();
    let (code, out, _) = run(
        clada()
            .args(["apply", "--stream", "--no-git", "-C"])
            .arg(root.path())
            .arg(&path),
        None,
    );
    assert_eq!(code, Some(1), "{out}");
    for line in [
        "=== Block 2 ===\n[task-2] ✓ Created w2\n",
        "=== Block 3 ===\n[task-3] ✗ Error: match_count_mismatch in w1",
        "[task-4] ⊘ Skipped (block stopped at task 3)\n",
        "This unit: 0/2 tasks succeeded\nBlock 3: 0/2 tasks succeeded ✗\n",
        "Resend:\n  task 3: failed, fix and send again\n  task 4: not applied, send again as written\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(!out.contains("[task-1] ✓ Created w2"), "{out}");
    assert!(!out.contains("Overall:"), "{out}");
    // JSON Lines say the same task.
    let root = tempfile::tempdir().unwrap();
    let (_, out, _) = run(
        clada()
            .args(["apply", "--stream", "--no-git", "--format", "jsonl", "-C"])
            .arg(root.path())
            .arg(&path),
        None,
    );
    let skipped: Value = out
        .lines()
        .map(json)
        .find(|e| e["status"] == "skipped")
        .unwrap();
    assert_eq!(skipped["number"], 4);
    assert_eq!(skipped["message"], "Skipped (block stopped at task 3)");
}

/// Problems of the document outside any block, found at its start and at
/// its end, are one `=== Document ===` section, not two.
#[test]
fn the_problems_of_the_document_are_one_section() {
    let dir = tempfile::tempdir().unwrap();
    let path = doc(dir.path(), NEAR);
    let (code, out) = apply(dir.path(), &path, "text");
    assert_eq!(code, Some(1));
    assert_eq!(out.matches("=== Document ===").count(), 1, "{out}");
    assert!(out.contains("[no_tasks] Warning"), "{out}");
}

/// A watched file's units are said in the file's name and numbered from
/// the watch's start, as a stream's (the text report of `clada watch`).
#[test]
fn a_watch_names_its_file_and_numbers_its_units_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let (root, home) = (dir.path().join("root"), dir.path().join("home"));
    std::fs::create_dir_all(&root).unwrap();
    let file = doc(
        dir.path(),
        "<<<<<<< WRITE path=\"w1\"\na\n>>>>>>> END\n<<<<<<< WRITE path=\"w2\"\nb\n>>>>>>> END\n",
    );
    let child = clada()
        .args(["watch", "--no-git"])
        .arg(&file)
        .arg("-C")
        .arg(&root)
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::support::eventually("both files written", || root.join("w2").exists());
    // Ctrl-C: the watch ends after the unit it runs, its report printed.
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    for line in [
        "--- unit 1 (line 1 of ",
        "--- unit 2 (line 4 of ",
        "=== Block 2 ===\n[task-2] ✓ Created w2\n",
        "This unit: 1/1 tasks succeeded\nBlock 2: 1/1 tasks succeeded ✓\n",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(out.contains("reply.md) ---"), "{out}");
    assert!(!out.contains("of the stream"), "{out}");
}
