//! Tests of the `clada` binary.

#![allow(clippy::unwrap_used)] // test code: a failure should panic

mod commands;
mod crash;
