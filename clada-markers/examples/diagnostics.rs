//! Renders the diagnostics of a malformed document, the way `clada check`
//! shows them, and lists the fixes they offer.
//!
//! `cargo run -p clada-markers --example diagnostics`

use clada_markers::{Severity, parse, render};

const DOCUMENT: &str = "\
<<<<<<< SEARCH path=\"src/main.rs\"
fn main() {}
=======
fn main() { run(); }
>>>>>>> END
";

fn main() {
    let doc = parse(DOCUMENT);
    // Without colour; `true` colours them for a terminal.
    print!("{}", render(&doc.diagnostics, DOCUMENT, "reply.md", false));
    for d in &doc.diagnostics {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        println!("{level} {}: {}", d.kind, d.message);
        if let Some(fix) = &d.fix {
            println!(
                "  fix: replace bytes {}..{} with {:?}",
                fix.span.start, fix.span.end, fix.replacement
            );
        }
    }
}
