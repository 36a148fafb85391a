//! One run back (`clada undo`, PROTOCOL §7.5): what a run needs to be
//! taken back, kept in clada's state directory (outside every tree, as the
//! approvals are), and taking it back.
//!
//! With git, a run is taken back by a commit that reverts its commit after
//! the tasks, refused when a later commit touched the same files or they
//! have uncommitted changes. Without git, by the contents the run replaced,
//! noted before each batch of units changed them ([`Capture`]): at most
//! [`MAX_BYTES`] and [`MAX_FILES`], else the run cannot be undone and says
//! so. Either way, a path changed since the run is never overwritten:
//! undo refuses, naming it. Only the last run is kept; undoing it forgets
//! it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::dirs::{Dirs, file_key};
use crate::engine::fs::{Root, locate};
use crate::engine::git::{Author, Touch, WorkTree};
use crate::engine::tree::{Kind, Tree};
use crate::syntax::{Anchor, Location};

/// The most bytes of replaced contents a run keeps for its undo.
pub(crate) const MAX_BYTES: usize = 64 << 20;
/// The most paths a run keeps for its undo.
pub(crate) const MAX_FILES: usize = 10_000;

/// What a path held before the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Before {
    Absent,
    Dir,
    /// A file; its bytes are kept beside the record, as `blob`.
    File {
        blob: usize,
    },
}

/// What a path held after the run, to tell a later change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum After {
    Absent,
    Dir,
    File { sha1: String },
    Link { target: String },
    Other,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Saved {
    path: String,
    before: Before,
    after: After,
}

/// The last run of a root, as kept for its undo.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum How {
    /// Its commit after the tasks, and what it replaced (for the untracked
    /// files it overwrote, which no commit holds).
    Git { commit: String, files: Vec<Saved> },
    /// What it replaced.
    Files { files: Vec<Saved> },
    /// Why it cannot be undone.
    Unavailable { why: String },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Record {
    root: PathBuf,
    how: How,
}

/// The contents a run is about to replace, noted before each batch of
/// units changes them (without git).
#[derive(Debug, Default)]
pub(crate) struct Capture {
    entries: Vec<(Location, Before)>,
    blobs: Vec<Vec<u8>>,
    seen: HashSet<Location>,
    bytes: usize,
    over: Option<String>,
}

impl Capture {
    /// Notes what `touched` (root-relative paths) hold now, once each; a
    /// directory with everything below it.
    pub(crate) fn note(&mut self, root: &Root, touched: &[Touch]) {
        for t in touched {
            let path = match t {
                Touch::File(p)
                | Touch::Tracked(p)
                | Touch::Forget(p)
                | Touch::Moved { from: p, .. } => p,
            };
            if let Ok(at) = locate(path, false) {
                self.path(root, &at);
            }
        }
    }

    fn path(&mut self, root: &Root, at: &Location) {
        if self.over.is_some() || at.anchor != Anchor::Root || at.is_root() {
            return;
        }
        if !self.seen.insert(at.clone()) {
            return;
        }
        if self.entries.len() >= MAX_FILES {
            self.over = Some(format!("the run changed more than {MAX_FILES} paths"));
            return;
        }
        let before = match root.kind(at) {
            Ok(None) => {
                // The directories a task makes on the way are the run's too.
                if let Some(parent) = at.parent() {
                    self.path(root, &parent);
                }
                Before::Absent
            }
            Ok(Some(Kind::File)) => match root.read(at) {
                Ok(bytes) => {
                    self.bytes += bytes.len();
                    if self.bytes > MAX_BYTES {
                        self.over = Some(format!(
                            "the run replaced more than {} MiB",
                            MAX_BYTES >> 20
                        ));
                        return;
                    }
                    self.blobs.push(bytes);
                    Before::File {
                        blob: self.blobs.len() - 1,
                    }
                }
                Err(e) => {
                    self.over = Some(format!("{e}"));
                    return;
                }
            },
            Ok(Some(Kind::Dir)) => {
                self.entries.push((at.clone(), Before::Dir));
                match root.list(at) {
                    Ok(entries) => {
                        for e in entries {
                            self.path(root, &at.join(&e.name));
                        }
                    }
                    Err(e) => self.over = Some(format!("{e}")),
                }
                return;
            }
            Ok(Some(Kind::Symlink | Kind::Other)) => {
                self.over = Some(format!(
                    "{} is a link or a special file, which undo does not keep",
                    at.display()
                ));
                return;
            }
            Err(e) => {
                self.over = Some(format!("{e}"));
                return;
            }
        };
        self.entries.push((at.clone(), before));
    }
}

/// What is at `at` now, to tell a later change.
fn after_of(root: &Root, at: &Location) -> After {
    match root.kind(at) {
        Ok(None) => After::Absent,
        Ok(Some(Kind::Dir)) => After::Dir,
        Ok(Some(Kind::File)) => match root.read(at) {
            Ok(bytes) => After::File {
                sha1: sha1_smol::Sha1::from(&bytes).digest().to_string(),
            },
            Err(_) => After::Other,
        },
        Ok(Some(Kind::Symlink)) => root
            .read_link(at)
            .map_or(After::Other, |target| After::Link { target }),
        Ok(Some(Kind::Other)) | Err(_) => After::Other,
    }
}

/// Where the record of `root`'s last run is kept.
fn place(dirs: &Dirs, root: &Path) -> PathBuf {
    dirs.state
        .join("undo")
        .join(file_key(root.as_os_str().as_encoded_bytes()))
}

/// Keeps what takes back a run on `root_path` (canonical): its commit
/// after the tasks, or the contents it replaced. Replaces the record of the
/// run before. Returns what the report says of it: how to undo the run, or
/// why it cannot be.
pub(crate) fn keep(
    dirs: &Dirs,
    root_path: &Path,
    root: &Root,
    commit: Option<&str>,
    capture: Option<Capture>,
) -> std::io::Result<()> {
    let saved = |c: &Capture| -> Vec<Saved> {
        c.entries
            .iter()
            .map(|(at, before)| Saved {
                path: at.display(),
                before: before.clone(),
                after: after_of(root, at),
            })
            .collect()
    };
    let (how, blobs) = match (commit, capture) {
        (Some(c), Some(capture)) if capture.over.is_none() => (
            How::Git {
                commit: c.to_owned(),
                files: saved(&capture),
            },
            capture.blobs,
        ),
        (Some(c), _) => (
            How::Git {
                commit: c.to_owned(),
                files: Vec::new(),
            },
            Vec::new(),
        ),
        (
            None,
            Some(Capture {
                over: Some(why), ..
            }),
        ) => (How::Unavailable { why }, Vec::new()),
        (None, Some(c)) => (How::Files { files: saved(&c) }, c.blobs),
        (None, None) => return Ok(()),
    };
    let record = Record {
        root: root_path.to_path_buf(),
        how,
    };
    let undo = dirs.state.join("undo");
    Dirs::ensure(&undo)?;
    let dir = place(dirs, root_path);
    // Written whole beside it, then renamed in: never half a record.
    let temp = undo.join(format!(".{}.tmp", std::process::id()));
    let _ = std::fs::remove_dir_all(&temp);
    std::fs::create_dir(&temp)?;
    for (i, blob) in blobs.iter().enumerate() {
        std::fs::write(temp.join(i.to_string()), blob)?;
    }
    let json = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
    std::fs::write(temp.join("record.json"), json)?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&temp, &dir)
}

/// Why a run could not be undone.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error(
        "nothing to undo: no run of clada is recorded for {0} (only the last run is kept, and undo forgets it)"
    )]
    Nothing(String),
    #[error("the last run cannot be undone: {0}")]
    Unavailable(String),
    #[error(
        "{path} changed since the run; nothing was undone (undo it by hand, or put it back first)"
    )]
    Changed { path: String },
    #[error("{0}; nothing was undone")]
    Refused(String),
    #[error("cannot read the record of the last run: {0}")]
    Io(#[from] std::io::Error),
}

/// What an undo did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Undone {
    /// The paths put back as they were before the run.
    pub restored: Vec<String>,
    /// The commit that reverts the run's, with git.
    pub commit: Option<String>,
}

/// Takes back the last run on `root` (`root_path`, canonical).
pub(crate) fn undo(
    dirs: &Dirs,
    root_path: &Path,
    root: &Root,
    tree: Option<&WorkTree>,
    author: &Author,
) -> Result<Undone, UndoError> {
    let dir = place(dirs, root_path);
    let json = match std::fs::read(dir.join("record.json")) {
        Ok(json) => json,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UndoError::Nothing(root_path.display().to_string()));
        }
        Err(e) => return Err(e.into()),
    };
    let record: Record = serde_json::from_slice(&json).map_err(std::io::Error::other)?;
    if record.root != root_path {
        return Err(UndoError::Nothing(root_path.display().to_string()));
    }
    let done = match record.how {
        How::Unavailable { why } => return Err(UndoError::Unavailable(why)),
        How::Git { commit, files } => {
            let Some(tree) = tree else {
                return Err(UndoError::Refused(format!(
                    "the last run was committed as {commit}, but the root is no longer in its work tree"
                )));
            };
            let before = |path: &str| -> Option<Vec<u8>> {
                let blob = files.iter().find_map(|f| match f.before {
                    Before::File { blob } if f.path == path => Some(blob),
                    _ => None,
                })?;
                std::fs::read(dir.join(blob.to_string())).ok()
            };
            let (commit, restored) = tree
                .revert(&commit, root, author, &before)
                .map_err(UndoError::Refused)?;
            Undone {
                restored,
                commit: Some(commit),
            }
        }
        How::Files { files } => restore(&dir, root, &files)?,
    };
    let _ = std::fs::remove_dir_all(&dir);
    Ok(done)
}

/// Puts `files` back as they were before the run, after checking that
/// each is as the run left it.
fn restore(dir: &Path, root: &Root, files: &[Saved]) -> Result<Undone, UndoError> {
    let mut places = Vec::with_capacity(files.len());
    for f in files {
        let at = locate(&f.path, false)
            .ok()
            .filter(|at| at.anchor == Anchor::Root && !at.is_root())
            .ok_or_else(|| {
                UndoError::Refused(format!("{} is not a path below the root", f.path))
            })?;
        if after_of(root, &at) != f.after {
            return Err(UndoError::Changed {
                path: f.path.clone(),
            });
        }
        places.push(at);
    }
    let fail = |e: crate::engine::tree::FsError| UndoError::Refused(e.to_string());
    let mut restored = Vec::new();
    // What stands where something else was is removed, deepest first;
    // then directories are made and files written back, parents first.
    for (f, at) in files.iter().zip(&places).rev() {
        let differs = !matches!(
            (&f.before, &f.after),
            (_, After::Absent)
                | (Before::Dir, After::Dir)
                | (Before::File { .. }, After::File { .. })
        );
        if differs {
            match root.remove(at) {
                Ok(()) | Err(crate::engine::tree::FsError::NotFound { .. }) => {}
                Err(e) => return Err(fail(e)),
            }
            restored.push(f.path.clone());
        }
    }
    for (f, at) in files.iter().zip(&places) {
        match &f.before {
            Before::Absent => {}
            Before::Dir => {
                if f.after != After::Dir {
                    root.make_dirs(at).map_err(fail)?;
                    restored.push(f.path.clone());
                }
            }
            Before::File { blob } => {
                let bytes = std::fs::read(dir.join(blob.to_string()))?;
                let same = matches!(&f.after, After::File { sha1 }
                    if *sha1 == sha1_smol::Sha1::from(&bytes).digest().to_string());
                if !same {
                    root.write(at, &bytes).map_err(fail)?;
                    restored.push(f.path.clone());
                }
            }
        }
    }
    restored.sort();
    restored.dedup();
    Ok(Undone {
        restored,
        commit: None,
    })
}
