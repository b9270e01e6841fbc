//! UTF-16 outputs built from the inputs' own UTF-16 (issue 9: multi-byte text).
//!
//! A model span's message attributes are mostly text copied from `genkit:input` /
//! `genkit:output` as written (each part's JSON string literal, a tool call's arguments). Those
//! strings arrive from V8 as UTF-16 and are transcoded to UTF-8 for the core; a non-ASCII output
//! was transcoded back to UTF-16 for V8, piece by piece the same characters. Here the core's
//! writers record which pieces of an output they copied from which input ([`Copied`],
//! `Out::recording`), and the UTF-16 output is assembled from the input's UTF-16 code units for
//! those pieces (a copy: 0.05 ns a unit) and transcoded only for the rest (the writers' own
//! structure, decoded text: 0.5 ns a unit).
//!
//! Every piece is checked before it is used: it must lie inside one source, start and end on
//! character boundaries of both texts, and its bytes in the output must equal the source's bytes
//! there. Equal UTF-8 bytes at character boundaries are equal characters, whose UTF-16 is the
//! source's code units for that range: so the result is the output's UTF-16 whatever the pieces
//! claim, and a piece that does not pass is transcoded like the rest.

use genkit_for_maple_core::out::Copied;

/// One input the outputs may have copied from: its UTF-8 text (what the core read) and its UTF-16
/// code units as V8 gave them (empty when not kept: an ASCII input, whose pieces are transcoded,
/// which for ASCII is a widening).
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub utf8: &'a str,
    pub units: &'a [u16],
}

impl<'a> Source<'a> {
    /// The two sources of a model span: `genkit:input` and `genkit:output` as read (`None`: not a
    /// string, an empty source) with their kept code units.
    pub fn pair(
        input: Option<&'a str>,
        output: Option<&'a str>,
        input_units: &'a [u16],
        output_units: &'a [u16],
    ) -> [Source<'a>; 2] {
        [
            Source {
                utf8: input.unwrap_or(""),
                units: input_units,
            },
            Source {
                utf8: output.unwrap_or(""),
                units: output_units,
            },
        ]
    }

    /// The byte range of this source that `copy` was copied from, when its whole address range
    /// lies in it (no check of the bytes themselves).
    pub fn range_of(&self, copy: &Copied) -> Option<std::ops::Range<usize>> {
        let from = copy.src.checked_sub(self.utf8.as_ptr() as usize)?;
        let to = from.checked_add(copy.len)?;
        (to <= self.utf8.len()).then_some(from..to)
    }
}

/// An output's recorded pieces and the sources they may come from: what [`utf16_of`] needs.
#[derive(Clone, Copy)]
pub(crate) struct Pieces<'a> {
    pub copies: &'a [Copied],
    pub sources: &'a [Source<'a>],
}

impl Pieces<'_> {
    /// No pieces: the output is transcoded whole.
    pub const NONE: Pieces<'static> = Pieces {
        copies: &[],
        sources: &[],
    };

    /// Whether there is any piece the output could take from a source's code units.
    pub fn any(&self) -> bool {
        !self.copies.is_empty() && self.sources.iter().any(|s| !s.units.is_empty())
    }
}

/// Where a source's UTF-8 byte offset is in code units: the last offset converted, from which the
/// next one is counted forward (pieces come in source order within one output).
#[derive(Clone, Copy, Default)]
struct Cursor {
    byte: usize,
    unit: usize,
}

/// Counting the code units of a source prefix again after a backward jump is bounded to this many
/// times the source's length per output; past it, the rest of the output is transcoded.
const RECOUNT_FACTOR: usize = 4;

/// Writes the UTF-16 code units of `text` into `out` (cleared; reserved fallibly: `exact`, to
/// the count of units, for a buffer V8 keeps; otherwise one unit a byte, the most it can take,
/// for a reused buffer), using the sources' code units for the `copies` that check out (module
/// docs) and transcoding the rest. `false` when `out` could not be reserved (nothing written).
pub(crate) fn utf16_of(
    text: &str,
    copies: &[Copied],
    sources: &[Source<'_>],
    out: &mut Vec<u16>,
    exact: bool,
) -> bool {
    out.clear();
    let room = if exact { units_in(text) } else { text.len() };
    if out.try_reserve_exact(room).is_err() {
        return false;
    }
    let mut cursors = [Cursor::default(); 2];
    let mut recounted = 0usize;
    let budget = sources
        .iter()
        .map(|s| s.utf8.len())
        .sum::<usize>()
        .saturating_mul(RECOUNT_FACTOR);
    let mut done = 0usize; // bytes of `text` written to `out`
    for copy in copies {
        let Some((i, source, from)) = check(text, copy, sources, done) else {
            continue;
        };
        if source.units.is_empty() {
            continue;
        }
        let cursor = &mut cursors[i.min(1)];
        if from < cursor.byte {
            recounted += from;
            if recounted > budget {
                break;
            }
            *cursor = Cursor::default();
        }
        let unit = cursor.unit + units_in(&source.utf8[cursor.byte..from]);
        let n = units_in(&source.utf8[from..from + copy.len]);
        let Some(piece) = source.units.get(unit..unit + n) else {
            continue;
        };
        *cursor = Cursor {
            byte: from + copy.len,
            unit: unit + n,
        };
        push_transcoded(out, &text[done..copy.at]);
        push_units(out, piece);
        done = copy.at + copy.len;
    }
    push_transcoded(out, &text[done..]);
    true
}

/// The source a piece comes from (its index and the piece's byte offset in it), when it passes
/// the checks of the module docs and starts at or after `done` in `text`.
fn check<'s>(
    text: &str,
    copy: &Copied,
    sources: &[Source<'s>],
    done: usize,
) -> Option<(usize, Source<'s>, usize)> {
    let end = copy.at.checked_add(copy.len)?;
    if copy.at < done || end > text.len() || copy.len == 0 {
        return None;
    }
    let (i, source, range) = sources
        .iter()
        .enumerate()
        .find_map(|(i, s)| Some((i, s, s.range_of(copy)?)))?;
    let (from, to) = (range.start, range.end);
    if !source.utf8.is_char_boundary(from)
        || !source.utf8.is_char_boundary(to)
        || !text.is_char_boundary(copy.at)
        || !text.is_char_boundary(end)
        || text.as_bytes()[copy.at..end] != source.utf8.as_bytes()[from..to]
    {
        return None;
    }
    Some((i, *source, from))
}

/// UTF-16 code units of `s` (simdutf's count, several GB/s).
fn units_in(s: &str) -> usize {
    simdutf::utf16_length_from_utf8(s.as_bytes())
}

/// Appends the UTF-16 of `s` (room reserved by the caller: at least the whole output's count).
fn push_transcoded(out: &mut Vec<u16>, s: &str) {
    if s.is_empty() {
        return;
    }
    // A byte makes at most one unit: with that much room, no count is needed.
    let room = out.capacity() - out.len();
    let n = if room >= s.len() {
        s.len()
    } else {
        units_in(s)
    };
    if room < n {
        // Not reached (the whole output's count was reserved); a growing append if it were.
        out.extend(s.encode_utf16());
        return;
    }
    // SAFETY: `s` is valid UTF-8 (a `&str`); the spare capacity holds at least `n` units, at
    // least what converting `s` writes; `out`'s buffer and `s` are distinct allocations.
    let written = unsafe { crate::utf::convert_utf8_to_utf16(s, out.as_mut_ptr().add(out.len())) };
    // SAFETY: simdutf initialised `written` units after the length; `min(n)` keeps it within
    // the spare capacity checked above.
    unsafe { out.set_len(out.len() + written.min(n)) };
}

/// Appends `units` (room reserved by the caller).
fn push_units(out: &mut Vec<u16>, units: &[u16]) {
    out.extend_from_slice(units);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    /// Every claim, right or wrong, gives the output's own UTF-16.
    #[test]
    fn any_pieces_give_the_outputs_utf16() {
        let input = r#"{"messages":[{"content":[{"text":"東京の天気は晴れ 😀 café"}]},{"content":[{"text":"second 서울 text"}]}]}"#;
        let input16 = units(input);
        let a = input.find("\"東京").unwrap(); // ok: a test (cfg(test)); the needle is in the literal above
        let a_end = input[a..].find("\"}").unwrap() + a + 1; // ok: a test (cfg(test)); the needle is in the literal above
        let b = input.find("\"second").unwrap(); // ok: a test (cfg(test)); the needle is in the literal above
        let b_end = input[b..].find("\"}").unwrap() + b + 1; // ok: a test (cfg(test)); the needle is in the literal above
        let text = format!(
            r#"[{{"parts":[{{"content":{}}}]}},{{"parts":[{{"content":{}}}]}}]"#,
            &input[a..a_end],
            &input[b..b_end]
        );
        let at_a = text.find("\"東京").unwrap(); // ok: a test (cfg(test)); the needle is in the literal above
        let at_b = text.find("\"second").unwrap(); // ok: a test (cfg(test)); the needle is in the literal above
        let base = input.as_ptr() as usize;
        let good = [
            Copied {
                at: at_a,
                src: base + a,
                len: a_end - a,
            },
            Copied {
                at: at_b,
                src: base + b,
                len: b_end - b,
            },
        ];
        let sources = [Source {
            utf8: input,
            units: &input16,
        }];
        let expected = units(&text);
        let mut out = vec![1, 2, 3];
        assert!(utf16_of(&text, &good, &sources, &mut out, true));
        assert_eq!(out, expected);
        // Wrong claims: off by one byte (inside a character), another range, out of bounds,
        // backwards, overlapping, a source that is not one: the same result.
        let bad_sets: Vec<Vec<Copied>> = vec![
            vec![Copied {
                src: good[0].src + 1,
                ..good[0]
            }],
            vec![Copied {
                at: good[0].at + 1,
                ..good[0]
            }],
            vec![Copied {
                src: base + b,
                ..good[0]
            }],
            vec![Copied {
                len: usize::MAX,
                ..good[0]
            }],
            vec![Copied {
                at: text.len(),
                ..good[0]
            }],
            vec![good[1], good[0]],
            vec![good[0], good[0]],
            vec![Copied { src: 8, ..good[0] }],
            vec![Copied { len: 0, ..good[0] }],
        ];
        for bad in bad_sets {
            assert!(utf16_of(&text, &bad, &sources, &mut out, false));
            assert_eq!(out, expected, "{bad:?}");
        }
        // Without the source's units (an ASCII source is not kept): transcoded.
        let bare = [Source {
            utf8: input,
            units: &[],
        }];
        assert!(utf16_of(&text, &good, &bare, &mut out, false));
        assert_eq!(out, expected);
    }

    /// Pieces in reverse source order (a backward jump recounts from the start) and two sources.
    #[test]
    fn backward_pieces_and_two_sources() {
        let one = "é".repeat(50) + &"x".repeat(50) + &"日".repeat(50);
        let two = "😀".repeat(40);
        let (one16, two16) = (units(&one), units(&two));
        let p1 = &one[100..249]; // the 50 x and 33 日
        let p0 = &one[..60];
        let text = format!("[{p1},{},{p0}]", &two[..80]);
        let base1 = one.as_ptr() as usize;
        let base2 = two.as_ptr() as usize;
        let copies = [
            Copied {
                at: 1,
                src: p1.as_ptr() as usize,
                len: p1.len(),
            },
            Copied {
                at: 2 + p1.len(),
                src: base2,
                len: 80,
            },
            Copied {
                at: 3 + p1.len() + 80,
                src: base1,
                len: p0.len(),
            },
        ];
        let sources = [
            Source {
                utf8: &one,
                units: &one16,
            },
            Source {
                utf8: &two,
                units: &two16,
            },
        ];
        let mut out = Vec::new();
        assert!(utf16_of(&text, &copies, &sources, &mut out, true));
        assert_eq!(out, units(&text));
    }
}
