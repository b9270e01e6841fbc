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
//! Memory: every buffer is reserved with `try_reserve_exact`, sized exactly (simdutf's length
//! functions count the output before anything is written) or, for the processor's reused
//! per-thread buffers, to the worst case (3 bytes a UTF-16 unit, one unit a UTF-8 byte), which
//! spares the counting passes: address space, of which only what is written is touched; where
//! the worst case cannot be had, the exact size. A failed reservation is
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

/// The longest input (UTF-16 code units, or UTF-8 bytes) the one-pass functions convert in one
/// pass: the processor's hand-off size (16 Mi units), so every string it copies. Their worst-case
/// reservation (3 bytes a unit, up to 48 MiB) is address space: only the pages the conversion
/// writes are touched, the same as with an exact size.
pub const ONE_PASS_UNITS: usize = 16 << 20;

/// [`utf16_to_utf8`] for a buffer that is reused from call to call (the processor's per-thread
/// input buffers): validates and converts in one pass (simdutf's `convert_utf16_to_utf8_with_errors`)
/// into a buffer of the worst-case size, 3 bytes a code unit (reserved fallibly; kept by the caller
/// for the next span), instead of a validation pass, a length pass and the conversion. Inputs
/// longer than [`ONE_PASS_UNITS`], or whose worst-case reservation fails (an address-space limit),
/// take the exact size of [`utf16_to_utf8`]. Same errors, `dst` empty on error.
pub fn utf16_to_utf8_in_one_pass(src: &[u16], dst: &mut String) -> Result<(), Utf> {
    one_pass_utf16_to_utf8(src, dst, ONE_PASS_UNITS)
}

fn one_pass_utf16_to_utf8(src: &[u16], dst: &mut String, limit: usize) -> Result<(), Utf> {
    dst.clear();
    // A code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4).
    let worst = src.len().saturating_mul(3);
    if src.is_empty() || src.len() > limit || dst.try_reserve_exact(worst).is_err() {
        return utf16_to_utf8(src, dst);
    }
    // SAFETY: the vector is only written through simdutf below and its length is set only after a
    // successful conversion, to what simdutf reports: valid UTF-8, so the `String` invariant holds.
    let bytes = unsafe { dst.as_mut_vec() };
    // SAFETY: `src` is valid for `src.len()` reads; `bytes` has capacity for `worst` bytes, at
    // least what converting any `src.len()` code units can write: 3 bytes a unit at most, on
    // success and up to an error alike. The crate documents room for the successful output only;
    // the error case is this version's behaviour (simdutf 0.7.0, pinned in Cargo.toml), read in its
    // vendored C++ (7.7.1): a lone surrogate is refused before anything is written for it, the
    // haswell and westmere loops run only while 28 or more units remain and store at most 52 bytes
    // past the output pointer (inside the 3-a-unit room left), icelake stores are masked, the
    // scalar code writes exactly; checked with a guard page after each buffer and AddressSanitizer
    // over simdutf's C++ on the haswell, westmere and fallback kernels (3.4 M cases each).
    // Distinct allocations; both pointers non-null and aligned.
    let result = unsafe {
        simdutf::convert_utf16_to_utf8_with_errors(src.as_ptr(), src.len(), bytes.as_mut_ptr())
    };
    if result.error != simdutf::ErrorCode::Success {
        return Err(Utf::NotWellFormed);
    }
    // SAFETY: on success simdutf initialised `count` bytes with valid UTF-8 (`count` is the bytes
    // written, at most `worst`, within the capacity).
    unsafe { bytes.set_len(result.count.min(bytes.capacity())) };
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
    let written = unsafe { convert_utf8_to_utf16(src, dst.as_mut_ptr()) };
    // SAFETY: simdutf initialised `written` units; `written <= len <= capacity`.
    unsafe { dst.set_len(written.min(len)) };
    Ok(())
}

/// [`utf8_to_utf16`] for a buffer that is reused from call to call (the processor's per-thread
/// UTF-16 buffer): converts in one pass into a buffer of the worst-case size, one code unit a byte
/// (reserved fallibly), instead of a length pass and the conversion. Inputs longer than
/// [`ONE_PASS_UNITS`] bytes, or whose worst-case reservation fails, take the exact size of
/// [`utf8_to_utf16`]. [`Utf::OutOfMemory`], with `dst` empty, when even that cannot be allocated.
pub fn utf8_to_utf16_in_one_pass(src: &str, dst: &mut Vec<u16>) -> Result<(), Utf> {
    one_pass_utf8_to_utf16(src, dst, ONE_PASS_UNITS)
}

fn one_pass_utf8_to_utf16(src: &str, dst: &mut Vec<u16>, limit: usize) -> Result<(), Utf> {
    dst.clear();
    // A character of n bytes is one code unit (n <= 3) or two (n = 4): never more units than bytes.
    if src.is_empty() || src.len() > limit || dst.try_reserve_exact(src.len()).is_err() {
        return utf8_to_utf16(src, dst);
    }
    // SAFETY: `src` is valid UTF-8 (a `&str`) readable for `src.len()` bytes; `dst` has capacity
    // for `src.len()` units, at least what the conversion writes; distinct allocations, non-null,
    // aligned.
    let written = unsafe { convert_utf8_to_utf16(src, dst.as_mut_ptr()) };
    // SAFETY: simdutf initialised `written` units; `min` keeps the length within the capacity.
    unsafe { dst.set_len(written.min(dst.capacity())) };
    Ok(())
}

/// Converts `src` to UTF-16 at `dst`; returns the code units written. simdutf's validating
/// conversion, although `src` is valid: on AVX-512 CPUs its kernel ran 2.4x faster than the one
/// for input known to be valid (`convert_valid_utf8_to_utf16`: 1.12 against 0.47 ms for 1 M code
/// units of mixed CJK, emoji and Latin text, BENCHMARKS.md "Stop 28"), and the result is the same.
/// Should it ever answer 0 for a non-empty text (it does for invalid UTF-8, which a `&str` is not),
/// the valid-input conversion runs.
///
/// # Safety
/// `dst` must be valid for writing `simdutf::utf16_length_from_utf8(src)` code units (or more)
/// and must not overlap `src`.
pub(crate) unsafe fn convert_utf8_to_utf16(src: &str, dst: *mut u16) -> usize {
    // SAFETY: `src` is readable for `src.len()` bytes; `dst` has room for the result (the
    // caller's contract); they do not overlap.
    let written = unsafe { simdutf::convert_utf8_to_utf16(src.as_ptr(), src.len(), dst) };
    if written > 0 || src.is_empty() {
        return written;
    }
    // SAFETY: as above; `src` is valid UTF-8 (a `&str`).
    unsafe { simdutf::convert_valid_utf8_to_utf16(src.as_ptr(), src.len(), dst) }
}

/// The byte a code unit above 0x7F becomes in a narrowed text ([`narrow`]): DEL, which no JSON
/// structure, no number and no secret needle holds, and which JSON allows unescaped in strings.
pub const PLACEHOLDER: u8 = 0x7F;

/// Narrows UTF-16 to one byte a code unit into `dst` (cleared first; reserved fallibly to one
/// byte a unit): ASCII units as they are, every other unit as [`PLACEHOLDER`]. The result is
/// ASCII, so valid UTF-8, and its byte offsets are the code-unit offsets of `src`: JSON keeps its
/// structure and its string literals their extent (a surrogate pair is two placeholders), which
/// is all the model mapping reads of the text (`src/narrow.rs`). Errors, with `dst` empty:
/// [`Utf::NotWellFormed`] when `src` holds a lone surrogate (as [`utf16_to_utf8`], so that the
/// span takes the same way), [`Utf::OutOfMemory`].
///
/// One pass over `src` both narrows and checks it: UTF-16 is well-formed exactly when every unit
/// is a low surrogate where the one before it is a high surrogate and nowhere else, the first is
/// not a low one and the last not a high one (Unicode, section 3.9, D91: no lone surrogate). A
/// separate validation (simdutf's) read the units once more: 10% of a 5 MB multi-byte span's time.
pub fn narrow(src: &[u16], dst: &mut String) -> Result<(), Utf> {
    dst.clear();
    dst.try_reserve_exact(src.len())
        .map_err(|_| Utf::OutOfMemory)?;
    // SAFETY: only ASCII bytes are written below, so the `String` stays valid UTF-8 (and it is
    // cleared again when the text turns out not to be well-formed).
    let bytes = unsafe { dst.as_mut_vec() };
    let out = &mut bytes.spare_capacity_mut()[..src.len()];
    let (Some(&first), Some(&last)) = (src.first(), src.last()) else {
        return Ok(());
    };
    // `min(0x7F)`: ASCII as it is, everything above 0x7E as 0x7F, the placeholder (and DEL itself).
    const _: () = assert!(PLACEHOLDER == 0x7F);
    if let Some(to) = out.first_mut() {
        to.write(first.min(0x7F) as u8);
    }
    let mut lone = u8::from(is_low_surrogate(first)) | u8::from(is_high_surrogate(last));
    // Units 1.. in blocks by SIMD where the CPU has it, the rest one by one.
    let (from, lone_in_blocks) = narrow_blocks(src, out);
    lone |= u8::from(lone_in_blocks);
    // Each unit with the one before it: a plain loop over three slices of one length; the
    // verdict is ORed, not branched on.
    let rest = out.get_mut(from..).unwrap_or_default();
    let units = src.get(from..).unwrap_or_default();
    let before = src.get(from.saturating_sub(1)..).unwrap_or_default();
    for ((to, &u), &before) in rest.iter_mut().zip(units).zip(before) {
        to.write(u.min(0x7F) as u8);
        lone |= u8::from(is_low_surrogate(u) != is_high_surrogate(before));
    }
    if lone != 0 {
        return Err(Utf::NotWellFormed);
    }
    // SAFETY: the writes above initialised the first `src.len()` bytes, within the capacity
    // reserved: byte 0 directly, bytes `1..from` by `narrow_blocks` (it writes exactly those, with
    // `1 <= from <= src.len()` for a non-empty `src`), bytes `from..src.len()` by the loop.
    unsafe { bytes.set_len(src.len()) };
    Ok(())
}

/// [`narrow`]'s blocks: narrows units `1..k` of `src` into `out` (`out.len() == src.len()`;
/// units `k..` are left to the caller) and tells whether any of them is a lone surrogate by the
/// rule `narrow` states (a low surrogate exactly where the unit before is a high one). Returns
/// `(k, lone)`, `k >= 1`. On x86_64 by AVX2 when the CPU has it (32 units a step), else SSE2
/// (16 units; the x86_64 baseline); elsewhere none (`k = 1`). The compiler's vectorisation of
/// the scalar loop took 2.4 instructions a unit (SSE2 lacks the unsigned 16-bit minimum it
/// used): more than simdutf's whole transcoding of ASCII (BENCHMARKS.md "Stop 37").
fn narrow_blocks(src: &[u16], out: &mut [std::mem::MaybeUninit<u8>]) -> (usize, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above). `enable = "avx2"` also enables
            // what AVX2 implies (AVX, SSE3, SSSE3, SSE4.1, SSE4.2): every CPU that reports AVX2
            // has them all, so the check covers every feature the function is compiled for.
            return unsafe { narrow_blocks_avx2(src, out) };
        }
        // SAFETY: SSE2 is part of the x86_64 baseline: every CPU this code runs on has it.
        unsafe { narrow_blocks_sse2(src, out) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, out);
        (1, false)
    }
}

/// [`narrow_blocks`] by SSE2, 16 units a step: for each 8 units `u` and the 8 before them by one
/// `p` (an unaligned load one unit back), `lone |= (u & 0xFC00 == 0xDC00) ^ (p & 0xFC00 ==
/// 0xD800)`; the narrowed unit is `min(u, 0x7F)`, computed as `u - saturating_sub(u, 0x7F)` (SSE2
/// has no unsigned 16-bit minimum), at most 0x7F, so the signed-to-unsigned saturating pack of two
/// such vectors is their 16 bytes in order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn narrow_blocks_sse2(src: &[u16], out: &mut [std::mem::MaybeUninit<u8>]) -> (usize, bool) {
    use std::arch::x86_64::*;
    let n = src.len().min(out.len());
    let (at, to) = (src.as_ptr(), out.as_mut_ptr().cast::<u8>());
    let surrogate_bits = _mm_set1_epi16(0xFC00u16 as i16);
    let high = _mm_set1_epi16(0xD800u16 as i16);
    let low = _mm_set1_epi16(0xDC00u16 as i16);
    let top = _mm_set1_epi16(0x7F);
    let mut lone = _mm_setzero_si128();
    let mut i = 1;
    while i + 16 <= n {
        // SAFETY: `1 <= i` and `i + 16 <= n <= src.len()`: units `i - 1 .. i + 16` are in `src`
        // (the loads read `i - 1 .. i + 7`, `i .. i + 8`, `i + 7 .. i + 15`, `i + 8 .. i + 16`);
        // `loadu` needs no alignment.
        let (a, b, before_a, before_b) = unsafe {
            (
                _mm_loadu_si128(at.add(i).cast()),
                _mm_loadu_si128(at.add(i + 8).cast()),
                _mm_loadu_si128(at.add(i - 1).cast()),
                _mm_loadu_si128(at.add(i + 7).cast()),
            )
        };
        let lone_a = _mm_xor_si128(
            _mm_cmpeq_epi16(_mm_and_si128(a, surrogate_bits), low),
            _mm_cmpeq_epi16(_mm_and_si128(before_a, surrogate_bits), high),
        );
        let lone_b = _mm_xor_si128(
            _mm_cmpeq_epi16(_mm_and_si128(b, surrogate_bits), low),
            _mm_cmpeq_epi16(_mm_and_si128(before_b, surrogate_bits), high),
        );
        lone = _mm_or_si128(lone, _mm_or_si128(lone_a, lone_b));
        let narrow_a = _mm_sub_epi16(a, _mm_subs_epu16(a, top));
        let narrow_b = _mm_sub_epi16(b, _mm_subs_epu16(b, top));
        // SAFETY: bytes `i .. i + 16` are in `out` (`i + 16 <= n <= out.len()`); `storeu` needs no
        // alignment, and writing initialised bytes through the pointer is what `MaybeUninit` allows.
        unsafe { _mm_storeu_si128(to.add(i).cast(), _mm_packus_epi16(narrow_a, narrow_b)) };
        i += 16;
    }
    (i, _mm_movemask_epi8(lone) != 0)
}

/// [`narrow_blocks_sse2`] by AVX2, 32 units a step; the unsigned minimum is AVX2's own, and the
/// pack, which works within each 128-bit half (`a0-7 b0-7 a8-15 b8-15` as 64-bit quarters), is put
/// in order by a permutation of the quarters (0, 2, 1, 3).
/// Callers must know the CPU has AVX2 (calling it is `unsafe` for that reason alone).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn narrow_blocks_avx2(src: &[u16], out: &mut [std::mem::MaybeUninit<u8>]) -> (usize, bool) {
    use std::arch::x86_64::*;
    let n = src.len().min(out.len());
    let (at, to) = (src.as_ptr(), out.as_mut_ptr().cast::<u8>());
    let surrogate_bits = _mm256_set1_epi16(0xFC00u16 as i16);
    let high = _mm256_set1_epi16(0xD800u16 as i16);
    let low = _mm256_set1_epi16(0xDC00u16 as i16);
    let top = _mm256_set1_epi16(0x7F);
    let mut lone = _mm256_setzero_si256();
    let mut i = 1;
    while i + 32 <= n {
        // SAFETY: `1 <= i` and `i + 32 <= n <= src.len()`: units `i - 1 .. i + 32` are in `src`
        // (the loads read `i - 1 .. i + 15`, `i .. i + 16`, `i + 15 .. i + 31`, `i + 16 .. i + 32`);
        // `loadu` needs no alignment; AVX2 is enabled for this function, which only callers that
        // checked the CPU call.
        let (a, b, before_a, before_b) = unsafe {
            (
                _mm256_loadu_si256(at.add(i).cast()),
                _mm256_loadu_si256(at.add(i + 16).cast()),
                _mm256_loadu_si256(at.add(i - 1).cast()),
                _mm256_loadu_si256(at.add(i + 15).cast()),
            )
        };
        let lone_a = _mm256_xor_si256(
            _mm256_cmpeq_epi16(_mm256_and_si256(a, surrogate_bits), low),
            _mm256_cmpeq_epi16(_mm256_and_si256(before_a, surrogate_bits), high),
        );
        let lone_b = _mm256_xor_si256(
            _mm256_cmpeq_epi16(_mm256_and_si256(b, surrogate_bits), low),
            _mm256_cmpeq_epi16(_mm256_and_si256(before_b, surrogate_bits), high),
        );
        lone = _mm256_or_si256(lone, _mm256_or_si256(lone_a, lone_b));
        let packed = _mm256_packus_epi16(_mm256_min_epu16(a, top), _mm256_min_epu16(b, top));
        let ordered = _mm256_permute4x64_epi64::<0b11_01_10_00>(packed);
        // SAFETY: bytes `i .. i + 32` are in `out` (`i + 32 <= n <= out.len()`); `storeu` needs no
        // alignment, and writing initialised bytes through the pointer is what `MaybeUninit` allows.
        unsafe { _mm256_storeu_si256(to.add(i).cast(), ordered) };
        i += 32;
    }
    (i, _mm256_movemask_epi8(lone) != 0)
}

/// A high (leading) surrogate, U+D800-U+DBFF.
fn is_high_surrogate(u: u16) -> bool {
    u & 0xFC00 == 0xD800
}

/// A low (trailing) surrogate, U+DC00-U+DFFF.
fn is_low_surrogate(u: u16) -> bool {
    u & 0xFC00 == 0xDC00
}

/// Whether every code unit of `units` is ASCII (below 0x80). An OR over blocks of 32 units, which
/// the compiler vectorises: `iter().all(..)` stops at each unit and ran one unit a step (4
/// instructions a unit: about 60k instructions on a 10 KB ASCII `genkit:input`, read twice).
pub fn is_ascii_units(units: &[u16]) -> bool {
    let mut blocks = units.chunks_exact(32);
    for block in &mut blocks {
        if block.iter().fold(0u16, |acc, &u| acc | u) >= 0x80 {
            return false;
        }
    }
    blocks.remainder().iter().all(|&u| u < 0x80)
}

/// Whether `text` is ASCII (simdutf; SIMD).
pub fn is_ascii(text: &str) -> bool {
    simdutf::validate_ascii(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both directions, exact and one-pass, into buffers that held something before (as the
    /// processor's reused buffers do): the same text and code units every time.
    fn check_round_trip(s: &str, units: &[u16]) {
        let mut utf8 = String::from("left over from the span before");
        assert_eq!(utf16_to_utf8(units, &mut utf8), Ok(()));
        assert_eq!(utf8, s);
        let mut reused = String::from("left over from the span before, much longer than the text");
        assert_eq!(utf16_to_utf8_in_one_pass(units, &mut reused), Ok(()));
        assert_eq!(reused, s);
        let mut back = vec![7u16; 3];
        utf8_to_utf16(s, &mut back).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
        assert_eq!(back, units);
        let mut back = vec![7u16; 100];
        utf8_to_utf16_in_one_pass(s, &mut back).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
        assert_eq!(back, units);
    }

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
            check_round_trip(s, &units);
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
            check_round_trip(&s, &units);
        }
    }

    /// The fused check against simdutf's validation: every sequence of up to 5 units over
    /// ASCII, DEL, a two-byte letter, both ends of both surrogate ranges and the units just
    /// outside them; then long random texts with pairs and lone surrogates at every offset
    /// around the compiler's vector widths. A narrowed text is the units' `min(0x7F)`.
    #[test]
    fn narrowing_checks_what_simdutf_checks() {
        const ALPHABET: [u16; 9] = [
            0x41, 0x7F, 0xE9, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000,
        ];
        let check = |units: &[u16]| {
            let mut out = String::from("left over");
            let got = narrow(units, &mut out);
            let valid = simdutf::validate_utf16(units);
            assert_eq!(got.is_ok(), valid, "{units:04x?}");
            if valid {
                let want: Vec<u8> = units.iter().map(|&u| u.min(0x7F) as u8).collect();
                assert_eq!(out.as_bytes(), want, "{units:04x?}");
            } else {
                assert!(out.is_empty(), "{units:04x?}");
            }
        };
        let mut units = Vec::new();
        for len in 0..=5u32 {
            for code in 0..ALPHABET.len().pow(len) {
                units.clear();
                let mut c = code;
                for _ in 0..len {
                    units.push(ALPHABET[c % ALPHABET.len()]);
                    c /= ALPHABET.len();
                }
                check(&units);
            }
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..300usize {
            for _ in 0..20 {
                units.clear();
                while units.len() < len {
                    match next() % 10 {
                        0 => units.extend([0xD83D, 0xDE00]),
                        1 => units.push(0x6771),
                        _ => units.push(0x61),
                    }
                }
                units.truncate(len);
                check(&units);
                if len > 0 {
                    let at = (next() % len as u64) as usize;
                    let lone = [0xD800, 0xDBFF, 0xDC00, 0xDFFF][(next() % 4) as usize];
                    let kept = units[at];
                    units[at] = lone;
                    check(&units);
                    units[at] = kept;
                }
            }
        }
    }

    /// Each block kernel on its own against the rule unit by unit: every length up to 100 units
    /// (three AVX2 steps and the tails), over ASCII, DEL, a two-byte letter and 0xFFFF, with each
    /// end of both surrogate ranges, a pair, a reversed pair and 0xD7FF/0xE000 planted at every
    /// offset (so across every block edge and at the unit each block reads one back).
    #[test]
    fn narrowing_blocks_agree_with_the_rule_unit_by_unit() {
        type Kernel = fn(&[u16], &mut [std::mem::MaybeUninit<u8>]) -> (usize, bool);
        let mut kernels: Vec<(&str, Kernel)> = vec![("dispatch", narrow_blocks)];
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            kernels.push(("sse2", |s, o| unsafe { narrow_blocks_sse2(s, o) }));
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: pushed only when the CPU has AVX2.
                kernels.push(("avx2", |s, o| unsafe { narrow_blocks_avx2(s, o) }));
            }
        }
        let plants: [&[u16]; 9] = [
            &[0xD800],
            &[0xDBFF],
            &[0xDC00],
            &[0xDFFF],
            &[0xD83D, 0xDE00],
            &[0xDE00, 0xD83D],
            &[0xD7FF],
            &[0xE000],
            &[0xDBFF, 0xDFFF],
        ];
        let mut checked = 0usize;
        for fill in [0x61u16, 0x7F, 0xE9, 0xFFFF] {
            for len in 0..=100usize {
                for plant in plants {
                    for at in 0..=len.saturating_sub(plant.len()) {
                        let mut units = vec![fill; len];
                        for (k, &p) in plant.iter().enumerate() {
                            if let Some(u) = units.get_mut(at + k) {
                                *u = p;
                            }
                        }
                        for (name, kernel) in &kernels {
                            let mut out = vec![std::mem::MaybeUninit::new(0xAAu8); len];
                            let (end, lone) = kernel(&units, &mut out);
                            assert!(end >= 1 && end <= len.max(1), "{name} {len} {end}");
                            let mut want_lone = false;
                            for j in 1..end {
                                // SAFETY: the kernel wrote bytes `1..end` (checked here), and every
                                // byte was initialised (0xAA) before.
                                let got = unsafe { out[j].assume_init() };
                                assert_eq!(
                                    got,
                                    units[j].min(0x7F) as u8,
                                    "{name} {units:04x?} {j}"
                                );
                                want_lone |=
                                    is_low_surrogate(units[j]) != is_high_surrogate(units[j - 1]);
                            }
                            assert_eq!(lone, want_lone, "{name} {units:04x?} {end}");
                            // Byte 0 and bytes `end..` are the caller's: left as they were.
                            for j in (0..1.min(len)).chain(end..len) {
                                // SAFETY: every byte was initialised (0xAA) before the kernel ran.
                                let got = unsafe { out[j].assume_init() };
                                assert_eq!(got, 0xAA, "{name} {len} {end} byte {j} written");
                            }
                            // A kernel leaves less than one step to the scalar loop (AVX2 32
                            // units, SSE2 16; the dispatcher whichever it chose).
                            let step = match *name {
                                "sse2" => 16,
                                _ => 32,
                            };
                            assert!(len.saturating_sub(end) < step, "{name} {len} {end}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 40_000, "{checked}");
    }

    #[test]
    fn narrowing_keeps_offsets_and_ascii() {
        let s = "a\u{7f}é東😀\"\\z";
        let units: Vec<u16> = s.encode_utf16().collect();
        let mut out = String::from("left over");
        narrow(&units, &mut out).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
        assert_eq!(out.len(), units.len());
        assert_eq!(out.as_bytes(), b"a\x7f\x7f\x7f\x7f\x7f\"\\z");
        assert_eq!(narrow(&[0x61, 0xD800], &mut out), Err(Utf::NotWellFormed));
        assert!(out.is_empty());
    }

    #[test]
    fn ascii_units_at_every_position_and_length() {
        for len in [0usize, 1, 31, 32, 33, 63, 64, 65, 100] {
            let ascii: Vec<u16> = (0..len).map(|i| (i % 0x80) as u16).collect();
            assert!(is_ascii_units(&ascii), "{len}");
            for at in 0..len {
                for unit in [0x80u16, 0xFF, 0x100, 0x7FF, 0xD800, 0xFFFF] {
                    let mut units = ascii.clone();
                    units[at] = unit;
                    assert!(!is_ascii_units(&units), "{len} {at} {unit:#x}");
                }
            }
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
            out.push_str("left over");
            assert_eq!(
                utf16_to_utf8_in_one_pass(units, &mut out),
                Err(Utf::NotWellFormed),
                "{units:?}"
            );
            assert!(out.is_empty());
        }
    }

    /// Around the one-pass limit (a small one here; [`ONE_PASS_UNITS`] in use), where the one-pass
    /// functions hand over to the exact ones: the same results, and the one-pass reservation is at
    /// most 3 bytes (UTF-8) or one unit (UTF-16) per unit or byte of input.
    #[test]
    fn one_pass_and_exact_agree_around_the_limit() {
        const LIMIT: usize = 64;
        for len in [LIMIT - 1, LIMIT, LIMIT + 1] {
            // Every width of UTF-8, a surrogate pair last.
            let mut s: String = "aé東".chars().cycle().take(len - 2).collect();
            s.push('😀');
            let units: Vec<u16> = s.encode_utf16().collect();
            check_round_trip(&s, &units);
            let mut reused = String::new();
            one_pass_utf16_to_utf8(&units, &mut reused, LIMIT).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
            assert_eq!(reused, s);
            assert!(reused.capacity() <= 3 * units.len().max(s.len()), "{len}");
            let mut wide = Vec::new();
            one_pass_utf8_to_utf16(&s, &mut wide, LIMIT).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
            assert_eq!(wide, units);
            assert!(wide.capacity() <= s.len().max(units.len()), "{len}");
            // The UTF-8 side's limit counts bytes: ASCII puts `len` bytes on both sides of it.
            let ascii = "x".repeat(len);
            let ascii_units: Vec<u16> = ascii.encode_utf16().collect();
            one_pass_utf8_to_utf16(&ascii, &mut wide, LIMIT).unwrap(); // ok: a test (cfg(test)); a failure is the test failing
            assert_eq!(wide, ascii_units);
            assert!(wide.capacity() <= len.max(ascii_units.len()), "{len}");
            let mut lone = units.clone();
            lone[len / 2] = 0xDC00;
            assert_eq!(
                one_pass_utf16_to_utf8(&lone, &mut reused, LIMIT),
                Err(Utf::NotWellFormed)
            );
            assert!(reused.is_empty());
        }
    }
}
