//! Output strings V8 does not copy (issue 9): Node-API's external strings,
//! `node_api_create_external_string_latin1` and `node_api_create_external_string_utf16`
//! (Node-API 10; in Node.js 20 and 18.18+ under `NAPI_EXPERIMENTAL`, exported by the `node`
//! binary all the same).
//!
//! A long attribute value (`gen_ai.input.messages` of a 1 MB model span, say) made with
//! `napi_create_string_latin1` is copied into V8's heap, which allocates it in large-object space:
//! fresh pages each time, page faults while the copy touches them, and an unmap on another thread
//! once it is collected (a quarter of a 1 MB ASCII model span's time, BENCHMARKS.md "Stop 28").
//! Made external, the string's characters stay in the buffer the mapping wrote them into (ASCII,
//! as Latin-1: no copy at all) or in one UTF-16 buffer made for it (other text), which V8 frees
//! through [`free_bytes`] / [`free_units`] when it collects the string. V8 counts an external
//! string's characters in its heap accounting (external backing-store bytes), so garbage
//! collection still sees them.
//!
//! The functions are looked up in the host process once ([`api`]), never linked against: a runtime
//! without them (an older Node.js, another engine's Node-API) gets copied strings, as before. Set
//! `GENKIT_FOR_MAPLE_EXTERNAL_STRINGS=0` in the environment to turn them off (read once per
//! process; for comparisons and tests).
//!
//! Ownership: once a create call answers `napi_ok`, the buffer belongs to the string (with
//! `copied`, as in builds with V8's sandbox, the runtime has already called the finalizer, which
//! freed it). When it answers anything else no string was made and the finalizer is never called
//! (Node-API: a failed call creates nothing; in Node's implementation a resource that V8 refused is
//! never disposed), so the buffer is still the caller's: [`latin1`] and [`utf16`] hand it back.

use napi::sys;
use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

/// From this many bytes of characters on (V8's own form: one byte a character for ASCII, two
/// for other text), a string is made external when the runtime can. It is V8's largest object
/// outside its large-object space (`kMaxRegularHeapObjectSize`, 128 KiB): a shorter copy is a
/// bump allocation in the young generation and costs less than an external string's
/// bookkeeping (a resource object, a finalizer, V8's external-memory count), a longer one gets
/// pages of its own (BENCHMARKS.md "Stop 28": a 111 KB ASCII attribute gained nothing made
/// external, a 222 KB two-byte one lost a quarter of its span's time).
pub(crate) const EXTERNAL_BYTES: usize = 128 << 10;

/// The longest string made external (code units): V8's maximum string length on 32-bit
/// platforms, below the 64-bit one, so that V8 never refuses one for its length.
const MAX_UNITS: usize = (1 << 28) - 16;

/// `napi_finalize`: `(env, finalize_data, finalize_hint)`.
type Finalize = unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void);

/// `node_api_create_external_string_latin1(env, str, length, finalize_callback,
/// finalize_hint, result, copied)`.
type CreateLatin1 = unsafe extern "C" fn(
    sys::napi_env,
    *mut c_char,
    usize,
    Option<Finalize>,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// `node_api_create_external_string_utf16(env, str, length, finalize_callback, finalize_hint,
/// result, copied)`.
type CreateUtf16 = unsafe extern "C" fn(
    sys::napi_env,
    *mut u16,
    usize,
    Option<Finalize>,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// The two create functions of the host process.
struct Api {
    latin1: CreateLatin1,
    utf16: CreateUtf16,
}

/// The host's external-string functions, looked up once per process; `None` when the host has
/// not both, or `GENKIT_FOR_MAPLE_EXTERNAL_STRINGS` is `0`.
/// Looked up by [`init`], when the addon is loaded (on the thread that loads it, before any
/// JavaScript of the app can change the environment from another thread), or at first use.
fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        if std::env::var_os("GENKIT_FOR_MAPLE_EXTERNAL_STRINGS").is_some_and(|v| v == "0") {
            return None;
        }
        let api = lookup()?;
        // A string's finalizer is this addon's code, and V8 may call it after the Node.js
        // environment that loaded the addon is gone: a worker's external strings are disposed
        // when its isolate is deleted, after Node has unloaded the addons the worker loaded
        // (`dlclose`, `FreeLibrary`). Pinned, the image stays mapped until the process exits
        // (napi-rs: `GetModuleHandleExW(PIN)` on Windows, a `dlopen(RTLD_NOLOAD)` reference
        // elsewhere; Linux builds are also linked `-z nodelete`). Found by the review of this
        // module: a C addon without the pin crashed at a worker's exit.
        napi::bindgen_prelude::retain_current_module_for_unload_safety();
        Some(api)
    })
    .as_ref()
}

/// Looks the functions up and reads the switch now (see [`api`]); called when the addon is
/// registered.
pub(crate) fn init() {
    let _ = api();
}

/// Looks both functions up among the symbols the host process exports.
fn lookup() -> Option<Api> {
    #[cfg(unix)]
    let host = libloading::os::unix::Library::this();
    #[cfg(windows)]
    let host = libloading::os::windows::Library::this().ok()?;
    // SAFETY: the names are Node-API's, whose C signatures `CreateLatin1` and `CreateUtf16`
    // declare (node_api.h, Node-API 10); the symbols are functions of the host executable, which
    // stays loaded for the life of the process, so the copied function pointers never dangle
    // (the library handle itself may be dropped: it only counts a reference to the host).
    // Each symbol is read as an optional function pointer: `dlsym` may answer a null address
    // without an error, which is then `None` (a null non-optional function pointer would be
    // undefined behaviour).
    unsafe {
        let latin1 = *host
            .get::<Option<CreateLatin1>>(b"node_api_create_external_string_latin1\0")
            .ok()?;
        let utf16 = *host
            .get::<Option<CreateUtf16>>(b"node_api_create_external_string_utf16\0")
            .ok()?;
        Some(Api {
            latin1: latin1?,
            utf16: utf16?,
        })
    }
}

/// Whether strings are made external in this process (the host has the functions and they are
/// not turned off).
pub(crate) fn available() -> bool {
    api().is_some()
}

/// Tells V8 that `bytes` more (or, negative, fewer) bytes outside its heap are held by
/// JavaScript values (`napi_adjust_external_memory`, as Node.js's own `Buffer`s do): V8 does not
/// count an external string's characters towards starting a collection, and without this the
/// strings of a process that allocates little else on the JavaScript heap were never collected
/// (1 GB of them after 1,000 spans of 1 MB, BENCHMARKS.md "Stop 28"). A failure changes nothing
/// but V8's estimate.
fn adjust(env: sys::napi_env, bytes: i64) {
    let mut total = 0i64;
    // SAFETY: `env` is a live environment (the current call's, or the one a finalizer is given,
    // which Node-API passes as null once the environment is gone: not called then); valid
    // out-pointer. Node-API allows this call in a finalizer that runs during a collection.
    unsafe { sys::napi_adjust_external_memory(env, bytes, &mut total) };
}

/// Clears an exception a failed create call may have left pending (a runtime that throws rather
/// than answering a status), so that no later napi call, and no finalizer Node.js runs during a
/// collection (it reports a pending exception as uncaught), finds one.
fn clear_exception(env: sys::napi_env) {
    let mut pending = false;
    // SAFETY: live `env` of the current call; valid out-pointers; clearing is a no-op when no
    // exception is pending.
    unsafe {
        if sys::napi_is_exception_pending(env, &mut pending) == sys::Status::napi_ok && pending {
            let mut error = std::ptr::null_mut();
            sys::napi_get_and_clear_last_exception(env, &mut error);
        }
    }
}

/// The bytes of a buffer of `capacity` elements of `T`, as V8 is told of them ([`adjust`]).
fn bytes_of<T>(capacity: usize) -> i64 {
    i64::try_from(capacity.saturating_mul(std::mem::size_of::<T>())).unwrap_or(i64::MAX)
}

/// The finalizer of a [`latin1`] string: frees the `Vec<u8>` whose pointer is `data` and whose
/// capacity is `hint`, and takes its bytes off V8's count ([`adjust`]). Never unwinds (it only
/// deallocates and updates a counter). Node.js 20 calls it while V8 collects the string, on the
/// isolate's thread, possibly inside another napi call of this addon that allocated (a string
/// creation): so it touches no thread-local state, and it relies on no exception being left
/// pending by this addon (every failed napi call clears its exception at once), which Node.js
/// would report from the collection as uncaught.
unsafe extern "C" fn free_bytes(env: sys::napi_env, data: *mut c_void, hint: *mut c_void) {
    // SAFETY: Node-API calls this once, with `data` = the `str` given to the create call (the
    // pointer of a `Vec<u8>` that `latin1` gave up) and `hint` = its capacity: the parts of that
    // allocation, rebuilt with length 0 (bytes need no drop) and freed.
    drop(unsafe { Vec::from_raw_parts(data.cast::<u8>(), 0, hint as usize) });
    if !env.is_null() {
        adjust(env, -bytes_of::<u8>(hint as usize));
    }
}

/// The finalizer of a [`utf16`] string: frees the `Vec<u16>` whose pointer is `data` and whose
/// capacity is `hint`, and takes its bytes off V8's count. Never unwinds.
unsafe extern "C" fn free_units(env: sys::napi_env, data: *mut c_void, hint: *mut c_void) {
    // SAFETY: as in `free_bytes`, for the `Vec<u16>` given up by `utf16`.
    drop(unsafe { Vec::from_raw_parts(data.cast::<u16>(), 0, hint as usize) });
    if !env.is_null() {
        adjust(env, -bytes_of::<u16>(hint as usize));
    }
}

/// Makes `bytes` (Latin-1; the caller's ASCII text) a JavaScript string that keeps them where
/// they are. `Err(bytes)` when it cannot (no such function in the host, fewer than
/// [`EXTERNAL_BYTES`] or too long, or the call failed): the caller then copies them as usual.
pub(crate) fn latin1(env: sys::napi_env, bytes: Vec<u8>) -> Result<sys::napi_value, Vec<u8>> {
    let Some(api) = api() else {
        return Err(bytes);
    };
    if bytes.len() < EXTERNAL_BYTES || bytes.len() > MAX_UNITS {
        return Err(bytes);
    }
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    let (data, len, capacity) = (bytes.as_mut_ptr(), bytes.len(), bytes.capacity());
    let mut out = std::ptr::null_mut();
    let mut copied = false;
    // Counted before the call: with `copied` the finalizer (which takes the bytes off again) has
    // run by the time it returns.
    adjust(env, bytes_of::<u8>(capacity));
    // SAFETY: live `env` of the current call (the caller's contract); `data` is valid for `len`
    // bytes and stays valid until `free_bytes` runs: the `Vec` is not dropped here
    // (`ManuallyDrop`), its allocation is the string's from a successful call on; `capacity`
    // travels as the hint so that the finalizer frees exactly that allocation; valid out-pointers.
    let status = unsafe {
        (api.latin1)(
            env,
            data.cast::<c_char>(),
            len,
            Some(free_bytes),
            capacity as *mut c_void,
            &mut out,
            &mut copied,
        )
    };
    if status == sys::Status::napi_ok {
        // The buffer is the string's (or, copied, already freed by the finalizer), whatever
        // `out` holds: never taken back. A null `out` (no conforming runtime gives one) makes
        // the caller's write fail.
        return Ok(out);
    }
    // No string was made and the finalizer will not run (module docs): the buffer is ours again.
    adjust(env, -bytes_of::<u8>(capacity));
    clear_exception(env);
    Err(std::mem::ManuallyDrop::into_inner(bytes))
}

/// Makes `units` (well-formed UTF-16) a JavaScript string that keeps them where they are.
/// `Err(units)` when it cannot (no such function in the host, fewer than [`EXTERNAL_BYTES`] or
/// too long, or the call failed): the caller then copies them as usual.
pub(crate) fn utf16(env: sys::napi_env, units: Vec<u16>) -> Result<sys::napi_value, Vec<u16>> {
    let Some(api) = api() else {
        return Err(units);
    };
    if units.len().saturating_mul(2) < EXTERNAL_BYTES || units.len() > MAX_UNITS {
        return Err(units);
    }
    let mut units = std::mem::ManuallyDrop::new(units);
    let (data, len, capacity) = (units.as_mut_ptr(), units.len(), units.capacity());
    let mut out = std::ptr::null_mut();
    let mut copied = false;
    adjust(env, bytes_of::<u16>(capacity));
    // SAFETY: as in `latin1`, for `len` code units of a `Vec<u16>` freed by `free_units`.
    let status = unsafe {
        (api.utf16)(
            env,
            data,
            len,
            Some(free_units),
            capacity as *mut c_void,
            &mut out,
            &mut copied,
        )
    };
    if status == sys::Status::napi_ok {
        // As in `latin1`: the buffer is the string's.
        return Ok(out);
    }
    // No string was made and the finalizer will not run: the buffer is ours again.
    adjust(env, -bytes_of::<u16>(capacity));
    clear_exception(env);
    Err(std::mem::ManuallyDrop::into_inner(units))
}
