//! The attributes of an opener, checked (PROTOCOL §3): names against what
//! the keyword takes, then values (counts, booleans, paths). The dialects
//! check the paths they read here too ([`check_path_attribute`]).

use std::num::NonZeroUsize;

use crate::syntax::ast::{Count, TaskPath};
use crate::syntax::attributes::{self, AttrSyntaxError, Attribute};
use crate::syntax::context::Context;
use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind as K};
use crate::syntax::lexer::Marker;
use crate::syntax::path::{
    Location, MAX_PATH_COMPONENTS, PathProblem, TooDeep, is_protected, resolve_path,
};
use crate::syntax::span::Span;
use crate::syntax::suggest::{nearest, quoted_list};
use crate::syntax::{AttrSpec, Keyword, TaskKind};

/// A bare `<<<<<<< SEARCH` in a document where no opener has attributes:
/// the block is written as aider's are, so the help says what aider's
/// format wants (the file's path on the line before), not clada's
/// `path="…"`, which would have the model switch formats (PROTOCOL §11.1).
/// No fix: the path is the model's to give.
fn aider_block_without_file(opener: &Marker) -> Diagnostic {
    Diagnostic::new(
        K::MissingAttribute,
        opener.line(),
        "this SEARCH block names no file",
    )
    .with_help(
        "put the file's path on its own line just before the block (or its fence), as in aider's format",
    )
}

/// Parses the attributes of an opener and checks their names against
/// `specs`: unknown, repeated and missing names.
pub(crate) fn attributes_of<'a>(
    cx: &Context<'a>,
    opener: &Marker,
    keyword: Keyword,
    specs: &[AttrSpec],
    out: &mut Vec<Diagnostic>,
) -> Vec<Attribute<'a>> {
    let text = cx.text(opener.rest());
    let (attrs, syntax) = attributes::parse(text, opener.rest().start);
    for e in syntax {
        let (message, help) = match &e {
            AttrSyntaxError::Unterminated { quote, .. } => (
                format!("this value has no closing `{quote}`"),
                "close the quote; inside double quotes write `\\\"` for a quote".to_owned(),
            ),
            AttrSyntaxError::MissingValue { name, .. } => (
                format!("attribute `{name}` has no value"),
                format!("write `{name}=\"…\"`"),
            ),
            AttrSyntaxError::Junk { span } => (
                format!("`{}` is not an attribute", cx.text(*span)),
                "attributes are written `name=\"value\"`, separated by spaces".to_owned(),
            ),
        };
        out.push(Diagnostic::new(K::MalformedAttribute, e.span(), message).with_help(help));
    }
    // Names an unknown attribute's fix writes: not inserted again.
    let mut renamed: Vec<&str> = Vec::new();
    for (i, a) in attrs.iter().enumerate() {
        if !specs.iter().any(|s| s.name == a.name) {
            let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
            let mut d = Diagnostic::new(
                K::UnknownAttribute,
                a.span,
                format!("{keyword} has no attribute `{}`", a.name),
            );
            d = match nearest(a.name, &names) {
                // The name as it should be, unless it is given already.
                Some(s) if !attrs.iter().any(|b| b.name == s) && !renamed.contains(&s) => {
                    renamed.push(s);
                    d.with_help(format!("did you mean `{s}`?"))
                        .with_fix(a.name_span, s)
                }
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None if names.is_empty() => d.with_help(format!("{keyword} takes no attributes")),
                None => d.with_help(format!("{keyword} takes {}", quoted_list(&names))),
            };
            out.push(d);
        } else if let Some(first) = attrs[..i].iter().find(|b| b.name == a.name) {
            out.push(
                Diagnostic::new(
                    K::DuplicateAttribute,
                    a.span,
                    format!("attribute `{}` is given twice", a.name),
                )
                .with_label(first.span, "first given here")
                .with_help("keep one of them"),
            );
        }
    }
    for spec in specs.iter().filter(|s| s.required) {
        if !attrs.iter().any(|a| a.name == spec.name) {
            if keyword == Keyword::Search
                && spec.name == "path"
                && text.trim().is_empty()
                && !cx.has_attributed_opener()
            {
                out.push(aider_block_without_file(opener));
                continue;
            }
            let d = Diagnostic::new(
                K::MissingAttribute,
                opener.line(),
                format!("{keyword} needs a `{}` attribute", spec.name),
            )
            .with_help(format!("add `{}=\"…\"` after `{keyword}`", spec.name));
            // Renaming the misspelt attribute gives it; an empty one
            // inserted beside would be wrong.
            out.push(if renamed.contains(&spec.name) {
                d
            } else {
                d.with_placeholder_fix(
                    Span::empty(opener.word().end),
                    format!(" {}=\"\"", spec.name),
                )
            });
        }
    }
    attrs
}

/// The checked values of a task's attributes.
#[derive(Debug, Default)]
pub(crate) struct Values<'a> {
    pub(crate) path: Option<TaskPath<'a>>,
    pub(crate) from: Option<TaskPath<'a>>,
    pub(crate) to: Option<TaskPath<'a>>,
    pub(crate) dir: Option<TaskPath<'a>>,
    pub(crate) count: Count,
    pub(crate) append: bool,
}

impl<'a> Values<'a> {
    pub(crate) fn check(
        cx: &Context<'a>,
        kind: TaskKind,
        attrs: &[Attribute<'a>],
        out: &mut Vec<Diagnostic>,
    ) -> Values<'a> {
        let mut v = Values::default();
        let first = |name: &str| attrs.iter().find(|a| a.name == name);
        if kind == TaskKind::Run
            && let (Some(dir), Some(path)) = (first("dir"), first("path"))
        {
            {
                out.push(
                    Diagnostic::new(
                        K::DuplicateAttribute,
                        path.span,
                        "`path` is a synonym of `dir` on RUN; give only one",
                    )
                    .with_label(dir.span, "`dir` given here"),
                );
            }
        }
        let specs = kind.attributes();
        for a in attrs {
            if !specs.iter().any(|s| s.name == a.name)
                || first(a.name).map(|f| f.span) != Some(a.span)
            {
                continue;
            }
            match (kind, a.name) {
                (_, "count") => match parse_count(&a.value) {
                    Some(c) => v.count = c,
                    None if is_number(&a.value) && a.value.bytes().any(|b| b != b'0') => out.push(
                        invalid_value(a, "a positive whole number or `all`").with_help(format!(
                            "no file holds that many occurrences; the largest count clada takes is {}",
                            usize::MAX
                        )),
                    ),
                    None => out.push(invalid_value(a, "a positive whole number or `all`")),
                },
                (_, "append") => match a.value.as_ref() {
                    "true" => v.append = true,
                    "false" => v.append = false,
                    _ => out.push(invalid_value(a, "`true` or `false`")),
                },
                (TaskKind::Run, "dir" | "path") => {
                    let at = check_path(cx, a, false, out);
                    v.dir = Some(TaskPath::resolved(a.value.clone(), at));
                }
                (_, "to") => {
                    let at = check_path(cx, a, false, out);
                    v.to = Some(TaskPath::resolved(a.value.clone(), at));
                }
                (_, "from") => {
                    let at = check_path(cx, a, true, out);
                    v.from = Some(TaskPath::resolved(a.value.clone(), at));
                }
                (_, "path") => {
                    let at = check_path(cx, a, true, out);
                    v.path = Some(TaskPath::resolved(a.value.clone(), at));
                }
                _ => {}
            }
        }
        v
    }
}

/// Checks the path of a file another dialect names as if it were a `path`
/// attribute (PROTOCOL §5, §11).
/// Checks the path of `a` (a file's: not the root), saying what is wrong
/// in `out`; the place it resolves to when nothing is.
pub(crate) fn check_path_attribute(
    cx: &Context<'_>,
    a: &Attribute<'_>,
    out: &mut Vec<Diagnostic>,
) -> Option<Location> {
    check_path(cx, a, true, out)
}

/// Checks the path of `a` (`below_root`: it must name something below the
/// root), saying what is wrong in `out`; the place it resolves to when
/// nothing is: resolved once, here, and carried by the task's operation
/// ([`crate::syntax::TaskPath`]).
pub(crate) fn check_path(
    cx: &Context<'_>,
    a: &Attribute<'_>,
    below_root: bool,
    out: &mut Vec<Diagnostic>,
) -> Option<Location> {
    let resolved = resolve_path(&a.value, cx.opts.allow_escape).and_then(|at| {
        if below_root && at.is_root() {
            Err(PathProblem::Root)
        } else {
            Ok(at)
        }
    });
    let problem = match resolved {
        Ok(at) => {
            if is_protected(&at) {
                out.push(
                Diagnostic::new(
                    K::ProtectedPath,
                    a.value_span,
                    format!("`{}` is inside `.clada/` or a `.git` directory, which documents never change", a.value),
                )
                .with_help("clada's approvals and git's internals are changed only by people: use `clada allow` or git itself"),
            );
                return None;
            }
            return Some(at);
        }
        Err(PathProblem::TooDeep) => {
            let deep = TooDeep::of(&a.value, cx.opts.allow_escape).unwrap_or(TooDeep {
                components: MAX_PATH_COMPONENTS + 1,
            });
            let message = deep.message(&what_path(a), &a.value);
            out.push(
                Diagnostic::new(K::PathEscape, a.value_span, message).with_help(TooDeep::help()),
            );
            return None;
        }
        Err(problem) => problem,
    };
    let shown = crate::escape::escape_line(&a.value);
    let what = what_path(a);
    let mut d = Diagnostic::new(
        K::PathEscape,
        a.value_span,
        format!("{what} `{shown}` {}", problem.describe()),
    );
    d = d.with_help(match problem {
        PathProblem::Absolute if !a.value.starts_with(['/', '\\']) => {
            "a drive letter names nothing on this system: write a path relative to the root"
        }
        PathProblem::Absolute | PathProblem::ParentEscape => {
            "paths are relative to the root; run with --allow-escape to permit absolute paths and `..`"
        }
        PathProblem::Root => "name a file or directory below the root",
        PathProblem::Control => {
            "name the file without control characters (line feeds, tabs, escapes)"
        }
        PathProblem::Empty | PathProblem::Nul => "give a relative path such as `src/main.rs`",
        PathProblem::TooDeep => "name a shorter path",
    });
    out.push(d);
    None
}

/// How a message names the attribute's path: `path`, or "`from` path".
fn what_path(a: &Attribute<'_>) -> String {
    if a.name == "path" {
        "path".to_owned()
    } else {
        format!("`{}` path", a.name)
    }
}

fn is_number(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn parse_count(value: &str) -> Option<Count> {
    if value == "all" {
        return Some(Count::All);
    }
    if !is_number(value) {
        return None;
    }
    value.parse::<NonZeroUsize>().ok().map(Count::Exactly)
}

fn invalid_value(a: &Attribute<'_>, expected: &str) -> Diagnostic {
    Diagnostic::new(
        K::InvalidAttributeValue,
        a.value_span,
        format!("`{}` must be {expected}, not `{}`", a.name, a.value),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_positive_integers_or_all() {
        assert_eq!(parse_count("all"), Some(Count::All));
        assert_eq!(
            parse_count("3"),
            Some(Count::Exactly(NonZeroUsize::new(3).unwrap()))
        );
        for bad in ["0", "-1", "+2", "", "ALL", "1.5", "99999999999999999999999"] {
            assert_eq!(parse_count(bad), None, "{bad}");
        }
    }
}
