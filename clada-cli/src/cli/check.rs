//! `clada check`: parse and validate, touch nothing.

use clada_markers::CheckReport;
use clada_markers::dialect::Dialect;
use clada_markers::report::render_check_text;

use super::{CheckArgs, CheckFormat};
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
    let (dialect, doc) = args.dialect.read(text, args.allow_escape);
    match args.format {
        CheckFormat::Json => {
            let mut report = CheckReport::new(&doc);
            report.dialect = dialect;
            output::print_json(&report)
        }
        CheckFormat::Text => {
            if dialect != Dialect::Clada {
                output::print(&format!("Dialect: {dialect}\n"));
            }
            output::print(&render_check_text(&doc, &input.name, color))
        }
    }
    u8::from(doc.has_errors())
}
