//! The existing path most like one that was not found (PROTOCOL §8,
//! `file_not_found`): the same file name elsewhere, or a path a few
//! characters away, so that the agent need not list the tree to fix it.
//!
//! The tree is walked once per run, breadth first through the root's
//! handles ([`Root::list`], never following a link), passing over `.git`,
//! links and protected places, and bounded in entries and depth; a run
//! looks for at most [`MAX_LOOKUPS`] paths. It is a hint: a file the run
//! created and has not written yet is not among the paths.

use std::cell::{Cell, OnceCell};

use super::fs::Root;
use super::tree::Kind;
use crate::syntax::Location;

/// At most this many files are looked at.
const MAX_FILES: usize = 4096;
/// At most this many directories are listed.
const MAX_DIRS: usize = 1024;
/// Directories deeper than this are not listed.
const MAX_DEPTH: usize = 10;
/// A run says the closest path for at most this many missing paths.
pub(crate) const MAX_LOOKUPS: usize = 64;
/// Paths longer than this are not compared.
const MAX_PATH: usize = 512;

/// The files of the tree, found the first time a path is missing.
#[derive(Debug, Default)]
pub(crate) struct Nearby {
    files: OnceCell<Vec<String>>,
    lookups: Cell<usize>,
}

impl Nearby {
    /// The existing file most like `missing`, if one is alike enough.
    pub(crate) fn closest(&self, root: &Root, missing: &str) -> Option<String> {
        if self.lookups.get() >= MAX_LOOKUPS {
            return None;
        }
        self.lookups.set(self.lookups.get() + 1);
        let files = self.files.get_or_init(|| walk(root));
        closest(files, missing)
    }
}

/// Every file below the root (as `a/b.txt`), within the bounds.
fn walk(root: &Root) -> Vec<String> {
    let mut files = Vec::new();
    let mut queue = std::collections::VecDeque::from([Location::below_root(&[])]);
    let mut listed = 0;
    while let Some(dir) = queue.pop_front() {
        if listed >= MAX_DIRS || files.len() >= MAX_FILES {
            break;
        }
        listed += 1;
        let Ok(entries) = root.list(&dir) else {
            continue;
        };
        for e in entries {
            if e.name == ".git" {
                continue;
            }
            let at = dir.join(&e.name);
            // clada's own directories, where they lie in the root.
            if root.check_lands(&at).is_err() {
                continue;
            }
            match e.kind {
                Kind::File if files.len() < MAX_FILES => files.push(at.display()),
                Kind::Dir if at.parts().len() < MAX_DEPTH => queue.push_back(at),
                _ => {}
            }
        }
    }
    files
}

/// The path of `files` most like `missing`: one with the same file name
/// (the one sharing most directories with it, then the shortest), else one
/// whose name is a few edits away (case aside), the nearest path first.
/// The work is bounded: names are compared before paths, and a path
/// longer than [`MAX_PATH`] is not looked for.
fn closest(files: &[String], missing: &str) -> Option<String> {
    if missing.len() > MAX_PATH {
        return None;
    }
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    let wanted = name(missing);
    let shared = |f: &str| {
        f.split('/')
            .zip(missing.split('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    let same_name = files
        .iter()
        .filter(|f| name(f) == wanted && f.as_str() != missing)
        .min_by_key(|f| (std::cmp::Reverse(shared(f)), f.len()));
    if let Some(f) = same_name {
        return Some(f.clone());
    }
    // A few edits away: at most a third of the name, and at most 4.
    let limit = (wanted.chars().count() / 3).clamp(1, 4);
    let lower = wanted.to_lowercase();
    let path = missing.to_lowercase();
    files
        .iter()
        .filter(|f| f.len() <= MAX_PATH)
        .filter(|f| strsim::levenshtein(&name(f).to_lowercase(), &lower) <= limit)
        .min_by_key(|f| (strsim::levenshtein(&f.to_lowercase(), &path), f.len()))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_name_elsewhere_or_a_few_edits_away() {
        let files: Vec<String> = [
            "aider/utils.py",
            "aider/main.py",
            "tests/test_main.py",
            "README.md",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(
            closest(&files, "aider/utilz.py").as_deref(),
            Some("aider/utils.py")
        );
        assert_eq!(
            closest(&files, "src/main.py").as_deref(),
            Some("aider/main.py")
        );
        assert_eq!(closest(&files, "readme.md").as_deref(), Some("README.md"));
        assert_eq!(closest(&files, "something/else.rs"), None);
    }

    #[test]
    fn the_walk_passes_over_git_and_links() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path();
        std::fs::create_dir_all(p.join(".git")).unwrap_or_default();
        std::fs::write(p.join(".git/config.py"), "").unwrap_or_default();
        std::fs::create_dir_all(p.join("src")).unwrap_or_default();
        std::fs::write(p.join("src/config.py"), "").unwrap_or_default();
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(outside.path().join("secret.py"), "").unwrap_or_default();
        std::os::unix::fs::symlink(outside.path(), p.join("link")).unwrap_or_default();
        let root = Root::open(p).unwrap_or_else(|e| panic!("{e}"));
        let files = walk(&root);
        assert_eq!(files, vec!["src/config.py".to_owned()]);
    }
}
