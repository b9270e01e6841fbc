//! The exporter reads spans with `js/flat.js` + `src/flat.rs` first (a JavaScript walk copied in a
//! few napi calls; several times cheaper on the event loop); this reader, one napi call or more
//! per field, reads the batches that one refuses, and names the reason.
//!
//! The napi side of the native `OTLPTraceExporter` (`genkit-for-maple/otlp`, issue 8): reads the
//! fields of a batch of `ReadableSpan`s (SDK 1.x, 2.x, 3.x) into `opentelemetry-proto` messages on
//! the JavaScript thread, with no JavaScript object created per span, then encodes the
//! `ExportTraceServiceRequest` with prost on the libuv thread pool ([`EncodeTask`]).
//!
//! What is read, and how, follows the official `ProtobufTraceSerializer` of
//! `@opentelemetry/otlp-transformer` 0.301 (`trace-serializer.ts`, `common-serializer.ts`): the
//! same fields, the same truthiness tests, strings as UTF-8 with lone surrogates replaced by
//! U+FFFD (as `TextEncoder`), the same grouping by resource and scope object identity in order of
//! first appearance; the numeric conversions are in the core ([`genkit_for_maple_core::encode`]).
//! SDK 1.x spans (`instrumentationLibrary`, `parentSpanId`) are read as their 2.x equivalents.
//!
//! A span whose structure the official serializer would not accept as a `ReadableSpan` (a name
//! that is not a string, an id of odd length, a getter that throws, ...) makes
//! [`encode_otlp_traces`] throw a JavaScript `Error` naming the reason, without encoding anything:
//! the JavaScript exporter then hands that batch to the official serializer (so the result is the
//! official one, whatever it is). Attribute values of every JavaScript type are encoded here.

use crate::utf;
use genkit_for_maple_core::encode::proto::collector::trace::v1::ExportTraceServiceRequest;
use genkit_for_maple_core::encode::proto::common::v1::{
    any_value::Value, AnyValue, ArrayValue, InstrumentationScope, KeyValue, KeyValueList,
};
use genkit_for_maple_core::encode::proto::resource::v1::Resource;
use genkit_for_maple_core::encode::proto::trace::v1::{span, Span, Status};
use genkit_for_maple_core::encode::{self, Batch};
use napi::bindgen_prelude::{AsyncTask, Buffer, JsValue, Object};
use napi::{sys, Env, Task};
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// Nesting depth of attribute values (arrays and objects inside attribute values) read natively;
/// deeper values send the batch to the official serializer.
pub(crate) const MAX_DEPTH: usize = 64;

/// Why a batch is left to the official serializer.
struct Fail(&'static str);

type R<T> = Result<T, Fail>;

const OOM: Fail = Fail("out of memory while reading the spans");

/// Reads JavaScript values during one `encode_otlp_traces` call, on the JavaScript thread that
/// owns `env` (every handle it touches belongs to that call).
struct Reader {
    env: sys::napi_env,
    /// Reused UTF-16 buffer for string reads.
    units: Vec<u16>,
    /// Property names created once per call (V8 internalizes a key on its first lookup; a C string
    /// key would be converted and looked up in the string table on every get).
    keys: Vec<(&'static CStr, sys::napi_value)>,
}

/// Every property name the reader reads, created as JavaScript strings once per call.
const KEYS: &[&CStr] = &[
    c"attributes",
    c"code",
    c"context",
    c"droppedAttributesCount",
    c"droppedEventsCount",
    c"droppedLinksCount",
    c"endTime",
    c"events",
    c"instrumentationLibrary",
    c"instrumentationScope",
    c"isRemote",
    c"kind",
    c"links",
    c"message",
    c"name",
    c"parentSpanContext",
    c"parentSpanId",
    c"resource",
    c"schemaUrl",
    c"serialize",
    c"spanContext",
    c"spanId",
    c"startTime",
    c"status",
    c"time",
    c"traceFlags",
    c"traceId",
    c"traceState",
    c"version",
];

/// Initial capacity of the UTF-16 buffer: strings shorter than this are read with one napi call.
const SHORT_UNITS: usize = 4096;

impl Reader {
    /// `true` when napi returned `napi_ok`; otherwise clears a pending exception (a getter that
    /// threw) so that later calls work and the JavaScript fallback sees a clean state.
    fn ok(&self, status: sys::napi_status) -> bool {
        if status == sys::Status::napi_ok {
            return true;
        }
        let mut pending = false;
        // SAFETY: live `env` of the current call, valid out-pointer.
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if pending {
            let mut error = ptr::null_mut();
            // SAFETY: as above.
            unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
        }
        false
    }

    /// The property name `key` as a JavaScript string: the one created for this call when `key` is
    /// in [`KEYS`] (all created in the call's outer handle scope, before any span is read, so they
    /// stay valid for the whole call); otherwise created now, for this use only.
    fn key(&mut self, key: &'static CStr) -> sys::napi_value {
        // By address first (the same literal is usually one address): no string comparisons on
        // the hot path; by content when the compiler gave a literal another copy.
        if let Some((_, v)) = self
            .keys
            .iter()
            .find(|(k, _)| ptr::eq(*k, key))
            .or_else(|| self.keys.iter().find(|(k, _)| *k == key))
        {
            return *v;
        }
        let mut v = ptr::null_mut();
        let bytes = key.to_bytes();
        // SAFETY: `bytes` is valid for its length (ASCII, valid Latin-1); valid out-pointer.
        unsafe {
            sys::napi_create_string_latin1(
                self.env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut v,
            )
        };
        v
    }

    fn get(&mut self, object: sys::napi_value, key: &'static CStr) -> R<sys::napi_value> {
        let name = self.key(key);
        let mut value = ptr::null_mut();
        let status = if name.is_null() {
            // SAFETY: `object` is a live object handle of this call; `key` is NUL-terminated.
            unsafe { sys::napi_get_named_property(self.env, object, key.as_ptr(), &mut value) }
        } else {
            // SAFETY: live handles of this call (`name` was created in its outer scope).
            unsafe { sys::napi_get_property(self.env, object, name, &mut value) }
        };
        if self.ok(status) {
            Ok(value)
        } else {
            Err(Fail("a span field could not be read"))
        }
    }

    fn type_of(&self, value: sys::napi_value) -> i32 {
        let mut t = sys::ValueType::napi_undefined;
        // SAFETY: live handle of this call, valid out-pointer.
        unsafe { sys::napi_typeof(self.env, value, &mut t) };
        t
    }

    fn is_nullish(&self, value: sys::napi_value) -> bool {
        matches!(
            self.type_of(value),
            sys::ValueType::napi_undefined | sys::ValueType::napi_null
        )
    }

    /// JavaScript truthiness (`if (value)`).
    fn truthy(&self, value: sys::napi_value) -> bool {
        let mut b = ptr::null_mut();
        let mut out = false;
        // SAFETY: live handle of this call, valid out-pointers; `napi_coerce_to_bool` cannot run
        // JavaScript.
        unsafe {
            if sys::napi_coerce_to_bool(self.env, value, &mut b) == sys::Status::napi_ok {
                sys::napi_get_value_bool(self.env, b, &mut out);
            }
        }
        out
    }

    fn number(&self, value: sys::napi_value) -> Option<f64> {
        let mut n = 0.0;
        // SAFETY: live handle, valid out-pointer; a non-number gives `napi_number_expected`.
        (unsafe { sys::napi_get_value_double(self.env, value, &mut n) } == sys::Status::napi_ok)
            .then_some(n)
    }

    /// Copies a string's UTF-16 code units into `self.units`; `false` when not a string.
    fn units_of(&mut self, value: sys::napi_value) -> R<bool> {
        // First with the buffer as it is (one napi call for most strings): napi writes at most
        // `capacity - 1` units and a NUL; fewer than that written means the whole string fit.
        if self.units.capacity() < SHORT_UNITS {
            self.units.try_reserve(SHORT_UNITS).map_err(|_| OOM)?;
        }
        let capacity = self.units.capacity();
        let mut written = 0usize;
        // SAFETY: the buffer has room for `capacity` units; napi writes at most that (NUL
        // included) and reports the count without the NUL. A non-string gives an error status.
        let status = unsafe {
            sys::napi_get_value_string_utf16(
                self.env,
                value,
                self.units.as_mut_ptr(),
                capacity,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            return Ok(false);
        }
        if written + 1 < capacity {
            // SAFETY: napi initialised `written < capacity` units.
            unsafe { self.units.set_len(written) };
            return Ok(true);
        }
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length only.
        if unsafe {
            sys::napi_get_value_string_utf16(self.env, value, ptr::null_mut(), 0, &mut len)
        } != sys::Status::napi_ok
        {
            return Ok(false);
        }
        self.units.clear();
        self.units.try_reserve(len + 1).map_err(|_| OOM)?;
        // SAFETY: `units` has capacity for `len + 1` units (the string and napi's NUL); napi writes
        // at most that and reports the count without the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf16(
                self.env,
                value,
                self.units.as_mut_ptr(),
                len + 1,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            return Ok(false);
        }
        // SAFETY: napi initialised `written.min(len)` units.
        unsafe { self.units.set_len(written.min(len)) };
        Ok(true)
    }

    /// A string as UTF-8, lone surrogates as U+FFFD (what `TextEncoder` writes); `None` when
    /// `value` is not a string.
    fn string(&mut self, value: sys::napi_value) -> R<Option<String>> {
        if !self.units_of(value)? {
            return Ok(None);
        }
        let mut out = String::new();
        if let Err(e) = utf::utf16_to_utf8(&self.units, &mut out) {
            if e == utf::Utf::OutOfMemory {
                return Err(OOM);
            }
            // A lone surrogate: the slow, replacing decoder (rare); 3 bytes per code unit cover
            // U+FFFD and every BMP character.
            out.clear();
            out.try_reserve_exact(self.units.len().saturating_mul(3))
                .map_err(|_| OOM)?;
            for c in char::decode_utf16(self.units.iter().copied()) {
                out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
        Ok(Some(out))
    }

    /// A field the official serializer writes with `writeString`: must be a string.
    fn required_string(&mut self, value: sys::napi_value, what: &'static str) -> R<String> {
        self.string(value)?.ok_or(Fail(what))
    }

    /// A field written only when truthy (`if (x) writeString(x)`): `""` when falsy.
    fn optional_string(&mut self, value: sys::napi_value, what: &'static str) -> R<String> {
        if !self.truthy(value) {
            return Ok(String::new());
        }
        self.required_string(value, what)
    }

    /// A trace or span id (hex string) as bytes, as `hexToBinary`.
    fn id(&mut self, value: sys::napi_value) -> R<Vec<u8>> {
        if !self.units_of(value)? {
            return Err(Fail("a trace or span id is not a string"));
        }
        encode::hex_to_binary(&self.units).ok_or(Fail("a trace or span id has an odd length"))
    }

    /// A `uint32` field written with `writeVarint(value)`: a number, or `undefined` (written as 0).
    fn count(&self, value: sys::napi_value) -> R<u32> {
        match self.number(value) {
            Some(n) => Ok(encode::js_uint32_field(n)),
            None if self.type_of(value) == sys::ValueType::napi_undefined => Ok(0),
            None => Err(Fail("a dropped count is not a number")),
        }
    }

    /// `x || 0` then `writeVarint`.
    fn count_or_zero(&self, value: sys::napi_value) -> R<u32> {
        if !self.truthy(value) {
            return Ok(0);
        }
        self.count(value)
    }

    /// An `HrTime` (`[seconds, nanoseconds]`) as fixed64 nanoseconds.
    fn hr_time(&self, value: sys::napi_value) -> R<u64> {
        let part = |i: u32| -> R<f64> {
            let mut v = ptr::null_mut();
            // SAFETY: live handle; a non-object gives an error status.
            let status = unsafe { sys::napi_get_element(self.env, value, i, &mut v) };
            if !self.ok(status) {
                return Err(Fail("a time is not an HrTime"));
            }
            self.number(v).ok_or(Fail("a time is not an HrTime"))
        };
        if self.type_of(value) != sys::ValueType::napi_object {
            return Err(Fail("a time is not an HrTime"));
        }
        Ok(encode::hr_time_nanos(part(0)?, part(1)?))
    }

    fn length(&self, array: sys::napi_value) -> R<u32> {
        let mut len = 0u32;
        // SAFETY: live handle, valid out-pointer.
        let status = unsafe { sys::napi_get_array_length(self.env, array, &mut len) };
        if self.ok(status) {
            Ok(len)
        } else {
            Err(Fail("not an array"))
        }
    }

    fn element(&self, array: sys::napi_value, i: u32) -> R<sys::napi_value> {
        let mut v = ptr::null_mut();
        // SAFETY: live handle, valid out-pointer.
        let status = unsafe { sys::napi_get_element(self.env, array, i, &mut v) };
        if self.ok(status) {
            Ok(v)
        } else {
            Err(Fail("an element could not be read"))
        }
    }

    fn is_array(&self, value: sys::napi_value) -> bool {
        let mut b = false;
        // SAFETY: live handle, valid out-pointer.
        unsafe { sys::napi_is_array(self.env, value, &mut b) };
        b
    }

    /// Own enumerable string-keyed properties, in `Object.keys` order (which is the
    /// `for...in` + `hasOwnProperty` order of the official writer), as key-values.
    fn key_values(&mut self, object: sys::napi_value, depth: usize) -> R<Vec<KeyValue>> {
        let mut keys = ptr::null_mut();
        // SAFETY: live object handle, valid out-pointer.
        let status = unsafe {
            sys::napi_get_all_property_names(
                self.env,
                object,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut keys,
            )
        };
        if !self.ok(status) {
            return Err(Fail("attribute keys could not be listed"));
        }
        let n = self.length(keys)?;
        let mut out = Vec::new();
        out.try_reserve(n as usize).map_err(|_| OOM)?;
        for i in 0..n {
            let key = self.element(keys, i)?;
            let name = self
                .string(key)?
                .ok_or(Fail("an attribute key is not a string"))?;
            let mut value = ptr::null_mut();
            // SAFETY: live handles of this call, valid out-pointer.
            let status = unsafe { sys::napi_get_property(self.env, object, key, &mut value) };
            if !self.ok(status) {
                return Err(Fail("an attribute value could not be read"));
            }
            out.push(KeyValue {
                key: name,
                value: Some(self.any_value(value, depth)?),
            });
        }
        Ok(out)
    }

    /// Attributes written when the field is truthy (`if (attributes) writeAttributes(...)`).
    fn attributes(&mut self, value: sys::napi_value) -> R<Vec<KeyValue>> {
        if !self.truthy(value) {
            return Ok(Vec::new());
        }
        if !matches!(
            self.type_of(value),
            sys::ValueType::napi_object | sys::ValueType::napi_function
        ) {
            return Err(Fail("an attribute map is not an object"));
        }
        self.key_values(value, 0)
    }

    /// An attribute value as `writeAnyValue`: string, boolean, number (int or double), a
    /// `Uint8Array` as bytes, arrays and other objects nested; anything else (undefined, null,
    /// functions, symbols, bigints) is an empty `AnyValue`.
    fn any_value(&mut self, value: sys::napi_value, depth: usize) -> R<AnyValue> {
        let kind = match self.type_of(value) {
            sys::ValueType::napi_string => self.string(value)?.map(Value::StringValue),
            sys::ValueType::napi_boolean => {
                let mut b = false;
                // SAFETY: live handle known to be a boolean, valid out-pointer.
                unsafe { sys::napi_get_value_bool(self.env, value, &mut b) };
                Some(Value::BoolValue(b))
            }
            sys::ValueType::napi_number => {
                return Ok(encode::number_value(self.number(value).unwrap_or(f64::NAN)))
            }
            sys::ValueType::napi_object => {
                if depth >= MAX_DEPTH {
                    return Err(Fail("an attribute value is nested too deeply"));
                }
                if let Some(bytes) = self.uint8_array(value)? {
                    Some(Value::BytesValue(bytes))
                } else if self.is_array(value) {
                    let n = self.length(value)?;
                    let mut values = Vec::new();
                    values.try_reserve(n as usize).map_err(|_| OOM)?;
                    for i in 0..n {
                        let item = self.element(value, i)?;
                        values.push(self.any_value(item, depth + 1)?);
                    }
                    Some(Value::ArrayValue(ArrayValue { values }))
                } else {
                    Some(Value::KvlistValue(KeyValueList {
                        values: self.key_values(value, depth + 1)?,
                    }))
                }
            }
            _ => None,
        };
        Ok(AnyValue { value: kind })
    }

    /// The bytes of a `Uint8Array` (a `Buffer` included); `None` for any other value.
    fn uint8_array(&self, value: sys::napi_value) -> R<Option<Vec<u8>>> {
        let mut is = false;
        // SAFETY: live handle, valid out-pointer.
        unsafe { sys::napi_is_typedarray(self.env, value, &mut is) };
        if !is {
            return Ok(None);
        }
        let mut kind = 0;
        let mut len = 0usize;
        let mut data: *mut std::ffi::c_void = ptr::null_mut();
        // SAFETY: `value` is a typed array; null out-pointers are allowed for the array buffer and
        // the offset (N-API documents them as optional).
        let status = unsafe {
            sys::napi_get_typedarray_info(
                self.env,
                value,
                &mut kind,
                &mut len,
                &mut data,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
            return Ok(None);
        }
        let mut out = Vec::new();
        out.try_reserve_exact(len).map_err(|_| OOM)?;
        if len > 0 && !data.is_null() {
            // SAFETY: napi reports `data` pointing at the first of `len` bytes of the array (the
            // byte offset applied), alive for this call; nothing else writes them meanwhile (we are
            // on the JavaScript thread).
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) });
        }
        Ok(Some(out))
    }

    /// Calls `object[method]()` and returns the result.
    fn call_method(
        &mut self,
        object: sys::napi_value,
        method: &'static CStr,
    ) -> R<sys::napi_value> {
        let f = self.get(object, method)?;
        if self.type_of(f) != sys::ValueType::napi_function {
            return Err(Fail("a span method is missing"));
        }
        let mut out = ptr::null_mut();
        // SAFETY: `f` is a function handle of this call, `object` its receiver; no arguments.
        let status =
            unsafe { sys::napi_call_function(self.env, object, f, 0, ptr::null(), &mut out) };
        if self.ok(status) {
            Ok(out)
        } else {
            Err(Fail("a span method threw"))
        }
    }

    /// `traceState?.serialize()` when truthy, else `""`.
    fn trace_state(&mut self, context: sys::napi_value) -> R<String> {
        let state = self.get(context, c"traceState")?;
        if self.is_nullish(state) {
            return Ok(String::new());
        }
        let text = self.call_method(state, c"serialize")?;
        self.optional_string(text, "a trace state did not serialize to a string")
    }

    fn resource(&mut self, resource: sys::napi_value) -> R<(Resource, String)> {
        if self.type_of(resource) != sys::ValueType::napi_object {
            return Err(Fail("a span has no resource"));
        }
        let attributes = self.get(resource, c"attributes")?;
        let attributes = self.attributes(attributes)?;
        let schema = self.get(resource, c"schemaUrl")?;
        let schema = self.optional_string(schema, "a resource schemaUrl is not a string")?;
        Ok((
            Resource {
                attributes,
                dropped_attributes_count: 0,
                entity_refs: Vec::new(),
            },
            schema,
        ))
    }

    fn scope(&mut self, scope: sys::napi_value) -> R<(InstrumentationScope, String)> {
        if self.type_of(scope) != sys::ValueType::napi_object {
            return Err(Fail("a span has no instrumentation scope"));
        }
        let name = self.get(scope, c"name")?;
        let name = self.required_string(name, "a scope name is not a string")?;
        let version = self.get(scope, c"version")?;
        let version = self.optional_string(version, "a scope version is not a string")?;
        let attributes = self.get(scope, c"attributes")?;
        let attributes = self.attributes(attributes)?;
        let dropped = self.get(scope, c"droppedAttributesCount")?;
        let dropped = self.count_or_zero(dropped)?;
        let schema = self.get(scope, c"schemaUrl")?;
        let schema = self.optional_string(schema, "a scope schemaUrl is not a string")?;
        Ok((
            InstrumentationScope {
                name,
                version,
                attributes,
                dropped_attributes_count: dropped,
            },
            schema,
        ))
    }

    fn event(&mut self, event: sys::napi_value) -> R<span::Event> {
        if self.type_of(event) != sys::ValueType::napi_object {
            return Err(Fail("a span event is not an object"));
        }
        let time = self.get(event, c"time")?;
        let name = self.get(event, c"name")?;
        let attributes = self.get(event, c"attributes")?;
        let dropped = self.get(event, c"droppedAttributesCount")?;
        Ok(span::Event {
            time_unix_nano: self.hr_time(time)?,
            name: self.required_string(name, "an event name is not a string")?,
            attributes: self.attributes(attributes)?,
            dropped_attributes_count: self.count_or_zero(dropped)?,
        })
    }

    fn link(&mut self, link: sys::napi_value) -> R<span::Link> {
        if self.type_of(link) != sys::ValueType::napi_object {
            return Err(Fail("a span link is not an object"));
        }
        let context = self.get(link, c"context")?;
        if self.type_of(context) != sys::ValueType::napi_object {
            return Err(Fail("a span link has no context"));
        }
        let trace_id = self.get(context, c"traceId")?;
        let span_id = self.get(context, c"spanId")?;
        let trace_flags = self.get(context, c"traceFlags")?;
        let is_remote = self.get(context, c"isRemote")?;
        let attributes = self.get(link, c"attributes")?;
        let dropped = self.get(link, c"droppedAttributesCount")?;
        Ok(span::Link {
            trace_id: self.id(trace_id)?,
            span_id: self.id(span_id)?,
            trace_state: self.trace_state(context)?,
            attributes: self.attributes(attributes)?,
            dropped_attributes_count: self.count_or_zero(dropped)?,
            flags: encode::span_flags(self.flags_number(trace_flags)?, self.truthy(is_remote)),
        })
    }

    /// `traceFlags` as the number `& 255` reads (`undefined` is 0).
    fn flags_number(&self, value: sys::napi_value) -> R<f64> {
        match self.number(value) {
            Some(n) => Ok(n),
            None if self.type_of(value) == sys::ValueType::napi_undefined => Ok(0.0),
            None => Err(Fail("trace flags are not a number")),
        }
    }

    /// A list field read with `for (const x of list)`: an array, each element read by `each`.
    fn list<T>(
        &mut self,
        list: sys::napi_value,
        mut each: impl FnMut(&mut Self, sys::napi_value) -> R<T>,
    ) -> R<Vec<T>> {
        if !self.is_array(list) {
            return Err(Fail("span events or links are not an array"));
        }
        let n = self.length(list)?;
        let mut out = Vec::new();
        out.try_reserve(n as usize).map_err(|_| OOM)?;
        for i in 0..n {
            let item = self.element(list, i)?;
            out.push(each(self, item)?);
        }
        Ok(out)
    }

    /// One span, every field but its resource and scope.
    fn span(&mut self, span: sys::napi_value) -> R<Span> {
        if self.type_of(span) != sys::ValueType::napi_object {
            return Err(Fail("a span is not an object"));
        }
        let context = self.call_method(span, c"spanContext")?;
        if self.type_of(context) != sys::ValueType::napi_object {
            return Err(Fail("spanContext() is not an object"));
        }
        let trace_id = self.get(context, c"traceId")?;
        let trace_id = self.id(trace_id)?;
        let span_id = self.get(context, c"spanId")?;
        let span_id = self.id(span_id)?;
        let trace_state = self.trace_state(context)?;
        let trace_flags = self.get(context, c"traceFlags")?;
        let trace_flags = self.flags_number(trace_flags)?;

        // Parent: SDK 2.x/3.x `parentSpanContext`, SDK 1.x `parentSpanId`.
        let mut parent_span_id = Vec::new();
        let mut parent_remote = false;
        let parent = self.get(span, c"parentSpanContext")?;
        if self.type_of(parent) == sys::ValueType::napi_object {
            let id = self.get(parent, c"spanId")?;
            if self.truthy(id) {
                parent_span_id = self.id(id)?;
            }
            let remote = self.get(parent, c"isRemote")?;
            parent_remote = self.truthy(remote);
        } else if self.type_of(parent) == sys::ValueType::napi_undefined {
            let id = self.get(span, c"parentSpanId")?;
            if self.truthy(id) {
                parent_span_id = self.id(id)?;
            }
        }

        let name = self.get(span, c"name")?;
        let name = self.required_string(name, "a span name is not a string")?;
        let kind = self.get(span, c"kind")?;
        let kind = if self.is_nullish(kind) {
            0
        } else {
            let k = self
                .number(kind)
                .ok_or(Fail("a span kind is not a number"))?
                + 1.0;
            if k == 0.0 {
                0
            } else {
                encode::js_int32_field(k)
            }
        };
        let start = self.get(span, c"startTime")?;
        let end = self.get(span, c"endTime")?;
        let attributes = self.get(span, c"attributes")?;
        let dropped_attributes = self.get(span, c"droppedAttributesCount")?;
        let events = self.get(span, c"events")?;
        let dropped_events = self.get(span, c"droppedEventsCount")?;
        let links = self.get(span, c"links")?;
        let dropped_links = self.get(span, c"droppedLinksCount")?;
        let status = self.get(span, c"status")?;
        if self.type_of(status) != sys::ValueType::napi_object {
            return Err(Fail("a span status is not an object"));
        }
        let message = self.get(status, c"message")?;
        let code = self.get(status, c"code")?;
        let code = match self.number(code) {
            Some(n) => encode::js_int32_field(n),
            None if self.type_of(code) == sys::ValueType::napi_undefined => 0,
            None => return Err(Fail("a status code is not a number")),
        };
        Ok(Span {
            trace_id,
            span_id,
            trace_state,
            parent_span_id,
            flags: encode::span_flags(trace_flags, parent_remote),
            name,
            kind,
            start_time_unix_nano: self.hr_time(start)?,
            end_time_unix_nano: self.hr_time(end)?,
            attributes: self.attributes(attributes)?,
            dropped_attributes_count: self.count(dropped_attributes)?,
            events: self.list(events, Self::event)?,
            dropped_events_count: self.count(dropped_events)?,
            links: self.list(links, Self::link)?,
            dropped_links_count: self.count(dropped_links)?,
            status: Some(Status {
                message: self.optional_string(message, "a status message is not a string")?,
                code,
            }),
        })
    }

    fn strict_equals(&self, a: sys::napi_value, b: sys::napi_value) -> bool {
        let mut eq = false;
        // SAFETY: live handles of this call, valid out-pointer.
        unsafe { sys::napi_strict_equals(self.env, a, b, &mut eq) };
        eq
    }

    /// Reads the whole batch, grouped as the official serializer groups it.
    fn batch(&mut self, spans: sys::napi_value) -> R<ExportTraceServiceRequest> {
        self.batch_with_positions(spans, None)
    }

    /// [`Self::batch`], and, when `positions` is given, where each span of the batch landed in
    /// the request, in batch order: (resource group, scope group, index in the scope group).
    fn batch_with_positions(
        &mut self,
        spans: sys::napi_value,
        mut positions: Option<&mut Vec<SpanPosition>>,
    ) -> R<ExportTraceServiceRequest> {
        if !self.is_array(spans) {
            return Err(Fail("the spans are not an array"));
        }
        let n = self.length(spans)?;
        if let Some(p) = positions.as_deref_mut() {
            p.try_reserve_exact(n as usize).map_err(|_| OOM)?;
        }
        // Spans pushed so far per (resource group, scope group), for `positions`.
        let mut counts: Vec<Vec<usize>> = Vec::new();
        let mut batch = Batch::default();
        // (resource handle, batch index, [(scope handle, scope index)]): identity groups.
        type Group = (sys::napi_value, usize, Vec<(sys::napi_value, usize)>);
        let mut groups: Vec<Group> = Vec::new();
        for i in 0..n {
            let span = self.element(spans, i)?;
            if self.type_of(span) != sys::ValueType::napi_object {
                return Err(Fail("a span is not an object"));
            }
            let resource = self.get(span, c"resource")?;
            let mut scope = self.get(span, c"instrumentationScope")?;
            if self.type_of(scope) == sys::ValueType::napi_undefined {
                // SDK 1.x.
                scope = self.get(span, c"instrumentationLibrary")?;
            }
            // The most recent group first: a batch usually has one resource and few scopes.
            let g = match (0..groups.len())
                .rev()
                .find(|&g| self.strict_equals(groups[g].0, resource))
            {
                Some(g) => g,
                None => {
                    let (message, schema) = self.resource(resource)?;
                    let index = batch.add_resource(message, schema).map_err(|_| OOM)?;
                    groups.try_reserve(1).map_err(|_| OOM)?;
                    groups.push((resource, index, Vec::new()));
                    groups.len() - 1
                }
            };
            let resource_index = groups[g].1;
            let s = match (0..groups[g].2.len())
                .rev()
                .find(|&s| self.strict_equals(groups[g].2[s].0, scope))
            {
                Some(s) => groups[g].2[s].1,
                None => {
                    let (message, schema) = self.scope(scope)?;
                    let index = batch
                        .add_scope(resource_index, message, schema)
                        .map_err(|_| OOM)?
                        .ok_or(Fail("internal: unknown resource group"))?;
                    groups[g].2.try_reserve(1).map_err(|_| OOM)?;
                    groups[g].2.push((scope, index));
                    index
                }
            };
            // The span's own handles live in a scope closed after it, so a big batch does not
            // accumulate handles (the resource and scope handles above stay in the outer scope).
            let mut handle_scope = ptr::null_mut();
            // SAFETY: live `env`, valid out-pointer; closed below on every path.
            unsafe { sys::napi_open_handle_scope(self.env, &mut handle_scope) };
            let message = self.span(span);
            // SAFETY: the scope opened above, closed once.
            unsafe { sys::napi_close_handle_scope(self.env, handle_scope) };
            if !batch
                .push_span(resource_index, s, message?)
                .map_err(|_| OOM)?
            {
                return Err(Fail("internal: unknown scope group"));
            }
            if let Some(p) = positions.as_deref_mut() {
                while counts.len() <= resource_index {
                    counts.try_reserve(1).map_err(|_| OOM)?;
                    counts.push(Vec::new());
                }
                let scopes = &mut counts[resource_index];
                while scopes.len() <= s {
                    scopes.try_reserve(1).map_err(|_| OOM)?;
                    scopes.push(0);
                }
                p.push((resource_index, s, scopes[s]));
                scopes[s] += 1;
            }
        }
        Ok(batch.into_request())
    }
}

/// Where a span of a batch is in its request: (resource group, scope group, index in the scope
/// group), indices into `resource_spans`, `scope_spans` and `spans`.
pub(crate) type SpanPosition = (usize, usize, usize);

/// A [`Reader`] for one napi call on the JavaScript thread of `env`, with its keys created.
fn reader(env: sys::napi_env) -> Reader {
    let mut reader = Reader {
        env,
        units: Vec::new(),
        keys: Vec::new(),
    };
    // In the call's outer handle scope: valid for the whole call, across the per-span scopes.
    for key in KEYS {
        let v = reader.key(key);
        if !v.is_null() && reader.keys.try_reserve(1).is_ok() {
            reader.keys.push((key, v));
        }
    }
    reader
}

/// Reads a batch as [`encode_otlp_traces`] does (same rules, same refusals), plus the position of
/// each span in the request, for the fused mapping (`src/fused.rs`). On the JavaScript thread of
/// `env`; the error is the reason the batch is refused. Panics are not caught here.
pub(crate) fn read_batch_with_positions(
    env: sys::napi_env,
    spans: sys::napi_value,
) -> Result<(ExportTraceServiceRequest, Vec<SpanPosition>), &'static str> {
    let mut positions = Vec::new();
    let request = reader(env)
        .batch_with_positions(spans, Some(&mut positions))
        .map_err(|Fail(reason)| reason)?;
    Ok((request, positions))
}

/// Reads an attribute map (`span.attributes`) as key-values, as the span reader does. On the
/// JavaScript thread of `env`. Panics are not caught here.
pub(crate) fn read_attributes(
    env: sys::napi_env,
    attributes: sys::napi_value,
) -> Result<Vec<KeyValue>, &'static str> {
    reader(env)
        .attributes(attributes)
        .map_err(|Fail(reason)| reason)
}

/// Replaces the default panic hook (which prints to stderr) by a silent one, once per process:
/// panics are caught at the boundary and become errors the exporter reports through diag.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

/// The off-thread half of an export: encodes a request read by [`encode_otlp_traces`] on the
/// libuv thread pool and resolves to its protobuf bytes (the request, and its strings, are freed
/// on that thread too).
pub struct EncodeTask {
    request: Option<ExportTraceServiceRequest>,
}

impl Task for EncodeTask {
    type Output = Vec<u8>;
    type JsValue = Buffer;

    fn compute(&mut self) -> napi::Result<Vec<u8>> {
        let request = self.request.take();
        let encoded = catch_unwind(AssertUnwindSafe(move || {
            request.map(|r| encode::encode(&r))
        }));
        match encoded {
            Ok(Some(Ok(bytes))) => Ok(bytes),
            Ok(Some(Err(_))) => Err(napi::Error::from_reason(
                "out of memory while encoding the OTLP request",
            )),
            Ok(None) => Err(napi::Error::from_reason(
                "internal: the request was already encoded",
            )),
            Err(_) => Err(napi::Error::from_reason(
                "panic while encoding the OTLP request",
            )),
        }
    }

    fn resolve(&mut self, _env: Env, output: Vec<u8>) -> napi::Result<Buffer> {
        Ok(output.into())
    }
}

/// Reads `spans` (an array of OpenTelemetry `ReadableSpan`s of SDK 1.x, 2.x or 3.x) on the calling
/// thread and returns a `Promise<Buffer>` of the OTLP/protobuf `ExportTraceServiceRequest` bytes,
/// encoded on the libuv thread pool: the request the official `ProtobufTraceSerializer` of
/// `@opentelemetry/otlp-transformer` 0.301 writes, field for field once decoded.
///
/// Throws an `Error` (nothing encoded, no exception left pending) when a span's structure is not
/// that of a `ReadableSpan` the official serializer accepts, a getter throws, memory runs out, or
/// on an internal panic; the caller then serializes the batch with the official serializer. The
/// promise rejects only when encoding itself fails (out of memory, panic).
#[napi]
pub fn encode_otlp_traces(env: Env, spans: Object<'_>) -> napi::Result<AsyncTask<EncodeTask>> {
    quiet_panics();
    let raw = spans.raw();
    let read = catch_unwind(AssertUnwindSafe(|| reader(env.raw()).batch(raw)));
    match read {
        Ok(Ok(request)) => Ok(AsyncTask::new(EncodeTask {
            request: Some(request),
        })),
        Ok(Err(Fail(reason))) => Err(napi::Error::from_reason(reason)),
        Err(_) => Err(napi::Error::from_reason("panic while reading the spans")),
    }
}

/// Test support: decodes OTLP/protobuf `ExportTraceServiceRequest` bytes with the official proto
/// definitions (opentelemetry-proto + prost) and returns the request's Rust debug form, every
/// field spelled out (`{:#?}`), so two encodings can be compared field for field. Throws on bytes
/// that are not a request.
#[napi]
pub fn decode_otlp_trace_request(body: Buffer) -> napi::Result<String> {
    let bytes: &[u8] = &body;
    match catch_unwind(AssertUnwindSafe(|| encode::decode_debug(bytes))) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(napi::Error::from_reason(e)),
        Err(_) => Err(napi::Error::from_reason("panic while decoding")),
    }
}

/// Benchmark support (bench/exporter.js): CPU time consumed by the calling thread, in nanoseconds
/// (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), so main-thread figures are not inflated by other
/// processes on a busy machine. `NaN` where this is not implemented (not Linux).
#[napi]
pub fn bench_thread_cpu_ns() -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            tv_sec: i64,
            tv_nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut ts = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock_gettime` writes one `struct timespec` (two 64-bit fields on the 64-bit
        // Linux targets this package builds for) into the valid pointer it is given.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        if rc == 0 {
            return ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64;
        }
        f64::NAN
    }
    #[cfg(not(target_os = "linux"))]
    {
        f64::NAN
    }
}

/// Soak support (scripts/soak.js): returns the free memory of every glibc malloc arena to the
/// system (`malloc_trim(0)`: the heap's top and every whole free page inside it), so that the
/// soak's resident-memory check counts memory in use, not pages the allocator keeps after a
/// batch's strings are freed (measured in the EXPORTER-NOTE of scripts/soak.js). `true` when
/// memory was released; `false` when none was, or where this is not glibc (musl, macOS, Windows).
#[napi]
pub fn soak_malloc_trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: `malloc_trim` (glibc, <malloc.h>) takes a byte count, touches only the
        // allocator's own free memory under the arenas' locks, and is safe to call from any thread
        // at any time.
        (unsafe { malloc_trim(0) }) == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Soak support (scripts/soak.js): bytes glibc's malloc has handed out and not had back, over every
/// arena (`mallinfo2()`: `uordblks`, in use in the arenas' heaps, plus `hblkhd`, in mmapped
/// chunks): the native memory in use (the addon's Rust allocations and Node's own), without the
/// free pages the allocator keeps. `NaN` where `mallinfo2` is absent (glibc before 2.33, not glibc);
/// looked up at run time so that the binary still loads on an older glibc.
#[napi]
pub fn soak_malloc_in_use() -> f64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // Only `hblkhd` and `uordblks` are read; the others give the C layout.
        #[allow(dead_code)]
        #[repr(C)]
        struct Mallinfo2 {
            arena: usize,
            ordblks: usize,
            smblks: usize,
            hblks: usize,
            hblkhd: usize,
            usmblks: usize,
            fsmblks: usize,
            uordblks: usize,
            fordblks: usize,
            keepcost: usize,
        }
        extern "C" {
            fn dlsym(
                handle: *mut std::ffi::c_void,
                symbol: *const std::ffi::c_char,
            ) -> *mut std::ffi::c_void;
        }
        // SAFETY: `dlsym(RTLD_DEFAULT = NULL, name)` with a NUL-terminated name only looks the
        // symbol up; a null result is handled below.
        let f = unsafe { dlsym(ptr::null_mut(), c"mallinfo2".as_ptr()) };
        if f.is_null() {
            return f64::NAN;
        }
        // SAFETY: the non-null `mallinfo2` of glibc has this signature
        // (`struct mallinfo2 mallinfo2(void)`, ten `size_t` fields in this order, <malloc.h>).
        let mallinfo2: extern "C" fn() -> Mallinfo2 = unsafe { std::mem::transmute(f) };
        let info = mallinfo2();
        (info.uordblks as f64) + (info.hblkhd as f64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        f64::NAN
    }
}
