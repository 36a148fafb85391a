//! 100 built-in `ls` RUN tasks through `clada apply`, against a shell
//! script running the same 100 commands, in one run.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench run
//! ```

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use clada_benches::{clada_binary, extra_args, median};
use std::time::Instant;

const RUNS: usize = 15;
const COMMANDS: usize = 100;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary();
    let dir = std::env::temp_dir().join(format!("clada-bench-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("scratch directory");
    for i in 0..20 {
        std::fs::write(dir.join(format!("src/file{i}.rs")), "fn main() {}\n").expect("tree");
    }
    let mut doc = String::new();
    let mut script = String::new();
    for _ in 0..COMMANDS {
        doc.push_str("<<<<<<< RUN\nls src\n>>>>>>> END\n");
        let _ = writeln!(script, "ls src");
    }
    std::fs::write(dir.join("doc.md"), doc).expect("document");
    std::fs::write(dir.join("script.sh"), script).expect("script");

    let time = |mut cmd: Command| -> f64 {
        let start = Instant::now();
        let out = cmd
            .current_dir(&dir)
            .stderr(Stdio::null())
            .output()
            .expect("run");
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        assert!(out.status.success(), "{cmd:?} failed");
        assert!(
            out.stdout.len() > COMMANDS * 20,
            "{cmd:?} printed too little"
        );
        ms
    };
    let clada_run = || {
        let mut c = Command::new(&clada);
        c.args(["apply", "--no-prompt", "doc.md"])
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
        if i > 0 {
            c_ms.push(c);
            s_ms.push(s);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (c, s) = (median(c_ms), median(s_ms));
    println!("{COMMANDS} built-in `ls src` commands, {RUNS} runs each");
    println!("sh script.sh   median {s:8.2} ms");
    println!("clada apply    median {c:8.2} ms");
    println!("ratio clada/sh: {:.2}x (target <= 1.5x)", c / s);
}
