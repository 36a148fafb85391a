//! Real history through `--dialect udiff`, against `git apply`, in one run:
//! each of the last COUNT commits of a repository's first-parent history,
//! its `git diff PARENT COMMIT` applied to the parent's files by `git apply`
//! and by `clada apply --dialect udiff --no-git`, each a process on a fresh
//! copy (made before the clock starts); the totals over all commits are
//! compared, median of the rounds.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! CLADA_REPLAY_GIT_DIR=/path/to/repo/.git cargo bench -p clada-benches --bench replay
//! ```
//!
//! `CLADA_BIN` names another binary, such as the static one the README
//! installs (benches/README.md gives the command).
//!
//! `CLADA_REPLAY_REV` (HEAD) and `CLADA_REPLAY_COUNT` (600) choose the
//! commits. Each round checks that clada left the same bytes as `git apply`
//! wherever it applied the whole diff, and counts where it did not.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clada_benches::replay::{Case, case, commits, read_tree, write_tree};
use clada_benches::{clada_binary, median};

const ROUNDS: usize = 5;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(repo) = std::env::var_os("CLADA_REPLAY_GIT_DIR").map(PathBuf::from) else {
        eprintln!("set CLADA_REPLAY_GIT_DIR to a repository's git directory to replay its history");
        return;
    };
    let rev = std::env::var("CLADA_REPLAY_REV").unwrap_or_else(|_| "HEAD".into());
    let count = std::env::var("CLADA_REPLAY_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let clada = clada_binary();
    let ids = commits(&repo, &rev, count).expect("commits");
    let cases: Vec<Case> = ids
        .iter()
        .filter_map(|id| case(&repo, id).ok().flatten())
        .collect();
    let scratch = std::env::temp_dir().join(format!("clada-bench-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    for (i, c) in cases.iter().enumerate() {
        let dir = scratch.join(format!("{i}"));
        std::fs::create_dir_all(&dir).expect("scratch");
        std::fs::write(dir.join("patch.diff"), &c.patch).expect("patch");
    }
    let time = |mut cmd: Command| -> (f64, bool) {
        let start = Instant::now();
        let ok = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        (start.elapsed().as_secs_f64() * 1000.0, ok)
    };
    let git_apply = |dir: &Path, patch: &Path| {
        let mut c = Command::new("git");
        c.args(["apply", "--whitespace=nowarn"])
            .arg(patch)
            .current_dir(dir)
            .env("GIT_CEILING_DIRECTORIES", &scratch);
        time(c)
    };
    let clada_apply = |dir: &Path, patch: &Path| {
        let mut c = Command::new(&clada);
        c.args(["apply", "--dialect", "udiff", "--no-git", "-C"])
            .arg(dir)
            .arg(patch);
        time(c)
    };
    let (mut g_totals, mut c_totals) = (Vec::new(), Vec::new());
    let (mut same, mut differ, mut clada_failed, mut git_failed) = (0, 0, 0, 0);
    for round in 0..=ROUNDS {
        // Fresh trees for both, before the clock.
        for (i, c) in cases.iter().enumerate() {
            let dir = scratch.join(format!("{i}"));
            write_tree(&dir.join("git"), &c.before).expect("tree");
            write_tree(&dir.join("clada"), &c.before).expect("tree");
        }
        let (mut g, mut cl) = (0.0, 0.0);
        for i in 0..cases.len() {
            let dir = scratch.join(format!("{i}"));
            let patch = dir.join("patch.diff");
            // Alternate which runs first.
            let (gr, cr) = if (i + round) % 2 == 0 {
                let a = git_apply(&dir.join("git"), &patch);
                (a, clada_apply(&dir.join("clada"), &patch))
            } else {
                let b = clada_apply(&dir.join("clada"), &patch);
                (git_apply(&dir.join("git"), &patch), b)
            };
            g += gr.0;
            cl += cr.0;
            if round == 0 {
                match (gr.1, cr.1) {
                    (true, true)
                        if read_tree(&dir.join("git")) == read_tree(&dir.join("clada")) =>
                    {
                        same += 1;
                    }
                    (true, true) => differ += 1,
                    (true, false) => clada_failed += 1,
                    (false, _) => git_failed += 1,
                }
            }
        }
        // The first round warms the caches.
        if round > 0 {
            g_totals.push(g);
            c_totals.push(cl);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let (g, c) = (median(g_totals), median(c_totals));
    println!(
        "{} commits of {} ending at {rev}, {ROUNDS} rounds",
        cases.len(),
        repo.display()
    );
    println!(
        "  same bytes as git apply: {same}; different: {differ}; clada failed where git applied: {clada_failed} (hunks found more than once); git apply failed: {git_failed}"
    );
    println!("git apply (every commit)             median total {g:9.1} ms");
    println!(
        "clada apply --dialect udiff --no-git median total {c:9.1} ms   ratio to git apply {:.2}x (target <= 1.0x)",
        c / g
    );
}
