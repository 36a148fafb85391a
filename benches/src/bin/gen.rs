//! Writes the benchmarks' inputs, so that every figure in
//! `benches/README.md` can be reproduced by hand:
//!
//! ```sh
//! cargo run --release -p clada-benches --bin gen -- SUBCOMMAND ARGS…
//! ```
//!
//! Run without arguments for the list of subcommands.

use std::path::Path;
use std::process::exit;

const USAGE: &str = "\
usage: gen SUBCOMMAND ARGS…
  content MIB FILE          content-heavy document (WRITE tasks with long bodies), MIB MiB
                            (check_cli, parse, memory: 48)
  tasks MIB FILE            task-heavy document (blocks of ten SEARCH edits), MIB MiB
                            (check_cli, parse, memory: 48)
  edits FILES DIR           FILES files of 2,000 lines and 2,000 SEARCH edits (apply: 200):
                            DIR/tree/, DIR/edits.md (one TASKS block per file),
                            DIR/standalone.md (every edit a unit), DIR/edits.diff (git apply)
  standalone FILES FILE     only the standalone document of `edits FILES`
  bigfile LINES EDITS DIR   one file of LINES lines and EDITS edits, written like `edits`
                            (bigfile: 200000 5000)
  failing MIB EDITS DIR     DIR/tree/src/big.rs of MIB MiB and DIR/failing.md, EDITS standalone
                            SEARCH edits of it that all fail (tier: 1 1000)
  errors UNITS FILE         UNITS standalone SEARCH units, each with exactly one error
                            (report: 12500 to 100000; memory: 100000)
  aider BLOCKS FILE         an aider-style reply of BLOCKS blocks without path=, read as clada,
                            every block malformed (report: 4000, 8000)
  small-tasks N DIR         N standalone REMOVE tasks, DIR/small-tasks.md, and the N empty
                            files they remove, DIR/tree/d0/f0 … (memory: 1000000)
  count-all MATCHES DIR     DIR/tree/ticks.txt of MATCHES lines `tick` and DIR/count-all.md,
                            one SEARCH with count=\"all\" making each `tock` (memory: 2000000)
  dialects MIB DIR          one change in every dialect: DIR/clada.md, DIR/aider.md,
                            DIR/codex.patch, DIR/cml.xml, MIB MiB of clada (dialects: 4)
  aider-replies COPIES FILE the real aider replies of corpus/aider-history/ with the files
                            they edit, as JSON Lines {files, reply, dialect}, COPIES times
                            (examples/batch/apply.py, benches/peers/aider_bench.py: 1)
  family NAME MIB DIR       a memory family (clada-hunks, udiff-unnumbered, cline-unclosed, …:
                            MEMORY_FAMILIES) of MIB MiB: DIR/doc and DIR/tree/f.txt, the file
                            it edits (memory -- dialects: 1, 2, 4)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match strs.as_slice() {
        ["content", mib, file] => write(file, &clada_benches::content_heavy(mib_of(mib))),
        ["tasks", mib, file] => write(file, &clada_benches::task_heavy(mib_of(mib))),
        ["edits", files, dir] => clada_benches::write_fixture(
            &clada_benches::edit_fixture(number(files), 2000, 2000),
            Path::new(dir),
        ),
        ["standalone", files, file] => {
            let fx = clada_benches::edit_fixture(number(files), 2000, 2000);
            write(file, &clada_benches::standalone(&fx.document))
        }
        ["bigfile", lines, edits, dir] => clada_benches::write_fixture(
            &clada_benches::big_file_fixture(number(lines), number(edits)),
            Path::new(dir),
        ),
        ["failing", mib, edits, dir] => {
            let (path, text, doc) = clada_benches::failing_fixture(mib_of(mib), number(edits));
            let dir = Path::new(dir);
            let file = dir.join("tree").join(&path);
            std::fs::create_dir_all(file.parent().unwrap_or(dir))
                .and_then(|()| std::fs::write(&file, text))
                .and_then(|()| std::fs::write(dir.join("failing.md"), doc))
        }
        ["errors", units, file] => write(file, &clada_benches::every_unit_an_error(number(units))),
        ["aider", blocks, file] => write(file, &clada_benches::aider_reply(number(blocks))),
        ["small-tasks", n, dir] => {
            let (n, dir) = (number(n), Path::new(dir));
            clada_benches::write_small_tree(n, &dir.join("tree")).and_then(|()| {
                std::fs::write(dir.join("small-tasks.md"), clada_benches::small_tasks(n))
            })
        }
        ["count-all", matches, dir] => {
            let (text, doc) = clada_benches::count_all_fixture(number(matches));
            let dir = Path::new(dir);
            std::fs::create_dir_all(dir.join("tree"))
                .and_then(|()| std::fs::write(dir.join("tree/ticks.txt"), text))
                .and_then(|()| std::fs::write(dir.join("count-all.md"), doc))
        }
        ["dialects", mib, dir] => {
            let (clada, aider, codex, cml) = clada_benches::dialect_documents(mib_of(mib));
            let dir = Path::new(dir);
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(dir.join("clada.md"), clada))
                .and_then(|()| std::fs::write(dir.join("aider.md"), aider))
                .and_then(|()| std::fs::write(dir.join("codex.patch"), codex))
                .and_then(|()| std::fs::write(dir.join("cml.xml"), cml))
        }
        ["aider-replies", copies, file] => {
            clada_benches::aider_replies::corpus_cases().and_then(|cases| {
                write(
                    file,
                    &clada_benches::aider_replies::jsonl(&cases).repeat(number(copies)),
                )
            })
        }
        ["family", name, mib, dir] => {
            let Some((_, doc, file)) = clada_benches::memory_family(name, mib_of(mib)) else {
                eprintln!("gen: no family {name}\n{USAGE}");
                exit(2);
            };
            let dir = Path::new(dir);
            std::fs::create_dir_all(dir.join("tree"))
                .and_then(|()| std::fs::write(dir.join("doc"), doc))
                .and_then(|()| std::fs::write(dir.join("tree/f.txt"), file))
        }
        _ => {
            eprintln!("{USAGE}");
            exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("gen: cannot write: {e}");
        exit(1);
    }
}

fn write(file: &str, text: &str) -> std::io::Result<()> {
    std::fs::write(file, text)
}

/// A count from the command line (`200000` or `200_000`), else the usage.
fn number(s: &str) -> usize {
    s.replace('_', "").parse().unwrap_or_else(|_| {
        eprintln!("gen: not a number: {s}\n{USAGE}");
        exit(2);
    })
}

fn mib_of(s: &str) -> usize {
    number(s).saturating_mul(clada_benches::MIB)
}
