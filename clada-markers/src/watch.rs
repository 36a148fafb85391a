//! What `clada watch` remembers (PROTOCOL §11.6): the units of a watched
//! file applied to a root, by the hash of their text, in clada's state
//! directory, never in the tree.
//!
//! The memory is shared by every watch of the same file and root: a watch
//! takes the lock, reads the list afresh, applies a unit only if it is not
//! there, adds it, and lets the lock go. Two watches of one file therefore
//! apply each unit once. The list and its lock are opened without following
//! a link, and must be regular files of the user's own.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::{FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use crate::engine::Dirs;

/// A unit's identity: the hash of its text (git's blob id).
pub fn key(text: &str) -> String {
    crate::engine::dirs::file_key(text.as_bytes())
}

/// The memory of the watches of one file applied to one root.
#[derive(Clone, Debug)]
pub struct WatchState {
    /// `watch/` in clada's state directory.
    dir: PathBuf,
    /// The name both files start with, made from the root and the file.
    name: String,
}

impl WatchState {
    /// The memory of `file` applied to `root` (both as given: they are
    /// made canonical here), in the state directory of `dirs`.
    pub fn new(dirs: &Dirs, root: &Path, file: &Path) -> WatchState {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let id = format!("{}\0{}", canon(root).display(), canon(file).display());
        WatchState {
            dir: dirs.state.join("watch"),
            name: key(&id),
        }
    }

    /// The file listing the units applied, one key a line.
    pub fn list_path(&self) -> PathBuf {
        self.dir.join(format!("{}.applied", self.name))
    }

    /// Takes the lock the watches of this file share, waiting for it;
    /// `None` if `stop` says to give up first.
    pub fn lock(&self, stop: &dyn Fn() -> bool) -> std::io::Result<Option<Held>> {
        std::fs::create_dir_all(&self.dir)?;
        let lock = self.open(&format!("{}.lock", self.name), OFlags::RDWR)?;
        loop {
            match rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {
                    return Ok(Some(Held {
                        state: self.clone(),
                        _lock: lock,
                    }));
                }
                Err(Errno::WOULDBLOCK | Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            if stop() {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Opens `name` in the state's directory, creating it (0600), never
    /// through a link, and only a regular file of the user's own.
    fn open(&self, name: &str, how: OFlags) -> std::io::Result<OwnedFd> {
        let dir = rustix::fs::open(
            &self.dir,
            OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            how | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::from_raw_mode(0o600),
        )?;
        let st = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
            || st.st_uid != rustix::process::getuid().as_raw()
        {
            return Err(std::io::Error::other(format!(
                "{} is not a regular file of this user's; remove it",
                self.dir.join(name).display()
            )));
        }
        Ok(fd)
    }
}

/// The lock of a [`WatchState`], held: the list may be read and added to.
#[derive(Debug)]
pub struct Held {
    state: WatchState,
    _lock: OwnedFd,
}

impl Held {
    /// The keys of the units applied by any watch of the file that the
    /// list holds from byte `from` on, and where it ends: a watch reads
    /// only what was added since it last looked (the list only grows), so
    /// that a file of many units costs a pass over the list, not one per
    /// unit.
    pub fn applied_since(&self, from: u64) -> std::io::Result<(Vec<String>, u64)> {
        use std::io::Seek as _;
        let name = format!("{}.applied", self.state.name);
        let mut file = std::fs::File::from(self.state.open(&name, OFlags::RDONLY)?);
        // A list made shorter (by hand) is read again whole.
        let from = if file.metadata()?.len() < from {
            0
        } else {
            from
        };
        file.seek(std::io::SeekFrom::Start(from))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        // Only whole lines: a line being written is read next time. A line
        // that is not UTF-8 (written by hand) is no key, and the list is
        // read all the same.
        let whole = memchr::memrchr(b'\n', &bytes).map_or(0, |i| i + 1);
        let keys = String::from_utf8_lossy(&bytes[..whole])
            .lines()
            .map(str::to_owned)
            .collect();
        Ok((keys, from + whole as u64))
    }

    /// The keys of the units applied so far, by any watch of the file.
    pub fn applied(&self) -> std::io::Result<HashSet<String>> {
        Ok(self.applied_since(0)?.0.into_iter().collect())
    }

    /// Adds a unit to the list, on disk before the lock is let go: its
    /// line in one write, so that a watch stopped meanwhile leaves no half
    /// of it, and after a line feed if the list ends in a line left half
    /// written (else the key would join that line, and be lost).
    pub fn remember(&self, key: &str) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt as _;
        let name = format!("{}.applied", self.state.name);
        let mut file = std::fs::File::from(self.state.open(&name, OFlags::RDWR | OFlags::APPEND)?);
        let len = file.metadata()?.len();
        let mut last = [b'\n'];
        if len > 0 {
            file.read_exact_at(&mut last, len - 1)?;
        }
        let start = if last[0] == b'\n' { "" } else { "\n" };
        file.write_all(format!("{start}{key}\n").as_bytes())?;
        file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(dir: &Path) -> WatchState {
        let dirs = Dirs {
            config: dir.join("config"),
            state: dir.join("state"),
            runtime: dir.join("run"),
        };
        WatchState::new(&dirs, dir, &dir.join("replies.md"))
    }

    #[test]
    fn the_list_is_shared_and_read_under_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (state(dir.path()), state(dir.path()));
        let held = a.lock(&|| false).unwrap().unwrap();
        held.remember("k1").unwrap();
        // The other watch cannot take the lock meanwhile.
        assert!(b.lock(&|| true).unwrap().is_none());
        drop(held);
        let held = b.lock(&|| false).unwrap().unwrap();
        assert_eq!(held.applied().unwrap(), HashSet::from(["k1".to_owned()]));
        // Read from where a watch last looked: only what came since.
        let (keys, at) = held.applied_since(0).unwrap();
        held.remember("k2").unwrap();
        assert_eq!((keys, at), (vec!["k1".to_owned()], 3));
        assert_eq!(held.applied_since(at).unwrap(), (vec!["k2".to_owned()], 6));
        assert_eq!(held.applied_since(60).unwrap().0.len(), 2);
    }

    fn append(list: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(list).unwrap();
        f.write_all(bytes).unwrap();
    }

    /// Found by the fuzz target `watch_state`: a key remembered after a
    /// line left half written joined that line, and a watch that read the
    /// list then applied its unit a second time.
    #[test]
    fn a_line_left_half_written_does_not_swallow_the_next_key() {
        let dir = tempfile::tempdir().unwrap();
        let s = state(dir.path());
        let held = s.lock(&|| false).unwrap().unwrap();
        held.remember("k1").unwrap();
        append(&s.list_path(), b"half");
        held.remember("k2").unwrap();
        let keys = held.applied().unwrap();
        assert!(keys.contains("k1") && keys.contains("k2"), "{keys:?}");
        assert_eq!(std::fs::read(s.list_path()).unwrap(), b"k1\nhalf\nk2\n");
    }

    /// Found by the fuzz target `watch_state`: a line that was not UTF-8
    /// made every later read of the list fail, and so every watch of the
    /// file.
    #[test]
    fn a_line_that_is_not_utf8_is_no_key_and_the_list_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let s = state(dir.path());
        let held = s.lock(&|| false).unwrap().unwrap();
        held.remember("k1").unwrap();
        append(&s.list_path(), b"\xff\xfe\n");
        held.remember("k2").unwrap();
        let (keys, at) = held.applied_since(0).unwrap();
        assert!(keys.contains(&"k1".to_owned()) && keys.contains(&"k2".to_owned()));
        assert_eq!(at, std::fs::metadata(s.list_path()).unwrap().len());
        assert_eq!(held.applied_since(3).unwrap().0.len(), 2);
    }

    #[test]
    fn a_link_in_place_of_the_list_or_the_lock_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = state(dir.path());
        std::fs::create_dir_all(dir.path().join("state/watch")).unwrap();
        let outside = dir.path().join("outside");
        std::fs::write(&outside, "").unwrap();
        std::os::unix::fs::symlink(&outside, s.list_path()).unwrap();
        let held = s.lock(&|| false).unwrap().unwrap();
        assert!(held.remember("k").is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "");
        drop(held);
        let lock = dir.path().join(format!("state/watch/{}.lock", s.name));
        std::fs::remove_file(&lock).unwrap();
        std::os::unix::fs::symlink(&outside, &lock).unwrap();
        assert!(s.lock(&|| false).is_err());
    }
}
