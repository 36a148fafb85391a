//! The check a repository passes before clada commits to it or its
//! built-in git reads it (PROTOCOL §6, §7 step 3).
//!
//! A command may write below the root, `.git` included when the root is
//! the work tree's top; clada's commits (libgit2, unconfined) then read and
//! write there. So before each use the repository is checked as clada
//! uses it:
//!
//! - `.git` is a directory, or a `.git` file naming a git directory that
//!   names this work tree back: a linked work tree's
//!   (`COMMON/worktrees/NAME`, whose `gitdir` file names this `.git`) or a
//!   submodule's (whose `core.worktree` is this work tree). Any other
//!   `gitdir:` is refused: a command could have written it;
//! - no symbolic link, and nothing but regular files and directories,
//!   anywhere clada's commit or the built-in git reads or writes: `HEAD`,
//!   `index`, `config`, `packed-refs`, `refs/`, `logs/`, `objects/`,
//!   `info/`, `commondir`, `gitdir`;
//! - no `objects/info/alternates` (objects read from another repository),
//!   and no `commondir` in a `.git` directory;
//! - no setting in its own configuration that makes git read another file
//!   (`include`, `includeIf`, `core.excludesFile`, `core.attributesFile`);
//! - once open: not bare, and its work tree is the directory that holds
//!   `.git` (`core.worktree` pointing elsewhere is refused).
//!
//! What fails is refused, never repaired: nothing is written.

use std::path::{Path, PathBuf};

use git2::Repository;

/// Where a repository keeps what clada's commits read and write, as
/// checked: all paths canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The work tree's top: the directory holding `.git`.
    pub(crate) top: PathBuf,
    /// The git directory (`.git`, or what a `.git` file names).
    pub(crate) git_dir: PathBuf,
    /// Where refs, objects and configuration live: the git directory, or
    /// a linked work tree's main repository.
    pub(crate) common_dir: PathBuf,
    /// Whether `.git` is a file (`gitdir: …`).
    pub(crate) git_file: bool,
}

/// The largest `.gitignore`, `.gitattributes`, `.gitmodules`,
/// `info/exclude` or `info/attributes` clada lets git read: each pattern
/// is tried against every path below it, and a hostile file of millions of
/// patterns would stall a commit for hours.
pub(crate) const MAX_RULES_FILE: u64 = 1 << 20;

/// Why a repository is not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("{} is a symbolic link, which clada's commit would follow; remove it", .0.display())]
    Link(PathBuf),
    #[error("{} is neither a regular file nor a directory; remove it", .0.display())]
    Special(PathBuf),
    #[error("cannot read {}: {}", .0.display(), .1)]
    Unreadable(PathBuf, String),
    #[error(
        "the `.git` file names {}, a git directory that does not name this work tree back \
         (only a linked work tree's or a submodule's is used)",
        .0.display()
    )]
    ForeignGitDir(PathBuf),
    #[error("the `.git` file is not `gitdir: PATH`")]
    BadGitFile,
    #[error(
        "{} makes the repository read refs and objects from another one; remove it",
        .0.display()
    )]
    CommonDir(PathBuf),
    #[error(
        "{} makes the repository read objects of another one; remove it (`git repack -a`, then delete it)",
        .0.display()
    )]
    Alternates(PathBuf),
    #[error(
        "its configuration says it is bare (core.bare); clada commits only to a work tree's repository"
    )]
    Bare,
    #[error(
        "{} sets {}, which makes git read another file, wherever it is; remove it from there \
         (set it in your global configuration)",
        .0.display(), .1
    )]
    ReadsElsewhere(PathBuf, String),
    #[error(
        "its work tree is {} (core.worktree), not the directory that holds `.git`; unset core.worktree",
        .0.display()
    )]
    WorkTreeElsewhere(PathBuf),
    #[error("it changed since the run began (its git directory is now {})", .0.display())]
    Changed(PathBuf),
    #[error("libgit2 cannot open it: {0}")]
    Open(String),
    #[error("{} is {}; remove it", .0.display(), .1)]
    RulesFile(PathBuf, &'static str),
    #[error(
        "{} holds {} bytes, more than the {} git may read for clada's commit (each of its \
         patterns is tried on every path); make it smaller",
        .0.display(), .1, MAX_RULES_FILE
    )]
    RulesFileTooLarge(PathBuf, u64),
}

/// A repository that failed the check, and where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the repository of {} cannot be used: {refusal} (a person must fix it: {}; or run with \
     --no-git)",
    .top.display(), .refusal.why_a_person()
)]
pub(crate) struct RepoError {
    pub(crate) top: PathBuf,
    pub(crate) refusal: Refusal,
}

impl Refusal {
    /// Why no document can fix it.
    fn why_a_person(&self) -> &'static str {
        match self {
            Refusal::RulesFile(..) | Refusal::RulesFileTooLarge(..) => {
                "the commit before the next run's tasks refuses it too, so no document can"
            }
            _ => "no document may write in `.git`",
        }
    }
}

/// The longest `.git` file read.
const GIT_FILE_MAX: u64 = 4096;

/// How deep below `objects/` and `info/` anything is looked at (git reads
/// `objects/xx/…`, `objects/pack/…`, `objects/info/…`, `info/exclude`).
const OBJECTS_DEPTH: usize = 2;

/// How far [`layout`] looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Depth {
    /// `.git`, what it names, and the files and directories the repository
    /// reads when it is opened, themselves: enough before libgit2 opens it.
    Opening,
    /// Everything below them too (`refs/`, `logs/`, `objects/`): before a
    /// commit or a built-in git reads or writes there.
    Use,
}

/// Checks the repository whose `.git` is in `top` (canonical), as far as
/// `depth` says.
pub(crate) fn layout(top: &Path, depth: Depth) -> Result<Layout, Refusal> {
    let dot_git = top.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git)
        .map_err(|e| Refusal::Unreadable(dot_git.clone(), e.to_string()))?;
    let kind = meta.file_type();
    let layout = if kind.is_symlink() {
        return Err(Refusal::Link(dot_git));
    } else if kind.is_dir() {
        let commondir = dot_git.join("commondir");
        if std::fs::symlink_metadata(&commondir).is_ok() {
            return Err(Refusal::CommonDir(commondir));
        }
        Layout {
            top: top.to_path_buf(),
            git_dir: dot_git.clone(),
            common_dir: dot_git.clone(),
            git_file: false,
        }
    } else if kind.is_file() {
        linked(top, &dot_git)?
    } else {
        return Err(Refusal::Special(dot_git));
    };
    let mut places: Vec<(PathBuf, usize)> = Vec::new();
    let mut dirs = vec![&layout.git_dir];
    if layout.common_dir != layout.git_dir {
        dirs.push(&layout.common_dir);
    }
    for dir in &dirs {
        for name in [
            "HEAD",
            "index",
            "config",
            "config.worktree",
            "packed-refs",
            "commondir",
            "gitdir",
            "shallow",
        ] {
            places.push((dir.join(name), 0));
        }
        let below = |n| if depth == Depth::Use { n } else { 0 };
        for name in ["refs", "logs"] {
            places.push((dir.join(name), below(usize::MAX)));
        }
        places.push((dir.join("objects"), below(OBJECTS_DEPTH)));
        places.push((dir.join("info"), below(1)));
    }
    for (path, depth) in places {
        no_links(path, depth)?;
    }
    let alternates = layout.common_dir.join("objects/info/alternates");
    if std::fs::symlink_metadata(&alternates).is_ok() {
        return Err(Refusal::Alternates(alternates));
    }
    for dir in &dirs {
        for name in ["config", "config.worktree"] {
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            if let Some(key) = reads_elsewhere(&read_config(&path)?) {
                return Err(Refusal::ReadsElsewhere(path, key));
            }
        }
    }
    Ok(layout)
}

/// The longest repository configuration file looked at.
const CONFIG_MAX: u64 = 1 << 20;

fn read_config(path: &Path) -> Result<String, Refusal> {
    let text = read_limited(path, CONFIG_MAX + 1)?;
    if text.len() as u64 > CONFIG_MAX {
        return Err(Refusal::Unreadable(
            path.to_path_buf(),
            format!("it is over {CONFIG_MAX} bytes"),
        ));
    }
    Ok(text)
}

/// The first setting of a repository's configuration that makes git read
/// another file, wherever it is: `include.path`, `includeIf.*.path`,
/// `core.excludesFile`, `core.attributesFile` (a command may have written
/// them: the file could be outside the root, or a FIFO that never ends).
/// Read as git reads it, loosely: section headers (`[core]`,
/// `[includeIf "gitdir:x"]`, `[core.sub]`) and `key = value` lines, a key
/// allowed after a header on its line.
fn reads_elsewhere(config: &str) -> Option<String> {
    let mut section = String::new();
    for line in config.lines() {
        let mut rest = line.trim_start();
        if let Some(header) = rest.strip_prefix('[') {
            let end = header.find(']').unwrap_or(header.len());
            section = header[..end]
                .split(|c: char| c.is_whitespace() || c == '"' || c == '.')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if section == "include" || section == "includeif" {
                return Some(format!("[{}]", &header[..end]));
            }
            rest = header.get(end + 1..).unwrap_or("").trim_start();
        }
        let key: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect::<String>()
            .to_ascii_lowercase();
        if section == "core" && (key == "excludesfile" || key == "attributesfile") {
            return Some(format!("core.{key}"));
        }
    }
    None
}

/// The layout named by the `.git` file `dot_git`: a linked work tree's
/// git directory or a submodule's (the latter's `core.worktree` is checked
/// once open, by [`check_open`]).
fn linked(top: &Path, dot_git: &Path) -> Result<Layout, Refusal> {
    let text = read_small(dot_git)?;
    let named = text
        .strip_prefix("gitdir:")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .ok_or(Refusal::BadGitFile)?;
    let git_dir = canonical(&top.join(named))?;
    let commondir = git_dir.join("commondir");
    let common_dir = match std::fs::symlink_metadata(&commondir) {
        Err(_) => git_dir.clone(),
        Ok(m) if m.file_type().is_symlink() => return Err(Refusal::Link(commondir)),
        Ok(_) => {
            let common = canonical(&git_dir.join(read_small(&commondir)?.trim()))?;
            // `COMMON/worktrees/NAME`, whose `gitdir` names this `.git`.
            let back = git_dir.join("gitdir");
            let names_us = read_small(&back)
                .ok()
                .and_then(|t| canonical(&git_dir.join(t.trim())).ok())
                .is_some_and(|p| p == canonical(dot_git).unwrap_or_default());
            if git_dir.parent() != Some(common.join("worktrees").as_path()) || !names_us {
                return Err(Refusal::ForeignGitDir(git_dir));
            }
            common
        }
    };
    Ok(Layout {
        top: top.to_path_buf(),
        git_dir,
        common_dir,
        git_file: true,
    })
}

/// Checks the repository libgit2 opened from `layout`: not bare, its work
/// tree the layout's top, its directories those checked; a `.git` file
/// that is not a linked work tree's must be a submodule's, whose
/// configuration names this work tree.
pub(crate) fn check_open(repo: &Repository, layout: &Layout) -> Result<(), Refusal> {
    let Some(workdir) = repo.workdir() else {
        return Err(Refusal::Bare);
    };
    if repo.is_bare() {
        return Err(Refusal::Bare);
    }
    let workdir = canonical(workdir)?;
    if workdir != layout.top {
        return Err(Refusal::WorkTreeElsewhere(workdir));
    }
    if canonical(repo.path())? != layout.git_dir {
        return Err(Refusal::Changed(repo.path().to_path_buf()));
    }
    if canonical(repo.commondir())? != layout.common_dir {
        return Err(Refusal::CommonDir(repo.commondir().to_path_buf()));
    }
    if layout.git_file && layout.git_dir == layout.common_dir {
        let own = repo
            .config()
            .and_then(|c| c.open_level(git2::ConfigLevel::Local))
            .and_then(|c| c.get_path("core.worktree"))
            .is_ok();
        if !own {
            return Err(Refusal::ForeignGitDir(layout.git_dir.clone()));
        }
    }
    Ok(())
}

/// Refuses a link or anything but a regular file or directory at `path`
/// and, `depth` levels down, below it. Nothing there is fine.
fn no_links(path: PathBuf, depth: usize) -> Result<(), Refusal> {
    let mut stack = vec![(path, depth, None)];
    while let Some((path, depth, kind)) = stack.pop() {
        let kind = match kind {
            Some(kind) => kind,
            None => match std::fs::symlink_metadata(&path) {
                Ok(m) => m.file_type(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Refusal::Unreadable(path, e.to_string())),
            },
        };
        if kind.is_symlink() {
            return Err(Refusal::Link(path));
        }
        if kind.is_file() {
            continue;
        }
        if !kind.is_dir() {
            return Err(Refusal::Special(path));
        }
        if depth == 0 {
            continue;
        }
        let entries = std::fs::read_dir(&path)
            .map_err(|e| Refusal::Unreadable(path.clone(), e.to_string()))?;
        for entry in entries {
            let entry = entry.map_err(|e| Refusal::Unreadable(path.clone(), e.to_string()))?;
            // The kind readdir gave, without following a link; a path is
            // made only for what is looked into or refused (a store of
            // loose objects holds many files).
            let kind = entry
                .file_type()
                .map_err(|e| Refusal::Unreadable(entry.path(), e.to_string()))?;
            if kind.is_file() || (kind.is_dir() && depth == 1) {
                continue;
            }
            stack.push((entry.path(), depth - 1, Some(kind)));
        }
    }
    Ok(())
}

/// A small file's text (a `.git` file, `commondir`, `gitdir`), not read
/// through a link.
fn read_small(path: &Path) -> Result<String, Refusal> {
    read_limited(path, GIT_FILE_MAX)
}

/// At most `max` bytes of the regular file `path`, as text, not read
/// through a link.
fn read_limited(path: &Path, max: u64) -> Result<String, Refusal> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::LOOP => Refusal::Link(path.to_path_buf()),
        e => Refusal::Unreadable(path.to_path_buf(), std::io::Error::from(e).to_string()),
    })?;
    let file = std::fs::File::from(fd);
    let unreadable = |e: std::io::Error| Refusal::Unreadable(path.to_path_buf(), e.to_string());
    if !file.metadata().map_err(unreadable)?.is_file() {
        return Err(Refusal::Special(path.to_path_buf()));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).map_err(unreadable)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn canonical(path: &Path) -> Result<PathBuf, Refusal> {
    path.canonicalize()
        .map_err(|e| Refusal::Unreadable(path.to_path_buf(), e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A repository with one commit (so that refs and logs exist), and its
    /// canonical top.
    fn repo() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("top");
        std::fs::create_dir(&top).unwrap();
        let repo = Repository::init(&top).unwrap();
        std::fs::write(top.join("a.txt"), "a\n").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "one", &tree, &[])
            .unwrap();
        let top = top.canonicalize().unwrap();
        (t, top)
    }

    fn open(layout: &Layout) -> Result<(), Refusal> {
        let flags = git2::RepositoryOpenFlags::NO_SEARCH | git2::RepositoryOpenFlags::NO_DOTGIT;
        let repo = Repository::open_ext(
            layout.top.join(".git"),
            flags,
            std::iter::empty::<&std::ffi::OsStr>(),
        )
        .map_err(|e| Refusal::Open(e.message().to_owned()))?;
        check_open(&repo, layout)
    }

    #[test]
    fn an_ordinary_repository_passes() {
        let (_t, top) = repo();
        let layout = layout(&top, Depth::Use).unwrap();
        assert_eq!(layout.git_dir, top.join(".git"));
        assert_eq!(layout.common_dir, top.join(".git"));
        open(&layout).unwrap();
    }

    #[test]
    fn a_link_where_the_commit_reads_or_writes_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        for place in [
            ".git/HEAD",
            ".git/index",
            ".git/config",
            ".git/logs/HEAD",
            ".git/logs/refs/heads",
            ".git/refs/heads",
            ".git/refs/heads/main",
            ".git/objects",
            ".git/objects/pack",
            ".git/packed-refs",
            ".git/info/exclude",
        ] {
            let (_t, top) = repo();
            let at = top.join(place);
            if at.is_dir() {
                std::fs::remove_dir_all(&at).unwrap();
            } else {
                let _ = std::fs::remove_file(&at);
            }
            std::os::unix::fs::symlink(outside.path(), &at).unwrap();
            assert_eq!(layout(&top, Depth::Use), Err(Refusal::Link(at)), "{place}");
        }
        // Before libgit2 opens it, only what opening reads is looked at.
        let (_t, top) = repo();
        let at = top.join(".git/refs/heads/main");
        let _ = std::fs::remove_file(&at);
        std::os::unix::fs::symlink(outside.path(), &at).unwrap();
        assert!(layout(&top, Depth::Opening).is_ok());
        assert_eq!(layout(&top, Depth::Use), Err(Refusal::Link(at)));
        let at = top.join(".git/HEAD");
        std::fs::remove_file(&at).unwrap();
        std::os::unix::fs::symlink(outside.path(), &at).unwrap();
        assert_eq!(layout(&top, Depth::Opening), Err(Refusal::Link(at)));
        // `.git` itself.
        let (_t, top) = repo();
        std::fs::rename(top.join(".git"), top.join("real")).unwrap();
        std::os::unix::fs::symlink("real", top.join(".git")).unwrap();
        assert_eq!(
            layout(&top, Depth::Use),
            Err(Refusal::Link(top.join(".git")))
        );
    }

    #[test]
    fn a_fifo_where_git_reads_is_refused() {
        let (_t, top) = repo();
        std::fs::remove_file(top.join(".git/HEAD")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            top.join(".git/HEAD"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert_eq!(
            layout(&top, Depth::Use),
            Err(Refusal::Special(top.join(".git/HEAD")))
        );
    }

    #[test]
    fn a_work_tree_elsewhere_or_a_bare_configuration_is_refused() {
        let (_t, top) = repo();
        let mut config = git2::Config::open(&top.join(".git/config")).unwrap();
        config.set_str("core.worktree", "../..").unwrap();
        let l = layout(&top, Depth::Use).unwrap();
        assert!(matches!(open(&l), Err(Refusal::WorkTreeElsewhere(_))));
        config.remove("core.worktree").unwrap();
        open(&l).unwrap();
        config.set_bool("core.bare", true).unwrap();
        assert_eq!(open(&l), Err(Refusal::Bare));
    }

    #[test]
    fn objects_or_refs_from_another_repository_are_refused() {
        let (_t, top) = repo();
        let (_u, other) = repo();
        std::fs::write(
            top.join(".git/objects/info/alternates"),
            format!("{}\n", other.join(".git/objects").display()),
        )
        .unwrap();
        assert!(matches!(
            layout(&top, Depth::Use),
            Err(Refusal::Alternates(_))
        ));
        let (_t, top) = repo();
        std::fs::write(
            top.join(".git/commondir"),
            other.join(".git").display().to_string(),
        )
        .unwrap();
        assert!(matches!(
            layout(&top, Depth::Use),
            Err(Refusal::CommonDir(_))
        ));
    }

    #[test]
    fn configuration_that_reads_other_files_is_refused() {
        for (config, key) in [
            ("[include]\n\tpath = /etc/passwd\n", "[include]"),
            (
                "[includeIf \"gitdir:/\"]\n\tpath = x\n",
                "[includeIf \"gitdir:/\"]",
            ),
            ("[core]\n\texcludesFile = ../fifo\n", "core.excludesfile"),
            ("[Core] AttributesFile = x\n", "core.attributesfile"),
        ] {
            let (_t, top) = repo();
            let path = top.join(".git/config");
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str(config);
            std::fs::write(&path, text).unwrap();
            assert_eq!(
                layout(&top, Depth::Use),
                Err(Refusal::ReadsElsewhere(path, key.to_owned())),
                "{config}"
            );
        }
        // Other sections may name such words.
        assert_eq!(
            reads_elsewhere("[remote \"include\"]\n\turl = x\n[user]\n\texcludesFile = x\n"),
            None
        );
    }

    #[test]
    fn a_git_file_must_name_a_git_directory_that_names_it_back() {
        let (_t, top) = repo();
        let (_u, other) = repo();
        // Another repository's own `.git`.
        std::fs::rename(top.join(".git"), top.join("saved")).unwrap();
        std::fs::write(
            top.join(".git"),
            format!("gitdir: {}\n", other.join(".git").display()),
        )
        .unwrap();
        let l = layout(&top, Depth::Use).unwrap();
        assert_eq!(open(&l), Err(Refusal::ForeignGitDir(other.join(".git"))));
        // A linked work tree's git directory made to look right, with a
        // `commondir` naming another repository: not in its `worktrees/`.
        let fake = top.join("fake");
        std::fs::create_dir(&fake).unwrap();
        std::fs::write(
            fake.join("commondir"),
            other.join(".git").display().to_string(),
        )
        .unwrap();
        std::fs::write(fake.join("gitdir"), top.join(".git").display().to_string()).unwrap();
        std::fs::write(fake.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(top.join(".git"), "gitdir: fake\n").unwrap();
        assert_eq!(
            layout(&top, Depth::Use),
            Err(Refusal::ForeignGitDir(fake.clone()))
        );
        std::fs::write(top.join(".git"), "nonsense\n").unwrap();
        assert_eq!(layout(&top, Depth::Use), Err(Refusal::BadGitFile));
    }

    #[test]
    fn a_linked_work_tree_and_a_submodule_pass() {
        let (_t, top) = repo();
        let repo = Repository::open(&top).unwrap();
        let wt_path = top.parent().unwrap().join("linked");
        repo.worktree("linked", &wt_path, None).unwrap();
        let wt = wt_path.canonicalize().unwrap();
        let l = layout(&wt, Depth::Use).unwrap();
        assert!(l.git_file);
        assert_eq!(l.common_dir, top.join(".git"));
        assert_eq!(l.git_dir, top.join(".git/worktrees/linked"));
        open(&l).unwrap();
        // The same git directory named from somewhere else.
        let elsewhere = top.parent().unwrap().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(
            elsewhere.join(".git"),
            format!("gitdir: {}\n", l.git_dir.display()),
        )
        .unwrap();
        assert!(matches!(
            layout(&elsewhere.canonicalize().unwrap(), Depth::Use),
            Err(Refusal::ForeignGitDir(_))
        ));
        // A submodule: its git directory inside the parent's, with
        // core.worktree naming it back.
        let sub = top.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let modules = top.join(".git/modules/sub");
        Repository::init_bare(&modules).unwrap();
        let mut config = git2::Config::open(&modules.join("config")).unwrap();
        config.set_bool("core.bare", false).unwrap();
        config.set_str("core.worktree", "../../../sub").unwrap();
        std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let l = layout(&sub, Depth::Use).unwrap();
        open(&l).unwrap();
    }
}
