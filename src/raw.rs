//! The per-span entries (`mapModelSpan`, `mapToolSpan`, `mapSpan`, `errorType`) as plain Node-API callbacks,
//! registered on the module's exports by [`register_entries`] instead of through `#[napi]`.
//!
//! Why (issue 9, BENCHMARKS.md "Stop 26"): every `#[napi]` function of napi-rs 3 with arguments
//! opens a native-borrow scope per call (a mutex, a hash map, thread-local vectors: about 1,000
//! instructions) and converts each `Option` argument with a `napi_typeof`; a tool span's whole
//! native mapping is about 9,000 instructions, so this bookkeeping alone was a tenth of it. These
//! entries take no borrowed napi-rs values and need none of it: they read their arguments with
//! one `napi_get_cb_info`, convert each as the entry needs it ([`given`], [`boolean`], [`uint`],
//! [`number`], [`string`]: lenient, a value of another type is "not given", never an exception),
//! and answer a `u32` of problem flags.
//!
//! Panics: the whole callback runs inside [`catch_unwind`]; a panic answers
//! [`problem::PANIC`] (an `extern "C"` function must not unwind).

use genkit_for_maple_core::{problem, span};
use napi::bindgen_prelude::{JsValue, Object};
use napi::{sys, Env};
use std::collections::TryReserveError;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// The arguments of the current call: the first `N` (those not passed are `undefined`, as
/// Node-API fills them); `None` when napi cannot give them.
///
/// # Safety
/// `env` and `info` must be the live arguments of the Node-API callback being run.
unsafe fn arguments<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Option<[sys::napi_value; N]> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    // SAFETY: the caller's contract gives a live `env`/`info`; `argv` has room for `argc`
    // handles, which napi fills (with `undefined` past the ones passed); `this` and `data` are
    // not asked for (null out-pointers are allowed).
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    (status == sys::Status::napi_ok).then_some(argv)
}

/// Runs `entry` on the call's first `N` arguments and answers its flags as a JavaScript number;
/// [`problem::PANIC`] when it panics or the arguments cannot be read. Never unwinds.
///
/// # Safety
/// `env` and `info` must be the live arguments of the Node-API callback being run.
unsafe fn run<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    entry: fn(sys::napi_env, [sys::napi_value; N]) -> u32,
) -> sys::napi_value {
    let flags = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract.
        match unsafe { arguments::<N>(env, info) } {
            Some(argv) => entry(env, argv),
            None => problem::PANIC,
        }
    }))
    .unwrap_or(problem::PANIC);
    let mut out = ptr::null_mut();
    // SAFETY: live `env` (the caller's contract), valid out-pointer. Should it fail, the null
    // handle makes the call answer `undefined`, which the wrapper reads as no flags.
    unsafe { sys::napi_create_uint32(env, flags, &mut out) };
    out
}

/// `mapModelSpan(attributes, input, output, skipInput, mapper, slice, concat, sinkCodes,
/// sinkValues)`: see [`crate::map_model_span`].
unsafe extern "C" fn map_model_span(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: Node-API calls this callback with its live `env` and `info`.
    unsafe { run::<9>(env, info, crate::map_model_span) }
}

/// `mapToolSpan(attributes, output, mapper, slice, input, withArguments, sinkCodes, sinkValues,
/// complete, name, traceId, spanId, parentSpanId, status, exceptionType, exceptionStacktrace)`:
/// see [`crate::map_tool_span`].
unsafe extern "C" fn map_tool_span(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: Node-API calls this callback with its live `env` and `info`.
    unsafe { run::<16>(env, info, crate::map_tool_span) }
}

/// `mapSpan(mapper, attributes, input, output, threw, subtype, name, status, exceptionType,
/// exceptionStacktrace, traceId, spanId, parentSpanId, endSeconds, endNanos, sinkCodes,
/// sinkValues)`: see [`crate::seam::map_span`].
unsafe extern "C" fn map_span(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: Node-API calls this callback with its live `env` and `info`.
    unsafe { run::<17>(env, info, crate::seam::map_span) }
}

/// `errorType(exceptionType, exceptionStacktrace)`: see [`crate::seam::error_type`]; `"_OTHER"`
/// when it panics or its arguments cannot be read. Never unwinds.
unsafe extern "C" fn error_type(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: Node-API calls this callback with its live `env` and `info`.
        unsafe { arguments::<2>(env, info) }.map(|argv| crate::seam::error_type(env, argv))
    }));
    match made {
        Ok(Some(made)) if !made.is_null() => made,
        _ => {
            let other = span::ERROR_TYPE_OTHER;
            let mut out = ptr::null_mut();
            // SAFETY: live `env` (Node-API's call), a static UTF-8 text of `other.len()` bytes,
            // valid out-pointer; should it fail, the null handle answers `undefined`.
            unsafe {
                sys::napi_create_string_utf8(
                    env,
                    other.as_ptr().cast(),
                    other.len() as isize,
                    &mut out,
                )
            };
            out
        }
    }
}

/// Benchmark-only: `benchFloor(attributes, slot, input, output)`, see [`crate::bench_floor`].
#[cfg(feature = "bench")]
unsafe extern "C" fn bench_floor(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: Node-API calls this callback with its live `env` and `info`.
    unsafe { run::<4>(env, info, crate::bench_floor) }
}

/// The entries [`register_entries`] adds: JavaScript name, callback.
const ENTRIES: &[(&std::ffi::CStr, RawCallback)] = &[
    (c"mapModelSpan", map_model_span),
    (c"mapToolSpan", map_tool_span),
    (c"mapSpan", map_span),
    (c"errorType", error_type),
    #[cfg(feature = "bench")]
    (c"benchFloor", bench_floor),
];

/// A Node-API callback.
type RawCallback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Adds the per-span entries to the module's exports (run once per environment, when the
/// addon is loaded: the main thread's and each worker's). An error makes loading the binding
/// fail, which the wrapper answers with the pure-JS mapping (js/load.js).
#[napi(module_exports)]
pub fn register_entries(exports: Object<'_>, env: Env) -> napi::Result<()> {
    // External strings are looked up now, on the thread that loads the addon (src/external.rs).
    crate::external::init();
    for &(name, callback) in ENTRIES {
        let mut function = ptr::null_mut();
        // SAFETY: live `env` of the module's initialisation; `name` is NUL-terminated and its
        // length is given without the NUL; `callback` is an `extern "C"` function of the
        // signature Node-API calls, which never unwinds (`run`); no data pointer.
        let status = unsafe {
            sys::napi_create_function(
                env.raw(),
                name.as_ptr(),
                name.count_bytes() as isize,
                Some(callback),
                ptr::null_mut(),
                &mut function,
            )
        };
        check(status, name)?;
        // SAFETY: live `env`; `exports` is the module's exports object napi-rs passed; `function`
        // was created above.
        let status = unsafe {
            sys::napi_set_named_property(env.raw(), exports.raw(), name.as_ptr(), function)
        };
        check(status, name)?;
    }
    Ok(())
}

/// An error naming the entry whose registration failed.
fn check(status: sys::napi_status, name: &std::ffi::CStr) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!(
            "could not register {} (napi status {status})",
            name.to_string_lossy()
        )))
    }
}

/// `value` unless it is `undefined` or `null` (or napi cannot tell its type): what napi-rs's
/// `Option<Unknown>` gives, for one `napi_typeof`.
pub(crate) fn given(env: sys::napi_env, value: sys::napi_value) -> Option<sys::napi_value> {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: live `env` of the current call, a handle of it, valid out-pointer; on failure
    // `kind` keeps `undefined`.
    unsafe { sys::napi_typeof(env, value, &mut kind) };
    (kind != sys::ValueType::napi_undefined && kind != sys::ValueType::napi_null).then_some(value)
}

/// The boolean `value` is; `None` for any other type (no conversion, no exception).
pub(crate) fn boolean(env: sys::napi_env, value: sys::napi_value) -> Option<bool> {
    let mut b = false;
    // SAFETY: live `env`, a handle of the call, valid out-pointer; a value that is not a boolean
    // makes napi return `napi_boolean_expected` without an exception.
    let status = unsafe { sys::napi_get_value_bool(env, value, &mut b) };
    (status == sys::Status::napi_ok).then_some(b)
}

/// The number `value` is; `None` for any other type (no conversion, no exception).
pub(crate) fn number(env: sys::napi_env, value: sys::napi_value) -> Option<f64> {
    let mut n = 0f64;
    // SAFETY: live `env`, a handle of the call, valid out-pointer; a value that is not a number
    // makes napi return `napi_number_expected` without an exception.
    let status = unsafe { sys::napi_get_value_double(env, value, &mut n) };
    (status == sys::Status::napi_ok).then_some(n)
}

/// The number `value` is, as `napi_get_value_uint32` converts it (ECMAScript ToUint32: `NaN` and
/// infinities are 0, others wrap modulo 2^32); 0 for any other type.
pub(crate) fn uint(env: sys::napi_env, value: sys::napi_value) -> u32 {
    let mut n = 0u32;
    // SAFETY: live `env`, a handle of the call, valid out-pointer; a value that is not a number
    // makes napi return `napi_number_expected` without an exception, and `n` keeps 0.
    let status = unsafe { sys::napi_get_value_uint32(env, value, &mut n) };
    if status == sys::Status::napi_ok {
        n
    } else {
        0
    }
}

/// The head of the stack trace `value` (`exception.stacktrace`): its first
/// [`span::STACK_HEAD_UNITS`] code units as UTF-8 in `out` ([`span::stack_head`], all rule 4 reads
/// of it, so a stack trace of any length is neither measured nor copied whole); `None` for any
/// other type than a string.
pub(crate) fn stack_head(
    env: sys::napi_env,
    value: sys::napi_value,
    out: &mut [u8; span::STACK_HEAD_BYTES],
) -> Option<&str> {
    let mut units = [0u16; span::STACK_HEAD_UNITS + 1];
    // Most names end within the first units (`GenkitError: ...`): those first, the rest of the
    // head only when they hold no `:` or line end and the string goes on.
    for room in [FIRST_STACK_UNITS + 1, units.len()] {
        let mut written = 0usize;
        // SAFETY: live `env`, a handle of the call; `units` is valid for `room <=
        // STACK_HEAD_UNITS + 1` code units, napi writes at most that many (a NUL included: the
        // string cut to `room - 1` units) and reports the count without the NUL in `written`. A
        // value that is not a string makes napi return `napi_string_expected` without an
        // exception.
        let status = unsafe {
            sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), room, &mut written)
        };
        if status != sys::Status::napi_ok {
            return None;
        }
        let read = units.get(..written)?;
        let ends = read
            .iter()
            .any(|&u| u == u16::from(b':') || u == u16::from(b'\n'));
        if ends || written < room - 1 || room == units.len() {
            return Some(span::stack_head(read, out));
        }
    }
    None
}

/// The code units [`stack_head`] reads first.
const FIRST_STACK_UNITS: usize = 64;

/// The string `value` is, as UTF-8 (a lone surrogate becomes U+FFFD, as napi-rs's `String`
/// conversion gives it); `None` for any other type, or when its copy cannot be allocated (the
/// allocation is fallible: these are the exception event's type and stack trace, of any length).
pub(crate) fn string(env: sys::napi_env, value: sys::napi_value) -> Option<String> {
    let mut len = 0usize;
    // SAFETY: live `env`, a handle of the call; a null buffer asks for the UTF-8 length only; a
    // value that is not a string makes napi return `napi_string_expected` without an exception.
    let status =
        unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len) };
    if status != sys::Status::napi_ok {
        return None;
    }
    let mut bytes: Vec<u8> = Vec::new();
    reserve(&mut bytes, len.checked_add(1)?).ok()?;
    let mut written = 0usize;
    // SAFETY: `bytes` has capacity for `len + 1` bytes (the string and the NUL napi writes);
    // napi writes at most that many and reports the count without the NUL in `written`.
    let status = unsafe {
        sys::napi_get_value_string_utf8(
            env,
            value,
            bytes.as_mut_ptr().cast(),
            len + 1,
            &mut written,
        )
    };
    if status != sys::Status::napi_ok {
        return None;
    }
    // SAFETY: napi initialised `written` bytes; `min(len)` keeps it within the capacity.
    unsafe { bytes.set_len(written.min(len)) };
    // V8 writes whole characters as UTF-8 (lone surrogates replaced by U+FFFD), so this holds
    // for every string; anything else is treated as not given.
    String::from_utf8(bytes).ok()
}

/// `bytes.try_reserve_exact(n)`: named so the one input-sized allocation here is visibly
/// fallible.
fn reserve(bytes: &mut Vec<u8>, n: usize) -> Result<(), TryReserveError> {
    bytes.try_reserve_exact(n)
}
