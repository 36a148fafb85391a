//! The attack corpus (`corpus/security/`): hostile documents run through
//! `clada apply` with nothing approved but what a case approves, each
//! beside a canary directory that must stay empty and a secret that must
//! never be printed nor committed. A case may run twice (`doc2.md`): a
//! first run's command prepares the ground, the second must not follow
//! it. See `corpus/security/README.md` for the format.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One case's expectations and set-up, from its `expect` file.
#[derive(Debug, Default)]
struct Case {
    /// What the last run must report.
    last: Expect,
    /// What the first of two runs must report (`first …` lines).
    first: Expect,
    flags: Vec<String>,
    files: Vec<(String, String)>,
    dirs: Vec<String>,
    links: Vec<(String, String)>,
    /// Another name (a hard link) of a file of the case.
    hardlinks: Vec<(String, String)>,
    fifos: Vec<String>,
    repo: bool,
    config: Vec<(String, String)>,
    home_is_root: bool,
    absent: Vec<String>,
    present: Vec<String>,
    /// Commands approved before the run: `(dir, command)`, `None` for the
    /// root.
    approve: Vec<(Option<String>, String)>,
    /// No `XDG_RUNTIME_DIR`: clada's runtime directory is in its `TMPDIR`.
    no_runtime_dir: bool,
    /// The repository is the scratch directory's: the root lies below the
    /// work tree's top, the secret beside it tracked and stashed.
    repo_above: bool,
    /// Files in the root after the run, with their whole contents.
    contents: Vec<(String, String)>,
    /// Texts some block's note must hold.
    notes: Vec<String>,
    /// Text the output (stdout and stderr) must not hold.
    output_lacks: Vec<String>,
    /// The document is a stream (`apply --stream --format jsonl`): its
    /// task events make the report's one block.
    stream: bool,
    /// The case needs Landlock ABI 6 (signals and abstract sockets scoped
    /// to the sandbox): skipped, and said so, on an older kernel.
    scoped: bool,
}

/// What one run must report.
#[derive(Debug, Default)]
struct Expect {
    exit: Option<i32>,
    /// Task number → `success`, `rolled-back`, `skipped`, `failed TYPE`
    /// or `failed *`.
    tasks: BTreeMap<usize, String>,
    /// The run's own error type (`report.error.type`).
    error: Option<String>,
    /// A git failure is reported (`report.git.error`).
    git_error: bool,
}

/// The places a case's text may name: `{ROOT}`, `{OUTSIDE}` (the canary
/// directory), `{SECRET}` (the secret file), `{TMP}` (clada's `TMPDIR`).
struct Places {
    root: PathBuf,
    outside: PathBuf,
    secret: PathBuf,
    tmp: PathBuf,
}

impl Places {
    fn fill(&self, text: &str) -> String {
        text.replace("{ROOT}", &self.root.display().to_string())
            .replace("{OUTSIDE}", &self.outside.display().to_string())
            .replace("{SECRET}", &self.secret.display().to_string())
            .replace("{TMP}", &self.tmp.display().to_string())
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
            let (expect, word, rest) = match word {
                "first" => {
                    let (w, r) = rest.split_once(' ').unwrap_or((rest, ""));
                    (&mut c.first, w, r)
                }
                _ => (&mut c.last, word, rest),
            };
            let two = || {
                rest.split_once(' ')
                    .map(|(a, b)| (a.to_owned(), b.to_owned()))
                    .ok_or_else(bad)
            };
            match word {
                "exit" => expect.exit = Some(rest.parse().map_err(|_| bad())?),
                "task" => {
                    let (k, v) = two()?;
                    expect.tasks.insert(k.parse().map_err(|_| bad())?, v);
                }
                "error" => expect.error = Some(rest.to_owned()),
                "git-error" => expect.git_error = true,
                "approve" => c.approve.push((None, rest.to_owned())),
                "approve-in" => {
                    let (dir, command) = two()?;
                    c.approve.push((Some(dir), command));
                }
                "no-runtime-dir" => c.no_runtime_dir = true,
                "stream" => c.stream = true,
                "repo-above" => c.repo_above = true,
                "flag" => c.flags.push(rest.to_owned()),
                "file" => c.files.push(two()?),
                "dir" => c.dirs.push(rest.to_owned()),
                "link" => c.links.push(two()?),
                "hardlink" => c.hardlinks.push(two()?),
                "fifo" => c.fifos.push(rest.to_owned()),
                "content" => c.contents.push(two()?),
                "note" => c.notes.push(rest.to_owned()),
                "repo" => c.repo = true,
                "config" => c.config.push(two()?),
                "home-is-root" => c.home_is_root = true,
                "scoped" => c.scoped = true,
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
            tmp: work.join("tmp"),
        };
        std::fs::create_dir_all(&places.root).unwrap();
        std::fs::create_dir_all(&places.outside).unwrap();
        std::fs::create_dir_all(&places.tmp).unwrap();
        std::fs::write(&places.secret, format!("{token}\n")).unwrap();
        if self.repo {
            git2::Repository::init(&places.root).unwrap();
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
        for (p, target) in &self.hardlinks {
            std::fs::hard_link(places.root.join(target), places.root.join(p)).unwrap();
        }
        for p in &self.fifos {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                places.root.join(p),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        }
        if self.repo {
            // One commit of everything, through libgit2 (no hook runs);
            // then the configuration.
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
            let mut config = repo.config().unwrap();
            for (k, v) in &self.config {
                config.set_str(k, &places.fill(v)).unwrap();
            }
        }
        if self.repo_above {
            // The work tree is the scratch directory: the root's files and
            // a tracked `secret.txt` beside it, whose secret content is in
            // a stash and in the work tree, never committed.
            let repo = git2::Repository::init(work).unwrap();
            std::fs::write(&places.secret, "before\n").unwrap();
            let mut index = repo.index().unwrap();
            index.add_path(Path::new("secret.txt")).unwrap();
            index
                .add_all(["root"], git2::IndexAddOption::DEFAULT, None)
                .unwrap();
            index.write().unwrap();
            let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
            let sig = git2::Signature::now("t", "t@example.com").unwrap();
            repo.commit(Some("HEAD"), &sig, &sig, "initial", &tree, &[])
                .unwrap();
            std::fs::write(&places.secret, format!("{token}\n")).unwrap();
            let mut repo = git2::Repository::open(work).unwrap();
            repo.stash_save(&sig, "wip", None).unwrap();
            std::fs::write(&places.secret, format!("{token}\n")).unwrap();
        }
        places
    }

    /// Stores the case's approvals in clada's configuration file, under
    /// the root's canonical path.
    fn approve(&self, approvals: &Path, root: &Path, places: &Places) {
        if self.approve.is_empty() {
            return;
        }
        let mut at_root: Vec<String> = Vec::new();
        let mut dirs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (dir, command) in &self.approve {
            let command = places.fill(command);
            match dir {
                None => at_root.push(command),
                Some(d) => dirs.entry(d.clone()).or_default().push(command),
            }
        }
        let dirs: serde_json::Map<String, serde_json::Value> = dirs
            .into_iter()
            .map(|(d, c)| (d, serde_json::json!({ "commands": c })))
            .collect();
        let key = root.canonicalize().unwrap().display().to_string();
        let store = serde_json::json!({
            "roots": { key: { "commands": at_root, "dirs": dirs } }
        });
        std::fs::create_dir_all(approvals.parent().unwrap()).unwrap();
        std::fs::write(approvals, store.to_string()).unwrap();
    }
}

/// The commits made since `before` (all of `HEAD`'s history when `None`)
/// that hold `token` in a file.
fn commits_holding(repo_dir: &Path, before: Option<git2::Oid>, token: &str) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(repo_dir) else {
        return Vec::new();
    };
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else {
        return Vec::new();
    };
    let mut walk = repo.revwalk().unwrap();
    walk.push(head.id()).unwrap();
    if let Some(b) = before {
        let _ = walk.hide(b);
    }
    let mut found = Vec::new();
    for id in walk.flatten() {
        let tree = repo.find_commit(id).unwrap().tree().unwrap();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if let Ok(blob) = entry.to_object(&repo).and_then(|o| o.peel_to_blob())
                && contains_bytes(blob.content(), token.as_bytes())
            {
                found.push(format!("{id}:{dir}{}", entry.name().unwrap_or("?")));
            }
            git2::TreeWalkResult::Ok
        })
        .unwrap();
    }
    found
}

fn contains_bytes(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// What the runs of a case did: each run's exit code and report, and
/// what broke a promise.
struct Ran {
    runs: Vec<(Option<i32>, serde_json::Value)>,
    problems: Vec<String>,
    stdout: String,
}

impl Ran {
    /// The last run's exit code and task outcomes.
    fn last(&self) -> (Option<i32>, BTreeMap<usize, String>) {
        self.runs
            .last()
            .map(|(exit, report)| (*exit, outcomes(report)))
            .unwrap_or_default()
    }
}

/// Runs one case; returns what went wrong, if anything.
fn run_case(dir: &Path) -> Result<(), String> {
    let case =
        Case::read(&std::fs::read_to_string(dir.join("expect")).map_err(|e| e.to_string())?)?;
    if case.scoped && !clada_markers::commands::sandbox_scoped() {
        eprintln!(
            "{}: skipped, the kernel has no Landlock ABI 6",
            dir.display()
        );
        return Ok(());
    }
    let ran = run(dir, &case, &[])?;
    let mut problems = ran.problems;
    let last = ran.runs.len().saturating_sub(1);
    for (n, (exit, report)) in ran.runs.iter().enumerate() {
        let run = if ran.runs.len() > 1 {
            format!("run {}: ", n + 1)
        } else {
            String::new()
        };
        let expect = if n == last { &case.last } else { &case.first };
        problems.extend(
            check_report(expect, *exit, report)
                .into_iter()
                .map(|p| format!("{run}{p}")),
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}\n    stdout: {}",
            problems.join("\n    "),
            ran.stdout
        ))
    }
}

/// Runs the case in `dir` in a fresh scratch directory, with `extra`
/// arguments (each of its documents in turn), and checks the promises
/// every case keeps.
fn run(dir: &Path, case: &Case, extra: &[&str]) -> Result<Ran, String> {
    let dry_run = extra.contains(&"--dry-run");
    // Outside any work tree, so that no repository above it is found.
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let token = format!("SECRET-{:x}", std::process::id() as u64 * 7_919 + 104_729);
    let places = case.set_up(work.path(), &token);
    let mut docs = Vec::new();
    for (n, name) in ["doc.md", "doc2.md"].iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
            continue;
        };
        let doc = work.path().join(format!("doc{n}.md"));
        std::fs::write(&doc, places.fill(&text)).map_err(|e| e.to_string())?;
        docs.push(doc);
    }
    let home = if case.home_is_root {
        places.root.clone()
    } else {
        work.path().join("home")
    };
    let approvals = if case.home_is_root {
        home.join(".config/clada/approvals.json")
    } else {
        home.join("config/clada/approvals.json")
    };
    case.approve(&approvals, &places.root, &places);
    let approvals_before = std::fs::read(&approvals).ok();
    let repo_dir = if case.repo_above {
        Some(work.path().to_path_buf())
    } else if case.repo {
        Some(places.root.clone())
    } else {
        None
    };
    let head_before = repo_dir
        .as_ref()
        .and_then(|d| git2::Repository::open(d).ok())
        .and_then(|r| r.head().ok().and_then(|h| h.target()));
    let mut problems = Vec::new();
    let mut shown = String::new();
    let mut runs = Vec::new();
    for (n, doc) in docs.iter().enumerate() {
        let out = output_within(clada(case, &places, &home, work.path(), doc, extra))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let run = if docs.len() > 1 {
            format!("run {}: ", n + 1)
        } else {
            String::new()
        };
        if stdout.contains(&token) || stderr.contains(&token) {
            problems.push(format!("{run}the secret was printed"));
        }
        for t in &case.output_lacks {
            let t = places.fill(t);
            if stdout.contains(&t) || stderr.contains(&t) {
                problems.push(format!("{run}the output holds `{t}`"));
            }
        }
        let report: serde_json::Value = if case.stream {
            streamed(&stdout)
        } else {
            serde_json::from_slice(&out.stdout)
                .map_err(|e| format!("{run}no JSON report ({e}): {stdout}\n{stderr}"))?
        };
        runs.push((out.status.code(), report));
        shown.push_str(&format!(
            "{run}{}\n",
            stdout.chars().take(2000).collect::<String>()
        ));
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
    if let Some(repo_dir) = &repo_dir {
        let held = commits_holding(repo_dir, head_before, &token);
        if !held.is_empty() {
            problems.push(format!("the secret was committed: {held:?}"));
        }
    }
    if std::fs::read(&approvals).ok() != approvals_before {
        problems.push("an approval was stored".to_owned());
    }
    // What the tree holds afterwards is the real run's to check.
    for p in case.absent.iter().filter(|_| !dry_run) {
        if places.root.join(p).symlink_metadata().is_ok() {
            problems.push(format!("{p} exists"));
        }
    }
    for p in case.present.iter().filter(|_| !dry_run) {
        if places.root.join(p).symlink_metadata().is_err() {
            problems.push(format!("{p} is missing"));
        }
    }
    for (p, want) in case.contents.iter().filter(|_| !dry_run) {
        let want = places.fill(want).replace("\\n", "\n");
        let got = std::fs::read_to_string(places.root.join(p)).ok();
        if got.as_deref() != Some(want.as_str()) {
            problems.push(format!("{p} holds {got:?}, expected {want:?}"));
        }
    }
    let notes: Vec<&str> = runs
        .last()
        .and_then(|(_, report)| report["blocks"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|b| b["note"].as_str())
        .collect();
    for want in case.notes.iter().filter(|_| !dry_run) {
        if !notes.iter().any(|n| n.contains(want.as_str())) {
            problems.push(format!("no note says `{want}`: {notes:?}"));
        }
    }
    // clada's temporary names (PROTOCOL §7.4) never outlive a run, in the
    // tree or in a commit.
    let left = temp_names(&places.root);
    if !left.is_empty() {
        problems.push(format!("temporary names left in the tree: {left:?}"));
    }
    if case.repo {
        let committed = committed_temp_names(&places.root);
        if !committed.is_empty() {
            problems.push(format!("temporary names committed: {committed:?}"));
        }
    }
    Ok(Ran {
        runs,
        problems,
        stdout: shown,
    })
}

/// How long one run of a case may take: clada never hangs, whatever a
/// command left in the tree (a named pipe where git reads, say).
const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Runs `cmd` to its end and takes its output, or kills it past
/// [`RUN_LIMIT`] and says so.
fn output_within(mut cmd: Command) -> Result<std::process::Output, String> {
    let child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = rustix::process::Pid::from_child(&child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(RUN_LIMIT) {
        Ok(out) => out.map_err(|e| e.to_string()),
        Err(_) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            let _ = rx.recv();
            Err(format!(
                "clada did not finish within {}s: it hung",
                RUN_LIMIT.as_secs()
            ))
        }
    }
}

/// Whether `name` has the shape of clada's temporary names
/// (`.NAME.clada-PID-N.tmp`).
fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".clada-")
}

/// The temporary names below `dir`, outside `.git`, never following links.
fn temp_names(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            if is_temp_name(&name) {
                found.push(entry.path().display().to_string());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
    }
    found
}

/// The paths with a temporary name in the tree of the repository's HEAD.
fn committed_temp_names(root: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Vec::new();
    };
    let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let name = String::from_utf8_lossy(entry.name_bytes());
        if is_temp_name(&name) {
            found.push(format!("{dir}{name}"));
        }
        git2::TreeWalkResult::Ok
    });
    found
}

/// `clada apply` for one run of `case`: clada's own directories under
/// `home`, its `TMPDIR` in the scratch directory, in the child's
/// environment only; no `GIT_*` variable reaches it.
fn clada(
    case: &Case,
    places: &Places,
    home: &Path,
    work: &Path,
    doc: &Path,
    extra: &[&str],
) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_clada"));
    cmd.args(["apply", "--no-prompt"]);
    if case.stream {
        cmd.args(["--stream", "--format", "jsonl"]);
    } else {
        cmd.args(["--format", "json"]);
    }
    cmd.args(["--git-author", "t <t@example.com>"]);
    for f in &case.flags {
        cmd.arg(places.fill(f));
    }
    cmd.args(extra);
    cmd.arg("-C").arg(&places.root).arg(doc);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(&key);
        }
    }
    // A sandboxed command may write a temporary directory of its own,
    // made in clada's: the child's is the scratch one, so that the canary
    // beside it stays out of reach.
    cmd.env("TMPDIR", &places.tmp);
    cmd.env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_RUNTIME_DIR");
    if !case.no_runtime_dir {
        cmd.env("XDG_RUNTIME_DIR", work.join("run"));
    }
    if !case.home_is_root {
        cmd.env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_STATE_HOME", home.join("state"));
    }
    cmd
}

/// A stream's JSON Lines as a report: its task events, numbered in the
/// stream, one block.
fn streamed(stdout: &str) -> serde_json::Value {
    let tasks: Vec<serde_json::Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "task")
        .collect();
    serde_json::json!({ "blocks": [{ "tasks": tasks }], "error": null })
}

/// Each task's outcome in a report, as an `expect` file writes it.
fn outcomes(report: &serde_json::Value) -> BTreeMap<usize, String> {
    report["blocks"]
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
        .collect()
}

/// What differs between a run's exit code and report and `expect`.
fn check_report(expect: &Expect, exit: Option<i32>, report: &serde_json::Value) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(code) = expect.exit
        && exit != Some(code)
    {
        problems.push(format!("exit {exit:?}, expected {code}"));
    }
    if let Some(kind) = &expect.error
        && report["error"]["type"].as_str() != Some(kind)
    {
        problems.push(format!("run error {}, expected {kind}", report["error"]));
    }
    if expect.git_error && report["git"]["error"].is_null() {
        problems.push("no git error reported".to_owned());
    }
    let tasks = outcomes(report);
    for (n, want) in &expect.tasks {
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
    problems
}

/// The cases of the corpus, in name order.
fn cases() -> Vec<PathBuf> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/security");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expect").exists())
        .collect();
    cases.sort();
    cases
}

/// A dry run ends as the real run would (PROTOCOL §7.2): every task's
/// outcome and the exit code, over every attack whose commands are all
/// built-in or refused (an approved command is only previewed: what it
/// would do is not known) and that runs once. A dry run takes no lock, so
/// a refused `--lock-file` is the real run's alone. Each run gets a fresh tree,
/// and the dry run keeps every promise too.
#[test]
fn a_dry_run_of_every_attack_ends_as_the_real_run() {
    let mut compared = 0;
    let failures: Vec<String> = cases()
        .iter()
        .filter_map(|dir| {
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            let text = std::fs::read_to_string(dir.join("expect")).unwrap();
            let case = Case::read(&text).unwrap();
            let approved = !case.approve.is_empty()
                || case.flags.iter().any(|f| {
                    f.starts_with("--allow-any-command")
                        || f.starts_with("--sandbox")
                        || f.starts_with("--lock-file")
                        || f == "--dry-run"
                });
            // A stream takes no dry run (PROTOCOL §11.5).
            if approved || case.stream || dir.join("doc2.md").exists() {
                return None;
            }
            compared += 1;
            let (real, dry) = match (run(dir, &case, &[]), run(dir, &case, &["--dry-run"])) {
                (Ok(real), Ok(dry)) => (real, dry),
                (Err(e), _) | (_, Err(e)) => return Some(format!("{name}: {e}")),
            };
            let mut problems = dry.problems.clone();
            if dry.last() != real.last() {
                problems.push(format!(
                    "the dry run ended {:?}, the real run {:?}",
                    dry.last(),
                    real.last()
                ));
            }
            (!problems.is_empty()).then(|| format!("{name}: {}", problems.join("; ")))
        })
        .collect();
    assert!(compared >= 100, "only {compared} cases compared");
    assert!(
        failures.is_empty(),
        "{} of {compared} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn no_attack_document_writes_runs_reads_or_approves_anything() {
    let cases = cases();
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
