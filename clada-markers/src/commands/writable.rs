//! What a confined command may write (`--sandbox`, PROTOCOL §6): the root
//! and its own temporary directory, less clada's own directories
//! (configuration, state, runtime) where they lie inside the root.
//!
//! With the home directory as the root, clada's configuration directory
//! (`~/.config/clada`, the approvals) is below the root; a command that
//! could write it would approve commands for later runs. Landlock only
//! allows, and a rule on a directory covers everything below it. So a
//! writable directory that holds one of clada's directories is not granted
//! whole: each of its entries is, but the one on the way to clada's
//! directory, whose entries are granted in turn, and so on down to clada's
//! directory, which gets no rule at all. Each of clada's directories is
//! kept out both as written and with links resolved (`~/.config` may be a
//! link into a dotfiles directory), and a link on the way is never granted
//! (nor is any link: Landlock would grant what it names).
//!
//! The cost: the directories on the way (with the home as the root: `~`,
//! `~/.config`, `~/.local`, `~/.local/state`) stay readable, and what they
//! hold stays writable, but nothing can be made, removed or renamed
//! directly in them. Nothing is carved out of a tree that holds none of
//! clada's directories: it is granted whole, as it always was.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

/// Something the command may write: a directory (with all below it) or
/// one file, open without following a link.
#[derive(Debug)]
pub(crate) struct Grant {
    pub(crate) fd: OwnedFd,
    pub(crate) dir: bool,
}

/// The paths below one writable directory that lead to clada's
/// directories: a tree of names, a leaf being one of clada's directories.
#[derive(Debug, Default)]
struct Way {
    /// One of clada's directories: nothing below it is granted.
    kept_out: bool,
    next: BTreeMap<OsString, Way>,
}

impl Way {
    fn add(&mut self, parts: &[OsString]) {
        if self.kept_out {
            return;
        }
        match parts.split_first() {
            None => {
                self.kept_out = true;
                self.next.clear();
            }
            Some((first, rest)) => self.next.entry(first.clone()).or_default().add(rest),
        }
    }
}

/// What a command confined to `writable` may write, less `kept_out` (and
/// all below them) wherever they lie inside a writable directory. An error
/// (to be said as the reason the command did not run) when a writable
/// directory lies inside one of `kept_out`, or cannot be opened.
pub(crate) fn grants(writable: &[PathBuf], kept_out: &[PathBuf]) -> Result<Vec<Grant>, String> {
    let mut out = Vec::new();
    for dir in writable {
        let dir_forms = forms(dir);
        let mut way = Way::default();
        for kept in kept_out {
            for kept_form in forms(kept) {
                for form in &dir_forms {
                    if form.starts_with(&kept_form) {
                        return Err(format!(
                            "{} lies inside clada's own directory {}, which no command may write",
                            dir.display(),
                            kept.display()
                        ));
                    }
                    if let Some(parts) = below(form, &kept_form) {
                        way.add(&parts);
                    }
                }
            }
        }
        let open = |flags| {
            rustix::fs::open(dir, flags | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| format!("cannot open {}: {e}", dir.display()))
        };
        if way.next.is_empty() {
            let fd = open(OFlags::PATH | OFlags::DIRECTORY)?;
            out.push(Grant { fd, dir: true });
        } else {
            let fd = open(OFlags::RDONLY | OFlags::DIRECTORY)?;
            grant_entries(&fd, &way, &mut out)
                .map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        }
    }
    Ok(out)
}

/// Grants each entry of the directory `dir` but those on `way`, and on
/// the way, down to clada's directories.
fn grant_entries(dir: &OwnedFd, way: &Way, out: &mut Vec<Grant>) -> rustix::io::Result<()> {
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        match way.next.get(OsStr::from_bytes(bytes)) {
            Some(next) if next.kept_out => {}
            Some(next) => {
                // A link or a file where the way goes is not followed, and
                // gets no rule.
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                if let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) {
                    grant_entries(&fd, next, out)?;
                }
            }
            None => {
                let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) else {
                    continue;
                };
                let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode);
                match kind {
                    FileType::Symlink => {}
                    FileType::Directory => out.push(Grant { fd, dir: true }),
                    _ => out.push(Grant { fd, dir: false }),
                }
            }
        }
    }
    Ok(())
}

/// `path` as written (made absolute) and with links resolved as far as it
/// exists.
fn forms(path: &Path) -> Vec<PathBuf> {
    let written = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let resolved = crate::engine::dirs::canonical(path);
    if resolved == written {
        vec![written]
    } else {
        vec![written, resolved]
    }
}

/// The names leading from `dir` to `path`, when `path` lies strictly below
/// it (compared as written: `..` is not resolved, and a path holding one
/// is left to its resolved form).
fn below(dir: &Path, path: &Path) -> Option<Vec<OsString>> {
    let rest = path.strip_prefix(dir).ok()?;
    let mut parts = Vec::new();
    for c in rest.components() {
        match c {
            Component::Normal(name) => parts.push(name.to_owned()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then_some(parts)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::fd::AsFd;

    use super::*;

    /// The paths the grants name, below `base`, with `/` after a
    /// directory.
    fn granted(grants: &[Grant], base: &Path) -> Vec<String> {
        let base = base.canonicalize().unwrap();
        let mut names: Vec<String> = grants
            .iter()
            .map(|g| {
                let at = std::fs::read_link(format!(
                    "/proc/self/fd/{}",
                    std::os::fd::AsRawFd::as_raw_fd(&g.fd.as_fd())
                ))
                .unwrap();
                let rel = at.strip_prefix(&base).unwrap().display().to_string();
                if g.dir { format!("{rel}/") } else { rel }
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_tree_without_clada_s_directories_is_granted_whole() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        let g = grants(
            std::slice::from_ref(&root),
            &[t.path().join("home/.config/clada")],
        )
        .unwrap();
        assert_eq!(granted(&g, t.path()), ["root/"]);
    }

    #[test]
    fn clada_s_directories_and_the_way_to_them_are_carved_out() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        for d in [
            ".config/clada",
            ".config/git",
            ".local/state/clada",
            "project",
        ] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::fs::write(home.join(".config/user-dirs.dirs"), "").unwrap();
        std::os::unix::fs::symlink("/", home.join("up")).unwrap();
        let kept = [
            home.join(".config/clada"),
            home.join(".local/state/clada"),
            // Not made yet: its parents stay on the way.
            home.join(".cache/run/clada"),
        ];
        let g = grants(std::slice::from_ref(&home), &kept).unwrap();
        assert_eq!(
            granted(&g, t.path()),
            [
                "home/.bashrc",
                "home/.config/git/",
                "home/.config/user-dirs.dirs",
                "home/project/",
            ]
        );
    }

    #[test]
    fn a_link_on_the_way_is_kept_out_as_written_and_resolved() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(home.join("dotfiles/config/clada")).unwrap();
        std::fs::create_dir_all(home.join("dotfiles/vim")).unwrap();
        std::os::unix::fs::symlink("dotfiles/config", home.join(".config")).unwrap();
        let g = grants(std::slice::from_ref(&home), &[home.join(".config/clada")]).unwrap();
        // `.config` (the link) is not granted; `dotfiles/config`, where
        // the link leads, is on the way.
        assert_eq!(granted(&g, t.path()), ["home/dotfiles/vim/"]);
    }

    #[test]
    fn a_root_inside_clada_s_directory_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state/clada");
        std::fs::create_dir_all(state.join("watch")).unwrap();
        let e = grants(&[state.join("watch")], std::slice::from_ref(&state)).unwrap_err();
        assert!(e.contains("inside clada's own directory"), "{e}");
        let both = std::slice::from_ref(&state);
        assert!(grants(both, both).is_err());
    }
}
