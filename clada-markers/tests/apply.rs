//! The apply corpus harness: builds a case's tree in a scratch directory,
//! applies its document, and compares exit code, task outcomes and the
//! whole tree with what the case expects.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use clada_markers::dialect::{Dialect, parse_dialect};
use clada_markers::engine::Atomic;
use clada_markers::report::{ResendEntry, Schema, TaskStatus};
use clada_markers::{Apply, ParseOptions, Position};

/// What is at a path, for comparing trees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    Dir,
    File(Vec<u8>),
    Link(String),
}

#[derive(Debug, Default)]
struct Expect {
    exit: Option<u8>,
    tasks: BTreeMap<usize, String>,
    allow_escape: bool,
    /// `allow-empty`: a document without any task is not an error.
    allow_empty: bool,
    symlinks: Vec<(String, String)>,
    /// `hardlink PATH TARGET`: another name of the input file TARGET.
    hardlinks: Vec<(String, String)>,
    modes: Vec<(String, u32)>,
    expect_symlinks: Vec<(String, String)>,
    expect_modes: Vec<(String, u32)>,
    outside: Vec<(String, String)>,
    expect_outside: Vec<(String, String)>,
    dry_run: bool,
    atomic: Option<Atomic>,
    /// `change KIND PATH` lines: what a dry run reports.
    changes: Option<Vec<String>>,
    /// `diff-line PATH TEXT`: a line the dry run's diff of PATH has.
    diff_lines: Vec<(String, String)>,
    /// `at task|block N L:C-L:C`: the start and end (line:column) of a
    /// task or block in the report.
    at: Vec<(String, usize, String)>,
    /// `ranges N A-B …`: the occurrence ranges of task N's failed match.
    ranges: Vec<(usize, String)>,
    /// `resend applied|failed|skipped N …`: the report's resend list (an
    /// edit no task came of as `line:N`).
    resend: Vec<(String, String)>,
    /// `dialect clada|aider|codex|cml|udiff|cline|auto`: how to read the
    /// document (default clada).
    dialect: Option<String>,
    /// `hint N TEXT`: task N's error hint holds TEXT.
    hints: Vec<(usize, String)>,
    /// `note N TEXT`: block N's note holds TEXT.
    notes: Vec<(usize, String)>,
    /// `match exact|whitespace`: `--match` (default whitespace).
    exact: bool,
    /// `matched N HOW [SHIFT]`: how task N's edit found its text, and the
    /// shift of its replacement (`+4`, `-2`; none when absent).
    matched: Vec<(usize, String, Option<i64>)>,
    /// `twice`: the document is applied a second time, after which the
    /// tree is still `expected/` (no byte changed).
    twice: bool,
    /// `again N OUTCOME`: task N's outcome in the second run.
    again: BTreeMap<usize, String>,
    /// `again-exit N`: the second run's exit code.
    again_exit: Option<u8>,
    /// `diagnostic error|warning KIND LINE`: a diagnostic of the document.
    diagnostics: Vec<String>,
    /// `closest-path N PATH`: task N's error names PATH as the closest
    /// existing path.
    closest_paths: Vec<(usize, String)>,
    /// `excerpt N LINE`: task N's error shows an occurrence at LINE with
    /// the lines around it.
    excerpts: Vec<(usize, usize)>,
    /// `report-dialect D`: the report names dialect D.
    report_dialect: Option<String>,
    /// `chosen N CANDIDATES HINT`: task N's line hint HINT chose among
    /// CANDIDATES equal occurrences; `chosen N CANDIDATES order`: the
    /// order of the file's hunks did.
    chosen: Vec<(usize, usize, Option<usize>)>,
}

impl Expect {
    fn read(text: &str) -> Result<Self, String> {
        let mut e = Expect::default();
        for (n, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            let w: Vec<&str> = line.split_whitespace().collect();
            let bad = || format!("expect line {}: cannot read `{raw}`", n + 1);
            let num = |s: &str| s.parse::<usize>().map_err(|_| bad());
            let mode = |s: &str| u32::from_str_radix(s, 8).map_err(|_| bad());
            match w.as_slice() {
                [] => {}
                ["exit", c] => e.exit = Some(c.parse().map_err(|_| bad())?),
                ["task", k, "success"] => {
                    e.tasks.insert(num(k)?, "success".into());
                }
                ["task", k, "skipped"] => {
                    e.tasks.insert(num(k)?, "skipped".into());
                }
                ["task", k, "already_applied"] => {
                    e.tasks.insert(num(k)?, "already_applied".into());
                }
                ["task", k, "failed", t] => {
                    e.tasks.insert(num(k)?, format!("failed {t}"));
                }
                ["task", k, "rolled-back"] => {
                    e.tasks.insert(num(k)?, "rolled-back".into());
                }
                ["again", k, outcome @ ..] => {
                    e.again.insert(num(k)?, outcome.join(" "));
                }
                ["twice"] => e.twice = true,
                ["again-exit", c] => e.again_exit = Some(c.parse().map_err(|_| bad())?),
                ["match", "exact"] => e.exact = true,
                ["match", "whitespace"] => e.exact = false,
                ["matched", k, how] => e.matched.push((num(k)?, (*how).into(), None)),
                ["matched", k, how, by] => {
                    let by = by.parse::<i64>().map_err(|_| bad())?;
                    e.matched.push((num(k)?, (*how).into(), Some(by)));
                }
                ["diagnostic", sev @ ("error" | "warning"), kind, line] => {
                    num(line)?;
                    e.diagnostics.push(format!("{sev} {kind} {line}"));
                }
                ["closest-path", k, p] => e.closest_paths.push((num(k)?, (*p).into())),
                ["excerpt", k, line] => e.excerpts.push((num(k)?, num(line)?)),
                ["report-dialect", d] => e.report_dialect = Some((*d).into()),
                ["chosen", k, c, "order"] => e.chosen.push((num(k)?, num(c)?, None)),
                ["chosen", k, c, h] => e.chosen.push((num(k)?, num(c)?, Some(num(h)?))),
                ["allow-escape"] => e.allow_escape = true,
                ["allow-empty"] => e.allow_empty = true,
                ["dry-run"] => e.dry_run = true,
                ["atomic"] => e.atomic = Some(Atomic::Unit),
                ["atomic", "document"] => e.atomic = Some(Atomic::Document),
                ["change", kind, p] => e
                    .changes
                    .get_or_insert_with(Vec::new)
                    .push(format!("{kind} {p}")),
                ["diff-line", p, ..] => {
                    let text = raw.trim_start()["diff-line".len()..].trim_start();
                    let text = text[p.len()..].strip_prefix(' ').unwrap_or_default();
                    e.diff_lines.push(((*p).into(), text.to_owned()));
                }
                ["at", what @ ("task" | "block"), k, place] => {
                    e.at.push(((*what).into(), num(k)?, (*place).into()));
                }
                ["ranges", k, rs @ ..] => e.ranges.push((num(k)?, rs.join(" "))),
                [
                    "resend",
                    list
                    @ ("applied" | "already_applied" | "failed" | "needs_approval" | "skipped"),
                    ns @ ..,
                ] => {
                    e.resend.push(((*list).into(), ns.join(" ")));
                }
                [
                    "dialect",
                    d @ ("clada" | "aider" | "codex" | "cml" | "udiff" | "cline" | "auto"),
                ] => e.dialect = Some((*d).into()),
                ["hint", k, ..] => {
                    let text = raw.trim_start()["hint".len()..].trim_start();
                    let text = text[k.len()..].trim_start();
                    e.hints.push((num(k)?, text.to_owned()));
                }
                ["note", k, ..] => {
                    let text = raw.trim_start()["note".len()..].trim_start();
                    let text = text[k.len()..].trim_start();
                    e.notes.push((num(k)?, text.to_owned()));
                }
                ["symlink", p, t] => e.symlinks.push(((*p).into(), (*t).into())),
                ["hardlink", p, t] => e.hardlinks.push(((*p).into(), (*t).into())),
                ["mode", p, m] => e.modes.push(((*p).into(), mode(m)?)),
                ["expect-symlink", p, t] => e.expect_symlinks.push(((*p).into(), (*t).into())),
                ["expect-mode", p, m] => e.expect_modes.push(((*p).into(), mode(m)?)),
                ["outside", p, c] => e.outside.push(((*p).into(), (*c).into())),
                ["expect-outside", p, c] => e.expect_outside.push(((*p).into(), (*c).into())),
                _ => return Err(bad()),
            }
        }
        Ok(e)
    }
}

/// Reads a tree: every directory, file and link below `dir`, by relative
/// path; `.gitkeep` files are left out.
pub(crate) fn read_tree(dir: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
        if p.file_name().is_some_and(|n| n == ".gitkeep") {
            continue;
        }
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&p)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.insert(rel, Entry::Link(target));
        } else if meta.is_dir() {
            out.insert(rel, Entry::Dir);
            walk(base, &p, out);
        } else {
            out.insert(rel, Entry::File(std::fs::read(&p).unwrap()));
        }
    }
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (rel, entry) in read_tree(from) {
        let dest = to.join(&rel);
        match entry {
            Entry::Dir => std::fs::create_dir_all(&dest).unwrap(),
            Entry::File(bytes) => std::fs::write(&dest, bytes).unwrap(),
            Entry::Link(target) => std::os::unix::fs::symlink(target, &dest).unwrap(),
        }
    }
}

pub(crate) fn show(tree: &BTreeMap<String, Entry>) -> String {
    tree.iter()
        .map(|(p, e)| match e {
            Entry::Dir => format!("{p}/\n"),
            Entry::File(b) => format!("{p}: {:?}\n", String::from_utf8_lossy(b)),
            Entry::Link(t) => format!("{p} -> {t}\n"),
        })
        .collect()
}

pub(crate) fn apply_case(patch: &Path) -> datatest_stable::Result<()> {
    let case = patch.parent().ok_or("case without a directory")?;
    let expect = Expect::read(&std::fs::read_to_string(case.join("expect"))?)?;
    let document = std::fs::read(patch)?;

    let scratch = tempfile::tempdir()?;
    let root_dir = scratch.path().join("root");
    copy_tree(&case.join("input"), &root_dir);
    for (p, t) in &expect.symlinks {
        let at = root_dir.join(p);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::os::unix::fs::symlink(t, at)?;
    }
    for (p, t) in &expect.hardlinks {
        std::fs::hard_link(root_dir.join(t), root_dir.join(p))?;
    }
    for (p, m) in &expect.modes {
        std::fs::set_permissions(root_dir.join(p), std::fs::Permissions::from_mode(*m))?;
    }
    for (p, c) in &expect.outside {
        let at = scratch.path().join(p);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(at, c)?;
    }

    let text = std::str::from_utf8(&document)?;
    let dialect = match expect.dialect.as_deref() {
        Some("auto") => clada_markers::dialect::detect(text),
        Some(name) => Dialect::named(name).unwrap_or_default(),
        None => Dialect::Clada,
    };
    let doc = parse_dialect(
        text,
        dialect,
        ParseOptions {
            allow_escape: expect.allow_escape,
        },
    );
    // What the command line does, without git and without clada's own
    // directories: built-in commands run (on the plan in a dry run), and
    // nothing else is approved.
    let mode = if expect.exact {
        clada_markers::MatchMode::Exact
    } else {
        clada_markers::MatchMode::Whitespace
    };
    let settings = clada_markers::Settings {
        dialect,
        git: None,
        allow_escape: expect.allow_escape,
        dry_run: expect.dry_run,
        atomic: expect.atomic,
        matching: mode,
        allow_empty: expect.allow_empty,
        ..Default::default()
    };
    let run = || -> std::io::Result<clada_markers::ApplyReport> {
        Ok(Apply::new(&root_dir)?.settings(settings.clone()).run(&doc))
    };
    let report = run()?;
    let json = serde_json::to_string_pretty(&report).unwrap_or_default();
    crate::common::assert_matches_schema(Schema::Apply, &report);
    crate::common::assert_resend_partitions(&report, &doc);

    let outcomes: BTreeMap<usize, String> = report
        .blocks
        .iter()
        .flat_map(|b| &b.tasks)
        .map(|t| {
            let o = match (t.status, &t.error) {
                (TaskStatus::Success, _) if t.rolled_back => "rolled-back".to_owned(),
                (TaskStatus::Success, _) => "success".to_owned(),
                (TaskStatus::Skipped, _) => "skipped".to_owned(),
                (TaskStatus::AlreadyApplied, _) => "already_applied".to_owned(),
                (TaskStatus::Failed, Some(e)) => format!("failed {}", e.kind),
                (TaskStatus::Failed, None) => "failed ?".to_owned(),
            };
            (t.number, o)
        })
        .collect();
    assert_eq!(outcomes, expect.tasks, "task outcomes; report:\n{json}");
    if let Some(exit) = expect.exit {
        assert_eq!(report.exit_code(), exit, "exit code; report:\n{json}");
    }

    if let Some(want) = &expect.changes {
        let got: Vec<String> = report
            .changes
            .iter()
            .flatten()
            .map(|c| format!("{} {}", c.change, c.path))
            .collect();
        assert_eq!(&got, want, "changes; report:\n{json}");
    }
    let place = |start: &Option<Position>, end: &Option<Position>| match (start, end) {
        (Some(a), Some(b)) => format!("{}:{}-{}:{}", a.line, a.column, b.line, b.column),
        _ => "none".to_owned(),
    };
    for (what, n, want) in &expect.at {
        let got = if what == "block" {
            report
                .blocks
                .iter()
                .find(|b| b.number == *n)
                .map(|b| place(&b.start, &b.end))
        } else {
            report
                .blocks
                .iter()
                .flat_map(|b| &b.tasks)
                .find(|t| t.number == *n)
                .map(|t| place(&t.start, &t.end))
        };
        assert_eq!(
            got.as_ref(),
            Some(want),
            "{what} {n} position; report:\n{json}"
        );
    }
    for (n, want) in &expect.ranges {
        let got = report
            .blocks
            .iter()
            .flat_map(|b| &b.tasks)
            .find(|t| t.number == *n)
            .and_then(|t| t.error.as_ref())
            .and_then(|e| e.ranges.as_ref())
            .map(|rs| {
                rs.iter()
                    .map(|[a, b]| format!("{a}-{b}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        assert_eq!(
            got.as_ref(),
            Some(want),
            "ranges of task {n}; report:\n{json}"
        );
    }
    for (n, want) in &expect.hints {
        let hint = report
            .blocks
            .iter()
            .flat_map(|b| &b.tasks)
            .find(|t| t.number == *n)
            .and_then(|t| t.error.as_ref())
            .and_then(|e| e.hint.clone())
            .unwrap_or_default();
        assert!(
            hint.contains(want.as_str()),
            "task {n}'s hint `{hint}` lacks `{want}`"
        );
    }
    for (n, want) in &expect.notes {
        let note = report
            .blocks
            .iter()
            .find(|b| b.number == *n)
            .and_then(|b| b.note.clone())
            .unwrap_or_default();
        assert!(
            note.contains(want.as_str()),
            "block {n}'s note `{note}` lacks `{want}`"
        );
    }
    let task = |n: usize| {
        report
            .blocks
            .iter()
            .flat_map(|b| &b.tasks)
            .find(|t| t.number == n)
    };
    for (n, how, by) in &expect.matched {
        let t = task(*n);
        let got = t.and_then(|t| t.matched).map(|m| m.as_str().to_owned());
        assert_eq!(
            got.as_deref(),
            Some(how.as_str()),
            "task {n} matched; report:\n{json}"
        );
        let shift = t.and_then(|t| t.shift.as_ref()).map(|s| s.by);
        assert_eq!(shift, *by, "task {n}'s shift; report:\n{json}");
    }
    for (n, candidates, hint) in &expect.chosen {
        let got = task(*n).and_then(|t| t.chosen.as_ref()).map(|c| {
            let by = if c.hint.is_some() {
                clada_markers::report::ChosenBy::Line
            } else {
                clada_markers::report::ChosenBy::Order
            };
            assert_eq!(c.by, by, "task {n}'s chooser; report:\n{json}");
            (c.candidates, c.hint)
        });
        assert_eq!(
            got,
            Some((*candidates, *hint)),
            "task {n}'s chosen candidate; report:\n{json}"
        );
    }
    for (n, path) in &expect.closest_paths {
        let got = task(*n)
            .and_then(|t| t.error.as_ref())
            .and_then(|e| e.closest_path.clone());
        assert_eq!(
            got.as_ref(),
            Some(path),
            "task {n}'s closest path; report:\n{json}"
        );
    }
    for (n, line) in &expect.excerpts {
        let e = task(*n).and_then(|t| t.error.as_ref());
        let x = e.and_then(|e| e.excerpts.iter().find(|x| x.line == *line));
        let x = x.unwrap_or_else(|| {
            panic!("task {n} shows no occurrence at line {line}; report:\n{json}")
        });
        // A line either side, where there is one.
        assert!(
            x.start_line < x.line || x.line == 1,
            "no line before: {x:?}"
        );
        assert!(x.text.len() >= 2, "no line after: {x:?}");
    }
    if let Some(d) = &expect.report_dialect {
        assert_eq!(report.dialect.name(), d, "the report's dialect");
    }
    if !expect.diagnostics.is_empty() {
        // As the run reports them (a document without a task is an error
        // of `apply`, not of the parse).
        let mut got: Vec<String> = report
            .diagnostics
            .iter()
            .map(|d| {
                let sev = if d.severity == clada_markers::Severity::Error {
                    "error"
                } else {
                    "warning"
                };
                format!("{sev} {} {}", d.kind, d.start.line)
            })
            .collect();
        got.sort();
        let mut want = expect.diagnostics.clone();
        want.sort();
        assert_eq!(got, want, "the report's diagnostics");
    }
    for (list, want) in &expect.resend {
        let r = report.resend.clone().unwrap_or_default();
        let numbers = |ns: Vec<usize>| ns.iter().map(usize::to_string).collect::<Vec<_>>();
        // An edit no task came of: `line:N`, where it starts.
        let got: Vec<String> = match list.as_str() {
            "applied" => numbers(r.applied),
            "already_applied" => numbers(r.already_applied),
            "failed" => r
                .failed
                .iter()
                .map(|e| match e {
                    ResendEntry::Task(n) => n.to_string(),
                    ResendEntry::Edit(u) => format!("line:{}", u.line),
                })
                .collect(),
            "needs_approval" => numbers(r.needs_approval),
            _ => numbers(r.skipped),
        };
        assert_eq!(&got.join(" "), want, "resend {list}; report:\n{json}");
    }
    for (p, line) in &expect.diff_lines {
        let diff = report
            .changes
            .iter()
            .flatten()
            .find(|c| &c.path == p && c.diff.is_some())
            .and_then(|c| c.diff.as_deref())
            .unwrap_or_default();
        assert!(
            diff.lines().any(|l| l == line),
            "the diff of {p} has no line `{line}`; report:\n{json}"
        );
    }

    let mut want = read_tree(&case.join("expected"));
    for (p, t) in &expect.expect_symlinks {
        want.insert(p.clone(), Entry::Link(t.clone()));
    }
    let got = read_tree(&root_dir);
    assert!(
        got == want,
        "tree after apply differs\n--- expected\n{}--- got\n{}report:\n{json}",
        show(&want),
        show(&got)
    );
    if expect.twice {
        // The same reply again changes no byte.
        let second = run()?;
        let json = serde_json::to_string_pretty(&second).unwrap_or_default();
        let outcomes: BTreeMap<usize, String> = second
            .blocks
            .iter()
            .flat_map(|b| &b.tasks)
            .map(|t| {
                let o = match (t.status, &t.error) {
                    (TaskStatus::Success, _) => "success".to_owned(),
                    (TaskStatus::Skipped, _) => "skipped".to_owned(),
                    (TaskStatus::AlreadyApplied, _) => "already_applied".to_owned(),
                    (TaskStatus::Failed, Some(e)) => format!("failed {}", e.kind),
                    (TaskStatus::Failed, None) => "failed ?".to_owned(),
                };
                (t.number, o)
            })
            .collect();
        assert_eq!(outcomes, expect.again, "second run; report:\n{json}");
        if let Some(exit) = expect.again_exit {
            assert_eq!(
                second.exit_code(),
                exit,
                "second run's exit code; report:\n{json}"
            );
        }
        let again = read_tree(&root_dir);
        assert!(
            again == want,
            "the second run changed the tree\n--- expected\n{}--- got\n{}report:\n{json}",
            show(&want),
            show(&again)
        );
    }
    for (p, m) in &expect.expect_modes {
        let mode = std::fs::metadata(root_dir.join(p))?.permissions().mode() & 0o7777;
        assert_eq!(mode, *m, "mode of {p}");
    }
    for (p, c) in &expect.expect_outside {
        let now = std::fs::read_to_string(scratch.path().join(p))?;
        assert_eq!(&now, c, "file outside the root: {p}");
    }
    Ok(())
}
