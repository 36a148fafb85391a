//! Built-in `git` (PROTOCOL §6): the read commands `status diff log show
//! branch ls-files stash`, carried out with libgit2 on the run's one
//! repository ([`Env::repo`]), found once before any task.
//!
//! Nothing here runs a program: libgit2 has no external diff driver,
//! textconv, pager, hook or file system monitor, and registers no filter
//! program, whatever the repository's configuration or attributes say. Only
//! the flags below are accepted; any other (global options such as `-c`,
//! `--git-dir`, `--exec-path` included) is `command_not_allowed` naming it.
//! Every path operand goes through [`Env::read_path`] and must stay in the
//! root; without one, `status`, `diff` and `ls-files` look at the root only
//! (the work tree may be larger). Nothing is written: branch creation and
//! stash `push`/`pop`/`apply`/`drop` are refused.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use git2::{
    BranchType, Commit, Delta, Diff, DiffFormat, DiffLineType, DiffOptions, DiffStatsFormat,
    ObjectType, Oid, Pathspec, PathspecFlags, Repository, Sort, Status, StatusOptions, Tree,
};

use super::args::Arg;
use super::git_format::{
    FileStat, git_date, git_header, numstat_text, quoted, rename_name, similarity_index, stat_text,
};
use super::{Env, Flags, Out, Refusal};
use crate::engine::tree::FsError;
use crate::error_type::ErrorType;
use crate::syntax::Location;

/// git's exit status for a fatal error.
const FATAL: i32 = 128;

/// Why a subcommand stopped early.
enum Stop {
    /// A refusal about the document (a flag, a path): the task fails.
    Task(Refusal),
    /// git's own failure: `fatal: …` and exit status 128.
    Fatal(String),
}

impl From<Refusal> for Stop {
    fn from(e: Refusal) -> Self {
        Stop::Task(e)
    }
}

impl From<git2::Error> for Stop {
    fn from(e: git2::Error) -> Self {
        Stop::Fatal(e.message().to_owned())
    }
}

type Res = Result<i32, Stop>;

/// Writes to the command's output, which never fails.
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// A subcommand of the built-in git.
#[derive(Debug)]
pub(crate) struct Subcommand {
    pub(crate) name: &'static str,
    run: fn(&Git<'_>, &[String], &mut Out<'_>) -> Res,
}

/// The subcommands the built-in git runs, all of them reading only.
pub(crate) const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "status",
        run: |g, args, out| g.status(args, out),
    },
    Subcommand {
        name: "diff",
        run: |g, args, out| g.diff(args, out),
    },
    Subcommand {
        name: "log",
        run: |g, args, out| g.log(args, out),
    },
    Subcommand {
        name: "show",
        run: |g, args, out| g.show(args, out),
    },
    Subcommand {
        name: "branch",
        run: |g, args, out| g.branch(args, out),
    },
    Subcommand {
        name: "stash",
        run: |g, args, out| g.stash(args, out),
    },
    Subcommand {
        name: "ls-files",
        run: |g, args, out| g.ls_files(args, out),
    },
];

/// Runs `git ARGS` (`args` starts with the subcommand).
pub(crate) fn git(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let names = || {
        let names: Vec<&str> = SUBCOMMANDS.iter().map(|s| s.name).collect();
        names.join(" ")
    };
    let Some((sub, rest)) = args.split_first() else {
        return Err(refuse(
            env,
            &format!("`git` needs one of the subcommands {}", names()),
        ));
    };
    if sub.starts_with('-') {
        // Global options (`-c`, `-C`, `--git-dir`, `--work-tree`,
        // `--exec-path`, `-p`…) are never accepted.
        return Err(env.unsupported(sub));
    }
    let Some(subcommand) = SUBCOMMANDS.iter().find(|s| s.name == sub.as_str()) else {
        return Err(refuse(
            env,
            &format!(
                "`git {sub}` is not a built-in; the built-in git runs {}",
                names()
            ),
        ));
    };
    let result = match env.repo {
        None => Err(Stop::Fatal(
            "not a git repository (or any of the parent directories): .git".to_owned(),
        )),
        Some(repo) => Git::new(repo, env, rest.iter().any(|a| a == "--")).and_then(|g| {
            // The index on disk, not one a commit left in memory.
            repo.index()?.read(true)?;
            (subcommand.run)(&g, rest, out)
        }),
    };
    match result {
        Ok(code) => Ok(code),
        Err(Stop::Task(e)) => Err(e),
        Err(Stop::Fatal(message)) => {
            say!(out, "fatal: {message}");
            Ok(FATAL)
        }
    }
}

fn refuse(env: &Env<'_>, why: &str) -> Refusal {
    Refusal::new(
        ErrorType::CommandNotAllowed,
        format!("`{}`: {why}", env.shown),
    )
}

/// The run's repository and where the root and the working directory lie
/// in its work tree.
struct Git<'a> {
    repo: &'a Repository,
    env: &'a Env<'a>,
    /// The work tree, canonical.
    workdir: PathBuf,
    /// The root, canonical.
    root: PathBuf,
    /// The root, relative to the work tree (`[]` when they are the same).
    prefix: Vec<String>,
    /// The working directory, relative to the work tree.
    cwd: Vec<String>,
    /// Whether the command line has `--`: a bad revision is then only that.
    dashes: bool,
}

/// A branch against its upstream: the upstream's short name, commits
/// ahead and behind; or an upstream that no longer exists.
enum Tracking {
    At(String, usize, usize),
    Gone(String),
}

/// What a diff shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Show {
    /// Not asked: the command's default.
    Unset,
    Patch,
    /// `--stat` and `-p` together: the stat, a blank line, the patch.
    StatPatch,
    Stat,
    ShortStat,
    NumStat,
    NameOnly,
    NameStatus,
    Nothing,
}

impl Show {
    /// This, or `default` when nothing was asked.
    fn or(self, default: Show) -> Show {
        if self == Show::Unset { default } else { self }
    }
}

impl<'a> Git<'a> {
    fn new(repo: &'a Repository, env: &'a Env<'a>, dashes: bool) -> Result<Self, Stop> {
        let workdir = repo
            .workdir()
            .ok_or_else(|| Stop::Fatal("this operation must be run in a work tree".to_owned()))?
            .canonicalize()
            .map_err(|e| Stop::Fatal(format!("cannot read the work tree: {e}")))?;
        let root = env
            .root_path
            .canonicalize()
            .map_err(|e| Stop::Fatal(format!("cannot read the root: {e}")))?;
        let mut g = Git {
            repo,
            env,
            workdir,
            root,
            prefix: Vec::new(),
            cwd: Vec::new(),
            dashes,
        };
        g.prefix = g.inside(&g.root.clone(), ".")?;
        g.cwd = g.in_tree(&env.cwd, ".")?;
        Ok(g)
    }

    /// `path` (absolute, canonical directories) relative to the work tree.
    fn inside(&self, path: &Path, shown: &str) -> Result<Vec<String>, Stop> {
        let rel = path.strip_prefix(&self.workdir).map_err(|_| {
            Stop::Fatal(format!(
                "{shown}: '{}' is outside repository at '{}'",
                path.display(),
                self.workdir.display()
            ))
        })?;
        Ok(rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect())
    }

    /// A location (relative to the root) relative to the work tree.
    fn in_tree(&self, at: &Location, shown: &str) -> Result<Vec<String>, Stop> {
        let text = at.display();
        let mut path = if text.starts_with('/') {
            PathBuf::from("/")
        } else {
            self.root.clone()
        };
        for c in Path::new(&text).components() {
            match c {
                Component::ParentDir => {
                    path.pop();
                }
                Component::Normal(n) => path.push(n),
                _ => {}
            }
        }
        self.inside(&path, shown)
    }

    /// The pathspec of a path operand, relative to the work tree; checked
    /// to stay in the root first.
    fn pathspec(&self, arg: &str) -> Result<String, Stop> {
        let at = self.env.read_path(arg)?;
        // As git itself: a pathspec beyond a symbolic link names nothing
        // the work tree tracks, and clada never looks through one.
        self.env
            .tree
            .check_no_links(&at)
            .map_err(|e| Stop::Task(e.into()))?;
        Ok(self.in_tree(&at, arg)?.join("/"))
    }

    /// Below the work tree's top, a file or tree of a revision may be shown
    /// only from below the root (`REV:sub/x` where the root is `sub`): the
    /// rest of the repository is outside the root.
    fn within_root(&self, rev: &str) -> Result<(), Stop> {
        if self.prefix.is_empty() {
            return Ok(());
        }
        let object = self.repo.revparse_single(rev).ok();
        let kind = object.as_ref().and_then(git2::Object::kind);
        if !matches!(kind, Some(ObjectType::Blob | ObjectType::Tree)) {
            return Ok(());
        }
        let inside = rev.split_once(':').is_some_and(|(_, path)| {
            let path = path.trim_start_matches('/');
            let root = self.prefix.join("/");
            path == root || path.starts_with(&format!("{root}/"))
        });
        if inside {
            return Ok(());
        }
        Err(Stop::Task(Refusal::new(
            ErrorType::PathEscape,
            format!(
                "`{}`: `{rev}` names a file or directory of the repository outside the root; \
                 name it as REV:{}/PATH",
                self.env.shown,
                self.prefix.join("/")
            ),
        )))
    }

    /// Checks an operand that is not a revision, given before `--`: like
    /// git, it must name something in the work tree (or be a pattern).
    fn existing_path(&self, arg: &str) -> Result<(), Stop> {
        let at = self.env.read_path(arg)?;
        if arg.contains(['*', '?', '[']) {
            return Ok(());
        }
        match self.env.tree.found(&at) {
            Ok(_) => Ok(()),
            Err(FsError::NotFound { .. }) => Err(unknown_rev(arg, false)),
            Err(e) => Err(Stop::Task(e.into())),
        }
    }

    /// The pathspecs of operands, or the root when there are none. An empty
    /// list means the whole work tree.
    fn pathspecs(&self, args: &[String], default: &[String]) -> Result<Vec<String>, Stop> {
        let mut specs = Vec::new();
        for a in args {
            specs.push(self.pathspec(a)?);
        }
        if args.is_empty() {
            specs.push(default.join("/"));
        }
        if specs.iter().any(String::is_empty) {
            specs.clear();
        }
        Ok(specs)
    }

    /// A work-tree path as seen from the working directory.
    /// A directory (`dir/`) keeps its final `/`: `./` for the working
    /// directory itself. Unquoted: the caller quotes it as git does
    /// ([`quoted`]), which keeps a name with a line feed on one line.
    fn relative(&self, path: &str) -> String {
        let (body, dir) = match path.strip_suffix('/') {
            Some(body) => (body, true),
            None => (path, false),
        };
        let parts: Vec<&str> = body.split('/').filter(|p| !p.is_empty()).collect();
        let common = self
            .cwd
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a.as_str() == **b)
            .count();
        let mut s = "../".repeat(self.cwd.len() - common);
        s.push_str(&parts[common..].join("/"));
        if s.is_empty() {
            s.push('.');
        }
        if dir && !s.ends_with('/') {
            s.push('/');
        }
        s
    }

    fn in_time(&self) -> Result<(), Stop> {
        Ok(self.env.in_time()?)
    }

    fn tree_of(&self, rev: &str) -> Result<Tree<'a>, Stop> {
        let obj = self
            .repo
            .revparse_single(rev)
            .map_err(|_| unknown_rev(rev, self.dashes))?;
        Ok(obj.peel_to_tree()?)
    }

    fn commit_of(&self, rev: &str) -> Result<Commit<'a>, Stop> {
        let obj = self
            .repo
            .revparse_single(rev)
            .map_err(|_| unknown_rev(rev, self.dashes))?;
        Ok(obj.peel_to_commit()?)
    }

    /// `HEAD`'s tree, or `None` before the first commit.
    fn head_tree(&self) -> Result<Option<Tree<'a>>, Stop> {
        match self.repo.head() {
            Ok(head) => Ok(Some(head.peel_to_tree()?)),
            Err(e) if is_unborn(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The current branch's name, or `None` when `HEAD` is detached.
    fn branch_name(&self) -> Result<Option<String>, Stop> {
        let head = self.repo.find_reference("HEAD")?;
        Ok(head.symbolic_target_bytes().map(|t| {
            let t = String::from_utf8_lossy(t);
            t.strip_prefix("refs/heads/").unwrap_or(&t).to_owned()
        }))
    }

    /// Where branch `name` stands against its upstream, if it has one.
    fn tracking(&self, name: &str) -> Option<Tracking> {
        let upstream = self
            .repo
            .branch_upstream_name(&format!("refs/heads/{name}"))
            .ok()?;
        let upstream = String::from_utf8_lossy(&upstream).into_owned();
        let shown = upstream
            .strip_prefix("refs/remotes/")
            .or_else(|| upstream.strip_prefix("refs/heads/"))
            .unwrap_or(&upstream)
            .to_owned();
        let local = self
            .repo
            .find_branch(name, BranchType::Local)
            .ok()?
            .get()
            .target()?;
        let Some(remote) = self
            .repo
            .find_reference(&upstream)
            .ok()
            .and_then(|r| r.resolve().ok())
            .and_then(|r| r.target())
        else {
            return Some(Tracking::Gone(shown));
        };
        let (ahead, behind) = self.repo.graph_ahead_behind(local, remote).ok()?;
        Some(Tracking::At(shown, ahead, behind))
    }

    fn unborn(&self) -> bool {
        matches!(self.repo.head(), Err(e) if is_unborn(&e))
    }

    // ----- status -----

    fn status(&self, args: &[String], out: &mut Out<'_>) -> Res {
        #[derive(PartialEq)]
        enum Format {
            Long,
            Short,
            Porcelain,
        }
        let mut format = Format::Long;
        let mut branch = false;
        let mut untracked = "normal".to_owned();
        let (before, mut paths) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let mut operands = Vec::new();
        while let Some(name) = next_flag(&mut flags, &mut operands)? {
            match name.as_str() {
                "-s" | "--short" => format = Format::Short,
                "--porcelain" => {
                    format = Format::Porcelain;
                    if let Some(v) = flags.optional_value().filter(|v| v != "v1") {
                        return Err(flags.invalid(&v).into());
                    }
                }
                "--long" => format = Format::Long,
                "-b" | "--branch" => branch = true,
                "-u" | "--untracked-files" => {
                    untracked = flags.optional_value().unwrap_or_else(|| "all".to_owned());
                    if !matches!(untracked.as_str(), "no" | "normal" | "all") {
                        return Err(flags.invalid(&untracked).into());
                    }
                }
                "--no-color" => {}
                "--color" => never_color(&mut flags)?,
                _ => return Err(flags.refuse().into()),
            }
        }
        operands.append(&mut paths);
        let paths = operands;
        let specs = self.pathspecs(&paths, &self.prefix)?;
        let mut opts = StatusOptions::new();
        opts.include_untracked(untracked != "no")
            .recurse_untracked_dirs(untracked == "all")
            .include_ignored(false)
            .renames_head_to_index(true);
        for s in &specs {
            opts.pathspec(s);
        }
        let statuses = self.repo.statuses(Some(&mut opts))?;
        self.in_time()?;
        // Quoted as git quotes short status's names: a space too.
        let shown = |p: &str| match format {
            Format::Porcelain => quoted(p, true),
            _ => quoted(&self.relative(p), true),
        };
        let name = self.branch_name()?;
        if format != Format::Long {
            if branch {
                let line = match (&name, self.unborn()) {
                    (Some(n), true) => format!("## No commits yet on {n}"),
                    (Some(n), false) => match self.tracking(n) {
                        None => format!("## {n}"),
                        Some(Tracking::Gone(up)) => format!("## {n}...{up} [gone]"),
                        Some(Tracking::At(up, 0, 0)) => format!("## {n}...{up}"),
                        Some(Tracking::At(up, a, 0)) => format!("## {n}...{up} [ahead {a}]"),
                        Some(Tracking::At(up, 0, b)) => format!("## {n}...{up} [behind {b}]"),
                        Some(Tracking::At(up, a, b)) => {
                            format!("## {n}...{up} [ahead {a}, behind {b}]")
                        }
                    },
                    (None, _) => "## HEAD (no branch)".to_owned(),
                };
                say!(out, "{line}");
            }
            let mut untracked_lines = Vec::new();
            for e in statuses.iter() {
                let st = e.status();
                let path = String::from_utf8_lossy(e.path_bytes()).into_owned();
                if st.contains(Status::WT_NEW) {
                    untracked_lines.push(format!("?? {}", shown(&path)));
                    continue;
                }
                if st.contains(Status::CONFLICTED) {
                    say!(out, "UU {}", shown(&path));
                    continue;
                }
                let x = index_code(st);
                let y = worktree_code(st);
                if x == ' ' && y == ' ' {
                    continue;
                }
                let renamed = e.head_to_index().and_then(|d| {
                    (d.status() == Delta::Renamed).then(|| {
                        (
                            path_of(d.old_file().path_bytes().unwrap_or_default()),
                            path_of(d.new_file().path_bytes().unwrap_or_default()),
                        )
                    })
                });
                match renamed {
                    Some((from, to)) => say!(out, "{x}{y} {} -> {}", shown(&from), shown(&to)),
                    None => say!(out, "{x}{y} {}", shown(&path)),
                }
            }
            for l in untracked_lines {
                say!(out, "{l}");
            }
            return Ok(0);
        }

        match &name {
            Some(n) => {
                say!(out, "On branch {n}");
                let plural = |k: usize| if k == 1 { "" } else { "s" };
                let line = match self.tracking(n) {
                    None => None,
                    Some(Tracking::Gone(up)) => Some(format!(
                        "Your branch is based on '{up}', but the upstream is gone."
                    )),
                    Some(Tracking::At(up, 0, 0)) => {
                        Some(format!("Your branch is up to date with '{up}'."))
                    }
                    Some(Tracking::At(up, a, 0)) => Some(format!(
                        "Your branch is ahead of '{up}' by {a} commit{}.",
                        plural(a)
                    )),
                    Some(Tracking::At(up, 0, b)) => Some(format!(
                        "Your branch is behind '{up}' by {b} commit{}, and can be fast-forwarded.",
                        plural(b)
                    )),
                    Some(Tracking::At(up, a, b)) => Some(format!(
                        "Your branch and '{up}' have diverged,\nand have {a} and {b} different commits each, respectively."
                    )),
                };
                if let Some(line) = line {
                    say!(out, "{line}\n");
                }
            }
            None => {
                let at = self
                    .repo
                    .head()
                    .ok()
                    .and_then(|h| h.peel_to_commit().ok())
                    .map(|c| short(&c))
                    .unwrap_or_default();
                say!(out, "HEAD detached at {at}");
            }
        }
        if self.unborn() {
            say!(out, "\nNo commits yet\n");
        }
        let shown = |p: &str| quoted(&self.relative(p), false);
        let mut staged = Vec::new();
        let mut unstaged = Vec::new();
        let mut unmerged = Vec::new();
        let mut new = Vec::new();
        for e in statuses.iter() {
            let st = e.status();
            let path = path_of(e.path_bytes());
            if st.contains(Status::CONFLICTED) {
                unmerged.push(format!("\t{:<12}{}", "both modified:", shown(&path)));
                continue;
            }
            if st.contains(Status::WT_NEW) {
                new.push(format!("\t{}", shown(&path)));
                continue;
            }
            let label = if st.contains(Status::INDEX_NEW) {
                Some("new file:")
            } else if st.contains(Status::INDEX_MODIFIED) {
                Some("modified:")
            } else if st.contains(Status::INDEX_DELETED) {
                Some("deleted:")
            } else if st.contains(Status::INDEX_RENAMED) {
                Some("renamed:")
            } else if st.contains(Status::INDEX_TYPECHANGE) {
                Some("typechange:")
            } else {
                None
            };
            if let Some(label) = label {
                let what = match e.head_to_index() {
                    Some(d) if d.status() == Delta::Renamed => format!(
                        "{} -> {}",
                        shown(&path_of(d.old_file().path_bytes().unwrap_or_default())),
                        shown(&path_of(d.new_file().path_bytes().unwrap_or_default()))
                    ),
                    _ => shown(&path),
                };
                staged.push(format!("\t{label:<12}{what}"));
            }
            let label = if st.contains(Status::WT_MODIFIED) {
                Some("modified:")
            } else if st.contains(Status::WT_DELETED) {
                Some("deleted:")
            } else if st.contains(Status::WT_TYPECHANGE) {
                Some("typechange:")
            } else if st.contains(Status::WT_RENAMED) {
                Some("renamed:")
            } else {
                None
            };
            if let Some(label) = label {
                unstaged.push(format!("\t{label:<12}{}", shown(&path)));
            }
        }
        for (title, lines) in [
            ("Unmerged paths:", &unmerged),
            ("Changes to be committed:", &staged),
            ("Changes not staged for commit:", &unstaged),
            ("Untracked files:", &new),
        ] {
            if !lines.is_empty() {
                say!(out, "{title}");
                for l in lines {
                    say!(out, "{l}");
                }
                say!(out, "");
            }
        }
        // git's closing line, with its hints turned off.
        if !staged.is_empty() {
            if untracked == "no" {
                say!(out, "Untracked files not listed");
            }
        } else {
            let last = if !unstaged.is_empty() || !unmerged.is_empty() {
                "no changes added to commit"
            } else if !new.is_empty() {
                "nothing added to commit but untracked files present"
            } else if self.unborn() || untracked == "no" {
                "nothing to commit"
            } else {
                "nothing to commit, working tree clean"
            };
            say!(out, "{last}");
        }
        Ok(0)
    }

    // ----- diff -----

    /// Reads a flag shared by the commands that print diffs; `false` when
    /// `a` is not one.
    fn diff_flag(
        &self,
        name: &str,
        flags: &mut Flags<'_, '_>,
        show: &mut Show,
        opts: &mut DiffOptions,
    ) -> Result<bool, Stop> {
        match name {
            "-p" | "-u" | "--patch" => {
                *show = match *show {
                    Show::Stat | Show::StatPatch => Show::StatPatch,
                    _ => Show::Patch,
                }
            }
            "--stat" => {
                *show = match *show {
                    Show::Patch | Show::StatPatch => Show::StatPatch,
                    _ => Show::Stat,
                }
            }
            "--shortstat" => *show = Show::ShortStat,
            "--numstat" => *show = Show::NumStat,
            "--name-only" => *show = Show::NameOnly,
            "--name-status" => *show = Show::NameStatus,
            "-s" | "--no-patch" => *show = Show::Nothing,
            "--no-color" | "--no-ext-diff" | "--no-textconv" => {}
            "--color" => never_color(flags)?,
            "-w" | "--ignore-all-space" => {
                opts.ignore_whitespace(true);
            }
            "-b" | "--ignore-space-change" => {
                opts.ignore_whitespace_change(true);
            }
            "-U" | "--unified" => {
                opts.context_lines(flags.number::<u32>()?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn diff(&self, args: &[String], out: &mut Out<'_>) -> Res {
        let mut show = Show::Unset;
        let mut opts = DiffOptions::new();
        let mut cached = false;
        let mut exit_code = false;
        let mut quiet = false;
        let mut renames = true;
        let (before, mut paths) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let mut operands = Vec::new();
        while let Some(name) = next_flag(&mut flags, &mut operands)? {
            if self.diff_flag(&name, &mut flags, &mut show, &mut opts)? {
                continue;
            }
            match name.as_str() {
                "--cached" | "--staged" => cached = true,
                "--exit-code" => exit_code = true,
                "--quiet" => {
                    quiet = true;
                    exit_code = true;
                }
                "--no-renames" => renames = false,
                "-M" | "--find-renames" => renames = true,
                _ => return Err(flags.refuse().into()),
            }
        }
        show = show.or(Show::Patch);
        // Operands before `--`: revisions while they name one, then paths.
        let mut revs: Vec<String> = Vec::new();
        for (i, o) in operands.iter().enumerate() {
            if !args.iter().any(|a| a == "--") && !is_revision(self.repo, o) {
                for p in &operands[i..] {
                    self.existing_path(p)?;
                }
                paths.extend(operands[i..].iter().cloned());
                break;
            }
            if let Some((a, b)) = o.split_once("...") {
                let a = self.commit_of(if a.is_empty() { "HEAD" } else { a })?;
                let b = if b.is_empty() { "HEAD" } else { b };
                let base = self.repo.merge_base(a.id(), self.commit_of(b)?.id())?;
                revs.push(base.to_string());
                revs.push(b.to_owned());
            } else if let Some((a, b)) = o.split_once("..") {
                revs.push(if a.is_empty() { "HEAD" } else { a }.to_owned());
                revs.push(if b.is_empty() { "HEAD" } else { b }.to_owned());
            } else {
                revs.push(o.clone());
            }
        }
        let specs = self.pathspecs(&paths, &self.prefix)?;
        for s in &specs {
            opts.pathspec(s);
        }
        let repo = self.repo;
        let mut diff = match (cached, revs.as_slice()) {
            (true, []) => {
                let head = self.head_tree()?;
                repo.diff_tree_to_index(head.as_ref(), None, Some(&mut opts))?
            }
            (true, [rev]) => {
                let tree = self.tree_of(rev)?;
                repo.diff_tree_to_index(Some(&tree), None, Some(&mut opts))?
            }
            (false, []) => repo.diff_index_to_workdir(None, Some(&mut opts))?,
            (false, [rev]) => {
                let tree = self.tree_of(rev)?;
                repo.diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))?
            }
            (false, [a, b]) => {
                let (a, b) = (self.tree_of(a)?, self.tree_of(b)?);
                repo.diff_tree_to_tree(Some(&a), Some(&b), Some(&mut opts))?
            }
            _ => {
                return Err(Stop::Fatal(
                    "usage: git diff [--cached] [<commit> [<commit>]] [-- <path>...]".to_owned(),
                ));
            }
        };
        if renames {
            diff.find_similar(None)?;
        }
        self.in_time()?;
        let changed = diff.deltas().len() > 0;
        if !quiet {
            self.print_diff(&diff, show, out)?;
        }
        Ok(if exit_code && changed { 1 } else { 0 })
    }

    /// Prints `diff` as `show` says.
    fn print_diff(&self, diff: &Diff<'_>, show: Show, out: &mut Out<'_>) -> Result<(), Stop> {
        match show {
            Show::Nothing => return Ok(()),
            // libgit2 words the summary line as git does.
            Show::ShortStat if diff.deltas().len() > 0 => {
                let _ = out.write_all(&diff.stats()?.to_buf(DiffStatsFormat::SHORT, 0)?);
                return Ok(());
            }
            // libgit2's own `--stat` and `--numstat` are not git's (a bar of
            // at least one `+` and one `-` for any change, no `...` for a
            // long name, `{a => b}` only around a common directory, numbers
            // padded with spaces where git puts tabs): the lines are ours.
            Show::Stat | Show::NumStat | Show::StatPatch => {
                let files = self.file_stats(diff)?;
                if !files.is_empty() {
                    if show == Show::NumStat {
                        let _ = out.write_all(numstat_text(&files).as_bytes());
                        return Ok(());
                    }
                    let _ = out.write_all(stat_text(&files, 80).as_bytes());
                    let _ = out.write_all(&diff.stats()?.to_buf(DiffStatsFormat::SHORT, 0)?);
                    if show == Show::StatPatch {
                        say!(out, "");
                    }
                }
                if show != Show::StatPatch {
                    return Ok(());
                }
            }
            Show::ShortStat => return Ok(()),
            _ => {}
        }
        if matches!(show, Show::NameOnly | Show::NameStatus) {
            for d in diff.deltas() {
                let old = path_of(d.old_file().path_bytes().unwrap_or_default());
                let new = path_of(d.new_file().path_bytes().unwrap_or_default());
                let path = if d.status() == Delta::Deleted {
                    old.clone()
                } else {
                    new.clone()
                };
                let (old, new, path) = (
                    quoted(&old, false),
                    quoted(&new, false),
                    quoted(&path, false),
                );
                if show == Show::NameOnly {
                    say!(out, "{path}");
                } else if matches!(d.status(), Delta::Renamed | Delta::Copied) {
                    let score = self
                        .similarity(d.old_file().id(), d.new_file().id())
                        .map(|n| format!("{n:03}"))
                        .unwrap_or_default();
                    say!(out, "{}{score}\t{old}\t{new}", delta_code(d.status()));
                } else {
                    say!(out, "{}\t{path}", delta_code(d.status()));
                }
            }
            return Ok(());
        }
        let mut late = false;
        let printed = diff.print(DiffFormat::Patch, |delta, _, line| {
            if self.env.in_time().is_err() {
                late = true;
                return false;
            }
            if line.origin_value() == DiffLineType::FileHeader {
                // git's score where both blobs are in the object database
                // (a work tree file is not: libgit2's stays).
                let score = match delta.status() {
                    Delta::Renamed | Delta::Copied => {
                        self.similarity(delta.old_file().id(), delta.new_file().id())
                    }
                    _ => None,
                };
                let _ = out.write_all(&git_header(line.content(), score));
                return true;
            }
            if matches!(line.origin(), '+' | '-' | ' ') {
                let _ = write!(out, "{}", line.origin());
            }
            let _ = out.write_all(line.content());
            true
        });
        if late {
            self.in_time()?;
        }
        printed?;
        Ok(())
    }

    /// How alike two blobs are, in percent, as git's `R087` says it; `None`
    /// when one is not in the object database (a work tree file).
    fn similarity(&self, old: Oid, new: Oid) -> Option<usize> {
        if old == new {
            return Some(100);
        }
        let (a, b) = (
            self.repo.find_blob(old).ok()?,
            self.repo.find_blob(new).ok()?,
        );
        Some(similarity_index(a.content(), b.content()))
    }

    /// Lines added and removed in each file of `diff`, as `--stat` counts
    /// them.
    fn file_stats(&self, diff: &Diff<'_>) -> Result<Vec<FileStat>, Stop> {
        let mut files = Vec::new();
        for i in 0..diff.deltas().len() {
            self.in_time()?;
            let patch = git2::Patch::from_diff(diff, i)?;
            let Some(delta) = diff.get_delta(i) else {
                continue;
            };
            let old = path_of(delta.old_file().path_bytes().unwrap_or_default());
            let new = path_of(delta.new_file().path_bytes().unwrap_or_default());
            let name = match delta.status() {
                Delta::Renamed | Delta::Copied if old != new => rename_name(&old, &new),
                Delta::Deleted => quoted(&old, false),
                _ => quoted(&new, false),
            };
            let binary = delta.flags().is_binary()
                || patch
                    .as_ref()
                    .is_some_and(|p| p.delta().flags().is_binary());
            let (added, deleted) = match &patch {
                _ if binary => (
                    usize::try_from(delta.new_file().size()).unwrap_or(usize::MAX),
                    usize::try_from(delta.old_file().size()).unwrap_or(usize::MAX),
                ),
                Some(p) => {
                    let (_, added, deleted) = p.line_stats()?;
                    (added, deleted)
                }
                None => (0, 0),
            };
            files.push(FileStat {
                name,
                added,
                deleted,
                binary,
            });
        }
        Ok(files)
    }

    /// The diff a commit brings, against its first parent (or nothing for
    /// a root commit).
    fn commit_diff(&self, commit: &Commit<'_>, opts: &mut DiffOptions) -> Result<Diff<'a>, Stop> {
        let tree = commit.tree()?;
        let parent = match commit.parent_count() {
            0 => None,
            _ => Some(commit.parent(0)?.tree()?),
        };
        let mut diff = self
            .repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(opts))?;
        diff.find_similar(None)?;
        Ok(diff)
    }

    /// A commit as `git log` shows it by default.
    fn print_header(&self, commit: &Commit<'_>, out: &mut Out<'_>) {
        say!(out, "commit {}", commit.id());
        if commit.parent_count() > 1 {
            let parents: Vec<String> = commit.parents().map(|p| short(&p)).collect();
            say!(out, "Merge: {}", parents.join(" "));
        }
        let author = commit.author();
        say!(
            out,
            "Author: {} <{}>",
            String::from_utf8_lossy(author.name_bytes()),
            String::from_utf8_lossy(author.email_bytes())
        );
        say!(out, "Date:   {}", git_date(author.when()));
        say!(out, "");
        let message = String::from_utf8_lossy(commit.message_bytes()).into_owned();
        for line in message.trim_end().lines() {
            say!(out, "    {line}");
        }
    }

    /// `abc1234 subject`, or with the full id for `--pretty=oneline`.
    fn oneline(commit: &Commit<'_>, full: bool, out: &mut Out<'_>) {
        let summary = commit
            .summary_bytes()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .unwrap_or_default();
        let id = if full {
            commit.id().to_string()
        } else {
            short(commit)
        };
        say!(out, "{id} {summary}");
    }

    // ----- log -----

    fn log(&self, args: &[String], out: &mut Out<'_>) -> Res {
        let mut show = Show::Unset;
        let mut opts = DiffOptions::new();
        let (mut oneline, mut full) = (false, false);
        let mut max: Option<usize> = None;
        let mut all = false;
        let (before, mut paths) = split_dashes(args);
        // `-N` is `-n N`.
        let mut flags = Flags::with_count(&before, self.env);
        let mut operands = Vec::new();
        while let Some(name) = next_flag(&mut flags, &mut operands)? {
            if self.diff_flag(&name, &mut flags, &mut show, &mut opts)? {
                continue;
            }
            match name.as_str() {
                "--oneline" => (oneline, full) = (true, false),
                "--pretty" | "--format" => match flags.optional_value() {
                    Some(v) if v == "oneline" => (oneline, full) = (true, true),
                    Some(v) if v == "medium" => oneline = false,
                    _ => return Err(flags.refuse().into()),
                },
                "--all" => all = true,
                "--no-decorate" => {}
                "-n" | "--max-count" => max = Some(flags.number()?),
                _ => return Err(flags.refuse().into()),
            }
        }
        show = show.or(Show::Nothing);
        let repo = self.repo;
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        let mut pushed = false;
        for (i, o) in operands.iter().enumerate() {
            if !args.iter().any(|a| a == "--") && !is_revision(repo, o) {
                for p in &operands[i..] {
                    self.existing_path(p)?;
                }
                paths.extend(operands[i..].iter().cloned());
                break;
            }
            if let Some((a, b)) = o.split_once("..") {
                let b = b.strip_prefix('.').unwrap_or(b);
                let a = self.commit_of(if a.is_empty() { "HEAD" } else { a })?;
                let b = self.commit_of(if b.is_empty() { "HEAD" } else { b })?;
                walk.push(b.id())?;
                walk.hide(a.id())?;
            } else if let Some(hidden) = o.strip_prefix('^') {
                walk.hide(self.commit_of(hidden)?.id())?;
                continue;
            } else {
                walk.push(self.commit_of(o)?.id())?;
            }
            pushed = true;
        }
        if all {
            let _ = walk.push_head();
            walk.push_glob("*")?;
            pushed = true;
        }
        if !pushed {
            if self.unborn() {
                let name = self.branch_name()?.unwrap_or_else(|| "HEAD".to_owned());
                return Err(Stop::Fatal(format!(
                    "your current branch '{name}' does not have any commits yet"
                )));
            }
            walk.push_head()?;
        }
        // Below the work tree's top, history is the root's own.
        let specs = self.pathspecs(&paths, &self.prefix)?;
        for s in &specs {
            opts.pathspec(s);
        }
        let mut shown = 0;
        for id in walk {
            if max.is_some_and(|m| shown >= m) {
                break;
            }
            self.in_time()?;
            let commit = repo.find_commit(id?)?;
            if !specs.is_empty() && !self.touches(&commit, &specs)? {
                continue;
            }
            if oneline {
                Self::oneline(&commit, full, out);
            } else {
                if shown > 0 {
                    say!(out, "");
                }
                self.print_header(&commit, out);
            }
            // Without `-m`, git shows no diff for a merge.
            if show != Show::Nothing && commit.parent_count() < 2 {
                let diff = self.commit_diff(&commit, &mut opts)?;
                if !oneline && diff.deltas().len() > 0 {
                    say!(out, "{}", separator(show));
                }
                self.print_diff(&diff, show, out)?;
            }
            shown += 1;
        }
        Ok(0)
    }

    /// Whether `commit` changes a path matching `specs` against every
    /// parent (so history simplification keeps it).
    fn touches(&self, commit: &Commit<'_>, specs: &[String]) -> Result<bool, Stop> {
        let mut opts = DiffOptions::new();
        for s in specs {
            opts.pathspec(s);
        }
        let tree = commit.tree()?;
        if commit.parent_count() == 0 {
            let diff = self
                .repo
                .diff_tree_to_tree(None, Some(&tree), Some(&mut opts))?;
            return Ok(diff.deltas().len() > 0);
        }
        for p in commit.parents() {
            let diff =
                self.repo
                    .diff_tree_to_tree(Some(&p.tree()?), Some(&tree), Some(&mut opts))?;
            if diff.deltas().len() == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    // ----- show -----

    fn show(&self, args: &[String], out: &mut Out<'_>) -> Res {
        let mut show = Show::Unset;
        let mut opts = DiffOptions::new();
        let (mut oneline, mut full) = (false, false);
        let (before, paths) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let mut revs = Vec::new();
        while let Some(name) = next_flag(&mut flags, &mut revs)? {
            if self.diff_flag(&name, &mut flags, &mut show, &mut opts)? {
                continue;
            }
            match name.as_str() {
                "--oneline" => (oneline, full) = (true, false),
                "--pretty" | "--format" => match flags.optional_value() {
                    Some(v) if v == "oneline" => (oneline, full) = (true, true),
                    Some(v) if v == "medium" => oneline = false,
                    _ => return Err(flags.refuse().into()),
                },
                "--no-decorate" => {}
                _ => return Err(flags.refuse().into()),
            }
        }
        show = show.or(Show::Patch);
        if revs.is_empty() {
            revs.push("HEAD".to_owned());
        }
        for s in self.pathspecs(&paths, &self.prefix)? {
            opts.pathspec(s);
        }
        for (i, rev) in revs.iter().enumerate() {
            self.in_time()?;
            self.within_root(rev)?;
            let obj = self
                .repo
                .revparse_single(rev)
                .map_err(|_| match rev.split_once(':') {
                    // git's words for a path its revision lacks (git says
                    // `exists on disk, but not in` when the work tree has
                    // it; the built-in does not look).
                    Some((r, path)) if !r.is_empty() && self.repo.revparse_single(r).is_ok() => {
                        Stop::Fatal(format!("path '{path}' does not exist in '{r}'"))
                    }
                    _ => unknown_rev(rev, self.dashes),
                })?;
            match obj.kind() {
                Some(ObjectType::Blob) => {
                    if let Some(blob) = obj.as_blob() {
                        let _ = out.write_all(blob.content());
                    }
                }
                Some(ObjectType::Tree) => {
                    if let Some(tree) = obj.as_tree() {
                        say!(out, "tree {rev}\n");
                        for e in tree.iter() {
                            let slash = if e.kind() == Some(ObjectType::Tree) {
                                "/"
                            } else {
                                ""
                            };
                            say!(out, "{}{slash}", String::from_utf8_lossy(e.name_bytes()));
                        }
                    }
                }
                _ => {
                    let commit = obj.peel_to_commit()?;
                    if i > 0 && !oneline {
                        say!(out, "");
                    }
                    if oneline {
                        Self::oneline(&commit, full, out);
                    } else {
                        self.print_header(&commit, out);
                    }
                    let diff = self.commit_diff(&commit, &mut opts)?;
                    if commit.parent_count() > 1 {
                        // git's combined diff, of a merge that took each
                        // file from one side: a blank line, then only the
                        // stat, which is against the first parent.
                        if show != Show::Nothing {
                            say!(out, "");
                        }
                        if matches!(show, Show::Stat | Show::ShortStat | Show::NumStat) {
                            self.print_diff(&diff, show, out)?;
                        } else if show == Show::StatPatch {
                            self.print_diff(&diff, Show::Stat, out)?;
                        }
                        continue;
                    }
                    if !oneline && show != Show::Nothing && diff.deltas().len() > 0 {
                        say!(out, "{}", separator(show));
                    }
                    self.print_diff(&diff, show, out)?;
                }
            }
        }
        Ok(0)
    }

    // ----- branch -----

    fn branch(&self, args: &[String], out: &mut Out<'_>) -> Res {
        let (mut all, mut remote_only, mut verbose, mut current) = (false, false, false, false);
        let mut flags = Flags::new(args, self.env);
        let mut operands = Vec::new();
        while let Some(name) = next_flag(&mut flags, &mut operands)? {
            match name.as_str() {
                "--list" | "-l" | "--no-color" => {}
                "--color" => never_color(&mut flags)?,
                "-a" | "--all" => all = true,
                "-r" | "--remotes" => remote_only = true,
                "-v" | "--verbose" => verbose = true,
                "--show-current" => current = true,
                _ => return Err(flags.refuse().into()),
            }
        }
        if let Some(name) = operands.first() {
            return Err(refuse(
                self.env,
                &format!("the built-in `git branch` only lists branches; creating `{name}` is not a read command"),
            )
            .into());
        }
        let locals = all || !remote_only;
        let remotes = all || remote_only;
        let name = self.branch_name()?;
        if current {
            if let Some(name) = name {
                say!(out, "{name}");
            }
            return Ok(0);
        }
        // (shown name, is current, target, symbolic target)
        let mut rows: Vec<(String, bool, Option<Oid>, Option<String>)> = Vec::new();
        if name.is_none()
            && let Ok(head) = self.repo.head()
            && let Ok(c) = head.peel_to_commit()
        {
            rows.push((
                format!("(HEAD detached at {})", short(&c)),
                true,
                Some(c.id()),
                None,
            ));
        }
        let mut kinds = Vec::new();
        if locals {
            kinds.push(BranchType::Local);
        }
        if remotes {
            kinds.push(BranchType::Remote);
        }
        for kind in kinds {
            let mut these = Vec::new();
            for b in self.repo.branches(Some(kind))? {
                self.in_time()?;
                let (b, _) = b?;
                let r = b.get();
                let short_name = String::from_utf8_lossy(r.shorthand_bytes()).into_owned();
                let shown = if kind == BranchType::Remote && locals {
                    format!("remotes/{short_name}")
                } else {
                    short_name.clone()
                };
                let is_current = kind == BranchType::Local && name.as_deref() == Some(&short_name);
                let sym = r.symbolic_target_bytes().map(|t| {
                    let t = String::from_utf8_lossy(t);
                    t.strip_prefix("refs/remotes/").unwrap_or(&t).to_owned()
                });
                let target = r.resolve().ok().and_then(|r| r.target());
                these.push((shown, is_current, target, sym));
            }
            these.sort_by(|a, b| a.0.cmp(&b.0));
            rows.extend(these);
        }
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        for (shown, is_current, target, sym) in rows {
            let mark = if is_current { "* " } else { "  " };
            if let Some(sym) = sym {
                say!(out, "{mark}{shown} -> {sym}");
            } else if verbose {
                let tail = target
                    .and_then(|id| self.repo.find_commit(id).ok())
                    .map(|c| {
                        let summary = c
                            .summary_bytes()
                            .map(|s| String::from_utf8_lossy(s).into_owned())
                            .unwrap_or_default();
                        format!("{} {summary}", short(&c))
                    })
                    .unwrap_or_default();
                say!(out, "{mark}{shown:<width$} {tail}");
            } else {
                say!(out, "{mark}{shown}");
            }
        }
        Ok(0)
    }

    // ----- ls-files -----

    fn ls_files(&self, args: &[String], out: &mut Out<'_>) -> Res {
        let (mut cached, mut modified, mut deleted, mut others) = (false, false, false, false);
        let (mut exclude_standard, mut stage, mut full_name) = (false, false, false);
        let (before, mut after) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let mut paths = Vec::new();
        while let Some(name) = next_flag(&mut flags, &mut paths)? {
            match name.as_str() {
                "-c" | "--cached" => cached = true,
                "-m" | "--modified" => modified = true,
                "-d" | "--deleted" => deleted = true,
                "-o" | "--others" => others = true,
                "--exclude-standard" => exclude_standard = true,
                "-s" | "--stage" => stage = true,
                "--full-name" => full_name = true,
                _ => return Err(flags.refuse().into()),
            }
        }
        paths.append(&mut after);
        if !(modified || deleted || others) {
            cached = true;
        }
        let specs = self.pathspecs(&paths, &self.cwd)?;
        let shown = |p: &str| {
            if full_name {
                quoted(p, false)
            } else {
                quoted(&self.relative(p), false)
            }
        };
        let spec = Pathspec::new(specs.iter())?;
        let matches =
            |p: &str| specs.is_empty() || spec.matches_path(Path::new(p), PathspecFlags::DEFAULT);
        if others {
            let mut opts = StatusOptions::new();
            opts.include_untracked(true)
                .recurse_untracked_dirs(true)
                .include_ignored(!exclude_standard)
                .recurse_ignored_dirs(!exclude_standard)
                .include_unmodified(false);
            for s in &specs {
                opts.pathspec(s);
            }
            for e in self.repo.statuses(Some(&mut opts))?.iter() {
                if e.status().intersects(Status::WT_NEW | Status::IGNORED) {
                    say!(out, "{}", shown(&path_of(e.path_bytes())));
                }
            }
        }
        let mut changes: HashMap<String, Status> = HashMap::new();
        if modified || deleted {
            let mut opts = StatusOptions::new();
            opts.include_untracked(false).include_ignored(false);
            for s in &specs {
                opts.pathspec(s);
            }
            for e in self.repo.statuses(Some(&mut opts))?.iter() {
                changes.insert(path_of(e.path_bytes()), e.status());
            }
        }
        if cached || modified || deleted {
            let index = self.repo.index()?;
            for entry in index.iter() {
                self.in_time()?;
                let path = path_of(&entry.path);
                if !matches(&path) {
                    continue;
                }
                if cached {
                    if stage {
                        let n = (entry.flags >> 12) & 3;
                        say!(out, "{:06o} {} {n}\t{}", entry.mode, entry.id, shown(&path));
                    } else {
                        say!(out, "{}", shown(&path));
                    }
                }
                let st = changes.get(&path).copied().unwrap_or(Status::CURRENT);
                if deleted && st.contains(Status::WT_DELETED) {
                    say!(out, "{}", shown(&path));
                }
                if modified
                    && st.intersects(
                        Status::WT_MODIFIED | Status::WT_DELETED | Status::WT_TYPECHANGE,
                    )
                {
                    say!(out, "{}", shown(&path));
                }
            }
        }
        Ok(0)
    }

    // ----- stash -----

    fn stash(&self, args: &[String], out: &mut Out<'_>) -> Res {
        let Some((sub, rest)) = args.split_first() else {
            return Err(refuse(self.env, "`git stash` saves changes and changes the work tree; the built-in runs only `git stash list` and `git stash show`").into());
        };
        match sub.as_str() {
            "list" => {
                if let Some(flag) = rest.first() {
                    return Err(self.env.unsupported(flag).into());
                }
                let Ok(log) = self.repo.reflog("refs/stash") else {
                    return Ok(0);
                };
                for (i, entry) in log.iter().enumerate() {
                    let message = entry
                        .message_bytes()
                        .map(|m| String::from_utf8_lossy(m).into_owned())
                        .unwrap_or_default();
                    say!(out, "stash@{{{i}}}: {message}");
                }
                Ok(0)
            }
            "show" => {
                let mut show = Show::Unset;
                let mut opts = DiffOptions::new();
                let mut flags = Flags::new(rest, self.env);
                let mut operands = Vec::new();
                while let Some(name) = next_flag(&mut flags, &mut operands)? {
                    if !self.diff_flag(&name, &mut flags, &mut show, &mut opts)? {
                        return Err(flags.refuse().into());
                    }
                }
                show = show.or(Show::Stat);
                let which = match operands.as_slice() {
                    [] => None,
                    [n] if n.bytes().all(|b| b.is_ascii_digit()) => Some(format!("stash@{{{n}}}")),
                    [rev] => Some(rev.clone()),
                    [_, extra, ..] => {
                        return Err(Stop::Fatal(format!("too many revisions: {extra}")));
                    }
                };
                if self.repo.find_reference("refs/stash").is_err() {
                    say!(out, "No stash entries found.");
                    return Ok(1);
                }
                let which = which.unwrap_or_else(|| "stash@{0}".to_owned());
                // Below the work tree's top, only the root's part of it.
                for s in self.pathspecs(&[], &self.prefix)? {
                    opts.pathspec(s);
                }
                let commit = self.commit_of(&which)?;
                let base = commit.parent(0)?.tree()?;
                let mut diff =
                    self.repo
                        .diff_tree_to_tree(Some(&base), Some(&commit.tree()?), Some(&mut opts))?;
                diff.find_similar(None)?;
                self.print_diff(&diff, show, out)?;
                Ok(0)
            }
            s if s.starts_with('-') => Err(self.env.unsupported(s).into()),
            s => Err(refuse(
                self.env,
                &format!("`git stash {s}` is not a read command; the built-in runs only `git stash list` and `git stash show`"),
            )
            .into()),
        }
    }
}

/// The line between a commit's message and its diff: `---` before a stat
/// followed by a patch, else empty.
fn separator(show: Show) -> &'static str {
    if show == Show::StatPatch { "---" } else { "" }
}

/// The arguments before `--` and after it.
fn split_dashes(args: &[String]) -> (Vec<String>, Vec<String>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.to_vec(), Vec::new()),
    }
}

/// The next flag as written without its value (`-s`, `--short`); operands
/// met on the way go to `operands`.
fn next_flag(
    flags: &mut Flags<'_, '_>,
    operands: &mut Vec<String>,
) -> Result<Option<String>, Stop> {
    while let Some(arg) = flags.next()? {
        match arg {
            Arg::Short(c) => return Ok(Some(format!("-{c}"))),
            Arg::Long(l) => return Ok(Some(format!("--{l}"))),
            Arg::Operand(o) => operands.push(o),
        }
    }
    Ok(None)
}

/// `--color=never` is accepted (nothing is ever coloured); any other
/// `--color` is refused.
fn never_color(flags: &mut Flags<'_, '_>) -> Result<(), Stop> {
    match flags.optional_value() {
        Some(v) if v == "never" => Ok(()),
        _ => Err(flags.refuse().into()),
    }
}

fn is_unborn(e: &git2::Error) -> bool {
    matches!(
        e.code(),
        git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
    )
}

/// Whether an operand names a revision or a range (`A..B`, `A...B`, `^A`)
/// rather than a path.
fn is_revision(repo: &Repository, text: &str) -> bool {
    let resolves = |s: &str| s.is_empty() || repo.revparse_single(s).is_ok();
    let range = text.split_once("...").or_else(|| text.split_once(".."));
    match range {
        Some(("", "")) => false,
        Some((a, b)) => resolves(a) && resolves(b.trim_start_matches('.')),
        None => match text.strip_prefix('^') {
            Some(rev) => !rev.is_empty() && resolves(rev),
            None => repo.revparse_single(text).is_ok(),
        },
    }
}

fn unknown_rev(rev: &str, dashes: bool) -> Stop {
    if dashes {
        return Stop::Fatal(format!("bad revision '{rev}'"));
    }
    Stop::Fatal(format!(
        "ambiguous argument '{rev}': unknown revision or path not in the working tree.\n\
         Use '--' to separate paths from revisions, like this:\n\
         'git <command> [<revision>...] -- [<file>...]'"
    ))
}

fn path_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn short(commit: &Commit<'_>) -> String {
    commit
        .as_object()
        .short_id()
        .ok()
        .and_then(|b| b.as_str().ok().map(str::to_owned))
        .unwrap_or_else(|| commit.id().to_string().chars().take(7).collect())
}

fn index_code(st: Status) -> char {
    if st.contains(Status::INDEX_NEW) {
        'A'
    } else if st.contains(Status::INDEX_MODIFIED) {
        'M'
    } else if st.contains(Status::INDEX_DELETED) {
        'D'
    } else if st.contains(Status::INDEX_RENAMED) {
        'R'
    } else if st.contains(Status::INDEX_TYPECHANGE) {
        'T'
    } else {
        ' '
    }
}

fn worktree_code(st: Status) -> char {
    if st.contains(Status::WT_MODIFIED) {
        'M'
    } else if st.contains(Status::WT_DELETED) {
        'D'
    } else if st.contains(Status::WT_TYPECHANGE) {
        'T'
    } else if st.contains(Status::WT_RENAMED) {
        'R'
    } else {
        ' '
    }
}

fn delta_code(d: Delta) -> char {
    match d {
        Delta::Added => 'A',
        Delta::Deleted => 'D',
        Delta::Renamed => 'R',
        Delta::Copied => 'C',
        Delta::Typechange => 'T',
        Delta::Conflicted => 'U',
        _ => 'M',
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;
    use std::time::{Duration, Instant};

    use git2::{IndexAddOption, Repository, RepositoryInitOptions, Signature, Time};

    use super::*;
    use crate::commands::process::Output;
    use crate::engine::Quiet;
    use crate::engine::fs::{Root, locate};
    use crate::engine::git::WorkTree;

    fn init(dir: &Path) -> Repository {
        let mut opts = RepositoryInitOptions::new();
        opts.initial_head("main");
        Repository::init_opts(dir, &opts).unwrap()
    }

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    /// Writes `files` and commits everything, at a fixed time.
    fn commit(repo: &Repository, files: &[(&str, &str)], message: &str) -> Oid {
        write(repo.workdir().unwrap(), files);
        let mut index = repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::new("Ada", "ada@example.com", &Time::new(1_700_000_000, 0)).unwrap();
        let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&Commit<'_>> = parent.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    fn stage(repo: &Repository, name: &str) {
        let mut index = repo.index().unwrap();
        index.add_path(Path::new(name)).unwrap();
        index.write().unwrap();
    }

    /// Runs the command line `line` (starting with `git`) under `root`,
    /// in `cwd`; its result and output.
    fn run(
        root: &Path,
        repo: Option<&Repository>,
        cwd: &str,
        line: &str,
    ) -> (Result<i32, Refusal>, String) {
        let handle = Root::open(root).unwrap();
        let env = Env {
            tree: &handle,
            root_path: root,
            cwd: locate(cwd, false).unwrap(),
            allow_escape: false,
            deadline: Instant::now() + Duration::from_secs(60),
            repo,
            shown: line,
            copied: &crate::commands::builtin::Copied::default(),
        };
        let mut quiet = Quiet;
        let mut out = Out::new(Output::new(0, &mut quiet, 1 << 20));
        let argv = shell_words::split(line).unwrap();
        assert_eq!(argv[0], "git");
        let result = git(&argv[1..], &env, &mut out);
        (result, out.finish())
    }

    fn ok(root: &Path, repo: &Repository, cwd: &str, line: &str) -> String {
        let (result, text) = run(root, Some(repo), cwd, line);
        assert_eq!(result, Ok(0), "{line}: {text}");
        text
    }

    fn refused(root: &Path, repo: Option<&Repository>, line: &str) -> Refusal {
        let (result, text) = run(root, repo, ".", line);
        let e = result.expect_err(line);
        assert!(text.is_empty(), "{line}: printed {text}");
        e
    }

    /// A repository with two commits, then: `a.txt` changed, `c.txt` new
    /// and staged, `d.txt` untracked.
    fn fixture() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = init(dir.path());
        commit(&repo, &[("a.txt", "one\ntwo\n")], "first\n\nbody line\n");
        commit(&repo, &[("b.txt", "bee\n")], "second");
        write(
            dir.path(),
            &[
                ("a.txt", "uno\ntwo\n"),
                ("c.txt", "sea\n"),
                ("d.txt", "dee\n"),
            ],
        );
        stage(&repo, "c.txt");
        (dir, repo)
    }

    #[test]
    fn without_a_repository_it_is_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let (result, text) = run(dir.path(), None, ".", "git status");
        assert_eq!(result, Ok(128));
        assert!(text.starts_with("fatal: not a git repository"), "{text}");
    }

    #[test]
    fn refuses_global_options_unknown_flags_and_writes() {
        let (dir, repo) = fixture();
        let root = dir.path();
        // The flag is named in backticks after the command line.
        for (line, flag) in [
            ("git -c diff.external=x diff", "`-c`"),
            ("git --git-dir=f diff", "`--git-dir=f`"),
            ("git --exec-path=/tmp status", "`--exec-path=/tmp`"),
            ("git -p log", "`-p`"),
            ("git diff --output=/tmp/x", "`--output`"),
            ("git diff --ext-diff", "`--ext-diff`"),
            ("git diff --textconv", "`--textconv`"),
            ("git diff --no-index a b", "`--no-index`"),
            ("git diff --color", "`--color`"),
            ("git log --format=%H", "`--format`"),
            ("git log -S secret", "`-S`"),
            ("git status --ignored", "`--ignored`"),
            ("git status -uweird", "`weird`"),
            ("git ls-files --with-tree=HEAD", "`--with-tree`"),
            ("git show --ext-diff HEAD", "`--ext-diff`"),
            ("git branch -D main", "`-D`"),
            (
                "git stash push --pathspec-from-file=/etc/passwd",
                "`git stash push`",
            ),
            (
                "git stash --pathspec-from-file=/etc/passwd",
                "`--pathspec-from-file=/etc/passwd`",
            ),
            ("git stash show --output=x", "`--output`"),
            ("git stash list --all", "`--all`"),
        ] {
            let e = refused(root, Some(&repo), line);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{line}");
            let after = e.message().split_once("`:").map_or("", |(_, m)| m);
            assert!(after.contains(flag), "{line}: {}", e.message());
        }
        for line in [
            "git branch new",
            "git stash",
            "git stash pop",
            "git stash drop",
            "git commit -m x",
        ] {
            let e = refused(root, Some(&repo), line);
            assert_eq!(e.error_type(), ErrorType::CommandNotAllowed, "{line}");
        }
        // Refused before anything else, also outside a repository.
        let e = refused(root, None, "git -C / status");
        assert_eq!(e.error_type(), ErrorType::CommandNotAllowed);
    }

    #[test]
    fn paths_stay_in_the_root() {
        let (dir, repo) = fixture();
        for line in [
            "git diff -- ../x",
            "git log -- /etc/passwd",
            "git status ../../etc",
            "git ls-files ../",
            "git diff HEAD -- a.txt/../../x",
            "git diff ../x",
            "git log ..",
            "git diff HEAD ../../etc/passwd",
        ] {
            let e = refused(dir.path(), Some(&repo), line);
            assert_eq!(e.error_type(), ErrorType::PathEscape, "{line}");
        }
    }

    #[test]
    fn status_short_long_and_porcelain() {
        let (dir, repo) = fixture();
        let root = dir.path();
        assert_eq!(
            ok(root, &repo, ".", "git status -s"),
            " M a.txt\nA  c.txt\n?? d.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git status -sb"),
            "## main\n M a.txt\nA  c.txt\n?? d.txt\n"
        );
        assert_eq!(
            ok(
                root,
                &repo,
                ".",
                "git status --porcelain --untracked-files=no"
            ),
            " M a.txt\nA  c.txt\n"
        );
        let long = ok(root, &repo, ".", "git status");
        assert_eq!(
            long,
            "On branch main\nChanges to be committed:\n\tnew file:   c.txt\n\n\
             Changes not staged for commit:\n\tmodified:   a.txt\n\n\
             Untracked files:\n\td.txt\n\n"
        );
        assert_eq!(ok(root, &repo, ".", "git status -s -- a.txt"), " M a.txt\n");
        // Paths relative to the working directory in short format, to the
        // work tree in porcelain.
        write(root, &[("sub/e.txt", "e\n")]);
        assert_eq!(
            ok(root, &repo, "sub", "git status -s -uall"),
            " M ../a.txt\nA  ../c.txt\n?? ../d.txt\n?? e.txt\n"
        );
        assert_eq!(ok(root, &repo, "sub", "git status -s -uno -- ."), "");
        assert_eq!(ok(root, &repo, "sub", "git status --short ."), "?? ./\n");
        assert_eq!(
            ok(root, &repo, "sub", "git status --porcelain"),
            " M a.txt\nA  c.txt\n?? d.txt\n?? sub/\n"
        );
    }

    /// A name with a line feed or an escape sequence never prints a line
    /// of its own nor a raw control character: git's quotes (and `?? "x y"`
    /// for a space in short status, as git 2.47 prints it).
    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        let (dir, repo) = fixture();
        let root = dir.path();
        write(root, &[("fake\n?? line", "x\n"), ("\u{1b}[31mred", "x\n")]);
        stage(&repo, "\u{1b}[31mred");
        write(root, &[("\u{1b}[31mred", "y\n"), ("s p", "x\n")]);
        assert_eq!(
            ok(root, &repo, ".", "git status -s"),
            "AM \"\\033[31mred\"\n M a.txt\nA  c.txt\n?? d.txt\n?? \"fake\\n?? line\"\n?? \"s p\"\n"
        );
        let long = ok(root, &repo, ".", "git status");
        assert!(long.contains("\tnew file:   \"\\033[31mred\"\n"), "{long}");
        assert!(long.contains("\t\"fake\\n?? line\"\n\ts p\n"), "{long}");
        assert_eq!(
            ok(root, &repo, ".", "git diff --name-status"),
            "M\t\"\\033[31mred\"\nM\ta.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git ls-files -o --exclude-standard"),
            "d.txt\n\"fake\\n?? line\"\ns p\n"
        );
    }

    #[test]
    fn status_says_where_the_branch_stands_against_its_upstream() {
        let (dir, repo) = fixture();
        let root = dir.path();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let mut config = repo.config().unwrap();
        config.set_str("remote.origin.url", "/nowhere").unwrap();
        config
            .set_str("remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
            .unwrap();
        config.set_str("branch.main.remote", "origin").unwrap();
        config
            .set_str("branch.main.merge", "refs/heads/main")
            .unwrap();
        repo.reference(
            "refs/remotes/origin/main",
            head.parent_id(0).unwrap(),
            false,
            "",
        )
        .unwrap();
        assert!(
            ok(root, &repo, ".", "git status -sb").starts_with("## main...origin/main [ahead 1]\n")
        );
        assert!(
            ok(root, &repo, ".", "git status").starts_with(
                "On branch main\nYour branch is ahead of 'origin/main' by 1 commit.\n\nChanges to be committed:\n"
            )
        );
        repo.reference("refs/remotes/origin/main", head.id(), true, "")
            .unwrap();
        assert!(
            ok(root, &repo, ".", "git status")
                .starts_with("On branch main\nYour branch is up to date with 'origin/main'.\n\n")
        );
        repo.find_reference("refs/remotes/origin/main")
            .unwrap()
            .delete()
            .unwrap();
        assert!(
            ok(root, &repo, ".", "git status -sb").starts_with("## main...origin/main [gone]\n")
        );
    }

    #[test]
    fn status_of_a_clean_tree_and_a_new_repository() {
        let dir = tempfile::tempdir().unwrap();
        let repo = init(dir.path());
        assert_eq!(
            ok(dir.path(), &repo, ".", "git status"),
            "On branch main\n\nNo commits yet\n\nnothing to commit\n"
        );
        assert_eq!(
            ok(dir.path(), &repo, ".", "git status -b --short"),
            "## No commits yet on main\n"
        );
        commit(&repo, &[("a", "a\n")], "one");
        assert_eq!(
            ok(dir.path(), &repo, ".", "git status"),
            "On branch main\nnothing to commit, working tree clean\n"
        );
        let (result, text) = run(dir.path(), Some(&repo), ".", "git log --oneline");
        assert_eq!(result, Ok(0));
        assert_eq!(text.lines().count(), 1);
    }

    #[test]
    fn diff_patch_stat_names_and_exit_code() {
        let (dir, repo) = fixture();
        let root = dir.path();
        let patch = ok(root, &repo, ".", "git diff");
        let lines: Vec<&str> = patch.lines().collect();
        assert_eq!(lines[0], "diff --git a/a.txt b/a.txt");
        assert!(lines[1].starts_with("index "), "{patch}");
        assert_eq!(
            &lines[2..],
            [
                "--- a/a.txt",
                "+++ b/a.txt",
                "@@ -1,2 +1,2 @@",
                "-one",
                "+uno",
                " two"
            ]
        );
        assert_eq!(
            ok(root, &repo, ".", "git diff --stat"),
            " a.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"
        );
        assert_eq!(ok(root, &repo, ".", "git diff --name-only"), "a.txt\n");
        assert_eq!(
            ok(root, &repo, ".", "git diff --cached --name-status"),
            "A\tc.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git diff --staged --name-only HEAD~1"),
            "b.txt\nc.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git diff HEAD --name-only"),
            "a.txt\nc.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git diff HEAD~1 HEAD --name-only"),
            "b.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git diff HEAD~1..HEAD --name-only"),
            "b.txt\n"
        );
        assert_eq!(ok(root, &repo, ".", "git diff -- b.txt"), "");
        assert_eq!(
            ok(root, &repo, ".", "git diff --no-color a.txt")
                .lines()
                .count(),
            8
        );
        let u0 = ok(root, &repo, ".", "git diff -U0");
        assert!(u0.contains("@@ -1 +1 @@\n-one\n+uno\n"), "{u0}");
        assert_eq!(ok(root, &repo, ".", "git diff --unified=0"), u0);
        let (result, text) = run(root, Some(&repo), ".", "git diff --quiet");
        assert_eq!((result, text.as_str()), (Ok(1), ""));
        let (result, _) = run(root, Some(&repo), ".", "git diff --exit-code -- b.txt");
        assert_eq!(result, Ok(0));
        let (result, text) = run(root, Some(&repo), ".", "git diff HEAD~5 --stat");
        assert_eq!(result, Ok(128));
        assert!(
            text.starts_with("fatal: ambiguous argument 'HEAD~5'"),
            "{text}"
        );
        let (result, text) = run(root, Some(&repo), ".", "git log nosuch");
        assert_eq!(result, Ok(128), "{text}");
        let (result, text) = run(root, Some(&repo), ".", "git diff nosuchrev -- a.txt");
        assert_eq!(result, Ok(128));
        assert_eq!(text, "fatal: bad revision 'nosuchrev'\n");
        let stat_patch = ok(root, &repo, ".", "git diff --stat -p");
        assert!(
            stat_patch.starts_with(" a.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\ndiff --git a/a.txt b/a.txt\n"),
            "{stat_patch}"
        );
    }

    #[test]
    fn log_default_oneline_counts_and_paths() {
        let (dir, repo) = fixture();
        let root = dir.path();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        let first = head.parent(0).unwrap();
        let short_head = short(&head);
        let oneline = ok(root, &repo, ".", "git log --oneline");
        assert_eq!(
            oneline,
            format!("{short_head} second\n{} first\n", short(&first))
        );
        for line in [
            "git log --oneline -n 1",
            "git log --oneline -n1",
            "git log --oneline -1",
            "git log --oneline --max-count=1",
        ] {
            assert_eq!(
                ok(root, &repo, ".", line),
                format!("{short_head} second\n"),
                "{line}"
            );
        }
        assert_eq!(
            ok(root, &repo, ".", "git log -- a.txt"),
            format!(
                "commit {}\nAuthor: Ada <ada@example.com>\nDate:   Tue Nov 14 22:13:20 2023 +0000\n\n    first\n    \n    body line\n",
                first.id()
            )
        );
        let all = ok(root, &repo, ".", "git log");
        assert_eq!(all.matches("\ncommit ").count() + 1, 2, "{all}");
        assert!(all.starts_with(&format!("commit {}\n", head.id())));
        let stat = ok(root, &repo, ".", "git log --stat -1");
        assert!(
            stat.ends_with("    second\n\n b.txt | 1 +\n 1 file changed, 1 insertion(+)\n"),
            "{stat}"
        );
        assert_eq!(
            ok(root, &repo, ".", "git log --oneline HEAD~1..HEAD"),
            format!("{short_head} second\n")
        );
        assert_eq!(
            ok(root, &repo, ".", "git log --oneline b.txt"),
            format!("{short_head} second\n")
        );
        for line in [
            "git log --oneline HEAD~1..",
            "git log --oneline HEAD ^HEAD~1",
        ] {
            assert_eq!(
                ok(root, &repo, ".", line),
                format!("{short_head} second\n"),
                "{line}"
            );
        }
    }

    #[test]
    fn show_commit_stat_and_blob() {
        let (dir, repo) = fixture();
        let root = dir.path();
        let shown = ok(root, &repo, ".", "git show");
        assert!(shown.contains("Date:   Tue Nov 14 22:13:20 2023 +0000\n\n    second\n\ndiff --git a/b.txt b/b.txt\nnew file mode 100644\n"), "{shown}");
        assert!(
            shown.ends_with("--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+bee\n"),
            "{shown}"
        );
        let stat = ok(root, &repo, ".", "git show --stat HEAD~1");
        assert!(
            stat.ends_with("    body line\n\n a.txt | 2 ++\n 1 file changed, 2 insertions(+)\n"),
            "{stat}"
        );
        assert_eq!(ok(root, &repo, ".", "git show HEAD~1:a.txt"), "one\ntwo\n");
        assert_eq!(
            ok(root, &repo, ".", "git show --oneline --name-only"),
            format!(
                "{} second\nb.txt\n",
                short(&repo.head().unwrap().peel_to_commit().unwrap())
            )
        );
        let (result, _) = run(root, Some(&repo), ".", "git show nosuch");
        assert_eq!(result, Ok(128));
    }

    #[test]
    fn branch_lists_only() {
        let (dir, repo) = fixture();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        repo.branch("feature", &head, false).unwrap();
        assert_eq!(
            ok(dir.path(), &repo, ".", "git branch"),
            "  feature\n* main\n"
        );
        assert_eq!(
            ok(dir.path(), &repo, ".", "git branch --show-current"),
            "main\n"
        );
        assert_eq!(
            ok(dir.path(), &repo, ".", "git branch -v"),
            format!("  feature {0} second\n* main    {0} second\n", short(&head))
        );
        repo.set_head_detached(head.id()).unwrap();
        assert_eq!(
            ok(dir.path(), &repo, ".", "git branch"),
            format!("* (HEAD detached at {})\n  feature\n  main\n", short(&head))
        );
        assert_eq!(ok(dir.path(), &repo, ".", "git branch --show-current"), "");
    }

    #[test]
    fn ls_files_cached_modified_others() {
        let (dir, repo) = fixture();
        let root = dir.path();
        write(
            root,
            &[
                (".gitignore", "*.log\n"),
                ("x.log", "x\n"),
                ("sub/e.txt", "e\n"),
            ],
        );
        stage(&repo, "sub/e.txt");
        assert_eq!(
            ok(root, &repo, ".", "git ls-files"),
            "a.txt\nb.txt\nc.txt\nsub/e.txt\n"
        );
        assert_eq!(ok(root, &repo, ".", "git ls-files -m"), "a.txt\n");
        assert_eq!(
            ok(root, &repo, ".", "git ls-files -o --exclude-standard"),
            ".gitignore\nd.txt\n"
        );
        assert_eq!(
            ok(root, &repo, ".", "git ls-files --others"),
            ".gitignore\nd.txt\nx.log\n"
        );
        assert_eq!(ok(root, &repo, "sub", "git ls-files"), "e.txt\n");
        assert_eq!(
            ok(root, &repo, "sub", "git ls-files --full-name"),
            "sub/e.txt\n"
        );
        assert_eq!(
            ok(root, &repo, "sub", "git ls-files ../b.txt"),
            "../b.txt\n"
        );
        let stage_line = ok(root, &repo, ".", "git ls-files -s -- b.txt");
        assert!(
            stage_line.starts_with("100644 ") && stage_line.ends_with(" 0\tb.txt\n"),
            "{stage_line}"
        );
    }

    #[test]
    fn stash_list_and_show() {
        let (dir, mut repo) = fixture();
        let root = dir.path().to_owned();
        assert_eq!(ok(&root, &repo, ".", "git stash list"), "");
        let (result, text) = run(&root, Some(&repo), ".", "git stash show");
        assert_eq!(
            (result, text.as_str()),
            (Ok(1), "No stash entries found.\n")
        );
        let sig = Signature::new("Ada", "ada@example.com", &Time::new(1_700_000_000, 0)).unwrap();
        repo.stash_save(&sig, "saved", None).unwrap();
        assert_eq!(
            ok(&root, &repo, ".", "git stash list"),
            "stash@{0}: On main: saved\n"
        );
        assert_eq!(
            ok(&root, &repo, ".", "git stash show"),
            " a.txt | 2 +-\n c.txt | 1 +\n 2 files changed, 2 insertions(+), 1 deletion(-)\n"
        );
        let patch = ok(&root, &repo, ".", "git stash show -p stash@{0}");
        assert!(patch.contains("-one\n+uno\n"), "{patch}");
        assert_eq!(
            ok(&root, &repo, ".", "git stash show --name-only 0"),
            "a.txt\nc.txt\n"
        );
    }

    #[test]
    fn a_root_below_the_work_tree_sees_only_itself() {
        let (dir, repo) = fixture();
        commit(&repo, &[("sub/e.txt", "e\n")], "third");
        write(dir.path(), &[("sub/e.txt", "E\n")]);
        let root = dir.path().join("sub");
        let tree = WorkTree::discover(&root).unwrap().unwrap();
        let repo = tree.repository();
        assert_eq!(ok(&root, repo, ".", "git status -s"), " M e.txt\n");
        assert_eq!(ok(&root, repo, ".", "git diff --name-only"), "sub/e.txt\n");
        assert_eq!(ok(&root, repo, ".", "git ls-files"), "e.txt\n");
        let e = refused(&root, Some(repo), "git diff -- ../a.txt");
        assert_eq!(e.error_type(), ErrorType::PathEscape);
        // A stash holding changes beside the root shows only the root's.
        let sig = Signature::new("Ada", "ada@example.com", &Time::new(1_700_000_000, 0)).unwrap();
        let mut stashing = Repository::open(dir.path()).unwrap();
        stashing.stash_save(&sig, "saved", None).unwrap();
        let shown = ok(&root, repo, ".", "git stash show -p");
        assert!(
            shown.contains("sub/e.txt") && shown.contains("+E"),
            "{shown}"
        );
        assert!(
            !shown.contains("a.txt") && !shown.contains("uno"),
            "{shown}"
        );
        assert_eq!(
            ok(&root, repo, ".", "git stash show --name-only"),
            "sub/e.txt\n"
        );
    }

    /// The attack of issue 8: a document writes a bare repository of its
    /// own whose configuration names a diff driver, and runs `git diff`
    /// in it. The run's repository is the root's (or none), and no
    /// configured program ever runs, even when the root's own repository
    /// names them.
    #[test]
    fn a_fake_repository_and_configured_programs_are_ignored() {
        let outside = tempfile::tempdir().unwrap();
        let canary = outside.path().join("CANARY");
        let touch = format!("touch {}", canary.display());
        let fake = |dir: &Path| {
            write(
                dir,
                &[
                    ("f/HEAD", "ref: refs/heads/main\n"),
                    ("f/objects/info/.keep", ""),
                    ("f/refs/heads/.keep", ""),
                    (
                        "f/config",
                        &format!(
                            "[core]\n\trepositoryformatversion = 0\n\tbare = true\n[diff \"x\"]\n\tcommand = {touch}\n\ttextconv = {touch}\n"
                        ),
                    ),
                    ("f/info/attributes", "* diff=x\n"),
                    ("f/a", "1\n"),
                ],
            );
        };

        // No repository at the root: the fake one is never found.
        let bare = tempfile::tempdir().unwrap();
        fake(bare.path());
        assert!(WorkTree::discover(bare.path()).unwrap().is_none());
        assert!(
            WorkTree::discover(&bare.path().join("f"))
                .unwrap()
                .is_none()
        );
        let (result, text) = run(bare.path(), None, "f", "git diff");
        assert_eq!(result, Ok(128), "{text}");
        // A root that is itself shaped like a bare repository is not one.
        assert!(
            WorkTree::discover(&bare.path().join("f"))
                .unwrap()
                .is_none()
        );

        // A real repository at the root, whose configuration and
        // attributes are hostile too.
        let (dir, repo) = fixture();
        let root = dir.path();
        let mut config = repo.config().unwrap();
        for key in [
            "diff.external",
            "diff.x.command",
            "diff.x.textconv",
            "filter.x.clean",
            "filter.x.smudge",
            "filter.x.process",
            "core.fsmonitor",
            "core.pager",
            "pager.diff",
        ] {
            config.set_str(key, &touch).unwrap();
        }
        config
            .set_str("core.hooksPath", outside.path().to_str().unwrap())
            .unwrap();
        write(root, &[(".gitattributes", "* diff=x filter=x\n")]);
        fake(root);
        let tree = WorkTree::discover(&root.join("f")).unwrap().unwrap();
        assert_eq!(
            tree.repository().workdir().unwrap().canonicalize().unwrap(),
            root.canonicalize().unwrap()
        );
        let repo = tree.repository();
        let patch = ok(root, repo, "f", "git diff");
        assert!(patch.starts_with("diff --git a/a.txt b/a.txt\n"), "{patch}");
        assert!(patch.contains("-one\n+uno\n"), "{patch}");
        for line in [
            "git diff --stat",
            "git diff HEAD",
            "git diff --cached",
            "git status",
            "git log -p",
            "git show",
            "git ls-files -m",
            "git stash list",
        ] {
            let (result, text) = run(root, Some(repo), "f", line);
            assert_eq!(result, Ok(0), "{line}: {text}");
        }
        let e = refused(root, Some(repo), "git diff --no-index a b");
        assert_eq!(e.error_type(), ErrorType::CommandNotAllowed);
        assert!(!canary.exists(), "a configured program ran");
    }
}
