//! `applyFiles`, the in-memory apply (PROTOCOL §7.6): clada-py's
//! `calls::apply_files` (over `clada_markers::apply_files`) on files given
//! as paths and contents.

use napi::Env;
use napi::bindgen_prelude::{BufferSlice, Object};
use napi_derive::napi;

use super::{ApplyOptions, BadArgument, bad_argument, calls, outcome, text};

/// What `applyFiles` answers: an object of the outcome (`json`: the
/// report, or the error), and the files after the run as two arrays,
/// `paths` and `contents`, which `index.js` makes an object of (an object
/// made here would take a file named `__proto__` as its prototype). The
/// contents are copies the JavaScript engine owns: an external buffer
/// with a finalizer per file cost a small call a third of its time in
/// the garbage collector's work.
fn answer<'env>(
    env: &'env Env,
    json: String,
    after: impl ExactSizeIterator<Item = (String, Vec<u8>)>,
) -> napi::Result<Object<'env>> {
    let mut object = Object::new(env)?;
    object.set("json", json)?;
    let count = u32::try_from(after.len())
        .map_err(|_| napi::Error::from_reason("too many files to hand over"))?;
    let mut paths = env.create_array(count)?;
    let mut contents = env.create_array(count)?;
    for (i, (path, bytes)) in (0..count).zip(after) {
        paths.set(i, path)?;
        contents.set(i, &BufferSlice::copy_from(env, bytes)?)?;
    }
    object.set("paths", paths)?;
    object.set("contents", contents)?;
    Ok(object)
}

/// `applyFiles(document, files, options)`: `clada_markers::apply_files`
/// on the files given as paths and contents (the same index in each).
#[napi(js_name = "applyFilesJson")]
pub fn apply_files_json<'env>(
    env: &'env Env,
    document: BufferSlice<'env>,
    paths: Vec<String>,
    contents: Vec<BufferSlice<'env>>,
    options: ApplyOptions,
) -> napi::Result<Object<'env>> {
    // The bytes are copied before they are read: a view of shared memory
    // (a SharedArrayBuffer) could change under the reading otherwise.
    let document = document.to_vec();
    let changes = options.changes.unwrap_or(false);
    let settings = match options.settings() {
        Ok(settings) => settings,
        Err(e) => return answer(env, bad_argument(e), std::iter::empty()),
    };
    let given = paths.len();
    if given != contents.len() {
        let message = format!(
            "{given} paths and {} contents: give each file's path and contents",
            contents.len()
        );
        return answer(env, bad_argument(BadArgument(message)), std::iter::empty());
    }
    let files: std::collections::BTreeMap<String, Vec<u8>> = paths
        .into_iter()
        .zip(contents.iter().map(|c| c.to_vec()))
        .collect();
    // A map has each key once; a path given twice is refused, never merged.
    if files.len() != given {
        let message = "files gives a path twice: each file once".to_owned();
        return answer(env, bad_argument(BadArgument(message)), std::iter::empty());
    }
    match calls::apply_files(&document, files, &settings, changes) {
        Ok((after, report)) => answer(env, outcome(Ok(text(&report)), &[]), after.into_iter()),
        Err(failure) => answer(env, outcome(Err(failure), &[]), std::iter::empty()),
    }
}
