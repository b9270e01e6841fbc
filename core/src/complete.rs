//! The rules of complete mode (issue 10), on top of the reference mapping's readers:
//!
//! 1. tokens per provider, Maple's rules (seed 003 "Tokens and cost", seed 001 optional notes):
//!    [`usage_counts`];
//! 2. `gen_ai.usage.cost`: [`crate::cost`] (pydantic's genai-prices, bundled prices);
//! 3. `gen_ai.provider.name` from the semconv registry: [`provider_name`];
//! 4. `error.type` on failed spans: [`crate::span::error_type`];
//! 5. `gen_ai.tool.call.id`: [`crate::pairing`], wired in [`crate::span::Mapper`];
//! 6. `tool.v2` maps like `tool`, the result from `output` and `content`: [`map_tool`];
//! 7. media parts as seed 004 writes them (`uri` parts, `blob` parts with the decoded size and
//!    never the bytes): [`write_media`];
//! 8. finish reasons in the semconv vocabulary, one per output message: [`finish_reason`];
//! 9. request settings, output type, response id and model: [`map_model`].
//!
//! Every rule degrades per attribute like the reference mapping: what can be derived is written.

use crate::cost::PriceCache;
use crate::genkit::{
    ArrayShape, Candidate, Extent, Fields, Media, Message, Part, Raw, Shape, Source,
};
use crate::mapping::finish_recorded;
use crate::mapping::{problem, Scalar};
use crate::out::{Out, OutOfMemory, Recording};
use crate::pairing::{tool_requests_in, ToolRequest};
use crate::scrub::{Scrubber, SourceScrubber};
use crate::semconv::{self as sc, check_messages, raw_is_str};
use crate::span::{error_type, keys, map_agent, needs_js, Mapped, Options, SpanInput, Value};
use std::borrow::Cow;

/// Attribute keys complete mode adds (semconv registry, gen-ai spans).
pub mod ckeys {
    /// `gen_ai.usage.cache_read.input_tokens`.
    pub const CACHE_READ: &str = "gen_ai.usage.cache_read.input_tokens";
    /// `gen_ai.usage.cache_write.input_tokens`.
    pub const CACHE_WRITE: &str = "gen_ai.usage.cache_write.input_tokens";
    /// `gen_ai.usage.reasoning.output_tokens`.
    pub const REASONING: &str = "gen_ai.usage.reasoning.output_tokens";
    /// `gen_ai.usage.cost`: USD, a double (seed 002).
    pub const COST: &str = "gen_ai.usage.cost";
    /// `gen_ai.response.id`.
    pub const RESPONSE_ID: &str = "gen_ai.response.id";
    /// `gen_ai.response.model`.
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// `gen_ai.output.type`.
    pub const OUTPUT_TYPE: &str = "gen_ai.output.type";
    /// `gen_ai.request.temperature`.
    pub const TEMPERATURE: &str = "gen_ai.request.temperature";
    /// `gen_ai.request.max_tokens`.
    pub const MAX_TOKENS: &str = "gen_ai.request.max_tokens";
    /// `gen_ai.request.top_p`.
    pub const TOP_P: &str = "gen_ai.request.top_p";
    /// `gen_ai.request.top_k`.
    pub const TOP_K: &str = "gen_ai.request.top_k";
    /// `gen_ai.request.stop_sequences`.
    pub const STOP_SEQUENCES: &str = "gen_ai.request.stop_sequences";
    /// `gen_ai.request.seed`.
    pub const SEED: &str = "gen_ai.request.seed";
    /// `gen_ai.request.frequency_penalty`.
    pub const FREQUENCY_PENALTY: &str = "gen_ai.request.frequency_penalty";
    /// `gen_ai.request.presence_penalty`.
    pub const PRESENCE_PENALTY: &str = "gen_ai.request.presence_penalty";
}

// ---------------------------------------------------------------------------------------------
// Rule 3: provider names.

/// `gen_ai.provider.name` for a Genkit plugin prefix (rule 3; the semconv registry's well-known
/// values, <https://opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai/>, and seed 004:
/// an unknown plugin passes through lowercased).
pub fn provider_name(prefix: &str) -> Cow<'_, str> {
    let known = match prefix {
        "googleai" | "google-genai" | "googleAI" => "gcp.gemini",
        "vertexai" | "vertexAI" | "vertex-ai" => "gcp.vertex_ai",
        "openai" => "openai",
        "anthropic" => "anthropic",
        "deepseek" => "deepseek",
        "xai" | "grok" => "x_ai",
        "mistral" | "mistralai" => "mistral_ai",
        "groq" => "groq",
        "cohere" => "cohere",
        "perplexity" => "perplexity",
        "openrouter" => "openrouter",
        "awsBedrock" | "aws-bedrock" | "bedrock" => "aws.bedrock",
        "azureOpenAI" | "azure-openai" | "azureopenai" => "azure.ai.openai",
        "azureAIInference" | "azure-ai-inference" => "azure.ai.inference",
        "watsonx" | "ibm-watsonx" => "ibm.watsonx.ai",
        _ => {
            return if prefix.chars().any(char::is_uppercase) {
                Cow::Owned(prefix.to_lowercase())
            } else {
                Cow::Borrowed(prefix)
            };
        }
    };
    Cow::Borrowed(known)
}

/// The token rules a provider follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `googleai/`, `vertexai/`: output tokens exclude thoughts.
    Gemini,
    /// `anthropic/`: input tokens exclude cache reads and writes.
    Anthropic,
    /// Everything else: Genkit's counts; OpenAI-compatible raw usage details when present.
    Other,
}

/// The token family of a Genkit plugin prefix.
pub fn family(prefix: &str) -> Family {
    match prefix {
        "googleai" | "vertexai" | "google-genai" | "googleAI" | "vertexAI" => Family::Gemini,
        "anthropic" => Family::Anthropic,
        _ => Family::Other,
    }
}

// ---------------------------------------------------------------------------------------------
// Shapes complete mode reads beyond the reference ones.

/// `genkit:input` of a model span, complete mode: messages, `config`, `output`.
#[derive(Debug, Default)]
struct Request<'a> {
    messages: Option<ArrayShape<Shape<Message<'a>>>>,
    config: Option<Shape<Config<'a>>>,
    output: Option<Shape<OutputSpec<'a>>>,
}

/// `config`: Genkit's `GenerationCommonConfig` and the provider settings plugins accept.
#[derive(Debug, Default)]
struct Config<'a> {
    temperature: Option<Raw<'a>>,
    max_output_tokens: Option<Raw<'a>>,
    top_p: Option<Raw<'a>>,
    top_k: Option<Raw<'a>>,
    stop_sequences: Option<Raw<'a>>,
    seed: Option<Raw<'a>>,
    frequency_penalty: Option<Raw<'a>>,
    presence_penalty: Option<Raw<'a>>,
}

/// `output`: the requested output (`format`).
#[derive(Debug, Default)]
struct OutputSpec<'a> {
    format: Option<Raw<'a>>,
}

/// `genkit:output` of a model span, complete mode.
#[derive(Debug, Default)]
struct Response<'a> {
    message: Option<Shape<Message<'a>>>,
    finish_reason: Option<Raw<'a>>,
    usage: Option<Shape<Usage<'a>>>,
    candidates: Option<ArrayShape<Shape<Candidate<'a>>>>,
    raw: Option<Shape<Meta<'a>>>,
    custom: Option<Shape<Meta<'a>>>,
}

/// Genkit's `GenerationUsage`, the keys the token rules read.
#[derive(Debug, Default)]
struct Usage<'a> {
    input_tokens: Option<Raw<'a>>,
    output_tokens: Option<Raw<'a>>,
    thoughts_tokens: Option<Raw<'a>>,
    cached_content_tokens: Option<Raw<'a>>,
    custom: Option<Shape<AnthropicUsage<'a>>>,
}

/// `usage.custom` of `@genkit-ai/anthropic`: Anthropic's cache counts.
#[derive(Debug, Default)]
struct AnthropicUsage<'a> {
    cache_read: Option<Raw<'a>>,
    cache_creation: Option<Raw<'a>>,
    cache_1h: Option<Raw<'a>>,
}

/// `raw` (the provider's response, compat-oai and anthropic) or `custom` (google-genai): ids,
/// model and the provider's own usage.
#[derive(Debug, Default)]
struct Meta<'a> {
    /// Anthropic's `stop_reason` (`refusal`).
    stop_reason: Option<Raw<'a>>,
    /// OpenAI's `choices` (`finish_reason: "content_filter"`, `message.refusal`).
    choices: Option<ArrayShape<Shape<Choice<'a>>>>,
    id: Option<Raw<'a>>,
    response_id: Option<Raw<'a>>,
    model: Option<Raw<'a>>,
    model_version: Option<Raw<'a>>,
    usage: Option<Shape<RawUsage<'a>>>,
}

/// One of OpenAI's `choices`.
#[derive(Debug, Default)]
struct Choice<'a> {
    finish_reason: Option<Raw<'a>>,
    message: Option<Shape<ChoiceMessage<'a>>>,
}

#[derive(Debug, Default)]
struct ChoiceMessage<'a> {
    refusal: Option<Raw<'a>>,
}

impl crate::genkit::Keep for Shape<Choice<'_>> {}

/// OpenAI-compatible `usage` (`prompt_tokens_details.cached_tokens`,
/// `completion_tokens_details.reasoning_tokens`; DeepSeek's `prompt_cache_hit_tokens`).
#[derive(Debug, Default)]
struct RawUsage<'a> {
    prompt_details: Option<Shape<Details<'a>>>,
    completion_details: Option<Shape<Details<'a>>>,
    prompt_cache_hit: Option<Raw<'a>>,
    /// Anthropic's own usage (the anthropic plugin's beta runner records no `usage.custom`).
    cache_read: Option<Raw<'a>>,
    cache_creation_total: Option<Raw<'a>>,
    cache_creation: Option<Shape<AnthropicUsage<'a>>>,
}

#[derive(Debug, Default)]
struct Details<'a> {
    cached_tokens: Option<Raw<'a>>,
    reasoning_tokens: Option<Raw<'a>>,
}

/// A `tool.v2` span's `genkit:output`: `{ output, content }` (Genkit's multipart tool response).
#[derive(Debug, Default)]
struct Multipart<'a> {
    output: Option<Raw<'a>>,
    content: Option<ArrayShape<Shape<Part<'a>>>>,
}

macro_rules! fields {
    ($ty:ident { $($name:literal => $field:ident : $how:ident),* $(,)? }) => {
        impl<'de> Fields<'de> for $ty<'de> {
            const NAMES: &'static [&'static str] = &[$($name),*];
            fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
                match Self::NAMES.get(index).copied() {
                    $(Some($name) => fields!(@read $how source, self.$field),)*
                    _ => source.skip()?,
                }
                Ok(())
            }
        }
    };
    (@read raw $source:ident, $slot:expr) => { $slot = $source.raw()? };
    (@read value $source:ident, $slot:expr) => { $source.value_into(&mut $slot)? };
}

fields!(Request { "messages" => messages: value, "config" => config: value, "output" => output: value });
fields!(Config {
    "temperature" => temperature: raw,
    "maxOutputTokens" => max_output_tokens: raw,
    "topP" => top_p: raw,
    "topK" => top_k: raw,
    "stopSequences" => stop_sequences: raw,
    "seed" => seed: raw,
    "frequencyPenalty" => frequency_penalty: raw,
    "presencePenalty" => presence_penalty: raw,
});
fields!(OutputSpec { "format" => format: raw });
fields!(Response {
    "message" => message: value,
    "finishReason" => finish_reason: raw,
    "usage" => usage: value,
    "candidates" => candidates: value,
    "raw" => raw: value,
    "custom" => custom: value,
});
fields!(Usage {
    "inputTokens" => input_tokens: raw,
    "outputTokens" => output_tokens: raw,
    "thoughtsTokens" => thoughts_tokens: raw,
    "cachedContentTokens" => cached_content_tokens: raw,
    "custom" => custom: value,
});
fields!(AnthropicUsage {
    "cache_read_input_tokens" => cache_read: raw,
    "cache_creation_input_tokens" => cache_creation: raw,
    "ephemeral_1h_input_tokens" => cache_1h: raw,
});
fields!(Meta {
    "stop_reason" => stop_reason: raw,
    "choices" => choices: value,
    "id" => id: raw,
    "responseId" => response_id: raw,
    "model" => model: raw,
    "modelVersion" => model_version: raw,
    "usage" => usage: value,
});
fields!(RawUsage {
    "prompt_tokens_details" => prompt_details: value,
    "completion_tokens_details" => completion_details: value,
    "prompt_cache_hit_tokens" => prompt_cache_hit: raw,
    "cache_read_input_tokens" => cache_read: raw,
    "cache_creation_input_tokens" => cache_creation_total: raw,
    "cache_creation" => cache_creation: value,
});
fields!(Choice { "finish_reason" => finish_reason: raw, "message" => message: value });
fields!(ChoiceMessage { "refusal" => refusal: raw });
fields!(Details { "cached_tokens" => cached_tokens: raw, "reasoning_tokens" => reasoning_tokens: raw });
fields!(Multipart { "output" => output: raw, "content" => content: value });

fn object<T>(shape: &Option<Shape<T>>) -> Option<&T> {
    match shape {
        Some(Shape::Object(t)) => Some(t),
        _ => None,
    }
}

/// Why a parse failed: [`problem::NEEDS_JS`] when the text is JSON serde_json refuses to read as
/// a shape (`1e400`, a lone surrogate escape in a key), `not_json` otherwise.
fn parse_failure(text: &str, not_json: u32) -> u32 {
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        problem::NEEDS_JS
    } else {
        not_json
    }
}

// ---------------------------------------------------------------------------------------------
// The entry.

/// Maps one span in complete mode; `prices` remembers the price lookups of rule 2.
///
/// `scrubber`: the content rules' scrubber, attached to the writers of the message attributes and
/// of multipart tool results ([`crate::out::Out::scrubbing`]), which scrub every value they copy
/// from Genkit's JSON as they write it and are marked in [`Mapped::scrubbed`] (issue 11).
pub fn map<'a>(
    span: &SpanInput<'a>,
    options: &Options,
    prices: &mut PriceCache,
    scrubber: Option<&Scrubber>,
) -> Mapped<'a> {
    map_collecting(span, options, prices, scrubber, None)
}

/// [`map`], and with `requests` the tool requests of a model span's answer (in the answer's
/// order, [`crate::pairing::tool_requests`]) pushed there from the same parse of
/// `genkit:output`, for rule 5's pairing ([`crate::span::Mapper`]). A request that cannot be
/// kept (no memory) is left out: that call gets no id.
pub(crate) fn map_collecting<'a>(
    span: &SpanInput<'a>,
    options: &Options,
    prices: &mut PriceCache,
    scrubber: Option<&Scrubber>,
    requests: Option<&mut Vec<ToolRequest<'a>>>,
) -> Mapped<'a> {
    let mut out = Mapped::new();
    match span.subtype {
        Some("flow" | "agent") => map_agent(span, &mut out, span.name),
        Some("model") => {
            if map_model(span, options, prices, &mut out, scrubber, requests).is_err() {
                return needs_js(out.problems);
            }
        }
        Some("tool" | "tool.v2") => {
            if map_tool(span, &mut out, scrubber).is_err() {
                return needs_js(out.problems);
            }
        }
        _ => return out,
    }
    if out.problems & problem::NEEDS_JS != 0 {
        return needs_js(out.problems);
    }
    if let Some(t) = error_type(span) {
        out.push(keys::ERROR_TYPE, Value::str(t));
    }
    out
}

/// Marker: the span must be mapped another way ([`problem::NEEDS_JS`]).
struct NeedsJs;

// ---------------------------------------------------------------------------------------------
// Model spans.

pub use crate::cost::UsageCounts;

/// A token count: a JSON number that is a non-negative integer (`0` counts); anything else is
/// "not reported".
fn count(raw: Option<Raw<'_>>) -> Option<u64> {
    let text = raw?.get();
    // Most counts are short integers: read without `str::parse` (the same value).
    let v = crate::mapping::small_integer(text)
        .map_or_else(|| text.parse::<f64>(), Ok)
        .ok()?;
    (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0)
        .then_some(v as u64)
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Rule 1: Maple's token rules per provider (seed 003 "Tokens and cost"; seed 001 optional notes).
/// - Gemini: `output = outputTokens + thoughtsTokens`, input as reported,
///   `cache_read = cachedContentTokens`, `reasoning = thoughtsTokens`.
/// - Anthropic: `input = inputTokens + cache reads + cache writes` (`usage.custom`),
///   `cache_read`, `cache_write`.
/// - Others: Genkit's counts; `cache_read` / `reasoning` from the OpenAI-compatible raw usage
///   details, else Genkit's `cachedContentTokens` / `thoughtsTokens`.
fn usage_counts(
    family: Family,
    usage: Option<&Usage<'_>>,
    raw_usage: Option<&RawUsage<'_>>,
) -> UsageCounts {
    let Some(usage) = usage else {
        return UsageCounts::default();
    };
    let counts = |input, output, cache_read, cache_write, cache_write_1h, reasoning| UsageCounts {
        input_tokens: input,
        output_tokens: output,
        cache_read_input_tokens: cache_read,
        cache_write_input_tokens: cache_write,
        cache_write_1h_input_tokens: cache_write_1h,
        reasoning_output_tokens: reasoning,
    };
    let input = count(usage.input_tokens);
    let output = count(usage.output_tokens);
    let thoughts = count(usage.thoughts_tokens);
    let cached = count(usage.cached_content_tokens);
    match family {
        Family::Gemini => counts(input, add(output, thoughts), cached, None, None, thoughts),
        Family::Anthropic => {
            // `usage.custom` (stable runner), else the API's own usage in `raw` (beta runner:
            // `cache_creation.ephemeral_1h_input_tokens` nested there).
            let (read, write, write_1h) = match object(&usage.custom) {
                Some(c) => (
                    count(c.cache_read),
                    count(c.cache_creation),
                    count(c.cache_1h),
                ),
                None => match raw_usage {
                    Some(r) => (
                        count(r.cache_read),
                        count(r.cache_creation_total),
                        object(&r.cache_creation).and_then(|c| count(c.cache_1h)),
                    ),
                    None => (None, None, None),
                },
            };
            let total = input.map(|i| {
                i.saturating_add(read.unwrap_or(0))
                    .saturating_add(write.unwrap_or(0))
            });
            counts(total, output, read.or(cached), write, write_1h, thoughts)
        }
        Family::Other => {
            let prompt = raw_usage.and_then(|u| object(&u.prompt_details));
            let completion = raw_usage.and_then(|u| object(&u.completion_details));
            let cache_read = prompt
                .and_then(|d| count(d.cached_tokens))
                .or_else(|| raw_usage.and_then(|u| count(u.prompt_cache_hit)))
                .or(cached);
            let reasoning = completion
                .and_then(|d| count(d.reasoning_tokens))
                .or(thoughts);
            counts(input, output, cache_read, None, None, reasoning)
        }
    }
}

/// A JSON string's text, `None` for other JSON values or a lone surrogate escape.
fn string<'a>(raw: Option<Raw<'a>>) -> Option<Cow<'a, str>> {
    match Scalar::of(raw?) {
        Scalar::Str(s) => Some(s),
        _ => None,
    }
}

/// A JSON number as an attribute (`Int` when integral); `None` for other JSON values.
fn number<'a>(raw: Option<Raw<'a>>) -> Option<Value<'a>> {
    match Scalar::of(raw?) {
        Scalar::Num(n) if n.is_finite() => Some(Value::number(n)),
        _ => None,
    }
}

/// A JSON number as a double attribute (temperature, top_p, penalties).
fn double<'a>(raw: Option<Raw<'a>>) -> Option<Value<'a>> {
    match Scalar::of(raw?) {
        Scalar::Num(n) if n.is_finite() => Some(Value::Double(n)),
        _ => None,
    }
}

/// Rule 9: request settings from `genkit:input.config` (seed 004 "gen_ai.request.*": the values
/// that were set, `0` included) and `gen_ai.output.type` from `genkit:input.output.format`.
fn map_request<'a>(request: &Request<'a>, out: &mut Mapped<'a>) {
    if let Some(config) = object(&request.config) {
        if let Some(v) = double(config.temperature) {
            out.push(ckeys::TEMPERATURE, v);
        }
        if let Some(v) = number(config.max_output_tokens) {
            out.push(ckeys::MAX_TOKENS, v);
        }
        if let Some(v) = double(config.top_p) {
            out.push(ckeys::TOP_P, v);
        }
        if let Some(v) = number(config.top_k) {
            out.push(ckeys::TOP_K, v);
        }
        if let Some(v) = config.stop_sequences.and_then(stop_sequences) {
            out.push(ckeys::STOP_SEQUENCES, v);
        }
        if let Some(v) = number(config.seed) {
            out.push(ckeys::SEED, v);
        }
        if let Some(v) = double(config.frequency_penalty) {
            out.push(ckeys::FREQUENCY_PENALTY, v);
        }
        if let Some(v) = double(config.presence_penalty) {
            out.push(ckeys::PRESENCE_PENALTY, v);
        }
    }
    if let Some(format) = object(&request.output).and_then(|o| string(o.format)) {
        let kind = match &*format {
            "text" => "text",
            "media" => "image",
            _ => "json",
        };
        out.push(ckeys::OUTPUT_TYPE, Value::str(kind));
    }
}

/// `stopSequences`: an array of strings (other elements skipped), or one string.
fn stop_sequences(raw: Raw<'_>) -> Option<Value<'_>> {
    let text = raw.get();
    if text.starts_with('"') {
        return string(Some(raw)).map(|s| Value::Array(vec![Value::Str(s)]));
    }
    let items: Vec<Raw<'_>> = serde_json::from_str(text).ok()?;
    let mut values = Vec::new();
    values.try_reserve(items.len()).ok()?;
    for item in items {
        if let Some(s) = string(Some(item)) {
            values.push(Value::Str(s));
        }
    }
    Some(Value::Array(values))
}

fn map_model<'a>(
    span: &SpanInput<'a>,
    options: &Options,
    prices: &mut PriceCache,
    out: &mut Mapped<'a>,
    scrubber: Option<&Scrubber>,
    requests: Option<&mut Vec<ToolRequest<'a>>>,
) -> Result<(), NeedsJs> {
    out.push(sc::OPERATION_NAME, Value::str("chat"));
    let (prefix, model) = match span.name {
        Some(name) => match memchr::memchr(b'/', name.as_bytes()) {
            Some(i) if i + 1 < name.len() => (Some(&name[..i]), Some(&name[i + 1..])),
            Some(i) => (Some(&name[..i]), Some(name)),
            None => (Some(name), Some(name)),
        },
        None => (None, None),
    };
    let provider = prefix.map(provider_name);
    if let Some(p) = &provider {
        out.push(sc::PROVIDER_NAME, Value::Str(p.clone()));
    }
    if let Some(m) = model {
        out.push(sc::REQUEST_MODEL, Value::str(m));
    }

    // Input: messages, system instructions, request settings.
    if let Some(text) = span.input {
        // Read in place (`parse_into`): the shapes are hundreds of bytes, a move a `memcpy`.
        let mut request = None;
        let parsed = crate::genkit::parse_into::<Shape<Request<'a>>>(text, &mut request);
        match parsed.map(|()| request.as_ref()) {
            Ok(Some(Shape::Object(request))) => {
                let record = recording(span);
                let marks = MarkFor(crate::content::cap_of(options));
                map_input_messages(
                    request.messages.as_ref(),
                    Some(text),
                    out,
                    scrubber,
                    record,
                    marks,
                );
                map_request(request, out);
            }
            Ok(_) => map_input_messages(None, None, out, scrubber, None, MarkFor(None)),
            Err(_) => {
                out.problems |= parse_failure(text, problem::INPUT_NOT_JSON);
                if out.problems & problem::NEEDS_JS != 0 {
                    return Err(NeedsJs);
                }
            }
        }
    } else {
        map_input_messages(None, None, out, scrubber, None, MarkFor(None));
    }

    // Output: messages, finish reasons, tokens, cost, response id and model.
    let Some(text) = span.output else {
        return Ok(());
    };
    let mut parsed = None;
    let result = crate::genkit::parse_into::<Shape<Response<'a>>>(text, &mut parsed);
    let response = match result.map(|()| parsed.as_ref()) {
        Ok(Some(Shape::Object(response))) => response,
        Ok(_) => return Ok(()),
        Err(_) => {
            out.problems |= parse_failure(text, problem::OUTPUT_NOT_JSON);
            return if out.problems & problem::NEEDS_JS != 0 {
                Err(NeedsJs)
            } else {
                Ok(())
            };
        }
    };
    if let Some(requests) = requests {
        for request in tool_requests_in(&response.message, &response.candidates) {
            if requests.try_reserve(1).is_err() {
                break;
            }
            requests.push(request);
        }
    }
    let raw_meta = object(&response.raw);
    let custom_meta = object(&response.custom);
    let refused = [raw_meta, custom_meta].into_iter().flatten().any(refusal);
    let record = recording(span);
    let marks = MarkFor(crate::content::cap_of(options));
    map_answers(response, text, refused, out, scrubber, record, marks);

    let raw_usage = raw_meta
        .and_then(|m| object(&m.usage))
        .or_else(|| custom_meta.and_then(|m| object(&m.usage)));
    let family = prefix.map_or(Family::Other, family);
    let usage = usage_counts(family, object(&response.usage), raw_usage);
    for (key, v) in [
        (sc::USAGE_INPUT_TOKENS, usage.input_tokens),
        (sc::USAGE_OUTPUT_TOKENS, usage.output_tokens),
        (ckeys::CACHE_READ, usage.cache_read_input_tokens),
        (ckeys::CACHE_WRITE, usage.cache_write_input_tokens),
        (ckeys::REASONING, usage.reasoning_output_tokens),
    ] {
        if let Some(v) = v {
            out.push(key, Value::Int(v.min(i64::MAX as u64) as i64));
        }
    }
    let id = raw_meta
        .and_then(|m| string(m.id).or_else(|| string(m.response_id)))
        .or_else(|| custom_meta.and_then(|m| string(m.response_id).or_else(|| string(m.id))));
    if let Some(id) = id {
        out.push(ckeys::RESPONSE_ID, Value::Str(id));
    }
    let response_model = raw_meta
        .and_then(|m| string(m.model).or_else(|| string(m.model_version)))
        .or_else(|| custom_meta.and_then(|m| string(m.model_version).or_else(|| string(m.model))));
    // Rule 2: the response's (dated) model where the price data knows it, else the requested
    // one; at the span's end time (prices change over time), else now.
    if options.cost {
        if let (Some(p), Some(m)) = (prefix, model) {
            let at = span
                .end_time_unix_nano
                .map_or_else(std::time::SystemTime::now, |n| {
                    std::time::UNIX_EPOCH + std::time::Duration::from_nanos(n)
                });
            let cost = response_model
                .as_deref()
                .and_then(|r| prices.cost_usd_at(p, r, &usage, at))
                .or_else(|| prices.cost_usd_at(p, m, &usage, at));
            if let Some(cost) = cost.filter(|c| c.is_finite() && *c >= 0.0) {
                out.push(ckeys::COST, Value::Double(cost));
            }
        }
    }
    if let Some(m) = response_model {
        out.push(ckeys::RESPONSE_MODEL, Value::Str(m));
    }
    Ok(())
}

/// Which pieces the message writers record ([`SpanInput::record_copies`],
/// [`SpanInput::narrowed`]).
fn recording(span: &SpanInput<'_>) -> Option<Recording> {
    match span.narrowed {
        Some(placeholder) => Some(Recording::Holding(placeholder)),
        None => span
            .record_copies
            .then_some(Recording::Long(crate::out::MIN_COPIED)),
    }
}

/// Whether a message array's writer marks its messages for the size cap ([`Out::marking`]): the
/// cap in force ([`crate::content::cap_of`]; `None`: none, nothing to mark for).
#[derive(Debug, Clone, Copy)]
struct MarkFor(Option<usize>);

impl MarkFor {
    /// For an array estimated at `hint` bytes before it is written ([`sc::messages_bytes`]):
    /// from half the cap (a smaller one is capped only when scrubbing and escapes more than double
    /// it, and the cap then finds the messages itself). Marks cost an allocation; most arrays are
    /// far under the cap.
    fn wanted(self, hint: usize) -> bool {
        self.0.is_some_and(|max| hint >= max / 2)
    }
}

/// Pushes a finished JSON attribute (marked as scrubbed by its writer when `scrubbed`, see
/// [`Mapped::scrubbed`]), leaves it out when a value could not be scrubbed
/// ([`problem::CONTENT_WITHHELD`]), or flags [`problem::OUT_OF_MEMORY`] (with `NEEDS_JS`: the
/// span goes another way, as the reference mapping does) when a growth failed.
fn push_json<'a>(out: &mut Mapped<'a>, key: &'static str, mut text: Out<'_>, scrubbed: bool) {
    let mut copies = Vec::new();
    let elements = text.take_elements();
    if text.wrote_media() {
        out.media |= crate::content::content_bit(key);
    }
    match finish_recorded(text, &mut out.problems, &mut copies) {
        Ok(Some(text)) => {
            out.push_written(key, Value::Str(Cow::Owned(text)), scrubbed);
            // The writer's marks of a message array, for its size cap (none lost: the cap
            // finds the messages itself then).
            if let Some(elements) = elements.filter(|e| !e.is_empty()) {
                if out.elements.try_reserve(1).is_ok() {
                    out.elements.push((key, elements));
                }
            }
            // Recorded pieces only (none when not recording); losing them costs speed, not the
            // attribute.
            if !copies.is_empty() && out.copies.try_reserve(1).is_ok() {
                out.copies.push((key, copies));
            }
        }
        Ok(None) => {}
        Err(OutOfMemory) => out.problems |= problem::OUT_OF_MEMORY | problem::NEEDS_JS,
    }
}

/// `gen_ai.input.messages` and `gen_ai.system_instructions` of the request's `messages`, read
/// from `source` (`genkit:input`), scrubbed with `scrubber` as they are written.
fn map_input_messages<'a>(
    messages: Option<&ArrayShape<Shape<Message<'a>>>>,
    source: Option<&str>,
    out: &mut Mapped<'a>,
    scrubber: Option<&Scrubber>,
    record: Option<Recording>,
    marks: MarkFor,
) {
    let messages: &[Shape<Message<'a>>] = match messages {
        None | Some(ArrayShape::Null) => &[],
        Some(ArrayShape::Array(m)) => m,
        Some(ArrayShape::Other) => {
            out.problems |= problem::INPUT_SHAPE;
            return;
        }
    };
    if check_messages(messages).is_err() {
        out.problems |= problem::INPUT_SHAPE;
        return;
    }
    let (conversation, system_bytes) = sc::messages_bytes(messages);
    let written_from = source.unwrap_or("");
    let region =
        Extent::of_messages(messages.iter().filter_map(Shape::object)).in_source(written_from);
    let source = SourceScrubber::of_region(scrubber, written_from, region);
    let mut text = Out::with_hint(conversation)
        .scrubbing(source.as_ref())
        .recording(record, written_from);
    if marks.wanted(conversation) {
        text = text.marking();
    }
    let mut system = Out::with_hint(if system_bytes > 2 { system_bytes } else { 0 })
        .scrubbing(source.as_ref())
        .recording(record, written_from);
    text.push('[');
    let mut first_system = true;
    for message in messages {
        let Shape::Object(message) = message else {
            continue;
        };
        if message.role.is_some_and(|r| raw_is_str(r, "system")) {
            if system.is_empty() {
                system.push('[');
            }
            if sc::write_parts_with(&mut system, message, first_system, Some(write_media_part)) {
                first_system = false;
            }
        } else {
            if text.len() > 1 {
                text.push(',');
            }
            let start = text.len();
            write_message(&mut text, message, None);
            text.element_from(start);
        }
    }
    text.push(']');
    let scrubbed = scrubber.is_some();
    push_json(out, sc::INPUT_MESSAGES, text, scrubbed);
    if !first_system {
        system.push(']');
        push_json(out, sc::SYSTEM_INSTRUCTIONS, system, scrubbed);
    }
}

/// An answer message (top-level or candidate): `None` when absent or falsy, `Err` when it has a
/// shape the reference throws on.
fn answer<'s, 'a>(message: &'s Option<Shape<Message<'a>>>) -> Option<Result<&'s Message<'a>, ()>> {
    match message {
        Some(shape @ Shape::Object(m)) => Some(
            crate::semconv::check_message(shape)
                .map(|()| m)
                .map_err(|_| ()),
        ),
        Some(Shape::Other { truthy: true }) => Some(Err(())),
        _ => None,
    }
}

/// Output messages and finish reasons (rules 7, 8): the top-level `message`, else one message per
/// candidate with a message; each with its finish reason in the semconv vocabulary; the
/// `gen_ai.response.finish_reasons` list has one entry per output message (or the response's own
/// reason when there is no output message).
fn map_answers<'a>(
    response: &Response<'a>,
    source: &str,
    refused: bool,
    out: &mut Mapped<'a>,
    scrubber: Option<&Scrubber>,
    record: Option<Recording>,
    marks: MarkFor,
) {
    // ok: at most one entry per candidate kept by the reader.
    let mut answers: Vec<(&Message<'a>, Option<Raw<'a>>)> = Vec::new();
    match answer(&response.message) {
        Some(Ok(m)) => answers.push((m, response.finish_reason)),
        Some(Err(())) => out.problems |= problem::OUTPUT_SHAPE,
        None => {
            if let Some(ArrayShape::Array(candidates)) = &response.candidates {
                if answers.try_reserve(candidates.len()).is_err() {
                    out.problems |= problem::OUTPUT_SHAPE;
                    return;
                }
                for c in candidates {
                    let Shape::Object(c) = c else { continue };
                    match answer(&c.message) {
                        None => {}
                        Some(Err(())) => {
                            out.problems |= problem::OUTPUT_SHAPE;
                            answers.clear();
                            break;
                        }
                        Some(Ok(m)) => {
                            answers.push((m, c.finish_reason.or(response.finish_reason)))
                        }
                    }
                }
            }
        }
    }
    let mut reasons = Vec::new();
    let reason_of = |raw: Option<Raw<'a>>, asks: bool| {
        if refused && !asks {
            Some(Cow::Borrowed("content_filter"))
        } else {
            finish_reason(raw, asks)
        }
    };
    if answers.is_empty() {
        if let Some(r) = reason_of(response.finish_reason, false) {
            reasons.push(Value::Str(r));
        }
    } else {
        let region = Extent::of_messages(answers.iter().map(|(m, _)| *m)).in_source(source);
        let scrub = SourceScrubber::of_region(scrubber, source, region);
        let hint = answers.iter().fold(2usize, |sum, (m, _)| {
            sum.saturating_add(sc::message_bytes(m))
        });
        let mut text = Out::with_hint(hint)
            .scrubbing(scrub.as_ref())
            .recording(record, source);
        if marks.wanted(hint) {
            text = text.marking();
        }
        if reasons.try_reserve(answers.len()).is_err() {
            out.problems |= problem::OUTPUT_SHAPE;
            return;
        }
        text.push('[');
        for (i, (message, reason)) in answers.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            let reason = reason_of(*reason, asks_for_tools(message))
                .unwrap_or(Cow::Borrowed(UNKNOWN_REASON));
            let start = text.len();
            write_message(&mut text, message, Some(&reason));
            text.element_from(start);
            reasons.push(Value::Str(reason));
        }
        text.push(']');
        push_json(out, sc::OUTPUT_MESSAGES, text, scrubber.is_some());
    }
    if !reasons.is_empty() {
        out.push(sc::RESPONSE_FINISH_REASONS, Value::Array(reasons));
    }
}

/// Whether the provider's response says the model refused (rule 8: `content_filter`): Anthropic's
/// `stop_reason: "refusal"` (the anthropic plugin reports `other`), OpenAI's
/// `finish_reason: "content_filter"` or a `message.refusal` (compat-oai reports `stop`).
fn refusal(meta: &Meta<'_>) -> bool {
    if string(meta.stop_reason).as_deref() == Some("refusal") {
        return true;
    }
    let Some(ArrayShape::Array(choices)) = &meta.choices else {
        return false;
    };
    choices.iter().any(|c| match c {
        Shape::Object(c) => {
            string(c.finish_reason).as_deref() == Some("content_filter")
                || object(&c.message)
                    .and_then(|m| m.refusal)
                    .is_some_and(|r| r.get() != "null")
        }
        _ => false,
    })
}

/// The finish reason of an output message whose plugin reported none (Genkit's own word for it).
pub const UNKNOWN_REASON: &str = "unknown";

/// Whether a message asks for a tool (has a `toolRequest` part).
fn asks_for_tools(message: &Message<'_>) -> bool {
    match &message.content {
        Some(ArrayShape::Array(parts)) => parts.iter().any(|p| {
            matches!(
                p,
                Shape::Object(Part {
                    tool_request: Some(Shape::Object(_)),
                    ..
                })
            )
        }),
        _ => false,
    }
}

/// Rule 8: a Genkit finish reason in the semconv vocabulary (`stop`, `length`, `content_filter`,
/// `tool_call`, `error`): `blocked` -> `content_filter`; an answer that asks for tools ->
/// `tool_call` (plugins report `stop` there; `interrupted`, `other`, `unknown` and none too);
/// others pass through. `None` when not a string and the answer asks for no tool.
pub fn finish_reason<'a>(raw: Option<Raw<'a>>, asks_tools: bool) -> Option<Cow<'a, str>> {
    let reason = string(raw);
    let mapped = match reason.as_deref() {
        Some("blocked") => "content_filter",
        Some("length") => "length",
        Some("error") => "error",
        Some("stop" | "interrupted" | "other" | "unknown") | None if asks_tools => "tool_call",
        Some("stop") => "stop",
        _ => return reason,
    };
    Some(Cow::Borrowed(mapped))
}

/// Writes one GenAI message, complete mode: [`crate::semconv`]'s writer with media parts kept
/// (rule 7) and the finish reason in the semconv vocabulary (rule 8).
fn write_message(out: &mut Out, message: &Message<'_>, finish_reason: Option<&str>) {
    sc::write_message_with(
        out,
        message,
        finish_reason.map(sc::Reason::Text),
        Some(write_media_part),
    );
}

/// The parts complete mode keeps beyond seed 000's (rule 7): a media part, as a `blob` or `uri`
/// part without its bytes. Returns the new `first` flag.
fn write_media_part(out: &mut Out, part: &Part<'_>, first: bool) -> bool {
    match object(&part.media).and_then(media_part) {
        Some(media) => {
            sc::comma(out, first);
            out.note_media();
            write_media(out, &media);
            false
        }
        None => first,
    }
}

/// What a media URL is.
#[derive(Debug, PartialEq, Eq)]
pub struct MediaInfo<'a> {
    /// The MIME type as JSON string source text (escaped form, no quotes), when known.
    pub mime: Option<&'a str>,
    /// For a `data:` URL: the decoded size in bytes; `None` for a remote URL.
    pub data_size: Option<u64>,
}

/// Reads a media URL given as the source text of a JSON string without its quotes (escaped form,
/// never unescaped or copied): a `data:` URL's MIME type and decoded size, or a remote URL.
/// `None` for a `data:` URL without a `,`.
pub fn media_info(escaped: &str) -> Option<MediaInfo<'_>> {
    if !is_data_url(escaped) {
        return Some(MediaInfo {
            mime: None,
            data_size: None,
        });
    }
    let comma = escaped.find(',')?;
    let (mime, size) = data_url_info(&escaped[5..comma], &escaped[comma + 1..]);
    Some(MediaInfo {
        mime,
        data_size: Some(size),
    })
}

/// Whether `url` (its first five characters) starts with `data:`, in any case.
fn is_data_url(url: &str) -> bool {
    url.as_bytes()
        .get(..5)
        .is_some_and(|head| head.eq_ignore_ascii_case(b"data:"))
}

/// A `data:` URL's MIME type and decoded size from its header (between `data:` and the comma,
/// without escapes: as written, or decoded) and its payload (escaped form, [`decoded_size`]).
fn data_url_info<'h>(header: &'h str, payload: &str) -> (Option<&'h str>, u64) {
    let mime = header.split(';').next().filter(|m| !m.is_empty());
    let base64 = header
        .rsplit(';')
        .next()
        .is_some_and(|p| p.eq_ignore_ascii_case("base64"));
    (mime, decoded_size(payload, base64))
}

/// Whether `bytes` hold a byte at or below a space (whitespace) and whether they hold a backslash
/// (an escape): one OR reduction over blocks of 64 bytes, which the compiler vectorises (a data
/// URL's payload can be megabytes; a byte-by-byte count cost one instruction a byte).
fn scan_base64(bytes: &[u8]) -> (bool, bool) {
    let flags = |block: &[u8]| {
        block.iter().fold(0u8, |acc, &b| {
            acc | u8::from(b <= b' ') | (u8::from(b == b'\\') << 1)
        })
    };
    let mut seen = 0u8;
    let mut blocks = bytes.chunks_exact(64);
    for block in &mut blocks {
        seen |= flags(block);
    }
    seen |= flags(blocks.remainder());
    (seen & 1 != 0, seen & 2 != 0)
}

/// The decoded size of a `data:` URL payload given in JSON-escaped form: base64 (padding and
/// whitespace excluded, `len * 3 / 4`) or percent-encoded (`%XX` is one byte). JSON escapes count
/// as the one character they stand for. One pass, no allocation.
fn decoded_size(payload: &str, base64: bool) -> u64 {
    let bytes = payload.as_bytes();
    let mut chars: u64 = 0;
    let mut i = 0;
    // One vectorisable pass: bytes at or below a space (whitespace; JSON has no raw control
    // characters in a string) and backslashes (escapes).
    let (whitespace, escapes) = if base64 {
        scan_base64(bytes)
    } else {
        (false, true)
    };
    if base64 && !escapes {
        let data = if !whitespace {
            bytes.len() as u64
        } else {
            bytes.iter().filter(|b| !b.is_ascii_whitespace()).count() as u64
        };
        let pad = bytes
            .iter()
            .rev()
            .take_while(|&&b| b == b'=' || b.is_ascii_whitespace())
            .filter(|&&b| b == b'=')
            .count() as u64;
        return (data - pad.min(data)) * 3 / 4;
    }
    let mut pad = 0u64;
    while i < bytes.len() {
        let (c, step) = if bytes[i] == b'\\' {
            match bytes.get(i + 1) {
                Some(b'u') => (b'?', 6),
                Some(&e) => (
                    match e {
                        b'n' | b'r' | b't' => b' ',
                        b'/' => b'/',
                        other => other,
                    },
                    2,
                ),
                None => (b'?', 1),
            }
        } else {
            (bytes[i], 1)
        };
        i += step;
        if base64 {
            if c.is_ascii_whitespace() {
                continue;
            }
            if c == b'=' {
                pad += 1;
            } else {
                pad = 0;
            }
            chars += 1;
        } else if c == b'%' && i + 1 < bytes.len() {
            chars += 1;
            i += 2;
        } else {
            chars += 1;
        }
    }
    if base64 {
        (chars - pad.min(chars)) * 3 / 4
    } else {
        chars
    }
}

/// Rule 7 (seed 004): a media part as a GenAI part. A remote URL: `{"type":"uri","modality",
/// "mime_type","uri"}`; a `data:` URL: `{"type":"blob","modality","mime_type","size"}` where `size`
/// is the decoded size in bytes and the bytes themselves are never written. `modality` is
/// `image`, `audio` or `video` from the MIME type (`contentType`, else the `data:` header), left
/// out for other types. Returns `false` (nothing usable written) when `url` is not a string or is
/// a `data:` URL without a `,`.
///
/// What a URL is and its MIME types are read from the decoded text: a header or a `contentType`
/// spelled with escapes (`d\u0061ta:`, `;b\u0061se64`, `image\/png`, which `JSON.stringify`
/// never writes but hand-made JSON may) is a `data:` URL, base64, an image all the same, so its
/// bytes are never copied as a `uri`.
fn media_part<'a>(media: &Media<'a>) -> Option<MediaPart<'a>> {
    let url = media.url.filter(|u| u.get().starts_with('"'))?;
    let text = url.get();
    let inner = &text[1..text.len() - 1];
    let head_end = memchr::memchr(b',', inner.as_bytes()).unwrap_or(inner.len());
    let (mime, data_size) = if memchr::memchr(b'\\', &inner.as_bytes()[..head_end]).is_none() {
        let info = media_info(inner)?;
        (info.mime.map(Cow::Borrowed), info.data_size)
    } else {
        decoded_media_info(inner)?
    };
    let content_type = media
        .content_type
        .filter(|c| c.get().starts_with('"') && c.get().len() > 2)
        .and_then(|c| crate::jsonstr::decode(c.get()).ok());
    Some(MediaPart {
        url: text,
        mime: content_type.or(mime),
        data_size,
    })
}

/// The longest decoded header (before the comma) of a `data:` URL with escapes in it that
/// [`decoded_media_info`] reads; a longer one makes the part unusable (left out, never copied).
const MEDIA_HEAD_MAX: usize = 1024;

/// [`media_info`] of a URL whose header holds an escape (`inner`: the JSON string's source text
/// without quotes): the header decoded unit by unit up to its first comma (one written `\u002c`
/// too), then the payload measured in its escaped form. The MIME type is decoded text. `None`
/// for a `data:` URL without a comma, a header with a bad or lone surrogate escape, or one longer
/// than [`MEDIA_HEAD_MAX`] bytes, or when the header's buffer cannot be allocated.
fn decoded_media_info(inner: &str) -> Option<(Option<Cow<'_, str>>, Option<u64>)> {
    let mut head = String::new();
    let mut i = 0;
    let payload = loop {
        if i >= inner.len() {
            break None;
        }
        let (unit, len) = crate::jsonstr::unit_at(inner, i);
        let crate::jsonstr::Unit::Char(c) = unit else {
            return None;
        };
        i += len;
        if c == ',' {
            break Some(i);
        }
        if head.len() >= MEDIA_HEAD_MAX || head.try_reserve(c.len_utf8()).is_err() {
            return None;
        }
        head.push(c);
        // A remote URL once its first five characters are not `data:`: written as it is.
        if head.len() >= 5 && !is_data_url(&head) {
            return Some((None, None));
        }
    };
    if !is_data_url(&head) {
        return Some((None, None));
    }
    let (mime, size) = data_url_info(&head[5..], &inner[payload?..]);
    // Bounded by MEDIA_HEAD_MAX, as the header itself.
    let mime = mime.map(|m| Cow::Owned(m.to_owned()));
    Some((mime, Some(size)))
}

/// A media part that can be written: the URL (JSON source text), its MIME type (decoded text)
/// and, for a `data:` URL, the decoded size.
struct MediaPart<'a> {
    url: &'a str,
    mime: Option<Cow<'a, str>>,
    data_size: Option<u64>,
}

fn write_media(out: &mut Out, media: &MediaPart<'_>) {
    let (text, mime) = (media.url, media.mime.as_deref());
    let info = media;
    out.push_str(if info.data_size.is_some() {
        r#"{"type":"blob""#
    } else {
        r#"{"type":"uri""#
    });
    if let Some(mime) = mime {
        let head = mime.as_bytes().get(..6).unwrap_or(b"");
        for modality in ["image", "audio", "video"] {
            if head.len() == 6
                && head[..5].eq_ignore_ascii_case(modality.as_bytes())
                && head[5] == b'/'
            {
                out.push_str(",\"modality\":\"");
                out.push_str(modality);
                out.push('"');
            }
        }
        out.push_str(",\"mime_type\":\"");
        out.push_text(mime);
        out.push('"');
    }
    match info.data_size {
        Some(size) => {
            out.push_str(",\"size\":");
            out.push_str(&size.to_string());
        }
        None => {
            out.push_str(",\"uri\":");
            out.push_value(text);
        }
    }
    out.push('}');
}

// ---------------------------------------------------------------------------------------------
// Tool spans.

/// Tool spans, `tool` and `tool.v2` (rule 6): `execute_tool`, the name, the arguments
/// (`genkit:input`, `"{}"` when absent, a number or a boolean as it is, left out for another
/// type: [`crate::span::OtherInput`]) and the result. A `tool.v2` result: its `output` as a
/// `tool` result when it has no content parts, else the JSON `{"output","content":[GenAI parts]}`
/// (media as rule 7: no bytes).
fn map_tool<'a>(
    span: &SpanInput<'a>,
    out: &mut Mapped<'a>,
    scrubber: Option<&Scrubber>,
) -> Result<(), NeedsJs> {
    out.push(sc::OPERATION_NAME, Value::str("execute_tool"));
    if let Some(name) = span.name {
        out.push(keys::TOOL_NAME, Value::str(name));
    }
    // Another type than a string, a number or a boolean: left out (`OtherInput`).
    match span.tool_arguments() {
        Some(value) => out.push(keys::TOOL_CALL_ARGUMENTS, value),
        None => out.problems |= problem::ATTRIBUTE_TYPE,
    }
    let Some(output) = span.output else {
        return Ok(());
    };
    if span.subtype == Some("tool.v2") {
        if let Ok(Shape::Object(multipart)) = crate::genkit::parse::<Shape<Multipart<'a>>>(output) {
            let parts = match &multipart.content {
                Some(ArrayShape::Array(parts)) if !parts.is_empty() => Some(parts),
                _ => None,
            };
            match (parts, multipart.output) {
                (Some(parts), value) => {
                    let source = SourceScrubber::of(scrubber, Some(output));
                    let mut text = Out::with_hint(output.len() / 2 + 16).scrubbing(source.as_ref());
                    text.push('{');
                    if let Some(value) = value {
                        text.push_str("\"output\":");
                        text.push_value(value.get());
                        text.push(',');
                    }
                    text.push_str("\"content\":[");
                    sc::write_part_list(&mut text, parts, true, Some(write_media_part));
                    text.push_str("]}");
                    push_json(out, sc::TOOL_CALL_RESULT, text, scrubber.is_some());
                    return if out.problems & problem::NEEDS_JS != 0 {
                        Err(NeedsJs)
                    } else {
                        Ok(())
                    };
                }
                (None, Some(value)) => return tool_result(value.get(), out),
                (None, None) => {}
            }
        }
    }
    tool_result(output, out)
}

/// `gen_ai.tool.call.result` of a tool output (seed 000: a JSON string as its text).
fn tool_result<'a>(output: &'a str, out: &mut Mapped<'a>) -> Result<(), NeedsJs> {
    use crate::mapping::{map_tool_result, ToolResult};
    match map_tool_result(output) {
        ToolResult::Invalid => out.problems |= problem::TOOL_OUTPUT_NOT_JSON,
        ToolResult::NeedsJs => return Err(NeedsJs),
        ToolResult::OutOfMemory => {
            out.problems |= problem::OUT_OF_MEMORY;
            return Err(NeedsJs);
        }
        ToolResult::Text(text) => out.push(sc::TOOL_CALL_RESULT, Value::Str(text)),
        ToolResult::Json(json) => out.push(sc::TOOL_CALL_RESULT, Value::str(json)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::genkit::tests::{agrees, genkit_like, mutated};

    /// Complete mode's shapes read by `genkit::parse` as serde_json reads them (the fast reader's
    /// differential test, `genkit::tests`, with this mode's keys among the generated ones).
    #[test]
    fn complete_modes_shapes_read_as_serde_json_reads_them() {
        let mut next = crate::lcg(10);
        for round in 0..20_000 {
            let mut text = genkit_like(&mut next, 0);
            if round % 3 == 0 {
                text = mutated(&mut next, &text);
            }
            agrees::<Shape<Request<'_>>>(&text);
            agrees::<Shape<Response<'_>>>(&text);
            agrees::<Shape<Multipart<'_>>>(&text);
        }
    }
}
