//! Rule 4 (`error.type`) reads only the head of `exception.stacktrace` (`span::stack_head`): for
//! any stack trace, the error type from its first `STACK_HEAD_UNITS` code units is the one from
//! the whole of it, as the binding read it before (the whole string as UTF-8, lone surrogates as
//! U+FFFD).

use genkit_for_maple_core::span::{
    error_type, stack_head, SpanInput, Status, STACK_HEAD_BYTES, STACK_HEAD_UNITS,
};
use proptest::prelude::*;

fn failed<'a>(exception_type: Option<&'a str>, stack: Option<&'a str>) -> SpanInput<'a> {
    SpanInput {
        status: Status::Error,
        exception_type,
        exception_stacktrace: stack,
        ..SpanInput::default()
    }
}

/// The error type from the whole stack trace and from its head.
fn both(exception_type: Option<&str>, units: &[u16]) -> (String, String) {
    let whole = String::from_utf16_lossy(units);
    let mut room = [0u8; STACK_HEAD_BYTES];
    let head = stack_head(&units[..units.len().min(STACK_HEAD_UNITS)], &mut room);
    assert!(whole.starts_with(head.trim_end_matches('\u{FFFD}')));
    (
        error_type(&failed(exception_type, Some(&whole)))
            .unwrap()
            .to_string(),
        error_type(&failed(exception_type, Some(head)))
            .unwrap()
            .to_string(),
    )
}

/// Code units that make names, their ends and their breakers: identifier characters (ASCII,
/// accented, CJK, an astral letter as a pair), `:`, `\n`, `\r`, space, `$`, `_`, digits, lone
/// surrogates of both halves.
fn unit_runs() -> impl Strategy<Value = Vec<u16>> {
    let piece = prop_oneof![
        8 => "[A-Za-z]{1,40}".prop_map(|s| s.encode_utf16().collect::<Vec<u16>>()),
        2 => Just(vec![b':' as u16]),
        2 => Just(vec![b'\n' as u16]),
        1 => Just(vec![b'\r' as u16]),
        1 => Just(vec![b' ' as u16]),
        1 => Just(vec![b'$' as u16, b'_' as u16]),
        1 => "[0-9]{1,5}".prop_map(|s| s.encode_utf16().collect::<Vec<u16>>()),
        1 => Just("é漢".encode_utf16().collect::<Vec<u16>>()),
        1 => Just("𝐀".encode_utf16().collect::<Vec<u16>>()),
        1 => Just(vec![0xD835]),
        1 => Just(vec![0xDC00]),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn stack_head_gives_the_same_error_type(units in unit_runs(), typed in any::<bool>()) {
        let t = typed.then_some("403");
        let (whole, head) = both(t, &units);
        prop_assert_eq!(whole, head);
    }
}

#[test]
fn names_at_and_around_the_head_s_end() {
    // An identifier of n characters, then `:` (or nothing), then a long message: every length
    // around 128 bytes and around the head's end, each with a pair cut at the end.
    for n in [1, 127, 128, 129, 130, 200, 254, 255, 256, 257, 300] {
        for tail in ["", ": message\n    at f (x.js:1:1)", "\nat"] {
            let name = "E".repeat(n);
            let text = format!("{name}{tail}{}", "x".repeat(500));
            let units: Vec<u16> = text.encode_utf16().collect();
            let (whole, head) = both(None, &units);
            assert_eq!(whole, head, "name of {n}, tail {tail:?}");
            let expected = if n <= 128 && !tail.is_empty() {
                name.as_str()
            } else {
                "_OTHER"
            };
            assert_eq!(whole, expected, "name of {n}, tail {tail:?}");
        }
        // A surrogate pair across the head's end.
        let mut units: Vec<u16> = "E".repeat(n).encode_utf16().collect();
        units.truncate(STACK_HEAD_UNITS - 1);
        units.extend("𝐀: m".encode_utf16());
        let (whole, head) = both(Some("X"), &units);
        assert_eq!(whole, head, "a pair at the end after {n}");
    }
    // The common case: V8's `Name: message` with frames.
    let units: Vec<u16> = "GenkitError: FAILED_PRECONDITION: blocked\n    at a (b.js:1:2)"
        .encode_utf16()
        .collect();
    assert_eq!(both(Some("400"), &units).1, "GenkitError");
    let mut room = [0u8; STACK_HEAD_BYTES];
    assert_eq!(stack_head(&[0xD800, b'A' as u16], &mut room), "\u{FFFD}A");
}
