//! `clada lsp` in a real editor: a headless Neovim, set up by the README's
//! snippet for Neovim 0.7 to 0.10 (Debian's is 0.7.2), opens a Markdown
//! reply and a `.clada` file; `tests/neovim.lua` writes down the
//! diagnostics, hover and symbols the editor received. Skipped, saying so,
//! where `nvim` is not installed; `.ci/run` installs Debian's.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn nvim_version() -> Option<String> {
    let out = Command::new("nvim").arg("--version").output().ok()?;
    String::from_utf8(out.stdout)
        .ok()?
        .lines()
        .next()
        .map(str::to_owned)
}

#[test]
fn a_headless_neovim_receives_diagnostics_hover_and_symbols() {
    let Some(version) = nvim_version() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs the editor test: install Neovim (see .ci/run)"
        );
        eprintln!("skipped: no nvim");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("app.py"), "x = 1\ny = 2\n").unwrap();
    // Task 1 applies, task 2 would fail against the root, and the last
    // opener is indented (a near miss).
    std::fs::write(
        root.join("reply.md"),
        "Two edits:\n\n<<<<<<< SEARCH path=\"app.py\"\nx = 1\n=======\nx = 10\n>>>>>>> REPLACE\n\n\
         <<<<<<< SEARCH path=\"app.py\"\ny = 5\n=======\ny = 6\n>>>>>>> REPLACE\n\n\
         - and a third:\n\n  <<<<<<< WRITE path=\"notes.txt\"\n",
    )
    .unwrap();
    std::fs::write(root.join("tasks.clada"), "<<<<<<< WRITE\nhi\n>>>>>>> END\n").unwrap();
    let init = root.join("init.lua");
    std::fs::write(&init, crate::readme::block(&["neovim-0.7"]).text).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/neovim.lua");
    let report = root.join("received.json");
    let home = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}",
        insta_cmd::get_cargo_bin("clada")
            .parent()
            .unwrap()
            .display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("nvim")
        .arg("--headless")
        .arg("-u")
        .arg(&init)
        .args(["-i", "NONE", "--noplugin", "-c"])
        .arg(format!("luafile {}", script.display()))
        .current_dir(root)
        .env("PATH", path)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CACHE_HOME", home.path().join("cache"))
        .env("CLADA_NVIM_OUT", &report)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{version} did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = child.wait_with_output().unwrap().stderr;
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_else(|e| {
        panic!(
            "{version} wrote nothing ({e}): {}",
            String::from_utf8_lossy(&stderr)
        )
    }))
    .unwrap();
    assert_eq!(got.get("error"), None, "{version}: {got:#}");
    assert_eq!(got["filetype"], "markdown");
    assert_eq!(got["clada_filetype"], "clada", "the snippet's autocmd");
    assert_eq!(got["clients"], 1, "one client for both buffers");

    // The near miss, and the task that would fail (once settled).
    let ds = got["diagnostics"].as_array().unwrap();
    let seen: Vec<(i64, i64, &str)> = ds
        .iter()
        .map(|d| {
            (
                d["lnum"].as_i64().unwrap(),
                d["severity"].as_i64().unwrap(),
                d["code"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [(8, 2, "match_count_mismatch"), (16, 1, "malformed_marker")],
        "{got:#}"
    );
    assert!(ds.iter().all(|d| d["source"] == "clada"));
    let warning = ds[0]["message"].as_str().unwrap();
    assert!(warning.contains("would fail against the root"), "{warning}");

    // Hover on task 1: what it would do, with the diff.
    let hover = got["hover"].as_str().unwrap();
    assert!(hover.contains("Would edit app.py"), "{hover}");
    assert!(hover.contains("-x = 1\n+x = 10"), "{hover}");

    assert_eq!(
        got["symbols"],
        serde_json::json!(["task 1: edit app.py", "task 2: edit app.py"])
    );
    let missing = got["clada_diagnostics"][0]["code"].as_str().unwrap();
    assert_eq!(missing, "missing_attribute", "{got:#}");

    // Closing: a request after `shutdown` is refused (InvalidRequest), and
    // the server exits 0 on `exit`.
    assert_eq!(
        got["closing"],
        serde_json::json!({"before": "answered", "shutdown": "answered", "after": -32600, "exit_code": 0}),
        "{got:#}"
    );
}
