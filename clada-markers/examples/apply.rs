//! Applies a document to a directory and prints the report as JSON.
//!
//! `cargo run -p clada-markers --example apply -- ROOT FILE` (the tour's
//! document in a fresh temporary directory when none are given). The
//! document is applied for real: try `--dry-run` first on a tree you care
//! about (`cargo run -p clada-markers --example apply -- ROOT FILE --dry-run`).

use clada_markers::{Apply, parse};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scratch;
    let (root, file) = match args.as_slice() {
        [root, file, ..] => (std::path::PathBuf::from(root), file.clone()),
        _ => {
            scratch = tempfile::tempdir()?;
            let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tour.md");
            // The tour edits the files of examples/project/.
            copy_dir(
                concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/project").as_ref(),
                scratch.path(),
            )?;
            (scratch.path().to_path_buf(), file.to_owned())
        }
    };
    let dry_run = args.iter().any(|a| a == "--dry-run");
    let text = std::fs::read_to_string(&file)?;
    let doc = parse(&text);
    // No commits, nobody asked: only built-in commands run.
    let report = Apply::new(&root)?.git(None).dry_run(dry_run).run(&doc);
    println!("{}", serde_json::to_string_pretty(&report)?);
    std::process::exit(i32::from(report.exit_code()));
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
