//! Writes a generated document: `gen content|tasks MIB FILE`, or the apply
//! benchmark's tree, document and diff: `gen edits FILES DIR`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(kind), Some(mib), Some(file)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: gen content|tasks MIB FILE");
        std::process::exit(2);
    };
    if kind == "edits" {
        // gen edits FILES DIR: the apply benchmark's tree, document and diff.
        let fx = clada_benches::edit_fixture(mib.parse().unwrap_or(200), 2000, 2000);
        let dir = std::path::Path::new(file);
        for (path, text) in &fx.files {
            let p = dir.join("tree").join(path);
            let _ = std::fs::create_dir_all(p.parent().unwrap_or(dir));
            let _ = std::fs::write(p, text);
        }
        let _ = std::fs::write(dir.join("edits.md"), &fx.document);
        let _ = std::fs::write(dir.join("edits.diff"), &fx.diff);
        return;
    }
    let size = mib.parse::<usize>().unwrap_or(1) * clada_benches::MIB;
    let doc = match kind.as_str() {
        "content" => clada_benches::content_heavy(size),
        _ => clada_benches::task_heavy(size),
    };
    if let Err(e) = std::fs::write(file, doc) {
        eprintln!("cannot write {file}: {e}");
        std::process::exit(1);
    }
}
