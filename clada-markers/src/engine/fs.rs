//! The file system as tasks see it: every access goes through an open
//! handle on the root, one path component at a time, never following a
//! symbolic link (PROTOCOL §5).
//!
//! A path is first resolved as text (`.` and `..`, both separators); then
//! each directory on the way is opened relative to the one before with
//! `O_NOFOLLOW | O_DIRECTORY`, and the final component is opened or renamed
//! relative to its parent's handle. A directory swapped for a link between
//! a check and a use makes the open fail (`ELOOP`); it can never redirect an
//! access outside the root. Only `--allow-escape` lets a path start above
//! the root or at `/`, and even then no link is followed.
//!
//! Files are replaced atomically: the new content goes to a temporary file
//! in the same directory, which is then renamed over the target, so a crash
//! leaves the old content or the new, never a mix. Existing files keep their
//! permission bits.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::memory::MemoryTree;
use super::tree::{Entry, FsError, Kind, Meta, Tree, TreeMut};
use crate::syntax::Anchor;
use crate::syntax::{Location, TaskPath};

/// Resolves `path` as text (PROTOCOL §5); a path too deep is
/// [`FsError::TooDeep`], every other problem [`FsError::Escape`]. Leaving
/// the root needs `allow_escape`.
/// Where a task's path lies: the place validation resolved it to
/// ([`TaskPath`]), never resolved again, so long as this run lets it be
/// there (a path resolved with `--allow-escape` and run without is
/// refused); a path made by hand, with no place, is resolved here.
pub(crate) fn locate_task(path: &TaskPath<'_>, allow_escape: bool) -> Result<Location, FsError> {
    match path.at() {
        Some(at) if allow_escape || at.anchor == Anchor::Root => Ok(at.clone()),
        Some(_) => Err(FsError::Escape {
            path: path.to_string(),
        }),
        None => locate(path, allow_escape),
    }
}

pub(crate) fn locate(path: &str, allow_escape: bool) -> Result<Location, FsError> {
    crate::syntax::resolve_path(path, allow_escape).map_err(|problem| {
        match (problem, crate::syntax::TooDeep::of(path, allow_escape)) {
            (crate::syntax::PathProblem::TooDeep, Some(deep)) => FsError::TooDeep {
                path: crate::syntax::abbreviated_path(path),
                components: deep.components,
            },
            _ => FsError::Escape {
                path: path.to_owned(),
            },
        }
    })
}

/// What identifies one state of a file on disk: where it lives (device
/// and inode), its size and its modification time. A file replaced,
/// rewritten or truncated since has another stamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

impl Stamp {
    fn of(st: &rustix::fs::Stat) -> Stamp {
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        Stamp {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: u64::try_from(st.st_size).unwrap_or(0),
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
        }
    }

    /// The stamp of a file of a tree in memory: its id stands for the
    /// inode and times.
    fn memory(id: u64, size: usize) -> Stamp {
        Stamp {
            dev: 0,
            ino: id,
            size: u64::try_from(size).unwrap_or(u64::MAX),
            mtime: (0, 0),
        }
    }
}

/// How [`Root::put_back`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PutBack {
    Done,
    /// Something is where it would go: nothing was moved.
    Occupied,
    /// The directory it would go into is gone (or is no directory now).
    NoPlace,
    /// What was to be put back is gone.
    Missing,
}

/// How a write ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Written {
    Created,
    Replaced,
}

/// Where a root notes each temporary name before it uses it, so that a run
/// killed in between can be cleaned up after: the journal
/// ([`crate::engine::journal`]) writes each down at once.
pub(crate) trait TempNotes {
    /// Notes the temporary name `temp`, a directory if `dir`.
    fn note(&mut self, temp: &Location, dir: bool) -> std::io::Result<()>;
}

/// The root directory, held open.
///
/// Directories opened on the way to a path are kept open for the next
/// access below them: a handle always names the directory that was checked,
/// whatever happens to its path later. The cache is emptied after every
/// move, removal and command, which can change what a path names; so is
/// what the root knows of directories that hold no `.git`.
pub(crate) struct Root {
    /// The directory; `None` for a tree in memory.
    fd: Option<OwnedFd>,
    /// The tree in memory the root stands on instead of the disk
    /// ([`Root::in_memory`]).
    memory: Option<Rc<MemoryTree>>,
    dirs: RefCell<DirCache>,
    /// Places besides `.git` and `.clada` that no change may touch:
    /// clada's own directories, when they lie inside the root.
    protected: Vec<Location>,
    /// Where each temporary file is noted before it is created, so that a
    /// run killed before renaming it can be cleaned up after
    /// ([`crate::engine::journal`]).
    journal: RefCell<Option<Box<dyn TempNotes>>>,
    /// When long walks stop ([`Root::set_deadline`]).
    deadline: Cell<Option<Instant>>,
    /// Directories found to hold no `.git` since the tree last changed on
    /// disk ([`Root::check_takes_away`]): a directory moved again and
    /// again is looked through once.
    clean: RefCell<HashSet<Location>>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("protected", &self.protected)
            .finish_non_exhaustive()
    }
}

/// The most directories a root keeps open between accesses.
const MAX_OPEN_DIRS: usize = 256;

/// Directories held open, as a tree of names below each anchor: the
/// deepest one open on the way to a path is found in one walk down its
/// components, whatever its depth.
#[derive(Default)]
struct DirCache {
    anchors: HashMap<Anchor, CachedDir>,
    /// How many handles the tree holds.
    open: usize,
}

#[derive(Default)]
struct CachedDir {
    fd: Option<Rc<OwnedFd>>,
    below: HashMap<String, CachedDir>,
}

impl DirCache {
    /// The deepest directory open among the anchor of `at` and its first
    /// `upto` components: how many components it has, and its handle.
    fn deepest(&self, at: &Location, upto: usize) -> Option<(usize, Rc<OwnedFd>)> {
        let mut node = self.anchors.get(&at.anchor)?;
        let mut best = node.fd.as_ref().map(|fd| (0, Rc::clone(fd)));
        for (i, part) in at.parts[..upto].iter().enumerate() {
            let Some(next) = node.below.get(part.as_str()) else {
                break;
            };
            node = next;
            if let Some(fd) = &node.fd {
                best = Some((i + 1, Rc::clone(fd)));
            }
        }
        best
    }

    /// Keeps `opened`, the handles of the anchor of `at` and its
    /// components from the `first`-th on (the anchor itself when `first`
    /// is 0), in one walk. At most [`MAX_OPEN_DIRS`] are kept: a walk over
    /// a tree of thousands of directories, or down a very deep one, must
    /// not run out of file descriptors.
    fn keep(&mut self, at: &Location, first: usize, opened: Vec<Rc<OwnedFd>>) {
        let skip = opened.len().saturating_sub(MAX_OPEN_DIRS);
        if self.open + opened.len() - skip > MAX_OPEN_DIRS {
            self.anchors.clear();
            self.open = 0;
        }
        let mut node = self.anchors.entry(at.anchor).or_default();
        let mut level = 0;
        for (i, fd) in opened.into_iter().enumerate() {
            let depth = first + i;
            while level < depth {
                node = node.below.entry(at.parts[level].clone()).or_default();
                level += 1;
            }
            if i >= skip && node.fd.is_none() {
                node.fd = Some(fd);
                self.open += 1;
            }
        }
    }
}

/// A file write made ready: the parent directory exists, the target is not
/// a directory or a link, and a temporary file has been created beside it.
/// [`PreparedWrite::commit`] fills the temporary file and renames it over
/// the target; dropping it uncommitted removes the temporary file.
#[derive(Debug)]
pub(crate) enum PreparedWrite {
    Disk(DiskWrite),
    /// A write to a tree in memory: made when committed.
    Memory {
        tree: Rc<MemoryTree>,
        at: Location,
        /// Whether a file was there when the write was made ready.
        existed: bool,
    },
}

/// A write to the disk made ready: a temporary file beside the target.
#[derive(Debug)]
pub(crate) struct DiskWrite {
    parent: Rc<OwnedFd>,
    name: String,
    temp: String,
    file: Option<File>,
    /// The target's permission bits, when it exists.
    mode: Option<Mode>,
    path: String,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

pub(super) const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::RDONLY)
    .union(OFlags::CLOEXEC);

impl Root {
    /// Opens the root directory (following a link given as the root itself:
    /// the user named it).
    pub(crate) fn open(path: &Path) -> std::io::Result<Root> {
        let fd = rustix::fs::open(
            path,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Root {
            fd: Some(fd),
            memory: None,
            dirs: RefCell::new(DirCache::default()),
            protected: Vec::new(),
            journal: RefCell::new(None),
            deadline: Cell::new(None),
            clean: RefCell::new(HashSet::new()),
        })
    }

    /// A root over `tree`, held in memory: every access goes to it, none
    /// to the disk.
    pub(crate) fn in_memory(tree: Rc<MemoryTree>) -> Root {
        Root {
            fd: None,
            memory: Some(tree),
            dirs: RefCell::new(DirCache::default()),
            protected: Vec::new(),
            journal: RefCell::new(None),
            deadline: Cell::new(None),
            clean: RefCell::new(HashSet::new()),
        }
    }

    /// The tree in memory this root stands on, if it does.
    pub(crate) fn memory(&self) -> Option<&MemoryTree> {
        self.memory.as_deref()
    }

    /// Notes every temporary file in `journal` before the file is created.
    pub(crate) fn keep_journal(&self, journal: Box<dyn TempNotes>) {
        *self.journal.borrow_mut() = Some(journal);
    }

    /// Adds places no change may touch (clada's configuration, state and
    /// runtime directories, when the root holds them).
    pub(crate) fn protect(&mut self, places: impl IntoIterator<Item = Location>) {
        self.protected.extend(places);
    }

    /// Refuses a change that lands at `at` when that is a protected place
    /// (PROTOCOL §5): any `.git` component, `.clada` at the top, or inside
    /// one of clada's own directories. Callers check where a change finally
    /// lands: after a target directory is joined.
    pub(crate) fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        let refuse = |why| {
            Err(FsError::Protected {
                path: at.display(),
                why,
            })
        };
        if crate::syntax::is_protected(at) {
            return refuse("is inside `.clada/` or a `.git` directory");
        }
        if self
            .protected
            .iter()
            .any(|p| p == at || p.is_ancestor_of(at))
        {
            return refuse("is inside clada's own configuration, state or runtime directory");
        }
        Ok(())
    }

    /// Refuses moving or removing `at` when that takes a protected place
    /// with it: the root, one of clada's own directories, or a directory
    /// holding a `.git` anywhere below (a nested repository's history is
    /// not in the root's commits). The walk never follows a link.
    pub(crate) fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        self.check_takes_away_shallow(at)?;
        let refuse = |why| {
            Err(FsError::Protected {
                path: at.display(),
                why,
            })
        };
        if self.kind(at)? != Some(Kind::Dir) || self.clean.borrow().contains(at) {
            return Ok(());
        }
        if let Some(m) = self.memory() {
            if m.holds_repository(at)? {
                return refuse("holds a repository (`.git`)");
            }
            return Ok(());
        }
        let os = |errno| FsError::Os {
            path: at.display(),
            op: "look through",
            errno,
        };
        // Each directory is opened from its parent's handle, never by its
        // path: the walk costs the size of the tree, whatever its depth.
        let mut pending: Vec<(Rc<OwnedFd>, Option<std::ffi::CString>)> =
            vec![(self.dir(at, at.parts.len(), false)?, None)];
        while let Some((parent, name)) = pending.pop() {
            if self.deadline.get().is_some_and(|d| Instant::now() >= d) {
                return Err(FsError::TimedOut { path: at.display() });
            }
            let dir = match &name {
                Some(name) => {
                    rustix::fs::openat(&*parent, name.as_c_str(), DIR_FLAGS, Mode::empty())
                }
                // A fresh handle: reading a directory moves its offset.
                None => rustix::fs::openat(&*parent, c".", DIR_FLAGS, Mode::empty()),
            }
            .map_err(os)?;
            let dir = Rc::new(dir);
            for entry in rustix::fs::Dir::read_from(&*dir).map_err(os)? {
                let entry = entry.map_err(os)?;
                let child = entry.file_name();
                if child == c"." || child == c".." {
                    continue;
                }
                if child == c".git" {
                    return refuse("holds a repository (`.git`)");
                }
                let kind = match entry.file_type() {
                    FileType::Unknown => {
                        rustix::fs::statat(&*dir, child, AtFlags::SYMLINK_NOFOLLOW)
                            .map(|st| FileType::from_raw_mode(st.st_mode))
                            .map_err(os)?
                    }
                    t => t,
                };
                if kind == FileType::Directory {
                    pending.push((Rc::clone(&dir), Some(child.to_owned())));
                }
            }
        }
        // Until the tree changes on disk, it holds none.
        self.clean.borrow_mut().insert(at.clone());
        Ok(())
    }

    /// [`Root::check_takes_away`] without looking at what `at` holds on
    /// disk.
    pub(crate) fn check_takes_away_shallow(&self, at: &Location) -> Result<(), FsError> {
        self.check_lands(at)?;
        let refuse = |why| {
            Err(FsError::Protected {
                path: at.display(),
                why,
            })
        };
        if at.is_root() {
            return refuse("is the root");
        }
        if self.protected.iter().any(|p| at.is_ancestor_of(p)) {
            return refuse("holds clada's own configuration, state or runtime directory");
        }
        Ok(())
    }

    /// Sets when walks through the tree that may be long (the look for a
    /// `.git` below what a task takes away) stop, with
    /// [`FsError::TimedOut`]; returns the one set before.
    pub(crate) fn set_deadline(&self, deadline: Option<Instant>) -> Option<Instant> {
        self.deadline.replace(deadline)
    }

    /// When walks stop, if they do.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline.get()
    }

    /// Forgets the directories kept open: paths may name other ones now.
    pub(crate) fn forget_dirs(&self) {
        *self.dirs.borrow_mut() = DirCache::default();
        self.clean.borrow_mut().clear();
    }

    /// Opens the directory made of the anchor and the first `upto`
    /// components, creating missing ones when `create`. It starts from
    /// the deepest directory already open on the way, and keeps those it
    /// opens for the next access: its cost is linear in the components.
    pub(super) fn dir(
        &self,
        at: &Location,
        upto: usize,
        create: bool,
    ) -> Result<Rc<OwnedFd>, FsError> {
        let os = |op, errno, n| FsError::Os {
            path: at.prefix(n),
            op,
            errno,
        };
        // A tree in memory has no directory to open: every caller asks it
        // first.
        let Some(root_fd) = &self.fd else {
            return Err(os("open", Errno::NOTSUP, 0));
        };
        let cached = self.dirs.borrow().deepest(at, upto);
        let mut opened = Vec::new();
        let (from, mut cur) = match cached {
            Some(found) => found,
            None => {
                let fd = match at.anchor {
                    Anchor::Root => rustix::fs::openat(root_fd, c".", DIR_FLAGS, Mode::empty()),
                    Anchor::Slash => rustix::fs::open(c"/", DIR_FLAGS, Mode::empty()),
                    Anchor::Up(n) => {
                        let mut fd = rustix::fs::openat(root_fd, c"..", DIR_FLAGS, Mode::empty());
                        for _ in 1..n {
                            fd = fd.and_then(|d| {
                                rustix::fs::openat(&d, c"..", DIR_FLAGS, Mode::empty())
                            });
                        }
                        fd
                    }
                }
                .map_err(|e| os("open", e, 0))?;
                let fd = Rc::new(fd);
                opened.push(Rc::clone(&fd));
                (0, fd)
            }
        };
        // The handles opened are kept whether the walk ends or fails.
        let first = if opened.is_empty() { from + 1 } else { 0 };
        let walked = (|| {
            for n in from + 1..=upto {
                let part = at.parts[n - 1].as_str();
                let mut attempt = rustix::fs::openat(&*cur, part, DIR_FLAGS, Mode::empty());
                if create && matches!(attempt, Err(Errno::NOENT)) {
                    match rustix::fs::mkdirat(&*cur, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(os("create directory", e, n)),
                    }
                    attempt = rustix::fs::openat(&*cur, part, DIR_FLAGS, Mode::empty());
                }
                cur = match attempt {
                    Ok(fd) => {
                        let fd = Rc::new(fd);
                        opened.push(Rc::clone(&fd));
                        fd
                    }
                    Err(Errno::NOENT) => return Err(FsError::NotFound { path: at.prefix(n) }),
                    Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
                        return Err(match kind_at(&cur, part) {
                            Ok(Some(Kind::Symlink)) => FsError::Symlink { path: at.prefix(n) },
                            Ok(Some(_)) => FsError::NotDirectory { path: at.prefix(n) },
                            _ => os("open", e, n),
                        });
                    }
                    Err(e) => return Err(os("open", e, n)),
                };
            }
            Ok(())
        })();
        if !opened.is_empty() {
            self.dirs.borrow_mut().keep(at, first, opened);
        }
        walked.map(|()| cur)
    }

    /// The parent directory of `at` and the final name.
    pub(super) fn parent<'l>(
        &self,
        at: &'l Location,
        create: bool,
    ) -> Result<(Rc<OwnedFd>, &'l str), FsError> {
        let name = at
            .name()
            .ok_or_else(|| FsError::IsDirectory { path: at.display() })?;
        Ok((self.dir(at, at.parts.len() - 1, create)?, name))
    }

    /// Writes `contents` as the whole file, atomically, creating missing
    /// parent directories.
    pub(crate) fn write(&self, at: &Location, contents: &[u8]) -> Result<Written, FsError> {
        self.prepare_write(at)?.commit(contents)
    }

    /// Makes a write of `at` ready, creating missing parent directories:
    /// everything that can refuse the write is checked now.
    pub(crate) fn prepare_write(&self, at: &Location) -> Result<PreparedWrite, FsError> {
        let path = || at.display();
        if let Some(tree) = &self.memory {
            if at.parts.is_empty() {
                return Err(FsError::IsDirectory { path: path() });
            }
            tree.make(at, at.parts.len() - 1, &mut |_, _| true)?;
            let existed = match tree.node(at)? {
                Some(super::memory::Node::Dir) => {
                    return Err(FsError::IsDirectory { path: path() });
                }
                Some(super::memory::Node::File { .. }) => true,
                None => false,
            };
            return Ok(PreparedWrite::Memory {
                tree: Rc::clone(tree),
                at: at.clone(),
                existed,
            });
        }
        let (parent, name) = self.parent(at, true)?;
        let mode = match rustix::fs::statat(&*parent, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match Kind::of(FileType::from_raw_mode(st.st_mode)) {
                Kind::File => Some(Mode::from_raw_mode(st.st_mode & 0o7777)),
                Kind::Dir => return Err(FsError::IsDirectory { path: path() }),
                Kind::Symlink => return Err(FsError::Symlink { path: path() }),
                Kind::Other => return Err(FsError::NotRegular { path: path() }),
            },
            Err(Errno::NOENT) => None,
            Err(errno) => {
                return Err(FsError::Os {
                    path: path(),
                    op: "inspect",
                    errno,
                });
            }
        };
        let temp = temp_name(name);
        self.note_temp(&at.truncated(at.parts.len() - 1).join(&temp))?;
        let fd = rustix::fs::openat(
            &*parent,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(|errno| FsError::Os {
            path: path(),
            op: "create a temporary file for",
            errno,
        })?;
        let file = File::from(fd);
        // New files keep the mode the system gives them. Existing ones keep
        // theirs: set it now, unless the temporary file already has it.
        let mode = match mode {
            Some(m) => match rustix::fs::fstat(&file) {
                Ok(st) if st.st_mode & 0o7777 == m.bits() => Some(m),
                _ => {
                    rustix::fs::fchmod(&file, m).map_err(|errno| FsError::Os {
                        path: path(),
                        op: "set permissions of",
                        errno,
                    })?;
                    Some(m)
                }
            },
            None => None,
        };
        Ok(PreparedWrite::Disk(DiskWrite {
            parent,
            name: name.to_owned(),
            temp,
            file: Some(file),
            mode,
            path: path(),
        }))
    }

    /// Reads the regular file at `at`, with the stamp of what was read.
    pub(crate) fn read_stamped(&self, at: &Location) -> Result<(Vec<u8>, Stamp), FsError> {
        if let Some(m) = self.memory() {
            let (bytes, id) = m.file(at)?;
            return Ok((bytes.to_vec(), Stamp::memory(id, bytes.len())));
        }
        let path = || at.display();
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
            Kind::File => {}
            Kind::Dir => return Err(FsError::IsDirectory { path: path() }),
            _ => return Err(FsError::NotRegular { path: path() }),
        }
        let mut bytes = Vec::with_capacity(usize::try_from(st.st_size).unwrap_or(0));
        File::from(fd)
            .read_to_end(&mut bytes)
            .map_err(|e| FsError::Os {
                path: path(),
                op: "read",
                errno: errno_of(&e),
            })?;
        Ok((bytes, Stamp::of(&st)))
    }

    /// The stamp of the regular file at `at`, `None` when nothing is there.
    pub(crate) fn stamp(&self, at: &Location) -> Result<Option<Stamp>, FsError> {
        if let Some(m) = self.memory() {
            return match m.file(at) {
                Ok((bytes, id)) => Ok(Some(Stamp::memory(id, bytes.len()))),
                Err(FsError::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            };
        }
        let (parent, name) = match self.parent(at, false) {
            Ok(p) => p,
            Err(FsError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        stamp_at(&parent, name, &at.display())
    }

    /// Makes the directory `at` and its missing parents.
    pub(crate) fn make_dirs(&self, at: &Location) -> Result<(), FsError> {
        if let Some(m) = self.memory() {
            return m.make(at, at.parts.len(), &mut |_, _| true).map(drop);
        }
        self.dir(at, at.parts.len(), true).map(|_| ())
    }

    /// How many of the components of `at` after its first `from` are
    /// directories on disk, one after the other, and what the next one
    /// is: nothing (`Ok(None)`, also when all are directories), another
    /// kind, or the error of looking at it. What [`Tree::kind`] says of
    /// each of those prefixes, in one walk: a deep path costs its depth,
    /// not its square.
    pub(crate) fn dirs_along(
        &self,
        at: &Location,
        from: usize,
    ) -> (usize, Result<Option<Kind>, FsError>) {
        if let Some(m) = self.memory() {
            return m.dirs_along(at, from);
        }
        let mut cur = match self.dir(at, from, false) {
            Ok(fd) => fd,
            Err(FsError::NotFound { .. }) => return (from, Ok(None)),
            Err(e) => return (from, Err(e)),
        };
        let mut opened = Vec::new();
        let mut n = from;
        let next = loop {
            let Some(part) = at.parts.get(n) else {
                break Ok(None);
            };
            match kind_at(&cur, part) {
                Ok(Some(Kind::Dir)) => {}
                Ok(other) => break Ok(other),
                Err(errno) => {
                    break Err(FsError::Os {
                        path: at.prefix(n + 1),
                        op: "inspect",
                        errno,
                    });
                }
            }
            match rustix::fs::openat(&*cur, part.as_str(), DIR_FLAGS, Mode::empty()) {
                Ok(fd) => {
                    cur = Rc::new(fd);
                    opened.push(Rc::clone(&cur));
                    n += 1;
                }
                // Removed or replaced since it was looked at.
                Err(Errno::NOENT) => break Ok(None),
                Err(_) => {
                    break kind_at(&cur, part).map_err(|errno| FsError::Os {
                        path: at.prefix(n + 1),
                        op: "inspect",
                        errno,
                    });
                }
            }
        };
        if !opened.is_empty() {
            self.dirs.borrow_mut().keep(at, from + 1, opened);
        }
        (n, next)
    }

    /// Makes the directory `at` and its missing parents (`mkdir -p`) in
    /// one walk. `step` hears each directory on the way, by its number of
    /// components, and whether it was made; it may stop the walk (`false`:
    /// then `Ok(false)`).
    pub(crate) fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        if let Some(m) = self.memory() {
            return m.make(at, at.parts.len(), step);
        }
        let cached = self.dirs.borrow().deepest(at, at.parts.len());
        let (from, mut cur) = match cached {
            Some(found) => found,
            None => (0, self.dir(at, 0, false)?),
        };
        let mut opened = Vec::new();
        let walked = (|| {
            for n in from + 1..=at.parts.len() {
                let part = at.parts[n - 1].as_str();
                let open = |dir: &OwnedFd| rustix::fs::openat(dir, part, DIR_FLAGS, Mode::empty());
                let mut made = false;
                let mut attempt = open(&cur);
                if matches!(attempt, Err(Errno::NOENT)) {
                    match rustix::fs::mkdirat(&*cur, part, Mode::from_raw_mode(0o777)) {
                        Ok(()) => made = true,
                        Err(Errno::EXIST) => {}
                        Err(errno) => {
                            return Err(FsError::Os {
                                path: at.prefix(n),
                                op: "create directory",
                                errno,
                            });
                        }
                    }
                    attempt = open(&cur);
                }
                cur = match attempt {
                    Ok(fd) => Rc::new(fd),
                    Err(Errno::NOENT) => return Err(FsError::NotFound { path: at.prefix(n) }),
                    Err(errno) => {
                        return Err(match kind_at(&cur, part) {
                            Ok(Some(Kind::Symlink)) => FsError::Symlink { path: at.prefix(n) },
                            Ok(Some(_)) => FsError::NotDirectory { path: at.prefix(n) },
                            _ => FsError::Os {
                                path: at.prefix(n),
                                op: "open",
                                errno,
                            },
                        });
                    }
                };
                opened.push(Rc::clone(&cur));
                if !step(n, made) {
                    return Ok(false);
                }
            }
            Ok(true)
        })();
        if !opened.is_empty() {
            self.dirs.borrow_mut().keep(at, from + 1, opened);
        }
        walked
    }

    /// Removes the directories of `at`'s first components from the
    /// `from`-th on, deepest first, those that are empty (undoing
    /// [`Root::make_dirs`]); one walk. Returns the deepest that stayed
    /// because something is in it.
    pub(crate) fn remove_empty_dirs(&self, at: &Location, from: usize) -> Option<Location> {
        if let Some(m) = self.memory() {
            return m.remove_empty_dirs(at, from);
        }
        let from = from.checked_sub(1)?;
        let mut cur = self.dir(at, from, false).ok()?;
        let mut chain = Vec::new();
        for part in at.parts.get(from..).unwrap_or(&[]) {
            chain.push(Rc::clone(&cur));
            match rustix::fs::openat(&*cur, part.as_str(), DIR_FLAGS, Mode::empty()) {
                Ok(fd) => cur = Rc::new(fd),
                Err(_) => break,
            }
        }
        self.forget_dirs();
        for (i, parent) in chain.iter().enumerate().rev() {
            // One that is not empty stays, and so do those above it, which
            // hold it; one gone already is nothing to undo.
            let name = at.parts[from + i].as_str();
            match rustix::fs::unlinkat(&**parent, name, AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(Errno::NOTEMPTY | Errno::EXIST) => return Some(at.truncated(from + i + 1)),
                Err(_) => return None,
            }
        }
        None
    }

    /// Renames `at` to a fresh temporary name beside it (noted in the
    /// journal, as a directory or not), so that it can be put back;
    /// returns where it went.
    pub(crate) fn set_aside(&self, at: &Location) -> Result<Location, FsError> {
        if let Some(m) = self.memory() {
            let name = at
                .name()
                .ok_or_else(|| FsError::IsDirectory { path: at.display() })?;
            let aside = at.truncated(at.parts.len() - 1).join(&temp_name(name));
            m.rename(at, &aside)?;
            return Ok(aside);
        }
        let (parent, name) = self.parent(at, false)?;
        let temp = temp_name(name);
        let aside = at.truncated(at.parts.len() - 1).join(&temp);
        let dir = matches!(kind_at(&parent, name), Ok(Some(Kind::Dir)));
        self.note(&aside, dir)?;
        rustix::fs::renameat(&*parent, name, &*parent, temp.as_str()).map_err(|errno| {
            FsError::Os {
                path: at.display(),
                op: "set aside",
                errno,
            }
        })?;
        self.forget_dirs();
        Ok(aside)
    }

    /// Links the file at `at` under a fresh temporary name beside it (noted
    /// in the journal): its contents stay reachable after `at` is replaced.
    pub(crate) fn keep_copy(&self, at: &Location) -> Result<Location, FsError> {
        if let Some(m) = self.memory() {
            let name = at
                .name()
                .ok_or_else(|| FsError::IsDirectory { path: at.display() })?;
            let kept = at.truncated(at.parts.len() - 1).join(&temp_name(name));
            m.link(at, &kept)?;
            return Ok(kept);
        }
        let (parent, name) = self.parent(at, false)?;
        let temp = temp_name(name);
        let kept = at.truncated(at.parts.len() - 1).join(&temp);
        self.note_temp(&kept)?;
        rustix::fs::linkat(&*parent, name, &*parent, temp.as_str(), AtFlags::empty()).map_err(
            |errno| FsError::Os {
                path: at.display(),
                op: "keep the old contents of",
                errno,
            },
        )?;
        Ok(kept)
    }

    /// Notes a temporary file in the journal before it is made.
    fn note_temp(&self, temp: &Location) -> Result<(), FsError> {
        self.note(temp, false)
    }

    /// Notes a temporary name in the journal before it is used, as a
    /// directory or not.
    fn note(&self, temp: &Location, dir: bool) -> Result<(), FsError> {
        if let Some(journal) = self.journal.borrow_mut().as_mut() {
            journal.note(temp, dir).map_err(|e| FsError::Os {
                path: temp.display(),
                op: "note the temporary file",
                errno: errno_of(&e),
            })?;
        }
        Ok(())
    }

    /// Opens the directory `at` (for a command's working directory).
    pub(crate) fn directory(&self, at: &Location) -> Result<Rc<OwnedFd>, FsError> {
        self.dir(at, at.parts.len(), false)
    }

    /// Checks that no existing part of `at` is a symbolic link. Parts that
    /// do not exist are fine (a command may be about to create them).
    pub(crate) fn check_no_links(&self, at: &Location) -> Result<(), FsError> {
        if at.parts.is_empty() {
            return Ok(());
        }
        match self.kind(at) {
            Ok(Some(Kind::Symlink)) => Err(FsError::Symlink { path: at.display() }),
            Ok(_) | Err(FsError::NotFound { .. } | FsError::NotDirectory { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Renames `from` to `to` (replacing a file there), creating missing
    /// parents of `to`. A link at `from` is moved as a link.
    pub(crate) fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        if let Some(m) = self.memory() {
            m.walk(from, from.parts.len().saturating_sub(1))?;
            m.make(to, to.parts.len().saturating_sub(1), &mut |_, _| true)?;
            return m.rename(from, to);
        }
        let (from_parent, from_name) = self.parent(from, false)?;
        let (to_parent, to_name) = self.parent(to, true)?;
        // rename(2) does nothing when both names are links to one file:
        // the move then means that `from` goes, and `to` holds it.
        let renamed = if other_link(&from_parent, from_name, &to_parent, to_name) {
            rustix::fs::unlinkat(&*from_parent, from_name, AtFlags::empty())
        } else {
            rustix::fs::renameat(&from_parent, from_name, &to_parent, to_name)
        };
        // Handles kept for paths below either name now name other things.
        self.forget_dirs();
        renamed.map_err(|errno| match errno {
            Errno::NOENT => FsError::NotFound {
                path: from.display(),
            },
            _ => FsError::Os {
                path: format!("{} to {}", from.display(), to.display()),
                op: "move",
                errno,
            },
        })
    }

    /// Renames `from` to `to` only if nothing is at `to` and the
    /// directories on the way to both are still there, not links (a
    /// rollback putting something back never replaces what another writer
    /// made, nor follows what it put in place of a directory).
    pub(crate) fn put_back(&self, from: &Location, to: &Location) -> Result<PutBack, FsError> {
        let gone = |e: &FsError| {
            matches!(
                e,
                FsError::NotFound { .. } | FsError::NotDirectory { .. } | FsError::Symlink { .. }
            )
        };
        if let Some(m) = self.memory() {
            return Ok(
                match (m.kind(from), m.walk(to, to.parts.len().saturating_sub(1))) {
                    (Err(e), _) if gone(&e) => PutBack::Missing,
                    (Err(e), _) => return Err(e),
                    (Ok(None), _) => PutBack::Missing,
                    (_, Err(e)) if gone(&e) => PutBack::NoPlace,
                    (_, Err(e)) => return Err(e),
                    (Ok(Some(_)), Ok(())) if m.kind(to)?.is_some() => PutBack::Occupied,
                    (Ok(Some(_)), Ok(())) => {
                        m.rename(from, to)?;
                        PutBack::Done
                    }
                },
            );
        }
        let (from_parent, from_name) = match self.parent(from, false) {
            Ok(p) => p,
            Err(e) if gone(&e) => return Ok(PutBack::Missing),
            Err(e) => return Err(e),
        };
        let (to_parent, to_name) = match self.parent(to, false) {
            Ok(p) => p,
            Err(e) if gone(&e) => return Ok(PutBack::NoPlace),
            Err(e) => return Err(e),
        };
        let rename = |flags| {
            rustix::fs::renameat_with(&*from_parent, from_name, &*to_parent, to_name, flags)
        };
        let renamed = match rename(rustix::fs::RenameFlags::NOREPLACE) {
            // A file system without RENAME_NOREPLACE: check, then rename.
            Err(Errno::INVAL) => match kind_at(&to_parent, to_name) {
                Ok(None) => rename(rustix::fs::RenameFlags::empty()),
                Ok(Some(_)) => Err(Errno::EXIST),
                Err(e) => Err(e),
            },
            other => other,
        };
        self.forget_dirs();
        match renamed {
            Ok(()) => Ok(PutBack::Done),
            Err(Errno::EXIST | Errno::NOTEMPTY) => Ok(PutBack::Occupied),
            Err(Errno::NOENT) => Ok(PutBack::Missing),
            Err(errno) => Err(FsError::Os {
                path: format!("{} to {}", from.display(), to.display()),
                op: "move back",
                errno,
            }),
        }
    }

    /// Removes a file or link, or a directory with everything in it. Links
    /// are removed themselves, never followed.
    pub(crate) fn remove(&self, at: &Location) -> Result<(), FsError> {
        let removed = self.remove_uncached(at);
        // Handles kept for paths below it name nothing, or something new.
        self.forget_dirs();
        removed
    }

    fn remove_uncached(&self, at: &Location) -> Result<(), FsError> {
        if let Some(m) = self.memory() {
            return m.remove(at);
        }
        let (parent, name) = self.parent(at, false)?;
        match kind_at(&parent, name).map_err(|errno| FsError::Os {
            path: at.display(),
            op: "inspect",
            errno,
        })? {
            None => Err(FsError::NotFound { path: at.display() }),
            Some(Kind::Dir) => remove_tree(&parent, name).map_err(|errno| FsError::Os {
                path: at.display(),
                op: "remove",
                errno,
            }),
            Some(_) => {
                rustix::fs::unlinkat(&parent, name, AtFlags::empty()).map_err(|errno| FsError::Os {
                    path: at.display(),
                    op: "remove",
                    errno,
                })
            }
        }
    }
}

impl PreparedWrite {
    /// Fills the temporary file and renames it over the target.
    pub(crate) fn commit(self, contents: &[u8]) -> Result<Written, FsError> {
        self.commit_checked(contents, None)
    }

    fn commit_checked(
        self,
        contents: &[u8],
        expect: Option<Option<Stamp>>,
    ) -> Result<Written, FsError> {
        match self {
            PreparedWrite::Disk(w) => w.commit_checked(contents, expect),
            PreparedWrite::Memory { tree, at, existed } => {
                if let Some(expect) = expect {
                    let now = match tree.file(&at) {
                        Ok((bytes, id)) => Some(Stamp::memory(id, bytes.len())),
                        Err(FsError::NotFound { .. }) => None,
                        Err(e) => return Err(e),
                    };
                    if now != expect {
                        return Err(FsError::Changed { path: at.display() });
                    }
                }
                tree.put(&at, contents)?;
                Ok(if existed {
                    Written::Replaced
                } else {
                    Written::Created
                })
            }
        }
    }

    /// Like [`PreparedWrite::commit`], but only if the target is still as
    /// it was read: the file with stamp `expect`, or nothing. Otherwise
    /// [`FsError::Changed`] and the target is left alone. A new file is
    /// renamed into place only if no other file appeared there meanwhile.
    pub(crate) fn commit_expecting(
        self,
        contents: &[u8],
        expect: Option<Stamp>,
    ) -> Result<Written, FsError> {
        self.commit_checked(contents, Some(expect))
    }
}

impl DiskWrite {
    fn commit_checked(
        mut self,
        contents: &[u8],
        expect: Option<Option<Stamp>>,
    ) -> Result<Written, FsError> {
        let Some(mut file) = self.file.take() else {
            return Err(FsError::Os {
                path: self.path.clone(),
                op: "write",
                errno: Errno::BADF,
            });
        };
        file.write_all(contents).map_err(|e| FsError::Os {
            path: self.path.clone(),
            op: "write",
            errno: errno_of(&e),
        })?;
        drop(file);
        let changed = || FsError::Changed {
            path: self.path.clone(),
        };
        let unchanged = |expect: Option<Stamp>| {
            let now = stamp_at(&self.parent, self.name.as_str(), &self.path);
            matches!(now, Ok(s) if s == expect)
        };
        let flags = match expect {
            Some(Some(stamp)) => {
                if !unchanged(Some(stamp)) {
                    return Err(changed());
                }
                rustix::fs::RenameFlags::empty()
            }
            Some(None) => rustix::fs::RenameFlags::NOREPLACE,
            None => rustix::fs::RenameFlags::empty(),
        };
        let rename = |flags| {
            rustix::fs::renameat_with(
                &*self.parent,
                self.temp.as_str(),
                &*self.parent,
                self.name.as_str(),
                flags,
            )
        };
        let renamed = match rename(flags) {
            // A file system without RENAME_NOREPLACE: check, then rename.
            Err(Errno::INVAL) if !flags.is_empty() => {
                if !unchanged(None) {
                    return Err(changed());
                }
                rename(rustix::fs::RenameFlags::empty())
            }
            other => other,
        };
        renamed.map_err(|errno| match errno {
            Errno::EXIST => changed(),
            _ => FsError::Os {
                path: self.path.clone(),
                op: "replace",
                errno,
            },
        })?;
        // Renamed: nothing left to clean up.
        self.temp.clear();
        Ok(if self.mode.is_some() {
            Written::Replaced
        } else {
            Written::Created
        })
    }
}

impl Drop for DiskWrite {
    fn drop(&mut self) {
        if !self.temp.is_empty() {
            self.file = None;
            let _ = rustix::fs::unlinkat(&*self.parent, self.temp.as_str(), AtFlags::empty());
        }
    }
}

impl Tree for Root {
    fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
        if let Some(m) = self.memory() {
            return m.kind(at);
        }
        if at.parts.is_empty() {
            return Ok(Some(Kind::Dir));
        }
        let (parent, name) = match self.parent(at, false) {
            Ok(p) => p,
            Err(FsError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        kind_at(&parent, name).map_err(|errno| FsError::Os {
            path: at.display(),
            op: "inspect",
            errno,
        })
    }

    fn found(&self, at: &Location) -> Result<Kind, FsError> {
        Root::metadata(self, at).map(|m| m.kind)
    }

    fn read(&self, at: &Location) -> Result<Vec<u8>, FsError> {
        self.read_stamped(at).map(|(bytes, _)| bytes)
    }

    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError> {
        if let Some(m) = self.memory() {
            let (bytes, _) = m.file(at)?;
            return Ok(Box::new(std::io::Cursor::new(bytes.to_vec())));
        }
        Ok(Box::new(self.open_file(at)?))
    }

    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        Root::list(self, at)
    }

    fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        Root::metadata(self, at)
    }

    fn read_link(&self, at: &Location) -> Result<String, FsError> {
        Root::read_link(self, at)
    }

    fn check_no_links(&self, at: &Location) -> Result<(), FsError> {
        Root::check_no_links(self, at)
    }

    fn check_dir(&self, at: &Location) -> Result<(), FsError> {
        if let Some(m) = self.memory() {
            return m.walk(at, at.parts.len());
        }
        self.directory(at).map(drop)
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        Root::check_lands(self, at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        Root::check_takes_away(self, at)
    }
}

impl TreeMut for Root {
    fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        Root::create_dir(self, at)
    }

    fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        Root::create_dirs(self, at, step)
    }

    fn write(&self, at: &Location, data: &[u8]) -> Result<(), FsError> {
        Root::write(self, at, data).map(drop)
    }

    fn remove(&self, at: &Location) -> Result<(), FsError> {
        Root::remove(self, at)
    }

    fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        Root::rename(self, from, to)
    }

    fn touch(&self, at: &Location, access: bool, modify: bool) -> Result<(), FsError> {
        let meta = Root::metadata(self, at)?;
        let keep = |t: (i64, i64), set: bool| if set { None } else { Some(t) };
        self.set_times(at, keep(meta.accessed, access), keep(meta.modified, modify))
    }
}

/// The stamp of the regular file `name` in `dir`; `None` when nothing is
/// there. `path` names it in errors.
fn stamp_at(dir: &OwnedFd, name: &str, path: &str) -> Result<Option<Stamp>, FsError> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match Kind::of(FileType::from_raw_mode(st.st_mode)) {
            Kind::File => Ok(Some(Stamp::of(&st))),
            Kind::Dir => Err(FsError::IsDirectory { path: path.into() }),
            Kind::Symlink => Err(FsError::Symlink { path: path.into() }),
            Kind::Other => Err(FsError::NotRegular { path: path.into() }),
        },
        Err(Errno::NOENT) => Ok(None),
        Err(errno) => Err(FsError::Os {
            path: path.into(),
            op: "inspect",
            errno,
        }),
    }
}

pub(super) fn kind_at(dir: &OwnedFd, name: &str) -> Result<Option<Kind>, Errno> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(Kind::of(FileType::from_raw_mode(st.st_mode)))),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether `from_name` in `from_dir` and `to_name` in `to_dir` are two
/// names (hard links) of one file, where rename(2) succeeds and changes
/// nothing. Not when they are one name reached twice (the same entry, or
/// a case-insensitive file system's other spelling of it): only two
/// entries each listed under its exact name are two links.
fn other_link(from_dir: &OwnedFd, from_name: &str, to_dir: &OwnedFd, to_name: &str) -> bool {
    let stat = |dir, name| rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok();
    let (Some(a), Some(b)) = (stat(from_dir, from_name), stat(to_dir, to_name)) else {
        return false;
    };
    let is_dir = FileType::from_raw_mode(a.st_mode) == FileType::Directory;
    if is_dir || (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino) || a.st_nlink < 2 {
        return false;
    }
    let (Ok(da), Ok(db)) = (rustix::fs::fstat(from_dir), rustix::fs::fstat(to_dir)) else {
        return false;
    };
    if (da.st_dev, da.st_ino) != (db.st_dev, db.st_ino) {
        return true;
    }
    if from_name == to_name {
        return false;
    }
    // One directory: both exact names must be in it.
    let Ok(fd) = rustix::fs::openat(from_dir, c".", DIR_FLAGS, Mode::empty()) else {
        return false;
    };
    let Ok(entries) = rustix::fs::Dir::read_from(&fd) else {
        return false;
    };
    let (mut seen_from, mut seen_to) = (false, false);
    for entry in entries.flatten() {
        let name = entry.file_name().to_bytes();
        seen_from |= name == from_name.as_bytes();
        seen_to |= name == to_name.as_bytes();
    }
    seen_from && seen_to
}

/// Removes directory `name` in `parent` and all it holds, without
/// following links.
fn remove_tree(parent: &OwnedFd, name: &str) -> Result<(), Errno> {
    remove_tree_c(
        parent,
        &std::ffi::CString::new(name).map_err(|_| Errno::INVAL)?,
    )
}

fn remove_tree_c(parent: &OwnedFd, name: &CStr) -> Result<(), Errno> {
    let fd = rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty())?;
    let mut children: Vec<(std::ffi::CString, FileType)> = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)? {
        let entry = entry?;
        let n = entry.file_name();
        if n == c"." || n == c".." {
            continue;
        }
        children.push((n.to_owned(), entry.file_type()));
    }
    for (child, t) in children {
        let t = if t == FileType::Unknown {
            FileType::from_raw_mode(
                rustix::fs::statat(&fd, child.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?.st_mode,
            )
        } else {
            t
        };
        if t == FileType::Directory {
            remove_tree_c(&fd, &child)?;
        } else {
            rustix::fs::unlinkat(&fd, child.as_c_str(), AtFlags::empty())?;
        }
    }
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)
}

/// A fresh name for a temporary file next to `name`.
fn temp_name(name: &str) -> String {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let pid = *PID.get_or_init(std::process::id);
    // At most 100 bytes of the name, so that the temporary name stays
    // within the 255 bytes a file name may have.
    let mut cut = name.len().min(100);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let stem = name[..cut].strip_prefix('.').unwrap_or(&name[..cut]);
    // No control character (a name a command made may hold a line feed):
    // a temporary name is shown in reports and noted in the journal.
    let stem: String = stem
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    format!(".{stem}.clada-{pid}-{n}.tmp")
}

/// Whether `name` is one of clada's temporary files.
pub(crate) fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".clada-")
}

fn errno_of(e: &std::io::Error) -> Errno {
    Errno::from_io_error(e).unwrap_or(Errno::IO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_onto_another_link_of_the_same_file_moves_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        std::fs::hard_link(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
        std::fs::hard_link(dir.path().join("a.txt"), dir.path().join("d/c.txt")).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let at = |p: &str| Location::below_root(&p.split('/').collect::<Vec<_>>());
        root.rename(&at("a.txt"), &at("b.txt")).unwrap();
        assert!(!dir.path().join("a.txt").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
            "a\n"
        );
        // In another directory too.
        root.rename(&at("b.txt"), &at("d/c.txt")).unwrap();
        assert!(!dir.path().join("b.txt").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("d/c.txt")).unwrap(),
            "a\n"
        );
        // A move onto itself keeps it.
        root.rename(&at("d/c.txt"), &at("d/c.txt")).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("d/c.txt")).unwrap(),
            "a\n"
        );
    }

    #[test]
    fn a_walk_over_thousands_of_directories_keeps_few_open() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..1100 {
            std::fs::create_dir_all(dir.path().join(format!("node_modules/p{i}/lib"))).unwrap();
        }
        let root = Root::open(dir.path()).unwrap();
        let at = Location::below_root(&["node_modules"]);
        root.check_takes_away(&at).unwrap();
        assert!(root.dirs.borrow().open <= MAX_OPEN_DIRS);
        root.remove(&at).unwrap();
        assert!(!dir.path().join("node_modules").exists());
        assert!(root.dirs.borrow().open <= MAX_OPEN_DIRS);
    }

    #[test]
    fn the_look_for_a_repository_below_stops_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("big/a/b")).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let at = Location::below_root(&["big"]);
        root.set_deadline(Some(std::time::Instant::now()));
        assert!(matches!(
            root.check_takes_away(&at),
            Err(FsError::TimedOut { .. })
        ));
        root.set_deadline(None);
        root.check_takes_away(&at).unwrap();
        // Looked through once until the tree changes: a command that makes
        // a repository below is followed by forget_dirs, as the engine
        // does after every command.
        std::fs::create_dir_all(dir.path().join("big/a/b/.git")).unwrap();
        root.check_takes_away(&at).unwrap();
        root.forget_dirs();
        assert!(matches!(
            root.check_takes_away(&at),
            Err(FsError::Protected { .. })
        ));
    }

    #[test]
    fn a_deep_path_is_walked_once_and_its_handles_stay_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let parts: Vec<String> = (0..1000).map(|i| format!("d{i}")).collect();
        let at = Location {
            anchor: crate::syntax::Anchor::Root,
            parts: parts.clone().into(),
        };
        let mut made = Vec::new();
        assert!(
            root.create_dirs(&at, &mut |n, m| {
                made.push((n, m));
                true
            })
            .unwrap()
        );
        assert_eq!(made.len(), 1000);
        assert!(made.iter().all(|(_, m)| *m));
        assert!(root.dirs.borrow().open <= MAX_OPEN_DIRS);
        // All there: 1,000 directories, and nothing after them.
        assert_eq!(root.dirs_along(&at, 0).0, 1000);
        let file = at.join("f");
        root.write(&file, b"x").unwrap();
        let (dirs, next) = root.dirs_along(&file, 0);
        assert_eq!((dirs, next.unwrap()), (1000, Some(Kind::File)));
        assert_eq!(root.read(&file).unwrap(), b"x");
        // Made again: nothing is made.
        let mut again = 0;
        root.forget_dirs();
        assert!(
            root.create_dirs(&at, &mut |_, m| {
                again += usize::from(m);
                true
            })
            .unwrap()
        );
        assert_eq!(again, 0);
        root.remove_empty_dirs(&at, 500);
        assert!(
            root.dirs_along(&at, 0).0 == 1000,
            "not empty: the file holds them"
        );
        root.remove(&file).unwrap();
        root.remove_empty_dirs(&at, 500);
        assert_eq!(root.dirs_along(&at, 0).0, 499);
    }
}
