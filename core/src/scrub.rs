//! Secret scrubbing of content attributes (issue 11, item 3): API keys and tokens inside the text
//! of `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`,
//! `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` are replaced by [`PLACEHOLDER`]
//! before the attribute is written (seed 003, "Content": "Never put API keys or `Authorization`
//! headers in any attribute").
//!
//! The built-in patterns are compiled once per process and shared, the user's once per processor
//! ([`Scrubber::new`]). Every built-in pattern has
//! needles, literals each of its matches holds ([`Pattern::needles`]): one vectorised scan for all
//! of them answers "can anything match?", and a built-in pattern is run only where one of its
//! needles occurs, anchored at the few offsets its match may start at ([`Pattern::lead`]). The
//! user's patterns have no needles: one [`regex::RegexSet`] scan of the string, then each pattern
//! that matched.
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
//! Cost when nothing matches: one needle scan of each string (several GB/s; plus a decode into a
//! scratch buffer for strings holding escapes, and a `RegexSet` scan with user patterns); nothing
//! is allocated for the output (`Cow::Borrowed`). Look-alikes (`task-force` holds `sk-`) cost a
//! few anchored tries each; text dense with needles falls back to one set scan of the whole text
//! and a search of each pattern that matches, so no text costs much more than that.
//!
//! Errors: the only failure is an allocation that cannot be made ([`TryReserveError`]); the caller
//! must then leave the attribute out rather than write it unscrubbed.

use crate::jsonstr::{self, Unit};
use aho_corasick::AhoCorasick;
use regex::{Regex, RegexSet};
use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::{meta, Anchored, Input, PatternID};
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
    /// The most bytes any match holds before the first of its needles (`proxy-` before
    /// `authorization`: 6). The regex is tried only at the `lead + 1` offsets up to each needle
    /// hit, so this must hold for every match; `tests::needle_driven_ranges_equal_a_whole_text_search`
    /// checks it against a search of the whole text.
    pub lead: usize,
}

// `(?-u:\b)` is an ASCII word boundary: the regex crate's fast engines cannot run a Unicode `\b`
// on non-ASCII text, and every token here is ASCII. Key words ignore ASCII case only
// (`(?i-u:...)`), as the needles do: Unicode folding would let `ſ` stand for `s` and the Kelvin
// sign for `k`, which the needle scan cannot see.
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
            b!(),
            r"(?i-u:(?:proxy-)?authorization)[\x22']?\s*[:=]\s*[\x22']?(?:(?i-u:bearer|basic|token|digest|apikey)\s+)?(?P<secret>[A-Za-z0-9\-._~+/=:]{8,})"
        ),
        needs_digit: false,
        needles: &["authorization"],
        lead: 6,
    },
    Pattern {
        name: "bearer token",
        regex: concat!(
            b!(),
            r"(?i-u:bearer)\s+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"
        ),
        needs_digit: true,
        needles: &["bearer"],
        lead: 0,
    },
    Pattern {
        name: "Anthropic API key",
        regex: concat!(b!(), r"sk-ant-[A-Za-z0-9_\-]{20,}"),
        needs_digit: false,
        needles: &["sk-ant-"],
        lead: 0,
    },
    Pattern {
        name: "OpenAI API key",
        regex: concat!(b!(), r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        needs_digit: true,
        needles: &["sk-"],
        lead: 0,
    },
    Pattern {
        name: "Google API key",
        regex: concat!(b!(), r"AIza[0-9A-Za-z_\-]{35}"),
        needs_digit: false,
        needles: &["AIza"],
        lead: 0,
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
        lead: 0,
    },
    Pattern {
        name: "credential pair (aws_secret_access_key=..., api_key: ...)",
        regex: concat!(
            b!(),
            r"(?i-u:(?:aws[_\-]?)?(?:secret[_\-]?access[_\-]?key|session[_\-]?token|x-api-key|api[_\-]?key|client[_\-]?secret|access[_\-]?token|refresh[_\-]?token))[\x22']?\s*[:=]\s*[\x22']?(?P<secret>[A-Za-z0-9/+=_\-.]{16,})"
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
        lead: 11,
    },
    Pattern {
        name: "GitHub token",
        regex: concat!(
            b!(),
            r"(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"
        ),
        needs_digit: false,
        needles: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        lead: 0,
    },
    Pattern {
        name: "Slack token or webhook",
        regex: concat!(
            b!(),
            r"(?:xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,})"
        ),
        needs_digit: false,
        needles: &["xox", "xapp-", "hooks.slack.com"],
        lead: 8,
    },
    Pattern {
        name: "JSON Web Token",
        regex: concat!(
            b!(),
            r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"
        ),
        needs_digit: false,
        needles: &["eyJ"],
        lead: 0,
    },
    Pattern {
        name: "private key block",
        regex: r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|\z)",
        needs_digit: false,
        needles: &["-----BEGIN"],
        lead: 0,
    },
    Pattern {
        name: "Maple ingest key",
        regex: concat!(b!(), r"maple_(?:sk|pk)_[A-Za-z0-9_\-]{8,}"),
        needs_digit: false,
        needles: &["maple_sk_", "maple_pk_"],
        lead: 0,
    },
];

/// Returns whether an object key names a credential (compared without `-`/`_`, ignoring ASCII
/// case): `Authorization`, `Proxy-Authorization`, `api_key`, `x-api-key`, `apiKey`,
/// `aws_secret_access_key`, `secretAccessKey`, `aws_session_token`, `client_secret`,
/// `access_token`, `refresh_token`. [`Scrubber::json`] also asks that the key hold one of the
/// needles (`api_key`, `secret`, `access_token`, ...: one `-`/`_` between words at most), so that
/// the same key counts the same wherever it is; `api__key` does not count.
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
    /// Per [`DEFAULT_PATTERNS`] entry, its regex, searched anchored at the offsets before each
    /// hit of its needles ([`Scrubber::ranges`]).
    defaults: Vec<meta::Regex>,
    /// Per [`DEFAULT_PATTERNS`] entry, the index of its `secret` capture group, when it has one.
    default_groups: Vec<Option<usize>>,
    /// Per [`DEFAULT_PATTERNS`] entry, whether its regex begins with an ASCII word boundary.
    bounded: Vec<bool>,
    /// All [`DEFAULT_PATTERNS`] in one set: which of them match anywhere, in one scan, for text
    /// too dense with needles to try each hit ([`Scrubber::ranges`]).
    dense: RegexSet,
    /// The user's patterns alone, which have no needles: one set scan of the whole text, then
    /// each pattern that matched; `None` without any.
    user: Option<RegexSet>,
    user_regexes: Vec<Regex>,
    /// Per user pattern: the index of its `secret` capture group, when it has one.
    user_groups: Vec<Option<usize>>,
}

/// The compiled [`DEFAULT_PATTERNS`] (the [`Scrubber`] fields of the same names), shared by every
/// scrubber of the process.
#[derive(Clone)]
struct Builtins {
    prefilter: Needles,
    defaults: Vec<meta::Regex>,
    default_groups: Vec<Option<usize>>,
    bounded: Vec<bool>,
    dense: RegexSet,
}

/// [`Builtins`], compiled at the first [`Scrubber::new`] (an error: the regex crate's message).
static BUILTINS: std::sync::OnceLock<Result<Builtins, String>> = std::sync::OnceLock::new();

impl Builtins {
    fn compile() -> Result<Builtins, String> {
        let mut defaults = Vec::new(); // ok: small, fixed
        let mut default_groups = Vec::new(); // ok: small, fixed
        for p in DEFAULT_PATTERNS {
            let re = meta::Regex::new(p.regex).map_err(|e| e.to_string())?;
            default_groups.push(re.group_info().to_index(PatternID::ZERO, "secret"));
            defaults.push(re);
        }
        Ok(Builtins {
            prefilter: Needles::new()?,
            defaults,
            default_groups,
            bounded: DEFAULT_PATTERNS
                .iter()
                .map(|p| p.regex.starts_with(b!()))
                .collect(),
            dense: RegexSet::new(DEFAULT_PATTERNS.iter().map(|p| p.regex))
                .map_err(|e| e.to_string())?,
        })
    }
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

/// Slots for an anchored search of a default pattern: the whole match and groups 1-3 (a test
/// checks every `secret` group of [`DEFAULT_PATTERNS`] fits).
const SLOTS: usize = 8;

/// Why [`Scrubber::ranges`] stopped walking the needle hits.
enum Stop {
    Alloc(TryReserveError),
    /// More needle visits and tries than the budget: one set scan, then the patterns that match.
    Dense,
}

impl Scrubber {
    /// The [`DEFAULT_PATTERNS`] plus `extra` (`regex` crate syntax; a group named `secret`
    /// restricts the replacement to that group; every match is replaced otherwise).
    ///
    /// Errors: the first user pattern that does not compile, or a set too large for the regex
    /// crate's default size limit.
    pub fn new<S: AsRef<str>>(extra: &[S]) -> Result<Scrubber, PatternError> {
        let internal = |message: String| PatternError {
            index: usize::MAX,
            message,
        };
        // The built-in part, compiled once per process and shared (a clone shares the compiled
        // automata; about 400 KB and 4 ms a scrubber when each compiled its own).
        let builtins = match BUILTINS.get_or_init(Builtins::compile) {
            Ok(builtins) => builtins.clone(),
            Err(message) => return Err(internal(message.clone())),
        };
        let mut user_regexes = Vec::new();
        for (index, source) in extra.iter().enumerate() {
            let re = Regex::new(source.as_ref()).map_err(|e| PatternError {
                index,
                message: e.to_string(),
            })?;
            user_regexes.push(re);
        }
        let user_groups = user_regexes
            .iter()
            .map(|re| re.capture_names().position(|n| n == Some("secret")))
            .collect();
        let user = if extra.is_empty() {
            None
        } else {
            Some(
                RegexSet::new(extra.iter().map(|s| s.as_ref()))
                    .map_err(|e| internal(e.to_string()))?,
            )
        };
        Ok(Scrubber {
            prefilter: builtins.prefilter,
            defaults: builtins.defaults,
            default_groups: builtins.default_groups,
            bounded: builtins.bounded,
            dense: builtins.dense,
            user,
            user_regexes,
            user_groups,
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

    /// Whether `text` holds nothing any pattern matches: no needle of a default pattern (one
    /// vectorised scan) and no match of a user pattern. A pattern match that the
    /// letter-and-digit rule would keep still counts as a match here.
    pub fn is_clean(&self, text: &str) -> bool {
        self.scan(text, 0).is_none()
    }

    /// Whether `bytes` holds no needle of the default patterns (ASCII case ignored): the first
    /// half of [`Scrubber::is_clean`], for bytes that need not be UTF-8
    /// ([`crate::content::Content::leaves_each_as_is`]).
    pub fn has_no_needle(&self, bytes: &[u8]) -> bool {
        self.prefilter.find(bytes, 0).is_none()
    }

    /// Whether the user gave patterns of their own (which have no needles).
    pub fn has_user_patterns(&self) -> bool {
        self.user.is_some()
    }

    /// `None` when `text` is clean ([`Scrubber::is_clean`]); otherwise where to look: the first
    /// needle hit at or after `from` (`usize::MAX`: none) and whether a user pattern matches.
    fn scan(&self, text: &str, from: usize) -> Option<(usize, bool)> {
        let hit = self.prefilter.find(text.as_bytes(), from);
        let user = self.user.as_ref().is_some_and(|u| u.is_match(text));
        match (hit, user) {
            (None, false) => None,
            (hit, user) => Some((hit.unwrap_or(usize::MAX), user)),
        }
    }

    /// The byte ranges of `text` to replace, sorted and merged; empty when nothing matches.
    /// `first` is the first needle hit (`usize::MAX`: none; no needle occurs before it) and
    /// `user` whether a user pattern matches somewhere ([`Scrubber::scan`]).
    ///
    /// Every match of a default pattern holds one of its needles at most [`Pattern::lead`] bytes
    /// from its start, so the pattern is tried, anchored, only at the offsets from `lead` before
    /// each hit of its needles up to the hit, in increasing order, and a match found moves the
    /// next try past its end: the matches of a whole-text leftmost-first search (`find_iter`),
    /// at the cost of a few anchored tries per needle hit instead of a scan of the whole text per
    /// pattern. User patterns have no needles: a set scan, then `find_iter` of each that matched.
    fn ranges(
        &self,
        text: &str,
        first: usize,
        user: bool,
    ) -> Result<Vec<(usize, usize)>, TryReserveError> {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        let mut push = |s: usize, e: usize, needs_digit: bool| -> Result<(), TryReserveError> {
            if s < e && (!needs_digit || letter_and_digit(&text[s..e])) {
                ranges.try_reserve(1)?;
                ranges.push((s, e));
            }
            Ok(())
        };
        if first != usize::MAX {
            // Per default pattern: the smallest offset it may still be tried at.
            let mut cursor = [0usize; DEFAULT_PATTERNS.len()];
            let mut slots = [None; SLOTS];
            // Dense needle hits (text made of `sk-` and `xox`) would cost a visit and tries each:
            // past this many of both, one set scan says which patterns match at all, and only
            // those are searched, from their cursors (the cost of scanning without needles). A
            // visit or a try costs about what the set scan of 30-40 bytes does.
            let budget = 8 + text.len() / 256;
            let mut spent = 0usize; // visits and tries
            let walked = self
                .prefilter
                .each_hit(text.as_bytes(), first, |(hit, needle)| {
                    spent += 1;
                    for &(p, back) in &self.prefilter.candidates[needle] {
                        let mut at = hit.saturating_sub(back).max(cursor[p]);
                        while at <= hit {
                            if text.is_char_boundary(at) && self.may_start(p, text, at) {
                                spent += 1;
                                if let Some((s, e, end)) =
                                    self.search(p, text, at, true, &mut slots)
                                {
                                    push(s, e, DEFAULT_PATTERNS[p].needs_digit)
                                        .map_err(Stop::Alloc)?;
                                    at = end;
                                    break;
                                }
                            }
                            at += 1;
                        }
                        cursor[p] = at;
                    }
                    if spent > budget {
                        return Err(Stop::Dense);
                    }
                    Ok(())
                });
            match walked {
                Ok(()) => {}
                Err(Stop::Alloc(e)) => return Err(e),
                Err(Stop::Dense) => {
                    for p in self.dense.matches(text).iter() {
                        let mut at = cursor[p];
                        while at < text.len() {
                            let Some((s, e, end)) = self.search(p, text, at, false, &mut slots)
                            else {
                                break;
                            };
                            push(s, e, DEFAULT_PATTERNS[p].needs_digit)?;
                            at = end;
                        }
                    }
                }
            }
        }
        if user {
            if let Some(set) = &self.user {
                for i in set.matches(text).iter() {
                    let re = &self.user_regexes[i];
                    match self.user_groups[i] {
                        Some(g) => {
                            for caps in re.captures_iter(text) {
                                if let Some(m) = caps.get(g).or_else(|| caps.get(0)) {
                                    push(m.start(), m.end(), false)?;
                                }
                            }
                        }
                        None => {
                            for m in re.find_iter(text) {
                                push(m.start(), m.end(), false)?;
                            }
                        }
                    }
                }
            }
        }
        merge(ranges)
    }

    /// Whether default pattern `p` may match at `at`: false only when the pattern begins with an
    /// ASCII word boundary (`(?-u:\b)`, [`Scrubber::bounded`]) and `at` is none (the bytes on
    /// both sides are word bytes, or neither is), which the regex would find after its setup.
    fn may_start(&self, p: usize, text: &str, at: usize) -> bool {
        if !self.bounded[p] {
            return true;
        }
        let word = |c: Option<&u8>| c.is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_');
        let bytes = text.as_bytes();
        word(at.checked_sub(1).and_then(|i| bytes.get(i))) != word(bytes.get(at))
    }

    /// Default pattern `p` searched in `text` from `at`, `anchored` there or not (look-behind,
    /// such as a leading `\b`, sees the text before `at`): `(start, end)` of what to replace (its
    /// `secret` group, else the whole match) and the match's end; `None` without a non-empty
    /// match.
    fn search(
        &self,
        p: usize,
        text: &str,
        at: usize,
        anchored: bool,
        slots: &mut [Option<NonMaxUsize>; SLOTS],
    ) -> Option<(usize, usize, usize)> {
        let mode = if anchored {
            Anchored::Yes
        } else {
            Anchored::No
        };
        let input = Input::new(text).range(at..).anchored(mode);
        let group = self.default_groups[p].filter(|g| 2 * g + 1 < SLOTS);
        let re = &self.defaults[p];
        let (start, end) = match (anchored, group) {
            // Anchored without a group: the match starts at `at`; a forward scan gives its end
            // (most tries fail, and this skips the pass that finds starts and groups).
            (true, None) => (at, re.search_half(&input)?.offset()),
            _ => {
                if anchored && re.search_half(&input).is_none() {
                    return None;
                }
                let want = 2 * group.unwrap_or(0) + 2;
                slots[..want].fill(None);
                re.search_slots(&input, &mut slots[..want])?;
                (slots[0]?.get(), slots[1]?.get())
            }
        };
        if start >= end {
            return None;
        }
        let secret = group.and_then(|g| Some((slots[2 * g]?.get(), slots[2 * g + 1]?.get())));
        let (s, e) = secret.unwrap_or((start, end));
        Some((s, e, end))
    }

    /// Scrubs plain text (a decoded string, such as a tool's string result written as its text):
    /// every secret replaced by [`PLACEHOLDER`]; borrowed when nothing is replaced.
    pub fn text<'a>(&self, text: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        self.text_from(text, 0)
    }

    /// [`Scrubber::text`] when no needle occurs before byte `from` of `text`.
    fn text_from<'a>(&self, text: &'a str, from: usize) -> Result<Cow<'a, str>, TryReserveError> {
        let Some((first, user)) = self.scan(text, from) else {
            return Ok(Cow::Borrowed(text));
        };
        let ranges = self.ranges(text, first, user)?;
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
        self.json_string_from(literal, 0)
    }

    /// [`Scrubber::json_string`] when no needle occurs before byte `from` of `literal`.
    fn json_string_from<'a>(
        &self,
        literal: &'a str,
        from: usize,
    ) -> Result<Cow<'a, str>, TryReserveError> {
        let bytes = literal.as_bytes();
        if bytes.len() < 2 || bytes[0] != b'"' || bytes[bytes.len() - 1] != b'"' {
            return Ok(Cow::Borrowed(literal));
        }
        let inner = &literal[1..literal.len() - 1];
        Ok(
            match self.inner_from(inner, from.saturating_sub(1), true)? {
                None => Cow::Borrowed(literal),
                Some(s) => Cow::Owned(s),
            },
        )
    }

    /// Scrubs the inside of one JSON string literal (its escaped source text without the quotes,
    /// as [`Scrubber::json_string`] scrubs a whole literal): borrowed when nothing is replaced.
    pub fn json_inner<'a>(&self, inner: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        Ok(match self.inner_from(inner, 0, false)? {
            None => Cow::Borrowed(inner),
            Some(s) => Cow::Owned(s),
        })
    }

    /// The scrubbed form of a literal's inside `inner`, between quotes when `quote`; `None` when
    /// nothing is replaced. No needle occurs before byte `from` of `inner`.
    fn inner_from(
        &self,
        inner: &str,
        from: usize,
        quote: bool,
    ) -> Result<Option<String>, TryReserveError> {
        let quotes = if quote { 2 } else { 0 };
        if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
            // Raw text is the decoded text.
            return Ok(match self.text_from(inner, from)? {
                Cow::Borrowed(_) => None,
                Cow::Owned(s) => {
                    let mut out = String::new();
                    out.try_reserve(s.len() + quotes)?;
                    if quote {
                        out.push('"');
                    }
                    out.push_str(&s);
                    if quote {
                        out.push('"');
                    }
                    Some(out)
                }
            });
        }
        let mut decoded = String::new();
        decoded.try_reserve(inner.len())?;
        decode_into(inner, &mut decoded);
        let Some((first, user)) = self.scan(&decoded, 0) else {
            return Ok(None);
        };
        let ranges = self.ranges(&decoded, first, user)?;
        if ranges.is_empty() {
            return Ok(None);
        }
        let mut out = String::new();
        out.try_reserve(inner.len() + quotes)?;
        if quote {
            out.push('"');
        }
        rewrite(inner, &ranges, &mut out);
        if quote {
            out.push('"');
        }
        Ok(Some(out))
    }

    /// Whether the key `literal` (a JSON string literal, quotes included) names a credential: its
    /// decoded text is one of [`is_secret_key`]'s names and holds a needle (`hit`: its raw text
    /// does; one `-`/`_` between words at most, as the needles spell them).
    fn names_credential(&self, literal: &str, hit: bool) -> bool {
        if literal.len() < 2 || literal.len() > 120 {
            return false;
        }
        let inner = &literal[1..literal.len() - 1];
        if memchr::memchr(b'\\', inner.as_bytes()).is_none() {
            return hit && is_secret_key(inner);
        }
        let mut decoded = String::new();
        decode_into(inner, &mut decoded); // ok: at most 120 bytes
        is_secret_key(&decoded) && (hit || self.prefilter.find(decoded.as_bytes(), 0).is_some())
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
        let every = has_unicode_escape(bytes) || self.user.is_some();
        self.json_walk(json, every, |from| self.prefilter.find(bytes, from))
    }

    /// [`Scrubber::json`] of `json` given `every` (a `\u` escape or user patterns) and
    /// `next_hit(from)`, the start of the first needle hit at or after byte `from` of `json`.
    fn json_walk<'a>(
        &self,
        json: &'a str,
        every: bool,
        mut next_hit: impl FnMut(usize) -> Option<usize>,
    ) -> Result<Cow<'a, str>, TryReserveError> {
        let bytes = json.as_bytes();
        // The start of the next needle hit at or after the current literal (`usize::MAX`: none).
        let mut hit = next_hit(0).unwrap_or(usize::MAX);
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
            let end = crate::jsonstr::literal_end(bytes, start);
            let literal = &json[start..end];
            if hit < start {
                hit = next_hit(start).unwrap_or(usize::MAX);
            }
            // Needles hold no `"`: a hit starting inside the literal lies inside it.
            let has_hit = hit < end;
            let mut j = end;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            let is_key = j < bytes.len() && bytes[j] == b':';
            if is_key {
                // A credential key is one that holds a needle in its decoded text (so skipping
                // literals without a hit stays exact); with a `\u` escape anywhere (`every`) the
                // needle may be spelled escaped (`"\u0061pi_key"`). Whether a key counts never
                // depends on the text around it: `api__key` (no needle) is never one.
                secret_key = (has_hit || every) && self.names_credential(literal, has_hit);
            } else {
                let replaced: Option<Cow<'_, str>> =
                    if secret_key && decoded_len_at_least(literal, MIN_KEYED_SECRET) {
                        Some(Cow::Borrowed("\"[REDACTED]\""))
                    } else if has_hit || every {
                        match self.json_string_from(literal, hit.saturating_sub(start))? {
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

/// Needle hits a [`SourceScrubber`] keeps at most (and one per 128 bytes of the source on
/// average); a source with more (text made of look-alikes) has each value scanned on its own.
const MAX_SOURCE_HITS: usize = 1 << 14;

/// The scrubber of one source text (`genkit:input` or `genkit:output`) for the writers that copy
/// values out of it ([`crate::out::Out::scrubbing`], issue 11: scrubbing in the mapping's pass).
/// The source is scanned for needles once, here; a value copied out of it (a slice of it, as the
/// mapping's raw values are) with no needle hit in or just before its bytes is written as it is,
/// without a scan of its own, and only the values holding a hit are scrubbed
/// ([`Scrubber::json`]). Exact: without a `\u` escape and without user patterns, a value that
/// holds no needle cannot change ([`Scrubber::json`]'s own fast path); with either, or with more
/// hits than it keeps ([`MAX_SOURCE_HITS`]), every value is scrubbed on its own. A value that is not a slice
/// of the source is always scrubbed on its own.
#[derive(Debug)]
pub struct SourceScrubber<'s> {
    scrubber: &'s Scrubber,
    /// The address of the first byte scanned: hits are offsets from it.
    base: usize,
    /// The address range whose values the scan covers (the source, or the region of
    /// [`SourceScrubber::of_region`]): a value copied out of it lies inside.
    start: usize,
    end: usize,
    /// The start offset of every needle hit in the scanned bytes, increasing; `None`: not used
    /// (see the type's docs), every value is scanned.
    hits: Option<Vec<usize>>,
}

impl<'s> SourceScrubber<'s> {
    /// The scrubber for values copied out of `source`; `None` when scrubbing can change nothing
    /// in it (no needle, no `\u` escape, no user pattern): the writers then need none. Never
    /// fails: when the hit list cannot be allocated, every value is scanned on its own.
    pub fn of(scrubber: Option<&'s Scrubber>, source: Option<&str>) -> Option<SourceScrubber<'s>> {
        let (scrubber, source) = (scrubber?, source?);
        let found = Self::scan(scrubber, source.as_bytes());
        if matches!(&found, Some(hits) if hits.is_empty()) {
            return None;
        }
        let start = source.as_ptr() as usize;
        Some(SourceScrubber {
            scrubber,
            base: start,
            start,
            end: start + source.len(),
            hits: found,
        })
    }

    /// The scrubber for values copied out of `region`, a byte range of `source` (the extent of
    /// the pieces the writers copy, [`crate::genkit::Extent`]): only the region is scanned (and
    /// the few bytes before it a needle overlapping its first value may start in), and only
    /// values inside it take the scan's answer; any other value, a slice of `source` outside
    /// the region or not, is scrubbed on its own, exactly as [`SourceScrubber::of`]'s values
    /// are when they are not slices of its source. The result is therefore the same as with
    /// `of`, whatever the region. `None` only without a scrubber (values not in the region may
    /// still need one): `None` for `region`, or a range that is not one of `source`, scans
    /// nothing and has every value scrubbed on its own.
    pub fn of_region(
        scrubber: Option<&'s Scrubber>,
        source: &str,
        region: Option<std::ops::Range<usize>>,
    ) -> Option<SourceScrubber<'s>> {
        let scrubber = scrubber?;
        let at = source.as_ptr() as usize;
        let region = region.filter(|r| r.start <= r.end && r.end <= source.len());
        let Some(region) = region else {
            return Some(SourceScrubber {
                scrubber,
                base: at,
                start: at,
                end: at,
                hits: None,
            });
        };
        // A needle hit counts for a value when it starts at most `longest - 1` bytes before it
        // (`clean`): those bytes are scanned too.
        let from = region
            .start
            .saturating_sub(scrubber.prefilter.longest.saturating_sub(1));
        let hits = Self::scan(scrubber, &source.as_bytes()[from..region.end]);
        Some(SourceScrubber {
            scrubber,
            base: at + from,
            start: at + region.start,
            end: at + region.end,
            hits,
        })
    }

    /// The needle hits of `bytes`, increasing; `None` when values must each be scanned on
    /// their own (a `\u` escape, user patterns, more hits than kept, no memory for the list).
    fn scan(scrubber: &Scrubber, bytes: &[u8]) -> Option<Vec<usize>> {
        if scrubber.user.is_some() || has_unicode_escape(bytes) {
            return None;
        }
        // Text dense with needles (look-alikes every few words) has most values holding a hit
        // anyway: listing them all cost more than scanning each value (perf: Teddy restarted at
        // every hit), so the list stops at one hit per 128 bytes on average.
        let most = MAX_SOURCE_HITS.min(16 + bytes.len() / 128);
        let mut hits = Vec::new();
        let listed = scrubber.prefilter.each_hit(bytes, 0, |(at, _)| {
            if hits.len() == most || hits.try_reserve(1).is_err() {
                return Err(());
            }
            hits.push(at);
            Ok(())
        });
        listed.ok().map(|()| hits)
    }

    /// Whether `value` is known to hold nothing to scrub: a slice of the source with no needle
    /// hit starting in it or overlapping its start.
    fn clean(&self, value: &str) -> bool {
        let (Some(hits), Some(off)) = (&self.hits, self.offset(value)) else {
            return false;
        };
        let lo = off.saturating_sub(self.scrubber.prefilter.longest - 1);
        let i = hits.partition_point(|&h| h < lo);
        i == hits.len() || hits[i] >= off + value.len()
    }

    /// [`Scrubber::json`] of a value copied out of the source: the source's hits are its hits.
    /// Inlined: most values hold no hit and are answered here, borrowed.
    #[inline]
    pub fn json<'a>(&self, raw: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        let (Some(hits), Some(off)) = (&self.hits, self.offset(raw)) else {
            return self.scrubber.json(raw);
        };
        // The walk below looks at the hits starting in the value only.
        let first = hits.partition_point(|&h| h < off);
        if hits.get(first).is_none_or(|&h| h >= off + raw.len()) {
            return Ok(Cow::Borrowed(raw));
        }
        self.json_with_hits(raw, hits, off)
    }

    /// [`SourceScrubber::json`] of a value starting at `off` that holds a hit.
    fn json_with_hits<'a>(
        &self,
        raw: &'a str,
        hits: &[usize],
        off: usize,
    ) -> Result<Cow<'a, str>, TryReserveError> {
        // Without a `\u` escape in the source (`hits` kept), none in `raw`: `every` is false.
        self.scrubber.json_walk(raw, false, |from| {
            let i = hits.partition_point(|&h| h < off + from);
            hits.get(i).map(|&h| h - off).filter(|&h| h < raw.len())
        })
    }

    /// Where `value` starts, from the first byte scanned, when it lies in the range the scan
    /// covers.
    fn offset(&self, value: &str) -> Option<usize> {
        let at = value.as_ptr() as usize;
        (at >= self.start && at + value.len() <= self.end).then(|| at - self.base)
    }

    /// [`Scrubber::json_inner`] of a literal's inside copied out of the source.
    pub fn json_inner<'a>(&self, inner: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        if self.clean(inner) {
            return Ok(Cow::Borrowed(inner));
        }
        self.scrubber.json_inner(inner)
    }

    /// [`Scrubber::text`] of a text decoded from the source (borrowed from it when it had no
    /// escape).
    pub fn text<'a>(&self, text: &'a str) -> Result<Cow<'a, str>, TryReserveError> {
        if self.clean(text) {
            return Ok(Cow::Borrowed(text));
        }
        self.scrubber.text(text)
    }
}

/// The prefilter: the needles of every [`DEFAULT_PATTERNS`] entry, matched ignoring ASCII case.
/// Aho-Corasick's case-insensitive automaton has no vectorised searcher (about 300 MB/s on prose);
/// here the text is lower-cased a chunk at a time into a buffer and searched by the crate's packed
/// (Teddy, SIMD) searcher. A text of [`SHORT_TEXT`] bytes or more is searched for
/// [`FINGERPRINTS`], a tail of each needle, and at each fingerprint hit the needles ending with it
/// are compared with the text, ignoring ASCII case; a shorter one for the needles themselves
/// ([`Search`]), lower-cased into a zero-padded buffer ([`Needles::each_hit_padded`]). Either way the hits are those of the needles: a needle occurs exactly where its
/// fingerprint occurs `back` bytes after its start and the bytes before match. Where Teddy is not
/// available (no SSSE3/NEON), the case-insensitive automaton over the needles.
#[derive(Debug, Clone)]
struct Needles {
    /// For texts of [`SHORT_TEXT`] bytes or more: Teddy over [`FINGERPRINTS`].
    long: Search,
    /// For shorter texts: Teddy over the needles themselves (35 patterns: "fat" Teddy), which
    /// costs less a call there (callgrind, `is_clean` of 18 to 50 bytes of prose: 306-476
    /// instructions against 432-761 by the fingerprints; even at 56 bytes).
    short: Search,
    automaton: AhoCorasick,
    /// The needles, lower-cased, without those that hold another (a hit's needle is an index here).
    needles: Vec<String>,
    /// The longest needle in bytes.
    longest: usize,
    /// Per needle: the patterns a hit of it may belong to, each with how many bytes before the hit
    /// its match may start ([`Pattern::lead`] plus where the needle sits in the pattern's own
    /// needle that holds it).
    candidates: Vec<Vec<(usize, usize)>>,
}

/// One way of finding the needles with Teddy ([`Needles::walk`]): the patterns it searches for
/// (fingerprints: tails of the needles, none holding another other than at its end,
/// [`fingerprints`]) and how a hit of one is a needle hit.
#[derive(Debug, Clone)]
struct Search {
    /// `None` where Teddy is not available.
    packed: Option<aho_corasick::packed::Searcher>,
    /// Per pattern of `packed`: the needles ending with it, each with how many bytes before the
    /// pattern it starts.
    ends: Vec<Vec<(usize, usize)>>,
    /// The longest fingerprint in bytes (chunks overlap by one less).
    longest_print: usize,
}

/// The length from which a text is searched for [`FINGERPRINTS`] ([`Needles::short`]).
const SHORT_TEXT: usize = 56;

/// The buffer a text shorter than [`SHORT_TEXT`] is searched in ([`Needles::each_hit_padded`]):
/// at least `SHORT_TEXT` bytes and at least fat Teddy's shortest haystack (18 bytes on AVX2 with
/// the needles' 3-byte masks; `tests::short_texts_are_searched_padded` checks both).
const PADDED: usize = 64;

/// What Teddy searches for: one tail of each needle (each needle's fingerprint is the longest
/// entry it ends with; a needle ending with none would be its own), lower-cased. Why tails, and
/// why this order:
///
/// - Teddy tests the first 3 bytes of each pattern (its shortest, `sk-`, has 3) with nibble masks
///   and verifies the candidates. A needle's own first 3 bytes are common English (`acc`ess,
///   `ses`sion, `ref`erence, `sec`ond, `aut`hor, `abi`lity); its tail's often are not (`_to`ken,
///   `hor`ization, `e_s`k_), and the token keys spelled with `_` or `-` share two tails
///   (`_token`, `-token`). Every tail holds a byte other than a letter, or is the whole needle,
///   or is 6 letters long or more: a short tail such as `token` or `iza` would be a hit of its
///   own in ordinary prose.
/// - 32 patterns at most is "slim" Teddy (32 bytes a step, 8 buckets); more is "fat" (16 bytes).
/// - aho-corasick 1.1 puts the pattern of index `i` into bucket `7 - i % 8` unless an earlier one
///   has the same low nibbles in the tested bytes (then into that one's bucket), and a bucket's
///   masks accept every mix of its patterns' nibbles. The order gives the buckets
///   `{sk- secret -begin}`, `{hu_ hr_ xox xapp-}`, `{akia asia api_key api-key apikey}`,
///   `{_token -token ntoken eyj}`, ...: chosen by simulating the masks over 4 MB of English
///   technical text (licences, Node.js and Rust documentation, git release notes; not the
///   benchmark's) for the fewest candidates, so that common trigrams such as `ast`, `sch` or `the`
///   pass no bucket. Another crate version may bucket them otherwise: only the speed changes.
///
/// `tests::fingerprints_cover_every_needle` checks the list against the needles.
const FINGERPRINTS: &[&str] = &[
    "akia",
    "horization",
    "a3t",
    "sk-",
    "hu_",
    "bearer",
    "acca",
    "_token",
    "asia",
    "htoken",
    "b_pat_",
    "secret",
    "hr_",
    "aiza",
    "ghp_",
    "-token",
    "api_key",
    "ho_",
    "e_sk_",
    "-begin",
    "xox",
    "abia",
    "ghs_",
    "ntoken",
    "api-key",
    "apikey",
    "e_pk_",
    "access-token",
    "xapp-",
    "accesstoken",
    "hooks.slack.com",
    "eyj",
];

/// Bytes lower-cased and searched at a time.
const CHUNK: usize = 4096;

thread_local! {
    /// The lower-cased chunk of [`Needles::each_hit`], one per thread.
    static CHUNK_BUFFER: std::cell::RefCell<[u8; CHUNK]> = const { std::cell::RefCell::new([0; CHUNK]) };
}

impl Needles {
    fn new() -> Result<Needles, String> {
        Needles::with_fingerprints(FINGERPRINTS)
    }

    /// The needles with Teddy searching a long text for the longest of `listed` each needle ends
    /// with (its own text when none; `&[]`: every needle its own fingerprint, as a short text
    /// is searched), `listed`'s order first.
    fn with_fingerprints(listed: &[&str]) -> Result<Needles, String> {
        let mut needles: Vec<String> = Vec::new(); // ok: a few dozen constants
        for n in DEFAULT_PATTERNS.iter().flat_map(|p| p.needles.iter()) {
            let n = n.to_ascii_lowercase();
            if !needles.contains(&n) {
                needles.push(n);
            }
        }
        // A needle holding another is redundant (`sk-ant-` holds `sk-`): a text holds it only
        // where it holds the shorter one, inside the same span. Without such pairs, no two
        // needles start at the same offset.
        let all = needles.clone();
        needles.retain(|n| !all.iter().any(|m| m != n && n.contains(m.as_str())));
        let candidates = needles
            .iter()
            .map(|m| {
                let mut list = Vec::new(); // ok: at most one entry per pattern
                for (p, pattern) in DEFAULT_PATTERNS.iter().enumerate() {
                    let within = pattern
                        .needles
                        .iter()
                        .filter_map(|n| n.to_ascii_lowercase().rfind(m.as_str()))
                        .max();
                    if let Some(within) = within {
                        list.push((p, pattern.lead + within));
                    }
                }
                list
            })
            .collect();
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(&needles)
            .map_err(|e| e.to_string())?;
        let short = Search::new(&needles, &[]).ok_or("needles that hold each other")?;
        // A list that does not fit the needles (a test says it does): each needle its own.
        let long = Search::new(&needles, listed).unwrap_or_else(|| short.clone());
        Ok(Needles {
            long,
            short,
            automaton,
            longest: needles.iter().map(|n| n.len()).max().unwrap_or(1),
            needles,
            candidates,
        })
    }

    /// The start of the first needle hit at or after `from`, or `None`.
    fn find(&self, text: &[u8], from: usize) -> Option<usize> {
        match self.each_hit(text, from, Err) {
            Ok(()) => None,
            Err(at) => Some(at.0),
        }
    }

    /// Calls `f(start, needle)` for every needle occurrence starting at or after `from`, in
    /// increasing order of start, until `f` returns an error (which is returned).
    fn each_hit<E>(
        &self,
        text: &[u8],
        from: usize,
        f: impl FnMut((usize, usize)) -> Result<(), E>,
    ) -> Result<(), E> {
        if text.len().saturating_sub(from) >= SHORT_TEXT {
            return self.each_hit_by(&self.long, text, from, f);
        }
        match &self.short.packed {
            Some(packed) if packed.minimum_len() <= PADDED => {
                self.each_hit_padded(packed, text, from, f)
            }
            _ => self.each_hit_by(&self.short, text, from, f),
        }
    }

    /// [`Needles::each_hit`] of a text shorter than [`SHORT_TEXT`] bytes from `from` (most tool
    /// arguments and results): its bytes lower-cased into a zeroed stack buffer of [`PADDED`]
    /// bytes, searched whole by Teddy over the needles themselves (`packed`, of `self.short`).
    /// The padding gives Teddy the haystack length it needs (a shorter one falls to the crate's
    /// Rabin-Karp, which cost more than the search itself on a tool span, BENCHMARKS.md "Stop
    /// 32"), and no needle holds a NUL byte, so every hit lies inside the text.
    fn each_hit_padded<E>(
        &self,
        packed: &aho_corasick::packed::Searcher,
        text: &[u8],
        from: usize,
        mut f: impl FnMut((usize, usize)) -> Result<(), E>,
    ) -> Result<(), E> {
        let rest = text.get(from..).unwrap_or_default();
        let mut buf = [0u8; PADDED];
        let Some(head) = buf.get_mut(..rest.len()) else {
            // Not reached: the caller passes fewer than SHORT_TEXT <= PADDED bytes.
            return self.each_hit_by(&self.short, text, from, f);
        };
        head.copy_from_slice(rest);
        // In place over the fixed 64 bytes (four SSE2 steps the compiler unrolls); [`lower_into`]
        // and its CPU check are made for the 4 KiB chunks and were not tried here.
        for b in &mut buf {
            *b = b.to_ascii_lowercase();
        }
        // The text, or Teddy's shortest haystack when the text is shorter.
        let end = rest.len().max(packed.minimum_len());
        let mut next = 0;
        while next < rest.len() {
            let Some(m) = packed.find_in(&buf[..end], aho_corasick::Span::from(next..end)) else {
                break;
            };
            let q = m.start();
            if let Some(hit) = self.needle_at(&self.short, rest, 0, q, m.pattern().as_usize()) {
                f((from + hit.0, hit.1))?;
            }
            next = q + 1;
        }
        Ok(())
    }

    /// The needle of `search` whose fingerprint (pattern `pattern`) was found at byte `q` of
    /// `text`, with where it starts, when it starts at or after `from` and its bytes before the
    /// fingerprint are in `text` (ASCII case ignored); `None` otherwise.
    fn needle_at(
        &self,
        search: &Search,
        text: &[u8],
        from: usize,
        q: usize,
        pattern: usize,
    ) -> Option<(usize, usize)> {
        for &(needle, back) in search.ends.get(pattern)? {
            let Some(start) = q.checked_sub(back).filter(|&s| s >= from) else {
                continue;
            };
            // A needle that is its own fingerprint (`back` 0) is the one Teddy found.
            let needle_text = self.needles[needle].as_bytes();
            let holds = back == 0
                || text
                    .get(start..start + needle_text.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(needle_text));
            if holds {
                return Some((start, needle));
            }
        }
        None
    }

    /// [`Needles::each_hit`] by `search`.
    fn each_hit_by<E>(
        &self,
        search: &Search,
        text: &[u8],
        from: usize,
        mut f: impl FnMut((usize, usize)) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(packed) = &search.packed else {
            let mut at = from;
            while at < text.len() {
                let input = aho_corasick::Input::new(text).range(at..);
                let Some(m) = self.automaton.find(input) else {
                    break;
                };
                f((m.start(), m.pattern().as_usize()))?;
                at = m.start() + 1;
            }
            return Ok(());
        };
        // The thread's chunk buffer, not zeroed per call (zeroing 4 KiB cost a third of a
        // clean 1 KB scan); a nested call (none today) or a thread whose locals are being
        // destroyed gets a stack buffer.
        let walked = CHUNK_BUFFER.try_with(|buf| {
            let mut buf = buf.try_borrow_mut().ok()?;
            Some(self.walk(search, packed, &mut buf[..], text, from, &mut f))
        });
        match walked {
            Ok(Some(result)) => result,
            _ => self.walk(search, packed, &mut [0u8; CHUNK], text, from, f),
        }
    }

    /// [`Needles::each_hit`] with Teddy (`packed`, of `search`), `buf.len()` bytes lower-cased at
    /// a time.
    ///
    /// Teddy reports the leftmost fingerprint lying inside the searched span; searching again
    /// from one past each, it reports every fingerprint occurrence once, in order, and at each
    /// the needles ending with it are compared with the text. Their hits come in order of start
    /// too, and none is missed at a chunk's end, because no fingerprint holds another other than
    /// at its end ([`fingerprints`]):
    ///
    /// - Two fingerprints starting at one offset would be one the prefix of the other; a
    ///   fingerprint cut by the chunk's end, with one found after it inside the chunk, would hold
    ///   that one before its end. So each occurrence is found, once.
    /// - At most one needle ending with a fingerprint occurs at an occurrence of it: two would end
    ///   at one offset, the shorter inside the longer (no needle holds another).
    /// - A needle `B` found at a later fingerprint hit than a needle `A` does not start before
    ///   `A`: if it did, it would end before `A`'s end (it does not hold `A`), and `A`'s
    ///   fingerprint, running from before `B`'s to `A`'s end, would hold `B`'s before its own end.
    fn walk<E>(
        &self,
        search: &Search,
        packed: &aho_corasick::packed::Searcher,
        buf: &mut [u8],
        text: &[u8],
        from: usize,
        mut f: impl FnMut((usize, usize)) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = buf.len();
        let mut at = from; // the chunk's start
        let mut next = from; // the first offset not searched yet
        while at < text.len() {
            let end = (at + n).min(text.len());
            let chunk = &text[at..end];
            let lower = &mut buf[..chunk.len()];
            lower_into(lower, chunk);
            while next < end {
                let span = aho_corasick::Span::from(next - at..lower.len());
                let Some(m) = packed.find_in(&*lower, span) else {
                    break;
                };
                let q = at + m.start();
                if let Some(hit) = self.needle_at(search, text, from, q, m.pattern().as_usize()) {
                    f(hit)?;
                }
                next = q + 1;
            }
            if end == text.len() {
                break;
            }
            // A fingerprint cut by the chunk's end starts in the overlap, searched again next
            // chunk.
            at = end - (search.longest_print - 1).min(n / 2);
            next = next.max(at);
        }
        Ok(())
    }
}

/// `to[i] = from[i].to_ascii_lowercase()` for each `i` below both lengths: every byte the secret
/// scan searches ([`Needles::walk`]). With AVX2 where the CPU has it (32 bytes a step), else as
/// the compiler vectorises it for the x86_64 baseline (SSE2, 16 bytes: 0.75 instructions a byte,
/// 7.3k of a 10 KB span's 261k; BENCHMARKS.md "Stop 38").
fn lower_into(to: &mut [u8], from: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above), and with it every feature that
        // `enable = "avx2"` implies (AVX, SSE3-SSE4.2): the only requirement of the call.
        unsafe { lower_into_avx2(to, from) };
        return;
    }
    lower_into_any(to, from);
}

/// [`lower_into`]'s loop, compiled for whatever features its caller has.
#[inline(always)]
fn lower_into_any(to: &mut [u8], from: &[u8]) {
    for (to, &c) in to.iter_mut().zip(from) {
        *to = c.to_ascii_lowercase();
    }
}

/// [`lower_into`]'s loop compiled with AVX2. Callers must know the CPU has AVX2 (calling it is
/// `unsafe` for that reason alone).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lower_into_avx2(to: &mut [u8], from: &[u8]) {
    lower_into_any(to, from);
}

impl Search {
    /// Teddy over the fingerprints of `needles` (lower-cased, none holding another) from `listed`:
    /// each needle's is the longest entry it ends with, else the needle itself; the entries of
    /// `listed` that are some needle's first, in their order. `None` when one fingerprint would
    /// hold another other than at its end ([`fingerprints`]).
    fn new(needles: &[String], listed: &[&str]) -> Option<Search> {
        let (prints, ends) = fingerprints(needles, listed)?;
        let packed = aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(&prints)
            .build();
        Some(Search {
            packed,
            ends,
            longest_print: prints.iter().map(|n| n.len()).max().unwrap_or(1),
        })
    }
}

/// The fingerprints of [`Search::new`] and, per fingerprint, the needles ending with it and how
/// far before it they start.
#[allow(clippy::type_complexity)]
fn fingerprints(
    needles: &[String],
    listed: &[&str],
) -> Option<(Vec<String>, Vec<Vec<(usize, usize)>>)> {
    let own: Vec<String> = needles
        .iter()
        .map(|n| {
            let tail = listed
                .iter()
                .filter(|t| !t.is_empty() && n.ends_with(**t))
                .max_by_key(|t| t.len());
            tail.map_or_else(|| n.clone(), |t| t.to_string())
        })
        .collect();
    let mut prints: Vec<String> = Vec::new(); // ok: at most one per needle
    for p in listed
        .iter()
        .map(|t| t.to_string())
        .chain(own.iter().cloned())
    {
        if own.contains(&p) && !prints.contains(&p) {
            prints.push(p);
        }
    }
    // Teddy reports the leftmost fingerprint that lies inside the searched span: one holding
    // another before its own end (`ho_o` holding `ho_`) would hide it where both occur, or where
    // a chunk's end cuts the longer one, and needle hits could come out of order
    // ([`Needles::walk`]). Holding it at the end (`access-token` and `-token`) hides nothing:
    // the longer one is found first, the other one past it.
    let hides = prints.iter().any(|a| {
        prints
            .iter()
            .any(|b| a != b && b[..b.len() - 1].contains(a.as_str()))
    });
    if hides {
        return None;
    }
    let mut ends = vec![Vec::new(); prints.len()];
    for (needle, (n, p)) in needles.iter().zip(&own).enumerate() {
        let back = n.len() - p.len();
        let i = prints.iter().position(|q| q == p)?;
        ends[i].push((needle, back));
    }
    Some((prints, ends))
}

/// Whether `bytes` holds a backslash followed by `u` anywhere (a JSON `\u` escape, or an escaped
/// backslash before a `u`: either way the text is treated as possibly escaped, which only costs
/// a closer look). A `memchr` over the first few backslashes, which most short texts do not hold
/// (far cheaper there than setting up a substring search); past them, a text with many `\n` and
/// `\"` escapes (a long prompt) would stop at each, and the rest is searched for `\u` as a whole
/// (one `memchr::memmem::Finder` for the process).
pub fn has_unicode_escape(bytes: &[u8]) -> bool {
    let mut at = 0;
    for _ in 0..BACKSLASHES_ONE_BY_ONE {
        let Some(k) = memchr::memchr(b'\\', &bytes[at..]) else {
            return false;
        };
        if bytes.get(at + k + 1) == Some(&b'u') {
            return true;
        }
        at += k + 1;
    }
    UNICODE_ESCAPE.find(&bytes[at..]).is_some()
}

/// Backslashes [`has_unicode_escape`] checks one at a time before searching for `\u`.
const BACKSLASHES_ONE_BY_ONE: usize = 8;

/// The substring searcher for `\u` of [`has_unicode_escape`], built once (memchr's vectorised
/// search for the pair of bytes).
static UNICODE_ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));

/// `ranges` sorted, overlapping and touching ones joined.
fn merge(mut ranges: Vec<(usize, usize)>) -> Result<Vec<(usize, usize)>, TryReserveError> {
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

fn letter_and_digit(s: &str) -> bool {
    s.bytes().any(|c| c.is_ascii_digit()) && s.bytes().any(|c| c.is_ascii_alphabetic())
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

    /// Both builds of the chunk's lower-casing against `to_ascii_lowercase`: every byte value at
    /// every offset of lengths 0-100 (the AVX2 steps and their tails), with a shorter source.
    #[test]
    fn lower_casing_agrees_in_every_build() {
        type Lower = fn(&mut [u8], &[u8]);
        let mut builds: Vec<(&str, Lower)> = vec![
            ("dispatch", lower_into),
            ("any", |t, f| lower_into_any(t, f)),
        ];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: pushed only when the CPU has AVX2.
            builds.push(("avx2", |t, f| unsafe { lower_into_avx2(t, f) }));
        }
        for len in 0..=100usize {
            for byte in 0..=255u8 {
                let from: Vec<u8> = (0..len)
                    .map(|i| {
                        if i % 7 == 3 {
                            byte
                        } else {
                            (i as u8).wrapping_mul(37)
                        }
                    })
                    .collect();
                let want: Vec<u8> = from.iter().map(u8::to_ascii_lowercase).collect();
                for (name, lower) in &builds {
                    let mut to = vec![0xAAu8; len + 1];
                    lower(&mut to[..len], &from);
                    assert_eq!(&to[..len], &want[..], "{name} {len} {byte}");
                    assert_eq!(to[len], 0xAA, "{name} {len} wrote past the end");
                    // A shorter source: only its bytes are written.
                    let mut to = vec![0xAAu8; len];
                    lower(&mut to, &from[..len / 2]);
                    assert_eq!(&to[..len / 2], &want[..len / 2], "{name} {len}");
                    assert!(to[len / 2..].iter().all(|&b| b == 0xAA), "{name} {len}");
                }
            }
        }
    }

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
    fn unicode_escape_is_a_backslash_then_u_anywhere() {
        for (text, expected) in [
            ("", false),
            ("plain text", false),
            ("\\u0061", true),
            ("a\\nb", false),
            ("ends with \\", false),
            ("\\\\u", true),
            ("\\n\\t then \\u00e9", true),
            ("u\\", false),
        ] {
            assert_eq!(has_unicode_escape(text.as_bytes()), expected, "{text:?}");
            assert_eq!(
                has_unicode_escape(text.as_bytes()),
                text.contains("\\u"),
                "{text:?}: as a substring search answers"
            );
        }
        // Past the backslashes checked one at a time: texts of `\n`, `\\`, `\"` escapes with a
        // `\u` (or a backslash then `u`) at every place, or none.
        let pieces = ["\\n", "\\\\", "\\\"", "ab", "u", "\\", "é", "\\u00e9"];
        let mut next = crate::lcg(0x9e3779b97f4a7c15u64);
        for _ in 0..5_000 {
            // Without `\u` pieces two times in three.
            let kinds = if next(3) == 0 {
                pieces.len()
            } else {
                pieces.len() - 1
            };
            let text: String = (0..next(40)).map(|_| pieces[next(kinds)]).collect();
            assert_eq!(
                has_unicode_escape(text.as_bytes()),
                text.contains("\\u"),
                "{text:?}"
            );
        }
    }

    #[test]
    fn defaults_compile() {
        let s = s();
        assert_eq!(s.defaults.len(), DEFAULT_PATTERNS.len());
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
        assert!(needles.long.packed.is_some(), "Teddy on this CPU");
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

    /// The matches of every default pattern by a leftmost-first search of the whole text (the
    /// regex crate's `find_iter`), as [`Scrubber::ranges`] merges them.
    fn whole_text_ranges(regexes: &[Regex], text: &str) -> Vec<(usize, usize)> {
        let mut ranges = Vec::new();
        for (p, re) in DEFAULT_PATTERNS.iter().zip(regexes) {
            let group = re.capture_names().position(|n| n == Some("secret"));
            for caps in re.captures_iter(text) {
                let m = group.and_then(|g| caps.get(g)).or_else(|| caps.get(0));
                let m = m.unwrap(); // ok: test code, group 0 always takes part
                if m.start() < m.end() && (!p.needs_digit || letter_and_digit(m.as_str())) {
                    ranges.push((m.start(), m.end()));
                }
            }
        }
        merge(ranges).unwrap() // ok: test code
    }

    #[test]
    fn needle_driven_ranges_equal_a_whole_text_search() {
        // Texts made of every needle (in mixed case), every prefix a pattern allows before its
        // needle, separators, token-like runs and non-ASCII text, some of them around a chunk
        // end: the anchored tries at needle hits find what a whole-text search finds, so every
        // pattern's `lead` is large enough.
        const FRAGMENTS: &[&str] = &[
            "authorization",
            "AUTHORIZATION",
            "Proxy-Authorization",
            "proxy-",
            "bearer ",
            "Bearer",
            "basic ",
            "token ",
            "sk-",
            "sk-ant-",
            "sk-proj-",
            "sk-admin-",
            "AIza",
            "AKIA",
            "ASIA",
            "A3T",
            "ABIA",
            "ACCA",
            "aws_",
            "aws-",
            "AWS",
            "secret",
            "_access_",
            "key",
            "client_",
            "client-",
            "x-",
            "api_key",
            "api-key",
            "apiKey",
            "session_token",
            "sessiontoken",
            "access_token",
            "refresh-token",
            "ghp_",
            "gho_",
            "github_pat_",
            "xoxb-",
            "xox",
            "xapp-1-",
            "https://",
            "hooks.slack.com",
            "/services/",
            "eyJ",
            "-----BEGIN",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END PRIVATE KEY-----",
            "maple_sk_",
            "maple_pk_",
            ": ",
            "=",
            "\"",
            "'",
            " ",
            "\n",
            "_",
            "-",
            ".",
            "/",
            "+",
            "AbC123dEf456GhI789jKl012",
            "IOSFODNN7EXAMPLE",
            "0123456789abcdef",
            "zz",
            "q",
            "7",
            "é",
            "東京",
            "😀",
            "task-force",
            "the bearer of",
            // Whole matches whose needle is not at their start, and what may follow them.
            "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX",
            "client_secret: ",
            "AWS_CLIENT-SECRET=",
            "x-api-key=",
            "aws_session_token=",
            "Proxy-Authorization: Bearer ",
            "sk-proj-Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5zA7bC9dE1f",
            "AKIAIOSFODNN7EXAMPLE",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcDEF123",
            // Letters that Unicode case folding maps to `s` and `k`: key words ignore ASCII case
            // only, as the needles do, so both searches skip them alike.
            "ſ",
            "\u{212A}",
            "awſ_client_secret=",
            "clientſecret=",
            "api\u{212A}ey=",
        ];
        let s = s();
        let regexes: Vec<Regex> = DEFAULT_PATTERNS
            .iter()
            .map(|p| Regex::new(p.regex).unwrap()) // ok: test code
            .collect();
        let mut next = crate::lcg(0x9e3779b97f4a7c15u64);
        for case in 0..20_000 {
            let mut text = String::new();
            if case % 10 == 0 {
                // Around the end of the first chunk.
                text.push_str(&"q".repeat(CHUNK - 40 + next(40)));
            }
            if case % 7 == 0 {
                // Dense hits: past the try budget, the whole-text search takes over midway.
                text.push_str(&["sk-xox", "AKIA", "secret-"][next(3)].repeat(20 + next(200)));
            }
            for _ in 0..1 + next(30) {
                text.push_str(FRAGMENTS[next(FRAGMENTS.len())]);
            }
            let want = whole_text_ranges(&regexes, &text);
            let got = match s.scan(&text, 0) {
                Some((first, user)) => s.ranges(&text, first, user).unwrap(), // ok: test code
                None => Vec::new(),
            };
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn every_needle_occurrence_is_visited_in_order() {
        let needles = Needles::new().unwrap(); // ok: test code
        let lowered: Vec<String> = DEFAULT_PATTERNS
            .iter()
            .flat_map(|p| p.needles.iter().map(|n| n.to_ascii_lowercase()))
            .collect();
        // Needles next to and overlapping each other (`akia3t`, `xoxapp-`), across chunk ends.
        let mut text = String::new();
        for (k, n) in lowered.iter().cycle().take(400).enumerate() {
            text.push_str(if k % 2 == 0 { &n[..] } else { "A3t" });
            text.push_str(&"q".repeat(k * 37 % 90));
        }
        text.push_str("xoxapp-akia3tsk-ant-");
        let mut got = Vec::new();
        needles
            .each_hit(text.as_bytes(), 0, |(at, _)| {
                got.push(at);
                Ok::<(), ()>(())
            })
            .unwrap(); // ok: test code
        let lower = text.to_ascii_lowercase();
        let want: Vec<usize> = (0..lower.len())
            .filter(|&i| lowered.iter().any(|n| lower[i..].starts_with(n.as_str())))
            .collect();
        assert!(text.len() > 3 * CHUNK);
        assert_eq!(got, want);
    }

    #[test]
    fn fingerprints_cover_every_needle() {
        // Every listed fingerprint is one needle's, in the listed order: Teddy gets the list as
        // written (its buckets follow the order), with no needle its own fingerprint.
        let needles = Needles::new().unwrap(); // ok: test code
        let (prints, ends) = fingerprints(&needles.needles, FINGERPRINTS).unwrap(); // ok: test code
        assert_eq!(prints, FINGERPRINTS);
        assert_eq!(ends, needles.long.ends);
        assert!(prints.len() <= 32, "slim Teddy");
        assert_eq!(needles.long.longest_print, needles.longest);
        for (p, list) in prints.iter().zip(&ends) {
            assert_eq!(*p, p.to_ascii_lowercase());
            for &(n, back) in list {
                let needle = &needles.needles[n];
                assert_eq!(&needle[back..], p.as_str());
                // A tail holds a byte other than a letter, or is the whole needle, or is six
                // letters or more (see FINGERPRINTS).
                assert!(
                    back == 0 || p.bytes().any(|c| !c.is_ascii_alphabetic()) || p.len() >= 6,
                    "{needle}: {p}"
                );
            }
        }
        let count = ends.iter().map(Vec::len).sum::<usize>();
        assert_eq!(count, needles.needles.len());
        let most = ends.iter().flatten().map(|&(_, back)| back).max();
        assert_eq!(most, Some(7), "session_token after _token");
        // Short texts, and the prefilter before the list: each needle its own fingerprint.
        for plain in [
            &needles.short,
            &Needles::with_fingerprints(&[]).unwrap().long, // ok: test code
        ] {
            assert_eq!(plain.ends.len(), needles.needles.len());
            assert!(plain.ends.iter().all(|e| e.len() == 1 && e[0].1 == 0));
        }
        // Entries no needle ends with are left out; the longest tail is a needle's.
        let (prints, _) = fingerprints(&needles.needles, &["sk-", "ho_", "ho_o"]).unwrap(); // ok: test code
        assert!(prints.contains(&"ho_".to_string()) && !prints.contains(&"ho_o".to_string()));
        let (prints, _) = fingerprints(&needles.needles, &["ho_", "gho_"]).unwrap(); // ok: test code
        assert!(prints.contains(&"gho_".to_string()) && !prints.contains(&"ho_".to_string()));
        // A fingerprint holding another other than at its end is refused; at its end is not.
        let list = |n: &[&str]| n.iter().map(|n| n.to_string()).collect::<Vec<String>>();
        assert!(fingerprints(&list(&["abcd", "xbc"]), &["bc", "bcd"]).is_none());
        assert!(fingerprints(&list(&["abcde", "ycd"]), &["bcde", "cd"]).is_none());
        assert!(fingerprints(
            &list(&["access-token", "q-token"]),
            &["-token", "access-token"]
        )
        .is_some());
    }

    /// Every start where a needle occurs in `text` (ASCII case ignored) at or after `from`, with the
    /// needle's index.
    fn naive_hits(needles: &Needles, text: &[u8], from: usize) -> Vec<(usize, usize)> {
        let mut hits = Vec::new();
        for s in from..text.len() {
            for (i, n) in needles.needles.iter().enumerate() {
                if text[s..].len() >= n.len()
                    && text[s..s + n.len()].eq_ignore_ascii_case(n.as_bytes())
                {
                    hits.push((s, i));
                }
            }
        }
        hits
    }

    #[test]
    fn fingerprint_hits_are_the_needle_hits() {
        // Texts made of needles (in mixed case), their fingerprints and the heads before them,
        // words that hold a fingerprint or a needle's start, separators and non-ASCII text,
        // some around a chunk end: the fingerprint search reports every needle occurrence, in
        // order, with its needle, as each needle's own search (the prefilter before the list)
        // and a search at every offset do; from any offset and stopping at any hit.
        let needles = Needles::new().unwrap(); // ok: test code
        let plain = Needles::with_fingerprints(&[]).unwrap(); // ok: test code
        assert!(
            needles.long.packed.is_some() && needles.short.packed.is_some(),
            "Teddy on this CPU"
        );
        // Fingerprints of one byte, each needle's last: candidates everywhere, up to 8 needles
        // ending with one fingerprint, needles up to 14 bytes before theirs, and needles holding
        // others' fingerprints before their own (`maple_sk_` holds the `_` of `ghp_`).
        let last: Vec<String> = needles
            .needles
            .iter()
            .map(|n| n[n.len() - 1..].to_string())
            .collect();
        let last: Vec<&str> = last.iter().map(String::as_str).collect();
        let stress = Search::new(&needles.needles, &last).unwrap(); // ok: test code
        assert_eq!(stress.ends.len(), 10);
        // Each needle's last three bytes.
        let tails: Vec<String> = needles
            .needles
            .iter()
            .map(|n| n[n.len() - 3..].to_string())
            .collect();
        let tails: Vec<&str> = tails.iter().map(String::as_str).collect();
        let threes = Search::new(&needles.needles, &tails).unwrap(); // ok: test code
        assert!(stress.packed.is_some() && threes.packed.is_some(), "Teddy");
        let mut fragments: Vec<String> = Vec::new();
        for n in &needles.needles {
            fragments.push(n.clone());
            for k in 1..n.len() {
                fragments.push(n[..k].to_string());
                fragments.push(n[k..].to_string());
            }
        }
        for w in [
            "token",
            "tokens",
            "_tokens",
            "max_tokens",
            "horizon",
            "organization",
            "access",
            "session",
            "sessions",
            "secretary",
            "ghost",
            "maple",
            "maple_",
            "apis",
            "keys",
            "the weather in paris",
            "forecast",
            "schedule",
            "availability",
            "reference",
            "booking",
            "ability",
            "asian",
            "akin",
            "github",
            "hooks",
            "slack",
            ".com",
            "begin",
            "-----",
            "xo",
            "ey",
            "a3",
            "sk",
            "--",
            "__",
            "_",
            "-",
            " ",
            "\n",
            "\"",
            ":",
            "=",
            "q",
            "7",
            "é",
            "東京",
            "😀",
            "ſ",
            "\u{212A}",
        ] {
            fragments.push(w.to_string());
        }
        let mut next = crate::lcg(0x2545f4914f6cdd1du64);
        for case in 0..20_000 {
            let mut text = String::new();
            if case % 8 == 0 {
                // Around the end of the first or second chunk.
                let k = 1 + next(2);
                text.push_str(&"q".repeat(k * CHUNK - 24 * k + next(48)));
            }
            if case % 5 == 0 {
                // Needles packed together, overlapping (`akia3t`, `session_tokenaccess-token`).
                for _ in 0..2 + next(40) {
                    text.push_str(&needles.needles[next(needles.needles.len())]);
                }
            }
            for _ in 0..1 + next(40) {
                let f = &fragments[next(fragments.len())];
                let flipped: String = f
                    .chars()
                    .map(|c| match next(3) {
                        0 => c.to_ascii_uppercase(),
                        _ => c,
                    })
                    .collect();
                text.push_str(&flipped);
            }
            let bytes = text.as_bytes();
            let collect = |search: &Search, from: usize| {
                let mut got = Vec::new();
                needles
                    .each_hit_by(search, bytes, from, |hit| {
                        got.push(hit);
                        Ok::<(), ()>(())
                    })
                    .unwrap(); // ok: test code
                got
            };
            let from = match next(3) {
                0 => next(bytes.len() + 1),
                _ => 0,
            };
            let want = naive_hits(&needles, bytes, from);
            // The fingerprints and the needles themselves, whatever the text's length.
            assert_eq!(collect(&needles.long, from), want, "{text:?} from {from}");
            assert_eq!(collect(&needles.short, from), want, "{text:?} from {from}");
            assert_eq!(collect(&plain.long, from), want, "{text:?} from {from}");
            assert_eq!(collect(&stress, from), want, "{text:?} from {from}");
            assert_eq!(collect(&threes, from), want, "{text:?} from {from}");
            // Stopping at the k-th hit, by the search for the text's length and by the
            // fingerprints.
            let stop = next(want.len() + 1);
            for search in [None, Some(&needles.long), Some(&stress)] {
                let mut seen = Vec::new();
                let f = |hit| {
                    if seen.len() == stop {
                        return Err(hit);
                    }
                    seen.push(hit);
                    Ok(())
                };
                let stopped = match search {
                    None => needles.each_hit(bytes, from, f),
                    Some(search) => needles.each_hit_by(search, bytes, from, f),
                };
                assert_eq!(&seen[..], &want[..stop.min(want.len())]);
                assert_eq!(stopped.err(), want.get(stop).copied());
            }
            assert_eq!(
                needles.find(bytes, from),
                want.first().map(|h| h.0),
                "{text:?}"
            );
        }
    }

    #[test]
    fn short_texts_are_searched_padded() {
        // Texts shorter than SHORT_TEXT from `from` are searched in a zero-padded buffer
        // (`each_hit_padded`): the padding is long enough for Teddy and for the texts, no needle
        // holds the padding's byte, and the hits are the needles' own, in order, from any
        // offset, stopping at any hit: texts of needles and their pieces in mixed case, NUL
        // bytes, bytes above 0x7F and needles cut by the text's end.
        let needles = Needles::new().unwrap(); // ok: test code
        let packed = needles.short.packed.as_ref().expect("Teddy on this CPU");
        assert!(packed.minimum_len() <= PADDED && SHORT_TEXT <= PADDED);
        assert!(needles.needles.iter().all(|n| !n.contains('\0')));
        let mut next = crate::lcg(0x9e3779b97f4a7c15u64);
        let mut padded_hits = 0;
        for _ in 0..50_000 {
            let mut text: Vec<u8> = Vec::new();
            let len = next(SHORT_TEXT + 8);
            while text.len() < len {
                match next(6) {
                    0 | 1 => {
                        let n = needles.needles[next(needles.needles.len())].as_bytes();
                        let k = 1 + next(n.len());
                        text.extend(n[..k].iter().map(|c| match next(2) {
                            0 => c.to_ascii_uppercase(),
                            _ => *c,
                        }));
                    }
                    2 => text.push([0u8, 0x80, 0xff, b'"', b' '][next(5)]),
                    _ => text.push(b"abcdefghijklmnopqrstuvwxyz_-3.:"[next(31)]),
                }
            }
            let from = match next(3) {
                0 => next(text.len() + 1),
                _ => 0,
            };
            let want = naive_hits(&needles, &text, from);
            let stop = next(want.len() + 1);
            let mut seen = Vec::new();
            let stopped = needles.each_hit(&text, from, |hit| {
                if seen.len() == stop {
                    return Err(hit);
                }
                seen.push(hit);
                Ok(())
            });
            assert_eq!(
                &seen[..],
                &want[..stop.min(want.len())],
                "{text:?} from {from}"
            );
            assert_eq!(
                stopped.err(),
                want.get(stop).copied(),
                "{text:?} from {from}"
            );
            if text.len() - from < SHORT_TEXT {
                padded_hits += want.len();
                let mut all = Vec::new();
                needles
                    .each_hit_padded(packed, &text, from, |hit| {
                        all.push(hit);
                        Ok::<(), ()>(())
                    })
                    .unwrap(); // ok: test code
                assert_eq!(all, want, "{text:?} from {from}");
            }
        }
        assert!(padded_hits > 10_000, "{padded_hits} hits in short texts");
    }

    #[test]
    fn the_fingerprint_prefilter_scrubs_as_each_needles_own_search() {
        // Every public entry of a scrubber, with the fingerprint prefilter and with each needle
        // its own fingerprint (the prefilter before the list): the same results, borrowed or
        // owned alike, on JSON made of credential keys and their look-alikes (`api__key`,
        // `aws_session__token`, `sessionToken`), secrets, needles and fingerprints.
        let new = s();
        let old = Scrubber {
            prefilter: Needles::with_fingerprints(&[]).unwrap(), // ok: test code
            ..new.clone()
        };
        const KEYS: &[&str] = &[
            "text",
            "note",
            "api_key",
            "api__key",
            "API-KEY",
            "apiKey",
            "x-api-key",
            "aws_session_token",
            "aws_session__token",
            "aws-session-token",
            "sessionToken",
            "session_token_id",
            "authorization",
            "Proxy-Authorization",
            "client_secret",
            "clientSecret",
            "access_token",
            "access__token",
            "accesstoken",
            "refresh-token",
            "refreshToken",
            "secretAccessKey",
            "aws_secret_access_key",
            "maple_sk_key",
            "max_tokens",
            "token",
            "\\u0061pi_key",
        ];
        const VALUES: &[&str] = &[
            "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x",
            "maple_sk_8f3a2b1c9d0e7f6a5b4c",
            "maple_pk_live_0a1b2c3d4e5f6789",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCD",
            "Bearer abcDEF123456ghiJKL789",
            "aws_session_token=AbC123dEf456GhI789jKl012",
            "refresh_token: AbC123dEf456GhI789jKl012",
            "api-key=AbC123dEf456GhI789",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\n-----END RSA PRIVATE KEY-----",
            "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcDEF123",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
            "the weather in paris, booking reference 42",
            "session tokens and access to the horizon",
            "organization authorization: pending",
            "abcdefghijkl",
            "short",
            "東京 😀 café",
            "a \"quoted\" value\twith a tab",
        ];
        let mut next = crate::lcg(0x853c49e6748fea9bu64);
        for _ in 0..4_000 {
            let mut json = String::from("{");
            for i in 0..1 + next(6) {
                if i > 0 {
                    json.push(',');
                }
                let key = KEYS[next(KEYS.len())];
                let mut value = String::new();
                for _ in 0..1 + next(3) {
                    value.push_str(VALUES[next(VALUES.len())]);
                    value.push(' ');
                }
                let mut value = serde_json::to_string(&value).unwrap(); // ok: test code
                if next(4) == 0 {
                    // A `\u` escape: every literal is scanned on its own.
                    value = value.replace('é', "\\u00e9");
                }
                json.push_str(&format!("\"{key}\": {value}"));
            }
            json.push('}');
            let same = |a: &Cow<'_, str>, b: &Cow<'_, str>| {
                a == b && matches!(a, Cow::Borrowed(_)) == matches!(b, Cow::Borrowed(_))
            };
            let (a, b) = (new.json(&json).unwrap(), old.json(&json).unwrap()); // ok: test code
            assert!(same(&a, &b), "{json}: {a} / {b}");
            assert_eq!(new.is_clean(&json), old.is_clean(&json));
            let (sa, sb) = (
                SourceScrubber::of(Some(&new), Some(&json)),
                SourceScrubber::of(Some(&old), Some(&json)),
            );
            assert_eq!(sa.is_some(), sb.is_some(), "{json}");
            assert_eq!(
                sa.as_ref().map(|x| x.hits.clone()),
                sb.as_ref().map(|x| x.hits.clone())
            );
            // Each literal, as a whole, its inside and its text; through the source scrubbers.
            let bytes = json.as_bytes();
            let mut i = 0;
            while let Some(k) = memchr::memchr(b'"', &bytes[i..]) {
                let start = i + k;
                let end = crate::jsonstr::literal_end(bytes, start);
                let literal = &json[start..end];
                let inner = &json[start + 1..end - 1];
                let (a, b) = (
                    new.json_string(literal).unwrap(),
                    old.json_string(literal).unwrap(),
                ); // ok: test code
                assert!(same(&a, &b), "{literal}");
                let (a, b) = (
                    new.json_inner(inner).unwrap(),
                    old.json_inner(inner).unwrap(),
                ); // ok: test code
                assert!(same(&a, &b), "{inner}");
                let (a, b) = (new.text(inner).unwrap(), old.text(inner).unwrap()); // ok: test code
                assert!(same(&a, &b), "{inner}");
                assert_eq!(new.is_clean(inner), old.is_clean(inner));
                if let (Some(x), Some(y)) = (&sa, &sb) {
                    let (a, b) = (x.json(literal).unwrap(), y.json(literal).unwrap()); // ok: test code
                    assert!(same(&a, &b), "{literal}");
                    let (a, b) = (x.json_inner(inner).unwrap(), y.json_inner(inner).unwrap()); // ok: test code
                    assert!(same(&a, &b), "{inner}");
                    let (a, b) = (x.text(inner).unwrap(), y.text(inner).unwrap()); // ok: test code
                    assert!(same(&a, &b), "{inner}");
                }
                i = end;
            }
        }
        // The credential-key rule is the needles', not the fingerprints': `api__key` holds no
        // needle and stays, `aws_session__token` holds `_token` (a fingerprint) and stays too.
        for json in [
            r#"{"api__key":"abcdefghijkl"}"#,
            r#"{"aws_session__token":"abcdefghijkl"}"#,
        ] {
            assert!(
                matches!(new.json(json).unwrap(), Cow::Borrowed(_)),
                "{json}"
            ); // ok: test code
        }
        let keyed = new.json(r#"{"aws_session_token":"abcdefghijkl"}"#).unwrap(); // ok: test code
        assert_eq!(keyed, r#"{"aws_session_token":"[REDACTED]"}"#);
    }

    #[test]
    fn secret_groups_fit_the_anchored_slots() {
        let s = s();
        for (p, g) in DEFAULT_PATTERNS.iter().zip(&s.default_groups) {
            assert!(g.is_none_or(|g| 2 * g + 1 < SLOTS), "{}", p.name);
        }
        assert_eq!(s.default_groups.iter().filter(|g| g.is_some()).count(), 3);
        // Every pattern but the private key block begins with an ASCII word boundary, which
        // `may_start` checks before the regex runs.
        assert_eq!(
            s.bounded.iter().filter(|b| **b).count(),
            DEFAULT_PATTERNS.len() - 1
        );
        // The whole-text search after the try budget stops at an empty match: there is none.
        for re in &s.defaults {
            assert!(re.find("").is_none());
        }
    }

    #[test]
    fn key_words_ignore_ascii_case_only() {
        let s = s();
        // `awſ_` is not `aws_`: the key word then starts inside a word, as in
        // `myapp_client_secret`, which no pattern takes for a key either.
        for text in [
            "awſ_client_secret=bC123dEf456GhI78",
            "myapp_client_secret=bC123dEf456GhI78",
        ] {
            assert_eq!(s.text(text).unwrap(), Cow::Borrowed(text)); // ok: test code
        }
        assert_eq!(
            s.text("AWS_Client_Secret=bC123dEf456GhI78 BEARER abcDEF123456ghiJKL789")
                .unwrap(), // ok: test code
            format!("AWS_Client_Secret={PLACEHOLDER} BEARER {PLACEHOLDER}")
        );
        // A key word spelled with `ſ` or the Kelvin sign is not that key word, with or without
        // another needle elsewhere in the text.
        for text in [
            "clientſecret=3dEf456GhI789xox",
            "api\u{212A}ey=A23dEf456GhI7xox sk-",
        ] {
            assert_eq!(s.text(text).unwrap(), Cow::Borrowed(text)); // ok: test code
        }
    }

    #[test]
    fn a_source_scrubber_skips_only_values_without_hits() {
        let s = s();
        const KEY: &str = "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x";
        let source = format!(r#"{{"a":"plain text","b":"key {KEY}","c":"task-force"}}"#);
        let literal = |needle: &str| {
            let at = source.find(needle).unwrap();
            let end = at + source[at + 1..].find('"').unwrap() + 2;
            &source[at..end]
        };
        let src = SourceScrubber::of(Some(&s), Some(&source)).unwrap();
        assert!(src.hits.is_some());
        let plain = literal("\"plain");
        assert!(src.clean(plain));
        assert_eq!(src.json(plain).unwrap(), plain);
        assert_eq!(src.json(literal("\"key")).unwrap(), "\"key [REDACTED]\"");
        assert!(!src.clean(literal("\"task")));
        assert_eq!(src.json(literal("\"task")).unwrap(), "\"task-force\"");
        // Not a slice of the source: scanned on its own.
        let other = format!("\"{KEY}\"");
        assert_eq!(src.json(&other).unwrap(), "\"[REDACTED]\"");
        assert_eq!(src.text(&other[1..other.len() - 1]).unwrap(), PLACEHOLDER);
        // A slice that starts inside a needle hit is not taken for clean.
        let inside = &source[source.find(KEY).unwrap() + 1..][..10];
        assert!(!src.clean(inside));
        // Nothing to scrub anywhere: no scrubber needed.
        assert!(SourceScrubber::of(Some(&s), Some(r#"{"a":"plain"}"#)).is_none());
        assert!(SourceScrubber::of(None, Some(&source)).is_none());
        // A `\u` escape anywhere: every value scanned (the escape may spell a needle).
        let escaped = r#"{"a":"\u0073k-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x"}"#.to_string();
        let src = SourceScrubber::of(Some(&s), Some(&escaped)).unwrap();
        assert!(src.hits.is_none());
        assert_eq!(
            src.json(&escaped[5..escaped.len() - 1]).unwrap(),
            "\"[REDACTED]\""
        );
        // More hits than kept: every value scanned.
        let dense = format!("{}\"{KEY}\"", "xox ".repeat(MAX_SOURCE_HITS + 1));
        let src = SourceScrubber::of(Some(&s), Some(&dense)).unwrap();
        assert!(src.hits.is_none());
        let last = &dense[dense.len() - KEY.len() - 2..];
        assert_eq!(src.json(last).unwrap(), "\"[REDACTED]\"");
    }

    #[test]
    fn a_credential_key_spelled_with_escapes_is_a_key() {
        // `\u0061pi_key` holds no needle in its raw text; with a `\u` escape every literal is
        // decoded, keys too.
        for json in [
            r#"{"\u0061pi_key":"abcdefghijkl"}"#,
            r#"{"api_k\u0065y":"abcdefghijkl","n":1}"#,
            r#"[{"q":"x"},{"client\u005fsecret":"abcdefghijkl"}]"#,
        ] {
            let out = s().json(json).unwrap();
            assert!(out.contains(r#":"[REDACTED]""#), "{json} -> {out}");
            assert!(!out.contains("abcdefghijkl"), "{json} -> {out}");
        }
        // Not a credential key: kept.
        let kept = r#"{"\u0061pi":"abcdefghijkl"}"#;
        assert_eq!(s().json(kept).unwrap(), kept);
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
