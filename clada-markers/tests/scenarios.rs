//! codex's own apply-patch scenarios (`corpus/codex-scenarios/`, see its
//! README): each patch read with `--dialect codex` and applied without git
//! must leave exactly the tree codex leaves.

use std::path::Path;

use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::{Apply, ParseOptions};

use crate::apply::{copy_tree, read_tree, show};

/// The scenarios where clada decides otherwise than codex, each with the
/// reason (PROTOCOL §11.2). A listed scenario must still fail: one that
/// passes is taken off the list.
const NOT_YET: &[(&str, &str)] = &[(
    "lenient_2_trimmed",
    "clada asks for one uniform indentation shift: lines off by 2 and 4 are \
     indentation_mismatch, where codex's trimmed pass writes the patch's \
     lines as they stand, unindented",
)];

pub(crate) fn codex_scenario(patch: &Path) -> datatest_stable::Result<()> {
    let case = patch.parent().ok_or("scenario without a directory")?;
    let name = case
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("bad scenario name")?;
    let scratch = tempfile::tempdir()?;
    let root = scratch.path().join("root");
    std::fs::create_dir(&root)?;
    if case.join("input").is_dir() {
        copy_tree(&case.join("input"), &root);
    }
    let text = std::fs::read_to_string(patch)?;
    let doc = parse_dialect(&text, Dialect::Codex, ParseOptions::default());
    let report = Apply::new(&root)?.git(None).run(&doc);
    let json = serde_json::to_string_pretty(&report).unwrap_or_default();
    let want = read_tree(&case.join("expected"));
    let got = read_tree(&root);
    let same = got == want;
    match NOT_YET.iter().find(|(n, _)| *n == name) {
        Some((_, why)) => assert!(
            !same,
            "{name} now gives codex's tree: take it off NOT_YET ({why})"
        ),
        None => assert!(
            same,
            "{name}: the tree differs from codex's\n--- codex\n{}--- clada\n{}report:\n{json}",
            show(&want),
            show(&got)
        ),
    }
    Ok(())
}
