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

use std::time::SystemTime;

use genai_prices::{Calculator, PriceRequest, Usage, UsageKey};

/// The version of the price library whose bundled data [`cost_usd`] uses.
pub const PRICE_LIBRARY: &str = "genai-prices 0.2.1 (pydantic/genai-prices, bundled data)";

/// Token counts of one model call, as the `gen_ai.usage.*` attributes carry them (rule 1 of
/// issue 10, seed 003 "Step 7"). `None`: the plugin reported no such count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
    let input = usage.input_tokens?;
    let model = model.trim();
    if model.is_empty() {
        return None;
    }
    // Parts above their totals: the library checks only the parts the model has a price for.
    let cache = usage
        .cache_read_input_tokens
        .unwrap_or(0)
        .checked_add(usage.cache_write_input_tokens.unwrap_or(0))?;
    if cache > input
        || usage.reasoning_output_tokens.unwrap_or(0) > usage.output_tokens.unwrap_or(0)
        || usage.cache_write_1h_input_tokens.unwrap_or(0)
            > usage.cache_write_input_tokens.unwrap_or(0)
    {
        return None;
    }
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
    let price = Calculator::bundled().calculate(&request).ok()?;
    price
        .total_price
        .is_finite()
        .then_some(price.total_price)
        .filter(|p| *p >= 0.0)
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
}
