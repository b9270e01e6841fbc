//! Property tests of the conversion core (issue 4): for any text, and for Genkit-shaped JSON and
//! every prefix of it, `map_model` / `map_tool_result` never panic, every JSON attribute written is
//! a valid JSON array, text that is not JSON is flagged, and clean Genkit JSON maps without problems.

use genkit_for_maple_core::genkit::Raw;
use genkit_for_maple_core::{map_model, map_tool_result, problem, Scalar, ToolResult};
use proptest::prelude::*;
use serde_json::{json, Value};

fn valid_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

fn check_invariants(input: Option<&str>, output: Option<&str>) -> u32 {
    let attrs = map_model(input, output);
    for text in [
        &attrs.input_messages,
        &attrs.system_instructions,
        &attrs.output_messages,
    ]
    .into_iter()
    .flatten()
    {
        let value: Value = serde_json::from_str(text).expect("written JSON parses");
        assert!(value.is_array());
    }
    for raw in attrs
        .finish_reasons
        .iter()
        .flatten()
        .chain(attrs.input_tokens.iter())
        .chain(attrs.output_tokens.iter())
    {
        assert!(valid_json(raw.get()));
        let _ = Scalar::of(*raw);
    }
    if let Some(input) = input {
        assert_eq!(
            attrs.problems & problem::INPUT_NOT_JSON != 0,
            !valid_json(input)
        );
    }
    if let Some(output) = output {
        assert_eq!(
            attrs.problems & problem::OUTPUT_NOT_JSON != 0,
            !valid_json(output)
        );
    }
    attrs.problems
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ]{0,12}",
        any::<String>(),
        Just("é 😀 \"q\" \\ \n\t".to_string()),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn part() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(|t| json!({ "text": t })),
        text().prop_map(|t| json!({ "reasoning": t })),
        (text(), json_value())
            .prop_map(|(n, i)| json!({ "toolRequest": { "name": n, "ref": "1", "input": i } })),
        (text(), json_value())
            .prop_map(|(n, o)| json!({ "toolResponse": { "name": n, "ref": "1", "output": o } })),
        Just(json!({ "media": { "url": "data:x", "contentType": "image/png" } })),
    ]
}

fn message() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("user"), Just("model"), Just("system"), Just("tool")],
        prop::collection::vec(part(), 0..4),
    )
        .prop_map(|(role, content)| json!({ "role": role, "content": content }))
}

fn request() -> impl Strategy<Value = Value> {
    prop::collection::vec(message(), 0..5).prop_map(|m| json!({ "messages": m, "config": {} }))
}

fn response() -> impl Strategy<Value = Value> {
    (
        message(),
        prop_oneof![Just("stop"), Just("length"), Just("")],
        any::<u32>(),
    )
        .prop_map(|(m, f, n)| {
            json!({ "message": m, "finishReason": f, "usage": { "inputTokens": n, "outputTokens": 1 } })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_text_never_panics(a in any::<String>(), b in any::<String>()) {
        check_invariants(Some(&a), Some(&b));
        check_invariants(None, Some(&a));
        let _ = map_tool_result(&a);
    }

    #[test]
    fn genkit_json_maps_cleanly_and_every_prefix_is_safe(req in request(), resp in response(), cut in 0.0f64..1.0) {
        let input = req.to_string();
        let output = resp.to_string();
        let problems = check_invariants(Some(&input), Some(&output));
        prop_assert_eq!(problems, 0);
        let attrs = map_model(Some(&input), Some(&output));
        let messages: Value = serde_json::from_str(attrs.input_messages.as_deref().unwrap()).unwrap();
        let non_system = req["messages"].as_array().unwrap().iter().filter(|m| m["role"] != "system").count();
        prop_assert_eq!(messages.as_array().unwrap().len(), non_system);
        prop_assert!(attrs.output_messages.is_some());
        // A prefix (on a char boundary) of the input and of the output.
        for text in [&input, &output] {
            let mut at = (text.len() as f64 * cut) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let prefix = &text[..at];
            check_invariants(Some(prefix), Some(prefix));
            let problems = map_model(Some(prefix), None).problems;
            prop_assert_eq!(problems, problem::INPUT_NOT_JSON);
        }
    }

    #[test]
    fn tool_results(value in json_value(), cut in 0.0f64..1.0) {
        let text = value.to_string();
        match map_tool_result(&text) {
            ToolResult::Text(s) => prop_assert_eq!(Value::from(s.as_ref()), value),
            // The JSON text as written (serde_json's own float parser is not round-trip exact).
            ToolResult::Json(j) => prop_assert_eq!(j, text.as_str()),
            other => prop_assert!(false, "{:?}", other),
        }
        let mut at = (text.len() as f64 * cut) as usize;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let prefix = &text[..at];
        let result = map_tool_result(prefix);
        prop_assert_eq!(matches!(result, ToolResult::Invalid), !valid_json(prefix));
    }
}

proptest! {
    /// Every integer of at most 15 digits reads as `str::parse` reads it (the fast path of
    /// `mapping::Scalar::of`), and a number written by serde_json reads back as itself.
    #[test]
    fn numbers_read_as_str_parse_reads_them(n in any::<i64>(), f in any::<f64>(), digits in 1usize..=17) {
        let cut = n % 10i64.pow(digits as u32);
        let text = cut.to_string();
        let raw = Raw::from_json(&text).unwrap();
        let want: f64 = text.parse().unwrap();
        match Scalar::of(raw) {
            Scalar::Num(v) => prop_assert_eq!(v.to_bits(), want.to_bits()),
            other => prop_assert!(false, "{text}: {other:?}"),
        }
        if f.is_finite() {
            let text = serde_json::to_string(&f).unwrap();
            let raw = Raw::from_json(&text).unwrap();
            match Scalar::of(raw) {
                Scalar::Num(v) => prop_assert_eq!(v.to_bits(), f.to_bits()),
                other => prop_assert!(false, "{text}: {other:?}"),
            }
        }
    }
}
