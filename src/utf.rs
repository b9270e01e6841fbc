//! UTF-16 <-> UTF-8 for the napi boundary.
//!
//! Strings are read from V8 as UTF-16 (`napi_get_value_string_utf16`: a plain copy, whatever the
//! string's internal width, and its length is known up front) and transcoded here; this is faster
//! than `napi_get_value_string_utf8` (which walks the string twice: once for the length, once to
//! write) and it sees lone surrogates, which `napi_get_value_string_utf8` silently replaces.
//! The transcoding is simdutf's (SIMD, the widest the CPU has, chosen at run time): measured 3-10x
//! faster than a hand-written loop or the standard library on multi-byte text (BENCHMARKS.md).
//! Output that is not ASCII is created as UTF-16, from [`utf8_to_utf16`].
//!
//! Memory: every buffer is sized exactly (simdutf's length functions count the output before
//! anything is written) and reserved with `try_reserve_exact`; a failed reservation is
//! [`Utf::OutOfMemory`], never an abort.

/// Why a transcoding did not produce a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Utf {
    /// The UTF-16 input holds a lone surrogate: UTF-8 cannot carry it.
    NotWellFormed,
    /// The output buffer could not be allocated.
    OutOfMemory,
}

/// Transcodes UTF-16 to UTF-8 into `dst` (cleared first; its capacity grows to exactly the UTF-8
/// length when too small). Errors, with `dst` empty: [`Utf::NotWellFormed`] when `src` holds a lone
/// surrogate, [`Utf::OutOfMemory`] when the buffer cannot be allocated.
pub fn utf16_to_utf8(src: &[u16], dst: &mut String) -> Result<(), Utf> {
    dst.clear();
    if src.is_empty() {
        return Ok(());
    }
    if !simdutf::validate_utf16(src) {
        return Err(Utf::NotWellFormed);
    }
    let len = simdutf::utf8_length_from_utf16(src);
    dst.try_reserve_exact(len).map_err(|_| Utf::OutOfMemory)?;
    // SAFETY: the vector is only written through simdutf below and its length is set to what
    // simdutf reports; simdutf writes UTF-8 only, so the `String` invariant holds afterwards.
    let bytes = unsafe { dst.as_mut_vec() };
    // SAFETY: `src` is valid for `src.len()` reads and well-formed UTF-16 (validated above);
    // `bytes` has capacity for `len` bytes, exactly what the conversion writes (simdutf's count for
    // this same input); distinct allocations; both pointers non-null and aligned.
    let written = unsafe {
        simdutf::convert_valid_utf16_to_utf8(src.as_ptr(), src.len(), bytes.as_mut_ptr())
    };
    // SAFETY: simdutf initialised `written` bytes with valid UTF-8; `written <= len <= capacity`
    // (the `min` keeps this sound even if the two functions ever disagreed).
    unsafe { bytes.set_len(written.min(len)) };
    Ok(())
}

/// Transcodes UTF-8 to UTF-16 into `dst` (cleared first; capacity grows to exactly the UTF-16
/// length when too small). [`Utf::OutOfMemory`], with `dst` empty, when it cannot be allocated.
pub fn utf8_to_utf16(src: &str, dst: &mut Vec<u16>) -> Result<(), Utf> {
    dst.clear();
    if src.is_empty() {
        return Ok(());
    }
    let len = simdutf::utf16_length_from_utf8(src.as_bytes());
    dst.try_reserve_exact(len).map_err(|_| Utf::OutOfMemory)?;
    // SAFETY: `src` is valid UTF-8 (a `&str`) readable for `src.len()` bytes; `dst` has capacity for
    // `len` units, exactly what the conversion writes; distinct allocations, non-null, aligned.
    let written =
        unsafe { simdutf::convert_valid_utf8_to_utf16(src.as_ptr(), src.len(), dst.as_mut_ptr()) };
    // SAFETY: simdutf initialised `written` units; `written <= len <= capacity`.
    unsafe { dst.set_len(written.min(len)) };
    Ok(())
}

/// Whether `text` is ASCII (simdutf; SIMD).
pub fn is_ascii(text: &str) -> bool {
    simdutf::validate_ascii(text.as_bytes())
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
            assert_eq!(utf16_to_utf8(&units, &mut utf8), Ok(()));
            assert_eq!(utf8, s);
            let mut back = Vec::new();
            utf8_to_utf16(s, &mut back).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
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
            assert_eq!(utf16_to_utf8(&units, &mut utf8), Ok(()));
            assert_eq!(utf8, s);
            let mut back = Vec::new();
            utf8_to_utf16(&s, &mut back).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
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
            assert_eq!(
                utf16_to_utf8(units, &mut out),
                Err(Utf::NotWellFormed),
                "{units:?}"
            );
            assert!(out.is_empty());
        }
    }
}
