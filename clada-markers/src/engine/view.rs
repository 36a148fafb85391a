//! The tree as a run sees it (PROTOCOL §7): files read once, changes kept
//! in memory, each changed file written once.
//!
//! Every task plans and changes against the view. A file is read from disk
//! the first time a task needs it; writes and edits change its bytes in
//! memory (an edit is a splice in place); moves and removals change what
//! the view says is where, and are noted as steps to carry out on disk in
//! order. [`View::flush`] carries out the steps, then writes each changed
//! file once, atomically, and only if it is still on disk as it was read
//! (else `file_changed`: another writer's work is never lost). The engine
//! flushes at the end of the run and before each command, which may look at
//! the files; after a flush the view is empty and reads the disk afresh.
//!
//! A dry run never flushes: the view is the outcome ([`View::changes`]).
//!
//! [`View::begin`] opens a transaction: until [`View::commit`] or
//! [`View::rollback`], every change to the view is undoable, and so is
//! every flush (files replaced keep their old contents under a temporary
//! name, removed ones are set aside instead of deleted). Begin on a view
//! with nothing pending.
//!
//! Paths in the view are the paths of the tree as the tasks see it. Each
//! entry that came from disk remembers its origin, where it still is on
//! disk, so that what was moved can be read before anything is carried
//! out. The entries are kept as a tree of names ([`PathMap`]): a path is
//! looked up, and its missing parents made, in one walk of its
//! components, and a moved directory takes what the view holds below it
//! along as one piece. A transaction keeps how to undo each change, not
//! a copy of what it changed.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::rc::Rc;

use crate::engine::diff::{self, Diff};
use crate::engine::editing::{self, Answer, Editing, Splice};
use crate::engine::fingerprint::Fingerprint;
use crate::engine::fs::{PutBack, Root, Stamp, Written};
use crate::engine::matching::{HINT_BUDGET, HintBudget};
use crate::engine::outcome::{By, Kept, KeptWhy};
use crate::engine::paths::{Below, Live, PathMap, Visit};
use crate::engine::plan;
use crate::engine::seek::MIN_PIVOT;
use crate::engine::seek::Search;
use crate::engine::task_error::TaskError;
use crate::engine::tree::{Content, Entry, FsError, Kind, Meta, Tree, TreeMut};
use crate::syntax::Anchor;
use crate::syntax::BOM;
use crate::syntax::Location;

#[derive(Clone, Debug)]
enum Node {
    /// Boxed: the view holds an entry for every path a run touched, and
    /// most are not files with contents (a removal leaves `Absent`).
    File(Box<FileNode>),
    /// A directory: the one on disk at `origin`, or a new one.
    Dir { origin: Option<Location> },
    /// A link or a special file on disk: moved or removed as itself.
    Other { origin: Location, kind: Kind },
    /// Nothing is here (removed or moved away): on disk, nothing will be.
    Absent,
}

#[derive(Clone, Debug)]
struct FileNode {
    /// Where the file is on disk now, if it came from there.
    origin: Option<Location>,
    /// What will be on disk where this file is when its contents are
    /// written: that file's stamp, or nothing. The write happens only if
    /// the disk still says so.
    present: Option<Stamp>,
    /// The contents; `None` until read, or while `edits` holds them.
    data: Option<Content>,
    /// The contents while edits are made on them in chunks, with an index
    /// of the coming edits' search texts ([`editing`]); `data` is then
    /// `None` or the same text.
    edits: Option<Box<Editing>>,
    /// Changed in the view: to be written.
    dirty: bool,
    /// The tasks whose changes the contents carry.
    by: Vec<By>,
    /// The transaction that noted how to undo changes of this file
    /// ([`State::serial`]): once is enough.
    saved: u64,
}

impl Live for Node {
    fn live(&self) -> bool {
        !matches!(self, Node::Absent)
    }
}

impl FileNode {
    /// Whether the disk has a file here when the steps have been carried
    /// out, before the contents are written.
    fn on_disk(&self) -> bool {
        self.present.is_some()
    }

    /// The contents as one text, made from the edits if need be.
    fn contents(&self) -> Option<Content> {
        match (&self.data, &self.edits) {
            (Some(data), _) => Some(data.clone()),
            (None, Some(edits)) => Some(Content::text(edits.text())),
            (None, None) => None,
        }
    }
}

/// The search texts of the edits to come (a batch of units read ahead),
/// by the file they edit: the index of a file's [`Editing`] is built for
/// them, in one pass over the file.
#[derive(Debug, Default)]
struct Expected {
    /// Which batch this is.
    generation: u64,
    by_file: HashMap<Location, Coming>,
}

/// The edits to come of one file.
#[derive(Debug, Default)]
struct Coming {
    edits: usize,
    /// The search texts' keys.
    keys: HashSet<Box<[u8]>>,
    /// The replacements' keys, to tell an edit whose search text is
    /// missing whether it was applied before: indexed only once an edit
    /// of the batch misses, so that edits that all apply pay nothing for
    /// them.
    replacements: HashSet<Box<[u8]>>,
    /// The first non-blank lines of the search texts and replacements,
    /// for the white-space tier: indexed only once an edit of the batch
    /// needs them (one that does not occur as written), so that edits
    /// that all occur as written pay nothing for them.
    pivots: HashSet<Box<[u8]>>,
}

/// A change of the tree's shape, carried out on disk in order.
#[derive(Clone, Debug)]
enum Step {
    Mkdir {
        at: Location,
        by: By,
    },
    Rename {
        from: Location,
        to: Location,
        by: By,
    },
    Remove {
        at: Location,
        by: By,
    },
}

/// How to undo what a flush did on disk, and the tasks whose change it
/// was.
#[derive(Debug)]
enum Undo {
    /// The directories of the first components of `at` from the
    /// `from`-th on were made: removed again if still empty.
    Made { at: Location, from: usize, by: By },
    Renamed {
        from: Location,
        to: Location,
        by: By,
        /// The first command that changed what was moved, after the move
        /// ([`View::after_command`]): then it stays where it is.
        changed: Option<By>,
    },
    /// Something moved out of the way to a temporary name.
    SetAside {
        at: Location,
        aside: Location,
        by: By,
    },
    /// A file written; `kept` holds its old contents (a hard link), and
    /// `stamp` is what was written.
    Wrote {
        at: Location,
        kept: Option<Location>,
        stamp: Option<Stamp>,
        by: Vec<By>,
    },
}

impl Undo {
    /// Moves the paths at or below `from` to the same places below `to`.
    fn relocate(&mut self, from: &Location, to: &Location) {
        let paths: Vec<&mut Location> = match self {
            Undo::Made { at, from: made, .. } if at == from || from.is_ancestor_of(at) => {
                let depth = from.parts().len();
                if *made > depth {
                    // All made below what moved: they moved with it.
                    *made = *made - depth + to.parts().len();
                    vec![at]
                } else {
                    // What moved was made here, or below one made here:
                    // those above it stay (the ones below moved, and stay
                    // as the command left them).
                    *at = at.truncated(depth - 1);
                    return;
                }
            }
            Undo::Made { at, .. } => vec![at],
            Undo::Renamed { from: f, to: t, .. } => vec![f, t],
            Undo::SetAside { at, aside, .. } => vec![at, aside],
            Undo::Wrote { at, kept, .. } => std::iter::once(at).chain(kept.as_mut()).collect(),
        };
        for p in paths {
            relocate(std::slice::from_mut(p), from, to);
        }
    }

    /// Whether it acts below `dir` (its place is gone with `dir`).
    fn below(&self, dir: &Location) -> bool {
        let at = match self {
            Undo::Made { at, .. } | Undo::SetAside { at, .. } | Undo::Wrote { at, .. } => at,
            Undo::Renamed { to, .. } => to,
        };
        dir.is_ancestor_of(at)
    }
}

/// What a rollback left as a command made it, and what it could not undo
/// ([`View::rollback`]).
#[derive(Debug, Default)]
pub(crate) struct Undone {
    pub(crate) kept: Vec<Kept>,
    pub(crate) problems: Vec<String>,
}

#[derive(Debug, Default)]
struct Tx {
    /// How to undo each change of the view, in order.
    undo: Vec<Was>,
    /// Steps pending when the transaction began.
    steps: usize,
    disk: Vec<Undo>,
    /// The commands run in the transaction, each with how many entries
    /// `disk` had when it ran: those it could have changed.
    commands: Vec<(usize, By)>,
    /// While a command's changes are made ([`View::untracked`]): the
    /// paths they changed, each with what lies below it.
    untracked: Option<Vec<Location>>,
    /// What commands left at the paths they changed, put back once the
    /// rest is undone.
    kept: Vec<(Location, Option<Node>, Below<Node>)>,
    /// The files a dry run's command changed after a task of the
    /// transaction had: a rollback leaves them as the command left them,
    /// and the task's change stays, said as the real run says it
    /// ([`View::rollback`]).
    said: Vec<Kept>,
    /// The files the transaction had changed that a command took out of
    /// their place (removed or moved), with the tasks their contents
    /// carried.
    taken: Vec<(Location, Vec<By>)>,
    /// How many changes the flushes had written when it began
    /// ([`View::written`]): a rollback forgets the later ones.
    written: usize,
}

/// How to undo one change of the view.
#[derive(Debug)]
enum Was {
    /// The entry `at` had.
    Entry { at: Location, was: Option<Node> },
    /// What lay below `at` when it was dropped.
    Below { at: Location, was: Below<Node> },
    /// What lay below `from` was moved below `to`.
    Moved { from: Location, to: Location },
    /// The entries of the first components of `at` from the `from`-th
    /// on, before directories were made there (`None`: left as it was).
    Made {
        at: Location,
        from: usize,
        was: Vec<Option<Option<Node>>>,
    },
}

#[derive(Debug, Default)]
struct State {
    nodes: PathMap<Node>,
    steps: Vec<Step>,
    tx: Option<Tx>,
    /// The number of the latest transaction.
    serial: u64,
}

/// Who wrote a file, as a node records it.
fn written_by(node: Option<&Node>) -> Option<Vec<By>> {
    match node {
        Some(Node::File(f)) => Some(f.by.clone()),
        _ => None,
    }
}

/// What the undo list of a transaction knows of the paths a command
/// touched, in one pass over it: for each, its first entry before the
/// command (its first `start` entries), and the writers of its first
/// entry after that records any.
#[derive(Default)]
struct Earlier<'u> {
    before: HashMap<&'u Location, Option<&'u Node>>,
    found: HashMap<&'u Location, Vec<By>>,
}

impl<'u> Earlier<'u> {
    fn of(undo: &'u [Was], start: usize, touched: &HashSet<&Location>) -> Earlier<'u> {
        let mut e = Earlier::default();
        for (i, w) in undo.iter().enumerate() {
            let Was::Entry { at, was } = w else { continue };
            if !touched.contains(at) {
                continue;
            }
            if i < start {
                e.before.entry(at).or_insert(was.as_ref());
            } else if !e.found.contains_key(at)
                && let Some(by) = written_by(was.as_ref())
            {
                e.found.insert(at, by);
            }
        }
        e
    }
}

/// What a dry run says when a command changed the file `at` (now `now`)
/// that tasks of the transaction had changed before it; `earlier` is what
/// the transaction's undo list says of `at`.
fn changed_before(
    earlier: &Earlier<'_>,
    at: &Location,
    now: Option<&Node>,
    taken: Option<&Vec<By>>,
    command: By,
) -> Option<Kept> {
    // Before the transaction (nothing: a file made in it)...
    let first = written_by(*earlier.before.get(at)?).unwrap_or_default();
    // ...and as the command found it: noted when it changed it, taken
    // out by it, or changed in place.
    let found = earlier
        .found
        .get(at)
        .or(taken)
        .cloned()
        .or_else(|| written_by(now))
        .unwrap_or_default();
    let tasks: Vec<By> = found
        .into_iter()
        .filter(|b| *b != command && !first.contains(b))
        .collect();
    if tasks.is_empty() {
        return None;
    }
    let why = match now {
        None | Some(Node::Absent) => KeptWhy::Gone,
        Some(_) => KeptWhy::Written,
    };
    Some(Kept {
        path: at.display(),
        why,
        by: tasks,
        commands: vec![command.task],
    })
}

impl State {
    /// Notes how to undo a change, in a transaction.
    fn undo(&mut self, was: impl FnOnce() -> Was) {
        if let Some(tx) = &mut self.tx {
            tx.undo.push(was());
        }
    }

    /// Notes that a command changed `at` and what lies below it.
    fn touched(&mut self, at: &Location) {
        if let Some(Tx {
            untracked: Some(touched),
            ..
        }) = &mut self.tx
        {
            touched.push(at.clone());
        }
    }

    /// Marks a file whose undo the open transaction has noted.
    fn mark(&self, node: &mut Node) {
        if let (Some(_), Node::File(f)) = (&self.tx, node) {
            f.saved = self.serial;
        }
    }

    /// Sets the entry of `at`, noting what it was for a rollback.
    fn set(&mut self, at: &Location, node: Option<Node>) {
        let was = match node {
            Some(mut n) => {
                self.mark(&mut n);
                self.nodes.insert(at, n)
            }
            None => self.nodes.remove(at),
        };
        self.undo(|| Was::Entry {
            at: at.clone(),
            was,
        });
    }

    /// Takes the entry of `at` out, to put it elsewhere. A file the
    /// transaction saved already needs no copy: where it was is put back
    /// by the undo of what came before.
    fn take(&mut self, at: &Location) -> Option<Node> {
        let mut node = self.nodes.remove(at)?;
        let saved = matches!(&node, Node::File(f) if f.saved == self.serial);
        // A file the transaction changed, taken by a command: who had.
        if let (Some(tx), Node::File(f)) = (&mut self.tx, &node)
            && saved
            && tx.untracked.is_some()
        {
            tx.taken.push((at.clone(), f.by.clone()));
        }
        if self.tx.is_some() && !saved {
            let was = Some(node.clone());
            self.undo(|| Was::Entry {
                at: at.clone(),
                was,
            });
            self.mark(&mut node);
        }
        Some(node)
    }

    /// The entry of `at`, to change in place (a copy noted for a rollback
    /// first, once per transaction).
    fn node_mut(&mut self, at: &Location) -> Option<&mut Node> {
        let unsaved = matches!(self.nodes.get(at), Some(Node::File(f)) if f.saved != self.serial);
        if self.tx.is_some() && unsaved {
            let was = self.nodes.get(at).cloned();
            self.undo(|| Was::Entry {
                at: at.clone(),
                was,
            });
            let serial = self.serial;
            if let Some(Node::File(f)) = self.nodes.get_mut(at) {
                f.saved = serial;
            }
        }
        self.nodes.get_mut(at)
    }

    /// Drops the entries below `at`.
    fn drop_below(&mut self, at: &Location) {
        let was = self.nodes.take_below(at);
        self.undo(|| Was::Below {
            at: at.clone(),
            was,
        });
    }

    /// Moves the entries below `from` to below `to`, where nothing is.
    fn move_below(&mut self, from: &Location, to: &Location) {
        let below = self.nodes.take_below(from);
        self.nodes.put_below(to, below);
        self.undo(|| Was::Moved {
            from: from.clone(),
            to: to.clone(),
        });
    }

    /// Makes the directories of the first components of `at` from the
    /// `from`-th on where `made` says (one for each).
    fn make_dirs(&mut self, at: &Location, from: usize, made: Vec<bool>) {
        let new = made
            .into_iter()
            .map(|m| m.then_some(Some(Node::Dir { origin: None })))
            .collect();
        let was = self.nodes.replace_along(at, from, new);
        self.undo(|| Was::Made {
            at: at.clone(),
            from,
            was,
        });
    }

    /// Undoes one change.
    fn revert(&mut self, was: Was) {
        match was {
            Was::Entry { at, was } => {
                match was {
                    Some(n) => self.nodes.insert(&at, n),
                    None => self.nodes.remove(&at),
                };
            }
            Was::Below { at, was } => self.nodes.put_below(&at, was),
            Was::Moved { from, to } => {
                let below = self.nodes.take_below(&to);
                self.nodes.put_below(&from, below);
            }
            Was::Made { at, from, was } => {
                drop(self.nodes.replace_along(&at, from, was));
            }
        }
    }
}

/// Where a path stands in the view.
enum Place {
    /// It has an entry of its own.
    Node,
    /// It is what is on disk at this location.
    Disk(Location),
    /// Nothing is there (below something new, removed or moved away).
    Nowhere,
}

fn place(nodes: &PathMap<Node>, at: &Location) -> Result<Place, FsError> {
    if nodes.is_empty() {
        return Ok(Place::Disk(at.clone()));
    }
    let found = nodes.lookup(at);
    if found.own.is_some() {
        return Ok(Place::Node);
    }
    match found.above {
        None => Ok(Place::Disk(at.clone())),
        Some((depth, node)) => match node {
            Node::Dir {
                origin: Some(origin),
            } => Ok(Place::Disk(at.rebased(depth, origin))),
            Node::Dir { origin: None } | Node::Absent => Ok(Place::Nowhere),
            Node::File(_) | Node::Other { .. } => Err(FsError::NotDirectory {
                path: at.prefix(depth),
            }),
        },
    }
}

/// Where the first components of a path stand, for a walk down it: found
/// on disk below `onto` (its components from `depth` on, after `onto`),
/// nowhere, or below what is not a directory (at `depth` components).
enum Base {
    Disk { onto: Location, depth: usize },
    Nowhere,
    NotDirectory { depth: usize },
}

impl Base {
    fn of(node: &Node, depth: usize) -> Base {
        match node {
            Node::Dir {
                origin: Some(origin),
            } => Base::Disk {
                onto: origin.clone(),
                depth,
            },
            Node::Dir { origin: None } | Node::Absent => Base::Nowhere,
            Node::File(_) | Node::Other { .. } => Base::NotDirectory { depth },
        }
    }
}

fn kind_of(node: &Node) -> Option<Kind> {
    match node {
        Node::File(_) => Some(Kind::File),
        Node::Dir { .. } => Some(Kind::Dir),
        Node::Other { kind, .. } => Some(*kind),
        Node::Absent => None,
    }
}

/// What stands at a path in the view ([`View::seen`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seen {
    /// What is on disk at this location (moved here, or untouched); a
    /// directory's entries are the view's ([`View::list`]).
    Disk(Location),
    /// A file the run wrote or edited; where it came from, if it did.
    File {
        origin: Option<Location>,
    },
    /// A directory the run made.
    NewDir,
    Nothing,
}

/// A change a flush could not make, and the tasks whose change it was.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) by: Vec<By>,
    pub(crate) error: FsError,
}

/// What a run changes, for its report: what a dry run would change, what
/// a real run wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// A file written: whether it is new, and the change of its contents.
    File {
        path: String,
        created: bool,
        diff: Diff,
        /// The contents written (the model tests compare them).
        #[cfg(test)]
        new: Vec<u8>,
    },
    /// Something on disk that will not be there any more; a file's removed
    /// lines with it.
    Removed {
        path: String,
        kind: Kind,
        diff: Option<Diff>,
    },
    /// Something on disk that will be elsewhere.
    Moved { from: String, to: String },
    /// A new directory that holds nothing new (one that does is said by
    /// what it holds).
    Dir { path: String },
}

/// The tree as the run sees it.
#[derive(Debug)]
pub(crate) struct View<'r> {
    root: &'r Root,
    state: RefCell<State>,
    expected: RefCell<Expected>,
    /// What the closest-region hints of failed edits may still read.
    hints: HintBudget,
    /// From how many coming edits a file is edited with an index.
    index_from: usize,
    /// What the diffs of the run's report may still show.
    diffs: diff::Budget,
    /// What the flushes wrote, when asked to keep it ([`View::recording`]).
    written: Option<RefCell<Record>>,
}

/// What the flushes of a run wrote, a path once: a file written again
/// adds its diff to its entry.
#[derive(Debug, Default)]
struct Record {
    changes: Vec<Change>,
    /// Where each file's entry is in `changes`.
    files: HashMap<String, usize>,
}

impl Record {
    fn add(&mut self, change: Change) {
        let at = match &change {
            Change::File { path, .. } => self.files.get(path).copied(),
            _ => None,
        };
        match (at.and_then(|i| self.changes.get_mut(i)), change) {
            (
                Some(Change::File {
                    diff: was,
                    #[cfg(test)]
                        new: was_new,
                    ..
                }),
                Change::File {
                    diff,
                    #[cfg(test)]
                    new,
                    ..
                },
            ) => {
                *was = std::mem::take(was).then(diff);
                #[cfg(test)]
                {
                    *was_new = new;
                }
            }
            (_, change) => {
                if let Change::File { path, .. } = &change {
                    self.files.insert(path.clone(), self.changes.len());
                }
                self.changes.push(change);
            }
        }
    }

    /// Forgets what was written after the first `len` changes, but for
    /// the paths in `kept` (a rollback left them as a command made them).
    fn truncate(&mut self, len: usize, kept: &HashSet<&str>) {
        let later: Vec<Change> = self.changes.drain(len.min(self.changes.len())..).collect();
        self.files.retain(|_, i| *i < len);
        for c in later {
            let path = match &c {
                Change::File { path, .. } | Change::Removed { path, .. } | Change::Dir { path } => {
                    path
                }
                Change::Moved { to, .. } => to,
            };
            if kept.contains(path.as_str()) {
                self.add(c);
            }
        }
    }
}

impl<'r> View<'r> {
    pub(crate) fn new(root: &'r Root, index_from: usize) -> Self {
        View {
            root,
            state: RefCell::new(State::default()),
            expected: RefCell::new(Expected::default()),
            hints: HintBudget::new(HINT_BUDGET),
            index_from,
            diffs: diff::Budget::default(),
            written: None,
        }
    }

    /// Has each flush keep what it writes, for [`View::written`].
    pub(crate) fn recording(mut self, on: bool) -> Self {
        self.written = on.then(RefCell::default);
        self
    }

    /// What the flushes wrote, a path once (nothing unless
    /// [`View::recording`]).
    pub(crate) fn written(&self) -> Vec<Change> {
        self.written
            .as_ref()
            .map(|w| std::mem::take(&mut *w.borrow_mut()).changes)
            .unwrap_or_default()
    }

    pub(crate) fn root(&self) -> &'r Root {
        self.root
    }

    /// Whether changes wait to be written.
    pub(crate) fn pending(&self) -> bool {
        let st = self.state.borrow();
        !st.steps.is_empty()
            || !st
                .nodes
                .walk(|v| !matches!(v, Visit::Enter { entry: Some(Node::File(f)), .. } if f.dirty))
    }

    /// What is at `at` on disk, as an entry of the view.
    fn node_on_disk(&self, on_disk: &Location) -> Result<Option<Node>, FsError> {
        Ok(match self.root.kind(on_disk)? {
            None => None,
            Some(Kind::File) => Some(Node::File(Box::new(FileNode {
                origin: Some(on_disk.clone()),
                present: self.root.stamp(on_disk)?,
                data: None,
                edits: None,
                dirty: false,
                by: Vec::new(),
                saved: 0,
            }))),
            Some(Kind::Dir) => Some(Node::Dir {
                origin: Some(on_disk.clone()),
            }),
            Some(kind) => Some(Node::Other {
                origin: on_disk.clone(),
                kind,
            }),
        })
    }

    /// The entry of `at`, made from the disk if it has none; `None` when
    /// nothing is there.
    fn take(&self, st: &mut State, at: &Location) -> Result<Option<Node>, FsError> {
        match place(&st.nodes, at)? {
            Place::Node => Ok(st.take(at).filter(|n| !matches!(n, Node::Absent))),
            Place::Disk(on_disk) => self.node_on_disk(&on_disk),
            Place::Nowhere => Ok(None),
        }
    }

    /// What the view has at each of the first components of `at` (the
    /// first one, the first two, ...), in one walk down it, up to and
    /// with the first that is not a directory or cannot be looked up: what
    /// [`View::kind_in`] says of each. The disk is asked once for each
    /// stretch of components the view has no entries for.
    fn kinds_along(&self, st: &State, at: &Location) -> Vec<Result<Option<Kind>, FsError>> {
        let own = st.nodes.along(at);
        let mut base = match own.first().copied().flatten() {
            Some(node) => Base::of(node, 0),
            None => Base::Disk {
                onto: at.truncated(0),
                depth: 0,
            },
        };
        // What the disk said of the stretch below `base`: the depth on disk
        // up to which all are directories, and what comes next.
        let mut disk: Option<(usize, Result<Option<Kind>, FsError>)> = None;
        let mut out = Vec::new();
        for (depth, &here_own) in own.iter().enumerate().skip(1) {
            let kind = match (here_own, &base) {
                (Some(node), _) => Ok(kind_of(node)),
                (None, Base::Nowhere) => Ok(None),
                (None, Base::NotDirectory { depth: d }) => Err(FsError::NotDirectory {
                    path: at.prefix(*d),
                }),
                (None, Base::Disk { onto, depth: d }) => {
                    let on_disk = at.rebased(*d, onto);
                    let (dirs, next) = disk
                        .get_or_insert_with(|| self.root.dirs_along(&on_disk, onto.parts().len()));
                    let here = onto.parts().len() + depth - d;
                    if here <= *dirs {
                        Ok(Some(Kind::Dir))
                    } else if here == *dirs + 1 {
                        next.clone()
                    } else {
                        // Below what is not a directory, as a lookup of
                        // the deeper path would say.
                        let path = on_disk.prefix(*dirs + 1);
                        match next {
                            Ok(None) => Ok(None),
                            Ok(Some(Kind::Symlink)) => Err(FsError::Symlink { path }),
                            Ok(Some(_)) => Err(FsError::NotDirectory { path }),
                            Err(e) => Err(e.clone()),
                        }
                    }
                }
            };
            if let Some(node) = here_own {
                base = Base::of(node, depth);
                disk = None;
            }
            let go_on = matches!(kind, Ok(Some(Kind::Dir)));
            out.push(kind);
            if !go_on {
                break;
            }
        }
        out
    }

    /// Makes the directory `dir` and its missing parents in the view, in
    /// one walk, noting one step to make them on disk. `step` hears each
    /// directory on the way (its number of components, whether it is
    /// made) and may stop the walk (`Ok(None)`). A component that is not
    /// a directory is refused: as a link (`links`) or as not a directory.
    /// Returns how many components the first directory made has.
    fn make_dirs(
        &self,
        st: &mut State,
        dir: &Location,
        by: By,
        links: bool,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<Option<usize>, FsError> {
        let kinds = self.kinds_along(st, dir);
        let own: Vec<Option<Kind>> = st
            .nodes
            .along(dir)
            .into_iter()
            .map(|n| n.and_then(kind_of))
            .collect();
        let mut first = None;
        let mut made = Vec::new();
        let mut kinds = kinds.into_iter();
        for depth in 1..=dir.parts().len() {
            // Below a directory made, only what has an entry is there.
            let kind = match first {
                None => kinds.next().unwrap_or(Ok(None))?,
                Some(_) => own.get(depth).copied().flatten(),
            };
            match kind {
                Some(Kind::Dir) => made.push(false),
                None => {
                    first.get_or_insert(depth);
                    made.push(true);
                }
                Some(Kind::Symlink) if links => {
                    return Err(FsError::Symlink {
                        path: dir.prefix(depth),
                    });
                }
                Some(_) => {
                    return Err(FsError::NotDirectory {
                        path: dir.prefix(depth),
                    });
                }
            }
            if !step(depth, made.last().copied().unwrap_or(false)) {
                break;
            }
        }
        if let Some(from) = first {
            let made = made.split_off(from - 1);
            st.make_dirs(dir, from, made);
            st.steps.push(Step::Mkdir {
                at: dir.clone(),
                by,
            });
        }
        Ok(first)
    }

    /// Makes the missing directories above `at` (noting one step to make
    /// them on disk); refuses when one of them is not a directory.
    /// Returns the first directory made.
    fn make_parents(
        &self,
        st: &mut State,
        at: &Location,
        by: By,
    ) -> Result<Option<Location>, FsError> {
        let Some(parent) = at.parent() else {
            return Ok(None);
        };
        if self.kind_in(st, &parent)? == Some(Kind::Dir) {
            return Ok(None);
        }
        let first = self.make_dirs(st, &parent, by, false, &mut |_, _| true)?;
        Ok(first.map(|n| parent.truncated(n)))
    }

    fn kind_in(&self, st: &State, at: &Location) -> Result<Option<Kind>, FsError> {
        match place(&st.nodes, at)? {
            Place::Node => Ok(st.nodes.get(at).and_then(kind_of)),
            Place::Disk(on_disk) => self.root.kind(&on_disk),
            Place::Nowhere => Ok(None),
        }
    }

    /// Replaces (or creates) the file `at` with `data`.
    pub(crate) fn write(&self, at: &Location, data: Content, by: By) -> Result<Written, FsError> {
        let mut st = self.state.borrow_mut();
        let display = || at.display();
        if let Place::Node = place(&st.nodes, at)? {
            // `None`: nothing is there, the file is made below.
            let replaced = match st.node_mut(at) {
                Some(Node::File(f)) => {
                    f.data = Some(data);
                    f.edits = None;
                    f.dirty = true;
                    add(&mut f.by, by);
                    return {
                        st.touched(at);
                        Ok(Written::Replaced)
                    };
                }
                Some(Node::Dir { .. }) => Some(FsError::IsDirectory { path: display() }),
                Some(Node::Other {
                    kind: Kind::Symlink,
                    ..
                }) => Some(FsError::Symlink { path: display() }),
                Some(Node::Other { .. }) => Some(FsError::NotRegular { path: display() }),
                Some(Node::Absent) | None => None,
            };
            if let Some(e) = replaced {
                return Err(e);
            }
        }
        let made = self.make_parents(&mut st, at, by)?;
        let (origin, present) = match place(&st.nodes, at)? {
            Place::Disk(on_disk) => match self.root.kind(&on_disk)? {
                Some(Kind::File) => {
                    let present = self.root.stamp(&on_disk)?;
                    (Some(on_disk), present)
                }
                Some(Kind::Dir) => return Err(FsError::IsDirectory { path: display() }),
                Some(Kind::Symlink) => return Err(FsError::Symlink { path: display() }),
                Some(Kind::Other) => return Err(FsError::NotRegular { path: display() }),
                None => (None, None),
            },
            Place::Node | Place::Nowhere => (None, None),
        };
        let written = if present.is_some() {
            Written::Replaced
        } else {
            Written::Created
        };
        st.set(
            at,
            Some(Node::File(Box::new(FileNode {
                origin,
                present,
                data: Some(data),
                edits: None,
                dirty: true,
                by: vec![by],
                saved: 0,
            }))),
        );
        st.touched(made.as_ref().unwrap_or(at));
        Ok(written)
    }

    /// Makes the edit `splice` in the file `at`, found by the plan just
    /// before ([`View::find`]).
    pub(crate) fn splice(&self, at: &Location, splice: &Splice, by: By) -> Result<(), FsError> {
        let mut st = self.state.borrow_mut();
        let Some(Node::File(file)) = st.node_mut(at) else {
            return Err(FsError::NotFound { path: at.display() });
        };
        let f = &mut **file;
        match splice {
            Splice::Indexed(planned) => {
                let Some(edits) = &mut f.edits else {
                    return Err(FsError::NotFound { path: at.display() });
                };
                edits.apply(planned);
                f.data = None;
            }
            Splice::Plain(found) => {
                let Some(Content::Text(text)) = &mut f.data else {
                    return Err(FsError::NotFound { path: at.display() });
                };
                let text = Rc::make_mut(text);
                found.apply_text(&mut text.text);
                text.cr |= found.adds_cr();
                f.edits = None;
            }
        }
        f.dirty = true;
        add(&mut f.by, by);
        Ok(())
    }

    /// Ends the file `at`, just edited, with a line break (its first line
    /// break's style) when it lacks one.
    pub(crate) fn end_with_line_break(&self, at: &Location) {
        let mut st = self.state.borrow_mut();
        let Some(Node::File(file)) = st.node_mut(at) else {
            return;
        };
        let f = &mut **file;
        if let Some(edits) = &mut f.edits {
            edits.end_with_line_break();
        } else if let Some(Content::Text(text)) = &mut f.data {
            let t = &text.text;
            let body = t.strip_prefix(BOM).unwrap_or(t);
            if !body.is_empty() && !body.ends_with('\n') {
                let crlf = body.find('\n').is_some_and(|i| body[..i].ends_with('\r'));
                Rc::make_mut(text)
                    .text
                    .push_str(if crlf { "\r\n" } else { "\n" });
            }
        }
    }

    /// Tells the view the edits to come: each file's search texts and
    /// replacements (a failed edit is told whether its replacement is in
    /// the file already), for the index of its [`Editing`] (replacing what
    /// it was told before).
    pub(crate) fn expect<'k>(&self, edits: impl Iterator<Item = (Location, Search<'k>)>) {
        let mut expected = self.expected.borrow_mut();
        expected.generation += 1;
        expected.by_file.clear();
        for (at, search) in edits {
            let coming = expected.by_file.entry(at).or_default();
            coming.edits += 1;
            coming
                .keys
                .extend(search.texts().map(|t| editing::key(t).into()));
            if !search.replace.is_empty() {
                coming
                    .replacements
                    .insert(editing::key(search.replace).into());
            }
            // The white-space tier looks for the first non-blank lines.
            let pivots = search.pivots().filter(|p| p.len() >= MIN_PIVOT);
            coming
                .pivots
                .extend(pivots.map(|p| editing::key_of_bytes(p).into()));
        }
    }

    /// Where `search` replaces in the file `at` (see [`plan::plan`]).
    /// A file that many edits to come will change
    /// ([`editing::INDEX_FROM`]) is edited in chunks ([`Editing`]), its
    /// coming search texts indexed in one pass; otherwise, and where the
    /// index cannot answer, the whole text is searched.
    pub(crate) fn find_edit(&self, at: &Location, search: Search<'_>) -> Result<Splice, TaskError> {
        let loaded = {
            let st = self.state.borrow();
            matches!(st.nodes.get(at), Some(Node::File(f)) if f.edits.is_some())
        };
        if !loaded {
            let contents = self.contents(at)?;
            let expected = self.expected.borrow();
            let many = expected
                .by_file
                .get(at)
                .is_some_and(|c| c.edits >= self.index_from);
            let editing = match &contents {
                Content::Text(t) if many => Editing::new(&t.text),
                _ => None,
            };
            let Some(editing) = editing else {
                return plan::find_in(&contents, at, search, &self.hints);
            };
            drop(expected);
            drop(contents);
            let mut st = self.state.borrow_mut();
            if let Some(Node::File(f)) = st.node_mut(at) {
                // The chunks hold the text now.
                f.data = None;
                f.edits = Some(Box::new(editing));
            }
        }
        let mut st = self.state.borrow_mut();
        let Some(Node::File(f)) = st.nodes.get_mut(at) else {
            return Err(FsError::NotFound { path: at.display() }.into());
        };
        let Some(edits) = &mut f.edits else {
            return Err(FsError::NotFound { path: at.display() }.into());
        };
        // The index is built once per batch of edits to come, when one of
        // them is the first to need it, and only for a batch of many edits
        // of this file (a few are searched one by one).
        let expected = self.expected.borrow();
        if edits.generation() != Some(expected.generation)
            && let Some(coming) = expected.by_file.get(at)
            && coming.edits >= self.index_from
            && search
                .texts()
                .any(|t| !edits.knows(t) && coming.keys.contains(editing::key(t)))
        {
            edits.index(coming.keys.iter().map(|k| &**k), expected.generation);
        }
        let mut answer = edits.find(search);
        // The tier needs the first lines, and an edit that misses its
        // replacement: the batch's are indexed with the rest, once each,
        // when an edit first needs them.
        let generation = expected.generation;
        if matches!(answer, Some(Answer::Unknown))
            && edits.generation() == Some(generation)
            && let Some(coming) = expected.by_file.get(at)
        {
            let pivots = edits.has_pivots_of(generation)
                || search.pivots().any(|p| {
                    let key = editing::key_of_bytes(p);
                    !edits.knows_bytes(key) && coming.pivots.contains(key)
                });
            let replacements = edits.has_replacements_of(generation)
                || (!edits.knows(search.replace)
                    && coming.replacements.contains(editing::key(search.replace)));
            if pivots != edits.has_pivots_of(generation)
                || replacements != edits.has_replacements_of(generation)
            {
                let none = HashSet::new();
                let keys = coming
                    .keys
                    .iter()
                    .chain(if pivots { &coming.pivots } else { &none })
                    .chain(if replacements {
                        &coming.replacements
                    } else {
                        &none
                    });
                edits.index_with(keys.map(|k| &**k), generation, pivots, replacements);
                answer = edits.find(search);
            }
        }
        match answer {
            Some(Answer::Found(planned)) => Ok(Splice::Indexed(planned)),
            Some(Answer::Miss(mut m)) if m.found > 0 || m.already_applied || self.hints.spent() => {
                // No closest region to look for (something was found, or
                // the hints are spent): the index has the rest.
                if m.found == 0 && !m.already_applied {
                    m.closest_skipped = true;
                }
                Err(plan::mismatch(at, m))
            }
            Some(Answer::Miss(_) | Answer::Unknown) => {
                // The whole text answers: the error with its hints, or an
                // edit the index does not know.
                let text = edits.text();
                match search.find_in(&text, None, &self.hints) {
                    Ok(found) => Ok(Splice::Indexed(edits.planned_from(&found))),
                    Err(m) => Err(plan::mismatch(at, m)),
                }
            }
            None => {
                // A CR in the search or the replacement: edited on the
                // whole text from now on.
                let contents = Content::text(edits.text());
                f.edits = None;
                f.data = Some(contents.clone());
                plan::find_in(&contents, at, search, &self.hints)
            }
        }
    }

    /// Moves what is at `from` to `to` (replacing a file there), making
    /// missing parents of `to`. What the view holds below `from` goes
    /// along as one piece: the cost does not grow with it.
    pub(crate) fn rename(&self, from: &Location, to: &Location, by: By) -> Result<(), FsError> {
        let mut st = self.state.borrow_mut();
        let to_kind = self.kind_in(&st, to)?;
        let Some(node) = self.take(&mut st, from)? else {
            return Err(FsError::NotFound {
                path: from.display(),
            });
        };
        // rename(2): a directory may replace an empty directory only, a
        // file a file only.
        let refused = match (&node, to_kind) {
            (Node::Dir { .. }, Some(Kind::Dir)) => match self.dir_is_empty(&st, to) {
                Ok(true) => None,
                Ok(false) => Some(FsError::Os {
                    path: to.display(),
                    op: "replace",
                    errno: rustix::io::Errno::NOTEMPTY,
                }),
                Err(e) => Some(e),
            },
            (_, Some(Kind::Dir)) => Some(FsError::IsDirectory { path: to.display() }),
            (Node::Dir { .. }, Some(_)) => Some(FsError::NotDirectory { path: to.display() }),
            _ => None,
        };
        let on_disk = match &node {
            Node::File(f) => f.on_disk(),
            _ => true,
        };
        // What the new file replaces, when it is written there.
        let replaced = match (&node, refused.is_none() && !on_disk) {
            (Node::File(_), true) => match place(&st.nodes, to) {
                Ok(Place::Node) => match st.nodes.get(to) {
                    Some(Node::File(f)) => Ok(f.present),
                    Some(Node::Other { .. }) => Err(FsError::Symlink { path: to.display() }),
                    _ => Ok(None),
                },
                Ok(Place::Disk(on_disk)) => self.root.stamp(&on_disk),
                Ok(Place::Nowhere) => Ok(None),
                Err(e) => Err(e),
            },
            _ => Ok(None),
        };
        let replaced = match (refused, replaced) {
            (None, Ok(r)) => self.make_parents(&mut st, to, by).map(|made| (r, made)),
            (Some(e), _) | (None, Err(e)) => Err(e),
        };
        let (replaced, made) = match replaced {
            Ok(r) => r,
            Err(e) => {
                // Put it back as it was.
                st.set(from, Some(node));
                return Err(e);
            }
        };
        st.drop_below(to);
        st.move_below(from, to);
        st.set(from, Some(Node::Absent));
        let mut node = node;
        if let Node::File(f) = &mut node
            && !on_disk
        {
            f.present = replaced;
        }
        // Edits to come name the file by its new path.
        if let Node::File(f) = &mut node
            && let Some(edits) = &mut f.edits
        {
            edits.forget_generation();
        }
        st.set(to, Some(node));
        if on_disk {
            st.steps.push(Step::Rename {
                from: from.clone(),
                to: to.clone(),
                by,
            });
        }
        st.touched(from);
        st.touched(made.as_ref().unwrap_or(to));
        Ok(())
    }

    /// Whether the directory `at` holds nothing, in the view.
    fn dir_is_empty(&self, st: &State, at: &Location) -> Result<bool, FsError> {
        if st.nodes.holds(at) {
            return Ok(false);
        }
        let origin = match place(&st.nodes, at)? {
            Place::Node => match st.nodes.get(at) {
                Some(Node::Dir { origin }) => origin.clone(),
                _ => None,
            },
            Place::Disk(on_disk) => Some(on_disk),
            Place::Nowhere => None,
        };
        let Some(origin) = origin else {
            return Ok(true);
        };
        let entries: HashMap<&str, &Node> = st.nodes.children(at).into_iter().collect();
        for entry in self.root.list(&origin)? {
            if !matches!(entries.get(entry.name.as_str()), Some(Node::Absent)) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Makes the directory `at`, whose parent must be a directory.
    /// `Ok(false)` when a directory is there already (like
    /// [`Root::create_dir`]).
    pub(crate) fn create_dir(&self, at: &Location, by: By) -> Result<bool, FsError> {
        let mut st = self.state.borrow_mut();
        let parent = at.parent().unwrap_or_else(|| Location::below_root(&[]));
        match self.kind_in(&st, &parent)? {
            Some(Kind::Dir) => {}
            Some(Kind::Symlink) => {
                return Err(FsError::Symlink {
                    path: parent.display(),
                });
            }
            Some(_) => {
                return Err(FsError::NotDirectory {
                    path: parent.display(),
                });
            }
            None => {
                return Err(FsError::NotFound {
                    path: parent.display(),
                });
            }
        }
        match self.kind_in(&st, at)? {
            Some(Kind::Dir) => Ok(false),
            Some(Kind::Symlink) => Err(FsError::Symlink { path: at.display() }),
            Some(_) => Err(FsError::NotDirectory { path: at.display() }),
            None => {
                st.set(at, Some(Node::Dir { origin: None }));
                st.steps.push(Step::Mkdir { at: at.clone(), by });
                st.touched(at);
                Ok(true)
            }
        }
    }

    /// Makes the directory `at` and its missing parents (`mkdir -p`), in
    /// one walk down it (see [`Root::create_dirs`]).
    pub(crate) fn create_dirs(
        &self,
        at: &Location,
        by: By,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        let mut st = self.state.borrow_mut();
        let mut stopped = false;
        let made = self.make_dirs(&mut st, at, by, true, &mut |n, made| {
            stopped = !step(n, made);
            !stopped
        })?;
        if let Some(first) = made {
            st.touched(&at.truncated(first));
        }
        Ok(!stopped)
    }

    /// The names in the directory `at` as the view has it, in byte order,
    /// with their kinds.
    pub(crate) fn list(&self, at: &Location) -> Result<Vec<(String, Kind)>, FsError> {
        let st = self.state.borrow();
        let origin = match place(&st.nodes, at)? {
            Place::Node => match st.nodes.get(at) {
                Some(Node::Dir { origin }) => origin.clone(),
                Some(Node::Absent) | None => {
                    return Err(FsError::NotFound { path: at.display() });
                }
                Some(Node::Other {
                    kind: Kind::Symlink,
                    ..
                }) => return Err(FsError::Symlink { path: at.display() }),
                Some(_) => return Err(FsError::NotDirectory { path: at.display() }),
            },
            Place::Disk(on_disk) => Some(on_disk),
            Place::Nowhere => return Err(FsError::NotFound { path: at.display() }),
        };
        let mut names = BTreeMap::new();
        if let Some(origin) = origin {
            for entry in self.root.list(&origin)? {
                names.insert(entry.name, Some(entry.kind));
            }
        }
        for (name, n) in st.nodes.children(at) {
            names.insert(name.to_owned(), kind_of(n));
        }
        Ok(names
            .into_iter()
            .filter_map(|(name, kind)| kind.map(|k| (name, k)))
            .collect())
    }

    /// What stands at `at` in the view, for a dry run's built-in commands
    /// to look at (PROTOCOL §7): what is on disk somewhere, as it is
    /// there, or what the run made.
    pub(crate) fn seen(&self, at: &Location) -> Result<Seen, FsError> {
        let st = self.state.borrow();
        Ok(match place(&st.nodes, at)? {
            Place::Disk(on_disk) => Seen::Disk(on_disk),
            Place::Nowhere => Seen::Nothing,
            Place::Node => match st.nodes.get(at) {
                Some(Node::File(f)) => match &f.origin {
                    Some(origin) if !f.dirty => Seen::Disk(origin.clone()),
                    origin => Seen::File {
                        origin: origin.clone(),
                    },
                },
                Some(Node::Dir {
                    origin: Some(origin),
                })
                | Some(Node::Other { origin, .. }) => Seen::Disk(origin.clone()),
                Some(Node::Dir { origin: None }) => Seen::NewDir,
                Some(Node::Absent) | None => Seen::Nothing,
            },
        })
    }

    /// Removes what is at `at`, with everything below it.
    pub(crate) fn remove(&self, at: &Location, by: By) -> Result<(), FsError> {
        let mut st = self.state.borrow_mut();
        let Some(node) = self.take(&mut st, at)? else {
            return Err(FsError::NotFound { path: at.display() });
        };
        let on_disk = match &node {
            Node::File(f) => f.on_disk(),
            _ => true,
        };
        st.drop_below(at);
        st.set(at, Some(Node::Absent));
        if on_disk {
            st.steps.push(Step::Remove { at: at.clone(), by });
        }
        st.touched(at);
        Ok(())
    }

    /// The contents of the file `at`, read from disk the first time.
    pub(crate) fn contents(&self, at: &Location) -> Result<Content, FsError> {
        let mut st = self.state.borrow_mut();
        let display = || at.display();
        match place(&st.nodes, at)? {
            Place::Node => {}
            Place::Disk(on_disk) => {
                let (bytes, stamp) = self.root.read_stamped(&on_disk)?;
                let data = Content::from_bytes(bytes);
                st.set(
                    at,
                    Some(Node::File(Box::new(FileNode {
                        origin: Some(on_disk),
                        present: Some(stamp),
                        data: Some(data.clone()),
                        edits: None,
                        dirty: false,
                        by: Vec::new(),
                        saved: 0,
                    }))),
                );
                return Ok(data);
            }
            Place::Nowhere => return Err(FsError::NotFound { path: display() }),
        }
        let unread = match st.nodes.get_mut(at) {
            Some(Node::File(file)) => match (&file.data, &file.edits, &file.origin) {
                (Some(data), _, _) => return Ok(data.clone()),
                // Kept until the next edit (the same contents: nothing to
                // save for a rollback).
                (None, Some(edits), _) => {
                    let data = Content::text(edits.text());
                    file.data = Some(data.clone());
                    return Ok(data);
                }
                (None, None, Some(origin)) => origin.clone(),
                (None, None, None) => return Err(FsError::NotFound { path: display() }),
            },
            Some(Node::Absent) | None => return Err(FsError::NotFound { path: display() }),
            Some(Node::Dir { .. }) => return Err(FsError::IsDirectory { path: display() }),
            Some(Node::Other {
                kind: Kind::Symlink,
                ..
            }) => return Err(FsError::Symlink { path: display() }),
            Some(Node::Other { .. }) => return Err(FsError::NotRegular { path: display() }),
        };
        let (bytes, stamp) = self.root.read_stamped(&unread)?;
        let data = Content::from_bytes(bytes);
        if let Some(Node::File(f)) = st.node_mut(at) {
            f.data = Some(data.clone());
            f.present = Some(stamp);
        }
        Ok(data)
    }

    /// Opens a transaction (see the module's documentation).
    /// Makes the changes of `f` as a command's own: a rollback of the open
    /// transaction leaves them, as it leaves what a command did on disk
    /// (PROTOCOL §7.4). A dry run carries out built-in commands so;
    /// `command` is the task of the command.
    pub(crate) fn untracked<R>(&self, command: By, f: impl FnOnce() -> R) -> R {
        let start = match &mut self.state.borrow_mut().tx {
            Some(tx) => {
                tx.untracked = Some(Vec::new());
                tx.undo.len()
            }
            None => 0,
        };
        let result = f();
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        if let Some(tx) = &mut st.tx
            && let Some(touched) = tx.untracked.take()
        {
            // What the command left where it changed the view is what a
            // rollback leaves there.
            for at in &touched {
                let (entry, below) = st.nodes.copy_at(at);
                tx.kept.push((at.clone(), entry, below));
            }
            // A file a task of the transaction had changed before: its
            // change stays too. One pass over what the transaction did,
            // whatever the number of paths the command touched.
            let mut seen = HashSet::new();
            let paths: Vec<&Location> = touched.iter().filter(|at| seen.insert(*at)).collect();
            let earlier = Earlier::of(&tx.undo, start, &seen);
            let mut taken: HashMap<&Location, &Vec<By>> = HashMap::new();
            for (at, by) in &tx.taken {
                taken.entry(at).or_insert(by);
            }
            let said: Vec<Kept> = paths
                .into_iter()
                .filter_map(|at| {
                    let now = st.nodes.get(at);
                    changed_before(&earlier, at, now, taken.get(at).copied(), command)
                })
                .collect();
            tx.said.extend(said);
        }
        result
    }

    pub(crate) fn begin(&self) {
        let mut st = self.state.borrow_mut();
        let steps = st.steps.len();
        st.serial += 1;
        let written = self
            .written
            .as_ref()
            .map_or(0, |w| w.borrow().changes.len());
        st.tx = Some(Tx {
            steps,
            written,
            ..Tx::default()
        });
    }

    /// Keeps what the transaction did. Returns the temporary files it kept
    /// that could not be removed.
    pub(crate) fn commit(&self) -> Vec<FsError> {
        let tx = self.state.borrow_mut().tx.take();
        // Where each temporary file is now: a later step may have moved
        // the directory holding it.
        let mut temps: Vec<Location> = Vec::new();
        for undo in tx.map(|t| t.disk).unwrap_or_default() {
            match undo {
                Undo::SetAside { at, aside, .. } => {
                    relocate(&mut temps, &at, &aside);
                    temps.push(aside);
                }
                Undo::Wrote {
                    kept: Some(kept), ..
                } => temps.push(kept),
                Undo::Renamed { from, to, .. } => relocate(&mut temps, &from, &to),
                Undo::Made { .. } | Undo::Wrote { .. } => {}
            }
        }
        let mut left = Vec::new();
        for temp in temps.into_iter().rev() {
            match self.root.remove(&temp) {
                // Removed with a directory set aside after it.
                Ok(()) | Err(FsError::NotFound { .. }) => {}
                Err(e) => left.push(e),
            }
        }
        left
    }

    /// What a command could change of the transaction's moves, taken
    /// before it runs (nothing outside a transaction).
    pub(crate) fn before_command(&self) -> Vec<(usize, Fingerprint)> {
        let st = self.state.borrow();
        let Some(tx) = &st.tx else {
            return Vec::new();
        };
        tx.disk
            .iter()
            .enumerate()
            .filter_map(|(i, undo)| match undo {
                Undo::Renamed {
                    to, changed: None, ..
                } => Some((i, self.root.fingerprint(to))),
                _ => None,
            })
            .collect()
    }

    /// Notes that the command of task `by` ran (refused, it ran nothing),
    /// and which moves it changed (against `before`, from
    /// [`View::before_command`]): a rollback leaves those where the command
    /// left them.
    pub(crate) fn after_command(&self, before: Vec<(usize, Fingerprint)>, by: By) {
        let mut st = self.state.borrow_mut();
        let Some(tx) = &mut st.tx else { return };
        tx.commands.push((tx.disk.len(), by));
        for (i, then) in before {
            if let Some(Undo::Renamed { to, changed, .. }) = tx.disk.get_mut(i)
                && then.differs(self.root.fingerprint(to))
            {
                *changed = Some(by);
            }
        }
    }

    /// Undoes what the transaction did, in the view and on disk, except
    /// what a command changed or made after a task had changed it (PROTOCOL
    /// §7.4): that stays as the command left it, and so does the task's
    /// change ([`Undone::kept`]). Nothing is ever put back over what
    /// another writer made; what was set aside and cannot be put back is
    /// deleted, so that no temporary name stays in the tree. Returns what
    /// was kept and what could not be undone.
    pub(crate) fn rollback(&self) -> Undone {
        let mut st = self.state.borrow_mut();
        let Some(tx) = st.tx.take() else {
            return Undone::default();
        };
        for was in tx.undo.into_iter().rev() {
            st.revert(was);
        }
        for (at, entry, below) in tx.kept {
            match entry {
                Some(n) => st.nodes.insert(&at, n),
                None => st.nodes.remove(&at),
            };
            st.nodes.put_below(&at, below);
        }
        st.steps.truncate(tx.steps);
        drop(st);
        let mut out = Undone {
            kept: tx.said,
            problems: Vec::new(),
        };
        let mut disk = tx.disk;
        // Where what was set aside is gone, with everything below.
        let mut dropped: Vec<Location> = Vec::new();
        while let Some(undo) = disk.pop() {
            let i = disk.len();
            if dropped.iter().any(|d| undo.below(d)) {
                continue;
            }
            // The commands that ran after this change.
            let after: Vec<usize> = tx
                .commands
                .iter()
                .filter(|(n, _)| *n > i)
                .map(|(_, by)| by.task)
                .collect();
            let mut keep = |at: &Location, why, by: Vec<By>, commands: Vec<usize>| {
                out.kept.push(Kept {
                    path: at.display(),
                    why,
                    by,
                    commands,
                });
            };
            let undone = match undo {
                Undo::Made { at, from, by } => {
                    // Those still empty, deepest first. One that holds
                    // what a command made stays, and those above it; one
                    // that holds what could not be undone is said by that.
                    if let Some(holds) = self.root.remove_empty_dirs(&at, from)
                        && !after.is_empty()
                    {
                        keep(&holds, KeptWhy::DirHolds, vec![by], after);
                    }
                    Ok(())
                }
                Undo::Renamed {
                    from,
                    to,
                    by,
                    changed: Some(command),
                } => {
                    let why = match self.root.kind(&to) {
                        Ok(None) => KeptWhy::Gone,
                        _ => KeptWhy::MovedHere {
                            from: from.display(),
                        },
                    };
                    keep(&to, why, vec![by], vec![command.task]);
                    disk.iter_mut().for_each(|u| u.relocate(&from, &to));
                    Ok(())
                }
                Undo::Renamed {
                    from,
                    to,
                    by,
                    changed: None,
                } => match self.root.put_back(&to, &from) {
                    Ok(PutBack::Done) => Ok(()),
                    Ok(how @ (PutBack::Occupied | PutBack::NoPlace)) => {
                        let shown = to.display();
                        let why = if how == PutBack::Occupied {
                            KeptWhy::MadeWhereMovedFrom { to: shown }
                        } else {
                            KeptWhy::PlaceGone { to: shown }
                        };
                        keep(&from, why, vec![by], after);
                        disk.iter_mut().for_each(|u| u.relocate(&from, &to));
                        Ok(())
                    }
                    Ok(PutBack::Missing) => {
                        keep(&to, KeptWhy::Gone, vec![by], after);
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
                Undo::SetAside { at, aside, by } => match self.root.put_back(&aside, &at) {
                    Ok(PutBack::Done) => Ok(()),
                    Ok(PutBack::Occupied) => {
                        dropped.push(at.clone());
                        match self.root.remove(&aside) {
                            Ok(()) => {
                                keep(&at, KeptWhy::MadeWhereRemoved, vec![by], after);
                                Ok(())
                            }
                            Err(e) => Err(e),
                        }
                    }
                    // Gone with the directory that held it.
                    Ok(PutBack::NoPlace | PutBack::Missing) => {
                        dropped.push(at.clone());
                        let _ = self.root.remove(&aside);
                        keep(&at, KeptWhy::Gone, vec![by], after);
                        Ok(())
                    }
                    // Never left in the tree under its temporary name.
                    Err(e) => {
                        dropped.push(at.clone());
                        match self.root.remove(&aside) {
                            Ok(()) | Err(FsError::NotFound { .. }) => Err(e),
                            Err(removing) => {
                                out.problems.push(e.to_string());
                                Err(removing)
                            }
                        }
                    }
                },
                Undo::Wrote {
                    at,
                    kept,
                    stamp,
                    by,
                } => {
                    let now = self.root.stamp(&at).ok().flatten();
                    if now.is_some() && now == stamp {
                        match kept {
                            Some(kept) => self.root.rename(&kept, &at),
                            None => self.root.remove(&at),
                        }
                    } else {
                        if let Some(kept) = kept {
                            let _ = self.root.remove(&kept);
                        }
                        let why = if now.is_none() {
                            KeptWhy::Gone
                        } else {
                            KeptWhy::Written
                        };
                        keep(&at, why, by, after);
                        Ok(())
                    }
                }
            };
            if let Err(e) = undone {
                out.problems.push(e.to_string());
            }
        }
        // In the order of the tasks that made the changes.
        out.kept.reverse();
        out.kept.sort_by_key(|k| k.by.first().copied());
        // What was written and undone is no change of the run's; what a
        // command kept in place is.
        if let Some(w) = &self.written {
            let kept: HashSet<&str> = out.kept.iter().map(|k| k.path.as_str()).collect();
            w.borrow_mut().truncate(tx.written, &kept);
        }
        out
    }

    /// Carries out the pending steps and writes every changed file once.
    /// Afterwards the view is empty. Returns what failed, with the tasks
    /// whose changes they were.
    pub(crate) fn flush(&self) -> Vec<Failed> {
        // What it is about to write, against the disk before it does.
        let changes = self.written.as_ref().map(|_| self.changes());
        let mut unwritten: HashSet<String> = HashSet::new();
        let mut st = self.state.borrow_mut();
        let steps = std::mem::take(&mut st.steps);
        let nodes = std::mem::take(&mut st.nodes);
        let mut files = Vec::new();
        each_entry(&nodes, |at, node| {
            if let Node::File(f) = node
                && f.dirty
            {
                files.push(at());
            }
        });
        let mut disk = Vec::new();
        let keep = st.tx.is_some();
        let mut failed = Vec::new();
        for step in steps {
            // The paths of the change it makes, for the report.
            let paths = match (&changes, &step) {
                (None, _) => Vec::new(),
                (_, Step::Mkdir { at, .. } | Step::Remove { at, .. }) => vec![at.display()],
                (_, Step::Rename { from, to, .. }) => vec![from.display(), to.display()],
            };
            let (by, done) = match step {
                Step::Mkdir { at, by } => (by, self.make_dirs_on_disk(&at, keep, by, &mut disk)),
                Step::Rename { from, to, by } => {
                    (by, self.move_on_disk(&from, &to, keep, by, &mut disk))
                }
                Step::Remove { at, by } => (
                    by,
                    if keep {
                        self.root.set_aside(&at).map(|aside| {
                            disk.push(Undo::SetAside { at, aside, by });
                        })
                    } else {
                        self.root.remove(&at)
                    },
                ),
            };
            if let Err(error) = done {
                unwritten.extend(paths);
                failed.push(Failed {
                    by: vec![by],
                    error,
                });
            }
        }
        for at in files {
            let Some(Node::File(f)) = nodes.get(&at) else {
                continue;
            };
            let Some(data) = f.contents() else { continue };
            let written = self.write_on_disk(&at, data.as_bytes(), f.present, keep, &f.by);
            match written {
                Ok(Some(undo)) => disk.push(undo),
                Ok(None) => {}
                Err(error) => {
                    if changes.is_some() {
                        unwritten.insert(at.display());
                    }
                    failed.push(Failed {
                        by: f.by.clone(),
                        error,
                    });
                }
            }
        }
        // What was written, for the report: not what failed.
        if let (Some(w), Some(changes)) = (&self.written, changes) {
            let mut w = w.borrow_mut();
            for c in changes {
                let failed = match &c {
                    Change::File { path, .. }
                    | Change::Removed { path, .. }
                    | Change::Dir { path } => unwritten.contains(path),
                    Change::Moved { from, to } => {
                        unwritten.contains(from) || unwritten.contains(to)
                    }
                };
                if !failed {
                    w.add(c);
                }
            }
        }
        if let Some(tx) = &mut st.tx {
            tx.disk.append(&mut disk);
            tx.undo.clear();
            tx.kept.clear();
            tx.steps = 0;
        }
        failed
    }

    fn make_dirs_on_disk(
        &self,
        at: &Location,
        keep: bool,
        by: By,
        disk: &mut Vec<Undo>,
    ) -> Result<(), FsError> {
        if keep {
            let (dirs, next) = self.root.dirs_along(at, 0);
            if next?.is_none() && dirs < at.parts().len() {
                disk.push(Undo::Made {
                    at: at.clone(),
                    from: dirs + 1,
                    by,
                });
            }
        }
        self.root.make_dirs(at)
    }

    fn move_on_disk(
        &self,
        from: &Location,
        to: &Location,
        keep: bool,
        by: By,
        disk: &mut Vec<Undo>,
    ) -> Result<(), FsError> {
        if keep {
            if let Some(parent) = to.parent() {
                self.make_dirs_on_disk(&parent, keep, by, disk)?;
            }
            if self.root.kind(to)?.is_some() {
                let aside = self.root.set_aside(to)?;
                disk.push(Undo::SetAside {
                    at: to.clone(),
                    aside,
                    by,
                });
            }
        }
        self.root.rename(from, to)?;
        if keep {
            disk.push(Undo::Renamed {
                from: from.clone(),
                to: to.clone(),
                by,
                changed: None,
            });
        }
        Ok(())
    }

    /// Writes `data` as the file `at`; with `keep`, returns how to undo it.
    fn write_on_disk(
        &self,
        at: &Location,
        data: &[u8],
        present: Option<Stamp>,
        keep: bool,
        by: &[By],
    ) -> Result<Option<Undo>, FsError> {
        let prepared = self.root.prepare_write(at)?;
        let kept = match (keep, present) {
            (true, Some(_)) => Some(self.root.keep_copy(at)?),
            _ => None,
        };
        match prepared.commit_expecting(data, present) {
            Ok(_) if keep => {
                let stamp = self.root.stamp(at).ok().flatten();
                Ok(Some(Undo::Wrote {
                    at: at.clone(),
                    kept,
                    stamp,
                    by: by.to_vec(),
                }))
            }
            Ok(_) => Ok(None),
            Err(e) => {
                if let Some(kept) = kept {
                    let _ = self.root.remove(&kept);
                }
                Err(e)
            }
        }
    }

    /// What the pending changes would do to the disk, path by path, in
    /// one walk over the view. What is on disk is asked once for each
    /// entry at most, and not at all below what the disk does not have.
    pub(crate) fn changes(&self) -> Vec<Change> {
        /// A slot on the way to the one visited.
        struct Frame<'m> {
            name: Option<&'m str>,
            /// It or one above it is removed.
            removed: bool,
            /// What the disk has at its path, once asked.
            disk: Option<Option<Kind>>,
        }
        let st = self.state.borrow();
        // What came from where: a path whose thing moved elsewhere is
        // reported as a move, not a removal.
        let mut origins: HashSet<&Location> = HashSet::new();
        st.nodes.walk(|v| {
            if let Visit::Enter {
                entry: Some(node), ..
            } = v
                && let Some(origin) = origin_of(node)
            {
                origins.insert(origin);
            }
            true
        });
        let mut out = Vec::new();
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let location = |anchor: Anchor, stack: &[Frame<'_>]| Location {
            anchor,
            parts: stack
                .iter()
                .filter_map(|f| f.name.map(str::to_owned))
                .collect(),
        };
        st.nodes.walk(|v| {
            let Visit::Enter {
                anchor,
                name,
                entry,
                holds,
            } = v
            else {
                stack.pop();
                return true;
            };
            let (above_removed, above_disk) =
                stack.last().map_or((false, None), |f| (f.removed, f.disk));
            stack.push(Frame {
                name,
                removed: above_removed || matches!(entry, Some(Node::Absent)),
                disk: None,
            });
            let Some(node) = entry else { return true };
            // What is on disk here: nothing below what is not a directory
            // there (the disk is not asked again).
            let on_disk = |stack: &mut Vec<Frame<'_>>| -> Option<Kind> {
                let known = stack.last().and_then(|f| f.disk);
                let kind = match (known, above_disk) {
                    (Some(kind), _) => kind,
                    (None, Some(above)) if above != Some(Kind::Dir) => None,
                    (None, _) => self.root.kind(&location(anchor, stack)).ok().flatten(),
                };
                if let Some(f) = stack.last_mut() {
                    f.disk = Some(kind);
                }
                kind
            };
            let here = |o: &Location| {
                o.anchor == anchor
                    && o.parts()
                        .iter()
                        .map(String::as_str)
                        .eq(stack.iter().filter_map(|f| f.name))
            };
            let origin = origin_of(node);
            let mut path = None;
            let mut path_of = |stack: &[Frame<'_>]| -> String {
                path.get_or_insert_with(|| location(anchor, stack).display())
                    .clone()
            };
            // Where what is here was on disk, when it was moved here.
            let moved = origin.filter(|o| !here(o));
            if let Some(from) = moved {
                out.push(Change::Moved {
                    from: from.display(),
                    to: path_of(&stack),
                });
            }
            // What is on disk here and is neither kept here nor moved.
            let gone = match (above_removed, origin.is_some_and(here)) {
                (false, false) => {
                    on_disk(&mut stack).filter(|_| !origins.contains(&location(anchor, &stack)))
                }
                _ => None,
            };
            match (gone, node) {
                // A file replaced by a file is a change of contents.
                (Some(Kind::File), Node::File(_)) => {}
                (Some(kind), _) => {
                    let path = path_of(&stack);
                    // A file's lines go with it (read through the root,
                    // as any file: never through a link).
                    let diff = (kind == Kind::File).then(|| {
                        let old = self.old_contents(&location(anchor, &stack));
                        self.diff(&path, &path, Some(old), None)
                    });
                    out.push(Change::Removed { path, kind, diff });
                }
                (None, _) => {}
            }
            if let Node::Dir { origin: None } = node
                && !holds
            {
                out.push(Change::Dir {
                    path: path_of(&stack),
                });
            }
            if let Node::File(file) = node
                && file.dirty
                && let Some(data) = file.contents()
            {
                let path = path_of(&stack);
                // Against what is at this path on disk now, else (a file
                // moved here) what it was where it came from.
                let (old, from) = match above_removed {
                    false if on_disk(&mut stack) == Some(Kind::File) => (
                        Some(self.old_contents(&location(anchor, &stack))),
                        path.clone(),
                    ),
                    _ => match moved {
                        Some(o) => (Some(self.old_contents(o)), o.display()),
                        None => (None, path.clone()),
                    },
                };
                // Written as it was: nothing changed.
                if let Some(Old::Read(old)) = &old
                    && old.as_slice() == data.as_bytes()
                {
                    return true;
                }
                let created = old.is_none();
                // The new contents are the view's own, never read back.
                let diff = self.diff(&from, &path, old, Some(data.as_bytes()));
                out.push(Change::File {
                    path,
                    created,
                    diff,
                    #[cfg(test)]
                    new: data.as_bytes().to_vec(),
                });
            }
            true
        });
        out
    }
}

/// What a file held before the run changed it, for its diff.
enum Old {
    Read(Vec<u8>),
    /// Larger than [`OLD_READ`]: only its lines, counted as it was read.
    Large {
        lines: usize,
    },
}

/// How much of a file's old contents is read for its diff: past this, its
/// lines are counted (memory stays flat) and its diff is left out.
const OLD_READ: usize = 16 << 20;

impl View<'_> {
    /// The contents of the file at `at` on disk, read through the root as
    /// every read is (never through a link); nothing when it cannot be read.
    fn old_contents(&self, at: &Location) -> Old {
        let Ok(mut file) = self.root.open(at) else {
            return Old::Read(Vec::new());
        };
        let mut head = Vec::new();
        let limit = u64::try_from(OLD_READ)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        if (&mut file).take(limit).read_to_end(&mut head).is_err() || head.len() <= OLD_READ {
            return Old::Read(head);
        }
        let mut lines = head.iter().filter(|&&b| b == b'\n').count();
        let mut last = head.last().copied();
        let mut buf = vec![0; 1 << 16];
        while let Ok(n @ 1..) = file.read(&mut buf) {
            let chunk = buf.get(..n).unwrap_or_default();
            lines += chunk.iter().filter(|&&b| b == b'\n').count();
            last = chunk.last().copied().or(last);
        }
        lines += usize::from(last.is_some_and(|b| b != b'\n'));
        Old::Large { lines }
    }

    /// The change from `old` at `from` to `new` at `to` (`None`: no file).
    fn diff(&self, from: &str, to: &str, old: Option<Old>, new: Option<&[u8]>) -> Diff {
        match old {
            None => Diff::of(from, to, None, new, &self.diffs),
            Some(Old::Read(old)) => Diff::of(from, to, Some(&old), new, &self.diffs),
            Some(Old::Large { lines }) => Diff::unread(lines, new),
        }
    }
}

/// Where what is at an entry is on disk now, if it came from there.
fn origin_of(node: &Node) -> Option<&Location> {
    match node {
        Node::File(f) => f.origin.as_ref(),
        Node::Dir { origin } => origin.as_ref(),
        Node::Other { origin, .. } => Some(origin),
        Node::Absent => None,
    }
}

/// Calls `f` with every entry of the view, in the order of the paths,
/// and a way to make its location: made only when asked for.
fn each_entry<'m>(nodes: &'m PathMap<Node>, mut f: impl FnMut(&dyn Fn() -> Location, &'m Node)) {
    let mut stack: Vec<Option<&'m str>> = Vec::new();
    nodes.walk(|v| {
        match v {
            Visit::Enter {
                anchor,
                name,
                entry,
                ..
            } => {
                stack.push(name);
                if let Some(node) = entry {
                    let location = || Location {
                        anchor,
                        parts: stack.iter().flatten().map(|n| (*n).to_owned()).collect(),
                    };
                    f(&location, node);
                }
            }
            Visit::Leave => {
                stack.pop();
            }
        }
        true
    });
}

/// Moves the paths at or below `from` to the same places below `to`.
fn relocate(paths: &mut [Location], from: &Location, to: &Location) {
    for p in paths {
        if p == from || from.is_ancestor_of(p) {
            *p = p.rebased(from.parts().len(), to);
        }
    }
}

fn add(list: &mut Vec<By>, by: By) {
    if list.last() != Some(&by) {
        list.push(by);
    }
}

impl Tree for View<'_> {
    fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
        let st = self.state.borrow();
        self.kind_in(&st, at)
    }

    fn read(&self, at: &Location) -> Result<Vec<u8>, FsError> {
        View::contents(self, at).map(|b| b.as_bytes().to_vec())
    }

    fn contents(&self, at: &Location) -> Result<Content, FsError> {
        View::contents(self, at)
    }

    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError> {
        // What the run has not changed is read from the disk as it comes
        // (a dry run's `grep -r` keeps no tree in memory).
        if let Seen::Disk(on_disk) = self.seen(at)? {
            let file = Tree::open(self.root, &on_disk);
            return file.map_err(|e| moved(e, &on_disk, at));
        }
        let data = View::contents(self, at)?;
        Ok(Box::new(std::io::Cursor::new(data.as_bytes().to_vec())))
    }

    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        Ok(View::list(self, at)?
            .into_iter()
            .map(|(name, kind)| Entry { name, kind })
            .collect())
    }

    fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        let root = self.root;
        match self.seen(at)? {
            Seen::Disk(on_disk) => root.metadata(&on_disk).map_err(|e| moved(e, &on_disk, at)),
            Seen::File { origin } => {
                let size = View::contents(self, at)?.as_bytes().len() as u64;
                let mut meta = Meta::planned(Kind::File, size);
                // An edited file keeps its permission bits (PROTOCOL §3).
                if let Some(old) = origin.and_then(|o| root.metadata(&o).ok()) {
                    (meta.mode, meta.nlink) = (old.mode, old.nlink);
                    (meta.uid, meta.gid) = (old.uid, old.gid);
                    (meta.dev, meta.ino) = (old.dev, old.ino);
                }
                Ok(meta)
            }
            Seen::NewDir => Ok(Meta::planned(Kind::Dir, 4096)),
            Seen::Nothing => Err(FsError::NotFound { path: at.display() }),
        }
    }

    fn read_link(&self, at: &Location) -> Result<String, FsError> {
        match self.seen(at)? {
            Seen::Disk(on_disk) => self
                .root
                .read_link(&on_disk)
                .map_err(|e| moved(e, &on_disk, at)),
            Seen::Nothing => Err(FsError::NotFound { path: at.display() }),
            Seen::File { .. } | Seen::NewDir => Err(FsError::Os {
                path: at.display(),
                op: "read the link",
                errno: rustix::io::Errno::INVAL,
            }),
        }
    }

    fn check_dir(&self, at: &Location) -> Result<(), FsError> {
        // As the plan has it: made, moved or removed by earlier tasks.
        match self.found(at)? {
            Kind::Dir => Ok(()),
            Kind::Symlink => Err(FsError::Symlink { path: at.display() }),
            _ => Err(FsError::NotDirectory { path: at.display() }),
        }
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        self.root.check_lands(at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        self.root.check_lands(at)?;
        // A `.git` cannot be made by a task: what a directory holds of
        // one is on disk, where the directory came from.
        let st = self.state.borrow();
        match place(&st.nodes, at)? {
            Place::Disk(on_disk) => self.root.check_takes_away(&on_disk),
            Place::Node => match st.nodes.get(at) {
                Some(Node::Dir {
                    origin: Some(origin),
                }) => self.root.check_takes_away(origin),
                _ => self.root.check_takes_away_shallow(at),
            },
            Place::Nowhere => self.root.check_takes_away_shallow(at),
        }
    }
}

/// An error about what is on disk at `on_disk`, about `at` where the view
/// has it (moved there by an earlier task).
fn moved(e: FsError, on_disk: &Location, at: &Location) -> FsError {
    if on_disk == at {
        e
    } else {
        e.about(&at.display())
    }
}

/// A dry run's view, as the task `by` changes it: what a built-in
/// command that changes the tree changes in a dry run (PROTOCOL §7).
pub(crate) struct Planned<'v, 'r> {
    pub(crate) view: &'v View<'r>,
    pub(crate) by: By,
}

impl Tree for Planned<'_, '_> {
    fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
        self.view.kind(at)
    }

    fn read(&self, at: &Location) -> Result<Vec<u8>, FsError> {
        self.view.read(at)
    }

    fn contents(&self, at: &Location) -> Result<Content, FsError> {
        View::contents(self.view, at)
    }

    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError> {
        self.view.open(at)
    }

    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        Tree::list(self.view, at)
    }

    fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        self.view.metadata(at)
    }

    fn read_link(&self, at: &Location) -> Result<String, FsError> {
        self.view.read_link(at)
    }

    fn check_dir(&self, at: &Location) -> Result<(), FsError> {
        self.view.check_dir(at)
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        self.view.check_lands(at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        self.view.check_takes_away(at)
    }
}

impl TreeMut for Planned<'_, '_> {
    fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        self.view.create_dir(at, self.by)
    }

    fn create_dirs(
        &self,
        at: &Location,
        step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        self.view.create_dirs(at, self.by, step)
    }

    fn write(&self, at: &Location, data: &[u8]) -> Result<(), FsError> {
        self.view
            .write(at, Content::from_bytes(data.to_vec()), self.by)
            .map(drop)
    }

    fn copy_file(&self, from: &Location, to: &Location) -> Option<Result<u64, FsError>> {
        // The copy shares the contents in memory: a plan of many copies
        // costs no more than the files it read.
        Some(View::contents(self.view, from).and_then(|data| {
            let bytes = data.as_bytes().len() as u64;
            self.view.write(to, data, self.by).map(|_| bytes)
        }))
    }

    fn remove(&self, at: &Location) -> Result<(), FsError> {
        self.view.remove(at, self.by)
    }

    fn rename(&self, from: &Location, to: &Location) -> Result<(), FsError> {
        self.view.rename(from, to, self.by)
    }

    fn touch(&self, at: &Location, _access: bool, _modify: bool) -> Result<(), FsError> {
        // Times are not part of the plan: only that something is there.
        self.found(at).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::syntax::Count;

    const BY: By = By { unit: 1, task: 1 };

    fn at(p: &str) -> Location {
        Location::below_root(&p.split('/').collect::<Vec<_>>())
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        dir
    }

    #[test]
    fn the_index_takes_the_first_lines_in_when_an_edit_needs_the_tier() {
        let file =
            "class A:\n    def f(self):\n        return 1\n    def g(self):\n        return 2\n";
        let dir = tree(&[("a.py", file)]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        let exact = Search::text("        return 2\n", "        return 3\n", Count::default());
        let shifted = Search::text(
            "def f(self):\n    return 1\n",
            "def f(self):\n    return 4\n",
            Count::default(),
        );
        view.expect([(at("a.py"), exact), (at("a.py"), shifted)].into_iter());
        let by = By { unit: 1, task: 1 };
        let s = view.find_edit(&at("a.py"), exact).unwrap();
        assert!(matches!(s, Splice::Indexed(_)));
        view.splice(&at("a.py"), &s, by).unwrap();
        let s = view.find_edit(&at("a.py"), shifted).unwrap();
        let Splice::Indexed(p) = &s else {
            panic!("not from the index: {s:?}");
        };
        assert_eq!(p.how.matched, crate::status::Matched::Whitespace);
        view.splice(&at("a.py"), &s, by).unwrap();
        let Ok(Content::Text(t)) = view.contents(&at("a.py")) else {
            panic!("no text");
        };
        assert_eq!(
            t.text,
            "class A:\n    def f(self):\n        return 4\n    def g(self):\n        return 3\n"
        );
    }

    #[test]
    fn the_index_takes_the_replacements_in_when_an_edit_misses() {
        let dir = tree(&[("a.txt", "one\ntwo\nthree\nfour\nfive\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        let once = Count::Exactly(std::num::NonZeroUsize::MIN);
        let first = Search::text("one\ntwo\n", "one\n2\n", once);
        let again = Search::text("four\nfive\n", "four\n5\n", once);
        view.expect(
            [
                (at("a.txt"), first),
                (at("a.txt"), again),
                (at("a.txt"), first),
            ]
            .into_iter(),
        );
        let by = By { unit: 1, task: 1 };
        let with_replacements = |view: &View<'_>| {
            let st = view.state.borrow();
            let Some(Node::File(f)) = st.nodes.get(&at("a.txt")) else {
                panic!("no file");
            };
            let edits = f.edits.as_ref().expect("indexed");
            edits.has_replacements_of(view.expected.borrow().generation)
        };
        for search in [first, again] {
            let s = view.find_edit(&at("a.txt"), search).unwrap();
            assert!(matches!(s, Splice::Indexed(_)));
            view.splice(&at("a.txt"), &s, by).unwrap();
        }
        // Edits that apply never need the replacements.
        assert!(!with_replacements(&view));
        // The first again: its search text is gone, its replacement there.
        let TaskError::Mismatch { mismatch, .. } = view.find_edit(&at("a.txt"), first).unwrap_err()
        else {
            panic!("not a mismatch");
        };
        assert!(mismatch.already_applied);
        assert!(with_replacements(&view));
    }

    #[test]
    fn failed_edits_stop_looking_for_the_closest_region_once_the_hints_are_spent() {
        let dir = tree(&[("a.txt", "fn main() {\n    println!(\"hello\");\n}\n")]);
        let root = Root::open(dir.path()).unwrap();
        for index_from in [1, usize::MAX] {
            let mut view = View::new(&root, index_from);
            // One file of 38 bytes: the first failure reads it all.
            view.hints = HintBudget::new(10);
            let miss = Search::text(
                "    println!(\"helo\");\n",
                "x\n",
                Count::Exactly(std::num::NonZeroUsize::MIN),
            );
            view.expect([(at("a.txt"), miss), (at("a.txt"), miss)].into_iter());
            let mismatch = |e: TaskError| match e {
                TaskError::Mismatch { mismatch, .. } => mismatch,
                other => panic!("not a mismatch: {other:?}"),
            };
            let first = mismatch(view.find_edit(&at("a.txt"), miss).unwrap_err());
            assert!(first.closest.is_some() && !first.closest_skipped);
            let second = mismatch(view.find_edit(&at("a.txt"), miss).unwrap_err());
            assert!(second.closest.is_none() && second.closest_skipped);
            assert_eq!((second.found, second.replacement_present), (0, Some(false)));
            // Chunks with an index (from 1 coming edit) or the whole text.
            let st = view.state.borrow();
            let indexed =
                matches!(st.nodes.get(&at("a.txt")), Some(Node::File(f)) if f.edits.is_some());
            assert_eq!(indexed, index_from == 1);
        }
    }

    /// Every file below `dir`, with its contents.
    fn files(dir: &Path) -> BTreeMap<String, String> {
        fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                if p.is_dir() {
                    out.insert(format!("{rel}/"), String::new());
                    walk(base, &p, out);
                } else {
                    out.insert(rel, std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(dir, dir, &mut out);
        out
    }

    #[test]
    fn a_file_is_read_once_and_written_once() {
        let dir = tree(&[("a.txt", "one\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        let first = view.contents(&at("a.txt")).unwrap();
        let again = view.contents(&at("a.txt")).unwrap();
        let (Content::Text(first), Content::Text(again)) = (first, again) else {
            panic!("not text");
        };
        assert!(Rc::ptr_eq(&first, &again));
        drop((first, again));
        view.write(&at("a.txt"), Content::text("two\n".into()), BY)
            .unwrap();
        view.write(&at("a.txt"), Content::text("three\n".into()), BY)
            .unwrap();
        // Nothing is on disk before the flush.
        assert_eq!(files(dir.path())["a.txt"], "one\n");
        assert!(view.flush().is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("a.txt".into(), "three\n".into())])
        );
        assert!(!view.pending());
    }

    #[test]
    fn a_flush_records_what_it_wrote_and_a_large_file_is_counted_not_read_whole() {
        let big = "x\n".repeat(OLD_READ / 2 + 1);
        let dir = tree(&[("a.txt", "one\n"), ("big.txt", &big), ("keep.txt", "k\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1).recording(true);
        view.write(&at("a.txt"), Content::text("two\n".into()), BY)
            .unwrap();
        view.remove(&at("big.txt"), BY).unwrap();
        // Written as it was: no change.
        view.write(&at("keep.txt"), Content::text("k\n".into()), BY)
            .unwrap();
        assert!(view.flush().is_empty());
        let written = view.written();
        let [
            Change::File {
                path: a,
                created: false,
                diff: d,
                ..
            },
            Change::Removed {
                path: b,
                diff: Some(gone),
                ..
            },
        ] = written.as_slice()
        else {
            panic!("{written:?}");
        };
        assert_eq!((a.as_str(), d.added, d.removed), ("a.txt", 1, 1));
        assert_eq!(b, "big.txt");
        assert_eq!(
            (gone.removed, gone.added, gone.text.as_deref()),
            (OLD_READ / 2 + 1, 0, None)
        );
        assert!(gone.omitted > 0);
        // Taken once.
        assert!(view.written().is_empty());
    }

    #[test]
    fn a_file_changed_on_disk_after_it_was_read_is_left_alone() {
        let dir = tree(&[("a.txt", "one\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.contents(&at("a.txt")).unwrap();
        view.write(&at("a.txt"), Content::text("mine\n".into()), BY)
            .unwrap();
        // Another writer, meanwhile (a different size: the stamp differs
        // even within one tick of the clock).
        std::fs::write(dir.path().join("a.txt"), "theirs, longer\n").unwrap();
        let failed = view.flush();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].by, vec![BY]);
        assert!(
            matches!(failed[0].error, FsError::Changed { .. }),
            "{:?}",
            failed[0].error
        );
        // Their work is there, and no temporary file.
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("a.txt".into(), "theirs, longer\n".into())])
        );
    }

    #[test]
    fn a_new_file_that_appeared_meanwhile_is_not_replaced() {
        let dir = tree(&[]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        assert_eq!(
            view.write(&at("n.txt"), Content::text("mine\n".into()), BY)
                .unwrap(),
            Written::Created
        );
        std::fs::write(dir.path().join("n.txt"), "theirs\n").unwrap();
        let failed = view.flush();
        assert!(matches!(failed[0].error, FsError::Changed { .. }));
        assert_eq!(files(dir.path())["n.txt"], "theirs\n");
    }

    #[test]
    fn what_was_moved_is_read_where_it_was() {
        let dir = tree(&[("d/x", "x\n"), ("d/y", "y\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.rename(&at("d"), &at("e"), BY).unwrap();
        assert_eq!(view.kind_in(&view.state.borrow(), &at("d")).unwrap(), None);
        assert_eq!(view.contents(&at("e/x")).unwrap().as_bytes(), b"x\n");
        view.write(&at("e/x"), Content::text("x2\n".into()), BY)
            .unwrap();
        view.remove(&at("e/y"), BY).unwrap();
        view.write(&at("d/new"), Content::text("n\n".into()), BY)
            .unwrap();
        // Nothing changed on disk yet.
        assert_eq!(files(dir.path()).len(), 3);
        assert!(view.flush().is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("d/".into(), String::new()),
                ("d/new".into(), "n\n".into()),
                ("e/".into(), String::new()),
                ("e/x".into(), "x2\n".into()),
            ])
        );
    }

    #[test]
    fn a_new_file_moved_is_written_where_it_ends() {
        let dir = tree(&[("old", "old\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.write(&at("n"), Content::text("n\n".into()), BY)
            .unwrap();
        view.rename(&at("n"), &at("old"), BY).unwrap();
        assert!(view.flush().is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("old".into(), "n\n".into())])
        );
    }

    #[test]
    fn a_listing_is_the_disk_as_the_view_changed_it() {
        let dir = tree(&[("d/a", "a\n"), ("d/b", "b\n"), ("d/c/x", "x\n")]);
        let before = files(dir.path());
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.remove(&at("d/a"), BY).unwrap();
        view.write(&at("d/n"), Content::text("n\n".into()), BY)
            .unwrap();
        assert!(view.create_dir(&at("d/m"), BY).unwrap());
        assert!(!view.create_dir(&at("d/m"), BY).unwrap());
        assert!(matches!(
            view.create_dir(&at("d/b"), BY),
            Err(FsError::NotDirectory { .. })
        ));
        assert!(matches!(
            view.create_dir(&at("no/m"), BY),
            Err(FsError::NotFound { .. })
        ));
        view.rename(&at("d"), &at("e"), BY).unwrap();
        let names = |p: &str| -> Vec<String> {
            view.list(&at(p))
                .unwrap()
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names("e"), ["b", "c", "m", "n"]);
        assert_eq!(names("e/c"), ["x"]);
        assert!(matches!(view.list(&at("d")), Err(FsError::NotFound { .. })));
        assert!(matches!(
            view.list(&at("e/b")),
            Err(FsError::NotDirectory { .. })
        ));
        // Nothing was written.
        assert_eq!(files(dir.path()), before);
    }

    #[test]
    fn a_rollback_undoes_what_a_flush_wrote() {
        let start = [("a", "a\n"), ("c", "c\n"), ("d/x", "x\n"), ("t", "t\n")];
        let dir = tree(&start);
        let before = files(dir.path());
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.write(&at("a"), Content::text("A\n".into()), BY)
            .unwrap();
        view.write(&at("new/b"), Content::text("b\n".into()), BY)
            .unwrap();
        view.remove(&at("c"), BY).unwrap();
        view.remove(&at("d/x"), BY).unwrap();
        view.rename(&at("d"), &at("e"), BY).unwrap();
        view.rename(&at("a"), &at("t"), BY).unwrap();
        assert!(view.flush().is_empty());
        assert_ne!(files(dir.path()), before);
        let undone = view.rollback();
        assert!(
            undone.kept.is_empty() && undone.problems.is_empty(),
            "{undone:?}"
        );
        assert_eq!(files(dir.path()), before);
    }

    #[test]
    fn a_commit_leaves_no_temporary_file() {
        let dir = tree(&[("a", "a\n"), ("d/x", "x\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.write(&at("a"), Content::text("A\n".into()), BY)
            .unwrap();
        view.remove(&at("d/x"), BY).unwrap();
        view.rename(&at("d"), &at("e"), BY).unwrap();
        assert!(view.flush().is_empty());
        assert!(view.commit().is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("a".into(), "A\n".into()), ("e/".into(), String::new())])
        );
    }

    #[test]
    fn a_rollback_keeps_what_changed_after_the_flush() {
        let dir = tree(&[("a", "a\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.write(&at("a"), Content::text("A\n".into()), BY)
            .unwrap();
        assert!(view.flush().is_empty());
        // A command changes the file the tasks wrote.
        std::fs::write(dir.path().join("a"), "by the command\n").unwrap();
        let undone = view.rollback();
        assert_eq!(kept(&undone), [("a".to_owned(), KeptWhy::Written)]);
        assert!(undone.problems.is_empty(), "{undone:?}");
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("a".into(), "by the command\n".into())])
        );
    }

    const COMMAND: By = By { unit: 1, task: 2 };

    fn kept(undone: &Undone) -> Vec<(String, KeptWhy)> {
        undone
            .kept
            .iter()
            .map(|k| (k.path.clone(), k.why.clone()))
            .collect()
    }

    /// Flushes the view, runs `command` on the tree as a command would,
    /// and rolls back.
    fn roll_back_after(view: &View<'_>, dir: &Path, command: impl FnOnce(&Path)) -> Undone {
        assert!(view.flush().is_empty());
        let before = view.before_command();
        command(dir);
        view.after_command(before, COMMAND);
        let undone = view.rollback();
        assert!(undone.problems.is_empty(), "{undone:?}");
        for k in &undone.kept {
            assert_eq!(k.by, [BY]);
            assert_eq!(k.commands, [COMMAND.task]);
        }
        undone
    }

    #[test]
    fn a_rollback_never_puts_a_removed_file_back_over_what_a_command_made() {
        let dir = tree(&[("f.txt", "old\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.remove(&at("f.txt"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::write(d.join("f.txt"), "command\n").unwrap();
        });
        assert_eq!(
            kept(&undone),
            [("f.txt".to_owned(), KeptWhy::MadeWhereRemoved)]
        );
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("f.txt".into(), "command\n".into())])
        );
    }

    #[test]
    fn a_rollback_never_moves_a_file_back_over_what_a_command_made() {
        let dir = tree(&[("f.txt", "old\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.rename(&at("f.txt"), &at("g.txt"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::write(d.join("f.txt"), "command\n").unwrap();
        });
        assert_eq!(
            kept(&undone),
            [(
                "f.txt".to_owned(),
                KeptWhy::MadeWhereMovedFrom { to: "g.txt".into() }
            )]
        );
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("f.txt".into(), "command\n".into()),
                ("g.txt".into(), "old\n".into())
            ])
        );
    }

    #[test]
    fn a_directory_set_aside_is_deleted_when_a_command_made_a_new_one() {
        let dir = tree(&[("d/x", "old\n"), ("d/e/y", "old\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.write(&at("d/x"), Content::text("tasks\n".into()), BY)
            .unwrap();
        assert!(view.flush().is_empty());
        view.remove(&at("d"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::create_dir(d.join("d")).unwrap();
            std::fs::write(d.join("d/z"), "command\n").unwrap();
        });
        // What was written in the directory went with it: one note.
        assert_eq!(kept(&undone), [("d".to_owned(), KeptWhy::MadeWhereRemoved)]);
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("d/".into(), String::new()),
                ("d/z".into(), "command\n".into())
            ])
        );
    }

    #[test]
    fn a_moved_directory_a_command_changed_stays_where_the_command_left_it() {
        let dir = tree(&[("d/x", "old\n"), ("d/y", "y\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        // The tasks' own write inside it is still undone.
        view.write(&at("d/x"), Content::text("tasks\n".into()), BY)
            .unwrap();
        view.rename(&at("d"), &at("e"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::write(d.join("e/y"), "command\n").unwrap();
        });
        assert_eq!(
            kept(&undone),
            [("e".to_owned(), KeptWhy::MovedHere { from: "d".into() })]
        );
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("e/".into(), String::new()),
                ("e/x".into(), "old\n".into()),
                ("e/y".into(), "command\n".into())
            ])
        );
    }

    #[test]
    fn a_moved_directory_stays_when_a_command_made_a_new_one_where_it_was() {
        let dir = tree(&[("d/x", "old\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.rename(&at("d"), &at("e"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::create_dir(d.join("d")).unwrap();
        });
        assert_eq!(
            kept(&undone),
            [(
                "d".to_owned(),
                KeptWhy::MadeWhereMovedFrom { to: "e".into() }
            )]
        );
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("d/".into(), String::new()),
                ("e/".into(), String::new()),
                ("e/x".into(), "old\n".into())
            ])
        );
    }

    #[test]
    fn what_a_command_removed_after_the_tasks_changed_it_stays_removed() {
        let dir = tree(&[("a", "a\n"), ("d/x", "x\n"), ("d/y", "y\n"), ("m/z", "z\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.write(&at("a"), Content::text("A\n".into()), BY)
            .unwrap();
        view.remove(&at("d/x"), BY).unwrap();
        view.rename(&at("m"), &at("n"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::remove_file(d.join("a")).unwrap();
            std::fs::remove_dir_all(d.join("d")).unwrap();
            std::fs::remove_dir_all(d.join("n")).unwrap();
        });
        assert_eq!(
            kept(&undone),
            [
                ("d/x".to_owned(), KeptWhy::Gone),
                ("n".to_owned(), KeptWhy::Gone),
                ("a".to_owned(), KeptWhy::Gone)
            ]
        );
        assert_eq!(files(dir.path()), BTreeMap::new());
    }

    #[test]
    fn nothing_is_put_back_through_a_link_a_command_put_in_place_of_a_directory() {
        let dir = tree(&[("a/f.txt", "f\n"), ("a/r.txt", "r\n")]);
        let outside = tempfile::tempdir().unwrap();
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.rename(&at("a/f.txt"), &at("g.txt"), BY).unwrap();
        view.remove(&at("a/r.txt"), BY).unwrap();
        let target = outside.path().to_path_buf();
        let undone = roll_back_after(&view, dir.path(), move |d| {
            std::fs::remove_dir_all(d.join("a")).unwrap();
            std::os::unix::fs::symlink(&target, d.join("a")).unwrap();
        });
        assert_eq!(
            kept(&undone),
            [
                (
                    "a/f.txt".to_owned(),
                    KeptWhy::PlaceGone { to: "g.txt".into() }
                ),
                ("a/r.txt".to_owned(), KeptWhy::Gone)
            ]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("g.txt")).unwrap(),
            "f\n"
        );
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_move_no_command_changed_is_undone_though_a_command_ran() {
        let dir = tree(&[("d/x", "old\n"), ("other", "o\n")]);
        let before = files(dir.path());
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        view.rename(&at("d"), &at("e"), BY).unwrap();
        view.remove(&at("other"), BY).unwrap();
        let undone = roll_back_after(&view, dir.path(), |d| {
            std::fs::write(d.join("new"), "command\n").unwrap();
        });
        assert!(undone.kept.is_empty(), "{undone:?}");
        let mut want = before;
        want.insert("new".into(), "command\n".into());
        assert_eq!(files(dir.path()), want);
    }

    #[test]
    fn a_rollback_in_memory_forgets_the_changes() {
        let dir = tree(&[("a", "a\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.write(&at("kept"), Content::text("k\n".into()), BY)
            .unwrap();
        view.begin();
        view.write(&at("a"), Content::text("A\n".into()), BY)
            .unwrap();
        view.rename(&at("a"), &at("b"), BY).unwrap();
        view.rollback();
        assert_eq!(view.contents(&at("a")).unwrap().as_bytes(), b"a\n");
        assert!(matches!(
            view.contents(&at("b")),
            Err(FsError::NotFound { .. })
        ));
        assert!(view.flush().is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([("a".into(), "a\n".into()), ("kept".into(), "k\n".into())])
        );
    }

    #[test]
    fn a_moved_directory_keeps_every_file_reachable_under_its_new_path() {
        let dir = tree(&[
            ("d/x", "x\n"),
            ("d/s/y", "y\n"),
            ("d/s/t/z", "z\n"),
            ("e/k", "k\n"),
        ]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        // What the view holds below d: read, written, new, removed.
        view.contents(&at("d/s/y")).unwrap();
        view.write(&at("d/s/t/z"), Content::text("z2\n".into()), BY)
            .unwrap();
        view.write(&at("d/n/m/new"), Content::text("new\n".into()), BY)
            .unwrap();
        view.remove(&at("d/x"), BY).unwrap();
        view.rename(&at("d"), &at("e/deep/er/d2"), BY).unwrap();
        let read = |p: &str| view.contents(&at(p)).map(|c| c.as_bytes().to_vec());
        assert_eq!(read("e/deep/er/d2/s/y").unwrap(), b"y\n");
        assert_eq!(read("e/deep/er/d2/s/t/z").unwrap(), b"z2\n");
        assert_eq!(read("e/deep/er/d2/n/m/new").unwrap(), b"new\n");
        assert!(matches!(
            read("e/deep/er/d2/x"),
            Err(FsError::NotFound { .. })
        ));
        for gone in ["d", "d/s/y", "d/n/m/new"] {
            assert!(matches!(
                Tree::kind(&view, &at(gone)),
                Ok(None) | Err(FsError::NotFound { .. })
            ));
        }
        let names = |p: &str| -> Vec<String> {
            view.list(&at(p))
                .unwrap()
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(names("e/deep/er/d2"), ["n", "s"]);
        assert_eq!(names("e/deep/er/d2/s"), ["t", "y"]);
        // Moved on again, and edited there.
        view.rename(&at("e/deep"), &at("f"), BY).unwrap();
        view.write(&at("f/er/d2/s/y"), Content::text("y2\n".into()), BY)
            .unwrap();
        assert!(view.flush().is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("e/".into(), String::new()),
                ("e/k".into(), "k\n".into()),
                ("f/".into(), String::new()),
                ("f/er/".into(), String::new()),
                ("f/er/d2/".into(), String::new()),
                ("f/er/d2/n/".into(), String::new()),
                ("f/er/d2/n/m/".into(), String::new()),
                ("f/er/d2/n/m/new".into(), "new\n".into()),
                ("f/er/d2/s/".into(), String::new()),
                ("f/er/d2/s/t/".into(), String::new()),
                ("f/er/d2/s/t/z".into(), "z2\n".into()),
                ("f/er/d2/s/y".into(), "y2\n".into()),
            ])
        );
    }

    #[test]
    fn a_move_is_one_step_to_undo_whatever_the_directory_holds() {
        let dir = tree(&[("d/x", "x\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        view.begin();
        for i in 0..2000 {
            view.write(
                &at(&format!("d/s{}/f{i}", i % 7)),
                Content::text("f\n".into()),
                BY,
            )
            .unwrap();
        }
        let undo = || view.state.borrow().tx.as_ref().map_or(0, |t| t.undo.len());
        let before = undo();
        view.rename(&at("d"), &at("e/d"), BY).unwrap();
        // The entry taken, what is below `to` dropped and what is below
        // `from` moved, the removal left, the entry set, the parent made.
        assert!(undo() - before <= 6, "{} steps", undo() - before);
        assert_eq!(view.contents(&at("e/d/s3/f3")).unwrap().as_bytes(), b"f\n");
        view.rollback();
        assert_eq!(view.contents(&at("d/x")).unwrap().as_bytes(), b"x\n");
        assert!(matches!(Tree::kind(&view, &at("e")), Ok(None)));
        assert!(matches!(
            view.contents(&at("d/s3/f3")),
            Err(FsError::NotFound { .. })
        ));
    }

    #[test]
    fn a_deep_write_makes_its_parents_in_one_walk_and_a_rollback_removes_them() {
        let dir = tree(&[("top/keep", "k\n")]);
        let root = Root::open(dir.path()).unwrap();
        let view = View::new(&root, 1);
        let deep = format!("top/{}f", "d/".repeat(1000));
        view.begin();
        view.write(&at(&deep), Content::text("deep\n".into()), BY)
            .unwrap();
        {
            let st = view.state.borrow();
            // One step to make the 1,000 directories, one to undo it.
            assert_eq!(st.steps.len(), 1);
            let made = st.tx.as_ref().unwrap().undo.iter();
            assert_eq!(made.filter(|w| matches!(w, Was::Made { .. })).count(), 1);
        }
        let halfway = format!("top{}", "/d".repeat(600));
        assert_eq!(Tree::kind(&view, &at(&halfway)).unwrap(), Some(Kind::Dir));
        assert!(view.flush().is_empty());
        assert!(dir.path().join(&deep).is_file());
        let undone = view.rollback();
        assert!(undone.kept.is_empty() && undone.problems.is_empty());
        assert_eq!(
            files(dir.path()),
            BTreeMap::from([
                ("top/".into(), String::new()),
                ("top/keep".into(), "k\n".into())
            ])
        );
    }
}
