//! The napi entry of the core's whole-span mapping ([`genkit_for_maple_core::span`]): a `Mapper`
//! class holding the options and the state spans of a trace share, whose `mapSpan` reads the
//! span's `genkit:input` / `genkit:output` from its attribute map, takes the other span data as
//! arguments, runs the core and writes the `(key, value)` list back into the same map.
//!
//! Strings that are not well-formed UTF-16 (a lone surrogate) are read with U+FFFD in its place:
//! the OTLP wire carries UTF-8, so that is what an exporter sends for them anyway. The core's
//! state is borrowed only while the core runs (with, at most, Node-API reads of a span's id strings:
//! no JavaScript is called then), so a getter or setter that re-enters `onEnd` finds it free.

use super::{
    call_with_sink, copies, narrow, quiet_panics, raw, sink, utf, with_buffers, with_kept, Call,
    Read,
};
use genkit_for_maple_core::problem;
use genkit_for_maple_core::span::{
    self, Mode, Options, OtherInput, SpanInput, Status, TraceIds, Value,
};
use napi::bindgen_prelude::{FromNapiValue, JsValue, Unknown};
use napi::{sys, Env};
use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::CStr;
use std::ops::RangeInclusive;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

/// The options of a [`Mapper`] (validated by the JavaScript wrapper first).
#[napi(object)]
pub struct MapperOptions {
    /// `"complete"` or `"reference"`.
    pub mode: String,
    /// Complete mode: write `gen_ai.usage.cost`.
    pub cost: bool,
    /// Issue 11: write the five content attributes (default `true`).
    pub capture_content: Option<bool>,
    /// Issue 11: replace secrets in content attributes (default `true`).
    pub scrub_secrets: Option<bool>,
    /// Issue 11: extra secret patterns (`regex` crate syntax).
    pub secret_patterns: Option<Vec<String>>,
    /// Issue 11: the cap per content attribute in bytes; `Infinity` for none; absent: the mode's
    /// default.
    pub max_content_bytes: Option<f64>,
}

/// The core options of `options`; a `TypeError` for an unknown mode or a secret pattern that
/// does not compile (the entries that construct a [`Mapper`] call this once).
pub(crate) fn core_options(options: MapperOptions) -> napi::Result<Options> {
    let mode = match options.mode.as_str() {
        "complete" => Mode::Complete,
        "reference" => Mode::Reference,
        other => {
            return Err(napi::Error::new(
                napi::Status::InvalidArg,
                format!("unknown mode {other:?}"),
            ))
        }
    };
    let max_content_bytes = match options.max_content_bytes {
        None => None,
        Some(n) if n.is_finite() && n >= 1.0 => Some(n as usize),
        Some(n) if n == f64::INFINITY => Some(usize::MAX),
        Some(n) => {
            return Err(napi::Error::new(
                napi::Status::InvalidArg,
                format!("maxContentBytes must be a positive integer or Infinity, got {n}"),
            ))
        }
    };
    Ok(Options {
        mode,
        cost: options.cost,
        capture: options.capture_content.unwrap_or(true),
        scrub: options.scrub_secrets.unwrap_or(true),
        secret_patterns: options.secret_patterns.unwrap_or_default(),
        max_content_bytes,
    })
}

/// The core mapper of `options`: a `TypeError` naming the secret pattern that does not compile.
pub(crate) fn core_mapper(options: MapperOptions) -> napi::Result<span::Mapper> {
    span::Mapper::try_new(core_options(options)?).map_err(|e| {
        napi::Error::new(
            napi::Status::InvalidArg,
            format!(
                "secretPatterns[{}] does not compile: {}",
                e.index, e.message
            ),
        )
    })
}

/// Not a problem: set in what `mapSpan` returns when, after the call, the mapper keeps
/// tool call id state for some trace (rule 5), and what `Mapper.spanEnded` answers with. Without
/// it the wrapper need not call `spanEnded` when a root span ends (each call costs about half a
/// microsecond of napi-rs method overhead, on every flow and every non-Genkit root span).
#[napi]
pub const TOOL_CALL_STATE: u32 = 1 << 30;

/// The whole-span mapping with one set of options (core `span::Mapper`).
///
/// The per-span entries (`mapSpan`, and reference mode's `mapModelSpan` / `mapToolSpan`) take
/// the mapper by its [`Mapper::id`], a number, and find its state in this thread's registry
/// ([`registered`]): a class instance argument or method receiver costs napi-rs an unwrap, a
/// type-tag check (two private-symbol lookups in V8) and, for a method, its native-borrow
/// bookkeeping: 1.7k instructions a call as an argument, 3-6k as a method's receiver, a tenth
/// to a quarter of a small tool span's mapping (BENCHMARKS.md "Stop 24").
#[napi]
pub struct Mapper {
    /// This mapper's key in its thread's registry: unique in the process, never reused.
    id: u32,
    /// Its state, which the registry holds too.
    state: Registered,
}

/// A [`Mapper`]'s state, shared by the object and its thread's registry.
#[derive(Clone)]
pub(crate) struct Registered {
    /// The core mapper. Shared with the fused mapping of `genkit-for-maple/otlp`
    /// (`src/fused.rs`), which maps on the libuv thread pool with this state; never contended
    /// otherwise.
    pub(crate) inner: Arc<Mutex<span::Mapper>>,
    /// The content rules of the options (issue 11), shared with reference mode's writers
    /// (`src/content.rs`) without locking `inner`.
    pub(crate) content: Arc<genkit_for_maple_core::content::Content>,
    /// Whether complete mode's model spans may be read narrowed ([`map_span`]): the content
    /// rules allow it ([`narrow::rules_allow_narrowing`]). Derived from the options once.
    narrows: bool,
}

/// The next [`Mapper::id`]; 0 is never given (ids start at 1), so a missing id is never one.
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

thread_local! {
    /// The live mappers made on this thread (a JavaScript object lives on its own thread: the
    /// main one or a worker's), sorted by id: ids only grow, each is pushed as it is made and
    /// removed when its JavaScript object is collected ([`Mapper`]'s `Drop`). Borrowed only to
    /// look up, push or remove, never across a call into JavaScript.
    static MAPPERS: RefCell<Vec<(u32, Registered)>> = const { RefCell::new(Vec::new()) };
}

/// The mapper id the JavaScript value `value` is: a number that is an integer from 1 to
/// `u32::MAX`, exactly; `None` for anything else (no conversion: `1.5`, `2 ** 32 + 1` or `"1"` name
/// no mapper, where napi's `u32` conversion would truncate or wrap them onto a live one).
pub(crate) fn mapper_id(env: sys::napi_env, value: sys::napi_value) -> Option<u32> {
    raw::number(env, value)
        .filter(|&n| n >= 1.0 && n <= f64::from(u32::MAX) && n.fract() == 0.0)
        .map(|n| n as u32)
}

/// `part` of the state of the live mapper `id` of this thread (each per-span entry takes only
/// the part it needs); `None` for an id that names none (never given, collected, or made on
/// another thread).
pub(crate) fn registered<T>(id: u32, part: impl FnOnce(&Registered) -> T) -> Option<T> {
    MAPPERS
        .try_with(|m| {
            let m = m.try_borrow().ok()?;
            let at = m.binary_search_by_key(&id, |(k, _)| *k).ok()?;
            m.get(at).map(|(_, r)| part(r))
        })
        .ok()
        .flatten()
}

impl Drop for Mapper {
    fn drop(&mut self) {
        let id = self.id;
        // At thread exit the registry may be gone already: nothing to remove then.
        let _ = MAPPERS.try_with(|m| {
            if let Ok(mut m) = m.try_borrow_mut() {
                if let Ok(at) = m.binary_search_by_key(&id, |(k, _)| *k) {
                    m.remove(at);
                }
            }
        });
    }
}

impl Mapper {
    /// The content rules (issue 11).
    pub(crate) fn content_rules(&self) -> Arc<genkit_for_maple_core::content::Content> {
        Arc::clone(&self.state.content)
    }

    /// The core mapper's state, for the fused exporter.
    pub(crate) fn shared(&self) -> Arc<Mutex<span::Mapper>> {
        Arc::clone(&self.state.inner)
    }
}

/// Locks `mapper` without waiting: `None` when another thread holds it (the fused exporter's pool
/// task, which the JavaScript side never overlaps with a call here). A lock poisoned by a caught
/// panic is taken as it is (the pairing state is a cache: at worst a tool call id is missing).
pub(crate) fn try_lock(mapper: &Mutex<span::Mapper>) -> Option<MutexGuard<'_, span::Mapper>> {
    match mapper.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The shortest `genkit:input` (UTF-16 code units) complete mode narrows (`map_span`): below
/// it the narrowed mapping's checks and rebuild cost what narrowing spares (callgrind, 1 KB
/// multi-byte model spans: 100.5k instructions narrowed against 96.2k transcoded; 10 KB: fewer).
const NARROW_MIN_UNITS: usize = 2048;

/// Spans of this process mapped narrowed (their message attributes rebuilt from the inputs' code
/// units; core `Mapper::map_narrowed`), counted so that tests can tell which path a span took:
/// both paths write the same attributes by design.
static NARROWED_SPANS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many spans this process has mapped narrowed (see [`NARROWED_SPANS`]): a count that only
/// grows, for tests (`__test__/complete-narrowed.test.js` asserts which spans take the path). A
/// JavaScript number (exact below 2^53).
#[napi]
pub fn narrowed_span_count() -> f64 {
    NARROWED_SPANS.load(Ordering::Relaxed) as f64
}

/// What [`read_lossy`] found.
enum Got {
    /// A string, in the buffer as it is.
    Str,
    /// A string with a lone surrogate, in the buffer with U+FFFD in its place.
    Lossy,
    Absent,
    Threw,
    /// Longer than [`super::HANDOFF_UNITS`]: not copied (issue 13's memory policy); the span is
    /// mapped in JavaScript.
    TooLarge,
    /// A buffer for the string could not be allocated; the span is mapped in JavaScript.
    OutOfMemory,
}

/// Reads `value` (`genkit:input` or `genkit:output`, as the wrapper read it from the attribute
/// map: its getter ran once, there) into `buf` as UTF-8 when it is a string, lone surrogates
/// replaced by U+FFFD. `Threw` when the wrapper says its getter threw; `Absent` for other types;
/// `TooLarge` above the hand-off size, `OutOfMemory` when a buffer cannot be had: every buffer is
/// reserved fallibly and exactly (README, Robustness: memory policy).
///
/// `keep`: the string's UTF-16 code units when it is not ASCII and was read as it is (empty
/// otherwise): the outputs may take their copies' code units from them (`src/copies.rs`).
///
/// `narrow`: a string that is not ASCII and whose length in code units is in this range is
/// narrowed into `buf` instead (lib.rs `Call::read_string_keeping`; `keep` then holds its units
/// whatever their number; `buf` is as long as `keep`).
fn read_lossy(
    call: &Call,
    value: Option<sys::napi_value>,
    threw: bool,
    buf: &mut String,
    keep: &mut Vec<u16>,
    narrow: &RangeInclusive<usize>,
) -> Got {
    buf.clear();
    keep.clear();
    if threw {
        return Got::Threw;
    }
    let Some(value) = value else {
        return Got::Absent;
    };
    // The processor's reader (lib.rs `Call::read_string`: Latin-1 for ASCII, a reused UTF-16
    // buffer otherwise); a string with a lone surrogate is read again, lossily.
    match call.read_string_keeping(value, buf, keep, narrow) {
        Read::Str => Got::Str,
        Read::Absent => Got::Absent,
        Read::TooLarge => Got::TooLarge,
        Read::OutOfMemory => Got::OutOfMemory,
        Read::NotWellFormed => read_lossy_units(call, value, buf),
    }
}

/// What `value` is when it is neither a string nor null/undefined (core [`OtherInput`]: a
/// tool span's arguments; reference mode's content rules ask the same, `content::writable_as_is`);
/// `None` for those, or when napi cannot tell.
pub(crate) fn other_input(env: sys::napi_env, value: sys::napi_value) -> Option<OtherInput> {
    let mut kind = sys::ValueType::napi_undefined;
    // SAFETY: live `env` of the current call, a handle of it, valid out-pointer; on failure
    // `kind` keeps `undefined`.
    if unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok {
        return None;
    }
    match kind {
        sys::ValueType::napi_number => {
            let mut n = 0f64;
            // SAFETY: as above; `value` is a number, so napi writes `n`.
            let ok = unsafe { sys::napi_get_value_double(env, value, &mut n) };
            Some(if ok == sys::Status::napi_ok {
                OtherInput::Number(n)
            } else {
                OtherInput::Other
            })
        }
        sys::ValueType::napi_boolean => {
            let mut b = false;
            // SAFETY: as above; `value` is a boolean, so napi writes `b`.
            let ok = unsafe { sys::napi_get_value_bool(env, value, &mut b) };
            Some(if ok == sys::Status::napi_ok {
                OtherInput::Bool(b)
            } else {
                OtherInput::Other
            })
        }
        sys::ValueType::napi_undefined
        | sys::ValueType::napi_null
        | sys::ValueType::napi_string => None,
        _ => Some(OtherInput::Other),
    }
}

/// Reads the string `value` with each lone surrogate replaced by U+FFFD.
fn read_lossy_units(call: &Call, value: sys::napi_value, buf: &mut String) -> Got {
    buf.clear();
    let mut len = 0usize;
    // SAFETY: a null buffer asks for the length in UTF-16 code units; a non-string value makes
    // napi return `napi_string_expected`, which is the type check.
    if unsafe { sys::napi_get_value_string_utf16(call.env, value, ptr::null_mut(), 0, &mut len) }
        != sys::Status::napi_ok
    {
        return Got::Absent;
    }
    if len > super::HANDOFF_UNITS {
        return Got::TooLarge;
    }
    let mut units: Vec<u16> = Vec::new();
    if units.try_reserve_exact(len + 1).is_err() {
        return Got::OutOfMemory;
    }
    let mut written = 0usize;
    // SAFETY: `units` has capacity for `len + 1` code units; napi writes at most that many and
    // reports the count (without the NUL) in `written`.
    let status = unsafe {
        sys::napi_get_value_string_utf16(call.env, value, units.as_mut_ptr(), len + 1, &mut written)
    };
    if status != sys::Status::napi_ok {
        return Got::Absent;
    }
    // SAFETY: napi initialised `written <= len` code units of `units`.
    unsafe { units.set_len(written.min(len)) };
    match super::utf::utf16_to_utf8(&units, buf) {
        Ok(()) => Got::Str,
        Err(super::utf::Utf::OutOfMemory) => Got::OutOfMemory,
        Err(super::utf::Utf::NotWellFormed) => {
            // Rare (a lone surrogate): 3 bytes per code unit covers U+FFFD and every BMP
            // character, reserved fallibly.
            buf.clear();
            if buf
                .try_reserve_exact(units.len().saturating_mul(3))
                .is_err()
            {
                return Got::OutOfMemory;
            }
            for c in char::decode_utf16(units.iter().copied()) {
                buf.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            Got::Lossy
        }
    }
}

/// Sets `key` (ASCII) to `value`: into the call's sink when it has one with room, else on the
/// attribute map ([`set_on_object`]); `false` when not written.
fn set(call: &Call, key: &str, value: sys::napi_value) -> bool {
    if value.is_null() {
        return false;
    }
    if let Some(sink) = &call.sink {
        if sink.put(key.as_bytes(), sink::VALUE, 0.0, value) {
            return true;
        }
    }
    set_on_object(call, key, value)
}

/// Sets `key` (ASCII) to `value` on the attribute map itself; `false` when not written. Keys up
/// to 63 bytes (every `gen_ai.*` key the core writes) go through `napi_set_named_property` with a
/// NUL-terminated copy on the stack; longer ones through a created key string.
pub(crate) fn set_on_object(call: &Call, key: &str, value: sys::napi_value) -> bool {
    if value.is_null() {
        return false;
    }
    let mut named = [0u8; 64];
    if key.len() < named.len() {
        // One pass: copy the key and check it holds no NUL (the `gen_ai.*` keys are constants).
        let mut nul = false;
        for (to, &b) in named.iter_mut().zip(key.as_bytes()) {
            *to = b;
            nul |= b == 0;
        }
        if !nul {
            // SAFETY: `named[..key.len()]` holds the key's bytes, none of them NUL (checked in the
            // copy above), and `named[key.len()]` is the NUL terminator (the array starts zeroed
            // and `key.len() < 64`): exactly one NUL, at the end, as `CStr` requires.
            let name = unsafe { CStr::from_bytes_with_nul_unchecked(&named[..=key.len()]) };
            return call.set_on_object(name, value).is_ok();
        }
    }
    let mut name = ptr::null_mut();
    // SAFETY: live `env`; `key` is valid for `key.len()` bytes of ASCII (valid Latin-1).
    unsafe {
        sys::napi_create_string_latin1(call.env, key.as_ptr().cast(), key.len() as isize, &mut name)
    };
    if name.is_null() {
        return false;
    }
    // SAFETY: live handles of the current call; `name` and `value` were created in this `env`.
    let status = unsafe { sys::napi_set_property(call.env, call.object, name, value) };
    if status != sys::Status::napi_ok {
        call.clear_exception();
        return false;
    }
    true
}

/// Reads a short string argument (a subtype, a hex id) into `buf` without allocating: `None`
/// unless `value` is a string of at most `N` UTF-16 code units, all ASCII. The caller treats
/// `None` as it treated an absent or unreadable argument.
fn ascii_arg<const N: usize>(
    env: sys::napi_env,
    value: sys::napi_value,
    buf: &mut [u8; N],
) -> Option<&str> {
    let mut units = [0u16; 80];
    let cap = N.min(units.len() - 1);
    let mut written = 0usize;
    // SAFETY: `units` is valid for `cap + 1 <= 80` code units; napi writes at most that many
    // (NUL included) and reports the count without the NUL in `written`. A value that is not a
    // string makes napi return `napi_string_expected` without an exception.
    let status = unsafe {
        sys::napi_get_value_string_utf16(env, value, units.as_mut_ptr(), cap + 1, &mut written)
    };
    if status != sys::Status::napi_ok || written > cap {
        return None;
    }
    // A string of exactly `cap` units may have been cut: read its length to tell.
    if written == cap {
        let mut len = 0usize;
        // SAFETY: a null buffer asks for the length only; `value` is a string (read above).
        unsafe { sys::napi_get_value_string_utf16(env, value, ptr::null_mut(), 0, &mut len) };
        if len != written {
            return None;
        }
    }
    for (to, &unit) in buf.iter_mut().zip(&units[..written]) {
        if unit > 0x7f {
            return None;
        }
        *to = unit as u8;
    }
    std::str::from_utf8(&buf[..written]).ok()
}

/// A hex id argument (`traceId`, `spanId`) as bytes; `None` when it is not a string of `2 * N`
/// hex digits ([`span::parse_hex`]).
fn hex_arg<const N: usize>(env: sys::napi_env, value: Option<sys::napi_value>) -> Option<[u8; N]> {
    // Room for one unit more than an id holds: a longer string reads `2 * N + 1` units and is
    // refused by its length (napi writes at most `room - 1` units and a NUL).
    let mut units = [0u16; 34];
    let room = (2 * N + 2).min(units.len());
    let mut written = 0usize;
    // SAFETY: live `env` of the current call and a handle of it; `units` is valid for
    // `room <= 34` code units; napi writes at most that many (NUL included) and reports the
    // count without the NUL in `written`. A value that is not a string makes napi return
    // `napi_string_expected` without an exception.
    let status = unsafe {
        sys::napi_get_value_string_utf16(env, value?, units.as_mut_ptr(), room, &mut written)
    };
    if status != sys::Status::napi_ok {
        return None;
    }
    span::parse_hex_units(units.get(..written)?)
}

/// Creates the JavaScript value of an attribute value; null for [`Value::Json`] or on failure.
fn js_value(call: &Call, value: &Value<'_>) -> sys::napi_value {
    let mut out = ptr::null_mut();
    match value {
        // A string that cannot be created (too long for V8, no memory) is not written.
        Value::Str(s) => return call.string(s).unwrap_or(ptr::null_mut()),
        Value::Int(i) => {
            // SAFETY: live `env` of the current call, valid out-pointer.
            unsafe { sys::napi_create_double(call.env, *i as f64, &mut out) }
        }
        Value::Double(d) => {
            // SAFETY: as above.
            unsafe { sys::napi_create_double(call.env, *d, &mut out) }
        }
        Value::Bool(b) => {
            // SAFETY: as above.
            unsafe { sys::napi_get_boolean(call.env, *b, &mut out) }
        }
        Value::Null => {
            // SAFETY: as above.
            unsafe { sys::napi_get_null(call.env, &mut out) }
        }
        Value::Array(items) => {
            // SAFETY: live `env`, valid out-pointer.
            if unsafe { sys::napi_create_array_with_length(call.env, items.len(), &mut out) }
                != sys::Status::napi_ok
            {
                return ptr::null_mut();
            }
            for (i, item) in items.iter().enumerate() {
                let element = js_value(call, item);
                // Defined, not set: an index setter on `Array.prototype` never takes an element.
                if element.is_null() || !super::define_element(call.env, out, i, element) {
                    call.clear_exception();
                    return ptr::null_mut();
                }
            }
            sys::Status::napi_ok
        }
        Value::Json(_) => return ptr::null_mut(),
    };
    out
}

/// The sink's kind and number of a value that needs no JavaScript value (`src/sink.rs`): a
/// number, a boolean, a string of the sink's table or a one-element list of one
/// ([`sink::CONSTANT`], [`sink::CONSTANT_LIST`]); `None` for others.
fn sink_scalar(value: &Value<'_>) -> Option<(u32, f64)> {
    match value {
        Value::Int(i) => Some((sink::NUMBER, *i as f64)),
        Value::Double(d) => Some((sink::NUMBER, *d)),
        Value::Bool(true) => Some((sink::TRUE, 0.0)),
        Value::Bool(false) => Some((sink::FALSE, 0.0)),
        Value::Str(s) => sink::constant(s).map(|i| (sink::CONSTANT, f64::from(i))),
        Value::Array(items) => match items.as_slice() {
            [Value::Str(s)] => sink::constant(s).map(|i| (sink::CONSTANT_LIST, f64::from(i))),
            _ => None,
        },
        _ => None,
    }
}

fn has_json(value: &Value<'_>) -> bool {
    match value {
        Value::Json(_) => true,
        Value::Array(items) => items.iter().any(has_json),
        _ => false,
    }
}

#[napi]
impl Mapper {
    /// A mapper with these options. Throws a `TypeError` for an unknown mode, a bad
    /// `maxContentBytes` or a secret pattern that does not compile.
    #[napi(constructor)]
    pub fn new(options: MapperOptions) -> napi::Result<Self> {
        let mapper = core_mapper(options)?;
        let content = mapper.content();
        let registered = Registered {
            content: Arc::new(content.clone()),
            narrows: narrow::rules_allow_narrowing(content),
            inner: Arc::new(Mutex::new(mapper)),
        };
        let fail = |why: &str| napi::Error::new(napi::Status::GenericFailure, why.to_string());
        // Ids only grow; at the end of the range no mapper can be made (4 billion made before).
        let id = NEXT_ID
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_add(1))
            .map_err(|_| fail("no mapper id is left in this process"))?;
        MAPPERS
            .try_with(|m| {
                let mut m = m
                    .try_borrow_mut()
                    .map_err(|_| fail("the mapper registry is busy"))?;
                m.try_reserve(1)
                    .map_err(|_| fail("no memory for the mapper registry"))?;
                m.push((id, registered.clone()));
                Ok::<(), napi::Error>(())
            })
            .map_err(|_| fail("this thread is exiting"))??;
        Ok(Mapper {
            id,
            state: registered,
        })
    }

    /// This mapper's id (an integer from 1), the first argument of the binding's `mapSpan`,
    /// `mapModelSpan` and `mapToolSpan`: valid on the thread that made the mapper while its
    /// object is alive (those entries answer `PANIC`, map nothing, for any other number).
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Whether the mapper keeps tool call id state (`true` when it cannot tell: busy).
    fn holds_tool_calls_now(&self) -> bool {
        try_lock(&self.state.inner).is_none_or(|m| m.holds_tool_calls())
    }

    /// Tells the mapper that a span it did not map ended: `root` when it is its trace's local root
    /// (the trace is complete here), which frees the trace's tool call id state (rule 5). Ids are
    /// hex; bad ids are ignored. Returns whether tool call id state is still kept for some trace
    /// ([`TOOL_CALL_STATE`]: until it is again, the wrapper need not call this). Never throws.
    #[napi]
    pub fn span_ended(
        &self,
        env: Env,
        trace_id: Unknown<'_>,
        span_id: Unknown<'_>,
        root: bool,
    ) -> bool {
        catch_unwind(AssertUnwindSafe(|| {
            // Read into stack buffers, never allocated.
            let (Some(trace), Some(span)) = (
                hex_arg::<16>(env.raw(), Some(trace_id.raw())),
                hex_arg::<8>(env.raw(), Some(span_id.raw())),
            ) else {
                return self.holds_tool_calls_now();
            };
            if let Some(mut mapper) = try_lock(&self.state.inner) {
                mapper.span_ended(trace, span, root);
                return mapper.holds_tool_calls();
            }
            true
        }))
        .unwrap_or(true)
    }
}

/// Maps one ended span in place with the [`Mapper`] whose [`Mapper::id`] is `mapper` (one of
/// this thread's live mappers; any other value, `undefined` included, maps nothing and answers
/// `PANIC`: [`mapper_id`]). `attributes`
/// is the span's attribute map, where the attributes are written; `input` and `output` are its `genkit:input` and `genkit:output` as
/// the caller read them (once: a getter is never called twice), `threw` says whose getter
/// threw (bit 1 input, bit 2 output: that value is treated as unreadable, as the reference
/// path treats it); the other arguments are the span's subtype, `genkit:name`
/// (as `String()` gives it), status code, the `exception.type` / `exception.stacktrace` of
/// its exception event, its trace, span and parent span ids (hex; read only where rule 5 uses
/// them, core `Mapper::map_with_ids`), and its end time as the two
/// numbers of its HrTime (`span.endTime`: seconds, nanoseconds; rule 2 prices the call at that
/// time, at the time of mapping without them). Returns problem flags;
/// with `NEEDS_JS` or `PANIC` nothing was written (`NEEDS_JS | TOO_LARGE`: `input` or `output`
/// is longer than [`crate::HANDOFF_UNITS`], `NEEDS_JS | OUT_OF_MEMORY`: a buffer for it could not
/// be had; the caller maps the span in JavaScript). Never throws. `sinkCodes` and
/// `sinkValues`, when given, are the wrapper's attribute sink (`src/sink.rs`): the
/// attributes are recorded there for the wrapper's named stores (`js/sink.js`) instead of
/// being set on `attributes` (those past its room still are).
///
/// A plain Node-API callback (`src/raw.rs`): `argv` holds the seventeen arguments in this order
/// (`undefined` for those not passed). Arguments of another type than described count as not
/// given: `threw` and `status` as 0, `exceptionType`, `exceptionStacktrace`, `endSeconds` and
/// `endNanos` as absent.
pub(crate) fn map_span(env: sys::napi_env, argv: [sys::napi_value; 17]) -> u32 {
    let [mapper, attributes, input, output, threw, subtype, name, status, exception_type, exception_stacktrace, trace_id, span_id, parent_span_id, end_seconds, end_nanos, sink_codes, sink_values] =
        argv;
    quiet_panics();
    let arguments = [input, output];
    let call = call_with_sink(env, attributes, sink_codes, sink_values, arguments);
    let threw = raw::uint(env, threw);
    let status = raw::uint(env, status);
    let exception_type = raw::string(env, exception_type);
    let mut stack_room = [0u8; span::STACK_HEAD_BYTES];
    let exception_stacktrace = raw::stack_head(env, exception_stacktrace, &mut stack_room);
    let (end_seconds, end_nanos) = (raw::number(env, end_seconds), raw::number(env, end_nanos));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some((inner, narrows, cap)) = mapper_id(call.env, mapper).and_then(|id| {
            registered(id, |r| {
                (Arc::clone(&r.inner), r.narrows, r.content.max_bytes())
            })
        }) else {
            return problem::PANIC;
        };
        // The subtype and the ids are short ASCII strings: read into stack buffers, never
        // allocated. A subtype that is not one (not a string, too long) maps nothing.
        let mut subtype_buf = [0u8; 32];
        let Some(subtype) = ascii_arg(call.env, subtype, &mut subtype_buf) else {
            return 0;
        };
        let mut name_room = NameRoom::new();
        let name = name_arg(call.env, name, &mut name_room.buf, &mut name_room.copy);
        // The ids only where rule 5 uses them (core `Mapper::map_with_ids`): most model spans
        // have no tool request and find no state.
        let env = call.env;
        let ids = move || trace_ids(env, [trace_id, span_id, parent_span_id]);
        with_buffers(|input_buf, output_buf| {
            with_kept(|input_units, output_units| {
                // A model span's multi-byte inputs are narrowed rather than transcoded where the
                // content rules allow (core `Mapper::map_narrowed`); transcoded from the same
                // units when that mapping declines. `genkit:input` from NARROW_MIN_UNITS (below,
                // the checks cost what narrowing spares), `genkit:output` when the input was (or
                // is ASCII and the output is long enough); `genkit:output` at most the cap in
                // units: a longer answer is over it in UTF-8 too, and its output message (most
                // of it, unless `custom` holds a large raw response) would have its text
                // shortened, which the narrowed mapping declines after all its work (5 MB
                // multi-byte: 58M instructions for nothing). Such an answer is transcoded
                // instead (its units kept), and its output message capped by the usual cap.
                let most = if narrows && subtype == "model" {
                    usize::MAX
                } else {
                    0
                };
                let output_most = cap.unwrap_or(usize::MAX).min(most);
                let narrow_input = NARROW_MIN_UNITS..=most;
                let got_input = read_lossy(
                    &call,
                    Some(input),
                    threw & 1 != 0,
                    input_buf,
                    input_units,
                    &narrow_input,
                );
                let narrow_output = if input_units.is_empty() {
                    NARROW_MIN_UNITS..=output_most
                } else if is_narrowed(input_units, input_buf) {
                    0..=output_most
                } else {
                    super::NEVER_NARROW
                };
                let got_output = read_lossy(
                    &call,
                    Some(output),
                    threw & 2 != 0,
                    output_buf,
                    output_units,
                    &narrow_output,
                );
                // A narrowed answer that could be over the cap in UTF-8 (three bytes a unit at
                // most): its exact UTF-8 size, and over the cap it is transcoded from its units
                // after all. Its output message then holds no placeholder and gets the usual cap;
                // narrowed, it would be shortened at UTF-8 offsets the narrowed text lacks, which
                // the core declines after all its work (2 MB multi-byte spans: the whole mapping
                // twice).
                if let Some(cap) = cap
                    .filter(|&c| output_buf.len() > c / 3 && is_narrowed(output_units, output_buf))
                {
                    // Well-formed: a text with a lone surrogate is read lossily, never narrowed.
                    if simdutf::utf8_length_from_utf16(output_units) > cap
                        && utf::utf16_to_utf8_in_one_pass(output_units, output_buf).is_err()
                    {
                        return problem::NEEDS_JS | problem::OUT_OF_MEMORY;
                    }
                }
                // A lossy read changed the text: its units are not the text's.
                if matches!(got_input, Got::Lossy) {
                    input_units.clear();
                }
                if matches!(got_output, Got::Lossy) {
                    output_units.clear();
                }
                for got in [&got_input, &got_output] {
                    match got {
                        // The JavaScript side maps the span (its reference mapping: the value is
                        // not copied again to normalise it).
                        Got::TooLarge => return problem::NEEDS_JS | problem::TOO_LARGE,
                        Got::OutOfMemory => return problem::NEEDS_JS | problem::OUT_OF_MEMORY,
                        _ => {}
                    }
                }
                let gots = [&got_input, &got_output];
                // Everything but the texts; each path sets those. Only a tool span reads
                // `other_input` (its arguments); a getter that threw gave nothing.
                let base = SpanInput {
                    subtype: Some(subtype),
                    name,
                    input: None,
                    other_input: match (&got_input, subtype) {
                        (Got::Absent, "tool" | "tool.v2") => other_input(call.env, input),
                        _ => None,
                    },
                    output: None,
                    conversation_id: None,
                    status: Status::from_code(status),
                    exception_type: exception_type.as_deref(),
                    exception_stacktrace,
                    // Read by `ids`, when rule 5 asks.
                    trace_id: None,
                    span_id: None,
                    parent_span_id: None,
                    end_time_unix_nano: end_time(end_seconds, end_nanos),
                    record_copies: false,
                    narrowed: None,
                };
                // Each text narrowed or ASCII (no units kept); or a narrowed input beside an
                // answer transcoded with its units kept: one longer than the cap (see
                // `output_most`), whose output message holds no placeholder and is capped by the
                // core as the usual path caps it. A transcoded input beside a narrowed or
                // transcoded output: the usual path (nothing to spare).
                let input_narrowed = is_narrowed(input_units, input_buf);
                let output_narrowed = is_narrowed(output_units, output_buf);
                let narrowed_reads = (input_units.is_empty() || input_narrowed)
                    && (output_units.is_empty() || output_narrowed || input_narrowed);
                if narrowed_reads && (input_narrowed || output_narrowed) {
                    // The state is borrowed only while the core runs (as below).
                    let Some(mut mapper) = try_lock(&inner) else {
                        return problem::NEEDS_JS;
                    };
                    let reads = Reads::of(
                        gots,
                        [input_buf, output_buf],
                        [input_units, output_units],
                        arguments,
                    );
                    let span_input = SpanInput {
                        input: reads.texts[0],
                        output: reads.texts[1],
                        narrowed: Some(utf::PLACEHOLDER),
                        ..base.clone()
                    };
                    let narrowed = mapper.map_narrowed(
                        &span_input,
                        ids,
                        |copy| utf8_extra(copy, &reads.sources),
                        |m| rebuild_messages(m, &reads.sources),
                    );
                    let holds = holds_state(&mapper);
                    drop(mapper);
                    if let Some((mapped, built)) = narrowed {
                        NARROWED_SPANS.fetch_add(1, Ordering::Relaxed);
                        return write_mapped(&call, mapped, built, holds, &reads);
                    }
                }
                // Declined, or not all narrowed: the usual path, on the narrowed inputs
                // transcoded from their units.
                for (units, buf) in [
                    (&*input_units, &mut *input_buf),
                    (&*output_units, &mut *output_buf),
                ] {
                    if is_narrowed(units, buf)
                        && utf::utf16_to_utf8_in_one_pass(units, buf).is_err()
                    {
                        return problem::NEEDS_JS | problem::OUT_OF_MEMORY;
                    }
                }
                let reads = Reads::of(
                    gots,
                    [input_buf, output_buf],
                    [input_units, output_units],
                    arguments,
                );
                // The writers record their copies when an input's UTF-16 is kept and the texts
                // are long enough (`COPIES_MIN_UNITS`: below, it costs more than it spares).
                let record_copies = (!input_units.is_empty() || !output_units.is_empty())
                    && input_units.len() + output_units.len() >= super::COPIES_MIN_UNITS;
                let span_input = SpanInput {
                    input: reads.texts[0],
                    output: reads.texts[1],
                    record_copies,
                    ..base
                };
                // The state is borrowed only while the core runs; a re-entrant call (a getter
                // that ends a span) finds it borrowed only if it re-enters from here, which
                // cannot happen: no JavaScript runs inside `map_with_ids` (`ids` reads three
                // strings by Node-API, which calls none).
                let Some(mut mapper) = try_lock(&inner) else {
                    return problem::NEEDS_JS;
                };
                let mapped = mapper.map_with_ids(&span_input, ids);
                let holds = holds_state(&mapper);
                drop(mapper);
                write_mapped(&call, mapped, Vec::new(), holds, &reads)
            })
        })
    }));
    outcome.unwrap_or(problem::PANIC) | call.finish_sink()
}

/// Rule 5 for a complete-mode `tool` span whose other attributes [`crate::map_tool_span`] writes
/// (the processor's tool path: its writers give a `tool` span what complete mode's mapping gives
/// it): its `gen_ai.tool.call.id` when the mapper `mapper` (a `Mapper.id`) pairs the span with a
/// tool request of its trace, the state changed as [`map_span`] changes it (core
/// `Mapper::pair_tool_span`); nothing is written here (the caller writes the id, [`put_str`],
/// after rule 4's `error.type`, where the whole-span mapping writes it). `ids` are
/// `[name, traceId, spanId, parentSpanId]` as [`span_ids`] reads them (`name`: `genkit:name` as
/// `String()` gave it) and `input` the `genkit:input` value (the request's arguments are
/// compared with its text), each read only when the mapper keeps tool call id state: `input` is
/// read into `input_buf` unless `read` says `input_buf` holds its text already. `Ok` with the id
/// (or `None`) and [`TOOL_CALL_STATE`] when the mapper keeps state afterwards (else 0); `Err`
/// with `NEEDS_JS` (the state unchanged) when `genkit:input` is a string with a lone surrogate
/// or too long to hand over or the state is borrowed (the caller maps the span through
/// [`map_span`] instead), `OUT_OF_MEMORY | NEEDS_JS` likewise without memory, `PANIC` for an id
/// that names no mapper.
pub(crate) fn tool_call_id(
    call: &Call,
    mapper: sys::napi_value,
    input: Option<sys::napi_value>,
    ids: [sys::napi_value; 4],
    input_buf: &mut String,
    read: bool,
) -> Result<(Option<String>, u32), u32> {
    let Some(inner) =
        mapper_id(call.env, mapper).and_then(|id| registered(id, |r| Arc::clone(&r.inner)))
    else {
        return Err(problem::PANIC);
    };
    let Some(mut mapper) = try_lock(&inner) else {
        return Err(problem::NEEDS_JS);
    };
    // Most tool spans of a processor that saw no model answer with tool requests: nothing to
    // pair, and nothing to note (an empty state ignores a span's end), so nothing is read.
    if !mapper.holds_tool_calls() {
        return Ok((None, 0));
    }
    // Read as `map_span` reads them (no JavaScript runs in these reads).
    let mut name_room = NameRoom::new();
    let ids = span_ids(call.env, ids, &mut name_room);
    let text = match input.map(|value| (!read).then(|| call.read_string(value, input_buf))) {
        Some(None) | Some(Some(Read::Str)) => Some(input_buf.as_str()),
        None | Some(Some(Read::Absent)) => None,
        Some(Some(other)) => return Err(other.hand_off().unwrap_or(problem::NEEDS_JS)),
    };
    let span = SpanInput {
        input: text,
        ..ids.input()
    };
    let id = mapper.pair_tool_span(&span);
    Ok((id, holds_state(&mapper)))
}

/// Writes the attribute `key` = the string `text` through the call's sink (one of its constants,
/// else a range of its text) or, past its room, on the attribute map itself. Returns
/// `ATTRIBUTE_TYPE` when it could not be made or set, as [`write_mapped`] answers for the same
/// attribute (never a hand-off flag: the pairing state may have changed by then).
pub(crate) fn put_str(call: &Call, key: &str, text: &str) -> u32 {
    if let Some((kind, index)) = sink_scalar(&Value::str(text)) {
        if call
            .sink
            .as_ref()
            .is_some_and(|sink| sink.put(key.as_bytes(), kind, index, ptr::null_mut()))
        {
            return 0;
        }
    }
    if call.put_text(key.as_bytes(), text) {
        return 0;
    }
    match call.string(text) {
        Ok(made) if set(call, key, made) => 0,
        _ => problem::ATTRIBUTE_TYPE,
    }
}

/// Rule 4's `error.type` of a failed span (core `span::error_type`) from its exception event's
/// `exceptionType` and `exceptionStacktrace` (each counts as not given unless a string), given to
/// `f`: the error name the stack trace starts with (only its head is read: `span::stack_head`),
/// else `exceptionType` (read only then), else `_OTHER`.
fn with_error_name<R>(
    env: sys::napi_env,
    [exception_type, exception_stacktrace]: [sys::napi_value; 2],
    f: impl FnOnce(&str) -> R,
) -> R {
    let mut stack_room = [0u8; span::STACK_HEAD_BYTES];
    let mut input = SpanInput {
        status: Status::Error,
        exception_stacktrace: raw::stack_head(env, exception_stacktrace, &mut stack_room),
        ..SpanInput::default()
    };
    // The stack trace's name first: `exceptionType` is read only when it names none (without a
    // type the rule answers `_OTHER` exactly then, or for a stack trace named `_OTHER`, which
    // the type cannot change).
    let name = span::error_type(&input).unwrap_or(span::ERROR_TYPE_OTHER);
    if name != span::ERROR_TYPE_OTHER {
        return f(name);
    }
    let type_text = raw::string(env, exception_type);
    input.exception_type = type_text.as_deref();
    f(span::error_type(&input).unwrap_or(span::ERROR_TYPE_OTHER))
}

/// Writes rule 4's `error.type` of a failed span ([`with_error_name`] of `exception`:
/// `[exceptionType, exceptionStacktrace]`) as [`put_str`] writes. Returns its flags.
pub(crate) fn write_error_type(call: &Call, exception: [sys::napi_value; 2]) -> u32 {
    with_error_name(call.env, exception, |name| {
        put_str(call, span::keys::ERROR_TYPE, name)
    })
}

/// Room for a span's `genkit:name` as [`span_ids`] reads it: on the stack when it is ASCII of up
/// to 80 bytes, else a copy.
struct NameRoom {
    buf: [u8; 80],
    copy: Option<String>,
}

impl NameRoom {
    fn new() -> Self {
        NameRoom {
            buf: [0; 80],
            copy: None,
        }
    }
}

/// A span's `genkit:name` and its trace, span and parent span ids, as [`span_ids`] read them.
struct SpanIds<'b> {
    name: Option<&'b str>,
    ids: TraceIds,
}

impl<'b> SpanIds<'b> {
    /// A span input with these four set, nothing else (the pairing's input).
    fn input(self) -> SpanInput<'b> {
        SpanInput {
            name: self.name,
            trace_id: self.ids.trace_id,
            span_id: self.ids.span_id,
            parent_span_id: self.ids.parent_span_id,
            ..SpanInput::default()
        }
    }
}

/// Reads `[name, traceId, spanId, parentSpanId]` as [`tool_call_id`] takes them ([`map_span`]
/// reads the same way, the ids only when rule 5 asks): the name by [`name_arg`] (`String()`'s
/// text; `None` for a value that is not a string), the ids by [`trace_ids`]. No JavaScript runs
/// in these reads.
fn span_ids<'b>(
    env: sys::napi_env,
    [name, trace_id, span_id, parent_span_id]: [sys::napi_value; 4],
    room: &'b mut NameRoom,
) -> SpanIds<'b> {
    SpanIds {
        name: name_arg(env, name, &mut room.buf, &mut room.copy),
        ids: trace_ids(env, [trace_id, span_id, parent_span_id]),
    }
}

/// Reads `[traceId, spanId, parentSpanId]` as hex of 16, 8 and 8 bytes ([`hex_arg`]; `None`
/// each for anything else). No JavaScript runs in these reads.
fn trace_ids(
    env: sys::napi_env,
    [trace_id, span_id, parent_span_id]: [sys::napi_value; 3],
) -> TraceIds {
    TraceIds {
        trace_id: hex_arg::<16>(env, Some(trace_id)),
        span_id: hex_arg::<8>(env, Some(span_id)),
        parent_span_id: hex_arg::<8>(env, Some(parent_span_id)),
    }
}

/// `genkit:name` as `String()` gave it: a short ASCII name (every real one) read into `buf`,
/// others copied into `copy` as napi-rs converts a string (lone surrogates as U+FFFD); `None`
/// for a value that is not a string (undefined: `String()` threw).
fn name_arg<'b>(
    env: sys::napi_env,
    value: sys::napi_value,
    buf: &'b mut [u8; 80],
    copy: &'b mut Option<String>,
) -> Option<&'b str> {
    if let Some(s) = ascii_arg(env, value, buf) {
        return Some(s);
    }
    // SAFETY: `value` is a handle of the current call in its live `env`; a value that is not a
    // string is an `Err`, no exception left pending.
    *copy = unsafe { String::from_napi_value(env, value) }.ok();
    copy.as_deref()
}

/// [`TOOL_CALL_STATE`] when `mapper` keeps tool call id state (rule 5), else 0.
fn holds_state(mapper: &span::Mapper) -> u32 {
    if mapper.holds_tool_calls() {
        TOOL_CALL_STATE
    } else {
        0
    }
}

/// Whether a text read with its units kept was narrowed: one byte a unit in its buffer (a
/// transcoded one that kept them is not ASCII, so longer in UTF-8).
fn is_narrowed(units: &[u16], buf: &str) -> bool {
    !units.is_empty() && buf.len() == units.len()
}

/// What [`write_mapped`] needs of a span's two reads (`genkit:input`, `genkit:output`).
struct Reads<'s> {
    /// The texts as the mapping gets them (`None`: not a string, or its getter threw).
    texts: [Option<&'s str>; 2],
    /// The `genkit:input` getter threw: no input messages are written.
    input_threw: bool,
    /// Problem flags of the reads.
    threw: u32,
    /// Per argument: whether it was read as it is, its text as read, and the JavaScript value
    /// itself. A value that is all of one (a tool's arguments, a JSON result as written) is
    /// written as that value, which the sink names as the call's argument (no string made).
    exact: [(bool, &'s str, sys::napi_value); 2],
    /// The texts with their kept code units: what the message writers copied from.
    sources: [copies::Source<'s>; 2],
}

impl<'s> Reads<'s> {
    fn of(
        got: [&Got; 2],
        bufs: [&'s String; 2],
        units: [&'s Vec<u16>; 2],
        arguments: [sys::napi_value; 2],
    ) -> Reads<'s> {
        let has = |g: &Got| matches!(g, Got::Str | Got::Lossy);
        let texts = [0, 1].map(|i| has(got[i]).then_some(bufs[i].as_str()));
        let mut threw = 0;
        if matches!(got[0], Got::Threw) {
            threw |= problem::ATTRIBUTE_TYPE | problem::INPUT_NOT_JSON;
        }
        if matches!(got[1], Got::Threw) {
            threw |= problem::ATTRIBUTE_TYPE | problem::OUTPUT_NOT_JSON;
        }
        Reads {
            texts,
            input_threw: matches!(got[0], Got::Threw),
            threw,
            exact: [0, 1].map(|i| (matches!(got[i], Got::Str), bufs[i].as_str(), arguments[i])),
            sources: copies::Source::pair(texts[0], texts[1], units[0], units[1]),
        }
    }
}

/// How many bytes the code units behind `copy`, a piece copied from a narrowed source, take in
/// UTF-8 beyond one each (core `Mapper::map_narrowed`'s `utf8_extra`, for the cap): 1 for a
/// unit from U+0080 to U+07FF and for each half of a surrogate pair (4 bytes for 2 units), 2 for
/// the others above U+07FF, 0 for ASCII (simdutf's UTF-8 length, less the units). 0 for a copy
/// from a source that was not narrowed (its bytes are its UTF-8); `None` for a copy in no source
/// or one that cuts a surrogate pair.
fn utf8_extra(
    copy: &genkit_for_maple_core::out::Copied,
    sources: &[copies::Source<'_>; 2],
) -> Option<usize> {
    for source in sources {
        let Some(range) = source.range_of(copy) else {
            continue;
        };
        if !is_narrowed(source.units, source.utf8) {
            return Some(0);
        }
        let units = source.units.get(range)?;
        // A piece that cuts a surrogate pair (none does: copies are whole runs of a string's
        // characters) is not counted: simdutf's count is defined for well-formed UTF-16 only.
        let low = |u: &u16| (0xDC00..=0xDFFF).contains(u);
        let high = |u: &u16| (0xD800..=0xDBFF).contains(u);
        if units.first().is_some_and(low) || units.last().is_some_and(high) {
            return None;
        }
        return simdutf::utf8_length_from_utf16(units).checked_sub(units.len());
    }
    None
}

/// The message attributes of a narrowed mapping that hold the placeholder, rebuilt in UTF-16 from
/// their recorded copies' code units ([`narrow::rebuild`]); `None` when one cannot be (a
/// placeholder outside the copies, no memory): core `Mapper::map_narrowed` then declines.
fn rebuild_messages(
    mapped: &span::Mapped<'_>,
    sources: &[copies::Source<'_>; 2],
) -> Option<Vec<(&'static str, Vec<u16>)>> {
    let mut built = Vec::new();
    for (key, value) in &mapped.attributes {
        let Value::Str(text) = value else { continue };
        if !genkit_for_maple_core::content::is_content(key)
            || memchr::memchr(utf::PLACEHOLDER, text.as_bytes()).is_none()
        {
            continue;
        }
        let copies = mapped
            .copies
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&[][..], |(_, c)| c.as_slice());
        let units = narrow::rebuild(text, copies, sources)?;
        built.try_reserve(1).ok()?;
        built.push((*key, units));
    }
    Some(built)
}

/// Writes the attributes of one mapped span (`built`: message attributes already made in UTF-16,
/// written in place of their narrowed text) and returns the problem flags.
fn write_mapped(
    call: &Call,
    mut mapped: span::Mapped<'_>,
    mut built: Vec<(&'static str, Vec<u16>)>,
    holds: u32,
    w: &Reads<'_>,
) -> u32 {
    if w.input_threw {
        // Absent-and-broken, as the reference path treats it: no input messages.
        mapped
            .attributes
            .retain(|(k, _)| *k != "gen_ai.input.messages" && *k != "gen_ai.system_instructions");
    }
    if mapped.problems & problem::NEEDS_JS != 0
        || mapped.attributes.iter().any(|(_, v)| has_json(v))
    {
        return mapped.problems | problem::NEEDS_JS | holds;
    }
    let mut problems = mapped.problems | w.threw | holds;
    let mut recorded = std::mem::take(&mut mapped.copies);
    for (key, value) in mapped.attributes {
        if let Some(i) = built.iter().position(|(k, _)| *k == key) {
            let units = built.swap_remove(i).1;
            let made = call.units_string(units).unwrap_or(ptr::null_mut());
            if !set(call, key, made) {
                problems |= problem::ATTRIBUTE_TYPE;
            }
            continue;
        }
        // Numbers and booleans go into the sink as they are (no JavaScript value).
        if let (Some(sink), Some((kind, number))) = (&call.sink, sink_scalar(&value)) {
            if sink.put(key.as_bytes(), kind, number, ptr::null_mut()) {
                continue;
            }
        }
        // A one-element list of a short ASCII string (stop sequences, a finish reason
        // outside the sink's table): a range of the sink's text, made a list by the
        // wrapper.
        if let Value::Array(items) = &value {
            if let [Value::Str(text)] = items.as_slice() {
                if call.put_text_list(key.as_bytes(), text) {
                    continue;
                }
            }
        }
        if let Value::Str(text) = &value {
            let whole = w.exact.iter().find(|(read, buf, _)| {
                *read && buf.len() == text.len() && ptr::eq(buf.as_ptr(), text.as_ptr())
            });
            if let Some((_, _, raw)) = whole {
                if set(call, key, *raw) {
                    continue;
                }
            }
            // Short ASCII strings as ranges of the sink's one text (no string made for
            // each).
            if call.put_text(key.as_bytes(), text) {
                continue;
            }
        }
        // An owned string may become an external string (no copy into V8's heap).
        let made = match value {
            Value::Str(Cow::Owned(text)) => {
                let copied = match recorded.iter().position(|(k, _)| *k == key) {
                    Some(i) => recorded.swap_remove(i).1,
                    None => Vec::new(),
                };
                let pieces = copies::Pieces {
                    copies: &copied,
                    sources: &w.sources,
                };
                call.string_owned(text, pieces).unwrap_or(ptr::null_mut())
            }
            other => js_value(call, &other),
        };
        if !set(call, key, made) {
            problems |= problem::ATTRIBUTE_TYPE;
        }
    }
    problems
}

/// An HrTime's nanoseconds since the Unix epoch (as the OTLP encoding writes it); `None` unless both
/// parts are finite numbers >= 0.
fn end_time(seconds: Option<f64>, nanos: Option<f64>) -> Option<u64> {
    match (seconds, nanos) {
        (Some(s), Some(n)) if s.is_finite() && n.is_finite() && s >= 0.0 && n >= 0.0 => {
            Some(genkit_for_maple_core::encode::hr_time_nanos(s, n))
        }
        _ => None,
    }
}

/// `errorType(exceptionType, exceptionStacktrace)`: `error.type` of a failed span from its
/// exception event (rule 4; core `span::error_type`): the error name its stack trace starts with,
/// else `exceptionType`, else `_OTHER`, made a JavaScript string; null when it cannot be made. Only
/// the head of `exceptionStacktrace` is read (`span::stack_head`: at most its first 256 code units,
/// all the rule needs); a value of another type than a string counts as not given. A plain
/// Node-API callback (`src/raw.rs`: napi-rs's call path cost a failed flow span most of its
/// mapping).
pub(crate) fn error_type(env: sys::napi_env, exception: [sys::napi_value; 2]) -> sys::napi_value {
    with_error_name(env, exception, |name| {
        let mut out = ptr::null_mut();
        // SAFETY: live `env` of the current call; `name` is valid UTF-8 of `name.len()` bytes;
        // valid out-pointer. On failure `out` stays null, which the callback answers as
        // `undefined`.
        unsafe {
            sys::napi_create_string_utf8(env, name.as_ptr().cast(), name.len() as isize, &mut out)
        };
        out
    })
}
