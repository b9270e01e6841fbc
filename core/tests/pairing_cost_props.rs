//! Property tests of rule 5 (tool call id pairing) and rule 2 (cost) of issue 10.
//!
//! Pairing: for any model answer (tool names, inputs with arbitrary key order and number
//! spelling, refs, duplicates), tool spans ending in any order get exactly the refs of their own
//! requests, each ref at most once, calls with equal name and input get their group's refs in end
//! order, and a span whose input or name was not asked for gets none.
//! Cost: for any counts, the price is `None` or a finite non-negative number, never counts a token
//! twice (moving tokens from the uncached input to the cache never costs more), and grows with
//! the totals.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use genkit_for_maple_core::cost::{cost_usd_at, UsageCounts};
use genkit_for_maple_core::pairing::{SpanKey, ToolCallPairing};
use proptest::prelude::*;
use serde_json::{Map, Value};

const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "b7ad6b7169203331";

fn key(span: &str) -> SpanKey {
    SpanKey::from_hex(TRACE, span).expect("hex ids")
}

/// A small JSON value; objects get their keys in the order given.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        "[a-zé\"\\\\ ]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The same value written another way: object keys reversed, integers as `n.0`, whitespace.
fn respell(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .rev()
                .map(|(k, v)| {
                    format!(
                        " {} : {}",
                        serde_json::to_string(k).unwrap_or_default(),
                        respell(v)
                    )
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(a) => format!(
            "[ {} ]",
            a.iter().map(respell).collect::<Vec<_>>().join(" , ")
        ),
        Value::Number(n) if n.is_i64() => format!("{}.0", n),
        other => other.to_string(),
    }
}

fn answer(requests: &[(String, String, Value)]) -> String {
    let parts: Vec<Value> = requests
        .iter()
        .map(|(name, reference, input)| {
            let mut req = Map::new();
            req.insert("name".into(), Value::String(name.clone()));
            req.insert("ref".into(), Value::String(reference.clone()));
            req.insert("input".into(), input.clone());
            let mut part = Map::new();
            part.insert("toolRequest".into(), Value::Object(req));
            Value::Object(part)
        })
        .collect();
    serde_json::json!({"message": {"role": "model", "content": parts}, "finishReason": "stop"})
        .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_tool_span_gets_its_own_ref_or_none(
        requests in prop::collection::vec(("[ab]", json_value()), 1..6),
        order in Just(()).prop_perturb(|_, mut rng| { let mut v: Vec<usize> = (0..6).collect(); for i in (1..v.len()).rev() { let j = (rng.next_u32() as usize) % (i + 1); v.swap(i, j); } v }),
        stranger in json_value(),
    ) {
        let now = Instant::now();
        let requests: Vec<(String, String, Value)> = requests
            .into_iter()
            .enumerate()
            .map(|(i, (name, input))| (name, format!("call_{i}"), input))
            .collect();
        let mut p = ToolCallPairing::new();
        prop_assert_eq!(p.record_model_output(key(PARENT), &answer(&requests), now), requests.len());

        // A span asking for something no request asked: no id (and nothing consumed).
        let asked = |name: &str, v: &Value| requests.iter().any(|(n, _, i)| n == name && i == v);
        if !asked("a", &stranger) {
            prop_assert_eq!(p.tool_call_id(key(PARENT), "a", Some(&stranger.to_string()), now), None);
        }
        prop_assert_eq!(p.tool_call_id(key(PARENT), "zzz", Some(&requests[0].2.to_string()), now), None);

        // The tool spans end in a random order, their inputs spelled differently.
        let mut given: HashMap<String, usize> = HashMap::new();
        let mut seen_per_group: HashMap<(String, String), Vec<String>> = HashMap::new();
        for &i in order.iter().filter(|&&i| i < requests.len()) {
            let (name, _, input) = &requests[i];
            let id = p.tool_call_id(key(PARENT), name, Some(&respell(input)), now);
            let id = id.expect("a requested call gets an id");
            // The id belongs to a request with the same name and an equal input.
            let k: usize = id.trim_start_matches("call_").parse().expect("an id we issued");
            prop_assert_eq!(&requests[k].0, name);
            prop_assert_eq!(&requests[k].2, input);
            *given.entry(id.clone()).or_default() += 1;
            seen_per_group.entry((name.clone(), input.to_string())).or_default().push(id);
        }
        prop_assert!(given.values().all(|&n| n == 1), "each ref once: {:?}", given);
        prop_assert_eq!(given.len(), requests.len());
        // Equal calls: the group's refs in request order.
        for ids in seen_per_group.values() {
            let mut sorted = ids.clone();
            sorted.sort_by_key(|id| id.trim_start_matches("call_").parse::<usize>().unwrap_or(usize::MAX));
            prop_assert_eq!(ids, &sorted);
        }
        prop_assert_eq!(p.pending(), 0);
    }

    #[test]
    fn the_state_stays_within_its_cap(
        answers in prop::collection::vec((0u64..50, 1usize..8), 1..80),
        cap in 1usize..40,
    ) {
        let t0 = Instant::now();
        let mut p = ToolCallPairing::with_limits(cap, Duration::from_secs(60));
        for (i, (parent, n)) in answers.iter().enumerate() {
            let requests: Vec<(String, String, Value)> =
                (0..*n).map(|k| ("t".to_string(), format!("r{i}_{k}"), Value::from(k as i64))).collect();
            p.record_model_output(key(&format!("{parent:016x}")), &answer(&requests), t0 + Duration::from_millis(i as u64));
            prop_assert!(p.pending() <= cap, "{} > {}", p.pending(), cap);
        }
        // Everything is gone once the trace's root ends.
        p.span_ended(key("ffffffffffffffff"), true);
        prop_assert_eq!(p.pending(), 0);
    }

    #[test]
    fn cost_is_finite_non_negative_and_prices_each_token_once(
        input in 0u64..2_000_000,
        read_share in 0u64..=100,
        write_share in 0u64..=100,
        output in 0u64..100_000,
        reasoning_share in 0u64..=100,
        model in prop::sample::select(vec![
            ("googleai", "gemini-2.5-flash"), ("googleai", "gemini-2.5-pro"), ("anthropic", "claude-sonnet-4-5"),
            ("anthropic", "claude-haiku-4-5"), ("openai", "gpt-4o"), ("openai", "gpt-5"), ("deepseek", "deepseek-chat"),
        ]),
    ) {
        let at: SystemTime = UNIX_EPOCH + Duration::from_secs(1_796_040_000);
        let read = input * read_share / 100;
        let write = (input - read) * write_share / 100;
        let usage = UsageCounts {
            input_tokens: Some(input),
            output_tokens: Some(output),
            cache_read_input_tokens: Some(read),
            cache_write_input_tokens: Some(write),
            cache_write_1h_input_tokens: None,
            reasoning_output_tokens: Some(output * reasoning_share / 100),
        };
        let (provider, name) = model;
        let price = cost_usd_at(provider, name, &usage, at).expect("a known model is priced");
        prop_assert!(price.is_finite() && price >= 0.0);
        // No cache: every input token at the input rate; cache rates are never above it.
        let uncached = UsageCounts { cache_read_input_tokens: Some(0), cache_write_input_tokens: Some(0), ..usage };
        let full = cost_usd_at(provider, name, &uncached, at).expect("priced");
        if write == 0 {
            prop_assert!(price <= full + 1e-12, "cache reads cost more than uncached input: {} > {}", price, full);
        }
        // One more output token never costs less.
        let more = UsageCounts { output_tokens: Some(output + 1), ..usage };
        prop_assert!(cost_usd_at(provider, name, &more, at).expect("priced") >= price);
    }
}
