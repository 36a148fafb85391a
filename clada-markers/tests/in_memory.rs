//! The attack corpus (`corpus/security/`) through [`apply_files`]: each
//! case's documents applied to files in memory made from its `file`
//! lines. Whatever a case attempts, nothing panics, every file of the
//! result is named by a normal path below the root (nothing escapes the
//! map), and the secret beside the root, which the map does not hold,
//! appears nowhere. Links, pipes and directories of a case have no
//! counterpart in memory (the map holds files only).

use std::collections::BTreeMap;
use std::path::Path;

use clada_markers::dialect::{Dialect, detect};
use clada_markers::engine::Atomic;
use clada_markers::{FilesError, Settings, apply_files};

const SECRET: &str = "clada-secret-7d1f0c";

/// The case's `file` lines, and its settings from its `flag` lines.
fn set_up(expect: &str) -> (BTreeMap<String, Vec<u8>>, Settings, Option<Dialect>) {
    let mut files = BTreeMap::new();
    let mut settings = Settings::default();
    let mut dialect = None;
    let mut lines = expect.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("file ") {
            let (path, content) = rest.split_once(' ').unwrap_or((rest, ""));
            files.insert(path.to_owned(), content.replace("\\n", "\n").into_bytes());
        } else if let Some(flag) = line.strip_prefix("flag ") {
            match flag {
                "--atomic" => settings.atomic = Some(Atomic::Unit),
                "--dry-run" => settings.dry_run = true,
                "--allow-escape" => settings.allow_escape = true,
                "--dialect" => {
                    let name = lines.peek().and_then(|l| l.strip_prefix("flag "));
                    dialect = match name {
                        Some("aider") => Some(Dialect::Aider),
                        Some("codex") => Some(Dialect::Codex),
                        Some("cml") => Some(Dialect::Cml),
                        Some("udiff") => Some(Dialect::Udiff),
                        Some("cline") => Some(Dialect::Cline),
                        _ => None,
                    };
                }
                _ => {}
            }
        }
    }
    (files, settings, dialect)
}

fn fill(doc: &str) -> String {
    doc.replace("{ROOT}", "/tmp/case/root")
        .replace("{OUTSIDE}", "/tmp/case/outside")
        .replace("{SECRET}", "/tmp/case/secret.txt")
        .replace("{TMP}", "/tmp/case/tmp")
}

/// Runs one case; `Err` says what broke a promise.
fn run_case(dir: &Path) -> Result<(), String> {
    let expect = std::fs::read_to_string(dir.join("expect")).unwrap_or_default();
    let (mut files, mut settings, dialect) = set_up(&expect);
    for name in ["doc.md", "doc2.md"] {
        let Ok(doc) = std::fs::read_to_string(dir.join(name)) else {
            continue;
        };
        let doc = fill(&doc);
        settings.dialect = dialect.unwrap_or_else(|| detect(&doc));
        let before = files.clone();
        let run = std::panic::catch_unwind(|| apply_files(&doc, before, &settings));
        let (after, report) = match run {
            Err(_) => return Err(format!("{name}: panicked")),
            // A case's own map may be refused (a file under a file): said
            // with the path, never applied in part.
            Ok(Err(FilesError::FileAndDirectory { .. } | FilesError::BadPath { .. })) => {
                return Ok(());
            }
            Ok(Err(e)) => return Err(format!("{name}: {e}")),
            Ok(Ok(done)) => done,
        };
        let json = serde_json::to_string(&report).unwrap();
        if json.contains(SECRET) {
            return Err(format!("{name}: the report holds the secret"));
        }
        // Every path of the result is one the map may hold: fed back, it
        // is accepted.
        if let Err(e) = apply_files("", after.clone(), &Settings::default()) {
            return Err(format!(
                "{name}: the result holds a path out of the map: {e}"
            ));
        }
        if after
            .values()
            .any(|c| c.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()))
        {
            return Err(format!("{name}: a file holds the secret"));
        }
        files = after;
    }
    Ok(())
}

#[test]
fn the_attack_corpus_escapes_nothing_in_memory() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/security");
    let mut cases: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() > 100, "{} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| run_case(c).err().map(|e| format!("{}: {e}", c.display())))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn keys_that_are_not_normal_paths_are_refused_by_name() {
    for key in [
        "a/../b",
        "./a",
        "a//b",
        "/etc/passwd",
        "a/",
        "",
        "..",
        "a\\b",
        "a/./b",
    ] {
        let files = BTreeMap::from([(key.to_owned(), b"x".to_vec())]);
        match apply_files("", files, &Settings::default()) {
            Err(e @ FilesError::BadPath { .. }) => {
                assert_eq!(e.path(), Some(key));
                assert_eq!(e.error_type(), clada_markers::ErrorType::PathEscape);
                assert!(e.to_string().contains(&format!("{key:?}")), "{e}");
            }
            other => panic!("{key:?}: {other:?}"),
        }
    }
    let files = BTreeMap::from([
        ("a".to_owned(), b"x".to_vec()),
        ("a/b".to_owned(), b"y".to_vec()),
    ]);
    assert!(matches!(
        apply_files("", files, &Settings::default()),
        Err(FilesError::FileAndDirectory { path, below }) if path == "a" && below == "a/b"
    ));
}

#[test]
fn over_the_limits_is_an_error_before_anything_runs() {
    let big = "x".repeat(clada_markers::syntax::MAX_DOCUMENT_SIZE + 1);
    assert!(matches!(
        apply_files(&big, BTreeMap::new(), &Settings::default()),
        Err(FilesError::DocumentTooLarge { .. })
    ));
    // Eight files of 50 MiB and one byte more.
    let chunk = vec![b'a'; clada_markers::syntax::MAX_DOCUMENT_SIZE];
    let mut files: BTreeMap<String, Vec<u8>> =
        (0..8).map(|i| (format!("f{i}"), chunk.clone())).collect();
    files.insert("one".to_owned(), b"1".to_vec());
    let err = apply_files("", files, &Settings::default()).unwrap_err();
    assert_eq!(err.error_type(), clada_markers::ErrorType::InputTooLarge);
}

#[test]
fn bytes_stay_bytes_and_links_and_commands_do_not_exist() {
    let files = BTreeMap::from([
        ("crlf.txt".to_owned(), b"\xef\xbb\xbfone\r\ntwo".to_vec()),
        ("bin".to_owned(), vec![0xff, 0xfe, b'\n']),
    ]);
    let doc = "<<<<<<< SEARCH path=\"crlf.txt\"\ntwo\n=======\n2\n>>>>>>> REPLACE\n\
               <<<<<<< SEARCH path=\"bin\"\nx\n=======\ny\n>>>>>>> REPLACE\n\
               <<<<<<< RUN\nmkdir made\n>>>>>>> END\n\
               <<<<<<< REMOVE path=\"gone\"\n>>>>>>> END\n";
    let (after, report) = apply_files(doc, files.clone(), &Settings::default()).unwrap();
    assert_eq!(after["crlf.txt"], b"\xef\xbb\xbfone\r\n2");
    assert_eq!(after["bin"], files["bin"]);
    assert!(!after.contains_key("made"));
    let statuses: Vec<String> = report
        .blocks
        .iter()
        .flat_map(|b| &b.tasks)
        .map(|t| format!("{:?} {}", t.status, t.message))
        .collect();
    assert!(statuses[0].starts_with("Success"), "{statuses:?}");
    assert!(statuses[1].starts_with("Failed"), "{statuses:?}");
    assert!(
        statuses[2].starts_with("Skipped") && statuses[2].contains("in memory"),
        "{statuses:?}"
    );
    assert!(statuses[3].starts_with("Failed"), "{statuses:?}");
    assert!(!report.ok);
}
