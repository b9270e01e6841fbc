//! Genkit's side: the shapes Genkit writes into `genkit:input` and `genkit:output` of a model span
//! (`GenerateRequest` / `GenerateResponse` after `JSON.stringify`), read without building a tree.
//!
//! Every value that is copied through to the GenAI attributes unchanged (text, reasoning, tool
//! input and output, roles, finish reasons, token counts) stays a borrowed [`Raw`]: its JSON
//! source text, written back verbatim. Because Genkit wrote the JSON with `JSON.stringify`, the
//! source text is byte-identical to what the reference processor (seed 000) writes after its own
//! `JSON.parse` + `JSON.stringify`; for hand-made, non-canonical JSON the two are equal after
//! `JSON.parse`/`JSON.stringify` normalisation.
//!
//! The readers follow `JSON.parse` semantics wherever the reference depends on them:
//! a repeated key keeps its last value, keys are compared after unescaping, and a value of an
//! unexpected JSON type is kept as [`Shape::Other`] (or [`Shape::Null`]) instead of failing the
//! whole parse, so the mapping can decide what the reference would have done with it.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt;

/// A JSON value kept as its source text (no surrounding whitespace), a slice of the text it was
/// read from: what serde_json's borrowed `RawValue` holds (read through it by serde_json, and
/// sliced from the source directly by the core's fast reader of Genkit's shapes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// The JSON source text.
    pub fn get(&self) -> &'a str {
        self.0
    }

    /// `text` when it is one valid JSON value without surrounding whitespace (serde_json's
    /// answer), else `None`.
    pub fn from_json(text: &'a str) -> Option<Raw<'a>> {
        let raw: &RawValue = serde_json::from_str(text).ok()?;
        (raw.get().len() == text.len()).then_some(Raw(text))
    }
}

impl fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Raw({})", self.0)
    }
}

impl<'de> Deserialize<'de> for Raw<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(d).map(|raw| Raw(raw.get()))
    }
}

/// A JSON value that should be an object of type `T`, with what it was when it was not.
#[derive(Debug)]
pub enum Shape<T> {
    /// A JSON object, read as `T`.
    Object(T),
    /// JSON `null`.
    Null,
    /// Any other JSON value: `truthy` is its JavaScript truthiness (`false`, `0`, `""` are falsy;
    /// arrays, `true`, other numbers and strings are truthy).
    Other { truthy: bool },
}

impl<T> Shape<T> {
    /// The object, when the value is one.
    pub fn object(&self) -> Option<&T> {
        match self {
            Shape::Object(t) => Some(t),
            _ => None,
        }
    }
}

/// A JSON value that should be an array of `T`.
#[derive(Debug)]
pub enum ArrayShape<T> {
    /// A JSON array, each element read as `T`.
    Array(Vec<T>),
    /// JSON `null`.
    Null,
    /// Any other JSON value.
    Other,
}

/// `genkit:input` of a model span: Genkit's `GenerateRequest`. Only `messages` is read; `config`,
/// `tools`, `output`, `docs` are skipped without allocation.
#[derive(Debug, Default)]
pub struct GenerateRequest<'a> {
    /// `messages`: `None` when the key is absent.
    pub messages: Option<ArrayShape<Shape<Message<'a>>>>,
}

/// A Genkit `MessageData`: `{ role, content: Part[] }`.
#[derive(Debug, Default)]
pub struct Message<'a> {
    /// `role` as written (`"user"`, `"model"`, `"system"`, `"tool"`; any JSON value is kept).
    pub role: Option<Raw<'a>>,
    /// `content`: `None` when absent.
    pub content: Option<ArrayShape<Shape<Part<'a>>>>,
}

impl Drop for Message<'_> {
    /// Gives the part list's allocation back to the thread's pool (see [`part_lists`]).
    fn drop(&mut self) {
        if let Some(ArrayShape::Array(parts)) = self.content.take() {
            part_lists::give(parts);
        }
    }
}

/// A pool of empty part lists for each thread, so that a model span's 30-40 messages do not each
/// allocate and free a part list (issue 9: at 10 KB most of a span's `malloc` calls, and more
/// blocks of one size than glibc's per-thread cache keeps). A list is taken by either reader
/// (the fast one and serde_json's, through [`Keep::list`]) for each message's `content` and given
/// back, cleared, when the [`Message`] is dropped.
///
/// Bounded: at most [`part_lists::LISTS`] lists of at most [`part_lists::CAPACITY`] parts are
/// kept (about 110 KB a thread at most); others are freed as before. The pool never panics: a
/// thread being torn down, or a pool already borrowed, takes and gives nothing.
pub(crate) mod part_lists {
    use super::{Part, Shape};
    use std::cell::RefCell;

    /// The most lists the pool keeps.
    pub(crate) const LISTS: usize = 64;
    /// The largest capacity (in parts) of a list the pool keeps.
    pub(crate) const CAPACITY: usize = 8;

    thread_local! {
        static POOL: RefCell<Vec<Vec<Shape<Part<'static>>>>> = const { RefCell::new(Vec::new()) };
    }

    /// The same allocation, empty, as a list of another lifetime: `Vec`'s in-place collection
    /// keeps the allocation when the element types have one layout (a `Part` of any lifetime
    /// does), and an empty list has no element to convert, so no borrow crosses.
    // `filter_map` rather than `filter`, which clippy suggests: only `filter_map` changes the
    // element type, and it has no panic path as `map(|_| unreachable!())` would.
    #[allow(clippy::unnecessary_filter_map)]
    fn relabel<'a, 'b>(list: Vec<Shape<Part<'a>>>) -> Vec<Shape<Part<'b>>> {
        list.into_iter().filter_map(|_| None).collect()
    }

    /// An empty list from the pool, or a new one.
    pub(crate) fn take<'a>() -> Vec<Shape<Part<'a>>> {
        POOL.try_with(|pool| pool.try_borrow_mut().ok()?.pop())
            .ok()
            .flatten()
            .map_or_else(Vec::new, relabel)
    }

    /// Clears `list` and keeps its allocation in the pool when there is room.
    pub(crate) fn give(mut list: Vec<Shape<Part<'_>>>) {
        if list.capacity() == 0 || list.capacity() > CAPACITY {
            return;
        }
        list.clear();
        let list = relabel(list);
        let _ = POOL.try_with(|pool| {
            if let Ok(mut pool) = pool.try_borrow_mut() {
                if pool.len() < LISTS && pool.try_reserve(1).is_ok() {
                    pool.push(list);
                }
            }
        });
    }
}

/// A Genkit `Part`. Only the keys a mapping reads: `text`, `reasoning`, `toolRequest`,
/// `toolResponse` (seed 000), and `media` (complete mode's rule 7; the reference mapping drops
/// it). `data`, `custom`, `metadata` parts are dropped.
#[derive(Debug, Default)]
pub struct Part<'a> {
    /// `text`, any JSON value (present even when `null`).
    pub text: Option<Raw<'a>>,
    /// `reasoning`, any JSON value.
    pub reasoning: Option<Raw<'a>>,
    /// `toolRequest`: `{ name, ref?, input? }`.
    pub tool_request: Option<Shape<ToolPayload<'a>>>,
    /// `toolResponse`: `{ name, ref?, output? }`.
    pub tool_response: Option<Shape<ToolPayload<'a>>>,
    /// `media`: `{ url, contentType? }`; read for complete mode's media parts (issue 10 rule 7),
    /// dropped by the reference mapping.
    pub media: Option<Shape<Media<'a>>>,
}

/// The body of a `media` part.
#[derive(Debug, Default)]
pub struct Media<'a> {
    /// `url`: a `data:` URL or a remote URL (`https:`, `gs:`), any JSON value.
    pub url: Option<Raw<'a>>,
    /// `contentType`: the MIME type, any JSON value.
    pub content_type: Option<Raw<'a>>,
}

/// The body of a `toolRequest` (`input`) or `toolResponse` (`output`) part.
#[derive(Debug, Default)]
pub struct ToolPayload<'a> {
    /// `name`.
    pub name: Option<Raw<'a>>,
    /// `ref`: the call id that pairs a request with its response.
    pub reference: Option<Raw<'a>>,
    /// `input`: what a `toolRequest` passes to the tool.
    pub input: Option<Raw<'a>>,
    /// `output`: what a `toolResponse` got back.
    pub output: Option<Raw<'a>>,
}

/// `genkit:output` of a model span: Genkit's `GenerateResponse` (`ModelResponseData`).
#[derive(Debug, Default)]
pub struct GenerateResponse<'a> {
    /// `message`: the answer, when the plugin reports it at the top level.
    pub message: Option<Shape<Message<'a>>>,
    /// `finishReason`, any JSON value.
    pub finish_reason: Option<Raw<'a>>,
    /// `usage`: `{ inputTokens, outputTokens, ... }`.
    pub usage: Option<Shape<Usage<'a>>>,
    /// `candidates`: the older `GenerateResponse` form some plugins still report
    /// (`@genkit-ai/google-genai`, `@genkit-ai/anthropic`).
    pub candidates: Option<ArrayShape<Shape<Candidate<'a>>>>,
}

/// Genkit's `GenerationUsage`: only the keys the mapping writes.
#[derive(Debug, Default)]
pub struct Usage<'a> {
    /// `inputTokens`, any JSON value.
    pub input_tokens: Option<Raw<'a>>,
    /// `outputTokens`, any JSON value.
    pub output_tokens: Option<Raw<'a>>,
}

/// One entry of `candidates`: `{ index, message, finishReason, ... }`.
#[derive(Debug, Default)]
pub struct Candidate<'a> {
    /// `message`.
    pub message: Option<Shape<Message<'a>>>,
    /// `finishReason`, any JSON value.
    pub finish_reason: Option<Raw<'a>>,
}

/// Where in their source text the pieces of some messages lie: from the first byte of the
/// earliest [`Raw`] piece to the last byte of the latest (roles, text, reasoning, tool request and
/// response names, refs, inputs and outputs, media URLs and types). The writers copy a model
/// span's content out of these pieces, so a secret scan of the source can be limited to them
/// ([`crate::scrub::SourceScrubber::of_region`]): `genkit:input`'s `tools` and `config`
/// and `genkit:output`'s `custom` (the provider's raw answer) are not scanned (on the real Genkit
/// corpus, 77% of `genkit:input` and 66% of `genkit:output`). Addresses, not offsets: a piece of
/// another text than the source is left out by [`Extent::in_source`].
#[derive(Debug, Clone, Copy)]
pub struct Extent {
    /// Address of the first byte; `usize::MAX` while no piece was added.
    start: usize,
    /// Address one past the last byte.
    end: usize,
}

impl Default for Extent {
    fn default() -> Extent {
        Extent {
            start: usize::MAX,
            end: 0,
        }
    }
}

impl Extent {
    /// The extent of every piece of `messages`, in the order they are written in their source
    /// (the elements of a JSON array, or answers in the order of theirs). Only the first and
    /// the last message that hold a piece are visited: each message's pieces lie inside its
    /// own object's text, after those of the messages before it.
    pub fn of_messages<'m, 'a: 'm, I>(messages: I) -> Extent
    where
        I: IntoIterator<Item = &'m Message<'a>>,
        I::IntoIter: DoubleEndedIterator,
    {
        let mut extent = Extent::default();
        let mut messages = messages.into_iter();
        for message in messages.by_ref() {
            extent.message(message);
            if extent.start != usize::MAX {
                break;
            }
        }
        let first = extent;
        for message in messages.rev() {
            extent.message(message);
            if extent.end != first.end {
                break;
            }
        }
        extent
    }

    /// Adds the pieces of `message`.
    fn message(&mut self, message: &Message<'_>) {
        self.raw(message.role);
        let Some(ArrayShape::Array(parts)) = &message.content else {
            return;
        };
        for part in parts {
            let Shape::Object(part) = part else { continue };
            self.raw(part.text);
            self.raw(part.reasoning);
            for payload in [&part.tool_request, &part.tool_response] {
                if let Some(Shape::Object(p)) = payload {
                    for raw in [p.name, p.reference, p.input, p.output] {
                        self.raw(raw);
                    }
                }
            }
            if let Some(Shape::Object(media)) = &part.media {
                self.raw(media.url);
                self.raw(media.content_type);
            }
        }
    }

    fn raw(&mut self, raw: Option<Raw<'_>>) {
        if let Some(raw) = raw {
            let text = raw.get();
            let at = text.as_ptr() as usize;
            self.start = self.start.min(at);
            self.end = self.end.max(at.saturating_add(text.len()));
        }
    }

    /// The byte range of `source` the extent covers (clipped to it); `None` when it covers no
    /// byte of it (no piece added, or pieces of another text).
    pub fn in_source(&self, source: &str) -> Option<std::ops::Range<usize>> {
        let base = source.as_ptr() as usize;
        let start = self.start.max(base) - base;
        let end = self.end.min(base + source.len()).checked_sub(base)?;
        (start < end).then_some(start..end)
    }
}

// ---------------------------------------------------------------------------------------------
// Readers.

/// Compares an object key, after unescaping, with a list of names. Keys are read as validated
/// strings: serde_json's byte reading skips the check for raw control characters, which
/// `JSON.parse` rejects (`{"a<LF>b":1}` is not JSON). A key holding a lone surrogate escape fails
/// the parse; `mapping::parse_failure` then sends the span to the JavaScript mapping.
struct KeyIn(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeyIn {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIn {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|name| name.as_bytes() == v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.visit_bytes(v.as_bytes())
    }
}

/// Reads an object's known keys into `T`; implemented by each Genkit shape.
pub(crate) trait Fields<'de>: Default {
    const NAMES: &'static [&'static str];
    /// Reads the value of key `NAMES[index]` from `source` (a repeated key overwrites:
    /// `JSON.parse` keeps the last).
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error>;
}

/// Where a [`Fields`] shape reads the value of one of its keys from: serde_json's deserializer
/// (through [`SerdeSource`]) or the fast reader [`Fast`]. One set of field rules for both.
pub(crate) trait Source<'de> {
    /// Why a value could not be read.
    type Error;
    /// The value as its JSON text; serde's `Option` would turn `null` into `None`, but the
    /// reference treats a present `null` as present (`null !== undefined`).
    fn raw(&mut self) -> Result<Option<Raw<'de>>, Self::Error>;
    /// The value read as `T` (present: `Some`).
    fn value<T: Value<'de>>(&mut self) -> Result<Option<T>, Self::Error>;
    /// [`Self::value`] into `slot`, where the source can without building the value elsewhere
    /// and moving it ([`Fast`]: an object is read into its field where it stays; a response's
    /// shapes are hundreds of bytes, and each move of one a `memcpy`).
    fn value_into<T: Value<'de>>(&mut self, slot: &mut Option<T>) -> Result<(), Self::Error> {
        *slot = self.value()?;
        Ok(())
    }
    /// Skips the value.
    fn skip(&mut self) -> Result<(), Self::Error>;
}

/// A serde `MapAccess` positioned before a value, as a [`Source`].
pub(crate) struct SerdeSource<'m, A>(&'m mut A);

impl<'de, A: MapAccess<'de>> Source<'de> for SerdeSource<'_, A> {
    type Error = A::Error;
    fn raw(&mut self) -> Result<Option<Raw<'de>>, A::Error> {
        self.0.next_value::<Raw<'de>>().map(Some)
    }
    fn value<T: Value<'de>>(&mut self) -> Result<Option<T>, A::Error> {
        self.0.next_value::<T>().map(Some)
    }
    fn skip(&mut self) -> Result<(), A::Error> {
        self.0.next_value::<IgnoredAny>().map(|_| ())
    }
}

fn read_object<'de, T: Fields<'de>, A: MapAccess<'de>>(mut map: A) -> Result<T, A::Error> {
    let mut value = T::default();
    while let Some(key) = map.next_key_seed(KeyIn(T::NAMES))? {
        match key {
            Some(index) => value.read(index, &mut SerdeSource(&mut map))?,
            None => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(value)
}

fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

struct ShapeVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Fields<'de>> Visitor<'de> for ShapeVisitor<T> {
    type Value = Shape<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        read_object(map).map(Shape::Object)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shape::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Shape::Other { truthy: v })
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Shape::Other { truthy: v != 0 })
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Shape::Other { truthy: v != 0 })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Shape::Other { truthy: v != 0.0 })
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Shape::Other {
            truthy: !v.is_empty(),
        })
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(Shape::Other {
            truthy: !v.is_empty(),
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        skip_seq(seq)?;
        Ok(Shape::Other { truthy: true })
    }
}

impl<'de, T: Fields<'de>> Deserialize<'de> for Shape<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Strings are asked for as bytes so that a lone surrogate escape cannot fail the parse.
        d.deserialize_any(ShapeVisitor(std::marker::PhantomData))
    }
}

struct ArrayVisitor<T>(std::marker::PhantomData<T>);

/// Whether an array element must be kept for the mapping. Elements that can never contribute
/// (a part that is not an object, or an object part with nothing the mapping reads) are not
/// stored, so a huge array of them costs no memory (`[0,0,0,...]` of 50 MB as `content`).
pub trait Keep: Sized {
    /// `true` to store the element.
    fn keep(&self) -> bool {
        true
    }
    /// An empty list to store the elements in: a new `Vec`, or for parts one the thread's
    /// [`part_lists`] pool gives back with its capacity.
    fn list() -> Vec<Self> {
        Vec::new()
    }
}

impl Keep for Shape<Message<'_>> {}
impl Keep for Shape<Candidate<'_>> {}
impl Keep for Shape<Part<'_>> {
    fn list() -> Vec<Self> {
        part_lists::take()
    }
    fn keep(&self) -> bool {
        match self {
            // `null` parts must be seen: the reference throws on them.
            Shape::Null => true,
            Shape::Other { .. } => false,
            Shape::Object(part) => {
                let truthy = |t: &Option<Shape<ToolPayload<'_>>>| {
                    matches!(
                        t,
                        Some(Shape::Object(_)) | Some(Shape::Other { truthy: true })
                    )
                };
                part.text.is_some()
                    || part.reasoning.is_some()
                    || matches!(part.media, Some(Shape::Object(_)))
                    || truthy(&part.tool_request)
                    || truthy(&part.tool_response)
            }
        }
    }
}

impl<'de, T: Deserialize<'de> + Keep> Visitor<'de> for ArrayVisitor<T> {
    type Value = ArrayShape<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items: Vec<T> = T::list();
        while let Some(item) = seq.next_element::<T>()? {
            if !item.keep() {
                continue;
            }
            // Growth that cannot be allocated fails this parse (the span then goes to the JS
            // mapping) instead of aborting the process, as `Vec::push` would.
            if items.len() == items.capacity() && items.try_reserve(items.len().max(4)).is_err() {
                return Err(de::Error::custom("out of memory for the array"));
            }
            items.push(item);
        }
        Ok(ArrayShape::Array(items))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ArrayShape::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(ArrayShape::Other)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ArrayShape::Other)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ArrayShape::Other)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ArrayShape::Other)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ArrayShape::Other)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ArrayShape::Other)
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Self::Value, E> {
        Ok(ArrayShape::Other)
    }
}

impl<'de, T: Deserialize<'de> + Keep> Deserialize<'de> for ArrayShape<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArrayVisitor(std::marker::PhantomData))
    }
}

impl<'de> Fields<'de> for GenerateRequest<'de> {
    const NAMES: &'static [&'static str] = &["messages"];
    fn read<S: Source<'de>>(&mut self, _: usize, source: &mut S) -> Result<(), S::Error> {
        source.value_into(&mut self.messages)?;
        Ok(())
    }
}

impl<'de> Fields<'de> for Message<'de> {
    const NAMES: &'static [&'static str] = &["role", "content"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => self.role = source.raw()?,
            _ => source.value_into(&mut self.content)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Part<'de> {
    const NAMES: &'static [&'static str] =
        &["text", "reasoning", "toolRequest", "toolResponse", "media"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => self.text = source.raw()?,
            1 => self.reasoning = source.raw()?,
            2 => source.value_into(&mut self.tool_request)?,
            3 => source.value_into(&mut self.tool_response)?,
            _ => source.value_into(&mut self.media)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Media<'de> {
    const NAMES: &'static [&'static str] = &["url", "contentType"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => self.url = source.raw()?,
            _ => self.content_type = source.raw()?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for ToolPayload<'de> {
    const NAMES: &'static [&'static str] = &["name", "ref", "input", "output"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => self.name = source.raw()?,
            1 => self.reference = source.raw()?,
            2 => self.input = source.raw()?,
            _ => self.output = source.raw()?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for GenerateResponse<'de> {
    const NAMES: &'static [&'static str] = &["message", "finishReason", "usage", "candidates"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => source.value_into(&mut self.message)?,
            1 => self.finish_reason = source.raw()?,
            2 => source.value_into(&mut self.usage)?,
            _ => source.value_into(&mut self.candidates)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Usage<'de> {
    const NAMES: &'static [&'static str] = &["inputTokens", "outputTokens"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => self.input_tokens = source.raw()?,
            _ => self.output_tokens = source.raw()?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Candidate<'de> {
    const NAMES: &'static [&'static str] = &["message", "finishReason"];
    fn read<S: Source<'de>>(&mut self, index: usize, source: &mut S) -> Result<(), S::Error> {
        match index {
            0 => source.value_into(&mut self.message)?,
            _ => self.finish_reason = source.raw()?,
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The fast reader.

/// A Genkit shape that [`parse`] can read with [`Fast`] as well as with serde_json:
/// [`Shape`] and [`ArrayShape`] of the shapes.
pub(crate) trait Value<'de>: Deserialize<'de> {
    /// Reads the value at the reader's position (whitespace before it included); `Err(Bail)`
    /// wherever the reader does not take the text (see [`Fast`]).
    fn fast(reader: &mut Fast<'de>) -> Result<Self, Bail>;
    /// [`Self::fast`] into `slot` (`Some` once read; what `slot` holds after `Err(Bail)` is
    /// unspecified). A shape read as an object overrides it to read the object in place.
    fn fast_into(reader: &mut Fast<'de>, slot: &mut Option<Self>) -> Result<(), Bail> {
        *slot = Some(Self::fast(reader)?);
        Ok(())
    }
}

/// The fast reader gave up: the text is read by serde_json instead, which gives the answer.
#[derive(Debug)]
pub(crate) struct Bail;

/// Reads `text`, a whole JSON text, as `T` (`genkit:input` as `Shape<GenerateRequest>`, ...),
/// with the answer and the errors of `serde_json::from_str::<T>`.
///
/// First by [`Fast`], a reader of Genkit's shapes without serde's visitors (issue 9: at 10 KB,
/// serde's generic map and sequence access was the largest part of a model span's cost); where
/// it gives up, by `serde_json::from_str`. Fast takes only text serde_json accepts and reads it
/// the same way: values kept as text (`Raw`) and values skipped go through serde_json's own
/// validating skipper (`vendor/serde_json` patch 3); it gives up at a key or a string read with
/// `deserialize_any` that holds an escape (serde_json compares keys after unescaping and refuses
/// a lone surrogate escape there), at a number where a shape is read (serde_json refuses one
/// beyond the f64 range), at an object where an array is read, and at anything invalid.
pub(crate) fn parse<'de, T: Value<'de>>(text: &'de str) -> Result<T, serde_json::Error> {
    match Fast::whole(text) {
        Some(value) => Ok(value),
        None => serde_json::from_str(text),
    }
}

/// [`parse`] into `slot` (`Some` with the value, or `None` with the error): what `Fast` reads as
/// an object is read where it stays ([`Value::fast_into`]), not built and moved.
pub(crate) fn parse_into<'de, T: Value<'de>>(
    text: &'de str,
    slot: &mut Option<T>,
) -> Result<(), serde_json::Error> {
    if Fast::whole_into(text, slot) {
        return Ok(());
    }
    // What the fast reader left in `slot` goes either way.
    match serde_json::from_str(text) {
        Ok(value) => {
            *slot = Some(value);
            Ok(())
        }
        Err(error) => {
            *slot = None;
            Err(error)
        }
    }
}

/// A reader of one JSON text positioned at byte `at`; see [`parse`].
pub(crate) struct Fast<'de> {
    text: &'de str,
    at: usize,
}

impl<'de> Fast<'de> {
    /// `text`, a whole JSON text (whitespace around the value allowed), read as `T`; `None` where
    /// the reader gives up.
    fn whole<T: Value<'de>>(text: &'de str) -> Option<T> {
        let mut slot = None;
        if Self::whole_into(text, &mut slot) {
            slot
        } else {
            None
        }
    }

    /// [`Self::whole`] into `slot` ([`Value::fast_into`]); `false` where the reader gives up
    /// (`slot` then holds anything).
    fn whole_into<T: Value<'de>>(text: &'de str, slot: &mut Option<T>) -> bool {
        let mut reader = Fast { text, at: 0 };
        if T::fast_into(&mut reader, slot).is_err() {
            return false;
        }
        reader.whitespace();
        reader.at == text.len()
    }

    /// Past the whitespace JSON allows between tokens.
    #[inline]
    fn whitespace(&mut self) {
        let bytes = self.text.as_bytes();
        while let Some(&byte) = bytes.get(self.at) {
            if byte > b' ' || !matches!(byte, b' ' | b'\n' | b'\t' | b'\r') {
                return;
            }
            self.at += 1;
        }
    }

    /// The byte at the position after whitespace.
    #[inline]
    fn peek(&mut self) -> Result<u8, Bail> {
        self.whitespace();
        self.text.as_bytes().get(self.at).copied().ok_or(Bail)
    }

    /// Past `word` (`null`, `true`, `false`) at the position.
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Result<(), Bail> {
        let end = self.at + word.len();
        if self.text.as_bytes().get(self.at..end) != Some(word) {
            return Err(Bail);
        }
        self.at = end;
        Ok(())
    }

    /// The bytes of the string whose opening quote is at the position, which must hold no
    /// escape; the position moves past its closing quote.
    #[inline]
    fn plain_string(&mut self) -> Result<&'de [u8], Bail> {
        let bytes = self.text.as_bytes();
        let start = self.at + 1;
        let end = serde_json::__genkit_for_maple::skip_str_valid_at(bytes, start).ok_or(Bail)?;
        let inner = bytes.get(start..end - 1).ok_or(Bail)?;
        if inner.contains(&b'\\') {
            return Err(Bail);
        }
        self.at = end;
        Ok(inner)
    }

    /// The object key whose opening quote is at the position: the index of the name in `names`
    /// it is, `None` for another key; the position moves past its closing quote. A key spelled
    /// as a name followed by its closing quote is that name (names hold no quote, backslash or
    /// control character), found without scanning; any other key is scanned and must hold no
    /// escape (an escape may spell a name). Inlined into each shape's reader, where `names` is
    /// a constant and the comparisons are of known lengths.
    #[inline(always)]
    fn key(&mut self, names: &[&str]) -> Result<Option<usize>, Bail> {
        let bytes = self.text.as_bytes();
        let start = self.at + 1;
        for (index, name) in names.iter().enumerate() {
            let end = start + name.len();
            if bytes.get(end) == Some(&b'"') && bytes.get(start..end) == Some(name.as_bytes()) {
                self.at = end + 1;
                return Ok(Some(index));
            }
        }
        self.plain_string().map(|_| None)
    }

    /// Past one valid JSON value (whitespace before it included).
    #[inline]
    fn skip_value(&mut self) -> Result<(), Bail> {
        let bytes = self.text.as_bytes();
        self.at =
            serde_json::__genkit_for_maple::skip_value_valid_at(bytes, self.at).ok_or(Bail)?;
        Ok(())
    }

    /// The object whose `{` is behind the position, read as `T` (unknown keys skipped).
    fn object<T: Fields<'de>>(&mut self) -> Result<T, Bail> {
        let mut value = T::default();
        self.object_into(&mut value)?;
        Ok(value)
    }

    /// The object whose `{` is behind the position, read into `value` (a default `T`: each key
    /// read sets its field; unknown keys skipped). Where `value` is an array's element already
    /// in its list, the fields are written where they stay, not built on the stack and moved
    /// ([`Fast::element`]).
    fn object_into<T: Fields<'de>>(&mut self, value: &mut T) -> Result<(), Bail> {
        if self.peek()? == b'}' {
            self.at += 1;
            return Ok(());
        }
        loop {
            if self.peek()? != b'"' {
                return Err(Bail);
            }
            let index = self.key(T::NAMES)?;
            if self.peek()? != b':' {
                return Err(Bail);
            }
            self.at += 1;
            match index {
                Some(index) => value.read(index, self)?,
                None => self.skip_value()?,
            }
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Bail),
            }
        }
    }

    /// The array element at the position, appended to `items` when [`Keep::keep`] stores it.
    /// An object, when the list has room for it, is read into a default element pushed first
    /// ([`Fast::object_into`]), so its fields are written into the list itself rather than built
    /// on the stack and moved (Stop 45, BENCHMARKS.md); it is taken back off if it is not to be
    /// stored. Anything else, and an object when the list is full, is read whole and pushed only
    /// if stored, so the list grows for stored elements alone, as the serde reader's does: growth
    /// that cannot be allocated gives up (serde_json then fails the same way, and the span goes
    /// to the JS mapping), never aborts. On `Err(Bail)` `items` may hold a partly read element;
    /// the caller gives the list up.
    fn element<T: Fields<'de>>(&mut self, items: &mut Vec<Shape<T>>) -> Result<(), Bail>
    where
        Shape<T>: Keep,
    {
        if items.len() < items.capacity() && self.peek()? == b'{' {
            self.at += 1;
            // Room checked above: this push does not allocate.
            items.push(Shape::Object(T::default()));
            let Some(Shape::Object(value)) = items.last_mut() else {
                return Err(Bail);
            };
            self.object_into(value)?;
            if items.last().is_some_and(|item| !item.keep()) {
                items.pop();
            }
            return Ok(());
        }
        let item = Shape::<T>::fast(self)?;
        if item.keep() {
            if items.len() == items.capacity() && items.try_reserve(items.len().max(4)).is_err() {
                return Err(Bail);
            }
            items.push(item);
        }
        Ok(())
    }
}

impl<'de> Source<'de> for Fast<'de> {
    type Error = Bail;
    #[inline]
    fn raw(&mut self) -> Result<Option<Raw<'de>>, Bail> {
        self.whitespace();
        let start = self.at;
        self.skip_value()?;
        let text = self.text.get(start..self.at).ok_or(Bail)?;
        Ok(Some(Raw(text)))
    }
    fn value<T: Value<'de>>(&mut self) -> Result<Option<T>, Bail> {
        T::fast(self).map(Some)
    }
    fn value_into<T: Value<'de>>(&mut self, slot: &mut Option<T>) -> Result<(), Bail> {
        T::fast_into(self, slot)
    }
    fn skip(&mut self) -> Result<(), Bail> {
        self.skip_value()
    }
}

impl<'de, T: Fields<'de>> Value<'de> for Shape<T> {
    fn fast(reader: &mut Fast<'de>) -> Result<Self, Bail> {
        match reader.peek()? {
            b'{' => {
                reader.at += 1;
                reader.object().map(Shape::Object)
            }
            b'n' => reader.literal(b"null").map(|()| Shape::Null),
            b't' => reader
                .literal(b"true")
                .map(|()| Shape::Other { truthy: true }),
            b'f' => reader
                .literal(b"false")
                .map(|()| Shape::Other { truthy: false }),
            b'"' => reader.plain_string().map(|s| Shape::Other {
                truthy: !s.is_empty(),
            }),
            b'[' => reader.skip_value().map(|()| Shape::Other { truthy: true }),
            _ => Err(Bail),
        }
    }
    fn fast_into(reader: &mut Fast<'de>, slot: &mut Option<Self>) -> Result<(), Bail> {
        if reader.peek()? != b'{' {
            *slot = Some(Self::fast(reader)?);
            return Ok(());
        }
        reader.at += 1;
        // A repeated key overwrites (`JSON.parse` keeps the last): a fresh default each time.
        match slot.insert(Shape::Object(T::default())) {
            Shape::Object(value) => reader.object_into(value),
            _ => Err(Bail),
        }
    }
}

impl<'de, T: Fields<'de>> Value<'de> for ArrayShape<Shape<T>>
where
    Shape<T>: Keep,
{
    fn fast(reader: &mut Fast<'de>) -> Result<Self, Bail> {
        match reader.peek()? {
            b'[' => reader.at += 1,
            b'n' => return reader.literal(b"null").map(|()| ArrayShape::Null),
            b't' => return reader.literal(b"true").map(|()| ArrayShape::Other),
            b'f' => return reader.literal(b"false").map(|()| ArrayShape::Other),
            b'"' => return reader.plain_string().map(|_| ArrayShape::Other),
            _ => return Err(Bail),
        }
        let mut items: Vec<Shape<T>> = Shape::list();
        if reader.peek()? == b']' {
            reader.at += 1;
            return Ok(ArrayShape::Array(items));
        }
        loop {
            reader.element(&mut items)?;
            match reader.peek()? {
                b',' => reader.at += 1,
                b']' => {
                    reader.at += 1;
                    return Ok(ArrayShape::Array(items));
                }
                _ => return Err(Bail),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Object keys: the shapes' names (as they are and spelled with escapes), others, and keys
    /// serde_json refuses (a control character, a lone surrogate escape).
    const KEYS: &[&str] = &[
        "messages",
        "role",
        "content",
        "text",
        "reasoning",
        "toolRequest",
        "toolResponse",
        "media",
        "name",
        "ref",
        "input",
        "output",
        "url",
        "contentType",
        "message",
        "finishReason",
        "usage",
        "candidates",
        "inputTokens",
        "outputTokens",
        "config",
        "custom",
        "raw",
        "choices",
        "finish_reason",
        "refusal",
        "stop_reason",
        "temperature",
        "format",
        "te\\u0078t",
        "\\u0072ole",
        "role\\n",
        "tex",
        "texts",
        "",
        "\\ud800",
        "a\\\"b",
        "r\\/ole",
    ];
    /// Scalars: numbers of every form (zero in all its spellings, beyond the f64 range, under
    /// it), strings with escapes and lone surrogates, literals.
    const SCALARS: &[&str] = &[
        "0",
        "-0",
        "0.0",
        "0e5",
        "-0.0e-3",
        "1e-400",
        "1e400",
        "-1e400",
        "12",
        "-3.5",
        "1E+2",
        "123456789012345678901234567890",
        "true",
        "false",
        "null",
        "\"\"",
        "\"user\"",
        "\"model\"",
        "\"system\"",
        "\"a\\nb\"",
        "\"\\u0041\"",
        "\"\\ud800\"",
        "\"\\udc00x\"",
        "\"\\ud83d\\ude00\"",
        "\"tab\\there\"",
        "\"é ü 中\"",
        "\"\\/\"",
    ];

    /// A random JSON-like text shaped like Genkit's request and response objects.
    pub(crate) fn genkit_like(next: &mut impl FnMut(usize) -> usize, depth: usize) -> String {
        let ws = |next: &mut dyn FnMut(usize) -> usize| -> &'static str {
            [" ", "\n", "\t ", "\r\n", ""][next(5).min(4)..][..1]
                .first()
                .map_or("", |s| s)
        };
        let mut s = String::new();
        match if depth > 5 { 3 + next(2) } else { next(8) } {
            0..=2 => {
                s.push('{');
                for i in 0..next(5) {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str(if next(3) == 0 { ws(next) } else { "" });
                    s.push('"');
                    s.push_str(KEYS[next(KEYS.len())]);
                    s.push('"');
                    s.push_str(if next(4) == 0 { ws(next) } else { "" });
                    s.push(':');
                    s.push_str(&genkit_like(next, depth + 1));
                }
                s.push('}');
            }
            3 | 4 => s.push_str(SCALARS[next(SCALARS.len())]),
            _ => {
                s.push('[');
                for i in 0..next(4) {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str(&genkit_like(next, depth + 1));
                    s.push_str(if next(4) == 0 { ws(next) } else { "" });
                }
                s.push(']');
            }
        }
        s
    }

    /// `text` with 0-2 bytes deleted, doubled or replaced by a structural character.
    pub(crate) fn mutated(next: &mut impl FnMut(usize) -> usize, text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        for _ in 0..next(3) {
            if bytes.is_empty() {
                break;
            }
            let at = next(bytes.len());
            match next(3) {
                0 => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, bytes[at]),
                _ => {
                    const BYTES: &[u8] = b"{}[]\",:\\ 0-e.\x01";
                    bytes[at] = BYTES[next(BYTES.len())];
                }
            }
        }
        String::from_utf8(bytes).unwrap_or_else(|_| text.to_string())
    }

    /// An object that sets a field of each of the shapes `agrees` is used with (a request's
    /// messages, a response's message, usage, finish reason, candidates and provider metadata),
    /// so that a slot holding it is not a default one.
    const FILLED: &str = r#"{"messages":[{"role":"user","content":[{"text":"t"}]}],"role":"x","content":[],"message":{"role":"model"},"finishReason":"stop","usage":{"inputTokens":1},"candidates":[],"raw":{"id":"r"},"custom":{"id":"c"},"config":{"temperature":1},"output":{"format":"json"}}"#;

    /// `parse` gives serde_json's answer: the same value (compared by its `Debug` form: every
    /// `Raw` text, every `Shape` and `ArrayShape` variant, truthiness, kept parts) or an error
    /// where serde_json errs; so does `parse_into`, into a slot holding [`FILLED`].
    pub(crate) fn agrees<'a, T: Value<'a> + fmt::Debug>(text: &'a str) {
        let fast = parse::<T>(text).map(|v| format!("{v:?}")).map_err(|_| ());
        let serde = serde_json::from_str::<T>(text)
            .map(|v| format!("{v:?}"))
            .map_err(|_| ());
        assert_eq!(fast, serde, "{text}");
        // In place, into a slot holding a value already (a repeated key's earlier value: every
        // field it sets must be gone, not only those the text sets again).
        let mut slot = serde_json::from_str::<T>(FILLED).ok();
        let into = parse_into::<T>(text, &mut slot)
            .map(|()| format!("{:?}", slot.as_ref().expect("Some after Ok")))
            .map_err(|_| ());
        assert_eq!(into, serde, "parse_into {text}");
        if into.is_err() {
            assert!(
                slot.is_none(),
                "parse_into leaves None after an error: {text}"
            );
        }
    }

    #[test]
    fn the_fast_reader_gives_serde_jsons_answer() {
        let mut next = crate::lcg(9);
        let mut taken = 0;
        for round in 0..30_000 {
            let mut text = genkit_like(&mut next, 0);
            if round % 3 == 0 {
                text = mutated(&mut next, &text);
            }
            let text = format!("{}{text}{}", [" ", ""][next(2)], ["\n", ""][next(2)]);
            agrees::<Shape<GenerateRequest<'_>>>(&text);
            agrees::<Shape<GenerateResponse<'_>>>(&text);
            agrees::<Shape<Message<'_>>>(&text);
            agrees::<ArrayShape<Shape<Message<'_>>>>(&text);
            if Fast::whole::<Shape<GenerateRequest<'_>>>(&text).is_some() {
                taken += 1;
            }
        }
        // The fast reader took a good share of the texts itself (else this test proves little).
        assert!(taken > 5_000, "{taken}");
    }

    #[test]
    fn the_fast_reader_takes_genkits_texts_and_gives_up_where_serde_json_must_decide() {
        let taken = |text: &str| Fast::whole::<Shape<GenerateRequest<'_>>>(text).is_some();
        let request = r#"{"messages":[{"role":"user","content":[{"text":"hi \"you\" \ud800"},{"toolRequest":{"name":"f","ref":"1","input":{"a":[1,2e5,null]}}}]}],"config":{"temperature":0.5},"tools":[]}"#;
        assert!(taken(request));
        agrees::<Shape<GenerateRequest<'_>>>(request);
        for text in [
            // A key spelled with an escape may be a name.
            r#"{"messages":[{"r\u006fle":"user"}]}"#,
            // A shape read from a number or an escaped string.
            r#"{"messages":[1e400]}"#,
            r#"{"messages":["\ud800"]}"#,
            // An object where an array is read.
            r#"{"messages":{"a":1}}"#,
            // Nested deeper than the skipper goes.
            &format!(r#"{{"config":{}{}}}"#, "[".repeat(70), "]".repeat(70)),
            // Not JSON.
            r#"{"messages":[],}"#,
            r#"{"messages":[]} x"#,
        ] {
            assert!(!taken(text), "{text}");
            agrees::<Shape<GenerateRequest<'_>>>(text);
        }
    }

    /// Array elements read in place (`Fast::element`): objects that are not stored are taken
    /// back off the list, at every position; an object the reader gives up inside leaves the
    /// answer to serde_json, as before.
    #[test]
    fn elements_read_in_place_are_the_ones_serde_json_keeps() {
        let kept = r#"{"text":"a"}"#;
        let dropped = [
            r#"{}"#,
            r#"{"metadata":{"x":1}}"#,
            r#"{"toolRequest":null}"#,
            r#"{"toolResponse":false}"#,
        ];
        for drop in dropped {
            // (content, parts stored: the text parts and `null`, which the reference throws on)
            for (content, stored) in [
                (format!("[{drop}]"), 0),
                (format!("[{kept},{drop}]"), 1),
                (format!("[{drop},{kept}]"), 1),
                (format!("[{kept},{drop},{kept},null,\"s\",{drop}]"), 3),
            ] {
                let text = format!(
                    r#"{{"messages":[{{"role":"user","content":{content}}},{{"role":"model"}}]}}"#
                );
                agrees::<Shape<GenerateRequest<'_>>>(&text);
                let request = Fast::whole::<Shape<GenerateRequest<'_>>>(&text);
                let (messages, parts) = first_parts(request.as_ref(), &text);
                assert_eq!(parts.len(), stored, "{text}");
                assert_eq!(messages, 2, "{text}");
            }
        }
        // A full list does not grow for an element that is dropped: eight stored parts (the
        // pool's largest list) and one dropped part leave a list the pool keeps.
        let text = format!(
            r#"{{"messages":[{{"role":"user","content":[{}{{}}]}}]}}"#,
            format!("{kept},").repeat(part_lists::CAPACITY)
        );
        let request = Fast::whole::<Shape<GenerateRequest<'_>>>(&text);
        let (_, parts) = first_parts(request.as_ref(), &text);
        assert_eq!(parts.len(), part_lists::CAPACITY, "{text}");
        assert!(
            parts.capacity() <= part_lists::CAPACITY,
            "{}",
            parts.capacity()
        );
        // Given up inside an element (an escaped key, a cut text): serde_json answers.
        for text in [
            r#"{"messages":[{"role":"user","content":[{"text":"a"},{"te\u0078t":"b"}]}]}"#,
            r#"{"messages":[{"role":"user","content":[{"text":"a"},{"text":"b""#,
        ] {
            assert!(
                Fast::whole::<Shape<GenerateRequest<'_>>>(text).is_none(),
                "{text}"
            );
            agrees::<Shape<GenerateRequest<'_>>>(text);
        }
    }

    /// How many messages `request` (the fast reader's answer for `text`) holds, and the part
    /// list of its first; panics where the reader gave up or the first message has no list.
    fn first_parts<'r, 'a>(
        request: Option<&'r Shape<GenerateRequest<'a>>>,
        text: &str,
    ) -> (usize, &'r Vec<Shape<Part<'a>>>) {
        let Some(Shape::Object(GenerateRequest {
            messages: Some(ArrayShape::Array(messages)),
        })) = request
        else {
            panic!("not read as a request with messages: {text}");
        };
        let Some(Shape::Object(Message {
            content: Some(ArrayShape::Array(parts)),
            ..
        })) = messages.first()
        else {
            panic!("no part list in the first message: {text}");
        };
        (messages.len(), parts)
    }

    /// The addresses of the part lists of a request's messages.
    fn part_list_addresses(request: &Shape<GenerateRequest<'_>>) -> Vec<usize> {
        let Shape::Object(GenerateRequest {
            messages: Some(ArrayShape::Array(messages)),
        }) = request
        else {
            panic!("not a request with messages: {request:?}");
        };
        messages
            .iter()
            .filter_map(|m| match m {
                Shape::Object(Message {
                    content: Some(ArrayShape::Array(parts)),
                    ..
                }) => Some(parts.as_ptr() as usize),
                _ => None,
            })
            .collect()
    }

    /// Empties the thread's pool (what earlier tests on this thread left).
    fn drain() {
        while part_lists::take().capacity() != 0 {}
    }

    /// How many lists the thread's pool holds (taken out and given back).
    fn pooled() -> usize {
        let mut lists = Vec::new();
        loop {
            let list = part_lists::take();
            if list.capacity() == 0 {
                break;
            }
            lists.push(list);
        }
        let n = lists.len();
        lists.into_iter().for_each(part_lists::give);
        n
    }

    #[test]
    fn a_dropped_messages_part_list_is_the_next_messages_without_a_new_allocation() {
        drain();
        let text = |n: usize, word: &str| {
            let messages: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"role":"user","content":[{{"text":"{word} {i}"}}]}}"#))
                .collect();
            format!(r#"{{"messages":[{}]}}"#, messages.join(","))
        };
        fn read(t: &str) -> Shape<GenerateRequest<'_>> {
            Fast::whole(t).expect("taken")
        }
        let (first, second) = (text(5, "a"), text(3, "b"));
        let before = read(&first);
        assert_eq!(pooled(), 0);
        let given = part_list_addresses(&before);
        assert_eq!(given.len(), 5);
        drop(before);
        assert_eq!(pooled(), 5, "each dropped message gives its list back");
        // Another text, another lifetime: three of the five allocations, and the parts read from
        // the new text.
        let after = read(&second);
        assert_eq!(pooled(), 2, "the reader takes its lists from the pool");
        assert!(part_list_addresses(&after)
            .iter()
            .all(|a| given.contains(a)));
        let Shape::Object(GenerateRequest {
            messages: Some(ArrayShape::Array(messages)),
        }) = &after
        else {
            unreachable!()
        };
        let texts: Vec<&str> = messages
            .iter()
            .map(|m| match m {
                Shape::Object(Message {
                    content: Some(ArrayShape::Array(parts)),
                    ..
                }) => match &parts[..] {
                    [Shape::Object(p)] => p.text.expect("text").get(),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts, ["\"b 0\"", "\"b 1\"", "\"b 2\""]);
        drop(after);
        assert_eq!(pooled(), 5);
        // serde_json's reader (where the fast one gives up) takes and gives back the same way.
        let by_serde: Shape<GenerateRequest<'_>> = serde_json::from_str(&second).expect("JSON");
        assert_eq!(
            pooled(),
            2,
            "serde_json's reader takes its lists from the pool"
        );
        drop(by_serde);
        assert_eq!(pooled(), 5);
    }

    #[test]
    fn the_part_list_pool_keeps_a_bounded_number_of_small_lists() {
        drain();
        let big: Vec<Shape<Part<'_>>> = Vec::with_capacity(part_lists::CAPACITY + 1); // ok: a test's constant size, not a span's
        part_lists::give(big);
        assert_eq!(
            part_lists::take().capacity(),
            0,
            "a list over the capacity is freed"
        );
        for _ in 0..part_lists::LISTS + 10 {
            part_lists::give(Vec::with_capacity(4)); // ok: a test's constant size
        }
        let mut kept = 0;
        while part_lists::take().capacity() == 4 {
            kept += 1;
        }
        assert_eq!(kept, part_lists::LISTS);
        // A list given back with parts in it comes back empty.
        let full: Vec<Shape<Part<'_>>> = vec![Shape::Null, Shape::Other { truthy: true }];
        part_lists::give(full);
        let again = part_lists::take();
        assert_eq!((again.len(), again.capacity()), (0, 2));
        // The bound README.md and the module's doc give: about 110 KB a thread at most.
        let most =
            part_lists::LISTS * part_lists::CAPACITY * std::mem::size_of::<Shape<Part<'_>>>();
        assert!(most <= 112 * 1024, "{most} bytes");
    }
}
