//! UTF-16 <-> UTF-8 for the napi boundary.
//!
//! Strings are read from V8 as UTF-16 (`napi_get_value_string_utf16`: a plain copy, whatever the
//! string's internal width, and its length is known up front) and transcoded here; this is faster
//! than `napi_get_value_string_utf8` (which walks the string twice: once for the length, once to
//! write) and it sees lone surrogates, which `napi_get_value_string_utf8` silently replaces.
//! The transcoding is simdutf's (SIMD, the widest the CPU has, chosen at run time): measured 3-10x
//! faster than a hand-written loop or the standard library on multi-byte text (BENCHMARKS.md).
//! Output that is not ASCII is created as UTF-16, from [`utf8_to_utf16`].

/// Transcodes UTF-16 to UTF-8 into `dst` (cleared first), with simdutf (SIMD, chosen at run time).
/// Returns `false`, with `dst` empty, when `src` holds a lone surrogate (not well-formed: there is
/// no UTF-8 for it).
pub fn utf16_to_utf8(src: &[u16], dst: &mut String) -> bool {
    dst.clear();
    if src.is_empty() {
        return true;
    }
    // At most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units).
    dst.reserve(src.len() * 3);
    // SAFETY: the vector is only written through simdutf below and its length is set to what
    // simdutf reports; simdutf writes UTF-8 only, so the `String` invariant holds afterwards.
    let bytes = unsafe { dst.as_mut_vec() };
    // SAFETY: `src` is valid for `src.len()` reads; `bytes` has capacity for `3 * src.len()` bytes,
    // the most the conversion can write; the two buffers are distinct allocations. Both pointers
    // are non-null and aligned (slices and vectors always are, even when empty).
    let written =
        unsafe { simdutf::convert_utf16_to_utf8(src.as_ptr(), src.len(), bytes.as_mut_ptr()) };
    if written == 0 {
        // simdutf returns 0 for input that is not well-formed UTF-16 (a lone surrogate).
        return false;
    }
    // SAFETY: simdutf initialised `written <= capacity` bytes with valid UTF-8.
    unsafe { bytes.set_len(written) };
    true
}

/// Transcodes UTF-8 to UTF-16 into `dst` (cleared first), with simdutf.
pub fn utf8_to_utf16(src: &str, dst: &mut Vec<u16>) {
    dst.clear();
    if src.is_empty() {
        return;
    }
    // At most one UTF-16 unit per UTF-8 byte.
    dst.reserve(src.len());
    // SAFETY: `src` is valid UTF-8 (a `&str`) readable for `src.len()` bytes; `dst` has capacity for
    // `src.len()` units, the most the conversion can write; distinct allocations, non-null, aligned.
    let written =
        unsafe { simdutf::convert_valid_utf8_to_utf16(src.as_ptr(), src.len(), dst.as_mut_ptr()) };
    // SAFETY: simdutf initialised `written <= capacity` units.
    unsafe { dst.set_len(written) };
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
