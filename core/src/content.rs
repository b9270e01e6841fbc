//! Content control of one span's output (issue 11): the capture mode, secret scrubbing
//! ([`crate::scrub`]) and the size cap ([`crate::cap`]) applied to the five content attributes
//! ([`CONTENT_ATTRIBUTES`]) of a [`Mapped`] list, in the same native call as the mapping
//! ([`crate::span::Mapper::map`]), for every entry (the processor and the native exporter alike).
//!
//! Per content attribute, in this order:
//! 1. capture off ([`Options::capture`] `false`): not written; every other attribute is;
//! 2. scrubbing on ([`Options::scrub`], the default): secrets replaced by
//!    [`crate::scrub::PLACEHOLDER`] (JSON values stay valid, only string contents change);
//! 3. a cap ([`Options::max_content_bytes`]; complete mode: [`crate::cap::DEFAULT_MAX_CONTENT_BYTES`]
//!    by default, reference mode: none unless set): messages dropped whole, oldest non-system first,
//!    then long strings cut; the counts go to [`crate::cap::DROPPED_MESSAGES`] and
//!    [`crate::cap::CAPPED_ATTRIBUTES`].
//!
//! Scrubbing runs in the writers' pass: the writers of the message attributes (and of complete
//! mode's multipart tool results) get [`Content::scrubber`] and scrub every value they copy from
//! Genkit's JSON as they write it ([`crate::out::Out::push_value`]); [`Mapped::scrubbed`] names
//! those attributes, and only the cap is applied to them here. Values that are Genkit's text as it
//! is (tool arguments, tool results) are scrubbed here, in their one pass.
//!
//! Scrubbed or nothing: when a step cannot be done (an allocation fails, a value whose structure
//! alone is over the cap, user patterns that do not compile), the attribute is left out and
//! [`problem::CONTENT_WITHHELD`] is set; content is never written unscrubbed when scrubbing is on.

use crate::cap::{self, CapError};
use crate::problem;
use crate::scrub::{self, PatternError, Scrubber};
use crate::semconv as sc;
use crate::span::{keys, Mapped, Mode, Options, Value};
use std::borrow::Cow;

/// The five attributes that carry prompt, answer or tool payload text (seed 003, "Content"; the
/// GenAI semantic conventions' opt-in content attributes).
pub const CONTENT_ATTRIBUTES: [&str; 5] = [
    sc::SYSTEM_INSTRUCTIONS,
    sc::INPUT_MESSAGES,
    sc::OUTPUT_MESSAGES,
    keys::TOOL_CALL_ARGUMENTS,
    sc::TOOL_CALL_RESULT,
];

/// Whether `key` is one of [`CONTENT_ATTRIBUTES`].
pub fn is_content(key: &str) -> bool {
    CONTENT_ATTRIBUTES.contains(&key)
}

/// Whether `key` is a message array attribute (`gen_ai.input.messages`, `gen_ai.output.messages`),
/// which the cap shortens by dropping whole messages ([`cap::cap_messages_in`]).
pub(crate) fn is_message_array(key: &str) -> bool {
    key == sc::INPUT_MESSAGES || key == sc::OUTPUT_MESSAGES
}

/// The bit of content attribute `key` in [`Mapped::scrubbed`] (`1 << ` its index in
/// [`CONTENT_ATTRIBUTES`]); `0` for any other key.
pub fn content_bit(key: &str) -> u8 {
    CONTENT_ATTRIBUTES
        .iter()
        .position(|k| *k == key)
        .map_or(0, |i| 1 << i)
}

/// The cap in bytes `options` set ([`Options::max_content_bytes`]; `usize::MAX`: none), else
/// complete mode's default ([`cap::DEFAULT_MAX_CONTENT_BYTES`]); reference mode: none.
pub fn cap_of(options: &Options) -> Option<usize> {
    match (options.max_content_bytes, options.mode) {
        (Some(usize::MAX), _) => None,
        (Some(n), _) => Some(n),
        (None, Mode::Complete) => Some(cap::DEFAULT_MAX_CONTENT_BYTES),
        (None, Mode::Reference) => None,
    }
}

/// The content rules of one [`Options`], compiled once (one `RegexSet` per mapper).
#[derive(Debug, Clone)]
pub struct Content {
    capture: bool,
    scrubber: Option<Scrubber>,
    max: Option<usize>,
}

/// One content attribute after [`Content::filter`].
#[derive(Debug, PartialEq)]
pub enum Filtered {
    /// Written as it is.
    Same,
    /// Written with this value (scrubbed and/or capped); `dropped` messages were dropped whole,
    /// `capped` when the cap changed it.
    Changed {
        /// The new value.
        value: String,
        /// Messages the cap dropped.
        dropped: usize,
        /// Whether the cap changed the value.
        capped: bool,
    },
    /// Not written: capture is off (flags `0`) or it could not be scrubbed or capped (an
    /// allocation failed, or its structure alone is over the cap: [`problem::CONTENT_WITHHELD`]).
    Withheld(u32),
}

impl Content {
    /// The rules of `options`. Errors: a user pattern that does not compile.
    pub fn new(options: &Options) -> Result<Content, PatternError> {
        let scrubber = if options.capture && options.scrub {
            Some(Scrubber::new(&options.secret_patterns)?)
        } else {
            None
        };
        Ok(Content {
            capture: options.capture,
            scrubber,
            max: cap_of(options),
        })
    }

    /// No content at all (what a mapper whose patterns did not compile writes: scrubbed or
    /// nothing).
    pub fn none() -> Content {
        Content {
            capture: false,
            scrubber: None,
            max: None,
        }
    }

    /// Whether content attributes are written at all.
    pub fn captures(&self) -> bool {
        self.capture
    }

    /// Whether content is written exactly as mapped (capture on, no scrubbing, no cap).
    pub fn is_passthrough(&self) -> bool {
        self.capture && self.scrubber.is_none() && self.max.is_none()
    }

    /// The cap in bytes, if any.
    pub fn max_bytes(&self) -> Option<usize> {
        self.max
    }

    /// Whether secrets are scrubbed.
    pub fn scrubs(&self) -> bool {
        self.scrubber.is_some()
    }

    /// Whether [`Content::filter`] (any key, any `json`) answers [`Filtered::Same`] for each of
    /// several texts, given their screens: each text's UTF-16 code units cut to their low bytes
    /// (what `napi_get_value_string_latin1` reads of a JavaScript string, without transcoding
    /// it), joined in `joined` with a NUL byte between two; `longest` is the length of the
    /// longest screen (the cap is per value). One scan for a tool span's arguments and result;
    /// one text is `(screen, screen.len())`. A `true` is certain; a `false` only means "read the
    /// texts and ask [`Content::filter`]".
    ///
    /// Why it is exact: the rules leave a value as it is when capture is on, no needle of the
    /// default patterns and no `\u` occurs (with no user patterns: [`Scrubber::has_user_patterns`])
    /// and its UTF-8 is within the cap. Needles and `\u` are ASCII; an ASCII character is one code
    /// unit below 0x80, which the screen holds as that same byte at its place, so every needle or
    /// `\u` of a text is in its screen too (other units may add hits there, never hide one), and
    /// none is found across two screens (no needle holds a NUL). A code unit is at most 3 bytes of
    /// UTF-8 (a surrogate pair, two units, 4), so a screen of `n` bytes is a text of at most
    /// `3 n`. It holds for the decoded text of a JSON string literal whose screen it is too (a
    /// tool result): without `\u`, decoding only removes backslashes and writes `"`, `\`, `/` or
    /// a control character, none of which a needle holds, and makes the text shorter.
    pub fn leaves_each_as_is(&self, joined: &[u8], longest: usize) -> bool {
        if !self.capture {
            return false;
        }
        if let Some(max) = self.max {
            if longest.checked_mul(3).is_none_or(|most| most > max) {
                return false;
            }
        }
        match &self.scrubber {
            None => true,
            Some(s) => {
                !s.has_user_patterns()
                    && !scrub::has_unicode_escape(joined)
                    && s.has_no_needle(joined)
            }
        }
    }

    /// The scrubber the writers attach to their outputs ([`crate::out::Out::scrubbing`]) when
    /// content is captured and scrubbed; a value written with it is filtered with
    /// [`Content::filter_written`].
    pub fn scrubber(&self) -> Option<&Scrubber> {
        self.scrubber.as_ref().filter(|_| self.capture)
    }

    /// Applies the rules to one content attribute's string `value` (`key` chooses how: message
    /// arrays are capped by dropping messages; tool arguments and results are scrubbed and capped
    /// as JSON when they are JSON, as text otherwise).
    pub fn filter(&self, key: &str, value: &str) -> Filtered {
        self.filter_as(key, value, None)
    }

    /// [`Content::filter`] when the caller knows whether a tool payload `value` is valid JSON
    /// (`Some(true)`: a tool result the mapping has parsed, `Some(false)`: text); `None` asks
    /// (one validation of the whole value). A wrong `Some(true)` only changes how the value is
    /// scrubbed and capped, never whether it is.
    pub fn filter_as(&self, key: &str, value: &str, json: Option<bool>) -> Filtered {
        self.rules(key, value, json, false, None)
    }

    /// [`Content::filter`] for a value the writers wrote with [`Content::scrubber`] attached
    /// (already scrubbed, in their pass): the capture mode and the cap.
    pub fn filter_written(&self, key: &str, value: &str) -> Filtered {
        self.rules(key, value, Some(true), true, None)
    }

    /// [`Content::filter_written`] for a message array whose writer marked its messages
    /// (`marks`, [`crate::out::Out::marking`]): the cap finds them there instead of scanning the
    /// value ([`cap::cap_messages_in`]).
    pub fn filter_written_marked(
        &self,
        key: &str,
        value: &str,
        marks: Option<&[(usize, usize)]>,
    ) -> Filtered {
        self.rules(key, value, Some(true), true, marks)
    }

    fn rules<'a>(
        &self,
        key: &str,
        value: &'a str,
        json: Option<bool>,
        scrubbed: bool,
        marks: Option<&[(usize, usize)]>,
    ) -> Filtered {
        if !self.capture {
            return Filtered::Withheld(0);
        }
        if self.is_passthrough() {
            return Filtered::Same;
        }
        let messages = is_message_array(key);
        let tool = key == keys::TOOL_CALL_ARGUMENTS || key == sc::TOOL_CALL_RESULT;
        // Tool payloads are any text; the message attributes are the writers' JSON.
        let mut json: Option<bool> = if tool { json } else { Some(true) };
        let known_json = json == Some(true);
        let mut is_json = |v: &str| -> bool {
            *json.get_or_insert_with(|| serde_json::from_str::<serde::de::IgnoredAny>(v).is_ok())
        };
        // Not OUT_OF_MEMORY: that flag sends the span to the JavaScript mapping, which would
        // write the content unscrubbed.
        let withheld = |_oom: bool| Filtered::Withheld(problem::CONTENT_WITHHELD);
        let scrubber = self.scrubber.as_ref().filter(|_| !scrubbed);
        let scrubbed: Cow<'a, str> = match scrubber {
            None => Cow::Borrowed(value),
            // The message attributes are JSON, and so are tool results the mapping has parsed:
            // `Scrubber::json` has the same fast path inside.
            Some(s) if known_json => match s.json(value) {
                Ok(v) => v,
                Err(_) => return withheld(true),
            },
            // Fast path: a value with no needle and no `\u` escape is clean both as JSON and as text.
            // Exact for the built-in patterns only (their needles read the same in the raw and
            // the decoded text); a user pattern may match only the decoded text of a JSON string
            // (`password="[^"]+"` against `password=\"...\"`), so with user patterns the value is
            // scrubbed as what it is.
            Some(s)
                if !s.has_user_patterns()
                    && !scrub::has_unicode_escape(value.as_bytes())
                    && s.is_clean(value) =>
            {
                Cow::Borrowed(value)
            }
            Some(s) => {
                let r = if is_json(value) {
                    s.json(value)
                } else {
                    s.text(value)
                };
                match r {
                    Ok(v) => v,
                    Err(_) => return withheld(true),
                }
            }
        };
        let Some(max) = self.max else {
            return match scrubbed {
                Cow::Borrowed(_) => Filtered::Same,
                Cow::Owned(value) => Filtered::Changed {
                    value,
                    dropped: 0,
                    capped: false,
                },
            };
        };
        if scrubbed.len() <= max {
            return match scrubbed {
                Cow::Borrowed(_) => Filtered::Same,
                Cow::Owned(value) => Filtered::Changed {
                    value,
                    dropped: 0,
                    capped: false,
                },
            };
        }
        // Marks describe the written text; a value the scrubber changed here is another text.
        let marks = marks.filter(|_| matches!(scrubbed, Cow::Borrowed(_)));
        let capped = if messages {
            cap::cap_messages_in(&scrubbed, max, marks)
        } else if is_json(&scrubbed) {
            cap::cap_json(&scrubbed, max)
        } else {
            cap::cap_text(&scrubbed, max)
        };
        match capped {
            Ok(c) => {
                let (dropped, changed) = (c.dropped, c.changed());
                let value = match c.json {
                    Cow::Owned(v) => v,
                    Cow::Borrowed(_) => match scrubbed {
                        Cow::Owned(v) => v,
                        Cow::Borrowed(_) => return Filtered::Same,
                    },
                };
                Filtered::Changed {
                    value,
                    dropped,
                    capped: changed,
                }
            }
            Err(CapError::Alloc) => withheld(true),
            Err(CapError::Structure) => withheld(false),
        }
    }

    /// Applies the rules to every content attribute of `out`, in place; adds
    /// [`cap::DROPPED_MESSAGES`] and [`cap::CAPPED_ATTRIBUTES`] when the cap changed something.
    /// Without capture the problem flags about content shapes are cleared (nothing was omitted
    /// that would have been written).
    pub fn apply(&self, out: &mut Mapped<'_>) {
        if self.is_passthrough() || out.problems & problem::NEEDS_JS != 0 {
            return;
        }
        if !self.capture {
            out.attributes.retain(|(k, _)| !is_content(k));
            out.problems &=
                !(problem::INPUT_SHAPE | problem::OUTPUT_SHAPE | problem::TOOL_OUTPUT_NOT_JSON);
            return;
        }
        let mut dropped = 0usize;
        let mut capped: [Option<&'static str>; 5] = [None; 5];
        let mut n_capped = 0;
        let mut i = 0;
        while i < out.attributes.len() {
            let key = out.attributes[i].0;
            if !is_content(key) {
                i += 1;
                continue;
            }
            let written = out.scrubbed & content_bit(key) != 0;
            let marks = out.take_elements(key);
            let filter = |v: &str| {
                if written {
                    self.filter_written_marked(key, v, marks.as_deref())
                } else {
                    self.filter(key, v)
                }
            };
            let filtered = match &out.attributes[i].1 {
                Value::Str(s) => filter(s),
                // A compound value the JavaScript sink recreates: written only when unchanged.
                Value::Json(text) => match filter(text) {
                    Filtered::Changed { .. } => Filtered::Withheld(problem::CONTENT_WITHHELD),
                    other => other,
                },
                _ => Filtered::Same,
            };
            match filtered {
                Filtered::Same => i += 1,
                Filtered::Changed {
                    value,
                    dropped: d,
                    capped: c,
                } => {
                    // Another text: the pieces recorded of the written one no longer apply.
                    drop(out.take_copies(key));
                    out.attributes[i].1 = Value::Str(Cow::Owned(value));
                    dropped += d;
                    if c && n_capped < capped.len() {
                        capped[n_capped] = Some(key);
                        n_capped += 1;
                    }
                    i += 1;
                }
                Filtered::Withheld(flags) => {
                    out.problems |= flags;
                    out.attributes.remove(i);
                    drop(out.take_copies(key));
                }
            }
        }
        report_cap(out, dropped, &capped[..n_capped]);
    }
}

/// Adds [`cap::DROPPED_MESSAGES`] (`dropped`, when any) and [`cap::CAPPED_ATTRIBUTES`] (`capped`,
/// the keys the cap changed, in order, when any) to `out`, as [`Content::apply`] reports its cap;
/// also the narrowed mapping's (core `Mapper::map_narrowed`), so the two report alike.
pub(crate) fn report_cap(out: &mut Mapped<'_>, dropped: usize, capped: &[Option<&'static str>]) {
    if dropped > 0 {
        out.push(
            cap::DROPPED_MESSAGES,
            Value::Int(i64::try_from(dropped).unwrap_or(i64::MAX)),
        );
    }
    if !capped.is_empty() {
        let mut list = Vec::new();
        if list.try_reserve_exact(capped.len()).is_ok() {
            list.extend(capped.iter().flatten().map(|k| Value::str(k)));
            out.push(cap::CAPPED_ATTRIBUTES, Value::Array(list));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::{Mapper, SpanInput};

    fn model<'a>(input: &'a str, output: &'a str) -> SpanInput<'a> {
        SpanInput {
            subtype: Some("model"),
            name: Some("googleai/gemini-2.5-flash"),
            input: Some(input),
            output: Some(output),
            ..SpanInput::default()
        }
    }

    const INPUT: &str = r#"{"messages":[{"role":"system","content":[{"text":"be brief"}]},{"role":"user","content":[{"text":"key sk-proj-Abc123Def456Ghi789Jkl012"}]}]}"#;
    const OUTPUT: &str = r#"{"message":{"role":"model","content":[{"text":"ok"}]},"finishReason":"stop","usage":{"inputTokens":3,"outputTokens":1}}"#;

    fn mapped(options: Options) -> Vec<(&'static str, String)> {
        let mut mapper = Mapper::new(options);
        let out = mapper.map(&model(INPUT, OUTPUT));
        out.attributes
            .iter()
            .map(|(k, v)| (*k, format!("{v:?}")))
            .collect()
    }

    /// A user pattern that matches only the decoded text of a JSON string (a quote, written `\"`)
    /// is applied to tool payloads too, in both modes (found by review: the no-needle fast path
    /// ran the user patterns on the raw text and skipped the value).
    #[test]
    fn user_patterns_read_tool_payloads_decoded() {
        let input = r#"{"cmd":"login password=\"hunter22\""}"#;
        let output = r#"{"out":"password=\"hunter22\""}"#;
        for mode in [Mode::Complete, Mode::Reference] {
            let options = Options {
                mode,
                secret_patterns: vec![r#"password="[^"]+""#.to_string()],
                ..Options::default()
            };
            // Reference mode maps `tool` only (seed 000).
            let subtypes: &[&str] = match mode {
                Mode::Complete => &["tool", "tool.v2"],
                Mode::Reference => &["tool"],
            };
            for &subtype in subtypes {
                let span = SpanInput {
                    subtype: Some(subtype),
                    name: Some("login"),
                    input: Some(input),
                    output: Some(output),
                    ..SpanInput::default()
                };
                let out = Mapper::new(options.clone()).map(&span);
                let text = |key: &str| match out.attributes.iter().find(|(k, _)| *k == key) {
                    Some((_, Value::Str(s))) => s.to_string(),
                    Some((_, Value::Json(s))) => s.to_string(),
                    other => panic!("{key}: {other:?}"),
                };
                for key in [keys::TOOL_CALL_ARGUMENTS, sc::TOOL_CALL_RESULT] {
                    let v = text(key);
                    assert!(
                        !v.contains("hunter22") && v.contains("[REDACTED]"),
                        "{mode:?} {subtype} {key}: {v}"
                    );
                }
            }
            let content = Content::new(&options).unwrap();
            match content.filter(keys::TOOL_CALL_ARGUMENTS, input) {
                Filtered::Changed { value, .. } => {
                    assert_eq!(value, r#"{"cmd":"login [REDACTED]"}"#)
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn every_mode_scrubs_caps_and_honours_capture() {
        for mode in [Mode::Complete, Mode::Reference] {
            let on = mapped(Options {
                mode,
                ..Options::default()
            });
            let input = on.iter().find(|(k, _)| *k == sc::INPUT_MESSAGES).unwrap();
            assert!(input.1.contains("[REDACTED]") && !input.1.contains("Abc123"));
            let off = mapped(Options {
                mode,
                capture: false,
                ..Options::default()
            });
            assert!(off.iter().all(|(k, _)| !is_content(k)));
            assert!(off.iter().any(|(k, _)| *k == sc::USAGE_INPUT_TOKENS));
            assert_eq!(
                on.len() - off.len(),
                3,
                "{mode:?}: three content attributes"
            );
            // A cap whose structure alone does not fit: withheld, never written uncapped.
            let mut mapper = Mapper::new(Options {
                mode,
                max_content_bytes: Some(10),
                ..Options::default()
            });
            let out = mapper.map(&model(INPUT, OUTPUT));
            assert!(out.problems & problem::CONTENT_WITHHELD != 0);
            assert!(out.attributes.iter().all(|(k, _)| !is_content(k)));
        }
    }

    #[test]
    fn patterns_that_do_not_compile_mean_no_content() {
        let options = Options {
            secret_patterns: vec!["(unclosed".into()],
            ..Options::default()
        };
        assert!(Mapper::try_new(options.clone()).is_err());
        let mut mapper = Mapper::new(options);
        let out = mapper.map(&model(INPUT, OUTPUT));
        assert!(out.attributes.iter().all(|(k, _)| !is_content(k)));
        assert!(out.attributes.iter().any(|(k, _)| *k == sc::OPERATION_NAME));
    }

    /// `leaves_each_as_is` answers `true` only where `filter_as` answers `Same`, for every key, every
    /// `json` and every rule set (default patterns, user patterns, caps either side of 3 bytes a
    /// unit, capture off), on texts mixing needles in any case, `\u` (one spelling a key inside
    /// a JSON string, which only the decoded text shows), other escapes, non-ASCII
    /// characters whose code unit's low byte is ASCII (`š` U+0161 reads `a` in the screen, `ų`
    /// U+0173 `s`, `ū` U+016B `k`, `ť` U+0165 `e`, `ķ` U+0137 `7`, `ſ` U+017F DEL) and lone
    /// surrogates' stand-in U+FFFD;
    /// and it is not vacuous: most texts without a needle or `\u` get `true`.
    #[test]
    fn leaves_as_is_only_where_the_rules_leave_the_value() {
        let pieces = [
            "sk-",
            "SK-",
            "akia",
            "AKIA",
            "eyJ",
            "api_key",
            "Bearer ",
            "secret",
            "\\u0041",
            "\\n",
            "\\\"",
            "š",
            "ſk",
            "ūķ-",
            "ųk-",
            "ť",
            "é",
            "日本",
            "😀",
            "\u{FFFD}",
            "city",
            "Paris",
            "\"",
            "{",
            "}",
            ":",
            ",",
            " ",
            "12",
            "sk",
            "-",
            "1234567890abcdefghijklmnopqrstuv",
            "\"\\u0073k-1234567890abcdefghijklmnopqrstuv\"",
        ];
        let mut next = crate::lcg(0x2545f4914f6cdd1du64);
        let rule_sets: Vec<Content> = [
            Options::default(),
            Options {
                max_content_bytes: Some(40),
                ..Options::default()
            },
            Options {
                max_content_bytes: Some(120),
                ..Options::default()
            },
            Options {
                scrub: false,
                max_content_bytes: Some(30),
                ..Options::default()
            },
            Options {
                scrub: false,
                ..Options::default()
            },
            Options {
                secret_patterns: vec!["Paris".to_string()],
                ..Options::default()
            },
            Options {
                capture: false,
                ..Options::default()
            },
        ]
        .iter()
        .map(|o| Content::new(o).unwrap()) // ok: test code
        .collect();
        let (mut yes, mut clean, mut literals) = (0, 0, 0);
        for _ in 0..20_000 {
            let text: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
            let screen: Vec<u8> = text.encode_utf16().map(|u| u as u8).collect();
            for (r, rules) in rule_sets.iter().enumerate() {
                if !rules.leaves_each_as_is(&screen, screen.len()) {
                    continue;
                }
                if r == 0 {
                    yes += 1;
                }
                for key in CONTENT_ATTRIBUTES {
                    for json in [None, Some(true), Some(false)] {
                        assert_eq!(
                            rules.filter_as(key, &text, json),
                            Filtered::Same,
                            "{text:?} rules {r} {key} {json:?}"
                        );
                    }
                }
            }
            // As the body of a JSON string literal: its decoded text, when it is one.
            if let Ok(decoded) = serde_json::from_str::<String>(&format!("\"{text}\"")) {
                let screen: Vec<u8> = format!("\"{text}\"")
                    .encode_utf16()
                    .map(|u| u as u8)
                    .collect();
                for (r, rules) in rule_sets.iter().enumerate() {
                    if rules.leaves_each_as_is(&screen, screen.len()) {
                        for key in CONTENT_ATTRIBUTES {
                            for json in [None, Some(false)] {
                                let got = rules.filter_as(key, &decoded, json);
                                assert_eq!(got, Filtered::Same, "{text:?} decoded, rules {r}");
                            }
                        }
                    }
                }
                literals += 1;
            }
            // The texts the rules' own fast path passes: no needle, no `\u`.
            let scrubber = rule_sets[0].scrubber().unwrap(); // ok: test code
            if !scrub::has_unicode_escape(text.as_bytes())
                && scrubber.has_no_needle(text.as_bytes())
            {
                clean += 1;
            }
        }
        assert!(
            yes * 10 >= clean * 7,
            "{yes} of {clean} texts without a needle screened clean"
        );
        assert!(yes > 1_000, "{yes}");
        assert!(literals > 1_000, "{literals}");
    }

    /// Screens joined by NUL bytes: the cap is per value, a needle in either part counts, and
    /// none is made across the NUL.
    #[test]
    fn joined_screens_are_capped_each_and_scanned_whole() {
        let capped = Content::new(&Options {
            max_content_bytes: Some(66),
            ..Options::default()
        })
        .unwrap(); // ok: test code
        let a = b"{\"city\":\"Paris\"} ok";
        let joined = [&a[..], b"\0", &a[..]].concat();
        assert!(capped.leaves_each_as_is(&joined, a.len()));
        assert!(!capped.leaves_each_as_is(&joined, joined.len()));
        assert!(!capped.leaves_each_as_is(&joined, 23));
        let plain = Content::new(&Options::default()).unwrap(); // ok: test code
        for (first, second) in [(&b"x sk"[..], &b"-abc"[..]), (b"x \\", b"u0041")] {
            let joined = [first, b"\0", second].concat();
            assert!(plain.leaves_each_as_is(&joined, 5), "{joined:?}");
        }
        for (first, second) in [(&b"ok"[..], &b"x sk-abc"[..]), (b"eyJ x", b"ok")] {
            let joined = [first, b"\0", second].concat();
            assert!(!plain.leaves_each_as_is(&joined, 8), "{joined:?}");
        }
    }
}
