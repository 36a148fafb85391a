//! `clada undo`: take back the last run on a root.

use clada_markers::{Apply, UndoError};

use super::{UndoArgs, UndoFormat};
use crate::output;

pub(crate) fn run(args: UndoArgs) -> u8 {
    let apply = match Apply::new(&args.root) {
        Ok(apply) => apply,
        Err(e) => {
            eprintln!(
                "clada: cannot open the root directory {}: {e}",
                args.root.display()
            );
            return 2;
        }
    };
    let settings = clada_markers::Settings {
        git: Some(args.git_author.clone()),
        ..Default::default()
    };
    let apply = apply.settings(settings).dirs(output::dirs());
    let done = apply.undo();
    match args.format {
        UndoFormat::Json => {
            let json = match &done {
                Ok(u) => serde_json::json!({
                    "ok": true,
                    "restored": u.restored,
                    "commit": u.commit,
                    "error": null,
                }),
                Err(e) => serde_json::json!({
                    "ok": false,
                    "restored": [],
                    "commit": null,
                    "error": { "type": kind(e), "message": e.to_string() },
                }),
            };
            output::print(&output::json(&json));
        }
        UndoFormat::Text => match &done {
            Ok(u) => {
                let mut text = format!(
                    "Undone: {} put back as before the last run",
                    if u.restored.is_empty() {
                        "nothing needed to be".to_owned()
                    } else {
                        u.restored.join(", ")
                    }
                );
                if let Some(c) = &u.commit {
                    text.push_str(&format!(
                        "; committed as {}",
                        c.chars().take(7).collect::<String>()
                    ));
                }
                text.push('\n');
                output::print(&text);
            }
            Err(e) => eprintln!("clada: {e}"),
        },
    }
    u8::from(done.is_err())
}

/// The error's type in JSON.
fn kind(e: &UndoError) -> &'static str {
    match e {
        UndoError::Nothing(_) => "nothing_to_undo",
        UndoError::Unavailable(_) => "undo_unavailable",
        UndoError::Changed { .. } => "file_changed",
        UndoError::Refused(_) => "undo_refused",
        UndoError::Io(_) => "io_error",
    }
}
