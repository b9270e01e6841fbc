//! The size cap's shortcut (issue 9): the complete-mode writers mark where each message of
//! `gen_ai.input.messages` / `gen_ai.output.messages` lies as they write it
//! (`Out::marking`), and `cap_messages_in` drops messages by those marks instead of scanning the
//! written text. Checked on every model span of the real corpora and on synthetic histories with
//! every part kind: the marks are exactly the elements the scan finds, and a capped mapping is
//! byte for byte what capping the uncapped mapping's text by the scan gives. Marks that do not fit
//! the text are not used (same answer, no panic).

mod common;
use common::rows;

use genkit_for_maple_core::cap::{cap_messages, cap_messages_in, top_level_elements};
use genkit_for_maple_core::complete::map;
use genkit_for_maple_core::cost::PriceCache;
use genkit_for_maple_core::span::{Mapper, Options, SpanInput, Value};
use proptest::prelude::*;

/// `(genkit:input, genkit:output, genkit:name)` of every model span of the corpora.
fn corpus_model_spans() -> Vec<(Option<String>, Option<String>, Option<String>)> {
    let mut spans = Vec::new();
    for file in [
        "genkit-1.42-spans.jsonl",
        "genkit-1.42-plugin-spans.jsonl",
        "genkit-1.42-scenario-spans.jsonl",
    ] {
        for row in rows(file) {
            let a = &row["attributes"];
            if a["genkit:metadata:subtype"].as_str() != Some("model") {
                continue;
            }
            let s = |k: &str| a[k].as_str().map(str::to_string);
            spans.push((s("genkit:input"), s("genkit:output"), s("genkit:name")));
        }
    }
    assert!(spans.len() > 40, "the corpora hold model spans");
    spans
}

/// A request of `n` messages with every part kind the writers write (text, reasoning, tool
/// request and response, media, multi-byte and escaped text), roles in turn, and an answer.
fn history(n: usize) -> (String, String) {
    let roles = ["user", "model", "tool", "system"];
    let messages: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let role = roles[i % roles.len()];
            let content = match role {
                "model" => serde_json::json!([
                    {"reasoning": format!("thinking {i} \u{e9}\u{1F600}")},
                    {"text": format!("answer {i} \"quoted\"\n{}", "x".repeat(i * 7 % 300))},
                    {"toolRequest": {"name": "lookup", "ref": format!("call-{i}"), "input": {"q": i}}}
                ]),
                "tool" => serde_json::json!([
                    {"toolResponse": {"name": "lookup", "ref": format!("call-{}", i - 1), "output": {"rows": [i, "\u{6771}"]}}}
                ]),
                _ => serde_json::json!([
                    {"text": format!("question {i} {}", "\u{4e16}".repeat(i % 50))},
                    {"media": {"url": "https://example.com/a.png", "contentType": "image/png"}}
                ]),
            };
            serde_json::json!({"role": role, "content": content})
        })
        .collect();
    let input = serde_json::json!({"messages": messages, "config": {"temperature": 0.5}});
    let output = serde_json::json!({
        "message": {"role": "model", "content": [{"text": "done"}, {"toolRequest": {"name": "lookup", "input": {}}}]},
        "finishReason": "stop",
        "usage": {"inputTokens": 10, "outputTokens": 3}
    });
    (input.to_string(), output.to_string())
}

fn span<'a>(
    input: Option<&'a str>,
    output: Option<&'a str>,
    name: Option<&'a str>,
) -> SpanInput<'a> {
    SpanInput {
        subtype: Some("model"),
        name: name.or(Some("googleai/gemini-2.5-flash")),
        input,
        output,
        ..SpanInput::default()
    }
}

const MESSAGE_KEYS: [&str; 2] = ["gen_ai.input.messages", "gen_ai.output.messages"];

/// The writers' marks of each message attribute equal the scan's elements (under a cap small
/// enough that every array is marked: from half the cap, `MarkFor`).
fn check_marks(span: &SpanInput<'_>) -> usize {
    let options = Options {
        max_content_bytes: Some(64),
        ..Options::default()
    };
    let mapped = map(span, &options, &mut PriceCache::default(), None);
    let mut checked = 0;
    for key in MESSAGE_KEYS {
        let Some(Value::Str(text)) = mapped.get(key) else {
            continue;
        };
        let marks = mapped
            .elements
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, m)| m.clone());
        let scanned = top_level_elements(text).expect("memory");
        if scanned.is_empty() {
            assert!(marks.is_none(), "{key}: marks for an empty array");
            continue;
        }
        assert_eq!(marks.as_ref(), Some(&scanned), "{key} of {text}");
        checked += 1;
    }
    checked
}

#[test]
fn the_writers_marks_are_the_messages_on_every_corpus_span() {
    let spans = corpus_model_spans();
    let mut checked = 0;
    for (input, output, name) in &spans {
        checked += check_marks(&span(input.as_deref(), output.as_deref(), name.as_deref()));
    }
    assert!(checked > 40, "{checked} message attributes checked");
}

#[test]
fn the_writers_marks_are_the_messages_of_long_histories() {
    for n in [1, 2, 3, 5, 17, 64] {
        let (input, output) = history(n);
        assert_eq!(
            check_marks(&span(Some(&input), Some(&output), None)),
            2,
            "{n} messages"
        );
    }
}

/// With a cap, complete mode's messages are what the scan-based cap makes of the uncapped ones.
#[test]
fn a_capped_mapping_equals_capping_by_the_scan() {
    let (input, output) = history(64);
    let s = span(Some(&input), Some(&output), None);
    let uncapped = Mapper::new(Options {
        max_content_bytes: Some(usize::MAX),
        ..Options::default()
    })
    .map(&s);
    let Some(Value::Str(full)) = uncapped.get("gen_ai.input.messages") else {
        panic!("no input messages");
    };
    let mut dropped_somewhere = false;
    for max in [full.len() - 1, full.len() / 2, full.len() / 5, 2_000, 600] {
        let capped = Mapper::new(Options {
            max_content_bytes: Some(max),
            ..Options::default()
        })
        .map(&s);
        let expected = cap_messages(full, max).expect("caps");
        let got = capped.get("gen_ai.input.messages");
        assert_eq!(got, Some(&Value::Str(expected.json.clone())), "max {max}");
        let dropped = capped
            .get("genkit_for_maple.content.dropped_messages")
            .map(|v| match v {
                Value::Int(n) => *n as usize,
                other => panic!("{other:?}"),
            })
            .unwrap_or(0);
        assert_eq!(dropped, expected.dropped, "max {max}");
        dropped_somewhere |= dropped > 0;
    }
    assert!(dropped_somewhere);
}

#[test]
fn marks_that_do_not_fit_the_text_are_not_used() {
    let (input, output) = history(12);
    let mapped = map(
        &span(Some(&input), Some(&output), None),
        &Options::default(),
        &mut PriceCache::default(),
        None,
    );
    let Some(Value::Str(text)) = mapped.get("gen_ai.input.messages") else {
        panic!("no input messages");
    };
    let good = top_level_elements(text).expect("memory");
    let n = text.len();
    let wrong: Vec<Vec<(usize, usize)>> = vec![
        vec![],
        good[1..].to_vec(),
        good[..good.len() - 1].to_vec(),
        good.iter().map(|&(s, e)| (s + 1, e)).collect(),
        good.iter().map(|&(s, e)| (s, e + 1)).collect(),
        vec![(1, n + 5)],
        vec![(0, n)],
        vec![(1, n - 1), (1, n - 1)],
        vec![(usize::MAX - 1, usize::MAX)],
        good.iter().rev().copied().collect(),
    ];
    for max in [n / 2, 700] {
        let expected = cap_messages(text, max).expect("caps");
        for marks in &wrong {
            assert_eq!(
                cap_messages_in(text, max, Some(marks)).expect("caps"),
                expected,
                "{marks:?}"
            );
        }
        assert_eq!(
            cap_messages_in(text, max, Some(&good)).expect("caps"),
            expected
        );
    }
}

proptest! {
    /// Any marks at all: never a panic, and the answer fits the cap and parses (or is an error).
    #[test]
    fn any_marks_never_panic(
        n in 1usize..10,
        max in 0usize..3_000,
        marks in prop::collection::vec((0usize..4_000, 0usize..4_000), 0..12),
    ) {
        let (input, output) = history(n);
        let mapped = map(&span(Some(&input), Some(&output), None), &Options::default(), &mut PriceCache::default(), None);
        let Some(Value::Str(text)) = mapped.get("gen_ai.input.messages") else {
            return Ok(());
        };
        if let Ok(c) = cap_messages_in(text, max, Some(&marks)) {
            prop_assert!(c.json.len() <= max || c.json.len() == text.len() && text.len() <= max);
            prop_assert!(serde_json::from_str::<serde_json::Value>(&c.json).is_ok());
        }
    }
}
