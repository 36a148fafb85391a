//! A confined command's own temporary directory (`--sandbox`, PROTOCOL
//! §6).
//!
//! A confined command may write the root and one temporary directory. Were
//! that the system's (`/tmp`), it could plant links where clada itself,
//! unconfined, writes afterwards (clada's runtime directory lies there when
//! `XDG_RUNTIME_DIR` is not set), or where another run's command works. So
//! each command gets a directory of its own: made fresh for it, 0700, with
//! a name nobody can guess, given to it as `TMPDIR` (and `TMP`, `TEMP`,
//! `TEMPDIR`), and removed with all it holds when the command ends.

use std::path::Path;

/// A command's own temporary directory, removed when dropped.
#[derive(Debug)]
pub(crate) struct PrivateTemp(tempfile::TempDir);

impl PrivateTemp {
    /// Makes a fresh directory (0700) in `base`.
    pub(crate) fn new(base: &Path) -> std::io::Result<PrivateTemp> {
        use std::os::unix::fs::PermissionsExt;
        tempfile::Builder::new()
            .prefix("clada-run-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(base)
            .map(PrivateTemp)
    }

    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn is_private_fresh_and_removed_with_what_it_holds() {
        let base = tempfile::tempdir().unwrap();
        let a = PrivateTemp::new(base.path()).unwrap();
        let b = PrivateTemp::new(base.path()).unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::create_dir(a.path().join("d")).unwrap();
        std::fs::write(a.path().join("d/f"), "x").unwrap();
        // A link inside is removed, not what it names.
        std::os::unix::fs::symlink(base.path(), a.path().join("up")).unwrap();
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
        assert!(b.path().exists());
    }
}
