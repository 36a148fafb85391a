//! `clada apply --stream`: each unit applied as soon as its closer is read
//! (PROTOCOL §11.5), reported as it goes (text, or JSON Lines). Lines are
//! read by the library's reader, which keeps no more of one than the size
//! limit: memory is the largest unit, not the stream.

use std::io::BufRead;

use clada_markers::Apply;
use clada_markers::input::read_line;
use clada_markers::report::StreamReport;
use clada_markers::stream::Splitter;

use super::ApplyArgs;
use super::streamed::{finish, unit};

pub(crate) fn run(args: &ApplyArgs, apply: &mut Apply, color: bool) -> u8 {
    let mut reader: Box<dyn BufRead> = match args.file.as_deref() {
        None => Box::new(std::io::stdin().lock()),
        Some(p) if p == std::path::Path::new("-") => Box::new(std::io::stdin().lock()),
        Some(p) => match std::fs::File::open(p) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("clada: cannot read {}: {e}", p.display());
                return 2;
            }
        },
    };
    let mut totals = StreamReport::new();
    let mut splitter = Splitter::for_dialect(args.dialect.streamed());
    let mut line = Vec::new();
    loop {
        let raw = match read_line(&mut reader, &mut line) {
            Ok(0) => break,
            Ok(raw) => raw,
            Err(e) => {
                eprintln!("clada: cannot read the stream: {e}");
                return 2;
            }
        };
        if let Some(chunk) = splitter.push_read(&line, raw) {
            unit(args, apply, color, &chunk, None, &mut totals, "the stream");
        }
    }
    if let Some(chunk) = splitter.finish() {
        unit(args, apply, color, &chunk, None, &mut totals, "the stream");
    }
    finish(&totals, args.format);
    u8::from(!totals.ok)
}
