//! Reading the document and writing results: stdin or a file, colour
//! decisions, and a broken pipe that is not an error.

use std::io::{IsTerminal, Write};
use std::path::Path;

use clada_markers::engine::Dirs;
use clada_markers::input::Input;
use clada_markers::{Diagnostic, render};

/// Reads FILE, or standard input for `-` or no FILE, by the library's
/// one reader ([`Input`]): at most one byte past the document size limit.
/// Errors are messages for the user.
pub(crate) fn read_input(file: Option<&Path>) -> Result<Input, String> {
    match file {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(path) => {
            let shown = path.display();
            let f = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
            let meta = f.metadata().ok();
            if meta.as_ref().is_some_and(std::fs::Metadata::is_dir) {
                return Err(format!("cannot read {shown}: it is a directory"));
            }
            Input::read(shown.to_string(), f, meta.map(|m| m.len()))
                .map_err(|e| format!("cannot read {shown}: {e}"))
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
    Input::read("<stdin>", stdin, None).map_err(|e| format!("cannot read standard input: {e}"))
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
    let shown = input.lossy();
    let text = render(std::slice::from_ref(d), &shown, input.name(), color);
    if text.is_empty() {
        format!("error[{}]: {}\n", d.kind, d.message)
    } else {
        text
    }
}
