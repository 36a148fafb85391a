//! A run fed a window of units at a time (`Apply::run_units`) against the
//! same run of the whole document: the same report, to the byte of its
//! JSON, and every unit reported only once its changes are on disk.

use std::path::{Path, PathBuf};

use clada_markers::dialect::Dialect;
use clada_markers::engine::{Atomic, Observer, TaskOutcome};
use clada_markers::report::text::{Detail, ExecOutput, TextPrinter};
use clada_markers::report::{BlockReport, JsonReport, TaskStatus};
use clada_markers::syntax::{OpName, units};
use clada_markers::{Apply, ApplyReport, Listener, ParseOptions, parse};

/// A document of `n` units of every kind: writes, edits that succeed and
/// fail, removals of missing files, a block that stops half way, a
/// malformed block, a command nobody approved, and stray text and
/// markers between units.
fn mixed(n: usize) -> String {
    let mut doc = String::new();
    for i in 0..n {
        let unit = match i % 9 {
            0 => format!("<<<<<<< WRITE path=\"w/{i}.txt\"\nfile {i}\n>>>>>>> END\n"),
            1 => format!(
                "<<<<<<< SEARCH path=\"w/{}.txt\"\nfile {}\n=======\nedited {}\n>>>>>>> REPLACE\n",
                i - 1,
                i - 1,
                i - 1
            ),
            2 => format!(
                "<<<<<<< SEARCH path=\"w/{}.txt\"\nnot there\n=======\nx\n>>>>>>> REPLACE\n",
                i - 2
            ),
            3 => format!("<<<<<<< REMOVE path=\"gone/{i}.txt\"\n>>>>>>> END\n"),
            4 => format!(
                "<<<<<<< TASKS\n<<<<<<< WRITE path=\"b/{i}.txt\"\nb\n>>>>>>> END\n<<<<<<< REMOVE path=\"gone/{i}\"\n>>>>>>> END\n<<<<<<< WRITE path=\"b/{i}-never.txt\"\nc\n>>>>>>> END\n>>>>>>> TASKS\n"
            ),
            5 => "<<<<<<< TASKS\n<<<<<<< WRITE\nno path\n>>>>>>> END\n>>>>>>> TASKS\n".to_owned(),
            6 => "some prose between units\n>>>>>>> END\n".to_owned(),
            7 => format!("<<<<<<< RUN\necho {i}\n>>>>>>> END\n"),
            _ => format!(
                "<<<<<<< WRITE path=\"w/{}.txt\"\nagain {i}\n>>>>>>> END\n",
                i - 8
            ),
        };
        doc.push_str(&unit);
    }
    doc
}

/// A run's JSON with every duration made 0: what differs between two
/// runs of the same document.
fn without_durations(json: &str) -> String {
    let key = "\"duration_ms\": ";
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(at) = rest.find(key) {
        out.push_str(&rest[..at + key.len()]);
        rest = rest[at + key.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('0');
    }
    out.push_str(rest);
    out
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("scratch directory")
}

/// Every file below `dir`, with its contents.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let data = std::fs::read(&p).expect("read");
                out.push((p.strip_prefix(dir).expect("below").to_path_buf(), data));
            }
        }
    }
    out.sort();
    out
}

fn applier(root: &Path, atomic: Option<Atomic>, dry_run: bool) -> Apply {
    Apply::new(root)
        .expect("root")
        .git(None)
        .atomic(atomic)
        .dry_run(dry_run)
}

fn streamed(doc: &str, root: &Path, atomic: Option<Atomic>, dry_run: bool) -> String {
    let mut apply = applier(root, atomic, dry_run);
    let mut json = JsonReport::new(Vec::new(), &ApplyReport::empty(Dialect::Clada));
    let units = units(doc, ParseOptions::default());
    let report = apply.run_units(doc, units, &mut json);
    let bytes = json.finish(&report).expect("written to memory");
    String::from_utf8(bytes).expect("JSON is UTF-8")
}

fn whole(doc: &str, root: &Path, atomic: Option<Atomic>, dry_run: bool) -> String {
    let report = applier(root, atomic, dry_run).run(&parse(doc));
    serde_json::to_string_pretty(&report).expect("serialised") + "\n"
}

#[test]
fn a_streamed_run_reports_what_a_whole_run_does() {
    // 20,000 units hold 22,000 tasks: more than one batch is held and
    // written on the way.
    for (n, atomic, dry_run) in [
        (0, None, false),
        (9, None, false),
        (2_000, None, false),
        (2_000, None, true),
        (200, Some(Atomic::Unit), false),
        (200, Some(Atomic::Document), false),
        (20_000, None, false),
    ] {
        let doc = mixed(n);
        let (a, b) = (scratch(), scratch());
        let one = streamed(&doc, a.path(), atomic, dry_run);
        let other = whole(&doc, b.path(), atomic, dry_run);
        assert_eq!(
            without_durations(&one),
            without_durations(&other),
            "{n} units, {atomic:?}, dry run {dry_run}"
        );
        assert_eq!(tree(a.path()), tree(b.path()), "{n} units, {atomic:?}");
        let v: serde_json::Value = serde_json::from_str(&one).expect("the report is JSON");
        let tasks = v["summary"]["tasks"].as_u64().unwrap_or(0);
        let listed: usize = v["blocks"]
            .as_array()
            .map(|b| {
                b.iter()
                    .map(|b| b["tasks"].as_array().map_or(0, Vec::len))
                    .sum()
            })
            .unwrap_or(0);
        assert_eq!(tasks as usize, listed, "{n} units");
        if n >= 20_000 {
            assert!(tasks > 8_192, "{n} units make more than one batch: {tasks}");
        }
    }
}

/// Checks, as each unit's report comes, that what it says was written is
/// on disk.
struct OnDisk<'a> {
    root: &'a Path,
    blocks: usize,
    checked: usize,
}

impl Observer for OnDisk<'_> {}

impl Listener for OnDisk<'_> {
    fn block(&mut self, report: BlockReport) {
        self.blocks += 1;
        assert_eq!(report.number, self.blocks, "blocks come in order");
        for t in &report.tasks {
            let (TaskStatus::Success, OpName::Write, Some(path)) = (t.status, t.op, &t.path) else {
                continue;
            };
            assert!(
                self.root.join(path).is_file(),
                "task {} is reported written before {path} is on disk",
                t.number
            );
            self.checked += 1;
        }
    }
}

#[test]
fn a_unit_is_reported_once_its_changes_are_on_disk() {
    let doc = mixed(20_000);
    let dir = scratch();
    let mut apply = Apply::new(dir.path()).expect("root").git(None);
    let mut listener = OnDisk {
        root: dir.path(),
        blocks: 0,
        checked: 0,
    };
    let report = apply.run_units(&doc, units(&doc, ParseOptions::default()), &mut listener);
    assert_eq!(listener.blocks, report.summary.blocks);
    assert!(
        listener.checked > 4_000,
        "{} writes checked",
        listener.checked
    );
    assert!(report.blocks.is_empty(), "the listener had the blocks");
}

/// Keeps the reports a run hands out.
#[derive(Default)]
struct Kept {
    blocks: Vec<BlockReport>,
    /// The statuses each task was told, in order.
    told: Vec<(usize, TaskStatus)>,
    /// Called when a task is first told to have succeeded.
    on_success: Option<Box<dyn FnMut(usize)>>,
}

impl Observer for Kept {
    fn task_finished(&mut self, task: &clada_markers::Task<'_>, outcome: &TaskOutcome) {
        self.told.push((task.number, outcome.status()));
        if outcome.status() == TaskStatus::Success
            && let Some(f) = &mut self.on_success
        {
            f(task.number);
        }
    }
}

impl Listener for Kept {
    fn block(&mut self, report: BlockReport) {
        self.blocks.push(report);
    }
}

#[test]
fn a_write_that_fails_when_a_batch_is_written_fails_its_task_before_it_is_reported() {
    // Task 1 edits `hot.txt` in the view; another writer changes the file
    // on disk right after; 9,000 more tasks make the run write its first
    // batch, where the change of task 1 must not overwrite theirs.
    let dir = scratch();
    let hot = dir.path().join("hot.txt");
    std::fs::write(&hot, "old\n").expect("hot.txt");
    let mut doc =
        "<<<<<<< SEARCH path=\"hot.txt\"\nold\n=======\nours\n>>>>>>> REPLACE\n".to_owned();
    for i in 0..9_000 {
        doc.push_str(&format!("<<<<<<< WRITE path=\"f/{i}\"\n{i}\n>>>>>>> END\n"));
    }
    let other = hot.clone();
    let mut kept = Kept {
        on_success: Some(Box::new(move |task| {
            if task == 1 {
                std::fs::write(&other, "theirs, longer\n").expect("the other writer");
            }
        })),
        ..Kept::default()
    };
    let mut apply = Apply::new(dir.path()).expect("root").git(None);
    let report = apply.run_units(&doc, units(&doc, ParseOptions::default()), &mut kept);
    assert_eq!(
        std::fs::read_to_string(&hot).expect("hot.txt"),
        "theirs, longer\n",
        "the other writer's change is kept"
    );
    let first = &kept.blocks[0].tasks[0];
    assert_eq!(first.status, TaskStatus::Failed, "{first:?}");
    let kind = first.error.as_ref().map(|e| e.kind.to_string());
    assert_eq!(kind.as_deref(), Some("file_changed"));
    // Told succeeded when planned, then failed when written: the last word
    // is the report's.
    let told: Vec<TaskStatus> = kept.told.iter().filter(|t| t.0 == 1).map(|t| t.1).collect();
    assert_eq!(told, [TaskStatus::Success, TaskStatus::Failed]);
    assert_eq!(report.summary.failed, 1);
    assert_eq!(report.summary.succeeded, 9_000);
    assert!(!report.ok);
}

#[test]
fn a_refused_run_reports_units_without_tasks_alike_wherever_they_are() {
    let dir = scratch();
    let lock = dir.path().join("held.lock");
    let file = std::fs::File::create(&lock).expect("lock file");
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).expect("locked");
    let doc = "<<<<<<< TASKS\n>>>>>>> TASKS\n<<<<<<< WRITE path=\"a.txt\"\na\n>>>>>>> END\n<<<<<<< TASKS\n>>>>>>> TASKS\n";
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    let apply = || {
        let settings = clada_markers::Settings {
            git: None,
            lock_file: Some(lock.clone()),
            lock_timeout: std::time::Duration::ZERO,
            ..Default::default()
        };
        Apply::new(&root).expect("root").settings(settings)
    };
    let mut kept = Kept::default();
    let streamed = apply().run_units(doc, units(doc, ParseOptions::default()), &mut kept);
    let whole = apply().run(&parse(doc));
    for report in [&streamed, &whole] {
        let error = report.error.as_ref().map(|e| e.kind.to_string());
        assert_eq!(error.as_deref(), Some("lock_timeout"));
        assert!(!report.ok);
    }
    let statuses = |blocks: &[BlockReport]| -> Vec<String> {
        blocks.iter().map(|b| format!("{:?}", b.status)).collect()
    };
    assert_eq!(statuses(&kept.blocks), ["Success", "Failed", "Success"]);
    assert_eq!(statuses(&kept.blocks), statuses(&whole.blocks));
    assert_eq!(kept.blocks[1].tasks[0].status, TaskStatus::Skipped);
    assert!(
        kept.told.is_empty(),
        "no task was run or told: {:?}",
        kept.told
    );
    assert!(!root.join("a.txt").exists());
}

#[test]
fn the_text_report_is_the_same_streamed_or_whole() {
    for atomic in [None, Some(Atomic::Unit)] {
        let doc = mixed(300);
        let (a, b) = (scratch(), scratch());
        let text = |streamed: bool, root: &Path| -> String {
            let mut apply = Apply::new(root).expect("root").git(None).atomic(atomic);
            let mut printer = TextPrinter::new(
                Vec::new(),
                &doc,
                "doc.md",
                Detail::Full,
                ExecOutput::Buffer,
                false,
            );
            let report = if streamed {
                apply.run_units(&doc, units(&doc, ParseOptions::default()), &mut printer)
            } else {
                let parsed = parse(&doc);
                apply.run_with(&parsed, &mut printer)
            };
            printer.finish(&report);
            String::from_utf8(printer.into_inner()).expect("text")
        };
        let one = text(true, a.path());
        let other = text(false, b.path());
        assert_eq!(one, other, "{atomic:?}");
        // 33 stray closers: the first shown where it lies, the others
        // counted.
        assert_eq!(one.matches("=== Document ===").count(), 1, "{one}");
        assert!(one.contains("[stray_marker] stray closer `>>>>>>> END` outside any task is ignored: 32 more times"), "{one}");
        assert!(one.contains("Resend:"), "{one}");
    }
}

/// The units a reader that sees `doc` cut at byte `cut` hands out, read
/// as `clada watch` reads a file: whole lines, then the last line without
/// its line feed only when it is a closer written whole
/// (`Splitter::push_unfinished`), then the rest once it has come; the
/// text of each unit, its line feed left for the next read if the cut
/// fell before it.
fn read_cut(doc: &[u8], cut: usize) -> Vec<String> {
    let mut s = clada_markers::stream::Splitter::new();
    let mut out = Vec::new();
    let (head, _) = doc.split_at(cut);
    let whole = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    for line in head[..whole].split_inclusive(|&b| b == b'\n') {
        out.extend(s.push_bytes(line));
    }
    let mut from = whole;
    if let Some(unit) = s.push_unfinished(&head[whole..]) {
        out.push(unit);
        from = cut;
    }
    for line in doc[from..].split_inclusive(|&b| b == b'\n') {
        out.extend(s.push_bytes(line));
    }
    out.extend(s.finish());
    out.into_iter()
        .map(|c| c.text.trim_matches(['\r', '\n']).to_owned())
        .collect()
}

/// Issue 31: a unit is judged only when its last line is complete. Every
/// clada document of the corpus, cut at every byte (a write that stopped
/// there, then the rest): the units handed out are those of the document
/// read whole, never one closed by a line cut short.
#[test]
fn a_document_cut_at_any_byte_hands_out_the_units_of_the_whole() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/apply");
    let mut docs = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for case in entries {
        let expect = std::fs::read_to_string(case.join("expect")).unwrap_or_default();
        if expect.lines().any(|l| l.starts_with("dialect")) {
            continue;
        }
        let Ok(doc) = std::fs::read(case.join("patch.txt")) else {
            continue;
        };
        if doc.len() > 2048 {
            continue;
        }
        docs += 1;
        let want = read_cut(&doc, doc.len());
        for cut in 0..doc.len() {
            assert_eq!(
                read_cut(&doc, cut),
                want,
                "{} cut at byte {cut}: {:?}",
                case.display(),
                String::from_utf8_lossy(&doc[..cut])
            );
        }
    }
    assert!(docs > 100, "{docs} documents");
}
