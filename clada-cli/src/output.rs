//! Reading the document and writing results: stdin or a file, colour
//! decisions, and a broken pipe that is not an error.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;

use clada_markers::engine::Dirs;
use clada_markers::syntax::{MAX_DOCUMENT_SIZE, read_limited, too_large};
use clada_markers::{Diagnostic, decode, render};

/// A document as read, with the name diagnostics call it by. A document
/// over the size limit is not kept: only that it was too large.
pub(crate) struct Input {
    pub(crate) name: String,
    pub(crate) bytes: Buffer,
    pub(crate) too_large: bool,
}

/// The bytes of a document: in a vector, or, for a large file, in a map of
/// fresh memory filled by `read`.
pub(crate) enum Buffer {
    Heap(Vec<u8>),
    Mapped(memmap2::MmapMut, usize),
}

impl std::ops::Deref for Buffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Buffer::Heap(v) => v,
            Buffer::Mapped(m, len) => &m[..*len],
        }
    }
}

/// Files from this size up are read into a map of memory populated at
/// once, in huge pages where the kernel has them: faulting in a large
/// vector page by page cost more than reading it.
const MAP_FROM: u64 = 4 * 1024 * 1024;

fn read_mapped(mut f: std::fs::File, size: u64) -> std::io::Result<Buffer> {
    let limit = MAX_DOCUMENT_SIZE + 1;
    let cap = (size as usize).min(MAX_DOCUMENT_SIZE) + 1;
    let mut map = memmap2::MmapOptions::new().len(cap).map_anon()?;
    let _ = map.advise(memmap2::Advice::HugePage);
    let mut len = 0;
    loop {
        if len == map.len() {
            // The file grew while read: finish on the heap.
            let mut v = map[..len].to_vec();
            (&mut f).take((limit - len) as u64).read_to_end(&mut v)?;
            return Ok(Buffer::Heap(v));
        }
        match f.read(&mut map[len..]) {
            Ok(0) => return Ok(Buffer::Mapped(map, len)),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

impl Input {
    fn new(name: String, bytes: Buffer) -> Input {
        if bytes.len() > MAX_DOCUMENT_SIZE {
            return Input::oversize(name);
        }
        Input {
            name,
            bytes,
            too_large: false,
        }
    }

    fn oversize(name: String) -> Input {
        Input {
            name,
            bytes: Buffer::Heap(Vec::new()),
            too_large: true,
        }
    }

    /// The start of the document that is valid UTF-8, where positions in
    /// it are counted.
    pub(crate) fn valid_prefix(&self) -> &str {
        clada_markers::syntax::valid_prefix(&self.bytes)
    }

    /// The document as text, or why it cannot be read.
    #[allow(clippy::result_large_err)] // made once per run, on the way out
    pub(crate) fn text(&self) -> Result<&str, Diagnostic> {
        if self.too_large {
            return Err(too_large());
        }
        decode(&self.bytes)
    }
}

/// Reads FILE, or standard input for `-` or no FILE. Reads at most one byte
/// past the document size limit. Errors are messages for the user.
pub(crate) fn read_input(file: Option<&Path>) -> Result<Input, String> {
    match file {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(path) => {
            let shown = path.display();
            let f = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
            let size = f.metadata().ok().map(|m| m.len());
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(format!("cannot read {shown}: it is a directory"));
            }
            let name = path.display().to_string();
            // Too large by its size: refused without reading a byte.
            if size.is_some_and(|s| s > MAX_DOCUMENT_SIZE as u64) {
                return Ok(Input::oversize(name));
            }
            let bytes = match size {
                Some(size) if size >= MAP_FROM => read_mapped(f, size),
                _ => read_limited(f, size).map(Buffer::Heap),
            }
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
            Ok(Input::new(name, bytes))
        }
    }
}

fn read_stdin() -> Result<Input, String> {
    let stdin = std::io::stdin().lock();
    if stdin.is_terminal() {
        // Someone at a terminal may not know that clada waits for them.
        eprintln!(
            "clada: reading the document from standard input; end it with Ctrl-D (or pass a FILE)"
        );
    }
    let bytes = read_limited(stdin.take(u64::MAX), None)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(Input::new("<stdin>".to_owned(), Buffer::Heap(bytes)))
}

/// Colour only on a terminal, and never when `NO_COLOR` is set.
pub(crate) fn stdout_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Where progress goes: line by line on a terminal, where someone watches;
/// in larger pieces elsewhere (the printer flushes at each block).
pub(crate) fn progress_writer() -> Box<dyn Write> {
    let stdout = std::io::stdout();
    if stdout.is_terminal() {
        Box::new(std::io::LineWriter::new(stdout.lock()))
    } else {
        Box::new(std::io::BufWriter::with_capacity(64 * 1024, stdout.lock()))
    }
}

/// Writes to stdout. A reader that went away (a closed pipe) is not an
/// error: the result simply has no audience.
pub(crate) fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

pub(crate) fn json<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_string_pretty(value) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        Err(e) => format!("{{\"error\": \"cannot serialise the report: {e}\"}}\n"),
    }
}

/// clada's own directories, from the environment; `None`, said once on
/// stderr, when there is no home to find them in.
pub(crate) fn dirs() -> Option<Dirs> {
    Dirs::from_env()
        .map_err(|e| eprintln!("clada: warning: {e}: no approvals and no default lock"))
        .ok()
}

/// A document that is not text, shown as well as it can be: the
/// diagnostic with an excerpt of the bytes read leniently.
pub(crate) fn unreadable_text(input: &Input, d: &Diagnostic, color: bool) -> String {
    let shown = String::from_utf8_lossy(&input.bytes);
    let text = render(std::slice::from_ref(d), &shown, &input.name, color);
    if text.is_empty() {
        format!("error[{}]: {}\n", d.kind, d.message)
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, std::fs::File) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(bytes).unwrap();
        let f = std::fs::File::open(tmp.path()).unwrap();
        (tmp, f)
    }

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| b"<<<<<<< abc\n"[i % 12]).collect()
    }

    #[test]
    fn a_large_file_is_read_whole_into_a_map() {
        let want = pattern(MAP_FROM as usize + 12_345);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, want.len() as u64).unwrap();
        assert!(matches!(got, Buffer::Mapped(..)));
        assert_eq!(&*got, &want[..]);
    }

    #[test]
    fn a_file_longer_than_its_size_said_is_read_to_the_limit() {
        // The size is from before the read: the file may have grown since.
        let want = pattern(MAP_FROM as usize + 100);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, MAP_FROM).unwrap();
        assert_eq!(&*got, &want[..]);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, 10).unwrap();
        assert_eq!(&*got, &want[..]);
    }

    #[test]
    fn a_file_that_grew_past_the_limit_is_too_large() {
        let big = pattern(MAX_DOCUMENT_SIZE + 4096);
        let (_tmp, f) = file_of(&big);
        let got = read_mapped(f, MAP_FROM).unwrap();
        // One byte past the limit is read, no more.
        assert_eq!(got.len(), MAX_DOCUMENT_SIZE + 1);
        assert!(Input::new("big".into(), got).too_large);
    }

    #[test]
    fn a_shrunk_file_is_read_as_it_is_now() {
        let want = pattern(1000);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, MAP_FROM * 2).unwrap();
        assert_eq!(&*got, &want[..]);
    }
}
