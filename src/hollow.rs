//! Model spans with long texts, mapped without copying the texts (issue 13, memory per span).
//!
//! Reference mode's model writers copy every text as written: a text part's JSON string literal
//! in `genkit:output` reappears byte for byte in `gen_ai.output.messages` (and the input's in
//! `gen_ai.input.messages` / `gen_ai.system_instructions`); the mapping only asks of such a string
//! that it is a string, truthy, and (for a role) whether it is `"model"`. So when no content rule
//! reads the values (no secret scrubbing, no cap) and an attribute is at least
//! [`slice::STREAM_UNITS`](super::slice::STREAM_UNITS) long, it is read in chunks (64 KiB), and
//! each string literal longer than [`HOLLOW_UNITS`] units without escapes is kept out of the copy:
//! a placeholder literal `"\u0000<n>"` stands in for it. The core maps the hollowed text (small);
//! in the JSON it writes, each placeholder is replaced by `parent.slice(a, b)` (the literal as
//! written, quotes included) and the pieces joined with `String.prototype.concat`, which V8 keeps as
//! a rope of the small pieces and the slices: the long texts are never copied during `onEnd`. V8
//! flattens the rope into one string the first time it is read whole (an exporter serialising the
//! span), at the cost of the one string the pure-JS path builds in `onEnd`.
//!
//! Anything else is left to the usual path ([`None`]): a long literal with an escape, a control
//! character or a lone surrogate (JSON.stringify would escape it), a `\u0000` escape anywhere in
//! the text (a placeholder must be unambiguous), an unterminated literal, a finish reason or token
//! count that is a placeholder, or a hollowed copy that stays over a quarter of the attribute.

use super::slice::{read_units, slice_of, STREAM_UNITS};
use super::{problem, utf, Call, Read, HANDOFF_UNITS, OUT_OF_MEMORY, WRITE_FAILED};
use genkit_for_maple_core::{map_model, Scalar};
use napi::sys;
use std::ffi::CStr;
use std::ptr;

/// String literals longer than this many code units (quotes included) without escapes are
/// referenced, not copied.
pub(crate) const HOLLOW_UNITS: usize = 4096;

/// At most this many literals are hollowed in one attribute (more: the usual path). The output is
/// joined by one `String.prototype.concat` call with about two arguments per literal, and a call
/// with hundreds of thousands of arguments can overflow V8's stack.
const MAX_HOLLOWED: usize = 1024;

/// The code units read at a time (64 KiB of UTF-16).
const CHUNK_UNITS: usize = 32 << 10;

/// An attribute with its long literals replaced by placeholders.
struct Hollowed {
    /// The hollowed text, UTF-8.
    text: String,
    /// Placeholder `n`'s literal: UTF-16 offsets in the JavaScript string, quotes included.
    ranges: Vec<(usize, usize)>,
}

fn special(u: u16) -> bool {
    u == 0x22 || u == 0x5C || u < 0x20
}

/// The index of the first `"`, `\` or control character of `s`, or `s.len()`. Tested 32 units at
/// a time by a fold without early exit (vectorised), then located within the block.
fn find_special(s: &[u16]) -> usize {
    let mut at = 0;
    for block in s.chunks(32) {
        if block.iter().fold(false, |any, &u| any | special(u)) {
            return at
                + block
                    .iter()
                    .position(|&u| special(u))
                    .unwrap_or(block.len());
        }
        at += block.len();
    }
    s.len()
}

/// Checks that `s` pairs its surrogates, `high` carrying a high surrogate that ended the previous
/// piece. `None` on a lone surrogate.
fn check_pairs(s: &[u16], high: &mut bool) -> Option<()> {
    let surrogate = |u: u16| (u & 0xF800) == 0xD800;
    if !*high && !s.iter().fold(false, |any, &u| any | surrogate(u)) {
        return Some(());
    }
    for &u in s {
        let is_low = (u & 0xFC00) == 0xDC00;
        if *high {
            if !is_low {
                return None;
            }
            *high = false;
        } else if (u & 0xFC00) == 0xD800 {
            *high = true;
        } else if is_low {
            return None;
        }
    }
    Some(())
}

/// The streaming lexer: JSON string literals found, long plain ones left out of `kept`.
#[derive(Default)]
struct Lexer {
    kept: Vec<u16>,
    ranges: Vec<(usize, usize)>,
    in_string: bool,
    escaped: bool,
    plain: bool,
    skipping: bool,
    high: bool,
    start_unit: usize,
    start_kept: usize,
    limit: usize,
}

impl Lexer {
    fn keep(&mut self, units: &[u16]) -> Option<()> {
        if self.kept.len() + units.len() > self.limit {
            return None;
        }
        self.kept.try_reserve(units.len()).ok()?;
        self.kept.extend_from_slice(units);
        Some(())
    }

    /// Lexes `chunk`, the units from `base` on.
    fn feed(&mut self, chunk: &[u16], base: usize) -> Option<()> {
        let mut i = 0;
        while i < chunk.len() {
            let rest = chunk.get(i..)?;
            if !self.in_string {
                match rest.iter().position(|&u| u == 0x22) {
                    None => {
                        self.keep(rest)?;
                        i = chunk.len();
                    }
                    Some(p) => {
                        self.keep(rest.get(..=p)?)?;
                        self.in_string = true;
                        self.escaped = false;
                        self.plain = true;
                        self.skipping = false;
                        self.high = false;
                        self.start_unit = base + i + p;
                        self.start_kept = self.kept.len() - 1;
                        i += p + 1;
                    }
                }
                continue;
            }
            if self.escaped {
                self.keep(rest.get(..1)?)?;
                self.escaped = false;
                i += 1;
                continue;
            }
            let stop = find_special(rest);
            let run = rest.get(..stop)?;
            if self.skipping {
                check_pairs(run, &mut self.high)?;
            } else {
                self.keep(run)?;
                if self.plain && base + i + stop - self.start_unit >= HOLLOW_UNITS {
                    let mut high = false;
                    check_pairs(self.kept.get(self.start_kept + 1..)?, &mut high)?;
                    self.high = high;
                    self.kept.truncate(self.start_kept);
                    self.skipping = true;
                }
            }
            let Some(&u) = rest.get(stop) else {
                i = chunk.len();
                continue;
            };
            i += stop + 1;
            if u == 0x22 {
                self.in_string = false;
                if self.skipping {
                    if self.high {
                        return None;
                    }
                    let n = self.ranges.len();
                    if n >= MAX_HOLLOWED {
                        return None;
                    }
                    self.ranges.try_reserve(1).ok()?;
                    self.ranges.push((self.start_unit, base + i));
                    let mut units = [0u16; 32];
                    let placeholder = format_placeholder(n, &mut units);
                    self.keep(placeholder)?;
                } else {
                    self.keep(&[0x22])?;
                }
            } else if self.skipping {
                // An escape or a control character in a long literal: the usual path.
                return None;
            } else if u < 0x20 {
                // A raw control character inside a string literal: not JSON at all, which only
                // the usual path reports as such (a hollowed copy could parse).
                return None;
            } else {
                self.keep(&[u])?;
                if u == 0x5C {
                    self.escaped = true;
                    self.plain = false;
                }
            }
        }
        Some(())
    }
}

/// `"\u0000<n>"` as UTF-16 units in `buf`.
fn format_placeholder(n: usize, buf: &mut [u16; 32]) -> &[u16] {
    let head = b"\"\\u0000";
    let mut len = 0;
    for &b in head {
        buf[len] = u16::from(b);
        len += 1;
    }
    let mut digits = [0u8; 24];
    let mut d = 0;
    let mut m = n;
    loop {
        digits[d] = b'0' + (m % 10) as u8;
        d += 1;
        m /= 10;
        if m == 0 || d == digits.len() {
            break;
        }
    }
    for &b in digits[..d].iter().rev() {
        buf[len] = u16::from(b);
        len += 1;
    }
    buf[len] = 0x22;
    &buf[..len + 1]
}

/// Reads the string `value` (`len` units) in chunks through `slice` and hollows it. `None` when it
/// has no long plain literal, or anything the module doc lists.
fn hollow(
    call: &Call,
    value: sys::napi_value,
    len: usize,
    slice: sys::napi_value,
) -> Option<Hollowed> {
    let mut lexer = Lexer {
        // At most a quarter of the attribute, and never more than the hand-off size allows.
        limit: (len / 4).clamp(STREAM_UNITS, HANDOFF_UNITS / 4),
        ..Lexer::default()
    };
    let mut chunk: Vec<u16> = Vec::new();
    chunk.try_reserve_exact(CHUNK_UNITS + 1).ok()?;
    let mut start = 0;
    while start < len {
        let end = (start + CHUNK_UNITS).min(len);
        if !read_units(call, slice, value, start, end, &mut chunk) {
            return None;
        }
        lexer.feed(&chunk, start)?;
        start = end;
    }
    if lexer.in_string || lexer.ranges.is_empty() {
        return None;
    }
    drop(chunk);
    let mut text = String::new();
    utf::utf16_to_utf8(&lexer.kept, &mut text).ok()?;
    // Every `\u0000` in the text is a placeholder's: otherwise a placeholder would be ambiguous.
    if text.matches("\\u0000").count() != lexer.ranges.len() {
        return None;
    }
    Some(Hollowed {
        text,
        ranges: lexer.ranges,
    })
}

/// One attribute's source: its hollowed text, or its usual UTF-8 copy.
enum Source {
    Hollowed(Hollowed),
    Read(String, Read),
}

impl Source {
    fn of(
        call: &Call,
        value: sys::napi_value,
        slice: sys::napi_value,
    ) -> Result<Source, Option<u32>> {
        if let Some(len) = call.string_length(value) {
            if len >= STREAM_UNITS {
                return hollow(call, value, len, slice)
                    .map(Source::Hollowed)
                    .ok_or(None);
            }
        }
        let mut buf = String::new();
        let read = call.read_string(value, &mut buf);
        match read.hand_off() {
            Some(flags) => Err(Some(flags)),
            None => Ok(Source::Read(buf, read)),
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Source::Hollowed(h) => Some(&h.text),
            Source::Read(buf, Read::Str) => Some(buf),
            Source::Read(..) => None,
        }
    }

    fn ranges(&self) -> &[(usize, usize)] {
        match self {
            Source::Hollowed(h) => &h.ranges,
            Source::Read(..) => &[],
        }
    }

    fn hollowed(&self) -> bool {
        matches!(self, Source::Hollowed(_))
    }
}

/// Maps a model span as `mapModelSpan` does, for rules that do not read the values, when
/// `genkit:input` or `genkit:output` is long: `Some(flags)` when mapped (or handed to JavaScript),
/// `None` (nothing written) when the caller maps it the usual way.
pub(crate) fn map_model_span(
    call: &Call,
    input: sys::napi_value,
    output: sys::napi_value,
    skip_input: bool,
    slice: sys::napi_value,
    concat: sys::napi_value,
) -> Option<u32> {
    let long = |v| call.string_length(v).is_some_and(|n| n >= STREAM_UNITS);
    if !((long(input) && !skip_input) || long(output)) {
        return None;
    }
    let input_src = if skip_input {
        Source::Read(String::new(), Read::Absent)
    } else {
        match Source::of(call, input, slice) {
            Ok(s) => s,
            Err(flags) => return flags,
        }
    };
    let output_src = match Source::of(call, output, slice) {
        Ok(s) => s,
        Err(flags) => return flags,
    };
    if !input_src.hollowed() && !output_src.hollowed() {
        return None;
    }
    let mut attrs = map_model(input_src.text(), output_src.text());
    if skip_input {
        attrs.input_messages = None;
        attrs.system_instructions = None;
    }
    let mut reasons: Vec<Scalar<'_>> = Vec::new();
    if let Some(raws) = &attrs.finish_reasons {
        if reasons.try_reserve_exact(raws.len()).is_err() {
            return Some(OUT_OF_MEMORY);
        }
        reasons.extend(raws.iter().map(|raw| Scalar::of(*raw)));
    }
    let input_tokens = attrs.input_tokens.map(Scalar::of);
    let output_tokens = attrs.output_tokens.map(Scalar::of);
    let scalars = || {
        reasons
            .iter()
            .chain(input_tokens.iter())
            .chain(output_tokens.iter())
    };
    if scalars().any(|s| matches!(s, Scalar::Json(_))) {
        return Some(attrs.problems | problem::NEEDS_JS);
    }
    // A placeholder read as a value (not copied as written): the usual path.
    if scalars().any(|s| matches!(s, Scalar::Str(t) if t.contains('\0'))) {
        return None;
    }
    let mut problems = attrs.problems;
    let writes = [
        (
            c"gen_ai.input.messages",
            attrs.input_messages.take(),
            &input_src,
            input,
        ),
        (
            c"gen_ai.system_instructions",
            attrs.system_instructions.take(),
            &input_src,
            input,
        ),
        (
            c"gen_ai.output.messages",
            attrs.output_messages.take(),
            &output_src,
            output,
        ),
    ];
    for (key, value, src, parent) in writes {
        if let Some(json) = value {
            problems |= write_pieces(call, key, &json, src.ranges(), parent, slice, concat);
        }
    }
    if attrs.finish_reasons.is_some() {
        problems |= call.set_list(c"gen_ai.response.finish_reasons", &reasons);
    }
    if let Some(v) = &input_tokens {
        problems |= call.set_scalar(c"gen_ai.usage.input_tokens", v);
    }
    if let Some(v) = &output_tokens {
        problems |= call.set_scalar(c"gen_ai.usage.output_tokens", v);
    }
    Some(problems)
}

/// Writes `key` = `json` with each placeholder replaced by its literal, a slice of `parent`.
fn write_pieces(
    call: &Call,
    key: &CStr,
    json: &str,
    ranges: &[(usize, usize)],
    parent: sys::napi_value,
    slice: sys::napi_value,
    concat: sys::napi_value,
) -> u32 {
    if ranges.is_empty() || !json.contains("\"\\u0000") {
        return call.set_string(key, json);
    }
    call.set_with(key, || {
        let mut values: Vec<sys::napi_value> = Vec::new();
        let mut rest = json;
        while let Some(at) = rest.find("\"\\u0000") {
            let (before, from) = rest.split_at(at);
            let digits = &from[7..];
            let n_len = digits.bytes().take_while(u8::is_ascii_digit).count();
            let n: usize = digits[..n_len].parse().map_err(|_| WRITE_FAILED)?;
            if digits.as_bytes().get(n_len) != Some(&b'"') {
                return Err(WRITE_FAILED);
            }
            let &(a, b) = ranges.get(n).ok_or(WRITE_FAILED)?;
            values.try_reserve(2).map_err(|_| OUT_OF_MEMORY)?;
            if !before.is_empty() {
                values.push(call.string(before)?);
            }
            values.push(slice_of(call, slice, parent, a, b)?);
            rest = &digits[n_len + 1..];
        }
        if !rest.is_empty() {
            values.try_reserve(1).map_err(|_| OUT_OF_MEMORY)?;
            values.push(call.string(rest)?);
        }
        let (first, others) = values.split_first().ok_or(WRITE_FAILED)?;
        if others.is_empty() {
            return Ok(*first);
        }
        let mut out = ptr::null_mut();
        // SAFETY: live handles of the current call; `concat` is the function value the wrapper
        // passed (napi reports `napi_function_expected` otherwise); `others` holds `others.len()`
        // values created in this `env`; `out` is a valid out-pointer.
        let status = unsafe {
            sys::napi_call_function(
                call.env,
                *first,
                concat,
                others.len(),
                others.as_ptr(),
                &mut out,
            )
        };
        if call.ok(status) {
            Ok(out)
        } else {
            Err(WRITE_FAILED)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lexes `text` fed in chunks of `size` units: the kept text (UTF-16 as a `String`) and ranges.
    fn lex(text: &str, size: usize) -> Option<(String, Vec<(usize, usize)>)> {
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut lexer = Lexer {
            limit: usize::MAX,
            ..Lexer::default()
        };
        for (i, chunk) in units.chunks(size).enumerate() {
            lexer.feed(chunk, i * size)?;
        }
        (!lexer.in_string).then(|| (String::from_utf16_lossy(&lexer.kept), lexer.ranges))
    }

    #[test]
    fn long_plain_literals_become_placeholders_at_every_chunk_size() {
        let long = "é".repeat(HOLLOW_UNITS);
        let text = format!(r#"{{"a":"{long}","b":["x\n\"y",1,"{long}"],"{long}":2}}"#);
        let units: Vec<u16> = text.encode_utf16().collect();
        for size in [1, 2, 3, 7, 31, 32, 33, 4095, 4096, 4097, 100_000] {
            let (kept, ranges) = lex(&text, size).unwrap(); // ok: a test; None is the failure
            assert_eq!(
                kept, r#"{"a":"\u00000","b":["x\n\"y",1,"\u00001"],"\u00002":2}"#,
                "{size}"
            );
            assert_eq!(ranges.len(), 3);
            for (a, b) in ranges {
                let literal = String::from_utf16_lossy(&units[a..b]);
                assert_eq!(literal, format!("\"{long}\""));
            }
        }
    }

    #[test]
    fn short_literals_and_literals_with_escapes_are_kept() {
        let almost = "a".repeat(HOLLOW_UNITS - 2);
        let escaped = format!("\\n{}", "a".repeat(HOLLOW_UNITS));
        for text in [format!(r#"["{almost}"]"#), format!(r#"["{escaped}"]"#)] {
            let (kept, ranges) = lex(&text, 5).unwrap(); // ok: a test
            assert_eq!(kept, text);
            assert!(ranges.is_empty());
        }
        // One unit over the threshold (quotes included): hollowed.
        let at = "a".repeat(HOLLOW_UNITS - 1);
        assert_eq!(lex(&format!(r#"["{at}"]"#), 5).unwrap().1.len(), 1); // ok: a test
    }

    #[test]
    fn escapes_controls_and_lone_surrogates_in_long_literals_refuse() {
        let long = "a".repeat(HOLLOW_UNITS + 10);
        for insert in ["\\n", "\n", "\u{1}"] {
            let text = format!(r#"["{long}{insert}b"]"#);
            assert!(lex(&text, 64).is_none(), "{insert:?}");
        }
        for lone in [
            [0xD800u16].as_slice(),
            &[0xDC00],
            &[0xDBFF, 0x61],
            &[0x61, 0xD83D],
        ] {
            let mut units: Vec<u16> = "[\"".encode_utf16().collect();
            units.extend(std::iter::repeat_n(0x62, HOLLOW_UNITS + 10));
            units.extend_from_slice(lone);
            units.extend("\"]".encode_utf16());
            for size in [1, 3, 64] {
                let mut lexer = Lexer {
                    limit: usize::MAX,
                    ..Lexer::default()
                };
                let ok = units
                    .chunks(size)
                    .enumerate()
                    .all(|(i, c)| lexer.feed(c, i * size).is_some());
                assert!(!ok, "{lone:?} {size}");
            }
        }
        // A pair split across chunks is fine.
        let text = format!("[\"{long}😀{long}\"]");
        for size in [1, 2, 3, 4097] {
            assert_eq!(lex(&text, size).map(|(_, r)| r.len()), Some(1), "{size}");
        }
    }

    #[test]
    fn the_kept_copy_is_bounded() {
        let mut lexer = Lexer {
            limit: 10,
            ..Lexer::default()
        };
        let units: Vec<u16> = r#"{"key":"value"}"#.encode_utf16().collect();
        assert!(lexer.feed(&units, 0).is_none());
    }

    #[test]
    fn find_special_and_placeholders() {
        let mut units = vec![0x61u16; 100];
        assert_eq!(find_special(&units), 100);
        for (at, u) in [(0, 0x22), (31, 0x5C), (32, 0x1F), (99, 0x22)] {
            units[at] = u;
            assert_eq!(find_special(&units), at);
            units[at] = 0x61;
        }
        let mut buf = [0u16; 32];
        for (n, text) in [(0, r#""\u00000""#), (12, r#""\u000012""#), (usize::MAX, "")] {
            let got = String::from_utf16_lossy(format_placeholder(n, &mut buf));
            if !text.is_empty() {
                assert_eq!(got, text);
            } else {
                assert!(got.ends_with('"') && got.len() == 7 + 20 + 1);
            }
        }
    }
}
