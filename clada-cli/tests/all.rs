//! Tests of the `clada` binary.

#![allow(clippy::unwrap_used)] // test code: a failure should panic

mod cli;
mod commands;
mod crash;
mod fixes;
mod git;
mod helix;
mod lock;
mod lsp;
mod mcp;
mod neovim;
mod readme;
mod report;
mod security;
mod support;
mod watch;
