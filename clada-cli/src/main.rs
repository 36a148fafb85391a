//! The `clada` command: argument handling and printing. The work is done by
//! `clada-markers`.

mod cli;
mod output;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let code = match args.command {
        cli::Command::Check(check) => cli::check::run(check),
        cli::Command::Apply(apply) => cli::apply::run(apply),
        cli::Command::Allow(allow) => cli::allow::run(allow),
    };
    ExitCode::from(code)
}
