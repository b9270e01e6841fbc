//! The native half of the exporter's JavaScript span reader (`js/flat.js`, issue 8): copies the
//! flat form of a batch (one `Float64Array` of numbers, a few joined strings, the strings too big
//! to join, the `Uint8Array` attribute values) out of V8 in a handful of napi calls on the
//! JavaScript thread ([`read_flat`]), and builds the `ExportTraceServiceRequest` from it on the
//! libuv thread pool ([`decode`]: string splitting, UTF-16 -> UTF-8, the protobuf messages), so
//! that the event loop only pays for the JavaScript walk and a few copies.
//!
//! The stream's layout is documented in `js/flat.js`; the messages built are those
//! `src/export.rs`'s reader builds for the same spans (the same numeric conversions, from the
//! core's [`encode`] module; strings with lone surrogates replaced by U+FFFD, as `TextEncoder`).
//! Everything the official serializer would refuse was refused in JavaScript already; a stream
//! that does not parse here is an internal error (the exporter then falls back to the official
//! serializer for that batch).

use crate::export::SpanPosition;
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
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

const OOM: &str = "out of memory while reading the spans";
const BAD: &str = "internal: the flat span stream does not parse";

/// A batch copied out of V8 by [`read_flat`], owned by Rust (sendable to the pool).
pub(crate) struct Flat {
    nums: Vec<f64>,
    /// The joined strings, in order.
    chunks: Vec<Text>,
    bigs: Vec<Text>,
    bytes: Vec<Vec<u8>>,
}

/// A string copied out of V8: as Latin-1 when no code unit is above 0xFF, else as UTF-16.
enum Text {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

/// A piece of a [`Text`].
#[derive(Clone, Copy)]
enum Piece<'a> {
    Latin1(&'a [u8]),
    Utf16(&'a [u16]),
}

impl Text {
    fn len(&self) -> usize {
        match self {
            Text::Latin1(b) => b.len(),
            Text::Utf16(u) => u.len(),
        }
    }

    fn piece(&self, from: usize, to: usize) -> Option<Piece<'_>> {
        match self {
            Text::Latin1(b) => b.get(from..to).map(Piece::Latin1),
            Text::Utf16(u) => u.get(from..to).map(Piece::Utf16),
        }
    }
}

/// The length of a JavaScript string (UTF-16 units); `None` when `value` is not a string.
fn string_len(env: sys::napi_env, value: sys::napi_value) -> Option<usize> {
    let mut len = 0usize;
    // SAFETY: a null buffer asks for the length only; live handle of this call.
    let status =
        unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut len) };
    (status == sys::Status::napi_ok).then_some(len)
}

/// Copies the string `value`: as Latin-1 when `wide` is `false` (the JavaScript side found no code
/// unit above 0xFF), else as UTF-16.
fn read_text(env: sys::napi_env, value: sys::napi_value, wide: bool) -> Result<Text, &'static str> {
    let len = string_len(env, value).ok_or(BAD)?;
    let mut written = 0usize;
    if wide {
        let mut out: Vec<u16> = Vec::new();
        out.try_reserve_exact(len + 1).map_err(|_| OOM)?;
        // SAFETY: `out` has room for `len + 1` units (the string and napi's NUL); napi writes at
        // most that many and reports the count without the NUL.
        let status = unsafe {
            sys::napi_get_value_string_utf16(env, value, out.as_mut_ptr(), len + 1, &mut written)
        };
        if status != sys::Status::napi_ok {
            return Err(BAD);
        }
        // SAFETY: napi initialised `written.min(len)` units.
        unsafe { out.set_len(written.min(len)) };
        Ok(Text::Utf16(out))
    } else {
        let mut out: Vec<u8> = Vec::new();
        out.try_reserve_exact(len + 1).map_err(|_| OOM)?;
        // SAFETY: `out` has room for `len + 1` bytes (the string, one byte a unit as Latin-1, and
        // napi's NUL); napi writes at most that many and reports the count without the NUL.
        let status = unsafe {
            sys::napi_get_value_string_latin1(
                env,
                value,
                out.as_mut_ptr().cast(),
                len + 1,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(BAD);
        }
        // SAFETY: napi initialised `written.min(len)` bytes.
        unsafe { out.set_len(written.min(len)) };
        Ok(Text::Latin1(out))
    }
}

/// The booleans of the JavaScript array `array`.
fn booleans(env: sys::napi_env, array: sys::napi_value) -> Result<Vec<bool>, &'static str> {
    let mut out = Vec::new();
    for_each(env, array, |v| {
        let mut b = false;
        // SAFETY: live handle, valid out-pointer; a non-boolean gives an error status.
        if unsafe { sys::napi_get_value_bool(env, v, &mut b) } != sys::Status::napi_ok {
            return Err(BAD);
        }
        out.try_reserve(1).map_err(|_| OOM)?;
        out.push(b);
        Ok(())
    })?;
    Ok(out)
}

/// The elements of the JavaScript array `array`, each passed to `each`.
fn for_each(
    env: sys::napi_env,
    array: sys::napi_value,
    mut each: impl FnMut(sys::napi_value) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    let mut len = 0u32;
    // SAFETY: live handle, valid out-pointer; a non-array gives an error status.
    if unsafe { sys::napi_get_array_length(env, array, &mut len) } != sys::Status::napi_ok {
        return Err(BAD);
    }
    for i in 0..len {
        let mut v = ptr::null_mut();
        // SAFETY: live handle, valid out-pointer.
        if unsafe { sys::napi_get_element(env, array, i, &mut v) } != sys::Status::napi_ok {
            return Err(BAD);
        }
        each(v)?;
    }
    Ok(())
}

/// The elements of a typed array of kind `want`: (data pointer, element count).
fn typed_array(
    env: sys::napi_env,
    value: sys::napi_value,
    want: i32,
) -> Result<(*const std::ffi::c_void, usize), &'static str> {
    let mut is = false;
    // SAFETY: live handle, valid out-pointer.
    unsafe { sys::napi_is_typedarray(env, value, &mut is) };
    if !is {
        return Err(BAD);
    }
    let mut kind = 0;
    let mut len = 0usize;
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: `value` is a typed array; null out-pointers are allowed for the array buffer and
    // the offset.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            value,
            &mut kind,
            &mut len,
            &mut data,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || kind != want {
        return Err(BAD);
    }
    Ok((data, len))
}

/// Copies the flat form of a batch out of V8 (on the JavaScript thread of `env`): the first `len`
/// numbers of the `Float64Array` `nums`, the strings of the arrays `chunks` and `bigs` (`wide`:
/// per string of `chunks` then of `bigs`, whether one of its code units is above 0xFF), the bytes
/// of the `Uint8Array`s of `bytes`. Panics are not caught here.
pub(crate) fn read_flat(
    env: sys::napi_env,
    nums: sys::napi_value,
    len: u32,
    chunks: sys::napi_value,
    bigs: sys::napi_value,
    wide: sys::napi_value,
    bytes: sys::napi_value,
) -> Result<Flat, &'static str> {
    let wide = booleans(env, wide)?;
    let mut kinds = wide.iter().copied();
    let (data, count) = typed_array(env, nums, sys::TypedarrayType::float64_array)?;
    let len = len as usize;
    if len > count || (len > 0 && data.is_null()) {
        return Err(BAD);
    }
    let mut numbers = Vec::new();
    numbers.try_reserve_exact(len).map_err(|_| OOM)?;
    if len > 0 {
        // SAFETY: napi reports `data` pointing at the first of `count >= len` f64 elements of the
        // array (offset applied, aligned as a Float64Array is), alive for this call; nothing
        // else writes them meanwhile (we are on the JavaScript thread).
        numbers.extend_from_slice(unsafe { std::slice::from_raw_parts(data.cast::<f64>(), len) });
    }
    let mut texts = Vec::new();
    for_each(env, chunks, |chunk| {
        let text = read_text(env, chunk, kinds.next().ok_or(BAD)?)?;
        texts.try_reserve(1).map_err(|_| OOM)?;
        texts.push(text);
        Ok(())
    })?;
    let mut big = Vec::new();
    for_each(env, bigs, |s| {
        let text = read_text(env, s, kinds.next().ok_or(BAD)?)?;
        big.try_reserve(1).map_err(|_| OOM)?;
        big.push(text);
        Ok(())
    })?;
    if kinds.next().is_some() {
        return Err(BAD);
    }
    let mut arrays = Vec::new();
    for_each(env, bytes, |b| {
        let (data, n) = typed_array(env, b, sys::TypedarrayType::uint8_array)?;
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| OOM)?;
        if n > 0 && !data.is_null() {
            // SAFETY: napi reports `data` pointing at the first of `n` bytes of the array (the
            // byte offset applied), alive until this call returns: no JavaScript runs between
            // `typed_array` and this copy, so the array cannot be detached or resized. `out` has
            // capacity for `n` bytes (reserved above) and does not overlap V8's memory. No
            // reference to the bytes is made (a copy of raw memory): `js/flat.js` copies an
            // array over a SharedArrayBuffer before handing it over, so no other thread writes
            // them during the copy.
            unsafe {
                ptr::copy_nonoverlapping(data.cast::<u8>(), out.as_mut_ptr(), n);
                out.set_len(n);
            }
        }
        arrays.try_reserve(1).map_err(|_| OOM)?;
        arrays.push(out);
        Ok(())
    })?;
    Ok(Flat {
        nums: numbers,
        chunks: texts,
        bigs: big,
        bytes: arrays,
    })
}

/// Parses a [`Flat`] stream.
struct Decoder<'a> {
    flat: &'a Flat,
    /// Next number.
    at: usize,
    /// The chunk being read, and its next unit.
    chunk: usize,
    cursor: usize,
    /// Next of `flat.bytes`.
    byte: usize,
    /// Arrays and key-value lists open around the value being read (at most
    /// [`crate::export::MAX_DEPTH`], as `js/flat.js` writes them: a deeper stream is refused,
    /// never a recursion without bound on the pool thread).
    depth: usize,
}

/// A piece as UTF-8; UTF-16 lone surrogates as U+FFFD (what `TextEncoder` writes).
fn utf8(piece: Piece<'_>) -> Result<String, &'static str> {
    let units = match piece {
        Piece::Utf16(units) => units,
        Piece::Latin1(bytes) => {
            let mut out = String::new();
            // Latin-1 above 0x7F is two bytes of UTF-8.
            let len = bytes.len() + bytes.iter().filter(|&&b| b >= 0x80).count();
            out.try_reserve_exact(len).map_err(|_| OOM)?;
            out.extend(bytes.iter().map(|&b| char::from(b)));
            return Ok(out);
        }
    };
    let mut out = String::new();
    if let Err(e) = utf::utf16_to_utf8(units, &mut out) {
        if e == utf::Utf::OutOfMemory {
            return Err(OOM);
        }
        // A lone surrogate: the slow, replacing decoder (rare); 3 bytes per code unit cover
        // U+FFFD and every BMP character.
        out.clear();
        out.try_reserve_exact(units.len().saturating_mul(3))
            .map_err(|_| OOM)?;
        for c in char::decode_utf16(units.iter().copied()) {
            out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    }
    Ok(out)
}

/// A length or index from the stream (a non-negative integer).
fn index(n: f64) -> Result<usize, &'static str> {
    if n >= 0.0 && n.trunc() == n && n < 4_294_967_296.0 {
        Ok(n as usize)
    } else {
        Err(BAD)
    }
}

impl<'a> Decoder<'a> {
    fn num(&mut self) -> Result<f64, &'static str> {
        let n = *self.flat.nums.get(self.at).ok_or(BAD)?;
        self.at += 1;
        Ok(n)
    }

    fn flag(&mut self) -> Result<bool, &'static str> {
        Ok(self.num()? != 0.0)
    }

    fn len(&mut self) -> Result<usize, &'static str> {
        let n = self.num()?;
        index(n)
    }

    fn piece(&mut self) -> Result<Piece<'a>, &'static str> {
        let n = self.num()?;
        if n >= 0.0 {
            let len = index(n)?;
            if len == 0 {
                return Ok(Piece::Latin1(&[]));
            }
            // A string never spans two chunks: one that does not fit is in the next.
            let chunks = &self.flat.chunks;
            if self.cursor + len > chunks.get(self.chunk).ok_or(BAD)?.len() {
                self.chunk += 1;
                self.cursor = 0;
            }
            let end = self.cursor + len;
            let piece = chunks
                .get(self.chunk)
                .and_then(|c| c.piece(self.cursor, end))
                .ok_or(BAD)?;
            self.cursor = end;
            Ok(piece)
        } else {
            let k = index(-n - 1.0)?;
            let text = self.flat.bigs.get(k).ok_or(BAD)?;
            text.piece(0, text.len()).ok_or(BAD)
        }
    }

    fn string(&mut self) -> Result<String, &'static str> {
        let piece = self.piece()?;
        utf8(piece)
    }

    fn id(&mut self) -> Result<Vec<u8>, &'static str> {
        match self.piece()? {
            Piece::Utf16(units) => encode::hex_to_binary(units).ok_or(BAD),
            Piece::Latin1(bytes) => {
                let mut units = Vec::new();
                units.try_reserve_exact(bytes.len()).map_err(|_| OOM)?;
                units.extend(bytes.iter().map(|&b| u16::from(b)));
                encode::hex_to_binary(&units).ok_or(BAD)
            }
        }
    }

    fn hr_time(&mut self) -> Result<u64, &'static str> {
        let seconds = self.num()?;
        let nanos = self.num()?;
        Ok(encode::hr_time_nanos(seconds, nanos))
    }

    fn count(&mut self) -> Result<u32, &'static str> {
        Ok(encode::js_uint32_field(self.num()?))
    }

    fn key_values(&mut self) -> Result<Vec<KeyValue>, &'static str> {
        let n = self.len()?;
        let mut out = Vec::new();
        out.try_reserve_exact(n.min(self.flat.nums.len()))
            .map_err(|_| OOM)?;
        for _ in 0..n {
            let key = self.string()?;
            let value = self.any_value()?;
            out.try_reserve(1).map_err(|_| OOM)?;
            out.push(KeyValue {
                key,
                value: Some(value),
            });
        }
        Ok(out)
    }

    fn any_value(&mut self) -> Result<AnyValue, &'static str> {
        let tag = self.num()?;
        let value = match tag as u8 {
            0 => None,
            1 => Some(Value::StringValue(self.string()?)),
            2 => Some(Value::BoolValue(self.flag()?)),
            3 => return Ok(encode::number_value(self.num()?)),
            4 => {
                let b = self.flat.bytes.get(self.byte).ok_or(BAD)?;
                self.byte += 1;
                let mut out = Vec::new();
                out.try_reserve_exact(b.len()).map_err(|_| OOM)?;
                out.extend_from_slice(b);
                Some(Value::BytesValue(out))
            }
            5 | 6 if self.depth >= crate::export::MAX_DEPTH => return Err(BAD),
            5 => {
                self.depth += 1;
                let n = self.len()?;
                let mut values = Vec::new();
                values
                    .try_reserve_exact(n.min(self.flat.nums.len()))
                    .map_err(|_| OOM)?;
                for _ in 0..n {
                    let v = self.any_value()?;
                    values.try_reserve(1).map_err(|_| OOM)?;
                    values.push(v);
                }
                self.depth -= 1;
                Some(Value::ArrayValue(ArrayValue { values }))
            }
            6 => {
                self.depth += 1;
                let values = self.key_values()?;
                self.depth -= 1;
                Some(Value::KvlistValue(KeyValueList { values }))
            }
            _ => return Err(BAD),
        };
        Ok(AnyValue { value })
    }

    fn resource(&mut self) -> Result<(Resource, String), &'static str> {
        let attributes = self.key_values()?;
        let schema = self.string()?;
        Ok((
            Resource {
                attributes,
                dropped_attributes_count: 0,
                entity_refs: Vec::new(),
            },
            schema,
        ))
    }

    fn scope(&mut self) -> Result<(InstrumentationScope, String), &'static str> {
        let name = self.string()?;
        let version = self.string()?;
        let attributes = self.key_values()?;
        let dropped = self.count()?;
        let schema = self.string()?;
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

    fn list<T>(
        &mut self,
        mut each: impl FnMut(&mut Self) -> Result<T, &'static str>,
    ) -> Result<Vec<T>, &'static str> {
        let n = self.len()?;
        let mut out = Vec::new();
        out.try_reserve_exact(n.min(self.flat.nums.len()))
            .map_err(|_| OOM)?;
        for _ in 0..n {
            let item = each(self)?;
            out.try_reserve(1).map_err(|_| OOM)?;
            out.push(item);
        }
        Ok(out)
    }

    fn event(&mut self) -> Result<span::Event, &'static str> {
        Ok(span::Event {
            time_unix_nano: self.hr_time()?,
            name: self.string()?,
            attributes: self.key_values()?,
            dropped_attributes_count: self.count()?,
        })
    }

    fn link(&mut self) -> Result<span::Link, &'static str> {
        let trace_id = self.id()?;
        let span_id = self.id()?;
        let trace_state = self.string()?;
        let attributes = self.key_values()?;
        let dropped_attributes_count = self.count()?;
        let flags = self.num()?;
        let remote = self.flag()?;
        Ok(span::Link {
            trace_id,
            span_id,
            trace_state,
            attributes,
            dropped_attributes_count,
            flags: encode::span_flags(flags, remote),
        })
    }

    fn span(&mut self) -> Result<Span, &'static str> {
        let trace_id = self.id()?;
        let span_id = self.id()?;
        let trace_state = self.string()?;
        let trace_flags = self.num()?;
        let parent_span_id = self.id()?;
        let parent_remote = self.flag()?;
        let name = self.string()?;
        let k = self.num()?;
        let kind = if k == 0.0 {
            0
        } else {
            encode::js_int32_field(k)
        };
        let start_time_unix_nano = self.hr_time()?;
        let end_time_unix_nano = self.hr_time()?;
        let attributes = self.key_values()?;
        let dropped_attributes_count = self.count()?;
        let events = self.list(Self::event)?;
        let dropped_events_count = self.count()?;
        let links = self.list(Self::link)?;
        let dropped_links_count = self.count()?;
        let message = self.string()?;
        let code = encode::js_int32_field(self.num()?);
        Ok(Span {
            trace_id,
            span_id,
            trace_state,
            parent_span_id,
            flags: encode::span_flags(trace_flags, parent_remote),
            name,
            kind,
            start_time_unix_nano,
            end_time_unix_nano,
            attributes,
            dropped_attributes_count,
            events,
            dropped_events_count,
            links,
            dropped_links_count,
            status: Some(Status { message, code }),
        })
    }
}

/// Builds the request of a batch read by [`read_flat`] (any thread), grouped as the official
/// serializer groups it, and, when `positions` is given, where each span landed, in batch order
/// (as `src/export.rs`'s reader reports them). The error is an internal one (the stream does not
/// parse) or memory.
pub(crate) fn decode(
    flat: &Flat,
    mut positions: Option<&mut Vec<SpanPosition>>,
) -> Result<ExportTraceServiceRequest, &'static str> {
    let mut d = Decoder {
        flat,
        at: 0,
        chunk: 0,
        cursor: 0,
        byte: 0,
        depth: 0,
    };
    let n = d.len()?;
    if let Some(p) = positions.as_deref_mut() {
        p.try_reserve_exact(n.min(flat.nums.len()))
            .map_err(|_| OOM)?;
    }
    let mut batch = Batch::default();
    // Per resource group: its batch index and, per scope group, (scope index, spans so far).
    let mut groups: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
    for _ in 0..n {
        let r = d.num()?;
        let g = if r < 0.0 {
            let (message, schema) = d.resource()?;
            let index = batch.add_resource(message, schema).map_err(|_| OOM)?;
            groups.try_reserve(1).map_err(|_| OOM)?;
            groups.push((index, Vec::new()));
            groups.len() - 1
        } else {
            index(r)?
        };
        let resource_index = groups.get(g).ok_or(BAD)?.0;
        let s = d.num()?;
        let s = if s < 0.0 {
            let (message, schema) = d.scope()?;
            let index = batch
                .add_scope(resource_index, message, schema)
                .map_err(|_| OOM)?
                .ok_or(BAD)?;
            let scopes = &mut groups[g].1;
            scopes.try_reserve(1).map_err(|_| OOM)?;
            scopes.push((index, 0));
            scopes.len() - 1
        } else {
            index(s)?
        };
        let span = d.span()?;
        let (scope_index, count) = groups[g].1.get_mut(s).ok_or(BAD)?;
        if !batch
            .push_span(resource_index, *scope_index, span)
            .map_err(|_| OOM)?
        {
            return Err(BAD);
        }
        if let Some(p) = positions.as_deref_mut() {
            p.try_reserve(1).map_err(|_| OOM)?;
            p.push((resource_index, *scope_index, *count));
        }
        *count += 1;
    }
    let all_read = match flat.chunks.len() {
        0 => true,
        n => d.chunk == n - 1 && d.cursor == flat.chunks[n - 1].len(),
    };
    if d.at != flat.nums.len() || !all_read || d.byte != flat.bytes.len() {
        return Err(BAD);
    }
    Ok(batch.into_request())
}

/// The off-thread half of `encodeOtlpFlat`: builds the request from the copied stream and encodes
/// it, on the libuv thread pool.
pub struct EncodeFlatTask {
    flat: Option<Flat>,
}

impl Task for EncodeFlatTask {
    type Output = Vec<u8>;
    type JsValue = Buffer;

    fn compute(&mut self) -> napi::Result<Vec<u8>> {
        let flat = self.flat.take();
        let encoded = catch_unwind(AssertUnwindSafe(
            move || -> Result<Vec<u8>, &'static str> {
                let flat = flat.ok_or("internal: the request was already encoded")?;
                let request = decode(&flat, None)?;
                // The copied strings are not needed any more: freed before the encoding's buffer.
                drop(flat);
                encode::encode(&request)
                    .map_err(|_| "out of memory while encoding the OTLP request")
            },
        ));
        match encoded {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(reason)) => Err(napi::Error::from_reason(reason)),
            Err(_) => Err(napi::Error::from_reason(
                "panic while encoding the OTLP request",
            )),
        }
    }

    fn resolve(&mut self, _env: Env, output: Vec<u8>) -> napi::Result<Buffer> {
        Ok(output.into())
    }
}

/// Copies a batch read by `js/flat.js` (its `read()` hands over these arguments: the numbers of
/// `nums` up to `len`, the joined strings `chunks`, the strings `bigs`, per string of both whether
/// it is `wide` (a code unit above 0xFF), the `Uint8Array`s `bytes`) on the calling thread and returns a `Promise<Buffer>` of the OTLP/protobuf
/// `ExportTraceServiceRequest` bytes, built and encoded on the libuv thread pool: the request
/// `encodeOtlpTraces` gives for the same spans. Throws an `Error` when the arguments are not of
/// those types or memory runs out; the promise rejects when the stream does not parse (an
/// internal error), memory runs out, or on a panic.
#[napi]
pub fn encode_otlp_flat(
    env: Env,
    nums: Object<'_>,
    len: u32,
    chunks: Object<'_>,
    bigs: Object<'_>,
    wide: Object<'_>,
    bytes: Object<'_>,
) -> napi::Result<AsyncTask<EncodeFlatTask>> {
    let flat = read_flat_caught(&env, &nums, len, &chunks, &bigs, &wide, &bytes)?;
    Ok(AsyncTask::new(EncodeFlatTask { flat: Some(flat) }))
}

/// [`read_flat`] for the two entries (`encodeOtlpFlat`, `fusedReadFlat`): panics caught and
/// silenced, a refusal or a panic as the `Error` the entry throws.
pub(crate) fn read_flat_caught(
    env: &Env,
    nums: &Object<'_>,
    len: u32,
    chunks: &Object<'_>,
    bigs: &Object<'_>,
    wide: &Object<'_>,
    bytes: &Object<'_>,
) -> napi::Result<Flat> {
    crate::quiet_panics();
    let read = catch_unwind(AssertUnwindSafe(|| {
        read_flat(
            env.raw(),
            nums.raw(),
            len,
            chunks.raw(),
            bigs.raw(),
            wide.raw(),
            bytes.raw(),
        )
    }));
    match read {
        Ok(Ok(flat)) => Ok(flat),
        Ok(Err(reason)) => Err(napi::Error::from_reason(reason)),
        Err(_) => Err(napi::Error::from_reason("panic while reading the spans")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One span, one resource, one scope, every string form: the stream `js/flat.js` writes.
    fn one_span() -> Flat {
        let ascii = |s: &str| Text::Latin1(s.as_bytes().to_vec());
        // Strings in order: schemaUrl "", scope name "s", version "", scope schema "",
        // trace id, span id, trace state "", parent "", name "n", attribute key "k", value (big).
        let ids = "0af7651916cd43dd8448eb211c80319cb7ad6b7169203331";
        let nums = vec![
            1.0, // spans
            -1.0, 0.0, 0.0, // new resource: no attributes, schemaUrl ""
            -1.0, 1.0, 0.0, 0.0, 0.0,
            0.0, // new scope: name "s", version "", 0 attributes, dropped 0, schema ""
            32.0, 16.0, 0.0, 1.0, 0.0,
            0.0, // ids, trace state, flags 1, no parent, not remote
            1.0, 2.0, // name "n", kind 1 + 1
            1.0, 2.0, 3.0, 4.0, // start, end
            1.0, 1.0, 1.0, -1.0, // one attribute: key "k", a string, bigs[0]
            0.0, 0.0, 0.0, 0.0, 0.0, // dropped, no events, dropped, no links, dropped
            0.0, 2.0, // status message "", code 2
        ];
        Flat {
            nums,
            chunks: vec![ascii("s"), ascii(&format!("{ids}nk"))],
            bigs: vec![Text::Utf16(
                "é\u{1F642}".encode_utf16().chain([0xD800]).collect(),
            )],
            bytes: Vec::new(),
        }
    }

    #[test]
    fn decodes_the_stream_with_positions() {
        let mut positions = Vec::new();
        // A stream that does not decode fails this test, nothing else (cfg(test)).
        let request = decode(&one_span(), Some(&mut positions)).expect("decodes"); // ok: test code
        assert_eq!(positions, vec![(0, 0, 0)]);
        let span = &request.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(
            request.resource_spans[0].scope_spans[0]
                .scope
                .as_ref()
                .map(|s| s.name.as_str()),
            Some("s")
        );
        assert_eq!(span.trace_id.len(), 16);
        assert_eq!(span.span_id.len(), 8);
        assert_eq!(span.name, "n");
        assert_eq!(span.kind, 2);
        assert_eq!(span.flags, 0x101);
        assert_eq!(span.status.as_ref().map(|s| s.code), Some(2));
        assert_eq!(span.attributes[0].key, "k");
        assert_eq!(
            span.attributes[0].value,
            Some(AnyValue {
                value: Some(Value::StringValue("é\u{1F642}\u{FFFD}".into()))
            })
        );
    }

    #[test]
    fn nesting_beyond_the_readers_depth_is_refused_without_recursing() {
        // One span whose one attribute is an array nested 100,000 deep (js/flat.js refuses 64).
        let mut flat = one_span();
        let at = flat
            .nums
            .iter()
            .rposition(|&x| x == 1.0)
            // one_span() always has a string attribute value (cfg(test)).
            .expect("the span has a string attribute value"); // ok: test code
        let depth = 100_000;
        let mut nums = flat.nums[..at].to_vec();
        for _ in 0..depth {
            nums.extend_from_slice(&[5.0, 1.0]);
        }
        nums.push(0.0);
        nums.extend_from_slice(&flat.nums[at + 2..]);
        flat.nums = nums;
        assert_eq!(decode(&flat, None).err(), Some(BAD));
    }

    #[test]
    fn a_stream_that_does_not_parse_is_an_error_never_a_panic() {
        let good = one_span();
        // Every truncation, and every number replaced by values a broken stream could hold.
        for cut in 0..good.nums.len() {
            let mut flat = one_span();
            flat.nums.truncate(cut);
            assert!(decode(&flat, None).is_err(), "truncated at {cut}");
        }
        for at in 0..good.nums.len() {
            for bad in [-5.0, 1e12, f64::NAN, 7.5, 4_294_967_296.0] {
                let mut flat = one_span();
                flat.nums[at] = bad;
                // Ok or Err, but no panic; a changed length must not read past the strings.
                let _ = decode(&flat, None);
            }
        }
        let mut flat = one_span();
        flat.chunks.pop();
        assert!(decode(&flat, None).is_err(), "a missing chunk");
    }
}
