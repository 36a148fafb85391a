//! `clada allow`: approve commands, list them, withdraw them.

use std::time::SystemTime;

use clada_markers::commands::allowlist::{ALLOWLIST_PATH, Allowlist};

use super::AllowArgs;

pub(crate) fn run(args: AllowArgs) -> u8 {
    let root = match crate::output::open_root(&args.root) {
        Ok(root) => root,
        Err(code) => return code,
    };
    let mut list = match Allowlist::load(&root) {
        Ok(list) => list,
        Err(e) => {
            eprintln!("clada: cannot read {ALLOWLIST_PATH}: {e}");
            return 1;
        }
    };
    if args.list {
        for (command, added) in list.commands() {
            match added {
                Some(when) => println!("{command}\t(approved {when})"),
                None => println!("{command}"),
            }
        }
        return 0;
    }
    let (changed, message) = match &args.remove {
        Some(command) => {
            let removed = list.remove(command);
            let message = if removed { "Withdrawn" } else { "Not approved" };
            (removed, format!("{message}: {}", command.trim()))
        }
        None => {
            let command = args.command.join(" ");
            if command.trim().is_empty() {
                eprintln!("clada: the command to approve is empty");
                return 2;
            }
            let added = list.add(&command, SystemTime::now());
            let message = if added {
                "Approved"
            } else {
                "Already approved"
            };
            (added, format!("{message}: {}", command.trim()))
        }
    };
    if changed && let Err(e) = list.save(&root) {
        eprintln!("clada: cannot write {ALLOWLIST_PATH}: {e}");
        return 1;
    }
    println!("{message}");
    u8::from(args.remove.is_some() && !changed)
}
