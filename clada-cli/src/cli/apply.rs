//! `clada apply`: read, parse, run, report.

use std::time::Instant;

use clada_markers::engine::RunOptions;

use clada_markers::dialect::Dialect;
use clada_markers::engine::{Approver, NoPrompt, Terminal};
use clada_markers::engine::{Atomic, Observer, Quiet};
use clada_markers::report::text::{Detail, ExecOutput, TextPrinter};
use clada_markers::report::xml::render_xml;
use clada_markers::report::{DiagnosticReport, GitReport};
use clada_markers::{Apply, ApplyReport, Document};

use super::{ApplyArgs, AtomicArg, ErrorDetail, Format, OutputMode, Switch};
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
            args.root.join(clada_markers::engine::LEGACY_PATH).display(),
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
            let doc = Document {
                source: "",
                units: Vec::new(),
                diagnostics: vec![d.clone()],
            };
            let mut report =
                ApplyReport::new(&doc, Vec::new(), GitReport::default(), elapsed(started));
            report.diagnostics = vec![DiagnosticReport::unreadable(&d, input.valid_prefix())];
            let printed = match args.format {
                Format::Json | Format::Jsonl => output::json(&report),
                Format::Xml => render_xml(&report),
                Format::Text => output::unreadable_text(&input, &d, color),
            };
            output::print(&printed);
            return 1;
        }
    };
    let (dialect, doc) = args.dialect.read(text, args.allow_escape);
    let detail = detail(&args);
    let exec = exec(&args);
    let mut printer = TextPrinter::new(
        output::progress_writer(),
        &doc,
        &input.name,
        detail,
        exec,
        color,
    );
    if args.format == Format::Text && dialect != Dialect::Clada {
        output::print(&format!("Dialect: {dialect}\n\n"));
    }
    let mut quiet = Quiet;
    let observer: &mut dyn Observer = match args.format {
        Format::Text => &mut printer,
        Format::Json | Format::Xml | Format::Jsonl => &mut quiet,
    };
    let mut report = apply.run_observed(&doc, observer);
    report.duration_ms = elapsed(started);
    report.dialect = dialect;
    match args.format {
        Format::Text => printer.finish(&report),
        Format::Json | Format::Jsonl => output::print_json(&report),
        Format::Xml => output::print(&render_xml(&report)),
    }
    report.exit_code()
}

/// The run, set up from the flags: the same for every unit of a stream.
/// clada's own directories come from the environment.
pub(crate) fn applier(args: &ApplyArgs) -> Result<Apply, String> {
    let apply = Apply::new(&args.root).map_err(|e| {
        format!(
            "cannot open the root directory {}: {e}",
            args.root.display()
        )
    })?;
    Ok(apply
        .dirs(output::dirs())
        .allow_escape(args.allow_escape)
        .total_timeout(args.total_timeout)
        .git((!args.no_git).then(|| args.git_author.clone()))
        .lock(args.lock_file.clone(), args.lock_timeout)
        .commands(RunOptions {
            timeout: args.timeout,
            max_output: args.max_output,
            allow_any: args.allow_any_command,
            sandbox: match args.sandbox {
                Some(Switch::On) => true,
                Some(Switch::Off) => false,
                None => args.allow_any_command,
            },
            ..RunOptions::default()
        })
        .dry_run(args.dry_run)
        .atomic(args.atomic.map(|a| match a {
            AtomicArg::Unit => Atomic::Unit,
            AtomicArg::Document => Atomic::Document,
        })))
}

pub(crate) fn detail(args: &ApplyArgs) -> Detail {
    match args.error_detail {
        ErrorDetail::Minimal => Detail::Minimal,
        ErrorDetail::Full => Detail::Full,
        ErrorDetail::Debug => Detail::Debug,
    }
}

pub(crate) fn exec(args: &ApplyArgs) -> ExecOutput {
    match args.output_mode {
        OutputMode::Stream => ExecOutput::Stream,
        OutputMode::Buffer => ExecOutput::Buffer,
        OutputMode::Silent => ExecOutput::Silent,
    }
}

fn elapsed(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A whole run of `text` under the flags of `args`, never prompting, with
/// its report: what the MCP server's `apply` tool does. Refuses a document
/// over the size limit.
pub(crate) fn report_of(args: &ApplyArgs, text: &str) -> Result<ApplyReport, String> {
    let started = Instant::now();
    if text.len() > clada_markers::syntax::MAX_DOCUMENT_SIZE {
        return Err(clada_markers::syntax::too_large().message);
    }
    let mut apply = applier(args)?;
    let (dialect, doc) = args.dialect.read(text, args.allow_escape);
    let mut report = apply.run(&doc);
    report.duration_ms = elapsed(started);
    report.dialect = dialect;
    Ok(report)
}
