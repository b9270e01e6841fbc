//! `cargo bench -p genkit-for-maple-core --bench cost_pairing`: the price of rules 2 and 5 of
//! issue 10 per span.
//!
//! - the one-time load of genai-prices' bundled price data (printed, measured once per process);
//! - `cost_usd_at` for a known model (gemini-2.5-flash, claude-sonnet-4-5 with cache counts,
//!   gpt-5) and for an unknown one (the library's miss path);
//! - one model answer with three tool requests recorded from its `genkit:output`, then its three
//!   tool spans paired and its generate span ended (the whole life of one tool-loop step).

use criterion::{criterion_group, criterion_main, Criterion};
use genkit_for_maple_core::cost::{cost_usd_at, warm_up, UsageCounts};
use genkit_for_maple_core::pairing::{SpanKey, ToolCallPairing};
use std::hint::black_box;
use std::time::{Duration, Instant, UNIX_EPOCH};

fn bench(c: &mut Criterion) {
    let t = Instant::now();
    warm_up();
    println!(
        "genai-prices bundled data load (once per process): {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    let at = UNIX_EPOCH + Duration::from_secs(1_796_040_000);
    let usage = UsageCounts {
        input_tokens: Some(2437),
        output_tokens: Some(96),
        cache_read_input_tokens: Some(1024),
        cache_write_input_tokens: Some(1280),
        cache_write_1h_input_tokens: None,
        reasoning_output_tokens: Some(64),
    };
    for (provider, model) in [
        ("googleai", "gemini-2.5-flash"),
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "gpt-5"),
        ("openai", "no-such-model"),
    ] {
        c.bench_function(&format!("cost_usd_at {provider}/{model}"), |b| {
            b.iter(|| cost_usd_at(black_box(provider), black_box(model), black_box(&usage), at))
        });
    }

    let output = r#"{"message":{"role":"model","content":[{"text":"Checking."},{"toolRequest":{"name":"getWeather","ref":"call_0","input":{"city":"Paris"}}},{"toolRequest":{"name":"getWeather","ref":"call_1","input":{"city":"Paris"}}},{"toolRequest":{"name":"getTime","ref":"call_2","input":{"timezone":"Europe/Paris","format":{"hours":24}}}}]},"finishReason":"stop","usage":{"inputTokens":100,"outputTokens":20}}"#;
    let parent =
        SpanKey::from_hex("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331").expect("hex ids");
    let mut state = ToolCallPairing::new();
    c.bench_function(
        "pairing: record 3 requests, pair 3 tool spans, end the generate span",
        |b| {
            b.iter(|| {
                let now = Instant::now();
                state.record_model_output(parent, black_box(output), now);
                let a = state.tool_call_id(parent, "getWeather", Some(r#"{"city":"Paris"}"#), now);
                let b2 = state.tool_call_id(
                    parent,
                    "getTime",
                    Some(r#"{"format":{"hours":24},"timezone":"Europe/Paris"}"#),
                    now,
                );
                let c2 = state.tool_call_id(parent, "getWeather", Some(r#"{"city":"Paris"}"#), now);
                state.span_ended(parent, false);
                black_box((a, b2, c2))
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
