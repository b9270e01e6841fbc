//! Secret scrubbing of content attributes (issue 11, item 3): API keys and tokens inside the text
//! of `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`,
//! `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` are replaced by [`PLACEHOLDER`]
//! before the attribute is written (seed 003, "Content": "Never put API keys or `Authorization`
//! headers in any attribute").
//!
//! One [`regex::RegexSet`] of every pattern (the [`DEFAULT_PATTERNS`] plus the user's) is compiled
//! once per processor ([`Scrubber::new`]); it answers "does anything match?" in one scan of a
//! string. Only when it does are the individual regexes run to find what to replace.
//!
//! The unit of work is one JSON string literal, as the message writers copy it from Genkit's JSON
//! ([`Scrubber::json_string`]), or a whole JSON value such as a tool call's arguments
//! ([`Scrubber::json`]): patterns are matched against the *decoded* text, so a secret written with
//! JSON escapes (`"sk-\u0061..."`, a private key block with `\n` line breaks) is found, and the
//! replacement is made in the *raw* text, so every escape outside a secret is kept as written, the
//! JSON stays valid and only string contents change. Object keys are never changed; a string value
//! under a key that names a credential ([`is_secret_key`]: `Authorization`, `api_key`,
//! `aws_secret_access_key`, ...) is replaced whole.
//!
//! Cost when nothing matches: one `RegexSet` scan of each string (plus a decode into a scratch
//! buffer for strings holding escapes); nothing is allocated for the output (`Cow::Borrowed`).
//!
//! Errors: the only failure is an allocation that cannot be made ([`TryReserveError`]); the caller
//! must then leave the attribute out rather than write it unscrubbed.

use crate::jsonstr::{self, Unit};
use aho_corasick::AhoCorasick;
use regex::{Regex, RegexSet};
use std::borrow::Cow;
use std::collections::TryReserveError;

/// What a secret is replaced by: fixed, ASCII, needing no JSON escape.
pub const PLACEHOLDER: &str = "[REDACTED]";

/// One built-in secret pattern.
#[derive(Debug, Clone, Copy)]
pub struct Pattern {
    /// The kind of secret, for documentation and tests.
    pub name: &'static str,
    /// The regex (`regex` crate syntax). When it has a group named `secret`, only that group is
    /// replaced (the `Bearer ` or `api_key=` before it stays); otherwise the whole match.
    pub regex: &'static str,
    /// Generic token shapes that prose can also have (`sk-this-is-a-long-phrase`): a match is
    /// replaced only when its secret holds at least one ASCII letter and one ASCII digit, as
    /// random keys practically always do.
    pub needs_digit: bool,
    /// Literals every match contains (compared ignoring ASCII case): a string holding none of
    /// the needles of any pattern is clean without running the regexes.
    pub needles: &'static [&'static str],
}

// `(?-u:\b)` is an ASCII word boundary: the regex crate's fast engines cannot run a Unicode `\b`
// on non-ASCII text, and every token here is ASCII.
macro_rules! b {
    () => {
        r"(?-u:\b)"
    };
}

/// Key names (after removing `-` and `_` and lowercasing) whose string value is a credential:
/// replaced whole in JSON objects, and after `name=` / `name:` in text.
const SECRET_KEYS: &[&str] = &[
    "authorization",
    "proxyauthorization",
    "apikey",
    "xapikey",
    "secretaccesskey",
    "awssecretaccesskey",
    "awssessiontoken",
    "clientsecret",
    "accesstoken",
    "refreshtoken",
];

/// The built-in patterns, in [`Scrubber`] order. Sources: the providers' documented key formats
/// (OpenAI `sk-`/`sk-proj-`, Anthropic `sk-ant-`, Google API keys `AIza` + 35, AWS access key ids
/// `AKIA`/`ASIA` + 16, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, Slack `xox?-`/`xapp-`
/// and webhooks, JWTs, PEM private key blocks) and Maple's ingest keys (`maple_sk_`/`maple_pk_`,
/// seed 003, "Key and region").
pub const DEFAULT_PATTERNS: &[Pattern] = &[
    Pattern {
        name: "authorization header value",
        regex: concat!(
            "(?i)",
            b!(),
            r"(?:proxy-)?authorization[\x22']?\s*[:=]\s*[\x22']?(?:(?:bearer|basic|token|digest|apikey)\s+)?(?P<secret>[A-Za-z0-9\-._~+/=:]{8,})"
        ),
        needs_digit: false,
        needles: &["authorization"],
    },
    Pattern {
        name: "bearer token",
        regex: concat!(
            "(?i)",
            b!(),
            r"bearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"
        ),
        needs_digit: true,
        needles: &["bearer"],
    },
    Pattern {
        name: "Anthropic API key",
        regex: concat!(b!(), r"sk-ant-[A-Za-z0-9_\-]{20,}"),
        needs_digit: false,
        needles: &["sk-ant-"],
    },
    Pattern {
        name: "OpenAI API key",
        regex: concat!(b!(), r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        needs_digit: true,
        needles: &["sk-"],
    },
    Pattern {
        name: "Google API key",
        regex: concat!(b!(), r"AIza[0-9A-Za-z_\-]{35}"),
        needs_digit: false,
        needles: &["AIza"],
    },
    Pattern {
        name: "AWS access key id",
        regex: concat!(
            b!(),
            r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}",
            b!()
        ),
        needs_digit: false,
        needles: &["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    },
    Pattern {
        name: "credential pair (aws_secret_access_key=..., api_key: ...)",
        regex: concat!(
            "(?i)",
            b!(),
            r"(?:aws[_\-]?)?(?:secret[_\-]?access[_\-]?key|session[_\-]?token|x-api-key|api[_\-]?key|client[_\-]?secret|access[_\-]?token|refresh[_\-]?token)[\x22']?\s*[:=]\s*[\x22']?(?P<secret>[A-Za-z0-9/+=_\-.]{16,})"
        ),
        needs_digit: true,
        needles: &[
            "secret",
            "session_token",
            "session-token",
            "sessiontoken",
            "api_key",
            "api-key",
            "apikey",
            "access_token",
            "access-token",
            "accesstoken",
            "refresh_token",
            "refresh-token",
            "refreshtoken",
        ],
    },
    Pattern {
        name: "GitHub token",
        regex: concat!(
            b!(),
            r"(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"
        ),
        needs_digit: false,
        needles: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    },
    Pattern {
        name: "Slack token or webhook",
        regex: concat!(
            b!(),
            r"(?:xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,})"
        ),
        needs_digit: false,
        needles: &["xox", "xapp-", "hooks.slack.com"],
    },
    Pattern {
        name: "JSON Web Token",
        regex: concat!(
            b!(),
            r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"
        ),
        needs_digit: false,
        needles: &["eyJ"],
    },
    Pattern {
        name: "private key block",
        regex: r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|\z)",
        needs_digit: false,
        needles: &["-----BEGIN"],
    },
    Pattern {
        name: "Maple ingest key",
        regex: concat!(b!(), r"maple_(?:sk|pk)_[A-Za-z0-9_\-]{8,}"),
        needs_digit: false,
        needles: &["maple_sk_", "maple_pk_"],
    },
];

/// Returns whether an object key names a credential (compared without `-`/`_`, ignoring ASCII
/// case): `Authorization`, `Proxy-Authorization`, `api_key`, `x-api-key`, `apiKey`,
/// `aws_secret_access_key`, `secretAccessKey`, `aws_session_token`, `client_secret`,
/// `access_token`, `refresh_token`.
pub fn is_secret_key(key: &str) -> bool {
    if key.len() > 40 {
        return false;
    }
    let mut norm = [0u8; 40];
    let mut n = 0;
    for &c in key.as_bytes() {
        if c != b'-' && c != b'_' {
            norm[n] = c.to_ascii_lowercase();
            n += 1;
        }
    }
    SECRET_KEYS.iter().any(|k| k.as_bytes() == &norm[..n])
}

/// A string value under a secret key shorter than this is kept (`"api_key": "none"`).
const MIN_KEYED_SECRET: usize = 8;

/// The patterns of one processor, compiled once.
#[derive(Debug, Clone)]
pub struct Scrubber {
    /// The needles of the default patterns, ASCII case-insensitive ([`Needles`]).
    prefilter: Needles,
    /// The user's patterns alone, which have no needles; `None` without any.
    user: Option<RegexSet>,
    set: RegexSet,
    regexes: Vec<Regex>,
    /// Per pattern: [`Pattern::needs_digit`].
    needs_digit: Vec<bool>,
    /// Per pattern: the index of the `secret` capture group, when there is one.
    secret_group: Vec<Option<usize>>,
}

/// A user pattern that does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// Its index in the user's list.
    pub index: usize,
    /// The regex crate's message.
    pub message: String,
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "secret pattern {}: {}", self.index, self.message)
    }
}

impl Scrubber {
    /// The [`DEFAULT_PATTERNS`] plus `extra` (`regex` crate syntax; a group named `secret`
    /// restricts the replacement to that group; every match is replaced otherwise).
    ///
    /// Errors: the first user pattern that does not compile, or a set too large for the regex
    /// crate's default size limit.
    pub fn new<S: AsRef<str>>(extra: &[S]) -> Result<Scrubber, PatternError> {
        let mut sources: Vec<&str> = DEFAULT_PATTERNS.iter().map(|p| p.regex).collect(); // ok: small, fixed
        let mut needs_digit: Vec<bool> = DEFAULT_PATTERNS.iter().map(|p| p.needs_digit).collect(); // ok: small
        let mut regexes = Vec::new();
        for p in DEFAULT_PATTERNS {
            regexes.push(Regex::new(p.regex).map_err(|e| PatternError {
                index: usize::MAX,
                message: e.to_string(),
            })?);
        }
        for (index, source) in extra.iter().enumerate() {
            let source = source.as_ref();
            let re = Regex::new(source).map_err(|e| PatternError {
                index,
                message: e.to_string(),
            })?;
            regexes.push(re);
            sources.push(source);
            needs_digit.push(false);
        }
        let set = RegexSet::new(&sources).map_err(|e| PatternError {
            index: usize::MAX,
            message: e.to_string(),
        })?;
        let secret_group = regexes
            .iter()
            .map(|re| re.capture_names().position(|n| n == Some("secret")))
            .collect();
        let internal = |message: String| PatternError {
            index: usize::MAX,
            message,
        };
        let prefilter = Needles::new().map_err(internal)?;
        let user = if extra.is_empty() {
            None
        } else {
            Some(
                RegexSet::new(extra.iter().map(|s| s.as_ref()))
                    .map_err(|e| internal(e.to_string()))?,
            )
        };
        Ok(Scrubber {
            prefilter,
            user,
            set,
            regexes,
            needs_digit,
            secret_group,
        })
    }

    /// The [`DEFAULT_PATTERNS`] only.
    pub fn with_defaults() -> Scrubber {
        match Scrubber::new::<&str>(&[]) {
            Ok(s) => s,
            // ok: the built-in patterns are constants covered by the unit tests.
            Err(e) => panic!("built-in secret patterns do not compile: {e}"),
        }
    }

    /// Whether `text` holds nothing any pattern matches (one `RegexSet` scan). A pattern match
    /// that the letter-and-digit rule would keep still counts as a match here.
    pub fn is_clean(&self, text: &str) -> bool {
        self.prefilter.find(text.as_bytes(), 0).is_none()
            && !self.user.as_ref().is_some_and(|u| u.is_match(text))
    }

    /// The byte ranges of `text` to replace, sorted and merged; empty when nothing matches.
    fn ranges(&self, text: &str) -> Result<Vec<(usize, usize)>, TryReserveError> {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for i in self.set.matches(text).iter() {
            let re = &self.regexes[i];
            let mut push = |s: usize, e: usize| -> Result<(), TryReserveError> {
                if s < e && (!self.needs_digit[i] || letter_and_digit(&text[s..e])) {
                    ranges.try_reserve(1)?;
                    ranges.push((s, e));
                }
                Ok(())
            };
            match self.secret_group[i] {
                Some(g) => {
                    for caps in re.captures_iter(text) {
                        if let Some(m) = caps.get(g).or_else(|| caps.get(0)) {
                            push(m.start(), m.end())?;
                        }
                    }
                }
                None => {
                    for m in re.find_iter(text) {
                        push(m.start(), m.end())?;
                    }
                }
            }
        }
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        merged.try_reserve(ranges.len())?;
        for (s, e) in ranges {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Ok(merged)
    }

    /// Scrubs plain text (a decoded string, such as a tool's string result written as its text):
    /// every secret replaced by [`PLACEHOLDER`]; borrowed when nothing is replaced.
    pub fn text<'a>(&self, text: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        if self.is_clean(text) {
            return Ok(Cow::Borrowed(text));
        }
        let ranges = self.ranges(text)?;
        if ranges.is_empty() {
            return Ok(Cow::Borrowed(text));
        }
        let mut out = String::new();
        out.try_reserve(text.len())?;
        let mut at = 0;
        for (s, e) in ranges {
            out.push_str(&text[at..s]);
            out.push_str(PLACEHOLDER);
            at = e;
        }
        out.push_str(&text[at..]);
        Ok(Cow::Owned(out))
    }

    /// Scrubs one JSON string literal, quotes included (`"..."`, as Genkit's JSON holds it): the
    /// secrets of its decoded text are replaced in the raw text, every other character and escape
    /// is kept as written. Returns the literal itself (borrowed) when nothing is replaced. A
    /// `literal` that is not a JSON string literal is returned unchanged.
    pub fn json_string<'a>(&self, literal: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        let bytes = literal.as_bytes();
        if bytes.len() < 2 || bytes[0] != b'"' || bytes[bytes.len() - 1] != b'"' {
            return Ok(Cow::Borrowed(literal));
        }
        let inner = &literal[1..literal.len() - 1];
        if !inner.contains('\\') {
            // Raw text is the decoded text.
            return Ok(match self.text(inner)? {
                Cow::Borrowed(_) => Cow::Borrowed(literal),
                Cow::Owned(s) => {
                    let mut out = String::new();
                    out.try_reserve(s.len() + 2)?;
                    out.push('"');
                    out.push_str(&s);
                    out.push('"');
                    Cow::Owned(out)
                }
            });
        }
        let mut decoded = String::new();
        decoded.try_reserve(inner.len())?;
        decode_into(inner, &mut decoded);
        if self.is_clean(&decoded) {
            return Ok(Cow::Borrowed(literal));
        }
        let ranges = self.ranges(&decoded)?;
        if ranges.is_empty() {
            return Ok(Cow::Borrowed(literal));
        }
        let mut out = String::new();
        out.try_reserve(literal.len())?;
        out.push('"');
        rewrite(inner, &ranges, &mut out);
        out.push('"');
        Ok(Cow::Owned(out))
    }

    /// Scrubs every string value of a JSON value (an object, array, string or scalar, as written):
    /// each string literal as [`Scrubber::json_string`] does, object keys kept, and a string value
    /// of 8 bytes or more under a key that names a credential ([`is_secret_key`]) replaced whole.
    /// Borrowed when nothing is replaced. The input must be valid JSON (as the mapping's raw
    /// values are); other text is scanned the same way and never made longer than needed.
    pub fn json<'a>(&self, json: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        // Without a `\u` escape, the needles (ASCII letters, digits, `_`, `-`, `.`) appear in the
        // raw text exactly where they appear in the decoded strings, and a literal without any
        // needle cannot match (a secret key holds one too): only the literals holding a needle
        // hit are scrubbed. JSON.stringify writes `\u` only for control characters and lone
        // surrogates; with one (or with user patterns, which have no needles) every literal is.
        let bytes = json.as_bytes();
        let every = memchr::memmem::find(bytes, b"\\u").is_some() || self.user.is_some();
        // The start of the next needle hit at or after the current literal (`usize::MAX`: none).
        let mut hit = self.prefilter.find(bytes, 0).unwrap_or(usize::MAX);
        if !every && hit == usize::MAX {
            return Ok(Cow::Borrowed(json));
        }
        let mut out: Option<String> = None;
        let mut copied = 0; // bytes of `json` already handled into `out`
        let mut i = 0;
        let mut secret_key = false; // the previous key names a credential
        while let Some(k) = memchr::memchr(b'"', &bytes[i..]) {
            let start = i + k;
            // A value that is not a string (or a `,`/`{`) between: the key no longer applies.
            if secret_key && bytes[i..start].iter().any(|c| b",{[}]".contains(c)) {
                secret_key = false;
            }
            let end = literal_end(bytes, start);
            let literal = &json[start..end];
            if hit < start {
                hit = self.prefilter.find(bytes, start).unwrap_or(usize::MAX);
            }
            // Needles hold no `"`: a hit starting inside the literal lies inside it.
            let has_hit = hit < end;
            let mut j = end;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            let is_key = j < bytes.len() && bytes[j] == b':';
            if is_key {
                // A secret key also holds a needle, so skipping literals without one stays exact.
                secret_key = has_hit && key_is_secret(literal);
            } else {
                let replaced: Option<Cow<'_, str>> =
                    if secret_key && decoded_len_at_least(literal, MIN_KEYED_SECRET) {
                        Some(Cow::Borrowed("\"[REDACTED]\""))
                    } else if has_hit || every {
                        match self.json_string(literal)? {
                            Cow::Borrowed(_) => None,
                            owned => Some(owned),
                        }
                    } else {
                        None
                    };
                if let Some(new) = replaced {
                    let o = match &mut out {
                        Some(o) => o,
                        None => {
                            let mut o = String::new();
                            o.try_reserve(json.len())?;
                            out.insert(o)
                        }
                    };
                    o.try_reserve(start - copied + new.len())?;
                    o.push_str(&json[copied..start]);
                    o.push_str(&new);
                    copied = end;
                }
                secret_key = false;
            }
            i = end;
        }
        Ok(match out {
            None => Cow::Borrowed(json),
            Some(mut o) => {
                o.try_reserve(json.len() - copied)?;
                o.push_str(&json[copied..]);
                Cow::Owned(o)
            }
        })
    }
}

/// The prefilter: the needles of every [`DEFAULT_PATTERNS`] entry, matched ignoring ASCII case.
/// Aho-Corasick's case-insensitive automaton has no vectorised searcher (about 300 MB/s on prose);
/// here the text is lower-cased a chunk at a time into a stack buffer and searched for the
/// lower-cased needles by the crate's packed (Teddy, SIMD) searcher, several GB/s. The same
/// matches: ASCII case folding of the text and the needles. Where Teddy is not available (no
/// SSSE3/NEON), the case-insensitive automaton.
#[derive(Debug, Clone)]
struct Needles {
    packed: Option<aho_corasick::packed::Searcher>,
    automaton: AhoCorasick,
    /// The longest needle in bytes (chunks overlap by one less).
    longest: usize,
}

/// Bytes lower-cased and searched at a time.
const CHUNK: usize = 4096;

impl Needles {
    fn new() -> Result<Needles, String> {
        let mut needles: Vec<String> = Vec::new(); // ok: a few dozen constants
        for n in DEFAULT_PATTERNS.iter().flat_map(|p| p.needles.iter()) {
            let n = n.to_ascii_lowercase();
            if !needles.contains(&n) {
                needles.push(n);
            }
        }
        // A needle holding another is redundant (`sk-ant-` holds `sk-`): a text holds it only
        // where it holds the shorter one, inside the same span.
        let all = needles.clone();
        needles.retain(|n| !all.iter().any(|m| m != n && n.contains(m.as_str())));
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&needles)
            .map_err(|e| e.to_string())?;
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(&needles)
            .build();
        let longest = needles.iter().map(|n| n.len()).max().unwrap_or(1);
        Ok(Needles {
            packed,
            automaton,
            longest,
        })
    }

    /// The start of a needle hit at or after `from`, or `None`. When hits overlap a chunk's end,
    /// the one reported may start after the leftmost, but inside its span (so in the same JSON
    /// string literal: needles hold no `"`).
    fn find(&self, text: &[u8], from: usize) -> Option<usize> {
        let Some(packed) = &self.packed else {
            return self
                .automaton
                .find(aho_corasick::Input::new(text).range(from..))
                .map(|m| m.start());
        };
        let mut buf = [0u8; CHUNK];
        let mut at = from;
        while at < text.len() {
            let end = (at + CHUNK).min(text.len());
            let chunk = &text[at..end];
            let lower = &mut buf[..chunk.len()];
            for (to, &c) in lower.iter_mut().zip(chunk) {
                *to = c.to_ascii_lowercase();
            }
            if let Some(m) = packed.find(&*lower) {
                return Some(at + m.start());
            }
            if end == text.len() {
                break;
            }
            at = end - (self.longest - 1).min(CHUNK / 2);
        }
        None
    }
}

fn letter_and_digit(s: &str) -> bool {
    s.bytes().any(|c| c.is_ascii_digit()) && s.bytes().any(|c| c.is_ascii_alphabetic())
}

/// The end (exclusive, after the closing quote) of the string literal starting at `start`; the
/// end of `bytes` when it is not closed.
fn literal_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match memchr::memchr2(b'\\', b'"', &bytes[i..]) {
            None => break,
            Some(k) if bytes[i + k] == b'"' => return i + k + 1,
            Some(k) => i += k + 2,
        }
    }
    bytes.len()
}

fn key_is_secret(literal: &str) -> bool {
    if literal.len() < 2 || literal.len() > 120 {
        return false;
    }
    let inner = &literal[1..literal.len() - 1];
    if !inner.contains('\\') {
        return is_secret_key(inner);
    }
    let mut decoded = String::new();
    decode_into(inner, &mut decoded); // ok: at most 120 bytes
    is_secret_key(&decoded)
}

/// Whether a string literal's decoded text is at least `n` bytes (an escape counts as one).
fn decoded_len_at_least(literal: &str, n: usize) -> bool {
    if literal.len() < 2 || !literal.starts_with('"') {
        return false;
    }
    let inner = &literal[1..literal.len() - 1];
    let b = inner.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i < b.len() && count < n {
        i += if b[i] == b'\\' {
            jsonstr::unit_at(inner, i).1
        } else {
            1
        };
        count += 1;
    }
    count >= n
}

/// One decoded unit of a literal's inside at `i`: (the char, raw length), read by the crate's one
/// escape decoder ([`jsonstr::unit_at`]). A surrogate pair escape is one unit (12 raw bytes); a
/// lone surrogate escape and a bad escape decode to U+FFFD.
fn unit(inner: &str, i: usize) -> (char, usize) {
    match jsonstr::unit_at(inner, i) {
        (Unit::Char(c), len) => (c, len),
        (Unit::LoneSurrogate | Unit::Bad, len) => ('\u{FFFD}', len),
    }
}

/// Decodes a literal's inside (between the quotes) into `out`, which has room for it (decoded
/// text is never longer than its raw form).
fn decode_into(inner: &str, out: &mut String) {
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // Copy the run up to the next backslash in one go.
        let run = b[i..]
            .iter()
            .position(|&c| c == b'\\')
            .unwrap_or(b.len() - i);
        if run > 0 {
            out.push_str(&inner[i..i + run]);
            i += run;
            continue;
        }
        let (c, len) = unit(inner, i);
        out.push(c);
        i += len;
    }
}

/// Copies a literal's inside to `out`, replacing each decoded byte range of `ranges` (sorted,
/// disjoint, on char boundaries of the decoded text) by [`PLACEHOLDER`]: units that start inside
/// a range are skipped, every other unit is copied as written.
fn rewrite(inner: &str, ranges: &[(usize, usize)], out: &mut String) {
    let mut d = 0; // decoded offset of the unit at `i`
    let mut i = 0;
    let mut r = 0;
    while i < inner.len() {
        let (c, len) = unit(inner, i);
        while r < ranges.len() && ranges[r].1 <= d {
            r += 1;
        }
        let inside = r < ranges.len() && ranges[r].0 <= d;
        if inside {
            if ranges[r].0 == d {
                out.push_str(PLACEHOLDER);
            }
        } else {
            out.push_str(&inner[i..i + len]);
        }
        d += c.len_utf8();
        i += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> Scrubber {
        Scrubber::with_defaults()
    }

    /// Secrets of every kind, each as it appears in text.
    pub const SECRETS: &[(&str, &str)] = &[
        ("openai", "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x"),
        ("openai-proj", "sk-proj-Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1fG3hI5jK7lM9nO1"),
        ("anthropic", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMn-AAAA"),
        ("google", "AIzaSyD3x4mPl3K3yF0rT3st1ngOnlyAbCdEfGh"),
        ("aws-id", "AKIAIOSFODNN7EXAMPLE"),
        ("github", "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"),
        ("github-pat", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
        ("slack", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ("maple-sk", "maple_sk_8f3a2b1c9d0e7f6a5b4c"),
        ("maple-pk", "maple_pk_live_0a1b2c3d4e5f6789"),
    ];

    #[test]
    fn defaults_compile() {
        let s = s();
        assert_eq!(s.regexes.len(), DEFAULT_PATTERNS.len());
    }

    #[test]
    fn each_secret_kind_in_text_is_replaced() {
        let s = s();
        for (kind, secret) in SECRETS {
            let text = format!("here is my key {secret} please keep it");
            let out = s.text(&text).unwrap();
            assert_eq!(
                out,
                format!("here is my key {PLACEHOLDER} please keep it"),
                "{kind}"
            );
        }
    }

    #[test]
    fn each_secret_kind_in_a_json_literal_with_escapes_is_replaced_and_escapes_kept() {
        let s = s();
        for (kind, secret) in SECRETS {
            let value = format!("line one\n\"{secret}\"\ttab \u{e9}\u{1F600}");
            let literal = serde_json::to_string(&value).unwrap();
            let out = s.json_string(&literal).unwrap();
            let back: String = serde_json::from_str(&out).unwrap();
            assert_eq!(
                back,
                format!("line one\n\"{PLACEHOLDER}\"\ttab \u{e9}\u{1F600}"),
                "{kind}"
            );
            assert!(out.starts_with(r#""line one\n\""#), "{kind}: {out}");
        }
    }

    #[test]
    fn a_secret_spelled_with_escapes_is_found() {
        let s = s();
        // "sk-" + escapes inside the key, an escaped slash in a Slack webhook.
        let literal = r#""key: sk-\u00344f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4t end""#;
        let out = s.json_string(literal).unwrap();
        assert_eq!(out, r#""key: [REDACTED] end""#);
        let literal =
            r#""post to https:\/\/hooks.slack.com\/services\/T0000\/B0000\/XXXXXXXXXXXXXXXX now""#;
        let out = s.json_string(literal).unwrap();
        assert_eq!(out, r#""post to [REDACTED] now""#);
        // Non-ASCII escapes around a secret stay as written.
        let literal = r#""\u00e9\ud83d\ude00 AKIAIOSFODNN7EXAMPLE \u00e9""#;
        assert_eq!(
            s.json_string(literal).unwrap(),
            r#""\u00e9\ud83d\ude00 [REDACTED] \u00e9""#
        );
    }

    #[test]
    fn private_key_blocks_with_escaped_newlines() {
        let s = s();
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd==\n-----END RSA PRIVATE KEY-----";
        let literal = serde_json::to_string(&format!("key:\n{key}\nthanks")).unwrap();
        let out = s.json_string(&literal).unwrap();
        assert_eq!(out, r#""key:\n[REDACTED]\nthanks""#);
        // A block cut before its END line is replaced to the end.
        let literal = serde_json::to_string("x -----BEGIN PRIVATE KEY-----\nMIIEv").unwrap();
        assert_eq!(s.json_string(&literal).unwrap(), r#""x [REDACTED]""#);
        let literal = serde_json::to_string(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----",
        )
        .unwrap();
        assert_eq!(s.json_string(&literal).unwrap(), r#""[REDACTED]""#);
    }

    #[test]
    fn authorization_and_bearer_keep_the_scheme() {
        let s = s();
        assert_eq!(
            s.text("curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' url")
                .unwrap(),
            "curl -H 'Authorization: Bearer [REDACTED]' url"
        );
        assert_eq!(
            s.text("use bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5 here")
                .unwrap(),
            "use bearer [REDACTED] here"
        );
        assert_eq!(
            s.text("Authorization: Basic dXNlcjpwYXNzd29yZA==").unwrap(),
            "Authorization: Basic [REDACTED]"
        );
    }

    #[test]
    fn aws_secret_pairs_in_text_and_json() {
        let s = s();
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        assert_eq!(
            s.text(&format!("aws_secret_access_key = {secret}"))
                .unwrap(),
            format!("aws_secret_access_key = {PLACEHOLDER}")
        );
        let json = format!(
            r#"{{"AWS_SECRET_ACCESS_KEY":"{secret}","region":"eu-west-1","n":[1,{{"api_key" : "abcdefgh"}}]}}"#
        );
        let out = s.json(&json).unwrap();
        assert_eq!(
            out,
            r#"{"AWS_SECRET_ACCESS_KEY":"[REDACTED]","region":"eu-west-1","n":[1,{"api_key" : "[REDACTED]"}]}"#
        );
        // A JSON object serialised inside a string (a tool's string result).
        let inner =
            serde_json::to_string(&serde_json::json!({ "secretAccessKey": secret })).unwrap();
        let literal = serde_json::to_string(&inner).unwrap();
        let out = s.json_string(&literal).unwrap();
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, r#"{"secretAccessKey":"[REDACTED]"}"#);
    }

    #[test]
    fn json_values_keep_keys_numbers_and_structure() {
        let s = s();
        let json = r#"{"sk-proj-Ab3dE5fG7hI9jK1lM3nO5pQ7":1,"text":"sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x","apiKey":"no","authorization":17,"x":[null,true,"AIzaSyD3x4mPl3K3yF0rT3st1ngOnlyAbCdEfGh"]}"#;
        let out = s.json(json).unwrap();
        assert_eq!(
            out,
            r#"{"sk-proj-Ab3dE5fG7hI9jK1lM3nO5pQ7":1,"text":"[REDACTED]","apiKey":"no","authorization":17,"x":[null,true,"[REDACTED]"]}"#
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["authorization"], 17);
    }

    #[test]
    fn look_alikes_stay() {
        let s = s();
        for text in [
            "Use the sk- prefix for secret keys; see sk-learn docs.",
            "The task-force met; a risk-averse plan for the desk-bound team.",
            "sk-this-is-a-long-hyphenated-phrase-without-digits",
            "short tokens: sk-abc123, ghp_short, xoxb-1, AKIA123, AIzaShort",
            "uuid 123e4567-e89b-12d3-a456-426614174000 and sha 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
            "He was the bearer of bad news, authorization: pending",
            "eyJ alone, and a.b.c, maple_sk_ and maple syrup",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
            "Große Straße 1, 東京都 ✓ 😀",
            "",
        ] {
            assert_eq!(s.text(text).unwrap(), Cow::Borrowed(text), "{text}");
            let literal = serde_json::to_string(text).unwrap();
            assert!(
                matches!(s.json_string(&literal).unwrap(), Cow::Borrowed(_)),
                "{text}"
            );
        }
        let json =
            r#"{"token":"a-normal-word-token","access_token":"","password_hint":"sk-4f9aQ"}"#;
        assert!(matches!(s.json(json).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn user_patterns_and_errors() {
        let s = Scrubber::new(&[r"ACME-[0-9]{6}", r"pin=(?P<secret>\d{4})"]).unwrap();
        assert_eq!(
            s.text("order ACME-123456, pin=1234").unwrap(),
            "order [REDACTED], pin=[REDACTED]"
        );
        let err = Scrubber::new(&["ok", "(unclosed"]).unwrap_err();
        assert_eq!(err.index, 1);
    }

    #[test]
    fn not_a_literal_is_unchanged() {
        let s = s();
        assert!(matches!(s.json_string("42").unwrap(), Cow::Borrowed("42")));
        assert!(matches!(s.json_string("\"").unwrap(), Cow::Borrowed("\"")));
    }

    #[test]
    fn needles_are_found_in_any_case_across_chunk_ends_as_the_automaton_finds_them() {
        // ok: test code (cfg(test)); the built-in needles always build.
        let needles = Needles::new().unwrap();
        assert!(needles.packed.is_some(), "Teddy on this CPU");
        let all: Vec<&str> = DEFAULT_PATTERNS
            .iter()
            .flat_map(|p| p.needles.iter().copied())
            .collect();
        let flip = |n: &str, k: usize| -> String {
            n.chars()
                .enumerate()
                .map(|(i, c)| {
                    if (i + k).is_multiple_of(2) {
                        c.to_ascii_uppercase()
                    } else {
                        c.to_ascii_lowercase()
                    }
                })
                .collect()
        };
        for (k, needle) in all.iter().enumerate() {
            for end in [CHUNK, 2 * CHUNK - needles.longest + 1, 3 * CHUNK] {
                for back in 0..needle.len() + 2 {
                    let at = end.saturating_sub(back);
                    let mut text = "q".repeat(at);
                    text.push_str(&flip(needle, k + back));
                    text.push_str(&"q".repeat(CHUNK));
                    let got = needles.find(text.as_bytes(), 0);
                    assert_eq!(got, Some(at), "{needle} at {at}");
                    assert_eq!(needles.find(text.as_bytes(), at + 1), None);
                    let auto = needles.automaton.find(text.as_bytes()).map(|m| m.start());
                    assert_eq!(got, auto);
                }
            }
        }
        // Prose without a needle, with every letter of them: none, as the automaton says.
        let prose = "the weather in paris is mild; reference schedule: booking, hotel, museum 42. "
            .repeat(300);
        assert_eq!(needles.find(prose.as_bytes(), 0), None);
        assert!(needles.automaton.find(prose.as_bytes()).is_none());
        assert!(s().is_clean(&prose));
        assert!(!s().is_clean(&format!("{prose} Authorization")));
    }

    #[test]
    fn lone_surrogate_escapes_survive() {
        let s = s();
        let literal = r#""\ud800 AKIAIOSFODNN7EXAMPLE \udc00""#;
        assert_eq!(
            s.json_string(literal).unwrap(),
            r#""\ud800 [REDACTED] \udc00""#
        );
    }
}
