//! Tests of the `clada` binary.

#![allow(clippy::unwrap_used)] // test code: a failure should panic

mod cli;
mod commands;
mod crash;
mod git;
mod lock;
mod lsp;
mod mcp;
mod report;
mod security;
mod watch;
