//! The run's repository (PROTOCOL §6) and the commits before and after a
//! run (PROTOCOL §7 step 3), with libgit2.
//!
//! `git add -A` semantics: every change in the work tree, new files that
//! are not ignored included, deletions too. No empty commits: when the tree
//! to commit equals `HEAD`'s, nothing is committed. Hooks are never run.

use std::ffi::OsStr;
use std::path::Path;

use std::os::unix::ffi::OsStrExt;

use git2::{Repository, RepositoryOpenFlags, Signature, Status, StatusOptions, StatusShow};

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
}

impl std::fmt::Debug for WorkTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkTree")
            .field("path", &self.repo.workdir())
            .finish()
    }
}

impl WorkTree {
    /// Finds the work tree that holds `root`, once per run, as git finds it
    /// (PROTOCOL §6): the first `.git` directory or `.git` file of `root` or
    /// of an ancestor. `None` outside any work tree.
    ///
    /// Never a bare repository, and never a directory that merely looks like
    /// one (`HEAD`, `objects/`, `refs/`): only a path named `.git` is opened,
    /// without searching further and without reading `GIT_*` environment
    /// variables (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_CEILING_DIRECTORIES`…).
    /// The root must lie inside the work tree found.
    pub(crate) fn discover(root: &Path) -> Option<WorkTree> {
        let root = root.canonicalize().ok()?;
        let flags = RepositoryOpenFlags::NO_SEARCH | RepositoryOpenFlags::NO_DOTGIT;
        for dir in root.ancestors() {
            let dot_git = dir.join(".git");
            let Ok(meta) = std::fs::metadata(&dot_git) else {
                continue;
            };
            if !(meta.is_dir() || meta.is_file()) {
                return None;
            }
            // The first `.git` found is the one git would use; if it is not
            // a usable work tree, there is none (git would not look further).
            let repo = Repository::open_ext(&dot_git, flags, std::iter::empty::<&OsStr>()).ok()?;
            if repo.is_bare() {
                return None;
            }
            let workdir = repo.workdir()?.canonicalize().ok()?;
            if !root.starts_with(&workdir) {
                return None;
            }
            return Some(WorkTree { repo });
        }
        None
    }

    /// The run's one repository: the built-in git reads it, the commits go
    /// to it, the default lock lies in it.
    pub(crate) fn repository(&self) -> &Repository {
        &self.repo
    }

    /// Commits every change in the work tree with `message`. Returns the
    /// new commit's id, or `None` when there was nothing to commit.
    pub(crate) fn commit_all(
        &self,
        message: &str,
        author: &Author,
    ) -> Result<Option<String>, GitError> {
        let repo = &self.repo;
        let fail = |what: &'static str, source: git2::Error| GitError { what, source };
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
        let statuses = repo
            .statuses(Some(&mut options))
            .map_err(|e| fail("cannot read the status of the work tree", e))?;
        for entry in statuses.iter() {
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
        let tree_id = index
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
        let unchanged = match &parent {
            Some(p) => p.tree_id() == tree_id,
            None => index.is_empty(),
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
}

/// A commit that could not be made: which step failed, and libgit2's
/// error (PROTOCOL §8 `git_operation_failed`).
#[derive(Debug, thiserror::Error)]
#[error("{what}: {}", .source.message())]
pub(crate) struct GitError {
    pub(crate) what: &'static str,
    #[source]
    pub(crate) source: git2::Error,
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
        let tree = WorkTree::discover(&sub).unwrap();
        assert_eq!(
            tree.repository().workdir().unwrap().canonicalize().unwrap(),
            dir.path().canonicalize().unwrap()
        );
    }

    #[test]
    fn never_a_bare_repository() {
        // A bare repository as the root, or as the root's `.git`.
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path()).unwrap();
        assert!(WorkTree::discover(dir.path()).is_none());
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path().join(".git")).unwrap();
        let mut config = git2::Config::open(&dir.path().join(".git/config")).unwrap();
        config.set_bool("core.bare", true).unwrap();
        assert!(WorkTree::discover(dir.path()).is_none());
        // Something shaped like a repository but not named `.git`.
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path().join("f")).unwrap();
        assert!(WorkTree::discover(&dir.path().join("f")).is_none());
        assert!(WorkTree::discover(&dir.path().join("f/refs")).is_none());
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
        assert!(WorkTree::discover(&dir.path().join("f")).is_none());
    }

    #[test]
    fn never_commits_what_lies_below_a_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("a/.d.clada-1-2.tmp/sub")).unwrap();
        std::fs::write(dir.path().join("a/.d.clada-1-2.tmp/sub/x.txt"), "x").unwrap();
        std::fs::write(dir.path().join("a/.f.clada-1-3.tmp"), "f").unwrap();
        std::fs::write(dir.path().join("a/kept.txt"), "k").unwrap();
        let tree = WorkTree::discover(dir.path()).unwrap();
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
