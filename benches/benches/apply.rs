//! `clada apply` of 2,000 SEARCH edits over 200 files of 2,000 lines,
//! against `git apply` of the same change as a unified diff, in one run.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench apply
//! ```
//!
//! Each run gets a fresh copy of the tree (made before the clock starts);
//! the two tools alternate, and the medians and their ratio are reported.
//! After each run the tree is compared with the expected result.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::{clada_binary, edit_fixture, extra_args, median};

const RUNS: usize = 11;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary();
    let fx = edit_fixture(200, 2000, 2000);
    let scratch = std::env::temp_dir().join(format!("clada-bench-apply-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let doc = scratch.join("edits.md");
    let patch = scratch.join("edits.diff");
    std::fs::write(&doc, &fx.document).expect("write document");
    std::fs::write(&patch, &fx.diff).expect("write diff");

    let fresh = |name: &str| -> PathBuf {
        let dir = scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in &fx.files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap_or(&dir)).expect("tree");
            std::fs::write(p, text).expect("tree");
        }
        dir
    };
    let verify = |dir: &Path, who: &str| {
        for (path, text) in &fx.changed {
            let got = std::fs::read_to_string(dir.join(path)).unwrap_or_default();
            assert!(&got == text, "{who} left {path} wrong");
        }
    };
    let time = |mut cmd: Command| -> f64 {
        let start = Instant::now();
        let status = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run");
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        assert!(status.success(), "{cmd:?} failed");
        ms
    };
    let clada_run = |dir: &Path| {
        let mut c = Command::new(&clada);
        c.arg("apply")
            .args(extra_args())
            .arg("-C")
            .arg(dir)
            .arg(&doc);
        time(c)
    };
    let git_run = |dir: &Path| {
        let mut c = Command::new("git");
        c.arg("apply").arg(&patch).current_dir(dir);
        time(c)
    };

    let (mut c_ms, mut g_ms) = (Vec::new(), Vec::new());
    for i in 0..RUNS + 1 {
        let (a, b) = (fresh("clada"), fresh("git"));
        // Alternate which goes first; the first round warms the caches.
        let (c, g) = if i % 2 == 0 {
            let c = clada_run(&a);
            (c, git_run(&b))
        } else {
            let g = git_run(&b);
            (clada_run(&a), g)
        };
        verify(&a, "clada");
        verify(&b, "git apply");
        if i > 0 {
            c_ms.push(c);
            g_ms.push(g);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let (c, g) = (median(c_ms), median(g_ms));
    println!("2000 SEARCH edits over 200 files of 2000 lines, {RUNS} runs each");
    println!("git apply      median {g:8.2} ms");
    println!("clada apply    median {c:8.2} ms");
    println!("ratio clada/git: {:.2}x (target <= 2x)", c / g);
}
