//! The napi boundary of genkit-for-maple, and nothing else: take the `genkit:*` strings the
//! JavaScript wrapper read from a span's attribute map, call the plain-Rust core
//! ([`genkit_for_maple_core`]), write the `gen_ai.*` attributes into the attribute map.
//!
//! # Panics never reach JavaScript
//! A panic unwinding into V8 aborts the user's process. Every exported function runs its Rust work
//! inside [`std::panic::catch_unwind`] (the release profile keeps `panic = "unwind"` so that
//! catching works) and turns a panic into the [`problem::PANIC`] flag; the JavaScript wrapper then
//! maps the span with its pure-JS mapping, and reports the panic's message (kept by the panic hook,
//! [`take_panic_message`]) through diag. Core code does not index out of bounds or unwrap on
//! input-dependent data; the guard is for bugs, not a control path.
//!
//! # Memory never aborts
//! An allocation failure in Rust aborts the process (`handle_alloc_error`), which `catch_unwind`
//! cannot catch. Every allocation whose size comes from the input is fallible (`try_reserve`):
//! a failure returns [`OUT_OF_MEMORY`] and the span is mapped by the pure-JS path. A string longer
//! than [`HANDOFF_UNITS`] UTF-16 code units is not copied into Rust at all: the span goes to the
//! pure-JS path ([`problem::NEEDS_JS`]), whose peak extra memory for such a span is about one copy
//! of the attribute (README, "Robustness").
//!
//! # Strings across the boundary
//! Inputs are read as UTF-16 with `napi_get_value_string_utf16` into a per-thread buffer that is
//! reused from call to call (each `worker_threads` worker has its own) and transcoded to UTF-8 with
//! simdutf, validated and converted in one pass into a reused buffer of the worst-case size (3
//! bytes a unit of address space; the exact UTF-8 length if that cannot be had) ([`utf`]); strings of at least [`LATIN1_UNITS`]
//! units that are ASCII (a UTF-8 write of as many bytes as units is all ASCII) are read straight
//! into the UTF-8 buffer, without the UTF-16 copy. Outputs are created as Latin-1 when they are ASCII
//! (V8 copies the bytes as they are) and as UTF-16 otherwise, which spares V8 a UTF-8 decode
//! (BENCHMARKS.md). From 128 KiB of characters, where the runtime has them, an output the mapping
//! owns is made an external string instead (`src/external.rs`): V8 keeps the mapping's own buffer
//! (ASCII) or one UTF-16 buffer made for it, rather than copying it into its large-object space.
//!
//! Outputs that are a range of an input are not copied at all (issue 13): a tool result that is
//! the text of a JSON string without escapes, or a JSON value as written, is created as a slice
//! of `genkit:output` (`src/slice.rs`); a long tool result string without escapes is checked in
//! chunks and never copied into Rust; a long model attribute is read in chunks with its long
//! text literals left out, and those texts are written back as slices joined into a rope
//! (`src/hollow.rs`).
//!
//! # Every napi status is checked
//! A napi call that fails (a setter or Proxy trap that throws, a string longer than V8 allows)
//! leaves an exception pending; it is cleared at once, so no later napi call runs with an
//! exception pending, and the attribute it was writing is reported as [`WRITE_FAILED`].

#![deny(clippy::undocumented_unsafe_blocks)]

#[macro_use]
extern crate napi_derive;

use genkit_for_maple_core::out::{Recording, MIN_COPIED};
use genkit_for_maple_core::{
    map_model_recorded, map_tool_result, otlp, problem, ModelAttributes, Scalar, ToolResult,
};
use napi::bindgen_prelude::Buffer;
use napi::sys;
use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::ops::RangeInclusive;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

pub mod content;
mod copies;
pub mod export;
mod external;
pub mod flat;
pub mod fused;
mod hollow;
mod narrow;
pub mod raw;
pub mod seam;
pub mod sink;
mod slice;
mod utf;

/// The lengths for which no string is narrowed ([`Call::read_string_keeping`]): none but the
/// empty string's, which is the same narrowed or not.
const NEVER_NARROW: RangeInclusive<usize> = 0..=0;

/// What a failed allocation returns: [`problem::OUT_OF_MEMORY`], always with
/// [`problem::NEEDS_JS`] (the span is mapped by the pure-JS path).
const OUT_OF_MEMORY: u32 = problem::OUT_OF_MEMORY | problem::NEEDS_JS;
/// [`problem::WRITE_FAILED`]: an attribute could not be written.
const WRITE_FAILED: u32 = problem::WRITE_FAILED;

/// Strings longer than this (UTF-16 code units: 16 Mi, 32 MiB in V8's two-byte form, 16 MiB of
/// ASCII) are handed to the pure-JS path instead of being copied into Rust: where the native
/// path copies an attribute (a UTF-8 copy of the input and the output JSON besides the V8 output
/// string) its peak extra memory is 2-3.5x the pure-JS path's, so above this size the span goes to
/// JavaScript. Values that need no copy are not bound by it: a tool result that is one JSON
/// string without escapes, and a model span whose long texts are referenced as slices
/// (`src/slice.rs`, `src/hollow.rs`; `node bench/memory.js`, README "Robustness").
pub const HANDOFF_UNITS: usize = 16 << 20;

/// From this length on (UTF-16 code units), an ASCII string is read straight into the UTF-8
/// buffer by one UTF-8 write (checked to be `len` ASCII bytes: [`Call::read_ascii`]), sparing the UTF-16
/// copy (2 bytes per unit). Below it the extra length pass costs more than the copy it spares.
pub const LATIN1_UNITS: usize = 64 << 10;

/// From this many UTF-16 code units in `genkit:input` and `genkit:output` together (when one of
/// them is not ASCII), complete mode's writers record the pieces they copy and the outputs take
/// those pieces' code units from the inputs (`src/copies.rs`). Below it recording and checking the
/// pieces cost more than the transcoding they spare: callgrind, complete mode, synthetic
/// multi-byte model spans, instructions a span: 1 KB 101.2k with the pieces recorded, 97.9k
/// without; 10 KB 545k either way; 100 KB 3.48M with them, 4.17M transcoded (BENCHMARKS.md
/// "Stop 28").
pub const COPIES_MIN_UNITS: usize = 32 << 10;

/// Strings shorter than this less one (UTF-16 code units) are read by [`Call::read_string`] in
/// one napi call into a stack buffer of this size.
const SHORT_UNITS: usize = 256;

/// How many leading code units [`Call::read_string`] looks at before it asks V8 whether a long
/// string is ASCII (a whole-string walk): most multi-byte texts show a wider unit by then.
const PROBE_UNITS: usize = 2048;

/// Buffers larger than this are freed after the call instead of kept for the next span, so one
/// huge span does not pin its memory for the life of the thread.
const KEEP_BYTES: usize = 16 << 20;

/// The napi property attributes of an array element written by `napi_define_properties`:
/// writable, enumerable, configurable (an ordinary data property, as an array literal makes).
const DATA_PROPERTY: sys::napi_property_attributes = 1 | 2 | 4;

thread_local! {
    /// Reused input buffers, one per input attribute, so a span costs no allocation for its input.
    /// Taken out of the cell for the duration of a call (never borrowed across a call into
    /// JavaScript: a setter on the attribute map may re-enter `onEnd`, and then finds the cell
    /// empty and works with fresh buffers).
    static BUFFERS: RefCell<(String, String)> = const { RefCell::new((String::new(), String::new())) };
    /// Reused UTF-16 buffer: strings read from V8, and non-ASCII output strings. Borrowed only
    /// around napi calls that cannot run JavaScript (string reads and string creation).
    static UTF16: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
    /// Reused UTF-16 copies of a model span's `genkit:input` and `genkit:output`, kept while the
    /// span is mapped so that its outputs can take their code units (`src/copies.rs`); taken out
    /// of the cell for the duration of a call, as [`BUFFERS`].
    static KEPT: RefCell<(Vec<u16>, Vec<u16>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// The message of the last panic on this thread, kept by the panic hook for the diag report.
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Spare buffers for output strings built in UTF-16 ([`spare_units`]): given back by
    /// [`Call::units_string`] once V8 has copied them, so that a span's outputs reuse the last
    /// span's memory instead of allocating and freeing it (Stop 45, BENCHMARKS.md). Not
    /// [`UTF16`]: a narrowed span rebuilds all its outputs (up to three) before writing any.
    static SPARE_UNITS: RefCell<Vec<Vec<u16>>> = const { RefCell::new(Vec::new()) };
}

/// At most this many spare output buffers are kept a thread (a span writes up to three UTF-16
/// outputs before any is created in V8).
const SPARE_COUNT: usize = 3;

/// Spare output buffers of more code units than this are not kept (64 KiB each, so at most
/// 192 KiB a thread). Outputs from 64 Ki units are external strings where the runtime has them
/// (V8 owns their buffer); those between 32 Ki and 64 Ki units are copied and their buffer freed.
const SPARE_MAX_UNITS: usize = 32 << 10;

/// An empty buffer for an output's code units: a spare one when the thread has one (with its
/// capacity), else a new one (no allocation yet).
pub(crate) fn spare_units() -> Vec<u16> {
    SPARE_UNITS
        .try_with(|spare| spare.try_borrow_mut().ok().and_then(|mut s| s.pop()))
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps `units` as a spare output buffer ([`spare_units`]) when it is not too large and the
/// thread has room for it; otherwise it is freed.
fn give_back_units(mut units: Vec<u16>) {
    if units.capacity() == 0 || units.capacity() > SPARE_MAX_UNITS {
        return;
    }
    units.clear();
    let _ = SPARE_UNITS.try_with(|spare| {
        if let Ok(mut spare) = spare.try_borrow_mut() {
            if spare.len() < SPARE_COUNT && spare.try_reserve(1).is_ok() {
                spare.push(units);
            }
        }
    });
}

/// What [`Call::read_string`] found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Read {
    /// A string, now in the buffer as UTF-8.
    Str,
    /// Not a string (or napi failed).
    Absent,
    /// A string with a lone surrogate.
    NotWellFormed,
    /// A string longer than [`HANDOFF_UNITS`]: not copied, the span goes to the pure-JS path.
    TooLarge,
    /// The buffer for the string could not be allocated.
    OutOfMemory,
}

impl Read {
    /// The flags that send the whole span to the pure-JS path, if this read calls for it.
    fn hand_off(self) -> Option<u32> {
        match self {
            Read::NotWellFormed | Read::TooLarge => Some(problem::NEEDS_JS),
            Read::OutOfMemory => Some(OUT_OF_MEMORY),
            Read::Str | Read::Absent => None,
        }
    }
}

/// Raw napi handles of one call. All methods are only called during the `#[napi]` call that
/// created them, on the JavaScript thread that owns `env`.
struct Call {
    env: sys::napi_env,
    object: sys::napi_value,
    /// Where the attributes go when the wrapper gave a sink (`src/sink.rs`): recorded for its
    /// named stores; without one (or once it is full) they are set on `object`.
    sink: Option<sink::Sink>,
}

impl Call {
    /// `true` when `status` is `napi_ok`; otherwise clears the exception the failed call may have
    /// left pending (so that no later napi call runs with one) and returns `false`.
    fn ok(&self, status: sys::napi_status) -> bool {
        if status == sys::Status::napi_ok {
            return true;
        }
        self.clear_exception();
        false
    }

    /// Clears a pending JavaScript exception (thrown by a setter or Proxy trap of a user-made
    /// attribute map, say); its value is dropped: the caller reports the problem kind through
    /// diag, and the later napi calls of this call work again.
    fn clear_exception(&self) {
        let mut pending = false;
        // SAFETY: live `env` (see `Call`), valid out-pointer.
        let status = unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if status == sys::Status::napi_ok && !pending {
            return;
        }
        let mut error = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer; a no-op when no exception is pending.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
    }

    /// The length of `value` in UTF-16 code units when it is a string (napi's length-only read:
    /// V8 knows it without reading the string), `None` otherwise.
    fn string_length(&self, value: sys::napi_value) -> Option<usize> {
        let mut len = 0usize;
        // SAFETY: live handles of the current call; a null buffer asks for the length only; a
        // value that is not a string is `napi_string_expected` (no exception).
        let status = unsafe {
            sys::napi_get_value_string_utf16(self.env, value, ptr::null_mut(), 0, &mut len)
        };
        (status == sys::Status::napi_ok).then_some(len)
    }

    /// The Latin-1 screen of string `value` when it fits `buf` with a byte to spare: each code
    /// unit cut to its low byte (`napi_get_value_string_latin1`, no transcoding), in `buf`, for
    /// [`Content::leaves_each_as_is`](genkit_for_maple_core::content::Content::leaves_each_as_is). Its
    /// length, or `None` for another type, a longer string or an error.
    /// The bytes `buf[..n]` are initialised when it answers `Some(n)` (napi's `result`: the
    /// bytes copied), and `n + 1 < buf.len()`.
    fn screen(&self, value: sys::napi_value, buf: &mut [MaybeUninit<u8>]) -> Option<usize> {
        let mut written = 0usize;
        // SAFETY: live handles of the current call; `buf` is valid for `buf.len()` bytes
        // (`MaybeUninit<u8>` has `u8`'s layout), napi writes at most that many (NUL included) and
        // reports the count without the NUL in `written`. A value that is not a string makes napi
        // return `napi_string_expected` (no exception).
        let status = unsafe {
            sys::napi_get_value_string_latin1(
                self.env,
                value,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        };
        // A full buffer may be a cut string: only a shorter one is all of it.
        (self.ok(status) && written + 1 < buf.len()).then_some(written)
    }

    /// Reads `value` into `buf` as UTF-8 when it is a string. Leaves `buf` empty and returns
    /// [`Read::Absent`] for any other type or if napi reports an error, [`Read::TooLarge`] (nothing
    /// copied) above [`HANDOFF_UNITS`], [`Read::NotWellFormed`] when the string holds a lone
    /// surrogate (UTF-8 cannot carry it), [`Read::OutOfMemory`] when a buffer cannot be allocated.
    /// A string shorter than [`SHORT_UNITS`] - 1 units is copied into the stack in the same napi
    /// call that checks its type. `buf` (reused) is reserved to 3 bytes a unit (one pass: [`utf::utf16_to_utf8_in_one_pass`];
    /// to the exact UTF-8 length when that cannot be had); the UTF-16 copy, when one is needed, is freed
    /// right after the transcoding when it is larger than [`KEEP_BYTES`].
    fn read_string(&self, value: sys::napi_value, buf: &mut String) -> Read {
        self.read_string_into(value, buf, None, &NEVER_NARROW)
    }

    /// [`Self::read_string`], keeping the string's UTF-16 code units in `keep` when it is not
    /// ASCII (empty otherwise, or when they could not be kept: a failed reservation only costs
    /// the copies' speed, `src/copies.rs`). `keep` is reused from span to span and is read into
    /// directly, in place of the per-thread UTF-16 buffer.
    ///
    /// A string whose length in code units is in `narrow` ([`NEVER_NARROW`]: none) is narrowed
    /// into `buf` ([`utf::narrow`]: one byte a code unit, [`utf::PLACEHOLDER`] for those above
    /// 0x7F) instead of transcoded, ASCII or not (an ASCII text gives the same bytes either way);
    /// a non-ASCII one keeps its units whatever their number (they are then the only copy of its
    /// text).
    fn read_string_keeping(
        &self,
        value: sys::napi_value,
        buf: &mut String,
        keep: &mut Vec<u16>,
        narrow: &RangeInclusive<usize>,
    ) -> Read {
        keep.clear();
        let read = self.read_string_into(value, buf, Some(&mut *keep), narrow);
        // ASCII, nothing to keep: no unit above 0x7F (transcoded: as many UTF-8 bytes as units;
        // narrowed: no placeholder byte, or only DEL itself where there is one).
        let ascii = if narrow.contains(&keep.len()) {
            memchr::memchr(utf::PLACEHOLDER, buf.as_bytes()).is_none() || utf::is_ascii_units(keep)
        } else {
            buf.len() == keep.len()
        };
        if read != Read::Str || ascii {
            keep.clear();
        }
        read
    }

    fn read_string_into(
        &self,
        value: sys::napi_value,
        buf: &mut String,
        keep: Option<&mut Vec<u16>>,
        narrow: &RangeInclusive<usize>,
    ) -> Read {
        buf.clear();
        // A short string (most tool arguments and results, every id and name) in one napi call
        // into the stack: its length query and the per-thread buffer cost more than its copy.
        // Not zeroed (512 bytes a call): napi initialises what is read of it.
        let mut short = [MaybeUninit::<u16>::uninit(); SHORT_UNITS];
        let mut written = 0usize;
        // SAFETY: live handles of the current call; `short` is valid for `SHORT_UNITS` code
        // units (`MaybeUninit<u16>` has `u16`'s layout), napi writes at most that many (NUL
        // included) and reports the count without the NUL in `written`. A value that is not a
        // string makes napi return `napi_string_expected` (no exception), which is the type check.
        let status = unsafe {
            sys::napi_get_value_string_utf16(
                self.env,
                value,
                short.as_mut_ptr().cast(),
                SHORT_UNITS,
                &mut written,
            )
        };
        if !self.ok(status) {
            return Read::Absent;
        }
        // Fewer units than the room without the NUL: the whole string.
        if written < SHORT_UNITS - 1 {
            let Some(copied) = short.get(..written) else {
                return Read::Absent; // not reached: `written < SHORT_UNITS`
            };
            // SAFETY: napi answered `napi_ok`, so it copied `written` code units into
            // `short[..written]` (Node-API: `result` is the number of units copied into the
            // buffer, the NUL excluded); `copied` is that range, bounds-checked above.
            let units: &[u16] = unsafe { copied.assume_init_ref() };
            if let Some(keep) = keep {
                if keep.try_reserve_exact(units.len()).is_err() {
                    // Narrowed, the units are the text: without them, transcode.
                    return self.convert(units, buf, false);
                }
                keep.extend_from_slice(units);
                return self.convert(units, buf, narrow.contains(&units.len()));
            }
            return match utf::utf16_to_utf8_in_one_pass(units, buf) {
                Ok(()) => Read::Str,
                Err(utf::Utf::NotWellFormed) => Read::NotWellFormed,
                Err(utf::Utf::OutOfMemory) => Read::OutOfMemory,
            };
        }
        let mut len = 0usize;
        // SAFETY: live handles of the current call; a null buffer asks napi for the length in
        // UTF-16 code units only (documented N-API behaviour; V8 knows it without reading the
        // string). A value that is not a string makes napi return `napi_string_expected` (no
        // exception), which is the type check.
        let status = unsafe {
            sys::napi_get_value_string_utf16(self.env, value, ptr::null_mut(), 0, &mut len)
        };
        if !self.ok(status) {
            return Read::Absent;
        }
        if len > HANDOFF_UNITS {
            return Read::TooLarge;
        }
        if len >= LATIN1_UNITS {
            match self.read_ascii(value, len, buf) {
                Some(read) => return read,
                None => buf.clear(),
            }
        }
        match keep {
            Some(units) => self.read_units(value, len, units, buf, narrow.contains(&len)),
            None => UTF16.with_borrow_mut(|units| {
                let read = self.read_units(value, len, units, buf, false);
                // Consumed: a big UTF-16 copy is freed now, not after the mapping.
                if units.capacity() * 2 > KEEP_BYTES {
                    *units = Vec::new();
                }
                read
            }),
        }
    }

    /// Reads the string `value` of `len` code units into `units` (cleared first, reserved
    /// fallibly) and transcodes it into `buf` (one pass), or narrows it ([`Self::convert`]).
    fn read_units(
        &self,
        value: sys::napi_value,
        len: usize,
        units: &mut Vec<u16>,
        buf: &mut String,
        narrow: bool,
    ) -> Read {
        units.clear();
        if units.try_reserve_exact(len + 1).is_err() {
            return Read::OutOfMemory;
        }
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
        if !self.ok(status) {
            return Read::Absent;
        }
        // SAFETY: napi initialised `written` code units; `min(len)` keeps it within capacity.
        unsafe { units.set_len(written.min(len)) };
        self.convert(units, buf, narrow)
    }

    /// `units` into `buf`: transcoded to UTF-8 (one pass), or with `narrow`, narrowed
    /// ([`utf::narrow`]). An ASCII text is the same either way, so it is narrowed too: one SIMD
    /// pass that checks and packs, where an ASCII check and then simdutf's transcoding read the
    /// units twice (BENCHMARKS.md "Stop 37").
    fn convert(&self, units: &[u16], buf: &mut String, narrow: bool) -> Read {
        let converted = if narrow {
            utf::narrow(units, buf)
        } else {
            utf::utf16_to_utf8_in_one_pass(units, buf)
        };
        match converted {
            Ok(()) => Read::Str,
            Err(utf::Utf::NotWellFormed) => Read::NotWellFormed,
            Err(utf::Utf::OutOfMemory) => Read::OutOfMemory,
        }
    }

    /// The read of an ASCII string of `len` units straight into `buf`; `None` when the
    /// string is not ASCII (the caller reads it as UTF-16).
    fn read_ascii(&self, value: sys::napi_value, len: usize, buf: &mut String) -> Option<Read> {
        // A unit above 0x7F among the first ones settles it without a UTF-8 write of the whole
        // string, which V8 does one unit at a time (its length pass was 21% of a 1 MB multi-byte
        // model span's time).
        let mut probe = [0u16; PROBE_UNITS + 1];
        let mut got = 0usize;
        // SAFETY: `probe` is valid for `PROBE_UNITS + 1` code units; napi writes at most that many
        // (NUL included) and reports the count without the NUL in `got`.
        let status = unsafe {
            sys::napi_get_value_string_utf16(
                self.env,
                value,
                probe.as_mut_ptr(),
                probe.len(),
                &mut got,
            )
        };
        if !self.ok(status) || probe[..got.min(PROBE_UNITS)].iter().any(|&u| u > 0x7f) {
            return None;
        }
        // One UTF-8 write of at most `len` bytes tells an ASCII string: it fills all `len` bytes
        // with ASCII only when every one of the `len` units is ASCII (a wider character takes 2-4
        // bytes and a lone surrogate becomes U+FFFD's 3, so either shows as a non-ASCII byte or
        // stops the write short of `len`). Faster than V8's UTF-8 length, a walk of its own, and
        // the Latin-1 copy after it (1 MB: 70 against 107 + 25 us, BENCHMARKS.md "Stop 28").
        if buf.try_reserve_exact(len + 1).is_err() {
            return Some(Read::OutOfMemory);
        }
        let mut written = 0usize;
        // SAFETY: the vector is written only by napi below, then checked to be ASCII before its
        // length is set, so the `String` invariant (valid UTF-8) holds.
        let bytes = unsafe { buf.as_mut_vec() };
        // SAFETY: `bytes` has capacity for `len + 1` bytes; napi writes at most `bufsize - 1 = len`
        // bytes and a NUL, and reports the count, excluding the NUL, in `written`.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                value,
                bytes.as_mut_ptr().cast(),
                len + 1,
                &mut written,
            )
        };
        if !self.ok(status) {
            return Some(Read::Absent);
        }
        if written != len {
            return None;
        }
        // SAFETY: napi initialised `written = len < capacity` bytes.
        let ascii =
            simdutf::validate_ascii(unsafe { std::slice::from_raw_parts(bytes.as_ptr(), written) });
        if !ascii {
            return None;
        }
        // SAFETY: the first `written` bytes are initialised ASCII, valid UTF-8.
        unsafe { bytes.set_len(written) };
        Some(Read::Str)
    }

    /// Sets property `key` of the attribute map; [`WRITE_FAILED`] when napi refused (a setter or
    /// Proxy trap that threw, a frozen object): the exception is cleared, so the other attributes
    /// are still written.
    fn set(&self, key: &CStr, value: sys::napi_value) -> Result<(), u32> {
        if let Some(sink) = &self.sink {
            if sink.put(key.to_bytes(), sink::VALUE, 0.0, value) {
                return Ok(());
            }
        }
        self.set_on_object(key, value)
    }

    /// Hands the sink's entries to the wrapper (`sink::Sink::finish`); called once, as the napi
    /// call returns. Returns the flags of the writes made here instead, if any.
    fn finish_sink(&self) -> u32 {
        let Some(sink) = &self.sink else {
            return 0;
        };
        // Outside `catch_unwind` of the entry: a panic here is caught too.
        catch_unwind(AssertUnwindSafe(|| {
            sink.finish(self.object, |key, value| {
                if seam::set_on_object(self, key, value) {
                    0
                } else {
                    WRITE_FAILED
                }
            })
        }))
        .unwrap_or(problem::PANIC)
    }

    /// Sets property `key` of the attribute map itself (`napi_set_named_property`), sink or not.
    fn set_on_object(&self, key: &CStr, value: sys::napi_value) -> Result<(), u32> {
        // SAFETY: live handles of the current call; `key` is NUL-terminated; `value` was created by
        // napi in this `env`.
        let status =
            unsafe { sys::napi_set_named_property(self.env, self.object, key.as_ptr(), value) };
        if self.ok(status) {
            Ok(())
        } else {
            Err(WRITE_FAILED)
        }
    }

    /// Sets a string property; returns the problem flags (`0` when written). A string of the
    /// sink's table goes in by its index ([`sink::CONSTANT`]), a short ASCII one as a range of
    /// the sink's one text ([`sink::SLICE`]): no JavaScript string made for either.
    fn set_string(&self, key: &CStr, text: &str) -> u32 {
        if self.put_constant(key, text, sink::CONSTANT) || self.put_text(key.to_bytes(), text) {
            return 0;
        }
        match self.string(text).and_then(|value| self.set(key, value)) {
            Ok(()) => 0,
            Err(flag) => flag,
        }
    }

    /// [`Self::set_string`] for a text the caller owns: from [`external::EXTERNAL_BYTES`] on,
    /// made an external string where the runtime has them ([`Self::string_owned`]).
    fn set_string_owned(&self, key: &CStr, text: String, pieces: copies::Pieces<'_>) -> u32 {
        // Short and nothing to take from the inputs' code units: as any string (a short ASCII
        // one goes into the sink as a range of its text).
        if text.len() < external::EXTERNAL_BYTES / 2 && (!pieces.any() || utf::is_ascii(&text)) {
            return self.set_string(key, &text);
        }
        match self
            .string_owned(text, pieces)
            .and_then(|value| self.set(key, value))
        {
            Ok(()) => 0,
            Err(flag) => flag,
        }
    }

    /// Sets a property to a scalar: a number or boolean goes into the sink without a JavaScript
    /// value being made; returns the problem flags (`0` when written).
    fn set_scalar(&self, key: &CStr, value: &Scalar<'_>) -> u32 {
        if let Some(sink) = &self.sink {
            let (kind, number) = match value {
                Scalar::Num(n) => (sink::NUMBER, *n),
                Scalar::Bool(true) => (sink::TRUE, 0.0),
                Scalar::Bool(false) => (sink::FALSE, 0.0),
                _ => (sink::VALUE, 0.0),
            };
            if kind != sink::VALUE && sink.put(key.to_bytes(), kind, number, ptr::null_mut()) {
                return 0;
            }
        }
        if let Scalar::Str(text) = value {
            if self.put_text(key.to_bytes(), text) {
                return 0;
            }
        }
        self.set_with(key, || self.scalar(value))
    }

    /// Records `key` = the string `text` as a range of the sink's one text ([`sink::SLICE`]);
    /// `false` when there is no sink or it does not take it (not ASCII, too long, no room: the
    /// caller then makes the string).
    fn put_text(&self, key: &[u8], text: &str) -> bool {
        self.sink
            .as_ref()
            .is_some_and(|sink| sink.put_slice(key, text, false))
    }

    /// Records `key` = a one-element list of the string `text` ([`sink::SLICE_LIST`]); `false`
    /// as [`Self::put_text`].
    fn put_text_list(&self, key: &[u8], text: &str) -> bool {
        self.sink
            .as_ref()
            .is_some_and(|sink| sink.put_slice(key, text, true))
    }

    /// Records `key` = the sink's constant `text` (`kind`: [`sink::CONSTANT`] or
    /// [`sink::CONSTANT_LIST`]); `false` when there is no sink, `text` is not in its table or the
    /// sink is full (the caller then writes the value itself).
    fn put_constant(&self, key: &CStr, text: &str, kind: u32) -> bool {
        match (&self.sink, sink::constant(text)) {
            (Some(sink), Some(index)) => {
                sink.put(key.to_bytes(), kind, f64::from(index), ptr::null_mut())
            }
            _ => false,
        }
    }

    /// Sets a property to an array of scalars ([`Self::array`]); a single string of the sink's
    /// table (a finish reason) goes in by its index ([`sink::CONSTANT_LIST`]), another short
    /// ASCII one as a range of the sink's text ([`sink::SLICE_LIST`]). Returns the problem
    /// flags (`0` when written).
    fn set_list(&self, key: &CStr, values: &[Scalar<'_>]) -> u32 {
        if let [Scalar::Str(text)] = values {
            if self.put_constant(key, text, sink::CONSTANT_LIST)
                || self.put_text_list(key.to_bytes(), text)
            {
                return 0;
            }
        }
        self.set_with(key, || self.array(values))
    }

    /// Sets a property to a value made by `make`; returns the problem flags (`0` when written).
    fn set_with(&self, key: &CStr, make: impl FnOnce() -> Result<sys::napi_value, u32>) -> u32 {
        match make().and_then(|value| self.set(key, value)) {
            Ok(()) => 0,
            Err(flag) => flag,
        }
    }

    /// Creates a JavaScript string: Latin-1 when ASCII, UTF-16 otherwise (its reused buffer
    /// reserved fallibly, [`OUT_OF_MEMORY`]: one unit a byte, [`utf::utf8_to_utf16_in_one_pass`],
    /// or exactly when that cannot be had). [`WRITE_FAILED`] when V8 refuses (a string
    /// longer than its maximum length).
    fn string(&self, text: &str) -> Result<sys::napi_value, u32> {
        if utf::is_ascii(text) {
            // ASCII is valid Latin-1.
            return self.create_latin1(text.as_bytes());
        }
        UTF16.with_borrow_mut(|units| {
            if utf::utf8_to_utf16_in_one_pass(text, units).is_err() {
                return Err(OUT_OF_MEMORY);
            }
            let made = self.create_utf16(units);
            if units.capacity() * 2 > KEEP_BYTES {
                *units = Vec::new();
            }
            made
        })
    }

    /// [`Self::string`] for a text the caller owns. From [`external::EXTERNAL_BYTES`] on, where
    /// the runtime has external strings (`src/external.rs`), V8 does not copy it: ASCII text keeps
    /// its own buffer (as Latin-1), other text is transcoded into one UTF-16 buffer that the
    /// string keeps; both are freed when V8 collects the string. Otherwise, or when that fails,
    /// as [`Self::string`]. Same errors.
    ///
    /// `pieces`: the parts of `text` the core's writers copied from the span's inputs, and those
    /// inputs' UTF-16 (`src/copies.rs`): a non-ASCII text takes those parts' code units from the
    /// inputs instead of transcoding them.
    fn string_owned(
        &self,
        text: String,
        pieces: copies::Pieces<'_>,
    ) -> Result<sys::napi_value, u32> {
        // Fewer bytes than half the threshold cannot make enough characters (a UTF-16 code unit
        // is two bytes in V8 and at least one in UTF-8).
        let long = text.len() >= external::EXTERNAL_BYTES / 2 && external::available();
        if !long && !pieces.any() {
            return self.string(&text);
        }
        if utf::is_ascii(&text) {
            if !long {
                return self.create_latin1(text.as_bytes());
            }
            return match external::latin1(self.env, text.into_bytes()) {
                Ok(value) => Ok(value),
                // Not made: the bytes are the text's, ASCII (checked above).
                Err(bytes) => self.create_latin1(&bytes),
            };
        }
        if !long {
            return UTF16.with_borrow_mut(|units| {
                if !copies::utf16_of(&text, pieces.copies, pieces.sources, units, false) {
                    return Err(OUT_OF_MEMORY);
                }
                let made = self.create_utf16(units);
                if units.capacity() * 2 > KEEP_BYTES {
                    *units = Vec::new();
                }
                made
            });
        }
        // A buffer of its own, the exact size, for V8 to keep.
        let mut units = Vec::new();
        if !copies::utf16_of(&text, pieces.copies, pieces.sources, &mut units, true) {
            return Err(OUT_OF_MEMORY);
        }
        drop(text);
        self.units_string(units)
    }

    /// Sets property `key` to the string of UTF-16 code units `units`: an external string from
    /// [`external::EXTERNAL_BYTES`] on (where the runtime has them), a copy otherwise. Returns the
    /// problem flags (`0` when written).
    fn set_units(&self, key: &CStr, units: Vec<u16>) -> u32 {
        match self
            .units_string(units)
            .and_then(|value| self.set(key, value))
        {
            Ok(()) => 0,
            Err(flag) => flag,
        }
    }

    /// The string of UTF-16 `units`: external when V8 takes it (`src/external.rs`), else copied.
    fn units_string(&self, units: Vec<u16>) -> Result<sys::napi_value, u32> {
        match external::utf16(self.env, units) {
            Ok(value) => Ok(value),
            Err(units) => {
                let made = self.create_utf16(&units);
                give_back_units(units);
                made
            }
        }
    }

    /// `napi_create_string_latin1` of `bytes` (Latin-1); [`WRITE_FAILED`] when V8 refuses.
    fn create_latin1(&self, bytes: &[u8]) -> Result<sys::napi_value, u32> {
        let mut out = ptr::null_mut();
        // SAFETY: live `env` of the current call; `bytes` is valid for its length; valid
        // out-pointer.
        let status = unsafe {
            sys::napi_create_string_latin1(
                self.env,
                bytes.as_ptr().cast(),
                bytes.len() as isize,
                &mut out,
            )
        };
        if self.ok(status) {
            Ok(out)
        } else {
            Err(WRITE_FAILED)
        }
    }

    /// `napi_create_string_utf16` of `units`; [`WRITE_FAILED`] when V8 refuses.
    fn create_utf16(&self, units: &[u16]) -> Result<sys::napi_value, u32> {
        let mut out = ptr::null_mut();
        // SAFETY: live `env` of the current call; `units` is valid for its length; valid
        // out-pointer.
        let status = unsafe {
            sys::napi_create_string_utf16(self.env, units.as_ptr(), units.len() as isize, &mut out)
        };
        if self.ok(status) {
            Ok(out)
        } else {
            Err(WRITE_FAILED)
        }
    }

    fn scalar(&self, value: &Scalar<'_>) -> Result<sys::napi_value, u32> {
        let mut out = ptr::null_mut();
        let status = match value {
            Scalar::Str(s) => return self.string(s),
            // SAFETY: live `env` of the current call, valid out-pointer.
            Scalar::Num(n) => unsafe { sys::napi_create_double(self.env, *n, &mut out) },
            // SAFETY: as above.
            Scalar::Bool(b) => unsafe { sys::napi_get_boolean(self.env, *b, &mut out) },
            // SAFETY: as above.
            Scalar::Null => unsafe { sys::napi_get_null(self.env, &mut out) },
            // Never written natively: the caller sends such spans to JavaScript first.
            Scalar::Json(_) => return Err(WRITE_FAILED),
        };
        if self.ok(status) {
            Ok(out)
        } else {
            Err(WRITE_FAILED)
        }
    }

    /// Creates an array of scalars. Elements are defined as own data properties
    /// (`napi_define_properties`, as an array literal does), so an index setter on
    /// `Array.prototype` is never called; any failure is [`WRITE_FAILED`].
    fn array(&self, values: &[Scalar<'_>]) -> Result<sys::napi_value, u32> {
        let mut array = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer.
        let status =
            unsafe { sys::napi_create_array_with_length(self.env, values.len(), &mut array) };
        if !self.ok(status) {
            return Err(WRITE_FAILED);
        }
        for (i, value) in values.iter().enumerate() {
            let element = self.scalar(value)?;
            if !define_element(self.env, array, i, element) {
                self.clear_exception();
                return Err(WRITE_FAILED);
            }
        }
        Ok(array)
    }
}

/// Defines element `i` of `array` as an own data property holding `value`
/// (`napi_define_properties`, as an array literal has its elements), so an index setter on
/// `Array.prototype` is never called; `false` when napi refused (an exception may be pending).
pub(crate) fn define_element(
    env: sys::napi_env,
    array: sys::napi_value,
    i: usize,
    value: sys::napi_value,
) -> bool {
    let name = index_name(i);
    let descriptor = sys::napi_property_descriptor {
        utf8name: name.as_ptr().cast(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: DATA_PROPERTY,
        data: ptr::null_mut(),
    };
    // SAFETY: `env` is the live environment of the current call, in which the caller made
    // `array` and `value`; the descriptor names a NUL-terminated index (`name` outlives the
    // call).
    unsafe { sys::napi_define_properties(env, array, 1, &descriptor) == sys::Status::napi_ok }
}

/// The decimal digits of `i`, NUL-terminated, in a stack buffer (an array index as a property
/// name).
fn index_name(mut i: usize) -> [u8; 24] {
    let mut digits = [0u8; 24];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (i % 10) as u8;
        n += 1;
        i /= 10;
        if i == 0 || n == 23 {
            break;
        }
    }
    digits[..n].reverse();
    digits
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

/// Runs `f` with this thread's kept UTF-16 buffers ([`KEPT`]), taken out (re-entrant calls get
/// fresh ones) and put back afterwards unless they grew beyond [`KEEP_BYTES`].
fn with_kept<R>(f: impl FnOnce(&mut Vec<u16>, &mut Vec<u16>) -> R) -> R {
    let (mut input, mut output) = KEPT.take();
    let result = f(&mut input, &mut output);
    for units in [&mut input, &mut output] {
        if units.capacity() * 2 > KEEP_BYTES {
            *units = Vec::new();
        }
    }
    KEPT.set((input, output));
    result
}

/// The longest panic message kept for the diag report (bytes; longer ones are cut at a character
/// boundary).
const PANIC_MESSAGE_BYTES: usize = 512;

/// Replaces the default panic hook, which prints to stderr, once per process: the hook keeps the
/// panic's message and location (at most [`PANIC_MESSAGE_BYTES`]) for [`take_panic_message`]
/// and prints nothing. A panic in this addon is caught at the boundary and reported through
/// `diag` as `PANIC` by the JavaScript wrapper; the processor never writes to the console.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            let mut message = String::new();
            let mut end = text.len().min(PANIC_MESSAGE_BYTES);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            // ok: a bounded allocation (at most PANIC_MESSAGE_BYTES + the location); if even it
            // fails, the message is left out.
            if message.try_reserve_exact(end + 64).is_ok() {
                message.push_str(&text[..end]);
                if let Some(at) = info.location() {
                    let file = at.file();
                    let file = &file[file.len().saturating_sub(32)..];
                    let file = file.trim_start_matches(|c: char| !c.is_ascii());
                    use std::fmt::Write;
                    let _ = write!(message, " at {}:{}", file, at.line());
                }
                PANIC_MESSAGE.set(Some(message));
            }
        }))
    });
}

/// The message of the last panic caught on this thread (`"<message> at <file>:<line>"`), or
/// `null`; cleared by the call. The JavaScript wrapper adds it to the diag report of a `PANIC`.
#[napi]
pub fn take_panic_message() -> Option<String> {
    PANIC_MESSAGE.take()
}

/// The strings lengths of the native path's memory policy, for tests and the benchmark:
/// `handoffUnits` ([`HANDOFF_UNITS`]) and `latin1Units` ([`LATIN1_UNITS`]), in UTF-16 code units.
#[napi(object)]
pub struct NativeLimits {
    /// Strings longer than this go to the pure-JS path uncopied.
    pub handoff_units: u32,
    /// ASCII strings from this length on are read as bytes, without a UTF-16 copy.
    pub latin1_units: u32,
}

/// Returns the [`NativeLimits`].
#[napi]
pub fn native_limits() -> NativeLimits {
    NativeLimits {
        handoff_units: HANDOFF_UNITS as u32,
        latin1_units: LATIN1_UNITS as u32,
    }
}

/// The [`Call`] of a per-span entry (`src/raw.rs`) on `attributes`, with the wrapper's sink
/// (`codes`, `values`: `src/sink.rs`) when `values` is an array (`codes` is checked when the
/// sink is finished); `arguments`: the handles of the call's `genkit:input` and `genkit:output`
/// arguments (null when not given), which the sink names instead of passing them back.
fn call_with_sink(
    env: sys::napi_env,
    attributes: sys::napi_value,
    codes: sys::napi_value,
    values: sys::napi_value,
    arguments: [sys::napi_value; 2],
) -> Call {
    Call {
        env,
        object: attributes,
        sink: sink::Sink::of(env, codes, values, arguments),
    }
}

/// A model span's finish reasons and token counts as the binding writes them (both entries of
/// reference mode's model spans: [`map_model_span`] and `narrow::map_model_span`).
struct ModelScalars<'a> {
    reasons: Option<Vec<Scalar<'a>>>,
    input_tokens: Option<Scalar<'a>>,
    output_tokens: Option<Scalar<'a>>,
}

impl<'a> ModelScalars<'a> {
    /// The scalars of `attrs`; `Err` with the flags to answer when they cannot be written here:
    /// `OUT_OF_MEMORY` (the list's room), `NEEDS_JS` (a compound JSON value, which JavaScript
    /// writes).
    fn of(attrs: &ModelAttributes<'a>) -> Result<Self, u32> {
        let mut reasons = None;
        if let Some(raws) = &attrs.finish_reasons {
            let mut list = Vec::new();
            if list.try_reserve_exact(raws.len()).is_err() {
                return Err(OUT_OF_MEMORY);
            }
            list.extend(raws.iter().map(|raw| Scalar::of(*raw)));
            reasons = Some(list);
        }
        let scalars = ModelScalars {
            reasons,
            input_tokens: attrs.input_tokens.map(Scalar::of),
            output_tokens: attrs.output_tokens.map(Scalar::of),
        };
        let compound = (scalars.reasons.iter().flatten())
            .chain(scalars.input_tokens.iter())
            .chain(scalars.output_tokens.iter())
            .any(|s| matches!(s, Scalar::Json(_)));
        if compound {
            return Err(attrs.problems | problem::NEEDS_JS);
        }
        Ok(scalars)
    }

    /// Writes `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens` and
    /// `gen_ai.usage.output_tokens` (those present); returns the problem flags of the writes.
    fn write(&self, call: &Call) -> u32 {
        let mut problems = 0;
        if let Some(reasons) = &self.reasons {
            problems |= call.set_list(c"gen_ai.response.finish_reasons", reasons);
        }
        if let Some(v) = &self.input_tokens {
            problems |= call.set_scalar(c"gen_ai.usage.input_tokens", v);
        }
        if let Some(v) = &self.output_tokens {
            problems |= call.set_scalar(c"gen_ai.usage.output_tokens", v);
        }
        problems
    }
}

/// Maps a model span (`genkit:metadata:subtype` `model`). `input` and `output` are the values of
/// `genkit:input` and `genkit:output` as the JavaScript wrapper read them (once: a getter is never
/// called twice); each is used only when it is a string. `skipInput` is `true` when reading
/// `genkit:input` threw: the input attributes are then left out. Writes `gen_ai.input.messages`,
/// `gen_ai.system_instructions`, `gen_ai.output.messages`, `gen_ai.response.finish_reasons`,
/// `gen_ai.usage.input_tokens` and `gen_ai.usage.output_tokens` into `attributes`, each only when
/// it can be derived (seed 000; candidates per issue 5). Returns problem flags (`0`: clean); with
/// `NEEDS_JS`, `OUT_OF_MEMORY` or `PANIC` set the caller maps the span in JavaScript (what was
/// written is then written again with the same values). Never throws.
///
/// `mapper` is the `Mapper.id` whose content rules apply (issue 11; `undefined` or `null`: none);
/// anything else that is not exactly the id of a live mapper of this thread (`1.5`, `"1"`, a
/// collected mapper's id) maps nothing and answers `PANIC`.
///
/// `sinkCodes` (an `ArrayBuffer` or a `Float64Array`) and `sinkValues` (an `Array`), when given, are the wrapper's
/// attribute sink (`src/sink.rs`): the attributes are recorded there, in order, for the wrapper to
/// write with named stores (`js/sink.js`), and only those past its room are set here.
///
/// A plain Node-API callback (`src/raw.rs`): `argv` holds the nine arguments in this order
/// (`undefined` for those not passed). Arguments of another type than described count as not
/// given (a `skipInput` that is not a boolean is `false`).
pub(crate) fn map_model_span(env: sys::napi_env, argv: [sys::napi_value; 9]) -> u32 {
    let [attributes, input, output, skip_input, mapper, slice, concat, sink_codes, sink_values] =
        argv;
    quiet_panics();
    let call = call_with_sink(env, attributes, sink_codes, sink_values, [input, output]);
    let rules = match content::rules_of(call.env, mapper) {
        Ok(rules) => rules,
        Err(flags) => return flags | call.finish_sink(),
    };
    let skip_input = raw::boolean(env, skip_input).unwrap_or(false);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // Issue 13: long texts referenced as slices, not copied (src/hollow.rs), when the wrapper
        // gave the two functions.
        if rules.as_deref().is_none_or(|r| r.is_passthrough()) {
            if let (Some(slice), Some(concat)) = (raw::given(env, slice), raw::given(env, concat)) {
                if let Some(flags) =
                    hollow::map_model_span(&call, input, output, skip_input, slice, concat)
                {
                    return flags;
                }
            }
        }
        with_buffers(|input_buf, output_buf| {
            with_kept(|input_units, output_units| {
                // Multi-byte inputs are narrowed rather than transcoded where the rules allow
                // (src/narrow.rs); transcoded from the same units when that mapping declines.
                let narrow = narrow::rules_allow(rules.as_deref());
                let narrow_units = if narrow { 0..=usize::MAX } else { NEVER_NARROW };
                let has_input = if skip_input {
                    Read::Absent
                } else {
                    call.read_string_keeping(input, input_buf, input_units, &narrow_units)
                };
                if let Some(flags) = has_input.hand_off() {
                    return flags;
                }
                let has_output =
                    call.read_string_keeping(output, output_buf, output_units, &narrow_units);
                if let Some(flags) = has_output.hand_off() {
                    return flags;
                }
                if narrow && (!input_units.is_empty() || !output_units.is_empty()) {
                    let input = (has_input == Read::Str).then_some(input_buf.as_str());
                    let output = (has_output == Read::Str).then_some(output_buf.as_str());
                    let sources = copies::Source::pair(input, output, input_units, output_units);
                    let rules = rules.as_deref();
                    if let Some(flags) =
                        narrow::map_model_span(&call, rules, input, output, skip_input, &sources)
                    {
                        return flags;
                    }
                    // Declined: the usual path, on the inputs transcoded from their units.
                    for (units, buf) in [
                        (&*input_units, &mut *input_buf),
                        (&*output_units, &mut *output_buf),
                    ] {
                        if !units.is_empty() && utf::utf16_to_utf8_in_one_pass(units, buf).is_err()
                        {
                            return OUT_OF_MEMORY;
                        }
                    }
                }
                let input = (has_input == Read::Str).then_some(input_buf.as_str());
                let output = (has_output == Read::Str).then_some(output_buf.as_str());
                // The message writers scrub as they write (issue 11; core `map_model_scrubbed`), and
                // record what they copy when an input is not ASCII (its UTF-16 is kept).
                let scrubber = rules.as_deref().and_then(|r| r.scrubber());
                let record = (!input_units.is_empty() || !output_units.is_empty())
                    .then_some(Recording::Long(MIN_COPIED));
                let mut attrs = map_model_recorded(input, output, scrubber, record);
                let sources = copies::Source::pair(input, output, input_units, output_units);
                let pieces = std::mem::take(&mut attrs.copies);
                if skip_input {
                    attrs.input_messages = None;
                    attrs.system_instructions = None;
                }
                let scalars = match ModelScalars::of(&attrs) {
                    Ok(scalars) => scalars,
                    Err(flags) => return flags,
                };
                let mut problems = attrs.problems;
                // Content control (issue 11): the processor's mapper's rules, when given.
                let rules = rules.as_deref();
                if rules.is_some_and(|r| !r.captures()) {
                    problems &= !(problem::INPUT_SHAPE | problem::OUTPUT_SHAPE);
                }
                let mut written = content::Written::default();
                let messages = [
                    (c"gen_ai.input.messages", attrs.input_messages.take()),
                    (
                        c"gen_ai.system_instructions",
                        attrs.system_instructions.take(),
                    ),
                    (c"gen_ai.output.messages", attrs.output_messages.take()),
                ];
                for ((key, value), copied) in messages.into_iter().zip(&pieces) {
                    if let Some(s) = value {
                        problems |= content::write(
                            &call,
                            rules,
                            key,
                            Cow::Owned(s),
                            scrubber.is_some(),
                            &mut written,
                            copies::Pieces {
                                copies: copied,
                                sources: &sources,
                            },
                        );
                    }
                }
                problems |= content::finish(&call, &written);
                problems | scalars.write(&call)
            })
        })
    }));
    outcome.unwrap_or(problem::PANIC) | call.finish_sink()
}

/// Maps the content of a tool span (`genkit:metadata:subtype` `tool`) in one call: `output` is the
/// value of `genkit:output` and `input` that of `genkit:input`, as the JavaScript wrapper read them
/// (once). With `withArguments`, writes `gen_ai.tool.call.arguments` (seed 000: `input` as it is,
/// `"{}"` when it is `null` or `undefined`); then, when `output` is a string holding JSON,
/// `gen_ai.tool.call.result` (a JSON string's text, or the JSON as written). Both go through the
/// content rules of the mapper whose `Mapper.id` is `mapper` (capture, scrubbing, cap; issue 11;
/// as for `mapModelSpan`) here, in Rust; a value the rules
/// leave unchanged is written as the JavaScript value it was (not copied). Returns problem flags:
/// `TOOL_OUTPUT_NOT_JSON` when the output is not JSON (no result written), `WRITE_FAILED` when an
/// attribute could not be written, `CONTENT_WITHHELD` when the rules could not be applied to a
/// value (left out), `NEEDS_JS`/`OUT_OF_MEMORY`/`PANIC` when the caller must map both attributes
/// in JavaScript (nothing written, except after a `PANIC` and except the arguments, which a long
/// `output` may have had written first: JavaScript then writes the same value again). Never
/// throws. `sinkCodes` and `sinkValues`: the attribute sink, as for `mapModelSpan`.
///
/// Complete mode's `tool` spans (the processor's tool path: for them these writers give what
/// complete mode's mapping gives) pass `complete` `true`, with `name` (`genkit:name` as
/// `String()` gave it), `traceId`, `spanId`, `parentSpanId`, the span's `status` code and, when
/// it is 2 (the span failed), its exception event's `exceptionType` and `exceptionStacktrace`.
/// When the rest was written (no hand-off flag), a failed span's rule 4 `error.type` is added
/// after it ([`seam::write_error_type`]), then rule 5's `gen_ai.tool.call.id`, and the span's end
/// noted ([`seam::tool_call_id`], which may also answer `NEEDS_JS` with nothing written, and
/// `TOOL_CALL_STATE`); without a `traceId` no tool call id state is asked. Under rules that
/// capture no content, complete mode reports no `TOOL_OUTPUT_NOT_JSON` (as its whole-span
/// mapping). Reference mode passes none of these (`complete` is then `false`).
///
/// A plain Node-API callback (`src/raw.rs`): `argv` holds the sixteen arguments in this order
/// (`undefined` for those not passed). Arguments of another type than described count as not
/// given (a `withArguments` or `complete` that is not a boolean is `false`, a `status` that is
/// not a number 0).
pub(crate) fn map_tool_span(env: sys::napi_env, argv: [sys::napi_value; 16]) -> u32 {
    let [attributes, output, mapper, slice, input, with_arguments, sink_codes, sink_values, complete, name, trace_id, span_id, parent_span_id, status, exception_type, exception_stacktrace] =
        argv;
    quiet_panics();
    let input = raw::given(env, input);
    let arguments = [input.unwrap_or(ptr::null_mut()), output];
    let call = call_with_sink(env, attributes, sink_codes, sink_values, arguments);
    let rules = match content::rules_of(call.env, mapper) {
        Ok(rules) => rules,
        Err(flags) => return flags | call.finish_sink(),
    };
    // `String.prototype.slice`, checked only where a value could be written as a slice (a long
    // string output under rules that read nothing, a long value: `slice::write_range`): a tool
    // span's napi calls are most of its cost.
    let slice_given = || raw::given(env, slice);
    let with_arguments = raw::boolean(env, with_arguments);
    // Complete mode's rules after the writers (whose flags are `flags`), in the whole-span
    // mapping's order: rule 4's `error.type` of a failed span, then rule 5's id (of a span with
    // a trace id), both before the content rules' marks. Not after a hand-off: what was recorded
    // is then discarded and the pairing state must stay as it was. The id is asked first, so a
    // hand-off of its own leaves nothing written either (`input_buf` holds the input's text
    // when `read`).
    let complete = raw::boolean(env, complete).unwrap_or(false);
    let pairs = complete && raw::given(env, trace_id).is_some();
    let failed = complete && raw::uint(env, status) == 2;
    let complete_rules = |flags: u32, input_buf: &mut String, read: bool| -> u32 {
        if flags & problem::HAND_OFF != 0 {
            return flags;
        }
        let (id, mut flags) = if pairs {
            let ids = [name, trace_id, span_id, parent_span_id];
            match seam::tool_call_id(&call, mapper, input, ids, input_buf, read) {
                Ok((id, state)) => (id, flags | state),
                Err(handed_off) => return flags | handed_off,
            }
        } else {
            (None, flags)
        };
        if failed {
            flags |= seam::write_error_type(&call, [exception_type, exception_stacktrace]);
        }
        if let Some(id) = id {
            flags |= seam::put_str(&call, genkit_for_maple_core::span::keys::TOOL_CALL_ID, &id);
        }
        flags
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let key = c"gen_ai.tool.call.result";
        let rules = rules.as_deref();
        // The arguments: written unless capture is off; their text is read only when the rules
        // may change it.
        let arguments = with_arguments.unwrap_or(false) && rules.is_none_or(|r| r.captures());
        let reads_value = rules.is_some_and(|r| !r.is_passthrough());
        // The flags of the arguments once written (by the slice path below).
        let mut arguments_written: Option<u32> = None;
        // Issue 13: a long JSON string without escapes, checked in chunks, written as a slice
        // (under rules that read values, the output is read whole below: its length is not asked).
        let long = if reads_value {
            None
        } else {
            slice_given().and_then(|s| Some((s, call.string_length(output)?)))
        };
        if let Some((slice, len)) = long {
            if len >= slice::STREAM_UNITS {
                // Rules that read nothing: the arguments as they are, first (seed 000's order),
                // once: should the slice path fall through, the path below does not write them.
                let mut written = content::Written::default();
                let args = if arguments {
                    write_arguments(&call, rules, input, None, &mut written)
                } else {
                    0
                };
                arguments_written = Some(args);
                if let Some(flags) = slice::plain_string(&call, output, len, slice, key) {
                    // Rules that read nothing write no marks: complete mode's rules go last.
                    return with_buffers(|_, input_buf| {
                        complete_rules(args | flags, input_buf, false)
                    });
                }
            }
        }
        with_buffers(|buf, input_buf| {
            let mut input_text = false;
            // Arguments and a result the rules leave as they are (most of them): the arguments
            // are written as the value they are, never transcoded, the result without the rules.
            // With the screens, the output is read into `buf` too.
            let (as_is, result_as_is, output_read) = match (reads_value, rules) {
                (true, Some(r)) => {
                    let (as_is, result_as_is, read) =
                        screens_leave_as_is(&call, r, input.filter(|_| arguments), output, buf);
                    (as_is, result_as_is, Some(read))
                }
                _ => (None, false, None),
            };
            if let (true, Some(raw), true, None) = (arguments, input, reads_value, as_is) {
                match call.read_string(raw, input_buf) {
                    Read::Str => input_text = true,
                    Read::Absent => {}
                    other => return other.hand_off().unwrap_or(0),
                }
            }
            let output_read = output_read.unwrap_or_else(|| call.read_string(output, buf));
            let has_output = match output_read {
                Read::Str => true,
                Read::Absent => false,
                other => return other.hand_off().unwrap_or(0),
            };
            let whole = buf.as_str();
            let result = has_output.then(|| map_tool_result(whole));
            match result {
                Some(ToolResult::NeedsJs) => return problem::NEEDS_JS,
                Some(ToolResult::OutOfMemory) => return OUT_OF_MEMORY,
                _ => {}
            }
            let mut written = content::Written::default();
            let mut flags = 0;
            match arguments_written {
                Some(args) => flags |= args,
                None if arguments => match as_is {
                    Some(raw) => {
                        let key = c"gen_ai.tool.call.arguments";
                        flags |= call.set(key, raw).err().unwrap_or(0);
                    }
                    None => {
                        let text = input_text.then_some(input_buf.as_str());
                        flags |= write_arguments(&call, rules, input, text, &mut written);
                    }
                },
                None => {}
            }
            let result_rules = if result_as_is { None } else { rules };
            let write = |value: &str, json: Option<bool>, written: &mut content::Written| {
                slice::write_range(
                    &call,
                    result_rules,
                    key,
                    value,
                    json,
                    whole,
                    output,
                    slice_given,
                    written,
                )
            };
            flags |= match result {
                None => 0,
                Some(ToolResult::Invalid) => problem::TOOL_OUTPUT_NOT_JSON,
                // A string result's text may itself be JSON: the rules ask.
                Some(ToolResult::Text(text)) => write(&text, None, &mut written),
                Some(ToolResult::Json(json)) => write(json, Some(true), &mut written),
                Some(ToolResult::NeedsJs | ToolResult::OutOfMemory) => 0,
            };
            let flags = complete_rules(flags, input_buf, input_text);
            // A hand-off leaves what was recorded unwritten (the wrapper discards it).
            if flags & problem::HAND_OFF != 0 {
                return flags;
            }
            flags | content::finish(&call, &written)
        })
    }));
    let mut flags = outcome.unwrap_or(problem::PANIC);
    // Complete mode reports no result problem of content it does not capture (as for a model
    // span's shapes in either mode).
    if complete && rules.as_deref().is_some_and(|r| !r.captures()) {
        flags &= !problem::TOOL_OUTPUT_NOT_JSON;
    }
    flags | call.finish_sink()
}

/// Which of a tool span's `input` (the arguments, when they are to be written) and `output` the
/// content rules `rules` are certain to leave as they are, by their screens scanned together
/// ([`Content::leaves_each_as_is`](genkit_for_maple_core::content::Content::leaves_each_as_is)):
/// the input's Latin-1 screen ([`Call::screen`]; its text is read only when the rules may change
/// it), and the output's, which is its text when that is ASCII: the output is read into `buf`
/// here ([`Call::read_string`]), once (a second napi read and transcoding of an ASCII result cost
/// more than the copy), its Latin-1 screen read only when it is not ASCII. The arguments' handle
/// when they are left as they are, whether the output is, and the output's read (`buf` holds its
/// text when that is [`Read::Str`]). Neither for a value that is not a string, a string of
/// [`SHORT_UNITS`] - 1 units or more, or when either holds a needle.
fn screens_leave_as_is(
    call: &Call,
    rules: &genkit_for_maple_core::content::Content,
    input: Option<sys::napi_value>,
    output: sys::napi_value,
    buf: &mut String,
) -> (Option<sys::napi_value>, bool, Read) {
    // The input's screen, a NUL byte, then the output's. Not zeroed (512 bytes a call): only
    // what was written is read.
    let mut joined = [MaybeUninit::<u8>::uninit(); 2 * SHORT_UNITS];
    let input = input.and_then(|raw| {
        let n = call.screen(raw, &mut joined[..SHORT_UNITS])?;
        // The separator, ours: `n + 1 < SHORT_UNITS` (`Call::screen`).
        joined.get_mut(n)?.write(0);
        Some((raw, n))
    });
    let at = input.map_or(0, |(_, n)| n + 1);
    // The output's text is needed whatever the screens say: read first, its screen is then that
    // text when it is ASCII (a copy, no second read), its Latin-1 screen otherwise.
    let read = call.read_string(output, buf);
    let screen = &mut joined[at..at + SHORT_UNITS];
    let output = match read {
        Read::Str if buf.is_ascii() => screen
            .get_mut(..buf.len())
            .filter(|s| s.len() + 1 < SHORT_UNITS)
            .map(|s| {
                for (to, &b) in s.iter_mut().zip(buf.as_bytes()) {
                    to.write(b);
                }
                s.len()
            }),
        Read::Str => call.screen(output, screen),
        // Not a string, or a read that hands the span off (returned by the caller).
        _ => None,
    };
    let longest = input.map_or(0, |(_, n)| n).max(output.unwrap_or(0));
    let Some(written) = joined.get(..at + output.unwrap_or(0)) else {
        return (None, false, read); // not reached: each screen is shorter than SHORT_UNITS
    };
    // SAFETY: every byte of `written` was written: with an input screen of `n` bytes,
    // `call.screen` wrote `joined[..n]` (napi copies `n` bytes, its `result`) and the separator
    // `joined[n]` was written above (`at` is `n + 1`, 0 without one); with an output screen of
    // `m` bytes, `joined[at..at + m]` was written by the copy above (all of `s`, as long as
    // `buf`) or by `call.screen`; `written` is `joined[..at + m]` (`m` 0 without one).
    let joined: &[u8] = unsafe { written.assume_init_ref() };
    let any = input.is_some() || output.is_some();
    if any && rules.leaves_each_as_is(joined, longest) {
        (input.map(|(raw, _)| raw), output.is_some(), read)
    } else {
        (None, false, read)
    }
}

/// Writes `gen_ai.tool.call.arguments` of a tool span (seed 000: `genkit:input` as it is, `"{}"`
/// when it is `null`/`undefined`): `input` is the JavaScript value (`None` for null/undefined),
/// `text` its text when it is a string the rules must see; without `text` the value is written
/// as it is (rules that change nothing, or a number or a boolean), or left out
/// (`CONTENT_WITHHELD`: a value the rules cannot read, such as an array of strings, is never
/// written unscrubbed).
fn write_arguments(
    call: &Call,
    rules: Option<&genkit_for_maple_core::content::Content>,
    input: Option<sys::napi_value>,
    text: Option<&str>,
    written: &mut content::Written,
) -> u32 {
    let key = c"gen_ai.tool.call.arguments";
    match (input, text) {
        (None, _) => content::write(
            call,
            rules,
            key,
            Cow::Borrowed("{}"),
            false,
            written,
            copies::Pieces::NONE,
        ),
        (Some(raw), Some(text)) => content::write_original(call, rules, key, text, raw, written),
        // As it is under rules that change nothing; under rules that read values, only a
        // number or a boolean (`text` is the string's when they read it).
        (Some(raw), None) => {
            if rules.is_some_and(|r| !r.is_passthrough()) && !content::writable_as_is(call.env, raw)
            {
                return problem::CONTENT_WITHHELD;
            }
            call.set(key, raw).err().unwrap_or(0)
        }
    }
}

/// Decodes an OTLP/HTTP protobuf `ExportTraceServiceRequest` body into JSON grouped as OTLP
/// groups it, each resource and scope once: `[{resource, scopes: [{scope, spans: [{traceId,
/// spanId, parentSpanId, name, kind, startTimeUnixNano, endTimeUnixNano, status, attributes}]}]}]`
/// (the core's `otlp::decode_spans`). Used by the built-in local receiver. `maxSpans` and
/// `maxElements` bound the spans and protobuf messages of one request (defaults: 50,000 and
/// 1,000,000), checked on the wire before anything is decoded.
///
/// Throws an `Error` whose message starts with `request too large:` when a bound is exceeded or
/// the output cannot be allocated, and with `invalid ExportTraceServiceRequest:` when the body is
/// not a valid request (or on an internal panic).
#[napi]
pub fn decode_otlp_traces(
    body: Buffer,
    max_spans: Option<u32>,
    max_elements: Option<u32>,
) -> napi::Result<String> {
    quiet_panics();
    let bytes: &[u8] = &body;
    let defaults = otlp::Limits::default();
    let limits = otlp::Limits {
        max_spans: max_spans.map_or(defaults.max_spans, |n| n as usize),
        max_elements: max_elements.map_or(defaults.max_elements, |n| n as usize),
    };
    match catch_unwind(AssertUnwindSafe(|| otlp::decode_spans(bytes, limits))) {
        Ok(Ok(json)) => Ok(json),
        Ok(Err(e)) => Err(napi::Error::from_reason(e.to_string())),
        Err(_) => Err(napi::Error::from_reason(format!(
            "invalid ExportTraceServiceRequest: panic while decoding it ({})",
            PANIC_MESSAGE.take().unwrap_or_default()
        ))),
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
    /// Memory for the native mapping could not be allocated; the span was mapped in JavaScript.
    pub out_of_memory: u32,
    /// A `gen_ai.*` attribute could not be written (a setter or Proxy trap threw, a frozen map).
    pub write_failed: u32,
    /// A content attribute was left out: it could not be scrubbed or capped (issue 11).
    pub content_withheld: u32,
    /// Complete mode: `genkit:input` or `genkit:output` is over the hand-off size
    /// ([`HANDOFF_UNITS`]); the span was mapped by the pure-JS reference mapping.
    pub too_large: u32,
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
        write_failed: problem::WRITE_FAILED,
        content_withheld: problem::CONTENT_WITHHELD,
        too_large: problem::TOO_LARGE,
    }
}

// ---------------------------------------------------------------------------------------------
// Benchmark-only: the floor of `npm run bench` (BENCHMARKS.md). Compiled only with the cargo
// feature `bench` (bench/run.js builds that addon into target/bench-addon/); the shipped build and
// the test build do not contain it.

/// One output attribute held by [`FLOOR`]: its value pre-encoded the way [`Call::string`] would
/// create it.
#[cfg(feature = "bench")]
enum FloorValue {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

#[cfg(feature = "bench")]
thread_local! {
    /// The output attributes [`bench_floor`] writes, one slot per prepared span.
    static FLOOR: RefCell<Vec<Vec<(std::ffi::CString, FloorValue)>>> = const { RefCell::new(Vec::new()) };
}

/// Benchmark-only. Stores the output attributes `bench_floor` will write for one span: `keys[i]`
/// with `values[i]`, each value pre-encoded as Latin-1 (ASCII) or UTF-16, so that `bench_floor`
/// only copies. Returns the slot to pass to `bench_floor` (keys holding NUL are skipped).
#[cfg(feature = "bench")]
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

/// Benchmark-only: the floor of a span's native mapping. Reads `output`, and `input` when it is a
/// string (`bench/case.js` passes `genkit:output` and, for model spans, `genkit:input`, read in
/// JavaScript as the processor reads them) into the reused buffers exactly as `mapModelSpan` does,
/// then creates the output strings of `slot` (from `benchFloorPrepare`; Latin-1 or UTF-16, as
/// `mapModelSpan` creates them) and sets them on `attributes`. No JSON is parsed or written.
/// Returns the bytes read.
/// A plain Node-API callback (`src/raw.rs`), as the per-span entries are, so that the floor
/// carries their boundary cost and no more: `argv` is `attributes, slot, input, output`.
#[cfg(feature = "bench")]
pub(crate) fn bench_floor(env: sys::napi_env, argv: [sys::napi_value; 4]) -> u32 {
    let [attributes, slot, input, output] = argv;
    let slot = raw::uint(env, slot);
    let call = Call {
        env,
        object: attributes,
        sink: None,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let read = with_buffers(|input_buf, output_buf| {
            call.read_string(input, input_buf);
            call.read_string(output, output_buf);
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
                let _ = call.set(key, out);
            }
        });
        read as u32
    }));
    outcome.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panic_hook_keeps_the_message_and_location() {
        quiet_panics();
        let n = 42;
        assert!(catch_unwind(|| panic!("boom {n}")).is_err()); // ok: a test; the panic is the input, caught here
        let message = take_panic_message().unwrap_or_default();
        assert!(message.starts_with("boom 42 at "), "{message}");
        assert!(message.contains("lib.rs:"), "{message}");
        assert_eq!(take_panic_message(), None, "taken once");
        let long = "é".repeat(PANIC_MESSAGE_BYTES);
        assert!(catch_unwind(|| panic!("{long}")).is_err()); // ok: a test; the panic is the input, caught here
        let message = take_panic_message().unwrap_or_default();
        assert!(
            message.len() < PANIC_MESSAGE_BYTES + 64,
            "{}",
            message.len()
        );
    }

    #[test]
    fn index_names_are_decimal_and_nul_terminated() {
        for (i, text) in [
            (0, "0"),
            (7, "7"),
            (10, "10"),
            (4_294_967_294, "4294967294"),
        ] {
            let name = index_name(i);
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            assert_eq!(&name[..end], text.as_bytes());
        }
    }
}
