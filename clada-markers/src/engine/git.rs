//! The run's repository (PROTOCOL §6) and the commits before and after a
//! run (PROTOCOL §7 step 3), with libgit2.
//!
//! A commit holds what the run names and nothing else ([`Touch`]): the
//! files its tasks wrote, moved and removed, the tracked files its commands
//! changed, and before the tasks the uncommitted changes of the files they
//! are about to change. An untracked file nobody named, an ignored file,
//! what someone else staged: never committed. With the root below the
//! work tree's top, nothing outside the root is read or committed. No
//! empty commits: when the tree to commit equals `HEAD`'s, nothing is
//! committed.
//! Hooks are never run. The repository is checked ([`repo_check`]) when it
//! is found and before each commit.

use std::ffi::OsStr;
use std::path::Path;

use git2::{Repository, RepositoryOpenFlags, Signature, Status, StatusOptions, StatusShow};

use crate::engine::repo_check::{self, Depth, Layout, Refusal, RepoError};

/// Who commits: `Name <email>` or a bare name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Author {
    pub name: String,
    pub email: String,
}

impl Default for Author {
    fn default() -> Self {
        Author {
            name: "clada".to_owned(),
            email: "clada@localhost".to_owned(),
        }
    }
}

impl std::str::FromStr for Author {
    type Err = String;

    /// `Name <email>`, or a bare `Name`: git needs an email, and a bare
    /// name gets `name@localhost` (as the default `clada <clada@localhost>`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let t = text.trim();
        let bad = || format!("`{text}` is not an author: write `Name <email>` or a name");
        if t.is_empty() {
            return Err(bad());
        }
        match t.split_once('<') {
            None if t.contains('>') => Err(bad()),
            None => Ok(Author {
                name: t.to_owned(),
                email: format!("{}@localhost", t.replace(char::is_whitespace, "-")),
            }),
            Some((name, rest)) => {
                let email = rest.strip_suffix('>').ok_or_else(bad)?;
                let name = name.trim();
                if name.is_empty() || email.trim().is_empty() || email.contains(['<', '>']) {
                    return Err(bad());
                }
                Ok(Author {
                    name: name.to_owned(),
                    email: email.trim().to_owned(),
                })
            }
        }
    }
}

/// The work tree a root lies in, if it lies in one.
pub(crate) struct WorkTree {
    repo: Repository,
    /// What was checked when it was opened ([`repo_check`]).
    layout: Layout,
    /// Where the root lies below the work tree's top, `/`-separated
    /// (empty when the root is the top).
    prefix: String,
}

impl std::fmt::Debug for WorkTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkTree")
            .field("top", &self.layout.top)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl WorkTree {
    /// Finds the work tree that holds `root`, once per run, as git finds it
    /// (PROTOCOL §6): the first `.git` directory or `.git` file of `root` or
    /// of an ancestor. `Ok(None)` outside any work tree; an error when the
    /// first `.git` found belongs to a repository clada does not use
    /// ([`repo_check`]: a link, a bare repository, a work tree elsewhere,
    /// a `gitdir:` naming a foreign git directory…): git would not look
    /// further either.
    ///
    /// Never a directory that merely looks like a repository (`HEAD`,
    /// `objects/`, `refs/`): only a path named `.git` is opened, without
    /// searching further and without reading `GIT_*` environment variables
    /// (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_CEILING_DIRECTORIES`…).
    pub(crate) fn discover(root: &Path) -> Result<Option<WorkTree>, RepoError> {
        let Ok(root) = root.canonicalize() else {
            return Ok(None);
        };
        for dir in root.ancestors() {
            // As before: what cannot be seen is not there.
            if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
                return WorkTree::open(dir, &root).map(Some);
            }
        }
        Ok(None)
    }

    /// Opens the repository whose `.git` is in `top` (canonical), for the
    /// root `root` below it, checked before libgit2 opens it (what opening
    /// reads) and after (its work tree). What lies deeper is checked by
    /// [`WorkTree::check`], before each use.
    fn open(top: &Path, root: &Path) -> Result<WorkTree, RepoError> {
        let fail = |refusal| RepoError {
            top: top.to_path_buf(),
            refusal,
        };
        let layout = repo_check::layout(top, Depth::Opening).map_err(fail)?;
        let flags = RepositoryOpenFlags::NO_SEARCH | RepositoryOpenFlags::NO_DOTGIT;
        let repo = Repository::open_ext(top.join(".git"), flags, std::iter::empty::<&OsStr>())
            .map_err(|e| fail(Refusal::Open(e.message().to_owned())))?;
        repo_check::check_open(&repo, &layout).map_err(fail)?;
        let prefix = root
            .strip_prefix(top)
            .ok()
            .and_then(Path::to_str)
            .unwrap_or_default()
            .to_owned();
        Ok(WorkTree {
            repo,
            layout,
            prefix,
        })
    }

    /// Checks the repository as clada uses it, before each commit and each
    /// built-in git (a command may have changed it since it was opened):
    /// the same git directories, no link anywhere a commit reads or writes,
    /// no rules file in the work tree that git cannot read safely
    /// ([`crate::engine::tree_check`]).
    pub(crate) fn check(&self) -> Result<(), RepoError> {
        let fail = |refusal| RepoError {
            top: self.layout.top.clone(),
            refusal,
        };
        let now = repo_check::layout(&self.layout.top, Depth::Use).map_err(fail)?;
        if now != self.layout {
            return Err(fail(Refusal::Changed(now.git_dir)));
        }
        // The rules files libgit2 reads in the work tree as it walks it.
        crate::engine::tree_check::check(
            &self.repo,
            &self.layout.top,
            &self.prefix,
            &self.layout.common_dir,
        )
        .map_err(fail)
    }

    /// The run's one repository: the built-in git reads it, the commits go
    /// to it, the default lock is named after it.
    pub(crate) fn repository(&self) -> &Repository {
        &self.repo
    }

    /// The work tree's top, canonical.
    pub(crate) fn top(&self) -> &Path {
        &self.layout.top
    }

    /// Commits what `touched` names below the root, and nothing else, with
    /// `message`, after checking the repository again
    /// ([`WorkTree::check`]). Returns the new commit's id, or `None` when
    /// there was nothing to commit (the commit's tree would be `HEAD`'s).
    ///
    /// The commit is `HEAD`'s tree with the named paths as the disk has
    /// them now: what the index holds elsewhere (staged by someone else),
    /// other changed files and untracked files nobody named are never
    /// committed. An ignored file is committed only when git already
    /// tracks it. The index entries of the named paths are set to what was
    /// committed, as `git commit PATH…` sets them.
    pub(crate) fn commit_touched(
        &self,
        touched: &[Touch],
        message: &dyn Fn(&[String]) -> String,
        author: &Author,
    ) -> Result<Option<String>, GitError> {
        // Checked even when nothing is named: a run whose commands made
        // the repository unsafe says so.
        self.check().map_err(GitError::Refused)?;
        if touched.is_empty() {
            return Ok(None);
        }
        let repo = &self.repo;
        let fail = |what: &'static str, source: git2::Error| GitError::Git { what, source };
        let mut index = repo.index().map_err(|e| fail("cannot read the index", e))?;
        let parent = self.head().map_err(|e| fail("cannot read HEAD", e))?;
        let base = match &parent {
            Some(p) => p.tree(),
            None => repo
                .treebuilder(None)
                .and_then(|b| b.write())
                .and_then(|id| repo.find_tree(id)),
        }
        .map_err(|e| fail("cannot read HEAD's tree", e))?;
        // Every file path the commit may change, below the work tree's top.
        let mut files: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let mut forget: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for touch in touched {
            match touch {
                Touch::File(path) => {
                    files.extend(self.in_tree(path));
                }
                Touch::Tracked(path) => {
                    let Some(path) = self.in_tree(path) else {
                        continue;
                    };
                    self.tracked_at(&index, &base, &path, |p| {
                        files.insert(p);
                    });
                }
                Touch::Forget(path) => {
                    if let Some(path) = self.in_tree(path) {
                        forget.insert(path.clone());
                        files.insert(path);
                    }
                }
                Touch::Moved { from, to } => {
                    let Some(from) = self.in_tree(from) else {
                        continue;
                    };
                    let to = self.in_tree(to);
                    self.tracked_at(&index, &base, &from, |p| {
                        if let (Some(to), Some(rest)) = (&to, p.strip_prefix(from.as_str())) {
                            files.insert(format!("{to}{rest}"));
                        }
                        files.insert(p);
                    });
                }
            }
        }
        let top = &self.layout.top;
        let mut update = git2::build::TreeUpdateBuilder::new();
        let mut changes = 0;
        // What the commit changes, as the message names it.
        let mut named: Vec<String> = Vec::new();
        for path in &files {
            if !self.in_root(path.as_bytes()) || is_temp_path(path) {
                continue;
            }
            let at = Path::new(path);
            let tracked = index.get_path(at, 0).is_some();
            if forget.contains(path) {
                if tracked {
                    index
                        .remove_path(at)
                        .map_err(|e| fail("cannot stage a removal", e))?;
                }
            } else if on_disk_as_file(top, at) {
                let ignored = !tracked && repo.is_path_ignored(at).unwrap_or(true);
                if ignored {
                    continue;
                }
                index
                    .add_path(at)
                    .map_err(|e| fail("cannot stage a change", e))?;
            } else if tracked {
                index
                    .remove_path(at)
                    .map_err(|e| fail("cannot stage a removal", e))?;
            }
            let was = base.get_path(at).ok().map(|e| (e.id(), e.filemode()));
            match index.get_path(at, 0) {
                Some(entry) => {
                    update.upsert(path.as_str(), entry.id, file_mode(entry.mode));
                    changes += 1;
                    if was != Some((entry.id, entry.mode as i32)) {
                        named.push(self.of_root(path));
                    }
                }
                None if was.is_some() => {
                    update.remove(path.as_str());
                    changes += 1;
                    named.push(self.of_root(path));
                }
                None => {}
            }
        }
        if changes == 0 {
            return Ok(None);
        }
        let tree_id = update
            .create_updated(repo, &base)
            .map_err(|e| fail("cannot write the tree", e))?;
        if tree_id == base.id() {
            return Ok(None);
        }
        // Written only when a commit follows, so a run with nothing to
        // commit leaves the index as it was.
        index
            .write()
            .map_err(|e| fail("cannot write the index", e))?;
        let tree = repo
            .find_tree(tree_id)
            .map_err(|e| fail("cannot read the tree", e))?;
        let sig = Signature::now(&author.name, &author.email).map_err(|e| fail("bad author", e))?;
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        let id = repo
            .commit(Some("HEAD"), &sig, &sig, &message(&named), &tree, &parents)
            .map_err(|e| fail("cannot commit", e))?;
        Ok(Some(id.to_string()))
    }

    /// What the work tree has changed since the index, below the root, as
    /// a command may change it: tracked files with their contents' ids
    /// (`None`: gone), and with `untracked`, the untracked files that are
    /// not ignored. Compared before and after the commands of a run, it
    /// tells what they changed ([`WorkTree::changed_since`]).
    pub(crate) fn snapshot(&self, untracked: bool) -> Result<Snapshot, GitError> {
        // libgit2 reads the rules files as it walks: checked first.
        self.check().map_err(GitError::Refused)?;
        let fail = |what: &'static str, source: git2::Error| GitError::Git { what, source };
        let mut options = StatusOptions::new();
        options
            .show(StatusShow::Workdir)
            .include_untracked(untracked)
            .recurse_untracked_dirs(untracked)
            .include_ignored(false)
            .exclude_submodules(true)
            .renames_index_to_workdir(false);
        if !self.prefix.is_empty() {
            // The root's path as it is, never as a pattern.
            options.pathspec(&self.prefix).disable_pathspec_match(true);
        }
        let statuses = self
            .repo
            .statuses(Some(&mut options))
            .map_err(|e| fail("cannot read the status of the work tree", e))?;
        let mut out = Snapshot {
            with_untracked: untracked,
            ..Snapshot::default()
        };
        for entry in statuses.iter() {
            let Ok(path) = std::str::from_utf8(entry.path_bytes()) else {
                continue;
            };
            if !self.in_root(path.as_bytes()) || path.ends_with('/') || is_temp_path(path) {
                continue;
            }
            let status = entry.status();
            if status.contains(Status::WT_NEW) {
                out.untracked.insert(path.to_owned());
            } else if status.contains(Status::WT_DELETED) {
                out.tracked.insert(path.to_owned(), None);
            } else if status.intersects(Status::WT_MODIFIED | Status::WT_TYPECHANGE) {
                let at = self.layout.top.join(path);
                let id = on_disk_as_file(&self.layout.top, Path::new(path))
                    .then(|| git2::Oid::hash_file(git2::ObjectType::Blob, &at).ok())
                    .flatten();
                out.tracked.insert(path.to_owned(), id);
            }
        }
        Ok(out)
    }

    /// What changed between `before` and now ([`WorkTree::snapshot`]), as
    /// root-relative touches: tracked files, and the untracked files that
    /// are new when `before` listed them.
    pub(crate) fn changed_since(&self, before: &Snapshot) -> Result<Vec<Touch>, GitError> {
        let now = self.snapshot(before.with_untracked)?;
        let mut out = Vec::new();
        for (path, id) in &now.tracked {
            if before.tracked.get(path) != Some(id) {
                out.push(Touch::Tracked(self.of_root(path)));
            }
        }
        // Back as they were before: changed and changed back, or committed
        // by the commands themselves.
        for path in before.tracked.keys() {
            if !now.tracked.contains_key(path) {
                out.push(Touch::Tracked(self.of_root(path)));
            }
        }
        if before.with_untracked {
            for path in now.untracked.difference(&before.untracked) {
                out.push(Touch::File(self.of_root(path)));
            }
        }
        Ok(out)
    }

    /// Takes back the run whose commit after the tasks is `commit`: puts
    /// the files it changed back as its parent has them, through `root`,
    /// and commits that. Refused, with why, when the commit is not on the
    /// branch, when a later commit touched the same files, or when they
    /// have uncommitted changes. Returns the new commit's id and the
    /// root-relative paths put back.
    pub(crate) fn revert(
        &self,
        commit: &str,
        root: &crate::engine::fs::Root,
        author: &Author,
        untracked_before: &dyn Fn(&str) -> Option<Vec<u8>>,
    ) -> Result<(String, Vec<String>), String> {
        self.check().map_err(|e| e.to_string())?;
        let repo = &self.repo;
        let git = |e: git2::Error| e.message().to_owned();
        let short = |id: git2::Oid| id.to_string().chars().take(7).collect::<String>();
        let run = git2::Oid::from_str(commit)
            .and_then(|id| repo.find_commit(id))
            .map_err(|_| format!("the run's commit {commit} is not in the repository"))?;
        let parent = run
            .parent(0)
            .map_err(|_| format!("the run's commit {} has no parent", short(run.id())))?;
        let head = self
            .head()
            .map_err(git)?
            .ok_or("the branch has no commit")?;
        if head.id() != run.id() && !repo.graph_descendant_of(head.id(), run.id()).map_err(git)? {
            return Err(format!(
                "the run's commit {} is not on the current branch",
                short(run.id())
            ));
        }
        let changed = |old: &git2::Tree<'_>, new: &git2::Tree<'_>| -> Result<Vec<String>, String> {
            let diff = repo
                .diff_tree_to_tree(Some(old), Some(new), None)
                .map_err(git)?;
            Ok(diff
                .deltas()
                .flat_map(|d| [d.old_file().path(), d.new_file().path()])
                .flatten()
                .filter_map(Path::to_str)
                .map(str::to_owned)
                .collect())
        };
        let mut paths = changed(&parent.tree().map_err(git)?, &run.tree().map_err(git)?)?;
        paths.sort();
        paths.dedup();
        // A later commit that touched the same files.
        let mut walk = repo.revwalk().map_err(git)?;
        walk.push(head.id()).map_err(git)?;
        walk.hide(run.id()).map_err(git)?;
        for id in walk {
            let later = repo.find_commit(id.map_err(git)?).map_err(git)?;
            let Ok(before) = later.parent(0).and_then(|p| p.tree()) else {
                continue;
            };
            let touched = changed(&before, &later.tree().map_err(git)?)?;
            if let Some(p) = touched.iter().find(|p| paths.contains(p)) {
                return Err(format!(
                    "commit {} (\"{}\") changed {p} after the run; revert it first, or by hand",
                    short(later.id()),
                    later.summary().ok().flatten().unwrap_or_default()
                ));
            }
        }
        // Uncommitted changes of those files.
        let snapshot = self.snapshot(false).map_err(|e| e.to_string())?;
        if let Some(p) = paths
            .iter()
            .find(|p| snapshot.tracked.contains_key(p.as_str()))
        {
            return Err(format!(
                "{p} has uncommitted changes; commit or stash them first"
            ));
        }
        let old = parent.tree().map_err(git)?;
        let mut restored = Vec::new();
        let mut forget = Vec::new();
        for path in &paths {
            if !self.in_root(path.as_bytes()) {
                continue;
            }
            let rel = self.of_root(path);
            let at = crate::engine::fs::locate(&rel, false).map_err(|e| e.to_string())?;
            match old.get_path(Path::new(path)) {
                Ok(entry) => {
                    let blob = entry
                        .to_object(repo)
                        .and_then(|o| o.peel_to_blob())
                        .map_err(git)?;
                    root.write(&at, blob.content()).map_err(|e| e.to_string())?;
                }
                // Untracked before the run, which replaced it: put back as
                // it was, untracked again.
                Err(_) => match untracked_before(&rel) {
                    Some(bytes) => {
                        root.write(&at, &bytes).map_err(|e| e.to_string())?;
                        forget.push(rel.clone());
                    }
                    None => match root.remove(&at) {
                        Ok(()) | Err(crate::engine::tree::FsError::NotFound { .. }) => {}
                        Err(e) => return Err(e.to_string()),
                    },
                },
            }
            restored.push(rel);
        }
        let touched: Vec<Touch> = restored
            .iter()
            .map(|p| match forget.contains(p) {
                true => Touch::Forget(p.clone()),
                false => Touch::File(p.clone()),
            })
            .collect();
        let message = format!(
            "clada: undo \"{}\"",
            run.summary().ok().flatten().unwrap_or_default()
        );
        let id = self
            .commit_touched(&touched, &|_| message.clone(), author)
            .map_err(|e| e.to_string())?
            .ok_or("the files are already as before the run")?;
        Ok((id, restored))
    }

    /// `HEAD`'s commit, `None` on an unborn branch.
    fn head(&self) -> Result<Option<git2::Commit<'_>>, git2::Error> {
        match self.repo.head() {
            Ok(head) => head.peel_to_commit().map(Some),
            Err(e)
                if e.code() == git2::ErrorCode::UnbornBranch
                    || e.code() == git2::ErrorCode::NotFound =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// A root-relative path as a path below the work tree's top; `None`
    /// for a path outside the root (`--allow-escape`), never committed.
    fn in_tree(&self, path: &str) -> Option<String> {
        let outside = path.starts_with('/')
            || path
                .split('/')
                .any(|part| part == ".." || (part.is_empty() && !path.is_empty()));
        if outside {
            return None;
        }
        Some(match (self.prefix.is_empty(), path) {
            (true, "" | ".") => String::new(),
            (true, _) => path.to_owned(),
            (false, "" | ".") => self.prefix.clone(),
            (false, _) => format!("{}/{path}", self.prefix),
        })
    }

    /// A path below the work tree's top as a root-relative path.
    fn of_root(&self, path: &str) -> String {
        if self.prefix.is_empty() {
            return path.to_owned();
        }
        path.strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(path)
            .to_owned()
    }

    /// Calls `found` with every tracked file at or below `path` (a path
    /// below the top): in the index, or in `base` (`HEAD`'s tree).
    fn tracked_at(
        &self,
        index: &git2::Index,
        base: &git2::Tree<'_>,
        path: &str,
        mut found: impl FnMut(String),
    ) {
        let below = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        if !path.is_empty() && index.get_path(Path::new(path), 0).is_some() {
            found(path.to_owned());
        }
        if let Ok(mut i) = index.find_prefix(Path::new(&below)) {
            while let Some(entry) = index.get(i) {
                let Ok(p) = std::str::from_utf8(&entry.path) else {
                    i += 1;
                    continue;
                };
                if !p.starts_with(&below) {
                    break;
                }
                found(p.to_owned());
                i += 1;
            }
        }
        // The files of HEAD's tree at or below `path` (all of it for the
        // root at the top).
        let tree = if path.is_empty() {
            base.clone()
        } else {
            let Ok(entry) = base.get_path(Path::new(path)) else {
                return;
            };
            if entry.kind() != Some(git2::ObjectType::Tree) {
                return found(path.to_owned());
            }
            let Ok(tree) = entry.to_object(&self.repo).and_then(|o| o.peel_to_tree()) else {
                return;
            };
            tree
        };
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, e| {
            if e.kind() == Some(git2::ObjectType::Blob)
                && let Ok(name) = e.name()
            {
                found(format!("{below}{dir}{name}"));
            }
            git2::TreeWalkResult::Ok
        });
    }

    /// Whether a work-tree path lies in the root.
    fn in_root(&self, path: &[u8]) -> bool {
        let prefix = self.prefix.as_bytes();
        prefix.is_empty()
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
    }
}

/// A change a run made, or is about to make, as its commits name it
/// (PROTOCOL §7): root-relative, `/`-separated paths.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Touch {
    /// A file a task wrote (created, replaced, appended to, edited) or is
    /// about to: committed as the disk has it, unless it is ignored and
    /// untracked.
    File(String),
    /// The tracked files at or below a path (a removal, a command's
    /// change): committed as the disk has them, gone or not.
    Tracked(String),
    /// A move: the tracked files at or below `from`, and the same files
    /// below `to`. What was untracked stays untracked where it went.
    Moved { from: String, to: String },
    /// A file that is to be untracked, whatever the disk has (an untracked
    /// file an undo put back).
    Forget(String),
}

/// The changed files of a work tree, to tell what commands changed
/// ([`WorkTree::snapshot`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    tracked: std::collections::HashMap<String, Option<git2::Oid>>,
    untracked: std::collections::BTreeSet<String>,
    with_untracked: bool,
}

/// Whether a path below the top names a temporary file of clada's, or
/// lies in a directory set aside: never committed.
fn is_temp_path(path: &str) -> bool {
    path.split('/').any(crate::engine::fs::is_temp_name)
}

/// Whether `path` (below `top`) is a file or a link as the disk has it,
/// with no link on the way to it: what is reached through a link lies
/// elsewhere, and a named pipe is never read.
fn on_disk_as_file(top: &Path, path: &Path) -> bool {
    let mut at = top.to_path_buf();
    let mut parts = path.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return false;
        };
        let kind = meta.file_type();
        if parts.peek().is_some() {
            if !kind.is_dir() {
                return false;
            }
        } else {
            return kind.is_file() || kind.is_symlink();
        }
    }
    false
}

/// The tree entry mode of an index entry's mode.
fn file_mode(mode: u32) -> git2::FileMode {
    match mode {
        0o100755 => git2::FileMode::BlobExecutable,
        0o120000 => git2::FileMode::Link,
        0o160000 => git2::FileMode::Commit,
        _ => git2::FileMode::Blob,
    }
}

/// A commit that could not be made (PROTOCOL §8 `git_operation_failed`):
/// the repository failed its check, or a step failed, with libgit2's
/// error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
    #[error(transparent)]
    Refused(RepoError),
    #[error("{what}: {}", .source.message())]
    Git {
        what: &'static str,
        #[source]
        source: git2::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_the_work_tree_from_a_directory_below_it() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let tree = WorkTree::discover(&sub).unwrap().unwrap();
        assert_eq!(
            tree.repository().workdir().unwrap().canonicalize().unwrap(),
            dir.path().canonicalize().unwrap()
        );
        assert_eq!(tree.prefix, "a/b");
    }

    #[test]
    fn never_a_bare_repository() {
        // A bare repository as the root, or as the root's `.git`.
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path()).unwrap();
        assert!(WorkTree::discover(dir.path()).unwrap().is_none());
        // As the root's `.git`: refused, not taken for no repository.
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path().join(".git")).unwrap();
        let mut config = git2::Config::open(&dir.path().join(".git/config")).unwrap();
        config.set_bool("core.bare", true).unwrap();
        let e = WorkTree::discover(dir.path()).unwrap_err();
        assert_eq!(e.refusal, Refusal::Bare);
        // Something shaped like a repository but not named `.git`.
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path().join("f")).unwrap();
        assert!(WorkTree::discover(&dir.path().join("f")).unwrap().is_none());
        assert!(
            WorkTree::discover(&dir.path().join("f/refs"))
                .unwrap()
                .is_none()
        );
        // Even one whose configuration says it has a work tree: libgit2's
        // own discovery would take the directory above it as one.
        let mut config = git2::Config::open(&dir.path().join("f/config")).unwrap();
        config.set_bool("core.bare", false).unwrap();
        assert!(
            Repository::discover(dir.path().join("f"))
                .unwrap()
                .workdir()
                .is_some()
        );
        assert!(WorkTree::discover(&dir.path().join("f")).unwrap().is_none());
    }

    fn commit_files(repo: &Repository, files: &[(&str, &str)]) {
        let top = repo.workdir().unwrap().to_path_buf();
        let mut index = repo.index().unwrap();
        for (path, text) in files {
            let at = top.join(path);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
            index.add_path(Path::new(path)).unwrap();
        }
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("t", "t@example.com").unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, "set up", &tree, &parents)
            .unwrap();
    }

    fn head_file(repo: &Repository, path: &str) -> Option<String> {
        let tree = repo.head().ok()?.peel_to_tree().ok()?;
        let blob = tree.get_path(Path::new(path)).ok()?.to_object(repo).ok()?;
        Some(String::from_utf8_lossy(blob.as_blob()?.content()).into_owned())
    }

    fn file(p: &str) -> Touch {
        Touch::File(p.to_owned())
    }

    #[test]
    fn a_root_below_the_top_commits_only_its_own_paths() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(&repo, &[("root/a.txt", "a\n"), ("beside.txt", "old\n")]);
        // Changed beside the root, staged beside it, and new beside it.
        std::fs::write(dir.path().join("beside.txt"), "secret\n").unwrap();
        std::fs::write(dir.path().join("staged.txt"), "staged\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("staged.txt")).unwrap();
        index.write().unwrap();
        std::fs::write(dir.path().join("root/a.txt"), "A\n").unwrap();
        std::fs::write(dir.path().join("root/new.txt"), "n\n").unwrap();
        let tree = WorkTree::discover(&dir.path().join("root"))
            .unwrap()
            .unwrap();
        let touched = [file("a.txt"), file("new.txt"), file("../beside.txt")];
        tree.commit_touched(&touched, &|_| "m".to_owned(), &Author::default())
            .unwrap()
            .unwrap();
        assert_eq!(head_file(&repo, "root/a.txt").as_deref(), Some("A\n"));
        assert_eq!(head_file(&repo, "root/new.txt").as_deref(), Some("n\n"));
        assert_eq!(head_file(&repo, "beside.txt").as_deref(), Some("old\n"));
        assert_eq!(head_file(&repo, "staged.txt"), None);
        // Nothing of the root changed: no commit.
        let again = tree.commit_touched(&touched, &|_| "m".to_owned(), &Author::default());
        assert_eq!(again.unwrap(), None);
        // The root removed whole: its files go.
        std::fs::remove_file(dir.path().join("root/a.txt")).unwrap();
        std::fs::remove_file(dir.path().join("root/new.txt")).unwrap();
        tree.commit_touched(
            &[Touch::Tracked(".".to_owned())],
            &|_| "m".to_owned(),
            &Author::default(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(head_file(&repo, "root/a.txt"), None);
        assert_eq!(head_file(&repo, "beside.txt").as_deref(), Some("old\n"));
    }

    #[test]
    fn commits_only_what_is_named_never_an_untracked_secret() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(
            &repo,
            &[
                ("a.py", "a\n"),
                ("dirty.py", "d\n"),
                (".gitignore", "*.log\n"),
            ],
        );
        std::fs::write(dir.path().join(".env"), "API_KEY=secret\n").unwrap();
        std::fs::write(dir.path().join("dirty.py"), "mine\n").unwrap();
        std::fs::write(dir.path().join("a.py"), "edited\n").unwrap();
        std::fs::write(dir.path().join("b.py"), "new\n").unwrap();
        std::fs::write(dir.path().join("run.log"), "written\n").unwrap();
        let tree = WorkTree::discover(dir.path()).unwrap().unwrap();
        let touched = [file("a.py"), file("b.py"), file("run.log")];
        tree.commit_touched(&touched, &|_| "m".to_owned(), &Author::default())
            .unwrap()
            .unwrap();
        assert_eq!(head_file(&repo, "a.py").as_deref(), Some("edited\n"));
        assert_eq!(head_file(&repo, "b.py").as_deref(), Some("new\n"));
        // Not named, untracked or ignored: not committed, and still as
        // they were (the dirty file's change stays a change).
        assert_eq!(head_file(&repo, ".env"), None);
        assert_eq!(head_file(&repo, "run.log"), None);
        assert_eq!(head_file(&repo, "dirty.py").as_deref(), Some("d\n"));
        let statuses = repo.statuses(None).unwrap();
        let status = |p: &str| {
            statuses
                .iter()
                .find(|e| e.path().ok() == Some(p))
                .map(|e| e.status())
        };
        assert_eq!(status("dirty.py"), Some(Status::WT_MODIFIED));
        assert_eq!(status(".env"), Some(Status::WT_NEW));
        // The index agrees with what was committed: nothing staged.
        assert_eq!(status("a.py"), None);
    }

    #[test]
    fn a_move_commits_the_tracked_files_where_they_went() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(&repo, &[("src/a.py", "a\n"), ("src/b/c.py", "c\n")]);
        std::fs::write(dir.path().join("src/.env"), "secret\n").unwrap();
        std::fs::rename(dir.path().join("src"), dir.path().join("lib")).unwrap();
        let tree = WorkTree::discover(dir.path()).unwrap().unwrap();
        let touched = [Touch::Moved {
            from: "src".to_owned(),
            to: "lib".to_owned(),
        }];
        tree.commit_touched(&touched, &|_| "m".to_owned(), &Author::default())
            .unwrap()
            .unwrap();
        assert_eq!(head_file(&repo, "src/a.py"), None);
        assert_eq!(head_file(&repo, "lib/a.py").as_deref(), Some("a\n"));
        assert_eq!(head_file(&repo, "lib/b/c.py").as_deref(), Some("c\n"));
        // Untracked where it was, untracked where it went.
        assert_eq!(head_file(&repo, "lib/.env"), None);
    }

    #[test]
    fn tells_what_commands_changed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(
            &repo,
            &[("t.py", "t\n"), ("dirty.py", "d\n"), ("same.py", "s\n")],
        );
        std::fs::write(dir.path().join("dirty.py"), "mine\n").unwrap();
        std::fs::write(dir.path().join("old.txt"), "u\n").unwrap();
        let tree = WorkTree::discover(dir.path()).unwrap().unwrap();
        for untracked in [false, true] {
            let before = tree.snapshot(untracked).unwrap();
            // What a command does: a tracked file changed, one left dirty as
            // it was, a new file.
            std::fs::write(dir.path().join("t.py"), format!("{untracked}\n")).unwrap();
            std::fs::write(dir.path().join("made.txt"), "m\n").unwrap();
            let changed = tree.changed_since(&before).unwrap();
            let mut want = vec![Touch::Tracked("t.py".to_owned())];
            if untracked {
                want.push(file("made.txt"));
            }
            assert_eq!(changed, want);
            std::fs::remove_file(dir.path().join("made.txt")).unwrap();
        }
    }

    #[test]
    fn a_work_tree_set_elsewhere_is_refused_before_anything_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let repo = Repository::init(&root).unwrap();
        repo.config()
            .unwrap()
            .set_str("core.worktree", "../..")
            .unwrap();
        let e = WorkTree::discover(&root).unwrap_err();
        assert!(matches!(e.refusal, Refusal::WorkTreeElsewhere(_)), "{e}");
        assert!(e.to_string().contains("core.worktree"), "{e}");
    }

    #[test]
    fn a_link_planted_after_the_repository_was_found_stops_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(&repo, &[("a.txt", "a\n")]);
        let tree = WorkTree::discover(dir.path()).unwrap().unwrap();
        let log = dir.path().join(".git/logs/HEAD");
        std::fs::remove_file(&log).unwrap();
        std::os::unix::fs::symlink(outside.path().join("log"), &log).unwrap();
        std::fs::write(dir.path().join("a.txt"), "b\n").unwrap();
        let head = repo.head().unwrap().target();
        let e = tree
            .commit_touched(&[file("a.txt")], &|_| "m".to_owned(), &Author::default())
            .unwrap_err();
        assert!(matches!(e, GitError::Refused(_)), "{e}");
        assert!(!outside.path().join("log").exists());
        assert_eq!(repo.head().unwrap().target(), head);
    }

    #[test]
    fn never_commits_what_lies_below_a_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("a/.d.clada-1-2.tmp/sub")).unwrap();
        std::fs::write(dir.path().join("a/.d.clada-1-2.tmp/sub/x.txt"), "x").unwrap();
        std::fs::write(dir.path().join("a/.f.clada-1-3.tmp"), "f").unwrap();
        std::fs::write(dir.path().join("a/kept.txt"), "k").unwrap();
        let tree = WorkTree::discover(dir.path()).unwrap().unwrap();
        let touched = [
            file("a/.d.clada-1-2.tmp/sub/x.txt"),
            file("a/.f.clada-1-3.tmp"),
            file("a/kept.txt"),
        ];
        tree.commit_touched(&touched, &|_| "m".to_owned(), &Author::default())
            .unwrap()
            .unwrap();
        let head = tree.repository().head().unwrap().peel_to_tree().unwrap();
        let mut paths = Vec::new();
        head.walk(git2::TreeWalkMode::PreOrder, |d, e| {
            if e.kind() == Some(git2::ObjectType::Blob) {
                paths.push(format!("{d}{}", e.name().unwrap()));
            }
            git2::TreeWalkResult::Ok
        })
        .unwrap();
        assert_eq!(paths, ["a/kept.txt"]);
    }

    #[test]
    fn never_commits_a_named_pipe_nor_waits_on_one() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(&repo, &[("a.txt", "a\n")]);
        let fifo = |at: &Path| {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                at,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        };
        // One in place of a tracked file, one new, one in a new directory.
        std::fs::remove_file(dir.path().join("a.txt")).unwrap();
        fifo(&dir.path().join("a.txt"));
        fifo(&dir.path().join("pipe"));
        std::fs::create_dir(dir.path().join("d")).unwrap();
        fifo(&dir.path().join("d/p"));
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let top = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let tree = WorkTree::discover(&top).unwrap().unwrap();
            let _ = tx.send(
                tree.commit_touched(
                    &["a.txt", "pipe", "d/p", "b.txt"].map(file),
                    &|_| "m".to_owned(),
                    &Author::default(),
                )
                .map(|c| c.is_some()),
            );
        });
        // A commit that opened a pipe would wait for a writer for ever.
        let committed = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the commit waited on a named pipe");
        assert!(committed.unwrap());
        let head = repo.head().unwrap().peel_to_tree().unwrap();
        let mut paths = Vec::new();
        head.walk(git2::TreeWalkMode::PreOrder, |d, e| {
            paths.push(format!("{d}{}", e.name().unwrap()));
            git2::TreeWalkResult::Ok
        })
        .unwrap();
        assert_eq!(paths, ["b.txt"]);
    }

    #[test]
    fn reads_authors() {
        let a: Author = "Ada Lovelace <ada@example.com>".parse().unwrap();
        assert_eq!(
            (a.name.as_str(), a.email.as_str()),
            ("Ada Lovelace", "ada@example.com")
        );
        let b: Author = "bot".parse().unwrap();
        assert_eq!(
            (b.name.as_str(), b.email.as_str()),
            ("bot", "bot@localhost")
        );
        for bad in ["", "<x@y>", "A <x@y", "A x@y>", "A <x<y>"] {
            assert!(bad.parse::<Author>().is_err(), "{bad}");
        }
    }
}
