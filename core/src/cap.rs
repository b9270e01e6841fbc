//! Size cap of content attributes (issue 11, item 4): a JSON content attribute larger than
//! `max` bytes (UTF-8, as OTLP carries it) is brought under `max` so that it still parses.
//!
//! - Message arrays (`gen_ai.input.messages`, `gen_ai.output.messages`, [`cap_messages`]): the
//!   oldest messages whose role is not `system` are dropped whole, one at a time, until the JSON
//!   fits; the newest message is never dropped. How many were dropped is returned so the caller can
//!   write it ([`DROPPED_MESSAGES`]). Seed 003, "Content": "To cap size, drop the oldest messages
//!   whole before serializing"; truncated JSON "is dropped whole" by Maple.
//! - Then, and for any other JSON value (`gen_ai.system_instructions`, tool call arguments and
//!   JSON results, [`cap_json`]): the longest string values are shortened, longest first, each cut
//!   inside its text on a character boundary (never inside a JSON escape or between the two
//!   halves of a surrogate pair) and ended with [`MARKER`]. Object keys are never cut.
//! - Plain text (a tool's string result, [`cap_text`]): cut on a UTF-8 character boundary, with
//!   [`MARKER`].
//!
//! Where: on the written attribute, not while writing. An attribute under the cap costs one length
//! comparison; above it, one copy of what is kept, and one scan of the attribute to find the
//! strings, or the messages unless their writer marked them ([`cap_messages_in`]: complete mode's
//! writers mark each message of an array estimated at half the cap or more). The writers stay as they are, and the cap sees exactly the bytes that would be
//! exported (after scrubbing). `cargo bench -p genkit-for-maple-core --bench content` prints the
//! cost.
//!
//! Narrowed texts (complete mode's multi-byte inputs read one byte a UTF-16 unit, issue 9): the
//! same choice of messages to drop is made from each message's UTF-8 size, which the caller counts
//! ([`keep_messages_sized`]); shortening strings needs the real characters, so there the caller
//! maps the texts the usual way.
//!
//! Errors ([`CapError`]): an allocation that cannot be made, or a value whose structure alone
//! (keys, numbers, brackets, the markers) is larger than `max`: the caller leaves the attribute
//! out.

use std::borrow::Cow;
use std::collections::TryReserveError;

/// The default `maxContentBytes`: 256 KiB of UTF-8 JSON per content attribute. A model span then
/// carries at most about 768 KiB of `gen_ai.*` content (input messages, system instructions,
/// output messages), well below an OpenTelemetry Collector's default gRPC message limit (4 MiB per
/// export request) and Maple's ingest limit (20 MiB per request, seed 003 "Content") even with
/// Genkit's own `genkit:input`/`genkit:output` beside it. The same per-attribute figure Azure
/// Monitor's OpenTelemetry exporter uses for these attributes.
pub const DEFAULT_MAX_CONTENT_BYTES: usize = 256 * 1024;

/// Ends a string value that was shortened. ASCII, no JSON escape needed.
pub const MARKER: &str = "...[truncated]";

/// The span attribute (integer) holding how many messages the cap dropped from the span's
/// `gen_ai.input.messages` and `gen_ai.output.messages` together; absent when none. The GenAI
/// semantic conventions define no attribute for this, and names under `gen_ai.*` are reserved for
/// them, so it lives in this package's own namespace (`genkit_for_maple.*`).
pub const DROPPED_MESSAGES: &str = "genkit_for_maple.content.dropped_messages";

/// The span attribute (string array) naming the content attributes the cap changed (messages
/// dropped or strings shortened); absent when none.
pub const CAPPED_ATTRIBUTES: &str = "genkit_for_maple.content.capped";

/// Why a value could not be capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CapError {
    /// An allocation sized by the input could not be made.
    Alloc,
    /// Even with every string value cut to its marker the value is larger than the cap.
    Structure,
}

impl From<TryReserveError> for CapError {
    fn from(_: TryReserveError) -> Self {
        CapError::Alloc
    }
}

/// A capped value.
#[derive(Debug, PartialEq, Eq)]
pub struct Capped<'a> {
    /// The value, borrowed when it was already under the cap.
    pub json: Cow<'a, str>,
    /// Messages dropped whole (always 0 for [`cap_json`] and [`cap_text`]).
    pub dropped: usize,
    /// String values shortened.
    pub shortened: usize,
}

impl Capped<'_> {
    /// Whether the cap changed the value.
    pub fn changed(&self) -> bool {
        self.dropped > 0 || self.shortened > 0
    }
}

/// Caps plain text to `max` bytes: unchanged when it fits; otherwise its longest prefix that ends
/// on a character boundary and leaves room for [`MARKER`], then the marker. A `max` smaller than
/// the marker gives the marker alone.
pub fn cap_text(text: &str, max: usize) -> Result<Capped<'_>, CapError> {
    if text.len() <= max {
        return Ok(unchanged(text));
    }
    let keep = floor_char_boundary(text, max.saturating_sub(MARKER.len()));
    let mut out = String::new();
    out.try_reserve(keep + MARKER.len())?;
    out.push_str(&text[..keep]);
    out.push_str(MARKER);
    Ok(Capped {
        json: Cow::Owned(out),
        dropped: 0,
        shortened: 1,
    })
}

fn unchanged(text: &str) -> Capped<'_> {
    Capped {
        json: Cow::Borrowed(text),
        dropped: 0,
        shortened: 0,
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Caps a JSON array of GenAI messages (`[{"role":..,"parts":[..]},..]`) to `max` bytes: drops the
/// oldest non-`system` messages whole until it fits, never the last message; when it still does
/// not fit, shortens string values as [`cap_json`]. `json` must be a JSON array (as the writers
/// write it); anything else is capped as [`cap_json`].
pub fn cap_messages(json: &str, max: usize) -> Result<Capped<'_>, CapError> {
    cap_messages_in(json, max, None)
}

/// [`cap_messages`] given where the messages are: `marks`, the byte ranges of the array's
/// elements as its writer marked them ([`crate::out::Out::marking`]), spares the scan that finds
/// them. The marks are used only when they fit `json` (`[`, the elements joined by `,`, `]`, each
/// from a `{` to a `}`, `marks_describe`); otherwise, or with `None`, the elements are found
/// by the scan. For the writers' marks the result is the same either way.
pub fn cap_messages_in<'j>(
    json: &'j str,
    max: usize,
    marks: Option<&[(usize, usize)]>,
) -> Result<Capped<'j>, CapError> {
    if json.len() <= max {
        return Ok(unchanged(json));
    }
    let bytes = json.as_bytes();
    if bytes.first() != Some(&b'[') {
        return cap_json(json, max);
    }
    let elements = message_elements(json, marks)?;
    if elements.len() < 2 {
        return cap_json(json, max);
    }
    let (keep, dropped, _) = drop_oldest(json, &elements, |i| elements[i].1 - elements[i].0, max)?;
    let out = join_kept(json, &elements, &keep, |_, _| {})?;
    if out.len() <= max {
        return Ok(Capped {
            json: Cow::Owned(out),
            dropped,
            shortened: 0,
        });
    }
    let shortened = cap_json(&out, max)?;
    Ok(Capped {
        json: Cow::Owned(shortened.json.into_owned()),
        dropped,
        shortened: shortened.shortened,
    })
}

/// The byte ranges of the elements of the message array `json`: `marks` when they fit it (`[`,
/// ranges from a `{` to a `}` joined by single commas, `]`), else found by
/// [`top_level_elements`].
pub fn message_elements<'m>(
    json: &str,
    marks: Option<&'m [(usize, usize)]>,
) -> Result<Cow<'m, [(usize, usize)]>, CapError> {
    Ok(match marks.filter(|m| marks_describe(json, m)) {
        Some(marks) => Cow::Borrowed(marks),
        None => Cow::Owned(top_level_elements(json)?),
    })
}

/// The messages [`cap_messages_in`] keeps of an array of `elements` (two or more) of `json`,
/// element `i` being `size_of(i)` bytes: the oldest non-`system` ones dropped whole, one at a
/// time, until `[`, the rest joined by `,`, and `]` is at most `max` bytes; never the last.
/// Returns which are kept, how many were dropped and the kept array's size.
fn drop_oldest(
    json: &str,
    elements: &[(usize, usize)],
    size_of: impl Fn(usize) -> usize,
    max: usize,
) -> Result<(Vec<bool>, usize, usize), CapError> {
    // Bytes of "[" + elements joined by "," + "]".
    let size = |kept: usize, total: usize| total.saturating_add(kept.saturating_sub(1) + 2);
    // Sizes given by a caller (a narrowed text's UTF-8 counts) may be anything: a sum that
    // overflows is refused rather than wrapped.
    let mut total: usize = (0..elements.len())
        .try_fold(0usize, |t, i| t.checked_add(size_of(i)))
        .ok_or(CapError::Structure)?;
    let mut keep = Vec::new();
    keep.try_reserve(elements.len())?;
    keep.resize(elements.len(), true);
    let mut kept = elements.len();
    let mut dropped = 0;
    for (i, &(s, e)) in elements
        .iter()
        .enumerate()
        .take(elements.len().saturating_sub(1))
    {
        if size(kept, total) <= max {
            break;
        }
        if is_system(&json[s..e]) {
            continue;
        }
        keep[i] = false;
        kept -= 1;
        total -= size_of(i);
        dropped += 1;
    }
    Ok((keep, dropped, size(kept, total)))
}

/// `[`, the elements of `json` that `keep` marks joined by `,`, then `]`: the array the cap
/// writes ([`cap_messages_in`], and the narrowed mapping's cap, core `span::drop_narrowed`);
/// `placed(i, at)` is told the byte offset at which element `i` starts in it.
pub fn join_kept(
    json: &str,
    elements: &[(usize, usize)],
    keep: &[bool],
    mut placed: impl FnMut(usize, usize),
) -> Result<String, CapError> {
    let kept = elements.iter().zip(keep).filter(|(_, k)| **k);
    let len = kept.map(|(&(s, e), _)| e - s + 1).sum::<usize>() + 1;
    let mut out = String::new();
    out.try_reserve_exact(len.max(2))?;
    out.push('[');
    for (i, (&(s, e), &k)) in elements.iter().zip(keep).enumerate() {
        if !k {
            continue;
        }
        if out.len() > 1 {
            out.push(',');
        }
        placed(i, out.len());
        out.push_str(&json[s..e]);
    }
    out.push(']');
    Ok(out)
}

/// The messages kept of a narrowed message array ([`keep_messages_sized`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptMessages {
    /// Per element, whether it is kept ([`join_kept`] writes the array).
    pub keep: Vec<bool>,
    /// Messages dropped whole.
    pub dropped: usize,
}

/// [`cap_messages_in`]'s choice for a message array whose UTF-8 text is longer than `json`, the
/// text complete mode maps narrowed (issue 9: one byte a UTF-16 code unit, `json`'s structure
/// that of the text): `elements` its elements ([`message_elements`]) and `extra[i]` how many
/// bytes element `i` has in UTF-8 beyond its length here (the array's brackets and commas are
/// ASCII). The choice depends only on the elements' sizes and roles, so it is the one the cap
/// makes on the UTF-8 text. `None` where that cap would do more than drop messages (the array
/// still over `max` after them: strings shortened at character offsets `json` does not have), or
/// when it is not an array of two or more elements (then capped as [`cap_json`]). The caller
/// calls it only for an array over `max` in UTF-8.
pub fn keep_messages_sized(
    json: &str,
    elements: &[(usize, usize)],
    extra: &[usize],
    max: usize,
) -> Result<Option<KeptMessages>, CapError> {
    if json.as_bytes().first() != Some(&b'[') || elements.len() < 2 || extra.len() != elements.len()
    {
        return Ok(None);
    }
    let size_of = |i: usize| (elements[i].1 - elements[i].0).saturating_add(extra[i]);
    let (keep, dropped, size) = drop_oldest(json, elements, size_of, max)?;
    if size > max {
        return Ok(None);
    }
    Ok(Some(KeptMessages { keep, dropped }))
}

/// Whether `marks` fit the array `json` as the writers write one: `[`, then ranges from a `{` to a
/// `}` joined by single commas, then `]`, nothing else. The writers mark each message object
/// ([`crate::out::Out::element_from`]), and then the marks are what [`top_level_elements`] finds;
/// this check keeps marks that do not fit the text (another text than the one marked) from being
/// used, and every range it passes lies in `json` on character boundaries (its ends are ASCII).
fn marks_describe(json: &str, marks: &[(usize, usize)]) -> bool {
    let b = json.as_bytes();
    let (Some(first), Some(last)) = (marks.first(), marks.last()) else {
        return false;
    };
    if first.0 != 1 || last.1.checked_add(1) != Some(b.len()) || b[b.len() - 1] != b']' {
        return false;
    }
    let mut previous_end: Option<usize> = None;
    for &(s, e) in marks {
        if s >= e || e > b.len() || b[s] != b'{' || b[e - 1] != b'}' {
            return false;
        }
        if let Some(p) = previous_end {
            if p.checked_add(1) != Some(s) || b[p] != b',' {
                return false;
            }
        }
        previous_end = Some(e);
    }
    true
}

/// The byte spans of the elements of a JSON array (whitespace around them excluded), found by
/// scanning it: what [`cap_messages`] drops whole. Errors only when the list cannot be allocated.
pub fn top_level_elements(json: &str) -> Result<Vec<(usize, usize)>, CapError> {
    let b = json.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    let mut last_end = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
                i = crate::jsonstr::literal_end(b, i);
                last_end = i;
                continue;
            }
            b'[' | b'{' => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
                depth += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some(s) = start.take() {
                        out.try_reserve(1)?;
                        out.push((s, last_end.max(s)));
                    }
                    break;
                }
            }
            b',' if depth == 1 => {
                if let Some(s) = start.take() {
                    out.try_reserve(1)?;
                    out.push((s, last_end.max(s)));
                }
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
            }
        }
        i += 1;
        if depth >= 1 {
            last_end = i;
        }
    }
    Ok(out)
}

/// Whether a message object has the top-level key `role` equal to `"system"`.
fn is_system(message: &str) -> bool {
    let b = message.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = crate::jsonstr::literal_end(b, i);
                if depth == 1 && &message[i..end] == "\"role\"" {
                    let mut j = end;
                    while j < b.len() && (b[j].is_ascii_whitespace() || b[j] == b':') {
                        j += 1;
                    }
                    let value_end = if b.get(j) == Some(&b'"') {
                        crate::jsonstr::literal_end(b, j)
                    } else {
                        j
                    };
                    return &message[j..value_end] == "\"system\"";
                }
                i = end;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Caps any JSON value to `max` bytes by shortening its string values (not keys), longest first:
/// each is cut to the length that brings the whole under `max` (or to [`MARKER`] alone when that
/// is not enough, and the next longest is cut), on a character boundary outside any escape.
pub fn cap_json(json: &str, max: usize) -> Result<Capped<'_>, CapError> {
    if json.len() <= max {
        return Ok(unchanged(json));
    }
    let b = json.as_bytes();
    // String values worth cutting: (inner start, inner end).
    let mut strings: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let end = crate::jsonstr::literal_end(b, i);
        let mut j = end;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        let is_key = b.get(j) == Some(&b':');
        let inner = (i + 1, end.saturating_sub(1).max(i + 1));
        if !is_key && inner.1 - inner.0 > MARKER.len() {
            strings.try_reserve(1)?;
            strings.push(inner);
        }
        i = end;
    }
    // Longest first; decide each cut.
    let mut order: Vec<usize> = Vec::new();
    order.try_reserve(strings.len())?;
    order.extend(0..strings.len());
    order.sort_unstable_by_key(|&k| std::cmp::Reverse(strings[k].1 - strings[k].0));
    let mut cuts: Vec<Option<usize>> = Vec::new(); // new inner length (raw bytes before the marker)
    cuts.try_reserve(strings.len())?;
    cuts.resize(strings.len(), None);
    let mut excess = json.len() - max;
    let mut shortened = 0;
    for &k in &order {
        if excess == 0 {
            break;
        }
        let (s, e) = strings[k];
        let len = e - s;
        // Longest raw prefix that, with the marker, saves `excess` bytes.
        let target = len.saturating_sub(excess + MARKER.len());
        let keep = raw_cut(&json[s..e], target);
        let saved = len - (keep + MARKER.len());
        cuts[k] = Some(keep);
        shortened += 1;
        excess = excess.saturating_sub(saved);
    }
    if excess > 0 {
        return Err(CapError::Structure);
    }
    let mut by_position: Vec<usize> = Vec::new();
    by_position.try_reserve(shortened)?;
    by_position.extend((0..strings.len()).filter(|&k| cuts[k].is_some()));
    let mut out = String::new();
    out.try_reserve(max)?;
    let mut at = 0;
    for k in by_position {
        let (s, _) = strings[k];
        let keep = cuts[k].unwrap_or(0);
        out.push_str(&json[at..s + keep]);
        out.push_str(MARKER);
        at = strings[k].1;
    }
    out.push_str(&json[at..]);
    Ok(Capped {
        json: Cow::Owned(out),
        dropped: 0,
        shortened,
    })
}

/// The largest cut position `<= target` in a string literal's inside (`raw`, between the quotes)
/// that is on a character boundary and not inside an escape sequence; a surrogate pair escape
/// (`\ud83d\ude00`) is never split.
fn raw_cut(raw: &str, target: usize) -> usize {
    let b = raw.as_bytes();
    let mut i = 0;
    loop {
        let Some(p) = b[i..].iter().position(|&c| c == b'\\').map(|p| p + i) else {
            return floor_char_boundary(raw, target);
        };
        if p >= target {
            return floor_char_boundary(raw, target).max(i);
        }
        let len = escape_len(b, p);
        if p + len > target {
            return p;
        }
        i = p + len;
    }
}

/// Raw length of the escape at `p`: 2, 6 for `\uXXXX`, 12 for a surrogate pair.
fn escape_len(b: &[u8], p: usize) -> usize {
    if b.get(p + 1) != Some(&b'u') {
        return 2.min(b.len() - p);
    }
    let hex = |at: usize| -> Option<u32> {
        let s = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
        u32::from_str_radix(s, 16).ok()
    };
    match hex(p + 2) {
        Some(0xD800..=0xDBFF)
            if b.get(p + 6) == Some(&b'\\')
                && b.get(p + 7) == Some(&b'u')
                && matches!(hex(p + 8), Some(0xDC00..=0xDFFF)) =>
        {
            12
        }
        _ => 6.min(b.len() - p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn msg(role: &str, text: &str) -> Value {
        json!({"role": role, "parts": [{"type": "text", "content": text}]})
    }

    #[test]
    fn keep_messages_sized_chooses_as_cap_messages_does() {
        // The UTF-8 array and its narrowed form (one byte a UTF-16 unit): the narrowed choice,
        // given each element's extra UTF-8 bytes, keeps the elements the cap keeps of the UTF-8
        // text, or answers None where the cap shortens strings.
        let texts = [
            "Привет мир ",
            "東京の天気は晴れ",
            "😀🎉",
            "plain",
            "système",
        ];
        let mut messages = vec![msg("system", "あなたは助手です")];
        for i in 0..12 {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            messages.push(msg(role, &texts[i % texts.len()].repeat(i + 3)));
        }
        let utf8 = Value::Array(messages).to_string();
        let narrowed: String = utf8
            .encode_utf16()
            .map(|u| {
                if u > 0x7f {
                    '\u{7f}'
                } else {
                    char::from(u as u8)
                }
            })
            .collect();
        let (u_elems, n_elems) = (
            top_level_elements(&utf8).unwrap(),
            top_level_elements(&narrowed).unwrap(),
        );
        assert_eq!(u_elems.len(), n_elems.len());
        let extra: Vec<usize> = u_elems
            .iter()
            .zip(&n_elems)
            .map(|(u, n)| (u.1 - u.0) - (n.1 - n.0))
            .collect();
        let mut chose = 0;
        for max in (50..utf8.len() + 10).step_by(7) {
            let sized = keep_messages_sized(&narrowed, &n_elems, &extra, max).unwrap();
            if utf8.len() <= max {
                continue;
            }
            let Ok(capped) = cap_messages(&utf8, max) else {
                // Too small even for the structure: the cap leaves the attribute out.
                assert_eq!(sized, None, "{max}");
                continue;
            };
            match sized {
                Some(kept) => {
                    chose += 1;
                    assert_eq!(capped.shortened, 0, "{max}");
                    assert_eq!(kept.dropped, capped.dropped, "{max}");
                    // The kept elements, in UTF-8, joined here (not by the code under
                    // test), are the capped array.
                    let rebuilt: Vec<&str> = kept
                        .keep
                        .iter()
                        .zip(&u_elems)
                        .filter(|(k, _)| **k)
                        .map(|(_, e)| &utf8[e.0..e.1])
                        .collect();
                    assert_eq!(format!("[{}]", rebuilt.join(",")), capped.json, "{max}");
                }
                None => assert!(
                    capped.shortened > 0,
                    "{max}: declined where the cap only drops"
                ),
            }
        }
        assert!(chose > 10, "{chose}");
        // Not an array of two or more elements: never chosen here.
        assert_eq!(keep_messages_sized("{}", &[], &[], 1).unwrap(), None);
        assert_eq!(
            keep_messages_sized("[{}]", &[(1, 3)], &[0], 1).unwrap(),
            None
        );
        // Sizes that overflow are refused, never wrapped into a small total.
        let two = [(1, 3), (4, 6)];
        assert!(!matches!(
            keep_messages_sized("[{},{}]", &two, &[usize::MAX, 2], 10),
            Ok(Some(_))
        ));
    }

    #[test]
    fn under_the_cap_is_borrowed() {
        let j = r#"[{"role":"user","parts":[]}]"#;
        assert!(matches!(
            cap_messages(j, 100).unwrap().json,
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            cap_json(j, j.len()).unwrap().json,
            Cow::Borrowed(_)
        ));
        assert!(matches!(cap_text("abc", 3).unwrap().json, Cow::Borrowed(_)));
    }

    #[test]
    fn drops_oldest_non_system_messages_whole() {
        let messages: Vec<Value> = (0..10)
            .map(|i| {
                if i == 1 {
                    msg("system", "be brief")
                } else {
                    msg(
                        if i % 2 == 0 { "user" } else { "model" },
                        &format!("message {i} {}", "x".repeat(100)),
                    )
                }
            })
            .collect();
        let j = serde_json::to_string(&messages).unwrap();
        let max = j.len() / 2;
        let c = cap_messages(&j, max).unwrap();
        assert!(c.json.len() <= max);
        let back: Vec<Value> = serde_json::from_str(&c.json).unwrap();
        assert_eq!(back.len() + c.dropped, 10);
        assert_eq!(c.shortened, 0);
        // The system message stays, the kept ones are the newest, in order.
        assert_eq!(back[0], messages[1]);
        assert_eq!(back[1..], messages[10 - (back.len() - 1)..]);
    }

    #[test]
    fn a_single_huge_part_is_cut_with_the_marker() {
        let text = "ab\"c\\d\u{e9}\u{1F600}".repeat(1000);
        let j = serde_json::to_string(&vec![msg("user", "old"), msg("user", &text)]).unwrap();
        let c = cap_messages(&j, 500).unwrap();
        assert!(c.json.len() <= 500, "{}", c.json.len());
        assert_eq!(c.dropped, 1);
        assert_eq!(c.shortened, 1);
        let back: Vec<Value> = serde_json::from_str(&c.json).unwrap();
        let content = back[0]["parts"][0]["content"].as_str().unwrap();
        let kept = content.strip_suffix(MARKER).unwrap();
        assert!(text.starts_with(kept));
        assert!(kept.len() > 300);
    }

    /// Every cap from the smallest that fits the structure to the full length, on text holding
    /// 1-, 2-, 3- and 4-byte characters raw and escaped (`\n`, `\"`, `\u00e9`, surrogate pairs):
    /// the result parses, fits, and its text is a prefix of the original plus the marker.
    #[test]
    fn multi_byte_text_cut_at_every_boundary() {
        let text = "a\u{e9}\u{4e16}\u{1F600}\n\"\\\u{7f}\u{e9}".repeat(8);
        let raw_escaped = r#"\u00e9\ud83d\ude00\u4e16x"#.repeat(6);
        for value in [
            serde_json::to_string(&text).unwrap(),
            format!("\"{raw_escaped}{}\"", "y".repeat(20)),
        ] {
            let decoded: String = serde_json::from_str(&value).unwrap();
            let j = format!(r#"[{{"role":"user","parts":[{{"type":"text","content":{value}}}]}}]"#);
            let skeleton = j.len() - (value.len() - 2);
            for max in skeleton + MARKER.len()..=j.len() {
                let c = cap_messages(&j, max).unwrap();
                assert!(c.json.len() <= max, "max {max}");
                let back: Vec<Value> = serde_json::from_str(&c.json).expect("parses");
                let content = back[0]["parts"][0]["content"].as_str().unwrap();
                if max == j.len() {
                    assert_eq!(content, decoded);
                } else {
                    let kept = content.strip_suffix(MARKER).expect("marker");
                    assert!(decoded.starts_with(kept), "max {max}");
                    // Nothing more than one unit (at most a 12-byte escape) is given away.
                    assert!(c.json.len() + 12 > max, "max {max}: {}", c.json.len());
                }
            }
            for max in 0..skeleton + MARKER.len() {
                assert_eq!(cap_messages(&j, max).unwrap_err(), CapError::Structure);
            }
        }
    }

    #[test]
    fn cap_text_cuts_on_char_boundaries() {
        let text = "a\u{e9}\u{4e16}\u{1F600}".repeat(10);
        for max in 0..=text.len() + 1 {
            let c = cap_text(&text, max).unwrap();
            if max >= text.len() {
                assert_eq!(c.json, text);
            } else {
                let kept = c.json.strip_suffix(MARKER).unwrap();
                assert!(text.starts_with(kept));
                assert!(c.json.len() <= max.max(MARKER.len()));
            }
        }
    }

    #[test]
    fn cap_json_shortens_longest_strings_and_keeps_keys() {
        let long_key = "k".repeat(50);
        let v = json!({ long_key.clone(): "short", "a": "x".repeat(300), "b": "y".repeat(200), "n": [1, 2, 3] });
        let j = serde_json::to_string(&v).unwrap();
        let c = cap_json(&j, j.len() - 100).unwrap();
        let back: Value = serde_json::from_str(&c.json).unwrap();
        assert_eq!(c.shortened, 1);
        assert_eq!(back[&long_key], "short");
        assert!(back["a"].as_str().unwrap().ends_with(MARKER));
        assert_eq!(back["b"], "y".repeat(200));
        // Both strings cut when one is not enough.
        let c = cap_json(&j, j.len() - 350).unwrap();
        assert_eq!(c.shortened, 2);
        assert!(c.json.len() <= j.len() - 350);
        serde_json::from_str::<Value>(&c.json).unwrap();
    }

    #[test]
    fn structure_larger_than_the_cap_is_an_error() {
        let j = serde_json::to_string(&vec![1u32; 1000]).unwrap();
        assert_eq!(cap_json(&j, 100).unwrap_err(), CapError::Structure);
    }

    #[test]
    fn thirty_megabyte_history() {
        let turn = "Tell me more about the history of paper lanterns. \u{706f}\u{7c60} ".repeat(40);
        let system = serde_json::to_string(&msg("system", "You are helpful.")).unwrap();
        let user = serde_json::to_string(&msg("user", &turn)).unwrap();
        let model = serde_json::to_string(&msg("model", &turn)).unwrap();
        let pairs = (30 << 20) / (user.len() + model.len() + 2) + 1;
        let mut j = format!("[{system}");
        for _ in 0..pairs {
            j.push(',');
            j.push_str(&user);
            j.push(',');
            j.push_str(&model);
        }
        j.push(']');
        assert!(j.len() >= 30 << 20);
        let c = cap_messages(&j, DEFAULT_MAX_CONTENT_BYTES).unwrap();
        assert!(c.json.len() <= DEFAULT_MAX_CONTENT_BYTES);
        let back: Vec<Value> = serde_json::from_str(&c.json).unwrap();
        assert_eq!(back[0]["role"], "system");
        assert_eq!(back.len() + c.dropped, 1 + 2 * pairs);
        assert_eq!(serde_json::to_string(back.last().unwrap()).unwrap(), model);
        assert!(back.len() > 50);
    }
}
