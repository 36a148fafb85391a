//! Parse throughput of each dialect's front end on a 4 MiB document (the
//! unified diff: the same change, a file's diff per task), beside the
//! clada parser on the same change written as clada.
//!
//! `cargo bench -p clada-benches --bench dialects`

use std::sync::LazyLock;

use clada_benches::{MIB, dialect_documents, udiff_document};
use clada_markers::ParseOptions;
use clada_markers::dialect::{Dialect, parse_dialect};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

static DOCS: LazyLock<(String, String, String, String)> =
    LazyLock::new(|| dialect_documents(4 * MIB));
static UDIFF: LazyLock<String> = LazyLock::new(|| udiff_document(&DOCS.0));

fn doc(dialect: &str) -> (&'static str, Dialect) {
    let (clada, aider, codex, cml) = &*DOCS;
    match dialect {
        "aider" => (aider, Dialect::Aider),
        "codex" => (codex, Dialect::Codex),
        "cml" => (cml, Dialect::Cml),
        "udiff" => (&UDIFF, Dialect::Udiff),
        _ => (clada, Dialect::Clada),
    }
}

#[divan::bench(args = ["clada", "aider", "codex", "cml", "udiff"], sample_count = 20, sample_size = 1)]
fn parse(bencher: Bencher, dialect: &str) {
    let (text, d) = doc(dialect);
    bencher.counter(BytesCount::of_str(text)).bench(|| {
        parse_dialect(black_box(text), d, ParseOptions::default())
            .units
            .len()
    });
}
