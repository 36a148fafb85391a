//! `clada apply`: read, parse, run, report.

use std::time::Instant;

use clada_markers::commands::{Approver, NoPrompt, Terminal};
use clada_markers::dialect::{Dialect, parse_units};
use clada_markers::report::JsonReport;
use clada_markers::report::text::{ExecOutput, TextPrinter};
use clada_markers::report::xml::render_xml;
use clada_markers::{Apply, ApplyReport, ParseOptions};

use super::streamed::{detail, exec};
use super::{ApplyArgs, Format};
use crate::output;

pub(crate) fn run(args: ApplyArgs) -> u8 {
    apply(args, false)
}

/// `clada watch`: the flags of `apply`, a file followed.
pub(crate) fn watch(args: ApplyArgs) -> u8 {
    apply(args, true)
}

fn apply(mut args: ApplyArgs, watch: bool) -> u8 {
    if watch {
        // stdin is the terminal, but the units come from the file.
        args.stream = true;
    }
    let started = Instant::now();
    if args.format == Format::Jsonl && !args.stream {
        eprintln!("clada: --format jsonl goes with --stream");
        return 2;
    }
    if args.stream && (args.dry_run || args.format == Format::Xml || args.format == Format::Json) {
        eprintln!(
            "clada: --stream prints text or --format jsonl, and applies for real (no --dry-run)"
        );
        return 2;
    }
    let input = if args.stream {
        None
    } else {
        match output::read_input(args.file.as_deref()) {
            Ok(input) => Some(input),
            Err(message) => {
                eprintln!("clada: {message}");
                return 2;
            }
        }
    };
    let approver: Box<dyn Approver> = if args.no_prompt || args.stream {
        Box::new(NoPrompt)
    } else {
        Box::new(Terminal)
    };
    let mut apply = match applier(&args) {
        Ok(apply) => apply.approver(approver),
        Err(message) => {
            eprintln!("clada: {message}");
            return 2;
        }
    };
    if apply.has_legacy_approvals() {
        eprintln!(
            "clada: warning: ignoring {}: approvals now live outside the tree{}; approve again with `clada allow -C ROOT CMD`",
            args.policy
                .root
                .join(clada_markers::commands::LEGACY_PATH)
                .display(),
            apply
                .approvals()
                .map(|a| format!(", in {}", a.file().display()))
                .unwrap_or_default()
        );
    }
    let color = output::stdout_color();
    let Some(input) = input else {
        if watch {
            return super::watch::run(&args, apply, color);
        }
        return super::stream::run(&args, &mut apply, color);
    };
    let text = match input.text() {
        Ok(text) => text,
        Err(d) => {
            // Nothing runs: the document is refused as a whole.
            let report = ApplyReport::unreadable(&d, input.valid_prefix(), elapsed(started));
            let printed = match args.format {
                Format::Json | Format::Jsonl => output::json(&report),
                Format::Xml => render_xml(&report),
                Format::Text => output::unreadable_text(&input, &d, color),
            };
            output::print(&printed);
            return 1;
        }
    };
    let dialect = args.dialect.of(text);
    let options = ParseOptions {
        allow_escape: args.policy.allow_escape,
    };
    // Each unit is dropped once reported: a run holds a batch of units,
    // not the tree.
    let parsed = parse_units(text, dialect, options);
    let mut apply = apply;
    apply.settings_mut().dialect = dialect;
    let finish = |report: &mut ApplyReport| {
        report.duration_ms = elapsed(started);
    };
    match args.format {
        Format::Text => {
            let mut printer = TextPrinter::new(
                output::progress_writer(),
                text,
                input.name(),
                detail(&args),
                exec(&args),
                color,
            )
            .diffs(args.diff);
            if dialect != Dialect::Clada {
                output::print(&format!("Dialect: {dialect}\n\n"));
            }
            let mut report = apply.run_units(text, parsed, &mut printer);
            finish(&mut report);
            printer.finish(&report);
            report.exit_code()
        }
        Format::Json | Format::Jsonl => {
            let out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let mut json = JsonReport::new(out, &ApplyReport::empty(dialect));
            let mut report = apply.run_units(text, parsed, &mut json);
            finish(&mut report);
            if let Err(e) = json.finish(&report)
                && e.kind() != std::io::ErrorKind::BrokenPipe
            {
                eprintln!("clada: cannot write the report: {e}");
            }
            report.exit_code()
        }
        Format::Xml => {
            let mut blocks = Vec::new();
            let mut report = apply.run_units(text, parsed, &mut blocks);
            finish(&mut report);
            report.blocks = blocks;
            output::print(&render_xml(&report));
            report.exit_code()
        }
    }
}

/// The run, set up from the flags: the same for every unit of a stream.
/// clada's own directories come from the environment.
pub(crate) fn applier(args: &ApplyArgs) -> Result<Apply, String> {
    let apply = Apply::new(&args.policy.root).map_err(|e| {
        format!(
            "cannot open the root directory {}: {e}",
            args.policy.root.display()
        )
    })?;
    Ok(apply.settings(args.settings()).dirs(output::dirs()))
}

fn elapsed(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A whole run of `text` under the flags of `args`, never prompting: its
/// report, and the text `clada apply` would print (without colour, command
/// output after each task, the document called `name`). What the MCP
/// server's `apply` tool does. Refuses a document over the size limit
/// (the library's rule, [`clada_markers::input::text`]).
pub(crate) fn report_of(
    args: &ApplyArgs,
    text: &str,
    name: &str,
    cancel: clada_markers::engine::Cancel,
) -> Result<(ApplyReport, String), String> {
    let started = Instant::now();
    let text = clada_markers::input::text(text).map_err(|d| d.message)?;
    let (dialect, doc) = args.dialect.read(text, args.policy.allow_escape);
    let mut apply = applier(args)?;
    apply.settings_mut().dialect = dialect;
    apply.settings_mut().cancel = cancel;
    let mut printer = TextPrinter::new(
        Vec::new(),
        text,
        name,
        detail(args),
        ExecOutput::Buffer,
        false,
    )
    .diffs(args.diff);
    let mut report = apply.run_with(&doc, &mut printer);
    report.duration_ms = elapsed(started);
    printer.finish(&report);
    let mut printed = String::new();
    if dialect != Dialect::Clada {
        printed = format!("Dialect: {dialect}\n\n");
    }
    printed += &String::from_utf8_lossy(&printer.into_inner());
    Ok((report, printed))
}
