//! The printer: units back to canonical document text.
//!
//! Parsing what [`print`] writes gives the same operations back. Each task
//! is printed with the smallest fence length, at least its own, for which
//! none of its bodies holds a line the parser would take as structure: the
//! escape hatch of PROTOCOL §2.4 rule 5, applied only when needed. Attribute
//! values keep their quoting style where it can hold the value, and fall
//! back to double quotes.

use std::fmt::Write as _;

use crate::syntax::ast::{Count, Op, Task, Unit};
use crate::syntax::attributes::quote_value;
use crate::syntax::lexer;
use crate::syntax::{Keyword, MIN_FENCE, SectionMarker, Shape};

/// Why a unit cannot be printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintError {
    /// The task has errors, so it has no operation to print.
    Malformed { task: usize },
    /// A value the format cannot express.
    Unrepresentable { task: usize, what: &'static str },
}

impl std::fmt::Display for PrintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrintError::Malformed { task } => {
                write!(f, "task {task} has errors and cannot be printed")
            }
            PrintError::Unrepresentable { task, what } => write!(f, "task {task}: {what}"),
        }
    }
}

impl std::error::Error for PrintError {}

/// Prints units as a document.
pub fn print(units: &[Unit<'_>]) -> Result<String, PrintError> {
    let mut out = String::new();
    for unit in units {
        match unit {
            Unit::Task(t) => print_task(t, &mut out)?,
            Unit::Block(b) => {
                let fence = b.fence.max(MIN_FENCE);
                out.push_str(&Shape::Opener.run(fence));
                out.push_str(" TASKS");
                if let Some(v) = b.version {
                    let quote = b
                        .attributes
                        .iter()
                        .find(|a| a.name == "version")
                        .map(|a| a.quote);
                    let _ = write!(
                        out,
                        " version={}",
                        quote_value(v.as_str(), quote.unwrap_or_default())
                    );
                }
                out.push('\n');
                for t in &b.tasks {
                    print_task(t, &mut out)?;
                }
                out.push_str(&Shape::Closer.run(fence));
                out.push_str(" TASKS\n");
            }
        }
    }
    Ok(out)
}

fn print_task(task: &Task<'_>, out: &mut String) -> Result<(), PrintError> {
    let op = task
        .op
        .as_ref()
        .ok_or(PrintError::Malformed { task: task.number })?;
    let unrepresentable = |what| PrintError::Unrepresentable {
        task: task.number,
        what,
    };
    let quote = |name: &str| task.attribute(name).map(|a| a.quote).unwrap_or_default();

    let mut attrs: Vec<(&str, &str)> = Vec::new();
    let count_text;
    // Section bodies as printed, each either empty or whole lines.
    let mut sections: Vec<String> = Vec::new();
    match op {
        Op::Write {
            path,
            append,
            content,
        } => {
            attrs.push(("path", path));
            if *append {
                attrs.push(("append", "true"));
            }
            sections.push(content.to_string());
        }
        Op::Edit {
            path,
            count,
            search,
            replace,
            ..
        } => {
            attrs.push(("path", path));
            count_text = count.to_string();
            if *count != Count::default() {
                attrs.push(("count", &count_text));
            }
            sections.extend([search.to_string(), replace.to_string()]);
        }
        Op::EditRange {
            path,
            count,
            start,
            end,
            replace,
            ..
        } => {
            attrs.push(("path", path));
            count_text = count.to_string();
            if *count != Count::default() {
                attrs.push(("count", &count_text));
            }
            // The start section drops its final line feed when parsed.
            sections.extend([format!("{start}\n"), end.to_string(), replace.to_string()]);
        }
        Op::Run { dir, command } => {
            if let Some(dir) = dir {
                attrs.push(("dir", dir));
            }
            sections.push(command.to_string());
        }
        Op::Move { from, to } => attrs.extend([("from", from.as_ref()), ("to", to.as_ref())]),
        Op::Remove { path } => attrs.push(("path", path)),
    }

    for (_, value) in &attrs {
        if value.contains(['\n', '\r']) {
            return Err(unrepresentable("an attribute value holds a line break"));
        }
    }
    for s in &mut sections {
        if !s.is_empty() && !s.ends_with('\n') {
            return Err(unrepresentable("a body does not end with a line feed"));
        }
        // The parser takes one CR before a line feed as part of the line
        // break, so a line that ends in CR is written with CRLF.
        if s.contains("\r\n") {
            *s = s.replace("\r\n", "\r\r\n");
        }
    }

    let fence = (task.fence.max(MIN_FENCE)..)
        .find(|&n| sections.iter().all(|s| is_content_at(s, n)))
        .unwrap_or(MIN_FENCE);

    out.push_str(&Shape::Opener.run(fence));
    out.push(' ');
    out.push_str(task.kind.keyword().as_str());
    for (name, value) in &attrs {
        let style = if *name == "dir" && task.attribute("dir").is_none() {
            quote("path")
        } else {
            quote(name)
        };
        let _ = write!(out, " {name}={}", quote_value(value, style));
    }
    out.push('\n');
    let markers = task.kind.section_markers();
    for (i, body) in sections.iter().enumerate() {
        out.push_str(body);
        match markers.get(i) {
            Some(SectionMarker::Separator) => {
                out.push_str(&Shape::Separator.run(fence));
                out.push('\n');
            }
            Some(SectionMarker::SearchEnd) => {
                out.push_str(&Shape::Opener.run(fence));
                out.push_str(" SEARCH-END\n");
            }
            None => {}
        }
    }
    out.push_str(&Shape::Closer.run(fence));
    out.push(' ');
    out.push_str(task.kind.closer().as_str());
    out.push('\n');
    Ok(())
}

/// Whether `body` reads as pure content inside a task with fence `n`: no
/// line of it would act as structure and its nesting is balanced.
fn is_content_at(body: &str, n: usize) -> bool {
    let mut depth = 0usize;
    for line in body.split_inclusive('\n') {
        // Offset 1: body lines never start the document, so no BOM rule.
        let Some(m) = lexer::classify(line, 1) else {
            continue;
        };
        if m.fence() != n {
            continue;
        }
        match m.shape {
            Shape::Opener if m.keyword == Some(Keyword::SearchEnd) => {
                if depth == 0 {
                    return false;
                }
            }
            Shape::Opener => depth += 1,
            Shape::Separator if depth == 0 => return false,
            Shape::Separator => {}
            Shape::Closer if depth == 0 => return false,
            Shape::Closer => depth -= 1,
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_bodies_keep_the_shortest_fence() {
        assert!(is_content_at("<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", 7));
        assert!(!is_content_at("=======\n", 7));
        assert!(is_content_at("=======\n", 8));
        assert!(!is_content_at("<<<<<<< HEAD\n", 7));
        assert!(!is_content_at("<<<<<<< SEARCH-END\n", 7));
    }
}
