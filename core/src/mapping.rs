//! Span kind to GenAI attributes: the rules of seed 000's `GenkitForMaple.onEnd` for model and
//! tool spans, with the candidate-shaped answers of issue 5 and per-attribute degradation where
//! the reference would throw (issue 4).
//!
//! Flow and agent spans need no JSON and are mapped in the JavaScript wrapper; so are the model
//! name split (`gen_ai.provider.name`, `gen_ai.request.model`) and `gen_ai.tool.call.arguments`,
//! which copy attribute values as they are.

use crate::genkit::{
    ArrayShape, Candidate, Extent, GenerateRequest, GenerateResponse, Message, Raw, Shape,
};
use crate::out::{try_push, Copied, Out, OutOfMemory, Recording};
use crate::scrub::{Scrubber, SourceScrubber};
use crate::semconv::{
    check_message, check_messages, message_bytes, messages_bytes, raw_is_str, raw_is_truthy,
    write_message, write_parts,
};
use std::borrow::Cow;

/// Bit flags naming what went wrong while mapping one span; `0` is a clean mapping. Each flag is
/// one "problem kind" for the rate-limited `diag` report of the JavaScript wrapper.
pub mod problem {
    /// `genkit:input` is not valid JSON (truncated by an attribute value length limit, say): the
    /// input messages and system instructions are omitted.
    pub const INPUT_NOT_JSON: u32 = 1;
    /// `genkit:input.messages`, a message, its `content` or a part has a shape the reference
    /// throws on: the input messages and system instructions are omitted.
    pub const INPUT_SHAPE: u32 = 1 << 1;
    /// `genkit:output` is not valid JSON: every output attribute is omitted.
    pub const OUTPUT_NOT_JSON: u32 = 1 << 2;
    /// `genkit:output.message` (or a candidate's message) has a shape the reference throws on:
    /// the output messages are omitted; finish reasons and usage are still written.
    pub const OUTPUT_SHAPE: u32 = 1 << 3;
    /// A tool span's `genkit:output` is not valid JSON: the tool call result is omitted.
    pub const TOOL_OUTPUT_NOT_JSON: u32 = 1 << 4;
    /// A value cannot be represented in UTF-8 (a lone surrogate escape in a string that must be
    /// decoded): the caller maps this span in JavaScript instead.
    pub const NEEDS_JS: u32 = 1 << 5;
    /// An attribute had an unexpected JavaScript type (set by the JS wrapper).
    pub const ATTRIBUTE_TYPE: u32 = 1 << 6;
    /// The native mapping panicked; the span was mapped in JavaScript (set by the binding).
    pub const PANIC: u32 = 1 << 7;
    /// An allocation sized by the span failed (growth of an output, say): nothing was written
    /// natively, and the span is mapped in JavaScript. Always set together with [`NEEDS_JS`].
    pub const OUT_OF_MEMORY: u32 = 1 << 8;
    /// A `gen_ai.*` attribute could not be written (a setter or Proxy trap of the attribute map
    /// threw, the map is frozen, V8 could not create the value): that attribute is missing (set by
    /// the binding).
    pub const WRITE_FAILED: u32 = 1 << 9;
    /// A content attribute was left out because it could not be scrubbed or capped (an
    /// allocation failed, its structure alone is over `maxContentBytes`, a path without the
    /// scrubber): scrubbed content or none, never unscrubbed (issue 11, `crate::content`).
    pub const CONTENT_WITHHELD: u32 = 1 << 10;
    /// Complete mode only: `genkit:input` or `genkit:output` is longer than the binding's hand-off
    /// size (16 Mi UTF-16 code units), so it was not copied into Rust and the span was mapped by
    /// the pure-JS reference mapping, without complete mode's rules (set by the binding; always
    /// with [`NEEDS_JS`]). Reference mode needs no report: its JavaScript twin writes the same.
    pub const TOO_LARGE: u32 = 1 << 11;
    /// The flags after which the caller maps the span another way (the JavaScript mapping, or
    /// complete mode's whole-span mapping after its tool path): nothing the call recorded is
    /// written.
    pub const HAND_OFF: u32 = NEEDS_JS | PANIC | OUT_OF_MEMORY | TOO_LARGE;
}

/// What an output that could not be allocated sets: the span goes to the JavaScript mapping.
const OUT_OF_MEMORY_FLAGS: u32 = problem::OUT_OF_MEMORY | problem::NEEDS_JS;

/// The attributes a model span gets from `genkit:input` and `genkit:output`. `None` means "do not
/// write this attribute". Raw values are JSON source text, to be turned into attribute values by
/// [`Scalar::of`].
#[derive(Debug, Default)]
pub struct ModelAttributes<'a> {
    /// `gen_ai.input.messages`.
    pub input_messages: Option<String>,
    /// `gen_ai.system_instructions`.
    pub system_instructions: Option<String>,
    /// `gen_ai.output.messages`.
    pub output_messages: Option<String>,
    /// `gen_ai.response.finish_reasons`, each entry a JSON value (a string in practice).
    pub finish_reasons: Option<Vec<Raw<'a>>>,
    /// `gen_ai.usage.input_tokens`, a JSON value (a number in practice).
    pub input_tokens: Option<Raw<'a>>,
    /// `gen_ai.usage.output_tokens`, a JSON value.
    pub output_tokens: Option<Raw<'a>>,
    /// [`problem`] flags.
    pub problems: u32,
    /// The pieces of `input_messages`, `system_instructions` and `output_messages` copied from
    /// `genkit:input` / `genkit:output` ([`Copied`]), when the mapping recorded them
    /// ([`map_model_recorded`]); empty otherwise.
    pub copies: [Vec<Copied>; 3],
}

/// Maps a model span. `input` and `output` are the `genkit:input` / `genkit:output` attribute
/// values when they are strings (`None` otherwise: the reference then treats them as absent).
///
/// Rules (seed 000, "Add the span processor"; issue 5 for `candidates`):
/// - `gen_ai.input.messages`: the non-system messages of `input.messages` (absent or `null`: `[]`);
///   `gen_ai.system_instructions`: the parts of the system messages, when there is at least one.
/// - `gen_ai.output.messages`: `[output.message]` with `finish_reason: output.finishReason` when
///   `output.message` is truthy; otherwise one message per entry of `output.candidates` that has
///   a truthy `message`, each with its own `finishReason`.
/// - `gen_ai.response.finish_reasons`: `[output.finishReason]` when truthy, or the truthy finish
///   reasons of the candidates that gave an output message.
/// - usage: `output.usage.inputTokens` / `outputTokens` whenever present (any JSON value).
pub fn map_model<'a>(input: Option<&'a str>, output: Option<&'a str>) -> ModelAttributes<'a> {
    map_model_scrubbed(input, output, None)
}

/// [`map_model`], scrubbing secrets with `scrubber` in the same pass (issue 11): every value the
/// message writers copy from `genkit:input` / `genkit:output` is scrubbed as it is written
/// ([`Out::push_value`], through a [`SourceScrubber`] that scans each source for needles once), the
/// writers' own structure is not, and a source that holds nothing a pattern could match is
/// written without scrubbing. The result equals
/// [`Scrubber::json`] applied to each message attribute of [`map_model`]. A value that cannot be
/// scrubbed (an allocation failed) leaves its attribute out with
/// [`problem::CONTENT_WITHHELD`]. A source is scanned only once it has messages to write.
pub fn map_model_scrubbed<'a>(
    input: Option<&'a str>,
    output: Option<&'a str>,
    scrubber: Option<&Scrubber>,
) -> ModelAttributes<'a> {
    map_model_recorded(input, output, scrubber, None)
}

/// [`map_model_scrubbed`], and with `record` the pieces of at least that many bytes of the three
/// message attributes copied from `input` / `output` ([`ModelAttributes::copies`],
/// [`Out::recording`]): the same attributes either way.
pub fn map_model_recorded<'a>(
    input: Option<&'a str>,
    output: Option<&'a str>,
    scrubber: Option<&Scrubber>,
    record: Option<Recording>,
) -> ModelAttributes<'a> {
    let mut attrs = ModelAttributes::default();
    map_input(input, &mut attrs, scrubber, record);
    if let Some(output) = output {
        map_output(output, &mut attrs, scrubber, record);
    }
    if attrs.problems & problem::NEEDS_JS != 0 {
        // The JavaScript mapping redoes the whole span: write nothing here.
        return ModelAttributes {
            problems: attrs.problems,
            ..ModelAttributes::default()
        };
    }
    attrs
}

/// The problem flag for a text the Genkit readers could not parse. serde_json refuses two things
/// `JSON.parse` accepts where a Genkit shape is read with `deserialize_any`: a number beyond the
/// f64 range (`1e400`, `Infinity` in JavaScript) and a string with a lone surrogate escape. Such
/// text is valid JSON, so it is mapped in JavaScript ([`problem::NEEDS_JS`]) rather than called
/// "not JSON"; the syntax-only check runs only on this failure path.
fn parse_failure(text: &str, not_json: u32) -> u32 {
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        problem::NEEDS_JS
    } else {
        not_json
    }
}

/// A written content attribute: `Ok(Some(text))`, `Ok(None)` when a value in it could not be
/// scrubbed (`problems` gains [`problem::CONTENT_WITHHELD`]: left out, never unscrubbed), `Err`
/// when an allocation failed otherwise.
/// The pieces the output recorded ([`Out::recording`]) are put into `copies`.
pub(crate) fn finish_recorded(
    out: Out<'_>,
    problems: &mut u32,
    copies: &mut Vec<Copied>,
) -> Result<Option<String>, OutOfMemory> {
    if out.withheld() {
        *problems |= problem::CONTENT_WITHHELD;
        return Ok(None);
    }
    let (text, pieces) = out.finish_with_copies()?;
    *copies = pieces;
    Ok(Some(text))
}

fn map_input<'a>(
    input: Option<&'a str>,
    attrs: &mut ModelAttributes<'a>,
    scrubber: Option<&Scrubber>,
    record: Option<Recording>,
) {
    let parsed = match input {
        None => None,
        Some(text) => match crate::genkit::parse::<Shape<GenerateRequest<'a>>>(text) {
            Ok(Shape::Object(request)) => request.messages,
            Ok(_) => None,
            Err(_) => {
                attrs.problems |= parse_failure(text, problem::INPUT_NOT_JSON);
                return;
            }
        },
    };
    let messages: &[Shape<Message<'a>>] = match &parsed {
        None | Some(ArrayShape::Null) => &[],
        Some(ArrayShape::Array(messages)) => messages,
        Some(ArrayShape::Other) => {
            attrs.problems |= problem::INPUT_SHAPE;
            return;
        }
    };
    if check_messages(messages).is_err() {
        attrs.problems |= problem::INPUT_SHAPE;
        return;
    }
    let (conversation, system_bytes) = messages_bytes(messages);
    let text = input.unwrap_or("");
    let region = Extent::of_messages(messages.iter().filter_map(Shape::object)).in_source(text);
    let source = SourceScrubber::of_region(scrubber, text, region);
    let mut out = Out::with_hint(conversation)
        .scrubbing(source.as_ref())
        .recording(record, text);
    let mut system = Out::with_hint(if system_bytes > 2 { system_bytes } else { 0 })
        .scrubbing(source.as_ref())
        .recording(record, text);
    let mut first_message = true;
    let mut first_system_part = true;
    out.push('[');
    for message in messages {
        let Shape::Object(message) = message else {
            continue;
        };
        if message.role.is_some_and(|role| raw_is_str(role, "system")) {
            if system.is_empty() {
                system.push('[');
            }
            if write_parts(&mut system, message, first_system_part) {
                first_system_part = false;
            }
        } else {
            if !first_message {
                out.push(',');
            }
            first_message = false;
            write_message(&mut out, message, None);
        }
    }
    out.push(']');
    if !first_system_part {
        system.push(']');
    }
    let mut problems = 0;
    let [input_copies, system_copies, _] = &mut attrs.copies;
    match (
        finish_recorded(out, &mut problems, input_copies),
        finish_recorded(system, &mut problems, system_copies),
    ) {
        (Ok(out), Ok(system)) => {
            attrs.problems |= problems;
            attrs.input_messages = out;
            if !first_system_part {
                attrs.system_instructions = system;
            }
        }
        _ => attrs.problems |= OUT_OF_MEMORY_FLAGS,
    }
}

fn map_output<'a>(
    output: &'a str,
    attrs: &mut ModelAttributes<'a>,
    scrubber: Option<&Scrubber>,
    record: Option<Recording>,
) {
    let response = match crate::genkit::parse::<Shape<GenerateResponse<'a>>>(output) {
        Ok(Shape::Object(response)) => response,
        Ok(_) => return,
        Err(_) => {
            attrs.problems |= parse_failure(output, problem::OUTPUT_NOT_JSON);
            return;
        }
    };

    let mut finish_reasons: Option<Vec<Raw<'a>>> = None;
    match answer(&response.message) {
        Some(Ok(m)) => {
            let region = Extent::of_messages([m]).in_source(output);
            let source = SourceScrubber::of_region(scrubber, output, region);
            let mut out = Out::with_hint(message_bytes(m).saturating_add(2))
                .scrubbing(source.as_ref())
                .recording(record, output);
            out.push('[');
            write_message(&mut out, m, response.finish_reason);
            out.push(']');
            match finish_recorded(out, &mut attrs.problems, &mut attrs.copies[2]) {
                Ok(out) => attrs.output_messages = out,
                Err(OutOfMemory) => attrs.problems |= OUT_OF_MEMORY_FLAGS,
            }
        }
        Some(Err(())) => attrs.problems |= problem::OUTPUT_SHAPE,
        None => {
            if let Some(ArrayShape::Array(candidates)) = &response.candidates {
                let messages = candidates
                    .iter()
                    .filter_map(Shape::object)
                    .filter_map(|c| c.message.as_ref()?.object());
                let region = Extent::of_messages(messages).in_source(output);
                let source = SourceScrubber::of_region(scrubber, output, region);
                let written = map_candidates(
                    candidates,
                    attrs,
                    &mut finish_reasons,
                    source.as_ref(),
                    record.map(|min| (min, output)),
                );
                if written.is_err() {
                    attrs.problems |= OUT_OF_MEMORY_FLAGS;
                }
            }
        }
    }
    if finish_reasons.is_none() {
        if let Some(reason) = response.finish_reason.filter(|r| raw_is_truthy(*r)) {
            finish_reasons = Some(vec![reason]);
        }
    }
    attrs.finish_reasons = finish_reasons;
    if let Some(Shape::Object(usage)) = &response.usage {
        attrs.input_tokens = usage.input_tokens;
        attrs.output_tokens = usage.output_tokens;
    }
}

/// What an answer `message` (the top-level one or a candidate's) gives: `None` when absent or falsy
/// (seed 000's `if (output?.message)`), the message when it converts, `Err` when the reference
/// would throw on it (a truthy non-object, content that is not an array, a `null` part).
fn answer<'s, 'a>(message: &'s Option<Shape<Message<'a>>>) -> Option<Result<&'s Message<'a>, ()>> {
    match message {
        Some(shape @ Shape::Object(m)) => Some(check_message(shape).map(|()| m).map_err(|_| ())),
        Some(Shape::Other { truthy: true }) => Some(Err(())),
        _ => None,
    }
}

/// Candidate-form answers (issue 5): one output message per candidate whose `message` is truthy,
/// in order, each with its own finish reason; the truthy finish reasons become
/// `finish_reasons`. A candidate message the reference would throw on omits the output messages.
fn map_candidates<'a>(
    candidates: &[Shape<Candidate<'a>>],
    attrs: &mut ModelAttributes<'a>,
    finish_reasons: &mut Option<Vec<Raw<'a>>>,
    scrub: Option<&SourceScrubber<'_>>,
    record: Option<(Recording, &str)>,
) -> Result<(), OutOfMemory> {
    let hint = candidates.iter().fold(2usize, |sum, c| match c {
        Shape::Object(Candidate {
            message: Some(Shape::Object(m)),
            ..
        }) => sum.saturating_add(message_bytes(m)),
        _ => sum,
    });
    let (min, source) = record.unzip();
    let mut out = Out::with_hint(hint)
        .scrubbing(scrub)
        .recording(min, source.unwrap_or(""));
    let mut reasons = Vec::new();
    let mut wrote = false;
    out.push('[');
    for candidate in candidates {
        let Shape::Object(candidate) = candidate else {
            continue;
        };
        match answer(&candidate.message) {
            None => continue,
            Some(Err(())) => {
                attrs.problems |= problem::OUTPUT_SHAPE;
                return Ok(());
            }
            Some(Ok(m)) => {
                if wrote {
                    out.push(',');
                }
                wrote = true;
                write_message(&mut out, m, candidate.finish_reason);
                if let Some(reason) = candidate.finish_reason.filter(|r| raw_is_truthy(*r)) {
                    try_push(&mut reasons, reason)?;
                }
            }
        }
    }
    out.push(']');
    let mut copies = Vec::new();
    let Some(out) = finish_recorded(out, &mut attrs.problems, &mut copies)? else {
        // Withheld: the finish reasons are not content and are still written.
        if wrote && !reasons.is_empty() {
            *finish_reasons = Some(reasons);
        }
        return Ok(());
    };
    if wrote {
        attrs.output_messages = Some(out);
        attrs.copies[2] = copies;
        if !reasons.is_empty() {
            *finish_reasons = Some(reasons);
        }
    }
    Ok(())
}

/// What a tool span's `genkit:output` becomes in `gen_ai.tool.call.result` (seed 000: a JSON string
/// result as its plain text, anything else as JSON).
#[derive(Debug, PartialEq, Eq)]
pub enum ToolResult<'a> {
    /// Not valid JSON: leave the attribute out.
    Invalid,
    /// A JSON string: its decoded text.
    Text(Cow<'a, str>),
    /// Any other JSON value: its JSON text, as written.
    Json(&'a str),
    /// A JSON string holding a lone surrogate escape, which UTF-8 cannot hold: map in JavaScript.
    NeedsJs,
    /// The decoded text could not be allocated: map in JavaScript ([`problem::OUT_OF_MEMORY`]).
    OutOfMemory,
}

/// Maps a tool span's `genkit:output` (when it is a string) to `gen_ai.tool.call.result`.
pub fn map_tool_result(output: &str) -> ToolResult<'_> {
    let Ok(raw) = serde_json::from_str::<Raw<'_>>(output) else {
        return ToolResult::Invalid;
    };
    let text = raw.get();
    if text.starts_with('"') {
        // Borrowed when the string has no escape (serde's `Cow<str>` always owns); decoded into a
        // fallibly reserved buffer otherwise.
        match crate::jsonstr::decode(text) {
            Ok(s) => ToolResult::Text(s),
            Err(crate::jsonstr::StringError::OutOfMemory) => ToolResult::OutOfMemory,
            Err(_) => ToolResult::NeedsJs,
        }
    } else {
        ToolResult::Json(text)
    }
}

/// A raw JSON value as an attribute value: what `JSON.parse` would give for the simple cases.
#[derive(Debug, PartialEq)]
pub enum Scalar<'a> {
    /// A JSON string, decoded.
    Str(Cow<'a, str>),
    /// A JSON number, as the nearest double (the same rounding as `JSON.parse`).
    Num(f64),
    /// `true` / `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// An object, an array, or a string with a lone surrogate escape: its JSON text, for
    /// `JSON.parse` on the JavaScript side.
    Json(&'a str),
}

/// `text` as an f64 when it is an integer of at most 15 digits (a token count, `maxOutputTokens`),
/// `-` allowed: exact in an f64, so equal to what `str::parse` gives (`-0` is `-0.0`), for a
/// fraction of its cost (about 300 instructions a number, BENCHMARKS.md "Stop 27"). `None` for
/// anything else (a fraction, an exponent, more digits), which `str::parse` reads.
pub(crate) fn small_integer(text: &str) -> Option<f64> {
    let (negative, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut value = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(d - b'0');
    }
    // Below 10^15 < 2^53: exact.
    let value = value as f64;
    Some(if negative { -value } else { value })
}

impl<'a> Scalar<'a> {
    /// Classifies a raw JSON value.
    pub fn of(raw: Raw<'a>) -> Scalar<'a> {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'"') => {
                // Borrowed without escapes; a lone surrogate or a failed allocation: JSON text, for
                // the JavaScript side.
                match crate::jsonstr::decode(text) {
                    Ok(s) => Scalar::Str(s),
                    Err(_) => Scalar::Json(text),
                }
            }
            Some(b'-' | b'0'..=b'9') => {
                match small_integer(text).map_or_else(|| text.parse::<f64>(), Ok) {
                    Ok(v) => Scalar::Num(v),
                    Err(_) => Scalar::Json(text),
                }
            }
            Some(b't') => Scalar::Bool(true),
            Some(b'f') => Scalar::Bool(false),
            Some(b'n') => Scalar::Null,
            _ => Scalar::Json(text),
        }
    }
}
