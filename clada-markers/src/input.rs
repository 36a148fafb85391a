//! Reading a document (PROTOCOL §4, §11.5), the one way clada does it:
//! whole from a file or standard input ([`Input`]), from a string a
//! protocol handed over (MCP, LSP: [`text`]), or line by line for a stream
//! ([`read_line`], whose units [`crate::stream::Chunk`] checks). One rule
//! everywhere: a document, or a unit of a stream, over
//! [`MAX_DOCUMENT_SIZE`] is refused, and its bytes must
//! be UTF-8 ([`crate::decode`]).
//!
//! This module reads what it is handed and opens nothing: the caller opens
//! the file (and says what it cannot open).

use std::borrow::Cow;
use std::io::{BufRead, Read};

use crate::syntax::{Diagnostic, MAX_DOCUMENT_SIZE, read_limited, within_limit};

/// A document as read, with the name diagnostics call it by. A document
/// over the size limit is not kept: only that it was too large.
#[derive(Debug)]
pub struct Input {
    name: String,
    bytes: Bytes,
    too_large: bool,
}

/// The bytes of a document: in a vector, or, for a large file, in a map of
/// fresh memory filled by `read` (with the `engine` feature: the smallest
/// build has no memory maps).
#[derive(Debug)]
enum Bytes {
    Heap(Vec<u8>),
    #[cfg(feature = "engine")]
    Mapped(memmap2::MmapMut, usize),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Heap(v) => v,
            #[cfg(feature = "engine")]
            Bytes::Mapped(m, len) => &m[..*len],
        }
    }
}

/// Documents from this size up are read into a map of memory populated at
/// once, in huge pages where the kernel has them: faulting in a large
/// vector page by page cost more than reading it.
#[cfg(feature = "engine")]
const MAP_FROM: u64 = 4 * 1024 * 1024;

#[cfg(feature = "engine")]
fn read_mapped(mut reader: impl Read, size: u64) -> std::io::Result<Bytes> {
    let limit = MAX_DOCUMENT_SIZE + 1;
    let cap = usize::try_from(size)
        .unwrap_or(MAX_DOCUMENT_SIZE)
        .min(MAX_DOCUMENT_SIZE)
        + 1;
    let mut map = memmap2::MmapOptions::new().len(cap).map_anon()?;
    let _ = map.advise(memmap2::Advice::HugePage);
    let mut len = 0;
    loop {
        if len == map.len() {
            // The file grew while read: finish on the heap.
            let mut v = map[..len].to_vec();
            (&mut reader)
                .take((limit - len) as u64)
                .read_to_end(&mut v)?;
            return Ok(Bytes::Heap(v));
        }
        match reader.read(&mut map[len..]) {
            Ok(0) => return Ok(Bytes::Mapped(map, len)),
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

impl Input {
    /// Reads the document called `name` from `reader`, which says it holds
    /// `size` bytes when that is known (a file's length; it may have
    /// changed since): at most one byte past the size limit is read, and
    /// nothing of a document whose `size` is already over it.
    pub fn read(
        name: impl Into<String>,
        reader: impl Read,
        size: Option<u64>,
    ) -> std::io::Result<Input> {
        let name = name.into();
        if size.is_some_and(|s| s > MAX_DOCUMENT_SIZE as u64) {
            return Ok(Input::oversize(name));
        }
        let bytes = match size {
            #[cfg(feature = "engine")]
            Some(size) if size >= MAP_FROM => read_mapped(reader, size)?,
            _ => Bytes::Heap(read_limited(reader, size)?),
        };
        Ok(Input::new(name, bytes))
    }

    /// The document called `name` made of `bytes` (held whole already).
    pub fn from_bytes(name: impl Into<String>, bytes: Vec<u8>) -> Input {
        Input::new(name.into(), Bytes::Heap(bytes))
    }

    fn new(name: String, bytes: Bytes) -> Input {
        if within_limit(bytes.len()).is_err() {
            return Input::oversize(name);
        }
        Input {
            name,
            bytes,
            too_large: false,
        }
    }

    fn oversize(name: String) -> Input {
        Input {
            name,
            bytes: Bytes::Heap(Vec::new()),
            too_large: true,
        }
    }

    /// What diagnostics call the document.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The document as text, or why it cannot be read (`input_too_large`,
    /// `invalid_utf8`): the rule of PROTOCOL §4.
    #[allow(clippy::result_large_err)] // made once per run, on the way out
    pub fn text(&self) -> Result<&str, Diagnostic> {
        if self.too_large {
            return Err(crate::syntax::too_large());
        }
        crate::decode(&self.bytes)
    }

    /// The start of the document that is valid UTF-8, where positions in
    /// it are counted (for [`crate::ApplyReport::unreadable`]).
    pub fn valid_prefix(&self) -> &str {
        crate::syntax::valid_prefix(&self.bytes)
    }

    /// The document with bytes that are not UTF-8 replaced: to show a
    /// document that cannot be read, never to run it.
    pub fn lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.bytes)
    }
}

/// A document a protocol handed over as a string (an MCP call, an LSP
/// client's text), or why it cannot be read: the limit of [`Input`]
/// (a string is UTF-8 already).
#[allow(clippy::result_large_err)] // made once per document, on the way out
pub fn text(document: &str) -> Result<&str, Diagnostic> {
    within_limit(document.len()).map(|()| document)
}

/// Reads the next line of a stream into `line` (emptied first), with its
/// line feed if it has one, and returns how many bytes of the stream it
/// took (0 at the end). Of a line longer than the size limit only the
/// first [`MAX_DOCUMENT_SIZE`] bytes and one more are kept, and its line
/// feed: enough for the unit that holds it to be refused (`input_too_large`, per unit as
/// PROTOCOL §11.5 says); the rest is read through, never held, so memory
/// stays bounded whatever the stream holds.
pub fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    line.clear();
    let mut taken = 0;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(taken);
        }
        let (end, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = (MAX_DOCUMENT_SIZE + 1).saturating_sub(line.len());
        let body = end - usize::from(done);
        line.extend_from_slice(&buf[..body.min(room)]);
        if done {
            line.push(b'\n');
        }
        reader.consume(end);
        taken += end;
        if done {
            return Ok(taken);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::DiagnosticKind;
    #[cfg(feature = "engine")]
    use std::io::Write as _;

    #[cfg(feature = "engine")]
    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, std::fs::File) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        tmp.write_all(bytes).unwrap();
        let f = std::fs::File::open(tmp.path()).unwrap();
        (tmp, f)
    }

    #[cfg(feature = "engine")]
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| b"<<<<<<< abc\n"[i % 12]).collect()
    }

    #[cfg(feature = "engine")]
    #[test]
    fn a_large_file_is_read_whole_into_a_map() {
        let want = pattern(MAP_FROM as usize + 12_345);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, want.len() as u64).unwrap();
        assert!(matches!(got, Bytes::Mapped(..)));
        assert_eq!(&*got, &want[..]);
    }

    #[cfg(feature = "engine")]
    #[test]
    fn a_file_longer_than_its_size_said_is_read_to_the_limit() {
        // The size is from before the read: the file may have grown since.
        let want = pattern(MAP_FROM as usize + 100);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, MAP_FROM).unwrap();
        assert_eq!(&*got, &want[..]);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, 10).unwrap();
        assert_eq!(&*got, &want[..]);
    }

    #[cfg(feature = "engine")]
    #[test]
    fn a_file_that_grew_past_the_limit_is_too_large() {
        let big = pattern(MAX_DOCUMENT_SIZE + 4096);
        let (_tmp, f) = file_of(&big);
        let got = read_mapped(f, MAP_FROM).unwrap();
        // One byte past the limit is read, no more.
        assert_eq!(got.len(), MAX_DOCUMENT_SIZE + 1);
        let input = Input::new("big".into(), got);
        assert_eq!(
            input.text().unwrap_err().kind,
            DiagnosticKind::InputTooLarge
        );
    }

    #[cfg(feature = "engine")]
    #[test]
    fn a_shrunk_file_is_read_as_it_is_now() {
        let want = pattern(1000);
        let (_tmp, f) = file_of(&want);
        let got = read_mapped(f, MAP_FROM * 2).unwrap();
        assert_eq!(&*got, &want[..]);
    }

    #[test]
    fn a_document_said_to_be_too_large_is_not_read() {
        let input = Input::read("big", std::io::repeat(b'a'), Some(u64::MAX)).unwrap();
        assert_eq!(
            input.text().unwrap_err().kind,
            DiagnosticKind::InputTooLarge
        );
        assert_eq!(input.valid_prefix(), "");
    }

    #[test]
    fn strings_and_bytes_follow_one_rule() {
        let bad = Input::from_bytes("bad", b"ok\n\xffno".to_vec());
        let d = bad.text().unwrap_err();
        assert_eq!((d.kind, d.span.start), (DiagnosticKind::InvalidUtf8, 3));
        assert_eq!(bad.valid_prefix(), "ok\n");
        assert_eq!(bad.lossy(), "ok\n\u{fffd}no");
        assert_eq!(text("fine"), Ok("fine"));
        let big = "a".repeat(MAX_DOCUMENT_SIZE + 1);
        assert_eq!(text(&big).unwrap_err().kind, DiagnosticKind::InputTooLarge);
        assert!(text(&big[1..]).is_ok());
    }

    #[test]
    fn a_line_longer_than_the_limit_is_read_through_and_cut() {
        let mut stream = vec![b'x'; MAX_DOCUMENT_SIZE + 10];
        stream.extend_from_slice(b"\nnext\nlast");
        let mut reader = std::io::BufReader::new(&stream[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut line).unwrap(),
            MAX_DOCUMENT_SIZE + 11
        );
        assert_eq!(line.len(), MAX_DOCUMENT_SIZE + 2);
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(read_line(&mut reader, &mut line).unwrap(), 5);
        assert_eq!(line, b"next\n");
        assert_eq!(read_line(&mut reader, &mut line).unwrap(), 4);
        assert_eq!(line, b"last");
        assert_eq!(read_line(&mut reader, &mut line).unwrap(), 0);
        assert!(line.is_empty());
    }
}
