//! `clada allow`: approve commands for a root, list them, withdraw them.
//! Approvals live in clada's configuration directory, never in the tree.

use std::time::SystemTime;

use clada_markers::engine::Approvals;

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
        for (command, added) in list.commands() {
            match added {
                Some(when) => println!("{command}\t(approved {when})"),
                None => println!("{command}"),
            }
        }
        return 0;
    }
    let (result, done, not_done, command) = match &args.remove {
        Some(command) => (
            approvals.update(|list| list.remove(command)),
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
                approvals.update(|list| list.add(&command, SystemTime::now())),
                "Approved",
                "Already approved",
                command.trim().to_owned(),
            )
        }
    };
    match result {
        Ok(changed) => {
            println!("{}: {command}", if changed { done } else { not_done });
            u8::from(args.remove.is_some() && !changed)
        }
        Err(e) => {
            eprintln!("clada: cannot write the approvals: {e}");
            1
        }
    }
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
    use super::approved_text;

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
