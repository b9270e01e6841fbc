"use strict"
// The real Genkit 1.42 corpus, with and without real model plugins: after onEnd the attributes equal
// expected_attributes exactly (same keys, same values, JSON strings byte-identical), native and pure JS.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")
const { referenceOnEnd } = require("./helpers/reference")
const { load } = require("./helpers/fixtures")

const native = new GenkitForMaple({ mode: "reference" })
const corpus = load("genkit-1.42-spans.jsonl")
const plugins = load("genkit-1.42-plugin-spans.jsonl")

test("the native binding is loaded in the test environment", () => {
  assert.equal(native.isNative, true)
})

const runners = {
  native: (attrs, row) => native.onEnd({ attributes: attrs, name: row.name }),
  "pure JS": (attrs) => assert.equal(mapSpanJs(attrs), 0),
}

for (const [file, rows] of [
  ["genkit-1.42-spans.jsonl", corpus],
  ["genkit-1.42-plugin-spans.jsonl", plugins],
]) {
  for (const [mode, run] of Object.entries(runners)) {
    test(`${file}: ${mode} equals expected_attributes on all ${rows.length} spans`, () => {
      assert.ok(rows.length > 30)
      for (const row of rows) {
        const attrs = structuredClone(row.attributes)
        run(attrs, row)
        assert.deepStrictEqual(attrs, row.expected_attributes, `${row.scenario} / ${row.name} (${row.spanId})`)
      }
    })
  }
}

test("the reference oracle reproduces the main corpus (the oracle itself is right)", () => {
  for (const row of corpus) {
    const attrs = structuredClone(row.attributes)
    referenceOnEnd(attrs)
    assert.deepStrictEqual(attrs, row.expected_attributes, row.name)
  }
})

test("plugin corpus: candidate-form outputs get the answers the reference loses", () => {
  let lost = 0
  for (const row of plugins) {
    if (row.attributes["genkit:metadata:subtype"] !== "model") continue
    const ref = structuredClone(row.attributes)
    referenceOnEnd(ref)
    if (ref["gen_ai.output.messages"] === undefined) {
      lost++
      const attrs = structuredClone(row.attributes)
      native.onEnd({ attributes: attrs })
      assert.ok(JSON.parse(attrs["gen_ai.output.messages"])[0].role === "assistant")
      assert.ok(attrs["gen_ai.response.finish_reasons"].length >= 1)
    }
  }
  assert.ok(lost >= 5, `expected candidate-form spans in the plugin corpus, found ${lost}`)
})

test("genkit:* attributes are never changed and spans without a known subtype are untouched", () => {
  for (const row of corpus.concat(plugins)) {
    const attrs = structuredClone(row.attributes)
    native.onEnd({ attributes: attrs })
    for (const [k, v] of Object.entries(row.attributes)) assert.deepStrictEqual(attrs[k], v, k)
    const subtype = row.attributes["genkit:metadata:subtype"]
    if (!["flow", "agent", "model", "tool"].includes(subtype)) {
      assert.deepStrictEqual(Object.keys(attrs), Object.keys(row.attributes))
    }
  }
})
