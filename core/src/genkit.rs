//! Genkit's side: the shapes Genkit writes into `genkit:input` and `genkit:output` of a model span
//! (`GenerateRequest` / `GenerateResponse` after `JSON.stringify`), read without building a tree.
//!
//! Every value that is copied through to the GenAI attributes unchanged (text, reasoning, tool
//! input and output, roles, finish reasons, token counts) stays a borrowed [`RawValue`]: its JSON
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

/// A JSON value kept as its source text (no surrounding whitespace).
pub type Raw<'a> = &'a RawValue;

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

/// A Genkit `Part`. Only the keys the reference reads: `text`, `reasoning`, `toolRequest`,
/// `toolResponse`. `media`, `data`, `custom`, `metadata` parts are dropped (seed 000).
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
    /// Reads the value of key `NAMES[index]` (a repeated key overwrites: `JSON.parse` keeps the last).
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error>;
}

fn read_object<'de, T: Fields<'de>, A: MapAccess<'de>>(mut map: A) -> Result<T, A::Error> {
    let mut value = T::default();
    while let Some(key) = map.next_key_seed(KeyIn(T::NAMES))? {
        match key {
            Some(index) => value.read(index, &mut map)?,
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
pub trait Keep {
    /// `true` to store the element.
    fn keep(&self) -> bool {
        true
    }
}

impl Keep for Shape<Message<'_>> {}
impl Keep for Shape<Candidate<'_>> {}
impl Keep for Shape<Part<'_>> {
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
        let mut items: Vec<T> = Vec::new();
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

/// Reads a value as its raw JSON text; serde's `Option` would turn `null` into `None`, but the
/// reference treats a present `null` as present (`null !== undefined`).
pub(crate) fn raw<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<Raw<'de>>, A::Error> {
    map.next_value::<Raw<'de>>().map(Some)
}

impl<'de> Fields<'de> for GenerateRequest<'de> {
    const NAMES: &'static [&'static str] = &["messages"];
    fn read<A: MapAccess<'de>>(&mut self, _: usize, map: &mut A) -> Result<(), A::Error> {
        self.messages = Some(map.next_value()?);
        Ok(())
    }
}

impl<'de> Fields<'de> for Message<'de> {
    const NAMES: &'static [&'static str] = &["role", "content"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.role = raw(map)?,
            _ => self.content = Some(map.next_value()?),
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Part<'de> {
    const NAMES: &'static [&'static str] =
        &["text", "reasoning", "toolRequest", "toolResponse", "media"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.text = raw(map)?,
            1 => self.reasoning = raw(map)?,
            2 => self.tool_request = Some(map.next_value()?),
            3 => self.tool_response = Some(map.next_value()?),
            _ => self.media = Some(map.next_value()?),
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Media<'de> {
    const NAMES: &'static [&'static str] = &["url", "contentType"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.url = raw(map)?,
            _ => self.content_type = raw(map)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for ToolPayload<'de> {
    const NAMES: &'static [&'static str] = &["name", "ref", "input", "output"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.name = raw(map)?,
            1 => self.reference = raw(map)?,
            2 => self.input = raw(map)?,
            _ => self.output = raw(map)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for GenerateResponse<'de> {
    const NAMES: &'static [&'static str] = &["message", "finishReason", "usage", "candidates"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.message = Some(map.next_value()?),
            1 => self.finish_reason = raw(map)?,
            2 => self.usage = Some(map.next_value()?),
            _ => self.candidates = Some(map.next_value()?),
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Usage<'de> {
    const NAMES: &'static [&'static str] = &["inputTokens", "outputTokens"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.input_tokens = raw(map)?,
            _ => self.output_tokens = raw(map)?,
        }
        Ok(())
    }
}

impl<'de> Fields<'de> for Candidate<'de> {
    const NAMES: &'static [&'static str] = &["message", "finishReason"];
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.message = Some(map.next_value()?),
            _ => self.finish_reason = raw(map)?,
        }
        Ok(())
    }
}
