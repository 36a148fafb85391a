//! The journal of temporary names (PROTOCOL §7).
//!
//! Every write goes to a temporary file beside its target
//! (`.NAME.clada-PID-N.tmp`), renamed over the target once complete; with
//! `--atomic`, what a unit removes or replaces is set aside under such a
//! name (a file, a link or a whole directory) until the unit ends. A run
//! killed in between leaves the temporary name behind. So before using
//! one, a run notes it in a journal beside its lock (`LOCK.journal`), one
//! line per name: the root's canonical path, a tab, the path below the
//! root, and a `/` after it for a directory. Both are escaped ([`escape`]):
//! a backslash and every control byte (a line feed, a tab…) is written
//! `\xHH`, so that no name, whatever a command called a file, can end a
//! line or a field early. The next run on the root, holding the same lock,
//! removes what is listed and still there, without scanning the tree, and
//! forgets the lines; a run that ends normally forgets its own. Lines of
//! other roots sharing the lock file are kept.
//!
//! Only clada writes the journal: it lives beside the lock, by default in
//! clada's runtime directory, where no document or sandboxed command
//! writes, and it is opened as the lock is ([`Place`]): never through a
//! link, and only if it is a regular file of this user's with no other
//! name. Even so, its content is read as if hostile: a line at a time,
//! never more than [`MAX_LINE`] bytes of one kept in memory (a longer line
//! is dropped), and a line is acted on only when it names, below the root
//! and through no link, something with a temporary name and of the kind
//! noted: a directory (removed with all it holds, never following a link)
//! for a line ending in `/`, anything else (a file or a link, itself) for
//! the others. A line that does not read back as such (no tab, a bad
//! escape, an empty, `.` or `..` component) is dropped.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::engine::fs::{Root, TempNotes, is_temp_name};
use crate::engine::lock::Place;
use crate::engine::tree::{Kind, Tree};
use crate::syntax::Location;

/// The longest line a sweep reads; a longer one is dropped.
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// The journal beside one lock, for one root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Journal {
    place: Place,
    /// The root's canonical path, escaped as in a line.
    root: Vec<u8>,
}

/// `bytes` as a journal field: a backslash and every control byte (below
/// 0x20, and 0x7f) written `\xHH`; the rest as it is.
fn escape(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for &b in bytes {
        if b < 0x20 || b == 0x7f || b == b'\\' {
            out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}

/// A journal field read back; `None` for a bad escape.
fn unescape(field: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(field.len());
    let mut rest = field;
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'\\' {
            let hex = tail.strip_prefix(b"x")?.get(..2)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            rest = tail.get(3..)?;
        } else {
            out.push(b);
            rest = tail;
        }
    }
    Some(out)
}

/// The location a journal line names below the root, and whether it was
/// noted as a directory; `None` when the path does not read back as one.
fn noted(path: &[u8]) -> Option<(Location, bool)> {
    let (path, dir) = match path.strip_suffix(b"/") {
        Some(p) => (p, true),
        None => (path, false),
    };
    let path = unescape(path)?;
    let path = std::str::from_utf8(&path).ok()?;
    let parts: Vec<&str> = path.split('/').collect();
    let bad = |p: &&str| p.is_empty() || *p == "." || *p == ".." || p.contains('\0');
    if parts.iter().any(bad) {
        return None;
    }
    Some((Location::below_root(&parts), dir))
}

impl Journal {
    /// The journal beside `lock`, for the root whose canonical path is
    /// `canonical_root`.
    pub(crate) fn beside(lock: &Place, canonical_root: &Path) -> Journal {
        Journal {
            place: lock.with_suffix(".journal"),
            root: escape(canonical_root.as_os_str().as_bytes()),
        }
    }

    /// The journal's file, for messages.
    pub(crate) fn path(&self) -> std::path::PathBuf {
        self.place.path()
    }

    /// Removes the temporary files and directories this root's earlier
    /// runs noted and left behind, and forgets them. Returns how many were
    /// removed.
    pub(crate) fn sweep(&self, root: &Root) -> std::io::Result<usize> {
        let Some(file) = self.place.read()? else {
            return Ok(0);
        };
        let mut lines = Lines::new(file);
        let temp = self
            .place
            .with_suffix(&format!(".{}.tmp", std::process::id()));
        // Left by a sweep of an earlier process with this id.
        temp.remove()?;
        let mut kept: Option<BufWriter<std::fs::File>> = None;
        let mut removed = 0;
        let mut swept = || -> std::io::Result<()> {
            while let Some(line) = lines.next_line()? {
                let Some(tab) = memchr::memchr(b'\t', line) else {
                    continue;
                };
                let (key, path) = (&line[..tab], &line[tab + 1..]);
                if key != self.root.as_slice() {
                    let out = match &mut kept {
                        Some(out) => out,
                        None => kept.insert(BufWriter::new(temp.create_new()?)),
                    };
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                    continue;
                }
                let Some((at, dir)) = noted(path) else {
                    continue;
                };
                let is_temp = at.name().is_some_and(is_temp_name);
                let as_noted = match root.kind(&at) {
                    Ok(Some(Kind::Dir)) => dir,
                    Ok(Some(_)) => !dir,
                    _ => false,
                };
                if is_temp && as_noted && root.remove(&at).is_ok() {
                    removed += 1;
                }
            }
            match kept.take() {
                None => self.place.remove(),
                Some(mut out) => {
                    out.flush()?;
                    drop(out);
                    temp.rename_over(&self.place)
                }
            }
        };
        let done = swept();
        if done.is_err() {
            let _ = temp.remove();
        }
        done.map(|()| removed)
    }

    /// A writer for [`Root::keep_journal`]: each temporary name it is given
    /// is noted under this root, at once.
    pub(crate) fn writer(&self) -> std::io::Result<Box<dyn TempNotes>> {
        let file = self.place.write(true)?;
        let mut prefix = self.root.clone();
        prefix.push(b'\t');
        Ok(Box::new(Noting { file, prefix }))
    }
}

/// The lines of a journal, each at most [`MAX_LINE`] bytes (longer ones
/// are skipped whole), read through a buffer.
struct Lines {
    reader: BufReader<std::fs::File>,
    line: Vec<u8>,
}

impl Lines {
    fn new(file: std::fs::File) -> Lines {
        Lines {
            reader: BufReader::new(file),
            line: Vec::new(),
        }
    }

    /// The next line, without its line feed; `None` at the end.
    fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        loop {
            self.line.clear();
            let mut too_long = false;
            loop {
                let buf = self.reader.fill_buf()?;
                if buf.is_empty() {
                    if self.line.is_empty() && !too_long {
                        return Ok(None);
                    }
                    break;
                }
                let (take, end) = match memchr::memchr(b'\n', buf) {
                    Some(i) => (i, true),
                    None => (buf.len(), false),
                };
                if !too_long && self.line.len() + take <= MAX_LINE {
                    self.line.extend_from_slice(&buf[..take]);
                } else {
                    too_long = true;
                    self.line.clear();
                }
                self.reader.consume(take + usize::from(end));
                if end {
                    break;
                }
            }
            if !too_long {
                return Ok(Some(&self.line));
            }
        }
    }
}

/// Appends lines with the root's path before them.
struct Noting {
    file: std::fs::File,
    prefix: Vec<u8>,
}

impl TempNotes for Noting {
    fn note(&mut self, temp: &Location, dir: bool) -> std::io::Result<()> {
        // Escaped: a name may hold a line feed (a command made it).
        let name = escape(temp.display().as_bytes());
        let mut line = Vec::with_capacity(self.prefix.len() + name.len() + 2);
        line.extend_from_slice(&self.prefix);
        line.extend_from_slice(&name);
        if dir {
            line.push(b'/');
        }
        line.push(b'\n');
        // One write per line: an append lands whole.
        self.file.write_all(&line)?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn notes_temporary_files_and_removes_what_was_left() {
        let t = tempfile::tempdir().unwrap();
        let root_dir = t.path().join("root");
        std::fs::create_dir_all(root_dir.join("d")).unwrap();
        let lock = Place::named(&t.path().join("x.lock")).unwrap();
        let journal = Journal::beside(&lock, &std::fs::canonicalize(&root_dir).unwrap());
        let root = Root::open(&root_dir).unwrap();
        root.keep_journal(journal.writer().unwrap());
        // A write made ready and never finished, as in a killed run.
        let prepared = root
            .prepare_write(&Location::below_root(&["d", "f.txt"]))
            .unwrap();
        std::mem::forget(prepared);
        let left: Vec<String> = std::fs::read_dir(root_dir.join("d"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left.len(), 1);
        assert!(is_temp_name(&left[0]), "{left:?}");
        // Another root's line and a line naming an ordinary file stay.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(journal.place.path())
            .unwrap();
        let key = std::fs::canonicalize(&root_dir).unwrap();
        writeln!(f, "/elsewhere\td/.x.clada-1-1.tmp").unwrap();
        writeln!(f, "{}\td/keep.txt", key.display()).unwrap();
        std::fs::write(root_dir.join("d/keep.txt"), "keep").unwrap();
        let fresh = Root::open(&root_dir).unwrap();
        assert_eq!(journal.sweep(&fresh).unwrap(), 1);
        let names: Vec<String> = std::fs::read_dir(root_dir.join("d"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["keep.txt"]);
        assert_eq!(
            std::fs::read_to_string(journal.place.path()).unwrap(),
            "/elsewhere\td/.x.clada-1-1.tmp\n"
        );
    }

    #[test]
    fn removes_a_directory_a_killed_run_set_aside_without_following_its_links() {
        let t = tempfile::tempdir().unwrap();
        let root_dir = t.path().join("root");
        let outside = t.path().join("outside");
        std::fs::create_dir_all(root_dir.join("d/sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), "outside").unwrap();
        std::fs::write(root_dir.join("d/sub/x.txt"), "old").unwrap();
        std::os::unix::fs::symlink(&outside, root_dir.join("d/sub/out")).unwrap();
        let lock = Place::named(&t.path().join("x.lock")).unwrap();
        let journal = Journal::beside(&lock, &std::fs::canonicalize(&root_dir).unwrap());
        let root = Root::open(&root_dir).unwrap();
        root.keep_journal(journal.writer().unwrap());
        // A unit removed `d` (set aside until the unit ends), and the run
        // was killed before it ended.
        let aside = root.set_aside(&Location::below_root(&["d"])).unwrap();
        let name = aside.name().unwrap().to_owned();
        assert!(is_temp_name(&name));
        let text = std::fs::read_to_string(journal.place.path()).unwrap();
        assert!(text.ends_with(&format!("\t{name}/\n")), "{text:?}");
        // What does not match its line stays: a directory noted as a file,
        // a link noted as a directory, a directory without a temporary
        // name.
        std::fs::create_dir(root_dir.join(".f.clada-1-2.tmp")).unwrap();
        std::os::unix::fs::symlink(&outside, root_dir.join(".l.clada-1-3.tmp")).unwrap();
        std::fs::create_dir(root_dir.join("plain")).unwrap();
        let key = std::fs::canonicalize(&root_dir).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(journal.place.path())
            .unwrap();
        writeln!(f, "{}\t.f.clada-1-2.tmp", key.display()).unwrap();
        writeln!(f, "{}\t.l.clada-1-3.tmp/", key.display()).unwrap();
        writeln!(f, "{}\tplain/", key.display()).unwrap();
        let fresh = Root::open(&root_dir).unwrap();
        assert_eq!(journal.sweep(&fresh).unwrap(), 1);
        let mut names: Vec<String> = std::fs::read_dir(&root_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [".f.clada-1-2.tmp", ".l.clada-1-3.tmp", "plain"]);
        assert_eq!(
            std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
            "outside"
        );
        assert!(!journal.place.path().exists());
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A name a command made may hold a line feed, a tab, a backslash: its
    /// temporary name holds no control character, its journal line stays
    /// one line, and the next run removes what a killed run left.
    #[test]
    fn a_name_holding_control_characters_is_one_journal_line_and_swept() {
        let t = tempfile::tempdir().unwrap();
        let root_dir = t.path().join("root");
        std::fs::create_dir_all(root_dir.join("d\nx")).unwrap();
        let lock = Place::named(&t.path().join("x.lock")).unwrap();
        let journal = Journal::beside(&lock, &std::fs::canonicalize(&root_dir).unwrap());
        let root = Root::open(&root_dir).unwrap();
        root.keep_journal(journal.writer().unwrap());
        let name = "a\nelsewhere\t.b\\x0a.clada-1-1.tmp\u{7f}";
        let prepared = root
            .prepare_write(&Location::below_root(&["d\nx", name]))
            .unwrap();
        std::mem::forget(prepared);
        let left = names_in(&root_dir.join("d\nx"));
        assert_eq!(left.len(), 1);
        assert!(is_temp_name(&left[0]), "{left:?}");
        assert!(!left[0].chars().any(char::is_control), "{left:?}");
        let text = std::fs::read(journal.place.path()).unwrap();
        assert_eq!(text.iter().filter(|&&b| b == b'\n').count(), 1, "{text:?}");
        assert_eq!(text.iter().filter(|&&b| b == b'\t').count(), 1, "{text:?}");
        let fresh = Root::open(&root_dir).unwrap();
        assert_eq!(journal.sweep(&fresh).unwrap(), 1);
        assert!(names_in(&root_dir.join("d\nx")).is_empty());
        assert!(!journal.place.path().exists());
    }

    /// Whatever the journal holds, a sweep removes only temporary names
    /// below the root, reads it a line at a time (a line past the limit is
    /// dropped, the next is read), and keeps other roots' lines as they
    /// were.
    #[test]
    fn a_sweep_reads_hostile_lines_without_harm() {
        let t = tempfile::tempdir().unwrap();
        let root_dir = t.path().join("root");
        let outside = t.path().join("outside");
        std::fs::create_dir_all(root_dir.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join(".o.clada-1-1.tmp"), "outside").unwrap();
        std::fs::write(root_dir.join("d/.t.clada-1-2.tmp"), "left").unwrap();
        std::fs::write(root_dir.join("d/.u.clada-1-3.tmp"), "left").unwrap();
        std::fs::write(root_dir.join("plain.txt"), "keep").unwrap();
        std::os::unix::fs::symlink(&outside, root_dir.join("out")).unwrap();
        let lock = Place::named(&t.path().join("x.lock")).unwrap();
        let journal = Journal::beside(&lock, &std::fs::canonicalize(&root_dir).unwrap());
        let key = escape(
            std::fs::canonicalize(&root_dir)
                .unwrap()
                .as_os_str()
                .as_bytes(),
        );
        let mut text = Vec::new();
        let mut line = |path: &[u8]| {
            text.extend_from_slice(&key);
            text.push(b'\t');
            text.extend_from_slice(path);
            text.push(b'\n');
        };
        line(b"../outside/.o.clada-1-1.tmp");
        line(b"out/.o.clada-1-1.tmp");
        line(b"d/./.t.clada-1-2.tmp");
        line(b"d//.t.clada-1-2.tmp");
        line(b"d/\\x2");
        line(b"d/\\q0a");
        line(b"plain.txt");
        line(&[b'x'; MAX_LINE + 10]);
        line(b"d/.t.clada-1-2.tmp");
        line(b"d\\x2f.u.clada-1-3.tmp");
        text.extend_from_slice(b"no tab at all\n/elsewhere\td/.x.clada-1-1.tmp\n");
        text.extend_from_slice(&[0xff, 0xfe, b'\t', b'\n']);
        text.extend_from_slice(&key);
        text.extend_from_slice(b"\td/.u.clada-1-3.tmp");
        std::fs::write(journal.place.path(), &text).unwrap();
        let root = Root::open(&root_dir).unwrap();
        // The last line, with no line feed, counts; `\x2f` is a `/` inside
        // a name, and names no file.
        assert_eq!(journal.sweep(&root).unwrap(), 2);
        assert_eq!(names_in(&root_dir.join("d")), Vec::<String>::new());
        assert_eq!(names_in(&root_dir), ["d", "out", "plain.txt"]);
        assert_eq!(names_in(&outside), [".o.clada-1-1.tmp"]);
        assert_eq!(
            std::fs::read(journal.place.path()).unwrap(),
            b"/elsewhere\td/.x.clada-1-1.tmp\n\xff\xfe\t\n"
        );
    }
}
