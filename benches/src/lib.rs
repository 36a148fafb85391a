//! Benchmarks for clada.
