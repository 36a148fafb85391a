//! `clada watch FILE -C ROOT` (PROTOCOL §11.6): follows a file a person
//! pastes replies into and applies each unit the first time it is complete
//! there, never twice.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clada_markers::Apply;
use clada_markers::stream::{Chunk, Splitter};
use notify::{RecursiveMode, Watcher as _};

use super::stream::{Totals, unit};
use super::{ApplyArgs, Format};

pub(crate) fn run(args: &ApplyArgs, apply: Apply, color: bool) -> u8 {
    let Some(file) = args.file.clone().filter(|f| f != Path::new("-")) else {
        eprintln!("clada: watch needs a FILE to follow");
        return 2;
    };
    // The file's own units must not write it: they would feed the watch.
    let mut apply = apply.protect(&file);
    let Some(state) = state_file(&args.root, &file) else {
        eprintln!(
            "clada: watch remembers applied units in clada's state directory, and there is none (no HOME)"
        );
        return 2;
    };
    let mut seen = load(&state);
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst)) {
            eprintln!("clada: cannot catch Ctrl-C: {e}");
            return 2;
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = match notify::recommended_watcher(move |e| {
        let _ = tx.send(e);
    }) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("clada: cannot watch {}: {e}", file.display());
            return 2;
        }
    };
    let dir = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
        eprintln!("clada: cannot watch {}: {e}", dir.display());
        return 2;
    }
    if args.format == Format::Text {
        eprintln!(
            "clada: watching {}; each unit is applied once, when it is complete; Ctrl-C stops",
            file.display()
        );
    }
    let mut totals = Totals::new();
    let mut pass = |totals: &mut Totals, seen: &mut HashSet<String>| {
        for chunk in complete_units(&file) {
            let key = key(&chunk);
            if seen.contains(&key) {
                continue;
            }
            unit(args, &mut apply, color, chunk, totals);
            remember(&state, &key);
            seen.insert(key);
        }
    };
    pass(&mut totals, &mut seen);
    while !stop.load(Ordering::SeqCst) {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(event)) if event.paths.iter().any(|p| same_file(p, &file)) => {
                pass(&mut totals, &mut seen);
            }
            Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    totals.finish(args.format);
    0
}

/// The units of `file` that are complete now (an unfinished last one waits).
fn complete_units(file: &Path) -> Vec<Chunk> {
    let Ok(bytes) = std::fs::read(file) else {
        return Vec::new();
    };
    let bytes = &bytes[..bytes.len().min(clada_markers::syntax::MAX_DOCUMENT_SIZE)];
    let mut splitter = Splitter::new();
    // A unit that is not UTF-8 is refused where the bytes are (§11.6).
    bytes
        .split_inclusive(|&b| b == b'\n')
        .filter_map(|l| splitter.push_bytes(l))
        .collect()
}

/// A unit's identity: the hash of its text (git's blob hash).
fn key(chunk: &Chunk) -> String {
    git2::Oid::hash_object(git2::ObjectType::Blob, chunk.text.as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_else(|_| chunk.text.len().to_string())
}

fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    a.file_name() == b.file_name() && canon(a) == canon(b)
}

/// Where the units applied from `file` to `root` are remembered: in clada's
/// state directory, never in the tree.
fn state_file(root: &Path, file: &Path) -> Option<PathBuf> {
    let dirs = clada_markers::engine::Dirs::from_env().ok()?;
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let id = format!("{}\0{}", canon(root).display(), canon(file).display());
    let name = git2::Oid::hash_object(git2::ObjectType::Blob, id.as_bytes()).ok()?;
    Some(dirs.state.join("watch").join(format!("{name}.applied")))
}

fn load(state: &Path) -> HashSet<String> {
    std::fs::read_to_string(state)
        .map(|s| s.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Adds a unit to the state file, on disk before the next unit runs.
fn remember(state: &Path, key: &str) {
    if let Some(dir) = state.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state);
    match file {
        Ok(mut f) => {
            let _ = writeln!(f, "{key}");
            let _ = f.sync_data();
        }
        Err(e) => eprintln!(
            "clada: cannot remember an applied unit in {}: {e}",
            state.display()
        ),
    }
}
