//! Protection is checked where a change finally lands (PROTOCOL §5), and
//! directory handles follow every change to the tree.

use std::path::Path;

use clada_markers::report::{TaskReport, TaskStatus};
use clada_markers::{Apply, ErrorType, ParseOptions, parse_with};

fn apply_with(apply: Apply, doc: &str) -> Vec<TaskReport> {
    let doc = parse_with(doc, ParseOptions::default());
    let report = apply.git(None).run(&doc);
    crate::common::tasks(report)
}

fn apply(dir: &Path, doc: &str) -> Vec<TaskReport> {
    apply_with(Apply::new(dir).unwrap(), doc)
}

fn kinds(reports: &[TaskReport]) -> Vec<Option<ErrorType>> {
    reports
        .iter()
        .map(|r| r.error.as_ref().map(|e| e.kind))
        .collect()
}

fn mv(from: &str, to: &str) -> String {
    format!("<<<<<<< MOVE from=\"{from}\" to=\"{to}\"\n>>>>>>> END\n")
}

#[test]
fn a_move_is_checked_where_it_lands() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    std::fs::create_dir_all(root.join("s/.clada")).unwrap();
    std::fs::write(root.join("s/.clada/allowed-commands.json"), "{}").unwrap();
    std::fs::create_dir_all(root.join("d")).unwrap();
    for (from, to) in [
        ("s/.clada", "./"),
        ("s/.clada", "."),
        ("s/.clada", "s/.."),
        ("s/.clada", "d/../"),
        ("s/.clada", ".clada"),
    ] {
        let r = apply(root, &mv(from, to));
        assert_eq!(kinds(&r), [Some(ErrorType::PathEscape)], "{from} -> {to}");
    }
    assert!(!root.join(".clada").exists());
    // A directory named `.git` made by moving one in.
    std::fs::create_dir_all(root.join("x/.git")).unwrap();
    let r = apply(root, &mv("x/.git", "d/"));
    assert_eq!(kinds(&r), [Some(ErrorType::PathEscape)]);
    // An ordinary move into a directory still works.
    let r = apply(root, &mv("s/.clada/allowed-commands.json", "d/"));
    assert_eq!(r[0].status, TaskStatus::Success, "{r:#?}");
    assert!(root.join("d/allowed-commands.json").exists());
}

#[test]
fn a_directory_holding_a_repository_is_never_moved_or_removed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    std::fs::create_dir_all(root.join("vendor/lib/.git/objects")).unwrap();
    std::fs::write(root.join("vendor/lib/a.txt"), "a").unwrap();
    let doc = format!(
        "{}<<<<<<< REMOVE path=\"vendor\"\n>>>>>>> END\n<<<<<<< REMOVE path=\"vendor/lib/.git\"\n>>>>>>> END\n",
        mv("vendor", "elsewhere")
    );
    let r = apply(root, &doc);
    assert_eq!(kinds(&r), [Some(ErrorType::PathEscape); 3]);
    assert!(root.join("vendor/lib/.git/objects").is_dir());
    // Files beside it are still the document's to change.
    let r = apply(
        root,
        "<<<<<<< REMOVE path=\"vendor/lib/a.txt\"\n>>>>>>> END\n",
    );
    assert_eq!(r[0].status, TaskStatus::Success);
}

#[test]
fn clada_s_own_directories_are_protected_when_the_root_holds_them() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    std::fs::create_dir_all(dir.join(".config/clada")).unwrap();
    std::fs::write(dir.join(".config/other.txt"), "x").unwrap();
    let root = Apply::new(dir).unwrap().protect(dir.join(".config/clada"));
    let doc = "<<<<<<< WRITE path=\".config/clada/approvals.json\"\n{}\n>>>>>>> END\n\
               <<<<<<< REMOVE path=\".config\"\n>>>>>>> END\n\
               <<<<<<< MOVE from=\".config\" to=\"c\"\n>>>>>>> END\n\
               <<<<<<< WRITE path=\".config/other.txt\"\ny\n>>>>>>> END\n";
    let r = apply_with(root, doc);
    assert_eq!(
        kinds(&r),
        [
            Some(ErrorType::PathEscape),
            Some(ErrorType::PathEscape),
            Some(ErrorType::PathEscape),
            None
        ]
    );
    assert!(!dir.join(".config/clada/approvals.json").exists());
}

#[test]
fn handles_follow_a_moved_directory() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let doc = "<<<<<<< TASKS\n\
               <<<<<<< WRITE path=\"a/f.txt\"\nold\n>>>>>>> END\n\
               <<<<<<< MOVE from=\"a\" to=\"b\"\n>>>>>>> END\n\
               <<<<<<< SEARCH path=\"a/f.txt\"\nold\n=======\nnew\n>>>>>>> REPLACE\n\
               >>>>>>> TASKS\n";
    let r = apply(root, doc);
    assert_eq!(
        r[2].error.as_ref().map(|e| e.kind),
        Some(ErrorType::FileNotFound),
        "{r:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("b/f.txt")).unwrap(),
        "old\n"
    );
    // And a removed one.
    let doc = "<<<<<<< WRITE path=\"c/f.txt\"\nold\n>>>>>>> END\n\
               <<<<<<< REMOVE path=\"c\"\n>>>>>>> END\n\
               <<<<<<< WRITE path=\"c/f.txt\"\nnew\n>>>>>>> END\n";
    let r = apply(root, doc);
    assert!(r.iter().all(|r| r.status == TaskStatus::Success), "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(root.join("c/f.txt")).unwrap(),
        "new\n"
    );
}
