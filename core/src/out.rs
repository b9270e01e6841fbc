//! Fallible output: the JSON text the writers produce grows with the input, so every growth goes
//! through `try_reserve`. An allocation that fails marks the buffer as failed (later writes are
//! ignored) instead of calling `handle_alloc_error`, which aborts the process: the mapping then
//! reports [`crate::problem::OUT_OF_MEMORY`] and the span is mapped by the pure-JS path.

use std::collections::TryReserveError;

/// The allocation behind an output failed: the output is incomplete and must not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory;

impl From<TryReserveError> for OutOfMemory {
    fn from(_: TryReserveError) -> Self {
        OutOfMemory
    }
}

/// A UTF-8 text buffer whose growth never aborts. Growth is amortised (`try_reserve` doubles), so
/// appending costs the same as with `String`.
#[derive(Debug, Default)]
pub struct Out {
    text: String,
    failed: bool,
    /// Bytes at most (`None`: as many as can be allocated); a write past it fails like an
    /// allocation failure.
    limit: Option<usize>,
}

impl Out {
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
            failed: false,
            limit: None,
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
        self.text.push_str(s);
    }

    /// Appends one character (an ASCII delimiter, in practice).
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
    fn try_push_grows() {
        let mut v = Vec::new();
        for i in 0..100 {
            try_push(&mut v, i).unwrap();
        }
        assert_eq!(v.len(), 100);
    }
}
