//! The run's lock and the files clada keeps beside it (PROTOCOL §7 step 2).
//!
//! By default a root's lock is `KEY.lock` in `locks/` of clada's runtime
//! directory, `KEY` naming the root's repository (its work tree's top) or,
//! outside one, the root: never a file in the tree or in `.git`, where a
//! command may write, and never in the temporary directory a sandboxed
//! command gets (it has one of its own). `--lock-file PATH` names another.
//!
//! Every file here is opened relative to a directory handle checked once
//! ([`Place`]), never following a link in its last component
//! (`O_NOFOLLOW`), and checked after opening: a regular file, and in
//! clada's own directory or beside the lock, this user's. The default
//! directory is this user's, 0700, opened without following a link.
//! A link planted where the lock or its journal goes is refused, never
//! followed.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::engine::dirs::{Dirs, file_key};

/// A file in a directory that was opened and checked once: where the lock
/// or its journal lives.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    dir: Rc<OwnedFd>,
    /// The directory as a path, for messages.
    dir_path: PathBuf,
    name: String,
    /// In clada's own directory: files there must be this user's.
    private: bool,
}

impl PartialEq for Place {
    fn eq(&self, other: &Place) -> bool {
        self.dir_path == other.dir_path && self.name == other.name
    }
}

impl Eq for Place {}

/// Opens for reading, not following a link in the last component.
const READ: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC);

impl Place {
    /// The default lock of the repository or root at `key` (a canonical
    /// path): `KEY.lock` in `locks/` of `dirs`' runtime directory, which is
    /// made (0700) if missing and must be this user's and nobody else's.
    pub(crate) fn default_lock(dirs: &Dirs, key: &Path) -> Result<Place, LockError> {
        let locks = dirs.runtime.join("locks");
        let dir_error = |source: std::io::Error| LockError::Directory {
            dir: locks.clone(),
            source,
        };
        Dirs::ensure(&dirs.runtime).map_err(dir_error)?;
        let runtime = open_own_dir(&dirs.runtime, None, false).map_err(dir_error)?;
        match rustix::fs::mkdirat(&runtime, "locks", Mode::RWXU) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(dir_error(e.into())),
        }
        let dir = open_own_dir(&locks, Some((&runtime, "locks")), true).map_err(dir_error)?;
        Ok(Place {
            dir: Rc::new(dir),
            dir_path: locks,
            name: format!("{}.lock", file_key(key.as_os_str().as_encoded_bytes())),
            private: true,
        })
    }

    /// A lock file the user named (`--lock-file`): its directory is taken
    /// as given, links and all (the user chose it), but a link as the file
    /// itself is never followed.
    pub(crate) fn named(path: &Path) -> Result<Place, LockError> {
        let open_error = |source| LockError::Open {
            path: path.to_path_buf(),
            source,
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| {
                open_error(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it does not name a file (or its name is not UTF-8)",
                ))
            })?
            .to_owned();
        let dir_path = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = rustix::fs::open(
            &dir_path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_error(e.into()))?;
        Ok(Place {
            dir: Rc::new(dir),
            dir_path,
            name,
            private: false,
        })
    }

    /// The file beside this one named with `suffix` appended; always
    /// this user's (clada makes it).
    pub(crate) fn with_suffix(&self, suffix: &str) -> Place {
        Place {
            dir: Rc::clone(&self.dir),
            dir_path: self.dir_path.clone(),
            name: format!("{}{suffix}", self.name),
            private: true,
        }
    }

    /// The file as a path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir_path.join(&self.name)
    }

    /// Opens the file for reading; `None` when it does not exist.
    pub(crate) fn read(&self) -> std::io::Result<Option<File>> {
        match rustix::fs::openat(&*self.dir, self.name.as_str(), READ, Mode::empty()) {
            Ok(fd) => self.checked(fd).map(Some),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.explain(e)),
        }
    }

    /// Opens the file for writing, made (0600) if missing; `append`: every
    /// write goes to its end.
    pub(crate) fn write(&self, append: bool) -> std::io::Result<File> {
        let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        flags |= OFlags::CLOEXEC;
        if append {
            flags |= OFlags::APPEND;
        }
        let fd = rustix::fs::openat(
            &*self.dir,
            self.name.as_str(),
            flags,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|e| self.explain(e))?;
        self.checked(fd)
    }

    /// Makes the file anew (0600), failing if anything is there.
    pub(crate) fn create_new(&self) -> std::io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(
            &*self.dir,
            self.name.as_str(),
            flags,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|e| self.explain(e))?;
        self.checked(fd)
    }

    /// Puts this file in place of `other`, in the same directory.
    pub(crate) fn rename_over(&self, other: &Place) -> std::io::Result<()> {
        rustix::fs::renameat(
            &*self.dir,
            self.name.as_str(),
            &*other.dir,
            other.name.as_str(),
        )
        .map_err(std::io::Error::from)
    }

    /// Removes the file (a link there too, never what it names); nothing
    /// there is fine.
    pub(crate) fn remove(&self) -> std::io::Result<()> {
        match rustix::fs::unlinkat(&*self.dir, self.name.as_str(), rustix::fs::AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// A regular file, and this user's where the place is private, with
    /// one name (a hard link elsewhere would be written through).
    fn checked(&self, fd: OwnedFd) -> std::io::Result<File> {
        let st = rustix::fs::fstat(&fd)?;
        let why = if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            Some("is not a regular file")
        } else if self.private && st.st_uid != rustix::process::getuid().as_raw() {
            Some("belongs to another user")
        } else if self.private && st.st_nlink > 1 {
            Some("has other names (hard links)")
        } else {
            None
        };
        match why {
            Some(why) => Err(self.unsafe_file(why)),
            None => Ok(File::from(fd)),
        }
    }

    fn unsafe_file(&self, why: &str) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}; clada does not use it: remove it",
                self.path().display()
            ),
        )
    }

    fn explain(&self, e: Errno) -> std::io::Error {
        match e {
            // `O_NOFOLLOW` on a link.
            Errno::LOOP => self.unsafe_file("is a symbolic link, which clada never follows here"),
            e => e.into(),
        }
    }
}

/// Opens the directory `path` (or `name` in `parent`) without following a
/// link as its last component, and checks that it is this user's and that
/// nobody else may write it (`private`: nobody else may use it at all,
/// 0700).
fn open_own_dir(
    path: &Path,
    parent: Option<(&OwnedFd, &str)>,
    private: bool,
) -> std::io::Result<OwnedFd> {
    let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match parent {
        Some((dir, name)) => rustix::fs::openat(dir, name, flags, Mode::empty()),
        None => rustix::fs::open(path, flags, Mode::empty()),
    }
    .map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "it is a symbolic link or not a directory",
        ),
        e => e.into(),
    })?;
    let st = rustix::fs::fstat(&fd)?;
    let mode = st.st_mode & 0o777;
    let shared = if private { 0o077 } else { 0o022 };
    if st.st_uid != rustix::process::getuid().as_raw() || mode & shared != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "it must be a directory of this user's that {} (mode {:o}; `chmod 700` it)",
                if private {
                    "nobody else may use"
                } else {
                    "nobody else may write"
                },
                mode
            ),
        ));
    }
    Ok(fd)
}

/// Why the run's lock was not taken (PROTOCOL §7): nothing runs then.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error(
        "cannot use the directory of the default lock, {}: {source}; pass --lock-file PATH",
        .dir.display()
    )]
    Directory {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot open the lock file {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot lock {}: {source}", .path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another run holds the lock {}; gave up after {}s", .path.display(), .waited.as_secs_f64())]
    Timeout { path: PathBuf, waited: Duration },
}

impl LockError {
    /// The protocol's error type: `lock_timeout` when another run held the
    /// lock, else `permission_denied`.
    pub(crate) fn error_type(&self) -> crate::ErrorType {
        match self {
            LockError::Timeout { .. } => crate::ErrorType::LockTimeout,
            _ => crate::ErrorType::PermissionDenied,
        }
    }
}

/// An exclusive advisory lock (`flock`) on a file, held while the run
/// lasts and released when the file is closed.
#[derive(Debug)]
pub(crate) struct Lock {
    _file: File,
}

impl Lock {
    /// Waits up to `timeout` for the lock on `place` (made if missing).
    pub(crate) fn acquire(place: &Place, timeout: Duration) -> Result<Lock, LockError> {
        let path = place.path();
        let file = place.write(false).map_err(|source| LockError::Open {
            path: path.clone(),
            source,
        })?;
        let until = Instant::now() + timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(Errno::WOULDBLOCK | Errno::INTR) => {}
                Err(errno) => {
                    return Err(LockError::Lock {
                        path,
                        source: errno.into(),
                    });
                }
            }
            if Instant::now() >= until {
                return Err(LockError::Timeout {
                    path,
                    waited: timeout,
                });
            }
            std::thread::sleep(pause.min(until.saturating_duration_since(Instant::now())));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn dirs(t: &Path) -> Dirs {
        Dirs {
            config: t.join("config"),
            state: t.join("state"),
            runtime: t.join("run"),
        }
    }

    #[test]
    fn the_default_lock_is_in_a_private_directory_keyed_by_the_root() {
        let t = tempfile::tempdir().unwrap();
        let d = dirs(t.path());
        let a = Place::default_lock(&d, Path::new("/a")).unwrap();
        let b = Place::default_lock(&d, Path::new("/b")).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.path().parent().unwrap(), t.path().join("run/locks"));
        let lock = Lock::acquire(&a, Duration::ZERO).unwrap();
        assert!(matches!(
            Lock::acquire(&a, Duration::ZERO),
            Err(LockError::Timeout { .. })
        ));
        drop(lock);
        let mode = std::fs::metadata(t.path().join("run/locks"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        // A locks directory others may enter is refused.
        std::fs::set_permissions(
            t.path().join("run/locks"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(matches!(
            Place::default_lock(&d, Path::new("/a")),
            Err(LockError::Directory { .. })
        ));
    }

    #[test]
    fn a_link_in_place_of_the_lock_or_its_journal_is_never_followed() {
        let t = tempfile::tempdir().unwrap();
        let d = dirs(t.path());
        let lock = Place::default_lock(&d, Path::new("/a")).unwrap();
        let outside = t.path().join("outside");
        std::os::unix::fs::symlink(&outside, lock.path()).unwrap();
        let e = Lock::acquire(&lock, Duration::ZERO).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let journal = lock.with_suffix(".journal");
        std::os::unix::fs::symlink(&outside, journal.path()).unwrap();
        assert!(journal.write(true).is_err());
        assert!(journal.read().is_err());
        assert!(!outside.exists());
        // The link itself can be removed, what it names is untouched.
        journal.remove().unwrap();
        assert!(journal.read().unwrap().is_none());
        // The locks directory itself replaced by a link.
        let locks = t.path().join("run/locks");
        std::fs::remove_file(lock.path()).unwrap();
        std::fs::remove_dir(&locks).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, &locks).unwrap();
        assert!(matches!(
            Place::default_lock(&d, Path::new("/a")),
            Err(LockError::Directory { .. })
        ));
    }

    #[test]
    fn a_named_lock_follows_links_on_the_way_but_not_as_itself() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", t.path().join("via")).unwrap();
        let place = Place::named(&t.path().join("via/run.lock")).unwrap();
        drop(Lock::acquire(&place, Duration::ZERO).unwrap());
        assert!(t.path().join("real/run.lock").is_file());
        std::os::unix::fs::symlink("real/run.lock", t.path().join("l.lock")).unwrap();
        let place = Place::named(&t.path().join("l.lock")).unwrap();
        assert!(Lock::acquire(&place, Duration::ZERO).is_err());
        // A hard link beside a named lock, where the journal goes.
        let journal = Place::named(&t.path().join("real/run.lock"))
            .unwrap()
            .with_suffix(".journal");
        std::fs::write(t.path().join("victim"), "keep").unwrap();
        std::fs::hard_link(t.path().join("victim"), journal.path()).unwrap();
        assert!(journal.write(true).is_err());
    }
}
