//! The attack corpus (`corpus/security/`): hostile documents run through
//! `clada apply` with nothing approved, each beside a canary directory
//! that must stay empty and a secret that must never be printed. See
//! `corpus/security/README.md` for the format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One case's expectations and set-up, from its `expect` file.
#[derive(Debug, Default)]
struct Case {
    exit: Option<i32>,
    /// Task number → `success`, `rolled-back`, `skipped`, `failed TYPE`
    /// or `failed *`.
    tasks: BTreeMap<usize, String>,
    flags: Vec<String>,
    files: Vec<(String, String)>,
    dirs: Vec<String>,
    links: Vec<(String, String)>,
    repo: bool,
    config: Vec<(String, String)>,
    home_is_root: bool,
    absent: Vec<String>,
    present: Vec<String>,
    /// Text the output (stdout and stderr) must not hold.
    output_lacks: Vec<String>,
}

/// The places a case's text may name: `{ROOT}`, `{OUTSIDE}` (the canary
/// directory), `{SECRET}` (the secret file).
struct Places {
    root: PathBuf,
    outside: PathBuf,
    secret: PathBuf,
}

impl Places {
    fn fill(&self, text: &str) -> String {
        text.replace("{ROOT}", &self.root.display().to_string())
            .replace("{OUTSIDE}", &self.outside.display().to_string())
            .replace("{SECRET}", &self.secret.display().to_string())
    }
}

impl Case {
    fn read(text: &str) -> Result<Case, String> {
        let mut c = Case::default();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("expect line {}: cannot read `{raw}`", n + 1);
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            let two = || {
                rest.split_once(' ')
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
                    .ok_or_else(bad)
            };
            match word {
                "exit" => c.exit = Some(rest.parse().map_err(|_| bad())?),
                "task" => {
                    let (k, v) = two()?;
                    c.tasks.insert(k.parse().map_err(|_| bad())?, v);
                }
                "flag" => c.flags.push(rest.to_owned()),
                "file" => c.files.push(two()?),
                "dir" => c.dirs.push(rest.to_owned()),
                "link" => c.links.push(two()?),
                "repo" => c.repo = true,
                "config" => c.config.push(two()?),
                "home-is-root" => c.home_is_root = true,
                "absent" => c.absent.push(rest.to_owned()),
                "present" => c.present.push(rest.to_owned()),
                "output-lacks" => c.output_lacks.push(rest.to_owned()),
                _ => return Err(bad()),
            }
        }
        Ok(c)
    }

    /// Builds the scratch directory: `root/` with the case's files, the
    /// empty canary directory `outside/`, the secret beside the root, and
    /// a home for clada's own directories.
    fn set_up(&self, work: &Path, token: &str) -> Places {
        let places = Places {
            root: work.join("root"),
            outside: work.join("outside"),
            secret: work.join("secret.txt"),
        };
        std::fs::create_dir_all(&places.root).unwrap();
        std::fs::create_dir_all(&places.outside).unwrap();
        std::fs::write(&places.secret, format!("{token}\n")).unwrap();
        if self.repo {
            let repo = git2::Repository::init(&places.root).unwrap();
            let mut config = repo.config().unwrap();
            for (k, v) in &self.config {
                config.set_str(k, &places.fill(v)).unwrap();
            }
        }
        for d in &self.dirs {
            std::fs::create_dir_all(places.root.join(d)).unwrap();
        }
        for (p, content) in &self.files {
            let at = places.root.join(p);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            let content = places.fill(content).replace("\\n", "\n");
            std::fs::write(at, content).unwrap();
        }
        for (p, target) in &self.links {
            let at = places.root.join(p);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(places.fill(target), at).unwrap();
        }
        if self.repo {
            // One commit of everything, through libgit2 (no hook runs).
            let repo = git2::Repository::open(&places.root).unwrap();
            let mut index = repo.index().unwrap();
            index
                .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
                .unwrap();
            index.write().unwrap();
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let sig = git2::Signature::now("t", "t@example.com").unwrap();
            repo.commit(Some("HEAD"), &sig, &sig, "initial", &tree, &[])
                .unwrap();
        }
        places
    }
}

/// Runs one case; returns what went wrong, if anything.
fn run_case(dir: &Path) -> Result<(), String> {
    let case =
        Case::read(&std::fs::read_to_string(dir.join("expect")).map_err(|e| e.to_string())?)?;
    // Outside any work tree, so that no repository above it is found.
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let token = format!("SECRET-{:x}", std::process::id() as u64 * 7_919 + 104_729);
    let places = case.set_up(work.path(), &token);
    let doc_text =
        places.fill(&std::fs::read_to_string(dir.join("doc.md")).map_err(|e| e.to_string())?);
    let doc = work.path().join("doc.md");
    std::fs::write(&doc, doc_text).map_err(|e| e.to_string())?;
    let home = if case.home_is_root {
        places.root.clone()
    } else {
        work.path().join("home")
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clada"));
    cmd.args([
        "apply",
        "--no-prompt",
        "--format",
        "json",
        "--git-author",
        "t <t@example.com>",
    ]);
    for f in &case.flags {
        cmd.arg(places.fill(f));
    }
    cmd.arg("-C").arg(&places.root).arg(&doc);
    // clada's own directories under `home`, in the child's environment
    // only; no GIT_* variable reaches it.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(&key);
        }
    }
    // A sandboxed command may write the temporary directory: the child's
    // is its own, so that the canary beside it stays out of reach.
    let tmp = work.path().join("tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    cmd.env("TMPDIR", &tmp);
    cmd.env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("XDG_RUNTIME_DIR", work.path().join("run"));
    if !case.home_is_root {
        cmd.env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"));
    }
    let approvals = if case.home_is_root {
        home.join(".config/clada/approvals.json")
    } else {
        home.join("config/clada/approvals.json")
    };
    let approvals_before = std::fs::read(&approvals).ok();
    let out = cmd.output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    if stdout.contains(&token) || stderr.contains(&token) {
        problems.push("the secret was printed".to_owned());
    }
    let canary: Vec<_> = std::fs::read_dir(&places.outside)
        .map_err(|e| e.to_string())?
        .map(|e| e.map(|e| e.file_name()))
        .collect();
    if !canary.is_empty() {
        problems.push(format!("the canary directory was written: {canary:?}"));
    }
    if std::fs::read_to_string(&places.secret).ok() != Some(format!("{token}\n")) {
        problems.push("the secret file was changed".to_owned());
    }
    if std::fs::read(&approvals).ok() != approvals_before {
        problems.push("an approval was stored".to_owned());
    }
    if let Some(code) = case.exit
        && out.status.code() != Some(code)
    {
        problems.push(format!("exit {:?}, expected {code}", out.status.code()));
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("no JSON report ({e}): {stdout}\n{stderr}"))?;
    let tasks: BTreeMap<usize, String> = report["blocks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|b| b["tasks"].as_array().cloned().unwrap_or_default())
        .map(|t| {
            let n = t["number"].as_u64().unwrap_or(0) as usize;
            let status = t["status"].as_str().unwrap_or("?").to_owned();
            let outcome = match t["error"]["type"].as_str() {
                Some(kind) if status == "failed" => format!("failed {kind}"),
                _ if t["rolled_back"] == true => "rolled-back".to_owned(),
                _ => status,
            };
            (n, outcome)
        })
        .collect();
    for (n, want) in &case.tasks {
        let got = tasks.get(n).map_or("missing", String::as_str);
        let ok = if want == "failed *" {
            got.starts_with("failed")
        } else {
            got == want
        };
        if !ok {
            problems.push(format!("task {n}: {got}, expected {want}"));
        }
    }
    for p in &case.absent {
        if places.root.join(p).symlink_metadata().is_ok() {
            problems.push(format!("{p} exists"));
        }
    }
    for p in &case.present {
        if places.root.join(p).symlink_metadata().is_err() {
            problems.push(format!("{p} is missing"));
        }
    }
    for t in &case.output_lacks {
        let t = places.fill(t);
        if stdout.contains(&t) || stderr.contains(&t) {
            problems.push(format!("the output holds `{t}`"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n    stdout: {}",
            problems.join("\n    "),
            stdout.chars().take(2000).collect::<String>()
        ))
    }
}

#[test]
fn no_attack_document_writes_runs_reads_or_approves_anything() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/security");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expect").exists())
        .collect();
    cases.sort();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|dir| {
            run_case(dir).err().map(|e| {
                format!(
                    "{}: {e}",
                    dir.file_name().unwrap_or_default().to_string_lossy()
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
