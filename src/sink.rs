//! The attribute sink: where the writers of one call put the attributes they write when the
//! JavaScript wrapper asks for it (`js/sink.js`), instead of writing them into the attribute map
//! with `napi_set_named_property`.
//!
//! # Why
//! A property that napi adds to an object is a keyed store for V8 (`v8::Object::Set`): past 12
//! properties outside the object, V8 turns the attribute map into a dictionary (slow mode). A
//! complete-mode model span gets 17 `gen_ai.*` attributes on top of Genkit's 8, so every span's
//! map went to slow mode in `onEnd`, each write paid for internalizing its key, a lookup and a
//! transition in V8's runtime, and every later reader (the exporter's serializer) read a
//! dictionary. The wrapper's writer assigns each attribute with a named store
//! (`attrs["gen_ai.usage.cost"] = value`), as the reference processor of seed 000 writes them,
//! which V8 keeps in fast mode up to 128 properties (issue 9, BENCHMARKS.md "Stop 18").
//!
//! # Layout
//! The sink is two JavaScript values the wrapper owns and reuses:
//! - `codes`, an `ArrayBuffer` (or a `Float64Array`) of `1 + 2 * n` `f64` elements: `codes[0]` is the number of entries;
//!   entry `i` is `codes[1 + 2i]` (its code) and `codes[2 + 2i]` (its number, for a number value).
//!   A code is `key << 4 | kind`: `key` is `1 + ` the key's index in [`KEYS`], or `0` when the key
//!   is not in it (its name is then the next element of `values`); `kind` is [`VALUE`] (the value
//!   is the next element of `values`), [`NUMBER`] (`codes[2 + 2i]`), [`TRUE`], [`FALSE`],
//!   [`CONSTANT`] (the string `CONSTANTS[codes[2 + 2i]]`), [`CONSTANT_LIST`] (a new array of
//!   that one string), [`SLICE`] (a range of the call's text: below), [`SLICE_LIST`] (a new array
//!   of that one range) or [`ARGUMENT`] (the call's own `genkit:input` (`codes[2 + 2i]` 0) or
//!   `genkit:output` (1) value, which the wrapper holds).
//! - `values`, an `Array` whose elements the writers set in order (`napi_set_element` on an own
//!   element: no setter runs).
//!
//! The short ASCII strings of a call ([`Sink::put_slice`]) are not made one by one: they are appended
//! to one Latin-1 text, made into one JavaScript string as the call returns and set into
//! `values` where the first of them was recorded; entry `i` of kind [`SLICE`] (or [`SLICE_LIST`])
//! is that text from the previous such entry's end (0 for the first) to `codes[2 + 2i]`, which the
//! wrapper takes with `String.prototype.slice` (V8 keeps a slice of 13 characters or more as a view of
//! the text, no copy). One string and one element instead of one of each per value (about
//! 1,100 instructions a value, BENCHMARKS.md "Stop 23").
//!
//! The entries are kept in Rust during the call and copied into `codes` as it returns
//! ([`Sink::finish`]), so no pointer into its memory is held while JavaScript may run (a
//! getter, a setter, `String.prototype.slice`). A call whose sink is full, or whose sink cannot be
//! read, writes the rest straight into the attribute map as before; one whose `codes` was detached
//! meanwhile writes them all there at the end.

use napi::sys;
use std::cell::{Cell, RefCell};
use std::ptr;

/// The value is the next element of `values`.
pub(crate) const VALUE: u32 = 0;
/// The value is the entry's number.
pub(crate) const NUMBER: u32 = 1;
/// The value is `true`.
pub(crate) const TRUE: u32 = 2;
/// The value is `false`.
pub(crate) const FALSE: u32 = 3;
/// The value is the string [`CONSTANTS`]`[number]`, which the wrapper holds: no JavaScript string
/// is made and no element of `values` set (about a thousand instructions a value, issue 9).
pub(crate) const CONSTANT: u32 = 4;
/// The value is a new one-element array of [`CONSTANTS`]`[number]` (a model span's
/// `gen_ai.response.finish_reasons`, which has one reason in nearly every answer).
pub(crate) const CONSTANT_LIST: u32 = 5;
/// The value is a range of the call's text (module docs), ending at the entry's number.
pub(crate) const SLICE: u32 = 6;
/// The value is one of the call's arguments as the wrapper passed it: its `genkit:input` (the
/// entry's number 0) or `genkit:output` (1), which the wrapper holds (a tool span's arguments and
/// a JSON result as written: no element of `values` set, about 800 instructions a value).
pub(crate) const ARGUMENT: u32 = 7;
/// The value is a new one-element array of a range of the call's text, as [`SLICE`] (a one-element
/// string list that is not a [`CONSTANT`]: complete mode's `gen_ai.request.stop_sequences`, a
/// finish reason outside the table). An array made and an element defined through napi cost
/// about 2,400 instructions (BENCHMARKS.md "Stop 27"); the wrapper's array literal a fraction.
pub(crate) const SLICE_LIST: u32 = 8;
/// Bits of a code below its key.
const KIND_BITS: u32 = 4;
// Every kind fits its bits, and every code (the last key's, with the highest kind) is exact in
// the f64 of `codes` and in the wrapper's 32-bit `>>>` and `&`.
const _: () = assert!(SLICE_LIST < 1 << KIND_BITS && ARGUMENT < 1 << KIND_BITS);
const _: () = assert!(((KEYS.len() as u64 + 1) << KIND_BITS) < 1 << 31);

/// Values the writers write on most spans, named by their index ([`CONSTANT`],
/// [`CONSTANT_LIST`]): operation names (seed 000), the semconv finish reasons and Genkit's own
/// (seed 000 copies Genkit's), and the provider names of complete mode's table
/// (`core::complete::provider_name`). The wrapper takes this very table from [`sink_constants`]
/// when it loads the binding (`js/sink.js` `useConstants`), so the two cannot differ. A string
/// not listed is sent as a value; the list only makes the common ones cheaper.
pub const CONSTANTS: &[&str] = &[
    "chat",
    "invoke_agent",
    "execute_tool",
    "stop",
    "length",
    "tool_call",
    "content_filter",
    "error",
    "unknown",
    "blocked",
    "other",
    "interrupted",
    "gcp.gemini",
    "gcp.vertex_ai",
    "openai",
    "anthropic",
    "deepseek",
    "x_ai",
    "mistral_ai",
    "groq",
    "cohere",
    "perplexity",
    "openrouter",
    "aws.bedrock",
    "azure.ai.openai",
    "azure.ai.inference",
    "ibm.watsonx.ai",
    "googleai",
    "vertexai",
];

/// The longest string in [`CONSTANTS`] (longer ones are not looked up).
const CONSTANT_MAX_LEN: usize = 18;

/// The index of `text` in [`CONSTANTS`], if it is listed.
pub(crate) fn constant(text: &str) -> Option<u32> {
    if text.len() > CONSTANT_MAX_LEN {
        return None;
    }
    CONSTANTS.iter().position(|c| *c == text).map(|i| i as u32)
}

/// [`CONSTANTS`], for the wrapper's sink (`js/sink.js` `useConstants`, when the binding loads).
#[napi]
pub fn sink_constants() -> Vec<String> {
    CONSTANTS.iter().map(|k| k.to_string()).collect()
}

/// The keys the writers write, in the order of `js/sink.js`'s named stores (the tests check each
/// of its cases against this list, through [`sink_keys`]). A key not in this list still goes
/// through the sink, by name. Listed in the order the writers write them (complete mode's model
/// spans, then the others), so [`Sink::put`]'s search from the last key found ends at its first
/// step.
pub const KEYS: &[&str] = &[
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.input.messages",
    "gen_ai.system_instructions",
    "gen_ai.request.temperature",
    "gen_ai.request.max_tokens",
    "gen_ai.request.top_p",
    "gen_ai.request.top_k",
    "gen_ai.request.stop_sequences",
    "gen_ai.request.seed",
    "gen_ai.request.frequency_penalty",
    "gen_ai.request.presence_penalty",
    "gen_ai.output.type",
    "gen_ai.output.messages",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.response.id",
    "gen_ai.usage.cost",
    "gen_ai.response.model",
    "error.type",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.id",
    "gen_ai.agent.name",
    "gen_ai.conversation.id",
    "genkit_for_maple.content.dropped_messages",
    "genkit_for_maple.content.capped",
];

/// Per key length in bytes: bit `i` set for each `KEYS[i]` of that length (one to three keys a
/// length), so that [`key_code`] compares a key with the listed keys of its length only.
const KEYS_BY_LENGTH: [u64; 64] = {
    assert!(KEYS.len() <= 64, "a key's bit must fit a u64");
    let mut table = [0u64; 64];
    let mut i = 0;
    while i < KEYS.len() {
        assert!(KEYS[i].len() < 64, "a key's length must index the table");
        table[KEYS[i].len()] |= 1 << i;
        i += 1;
    }
    table
};

/// `1 +` the index of `key` in [`KEYS`], or `0`. The key at index `from` is tried first (the
/// writers write keys in about [`KEYS`]' order, so the next key is usually the next one), then
/// the keys of `key`'s length ([`KEYS_BY_LENGTH`]; the keys are distinct, so the order of the
/// tries changes only the time: a tool span's first key, `gen_ai.tool.call.arguments`, cost a
/// walk of 26 entries when searched round the list).
fn key_code(key: &[u8], from: usize) -> u32 {
    if KEYS.get(from).is_some_and(|k| k.as_bytes() == key) {
        return from as u32 + 1;
    }
    let mut bits = KEYS_BY_LENGTH.get(key.len()).copied().unwrap_or(0);
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        if KEYS.get(i).is_some_and(|k| k.as_bytes() == key) {
            return i as u32 + 1;
        }
        bits &= bits - 1;
    }
    0
}

/// [`KEYS`], for the test that checks each case of `js/sink.js` writes the key of its code.
#[napi]
pub fn sink_keys() -> Vec<String> {
    KEYS.iter().map(|k| k.to_string()).collect()
}

/// The most entries a sink records; the wrapper's `codes` has room for them (`js/sink.js`
/// `ENTRIES`).
pub(crate) const ENTRIES: usize = 64;

/// The longest string, in bytes, that goes into the [`SLICE`] text; a longer one is made on its
/// own (its copy then costs far more than the string and element saved), so a span's long
/// content never sits in the text that its small attributes are views of (V8 keeps a slice of
/// 13 characters or more as a view of the whole text). One call's text is at most [`ENTRIES`]
/// times this.
const SLICE_MAX: usize = 4096;

/// The text buffer kept for the next call when its capacity is at most this.
const TEXT_KEEP: usize = 64 << 10;

thread_local! {
    /// The [`SLICE`] text buffer between calls (a call re-entered from JavaScript finds it taken
    /// and starts an empty one).
    static TEXT: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// The entries' storage between calls (as [`TEXT`]): [`ENTRIES`] of them, allocated once per
    /// thread instead of an array initialised and moved on every call.
    static ENTRY_STORE: Cell<Vec<Entry>> = const { Cell::new(Vec::new()) };
}

/// One recorded attribute.
#[derive(Clone, Copy)]
struct Entry {
    /// `key << KIND_BITS | kind` (module docs).
    code: u32,
    /// Where a [`SLICE`] entry's range of the text begins (it ends at `number`). A `u32` beside
    /// `code`, so an entry stays 32 bytes (the text is at most [`ENTRIES`] * [`SLICE_MAX`]).
    start: u32,
    /// The number of a [`NUMBER`] entry.
    number: f64,
    /// The value of a [`VALUE`] or [`ARGUMENT`] entry (a handle of the current call), else null.
    value: sys::napi_value,
    /// The key's name for a key not in [`KEYS`] (a handle of the current call), else null.
    name: sys::napi_value,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32);
const _: () = assert!(ENTRIES * SLICE_MAX <= u32::MAX as usize);

/// One call's sink. Entries are kept in Rust while the writers run (JavaScript may run then: a
/// getter, a setter of an attribute written directly, `String.prototype.slice`), their values
/// set into `values` as they come, and copied into `codes` by [`Sink::finish`], right before the
/// call returns, when no JavaScript runs between reading the typed array's memory and writing
/// it. Only used during the napi call that made it, on its JavaScript thread.
pub(crate) struct Sink {
    env: sys::napi_env,
    codes: sys::napi_value,
    values: sys::napi_value,
    /// The entries recorded (at most [`ENTRIES`], within the capacity reserved in [`Sink::of`]).
    entries: RefCell<Vec<Entry>>,
    /// Entries recorded.
    len: Cell<usize>,
    /// Elements of `values` written.
    next_value: Cell<u32>,
    /// Elements `values` had when the call began.
    values_len: u32,
    /// Where [`key_code`] starts: after the last key found.
    next_key: Cell<usize>,
    /// A write into `values` failed (an accessor the caller put there threw): the sink takes no
    /// more entries.
    broken: Cell<bool>,
    /// The [`SLICE`] entries' text (ASCII).
    text: RefCell<Vec<u8>>,
    /// The element of `values` the text goes into, once a [`SLICE`] entry is recorded.
    text_at: Cell<Option<u32>>,
    /// The handles of the call's `genkit:input` and `genkit:output` arguments ([`ARGUMENT`]);
    /// null for one the call was not given.
    arguments: [sys::napi_value; 2],
}

impl Drop for Sink {
    fn drop(&mut self) {
        let mut entries = std::mem::take(self.entries.get_mut());
        entries.clear();
        ENTRY_STORE.set(entries);
        let mut text = std::mem::take(self.text.get_mut());
        if text.capacity() <= TEXT_KEEP {
            text.clear();
            TEXT.set(text);
        }
    }
}

/// The elements of `codes` as `f64`s (pointer, length): the wrapper's `ArrayBuffer` (its
/// `Float64Array` is a view of all of it, `js/sink.js`), or a `Float64Array`; `None` when it is
/// neither, is detached, or (the typed array) is over a `SharedArrayBuffer`.
fn float64_elements(env: sys::napi_env, codes: sys::napi_value) -> Option<(*mut f64, usize)> {
    let mut data = ptr::null_mut();
    let mut bytes = 0usize;
    // SAFETY: live `env` of the current call; valid out-pointers. A value that is not an
    // `ArrayBuffer` (a `SharedArrayBuffer` is not one) makes napi return `napi_invalid_arg`
    // without an exception; a detached one reports no data and length 0. napi reads the
    // buffer's current length (a resizable buffer's too): `bytes` is what it holds now.
    // Cheaper than the typed array's info (about 500 instructions a call, BENCHMARKS.md
    // "Stop 26").
    let status = unsafe { sys::napi_get_arraybuffer_info(env, codes, &mut data, &mut bytes) };
    if status == sys::Status::napi_ok {
        let data = data.cast::<f64>();
        return (!data.is_null() && data.is_aligned()).then_some((data, bytes / 8));
    }
    typed_float64_elements(env, codes)
}

/// [`float64_elements`] of a `Float64Array`.
fn typed_float64_elements(env: sys::napi_env, codes: sys::napi_value) -> Option<(*mut f64, usize)> {
    let mut kind = sys::TypedarrayType::int8_array;
    let mut length = 0usize;
    let mut data = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    let mut offset = 0usize;
    // SAFETY: live `env` of the current call; every out-pointer is valid. A value that is not a
    // typed array makes napi return `napi_invalid_arg` without an exception.
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env,
            codes,
            &mut kind,
            &mut length,
            &mut data,
            &mut buffer,
            &mut offset,
        )
    };
    let data = data.cast::<f64>();
    if status != sys::Status::napi_ok
        || kind != sys::TypedarrayType::float64_array
        || data.is_null()
        || !data.is_aligned()
    {
        return None;
    }
    // Not over a SharedArrayBuffer: another thread could access that memory while `finish`
    // writes it (`napi_is_arraybuffer` is false for a shared one).
    let mut plain = false;
    // SAFETY: live `env`; `buffer` is the typed array's buffer napi returned above.
    let status = unsafe { sys::napi_is_arraybuffer(env, buffer, &mut plain) };
    (status == sys::Status::napi_ok && plain).then_some((data, length))
}

impl Sink {
    /// The sink of `codes` (the wrapper's `ArrayBuffer` of `1 + 2 *` [`ENTRIES`] `f64`s, or a
    /// `Float64Array`) and `values` (an `Array`); `None` when `values` is something else (the
    /// writers then write into the attribute map). `codes` is read only in [`Sink::finish`],
    /// which writes every entry into the attribute map itself when it cannot hold them (any
    /// more): asking here too would cost a call into napi for an answer the wrapper's sink never
    /// changes.
    /// `arguments`: the handles of the call's `genkit:input` and `genkit:output` values as the
    /// wrapper passed them (null when not given), which the wrapper gets back as [`ARGUMENT`]
    /// entries instead of elements of `values`.
    pub(crate) fn of(
        env: sys::napi_env,
        codes: sys::napi_value,
        values: sys::napi_value,
        arguments: [sys::napi_value; 2],
    ) -> Option<Sink> {
        let mut values_len = 0u32;
        // SAFETY: live `env`, a handle of the call, valid out-pointer. napi checks that `values`
        // is an array itself (`napi_array_expected` otherwise, no exception), so no
        // `napi_is_array` call before it.
        if unsafe { sys::napi_get_array_length(env, values, &mut values_len) }
            != sys::Status::napi_ok
        {
            return None;
        }
        // A fixed size, reserved once per thread; should even that fail, no sink.
        let mut entries = ENTRY_STORE.take();
        entries.clear();
        if entries.try_reserve_exact(ENTRIES).is_err() {
            return None;
        }
        Some(Sink {
            env,
            codes,
            values,
            entries: RefCell::new(entries),
            len: Cell::new(0),
            next_value: Cell::new(0),
            values_len,
            broken: Cell::new(false),
            next_key: Cell::new(0),
            text: RefCell::new(TEXT.take()),
            text_at: Cell::new(None),
            arguments,
        })
    }

    /// Appends element `value` to `values`; `false` when napi refused.
    fn push_value(&self, value: sys::napi_value) -> bool {
        let at = self.next_value.get();
        // SAFETY: live `env`; `values` is an array (checked in `of`) and `value` a handle of this
        // call. In the wrapper's array (js/sink.js: packed, every element its own data property)
        // this replaces an own element, so no setter runs; another caller's array may run one,
        // which cannot touch Rust's memory (no pointer is held), and a failure is handled below.
        let status = unsafe { sys::napi_set_element(self.env, self.values, at, value) };
        if status != sys::Status::napi_ok {
            self.broken.set(true);
            let mut error = ptr::null_mut();
            // SAFETY: live `env`, valid out-pointer; a no-op when no exception is pending.
            unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
            return false;
        }
        self.next_value.set(at + 1);
        true
    }

    /// Records `key` = the value `kind`/`number`/`value` describes; `false` when the sink has no
    /// room or napi refused (the caller then writes the attribute itself).
    pub(crate) fn put(&self, key: &[u8], kind: u32, number: f64, value: sys::napi_value) -> bool {
        // One of the call's own arguments, written as it is, is named by its position. Handles
        // are equal only for the same slot: the argument itself.
        let argument = match kind {
            VALUE if !value.is_null() => self.arguments.iter().position(|&a| a == value),
            _ => None,
        };
        let (kind, number) = match argument {
            Some(at) => (ARGUMENT, at as f64),
            None => (kind, number),
        };
        let Some((i, key_index)) = self.room_for(key, u32::from(kind == VALUE)) else {
            return false;
        };
        // The slot first, so nothing is pushed for an entry that cannot be recorded: entry `i` is
        // the next (one is pushed per entry recorded), within the capacity reserved.
        let Ok(mut entries) = self.entries.try_borrow_mut() else {
            return false;
        };
        if entries.len() != i || i >= entries.capacity() {
            return false;
        }
        let Some(name) = self.push_key(key, key_index) else {
            return false;
        };
        if kind == VALUE && !self.push_value(value) {
            // The name went in without its value: step back over it.
            if key_index == 0 {
                self.next_value.set(self.next_value.get() - 1);
            }
            return false;
        }
        entries.push(Entry {
            code: key_index << KIND_BITS | kind,
            number,
            value,
            name,
            start: 0,
        });
        self.len.set(i + 1);
        true
    }

    /// Whether one more entry for `key` fits, with `extra` value slots besides its name's (a key
    /// [`KEYS`] does not list takes one for its name): `(its index, the key's code)`, `None` when
    /// the sink is broken or full.
    fn room_for(&self, key: &[u8], extra: u32) -> Option<(usize, u32)> {
        let i = self.len.get();
        let key_index = key_code(key, self.next_key.get());
        let needs = u32::from(key_index == 0) + extra;
        if self.broken.get() || i >= ENTRIES || self.next_value.get() + needs > self.values_len {
            return None;
        }
        Some((i, key_index))
    }

    /// The key part of an entry being recorded: a key [`KEYS`] lists (`key_index > 0`) becomes
    /// the next search's start and has no name (null); another has its name made and pushed into
    /// `values`. `None` when napi refused (nothing pushed).
    fn push_key(&self, key: &[u8], key_index: u32) -> Option<sys::napi_value> {
        if key_index > 0 {
            self.next_key.set(key_index as usize);
            return Some(ptr::null_mut());
        }
        // The writers' keys are ASCII, valid Latin-1.
        let name = self.latin1(key);
        (!name.is_null() && self.push_value(name)).then_some(name)
    }

    /// Records `key` = the ASCII string `text` as a [`SLICE`] of the call's text (`list`: as a
    /// one-element array of it, [`SLICE_LIST`]); `false` when `text` is longer than
    /// [`SLICE_MAX`] or not ASCII, the sink has no room, the text cannot grow (no memory), or
    /// napi refused (the caller then makes the value itself).
    pub(crate) fn put_slice(&self, key: &[u8], text: &str, list: bool) -> bool {
        let first = self.text_at.get().is_none();
        let Some((i, key_index)) = self.room_for(key, u32::from(first)) else {
            return false;
        };
        let (Ok(mut entries), Ok(mut buffer)) =
            (self.entries.try_borrow_mut(), self.text.try_borrow_mut())
        else {
            return false;
        };
        let start = buffer.len();
        if text.len() > SLICE_MAX
            || !super::utf::is_ascii(text)
            || buffer.try_reserve(text.len()).is_err()
        {
            return false;
        }
        if entries.len() != i || i >= entries.capacity() {
            return false;
        }
        let Some(name) = self.push_key(key, key_index) else {
            return false;
        };
        if first {
            // The text's element, reserved here and set in `finish` (one `napi_set_element`, not
            // two): until then it is left as it is, and read only once set (when it cannot be,
            // `codes[0]` stays 0 and every entry is written here).
            let at = self.next_value.get();
            self.next_value.set(at + 1);
            self.text_at.set(Some(at));
        }
        buffer.extend_from_slice(text.as_bytes());
        entries.push(Entry {
            code: key_index << KIND_BITS | if list { SLICE_LIST } else { SLICE },
            number: buffer.len() as f64,
            value: ptr::null_mut(),
            name,
            // At most ENTRIES * SLICE_MAX (checked at compile time): exact in a u32.
            start: start as u32,
        });
        self.len.set(i + 1);
        true
    }

    /// Copies the entries into `codes` for the wrapper. When `codes` can no longer hold them (the
    /// array was replaced or detached while JavaScript ran), writes them into the attribute map
    /// `object` instead (known keys through `set`, others by their name's handle), leaves
    /// `codes[0]` at 0 when it can and lets go of the values pushed into `values`. Returns the
    /// flags of those writes.
    pub(crate) fn finish(
        &self,
        object: sys::napi_value,
        set: impl Fn(&str, sys::napi_value) -> u32,
    ) -> u32 {
        let n = self.len.get();
        let Ok(entries) = self.entries.try_borrow() else {
            return 0;
        };
        let entries = &entries[..n.min(entries.len())];
        // The text of the SLICE entries into its element first (napi may run a setter of a
        // caller's `values` there, so before `codes` is read); when it cannot be made or set,
        // every entry is written here instead.
        let text_set = match self.text_at.get() {
            None => true,
            Some(at) => self.set_text(at),
        };
        match float64_elements(self.env, self.codes) {
            Some((data, length)) if text_set && length > 2 * n => {
                // SAFETY: `data` points to `length` aligned f64 elements of the `ArrayBuffer` (or
                // of the typed array over a non-shared buffer), read just now; no JavaScript runs until this loop ends (no
                // napi call in it), so the buffer cannot be detached or resized meanwhile, no
                // other thread can reach it, and no Rust reference to the elements exists (raw
                // writes only). `2 * n < length` bounds every index.
                unsafe {
                    data.write(n as f64);
                    for (i, entry) in entries.iter().enumerate() {
                        data.add(1 + 2 * i).write(f64::from(entry.code));
                        data.add(2 + 2 * i).write(entry.number);
                    }
                }
                0
            }
            other => {
                if let Some((data, length)) = other {
                    if length > 0 {
                        // SAFETY: as above, for element 0 (`length > 0`).
                        unsafe { data.write(0.0) };
                    }
                }
                let mut flags = 0;
                for entry in entries {
                    flags |= self.write_directly(object, entry, &set);
                }
                self.let_go();
                flags
            }
        }
    }

    /// Makes the [`SLICE`] text into one string and sets it as element `at` of `values`; `false`
    /// when napi refused (the exception, if any, cleared).
    fn set_text(&self, at: u32) -> bool {
        let Ok(text) = self.text.try_borrow() else {
            return false;
        };
        let string = self.latin1(&text);
        if string.is_null() {
            return false;
        }
        // SAFETY: as in `push_value`: element `at` was pushed by this call.
        let status = unsafe { sys::napi_set_element(self.env, self.values, at, string) };
        if status == sys::Status::napi_ok {
            return true;
        }
        let mut error = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer; a no-op when no exception is pending.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
        false
    }

    /// Sets the elements of `values` this call pushed back to `undefined`.
    fn let_go(&self) {
        let mut undefined = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer.
        unsafe { sys::napi_get_undefined(self.env, &mut undefined) };
        for at in 0..self.next_value.get() {
            // SAFETY: as in `push_value`; a failure leaves that element as it was.
            if unsafe { sys::napi_set_element(self.env, self.values, at, undefined) }
                != sys::Status::napi_ok
            {
                let mut error = ptr::null_mut();
                // SAFETY: live `env`, valid out-pointer.
                unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
            }
        }
    }

    /// A JavaScript string of the Latin-1 bytes `text`; null when napi refused.
    fn latin1(&self, text: &[u8]) -> sys::napi_value {
        let mut out = ptr::null_mut();
        // SAFETY: live `env` of the current call; `text` is valid for `text.len()` bytes; a valid
        // out-pointer (left null when napi refuses).
        let status = unsafe {
            sys::napi_create_string_latin1(
                self.env,
                text.as_ptr().cast(),
                text.len() as isize,
                &mut out,
            )
        };
        if status == sys::Status::napi_ok {
            out
        } else {
            ptr::null_mut()
        }
    }

    /// The JavaScript value of a [`CONSTANT`] entry (`list`: of a [`CONSTANT_LIST`] one), for the
    /// writes made here when the wrapper cannot make them; null when napi refused.
    fn constant_value(&self, index: usize, list: bool) -> sys::napi_value {
        let Some(text) = CONSTANTS.get(index) else {
            return ptr::null_mut();
        };
        self.text_value(text.as_bytes(), list)
    }

    /// The JavaScript string of the Latin-1 bytes `text` (`list`: a one-element array of it);
    /// null when napi refused.
    fn text_value(&self, text: &[u8], list: bool) -> sys::napi_value {
        let string = self.latin1(text);
        if string.is_null() || !list {
            return string;
        }
        let mut array = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer.
        let made = unsafe { sys::napi_create_array_with_length(self.env, 1, &mut array) };
        // Element 0 defined as an own data property, as an array literal has it: no setter of
        // `Array.prototype` runs.
        if made == sys::Status::napi_ok && super::define_element(self.env, array, 0, string) {
            return array;
        }
        let mut error = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer; a no-op when no exception is pending.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
        ptr::null_mut()
    }

    /// Writes one entry into the attribute map `object`.
    fn write_directly(
        &self,
        object: sys::napi_value,
        entry: &Entry,
        set: &impl Fn(&str, sys::napi_value) -> u32,
    ) -> u32 {
        let key_index = (entry.code >> KIND_BITS) as usize;
        let mut value = entry.value;
        match entry.code & ((1 << KIND_BITS) - 1) {
            VALUE | ARGUMENT => {}
            NUMBER => {
                // SAFETY: live `env` of the current call, valid out-pointer.
                unsafe { sys::napi_create_double(self.env, entry.number, &mut value) };
            }
            kind @ (CONSTANT | CONSTANT_LIST) => {
                value = self.constant_value(entry.number as usize, kind == CONSTANT_LIST);
                if value.is_null() {
                    return super::WRITE_FAILED;
                }
            }
            kind @ (SLICE | SLICE_LIST) => {
                let Ok(text) = self.text.try_borrow() else {
                    return super::WRITE_FAILED;
                };
                let range = text.get(entry.start as usize..entry.number as usize);
                value = range.map_or(ptr::null_mut(), |bytes| {
                    self.text_value(bytes, kind == SLICE_LIST)
                });
                if value.is_null() {
                    return super::WRITE_FAILED;
                }
            }
            kind => {
                // SAFETY: as above.
                unsafe { sys::napi_get_boolean(self.env, kind == TRUE, &mut value) };
            }
        }
        if key_index > 0 {
            return KEYS.get(key_index - 1).map_or(0, |key| set(key, value));
        }
        // SAFETY: live handles of the current call: the attribute map, the key string made in
        // `put`, the value.
        let status = unsafe { sys::napi_set_property(self.env, object, entry.name, value) };
        if status == sys::Status::napi_ok {
            return 0;
        }
        let mut error = ptr::null_mut();
        // SAFETY: live `env`, valid out-pointer.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut error) };
        super::WRITE_FAILED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_constant_is_found_and_others_are_not() {
        for (i, c) in CONSTANTS.iter().enumerate() {
            assert_eq!(constant(c), Some(i as u32), "{c}");
            assert!(c.len() <= CONSTANT_MAX_LEN, "{c}: raise CONSTANT_MAX_LEN");
            assert!(c.is_ascii(), "{c}");
        }
        assert_eq!(
            CONSTANTS.iter().map(|c| c.len()).max(),
            Some(CONSTANT_MAX_LEN),
            "CONSTANT_MAX_LEN is the longest"
        );
        for other in [
            "",
            "Chat",
            "chat ",
            "stop\0",
            "gcp.gemini.x",
            "a".repeat(400).as_str(),
        ] {
            assert_eq!(constant(other), None, "{other:?}");
        }
        let mut seen = std::collections::HashSet::new();
        assert!(
            CONSTANTS.iter().all(|c| seen.insert(*c)),
            "a constant is listed twice"
        );
    }

    #[test]
    fn every_key_has_one_code_and_unknown_keys_have_none() {
        for from in 0..KEYS.len() + 2 {
            for (i, key) in KEYS.iter().enumerate() {
                assert_eq!(
                    key_code(key.as_bytes(), from),
                    i as u32 + 1,
                    "{key} from {from}"
                );
            }
            assert_eq!(key_code(b"gen_ai.unknown", from), 0);
            assert_eq!(key_code(b"", from), 0);
            // Unlisted keys of a listed key's length, and one longer than the table.
            for key in KEYS {
                let mut other = key.as_bytes().to_vec();
                if let Some(last) = other.last_mut() {
                    *last ^= 0x20;
                }
                assert_eq!(key_code(&other, from), 0, "{key} changed, from {from}");
            }
            assert_eq!(key_code(&[b'g'; 100], from), 0);
        }
        let mut seen = std::collections::HashSet::new();
        assert!(
            KEYS.iter().all(|k| seen.insert(*k)),
            "a key is listed twice"
        );
    }
}
