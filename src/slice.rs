//! Outputs that are a range of the input, created without a copy (issue 13, memory per span).
//!
//! A tool span's `gen_ai.tool.call.result` is, whenever `genkit:output` holds a JSON string
//! without escapes or any other JSON value, a range of `genkit:output` itself: the text between
//! the quotes, or the JSON as written. Such a value is created as `output.slice(a, b)` through
//! `String.prototype.slice` (which the JavaScript wrapper captures when it loads and passes in):
//! V8 makes a sliced string sharing the parent's characters (at least 13 of them), so the output
//! costs no copy at all, where `napi_create_string_*` copies the whole text into the V8 heap.
//!
//! When no content rule reads the value (no secret scrubbing, no cap), a `genkit:output` of at
//! least [`STREAM_UNITS`] code units that is one JSON string without escapes is not even copied
//! into Rust: it is checked [`CHUNK_UNITS`] code units at a time, each chunk read from a sliced
//! string into one small reused buffer, so the native path's extra memory for it is one chunk
//! (64 KiB) instead of a copy of the attribute.

use super::{Call, WRITE_FAILED};
use genkit_for_maple_core::content::{Content, Filtered};
use napi::sys;
use std::cell::Cell;
use std::ffi::CStr;
use std::ptr;

/// From this length on (UTF-16 code units), a tool span's `genkit:output` is checked in chunks
/// before being copied (below it one copy is cheaper than the chunk reads).
pub(crate) const STREAM_UNITS: usize = 64 << 10;

/// Values from this length on (UTF-8 bytes) are created as slices by [`write_range`].
const SLICE_BYTES: usize = 4096;

/// The code units read at a time by [`plain_string`] (64 KiB of UTF-16).
const CHUNK_UNITS: usize = 32 << 10;

thread_local! {
    /// The chunk buffer of [`plain_string`], taken out for the duration of a call (the slice call
    /// runs JavaScript; a re-entrant call finds it empty and allocates its own).
    static CHUNK: Cell<Vec<u16>> = const { Cell::new(Vec::new()) };
}

/// `parent.slice(start, end)` through `slice` (`String.prototype.slice`), in UTF-16 code units.
/// [`WRITE_FAILED`] when the call fails (its exception cleared) or does not answer a string of
/// `end - start` units.
pub(crate) fn slice_of(
    call: &Call,
    slice: sys::napi_value,
    parent: sys::napi_value,
    start: usize,
    end: usize,
) -> Result<sys::napi_value, u32> {
    let mut args = [ptr::null_mut(); 2];
    for (arg, n) in args.iter_mut().zip([start, end]) {
        // SAFETY: live `env` of the current call (see `Call`), valid out-pointer. `n` is at most
        // a string length (below 2^30), exact as a double.
        let status = unsafe { sys::napi_create_double(call.env, n as f64, arg) };
        if !call.ok(status) {
            return Err(WRITE_FAILED);
        }
    }
    let mut out = ptr::null_mut();
    // SAFETY: live handles of the current call; `slice` is the function value the wrapper passed
    // (napi checks that it is callable and reports `napi_function_expected` otherwise); `args` holds
    // two values created above in this `env`; `out` is a valid out-pointer.
    let status =
        unsafe { sys::napi_call_function(call.env, parent, slice, 2, args.as_ptr(), &mut out) };
    if !call.ok(status) {
        return Err(WRITE_FAILED);
    }
    let mut len = 0usize;
    // SAFETY: live handles; a null buffer asks for the length only; a value that is not a string
    // is `napi_string_expected`, no exception.
    let status =
        unsafe { sys::napi_get_value_string_utf16(call.env, out, ptr::null_mut(), 0, &mut len) };
    if !call.ok(status) || len != end - start {
        return Err(WRITE_FAILED);
    }
    Ok(out)
}

/// The UTF-16 offsets of `part`, a subslice of `whole` (both UTF-8; simdutf counts the units), or
/// `None` when `part` is not inside `whole`.
fn unit_range(whole: &str, part: &str) -> Option<(usize, usize)> {
    let base = whole.as_ptr() as usize;
    let at = (part.as_ptr() as usize).checked_sub(base)?;
    if at.checked_add(part.len())? > whole.len() {
        return None;
    }
    let start = simdutf::utf16_length_from_utf8(whole.as_bytes().get(..at)?);
    Some((
        start,
        start + simdutf::utf16_length_from_utf8(part.as_bytes()),
    ))
}

/// Writes content attribute `key` = `value`, as `content::write` does, except that a value the
/// rules leave as it is and that lies inside `whole` (the UTF-8 copy of the JavaScript string
/// `parent`) is created as a slice of `parent`, without a copy (and is `parent` itself when it is
/// all of it). `json`: whether `value` is known
/// to be valid JSON ([`Content::filter_as`]). The rules run once. `slice` gives
/// `String.prototype.slice` when the caller has it; it is asked only for a value long enough to
/// be made a slice (its type check is a napi call most values do not need).
/// Returns problem flags.
#[allow(clippy::too_many_arguments)] // ok: the call's handles, the rules and the value's origin
pub(crate) fn write_range(
    call: &Call,
    content: Option<&Content>,
    key: &'static CStr,
    value: &str,
    json: Option<bool>,
    whole: &str,
    parent: sys::napi_value,
    slice: impl FnOnce() -> Option<sys::napi_value>,
    written: &mut super::content::Written,
) -> u32 {
    let filtered = content.map(|rules| rules.filter_as(super::content::key_name(key), value, json));
    let same = matches!(filtered, None | Some(Filtered::Same));
    // All of `parent`, unchanged (a JSON result as written): the JavaScript value itself, which
    // the sink names as the call's argument (no string made, no element set).
    if same && value.len() == whole.len() && std::ptr::eq(value.as_ptr(), whole.as_ptr()) {
        return call.set(key, parent).err().unwrap_or(0);
    }
    // Short values are copied: below [`SLICE_BYTES`] the call into `String.prototype.slice`
    // costs more than the copy it spares.
    let range = if same && value.len() >= SLICE_BYTES {
        slice().and_then(|slice| unit_range(whole, value).map(|(a, b)| (slice, a, b)))
    } else {
        None
    };
    match (range, filtered) {
        (Some((slice, a, b)), _) => call.set_with(key, || slice_of(call, slice, parent, a, b)),
        (None, None | Some(Filtered::Same)) => call.set_string(key, value),
        (None, Some(other)) => super::content::write_filtered(call, key, other, written),
    }
}

/// Whether a unit may appear as it is inside a JSON string literal without ending it or starting
/// an escape: not `"`, not `\`, not a control character (JSON requires those escaped). Lone
/// surrogates may: `JSON.parse` keeps them, and so does the slice.
#[inline]
fn plain(u: u16) -> bool {
    u != 0x22 && u != 0x5C && u >= 0x20
}

/// Reads the code units `start..end` of the string `value` into `chunk` (replacing its contents):
/// the first chunk (`start == 0`) from the string itself (napi copies a prefix), any other from
/// `value.slice(start, end)` through `slice` (`String.prototype.slice`; V8 shares the
/// characters). `chunk` must have capacity for `end - start + 1` units (the NUL napi writes).
/// `false` when it has not, the slice or the read fails, or fewer units come back.
pub(crate) fn read_units(
    call: &Call,
    slice: sys::napi_value,
    value: sys::napi_value,
    start: usize,
    end: usize,
    chunk: &mut Vec<u16>,
) -> bool {
    let Some(units) = end.checked_sub(start) else {
        return false;
    };
    chunk.clear();
    if chunk.capacity() <= units {
        return false;
    }
    let source = if start == 0 {
        value
    } else {
        match slice_of(call, slice, value, start, end) {
            Ok(source) => source,
            Err(_) => return false,
        }
    };
    let mut got = 0usize;
    // SAFETY: `chunk` has capacity for more than `units` units (checked above); napi writes at
    // most `bufsize = units + 1` units (the last one its NUL) and reports the count, excluding the
    // NUL, in `got`.
    let status = unsafe {
        sys::napi_get_value_string_utf16(call.env, source, chunk.as_mut_ptr(), units + 1, &mut got)
    };
    if !call.ok(status) || got != units {
        return false;
    }
    // SAFETY: napi initialised `got == units` units, within the capacity.
    unsafe { chunk.set_len(got) };
    true
}

/// The streaming check of a tool span's `genkit:output` (`output`, a string of `len` units, at
/// least [`STREAM_UNITS`]): when it is one JSON string literal without escapes (a `"` first and
/// last, nothing else that [`plain`] refuses), `JSON.parse(output)` is `output.slice(1, -1)`, which
/// is written as `gen_ai.tool.call.result` and `Some(flags)` returned. `None` (nothing written)
/// for any other text, or when a chunk cannot be read: the caller maps it the usual way.
/// Only for rules that do not read the value (`Content::is_passthrough`, or none).
pub(crate) fn plain_string(
    call: &Call,
    output: sys::napi_value,
    len: usize,
    slice: sys::napi_value,
    key: &CStr,
) -> Option<u32> {
    if len < 2 {
        return None;
    }
    let mut chunk = CHUNK.take();
    chunk.clear();
    if chunk.try_reserve_exact(CHUNK_UNITS + 1).is_err() {
        return None;
    }
    let mut start = 0;
    let mut is_plain = true;
    while start < len && is_plain {
        let end = (start + CHUNK_UNITS).min(len);
        if !read_units(call, slice, output, start, end, &mut chunk) {
            is_plain = false;
            break;
        }
        let got = chunk.len();
        // The quotes at both ends; everything between them plain. A fold without early exit, so
        // that it vectorises.
        let inner_from = usize::from(start == 0);
        let inner_to = if end == len { got - 1 } else { got };
        let ends_ok = (start > 0 || chunk.first() == Some(&0x22))
            && (end < len || chunk.last() == Some(&0x22));
        let inner = chunk
            .get(inner_from..inner_to.max(inner_from))
            .unwrap_or(&[]);
        is_plain = ends_ok && inner.iter().fold(true, |ok, &u| ok & plain(u));
        start = end;
    }
    CHUNK.set(if chunk.capacity() <= CHUNK_UNITS + 1 {
        chunk
    } else {
        Vec::new()
    });
    if !is_plain {
        return None;
    }
    Some(call.set_with(key, || slice_of(call, slice, output, 1, len - 1)))
}
