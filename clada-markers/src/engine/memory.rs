//! A tree held in memory: what the root stands on when a document is
//! applied to a map of files ([`crate::apply_files`]) rather than to a
//! directory.
//!
//! The root (`engine::fs::Root`) keeps every rule of the engine (what a
//! path may name, what may be taken away, how a write is made ready and
//! then committed), and asks this tree instead of the disk when it was
//! made over one: every task runs the same code on disk and in memory.
//! The tree holds files (bytes) and directories, keyed by their
//! components below the root; nothing lies above the root (a path that
//! leaves it is `path_escape`, `--allow-escape` or not), and there are no
//! symbolic links, devices, permissions or times.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::rc::Rc;

use rustix::io::Errno;

use super::tree::{Entry, FsError, Kind};
use crate::syntax::{Anchor, Location};

/// What is at one path of the tree.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A file's bytes, and the number it was written under: a file
    /// written again has another (what stands for the disk's inode and
    /// times in a stamp).
    File {
        bytes: Rc<Vec<u8>>,
        id: u64,
    },
    Dir,
}

/// The tree: every file and directory below the root, by components.
/// The descendants of a path follow it directly in the map's order.
#[derive(Debug, Default)]
pub(crate) struct MemoryTree {
    nodes: RefCell<BTreeMap<Vec<String>, Node>>,
    next_id: Cell<u64>,
}

type Key = Vec<String>;

impl MemoryTree {
    /// A tree of `files` (components and bytes); the directories they
    /// lie in are made too.
    pub(crate) fn of(files: impl IntoIterator<Item = (Vec<String>, Vec<u8>)>) -> MemoryTree {
        let tree = MemoryTree::default();
        {
            let mut nodes = tree.nodes.borrow_mut();
            for (parts, bytes) in files {
                for n in 1..parts.len() {
                    nodes.entry(parts[..n].to_vec()).or_insert(Node::Dir);
                }
                let id = tree.fresh();
                nodes.insert(
                    parts,
                    Node::File {
                        bytes: Rc::new(bytes),
                        id,
                    },
                );
            }
        }
        tree
    }

    /// Every file of the tree, by its path (`a/b.txt`), in byte order of
    /// its components; directories are implied.
    pub(crate) fn files(&self) -> Vec<(String, Vec<u8>)> {
        self.nodes
            .borrow()
            .iter()
            .filter_map(|(k, n)| match n {
                Node::File { bytes, .. } => Some((k.join("/"), bytes.to_vec())),
                Node::Dir => None,
            })
            .collect()
    }

    fn fresh(&self) -> u64 {
        let id = self.next_id.get() + 1;
        self.next_id.set(id);
        id
    }

    /// The components of `at`, which must lie below the root.
    fn key(at: &Location) -> Result<&[String], FsError> {
        match at.anchor {
            Anchor::Root => Ok(&at.parts),
            Anchor::Up(_) | Anchor::Slash => Err(FsError::Escape { path: at.display() }),
        }
    }

    /// That the first `upto` components of `at` are directories, as the
    /// root's walk down them says it: the first missing is `NotFound`,
    /// the first that is a file `NotDirectory`.
    pub(crate) fn walk(&self, at: &Location, upto: usize) -> Result<(), FsError> {
        let parts = Self::key(at)?;
        let nodes = self.nodes.borrow();
        for n in 1..=upto.min(parts.len()) {
            match nodes.get(&parts[..n]) {
                None => return Err(FsError::NotFound { path: at.prefix(n) }),
                Some(Node::Dir) => {}
                Some(Node::File { .. }) => {
                    return Err(FsError::NotDirectory { path: at.prefix(n) });
                }
            }
        }
        Ok(())
    }

    /// Makes the missing directories among the first `upto` components of
    /// `at`; `step` hears each (its number of components and whether it
    /// was made) and may stop the walk.
    pub(crate) fn make(
        &self,
        at: &Location,
        upto: usize,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        let parts = Self::key(at)?;
        for n in 1..=upto.min(parts.len()) {
            let made = {
                let mut nodes = self.nodes.borrow_mut();
                match nodes.get(&parts[..n]) {
                    None => {
                        nodes.insert(parts[..n].to_vec(), Node::Dir);
                        true
                    }
                    Some(Node::Dir) => false,
                    Some(Node::File { .. }) => {
                        return Err(FsError::NotDirectory { path: at.prefix(n) });
                    }
                }
            };
            if !step(n, made) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// What is at `at` (its parent must be there): `None` when nothing.
    pub(crate) fn node(&self, at: &Location) -> Result<Option<Node>, FsError> {
        let parts = Self::key(at)?;
        if parts.is_empty() {
            return Ok(Some(Node::Dir));
        }
        self.walk(at, parts.len() - 1)?;
        Ok(self.nodes.borrow().get(parts).cloned())
    }

    /// What kind of thing is at `at`; `None` when nothing is, nor the
    /// directory it would be in.
    pub(crate) fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
        match self.node(at) {
            Ok(n) => Ok(n.map(|n| match n {
                Node::File { .. } => Kind::File,
                Node::Dir => Kind::Dir,
            })),
            Err(FsError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The file at `at`: its bytes and id.
    pub(crate) fn file(&self, at: &Location) -> Result<(Rc<Vec<u8>>, u64), FsError> {
        match self.node(at)? {
            Some(Node::File { bytes, id }) => Ok((bytes, id)),
            Some(Node::Dir) => Err(FsError::IsDirectory { path: at.display() }),
            None => Err(FsError::NotFound { path: at.display() }),
        }
    }

    /// Puts `bytes` at `at` (its parent is there), under a fresh id.
    pub(crate) fn put(&self, at: &Location, bytes: &[u8]) -> Result<(), FsError> {
        let parts = Self::key(at)?.to_vec();
        let id = self.fresh();
        self.nodes.borrow_mut().insert(
            parts,
            Node::File {
                bytes: Rc::new(bytes.to_vec()),
                id,
            },
        );
        Ok(())
    }

    /// Makes the directory `at`, whose parent must be there; `Ok(false)`
    /// when one is there already.
    pub(crate) fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        match self.node(at)? {
            None => {
                self.nodes
                    .borrow_mut()
                    .insert(Self::key(at)?.to_vec(), Node::Dir);
                Ok(true)
            }
            Some(Node::Dir) => Ok(false),
            Some(Node::File { .. }) => Err(FsError::NotDirectory { path: at.display() }),
        }
    }

    /// The keys of `parts` and everything below it, in order.
    fn subtree(nodes: &BTreeMap<Key, Node>, parts: &[String]) -> Vec<Key> {
        nodes
            .range::<[String], _>((Bound::Included(parts), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(parts))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Whether the directory `parts` holds anything.
    fn holds(nodes: &BTreeMap<Key, Node>, parts: &[String]) -> bool {
        nodes
            .range::<[String], _>((Bound::Excluded(parts), Bound::Unbounded))
            .next()
            .is_some_and(|(k, _)| k.starts_with(parts))
    }

    /// The entries of the directory `at`, in byte order of their names.
    pub(crate) fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        let parts = Self::key(at)?;
        self.walk(at, parts.len())?;
        let nodes = self.nodes.borrow();
        let mut entries: Vec<Entry> = nodes
            .range::<[String], _>((Bound::Excluded(parts), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(parts))
            .filter(|(k, _)| k.len() == parts.len() + 1)
            .map(|(k, n)| Entry {
                name: k[parts.len()].clone(),
                kind: match n {
                    Node::File { .. } => Kind::File,
                    Node::Dir => Kind::Dir,
                },
            })
            .collect();
        entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        Ok(entries)
    }

    /// Removes what is at `at` and everything below it.
    pub(crate) fn remove(&self, at: &Location) -> Result<(), FsError> {
        if self.node(at)?.is_none() {
            return Err(FsError::NotFound { path: at.display() });
        }
        let parts = Self::key(at)?;
        let mut nodes = self.nodes.borrow_mut();
        for k in Self::subtree(&nodes, parts) {
            nodes.remove(&k);
        }
        Ok(())
    }

    /// Whether anything below the directory `at` is named `.git`.
    pub(crate) fn holds_repository(&self, at: &Location) -> Result<bool, FsError> {
        let parts = Self::key(at)?;
        let nodes = self.nodes.borrow();
        Ok(nodes
            .range::<[String], _>((Bound::Excluded(parts), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(parts))
            .any(|(k, _)| k[parts.len()..].iter().any(|p| p == ".git")))
    }

    /// Moves what is at `from` (and what it holds) to `to`, whose parent
    /// is there, as rename(2) would: a file replaces a file, a directory
    /// an empty directory; anything else is refused.
    pub(crate) fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        let os = |errno| FsError::Os {
            path: format!("{} to {}", from.display(), to.display()),
            op: "move",
            errno,
        };
        let Some(what) = self.node(from)? else {
            return Err(FsError::NotFound {
                path: from.display(),
            });
        };
        let there = self.node(to)?;
        let (f, t) = (Self::key(from)?, Self::key(to)?);
        if f == t {
            return Ok(());
        }
        if f.is_empty() || t.starts_with(f) {
            return Err(os(Errno::INVAL));
        }
        let mut nodes = self.nodes.borrow_mut();
        match (&what, &there) {
            (_, None) | (Node::File { .. }, Some(Node::File { .. })) => {}
            (Node::Dir, Some(Node::Dir)) if !Self::holds(&nodes, t) => {}
            (Node::Dir, Some(Node::Dir)) => return Err(os(Errno::NOTEMPTY)),
            (Node::File { .. }, Some(Node::Dir)) => return Err(os(Errno::ISDIR)),
            (Node::Dir, Some(Node::File { .. })) => return Err(os(Errno::NOTDIR)),
        }
        nodes.remove(t);
        for k in Self::subtree(&nodes, f) {
            if let Some(n) = nodes.remove(&k) {
                let mut moved = t.to_vec();
                moved.extend_from_slice(&k[f.len()..]);
                nodes.insert(moved, n);
            }
        }
        Ok(())
    }

    /// A copy of the file at `from` at `to` (beside it), under the same
    /// id: a second link to one file.
    pub(crate) fn link(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        let (bytes, id) = self.file(from)?;
        self.nodes
            .borrow_mut()
            .insert(Self::key(to)?.to_vec(), Node::File { bytes, id });
        Ok(())
    }

    /// Removes the empty directories among the components of `at` from
    /// the `from`-th (counting from 1) on, deepest first; returns the
    /// deepest that stays because something is in it.
    pub(crate) fn remove_empty_dirs(&self, at: &Location, from: usize) -> Option<Location> {
        if from == 0 {
            return None;
        }
        let parts = Self::key(at).ok()?;
        let mut nodes = self.nodes.borrow_mut();
        let mut last = from;
        for n in from..=parts.len() {
            last = n;
            if !matches!(nodes.get(&parts[..n]), Some(Node::Dir)) {
                break;
            }
        }
        for n in (from..=last).rev() {
            match nodes.get(&parts[..n]) {
                None => {}
                Some(Node::File { .. }) => return None,
                Some(Node::Dir) if Self::holds(&nodes, &parts[..n]) => {
                    return Some(at.truncated(n));
                }
                Some(Node::Dir) => {
                    nodes.remove(&parts[..n]);
                }
            }
        }
        None
    }

    /// How many of the components of `at` after its first `from` are
    /// directories, one after the other, and what the next one is.
    pub(crate) fn dirs_along(
        &self,
        at: &Location,
        from: usize,
    ) -> (usize, Result<Option<Kind>, FsError>) {
        match self.walk(at, from) {
            Ok(()) => {}
            Err(FsError::NotFound { .. }) => return (from, Ok(None)),
            Err(e) => return (from, Err(e)),
        }
        let nodes = self.nodes.borrow();
        let mut n = from;
        loop {
            if n >= at.parts.len() {
                return (n, Ok(None));
            }
            match nodes.get(&at.parts[..=n]) {
                Some(Node::Dir) => n += 1,
                Some(Node::File { .. }) => return (n, Ok(Some(Kind::File))),
                None => return (n, Ok(None)),
            }
        }
    }

    /// A number that changes when what is at `at` (or below it) does.
    pub(crate) fn fingerprint(&self, at: &Location) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        let parts = Self::key(at).ok()?;
        let nodes = self.nodes.borrow();
        nodes.get(parts)?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (k, n) in nodes
            .range::<[String], _>((Bound::Included(parts), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(parts))
        {
            k.hash(&mut h);
            match n {
                Node::File { id, .. } => id.hash(&mut h),
                Node::Dir => u64::MAX.hash(&mut h),
            }
        }
        Some(h.finish())
    }
}
