//! `clada check --fix` and `--diff`: the fixes the diagnostics offer, made
//! by the library ([`clada_markers::dialect::fix`]), written back or shown.
//!
//! A document named on the command line is rewritten whole and atomically:
//! a temporary file beside it, renamed over it, so that a reader sees the
//! old document or the new one, never half of one. A link is not followed
//! (the rename would put a file in its place, and the file it points to,
//! anywhere, would not change): `--fix` refuses it, as anything but a
//! regular file. From standard input, the fixed document goes to standard
//! output, as ruff does.

use std::io::Write as _;
use std::path::Path;

use clada_markers::dialect::{Dialect, Fixed, fix_diff, parse_dialect};
use clada_markers::input::Input;
use clada_markers::{Diagnostic, ParseOptions};

use super::CheckArgs;

/// What the check does once the fixes are made.
pub(super) enum Next {
    /// Report on the fixed document as `check` does.
    Check,
    /// Stop with this exit code: the output is written.
    Exit(u8),
}

/// Writes or shows the fixes of `text`. Errors are messages for the user
/// (exit 2): nothing was written.
pub(super) fn made(
    args: &CheckArgs,
    input: &Input,
    text: &str,
    fixed: &Fixed<'_>,
    dialect: Dialect,
    options: ParseOptions,
) -> Result<Next, String> {
    let file = args.file.as_deref().filter(|f| *f != Path::new("-"));
    let remaining = || {
        parse_dialect(&fixed.text, dialect, options)
            .diagnostics
            .iter()
            .filter(|d| Diagnostic::is_error(d))
            .count()
    };
    if args.diff {
        crate::output::print(&fix_diff(input.name(), text, &fixed.text));
        let left = remaining();
        eprintln!("clada: {}", tally(fixed.fixes, left, "would remain"));
        return Ok(Next::Exit(u8::from(left > 0)));
    }
    let Some(path) = file else {
        crate::output::print(&fixed.text);
        let left = remaining();
        eprintln!("clada: {}", tally(fixed.fixes, left, "remain"));
        return Ok(Next::Exit(u8::from(left > 0)));
    };
    if fixed.fixes > 0 {
        write_atomically(path, fixed.text.as_bytes())?;
    }
    eprintln!(
        "clada: {} in {}",
        tally(fixed.fixes, remaining(), "remain"),
        path.display()
    );
    Ok(Next::Check)
}

/// `fixed 2 problems; 1 error remains`.
fn tally(fixes: usize, left: usize, verb: &str) -> String {
    let fixes = match fixes {
        0 => "nothing to fix".to_owned(),
        1 => "fixed 1 problem".to_owned(),
        n => format!("fixed {n} problems"),
    };
    let left = match (left, verb) {
        (0, _) => "no error left".to_owned(),
        (1, "remain") => "1 error remains".to_owned(),
        (1, v) => format!("1 error {v}"),
        (n, v) => format!("{n} errors {v}"),
    };
    format!("{fixes}; {left}")
}

/// Replaces the file at `path` with `bytes`: a temporary file in its
/// directory, with its permissions, renamed over it. Refuses a link and
/// anything but a regular file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = path.display();
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot fix {shown}: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err(format!(
            "cannot fix {shown}: it is a symbolic link, which --fix does not follow; fix the file it names, or see the fixes with --diff"
        ));
    }
    if !meta.is_file() {
        return Err(format!(
            "cannot fix {shown}: it is not a regular file; see the fixes with --diff"
        ));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".clada-fix-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot fix {shown}: {e}"))?;
    let written = temp
        .write_all(bytes)
        .and_then(|()| temp.as_file().set_permissions(meta.permissions()))
        .and_then(|()| temp.as_file().sync_all());
    written.map_err(|e| format!("cannot fix {shown}: {e}"))?;
    // The temporary file is removed if the rename fails.
    temp.persist(path)
        .map_err(|e| format!("cannot fix {shown}: {}", e.error))?;
    Ok(())
}
