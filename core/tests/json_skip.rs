//! The workspace builds serde_json with a fast path for skipping a value
//! (vendor/serde_json/PATCHED.md): `ignore_value`, which skips what the mapping does not read
//! (`tools`, `config`, unknown keys) and delimits every `RawValue`, first tries
//! `SliceRead::skip_value_valid`, which accepts only values that follow the JSON grammar and
//! otherwise leaves the input to the crate's own loop. These tests hold it to the crate's own
//! answer: serde_json's `IoRead` (`from_reader`) has no fast path, so the same text read through
//! it is the oracle for `from_str` and `from_slice` (both `SliceRead`), on generated JSON with
//! whitespace, escapes, numbers of every form, nesting past the fast path's 64 levels, and on
//! the same texts with bytes deleted, inserted or replaced: same acceptance, same error, and the
//! same end of every skipped value (a `RawValue` holds the skipped bytes).

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;

/// xorshift64*: deterministic cases without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Whitespace JSON allows between tokens, mostly none (Genkit writes compact JSON).
fn ws(rng: &mut Rng, out: &mut String) {
    if rng.below(4) == 0 {
        out.push_str(rng.pick(&[" ", "\n", "\t", "\r", "  \n\t", "\r\n "]));
    }
}

fn string(rng: &mut Rng, out: &mut String) {
    out.push('"');
    let parts = rng.below(6);
    for _ in 0..parts {
        let piece = rng.pick(&[
            "a",
            "type",
            "description of a field",
            "0123456789abcdef0123456789abcdef!",
            "é",
            "日本語",
            "😀",
            "\u{7f}",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b\\f\\r\\t",
            "\\u0041",
            "\\uD83D\\uDE00",
            "\\ud800",
            "\\uDFFFx",
            "\\uabcd",
        ]);
        out.push_str(piece);
    }
    out.push('"');
}

fn number(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.pick(&[
        "0",
        "-0",
        "7",
        "-12",
        "1234567890123456789012345678901234567890",
        "0.5",
        "-3.25",
        "1e3",
        "1E+3",
        "2e-7",
        "-0.0e0",
        "6.02214076e23",
        "1e400",
        "-1e-400",
        "18446744073709551616",
    ]));
}

fn value(rng: &mut Rng, out: &mut String, depth: usize) {
    ws(rng, out);
    let choice = if depth == 0 {
        rng.below(6)
    } else {
        rng.below(9)
    };
    match choice {
        0 => string(rng, out),
        1 => number(rng, out),
        2 => out.push_str(rng.pick(&["true", "false", "null"])),
        3 | 4 => string(rng, out),
        5 => number(rng, out),
        6 | 7 => container(rng, out, depth, true),
        _ => container(rng, out, depth, false),
    }
}

/// An object (`object`) or an array of up to three members, each `value` of `depth - 1`.
fn container(rng: &mut Rng, out: &mut String, depth: usize, object: bool) {
    out.push(if object { '{' } else { '[' });
    ws(rng, out);
    for i in 0..rng.below(4) {
        if i > 0 {
            out.push(',');
        }
        if object {
            ws(rng, out);
            string(rng, out);
            ws(rng, out);
            out.push(':');
        }
        value(rng, out, depth - 1);
        ws(rng, out);
    }
    out.push(if object { '}' } else { ']' });
}

/// A value nested `levels` deep, arrays and objects mixed by `rng`.
fn deep(rng: &mut Rng, levels: usize) -> String {
    let mut open = String::new();
    let mut close = Vec::new();
    for _ in 0..levels {
        if rng.below(2) == 0 {
            open.push('[');
            close.push(']');
        } else {
            open.push_str("{\"k\":");
            close.push('}');
        }
    }
    open.push_str("null");
    open.extend(close.into_iter().rev());
    open
}

/// The same text with a few bytes deleted, inserted or replaced by ones that matter to JSON.
fn mutate(rng: &mut Rng, text: &str) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(bytes.len() + 1);
        let byte = b"\"\\{}[],:0-+.eEtfnu \n\x01\x1fa9"[rng.below(24)];
        match rng.below(3) {
            0 if at < bytes.len() => {
                bytes.remove(at);
            }
            1 if at < bytes.len() => bytes[at] = byte,
            _ => bytes.insert(at, byte),
        }
    }
    bytes
}

#[derive(Deserialize)]
struct Holder<'a> {
    #[serde(borrow)]
    a: &'a RawValue,
    #[allow(dead_code)]
    b: IgnoredAny,
}

#[derive(Deserialize)]
struct OwnedHolder {
    a: Box<RawValue>,
    #[allow(dead_code)]
    b: IgnoredAny,
}

/// An error message without its position: `IoRead` counts columns differently from `SliceRead`
/// (a difference of the readers, not of the patch), so the oracle is held to the error itself.
fn what(message: String) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message,
    }
}

/// The patched readers against the oracle (`from_reader`), skipping `text` on its own and as a
/// raw value inside an object with a skipped sibling after it.
fn check(text: &[u8]) {
    let oracle = serde_json::from_reader::<_, IgnoredAny>(text).map_err(|e| what(e.to_string()));
    let sliced = serde_json::from_slice::<IgnoredAny>(text).map_err(|e| e.to_string());
    // Same acceptance and the same error.
    assert_eq!(
        sliced.clone().map_err(what),
        oracle,
        "{:?}",
        String::from_utf8_lossy(text)
    );
    if let Ok(text) = std::str::from_utf8(text) {
        // `StrRead` and `SliceRead` share their positions: the whole error.
        let strs = serde_json::from_str::<IgnoredAny>(text).map_err(|e| e.to_string());
        assert_eq!(strs, sliced, "{text:?}");

        let wrapped = format!("{{\"a\":{text},\"b\":[{text}]}}");
        let oracle = serde_json::from_reader::<_, OwnedHolder>(wrapped.as_bytes())
            .map(|h| h.a.get().to_owned())
            .map_err(|e| what(e.to_string()));
        let fast = serde_json::from_str::<Holder>(&wrapped)
            .map(|h| h.a.get().to_owned())
            .map_err(|e| what(e.to_string()));
        assert_eq!(fast, oracle, "{wrapped:?}");
    }
}

#[test]
fn skipped_values_agree_with_the_crates_own_loop() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut accepted = 0;
    for case in 0..60_000 {
        let mut text = String::new();
        value(&mut rng, &mut text, 1 + case % 6);
        ws(&mut rng, &mut text);
        check(text.as_bytes());
        accepted += serde_json::from_str::<IgnoredAny>(&text).is_ok() as usize;
        for _ in 0..3 {
            check(&mutate(&mut rng, &text));
        }
    }
    // The generator writes only valid JSON (lone surrogate escapes and out-of-range numbers
    // are valid to a skip): every text is accepted, so the fast path's accepting side is what
    // the unmutated cases test; the mutations test the refusals.
    assert_eq!(accepted, 60_000);
}

#[test]
fn nesting_past_the_fast_paths_depth_agrees() {
    let mut rng = Rng(7);
    for levels in [1, 2, 63, 64, 65, 66, 100, 127, 128, 129, 300] {
        for _ in 0..20 {
            let text = deep(&mut rng, levels);
            check(text.as_bytes());
            assert!(
                serde_json::from_str::<IgnoredAny>(&text).is_ok(),
                "{levels}"
            );
            check(&mutate(&mut rng, &text));
            // Unclosed at every depth.
            check(&text.as_bytes()[..text.len() - 1 - rng.below(levels)]);
        }
    }
}

#[test]
fn each_refusal_is_the_crates_error() {
    for text in [
        "",
        " ",
        "01",
        "-",
        "-a",
        "1.",
        "1.e5",
        "1e",
        "1e+",
        ".5",
        "+1",
        "tru",
        "nul",
        "fals",
        "trUe",
        "\"",
        "\"abc",
        "\"\\x\"",
        "\"\\u12G4\"",
        "\"\\u123\"",
        "\"a\u{1}b\"",
        "[",
        "[1",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{",
        "{\"a\"",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "{\"a\":1]",
        "[1}",
        "[1]]",
        "{\"a\":1}}",
        "1 2",
        "[]x",
        "truex",
        "nullnull",
        "\"a\"b",
        "[\"a\"\"b\"]",
        "{\"a\":1 \"b\":2}",
        "\u{feff}1",
        "[1,\n]",
    ] {
        check(text.as_bytes());
    }
    // Valid, with whitespace in every place the grammar allows it.
    for text in [
        " 1 ",
        "\n[\n1\n,\r2\t]\n",
        "{ \"a\" : [ ] , \"b\" : { } }",
        "[ { } , [ ] ]",
        "\"\"",
        "[\"\\\\\"]",
        "-0.0E-0",
    ] {
        check(text.as_bytes());
        assert!(serde_json::from_str::<IgnoredAny>(text).is_ok(), "{text:?}");
    }
}

/// Bytes and depths at the edges (a reviewer's cases): invalid UTF-8 and NUL through
/// `from_slice`, escapes and numbers cut off by the end of the input, whitespace JSON does not
/// allow, a byte order mark, nesting around the fast path's 64 levels with and without whitespace,
/// 100,000 levels (no recursion either way), `\u` escapes across a 16-byte step.
#[test]
fn bytes_and_depths_at_the_edges() {
    let cases: &[&[u8]] = &[
        b"",
        b"\n\t\r ",
        b"\x00",
        b"\"\x00\"",
        b"\"\x7f\x80\xff\"",
        b"\xff",
        b"[\xff]",
        b"[1,\xff]",
        b"{\"a\xff\":1}",
        b"\"\\u",
        b"\"\\u0",
        b"\"\\u004",
        b"\"\\u0041",
        b"[\"\\u",
        b"{\"a\\u12",
        b"0",
        b"-",
        b"1.",
        b"1e",
        b"1E-",
        b"[1",
        b"[1e",
        b"{\"a\":-",
        b"0x",
        b"-01",
        b"1\x00",
        b"1\xff",
        b"[ \x0b]",
        b"[\x0c1]",
        b"\xef\xbb\xbf1",
        b"[]]",
        b"{}}",
        b"1 2",
        b"[1]x",
        b"\"\xed\xa0\x80\"",
        b"\"\xc0\x80\"",
    ];
    for c in cases {
        check(c);
    }
    for depth in [63, 64, 65] {
        for ws in ["", " \n"] {
            let mut s = String::new();
            for i in 0..depth {
                s.push_str(ws);
                s.push_str(if i % 2 == 0 { "[" } else { "{\"k\":" });
            }
            s.push_str(ws);
            s.push('1');
            for i in (0..depth).rev() {
                s.push_str(ws);
                s.push(if i % 2 == 0 { ']' } else { '}' });
            }
            check(s.as_bytes());
            check(format!("{s}x").as_bytes());
            check(&s.as_bytes()[..s.len() - 1]);
        }
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    check(deep.as_bytes());
    check(&deep.as_bytes()[..deep.len() - 1]);
    for at in 0..40 {
        let mut s = String::from("\"");
        for i in 0..48 {
            if i == at {
                s.push_str("\\u00e9");
            }
            s.push('a');
        }
        s.push('"');
        check(s.as_bytes());
        check(&s.as_bytes()[..s.len() - 1]);
    }
}
