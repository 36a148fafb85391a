//! Command-line arguments, as clap reads them.

pub(crate) mod apply;
pub(crate) mod check;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Apply edit documents written with git-style conflict markers.
#[derive(Debug, Parser)]
#[command(name = "clada", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
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
    /// Parse and validate a document; touch nothing.
    ///
    /// Exit status: 0 when the document has no error, 1 when it has one,
    /// 2 when it cannot be read or a flag is wrong.
    #[command(
        after_help = "Example:\n  clada check examples/tour.md\n  cat reply.txt | clada check --format json"
    )]
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The document to check; `-` or nothing reads standard input.
    pub(crate) file: Option<PathBuf>,

    /// How to print the result.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub(crate) format: CheckFormat,

    /// Accept absolute paths and paths that climb out of the root.
    #[arg(long)]
    pub(crate) allow_escape: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ApplyArgs {
    /// The document to apply; `-` or nothing reads standard input.
    pub(crate) file: Option<PathBuf>,

    /// The directory tasks act on.
    #[arg(short = 'C', long = "root", value_name = "DIR", default_value = ".")]
    pub(crate) root: PathBuf,

    /// How to print the result: text as it happens, or one JSON or XML
    /// object at the end.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,

    /// How much to say about a failure.
    #[arg(long, value_enum, default_value_t = ErrorDetail::Minimal)]
    pub(crate) error_detail: ErrorDetail,

    /// When to print command output: as it comes, after each task, or not
    /// at all (text format only).
    #[arg(long, value_enum, default_value_t = OutputMode::Stream)]
    pub(crate) output_mode: OutputMode,

    /// Accept absolute paths and paths that climb out of the root.
    #[arg(long)]
    pub(crate) allow_escape: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
    Xml,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    Text,
    Json,
}
