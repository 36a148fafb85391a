//! The journal of temporary names (PROTOCOL §7).
//!
//! Every write goes to a temporary file beside its target
//! (`.NAME.clada-PID-N.tmp`), renamed over the target once complete; with
//! `--atomic`, what a unit removes or replaces is set aside under such a
//! name (a file, a link or a whole directory) until the unit ends. A run
//! killed in between leaves the temporary name behind. So before using
//! one, a run notes it in a journal beside its lock (`LOCK.journal`), one
//! line per name: the root's canonical path, a tab, the path below the
//! root, and a `/` after it for a directory. The next run on the root,
//! holding the same lock, removes what is listed and still there, without
//! scanning the tree, and forgets the lines; a run that ends normally
//! forgets its own. Lines of other roots sharing the lock file are kept.
//!
//! Only clada writes the journal: it lives beside the lock, by default in
//! clada's runtime directory, where no document or sandboxed command
//! writes, and it is opened as the lock is ([`Place`]): never through a
//! link, and only if it is a regular file of this user's with no other
//! name. Even so, a line is acted on only when it names, below the root
//! and through no link, something with a temporary name and of the kind
//! noted: a directory (removed with all it holds, never following a link)
//! for a line ending in `/`, anything else (a file or a link, itself) for
//! the others.

use std::io::{Read, Write};
use std::path::Path;

use crate::engine::fs::{Files, Kind, Root, is_temp_name, locate};
use crate::engine::lock::Place;

/// The journal beside one lock, for one root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Journal {
    place: Place,
    /// The root's canonical path.
    root: String,
}

impl Journal {
    /// The journal beside `lock`, for the root at `root_path`.
    pub(crate) fn beside(lock: &Place, root_path: &Path) -> Journal {
        let root = std::fs::canonicalize(root_path).unwrap_or_else(|_| root_path.to_path_buf());
        Journal {
            place: lock.with_suffix(".journal"),
            root: root.to_string_lossy().into_owned(),
        }
    }

    /// Removes the temporary files and directories this root's earlier
    /// runs noted and left behind, and forgets them. Returns how many were
    /// removed.
    pub(crate) fn sweep(&self, root: &Root) -> std::io::Result<usize> {
        let Some(mut file) = self.place.read()? else {
            return Ok(0);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut removed = 0;
        let mut kept = String::new();
        for line in text.lines() {
            match line.split_once('\t') {
                Some((key, rel)) if key == self.root => {
                    let (rel, dir) = match rel.strip_suffix('/') {
                        Some(rel) => (rel, true),
                        None => (rel, false),
                    };
                    let Ok(at) = locate(rel, false) else { continue };
                    let temp = at.name().is_some_and(is_temp_name);
                    let noted = match root.kind(&at) {
                        Ok(Some(Kind::Dir)) => dir,
                        Ok(Some(_)) => !dir,
                        _ => false,
                    };
                    if temp && noted && root.remove(&at).is_ok() {
                        removed += 1;
                    }
                }
                Some(_) => {
                    kept.push_str(line);
                    kept.push('\n');
                }
                None => {}
            }
        }
        if kept.is_empty() {
            self.place.remove()?;
        } else {
            let temp = self
                .place
                .with_suffix(&format!(".{}.tmp", std::process::id()));
            // Left by a sweep of an earlier process with this id.
            temp.remove()?;
            let written = temp
                .create_new()
                .and_then(|mut f| f.write_all(kept.as_bytes()))
                .and_then(|()| temp.rename_over(&self.place));
            if let Err(e) = written {
                let _ = temp.remove();
                return Err(e);
            }
        }
        Ok(removed)
    }

    /// A writer for [`Root::keep_journal`]: each line it is given is noted
    /// under this root, at once.
    pub(crate) fn writer(&self) -> std::io::Result<Box<dyn Write>> {
        let file = self.place.write(true)?;
        Ok(Box::new(Noting {
            file,
            prefix: format!("{}\t", self.root),
        }))
    }
}

/// Appends lines with the root's path before them.
struct Noting {
    file: std::fs::File,
    prefix: String,
}

impl Write for Noting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut line = Vec::with_capacity(self.prefix.len() + buf.len());
        line.extend_from_slice(self.prefix.as_bytes());
        line.extend_from_slice(buf);
        // One write per line: an append lands whole.
        self.file.write_all(&line)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::engine::fs::Location;

    #[test]
    fn notes_temporary_files_and_removes_what_was_left() {
        let t = tempfile::tempdir().unwrap();
        let root_dir = t.path().join("root");
        std::fs::create_dir_all(root_dir.join("d")).unwrap();
        let lock = Place::named(&t.path().join("x.lock")).unwrap();
        let journal = Journal::beside(&lock, &root_dir);
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
        let journal = Journal::beside(&lock, &root_dir);
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
}
