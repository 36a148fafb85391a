//! The engine against a real file system: links on the way, a directory
//! swapped for a link while applies run, atomic replacement, permissions.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clada_markers::report::{BlockReport, TaskStatus};
use clada_markers::{Apply, ErrorType, ParseOptions, parse_with};

fn apply_in(root: &Path, doc: &str, allow_escape: bool) -> Vec<BlockReport> {
    let doc = parse_with(doc, ParseOptions { allow_escape });
    let settings = clada_markers::Settings {
        git: None,
        allow_escape,
        ..Default::default()
    };
    Apply::new(root)
        .unwrap()
        .settings(settings)
        .run(&doc)
        .blocks
}

/// clada's temporary files are named `.NAME.clada-PID-N.tmp` (PROTOCOL §8).
fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".clada-")
}

fn outcome(blocks: &[BlockReport]) -> Vec<Option<ErrorType>> {
    blocks
        .iter()
        .flat_map(|b| &b.tasks)
        .map(|t| match t.status {
            TaskStatus::Success => None,
            _ => Some(
                t.error
                    .as_ref()
                    .map_or(ErrorType::MalformedStructure, |e| e.kind),
            ),
        })
        .collect()
}

fn leftover_temp_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if is_temp_name(&name) {
            found.push(name);
        }
        if e.file_type().unwrap().is_dir() {
            found.extend(leftover_temp_files(&e.path()));
        }
    }
    found
}

#[test]
fn refuses_links_on_the_way_and_at_the_end() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let outside = scratch.path().join("outside");
    std::fs::create_dir_all(root.join("real")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    std::fs::write(root.join("real/in.txt"), "inside\n").unwrap();
    symlink("../outside", root.join("out")).unwrap();
    symlink("real", root.join("in")).unwrap();
    symlink("real/in.txt", root.join("file-link")).unwrap();
    symlink("../outside/secret.txt", root.join("secret-link")).unwrap();

    let cases = [
        (
            "<<<<<<< WRITE path=\"out/secret.txt\"\npwned\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< WRITE path=\"out/new.txt\"\npwned\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< WRITE path=\"in/in.txt\"\npwned\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< WRITE path=\"secret-link\"\npwned\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< WRITE path=\"file-link\" append=\"true\"\npwned\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< SEARCH path=\"secret-link\"\nsecret\n=======\npwned\n>>>>>>> REPLACE\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< SEARCH path=\"out/secret.txt\"\nsecret\n=======\npwned\n>>>>>>> REPLACE\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< REMOVE path=\"out/secret.txt\"\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< MOVE from=\"out/secret.txt\" to=\"stolen.txt\"\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< MOVE from=\"real/in.txt\" to=\"out/\"\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
        (
            "<<<<<<< MOVE from=\"real/in.txt\" to=\"in/moved.txt\"\n>>>>>>> END\n",
            ErrorType::SymlinkNotAllowed,
        ),
    ];
    for (doc, want) in cases {
        for allow_escape in [false, true] {
            let got = outcome(&apply_in(&root, doc, allow_escape));
            assert_eq!(got, vec![Some(want)], "{doc}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing new outside"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("real/in.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn move_and_remove_act_on_a_link_itself() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    std::fs::write(root.join("target.txt"), "t\n").unwrap();
    symlink("target.txt", root.join("a")).unwrap();
    symlink("target.txt", root.join("b")).unwrap();
    let doc = "<<<<<<< MOVE from=\"a\" to=\"dir/a2\"\n>>>>>>> END\n<<<<<<< REMOVE path=\"b\"\n>>>>>>> END\n";
    assert_eq!(outcome(&apply_in(root, doc, false)), vec![None, None]);
    assert_eq!(
        std::fs::read_link(root.join("dir/a2")).unwrap(),
        Path::new("target.txt")
    );
    assert!(std::fs::symlink_metadata(root.join("b")).is_err());
    assert_eq!(
        std::fs::read_to_string(root.join("target.txt")).unwrap(),
        "t\n"
    );
}

#[test]
fn remove_of_a_tree_does_not_follow_links_inside_it() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let keep = scratch.path().join("keep");
    std::fs::create_dir_all(root.join("tree/deep")).unwrap();
    std::fs::create_dir_all(&keep).unwrap();
    std::fs::write(keep.join("precious"), "p").unwrap();
    std::fs::write(root.join("tree/deep/f"), "f").unwrap();
    symlink(&keep, root.join("tree/deep/link")).unwrap();
    let doc = "<<<<<<< REMOVE path=\"tree\"\n>>>>>>> END\n";
    assert_eq!(outcome(&apply_in(&root, doc, false)), vec![None]);
    assert!(!root.join("tree").exists());
    assert_eq!(std::fs::read_to_string(keep.join("precious")).unwrap(), "p");
}

#[test]
fn keeps_permission_bits_and_leaves_no_temporary_files() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path();
    std::fs::write(root.join("run.sh"), "echo old\n").unwrap();
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o751)).unwrap();
    let doc = "<<<<<<< TASKS\n<<<<<<< SEARCH path=\"run.sh\"\necho old\n=======\necho new\n>>>>>>> REPLACE\n\
               <<<<<<< WRITE path=\"run.sh\" append=\"true\"\necho more\n>>>>>>> END\n\
               <<<<<<< SEARCH path=\"run.sh\"\nnot there\n=======\nx\n>>>>>>> REPLACE\n>>>>>>> TASKS\n";
    let got = outcome(&apply_in(root, doc, false));
    assert_eq!(got, vec![None, None, Some(ErrorType::MatchCountMismatch)]);
    assert_eq!(
        std::fs::read_to_string(root.join("run.sh")).unwrap(),
        "echo new\necho more\n"
    );
    let mode = std::fs::metadata(root.join("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o751);
    assert_eq!(leftover_temp_files(root), Vec::<String>::new());
}

#[test]
fn refuses_to_read_a_pipe() {
    let scratch = tempfile::tempdir().unwrap();
    let fifo = scratch.path().join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let doc = "<<<<<<< SEARCH path=\"pipe\"\nx\n=======\ny\n>>>>>>> REPLACE\n";
    // Must return at once, not hang on the pipe.
    assert_eq!(
        outcome(&apply_in(scratch.path(), doc, false)),
        vec![Some(ErrorType::PermissionDenied)]
    );
}

#[test]
fn a_directory_swapped_for_a_link_never_lets_a_write_out() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let outside = scratch.path().join("outside");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim.txt"), "original\n").unwrap();
    std::fs::write(root.join("sub/victim.txt"), "original\n").unwrap();

    // Swap root/sub for a link to the outside directory and back, as fast
    // as possible, while documents are applied.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let root = root.clone();
        let outside = outside.clone();
        std::thread::spawn(move || {
            let spin = || {
                let t = std::time::Instant::now();
                while t.elapsed() < std::time::Duration::from_micros(30) {
                    std::hint::spin_loop();
                }
            };
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(root.join("sub"), root.join("sub.real")).is_ok() {
                    let _ = symlink(&outside, root.join("sub"));
                    spin();
                    let _ = std::fs::remove_file(root.join("sub"));
                    if std::fs::rename(root.join("sub.real"), root.join("sub")).is_err() {
                        // A WRITE made `sub` anew while it was away (or
                        // before the link was in place): out of the way
                        // with it, or no swap would succeed again.
                        let _ = std::fs::remove_dir_all(root.join("sub"));
                        let _ = std::fs::rename(root.join("sub.real"), root.join("sub"));
                    }
                    swaps += 1;
                }
                spin();
            }
            swaps
        })
    };
    let doc = "<<<<<<< WRITE path=\"sub/victim.txt\"\npwned\n>>>>>>> END\n\
               <<<<<<< WRITE path=\"sub/new.txt\"\npwned\n>>>>>>> END\n\
               <<<<<<< WRITE path=\"sub/victim.txt\" append=\"true\"\npwned\n>>>>>>> END\n\
               <<<<<<< SEARCH path=\"sub/victim.txt\"\noriginal\n=======\npwned\n>>>>>>> REPLACE\n\
               <<<<<<< MOVE from=\"sub/new.txt\" to=\"sub/moved.txt\"\n>>>>>>> END\n\
               <<<<<<< REMOVE path=\"sub/victim.txt\"\n>>>>>>> END\n\
               <<<<<<< REMOVE path=\"sub/moved.txt\"\n>>>>>>> END\n\
               <<<<<<< WRITE path=\"sub/victim.txt\"\noriginal\n>>>>>>> END\n";
    // At least 1,000 applies, and on until the race was met both ways (a
    // loaded machine may starve the swapper for a while), within a bound.
    let (mut refused, mut done) = (0, 0);
    let started = std::time::Instant::now();
    for round in 0.. {
        if round >= 1000 && ((refused > 0 && done > 0) || started.elapsed().as_secs() > 120) {
            break;
        }
        let got = outcome(&apply_in(&root, doc, false));
        refused += got
            .iter()
            .filter(|e| **e == Some(ErrorType::SymlinkNotAllowed))
            .count();
        done += got.iter().filter(|e| e.is_none()).count();
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(swaps > 0, "the swapper never ran");

    let names: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["victim.txt".to_owned()],
        "nothing may appear outside the root"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "original\n"
    );
    // The race was real: accesses met both the directory and the link.
    eprintln!("{swaps} swaps, {done} tasks done, {refused} refused as links");
    assert!(
        refused > 0 && done > 0,
        "{swaps} swaps, {done} done, {refused} refused"
    );
}

/// A path carries the place validation resolved it to, and the engine
/// takes it from there; a document parsed with `allow_escape` and run
/// without it is still refused where it would leave the root.
#[test]
fn a_place_resolved_with_allow_escape_is_refused_by_a_run_without_it() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let doc = "<<<<<<< WRITE path=\"../out.txt\"\npwned\n>>>>>>> END\n<<<<<<< MOVE from=\"a.txt\" to=\"../moved.txt\"\n>>>>>>> END\n";
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    let doc = parse_with(doc, ParseOptions { allow_escape: true });
    assert!(!doc.has_errors(), "{:?}", doc.diagnostics);
    let settings = clada_markers::Settings {
        git: None,
        allow_escape: false,
        ..Default::default()
    };
    let report = Apply::new(&root).unwrap().settings(settings).run(&doc);
    let errors: Vec<Option<ErrorType>> = report
        .blocks
        .iter()
        .flat_map(|b| &b.tasks)
        .map(|t| t.error.as_ref().map(|e| e.kind))
        .collect();
    assert_eq!(
        errors,
        [Some(ErrorType::PathEscape), Some(ErrorType::PathEscape)]
    );
    assert!(!scratch.path().join("out.txt").exists());
    assert!(!scratch.path().join("moved.txt").exists());
    assert!(root.join("a.txt").exists());
}
