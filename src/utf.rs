//! UTF-16 <-> UTF-8 for the napi boundary.
//!
//! Strings are read from V8 as UTF-16 (`napi_get_value_string_utf16`: a plain copy, whatever the
//! string's internal width, and its length is known up front) and transcoded here; this is faster
//! than `napi_get_value_string_utf8` (which walks the string twice: once for the length, once to
//! write) and it sees lone surrogates, which `napi_get_value_string_utf8` silently replaces.
//! ASCII is copied 16 units at a time; the rest goes one code point at a time.
//! Output that is not ASCII is created as UTF-16, from [`utf8_to_utf16`].

/// Transcodes UTF-16 to UTF-8 into `dst` (cleared first). Returns `false`, with `dst`
/// unspecified, when `src` holds a lone surrogate (not well-formed: no UTF-8 for it).
pub fn utf16_to_utf8(src: &[u16], dst: &mut String) -> bool {
    dst.clear();
    // At most 3 bytes per code unit: no reallocation while writing.
    dst.reserve(src.len() * 3);
    let n = src.len();
    let mut i = 0;
    while i < n {
        // ASCII runs, 16 units at a time (a fixed-size chunk: LLVM vectorises the test and the
        // narrowing).
        while let Some(chunk) = src
            .get(i..i + 16)
            .and_then(|c| <&[u16; 16]>::try_from(c).ok())
        {
            if chunk.iter().fold(0, |a, &u| a | u) >= 0x80 {
                break;
            }
            // SAFETY: every unit of `chunk` is below 0x80, so each byte pushed is ASCII and the
            // string stays valid UTF-8.
            unsafe { dst.as_mut_vec() }.extend(chunk.iter().map(|&u| u as u8));
            i += 16;
        }
        // Then up to 16 units one code point at a time.
        let end = (i + 16).min(n);
        while i < end {
            let u = src[i];
            if u < 0x80 {
                dst.push(char::from(u as u8));
                i += 1;
            } else if u & 0xF800 != 0xD800 {
                // Not a surrogate: always a scalar value.
                let Some(c) = char::from_u32(u32::from(u)) else {
                    return false;
                };
                dst.push(c);
                i += 1;
            } else {
                let low = src.get(i + 1).copied().unwrap_or(0);
                if u >= 0xDC00 || !(0xDC00..0xE000).contains(&low) {
                    return false;
                }
                let c = 0x10000 + ((u32::from(u) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                let Some(c) = char::from_u32(c) else {
                    return false;
                };
                dst.push(c);
                i += 2;
            }
        }
    }
    true
}

/// Transcodes UTF-8 to UTF-16 into `dst` (cleared first). The standard library's
/// `encode_utf16` measured faster on mixed-script text than hand-written fast paths.
pub fn utf8_to_utf16(src: &str, dst: &mut Vec<u16>) {
    dst.clear();
    dst.reserve(src.len());
    dst.extend(src.encode_utf16());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let samples = [
            "",
            "plain ascii text that is longer than eight units",
            "café crème brûlée, Zürich",
            "東京の天気は晴れ 서울의 날씨",
            "emoji 😀🚆👍🏽 mixed with ascii runs of some length and \u{7f}\u{80}\u{7ff}\u{800}\u{ffff}",
            "\u{10ffff}\u{10000}",
        ];
        for s in samples {
            let units: Vec<u16> = s.encode_utf16().collect();
            let mut utf8 = String::new();
            assert!(utf16_to_utf8(&units, &mut utf8));
            assert_eq!(utf8, s);
            let mut back = Vec::new();
            utf8_to_utf16(s, &mut back);
            assert_eq!(back, units);
        }
    }

    #[test]
    fn round_trips_random_mixed_scripts() {
        let pool: Vec<char> = "aZ09 \"\\\n~\u{7f}\u{80}é\u{7ff}\u{800}東語\u{d7ff}\u{e000}\u{fffd}\u{ffff}\u{10000}😀👍🏽\u{10ffff}"
            .chars()
            .collect();
        let mut state = 1u64;
        for len in 0..400 {
            let s: String = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Long ASCII runs now and then, to cross the 16-unit fast path.
                    let r = (state >> 33) as usize;
                    if r % 7 < 3 {
                        'x'
                    } else {
                        pool[r % pool.len()]
                    }
                })
                .collect();
            let units: Vec<u16> = s.encode_utf16().collect();
            let mut utf8 = String::new();
            assert!(utf16_to_utf8(&units, &mut utf8));
            assert_eq!(utf8, s);
            let mut back = Vec::new();
            utf8_to_utf16(&s, &mut back);
            assert_eq!(back, units);
        }
    }

    #[test]
    fn lone_surrogates_are_refused() {
        let mut out = String::new();
        for units in [
            &[0xD800][..],
            &[0x61, 0xDC00, 0x62],
            &[0xD83D, 0x61],
            &[0x61; 9]
                .iter()
                .copied()
                .chain([0xDBFF])
                .collect::<Vec<_>>()[..],
        ] {
            assert!(!utf16_to_utf8(units, &mut out), "{units:?}");
        }
    }
}
