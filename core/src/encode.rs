//! OTLP/protobuf encoding of the native `OTLPTraceExporter` (issue 8): the JavaScript values of a
//! `ReadableSpan` turned into `opentelemetry-proto` messages exactly as the official
//! `ProtobufTraceSerializer` of `@opentelemetry/otlp-transformer` 0.301 writes them, and the
//! `ExportTraceServiceRequest` encoded with prost.
//!
//! The conversions here are the official serializer's arithmetic ported value for value
//! (`common-serializer.ts`, `hex-to-binary.ts`, `protobuf-writer.ts`), so that the request decoded
//! from our bytes equals the one decoded from theirs, field for field, including on odd input
//! (fractional nanoseconds, non-hex ids, negative counts). The napi layer (`src/export.rs`) reads
//! the span fields and calls these; nothing here knows napi.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, InstrumentationScope};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;
use std::collections::TryReserveError;

pub use opentelemetry_proto::tonic as proto;

/// ECMAScript `ToUint32` (the `>>> 0` of the official writer): truncation toward zero, modulo
/// 2^32; NaN and infinities are 0.
pub fn to_uint32(x: f64) -> u32 {
    // Most operands (times, counts) are already in range: the cast truncates toward zero, as
    // ToUint32 does there, without the `fmod` of the general case (about 100 instructions; six
    // per `hr_time_nanos`, which runs for every model and tool span and every exported span).
    if (0.0..4_294_967_296.0).contains(&x) {
        return x as u32;
    }
    // Within i64's range (the products of `hr_time_nanos`, negatives): the truncated value's
    // two's complement low 32 bits are its residue modulo 2^32.
    if x.abs() < 9_223_372_036_854_775_808.0 {
        return x as i64 as u32;
    }
    if !x.is_finite() {
        return 0;
    }
    let t = x.trunc();
    // `rem_euclid` keeps the value in [0, 2^32); the cast is exact there.
    t.rem_euclid(4_294_967_296.0) as u32
}

/// ECMAScript `ToInt32` (the operand conversion of `&`, `|`, `<<`).
pub fn to_int32(x: f64) -> i32 {
    to_uint32(x) as i32
}

/// An `HrTime` (`[seconds, nanoseconds]`) as the fixed64 nanoseconds the official
/// `writeHrTimeAsFixed64` writes (the same 16/32-bit split and carries, so fractional or
/// out-of-range parts give the same 64 bits).
pub fn hr_time_nanos(seconds: f64, nanos: f64) -> u64 {
    // Whole seconds and nanoseconds below 2^32 (every time the SDK makes): the split below is
    // exact there and gives `seconds * 1e9 + nanos` (a test compares the two on any such pair),
    // without its floor and truncations (libm calls on the baseline x86-64 target).
    let whole = |x: f64, below: f64| (0.0..below).contains(&x) && x == (x as u64) as f64;
    if whole(seconds, 4_294_967_296.0) && whole(nanos, 4_294_967_296.0) {
        return seconds as u64 * 1_000_000_000 + nanos as u64;
    }
    hr_time_nanos_split(seconds, nanos)
}

/// [`hr_time_nanos`] by the official writer's 16/32-bit split, for any pair of numbers.
fn hr_time_nanos_split(seconds: f64, nanos: f64) -> u64 {
    const NS: f64 = 1e9;
    const TWO32: f64 = 4_294_967_296.0;
    let seconds_lower16 = f64::from(to_int32(seconds) & 0xffff);
    let seconds_upper = f64::from(to_uint32(seconds / 65536.0));
    let from_lower = seconds_lower16 * NS;
    let from_upper = seconds_upper * NS;
    let lower_low32 = f64::from(to_uint32(from_lower));
    let lower_high32 = (from_lower / TWO32).floor();
    let upper_low32 = f64::from(to_uint32(
        f64::from(to_int32(from_upper) & 0xffff) * 65536.0,
    ));
    let upper_high32 = f64::from(to_uint32(from_upper / 65536.0));
    let low_with_carry = lower_low32 + upper_low32 + nanos;
    let low = to_uint32(low_with_carry);
    let carry = (low_with_carry / TWO32).floor();
    let high = to_uint32(lower_high32 + upper_high32 + carry);
    (u64::from(high) << 32) | u64::from(low)
}

/// The 64-bit varint the official `writeVarint(value)` writes for a JavaScript number (two's
/// complement for negatives; NaN is 0). A field of a narrower type decodes its low bits.
pub fn js_varint(value: f64) -> u64 {
    if (0.0..=4_294_967_295.0).contains(&value) {
        return u64::from(to_uint32(value));
    }
    let (low, high) = if value >= 0.0 {
        (to_uint32(value), to_uint32(value / 4_294_967_296.0))
    } else {
        // Negative, NaN or -Infinity: the writer's two's complement of |value|.
        let abs = value.abs();
        let mut low = !to_uint32(abs);
        let mut high = !to_uint32(abs / 4_294_967_296.0);
        low = low.wrapping_add(1);
        if low == 0 {
            high = high.wrapping_add(1);
        }
        (low, high)
    };
    (u64::from(high) << 32) | u64::from(low)
}

/// A `uint32` field written with `writeVarint(value)`, as a decoder reads it (the low 32 bits).
pub fn js_uint32_field(value: f64) -> u32 {
    js_varint(value) as u32
}

/// An enum (`int32`) field written with `writeVarint(value)`, as a decoder reads it.
pub fn js_int32_field(value: f64) -> i32 {
    js_varint(value) as u32 as i32
}

/// The official `hexToBinary` on the UTF-16 code units of an id string (`charCodeAt`), including
/// its value for characters that are not hex digits. `None` for an odd length, where the official
/// code throws (`new Uint8Array(n / 2)` with a fraction).
pub fn hex_to_binary(units: &[u16]) -> Option<Vec<u8>> {
    if !units.len().is_multiple_of(2) {
        return None;
    }
    fn int_value(c: u16) -> i32 {
        let c = i32::from(c);
        match c {
            48..=57 => c - 48,
            97..=102 => c - 87,
            _ => c - 55,
        }
    }
    // Ids are 16 or 32 characters in practice; half the length of a string already read.
    let mut out = Vec::with_capacity(units.len() / 2); // ok: half of a buffer that exists
    for pair in units.chunks_exact(2) {
        let byte = (int_value(pair[0]) << 4) | int_value(pair[1]);
        // `Uint8Array` stores ToUint8: the low 8 bits.
        out.push(byte as u8);
    }
    Some(out)
}

/// The `AnyValue` the official `writeAnyValue` writes for a JavaScript number: an `int_value`
/// for an integer in [-2^63, 2^63) (`-0` included), a `double_value` otherwise.
pub fn number_value(n: f64) -> AnyValue {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let value = if n.is_finite() && n.trunc() == n && (-LIMIT..LIMIT).contains(&n) {
        // Exact: an integral double in range converts without rounding.
        Value::IntValue(n as i64)
    } else {
        Value::DoubleValue(n)
    };
    AnyValue { value: Some(value) }
}

/// Span flags as `buildSpanFlags`: the W3C trace flags' low 8 bits, `HAS_IS_REMOTE` (0x100)
/// always, and `IS_REMOTE` (0x200) when `is_remote`.
pub fn span_flags(trace_flags: f64, is_remote: bool) -> u32 {
    let mut flags = ((to_int32(trace_flags) & 0xff) as u32) | 0x100;
    if is_remote {
        flags |= 0x200;
    }
    flags
}

/// A batch under construction: spans grouped by resource, then by instrumentation scope, each in
/// order of first appearance (the official serializer groups by object identity; the caller
/// decides identity and passes the group indices).
#[derive(Default)]
pub struct Batch {
    resources: Vec<ResourceSpans>,
}

impl Batch {
    /// Adds a resource group (`resource`, and `schema_url` of `ResourceSpans`); returns its index.
    pub fn add_resource(
        &mut self,
        resource: Resource,
        schema_url: String,
    ) -> Result<usize, TryReserveError> {
        self.resources.try_reserve(1)?;
        self.resources.push(ResourceSpans {
            resource: Some(resource),
            scope_spans: Vec::new(),
            schema_url,
        });
        Ok(self.resources.len() - 1)
    }

    /// Adds a scope group under resource `resource`; returns its index within that resource.
    /// `None` when `resource` is not an index from [`Batch::add_resource`].
    pub fn add_scope(
        &mut self,
        resource: usize,
        scope: InstrumentationScope,
        schema_url: String,
    ) -> Result<Option<usize>, TryReserveError> {
        let Some(group) = self.resources.get_mut(resource) else {
            return Ok(None);
        };
        group.scope_spans.try_reserve(1)?;
        group.scope_spans.push(ScopeSpans {
            scope: Some(scope),
            spans: Vec::new(),
            schema_url,
        });
        Ok(Some(group.scope_spans.len() - 1))
    }

    /// Appends `span` to scope group `scope` of resource group `resource`; `false` when either
    /// index is unknown (the span is not added).
    pub fn push_span(
        &mut self,
        resource: usize,
        scope: usize,
        span: Span,
    ) -> Result<bool, TryReserveError> {
        let Some(group) = self
            .resources
            .get_mut(resource)
            .and_then(|r| r.scope_spans.get_mut(scope))
        else {
            return Ok(false);
        };
        group.spans.try_reserve(1)?;
        group.spans.push(span);
        Ok(true)
    }

    /// The `ExportTraceServiceRequest` of the batch (scope groups without spans are left out, as
    /// the official serializer never creates them).
    pub fn into_request(self) -> ExportTraceServiceRequest {
        let mut resource_spans = self.resources;
        for r in &mut resource_spans {
            r.scope_spans.retain(|s| !s.spans.is_empty());
        }
        ExportTraceServiceRequest { resource_spans }
    }
}

/// Encodes `request` as protobuf bytes, the buffer reserved fallibly at its exact size.
pub fn encode(request: &ExportTraceServiceRequest) -> Result<Vec<u8>, TryReserveError> {
    let mut out = Vec::new();
    out.try_reserve_exact(request.encoded_len())?;
    // ok: cannot fail, the buffer has room for `encoded_len()` bytes (prost only fails on too
    // little capacity, and a `Vec` grows anyway).
    let _ = request.encode(&mut out);
    Ok(out)
}

/// Decodes request bytes and returns the request's debug form (`{:#?}`: every field spelled
/// out), for comparing two encodings field for field; the decoder's message on invalid bytes.
pub fn decode_debug(bytes: &[u8]) -> Result<String, String> {
    ExportTraceServiceRequest::decode(bytes)
        .map(|request| format!("{request:#?}"))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hr_time_matches_exact_arithmetic_for_ordinary_times() {
        for (s, ns) in [
            (0.0, 0.0),
            (1.0, 5.0),
            (1_764_500_000.0, 123_456_789.0),
            (4_294_967_295.0, 999_999_999.0),
            (65_535.0, 1.0),
            (65_536.0, 0.0),
        ] {
            assert_eq!(
                hr_time_nanos(s, ns),
                s as u64 * 1_000_000_000 + ns as u64,
                "{s} {ns}"
            );
        }
        // Fractional nanoseconds are truncated by `>>> 0` after the carry.
        assert_eq!(hr_time_nanos(2.0, 0.75), 2_000_000_000);
    }

    /// ToUint32 by its definition (truncate, then modulo 2^32), without the in-range fast path.
    fn to_uint32_by_definition(x: f64) -> u32 {
        if !x.is_finite() {
            return 0;
        }
        x.trunc().rem_euclid(4_294_967_296.0) as u32
    }

    #[test]
    fn to_uint32_fast_path_agrees_with_the_definition() {
        for x in [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            4_294_967_295.0,
            4_294_967_295.9,
            4_294_967_296.0,
            4_294_967_297.5,
            -1.0,
            -4_294_967_296.5,
            1e300,
            -1e300,
            65_535e9,
            -65_535e9 - 0.5,
            9_223_372_036_854_774_784.0,
            -9_223_372_036_854_775_808.0,
            9_223_372_036_854_775_808.0,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert_eq!(to_uint32(x), to_uint32_by_definition(x), "{x}");
        }
    }

    proptest::proptest! {
        #[test]
        fn to_uint32_agrees_on_any_number(bits in proptest::prelude::any::<u64>(), small in -1e10f64..1e10, large in -1e19f64..1e19) {
            for x in [f64::from_bits(bits), small, large, large.trunc()] {
                proptest::prop_assert_eq!(to_uint32(x), to_uint32_by_definition(x));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn hr_time_fast_path_is_the_split(seconds in 0u64..1 << 32, nanos in 0u64..1 << 32) {
            let (s, n) = (seconds as f64, nanos as f64);
            proptest::prop_assert_eq!(hr_time_nanos(s, n), hr_time_nanos_split(s, n));
            proptest::prop_assert_eq!(hr_time_nanos(s, n), seconds * 1_000_000_000 + nanos);
        }
    }

    #[test]
    fn varints_as_the_official_writer() {
        assert_eq!(js_varint(0.0), 0);
        assert_eq!(js_varint(5.9), 5);
        assert_eq!(js_varint(f64::NAN), 0);
        assert_eq!(js_varint(-1.0), u64::MAX);
        assert_eq!(js_varint(4_294_967_296.0), 1 << 32);
        assert_eq!(js_int32_field(-1.0), -1);
        assert_eq!(js_uint32_field(4_294_967_297.0), 1);
    }

    #[test]
    fn hex_ids() {
        let units: Vec<u16> = "0aFf".encode_utf16().collect();
        assert_eq!(hex_to_binary(&units), Some(vec![0x0a, 0xff]));
        assert_eq!(hex_to_binary(&[48]), None);
        // Not hex: charCode - 55, low 8 bits ('z' = 122 -> 67; 'zz' -> (67 << 4 | 67) & 0xff).
        let zz: Vec<u16> = "zz".encode_utf16().collect();
        assert_eq!(hex_to_binary(&zz), Some(vec![((67 << 4) | 67) as u8]));
    }

    #[test]
    fn numbers() {
        assert_eq!(number_value(-0.0).value, Some(Value::IntValue(0)));
        assert_eq!(number_value(1.5).value, Some(Value::DoubleValue(1.5)));
        assert_eq!(
            number_value(9_223_372_036_854_775_808.0).value,
            Some(Value::DoubleValue(9_223_372_036_854_775_808.0))
        );
        assert_eq!(
            number_value(-9_223_372_036_854_775_808.0).value,
            Some(Value::IntValue(i64::MIN))
        );
        assert!(matches!(
            number_value(f64::INFINITY).value,
            Some(Value::DoubleValue(_))
        ));
    }

    #[test]
    fn batch_groups_and_encodes() {
        let mut batch = Batch::default();
        let r = batch
            .add_resource(Resource::default(), String::new())
            .unwrap();
        let s = batch
            .add_scope(r, InstrumentationScope::default(), String::new())
            .unwrap()
            .unwrap();
        let _empty = batch
            .add_scope(r, InstrumentationScope::default(), String::new())
            .unwrap();
        assert!(batch.push_span(r, s, Span::default()).unwrap());
        assert!(!batch.push_span(r, 9, Span::default()).unwrap());
        let request = batch.into_request();
        assert_eq!(request.resource_spans[0].scope_spans.len(), 1);
        let bytes = encode(&request).unwrap();
        assert_eq!(
            ExportTraceServiceRequest::decode(&bytes[..]).unwrap(),
            request
        );
    }
}
