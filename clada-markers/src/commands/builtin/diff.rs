//! `diff`: two files, or two directories, compared with `similar`. Files
//! are read through the tree ([`crate::engine::tree::Tree`]); a link is compared
//! as the text of its target, never followed.

use std::io::Write;

use similar::{DiffOp, TextDiff};

use crate::engine::tree::{FsError, Kind};
use crate::syntax::Location;

use super::args::Arg;
use super::search::Timed;
use super::{Env, Flags, Out, Refusal};

/// The largest file the built-in `diff` reads: a bigger one is trouble
/// (exit status 2), so memory stays bounded.
const MAX_FILE: u64 = 64 * 1024 * 1024;

/// Reads the file at `at` whole, within the deadline and [`MAX_FILE`].
fn read_file(env: &Env<'_>, at: &Location) -> Result<Result<Vec<u8>, String>, Refusal> {
    let file = env.tree.open(at)?;
    let mut data = Vec::new();
    let read = std::io::Read::read_to_end(
        &mut std::io::Read::take(
            Timed {
                inner: file,
                deadline: env.deadline,
            },
            MAX_FILE + 1,
        ),
        &mut data,
    );
    env.in_time()?;
    Ok(match read {
        Err(e) => Err(e.to_string()),
        Ok(_) if data.len() as u64 > MAX_FILE => Err(format!(
            "larger than {} MiB, more than the built-in diff reads",
            MAX_FILE >> 20
        )),
        Ok(_) => Ok(data),
    })
}

#[derive(Debug)]
struct DiffOptions {
    /// Lines of context in unified format; `None` for the normal format.
    unified: Option<usize>,
    recursive: bool,
    brief: bool,
    new_file: bool,
}

/// `diff [-u] [-U N] [-r] [-q] [-N] A B`; exit 0 when the same, 1 when
/// different, 2 on trouble.
pub(crate) fn diff(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut o = DiffOptions {
        unified: None,
        recursive: false,
        brief: false,
        new_file: false,
    };
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match &arg {
            Arg::Short('u') => o.unified = Some(3),
            Arg::Short('U') => o.unified = Some(flags.number()?),
            Arg::Long(l) if l == "unified" => o.unified = Some(flags.number()?),
            Arg::Short('r') => o.recursive = true,
            Arg::Long(l) if l == "recursive" => o.recursive = true,
            Arg::Short('q') => o.brief = true,
            Arg::Long(l) if l == "brief" => o.brief = true,
            Arg::Short('N') => o.new_file = true,
            Arg::Long(l) if l == "new-file" => o.new_file = true,
            Arg::Long(l) if l == "color" || l == "colour" => {
                // `--color` alone is `--color=auto`: no colour here.
                if let Some(v) = flags.optional_value()
                    && v != "never"
                    && v != "auto"
                {
                    return Err(flags.invalid(&v));
                }
            }
            Arg::Operand(op) => operands.push(op.clone()),
            _ => return Err(flags.refuse()),
        }
    }
    let [a, b] = operands.as_slice() else {
        out.error(
            "diff",
            format!("expected two files or directories, got {}", operands.len()),
        );
        return Ok(2);
    };
    let (a_at, b_at) = (env.read_path(a)?, env.read_path(b)?);
    let mut d = Differ {
        env,
        o: &o,
        status: 0,
    };
    let kind = |at: &Location| env.tree.metadata(at).map(|m| m.kind);
    match (kind(&a_at), kind(&b_at)) {
        (Ok(Kind::Dir), Ok(Kind::Dir)) => d.dirs(out, &a_at, &b_at, a, b)?,
        // A link is never a directory to look into: it is compared as a
        // link below.
        (Ok(Kind::Dir), Ok(k)) if k != Kind::Symlink => {
            let inner = b_at.clone();
            let name = b_at.name().unwrap_or_default().to_owned();
            d.files(out, &a_at.join(&name), &inner, &join(a, &name), b)?;
        }
        (Ok(k), Ok(Kind::Dir)) if k != Kind::Symlink => {
            let name = a_at.name().unwrap_or_default().to_owned();
            d.files(out, &a_at, &b_at.join(&name), a, &join(b, &name))?;
        }
        _ => d.files(out, &a_at, &b_at, a, b)?,
    }
    Ok(d.status)
}

fn join(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

struct Differ<'d, 'e> {
    env: &'d Env<'e>,
    o: &'d DiffOptions,
    status: i32,
}

/// What a side holds.
enum Side {
    Missing,
    Text(Vec<u8>),
    Link(String),
    Dir,
    Other,
}

impl Differ<'_, '_> {
    fn side(&mut self, out: &mut Out<'_>, at: &Location, shown: &str) -> Result<Side, Refusal> {
        self.env.in_time()?;
        let meta = match self.env.tree.metadata(at) {
            Ok(meta) => meta,
            Err(FsError::NotFound { .. }) => return Ok(Side::Missing),
            Err(e) => {
                self.env.failed(out, "diff", e.about(shown))?;
                self.status = 2;
                return Ok(Side::Other);
            }
        };
        Ok(match meta.kind {
            Kind::Dir => Side::Dir,
            Kind::Symlink => Side::Link(self.env.tree.read_link(at)?),
            Kind::Other => {
                // A pipe, socket or device: never read (a pipe would
                // block), never "the same" as anything.
                out.error(
                    "diff",
                    format!("{shown}: not a regular file or directory; diff compares files and directories only"),
                );
                self.status = 2;
                Side::Other
            }
            Kind::File => match read_file(self.env, at)? {
                Ok(data) => Side::Text(data),
                Err(e) => {
                    out.error("diff", format!("{shown}: {e}"));
                    self.status = 2;
                    Side::Other
                }
            },
        })
    }

    fn files(
        &mut self,
        out: &mut Out<'_>,
        a_at: &Location,
        b_at: &Location,
        a: &str,
        b: &str,
    ) -> Result<(), Refusal> {
        let left = self.side(out, a_at, a)?;
        let right = self.side(out, b_at, b)?;
        let (left, right) = match (left, right) {
            (Side::Missing, Side::Missing) => {
                out.error("diff", format!("{a}: No such file or directory"));
                self.status = 2;
                return Ok(());
            }
            (Side::Missing, r) if self.o.new_file => (Side::Text(Vec::new()), r),
            (l, Side::Missing) if self.o.new_file => (l, Side::Text(Vec::new())),
            (Side::Missing, _) => {
                out.error("diff", format!("{a}: No such file or directory"));
                self.status = 2;
                return Ok(());
            }
            (_, Side::Missing) => {
                out.error("diff", format!("{b}: No such file or directory"));
                self.status = 2;
                return Ok(());
            }
            pair => pair,
        };
        let (old, new) = match (&left, &right) {
            (Side::Text(x), Side::Text(y)) => (x.as_slice(), y.as_slice()),
            (Side::Link(x), Side::Link(y)) => {
                if x != y {
                    let _ = writeln!(out, "Symbolic links {a} and {b} differ");
                    self.status = self.status.max(1);
                }
                return Ok(());
            }
            (Side::Other, _) | (_, Side::Other) => return Ok(()),
            _ => {
                let _ = writeln!(
                    out,
                    "File {a} is a {} while file {b} is a {}",
                    kind_of(&left),
                    kind_of(&right)
                );
                self.status = self.status.max(1);
                return Ok(());
            }
        };
        if old == new {
            return Ok(());
        }
        self.status = self.status.max(1);
        let binary = old.contains(&0) || new.contains(&0);
        let (old_text, new_text) = (std::str::from_utf8(old), std::str::from_utf8(new));
        let (Ok(old_text), Ok(new_text), false) = (old_text, new_text, binary) else {
            let _ = writeln!(out, "Binary files {a} and {b} differ");
            return Ok(());
        };
        if self.o.brief {
            let _ = writeln!(out, "Files {a} and {b} differ");
            return Ok(());
        }
        let diff = TextDiff::from_lines(old_text, new_text);
        match self.o.unified {
            Some(context) => {
                let text = diff
                    .unified_diff()
                    .context_radius(context)
                    .header(a, b)
                    .to_string();
                let _ = out.write_all(text.as_bytes());
            }
            None => normal(out, &diff, old_text, new_text),
        }
        Ok(())
    }

    fn dirs(
        &mut self,
        out: &mut Out<'_>,
        a_at: &Location,
        b_at: &Location,
        a: &str,
        b: &str,
    ) -> Result<(), Refusal> {
        let mut pending = vec![(a_at.clone(), b_at.clone(), a.to_owned(), b.to_owned())];
        while let Some((a_at, b_at, a, b)) = pending.pop() {
            self.env.in_time()?;
            // A directory only on one side (with -N) lists as empty.
            let names = |at: &Location| -> Result<Vec<(String, Kind)>, Refusal> {
                match self.env.tree.list(at) {
                    Ok(entries) => Ok(entries.into_iter().map(|e| (e.name, e.kind)).collect()),
                    Err(FsError::NotFound { .. }) if self.o.new_file => Ok(Vec::new()),
                    Err(e) => Err(e.into()),
                }
            };
            let (left, right) = (names(&a_at)?, names(&b_at)?);
            let mut subdirs = Vec::new();
            // Both listings are in byte order of their names: merge them.
            let (mut i, mut j) = (0, 0);
            while i < left.len() || j < right.len() {
                self.env.in_time()?;
                let (name, l, r) = match (left.get(i), right.get(j)) {
                    (Some(x), Some(y)) if x.0 == y.0 => {
                        (i, j) = (i + 1, j + 1);
                        (&x.0, Some(x.1), Some(y.1))
                    }
                    (Some(x), Some(y)) if x.0.as_bytes() < y.0.as_bytes() => {
                        i += 1;
                        (&x.0, Some(x.1), None)
                    }
                    (Some(x), None) => {
                        i += 1;
                        (&x.0, Some(x.1), None)
                    }
                    (_, Some(y)) => {
                        j += 1;
                        (&y.0, None, Some(y.1))
                    }
                    (None, None) => break,
                };
                let shown = super::shown_name(name);
                let (an, bn) = (join(&a, &shown), join(&b, &shown));
                match (l, r) {
                    (Some(_), None) if !self.o.new_file => {
                        let _ = writeln!(out, "Only in {a}: {shown}");
                        self.status = self.status.max(1);
                    }
                    (None, Some(_)) if !self.o.new_file => {
                        let _ = writeln!(out, "Only in {b}: {shown}");
                        self.status = self.status.max(1);
                    }
                    (Some(Kind::Dir), None) | (None, Some(Kind::Dir)) if self.o.recursive => {
                        // -N: everything in it is new.
                        subdirs.push((a_at.join(name), b_at.join(name), an, bn));
                    }
                    (Some(Kind::Dir), Some(Kind::Dir)) => {
                        if self.o.recursive {
                            subdirs.push((a_at.join(name), b_at.join(name), an, bn));
                        } else {
                            let _ = writeln!(out, "Common subdirectories: {an} and {bn}");
                        }
                    }
                    _ => {
                        let (at_a, at_b) = (a_at.join(name), b_at.join(name));
                        let files = (l, r) == (Some(Kind::File), Some(Kind::File));
                        if files && !self.o.brief && !same_file(self.env, &at_a, &at_b) {
                            let _ = writeln!(out, "diff {an} {bn}");
                        }
                        self.files(out, &at_a, &at_b, &an, &bn)?;
                    }
                }
            }
            pending.extend(subdirs.into_iter().rev());
        }
        Ok(())
    }
}

/// Whether two locations hold the same bytes (or both are missing).
fn same_file(env: &Env<'_>, a: &Location, b: &Location) -> bool {
    let read = |at: &Location| read_file(env, at).ok()?.ok();
    match (read(a), read(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

fn kind_of(side: &Side) -> &'static str {
    match side {
        Side::Missing => "missing file",
        Side::Text(t) if t.is_empty() => "regular empty file",
        Side::Text(_) => "regular file",
        Side::Link(_) => "symbolic link",
        Side::Dir => "directory",
        Side::Other => "special file",
    }
}

/// GNU's normal format: `2c2`, `< old`, `---`, `> new`.
fn normal(out: &mut Out<'_>, diff: &TextDiff<'_, '_, str>, old: &str, new: &str) {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let range = |start: usize, len: usize| {
        if len <= 1 {
            (start + len.max(1)).to_string()
        } else {
            format!("{},{}", start + 1, start + len)
        }
    };
    let write_lines = |out: &mut Out<'_>, mark: &str, lines: &[&str]| {
        for line in lines {
            let _ = out.write_all(mark.as_bytes());
            let _ = out.write_all(line.as_bytes());
            if !line.ends_with('\n') {
                let _ = out.write_all(b"\n\\ No newline at end of file\n");
            }
        }
    };
    // Merge neighbouring deletions and insertions into one change.
    let mut changes: Vec<(usize, usize, usize, usize)> = Vec::new();
    for op in diff.ops() {
        let (o, ol, n, nl) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index, old_len, new_index, 0),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, 0, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (old_index, old_len, new_index, new_len),
        };
        match changes.last_mut() {
            Some(last) if last.0 + last.1 == o && last.2 + last.3 == n => {
                last.1 += ol;
                last.3 += nl;
            }
            _ => changes.push((o, ol, n, nl)),
        }
    }
    for (o, ol, n, nl) in changes {
        let old_part = old_lines.get(o..o + ol).unwrap_or_default();
        let new_part = new_lines.get(n..n + nl).unwrap_or_default();
        if ol == 0 {
            let _ = writeln!(out, "{o}a{}", range(n, nl));
            write_lines(out, "> ", new_part);
        } else if nl == 0 {
            let _ = writeln!(out, "{}d{n}", range(o, ol));
            write_lines(out, "< ", old_part);
        } else {
            let _ = writeln!(out, "{}c{}", range(o, ol), range(n, nl));
            write_lines(out, "< ", old_part);
            let _ = writeln!(out, "---");
            write_lines(out, "> ", new_part);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::super::search::testing::{SECRET, refused, run, scratch};
    use super::diff;
    use crate::error_type::ErrorType;

    fn write(top: &tempfile::TempDir, path: &str, text: &str) {
        let p = top.path().join("root").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn files_in_normal_and_unified_format() {
        let top = scratch();
        write(&top, "x", "1\n2\n3\n4\n5\n6\n7\n8\n");
        write(&top, "y", "1\n2\n3\n4\nfive\n6\n7\n8\n");
        assert_eq!(run(diff, &top, &["x", "x"]), (0, String::new()));
        assert_eq!(
            run(diff, &top, &["x", "y"]),
            (1, "5c5\n< 5\n---\n> five\n".into())
        );
        let unified = "--- x\n+++ y\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n";
        assert_eq!(run(diff, &top, &["-u", "x", "y"]), (1, unified.into()));
        assert_eq!(
            run(diff, &top, &["-U", "1", "x", "y"]),
            (
                1,
                "--- x\n+++ y\n@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n".into()
            )
        );
        assert_eq!(
            run(diff, &top, &["--unified=0", "x", "y"]),
            (1, "--- x\n+++ y\n@@ -5 +5 @@\n-5\n+five\n".into())
        );
        assert_eq!(
            run(diff, &top, &["-q", "x", "y"]),
            (1, "Files x and y differ\n".into())
        );
        write(&top, "z", "1\n2");
        assert_eq!(run(diff, &top, &["--color", "x", "x"]), (0, String::new()));
        assert_eq!(
            refused(diff, &top, &["--color=always", "x", "x"]).error_type(),
            ErrorType::CommandNotAllowed
        );
        let (status, text) = run(diff, &top, &["--color=never", "-u", "z", "x"]);
        assert_eq!(status, 1);
        assert!(
            text.contains("-2\n\\ No newline at end of file\n+2\n"),
            "{text}"
        );
        assert_eq!(
            run(diff, &top, &["bin.dat", "a.txt"]),
            (1, "Binary files bin.dat and a.txt differ\n".into())
        );
    }

    #[test]
    fn missing_files_and_new_file() {
        let top = scratch();
        assert_eq!(
            run(diff, &top, &["a.txt", "nope"]),
            (2, "diff: nope: No such file or directory\n".into())
        );
        assert_eq!(
            run(diff, &top, &["-uN", "nope", "src/lib.rs"]),
            (
                1,
                "--- nope\n+++ src/lib.rs\n@@ -0,0 +1 @@\n+pub fn foo() {}\n".into()
            )
        );
        assert_eq!(run(diff, &top, &["a.txt"]).0, 2);
        assert_eq!(run(diff, &top, &["a", "b", "c"]).0, 2);
        assert_eq!(
            refused(diff, &top, &["-U", "x", "a.txt", "a.txt"]).error_type(),
            ErrorType::CommandNotAllowed
        );
    }

    #[test]
    fn file_against_directory() {
        let top = scratch();
        write(&top, "d/lib.rs", "pub fn foo() {}\n");
        assert_eq!(run(diff, &top, &["src/lib.rs", "d"]), (0, String::new()));
        write(&top, "d/lib.rs", "pub fn bar() {}\n");
        assert_eq!(
            run(diff, &top, &["-u", "d", "src/lib.rs"]),
            (
                1,
                "--- d/lib.rs\n+++ src/lib.rs\n@@ -1 +1 @@\n-pub fn bar() {}\n+pub fn foo() {}\n"
                    .into()
            )
        );
    }

    #[test]
    fn directories_plain_and_recursive() {
        let top = scratch();
        write(&top, "l/same", "s\n");
        write(&top, "r/same", "s\n");
        write(&top, "l/f", "old\n");
        write(&top, "r/f", "new\n");
        write(&top, "l/only_l", "x\n");
        write(&top, "r/only_r", "x\n");
        write(&top, "l/sub/g", "a\n");
        write(&top, "r/sub/g", "b\n");
        write(&top, "l/kind", "file\n");
        write(&top, "r/kind/inner", "dir\n");
        assert_eq!(
            run(diff, &top, &["l", "r"]),
            (
                1,
                "diff l/f r/f\n1c1\n< old\n---\n> new\n\
                 File l/kind is a regular file while file r/kind is a directory\n\
                 Only in l: only_l\n\
                 Only in r: only_r\n\
                 Common subdirectories: l/sub and r/sub\n"
                    .into()
            )
        );
        let (status, text) = run(diff, &top, &["-ru", "l/", "r"]);
        assert_eq!(status, 1);
        assert!(
            text.contains("diff l/sub/g r/sub/g\n--- l/sub/g\n+++ r/sub/g\n@@ -1 +1 @@\n-a\n+b\n"),
            "{text}"
        );
        assert_eq!(
            run(diff, &top, &["-rq", "l", "r"]),
            (
                1,
                "Files l/f and r/f differ\n\
                 File l/kind is a regular file while file r/kind is a directory\n\
                 Only in l: only_l\n\
                 Only in r: only_r\n\
                 Files l/sub/g and r/sub/g differ\n"
                    .into()
            )
        );
        let (status, text) = run(diff, &top, &["-ruN", "l", "r"]);
        assert_eq!(status, 1);
        assert!(
            text.contains("--- l/only_r\n+++ r/only_r\n@@ -0,0 +1 @@\n+x\n"),
            "{text}"
        );
        assert!(!text.contains("Only in"), "{text}");
        // -N -r goes into a directory that is on one side only.
        write(&top, "l/newdir/deep", "d\n");
        let (status, text) = run(diff, &top, &["-ruN", "l", "r"]);
        assert_eq!(status, 1);
        assert!(
            text.contains("--- l/newdir/deep\n+++ r/newdir/deep\n@@ -1 +0,0 @@\n-d\n"),
            "{text}"
        );
        write(&top, "l2/same", "s\n");
        write(&top, "r2/same", "s\n");
        assert_eq!(run(diff, &top, &["-r", "l2", "r2"]), (0, String::new()));
    }

    #[test]
    fn links_are_compared_as_links_never_followed() {
        let top = scratch();
        let root = top.path().join("root");
        // The same link text on both sides, pointing outside: equal, and
        // what they point to is never read.
        write(&top, "l/keep", "k\n");
        write(&top, "r/keep", "k\n");
        std::os::unix::fs::symlink("../../outside", root.join("l/out")).unwrap();
        std::os::unix::fs::symlink("../../outside", root.join("r/out")).unwrap();
        assert_eq!(run(diff, &top, &["-r", "l", "r"]), (0, String::new()));
        // Different texts: the links differ, their targets stay unread.
        std::fs::create_dir(root.join("empty")).unwrap();
        std::fs::remove_file(root.join("r/out")).unwrap();
        std::os::unix::fs::symlink("../empty", root.join("r/out")).unwrap();
        assert_eq!(
            run(diff, &top, &["-r", "l", "r"]),
            (1, "Symbolic links l/out and r/out differ\n".into())
        );
        // A link against a directory holding files of the same names.
        std::fs::remove_file(root.join("r/out")).unwrap();
        write(&top, "r/out/secret.txt", "mine\n");
        assert_eq!(
            run(diff, &top, &["-r", "l", "r"]),
            (
                1,
                "File l/out is a symbolic link while file r/out is a directory\n".into()
            )
        );
        let (_, text) = run(diff, &top, &["-rN", "l", "r"]);
        assert!(!text.contains(SECRET));
        // A link named as an operand is not looked into either.
        assert_eq!(
            run(diff, &top, &["-r", "src", "link"]),
            (
                1,
                "File src is a directory while file link is a symbolic link\n".into()
            )
        );
    }

    #[test]
    fn refusals() {
        let top = scratch();
        for args in [
            &["a.txt", "../outside/secret.txt"][..],
            &["-r", "..", "."],
            &["src/../../outside/secret.txt", "a.txt"],
        ] {
            assert_eq!(
                refused(diff, &top, args).error_type(),
                ErrorType::PathEscape,
                "{args:?}"
            );
        }
        for args in [
            &["a.txt", "link/secret.txt"][..],
            &["-r", "link/sub", "src"],
        ] {
            assert_eq!(
                refused(diff, &top, args).error_type(),
                ErrorType::SymlinkNotAllowed,
                "{args:?}"
            );
        }
        for (flag, shown) in [
            ("-w", "`-w`"),
            ("-c", "`-c`"),
            ("--ignore-all-space", "`--ignore-all-space`"),
            ("--from-file=x", "`--from-file`"),
            ("-x", "`-x`"),
        ] {
            let e = refused(diff, &top, &[flag, "a.txt", "a.txt"]);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{flag}");
            assert!(e.message().contains(shown), "{flag}: {}", e.message());
        }
    }
}
