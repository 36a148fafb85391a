//! 100 built-in RUN tasks through `clada apply`, carried out inside clada,
//! against a shell script running the same 100 commands with the system's
//! tools, in one run: `ls src`, `cat src/file0.rs`, `grep -rn main src`.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench run
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{clada_binary, extra_args, median};

const RUNS: usize = 15;
const COMMANDS: usize = 100;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("clada-bench-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("scratch directory");
    for i in 0..20 {
        let body = format!("// file {i}\nfn main() {{}}\n{}", "let x = 1;\n".repeat(50));
        std::fs::write(dir.join(format!("src/file{i}.rs")), body).expect("tree");
    }
    println!("{COMMANDS} commands per run, {RUNS} runs each, alternating");
    println!(
        "{:<22} {:>12} {:>12} {:>8}",
        "command", "sh (ms)", "clada (ms)", "ratio"
    );
    for command in ["ls src", "cat src/file0.rs", "grep -rn main src"] {
        let (c, s) = compare(&dir, command);
        println!("{command:<22} {s:>12.2} {c:>12.2} {:>7.2}x", c / s);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Median milliseconds of clada and of `sh`, running `command` 100 times.
fn compare(dir: &Path, command: &str) -> (f64, f64) {
    let mut doc = String::new();
    let mut script = String::new();
    for _ in 0..COMMANDS {
        let _ = write!(doc, "<<<<<<< RUN\n{command}\n>>>>>>> END\n");
        let _ = writeln!(script, "{command}");
    }
    std::fs::write(dir.join("doc.md"), doc).expect("document");
    std::fs::write(dir.join("script.sh"), script).expect("script");
    let clada = clada_binary();
    let time = |mut cmd: Command| -> f64 {
        let start = Instant::now();
        let out = cmd
            .current_dir(dir)
            .stderr(Stdio::null())
            .output()
            .expect("run");
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        assert!(out.status.success(), "{cmd:?} failed");
        assert!(
            out.stdout.len() > COMMANDS * 10,
            "{cmd:?} printed too little"
        );
        ms
    };
    let clada_run = || {
        let mut c = Command::new(&clada);
        c.args(["apply", "--no-prompt", "--no-git", "doc.md"])
            .args(extra_args());
        time(c)
    };
    let sh_run = || {
        let mut c = Command::new("sh");
        c.arg("script.sh");
        time(c)
    };
    let (mut c_ms, mut s_ms) = (Vec::new(), Vec::new());
    for i in 0..=RUNS {
        let (c, s) = if i % 2 == 0 {
            let c = clada_run();
            (c, sh_run())
        } else {
            let s = sh_run();
            (clada_run(), s)
        };
        // The first pair warms the caches.
        if i > 0 {
            c_ms.push(c);
            s_ms.push(s);
        }
    }
    (median(c_ms), median(s_ms))
}
