//! A document applied to files held in memory (PROTOCOL §7.6): files in,
//! files out and the report. The run is [`Apply`]'s, on a root that
//! stands on a tree in memory instead of a directory: the same engine,
//! rules and report, with no disk, no lock, no git, no undo record and no
//! process.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::Apply;
use crate::dialect::parse_units;
use crate::engine::memory::MemoryTree;
use crate::engine::settings::Settings;
use crate::error_type::ErrorType;
use crate::report::ApplyReport;
use crate::syntax::MAX_DOCUMENT_SIZE;

/// The most bytes the files given to [`apply_files`] may hold together:
/// eight documents of the largest size (400 MiB).
pub const MAX_FILES_SIZE: usize = 8 * MAX_DOCUMENT_SIZE;

/// Why [`apply_files`] could not run: nothing was applied. A document
/// that fails, in part or whole, is a report, not one of these.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilesError {
    /// The document is over [`MAX_DOCUMENT_SIZE`].
    #[error(
        "the document is {size} bytes, over the limit of {limit} bytes; send a shorter one \
         (split the edits)",
        limit = MAX_DOCUMENT_SIZE
    )]
    DocumentTooLarge { size: usize },
    /// The files hold more than [`MAX_FILES_SIZE`] bytes together.
    #[error(
        "the files hold {size} bytes together, over the limit of {limit} bytes; \
         give only the files the document is about",
        limit = MAX_FILES_SIZE
    )]
    FilesTooLarge { size: usize },
    /// A key of the map that is not a path below the root written the one
    /// way it can be (`a/b.txt`: no `.` or `..`, no empty component, no
    /// leading `/`, no `\`).
    #[error("the file {path:?} {why}; name each file by its path below the root, as `dir/name`")]
    BadPath { path: String, why: &'static str },
    /// A file named where another key needs a directory (`a` and `a/b`).
    #[error(
        "{path:?} is given as a file, and {below:?} as a file inside it; \
         a path is a file or a directory, not both"
    )]
    FileAndDirectory { path: String, below: String },
}

impl FilesError {
    /// The protocol's error type (PROTOCOL §8).
    pub fn error_type(&self) -> ErrorType {
        match self {
            FilesError::DocumentTooLarge { .. } | FilesError::FilesTooLarge { .. } => {
                ErrorType::InputTooLarge
            }
            FilesError::BadPath { .. } | FilesError::FileAndDirectory { .. } => {
                ErrorType::PathEscape
            }
        }
    }

    /// The path the error is about, if any.
    pub fn path(&self) -> Option<&str> {
        match self {
            FilesError::BadPath { path, .. } | FilesError::FileAndDirectory { path, .. } => {
                Some(path)
            }
            _ => None,
        }
    }
}

/// The components of `path`, a key of the map, if it is written the one
/// way a path below the root is.
fn components(path: &str) -> Result<Vec<String>, FilesError> {
    let bad = |why| FilesError::BadPath {
        path: path.to_owned(),
        why,
    };
    if path.is_empty() {
        return Err(bad("is empty"));
    }
    if crate::syntax::is_absolute_path(path) {
        return Err(bad("is absolute"));
    }
    if path.contains('\\') {
        return Err(bad("holds a `\\`"));
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad("has an empty component (`a//b`, or a `/` at the end)"));
    }
    if parts.iter().any(|p| *p == "." || *p == "..") {
        return Err(bad("has a `.` or `..` component"));
    }
    let at = crate::syntax::resolve_path(path, false)
        .map_err(|_| bad("is not a path a document may name (PROTOCOL §5)"))?;
    if at.parts().len() != parts.len() || at.parts().iter().zip(&parts).any(|(a, b)| a != b) {
        return Err(bad("is not written the way clada writes it"));
    }
    Ok(at.parts().to_vec())
}

/// Checks the map's keys and sizes, in one pass over them.
fn tree_of(files: BTreeMap<String, Vec<u8>>) -> Result<MemoryTree, FilesError> {
    let size = files
        .values()
        .map(Vec::len)
        .fold(0usize, usize::saturating_add);
    if size > MAX_FILES_SIZE {
        return Err(FilesError::FilesTooLarge { size });
    }
    let mut parsed = Vec::with_capacity(files.len());
    // Every file by its components: a key whose prefix is one is refused.
    let mut seen: std::collections::HashMap<Vec<String>, String> = Default::default();
    for (path, bytes) in files {
        let parts = components(&path)?;
        parsed.push((parts, bytes, path));
    }
    for (parts, _, path) in &parsed {
        seen.insert(parts.clone(), path.clone());
    }
    for (parts, _, path) in &parsed {
        for n in 1..parts.len() {
            if let Some(file) = seen.get(&parts[..n]) {
                return Err(FilesError::FileAndDirectory {
                    path: file.clone(),
                    below: path.clone(),
                });
            }
        }
    }
    Ok(MemoryTree::of(
        parsed.into_iter().map(|(parts, bytes, _)| (parts, bytes)),
    ))
}

/// Applies `document` to `files` (their paths below a root that exists
/// only in memory, and their bytes) and returns the files after it, with
/// the report, as [`Apply`] would on a directory holding them: the same
/// engine, matching, counts, atomic units, resend lists and JSON report.
///
/// The map holds files only: directories are implied by the paths, and a
/// directory that ends up empty is not in the result. Contents are bytes
/// and stay bytes (CRLF, a BOM, no final line break); a file that is not
/// UTF-8 is edited as on disk (refused by an edit). Nothing touches the
/// disk: no lock, no git (`settings.git` and `settings.lock_file` are
/// ignored), no undo record. RUN tasks do not run: each is `skipped`,
/// with the reason `not run: commands do not run on files in memory`.
/// `settings.dialect` reads the document. The report has its `changes`
/// (a diff per file) only when `settings.changes` asks, or in a dry run:
/// [`Settings::in_memory`], the defaults here, leaves them out (the caller
/// holds the files before and after).
///
/// Errors, with nothing applied: a document over [`MAX_DOCUMENT_SIZE`],
/// files over [`MAX_FILES_SIZE`] together, a key that is not a normal
/// path below the root (`/a`, `./a`, `a/../b`, `a//b`), a key that is a
/// file where another needs a directory.
///
/// ```
/// use std::collections::BTreeMap;
/// use clada_markers::{Settings, apply_files};
///
/// let files = BTreeMap::from([("src/a.txt".to_owned(), b"one\r\ntwo\r\n".to_vec())]);
/// let doc = "<<<<<<< SEARCH path=\"src/a.txt\"\ntwo\n=======\n2\n>>>>>>> REPLACE\n";
/// let (after, report) = apply_files(doc, files.clone(), &Settings::in_memory())?;
/// assert!(report.ok && report.changes.is_none());
/// assert_eq!(after["src/a.txt"], b"one\r\n2\r\n");
/// // The diffs, when asked.
/// let settings = Settings { changes: true, ..Settings::in_memory() };
/// let (_, report) = apply_files(doc, files, &settings)?;
/// assert_eq!(report.changes.map(|c| c.len()), Some(1));
/// # Ok::<(), clada_markers::FilesError>(())
/// ```
pub fn apply_files(
    document: &str,
    files: BTreeMap<String, Vec<u8>>,
    settings: &Settings,
) -> Result<(BTreeMap<String, Vec<u8>>, ApplyReport), FilesError> {
    if document.len() > MAX_DOCUMENT_SIZE {
        return Err(FilesError::DocumentTooLarge {
            size: document.len(),
        });
    }
    let tree = Rc::new(tree_of(files)?);
    let mut settings = settings.clone();
    settings.git = None;
    settings.lock_file = None;
    let dialect = settings.dialect;
    let options = settings.parse_options();
    let mut apply = Apply::in_memory(Rc::clone(&tree), settings);
    let mut blocks = Vec::new();
    let mut report = apply.run_units(
        document,
        parse_units(document, dialect, options),
        &mut blocks,
    );
    report.blocks = blocks;
    drop(apply);
    Ok((tree.files().into_iter().collect(), report))
}
