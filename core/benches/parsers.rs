//! `cargo bench -p genkit-for-maple-core`: the conversion core alone, on the parser choice.
//!
//! - `serde_json`: the core as it ships ([`map_model`]: typed borrowed structs, `&RawValue`
//!   passthrough of text and tool payloads, one output buffer).
//! - `simd_json`: the same model-span conversion (input messages, system instructions, output
//!   message) on a `simd_json::BorrowedValue` tree parsed in place from a reused buffer with
//!   reused `Buffers`; values are written back with simd-json's own serialiser, since it has no
//!   raw passthrough. Its output is checked equal to the core's before timing. The copy of the
//!   input into the mutable buffer simd-json needs is done in criterion's untimed setup.
//!
//! Inputs: Genkit-shaped `genkit:input`/`genkit:output` pairs (system message, user/model turns
//! with reasoning, text and toolRequest parts, tool messages with nested toolResponse output,
//! tools with JSON schemas, config) at about 1 KB, 10 KB, 100 KB and 1 MB, ASCII and multi-byte.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use genkit_for_maple_core::map_model;
use serde_json::json;
use simd_json::prelude::*;
use simd_json::{BorrowedValue, Buffers};
use std::hint::black_box;

const ASCII: &[&str] = &[
    "the",
    "weather",
    "in",
    "paris",
    "is",
    "mild",
    "today",
    "with",
    "light",
    "rain",
    "booking",
    "reference",
    "itinerary",
    "flight",
    "hotel",
    "train",
    "price",
    "forecast",
    "museum",
    "ticket",
];
const MULTI: &[&str] = &[
    "東京の天気は晴れ",
    "明日は雨が降るでしょう",
    "서울의 날씨",
    "😀",
    "🚆",
    "👍🏽",
    "café",
    "crème brûlée",
    "Zürich",
    "naïve",
    "the",
    "weather",
    "€42",
    "«bonjour»",
];

struct Words {
    list: &'static [&'static str],
    state: u64,
}

impl Words {
    fn take(&mut self, n: usize) -> String {
        let mut out = String::new();
        for i in 0..n {
            self.state = self
                .state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let index = (self.state >> 33) as usize % self.list.len();
            if i > 0 {
                out.push(' ');
            }
            out.push_str(self.list[index]);
            if (self.state >> 20).is_multiple_of(50) {
                out.push_str("\n\"quoted\"");
            }
        }
        out
    }
}

/// A `genkit:input` of about `size` bytes and its `genkit:output`.
fn span(size: usize, multi: bool) -> (String, String) {
    let mut w = Words {
        list: if multi { MULTI } else { ASCII },
        state: size as u64,
    };
    let scale = ((size as f64 / 1000.0).sqrt().round() as usize).max(1);
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["metric", "imperial"]}},
        "required": ["city"], "additionalProperties": true,
        "$schema": "http://json-schema.org/draft-07/schema#"
    });
    let mut messages = vec![
        json!({"role": "system", "content": [{"text": format!("You are a travel assistant. {}", w.take(8 * scale))}]}),
    ];
    let mut len = 600;
    let mut turn = 0;
    while len < size {
        let id = format!("call_{turn}_0");
        let turn_messages = [
            json!({"role": "user", "content": [{"text": w.take(6 * scale)}]}),
            json!({"role": "model", "content": [
                {"reasoning": w.take(4 * scale)},
                {"text": w.take(2 * scale)},
                {"toolRequest": {"ref": id, "name": "getWeather", "input": {"city": w.take(1), "options": {"days": 3, "detail": [1, 2, 3]}}}}
            ]}),
            json!({"role": "tool", "content": [{"toolResponse": {"ref": id, "name": "getWeather", "output": {
                "city": w.take(1), "tempC": 21.5, "conditions": w.take(3), "humid": true,
                "forecast": [{"day": "mon", "highC": 21.5, "note": w.take(scale)}, {"day": "tue", "highC": 19}]
            }}}]}),
            json!({"role": "model", "content": [{"text": w.take(8 * scale)}]}),
        ];
        for m in turn_messages {
            len += m.to_string().len() + 1;
            messages.push(m);
        }
        turn += 1;
    }
    let input = json!({
        "messages": messages,
        "config": {"temperature": 0.2, "maxOutputTokens": 1024},
        "tools": [{"name": "getWeather", "description": "Current weather", "inputSchema": schema, "outputSchema": schema}],
        "output": {"format": "text"}
    });
    let output = json!({
        "message": {"role": "model", "content": [{"reasoning": w.take(2 * scale)}, {"text": w.take((size / 60).max(8))}]},
        "finishReason": "stop",
        "usage": {"inputTokens": size / 4, "outputTokens": 100, "totalTokens": size / 4 + 100},
        "custom": {"responseId": "resp-1"},
        "latencyMs": 812.5
    });
    (input.to_string(), output.to_string())
}

// ------------------------------------------------------------------------------------------
// The simd-json version of the model-span conversion (the rules of core/src/mapping.rs for
// well-formed Genkit spans; degradation paths left out).

fn write_value(out: &mut Vec<u8>, value: &BorrowedValue<'_>) {
    // Writing into a Vec cannot fail.
    let _ = value.write(out);
}

fn truthy(value: &BorrowedValue<'_>) -> bool {
    match value {
        BorrowedValue::Static(s) => match s {
            simd_json::StaticNode::Null => false,
            simd_json::StaticNode::Bool(b) => *b,
            simd_json::StaticNode::I64(n) => *n != 0,
            simd_json::StaticNode::U64(n) => *n != 0,
            simd_json::StaticNode::F64(n) => *n != 0.0,
        },
        BorrowedValue::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn field(out: &mut Vec<u8>, key: &str, value: Option<&BorrowedValue<'_>>) {
    if let Some(value) = value {
        out.extend_from_slice(b",\"");
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        write_value(out, value);
    }
}

/// Appends the parts of `content`; returns whether any was written.
fn write_parts(out: &mut Vec<u8>, content: Option<&BorrowedValue<'_>>, mut first: bool) -> bool {
    let Some(parts) = content.and_then(|c| c.as_array()) else {
        return !first;
    };
    for part in parts {
        if part.as_object().is_none() {
            continue;
        }
        let start = |out: &mut Vec<u8>, first: bool| {
            if !first {
                out.push(b',');
            }
        };
        if let Some(text) = part.get("text") {
            start(out, first);
            out.extend_from_slice(br#"{"type":"text","content":"#);
            write_value(out, text);
            out.push(b'}');
        } else if let Some(reasoning) = part.get("reasoning") {
            start(out, first);
            out.extend_from_slice(br#"{"type":"reasoning","content":"#);
            write_value(out, reasoning);
            out.push(b'}');
        } else if let Some(request) = part.get("toolRequest").filter(|v| truthy(v)) {
            start(out, first);
            out.extend_from_slice(br#"{"type":"tool_call""#);
            field(out, "id", request.get("ref"));
            field(out, "name", request.get("name"));
            field(out, "arguments", request.get("input"));
            out.push(b'}');
        } else if let Some(response) = part.get("toolResponse").filter(|v| truthy(v)) {
            start(out, first);
            out.extend_from_slice(br#"{"type":"tool_call_response""#);
            field(out, "id", response.get("ref"));
            field(out, "response", response.get("output"));
            out.push(b'}');
        } else {
            continue;
        }
        first = false;
    }
    !first
}

fn write_message(
    out: &mut Vec<u8>,
    message: &BorrowedValue<'_>,
    finish: Option<&BorrowedValue<'_>>,
) {
    out.push(b'{');
    if let Some(role) = message.get("role") {
        out.extend_from_slice(b"\"role\":");
        if role.as_str() == Some("model") {
            out.extend_from_slice(b"\"assistant\"");
        } else {
            write_value(out, role);
        }
        out.push(b',');
    }
    out.extend_from_slice(b"\"parts\":[");
    write_parts(out, message.get("content"), true);
    out.push(b']');
    field(out, "finish_reason", finish);
    out.push(b'}');
}

/// (input messages, system instructions, output messages) of a model span, via simd-json.
fn simd_map_model(
    input: &mut [u8],
    output: &mut [u8],
    buffers: &mut Buffers,
) -> (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>) {
    let mut messages_out = Vec::with_capacity(input.len() / 2 + 2);
    let mut system = Vec::new();
    if let Ok(request) = simd_json::to_borrowed_value_with_buffers(input, buffers) {
        messages_out.push(b'[');
        let mut first_message = true;
        let mut first_system = true;
        for message in request
            .get("messages")
            .and_then(|m| m.as_array())
            .into_iter()
            .flatten()
        {
            if message.get("role").and_then(|r| r.as_str()) == Some("system") {
                if system.is_empty() {
                    system.push(b'[');
                }
                if write_parts(&mut system, message.get("content"), first_system) {
                    first_system = false;
                }
            } else {
                if !first_message {
                    messages_out.push(b',');
                }
                first_message = false;
                write_message(&mut messages_out, message, None);
            }
        }
        messages_out.push(b']');
        if first_system {
            system.clear();
        } else {
            system.push(b']');
        }
    }
    let mut output_messages = None;
    let output_len = output.len();
    if let Ok(response) = simd_json::to_borrowed_value_with_buffers(output, buffers) {
        if let Some(message) = response.get("message").filter(|m| truthy(m)) {
            let mut out = Vec::with_capacity(output_len / 2 + 2);
            out.push(b'[');
            write_message(&mut out, message, response.get("finishReason"));
            out.push(b']');
            output_messages = Some(out);
        }
    }
    (
        messages_out,
        (!system.is_empty()).then_some(system),
        output_messages,
    )
}

fn bench(c: &mut Criterion) {
    let sizes: &[usize] = &[1_000, 10_000, 100_000, 1_000_000];
    for &multi in &[false, true] {
        let script = if multi { "multibyte" } else { "ascii" };
        let mut group = c.benchmark_group(format!("model_span_{script}"));
        group.sample_size(20);
        for &size in sizes {
            let (input, output) = span(size, multi);
            let mut buffers = Buffers::new(input.len());

            // The two must agree before their times mean anything.
            let reference = map_model(Some(&input), Some(&output));
            let mut i = input.clone().into_bytes();
            let mut o = output.clone().into_bytes();
            let (messages, system, answer) = simd_map_model(&mut i, &mut o, &mut buffers);
            assert_eq!(
                reference.input_messages.as_deref().map(str::as_bytes),
                Some(&messages[..])
            );
            assert_eq!(
                reference.system_instructions.as_deref().map(str::as_bytes),
                system.as_deref()
            );
            assert_eq!(
                reference.output_messages.as_deref().map(str::as_bytes),
                answer.as_deref()
            );

            group.throughput(Throughput::Bytes((input.len() + output.len()) as u64));
            group.bench_with_input(BenchmarkId::new("serde_json", size), &size, |b, _| {
                b.iter(|| map_model(Some(black_box(&input)), Some(black_box(&output))))
            });
            group.bench_with_input(BenchmarkId::new("simd_json", size), &size, |b, _| {
                b.iter_batched_ref(
                    // Untimed: simd-json parses in place, so it gets a fresh mutable copy.
                    || (input.as_bytes().to_vec(), output.as_bytes().to_vec()),
                    |(i, o)| simd_map_model(i, o, &mut buffers),
                    BatchSize::SmallInput,
                )
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
