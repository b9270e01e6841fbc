//! Fuzz target on the conversion core: `map_model`, `map_tool_result` and `Scalar::of` on
//! arbitrary bytes (`otlp::decode_spans` has its own target, `otlp_decode`). The input is split at the first NUL byte into
//! `genkit:input` and `genkit:output` (lossy UTF-8, as napi hands the core well-formed UTF-8).
//!
//! Invariants: no panic; every JSON attribute written is a valid JSON array; a span flagged
//! `NEEDS_JS` gets nothing written natively; text that is not JSON is flagged as such; every raw
//! value is valid JSON; `map_model_scrubbed` (secrets scrubbed in the writers' pass, issue 11)
//! equals `map_model` with `Scrubber::json` applied to each message attribute afterwards.
#![no_main]

use genkit_for_maple_core::scrub::Scrubber;
use genkit_for_maple_core::{
    map_model, map_model_scrubbed, map_tool_result, problem, Scalar, ToolResult,
};
use libfuzzer_sys::fuzz_target;
use serde::de::IgnoredAny;
use std::sync::OnceLock;

/// Compiled once (as once per processor).
fn scrubber() -> &'static Scrubber {
    static SCRUBBER: OnceLock<Scrubber> = OnceLock::new();
    SCRUBBER.get_or_init(Scrubber::with_defaults)
}

/// `text` scrubbed after the fact, as the content rules did before the writers scrubbed.
fn post_pass(text: &Option<String>) -> Option<String> {
    text.as_ref()
        .map(|t| scrubber().json(t).expect("no allocation fails here").into_owned())
}

fn is_json(text: &str) -> bool {
    serde_json::from_str::<IgnoredAny>(text).is_ok()
}

fn json_array(text: &Option<String>) {
    if let Some(text) = text {
        assert!(text.starts_with('[') && text.ends_with(']'), "{text}");
        assert!(is_json(text), "written JSON is invalid: {text}");
    }
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let input = String::from_utf8_lossy(&data[..split]);
    let output = String::from_utf8_lossy(data.get(split + 1..).unwrap_or_default());

    for (i, o) in [
        (Some(&*input), Some(&*output)),
        (None, Some(&*output)),
        (Some(&*output), None),
    ] {
        let attrs = map_model(i, o);
        let scrubbed = map_model_scrubbed(i, o, Some(scrubber()));
        assert_eq!(scrubbed.problems, attrs.problems);
        assert_eq!(scrubbed.input_messages, post_pass(&attrs.input_messages));
        assert_eq!(scrubbed.system_instructions, post_pass(&attrs.system_instructions));
        assert_eq!(scrubbed.output_messages, post_pass(&attrs.output_messages));
        json_array(&attrs.input_messages);
        json_array(&attrs.system_instructions);
        json_array(&attrs.output_messages);
        if attrs.problems & problem::NEEDS_JS != 0 {
            assert!(attrs.input_messages.is_none() && attrs.output_messages.is_none());
            assert!(attrs.finish_reasons.is_none() && attrs.input_tokens.is_none());
        }
        if let Some(i) = i {
            assert_eq!(attrs.problems & problem::INPUT_NOT_JSON != 0, !is_json(i));
        }
        if let Some(o) = o {
            assert_eq!(attrs.problems & problem::OUTPUT_NOT_JSON != 0, !is_json(o));
        }
        let raws = attrs
            .finish_reasons
            .iter()
            .flatten()
            .chain(attrs.input_tokens.iter())
            .chain(attrs.output_tokens.iter());
        for raw in raws {
            assert!(is_json(raw.get()));
            if let Scalar::Json(text) = Scalar::of(*raw) {
                assert!(is_json(text));
            }
        }
    }

    for text in [&*input, &*output] {
        match map_tool_result(text) {
            ToolResult::Invalid => assert!(!is_json(text)),
            ToolResult::Json(json) => assert!(is_json(json)),
            ToolResult::Text(_) | ToolResult::NeedsJs | ToolResult::OutOfMemory => {
                assert!(is_json(text))
            }
        }
    }
});
