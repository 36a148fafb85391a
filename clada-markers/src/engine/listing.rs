//! Looking at the tree without changing it, for the built-in commands:
//! listing directories, the metadata of a file or link itself, links'
//! targets as text, streaming reads; and the few changes the built-ins
//! make beside writes (a directory, a file's times).
//!
//! Everything goes through [`Root`]'s handles, one component at a time,
//! never following a link: a link is listed and described as a link, and
//! opening one for reading is `symlink_not_allowed`.

use std::fs::File;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};
use rustix::io::Errno;

use super::fs::{DIR_FLAGS, Root};
use super::tree::{Entry, FsError, Kind, Meta};
use crate::syntax::Location;

impl Root {
    /// The metadata of what is at `at`, without following a link; the root
    /// itself when `at` has no components.
    pub(crate) fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        if let Some(m) = self.memory() {
            // No times, owners or permissions in memory: the usual bits.
            let meta = |kind, size: usize| Meta {
                kind,
                size: u64::try_from(size).unwrap_or(u64::MAX),
                mode: if kind == Kind::Dir {
                    0o040_755
                } else {
                    0o100_644
                },
                nlink: 1,
                uid: 0,
                gid: 0,
                ino: 0,
                dev: 0,
                modified: (0, 0),
                accessed: (0, 0),
                changed: (0, 0),
            };
            return match m.node(at)? {
                Some(super::memory::Node::File { bytes, .. }) => Ok(meta(Kind::File, bytes.len())),
                Some(super::memory::Node::Dir) => Ok(meta(Kind::Dir, 0)),
                None => Err(FsError::NotFound { path: at.display() }),
            };
        }
        let os = |op, errno| FsError::Os {
            path: at.display(),
            op,
            errno,
        };
        if at.parts().is_empty() {
            let dir = self.dir(at, 0, false)?;
            return rustix::fs::fstat(&*dir)
                .map(|st| Meta::of(&st))
                .map_err(|e| os("inspect", e));
        }
        let (parent, name) = self.parent(at, false)?;
        match rustix::fs::statat(&*parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Meta::of(&st)),
            Err(Errno::NOENT) => Err(FsError::NotFound { path: at.display() }),
            Err(e) => Err(os("inspect", e)),
        }
    }

    /// The names in directory `at`, in byte order of their names, without
    /// `.` and `..`. A link at `at` is `symlink_not_allowed`.
    pub(crate) fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        if let Some(m) = self.memory() {
            return m.list(at);
        }
        let dir = self.dir(at, at.parts().len(), false)?;
        let os = |errno| FsError::Os {
            path: at.display(),
            op: "list",
            errno,
        };
        // A fresh handle: reading a directory moves its offset.
        let fd = rustix::fs::openat(&*dir, c".", DIR_FLAGS, Mode::empty()).map_err(os)?;
        let mut entries = Vec::new();
        for entry in rustix::fs::Dir::read_from(&fd).map_err(os)? {
            let entry = entry.map_err(os)?;
            let name = entry.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let mut t = entry.file_type();
            if t == FileType::Unknown {
                t = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|st| FileType::from_raw_mode(st.st_mode))
                    .map_err(os)?;
            }
            entries.push((name.to_bytes().to_vec(), Kind::of(t)));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries
            .into_iter()
            .map(|(name, kind)| Entry {
                name: String::from_utf8_lossy(&name).into_owned(),
                kind,
            })
            .collect())
    }

    /// Opens the regular file at `at` for reading, never through a link.
    pub(crate) fn open_file(&self, at: &Location) -> Result<File, FsError> {
        let path = || at.display();
        if self.memory().is_some() {
            // Read a tree in memory through `Tree::open`.
            return Err(FsError::Os {
                path: path(),
                op: "open",
                errno: Errno::NOTSUP,
            });
        }
        let (parent, name) = self.parent(at, false)?;
        // NONBLOCK: a pipe must not hang the run; it is refused below.
        let fd = rustix::fs::openat(
            &*parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|errno| match errno {
            Errno::NOENT => FsError::NotFound { path: path() },
            Errno::LOOP => FsError::Symlink { path: path() },
            _ => FsError::Os {
                path: path(),
                op: "open",
                errno,
            },
        })?;
        let st = rustix::fs::fstat(&fd).map_err(|errno| FsError::Os {
            path: path(),
            op: "inspect",
            errno,
        })?;
        match Kind::of(FileType::from_raw_mode(st.st_mode)) {
            Kind::File => Ok(File::from(fd)),
            Kind::Dir => Err(FsError::IsDirectory { path: path() }),
            _ => Err(FsError::NotRegular { path: path() }),
        }
    }

    /// The target of the link at `at`, as text; the link is not followed.
    pub(crate) fn read_link(&self, at: &Location) -> Result<String, FsError> {
        if let Some(m) = self.memory() {
            // No links in memory.
            return match m.node(at)? {
                None => Err(FsError::NotFound { path: at.display() }),
                Some(_) => Err(FsError::Os {
                    path: at.display(),
                    op: "read the link",
                    errno: Errno::INVAL,
                }),
            };
        }
        let (parent, name) = self.parent(at, false)?;
        match rustix::fs::readlinkat(&*parent, name, Vec::new()) {
            Ok(target) => Ok(target.to_string_lossy().into_owned()),
            Err(Errno::NOENT) => Err(FsError::NotFound { path: at.display() }),
            Err(errno) => Err(FsError::Os {
                path: at.display(),
                op: "read the link",
                errno,
            }),
        }
    }

    /// Makes directory `at`; its parent must exist. `Ok(false)` when a
    /// directory is there already.
    pub(crate) fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        if let Some(m) = self.memory() {
            return m.create_dir(at);
        }
        let (parent, name) = self.parent(at, false)?;
        // A new directory changes what no kept handle names: the cache
        // stays (`mkdir -p` of many levels opens each once).
        match rustix::fs::mkdirat(&*parent, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(true),
            Err(Errno::EXIST) => match super::fs::kind_at(&parent, name) {
                Ok(Some(Kind::Dir)) => Ok(false),
                Ok(Some(Kind::Symlink)) => Err(FsError::Symlink { path: at.display() }),
                _ => Err(FsError::NotDirectory { path: at.display() }),
            },
            Err(errno) => Err(FsError::Os {
                path: at.display(),
                op: "create directory",
                errno,
            }),
        }
    }

    /// Sets the access and modification times of what is at `at` (a link
    /// itself, never its target); `None` means now.
    pub(crate) fn set_times(
        &self,
        at: &Location,
        accessed: Option<(i64, i64)>,
        modified: Option<(i64, i64)>,
    ) -> Result<(), FsError> {
        if let Some(m) = self.memory() {
            // No times in memory: only that something is there.
            return match m.node(at)? {
                Some(_) => Ok(()),
                None => Err(FsError::NotFound { path: at.display() }),
            };
        }
        let spec = |t: Option<(i64, i64)>| match t {
            Some((tv_sec, tv_nsec)) => Timespec { tv_sec, tv_nsec },
            None => Timespec {
                tv_sec: 0,
                tv_nsec: rustix::fs::UTIME_NOW,
            },
        };
        let times = Timestamps {
            last_access: spec(accessed),
            last_modification: spec(modified),
        };
        let (parent, name) = self.parent(at, false)?;
        rustix::fs::utimensat(&*parent, name, &times, AtFlags::SYMLINK_NOFOLLOW).map_err(|errno| {
            match errno {
                Errno::NOENT => FsError::NotFound { path: at.display() },
                _ => FsError::Os {
                    path: at.display(),
                    op: "set the times of",
                    errno,
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::engine::fs::locate;

    fn at(p: &str) -> Location {
        locate(p, false).unwrap()
    }

    #[test]
    fn lists_in_byte_order_and_shows_links_as_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d/b.txt"), "b").unwrap();
        std::fs::write(dir.path().join("d/B.txt"), "B").unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("d/out")).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let names: Vec<_> = root
            .list(&at("d"))
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.kind))
            .collect();
        assert_eq!(
            names,
            [
                ("B.txt".to_owned(), Kind::File),
                ("b.txt".to_owned(), Kind::File),
                ("out".to_owned(), Kind::Symlink)
            ]
        );
        assert_eq!(root.read_link(&at("d/out")).unwrap(), "/etc");
        assert_eq!(root.metadata(&at("d/out")).unwrap().kind, Kind::Symlink);
        assert!(matches!(
            root.list(&at("d/out")),
            Err(FsError::Symlink { .. })
        ));
        assert!(matches!(
            root.open_file(&at("d/out")),
            Err(FsError::Symlink { .. })
        ));
        assert!(matches!(
            root.list(&at("d/out/x")),
            Err(FsError::Symlink { .. })
        ));
    }

    #[test]
    fn makes_directories_and_sets_times() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        assert!(root.create_dir(&at("n")).unwrap());
        assert!(!root.create_dir(&at("n")).unwrap());
        assert!(matches!(
            root.create_dir(&at("x/y")),
            Err(FsError::NotFound { .. })
        ));
        std::fs::write(dir.path().join("n/f"), "").unwrap();
        root.set_times(&at("n/f"), Some((1, 0)), Some((1_000_000, 5)))
            .unwrap();
        let meta = root.metadata(&at("n/f")).unwrap();
        assert_eq!(meta.modified, (1_000_000, 5));
        assert_eq!(meta.kind, Kind::File);
        assert_eq!(
            root.metadata(&Location::below_root(&[])).unwrap().kind,
            Kind::Dir
        );
    }
}
