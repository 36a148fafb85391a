//! Real history (`corpus/udiff-history/`, see its README): each commit's
//! `git diff` applied to its parent's files with `--dialect udiff` leaves
//! the tree `git apply` leaves, with the hunk numbers and without them.

use std::collections::BTreeMap;
use std::path::Path;

use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::report::TaskStatus;
use clada_markers::{Apply, ParseOptions};

use crate::apply::{Entry, copy_tree, read_tree};

/// Commits with a hunk whose text occurs more than once in its file. With
/// their `@@` numbers, the line hint chooses and they give git apply's
/// tree; without them the order of the file's hunks cannot choose either:
/// each must fail with that ambiguity and leave its files as they were.
/// (`086-a6a31c7b82` was one: the order of its hunks chooses now, PROTOCOL
/// §11.8; `032-94197cb25d` and `034-a39cec8e1d` were too, until hunks
/// matched whole lines only.)
const AMBIGUOUS: &[&str] = &[];

/// `@@ -1,3 +1,4 @@ f` becomes `@@ @@ f`.
fn strip_numbers(patch: &str) -> String {
    patch
        .split_inclusive('\n')
        .map(
            |line| match line.strip_prefix("@@ -").and_then(|r| r.find("@@")) {
                Some(end) => format!("@@ @@{}", &line[4 + end + 2..]),
                None => line.to_owned(),
            },
        )
        .collect()
}

/// The tree as `after` writes it: git's blob hash and path of each file.
fn manifest(tree: &BTreeMap<String, Entry>) -> String {
    tree.iter()
        .filter_map(|(path, e)| match e {
            Entry::File(data) => {
                let id = git2::Oid::hash_object(git2::ObjectType::Blob, data).ok()?;
                Some(format!("{id} {path}\n"))
            }
            _ => None,
        })
        .collect()
}

pub(crate) fn udiff_history(patch: &Path) -> datatest_stable::Result<()> {
    let case = patch.parent().ok_or("a case without a directory")?;
    let name = case
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("bad name")?;
    let text = std::fs::read_to_string(patch)?;
    let want = std::fs::read_to_string(case.join("after"))?;
    let ambiguous = AMBIGUOUS.contains(&name);
    for (numbered, patch) in [(true, text.clone()), (false, strip_numbers(&text))] {
        let how = if numbered {
            "numbered"
        } else {
            "without numbers"
        };
        let waiting = ambiguous && !numbered;
        let scratch = tempfile::tempdir()?;
        let root = scratch.path().join("root");
        copy_tree(&case.join("before"), &root);
        let before = manifest(&read_tree(&root));
        let doc = parse_dialect(&patch, Dialect::Udiff, ParseOptions::default());
        assert!(!doc.has_errors(), "{name} ({how}): {:?}", doc.diagnostics);
        let report = Apply::new(&root)?.git(None).run(&doc);
        let got = manifest(&read_tree(&root));
        if waiting {
            let failed: Vec<_> = report
                .blocks
                .iter()
                .flat_map(|b| &b.tasks)
                .filter(|t| t.status == TaskStatus::Failed)
                .collect();
            assert!(
                !report.ok,
                "{name} ({how}) applies: it is not ambiguous (take it out of AMBIGUOUS)"
            );
            assert!(
                failed.iter().all(|t| t
                    .error
                    .as_ref()
                    .is_some_and(|e| e.found.is_some_and(|f| f > 1))),
                "{name} ({how}): a failure other than an ambiguity"
            );
            // Its files are all or none: the files of the failed blocks
            // are as they were.
            for b in report
                .blocks
                .iter()
                .filter(|b| b.tasks.iter().any(|t| t.status == TaskStatus::Failed))
            {
                for t in &b.tasks {
                    let p = t.path.clone().unwrap_or_default();
                    let line = |m: &str| {
                        m.lines()
                            .find(|l| l.ends_with(&format!(" {p}")))
                            .map(str::to_owned)
                    };
                    assert_eq!(line(&got), line(&before), "{name} ({how}): {p} changed");
                }
            }
        } else {
            let json = serde_json::to_string_pretty(&report).unwrap_or_default();
            assert!(report.ok, "{name} ({how}) failed:\n{json}");
            assert_eq!(
                got, want,
                "{name} ({how}): the tree differs from git apply's"
            );
        }
    }
    Ok(())
}
