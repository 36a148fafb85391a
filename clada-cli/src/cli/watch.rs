//! `clada watch FILE -C ROOT` (PROTOCOL §11.6): follows a file a person
//! pastes replies into and applies each unit the first time it is complete
//! there, never twice, whatever other watches of the file do: the memory of
//! what was applied is shared, and read afresh under its lock before each
//! unit ([`WatchState`]).
//!
//! Each change reads only what was appended since the last ([`Tail`]): a
//! file that grows by appends costs one pass over it in all, not one per
//! change. Limits apply per unit, not to the file (PROTOCOL §11.5–11.6): a
//! file grows past 50 MiB as replies are pasted, and only what a unit
//! holds is kept while it is read. A file replaced, made shorter, or rewritten before where the
//! last read stopped is read again from its start; the memory keeps its
//! units already applied from running again.
//!
//! A unit whose text appears again further down (a reply pasted twice, an
//! edit resent) is the same unit: it never runs twice, and its repeat is
//! reported once, `repeated_unit`, saying where it ran ([`Occurrences`]).
//!
//! What appears in the file while a unit with a command runs is never
//! applied: a command could append units to the file that feeds the watch
//! (it may write anywhere its sandbox lets it, and Landlock cannot carve
//! one file out of the root it may write), and the watch would run them,
//! and their commands, without end. Such units are reported and remembered,
//! never run.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clada_markers::dialect::Dialect;
use clada_markers::input::read_line;
use clada_markers::report::StreamReport;
use clada_markers::stream::{Chunk, Splitter};
use clada_markers::syntax::DiagnosticKind;
use clada_markers::watch::{Held, WatchState, key};
use clada_markers::{Apply, Op, ParseOptions};
use notify::{RecursiveMode, Watcher as _};

use super::streamed::{Refusal, finish, unit};
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
    let state = WatchState::new(&dirs, &args.policy.root, &file);
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
    let mut totals = StreamReport::new();
    let mut watch = Watch {
        args,
        apply: &mut apply,
        color,
        file: file.clone(),
        state,
        applied: HashSet::new(),
        list_read: 0,
        tail: Tail::new(args.dialect.streamed()),
        pending: VecDeque::new(),
        occurrences: Occurrences::default(),
        took_effect: HashMap::new(),
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
    finish(&totals, args.format);
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
    /// How far the file was read.
    tail: Tail,
    /// The units read and not yet taken, with their keys.
    pending: VecDeque<Pending>,
    /// Where in the file, as last read from its start, each text was.
    occurrences: Occurrences,
    /// For each text this watch ran, whether it took effect (a task
    /// applied or a command run): a repeat of one that did not may run.
    took_effect: HashMap<String, bool>,
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
    fn pass(&mut self, totals: &mut StreamReport) -> Result<(), String> {
        self.read_into_pending();
        while let Some(Pending {
            key: unit_key,
            text_key,
            chunk,
            repeat_of,
        }) = self.pending.pop_front()
        {
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
            // A repeat runs only where its first run is known to have
            // taken no effect (nothing applied, no command run): running
            // it again cannot do anything twice.
            if let Some(first) = repeat_of
                && self.took_effect.get(&text_key) != Some(&false)
            {
                let file = self.file.display();
                let (message, help) = if self.took_effect.get(&text_key) == Some(&true) {
                    (
                        format!(
                            "this unit is the same text as the unit at line {first} of {file}, which this watch applied: \
                             it is not run again"
                        ),
                        "nothing to do if it is a resend; to make the change again, send a unit that differs from the first",
                    )
                } else {
                    (
                        format!(
                            "this unit is the same text as the unit at line {first} of {file}, which a watch took before \
                             (its report was printed then): it is not run again"
                        ),
                        "if that unit applied, there is nothing to do; if it failed, send a corrected unit (it must differ from this one)",
                    )
                };
                let refusal = Refusal {
                    kind: DiagnosticKind::RepeatedUnit,
                    message,
                    help,
                };
                unit(
                    self.args,
                    self.apply,
                    self.color,
                    &chunk,
                    Some(refusal),
                    totals,
                    &self.file.display().to_string(),
                );
                self.remember(&held, unit_key)?;
                continue;
            }
            let command = self.has_command(&chunk);
            if command && stamp(&self.file) != self.known_stamp {
                // Written meanwhile, not by this unit's command.
                self.read_into_pending();
            }
            let number = totals.summary.blocks + 1;
            let source = self.file.display().to_string();
            let took = unit(
                self.args, self.apply, self.color, &chunk, None, totals, &source,
            );
            // A repeat that ran stands for its text from now on.
            let took = took || self.took_effect.get(&text_key) == Some(&true);
            self.took_effect.insert(text_key, took);
            self.remember(&held, unit_key)?;
            if command && stamp(&self.file) != self.known_stamp {
                for written in self.read() {
                    let (written, is_new) = self.occurrence(written);
                    let Pending {
                        key: written_key,
                        chunk: written,
                        ..
                    } = written;
                    if !is_new || self.applied.contains(&written_key) {
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
                        &self.file.display().to_string(),
                    );
                    self.remember(&held, written_key)?;
                }
            }
        }
        Ok(())
    }

    /// The units completed in the file since it was last read (an
    /// unfinished last one waits).
    fn read(&mut self) -> Vec<Chunk> {
        self.known_stamp = stamp(&self.file);
        let (chunks, from_start) = self.tail.read(&self.file);
        if from_start {
            self.occurrences = Occurrences::default();
        }
        chunks
    }

    /// Reads the units completed since the file was last read, notes them
    /// as known, and queues them, each with the key of its occurrence.
    fn read_into_pending(&mut self) {
        for chunk in self.read() {
            let (pending, _) = self.occurrence(chunk);
            self.pending.push_back(pending);
        }
    }

    /// Notes `chunk`, just read, as known (its text hashed once); returns
    /// it as a pending unit, and whether its text was new to this watch.
    fn occurrence(&mut self, chunk: Chunk) -> (Pending, bool) {
        let text_key = key(chunk.unit_text());
        let new = self.known.insert(text_key.clone());
        let (key, repeat_of) = match self.occurrences.of(&text_key, &chunk) {
            (1, _) => (text_key.clone(), None),
            (n, first) => (format!("{text_key}#{n}"), Some(first)),
        };
        let pending = Pending {
            key,
            text_key,
            chunk,
            repeat_of,
        };
        (pending, new)
    }

    fn has_command(&self, chunk: &Chunk) -> bool {
        let options = ParseOptions {
            allow_escape: self.args.policy.allow_escape,
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

/// A unit read and not yet taken.
struct Pending {
    /// What the shared memory knows it by: the hash of its text, and
    /// `#N` for the text's Nth occurrence in the file (N > 1).
    key: String,
    /// The hash of its text.
    text_key: String,
    chunk: Chunk,
    /// For a text seen before at another place: the line of its first
    /// occurrence.
    repeat_of: Option<usize>,
}

/// Where each text occurs in the file, as read from its start: the offset
/// and line of each distinct place, in order. A text read again at a place
/// it was read (the file read again from its start, the prose after the
/// last unit handed out at each read) is the same occurrence; at a new
/// place, the next one.
#[derive(Default)]
struct Occurrences(HashMap<String, Vec<(usize, usize)>>);

impl Occurrences {
    /// Which occurrence of its text (1-based) `chunk` is, and the line of
    /// the first.
    fn of(&mut self, text_key: &str, chunk: &Chunk) -> (usize, usize) {
        let places = self.0.entry(text_key.to_owned()).or_default();
        let n = match places.iter().position(|&(at, _)| at == chunk.offset) {
            Some(i) => i + 1,
            None => {
                places.push((chunk.offset, chunk.line));
                places.len()
            }
        };
        (n, places.first().map_or(chunk.line, |&(_, line)| line))
    }
}

/// How many bytes before where it stopped reading the watch compares, to
/// tell a file appended to from one rewritten.
const CHECK: usize = 4096;

/// Where a watch is in its file: each read takes only what was appended
/// since the last, so that a file that grows by appends costs one pass in
/// all, not one per change.
struct Tail {
    /// The file's inode when it was last read.
    ino: u64,
    /// How many of its bytes were read: whole lines, and a last line
    /// without its line feed when it completed a unit.
    offset: u64,
    /// The bytes just before `offset` (at most [`CHECK`]).
    last: Vec<u8>,
    splitter: Splitter,
    /// The dialect FILE is read in.
    dialect: Dialect,
}

impl Tail {
    fn new(dialect: Dialect) -> Tail {
        Tail {
            ino: 0,
            offset: 0,
            last: Vec::new(),
            splitter: Splitter::for_dialect(dialect),
            dialect,
        }
    }

    /// The units of `file` completed by what was appended since the last
    /// read (an unfinished last one waits), and the runs of prose that
    /// hold edits in another format or near-miss markers, the last one
    /// included. A file replaced (another
    /// inode), made shorter, or whose bytes before where the last read
    /// stopped are no longer those it read is read again from its start:
    /// its units already applied are known by their hash. The file is read
    /// line by line by the library's reader, whatever its length: limits
    /// apply per unit (a unit past the limit is handed out refused), and
    /// only the unit being read is kept. Says too whether the file was
    /// read from its start.
    fn read(&mut self, file: &Path) -> (Vec<Chunk>, bool) {
        use std::io::{Read as _, Seek as _};
        use std::os::unix::fs::{FileExt as _, MetadataExt as _};
        let Ok(f) = std::fs::File::open(file) else {
            return (Vec::new(), false);
        };
        let Ok(meta) = f.metadata() else {
            return (Vec::new(), false);
        };
        let appended = meta.ino() == self.ino && meta.len() >= self.offset && {
            let mut was = vec![0; self.last.len()];
            let at = self.offset - self.last.len() as u64;
            f.read_exact_at(&mut was, at).is_ok() && was == self.last
        };
        if !appended {
            *self = Tail::new(self.dialect);
            self.ino = meta.ino();
        }
        if meta.len() <= self.offset || (&f).seek(std::io::SeekFrom::Start(self.offset)).is_err() {
            return (Vec::new(), !appended);
        }
        // The file as long as it was when this read began: what is
        // appended meanwhile is read at its own change.
        let mut reader =
            std::io::BufReader::with_capacity(1 << 16, (&f).take(meta.len() - self.offset));
        let mut units = Vec::new();
        let mut line = Vec::new();
        let mut taken = 0;
        // Whole lines: a line being written is read again next time.
        while let Ok(raw @ 1..) = read_line(&mut reader, &mut line) {
            if line.last() == Some(&b'\n') {
                // A unit that is not UTF-8 is refused where the bytes
                // are (§11.6).
                units.extend(self.splitter.push_read(&line, raw));
                taken += raw as u64;
                continue;
            }
            // A last line without its line feed completes a unit when it
            // is its closer (a file that ends without one).
            // Only a closer written whole: one cut short (`>>>>>>> E`)
            // waits for the rest of its line.
            if let Some(unit) = self.splitter.push_unfinished(&line) {
                units.push(unit);
                taken += raw as u64;
            }
            break;
        }
        self.offset += taken;
        let check = self.offset.min(CHECK as u64);
        self.last = vec![0; check as usize];
        if f.read_exact_at(&mut self.last, self.offset - check)
            .is_err()
        {
            self.last.clear();
        }
        // The prose after the last unit, when it holds edits in another
        // format or near-miss markers (reported, never applied).
        units.extend(self.splitter.prose_so_far());
        (units, !appended)
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    a.file_name() == b.file_name() && canon(a) == canon(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(n: usize) -> String {
        format!("<<<<<<< WRITE path=\"{n}.txt\"\n{n}\n>>>>>>> END\n")
    }

    fn append(file: &Path, text: &str) {
        use std::io::Write as _;
        std::fs::OpenOptions::new()
            .append(true)
            .open(file)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }

    /// The text of the units read.
    fn read(tail: &mut Tail, file: &Path) -> Vec<String> {
        tail.read(file).0.into_iter().map(|c| c.text).collect()
    }

    #[test]
    fn only_what_was_appended_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("replies.md");
        std::fs::write(&file, format!("Prose.\n{}", unit(1))).unwrap();
        let mut tail = Tail::new(Dialect::Clada);
        assert_eq!(read(&mut tail, &file), [unit(1)]);
        assert_eq!(read(&mut tail, &file), Vec::<String>::new());
        // An unfinished unit waits, a line being written too.
        let two = unit(2);
        let (head, rest) = two.split_at(two.len() - 6);
        append(&file, head);
        assert_eq!(read(&mut tail, &file), Vec::<String>::new());
        append(&file, rest);
        assert_eq!(read(&mut tail, &file), std::slice::from_ref(&two));
        // A closer without its line feed ends the unit; the line feed
        // that follows it starts nothing again.
        let three = unit(3);
        append(&file, three.trim_end());
        assert_eq!(read(&mut tail, &file), [three.trim_end().to_owned()]);
        append(&file, "\nMore prose.\n");
        assert_eq!(read(&mut tail, &file), Vec::<String>::new());
        assert_eq!(tail.offset, std::fs::metadata(&file).unwrap().len());
    }

    /// Issue 31: a write that stopped inside the closing line (`>>>`,
    /// `>>>>>>> E`, `>>>>>>> END` before its line feed…) left the unit
    /// judged with a closer cut short, failed and remembered, and never
    /// applied once the rest came. Each cut waits, or takes the unit
    /// whole.
    #[test]
    fn a_unit_cut_inside_its_closing_line_waits_for_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("replies.md");
        let one = unit(1);
        let closer = one.len() - ">>>>>>> END\n".len();
        for cut in closer..one.len() {
            std::fs::write(&file, "").unwrap();
            let mut tail = Tail::new(Dialect::Clada);
            append(&file, &one[..cut]);
            let first = read(&mut tail, &file);
            append(&file, &one[cut..]);
            let mut got = first;
            got.extend(read(&mut tail, &file));
            let whole = cut == one.len() - 1;
            let want = if whole { one.trim_end() } else { one.as_str() };
            assert_eq!(got, [want.to_owned()], "cut at {cut}: {:?}", &one[..cut]);
        }
    }

    /// Limits apply per unit, not to the file: the units of a file that
    /// grew past 50 MiB are read and applied, a unit past the limit is
    /// handed out once and refused, and what its body holds is no unit.
    #[test]
    fn a_file_longer_than_the_limit_is_read_unit_by_unit() {
        use clada_markers::syntax::MAX_DOCUMENT_SIZE;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("replies.md");
        let mut text = unit(1);
        // Prose up to past the limit, then a unit larger than the limit
        // with a unit-shaped text inside it.
        let prose = "words words words words words words words words words\n";
        text += &prose.repeat(MAX_DOCUMENT_SIZE / prose.len() + 1);
        text += "<<<<<<< WRITE path=\"big.txt\"\n";
        text += &"x".repeat(MAX_DOCUMENT_SIZE + 10);
        text += "\n";
        text += &unit(9);
        text += ">>>>>>> END\n";
        text += &unit(2);
        std::fs::write(&file, &text).unwrap();
        assert!(text.len() > 2 * MAX_DOCUMENT_SIZE);
        let mut tail = Tail::new(Dialect::Clada);
        let (chunks, _) = tail.read(&file);
        assert_eq!(chunks.len(), 3, "unit 1, the big unit, unit 2");
        assert_eq!(chunks[0].text, unit(1));
        assert_eq!(chunks[2].text, unit(2));
        assert_eq!(chunks[2].offset, text.len() - unit(2).len());
        let big = chunks[1].document(ParseOptions::default());
        let kinds: Vec<_> = big.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [DiagnosticKind::InputTooLarge]);
        // Appends after it are read alone, as ever.
        append(&file, &unit(3));
        assert_eq!(read(&mut tail, &file), [unit(3)]);
        assert_eq!(tail.offset, std::fs::metadata(&file).unwrap().len());
    }

    #[test]
    fn a_file_rewritten_or_made_shorter_is_read_again_from_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("replies.md");
        std::fs::write(&file, format!("{}{}", unit(1), unit(2))).unwrap();
        let mut tail = Tail::new(Dialect::Clada);
        assert_eq!(read(&mut tail, &file).len(), 2);
        // Replaced (another inode), longer than before.
        let other = dir.path().join("other.md");
        std::fs::write(&other, format!("{}{}{}", unit(4), unit(2), unit(5))).unwrap();
        std::fs::rename(&other, &file).unwrap();
        assert_eq!(read(&mut tail, &file), [unit(4), unit(2), unit(5)]);
        // Made shorter in place.
        std::fs::write(&file, unit(6)).unwrap();
        assert_eq!(read(&mut tail, &file), [unit(6)]);
        // Rewritten in place, as long or longer, a byte before the end
        // changed.
        let text = format!("{}{}", unit(7), unit(8));
        std::fs::write(&file, &text).unwrap();
        assert_eq!(read(&mut tail, &file), [unit(7), unit(8)]);
        let nine = unit(7).replace("7\n>", "9\n>");
        std::fs::write(&file, format!("{nine}{}{}", unit(8), unit(1))).unwrap();
        assert_eq!(read(&mut tail, &file), [nine, unit(8), unit(1)]);
    }
}
