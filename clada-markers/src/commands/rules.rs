//! The built-in commands (tier 1, SPEC §6) and the rules each one runs
//! under.
//!
//! A built-in command runs without a shell and only with flags this table
//! knows. For each command the table says which flags it accepts, which of
//! them take a value and whether that value is a path, which flags are
//! refused outright (those that follow links, run other programs, or write
//! where they should not), and how its operands are read: as paths, as a
//! pattern then paths (grep), as find's starting points and expression, or
//! as git's subcommand and arguments. Every path found here is then checked
//! like a task's path, on the file system, by the runner.

use crate::error_type::ErrorType;

/// How a flag's value is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Plain,
    Path,
}

/// How a command's operands are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operands {
    Paths,
    /// grep: the first operand is the pattern unless `-e` or `-f` gave one.
    PatternThenPaths,
    /// pwd: none.
    Nothing,
}

struct Rule {
    command: &'static str,
    /// Short flags without a value.
    short: &'static str,
    /// Short flags with a value.
    short_values: &'static [(char, Value)],
    long: &'static [&'static str],
    long_values: &'static [(&'static str, Value)],
    /// Flags refused outright, with the reason.
    refused: &'static [(&'static str, &'static str)],
    operands: Operands,
    /// Whether `-NUM` is a count (head, tail).
    numeric_flag: bool,
}

const FOLLOWS: &str = "it follows symbolic links";

const RULES: &[Rule] = &[
    Rule {
        command: "cat",
        short: "AbeEnstTuv",
        short_values: &[],
        long: &[
            "show-all",
            "number-nonblank",
            "show-ends",
            "number",
            "squeeze-blank",
            "show-tabs",
            "show-nonprinting",
        ],
        long_values: &[],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "head",
        short: "qvz",
        short_values: &[('n', Value::Plain), ('c', Value::Plain)],
        long: &["quiet", "silent", "verbose", "zero-terminated"],
        long_values: &[("lines", Value::Plain), ("bytes", Value::Plain)],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: true,
    },
    Rule {
        command: "tail",
        short: "qvz",
        short_values: &[('n', Value::Plain), ('c', Value::Plain)],
        long: &["quiet", "silent", "verbose", "zero-terminated"],
        long_values: &[("lines", Value::Plain), ("bytes", Value::Plain)],
        refused: &[
            ("-f", "it waits for more output forever"),
            ("-F", "it waits for more output forever"),
            ("--follow", "it waits for more output forever"),
            ("--retry", "it waits for files to appear"),
        ],
        operands: Operands::Paths,
        numeric_flag: true,
    },
    Rule {
        command: "grep",
        short: "EFGPiyvwxcLlmoqsbHhnTZzrIaU",
        short_values: &[
            ('e', Value::Plain),
            ('f', Value::Path),
            ('m', Value::Plain),
            ('A', Value::Plain),
            ('B', Value::Plain),
            ('C', Value::Plain),
            ('d', Value::Plain),
            ('D', Value::Plain),
        ],
        long: &[
            "extended-regexp",
            "fixed-strings",
            "basic-regexp",
            "perl-regexp",
            "ignore-case",
            "no-ignore-case",
            "invert-match",
            "word-regexp",
            "line-regexp",
            "count",
            "color",
            "colour",
            "files-without-match",
            "files-with-matches",
            "only-matching",
            "quiet",
            "silent",
            "no-messages",
            "byte-offset",
            "with-filename",
            "no-filename",
            "line-number",
            "initial-tab",
            "null",
            "null-data",
            "recursive",
            "text",
            "binary",
        ],
        long_values: &[
            ("regexp", Value::Plain),
            ("file", Value::Path),
            ("max-count", Value::Plain),
            ("after-context", Value::Plain),
            ("before-context", Value::Plain),
            ("context", Value::Plain),
            ("include", Value::Plain),
            ("exclude", Value::Plain),
            ("exclude-dir", Value::Plain),
            ("exclude-from", Value::Path),
            ("label", Value::Plain),
            ("binary-files", Value::Plain),
            ("directories", Value::Plain),
            ("devices", Value::Plain),
            ("color", Value::Plain),
            ("colour", Value::Plain),
        ],
        refused: &[("-R", FOLLOWS), ("--dereference-recursive", FOLLOWS)],
        operands: Operands::PatternThenPaths,
        numeric_flag: false,
    },
    Rule {
        command: "ls",
        short: "aAbBcCdfFgGhiklmnNopqQrRsStuUvxXZ1",
        short_values: &[
            ('w', Value::Plain),
            ('I', Value::Plain),
            ('T', Value::Plain),
        ],
        long: &[
            "all",
            "almost-all",
            "escape",
            "ignore-backups",
            "directory",
            "classify",
            "no-group",
            "human-readable",
            "si",
            "inode",
            "numeric-uid-gid",
            "literal",
            "indicator-style",
            "hide-control-chars",
            "show-control-chars",
            "quote-name",
            "reverse",
            "recursive",
            "size",
            "context",
            "group-directories-first",
            "full-time",
            "color",
            "author",
        ],
        long_values: &[
            ("width", Value::Plain),
            ("ignore", Value::Plain),
            ("hide", Value::Plain),
            ("sort", Value::Plain),
            ("time", Value::Plain),
            ("time-style", Value::Plain),
            ("format", Value::Plain),
            ("color", Value::Plain),
            ("block-size", Value::Plain),
            ("quoting-style", Value::Plain),
            ("tabsize", Value::Plain),
        ],
        refused: &[
            ("-L", FOLLOWS),
            ("-H", FOLLOWS),
            ("--dereference", FOLLOWS),
            ("--dereference-command-line", FOLLOWS),
            ("--dereference-command-line-symlink-to-dir", FOLLOWS),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "pwd",
        short: "LP",
        short_values: &[],
        long: &["logical", "physical"],
        long_values: &[],
        refused: &[],
        operands: Operands::Nothing,
        numeric_flag: false,
    },
    Rule {
        command: "tree",
        short: "adfisugpDFrtvUCnQNqA",
        short_values: &[
            ('L', Value::Plain),
            ('P', Value::Plain),
            ('I', Value::Plain),
        ],
        long: &[
            "noreport",
            "dirsfirst",
            "du",
            "prune",
            "charset",
            "gitignore",
            "matchdirs",
            "ignore-case",
        ],
        long_values: &[("filelimit", Value::Plain), ("sort", Value::Plain)],
        refused: &[
            ("-l", FOLLOWS),
            ("-o", "it writes its output to a file"),
            ("-R", "it writes files"),
            ("--fromfile", "it reads a listing from elsewhere"),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "wc",
        short: "clmwL",
        short_values: &[],
        long: &["bytes", "chars", "lines", "words", "max-line-length"],
        long_values: &[("files0-from", Value::Path), ("total", Value::Plain)],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "diff",
        short: "qsciwbBEZtTaNpuy",
        short_values: &[
            ('U', Value::Plain),
            ('C', Value::Plain),
            ('W', Value::Plain),
            ('I', Value::Plain),
            ('x', Value::Plain),
        ],
        long: &[
            "brief",
            "report-identical-files",
            "ignore-case",
            "ignore-all-space",
            "ignore-space-change",
            "ignore-blank-lines",
            "ignore-tab-expansion",
            "ignore-trailing-space",
            "text",
            "unified",
            "context",
            "new-file",
            "side-by-side",
            "strip-trailing-cr",
            "minimal",
            "show-c-function",
            "expand-tabs",
            "initial-tab",
            "suppress-common-lines",
            "color",
            "no-dereference",
        ],
        long_values: &[
            ("unified", Value::Plain),
            ("context", Value::Plain),
            ("width", Value::Plain),
            ("ignore-matching-lines", Value::Plain),
            ("label", Value::Plain),
            ("exclude", Value::Plain),
            ("color", Value::Plain),
            ("from-file", Value::Path),
            ("to-file", Value::Path),
        ],
        refused: &[
            ("-r", "a recursive diff follows symbolic links"),
            ("--recursive", "a recursive diff follows symbolic links"),
            ("-X", "it reads patterns from elsewhere"),
            ("--exclude-from", "it reads patterns from elsewhere"),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "file",
        short: "bikNnprsz0",
        short_values: &[('F', Value::Plain), ('e', Value::Plain)],
        long: &[
            "brief",
            "mime",
            "mime-type",
            "mime-encoding",
            "no-pad",
            "raw",
            "special-files",
            "uncompress",
            "print0",
            "keep-going",
            "no-dereference",
        ],
        long_values: &[("separator", Value::Plain), ("exclude", Value::Plain)],
        refused: &[
            ("-L", FOLLOWS),
            ("--dereference", FOLLOWS),
            ("-f", "it reads names from a file"),
            ("-m", "it loads magic from elsewhere"),
            ("-C", "it writes files"),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "stat",
        short: "ft",
        short_values: &[('c', Value::Plain)],
        long: &["file-system", "terse"],
        long_values: &[
            ("format", Value::Plain),
            ("printf", Value::Plain),
            ("cached", Value::Plain),
        ],
        refused: &[("-L", FOLLOWS), ("--dereference", FOLLOWS)],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "realpath",
        short: "eLmPqsz",
        short_values: &[],
        long: &[
            "canonicalize-existing",
            "canonicalize-missing",
            "logical",
            "physical",
            "quiet",
            "strip",
            "no-symlinks",
            "zero",
        ],
        long_values: &[("relative-to", Value::Path), ("relative-base", Value::Path)],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "xxd",
        short: "aEiprdu",
        short_values: &[
            ('c', Value::Plain),
            ('g', Value::Plain),
            ('l', Value::Plain),
            ('o', Value::Plain),
            ('s', Value::Plain),
        ],
        long: &[],
        long_values: &[],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "mv",
        short: "fnuvT",
        short_values: &[('t', Value::Path)],
        long: &[
            "force",
            "no-clobber",
            "update",
            "verbose",
            "no-target-directory",
            "strip-trailing-slashes",
        ],
        long_values: &[("target-directory", Value::Path)],
        refused: &[
            ("-i", "it asks on a terminal"),
            ("-b", "it writes backup files"),
            ("-S", "it writes backup files"),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "rm",
        short: "fdrRv",
        short_values: &[],
        long: &[
            "force",
            "dir",
            "recursive",
            "verbose",
            "one-file-system",
            "preserve-root",
        ],
        long_values: &[],
        refused: &[
            ("-i", "it asks on a terminal"),
            ("-I", "it asks on a terminal"),
            ("--no-preserve-root", "it could remove /"),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "cp",
        short: "afnprRuvPdTxl",
        short_values: &[('t', Value::Path)],
        long: &[
            "archive",
            "force",
            "no-clobber",
            "preserve",
            "recursive",
            "update",
            "verbose",
            "no-dereference",
            "no-target-directory",
            "one-file-system",
            "link",
        ],
        long_values: &[
            ("target-directory", Value::Path),
            ("preserve", Value::Plain),
            ("no-preserve", Value::Plain),
        ],
        refused: &[
            ("-L", FOLLOWS),
            ("-H", FOLLOWS),
            ("--dereference", FOLLOWS),
            ("-s", "it makes symbolic links"),
            ("--symbolic-link", "it makes symbolic links"),
            ("-i", "it asks on a terminal"),
            ("-b", "it writes backup files"),
        ],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "mkdir",
        short: "pv",
        short_values: &[('m', Value::Plain)],
        long: &["parents", "verbose"],
        long_values: &[("mode", Value::Plain)],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: false,
    },
    Rule {
        command: "touch",
        short: "acmh",
        short_values: &[('d', Value::Plain), ('t', Value::Plain), ('r', Value::Path)],
        long: &["no-create", "no-dereference"],
        long_values: &[
            ("date", Value::Plain),
            ("reference", Value::Path),
            ("time", Value::Plain),
        ],
        refused: &[],
        operands: Operands::Paths,
        numeric_flag: false,
    },
];

/// The git subcommands that run without approval.
const GIT_SUBCOMMANDS: &[&str] = &[
    "status", "diff", "log", "show", "branch", "stash", "ls-files",
];
const GIT_STASH: &[&str] = &["push", "list", "show", "pop", "apply"];
/// Options refused anywhere in a git command line.
const GIT_REFUSED: &[(&str, &str)] = &[
    ("-C", "it changes to another directory"),
    ("--git-dir", "it points git at another repository"),
    ("--work-tree", "it points git at another work tree"),
    ("-c", "it changes git's configuration"),
    ("--config-env", "it changes git's configuration"),
    ("--exec-path", "it changes which programs git runs"),
    ("--output", "it writes a file"),
    ("--ext-diff", "it runs an external program"),
    ("--upload-pack", "it runs another program"),
];

/// find predicates that take a value, and whether it is a path.
const FIND_VALUES: &[(&str, Value)] = &[
    ("-name", Value::Plain),
    ("-iname", Value::Plain),
    ("-path", Value::Plain),
    ("-ipath", Value::Plain),
    ("-wholename", Value::Plain),
    ("-iwholename", Value::Plain),
    ("-regex", Value::Plain),
    ("-iregex", Value::Plain),
    ("-regextype", Value::Plain),
    ("-lname", Value::Plain),
    ("-ilname", Value::Plain),
    ("-type", Value::Plain),
    ("-xtype", Value::Plain),
    ("-maxdepth", Value::Plain),
    ("-mindepth", Value::Plain),
    ("-size", Value::Plain),
    ("-mtime", Value::Plain),
    ("-mmin", Value::Plain),
    ("-atime", Value::Plain),
    ("-amin", Value::Plain),
    ("-ctime", Value::Plain),
    ("-cmin", Value::Plain),
    ("-perm", Value::Plain),
    ("-user", Value::Plain),
    ("-group", Value::Plain),
    ("-uid", Value::Plain),
    ("-gid", Value::Plain),
    ("-links", Value::Plain),
    ("-inum", Value::Plain),
    ("-printf", Value::Plain),
    ("-newer", Value::Path),
    ("-anewer", Value::Path),
    ("-cnewer", Value::Path),
    ("-samefile", Value::Path),
];
const FIND_FLAGS: &[&str] = &[
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-empty",
    "-true",
    "-false",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-xdev",
    "-mount",
    "-not",
    "!",
    "-and",
    "-a",
    "-or",
    "-o",
    "(",
    ")",
    ",",
    "-P",
    "-daystart",
    "-noleaf",
    "-ignore_readdir_race",
];
const FIND_REFUSED: &[(&str, &str)] = &[
    ("-exec", "it runs other programs"),
    ("-execdir", "it runs other programs"),
    ("-ok", "it runs other programs"),
    ("-okdir", "it runs other programs"),
    ("-delete", "it deletes files; use REMOVE or rm"),
    ("-fprint", "it writes a file"),
    ("-fprint0", "it writes a file"),
    ("-fprintf", "it writes a file"),
    ("-fls", "it writes a file"),
    ("-L", FOLLOWS),
    ("-H", FOLLOWS),
    ("-follow", FOLLOWS),
    ("-files0-from", "it reads names from a file"),
];

/// A path named by a built-in command's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathArg {
    pub(crate) text: String,
    /// Only the text is checked (git operands may be revisions, not paths).
    pub(crate) lexical_only: bool,
}

/// What a RUN body is, as far as the built-in list goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Judgement {
    /// A built-in command: run `argv` directly once `paths` are checked.
    /// `writes`: it changes files (so it must keep out of `.clada/` and
    /// `.git`).
    Builtin {
        argv: Vec<String>,
        paths: Vec<PathArg>,
        writes: bool,
    },
    /// Not a built-in command; whether it runs is up to approval.
    NotBuiltin { why: String },
    /// A built-in command that is refused as written.
    Refused { kind: ErrorType, message: String },
}

fn refuse(message: String) -> Judgement {
    Judgement::Refused {
        kind: ErrorType::CommandNotAllowed,
        message,
    }
}

/// Judges a RUN body (outer white space already trimmed).
pub(crate) fn judge(command: &str) -> Judgement {
    if command.contains('\n') {
        return Judgement::NotBuiltin {
            why: "it has more than one line".to_owned(),
        };
    }
    let first = command.split_whitespace().next().unwrap_or("");
    let known = first == "git" || first == "find" || RULES.iter().any(|r| r.command == first);
    if !known {
        return Judgement::NotBuiltin {
            why: format!("`{first}` is not one of the built-in commands"),
        };
    }
    if let Some(c) = super::shell::shell_syntax(command) {
        return Judgement::NotBuiltin {
            why: format!("it uses shell syntax (`{c}`)"),
        };
    }
    let Ok(argv) = shell_words::split(command) else {
        return Judgement::NotBuiltin {
            why: "its quotes do not balance".to_owned(),
        };
    };
    match argv.first().map(String::as_str) {
        Some("git") => git(argv),
        Some("find") => find(argv),
        Some(name) => match RULES.iter().find(|r| r.command == name) {
            Some(rule) => by_rule(rule, argv),
            None => Judgement::NotBuiltin {
                why: format!("`{name}` is not one of the built-in commands"),
            },
        },
        None => Judgement::NotBuiltin {
            why: "it is empty".to_owned(),
        },
    }
}

fn by_rule(rule: &Rule, argv: Vec<String>) -> Judgement {
    let name = rule.command;
    let mut paths = Vec::new();
    let mut operands = Vec::new();
    let mut pattern_given = false;
    let mut i = 1;
    let mut options_done = false;
    let path = |text: &str| PathArg {
        text: text.to_owned(),
        lexical_only: false,
    };
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if options_done || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.clone());
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if let Some((_, why)) = rule
            .refused
            .iter()
            .find(|(f, _)| f == arg || arg.split('=').next() == Some(f))
        {
            return refuse(format!("`{name} {arg}` is refused: {why}"));
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (flag, inline) = match long.split_once('=') {
                Some((f, v)) => (f, Some(v.to_owned())),
                None => (long, None),
            };
            if let Some((_, kind)) = rule.long_values.iter().find(|(f, _)| *f == flag) {
                let value = match inline {
                    Some(v) => v,
                    None if i < argv.len() && !rule.long.contains(&flag) => {
                        i += 1;
                        argv[i - 1].clone()
                    }
                    None if rule.long.contains(&flag) => continue,
                    None => return refuse(format!("`{name} --{flag}` needs a value")),
                };
                if matches!(flag, "regexp" | "file") {
                    pattern_given = true;
                }
                if *kind == Value::Path {
                    paths.push(path(&value));
                }
                continue;
            }
            if inline.is_none() && rule.long.contains(&flag) {
                continue;
            }
            return refuse(format!(
                "`{name} --{flag}` is not among the flags clada runs without approval"
            ));
        }
        // A cluster of short flags: `-rf`, `-n5`, `-n 5`.
        if rule.numeric_flag && arg[1..].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let flags: Vec<char> = arg[1..].chars().collect();
        let mut k = 0;
        while k < flags.len() {
            let c = flags[k];
            k += 1;
            if let Some((_, why)) = rule.refused.iter().find(|(f, _)| *f == format!("-{c}")) {
                return refuse(format!("`{name} -{c}` is refused: {why}"));
            }
            if let Some((_, kind)) = rule.short_values.iter().find(|(f, _)| *f == c) {
                let rest: String = flags[k..].iter().collect();
                let value = if !rest.is_empty() {
                    rest
                } else if i < argv.len() {
                    i += 1;
                    argv[i - 1].clone()
                } else {
                    return refuse(format!("`{name} -{c}` needs a value"));
                };
                if matches!(c, 'e' | 'f') && name == "grep" {
                    pattern_given = true;
                }
                if *kind == Value::Path {
                    paths.push(path(&value));
                }
                break;
            }
            if !rule.short.contains(c) {
                return refuse(format!(
                    "`{name} -{c}` is not among the flags clada runs without approval"
                ));
            }
        }
    }
    match rule.operands {
        Operands::Nothing => {}
        Operands::Paths => paths.extend(operands.iter().map(|o| path(o))),
        Operands::PatternThenPaths => {
            let skip = usize::from(!pattern_given);
            paths.extend(operands.iter().skip(skip).map(|o| path(o)));
        }
    }
    let writes = matches!(name, "mv" | "rm" | "cp" | "mkdir" | "touch" | "xxd");
    Judgement::Builtin {
        argv,
        paths,
        writes,
    }
}

fn find(argv: Vec<String>) -> Judgement {
    let mut paths = Vec::new();
    let mut i = 1;
    // Options before the starting points.
    while i < argv.len()
        && matches!(
            argv[i].as_str(),
            "-P" | "-L" | "-H" | "-O0" | "-O1" | "-O2" | "-O3"
        )
    {
        if let Some((_, why)) = FIND_REFUSED.iter().find(|(f, _)| *f == argv[i]) {
            return refuse(format!("`find {}` is refused: {why}", argv[i]));
        }
        i += 1;
    }
    // Starting points: everything before the expression.
    while i < argv.len()
        && !argv[i].starts_with('-')
        && !matches!(argv[i].as_str(), "(" | ")" | "!" | ",")
    {
        paths.push(PathArg {
            text: argv[i].clone(),
            lexical_only: false,
        });
        i += 1;
    }
    if paths.is_empty() {
        paths.push(PathArg {
            text: ".".to_owned(),
            lexical_only: false,
        });
    }
    while i < argv.len() {
        let arg = argv[i].as_str();
        i += 1;
        if let Some((_, why)) = FIND_REFUSED.iter().find(|(f, _)| *f == arg) {
            return refuse(format!("`find {arg}` is refused: {why}"));
        }
        if let Some((_, kind)) = FIND_VALUES.iter().find(|(f, _)| *f == arg) {
            let Some(value) = argv.get(i) else {
                return refuse(format!("`find {arg}` needs a value"));
            };
            i += 1;
            if *kind == Value::Path {
                paths.push(PathArg {
                    text: value.clone(),
                    lexical_only: false,
                });
            }
            continue;
        }
        if !FIND_FLAGS.contains(&arg) {
            return refuse(format!(
                "`find {arg}` is not among the expressions clada runs without approval"
            ));
        }
    }
    Judgement::Builtin {
        argv,
        paths,
        writes: false,
    }
}

fn git(argv: Vec<String>) -> Judgement {
    let Some(sub) = argv.get(1) else {
        return refuse("`git` needs a subcommand".to_owned());
    };
    if let Some((_, why)) = GIT_REFUSED
        .iter()
        .find(|(f, _)| *f == sub.split('=').next().unwrap_or(""))
    {
        return refuse(format!("`git {sub}` is refused: {why}"));
    }
    if sub.starts_with('-') {
        return refuse(format!(
            "`git {sub}`: options before the subcommand are not run without approval"
        ));
    }
    if !GIT_SUBCOMMANDS.contains(&sub.as_str()) {
        return Judgement::NotBuiltin {
            why: format!("`git {sub}` is not one of the built-in git subcommands"),
        };
    }
    let mut paths = Vec::new();
    let mut operands_seen = 0;
    for arg in &argv[2..] {
        let flag = arg.split('=').next().unwrap_or("");
        if let Some((_, why)) = GIT_REFUSED.iter().find(|(f, _)| *f == flag) {
            return refuse(format!("`git {sub} {arg}` is refused: {why}"));
        }
        if arg.starts_with('-') {
            continue;
        }
        if sub == "stash" && operands_seen == 0 && !GIT_STASH.contains(&arg.as_str()) {
            return refuse(format!(
                "`git stash {arg}` is refused: only push, list, show, pop and apply run without approval"
            ));
        }
        operands_seen += 1;
        // An operand may be a revision or a path: check its text.
        paths.push(PathArg {
            text: arg.clone(),
            lexical_only: true,
        });
    }
    // stash changes the work tree and refs through git itself.
    Judgement::Builtin {
        argv,
        paths,
        writes: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(j: &Judgement) -> Vec<&str> {
        match j {
            Judgement::Builtin { paths, .. } => paths.iter().map(|p| p.text.as_str()).collect(),
            other => panic!("not built-in: {other:?}"),
        }
    }

    fn refused(command: &str) -> bool {
        matches!(judge(command), Judgement::Refused { .. })
    }

    #[test]
    fn reads_paths_and_flag_values() {
        assert_eq!(paths(&judge("cat -n a.txt b.txt")), ["a.txt", "b.txt"]);
        assert_eq!(paths(&judge("head -n 5 a.txt")), ["a.txt"]);
        assert_eq!(paths(&judge("head -n5 a.txt")), ["a.txt"]);
        assert_eq!(paths(&judge("tail -20 log")), ["log"]);
        assert_eq!(paths(&judge("grep -rn TODO src")), ["src"]);
        assert_eq!(paths(&judge("grep -e x -e y f")), ["f"]);
        assert_eq!(paths(&judge("grep -f pats.txt f")), ["pats.txt", "f"]);
        assert_eq!(paths(&judge("grep --include='*.rs' -r fn src")), ["src"]);
        assert_eq!(paths(&judge("cp -r a 'b c'")), ["a", "b c"]);
        assert_eq!(paths(&judge("mv -t dest a")), ["dest", "a"]);
        assert_eq!(paths(&judge("ls")), Vec::<&str>::new());
        assert_eq!(
            paths(&judge("find src -name '*.rs' -newer Cargo.toml")),
            ["src", "Cargo.toml"]
        );
        assert_eq!(paths(&judge("find -type f")), ["."]);
        assert_eq!(paths(&judge("git diff HEAD~1 -- src")), ["HEAD~1", "src"]);
        assert_eq!(paths(&judge("git stash")), Vec::<&str>::new());
        assert_eq!(paths(&judge("pwd")), Vec::<&str>::new());
    }

    #[test]
    fn refuses_what_follows_links_runs_programs_or_escapes() {
        for c in [
            "find . -exec sh \\;",
            "find . -execdir rm {} +",
            "find . -ok rm {} \\;",
            "find . -delete",
            "find -L .",
            "find . -fprint out",
            "git -C / log",
            "git --git-dir=/x status",
            "git status --work-tree=/",
            "git -c core.pager=sh log",
            "git diff --output=../x",
            "git stash drop",
            "git stash clear",
            "ls -L",
            "grep -R x .",
            "cp -L a b",
            "rm --no-preserve-root -rf x",
            "tail -f log",
            "diff -r a b",
            "cat --bogus f",
            "cat -Z f",
            "tree -o out",
        ] {
            assert!(refused(c), "{c} should be refused: {:?}", judge(c));
        }
    }

    #[test]
    fn shell_syntax_and_other_commands_need_approval() {
        for c in [
            "ls | wc",
            "ls $(pwd)",
            "ls ~",
            "ls *.rs",
            "echo hi > f",
            "npm test",
            "git commit -m x",
            "git push",
            "ls\npwd",
            "cat 'unbalanced",
        ] {
            assert!(
                matches!(judge(c), Judgement::NotBuiltin { .. }),
                "{c}: {:?}",
                judge(c)
            );
        }
    }
}
