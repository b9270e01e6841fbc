//! Scrubbing in the writers' pass (issue 11): the message writers (and complete mode's multipart
//! tool results) scrub each value they copy from Genkit's JSON as they write it. For any
//! Genkit-shaped model or tool span, in both modes, with and without a cap and user patterns, the
//! result must equal the old order: the mapping without scrubbing, then the content rules on each
//! written attribute (`Content::apply` on an unscrubbed `Mapped`, the whole-value
//! `Scrubber::json`). The spans hold every secret kind, look-alikes, values under credential keys,
//! unknown roles and finish reasons, media URLs, and strings written with `\u`, `\/` and other
//! escapes (which can spell a needle that the raw text does not show).

use genkit_for_maple_core::content::Content;
use genkit_for_maple_core::span::{Mapped, Mapper, Mode, Options, SpanInput};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::sync::{Mutex, OnceLock};

const SECRETS: &[&str] = &[
    "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
    "Bearer abcdef0123456789ghijkl",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "maple_sk_8f3a2b1c9d0e7f6a5b4c",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
    "internal-4821",
];

const LOOK_ALIKES: &[&str] = &[
    "task-force",
    "sk-learn",
    "the bearer of good news",
    "xox",
    "AKIA",
    "api_key",
    "https://hooks.slack.com",
];

const KEYS: &[&str] = &[
    // Spelled with two separators: no needle, never a credential key (in any context).
    "api__key",
    "Auth_orization",
    "x-api--key",
    "q",
    "api_key",
    "Authorization",
    "client_secret",
    "password",
    "token",
    "x-api-key",
    "note",
];

/// A short text: prose, a secret or a look-alike spliced in, escapes-worthy characters.
fn text() -> impl Strategy<Value = String> {
    (
        "[a-zA-Z0-9 é東😀\n\t\"\\\\/\u{1}_.-]{0,24}",
        0..(SECRETS.len() + LOOK_ALIKES.len() + 3),
        "[a-z ]{0,8}",
    )
        .prop_map(|(a, k, b)| {
            let middle = if k < SECRETS.len() {
                SECRETS[k]
            } else if k < SECRETS.len() + LOOK_ALIKES.len() {
                LOOK_ALIKES[k - SECRETS.len()]
            } else {
                ""
            };
            format!("{a}{middle}{b}")
        })
}

/// Any JSON value a tool takes or returns, with credential keys.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        text().prop_map(Value::String),
        (0i64..1000).prop_map(|n| json!(n)),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((0..KEYS.len(), inner), 0..4).prop_map(|kv| {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(KEYS[k].to_string(), v);
                }
                Value::Object(m)
            }),
        ]
    })
}

fn part() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(|t| json!({ "text": t })),
        text().prop_map(|t| json!({ "reasoning": t })),
        (text(), text(), value()).prop_map(|(n, r, i)| json!({
            "toolRequest": { "name": n, "ref": r, "input": i }
        })),
        (text(), text(), value()).prop_map(|(n, r, o)| json!({
            "toolResponse": { "name": n, "ref": r, "output": o }
        })),
        (text(), text()).prop_map(|(mime, data)| json!({
            "media": { "url": format!("data:{mime};base64,{data}"), "contentType": mime }
        })),
        text().prop_map(|t| json!({ "media": { "url": format!("https://example.com/{t}") } })),
        value().prop_map(|d| json!({ "data": d })),
    ]
}

fn message() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("user".to_string()),
            Just("model".to_string()),
            Just("system".to_string()),
            Just("tool".to_string()),
            text(),
        ],
        prop::collection::vec(part(), 0..4),
    )
        .prop_map(|(role, content)| json!({ "role": role, "content": content }))
}

fn reason() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("stop")),
        Just(json!("length")),
        Just(json!("blocked")),
        Just(json!("other")),
        text().prop_map(Value::String),
    ]
}

/// A request with values before and after `messages` (keys are written sorted: `config`,
/// `messages`, `tools`), which the writers' scan of the messages' extent leaves out.
fn request() -> impl Strategy<Value = Value> {
    (prop::collection::vec(message(), 0..5), value(), value()).prop_map(
        |(messages, config, tool)| {
            json!({
                "messages": messages,
                "config": { "temperature": 0.5, "extra": config },
                "tools": [{ "name": "t", "description": "d", "inputSchema": tool }]
            })
        },
    )
}

/// A response with the provider's raw answer (`custom`) before the message and `usage` after.
fn response() -> impl Strategy<Value = Value> {
    let usage = json!({ "inputTokens": 12, "outputTokens": 3 });
    prop_oneof![
        (message(), reason(), value()).prop_map(move |(m, r, custom)| json!({
            "message": m, "finishReason": r, "usage": usage, "custom": custom
        })),
        (prop::collection::vec((message(), reason()), 1..3), value()).prop_map(
            |(c, custom)| json!({
                "candidates": c.into_iter().map(|(m, r)| json!({ "message": m, "finishReason": r }))
                    .collect::<Vec<_>>(),
                "custom": custom
            })
        ),
    ]
}

/// JSON text of `v`, each string written with escapes chosen by `seed`: as `JSON.stringify`
/// writes it, or with some ASCII letters and digits as `\u00XX` and `/` as `\/`.
fn to_text(v: &Value, seed: u64) -> String {
    let mut out = String::new();
    let mut state = seed | 1;
    write(v, &mut out, &mut state);
    out
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn write(v: &Value, out: &mut String, state: &mut u64) {
    match v {
        Value::String(s) => {
            let escape_some = next(state).is_multiple_of(3);
            out.push('"');
            for c in s.chars() {
                let roll = next(state) % 4;
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '/' if escape_some && roll == 0 => out.push_str("\\/"),
                    // JSON.stringify's short escapes, or `\u` (which the writers use).
                    '\n' if roll < 2 => out.push_str("\\n"),
                    '\t' if roll < 2 => out.push_str("\\t"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c if escape_some && c.is_ascii_alphanumeric() && roll == 0 => {
                        out.push_str(&format!("\\u{:04X}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out, state);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(&Value::String(k.clone()), out, state);
                out.push(':');
                write(item, out, state);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A mapper of `options` that writes content as mapped (no scrubbing, no cap).
fn plain(options: &Options) -> Mapper {
    Mapper::new(Options {
        scrub: false,
        max_content_bytes: Some(usize::MAX),
        ..options.clone()
    })
}

/// The old order: map without scrubbing, then the content rules on every written attribute.
fn post_pass(options: &Options, span: &SpanInput<'_>) -> Mapped<'static> {
    let mut plain = plain(options);
    let mut mapped = plain.map(span);
    assert_eq!(
        mapped.scrubbed, 0,
        "a mapper without a scrubber marks nothing"
    );
    Content::new(options).unwrap().apply(&mut mapped);
    owned(mapped)
}

fn owned(m: Mapped<'_>) -> Mapped<'static> {
    use genkit_for_maple_core::span::Value as V;
    fn own(v: V<'_>) -> V<'static> {
        match v {
            V::Str(s) => V::Str(std::borrow::Cow::Owned(s.into_owned())),
            V::Int(i) => V::Int(i),
            V::Double(d) => V::Double(d),
            V::Bool(b) => V::Bool(b),
            V::Null => V::Null,
            V::Array(a) => V::Array(a.into_iter().map(own).collect()),
            V::Json(t) => V::Str(std::borrow::Cow::Owned(format!("json:{t}"))),
        }
    }
    Mapped {
        attributes: m.attributes.into_iter().map(|(k, v)| (k, own(v))).collect(),
        problems: m.problems,
        ..Mapped::default()
    }
}

fn options(mode: Mode, variant: u8) -> Options {
    Options {
        mode,
        cost: false,
        secret_patterns: if variant & 1 != 0 {
            vec![r"internal-\d{4}".to_string()]
        } else {
            Vec::new()
        },
        max_content_bytes: if variant & 2 != 0 {
            Some(400)
        } else {
            Some(usize::MAX)
        },
        ..Options::default()
    }
}

/// The mappers of every (mode, variant), compiled once (as once per processor): the in-pass one,
/// the one without scrubbing and the content rules of the post-pass. The same spans reach both
/// mappers in the same order, so their state (complete mode's tool call ids) stays equal.
struct Mappers {
    in_pass: Mapper,
    plain: Mapper,
    content: Content,
}

fn mappers() -> &'static Mutex<Vec<Mappers>> {
    static ALL: OnceLock<Mutex<Vec<Mappers>>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = Vec::new();
        for mode in [Mode::Reference, Mode::Complete] {
            for variant in 0..4u8 {
                let options = options(mode, variant);
                all.push(Mappers {
                    in_pass: Mapper::new(options.clone()),
                    plain: plain(&options),
                    content: Content::new(&options).unwrap(),
                });
            }
        }
        Mutex::new(all)
    })
}

/// A span of `subtype` (`model`: Gemini's model name, else the tool `lookup`).
fn span<'a>(subtype: &'a str, input: &'a str, output: &'a str) -> SpanInput<'a> {
    SpanInput {
        subtype: Some(subtype),
        name: Some(if subtype == "model" {
            "googleai/gemini-2.5-flash"
        } else {
            "lookup"
        }),
        input: Some(input),
        output: Some(output),
        ..SpanInput::default()
    }
}

fn check(span: &SpanInput<'_>) -> Result<(), TestCaseError> {
    let mut all = mappers().lock().unwrap_or_else(|e| e.into_inner());
    for (i, m) in all.iter_mut().enumerate() {
        let (mode, variant) = (m.in_pass.options().mode, i % 4);
        {
            let in_pass = m.in_pass.map(span);
            let marked = in_pass.scrubbed;
            let in_pass = owned(in_pass);
            let mut expected = m.plain.map(span);
            prop_assert_eq!(expected.scrubbed, 0);
            m.content.apply(&mut expected);
            let expected = owned(expected);
            prop_assert_eq!(
                &in_pass.attributes,
                &expected.attributes,
                "mode {:?}, variant {}, input {:?}, output {:?}",
                mode,
                variant,
                span.input,
                span.output
            );
            prop_assert_eq!(in_pass.problems, expected.problems);
            if span.subtype == Some("model") && in_pass.problems == 0 {
                prop_assert!(marked != 0, "the message writers' attributes are marked");
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn model_spans_scrubbed_in_pass_equal_the_post_pass(
        req in request(), resp in response(), seed in any::<u64>(),
    ) {
        let input = to_text(&req, seed);
        let output = to_text(&resp, seed.rotate_left(17));
        let span = span("model", &input, &output);
        check(&span)?;
    }

    #[test]
    fn tool_spans_scrubbed_in_pass_equal_the_post_pass(
        args in value(), result in value(), parts in prop::collection::vec(part(), 0..4),
        v2 in any::<bool>(), seed in any::<u64>(),
    ) {
        let input = to_text(&args, seed);
        let output = if v2 {
            to_text(&json!({ "output": result, "content": parts }), seed.rotate_left(9))
        } else {
            to_text(&result, seed.rotate_left(9))
        };
        let span = span(if v2 { "tool.v2" } else { "tool" }, &input, &output);
        check(&span)?;
    }
}

/// The escapes that hide a needle from the raw text: a key spelled `\u0061pi_key`, a token whose
/// prefix is `\u0073k-`, a finish reason passed through; each scrubbed in the writers' pass.
#[test]
fn escaped_needles_are_scrubbed_in_pass() {
    let input = r#"{"messages":[{"role":"user","content":[{"text":"key \u0073k-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x"},{"toolRequest":{"name":"f","input":{"\u0061pi_key":"abcdefghijkl"}}}]}]}"#;
    let output = r#"{"message":{"role":"model","content":[{"text":"ok"}]},"finishReason":"AKIAIOSFODNN7EXAMPLE"}"#;
    let span = span("model", input, output);
    for mode in [Mode::Reference, Mode::Complete] {
        let mut mapper = Mapper::new(options(mode, 0));
        let mapped = mapper.map(&span);
        let text = |key: &str| match mapped.attributes.iter().find(|(k, _)| *k == key) {
            Some((_, genkit_for_maple_core::span::Value::Str(s))) => s.to_string(),
            other => panic!("{key}: {other:?}"),
        };
        let messages = text("gen_ai.input.messages");
        assert!(messages.contains("key [REDACTED]"), "{messages}");
        assert!(
            messages.contains(r#""\u0061pi_key":"[REDACTED]""#),
            "{messages}"
        );
        let answers = text("gen_ai.output.messages");
        assert!(
            !answers.contains("AKIAIOSFODNN7EXAMPLE"),
            "{mode:?}: {answers}"
        );
        assert!(answers.contains("[REDACTED]"), "{mode:?}: {answers}");
        assert_eq!(
            mapped.attributes.len(),
            post_pass(&options(mode, 0), &span).attributes.len()
        );
    }
}

/// A key with no needle (`api__key`) counts the same wherever it is: not a credential key, whether
/// or not a `\u` escape is elsewhere in the source or in what the writers write (a finish reason
/// with a newline, written `\u000a`). Found by review; equal to the post-pass.
#[test]
fn a_key_without_a_needle_counts_the_same_everywhere() {
    let args = r#"{"api__key":"abcdefghijkl"}"#;
    let cases = [
        (
            format!(
                r#"{{"messages":[{{"role":"user","content":[{{"text":"colour \u001b[31mred"}},{{"toolRequest":{{"name":"f","input":{args}}}}}]}}]}}"#
            ),
            r#"{"message":{"role":"model","content":[{"text":"ok"}]},"finishReason":"stop"}"#
                .to_string(),
        ),
        (
            r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#.to_string(),
            format!(
                r#"{{"message":{{"role":"model","content":[{{"toolRequest":{{"name":"f","input":{args}}}}}]}},"finishReason":"a\nb"}}"#
            ),
        ),
    ];
    for (input, output) in &cases {
        let span = span("model", input, output);
        for mode in [Mode::Reference, Mode::Complete] {
            let mapped = Mapper::new(options(mode, 0)).map(&span);
            let all: String = mapped
                .attributes
                .iter()
                .filter_map(|(_, v)| match v {
                    genkit_for_maple_core::span::Value::Str(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect();
            assert!(all.contains(args), "{mode:?}: {all}");
            let expected = owned(post_pass(&options(mode, 0), &span));
            assert_eq!(owned(mapped).attributes, expected.attributes, "{mode:?}");
        }
    }
}
