//! Inputs for clada's benchmarks: generated documents of a given size, and
//! the baseline they are measured against.

pub mod aider_replies;
pub mod replay;

use std::fmt::Write as _;

/// A document made mostly of content: WRITE tasks with long bodies of
/// source-like lines (with `<`, `=` and `>` inside lines and at line starts,
/// as in HTML or diffs), separated by a little prose.
pub fn content_heavy(size: usize) -> String {
    let mut out = String::with_capacity(size + 4096);
    let mut file = 0;
    while out.len() < size {
        file += 1;
        let _ = writeln!(
            out,
            "Here is file {file}:\n\n<<<<<<< WRITE path=\"src/file{file}.rs\""
        );
        for i in 0..2000 {
            match i % 10 {
                0 => out.push_str("<div class=\"row\">generated markup</div>\n"),
                1 => {
                    out.push_str("    let total = items.iter().map(|x| x.len()).sum::<usize>();\n")
                }
                2 => out.push_str("    if a <= b && c >= d { return a == b; }\n"),
                3 => out.push_str("=== section ===\n"),
                4 => out.push_str(">> quoted reply line\n"),
                5 => out.push('\n'),
                6 => out.push_str("fn compute(value: u64) -> Result<u64, Error> {\n"),
                7 => out.push_str("    // a comment with <angle> brackets and == signs\n"),
                8 => out.push_str("}\n"),
                _ => {
                    let _ = writeln!(out, "    let line_{i} = \"{}\";", "x".repeat(i % 40));
                }
            }
        }
        out.push_str(">>>>>>> END\n\n");
    }
    out
}

/// A document made of many small tasks: blocks of ten SEARCH edits of two
/// lines each, with a line of prose between blocks.
pub fn task_heavy(size: usize) -> String {
    let mut out = String::with_capacity(size + 4096);
    let mut n = 0;
    while out.len() < size {
        out.push_str("Next changes:\n<<<<<<< TASKS\n");
        for _ in 0..10 {
            n += 1;
            let _ = write!(
                out,
                "<<<<<<< SEARCH path=\"src/mod{}.rs\"\nfn old_{n}() {{\n    1\n=======\nfn new_{n}() {{\n    2\n>>>>>>> REPLACE\n",
                n % 200
            );
        }
        out.push_str(">>>>>>> TASKS\n\n");
    }
    out
}

/// The `clada` binary to measure: `CLADA_BIN`, else the release build
/// next to the running bench (`cargo build --release -p clada-cli` first).
pub fn clada_binary() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("CLADA_BIN") {
        return p.into();
    }
    // target/release/deps/BENCH-… -> target/release/clada
    let exe = std::env::current_exe().unwrap_or_default();
    let candidate = exe
        .parent()
        .and_then(|d| d.parent())
        .map(|d| d.join("clada"))
        .unwrap_or_default();
    if !candidate.exists() {
        eprintln!(
            "no clada binary at {}: run `cargo build --release -p clada-cli` first, or set CLADA_BIN",
            candidate.display()
        );
        std::process::exit(1);
    }
    candidate
}

/// Extra flags for clada from `CLADA_ARGS` (e.g. `--no-git`).
pub fn extra_args() -> Vec<String> {
    std::env::var("CLADA_ARGS")
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The median of some measurements.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The baseline: count line feeds with memchr.
pub fn count_lines(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

pub const MIB: usize = 1024 * 1024;

/// A source tree and one change to it, written two ways: as a clada
/// document of SEARCH edits and as a unified diff for `git apply`.
#[derive(Debug)]
pub struct EditFixture {
    /// (relative path, contents) of every file before the change.
    pub files: Vec<(String, String)>,
    /// The same files after it.
    pub changed: Vec<(String, String)>,
    pub document: String,
    pub diff: String,
}

/// `files` files of `lines` lines each, and `edits` SEARCH edits spread
/// evenly over them (one TASKS block per file).
pub fn edit_fixture(files: usize, lines: usize, edits: usize) -> EditFixture {
    let per_file = edits / files;
    let mut fx = EditFixture {
        files: Vec::new(),
        changed: Vec::new(),
        document: String::new(),
        diff: String::new(),
    };
    for f in 0..files {
        let path = format!("src/module{}/file{f}.rs", f % 10);
        let text: String = (0..lines)
            .map(|l| {
                format!(
                    "    let value_{f}_{l} = compute({l}, \"{}\");\n",
                    "x".repeat(l % 30)
                )
            })
            .collect();
        let mut new_text = text.clone();
        fx.document.push_str("<<<<<<< TASKS\n");
        for e in 0..per_file {
            let l = (e * lines) / per_file + 7;
            let old_line = format!(
                "    let value_{f}_{l} = compute({l}, \"{}\");\n",
                "x".repeat(l % 30)
            );
            let new_line = format!(
                "    let value_{f}_{l} = compute_faster({l}, \"{}\");\n",
                "y".repeat(l % 30)
            );
            new_text = new_text.replacen(&old_line, &new_line, 1);
            let _ = write!(
                fx.document,
                "<<<<<<< SEARCH path=\"{path}\"\n{old_line}=======\n{new_line}>>>>>>> REPLACE\n"
            );
        }
        fx.document.push_str(">>>>>>> TASKS\n");
        let diff = similar::TextDiff::from_lines(&text, &new_text);
        let _ = writeln!(fx.diff, "diff --git a/{path} b/{path}");
        fx.diff.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string(),
        );
        fx.files.push((path.clone(), text));
        fx.changed.push((path, new_text));
    }
    fx
}

/// One file of `lines` lines and `edits` one-line SEARCH edits spread
/// evenly over it, in one TASKS block, with the same change as a diff.
pub fn big_file_fixture(lines: usize, edits: usize) -> EditFixture {
    let path = "src/big.rs";
    let line = |l: usize, new: bool| {
        if new {
            format!("    let value_{l} = compute_faster({l});\n")
        } else {
            format!("    let value_{l} = compute({l});\n")
        }
    };
    let step = (lines / edits.max(1)).max(1);
    let edited: std::collections::BTreeSet<usize> = (0..edits)
        .map(|e| e * step + step / 2)
        .filter(|&l| l < lines)
        .collect();
    let text: String = (0..lines).map(|l| line(l, false)).collect();
    let new_text: String = (0..lines).map(|l| line(l, edited.contains(&l))).collect();
    let mut document = String::from("<<<<<<< TASKS\n");
    for &l in &edited {
        let _ = write!(
            document,
            "<<<<<<< SEARCH path=\"{path}\"\n{}=======\n{}>>>>>>> REPLACE\n",
            line(l, false),
            line(l, true)
        );
    }
    document.push_str(">>>>>>> TASKS\n");
    let mut diff = format!("diff --git a/{path} b/{path}\n");
    diff.push_str(
        &similar::TextDiff::from_lines(&text, &new_text)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{path}"), &format!("b/{path}"))
            .to_string(),
    );
    EditFixture {
        files: vec![(path.to_owned(), text)],
        changed: vec![(path.to_owned(), new_text)],
        document,
        diff,
    }
}

/// A file of about `bytes` bytes of indented source lines, and `edits`
/// standalone SEARCH edits of it that all fail: each searches for a line
/// of the file with a typo (`compute({l}, 1)` for `compute({l})`), as a
/// model misremembering the file would. Returns the file's path, its text
/// and the document.
pub fn failing_fixture(bytes: usize, edits: usize) -> (String, String, String) {
    let line = |l: usize| format!("    let value_{l} = compute({l});\n");
    let mut text = String::with_capacity(bytes + 64);
    let mut lines = 0;
    while text.len() < bytes {
        text.push_str(&line(lines));
        lines += 1;
    }
    let step = (lines / edits.max(1)).max(1);
    let mut document = String::new();
    for e in 0..edits {
        let l = (e * step + step / 2) % lines.max(1);
        let _ = write!(
            document,
            "<<<<<<< SEARCH path=\"src/big.rs\"\n    let value_{l} = compute({l}, 1);\n=======\n    let value_{l} = compute_faster({l});\n>>>>>>> REPLACE\n"
        );
    }
    ("src/big.rs".to_owned(), text, document)
}

/// The fixture's document with every edit a unit of its own (how models
/// write them): the TASKS lines taken away.
pub fn standalone(document: &str) -> String {
    document
        .lines()
        .filter(|l| *l != "<<<<<<< TASKS" && *l != ">>>>>>> TASKS")
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `units` standalone SEARCH units that each have exactly one error (no
/// `path`), separated by a line of prose.
pub fn every_unit_an_error(units: usize) -> String {
    (0..units)
        .map(|i| {
            format!("Change {i}:\n<<<<<<< SEARCH\nold {i}\n=======\nnew {i}\n>>>>>>> REPLACE\n")
        })
        .collect()
}

/// A chat history in aider's style with `blocks` blocks that name their
/// file only on the line before the fence, as aider writes them, with
/// prose between: read as clada (`--dialect clada`), every block lacks
/// `path`.
pub fn aider_reply(blocks: usize) -> String {
    (0..blocks)
        .map(|i| {
            format!(
                "Now update the handler number {i}, keeping the signature.\n\nsrc/handler{i}.py\n```python\n<<<<<<< SEARCH\ndef handle_{i}(req):\n    return None\n=======\ndef handle_{i}(req):\n    return respond(req)\n>>>>>>> REPLACE\n```\n\n"
            )
        })
        .collect()
}

/// Writes a fixture to `dir`: its tree in `tree/`, `edits.md` (one TASKS
/// block per file), `standalone.md` (every edit a unit of its own) and
/// `edits.diff` (the same change for `git apply`).
pub fn write_fixture(fx: &EditFixture, dir: &std::path::Path) -> std::io::Result<()> {
    for (path, text) in &fx.files {
        let p = dir.join("tree").join(path);
        std::fs::create_dir_all(p.parent().unwrap_or(dir))?;
        std::fs::write(p, text)?;
    }
    std::fs::write(dir.join("edits.md"), &fx.document)?;
    std::fs::write(dir.join("standalone.md"), standalone(&fx.document))?;
    std::fs::write(dir.join("edits.diff"), &fx.diff)
}

/// The path of the `k`-th file of [`small_tasks`]: 1,000 files a directory.
pub fn small_task_path(k: usize) -> String {
    format!("d{}/f{}", k / 1000, k % 1000)
}

/// A document of `tasks` standalone REMOVE tasks, one for each file of
/// [`write_small_tree`] (`d0/f0` … `d999/f999` for a million): many small
/// tasks, a million of them in 43.8 MB (under the 50 MiB limit).
pub fn small_tasks(tasks: usize) -> String {
    let mut out = String::with_capacity(tasks * 46);
    for k in 0..tasks {
        let _ = write!(
            out,
            "<<<<<<< REMOVE path=\"{}\"\n>>>>>>> END\n",
            small_task_path(k)
        );
    }
    out
}

/// Creates the `tasks` empty files that a [`small_tasks`] document removes,
/// under `dir`.
pub fn write_small_tree(tasks: usize, dir: &std::path::Path) -> std::io::Result<()> {
    for k in 0..tasks {
        if k % 1000 == 0 {
            std::fs::create_dir_all(dir.join(format!("d{}", k / 1000)))?;
        }
        std::fs::File::create(dir.join(small_task_path(k)))?;
    }
    Ok(())
}

/// A file of `matches` lines `tick` and a document of one SEARCH with
/// `count="all"` that turns every one into `tock`: (file text, document).
/// The file is `ticks.txt`.
pub fn count_all_fixture(matches: usize) -> (String, String) {
    let file = "tick\n".repeat(matches);
    let doc =
        "<<<<<<< SEARCH path=\"ticks.txt\" count=\"all\"\ntick\n=======\ntock\n>>>>>>> REPLACE\n"
            .to_owned();
    (file, doc)
}

/// The shapes of document `--bench memory` measures in every dialect
/// (issue 29, item 9): each name is `DIALECT-SHAPE`, its dialect the
/// `--dialect` to read it in.
pub const MEMORY_FAMILIES: [&str; 16] = [
    "clada-hunks",
    "aider-hunks",
    "codex-hunks",
    "udiff-numbered",
    "udiff-unnumbered",
    "cline-hunks",
    "cline-roo",
    "cml-hunks",
    "udiff-big",
    "cline-big",
    "cline-unclosed",
    "udiff-empty",
    "codex-headers",
    "cline-nosep",
    "clada-nopath",
    "aider-unclosed",
];

/// Line `i` of [`memory_family`]'s file `f.txt`.
fn family_line(i: usize) -> String {
    format!("line {i:08} of the file\n")
}

/// A document of family `name` (see [`MEMORY_FAMILIES`]) of about `size`
/// bytes and the file `f.txt` it edits: (the `--dialect` to read it in,
/// document, file). `*-hunks`: one-line edits of successive lines of one
/// file; `*-big`: one edit of every line; `cline-unclosed`: `------- SEARCH`
/// lines and nothing else; `udiff-empty`: `@@ @@` lines under one header;
/// `codex-headers`: `*** Update File:` lines with no hunk; `cline-nosep`:
/// blocks without `=======` in one call; `clada-nopath`: SEARCH units
/// naming no file; `aider-unclosed`: `<<<<<<< SEARCH` lines after a file
/// name. `None` for an unknown name.
pub fn memory_family(name: &str, size: usize) -> Option<(&'static str, String, String)> {
    let dialect = match name.split('-').next()? {
        "clada" => "clada",
        "aider" => "aider",
        "codex" => "codex",
        "udiff" => "udiff",
        "cline" => "cline",
        "cml" => "cml",
        _ => return None,
    };
    let mut doc = String::with_capacity(size + 4096);
    let mut n = 0;
    let mut repeat = |doc: &mut String, head: &str, each: &dyn Fn(usize) -> String, tail: &str| {
        doc.push_str(head);
        while doc.len() < size {
            doc.push_str(&each(n));
            n += 1;
        }
        doc.push_str(tail);
    };
    let l = family_line;
    match name {
        "clada-hunks" => repeat(
            &mut doc,
            "",
            &|i| {
                format!(
                    "<<<<<<< SEARCH path=\"f.txt\"\n{}=======\nLINE {i}\n>>>>>>> REPLACE\n",
                    l(i)
                )
            },
            "",
        ),
        "aider-hunks" => repeat(
            &mut doc,
            "",
            &|i| {
                format!(
                    "f.txt\n```\n<<<<<<< SEARCH\n{}=======\nLINE {i}\n>>>>>>> REPLACE\n```\n",
                    l(i)
                )
            },
            "",
        ),
        "codex-hunks" => repeat(
            &mut doc,
            "*** Begin Patch\n*** Update File: f.txt\n",
            &|i| format!("@@\n-{}+LINE {i}\n", l(i)),
            "*** End Patch\n",
        ),
        "udiff-numbered" => repeat(
            &mut doc,
            "--- a/f.txt\n+++ b/f.txt\n",
            &|i| format!("@@ -{0},1 +{0},1 @@\n-{1}+LINE {i}\n", i + 1, l(i)),
            "",
        ),
        "udiff-unnumbered" => repeat(
            &mut doc,
            "--- a/f.txt\n+++ b/f.txt\n",
            &|i| format!("@@ @@\n-{}+LINE {i}\n", l(i)),
            "",
        ),
        "cline-hunks" => repeat(
            &mut doc,
            "<replace_in_file>\n<path>f.txt</path>\n<diff>\n",
            &|i| {
                format!(
                    "------- SEARCH\n{}=======\nLINE {i}\n+++++++ REPLACE\n",
                    l(i)
                )
            },
            "</diff>\n</replace_in_file>\n",
        ),
        "cline-roo" => repeat(
            &mut doc,
            "<apply_diff>\n<path>f.txt</path>\n<diff>\n",
            &|i| {
                format!(
                    "<<<<<<< SEARCH\n:start_line:{}\n-------\n{}=======\nLINE {i}\n>>>>>>> REPLACE\n\n",
                    i + 1,
                    l(i)
                )
            },
            "</diff>\n</apply_diff>\n",
        ),
        "cml-hunks" => repeat(
            &mut doc,
            "<tasks>\n",
            &|i| {
                format!(
                    "<edit path=\"f.txt\"><search>{}</search><replace>LINE {i}\n</replace></edit>\n",
                    l(i)
                )
            },
            "</tasks>\n",
        ),
        "udiff-big" | "cline-big" => {
            let lines = size / 2 / family_line(0).len();
            n = lines;
            let (head, mid, tail) = if name == "udiff-big" {
                (
                    format!("--- a/f.txt\n+++ b/f.txt\n@@ -1,{lines} +1,{lines} @@\n"),
                    "",
                    "",
                )
            } else {
                (
                    "<replace_in_file>\n<path>f.txt</path>\n<diff>\n------- SEARCH\n".to_owned(),
                    "=======\n",
                    "+++++++ REPLACE\n</diff>\n</replace_in_file>\n",
                )
            };
            let (old, new) = if name == "udiff-big" {
                ("-", "+")
            } else {
                ("", "")
            };
            doc.push_str(&head);
            for i in 0..lines {
                doc.push_str(old);
                doc.push_str(&l(i));
            }
            doc.push_str(mid);
            for i in 0..lines {
                let _ = writeln!(doc, "{new}LINE {i}");
            }
            doc.push_str(tail);
        }
        "cline-unclosed" => repeat(&mut doc, "", &|_| "------- SEARCH\n".to_owned(), ""),
        "udiff-empty" => repeat(
            &mut doc,
            "--- a/f.txt\n+++ b/f.txt\n",
            &|_| "@@ @@\n".to_owned(),
            "",
        ),
        "codex-headers" => repeat(
            &mut doc,
            "*** Begin Patch\n",
            &|_| "*** Update File: f.txt\n".to_owned(),
            "",
        ),
        "cline-nosep" => repeat(
            &mut doc,
            "<replace_in_file>\n<path>f.txt</path>\n<diff>\n",
            &|i| format!("------- SEARCH\n{}+++++++ REPLACE\n", l(i)),
            "</diff>\n</replace_in_file>\n",
        ),
        "clada-nopath" => repeat(
            &mut doc,
            "",
            &|i| {
                format!(
                    "<<<<<<< SEARCH\n{}=======\nLINE {i}\n>>>>>>> REPLACE\n",
                    l(i)
                )
            },
            "",
        ),
        "aider-unclosed" => repeat(&mut doc, "f.txt\n", &|_| "<<<<<<< SEARCH\n".to_owned(), ""),
        _ => return None,
    }
    let file: String = (0..n.max(1)).map(family_line).collect();
    Some((dialect, doc, file))
}

/// Runs `cmd` under a measuring process (the calling bench binary, started
/// again with `--measure`); returns its wall time in ms and peak RSS in KiB.
pub fn run_measured(cmd: &[String]) -> (f64, u64) {
    let exe = std::env::current_exe().unwrap_or_default();
    let out = std::process::Command::new(exe)
        .arg("--measure")
        .args(cmd)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let ms = it.next().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
    let kib = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    (ms, kib)
}

/// The measuring process: runs the command with its output read and
/// dropped (a pipe, not `/dev/null`: GNU grep stops at the first match when
/// its output is `/dev/null`), and prints its wall time in ms, its peak
/// RSS in KiB and its CPU time in ms (`getrusage(RUSAGE_CHILDREN)`).
pub fn measure(cmd: &[String]) {
    let start = std::time::Instant::now();
    let Some((program, args)) = cmd.split_first() else {
        eprintln!("nothing to measure");
        std::process::exit(1);
    };
    let child = std::process::Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("cannot run {cmd:?}");
        std::process::exit(1);
    };
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::copy(&mut out, &mut std::io::sink());
    }
    let _ = child.wait();
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN);
    let kib = usage.map(|u| u.max_rss()).unwrap_or(0);
    let cpu = usage.map_or(f64::NAN, |u| {
        let ms =
            |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1000.0 + t.tv_usec() as f64 / 1000.0;
        ms(u.user_time()) + ms(u.system_time())
    });
    println!("{ms} {kib} {cpu}");
}

/// [`run_measured`], with the CPU time (user and system, in ms) the
/// command took: what a busy machine changes least.
pub fn run_measured_cpu(cmd: &[String]) -> (f64, f64, u64) {
    let exe = std::env::current_exe().unwrap_or_default();
    let out = std::process::Command::new(exe)
        .arg("--measure")
        .args(cmd)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace();
    let ms = it.next().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
    let kib = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let cpu = it.next().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
    (ms, cpu, kib)
}

/// One change written in every dialect clada reads: about `size` bytes of
/// clada (SEARCH edits of a few lines, and WRITEs), and the same tasks as
/// aider blocks, codex patches and CML elements. Returns (clada, aider,
/// codex, cml).
pub fn dialect_documents(size: usize) -> (String, String, String, String) {
    use clada_markers::dialect::{Dialect, convert};
    let mut clada = String::with_capacity(size + 4096);
    let mut cml = String::with_capacity(size + 4096);
    let mut n = 0;
    while clada.len() < size {
        n += 1;
        let path = format!("src/module{}/file{n}.rs", n % 10);
        let search = format!("fn old_{n}(x: u32) -> u32 {{\n    x + {n}\n}}\n");
        let replace = format!("fn new_{n}(x: u32) -> u32 {{\n    x * {n}\n}}\n");
        if n % 5 == 0 {
            let body: String = (0..20)
                .map(|i| format!("    let v{i} = compute({i}, \"{n}\");\n"))
                .collect();
            let _ = writeln!(clada, "<<<<<<< WRITE path=\"{path}\"\n{body}>>>>>>> END");
            let _ = writeln!(cml, "<write path=\"{path}\"><![CDATA[{body}]]></write>");
        } else {
            let _ = writeln!(
                clada,
                "<<<<<<< SEARCH path=\"{path}\"\n{search}=======\n{replace}>>>>>>> REPLACE"
            );
            let _ = write!(
                cml,
                "<edit path=\"{path}\">\n  <search><![CDATA[{search}]]></search>\n  <replace><![CDATA[{replace}]]></replace>\n</edit>\n"
            );
        }
    }
    let doc = clada_markers::parse(&clada);
    // Writes are whole-file in aider only as appends: convert the edits.
    let edits: String = clada
        .split_inclusive(">>>>>>> REPLACE\n")
        .filter_map(|b| b.find("<<<<<<< SEARCH").map(|i| &b[i..]))
        .collect();
    let aider = convert(&clada_markers::parse(&edits), Dialect::Aider).unwrap_or_default();
    let codex = convert(&doc, Dialect::Codex).unwrap_or_default();
    (clada, aider, codex, cml)
}

/// `clada` (a document of standalone SEARCH and WRITE tasks, as
/// [`dialect_documents`] makes) as a unified diff: the same change, one
/// file's diff per task.
pub fn udiff_document(clada: &str) -> String {
    use clada_markers::dialect::{Dialect, convert};
    convert(&clada_markers::parse(clada), Dialect::Udiff).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edit_fixture_says_the_same_change_twice() {
        let fx = edit_fixture(4, 100, 20);
        let doc = clada_markers::parse(&fx.document);
        assert!(!doc.has_errors());
        assert_eq!(doc.tasks().count(), 20);
        assert_eq!(fx.diff.matches("diff --git").count(), 4);
        assert_eq!(fx.diff.matches("\n+    let").count(), 20);
        assert!(fx.files.iter().zip(&fx.changed).all(|(a, b)| a.1 != b.1));
    }

    #[test]
    fn the_big_file_fixture_says_the_same_change_twice() {
        let fx = big_file_fixture(2000, 50);
        let doc = clada_markers::parse(&fx.document);
        assert!(!doc.has_errors());
        assert_eq!(doc.tasks().count(), 50);
        assert_eq!(fx.diff.matches("\n+    let").count(), 50);
        assert_eq!(fx.changed[0].1.matches("compute_faster").count(), 50);
    }

    #[test]
    fn the_other_generators_say_what_they_promise() {
        let fx = edit_fixture(4, 100, 20);
        let text = standalone(&fx.document);
        let alone = clada_markers::parse(&text);
        assert!(!alone.has_errors());
        assert_eq!((alone.units.len(), alone.tasks().count()), (20, 20));
        let text = every_unit_an_error(50);
        let errors = clada_markers::parse(&text);
        assert_eq!(errors.units.len(), 50);
        assert!((1..=50).all(|b| errors.diagnostics_of(b).filter(|d| d.is_error()).count() == 1));
        let reply = aider_reply(30);
        let as_clada = clada_markers::parse(&reply);
        assert_eq!(as_clada.units.len(), 30);
        assert_eq!(
            as_clada.diagnostics.iter().filter(|d| d.is_error()).count(),
            30
        );
        let as_aider = clada_markers::dialect::parse_dialect(
            &reply,
            clada_markers::dialect::detect(&reply),
            clada_markers::ParseOptions::default(),
        );
        assert!(!as_aider.has_errors(), "{:?}", as_aider.diagnostics.first());
        assert_eq!(as_aider.tasks().count(), 30);
    }

    #[test]
    fn the_small_tasks_remove_every_file_of_their_tree() {
        let text = small_tasks(2_500);
        let doc = clada_markers::parse(&text);
        assert!(!doc.has_errors(), "{:?}", doc.diagnostics.first());
        assert_eq!((doc.units.len(), doc.tasks().count()), (2_500, 2_500));
        assert!(text.ends_with("<<<<<<< REMOVE path=\"d2/f499\"\n>>>>>>> END\n"));
        // 46 bytes a task at most: a million stay under 50 MiB.
        assert!(small_tasks(1_000).len() <= 46 * 1_000);
        let dir = std::env::temp_dir().join(format!("clada-small-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_small_tree(2_500, &dir).expect("tree");
        assert!(dir.join("d2/f499").is_file() && !dir.join("d2/f500").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_count_all_edit_matches_every_line() {
        let (file, text) = count_all_fixture(1_000);
        assert_eq!(file.lines().filter(|l| *l == "tick").count(), 1_000);
        let doc = clada_markers::parse(&text);
        assert!(!doc.has_errors(), "{:?}", doc.diagnostics.first());
        assert_eq!(doc.tasks().count(), 1);
    }

    #[test]
    fn the_dialect_documents_say_the_same_change() {
        use clada_markers::ParseOptions;
        use clada_markers::dialect::{Dialect, parse_dialect};
        let (clada, aider, codex, cml) = dialect_documents(64 * 1024);
        let ops = |text: &str, d: Dialect| {
            let doc = parse_dialect(text, d, ParseOptions::default());
            assert!(!doc.has_errors(), "{d}: {:?}", doc.diagnostics.first());
            // The same operations, but for the matching each dialect
            // gives its edits (codex's passes, whole lines).
            doc.tasks()
                .filter_map(|t| t.op.clone())
                .map(|mut o| {
                    if let clada_markers::Op::Edit { matching, .. }
                    | clada_markers::Op::EditRange { matching, .. } = &mut o
                    {
                        *matching = clada_markers::Matching::default();
                    }
                    format!("{o:?}").replace(
                        &format!(", matching: {:?}", clada_markers::Matching::default()),
                        "",
                    )
                })
                .collect::<Vec<_>>()
        };
        let all = ops(&clada, Dialect::Clada);
        assert!(all.len() > 100);
        assert_eq!(ops(&codex, Dialect::Codex), all);
        // CML bodies are exact text: the same operations.
        assert_eq!(ops(&cml, Dialect::Cml), all);
        // aider has no whole-file write: the edits only.
        let edits: Vec<_> = all
            .iter()
            .filter(|o| o.starts_with("Edit"))
            .cloned()
            .collect();
        assert_eq!(ops(&aider, Dialect::Aider), edits);
        assert_eq!(ops(&udiff_document(&clada), Dialect::Udiff), all);
    }

    /// Each memory family reads as meant in its dialect: the edits of
    /// `*-hunks` and `*-big` with no error, each applying to `f.txt`; the
    /// hostile shapes with errors.
    #[test]
    fn memory_families_read_as_meant() {
        use clada_markers::ParseOptions;
        use clada_markers::dialect::{Dialect, parse_dialect};
        for name in MEMORY_FAMILIES {
            let (dialect, doc, file) = memory_family(name, 16 * 1024).expect("a family");
            let dialect = match dialect {
                "clada" => Dialect::Clada,
                "aider" => Dialect::Aider,
                "codex" => Dialect::Codex,
                "udiff" => Dialect::Udiff,
                "cline" => Dialect::Cline,
                _ => Dialect::Cml,
            };
            assert!(doc.len() >= 8 * 1024, "{name}");
            let parsed = parse_dialect(&doc, dialect, ParseOptions::default());
            let clean = name.ends_with("-hunks")
                || name.ends_with("-big")
                || name.starts_with("udiff-") && name.ends_with("numbered")
                || name == "cline-roo";
            assert_eq!(
                !parsed.has_errors(),
                clean,
                "{name}: {:?}",
                parsed.diagnostics.first()
            );
            if clean {
                assert!(parsed.tasks().count() > 0, "{name}");
                assert!(file.lines().count() >= parsed.tasks().count(), "{name}");
            }
        }
    }

    #[test]
    fn generated_documents_are_clean_and_sized() {
        for doc in [content_heavy(MIB), task_heavy(MIB)] {
            assert!(doc.len() >= MIB);
            let parsed = clada_markers::parse(&doc);
            assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics.first());
            assert!(parsed.tasks().count() > 0);
        }
    }
}
