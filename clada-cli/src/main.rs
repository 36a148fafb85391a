//! The `clada` command: argument handling and printing. The work is done by
//! `clada-markers`.

mod allocator;
mod cli;
mod lsp;
mod man;
mod output;

use std::process::ExitCode;

use clap::CommandFactory as _;

/// The system prompt of `clada prompt`, kept in the repository.
const PROMPT: &str = include_str!("../prompt.md");

fn main() -> ExitCode {
    let args = cli::Cli::parse_args();
    // A server or a watch runs long: the memory of a large call or unit
    // goes back to the system once it is answered.
    if matches!(
        args.command,
        cli::Command::Lsp { .. } | cli::Command::Mcp(_) | cli::Command::Watch(_)
    ) {
        allocator::return_large_blocks();
    }
    let code = match args.command {
        cli::Command::Check(check) => cli::check::run(check),
        cli::Command::Apply(apply) => cli::apply::run(apply),
        cli::Command::Allow(allow) => cli::allow::run(allow),
        cli::Command::Undo(undo) => cli::undo::run(undo),
        cli::Command::Prompt => {
            output::print(PROMPT);
            0
        }
        cli::Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cli::Cli::command(), "clada", &mut out);
            output::print(&String::from_utf8_lossy(&out));
            0
        }
        cli::Command::Lsp {
            root,
            matching,
            hover_timeout,
        } => lsp::run(root, matching.mode(), hover_timeout),
        cli::Command::Convert(args) => cli::convert::run(args),
        cli::Command::Watch(args) => cli::apply::watch(args.into_apply()),
        cli::Command::Mcp(args) => cli::mcp::run(args.into_apply(), PROMPT),
        cli::Command::Schema { report } => {
            let schema = match report {
                cli::SchemaKind::Check => clada_markers::report::check_schema(),
                cli::SchemaKind::Apply => clada_markers::report::apply_schema(),
            };
            output::print(&output::json(&schema));
            0
        }
        cli::Command::Man => {
            output::print(&man::render(cli::Cli::command()));
            0
        }
    };
    ExitCode::from(code)
}
