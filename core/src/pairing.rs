//! `gen_ai.tool.call.id` on `execute_tool` spans (rule 5 of issue 10; seed 003 "Step 3": the
//! tool span carries the model's call id; seed 001 "Known gaps": Genkit does not put the call ref
//! on the tool span).
//!
//! Genkit runs the tools a model answer asks for inside the same `generate` span as the model call
//! (`resolveToolRequests` in `@genkit-ai/ai`, 1.42), so in the real span tree (the corpus,
//! `__test__/fixtures/genkit-1.42-spans.jsonl`):
//!
//! ```text
//! generate                  util      <- P
//! ├── googleai/gemini-…     model     parent P; genkit:output holds toolRequest {name, ref, input}
//! ├── getWeather            tool      parent P; genkit:name = name, genkit:input = input
//! └── generate              util      (the next step of the tool loop)
//! ```
//!
//! The model span ends before its tools start (a tool runs on the finished answer), the tool spans
//! end before `P`, and `P` ends before its trace's root. The tool span's `genkit:input` is the very
//! object the model answer carried (`parseSchema` validates without copying), serialised again, so
//! the two are equal as JSON; they are compared canonically (object key order, number spelling
//! `1` / `1.0` / `1e0`, string escapes do not matter).
//!
//! [`ToolCallPairing`] keeps, per `(trace id, P)`, the tool requests of each model answer that
//! ended, and gives a tool span the `ref` of the first not yet taken request with the same tool
//! name and an equal input. Parallel calls of one tool with equal inputs cannot be told apart on
//! their spans (same name, same arguments, same parent): they get the refs of their group in the
//! order their spans end, each ref once. A span with nothing to pair (no model answer seen, a
//! request without `ref`, different input, a tool the flow called itself) gets `None`.
//!
//! Bounds: at most [`ToolCallPairing::DEFAULT_MAX_CALLS`] pending requests and
//! [`ToolCallPairing::DEFAULT_MAX_AGE`] of age (oldest answers dropped first); an answer's requests
//! are dropped when its `generate` span ends, all of a trace's when its root span ends, and a
//! group once all its requests were taken. Names and refs longer than [`MAX_NAME_LEN`] bytes are
//! not kept. Inputs are kept as a 128-bit canonical hash, not as text: the memory of one pending
//! request does not depend on its input's size.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::{DefaultHasher, Hasher};
use std::time::{Duration, Instant};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::genkit::{ArrayShape, Candidate, GenerateResponse, Message, Raw, Shape};
use crate::span::{keys, Mapped, SpanInput, TraceIds, Value};

/// Names and refs longer than this many bytes are not kept (no real tool name or call id is).
pub const MAX_NAME_LEN: usize = 1024;

/// One `toolRequest` part of a model answer, as Genkit wrote it: the JSON source texts of its
/// `name`, `ref` and `input` (see [`crate::genkit::ToolPayload`]).
#[derive(Debug, Clone, Copy)]
pub struct ToolRequest<'a> {
    /// `toolRequest.name` (a JSON string).
    pub name: Raw<'a>,
    /// `toolRequest.ref` (a JSON string), when the plugin set one.
    pub reference: Option<Raw<'a>>,
    /// `toolRequest.input`, any JSON value; absent when the request has none.
    pub input: Option<Raw<'a>>,
}

/// The tool requests of the answer Genkit acts on: `message` when the plugin reports it at the top
/// level, else the first candidate's message (Genkit runs the tools of that one only); none when
/// `message` is there but not an object (nor `null`, nor falsy), as complete mode's output
/// messages have none then.
pub fn tool_requests<'r, 'a>(
    response: &'r GenerateResponse<'a>,
) -> impl Iterator<Item = ToolRequest<'a>> + 'r {
    tool_requests_in(&response.message, &response.candidates)
}

/// [`tool_requests`] of a response read by another reader (complete mode's, which reads the same
/// `message` and `candidates` shapes): the one parse of `genkit:output` serves both.
pub(crate) fn tool_requests_in<'r, 'a>(
    message: &'r Option<Shape<Message<'a>>>,
    candidates: &'r Option<ArrayShape<Shape<Candidate<'a>>>>,
) -> impl Iterator<Item = ToolRequest<'a>> + 'r {
    let message: Option<&'r Message<'a>> = match (message, candidates) {
        (Some(Shape::Object(m)), _) => Some(m),
        // A `message` that is there but not an object (a string, an array): the answer is
        // malformed, and complete mode writes no output message for it either; its candidates
        // are not the answer Genkit acted on.
        (Some(Shape::Other { truthy: true }), _) => None,
        (_, Some(ArrayShape::Array(candidates))) => match candidates.first() {
            Some(Shape::Object(c)) => match &c.message {
                Some(Shape::Object(m)) => Some(m),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    let parts = match message.and_then(|m| m.content.as_ref()) {
        Some(ArrayShape::Array(parts)) => parts.as_slice(),
        _ => &[],
    };
    parts.iter().filter_map(|part| match part {
        Shape::Object(p) => match &p.tool_request {
            Some(Shape::Object(t)) => t.name.map(|name| ToolRequest {
                name,
                reference: t.reference,
                input: t.input,
            }),
            _ => None,
        },
        _ => None,
    })
}

/// A span of a trace, by its trace id and span id: the parent of a model or tool span, or an
/// ended span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SpanKey {
    trace: u128,
    span: u64,
}

impl SpanKey {
    /// From the 16-byte trace id and 8-byte span id (OTLP, the core's `SpanInput`).
    pub fn from_bytes(trace_id: [u8; 16], span_id: [u8; 8]) -> SpanKey {
        SpanKey {
            trace: u128::from_be_bytes(trace_id),
            span: u64::from_be_bytes(span_id),
        }
    }

    /// From the hex ids of the JavaScript API (32 and 16 hex digits); `None` otherwise (such
    /// spans are not paired).
    pub fn from_hex(trace_id: &str, span_id: &str) -> Option<SpanKey> {
        let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex(trace_id, 32) || !hex(span_id, 16) {
            return None;
        }
        Some(SpanKey {
            trace: u128::from_str_radix(trace_id, 16).ok()?,
            span: u64::from_str_radix(span_id, 16).ok()?,
        })
    }
}

/// A JSON string's value, or `None` when it is not a string or longer than [`MAX_NAME_LEN`].
fn json_str(raw: Raw<'_>) -> Option<Cow<'_, str>> {
    if raw.get().len() > MAX_NAME_LEN + 2 {
        return None;
    }
    serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()
}

/// A copy of `s`, allocated fallibly.
fn owned(s: &str) -> Option<Box<str>> {
    let mut out = String::new();
    out.try_reserve_exact(s.len()).ok()?;
    out.push_str(s);
    Some(out.into_boxed_str())
}

/// The tool name the model used for an action name: `genkit:name` may carry a namespace
/// (`provider/tool`) while the model knows the short name (Genkit's `toToolMap`).
fn short_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

#[derive(Debug)]
struct Call {
    name: Box<str>,
    reference: Option<Box<str>>,
    /// Canonical hash of the input; `None` when it could not be read (never matches).
    input: Option<u128>,
    taken: bool,
}

#[derive(Debug)]
struct Group {
    seq: u64,
    at: Instant,
    calls: Vec<Call>,
}

/// The pending tool requests of the model answers of running traces; see the module docs.
#[derive(Debug)]
pub struct ToolCallPairing {
    groups: BTreeMap<SpanKey, Group>,
    /// Groups by age: insertion sequence -> key.
    by_age: BTreeMap<u64, SpanKey>,
    next_seq: u64,
    pending: usize,
    max_calls: usize,
    max_age: Duration,
}

impl Default for ToolCallPairing {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolCallPairing {
    /// Default cap on pending tool requests, over all traces (a few hundred bytes each).
    pub const DEFAULT_MAX_CALLS: usize = 4096;
    /// Default age after which an answer's pending requests are dropped (a tool running longer
    /// than this gets no id).
    pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(600);

    /// An empty state with the default bounds.
    pub fn new() -> Self {
        Self::with_limits(Self::DEFAULT_MAX_CALLS, Self::DEFAULT_MAX_AGE)
    }

    /// An empty state keeping at most `max_calls` pending requests for at most `max_age`.
    pub fn with_limits(max_calls: usize, max_age: Duration) -> Self {
        ToolCallPairing {
            groups: BTreeMap::new(),
            by_age: BTreeMap::new(),
            next_seq: 0,
            pending: 0,
            max_calls,
            max_age,
        }
    }

    /// Whether no state is kept at all (then [`Self::span_ended`] has nothing to do).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The number of pending (not yet taken, not evicted) tool requests.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Records the tool requests of a model span's answer: `output` is its `genkit:output` text,
    /// `parent` its trace and parent span (the `generate` span). Returns how many requests were
    /// kept. Text that is not a Genkit response keeps nothing.
    pub fn record_model_output(&mut self, parent: SpanKey, output: &str, now: Instant) -> usize {
        match crate::genkit::parse::<Shape<GenerateResponse<'_>>>(output) {
            Ok(Shape::Object(response)) => {
                self.record_requests(parent, tool_requests(&response), now)
            }
            _ => 0,
        }
    }

    /// Records tool requests of one model answer (in the answer's order); see
    /// [`Self::record_model_output`]. Returns how many were kept.
    pub fn record_requests<'a>(
        &mut self,
        parent: SpanKey,
        requests: impl IntoIterator<Item = ToolRequest<'a>>,
        now: Instant,
    ) -> usize {
        let key = parent;
        self.evict(now);
        let mut kept = 0;
        for request in requests {
            if self.pending >= self.max_calls && !self.evict_oldest(key) {
                break;
            }
            let Some(name) = json_str(request.name).and_then(|n| owned(&n)) else {
                continue;
            };
            let reference = request.reference.and_then(json_str).and_then(|r| owned(&r));
            let input = canonical_hash(request.input);
            let call = Call {
                name,
                reference,
                input,
                taken: false,
            };
            if !self.push(key, call, now) {
                break;
            }
            kept += 1;
        }
        kept
    }

    fn push(&mut self, key: SpanKey, call: Call, now: Instant) -> bool {
        if !self.groups.contains_key(&key) {
            let seq = self.next_seq;
            self.next_seq += 1;
            // ok: one node per model answer, bounded by the cap on pending requests, not by input.
            self.groups.insert(
                key,
                Group {
                    seq,
                    at: now,
                    calls: Vec::new(),
                },
            );
            // ok: as above, one entry per model answer.
            self.by_age.insert(seq, key);
        }
        let Some(group) = self.groups.get_mut(&key) else {
            return false;
        };
        if group.calls.try_reserve(1).is_err() {
            return false;
        }
        group.calls.push(call);
        self.pending += 1;
        true
    }

    /// The call id for a tool span: `parent` its trace and parent span, `name` its `genkit:name`,
    /// `input` its `genkit:input` text (`None` when absent). Takes the ref of the first matching
    /// request not yet taken; `None` when there is none or it had no ref.
    pub fn tool_call_id(
        &mut self,
        parent: SpanKey,
        name: &str,
        input: Option<&str>,
        now: Instant,
    ) -> Option<String> {
        let key = parent;
        self.evict(now);
        let group = self.groups.get_mut(&key)?;
        let wanted = match input {
            None => canonical_hash(None),
            Some(text) => hash_text(text),
        }?;
        let short = short_name(name);
        let call = group.calls.iter_mut().find(|c| {
            !c.taken && c.input == Some(wanted) && (&*c.name == name || &*c.name == short)
        })?;
        call.taken = true;
        let reference = call.reference.as_deref().and_then(owned).map(String::from);
        self.pending -= 1;
        if group.calls.iter().all(|c| c.taken) {
            self.remove(key);
        }
        reference
    }

    /// Tells the state a span ended: the requests recorded under it (it was a `generate` span)
    /// are dropped, and all of its trace's when `root` (the trace's local root span ended).
    pub fn span_ended(&mut self, span: SpanKey, root: bool) {
        if self.groups.is_empty() {
            return;
        }
        self.remove(span);
        if root {
            self.trace_ended(span);
        }
    }

    /// Drops every request of `span`'s trace: its root span ended, the trace is complete here.
    pub fn trace_ended(&mut self, span: SpanKey) {
        if self.groups.is_empty() {
            return;
        }
        let first = SpanKey {
            trace: span.trace,
            span: 0,
        };
        let last = SpanKey {
            trace: span.trace,
            span: u64::MAX,
        };
        // ok: at most one key per pending answer (bounded by the cap on pending requests).
        let keys: Vec<SpanKey> = self.groups.range(first..=last).map(|(k, _)| *k).collect();
        for k in keys {
            self.remove(k);
        }
    }

    fn remove(&mut self, key: SpanKey) {
        if let Some(group) = self.groups.remove(&key) {
            self.by_age.remove(&group.seq);
            self.pending -= group.calls.iter().filter(|c| !c.taken).count();
        }
    }

    /// Drops the groups older than the age limit.
    fn evict(&mut self, now: Instant) {
        while let Some((_, key)) = self.by_age.first_key_value() {
            let key = *key;
            match self.groups.get(&key) {
                Some(g) if now.saturating_duration_since(g.at) > self.max_age => self.remove(key),
                Some(_) => break,
                None => {
                    self.by_age.pop_first();
                }
            }
        }
    }

    /// Drops the oldest group other than `keep`; false when there is none.
    fn evict_oldest(&mut self, keep: SpanKey) -> bool {
        let oldest = self.by_age.values().copied().find(|k| *k != keep);
        match oldest {
            Some(key) => {
                self.remove(key);
                true
            }
            None => false,
        }
    }
}

/// The whole-span seam's hook (core `span::Mapper`, complete mode, after the span's other rules):
/// a model span's answer is recorded under its parent; a `tool` / `tool.v2` span gets
/// `gen_ai.tool.call.id` when it pairs; the span's end frees the requests recorded under it, and
/// its whole trace's when it is a root span.
///
/// `requests`: the tool requests of a model span's answer, as the mapping read them from
/// `genkit:output` ([`crate::complete::map_collecting`]): `genkit:output` is not parsed again.
/// `ids`: the span's ids (its own [`SpanInput`] fields are not read: a caller may read them from
/// elsewhere, and only when needed, [`crate::span::Mapper::map_with_ids`]).
pub(crate) fn pair<'a>(
    state: &mut ToolCallPairing,
    span: &SpanInput<'a>,
    ids: TraceIds,
    out: &mut Mapped<'a>,
    requests: &[ToolRequest<'_>],
) {
    // The clock is read only where the state is used (a model span's answer holds tool
    // requests, or a tool span finds state to pair with): most spans need neither, and an empty
    // state has nothing to evict.
    if let (Some(trace), Some(parent)) = (ids.trace_id, ids.parent_span_id) {
        let parent = SpanKey::from_bytes(trace, parent);
        match span.subtype {
            Some("model") if !requests.is_empty() => {
                state.record_requests(parent, requests.iter().copied(), Instant::now());
            }
            Some("tool" | "tool.v2") if !state.is_empty() => {
                let id = span
                    .name
                    .and_then(|name| state.tool_call_id(parent, name, span.input, Instant::now()));
                if let Some(id) = id {
                    out.push(keys::TOOL_CALL_ID, Value::Str(Cow::Owned(id)));
                }
            }
            _ => {}
        }
    }
    if let (Some(trace), Some(id)) = (ids.trace_id, ids.span_id) {
        state.span_ended(SpanKey::from_bytes(trace, id), ids.parent_span_id.is_none());
    }
}

// ---------------------------------------------------------------------------------------------
// Canonical JSON hash: equal for JSON texts that `JSON.parse` reads as equal values, whatever
// their key order, number spelling, escapes or whitespace. Streamed over the text: nothing sized
// by the input is allocated (serde_json's own scratch buffer for escaped strings aside); depth is
// bounded by serde_json's recursion limit (128), deeper inputs are not hashed.

const TAG_NULL: u8 = 0;
const TAG_FALSE: u8 = 1;
const TAG_TRUE: u8 = 2;
const TAG_NUMBER: u8 = 3;
const TAG_STRING: u8 = 4;
const TAG_ARRAY: u8 = 5;
const TAG_OBJECT: u8 = 6;

/// Two SipHash streams with different first bytes: a 128-bit hash.
struct H(DefaultHasher, DefaultHasher);

impl H {
    fn new(tag: u8) -> H {
        let mut a = DefaultHasher::new();
        let mut b = DefaultHasher::new();
        a.write_u8(0xA5);
        b.write_u8(0x5A);
        a.write_u8(tag);
        b.write_u8(tag);
        H(a, b)
    }
    fn bytes(mut self, bytes: &[u8]) -> H {
        self.0.write(bytes);
        self.1.write(bytes);
        self
    }
    fn u128(mut self, v: u128) -> H {
        self.0.write_u128(v);
        self.1.write_u128(v);
        self
    }
    fn finish(&self) -> u128 {
        ((self.0.finish() as u128) << 64) | self.1.finish() as u128
    }
}

fn number(v: f64) -> u128 {
    // JSON.parse reads every number as a double; -0 and 0 are the same value to JSON.stringify.
    let v = if v == 0.0 { 0.0 } else { v };
    H::new(TAG_NUMBER)
        .bytes(&v.to_bits().to_le_bytes())
        .finish()
}

fn string(s: &str) -> u128 {
    H::new(TAG_STRING).bytes(s.as_bytes()).finish()
}

/// The canonical hash of an optional JSON value (`None`: absent, equal to `null`, as an absent
/// tool input and `undefined` are the same to Genkit).
fn canonical_hash(raw: Option<Raw<'_>>) -> Option<u128> {
    match raw {
        None => Some(H::new(TAG_NULL).finish()),
        Some(raw) => hash_text(raw.get()),
    }
}

/// The canonical hash of a JSON text; `None` when it is not JSON (or too deep).
pub fn hash_text(text: &str) -> Option<u128> {
    let mut de = serde_json::Deserializer::from_str(text);
    let h = CanonicalHash.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(h)
}

struct CanonicalHash;

impl<'de> DeserializeSeed<'de> for CanonicalHash {
    type Value = u128;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u128, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for CanonicalHash {
    type Value = u128;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<u128, E> {
        Ok(H::new(TAG_NULL).finish())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<u128, E> {
        Ok(H::new(if v { TAG_TRUE } else { TAG_FALSE }).finish())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u128, E> {
        Ok(number(v as f64))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u128, E> {
        Ok(number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u128, E> {
        Ok(number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u128, E> {
        Ok(string(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u128, A::Error> {
        let mut h = H::new(TAG_ARRAY);
        while let Some(element) = seq.next_element_seed(CanonicalHash)? {
            h = h.u128(element);
        }
        Ok(h.finish())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u128, A::Error> {
        // Members combined by a commutative sum: key order does not matter. (A repeated key is
        // hashed twice; Genkit's JSON.stringify never writes one.)
        let mut sum: u128 = 0;
        let mut count: u128 = 0;
        while let Some(key) = map.next_key_seed(KeyHash)? {
            let value = map.next_value_seed(CanonicalHash)?;
            sum = sum.wrapping_add(H::new(TAG_OBJECT).u128(key).u128(value).finish());
            count += 1;
        }
        Ok(H::new(TAG_OBJECT).u128(sum).u128(count).finish())
    }
}

struct KeyHash;

impl<'de> DeserializeSeed<'de> for KeyHash {
    type Value = u128;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u128, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyHash {
    type Value = u128;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u128, E> {
        Ok(string(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(trace: &str, span: &str) -> SpanKey {
        SpanKey::from_hex(trace, span).expect("hex ids")
    }

    const T: &str = "aa81f9dc7e7997f54b89053e19485a59";
    const T2: &str = "2d3274b79b1e08bf9af776598d54e919";
    const P: &str = "5eadae0000000001";
    const P2: &str = "dc77220000000002";

    fn answer(calls: &[(&str, Option<&str>, &str)]) -> String {
        let parts: Vec<String> = calls
            .iter()
            .map(|(name, reference, input)| match reference {
                Some(r) => {
                    format!(r#"{{"toolRequest":{{"name":"{name}","ref":"{r}","input":{input}}}}}"#)
                }
                None => format!(r#"{{"toolRequest":{{"name":"{name}","input":{input}}}}}"#),
            })
            .collect();
        format!(
            r#"{{"message":{{"role":"model","content":[{{"text":"ok"}},{}]}},"finishReason":"stop"}}"#,
            parts.join(",")
        )
    }

    #[test]
    fn pairs_by_trace_parent_name_and_input() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        let out = answer(&[
            ("getWeather", Some("call_0"), r#"{"city":"Paris"}"#),
            ("getTime", Some("call_1"), r#"{"tz":"CET"}"#),
        ]);
        assert_eq!(p.record_model_output(k(T, P), &out, now), 2);
        // Wrong trace, wrong parent, wrong name, wrong input: no id.
        assert_eq!(
            p.tool_call_id(k(T2, P), "getWeather", Some(r#"{"city":"Paris"}"#), now),
            None
        );
        assert_eq!(
            p.tool_call_id(k(T, P2), "getWeather", Some(r#"{"city":"Paris"}"#), now),
            None
        );
        assert_eq!(
            p.tool_call_id(k(T, P), "getTime", Some(r#"{"city":"Paris"}"#), now),
            None
        );
        assert_eq!(
            p.tool_call_id(k(T, P), "getWeather", Some(r#"{"city":"Rome"}"#), now),
            None
        );
        // The right ones, in any order; each ref once.
        assert_eq!(
            p.tool_call_id(k(T, P), "getTime", Some(r#"{"tz":"CET"}"#), now)
                .as_deref(),
            Some("call_1")
        );
        assert_eq!(
            p.tool_call_id(k(T, P), "getWeather", Some(r#"{"city":"Paris"}"#), now)
                .as_deref(),
            Some("call_0")
        );
        assert_eq!(
            p.tool_call_id(k(T, P), "getWeather", Some(r#"{"city":"Paris"}"#), now),
            None
        );
        assert_eq!(p.pending(), 0);
    }

    #[test]
    fn inputs_compare_as_json_values() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        let out = answer(&[("t", Some("a"), r#"{"b":[1,2.5,{"x":null}],"a":"é","n":-0}"#)]);
        p.record_model_output(k(T, P), &out, now);
        let same = r#" { "a" : "\u00e9", "n": 0, "b" : [ 1.0, 25e-1, { "x" : null } ] } "#;
        assert_eq!(
            p.tool_call_id(k(T, P), "t", Some(same), now).as_deref(),
            Some("a")
        );

        // Array order matters, nesting matters, types matter.
        for (stored, asked) in [
            ("[1,2]", "[2,1]"),
            (r#"{"a":{"b":1}}"#, r#"{"a":{"c":1}}"#),
            (r#"{"a":"1"}"#, r#"{"a":1}"#),
            (r#"{"a":[]}"#, r#"{"a":{}}"#),
            (r#"{"a":1,"b":2}"#, r#"{"a":2,"b":1}"#),
            ("null", "false"),
            (r#"{"a":null}"#, "{}"),
        ] {
            let mut p = ToolCallPairing::new();
            p.record_model_output(k(T, P), &answer(&[("t", Some("a"), stored)]), now);
            assert_eq!(
                p.tool_call_id(k(T, P), "t", Some(asked), now),
                None,
                "{stored} vs {asked}"
            );
        }
    }

    #[test]
    fn absent_input_equals_null_and_namespaced_tool_names() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        let out = r#"{"message":{"role":"model","content":[{"toolRequest":{"name":"listOrders","ref":"r1"}}]}}"#;
        p.record_model_output(k(T, P), out, now);
        assert_eq!(
            p.tool_call_id(k(T, P), "shop/listOrders", None, now)
                .as_deref(),
            Some("r1")
        );
    }

    #[test]
    fn equal_parallel_calls_get_distinct_refs_in_order() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        let q = r#"{"city":"Paris"}"#;
        p.record_model_output(
            k(T, P),
            &answer(&[
                ("w", Some("c0"), q),
                ("w", Some("c1"), q),
                ("w", Some("c2"), q),
            ]),
            now,
        );
        let got: Vec<_> = (0..4)
            .map(|_| p.tool_call_id(k(T, P), "w", Some(q), now))
            .collect();
        assert_eq!(
            got,
            vec![
                Some("c0".into()),
                Some("c1".into()),
                Some("c2".into()),
                None
            ]
        );
    }

    #[test]
    fn candidates_form_and_requests_without_ref() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        // Gemini: no ref on the request; the first candidate only.
        let out = r#"{"candidates":[{"index":0,"message":{"role":"model","content":[{"toolRequest":{"name":"w","input":{"c":1}}},{"toolRequest":{"name":"w","ref":"x","input":{"c":2}}}]}},{"index":1,"message":{"role":"model","content":[{"toolRequest":{"name":"w","ref":"other","input":{"c":3}}}]}}],"usage":{}}"#;
        assert_eq!(p.record_model_output(k(T, P), out, now), 2);
        assert_eq!(p.tool_call_id(k(T, P), "w", Some(r#"{"c":1}"#), now), None);
        assert_eq!(
            p.tool_call_id(k(T, P), "w", Some(r#"{"c":3}"#), now),
            None,
            "second candidate not run"
        );
        assert_eq!(
            p.tool_call_id(k(T, P), "w", Some(r#"{"c":2}"#), now)
                .as_deref(),
            Some("x")
        );
    }

    #[test]
    fn bad_text_and_ids_pair_nothing() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        for out in [
            "",
            "not json",
            "[]",
            "null",
            r#"{"message":7}"#,
            r#"{"message":{"content":[{"toolRequest":{"name":7}}]}}"#,
        ] {
            assert_eq!(p.record_model_output(k(T, P), out, now), 0, "{out}");
        }
        let out = answer(&[("t", Some("a"), "{}")]);
        // Ids that are not hex of the right length make no key: such spans are not paired.
        assert_eq!(SpanKey::from_hex("xyz", P), None);
        assert_eq!(SpanKey::from_hex(T, "short"), None);
        assert_eq!(SpanKey::from_hex(T, "zz00000000000000"), None);
        assert_eq!(
            SpanKey::from_hex(T, "+f00000000000000"),
            None,
            "from_str_radix would take a sign"
        );
        let bytes = SpanKey::from_bytes(
            [
                0xaa, 0x81, 0xf9, 0xdc, 0x7e, 0x79, 0x97, 0xf5, 0x4b, 0x89, 0x05, 0x3e, 0x19, 0x48,
                0x5a, 0x59,
            ],
            [0x5e, 0xad, 0xae, 0, 0, 0, 0, 1],
        );
        assert_eq!(
            Some(bytes),
            SpanKey::from_hex(T, P),
            "bytes and hex name the same span"
        );
        p.record_model_output(k(T, P), &out, now);
        assert_eq!(
            p.tool_call_id(k(T, P), "t", Some("{"), now),
            None,
            "tool input not JSON"
        );
        assert_eq!(
            p.tool_call_id(k(T, P), "t", Some("{}"), now).as_deref(),
            Some("a")
        );
    }

    #[test]
    fn evicted_on_generate_end_root_end_age_and_count() {
        let t0 = Instant::now();
        let q = r#"{"a":1}"#;
        let out = answer(&[("t", Some("r"), q)]);

        // The generate span (the parent) ends: its requests go.
        let mut p = ToolCallPairing::new();
        p.record_model_output(k(T, P), &out, t0);
        p.record_model_output(k(T, P2), &out, t0);
        p.span_ended(k(T, P), false);
        assert_eq!(p.pending(), 1);
        assert_eq!(p.tool_call_id(k(T, P), "t", Some(q), t0), None);
        // The root of the trace ends: all of the trace goes, other traces stay.
        p.record_model_output(k(T2, P), &out, t0);
        p.span_ended(k(T, "1111111111111111"), true);
        assert_eq!(p.pending(), 1);
        assert_eq!(
            p.tool_call_id(k(T2, P), "t", Some(q), t0).as_deref(),
            Some("r")
        );

        // Age.
        let mut p = ToolCallPairing::with_limits(100, Duration::from_secs(60));
        p.record_model_output(k(T, P), &out, t0);
        assert_eq!(
            p.tool_call_id(k(T, P), "t", Some(q), t0 + Duration::from_secs(61)),
            None
        );
        assert_eq!(p.pending(), 0);

        // Count: the oldest answers go first.
        let mut p = ToolCallPairing::with_limits(3, Duration::from_secs(60));
        let parents = [
            "0000000000000001",
            "0000000000000002",
            "0000000000000003",
            "0000000000000004",
        ];
        for parent in parents {
            p.record_model_output(k(T, parent), &out, t0);
        }
        assert_eq!(p.pending(), 3);
        assert_eq!(p.tool_call_id(k(T, parents[0]), "t", Some(q), t0), None);
        assert_eq!(
            p.tool_call_id(k(T, parents[3]), "t", Some(q), t0)
                .as_deref(),
            Some("r")
        );
    }

    #[test]
    fn deep_and_odd_inputs_are_safe() {
        let now = Instant::now();
        let mut p = ToolCallPairing::new();
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        p.record_model_output(k(T, P), &answer(&[("t", Some("r"), &deep)]), now);
        assert_eq!(
            p.tool_call_id(k(T, P), "t", Some(&deep), now),
            None,
            "too deep to hash: no id, no panic"
        );
        // Valid JSON serde_json refuses (JSON.parse reads them): not hashed, so never paired.
        assert_eq!(hash_text("1e400"), None);
        assert_eq!(hash_text(r#""\ud800""#), None);
        assert_eq!(hash_text("[1] x"), None, "trailing text");
    }
}
