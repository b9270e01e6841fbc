"use strict"
// Rule 2 (gen_ai.usage.cost) of issue 10 on the cost inputs the scenario corpus leaves out, live:
// real Genkit 1.42 and the real plugins against the fake providers (scripts/gen-scenario-corpus.js
// generateCostShapes), GenkitForMaple in a real OpenTelemetry SDK pipeline.
// - Anthropic cache writes with a one-hour TTL: priced at the 1-hour write rate, the rest at the
//   5-minute rate, from the anthropic plugin's `usage.custom` (stable runner) and from the API's
//   own usage in `raw` (beta runner, which records no `usage.custom`).
// - The response model (a dated snapshot the provider reports) is priced, not the requested one.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { generateCostShapes } = require("../scripts/gen-scenario-corpus")

const M = 1e6

function near(actual, expected, where) {
  assert.equal(typeof actual, "number", `${where}: gen_ai.usage.cost is a number`)
  assert.ok(Math.abs(actual - expected) < 1e-12, `${where}: cost ${actual}, expected ${expected}`)
}

test("live: 1-hour cache writes at their rate (stable and beta runner); the dated response model is priced", async () => {
  const processor = new GenkitForMaple()
  assert.equal(processor.isNative, true)
  const spans = await generateCostShapes({
    processors: [processor],
    cacheWrite1h: 280,
    // gpt-4o-2024-05-13: 5 / 15 per million (gpt-4o: 2.50 / 10).
    responseModels: { "gpt-4o": "gpt-4o-2024-05-13" },
  })
  const of = (label) => {
    const found = spans.filter((s) => s.label === label)
    assert.equal(found.length, 1, label)
    return found[0].attributes
  }
  // The "max-tokens answer": 91 uncached + 1024 read + 1280 written (280 of them for an hour),
  // 64 out. claude-sonnet-4-5: input 3, cache read 0.30, write 3.75 (5 min) / 6 (1 h), output 15.
  const claude = (91 * 3 + 1024 * 0.3 + 1000 * 3.75 + 280 * 6 + 64 * 15) / M
  for (const label of ["anthropic stable runner", "anthropic beta runner"]) {
    const a = of(label)
    assert.equal(a["gen_ai.usage.input_tokens"], 2395, label)
    assert.equal(a["gen_ai.usage.cache_read.input_tokens"], 1024, label)
    assert.equal(a["gen_ai.usage.cache_write.input_tokens"], 1280, label)
    near(a["gen_ai.usage.cost"], claude, label)
  }
  // OpenAI's counts for the same turn: 2395 in (1024 cached), 64 out.
  const o = of("compat-oai openai")
  assert.equal(o["gen_ai.request.model"], "gpt-4o")
  assert.equal(o["gen_ai.response.model"], "gpt-4o-2024-05-13")
  const input = o["gen_ai.usage.input_tokens"]
  const cached = o["gen_ai.usage.cache_read.input_tokens"] ?? 0
  const output = o["gen_ai.usage.output_tokens"]
  assert.ok(input > 0 && output > 0)
  // gpt-4o-2024-05-13 has no cache-read price of its own: cached tokens at the input rate.
  near(o["gen_ai.usage.cost"], (input * 5 + output * 15) / M, `gpt-4o-2024-05-13 (${input} in, ${cached} cached, ${output} out)`)
})
