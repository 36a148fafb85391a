//! The Cline and Roo front end on any bytes: no panic, every span in
//! bounds and on character boundaries, and what reads without errors
//! converts to clada text that parses back to the same operations.

#![no_main]

#[path = "common/mod.rs"]
mod common;

use clada_markers::dialect::Dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::dialect(data, Dialect::Cline));
