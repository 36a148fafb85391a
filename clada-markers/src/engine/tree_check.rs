//! The work tree as clada's commits and built-in git read it (PROTOCOL §7
//! step 3): the rules files git reads there are checked before libgit2
//! does.
//!
//! libgit2 reads `.gitignore` and `.gitattributes` in every directory it
//! walks (and `.gitmodules` at the top) by path: it follows a link (out
//! of the root, to a device) and opens a named pipe, waiting for a writer
//! that never comes. A command may leave any of these in the tree. So
//! before each commit and each built-in git, the directories git would
//! walk are walked first, as git walks them: from the top down to the
//! root, then below the root, not into `.git`, nor into a nested
//! repository, nor into an ignored directory that holds no tracked file
//! (whether it is ignored is asked of libgit2, once every rules file it
//! would read for that is checked). In each, a rules file must be a
//! regular file (a directory is skipped by git too) of at most
//! [`MAX_RULES_FILE`] bytes; else the commit is refused, naming it. So are
//! the repository's own `info/exclude` and `info/attributes` past that
//! size.
//!
//! The walk reads directories (their entries' kinds come with them) and
//! looks at a rules file only where one is: no file is opened, none is
//! read.

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::Repository;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::engine::repo_check::{MAX_RULES_FILE, Refusal};

/// The rules files git reads in every directory it walks.
const RULES: [&str; 2] = [".gitignore", ".gitattributes"];

/// The rules file git reads at the work tree's top only.
const MODULES: &str = ".gitmodules";

/// Checks the rules files of the work tree at `top` (canonical) that git
/// reads for the root at `prefix` below it (`/`-separated, empty for the
/// top), and of the git directory `git_dir`.
pub(crate) fn check(
    repo: &Repository,
    top: &Path,
    prefix: &str,
    git_dir: &Path,
) -> Result<(), Refusal> {
    for name in ["info/exclude", "info/attributes"] {
        rules_file_at(&git_dir.join(name))?;
    }
    let unreadable = |path: &Path, e: Errno| {
        Refusal::Unreadable(path.to_path_buf(), std::io::Error::from(e).to_string())
    };
    let top_fd = rustix::fs::open(
        top,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| unreadable(top, e))?;
    // The directories from the top down to the root: git reads their
    // rules files for every path of the root.
    let mut rel = PathBuf::new();
    let mut dir = top_fd
        .try_clone()
        .map_err(|e| Refusal::Unreadable(top.to_path_buf(), e.to_string()))?;
    let parts: Vec<&str> = prefix.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let names: &[&str] = if i == 0 {
            &[RULES[0], RULES[1], MODULES]
        } else {
            &RULES
        };
        for name in names {
            rules_file(&dir, OsStr::new(name), None, &top.join(&rel).join(name))?;
        }
        rel.push(part);
        dir = open_below(&top_fd, &rel).map_err(|e| unreadable(&top.join(&rel), e))?;
    }
    let index = repo
        .index()
        .map_err(|e| Refusal::Unreadable(top.join(".git/index"), e.message().to_owned()))?;
    // Below the root, as git walks it. Directories are opened by their
    // path from the top, never through a link, so that a deep tree holds
    // no more than one open at a time.
    let mut pending: Vec<PathBuf> = vec![rel];
    while let Some(rel) = pending.pop() {
        let dir = if rel.as_os_str().is_empty() {
            top_fd
                .try_clone()
                .map_err(|e| Refusal::Unreadable(top.to_path_buf(), e.to_string()))?
        } else {
            match open_below(&top_fd, &rel) {
                Ok(fd) => fd,
                // Gone, or replaced by a link or a file meanwhile: git
                // will not walk into it either.
                Err(Errno::NOENT | Errno::NOTDIR | Errno::LOOP | Errno::XDEV) => continue,
                Err(e) => return Err(unreadable(&top.join(&rel), e)),
            }
        };
        let entries = entries(&dir).map_err(|e| unreadable(&top.join(&rel), e))?;
        let at_top = rel.as_os_str().is_empty();
        // A nested repository: git does not walk into it.
        if !at_top && entries.iter().any(|(n, _)| n.as_bytes() == b".git") {
            continue;
        }
        for (name, kind) in &entries {
            let rules = RULES.iter().any(|r| name.as_bytes() == r.as_bytes())
                || (at_top && name.as_bytes() == MODULES.as_bytes());
            if rules {
                rules_file(
                    &dir,
                    name.as_os_str(),
                    Some(*kind),
                    &top.join(&rel).join(name),
                )?;
            }
        }
        for (name, kind) in entries {
            if kind != FileType::Directory || name.as_bytes() == b".git" {
                continue;
            }
            let sub = rel.join(&name);
            // Every rules file that decides this is checked by now: those
            // of the directories above it, and this directory's.
            let ignored = repo.is_path_ignored(&sub).unwrap_or(false);
            if ignored && !tracks_below(&index, &sub) {
                continue;
            }
            pending.push(sub);
        }
    }
    Ok(())
}

/// Whether the index tracks a file below the directory `rel`.
fn tracks_below(index: &git2::Index, rel: &Path) -> bool {
    let mut prefix = rel.as_os_str().as_bytes().to_vec();
    prefix.push(b'/');
    index.find_prefix(prefix).is_ok()
}

/// Opens the directory `rel` below `top`, never through a link.
fn open_below(top: &OwnedFd, rel: &Path) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat2(
        top,
        rel,
        flags,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
    ) {
        Err(Errno::NOSYS) => open_each(top, rel, flags),
        r => r,
    }
}

/// [`open_below`] where the kernel has no `openat2`: one component at a
/// time.
fn open_each(top: &OwnedFd, rel: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let mut dir = top.try_clone().map_err(|_| Errno::MFILE)?;
    for part in rel.iter() {
        dir = rustix::fs::openat(&dir, part, flags, Mode::empty())?;
    }
    Ok(dir)
}

/// The entries of `dir` with their kinds, without following a link.
fn entries(dir: &OwnedFd) -> Result<Vec<(std::ffi::OsString, FileType)>, Errno> {
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let mut kind = entry.file_type();
        if kind == FileType::Unknown {
            kind = rustix::fs::statat(dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode))
                .unwrap_or(FileType::Unknown);
        }
        out.push((OsStr::from_bytes(name).to_owned(), kind));
    }
    Ok(out)
}

/// Checks the rules file `name` in `dir` (`path` for messages), whose kind
/// readdir may have given: nothing there, a directory, or a regular file
/// of at most [`MAX_RULES_FILE`] bytes.
fn rules_file<P: rustix::path::Arg + Copy>(
    dir: &OwnedFd,
    name: P,
    kind: Option<FileType>,
    path: &Path,
) -> Result<(), Refusal> {
    let size_of = || match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(st)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(Refusal::Unreadable(
            path.to_path_buf(),
            std::io::Error::from(e).to_string(),
        )),
    };
    let st = match kind {
        Some(FileType::Directory) => return Ok(()),
        _ => match size_of()? {
            Some(st) => st,
            None => return Ok(()),
        },
    };
    let size = u64::try_from(st.st_size).unwrap_or(0);
    judge(FileType::from_raw_mode(st.st_mode), size, path)
}

/// [`rules_file`] for a path in the git directory.
fn rules_file_at(path: &Path) -> Result<(), Refusal> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => {
            use std::os::unix::fs::MetadataExt;
            judge(FileType::from_raw_mode(m.mode()), m.len(), path)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Refusal::Unreadable(path.to_path_buf(), e.to_string())),
    }
}

fn judge(kind: FileType, size: u64, path: &Path) -> Result<(), Refusal> {
    match kind {
        FileType::Directory => Ok(()),
        FileType::Symlink => Err(Refusal::RulesFile(
            path.to_path_buf(),
            "a symbolic link, which git would follow",
        )),
        FileType::RegularFile if size > MAX_RULES_FILE => {
            Err(Refusal::RulesFileTooLarge(path.to_path_buf(), size))
        }
        FileType::RegularFile => Ok(()),
        FileType::Fifo => Err(Refusal::RulesFile(
            path.to_path_buf(),
            "a named pipe, which git would wait on for ever",
        )),
        _ => Err(Refusal::RulesFile(
            path.to_path_buf(),
            "a device or socket, which git would open",
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A repository with `files` committed, and its canonical top.
    fn repo(files: &[&str]) -> (tempfile::TempDir, PathBuf, Repository) {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        let repo = Repository::init(&top).unwrap();
        for f in files {
            let at = top.join(f);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, "x\n").unwrap();
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        (t, top, repo)
    }

    fn fifo(at: &Path) {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            at,
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }

    fn refused(repo: &Repository, top: &Path, prefix: &str) -> Option<PathBuf> {
        match check(repo, top, prefix, &top.join(".git")) {
            Ok(()) => None,
            Err(Refusal::RulesFile(p, _) | Refusal::RulesFileTooLarge(p, _)) => Some(p),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn an_ordinary_tree_passes() {
        let (_t, top, repo) = repo(&["a.txt", ".gitignore", "d/.gitattributes", "d/e/f.txt"]);
        assert_eq!(refused(&repo, &top, ""), None);
        assert_eq!(refused(&repo, &top, "d"), None);
    }

    #[test]
    fn a_rules_file_git_would_wait_on_or_follow_is_refused() {
        for (name, make) in [
            ("d/e/.gitignore", 0),
            (".gitattributes", 0),
            (".gitmodules", 0),
            ("d/.gitignore", 1),
        ] {
            let (_t, top, repo) = repo(&["d/e/f.txt"]);
            let at = top.join(name);
            if make == 0 {
                fifo(&at);
            } else {
                std::os::unix::fs::symlink("/etc/hostname", &at).unwrap();
            }
            assert_eq!(refused(&repo, &top, ""), Some(at.clone()), "{name}");
            // With the root below the top, what lies above the root counts
            // too.
            assert_eq!(refused(&repo, &top, "d/e"), Some(at), "{name}");
        }
    }

    #[test]
    fn a_rules_file_too_large_is_refused() {
        let (_t, top, repo) = repo(&["d/f.txt"]);
        let big = vec![b'x'; usize::try_from(MAX_RULES_FILE).unwrap() + 1];
        std::fs::write(top.join("d/.gitignore"), &big).unwrap();
        assert_eq!(refused(&repo, &top, ""), Some(top.join("d/.gitignore")));
        std::fs::remove_file(top.join("d/.gitignore")).unwrap();
        std::fs::write(top.join(".git/info/exclude"), &big).unwrap();
        assert_eq!(
            refused(&repo, &top, ""),
            Some(top.join(".git/info/exclude"))
        );
    }

    #[test]
    fn where_git_does_not_walk_nothing_is_refused() {
        let (_t, top, repo) = repo(&[".gitignore", "kept/t.txt", "nested/x.txt"]);
        std::fs::write(top.join(".gitignore"), "build/\nkept/\n").unwrap();
        // An ignored directory, a nested repository: git walks neither.
        fifo(&top.join("build/.gitignore"));
        fifo(&top.join("build/deep/.gitattributes"));
        Repository::init(top.join("nested")).unwrap();
        fifo(&top.join("nested/.gitignore"));
        assert_eq!(refused(&repo, &top, ""), None);
        // Nor, with the root below the top, a directory beside the root.
        fifo(&top.join("side/.gitignore"));
        assert_eq!(refused(&repo, &top, "kept"), None);
        std::fs::remove_file(top.join("side/.gitignore")).unwrap();
        // An ignored directory that holds a tracked file is walked.
        fifo(&top.join("kept/.gitattributes"));
        assert_eq!(
            refused(&repo, &top, ""),
            Some(top.join("kept/.gitattributes"))
        );
    }
}
