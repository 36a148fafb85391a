//! Attributes on an opener line: `name="value"`, `name='value'` or
//! `name=value`, separated by white space.
//!
//! The words are lexed with logos; [`parse`] turns them into
//! [`Attribute`]s and reports what does not fit, with the byte span of the
//! offending text. Which names a keyword accepts is checked later, by the
//! validator; this module only knows the syntax.
//!
//! In double quotes `\"` stands for a quote and `\\` for a backslash; any
//! other backslash is kept as it is, so `"C:\dir"` means what it says.
//! Single quotes are literal.

use std::borrow::Cow;

use logos::Logos;
use serde::Serialize;

use crate::syntax::span::Span;

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    #[regex(r"[ \t\r\x0C]+")]
    Blank,
    #[regex(r#"[^ \t\r\x0C"'=]+"#)]
    Word,
    #[token("=")]
    Assign,
    #[regex(r#""([^"\\]|\\.)*""#)]
    DoubleQuoted,
    #[regex(r"'[^']*'")]
    SingleQuoted,
    #[regex(r#""([^"\\]|\\.)*\\?"#)]
    UnterminatedDouble,
    #[regex(r"'[^']*")]
    UnterminatedSingle,
}

/// How a value was written. The printer keeps it where it can.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quote {
    #[default]
    Double,
    Single,
    Bare,
}

/// One `name=value` pair, borrowing from the document where it can.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute<'a> {
    pub name: &'a str,
    /// The value with quotes removed and escapes resolved.
    pub value: Cow<'a, str>,
    pub quote: Quote,
    /// `name=value`, quotes included.
    pub span: Span,
    pub name_span: Span,
    pub value_span: Span,
}

impl<'a> Attribute<'a> {
    /// An attribute another dialect implies without writing it (a file
    /// name before a fence, a codex header, an XML attribute): all of it is
    /// placed on the text that names its value (PROTOCOL §11).
    pub(crate) fn implied(name: &'a str, value: Cow<'a, str>, span: Span) -> Self {
        Attribute {
            name,
            value,
            quote: Quote::Double,
            span,
            name_span: span,
            value_span: span,
        }
    }
}

/// A piece of attribute text that is not an attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AttrSyntaxError {
    /// A quoted value without its closing quote.
    Unterminated { span: Span, quote: char },
    /// `name` or `name=` with nothing after it.
    MissingValue { span: Span, name: String },
    /// Text that is not `name=value`, or that follows a quoted value
    /// without white space between.
    Junk { span: Span },
}

impl AttrSyntaxError {
    pub(crate) fn span(&self) -> Span {
        match self {
            AttrSyntaxError::Unterminated { span, .. }
            | AttrSyntaxError::MissingValue { span, .. }
            | AttrSyntaxError::Junk { span } => *span,
        }
    }
}

/// Parses the attribute text `text`, found at byte `offset` of the document.
pub(crate) fn parse(text: &str, offset: usize) -> (Vec<Attribute<'_>>, Vec<AttrSyntaxError>) {
    let pieces: Vec<(Piece, Span)> = Piece::lexer(text)
        .spanned()
        .map(|(p, r)| {
            // Every byte belongs to some piece, so the lexer cannot fail;
            // should it ever, the text is reported as junk.
            (p.unwrap_or(Piece::Word), Span::new(r.start, r.end))
        })
        .collect();
    let mut attrs = Vec::new();
    let mut errors = Vec::new();
    let at = |s: Span| Span::new(s.start + offset, s.end + offset);
    let mut i = 0;
    while i < pieces.len() {
        let (piece, span) = pieces[i];
        if piece == Piece::Blank {
            i += 1;
            continue;
        }
        // The extent of this item: everything up to the next blank.
        let end = pieces[i..]
            .iter()
            .position(|(p, _)| *p == Piece::Blank)
            .map_or(pieces.len(), |n| i + n);
        let item_span = Span::new(span.start, pieces[end - 1].1.end);
        match item(text, &pieces[i..end]) {
            Ok((attr, used)) => {
                let attr = Attribute {
                    span: at(attr.span),
                    name_span: at(attr.name_span),
                    value_span: at(attr.value_span),
                    ..attr
                };
                attrs.push(attr);
                // A quoted value directly followed by more text.
                if used < end - i {
                    let junk = Span::new(pieces[i + used].1.start, item_span.end);
                    errors.push(AttrSyntaxError::Junk { span: at(junk) });
                }
            }
            Err(e) => errors.push(match e {
                ItemError::Unterminated(quote) => AttrSyntaxError::Unterminated {
                    span: at(item_span),
                    quote,
                },
                ItemError::MissingValue(name) => AttrSyntaxError::MissingValue {
                    span: at(item_span),
                    name,
                },
                ItemError::Junk => AttrSyntaxError::Junk {
                    span: at(item_span),
                },
            }),
        }
        i = end;
    }
    // Kept in the document for every task: no spare capacity.
    attrs.shrink_to_fit();
    (attrs, errors)
}

enum ItemError {
    Unterminated(char),
    MissingValue(String),
    Junk,
}

/// Reads one `name=value` from the start of `pieces` (which hold no
/// blanks), returning it and how many pieces it used.
fn item<'a>(text: &'a str, pieces: &[(Piece, Span)]) -> Result<(Attribute<'a>, usize), ItemError> {
    let slice = |s: Span| &text[s.range()];
    let (Piece::Word, name_span) = pieces[0] else {
        return Err(match pieces[0].0 {
            Piece::UnterminatedDouble => ItemError::Unterminated('"'),
            Piece::UnterminatedSingle => ItemError::Unterminated('\''),
            _ => ItemError::Junk,
        });
    };
    let name = slice(name_span);
    match pieces.get(1) {
        Some((Piece::Assign, _)) => {}
        Some(_) => return Err(ItemError::Junk),
        None => return Err(ItemError::MissingValue(name.to_owned())),
    }
    let Some(&(first, first_span)) = pieces.get(2) else {
        return Err(ItemError::MissingValue(name.to_owned()));
    };
    let (value, quote, value_span, used) = match first {
        Piece::DoubleQuoted => {
            let inner = &slice(first_span)[1..first_span.len() - 1];
            (unescape(inner), Quote::Double, first_span, 3)
        }
        Piece::SingleQuoted => {
            let inner = &slice(first_span)[1..first_span.len() - 1];
            (Cow::Borrowed(inner), Quote::Single, first_span, 3)
        }
        Piece::UnterminatedDouble => return Err(ItemError::Unterminated('"')),
        Piece::UnterminatedSingle => return Err(ItemError::Unterminated('\'')),
        Piece::Word | Piece::Assign => {
            // A bare value runs to the next blank and may contain `=`.
            let n = pieces[2..]
                .iter()
                .take_while(|(p, _)| matches!(p, Piece::Word | Piece::Assign))
                .count();
            let span = Span::new(first_span.start, pieces[1 + n].1.end);
            (Cow::Borrowed(slice(span)), Quote::Bare, span, 2 + n)
        }
        Piece::Blank => return Err(ItemError::MissingValue(name.to_owned())),
    };
    Ok((
        Attribute {
            name,
            value,
            quote,
            span: Span::new(name_span.start, value_span.end),
            name_span,
            value_span,
        },
        used,
    ))
}

/// Resolves `\"` and `\\` in a double-quoted value.
fn unescape(inner: &str) -> Cow<'_, str> {
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Writes `value` the way `quote` asks, falling back to double quotes when
/// that way cannot hold it.
pub(crate) fn quote_value(value: &str, quote: Quote) -> String {
    let bare_ok = !value.is_empty()
        && !value
            .chars()
            .any(|c| matches!(c, ' ' | '\t' | '\r' | '\x0C' | '"' | '\''));
    match quote {
        Quote::Bare if bare_ok => value.to_owned(),
        Quote::Single if !value.contains('\'') => format!("'{value}'"),
        _ => {
            let mut out = String::with_capacity(value.len() + 2);
            out.push('"');
            for c in value.chars() {
                if matches!(c, '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<(&str, String, Quote)> {
        let (attrs, errors) = parse(text, 0);
        assert!(errors.is_empty(), "{errors:?}");
        attrs
            .into_iter()
            .map(|a| (a.name, a.value.into_owned(), a.quote))
            .collect()
    }

    #[test]
    fn reads_the_three_quoting_styles() {
        assert_eq!(
            values(r#"path="a b" to='c d' count=all"#),
            vec![
                ("path", "a b".into(), Quote::Double),
                ("to", "c d".into(), Quote::Single),
                ("count", "all".into(), Quote::Bare),
            ]
        );
    }

    #[test]
    fn resolves_only_quote_and_backslash_escapes() {
        assert_eq!(values(r#"p="a\"b\\c\d""#)[0].1, r#"a"b\c\d"#);
        assert_eq!(values(r"p='a\'")[0].1, r"a\");
    }

    #[test]
    fn bare_values_may_contain_equals() {
        assert_eq!(values("p=a=b")[0].1, "a=b");
    }

    #[test]
    fn spans_point_at_the_attribute() {
        let (attrs, _) = parse(r#"path="x" count=2"#, 10);
        assert_eq!(attrs[1].span, Span::new(19, 26));
        assert_eq!(attrs[1].name_span, Span::new(19, 24));
        assert_eq!(attrs[1].value_span, Span::new(25, 26));
    }

    #[test]
    fn reports_what_is_not_an_attribute() {
        let (_, e) = parse(r#"path="x"#, 0);
        assert!(matches!(
            e[..],
            [AttrSyntaxError::Unterminated { quote: '"', .. }]
        ));
        let (_, e) = parse("path", 0);
        assert!(matches!(e[..], [AttrSyntaxError::MissingValue { .. }]));
        let (_, e) = parse("path=", 0);
        assert!(matches!(e[..], [AttrSyntaxError::MissingValue { .. }]));
        let (a, e) = parse(r#"a="1"b="2""#, 0);
        assert_eq!(a.len(), 1);
        assert!(matches!(e[..], [AttrSyntaxError::Junk { span }] if span == Span::new(5, 10)));
        let (_, e) = parse("=x", 0);
        assert!(matches!(e[..], [AttrSyntaxError::Junk { .. }]));
    }

    #[test]
    fn quoting_round_trips() {
        for value in ["plain", "with space", "it's", r#"say "hi" \o/"#, ""] {
            for quote in [Quote::Double, Quote::Single, Quote::Bare] {
                let text = format!("v={}", quote_value(value, quote));
                let (attrs, errors) = parse(&text, 0);
                assert!(errors.is_empty(), "{text}");
                assert_eq!(attrs[0].value, value, "{text}");
            }
        }
    }
}
