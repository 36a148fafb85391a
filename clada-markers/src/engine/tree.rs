//! The tree as the engine and the built-in commands see it: what is at a
//! path ([`Kind`]), what a file holds ([`Content`]), what the file system
//! says of it ([`Meta`], [`Entry`]), why an access failed ([`FsError`]),
//! and the two traits every tree provides: [`Tree`] to read it and
//! [`TreeMut`] to change it.
//!
//! Two trees implement them: the root handle (`engine::fs::Root`),
//! which reaches the disk one component at a time, and a dry run's view
//! (`engine::view::View`), which keeps the run's changes in
//! memory. Everything above (planning, the built-in commands) is written
//! against these traits, never against either tree. This file imports
//! nothing of the layers above it: the syntax layer's [`Location`] and the
//! protocol's [`ErrorType`] only.

use std::io::Read;
use std::rc::Rc;

use rustix::fs::FileType;
use rustix::io::Errno;

use crate::error_type::ErrorType;
use crate::syntax::Location;

/// What is at a path, without following a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

impl Kind {
    pub(crate) fn of(t: FileType) -> Kind {
        match t {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        }
    }
}

/// Why a file system access failed. Paths are as the document wrote them,
/// resolved (`a/./b` is `a/b`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FsError {
    #[error("{path} does not exist")]
    NotFound { path: String },
    /// A symbolic link where the path must not have one.
    #[error("{path} is a symbolic link; clada does not read or write through links")]
    Symlink { path: String },
    #[error("{path} is a directory")]
    IsDirectory { path: String },
    /// A file (or other non-directory) where a directory is needed.
    #[error("{path} is not a directory")]
    NotDirectory { path: String },
    /// A device, socket or pipe: not something clada reads or writes.
    #[error("{path} is not a regular file")]
    NotRegular { path: String },
    /// The path leaves the root and `--allow-escape` was not given.
    #[error("{path} is outside the root")]
    Escape { path: String },
    /// More components than a path may have (PROTOCOL §5); `path` is
    /// abbreviated.
    #[error(
        "{path} has {components} components, more than the {max} a path may have; \
         name a path of at most {max} components",
        max = crate::syntax::MAX_PATH_COMPONENTS
    )]
    TooDeep { path: String, components: usize },
    /// The change would land in a protected place (PROTOCOL §5).
    #[error("{path} {why}, which documents never change")]
    Protected { path: String, why: &'static str },
    /// The file changed on disk after it was read (PROTOCOL §8
    /// `file_changed`): another writer's work is kept, this write is not
    /// made.
    #[error(
        "{path} changed on disk while the run was planning its edit; \
         nothing was written to it (run the edit again against the new contents)"
    )]
    Changed { path: String },
    /// A walk through `path` stopped at the run's time limit
    /// (`--total-timeout`, a built-in's limit): nothing was changed.
    #[error(
        "{path}: the time limit passed while clada was looking through it; nothing was changed"
    )]
    TimedOut { path: String },
    /// Any other refusal of the OS.
    #[error("cannot {op} {path}: {}", std::io::Error::from_raw_os_error(.errno.raw_os_error()))]
    Os {
        path: String,
        op: &'static str,
        #[source]
        errno: Errno,
    },
}

impl FsError {
    pub(crate) fn path(&self) -> &str {
        match self {
            FsError::NotFound { path }
            | FsError::Symlink { path }
            | FsError::IsDirectory { path }
            | FsError::NotDirectory { path }
            | FsError::NotRegular { path }
            | FsError::Escape { path }
            | FsError::TooDeep { path, .. }
            | FsError::Protected { path, .. }
            | FsError::Changed { path }
            | FsError::TimedOut { path }
            | FsError::Os { path, .. } => path,
        }
    }

    /// The same error about `path`: the argument as the user wrote it,
    /// or where a dry run has moved what is on disk.
    pub(crate) fn about(self, path: &str) -> FsError {
        let path = path.to_owned();
        match self {
            FsError::NotFound { .. } => FsError::NotFound { path },
            FsError::IsDirectory { .. } => FsError::IsDirectory { path },
            FsError::NotDirectory { .. } => FsError::NotDirectory { path },
            FsError::NotRegular { .. } => FsError::NotRegular { path },
            FsError::Os { op, errno, .. } => FsError::Os { path, op, errno },
            other => other,
        }
    }

    /// The protocol's error type of a task this error ends (PROTOCOL §8).
    pub(crate) fn error_type(&self) -> ErrorType {
        match self {
            FsError::NotFound { .. } => ErrorType::FileNotFound,
            FsError::Symlink { .. } => ErrorType::SymlinkNotAllowed,
            FsError::Escape { .. } | FsError::TooDeep { .. } | FsError::Protected { .. } => {
                ErrorType::PathEscape
            }
            FsError::Changed { .. } => ErrorType::FileChanged,
            FsError::TimedOut { .. } => ErrorType::ExecTimeout,
            FsError::Os { errno, .. } if *errno == Errno::NOENT => ErrorType::FileNotFound,
            FsError::IsDirectory { .. }
            | FsError::NotDirectory { .. }
            | FsError::NotRegular { .. }
            | FsError::Os { .. } => ErrorType::PermissionDenied,
        }
    }

    /// The OS error behind it, for `--error-detail debug`.
    pub(crate) fn os_detail(&self) -> Option<String> {
        match self {
            FsError::Os { op, errno, .. } => {
                Some(format!("{op}: {errno} (os error {})", errno.raw_os_error()))
            }
            _ => None,
        }
    }
}

/// A file's contents as the engine keeps them: text (checked as UTF-8
/// once) or bytes, shared until changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Content {
    Text(Rc<Text>),
    Bytes(Rc<Vec<u8>>),
}

/// A file's text, and whether it holds a CR at all (most files do not:
/// edits then skip looking for CRLF line breaks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Text {
    pub(crate) text: String,
    pub(crate) cr: bool,
}

impl Content {
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Content {
        match String::from_utf8(bytes) {
            Ok(text) => Content::text(text),
            Err(e) => Content::Bytes(Rc::new(e.into_bytes())),
        }
    }

    pub(crate) fn text(text: String) -> Content {
        let cr = memchr::memchr(b'\r', text.as_bytes()).is_some();
        Content::Text(Rc::new(Text { text, cr }))
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Content::Text(t) => t.text.as_bytes(),
            Content::Bytes(b) => b,
        }
    }
}

/// What the file system says of a file, a directory or a link itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) kind: Kind,
    pub(crate) size: u64,
    /// Permission bits and file type, as `st_mode`.
    pub(crate) mode: u32,
    pub(crate) nlink: u64,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) ino: u64,
    pub(crate) dev: u64,
    /// Seconds and nanoseconds since the epoch.
    pub(crate) modified: (i64, i64),
    pub(crate) accessed: (i64, i64),
    pub(crate) changed: (i64, i64),
}

impl Meta {
    /// What `st` says.
    pub(crate) fn of(st: &rustix::fs::Stat) -> Meta {
        Meta {
            kind: Kind::of(FileType::from_raw_mode(st.st_mode)),
            size: u64::try_from(st.st_size).unwrap_or(0),
            mode: st.st_mode,
            nlink: st.st_nlink,
            uid: st.st_uid,
            gid: st.st_gid,
            ino: st.st_ino,
            dev: st.st_dev,
            modified: (st.st_mtime, i64::try_from(st.st_mtime_nsec).unwrap_or(0)),
            accessed: (st.st_atime, i64::try_from(st.st_atime_nsec).unwrap_or(0)),
            changed: (st.st_ctime, i64::try_from(st.st_ctime_nsec).unwrap_or(0)),
        }
    }
}

impl Meta {
    /// What a dry run says of a file or directory the run would make:
    /// `size` bytes, made now by this user, with the system's usual
    /// permission bits (a file is written with them, PROTOCOL §3 WRITE).
    pub(crate) fn planned(kind: Kind, size: u64) -> Meta {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| {
                (
                    i64::try_from(d.as_secs()).unwrap_or(0),
                    i64::from(d.subsec_nanos()),
                )
            })
            .unwrap_or_default();
        let (mode, nlink) = match kind {
            Kind::Dir => (0o040_755, 2),
            _ => (0o100_644, 1),
        };
        Meta {
            kind,
            size,
            mode,
            nlink,
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            ino: 0,
            dev: 0,
            modified: now,
            accessed: now,
            changed: now,
        }
    }
}

/// One name in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The name; one that is not UTF-8 is shown with replacement
    /// characters and cannot be opened by it.
    pub(crate) name: String,
    pub(crate) kind: Kind,
}

/// Reading the tree: the root, or a dry run's view of what the run would
/// have made (PROTOCOL §7). Every method refuses a link the way the root
/// does, and none changes anything.
pub(crate) trait Tree {
    /// What is at `at`, without following a link; `None` when nothing is
    /// (nor is the directory it would be in).
    fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError>;
    /// The kind of what is at `at`, never following a link; `NotFound`
    /// when nothing is, about `at` or the first component on the way that
    /// is missing (as a built-in command reports it).
    fn found(&self, at: &Location) -> Result<Kind, FsError> {
        self.kind(at)?
            .ok_or_else(|| FsError::NotFound { path: at.display() })
    }
    /// The bytes of the file at `at`.
    fn read(&self, at: &Location) -> Result<Vec<u8>, FsError>;
    /// The contents of the file at `at`, shared where they are kept.
    fn contents(&self, at: &Location) -> Result<Content, FsError> {
        self.read(at).map(Content::from_bytes)
    }
    /// Opens the file `at` for reading, as it comes.
    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError>;
    /// The names in the directory `at`, in byte order.
    fn names(&self, at: &Location) -> Result<Vec<String>, FsError> {
        Ok(self.list(at)?.into_iter().map(|e| e.name).collect())
    }
    /// The entries of the directory `at`, in byte order of their names,
    /// with their kinds.
    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError>;
    /// The metadata of what is at `at`, never following a link.
    fn metadata(&self, at: &Location) -> Result<Meta, FsError>;
    /// The target of the link at `at`, as text.
    fn read_link(&self, at: &Location) -> Result<String, FsError>;
    /// That no link is at `at` (what is missing is no link).
    fn check_no_links(&self, at: &Location) -> Result<(), FsError> {
        if at.parts().is_empty() {
            return Ok(());
        }
        match self.found(at) {
            Ok(Kind::Symlink) => Err(FsError::Symlink { path: at.display() }),
            Ok(_) | Err(FsError::NotFound { .. } | FsError::NotDirectory { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
    /// That `at` is a directory a command may work in (no link on the way).
    fn check_dir(&self, at: &Location) -> Result<(), FsError>;
    /// That a change may land at `at`: refuses a protected place
    /// (PROTOCOL §5), after a target directory was joined.
    fn check_lands(&self, at: &Location) -> Result<(), FsError>;
    /// That what is at `at` may be moved, copied or removed: refuses a
    /// directory with a `.git` below it, or clada's own directories.
    fn check_takes_away(&self, at: &Location) -> Result<(), FsError>;
}

/// Changing the tree: the built-in commands that change it (`mkdir touch
/// rm mv cp`) do so through these, on the disk or, in a dry run, on the
/// view, so that the tasks after them see their effect.
pub(crate) trait TreeMut: Tree {
    /// Makes the directory `at`; `Ok(false)` when one is there already.
    fn create_dir(&self, at: &Location) -> Result<bool, FsError>;
    /// Makes the directory `at` and its missing parents, in one walk down
    /// it: `step` hears each directory on the way (its number of
    /// components, and whether it was made) and may stop the walk by
    /// returning `false` (then `Ok(false)`).
    fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError>;
    /// Replaces or creates the file `at`, atomically.
    fn write(&self, at: &Location, data: &[u8]) -> Result<(), FsError>;
    /// Copies the file `from` to `to` without reading it here, when the
    /// tree can, and says how many bytes it copied: `None` when it cannot
    /// (read and write it then).
    fn copy_file(&self, _from: &Location, _to: &Location) -> Option<Result<u64, FsError>> {
        None
    }
    /// Removes what is at `at` (a directory with all it holds).
    fn remove(&self, at: &Location) -> Result<(), FsError>;
    /// Moves what is at `from` to `to`.
    fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError>;
    /// Sets the access and modification times of what is at `at` to now
    /// (those asked for).
    fn touch(&self, at: &Location, access: bool, modify: bool) -> Result<(), FsError>;
}
