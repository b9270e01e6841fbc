//! `cargo bench -p genkit-for-maple-core --bench content`: the cost of content control (issue 11)
//! next to the mapping itself, on `gen_ai.input.messages` of about 1 KB, 100 KB and 5 MB (ASCII and
//! multi-byte text, `\n` and `\"` escapes as Genkit's `JSON.stringify` writes them):
//!
//! - `map_model`: the core's model-span mapping of the matching `genkit:input` (the baseline).
//! - `scrub_clean`: [`Scrubber::json`] with the default patterns over the written attribute when
//!   nothing matches (the common case: every string literal checked by one `RegexSet` scan).
//! - `scrub_secret`: the same with one OpenAI key and one JWT in the newest message.
//! - `scrub_tool_clean`: [`Scrubber::json`] over a tool result of the same size, an array of small
//!   objects whose every 20th `note` holds look-alikes (`task-force`, `sk-learn`, "the bearer of
//!   good news", "authorization pending") that pass the prefilter and run the patterns.
//! - `cap`: [`cap_messages`] at the default cap (256 KiB): a length check under it, dropping the
//!   oldest messages above it.
//! - `in_pass_clean` / `in_pass_secret`: the mapping with scrubbing in the writers' pass
//!   ([`map_model_scrubbed`], what the processor runs), without and with the two secrets;
//!   `post_pass_clean` / `post_pass_secret`: the order before it, [`map_model`] then
//!   [`Scrubber::json`] over the written attribute. Both give the same text (checked).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use genkit_for_maple_core::cap::{cap_messages, DEFAULT_MAX_CONTENT_BYTES};
use genkit_for_maple_core::scrub::Scrubber;
use genkit_for_maple_core::{map_model, map_model_scrubbed};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;

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
    "task-force",
    "sk-learn",
    "bearer",
    "price",
];
const MULTI: &[&str] = &[
    "東京の天気は晴れ",
    "明日は雨が降るでしょう",
    "서울의 날씨",
    "😀",
    "café",
    "Zürich",
    "the",
    "€42",
];

fn words(list: &[&str], state: &mut u64, n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if i > 0 {
            out.push(' ');
        }
        out.push_str(list[(*state >> 33) as usize % list.len()]);
        if (*state >> 20).is_multiple_of(40) {
            out.push_str("\n\"quoted\"");
        }
    }
    out
}

/// A Genkit `genkit:input` whose messages are about `size` bytes; with `secret`, the newest user
/// message holds an OpenAI key and a JWT.
fn genkit_input(size: usize, multi: bool, secret: bool) -> String {
    let list = if multi { MULTI } else { ASCII };
    let mut state = size as u64;
    let mut messages =
        vec![json!({"role": "system", "content": [{"text": "You are a travel assistant."}]})];
    let mut len = 0;
    while len < size {
        for m in [
            json!({"role": "user", "content": [{"text": words(list, &mut state, 30)}]}),
            json!({"role": "model", "content": [{"text": words(list, &mut state, 40)},
                {"toolRequest": {"ref": "c1", "name": "getWeather", "input": {"city": words(list, &mut state, 1)}}}]}),
            json!({"role": "tool", "content": [{"toolResponse": {"ref": "c1", "name": "getWeather", "output": {"note": words(list, &mut state, 10), "tempC": 21.5}}}]}),
        ] {
            len += m.to_string().len();
            messages.push(m);
        }
    }
    if secret {
        messages.push(json!({"role": "user", "content": [{"text": "my key is sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x and token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcDEF123"}]}));
    }
    json!({"messages": messages, "config": {"temperature": 0.2}}).to_string()
}

/// A tool result of about `size` bytes: `{"items":[{"id","note","price","ok"}, ...]}`, every 20th
/// note with look-alikes.
fn tool_result(size: usize, multi: bool) -> String {
    let list = if multi { MULTI } else { ASCII };
    let mut state = size as u64 + 7;
    let mut items = Vec::new();
    let mut len = 0;
    while len < size {
        let mut note = words(list, &mut state, 12);
        if items.len() % 20 == 0 {
            note.push_str(" task-force sk-learn the bearer of good news authorization pending ");
        }
        let item =
            json!({"id": format!("b-{}", items.len()), "note": note, "price": 12.5, "ok": true});
        len += item.to_string().len() + 1;
        items.push(item);
    }
    json!({ "items": items }).to_string()
}

fn bench(c: &mut Criterion) {
    let scrubber = Scrubber::with_defaults();
    let mut group = c.benchmark_group("content");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    group.sample_size(10);
    for (label, size) in [("1KB", 1_000), ("100KB", 100_000), ("5MB", 5_000_000)] {
        for multi in [false, true] {
            let id = format!("{label}-{}", if multi { "multibyte" } else { "ascii" });
            let input = genkit_input(size, multi, false);
            let written = map_model(Some(&input), None)
                .input_messages
                .unwrap_or_default();
            let with_secret = map_model(Some(&genkit_input(size, multi, true)), None)
                .input_messages
                .unwrap_or_default();
            assert!(matches!(
                scrubber.json(&written),
                Ok(std::borrow::Cow::Borrowed(_))
            ));
            assert!(matches!(
                scrubber.json(&with_secret),
                Ok(std::borrow::Cow::Owned(_))
            ));
            group.throughput(Throughput::Bytes(written.len() as u64));
            group.bench_function(BenchmarkId::new("map_model", &id), |b| {
                b.iter(|| black_box(map_model(Some(black_box(&input)), None)))
            });
            group.bench_function(BenchmarkId::new("scrub_clean", &id), |b| {
                b.iter(|| black_box(scrubber.json(black_box(&written)).map(|c| c.len())))
            });
            group.bench_function(BenchmarkId::new("scrub_secret", &id), |b| {
                b.iter(|| black_box(scrubber.json(black_box(&with_secret)).map(|c| c.len())))
            });
            let tool = tool_result(size, multi);
            assert!(matches!(
                scrubber.json(&tool),
                Ok(std::borrow::Cow::Borrowed(_))
            ));
            group.bench_function(BenchmarkId::new("scrub_tool_clean", &id), |b| {
                b.iter(|| black_box(scrubber.json(black_box(&tool)).map(|c| c.len())))
            });
            let secret_input = genkit_input(size, multi, true);
            for (name, text) in [("clean", &input), ("secret", &secret_input)] {
                let post = |t: &str| {
                    map_model(Some(t), None)
                        .input_messages
                        .map(|m| scrubber.json(&m).map(|c| c.len()))
                };
                let in_pass = |t: &str| {
                    map_model_scrubbed(Some(t), None, Some(&scrubber))
                        .input_messages
                        .map(|m| m.len())
                };
                assert_eq!(
                    map_model_scrubbed(Some(text), None, Some(&scrubber)).input_messages,
                    map_model(Some(text), None)
                        .input_messages
                        .map(|m| scrubber.json(&m).unwrap().into_owned())
                );
                group.bench_function(BenchmarkId::new(format!("in_pass_{name}"), &id), |b| {
                    b.iter(|| black_box(in_pass(black_box(text))))
                });
                group.bench_function(BenchmarkId::new(format!("post_pass_{name}"), &id), |b| {
                    b.iter(|| black_box(post(black_box(text))))
                });
            }
            group.bench_function(BenchmarkId::new("cap", &id), |b| {
                b.iter(|| {
                    black_box(
                        cap_messages(black_box(&written), DEFAULT_MAX_CONTENT_BYTES)
                            .map(|c| c.json.len()),
                    )
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
