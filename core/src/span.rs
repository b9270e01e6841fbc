//! The whole-span mapping: one span's Genkit data in, its `gen_ai.*` attributes out, for every
//! sink. The processor (napi, `src/seam.rs`) writes the output into the span's JavaScript
//! attribute map; the native OTLP exporter writes it as protobuf `KeyValue`s while encoding. The
//! rules live here once; both entries only convert [`SpanInput`] in and [`Value`] out.
//!
//! - [`Mode::Reference`]: seed 000's processor, byte for byte (with the candidate answers of
//!   issue 5 and the per-attribute degradation of issue 4).
//! - [`Mode::Complete`] (the default): Maple's own rules (issue 10; seeds 002/003/004), see
//!   [`crate::complete`].
//!
//! A [`Mapper`] holds the [`Options`] and the state that spans of one trace share (tool call id
//! pairing, rule 5). It is fed the spans in the order they end.

use crate::complete;
use crate::mapping::{map_model_scrubbed, map_tool_result, problem, Scalar, ToolResult};
use std::borrow::Cow;

/// Which attributes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every rule of issue 10: registry provider names, tokens per provider, cost, `error.type`,
    /// tool call ids, `tool.v2`, media parts, finish-reason vocabulary, request settings.
    #[default]
    Complete,
    /// Exactly what seed 000's reference processor writes (for dashboards compared during a
    /// migration).
    Reference,
}

/// The mapping options, read once when a [`Mapper`] is made. The content options (issue 11,
/// [`crate::content`]) apply in both modes.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// [`Mode`]; `Complete` by default.
    pub mode: Mode,
    /// Complete mode: write `gen_ai.usage.cost` (USD) when the model's price is known (rule 2).
    /// `true` by default; ignored in reference mode.
    pub cost: bool,
    /// Whether the five content attributes ([`crate::content::CONTENT_ATTRIBUTES`]) are written
    /// (`captureContent` / `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`, resolved by the
    /// JavaScript options). `true` by default.
    pub capture: bool,
    /// Whether secrets in content attributes are replaced by [`crate::scrub::PLACEHOLDER`]
    /// ([`crate::scrub::DEFAULT_PATTERNS`] plus [`Self::secret_patterns`]). `true` by default.
    pub scrub: bool,
    /// Extra secret patterns (`regex` crate syntax; a group named `secret` limits the
    /// replacement to it), compiled with the defaults into one `RegexSet` per [`Mapper`].
    pub secret_patterns: Vec<String>,
    /// The cap per content attribute in UTF-8 bytes ([`crate::cap`]): `None` for the mode's
    /// default ([`crate::cap::DEFAULT_MAX_CONTENT_BYTES`] in complete mode, no cap in reference
    /// mode), `Some(usize::MAX)` for no cap.
    pub max_content_bytes: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Complete,
            cost: true,
            capture: true,
            scrub: true,
            secret_patterns: Vec::new(),
            max_content_bytes: None,
        }
    }
}

/// The span's OpenTelemetry status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Status {
    /// `UNSET` (0).
    #[default]
    Unset,
    /// `OK` (1).
    Ok,
    /// `ERROR` (2): the span failed.
    Error,
}

impl Status {
    /// From the numeric code of the OpenTelemetry API / OTLP (`0`, `1`, `2`); other codes: `Unset`.
    pub fn from_code(code: u32) -> Status {
        match code {
            1 => Status::Ok,
            2 => Status::Error,
            _ => Status::Unset,
        }
    }
}

/// Everything the rules read from one ended span. Strings are borrowed from the caller's buffers.
#[derive(Debug, Clone, Default)]
pub struct SpanInput<'a> {
    /// `genkit:metadata:subtype` when a string (`flow`, `agent`, `model`, `tool`, `tool.v2`, ...).
    pub subtype: Option<&'a str>,
    /// `genkit:name` as a string (seed 000 uses `String(value)`); `None` when absent.
    pub name: Option<&'a str>,
    /// `genkit:input` when a string.
    pub input: Option<&'a str>,
    /// `genkit:input` when it is present but neither a string nor null/undefined (Genkit writes
    /// JSON text there; an app or a plugin may set another type). Read for a tool span's
    /// `gen_ai.tool.call.arguments` only, and only when `input` is `None`.
    pub other_input: Option<OtherInput>,
    /// `genkit:output` when a string.
    pub output: Option<&'a str>,
    /// `genkit:metadata:conversationId`, else `genkit:metadata:agent:sessionId`, of any attribute
    /// type (copied to `gen_ai.conversation.id` as it is).
    pub conversation_id: Option<Value<'a>>,
    /// The span's status code.
    pub status: Status,
    /// `exception.type` of the span's first `exception` event, when a string.
    pub exception_type: Option<&'a str>,
    /// `exception.stacktrace` of that event, when a string (its first line names the error).
    pub exception_stacktrace: Option<&'a str>,
    /// The trace id (16 bytes).
    pub trace_id: Option<[u8; 16]>,
    /// The span id (8 bytes).
    pub span_id: Option<[u8; 8]>,
    /// The parent span id (8 bytes), `None` for a root span.
    pub parent_span_id: Option<[u8; 8]>,
    /// When the span ended, in nanoseconds since the Unix epoch (OTLP's `end_time_unix_nano`;
    /// the JavaScript SDK's `span.endTime` HrTime). Complete mode prices the call at that time
    /// (rule 2: prices change over time); `None`: priced at the time of mapping.
    pub end_time_unix_nano: Option<u64>,
    /// Complete mode: record which pieces of the message attributes are copied from `input` /
    /// `output` ([`Mapped::copies`]; the attributes are the same either way). For a caller that
    /// holds the sources in another form too (the napi binding builds UTF-16 outputs from the
    /// sources' UTF-16 instead of transcoding them).
    pub record_copies: bool,
    /// The napi binding's narrowed texts ([`Mapper::map_narrowed`]): `input` and `output` hold
    /// one byte a UTF-16 code unit, ASCII as it is and every other unit as this byte. The writers
    /// then record every piece holding it ([`crate::out::Recording::Holding`]).
    pub narrowed: Option<u8>,
}

impl<'a> SpanInput<'a> {
    /// A tool span's `gen_ai.tool.call.arguments`: `genkit:input`'s text, `"{}"` when it is
    /// absent (seed 000), a number or a boolean as it is; `None` for another type
    /// ([`OtherInput::Other`]), which each mode answers in its own way.
    pub fn tool_arguments(&self) -> Option<Value<'a>> {
        match (self.input, self.other_input) {
            (Some(text), _) => Some(Value::str(text)),
            (None, None) => Some(Value::str("{}")),
            (None, Some(other)) => other.value(),
        }
    }
}

/// A span's trace id, span id and parent span id, as [`SpanInput`] holds them: what rule 5 (tool
/// call ids) reads of a span, and nothing else does ([`Mapper::map_with_ids`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceIds {
    /// The trace id (16 bytes).
    pub trace_id: Option<[u8; 16]>,
    /// The span id (8 bytes).
    pub span_id: Option<[u8; 8]>,
    /// The parent span id (8 bytes), `None` for a root span.
    pub parent_span_id: Option<[u8; 8]>,
}

impl TraceIds {
    /// The ids `span` holds.
    pub fn of(span: &SpanInput<'_>) -> TraceIds {
        TraceIds {
            trace_id: span.trace_id,
            span_id: span.span_id,
            parent_span_id: span.parent_span_id,
        }
    }
}

/// A `genkit:input` that is not a string ([`SpanInput::other_input`]). A tool span's
/// `gen_ai.tool.call.arguments` is then the number or the boolean as it is (seed 000 copies the
/// value as it is; the GenAI semantic conventions type the attribute `any`), and for any other
/// type left out: complete mode writes JSON text or scalars, and an array or an object is
/// neither (problem [`problem::ATTRIBUTE_TYPE`]; reference mode's JavaScript path copies it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OtherInput {
    /// A number (a JavaScript number, an OTLP `intValue` or `doubleValue`).
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// Any other type: an array, an object, a `Symbol`, a `BigInt`, bytes, ...
    Other,
}

impl OtherInput {
    /// The attribute value of a number or a boolean; `None` for [`OtherInput::Other`].
    pub fn value<'a>(self) -> Option<Value<'a>> {
        match self {
            OtherInput::Number(n) => Some(Value::Double(n)),
            OtherInput::Bool(b) => Some(Value::Bool(b)),
            OtherInput::Other => None,
        }
    }
}

/// An attribute value, independent of the sink.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// A string.
    Str(Cow<'a, str>),
    /// An integer (token counts, `seed`, `top_k`, ...).
    Int(i64),
    /// A double (temperature, cost in USD, a JSON number that is not an integer).
    Double(f64),
    /// A boolean.
    Bool(bool),
    /// JSON `null` (reference mode copies a `null` token count as `null`; an OTLP sink writes an
    /// empty `AnyValue`).
    Null,
    /// A homogeneous array of scalars (`gen_ai.response.finish_reasons`, stop sequences).
    Array(Vec<Value<'a>>),
    /// A compound JSON value as its text, which only a JavaScript sink can recreate (with
    /// `JSON.parse`); an OTLP sink writes it as a string.
    Json(&'a str),
}

impl<'a> Value<'a> {
    /// A borrowed string value.
    pub fn str(s: &'a str) -> Value<'a> {
        Value::Str(Cow::Borrowed(s))
    }

    /// A JSON number as an attribute: an integer when it is one (`JSON.parse` gives the same
    /// JavaScript number either way; an OTLP sink writes `intValue`, as the JavaScript SDK does
    /// for integer numbers), a double otherwise.
    pub fn number(v: f64) -> Value<'a> {
        if v.fract() == 0.0
            && v.abs() < 9_007_199_254_740_992.0
            && !(v == 0.0 && v.is_sign_negative())
        {
            Value::Int(v as i64)
        } else {
            Value::Double(v)
        }
    }

    fn of_scalar(s: Scalar<'a>) -> Value<'a> {
        match s {
            Scalar::Str(s) => Value::Str(s),
            Scalar::Num(n) => Value::number(n),
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Null => Value::Null,
            Scalar::Json(text) => Value::Json(text),
        }
    }
}

/// The output of one span: attributes in the order they are written, and [`problem`] flags.
#[derive(Debug, Default)]
pub struct Mapped<'a> {
    /// `(key, value)` pairs; a key appears at most once.
    pub attributes: Vec<(&'static str, Value<'a>)>,
    /// [`problem`] flags (`0`: clean). With [`problem::NEEDS_JS`] the attributes are empty and
    /// the caller maps the span another way.
    pub problems: u32,
    /// The content attributes whose values the writers scrubbed as they wrote them (bits of
    /// [`crate::content::content_bit`]): the content rules only cap these.
    pub scrubbed: u8,
    /// With [`SpanInput::record_copies`]: per message attribute written as the writers wrote it,
    /// the pieces of its string copied from `genkit:input` / `genkit:output`
    /// ([`crate::out::Copied`]). An attribute the content rules changed or left out has none.
    pub copies: Vec<(&'static str, Vec<crate::out::Copied>)>,
    /// Per message array attribute written as the writers wrote it, the byte ranges of its
    /// messages as the writer marked them ([`crate::out::Out::marking`]): the size cap's
    /// shortcut ([`crate::cap::cap_messages_in`]). May be missing for any attribute.
    pub elements: Vec<(&'static str, Vec<(usize, usize)>)>,
    /// The content attributes whose writers wrote a media part (bits of
    /// [`crate::content::content_bit`]; complete mode's rule 7): its MIME type and size were
    /// read from the characters of the part's URL and content type.
    pub media: u8,
}

impl<'a> Mapped<'a> {
    pub(crate) fn new() -> Self {
        Mapped {
            attributes: Vec::with_capacity(24), // ok: a constant; the keys this module writes are under 40
            ..Mapped::default()
        }
    }

    /// The writer's element marks of `key`'s string ([`Mapped::elements`]), taken out.
    pub fn take_elements(&mut self, key: &str) -> Option<Vec<(usize, usize)>> {
        let i = self.elements.iter().position(|(k, _)| *k == key)?;
        Some(self.elements.swap_remove(i).1)
    }

    /// The recorded pieces of `key`'s string ([`Mapped::copies`]), taken out; empty when none.
    pub fn take_copies(&mut self, key: &str) -> Vec<crate::out::Copied> {
        match self.copies.iter().position(|(k, _)| *k == key) {
            Some(i) => self.copies.swap_remove(i).1,
            None => Vec::new(),
        }
    }

    /// Adds an attribute.
    pub fn push(&mut self, key: &'static str, value: Value<'a>) {
        self.attributes.push((key, value));
    }

    /// Adds a content attribute a writer wrote with a scrubber attached (`scrubbed`), or without
    /// one.
    pub(crate) fn push_written(&mut self, key: &'static str, value: Value<'a>, scrubbed: bool) {
        if scrubbed {
            self.scrubbed |= crate::content::content_bit(key);
        }
        self.push(key, value);
    }

    /// The value of `key`, if written.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

/// Attribute keys written by the whole-span mapping beyond [`crate::semconv`]'s.
pub mod keys {
    /// `gen_ai.agent.name`.
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// `gen_ai.conversation.id`.
    pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
    /// `gen_ai.tool.name`.
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// `gen_ai.tool.call.arguments`.
    pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// `gen_ai.tool.call.id` (rule 5).
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// `error.type` (rule 4).
    pub const ERROR_TYPE: &str = "error.type";
}

use crate::semconv as sc;

/// Maps spans with one set of [`Options`], keeping the state spans of a trace share.
#[derive(Debug)]
pub struct Mapper {
    options: Options,
    /// The content rules of `options`, compiled once (issue 11).
    content: crate::content::Content,
    /// Complete mode: the tool requests of model answers, for `gen_ai.tool.call.id` (rule 5).
    pairing: crate::pairing::ToolCallPairing,
    /// Complete mode: prices already looked up (rule 2; bounded, see [`crate::cost::PriceCache`]).
    prices: crate::cost::PriceCache,
}

impl Default for Mapper {
    fn default() -> Self {
        Mapper::new(Options::default())
    }
}

impl Mapper {
    /// A mapper with these options. When [`Options::secret_patterns`] do not compile, it writes
    /// no content attributes at all (scrubbed content or none); [`Self::try_new`] reports it.
    pub fn new(options: Options) -> Mapper {
        Mapper::try_new(options.clone()).unwrap_or_else(|_| Mapper {
            options,
            content: crate::content::Content::none(),
            pairing: Default::default(),
            prices: Default::default(),
        })
    }

    /// A mapper with these options. Errors: a secret pattern that does not compile.
    pub fn try_new(options: Options) -> Result<Mapper, crate::scrub::PatternError> {
        Ok(Mapper {
            content: crate::content::Content::new(&options)?,
            options,
            pairing: Default::default(),
            prices: Default::default(),
        })
    }

    /// The content rules (issue 11), for the paths that write content outside [`Self::map`].
    pub fn content(&self) -> &crate::content::Content {
        &self.content
    }

    /// The options it was made with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Maps one ended span. Never panics on any input; a span that is not a Genkit flow, agent,
    /// model or tool span gets no attributes.
    pub fn map<'a>(&mut self, span: &SpanInput<'a>) -> Mapped<'a> {
        self.map_with_ids(span, || TraceIds::of(span))
    }

    /// [`Self::map`], with the span's ids taken from `ids` instead of `span`'s `trace_id`,
    /// `span_id` and `parent_span_id` (which it does not read). `ids` is called at most once, and
    /// only where rule 5 (tool call ids) uses them: in complete mode, when the answer holds tool
    /// requests or the mapper keeps tool call id state ([`Self::holds_tool_calls`]); no other
    /// rule reads an id. The napi binding reads a span's ids from JavaScript only then, as its
    /// tool path does (three Node-API string reads, about 1,000 instructions of a 1 KB model
    /// span's 50,000; BENCHMARKS.md "Stop 53").
    pub fn map_with_ids<'a>(
        &mut self,
        span: &SpanInput<'a>,
        ids: impl FnOnce() -> TraceIds,
    ) -> Mapped<'a> {
        // The writers scrub as they write (issue 11); `apply` then only caps their values.
        let scrub = self.content.scrubber();
        let mut out = match self.options.mode {
            Mode::Reference => map_reference_scrubbed(span, scrub),
            Mode::Complete => {
                let (mut out, requests) =
                    map_complete(span, &self.options, &mut self.prices, scrub);
                if out.problems & problem::NEEDS_JS == 0 {
                    if let Some(ids) = self.rule5_ids(&requests, ids) {
                        crate::pairing::pair(&mut self.pairing, span, ids, &mut out, &requests);
                    }
                }
                out
            }
        };
        // Content control (issue 11): capture, scrubbing, cap, on the written values.
        self.content.apply(&mut out);
        out
    }

    /// Maps a complete-mode model span whose `genkit:input` / `genkit:output` are narrowed
    /// ([`SpanInput::narrowed`]: one byte a UTF-16 code unit, every unit above 0x7F the
    /// placeholder byte), as [`Self::map`] maps the texts they were narrowed from, or `None`
    /// where the answer would not be exact. The narrowed JSON has the structure, the string
    /// extents and the answers to every question the rules ask of a text that the original has,
    /// except where they read the characters themselves; so the mapping is declined, before any
    /// state changes (rule 5's tool call state is left as it was), when:
    /// - the content rules could change a value: capture off, user secret patterns (a regex may
    ///   read the characters), or an input that is not *clean* (a needle of the built-in
    ///   patterns or a `\u` escape in it: then scrubbing has work in one of the texts). Clean
    ///   inputs are mapped without a scrubber, which would change nothing;
    /// - the answer needs JavaScript ([`problem::NEEDS_JS`]);
    /// - a media part was written from a text holding the placeholder (its size and MIME type
    ///   are read from its URL's and content type's characters: [`Mapped::media`], input
    ///   messages and system instructions from `genkit:input`, output messages from
    ///   `genkit:output`), or a tool request of the answer holds it and the span has a trace
    ///   and a parent id (its name, ref and input are then kept for rule 5);
    /// - a value that is not a string, or an attribute other than a content attribute (messages,
    ///   system instructions, tool call arguments and result), holds the placeholder (a content
    ///   attribute's placeholders must lie in its recorded copies: `build` checks that);
    /// - a content attribute holding the placeholder is over the cap
    ///   ([`crate::content::Content::max_bytes`]) in UTF-8 and the cap would do more than drop
    ///   whole messages of a message array (shorten strings, at character offsets the narrowed
    ///   text does not have), or one without it is withheld by the cap. A content attribute
    ///   without the placeholder is the usual path's own text (written from ASCII, or from a text
    ///   the caller transcoded instead of narrowing it, such as an answer longer than the cap),
    ///   so the usual cap is applied to it as [`crate::content::Content::apply`] applies it
    ///   (its recorded copies are then dropped). A placeholder holder's UTF-8 size is its length
    ///   plus, for each recorded copy, `utf8_extra` of it (the bytes the copied characters take
    ///   in UTF-8 beyond one each; `None`: unknown, declined), asked only when the length plus
    ///   two bytes a placeholder (no code unit is more than 3 UTF-8 bytes) is over the cap.
    ///   Message arrays over it have the messages the cap would drop dropped here
    ///   ([`crate::cap::keep_messages_sized`]: the same choice on the same sizes), their copies
    ///   moved with the text, and the cap reported as the content rules report it;
    /// - `build`, given the mapped attributes (message attributes still holding placeholders)
    ///   and their recorded copies (of a text holding the placeholder, checked here before the
    ///   cap: in the order written, each within its text and at the address of as many bytes of
    ///   `genkit:input` or `genkit:output`), answers `None`. `build` must answer `None` unless
    ///   every placeholder of a content attribute lies in a recorded copy whose bytes it finds at
    ///   the copy's address in its source, and rebuild each from the source's code units there
    ///   (the binding's `narrow::rebuild` uses a copy only where its bytes are those at its
    ///   address, and refuses a placeholder anywhere else). The bytes are not read here as well:
    ///   the writers copied them, and nothing in this mapping changes a written text holding the
    ///   placeholder but the cap below, which moves the copies with their bytes (the usual cap of
    ///   a text without it drops that text's copies).
    ///
    /// Otherwise rule 5's state is updated as [`Self::map_with_ids`] updates it, the span's ids
    /// taken from `ids` as there (called at most once, before the checks above when the answer
    /// holds tool requests or the state is not empty), and the attributes are returned with what
    /// `build` made. The content rules change nothing else here (clean inputs;
    /// the cap as above), so they are not applied.
    pub fn map_narrowed<'a, T>(
        &mut self,
        span: &SpanInput<'a>,
        ids: impl FnOnce() -> TraceIds,
        utf8_extra: impl Fn(&crate::out::Copied) -> Option<usize>,
        build: impl FnOnce(&Mapped<'a>) -> Option<T>,
    ) -> Option<(Mapped<'a>, T)> {
        let placeholder = span.narrowed?;
        if self.options.mode != Mode::Complete || span.subtype != Some("model") {
            return None;
        }
        let content = &self.content;
        if !content.captures() {
            return None;
        }
        let scrubber = content.scrubber();
        if scrubber.is_some_and(|s| s.has_user_patterns()) {
            return None;
        }
        let holds = |t: &str| memchr::memchr(placeholder, t.as_bytes()).is_some();
        for text in [span.input, span.output].into_iter().flatten() {
            if crate::scrub::has_unicode_escape(text.as_bytes())
                || scrubber.is_some_and(|s| !s.is_clean(text))
            {
                return None;
            }
        }
        let (mut out, requests) = map_complete(span, &self.options, &mut self.prices, None);
        if out.problems & problem::NEEDS_JS != 0 {
            return None;
        }
        // A media part written from a text that holds the placeholder (its writers note it:
        // `Mapped::media`): its size and MIME type were read from narrowed characters.
        use crate::content::content_bit;
        let from_input = content_bit(sc::INPUT_MESSAGES) | content_bit(sc::SYSTEM_INSTRUCTIONS);
        let from_output = content_bit(sc::OUTPUT_MESSAGES);
        if (out.media & from_input != 0 && span.input.is_some_and(holds))
            || (out.media & from_output != 0 && span.output.is_some_and(holds))
        {
            return None;
        }
        let raw_holds = |r: &crate::genkit::Raw<'_>| holds(r.get());
        let ids = self.rule5_ids(&requests, ids);
        // Rule 5 keeps a span's requests only when it has a trace and a parent.
        let kept = ids.is_some_and(|i| i.trace_id.is_some() && i.parent_span_id.is_some());
        if kept
            && requests.iter().any(|r| {
                raw_holds(&r.name)
                    || r.reference.is_some_and(|x| raw_holds(&x))
                    || r.input.is_some_and(|x| raw_holds(&x))
            })
        {
            return None;
        }
        let max = content.max_bytes();
        let sources: [&str; 2] = [span.input.unwrap_or(""), span.output.unwrap_or("")];
        let mut dropped = 0usize;
        let mut capped: [Option<&'static str>; 3] = [None; 3];
        let mut n_capped = 0;
        for i in 0..out.attributes.len() {
            let key = out.attributes[i].0;
            let text = match &out.attributes[i].1 {
                Value::Str(text) if crate::content::is_content(key) => text,
                other if value_holds(other, placeholder) => return None,
                _ => continue,
            };
            let copies = out
                .copies
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(&[][..], |(_, c)| c.as_slice());
            let holds_placeholder = memchr::memchr(placeholder, text.as_bytes()).is_some();
            if holds_placeholder && !in_order(text.len(), copies, &sources) {
                return None;
            }
            // Under a cap: the placeholders counted only for a text that could be over it (no
            // code unit is more than 3 UTF-8 bytes, 2 beyond its placeholder).
            let Some(max) = max.filter(|&m| text.len() > m / 3) else {
                continue;
            };
            if !holds_placeholder {
                // No placeholder: the usual path's own text (narrowing turns only units above
                // 0x7F into it; this text was written from ASCII or from a transcoded input,
                // such as an answer longer than the cap, which the binding does not narrow).
                // The usual cap applies to it as it is, as `Content::apply` applies it there.
                if text.len() <= max {
                    continue;
                }
                let marks = out
                    .elements
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, m)| m.as_slice());
                match content.filter_written_marked(key, text, marks) {
                    crate::content::Filtered::Same => continue,
                    crate::content::Filtered::Changed {
                        value,
                        dropped: d,
                        capped: c,
                    } => {
                        if c {
                            if n_capped == capped.len() {
                                return None;
                            }
                            capped[n_capped] = Some(key);
                            n_capped += 1;
                        }
                        dropped += d;
                        out.attributes[i].1 = Value::Str(Cow::Owned(value));
                        // Another text: the pieces recorded of the written one no longer apply.
                        if let Some((_, c)) = out.copies.iter_mut().find(|(k, _)| *k == key) {
                            c.clear();
                        }
                        continue;
                    }
                    // Left out by the usual path: it reports why.
                    crate::content::Filtered::Withheld(_) => return None,
                }
            }
            let placeholders = memchr::memchr_iter(placeholder, text.as_bytes()).count();
            if text.len().saturating_add(placeholders.saturating_mul(2)) <= max {
                continue;
            }
            // Each copy's extra bytes, asked once (a pass over its units).
            let mut extras: Vec<usize> = Vec::new();
            extras.try_reserve_exact(copies.len()).ok()?;
            for copy in copies {
                extras.push(utf8_extra(copy)?);
            }
            let extra = extras.iter().fold(0usize, |a, &e| a.saturating_add(e));
            if text.len().saturating_add(extra) <= max {
                continue;
            }
            // Over the cap in UTF-8: only a message array whose oldest messages can go.
            if !crate::content::is_message_array(key) || n_capped == capped.len() {
                return None;
            }
            let marks = out
                .elements
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, m)| m.as_slice());
            let (kept_text, kept_copies, n) = drop_narrowed(text, copies, &extras, marks, max)?;
            // Listed only when messages went, as the content rules list a key only when the cap
            // changed it (an array whose elements alone fit is rewritten, not capped).
            if n > 0 {
                dropped += n;
                capped[n_capped] = Some(key);
                n_capped += 1;
            }
            out.attributes[i].1 = Value::Str(Cow::Owned(kept_text));
            if let Some((_, c)) = out.copies.iter_mut().find(|(k, _)| *k == key) {
                *c = kept_copies;
            }
        }
        crate::content::report_cap(&mut out, dropped, &capped[..n_capped]);
        let built = build(&out)?;
        if let Some(ids) = ids {
            crate::pairing::pair(&mut self.pairing, span, ids, &mut out, &requests);
        }
        Some((out, built))
    }

    /// The span's ids (`ids()`) when rule 5 has something to do with the answer's `requests`:
    /// there are some, or the state is not empty. `None` otherwise, without calling `ids`:
    /// [`crate::pairing::pair`] would record nothing, take nothing, and an empty state ignores a
    /// span's end.
    fn rule5_ids(
        &self,
        requests: &[crate::pairing::ToolRequest<'_>],
        ids: impl FnOnce() -> TraceIds,
    ) -> Option<TraceIds> {
        (!requests.is_empty() || !self.pairing.is_empty()).then(ids)
    }

    /// Tells the mapper a span ended that [`Self::map`] did not see (a `generate` span, a flow,
    /// a non-Genkit root): `root` when it is its trace's local root. Frees the tool call id state
    /// of what ended (rule 5).
    pub fn span_ended(&mut self, trace_id: [u8; 16], span_id: [u8; 8], root: bool) {
        let key = crate::pairing::SpanKey::from_bytes(trace_id, span_id);
        self.pairing.span_ended(key, root);
    }

    /// Rule 5 alone, for a complete-mode `tool` span whose other attributes are written
    /// elsewhere (the processor's tool path, whose writers give a `tool` span the attributes
    /// [`Self::map`] gives it): its `gen_ai.tool.call.id`, or `None`, with the state changed as
    /// [`Self::map`] changes it for that span (the request taken, the span's end noted). Reads
    /// `span`'s `name`, `input` and ids; its subtype is taken to be `tool`.
    pub fn pair_tool_span(&mut self, span: &SpanInput<'_>) -> Option<String> {
        let tool = SpanInput {
            subtype: Some("tool"),
            ..span.clone()
        };
        let mut out = Mapped::new();
        crate::pairing::pair(&mut self.pairing, &tool, TraceIds::of(span), &mut out, &[]);
        out.attributes
            .into_iter()
            .find(|(k, _)| *k == keys::TOOL_CALL_ID)
            .and_then(|(_, v)| match v {
                Value::Str(id) => Some(id.into_owned()),
                _ => None,
            })
    }

    /// Whether tool call id state is kept for any trace (rule 5): when not, [`Self::span_ended`]
    /// has nothing to free, and a caller may skip telling it.
    pub fn holds_tool_calls(&self) -> bool {
        !self.pairing.is_empty()
    }
}

/// Complete mode's mapping of `span`, with the answer's tool requests for rule 5 collected from
/// the mapping's own parse of `genkit:output` (no second parse; collected whatever the span's
/// ids, which are read after the mapping and only when there are requests or state,
/// [`Mapper::map_with_ids`]; most answers have none: no allocation then).
fn map_complete<'a>(
    span: &SpanInput<'a>,
    options: &Options,
    prices: &mut crate::cost::PriceCache,
    scrub: Option<&crate::scrub::Scrubber>,
) -> (Mapped<'a>, Vec<crate::pairing::ToolRequest<'a>>) {
    let mut requests = Vec::new();
    let out = complete::map_collecting(span, options, prices, scrub, Some(&mut requests));
    (out, requests)
}

/// Whether `copies` ([`Mapped::copies`] of a text `len` bytes long, in output order) follow one
/// another within the text, each at the address of as many bytes of one of `sources`
/// ([`Mapper::map_narrowed`]: the bytes themselves are compared by its `build`). Reads no byte of
/// the text or the sources (a 100 KB multi-byte span compared each copy twice, 35k instructions:
/// BENCHMARKS.md "Stop 51").
fn in_order(len: usize, copies: &[crate::out::Copied], sources: &[&str]) -> bool {
    let mut done = 0;
    copies.iter().all(|copy| {
        let Some(end) = copy.at.checked_add(copy.len) else {
            return false;
        };
        let in_source = sources.iter().any(|s| {
            let start = s.as_ptr() as usize;
            copy.src
                .checked_sub(start)
                .and_then(|from| from.checked_add(copy.len))
                .is_some_and(|to| to <= s.len())
        });
        let ok = copy.at >= done && end <= len && in_source;
        done = end;
        ok
    })
}

/// The narrowed message array `text` with the messages the cap drops dropped
/// ([`crate::cap::keep_messages_sized`], each message's UTF-8 size its length plus the `extras`
/// of the copies inside it, one per copy), its copies moved to where their bytes are in the new
/// text, and how many messages went; `None` where the cap would do more or a copy lies across a
/// message's edge (or outside every message), or an allocation fails.
fn drop_narrowed(
    text: &str,
    copies: &[crate::out::Copied],
    extras: &[usize],
    marks: Option<&[(usize, usize)]>,
    max: usize,
) -> Option<(String, Vec<crate::out::Copied>, usize)> {
    let elements = crate::cap::message_elements(text, marks).ok()?;
    // Each copy's element, walking both in order (copies are in output order).
    let mut extra: Vec<usize> = Vec::new();
    extra.try_reserve_exact(elements.len()).ok()?;
    extra.resize(elements.len(), 0);
    let mut owner: Vec<usize> = Vec::new();
    owner.try_reserve_exact(copies.len()).ok()?;
    let mut e = 0;
    if extras.len() != copies.len() {
        return None;
    }
    for (copy, &copy_extra) in copies.iter().zip(extras) {
        let end = copy.at.checked_add(copy.len)?;
        while e < elements.len() && elements[e].1 <= copy.at {
            e += 1;
        }
        let &(start, stop) = elements.get(e)?;
        if copy.at < start || end > stop {
            return None;
        }
        extra[e] = extra[e].saturating_add(copy_extra);
        owner.push(e);
    }
    let kept = crate::cap::keep_messages_sized(text, &elements, &extra, max)
        .ok()
        .flatten()?;
    // The new text as the cap writes it, and each kept message's new start, for its copies.
    let mut moved_to: Vec<Option<usize>> = Vec::new();
    moved_to.try_reserve_exact(elements.len()).ok()?;
    moved_to.resize(elements.len(), None);
    let out =
        crate::cap::join_kept(text, &elements, &kept.keep, |i, at| moved_to[i] = Some(at)).ok()?;
    let mut moved: Vec<crate::out::Copied> = Vec::new();
    moved.try_reserve_exact(copies.len()).ok()?;
    for (copy, &i) in copies.iter().zip(&owner) {
        if let Some(new_start) = moved_to[i] {
            moved.push(crate::out::Copied {
                at: copy.at - elements[i].0 + new_start,
                ..*copy
            });
        }
    }
    Some((out, moved, kept.dropped))
}

/// Whether `value` holds byte `b` in any string (arrays searched).
fn value_holds(value: &Value<'_>, b: u8) -> bool {
    match value {
        Value::Str(s) => memchr::memchr(b, s.as_bytes()).is_some(),
        Value::Json(s) => memchr::memchr(b, s.as_bytes()).is_some(),
        Value::Array(items) => items.iter().any(|v| value_holds(v, b)),
        _ => false,
    }
}

/// `String(attrs["genkit:name"])` of seed 000: `"undefined"` when absent.
fn reference_name<'a>(span: &SpanInput<'a>) -> &'a str {
    span.name.unwrap_or("undefined")
}

/// Flow and agent spans (seed 000): `invoke_agent`, the agent name, the conversation id.
pub(crate) fn map_agent<'a>(span: &SpanInput<'a>, out: &mut Mapped<'a>, name: Option<&'a str>) {
    out.push(sc::OPERATION_NAME, Value::str("invoke_agent"));
    if let Some(name) = name {
        out.push(keys::AGENT_NAME, Value::str(name));
    }
    if let Some(id) = &span.conversation_id {
        out.push(keys::CONVERSATION_ID, id.clone());
    }
}

/// The reference processor's whole mapping (seed 000), as `js/mapping.js` writes it.
pub fn map_reference<'a>(span: &SpanInput<'a>) -> Mapped<'a> {
    map_reference_scrubbed(span, None)
}

/// [`map_reference`], the message writers scrubbing with `scrubber` as they write
/// ([`crate::mapping::map_model_scrubbed`]); their attributes are marked in [`Mapped::scrubbed`].
pub fn map_reference_scrubbed<'a>(
    span: &SpanInput<'a>,
    scrubber: Option<&crate::scrub::Scrubber>,
) -> Mapped<'a> {
    let mut out = Mapped::new();
    match span.subtype {
        Some("flow" | "agent") => map_agent(span, &mut out, Some(reference_name(span))),
        Some("model") => {
            out.push(sc::OPERATION_NAME, Value::str("chat"));
            let name = reference_name(span);
            let (provider, model) = match memchr::memchr(b'/', name.as_bytes()) {
                Some(i) if i + 1 < name.len() => (&name[..i], &name[i + 1..]),
                Some(i) => (&name[..i], name),
                None => (name, name),
            };
            out.push(sc::PROVIDER_NAME, Value::str(provider));
            out.push(sc::REQUEST_MODEL, Value::str(model));
            let attrs = map_model_scrubbed(span.input, span.output, scrubber);
            out.problems |= attrs.problems;
            if attrs.problems & problem::NEEDS_JS != 0 {
                return needs_js(out.problems);
            }
            let scrubbed = scrubber.is_some();
            if let Some(s) = attrs.input_messages {
                out.push_written(sc::INPUT_MESSAGES, Value::Str(Cow::Owned(s)), scrubbed);
            }
            if let Some(s) = attrs.system_instructions {
                out.push_written(sc::SYSTEM_INSTRUCTIONS, Value::Str(Cow::Owned(s)), scrubbed);
            }
            if let Some(s) = attrs.output_messages {
                out.push_written(sc::OUTPUT_MESSAGES, Value::Str(Cow::Owned(s)), scrubbed);
            }
            if let Some(reasons) = attrs.finish_reasons {
                let mut values = Vec::new();
                if values.try_reserve(reasons.len()).is_err() {
                    return needs_js(out.problems);
                }
                for raw in reasons {
                    values.push(Value::of_scalar(Scalar::of(raw)));
                }
                out.push(sc::RESPONSE_FINISH_REASONS, Value::Array(values));
            }
            if let Some(raw) = attrs.input_tokens {
                out.push(sc::USAGE_INPUT_TOKENS, Value::of_scalar(Scalar::of(raw)));
            }
            if let Some(raw) = attrs.output_tokens {
                out.push(sc::USAGE_OUTPUT_TOKENS, Value::of_scalar(Scalar::of(raw)));
            }
        }
        Some("tool") => {
            out.push(sc::OPERATION_NAME, Value::str("execute_tool"));
            out.push(keys::TOOL_NAME, Value::str(reference_name(span)));
            // Seed 000 copies `genkit:input` as it is: a type no sink here can copy, to JS.
            let Some(arguments) = span.tool_arguments() else {
                return needs_js(out.problems);
            };
            out.push(keys::TOOL_CALL_ARGUMENTS, arguments);
            if let Some(output) = span.output {
                match map_tool_result(output) {
                    ToolResult::Invalid => out.problems |= problem::TOOL_OUTPUT_NOT_JSON,
                    ToolResult::NeedsJs => return needs_js(out.problems),
                    ToolResult::OutOfMemory => {
                        return needs_js(out.problems | problem::OUT_OF_MEMORY)
                    }
                    ToolResult::Text(text) => out.push(sc::TOOL_CALL_RESULT, Value::Str(text)),
                    ToolResult::Json(json) => out.push(sc::TOOL_CALL_RESULT, Value::str(json)),
                }
            }
        }
        _ => {}
    }
    out
}

/// A result with no attributes and [`problem::NEEDS_JS`] set.
pub(crate) fn needs_js<'a>(problems: u32) -> Mapped<'a> {
    Mapped {
        problems: problems | problem::NEEDS_JS,
        ..Mapped::default()
    }
}

/// The fallback `error.type` when a failed span names no error (the semantic conventions'
/// `_OTHER`).
pub const ERROR_TYPE_OTHER: &str = "_OTHER";

/// `error.type` of a failed span (rule 4; seed 004: "In JavaScript, error.type is the thrown
/// error's name, for example GenkitError"): the name that starts the exception event's stack trace
/// (`GenkitError: ...`; the OpenTelemetry JS SDK puts an error's `code`, such as `"403"`, in
/// `exception.type` when it has one), else `exception.type`, else [`ERROR_TYPE_OTHER`]. `None` when
/// the span did not fail.
pub fn error_type<'a>(span: &SpanInput<'a>) -> Option<&'a str> {
    if span.status != Status::Error {
        return None;
    }
    if let Some(name) = span.exception_stacktrace.and_then(stack_error_name) {
        return Some(name);
    }
    match span.exception_type {
        Some(t) if !t.trim().is_empty() => Some(t),
        _ => Some(ERROR_TYPE_OTHER),
    }
}

/// How many leading UTF-16 code units of `exception.stacktrace` rule 4 needs ([`stack_head`]):
/// the error name it takes is at most 128 bytes, then a `:` or a line end.
pub const STACK_HEAD_UNITS: usize = 256;

/// The room [`stack_head`] writes into: 3 bytes of UTF-8 a code unit at most.
pub const STACK_HEAD_BYTES: usize = 3 * STACK_HEAD_UNITS;

/// The head of a stack trace, from its first code units (at most [`STACK_HEAD_UNITS`] of them
/// are looked at: the caller reads no more), as UTF-8 in `out`: up to and including its first `:`
/// or line end, a lone surrogate, or a pair cut at the end, as U+FFFD (as a JavaScript string
/// becomes UTF-8 through napi). [`error_type`] answers the same for it as for the whole stack
/// trace: the name it takes ends at the first `:` or line end, and a name that does not end within
/// the first [`STACK_HEAD_UNITS`] units is longer than 128 bytes, which it refuses either way. So
/// a failed span's stack trace, often kilobytes, is never measured or copied whole
/// (`core/tests/stack_head.rs`).
pub fn stack_head<'b>(units: &[u16], out: &'b mut [u8; STACK_HEAD_BYTES]) -> &'b str {
    let units = &units[..units.len().min(STACK_HEAD_UNITS)];
    let mut len = 0;
    for c in char::decode_utf16(units.iter().copied()) {
        let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
        // A unit is at most 3 bytes (a pair, 2 units, is 4): `out` has room for every unit.
        let Some(room) = out.get_mut(len..len + c.len_utf8()) else {
            break;
        };
        len += c.encode_utf8(room).len();
        if c == ':' || c == '\n' {
            break;
        }
    }
    // Whole characters only were written.
    std::str::from_utf8(&out[..len]).unwrap_or_default()
}

/// The error name a V8 stack trace starts with (`Name: message` or just `Name`): a JavaScript
/// identifier of at most 128 bytes, else `None`.
fn stack_error_name(stack: &str) -> Option<&str> {
    let line = stack.split('\n').next()?;
    let name = match line.find(':') {
        Some(i) => &line[..i],
        None => line,
    };
    let mut chars = name.chars();
    let first = chars.next()?;
    let ident = (first.is_alphabetic() || first == '_' || first == '$')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (ident && name.len() <= 128).then_some(name)
}

/// Parses a lowercase or uppercase hex id (`traceId` / `spanId` of the JavaScript API) into bytes.
pub fn parse_hex<const N: usize>(hex: &str) -> Option<[u8; N]> {
    parse_hex_units(hex.as_bytes())
}

/// [`parse_hex`] of a JavaScript string's UTF-16 code units (or bytes), as the binding reads an
/// id argument: `None` unless it is exactly `2 * N` hex digits.
pub fn parse_hex_units<const N: usize, U: Copy + Into<u32>>(units: &[U]) -> Option<[u8; N]> {
    if units.len() != 2 * N {
        return None;
    }
    // A digit's value from a table, `NOT_HEX` for any other unit; one check at the end (each id
    // of each span is read: no branch a digit).
    let digit = |u: U| -> u8 {
        let u: u32 = u.into();
        usize::try_from(u)
            .ok()
            .and_then(|i| HEX_DIGITS.get(i))
            .copied()
            .unwrap_or(NOT_HEX)
    };
    let mut out = [0u8; N];
    let mut seen = 0u8;
    for (to, pair) in out.iter_mut().zip(units.chunks_exact(2)) {
        let (high, low) = (digit(pair[0]), digit(pair[1]));
        seen |= high | low;
        *to = (high << 4) | (low & 0x0F);
    }
    (seen & NOT_HEX == 0).then_some(out)
}

/// [`parse_hex_units`]' marker of a unit that is not a hex digit (no digit's value has this bit).
const NOT_HEX: u8 = 0x80;

/// The value of each hex digit (`0-9`, `a-f`, `A-F`) by its code, [`NOT_HEX`] for other codes.
static HEX_DIGITS: [u8; 128] = {
    let mut table = [NOT_HEX; 128];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};
