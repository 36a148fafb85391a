//! Approved commands: `ROOT/.clada/allowed-commands.json` (SPEC §6).
//!
//! ```json
//! {"commands": ["npm test"], "added": {"npm test": "2026-01-20T10:30:00Z"}}
//! ```
//!
//! The file is read and written through the root handle (never through a
//! link), written atomically, and kept sorted with one entry per line, so
//! that it diffs well in version control. Documents cannot write under
//! `.clada/`: only `clada allow` and an "always" answer to a prompt change
//! it.

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::engine::fs::{Files, FsError, Location, Root};

/// Where the file lives, relative to the root.
pub const ALLOWLIST_PATH: &str = ".clada/allowed-commands.json";

/// The approved commands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowlist {
    commands: Vec<String>,
    #[serde(default)]
    added: BTreeMap<String, String>,
}

/// Why the approvals could not be read or written.
#[derive(Debug)]
pub enum AllowlistError {
    Fs(FsError),
    /// The file is not the JSON clada writes.
    Invalid(String),
}

impl std::fmt::Display for AllowlistError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllowlistError::Fs(e) => write!(f, "{e}"),
            AllowlistError::Invalid(e) => write!(f, "{ALLOWLIST_PATH} is not valid: {e}"),
        }
    }
}

impl std::error::Error for AllowlistError {}

fn location() -> Location {
    Location::below_root(&[".clada", "allowed-commands.json"])
}

impl Allowlist {
    /// Reads the approvals; a missing file means none.
    pub fn load(root: &Root) -> Result<Allowlist, AllowlistError> {
        match root.read(&location()) {
            Ok(bytes) => {
                let mut list: Allowlist = serde_json::from_slice(&bytes)
                    .map_err(|e| AllowlistError::Invalid(e.to_string()))?;
                list.normalise();
                Ok(list)
            }
            Err(FsError::NotFound { .. }) => Ok(Allowlist::default()),
            Err(e) => Err(AllowlistError::Fs(e)),
        }
    }

    /// Writes the approvals atomically, creating `.clada/` if needed.
    pub fn save(&self, root: &Root) -> Result<(), AllowlistError> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| AllowlistError::Invalid(e.to_string()))?;
        text.push('\n');
        root.write(&location(), text.as_bytes())
            .map(drop)
            .map_err(AllowlistError::Fs)
    }

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
