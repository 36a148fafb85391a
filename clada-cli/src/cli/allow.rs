//! `clada allow`: approve commands for a root, list them, withdraw them.
//! Approvals live in clada's configuration directory, never in the tree.

use std::time::SystemTime;

use clada_markers::commands::allowlist::Approvals;

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
            let command = args.command.join(" ");
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
