//! `clada man`: the manual page, in roff. Every command and flag comes from
//! clap's command tree, so the manual cannot drift from the command line;
//! the format, the exit codes and the examples are written here.

use std::fmt::Write as _;

use clap::Command;

/// Text for roff: backslashes, dashes and a leading `.` or `'` escaped.
fn roff(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.split('\n') {
        if !out.is_empty() {
            out.push('\n');
        }
        if line.starts_with('.') || line.starts_with('\'') {
            out.push_str("\\&");
        }
        for c in line.chars() {
            match c {
                '\\' => out.push_str("\\e"),
                '-' => out.push_str("\\-"),
                _ => out.push(c),
            }
        }
    }
    out
}

/// A paragraph of help text: blank lines start new paragraphs.
fn paragraphs(out: &mut String, text: &str) {
    for (i, p) in text.trim().split("\n\n").enumerate() {
        if i > 0 {
            out.push_str(".PP\n");
        }
        let joined: Vec<&str> = p.lines().map(str::trim).collect();
        let _ = writeln!(out, "{}", roff(&joined.join(" ")));
    }
}

/// Lines shown as they are (examples).
fn verbatim(out: &mut String, text: &str) {
    out.push_str(".PP\n.nf\n");
    let _ = writeln!(out, "{}", roff(text.trim_end()));
    out.push_str(".fi\n");
}

/// How an argument is written: `-C, --root DIR`, `--sandbox[=on|off]`, `FILE`.
fn synopsis(arg: &clap::Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
    if arg.is_positional() {
        return format!("\\fI{}\\fR", roff(&value));
    }
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("\\fB\\-{s}\\fR"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("\\fB{}\\fR", roff(&format!("--{l}"))));
    }
    let mut text = names.join(", ");
    let takes = arg.get_num_args().is_some_and(|n| n.takes_values());
    if takes {
        let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        let sep = if arg.is_require_equals_set() {
            "="
        } else {
            " "
        };
        if optional {
            let _ = write!(text, "[{sep}\\fI{}\\fR]", roff(&value));
        } else {
            let _ = write!(text, "{sep}\\fI{}\\fR", roff(&value));
        }
    }
    text
}

fn arguments(out: &mut String, cmd: &Command) {
    let args: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set()).collect();
    if args.is_empty() {
        return;
    }
    for arg in args {
        let _ = writeln!(out, ".TP\n{}", synopsis(arg));
        let help = arg
            .get_long_help()
            .or_else(|| arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        let mut text = help.trim().to_owned();
        if !text.is_empty() && !text.ends_with(['.', ':', ')']) {
            text.push('.');
        }
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if !defaults.is_empty() && arg.get_num_args().is_some_and(|n| n.takes_values()) {
            let _ = write!(text, " [default: {}]", defaults.join(", "));
        }
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_owned())
            .collect();
        if !values.is_empty() && !arg.is_positional() {
            let _ = write!(text, " [possible values: {}]", values.join(", "));
        }
        let _ = writeln!(out, "{}", roff(text.trim()));
    }
}

/// The manual of `cmd` (the whole `clada` command tree).
pub(crate) fn render(mut cmd: Command) -> String {
    cmd.build();
    let mut out = String::new();
    let version = cmd.get_version().unwrap_or_default().to_owned();
    let _ = writeln!(
        out,
        ".TH clada 1 \"\" \"clada {version}\" \"User Commands\""
    );
    out.push_str(".SH NAME\n");
    let about = cmd.get_about().map(ToString::to_string).unwrap_or_default();
    let _ = writeln!(out, "clada \\- {}", roff(about.trim_end_matches('.')));
    out.push_str(".SH SYNOPSIS\n");
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let usage = sub.clone().render_usage().to_string();
        let usage = usage.trim().trim_start_matches("Usage:").trim();
        let _ = writeln!(out, "{}\n.br", roff(usage));
    }
    out.push_str(".SH DESCRIPTION\n");
    paragraphs(&mut out, DESCRIPTION);
    out.push_str(".SH COMMANDS\n");
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let _ = writeln!(out, ".SS \"clada {}\"", sub.get_name());
        let about = sub
            .get_long_about()
            .or_else(|| sub.get_about())
            .map(ToString::to_string)
            .unwrap_or_default();
        paragraphs(&mut out, &about);
        let usage = sub.clone().render_usage().to_string();
        verbatim(&mut out, usage.trim());
        arguments(&mut out, sub);
        if let Some(after) = sub.get_after_long_help().or_else(|| sub.get_after_help()) {
            verbatim(&mut out, &after.to_string());
        }
    }
    out.push_str(".SH OPTIONS\n");
    arguments(&mut out, &cmd);
    for (title, text) in SECTIONS {
        let _ = writeln!(out, ".SH {title}");
        if title.starts_with("EXAMPLE") {
            verbatim(&mut out, text);
        } else {
            paragraphs(&mut out, text);
        }
    }
    out
}

const DESCRIPTION: &str = "\
clada applies the edits a language model writes. A reply holds edit blocks \
written with git-style conflict markers among its prose; clada finds them, \
checks them, carries them out against a directory (the root), and reports \
what happened as text for people or as JSON or XML for programs.

It never writes outside the root, never follows a symbolic link, never \
leaves a half-written file, and never runs a command nobody approved.";

const SECTIONS: &[(&str, &str)] = &[
    (
        "FORMAT",
        "\
A block starts with a marker line at column 0: seven < and a keyword with \
attributes, and ends with seven > and a keyword.

WRITE path=\"f\" (content, >>>>>>> END) creates or replaces f; append=\"true\" \
adds to its end. SEARCH path=\"f\" (or EDIT): search text, =======, \
replacement, >>>>>>> REPLACE; exact and case-sensitive, count=\"2\" or \
count=\"all\". SEARCH-START path=\"f\": start text, <<<<<<< SEARCH-END, end text, \
=======, replacement, >>>>>>> REPLACE. RUN (dir=\"d\"): a command, >>>>>>> END. \
MOVE from=\"a\" to=\"b\" and REMOVE path=\"f\": >>>>>>> END. TASKS: blocks, \
>>>>>>> TASKS, run in order, stopping at the first failure.

A block outside TASKS is a unit of its own; units succeed or fail \
independently. Inside a block opened with N <, only markers of exactly N \
characters count, so a longer fence makes shorter markers text. A RUN runs \
as a built-in command inside clada, as an approved command (sh -c, see \
clada allow: an approval holds at the root, or in the directory given with \
--dir, and never where git would find another repository), or after a \
question on the terminal. The full protocol is \
grammar/PROTOCOL.md in clada's repository; clada prompt prints a system \
prompt that teaches it to a model.",
    ),
    (
        "EXAMPLE DOCUMENT",
        "\
Prose is ignored.
<<<<<<< SEARCH path=\"src/greet.py\"
    print(\"Hello \" + name)
=======
    print(f\"Hello, {name}!\")
>>>>>>> REPLACE
<<<<<<< TASKS
<<<<<<< WRITE path=\"notes.txt\"
A new file.
>>>>>>> END
<<<<<<< RUN
ls
>>>>>>> END
>>>>>>> TASKS",
    ),
    (
        "EXIT STATUS",
        "\
0: every task succeeded, the document has no error and git succeeded (clada \
check: the document has no error; with --fix or --diff, the document as \
fixed).

1: anything else: a task failed or was skipped, a malformed block, the \
document too large or not UTF-8, a lock or git failure; clada allow \
--remove of a command that was not approved.

2: the command line itself: an unknown flag, a bad duration or size, an \
unreadable document, a missing root; clada check --fix of a link or a \
file it cannot write.",
    ),
    (
        "EXAMPLES",
        "\
clada apply reply.md
clada apply -C ~/project --format json < reply.md
clada apply --dry-run reply.md
clada check reply.md
clada check --fix reply.md
clada allow 'npm test'
clada allow --dir web 'npm test'
clada allow --list
clada prompt > system-prompt.md",
    ),
    (
        "FILES",
        "\
$XDG_CONFIG_HOME/clada/approvals.json (else ~/.config/clada/approvals.json): \
the approved commands of every root, each with the directory it holds in. \
The lock of a run and its journal: a file in $XDG_RUNTIME_DIR/clada/locks/ \
(else clada-UID/locks/ in the temporary directory), named after the \
repository or the root, never in the tree or in .git. A sandboxed command's \
temporary directory: clada-run-* in the temporary directory, its own, \
removed when it ends.",
    ),
    (
        "ENVIRONMENT",
        "\
NO_COLOR: no colour even on a terminal. XDG_CONFIG_HOME, XDG_STATE_HOME, \
XDG_RUNTIME_DIR, HOME: where clada's own directories are.",
    ),
];
