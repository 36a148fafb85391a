//! The run's repository (PROTOCOL §6) and the commits before and after a
//! run (PROTOCOL §7 step 3), with libgit2.
//!
//! `git add -A` semantics below the root: every change, new files that are
//! not ignored included, deletions too; with the root below the work
//! tree's top, nothing outside the root is read or committed. No empty
//! commits: when the tree to commit equals `HEAD`'s, nothing is committed.
//! Hooks are never run. The repository is checked ([`repo_check`]) when it
//! is found and before each commit.

use std::ffi::OsStr;
use std::path::Path;

use std::os::unix::ffi::OsStrExt;

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
    /// the same git directories, no link anywhere a commit reads or writes.
    pub(crate) fn check(&self) -> Result<(), RepoError> {
        let fail = |refusal| RepoError {
            top: self.layout.top.clone(),
            refusal,
        };
        let now = repo_check::layout(&self.layout.top, Depth::Use).map_err(fail)?;
        if now != self.layout {
            return Err(fail(Refusal::Changed(now.git_dir)));
        }
        Ok(())
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

    /// Commits every change below the root with `message`, after
    /// checking the repository again ([`WorkTree::check`]). Returns the
    /// new commit's id, or `None` when there was nothing to commit.
    ///
    /// With the root below the work tree's top, only the root is looked
    /// at and only its paths change: the commit is `HEAD`'s tree with the
    /// root's subtree as the index now has it.
    pub(crate) fn commit_all(
        &self,
        message: &str,
        author: &Author,
    ) -> Result<Option<String>, GitError> {
        self.check().map_err(GitError::Refused)?;
        let repo = &self.repo;
        let fail = |what: &'static str, source: git2::Error| GitError::Git { what, source };
        let mut index = repo.index().map_err(|e| fail("cannot read the index", e))?;
        // What differs from the index, by the stat data it keeps: only
        // files that changed are read and hashed, and no diff of their
        // contents is made (`add_all` makes one).
        let mut options = StatusOptions::new();
        options
            .show(StatusShow::Workdir)
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .exclude_submodules(true)
            .renames_index_to_workdir(false);
        if !self.prefix.is_empty() {
            // The root's path as it is, never as a pattern.
            options.pathspec(&self.prefix).disable_pathspec_match(true);
        }
        let statuses = repo
            .statuses(Some(&mut options))
            .map_err(|e| fail("cannot read the status of the work tree", e))?;
        for entry in statuses.iter() {
            if !self.in_root(entry.path_bytes()) {
                continue;
            }
            let path = Path::new(OsStr::from_bytes(entry.path_bytes()));
            // Temporary files of a run killed mid-write, and what is in a
            // directory set aside, are never committed; a nested
            // repository is not a file to add.
            let temp = path.components().any(|c| {
                c.as_os_str()
                    .to_str()
                    .is_some_and(crate::engine::fs::is_temp_name)
            });
            if temp || entry.path_bytes().ends_with(b"/") {
                continue;
            }
            let status = entry.status();
            if status.contains(Status::WT_DELETED) {
                index
                    .remove_path(path)
                    .map_err(|e| fail("cannot stage a removal", e))?;
            } else if status.intersects(
                Status::WT_NEW | Status::WT_MODIFIED | Status::WT_TYPECHANGE | Status::WT_RENAMED,
            ) {
                index
                    .add_path(path)
                    .map_err(|e| fail("cannot stage a change", e))?;
            }
        }
        let index_tree = index
            .write_tree()
            .map_err(|e| fail("cannot write the tree", e))?;
        let parent = match repo.head() {
            Ok(head) => Some(
                head.peel_to_commit()
                    .map_err(|e| fail("cannot read HEAD", e))?,
            ),
            Err(e)
                if e.code() == git2::ErrorCode::UnbornBranch
                    || e.code() == git2::ErrorCode::NotFound =>
            {
                None
            }
            Err(e) => return Err(fail("cannot read HEAD", e)),
        };
        let tree_id = if self.prefix.is_empty() {
            index_tree
        } else {
            self.root_into_head(index_tree, parent.as_ref())
                .map_err(|e| fail("cannot write the tree", e))?
        };
        let unchanged = match &parent {
            Some(p) => p.tree_id() == tree_id,
            None => repo
                .find_tree(tree_id)
                .map_err(|e| fail("cannot read the tree", e))?
                .is_empty(),
        };
        if unchanged {
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
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .map_err(|e| fail("cannot commit", e))?;
        Ok(Some(id.to_string()))
    }

    /// Whether a work-tree path lies in the root.
    fn in_root(&self, path: &[u8]) -> bool {
        let prefix = self.prefix.as_bytes();
        prefix.is_empty()
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(b"/"))
    }

    /// `HEAD`'s tree (or an empty one) with the root's subtree replaced by
    /// the one in `index_tree`: what the index holds elsewhere (staged by
    /// someone else) is not committed.
    fn root_into_head(
        &self,
        index_tree: git2::Oid,
        parent: Option<&git2::Commit<'_>>,
    ) -> Result<git2::Oid, git2::Error> {
        let repo = &self.repo;
        let base = match parent {
            Some(p) => p.tree()?,
            None => repo.find_tree(repo.treebuilder(None)?.write()?)?,
        };
        let at = Path::new(&self.prefix);
        let ours = repo.find_tree(index_tree)?.get_path(at).ok();
        let mut update = git2::build::TreeUpdateBuilder::new();
        match ours {
            Some(entry) => {
                update.upsert(&self.prefix, entry.id(), git2::FileMode::Tree);
            }
            None if base.get_path(at).is_ok() => {
                update.remove(&self.prefix);
            }
            None => return Ok(base.id()),
        }
        update.create_updated(repo, &base)
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
        tree.commit_all("m", &Author::default()).unwrap().unwrap();
        assert_eq!(head_file(&repo, "root/a.txt").as_deref(), Some("A\n"));
        assert_eq!(head_file(&repo, "root/new.txt").as_deref(), Some("n\n"));
        assert_eq!(head_file(&repo, "beside.txt").as_deref(), Some("old\n"));
        assert_eq!(head_file(&repo, "staged.txt"), None);
        // Nothing of the root changed: no commit.
        assert_eq!(tree.commit_all("m", &Author::default()).unwrap(), None);
        // The root removed whole: its subtree goes.
        std::fs::remove_file(dir.path().join("root/a.txt")).unwrap();
        std::fs::remove_file(dir.path().join("root/new.txt")).unwrap();
        tree.commit_all("m", &Author::default()).unwrap().unwrap();
        assert_eq!(head_file(&repo, "root/a.txt"), None);
        assert_eq!(head_file(&repo, "beside.txt").as_deref(), Some("old\n"));
    }

    #[test]
    fn a_root_with_glob_characters_below_the_top_is_taken_literally() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        commit_files(&repo, &[("r*/a.txt", "a\n"), ("rx/b.txt", "b\n")]);
        std::fs::write(dir.path().join("rx/b.txt"), "secret\n").unwrap();
        std::fs::write(dir.path().join("r*/a.txt"), "A\n").unwrap();
        let tree = WorkTree::discover(&dir.path().join("r*")).unwrap().unwrap();
        tree.commit_all("m", &Author::default()).unwrap().unwrap();
        assert_eq!(head_file(&repo, "r*/a.txt").as_deref(), Some("A\n"));
        assert_eq!(head_file(&repo, "rx/b.txt").as_deref(), Some("b\n"));
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
        let e = tree.commit_all("m", &Author::default()).unwrap_err();
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
        tree.commit_all("m", &Author::default()).unwrap().unwrap();
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
