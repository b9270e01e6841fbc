//! `cargo bench -p genkit-for-maple-core --bench scrub_scan`: the secret scrubber's needle scan of
//! a whole source (issue 11), on the `genkit:input` of a synthetic model span that
//! `bench/synth.js` writes (`modelSpan(size, script)`, run with `node`): about 10 KB and 1 MB,
//! ASCII prose (`ascii`) and CJK, emoji and accented Latin (`multi`). These hold no needle, so
//! every entry is the scan alone:
//!
//! - `source_of`: [`SourceScrubber::of`], the scan the mapping runs once per source.
//! - `json`: [`Scrubber::json`] of the whole source (one search for the first hit).
//! - `is_clean`: [`Scrubber::is_clean`] of the whole source.
//!
//! Throughput is the source's length in bytes.
//!
//! And a tool span's screen (`tool/has_no_needle`): the binding scans a reference-mode tool
//! span's arguments and result joined by a NUL byte, once (`src/lib.rs` `screens_leave_as_is`),
//! here a corpus weather tool's (89 bytes), its result alone (72), and 88 bytes of `x` (no
//! candidate for the needles' first bytes: the scan's fixed cost). `cargo bench -p
//! genkit-for-maple-core --bench scrub_scan -- tool` runs these alone.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use genkit_for_maple_core::scrub::{Scrubber, SourceScrubber};
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `modelSpan(size, script)["genkit:input"]` of the repository's `bench/synth.js`.
fn genkit_input(size: usize, script: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let program = format!(
        "const {{modelSpan}}=require('./bench/synth.js'); \
         process.stdout.write(modelSpan({size},'{script}')['genkit:input'])"
    );
    let out = Command::new("node")
        .arg("-e")
        .arg(program)
        .current_dir(root)
        .output()
        .expect("node runs bench/synth.js");
    assert!(out.status.success(), "bench/synth.js failed");
    String::from_utf8(out.stdout).expect("UTF-8 from bench/synth.js")
}

fn bench(c: &mut Criterion) {
    let scrubber = Scrubber::with_defaults();
    let mut group = c.benchmark_group("scrub_scan");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(30);
    for (label, size) in [("10KB", 10_000), ("1MB", 1_000_000)] {
        for script in ["ascii", "multi"] {
            let id = format!("{label}-{script}");
            let input = genkit_input(size, script);
            // No needle: the scan finds nothing, and nothing is scrubbed.
            assert!(SourceScrubber::of(Some(&scrubber), Some(&input)).is_none());
            assert!(scrubber.is_clean(&input));
            group.throughput(Throughput::Bytes(input.len() as u64));
            group.bench_function(BenchmarkId::new("source_of", &id), |b| {
                b.iter(|| {
                    black_box(
                        SourceScrubber::of(Some(&scrubber), Some(black_box(&input))).is_some(),
                    )
                })
            });
            group.bench_function(BenchmarkId::new("json", &id), |b| {
                b.iter(|| black_box(scrubber.json(black_box(&input)).map(|c| c.len())))
            });
            group.bench_function(BenchmarkId::new("is_clean", &id), |b| {
                b.iter(|| black_box(scrubber.is_clean(black_box(&input))))
            });
        }
    }
    group.finish();
    let mut group = c.benchmark_group("tool");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    let result = r#"{"city":"Paris","tempC":18.5,"conditions":"partly cloudy","humid":true}"#;
    let joined = format!("{}\0{result}", r#"{"city":"Paris"}"#);
    for (id, text) in [
        ("joined", joined.as_str()),
        ("result", result),
        ("x88", &"x".repeat(88)),
    ] {
        assert!(
            scrubber.has_no_needle(text.as_bytes()),
            "{id} holds a needle"
        );
        group.bench_function(BenchmarkId::new("has_no_needle", id), |b| {
            b.iter(|| black_box(scrubber.has_no_needle(black_box(text.as_bytes()))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
