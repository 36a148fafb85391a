//! What is at one place of the tree, summed up in one number, to tell
//! whether a command changed it (PROTOCOL §7.4).
//!
//! With `--atomic`, what a task moved is taken before and after each
//! command of its transaction; a rollback leaves it where the command
//! left it if the command changed it. A file or link counts by its own
//! metadata (inode, size, mode, modification and change times); a
//! directory by the names, kinds and metadata of everything below it (its
//! own times are left out: a name made and removed again is no change).
//! The walk never follows a link and reads no file's contents.

use std::collections::hash_map::DefaultHasher;
use std::ffi::CString;
use std::hash::{Hash, Hasher};
use std::os::fd::OwnedFd;
use std::rc::Rc;

use rustix::fs::{AtFlags, FileType, Mode};
use rustix::io::Errno;

use super::fs::{DIR_FLAGS, Root};
use crate::syntax::Location;

/// What is at a place: `Gone` when nothing is, `Unknown` when it could not
/// be read whole (which never equals anything, so it counts as changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fingerprint {
    Gone,
    Sum(u64),
    Unknown,
}

impl Fingerprint {
    /// Whether what is at the place now differs from `self`.
    pub(crate) fn differs(self, now: Fingerprint) -> bool {
        self == Fingerprint::Unknown || now == Fingerprint::Unknown || self != now
    }
}

/// The most entries one fingerprint reads; a larger tree is `Unknown`.
const MAX_ENTRIES: usize = 1_000_000;

impl Root {
    /// The fingerprint of what is at `at` (see the module's documentation).
    pub(crate) fn fingerprint(&self, at: &Location) -> Fingerprint {
        if let Some(m) = self.memory() {
            return m
                .fingerprint(at)
                .map_or(Fingerprint::Gone, Fingerprint::Sum);
        }
        let (parent, name) = match self.parent(at, false) {
            Ok(p) => p,
            Err(super::tree::FsError::NotFound { .. }) => return Fingerprint::Gone,
            Err(_) => return Fingerprint::Unknown,
        };
        match sum(&parent, name) {
            Ok(Some(s)) => Fingerprint::Sum(s),
            Ok(None) => Fingerprint::Gone,
            Err(_) => Fingerprint::Unknown,
        }
    }
}

fn stat_into(h: &mut DefaultHasher, st: &rustix::fs::Stat, whole: bool) {
    let kind = FileType::from_raw_mode(st.st_mode);
    (kind == FileType::Directory).hash(h);
    st.st_ino.hash(h);
    st.st_mode.hash(h);
    if whole {
        st.st_size.hash(h);
        (st.st_mtime, st.st_mtime_nsec).hash(h);
        (st.st_ctime, st.st_ctime_nsec).hash(h);
    }
}

/// The sum of `name` in `parent`; `None` when nothing is there.
fn sum(parent: &OwnedFd, name: &str) -> Result<Option<u64>, Errno> {
    let st = match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut h = DefaultHasher::new();
    let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
    stat_into(&mut h, &st, !is_dir);
    if !is_dir {
        return Ok(Some(h.finish()));
    }
    // Directories to read, each with the handle of its parent: only the
    // directories with something left to read are held open.
    let top = CString::new(name).map_err(|_| Errno::INVAL)?;
    let mut pending: Vec<(Rc<OwnedFd>, CString)> = Vec::new();
    let first = rustix::fs::openat(parent, top.as_c_str(), DIR_FLAGS, Mode::empty())?;
    let mut entries = 0usize;
    let mut read = |dir: OwnedFd,
                    h: &mut DefaultHasher,
                    pending: &mut Vec<(Rc<OwnedFd>, CString)>|
     -> Result<(), Errno> {
        let mut names: Vec<CString> = Vec::new();
        for entry in rustix::fs::Dir::read_from(&dir)? {
            let entry = entry?;
            let n = entry.file_name();
            if n != c"." && n != c".." {
                names.push(n.to_owned());
            }
        }
        names.sort();
        entries += names.len();
        if entries > MAX_ENTRIES {
            return Err(Errno::NOMEM);
        }
        let dir = Rc::new(dir);
        // Read in reverse, so that popping visits them in order.
        for n in names.into_iter().rev() {
            let st = rustix::fs::statat(&*dir, n.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?;
            n.as_bytes().hash(h);
            let sub = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
            stat_into(h, &st, !sub);
            if sub {
                pending.push((Rc::clone(&dir), n));
            }
        }
        Ok(())
    };
    read(first, &mut h, &mut pending)?;
    while let Some((dir, n)) = pending.pop() {
        let fd = rustix::fs::openat(&*dir, n.as_c_str(), DIR_FLAGS, Mode::empty())?;
        drop(dir);
        // Where one directory's entries end and the next one's begin.
        0xffu8.hash(&mut h);
        read(fd, &mut h, &mut pending)?;
    }
    Ok(Some(h.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(p: &str) -> Location {
        Location::below_root(&p.split('/').collect::<Vec<_>>())
    }

    #[test]
    fn a_change_anywhere_below_a_directory_changes_its_fingerprint() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("d/e/f")).unwrap();
        std::fs::write(t.path().join("d/e/f/x.txt"), "x").unwrap();
        std::fs::write(t.path().join("d/y.txt"), "y").unwrap();
        let root = Root::open(t.path()).unwrap();
        let before = root.fingerprint(&at("d"));
        assert!(matches!(before, Fingerprint::Sum(_)));
        // Looking again, or a name made and removed: no change.
        std::fs::write(t.path().join("d/e/tmp"), "").unwrap();
        std::fs::remove_file(t.path().join("d/e/tmp")).unwrap();
        assert!(!before.differs(root.fingerprint(&at("d"))));
        std::fs::write(t.path().join("d/e/f/x.txt"), "changed").unwrap();
        let after = root.fingerprint(&at("d"));
        assert!(before.differs(after));
        std::fs::create_dir(t.path().join("d/e/new")).unwrap();
        assert!(after.differs(root.fingerprint(&at("d"))));
        assert_eq!(root.fingerprint(&at("none")), Fingerprint::Gone);
        // A link is its own entry, never followed.
        std::os::unix::fs::symlink(t.path().join("d"), t.path().join("l")).unwrap();
        let link = root.fingerprint(&at("l"));
        std::fs::write(t.path().join("d/y.txt"), "changed too").unwrap();
        assert!(!link.differs(root.fingerprint(&at("l"))));
    }
}
