//! `grep`, `find` and `tree`: walks of the tree (the run's
//! [`TreeMut`](crate::engine::tree::TreeMut)) that list a link as a link
//! and never go through one.
//!
//! grep matches with ripgrep's `grep-regex` and reads with `grep-searcher`;
//! `find -name`, `grep --include` and `tree -I` match with `globset`.

use std::io::{Read, Write};
use std::time::Instant;

use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use crate::engine::tree::{FsError, Kind};
use crate::error_type::ErrorType;
use crate::syntax::Location;

use super::args::Arg;
use super::{Env, Flags, Out, Refusal};

/// A glob as `find -name` and `fnmatch` read it: `*` stays within a name
/// unless `whole_path`.
fn glob(
    env: &Env<'_>,
    pattern: &str,
    ignore_case: bool,
    whole_path: bool,
) -> Result<GlobMatcher, Refusal> {
    GlobBuilder::new(pattern)
        .literal_separator(!whole_path)
        .backslash_escape(true)
        .case_insensitive(ignore_case)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            Refusal::new(
                ErrorType::CommandNotAllowed,
                format!("`{}`: the pattern `{pattern}` is not valid: {e}", env.shown),
            )
        })
}

/// `name` shown under the operand `dir` as the user wrote it.
fn under(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// How much of a file grep looks at to decide that it is binary (it holds
/// a NUL byte there). The rest is streamed.
const BINARY_PROBE: u64 = 32 * 1024;

/// The most one line may take in memory while grep searches.
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

/// A reader that fails once the command's time is up, so that reading one
/// big file honours the deadline too.
pub(super) struct Timed<R> {
    pub(super) inner: R,
    pub(super) deadline: Instant,
}

impl<R: Read> Read for Timed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if Instant::now() >= self.deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "ran past its limit",
            ));
        }
        self.inner.read(buf)
    }
}

/// The options of one grep.
#[derive(Debug, Default)]
struct GrepOptions {
    recursive: bool,
    line_numbers: bool,
    ignore_case: bool,
    files_with_matches: bool,
    files_without_match: bool,
    count: bool,
    extended: bool,
    fixed: bool,
    word: bool,
    invert: bool,
    /// `-x`: the pattern matches whole lines.
    whole_line: bool,
    only_matching: bool,
    /// `-I`: binary files are passed over.
    skip_binary: bool,
    after: usize,
    before: usize,
    quiet: bool,
    no_messages: bool,
    /// `Some(true)` with -H, `Some(false)` with -h.
    with_filename: Option<bool>,
    max_count: Option<u64>,
    include: Vec<GlobMatcher>,
    exclude: Vec<GlobMatcher>,
    exclude_dir: Vec<GlobMatcher>,
}

/// `grep [FLAGS] PATTERN [PATH]...` (see the README for the flags).
pub(crate) fn grep(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut o = GrepOptions::default();
    let mut patterns = Vec::new();
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match &arg {
            Arg::Short('r' | 'R') => o.recursive = true,
            Arg::Long(l) if l == "recursive" || l == "dereference-recursive" => o.recursive = true,
            Arg::Short('n') => o.line_numbers = true,
            Arg::Long(l) if l == "line-number" => o.line_numbers = true,
            Arg::Short('i' | 'y') => o.ignore_case = true,
            Arg::Long(l) if l == "ignore-case" => o.ignore_case = true,
            Arg::Short('l') => o.files_with_matches = true,
            Arg::Long(l) if l == "files-with-matches" => o.files_with_matches = true,
            Arg::Short('L') => o.files_without_match = true,
            Arg::Long(l) if l == "files-without-match" => o.files_without_match = true,
            Arg::Short('c') => o.count = true,
            Arg::Long(l) if l == "count" => o.count = true,
            Arg::Short('E') => o.extended = true,
            Arg::Long(l) if l == "extended-regexp" => o.extended = true,
            Arg::Short('F') => o.fixed = true,
            Arg::Long(l) if l == "fixed-strings" => o.fixed = true,
            Arg::Short('G') => o.extended = false,
            Arg::Short('w') => o.word = true,
            Arg::Long(l) if l == "word-regexp" => o.word = true,
            Arg::Short('v') => o.invert = true,
            Arg::Long(l) if l == "invert-match" => o.invert = true,
            Arg::Short('o') => o.only_matching = true,
            Arg::Long(l) if l == "only-matching" => o.only_matching = true,
            Arg::Short('q') => o.quiet = true,
            Arg::Long(l) if l == "quiet" || l == "silent" => o.quiet = true,
            Arg::Short('s') => o.no_messages = true,
            Arg::Long(l) if l == "no-messages" => o.no_messages = true,
            Arg::Short('H') => o.with_filename = Some(true),
            Arg::Long(l) if l == "with-filename" => o.with_filename = Some(true),
            Arg::Short('h') => o.with_filename = Some(false),
            Arg::Long(l) if l == "no-filename" => o.with_filename = Some(false),
            Arg::Short('I') => o.skip_binary = true,
            Arg::Short('x') => o.whole_line = true,
            Arg::Long(l) if l == "line-regexp" => o.whole_line = true,
            Arg::Short('A') => o.after = flags.number()?,
            Arg::Long(l) if l == "after-context" => o.after = flags.number()?,
            Arg::Short('B') => o.before = flags.number()?,
            Arg::Long(l) if l == "before-context" => o.before = flags.number()?,
            Arg::Short('C') => {
                o.after = flags.number()?;
                o.before = o.after;
            }
            Arg::Long(l) if l == "context" => {
                o.after = flags.number()?;
                o.before = o.after;
            }
            Arg::Short('e') => patterns.push(flags.value()?),
            Arg::Long(l) if l == "regexp" => patterns.push(flags.value()?),
            Arg::Short('m') => o.max_count = Some(flags.number()?),
            Arg::Long(l) if l == "max-count" => o.max_count = Some(flags.number()?),
            Arg::Long(l) if l == "include" => {
                o.include.push(glob(env, &flags.value()?, false, false)?)
            }
            Arg::Long(l) if l == "exclude" => {
                o.exclude.push(glob(env, &flags.value()?, false, false)?)
            }
            Arg::Long(l) if l == "exclude-dir" => {
                o.exclude_dir
                    .push(glob(env, &flags.value()?, false, false)?);
            }
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
    if patterns.is_empty() {
        if operands.is_empty() {
            out.error("grep", "no pattern given");
            return Ok(2);
        }
        patterns.push(operands.remove(0));
    }
    let matcher = matcher(env, &o, &patterns)?;
    let default_operand = operands.is_empty();
    if default_operand {
        operands.push(if o.recursive { "." } else { "-" }.to_owned());
    }
    let show_names = o.with_filename.unwrap_or(o.recursive || operands.len() > 1);
    let lines = !(o.quiet || o.count || o.files_with_matches || o.files_without_match);
    let context = |n: usize| if lines && !o.only_matching { n } else { 0 };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .invert_match(o.invert)
        .max_matches(o.max_count)
        .after_context(context(o.after))
        .before_context(context(o.before))
        .heap_limit(Some(HEAP_LIMIT))
        .build();
    let mut run = GrepRun {
        env,
        o: &o,
        matcher: &matcher,
        show_names,
        matched_any: false,
        trouble: false,
        printed: false,
    };
    for operand in &operands {
        env.in_time()?;
        if operand == "-" {
            // Standard input is empty.
            continue;
        }
        let at = env.read_path(operand)?;
        let meta = match env.tree.metadata(&at) {
            Ok(meta) => meta,
            Err(e) => {
                run.trouble(out, e, operand)?;
                continue;
            }
        };
        match meta.kind {
            Kind::Dir if o.recursive => {
                let shown = if default_operand {
                    ""
                } else {
                    operand.as_str()
                };
                run.walk(&mut searcher, out, at, shown)?;
            }
            Kind::Dir => {
                if !o.no_messages {
                    out.error("grep", format!("{operand}: Is a directory"));
                }
                run.trouble = true;
            }
            Kind::Symlink => {
                return Err(FsError::Symlink {
                    path: operand.clone(),
                }
                .into());
            }
            _ => run.file(&mut searcher, out, &at, operand)?,
        }
        if o.quiet && run.matched_any {
            break;
        }
    }
    Ok(match (run.matched_any, run.trouble) {
        (true, _) if o.quiet => 0,
        (_, true) => 2,
        (true, false) => 0,
        (false, false) => 1,
    })
}

/// The matcher for grep's patterns. Without `-E` or `-F` a pattern is a
/// basic regular expression: `\|`, `\(`, `\)`, `\{`, `\}`, `\+`, `\?` are
/// operators and the bare characters are literal.
fn matcher(env: &Env<'_>, o: &GrepOptions, patterns: &[String]) -> Result<RegexMatcher, Refusal> {
    let patterns: Vec<String> = patterns
        .iter()
        .flat_map(|p| p.split('\n'))
        .map(|p| {
            if o.fixed || o.extended {
                p.to_owned()
            } else {
                basic_to_extended(p)
            }
        })
        .collect();
    RegexMatcherBuilder::new()
        .case_insensitive(o.ignore_case)
        .word(o.word)
        .whole_line(o.whole_line)
        .fixed_strings(o.fixed)
        .line_terminator(Some(b'\n'))
        .build_many(&patterns)
        .map_err(|e| {
            Refusal::new(
                ErrorType::CommandNotAllowed,
                format!(
                    "`{}`: the pattern is not a valid regular expression: {e}",
                    env.shown
                ),
            )
        })
}

/// A basic regular expression (POSIX BRE, GNU flavour) written as an
/// extended one.
fn basic_to_extended(pattern: &str) -> String {
    const SWAPPED: &[char] = &['|', '(', ')', '{', '}', '+', '?'];
    let mut s = String::with_capacity(pattern.len() + 4);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) if SWAPPED.contains(&n) => s.push(n),
                Some(n) => {
                    s.push('\\');
                    s.push(n);
                }
                None => s.push_str("\\\\"),
            },
            c if SWAPPED.contains(&c) => {
                s.push('\\');
                s.push(c);
            }
            c => s.push(c),
        }
    }
    s
}

/// One grep over its operands.
struct GrepRun<'r, 'e> {
    env: &'r Env<'e>,
    o: &'r GrepOptions,
    matcher: &'r RegexMatcher,
    show_names: bool,
    matched_any: bool,
    trouble: bool,
    /// Lines were written: `--` goes between groups of context.
    printed: bool,
}

impl GrepRun<'_, '_> {
    fn trouble(&mut self, out: &mut Out<'_>, e: FsError, shown: &str) -> Result<(), Refusal> {
        self.trouble = true;
        if matches!(
            e,
            FsError::Escape { .. }
                | FsError::TooDeep { .. }
                | FsError::Symlink { .. }
                | FsError::Protected { .. }
        ) {
            return Err(e.into());
        }
        if !self.o.no_messages {
            out.error("grep", super::describe(&e.about(shown)));
        }
        Ok(())
    }

    /// Searches a directory, depth first, in name order; `.git`
    /// directories and links are passed over.
    fn walk(
        &mut self,
        searcher: &mut Searcher,
        out: &mut Out<'_>,
        dir: Location,
        shown: &str,
    ) -> Result<(), Refusal> {
        // Depth first, in name order, like find.
        let mut pending = vec![(dir, shown.to_owned(), Kind::Dir)];
        while let Some((at, shown, kind)) = pending.pop() {
            self.env.in_time()?;
            let name = at.name().unwrap_or_default();
            match kind {
                Kind::File => {
                    if !self.o.include.is_empty()
                        && !self.o.include.iter().any(|g| g.is_match(name))
                    {
                        continue;
                    }
                    if self.o.exclude.iter().any(|g| g.is_match(name)) {
                        continue;
                    }
                    self.file(searcher, out, &at, &shown)?;
                    if self.o.quiet && self.matched_any {
                        return Ok(());
                    }
                }
                Kind::Dir => {
                    let entries = match self.env.tree.list(&at) {
                        Ok(entries) => entries,
                        Err(e) => {
                            self.trouble(out, e, &shown)?;
                            continue;
                        }
                    };
                    for entry in entries.into_iter().rev() {
                        let skip = entry.kind == Kind::Dir
                            && (entry.name == ".git"
                                || self.o.exclude_dir.iter().any(|g| g.is_match(&entry.name)));
                        if !skip {
                            let below = at.join(&entry.name);
                            pending.push((
                                below,
                                under(&shown, &super::shown_name(&entry.name)),
                                entry.kind,
                            ));
                        }
                    }
                }
                Kind::Symlink | Kind::Other => {}
            }
        }
        Ok(())
    }

    /// Searches one file. Its first part decides whether it is binary (a
    /// NUL byte); the rest is streamed, line by line, within the deadline.
    fn file(
        &mut self,
        searcher: &mut Searcher,
        out: &mut Out<'_>,
        at: &Location,
        shown: &str,
    ) -> Result<(), Refusal> {
        self.env.in_time()?;
        let mut file = match self.env.tree.open(at) {
            Ok(file) => file,
            Err(e) => return self.trouble(out, e, shown),
        };
        let mut probe = Vec::new();
        if let Err(e) = Read::by_ref(&mut file)
            .take(BINARY_PROBE)
            .read_to_end(&mut probe)
        {
            self.trouble = true;
            if !self.o.no_messages {
                out.error("grep", format!("{shown}: {e}"));
            }
            return Ok(());
        }
        let binary = probe.contains(&0);
        let o = self.o;
        if binary && o.skip_binary {
            if o.files_without_match && !o.quiet {
                let _ = writeln!(out, "{shown}");
            }
            return Ok(());
        }
        // A NUL further on ends the search of a file taken for text.
        searcher.set_binary_detection(if binary {
            BinaryDetection::none()
        } else {
            BinaryDetection::quit(b'\0')
        });
        let reader = std::io::Cursor::new(probe).chain(Timed {
            inner: file,
            deadline: self.env.deadline,
        });
        let mut sink = Lines {
            env: self.env,
            out,
            matcher: self.matcher,
            o,
            name: self.show_names.then_some(shown),
            printed: &mut self.printed,
            fresh: true,
            show: !(binary || o.quiet || o.count || o.files_with_matches || o.files_without_match),
            count: 0,
            late: None,
        };
        let result = searcher.search_reader(self.matcher, reader, &mut sink);
        let (count, late) = (sink.count, sink.late);
        if let Some(e) = late {
            return Err(e);
        }
        if let Err(e) = result {
            self.env.in_time()?;
            self.trouble = true;
            if !o.no_messages {
                out.error("grep", format!("{shown}: {e}"));
            }
            return Ok(());
        }
        self.matched_any |= count > 0;
        if o.quiet {
            return Ok(());
        }
        if o.files_with_matches {
            if count > 0 {
                let _ = writeln!(out, "{shown}");
            }
        } else if o.files_without_match {
            if count == 0 {
                let _ = writeln!(out, "{shown}");
            }
        } else if o.count {
            let _ = if self.show_names {
                writeln!(out, "{shown}:{count}")
            } else {
                writeln!(out, "{count}")
            };
        } else if binary && count > 0 {
            let _ = writeln!(out, "Binary file {shown} matches");
        }
        Ok(())
    }
}

/// Writes one file's lines as they are found.
struct Lines<'s, 'e, 'o> {
    env: &'s Env<'e>,
    out: &'s mut Out<'o>,
    matcher: &'s RegexMatcher,
    o: &'s GrepOptions,
    /// The file's name, when lines carry it.
    name: Option<&'s str>,
    /// Some line was written, by this file or an earlier one.
    printed: &'s mut bool,
    /// The next line starts a group of context.
    fresh: bool,
    /// Lines are written (not for -c, -l, -L, -q, nor a binary file).
    show: bool,
    count: u64,
    /// The deadline passed during the search.
    late: Option<Refusal>,
}

impl Lines<'_, '_, '_> {
    /// Writes `name:12:text` (`-` instead of `:` for context).
    fn line(&mut self, number: Option<u64>, sep: u8, text: &[u8]) {
        let mut buf = Vec::with_capacity(text.len() + 32);
        let context = self.o.after > 0 || self.o.before > 0;
        if context && self.fresh && *self.printed {
            buf.extend_from_slice(b"--\n");
        }
        self.fresh = false;
        if let Some(name) = self.name {
            buf.extend_from_slice(name.as_bytes());
            buf.push(sep);
        }
        if let (true, Some(n)) = (self.o.line_numbers, number) {
            buf.extend_from_slice(n.to_string().as_bytes());
            buf.push(sep);
        }
        buf.extend_from_slice(text);
        if !text.ends_with(b"\n") {
            buf.push(b'\n');
        }
        let _ = self.out.write_all(&buf);
        *self.printed = true;
    }
}

impl Sink for Lines<'_, '_, '_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if let Err(e) = self.env.in_time() {
            self.late = Some(e);
            return Ok(false);
        }
        self.count += 1;
        let o = self.o;
        if !self.show {
            // One match decides -q, -l, -L and a binary file; -c counts on.
            let counting = o.count && !o.quiet && !o.files_with_matches && !o.files_without_match;
            return Ok(counting);
        }
        let mut number = mat.line_number();
        for line in mat.lines() {
            if o.only_matching {
                if o.invert {
                    continue;
                }
                let text = line.strip_suffix(b"\n").unwrap_or(line);
                let mut parts = Vec::new();
                let _ = self.matcher.find_iter(text, |m| {
                    if let Some(part) = text.get(m.start()..m.end())
                        && !part.is_empty()
                    {
                        parts.push(part.to_vec());
                    }
                    true
                });
                for part in parts {
                    self.line(number, b':', &part);
                }
            } else {
                self.line(number, b':', line);
            }
            number = number.map(|n| n + 1);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.show {
            self.line(c.line_number(), b'-', c.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, Self::Error> {
        self.fresh = true;
        Ok(true)
    }
}

/// One test of find's expression.
#[derive(Debug)]
enum Test {
    Name(GlobMatcher),
    Path(GlobMatcher),
    Type(Kind),
    Empty,
    Not(Box<Test>),
}

/// `find [PATH]... [EXPRESSION]`: the tests are joined by "and".
pub(crate) fn find(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let mut starts = Vec::new();
    let mut rest = args.iter();
    let mut expression = Vec::new();
    for arg in rest.by_ref() {
        if arg.starts_with('-') || arg == "!" || arg == "(" {
            expression.push(arg.clone());
            break;
        }
        starts.push(arg.clone());
    }
    expression.extend(rest.cloned());
    let (mut min_depth, mut max_depth) = (0usize, usize::MAX);
    let mut tests = Vec::new();
    let mut negate = false;
    let mut words = expression.into_iter();
    let refuse = |flag: &str| env.unsupported(flag);
    while let Some(word) = words.next() {
        let mut value = |flag: &str| {
            words.next().ok_or_else(|| {
                Refusal::new(
                    ErrorType::CommandNotAllowed,
                    format!("`{}`: `{flag}` needs a value", env.shown),
                )
            })
        };
        let test = match word.as_str() {
            "!" | "-not" => {
                negate = !negate;
                continue;
            }
            "-a" | "-and" | "-print" => continue,
            "-maxdepth" | "-mindepth" => {
                let v = value(&word)?;
                let n: usize = v.parse().map_err(|_| {
                    Refusal::new(
                        ErrorType::CommandNotAllowed,
                        format!("`{}`: `{v}` is not a valid value for `{word}`", env.shown),
                    )
                })?;
                if word == "-maxdepth" {
                    max_depth = n;
                } else {
                    min_depth = n;
                }
                continue;
            }
            "-name" => Test::Name(glob(env, &value(&word)?, false, false)?),
            "-iname" => Test::Name(glob(env, &value(&word)?, true, false)?),
            "-path" | "-wholename" => Test::Path(glob(env, &value(&word)?, false, true)?),
            "-ipath" => Test::Path(glob(env, &value(&word)?, true, true)?),
            "-type" => match value(&word)?.as_str() {
                "f" => Test::Type(Kind::File),
                "d" => Test::Type(Kind::Dir),
                "l" => Test::Type(Kind::Symlink),
                other => return Err(refuse(&format!("-type {other}"))),
            },
            "-empty" => Test::Empty,
            other => return Err(refuse(other)),
        };
        tests.push(if std::mem::take(&mut negate) {
            Test::Not(Box::new(test))
        } else {
            test
        });
    }
    if starts.is_empty() {
        starts.push(".".to_owned());
    }
    let mut status = 0;
    for start in &starts {
        let at = env.read_path(start)?;
        let kind = match env.tree.metadata(&at) {
            Ok(meta) => meta.kind,
            Err(e) => {
                env.failed(out, "find", e.about(start))?;
                status = 1;
                continue;
            }
        };
        // Depth first, in name order, never through a link.
        let mut pending = vec![(at, start.clone(), kind, 0usize)];
        while let Some((at, shown, kind, depth)) = pending.pop() {
            env.in_time()?;
            let entries = if kind == Kind::Dir && depth < max_depth {
                match env.tree.list(&at) {
                    Ok(entries) => Some(entries),
                    Err(e) => {
                        env.failed(out, "find", e.about(&shown))?;
                        status = 1;
                        None
                    }
                }
            } else {
                None
            };
            let empty = match kind {
                Kind::Dir => {
                    entries.as_ref().is_some_and(Vec::is_empty)
                        || (depth >= max_depth && env.tree.list(&at).is_ok_and(|e| e.is_empty()))
                }
                Kind::File => env.tree.metadata(&at).is_ok_and(|m| m.size == 0),
                _ => false,
            };
            let name = at.name().unwrap_or(&shown).to_owned();
            let name = if depth == 0 { basename(&shown) } else { name };
            if depth >= min_depth && tests.iter().all(|t| passes(t, &name, &shown, kind, empty)) {
                let _ = writeln!(out, "{shown}");
            }
            if let Some(entries) = entries {
                for entry in entries.into_iter().rev() {
                    let below = at.join(&entry.name);
                    pending.push((
                        below,
                        under(&shown, &super::shown_name(&entry.name)),
                        entry.kind,
                        depth + 1,
                    ));
                }
            }
        }
    }
    Ok(status)
}

/// The last component of a starting point as written (`.` for `.`).
fn basename(shown: &str) -> String {
    let trimmed = shown.trim_end_matches('/');
    match trimmed.rsplit('/').next() {
        Some("") | None => shown.to_owned(),
        Some(name) => name.to_owned(),
    }
}

fn passes(test: &Test, name: &str, path: &str, kind: Kind, empty: bool) -> bool {
    match test {
        Test::Name(g) => g.is_match(name),
        Test::Path(g) => g.is_match(path),
        Test::Type(k) => *k == kind,
        Test::Empty => empty,
        Test::Not(t) => !passes(t, name, path, kind, empty),
    }
}

/// One line of `tree` to come: where, name, kind, the prefix of its line,
/// its level.
type TreeItem = (Location, String, Kind, String, usize);

/// `tree [-a] [-d] [-L N] [-I PATTERN] [--noreport] [DIR]...`
pub(crate) fn tree(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let (mut all, mut dirs_only, mut report) = (false, false, true);
    let mut max_level = usize::MAX;
    let mut ignore = Vec::new();
    let mut operands = Vec::new();
    let mut flags = Flags::new(args, env);
    while let Some(arg) = flags.next()? {
        match &arg {
            Arg::Short('a') => all = true,
            Arg::Short('d') => dirs_only = true,
            Arg::Short('L') => max_level = flags.number()?,
            Arg::Short('I') => {
                for pattern in flags.value()?.split('|') {
                    ignore.push(glob(env, pattern, false, false)?);
                }
            }
            Arg::Long(l) if l == "noreport" => report = false,
            Arg::Long(l) if l == "dirsfirst" => {}
            Arg::Operand(o) => operands.push(o.clone()),
            _ => return Err(flags.refuse()),
        }
    }
    if operands.is_empty() {
        operands.push(".".to_owned());
    }
    let (mut dirs, mut files) = (0usize, 0usize);
    let mut status = 0;
    for operand in &operands {
        env.in_time()?;
        let at = env.read_path(operand)?;
        match env.tree.metadata(&at) {
            Ok(meta) if meta.kind == Kind::Dir => {}
            Ok(_) => {
                let _ = writeln!(out, "{operand}  [error opening dir]");
                status = 2;
                continue;
            }
            Err(e) => {
                env.failed(out, "tree", e.about(operand))?;
                status = 2;
                continue;
            }
        }
        let _ = writeln!(out, "{operand}");
        // (directory, prefix of its lines, level)
        let mut pending: Vec<Vec<TreeItem>> = Vec::new();
        let children = |at: &Location, prefix: &str, level: usize| -> Vec<TreeItem> {
            let Ok(entries) = env.tree.list(at) else {
                return Vec::new();
            };
            entries
                .into_iter()
                .filter(|e| all || !e.name.starts_with('.'))
                .filter(|e| !dirs_only || e.kind == Kind::Dir)
                .filter(|e| !ignore.iter().any(|g| g.is_match(&e.name)))
                .map(|e| (at.join(&e.name), e.name, e.kind, prefix.to_owned(), level))
                .rev()
                .collect()
        };
        pending.push(children(&at, "", 1));
        while let Some(level_items) = pending.last_mut() {
            env.in_time()?;
            let Some((at, name, kind, prefix, level)) = level_items.pop() else {
                pending.pop();
                continue;
            };
            let last = level_items.is_empty();
            let (branch, next) = if last {
                ("└── ", "    ")
            } else {
                ("├── ", "│   ")
            };
            let target = if kind == Kind::Symlink {
                env.tree
                    .read_link(&at)
                    .map(|t| format!(" -> {}", super::shown_name(&t)))
                    .unwrap_or_default()
            } else {
                String::new()
            };
            let name = super::shown_name(&name);
            let _ = writeln!(out, "{prefix}{branch}{name}{target}");
            if kind == Kind::Dir {
                dirs += 1;
                if level < max_level {
                    let inner = children(&at, &format!("{prefix}{next}"), level + 1);
                    pending.push(inner);
                }
            } else {
                files += 1;
            }
        }
    }
    if report {
        let d = if dirs == 1 {
            "directory"
        } else {
            "directories"
        };
        let f = if files == 1 { "file" } else { "files" };
        if dirs_only {
            let _ = writeln!(out, "\n{dirs} {d}");
        } else {
            let _ = writeln!(out, "\n{dirs} {d}, {files} {f}");
        }
    }
    Ok(status)
}

/// What the unit tests of the built-ins share: a scratch tree with a
/// secret beside the root, and a way to run one tool on it.
#[cfg(test)]
pub(super) mod testing {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;
    use std::time::{Duration, Instant};

    use super::super::{Env, Out, Refusal};
    use crate::commands::process::Output;
    use crate::engine::Quiet;
    use crate::engine::fs::{Root, locate};

    pub(crate) const SECRET: &str = "SECRET-CANARY";

    pub(crate) type Tool = fn(&[String], &Env<'_>, &mut Out<'_>) -> Result<i32, Refusal>;

    /// `top/root` with files, a `.git`, a binary file and links to
    /// `top/outside`, which holds the secret.
    pub(crate) fn scratch() -> tempfile::TempDir {
        let top = tempfile::tempdir().unwrap();
        let t = top.path();
        std::fs::create_dir_all(t.join("outside/sub")).unwrap();
        std::fs::write(t.join("outside/secret.txt"), format!("{SECRET} hello\n")).unwrap();
        std::fs::write(t.join("outside/sub/x.rs"), format!("{SECRET} hello\n")).unwrap();
        let r = t.join("root");
        std::fs::create_dir_all(r.join("src")).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(r.join(".git/config"), "hello git\n").unwrap();
        std::fs::write(r.join("a.txt"), "hello world\nfoo bar\nHello again\n").unwrap();
        std::fs::write(r.join("bin.dat"), b"hello\0binary\n").unwrap();
        std::fs::write(
            r.join("src/main.rs"),
            "fn main() {\n    println!(\"hello\");\n}\n",
        )
        .unwrap();
        std::fs::write(r.join("src/lib.rs"), "pub fn foo() {}\n").unwrap();
        std::fs::write(r.join("src/.hidden"), "hello hidden\n").unwrap();
        std::os::unix::fs::symlink("../outside", r.join("link")).unwrap();
        std::os::unix::fs::symlink("../../outside/secret.txt", r.join("src/flink")).unwrap();
        top
    }

    /// Runs `tool` with `args` in `cwd` below `root` until `deadline`: its
    /// status (or refusal) and its output.
    pub(crate) fn run_until(
        tool: Tool,
        root: &Path,
        cwd: &str,
        args: &[&str],
        deadline: Instant,
    ) -> (Result<i32, Refusal>, String) {
        let handle = Root::open(root).unwrap();
        let shown = args.join(" ");
        let env = Env {
            tree: &handle,
            root_path: root,
            cwd: locate(cwd, false).unwrap(),
            allow_escape: false,
            deadline,
            repo: None,
            shown: &shown,
            copied: &crate::commands::builtin::Copied::default(),
        };
        let mut quiet = Quiet;
        let mut out = Out::new(Output::new(1, &mut quiet, 1 << 20));
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let status = tool(&args, &env, &mut out);
        (status, out.finish())
    }

    pub(crate) fn run_in(
        tool: Tool,
        root: &Path,
        cwd: &str,
        args: &[&str],
    ) -> (Result<i32, Refusal>, String) {
        let deadline = Instant::now() + Duration::from_secs(600);
        run_until(tool, root, cwd, args, deadline)
    }

    /// Runs in the root; the tool must not refuse nor print the secret.
    pub(crate) fn run(tool: Tool, top: &tempfile::TempDir, args: &[&str]) -> (i32, String) {
        let (status, text) = run_in(tool, &top.path().join("root"), ".", args);
        let status = status.unwrap_or_else(|e| panic!("{args:?} refused: {}", e.message()));
        assert!(
            !text.contains(SECRET),
            "{args:?} printed the secret:\n{text}"
        );
        (status, text)
    }

    /// Runs in the root; the tool must refuse, without printing the secret.
    pub(crate) fn refused(tool: Tool, top: &tempfile::TempDir, args: &[&str]) -> Refusal {
        let (status, text) = run_in(tool, &top.path().join("root"), ".", args);
        assert!(
            !text.contains(SECRET),
            "{args:?} printed the secret:\n{text}"
        );
        match status {
            Err(e) => e,
            Ok(code) => panic!("{args:?} was not refused (status {code}):\n{text}"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::testing::{SECRET, Tool, refused, run, run_in, run_until, scratch};
    use super::{basic_to_extended, find, grep, tree};
    use crate::error_type::ErrorType;

    fn lines(text: &str) -> Vec<&str> {
        text.lines().collect()
    }

    #[test]
    fn grep_rn_walks_in_name_order_and_skips_git_and_links() {
        let top = scratch();
        let (status, text) = run(grep, &top, &["-rn", "hello"]);
        assert_eq!(status, 0);
        assert_eq!(
            lines(&text),
            [
                "a.txt:1:hello world",
                "Binary file bin.dat matches",
                "src/.hidden:1:hello hidden",
                "src/main.rs:2:    println!(\"hello\");",
            ]
        );
        let (status, text) = run(grep, &top, &["-R", "hello", "."]);
        assert_eq!(status, 0);
        assert!(text.contains("./a.txt:hello world\n"), "{text}");
        assert!(!text.contains(".git"), "{text}");
        // What is only behind links is never found.
        assert_eq!(run(grep, &top, &["-r", SECRET]), (1, String::new()));
        assert_eq!(run(grep, &top, &["-rl", "hello", "link/.."]).0, 0);
    }

    #[test]
    fn grep_r_is_depth_first_in_name_order() {
        let top = scratch();
        let r = top.path().join("root/o");
        std::fs::create_dir_all(r.join("b")).unwrap();
        std::fs::write(r.join("a.txt"), "x\n").unwrap();
        std::fs::write(r.join("b/in.txt"), "x\n").unwrap();
        std::fs::write(r.join("c.txt"), "x\n").unwrap();
        assert_eq!(
            run(grep, &top, &["-rl", "x", "o"]),
            (0, "o/a.txt\no/b/in.txt\no/c.txt\n".into())
        );
    }

    #[test]
    fn grep_one_file_case_count_invert() {
        let top = scratch();
        assert_eq!(
            run(grep, &top, &["hello", "a.txt"]),
            (0, "hello world\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-i", "HELLO", "a.txt"]),
            (0, "hello world\nHello again\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-ci", "hello", "a.txt"]),
            (0, "2\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-c", "hello", "a.txt", "src/lib.rs"]),
            (0, "a.txt:1\nsrc/lib.rs:0\n".into())
        );
        assert_eq!(run(grep, &top, &["nothing", "a.txt"]), (1, String::new()));
        assert_eq!(
            run(grep, &top, &["-n", "-v", "hello", "a.txt"]),
            (0, "2:foo bar\n3:Hello again\n".into())
        );
    }

    #[test]
    fn grep_regex_kinds() {
        let top = scratch();
        let both = (0, "foo bar\nHello again\n".to_owned());
        assert_eq!(run(grep, &top, &["-E", "foo|again", "a.txt"]), both);
        assert_eq!(run(grep, &top, &["foo\\|again", "a.txt"]), both);
        assert_eq!(
            run(grep, &top, &["-e", "foo", "-e", "again", "a.txt"]),
            both
        );
        // Basic syntax: `|` alone is a literal.
        assert_eq!(run(grep, &top, &["foo|again", "a.txt"]).0, 1);
        assert_eq!(run(grep, &top, &["-F", "o.b", "a.txt"]).0, 1);
        assert_eq!(run(grep, &top, &["o.b", "a.txt"]), (0, "foo bar\n".into()));
        assert_eq!(
            run(grep, &top, &["-w", "foo", "a.txt"]),
            (0, "foo bar\n".into())
        );
        assert_eq!(run(grep, &top, &["-w", "fo", "a.txt"]).0, 1);
        assert_eq!(run(grep, &top, &["-x", "foo bar", "a.txt"]).0, 0);
        assert_eq!(run(grep, &top, &["--line-regexp", "foo", "a.txt"]).0, 1);
        assert_eq!(
            run(grep, &top, &["-on", "[a-z]*o[a-z]*", "a.txt"]),
            (0, "1:hello\n1:world\n2:foo\n3:ello\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-ov", "foo", "a.txt"]),
            (0, String::new())
        );
        let e = refused(grep, &top, &["a\\(", "a.txt"]);
        assert_eq!(e.error_type(), ErrorType::CommandNotAllowed);
        assert_eq!(basic_to_extended("a\\{2\\}x+\\.y"), "a{2}x\\+\\.y");
    }

    #[test]
    fn grep_listing_quiet_max_and_names() {
        let top = scratch();
        assert_eq!(
            run(grep, &top, &["-rl", "hello", "src"]),
            (0, "src/.hidden\nsrc/main.rs\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-rL", "hello", "src"]),
            (0, "src/lib.rs\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-q", "hello", "a.txt"]),
            (0, String::new())
        );
        assert_eq!(run(grep, &top, &["-q", "zzz", "a.txt"]), (1, String::new()));
        assert_eq!(
            run(grep, &top, &["-m", "1", "-i", "hello", "a.txt"]),
            (0, "hello world\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-m1", "-c", "-i", "hello", "a.txt"]),
            (0, "1\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-H", "foo", "a.txt"]),
            (0, "a.txt:foo bar\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-h", "hello", "a.txt", "src/main.rs"]),
            (0, "hello world\n    println!(\"hello\");\n".into())
        );
        for color in ["--color=never", "--color", "--colour=auto"] {
            assert_eq!(
                run(grep, &top, &[color, "hello", "a.txt", "src/main.rs"]),
                (
                    0,
                    "a.txt:hello world\nsrc/main.rs:    println!(\"hello\");\n".into()
                ),
                "{color}"
            );
        }
        // Binary files: said once, skipped with -I, counted with -c.
        assert_eq!(
            run(grep, &top, &["binary", "bin.dat"]),
            (0, "Binary file bin.dat matches\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-I", "binary", "bin.dat"]),
            (1, String::new())
        );
        assert_eq!(
            run(grep, &top, &["-c", "binary", "bin.dat"]),
            (0, "1\n".into())
        );
    }

    #[test]
    fn grep_globs() {
        let top = scratch();
        assert_eq!(
            run(grep, &top, &["-r", "--include=*.rs", "hello", "."]),
            (0, "./src/main.rs:    println!(\"hello\");\n".into())
        );
        assert_eq!(
            run(
                grep,
                &top,
                &["-rl", "--exclude=*.rs", "--exclude-dir", "src", "hello"]
            ),
            (0, "a.txt\nbin.dat\n".into())
        );
    }

    #[test]
    fn grep_context() {
        let top = scratch();
        assert_eq!(
            run(grep, &top, &["-n", "-A", "1", "foo", "a.txt"]),
            (0, "2:foo bar\n3-Hello again\n".into())
        );
        assert_eq!(
            run(grep, &top, &["-C1", "again", "a.txt", "src/lib.rs"]),
            (0, "a.txt-foo bar\na.txt:Hello again\n".into())
        );
        let (status, text) = run(
            grep,
            &top,
            &["-B", "1", "-e", "hello", "-e", "}", "a.txt", "src/main.rs"],
        );
        assert_eq!(status, 0);
        assert_eq!(
            lines(&text),
            [
                "a.txt:hello world",
                "--",
                "src/main.rs-fn main() {",
                "src/main.rs:    println!(\"hello\");",
                "src/main.rs:}",
            ]
        );
        std::fs::write(top.path().join("root/n.txt"), "a\nx\nb\nc\nd\nx\ne\n").unwrap();
        assert_eq!(
            run(grep, &top, &["-n", "--context=1", "x", "n.txt"]),
            (0, "1-a\n2:x\n3-b\n--\n5-d\n6:x\n7-e\n".into())
        );
        // The trailing context of the last match counted by -m.
        assert_eq!(
            run(grep, &top, &["-m1", "-A1", "x", "n.txt"]),
            (0, "x\nb\n".into())
        );
    }

    #[test]
    fn grep_errors_are_gnu_style() {
        let top = scratch();
        assert_eq!(
            run(grep, &top, &["x", "missing"]),
            (2, "grep: missing: No such file or directory\n".into())
        );
        assert_eq!(run(grep, &top, &["-s", "x", "missing"]), (2, String::new()));
        assert_eq!(
            run(grep, &top, &["hello", "src", "a.txt"]),
            (2, "grep: src: Is a directory\na.txt:hello world\n".into())
        );
        assert_eq!(run(grep, &top, &["-q", "hello", "missing", "a.txt"]).0, 0);
        // Standard input is empty.
        assert_eq!(run(grep, &top, &["hello"]), (1, String::new()));
        assert_eq!(run(grep, &top, &["hello", "-"]), (1, String::new()));
        assert_eq!(run(grep, &top, &[]), (2, "grep: no pattern given\n".into()));
    }

    #[test]
    fn grep_refuses_escapes_links_and_unknown_flags() {
        let top = scratch();
        for args in [
            &["hello", "../outside/secret.txt"][..],
            &["-r", "hello", ".."],
            &["-r", "hello", "src/../../outside"],
        ] {
            assert_eq!(
                refused(grep, &top, args).error_type(),
                ErrorType::PathEscape,
                "{args:?}"
            );
        }
        for args in [
            &["hello", "link/secret.txt"][..],
            &["-r", "hello", "link"],
            &["hello", "src/flink"],
            &["-r", "hello", "link/sub"],
        ] {
            assert_eq!(
                refused(grep, &top, args).error_type(),
                ErrorType::SymlinkNotAllowed,
                "{args:?}"
            );
        }
        for (args, flag) in [
            (&["-P", "x", "a.txt"][..], "`-P`"),
            (&["-rnz", "x"], "`-z`"),
            (&["-f", "a.txt", "a.txt"], "`-f`"),
            (&["--file=a.txt", "a.txt"], "`--file`"),
            (&["--binary-files=text", "x"], "`--binary-files`"),
            (&["--devices=read", "x"], "`--devices`"),
            (&["--color=always", "x", "a.txt"], "`--color`"),
        ] {
            let e = refused(grep, &top, args);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{args:?}");
            assert!(e.message().contains(flag), "{args:?}: {}", e.message());
        }
    }

    #[test]
    fn grep_resolves_against_the_working_directory() {
        let top = scratch();
        let root = top.path().join("root");
        let (status, text) = run_in(grep, &root, "src", &["-n", "hello", "main.rs"]);
        assert_eq!(
            (status.unwrap(), text.as_str()),
            (0, "2:    println!(\"hello\");\n")
        );
        let (status, text) = run_in(grep, &root, "src", &["foo", "../a.txt"]);
        assert_eq!((status.unwrap(), text.as_str()), (0, "foo bar\n"));
        let (status, _) = run_in(grep, &root, "src", &["x", "../../outside/secret.txt"]);
        assert_eq!(status.unwrap_err().error_type(), ErrorType::PathEscape);
    }

    #[test]
    fn find_lists_in_name_order_and_never_follows_links() {
        let top = scratch();
        let (status, text) = run(find, &top, &[]);
        assert_eq!(status, 0);
        assert_eq!(
            lines(&text),
            [
                ".",
                "./.git",
                "./.git/config",
                "./a.txt",
                "./bin.dat",
                "./link",
                "./src",
                "./src/.hidden",
                "./src/flink",
                "./src/lib.rs",
                "./src/main.rs",
            ]
        );
        assert_eq!(
            run(find, &top, &[".", "-type", "l"]),
            (0, "./link\n./src/flink\n".into())
        );
        // A link as the starting point is listed, not followed.
        assert_eq!(
            run(find, &top, &["link", "-name", "*.rs"]),
            (0, String::new())
        );
        assert_eq!(run(find, &top, &["link"]), (0, "link\n".into()));
    }

    #[test]
    fn find_tests_and_depths() {
        let top = scratch();
        assert_eq!(
            run(find, &top, &[".", "-name", "*.rs"]),
            (0, "./src/lib.rs\n./src/main.rs\n".into())
        );
        assert_eq!(
            run(find, &top, &["src/", "-iname", "*.RS", "-type", "f"]),
            (0, "src/lib.rs\nsrc/main.rs\n".into())
        );
        assert_eq!(
            run(find, &top, &["-type", "d"]),
            (0, ".\n./.git\n./src\n".into())
        );
        assert_eq!(
            run(find, &top, &["-path", "./src/*", "!", "-name", "*.rs"]),
            (0, "./src/.hidden\n./src/flink\n".into())
        );
        assert_eq!(
            run(
                find,
                &top,
                &[".", "-maxdepth", "1", "-not", "-name", ".*", "-type", "f"]
            ),
            (0, "./a.txt\n./bin.dat\n".into())
        );
        assert_eq!(
            run(
                find,
                &top,
                &[".", "-mindepth", "2", "-maxdepth", "2", "-name", "*i*"]
            ),
            (
                0,
                "./.git/config\n./src/.hidden\n./src/flink\n./src/lib.rs\n./src/main.rs\n".into()
            )
        );
        assert_eq!(
            run(find, &top, &["src", "-maxdepth", "0"]),
            (0, "src\n".into())
        );
        assert_eq!(
            run(find, &top, &["a.txt", "src/lib.rs", "-print"]),
            (0, "a.txt\nsrc/lib.rs\n".into())
        );
        std::fs::create_dir(top.path().join("root/src/e")).unwrap();
        std::fs::write(top.path().join("root/src/e0"), "").unwrap();
        assert_eq!(
            run(find, &top, &["src", "-empty"]),
            (0, "src/e\nsrc/e0\n".into())
        );
        assert_eq!(
            run(find, &top, &["nope", "a.txt"]),
            (1, "find: nope: No such file or directory\na.txt\n".into())
        );
    }

    #[test]
    fn find_refuses() {
        let top = scratch();
        for flag in [
            "-o",
            "-or",
            "-exec",
            "-execdir",
            "-delete",
            "-fprint",
            "-follow",
            "-files0-from",
            "-newer",
            "-prune",
            "(",
        ] {
            let e = refused(find, &top, &[".", "-name", "a", flag, "x"]);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{flag}");
            assert!(
                e.message().contains(&format!("`{flag}`")),
                "{flag}: {}",
                e.message()
            );
        }
        for flag in ["-L", "-H"] {
            let e = refused(find, &top, &[flag, "."]);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{flag}");
        }
        let e = refused(find, &top, &[".", "-type", "p"]);
        assert_eq!(e.error_type(), ErrorType::CommandNotAllowed);
        let e = refused(find, &top, &[".", "-name"]);
        assert_eq!(e.error_type(), ErrorType::CommandNotAllowed);
        assert_eq!(
            refused(find, &top, &["../outside"]).error_type(),
            ErrorType::PathEscape
        );
        assert_eq!(
            refused(find, &top, &["/"]).error_type(),
            ErrorType::PathEscape
        );
        assert_eq!(
            refused(find, &top, &["link/sub"]).error_type(),
            ErrorType::SymlinkNotAllowed
        );
    }

    #[test]
    fn tree_draws_and_counts() {
        let top = scratch();
        let (status, text) = run(tree, &top, &[]);
        assert_eq!(status, 0);
        assert_eq!(
            text,
            ".\n\
             ├── a.txt\n\
             ├── bin.dat\n\
             ├── link -> ../outside\n\
             └── src\n    \
                 ├── flink -> ../../outside/secret.txt\n    \
                 ├── lib.rs\n    \
                 └── main.rs\n\
             \n\
             1 directory, 6 files\n"
        );
        let (_, text) = run(tree, &top, &["-a", "src"]);
        assert_eq!(
            text,
            "src\n├── .hidden\n├── flink -> ../../outside/secret.txt\n├── lib.rs\n└── main.rs\n\n0 directories, 4 files\n"
        );
        let (_, text) = run(tree, &top, &["-a", "-d"]);
        assert_eq!(text, ".\n├── .git\n└── src\n\n2 directories\n");
        let (_, text) = run(tree, &top, &["-L", "1", "--noreport"]);
        assert_eq!(
            text,
            ".\n├── a.txt\n├── bin.dat\n├── link -> ../outside\n└── src\n"
        );
        let (_, text) = run(tree, &top, &["-I", "*.rs|*.dat", "-L1", "."]);
        assert_eq!(
            text,
            ".\n├── a.txt\n├── link -> ../outside\n└── src\n\n1 directory, 2 files\n"
        );
        std::fs::create_dir_all(top.path().join("root/src/d/e")).unwrap();
        let (_, text) = run(tree, &top, &["-d", "src"]);
        assert_eq!(text, "src\n└── d\n    └── e\n\n2 directories\n");
        let (status, text) = run(tree, &top, &["nope"]);
        assert_eq!(status, 2);
        assert!(
            text.starts_with("tree: nope: No such file or directory\n"),
            "{text}"
        );
        // A link named as the directory is not followed.
        let (status, text) = run(tree, &top, &["link"]);
        assert_eq!(status, 2);
        assert!(!text.contains("secret.txt"), "{text}");
    }

    #[test]
    fn tree_refuses() {
        let top = scratch();
        for (flag, shown) in [
            ("-f", "`-f`"),
            ("--fromfile", "`--fromfile`"),
            ("-l", "`-l`"),
            ("-o", "`-o`"),
        ] {
            let e = refused(tree, &top, &[flag]);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{flag}");
            assert!(e.message().contains(shown), "{flag}: {}", e.message());
        }
        assert_eq!(
            refused(tree, &top, &[".."]).error_type(),
            ErrorType::PathEscape
        );
        assert_eq!(
            refused(tree, &top, &["link/sub"]).error_type(),
            ErrorType::SymlinkNotAllowed
        );
    }

    #[test]
    fn every_tool_stops_at_its_deadline() {
        let top = scratch();
        let root = top.path().join("root");
        let past = std::time::Instant::now();
        let diff: Tool = super::super::diff::diff;
        for (tool, args) in [
            (grep as Tool, &["-r", "hello"][..]),
            (grep, &["hello", "a.txt"]),
            (find, &["."]),
            (tree, &[]),
            (diff, &["-r", "src", "."]),
            (diff, &["a.txt", "src/lib.rs"]),
        ] {
            let (status, _) = run_until(tool, &root, ".", args, past);
            assert_eq!(
                status.unwrap_err().error_type(),
                ErrorType::ExecTimeout,
                "{args:?}"
            );
        }
    }
}
