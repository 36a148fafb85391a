//! `clada convert`: a document rewritten in another dialect (PROTOCOL
//! §11.4).

use clada_markers::dialect::{Dialect, convert, parse_dialect};
use clada_markers::{ParseOptions, render};

use super::{ConvertArgs, TargetDialect};
use crate::output;

pub(crate) fn run(args: ConvertArgs) -> u8 {
    let input = match output::read_input(args.file.as_deref()) {
        Ok(input) => input,
        Err(message) => {
            eprintln!("clada: {message}");
            return 2;
        }
    };
    let text = match input.text() {
        Ok(text) => text,
        Err(d) => {
            eprint!("{}", output::unreadable_text(&input, &d, false));
            return 1;
        }
    };
    let from = args.from.of(text);
    let doc = parse_dialect(text, from, ParseOptions::default());
    if doc.has_errors() {
        let errors: Vec<_> = doc
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .cloned()
            .collect();
        eprint!("{}", render(&errors, text, input.name(), false));
        eprintln!("clada: the document ({from}) has errors: fix them before converting it");
        return 1;
    }
    let to = match args.to {
        TargetDialect::Clada => Dialect::Clada,
        TargetDialect::Aider => Dialect::Aider,
        TargetDialect::Codex => Dialect::Codex,
        TargetDialect::Udiff => Dialect::Udiff,
    };
    match convert(&doc, to) {
        Ok(out) => {
            output::print(&out);
            0
        }
        Err(e) => {
            eprintln!("clada: cannot write this document as {to}: {e}");
            1
        }
    }
}
