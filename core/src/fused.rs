//! The fused mapping of the native OTLP exporter (issue 8, item 3): a Genkit span's `gen_ai.*`
//! attributes written straight into its protobuf [`Span`] while the request is encoded, from the
//! `genkit:*` attributes the exporter's reader already copied out of JavaScript, with the one
//! [`Mapper`] of [`crate::span`] (no second copy of the rules).
//!
//! What the processor (`js/processor.js` + `js/complete.js` + the napi `Mapper`) gives a span, the
//! fused mapping gives it here, and the request must equal the official serializer's request for
//! the processor's span, field for field:
//!
//! - the same [`SpanInput`]: subtype, `genkit:name` (flows and agents: `String(value)`, so
//!   `"undefined"` when absent), `genkit:input` / `genkit:output` when strings, the conversation
//!   id, the status, the first `exception` event's type and stack trace, the ids;
//! - the attributes written as the official encoder writes the JavaScript values the processor
//!   sets ([`any_value`]): numbers as `int_value` when integral ([`crate::encode::number_value`]),
//!   `null` as an empty `AnyValue`, arrays as `ArrayValue`; a key that exists is overwritten in
//!   place, a new key is appended (the processor assigns into the attribute object:
//!   `attrs[key] = value`, no attribute count limit, no dropped count);
//! - the tool call id pairing state advanced in the same order (the caller feeds spans in end
//!   order), and a local root span frees its trace's state as `js/pairing.js` does.
//!
//! Whatever only JavaScript can reproduce exactly answers [`Fused::NeedsJs`] before anything is
//! written or any state is changed: the core's own [`problem::NEEDS_JS`] (lone surrogate escapes,
//! `1e400`, ...), a [`Value::Json`] (the processor writes `JSON.parse(text)`), a `genkit:name` or
//! conversation id that is not a plain value, a `genkit:input`/`genkit:output` above the hand-off
//! size. The caller then runs the processor itself on a copy of that span's attributes.

use crate::encode::number_value;
use crate::encode::proto::common::v1::{any_value, AnyValue, ArrayValue, KeyValue};
use crate::encode::proto::trace::v1::Span;
use crate::problem;
use crate::span::{keys, Mapper, Mode, OtherInput, SpanInput, Status, Value};

/// `genkit:input`.
pub const GENKIT_INPUT: &str = "genkit:input";
/// `genkit:output`.
pub const GENKIT_OUTPUT: &str = "genkit:output";
const SUBTYPE: &str = "genkit:metadata:subtype";
const NAME: &str = "genkit:name";
const CONVERSATION_ID: &str = "genkit:metadata:conversationId";
const SESSION_ID: &str = "genkit:metadata:agent:sessionId";

/// The outcome of [`map_span`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fused {
    /// Mapped (or nothing to map); the problem flags the processor would report.
    Mapped(u32),
    /// Nothing written, no state changed: the processor must map this span (see the module doc).
    NeedsJs,
}

/// `AnyValue` with a string.
fn string_of(kv: &KeyValue) -> Option<&str> {
    match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s),
        _ => None,
    }
}

/// What a `genkit:input` that is not a string is ([`OtherInput`]); `None` for an empty
/// `AnyValue` (a JavaScript `null` or `undefined`).
fn other_of(kv: &KeyValue) -> Option<OtherInput> {
    Some(match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(_) => return None,
        any_value::Value::IntValue(i) => OtherInput::Number(*i as f64),
        any_value::Value::DoubleValue(d) => OtherInput::Number(*d),
        any_value::Value::BoolValue(b) => OtherInput::Bool(*b),
        _ => OtherInput::Other,
    })
}

/// The attribute `key`, if present.
fn find<'s>(attributes: &'s [KeyValue], key: &str) -> Option<&'s KeyValue> {
    attributes.iter().find(|kv| kv.key == key)
}

/// The UTF-16 length of `s` exceeds `units` (the processor's reader copies no string longer than
/// its hand-off size; the exporter's reader replaced lone surrogates by U+FFFD, one unit each, so
/// the count is the JavaScript string's).
fn longer_than(s: &str, units: usize) -> bool {
    s.len() > units && s.chars().map(char::len_utf16).sum::<usize>() > units
}

/// The `AnyValue` the official encoder writes for the JavaScript value the processor creates from
/// `value` (`js_value` of `src/seam.rs`); `None` for [`Value::Json`].
pub fn any_value(value: &Value<'_>) -> Option<AnyValue> {
    let v = match value {
        Value::Str(s) => any_value::Value::StringValue(s.to_string()),
        // The processor creates a JavaScript number (`napi_create_double(i as f64)`).
        Value::Int(i) => return Some(number_value(*i as f64)),
        Value::Double(d) => return Some(number_value(*d)),
        Value::Bool(b) => any_value::Value::BoolValue(*b),
        Value::Null => return Some(AnyValue { value: None }),
        Value::Array(items) => {
            let mut values = Vec::new();
            values.try_reserve_exact(items.len()).ok()?;
            for item in items {
                values.push(any_value(item)?);
            }
            any_value::Value::ArrayValue(ArrayValue { values })
        }
        Value::Json(_) => return None,
    };
    Some(AnyValue { value: Some(v) })
}

/// Whether the span is its trace's local root (`isLocalRoot` of `js/pairing.js`): no parent, or a
/// remote one (`IS_REMOTE`, 0x200, in the span's flags).
fn local_root(span: &Span) -> bool {
    span.parent_span_id.is_empty() || span.flags & 0x200 != 0
}

/// Maps one span in place with `mapper`, as the processor would map it before the official
/// encoder runs (module doc). `handoff_units`: the processor's hand-off size in UTF-16 code units.
/// Never panics on any input.
pub fn map_span(mapper: &mut Mapper, span: &mut Span, handoff_units: usize) -> Fused {
    let mode = mapper.options().mode;
    let attrs = &span.attributes;
    // The processor maps when `genkit:metadata:subtype` is not `undefined`; only strings route.
    let subtype = find(attrs, SUBTYPE).and_then(string_of);
    let routed = match (mode, subtype) {
        (_, Some("flow" | "agent" | "model" | "tool")) => subtype,
        (Mode::Complete, Some("tool.v2")) => subtype,
        _ => None,
    };
    let mut problems = 0;
    if let Some(subtype) = routed {
        let agent = matches!(subtype, "flow" | "agent");
        // `String(attrs["genkit:name"])` for flows and agents (`"undefined"` when absent); model
        // and tool spans pass `undefined` when absent. Other types: only JavaScript's `String`.
        let name = match find(attrs, NAME) {
            None if agent || mode == Mode::Reference => Some("undefined"),
            None => None,
            Some(kv) => match string_of(kv) {
                Some(s) => Some(s),
                None => return Fused::NeedsJs,
            },
        };
        // `attrs[conversationId] ?? attrs[sessionId]`, copied as it is; an empty `AnyValue` may
        // have been `null` or `undefined` (which `??` skips): JavaScript decides.
        let mut conversation: Option<&AnyValue> = None;
        if agent {
            for key in [CONVERSATION_ID, SESSION_ID] {
                if let Some(kv) = find(attrs, key) {
                    match &kv.value {
                        Some(v) if v.value.is_some() => {
                            conversation = Some(v);
                            break;
                        }
                        _ => return Fused::NeedsJs,
                    }
                }
            }
        }
        let mut input = None;
        let mut output = None;
        // `genkit:input` when it is not a string (complete mode; OTLP has no null/undefined: an
        // empty `AnyValue` is absent), and its `AnyValue`, which a number or a boolean keeps.
        let mut other_input = None;
        let mut other_value: Option<&AnyValue> = None;
        if !agent {
            for (key, slot) in [(GENKIT_INPUT, &mut input), (GENKIT_OUTPUT, &mut output)] {
                if let Some(kv) = find(attrs, key) {
                    match string_of(kv) {
                        Some(s) if longer_than(s, handoff_units) => return Fused::NeedsJs,
                        Some(s) => *slot = Some(s),
                        // The reference path reads any value in JavaScript; complete mode's
                        // reader treats a non-string as absent.
                        None if mode == Mode::Reference && kv.value.is_some() => {
                            return Fused::NeedsJs
                        }
                        None if key == GENKIT_INPUT => {
                            other_input = other_of(kv);
                            other_value = kv.value.as_ref();
                        }
                        None => {}
                    }
                }
            }
        }
        let status = Status::from_code(span.status.as_ref().map_or(0, |s| s.code.max(0) as u32));
        // `exception.type` / `exception.stacktrace` of the first `exception` event (strings).
        let (mut exception_type, mut exception_stacktrace) = (None, None);
        if status == Status::Error {
            if let Some(event) = span.events.iter().find(|e| e.name == "exception") {
                exception_type = find(&event.attributes, "exception.type").and_then(string_of);
                exception_stacktrace =
                    find(&event.attributes, "exception.stacktrace").and_then(string_of);
            }
        }
        let input = SpanInput {
            subtype: Some(subtype),
            name,
            input,
            other_input,
            output,
            // A placeholder: the attribute's own `AnyValue` is written (below).
            conversation_id: conversation.map(|_| Value::Null),
            status,
            exception_type,
            exception_stacktrace,
            trace_id: span.trace_id.as_slice().try_into().ok(),
            span_id: span.span_id.as_slice().try_into().ok(),
            parent_span_id: span.parent_span_id.as_slice().try_into().ok(),
            // The processor passes `span.endTime`; the request holds it converted the same way.
            end_time_unix_nano: Some(span.end_time_unix_nano),
            // The request's strings are UTF-8 already.
            record_copies: false,
            narrowed: None,
        };
        let mapped = match (mode, agent) {
            // Flows and agents in complete mode take the processor's JavaScript fast path, which
            // does not feed the pairing state: the rules without the state.
            // Flows and agents price nothing: an empty cache (two empty vectors, no allocation).
            (Mode::Complete, true) => crate::complete::map(
                &input,
                mapper.options(),
                &mut crate::cost::PriceCache::default(),
                None,
            ),
            _ => mapper.map(&input),
        };
        if mapped.problems & problem::NEEDS_JS != 0 {
            return Fused::NeedsJs;
        }
        problems = mapped.problems;
        // Every value converted before anything is written.
        let mut values = Vec::new();
        if values.try_reserve_exact(mapped.attributes.len()).is_err() {
            return Fused::NeedsJs;
        }
        for (key, value) in &mapped.attributes {
            let v = if *key == keys::CONVERSATION_ID {
                conversation.cloned()
            } else if *key == keys::TOOL_CALL_ARGUMENTS && other_input.is_some() {
                // A number or a boolean as it is: its own `AnyValue` (an `intValue` stays one).
                other_value.cloned()
            } else {
                any_value(value)
            };
            match v {
                Some(v) => values.push((*key, v)),
                None => return Fused::NeedsJs,
            }
        }
        drop(mapped);
        if span.attributes.try_reserve(values.len()).is_err() {
            return Fused::NeedsJs;
        }
        for (key, value) in values {
            match span.attributes.iter_mut().find(|kv| kv.key == key) {
                Some(kv) => kv.value = Some(value),
                None => span.attributes.push(KeyValue {
                    key: key.to_string(),
                    value: Some(value),
                }),
            }
        }
    }
    // `js/pairing.js`: in complete mode, a local root span frees its trace's tool call id state.
    if mode == Mode::Complete && local_root(span) {
        if let (Ok(trace), Ok(id)) = (
            <[u8; 16]>::try_from(span.trace_id.as_slice()),
            <[u8; 8]>::try_from(span.span_id.as_slice()),
        ) {
            mapper.span_ended(trace, id, true);
        }
    }
    Fused::Mapped(problems)
}

/// Leaves `genkit:input` and `genkit:output` out of the span's attributes (the exporter option
/// `omitGenkitInputOutput`: for this export only).
pub fn omit_genkit_input_output(span: &mut Span) {
    span.attributes
        .retain(|kv| kv.key != GENKIT_INPUT && kv.key != GENKIT_OUTPUT);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::proto::trace::v1::Status as ProtoStatus;
    use crate::span::Options;

    fn kv(key: &str, value: &str) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue {
                value: Some(any_value::Value::StringValue(value.into())),
            }),
        }
    }

    fn model_span() -> Span {
        Span {
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            parent_span_id: vec![3; 8],
            flags: 0x100,
            attributes: vec![
                kv(SUBTYPE, "model"),
                kv(NAME, "googleai/gemini-2.5-flash"),
                kv(
                    GENKIT_INPUT,
                    r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#,
                ),
                kv(
                    GENKIT_OUTPUT,
                    r#"{"message":{"role":"model","content":[{"text":"yo"}]},"finishReason":"stop","usage":{"inputTokens":3,"outputTokens":2}}"#,
                ),
            ],
            status: Some(ProtoStatus::default()),
            ..Span::default()
        }
    }

    #[test]
    fn model_span_gets_the_mappers_attributes_appended_in_order() {
        for mode in [Mode::Complete, Mode::Reference] {
            let options = Options {
                mode,
                ..Options::default()
            };
            let mut span = model_span();
            let mut mapper = Mapper::new(options.clone());
            assert_eq!(map_span(&mut mapper, &mut span, 1 << 24), Fused::Mapped(0));
            // The same list the Mapper gives the processor, in the same order, after the span's own.
            let attrs = model_span().attributes;
            let input = SpanInput {
                subtype: Some("model"),
                name: Some("googleai/gemini-2.5-flash"),
                input: string_of(&attrs[2]),
                output: string_of(&attrs[3]),
                trace_id: Some([1; 16]),
                span_id: Some([2; 8]),
                parent_span_id: Some([3; 8]),
                ..SpanInput::default()
            };
            let want = Mapper::new(options).map(&input);
            assert!(!want.attributes.is_empty());
            assert_eq!(span.attributes.len(), 4 + want.attributes.len());
            for ((key, value), got) in want.attributes.iter().zip(&span.attributes[4..]) {
                assert_eq!(got.key, *key);
                assert_eq!(got.value, any_value(value));
            }
        }
    }

    #[test]
    fn an_existing_key_is_overwritten_in_place() {
        let mut span = model_span();
        span.attributes
            .insert(0, kv("gen_ai.operation.name", "old"));
        let mut mapper = Mapper::new(Options::default());
        map_span(&mut mapper, &mut span, 1 << 24);
        assert_eq!(span.attributes[0].key, "gen_ai.operation.name");
        assert_eq!(string_of(&span.attributes[0]), Some("chat"));
        assert_eq!(
            span.attributes
                .iter()
                .filter(|kv| kv.key == "gen_ai.operation.name")
                .count(),
            1
        );
    }

    #[test]
    fn what_only_javascript_reproduces_changes_nothing() {
        // A lone surrogate escape the core refuses; a name that is not a string; a huge input.
        let mut cases = Vec::new();
        let mut s = model_span();
        s.attributes[2] = kv(
            GENKIT_INPUT,
            r#"{"messages":[{"role":"user","content":[{"text":"\ud800"}]}]}"#,
        );
        cases.push((s, 1 << 24));
        let mut s = model_span();
        s.attributes[1] = KeyValue {
            key: NAME.into(),
            value: Some(number_value(5.0)),
        };
        cases.push((s, 1 << 24));
        cases.push((model_span(), 10));
        for (mut span, handoff) in cases {
            let before = span.clone();
            let mut mapper = Mapper::new(Options::default());
            if map_span(&mut mapper, &mut span, handoff) == Fused::NeedsJs {
                assert_eq!(span, before);
            } else {
                // The core accepted the escape (U+FFFD): still a valid mapping.
                assert!(span.attributes.len() > before.attributes.len());
            }
        }
        let mut span = model_span();
        span.attributes[1] = KeyValue {
            key: NAME.into(),
            value: Some(number_value(5.0)),
        };
        assert_eq!(
            map_span(&mut Mapper::new(Options::default()), &mut span, 1 << 24),
            Fused::NeedsJs
        );
        assert_eq!(
            map_span(&mut Mapper::new(Options::default()), &mut model_span(), 10),
            Fused::NeedsJs
        );
    }

    #[test]
    fn flows_get_the_name_and_the_conversation_id_value_as_it_is() {
        let mut span = Span {
            attributes: vec![
                kv(SUBTYPE, "flow"),
                KeyValue {
                    key: CONVERSATION_ID.into(),
                    value: Some(number_value(42.0)),
                },
            ],
            ..Span::default()
        };
        map_span(&mut Mapper::new(Options::default()), &mut span, 1 << 24);
        let keys: Vec<_> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                SUBTYPE,
                CONVERSATION_ID,
                "gen_ai.operation.name",
                "gen_ai.agent.name",
                "gen_ai.conversation.id"
            ]
        );
        assert_eq!(string_of(&span.attributes[3]), Some("undefined"));
        assert_eq!(span.attributes[4].value, Some(number_value(42.0)));
    }

    #[test]
    fn omit_leaves_out_input_and_output_only() {
        let mut span = model_span();
        omit_genkit_input_output(&mut span);
        let keys: Vec<_> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, [SUBTYPE, NAME]);
    }
}
