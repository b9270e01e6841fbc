//! OTLP/HTTP protobuf decoding for the built-in local receiver: an `ExportTraceServiceRequest`
//! (opentelemetry-proto + prost) to a flat JSON list of spans that the JavaScript receiver turns
//! into the Agent Sessions view.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value as AnyValueKind, AnyValue, KeyValue,
};
use prost::Message;
use serde_json::{json, Map, Value};

/// Why a request body could not be decoded.
#[derive(Debug)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid ExportTraceServiceRequest: {}", self.0)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An OTLP `AnyValue` as JSON: strings, booleans, doubles as they are; 64-bit integers as numbers
/// (exact up to 2^53, like the JavaScript SDK that wrote them); arrays and key-value lists nested;
/// bytes as hex.
pub fn any_value(value: &AnyValue) -> Value {
    match &value.value {
        None => Value::Null,
        Some(AnyValueKind::StringValue(s)) => Value::String(s.clone()),
        Some(AnyValueKind::BoolValue(b)) => Value::Bool(*b),
        Some(AnyValueKind::IntValue(i)) => json!(i),
        Some(AnyValueKind::DoubleValue(d)) => json!(d),
        Some(AnyValueKind::ArrayValue(a)) => Value::Array(a.values.iter().map(any_value).collect()),
        Some(AnyValueKind::KvlistValue(kv)) => Value::Object(attributes(&kv.values)),
        Some(AnyValueKind::BytesValue(b)) => Value::String(hex(b)),
    }
}

/// OTLP key-values as a JSON object (a repeated key keeps its last value).
pub fn attributes(kvs: &[KeyValue]) -> Map<String, Value> {
    kvs.iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value.as_ref().map_or(Value::Null, any_value),
            )
        })
        .collect()
}

/// Decodes an `ExportTraceServiceRequest` body and lists its spans as JSON:
/// `[{traceId, spanId, parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano,
/// status: {code, message}, attributes, resource, scope}]` (ids as lowercase hex, times as decimal
/// strings of nanoseconds since the Unix epoch).
pub fn decode_spans(body: &[u8]) -> Result<String, DecodeError> {
    let request =
        ExportTraceServiceRequest::decode(body).map_err(|e| DecodeError(e.to_string()))?;
    let mut spans = Vec::new();
    for resource_spans in &request.resource_spans {
        let resource = resource_spans
            .resource
            .as_ref()
            .map(|r| Value::Object(attributes(&r.attributes)))
            .unwrap_or(Value::Null);
        for scope_spans in &resource_spans.scope_spans {
            let scope = scope_spans
                .scope
                .as_ref()
                .map(|s| json!({"name": s.name, "version": s.version}))
                .unwrap_or(Value::Null);
            for span in &scope_spans.spans {
                let status = span.status.as_ref();
                spans.push(json!({
                    "traceId": hex(&span.trace_id),
                    "spanId": hex(&span.span_id),
                    "parentSpanId": hex(&span.parent_span_id),
                    "name": span.name,
                    "kind": span.kind,
                    "startTimeUnixNano": span.start_time_unix_nano.to_string(),
                    "endTimeUnixNano": span.end_time_unix_nano.to_string(),
                    "status": {
                        "code": status.map_or(0, |s| s.code),
                        "message": status.map_or("", |s| s.message.as_str()),
                    },
                    "attributes": Value::Object(attributes(&span.attributes)),
                    "resource": resource.clone(),
                    "scope": scope.clone(),
                }));
            }
        }
    }
    Ok(Value::Array(spans).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

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
        let decoded: Value =
            serde_json::from_str(&decode_spans(&request.encode_to_vec()).unwrap()).unwrap();
        assert_eq!(decoded[0]["spanId"], "0102030405060708");
        assert_eq!(decoded[0]["traceId"], "ab".repeat(16));
        assert_eq!(decoded[0]["attributes"]["gen_ai.operation.name"], "chat");
        assert_eq!(decoded[0]["attributes"]["gen_ai.usage.input_tokens"], 42);
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode_spans(&[0xff, 0xff, 0xff]).is_err());
    }
}
