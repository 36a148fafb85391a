//! git's read commands through libgit2, on the run's one repository
//! (PROTOCOL §6): `status diff log show branch ls-files`, and `stash list`
//! and `stash show`.
//!
//! The repository was found once, before any task, from the root upward;
//! nothing a task wrote and no RUN's `dir` changes which one it is. libgit2
//! runs no program of any kind: no external diff driver, textconv, filter,
//! hook, pager or file system monitor exists here, whatever the
//! configuration says. Paths in the output are relative to the work tree's
//! top, as in `git status --porcelain`.

use std::io::Write;

use git2::{
    BranchType, Commit, Diff, DiffFormat, DiffOptions, DiffStatsFormat, Object, ObjectType, Oid,
    Repository, Sort, Status, StatusOptions,
};

use crate::engine::TaskError;
use crate::error_type::ErrorType;

use super::args::Arg;
use super::{Env, Flags, Out};

/// `git SUBCOMMAND [FLAGS] [ARGS]`; `args` start with the subcommand.
pub(crate) fn git(args: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, TaskError> {
    let Some((sub, args)) = args.split_first() else {
        return Err(env.unsupported(""));
    };
    let Some(repo) = env.repo else {
        out.error(
            "fatal",
            "not a git repository (the root is not inside a git work tree)",
        );
        return Ok(128);
    };
    let Some(workdir) = repo.workdir() else {
        out.error("fatal", "this operation must be run in a work tree");
        return Ok(128);
    };
    let git = Git {
        env,
        repo,
        prefix: prefix_of(env, workdir),
    };
    let result = match sub.as_str() {
        "status" => git.status(args, out),
        "diff" => git.diff(args, out),
        "log" => git.log(args, out),
        "show" => git.show(args, out),
        "branch" => git.branch(args, out),
        "ls-files" => git.ls_files(args, out),
        "stash" => git.stash(args, out),
        other => Err(Failure::Refused(env.unsupported(other))),
    };
    match result {
        Err(Failure::Refused(e)) => Err(e),
        Err(Failure::Git(e)) => {
            out.error("fatal", e.message());
            Ok(128)
        }
        Ok(code) => Ok(code),
    }
}

/// Why a git command stopped: a refusal of the document, or git's own
/// error (an unknown revision, say), reported as git does.
enum Failure {
    Refused(TaskError),
    Git(git2::Error),
}

impl From<TaskError> for Failure {
    fn from(e: TaskError) -> Self {
        Failure::Refused(e)
    }
}

impl From<git2::Error> for Failure {
    fn from(e: git2::Error) -> Self {
        Failure::Git(e)
    }
}

type Result<T, E = Failure> = std::result::Result<T, E>;

/// Where the root is below the work tree's top (`""` when it is the top),
/// so pathspecs written relative to the root name the right files.
fn prefix_of(env: &Env<'_>, workdir: &std::path::Path) -> String {
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (root, top) = (canonical(env.root_path), canonical(workdir));
    match root.strip_prefix(&top) {
        Ok(rel) if !rel.as_os_str().is_empty() => format!("{}/", rel.display()),
        _ => String::new(),
    }
}

struct Git<'g, 'e> {
    env: &'g Env<'e>,
    repo: &'g Repository,
    /// The root relative to the work tree's top, with a final `/`.
    prefix: String,
}

/// What a diff compares, from its operands.
#[derive(Debug, Default)]
struct DiffArgs {
    revisions: Vec<String>,
    paths: Vec<String>,
    cached: bool,
    stat: bool,
    name_only: bool,
    name_status: bool,
    context: Option<u32>,
    no_patch: bool,
}

impl Git<'_, '_> {
    /// A path operand, checked like a task's path and made relative to the
    /// work tree's top.
    fn pathspec(&self, arg: &str) -> Result<String> {
        let at = self.env.read_path(arg)?;
        if at.is_root() {
            return Ok(self.prefix.trim_end_matches('/').to_owned());
        }
        Ok(format!("{}{}", self.prefix, at.display()))
    }

    /// Reads the flags a diff takes; returns whether the flag was one.
    fn diff_flag(&self, arg: &Arg, flags: &mut Flags<'_, '_>, d: &mut DiffArgs) -> Result<bool> {
        match arg {
            Arg::Long(l) if l == "cached" || l == "staged" => d.cached = true,
            Arg::Long(l) if l == "stat" => d.stat = true,
            Arg::Long(l) if l == "name-only" => d.name_only = true,
            Arg::Long(l) if l == "name-status" => d.name_status = true,
            Arg::Long(l) if l == "no-color" || l == "no-ext-diff" || l == "no-textconv" => {}
            Arg::Long(l) if l == "patch" => {}
            Arg::Short('p') => {}
            Arg::Short('U') => d.context = Some(flags.number()?),
            Arg::Long(l) if l == "unified" => d.context = Some(flags.number()?),
            Arg::Short('s') => d.no_patch = true,
            Arg::Long(l) if l == "no-patch" => d.no_patch = true,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Splits operands into revisions and paths: after `--` everything is
    /// a path; before it, what names a revision is one.
    fn operands(
        &self,
        operands: Vec<String>,
        after_dashes: Vec<String>,
        d: &mut DiffArgs,
    ) -> Result<()> {
        let mut paths_now = false;
        for op in operands {
            if !paths_now && self.repo.revparse(&op).is_ok() {
                d.revisions.push(op);
            } else {
                paths_now = true;
                d.paths.push(self.pathspec(&op)?);
            }
        }
        for op in after_dashes {
            d.paths.push(self.pathspec(&op)?);
        }
        Ok(())
    }

    fn options(&self, d: &DiffArgs) -> DiffOptions {
        let mut o = DiffOptions::new();
        for p in &d.paths {
            o.pathspec(p);
        }
        if let Some(n) = d.context {
            o.context_lines(n);
        }
        o
    }

    fn tree_of(&self, rev: &str) -> Result<git2::Tree<'_>> {
        Ok(self.repo.revparse_single(rev)?.peel_to_tree()?)
    }

    fn print_diff(&self, diff: &Diff<'_>, d: &DiffArgs, out: &mut Out<'_>) -> Result<()> {
        if d.stat {
            let stats = diff.stats()?;
            let buf = stats.to_buf(DiffStatsFormat::FULL, 80)?;
            let _ = out.write_all(&buf);
            return Ok(());
        }
        if d.no_patch {
            return Ok(());
        }
        let format = if d.name_only {
            DiffFormat::NameOnly
        } else if d.name_status {
            DiffFormat::NameStatus
        } else {
            DiffFormat::Patch
        };
        let mut timed_out = None;
        diff.print(format, |_, _, line| {
            if let Err(e) = self.env.in_time() {
                timed_out = Some(e);
                return false;
            }
            if matches!(line.origin(), '+' | '-' | ' ') {
                let _ = out.write_all(&[line.origin() as u8]);
            }
            let _ = out.write_all(line.content());
            true
        })
        .or_else(|e| if timed_out.is_some() { Ok(()) } else { Err(e) })?;
        match timed_out {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// `git diff [--cached] [--stat] [--name-only] [--name-status] [-U N]
    /// [REV [REV]] [-- PATH...]`
    fn diff(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let mut d = DiffArgs::default();
        let (operands, after) = self.read_args(args, &mut d)?;
        self.operands(operands, after, &mut d)?;
        let mut o = self.options(&d);
        let diff = match (d.revisions.as_slice(), d.cached) {
            ([], false) => self.repo.diff_index_to_workdir(None, Some(&mut o))?,
            ([], true) => {
                let head = self.repo.head().ok().and_then(|h| h.peel_to_tree().ok());
                self.repo
                    .diff_tree_to_index(head.as_ref(), None, Some(&mut o))?
            }
            ([rev], false) if rev.contains("..") => {
                let spec = self.repo.revparse(rev)?;
                let from = spec.from().map(Object::peel_to_tree).transpose()?;
                let to = spec.to().map(Object::peel_to_tree).transpose()?;
                self.repo
                    .diff_tree_to_tree(from.as_ref(), to.as_ref(), Some(&mut o))?
            }
            ([rev], false) => {
                let tree = self.tree_of(rev)?;
                self.repo
                    .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut o))?
            }
            ([rev], true) => {
                let tree = self.tree_of(rev)?;
                self.repo
                    .diff_tree_to_index(Some(&tree), None, Some(&mut o))?
            }
            ([a, b], _) => {
                let (a, b) = (self.tree_of(a)?, self.tree_of(b)?);
                self.repo
                    .diff_tree_to_tree(Some(&a), Some(&b), Some(&mut o))?
            }
            (_, _) => {
                return Err(self.env.unsupported(&d.revisions[2]).into());
            }
        };
        self.print_diff(&diff, &d, out)?;
        Ok(0)
    }

    /// Reads diff-like flags; returns the operands before and after `--`.
    fn read_args(&self, args: &[String], d: &mut DiffArgs) -> Result<(Vec<String>, Vec<String>)> {
        let (before, after) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let mut operands = Vec::new();
        while let Some(arg) = flags.next()? {
            if self.diff_flag(&arg, &mut flags, d)? {
                continue;
            }
            match arg {
                Arg::Operand(op) => operands.push(op),
                _ => return Err(flags.refuse().into()),
            }
        }
        Ok((operands, after))
    }

    /// `git status [-s|--short] [--porcelain] [-b] [-u[MODE]] [-- PATH...]`
    fn status(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let (before, after) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let (mut short, mut branch) = (false, false);
        let mut untracked = "normal".to_owned();
        let mut paths = Vec::new();
        while let Some(arg) = flags.next()? {
            match &arg {
                Arg::Short('s') => short = true,
                Arg::Long(l) if l == "short" || l == "porcelain" => short = true,
                Arg::Short('b') => branch = true,
                Arg::Long(l) if l == "branch" => branch = true,
                Arg::Long(l) if l == "long" => short = false,
                Arg::Long(l) if l == "no-color" => {}
                Arg::Short('u') | Arg::Long(_) if is_untracked(&arg) => {
                    untracked = flags.optional_value().unwrap_or_else(|| "all".to_owned());
                    if !["no", "normal", "all"].contains(&untracked.as_str()) {
                        return Err(flags.invalid(&untracked).into());
                    }
                }
                Arg::Operand(op) => paths.push(self.pathspec(op)?),
                _ => return Err(flags.refuse().into()),
            }
        }
        for p in &after {
            paths.push(self.pathspec(p)?);
        }
        let mut o = StatusOptions::new();
        o.include_untracked(untracked != "no")
            .recurse_untracked_dirs(untracked == "all")
            .include_ignored(false)
            .renames_head_to_index(true);
        for p in &paths {
            o.pathspec(p);
        }
        let statuses = self.repo.statuses(Some(&mut o))?;
        let head = self.repo.head().ok();
        let branch_name = head
            .as_ref()
            .and_then(|h| h.shorthand().ok().map(str::to_owned))
            .unwrap_or_else(|| "HEAD (no branch)".to_owned());
        if short {
            if branch {
                let _ = writeln!(out, "## {branch_name}");
            }
            for entry in statuses.iter() {
                self.env.in_time()?;
                let s = entry.status();
                let path = entry.path().unwrap_or("");
                let (x, y) = short_codes(s);
                let _ = writeln!(out, "{x}{y} {path}");
            }
            return Ok(0);
        }
        let _ = writeln!(out, "On branch {branch_name}");
        if head.is_none() {
            let _ = writeln!(out, "\nNo commits yet");
        }
        let section = |out: &mut Out<'_>, title: &str, items: &[(String, String)]| {
            if items.is_empty() {
                return;
            }
            let _ = writeln!(out, "\n{title}:");
            for (label, path) in items {
                if label.is_empty() {
                    let _ = writeln!(out, "\t{path}");
                } else {
                    let _ = writeln!(out, "\t{label:<12}{path}");
                }
            }
        };
        let (mut staged, mut unstaged, mut new) = (Vec::new(), Vec::new(), Vec::new());
        for entry in statuses.iter() {
            let s = entry.status();
            let path = entry.path().unwrap_or("").to_owned();
            if let Some(label) = index_label(s) {
                staged.push((format!("{label}:"), path.clone()));
            }
            if let Some(label) = worktree_label(s) {
                unstaged.push((format!("{label}:"), path.clone()));
            }
            if s.contains(Status::WT_NEW) {
                new.push((String::new(), path));
            }
        }
        section(out, "Changes to be committed", &staged);
        section(out, "Changes not staged for commit", &unstaged);
        section(out, "Untracked files", &new);
        if staged.is_empty() && unstaged.is_empty() && new.is_empty() {
            let _ = writeln!(out, "nothing to commit, working tree clean");
        }
        Ok(0)
    }

    /// `git log [--oneline] [-n N] [-N] [--stat] [REV|A..B] [-- PATH...]`
    fn log(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let (before, after) = split_dashes(args);
        let mut flags = Flags::with_count(&before, self.env);
        let (mut oneline, mut stat) = (false, false);
        let mut max = usize::MAX;
        let mut operands = Vec::new();
        while let Some(arg) = flags.next()? {
            match &arg {
                Arg::Long(l) if l == "oneline" => oneline = true,
                Arg::Long(l) if l == "stat" => stat = true,
                Arg::Long(l) if l == "no-color" || l == "no-decorate" => {}
                Arg::Short('n') => max = flags.number()?,
                Arg::Long(l) if l == "max-count" => max = flags.number()?,
                Arg::Operand(op) => operands.push(op.clone()),
                _ => return Err(flags.refuse().into()),
            }
        }
        let mut d = DiffArgs::default();
        self.operands(operands, after, &mut d)?;
        let mut walk = self.repo.revwalk()?;
        walk.set_sorting(Sort::TIME)?;
        match d.revisions.as_slice() {
            [] => {
                if walk.push_head().is_err() {
                    out.error("fatal", "your current branch does not have any commits yet");
                    return Ok(128);
                }
            }
            revs => {
                for rev in revs {
                    if rev.contains("..") {
                        walk.push_range(rev)?;
                    } else {
                        walk.push(self.repo.revparse_single(rev)?.peel_to_commit()?.id())?;
                    }
                }
            }
        }
        let mut shown = 0;
        for id in walk {
            if shown >= max {
                break;
            }
            self.env.in_time()?;
            let commit = self.repo.find_commit(id?)?;
            if !d.paths.is_empty() && !self.touches(&commit, &d)? {
                continue;
            }
            if shown > 0 && !oneline {
                let _ = writeln!(out);
            }
            shown += 1;
            self.header(&commit, oneline, out);
            if stat {
                let diff = self.commit_diff(&commit, &d)?;
                let _ = writeln!(out);
                self.print_diff(
                    &diff,
                    &DiffArgs {
                        stat: true,
                        ..DiffArgs::default()
                    },
                    out,
                )?;
            }
        }
        Ok(0)
    }

    /// Whether `commit` changes one of `d.paths`.
    fn touches(&self, commit: &Commit<'_>, d: &DiffArgs) -> Result<bool> {
        Ok(self.commit_diff(commit, d)?.deltas().len() > 0)
    }

    /// What `commit` changed against its first parent.
    fn commit_diff(&self, commit: &Commit<'_>, d: &DiffArgs) -> Result<Diff<'_>> {
        let tree = commit.tree()?;
        let parent = commit.parent(0).ok().map(|p| p.tree()).transpose()?;
        let mut o = self.options(d);
        Ok(self
            .repo
            .diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut o))?)
    }

    fn header(&self, commit: &Commit<'_>, oneline: bool, out: &mut Out<'_>) {
        let id = commit.id();
        if oneline {
            let summary = commit.summary().ok().flatten().unwrap_or("");
            let _ = writeln!(out, "{} {summary}", short_id(self.repo, id));
            return;
        }
        let author = commit.author();
        let _ = writeln!(out, "commit {id}");
        if commit.parent_count() > 1 {
            let parents: Vec<String> = commit
                .parent_ids()
                .map(|p| short_id(self.repo, p))
                .collect();
            let _ = writeln!(out, "Merge: {}", parents.join(" "));
        }
        let _ = writeln!(
            out,
            "Author: {} <{}>",
            author.name().unwrap_or(""),
            author.email().unwrap_or("")
        );
        let _ = writeln!(out, "Date:   {}", git_date(author.when()));
        let _ = writeln!(out);
        for line in commit.message().unwrap_or("").trim_end().lines() {
            if line.is_empty() {
                let _ = writeln!(out);
            } else {
                let _ = writeln!(out, "    {line}");
            }
        }
    }

    /// `git show [--stat] [--name-only] [--name-status] [--oneline] [-s]
    /// [REV] [-- PATH...]`; a blob (`REV:path`) is printed as it is.
    fn show(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let (before, after) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let mut d = DiffArgs::default();
        let mut oneline = false;
        let mut revs = Vec::new();
        while let Some(arg) = flags.next()? {
            if self.diff_flag(&arg, &mut flags, &mut d)? {
                continue;
            }
            match &arg {
                Arg::Long(l) if l == "oneline" => oneline = true,
                Arg::Operand(op) => revs.push(op.clone()),
                _ => return Err(flags.refuse().into()),
            }
        }
        for p in &after {
            d.paths.push(self.pathspec(p)?);
        }
        if revs.is_empty() {
            revs.push("HEAD".to_owned());
        }
        for (i, rev) in revs.iter().enumerate() {
            let object = self.repo.revparse_single(rev)?;
            match object.kind() {
                Some(ObjectType::Blob) => {
                    if let Some(blob) = object.as_blob() {
                        let _ = out.write_all(blob.content());
                    }
                }
                Some(ObjectType::Tree) => {
                    if let Some(tree) = object.as_tree() {
                        let _ = writeln!(out, "tree {rev}\n");
                        for entry in tree.iter() {
                            let slash = if entry.kind() == Some(ObjectType::Tree) {
                                "/"
                            } else {
                                ""
                            };
                            let _ = writeln!(out, "{}{slash}", entry.name().unwrap_or(""));
                        }
                    }
                }
                _ => {
                    let commit = object.peel_to_commit()?;
                    if i > 0 {
                        let _ = writeln!(out);
                    }
                    self.header(&commit, oneline, out);
                    let diff = self.commit_diff(&commit, &d)?;
                    if !d.no_patch && diff.deltas().len() > 0 {
                        if !oneline || d.stat {
                            let _ = writeln!(out);
                        }
                        self.print_diff(&diff, &d, out)?;
                    }
                }
            }
        }
        Ok(0)
    }

    /// `git branch [-a] [-r] [-v] [--show-current] [--list]`: lists only.
    fn branch(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let mut flags = Flags::new(args, self.env);
        let (mut all, mut remote, mut verbose, mut current) = (false, false, false, false);
        while let Some(arg) = flags.next()? {
            match &arg {
                Arg::Short('a') => all = true,
                Arg::Long(l) if l == "all" => all = true,
                Arg::Short('r') => remote = true,
                Arg::Long(l) if l == "remotes" => remote = true,
                Arg::Short('v') => verbose = true,
                Arg::Long(l) if l == "verbose" => verbose = true,
                Arg::Long(l) if l == "show-current" => current = true,
                Arg::Long(l) if l == "list" || l == "no-color" => {}
                Arg::Operand(name) => {
                    return Err(TaskError::new(
                        ErrorType::CommandNotAllowed,
                        format!(
                            "`{}`: the built-in `git branch` only lists branches; creating `{name}` needs an approved command",
                            self.env.shown
                        ),
                    )
                    .into());
                }
                _ => return Err(flags.refuse().into()),
            }
        }
        let head = self.repo.head().ok();
        let head_name = head
            .as_ref()
            .and_then(|h| h.shorthand().ok().map(str::to_owned));
        if current {
            if let Some(name) = head_name.filter(|_| head.as_ref().is_some_and(|h| h.is_branch())) {
                let _ = writeln!(out, "{name}");
            }
            return Ok(0);
        }
        let filter = match (all, remote) {
            (true, _) => None,
            (false, true) => Some(BranchType::Remote),
            (false, false) => Some(BranchType::Local),
        };
        let mut rows = Vec::new();
        for b in self.repo.branches(filter)? {
            let (branch, kind) = b?;
            let name = branch.name()?.unwrap_or("").to_owned();
            let shown = if kind == BranchType::Remote && all {
                format!("remotes/{name}")
            } else {
                name.clone()
            };
            let is_head = branch.is_head();
            let detail = if verbose {
                branch
                    .get()
                    .peel_to_commit()
                    .map(|c| {
                        format!(
                            " {} {}",
                            short_id(self.repo, c.id()),
                            c.summary().ok().flatten().unwrap_or("")
                        )
                    })
                    .unwrap_or_default()
            } else {
                String::new()
            };
            rows.push((if is_head { "* " } else { "  " }, shown, detail));
        }
        rows.sort_by(|a, b| a.1.cmp(&b.1));
        for (mark, name, detail) in rows {
            let _ = writeln!(out, "{mark}{name}{detail}");
        }
        Ok(0)
    }

    /// `git ls-files [-c] [-m] [-o] [--exclude-standard] [-- PATH...]`
    fn ls_files(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let (before, after) = split_dashes(args);
        let mut flags = Flags::new(&before, self.env);
        let (mut cached, mut modified, mut others) = (false, false, false);
        let mut paths = Vec::new();
        while let Some(arg) = flags.next()? {
            match &arg {
                Arg::Short('c') => cached = true,
                Arg::Long(l) if l == "cached" => cached = true,
                Arg::Short('m') => modified = true,
                Arg::Long(l) if l == "modified" => modified = true,
                Arg::Short('o') => others = true,
                Arg::Long(l) if l == "others" => others = true,
                Arg::Long(l) if l == "exclude-standard" => {}
                Arg::Operand(op) => paths.push(self.pathspec(op)?),
                _ => return Err(flags.refuse().into()),
            }
        }
        for p in &after {
            paths.push(self.pathspec(p)?);
        }
        if !modified && !others {
            cached = true;
        }
        let wanted = |path: &str| {
            paths.is_empty()
                || paths
                    .iter()
                    .any(|p| p.is_empty() || path == p || path.starts_with(&format!("{p}/")))
        };
        let mut rows = Vec::new();
        if cached {
            let index = self.repo.index()?;
            for entry in index.iter() {
                let path = String::from_utf8_lossy(&entry.path).into_owned();
                if wanted(&path) {
                    rows.push(path);
                }
            }
        }
        if modified || others {
            let mut o = StatusOptions::new();
            o.include_untracked(others).recurse_untracked_dirs(true);
            for entry in self.repo.statuses(Some(&mut o))?.iter() {
                let s = entry.status();
                let path = entry.path().unwrap_or("").to_owned();
                let hit = (modified && s.intersects(Status::WT_MODIFIED | Status::WT_DELETED))
                    || (others && s.contains(Status::WT_NEW));
                if hit && wanted(&path) {
                    rows.push(path);
                }
            }
        }
        for row in rows {
            self.env.in_time()?;
            let _ = writeln!(out, "{row}");
        }
        Ok(0)
    }

    /// `git stash list`, `git stash show [-p] [--stat] [stash@{N}]`. The
    /// subcommands that change the tree are refused: a stash is a change of
    /// the whole work tree, which may reach beyond the root.
    fn stash(&self, args: &[String], out: &mut Out<'_>) -> Result<i32> {
        let (sub, rest) = match args.split_first() {
            Some((sub, rest)) => (sub.as_str(), rest),
            None => ("list", &[][..]),
        };
        let entries = match self.repo.reflog("refs/stash") {
            Ok(log) => log
                .iter()
                .map(|e| {
                    (
                        e.id_new(),
                        e.message().ok().flatten().unwrap_or("").to_owned(),
                    )
                })
                .collect::<Vec<_>>(),
            Err(_) => Vec::new(),
        };
        match sub {
            "list" => {
                let mut flags = Flags::new(rest, self.env);
                if flags.next()?.is_some() {
                    return Err(flags.refuse().into());
                }
                for (i, (_, message)) in entries.iter().enumerate() {
                    let _ = writeln!(out, "stash@{{{i}}}: {message}");
                }
                Ok(0)
            }
            "show" => {
                let mut flags = Flags::new(rest, self.env);
                let mut d = DiffArgs {
                    stat: true,
                    ..DiffArgs::default()
                };
                let mut which = 0usize;
                while let Some(arg) = flags.next()? {
                    match &arg {
                        Arg::Short('p') => d.stat = false,
                        Arg::Long(l) if l == "patch" => d.stat = false,
                        Arg::Long(l) if l == "stat" => d.stat = true,
                        Arg::Operand(op) => {
                            which = op
                                .strip_prefix("stash@{")
                                .and_then(|n| n.strip_suffix('}'))
                                .or(Some(op.as_str()))
                                .and_then(|n| n.parse().ok())
                                .ok_or_else(|| flags.invalid(op))?;
                        }
                        _ => return Err(flags.refuse().into()),
                    }
                }
                let Some((id, _)) = entries.get(which) else {
                    out.error("error", format!("stash@{{{which}}} is not a valid stash"));
                    return Ok(1);
                };
                let commit = self.repo.find_commit(*id)?;
                let diff = self.commit_diff(&commit, &DiffArgs::default())?;
                self.print_diff(&diff, &d, out)?;
                Ok(0)
            }
            other => Err(TaskError::new(
                ErrorType::CommandNotAllowed,
                format!(
                    "`{}`: the built-in `git stash` only lists and shows stashes; `stash {other}` needs an approved command",
                    self.env.shown
                ),
            )
            .into()),
        }
    }
}

fn is_untracked(arg: &Arg) -> bool {
    matches!(arg, Arg::Short('u')) || matches!(arg, Arg::Long(l) if l == "untracked-files")
}

/// The arguments before `--` and after it.
fn split_dashes(args: &[String]) -> (Vec<String>, Vec<String>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.to_vec(), Vec::new()),
    }
}

/// `XY` of `git status --short`.
fn short_codes(s: Status) -> (char, char) {
    if s.contains(Status::WT_NEW) && !s.intersects(Status::INDEX_NEW | Status::INDEX_MODIFIED) {
        return ('?', '?');
    }
    let x = if s.contains(Status::INDEX_NEW) {
        'A'
    } else if s.contains(Status::INDEX_MODIFIED) {
        'M'
    } else if s.contains(Status::INDEX_DELETED) {
        'D'
    } else if s.contains(Status::INDEX_RENAMED) {
        'R'
    } else if s.contains(Status::INDEX_TYPECHANGE) {
        'T'
    } else {
        ' '
    };
    let y = if s.contains(Status::WT_MODIFIED) {
        'M'
    } else if s.contains(Status::WT_DELETED) {
        'D'
    } else if s.contains(Status::WT_TYPECHANGE) {
        'T'
    } else if s.contains(Status::WT_RENAMED) {
        'R'
    } else {
        ' '
    };
    (x, y)
}

fn index_label(s: Status) -> Option<&'static str> {
    if s.contains(Status::INDEX_NEW) {
        Some("new file")
    } else if s.contains(Status::INDEX_MODIFIED) {
        Some("modified")
    } else if s.contains(Status::INDEX_DELETED) {
        Some("deleted")
    } else if s.contains(Status::INDEX_RENAMED) {
        Some("renamed")
    } else if s.contains(Status::INDEX_TYPECHANGE) {
        Some("typechange")
    } else {
        None
    }
}

fn worktree_label(s: Status) -> Option<&'static str> {
    if s.contains(Status::WT_MODIFIED) {
        Some("modified")
    } else if s.contains(Status::WT_DELETED) {
        Some("deleted")
    } else if s.contains(Status::WT_TYPECHANGE) {
        Some("typechange")
    } else {
        None
    }
}

/// The shortest unambiguous prefix of `id`, at least 7 digits.
fn short_id(repo: &Repository, id: Oid) -> String {
    repo.find_object(id, None)
        .ok()
        .and_then(|o| o.short_id().ok())
        .and_then(|b| b.as_str().ok().map(str::to_owned))
        .unwrap_or_else(|| id.to_string()[..7].to_owned())
}

/// git's default date: `Tue Nov 24 19:04:07 2026 +0000`, in the
/// signature's own offset.
fn git_date(when: git2::Time) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let offset = i64::from(when.offset_minutes());
    let local = when.seconds() + offset * 60;
    let days = local.div_euclid(86_400);
    let secs = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let weekday = DAYS[usize::try_from(days.rem_euclid(7)).unwrap_or(0)];
    let month = MONTHS[usize::try_from(m - 1).unwrap_or(0).min(11)];
    let sign = if offset < 0 { '-' } else { '+' };
    let off = offset.abs();
    format!(
        "{weekday} {month} {d} {:02}:{:02}:{:02} {y} {sign}{:02}{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        off / 60,
        off % 60
    )
}

/// Year, month (1–12) and day of a day count since 1970-01-01 (Howard
/// Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_like_git() {
        let t = git2::Time::new(1_700_000_000, 0);
        assert_eq!(git_date(t), "Tue Nov 14 22:13:20 2023 +0000");
        let t = git2::Time::new(1_700_000_000, -90);
        assert_eq!(git_date(t), "Tue Nov 14 20:43:20 2023 -0130");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }
}
