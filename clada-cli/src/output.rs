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
    pub(crate) bytes: Vec<u8>,
    pub(crate) too_large: bool,
}

impl Input {
    fn new(name: String, bytes: Vec<u8>) -> Input {
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
            bytes: Vec::new(),
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
            let bytes = read_limited(f, size).map_err(|e| format!("cannot read {shown}: {e}"))?;
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
    Ok(Input::new("<stdin>".to_owned(), bytes))
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

/// Prints `value` as pretty JSON, straight to stdout: a report of a
/// million tasks is never held as one string.
pub(crate) fn print_json<T: serde::Serialize>(value: &T) {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = serde_json::to_writer_pretty(&mut out, value)
        .map_err(std::io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("clada: cannot write the report: {e}");
    }
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
