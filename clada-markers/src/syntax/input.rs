//! Reading a document: the size limit and UTF-8 (PROTOCOL §4).

use std::io::Read;

use crate::syntax::diagnostics::{Diagnostic, DiagnosticKind};
use crate::syntax::span::{LineIndex, Span};

/// The largest document clada reads: 50 MiB.
pub const MAX_DOCUMENT_SIZE: usize = 50 * 1024 * 1024;

/// Reads at most [`MAX_DOCUMENT_SIZE`] bytes and one more, so that a larger
/// input is detected without being held in memory.
pub(crate) fn read_limited(
    mut reader: impl Read,
    size_hint: Option<u64>,
) -> std::io::Result<Vec<u8>> {
    let limit = MAX_DOCUMENT_SIZE as u64 + 1;
    let capacity = size_hint.unwrap_or(0).min(limit) as usize;
    let mut bytes = Vec::with_capacity(capacity + 1);
    reader.by_ref().take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The diagnostic of a document over [`MAX_DOCUMENT_SIZE`], for a reader
/// that found out without reading it (from a file's size, say).
pub(crate) fn too_large() -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::InputTooLarge,
        Span::empty(0),
        format!(
            "the document is larger than {} MiB",
            MAX_DOCUMENT_SIZE / (1024 * 1024)
        ),
    )
    .with_help("split it into several documents")
}

/// The limit rule (PROTOCOL §4, §11.5): a document, or a unit of a
/// stream, of `len` bytes is read only if it is at most
/// [`MAX_DOCUMENT_SIZE`]; else the [`too_large`] diagnostic.
#[allow(clippy::result_large_err)] // made once per run, on the way out
pub(crate) fn within_limit(len: usize) -> Result<(), Diagnostic> {
    if len > MAX_DOCUMENT_SIZE {
        return Err(too_large());
    }
    Ok(())
}

/// Checks the size and the encoding of a document. A leading byte-order
/// mark stays in the text (spans are offsets into the bytes as given); the
/// lexer skips it.
#[allow(clippy::result_large_err)] // made once per run, on the way out
pub fn decode(bytes: &[u8]) -> Result<&str, Diagnostic> {
    within_limit(bytes.len())?;
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let at = LineIndex::new(valid_prefix(bytes)).position(offset);
        Diagnostic::new(
            DiagnosticKind::InvalidUtf8,
            Span::new(
                offset,
                offset + e.error_len().unwrap_or(bytes.len() - offset),
            ),
            format!(
                "the document is not valid UTF-8 at line {}, column {} (byte offset {offset})",
                at.line, at.column
            ),
        )
        .with_help("save the document as UTF-8")
    })
}

/// The longest start of `bytes` that is valid UTF-8: what positions in a
/// document that is not are counted in.
pub fn valid_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_the_offset_of_invalid_utf8() {
        let err = decode(b"ok\n\xffno").unwrap_err();
        assert_eq!(err.kind, DiagnosticKind::InvalidUtf8);
        assert_eq!(err.span, Span::new(3, 4));
        assert!(err.message.contains("line 2, column 1"), "{}", err.message);
        let err = decode(b"ab\ncd\xff\n").unwrap_err();
        assert!(
            err.message.contains("line 2, column 3 (byte offset 5)"),
            "{}",
            err.message
        );
    }

    #[test]
    fn refuses_documents_over_the_limit() {
        let big = vec![b'a'; MAX_DOCUMENT_SIZE + 1];
        assert_eq!(
            decode(&big).unwrap_err().kind,
            DiagnosticKind::InputTooLarge
        );
        assert!(decode(&big[..MAX_DOCUMENT_SIZE]).is_ok());
    }

    #[test]
    fn reads_no_more_than_one_byte_past_the_limit() {
        let big = std::io::repeat(b'a').take(MAX_DOCUMENT_SIZE as u64 * 2);
        let bytes = read_limited(big, None).unwrap();
        assert_eq!(bytes.len(), MAX_DOCUMENT_SIZE + 1);
    }
}
