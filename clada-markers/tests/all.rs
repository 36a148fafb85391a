//! Integration tests of clada-markers: properties of the parser, the
//! printer and the lexer over generated input.

mod common;
mod properties;
