//! `clada watch FILE -C ROOT` (PROTOCOL §11.6): follows a file a person
//! pastes replies into and applies each unit the first time it is complete
//! there, never twice, whatever other watches of the file do: the memory of
//! what was applied is shared, and read afresh under its lock before each
//! unit ([`WatchState`]).
//!
//! What appears in the file while a unit with a command runs is never
//! applied: a command could append units to the file that feeds the watch
//! (it may write anywhere its sandbox lets it, and Landlock cannot carve
//! one file out of the root it may write), and the watch would run them,
//! and their commands, without end. Such units are reported and remembered,
//! never run.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clada_markers::stream::{Chunk, Splitter};
use clada_markers::syntax::DiagnosticKind;
use clada_markers::watch::{Held, WatchState, key};
use clada_markers::{Apply, Op, ParseOptions};
use notify::{RecursiveMode, Watcher as _};

use super::stream::{Refusal, Totals, unit};
use super::{ApplyArgs, Format};

pub(crate) fn run(args: &ApplyArgs, apply: Apply, color: bool) -> u8 {
    let Some(file) = args.file.clone().filter(|f| f != Path::new("-")) else {
        eprintln!("clada: watch needs a FILE to follow");
        return 2;
    };
    // The file's own units must not write it: they would feed the watch.
    let mut apply = apply.protect(&file);
    let Ok(dirs) = clada_markers::engine::Dirs::from_env() else {
        eprintln!(
            "clada: watch remembers applied units in clada's state directory, and there is none (no HOME)"
        );
        return 2;
    };
    let state = WatchState::new(&dirs, &args.root, &file);
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
    let mut watch = Watch {
        args,
        apply: &mut apply,
        color,
        file: file.clone(),
        state,
        applied: HashSet::new(),
        list_read: 0,
        known: HashSet::new(),
        known_stamp: None,
        stop: stop.clone(),
    };
    if let Err(e) = watch.pass(&mut totals) {
        eprintln!("clada: {e}");
        return 2;
    }
    while !stop.load(Ordering::SeqCst) {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(event)) if event.paths.iter().any(|p| same_file(p, &file)) => {
                if let Err(e) = watch.pass(&mut totals) {
                    eprintln!("clada: {e}");
                    return 2;
                }
            }
            Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    totals.finish(args.format);
    0
}

/// A watch of one file.
struct Watch<'w> {
    args: &'w ApplyArgs,
    apply: &'w mut Apply,
    color: bool,
    file: PathBuf,
    state: WatchState,
    /// The units known to be applied (or refused), by any watch: only
    /// grows, and is read afresh under the lock before a unit runs.
    applied: HashSet<String>,
    /// How much of the shared list `applied` holds.
    list_read: u64,
    /// The units complete in the file when it was last read, and its stamp
    /// then: what appears beside them while a command runs was written
    /// by the command.
    known: HashSet<String>,
    known_stamp: Option<Stamp>,
    stop: Arc<AtomicBool>,
}

/// What tells one state of the watched file from another.
type Stamp = (u64, u64, std::time::SystemTime);

fn stamp(file: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::metadata(file).ok()?;
    Some((m.ino(), m.len(), m.modified().ok()?))
}

impl Watch<'_> {
    /// Applies each complete unit of the file not applied yet.
    fn pass(&mut self, totals: &mut Totals) -> Result<(), String> {
        let units = self.read();
        for chunk in units {
            let unit_key = key(&chunk.text);
            if self.applied.contains(&unit_key) {
                continue;
            }
            let stop = self.stop.clone();
            let held = self
                .state
                .lock(&move || stop.load(Ordering::SeqCst))
                .map_err(|e| format!("cannot take the watch's lock: {e}"))?;
            // Ctrl-C while another watch held it.
            let Some(held) = held else { return Ok(()) };
            let (applied, read) = held
                .applied_since(self.list_read)
                .map_err(|e| format!("cannot read what the watch applied: {e}"))?;
            self.applied.extend(applied);
            self.list_read = read;
            if self.applied.contains(&unit_key) {
                continue;
            }
            let command = self.has_command(&chunk);
            if command && stamp(&self.file) != self.known_stamp {
                // Written meanwhile, not by this unit's command.
                self.read();
            }
            let number = totals.units() + 1;
            unit(self.args, self.apply, self.color, &chunk, None, totals);
            self.remember(&held, unit_key)?;
            if command && stamp(&self.file) != self.known_stamp {
                let before = std::mem::take(&mut self.known);
                for written in self.read() {
                    let written_key = key(&written.text);
                    if before.contains(&written_key) || self.applied.contains(&written_key) {
                        continue;
                    }
                    let refusal = Refusal {
                        kind: DiagnosticKind::WrittenDuringCommand,
                        message: format!(
                            "this unit appeared in {} while the watch ran unit {number}, which runs a command: \
                             what a command writes into the watched file is never applied",
                            self.file.display()
                        ),
                        help: "if you wrote it, apply it with `clada apply`; the watch will not apply this text",
                    };
                    unit(
                        self.args,
                        self.apply,
                        self.color,
                        &written,
                        Some(refusal),
                        totals,
                    );
                    self.remember(&held, written_key)?;
                }
            }
        }
        Ok(())
    }

    /// The units of the file that are complete now (an unfinished last one
    /// waits), noted as known.
    fn read(&mut self) -> Vec<Chunk> {
        self.known_stamp = stamp(&self.file);
        let units = complete_units(&self.file);
        self.known.extend(units.iter().map(|c| key(&c.text)));
        units
    }

    fn has_command(&self, chunk: &Chunk) -> bool {
        let options = ParseOptions {
            allow_escape: self.args.allow_escape,
        };
        chunk
            .document(options)
            .tasks()
            .any(|t| matches!(t.op, Some(Op::Run { .. })))
    }

    /// Notes a unit as applied, for every watch of the file.
    fn remember(&mut self, held: &Held, key: String) -> Result<(), String> {
        held.remember(&key).map_err(|e| {
            format!(
                "cannot remember an applied unit in {}: {e}",
                self.state.list_path().display()
            )
        })?;
        self.applied.insert(key);
        Ok(())
    }
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

fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    a.file_name() == b.file_name() && canon(a) == canon(b)
}
