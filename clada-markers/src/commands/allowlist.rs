//! Approved commands (PROTOCOL §6), kept outside every tree a document can
//! write: one file in clada's configuration directory,
//! `$XDG_CONFIG_HOME/clada/approvals.json`, with each root's approvals
//! under its canonical path.
//!
//! ```json
//! {
//!   "roots": {
//!     "/home/ada/project": {
//!       "commands": ["npm test"],
//!       "added": {"npm test": "2026-01-20T10:30:00Z"}
//!     }
//!   }
//! }
//! ```
//!
//! Changes are read, made and written under an exclusive lock on
//! `approvals.json.lock`, and written atomically (a temporary file renamed
//! over the old one), so concurrent `clada allow` runs lose nothing. An old
//! `ROOT/.clada/allowed-commands.json` is never read: a document could
//! have written it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::dirs::Dirs;
use crate::engine::fs::{Files, Location, Root};

/// Where approvals lived before they moved out of the root; ignored.
pub const LEGACY_PATH: &str = ".clada/allowed-commands.json";

/// The approved commands of one root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowlist {
    commands: Vec<String>,
    #[serde(default)]
    added: BTreeMap<String, String>,
}

/// The whole file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    #[serde(default)]
    roots: BTreeMap<String, Allowlist>,
}

/// Why the approvals could not be read or written.
#[derive(Debug)]
pub enum AllowlistError {
    Io(PathBuf, std::io::Error),
    /// The file is not the JSON clada writes.
    Invalid(PathBuf, String),
}

impl std::fmt::Display for AllowlistError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllowlistError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            AllowlistError::Invalid(p, e) => write!(f, "{} is not valid: {e}", p.display()),
        }
    }
}

impl std::error::Error for AllowlistError {}

/// The approvals of one root, in clada's configuration directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approvals {
    file: PathBuf,
    /// The root's canonical path: the key.
    root: String,
}

impl Approvals {
    /// The approvals of `root` (resolved to its canonical path) in `dirs`.
    pub fn new(dirs: &Dirs, root: &Path) -> std::io::Result<Approvals> {
        let root = std::fs::canonicalize(root)?;
        Ok(Approvals {
            file: dirs.approvals(),
            root: root.to_string_lossy().into_owned(),
        })
    }

    /// The file that holds them.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The root they are for, canonical.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Reads this root's approvals; a missing file means none.
    pub fn load(&self) -> Result<Allowlist, AllowlistError> {
        let mut list = read_store(&self.file)?
            .roots
            .remove(&self.root)
            .unwrap_or_default();
        list.normalise();
        Ok(list)
    }

    /// Changes this root's approvals with `change` under the lock, and
    /// writes them when it says it changed something. Returns what it said.
    pub fn update(
        &self,
        change: impl FnOnce(&mut Allowlist) -> bool,
    ) -> Result<bool, AllowlistError> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        let io = |e| AllowlistError::Io(dir.to_path_buf(), e);
        Dirs::ensure(dir).map_err(io)?;
        let lock_path = self.file.with_extension("json.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| AllowlistError::Io(lock_path.clone(), e))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| AllowlistError::Io(lock_path.clone(), e.into()))?;
        let mut store = read_store(&self.file)?;
        let list = store.roots.entry(self.root.clone()).or_default();
        list.normalise();
        if !change(list) {
            return Ok(false);
        }
        list.normalise();
        store.roots.retain(|_, l| !l.commands.is_empty());
        let mut text = serde_json::to_string_pretty(&store)
            .map_err(|e| AllowlistError::Invalid(self.file.clone(), e.to_string()))?;
        text.push('\n');
        let temp = self
            .file
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&temp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&temp, &self.file)
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&temp);
            return Err(AllowlistError::Io(self.file.clone(), e));
        }
        Ok(true)
    }
}

fn read_store(file: &Path) -> Result<Store, AllowlistError> {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| AllowlistError::Invalid(file.to_path_buf(), e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Store::default()),
        Err(e) => Err(AllowlistError::Io(file.to_path_buf(), e)),
    }
}

/// Whether the root holds an approval file of the old kind, which is
/// ignored (a warning should say so).
pub(crate) fn legacy_file(root: &Root) -> bool {
    let at = Location::below_root(&[".clada", "allowed-commands.json"]);
    matches!(root.kind(&at), Ok(Some(_)))
}

impl Allowlist {
    pub fn contains(&self, command: &str) -> bool {
        self.commands
            .binary_search_by(|c| c.as_str().cmp(command))
            .is_ok()
    }

    pub fn commands(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.commands
            .iter()
            .map(|c| (c.as_str(), self.added.get(c).map(String::as_str)))
    }

    /// Approves `command` (trimmed), noting when. Returns false if it was
    /// already approved.
    pub fn add(&mut self, command: &str, when: SystemTime) -> bool {
        let command = command.trim().to_owned();
        if self.contains(&command) {
            return false;
        }
        self.added.insert(
            command.clone(),
            humantime::format_rfc3339_seconds(when).to_string(),
        );
        self.commands.push(command);
        self.normalise();
        true
    }

    /// Withdraws approval. Returns false if it was not approved.
    pub fn remove(&mut self, command: &str) -> bool {
        let command = command.trim();
        let before = self.commands.len();
        self.commands.retain(|c| c != command);
        self.added.remove(command);
        self.commands.len() != before
    }

    /// Sorted, without duplicates, and no dates for commands not listed.
    fn normalise(&mut self) {
        self.commands.sort();
        self.commands.dedup();
        let commands = &self.commands;
        self.added.retain(|c, _| commands.binary_search(c).is_ok());
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn keeps_commands_sorted_with_their_dates() {
        let mut list = Allowlist::default();
        let when = UNIX_EPOCH + Duration::from_secs(1_768_905_000);
        assert!(list.add("npm test", when));
        assert!(list.add("  cargo build ", when));
        assert!(!list.add("npm test", when));
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(
            json,
            r#"{"commands":["cargo build","npm test"],"added":{"cargo build":"2026-01-20T10:30:00Z","npm test":"2026-01-20T10:30:00Z"}}"#
        );
        assert!(list.contains("cargo build"));
        assert!(list.remove("npm test"));
        assert!(!list.contains("npm test"));
    }
}
