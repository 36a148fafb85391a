//! Integration tests of clada-markers: properties of the parser, the
//! printer and the lexer over generated input.

#![allow(clippy::unwrap_used)] // test support code: a failure should panic

mod aider_history;
mod builtins;
mod commands;
mod common;
mod confinement;
mod filesystem;
mod git_output;
mod hostile;
mod in_memory;
mod properties;
mod protection;
mod streaming;
