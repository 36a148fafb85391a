//! What `clada watch` pays for each unit appended to a file that is already
//! large (PROTOCOL §11.6): the watched file starts with 1, 4 or 16 MiB of
//! prose (no unit), then 20 units are appended one at a time, each once the
//! one before has been applied; the figure is the median time from an
//! append to the file its unit writes. A watch that reads the whole file at
//! each change pays for the prose every time; one that reads only what was
//! appended does not.
//!
//! `CLADA_BEFORE` names a second binary to measure side by side (the
//! build before a change), in rotating order.
//!
//! ```sh
//! cargo build --release -p clada-cli
//! CLADA_BEFORE=/path/to/old/clada cargo bench -p clada-benches --bench watch
//! ```

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clada_benches::{MIB, clada_binary, median};

const APPENDS: usize = 20;
const ROUNDS: usize = 5;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mut binaries = vec![("clada", clada_binary())];
    if let Some(before) = std::env::var_os("CLADA_BEFORE") {
        binaries.push(("before", PathBuf::from(before)));
    }
    let dir = std::env::temp_dir().join(format!("clada-bench-watch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    println!(
        "median ms from an append to its unit applied ({APPENDS} appends x {ROUNDS} rounds), by the prose before"
    );
    for mib in [1, 4, 16] {
        let prose = prose(mib * MIB);
        let mut figures: Vec<Vec<f64>> = vec![Vec::new(); binaries.len()];
        for round in 0..ROUNDS {
            for k in 0..binaries.len() {
                let i = (round + k) % binaries.len();
                let scene = dir.join(format!("{mib}-{round}-{i}"));
                figures[i].extend(latencies(&binaries[i].1, &scene, &prose));
                let _ = std::fs::remove_dir_all(&scene);
            }
        }
        let medians: Vec<f64> = figures.into_iter().map(median).collect();
        let shown: Vec<String> = binaries
            .iter()
            .zip(&medians)
            .map(|((name, _), m)| format!("{name} {m:.2}"))
            .collect();
        let ratio = match medians.as_slice() {
            [new, old] => format!(", before / clada {:.1}x", old / new),
            _ => String::new(),
        };
        println!("{mib:>3} MiB: {}{ratio}", shown.join(", "));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lines of prose (no marker) adding up to about `size` bytes.
fn prose(size: usize) -> String {
    let line = "Some prose a person wrote about the reply below, with `code` in it.\n";
    line.repeat(size / line.len() + 1)
}

/// Starts a watch of `scene/replies.md` (holding `prose`), waits until it
/// applies a first unit, then appends [`APPENDS`] units one at a time:
/// the time each took to be applied, in ms.
fn latencies(clada: &Path, scene: &Path, prose: &str) -> Vec<f64> {
    let root = scene.join("root");
    std::fs::create_dir_all(&root).expect("root");
    let replies = scene.join("replies.md");
    std::fs::write(&replies, prose).expect("replies");
    let mut watch = Command::new(clada)
        .args(["watch", "--no-git", "--format", "jsonl"])
        .arg(&replies)
        .arg("-C")
        .arg(&root)
        .env("HOME", scene.join("home"))
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("clada watch");
    let mut out = Vec::new();
    for n in 0..=APPENDS {
        let start = Instant::now();
        append(
            &replies,
            &format!("<<<<<<< WRITE path=\"u{n}.txt\"\n{n}\n>>>>>>> END\n"),
        );
        wait_for(&mut watch, &root.join(format!("u{n}.txt")));
        // The first shows the watch is up.
        if n > 0 {
            out.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    out
}

fn append(file: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .expect("append");
}

/// Waits until `path` exists; stops the bench after a minute.
fn wait_for(watch: &mut Child, path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        if Instant::now() > deadline || watch.try_wait().ok().flatten().is_some() {
            let _ = watch.kill();
            panic!(
                "the watch did not apply the unit writing {}",
                path.display()
            );
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}
