"use strict"
// Inputs that once failed (found by hand, by the property test or by the fuzzer), kept as fixtures.
// Each asserts: no throw, genkit:* unchanged, native == pure JS == reference after normalisation.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")
const { referenceOnEnd } = require("./helpers/reference")
const { canon } = require("./helpers/genkit-shapes")

const processor = new GenkitForMaple()
const IN = '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
const OUT = '{"message":{"role":"model","content":[{"text":"x"}]},"finishReason":"stop","usage":{"inputTokens":3,"outputTokens":1}}'

function check(input, output, subtype = "model") {
  const base = { "genkit:name": "googleai/gemini", "genkit:metadata:subtype": subtype, "genkit:input": input, "genkit:output": output }
  const native = structuredClone(base)
  assert.doesNotThrow(() => processor.onEnd({ attributes: native, name: "regression" }))
  for (const [k, v] of Object.entries(base)) assert.equal(native[k], v)
  const js = structuredClone(base)
  mapSpanJs(js)
  assert.deepStrictEqual(canon(native), canon(js), `native vs JS: ${input} / ${output}`)
  const ref = structuredClone(base)
  referenceOnEnd(ref)
  assert.deepStrictEqual(canon(native), canon(ref), `native vs reference: ${input} / ${output}`)
  return native
}

// Kind: valid JSON that serde_json refuses where a Genkit shape is read (a number beyond f64, a
// string with a lone surrogate escape): it was reported "not JSON" and every dependent attribute
// omitted, while JSON.parse accepts it. Every shape position, input and output.
for (const v of ["1e400", "-1e999", '"\\ud800"', '"a\\udc00"']) {
  test(`valid JSON refused by serde_json (${v}) maps like JSON.parse, every position`, () => {
    const inputs = [
      v,
      `{"messages":[{"role":"user","content":[{"toolRequest":${v}}]}]}`,
      `{"messages":[{"role":"user","content":[{"toolResponse":${v}},{"text":"a"}]}]}`,
      `{"messages":[{"role":"user","content":[${v},{"text":"a"}]}]}`,
    ]
    for (const input of inputs) {
      const attrs = check(input, OUT)
      assert.ok(attrs["gen_ai.input.messages"] !== undefined, input)
      assert.deepStrictEqual(attrs["gen_ai.response.finish_reasons"], ["stop"])
    }
    for (const output of [
      `{"message":{"role":"model","content":[${v},{"text":"b"}]},"finishReason":"stop"}`,
      `{"message":{"role":"model","content":[{"text":"x"}]},"usage":${v}}`,
      `{"message":{"role":"model","content":[{"toolRequest":${v}}]}}`,
    ]) {
      const attrs = check(IN, output)
      assert.ok(attrs["gen_ai.output.messages"] !== undefined, output)
    }
  })
}

test("a truthy refused value as output.message keeps finish reasons and usage (reference throws)", () => {
  for (const v of ["1e400", '"\\ud800"']) {
    const attrs = { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": IN, "genkit:output": `{"message":${v},"finishReason":"stop","usage":{"inputTokens":3}}` }
    processor.onEnd({ attributes: attrs, name: "x" })
    assert.equal(attrs["gen_ai.output.messages"], undefined)
    assert.deepStrictEqual(attrs["gen_ai.response.finish_reasons"], ["stop"])
    assert.equal(attrs["gen_ai.usage.input_tokens"], 3)
    assert.equal(attrs["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
  }
})
