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
//! - [`otlp`]: `ExportTraceServiceRequest` protobuf decoding.
//! - [`jsonstr`]: JSON string literals decoded with fallible memory, borrowed when they can be.

pub mod genkit;
pub mod jsonstr;
pub mod mapping;
pub mod otlp;
pub mod out;
pub mod semconv;

pub use mapping::{map_model, map_tool_result, problem, ModelAttributes, Scalar, ToolResult};

#[cfg(test)]
mod tests;
