//! OTLP/HTTP protobuf decoding for the built-in local receiver: an `ExportTraceServiceRequest`
//! (opentelemetry-proto + prost) to JSON that the JavaScript receiver turns into the Agent
//! Sessions view.
//!
//! Bounded work per request: before prost builds anything, [`count`] walks the protobuf wire
//! format once (no allocation) and refuses a body with more than [`Limits::max_spans`] spans or
//! [`Limits::max_elements`] messages (each costs tens to hundreds of bytes once decoded, against 2
//! bytes on the wire), or nested deeper than prost's limit of 100; the resource and the scope are
//! written once per `ResourceSpans` / `ScopeSpans`, not into every span; the JSON is written
//! straight from the decoded request into a buffer that grows fallibly
//! ([`DecodeError::OutOfMemory`], never an abort).

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value as AnyValueKind, AnyValue, KeyValue,
};
use prost::bytes::Buf;
use prost::encoding::{decode_key, decode_varint, WireType};
use prost::Message;
use std::io::Write;

/// Why a request body was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Not a valid `ExportTraceServiceRequest` (the receiver answers 400).
    Invalid(String),
    /// Over a [`Limits`] bound (the receiver answers 413).
    TooLarge(String),
    /// The JSON output could not be allocated (the receiver answers 413).
    OutOfMemory,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Invalid(why) => write!(f, "invalid ExportTraceServiceRequest: {why}"),
            DecodeError::TooLarge(why) => write!(f, "request too large: {why}"),
            DecodeError::OutOfMemory => f.write_str("request too large: out of memory decoding it"),
        }
    }
}

/// Bounds on one request.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most spans in one request.
    pub max_spans: usize,
    /// Most protobuf messages (spans, key-values, values, events, links, ...) in one request.
    pub max_elements: usize,
}

impl Default for Limits {
    /// 50,000 spans (a `BatchSpanProcessor` sends 512 per request by default) and 1,000,000
    /// messages (at most ~100 MB once decoded).
    fn default() -> Self {
        Limits {
            max_spans: 50_000,
            max_elements: 1_000_000,
        }
    }
}

/// Nesting depth prost refuses beyond (its default recursion limit).
const MAX_DEPTH: u32 = 100;

/// The message types of `ExportTraceServiceRequest` that hold other messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Request,
    ResourceSpans,
    Resource,
    ScopeSpans,
    Scope,
    Span,
    Event,
    Link,
    KeyValue,
    AnyValue,
    ArrayValue,
    KeyValueList,
    /// A message with no message fields (`Status`).
    Leaf,
}

/// The message type of field `field` of a `kind` message, when it is a message.
fn child(kind: Kind, field: u32) -> Option<Kind> {
    use Kind::*;
    Some(match (kind, field) {
        (Request, 1) => ResourceSpans,
        (ResourceSpans, 1) => Resource,
        (ResourceSpans, 2) => ScopeSpans,
        (Resource, 1) => KeyValue,
        (ScopeSpans, 1) => Scope,
        (ScopeSpans, 2) => Span,
        (Scope, 3) => KeyValue,
        (Span, 9) => KeyValue,
        (Span, 11) => Event,
        (Span, 13) => Link,
        (Span, 15) => Leaf,
        (Event, 3) | (Link, 4) | (KeyValueList, 1) => KeyValue,
        (KeyValue, 2) | (ArrayValue, 1) => AnyValue,
        (AnyValue, 5) => ArrayValue,
        (AnyValue, 6) => KeyValueList,
        _ => return None,
    })
}

/// What [`count`] found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Spans.
    pub spans: usize,
    /// Messages of every type below the request.
    pub elements: usize,
}

/// Counts the spans and messages of an `ExportTraceServiceRequest` body from its wire format,
/// without decoding it (no allocation), and checks them against `limits`. Iterative within a
/// message, recursive per nesting level (at most [`MAX_DEPTH`]).
pub fn count(body: &[u8], limits: Limits) -> Result<Counts, DecodeError> {
    let mut counts = Counts::default();
    walk(body, Kind::Request, 0, &mut counts, limits)?;
    Ok(counts)
}

fn walk(
    mut buf: &[u8],
    kind: Kind,
    depth: u32,
    counts: &mut Counts,
    limits: Limits,
) -> Result<(), DecodeError> {
    let invalid = |e: prost::DecodeError| DecodeError::Invalid(e.to_string());
    if depth > MAX_DEPTH {
        return Err(DecodeError::Invalid(format!(
            "nested deeper than {MAX_DEPTH} messages"
        )));
    }
    while buf.has_remaining() {
        let (field, wire) = decode_key(&mut buf).map_err(invalid)?;
        let skip = match wire {
            WireType::Varint => {
                decode_varint(&mut buf).map_err(invalid)?;
                0
            }
            WireType::SixtyFourBit => 8,
            WireType::ThirtyTwoBit => 4,
            WireType::LengthDelimited => {
                let len = decode_varint(&mut buf).map_err(invalid)?;
                let len = usize::try_from(len)
                    .ok()
                    .filter(|&len| len <= buf.len())
                    .ok_or_else(|| DecodeError::Invalid("a length beyond the body".into()))?;
                let (inner, rest) = buf.split_at(len);
                buf = rest;
                if let Some(inner_kind) = child(kind, field) {
                    counts.elements += 1;
                    if inner_kind == Kind::Span {
                        counts.spans += 1;
                        if counts.spans > limits.max_spans {
                            return Err(DecodeError::TooLarge(format!(
                                "more than {} spans in one request",
                                limits.max_spans
                            )));
                        }
                    }
                    if counts.elements > limits.max_elements {
                        return Err(DecodeError::TooLarge(format!(
                            "more than {} protobuf messages in one request",
                            limits.max_elements
                        )));
                    }
                    walk(inner, inner_kind, depth + 1, counts, limits)?;
                }
                0
            }
            WireType::StartGroup | WireType::EndGroup => {
                return Err(DecodeError::Invalid(
                    "protobuf groups are not used by OTLP".into(),
                ))
            }
        };
        if skip > buf.len() {
            return Err(DecodeError::Invalid("a field beyond the body".into()));
        }
        buf = &buf[skip..];
    }
    Ok(())
}

/// A `Vec<u8>` writer whose growth is fallible: a failed reservation is an `io::Error`
/// (`OutOfMemory`) instead of an abort.
struct Out(Vec<u8>);

impl Write for Out {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }
    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        if self.0.capacity() - self.0.len() < data.len() {
            let grow = data.len().max(self.0.len());
            self.0
                .try_reserve(grow)
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        }
        self.0.extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

type W<'a> = &'a mut Out;

fn str_json(out: W, s: &str) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(std::io::Error::other)
}

fn hex(out: W, bytes: &[u8]) -> std::io::Result<()> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.write_all(b"\"")?;
    for b in bytes {
        out.write_all(&[DIGITS[(b >> 4) as usize], DIGITS[(b & 15) as usize]])?;
    }
    out.write_all(b"\"")
}

/// An OTLP `AnyValue` as JSON: strings, booleans, doubles as they are (a non-finite double as
/// `null`, as `JSON.stringify` writes it); 64-bit integers as numbers (exact up to 2^53, like the
/// JavaScript SDK that wrote them); arrays and key-value lists nested; bytes as hex.
fn any_value(out: W, value: &AnyValue) -> std::io::Result<()> {
    match &value.value {
        None => out.write_all(b"null"),
        Some(AnyValueKind::StringValue(s)) => str_json(out, s),
        Some(AnyValueKind::BoolValue(b)) => write!(out, "{b}"),
        Some(AnyValueKind::IntValue(i)) => write!(out, "{i}"),
        Some(AnyValueKind::DoubleValue(d)) => {
            serde_json::to_writer(&mut *out, d).map_err(std::io::Error::other)
        }
        Some(AnyValueKind::ArrayValue(a)) => {
            out.write_all(b"[")?;
            for (i, v) in a.values.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                any_value(out, v)?;
            }
            out.write_all(b"]")
        }
        Some(AnyValueKind::KvlistValue(kv)) => attributes(out, &kv.values),
        Some(AnyValueKind::BytesValue(b)) => hex(out, b),
    }
}

/// OTLP key-values as a JSON object. A repeated key is written again; `JSON.parse` keeps its last
/// value.
fn attributes(out: W, kvs: &[KeyValue]) -> std::io::Result<()> {
    out.write_all(b"{")?;
    for (i, kv) in kvs.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        str_json(out, &kv.key)?;
        out.write_all(b":")?;
        match &kv.value {
            Some(v) => any_value(out, v)?,
            None => out.write_all(b"null")?,
        }
    }
    out.write_all(b"}")
}

fn write_request(out: W, request: &ExportTraceServiceRequest) -> std::io::Result<()> {
    out.write_all(b"[")?;
    for (i, resource_spans) in request.resource_spans.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(b"{\"resource\":")?;
        match &resource_spans.resource {
            Some(r) => attributes(out, &r.attributes)?,
            None => out.write_all(b"null")?,
        }
        out.write_all(b",\"scopes\":[")?;
        for (j, scope_spans) in resource_spans.scope_spans.iter().enumerate() {
            if j > 0 {
                out.write_all(b",")?;
            }
            out.write_all(b"{\"scope\":")?;
            match &scope_spans.scope {
                Some(s) => {
                    out.write_all(b"{\"name\":")?;
                    str_json(out, &s.name)?;
                    out.write_all(b",\"version\":")?;
                    str_json(out, &s.version)?;
                    out.write_all(b"}")?;
                }
                None => out.write_all(b"null")?,
            }
            out.write_all(b",\"spans\":[")?;
            for (k, span) in scope_spans.spans.iter().enumerate() {
                if k > 0 {
                    out.write_all(b",")?;
                }
                let status = span.status.as_ref();
                out.write_all(b"{\"traceId\":")?;
                hex(out, &span.trace_id)?;
                out.write_all(b",\"spanId\":")?;
                hex(out, &span.span_id)?;
                out.write_all(b",\"parentSpanId\":")?;
                hex(out, &span.parent_span_id)?;
                out.write_all(b",\"name\":")?;
                str_json(out, &span.name)?;
                write!(
                    out,
                    ",\"kind\":{},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",\"status\":{{\"code\":{},\"message\":",
                    span.kind,
                    span.start_time_unix_nano,
                    span.end_time_unix_nano,
                    status.map_or(0, |s| s.code)
                )?;
                str_json(out, status.map_or("", |s| s.message.as_str()))?;
                out.write_all(b"},\"attributes\":")?;
                attributes(out, &span.attributes)?;
                out.write_all(b"}")?;
            }
            out.write_all(b"]}")?;
        }
        out.write_all(b"]}")?;
    }
    out.write_all(b"]")
}

/// Decodes an `ExportTraceServiceRequest` body, within `limits`, as JSON grouped the way OTLP
/// groups it: `[{resource, scopes: [{scope: {name, version} | null, spans: [{traceId, spanId,
/// parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano, status: {code, message},
/// attributes}]}]}]` (`resource`: the resource attributes or `null`; ids as lowercase hex, times as
/// decimal strings of nanoseconds since the Unix epoch). Each resource and scope is written once.
pub fn decode_spans(body: &[u8], limits: Limits) -> Result<String, DecodeError> {
    count(body, limits)?;
    let request =
        ExportTraceServiceRequest::decode(body).map_err(|e| DecodeError::Invalid(e.to_string()))?;
    let mut out = Out(Vec::new());
    // A first guess for the output: about the body's size (it grows fallibly from there).
    out.0
        .try_reserve(body.len().saturating_add(64))
        .map_err(|_| DecodeError::OutOfMemory)?;
    write_request(&mut out, &request).map_err(|_| DecodeError::OutOfMemory)?;
    drop(request);
    // The writer wrote only UTF-8: JSON punctuation, serde_json strings and numbers, hex digits.
    String::from_utf8(out.0).map_err(|_| DecodeError::Invalid("non-UTF-8 output".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
    use serde_json::Value;

    #[test]
    fn decodes_a_span_with_its_attributes() {
        let span = Span {
            trace_id: vec![0xab; 16],
            span_id: vec![1, 2, 3, 4, 5, 6, 7, 8],
            name: "googleai/gemini-2.5-flash".into(),
            attributes: vec![
                KeyValue {
                    key: "gen_ai.operation.name".into(),
                    value: Some(AnyValue {
                        value: Some(AnyValueKind::StringValue("chat".into())),
                    }),
                },
                KeyValue {
                    key: "gen_ai.usage.input_tokens".into(),
                    value: Some(AnyValue {
                        value: Some(AnyValueKind::IntValue(42)),
                    }),
                },
            ],
            ..Default::default()
        };
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![span],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        let decoded: Value = serde_json::from_str(
            &decode_spans(&request.encode_to_vec(), Limits::default()).unwrap(),
        )
        .unwrap();
        let span = &decoded[0]["scopes"][0]["spans"][0];
        assert_eq!(span["spanId"], "0102030405060708");
        assert_eq!(span["traceId"], "ab".repeat(16));
        assert_eq!(span["attributes"]["gen_ai.operation.name"], "chat");
        assert_eq!(span["attributes"]["gen_ai.usage.input_tokens"], 42);
        assert_eq!(decoded[0]["resource"], Value::Null);
    }

    #[test]
    fn rejects_garbage() {
        assert!(matches!(
            decode_spans(&[0xff, 0xff, 0xff], Limits::default()),
            Err(DecodeError::Invalid(_))
        ));
    }

    fn request_of(spans: usize, attributes_per_span: usize) -> Vec<u8> {
        let span = Span {
            attributes: vec![KeyValue::default(); attributes_per_span],
            ..Default::default()
        };
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![span; spans],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
        .encode_to_vec()
    }

    #[test]
    fn counts_spans_and_messages_from_the_wire() {
        let body = request_of(3, 2);
        let counts = count(&body, Limits::default()).unwrap();
        // 1 ResourceSpans + 1 ScopeSpans + 3 spans + 6 key-values.
        assert_eq!(
            counts,
            Counts {
                spans: 3,
                elements: 11
            }
        );
    }

    #[test]
    fn refuses_too_many_spans_or_messages_before_decoding() {
        let limits = Limits {
            max_spans: 10,
            max_elements: 100,
        };
        assert!(matches!(
            decode_spans(&request_of(11, 0), limits),
            Err(DecodeError::TooLarge(why)) if why.contains("10 spans")
        ));
        assert!(matches!(
            decode_spans(&request_of(2, 60), limits),
            Err(DecodeError::TooLarge(why)) if why.contains("100 protobuf messages")
        ));
        assert!(decode_spans(&request_of(10, 4), limits).is_ok());
    }

    #[test]
    fn refuses_nesting_deeper_than_prost_allows() {
        // An AnyValue nested 150 levels deep in arrays.
        let mut value = AnyValue::default();
        for _ in 0..150 {
            value = AnyValue {
                value: Some(AnyValueKind::ArrayValue(
                    opentelemetry_proto::tonic::common::v1::ArrayValue {
                        values: vec![value],
                    },
                )),
            };
        }
        let span = Span {
            attributes: vec![KeyValue {
                key: "deep".into(),
                value: Some(value),
            }],
            ..Default::default()
        };
        let body = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![span],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
        .encode_to_vec();
        assert!(matches!(
            decode_spans(&body, Limits::default()),
            Err(DecodeError::Invalid(why)) if why.contains("nested deeper")
        ));
    }

    #[test]
    fn resource_and_scope_are_written_once() {
        let mut body = ExportTraceServiceRequest::decode(&request_of(50, 0)[..]).unwrap();
        body.resource_spans[0].resource =
            Some(opentelemetry_proto::tonic::resource::v1::Resource {
                attributes: vec![KeyValue {
                    key: "big".into(),
                    value: Some(AnyValue {
                        value: Some(AnyValueKind::StringValue("r".repeat(10_000))),
                    }),
                }],
                ..Default::default()
            });
        let json = decode_spans(&body.encode_to_vec(), Limits::default()).unwrap();
        assert!(json.len() < 20_000, "{} bytes", json.len());
        assert_eq!(json.matches("rrrrrrrrrr").count(), 1000);
    }
}
