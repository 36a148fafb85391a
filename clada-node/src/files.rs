//! `applyFiles`, the in-memory apply (issue 32, item 1): clada-py's
//! `calls::apply_files` (over `clada_markers::apply_files`) on files given
//! as paths and contents. In the module tree once the library has
//! `apply_files`: `pub mod files;` in lib.rs, where the comment says, and
//! `WIRED = true` in test/apply-files.test.mjs. Checked against that
//! library (issue 32's in-memory branch merged): it builds, clippy is
//! clean, and the tests pass.

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

use super::{ApplyOptions, BadArgument, bad_argument, calls, outcome, text};

/// What `applyFiles` answers: the outcome (the report, or the error), and
/// the files after the run as two lists, paths and contents, which
/// `index.js` makes an object of (an object made here would take a file
/// named `__proto__` as its prototype).
#[napi(object)]
pub struct FilesAnswer {
    pub json: String,
    pub paths: Vec<String>,
    pub contents: Vec<Buffer>,
}

impl std::fmt::Debug for FilesAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilesAnswer")
            .field("json", &self.json)
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl FilesAnswer {
    fn failed(json: String) -> Self {
        FilesAnswer {
            json,
            paths: Vec::new(),
            contents: Vec::new(),
        }
    }
}

/// `applyFiles(document, files, options)`: `clada_markers::apply_files`
/// on the files given as paths and contents (the same index in each).
#[napi(js_name = "applyFilesJson")]
pub fn apply_files_json(
    document: Buffer,
    paths: Vec<String>,
    contents: Vec<Buffer>,
    options: ApplyOptions,
) -> FilesAnswer {
    let changes = options.changes.unwrap_or(false);
    let settings = match options.settings() {
        Ok(settings) => settings,
        Err(e) => return FilesAnswer::failed(bad_argument(e)),
    };
    let given = paths.len();
    if given != contents.len() {
        return FilesAnswer::failed(bad_argument(BadArgument(format!(
            "{given} paths and {} contents: give each file's path and contents",
            contents.len()
        ))));
    }
    let files: std::collections::BTreeMap<String, Vec<u8>> = paths
        .into_iter()
        .zip(contents.iter().map(|c| c.to_vec()))
        .collect();
    // A map has each key once; a path given twice is refused, never merged.
    if files.len() != given {
        return FilesAnswer::failed(bad_argument(BadArgument(
            "files gives a path twice: each file once".to_owned(),
        )));
    }
    match calls::apply_files(&document, files, &settings, changes) {
        Ok((after, report)) => {
            let (paths, contents) = after.into_iter().map(|(p, c)| (p, c.into())).unzip();
            FilesAnswer {
                json: outcome(Ok(text(&report)), &[]),
                paths,
                contents,
            }
        }
        Err(failure) => FilesAnswer::failed(outcome(Err(failure), &[])),
    }
}
