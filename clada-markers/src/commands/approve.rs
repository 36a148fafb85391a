//! Asking a person whether a command may run (tier 3).

use std::io::{BufRead, BufReader, Write};

/// A person's answer to "run this command?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Once,
    Always,
    No,
}

/// Asks whether a command may run.
pub trait Approver {
    /// Whether `command` may run in `dir` (a directory below the root, or
    /// `None` for the root itself; "always" approves it there only).
    /// `None` when there is nobody to ask.
    fn ask(&mut self, command: &str, dir: Option<&str>) -> Option<Answer>;

    /// Whether there may be somebody to ask (a dry run asks nobody).
    fn can_ask(&self) -> bool {
        true
    }
}

impl<A: Approver + ?Sized> Approver for &mut A {
    fn ask(&mut self, command: &str, dir: Option<&str>) -> Option<Answer> {
        (**self).ask(command, dir)
    }

    fn can_ask(&self) -> bool {
        (**self).can_ask()
    }
}

/// Never asks: every unapproved command is refused.
#[derive(Debug, Default)]
pub struct NoPrompt;

impl Approver for NoPrompt {
    fn ask(&mut self, _command: &str, _dir: Option<&str>) -> Option<Answer> {
        None
    }

    fn can_ask(&self) -> bool {
        false
    }
}

/// Asks on the controlling terminal, `/dev/tty`, when there is one.
#[derive(Debug, Default)]
pub struct Terminal;

impl Approver for Terminal {
    fn can_ask(&self) -> bool {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok()
    }

    fn ask(&mut self, command: &str, dir: Option<&str>) -> Option<Answer> {
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        let mut out = tty.try_clone().ok()?;
        let mut input = BufReader::new(tty);
        // Shown escaped: a command must not disguise itself (PROTOCOL §9.1).
        let shown: Vec<String> = crate::escape::escape_controls(command)
            .lines()
            .map(|l| format!("  {l}"))
            .collect();
        let place = match dir {
            None => "at the root".to_owned(),
            Some(dir) => format!("in {}", crate::escape::escape_controls(dir)),
        };
        loop {
            let _ = write!(
                out,
                "clada: this command is not approved {place}:\n{}\nRun it? [o]nce, [a]lways (remember it {place}), [n]o: ",
                shown.join("\n")
            );
            let _ = out.flush();
            let mut line = String::new();
            match input.read_line(&mut line) {
                Ok(0) | Err(_) => return Some(Answer::No),
                Ok(_) => {}
            }
            match line.trim().to_ascii_lowercase().as_str() {
                "o" | "once" | "y" | "yes" => return Some(Answer::Once),
                "a" | "always" => return Some(Answer::Always),
                "n" | "no" | "" => return Some(Answer::No),
                _ => {
                    let _ = writeln!(out, "Please answer o, a or n.");
                }
            }
        }
    }
}
