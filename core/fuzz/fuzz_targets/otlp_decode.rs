//! Fuzz target on the receiver's decoder, `otlp::decode_spans` (what the binding's
//! `decodeOtlpTraces` runs on every request body): arbitrary bytes as an
//! `ExportTraceServiceRequest`.
//!
//! Invariants: no panic; every body is either refused or decoded into valid JSON with one entry per
//! `ResourceSpans`; the wire count ([`otlp::count`]) agrees with prost on the number of spans; the
//! limits hold (a body over them is refused as too large, never decoded).
#![no_main]

use genkit_for_maple_core::otlp::{self, DecodeError, Limits};
use libfuzzer_sys::fuzz_target;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    // Small limits so that the fuzzer reaches them.
    let limits = Limits {
        max_spans: 64,
        max_elements: 512,
    };
    let counted = otlp::count(data, limits);
    match otlp::decode_spans(data, limits) {
        Ok(json) => {
            let value: serde_json::Value =
                serde_json::from_str(&json).expect("decode_spans wrote invalid JSON");
            let request = ExportTraceServiceRequest::decode(data).expect("decoded, so valid");
            let groups = value.as_array().expect("an array");
            assert_eq!(groups.len(), request.resource_spans.len());
            let spans: usize = request
                .resource_spans
                .iter()
                .flat_map(|r| &r.scope_spans)
                .map(|s| s.spans.len())
                .sum();
            let counts = counted.expect("decoded, so counted");
            assert_eq!(counts.spans, spans);
            assert!(counts.spans <= limits.max_spans && counts.elements <= limits.max_elements);
        }
        Err(DecodeError::TooLarge(_)) => assert!(matches!(counted, Err(DecodeError::TooLarge(_)))),
        Err(DecodeError::Invalid(_)) | Err(DecodeError::OutOfMemory) => {}
    }
});
