//! The engine against a plain model of the tree: random sequences of WRITE,
//! SEARCH, MOVE and REMOVE, as single tasks and in TASKS blocks, applied
//! to a real directory by the engine and to an in-memory tree by the
//! model, must leave the same tree and report the same statuses. Stale
//! directory handles, lost staged writes and wrong targets of a move all
//! show up as a difference. The same holds with `--atomic` (a failed unit
//! leaves the model as it was) and `--atomic=document` (a failure leaves
//! the start), and a dry run predicts the real run: the same statuses, and
//! a change reported for every path the real run changes, as it changes
//! it. Directories nest, so moves carry whole subtrees (a file moved with
//! its directory must be found, read and edited under its new path).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::engine::fs::Root;
use crate::engine::view::Change;
use crate::engine::{self, Atomic, NoCommands, Quiet, Settings, Tuning};
use crate::status::TaskStatus;
use crate::{ParseOptions, parse_with};
use proptest::prelude::*;

/// Directories nest three deep, so that moves carry directories that hold
/// directories, into directories and out of them.
const PATHS: &[&str] = &[
    "a", "b", "d", "e", "d/a", "d/b", "d/c", "d/c/a", "e/a", "e/d", "e/d/b",
];
const TARGETS: &[&str] = &[
    "a", "b", "d", "e", "d/a", "d/b", "d/c", "d/c/a", "e/a", "e/d", "e/d/b", "d/", "e/", "d/c/",
    "e/d/",
];
const CONTENTS: &[&str] = &["one\n", "two\n", "one\ntwo\n"];

#[derive(Clone, Debug)]
enum Op {
    Write(&'static str, &'static str),
    /// Replaces `one\n` by `three\n`, exactly once.
    Search(&'static str),
    Move(&'static str, &'static str),
    Remove(&'static str),
}

#[derive(Clone, Debug)]
enum UnitSpec {
    Single(Op),
    Block(Vec<Op>),
}

fn op() -> impl Strategy<Value = Op> {
    let path = proptest::sample::select(PATHS);
    prop_oneof![
        (path.clone(), proptest::sample::select(CONTENTS)).prop_map(|(p, c)| Op::Write(p, c)),
        path.clone().prop_map(Op::Search),
        (path.clone(), proptest::sample::select(TARGETS)).prop_map(|(f, t)| Op::Move(f, t)),
        path.prop_map(Op::Remove),
    ]
}

fn units() -> impl Strategy<Value = Vec<UnitSpec>> {
    let unit = prop_oneof![
        op().prop_map(UnitSpec::Single),
        proptest::collection::vec(op(), 1..5).prop_map(UnitSpec::Block),
    ];
    proptest::collection::vec(unit, 1..7)
}

fn render(op: &Op) -> String {
    match op {
        Op::Write(p, c) => format!("<<<<<<< WRITE path=\"{p}\"\n{c}>>>>>>> END\n"),
        Op::Search(p) => {
            format!("<<<<<<< SEARCH path=\"{p}\"\none\n=======\nthree\n>>>>>>> REPLACE\n")
        }
        Op::Move(f, t) => format!("<<<<<<< MOVE from=\"{f}\" to=\"{t}\"\n>>>>>>> END\n"),
        Op::Remove(p) => format!("<<<<<<< REMOVE path=\"{p}\"\n>>>>>>> END\n"),
    }
}

fn document(units: &[UnitSpec]) -> String {
    units
        .iter()
        .map(|u| match u {
            UnitSpec::Single(op) => render(op),
            UnitSpec::Block(ops) => {
                let body: String = ops.iter().map(render).collect();
                format!("<<<<<<< TASKS\n{body}>>>>>>> TASKS\n")
            }
        })
        .collect()
}

/// The tree as the protocol describes it: files with contents, and
/// directories.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Model {
    files: BTreeMap<String, String>,
    dirs: BTreeSet<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

fn parents(p: &str) -> Vec<String> {
    let parts: Vec<&str> = p.split('/').collect();
    (1..parts.len()).map(|n| parts[..n].join("/")).collect()
}

fn name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

fn below(p: &str, base: &str) -> bool {
    p.len() > base.len() && p.starts_with(base) && p.as_bytes()[base.len()] == b'/'
}

impl Model {
    fn kind(&self, p: &str) -> Option<Kind> {
        if self.files.contains_key(p) {
            Some(Kind::File)
        } else if self.dirs.contains(p) {
            Some(Kind::Dir)
        } else {
            None
        }
    }

    /// Parents that exist must be directories; missing ones are made.
    fn make_parents(&mut self, p: &str) -> Result<(), ()> {
        let ps = parents(p);
        if ps.iter().any(|q| self.kind(q) == Some(Kind::File)) {
            return Err(());
        }
        self.dirs.extend(ps);
        Ok(())
    }

    fn lookable(&self, p: &str) -> Result<Option<Kind>, ()> {
        if parents(p).iter().any(|q| self.kind(q) == Some(Kind::File)) {
            return Err(());
        }
        Ok(self.kind(p))
    }

    fn apply(&mut self, op: &Op) -> Result<(), ()> {
        match *op {
            Op::Write(p, c) => {
                if self.lookable(p)? == Some(Kind::Dir) {
                    return Err(());
                }
                self.make_parents(p)?;
                self.files.insert(p.to_owned(), c.to_owned());
                Ok(())
            }
            Op::Search(p) => {
                if self.lookable(p)? != Some(Kind::File) {
                    return Err(());
                }
                let text = &self.files[p];
                if text.matches("one\n").count() != 1 {
                    return Err(());
                }
                let new = text.replacen("one\n", "three\n", 1);
                self.files.insert(p.to_owned(), new);
                Ok(())
            }
            Op::Remove(p) => {
                if self.lookable(p)?.is_none() {
                    return Err(());
                }
                self.files.retain(|f, _| f != p && !below(f, p));
                self.dirs.retain(|d| d != p && !below(d, p));
                Ok(())
            }
            Op::Move(f, t) => {
                let from = self.lookable(f)?.ok_or(())?;
                let bare = t.trim_end_matches('/');
                let into = t.ends_with('/') || self.lookable(bare)? == Some(Kind::Dir);
                let target = if into {
                    format!("{bare}/{}", name(f))
                } else {
                    bare.to_owned()
                };
                if target == f {
                    return Ok(());
                }
                if below(&target, f) {
                    return Err(());
                }
                let existing = self.lookable(&target)?;
                match (from, existing) {
                    (Kind::File, Some(Kind::Dir)) | (Kind::Dir, Some(Kind::File)) => return Err(()),
                    (Kind::Dir, Some(Kind::Dir)) => {
                        let empty = !self.files.keys().any(|x| below(x, &target))
                            && !self.dirs.iter().any(|x| below(x, &target));
                        if !empty {
                            return Err(());
                        }
                        self.dirs.remove(&target);
                    }
                    _ => {}
                }
                self.make_parents(&target)?;
                let moved = |x: &str| format!("{target}{}", &x[f.len()..]);
                let files: Vec<(String, String)> = self
                    .files
                    .iter()
                    .filter(|(x, _)| x.as_str() == f || below(x, f))
                    .map(|(x, c)| (x.clone(), c.clone()))
                    .collect();
                let dirs: Vec<String> = self
                    .dirs
                    .iter()
                    .filter(|x| x.as_str() == f || below(x, f))
                    .cloned()
                    .collect();
                for (x, c) in files {
                    self.files.remove(&x);
                    self.files.insert(moved(&x), c);
                }
                for x in dirs {
                    self.dirs.remove(&x);
                    self.dirs.insert(moved(&x));
                }
                Ok(())
            }
        }
    }

    /// Runs the units: a block stops at its first failure and skips the
    /// rest. Returns each task's status.
    fn run(&mut self, units: &[UnitSpec]) -> Vec<TaskStatus> {
        self.run_atomic(units, None)
    }

    /// [`Model::run`], with what `--atomic` rolls back.
    fn run_atomic(&mut self, units: &[UnitSpec], atomic: Option<Atomic>) -> Vec<TaskStatus> {
        let start = self.clone();
        let mut statuses = Vec::new();
        let mut failed = false;
        for u in units {
            let ops = match u {
                UnitSpec::Single(op) => std::slice::from_ref(op),
                UnitSpec::Block(ops) => ops.as_slice(),
            };
            if failed && atomic == Some(Atomic::Document) {
                statuses.extend(ops.iter().map(|_| TaskStatus::Skipped));
                continue;
            }
            let before = self.clone();
            let mut stopped = false;
            for op in ops {
                if stopped {
                    statuses.push(TaskStatus::Skipped);
                } else if self.apply(op).is_ok() {
                    statuses.push(TaskStatus::Success);
                } else {
                    statuses.push(TaskStatus::Failed);
                    stopped = true;
                }
            }
            if stopped && atomic == Some(Atomic::Unit) {
                *self = before;
            }
            failed |= stopped;
        }
        if failed && atomic == Some(Atomic::Document) {
            *self = start;
        }
        statuses
    }
}

/// The tree on disk, as a model.
fn read_tree(root: &Path) -> Model {
    fn walk(base: &Path, dir: &Path, m: &mut Model) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                m.dirs.insert(rel);
                walk(base, &p, m);
            } else {
                m.files.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut m = Model::default();
    walk(root, root, &mut m);
    m
}

fn start() -> Model {
    let mut m = Model::default();
    m.files.insert("a".into(), "one\n".into());
    m.files.insert("d/b".into(), "one\ntwo\n".into());
    m.files.insert("d/c/a".into(), "one\n".into());
    m.dirs.insert("d".into());
    m.dirs.insert("d/c".into());
    m.dirs.insert("e".into());
    m
}

fn setup(dir: &Path, model: &Model) {
    for d in &model.dirs {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    for (f, c) in &model.files {
        std::fs::write(dir.join(f), c).unwrap();
    }
}

/// Applies `units` to a fresh tree from [`start`]; returns the statuses,
/// the tree after, and what a dry run said would change.
fn engine_run(
    units: &[UnitSpec],
    settings: &Settings,
    tuning: Tuning,
) -> (Vec<TaskStatus>, Model, Vec<Change>) {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), &start());
    let text = document(units);
    let doc = parse_with(&text, ParseOptions::default());
    assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
    let root = Root::open(dir.path()).unwrap();
    let outcome = engine::apply_with(
        &doc,
        &root,
        settings,
        tuning,
        Box::new(NoCommands),
        &mut Quiet,
    );
    let statuses = outcome
        .units
        .iter()
        .flat_map(|b| &b.tasks)
        .map(|t| t.status)
        .collect();
    // Nothing of the run's own is left behind.
    let tree = read_tree(dir.path());
    (statuses, tree, outcome.changes)
}

/// Whether `path` is `base` or below it.
fn at_or_below(path: &str, base: &str) -> bool {
    path == base || below(path, base)
}

/// Whether one of `changes` says what became of the file `p`.
fn covered(changes: &[Change], p: &str) -> bool {
    changes.iter().any(|c| match c {
        Change::File { path, .. } => path == p,
        Change::Removed { path, .. } => at_or_below(p, path),
        Change::Moved { from, to } => at_or_below(p, from) || at_or_below(p, to),
        Change::Dir { path } => at_or_below(p, path),
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_engine_and_the_model_agree(units in units()) {
        let text = document(&units);
        let mut model = start();
        let want = model.run(&units);
        let (got, tree, _) = engine_run(&units, &Settings::default(), Tuning::default());
        prop_assert_eq!(&got, &want, "statuses differ for\n{}", text);
        prop_assert_eq!(&tree, &model, "trees differ for\n{}", text);
        // Writing the view and settling after every unit, as a long
        // document does every few thousand tasks, changes nothing.
        let each = Tuning { settle_after: Some(1), ..Tuning::default() };
        let (got, tree, _) = engine_run(&units, &Settings::default(), each);
        prop_assert_eq!(&got, &want, "statuses differ when settled unit by unit for\n{}", text);
        prop_assert_eq!(&tree, &model, "trees differ when settled unit by unit for\n{}", text);
        // Editing every file with an index of the coming edits (done for
        // files many edits change) changes nothing either.
        let indexed = Tuning { index_from: Some(1), ..Tuning::default() };
        let (got, tree, _) = engine_run(&units, &Settings::default(), indexed);
        prop_assert_eq!(&got, &want, "statuses differ with an index for\n{}", text);
        prop_assert_eq!(tree, model, "trees differ with an index for\n{}", text);
    }

    #[test]
    fn atomic_units_leave_no_trace_of_a_failure(units in units()) {
        let text = document(&units);
        for (atomic, settle_after, index_from) in [
            (Atomic::Unit, None, None),
            (Atomic::Unit, Some(1), None),
            (Atomic::Unit, None, Some(1)),
            (Atomic::Document, None, None),
            (Atomic::Document, Some(1), None),
            (Atomic::Document, None, Some(1)),
        ] {
            let mut model = start();
            let want = model.run_atomic(&units, Some(atomic));
            let settings = Settings { atomic: Some(atomic), ..Settings::default() };
            let (got, tree, written) = engine_run(&units, &settings, Tuning { settle_after, index_from });
            prop_assert_eq!(&got, &want, "statuses differ with {:?}, {:?} for\n{}", atomic, settle_after, text);
            // What a rollback undid is no change of the run's; every file
            // that differs at the end is one.
            let before = start();
            let differs = before.files.keys().chain(tree.files.keys())
                .filter(|p| before.files.get(*p) != tree.files.get(*p));
            for p in differs {
                prop_assert!(covered(&written, p), "{} changed but the run did not say so, with {:?}, {:?} for\n{}", p, atomic, settle_after, text);
            }
            if atomic == Atomic::Document && got.contains(&TaskStatus::Failed) {
                prop_assert_eq!(&written, &Vec::new(), "a run rolled back says it changed files, for\n{}", text);
            }
            prop_assert_eq!(tree, model, "trees differ with {:?}, {:?} for\n{}", atomic, settle_after, text);
        }
    }

    #[test]
    fn a_dry_run_predicts_the_real_run(units in units(), index in any::<bool>()) {
        let text = document(&units);
        // With an index of the coming edits or without.
        let index_from = index.then_some(1);
        let dry = Settings { dry_run: true, ..Settings::default() };
        let tuning = Tuning { index_from, ..Tuning::default() };
        let (predicted, untouched, changes) = engine_run(&units, &dry, tuning);
        prop_assert_eq!(untouched, start(), "a dry run changed the tree for\n{}", text);
        let (got, after, written) = engine_run(&units, &Settings::default(), tuning);
        prop_assert_eq!(&predicted, &got, "statuses differ for\n{}", text);
        // A real run without commands writes once, at the end: what it
        // reports it changed is what the dry run said it would.
        prop_assert_eq!(&written, &changes, "the real run's changes differ for\n{}", text);
        let before = start();
        // Every file written is as the dry run said; what it said is gone
        // is gone (unless written again), and moves land.
        for c in &changes {
            match c {
                Change::File { path, new, diff, created } => {
                    prop_assert_eq!(
                        after.files.get(path).map(String::as_bytes), Some(new.as_slice()),
                        "{} for\n{}", path, text
                    );
                    // The counts take the file from what was there (nothing,
                    // when it is new: a file below a directory removed first
                    // is new; a file moved here is counted from where it
                    // was) to what is.
                    let lines = |s: Option<&String>| s.map_or(0, |s| s.lines().count());
                    let now = lines(after.files.get(path));
                    if *created {
                        prop_assert_eq!((diff.added, diff.removed), (now, 0), "{} for\n{}", path, text);
                    } else if let Some(was) = before.files.get(path) {
                        prop_assert_eq!(
                            lines(Some(was)) + diff.added, now + diff.removed,
                            "{} for\n{}", path, text
                        );
                    }
                }
                Change::Removed { path, .. } => prop_assert!(
                    !before.files.contains_key(path) || after.files.get(path) != before.files.get(path)
                        || changes.iter().any(|c| matches!(c, Change::File { path: p, .. } if p == path)),
                    "{} for\n{}", path, text
                ),
                Change::Moved { to, .. } | Change::Dir { path: to } => prop_assert!(
                    after.kind(to).is_some(), "{} for\n{}", to, text
                ),
            }
        }
        // Every file that differs is covered by a change.
        let differs = before.files.keys().chain(after.files.keys())
            .filter(|p| before.files.get(*p) != after.files.get(*p));
        for p in differs {
            prop_assert!(covered(&changes, p), "{} changed but the dry run did not say so, for\n{}", p, text);
        }
    }
}

/// Every file below `root`, by path, with its bytes (directories aside).
fn read_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// A report as JSON, its timings aside.
fn untimed(report: &crate::ApplyReport) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("duration_ms");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(report).unwrap();
    strip(&mut v);
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// One engine: a document applied to files in memory leaves the files
    /// and says the report a run on a directory holding them does, byte
    /// for byte and field for field (timings aside), with or without
    /// `--atomic`, for files with LF or CRLF line breaks.
    #[test]
    fn applying_in_memory_is_applying_on_disk(
        units in units(),
        atomic in proptest::option::of(prop_oneof![Just(Atomic::Unit), Just(Atomic::Document)]),
        crlf in any::<bool>(),
    ) {
        let text = document(&units);
        let files: BTreeMap<String, Vec<u8>> = start()
            .files
            .into_iter()
            .map(|(p, c)| (p, if crlf { c.replace('\n', "\r\n") } else { c }.into_bytes()))
            .collect();
        let settings = Settings { atomic, ..Settings::default() };
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in &files {
            let at = dir.path().join(p);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, c).unwrap();
        }
        let doc = parse_with(&text, ParseOptions::default());
        let on_disk = crate::Apply::new(dir.path())
            .unwrap()
            .settings(settings.clone())
            .git(None)
            .run(&doc);
        let (after, in_memory) = crate::apply_files(&text, files, &settings).unwrap();
        prop_assert_eq!(&after, &read_files(dir.path()), "files differ for\n{}", text);
        prop_assert_eq!(untimed(&in_memory), untimed(&on_disk), "reports differ for\n{}", text);
    }
}
