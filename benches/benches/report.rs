//! Reports at scale: `clada check` of documents where every unit has an
//! error (12.5k to 100k units, text and JSON), and `clada apply` text
//! against JSON on an aider-style reply read as clada (4,000 and 8,000
//! malformed blocks). Medians of a few runs, time and peak memory, and the
//! ratio of each doubling (linear is about 2).
//!
//! ```sh
//! cargo build --release -p clada-cli
//! cargo bench -p clada-benches --bench report
//! ```

use clada_benches::{
    aider_reply, clada_binary, every_unit_an_error, measure, median, run_measured,
};

const RUNS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        measure(&args[i + 1..]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let clada = clada_binary().display().to_string();
    let dir = std::env::temp_dir().join(format!("clada-bench-report-{}", std::process::id()));
    let _ = std::fs::create_dir_all(dir.join("root"));
    let root = dir.join("root").display().to_string();
    let time = |cmd: &[String]| {
        let runs: Vec<(f64, u64)> = (0..RUNS).map(|_| run_measured(cmd)).collect();
        (
            median(runs.iter().map(|r| r.0).collect()),
            runs.iter().map(|r| r.1).max().unwrap_or(0),
        )
    };

    println!("1. clada check, every unit an error (median of {RUNS}, ms; peak RSS MiB)");
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>10}",
        "units", "text", "json", "text MiB", "json MiB"
    );
    let mut last: Option<(f64, f64)> = None;
    for units in [12_500, 25_000, 50_000, 100_000] {
        let file = dir.join(format!("errors{units}.md"));
        std::fs::write(&file, every_unit_an_error(units)).expect("write");
        let f = file.display().to_string();
        let (t, tm) = time(&[clada.clone(), "check".into(), f.clone()]);
        let (j, jm) = time(&[
            clada.clone(),
            "check".into(),
            "--format".into(),
            "json".into(),
            f,
        ]);
        let ratio = last.map_or(String::new(), |(lt, lj)| {
            format!("   doubling {:.2}x {:.2}x", t / lt, j / lj)
        });
        println!(
            "{units:>8} {t:>10.1} {j:>10.1} {:>10.1} {:>10.1}{ratio}",
            tm as f64 / 1024.0,
            jm as f64 / 1024.0
        );
        last = Some((t, j));
    }

    println!(
        "\n2. clada apply --dialect clada of an aider-style reply, text against JSON (median of {RUNS}, ms)"
    );
    let mut last: Option<(f64, f64)> = None;
    for blocks in [4_000, 8_000] {
        let file = dir.join(format!("aider{blocks}.md"));
        std::fs::write(&file, aider_reply(blocks)).expect("write");
        let f = file.display().to_string();
        let apply = |format: &str| {
            vec![
                clada.clone(),
                "apply".into(),
                "--no-git".into(),
                "--dialect".into(),
                "clada".into(),
                "--format".into(),
                format.into(),
                "-C".into(),
                root.clone(),
                f.clone(),
            ]
        };
        let (t, _) = time(&apply("text"));
        let (j, _) = time(&apply("json"));
        let ratio = last.map_or(String::new(), |(lt, lj)| {
            format!("   doubling {:.2}x {:.2}x", t / lt, j / lj)
        });
        println!(
            "{blocks:>8} blocks: text {t:>8.1}  json {j:>8.1}  text/json {:.2}x{ratio}",
            t / j
        );
        last = Some((t, j));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
