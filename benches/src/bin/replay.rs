//! Replays a repository's history through `--dialect udiff` against `git
//! apply` (see `clada_benches::replay`), or writes a sample of it for the
//! tests.
//!
//! ```sh
//! cargo run --release -p clada-benches --bin replay -- check GIT_DIR [REV] [COUNT]
//! cargo run --release -p clada-benches --bin replay -- sample GIT_DIR REV COUNT OUT KIB
//! ```

use std::path::{Path, PathBuf};
use std::process::exit;

use clada_benches::replay::{
    Case, Outcome, Tree, case, clada_apply, commits, git_apply, read_tree, strip_numbers,
    write_tree,
};

const USAGE: &str = "\
usage: replay SUBCOMMAND ARGS…
  check GIT_DIR [REV] [COUNT]        replay COUNT (500) commits ending at REV (HEAD):
                                     each diff applied by git apply and by clada, with
                                     and without its hunk numbers; prints each difference
                                     and the totals
  dump GIT_DIR COMMIT DIR            write DIR/before/ (the parent's files) and DIR/patch.diff
  sample GIT_DIR REV COUNT OUT KIB   of those commits, write to OUT the ones clada and git
                                     apply agree on, smallest first, up to KIB KiB in all
                                     (the smallest showing each kind of header first, and
                                     the three smallest ambiguous ones)";

/// What became of one commit.
#[derive(Debug)]
struct Replayed {
    case: Case,
    git: Option<Tree>,
    clada: (Outcome, Tree),
    stripped: (Outcome, Tree),
}

fn replay(scratch: &Path, case: Case) -> Replayed {
    let patch = scratch.join("patch.diff");
    std::fs::write(&patch, &case.patch).expect("write patch");
    let dir = scratch.join("git");
    write_tree(&dir, &case.before).expect("tree");
    let git = git_apply(&dir, &patch).then(|| read_tree(&dir));
    let dir = scratch.join("clada");
    write_tree(&dir, &case.before).expect("tree");
    let outcome = clada_apply(&dir, &case.patch);
    let clada = (outcome, read_tree(&dir));
    write_tree(&dir, &case.before).expect("tree");
    let outcome = clada_apply(&dir, &strip_numbers(&case.patch));
    let stripped = (outcome, read_tree(&dir));
    Replayed {
        case,
        git,
        clada,
        stripped,
    }
}

/// How a replay compares: the same bytes as git apply, an ambiguity
/// (waiting for the line numbers to choose), or a difference.
fn verdict(git: &Option<Tree>, clada: &(Outcome, Tree)) -> &'static str {
    match (git, clada.0) {
        (Some(g), Outcome::Applied) if *g == clada.1 => "same",
        (Some(_), Outcome::Applied) => "DIFFERENT",
        (Some(_), Outcome::Ambiguous) => "ambiguous",
        (None, Outcome::Applied) => "git-failed-clada-applied",
        (None, _) => "both-failed",
        (Some(_), Outcome::Failed) => "CLADA-FAILED",
    }
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("clada-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

fn run(repo: &Path, rev: &str, count: usize) -> Vec<Replayed> {
    let scratch = scratch();
    let mut out = Vec::new();
    let ids = commits(repo, rev, count).unwrap_or_else(|e| {
        eprintln!("replay: {e}");
        exit(2)
    });
    for id in ids {
        match case(repo, &id) {
            Ok(Some(c)) => out.push(replay(&scratch, c)),
            Ok(None) => println!("{id} skipped: a blob is missing or the diff is not text"),
            Err(e) => println!("{id} skipped: {e}"),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    out
}

fn check(repo: &Path, rev: &str, count: usize) {
    let all = run(repo, rev, count);
    let mut totals = std::collections::BTreeMap::new();
    for r in &all {
        let a = verdict(&r.git, &r.clada);
        let b = verdict(&r.git, &r.stripped);
        *totals.entry(format!("numbered {a}")).or_insert(0) += 1;
        *totals.entry(format!("stripped {b}")).or_insert(0) += 1;
        if a != "same" || b != "same" {
            println!("{} numbered {a}, stripped {b}", &r.case.commit[..12]);
        }
    }
    println!("{} commits replayed", all.len());
    for (k, v) in totals {
        println!("  {k}: {v}");
    }
}

/// Whether a patch shows one of the forms the sample must hold.
fn forms(patch: &str) -> Vec<&'static str> {
    let mut f = Vec::new();
    for (needle, name) in [
        ("\nnew file mode", "new file"),
        ("\ndeleted file mode", "deleted file"),
        ("\nrename from", "rename"),
        ("\\ No newline at end of file", "no final newline"),
        ("\nold mode", "mode change"),
        ("\r\n", "CRLF"),
    ] {
        if patch.contains(needle) {
            f.push(name);
        }
    }
    f
}

fn sample(repo: &Path, rev: &str, count: usize, out: &Path, kib: usize) {
    let all = run(repo, rev, count);
    let size =
        |r: &Replayed| r.case.patch.len() + r.case.before.values().map(Vec::len).sum::<usize>();
    let text = |t: &Tree| t.values().all(|v| std::str::from_utf8(v).is_ok());
    let mut good: Vec<&Replayed> = all
        .iter()
        .filter(|r| {
            text(&r.case.before)
                && r.git.as_ref().is_some_and(text)
                && !r.case.before.keys().any(|p| p.contains('\n'))
                && verdict(&r.git, &r.clada) == "same"
                && verdict(&r.git, &r.stripped) == "same"
        })
        .collect();
    good.sort_by_key(|r| size(r));
    let mut ambiguous: Vec<&Replayed> = all
        .iter()
        .filter(|r| text(&r.case.before) && verdict(&r.git, &r.clada) == "ambiguous")
        .collect();
    ambiguous.sort_by_key(|r| size(r));
    // Every form first (the smallest commit showing it), then the three
    // smallest ambiguous ones (the line numbers are to settle them), then
    // the smallest.
    let mut chosen: Vec<&Replayed> = Vec::new();
    let mut budget = kib * 1024;
    for r in ambiguous.iter().take(3) {
        if size(r) <= budget {
            budget -= size(r);
            chosen.push(r);
        }
    }
    for form in [
        "new file",
        "deleted file",
        "rename",
        "no final newline",
        "mode change",
        "CRLF",
    ] {
        if let Some(r) = good.iter().find(|r| forms(&r.case.patch).contains(&form))
            && !chosen.iter().any(|c| c.case.commit == r.case.commit)
            && size(r) <= budget
        {
            budget -= size(r);
            chosen.push(r);
        }
    }
    for r in &good {
        if size(r) <= budget && !chosen.iter().any(|c| c.case.commit == r.case.commit) {
            budget -= size(r);
            chosen.push(r);
        }
    }
    chosen.sort_by_key(|r| all.iter().position(|a| a.case.commit == r.case.commit));
    let _ = std::fs::remove_dir_all(out);
    for (i, r) in chosen.iter().enumerate() {
        let dir = out.join(format!("{:03}-{}", i + 1, &r.case.commit[..10]));
        write_tree(&dir.join("before"), &r.case.before).expect("before");
        std::fs::write(
            dir.join("after"),
            manifest(r.git.as_ref().expect("applied")),
        )
        .expect("after");
        std::fs::write(dir.join("patch.diff"), &r.case.patch).expect("patch");
        let note = format!(
            "{} numbered {}, stripped {}\n",
            r.case.commit,
            verdict(&r.git, &r.clada),
            verdict(&r.git, &r.stripped)
        );
        std::fs::write(dir.join("commit"), note).expect("commit");
    }
    println!(
        "{} of {} commits written to {} ({} KiB)",
        chosen.len(),
        all.len(),
        out.display(),
        (kib * 1024 - budget) / 1024
    );
}

/// The tree git apply left, as git's blob hash and path of each file, one
/// a line: what the test compares clada's tree with.
fn manifest(tree: &Tree) -> String {
    tree.iter()
        .map(|(path, data)| {
            let id = git2::Oid::hash_object(git2::ObjectType::Blob, data).expect("hash");
            format!("{id} {path}\n")
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let num = |i: usize, d: usize| arg(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match (arg(0), arg(1)) {
        (Some("check"), Some(repo)) => {
            check(Path::new(repo), arg(2).unwrap_or("HEAD"), num(3, 500))
        }
        (Some("sample"), Some(repo)) if args.len() == 6 => sample(
            Path::new(repo),
            arg(2).unwrap_or("HEAD"),
            num(3, 500),
            Path::new(arg(4).unwrap_or("sample")),
            num(5, 300),
        ),
        (Some("dump"), Some(repo)) if args.len() == 4 => {
            let c = case(Path::new(repo), arg(2).unwrap_or("HEAD"))
                .ok()
                .flatten()
                .unwrap_or_else(|| exit(1));
            let dir = Path::new(arg(3).unwrap_or("dump"));
            write_tree(&dir.join("before"), &c.before).expect("before");
            std::fs::write(dir.join("patch.diff"), &c.patch).expect("patch");
        }
        _ => {
            eprintln!("{USAGE}");
            exit(2)
        }
    }
}
