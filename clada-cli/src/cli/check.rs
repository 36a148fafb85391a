//! `clada check`: parse and validate, touch nothing.

use std::io::Write as _;

use clada_markers::dialect::{Dialect, fix, parse_units};
use clada_markers::report::{CheckBuilder, CheckText, JsonReport};
use clada_markers::syntax;
use clada_markers::{CheckReport, Diagnostic, ParseOptions};

use super::{CheckArgs, CheckFormat};

#[path = "check_fix.rs"]
mod fixes;
use crate::output;

pub(crate) fn run(args: CheckArgs) -> u8 {
    let input = match output::read_input(args.file.as_deref()) {
        Ok(input) => input,
        Err(message) => {
            eprintln!("clada: {message}");
            return 2;
        }
    };
    let color = output::stdout_color();
    let text = match input.text() {
        Ok(text) => text,
        Err(d) => {
            let printed = match args.format {
                CheckFormat::Json => {
                    output::json(&CheckReport::unreadable(&d, input.valid_prefix()))
                }
                CheckFormat::Text => output::unreadable_text(&input, &d, color),
            };
            output::print(&printed);
            return 1;
        }
    };
    let dialect = args.dialect.of(text);
    let options = ParseOptions {
        allow_escape: args.allow_escape,
    };
    let fixed;
    let text = if args.fix || args.diff {
        fixed = fix(text, dialect, options);
        match fixes::made(&args, &input, text, &fixed, dialect, options) {
            Ok(fixes::Next::Check) => fixed.text.as_ref(),
            Ok(fixes::Next::Exit(code)) => return code,
            Err(message) => {
                eprintln!("clada: {message}");
                return 2;
            }
        }
    } else {
        text
    };
    // Each unit is dropped once reported: memory is the document and the
    // report, not the tree.
    let parsed = parse_units(text, dialect, options);
    let diagnostics;
    let written = match args.format {
        CheckFormat::Json => {
            // Each block is written as its unit is read; the totals after.
            let out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let mut json = JsonReport::new(out, &CheckReport::empty(dialect));
            let mut report = CheckBuilder::new(text).dialect(dialect);
            diagnostics = syntax::each_unit(parsed, |u, ds| json.write_block(&report.unit(u, ds)));
            let report = report.finish(Vec::new(), &diagnostics);
            json.finish(&report).map(drop)
        }
        CheckFormat::Text => {
            let mut out = output::progress_writer();
            if dialect != Dialect::Clada {
                let _ = writeln!(out, "Dialect: {dialect}");
            }
            let mut report = CheckText::new(text, out);
            diagnostics = syntax::each_unit(parsed, |u, ds| report.unit(u, ds));
            report
                .finish(&diagnostics, input.name(), color)
                .and_then(|mut out| out.flush())
        }
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("clada: cannot write the report: {e}");
    }
    u8::from(diagnostics.iter().any(Diagnostic::is_error))
}
