//! The workspace builds serde_json with one function patched (vendor/serde_json/PATCHED.md):
//! `SliceRead::skip_to_escape` scans 16 bytes a step with SSE2 on x86_64 before the crate's own
//! 8-byte loop takes the tail. These tests hold the patched scan to the answer a byte-by-byte
//! scan gives: the first `"`, `\` or control character (0x00..=0x1F, RFC 8259 section 7) in a
//! string, at every offset of strings from 0 to 80 bytes (five 16-byte steps, every tail
//! length), in the three paths that call it: a string read (`String`), a string skipped
//! (`IgnoredAny`) and a raw value (`RawValue`).

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// Filler of `len` bytes without any byte the scan stops at: ASCII, DEL (0x7F, not a control
/// character in JSON) and UTF-8 bytes above 0x7F (an unsigned comparison must not take them for
/// control characters).
fn filler(len: usize, seed: usize) -> String {
    let pieces = ["a", "Z", "~", "\u{7f}", " ", "é", "€", "😀", "!", "/"];
    let mut s = String::new();
    let mut i = seed;
    while s.len() < len {
        let p = pieces[i % pieces.len()];
        s.push_str(if s.len() + p.len() <= len { p } else { "x" });
        i += 1;
    }
    s
}

#[test]
fn a_control_character_is_refused_at_every_offset() {
    for len in 1..=80 {
        for at in 0..len {
            for ctrl in [0x00u8, 0x01, 0x09, 0x0a, 0x1f] {
                let mut text = filler(len, at).into_bytes();
                // Keep the text valid UTF-8: put the control character on a char boundary.
                let at = (0..=at)
                    .rev()
                    .find(|&i| i == 0 || (text[i] as i8) >= -0x40)
                    .unwrap();
                let end = text[at..]
                    .iter()
                    .skip(1)
                    .position(|&b| (b as i8) >= -0x40)
                    .map_or(text.len(), |p| at + 1 + p);
                text.splice(at..end, [ctrl]);
                let json = [b"\"".as_slice(), &text, b"\""].concat();
                let err = serde_json::from_slice::<String>(&json).unwrap_err();
                assert!(
                    err.to_string().contains("control character"),
                    "len {len} at {at} ctrl {ctrl:#x}: {err}"
                );
                // Refused at the control character: the byte after the opening quote is column 2
                // (a line feed starts line 2 at column 0).
                let at_ctrl = if ctrl == b'\n' { (2, 0) } else { (1, at + 2) };
                assert_eq!(
                    (err.line(), err.column()),
                    at_ctrl,
                    "len {len} at {at} ctrl {ctrl:#x}"
                );
                assert!(
                    serde_json::from_slice::<IgnoredAny>(&json).is_err(),
                    "len {len} at {at}"
                );
                assert!(
                    serde_json::from_slice::<Box<RawValue>>(&json).is_err(),
                    "len {len} at {at}"
                );
            }
        }
    }
}

#[test]
fn a_quote_ends_the_string_at_every_offset() {
    for len in 0..=80 {
        let head = filler(len, len);
        let json = format!("\"{head}\"{}\"", filler(20, 3));
        let mut stream = serde_json::Deserializer::from_str(&json).into_iter::<String>();
        assert_eq!(stream.next().unwrap().unwrap(), head, "len {len}");
        assert_eq!(stream.byte_offset(), head.len() + 2, "len {len}");
        let mut stream = serde_json::Deserializer::from_str(&json).into_iter::<Box<RawValue>>();
        assert_eq!(
            stream.next().unwrap().unwrap().get(),
            format!("\"{head}\""),
            "len {len}"
        );
        let mut stream = serde_json::Deserializer::from_str(&json).into_iter::<IgnoredAny>();
        assert!(stream.next().unwrap().is_ok());
        assert_eq!(stream.byte_offset(), head.len() + 2, "len {len}");
    }
}

#[test]
fn escapes_are_decoded_at_every_offset() {
    for len in 0..=80 {
        for (escape, decoded) in [
            ("\\\\", "\\"),
            ("\\n", "\n"),
            ("\\\"", "\""),
            ("\\u00e9", "é"),
        ] {
            let head = filler(len, 7);
            let tail = filler(80 - len, 1);
            let json = format!("\"{head}{escape}{tail}{escape}\"");
            let want = format!("{head}{decoded}{tail}{decoded}");
            assert_eq!(
                serde_json::from_str::<String>(&json).unwrap(),
                want,
                "len {len} {escape}"
            );
            assert!(serde_json::from_str::<IgnoredAny>(&json).is_ok());
            assert_eq!(
                serde_json::from_str::<Box<RawValue>>(&json).unwrap().get(),
                json
            );
        }
    }
}

#[test]
fn an_unterminated_string_is_refused_at_every_length() {
    for len in 0..=80 {
        let json = format!("\"{}", filler(len, 5));
        let err = serde_json::from_str::<String>(&json).unwrap_err();
        assert!(err.is_eof(), "len {len}: {err}");
        assert!(serde_json::from_str::<IgnoredAny>(&json)
            .unwrap_err()
            .is_eof());
    }
}
