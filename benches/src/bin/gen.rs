//! Writes a generated document: `gen content|tasks MIB FILE`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(kind), Some(mib), Some(file)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: gen content|tasks MIB FILE");
        std::process::exit(2);
    };
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
