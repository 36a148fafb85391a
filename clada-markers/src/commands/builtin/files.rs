//! The file tools: `cat head tail wc pwd ls stat file realpath xxd`, which
//! only look, and `mkdir touch rm mv cp`, which change the tree on the same
//! machinery as WRITE, MOVE and REMOVE (atomic writes through a temporary
//! file, renames and removals relative to checked directory handles).
//!
//! Every path goes through [`Env::read_path`] or [`Env::write_path`], and
//! every access through the tree ([`crate::engine::tree::Tree`]), which
//! never follows a link: a link is described as a link, and reading or writing
//! through one is `symlink_not_allowed`. Flags not listed in the README are
//! refused, naming the flag.

use std::io::{BufRead, BufReader, Read, Write};

use crate::engine::tree::{FsError, Kind, Meta};
use crate::error_type::ErrorType;
use crate::syntax::Location;

use super::args::Arg;
use super::{Env, Flags, Out, Refusal};

/// Reading in pieces this big keeps memory flat and the deadline near.
const CHUNK: usize = 64 * 1024;

/// Writes to the output never fail (it keeps what fits), so their result
/// carries nothing.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Operands, or `default` when there are none.
fn or_default(operands: Vec<String>, default: &str) -> Vec<String> {
    if operands.is_empty() {
        vec![default.to_owned()]
    } else {
        operands
    }
}

/// Opens `arg` for reading; `None` once an ordinary failure is reported.
fn open<'e>(
    env: &'e Env<'_>,
    out: &mut Out<'_>,
    tool: &str,
    arg: &str,
) -> Result<Option<Box<dyn Read + 'e>>, Refusal> {
    let at = env.read_path(arg)?;
    match env.tree.open(&at) {
        Ok(f) => Ok(Some(f)),
        Err(e) => env.failed(out, tool, e.about(arg)).map(|()| None),
    }
}

/// Reads all of `arg`; `None` once an ordinary failure is reported.
fn read(
    env: &Env<'_>,
    out: &mut Out<'_>,
    tool: &str,
    arg: &str,
) -> Result<Option<Vec<u8>>, Refusal> {
    let at = env.read_path(arg)?;
    read_at(env, out, tool, &at, arg)
}

/// Reads all of the file `at` (written `arg`) of the tree the tool sees (a
/// dry run's view, or the root); `None` once an ordinary failure is
/// reported.
fn read_at(
    env: &Env<'_>,
    out: &mut Out<'_>,
    tool: &str,
    at: &Location,
    arg: &str,
) -> Result<Option<Vec<u8>>, Refusal> {
    let mut reader = match env.tree.open(at) {
        Ok(reader) => reader,
        Err(e) => return env.failed(out, tool, e.about(arg)).map(|()| None),
    };
    let mut data = Vec::new();
    let mut buf = vec![0; CHUNK];
    loop {
        env.in_time()?;
        match reader.read(&mut buf) {
            Ok(0) => return Ok(Some(data)),
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.error(tool, format!("{arg}: {e}"));
                return Ok(None);
            }
        }
    }
}

/// `cat [-n] [-b] [-s] [-E] [FILE]...`
pub(crate) fn cat(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut number, mut nonblank, mut squeeze, mut ends) = (false, false, false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('n') | Arg::Long(_) if is(&arg, 'n', "number") => number = true,
            Arg::Short('b') | Arg::Long(_) if is(&arg, 'b', "number-nonblank") => nonblank = true,
            Arg::Short('s') | Arg::Long(_) if is(&arg, 's', "squeeze-blank") => squeeze = true,
            Arg::Short('E') | Arg::Long(_) if is(&arg, 'E', "show-ends") => ends = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    let plain = !(number || nonblank || squeeze || ends);
    let mut status = 0;
    let mut line_no = 0usize;
    let mut last_blank = false;
    for arg in operands {
        env.in_time()?;
        if arg == "-" {
            // Standard input is empty.
            continue;
        }
        let Some(file) = open(env, out, "cat", &arg)? else {
            status = 1;
            continue;
        };
        let mut reader = BufReader::with_capacity(CHUNK, file);
        if plain {
            let mut buf = vec![0; CHUNK];
            loop {
                env.in_time()?;
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let _ = out.write_all(&buf[..n]);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        out.error("cat", format!("{arg}: {e}"));
                        status = 1;
                        break;
                    }
                }
            }
            continue;
        }
        let mut line = Vec::new();
        loop {
            env.in_time()?;
            line.clear();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    out.error("cat", format!("{arg}: {e}"));
                    status = 1;
                    break;
                }
            }
            let newline = line.last() == Some(&b'\n');
            let text = if newline {
                &line[..line.len() - 1]
            } else {
                &line[..]
            };
            let blank = text.is_empty() && newline;
            if squeeze && blank && last_blank {
                continue;
            }
            last_blank = blank;
            if (nonblank && !blank) || (number && !nonblank) {
                line_no += 1;
                let _ = write!(out, "{line_no:>6}\t");
            }
            let _ = out.write_all(text);
            if ends && newline {
                let _ = out.write_all(b"$");
            }
            if newline {
                let _ = out.write_all(b"\n");
            }
        }
    }
    Ok(status)
}

/// Whether `arg` is the short flag `short` or the long flag `long`.
fn is(arg: &Arg, short: char, long: &str) -> bool {
    match arg {
        Arg::Short(c) => *c == short,
        Arg::Long(l) => l == long,
        Arg::Operand(_) => false,
    }
}

/// Which end `head` and `tail` keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    Head,
    Tail,
}

/// How much `head` or `tail` keeps.
#[derive(Clone, Copy, Debug)]
enum Amount {
    Lines(usize),
    Bytes(usize),
    /// `tail -n +N`: from line N on.
    LinesFrom(usize),
    BytesFrom(usize),
}

/// `head|tail [-n N] [-c N] [-N] [-q] [-v] [FILE]...`; `tail -n +N` starts
/// at line N.
pub(crate) fn head_tail(
    args: &[String],
    env: &Env<'_>,
    out: &mut Out<'_>,
    end: End,
) -> Result<i32, Refusal> {
    let tool = if end == End::Head { "head" } else { "tail" };
    let mut amount = Amount::Lines(10);
    let (mut quiet, mut verbose) = (false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::with_count(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('n' | 'c') | Arg::Long(_) if is_amount(&arg) => {
                let bytes = is(&arg, 'c', "bytes");
                let v = flags.value()?;
                let (from, digits) = match v.strip_prefix('+') {
                    Some(d) if end == End::Tail => (true, d),
                    _ => (false, v.strip_prefix('-').unwrap_or(&v)),
                };
                let n: usize = digits.parse().map_err(|_| flags.invalid(&v))?;
                amount = match (bytes, from) {
                    (false, false) => Amount::Lines(n),
                    (true, false) => Amount::Bytes(n),
                    (false, true) => Amount::LinesFrom(n),
                    (true, true) => Amount::BytesFrom(n),
                };
            }
            Arg::Short('q') | Arg::Long(_) if is(&arg, 'q', "quiet") || is(&arg, 'q', "silent") => {
                quiet = true;
            }
            Arg::Short('v') | Arg::Long(_) if is(&arg, 'v', "verbose") => verbose = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    let headers = verbose || (operands.len() > 1 && !quiet);
    let mut status = 0;
    for (i, arg) in operands.iter().enumerate() {
        env.in_time()?;
        if arg == "-" {
            continue;
        }
        let Some(data) = read(env, out, tool, arg)? else {
            status = 1;
            continue;
        };
        if headers {
            let sep = if i > 0 { "\n" } else { "" };
            let _ = writeln!(out, "{sep}==> {arg} <==");
        }
        let _ = out.write_all(cut(&data, amount, end));
    }
    Ok(status)
}

fn is_amount(arg: &Arg) -> bool {
    is(arg, 'n', "lines") || is(arg, 'c', "bytes")
}

/// The part of `data` that `head` or `tail` keeps.
fn cut(data: &[u8], amount: Amount, end: End) -> &[u8] {
    // Where each line ends (after its newline).
    let line_ends = || memchr::memchr_iter(b'\n', data).map(|i| i + 1);
    match (amount, end) {
        (Amount::Bytes(n), End::Head) => &data[..n.min(data.len())],
        (Amount::Bytes(n), End::Tail) => &data[data.len() - n.min(data.len())..],
        (Amount::BytesFrom(n), _) => &data[n.saturating_sub(1).min(data.len())..],
        (Amount::Lines(n), End::Head) => match line_ends().nth(n.wrapping_sub(1)) {
            _ if n == 0 => &[],
            Some(at) => &data[..at],
            None => data,
        },
        (Amount::Lines(n), End::Tail) => {
            if n == 0 {
                return &[];
            }
            // A last line without newline counts as a line.
            let body = data.strip_suffix(b"\n").unwrap_or(data);
            match memchr::memrchr_iter(b'\n', body).nth(n - 1) {
                Some(at) => &data[at + 1..],
                None => data,
            }
        }
        (Amount::LinesFrom(n), _) => {
            if n <= 1 {
                return data;
            }
            match line_ends().nth(n - 2) {
                Some(at) => &data[at..],
                None => &[],
            }
        }
    }
}

/// `wc [-l] [-w] [-c] [-m] [FILE]...`
pub(crate) fn wc(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut lines, mut words, mut bytes, mut chars) = (false, false, false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('l') | Arg::Long(_) if is(&arg, 'l', "lines") => lines = true,
            Arg::Short('w') | Arg::Long(_) if is(&arg, 'w', "words") => words = true,
            Arg::Short('c') | Arg::Long(_) if is(&arg, 'c', "bytes") => bytes = true,
            Arg::Short('m') | Arg::Long(_) if is(&arg, 'm', "chars") => chars = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    if !(lines || words || bytes || chars) {
        (lines, words, bytes) = (true, true, true);
    }
    let mut status = 0;
    let mut rows: Vec<([usize; 4], String)> = Vec::new();
    for arg in &operands {
        env.in_time()?;
        let data = if arg == "-" {
            Some(Vec::new())
        } else {
            read(env, out, "wc", arg)?
        };
        let Some(data) = data else {
            status = 1;
            continue;
        };
        let text = String::from_utf8_lossy(&data);
        rows.push((
            [
                memchr::memchr_iter(b'\n', &data).count(),
                data.split(u8::is_ascii_whitespace)
                    .filter(|w| !w.is_empty())
                    .count(),
                text.chars().count(),
                data.len(),
            ],
            arg.clone(),
        ));
    }
    if operands.is_empty() {
        rows.push(([0; 4], String::new()));
    }
    if rows.len() > 1 {
        let mut total = [0; 4];
        for (counts, _) in &rows {
            for (t, c) in total.iter_mut().zip(counts) {
                *t += c;
            }
        }
        rows.push((total, "total".to_owned()));
    }
    let shown = [lines, words, chars, bytes];
    let fields = shown.iter().filter(|s| **s).count();
    // GNU: one number for one file needs no padding; otherwise all share
    // the width of the largest.
    let width = if fields == 1 && rows.len() == 1 {
        1
    } else {
        rows.iter()
            .flat_map(|(c, _)| c.iter())
            .map(|n| n.to_string().len())
            .max()
            .unwrap_or(1)
    };
    for (counts, name) in rows {
        let numbers: Vec<String> = counts
            .iter()
            .zip(shown)
            .filter(|(_, s)| *s)
            .map(|(n, _)| format!("{n:>width$}"))
            .collect();
        let line = numbers.join(" ");
        if name.is_empty() {
            say!(out, "{line}");
        } else {
            say!(out, "{line} {name}");
        }
    }
    Ok(status)
}

/// `pwd`: where the command runs.
pub(crate) fn pwd(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('L' | 'P') => {}
            _ => return Err(flags.refuse()),
        }
    }
    say!(out, "{}", absolute(env, &env.cwd));
    Ok(0)
}

/// The absolute path of `at`, through the root's path.
fn absolute(env: &Env<'_>, at: &Location) -> String {
    let mut path = env.root_path.to_path_buf();
    if !at.is_root() {
        path.push(at.display());
    }
    path.display().to_string()
}

/// `ls [-a] [-A] [-l] [-1] [-R] [-d] [-F] [-h] [-r] [-t] [-S] [PATH]...`
pub(crate) fn ls(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut o = LsOptions::default();
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('a') | Arg::Long(_) if is(&arg, 'a', "all") => o.all = true,
            Arg::Short('A') | Arg::Long(_) if is(&arg, 'A', "almost-all") => o.all = true,
            Arg::Short('l') => o.long = true,
            Arg::Short('1') => {}
            Arg::Short('R') | Arg::Long(_) if is(&arg, 'R', "recursive") => o.recursive = true,
            Arg::Short('d') | Arg::Long(_) if is(&arg, 'd', "directory") => o.directory = true,
            Arg::Short('F') | Arg::Long(_) if is(&arg, 'F', "classify") => o.classify = true,
            Arg::Short('h') | Arg::Long(_) if is(&arg, 'h', "human-readable") => o.human = true,
            Arg::Short('r') | Arg::Long(_) if is(&arg, 'r', "reverse") => o.reverse = true,
            Arg::Short('t') => o.sort = LsSort::Time,
            Arg::Short('S') => o.sort = LsSort::Size,
            Arg::Operand(op) => operands.push(op),
            _ => return Err(flags.refuse()),
        }
    }
    let operands = or_default(operands, ".");
    let mut status = 0;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for arg in &operands {
        env.in_time()?;
        let at = env.read_path(arg)?;
        match env.tree.metadata(&at) {
            Ok(meta) if meta.kind == Kind::Dir && !o.directory => dirs.push((arg.clone(), at)),
            Ok(meta) => files.push(Listed {
                name: arg.clone(),
                at,
                meta,
            }),
            Err(e) => {
                env.failed(out, "ls", e.about(arg))?;
                status = 2;
            }
        }
    }
    o.order(&mut files);
    o.print(env, out, &files);
    let headers = operands.len() > 1 || o.recursive;
    let mut first = files.is_empty();
    let mut pending: Vec<(String, Location)> = dirs.into_iter().rev().collect();
    while let Some((name, at)) = pending.pop() {
        env.in_time()?;
        if !first {
            say!(out, "");
        }
        first = false;
        if headers {
            say!(out, "{name}:");
        }
        let entries = match env.tree.list(&at) {
            Ok(entries) => entries,
            Err(e) => {
                env.failed(out, "ls", e.about(&name))?;
                status = 2;
                continue;
            }
        };
        let mut listed = Vec::new();
        for entry in entries {
            if entry.name.starts_with('.') && !o.all {
                continue;
            }
            let below = at.join(&entry.name);
            let Ok(meta) = env.tree.metadata(&below) else {
                continue;
            };
            listed.push(Listed {
                name: entry.name,
                at: below,
                meta,
            });
        }
        o.order(&mut listed);
        if o.long {
            let blocks: u64 = listed.iter().map(|l| l.meta.size.div_ceil(1024)).sum();
            say!(out, "total {blocks}");
        }
        o.print(env, out, &listed);
        if o.recursive {
            let subdirs = listed
                .iter()
                .filter(|l| l.meta.kind == Kind::Dir)
                .map(|l| (join_shown(&name, &super::shown_name(&l.name)), l.at.clone()));
            let subdirs: Vec<_> = subdirs.collect();
            pending.extend(subdirs.into_iter().rev());
        }
    }
    Ok(status)
}

fn join_shown(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum LsSort {
    #[default]
    Name,
    Time,
    Size,
}

#[derive(Debug, Default)]
struct LsOptions {
    all: bool,
    long: bool,
    recursive: bool,
    directory: bool,
    classify: bool,
    human: bool,
    reverse: bool,
    sort: LsSort,
}

#[derive(Debug)]
struct Listed {
    name: String,
    at: Location,
    meta: Meta,
}

impl LsOptions {
    fn order(&self, items: &mut [Listed]) {
        match self.sort {
            LsSort::Name => items.sort_by(|a, b| a.name.cmp(&b.name)),
            LsSort::Time => items.sort_by_key(|i| std::cmp::Reverse(i.meta.modified)),
            LsSort::Size => items.sort_by_key(|i| std::cmp::Reverse(i.meta.size)),
        }
        if self.reverse {
            items.reverse();
        }
    }

    fn print(&self, env: &Env<'_>, out: &mut Out<'_>, items: &[Listed]) {
        for item in items {
            let suffix = match (self.classify, item.meta.kind) {
                (true, Kind::Dir) => "/",
                (true, Kind::Symlink) => "@",
                (true, Kind::File) if item.meta.mode & 0o111 != 0 => "*",
                _ => "",
            };
            if !self.long {
                say!(out, "{}{suffix}", super::shown_name(&item.name));
                continue;
            }
            let size = if self.human {
                human(item.meta.size)
            } else {
                item.meta.size.to_string()
            };
            let target = if item.meta.kind == Kind::Symlink {
                env.tree
                    .read_link(&item.at)
                    .map(|t| format!(" -> {}", super::shown_name(&t)))
                    .unwrap_or_default()
            } else {
                String::new()
            };
            say!(
                out,
                "{} {} {} {} {size:>5} {} {}{suffix}{target}",
                mode_string(item.meta.mode),
                item.meta.nlink,
                item.meta.uid,
                item.meta.gid,
                date(item.meta.modified.0),
                super::shown_name(&item.name)
            );
        }
    }
}

/// A size like `ls -h`: 512, 4.0K, 1.5M.
fn human(size: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if size < 1024 {
        return size.to_string();
    }
    let mut value = size as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{:.1}{}", (value * 10.0).ceil() / 10.0, UNITS[unit])
    } else {
        format!("{:.0}{}", value.ceil(), UNITS[unit])
    }
}

/// `drwxr-xr-x` from `st_mode`.
fn mode_string(mode: u32) -> String {
    let kind = match mode & 0o170000 {
        0o040000 => 'd',
        0o120000 => 'l',
        0o100000 => '-',
        0o020000 => 'c',
        0o060000 => 'b',
        0o010000 => 'p',
        0o140000 => 's',
        _ => '?',
    };
    let mut s = String::with_capacity(10);
    s.push(kind);
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    s
}

/// `2026-11-24 19:04` (UTC) from seconds since the epoch.
fn date(secs: i64) -> String {
    let time = u64::try_from(secs)
        .ok()
        .and_then(|s| std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(s)))
        .unwrap_or(std::time::UNIX_EPOCH);
    let full = humantime::format_rfc3339_seconds(time).to_string();
    // 2026-11-24T19:04:07Z
    full.get(..16).unwrap_or(&full).replacen('T', " ", 1)
}

/// `stat [-c FORMAT] PATH...`
pub(crate) fn stat(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut format = None;
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('c') | Arg::Long(_) if is(&arg, 'c', "format") => {
                format = Some(flags.value()?);
            }
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    if operands.is_empty() {
        out.error("stat", "missing operand");
        return Ok(1);
    }
    let mut status = 0;
    for arg in &operands {
        env.in_time()?;
        let at = env.read_path(arg)?;
        let meta = match env.tree.metadata(&at) {
            Ok(meta) => meta,
            Err(e) => {
                env.failed(out, "stat", e.about(arg))?;
                status = 1;
                continue;
            }
        };
        match &format {
            Some(f) => say!(out, "{}", stat_format(f, arg, &meta)),
            None => {
                let name = if meta.kind == Kind::Symlink {
                    let target = env.tree.read_link(&at).unwrap_or_default();
                    format!("{arg} -> {target}")
                } else {
                    arg.clone()
                };
                say!(out, "  File: {name}");
                say!(
                    out,
                    "  Size: {:<15} Blocks: {:<10} {}",
                    meta.size,
                    meta.size.div_ceil(512),
                    kind_name(&meta)
                );
                say!(
                    out,
                    "Device: {:<14} Inode: {:<11} Links: {}",
                    meta.dev,
                    meta.ino,
                    meta.nlink
                );
                say!(
                    out,
                    "Access: ({:04o}/{})  Uid: {:>5}   Gid: {:>5}",
                    meta.mode & 0o7777,
                    mode_string(meta.mode),
                    meta.uid,
                    meta.gid
                );
                say!(out, "Access: {}", long_date(meta.accessed));
                say!(out, "Modify: {}", long_date(meta.modified));
                say!(out, "Change: {}", long_date(meta.changed));
            }
        }
    }
    Ok(status)
}

fn long_date((secs, nanos): (i64, i64)) -> String {
    let day = date(secs);
    let seconds = secs.rem_euclid(60);
    format!("{day}:{seconds:02}.{nanos:09} +0000")
}

fn kind_name(meta: &Meta) -> &'static str {
    match meta.kind {
        Kind::File if meta.size == 0 => "regular empty file",
        Kind::File => "regular file",
        Kind::Dir => "directory",
        Kind::Symlink => "symbolic link",
        Kind::Other => "special file",
    }
}

/// `stat -c`: `%n %s %F %a %A %u %g %h %i %Y %X %Z %y %b %%`.
fn stat_format(format: &str, name: &str, meta: &Meta) -> String {
    let mut s = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            s.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => s.push_str(name),
            Some('s') => s.push_str(&meta.size.to_string()),
            Some('F') => s.push_str(kind_name(meta)),
            Some('a') => s.push_str(&format!("{:o}", meta.mode & 0o7777)),
            Some('A') => s.push_str(&mode_string(meta.mode)),
            Some('u') => s.push_str(&meta.uid.to_string()),
            Some('g') => s.push_str(&meta.gid.to_string()),
            Some('h') => s.push_str(&meta.nlink.to_string()),
            Some('i') => s.push_str(&meta.ino.to_string()),
            Some('b') => s.push_str(&meta.size.div_ceil(512).to_string()),
            Some('Y') => s.push_str(&meta.modified.0.to_string()),
            Some('X') => s.push_str(&meta.accessed.0.to_string()),
            Some('Z') => s.push_str(&meta.changed.0.to_string()),
            Some('y') => s.push_str(&long_date(meta.modified)),
            Some('%') => s.push('%'),
            Some(other) => {
                s.push('%');
                s.push(other);
            }
            None => s.push('%'),
        }
    }
    s
}

/// `file [-b] PATH...`: what a file holds, from its first bytes.
pub(crate) fn file(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut brief = false;
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('b') | Arg::Long(_) if is(&arg, 'b', "brief") => brief = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    for arg in &operands {
        env.in_time()?;
        let at = env.read_path(arg)?;
        let what = match env.tree.metadata(&at) {
            Err(FsError::NotFound { .. }) => "cannot open (No such file or directory)".to_owned(),
            Err(e) => return Err(e.into()),
            Ok(meta) => match meta.kind {
                Kind::Dir => "directory".to_owned(),
                Kind::Symlink => format!(
                    "symbolic link to {}",
                    env.tree.read_link(&at).unwrap_or_default()
                ),
                Kind::Other => "special file".to_owned(),
                Kind::File => {
                    let mut head = Vec::new();
                    let file = env.tree.open(&at)?;
                    let _ = file.take(8192).read_to_end(&mut head);
                    classify(&head, meta.mode & 0o111 != 0)
                }
            },
        };
        if brief {
            say!(out, "{what}");
        } else {
            say!(out, "{arg}: {what}");
        }
    }
    Ok(0)
}

/// What the first bytes of a file say it is.
fn classify(head: &[u8], executable: bool) -> String {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x7fELF", "ELF executable"),
        (b"\x89PNG\r\n\x1a\n", "PNG image data"),
        (b"\xff\xd8\xff", "JPEG image data"),
        (b"GIF8", "GIF image data"),
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "Zip archive data"),
        (b"\x1f\x8b", "gzip compressed data"),
        (b"BZh", "bzip2 compressed data"),
        (b"\xfd7zXZ\x00", "XZ compressed data"),
        (b"(\xb5/\xfd", "Zstandard compressed data"),
        (b"\0asm", "WebAssembly (wasm) binary module"),
    ];
    if head.is_empty() {
        return "empty".to_owned();
    }
    if let Some((_, name)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return (*name).to_owned();
    }
    let text = match std::str::from_utf8(head) {
        Ok(_) => true,
        // A character cut at the end of what was read is still text.
        Err(e) => e.error_len().is_none(),
    };
    if !text || head.contains(&0) {
        return "data".to_owned();
    }
    let charset = if head.is_ascii() { "ASCII" } else { "UTF-8" };
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = line.split(|b| *b == b'\n').next().unwrap_or_default();
        let interpreter = String::from_utf8_lossy(line);
        let exe = if executable { " executable" } else { "" };
        return format!(
            "{} script, {charset} text{exe}",
            interpreter.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    let crlf = if memchr::memmem::find(head, b"\r\n").is_some() {
        ", with CRLF line terminators"
    } else {
        ""
    };
    format!("{charset} text{crlf}")
}

/// `realpath [-e] [-m] [-s] PATH...`: the absolute path, with `.` and `..`
/// resolved as text; a link on the way is refused, never followed.
pub(crate) fn realpath(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut must_exist = false;
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('e') | Arg::Long(_) if is(&arg, 'e', "canonicalize-existing") => {
                must_exist = true;
            }
            Arg::Short('m' | 's') | Arg::Long(_)
                if is(&arg, 'm', "canonicalize-missing") || is(&arg, 's', "no-symlinks") => {}
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    let mut status = 0;
    for arg in &operands {
        env.in_time()?;
        let at = env.read_path(arg)?;
        env.tree.check_no_links(&at)?;
        if must_exist && env.tree.metadata(&at).is_err() {
            out.error("realpath", format!("{arg}: No such file or directory"));
            status = 1;
            continue;
        }
        say!(out, "{}", absolute(env, &at));
    }
    Ok(status)
}

/// `xxd [-l N] [-s N] [-c N] [-g N] [-p] [-u] FILE`
pub(crate) fn xxd(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut len, mut seek, mut cols, mut group) = (None, 0usize, None, None);
    let (mut plain, mut upper) = (false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('l') => len = Some(flags.number::<usize>()?),
            Arg::Short('s') => seek = flags.number()?,
            Arg::Short('c') => cols = Some(flags.number::<usize>()?),
            Arg::Short('g') => group = Some(flags.number::<usize>()?),
            Arg::Short('p') => plain = true,
            Arg::Short('u') => upper = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    if operands.len() > 1 {
        return Err(Refusal::new(
            ErrorType::CommandNotAllowed,
            format!(
                "`{}`: the built-in `xxd` reads one file and never writes one",
                env.shown
            ),
        ));
    }
    let Some(arg) = operands.first() else {
        return Ok(0);
    };
    let Some(data) = read(env, out, "xxd", arg)? else {
        return Ok(2);
    };
    let start = seek.min(data.len());
    let end = len.map_or(data.len(), |l| start.saturating_add(l).min(data.len()));
    let data = &data[start..end];
    let hex = |b: u8| {
        if upper {
            format!("{b:02X}")
        } else {
            format!("{b:02x}")
        }
    };
    if plain {
        let cols = cols.unwrap_or(30).clamp(1, 256);
        for chunk in data.chunks(cols) {
            env.in_time()?;
            say!(out, "{}", chunk.iter().map(|b| hex(*b)).collect::<String>());
        }
        return Ok(0);
    }
    let cols = cols.unwrap_or(16).clamp(1, 256);
    let group = group.unwrap_or(2).max(1);
    let width = cols * 2 + cols.div_ceil(group);
    for (n, chunk) in data.chunks(cols).enumerate() {
        env.in_time()?;
        let mut hexes = String::new();
        for (i, b) in chunk.iter().enumerate() {
            hexes.push_str(&hex(*b));
            if (i + 1) % group == 0 {
                hexes.push(' ');
            }
        }
        let text: String = chunk
            .iter()
            .map(|b| {
                if b.is_ascii_graphic() || *b == b' ' {
                    char::from(*b)
                } else {
                    '.'
                }
            })
            .collect();
        say!(out, "{:08x}: {hexes:<width$} {text}", start + n * cols);
    }
    Ok(0)
}

/// `mkdir [-p] [-v] DIR...`
pub(crate) fn mkdir(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut parents, mut verbose) = (false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('p') | Arg::Long(_) if is(&arg, 'p', "parents") => parents = true,
            Arg::Short('v') | Arg::Long(_) if is(&arg, 'v', "verbose") => verbose = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    let mut status = 0;
    for arg in &operands {
        env.in_time()?;
        let at = env.write_path(arg)?;
        if at.is_root() {
            continue;
        }
        if parents {
            // One walk down the path, the time limit checked at each
            // directory on the way.
            let mut late = None;
            let walked = env.tree.create_dirs(&at, &mut |n, made| {
                if let Err(e) = env.in_time() {
                    late = Some(e);
                    return false;
                }
                if made && verbose {
                    say!(out, "mkdir: created directory '{}'", at.prefix(n));
                }
                true
            });
            if let Some(e) = late {
                return Err(e);
            }
            if let Err(e) = walked {
                env.failed(out, "mkdir", e.about(arg))?;
                status = 1;
            }
            continue;
        }
        match env.tree.create_dir(&at) {
            Ok(true) if verbose => say!(out, "mkdir: created directory '{}'", at.display()),
            Ok(true) => {}
            Ok(false) => {
                out.error(
                    "mkdir",
                    format!("cannot create directory '{arg}': File exists"),
                );
                status = 1;
            }
            Err(e) => {
                env.failed(out, "mkdir", e.about(arg))?;
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `touch [-c] [-a] [-m] FILE...`: creates an empty file, or sets the
/// times of one that exists (never its content).
pub(crate) fn touch(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut no_create, mut access, mut modify) = (false, false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('c') | Arg::Long(_) if is(&arg, 'c', "no-create") => no_create = true,
            Arg::Short('a') => access = true,
            Arg::Short('m') => modify = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    if !access && !modify {
        (access, modify) = (true, true);
    }
    let mut status = 0;
    for arg in &operands {
        env.in_time()?;
        let at = env.write_path(arg)?;
        match env.tree.found(&at) {
            Ok(_) => {
                if let Err(e) = env.tree.touch(&at, access, modify) {
                    env.failed(out, "touch", e.about(arg))?;
                    status = 1;
                }
            }
            Err(FsError::NotFound { .. }) if no_create => {}
            Err(FsError::NotFound { .. }) => {
                if let Some(parent) = at.parent()
                    && let Err(e) = env.tree.found(&parent)
                {
                    env.failed(out, "touch", e.about(arg))?;
                    status = 1;
                    continue;
                }
                if let Err(e) = env.tree.write(&at, b"") {
                    env.failed(out, "touch", e.about(arg))?;
                    status = 1;
                }
            }
            Err(e) => {
                env.failed(out, "touch", e.about(arg))?;
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `rm [-r] [-f] [-d] [-v] PATH...`
pub(crate) fn rm(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut recursive, mut force, mut dirs, mut verbose) = (false, false, false, false);
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('r' | 'R') | Arg::Long(_)
                if is(&arg, 'r', "recursive") || is(&arg, 'R', "recursive") =>
            {
                recursive = true;
            }
            Arg::Short('f') | Arg::Long(_) if is(&arg, 'f', "force") => force = true,
            Arg::Short('d') | Arg::Long(_) if is(&arg, 'd', "dir") => dirs = true,
            Arg::Short('v') | Arg::Long(_) if is(&arg, 'v', "verbose") => verbose = true,
            Arg::Operand(o) => operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    let mut status = 0;
    for arg in &operands {
        env.in_time()?;
        let at = env.write_path(arg)?;
        if at.is_root() || at.is_ancestor_of(&env.cwd) || at == env.cwd {
            out.error(
                "rm",
                format!("refusing to remove '{arg}': it holds the working directory"),
            );
            status = 1;
            continue;
        }
        let kind = match env.tree.found(&at) {
            Ok(kind) => kind,
            Err(FsError::NotFound { .. }) if force => continue,
            Err(e) => {
                env.failed(out, "rm", e.about(arg))?;
                status = 1;
                continue;
            }
        };
        if kind == Kind::Dir {
            if !recursive && !dirs {
                out.error("rm", format!("cannot remove '{arg}': Is a directory"));
                status = 1;
                continue;
            }
            if !recursive && env.tree.names(&at).is_ok_and(|e| !e.is_empty()) {
                out.error("rm", format!("cannot remove '{arg}': Directory not empty"));
                status = 1;
                continue;
            }
        }
        env.check_takes_away(&at)?;
        let removed = env.tree.remove(&at);
        match removed {
            Ok(()) if verbose => say!(out, "removed '{arg}'"),
            Ok(()) => {}
            Err(e) => {
                env.failed(out, "rm", e.about(arg))?;
                status = 1;
            }
        }
    }
    Ok(status)
}

/// Options shared by `mv` and `cp`.
#[derive(Debug, Default)]
struct Transfer {
    recursive: bool,
    no_clobber: bool,
    verbose: bool,
    /// `-T`: the destination is the new name, never a directory to go into.
    no_target_dir: bool,
    target: Option<String>,
    operands: Vec<String>,
}

fn transfer_args(args: &[String], env: &Env<'_>, copy: bool) -> Result<Transfer, Refusal> {
    let mut t = Transfer::default();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short('r' | 'R') | Arg::Long(_)
                if copy && (is(&arg, 'r', "recursive") || is(&arg, 'R', "recursive")) =>
            {
                t.recursive = true;
            }
            Arg::Short('f') | Arg::Long(_) if is(&arg, 'f', "force") => t.no_clobber = false,
            Arg::Short('n') | Arg::Long(_) if is(&arg, 'n', "no-clobber") => t.no_clobber = true,
            Arg::Short('v') | Arg::Long(_) if is(&arg, 'v', "verbose") => t.verbose = true,
            Arg::Short('T') | Arg::Long(_) if is(&arg, 'T', "no-target-directory") => {
                t.no_target_dir = true;
            }
            Arg::Short('t') | Arg::Long(_) if is(&arg, 't', "target-directory") => {
                t.target = Some(flags.value()?);
            }
            Arg::Operand(o) => t.operands.push(o),
            _ => return Err(flags.refuse()),
        }
    }
    Ok(t)
}

/// Where each source lands: `(source text, source, destination)`.
type Moves = Vec<(String, Location, Location)>;

/// Works out the destinations of `mv` or `cp`, GNU style: into a target
/// directory when there is one (`-t`, or a last operand that is a
/// directory), else to the last operand as a new name.
fn destinations(
    t: &Transfer,
    env: &Env<'_>,
    out: &mut Out<'_>,
    tool: &str,
) -> Result<Option<Moves>, Refusal> {
    let (sources, target_dir, dest) = match (&t.target, t.operands.split_last()) {
        (Some(dir), _) => (&t.operands[..], Some(dir.clone()), None),
        (None, Some((last, rest))) if !rest.is_empty() => {
            let at = env.write_path(last)?;
            let is_dir = env.tree.found(&at) == Ok(Kind::Dir);
            if rest.len() > 1 || (is_dir && !t.no_target_dir) {
                (rest, Some(last.clone()), None)
            } else {
                (rest, None, Some(last.clone()))
            }
        }
        _ => {
            out.error(tool, "missing file operand");
            return Ok(None);
        }
    };
    if sources.is_empty() {
        out.error(tool, "missing file operand");
        return Ok(None);
    }
    let mut moves = Vec::new();
    for src in sources {
        env.in_time()?;
        let from = env.read_path(src)?;
        let to = match (&target_dir, &dest) {
            (Some(dir), _) => {
                let dir_at = env.write_path(dir)?;
                match env.tree.found(&dir_at) {
                    Ok(Kind::Dir) => {}
                    Ok(_) => {
                        out.error(tool, format!("target '{dir}': Not a directory"));
                        return Ok(None);
                    }
                    Err(e) => {
                        env.failed(out, tool, e.about(dir))?;
                        return Ok(None);
                    }
                }
                match from.name() {
                    // `cp -r s/. d`: the contents of `s` go into `d`.
                    _ if contents_of(src) => dir_at,
                    Some(name) => dir_at.join(name),
                    None => {
                        out.error(tool, format!("cannot {tool} '{src}' into '{dir}'"));
                        return Ok(None);
                    }
                }
            }
            (None, Some(d)) => env.read_path(d)?,
            (None, None) => return Ok(None),
        };
        env.check_lands(&to)?;
        moves.push((src.clone(), from, to));
    }
    Ok(Some(moves))
}

/// Whether a source names the contents of a directory (`s/.`, `.`).
fn contents_of(src: &str) -> bool {
    src == "." || src.ends_with("/.")
}

/// `mv [-f] [-n] [-v] [-T] [-t DIR] SOURCE... DEST`
pub(crate) fn mv(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let t = transfer_args(args, env, false)?;
    let Some(moves) = destinations(&t, env, out, "mv")? else {
        return Ok(1);
    };
    let mut status = 0;
    for (src, from, to) in moves {
        env.in_time()?;
        env.check_lands(&from)?;
        if from.is_root() || from == env.cwd || from.is_ancestor_of(&env.cwd) {
            out.error(
                "mv",
                format!("cannot move '{src}': it holds the working directory"),
            );
            status = 1;
            continue;
        }
        if from == to || from.is_ancestor_of(&to) {
            out.error(
                "mv",
                format!("cannot move '{src}' to a subdirectory of itself"),
            );
            status = 1;
            continue;
        }
        let kind = match env.tree.found(&from) {
            Ok(kind) => kind,
            Err(e) => {
                env.failed(out, "mv", e.about(&src))?;
                status = 1;
                continue;
            }
        };
        env.check_takes_away(&from)?;
        match env.tree.found(&to) {
            Ok(_) if t.no_clobber => continue,
            Ok(Kind::Dir) if kind != Kind::Dir => {
                out.error(
                    "mv",
                    format!(
                        "cannot overwrite directory '{}' with non-directory",
                        to.display()
                    ),
                );
                status = 1;
                continue;
            }
            Ok(Kind::Dir) => {
                env.check_takes_away(&to)?;
            }
            _ => {}
        }
        if let Some(parent) = to.parent()
            && let Err(e) = env.tree.found(&parent)
        {
            env.failed(out, "mv", e)?;
            status = 1;
            continue;
        }
        let moved = env.tree.rename(&from, &to);
        match moved {
            Ok(()) if t.verbose => say!(out, "renamed '{src}' -> '{}'", to.display()),
            Ok(()) => {}
            Err(e) => {
                env.failed(out, "mv", e)?;
                status = 1;
            }
        }
    }
    Ok(status)
}

/// `cp [-r] [-f] [-n] [-v] [-T] [-t DIR] SOURCE... DEST`: files are
/// written like WRITE (whole, atomically); links are not copied.
pub(crate) fn cp(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let t = transfer_args(args, env, true)?;
    let Some(moves) = destinations(&t, env, out, "cp")? else {
        return Ok(1);
    };
    let mut status = 0;
    for (src, from, to) in moves {
        env.in_time()?;
        let kind = match env.tree.found(&from) {
            Ok(kind) => kind,
            Err(e) => {
                env.failed(out, "cp", e.about(&src))?;
                status = 1;
                continue;
            }
        };
        if kind == Kind::Symlink {
            return Err(FsError::Symlink { path: src }.into());
        }
        if kind == Kind::Dir {
            if !t.recursive {
                out.error(
                    "cp",
                    format!("-r not specified; omitting directory '{src}'"),
                );
                status = 1;
                continue;
            }
            if from == to || from.is_ancestor_of(&to) {
                out.error(
                    "cp",
                    format!("cannot copy a directory, '{src}', into itself"),
                );
                status = 1;
                continue;
            }
            env.check_takes_away(&from)?;
        }
        status = status.max(copy_tree(env, out, &t, &src, from, to)?);
    }
    Ok(status)
}

/// Copies `from` (a file, or a directory and everything in it) to `to`,
/// checking each destination where it lands.
fn copy_tree(
    env: &Env<'_>,
    out: &mut Out<'_>,
    t: &Transfer,
    src: &str,
    from: Location,
    to: Location,
) -> Result<i32, Refusal> {
    let mut status = 0;
    let mut pending = vec![(from, to)];
    while let Some((from, to)) = pending.pop() {
        env.in_time()?;
        if !env.copied.allows_more() {
            out.error(
                "cp",
                format!(
                    "stopped before '{}': built-in cp copies at most {} files and directories and {} MiB in a run; approve the command to run the system's cp",
                    from.display(),
                    super::MAX_COPIED_ENTRIES,
                    super::MAX_COPIED_BYTES >> 20
                ),
            );
            return Ok(1);
        }
        env.check_lands(&to)?;
        let kind = match env.tree.found(&from) {
            Ok(kind) => kind,
            Err(e) => {
                env.failed(out, "cp", e)?;
                status = 1;
                continue;
            }
        };
        match kind {
            Kind::Dir => {
                let exists = env.tree.found(&to) == Ok(Kind::Dir);
                match if exists {
                    Ok(false)
                } else {
                    env.tree.create_dir(&to)
                } {
                    Ok(_) => env.copied.add(0),
                    Err(e) => {
                        env.failed(out, "cp", e)?;
                        status = 1;
                        continue;
                    }
                }
                let entries = match env.tree.names(&from) {
                    Ok(entries) => entries,
                    Err(e) => {
                        env.failed(out, "cp", e)?;
                        status = 1;
                        continue;
                    }
                };
                for name in entries.into_iter().rev() {
                    pending.push((from.join(&name), to.join(&name)));
                }
            }
            Kind::File => {
                if t.no_clobber && env.tree.found(&to).is_ok() {
                    continue;
                }
                let copied = match env.tree.copy_file(&from, &to) {
                    // The tree cannot copy by itself: read, then write.
                    None => {
                        let Some(data) = read_at(env, out, "cp", &from, &from.display())? else {
                            status = 1;
                            continue;
                        };
                        env.tree.write(&to, &data).map(|()| data.len() as u64)
                    }
                    Some(copied) => copied,
                };
                if let Ok(bytes) = copied {
                    env.copied.add(bytes);
                }
                match copied {
                    Ok(_) if t.verbose => {
                        say!(out, "'{}' -> '{}'", from.display(), to.display());
                    }
                    Ok(_) => {}
                    Err(e) => {
                        env.failed(out, "cp", e)?;
                        status = 1;
                    }
                }
            }
            Kind::Symlink | Kind::Other => {
                out.error(
                    "cp",
                    format!(
                        "not copying '{}' from '{src}': links and special files are not copied",
                        from.display()
                    ),
                );
                status = 1;
            }
        }
    }
    Ok(status)
}
