//! The GenAI side: attribute keys of the OpenTelemetry GenAI semantic conventions that Maple reads
//! (seed 002/003, <https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/>) and the
//! writers of their message JSON.
//!
//! Message JSON (seed 003, "Message JSON"): an array of `{"role", "parts", "finish_reason"?}`; parts
//! `{"type":"text","content"}`, `{"type":"reasoning","content"}`,
//! `{"type":"tool_call","id","name","arguments"}`, `{"type":"tool_call_response","id","response"}`.
//! System instructions are an array of parts without a role. Keys are written in the order
//! seed 000's `JSON.stringify` writes them, and a key whose value is absent is left out, as
//! `JSON.stringify` leaves out `undefined`.

use crate::genkit::{ArrayShape, Message, Part, Raw, Shape, ToolPayload};
use crate::out::Out;

/// `gen_ai.operation.name`: `invoke_agent`, `chat` or `execute_tool`.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.provider.name`: the Genkit plugin prefix of the model name (seed 001, "Known gaps").
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.request.model`: the model name without the plugin prefix.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.input.messages`: JSON string, the non-system messages of the request.
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.system_instructions`: JSON string, the parts of the system messages.
pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
/// `gen_ai.output.messages`: JSON string, the answer(s) with their finish reason.
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.response.finish_reasons`: array attribute, one entry per answer.
pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// `gen_ai.usage.input_tokens`: integer, tokens in the prompt.
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`: integer, tokens in the answer.
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.tool.call.result`: the tool's result; a string result as its plain text.
pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";

/// Why a message could not be converted: the cases where seed 000's `toMessages` throws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageError {
    /// The message is not a JSON object (`m.role` / `m.content` of a non-object).
    NotAnObject,
    /// `content` is absent or not an array (`content.map is not a function`).
    ContentNotArray,
    /// A part is `null` (destructuring `null`).
    NullPart,
}

/// Returns true when a raw JSON value is the JSON string `expected`, comparing after unescaping.
/// `expected` holds no backslash (the callers' roles): the shortcut below compares it with the
/// raw text as it is written.
///
/// Inlined, so that a constant `expected` (a role: `"system"`, `"model"`) is compared in a few
/// instructions: every JSON escape is longer than the text it stands for, so a raw value shorter
/// than `expected` and its quotes is never it, one of that exact length is it only as `expected`
/// written plainly, and only a longer one is decoded ([`raw_is_escaped_str`]). Called for the role
/// of every message two to three times (callgrind, 10 KB ASCII spans: 61 out-of-line calls a span,
/// BENCHMARKS.md "Stop 52").
#[inline]
pub fn raw_is_str(raw: Raw<'_>, expected: &str) -> bool {
    let text = raw.get().as_bytes();
    let plain = expected.len() + 2;
    match text.len().cmp(&plain) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => {
            text.first() == Some(&b'"') && text.get(1..plain - 1) == Some(expected.as_bytes())
        }
        std::cmp::Ordering::Greater => raw_is_escaped_str(raw, expected),
    }
}

/// [`raw_is_str`] of a raw value longer than `expected` and its quotes: a string with escapes,
/// decoded. A lone surrogate escape cannot spell `expected`.
#[inline(never)]
fn raw_is_escaped_str(raw: Raw<'_>, expected: &str) -> bool {
    let text = raw.get().as_bytes();
    if text.first() != Some(&b'"') || !text.contains(&b'\\') {
        return false;
    }
    matches!(crate::jsonstr::decode(raw.get()), Ok(s) if s == expected)
}

/// JavaScript truthiness of a raw JSON value: `null`, `false`, `""` and numbers equal to zero
/// (including `-0`, `0.0`, `0e5` and underflowing `1e-400`) are falsy; everything else is truthy.
pub fn raw_is_truthy(raw: Raw<'_>) -> bool {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'n') => false,
        Some(b'f') => false,
        Some(b'"') => text.len() > 2,
        Some(b'-' | b'0'..=b'9') => text.parse::<f64>().map(|v| v != 0.0).unwrap_or(true),
        _ => true,
    }
}

/// Validates that every message is convertible (seed 000's `toMessages` would not throw).
pub fn check_messages(messages: &[Shape<Message<'_>>]) -> Result<(), MessageError> {
    messages.iter().try_for_each(|m| match m {
        Shape::Object(message) => check_content(message),
        _ => Err(MessageError::NotAnObject),
    })
}

fn check_content(message: &Message<'_>) -> Result<(), MessageError> {
    match &message.content {
        Some(ArrayShape::Array(parts)) => {
            if parts.iter().any(|p| matches!(p, Shape::Null)) {
                Err(MessageError::NullPart)
            } else {
                Ok(())
            }
        }
        _ => Err(MessageError::ContentNotArray),
    }
}

/// Checks a single message (an answer).
pub fn check_message(message: &Shape<Message<'_>>) -> Result<(), MessageError> {
    check_messages(std::slice::from_ref(message))
}

/// Bytes a message is expected to take once written as a GenAI message (a capacity hint for the
/// output buffers, never a limit): the source text of every value its parts copy, plus
/// [`MESSAGE_OVERHEAD`] for the message and [`PART_OVERHEAD`] for each part (keys, part type,
/// brackets). Values are copied as they are written in Genkit's JSON, so the sum is close to the
/// written size; a scrubbed secret's replacement or a re-escaped text can differ by a few bytes,
/// which the buffer's growth absorbs. One pass over the parsed parts, no allocation.
pub fn message_bytes(message: &Message<'_>) -> usize {
    let len = |raw: Option<Raw<'_>>| raw.map_or(0, |r| r.get().len());
    let tool = |payload: &Option<Shape<ToolPayload<'_>>>| match payload {
        Some(Shape::Object(t)) => len(t.name) + len(t.reference) + len(t.input) + len(t.output),
        _ => 0,
    };
    let Some(ArrayShape::Array(parts)) = &message.content else {
        return MESSAGE_OVERHEAD;
    };
    parts.iter().fold(MESSAGE_OVERHEAD, |sum, part| {
        let Shape::Object(p) = part else { return sum };
        let media = match &p.media {
            Some(Shape::Object(m)) => len(m.url) + len(m.content_type),
            _ => 0,
        };
        sum.saturating_add(
            PART_OVERHEAD
                + len(p.text)
                + len(p.reasoning)
                + media
                + tool(&p.tool_request)
                + tool(&p.tool_response),
        )
    })
}

/// [`message_bytes`] summed over a request's messages: `(conversation, system)`, the hints for
/// `gen_ai.input.messages` (the messages whose role is not `"system"`) and
/// `gen_ai.system_instructions` (the parts of those whose role is), each with room for the
/// brackets. Messages that are not objects count nothing.
pub fn messages_bytes(messages: &[Shape<Message<'_>>]) -> (usize, usize) {
    messages.iter().fold((2, 2), |(conversation, system), m| {
        let Shape::Object(m) = m else {
            return (conversation, system);
        };
        let bytes = message_bytes(m);
        if m.role.is_some_and(|role| raw_is_str(role, "system")) {
            (conversation, system.saturating_add(bytes))
        } else {
            (conversation.saturating_add(bytes), system)
        }
    })
}

/// What [`message_bytes`] counts for a message beside its parts: `{"role":"assistant","parts":[]`
/// and a finish reason.
pub const MESSAGE_OVERHEAD: usize = 64;
/// What [`message_bytes`] counts for a part beside its values: the keys and the part type
/// (`{"type":"tool_call_response","id":,"response":}` is the longest).
pub const PART_OVERHEAD: usize = 56;

/// A writer of the parts seed 000 drops, for the modes that keep more of them (complete mode's
/// media parts, issue 10 rule 7): writes `part` (with its leading comma when `first` is false)
/// when it is one it keeps, and returns the new `first` flag (unchanged when it wrote nothing).
pub type OtherPart = fn(out: &mut Out, part: &Part<'_>, first: bool) -> bool;

/// A finish reason as written into a message: the plugin's JSON value as it is (seed 000), or a
/// text written as a JSON string (complete mode's semconv vocabulary, issue 10 rule 8).
#[derive(Debug, Clone, Copy)]
pub enum Reason<'r> {
    /// The JSON source text of the value, copied.
    Raw(Raw<'r>),
    /// A plain text, JSON-escaped.
    Text(&'r str),
}

/// Appends the GenAI parts of a Genkit message's content, comma-separated, without brackets.
/// Returns whether any part was written. Parts that are not objects, and object parts with none of
/// `text`, `reasoning`, a truthy `toolRequest` or a truthy `toolResponse`, are dropped (seed 000).
pub fn write_parts(out: &mut Out, message: &Message<'_>, first: bool) -> bool {
    write_parts_with(out, message, first, None)
}

/// [`write_parts`], with `other` writing the parts seed 000 drops (`None`: seed 000's output).
pub fn write_parts_with(
    out: &mut Out,
    message: &Message<'_>,
    first: bool,
    other: Option<OtherPart>,
) -> bool {
    let Some(ArrayShape::Array(parts)) = &message.content else {
        return !first;
    };
    !write_part_list(out, parts, first, other)
}

/// Appends parts, comma-separated, without brackets (a message's content, a multipart tool
/// result's `content`); returns the new `first` flag (still `first` when nothing was written).
pub fn write_part_list(
    out: &mut Out,
    parts: &[Shape<Part<'_>>],
    mut first: bool,
    other: Option<OtherPart>,
) -> bool {
    for part in parts {
        if let Shape::Object(part) = part {
            first = write_part(out, part, first, other);
        }
    }
    first
}

/// Writes a `,` unless `first`.
pub fn comma(out: &mut Out, first: bool) {
    if !first {
        out.push(',');
    }
}

fn write_part(out: &mut Out, part: &Part<'_>, first: bool, other: Option<OtherPart>) -> bool {
    if let Some(text) = part.text {
        comma(out, first);
        out.push_str(r#"{"type":"text","content":"#);
        out.push_value(text.get());
        out.push('}');
    } else if let Some(reasoning) = part.reasoning {
        comma(out, first);
        out.push_str(r#"{"type":"reasoning","content":"#);
        out.push_value(reasoning.get());
        out.push('}');
    } else if let Some(request) = truthy_tool(&part.tool_request) {
        comma(out, first);
        out.push_str(r#"{"type":"tool_call""#);
        if let Some(request) = request {
            field(out, "id", request.reference);
            field(out, "name", request.name);
            field(out, "arguments", request.input);
        }
        out.push('}');
    } else if let Some(response) = truthy_tool(&part.tool_response) {
        comma(out, first);
        out.push_str(r#"{"type":"tool_call_response""#);
        if let Some(response) = response {
            field(out, "id", response.reference);
            field(out, "response", response.output);
        }
        out.push('}');
    } else if let Some(other) = other {
        return other(out, part, first);
    } else {
        return first;
    }
    false
}

/// `Some(Some(payload))` for an object, `Some(None)` for another truthy value (whose `name`, `ref`,
/// `input` are all `undefined` in JavaScript), `None` when falsy or absent.
fn truthy_tool<'s, 'a>(
    tool: &'s Option<Shape<ToolPayload<'a>>>,
) -> Option<Option<&'s ToolPayload<'a>>> {
    match tool {
        Some(Shape::Object(payload)) => Some(Some(payload)),
        Some(Shape::Other { truthy: true }) => Some(None),
        _ => None,
    }
}

fn field(out: &mut Out, key: &str, value: Option<Raw<'_>>) {
    if let Some(value) = value {
        out.push_str(",\"");
        out.push_str(key);
        out.push_str("\":");
        out.push_value(value.get());
    }
}

/// Appends one GenAI message: `{"role":..,"parts":[..]}` plus `"finish_reason"` when
/// `finish_reason` is `Some`. Role `"model"` becomes `"assistant"` (seed 000); other roles are
/// copied; an absent role is left out.
pub fn write_message(out: &mut Out, message: &Message<'_>, finish_reason: Option<Raw<'_>>) {
    write_message_with(out, message, finish_reason.map(Reason::Raw), None);
}

/// [`write_message`] with the finish reason as a [`Reason`] and `other` writing the parts seed
/// 000 drops (`None`: seed 000's output).
pub fn write_message_with(
    out: &mut Out,
    message: &Message<'_>,
    finish_reason: Option<Reason<'_>>,
    other: Option<OtherPart>,
) {
    out.push('{');
    if let Some(role) = message.role {
        out.push_str("\"role\":");
        if raw_is_str(role, "model") {
            out.push_str("\"assistant\"");
        } else {
            out.push_value(role.get());
        }
        out.push(',');
    }
    out.push_str("\"parts\":[");
    write_parts_with(out, message, true, other);
    out.push(']');
    match finish_reason {
        Some(Reason::Raw(reason)) => {
            out.push_str(",\"finish_reason\":");
            out.push_value(reason.get());
        }
        Some(Reason::Text(reason)) => {
            out.push_str(",\"finish_reason\":\"");
            out.push_text(reason);
            out.push('"');
        }
        None => {}
    }
    out.push('}');
}

/// Appends `s` JSON-escaped, without quotes (`"`, `\` and control characters escaped, as
/// `JSON.stringify` does; control characters as `\u00XX`).
pub fn json_escape_into(out: &mut Out, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| c == '"' || c == '\\' || (c as u32) < 0x20) {
        out.push_str(&rest[..i]);
        let b = rest.as_bytes()[i];
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[usize::from(b >> 4)] as char);
                out.push(HEX[usize::from(b & 15)] as char);
            }
        }
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON string literal of `text`, each character written as chosen by `how` (one choice a
    /// character, cycled): 0 plain (escaped where JSON requires it), 1 `\uXXXX` of its UTF-16
    /// units, 2 its short escape when it has one (`\/`, `\"`, `\\`, `\n`), else plain.
    fn literal(text: &str, how: &[u8]) -> String {
        let mut out = String::from("\"");
        for (i, c) in text.chars().enumerate() {
            let short = match c {
                '/' => Some("\\/"),
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                _ => None,
            };
            match (
                how.get(i % how.len().max(1)).copied().unwrap_or(0) % 3,
                short,
            ) {
                (1, _) => {
                    for unit in c.encode_utf16(&mut [0; 2]) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                (2, Some(esc)) => out.push_str(esc),
                _ if matches!(c, '"' | '\\' | '\n') => out.push_str(short.unwrap_or_default()),
                _ => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// `raw_is_str`'s length shortcut (shorter: never; as long: only written plainly) agrees with
    /// decoding: on every way of writing the expected roles and near misses, and on values that
    /// are no string.
    #[test]
    fn raw_is_str_agrees_with_decoding() {
        // The last holds a backslash, outside `raw_is_str`'s precondition, to reach texts that need
        // escapes; it is safe here because its quote and line feed cannot be written plainly.
        let expected = ["system", "model", "", "a/b", "é", "\"x\\\n"];
        let mut texts: Vec<String> = Vec::new();
        for e in expected {
            texts.push(e.to_string());
            texts.push(format!("{e}x"));
            texts.push(e.chars().skip(1).collect());
            texts.push(e.to_uppercase());
        }
        texts.extend(["sys/tem", "modél", "systen", "😀", "user", "tool"].map(String::from));
        let ways: [&[u8]; 6] = [&[0], &[1], &[2], &[0, 1], &[1, 0, 2], &[2, 2, 1]];
        let mut equal = 0;
        for e in expected {
            for text in &texts {
                for how in ways {
                    let json = literal(text, how);
                    let raw = Raw::from_json(&json).unwrap();
                    let decoded = serde_json::from_str::<String>(&json).unwrap();
                    assert_eq!(decoded, *text, "{json}");
                    assert_eq!(raw_is_str(raw, e), text == e, "{json} against {e:?}");
                    equal += usize::from(text == e);
                }
            }
            for other in [
                "null",
                "1",
                "true",
                "[]",
                "{}",
                "\"\\ud800\"",
                "\"\\ud800system\"",
            ] {
                assert!(!raw_is_str(Raw::from_json(other).unwrap(), e), "{other}");
            }
        }
        assert!(equal > 30, "{equal} equal cases");
    }

    /// The capacity hint covers what the writer writes, for every kind of part, so a message's
    /// output buffer is allocated once (the hint is what keeps the writers from growing it).
    #[test]
    fn message_bytes_covers_the_written_message() {
        let messages = [
            r#"{"role":"user","content":[{"text":"hello"}]}"#,
            r#"{"role":"model","content":[{"reasoning":"think \"twice\"\n"},{"text":"é ✓ 😀 \u0001"}]}"#,
            r#"{"role":"model","content":[{"toolRequest":{"name":"weather","ref":"c1","input":{"city":"Paris","days":[1,2]}}}]}"#,
            r#"{"role":"tool","content":[{"toolResponse":{"name":"weather","ref":"c1","output":{"t":21.5,"sky":"clear"}}}]}"#,
            r#"{"role":"user","content":[{"media":{"url":"data:image/png;base64,iVBORw0KGgo=","contentType":"image/png"}},{"text":"x"}]}"#,
            r#"{"role":"model","content":[{"toolRequest":{"name":"t"}},{"toolResponse":{"name":"t","output":null}},{"text":""}]}"#,
            r#"{"role":"model","content":[]}"#,
            r#"{"role":"model"}"#,
        ];
        for json in messages {
            let Ok(Shape::Object(message)) = serde_json::from_str::<Shape<Message<'_>>>(json)
            else {
                panic!("not a message: {json}");
            };
            let reason = Raw::from_json("\"length\"").unwrap();
            for finish in [None, Some(reason)] {
                let mut out = Out::new();
                write_message(&mut out, &message, finish);
                assert!(
                    out.len() <= message_bytes(&message),
                    "{json}: wrote {} bytes, hint {}",
                    out.len(),
                    message_bytes(&message)
                );
            }
        }
    }

    /// Conversation and system instructions are counted apart, by role; non-objects count nothing.
    #[test]
    fn messages_bytes_splits_system_from_the_conversation() {
        let json = r#"[{"role":"system","content":[{"text":"be brief"}]},{"role":"user","content":[{"text":"hi"}]},7]"#;
        let Ok(ArrayShape::Array(messages)) =
            serde_json::from_str::<ArrayShape<Shape<Message<'_>>>>(json)
        else {
            panic!("not a list of messages");
        };
        let (conversation, system) = messages_bytes(&messages);
        assert_eq!(
            system,
            2 + MESSAGE_OVERHEAD + PART_OVERHEAD + "\"be brief\"".len()
        );
        assert_eq!(
            conversation,
            2 + MESSAGE_OVERHEAD + PART_OVERHEAD + "\"hi\"".len()
        );
    }
}
