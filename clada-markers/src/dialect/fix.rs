//! The fixes a document's diagnostics offer, made: `clada check --fix`
//! writes the result, `--diff` shows it (PROTOCOL §2.1). The same fixes
//! the language server offers as code actions and JSON gives as `fix`;
//! nothing here decides a repair of its own. Pure: no file is read or
//! written here.

use std::borrow::Cow;

use crate::dialect::{Dialect, parse_dialect};
use crate::syntax::{Diagnostic, ParseOptions};

/// How many times the document is read again for the fixes a fix makes
/// visible (a closer put right shows the next block's problems). Each
/// pass is linear; a fix never undoes another's, so few are needed.
const PASSES: usize = 4;

/// A document with its fixes made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixed<'a> {
    /// The document as the fixes leave it.
    pub text: Cow<'a, str>,
    /// How many fixes were made.
    pub fixes: usize,
}

/// Makes every fix the diagnostics of `source`, read as `dialect`, offer,
/// then reads the result again for the fixes that shows, a few times.
/// A fix that leaves a value for the model to give (`path=""`) is not
/// made: it repairs the syntax, not the document.
pub fn fix(source: &str, dialect: Dialect, options: ParseOptions) -> Fixed<'_> {
    let mut text = Cow::Borrowed(source);
    let mut fixes = 0;
    for _ in 0..PASSES {
        let doc = parse_dialect(&text, dialect, options);
        let (next, made) = apply_fixes(&text, &doc.diagnostics);
        if made == 0 {
            break;
        }
        fixes += made;
        text = Cow::Owned(next);
    }
    Fixed { text, fixes }
}

/// `source` with the fixes of `diagnostics` made, and how many: in
/// document order, a fix that overlaps one before it (or is put at the
/// same place) left for the next pass.
pub fn apply_fixes(source: &str, diagnostics: &[Diagnostic]) -> (String, usize) {
    let mut fixes: Vec<_> = diagnostics
        .iter()
        .filter_map(|d| d.fix.as_ref())
        .filter(|f| !f.placeholder)
        .filter(|f| {
            f.span.start <= f.span.end
                && f.span.end <= source.len()
                && source.is_char_boundary(f.span.start)
                && source.is_char_boundary(f.span.end)
        })
        .collect();
    fixes.sort_by_key(|f| (f.span.start, f.span.end));
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    let mut made = 0;
    let mut last_start = None;
    for f in fixes {
        if f.span.start < at || last_start == Some(f.span.start) {
            continue;
        }
        out.push_str(&source[at..f.span.start]);
        out.push_str(&f.replacement);
        at = f.span.end;
        last_start = Some(f.span.start);
        made += 1;
    }
    out.push_str(&source[at..]);
    (out, made)
}

/// A unified diff from `before` to `after`, the document named `name` on
/// both sides, as `diff -u` and `ruff --diff` write it.
pub fn diff(name: &str, before: &str, after: &str) -> String {
    let name = crate::escape::escape_line(name);
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_a_near_miss_block_and_a_wrong_closer_right() {
        let doc = "<<<<< SEARCH path=\"a.txt\"\nold\n=====\nnew\n>>>>> REPLACE\n\n<<<<<<< WRITE path=\"b\"\nx\n>>>>>>> REPLACE\n";
        let fixed = fix(doc, Dialect::Clada, ParseOptions::default());
        assert_eq!(
            fixed.text,
            "<<<<<<< SEARCH path=\"a.txt\"\nold\n=======\nnew\n>>>>>>> REPLACE\n\n<<<<<<< WRITE path=\"b\"\nx\n>>>>>>> END\n"
        );
        assert_eq!(fixed.fixes, 2);
        let again = crate::parse(&fixed.text);
        assert!(
            again.diagnostics.iter().all(|d| !d.is_error()),
            "{:?}",
            again.diagnostics
        );
    }

    #[test]
    fn a_closer_almost_written_is_made_right_not_kept_as_content() {
        // Appending a closer would keep `>>>>>>>REPLACE` as a line of the
        // replacement, written into the file.
        for closer in [">>>>>>>REPLACE", ">>>>> REPLACE", "  >>>>>>> REPLACE"] {
            let doc = format!("<<<<<<< SEARCH path=\"a.txt\"\nold\n=======\nnew\n{closer}\n");
            let fixed = fix(&doc, Dialect::Clada, ParseOptions::default());
            assert_eq!(
                fixed.text, "<<<<<<< SEARCH path=\"a.txt\"\nold\n=======\nnew\n>>>>>>> REPLACE\n",
                "{closer}"
            );
        }
        // A line that only starts like one stays content.
        let doc = "<<<<<<< SEARCH path=\"a.txt\"\nold\n=======\n>>>>>>>REPLACE it\n";
        let fixed = fix(doc, Dialect::Clada, ParseOptions::default());
        assert!(
            fixed.text.ends_with(">>>>>>>REPLACE it\n>>>>>>> REPLACE\n"),
            "{}",
            fixed.text
        );
    }

    #[test]
    fn leaves_a_value_for_the_model_to_give() {
        let doc = "<<<<<<< WRITE\nx\n>>>>>>> END\n";
        let d = &crate::parse(doc).diagnostics;
        assert!(
            d.iter()
                .any(|d| d.fix.as_ref().is_some_and(|f| f.placeholder)),
            "{d:?}"
        );
        let fixed = fix(doc, Dialect::Clada, ParseOptions::default());
        assert_eq!((fixed.text.as_ref(), fixed.fixes), (doc, 0));
    }

    #[test]
    fn overlapping_fixes_are_made_one_at_a_time() {
        let d = |start, end, r: &str| {
            Diagnostic::new(
                crate::syntax::DiagnosticKind::MalformedMarker,
                crate::syntax::Span::new(start, end),
                "x",
            )
            .with_fix(crate::syntax::Span::new(start, end), r)
        };
        let (out, made) = apply_fixes("abcdef", &[d(0, 3, "X"), d(2, 4, "Y"), d(4, 4, "Z")]);
        assert_eq!((out.as_str(), made), ("XdZef", 2));
    }

    #[test]
    fn the_diff_is_unified() {
        let out = diff("r.md", "a\nb\n", "a\nc\n");
        assert_eq!(out, "--- a/r.md\n+++ b/r.md\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    }
}
