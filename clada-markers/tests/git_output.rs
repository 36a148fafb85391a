//! The built-in git (PROTOCOL §6) against the `git` program: every output
//! form of README's table, run as a RUN task and by git on the same
//! repository, must print the same bytes.
//!
//! The main repository has renames (one with a score below 100, one
//! across directories, one to a name git quotes), a binary file, a merge,
//! names git quotes (non-ASCII, a tab) or quotes in places (a space), a
//! name too long for `--stat`'s 80 columns, dates in offsets other than
//! UTC, messages of several lines, an upstream, a stash, and a work tree
//! with staged, unstaged, untracked and ignored changes; a second one goes
//! through the states the first cannot be in at once. The `git` program is
//! run with no configuration but the repository's.

use std::path::Path;
use std::process::Command;

use clada_markers::report::TaskStatus;
use clada_markers::{Apply, ParseOptions, parse_with};

/// `git ARGS` in `dir`, with no configuration but the repository's, no
/// terminal width, and `env`; its output (the program must succeed).
fn real_git(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("COLUMNS")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("LC_ALL", "C")
        .env("GIT_PAGER", "cat")
        // The built-in's `git status` is git's with its hints turned off.
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "advice.statusHints")
        .env("GIT_CONFIG_VALUE_0", "false")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Output {
        code: out.status.code(),
        text: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
    }
}

#[derive(Debug, PartialEq)]
struct Output {
    code: Option<i32>,
    text: String,
}

/// Commits everything staged at `date` (author and committer), with
/// `message`.
fn commit(dir: &Path, date: &str, message: &str) {
    let env = [("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)];
    let out = real_git(dir, &["commit", "-q", "-m", message], &env);
    assert_eq!(out.code, Some(0), "{out:?}");
}

fn git(dir: &Path, args: &[&str]) {
    let out = real_git(dir, args, &[]);
    assert_eq!(out.code, Some(0), "git {args:?}: {out:?}");
}

fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn lines(from: usize, to: usize, word: &str) -> String {
    (from..=to).map(|n| format!("{word} {n}\n")).collect()
}

const LONG: &str =
    "a/very/very/very/very/long/directory/name/that/does/not/fit/in/the/stat/column.txt";

/// The repository described at the top, in `root`.
fn repository(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Ada Lovelace"]);
    git(root, &["config", "user.email", "ada@example.com"]);
    write(root, ".gitignore", "*.log\n");
    write(root, "a.txt", lines(1, 100, "line"));
    write(root, "docs/guide.md", lines(1, 30, "guide"));
    write(root, "src/deep/moved.txt", lines(1, 40, "moved"));
    write(root, "bin.dat", b"\0\x01\x02");
    write(root, "café.txt", "bonjour\n");
    write(root, "name with space.txt", "spaced\n");
    write(root, "tab\there.txt", "tabbed\n");
    write(root, "old name.txt", lines(1, 20, "old"));
    write(root, LONG, "long\n");
    git(root, &["add", "-A"]);
    commit(
        root,
        "2026-12-07T21:19:21+05:30",
        "First commit\n\nA body of\nseveral lines.\n",
    );
    git(root, &["checkout", "-q", "-b", "side"]);
    write(root, "docs/guide.md", lines(1, 31, "guide"));
    git(root, &["add", "-A"]);
    commit(
        root,
        "2026-12-08T09:00:00-07:00",
        "Side: one more guide line",
    );
    git(root, &["checkout", "-q", "main"]);
    std::fs::remove_file(root.join("src/deep/moved.txt")).unwrap();
    write(root, "src/other/moved.txt", lines(1, 38, "moved"));
    std::fs::remove_file(root.join("a.txt")).unwrap();
    write(
        root,
        "b.txt",
        lines(1, 100, "line").replace("line 50\n", "fifty\n"),
    );
    write(root, "bin.dat", b"\0\x01\x02\x03\x04");
    write(root, LONG, "long\nlonger\n");
    write(root, "many.txt", lines(1, 200, "many"));
    std::fs::remove_file(root.join("name with space.txt")).unwrap();
    std::fs::remove_file(root.join("old name.txt")).unwrap();
    write(root, "naïve.txt", lines(1, 20, "old"));
    git(root, &["add", "-A"]);
    commit(
        root,
        "2026-12-09T12:30:00+01:00",
        "Move and grow\n\n- renames two files\n- grows a binary file\n",
    );
    git(root, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(root, &["config", "branch.main.remote", "origin"]);
    git(root, &["config", "branch.main.merge", "refs/heads/main"]);
    let env = [
        ("GIT_AUTHOR_DATE", "2026-12-10T08:00:00+12:45"),
        ("GIT_COMMITTER_DATE", "2026-12-10T08:00:00+12:45"),
    ];
    let merged = real_git(
        root,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge side\n\nWith its guide.",
            "side",
        ],
        &env,
    );
    assert_eq!(merged.code, Some(0), "{merged:?}");
    // A stash of two changes.
    write(root, "café.txt", "bonjour\nau revoir\n");
    write(root, "b.txt", lines(1, 101, "line"));
    let env = [("GIT_COMMITTER_DATE", "2026-12-11T10:00:00-03:00")];
    let stashed = real_git(root, &["stash", "push", "-q", "-m", "wip"], &env);
    assert_eq!(stashed.code, Some(0), "{stashed:?}");
    // The work tree: staged, unstaged, untracked and ignored changes.
    git(root, &["mv", "docs/guide.md", "docs/manual.md"]);
    write(root, "new.txt", "new\n");
    git(root, &["add", "new.txt"]);
    write(root, "café.txt", "salut\n");
    write(root, "bin.dat", b"\0\x09");
    write(root, "many.txt", lines(1, 150, "many"));
    std::fs::remove_file(root.join(LONG)).unwrap();
    write(root, "untracked/one.txt", "1\n");
    write(root, "untracked/two.txt", "2\n");
    write(root, "untracked file.txt", "3\n");
    write(root, "tab\there.txt", "changed\n");
    write(root, "debug.log", "ignored\n");
}

/// The command lines compared, one per output form of README's table (and
/// its flags).
const COMMANDS: &[&str] = &[
    "git status",
    "git status --long",
    "git status -s",
    "git status --short --branch",
    "git status --porcelain",
    "git status --porcelain=v1 -b",
    "git status -uno",
    "git status -uall -s",
    "git status -s -- docs",
    "docs: git status",
    "docs: git status -s",
    "docs: git status --porcelain",
    "docs: git ls-files",
    "docs: git ls-files --full-name -- ../src",
    "docs: git diff --stat",
    "docs: git diff HEAD --name-only",
    "docs: git log --oneline",
    "git diff",
    "git diff --stat",
    "git diff --shortstat",
    "git diff --numstat",
    "git diff --name-only",
    "git diff --name-status",
    "git diff --stat -p",
    "git diff -U1",
    "git diff -w",
    "git diff -s",
    "git diff --cached",
    "git diff --cached --stat",
    "git diff --cached --name-status",
    "git diff --staged --no-renames --name-status",
    "git diff HEAD",
    "git diff HEAD --stat",
    "git diff HEAD~1 HEAD",
    "git diff HEAD~2 HEAD~1 --stat",
    "git diff HEAD~2 HEAD~1 --numstat",
    "git diff HEAD~2 HEAD~1 --name-status",
    "git diff HEAD~2 HEAD~1 -M --name-only",
    "git diff HEAD~2..HEAD~1 --shortstat",
    "git diff side...main --stat",
    "git diff HEAD~2 HEAD~1 -- src",
    "git log",
    "git log --oneline",
    "git log --pretty=oneline",
    "git log --format=medium -n 2",
    "git log -n1",
    "git log -2 --oneline",
    "git log --max-count=3",
    "git log --stat",
    "git log --shortstat",
    "git log --name-only",
    "git log --name-status",
    "git log -p",
    "git log --stat -p",
    "git log -p -U1 -n 2",
    "git log --all --oneline",
    "git log --no-decorate --no-color -n 1",
    "git log side..main --oneline",
    "git log ^side main --oneline",
    "git log --oneline -- docs",
    "git show",
    "git show HEAD~1",
    "git show --stat HEAD~1",
    "git show --name-status HEAD~1",
    "git show --oneline HEAD~1",
    "git show --pretty=oneline -s HEAD~1",
    "git show HEAD~1 -- src",
    "git show HEAD:café.txt",
    "git show HEAD:src",
    "git show side",
    "git branch",
    "git branch --list",
    "git branch -a",
    "git branch -v",
    "git branch -vv",
    "git branch --show-current",
    "git ls-files",
    "git ls-files -s",
    "git ls-files -m",
    "git ls-files -d",
    "git ls-files -o",
    "git ls-files -o --exclude-standard",
    "git ls-files -- src",
    "git stash list",
    "git stash show",
    "git stash show -p",
    "git stash show --name-status 0",
];

/// What the built-in prints for `command` in `root` (in `dir` for
/// `dir: command`), with its exit code.
fn built_in(root: &Path, command: &str) -> Output {
    let text = match command.split_once(": ") {
        Some((dir, command)) => format!("<<<<<<< RUN dir=\"{dir}\"\n{command}\n>>>>>>> END\n"),
        None => format!("<<<<<<< RUN\n{command}\n>>>>>>> END\n"),
    };
    let doc = parse_with(&text, ParseOptions::default());
    assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
    let report = Apply::new(root).unwrap().git(None).run(&doc);
    let task = crate::common::tasks(report).remove(0);
    assert_ne!(task.status, TaskStatus::Skipped, "{command}: {task:#?}");
    Output {
        code: task.exit_code,
        text: task.output.unwrap_or_default(),
    }
}

#[test]
fn the_built_in_git_prints_what_git_prints() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    repository(root);
    assert_same(root, COMMANDS);
}

/// The states of README's table that one repository cannot be in at once:
/// no commit yet, a detached HEAD, an upstream behind, diverged or gone, a
/// clean tree, no stash; and git's errors and exit codes.
#[test]
fn the_built_in_git_prints_what_git_prints_in_every_state() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Ada Lovelace"]);
    git(root, &["config", "user.email", "ada@example.com"]);
    let status = ["git status", "git status -sb", "git status --porcelain -b"];
    assert_same(root, &status);
    write(root, "a.txt", "one\n");
    git(root, &["add", "a.txt"]);
    assert_same(root, &status);
    assert_same(root, &["git log", "git branch", "git diff --cached --stat"]);
    commit(root, "2026-12-07T21:19:21-09:30", "One");
    write(root, "a.txt", "two\n");
    git(root, &["add", "a.txt"]);
    commit(root, "2026-12-07T22:00:00-09:30", "Two");
    // Clean, then untracked files only.
    assert_same(root, &status);
    assert_same(
        root,
        &["git stash list", "git stash show", "git stash show -p"],
    );
    write(root, "new.txt", "new\n");
    assert_same(root, &status);
    // An upstream behind, diverged, then gone.
    git(root, &["config", "branch.main.remote", "origin"]);
    git(root, &["config", "branch.main.merge", "refs/heads/main"]);
    git(root, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    assert_same(root, &status);
    assert_same(root, &["git branch -a", "git branch -r", "git branch -vv"]);
    git(root, &["reset", "-q", "--soft", "HEAD~1"]);
    git(root, &["restore", "-q", "--staged", "a.txt"]);
    assert_same(root, &status);
    write(root, "b.txt", "bee\n");
    git(root, &["add", "b.txt"]);
    commit(root, "2026-12-08T01:00:00+00:00", "Diverge");
    assert_same(root, &status);
    git(root, &["update-ref", "-d", "refs/remotes/origin/main"]);
    assert_same(root, &status);
    // Detached.
    git(root, &["checkout", "-q", "--detach", "HEAD~1"]);
    assert_same(root, &status);
    assert_same(
        root,
        &["git branch", "git branch -v", "git branch --show-current"],
    );
    // Exit codes and git's own errors.
    assert_same(
        root,
        &[
            "git diff --exit-code",
            "git diff --quiet",
            "git diff --cached --exit-code",
            "git log nope",
            "git log nope --",
            "git show HEAD:nope.txt",
            "git diff HEAD nope",
        ],
    );
}

/// Runs each command line with the built-in and with git (`dir: command`
/// in `dir`), and fails naming those whose output or exit code differ.
fn assert_same(root: &Path, commands: &[&str]) {
    let mut differ = Vec::new();
    for command in commands {
        let ours = built_in(root, command);
        let (dir, line) = command.split_once(": ").unwrap_or((".", command));
        let args: Vec<&str> = line.split(' ').skip(1).collect();
        let theirs = real_git(&root.join(dir), &args, &[]);
        if ours != theirs {
            differ.push(first_difference(command, &theirs, &ours));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} commands differ:\n\n{}",
        differ.len(),
        commands.len(),
        differ.join("\n")
    );
}

/// The command, the exit codes, and the first line where the outputs part.
fn first_difference(command: &str, git: &Output, ours: &Output) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (
        git.text.split_inclusive('\n').collect(),
        ours.text.split_inclusive('\n').collect(),
    );
    let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    format!(
        "{command}: exit {:?} and {:?}; line {}:\n  git:      {:?}\n  built-in: {:?}",
        git.code,
        ours.code,
        at + 1,
        a.get(at),
        b.get(at)
    )
}

/// libgit2's own `--stat` and `--numstat` (`DiffStats::to_buf`) are not
/// git's, which is why the built-in lays them out itself (`git_format.rs`),
/// while its summary line is: should a libgit2 update make them git's, this
/// fails, and the built-in's own layout can go.
#[test]
fn libgit2_writes_the_stat_summary_as_git_but_not_the_stat() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    repository(root);
    let repo = git2::Repository::open(root).unwrap();
    let tree = |rev: &str| repo.revparse_single(rev).unwrap().peel_to_tree().unwrap();
    let mut diff = repo
        .diff_tree_to_tree(Some(&tree("HEAD~2")), Some(&tree("HEAD~1")), None)
        .unwrap();
    diff.find_similar(None).unwrap();
    let stats = diff.stats().unwrap();
    for (format, flag, same) in [
        (git2::DiffStatsFormat::SHORT, "--shortstat", true),
        (git2::DiffStatsFormat::FULL, "--stat", false),
        (git2::DiffStatsFormat::NUMBER, "--numstat", false),
    ] {
        let buf = stats.to_buf(format, 80).unwrap();
        let libgit2 = buf.as_str().unwrap();
        let git = real_git(root, &["diff", "HEAD~2", "HEAD~1", flag], &[]);
        assert_eq!(
            libgit2 == git.text,
            same,
            "{flag}:\n{}\n{libgit2}",
            git.text,
        );
    }
}
