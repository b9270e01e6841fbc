//! JSON string literals decoded with fallible memory. serde's `Cow<str>` deserializer always
//! returns an owned `String` (its `Cow::Borrowed` arm never runs) and allocates it infallibly; here
//! a literal without escapes is borrowed from the source text, and one with escapes is decoded
//! into a buffer reserved with `try_reserve_exact` (the decoded text is never longer than the
//! literal).

use std::borrow::Cow;

/// Why a JSON string literal was not decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringError {
    /// Not a JSON string literal (no quotes, a bad escape).
    NotAString,
    /// A `\u` escape of a lone surrogate: no UTF-8 for it (the caller maps in JavaScript).
    LoneSurrogate,
    /// The buffer for the decoded text could not be allocated.
    OutOfMemory,
}

/// Decodes `literal`, a JSON string literal with its quotes (as `RawValue::get` gives it), to its
/// text: borrowed from `literal` when it has no escape, decoded otherwise.
pub fn decode(literal: &str) -> Result<Cow<'_, str>, StringError> {
    let inner = literal
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .ok_or(StringError::NotAString)?;
    if !inner.contains('\\') {
        return Ok(Cow::Borrowed(inner));
    }
    let mut out = String::new();
    out.try_reserve_exact(inner.len())
        .map_err(|_| StringError::OutOfMemory)?;
    let mut rest = inner;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let bytes = rest.as_bytes();
        let escape = *bytes.get(at + 1).ok_or(StringError::NotAString)?;
        rest = &rest[at + 2..];
        let c = match escape {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = hex4(&mut rest)?;
                match high {
                    0xD800..=0xDBFF => {
                        let low = rest
                            .strip_prefix("\\u")
                            .and_then(|r| {
                                let mut r = r;
                                hex4(&mut r).ok().map(|v| (v, r))
                            })
                            .filter(|(v, _)| (0xDC00..=0xDFFF).contains(v));
                        let Some((low, after)) = low else {
                            return Err(StringError::LoneSurrogate);
                        };
                        rest = after;
                        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code).ok_or(StringError::LoneSurrogate)?
                    }
                    0xDC00..=0xDFFF => return Err(StringError::LoneSurrogate),
                    _ => char::from_u32(high).ok_or(StringError::NotAString)?,
                }
            }
            _ => return Err(StringError::NotAString),
        };
        // Within the reservation: every escape is at least as long as its UTF-8 text.
        out.push(c);
    }
    out.push_str(rest);
    Ok(Cow::Owned(out))
}

/// Reads four hex digits from the start of `rest`, advancing it.
fn hex4(rest: &mut &str) -> Result<u32, StringError> {
    let digits = rest.get(..4).ok_or(StringError::NotAString)?;
    let value = u32::from_str_radix(digits, 16).map_err(|_| StringError::NotAString)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(StringError::NotAString);
    }
    *rest = &rest[4..];
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_without_escapes_and_equals_serde_with_them() {
        assert!(matches!(decode(r#""plain""#), Ok(Cow::Borrowed("plain"))));
        for literal in [
            r#""""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u00e9\u6771\ud83d\ude00 mixed é 東""#,
            r#""\u0000\u001f\uffff\uE000""#,
            r#""tail\n""#,
        ] {
            let expected: String = serde_json::from_str(literal).unwrap();
            assert_eq!(decode(literal).unwrap(), expected, "{literal}");
        }
    }

    #[test]
    fn tool_results_and_scalars_borrow_strings_without_escapes() {
        use crate::mapping::{map_tool_result, Scalar, ToolResult};
        let big = format!("\"{}\"", "x".repeat(1 << 20));
        assert!(
            matches!(map_tool_result(&big), ToolResult::Text(Cow::Borrowed(s)) if s.len() == 1 << 20)
        );
        let raw: &serde_json::value::RawValue = serde_json::from_str(r#""stop""#).unwrap();
        assert!(matches!(
            Scalar::of(raw),
            Scalar::Str(Cow::Borrowed("stop"))
        ));
        assert_eq!(map_tool_result(r#""\ud800""#), ToolResult::NeedsJs);
    }

    #[test]
    fn lone_surrogates_and_bad_literals_are_refused() {
        for literal in [
            r#""\ud800""#,
            r#""\udc00x""#,
            r#""\ud83d\u0041""#,
            r#""a\ud83d""#,
        ] {
            assert_eq!(
                decode(literal),
                Err(StringError::LoneSurrogate),
                "{literal}"
            );
        }
        for literal in ["plain", r#""\x""#, r#""\u12""#, r#""\u+123""#, "\"\\"] {
            assert!(decode(literal).is_err(), "{literal}");
        }
    }

    #[test]
    fn the_reservation_holds_the_longest_expansion() {
        // Every escape's UTF-8 text is no longer than the escape: the buffer never regrows.
        let literal = format!("\"{}\"", r"\u0800\ud83d\ude00\n\u007f".repeat(1000));
        let inner_len = literal.len() - 2;
        let decoded = decode(&literal).unwrap();
        assert!(decoded.len() <= inner_len);
        assert_eq!(decoded, serde_json::from_str::<String>(&literal).unwrap());
    }
}
