//! `clada allow`: approve commands for a root (at the root, or in a
//! directory below it with `--dir`), list them, withdraw them. Approvals
//! live in clada's configuration directory, never in the tree.

use std::path::Path;
use std::time::SystemTime;

use clada_markers::commands::{Allowlist, Approvals};

use super::AllowArgs;

pub(crate) fn run(args: AllowArgs) -> u8 {
    let Some(dirs) = crate::output::dirs() else {
        return 1;
    };
    let approvals = match Approvals::new(&dirs, &args.root) {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "clada: cannot open the root directory {}: {e}",
                args.root.display()
            );
            return 2;
        }
    };
    let dir = match args.dir.as_deref().map(|d| dir_below(approvals.root(), d)) {
        None => None,
        Some(Ok(dir)) => dir,
        Some(Err(e)) => {
            eprintln!("clada: {e}");
            return 2;
        }
    };
    let dir = dir.as_deref();
    let shown = |command: &str| match dir {
        None => command.to_owned(),
        Some(d) => format!("{command}\t(in {d})"),
    };
    if args.list {
        let list = match approvals.load() {
            Ok(list) => list,
            Err(e) => {
                eprintln!("clada: cannot read the approvals: {e}");
                return 1;
            }
        };
        println!(
            "# approvals for {} in {}",
            approvals.root(),
            approvals.file().display()
        );
        if list.commands().next().is_none() {
            println!("No command is approved for {}.", approvals.root());
            return 0;
        }
        for (command, at, added) in list.commands() {
            let at = at.map(|d| format!("in {d}, "));
            match added {
                Some(when) => println!("{command}\t({}approved {when})", at.unwrap_or_default()),
                None => match at {
                    Some(at) => println!("{command}\t({})", at.trim_end_matches(", ")),
                    None => println!("{command}"),
                },
            }
        }
        return 0;
    }
    let (result, done, not_done, command) = match &args.remove {
        Some(command) => (
            approvals.update(|list| list.remove(command, dir)),
            "Withdrawn",
            "Not approved",
            command.trim().to_owned(),
        ),
        None => {
            let command = approved_text(&args.command);
            if command.trim().is_empty() {
                eprintln!("clada: the command to approve is empty");
                return 2;
            }
            (
                approvals.update(|list| list.add(&command, dir, SystemTime::now())),
                "Approved",
                "Already approved",
                command.trim().to_owned(),
            )
        }
    };
    match result {
        Ok(changed) => {
            println!(
                "{}: {}",
                if changed { done } else { not_done },
                shown(&command)
            );
            u8::from(args.remove.is_some() && !changed)
        }
        Err(e) => {
            eprintln!("clada: cannot write the approvals: {e}");
            1
        }
    }
}

/// The directory `dir` of `--dir` as approvals name it: relative to the
/// root (`root`, canonical), or absolute inside it; `None` for the root.
fn dir_below(root: &str, dir: &Path) -> Result<Option<String>, String> {
    let relative = if dir.is_absolute() {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        dir.strip_prefix(root)
            .map_err(|_| format!("--dir {} is not inside the root {root}", dir.display()))?
            .to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let text = relative
        .to_str()
        .ok_or_else(|| format!("--dir {} is not UTF-8", dir.display()))?;
    Allowlist::dir_key(text).map_err(|e| format!("--dir: {e}; name a directory below the root"))
}

/// The text a RUN body must carry to be approved: a single argument as
/// written; several joined with shell quoting where a word needs it, so
/// that `clada allow echo "a  b"` approves `echo 'a  b'`, the line a shell
/// would read back as the same words.
fn approved_text(words: &[String]) -> String {
    match words {
        [one] => one.clone(),
        _ => shell_words::join(words),
    }
}

#[cfg(test)]
mod tests {
    use super::{approved_text, dir_below};

    #[test]
    fn a_directory_is_named_below_the_root() {
        assert_eq!(
            dir_below("/r", "web/./app/".as_ref()).unwrap().as_deref(),
            Some("web/app")
        );
        assert_eq!(dir_below("/r", ".".as_ref()).unwrap(), None);
        assert_eq!(
            dir_below("/r", "/r/web".as_ref()).unwrap().as_deref(),
            Some("web")
        );
        assert!(dir_below("/r", "/elsewhere".as_ref()).is_err());
        assert!(dir_below("/r", "../x".as_ref()).is_err());
    }

    #[test]
    fn one_argument_is_taken_as_written_several_are_quoted() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            approved_text(&words(&["echo \"a  b\" | tr a-z A-Z"])),
            "echo \"a  b\" | tr a-z A-Z"
        );
        assert_eq!(approved_text(&words(&["echo", "a  b"])), "echo 'a  b'");
        assert_eq!(approved_text(&words(&["cargo", "build"])), "cargo build");
        assert_eq!(approved_text(&words(&["echo", "it's"])), "echo 'it'\\''s'");
    }
}
