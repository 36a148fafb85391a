//! `clada lsp` in Helix, set up by the README's `languages.toml` exactly as
//! printed: Helix opens a `.clada` file and a Markdown reply in a
//! terminal (`script` gives it one), hovers a task, and quits; its log
//! (`hx -vv --log`) holds every message it exchanged with clada, and the
//! test reads them there. Helix is not packaged where CI runs (Debian 12),
//! so the test runs where `hx` is on `PATH` or `CLADA_HELIX` names it, and
//! is skipped, saying so, elsewhere.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The Helix to drive: `CLADA_HELIX`, else `hx` on `PATH`.
fn helix() -> Option<PathBuf> {
    let hx = std::env::var_os("CLADA_HELIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| "hx".into());
    let out = Command::new(&hx).arg("--version").output().ok()?;
    out.status.success().then_some(hx)
}

/// What `clada` sent Helix, in order: each `clada <- {…}` line of the log.
fn received(log: &str) -> Vec<Value> {
    log.lines()
        .filter_map(|l| l.split_once("clada <- ").map(|(_, json)| json))
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect()
}

/// Opens `file` in Helix under a terminal, goes to line 3, hovers, quits;
/// returns the log.
fn session(hx: &Path, root: &Path, file: &str, runtime: Option<&Path>) -> String {
    let home = root.join("home");
    let config = home.join("config/helix");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("languages.toml"),
        crate::readme::block(&["helix"]).text,
    )
    .unwrap();
    let log = root.join(format!("{file}.log"));
    let bin = insta_cmd::get_cargo_bin("clada");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let line = format!("{} -vv --log {} {file}", hx.display(), log.display());
    let mut cmd = Command::new("script");
    cmd.args(["-qefc", &line, "/dev/null"])
        .current_dir(root)
        .env("PATH", path)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(runtime) = runtime {
        cmd.env("HELIX_RUNTIME", runtime);
    }
    let mut child = cmd.spawn().expect("`script` (util-linux) runs Helix");
    let mut keys = child.stdin.take().unwrap();
    // Time for clada to start and answer, then each key's answer.
    for k in [&b""[..], b":3\r", b" k", b"\x1b:q!\r"] {
        std::thread::sleep(Duration::from_millis(2500));
        let _ = keys.write_all(k).and_then(|()| keys.flush());
    }
    std::thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let _ = child.wait();
    std::fs::read_to_string(&log).unwrap_or_default()
}

#[test]
fn helix_set_up_by_the_readme_receives_diagnostics_and_hover() {
    let Some(hx) = helix() else {
        eprintln!("skipped: no Helix (`hx` on PATH, or CLADA_HELIX)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("tasks.clada"),
        "Edit the app.\n\n<<<<<<< WRITE path=\"hello.txt\" bogus=1\nhi\n>>>>>>> END\n",
    )
    .unwrap();
    std::fs::write(
        root.join("reply.md"),
        "# Notes\n\n    <<<<<<< SEARCH path=\"a.txt\"\n    x\n    =======\n    y\n    >>>>>>> REPLACE\n",
    )
    .unwrap();
    std::fs::write(root.join("a.txt"), "x\n").unwrap();
    let runtime = std::env::var_os("HELIX_RUNTIME").map(PathBuf::from);

    // A `.clada` file: the `clada` language of the snippet.
    let log = session(&hx, root, "tasks.clada", runtime.as_deref());
    let got = received(&log);
    let info = got
        .iter()
        .find_map(|m| m["result"]["serverInfo"]["name"].as_str());
    assert_eq!(info, Some("clada"), "Helix started no clada: {log}");
    let diagnostics = |got: &[Value]| -> Vec<String> {
        got.iter()
            .filter(|m| m["method"] == "textDocument/publishDiagnostics")
            .flat_map(|m| {
                m["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|d| d["code"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(diagnostics(&got), ["unknown_attribute"], "{got:#?}");
    let hover = got
        .iter()
        .find_map(|m| m["result"]["contents"]["value"].as_str())
        .unwrap_or_else(|| panic!("no hover answered: {log}"));
    assert!(hover.contains("will not run"), "{hover}");
    assert!(hover.contains("no attribute `bogus`"), "{hover}");

    // Markdown: clada beside Markdown's own server (absent here, which
    // Helix logs and goes on), the indented block a near miss.
    let log = session(&hx, root, "reply.md", runtime.as_deref());
    let opened = log.contains(r#""languageId":"markdown""#);
    assert!(opened, "Helix sent clada no Markdown document: {log}");
    let got = received(&log);
    let codes = diagnostics(&got);
    assert!(
        !codes.is_empty() && codes.iter().all(|c| c == "malformed_marker"),
        "{got:#?}"
    );
    let said = got.iter().any(|m| {
        m["params"]["diagnostics"][0]["message"]
            .as_str()
            .is_some_and(|t| t.contains("is indented by 4 spaces"))
    });
    assert!(said, "{got:#?}");
}
