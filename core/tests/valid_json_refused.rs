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
