//! The secret scan's cost on short texts (BENCHMARKS.md "Stop 39"): [`Scrubber::is_clean`] of each
//! of [`TEXTS`] (tool arguments and results, prose) `n` times, with the default patterns.
//!
//! ```sh
//! cargo build --release -p genkit-for-maple-core --example scan_texts
//! B=target/release/examples/scan_texts
//! # instructions per call of text i: (count for n = 11000) - (count for n = 1000), / 10000
//! for i in 0 1 2 3 4 5 6 7 8; do
//!   for n in 1000 11000; do valgrind --tool=callgrind --callgrind-out-file=/dev/null $B $i $n 2>&1 | grep Collected; done
//! done
//! ```
//!
//! Arguments: the index of the text in [`TEXTS`], `n`. Prints how many calls found it clean.

use genkit_for_maple_core::scrub::Scrubber;

/// Short texts as tool spans carry them: JSON arguments and results of 16-84 bytes, and prose.
const TEXTS: [&str; 9] = [
    r#"{"city":"Paris"}"#,
    r#"{"timezone":"Europe/Zurich"}"#,
    "It is 14:05 in Europe/Zurich",
    r#"{"query":"Please lookup my booking"}"#,
    r#"{"city":"Zurich","tempC":12,"conditions":"partly cloudy","humid":true}"#,
    "The quick brown fox jumps over the lazy dog and then some more words follow here ok",
    r#"{"orderId":"A-1234","status":"shipped","items":[{"sku":"X1","qty":2}],"total":19.99}"#,
    r#"{"results":[{"title":"Rust book","url":"https://doc.rust-lang.org/book/"}]}"#,
    "Search results: the session was closed, please retry later with access.",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: scan_texts <text index 0-8> <n>";
    let text = args
        .get(1)
        .and_then(|i| i.parse::<usize>().ok())
        .and_then(|i| TEXTS.get(i));
    let n = args.get(2).and_then(|n| n.parse::<usize>().ok());
    let (Some(text), Some(n)) = (text, n) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let scrubber = Scrubber::with_defaults();
    let mut clean = 0usize;
    for _ in 0..n {
        clean += usize::from(std::hint::black_box(&scrubber).is_clean(std::hint::black_box(text)));
    }
    println!("{clean}");
}
