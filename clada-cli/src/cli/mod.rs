//! Command-line arguments, as clap reads them.

pub(crate) mod allow;
pub(crate) mod apply;
pub(crate) mod check;
pub(crate) mod convert;
pub(crate) mod mcp;
pub(crate) mod stream;
mod streamed;
pub(crate) mod undo;
pub(crate) mod watch;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clada_markers::engine::Author;
use clada_markers::units;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory as _, Parser, Subcommand, ValueEnum};

/// Apply edit documents written with git-style conflict markers.
#[derive(Debug, Parser)]
#[command(name = "clada", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// The command line, or exit with clap's error (status 2). For the
    /// mistakes a newcomer makes, the error's tip says what to write
    /// instead of clap's `to pass '--json' as a value, use '-- --json'`:
    /// an output format named as a flag (`--json` for `--format json`),
    /// a root given to a command that takes none (`check -C DIR`).
    pub(crate) fn parse_args() -> Self {
        let args: Vec<OsString> = std::env::args_os().collect();
        match Self::try_parse_from(&args) {
            Ok(cli) => cli,
            Err(mut err) => {
                if let Some(tip) = mistake_tip(&err, &args) {
                    err.insert(ContextKind::Suggested, ContextValue::StyledStrs(vec![tip]));
                }
                err.exit()
            }
        }
    }
}

/// What to write instead, when `err` is an unknown flag that another
/// flag of the same command says (see [`Cli::parse_args`]).
fn mistake_tip(err: &clap::Error, args: &[OsString]) -> Option<clap::builder::StyledStr> {
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    // The subcommand: the first word that is not a flag (`clada` itself
    // takes only --help and --version, which take no value).
    let name = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| !a.starts_with('-'))?;
    let mut cli = Cli::command();
    let styles = cli.get_styles().clone();
    let (valid, invalid) = (styles.get_valid(), styles.get_invalid());
    let sub = cli.find_subcommand_mut(name)?;
    sub.build();
    let long = |name: &str| sub.get_arguments().find(|a| a.get_long() == Some(name));
    let flag = arg.split('=').next().unwrap_or(arg);
    let mut tip = clap::builder::StyledStr::new();
    if let Some(value) = flag.strip_prefix("--")
        && let Some(format) = long("format")
        && format
            .get_possible_values()
            .iter()
            .any(|v| v.matches(value, false))
    {
        let _ = write!(
            tip,
            "the output format is a value of --format: '{valid}--format {value}{valid:#}', not '{invalid}{flag}{invalid:#}'"
        );
        return Some(tip);
    }
    if (flag == "--root" || flag.starts_with("-C")) && long("root").is_none() {
        let _ = write!(tip, "'{invalid}clada {name}{invalid:#}' takes no root (-C)");
        if matches!(name, "check" | "convert") {
            let _ = write!(tip, ": it reads the document alone and touches no file");
        }
        if name == "check" {
            let _ = write!(
                tip,
                "; '{valid}clada apply --dry-run -C DIR{valid:#}' tries a document against a directory, changing nothing"
            );
        }
        return Some(tip);
    }
    None
}

#[derive(Debug, Subcommand)]
// Each subcommand's flags are built only when it runs: a run builds
// one command's, not every command's (`--help`, completions and the manual
// build them all, as before).
#[command(defer = true)]
pub(crate) enum Command {
    /// Carry out a document against a directory.
    ///
    /// Exit status: 0 when every task succeeded and the document has no
    /// error, 1 otherwise, 2 when the command line itself is wrong (unknown
    /// flag, unreadable input, missing root).
    #[command(
        after_help = "Examples:\n  clada apply reply.md\n  clada apply -C ~/project --format json < reply.md\n  cat reply.md | clada apply --error-detail full"
    )]
    Apply(ApplyArgs),
    /// Parse and validate a document; touch nothing but, with --fix, the
    /// document.
    ///
    /// Exit status: 0 when the document (with --fix or --diff: the document
    /// as fixed) has no error, 1 when it has one, 2 when it cannot be read
    /// or written or a flag is wrong.
    #[command(
        after_help = "Examples:\n  clada check examples/tour.md\n  cat reply.txt | clada check --format json\n  clada check --diff reply.md\n  clada check --fix reply.md"
    )]
    Check(CheckArgs),
    /// Take back the last run on a root.
    ///
    /// With git (the run committed its changes), a commit that reverts the
    /// run's commit; refused when a later commit touched the same files or
    /// they have uncommitted changes. Without git, the contents the run
    /// replaced, kept in clada's state directory (at most 64 MiB and 10,000
    /// paths a run); refused when a file changed since the run. One run
    /// back: undo forgets the run it took back. Exit status: 0 when undone,
    /// 1 when refused or there is nothing to undo, 2 when a flag is wrong.
    #[command(after_help = "Examples:
  clada undo
  clada undo -C ~/project --format json")]
    Undo(UndoArgs),
    /// Approve a command for RUN tasks, list approvals, or withdraw one.
    ///
    /// Approved commands run as `sh -c COMMAND` when a RUN task's body is
    /// exactly that text and it runs where the approval says: at the root,
    /// or in the directory given with --dir (a RUN's `dir`), never where
    /// git would find a repository other than the root's. They are kept
    /// outside the tree, in
    /// $XDG_CONFIG_HOME/clada/approvals.json (else ~/.config/clada/),
    /// under the root's canonical path; --list says where.
    #[command(
        after_help = "Examples:\n  clada allow 'npm test'\n  clada allow --list\n  clada allow --remove 'npm test'\n  clada allow -C ~/project 'cargo test --workspace'\n  clada allow --dir web 'npm test'"
    )]
    Allow(AllowArgs),
    /// Print a system prompt that teaches a language model to write
    /// documents clada can apply.
    #[command(after_help = "Example:\n  clada prompt > system-prompt.md")]
    Prompt,
    /// Print shell completions.
    #[command(
        after_help = "Examples:\n  clada completions bash > ~/.local/share/bash-completion/completions/clada\n  clada completions zsh > ~/.zfunc/_clada"
    )]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Serve the Language Server Protocol on standard input and output.
    ///
    /// Diagnostics as you type, then a warning on each task that would fail
    /// against the root (a dry run, once the document has settled);
    /// symbols, hover (the dry run, with the diff), quick fixes and
    /// formatting. For documents of language clada or markdown and files
    /// named *.clada, *.md or *.markdown, in every dialect `check` reads; in
    /// Markdown, fences of other languages (text, python, sh…) are not read.
    #[command(after_help = "Example (an editor starts it):\n  clada lsp -C ~/project")]
    Lsp {
        /// The workspace root a hover's dry run reads; without it, the
        /// client's root folder, else the working directory.
        #[arg(short = 'C', long = "root", value_name = "DIR")]
        root: Option<PathBuf>,

        /// How the dry run of warnings and hover finds an edit's text (as for
        /// `apply`).
        #[arg(long = "match", value_enum, value_name = "exact|whitespace", default_value_t = MatchArg::Whitespace)]
        matching: MatchArg,
        /// How long a hover's dry run may take: past it, the tasks not
        /// planned yet are reported skipped, and a task being planned stops.
        #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = units::duration)]
        hover_timeout: Duration,
    },
    /// Serve the Model Context Protocol on standard input and output.
    ///
    /// Tools `apply` and `check` take a document's text and return the text
    /// report as content and the JSON report as structured content; the
    /// server's instructions and its prompt `clada` are the text of `clada
    /// prompt`. The root and every policy flag are fixed here, when the
    /// server starts: a call cannot widen them (its `dry_run`, `atomic` and
    /// `match` only narrow the server's). Takes the flags of `apply` that
    /// set a policy, and --error-detail for the text report; no FILE (the
    /// documents come in calls), --format, --output-mode, --stream or
    /// --no-prompt (it never prompts: stdin is the protocol).
    #[command(after_help = "Example (an agent starts it):\n  clada mcp -C ~/project")]
    Mcp(McpArgs),
    /// Follow a file and apply each unit once, when it is complete there.
    ///
    /// For a person who pastes a model's replies into FILE: each unit is
    /// applied the first time it appears complete, and never again (units
    /// are remembered by the hash of their text in clada's state directory,
    /// not in the tree, shared by every watch of the file). A unit that
    /// appears while a unit's command runs is refused, never applied.
    /// Takes the flags of `apply` but --dry-run, --stream (a watch always
    /// applies unit by unit) and --no-prompt (it never prompts); --format
    /// is text or jsonl; --dialect names the dialect FILE is written in
    /// (`auto` reads clada's). Ctrl-C stops.
    #[command(after_help = "Example:\n  clada watch replies.md -C ~/project")]
    Watch(WatchArgs),
    /// Rewrite a document in another dialect.
    ///
    /// Reads FILE (or standard input) in --from, and prints its tasks in
    /// --to: canonical clada through the printer, aider's blocks, codex's
    /// patches or a unified diff. Prose is dropped. A task the target cannot express is an
    /// error that names it; nothing is printed then.
    #[command(
        after_help = "Examples:\n  clada convert --from aider reply.md > reply.clada\n  clada convert --to codex changes.md\n  git diff | clada convert --from udiff"
    )]
    Convert(ConvertArgs),
    /// Print the JSON Schema of a report.
    ///
    /// The report of `check --format json` or `apply --format json`; the
    /// same as grammar/schema/*.json in the repository.
    #[command(
        after_help = "Examples:\n  clada schema apply > apply.schema.json\n  clada schema check"
    )]
    Schema {
        /// Which report.
        #[arg(value_enum)]
        report: SchemaKind,
    },
    /// Print the manual page (roff).
    #[command(after_help = "Example:\n  clada man > clada.1 && man ./clada.1")]
    Man,
}

#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    /// The directory whose last run to take back, e.g. -C ~/project.
    #[arg(short = 'C', long = "root", value_name = "DIR", default_value = ".")]
    pub(crate) root: PathBuf,

    /// text, or json (`{"ok", "restored", "commit", "error"}`).
    #[arg(long, value_enum, value_name = "text|json", default_value = "text")]
    pub(crate) format: UndoFormat,

    /// Author and committer of the commit that reverts, with git.
    #[arg(long, value_name = "AUTHOR", default_value = "clada <clada@localhost>")]
    pub(crate) git_author: Author,
}

/// What `clada undo` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum UndoFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// The document, e.g. reply.md; `-` or nothing reads standard input.
    pub(crate) file: Option<PathBuf>,

    /// The dialect to read.
    #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
    pub(crate) from: DialectArg,

    /// The dialect to write.
    #[arg(long, value_enum, default_value_t = TargetDialect::Clada)]
    pub(crate) to: TargetDialect,
}

/// The dialects `clada convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TargetDialect {
    Clada,
    Aider,
    Codex,
    Udiff,
}

/// The reports `clada schema` describes.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum SchemaKind {
    Check,
    Apply,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The document to check, e.g. reply.md; `-` or nothing reads standard
    /// input.
    pub(crate) file: Option<PathBuf>,

    /// How to print the result.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub(crate) format: CheckFormat,

    /// Accept absolute paths and paths that climb out of the root.
    #[arg(long)]
    pub(crate) allow_escape: bool,

    /// The edit format of the document: clada's own, aider's
    /// SEARCH/REPLACE blocks, codex's patches, CML XML, unified diffs,
    /// Cline's and Roo's blocks, or `auto` (clada unless no opener has
    /// attributes and the document holds another's blocks).
    #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
    pub(crate) dialect: DialectArg,

    /// Make the fixes the diagnostics offer (the lines the report shows
    /// under `Note: the fix makes …`), then check the result: FILE is
    /// rewritten atomically (never through a link); a document from
    /// standard input is printed fixed to standard output. A value only
    /// the model can give (`path=""`) is not filled in.
    #[arg(long, conflicts_with = "diff")]
    pub(crate) fix: bool,

    /// Print the fixes as a unified diff of the document, writing nothing.
    #[arg(long)]
    pub(crate) diff: bool,
}

/// `--dialect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DialectArg {
    Auto,
    Clada,
    Aider,
    Codex,
    Cml,
    Udiff,
    Cline,
}

impl DialectArg {
    /// The dialect named, if one is (`auto` names none): the flag's
    /// value is the dialect's own name.
    fn named(self) -> Option<clada_markers::dialect::Dialect> {
        let value = self.to_possible_value()?;
        clada_markers::dialect::Dialect::named(value.get_name())
    }

    /// The dialect to read `text` in.
    pub(crate) fn of(self, text: &str) -> clada_markers::dialect::Dialect {
        self.named()
            .unwrap_or_else(|| clada_markers::dialect::detect(text))
    }

    /// The dialect a stream is read in (`--stream`, `watch`): `auto` reads
    /// clada's, whose prose is checked for the others (§11.5).
    pub(crate) fn streamed(self) -> clada_markers::dialect::Dialect {
        self.named()
            .unwrap_or(clada_markers::dialect::Dialect::Clada)
    }

    /// `text` read in its dialect ([`DialectArg::of`]), and that dialect.
    pub(crate) fn read(
        self,
        text: &str,
        allow_escape: bool,
    ) -> (clada_markers::dialect::Dialect, clada_markers::Document<'_>) {
        let options = clada_markers::ParseOptions { allow_escape };
        match self.named() {
            Some(dialect) => (
                dialect,
                clada_markers::dialect::parse_dialect(text, dialect, options),
            ),
            None => clada_markers::read(text, options),
        }
    }
}

#[derive(Clone, Debug, Args)]
pub(crate) struct ApplyArgs {
    /// The document to apply, e.g. reply.md; `-` or nothing reads standard
    /// input.
    pub(crate) file: Option<PathBuf>,

    /// The flags that set a run's policy, shared with `mcp` and `watch`.
    #[command(flatten)]
    pub(crate) policy: Policy,

    /// How to print the result: text as it happens, or one JSON or XML
    /// object at the end, e.g. --format json.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    /// The edit format of the document (as for `check`).
    #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
    pub(crate) dialect: DialectArg,

    /// How much to say about a failure, e.g. --error-detail full to see the
    /// task's source and the diff to the closest text.
    #[arg(long, value_enum, default_value_t = ErrorDetail::Minimal)]
    pub(crate) error_detail: ErrorDetail,

    /// When to print command output: as it comes, after each task, or not
    /// at all (text format only), e.g. --output-mode buffer.
    #[arg(long, value_enum, default_value_t = OutputMode::Stream)]
    pub(crate) output_mode: OutputMode,

    /// Never ask on the terminal: unapproved commands fail with the
    /// `clada allow` command that would approve them. Agents want this.
    #[arg(long)]
    pub(crate) no_prompt: bool,

    /// Plan every task against the files as they are and report what would
    /// change (a diff per file), writing nothing, running no command and
    /// committing nothing. Built-in commands run on the plan, checked as
    /// for real. The exit code is the real run's.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// After the run, show what it changed: a line per path with the lines
    /// added and removed, and each file's unified diff (cut at 400 lines a
    /// file, 2000 in all; the report says how many lines it left out). What
    /// commands changed is not shown. JSON always has it (`changes`).
    #[arg(long)]
    pub(crate) diff: bool,

    /// Apply each unit as soon as its closer is read from the input, the
    /// stream going on after a malformed unit or one that is not UTF-8
    /// (in the --dialect named; auto reads clada's own format; no
    /// prompting: stdin is the document). Each unit is its own run, with
    /// its own lock and, in a repository, its own commit.
    #[arg(long)]
    pub(crate) stream: bool,

    /// Accept a document without any task (prose only, an empty input):
    /// by default it is an error (no_tasks, exit 1), as `git apply`
    /// refuses a patch with nothing in it. For pipelines that pass every
    /// reply.
    #[arg(long)]
    pub(crate) allow_empty: bool,
}

// The flags of `apply` that set a run's policy, for the commands that
// take only those (`mcp`, `watch`): each says what `apply`'s says (a test
// holds them together). Not a doc comment: clap would take it for the
// about text of every command that flattens it (subcommands are deferred).
#[derive(Clone, Debug, Args)]
pub(crate) struct Policy {
    /// The directory tasks act on, e.g. -C ~/project.
    #[arg(short = 'C', long = "root", value_name = "DIR", default_value = ".")]
    pub(crate) root: PathBuf,

    /// Accept absolute paths and paths that climb out of the root, e.g.
    /// path="/etc/hosts" or path="../shared/x". Links are refused anyway.
    #[arg(long)]
    pub(crate) allow_escape: bool,

    /// How an edit finds its text: `exact`, as written only; `whitespace`
    /// (the default), when it does not occur as written, also lines equal
    /// but for one uniform indentation shift and white space at their
    /// ends, the replacement re-indented in the file's characters.
    #[arg(long = "match", value_enum, value_name = "exact|whitespace", default_value_t = MatchArg::Whitespace)]
    pub(crate) matching: MatchArg,

    /// Limit of an approved command (built-in ones: 5s, or this if
    /// smaller), e.g. --timeout 2m.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = units::duration)]
    pub(crate) timeout: Duration,

    /// Stop after this long: the running command is killed and the tasks
    /// not yet started are skipped, e.g. --total-timeout 10m.
    #[arg(long, value_name = "DURATION", value_parser = units::duration)]
    pub(crate) total_timeout: Option<Duration>,

    /// Output kept (and shown) per command; the rest is read and dropped,
    /// e.g. --max-output 1MiB.
    #[arg(long, value_name = "SIZE", default_value = "10MB", value_parser = units::size)]
    pub(crate) max_output: usize,

    /// Run every command as an approved one, in `sh -c` (for sandboxes and
    /// CI). Turns --sandbox on unless --sandbox=off is given.
    #[arg(long)]
    pub(crate) allow_any_command: bool,

    /// Run approved and prompted commands confined (Linux Landlock): they
    /// may write only below the root and a temporary directory of their
    /// own (TMPDIR, removed when they end) and open no TCP connection; where the kernel cannot confine, they do not run
    /// (sandbox_unavailable). --sandbox alone means on.
    #[arg(long, value_enum, value_name = "on|off", num_args = 0..=1, require_equals = true, default_missing_value = "on")]
    pub(crate) sandbox: Option<Switch>,

    /// Take an exclusive lock on this file first, e.g. /tmp/clada.lock
    /// (by default: a file in clada's runtime directory named after the
    /// repository or the root), so that runs on the same tree take turns.
    /// A link as the file itself is never followed.
    #[arg(long, value_name = "PATH")]
    pub(crate) lock_file: Option<PathBuf>,

    /// Do not commit before and after the tasks. By default, in a git work
    /// tree, clada commits only what the run changes: first the
    /// uncommitted changes of the files the tasks are about to change, then
    /// the files the tasks wrote, moved and removed and the tracked files
    /// the commands changed. Never an untracked file it did not write, nor
    /// an ignored one.
    #[arg(long)]
    pub(crate) no_git: bool,

    /// Also commit the untracked files approved commands made (never
    /// ignored ones); by default a command's changes are committed in
    /// tracked files only.
    #[arg(long, conflicts_with = "no_git")]
    pub(crate) commit_new_files: bool,

    /// Author and committer of the commits, e.g. "Ada <ada@example.com>"
    /// or a bare name.
    #[arg(long, value_name = "AUTHOR", default_value = "clada <clada@localhost>")]
    pub(crate) git_author: Author,

    /// Roll back a unit that fails, so that it leaves no trace
    /// (--atomic=document: the whole document or nothing). What a command
    /// did cannot be undone; the report says so.
    #[arg(long, value_enum, value_name = "unit|document", num_args = 0..=1, require_equals = true, default_missing_value = "unit")]
    pub(crate) atomic: Option<AtomicArg>,

    /// How long to wait for the lock, e.g. 10s or 500ms.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = units::duration)]
    pub(crate) lock_timeout: Duration,
}

impl Policy {
    /// The run's settings, from these flags (`--dry-run` aside): the one
    /// place a policy flag becomes a setting.
    pub(crate) fn settings(&self) -> clada_markers::Settings {
        clada_markers::Settings {
            allow_escape: self.allow_escape,
            dry_run: false,
            changes: true,
            atomic: self.atomic.map(|a| match a {
                AtomicArg::Unit => clada_markers::engine::Atomic::Unit,
                AtomicArg::Document => clada_markers::engine::Atomic::Document,
            }),
            matching: self.matching.mode(),
            total_timeout: self.total_timeout,
            git: (!self.no_git).then(|| self.git_author.clone()),
            commit_untracked: self.commit_new_files,
            lock_file: self.lock_file.clone(),
            lock_timeout: self.lock_timeout,
            timeout: self.timeout,
            max_output: self.max_output,
            allow_any: self.allow_any_command,
            sandbox: match self.sandbox {
                Some(Switch::On) => true,
                Some(Switch::Off) => false,
                None => self.allow_any_command,
            },
            sandbox_temp: None,
            approved: Vec::new(),
            dialect: clada_markers::Dialect::Clada,
            allow_empty: false,
            cancel: Default::default(),
        }
    }
}

impl ApplyArgs {
    /// The run's settings, from these flags: the one place a flag of
    /// `apply` becomes a setting.
    pub(crate) fn settings(&self) -> clada_markers::Settings {
        clada_markers::Settings {
            dry_run: self.dry_run,
            allow_empty: self.allow_empty,
            // What the run changed costs a second read of each file it
            // writes: only for a report that shows it.
            changes: self.diff || self.format == Format::Json,
            ..self.policy.settings()
        }
    }
}

// The flags of `clada mcp`: a policy, the dialect, a dry run, and how
// much the text report says (not a doc comment: see `Policy`).
#[derive(Clone, Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    pub(crate) policy: Policy,

    /// The edit format of the document (as for `check`).
    #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
    pub(crate) dialect: DialectArg,

    /// How much to say about a failure, e.g. --error-detail full to see the
    /// task's source and the diff to the closest text.
    #[arg(long, value_enum, default_value_t = ErrorDetail::Minimal)]
    pub(crate) error_detail: ErrorDetail,

    /// Plan every task against the files as they are and report what would
    /// change (a diff per file), writing nothing, running no command and
    /// committing nothing. Built-in commands run on the plan, checked as
    /// for real. The exit code is the real run's.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

impl McpArgs {
    /// The run every call starts from: `apply --format json --no-prompt`
    /// with these flags.
    pub(crate) fn into_apply(self) -> ApplyArgs {
        ApplyArgs {
            file: None,
            policy: self.policy,
            format: Format::Json,
            dialect: self.dialect,
            error_detail: self.error_detail,
            output_mode: OutputMode::Buffer,
            no_prompt: true,
            dry_run: self.dry_run,
            // A call asks for the diffs (`diff`); the JSON has them anyway.
            diff: false,
            stream: false,
            allow_empty: false,
        }
    }
}

// The flags of `clada watch`: the file, a policy, and how to report
// (not a doc comment: see `Policy`).
#[derive(Clone, Debug, Args)]
pub(crate) struct WatchArgs {
    /// The file to follow, e.g. replies.md.
    pub(crate) file: PathBuf,

    #[command(flatten)]
    pub(crate) policy: Policy,

    /// The edit format of the document (as for `check`).
    #[arg(long, value_enum, default_value_t = DialectArg::Auto)]
    pub(crate) dialect: DialectArg,

    /// How to print the result: text as each unit ends, or one JSON object
    /// per task and a summary (JSON Lines), e.g. --format jsonl.
    #[arg(long, value_enum, default_value_t = WatchFormat::Text)]
    pub(crate) format: WatchFormat,

    /// How much to say about a failure, e.g. --error-detail full to see the
    /// task's source and the diff to the closest text.
    #[arg(long, value_enum, default_value_t = ErrorDetail::Minimal)]
    pub(crate) error_detail: ErrorDetail,

    /// When to print command output: as it comes, after each task, or not
    /// at all (text format only), e.g. --output-mode buffer.
    #[arg(long, value_enum, default_value_t = OutputMode::Stream)]
    pub(crate) output_mode: OutputMode,
}

/// `--format` of `clada watch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum WatchFormat {
    Text,
    /// JSON Lines, one event per task and a summary.
    Jsonl,
}

impl WatchArgs {
    /// The run of each unit: `apply --stream --no-prompt FILE` with these
    /// flags.
    pub(crate) fn into_apply(self) -> ApplyArgs {
        ApplyArgs {
            file: Some(self.file),
            policy: self.policy,
            format: match self.format {
                WatchFormat::Text => Format::Text,
                WatchFormat::Jsonl => Format::Jsonl,
            },
            dialect: self.dialect,
            error_detail: self.error_detail,
            output_mode: self.output_mode,
            no_prompt: true,
            dry_run: false,
            diff: false,
            // A followed file is mostly prose: each unit is its own run.
            allow_empty: true,
            stream: true,
        }
    }
}

/// `--match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum MatchArg {
    Exact,
    Whitespace,
}

impl MatchArg {
    pub(crate) fn mode(self) -> clada_markers::MatchMode {
        match self {
            MatchArg::Exact => clada_markers::MatchMode::Exact,
            MatchArg::Whitespace => clada_markers::MatchMode::Whitespace,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum AtomicArg {
    Unit,
    Document,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Switch {
    On,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
    Xml,
    /// JSON Lines, one event per task and a summary (with --stream).
    Jsonl,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ErrorDetail {
    Minimal,
    Full,
    Debug,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputMode {
    Stream,
    Buffer,
    Silent,
}

#[derive(Debug, Args)]
pub(crate) struct AllowArgs {
    /// The command to approve, exactly as RUN tasks write it, e.g.
    /// 'npm test'. A single argument is approved as written; several are
    /// joined with shell quoting where a word needs it (`clada allow echo
    /// "a  b"` approves `echo 'a  b'`). Approvals match character for
    /// character.
    #[arg(value_name = "CMD", required_unless_present_any = ["list", "remove"], conflicts_with_all = ["list", "remove"])]
    pub(crate) command: Vec<String>,

    /// List the approved commands.
    #[arg(long)]
    pub(crate) list: bool,

    /// Withdraw the approval of CMD, e.g. --remove 'npm test'.
    #[arg(long, value_name = "CMD", conflicts_with = "list")]
    pub(crate) remove: Option<String>,

    /// The directory whose approvals to change, e.g. -C ~/project.
    #[arg(short = 'C', long = "root", value_name = "DIR", default_value = ".")]
    pub(crate) root: PathBuf,

    /// Where below the root CMD runs (a RUN's `dir`), e.g. --dir web:
    /// an approval holds only in the directory it names (default: the
    /// root itself). Relative to the root, or absolute inside it.
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    Text,
    Json,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, ValueEnum as _};

    /// `--dialect` offers `auto` and every dialect, each by its own name.
    #[test]
    fn every_dialect_is_a_dialect_flag_value_by_its_name() {
        let named: Vec<_> = super::DialectArg::value_variants()
            .iter()
            .filter(|&&a| a != super::DialectArg::Auto)
            .map(|a| a.named())
            .collect();
        let all: Vec<_> = clada_markers::dialect::Dialect::ALL
            .into_iter()
            .map(Some)
            .collect();
        assert_eq!(named, all);
        assert_eq!(super::DialectArg::Auto.named(), None);
    }

    /// `mcp` and `watch` take some of `apply`'s flags: each says what
    /// `apply`'s says, with the same default, and neither takes a flag it
    /// would not use.
    #[test]
    fn mcp_and_watch_flags_are_apply_flags_they_use() {
        let mut cli = super::Cli::command();
        // The subcommands' flags are deferred: built here, all of them.
        cli.build();
        let sub = |name: &str| cli.find_subcommand(name).cloned().unwrap_or_default();
        let apply = sub("apply");
        assert!(
            apply.get_arguments().any(|a| a.get_id() == "dry_run"),
            "`apply`'s flags are built"
        );
        let ids = |c: &clap::Command| -> Vec<String> {
            c.get_arguments()
                .filter(|a| a.get_id() != "help")
                .map(|a| a.get_id().to_string())
                .collect()
        };
        for (name, own) in [("mcp", &[][..]), ("watch", &["file", "format"][..])] {
            let command = sub(name);
            for arg in command.get_arguments().filter(|a| a.get_id() != "help") {
                let id = arg.get_id().as_str();
                if own.contains(&id) {
                    continue;
                }
                let Some(same) = apply.get_arguments().find(|a| a.get_id() == id) else {
                    panic!("`{name}` has `{id}`, which `apply` has not");
                };
                let said = |a: &clap::Arg| {
                    (
                        a.get_help().map(ToString::to_string),
                        a.get_default_values().to_vec(),
                        a.get_long().map(str::to_owned),
                        a.get_short(),
                    )
                };
                assert_eq!(said(arg), said(same), "`{name} --{id}` and `apply --{id}`");
            }
            let taken = ids(&command);
            let unused: &[&str] = match name {
                "mcp" => &[
                    "file",
                    "format",
                    "output_mode",
                    "stream",
                    "no_prompt",
                    "diff",
                ],
                _ => &["dry_run", "stream", "no_prompt", "diff"],
            };
            for id in unused {
                assert!(!taken.iter().any(|t| t == id), "`{name}` takes `{id}`");
            }
        }
    }
}
