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
    // memchr, not `str::contains`: the char searcher's set-up costs more than the scan of a short
    // value (about 400 instructions, BENCHMARKS.md "Stop 27").
    if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
        return Ok(Cow::Borrowed(inner));
    }
    let mut out = String::new();
    out.try_reserve_exact(inner.len())
        .map_err(|_| StringError::OutOfMemory)?;
    let mut i = 0;
    while let Some(run) = memchr::memchr(b'\\', &inner.as_bytes()[i..]) {
        out.push_str(&inner[i..i + run]);
        i += run;
        let (unit, len) = unit_at(inner, i);
        let c = match unit {
            Unit::Char(c) => c,
            Unit::LoneSurrogate => return Err(StringError::LoneSurrogate),
            Unit::Bad => return Err(StringError::NotAString),
        };
        // Within the reservation: every escape is at least as long as its UTF-8 text.
        out.push(c);
        i += len;
    }
    out.push_str(&inner[i..]);
    Ok(Cow::Owned(out))
}

/// One unit of a JSON string literal's inside (between the quotes): a char as written, or one
/// escape decoded. The one escape decoder of the crate: [`decode`] and the secret scrubber
/// ([`crate::scrub`], which needs each unit's raw length to replace decoded ranges in the raw text)
/// both read escapes through [`unit_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// The char (a surrogate pair escape is one char).
    Char(char),
    /// A `\u` escape of a surrogate without its pair (raw length 6).
    LoneSurrogate,
    /// A bad escape (`\x`, `\u` without four hex digits, a backslash at the end).
    Bad,
}

/// The end (exclusive, after the closing quote) of the JSON string literal whose opening quote is
/// at `start` in `bytes`; the end of `bytes` when it is not closed. Jumps between backslashes and
/// quotes with `memchr` (a byte loop ran at about a byte a cycle: 18% of a 1 MB model span's time
/// in complete mode's cap, BENCHMARKS.md "Stop 28").
pub(crate) fn literal_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match memchr::memchr2(b'\\', b'"', &bytes[i..]) {
            None => break,
            Some(k) if bytes[i + k] == b'"' => return i + k + 1,
            Some(k) => i += k + 2,
        }
    }
    bytes.len()
}

/// The unit at byte `i` of a literal's inside `inner` (`i` on a char boundary) and its raw length
/// in bytes: a char's UTF-8 length; 2 for a simple escape, 6 for `\uXXXX`, 12 for a surrogate pair
/// escape, 6 for a lone surrogate escape; a bad escape: 2 (1 for a backslash at the end).
#[inline]
pub(crate) fn unit_at(inner: &str, i: usize) -> (Unit, usize) {
    let b = inner.as_bytes();
    if b.get(i) != Some(&b'\\') {
        return match inner.get(i..).and_then(|s| s.chars().next()) {
            Some(c) => (Unit::Char(c), c.len_utf8()),
            None => (Unit::Bad, 1),
        };
    }
    let Some(&e) = b.get(i + 1) else {
        return (Unit::Bad, 1);
    };
    let c = match e {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let Some(high) = hex4(b, i + 2) else {
                return (Unit::Bad, 2);
            };
            return match high {
                0xD800..=0xDBFF => {
                    let low = (b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u'))
                        .then(|| hex4(b, i + 8))
                        .flatten()
                        .filter(|v| (0xDC00..=0xDFFF).contains(v));
                    match low {
                        Some(low) => {
                            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            match char::from_u32(code) {
                                Some(c) => (Unit::Char(c), 12),
                                None => (Unit::LoneSurrogate, 6),
                            }
                        }
                        None => (Unit::LoneSurrogate, 6),
                    }
                }
                0xDC00..=0xDFFF => (Unit::LoneSurrogate, 6),
                _ => match char::from_u32(high) {
                    Some(c) => (Unit::Char(c), 6),
                    None => (Unit::Bad, 6),
                },
            };
        }
        // An invalid escape: the backslash and the whole character after it (which may be
        // several bytes: stopping inside it would cut the text off a character boundary).
        _ => {
            let after = inner.get(i + 1..).and_then(|s| s.chars().next());
            return (Unit::Bad, 1 + after.map_or(1, char::len_utf8));
        }
    };
    (Unit::Char(c), 2)
}

/// The four hex digits at `at` of `b`, when there are four.
#[inline]
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    let mut v = 0u32;
    for &c in digits {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end a byte loop finds (backslash skips two bytes), for comparison.
    fn literal_end_by_bytes(b: &[u8], start: usize) -> usize {
        let mut i = start + 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        b.len()
    }

    /// An invalid escape before a multi-byte character (not JSON: a text a rule treats as a
    /// literal) is one unit, the whole character: the next unit starts on a character boundary.
    #[test]
    fn an_invalid_escape_takes_the_whole_character_after_it() {
        for (inner, len) in [("\\é", 3), ("\\😀x", 5), ("\\q", 2), ("\\", 1)] {
            let (unit, n) = unit_at(inner, 0);
            assert_eq!((unit, n), (Unit::Bad, len), "{inner}");
            assert!(inner.is_char_boundary(n));
        }
        let scrubber = crate::scrub::Scrubber::with_defaults();
        for text in [
            "\"\\é\"",
            "\"a \\é sk-proj-abcdefghij0123456789 b\"",
            "\"\\😀 ghp_abcdefghijklmnopqrstuvwxyz0123456789\"",
        ] {
            assert!(scrubber.json_string(text).is_ok(), "{text}");
            assert!(scrubber.json(text).is_ok(), "{text}");
            assert!(
                scrubber.json_inner(&text[1..text.len() - 1]).is_ok(),
                "{text}"
            );
        }
    }

    #[test]
    fn literal_end_equals_a_byte_loop() {
        let pool = [b'a', b'"', b'\\', b'n', 0xC3, 0xA9, b' '];
        let mut next = crate::lcg(7);
        for len in 1..300 {
            for _ in 0..20 {
                let bytes: Vec<u8> = std::iter::once(b'"')
                    .chain((1..len).map(|_| pool[next(pool.len())]))
                    .collect();
                assert_eq!(
                    literal_end(&bytes, 0),
                    literal_end_by_bytes(&bytes, 0),
                    "{bytes:?}"
                );
            }
        }
    }

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
        let raw: crate::genkit::Raw<'_> = serde_json::from_str(r#""stop""#).unwrap();
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
    fn units_and_their_raw_lengths() {
        let cases: [(&str, Unit, usize); 10] = [
            ("a", Unit::Char('a'), 1),
            ("é", Unit::Char('é'), 2),
            ("😀", Unit::Char('😀'), 4),
            (r"\n", Unit::Char('\n'), 2),
            (r"\u00e9", Unit::Char('é'), 6),
            (r"\ud83d\ude00", Unit::Char('😀'), 12),
            (r"\ud83d\u0041", Unit::LoneSurrogate, 6),
            (r"\udc00", Unit::LoneSurrogate, 6),
            (r"\u12", Unit::Bad, 2),
            ("\\", Unit::Bad, 1),
        ];
        for (inner, unit, len) in cases {
            assert_eq!(unit_at(inner, 0), (unit, len), "{inner}");
        }
        // After a lone surrogate, the next escape is its own unit.
        assert_eq!(unit_at(r"\ud83d\u0041", 6), (Unit::Char('A'), 6));
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
