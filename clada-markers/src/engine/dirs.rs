//! clada's own directories (PROTOCOL §6): where approvals, state and locks
//! live, outside every tree a document can write.
//!
//! - configuration: `$XDG_CONFIG_HOME/clada`, else `~/.config/clada`
//!   (approvals);
//! - state: `$XDG_STATE_HOME/clada`, else `~/.local/state/clada`;
//! - runtime: `$XDG_RUNTIME_DIR/clada`, else `clada-UID` in the temporary
//!   directory, made 0700 and checked to be the user's own (default locks
//!   and their journals).
//!
//! Relative values are ignored, as the XDG specification asks. The values
//! come from a lookup function, so that tests and library users pass their
//! own without touching the process's environment.

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use crate::syntax::Location;

/// Why clada's directories cannot be found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DirsError {
    /// Neither the XDG variable nor `HOME` is an absolute path.
    #[error("neither {variable} nor HOME is set to an absolute path")]
    NoHome { variable: &'static str },
}

/// The name clada gives a file of its own directories after `key` (a
/// lock after its root, a watch's memory after its file and root): git's
/// blob id of `key` (the SHA-1 of `blob LEN`, a NUL and the bytes), in
/// hex, as every earlier version named them, so that two versions running
/// at once share one lock. Computed here, not by libgit2, whose start-up
/// a run without git would pay for one hash.
pub(crate) fn file_key(key: &[u8]) -> String {
    let mut sha = sha1_smol::Sha1::new();
    sha.update(format!("blob {}\0", key.len()).as_bytes());
    sha.update(key);
    sha.digest().to_string()
}

/// clada's configuration, state and runtime directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dirs {
    pub config: PathBuf,
    pub state: PathBuf,
    pub runtime: PathBuf,
}

impl Dirs {
    /// From the process's environment.
    pub fn from_env() -> Result<Dirs, DirsError> {
        Dirs::from_lookup(|name| std::env::var_os(name))
    }

    /// From `lookup`, which gives an environment variable's value.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Dirs, DirsError> {
        let absolute = |name: &str| lookup(name).map(PathBuf::from).filter(|p| p.is_absolute());
        let home = absolute("HOME");
        let under_home = |xdg: &'static str, default: &str| {
            absolute(xdg)
                .or_else(|| home.as_ref().map(|h| h.join(default)))
                .map(|d| d.join("clada"))
                .ok_or(DirsError::NoHome { variable: xdg })
        };
        let runtime = match absolute("XDG_RUNTIME_DIR") {
            Some(dir) => dir.join("clada"),
            None => {
                let tmp = absolute("TMPDIR").unwrap_or_else(|| PathBuf::from("/tmp"));
                tmp.join(format!("clada-{}", rustix::process::getuid().as_raw()))
            }
        };
        Ok(Dirs {
            config: under_home("XDG_CONFIG_HOME", ".config")?,
            state: under_home("XDG_STATE_HOME", ".local/state")?,
            runtime,
        })
    }

    /// The file that holds every root's approvals.
    pub fn approvals(&self) -> PathBuf {
        self.config.join("approvals.json")
    }

    /// Makes `dir` (one of these) with its parents, 0700, and checks that
    /// it is a directory of this user's that nobody else may write.
    pub fn ensure(dir: &Path) -> std::io::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let meta = std::fs::symlink_metadata(dir)?;
        let ours = meta.uid() == rustix::process::getuid().as_raw();
        if !meta.is_dir() || !ours || meta.permissions().mode() & 0o022 != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a directory of this user's that only they can write",
                    dir.display()
                ),
            ));
        }
        Ok(())
    }

    /// The three directories.
    pub(crate) fn all(&self) -> [&Path; 3] {
        [&self.config, &self.state, &self.runtime]
    }

    /// These directories, where they lie inside `root`, as locations below
    /// it: places no document may touch.
    pub(crate) fn inside(&self, root: &Path) -> Vec<Location> {
        let roots = both_ways(root);
        [&self.config, &self.state, &self.runtime]
            .into_iter()
            .flat_map(|dir| locations_below(&roots, dir))
            .collect()
    }
}

/// Where `path` lies below `root`: as written and with links resolved,
/// each of the two against the root as given and as resolved. A place
/// reached through a link inside the root (`.config -> dotfiles/config`)
/// is named both ways, so that neither the link nor what it leads to can
/// be changed; one reached through a link out of the root is still named
/// as written.
pub(crate) fn locations_in(root: &Path, path: &Path) -> Vec<Location> {
    locations_below(&both_ways(root), path)
}

/// `path` as written (made absolute) and with links resolved.
fn both_ways(path: &Path) -> [PathBuf; 2] {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    [absolute, canonical(path)]
}

/// [`locations_in`] against a root already taken [`both_ways`].
fn locations_below(roots: &[PathBuf; 2], path: &Path) -> Vec<Location> {
    let paths = both_ways(path);
    let mut out: Vec<Location> = Vec::new();
    for root in roots {
        for path in &paths {
            if let Some(at) = below(root, path)
                && !out.contains(&at)
            {
                out.push(at);
            }
        }
    }
    out
}

/// `path` as a location below `root`, compared as text, if it is below.
fn below(root: &Path, path: &Path) -> Option<Location> {
    let rel = path.strip_prefix(root).ok()?;
    let mut parts: Vec<&str> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::CurDir => {}
            // `..` as written: resolved already in the canonical form.
            _ => return None,
        }
    }
    Some(Location::below_root(&parts))
}

/// `path` with links resolved as far as it exists, the rest appended.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_file_key_is_the_blob_id_git_gives_the_same_bytes() {
        let long = "x".repeat(100_000);
        for key in [
            "",
            "/",
            "/home/u/project",
            "/r\0/f.md",
            "ünïcode\n\t",
            long.as_str(),
        ] {
            let git = git2::Oid::hash_object(git2::ObjectType::Blob, key.as_bytes()).unwrap();
            assert_eq!(file_key(key.as_bytes()), git.to_string(), "{key:?}");
        }
    }

    #[test]
    fn a_place_behind_a_link_is_named_as_written_and_as_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("dotfiles/config/clada")).unwrap();
        std::os::unix::fs::symlink("dotfiles/config", root.join(".config")).unwrap();
        std::fs::write(root.join("real.md"), "").unwrap();
        std::os::unix::fs::symlink("real.md", root.join("feed.md")).unwrap();
        let shown = |p: &Path| -> Vec<String> {
            locations_in(root, p)
                .iter()
                .map(Location::display)
                .collect()
        };
        assert_eq!(
            shown(&root.join(".config/clada")),
            [".config/clada", "dotfiles/config/clada"]
        );
        assert_eq!(shown(&root.join("feed.md")), ["feed.md", "real.md"]);
        // A link out of the root: the place is still named as written.
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        assert_eq!(shown(&root.join("out/clada")), ["out/clada"]);
        assert!(shown(outside.path()).is_empty());
    }

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn follows_xdg_and_falls_back_to_home() {
        let d =
            Dirs::from_lookup(lookup(&[("HOME", "/h"), ("XDG_RUNTIME_DIR", "/run/u")])).unwrap();
        assert_eq!(d.config, Path::new("/h/.config/clada"));
        assert_eq!(d.state, Path::new("/h/.local/state/clada"));
        assert_eq!(d.runtime, Path::new("/run/u/clada"));
        let d = Dirs::from_lookup(lookup(&[
            ("HOME", "/h"),
            ("XDG_CONFIG_HOME", "/c"),
            ("XDG_STATE_HOME", "relative/ignored"),
        ]))
        .unwrap();
        assert_eq!(d.config, Path::new("/c/clada"));
        assert_eq!(d.state, Path::new("/h/.local/state/clada"));
        assert!(d.runtime.to_string_lossy().starts_with("/tmp/clada-"));
        assert!(Dirs::from_lookup(lookup(&[])).is_err());
    }

    #[test]
    fn tells_which_directories_a_root_holds() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().to_str().unwrap();
        let d =
            Dirs::from_lookup(lookup(&[("HOME", home), ("XDG_RUNTIME_DIR", "/nowhere")])).unwrap();
        let inside = d.inside(t.path());
        assert_eq!(
            inside,
            [
                Location::below_root(&[".config", "clada"]),
                Location::below_root(&[".local", "state", "clada"])
            ]
        );
        assert!(d.inside(&t.path().join("project")).is_empty());
    }

    #[test]
    fn makes_private_directories_and_refuses_shared_ones() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("a/b");
        Dirs::ensure(&dir).unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let shared = t.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(Dirs::ensure(&shared).is_err());
    }
}
