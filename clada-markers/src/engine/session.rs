//! Writes held back until the end of a unit.
//!
//! Inside a unit, a file edited by several tasks is written once: each
//! task's write is checked and made ready at once (parents created, the
//! target checked, a temporary file created beside it), so every refusal is
//! reported against the task that caused it; the contents go to disk when
//! the unit ends, or before a move, a removal or a command needs the disk to
//! be current. Later tasks read what earlier ones wrote from here. Each file
//! still goes from its old content to its new one in a single rename.

use crate::engine::fs::{Files, FsError, Kind, Location, PreparedWrite, Root, Written};

/// A write made ready, waiting for the end of the unit.
#[derive(Debug)]
struct Staged {
    at: Location,
    contents: Vec<u8>,
    /// The last task that wrote it: a failure at the end is its failure.
    task: usize,
    write: PreparedWrite,
}

/// The root plus the writes of the unit being run.
#[derive(Debug)]
pub(crate) struct Session<'r> {
    root: &'r Root,
    staged: Vec<Staged>,
}

impl<'r> Session<'r> {
    pub(crate) fn new(root: &'r Root) -> Self {
        Session {
            root,
            staged: Vec::new(),
        }
    }

    pub(crate) fn root(&self) -> &'r Root {
        self.root
    }

    /// Checks that `at` can be written and keeps `contents` for it. Says
    /// whether the file exists (on disk or from an earlier staged write).
    pub(crate) fn stage(
        &mut self,
        at: Location,
        contents: Vec<u8>,
        task: usize,
    ) -> Result<Written, FsError> {
        if let Some(s) = self.staged.iter_mut().find(|s| s.at == at) {
            s.contents = contents;
            s.task = task;
            return Ok(Written::Replaced);
        }
        self.below_staged(&at)?;
        let write = self.root.prepare_write(&at)?;
        let written = if write.replaces() {
            Written::Replaced
        } else {
            Written::Created
        };
        self.staged.push(Staged {
            at,
            contents,
            task,
            write,
        });
        Ok(written)
    }

    /// Writes everything staged. Returns the failures, each with the task
    /// whose write it was.
    pub(crate) fn flush(&mut self) -> Vec<(usize, FsError)> {
        let mut failed = Vec::new();
        for s in self.staged.drain(..) {
            if let Err(e) = s.write.commit(&s.contents) {
                failed.push((s.task, e));
            }
        }
        failed
    }

    /// A staged file cannot hold other files.
    fn below_staged(&self, at: &Location) -> Result<(), FsError> {
        match self.staged.iter().find(|s| s.at.is_ancestor_of(at)) {
            Some(s) => Err(FsError::NotDirectory {
                path: s.at.display(),
            }),
            None => Ok(()),
        }
    }
}

impl Files for Session<'_> {
    fn read(&self, at: &Location) -> Result<Vec<u8>, FsError> {
        if let Some(s) = self.staged.iter().find(|s| s.at == *at) {
            return Ok(s.contents.clone());
        }
        self.below_staged(at)?;
        self.root.read(at)
    }

    fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
        if self.staged.iter().any(|s| s.at == *at) {
            return Ok(Some(Kind::File));
        }
        self.below_staged(at)?;
        self.root.kind(at)
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        self.root.check_lands(at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        self.root.check_takes_away(at)
    }
}
