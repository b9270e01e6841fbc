//! Property tests of content control (issue 11): for any JSON value built from arbitrary strings
//! (every Unicode plane, quotes, backslashes, control characters, so every JSON escape), with and
//! without secrets spliced in:
//! - `Scrubber::json` gives JSON that parses to the same shape, with only string values changed,
//!   and leaves a value without secrets byte for byte as it was;
//! - `cap_messages` / `cap_json` give JSON that parses and fits the cap, or report `Structure`.

use genkit_for_maple_core::cap::{cap_json, cap_messages, CapError};
use genkit_for_maple_core::scrub::{Scrubber, PLACEHOLDER};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::OnceLock;

/// Compiled once for all cases (as once per processor).
fn scrubber() -> &'static Scrubber {
    static SCRUBBER: OnceLock<Scrubber> = OnceLock::new();
    SCRUBBER.get_or_init(Scrubber::with_defaults)
}

const SECRETS: &[&str] = &[
    "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "maple_sk_8f3a2b1c9d0e7f6a5b4c",
    "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z \\n\"\\\\é東😀\u{1}-]{0,40}",
        any::<String>().prop_map(|s| s.chars().take(40).collect()),
    ]
}

/// A text with a secret spliced in at a char boundary, or without one.
fn maybe_secret() -> impl Strategy<Value = (String, bool)> {
    (
        text(),
        any::<bool>(),
        0..SECRETS.len(),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(t, with, k, at)| {
            if !with {
                return (t, false);
            }
            let bounds: Vec<usize> = (0..=t.len()).filter(|&i| t.is_char_boundary(i)).collect();
            let i = bounds[at.index(bounds.len())];
            (format!("{} {} {}", &t[..i], SECRETS[k], &t[i..]), true)
        })
}

fn messages() -> impl Strategy<Value = Vec<(String, bool)>> {
    prop::collection::vec(maybe_secret(), 1..12)
}

fn to_json(texts: &[(String, bool)]) -> String {
    let v: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, (t, _))| {
            json!({"role": if i == 0 { "system" } else { "user" }, "parts": [
                {"type": "text", "content": t},
                {"type": "tool_call", "id": "c", "name": "f", "arguments": {"q": t, "n": [1, t]}}
            ]})
        })
        .collect();
    serde_json::to_string(&v).unwrap()
}

/// Same shape: arrays/objects with the same keys and lengths, the same non-string values.
fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(_), Value::String(_)) => true,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shape(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_shape(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    #[test]
    fn scrubbing_keeps_json_valid_and_changes_only_strings(texts in messages()) {
        let scrubber = scrubber();
        let json = to_json(&texts);
        let out = scrubber.json(&json).unwrap();
        let before: Value = serde_json::from_str(&json).unwrap();
        let after: Value = serde_json::from_str(&out).expect("scrubbed JSON parses");
        prop_assert!(same_shape(&before, &after));
        let any_secret = texts.iter().any(|(_, s)| *s);
        if any_secret {
            prop_assert!(matches!(out, Cow::Owned(_)));
            for secret in SECRETS {
                let decoded = after.to_string();
                prop_assert!(!decoded.contains(&serde_json::to_string(secret).unwrap()[1..secret.len()]));
            }
            prop_assert!(out.contains(PLACEHOLDER));
        } else if scrubber.is_clean(&json) {
            prop_assert!(matches!(out, Cow::Borrowed(_)));
        }
    }

    #[test]
    fn capping_gives_parseable_json_under_the_cap(texts in messages(), max in 0usize..4000) {
        let json = to_json(&texts);
        for result in [cap_messages(&json, max), cap_json(&json, max)] {
            match result {
                Ok(c) => {
                    prop_assert!(c.json.len() <= max);
                    let v: Value = serde_json::from_str(&c.json).expect("capped JSON parses");
                    prop_assert!(v.is_array());
                }
                Err(e) => prop_assert_eq!(e, CapError::Structure),
            }
        }
    }
}
