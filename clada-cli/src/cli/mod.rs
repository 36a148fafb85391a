//! Command-line arguments, as clap reads them.

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CheckFormat {
    Text,
    Json,
}
