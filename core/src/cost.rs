//! `gen_ai.usage.cost`: the price in US dollars of one model call, from its token counts, with
//! pydantic's price library [`genai_prices`] (crate 0.2.1, pinned; git `1964e1dc`; its bundled price
//! data has entries dated up to 2026-11-30). The prices are compiled into the binary: nothing is
//! fetched at run time. The same price data ships as the npm package `@pydantic/genai-prices`.
//!
//! Rule 2 of issue 10; the attribute and its unit come from seed 003 ("Step 7: Tokens and cost":
//! `gen_ai.usage.cost`, a double, USD, on `chat` spans; Maple never prices tokens itself, a span
//! without it shows as "unpriced").
//!
//! The counts are the `gen_ai.usage.*` values of rule 1 (seed 003's totals): `input_tokens` is
//! every prompt token, cache reads and writes included; `output_tokens` every completion token,
//! reasoning included; the cache and reasoning counts are parts of those totals. That is also the
//! library's model (its usage keys form a hierarchy: `cache_read_tokens` and `cache_write_tokens`
//! are parts of `input_tokens`, `output_reasoning_tokens` part of `output_tokens`), so each token is
//! priced once: cache reads and writes at their cache rates, the rest of the input at the input
//! rate, reasoning at the model's reasoning rate where it has one, else at the output rate.
//!
//! No cost (`None`, never 0) when the provider or model is not in the price data, when the counts
//! contradict each other (a part larger than its total), or when the input count is missing.

use std::hash::{Hash, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use genai_prices::{Calculator, ErrorKind, PriceRequest, Usage, UsageKey};

/// The version of the price library whose bundled data [`cost_usd`] uses.
pub const PRICE_LIBRARY: &str = "genai-prices 0.2.1 (pydantic/genai-prices, bundled data)";

/// Token counts of one model call, as the `gen_ai.usage.*` attributes carry them (rule 1 of
/// issue 10, seed 003 "Step 7"). `None`: the plugin reported no such count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct UsageCounts {
    /// `gen_ai.usage.input_tokens`: every prompt token, cache reads and writes included.
    pub input_tokens: Option<u64>,
    /// `gen_ai.usage.output_tokens`: every completion token, reasoning included.
    pub output_tokens: Option<u64>,
    /// `gen_ai.usage.cache_read.input_tokens`: the part of the input read from a prompt cache.
    pub cache_read_input_tokens: Option<u64>,
    /// `gen_ai.usage.cache_write.input_tokens`: the part of the input written to a prompt cache.
    pub cache_write_input_tokens: Option<u64>,
    /// The part of the cache writes with a one-hour lifetime (Anthropic's
    /// `cache_creation.ephemeral_1h_input_tokens`, in the anthropic plugin's `usage.custom`);
    /// priced at the 1-hour write rate where the model has one. Not an attribute of its own.
    pub cache_write_1h_input_tokens: Option<u64>,
    /// `gen_ai.usage.reasoning.output_tokens`: the part of the output spent on reasoning.
    pub reasoning_output_tokens: Option<u64>,
}

/// The price library's provider id for a Genkit plugin prefix (`googleai`, the part of
/// `genkit:name` before `/`) or a `gen_ai.provider.name` registry value (`gcp.gemini`); `None`
/// for providers the library does not price (a local `ollama`, an unknown plugin). Never a guess
/// from the model name: a model name alone can pick the wrong provider's prices.
pub fn price_provider(provider: &str) -> Option<&'static str> {
    let p = provider.trim().to_ascii_lowercase();
    Some(match p.as_str() {
        "googleai" | "google-genai" | "gcp.gemini" | "gcp.gen_ai" | "vertexai"
        | "gcp.vertex_ai" => "google",
        "anthropic" => "anthropic",
        "openai" => "openai",
        "azure" | "azureopenai" | "azure-openai" | "azure.ai.openai" | "azure.ai.inference" => {
            "azure"
        }
        "deepseek" => "deepseek",
        "xai" | "x-ai" | "x_ai" | "grok" => "x-ai",
        "mistral" | "mistralai" | "mistral_ai" => "mistral",
        "groq" => "groq",
        "cohere" => "cohere",
        "perplexity" => "perplexity",
        "openrouter" => "openrouter",
        "together" | "togetherai" => "together",
        "fireworks" | "fireworksai" => "fireworks",
        "cerebras" => "cerebras",
        "bedrock" | "awsbedrock" | "aws-bedrock" | "aws.bedrock" => "aws",
        _ => return None,
    })
}

/// Loads the bundled price data (tens of milliseconds, once per process). Calling it when the
/// processor is constructed keeps that time off the first model span; [`cost_usd`] loads it
/// itself otherwise.
pub fn warm_up() {
    let _ = Calculator::bundled();
}

/// The price in US dollars of one model call priced now (`gen_ai.usage.cost`); see
/// [`cost_usd_at`].
pub fn cost_usd(provider: &str, model: &str, usage: &UsageCounts) -> Option<f64> {
    cost_usd_at(provider, model, usage, SystemTime::now())
}

/// The price in US dollars of one model call made at `at` (prices change over time, and some
/// depend on the hour: DeepSeek's off-peak rates), from its `gen_ai.usage.*` counts.
///
/// `provider`: the Genkit plugin prefix or the `gen_ai.provider.name` value ([`price_provider`]);
/// `model`: the model name without the plugin prefix (`gemini-2.5-flash`), the provider's
/// response model (`gpt-4o-2024-08-06`) where known. Matching is the library's (case-insensitive,
/// with its aliases and dated versions).
///
/// `None`, never 0, when the provider or the model is not in the price data, the input count is
/// missing (a missing output count is 0: Gemini leaves it out of blocked answers), or the counts
/// contradict each other (a cache or reasoning count above its total).
pub fn cost_usd_at(
    provider: &str,
    model: &str,
    usage: &UsageCounts,
    at: SystemTime,
) -> Option<f64> {
    let provider_id = price_provider(provider)?;
    price(provider_id, model.trim(), usage, at).ok()
}

/// Why [`price`] gave no price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Miss {
    /// The price data has no such provider or model: true at every time, whatever the counts.
    Unknown,
    /// Anything else (counts missing or contradicting, a price that is not a finite number >= 0).
    Other,
}

/// [`cost_usd_at`] for a price-library provider id and a trimmed model name.
fn price(provider_id: &str, model: &str, usage: &UsageCounts, at: SystemTime) -> Result<f64, Miss> {
    if model.is_empty() {
        return Err(Miss::Unknown);
    }
    let input = usage.input_tokens.ok_or(Miss::Other)?;
    // Parts above their totals: the library checks only the parts the model has a price for.
    let cache = usage
        .cache_read_input_tokens
        .unwrap_or(0)
        .checked_add(usage.cache_write_input_tokens.unwrap_or(0))
        .ok_or(Miss::Other)?;
    if cache > input
        || usage.reasoning_output_tokens.unwrap_or(0) > usage.output_tokens.unwrap_or(0)
        || usage.cache_write_1h_input_tokens.unwrap_or(0)
            > usage.cache_write_input_tokens.unwrap_or(0)
    {
        return Err(Miss::Other);
    }
    // ok: at most six entries, whatever the input.
    let mut counts = Usage::new();
    // u64 -> f64: exact below 2^53 tokens, far beyond any real call.
    counts.insert(UsageKey::INPUT_TOKENS, input as f64);
    counts.insert(
        UsageKey::OUTPUT_TOKENS,
        usage.output_tokens.unwrap_or(0) as f64,
    );
    let parts = [
        (UsageKey::CACHE_READ_TOKENS, usage.cache_read_input_tokens),
        (UsageKey::CACHE_WRITE_TOKENS, usage.cache_write_input_tokens),
        (
            UsageKey::CACHE_WRITE_1H_TOKENS,
            usage.cache_write_1h_input_tokens,
        ),
        (
            UsageKey::OUTPUT_REASONING_TOKENS,
            usage.reasoning_output_tokens,
        ),
    ];
    for (key, value) in parts {
        if let Some(v) = value {
            counts.insert(key, v as f64);
        }
    }
    let request = PriceRequest::new(model, &counts)
        .with_provider_id(provider_id)
        .with_timestamp(at);
    match Calculator::bundled().calculate(&request) {
        Ok(price) if price.total_price.is_finite() && price.total_price >= 0.0 => {
            Ok(price.total_price)
        }
        Ok(_) => Err(Miss::Other),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::ModelNotFound | ErrorKind::ProviderNotFound
            ) =>
        {
            Err(Miss::Unknown)
        }
        Err(_) => Err(Miss::Other),
    }
}

/// Entries of each [`PriceCache`] table: [`CACHE_SETS`] sets of [`CACHE_WAYS`] entries.
const CACHE_SLOTS: usize = CACHE_SETS * CACHE_WAYS;
/// Sets of each table; an entry can sit in any of its set's [`CACHE_WAYS`] slots.
const CACHE_SETS: usize = 64;
/// Slots per set: with one slot per hash (direct-mapped), two of a few dozen entries that share a
/// slot evicted each other on every span and paid the library lookup each time.
const CACHE_WAYS: usize = 4;
/// Model names longer than this are priced but not cached (no real model name comes near).
const CACHE_MODEL_BYTES: usize = 128;

/// One remembered price: provider, model, counts and UTC minute -> price.
#[derive(Debug)]
struct PriceSlot {
    provider_id: &'static str,
    model: String,
    usage: UsageCounts,
    minute: u64,
    price: Option<f64>,
}

/// One remembered miss: the price data has no such provider / model (at any time).
#[derive(Debug)]
struct UnknownSlot {
    provider_id: &'static str,
    model: String,
}

/// A bounded cache of [`cost_usd_at`]'s answers, held by a [`crate::span::Mapper`] (issue 9's
/// budget: complete mode costs at most 10% more than reference mode; one library lookup is
/// several microseconds).
///
/// Two 4-way set-associative tables of [`CACHE_SLOTS`] entries each (memory bounded whatever the
/// input; a full set replaces its entries in turn):
/// - `(provider, model, counts, UTC minute)` -> price. Exact: a price can change only at a time
///   boundary of the price data (a start date, at midnight UTC; a time of day, on whole minutes in
///   the bundled data: DeepSeek's off-peak hours 16:30-00:30), so every instant of one UTC minute
///   has the same price;
/// - `(provider, model)` -> not in the price data (true at every time, for every count): a model
///   name the data lacks (an unknown response model before the requested one) is looked up once.
///
/// An entry that cannot be stored (no memory, a model name above [`CACHE_MODEL_BYTES`]) is
/// simply not cached. The sets are chosen by `rustc_hash::FxHasher`, a multiplicative hash (not SipHash: a collision
/// costs a lookup, never a wrong answer, since every field is compared).
#[derive(Debug, Default)]
pub struct PriceCache {
    prices: Vec<Option<PriceSlot>>,
    unknown: Vec<Option<UnknownSlot>>,
    /// The way the next insertion into a full set replaces (round robin).
    next_way: usize,
}

/// The first slot of the set of `hash`.
fn set_of(hash: u64) -> usize {
    ((hash >> 32) as usize % CACHE_SETS) * CACHE_WAYS
}

/// An owned copy of `s`, or `None` when it cannot be allocated.
fn try_string(s: &str) -> Option<String> {
    let mut owned = String::new();
    owned.try_reserve_exact(s.len()).ok()?;
    owned.push_str(s);
    Some(owned)
}

/// A table of [`CACHE_SLOTS`] empty slots, or `None` when it cannot be allocated.
fn try_table<T>(table: &mut Vec<Option<T>>) -> bool {
    if table.len() == CACHE_SLOTS {
        return true;
    }
    if table.try_reserve_exact(CACHE_SLOTS).is_err() {
        return false;
    }
    table.resize_with(CACHE_SLOTS, || None);
    true
}

/// The slot of set `set` an entry goes to: an empty one, else the way `next` (round robin).
fn victim<T>(table: &[Option<T>], set: usize, next: &mut usize) -> usize {
    if let Some(i) = (set..set + CACHE_WAYS).find(|&i| table.get(i).is_some_and(Option::is_none)) {
        return i;
    }
    *next = (*next + 1) % CACHE_WAYS;
    set + *next
}

impl PriceCache {
    /// An empty cache (its tables are allocated on first use).
    pub fn new() -> PriceCache {
        PriceCache::default()
    }

    /// [`cost_usd_at`], remembered.
    pub fn cost_usd_at(
        &mut self,
        provider: &str,
        model: &str,
        usage: &UsageCounts,
        at: SystemTime,
    ) -> Option<f64> {
        let provider_id = price_provider(provider)?;
        let model = model.trim();
        let Some(minute) = at
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs() / 60)
            .filter(|_| model.len() <= CACHE_MODEL_BYTES)
        else {
            return price(provider_id, model, usage, at).ok();
        };
        let mut hasher = rustc_hash::FxHasher::default();
        provider_id.hash(&mut hasher);
        model.hash(&mut hasher);
        let unknown_set = set_of(hasher.finish());
        let unknown = self.unknown.get(unknown_set..unknown_set + CACHE_WAYS);
        if unknown
            .into_iter()
            .flatten()
            .flatten()
            .any(|u| u.provider_id == provider_id && u.model == model)
        {
            return None;
        }
        usage.hash(&mut hasher);
        minute.hash(&mut hasher);
        let set = set_of(hasher.finish());
        let prices = self.prices.get(set..set + CACHE_WAYS);
        if let Some(p) = prices.into_iter().flatten().flatten().find(|p| {
            p.provider_id == provider_id
                && p.minute == minute
                && p.usage == *usage
                && p.model == model
        }) {
            return p.price;
        }
        let result = price(provider_id, model, usage, at);
        match result {
            Err(Miss::Unknown) => {
                if let (true, Some(model)) = (try_table(&mut self.unknown), try_string(model)) {
                    let slot = victim(&self.unknown, unknown_set, &mut self.next_way);
                    self.unknown[slot] = Some(UnknownSlot { provider_id, model });
                }
            }
            _ => {
                if let (true, Some(model)) = (try_table(&mut self.prices), try_string(model)) {
                    let slot = victim(&self.prices, set, &mut self.next_way);
                    self.prices[slot] = Some(PriceSlot {
                        provider_id,
                        model,
                        usage: *usage,
                        minute,
                        price: result.ok(),
                    });
                }
            }
        }
        result.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    /// 2026-11-30 12:00 UTC: a fixed time, so the tests do not depend on the clock (DeepSeek's
    /// prices depend on the hour: 16:30-00:30 UTC is off-peak).
    fn noon() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_796_040_000)
    }

    fn counts(input: u64, output: u64) -> UsageCounts {
        UsageCounts {
            input_tokens: Some(input),
            output_tokens: Some(output),
            ..UsageCounts::default()
        }
    }

    /// `expected` from the per-million rates written out, so a wrong key, a double count or a
    /// missing cache rate shows.
    fn assert_price(provider: &str, model: &str, usage: UsageCounts, expected: f64) {
        let got = cost_usd_at(provider, model, &usage, noon())
            .unwrap_or_else(|| panic!("{provider}/{model}: no price"));
        assert!(
            (got - expected).abs() < 1e-12,
            "{provider}/{model}: got {got}, expected {expected}"
        );
    }

    const M: f64 = 1e6;

    #[test]
    fn gemini_flash_thinking_and_cached_content() {
        // Rule 1 for Gemini: input 2260 (cached 2048 included), output 96 = 32 answer + 64 thoughts.
        // gemini-2.5-flash: input 0.30, cache read 0.03, output 2.50 (thinking at the output rate).
        let usage = UsageCounts {
            cache_read_input_tokens: Some(2048),
            reasoning_output_tokens: Some(64),
            ..counts(2260, 96)
        };
        assert_price(
            "googleai",
            "gemini-2.5-flash",
            usage,
            (212.0 * 0.30 + 2048.0 * 0.03 + 96.0 * 2.50) / M,
        );
        // The registry name of the provider prices the same.
        assert_price(
            "gcp.gemini",
            "gemini-2.5-flash",
            usage,
            (212.0 * 0.30 + 2048.0 * 0.03 + 96.0 * 2.50) / M,
        );
    }

    #[test]
    fn gemini_pro_tiers_by_prompt_size() {
        // gemini-2.5-pro: 1.25 / 10 per million up to 200k prompt tokens, 2.50 / 15 above.
        assert_price(
            "vertexai",
            "gemini-2.5-pro",
            counts(1000, 100),
            (1000.0 * 1.25 + 100.0 * 10.0) / M,
        );
        assert_price(
            "googleai",
            "gemini-2.5-pro",
            counts(250_000, 100),
            (250_000.0 * 2.5 + 100.0 * 15.0) / M,
        );
    }

    #[test]
    fn claude_cache_reads_and_writes_at_their_rates() {
        // Rule 1 for Anthropic: input = 133 uncached + 1024 read + 1280 written = 2437.
        // claude-sonnet-4-5: input 3, cache write 3.75, cache read 0.30, output 15.
        let usage = UsageCounts {
            cache_read_input_tokens: Some(1024),
            cache_write_input_tokens: Some(1280),
            ..counts(2437, 64)
        };
        let expected = (133.0 * 3.0 + 1024.0 * 0.30 + 1280.0 * 3.75 + 64.0 * 15.0) / M;
        assert_price("anthropic", "claude-sonnet-4-5", usage, expected);
        // The dated name the API reports resolves to the same model.
        assert_price("anthropic", "claude-sonnet-4-5-20250929", usage, expected);
        // One-hour writes at the 1-hour rate (6), the other writes at the 5-minute rate.
        let hour = UsageCounts {
            cache_write_1h_input_tokens: Some(280),
            ..usage
        };
        let expected =
            (133.0 * 3.0 + 1024.0 * 0.30 + 1000.0 * 3.75 + 280.0 * 6.0 + 64.0 * 15.0) / M;
        assert_price("anthropic", "claude-sonnet-4-5", hour, expected);
        // claude-haiku-4-5: input 1, cache write 1.25, cache read 0.10, output 5.
        let expected = (133.0 * 1.0 + 1024.0 * 0.10 + 1280.0 * 1.25 + 64.0 * 5.0) / M;
        assert_price("anthropic", "claude-haiku-4-5", usage, expected);
    }

    #[test]
    fn openai_cached_and_reasoning_tokens() {
        // OpenAI counts as rule 1 wants: prompt_tokens includes cached_tokens, completion_tokens
        // includes reasoning_tokens. gpt-4o: input 2.50, cache read 1.25, output 10.
        let usage = UsageCounts {
            cache_read_input_tokens: Some(2048),
            reasoning_output_tokens: Some(0),
            ..counts(2260, 96)
        };
        assert_price(
            "openai",
            "gpt-4o",
            usage,
            (212.0 * 2.5 + 2048.0 * 1.25 + 96.0 * 10.0) / M,
        );
        // gpt-5: input 1.25, cache read 0.125, output 10 (reasoning at the output rate).
        let usage = UsageCounts {
            reasoning_output_tokens: Some(64),
            ..usage
        };
        assert_price(
            "openai",
            "gpt-5",
            usage,
            (212.0 * 1.25 + 2048.0 * 0.125 + 96.0 * 10.0) / M,
        );
        assert_price(
            "openai",
            "gpt-5-mini",
            counts(112, 216),
            (112.0 * 0.25 + 216.0 * 2.0) / M,
        );
    }

    #[test]
    fn deepseek_prices_depend_on_the_hour() {
        // deepseek-chat at 12:00 UTC (standard): input 0.27, cache read 0.07, output 1.10.
        let usage = UsageCounts {
            cache_read_input_tokens: Some(1024),
            ..counts(2000, 100)
        };
        assert_price(
            "deepseek",
            "deepseek-chat",
            usage,
            (976.0 * 0.27 + 1024.0 * 0.07 + 100.0 * 1.1) / M,
        );
        // At 20:00 UTC (off-peak): 0.135, 0.035, 0.55.
        let evening = noon() + Duration::from_secs(8 * 3600);
        let got = cost_usd_at("deepseek", "deepseek-chat", &usage, evening).unwrap_or(f64::NAN);
        assert!(
            (got - (976.0 * 0.135 + 1024.0 * 0.035 + 100.0 * 0.55) / M).abs() < 1e-12,
            "{got}"
        );
        assert!(cost_usd_at("deepseek", "deepseek-reasoner", &usage, noon()).is_some());
    }

    #[test]
    fn unknown_models_and_providers_get_no_cost_never_zero() {
        let usage = counts(100, 10);
        assert_eq!(
            cost_usd_at("googleai", "gemini-99-ultra-nonexistent", &usage, noon()),
            None
        );
        assert_eq!(
            cost_usd_at("openai", "my-fine-tune-xyz", &usage, noon()),
            None
        );
        assert_eq!(cost_usd_at("ollama", "llama3.2", &usage, noon()), None);
        assert_eq!(
            cost_usd_at("myplugin", "gpt-4o", &usage, noon()),
            None,
            "no guess from the model name"
        );
        assert_eq!(cost_usd_at("openai", "", &usage, noon()), None);
        assert_eq!(cost_usd_at("", "gpt-4o", &usage, noon()), None);
    }

    #[test]
    fn missing_or_contradicting_counts_get_no_cost() {
        // No input count: unknown usage.
        let no_input = UsageCounts {
            output_tokens: Some(10),
            ..UsageCounts::default()
        };
        assert_eq!(cost_usd_at("openai", "gpt-4o", &no_input, noon()), None);
        assert_eq!(
            cost_usd_at("openai", "gpt-4o", &UsageCounts::default(), noon()),
            None
        );
        // Cache reads above the input total, reasoning above the output total.
        let bad_cache = UsageCounts {
            cache_read_input_tokens: Some(101),
            ..counts(100, 10)
        };
        assert_eq!(cost_usd_at("openai", "gpt-4o", &bad_cache, noon()), None);
        let bad_reasoning = UsageCounts {
            reasoning_output_tokens: Some(11),
            ..counts(100, 10)
        };
        assert_eq!(cost_usd_at("openai", "gpt-5", &bad_reasoning, noon()), None);
        let bad_hour = UsageCounts {
            cache_write_input_tokens: Some(10),
            cache_write_1h_input_tokens: Some(11),
            ..counts(100, 10)
        };
        assert_eq!(
            cost_usd_at("anthropic", "claude-sonnet-4-5", &bad_hour, noon()),
            None
        );
    }

    #[test]
    fn reported_zeros_are_real_zeros_and_a_missing_output_is_zero() {
        assert_eq!(
            cost_usd_at("openai", "gpt-4o", &counts(0, 0), noon()),
            Some(0.0)
        );
        // A blocked Gemini answer: prompt counted, no candidates count.
        let blocked = UsageCounts {
            input_tokens: Some(141),
            ..UsageCounts::default()
        };
        assert_price("googleai", "gemini-2.5-flash", blocked, 141.0 * 0.30 / M);
    }

    #[test]
    fn each_token_is_priced_once() {
        // Moving tokens from the uncached input into the cache never raises the price, and the
        // cost grows with every count: no token counted twice, none dropped.
        for read in [0u64, 1, 500, 1000] {
            let a = cost_usd_at(
                "anthropic",
                "claude-sonnet-4-5",
                &UsageCounts {
                    cache_read_input_tokens: Some(read),
                    ..counts(1000, 0)
                },
                noon(),
            );
            let expected = ((1000 - read) as f64 * 3.0 + read as f64 * 0.3) / M;
            assert!(
                (a.unwrap_or(f64::NAN) - expected).abs() < 1e-12,
                "read {read}: {a:?}"
            );
        }
        let base = cost_usd_at("openai", "gpt-4o", &counts(1000, 100), noon()).unwrap_or(f64::NAN);
        let more = cost_usd_at("openai", "gpt-4o", &counts(1001, 100), noon()).unwrap_or(f64::NAN);
        assert!(more > base);
    }

    #[test]
    fn provider_names_of_plugins_and_registry() {
        for (p, id) in [
            ("googleai", "google"),
            ("vertexai", "google"),
            ("gcp.vertex_ai", "google"),
            ("GoogleAI", "google"),
            ("openai", "openai"),
            ("azure.ai.openai", "azure"),
            ("x_ai", "x-ai"),
            ("xai", "x-ai"),
            ("mistral_ai", "mistral"),
            ("aws.bedrock", "aws"),
        ] {
            assert_eq!(price_provider(p), Some(id), "{p}");
        }
        assert_eq!(price_provider("ollama"), None);
    }

    #[test]
    fn names_the_real_plugins_report_are_priced() {
        // Model names as the plugins put them after their prefix (google-genai, vertexai,
        // anthropic, compat-oai openai / deepseek / xai, mistral) and as the APIs report them back.
        let usage = counts(1000, 100);
        for (p, m) in [
            ("googleai", "gemini-2.0-flash"),
            ("googleai", "gemini-2.5-flash-lite"),
            ("googleai", "gemini-3-pro-preview"),
            ("vertexai", "gemini-2.5-pro"),
            ("vertexai", "claude-sonnet-4-5@20250929"),
            ("anthropic", "claude-opus-4-1"),
            ("anthropic", "claude-3-5-haiku-20241022"),
            ("anthropic", "claude-sonnet-4"),
            ("openai", "gpt-4o-mini"),
            ("openai", "gpt-4.1"),
            ("openai", "o3-mini"),
            ("openai", "gpt-4o-2024-08-06"),
            ("openai", "gpt-5-nano"),
            ("xai", "grok-4"),
            ("mistral", "mistral-large-latest"),
            ("deepseek", "deepseek-reasoner"),
        ] {
            let price = cost_usd_at(p, m, &usage, noon());
            assert!(price.is_some_and(|c| c > 0.0), "{p}/{m}: {price:?}");
        }
        // gpt-4o-mini: 0.15 / 0.60 per million.
        assert_price(
            "openai",
            "gpt-4o-mini",
            usage,
            (1000.0 * 0.15 + 100.0 * 0.6) / M,
        );
    }

    #[test]
    fn the_cache_answers_as_the_library_does_at_every_time() {
        // DeepSeek's off-peak rates start at 16:30:00 UTC: the second before and the minute from it
        // differ, and every second of one minute has the minute's price, cached or not.
        let day = noon() - Duration::from_secs(12 * 3600);
        let usage = UsageCounts {
            cache_read_input_tokens: Some(1024),
            ..counts(2000, 100)
        };
        let mut cache = PriceCache::new();
        let mut seen = Vec::new();
        for secs in [
            16 * 3600 + 29 * 60 + 59,
            16 * 3600 + 30 * 60,
            16 * 3600 + 30 * 60 + 59,
        ] {
            let at = day + Duration::from_secs(secs);
            let direct = cost_usd_at("deepseek", "deepseek-chat", &usage, at);
            assert!(direct.is_some());
            for _ in 0..2 {
                assert_eq!(
                    cache.cost_usd_at("deepseek", "deepseek-chat", &usage, at),
                    direct
                );
            }
            seen.push(direct);
        }
        assert_ne!(seen[0], seen[1], "the price changes at 16:30:00");
        assert_eq!(seen[1], seen[2]);
        // Other counts, models and providers are other entries.
        let more = UsageCounts {
            input_tokens: Some(2001),
            ..usage
        };
        let at = day + Duration::from_secs(16 * 3600 + 30 * 60);
        assert_eq!(
            cache.cost_usd_at("deepseek", "deepseek-chat", &more, at),
            cost_usd_at("deepseek", "deepseek-chat", &more, at)
        );
        assert_ne!(
            cache.cost_usd_at("deepseek", "deepseek-chat", &more, at),
            cache.cost_usd_at("deepseek", "deepseek-chat", &usage, at)
        );
        assert_eq!(
            cache.cost_usd_at("deepseek", "deepseek-reasoner", &usage, at),
            cost_usd_at("deepseek", "deepseek-reasoner", &usage, at)
        );
        // An unknown model is remembered as unknown; the known ones are still priced, at other
        // dates too.
        for _ in 0..2 {
            assert_eq!(
                cache.cost_usd_at("openai", "no-such-model", &usage, at),
                None
            );
        }
        assert_eq!(cache.cost_usd_at("ollama", "llama3.2", &usage, at), None);
        for days in [0u64, 400, 800] {
            let when = at - Duration::from_secs(days * 86_400);
            assert_eq!(
                cache.cost_usd_at("openai", "gpt-4o", &usage, when),
                cost_usd_at("openai", "gpt-4o", &usage, when)
            );
        }
        // Contradicting counts: no cost, cached or not.
        let bad = UsageCounts {
            cache_read_input_tokens: Some(3000),
            ..usage
        };
        assert_eq!(cache.cost_usd_at("openai", "gpt-4o", &bad, at), None);
    }

    #[test]
    fn the_cache_is_bounded() {
        let mut cache = PriceCache::new();
        for i in 0..5_000u64 {
            let usage = counts(1000 + i, 10);
            let got = cache.cost_usd_at("openai", "gpt-4o-mini", &usage, noon());
            assert_eq!(got, cost_usd_at("openai", "gpt-4o-mini", &usage, noon()));
            let name = format!("unknown-model-{i}");
            assert_eq!(cache.cost_usd_at("openai", &name, &usage, noon()), None);
        }
        assert_eq!(cache.prices.len(), CACHE_SLOTS);
        assert_eq!(cache.unknown.len(), CACHE_SLOTS);
        // A model name above the cached size is priced, never stored.
        let long = format!("gpt-4o-mini{}", " ".repeat(200));
        assert!(cache
            .cost_usd_at("openai", &long, &counts(1, 1), noon())
            .is_some());
        let long_unknown = "x".repeat(CACHE_MODEL_BYTES + 1);
        assert_eq!(
            cache.cost_usd_at("openai", &long_unknown, &counts(1, 1), noon()),
            None
        );
        assert!(cache
            .unknown
            .iter()
            .flatten()
            .all(|u| u.model.len() <= CACHE_MODEL_BYTES));
    }
}
