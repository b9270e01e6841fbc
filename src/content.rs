//! Content control (issue 11) on the paths that write content outside the core's
//! `Mapper::map`: reference mode's model and tool writers in `lib.rs` (`mapModelSpan`,
//! `mapToolSpan`, given the processor's [`Mapper`]; `mapToolSpan` writes the tool call arguments
//! too) and `filterContent` for the values the JavaScript side writes itself (spans handed to
//! JavaScript, the pure-JS writers' output). The rules are
//! the core's ([`genkit_for_maple_core::content::Content`]), compiled once per [`Mapper`].

use super::copies::Pieces;
use super::seam::Mapper;
use super::{Call, Read};
use genkit_for_maple_core::content::{Content, Filtered};
use napi::bindgen_prelude::{ClassInstance, Either, JsValue, Unknown};
use napi::Env;
use std::borrow::Cow;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The longest string `filterContent` reads (UTF-16 code units, V8's own maximum string length on
/// 64-bit): above the mapping's hand-off size a value is read as UTF-16, then UTF-8, each buffer
/// reserved fallibly.
const FILTER_UNITS: usize = (1 << 29) - 24;

/// What the content writes of one span added up to.
#[derive(Default)]
pub(crate) struct Written {
    dropped: usize,
    capped: Vec<&'static CStr>,
}

/// The name of content attribute `key` as the core's rules take it: one of
/// [`CONTENT_ATTRIBUTES`](genkit_for_maple_core::content::CONTENT_ATTRIBUTES) found by comparing
/// bytes (a length and a short `memcmp`), else the key's own text. `CStr::to_str` validated the
/// key's UTF-8 on every content write (about 90 instructions a write, two a tool span).
pub(crate) fn key_name(key: &'static CStr) -> &'static str {
    let bytes = key.to_bytes();
    genkit_for_maple_core::content::CONTENT_ATTRIBUTES
        .iter()
        .find(|k| k.as_bytes() == bytes)
        .copied()
        .unwrap_or_else(|| key.to_str().unwrap_or(""))
}

/// Writes content attribute `key` = `value` through `content` (capture, scrubbing, cap), or as it
/// is without one; `scrubbed`: the writer already scrubbed it with [`Content::scrubber`] (only the
/// cap is left, [`Content::filter_written`]). Returns problem flags.
/// An owned `value` may become an external string (`Call::set_string_owned`).
/// `pieces`: what an owned `value` copied from the span's inputs (`src/copies.rs`), used when the
/// rules leave it as it is.
pub(crate) fn write(
    call: &Call,
    content: Option<&Content>,
    key: &'static CStr,
    value: Cow<'_, str>,
    scrubbed: bool,
    written: &mut Written,
    pieces: Pieces<'_>,
) -> u32 {
    let filtered = match content {
        None => Filtered::Same,
        Some(content) => {
            let key_str = key_name(key);
            if scrubbed {
                content.filter_written(key_str, &value)
            } else {
                content.filter(key_str, &value)
            }
        }
    };
    match (filtered, value) {
        (Filtered::Same, Cow::Owned(value)) => call.set_string_owned(key, value, pieces),
        (Filtered::Same, Cow::Borrowed(value)) => call.set_string(key, value),
        (other, _) => write_filtered(call, key, other, written),
    }
}

/// [`write`] for a value that is already a JavaScript value (`original`, whose text is `text`):
/// when the rules leave it as it is, `original` itself is written (no string is created, and a
/// string read lossily keeps its lone surrogates, as the reference writes it).
pub(crate) fn write_original(
    call: &Call,
    content: Option<&Content>,
    key: &'static CStr,
    text: &str,
    original: napi::sys::napi_value,
    written: &mut Written,
) -> u32 {
    let filtered = match content {
        None => Filtered::Same,
        Some(content) => content.filter(key_name(key), text),
    };
    match filtered {
        Filtered::Same => call.set(key, original).err().unwrap_or(0),
        other => write_filtered(call, key, other, written),
    }
}

/// Writes what [`Content::filter`] answered other than `Same`.
pub(crate) fn write_filtered(
    call: &Call,
    key: &'static CStr,
    filtered: Filtered,
    written: &mut Written,
) -> u32 {
    match filtered {
        Filtered::Same => 0,
        Filtered::Withheld(flags) => flags,
        Filtered::Changed {
            value,
            dropped,
            capped,
        } => {
            written.dropped += dropped;
            if capped && written.capped.try_reserve(1).is_ok() {
                written.capped.push(key);
            }
            // Another text than the writers': its pieces are not known.
            call.set_string_owned(key, value, Pieces::NONE)
        }
    }
}

/// Writes `genkit_for_maple.content.dropped_messages` and `genkit_for_maple.content.capped`
/// (core `cap::DROPPED_MESSAGES`, `cap::CAPPED_ATTRIBUTES`) when the cap changed something.
pub(crate) fn finish(call: &Call, written: &Written) -> u32 {
    let mut problems = 0;
    if written.dropped > 0 {
        let n = genkit_for_maple_core::Scalar::Num(written.dropped as f64);
        problems |= call.set_scalar(c"genkit_for_maple.content.dropped_messages", &n);
    }
    if !written.capped.is_empty() {
        let mut list = Vec::new();
        if list.try_reserve_exact(written.capped.len()).is_err() {
            return problems;
        }
        list.extend(written.capped.iter().map(|k| {
            genkit_for_maple_core::Scalar::Str(std::borrow::Cow::Borrowed(k.to_str().unwrap_or("")))
        }));
        problems |= call.set_with(c"genkit_for_maple.content.capped", || call.array(&list));
    }
    problems
}

/// The content rules of the mapper whose id is `mapper` (`Mapper.id`), when one is given: `Ok(None)`
/// for `undefined` or `null` (no content rules), `Err(PANIC)` for anything else that is not the id
/// of a live mapper of this thread (a caller's bug: nothing is mapped rather than content written
/// without its rules; `seam::mapper_id`).
pub(crate) fn rules_of(
    env: napi::sys::napi_env,
    mapper: napi::sys::napi_value,
) -> Result<Option<std::sync::Arc<Content>>, u32> {
    // The id first (what the wrapper passes): the type is asked only of another value.
    let id = crate::seam::mapper_id(env, mapper);
    if id.is_none() {
        let mut kind = napi::sys::ValueType::napi_object;
        // SAFETY: live `env` of the current call, a handle of it, valid out-pointer; should napi
        // fail, `kind` stays an object's, which names no mapper.
        let status = unsafe { napi::sys::napi_typeof(env, mapper, &mut kind) };
        if status == napi::sys::Status::napi_ok
            && (kind == napi::sys::ValueType::napi_undefined
                || kind == napi::sys::ValueType::napi_null)
        {
            return Ok(None);
        }
    }
    id.and_then(|id| crate::seam::registered(id, |r| std::sync::Arc::clone(&r.content)))
        .map(Some)
        .ok_or(genkit_for_maple_core::problem::PANIC)
}

/// Whether a content value that is not a string may be written as it is under content rules
/// that read values (scrubbing or a cap): only a number or a boolean, which hold nothing to
/// scrub and nothing to cap. Anything else (an array of strings, an object, a `String` object:
/// what an exporter would write element by element or key by key) is left out instead, as a
/// value that could not be scrubbed is ([`problem::CONTENT_WITHHELD`]): content is never written
/// unscrubbed while scrubbing is on (issue 11). `false` when napi cannot tell. The same
/// classification as complete mode's (`seam::other_input`, core `span::OtherInput`).
///
/// [`problem::CONTENT_WITHHELD`]: genkit_for_maple_core::problem::CONTENT_WITHHELD
pub(crate) fn writable_as_is(env: napi::sys::napi_env, value: napi::sys::napi_value) -> bool {
    use genkit_for_maple_core::span::OtherInput;
    matches!(
        crate::seam::other_input(env, value),
        Some(OtherInput::Number(_) | OtherInput::Bool(_))
    )
}

/// A value `filterContent` changed.
#[napi(object)]
pub struct FilteredContent {
    /// The value to write instead.
    pub value: String,
    /// Messages the cap dropped whole (for `genkit_for_maple.content.dropped_messages`).
    pub dropped: u32,
    /// Whether the cap changed it (for `genkit_for_maple.content.capped`).
    pub capped: bool,
}

/// Applies the mapper's content rules (capture, secret scrubbing, cap; issue 11) to one content
/// attribute value the JavaScript side writes itself: `key` is the attribute
/// (`gen_ai.tool.call.arguments`, ...), `value` its value. Returns `true` to write the value as it
/// is, `{ value, dropped, capped }` to write `value` instead, `false` to leave the attribute out (capture off, or it could not
/// be scrubbed or capped: too long to copy, no memory). A value that is not a string: `true` for
/// a number or a boolean, `false` for anything else (an array, an object: see
/// [`writable_as_is`]).
/// Never throws.
#[napi]
pub fn filter_content(
    env: Env,
    mapper: ClassInstance<'_, Mapper>,
    key: String,
    value: Unknown<'_>,
) -> Either<FilteredContent, bool> {
    let rules = mapper.content_rules();
    if rules.is_passthrough() {
        return Either::B(true);
    }
    if !rules.captures() {
        return Either::B(false);
    }
    let call = Call {
        env: env.raw(),
        object: std::ptr::null_mut(),
        sink: None,
    };
    let raw = value.raw();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut buf = String::new();
        // Lone surrogates are read as U+FFFD: kept as written unless a secret or the cap changes
        // the value.
        match read_lossy(&call, raw, &mut buf) {
            Read::Str => {}
            // Not a string: a number or a boolean as it is, anything else left out.
            Read::Absent => return Either::B(writable_as_is(call.env, raw)),
            // Too long even for V8 or no memory: nothing rather than unscrubbed.
            _ => return Either::B(false),
        }
        match rules.filter(&key, &buf) {
            Filtered::Same => Either::B(true),
            Filtered::Withheld(_) => Either::B(false),
            Filtered::Changed {
                value,
                dropped,
                capped,
            } => Either::A(FilteredContent {
                value,
                dropped: u32::try_from(dropped).unwrap_or(u32::MAX),
                capped,
            }),
        }
    }));
    outcome.unwrap_or(Either::B(false))
}

/// [`Call::read_string`], with a lone surrogate read as U+FFFD, and strings above the mapping's
/// hand-off size (`HANDOFF_UNITS`) read too, fallibly: filtering is the only way such a value
/// can be written at all (the alternative is withholding it), and the span is already on the
/// JavaScript path. Up to [`FILTER_UNITS`]; every buffer reserved fallibly (OutOfMemory: withheld).
fn read_lossy(call: &Call, value: napi::sys::napi_value, buf: &mut String) -> Read {
    match call.read_string(value, buf) {
        Read::NotWellFormed | Read::TooLarge => {}
        other => return other,
    }
    let mut len = 0usize;
    // SAFETY: live `env` of the current call; a null buffer asks for the length in UTF-16 units.
    let status = unsafe {
        napi::sys::napi_get_value_string_utf16(call.env, value, std::ptr::null_mut(), 0, &mut len)
    };
    if status != napi::sys::Status::napi_ok {
        return Read::Absent;
    }
    if len > FILTER_UNITS {
        return Read::TooLarge;
    }
    let mut units: Vec<u16> = Vec::new();
    if units.try_reserve_exact(len + 1).is_err() {
        return Read::OutOfMemory;
    }
    let mut got = 0usize;
    // SAFETY: `units` has capacity for `len + 1` code units; napi writes at most that many.
    let status = unsafe {
        napi::sys::napi_get_value_string_utf16(
            call.env,
            value,
            units.as_mut_ptr(),
            len + 1,
            &mut got,
        )
    };
    if status != napi::sys::Status::napi_ok {
        return Read::Absent;
    }
    // SAFETY: napi initialised `got <= len` code units.
    unsafe { units.set_len(got.min(len)) };
    buf.clear();
    if buf
        .try_reserve_exact(units.len().saturating_mul(3))
        .is_err()
    {
        return Read::OutOfMemory;
    }
    for c in char::decode_utf16(units.iter().copied()) {
        buf.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    Read::Str
}
