//! The conversion core of genkit-for-maple: Genkit span attributes (`genkit:*`) to the
//! OpenTelemetry GenAI semantic conventions (`gen_ai.*`) that Maple's Agent Sessions read, and the
//! OTLP decoding of the built-in receiver. Plain Rust with no napi types, so `cargo test`, property
//! tests and fuzzing reach all of it.
//!
//! - [`genkit`]: Genkit's shapes, read without a tree.
//! - [`semconv`]: attribute keys and the GenAI message JSON writers.
//! - [`mapping`]: model and tool span rules (seed 000) and their degradation.
//! - [`out`]: the fallible output buffer the writers grow (an allocation failure is a problem
//!   flag, never an abort).
//! - [`scrub`], [`cap`], [`content`]: content control (issue 11): secret scrubbing, the size cap
//!   of content attributes, and both applied to a span's [`span::Mapped`] output.
//! - [`otlp`]: `ExportTraceServiceRequest` protobuf decoding.
//! - [`span`]: the whole-span mapping shared by the processor and the native exporter (the seam:
//!   [`span::SpanInput`] in, [`span::Mapped`] out, [`span::Options`] with the modes).
//! - [`complete`]: the rules of complete mode (issue 10).
//! - [`cost`]: `gen_ai.usage.cost` from token counts (pydantic's genai-prices, bundled prices).
//! - [`pairing`]: `gen_ai.tool.call.id` for tool spans, from the model answers that asked for them.
//! - [`encode`]: `ExportTraceServiceRequest` encoding as the official JS serializer writes it.
//! - [`fused`]: the exporter's fused mapping: `gen_ai.*` written into protobuf spans (issue 8).
//! - [`jsonstr`]: JSON string literals decoded with fallible memory, borrowed when they can be.

pub mod cap;
pub mod complete;
pub mod content;
pub mod cost;
pub mod encode;
pub mod fused;
pub mod genkit;
pub mod jsonstr;
pub mod mapping;
pub mod otlp;
pub mod out;
pub mod pairing;
pub mod scrub;
pub mod semconv;
pub mod span;

pub use mapping::{
    map_model, map_model_recorded, map_model_scrubbed, map_tool_result, problem, ModelAttributes,
    Scalar, ToolResult,
};

#[cfg(test)]
mod tests;

/// The unit tests' pseudo-random numbers: a 64-bit linear congruential generator (Knuth's MMIX
/// constants), the same sequence for a seed on every run and platform.
#[cfg(test)]
pub(crate) fn lcg(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize % n
    }
}
