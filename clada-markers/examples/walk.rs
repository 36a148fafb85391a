//! Parses a document and walks its units and tasks.
//!
//! `cargo run -p clada-markers --example walk -- FILE` (the tour's document
//! when no file is given).

use clada_markers::{Op, Unit, parse};

fn main() -> std::io::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tour.md").to_owned());
    let text = std::fs::read_to_string(&path)?;
    let doc = parse(&text);
    for unit in &doc.units {
        let kind = match unit {
            Unit::Block(_) => "TASKS block",
            Unit::Task(_) => "standalone task",
        };
        println!("unit {} ({kind}):", unit.number());
        for task in unit.tasks() {
            let what = match &task.op {
                Some(Op::Write { path, append, .. }) if *append => format!("append to {path}"),
                Some(Op::Write { path, .. }) => format!("write {path}"),
                Some(Op::Edit { path, .. }) => format!("edit {path}"),
                Some(Op::EditRange { path, .. }) => format!("edit a range of {path}"),
                Some(Op::Move { from, to }) => format!("move {from} to {to}"),
                Some(Op::Remove { path }) => format!("remove {path}"),
                Some(Op::Run { command, .. }) => format!("run `{}`", command.trim()),
                None => "malformed".to_owned(),
            };
            println!("  task {}: {what}", task.number);
        }
    }
    println!(
        "{} units, {} errors",
        doc.units.len(),
        doc.diagnostics.iter().filter(|d| d.is_error()).count()
    );
    Ok(())
}
