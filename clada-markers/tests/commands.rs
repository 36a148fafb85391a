//! RUN tasks end to end: tiers, refusals of built-in commands, approvals,
//! processes, timeouts and output limits.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::RunOptions;
use clada_markers::Settings;
use clada_markers::commands::{Answer, Approvals, Approver, NoPrompt};
use clada_markers::engine::{Dirs, Observer};
use clada_markers::report::{TaskReport, TaskStatus};
use clada_markers::{Apply, ErrorType, ParseOptions, parse_with};

/// What marks output cut at `--max-output` (PROTOCOL §6).
const TRUNCATED: &str = "[output truncated]";

/// Collects what the engine says.
#[derive(Default)]
struct Heard {
    lines: BTreeMap<usize, Vec<String>>,
}

impl Observer for Heard {
    fn output_line(&mut self, task: usize, line: &str) {
        self.lines.entry(task).or_default().push(line.to_owned());
    }
}

impl clada_markers::Listener for Heard {}

/// Answers every prompt the same way, counting the questions.
struct Answering(Answer, std::rc::Rc<std::cell::Cell<usize>>);

impl Approver for Answering {
    fn ask(&mut self, _command: &str, _dir: Option<&str>) -> Option<Answer> {
        self.1.set(self.1.get() + 1);
        Some(self.0)
    }
}

fn run_with(
    root: &Path,
    doc: &str,
    options: RunOptions,
    approver: Box<dyn Approver>,
    total: Option<Duration>,
) -> (Vec<TaskReport>, Heard) {
    let doc = parse_with(doc, options.settings.parse_options());
    assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
    let mut heard = Heard::default();
    let mut options = options;
    options.settings.git = None;
    options.settings.total_timeout = total;
    let report = options
        .give(Apply::new(root).unwrap())
        .approver(approver)
        .run_with(&doc, &mut heard);
    (crate::common::tasks(report), heard)
}

fn run(root: &Path, doc: &str) -> Vec<TaskReport> {
    run_with(root, doc, RunOptions::default(), Box::new(NoPrompt), None).0
}

fn run_one(root: &Path, command: &str) -> TaskReport {
    let doc = format!("<<<<<<< RUN\n{command}\n>>>>>>> END\n");
    run(root, &doc).remove(0)
}

fn error_of(r: &TaskReport) -> Option<ErrorType> {
    r.error.as_ref().map(|e| e.kind)
}

/// Options keeping approvals in a configuration directory beside the
/// root (passed through the API, never the process's environment).
fn approving(s: &tempfile::TempDir) -> RunOptions {
    let home = s.path().join("home");
    let dirs = Dirs::from_lookup(|name| (name == "HOME").then(|| home.clone().into())).unwrap();
    RunOptions {
        approvals: Some(Approvals::new(&dirs, &s.path().join("root")).unwrap()),
        ..RunOptions::default()
    }
}

/// A root with a few files, a link out of it, and a file outside.
fn sandbox() -> tempfile::TempDir {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(scratch.path().join("outside")).unwrap();
    std::fs::write(scratch.path().join("outside/secret"), "secret\n").unwrap();
    std::fs::write(root.join("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "fn x() {}\n").unwrap();
    symlink("../outside", root.join("out")).unwrap();
    symlink("../outside/secret", root.join("secret-link")).unwrap();
    scratch
}

#[test]
fn built_in_commands_run_without_a_shell() {
    let s = sandbox();
    let root = s.path().join("root");
    let (reports, heard) = run_with(
        &root,
        "<<<<<<< RUN\nls src\n>>>>>>> END\n<<<<<<< RUN\nwc -l a.txt\n>>>>>>> END\n<<<<<<< RUN\ncat 'a.txt'\n>>>>>>> END\n",
        RunOptions::default(),
        Box::new(NoPrompt),
        None,
    );
    assert!(
        reports.iter().all(|r| r.status == TaskStatus::Success),
        "{reports:#?}"
    );
    assert_eq!(heard.lines[&1], ["lib.rs"]);
    assert_eq!(heard.lines[&2], ["2 a.txt"]);
    assert_eq!(reports[2].output.as_deref(), Some("alpha\nbeta\n"));
    assert_eq!(reports[2].exit_code, Some(0));
}

#[test]
fn refuses_what_the_table_does_not_allow() {
    let s = sandbox();
    let root = s.path().join("root");
    use ErrorType::{CommandNotAllowed as Cmd, PathEscape as Esc, SymlinkNotAllowed as Link};
    let cases: &[(&str, ErrorType)] = &[
        // Paths out of the root.
        ("cat ../x", Esc),
        ("cat /etc/passwd", Esc),
        ("rm -rf /", Esc),
        ("cp a.txt ../b", Esc),
        ("ls ..", Esc),
        ("head -n 1 ../../x", Esc),
        ("mv a.txt /tmp/b", Esc),
        ("touch ../new", Esc),
        ("mkdir -p ../d", Esc),
        ("stat /", Esc),
        ("wc -l ../x", Esc),
        ("tail /var/log/syslog", Esc),
        ("cat src/../../x", Esc),
        ("file /bin/sh", Esc),
        ("realpath ..", Esc),
        ("cp -t ../ a.txt", Esc),
        // Through links.
        ("cat secret-link", Link),
        ("cat out/secret", Link),
        ("ls out/secret", Link),
        ("cp out/secret mine", Link),
        // Refused flags and clada's and git's own files.
        ("ls -L", Cmd),
        ("cp -L a.txt b", Cmd),
        ("rm --no-preserve-root x", Cmd),
        ("tail -f a.txt", Cmd),
        ("cat --bogus a.txt", Cmd),
        ("touch -r /etc/passwd a.txt", Cmd),
        ("xxd a.txt ../out.hex", Cmd),
        // Protected places (PROTOCOL §5).
        ("touch .clada/allowed-commands.json", Esc),
        ("cp a.txt .git/config", Esc),
        ("rm -r src/.git", Esc),
        // Shell syntax and commands off the list, with nobody to ask.
        ("ls $(pwd)", Cmd),
        ("ls ~", Cmd),
        ("echo hi > f", Cmd),
        ("ls | wc -l", Cmd),
        ("ls; rm a.txt", Cmd),
        ("ls && pwd", Cmd),
        ("ls *.txt", Cmd),
        ("cat a.txt &", Cmd),
        ("ls `pwd`", Cmd),
        ("npm test", Cmd),
        ("git commit -m x", Cmd),
        ("python3 -c 'print(1)'", Cmd),
    ];
    for (command, want) in cases {
        let r = run_one(&root, command);
        assert_eq!(r.status, TaskStatus::Failed, "{command}: {r:#?}");
        assert_eq!(error_of(&r), Some(*want), "{command}: {:?}", r.error);
        if *want == Cmd {
            let message = &r.error.as_ref().unwrap().message;
            assert!(
                message.contains("clada allow '") || message.contains("clada allow "),
                "{command}: {message}"
            );
        }
    }
    // Nothing ran: every file is as it was.
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.path().join("outside/secret")).unwrap(),
        "secret\n"
    );
    assert!(!root.join("f").exists() && !root.join("mine").exists());
}

#[test]
fn the_refusal_names_the_exact_command_that_would_approve_it() {
    let s = sandbox();
    let r = run_one(&s.path().join("root"), "echo 'it''s' | wc -c");
    let message = &r.error.unwrap().message;
    assert!(
        message.ends_with("clada allow 'echo '\\''it'\\'''\\''s'\\'' | wc -c'"),
        "{message}"
    );
}

#[test]
fn approved_commands_run_in_a_shell_and_multi_line_bodies_too() {
    let s = sandbox();
    let root = s.path().join("root");
    let script = "echo one\necho two >&2\nexit 0";
    let options = approving(&s);
    let approvals = options.approvals.clone().unwrap();
    approvals
        .update(|list| {
            list.add("echo hi | tr a-z A-Z", None, std::time::SystemTime::now());
            list.add(script, None, std::time::SystemTime::now())
        })
        .unwrap();
    let doc = format!(
        "<<<<<<< RUN\n  echo hi | tr a-z A-Z  \n>>>>>>> END\n<<<<<<< RUN\n{script}\n>>>>>>> END\n"
    );
    let (reports, heard) = run_with(&root, &doc, options, Box::new(NoPrompt), None);
    assert!(
        reports.iter().all(|r| r.status == TaskStatus::Success),
        "{reports:#?}"
    );
    assert_eq!(heard.lines[&1], ["HI"]);
    // stdout and stderr, merged in order.
    assert_eq!(heard.lines[&2], ["one", "two"]);
}

#[test]
fn commands_approved_for_one_run_run_then_and_are_never_written() {
    let s = sandbox();
    let root = s.path().join("root");
    let mut options = approving(&s);
    let approvals = options.approvals.clone().unwrap();
    options.settings.approved = vec!["  echo hi | tr a-z A-Z ".to_owned()];
    let doc = "<<<<<<< RUN\necho hi | tr a-z A-Z\n>>>>>>> END\n<<<<<<< RUN\necho other | cat\n>>>>>>> END\n";
    let (r, heard) = run_with(&root, doc, options.clone(), Box::new(NoPrompt), None);
    assert_eq!(r[0].status, TaskStatus::Success, "{r:#?}");
    assert_eq!(heard.lines[&1], ["HI"]);
    // Exactly that command line, nothing else.
    assert_eq!(error_of(&r[1]), Some(ErrorType::CommandNotAllowed));
    assert!(!approvals.file().exists(), "nothing kept on disk");
    // A dry run says it would run, as for a command `clada allow` approved.
    let doc = parse_with(doc, ParseOptions::default());
    let report = options
        .clone()
        .give(Apply::new(&root).unwrap())
        .git(None)
        .dry_run(true)
        .run(&doc);
    let tasks = crate::common::tasks(report);
    assert_eq!(tasks[0].status, TaskStatus::Success, "{tasks:#?}");
    assert!(
        tasks[0].message.contains("approved"),
        "{}",
        tasks[0].message
    );
    // The next run, without them, refuses it.
    options.settings.approved.clear();
    let r = run_with(
        &root,
        "<<<<<<< RUN\necho hi | tr a-z A-Z\n>>>>>>> END\n",
        options,
        Box::new(NoPrompt),
        None,
    )
    .0;
    assert_eq!(error_of(&r[0]), Some(ErrorType::CommandNotAllowed));
}

#[test]
fn allow_any_command_runs_everything_as_approved() {
    let s = sandbox();
    let root = s.path().join("root");
    let options = RunOptions {
        settings: Settings {
            allow_any: true,
            ..Settings::default()
        },
        ..RunOptions::default()
    };
    let (reports, heard) = run_with(
        &root,
        "<<<<<<< RUN\necho $((6 * 7))\n>>>>>>> END\n",
        options,
        Box::new(NoPrompt),
        None,
    );
    assert_eq!(reports[0].status, TaskStatus::Success);
    assert_eq!(heard.lines[&1], ["42"]);
}

#[test]
fn a_prompt_decides_once_always_or_no() {
    let s = sandbox();
    let root = s.path().join("root");
    let doc = "<<<<<<< RUN\necho asked | cat\n>>>>>>> END\n";
    let asked = std::rc::Rc::new(std::cell::Cell::new(0));
    let once = |a| Box::new(Answering(a, asked.clone())) as Box<dyn Approver>;
    let options = approving(&s);
    let approvals = options.approvals.clone().unwrap();

    let (r, _) = run_with(&root, doc, options.clone(), once(Answer::No), None);
    assert_eq!(error_of(&r[0]), Some(ErrorType::CommandNotAllowed));
    let (r, _) = run_with(&root, doc, options.clone(), once(Answer::Once), None);
    assert_eq!(r[0].status, TaskStatus::Success);
    assert!(!approvals.load().unwrap().contains("echo asked | cat", None));
    let (r, _) = run_with(&root, doc, options.clone(), once(Answer::Always), None);
    assert_eq!(r[0].status, TaskStatus::Success);
    assert!(approvals.load().unwrap().contains("echo asked | cat", None));
    assert!(!root.join(".clada").exists());
    assert_eq!(asked.get(), 3);
    // Approved now: no question.
    let (r, _) = run_with(&root, doc, options, once(Answer::No), None);
    assert_eq!(r[0].status, TaskStatus::Success);
    assert_eq!(asked.get(), 3);
}

#[test]
fn documents_cannot_approve_their_own_commands() {
    let s = sandbox();
    let root = s.path().join("root");
    let doc = "<<<<<<< WRITE path=\".clada/allowed-commands.json\"\n{\"commands\": [\"echo pwned | cat\"]}\n>>>>>>> END\n";
    let parsed = parse_with(doc, ParseOptions::default());
    assert!(
        parsed
            .diagnostics
            .iter()
            .any(|d| d.kind == clada_markers::syntax::DiagnosticKind::ProtectedPath)
    );
    assert!(!root.join(".clada").exists());
}

#[test]
fn failing_commands_report_their_exit_code_and_output() {
    let s = sandbox();
    let r = run_one(&s.path().join("root"), "cat nothing-like-this.txt");
    assert_eq!(error_of(&r), Some(ErrorType::ExecFailed));
    assert_eq!(r.exit_code, Some(1));
    let e = r.error.unwrap();
    assert!(e.retryable);
    assert!(e.message.contains("exited with code 1"), "{}", e.message);
}

#[test]
fn working_directories_are_checked_like_paths() {
    let s = sandbox();
    let root = s.path().join("root");
    let (ok, heard) = run_with(
        &root,
        "<<<<<<< RUN dir=\"src\"\nls\n>>>>>>> END\n",
        RunOptions::default(),
        Box::new(NoPrompt),
        None,
    );
    assert_eq!(ok[0].status, TaskStatus::Success);
    assert_eq!(heard.lines[&1], ["lib.rs"]);
    // Paths in arguments are relative to the working directory.
    let r = run(
        &root,
        "<<<<<<< RUN dir=\"src\"\ncat ../a.txt\n>>>>>>> END\n",
    );
    assert_eq!(r[0].status, TaskStatus::Success, "{r:#?}");
    let r = run(
        &root,
        "<<<<<<< RUN dir=\"src\"\ncat ../../outside/secret\n>>>>>>> END\n",
    );
    assert_eq!(error_of(&r[0]), Some(ErrorType::PathEscape));
    let r = run(&root, "<<<<<<< RUN dir=\"nope\"\nls\n>>>>>>> END\n");
    assert_eq!(error_of(&r[0]), Some(ErrorType::FileNotFound));
    let r = run(&root, "<<<<<<< RUN dir=\"out\"\nls\n>>>>>>> END\n");
    assert_eq!(error_of(&r[0]), Some(ErrorType::SymlinkNotAllowed));
    // Outside the root is a validation error: the task never runs.
    let d = parse_with(
        "<<<<<<< RUN dir=\"../outside\"\nls\n>>>>>>> END\n",
        ParseOptions::default(),
    );
    assert!(
        d.diagnostics
            .iter()
            .any(|d| d.error_type() == ErrorType::PathEscape)
    );
}

#[test]
fn a_timeout_kills_the_whole_group_even_what_ignores_sigterm() {
    let s = sandbox();
    let root = s.path().join("root");
    let doc = "<<<<<<< RUN\n\
               trap '' TERM\n\
               sh -c 'echo $$ > grandchild.pid; exec sleep 30' &\n\
               echo started\n\
               sleep 30\n\
               >>>>>>> END\n";
    let options = RunOptions {
        settings: Settings {
            allow_any: true,
            timeout: Duration::from_millis(800),
            ..Settings::default()
        },
        ..RunOptions::default()
    };
    let started = Instant::now();
    let (r, heard) = run_with(&root, doc, options, Box::new(NoPrompt), None);
    let took = started.elapsed();
    assert_eq!(error_of(&r[0]), Some(ErrorType::ExecTimeout), "{r:#?}");
    assert_eq!(heard.lines[&1], ["started"]);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let pid: i32 = std::fs::read_to_string(root.join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The grandchild ignored SIGTERM; SIGKILL must still have reached it.
    let gone = (0..200).any(|_| {
        let alive =
            rustix::process::test_kill_process(rustix::process::Pid::from_raw(pid).unwrap())
                .is_ok()
                && !is_zombie(pid);
        if alive {
            std::thread::sleep(Duration::from_millis(10));
        }
        !alive
    });
    assert!(gone, "grandchild {pid} survived the timeout");
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

#[test]
fn built_in_commands_keep_to_their_time_limit() {
    let s = sandbox();
    let root = s.path().join("root");
    // No time at all: the walk stops before its first directory.
    let options = RunOptions {
        settings: Settings {
            timeout: Duration::ZERO,
            ..Settings::default()
        },
        ..RunOptions::default()
    };
    let (r, _) = run_with(
        &root,
        "<<<<<<< RUN\nls -R .\n>>>>>>> END\n",
        options,
        Box::new(NoPrompt),
        None,
    );
    assert_eq!(error_of(&r[0]), Some(ErrorType::ExecTimeout), "{r:#?}");
    assert!(r[0].error.as_ref().unwrap().retryable);
}

#[test]
fn the_total_timeout_kills_the_command_and_skips_the_rest() {
    let s = sandbox();
    let root = s.path().join("root");
    let doc = "<<<<<<< TASKS\n<<<<<<< RUN\nsleep 20\n>>>>>>> END\n<<<<<<< WRITE path=\"late.txt\"\nx\n>>>>>>> END\n>>>>>>> TASKS\n\
               <<<<<<< WRITE path=\"later.txt\"\nx\n>>>>>>> END\n";
    let options = RunOptions {
        settings: Settings {
            allow_any: true,
            ..Settings::default()
        },
        ..RunOptions::default()
    };
    let started = Instant::now();
    let (r, _) = run_with(
        &root,
        doc,
        options,
        Box::new(NoPrompt),
        Some(Duration::from_millis(500)),
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(error_of(&r[0]), Some(ErrorType::ExecTimeout));
    assert_eq!(r[1].status, TaskStatus::Skipped);
    assert_eq!(r[2].status, TaskStatus::Skipped);
    assert!(!root.join("later.txt").exists());
}

#[test]
fn output_beyond_the_limit_is_dropped_once_marked() {
    let s = sandbox();
    let root = s.path().join("root");
    let doc = "<<<<<<< RUN\nyes 0123456789 | head -c 5000000\n>>>>>>> END\n";
    let options = RunOptions {
        settings: Settings {
            allow_any: true,
            max_output: 1000,
            ..Settings::default()
        },
        ..RunOptions::default()
    };
    let (r, heard) = run_with(&root, doc, options, Box::new(NoPrompt), None);
    assert_eq!(r[0].status, TaskStatus::Success);
    let out = r[0].output.as_deref().unwrap();
    assert!(
        out.len() <= 1000 + TRUNCATED.len() + 2,
        "{} bytes kept",
        out.len()
    );
    assert_eq!(out.matches(TRUNCATED).count(), 1);
    let lines = &heard.lines[&1];
    assert_eq!(lines.iter().filter(|l| *l == TRUNCATED).count(), 1);
    assert_eq!(lines.last().map(String::as_str), Some(TRUNCATED));
}

#[test]
fn a_dry_run_keeps_the_total_timeout() {
    // What an editor's hover relies on: a dry run of a hostile plan stops
    // starting tasks once the limit has passed, as a real run does.
    let s = sandbox();
    let root = s.path().join("root");
    std::fs::create_dir_all(root.join("a")).unwrap();
    let doc = parse_with(
        "<<<<<<< RUN\ncp -r a b\n>>>>>>> END\n<<<<<<< WRITE path=\"w.txt\"\nx\n>>>>>>> END\n",
        ParseOptions::default(),
    );
    let dry = |limit| {
        let settings = Settings {
            git: None,
            dry_run: true,
            total_timeout: limit,
            ..Settings::default()
        };
        Apply::new(&root).unwrap().settings(settings).run(&doc)
    };
    let statuses = |r: clada_markers::ApplyReport| -> Vec<(TaskStatus, String)> {
        crate::common::tasks(r)
            .into_iter()
            .map(|t| (t.status, t.message))
            .collect()
    };
    let stopped = statuses(dry(Some(Duration::ZERO)));
    assert_eq!(stopped.len(), 2);
    for (status, message) in &stopped {
        assert_eq!(*status, TaskStatus::Skipped, "{message}");
        assert!(message.contains("total timeout"), "{message}");
    }
    let free = statuses(dry(Some(Duration::from_secs(600))));
    assert!(
        free.iter().all(|(s, _)| *s == TaskStatus::Success),
        "{free:?}"
    );
    assert!(!root.join("b").exists() && !root.join("w.txt").exists());
}

/// Answers "always", noting where each question was about.
struct AlwaysNoting(std::rc::Rc<std::cell::RefCell<Vec<Option<String>>>>);

impl Approver for AlwaysNoting {
    fn ask(&mut self, _command: &str, dir: Option<&str>) -> Option<Answer> {
        self.0.borrow_mut().push(dir.map(str::to_owned));
        Some(Answer::Always)
    }
}

#[test]
fn an_approval_given_at_a_prompt_holds_only_where_it_was_asked() {
    let s = sandbox();
    let root = s.path().join("root");
    let options = approving(&s);
    let approvals = options.approvals.clone().unwrap();
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let doc = "<<<<<<< RUN dir=\"src\"\necho here | cat\n>>>>>>> END\n";
    let (r, _) = run_with(
        &root,
        doc,
        options.clone(),
        Box::new(AlwaysNoting(asked.clone())),
        None,
    );
    assert_eq!(r[0].status, TaskStatus::Success, "{r:#?}");
    assert_eq!(*asked.borrow(), [Some("src".to_owned())]);
    let list = approvals.load().unwrap();
    assert!(list.contains("echo here | cat", Some("src")));
    assert!(!list.contains("echo here | cat", None));
    // At the root it is not approved.
    let r = run_with(
        &root,
        "<<<<<<< RUN\necho here | cat\n>>>>>>> END\n",
        options,
        Box::new(NoPrompt),
        None,
    )
    .0
    .remove(0);
    assert_eq!(error_of(&r), Some(ErrorType::CommandNotAllowed));
    let message = &r.error.unwrap().message;
    assert!(
        message.contains("approved in `src`, not at the root"),
        "{message}"
    );
}

#[test]
fn nobody_is_asked_to_run_a_command_where_git_would_find_another_repository() {
    let s = sandbox();
    let root = s.path().join("root");
    std::fs::create_dir_all(root.join("src/objects")).unwrap();
    std::fs::create_dir_all(root.join("src/refs")).unwrap();
    std::fs::write(root.join("src/HEAD"), "ref: refs/heads/main\n").unwrap();
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    // In the fake repository, and below it: git would find it from both.
    std::fs::create_dir_all(root.join("src/deeper")).unwrap();
    for dir in ["src", "src/deeper"] {
        let doc = format!("<<<<<<< RUN dir=\"{dir}\"\ngit status\necho\n>>>>>>> END\n");
        let (r, _) = run_with(
            &root,
            &doc,
            approving(&s),
            Box::new(AlwaysNoting(asked.clone())),
            None,
        );
        assert_eq!(
            error_of(&r[0]),
            Some(ErrorType::CommandNotAllowed),
            "{r:#?}"
        );
        let message = &r[0].error.as_ref().unwrap().message;
        assert!(
            message.contains("would use `src` as a git directory"),
            "{message}"
        );
    }
    assert!(asked.borrow().is_empty());
}

/// A dry run (and so the LSP hover) refuses, and says why, what the real
/// run would refuse because git would find another repository where it
/// runs: a line a person would be asked about, and an approved one. It
/// never previews such a line as one that would run or be asked about.
#[test]
fn a_dry_run_refuses_where_git_would_find_another_repository_as_the_real_run() {
    let s = sandbox();
    let root = s.path().join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/.git"), "gitdir: ../g\n").unwrap();
    let options = approving(&s);
    let approvals = options.approvals.clone().unwrap();
    approvals
        .update(|list| list.add("git status", Some("sub"), std::time::SystemTime::now()))
        .unwrap();
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    for command in ["git status", "echo asked | cat"] {
        let doc = format!("<<<<<<< RUN dir=\"sub\"\n{command}\n>>>>>>> END\n");
        let doc = parse_with(&doc, ParseOptions::default());
        let report = options
            .clone()
            .give(Apply::new(&root).unwrap())
            .git(None)
            .approver(Box::new(AlwaysNoting(asked.clone())))
            .dry_run(true)
            .run(&doc);
        let r = crate::common::tasks(report).remove(0);
        assert_eq!(
            error_of(&r),
            Some(ErrorType::CommandNotAllowed),
            "{command}: {r:#?}"
        );
        assert!(!r.message.contains("Would"), "{command}: {}", r.message);
        assert!(
            r.message.contains("would use the repository of `sub/.git`"),
            "{command}: {}",
            r.message
        );
    }
    assert!(asked.borrow().is_empty());
}

#[test]
fn git_started_by_a_command_looks_no_higher_than_the_root_s_repository() {
    let s = sandbox();
    let root = s.path().join("root");
    let command = "printf '%s' \"$GIT_CEILING_DIRECTORIES\"";
    let options = approving(&s);
    let approvals = options.approvals.clone().unwrap();
    approvals
        .update(|list| list.add(command, None, std::time::SystemTime::now()))
        .unwrap();
    let doc = format!("<<<<<<< RUN\n{command}\n>>>>>>> END\n");
    // No repository: no higher than the root.
    let (r, _) = run_with(&root, &doc, options.clone(), Box::new(NoPrompt), None);
    let parent = s.path().canonicalize().unwrap();
    assert_eq!(r[0].output.as_deref(), Some(parent.to_str().unwrap()));
    // The root below a work tree's top: no higher than the top.
    std::fs::create_dir_all(root.join("sub")).unwrap();
    git2::Repository::init(&root).unwrap();
    let sub_options = RunOptions {
        approvals: Some(
            Approvals::new(
                &Dirs::from_lookup(|name| (name == "HOME").then(|| s.path().join("home").into()))
                    .unwrap(),
                &root.join("sub"),
            )
            .unwrap(),
        ),
        ..RunOptions::default()
    };
    sub_options
        .approvals
        .as_ref()
        .unwrap()
        .update(|list| list.add(command, None, std::time::SystemTime::now()))
        .unwrap();
    let (r, _) = run_with(
        &root.join("sub"),
        &doc,
        sub_options,
        Box::new(NoPrompt),
        None,
    );
    assert_eq!(
        r[0].output.as_deref(),
        Some(parent.to_str().unwrap()),
        "{r:#?}"
    );
}

#[test]
fn the_built_in_git_refuses_a_repository_a_command_planted_a_link_in() {
    let s = sandbox();
    let root = s.path().join("root");
    let repo = git2::Repository::init(&root).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("a.txt")).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "one", &tree, &[])
        .unwrap();
    let plant = "rm -rf .git/refs/heads && ln -s ../../../outside .git/refs/heads";
    let options = approving(&s);
    options
        .approvals
        .as_ref()
        .unwrap()
        .update(|list| list.add(plant, None, std::time::SystemTime::now()))
        .unwrap();
    let doc = format!(
        "<<<<<<< RUN\ngit log --oneline\n>>>>>>> END\n<<<<<<< RUN\n{plant}\n>>>>>>> END\n<<<<<<< RUN\ngit log --oneline\n>>>>>>> END\n"
    );
    let (r, _) = run_with(&root, &doc, options, Box::new(NoPrompt), None);
    assert_eq!(r[0].status, TaskStatus::Success, "{r:#?}");
    assert_eq!(r[1].status, TaskStatus::Success, "{r:#?}");
    assert_eq!(error_of(&r[2]), Some(ErrorType::GitOperationFailed));
    let message = &r[2].error.as_ref().unwrap().message;
    assert!(
        message.contains("refs/heads is a symbolic link"),
        "{message}"
    );
}

/// A dry run of an atomic unit ends as the real run when a built-in
/// command changes (or removes) a file a task wrote and a later task
/// fails: the file stays as the command left it, the task stays applied
/// and is not said to be rolled back (the dry run said so, the real run
/// did not).
#[test]
fn a_dry_run_keeps_what_a_built_in_changed_after_a_task_as_the_real_run() {
    let s = sandbox();
    let root = s.path().join("root");
    for (command, said) in [
        (
            "cp b.txt a.txt",
            "a.txt was changed by the command of task 2 after task 1 wrote it",
        ),
        (
            "rm a.txt",
            "a.txt was removed (or what held it) by the command of task 2 after task 1 changed it",
        ),
    ] {
        let doc = format!(
            "<<<<<<< TASKS\n<<<<<<< WRITE path=\"a.txt\"\nnew\n>>>>>>> END\n\
             <<<<<<< RUN\n{command}\n>>>>>>> END\n\
             <<<<<<< SEARCH path=\"b.txt\"\nnothere\n=======\nx\n>>>>>>> REPLACE\n\
             >>>>>>> TASKS\n"
        );
        let doc = parse_with(&doc, ParseOptions::default());
        let mut seen = Vec::new();
        for dry in [false, true] {
            std::fs::write(root.join("a.txt"), "old\n").unwrap();
            std::fs::write(root.join("b.txt"), "b\n").unwrap();
            let report = Apply::new(&root)
                .unwrap()
                .git(None)
                .atomic(Some(clada_markers::engine::Atomic::Unit))
                .dry_run(dry)
                .run(&doc);
            let note = report.blocks[0].note.clone().unwrap_or_default();
            assert!(note.contains(said), "{command}, dry run {dry}: {note}");
            let tasks: Vec<(TaskStatus, bool)> = crate::common::tasks(report)
                .into_iter()
                .map(|t| (t.status, t.rolled_back))
                .collect();
            seen.push(tasks);
        }
        assert_eq!(
            seen[0],
            [
                (TaskStatus::Success, false),
                (TaskStatus::Success, false),
                (TaskStatus::Failed, false)
            ],
            "{command}"
        );
        assert_eq!(seen[1], seen[0], "{command}");
    }
}
