//! The napi boundary of genkit-for-maple, and nothing else: read the `genkit:*` strings of a span's
//! attribute map, call the plain-Rust core ([`genkit_for_maple_core`]), write the `gen_ai.*`
//! attributes back into the same object.
//!
//! # Panics never reach JavaScript
//! A panic unwinding into V8 aborts the user's process. Every exported function runs its Rust work
//! inside [`std::panic::catch_unwind`] (the release profile keeps `panic = "unwind"` so that
//! catching works) and turns a panic into the [`problem::PANIC`] flag; the JavaScript wrapper then
//! maps the span with its pure-JS mapping. Core code does not index out of bounds or unwrap on
//! input-dependent data; the guard is for bugs, not a control path.
//!
//! # Strings across the boundary
//! Inputs are read with one `napi_get_value_string_utf8` into a per-thread buffer that is reused
//! from call to call (each `worker_threads` worker has its own). Outputs are created as Latin-1
//! when they are ASCII (V8 copies the bytes as they are) and as UTF-16 otherwise, which spares V8
//! a UTF-8 decode (DESIGN.md, "Measured on this machine").

#![deny(clippy::undocumented_unsafe_blocks)]

#[macro_use]
extern crate napi_derive;

use genkit_for_maple_core::{map_model, map_tool_result, otlp, problem, Scalar, ToolResult};
use napi::bindgen_prelude::{Buffer, JsValue, Object};
use napi::{sys, Env};
use std::cell::RefCell;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

pub mod export;
pub mod seam;
mod utf;

const INPUT: &CStr = c"genkit:input";
const OUTPUT: &CStr = c"genkit:output";

/// Buffers larger than this are freed after the call instead of kept for the next span, so one
/// huge span does not pin its memory for the life of the thread.
const KEEP_BYTES: usize = 16 << 20;

thread_local! {
    /// Reused input buffers, one per input attribute, so a span costs no allocation for its input.
    /// Taken out of the cell for the duration of a call (never borrowed across a call into
    /// JavaScript: a getter on the attribute map may re-enter `onEnd`, and then finds the cell empty
    /// and works with fresh buffers).
    static BUFFERS: RefCell<(String, String)> = const { RefCell::new((String::new(), String::new())) };
    /// Reused UTF-16 buffer: strings read from V8, and non-ASCII output strings.
    static UTF16: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// What [`Call::read_string`] found.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// A string, now in the buffer as UTF-8.
    Str,
    /// Not a string (or napi failed).
    Absent,
    /// A string with a lone surrogate.
    NotWellFormed,
    /// Reading the property threw (a getter on a user-made attribute map): the exception was
    /// cleared so that the other attributes can still be read and written.
    Threw,
}

/// Raw napi handles of one call. All methods are only called during the `#[napi]` call that
/// created them, on the JavaScript thread that owns `env`.
struct Call {
    env: sys::napi_env,
    object: sys::napi_value,
}

impl Call {
    /// Reads property `key` of the attribute map into `buf` as UTF-8 when it is a string:
    /// one UTF-16 copy out of V8 (its length is known without a pass over the string) into the
    /// reused [`UTF16`] buffer, then [`utf::utf16_to_utf8`]. Leaves `buf` empty and returns
    /// [`Read::Absent`] for any other type or if napi reports an error, and [`Read::NotWellFormed`]
    /// when the string holds a lone surrogate (UTF-8 cannot carry it: the caller maps the span in
    /// JavaScript).
    fn read_string(&self, key: &CStr, buf: &mut String) -> Read {
        buf.clear();
        let mut value = ptr::null_mut();
        // SAFETY: `env` and `object` are the live handles of the current napi call (see `Call`);
        // `key` is NUL-terminated; `value` is a valid out-pointer.
        let status = unsafe {
            sys::napi_get_named_property(self.env, self.object, key.as_ptr(), &mut value)
        };
        if status != sys::Status::napi_ok {
            let mut pending = false;
            // SAFETY: live `env`, valid out-pointer.
            unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
            if pending {
                self.clear_exception();
                return Read::Threw;
            }
        }
        if status != sys::Status::napi_ok {
            return Read::Absent;
        }
        let mut len = 0usize;
        // SAFETY: a null buffer asks napi for the length in UTF-16 code units only (documented
        // N-API behaviour; V8 knows it without reading the string). A value that is not a string
        // makes napi return `napi_string_expected`, which is the type check.
        if unsafe {
            sys::napi_get_value_string_utf16(self.env, value, ptr::null_mut(), 0, &mut len)
        } != sys::Status::napi_ok
        {
            return Read::Absent;
        }
        UTF16.with_borrow_mut(|units| {
            units.clear();
            units.reserve(len + 1);
            let mut written = 0usize;
            // SAFETY: `units` has capacity for `len + 1` code units (the string plus the NUL napi
            // writes); napi writes at most `bufsize` units and reports the count, excluding the
            // NUL, in `written`.
            let status = unsafe {
                sys::napi_get_value_string_utf16(
                    self.env,
                    value,
                    units.as_mut_ptr(),
                    len + 1,
                    &mut written,
                )
            };
            if status != sys::Status::napi_ok {
                return Read::Absent;
            }
            // SAFETY: napi initialised `written <= len < capacity` code units of `units`.
            unsafe { units.set_len(written.min(len)) };
            if utf::utf16_to_utf8(units, buf) {
                Read::Str
            } else {
                buf.clear();
                Read::NotWellFormed
            }
        })
    }

    /// Clears a pending JavaScript exception (thrown by a getter, setter or Proxy trap of a
    /// user-made attribute map); its value is dropped: the caller reports the problem kind through
    /// diag, and the later napi calls of this call work again.
    fn clear_exception(&self) {
        let mut error = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer; a no-op when no exception is pending.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
    }

    /// Sets property `key`; returns `false` when `value` is null (its creation failed: a string
    /// longer than V8's limit, say) or napi refused.
    fn set(&self, key: &CStr, value: sys::napi_value) -> bool {
        if value.is_null() {
            return false;
        }
        // SAFETY: live handles of the current call; `key` is NUL-terminated; `value` was created by
        // napi in this `env`. A failure (a frozen object, say) leaves the attribute unset.
        let status =
            unsafe { sys::napi_set_named_property(self.env, self.object, key.as_ptr(), value) };
        if status != sys::Status::napi_ok {
            // A setter or Proxy trap that threw: clear it so the other attributes are still written.
            self.clear_exception();
            return false;
        }
        true
    }

    /// Sets a string property; returns `flag` when it could not be written, `0` otherwise.
    fn set_string(&self, key: &CStr, text: &str, flag: u32) -> u32 {
        if self.set(key, self.string(text)) {
            0
        } else {
            flag
        }
    }

    /// Creates a JavaScript string: Latin-1 when ASCII, UTF-16 otherwise. Null on failure.
    fn string(&self, text: &str) -> sys::napi_value {
        let mut out = ptr::null_mut();
        if text.is_ascii() {
            // SAFETY: `text` is valid for `text.len()` bytes; ASCII is valid Latin-1.
            unsafe {
                sys::napi_create_string_latin1(
                    self.env,
                    text.as_ptr().cast(),
                    text.len() as isize,
                    &mut out,
                )
            };
        } else {
            UTF16.with_borrow_mut(|units| {
                utf::utf8_to_utf16(text, units);
                // SAFETY: `units` is valid for `units.len()` UTF-16 code units.
                unsafe {
                    sys::napi_create_string_utf16(
                        self.env,
                        units.as_ptr(),
                        units.len() as isize,
                        &mut out,
                    )
                };
            });
        }
        out
    }

    fn scalar(&self, value: &Scalar<'_>) -> sys::napi_value {
        let mut out = ptr::null_mut();
        match value {
            Scalar::Str(s) => return self.string(s),
            Scalar::Num(n) =>
            // SAFETY: live `env` of the current call, valid out-pointer.
            unsafe { sys::napi_create_double(self.env, *n, &mut out) },
            // SAFETY: as above.
            Scalar::Bool(b) => unsafe { sys::napi_get_boolean(self.env, *b, &mut out) },
            // SAFETY: as above.
            Scalar::Null => unsafe { sys::napi_get_null(self.env, &mut out) },
            Scalar::Json(_) => return ptr::null_mut(),
        };
        out
    }

    fn array(&self, values: &[Scalar<'_>]) -> sys::napi_value {
        let mut array = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer.
        if unsafe { sys::napi_create_array_with_length(self.env, values.len(), &mut array) }
            != sys::Status::napi_ok
        {
            return ptr::null_mut();
        }
        for (i, value) in values.iter().enumerate() {
            // SAFETY: `array` was created above in this `env`; the element was created by napi.
            unsafe { sys::napi_set_element(self.env, array, i as u32, self.scalar(value)) };
        }
        array
    }
}

/// Runs `f` with this thread's input buffers, taken out of [`BUFFERS`] (re-entrant calls get fresh
/// ones) and put back afterwards unless they grew beyond [`KEEP_BYTES`].
fn with_buffers<R>(f: impl FnOnce(&mut String, &mut String) -> R) -> R {
    let (mut input, mut output) = BUFFERS.take();
    let result = f(&mut input, &mut output);
    for buf in [&mut input, &mut output] {
        if buf.capacity() > KEEP_BYTES {
            *buf = String::new();
        }
    }
    BUFFERS.set((input, output));
    UTF16.with_borrow_mut(|units| {
        if units.capacity() * 2 > KEEP_BYTES {
            *units = Vec::new();
        }
    });
    result
}

/// Replaces the default panic hook, which prints to stderr, by a silent one, once per process: a
/// panic in this addon is caught at the boundary and reported through `diag` as `PANIC` by the
/// JavaScript wrapper; the processor never writes to the console.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::panic::set_hook(Box::new(|_| {})));
}

fn call_of(env: &Env, attributes: &Object<'_>) -> Call {
    Call {
        env: env.raw(),
        object: attributes.raw(),
    }
}

/// Maps a model span (`genkit:metadata:subtype` `model`): reads `genkit:input` and `genkit:output`
/// from `attributes` (each only when a string) and writes `gen_ai.input.messages`,
/// `gen_ai.system_instructions`, `gen_ai.output.messages`, `gen_ai.response.finish_reasons`,
/// `gen_ai.usage.input_tokens` and `gen_ai.usage.output_tokens` into the same object, each only
/// when it can be derived (seed 000; candidates per issue 5). Returns problem flags (`0`: clean);
/// with `NEEDS_JS` or `PANIC` set nothing was written and the caller maps the span in JavaScript.
/// Never throws.
#[napi]
pub fn map_model_span(env: Env, attributes: Object<'_>) -> u32 {
    quiet_panics();
    let call = call_of(&env, &attributes);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        with_buffers(|input_buf, output_buf| {
            let has_input = call.read_string(INPUT, input_buf);
            let has_output = call.read_string(OUTPUT, output_buf);
            if has_input == Read::NotWellFormed || has_output == Read::NotWellFormed {
                return problem::NEEDS_JS;
            }
            // A getter that threw: that attribute is treated as absent-and-broken, the other one
            // is still mapped (per-attribute degradation).
            let mut threw = 0;
            if has_input == Read::Threw {
                threw |= problem::ATTRIBUTE_TYPE | problem::INPUT_NOT_JSON;
            }
            if has_output == Read::Threw {
                threw |= problem::ATTRIBUTE_TYPE | problem::OUTPUT_NOT_JSON;
            }
            let input = (has_input == Read::Str).then_some(input_buf.as_str());
            let output = (has_output == Read::Str).then_some(output_buf.as_str());
            let mut attrs = map_model(input, output);
            if has_input == Read::Threw {
                attrs.input_messages = None;
                attrs.system_instructions = None;
            }
            let reasons: Option<Vec<Scalar<'_>>> = attrs
                .finish_reasons
                .as_ref()
                .map(|r| r.iter().map(|raw| Scalar::of(raw)).collect());
            let input_tokens = attrs.input_tokens.map(Scalar::of);
            let output_tokens = attrs.output_tokens.map(Scalar::of);
            let compound = reasons
                .iter()
                .flatten()
                .chain(input_tokens.iter())
                .chain(output_tokens.iter());
            if compound.into_iter().any(|s| matches!(s, Scalar::Json(_))) {
                return attrs.problems | problem::NEEDS_JS;
            }
            let mut problems = attrs.problems | threw;
            if let Some(s) = &attrs.input_messages {
                problems |= call.set_string(c"gen_ai.input.messages", s, problem::INPUT_SHAPE);
            }
            if let Some(s) = &attrs.system_instructions {
                problems |= call.set_string(c"gen_ai.system_instructions", s, problem::INPUT_SHAPE);
            }
            if let Some(s) = &attrs.output_messages {
                problems |= call.set_string(c"gen_ai.output.messages", s, problem::OUTPUT_SHAPE);
            }
            if let Some(reasons) = &reasons {
                call.set(c"gen_ai.response.finish_reasons", call.array(reasons));
            }
            if let Some(v) = &input_tokens {
                call.set(c"gen_ai.usage.input_tokens", call.scalar(v));
            }
            if let Some(v) = &output_tokens {
                call.set(c"gen_ai.usage.output_tokens", call.scalar(v));
            }
            problems
        })
    }));
    outcome.unwrap_or(problem::PANIC)
}

/// Maps the result of a tool span (`genkit:metadata:subtype` `tool`): when `genkit:output` is a
/// string holding JSON, writes `gen_ai.tool.call.result` (a JSON string's text, or the JSON as
/// written). Returns problem flags: `TOOL_OUTPUT_NOT_JSON` when it is not JSON (nothing written),
/// `NEEDS_JS`/`PANIC` when the caller must map it in JavaScript. Never throws.
#[napi]
pub fn map_tool_span(env: Env, attributes: Object<'_>) -> u32 {
    quiet_panics();
    let call = call_of(&env, &attributes);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        with_buffers(|buf, _| {
            match call.read_string(OUTPUT, buf) {
                Read::Str => {}
                Read::Absent => return 0,
                Read::NotWellFormed => return problem::NEEDS_JS,
                Read::Threw => return problem::ATTRIBUTE_TYPE | problem::TOOL_OUTPUT_NOT_JSON,
            }
            let output = buf.as_str();
            match map_tool_result(output) {
                ToolResult::Invalid => problem::TOOL_OUTPUT_NOT_JSON,
                ToolResult::NeedsJs => problem::NEEDS_JS,
                ToolResult::Text(text) => call.set_string(
                    c"gen_ai.tool.call.result",
                    &text,
                    problem::TOOL_OUTPUT_NOT_JSON,
                ),
                ToolResult::Json(json) => call.set_string(
                    c"gen_ai.tool.call.result",
                    json,
                    problem::TOOL_OUTPUT_NOT_JSON,
                ),
            }
        })
    }));
    outcome.unwrap_or(problem::PANIC)
}

/// Decodes an OTLP/HTTP protobuf `ExportTraceServiceRequest` body into a JSON array of spans
/// (`[{traceId, spanId, parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano, status,
/// attributes, resource, scope}]`). Used by the built-in local receiver.
///
/// Throws an `Error` when the body is not a valid request (or on an internal panic).
#[napi]
pub fn decode_otlp_traces(body: Buffer) -> napi::Result<String> {
    let bytes: &[u8] = &body;
    match catch_unwind(AssertUnwindSafe(|| otlp::decode_spans(bytes))) {
        Ok(Ok(json)) => Ok(json),
        Ok(Err(e)) => Err(napi::Error::from_reason(e.to_string())),
        Err(_) => Err(napi::Error::from_reason(
            "panic while decoding an OTLP request",
        )),
    }
}

/// The problem flags `mapModelSpan`/`mapToolSpan` return, by name (see the core's `problem`).
#[napi(object)]
pub struct ProblemFlags {
    /// `genkit:input` is not valid JSON: input messages and system instructions omitted.
    pub input_not_json: u32,
    /// `genkit:input` has a shape the reference throws on: the same two attributes omitted.
    pub input_shape: u32,
    /// `genkit:output` is not valid JSON: every output attribute omitted.
    pub output_not_json: u32,
    /// The answer message has a shape the reference throws on: output messages omitted.
    pub output_shape: u32,
    /// A tool span's `genkit:output` is not valid JSON: the tool call result omitted.
    pub tool_output_not_json: u32,
    /// Nothing was written; the caller maps the span in JavaScript (lone surrogates, values
    /// serde_json refuses where `JSON.parse` does not).
    pub needs_js: u32,
    /// An attribute value of an unexpected JavaScript type, or an error in the JS wrapper.
    pub attribute_type: u32,
    /// The native mapping panicked; the span was mapped in JavaScript.
    pub panic: u32,
    /// An allocation sized by the span failed; the span was mapped in JavaScript.
    pub out_of_memory: u32,
}

/// Returns the problem flags, so the JavaScript side never hard-codes their values.
#[napi]
pub fn problem_flags() -> ProblemFlags {
    ProblemFlags {
        input_not_json: problem::INPUT_NOT_JSON,
        input_shape: problem::INPUT_SHAPE,
        output_not_json: problem::OUTPUT_NOT_JSON,
        output_shape: problem::OUTPUT_SHAPE,
        tool_output_not_json: problem::TOOL_OUTPUT_NOT_JSON,
        needs_js: problem::NEEDS_JS,
        attribute_type: problem::ATTRIBUTE_TYPE,
        panic: problem::PANIC,
        out_of_memory: problem::OUT_OF_MEMORY,
    }
}

// ---------------------------------------------------------------------------------------------
// Benchmark-only: the floor of `npm run bench` (bench/README in BENCHMARKS.md). Not part of the
// public API (index.js does not re-export it) and never called by the processor.

/// One output attribute held by [`FLOOR`]: its value pre-encoded the way [`Call::string`] would
/// create it.
enum FloorValue {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

thread_local! {
    /// The output attributes [`bench_floor`] writes, one slot per prepared span.
    static FLOOR: RefCell<Vec<Vec<(std::ffi::CString, FloorValue)>>> = const { RefCell::new(Vec::new()) };
}

/// Benchmark-only. Stores the output attributes `bench_floor` will write for one span: `keys[i]`
/// with `values[i]`, each value pre-encoded as Latin-1 (ASCII) or UTF-16, so that `bench_floor`
/// only copies. Returns the slot to pass to `bench_floor` (keys holding NUL are skipped).
#[napi]
pub fn bench_floor_prepare(keys: Vec<String>, values: Vec<String>) -> u32 {
    let prepared: Vec<_> = keys
        .into_iter()
        .zip(values)
        .filter_map(|(key, value)| {
            let key = std::ffi::CString::new(key).ok()?;
            let value = if value.is_ascii() {
                FloorValue::Latin1(value.into_bytes())
            } else {
                FloorValue::Utf16(value.encode_utf16().collect())
            };
            Some((key, value))
        })
        .collect();
    FLOOR.with_borrow_mut(|slots| {
        slots.push(prepared);
        (slots.len() - 1) as u32
    })
}

/// Benchmark-only: the floor of a span's native mapping. Reads `genkit:output`, and
/// `genkit:input` when `read_input`, into the reused buffers exactly as `mapModelSpan` does, then
/// creates the output strings of `slot` (from `benchFloorPrepare`; Latin-1 or UTF-16, as
/// `mapModelSpan` creates them) and sets them on `attributes`. No JSON is parsed or written.
/// Returns the bytes read.
#[napi]
pub fn bench_floor(env: Env, attributes: Object<'_>, slot: u32, read_input: bool) -> u32 {
    let call = call_of(&env, &attributes);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let read = with_buffers(|input_buf, output_buf| {
            if read_input {
                call.read_string(INPUT, input_buf);
            } else {
                input_buf.clear();
            }
            call.read_string(OUTPUT, output_buf);
            input_buf.len() + output_buf.len()
        });
        FLOOR.with_borrow(|slots| {
            for (key, value) in slots.get(slot as usize).into_iter().flatten() {
                let mut out = ptr::null_mut();
                match value {
                    // SAFETY: live `env` of the current call; `bytes` is valid for its length and
                    // ASCII, which is valid Latin-1; `out` is a valid out-pointer.
                    FloorValue::Latin1(bytes) => unsafe {
                        sys::napi_create_string_latin1(
                            call.env,
                            bytes.as_ptr().cast(),
                            bytes.len() as isize,
                            &mut out,
                        )
                    },
                    // SAFETY: as above; `units` is valid for `units.len()` UTF-16 code units.
                    FloorValue::Utf16(units) => unsafe {
                        sys::napi_create_string_utf16(
                            call.env,
                            units.as_ptr(),
                            units.len() as isize,
                            &mut out,
                        )
                    },
                };
                call.set(key, out);
            }
        });
        read as u32
    }));
    outcome.unwrap_or(0)
}
