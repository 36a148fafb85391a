//! The in-process file tools (PROTOCOL §6): their output, exit statuses
//! and refusals, run through the engine like any RUN task.

use std::os::unix::fs::symlink;
use std::path::Path;

use clada_markers::report::{TaskReport, TaskStatus};
use clada_markers::{Apply, ErrorType, ParseOptions, parse_with};

/// Runs `command` as the only RUN of a document, in `dir` if given.
fn run_in(root: &Path, dir: Option<&str>, command: &str) -> TaskReport {
    let dir = dir.map(|d| format!(" dir=\"{d}\"")).unwrap_or_default();
    let doc = format!("<<<<<<< RUN{dir}\n{command}\n>>>>>>> END\n");
    let doc = parse_with(&doc, ParseOptions::default());
    assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
    // As a run does, with the repository found from the root, if any.
    let report = Apply::new(root).unwrap().git(None).run(&doc);
    crate::common::tasks(report).remove(0)
}

fn run(root: &Path, command: &str) -> TaskReport {
    run_in(root, None, command)
}

/// The output of a command that must succeed.
fn ok(root: &Path, command: &str) -> String {
    let r = run(root, command);
    assert_eq!(r.status, TaskStatus::Success, "{command}: {r:#?}");
    r.output.unwrap_or_default()
}

/// The error type and exit code of a command that must fail.
fn fails(root: &Path, command: &str) -> (ErrorType, Option<i32>, String) {
    let r = run(root, command);
    assert_eq!(r.status, TaskStatus::Failed, "{command}: {r:#?}");
    let e = r.error.unwrap();
    (e.kind, r.exit_code, r.output.unwrap_or_default())
}

/// A scratch directory holding `root/` (with files, a directory and links
/// out of it) and a secret beside it.
fn tree() -> tempfile::TempDir {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(scratch.path().join("secret.txt"), "TOPSECRET\n").unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn x() {}\n").unwrap();
    std::fs::write(root.join("src/deep/n.txt"), "n\n").unwrap();
    std::fs::write(root.join("empty"), "").unwrap();
    symlink("../../secret.txt", root.join("src/leak")).unwrap();
    symlink("..", root.join("up")).unwrap();
    scratch
}

fn root_of(t: &tempfile::TempDir) -> std::path::PathBuf {
    t.path().join("root")
}

#[test]
fn cat_head_tail_wc_read_like_their_gnu_namesakes() {
    let t = tree();
    let root = root_of(&t);
    assert_eq!(
        ok(&root, "cat a.txt empty"),
        "one\ntwo\nthree\nfour\nfive\n"
    );
    assert_eq!(
        ok(&root, "cat -n empty a.txt").lines().nth(1),
        Some("     2\ttwo")
    );
    assert_eq!(ok(&root, "head -n 2 a.txt"), "one\ntwo\n");
    assert_eq!(ok(&root, "head -2 a.txt"), "one\ntwo\n");
    assert_eq!(ok(&root, "head -c 5 a.txt"), "one\nt");
    assert_eq!(ok(&root, "tail -n 2 a.txt"), "four\nfive\n");
    assert_eq!(ok(&root, "tail -n +4 a.txt"), "four\nfive\n");
    assert_eq!(ok(&root, "tail -1 a.txt"), "five\n");
    assert_eq!(
        ok(&root, "head -n 1 a.txt src/lib.rs"),
        "==> a.txt <==\none\n\n==> src/lib.rs <==\nfn x() {}\n"
    );
    assert_eq!(ok(&root, "wc -l a.txt"), "5 a.txt\n");
    assert_eq!(ok(&root, "wc a.txt"), " 5  5 24 a.txt\n");
    assert_eq!(
        ok(&root, "wc -l a.txt src/lib.rs"),
        " 5 a.txt\n 1 src/lib.rs\n 6 total\n"
    );
}

#[test]
fn a_missing_file_is_an_ordinary_failure_with_gnu_wording() {
    let t = tree();
    let (kind, code, out) = fails(&root_of(&t), "cat nope.txt a.txt");
    assert_eq!(kind, ErrorType::ExecFailed);
    assert_eq!(code, Some(1));
    assert!(
        out.starts_with("cat: nope.txt: No such file or directory\n"),
        "{out}"
    );
    // The other operand is still read.
    assert!(out.ends_with("five\n"), "{out}");
}

#[test]
fn listing_shows_links_as_links_and_never_follows_them() {
    let t = tree();
    let root = root_of(&t);
    assert_eq!(ok(&root, "ls src"), "deep\nleak\nlib.rs\n");
    assert_eq!(ok(&root, "ls -F src"), "deep/\nleak@\nlib.rs\n");
    let long = ok(&root, "ls -la src");
    assert!(long.starts_with("total "), "{long}");
    assert!(long.contains("leak -> ../../secret.txt"), "{long}");
    assert!(
        long.lines()
            .any(|l| l.starts_with("drwx") && l.ends_with(" deep"))
    );
    let recursive = ok(&root, "ls -R src");
    assert!(recursive.contains("src/deep:\nn.txt\n"), "{recursive}");
    assert_eq!(ok(&root, "ls -d src"), "src\n");
    // A link operand is shown as itself, not listed through.
    assert_eq!(ok(&root, "ls up"), "up\n");
    for command in ["ls up/src", "cat src/leak", "head src/leak", "wc src/leak"] {
        let (kind, _, out) = fails(&root, command);
        assert_eq!(kind, ErrorType::SymlinkNotAllowed, "{command}");
        assert!(!out.contains("TOPSECRET"), "{command}: {out}");
    }
    let stat = ok(&root, "stat src/leak");
    assert!(stat.contains("symbolic link"), "{stat}");
    assert_eq!(
        ok(&root, "stat -c '%n %s %F' a.txt"),
        "a.txt 24 regular file\n"
    );
}

#[test]
fn paths_are_checked_whatever_carries_them() {
    let t = tree();
    let root = root_of(&t);
    use ErrorType::{CommandNotAllowed as Cmd, PathEscape as Esc, SymlinkNotAllowed as Link};
    let cases: &[(&str, ErrorType)] = &[
        ("cat ../secret.txt", Esc),
        ("cat /etc/passwd", Esc),
        ("head -n1 src/../../secret.txt", Esc),
        ("xxd ../secret.txt", Esc),
        ("file ../secret.txt", Esc),
        ("stat ..", Esc),
        ("realpath ../secret.txt", Esc),
        ("ls -la ..", Esc),
        ("cp a.txt ../copy", Esc),
        ("cp -t .. a.txt", Esc),
        ("cp --target-directory=/tmp a.txt", Esc),
        ("mv a.txt ../moved", Esc),
        ("rm -rf ..", Esc),
        ("touch ../made", Esc),
        ("mkdir -p ../made", Esc),
        ("cp src/leak copied", Link),
        ("realpath up/x", Link),
        ("xxd src/leak", Link),
        ("cat --bogus a.txt", Cmd),
        ("wc --files0-from=list", Cmd),
        ("ls -L src", Cmd),
        ("cp -L a.txt b", Cmd),
        ("rm --no-preserve-root a.txt", Cmd),
        ("tail -f a.txt", Cmd),
        ("xxd -r a.txt", Cmd),
        ("xxd a.txt out.hex", Cmd),
        ("touch -r a.txt b", Cmd),
        ("head -n lots a.txt", Cmd),
    ];
    for (command, want) in cases {
        let (kind, _, out) = fails(&root, command);
        assert_eq!(kind, *want, "{command}");
        assert!(!out.contains("TOPSECRET"), "{command}: {out}");
    }
    let secret = std::fs::read_to_string(t.path().join("secret.txt")).unwrap();
    assert_eq!(secret, "TOPSECRET\n");
    assert!(!t.path().join("copy").exists() && !t.path().join("made").exists());
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 2);
}

#[test]
fn refused_flags_are_named_with_the_approval_that_would_run_them() {
    let t = tree();
    let r = run(&root_of(&t), "cat --show-all a.txt");
    let message = r.error.unwrap().message;
    assert!(message.contains("`--show-all`"), "{message}");
    assert!(
        message.contains("clada allow 'cat --show-all a.txt'"),
        "{message}"
    );
}

#[test]
fn changes_land_where_written_and_protected_places_stay_untouched() {
    let t = tree();
    let root = root_of(&t);
    ok(&root, "mkdir -p x/y/z");
    assert!(root.join("x/y/z").is_dir());
    let (_, code, out) = fails(&root, "mkdir x");
    assert_eq!(code, Some(1));
    assert!(out.contains("File exists"), "{out}");
    ok(&root, "touch x/new.txt");
    assert_eq!(std::fs::read(root.join("x/new.txt")).unwrap(), b"");
    ok(&root, "touch a.txt");
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap().len(),
        24
    );
    ok(&root, "cp a.txt x/");
    assert!(root.join("x/a.txt").is_file());
    // Everything is copied but the link, which is neither copied nor
    // followed, and said so.
    let (_, code, out) = fails(&root, "cp -r src x/copy");
    assert_eq!(code, Some(1));
    assert!(out.contains("not copying 'src/leak'"), "{out}");
    assert_eq!(
        std::fs::read(root.join("x/copy/deep/n.txt")).unwrap(),
        b"n\n"
    );
    assert!(!root.join("x/copy/leak").exists());
    ok(&root, "mv x/a.txt x/b.txt");
    assert!(!root.join("x/a.txt").exists() && root.join("x/b.txt").is_file());
    ok(&root, "mv x/b.txt src");
    assert!(root.join("src/b.txt").is_file());
    ok(&root, "rm src/b.txt");
    assert!(!root.join("src/b.txt").exists());
    let (_, code, out) = fails(&root, "rm x");
    assert_eq!(code, Some(1));
    assert!(out.contains("Is a directory"), "{out}");
    ok(&root, "rm -r x");
    assert!(!root.join("x").exists());
    // A link is removed itself, never what it points to.
    ok(&root, "rm src/leak");
    assert!(!root.join("src/leak").exists());
    assert!(t.path().join("secret.txt").exists());
}

#[test]
fn protection_is_checked_where_a_change_finally_lands() {
    let t = tree();
    let root = root_of(&t);
    std::fs::create_dir_all(root.join("s/.clada")).unwrap();
    std::fs::write(root.join("s/.clada/allowed-commands.json"), "{}").unwrap();
    std::fs::create_dir_all(root.join("vendor/.git")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    for command in [
        "mv s/.clada .",
        "mv s/.clada ./",
        "mv s/.clada s/..",
        "mv -t . s/.clada",
        "cp -r s/. .",
        "cp -r s/.clada .clada",
        "cp a.txt .git/config",
        "touch .git/hooks/pre-commit",
        "mkdir .git/x",
        "rm -r vendor",
        "mv vendor elsewhere",
        "cp -r vendor elsewhere",
        "rm -rf vendor/.git",
        "mv src .git",
    ] {
        let (kind, _, _) = fails(&root, command);
        assert_eq!(kind, ErrorType::PathEscape, "{command}");
    }
    assert!(!root.join(".clada").exists());
    assert!(root.join("vendor/.git").is_dir() && root.join("src").is_dir());
    assert!(!root.join("elsewhere").exists());
    assert_eq!(std::fs::read_dir(root.join(".git")).unwrap().count(), 0);
}

#[test]
fn commands_run_in_their_directory() {
    let t = tree();
    let root = root_of(&t);
    let r = run_in(&root, Some("src"), "cat lib.rs");
    assert_eq!(r.output.as_deref(), Some("fn x() {}\n"));
    let r = run_in(&root, Some("src/deep"), "pwd");
    let canonical = root.join("src/deep");
    assert_eq!(
        r.output.unwrap().trim_end(),
        canonical.display().to_string()
    );
    let r = run_in(&root, Some("src"), "cat ../../secret.txt");
    assert_eq!(r.error.unwrap().kind, ErrorType::PathEscape);
    let r = run_in(&root, Some("src"), "rm -r ../src");
    assert_eq!(r.status, TaskStatus::Failed);
    assert!(root.join("src/lib.rs").exists());
}

#[test]
fn file_xxd_and_realpath_describe_without_following() {
    let t = tree();
    let root = root_of(&t);
    std::fs::write(root.join("img.png"), b"\x89PNG\r\n\x1a\n rest").unwrap();
    std::fs::write(root.join("run.sh"), "#!/bin/sh\necho\n").unwrap();
    assert_eq!(ok(&root, "file a.txt"), "a.txt: ASCII text\n");
    assert_eq!(
        ok(&root, "file -b img.png empty"),
        "PNG image data\nempty\n"
    );
    assert_eq!(ok(&root, "file src"), "src: directory\n");
    assert_eq!(
        ok(&root, "file src/leak"),
        "src/leak: symbolic link to ../../secret.txt\n"
    );
    assert_eq!(
        ok(&root, "file run.sh"),
        "run.sh: /bin/sh script, ASCII text\n"
    );
    assert_eq!(
        ok(&root, "xxd -l 6 a.txt"),
        "00000000: 6f6e 650a 7477                           one.tw\n"
    );
    assert_eq!(ok(&root, "xxd -p -l 4 a.txt"), "6f6e650a\n");
    assert_eq!(
        ok(&root, "realpath src/../a.txt"),
        format!("{}\n", root.join("a.txt").display())
    );
}

#[test]
fn a_pipe_is_refused_instead_of_read_forever() {
    let t = tree();
    let root = root_of(&t);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let (kind, code, out) = fails(&root, "cat pipe");
    assert_eq!(kind, ErrorType::ExecFailed);
    assert_eq!(code, Some(1));
    assert!(out.contains("pipe: not a regular file"), "{out}");
}

#[test]
fn grep_prints_like_gnu_grep_and_never_reads_through_links() {
    let t = tree();
    let root = root_of(&t);
    std::fs::write(root.join("src/deep/m.rs"), "fn main() {}\nlet Main = 1;\n").unwrap();
    assert_eq!(ok(&root, "grep -n three a.txt"), "3:three\n");
    assert_eq!(ok(&root, "grep -c o a.txt"), "3\n");
    assert_eq!(
        ok(&root, "grep -rn main src"),
        "src/deep/m.rs:1:fn main() {}\n"
    );
    assert_eq!(
        ok(&root, "grep -rni main src"),
        "src/deep/m.rs:1:fn main() {}\nsrc/deep/m.rs:2:let Main = 1;\n"
    );
    assert_eq!(
        ok(&root, "grep -rl fn ."),
        "./src/deep/m.rs\n./src/lib.rs\n"
    );
    assert_eq!(ok(&root, "grep -rl fn"), "src/deep/m.rs\nsrc/lib.rs\n");
    assert_eq!(ok(&root, "grep -w two a.txt"), "two\n");
    assert_eq!(fails(&root, "grep -w tw a.txt").1, Some(1));
    assert_eq!(ok(&root, "grep -E 'one|five' a.txt"), "one\nfive\n");
    assert_eq!(ok(&root, "grep 'one\\|five' a.txt"), "one\nfive\n");
    assert_eq!(ok(&root, "grep -F 'x()' src/lib.rs"), "fn x() {}\n");
    assert_eq!(ok(&root, "grep -o 't[a-z]*' a.txt"), "two\nthree\n");
    assert_eq!(ok(&root, "grep -v o a.txt"), "three\nfive\n");
    assert_eq!(ok(&root, "grep -m 1 o a.txt"), "one\n");
    assert_eq!(
        ok(&root, "grep -r --include='*.rs' -l fn ."),
        "./src/deep/m.rs\n./src/lib.rs\n"
    );
    assert_eq!(ok(&root, "grep -rL fn src"), "src/deep/n.txt\n");
    let (kind, code, out) = fails(&root, "grep nothing a.txt");
    assert_eq!(
        (kind, code, out.as_str()),
        (ErrorType::ExecFailed, Some(1), "")
    );
    // The secret is reachable only through `src/leak`: never read.
    let r = run(&root, "grep -r TOPSECRET .");
    assert_eq!(r.exit_code, Some(1));
    assert!(!r.output.unwrap_or_default().contains("TOPSECRET"));
    let (kind, _, _) = fails(&root, "grep TOPSECRET src/leak");
    assert_eq!(kind, ErrorType::SymlinkNotAllowed);
    let (kind, _, _) = fails(&root, "grep -f ../secret.txt a.txt");
    assert_eq!(kind, ErrorType::CommandNotAllowed);
    std::fs::write(root.join("bin"), b"abc\0def one\n").unwrap();
    assert_eq!(ok(&root, "grep one bin"), "Binary file bin matches\n");
}

#[test]
fn find_and_tree_walk_in_name_order_without_following_links() {
    let t = tree();
    let root = root_of(&t);
    assert_eq!(
        ok(&root, "find src"),
        "src\nsrc/deep\nsrc/deep/n.txt\nsrc/leak\nsrc/lib.rs\n"
    );
    assert_eq!(ok(&root, "find . -name '*.rs'"), "./src/lib.rs\n");
    assert_eq!(ok(&root, "find src -type l"), "src/leak\n");
    assert_eq!(
        ok(&root, "find src -type f -not -name '*.rs'"),
        "src/deep/n.txt\n"
    );
    assert_eq!(ok(&root, "find . -maxdepth 1 -type d"), ".\n./src\n");
    assert_eq!(
        ok(&root, "find . -path './src/*' -name n.txt"),
        "./src/deep/n.txt\n"
    );
    assert_eq!(ok(&root, "find . -empty -type f"), "./empty\n");
    // `up` links to the parent of the root: listed, never entered.
    assert!(!ok(&root, "find .").contains("secret.txt"));
    use ErrorType::{CommandNotAllowed as Cmd, PathEscape as Esc};
    for (command, want) in [
        ("find . -exec cat {} ;", Cmd),
        ("find . -execdir ls ;", Cmd),
        ("find . -delete", Cmd),
        ("find -L .", Cmd),
        ("find . -fprint ../x", Cmd),
        ("find . -newer ../secret.txt", Cmd),
        ("find . -name a -o -name b", Cmd),
        ("find .. -name x", Esc),
        ("find / -name x", Esc),
    ] {
        let (kind, _, _) = fails(&root, command);
        assert_eq!(kind, want, "{command}");
    }
    assert_eq!(
        ok(&root, "tree src"),
        "src\n├── deep\n│   └── n.txt\n├── leak -> ../../secret.txt\n└── lib.rs\n\n1 directory, 3 files\n"
    );
    assert_eq!(ok(&root, "tree -L 1 -d --noreport src"), "src\n└── deep\n");
    let (kind, _, _) = fails(&root, "tree -o out.txt");
    assert_eq!(kind, ErrorType::CommandNotAllowed);
    let (kind, _, _) = fails(&root, "tree /");
    assert_eq!(kind, ErrorType::PathEscape);
}

#[test]
fn diff_compares_files_and_directories_as_gnu_diff_does() {
    let t = tree();
    let root = root_of(&t);
    std::fs::write(root.join("b.txt"), "one\n2\nthree\nfour\nfive\nsix\n").unwrap();
    let r = run(&root, "diff a.txt b.txt");
    assert_eq!(r.exit_code, Some(1));
    assert_eq!(
        r.output.as_deref(),
        Some("2c2\n< two\n---\n> 2\n5a6\n> six\n")
    );
    let r = run(&root, "diff -u a.txt b.txt");
    let out = r.output.unwrap();
    assert!(
        out.starts_with("--- a.txt\n+++ b.txt\n@@ -1,5 +1,6 @@\n one\n-two\n+2\n"),
        "{out}"
    );
    assert_eq!(ok(&root, "diff a.txt a.txt"), "");
    std::fs::create_dir_all(root.join("c/deep")).unwrap();
    std::fs::write(root.join("c/lib.rs"), "fn y() {}\n").unwrap();
    std::fs::write(root.join("c/deep/n.txt"), "n\n").unwrap();
    std::os::unix::fs::symlink("../../secret.txt", root.join("c/leak")).unwrap();
    std::fs::write(root.join("c/only"), "").unwrap();
    let r = run(&root, "diff -r -q src c");
    assert_eq!(
        r.output.as_deref(),
        Some("Files src/lib.rs and c/lib.rs differ\nOnly in c: only\n")
    );
    // A link inside a directory is compared as its target, never followed.
    std::fs::remove_file(root.join("c/leak")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("c/leak")).unwrap();
    let r = run(&root, "diff -r src c");
    let out = r.output.unwrap();
    assert!(
        out.contains("Symbolic links src/leak and c/leak differ\n"),
        "{out}"
    );
    assert!(
        out.contains("diff src/lib.rs c/lib.rs\n1c1\n< fn x() {}\n---\n> fn y() {}\n"),
        "{out}"
    );
    assert!(!out.contains("TOPSECRET"), "{out}");
    let (kind, _, _) = fails(&root, "diff a.txt ../secret.txt");
    assert_eq!(kind, ErrorType::PathEscape);
    let (kind, _, _) = fails(&root, "diff --to-file=../secret.txt a.txt");
    assert_eq!(kind, ErrorType::CommandNotAllowed);
}

fn git_ok(root: &Path, command: &str) -> String {
    let r = run_in(root, None, command);
    assert_eq!(r.status, TaskStatus::Success, "{command}: {r:#?}");
    r.output.unwrap_or_default()
}

/// A repository at `root` with `a.txt` committed, then changed, and an
/// untracked file.
fn repository(root: &Path) -> git2::Oid {
    let repo = git2::Repository::init(root).unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("a.txt")).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig =
        git2::Signature::new("Ada", "ada@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let id = repo
        .commit(Some("HEAD"), &sig, &sig, "first commit\n\nbody", &tree, &[])
        .unwrap();
    std::fs::write(root.join("a.txt"), "one\n2\n").unwrap();
    std::fs::write(root.join("new.txt"), "new\n").unwrap();
    id
}

#[test]
fn git_reads_the_repository_through_libgit2() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let id = repository(root);
    let short = &id.to_string()[..7];
    let diff = git_ok(root, "git diff");
    assert!(diff.starts_with("diff --git a/a.txt b/a.txt\n"), "{diff}");
    assert!(diff.contains("@@ -1,2 +1,2 @@\n one\n-two\n+2\n"), "{diff}");
    let stat = git_ok(root, "git diff --stat");
    assert!(stat.contains("a.txt | 2 +-"), "{stat}");
    assert!(
        stat.contains("1 file changed, 1 insertion(+), 1 deletion(-)"),
        "{stat}"
    );
    assert_eq!(git_ok(root, "git diff --name-only"), "a.txt\n");
    assert_eq!(git_ok(root, "git status --short"), " M a.txt\n?? new.txt\n");
    let long = git_ok(root, "git status");
    assert!(
        long.contains("Changes not staged for commit:\n\tmodified:   a.txt"),
        "{long}"
    );
    assert!(long.contains("Untracked files:\n\tnew.txt"), "{long}");
    assert_eq!(
        git_ok(root, "git log --oneline -n 1"),
        format!("{short} first commit\n")
    );
    let log = git_ok(root, "git log");
    assert_eq!(
        log,
        format!(
            "commit {id}\nAuthor: Ada <ada@example.com>\nDate:   Tue Nov 14 22:13:20 2023 +0000\n\n    first commit\n    \n    body\n"
        )
    );
    let show = git_ok(root, "git show --stat");
    assert!(show.contains("a.txt | 2 ++"), "{show}");
    assert_eq!(git_ok(root, "git show HEAD:a.txt"), "one\ntwo\n");
    assert_eq!(git_ok(root, "git ls-files"), "a.txt\n");
    assert_eq!(git_ok(root, "git ls-files -o"), "new.txt\n");
    assert!(git_ok(root, "git branch").starts_with("* "));
    assert_eq!(git_ok(root, "git stash list"), "");
    // From a subdirectory too: paths are checked against the root.
    std::fs::create_dir(root.join("sub")).unwrap();
    let r = run_in(root, Some("sub"), "git diff --name-only -- ../a.txt");
    assert_eq!(r.output.as_deref(), Some("a.txt\n"), "{r:#?}");
}

#[test]
fn git_runs_no_program_whatever_the_configuration_says() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    repository(&root);
    let canary = t.path().join("canary");
    let program = format!("touch {}", canary.display());
    let mut config = git2::Repository::open(&root).unwrap().config().unwrap();
    for (key, value) in [
        ("diff.external", program.as_str()),
        ("diff.x.command", program.as_str()),
        ("diff.x.textconv", program.as_str()),
        ("filter.x.clean", program.as_str()),
        ("filter.x.smudge", program.as_str()),
        ("core.pager", program.as_str()),
        ("core.fsmonitor", program.as_str()),
        ("core.hooksPath", "hooks"),
        ("alias.diff", "!sh -c 'touch ../canary'"),
    ] {
        config.set_str(key, value).unwrap();
    }
    std::fs::write(root.join(".gitattributes"), "* diff=x filter=x\n").unwrap();
    std::fs::create_dir(root.join("hooks")).unwrap();
    std::fs::write(
        root.join("hooks/post-checkout"),
        format!("#!/bin/sh\n{program}\n"),
    )
    .unwrap();
    for command in [
        "git diff",
        "git status",
        "git show",
        "git log --stat",
        "git diff HEAD",
    ] {
        let r = run_in(&root, None, command);
        assert_eq!(r.status, TaskStatus::Success, "{command}: {r:#?}");
    }
    assert!(git_ok(&root, "git diff").contains("+2\n"));
    assert!(!canary.exists(), "a configured program ran");
}

#[test]
fn a_repository_written_by_a_document_is_never_used() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    let canary = t.path().join("canary");
    // A bare repository of the document's making, in `f/`.
    let fake = root.join("f");
    for dir in ["objects", "refs/heads", "info"] {
        std::fs::create_dir_all(fake.join(dir)).unwrap();
    }
    std::fs::write(fake.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        fake.join("config"),
        format!(
            "[core]\n\tbare = true\n[diff \"x\"]\n\tcommand = touch {}\n",
            canary.display()
        ),
    )
    .unwrap();
    std::fs::write(fake.join("info/attributes"), "* diff=x\n").unwrap();
    std::fs::write(fake.join("a"), "1\n").unwrap();
    std::fs::write(fake.join("b"), "2\n").unwrap();
    // Outside any work tree: there is no repository, whatever `dir` says.
    for command in ["git status", "git diff", "git log"] {
        let r = run_in(&root, Some("f"), command);
        assert_eq!(r.exit_code, Some(128), "{command}: {r:#?}");
        assert!(r.output.unwrap().contains("not a git repository"));
    }
    assert!(!canary.exists());
    // Inside a real work tree, the fake one is just files.
    repository(&root);
    // Option injection is refused.
    use ErrorType::{CommandNotAllowed as Cmd, PathEscape as Esc};
    for (command, want) in [
        ("git diff --no-index a b", Cmd),
        ("git -c diff.external=sh diff", Cmd),
        ("git --git-dir=f status", Cmd),
        ("git --work-tree=.. status", Cmd),
        ("git --exec-path=. status", Cmd),
        ("git -C f status", Cmd),
        ("git log --output=x", Cmd),
        ("git diff --ext-diff", Cmd),
        ("git diff --textconv", Cmd),
        ("git stash push --pathspec-from-file=/etc/passwd", Cmd),
        ("git stash drop", Cmd),
        ("git branch evil", Cmd),
        ("git commit -m x", Cmd),
    ] {
        let r = run_in(&root, Some("f"), command);
        assert_eq!(r.error.map(|e| e.kind), Some(want), "{command}");
    }
    // Paths as git shows them: relative to the working directory in the
    // short format, to the work tree's top in porcelain.
    let r = run_in(&root, Some("f"), "git status --short");
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    assert!(r.output.unwrap().contains("?? ./"));
    let r = run_in(&root, Some("f"), "git status --porcelain");
    assert!(r.output.unwrap().contains("?? f/"));
    let r = run_in(&root, None, "git diff ../outside");
    assert_eq!(r.error.map(|e| e.kind), Some(Esc));
    assert!(!canary.exists());
}

#[test]
fn below_the_top_of_a_work_tree_git_shows_only_the_root() {
    let t = tempfile::tempdir().unwrap();
    let top = t.path();
    let repo = git2::Repository::init(top).unwrap();
    std::fs::create_dir(top.join("sub")).unwrap();
    std::fs::write(top.join("private.txt"), "TOPSECRET\n").unwrap();
    std::fs::write(top.join("sub/a.txt"), "a\n").unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("private.txt")).unwrap();
    index.add_path(Path::new("sub/a.txt")).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "both", &tree, &[])
        .unwrap();
    let root = top.join("sub");
    for command in [
        "git show HEAD:private.txt",
        "git show HEAD^{tree}",
        "git show HEAD:",
    ] {
        let r = run_in(&root, None, command);
        assert_eq!(
            r.error.map(|e| e.kind),
            Some(ErrorType::PathEscape),
            "{command}"
        );
        assert!(!r.output.unwrap_or_default().contains("TOPSECRET"));
    }
    assert_eq!(git_ok(&root, "git show HEAD:sub/a.txt"), "a\n");
    let log = git_ok(&root, "git log -p");
    assert!(
        log.contains("sub/a.txt") && !log.contains("private"),
        "{log}"
    );
    let show = git_ok(&root, "git show --stat");
    assert!(!show.contains("private"), "{show}");
}

#[test]
fn built_in_cp_stops_once_a_run_has_copied_its_allowance() {
    // `cp -r d e` then `mv e d/x` doubles `d`: twelve lines of document
    // would ask for 4 GiB of copies of a 1 MiB file. A run copies at most
    // 1 GiB (and 100,000 entries) with built-in cp; a dry run counts the
    // same, so that planning stays bounded too.
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/big"), vec![b'x'; 1 << 20]).unwrap();
    let mut doc = String::new();
    for i in 0..12 {
        doc.push_str(&format!(
            "<<<<<<< RUN\ncp -r d e{i}\n>>>>>>> END\n<<<<<<< RUN\nmv e{i} d/x{i}\n>>>>>>> END\n"
        ));
    }
    let doc = parse_with(&doc, ParseOptions::default());
    let report = Apply::new(root).unwrap().git(None).dry_run(true).run(&doc);
    let tasks = crate::common::tasks(report);
    let stopped = tasks
        .iter()
        .position(|t| t.status == TaskStatus::Failed)
        .expect("a copy is stopped");
    // 1 + 2 + … + 512 MiB were copied by the first ten doublings; the
    // eleventh reaches the allowance.
    let seen: Vec<_> = tasks.iter().map(|t| (t.number, t.status)).collect();
    assert_eq!(stopped, 20, "{seen:?}");
    let output = tasks[stopped].output.clone().unwrap_or_default();
    assert!(
        output.contains(
            "built-in cp copies at most 100000 files and directories and 1024 MiB in a run"
        ),
        "{output}"
    );
    assert_eq!(tasks[stopped].exit_code, Some(1));
    // Every later copy is refused at once.
    for t in tasks.iter().skip(stopped + 2).step_by(2) {
        assert_eq!(t.status, TaskStatus::Failed, "{t:#?}");
    }
    // A dry run: the tree is as it was.
    let names: Vec<_> = std::fs::read_dir(root.join("d")).unwrap().collect();
    assert_eq!(names.len(), 1);
}

/// A named pipe is never read (it would block) nor compared as if it were
/// empty: the reading tools refuse it with a message (PROTOCOL §6).
#[test]
fn the_reading_tools_refuse_a_pipe() {
    let t = tree();
    let root = root_of(&t);
    std::fs::create_dir(root.join("l")).unwrap();
    std::fs::create_dir(root.join("r")).unwrap();
    for p in ["p", "l/p", "r/p"] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join(p),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }
    for command in ["diff p a.txt", "diff a.txt p", "diff -r l r"] {
        let (kind, code, output) = fails(&root, command);
        assert_eq!((kind, code), (ErrorType::ExecFailed, Some(2)), "{command}");
        assert!(
            output.contains("not a regular file or directory"),
            "{command}: {output}"
        );
    }
    for command in ["cat p", "head p", "tail p", "wc p", "grep x p", "xxd p"] {
        let (kind, _, output) = fails(&root, command);
        assert_eq!(kind, ErrorType::ExecFailed, "{command}");
        assert!(
            output.contains("p: not a regular file"),
            "{command}: {output}"
        );
    }
}

/// Runs `command` with every built-in's time limit at zero, as a real run
/// and as a dry run.
fn run_out_of_time(root: &Path, command: &str, dry_run: bool) -> TaskReport {
    let doc = format!("<<<<<<< RUN\n{command}\n>>>>>>> END\n");
    let doc = parse_with(&doc, ParseOptions::default());
    let settings = clada_markers::Settings {
        timeout: std::time::Duration::ZERO,
        git: None,
        dry_run,
        ..Default::default()
    };
    let report = Apply::new(root).unwrap().settings(settings).run(&doc);
    crate::common::tasks(report).remove(0)
}

#[test]
fn built_ins_past_their_time_limit_fail_and_change_nothing() {
    let t = tree();
    let root = root_of(&t);
    let before = std::fs::read_dir(&root).unwrap().count();
    let changing = [
        "mkdir -p new/a/b/c new/d",
        "mkdir new",
        "touch new.txt",
        "rm empty",
        "cp a.txt b.txt",
        "mv a.txt b.txt",
    ];
    let reading = [
        "cat a.txt",
        "wc a.txt",
        "head a.txt",
        "stat a.txt",
        "ls src",
        "grep one a.txt",
        "find src",
    ];
    // A dry run carries out only those that change the tree.
    for (dry_run, commands) in [(false, &changing[..]), (false, &reading), (true, &changing)] {
        for &command in commands {
            let r = run_out_of_time(&root, command, dry_run);
            assert_eq!(r.status, TaskStatus::Failed, "{command}: {r:#?}");
            assert_eq!(r.error.unwrap().kind, ErrorType::ExecTimeout, "{command}");
        }
    }
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), before);
    assert!(root.join("a.txt").is_file() && root.join("empty").is_file());
}

#[test]
fn a_path_argument_too_deep_is_refused_with_the_limit_and_the_count() {
    let t = tree();
    let root = root_of(&t);
    let deep = format!("{}x", "d/".repeat(1100));
    for command in [
        format!("mkdir -p {deep}"),
        format!("touch {deep}"),
        format!("cat {deep}"),
        format!("ls {deep}"),
        format!("cp a.txt {deep}"),
    ] {
        let r = run(&root, &command);
        assert_eq!(r.status, TaskStatus::Failed, "{r:#?}");
        let e = r.error.unwrap();
        assert_eq!(e.kind, ErrorType::PathEscape);
        assert!(e.message.contains("has 1101 components"), "{}", e.message);
        assert!(e.message.contains("at most 1024"), "{}", e.message);
    }
    assert!(!root.join("d").exists());
}

#[test]
fn mkdir_p_makes_a_path_as_deep_as_the_limit_in_one_walk() {
    let t = tree();
    let root = root_of(&t);
    // 1,024 components with the working directory's.
    let deep = format!("{}x", "d/".repeat(1022));
    let r = run_in(&root, Some("src"), &format!("mkdir -pv {deep}"));
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    let out = r.output.unwrap_or_default();
    assert_eq!(out.lines().count(), 1023);
    assert_eq!(out.lines().next(), Some("mkdir: created directory 'src/d'"));
    assert!(root.join("src").join(&deep).is_dir());
    // Again: everything is there, nothing to say.
    assert_eq!(ok(&root, &format!("mkdir -p src/{deep}")), "");
    // Through a file on the way: an ordinary failure.
    std::fs::write(root.join("src/d/d/f"), "").unwrap();
    let (_, code, out) = fails(&root, "mkdir -p src/d/d/f/g");
    assert_eq!(code, Some(1));
    assert!(out.contains("src/d/d/f/g: Not a directory"), "{out}");
    // Through a link: refused.
    let (kind, _, _) = fails(&root, "mkdir -p up/x/y");
    assert_eq!(kind, ErrorType::SymlinkNotAllowed);
}

/// A named pipe `.gitmodules` in a repository with a submodule (a command
/// may leave one): libgit2 reads it for `git status`, and waited for a
/// writer for ever, inside clada, where no time limit reaches. Refused,
/// naming it.
#[test]
fn git_refuses_a_gitmodules_git_would_wait_on() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    repository(&root);
    // The submodule: a repository of its own, a gitlink in the index.
    let sub = git2::Repository::init(root.join("sm")).unwrap();
    std::fs::write(root.join("sm/s.txt"), "s\n").unwrap();
    let mut index = sub.index().unwrap();
    index.add_path(Path::new("s.txt")).unwrap();
    let tree = sub.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    sub.commit(Some("HEAD"), &sig, &sig, "s", &tree, &[])
        .unwrap();
    std::fs::write(
        root.join(".gitmodules"),
        "[submodule \"sm\"]\n\tpath = sm\n\turl = ../sm\n",
    )
    .unwrap();
    let repo = git2::Repository::open(&root).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(".gitmodules")).unwrap();
    index.add_path(Path::new("sm")).unwrap();
    index.write().unwrap();
    std::fs::write(root.join("sm/s.txt"), "changed\n").unwrap();
    std::fs::remove_file(root.join(".gitmodules")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        root.join(".gitmodules"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let at = root.clone();
    std::thread::spawn(move || {
        let _ = tx.send(run(&at, "git status"));
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("git status waited on the named pipe");
    assert_eq!(r.status, TaskStatus::Failed, "{r:#?}");
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorType::GitOperationFailed);
    assert!(
        e.message.contains(".gitmodules is a named pipe"),
        "{}",
        e.message
    );
}
