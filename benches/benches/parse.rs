//! Parse throughput on generated documents, beside the memchr line count of
//! the same bytes.
//!
//! `cargo bench -p clada-benches --bench parse`

use std::sync::LazyLock;

use clada_benches::{MIB, content_heavy, count_lines, task_heavy};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const SIZES: [usize; 2] = [MIB, 48 * MIB];

static CONTENT: LazyLock<Vec<String>> =
    LazyLock::new(|| SIZES.iter().map(|&s| content_heavy(s)).collect());
static TASKS: LazyLock<Vec<String>> =
    LazyLock::new(|| SIZES.iter().map(|&s| task_heavy(s)).collect());

fn doc(kind: &str, mib: usize) -> &'static str {
    let i = SIZES.iter().position(|&s| s == mib * MIB).unwrap_or(0);
    match kind {
        "content" => &CONTENT[i],
        _ => &TASKS[i],
    }
}

#[divan::bench(args = [("content", 1), ("content", 48), ("tasks", 1), ("tasks", 48)], sample_count = 20, sample_size = 1)]
fn memchr_line_count(bencher: Bencher, (kind, mib): (&str, usize)) {
    let text = doc(kind, mib);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| count_lines(black_box(text)));
}

#[divan::bench(args = [("content", 1), ("content", 48), ("tasks", 1), ("tasks", 48)], sample_count = 20, sample_size = 1)]
fn lex(bencher: Bencher, (kind, mib): (&str, usize)) {
    let text = doc(kind, mib);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| clada_markers::syntax::lex(black_box(text)).len());
}

#[divan::bench(args = [("content", 1), ("content", 48), ("tasks", 1), ("tasks", 48)], sample_count = 20, sample_size = 1)]
fn parse(bencher: Bencher, (kind, mib): (&str, usize)) {
    let text = doc(kind, mib);
    bencher
        .counter(BytesCount::of_str(text))
        .bench(|| clada_markers::parse(black_box(text)).units.len());
}
