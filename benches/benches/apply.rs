//! `clada apply` of 2,000 SEARCH edits over 200 files of 2,000 lines,
//! against `git apply` of the same change as a unified diff, in one run.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench apply
//! ```
//!
//! Three ways, side by side: `git apply`, `clada apply --no-git`, and
//! `clada apply` in a git repository with uncommitted changes (so it makes
//! both its commits). Each run gets a fresh copy of the tree (made before
//! the clock starts); the order rotates, and the medians, their ratios and
//! the cost of the two commits are reported. After each run the tree is
//! compared with the expected result.

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
    let alone = scratch.join("standalone.md");
    let patch = scratch.join("edits.diff");
    std::fs::write(&doc, &fx.document).expect("write document");
    std::fs::write(&alone, clada_benches::standalone(&fx.document)).expect("write document");
    std::fs::write(&patch, &fx.diff).expect("write diff");

    // The tree once as plain files and once as a git repository with the
    // files committed and one file changed since (so that both commits,
    // before and after, are made).
    let plain = scratch.join("plain");
    for (path, text) in &fx.files {
        let p = plain.join(path);
        std::fs::create_dir_all(p.parent().unwrap_or(&plain)).expect("tree");
        std::fs::write(p, text).expect("tree");
    }
    let repo = scratch.join("repo");
    copy(&plain, &repo);
    let git = |dir: &Path, args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .status()
            .expect("git");
        assert!(ok.success(), "git {args:?}");
    };
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "commit",
            "-q",
            "-m",
            "tree",
        ],
    );
    std::fs::write(repo.join("README"), "changed since the last commit\n").expect("dirty");

    let fresh = |from: &Path, name: &str| -> PathBuf {
        let dir = scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        copy(from, &dir);
        if dir.join(".git").exists() {
            // A copy has new inodes: refresh the index's file stamps, as
            // they would be in a working repository.
            git(&dir, &["status", "--porcelain"]);
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
    let clada_doc = |dir: &Path, git: bool, doc: &Path| {
        let mut c = Command::new(&clada);
        c.arg("apply").args(extra_args());
        if !git {
            c.arg("--no-git");
        }
        c.arg("-C").arg(dir).arg(doc);
        time(c)
    };
    let clada_run = |dir: &Path, git: bool| clada_doc(dir, git, &doc);
    let git_apply = |dir: &Path| {
        let mut c = Command::new("git");
        c.arg("apply").arg(&patch).current_dir(dir);
        time(c)
    };
    // What clada does with git, done with the git CLI: commit what is
    // uncommitted, apply, commit the change.
    let git_cli = |dir: &Path| {
        let step = |args: &[&str]| {
            let mut c = Command::new("git");
            c.args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
                .args(args)
                .current_dir(dir);
            time(c)
        };
        step(&["add", "-A"])
            + step(&["commit", "-q", "-m", "before"])
            + git_apply(dir)
            + step(&["add", "-A"])
            + step(&["commit", "-q", "-m", "after"])
    };

    let mut cli_ms = Vec::new();
    let (mut g_ms, mut c_ms, mut cg_ms, mut s_ms) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..=RUNS {
        let (a, b, c, d) = (
            fresh(&plain, "git-apply"),
            fresh(&plain, "clada"),
            fresh(&repo, "clada-git"),
            fresh(&plain, "clada-standalone"),
        );
        // Rotate the order; the first round warms the caches.
        let mut times = [0.0; 4];
        for k in 0..4 {
            match (i + k) % 4 {
                0 => times[0] = git_apply(&a),
                1 => times[1] = clada_run(&b, false),
                2 => times[2] = clada_run(&c, true),
                _ => times[3] = clada_doc(&d, false, &alone),
            }
        }
        verify(&a, "git apply");
        verify(&b, "clada --no-git");
        verify(&c, "clada with git");
        verify(&d, "clada --no-git, standalone units");
        let e = fresh(&repo, "git-cli");
        let cli = git_cli(&e);
        verify(&e, "the git CLI");
        if i > 0 {
            g_ms.push(times[0]);
            c_ms.push(times[1]);
            cg_ms.push(times[2]);
            s_ms.push(times[3]);
            cli_ms.push(cli);
        }
    }
    let commits = Command::new("git")
        .args(["rev-list", "--count", "HEAD"])
        .current_dir(scratch.join("clada-git"))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&scratch);
    let (g, c, cg, s) = (median(g_ms), median(c_ms), median(cg_ms), median(s_ms));
    println!("2000 SEARCH edits over 200 files of 2000 lines, {RUNS} runs each");
    println!("git apply              median {g:8.2} ms");
    println!(
        "clada apply --no-git   median {c:8.2} ms   ratio to git apply {:.2}x (target <= 2x)",
        c / g
    );
    println!(
        "clada, standalone units median {s:8.2} ms   ratio to git apply {:.2}x (target <= 1.3x)",
        s / g
    );
    println!(
        "clada apply (git on)   median {cg:8.2} ms   ratio to git apply {:.2}x",
        cg / g
    );
    println!(
        "the two commits (before and after) cost {:.2} ms (commits in the repository: {commits})",
        cg - c
    );
    let cli = median(cli_ms);
    println!(
        "git CLI: add, commit, apply, add, commit   median {cli:8.2} ms; clada with git / git CLI {:.2}x (target <= 1.0x)",
        cg / cli
    );
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("copy");
    for e in std::fs::read_dir(from).expect("copy").flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            copy(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}
