//! Real history replayed through `--dialect udiff`: for each commit of a
//! repository, `git diff PARENT COMMIT` applied to the parent's files by
//! clada and by `git apply`, the results compared byte for byte (and the
//! same patch with its hunk numbers removed, by clada).
//!
//! Only the files a diff names are taken out of the parent, through one
//! `git cat-file --batch`; `git apply` runs outside any repository.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::report::TaskStatus;
use clada_markers::{Apply, ParseOptions};

/// A tree: relative path to contents.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// One commit to replay: its diff against its first parent, and the
/// parent's contents of every file the diff names.
#[derive(Clone, Debug)]
pub struct Case {
    pub commit: String,
    pub patch: String,
    pub before: Tree,
}

fn git(repo: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !out.status.success() {
        return Err(format!("git {args:?} failed"));
    }
    Ok(out.stdout)
}

/// `count` consecutive commits of the first-parent history ending at
/// `rev`, oldest first, merges left out.
pub fn commits(repo: &Path, rev: &str, count: usize) -> Result<Vec<String>, String> {
    let n = count.to_string();
    let out = git(
        repo,
        &["rev-list", "--first-parent", "--no-merges", "-n", &n, rev],
    )?;
    let mut ids: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_owned)
        .collect();
    ids.reverse();
    Ok(ids)
}

/// The case of `commit`: `None` when its diff is not text or a file it
/// names cannot be read from the repository (a large blob left out of the
/// mirror).
pub fn case(repo: &Path, commit: &str) -> Result<Option<Case>, String> {
    let parent = format!("{commit}^");
    let diff = git(
        repo,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-M",
            &parent,
            commit,
        ],
    )?;
    let Ok(patch) = String::from_utf8(diff) else {
        return Ok(None);
    };
    let names = git(
        repo,
        &["diff", "--name-status", "-z", "-M", &parent, commit],
    )?;
    // NUL-separated: a status, then one path (two for a rename or copy).
    let fields: Vec<&[u8]> = names.split(|&b| b == 0).collect();
    let mut wanted = Vec::new();
    let mut i = 0;
    while i + 1 < fields.len() {
        let status = fields[i];
        let paths = if matches!(status.first(), Some(b'R' | b'C')) {
            2
        } else {
            1
        };
        let old = String::from_utf8_lossy(fields[i + 1]).into_owned();
        if !matches!(status.first(), Some(b'A')) {
            wanted.push(old);
        }
        i += 1 + paths;
    }
    let mut before = Tree::new();
    if !wanted.is_empty() {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(repo)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("git cat-file: {e}"))?;
        let mut input = child.stdin.take().ok_or("no stdin")?;
        let request: String = wanted.iter().map(|p| format!("{parent}:{p}\n")).collect();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(request.as_bytes());
        });
        let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        for path in &wanted {
            let mut header = String::new();
            out.read_line(&mut header).map_err(|e| e.to_string())?;
            let parts: Vec<&str> = header.split_whitespace().collect();
            let [_, "blob", size] = parts.as_slice() else {
                let _ = child.kill();
                return Ok(None);
            };
            let size: usize = size.parse().map_err(|_| "bad size")?;
            let mut data = vec![0; size + 1];
            out.read_exact(&mut data).map_err(|e| e.to_string())?;
            data.pop();
            before.insert(path.clone(), data);
        }
        let _ = writer.join();
        let _ = child.wait();
    }
    Ok(Some(Case {
        commit: commit.to_owned(),
        patch,
        before,
    }))
}

/// Writes `tree` under `dir` (made afresh).
pub fn write_tree(dir: &Path, tree: &Tree) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    for (path, data) in tree {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, data)?;
    }
    Ok(())
}

/// Every file below `dir`, by relative path.
pub fn read_tree(dir: &Path) -> Tree {
    fn walk(base: &Path, dir: &Path, out: &mut Tree) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                walk(base, &p, out);
            } else if let (Ok(rel), Ok(data)) = (p.strip_prefix(base), std::fs::read(&p)) {
                out.insert(rel.to_string_lossy().into_owned(), data);
            }
        }
    }
    let mut out = Tree::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs `git apply` of `patch` in `dir`: whether it applied.
pub fn git_apply(dir: &Path, patch: &Path) -> bool {
    Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(patch)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What clada made of a patch: whether every task succeeded, and if not,
/// whether each failure is an ambiguity (a hunk found more than once),
/// which the `@@` line numbers are to settle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Applied,
    /// Every failure is a hunk found more than once.
    Ambiguous,
    Failed,
}

/// Applies `patch` (read as a unified diff) in `dir` with the library,
/// without git.
pub fn clada_apply(dir: &Path, patch: &str) -> Outcome {
    let doc = parse_dialect(patch, Dialect::Udiff, ParseOptions::default());
    if doc.has_errors() {
        return Outcome::Failed;
    }
    let Ok(apply) = Apply::new(dir) else {
        return Outcome::Failed;
    };
    let report = apply.git(None).run(&doc);
    if report.ok {
        return Outcome::Applied;
    }
    let failed: Vec<_> = report
        .blocks
        .iter()
        .flat_map(|b| &b.tasks)
        .filter(|t| t.status == TaskStatus::Failed)
        .collect();
    let ambiguous = !failed.is_empty()
        && failed.iter().all(|t| {
            t.error
                .as_ref()
                .is_some_and(|e| e.found.is_some_and(|f| f > 1))
        });
    if ambiguous {
        Outcome::Ambiguous
    } else {
        Outcome::Failed
    }
}

/// `patch` with every hunk header's numbers taken out: `@@ -1,3 +1,4 @@
/// f()` becomes `@@ @@ f()`.
pub fn strip_numbers(patch: &str) -> String {
    let mut out = String::with_capacity(patch.len());
    for line in patch.split_inclusive('\n') {
        if line.starts_with("@@ -")
            && let Some(end) = line[2..].find("@@")
        {
            out.push_str("@@ @@");
            out.push_str(&line[2 + end + 2..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_taken_out_of_hunk_headers_only() {
        let p = "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@ fn f() {\n-@@ -1 +1 @@\n+x\n";
        assert_eq!(
            strip_numbers(p),
            "--- a/x\n+++ b/x\n@@ @@ fn f() {\n-@@ -1 +1 @@\n+x\n"
        );
    }
}
