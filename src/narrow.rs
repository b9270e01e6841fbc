//! Reference mode's model spans with multi-byte text, mapped without transcoding it (issue 9).
//!
//! V8 gives a non-ASCII string as UTF-16; the core maps UTF-8. Transcoding both ways was a third
//! of a multi-byte span's time (BENCHMARKS.md "Stop 21"), and the copies of `src/copies.rs` only
//! spare the way back. Here the inputs are *narrowed* instead ([`utf::narrow`]): one byte a code
//! unit, ASCII as it is and every other unit [`utf::PLACEHOLDER`]. The narrowed JSON has the same
//! structure, the same string literals at the same offsets (in code units), and the same answer to
//! everything reference mode's mapping asks of a text (whether it is valid JSON and of which
//! shape, whether a role is `"system"` or `"model"`, whether a value is truthy, the raw extent of
//! each value it copies): the core maps it as it is, recording the pieces it copies
//! (`Out::recording`), and each output is rebuilt in UTF-16 from the pieces' code units in the
//! inputs (byte offset = unit offset) and the writers' own ASCII structure around them.
//!
//! The mapping is used only where that is exact, and otherwise the span takes the usual path (the
//! inputs transcoded from the units already read):
//! - content rules that change nothing of a clean text: none, or capture on, no cap, no user
//!   secret pattern (a user regex may read the characters), and each input *clean*: no needle of
//!   the built-in patterns and no `\u` escape, so that scrubbing has nothing to do in either text
//!   (the needles are ASCII, and a placeholder is in none of them);
//! - the core's answer needs no JavaScript (`NEEDS_JS`: the usual path gives it the same way);
//! - every placeholder of an output lies in a piece copied from an input (a decoded or scrubbed
//!   value, or a finish reason or token count holding one, cannot be traced to its units).

use super::copies::Source;
use super::{problem, utf, Call, ModelScalars};
use genkit_for_maple_core::content::Content;
use genkit_for_maple_core::map_model_recorded;
use genkit_for_maple_core::out::{Copied, Recording};
use genkit_for_maple_core::scrub::{has_unicode_escape, Scrubber};
use std::ffi::CStr;

/// Whether content rules `rules` leave every clean value as it is (the first condition of the
/// module docs).
pub(crate) fn rules_allow(rules: Option<&Content>) -> bool {
    rules.is_none_or(|r| {
        r.captures()
            && r.max_bytes().is_none()
            && r.scrubber().is_none_or(|s| !s.has_user_patterns())
    })
}

/// Whether content rules `rules` let complete mode map narrowed inputs (core
/// `Mapper::map_narrowed`, which checks the rest): content captured, no user secret pattern. A
/// cap is allowed there (that mapping drops messages by their UTF-8 sizes as the cap does, and
/// declines where the cap would shorten a text).
pub(crate) fn rules_allow_narrowing(rules: &Content) -> bool {
    rules.captures() && rules.scrubber().is_none_or(|s| !s.has_user_patterns())
}

/// Whether a narrowed input holds nothing the secret scrubber could change.
fn clean(text: Option<&str>, scrubber: Option<&Scrubber>) -> bool {
    text.is_none_or(|t| !has_unicode_escape(t.as_bytes()) && scrubber.is_none_or(|s| s.is_clean(t)))
}

/// One piece of an output ([`pieces`]).
enum Piece<'a> {
    /// Text the writers wrote or an ASCII input's copy: as it is, widened.
    Ascii(&'a [u8]),
    /// A copy from an input that is not ASCII: its code units.
    Units(&'a [u16]),
}

/// Calls `f` with the pieces of narrowed output `text` in order: each recorded copy that checks
/// out against its (narrowed) source, as that source's code units, and everything between as
/// bytes. Stops at the first `false` from `f`, and answers `false` then.
fn pieces(
    text: &str,
    copies: &[Copied],
    sources: &[Source<'_>],
    mut f: impl FnMut(Piece<'_>) -> bool,
) -> bool {
    let bytes = text.as_bytes();
    let mut done = 0;
    for copy in copies {
        let Some(end) = copy.at.checked_add(copy.len) else {
            continue;
        };
        if copy.at < done || end > bytes.len() || copy.len == 0 {
            continue;
        }
        let found = sources.iter().find_map(|s| {
            let r = s.range_of(copy)?;
            (s.utf8.as_bytes()[r.clone()] == bytes[copy.at..end]).then_some((s, r.start, r.end))
        });
        let Some((source, from, to)) = found else {
            continue;
        };
        // Narrowed, the source's byte offsets are its units' offsets. A source transcoded with
        // its units kept (an answer over the cap beside a narrowed input, src/seam.rs) is UTF-8:
        // its offsets are not its units', and its copies are bytes (a DEL there, taken for the
        // placeholder, is then refused by `rebuild`, which declines the span).
        let narrowed = !source.units.is_empty() && source.units.len() == source.utf8.len();
        let ok = f(Piece::Ascii(&bytes[done..copy.at]))
            && match source.units.get(from..to) {
                Some(units) if narrowed => f(Piece::Units(units)),
                _ => f(Piece::Ascii(&bytes[copy.at..end])),
            };
        if !ok {
            return false;
        }
        done = end;
    }
    f(Piece::Ascii(&bytes[done..]))
}

/// The UTF-16 of narrowed output `text` (its code units: one a byte), or `None` when a
/// placeholder lies outside the copies or memory cannot be had.
pub(crate) fn rebuild(text: &str, copies: &[Copied], sources: &[Source<'_>]) -> Option<Vec<u16>> {
    // One pass: each piece checked, then widened or copied; the first that fails drops what was
    // built (nothing is written to JavaScript before the whole text is rebuilt). Bytes outside the
    // copies of a narrowed source are widened one a unit: they must be ASCII other than the
    // placeholder (a source whose units were not kept, read transcoded or lossily when memory or
    // well-formedness failed, may hold UTF-8 above 0x7F: declined). Every piece is as many units
    // as bytes, so the units fit the reservation; a piece that would not is refused rather than
    // grown into (no allocation sized by the input outside `try_reserve`).
    let plain = |b: &[u8]| b.iter().fold(0u8, |m, &c| m.max(c)) < utf::PLACEHOLDER;
    let mut units = super::spare_units();
    units.try_reserve_exact(text.len()).ok()?;
    let rebuilt = pieces(text, copies, sources, |p| {
        let room = units.capacity() - units.len();
        match p {
            Piece::Ascii(b) if b.len() <= room && plain(b) => {
                units.extend(b.iter().map(|&c| u16::from(c)));
                true
            }
            Piece::Units(u) if u.len() <= room => {
                units.extend_from_slice(u);
                true
            }
            _ => false,
        }
    });
    (rebuilt && units.len() == text.len()).then_some(units)
}

/// Maps a model span whose inputs were read narrowed (`input`, `output`; `sources` the same
/// texts with their code units, empty for an ASCII one) and writes its attributes, as
/// `map_model_span` does on the usual path; `None` (nothing written) where that would not be
/// exact (module docs): the caller then maps the span the usual way.
pub(crate) fn map_model_span(
    call: &Call,
    rules: Option<&Content>,
    input: Option<&str>,
    output: Option<&str>,
    skip_input: bool,
    sources: &[Source<'_>; 2],
) -> Option<u32> {
    let scrubber = rules.and_then(|r| r.scrubber());
    if !clean(input, scrubber) || !clean(output, scrubber) {
        return None;
    }
    // Clean inputs: scrubbing would change nothing, so none is attached.
    // Every piece holding a placeholder is recorded, however short: a placeholder outside them
    // stops the mapping.
    let record = Some(Recording::Holding(utf::PLACEHOLDER));
    let mut attrs = map_model_recorded(input, output, None, record);
    if attrs.problems & problem::NEEDS_JS != 0 {
        return None;
    }
    if skip_input {
        attrs.input_messages = None;
        attrs.system_instructions = None;
    }
    let traced = |raw: &genkit_for_maple_core::genkit::Raw<'_>| {
        !raw.get().as_bytes().contains(&utf::PLACEHOLDER)
    };
    let raws = attrs.finish_reasons.iter().flatten();
    if !raws
        .chain(attrs.input_tokens.iter())
        .chain(attrs.output_tokens.iter())
        .all(traced)
    {
        return None;
    }
    let scalars = match ModelScalars::of(&attrs) {
        Ok(scalars) => scalars,
        Err(flags) => return Some(flags),
    };
    // Every message attribute rebuilt before anything is written.
    let keys: [&'static CStr; 3] = [
        c"gen_ai.input.messages",
        c"gen_ai.system_instructions",
        c"gen_ai.output.messages",
    ];
    let texts = [
        attrs.input_messages.take(),
        attrs.system_instructions.take(),
        attrs.output_messages.take(),
    ];
    let mut built: [Option<Built>; 3] = [None, None, None];
    for ((text, copies), slot) in texts.into_iter().zip(&attrs.copies).zip(&mut built) {
        let Some(text) = text else { continue };
        *slot = Some(if text.as_bytes().contains(&utf::PLACEHOLDER) {
            Built::Units(rebuild(&text, copies, sources)?)
        } else {
            // No placeholder: the text is the output as it is (ASCII).
            Built::Ascii(text)
        });
    }
    // The rules change nothing of these values (`rules_allow`, clean inputs): written as the
    // usual path writes an unchanged value.
    let mut problems = attrs.problems;
    for (key, value) in keys.into_iter().zip(built) {
        problems |= match value {
            None => 0,
            Some(Built::Ascii(text)) => {
                call.set_string_owned(key, text, super::copies::Pieces::NONE)
            }
            Some(Built::Units(units)) => call.set_units(key, units),
        };
    }
    Some(problems | scalars.write(call))
}

/// A message attribute ready to be written.
enum Built {
    Ascii(String),
    Units(Vec<u16>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` narrowed: one byte a UTF-16 unit, every unit above 0x7F the placeholder.
    fn narrow(text: &str) -> (String, Vec<u16>) {
        let units: Vec<u16> = text.encode_utf16().collect();
        let bytes = units.iter().map(|&u| u.min(0x7F) as u8).collect();
        (String::from_utf8(bytes).expect("ASCII"), units) // ok: a test (cfg(test)); every byte is at most 0x7F
    }

    /// `rebuild` is the check core `Mapper::map_narrowed` relies on (it no longer reads the
    /// copies' bytes itself): every placeholder of the output must lie in a copy whose bytes are
    /// at its address in a source, else no text.
    #[test]
    fn rebuild_gives_the_original_units_or_nothing() {
        let original = "say 東京 and 서울 now";
        let (narrowed, units) = narrow(original);
        let sources = [Source {
            utf8: &narrowed,
            units: &units,
        }];
        let base = narrowed.as_ptr() as usize;
        // The output copies "東京" (units 4..6) and "서울" (11..13) between ASCII of its own.
        let text = format!("[\"{}\",\"{}\"]", &narrowed[4..6], &narrowed[11..13]);
        let copy = |at: usize, from: usize| Copied {
            at,
            src: base + from,
            len: 2,
        };
        let good = [copy(2, 4), copy(7, 11)];
        let expected: Vec<u16> = "[\"東京\",\"서울\"]".encode_utf16().collect();
        assert_eq!(rebuild(&text, &good, &sources), Some(expected));
        // A placeholder outside every copy (a copy not recorded): no text.
        assert_eq!(rebuild(&text, &good[..1], &sources), None);
        // A copy whose address holds other bytes of the same length ("ay"): not a copy of them,
        // so its placeholders are outside every copy.
        assert_eq!(rebuild(&text, &[copy(2, 1), good[1]], &sources), None);
        // Copies out of order, out of bounds or in no source: likewise.
        assert_eq!(rebuild(&text, &[good[1], good[0]], &sources), None);
        assert_eq!(rebuild(&text, &[copy(text.len() - 1, 4)], &sources), None);
        let elsewhere = [Copied {
            src: base + narrowed.len() + 64,
            ..good[0]
        }];
        assert_eq!(rebuild(&text, &elsewhere, &sources), None);
        // No placeholder: the text widened, with or without copies.
        assert_eq!(
            rebuild("[\"ok\"]", &[], &sources),
            Some("[\"ok\"]".encode_utf16().collect())
        );
    }
}
