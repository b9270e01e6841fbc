//! Fallible output: the JSON text the writers produce grows with the input, so every growth goes
//! through `try_reserve`. An allocation that fails marks the buffer as failed (later writes are
//! ignored) instead of calling `handle_alloc_error`, which aborts the process: the mapping then
//! reports [`crate::problem::OUT_OF_MEMORY`] and the span is mapped by the pure-JS path.
//!
//! An output may carry the span's secret scrubber ([`Out::scrubbing`], issue 11): the values the
//! writers copy from Genkit's JSON ([`Out::push_value`], [`Out::push_escaped`], [`Out::push_text`])
//! are then scrubbed as they are written, in the mapping's own pass, and the structure the
//! writers add (keys, brackets, part types) is written as it is.

use crate::scrub::SourceScrubber;
use std::borrow::Cow;
use std::collections::TryReserveError;

/// The allocation behind an output failed: the output is incomplete and must not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory;

impl From<TryReserveError> for OutOfMemory {
    fn from(_: TryReserveError) -> Self {
        OutOfMemory
    }
}

/// A piece of an output that [`Out::push_str`] copied from a text outside the output (a JSON
/// value as written in Genkit's `genkit:input` / `genkit:output`, say), recorded when the output
/// [records copies](Out::recording): `len` bytes at byte offset `at` of the output are the `len`
/// bytes at address `src` in the text they came from. The address is never dereferenced here:
/// the caller holds the source texts and finds which one `src` lies in (the napi binding builds a
/// UTF-16 output from a source's UTF-16 code units this way, instead of transcoding the copy; it
/// checks every piece against the source before it relies on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    /// Byte offset in the output.
    pub at: usize,
    /// Address of the first copied byte in its source text.
    pub src: usize,
    /// Bytes copied.
    pub len: usize,
}

/// The shortest piece worth recording to spare its transcoding ([`Out::recording`]): shorter
/// ones cost more in bookkeeping.
pub const MIN_COPIED: usize = 32;

/// Which appended pieces an output records ([`Out::recording`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// Those of at least this many bytes (where a piece only spares its transcoding:
    /// [`MIN_COPIED`]).
    Long(usize),
    /// Those holding this byte (where every such byte must be traced to its source: the napi
    /// binding's narrowed texts, whose placeholder it is).
    Holding(u8),
}

/// A UTF-8 text buffer whose growth never aborts. Growth is amortised (`try_reserve` doubles), so
/// appending costs the same as with `String`. `'s`: the scrubber it may carry.
#[derive(Debug, Default)]
pub struct Out<'s> {
    text: String,
    failed: bool,
    /// Bytes at most (`None`: as many as can be allocated); a write past it fails like an
    /// allocation failure.
    limit: Option<usize>,
    /// Scrubs the values copied from Genkit's JSON ([`Out::scrubbing`]).
    scrub: Option<&'s SourceScrubber<'s>>,
    /// Scrubbing a value failed (an allocation): the output is failed and must be left out,
    /// not written unscrubbed ([`Out::withheld`]).
    withheld: bool,
    /// Which pushed pieces are recorded in `copies` (`None`: none), and the address range of the
    /// text pieces are recorded from (start, length).
    record: Option<Recording>,
    source: (usize, usize),
    /// The recorded pieces, in output order, adjacent pieces of one source joined.
    copies: Vec<Copied>,
    /// With [`Out::marking`]: the byte ranges the writer marked as the elements of the JSON
    /// array it writes ([`Out::element_from`]); `None` when not marking or when a mark could not
    /// be kept (an allocation failed: the cap then finds the elements itself).
    elements: Option<Vec<(usize, usize)>>,
    /// A media part was written ([`Out::note_media`]).
    media: bool,
}

impl<'s> Out<'s> {
    /// An empty buffer; no allocation.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty buffer with room for `bytes`, when that much can be had. A capacity is only a
    /// hint: when it cannot be reserved the buffer starts empty and grows as it is written.
    pub fn with_hint(bytes: usize) -> Self {
        let mut text = String::new();
        // A failure here is not an error: the writes that follow reserve what they need.
        let _ = text.try_reserve(bytes);
        Out {
            text,
            ..Self::default()
        }
    }

    /// An empty buffer that fails when its text would exceed `limit` bytes: for outputs that
    /// cannot be used past a size (V8's longest string, say).
    pub fn with_limit(limit: usize) -> Self {
        Out {
            limit: Some(limit),
            ..Self::default()
        }
    }

    /// Appends `s`; once an allocation has failed, does nothing.
    #[inline(always)]
    pub fn push_str(&mut self, s: &str) {
        if self.failed {
            return;
        }
        let too_long = self
            .limit
            .is_some_and(|limit| s.len() > limit.saturating_sub(self.text.len()));
        if too_long || self.text.try_reserve(s.len()).is_err() {
            self.failed = true;
            self.text = String::new();
            return;
        }
        if self.record.is_some_and(|r| self.records(r, s)) && self.record_copy(s).is_err() {
            self.failed = true;
            self.text = String::new();
            return;
        }
        self.text.push_str(s);
    }

    /// Records `s`, about to be appended, as a [`Copied`] piece (joined to the last one when it
    /// continues it in both the output and the source).
    #[inline(never)]
    fn record_copy(&mut self, s: &str) -> Result<(), OutOfMemory> {
        let (at, src) = (self.text.len(), s.as_ptr() as usize);
        if let Some(last) = self.copies.last_mut() {
            if last.at + last.len == at && last.src.wrapping_add(last.len) == src {
                last.len += s.len();
                return Ok(());
            }
        }
        try_push(
            &mut self.copies,
            Copied {
                at,
                src,
                len: s.len(),
            },
        )
    }

    /// This output, recording the appended pieces that lie in `source` and that `recording`
    /// selects ([`Copied`], [`Out::finish_with_copies`]; `None`: none).
    pub fn recording(mut self, recording: Option<Recording>, source: &str) -> Out<'s> {
        self.record = recording;
        self.source = (source.as_ptr() as usize, source.len());
        self
    }

    /// This output, keeping the ranges of the array elements its writer marks
    /// ([`Out::element_from`], [`Out::take_elements`]): the message arrays, whose size cap
    /// ([`crate::cap::cap_messages_in`]) then needs no scan of the written text to find them.
    pub fn marking(mut self) -> Out<'s> {
        self.elements = Some(Vec::new());
        self
    }

    /// Marks the bytes from `start` to the end of what is written so far as one element of the
    /// array being written (when [`Out::marking`]; nothing when `start` is not before the end).
    /// A mark that cannot be kept (no memory) drops them all: marks are a shortcut, never needed.
    pub fn element_from(&mut self, start: usize) {
        let end = self.text.len();
        if let Some(marks) = &mut self.elements {
            if start >= end || try_push(marks, (start, end)).is_err() {
                self.elements = None;
            }
        }
    }

    /// The marked element ranges ([`Out::element_from`]), taken out: `None` when not marking, a
    /// mark was lost, or the output failed.
    pub fn take_elements(&mut self) -> Option<Vec<(usize, usize)>> {
        if self.failed {
            return None;
        }
        self.elements.take()
    }

    /// Notes that the writer wrote a media part, whose MIME type and size it read from the
    /// characters of the part's URL and content type (complete mode's rule 7).
    pub fn note_media(&mut self) {
        self.media = true;
    }

    /// Whether [`Out::note_media`] was called.
    pub fn wrote_media(&self) -> bool {
        self.media
    }

    /// Whether piece `s` is to be recorded.
    fn records(&self, recording: Recording, s: &str) -> bool {
        if s.is_empty() || !self.in_source(s) {
            return false;
        }
        match recording {
            Recording::Long(min) => s.len() >= min,
            Recording::Holding(byte) => memchr::memchr(byte, s.as_bytes()).is_some(),
        }
    }

    /// Whether `s` lies in the source given to [`Out::recording`].
    fn in_source(&self, s: &str) -> bool {
        let (start, len) = self.source;
        let at = s.as_ptr() as usize;
        at >= start && at - start <= len && s.len() <= len - (at - start)
    }

    /// This output, scrubbing with `scrubber` the values copied from the source text it was made
    /// for (`None`: written as they are).
    pub fn scrubbing(mut self, scrubber: Option<&'s SourceScrubber<'s>>) -> Out<'s> {
        self.scrub = scrubber;
        self
    }

    /// Appends a JSON value copied from Genkit's JSON (its source text: an object, array, string
    /// or scalar, as [`crate::genkit::Raw`] holds it). With a scrubber, every string in it is
    /// scrubbed as [`crate::scrub::Scrubber::json`] does (a secret replaced by
    /// [`crate::scrub::PLACEHOLDER`], a credential key's value whole); escapes and structure are
    /// kept.
    pub fn push_value(&mut self, raw: &str) {
        match self.scrub {
            None => self.push_str(raw),
            Some(s) => {
                let scrubbed = s.json(raw);
                self.push_scrubbed(scrubbed);
            }
        }
    }

    /// Appends the inside of a JSON string literal copied from Genkit's JSON (escaped source
    /// text without its quotes: a MIME type cut out of a media URL, say), scrubbed as the
    /// literal's text ([`crate::scrub::Scrubber::json_inner`]) when a scrubber is attached.
    pub fn push_escaped(&mut self, inner: &str) {
        match self.scrub {
            None => self.push_str(inner),
            Some(s) => {
                let scrubbed = s.json_inner(inner);
                self.push_scrubbed(scrubbed);
            }
        }
    }

    /// Appends decoded text taken from Genkit's JSON (a finish reason passed through, say),
    /// JSON-escaped without quotes as `JSON.stringify` escapes it
    /// ([`crate::semconv::json_escape_into`]), scrubbed first ([`crate::scrub::Scrubber::text`])
    /// when a scrubber is attached.
    pub fn push_text(&mut self, text: &str) {
        match self.scrub.map(|s| s.text(text)) {
            None => crate::semconv::json_escape_into(self, text),
            Some(Ok(t)) => crate::semconv::json_escape_into(self, &t),
            Some(Err(_)) => self.withhold(),
        }
    }

    fn push_scrubbed(&mut self, scrubbed: Result<Cow<'_, str>, TryReserveError>) {
        match scrubbed {
            Ok(v) => self.push_str(&v),
            Err(_) => self.withhold(),
        }
    }

    /// A value could not be scrubbed: the whole output is left out (scrubbed content or none).
    fn withhold(&mut self) {
        self.withheld = true;
        self.failed = true;
        self.text = String::new();
    }

    /// Whether the output failed because a value could not be scrubbed (an allocation sized by
    /// the value failed): the caller leaves the attribute out and reports
    /// [`crate::problem::CONTENT_WITHHELD`], rather than handing the span to a path that would
    /// write it unscrubbed. [`Out::finish`] fails too.
    pub fn withheld(&self) -> bool {
        self.withheld
    }

    /// Appends one character (an ASCII delimiter, in practice).
    #[inline]
    pub fn push(&mut self, c: char) {
        let mut utf8 = [0u8; 4];
        self.push_str(c.encode_utf8(&mut utf8));
    }

    /// Bytes written so far (0 after a failure).
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text written so far (empty after a failure).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text, or [`OutOfMemory`] when any write failed.
    pub fn finish(self) -> Result<String, OutOfMemory> {
        if self.failed {
            Err(OutOfMemory)
        } else {
            Ok(self.text)
        }
    }

    /// The text and the pieces recorded ([`Out::recording`]; empty when not recording), or
    /// [`OutOfMemory`] when any write failed.
    pub fn finish_with_copies(self) -> Result<(String, Vec<Copied>), OutOfMemory> {
        if self.failed {
            Err(OutOfMemory)
        } else {
            Ok((self.text, self.copies))
        }
    }
}

/// `vec.push(item)` whose growth never aborts.
pub fn try_push<T>(vec: &mut Vec<T>, item: T) -> Result<(), OutOfMemory> {
    if vec.len() == vec.capacity() {
        vec.try_reserve(1)?;
    }
    vec.push(item);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_finishes() {
        let mut out = Out::with_hint(4);
        out.push('[');
        out.push_str("\"é\"");
        out.push(']');
        assert_eq!(out.len(), 6);
        assert_eq!(out.finish(), Ok("[\"é\"]".to_string()));
    }

    #[test]
    fn an_impossible_capacity_is_only_a_hint() {
        let mut out = Out::with_hint(usize::MAX);
        out.push_str("ok");
        assert_eq!(out.finish(), Ok("ok".to_string()));
    }

    #[test]
    fn a_failed_growth_fails_the_output_without_aborting() {
        let mut out = Out::with_limit(5);
        out.push_str("abc");
        assert_eq!(out.as_str(), "abc");
        out.push_str("def");
        out.push_str("g");
        assert!(out.is_empty());
        assert_eq!(out.finish(), Err(OutOfMemory));
    }

    #[test]
    fn recording_keeps_the_long_pieces_and_joins_adjacent_ones() {
        let source = format!("{}{}", "a".repeat(40), "é".repeat(20));
        let mut out = Out::new().recording(Some(Recording::Long(MIN_COPIED)), &source);
        out.push('[');
        out.push_str("short"); // under MIN_COPIED: not recorded
        out.push_str(&source[..40]);
        out.push_str(&source[40..]); // continues the previous piece in both texts
        out.push_str(&"b".repeat(MIN_COPIED)); // another text: not recorded
        out.push(']');
        let (text, copies) = out.finish_with_copies().unwrap(); // ok: a test; nothing failed to allocate
        let base = source.as_ptr() as usize;
        assert_eq!(copies.len(), 1);
        assert_eq!(
            copies[0],
            Copied {
                at: 6,
                src: base,
                len: source.len()
            }
        );
        assert_eq!(&text[6..6 + source.len()], source);
        // Holding a byte: the pieces with it, however short.
        let mut out = Out::new().recording(Some(Recording::Holding(0xA9)), &source);
        out.push_str(&source[..40]); // no é
        out.push_str(&source[40..42]); // one é
        let (_, copies) = out.finish_with_copies().unwrap(); // ok: a test; nothing failed to allocate
        assert_eq!(
            copies,
            [Copied {
                at: 40,
                src: base + 40,
                len: 2
            }]
        );
        // Not recording: none.
        let mut out = Out::new();
        out.push_str(&source);
        assert!(out.finish_with_copies().unwrap().1.is_empty()); // ok: a test; nothing failed to allocate
    }

    #[test]
    fn try_push_grows() {
        let mut v = Vec::new();
        for i in 0..100 {
            try_push(&mut v, i).unwrap();
        }
        assert_eq!(v.len(), 100);
    }
}
