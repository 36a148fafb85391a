//! Reading a built-in command's arguments GNU style (`-rn`, `-n 5`, `-n5`,
//! `--lines=5`, `--`), with `lexopt`. A tool matches the flags it documents
//! and hands every other one to [`Flags::refuse`], which names it.

use std::str::FromStr;

use crate::error_type::ErrorType;

use super::{Env, Refusal};

/// One argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    Short(char),
    Long(String),
    Operand(String),
}

/// The arguments of one built-in command.
pub(crate) struct Flags<'e, 'a> {
    parser: lexopt::Parser,
    env: &'e Env<'a>,
    /// The flag read last, as written, for messages.
    last: String,
}

impl std::fmt::Debug for Flags<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flags").field("last", &self.last).finish()
    }
}

impl<'e, 'a> Flags<'e, 'a> {
    pub(crate) fn new(args: &[String], env: &'e Env<'a>) -> Self {
        Flags {
            parser: lexopt::Parser::from_args(args.iter().cloned()),
            env,
            last: String::new(),
        }
    }

    /// Like [`Flags::new`], reading `-NUM` as `-n NUM` (head, tail).
    pub(crate) fn with_count(args: &[String], env: &'e Env<'a>) -> Self {
        let mut done = false;
        let args = args.iter().map(|a| {
            if a == "--" {
                done = true;
            }
            match a.strip_prefix('-') {
                Some(n) if !done && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    format!("-n{n}")
                }
                _ => a.clone(),
            }
        });
        Flags {
            parser: lexopt::Parser::from_args(args.collect::<Vec<_>>()),
            env,
            last: String::new(),
        }
    }

    /// The next flag or operand.
    pub(crate) fn next(&mut self) -> Result<Option<Arg>, Refusal> {
        let shown = self.env.shown;
        let arg = self.parser.next().map_err(|e| error(shown, e))?;
        Ok(arg.map(|arg| match arg {
            lexopt::Arg::Short(c) => {
                self.last = format!("-{c}");
                Arg::Short(c)
            }
            lexopt::Arg::Long(name) => {
                self.last = format!("--{name}");
                Arg::Long(name.to_owned())
            }
            lexopt::Arg::Value(v) => Arg::Operand(v.to_string_lossy().into_owned()),
        }))
    }

    /// The value of the flag just read.
    pub(crate) fn value(&mut self) -> Result<String, Refusal> {
        let v = self.parser.value().map_err(|e| error(self.env.shown, e))?;
        Ok(v.to_string_lossy().into_owned())
    }

    /// The value attached to the flag just read (`-uno`, `--x=no`), if any.
    pub(crate) fn optional_value(&mut self) -> Option<String> {
        self.parser
            .optional_value()
            .map(|v| v.to_string_lossy().into_owned())
    }

    /// The value of the flag just read, as a number.
    pub(crate) fn number<T: FromStr>(&mut self) -> Result<T, Refusal> {
        let v = self.value()?;
        v.parse().map_err(|_| self.invalid(&v))
    }

    /// The refusal of a value the flag just read cannot take.
    pub(crate) fn invalid(&self, value: &str) -> Refusal {
        Refusal::new(
            ErrorType::CommandNotAllowed,
            format!(
                "`{}`: `{value}` is not a valid value for `{}`",
                self.env.shown, self.last
            ),
        )
    }

    /// The refusal of the flag just read.
    pub(crate) fn refuse(&self) -> Refusal {
        self.env.unsupported(&self.last)
    }
}

fn error(shown: &str, e: lexopt::Error) -> Refusal {
    Refusal::new(ErrorType::CommandNotAllowed, format!("`{shown}`: {e}"))
}
