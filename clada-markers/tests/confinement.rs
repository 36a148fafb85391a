//! `--sandbox`: Landlock confinement of approved commands, for real, and
//! no process of a command outliving it, `setsid` included, while the
//! other children of the program that uses clada live on.

use std::path::Path;
use std::time::Duration;

use crate::common::RunOptions;
use clada_markers::commands::{sandbox_available, sandbox_scoped};
use clada_markers::report::{TaskReport, TaskStatus};
use clada_markers::{Apply, ErrorType, ParseOptions, Settings, parse_with};

fn run(root: &Path, command: &str, options: RunOptions) -> TaskReport {
    let doc = format!("<<<<<<< RUN\n{command}\n>>>>>>> END\n");
    let doc = parse_with(&doc, ParseOptions::default());
    let report = options.give(Apply::new(root).unwrap()).git(None).run(&doc);
    crate::common::tasks(report).remove(0)
}

/// Confined, with `temp` as the only temporary directory it may write.
fn confined(temp: &Path) -> RunOptions {
    RunOptions {
        settings: Settings {
            allow_any: true,
            sandbox: true,
            sandbox_temp: Some(temp.to_path_buf()),
            ..Settings::default()
        },
        ..RunOptions::default()
    }
}

/// A directory outside both the root and the command's temporary
/// directory.
fn outside() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn landlock() -> bool {
    let ok = sandbox_available();
    if !ok {
        eprintln!("Landlock is not available on this kernel: sandbox tests skipped");
    }
    ok
}

#[test]
fn a_confined_command_writes_only_below_the_root() {
    if !landlock() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let out = outside();
    let canary = out.path().join("canary");
    let r = run(
        root.path(),
        &format!("echo pwned > {}", canary.display()),
        confined(temp.path()),
    );
    assert_eq!(r.status, TaskStatus::Failed, "{r:#?}");
    assert!(!canary.exists());
    // Unconfined, the same command could.
    let r = run(
        root.path(),
        &format!("echo fine > {}", canary.display()),
        RunOptions {
            settings: Settings {
                allow_any: true,
                ..Settings::default()
            },
            ..RunOptions::default()
        },
    );
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    std::fs::remove_file(&canary).unwrap();
    // Inside the root, the temporary directory and /dev/null: allowed.
    let r = run(
        root.path(),
        "echo ok > inside.txt && mkdir -p d && echo x > d/y && echo z > /dev/null && t=$(mktemp) && rm \"$t\"",
        confined(temp.path()),
    );
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(root.path().join("inside.txt")).unwrap(),
        "ok\n"
    );
    // Reading is allowed everywhere.
    std::fs::write(out.path().join("readable"), "hello").unwrap();
    let r = run(
        root.path(),
        &format!("cat {}", out.path().join("readable").display()),
        confined(temp.path()),
    );
    assert_eq!(r.output.as_deref(), Some("hello"));
}

#[test]
fn a_confined_command_opens_no_tcp_connection() {
    if !landlock() || !Path::new("/bin/bash").exists() && !Path::new("/usr/bin/bash").exists() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected'");
    let r = run(root.path(), &connect, confined(temp.path()));
    assert_eq!(r.status, TaskStatus::Failed, "{r:#?}");
    assert!(!r.output.unwrap_or_default().contains("connected"));
    assert!(listener.accept().is_err(), "the listener was reached");
    // Unconfined, it connects: the refusal above is the sandbox's.
    let r = run(
        root.path(),
        &connect,
        RunOptions {
            settings: Settings {
                allow_any: true,
                ..Settings::default()
            },
            ..RunOptions::default()
        },
    );
    assert_eq!(r.output.as_deref(), Some("connected\n"), "{r:#?}");
}

/// Whether the kernel scopes signals and abstract sockets (Landlock ABI
/// 6); the tests of them are skipped, said so, where it does not.
fn scoped() -> bool {
    let ok = landlock() && sandbox_scoped();
    if !ok {
        eprintln!("Landlock ABI 6 is not available on this kernel: scope tests skipped");
    }
    ok
}

#[test]
fn a_confined_command_signals_no_process_outside_its_sandbox() {
    if !scoped() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    // Another program of the user's, started before the command.
    let mut other = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = other.id();
    for signal in ["-9", "-TERM", "-STOP", "-0"] {
        let r = run(
            root.path(),
            &format!("kill {signal} {pid}"),
            confined(temp.path()),
        );
        assert_eq!(r.status, TaskStatus::Failed, "kill {signal}: {r:#?}");
        assert!(alive(pid), "kill {signal} reached process {pid}");
    }
    // Within its own sandbox it signals freely: its own children.
    let r = run(
        root.path(),
        "sleep 60 & kill -9 $! && wait $!; echo $?",
        confined(temp.path()),
    );
    assert!(
        r.output.as_deref().is_some_and(|o| o.ends_with("137\n")),
        "{r:#?}"
    );
    // Unconfined, the same command reaches it: the refusals above are the
    // sandbox's.
    let r = run(
        root.path(),
        &format!("kill -9 {pid}"),
        RunOptions {
            settings: Settings {
                allow_any: true,
                ..Settings::default()
            },
            ..RunOptions::default()
        },
    );
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    other.wait().unwrap();
}

#[test]
fn a_confined_command_connects_to_no_abstract_socket_made_outside_it() {
    use std::os::linux::net::SocketAddrExt;
    if !scoped() || !Path::new("/usr/bin/perl").exists() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let name = format!("clada-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(&name).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_un(\"\\0{name}\")) or die \"connect: $!\\n\"; print \"connected\\n\"'"
    );
    let r = run(root.path(), &connect, confined(temp.path()));
    assert_eq!(r.status, TaskStatus::Failed, "{r:#?}");
    assert!(!r.output.unwrap_or_default().contains("connected"));
    assert!(listener.accept().is_err(), "the socket was reached");
    // Unconfined, it connects: the refusal above is the sandbox's.
    let r = run(
        root.path(),
        &connect,
        RunOptions {
            settings: Settings {
                allow_any: true,
                ..Settings::default()
            },
            ..RunOptions::default()
        },
    );
    assert_eq!(r.output.as_deref(), Some("connected\n"), "{r:#?}");
}

#[test]
fn a_process_that_left_the_group_dies_at_the_timeout() {
    let has_setsid = ["/usr/bin/setsid", "/bin/setsid"]
        .iter()
        .any(|p| Path::new(p).exists());
    if !has_setsid {
        eprintln!("no setsid on this machine: test skipped");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let options = RunOptions {
        settings: Settings {
            allow_any: true,
            timeout: Duration::from_millis(500),
            ..Settings::default()
        },
        ..RunOptions::default()
    };
    let r = run(
        root.path(),
        // The pid is written by the command: another test's command ending
        // meanwhile may end the escaped process first.
        "setsid sh -c 'exec sleep 60' &\necho $! > escaped.pid\nsleep 60",
        options,
    );
    assert_eq!(r.error.map(|e| e.kind), Some(ErrorType::ExecTimeout));
    let pid: i32 = (0..100)
        .find_map(|_| {
            let text = std::fs::read_to_string(root.path().join("escaped.pid")).ok();
            if text.is_none() {
                std::thread::sleep(Duration::from_millis(10));
            }
            text.and_then(|t| t.trim().parse().ok())
        })
        .expect("the escaped process wrote its pid");
    let gone = (0..200).any(|_| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        let alive = stat.is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        });
        if alive {
            std::thread::sleep(Duration::from_millis(10));
        }
        !alive
    });
    assert!(
        gone,
        "process {pid} left the group with setsid and survived"
    );
}

/// Whether the process is still there (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn the_other_children_of_the_program_using_clada_live_on() {
    // Commands are told from the program's own children by their session,
    // which needs the `setsid` program.
    if !["/usr/bin/setsid", "/bin/setsid"]
        .iter()
        .any(|p| Path::new(p).exists())
    {
        eprintln!("no setsid on this machine: test skipped");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut before = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    // Another started by the program while the command runs.
    let during = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(300));
        std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap()
    });
    let r = run(
        root.path(),
        "setsid env -i sh -c 'exec sleep 30' > /dev/null 2>&1 &\necho $! > escaped.pid\nsleep 1",
        RunOptions {
            settings: Settings {
                allow_any: true,
                ..Settings::default()
            },
            ..RunOptions::default()
        },
    );
    let mut during = during.join().unwrap();
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    let escaped: u32 = std::fs::read_to_string(root.path().join("escaped.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !alive(escaped),
        "the command's process {escaped} survived it"
    );
    assert!(alive(before.id()) && before.try_wait().unwrap().is_none());
    assert!(alive(during.id()) && during.try_wait().unwrap().is_none());
    for child in [&mut before, &mut during] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

/// The attack of issue 19: a confined command plants links where clada,
/// unconfined, writes afterwards (its lock and journal, in the runtime
/// directory, which without `XDG_RUNTIME_DIR` lies in the temporary
/// directory), or into the temporary directory another run's command
/// works in. A confined command may write only its own temporary
/// directory, made for it and removed after it.
#[test]
fn a_confined_command_writes_neither_the_lock_directory_nor_another_run_s_temp() {
    if !landlock() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let dirs = clada_markers::engine::Dirs {
        config: scratch.path().join("config"),
        state: scratch.path().join("state"),
        // As without XDG_RUNTIME_DIR: in the temporary directory.
        runtime: tmp.join("clada-test"),
    };
    let (a, b) = (scratch.path().join("a"), scratch.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let apply = |root: &Path, command: &str| {
        let doc = format!("<<<<<<< RUN\n{command}\n>>>>>>> END\n");
        let doc = parse_with(&doc, ParseOptions::default());
        let mut options = confined(&tmp);
        options.settings.timeout = Duration::from_secs(20);
        let report = options
            .give(Apply::new(root).unwrap())
            .git(None)
            .dirs(Some(dirs.clone()))
            .run(&doc);
        crate::common::tasks(report).remove(0)
    };
    std::thread::scope(|scope| {
        // Run A holds its lock and journal; its command says where its
        // temporary directory is and waits.
        let first = scope.spawn(|| {
            apply(
                &a,
                "echo \"$TMPDIR\" > tmpdir.new && mv tmpdir.new tmpdir && echo x > \"$TMPDIR/mine\" && \
                 i=0; while [ ! -e go ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done",
            )
        });
        let theirs = (0..400)
            .find_map(|_| {
                let text = std::fs::read_to_string(a.join("tmpdir")).ok();
                if text.is_none() {
                    std::thread::sleep(Duration::from_millis(25));
                }
                text
            })
            .expect("the first run's command started");
        let theirs = theirs.trim().to_owned();
        assert!(Path::new(&theirs).starts_with(&tmp), "{theirs}");
        let locks = dirs.runtime.join("locks");
        let mut targets = vec![
            locks.join("planted"),
            dirs.runtime.join("planted"),
            tmp.join("planted"),
            Path::new(&theirs).join("planted"),
            Path::new(&theirs).join("mine"),
        ];
        // The lock and journal files of run A themselves.
        for e in std::fs::read_dir(&locks).unwrap() {
            targets.push(e.unwrap().path());
        }
        assert!(
            targets
                .iter()
                .any(|t| t.to_string_lossy().ends_with(".lock.journal")),
            "{targets:?}"
        );
        let tries: Vec<String> = targets
            .iter()
            .map(|t| {
                let t = shell_words::quote(&t.to_string_lossy()).into_owned();
                format!(
                    "(echo x >> {t}) 2>/dev/null && echo \"wrote {t}\"; \
                     ln -s /nowhere {t}.link 2>/dev/null && echo \"linked {t}\";"
                )
            })
            .collect();
        let r = apply(
            &b,
            &format!(
                "{} echo own > \"$TMPDIR/own\" && cat \"$TMPDIR/own\"",
                tries.join(" ")
            ),
        );
        std::fs::write(a.join("go"), "").unwrap();
        let output = r.output.clone().unwrap_or_default();
        assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
        assert_eq!(output, "own\n", "the confined command wrote: {output}");
        for t in &targets {
            let link = format!("{}.link", t.display());
            assert!(std::fs::symlink_metadata(link).is_err());
        }
        assert!(std::fs::symlink_metadata(locks.join("planted")).is_err());
        assert!(std::fs::symlink_metadata(tmp.join("planted")).is_err());
        let first = first.join().unwrap();
        assert_eq!(first.status, TaskStatus::Success, "{first:#?}");
        // Removed with what it held when its command ended.
        assert!(!Path::new(&theirs).exists(), "{theirs} is left");
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with("clada-run-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    });
}

/// With the home directory as the root, clada's configuration, state and
/// runtime directories all lie inside it: a confined command may write
/// none of them (its lock and journal included), while the rest of the
/// home stays as writable as any root.
#[test]
fn a_confined_command_writes_none_of_clada_s_directories_inside_the_root() {
    if !landlock() {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let root = home.path();
    let run_dir = root.join("run");
    let dirs = clada_markers::engine::Dirs::from_lookup(|name| match name {
        "HOME" => Some(root.as_os_str().to_owned()),
        "XDG_RUNTIME_DIR" => Some(run_dir.as_os_str().to_owned()),
        _ => None,
    })
    .unwrap();
    for d in [&dirs.config, &dirs.state] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::create_dir_all(root.join("project")).unwrap();
    let targets = [
        "run/clada/locks/planted",
        ".config/clada/approvals.json",
        ".local/state/clada/planted",
    ];
    let mut tries: Vec<String> = targets
        .iter()
        .map(|t| format!("(echo x >> {t}) 2>/dev/null && echo \"wrote {t}\";"))
        .collect();
    // The run's own lock and journal, by whatever name they have.
    tries.push(
        "for f in run/clada/locks/*; do (echo x >> \"$f\") 2>/dev/null && echo \"wrote $f\"; done;"
            .to_owned(),
    );
    let doc = format!(
        "<<<<<<< WRITE path=\"project/a.txt\"\na\n>>>>>>> END\n<<<<<<< RUN\n{} ls run/clada/locks | wc -l && echo ok > project/b.txt && cat project/b.txt\n>>>>>>> END\n",
        tries.join(" ")
    );
    let doc = parse_with(&doc, ParseOptions::default());
    let report = confined(temp.path())
        .give(Apply::new(root).unwrap())
        .git(None)
        .dirs(Some(dirs.clone()))
        .run(&doc);
    let r = crate::common::tasks(report).remove(1);
    assert_eq!(r.status, TaskStatus::Success, "{r:#?}");
    // It reads the lock directory (a lock and its journal), writes nothing
    // there, and writes the rest of the root.
    assert_eq!(r.output.as_deref(), Some("2\nok\n"), "{r:#?}");
    for t in targets {
        assert!(!root.join(t).exists(), "{t} was written");
    }
}
