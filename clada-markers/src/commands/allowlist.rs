//! Approved commands (PROTOCOL §6), kept outside every tree a document can
//! write: one file in clada's configuration directory,
//! `$XDG_CONFIG_HOME/clada/approvals.json`, with each root's approvals
//! under its canonical path. An approval names a command line and where it
//! runs: `commands` run at the root, `dirs` holds the approvals of
//! directories below it, by their path (`web/app`), each approved on its
//! own. Files written before approvals had a directory hold only
//! `commands`, which still mean "at the root".
//!
//! ```json
//! {
//!   "roots": {
//!     "/home/ada/project": {
//!       "commands": ["npm test"],
//!       "added": {"npm test": "2026-01-20T10:30:00Z"},
//!       "dirs": {
//!         "web": {"commands": ["npm test"], "added": {"npm test": "2026-01-21T09:00:00Z"}}
//!       }
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

use crate::engine::dirs::Dirs;
use crate::engine::fs::Root;
use crate::engine::tree::Tree;
use crate::syntax::Location;

/// Where approvals lived before they moved out of the root; ignored.
pub const LEGACY_PATH: &str = ".clada/allowed-commands.json";

/// The approved commands of one root: those approved at the root, and
/// those of each directory below it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowlist {
    commands: Vec<String>,
    #[serde(default)]
    added: BTreeMap<String, String>,
    /// Approvals for directories below the root, by their `/`-separated
    /// path ([`Allowlist::dir_key`]); their own `dirs` are empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    dirs: BTreeMap<String, Allowlist>,
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
        store.roots.retain(|_, l| !l.is_empty());
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
    /// The key of a directory below the root as approvals name it: its
    /// components joined with `/`, `.` and `..` resolved; `None` for the
    /// root itself. An error for a path that leaves the root or is
    /// absolute.
    pub fn dir_key(dir: &str) -> Result<Option<String>, String> {
        if dir.is_empty() {
            return Ok(None);
        }
        let parts = crate::syntax::normalize_path(dir)
            .map_err(|p| format!("the directory `{dir}` {}", p.describe()))?;
        Ok((!parts.is_empty()).then(|| parts.join("/")))
    }

    /// Whether `command` is approved to run in `dir` (`None`: the root).
    pub fn contains(&self, command: &str, dir: Option<&str>) -> bool {
        let list = match dir {
            None => Some(self),
            Some(dir) => self.dirs.get(dir),
        };
        list.is_some_and(|l| {
            l.commands
                .binary_search_by(|c| c.as_str().cmp(command))
                .is_ok()
        })
    }

    /// Every approval: the command, where it runs (`None`: the root), and
    /// when it was approved.
    pub fn commands(&self) -> impl Iterator<Item = (&str, Option<&str>, Option<&str>)> {
        let at_root = self.own().map(|(c, when)| (c, None, when));
        let below = self.dirs.iter().flat_map(|(dir, list)| {
            list.own()
                .map(move |(c, when)| (c, Some(dir.as_str()), when))
        });
        at_root.chain(below)
    }

    fn own(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.commands
            .iter()
            .map(|c| (c.as_str(), self.added.get(c).map(String::as_str)))
    }

    /// Approves `command` (trimmed) in `dir` (`None`: the root), noting
    /// when. Returns false if it was already approved there.
    pub fn add(&mut self, command: &str, dir: Option<&str>, when: SystemTime) -> bool {
        let command = command.trim().to_owned();
        if self.contains(&command, dir) {
            return false;
        }
        let list = match dir {
            None => self,
            Some(dir) => self.dirs.entry(dir.to_owned()).or_default(),
        };
        list.added.insert(
            command.clone(),
            humantime::format_rfc3339_seconds(when).to_string(),
        );
        list.commands.push(command);
        list.normalise();
        true
    }

    /// Withdraws the approval of `command` in `dir`. Returns false if it
    /// was not approved there.
    pub fn remove(&mut self, command: &str, dir: Option<&str>) -> bool {
        let command = command.trim();
        let list = match dir {
            None => Some(self),
            Some(dir) => self.dirs.get_mut(dir),
        };
        let Some(list) = list else {
            return false;
        };
        let before = list.commands.len();
        list.commands.retain(|c| c != command);
        list.added.remove(command);
        list.commands.len() != before
    }

    fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.dirs.is_empty()
    }

    /// Sorted, without duplicates, no dates for commands not listed, and
    /// no empty directory.
    fn normalise(&mut self) {
        self.commands.sort();
        self.commands.dedup();
        let commands = &self.commands;
        self.added.retain(|c, _| commands.binary_search(c).is_ok());
        for list in self.dirs.values_mut() {
            list.dirs.clear();
            list.normalise();
        }
        self.dirs.retain(|_, l| !l.commands.is_empty());
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
        assert!(list.add("npm test", None, when));
        assert!(list.add("  cargo build ", None, when));
        assert!(!list.add("npm test", None, when));
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(
            json,
            r#"{"commands":["cargo build","npm test"],"added":{"cargo build":"2026-01-20T10:30:00Z","npm test":"2026-01-20T10:30:00Z"}}"#
        );
        assert!(list.contains("cargo build", None));
        assert!(list.remove("npm test", None));
        assert!(!list.contains("npm test", None));
    }

    #[test]
    fn an_approval_holds_only_where_it_was_given() {
        let mut list = Allowlist::default();
        let when = UNIX_EPOCH + Duration::from_secs(1_768_905_000);
        assert!(list.add("git add -A", None, when));
        assert!(!list.contains("git add -A", Some("fake")));
        assert!(list.add("make", Some("web"), when));
        assert!(list.contains("make", Some("web")));
        assert!(!list.contains("make", None));
        assert!(!list.contains("make", Some("web/app")));
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(
            json,
            r#"{"commands":["git add -A"],"added":{"git add -A":"2026-01-20T10:30:00Z"},"dirs":{"web":{"commands":["make"],"added":{"make":"2026-01-20T10:30:00Z"}}}}"#
        );
        let all: Vec<_> = list.commands().map(|(c, d, _)| (c, d)).collect();
        assert_eq!(all, [("git add -A", None), ("make", Some("web"))]);
        assert!(!list.remove("make", None));
        assert!(list.remove("make", Some("web")));
        let mut again: Allowlist = serde_json::from_str(&json).unwrap();
        again.remove("make", Some("web"));
        again.normalise();
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            r#"{"commands":["git add -A"],"added":{"git add -A":"2026-01-20T10:30:00Z"}}"#
        );
    }

    #[test]
    fn an_old_file_without_dirs_means_the_root() {
        let list: Allowlist = serde_json::from_str(r#"{"commands":["npm test"]}"#).unwrap();
        assert!(list.contains("npm test", None));
        assert!(!list.contains("npm test", Some("sub")));
    }

    #[test]
    fn directories_are_named_once_and_stay_in_the_root() {
        assert_eq!(Allowlist::dir_key(".").unwrap(), None);
        assert_eq!(Allowlist::dir_key("").unwrap(), None);
        assert_eq!(
            Allowlist::dir_key("a/./b/").unwrap().as_deref(),
            Some("a/b")
        );
        assert_eq!(Allowlist::dir_key("a/../b").unwrap().as_deref(), Some("b"));
        assert!(Allowlist::dir_key("../x").is_err());
        assert!(Allowlist::dir_key("/etc").is_err());
    }
}
