//! Scrubbing in the writers' pass against the old order (issue 11, BENCHMARKS.md "Stop 20"): maps
//! the `gen_ai.input.messages` of a synthetic Genkit request `n` times, one of
//!
//! - `none`: [`map_model`] alone (no scrubbing);
//! - `post`: [`map_model`], then [`Scrubber::json`] over the written attribute (the order before);
//! - `in`: [`map_model_scrubbed`] (scrubbing as the writers write, what the processor runs).
//!
//! ```sh
//! cargo build --release -p genkit-for-maple-core --example scrub_pass
//! B=target/release/examples/scrub_pass
//! # instructions per call: (count for n = 11) - (count for n = 1), divided by 10
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null $B in 1000 6 0 11
//! perf stat -e task-clock $B in 100000 6 0 300
//! ```
//!
//! Arguments: `none|post|in`, the request's size in bytes, `every` (every `every`-th word a
//! look-alike that holds a needle: `task-force`, `sk-learn`, `bearer`; `0`: none), `secret` (`1`:
//! an OpenAI key in the newest message), `n`. The two orders' outputs are checked equal first.

use genkit_for_maple_core::scrub::Scrubber;
use genkit_for_maple_core::{map_model, map_model_scrubbed};
use serde_json::json;
use std::hint::black_box;

const WORDS: &[&str] = &[
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
];
const LOOK_ALIKES: &[&str] = &["task-force", "sk-learn", "bearer"];

fn prose(words: usize, every: usize, seed: u64) -> String {
    let mut state = seed;
    let mut out = String::new();
    for i in 0..words {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pick = (state >> 33) as usize;
        if every > 0 && i % every == every - 1 {
            out.push_str(LOOK_ALIKES[pick % LOOK_ALIKES.len()]);
        } else {
            out.push_str(WORDS[pick % WORDS.len()]);
        }
        out.push(if i % 17 == 16 { '\n' } else { ' ' });
    }
    out
}

fn request(size: usize, every: usize, secret: bool) -> String {
    let mut messages =
        vec![json!({"role": "system", "content": [{"text": "You are a helpful travel agent."}]})];
    let (mut len, mut i) = (0, 0u64);
    while len < size {
        let text = prose(40, every, i);
        len += text.len() + 60;
        let role = if i % 2 == 0 { "user" } else { "model" };
        messages.push(json!({"role": role, "content": [{"text": text}]}));
        i += 1;
    }
    if secret {
        let text = "my key is sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x ok";
        messages.push(json!({"role": "user", "content": [{"text": text}]}));
    }
    json!({"messages": messages, "config": {"temperature": 0.3}}).to_string()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: scrub_pass none|post|in <size> <every> <secret 0|1> <n>";
    let [_, which, size, every, secret, n] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let parse = |s: &str| s.parse::<usize>().unwrap_or_else(|_| panic!("{usage}"));
    let (size, every, n) = (parse(size), parse(every), parse(n));
    let scrubber = Scrubber::with_defaults();
    let text = request(size, every, secret == "1");
    let post = |t: &str| {
        map_model(Some(t), None)
            .input_messages
            .map(|m| scrubber.json(&m).map(|c| c.into_owned()))
    };
    let in_pass = |t: &str| map_model_scrubbed(Some(t), None, Some(&scrubber)).input_messages;
    assert_eq!(post(&text).map(Result::unwrap), in_pass(&text));
    let mut total = 0;
    for _ in 0..n {
        let t = black_box(text.as_str());
        total += match which.as_str() {
            "in" => in_pass(t).map_or(0, |m| m.len()),
            "post" => post(t).map_or(0, |m| m.map_or(0, |m| m.len())),
            _ => map_model(Some(t), None)
                .input_messages
                .map_or(0, |m| m.len()),
        };
    }
    println!("{total}");
}
