//! Regression (issue 4): valid JSON that serde_json refuses in a Genkit shape position (a number
//! beyond the f64 range, a string with a lone surrogate escape) is not "not JSON": the span goes
//! to the JavaScript mapping (`NEEDS_JS`) with nothing written natively, at every level.

use genkit_for_maple_core::{map_model, problem};

const IN: &str = r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
const OUT: &str = r#"{"message":{"role":"model","content":[{"text":"x"}]},"finishReason":"stop"}"#;

fn refused_values() -> [&'static str; 4] {
    ["1e400", "-1e999", r#""\ud800""#, r#""a\udc00b""#]
}

#[test]
fn input_positions_go_to_javascript() {
    for v in refused_values() {
        let inputs = [
            v.to_string(),
            format!(r#"{{"messages":{v}}}"#),
            format!(r#"{{"messages":[{v}]}}"#),
            format!(r#"{{"messages":[{{"role":"user","content":{v}}}]}}"#),
            format!(r#"{{"messages":[{{"role":"user","content":[{v}]}}]}}"#),
            format!(r#"{{"messages":[{{"role":"user","content":[{{"toolRequest":{v}}}]}}]}}"#),
            format!(r#"{{"messages":[{{"role":"user","content":[{{"toolResponse":{v}}}]}}]}}"#),
        ];
        for input in &inputs {
            let attrs = map_model(Some(input), Some(OUT));
            assert_eq!(
                attrs.problems & problem::NEEDS_JS,
                problem::NEEDS_JS,
                "{input}"
            );
            assert_eq!(attrs.problems & problem::INPUT_NOT_JSON, 0, "{input}");
            assert!(attrs.input_messages.is_none() && attrs.output_messages.is_none());
            assert!(attrs.finish_reasons.is_none() && attrs.input_tokens.is_none());
        }
    }
}

#[test]
fn output_positions_go_to_javascript() {
    for v in refused_values() {
        let outputs = [
            v.to_string(),
            format!(r#"{{"message":{v},"finishReason":"stop"}}"#),
            format!(r#"{{"message":{{"role":"model","content":{v}}}}}"#),
            format!(r#"{{"message":{{"role":"model","content":[{v}]}}}}"#),
            format!(r#"{{"usage":{v}}}"#),
            format!(r#"{{"candidates":{v}}}"#),
            format!(r#"{{"candidates":[{v}]}}"#),
            format!(r#"{{"candidates":[{{"message":{v}}}]}}"#),
        ];
        for output in &outputs {
            let attrs = map_model(Some(IN), Some(output));
            assert_eq!(
                attrs.problems & problem::NEEDS_JS,
                problem::NEEDS_JS,
                "{output}"
            );
            assert_eq!(attrs.problems & problem::OUTPUT_NOT_JSON, 0, "{output}");
            assert!(attrs.input_messages.is_none(), "nothing written natively");
        }
    }
}

#[test]
fn truncated_text_is_still_not_json() {
    let cut = &IN[..IN.len() - 3];
    assert_eq!(
        map_model(Some(cut), Some(OUT)).problems,
        problem::INPUT_NOT_JSON
    );
    let cut = &OUT[..OUT.len() - 1];
    let attrs = map_model(Some(IN), Some(cut));
    assert_eq!(attrs.problems, problem::OUTPUT_NOT_JSON);
    assert!(attrs.input_messages.is_some());
}

#[test]
fn refused_values_in_raw_positions_stay_native() {
    // Raw positions (text, tool input, usage numbers) are copied, not decoded: no fallback needed.
    let input = r#"{"messages":[{"role":"user","content":[{"text":"\ud800"},{"toolRequest":{"input":1e400}}]}]}"#;
    let output =
        r#"{"message":{"role":"model","content":[{"text":"x"}]},"usage":{"inputTokens":1e400}}"#;
    let attrs = map_model(Some(input), Some(output));
    assert_eq!(attrs.problems, 0);
    assert_eq!(
        attrs.input_messages.as_deref(),
        Some(
            r#"[{"role":"user","parts":[{"type":"text","content":"\ud800"},{"type":"tool_call","arguments":1e400}]}]"#
        )
    );
    assert_eq!(attrs.input_tokens.map(|r| r.get()), Some("1e400"));
}

/// Found by cargo fuzz: a raw control character inside an object key was accepted (serde_json's
/// byte reading of keys does not validate), so text `JSON.parse` rejects was mapped as JSON.
#[test]
fn raw_control_character_in_a_key_is_not_json() {
    for c in ['\n', '\t', '\u{0}', '\u{1f}'] {
        let input = format!(r#"{{"messages":[],"a{c}b":1}}"#);
        let attrs = map_model(Some(&input), Some(OUT));
        assert_eq!(attrs.problems, problem::INPUT_NOT_JSON, "{input:?}");
        assert!(attrs.input_messages.is_none());
        let output =
            format!(r#"{{"messa{c}ge":{{"role":"model","content":[]}},"finishReason":"stop"}}"#);
        let attrs = map_model(Some(IN), Some(&output));
        assert_eq!(attrs.problems, problem::OUTPUT_NOT_JSON, "{output:?}");
        assert!(attrs.finish_reasons.is_none() && attrs.output_messages.is_none());
        // Every level: message, part, tool payload, usage, candidate keys.
        for output in [
            format!(r#"{{"message":{{"ro{c}le":"model","content":[]}}}}"#),
            format!(r#"{{"message":{{"role":"model","content":[{{"te{c}xt":"a"}}]}}}}"#),
            format!(
                r#"{{"message":{{"role":"model","content":[{{"toolRequest":{{"na{c}me":"a"}}}}]}}}}"#
            ),
            format!(r#"{{"usage":{{"in{c}putTokens":1}}}}"#),
            format!(r#"{{"candidates":[{{"mess{c}age":null}}]}}"#),
        ] {
            assert_eq!(
                map_model(None, Some(&output)).problems,
                problem::OUTPUT_NOT_JSON,
                "{output:?}"
            );
        }
    }
}

#[test]
fn escaped_control_characters_and_lone_surrogates_in_keys_are_json() {
    // `\n` escaped in a key is JSON: mapped natively. A lone surrogate escape in a key: JavaScript.
    let input = r#"{"a\nb":1,"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
    assert_eq!(map_model(Some(input), None).problems, 0);
    let input = r#"{"\ud800":1,"messages":[]}"#;
    assert_eq!(map_model(Some(input), None).problems, problem::NEEDS_JS);
    // Keys compared after unescaping: "\u006dessages" is "messages".
    let input = r#"{"\u006dessages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
    assert!(map_model(Some(input), None)
        .input_messages
        .unwrap()
        .contains("hi"));
}
