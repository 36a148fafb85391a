//! The README as written. Every fenced block is preceded by a line
//! `<!-- readme-test: KIND ARGS (why) -->` that says how it is tested, and
//! a block without one fails: a README change that breaks a snippet, or
//! adds one nobody tests, fails here.
//!
//! Kinds: `shell NAME` (each line run with bash, as printed, in a scratch
//! copy of `examples/` with a fresh home, `clada` on the PATH and a `cargo`
//! that runs the clada under test; a line ending `# prints X` must print
//! X); `output NAME N` (what line N of shell block NAME printed);
//! `document DIALECT TASKS` (`clada check` reads it so); `excerpt CASE`
//! (consecutive lines of what clada prints in a case set up below);
//! `abridged CASE` (JSON that clada prints, with fields and array items
//! left out and strings cut with `...`); `mcp-config` (the server it
//! registers answers `initialize`); `neovim-0.7` (run by a headless Neovim
//! in `neovim.rs`); `lua`, `json`, `helix` (checked as Lua, JSON, and
//! Helix's `languages.toml`); `rust` (a doctest of clada-markers, which
//! includes the README); `python commands|output|agent-loop` (the Python
//! section, run as printed by `clada-py/tests/test_readme.py`, which this
//! test holds to the section and the block's language); `node
//! commands|output|agent-loop` (the Node section, the same way, by
//! `clada-node/test/readme.test.mjs`); `not-run (why)`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A fenced block of the README.
#[derive(Debug)]
pub(crate) struct Block {
    /// The line of its opening fence (1-based).
    pub(crate) line: usize,
    /// The marker's words: the kind, then its arguments.
    pub(crate) words: Vec<String>,
    /// The fence's info string (`sh`, `text`, `rust no_run`…).
    pub(crate) info: String,
    pub(crate) text: String,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The fenced blocks of README.md, each with the marker line before it
/// (empty words when there is none).
pub(crate) fn blocks() -> Vec<Block> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let ticks = lines[i].len() - lines[i].trim_start_matches('`').len();
        if ticks < 3 {
            i += 1;
            continue;
        }
        let fence = &lines[i][..ticks];
        let info = lines[i][ticks..].trim().to_owned();
        let close = (i + 1..lines.len())
            .find(|&j| lines[j].trim_end() == fence)
            .unwrap_or_else(|| panic!("README.md:{}: a fence that never closes", i + 1));
        let words = i
            .checked_sub(1)
            .and_then(|p| lines[p].strip_prefix("<!-- readme-test: "))
            .and_then(|m| m.strip_suffix(" -->"))
            .map(|m| {
                // The reason in parentheses is for people.
                let m = m.split(" (").next().unwrap_or(m);
                m.split_whitespace().map(str::to_owned).collect()
            })
            .unwrap_or_default();
        let mut text = lines[i + 1..close].join("\n");
        text.push('\n');
        out.push(Block {
            line: i + 1,
            words,
            info,
            text,
        });
        i = close + 1;
    }
    out
}

/// The README's block marked `KIND NAME…`.
pub(crate) fn block(words: &[&str]) -> Block {
    blocks()
        .into_iter()
        .find(|b| b.words == words)
        .unwrap_or_else(|| panic!("README.md has no block marked {words:?}"))
}

fn clada_bin() -> PathBuf {
    insta_cmd::get_cargo_bin("clada")
}

fn clada() -> Command {
    Command::new(clada_bin())
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The `cargo` the shell blocks find first: what the README asks of cargo,
/// done without building anything (this test runs inside `cargo test`).
const CARGO_SHIM: &str = r#"#!/bin/sh
case "$*" in
  # The quick start: the clada under test.
  "run -q --locked -p clada-cli -- "*) shift 6; exec clada "$@" ;;
  # This very run.
  "test --workspace --locked") exit 0 ;;
  # A release build takes minutes: checked as written, not run.
  "install --locked --path clada-cli --target $(rustc --print host-tuple) --config .cargo/static.toml") exit 0 ;;
  # Reads the lock file: cargo's own, in the repository.
  "tree "*) cd "$CLADA_REPO" && exec "$CLADA_CARGO" "$@" ;;
  *) echo "the README test does not know \`cargo $*\`: mark its block" >&2; exit 97 ;;
esac
"#;

/// A scratch directory for shell blocks: a copy of `examples/`, `reply.md`
/// (the tour), a home with `project/` in it, and a `cargo` of its own.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        copy(&repo().join("examples"), &dir.path().join("examples"));
        std::fs::copy(repo().join("examples/tour.md"), dir.path().join("reply.md")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/project")).unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("cargo"), CARGO_SHIM).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(bin.join("cargo"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        Scratch { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Runs one line with bash: its exit code and standard output.
    fn run(&self, line: &str) -> (Option<i32>, String, String) {
        let path = format!(
            "{}:{}:{}",
            self.dir.path().join("bin").display(),
            clada_bin().parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("bash")
            .args(["-c", line])
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("HOME", self.home())
            .env("NO_COLOR", "1")
            .env("CLADA_REPO", repo())
            .env(
                "CLADA_CARGO",
                std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            )
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// The commands of a shell block: its lines that are not blank or comments.
fn commands(b: &Block) -> Vec<&str> {
    b.text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect()
}

/// Runs every shell block, each in a scratch directory of its own: what
/// each line printed, by block name.
fn run_shell_blocks(blocks: &[Block]) -> HashMap<String, Vec<String>> {
    let mut printed = HashMap::new();
    for b in blocks.iter().filter(|b| b.words[0] == "shell") {
        let name = &b.words[1];
        let scratch = Scratch::new();
        let mut outputs = Vec::new();
        for line in commands(b) {
            let (code, stdout, stderr) = scratch.run(line);
            assert_eq!(
                code,
                Some(0),
                "README.md:{} ({name}): `{line}` failed:\n{stdout}\n{stderr}",
                b.line
            );
            if let Some((_, expected)) = line.rsplit_once("# prints ") {
                assert_eq!(
                    stdout.trim(),
                    expected.trim(),
                    "README.md:{}: `{line}`",
                    b.line
                );
            }
            outputs.push(stdout);
        }
        if name == "install" {
            // Into a folder a fresh home does not have: made first.
            let completions = scratch
                .home()
                .join(".local/share/bash-completion/completions/clada");
            let script = std::fs::read_to_string(completions).unwrap();
            assert!(script.contains("_clada()"), "{script}");
            let man = std::fs::read_to_string(scratch.dir.path().join("clada.1")).unwrap();
            assert!(man.starts_with(".TH"), "{man}");
        }
        printed.insert(name.clone(), outputs);
    }
    printed
}

/// What clada prints in the cases the README shows: a copy of the example
/// project, a document, the flags.
fn case(name: &str) -> String {
    let project = tempfile::tempdir().unwrap();
    copy(&repo().join("examples/project"), project.path());
    let typo = "<<<<<<< SEARCH path=\"src/greet.py\"\ndef greet(name):\n    print(\"Hello \" + name)\n=======\ndef greet(name):\n    print(\"Hi, \" + name)\n>>>>>>> REPLACE\n";
    let fine = "<<<<<<< WRITE path=\"new.txt\"\nnew\n>>>>>>> END\n";
    let missing = |n: usize| {
        format!("<<<<<<< SEARCH path=\"notes.txt\"\nabsent {n}\n=======\nx\n>>>>>>> REPLACE\n")
    };
    let (doc, flags): (String, &[&str]) = match name {
        "typo" => (typo.to_owned(), &[]),
        "typo-json" => (format!("{typo}{fine}"), &["--format", "json"]),
        // Block 3's opener on line 23.
        "escape" => {
            let mut doc = String::from(fine);
            doc += "<<<<<<< WRITE path=\"two.txt\"\ntwo\n>>>>>>> END\n";
            while doc.lines().count() < 22 {
                doc += "Prose between the blocks.\n";
            }
            doc += "<<<<<<< EDIT path=\"/etc/passwd\"\nroot\n=======\nme\n>>>>>>> REPLACE\n";
            (doc, &[])
        }
        // A TASKS block whose second task was applied before and whose
        // third fails, stopping it; then two failures and a command nobody
        // approved.
        "resend" => (
            format!(
                "<<<<<<< TASKS\n{fine}{}{}<<<<<<< WRITE path=\"later.txt\"\nx\n>>>>>>> END\n>>>>>>> TASKS\n{}{}{}",
                "<<<<<<< SEARCH path=\"src/greet.py\"\ndef greet(name):\n    print(\"Hi, \" + name)\n=======\ndef greet(name):\n    print(\"Hello, \" + name)\n>>>>>>> REPLACE\n",
                missing(3),
                missing(5),
                missing(6),
                "<<<<<<< RUN\nnpm test\n>>>>>>> END\n"
            ),
            &[],
        ),
        "dry-run" => (
            "<<<<<<< SEARCH path=\"src/greet.py\"\ndef greet(name):\n=======\ndef greet(name):  # changed\n>>>>>>> REPLACE\n".to_owned(),
            &["--dry-run"],
        ),
        "diff" => (
            "<<<<<<< SEARCH path=\"src/greet.py\"\ndef greet(name):\n=======\ndef greet(name):  # changed\n>>>>>>> REPLACE\n".to_owned(),
            &["--diff"],
        ),
        _ => panic!("no README case `{name}`"),
    };
    std::fs::write(project.path().join("reply.md"), doc).unwrap();
    let out = clada()
        .args(["apply", "--no-git", "reply.md"])
        .args(flags)
        .current_dir(project.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // The README's project is /home/me/project.
    let root = std::fs::canonicalize(project.path()).unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .replace(root.to_str().unwrap(), "/home/me/project")
}

/// `text` without white space at line ends, which a README does not keep
/// (ariadne's excerpts have some).
fn trimmed(text: &str) -> String {
    text.lines()
        .map(|l| l.trim_end().to_owned() + "\n")
        .collect()
}

/// Whether `shown` is `actual` abridged: every field it has, with the same
/// value; array items in order, some left out; a string ending `...` the
/// start of the actual one; `duration_ms` any number.
fn abridges(shown: &Value, actual: &Value, at: &str) -> Result<(), String> {
    match (shown, actual) {
        (Value::Object(s), Value::Object(a)) => s.iter().try_for_each(|(k, v)| {
            let at = format!("{at}.{k}");
            match a.get(k) {
                None => Err(format!("{at}: not in clada's report")),
                Some(_) if k == "duration_ms" => Ok(()),
                Some(av) => abridges(v, av, &at),
            }
        }),
        (Value::Array(s), Value::Array(a)) => {
            let mut rest = a.iter();
            for (i, v) in s.iter().enumerate() {
                let at = format!("{at}[{i}]");
                if !rest.any(|av| abridges(v, av, &at).is_ok()) {
                    // Why the item in the same place differs, if there is one.
                    return Err(match a.get(i) {
                        Some(av) => abridges(v, av, &at).err().unwrap_or_default(),
                        None => format!("{at}: no such item in clada's report"),
                    });
                }
            }
            Ok(())
        }
        (Value::String(s), Value::String(a)) => match s.strip_suffix("...") {
            Some(start) if a.starts_with(start) => Ok(()),
            _ if s == a => Ok(()),
            _ => Err(format!("{at}: {s:?} where clada prints {a:?}")),
        },
        _ if shown == actual => Ok(()),
        _ => Err(format!("{at}: {shown} where clada prints {actual}")),
    }
}

/// Checks a Helix `languages.toml` against Helix's configuration format
/// (helix-core/src/syntax/config.rs: a language has `name`, and a language
/// Helix does not know `scope` and `file-types`; a language server,
/// `command`; `language-servers` name servers).
fn check_helix(text: &str) {
    let doc: toml_edit::Document<String> = text.parse().unwrap();
    let servers = doc["language-server"].as_table_like().unwrap();
    for (name, server) in servers.iter() {
        let command = server.get("command").and_then(|c| c.as_str());
        assert!(command.is_some(), "language server {name} has no command");
    }
    let clada = &doc["language-server"]["clada"];
    assert_eq!(clada["command"].as_str(), Some("clada"));
    let args: Vec<&str> = clada["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert_eq!(args, ["lsp"]);
    let languages = doc["language"].as_array_of_tables().unwrap();
    for l in languages.iter() {
        let name = l["name"].as_str().unwrap();
        if name != "markdown" {
            assert!(l["scope"].is_str(), "{name}: scope");
            assert!(l["file-types"].is_array(), "{name}: file-types");
        }
        let used: Vec<&str> = l["language-servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s.as_str())
            .collect();
        assert!(used.contains(&"clada"), "{name} does not use clada");
        for s in used {
            // marksman is one of Helix's own.
            assert!(s == "marksman" || servers.contains_key(s), "{name}: {s}");
        }
    }
}

#[test]
fn every_readme_block_is_tested_as_written() {
    let blocks = blocks();
    let known = [
        "shell",
        "output",
        "document",
        "excerpt",
        "abridged",
        "mcp-config",
        "neovim-0.7",
        "lua",
        "json",
        "helix",
        "rust",
        "python",
        "node",
        "not-run",
    ];
    for b in &blocks {
        assert!(
            b.words.first().is_some_and(|k| known.contains(&k.as_str())),
            "README.md:{}: a block without `<!-- readme-test: KIND -->` before it (kinds: {known:?})",
            b.line
        );
        // rustdoc compiles every block whose info string is not another
        // language: only those marked `rust` may be Rust.
        let rust = b.info.is_empty() || b.info.starts_with("rust");
        assert_eq!(
            rust,
            b.words[0] == "rust",
            "README.md:{}: ```{} (rustdoc compiles it as Rust: mark it `rust`, or give its language)",
            b.line,
            b.info
        );
    }
    let printed = run_shell_blocks(&blocks);
    for b in &blocks {
        let at = format!("README.md:{}", b.line);
        let w: Vec<&str> = b.words.iter().map(String::as_str).collect();
        match w.as_slice() {
            ["shell", _] | ["not-run"] | ["neovim-0.7"] => {}
            ["output", name, n] => {
                let n: usize = n.parse().unwrap();
                let out = &printed[*name][n - 1];
                assert_eq!(&b.text, out, "{at}: what `{name}` line {n} prints");
            }
            ["document", dialect, tasks] => {
                let mut child = clada()
                    .args(["check", "--format", "json"])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                use std::io::Write as _;
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(b.text.as_bytes())
                    .unwrap();
                let out = child.wait_with_output().unwrap();
                let report: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(report["ok"], true, "{at}: {report}");
                assert_eq!(report["dialect"], *dialect, "{at}");
                assert_eq!(
                    report["summary"]["tasks"],
                    tasks.parse::<u64>().unwrap(),
                    "{at}"
                );
            }
            ["excerpt", name] => {
                let out = case(name);
                assert!(
                    trimmed(&out).contains(&trimmed(&b.text)),
                    "{at}: not what clada prints in case `{name}`:\n{out}"
                );
            }
            ["abridged", name] => {
                let shown: Value = serde_json::from_str(&b.text).unwrap();
                let actual: Value = serde_json::from_str(&case(name)).unwrap();
                if let Err(e) = abridges(&shown, &actual, "") {
                    panic!("{at}: {e}\nclada prints:\n{actual:#}");
                }
            }
            ["mcp-config"] => {
                let root = tempfile::tempdir().unwrap();
                let config: Value = serde_json::from_str(&b.text).unwrap();
                let server = &config["mcpServers"]["clada"];
                assert_eq!(server["command"], "clada", "{at}");
                let args: Vec<String> = server["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        let a = a.as_str().unwrap();
                        a.replace("/path/to/project", root.path().to_str().unwrap())
                    })
                    .collect();
                let out = clada()
                    .args(&args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .and_then(|mut c| {
                        use std::io::Write as _;
                        let mut stdin = c.stdin.take().unwrap();
                        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "readme", "version": "0"}}}))?;
                        drop(stdin);
                        c.wait_with_output()
                    })
                    .unwrap();
                let answer: Value =
                    serde_json::from_slice(out.stdout.split(|&b| b == b'\n').next().unwrap())
                        .unwrap();
                assert_eq!(answer["result"]["serverInfo"]["name"], "clada", "{at}");
            }
            ["json"] => {
                serde_json::from_str::<Value>(&b.text)
                    .unwrap_or_else(|e| panic!("{at}: not JSON: {e}"));
            }
            ["helix"] => check_helix(&b.text),
            ["lua"] => check_lua(&b.text, &at),
            ["rust"] => {
                let lib = std::fs::read_to_string(repo().join("clada-markers/src/lib.rs")).unwrap();
                assert!(
                    lib.contains("#[doc = include_str!(\"../../README.md\")]"),
                    "{at}: clada-markers no longer compiles the README's Rust"
                );
            }
            ["python", what] => check_python(b, what, &at),
            ["node", what] => check_node(b, what, &at),
            _ => panic!("{at}: a marker with the wrong arguments: {w:?}"),
        }
    }
}

/// Checks Lua's syntax with Neovim's LuaJIT, where Neovim is installed
/// (CI installs it).
fn check_lua(text: &str, at: &str) {
    if Command::new("nvim").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI checks the README's Lua with Neovim: install it (see .ci/run)"
        );
        eprintln!("{at}: not checked: no nvim");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("snippet.lua");
    std::fs::write(&file, text).unwrap();
    let check = format!(
        "lua local f, e = loadfile([[{}]]); if not f then io.stderr:write(e) vim.cmd('cquit 3') end",
        file.display()
    );
    let out = Command::new("nvim")
        .args([
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-c",
            &check,
            "-c",
            "qa!",
        ])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{at}: not Lua: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A block of the Python section, which the package's tests run as
/// printed (`.ci/run` builds the package first): the block is in the
/// section `clada-py/tests/test_readme.py` reads, and that file takes
/// blocks of its language from it.
fn check_python(b: &Block, what: &str, at: &str) {
    let language = match what {
        "commands" => "sh",
        "output" => "text",
        "agent-loop" => "python",
        _ => panic!("{at}: `python {what}`: commands, output or agent-loop"),
    };
    check_door(
        b,
        language,
        "clada-py/tests/test_readme.py",
        "SECTION = \"",
        at,
    );
}

/// A block of the Node section, which the package's tests run as
/// printed (`.ci/run` builds the package first), as for Python.
fn check_node(b: &Block, what: &str, at: &str) {
    let language = match what {
        "commands" => "sh",
        "output" => "text",
        "agent-loop" => "ts",
        _ => panic!("{at}: `node {what}`: commands, output or agent-loop"),
    };
    check_door(
        b,
        language,
        "clada-node/test/readme.test.mjs",
        "const SECTION = \"",
        at,
    );
}

/// The block is in the section that `test_file` (which names it on its
/// line starting `section_line`) reads, in `language`, and that file takes
/// blocks of that language from it.
fn check_door(b: &Block, language: &str, test_file: &str, section_line: &str, at: &str) {
    let tests = std::fs::read_to_string(repo().join(test_file)).unwrap();
    let heading = tests
        .lines()
        .find_map(|l| l.strip_prefix(section_line))
        .and_then(|l| l.trim_end_matches(';').strip_suffix('"'))
        .unwrap_or_else(|| panic!("{at}: {test_file} names no SECTION"));
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == heading)
        .unwrap_or_else(|| panic!("{at}: README.md has no heading {heading:?}"));
    let end = (start + 1..lines.len())
        .find(|&i| lines[i].starts_with("## "))
        .unwrap_or(lines.len());
    assert!(
        (start..end).contains(&(b.line - 1)),
        "{at}: outside {heading:?}, where {test_file} reads"
    );
    assert_eq!(b.info, language, "{at}");
    assert!(
        tests.contains(&format!("fenced(section(), \"{language}\")")),
        "{at}: {test_file} reads no ```{language} block"
    );
}
