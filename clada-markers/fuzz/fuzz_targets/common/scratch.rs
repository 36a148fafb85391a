//! A scratch tree for the targets that run the engine: a root with a few
//! files and links out of it, and a canary beside it. It is made once per
//! process, in memory (`/dev/shm`) where the system has it, and put back
//! only when an input changed the root: most inputs change nothing, and
//! making and removing a tree per input was most of a run's time.

#![allow(dead_code)] // each target uses part of it

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a snapshot holds of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
    /// Anything else (never read: a FIFO would block).
    Other,
}

/// Every entry below a directory, by path relative to it, sorted.
pub type Snapshot = Vec<(PathBuf, Entry)>;

/// Every entry below `dir` but `skip` (a name directly in `dir`).
pub fn snapshot(dir: &Path, skip: Option<&str>) -> Snapshot {
    let mut out = Vec::new();
    walk(dir, Path::new(""), skip, &mut out);
    out
}

fn walk(dir: &Path, rel: &Path, skip: Option<&str>, out: &mut Snapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if skip.is_some_and(|s| name == s) {
            continue;
        }
        let path = dir.join(&name);
        let rel = rel.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let t = meta.file_type();
        let entry = if t.is_symlink() {
            Entry::Link(std::fs::read_link(&path).unwrap_or_default())
        } else if t.is_dir() {
            walk(&path, &rel, None, out);
            Entry::Dir
        } else if t.is_file() {
            Entry::File(std::fs::read(&path).expect("a file of the scratch tree"))
        } else {
            Entry::Other
        };
        out.push((rel, entry));
    }
}

/// clada's temporary files (`.NAME.clada-PID-N.tmp`) in a snapshot.
pub fn temp_files(snap: &Snapshot) -> Vec<&Path> {
    snap.iter()
        .map(|(p, _)| p.as_path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            name.starts_with('.') && name.ends_with(".tmp") && name.contains(".clada-")
        })
        .collect()
}

/// Where scratch trees go: `/dev/shm` (memory) if it is there, else the
/// temporary directory.
fn base() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() && std::fs::metadata(shm).is_ok_and(|m| !m.permissions().readonly()) {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Removes the scratch trees of fuzz processes that are gone (libFuzzer
/// ends a process with `exit`, which runs no destructor).
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("clada-fuzz-") else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !pid.is_empty()
            && pid.bytes().all(|b| b.is_ascii_digit())
            && !Path::new("/proc").join(pid).exists()
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A new, empty directory `name` of this process where scratch trees go
/// (after removing those of processes that are gone).
pub fn fresh(name: &str) -> PathBuf {
    let base = base();
    sweep(&base);
    let dir = base.join(format!("clada-fuzz-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// How to fill a directory.
pub type Fill = fn(&Path);

/// A root, and what lies beside it, with their first snapshots.
pub struct Scratch {
    name: String,
    generation: u64,
    dir: PathBuf,
    root: PathBuf,
    fill_root: Fill,
    fill_beside: Fill,
    pristine_root: Snapshot,
    pristine_beside: Snapshot,
}

impl Scratch {
    /// Makes the scratch tree `name` of this process: `fill_root` makes
    /// the root's contents, `fill_beside` what lies beside the root.
    pub fn new(name: &str, fill_root: Fill, fill_beside: Fill) -> Scratch {
        let dir = fresh(name);
        let mut s = Scratch {
            name: name.to_owned(),
            generation: 0,
            root: dir.join("root"),
            dir,
            fill_root,
            fill_beside,
            pristine_root: Vec::new(),
            pristine_beside: Vec::new(),
        };
        (s.fill_root)(&s.root);
        (s.fill_beside)(&s.dir);
        s.pristine_root = snapshot(&s.root, None);
        s.pristine_beside = snapshot(&s.dir, Some("root"));
        s
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root's contents after an input, after checking that nothing
    /// beside the root changed; the root is then put back as it was made
    /// if the input changed it.
    pub fn finish(&mut self) -> Snapshot {
        let beside = snapshot(&self.dir, Some("root"));
        assert_eq!(
            beside, self.pristine_beside,
            "something outside the root changed"
        );
        let now = snapshot(&self.root, None);
        if now != self.pristine_root {
            self.reset();
        }
        now
    }

    /// Whether the root is as it was made (after checking that nothing
    /// beside it changed); it is put back if not.
    pub fn finish_unchanged(&mut self) -> bool {
        self.finish() == self.pristine_root
    }

    fn reset(&mut self) {
        let emptied =
            std::fs::remove_dir_all(&self.root).is_ok() && std::fs::create_dir(&self.root).is_ok();
        if emptied {
            (self.fill_root)(&self.root);
        }
        if !emptied || snapshot(&self.root, None) != self.pristine_root {
            // Something would not go away: start a new tree beside.
            let _ = std::fs::remove_dir_all(&self.dir);
            self.generation += 1;
            self.dir = fresh(&format!("{}-{}", self.name, self.generation));
            self.root = self.dir.join("root");
            std::fs::create_dir(&self.root).expect("scratch root");
            (self.fill_root)(&self.root);
            (self.fill_beside)(&self.dir);
            assert_eq!(snapshot(&self.root, None), self.pristine_root);
        }
    }
}
