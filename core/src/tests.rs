//! Unit tests of the mapping rules, one rule or degradation case per test, with exact outputs.

use crate::mapping::{map_model, map_tool_result, problem, Scalar, ToolResult};
use std::borrow::Cow;

const OUT: &str = r#"{"message":{"role":"model","content":[{"text":"fine"}]},"finishReason":"stop","usage":{"inputTokens":10,"outputTokens":2}}"#;

fn raws(v: &Option<Vec<crate::genkit::Raw<'_>>>) -> Vec<String> {
    v.iter().flatten().map(|r| r.get().to_string()).collect()
}

#[test]
fn system_messages_become_instructions_and_model_becomes_assistant() {
    let input = r#"{"messages":[{"role":"system","content":[{"text":"Be terse."}]},{"role":"user","content":[{"text":"hi"}]},{"role":"model","content":[{"reasoning":"r"},{"toolRequest":{"name":"w","ref":"1","input":{"c":"P"}}}]},{"role":"tool","content":[{"toolResponse":{"name":"w","ref":"1","output":"sun"}}]}],"config":{"x":1}}"#;
    let a = map_model(Some(input), Some(OUT));
    assert_eq!(a.problems, 0);
    assert_eq!(
        a.system_instructions.as_deref(),
        Some(r#"[{"type":"text","content":"Be terse."}]"#)
    );
    assert_eq!(
        a.input_messages.as_deref(),
        Some(
            r#"[{"role":"user","parts":[{"type":"text","content":"hi"}]},{"role":"assistant","parts":[{"type":"reasoning","content":"r"},{"type":"tool_call","id":"1","name":"w","arguments":{"c":"P"}}]},{"role":"tool","parts":[{"type":"tool_call_response","id":"1","response":"sun"}]}]"#
        )
    );
    assert_eq!(
        a.output_messages.as_deref(),
        Some(
            r#"[{"role":"assistant","parts":[{"type":"text","content":"fine"}],"finish_reason":"stop"}]"#
        )
    );
    assert_eq!(raws(&a.finish_reasons), vec![r#""stop""#]);
    assert_eq!(a.input_tokens.map(|r| r.get()), Some("10"));
    assert_eq!(a.output_tokens.map(|r| r.get()), Some("2"));
}

#[test]
fn absent_or_null_messages_give_an_empty_list_and_no_instructions() {
    for input in [
        None,
        Some("{}"),
        Some(r#"{"messages":null}"#),
        Some("5"),
        Some("[]"),
        Some(r#""x""#),
    ] {
        let a = map_model(input, None);
        assert_eq!(a.input_messages.as_deref(), Some("[]"), "{input:?}");
        assert_eq!(a.system_instructions, None);
        assert_eq!(a.problems, 0);
    }
}

#[test]
fn media_and_unknown_parts_are_dropped_and_non_object_parts_too() {
    let input = r#"{"messages":[{"role":"user","content":[{"media":{"url":"data:x"}},5,"s",[],true,{"text":"t"},{"custom":{}}]}]}"#;
    let a = map_model(Some(input), None);
    assert_eq!(
        a.input_messages.as_deref(),
        Some(r#"[{"role":"user","parts":[{"type":"text","content":"t"}]}]"#)
    );
}

#[test]
fn present_null_values_are_kept_absent_values_are_left_out() {
    let input = r#"{"messages":[{"content":[{"text":null},{"toolRequest":{"name":"n"}},{"toolResponse":{"ref":null}}]}]}"#;
    let a = map_model(Some(input), None);
    assert_eq!(
        a.input_messages.as_deref(),
        Some(
            r#"[{"parts":[{"type":"text","content":null},{"type":"tool_call","name":"n"},{"type":"tool_call_response","id":null}]}]"#
        )
    );
}

#[test]
fn tool_parts_follow_javascript_truthiness() {
    // Falsy toolRequest values fall through to toolResponse; a truthy non-object gives a bare part.
    let input = r#"{"messages":[{"role":"user","content":[{"toolRequest":0,"toolResponse":"x"},{"toolRequest":"","reasoning":false},{"toolRequest":[1]},{"toolRequest":null}]}]}"#;
    let a = map_model(Some(input), None);
    assert_eq!(
        a.input_messages.as_deref(),
        Some(
            r#"[{"role":"user","parts":[{"type":"tool_call_response"},{"type":"reasoning","content":false},{"type":"tool_call"}]}]"#
        )
    );
}

#[test]
fn repeated_keys_keep_the_last_value_and_escaped_keys_match() {
    let input = r#"{"messages":[{"role":"user","content":[{"text":"a"}]}],"messages":[{"r\u006fle":"m\u006fdel","content":[{"te\u0078t":"b","text":"c"}]}]}"#;
    let a = map_model(Some(input), None);
    assert_eq!(
        a.input_messages.as_deref(),
        Some(r#"[{"role":"assistant","parts":[{"type":"text","content":"c"}]}]"#)
    );
}

#[test]
fn proto_and_integer_like_keys_are_plain_keys() {
    let input = r#"{"messages":[{"__proto__":{"role":"system"},"role":"user","1":2,"content":[{"__proto__":{"text":"no"},"text":"yes"}]}]}"#;
    let a = map_model(Some(input), None);
    assert_eq!(
        a.input_messages.as_deref(),
        Some(r#"[{"role":"user","parts":[{"type":"text","content":"yes"}]}]"#)
    );
}

#[test]
fn truncated_input_omits_input_attributes_only() {
    let a = map_model(
        Some(r#"{"messages":[{"role":"system","content":"#),
        Some(OUT),
    );
    assert_eq!(a.problems, problem::INPUT_NOT_JSON);
    assert_eq!(a.input_messages, None);
    assert_eq!(a.system_instructions, None);
    assert!(a.output_messages.is_some());
    assert_eq!(a.input_tokens.map(|r| r.get()), Some("10"));
}

#[test]
fn shapes_the_reference_throws_on_omit_the_input_attributes() {
    for input in [
        r#"{"messages":{"role":"user"}}"#,
        r#"{"messages":"abc"}"#,
        r#"{"messages":[null]}"#,
        r#"{"messages":[5]}"#,
        r#"{"messages":[[]]}"#,
        r#"{"messages":[{"role":"user"}]}"#,
        r#"{"messages":[{"role":"user","content":"hello"}]}"#,
        r#"{"messages":[{"role":"system","content":{}}]}"#,
        r#"{"messages":[{"role":"user","content":[null]}]}"#,
    ] {
        let a = map_model(Some(input), Some(OUT));
        assert_eq!(a.problems, problem::INPUT_SHAPE, "{input}");
        assert_eq!(a.input_messages, None, "{input}");
        assert_eq!(a.system_instructions, None, "{input}");
        assert_eq!(raws(&a.finish_reasons), vec![r#""stop""#], "{input}");
    }
}

#[test]
fn bad_output_message_keeps_finish_reasons_and_usage() {
    let a = map_model(
        None,
        Some(
            r#"{"message":{"role":"model","content":"x"},"finishReason":"stop","usage":{"inputTokens":1}}"#,
        ),
    );
    assert_eq!(a.problems, problem::OUTPUT_SHAPE);
    assert_eq!(a.output_messages, None);
    assert_eq!(raws(&a.finish_reasons), vec![r#""stop""#]);
    assert_eq!(a.input_tokens.map(|r| r.get()), Some("1"));
    assert!(a.output_tokens.is_none());
}

#[test]
fn falsy_finish_reasons_are_not_listed_but_kept_in_the_message() {
    let a = map_model(
        None,
        Some(r#"{"message":{"role":"model","content":[]},"finishReason":""}"#),
    );
    assert_eq!(
        a.output_messages.as_deref(),
        Some(r#"[{"role":"assistant","parts":[],"finish_reason":""}]"#)
    );
    assert!(a.finish_reasons.is_none());
    let a = map_model(None, Some(r#"{"message":{"role":"model","content":[]}}"#));
    assert_eq!(
        a.output_messages.as_deref(),
        Some(r#"[{"role":"assistant","parts":[]}]"#)
    );
}

#[test]
fn usage_values_of_any_type_are_kept_when_present() {
    let a = map_model(
        None,
        Some(r#"{"usage":{"inputTokens":null,"outputTokens":"7"}}"#),
    );
    assert_eq!(a.input_tokens.map(|r| r.get()), Some("null"));
    assert_eq!(a.output_tokens.map(|r| r.get()), Some(r#""7""#));
    for usage in ["5", "null", "[1]", r#""u""#] {
        let out = format!(r#"{{"usage":{usage}}}"#);
        let a = map_model(None, Some(&out));
        assert!(
            a.input_tokens.is_none() && a.output_tokens.is_none(),
            "{usage}"
        );
    }
}

#[test]
fn candidates_become_one_output_message_each_in_order() {
    let out = r#"{"candidates":[{"index":0,"message":{"role":"model","content":[{"text":"a"}]},"finishReason":"stop"},{"index":1},{"index":2,"message":null},{"index":3,"message":{"role":"model","content":[{"text":"b"}]},"finishReason":"length"},7],"usage":{"inputTokens":3}}"#;
    let a = map_model(None, Some(out));
    assert_eq!(a.problems, 0);
    assert_eq!(
        a.output_messages.as_deref(),
        Some(
            r#"[{"role":"assistant","parts":[{"type":"text","content":"a"}],"finish_reason":"stop"},{"role":"assistant","parts":[{"type":"text","content":"b"}],"finish_reason":"length"}]"#
        )
    );
    assert_eq!(raws(&a.finish_reasons), vec![r#""stop""#, r#""length""#]);
    assert_eq!(a.input_tokens.map(|r| r.get()), Some("3"));
}

#[test]
fn a_top_level_message_wins_over_candidates() {
    let out = r#"{"message":{"role":"model","content":[{"text":"top"}]},"finishReason":"stop","candidates":[{"message":{"role":"model","content":[{"text":"c"}]},"finishReason":"length"}]}"#;
    let a = map_model(None, Some(out));
    assert_eq!(
        a.output_messages.as_deref(),
        Some(
            r#"[{"role":"assistant","parts":[{"type":"text","content":"top"}],"finish_reason":"stop"}]"#
        )
    );
    assert_eq!(raws(&a.finish_reasons), vec![r#""stop""#]);
}

#[test]
fn empty_or_non_array_candidates_add_nothing() {
    for c in [
        "[]",
        "{}",
        "null",
        r#""x""#,
        "[{}]",
        r#"[{"finishReason":"stop"}]"#,
    ] {
        let out = format!(r#"{{"candidates":{c}}}"#);
        let a = map_model(None, Some(&out));
        assert_eq!(a.output_messages, None, "{c}");
        assert!(a.finish_reasons.is_none(), "{c}");
        assert_eq!(a.problems, 0, "{c}");
    }
}

#[test]
fn output_that_is_not_json_omits_every_output_attribute() {
    let a = map_model(None, Some(r#"{"message":{"role":"mo"#));
    assert_eq!(a.problems, problem::OUTPUT_NOT_JSON);
    assert!(a.output_messages.is_none() && a.finish_reasons.is_none() && a.input_tokens.is_none());
}

#[test]
fn deep_nesting_in_passthrough_values_does_not_overflow() {
    let depth = 100_000;
    let input = format!(
        r#"{{"messages":[{{"role":"model","content":[{{"toolRequest":{{"name":"x","input":{}{}}}}}]}}]}}"#,
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let a = map_model(Some(&input), None);
    assert_eq!(a.problems, 0);
    assert!(a.input_messages.unwrap().len() > 2 * depth);
}

#[test]
fn tool_results() {
    assert_eq!(
        map_tool_result(r#""\"sunny\"""#),
        ToolResult::Text(Cow::Owned("\"sunny\"".into()))
    );
    assert_eq!(
        map_tool_result(r#""sunny""#),
        ToolResult::Text(Cow::Borrowed("sunny"))
    );
    assert_eq!(
        map_tool_result(r#""a\nb""#),
        ToolResult::Text(Cow::Owned("a\nb".into()))
    );
    assert_eq!(
        map_tool_result(r#" {"a":1} "#),
        ToolResult::Json(r#"{"a":1}"#)
    );
    assert_eq!(map_tool_result("null"), ToolResult::Json("null"));
    assert_eq!(map_tool_result("not json"), ToolResult::Invalid);
    assert_eq!(map_tool_result(r#""\ud83d""#), ToolResult::NeedsJs);
}

#[test]
fn scalars_follow_json_parse() {
    let raw = |s: &str| {
        serde_json::from_str::<&serde_json::value::RawValue>(s)
            .unwrap()
            .get()
            .to_string()
    };
    let check = |s: &str, want: Scalar<'_>| {
        let text = raw(s);
        let value: crate::genkit::Raw<'_> = serde_json::from_str(&text).unwrap();
        assert_eq!(Scalar::of(value), want, "{s}");
    };
    check("12", Scalar::Num(12.0));
    check("12345678901234567890", Scalar::Num(12345678901234567890.0));
    check("1e400", Scalar::Num(f64::INFINITY));
    check(r#""stop""#, Scalar::Str(Cow::Borrowed("stop")));
    check(r#""st\u006fp""#, Scalar::Str(Cow::Owned("stop".into())));
    check("true", Scalar::Bool(true));
    check("null", Scalar::Null);
    check(r#"{"a":1}"#, Scalar::Json(r#"{"a":1}"#));
    check(r#""\udc00""#, Scalar::Json(r#""\udc00""#));
}

#[test]
fn small_integers_read_as_str_parse_reads_them() {
    use crate::mapping::small_integer;
    for text in [
        "0",
        "-0",
        "7",
        "250",
        "-41",
        "999999999999999",
        "-999999999999999",
        "1024",
    ] {
        let fast = small_integer(text).expect(text);
        let parsed: f64 = text.parse().unwrap();
        assert_eq!(fast.to_bits(), parsed.to_bits(), "{text}");
    }
    // Not small integers: left to str::parse (and Scalar::of gives what it gives).
    for text in [
        "",
        "-",
        "1.5",
        "1e3",
        "1E3",
        "-1e-3",
        "0.0",
        "1000000000000000",
        "12a",
        "--1",
        "1-",
        " 1",
    ] {
        assert_eq!(small_integer(text), None, "{text:?}");
    }
    for (text, want) in [("1e3", 1000.0), ("1000000000000000", 1e15), ("-2.5", -2.5)] {
        let raw: crate::genkit::Raw<'_> = serde_json::from_str(text).unwrap();
        assert!(
            matches!(Scalar::of(raw), Scalar::Num(n) if n == want),
            "{text}"
        );
    }
}

#[test]
fn hex_ids_from_text_and_from_code_units() {
    use crate::span::{parse_hex, parse_hex_units};
    assert_eq!(parse_hex::<2>("0aFf"), Some([0x0a, 0xff]));
    assert_eq!(parse_hex::<2>("0aF"), None, "too short");
    assert_eq!(parse_hex::<2>("0aFf0"), None, "too long");
    assert_eq!(parse_hex::<2>("0aFg"), None, "not a hex digit");
    let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
    assert_eq!(
        parse_hex_units::<2, u16>(&units("0aFf")),
        Some([0x0a, 0xff])
    );
    // A unit whose low byte is a hex digit is not one ('İ' is U+0130, low byte '0').
    assert_eq!(parse_hex_units::<1, u16>(&[0x0130, 0x30]), None);
    assert_eq!(parse_hex_units::<1, u16>(&[0xff10, 0x30]), None);
    let id = "0123456789abcdef0123456789ABCDEF";
    assert_eq!(
        parse_hex_units::<16, u16>(&units(id)),
        parse_hex::<16>(id),
        "the two readings agree"
    );
    assert_eq!(
        parse_hex::<16>(id).map(u128::from_be_bytes),
        Some(0x0123456789abcdef0123456789abcdef)
    );
    // Every code unit, in either place of a pair and beside a valid or an invalid digit: a
    // digit exactly where `char::to_digit(16)` reads one.
    let digit = |u: u32| char::from_u32(u).and_then(|c| c.to_digit(16));
    for u in 0..=u32::from(u16::MAX) {
        let unit = u16::try_from(u).unwrap();
        for (other, other_value) in [(u16::from(b'7'), Some(7)), (u16::from(b'g'), None)] {
            let want = digit(u).zip(other_value);
            assert_eq!(
                parse_hex_units::<1, u16>(&[unit, other]),
                want.map(|(d, o)| [(d * 16 + o) as u8]),
                "{u:#x} first"
            );
            assert_eq!(
                parse_hex_units::<1, u16>(&[other, unit]),
                want.map(|(d, o)| [(o * 16 + d) as u8]),
                "{u:#x} second"
            );
        }
    }
}
