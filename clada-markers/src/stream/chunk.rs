//! A unit of a stream as handed out ([`Chunk`]), and how it is read on its
//! own.

use crate::dialect::Dialect;
use crate::syntax::DiagnosticKind;

/// The most prose checked at once: a longer run is checked in windows of
/// whole lines of about this size, so memory stays bounded.
pub(crate) const PROSE_WINDOW: usize = 1 << 20;

/// Whether a document of prose has errors (edits in another format,
/// markers written almost right); `no_tasks` is only a warning.
pub(super) fn problems(doc: &crate::Document<'_>) -> bool {
    doc.diagnostics.iter().any(crate::Diagnostic::is_error)
}

/// Whether `text`, read in `dialect`, has such errors.
pub(super) fn has_problems(text: &str, dialect: Dialect) -> bool {
    problems(&crate::dialect::parse_dialect(
        text,
        dialect,
        crate::ParseOptions::default(),
    ))
}

/// A complete unit: its text, and the stream offset and 1-based line it
/// starts at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// The text; bytes that are not UTF-8 are replaced (U+FFFD), and
    /// `invalid_utf8` says where the first was.
    pub text: String,
    pub offset: usize,
    pub line: usize,
    /// Where in `text` the first byte that is not UTF-8 was, if any: the
    /// unit is then refused ([`Chunk::document`]).
    pub invalid_utf8: Option<usize>,
    /// The dialect it is read in: the stream's.
    pub dialect: Dialect,
    /// Where in `text` its first unit starts, after the prose a stream of
    /// another dialect hands out with it (0: a clada unit, or prose).
    pub(super) unit_start: usize,
}

impl Chunk {
    /// Its text from its first unit on: the prose a stream of another
    /// dialect hands out before a unit left out, so that a unit is the
    /// same text wherever it is pasted (what `clada watch` knows a unit
    /// by, PROTOCOL §11.6). A clada chunk, or one without a unit, whole.
    pub fn unit_text(&self) -> &str {
        self.text.get(self.unit_start..).unwrap_or(&self.text)
    }

    /// The unit parsed on its own; one that held bytes that are not UTF-8
    /// gets an `invalid_utf8` error where the first was, which keeps it
    /// from running.
    /// A unit over the size limit is refused as a document would be
    /// (`input_too_large`), and parsed no further than its opener.
    pub fn document(&self, options: crate::ParseOptions) -> crate::Document<'_> {
        if let Err(d) = crate::syntax::within_limit(self.text.len()) {
            let opener = self.text.find('\n').map_or(self.text.len(), |i| i + 1);
            let head = &self.text[..opener];
            let mut doc = crate::dialect::parse_dialect(head, self.dialect, options);
            // Only its size is said: the opener alone is no unclosed unit.
            doc.diagnostics.clear();
            let help = d.help.as_deref().unwrap_or_default();
            return self.refuse(doc, 0, d.kind, d.message.to_string(), help);
        }
        let mut doc = crate::dialect::parse_dialect(&self.text, self.dialect, options);
        if self.line > 1 {
            // Numbers are the stream's (§11.5), the words of a message too.
            crate::dialect::foreign::renumber(&mut doc.diagnostics, &self.text, self.line - 1);
        }
        let Some(offset) = self.invalid_utf8 else {
            return doc;
        };
        let at = crate::syntax::LineIndex::new(&self.text).position(offset);
        let message = format!(
            "the unit is not valid UTF-8 at line {}, column {} of the stream (byte offset {}); \
             nothing of it was applied",
            at.line + self.line - 1,
            at.column,
            self.offset + offset
        );
        let help = "save the reply as UTF-8 and send the unit again";
        self.refuse(doc, offset, DiagnosticKind::InvalidUtf8, message, help)
    }

    /// The unit parsed on its own and refused with an error of `kind` at
    /// its start: nothing of it runs, and the report says why.
    pub fn refused(
        &self,
        options: crate::ParseOptions,
        kind: DiagnosticKind,
        message: String,
        help: &str,
    ) -> crate::Document<'_> {
        let doc = self.document(options);
        self.refuse(doc, 0, kind, message, help)
    }

    /// `doc` with an error of `kind` at `offset`, filed under the unit
    /// there (which therefore does not run).
    fn refuse<'t>(
        &'t self,
        mut doc: crate::Document<'t>,
        offset: usize,
        kind: DiagnosticKind,
        message: String,
        help: &str,
    ) -> crate::Document<'t> {
        let block = doc
            .units
            .iter()
            .rev()
            .find(|u| u.span().start <= offset)
            .or(doc.units.first())
            .map(crate::Unit::number);
        let end = self.text[offset..]
            .chars()
            .next()
            .map_or(offset, |c| offset + c.len_utf8());
        let mut d = crate::Diagnostic::new(kind, crate::Span::new(offset, end), message)
            .with_help(help.to_owned());
        d.block = block;
        doc.diagnostics.push(d);
        crate::syntax::sort_in_document_order(&mut doc.diagnostics);
        doc
    }
}
