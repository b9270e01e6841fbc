"use strict"
// Inputs that once failed (found by hand, by the property test or by the fuzzer), kept as fixtures.
// Each asserts: no throw, genkit:* unchanged, native == pure JS == reference after normalisation.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")
const { referenceOnEnd } = require("./helpers/reference")
const { canon } = require("./helpers/genkit-shapes")

const processor = new GenkitForMaple({ mode: "reference" })
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

// Kind (found by cargo fuzz): a raw control character inside an object key. JSON.parse rejects
// the text; the native reader accepted it (serde_json reads keys as bytes without the check) and
// wrote attributes the reference and the pure-JS mapping cannot derive. Every key level.
test("a raw control character in a key makes the text not JSON, at every level", () => {
  for (const c of ["\n", "\t", "\u0000", "\u001f"]) {
    const outputs = [
      `{"messa${c}ge":{"role":"model","content":[]},"finishReason":"stop"}`,
      `{"message":{"ro${c}le":"model","content":[]},"finishReason":"stop"}`,
      `{"message":{"role":"model","content":[{"te${c}xt":"a"}]},"finishReason":"stop"}`,
      `{"message":{"role":"model","content":[{"toolRequest":{"na${c}me":"a"}}]},"finishReason":"stop"}`,
      `{"finishReason":"stop","usage":{"in${c}putTokens":1}}`,
      `{"finishReason":"stop","candidates":[{"mess${c}age":null}]}`,
    ]
    for (const output of outputs) {
      const base = { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": IN, "genkit:output": output }
      const native = structuredClone(base)
      processor.onEnd({ attributes: native, name: "x" })
      const js = structuredClone(base)
      mapSpanJs(js)
      assert.deepStrictEqual(canon(native), canon(js), JSON.stringify(output))
      assert.equal(native["gen_ai.response.finish_reasons"], undefined)
      assert.equal(native["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
      assert.throws(() => referenceOnEnd(structuredClone(base)), SyntaxError)
    }
    const input = `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"a${c}b":1}`
    check(IN, OUT) // a clean neighbour still maps
    const attrs = { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": OUT }
    processor.onEnd({ attributes: attrs, name: "x" })
    assert.equal(attrs["gen_ai.input.messages"], undefined)
    assert.deepStrictEqual(attrs["gen_ai.response.finish_reasons"], ["stop"])
  }
})

test("escaped control characters and lone surrogate escapes in keys are JSON", () => {
  check('{"a\\nb":1,"messages":[{"role":"user","content":[{"text":"hi"}]}]}', OUT)
  check('{"\\ud800":1,"messages":[{"role":"user","content":[{"text":"hi"}]}]}', OUT)
  check('{"\\u006dessages":[{"\\u0072ole":"\\u0073ystem","content":[{"text":"s"}]}]}', '{"\\u006dessage":{"role":"model","content":[]}}')
})

// Kind: genkit:name whose String() throws (an object with a throwing toString/valueOf, a
// Symbol.toPrimitive that throws). The reference throws before writing anything; the processor
// lost every attribute. Now only the attributes copying the name are omitted, on every subtype.
test("a genkit:name that cannot become a string omits only the name attributes", () => {
  const bad = [
    { toString() { throw new Error("toString") } },
    { [Symbol.toPrimitive]() { throw new Error("toPrimitive") } },
    Object.create(null),
  ]
  for (const name of bad) {
    for (const map of [(a) => processor.onEnd({ attributes: a, name: "bad-name" }), (a) => mapSpanJs(a)]) {
      const model = { "genkit:name": name, "genkit:metadata:subtype": "model", "genkit:input": IN, "genkit:output": OUT }
      assert.doesNotThrow(() => map(model))
      assert.throws(() => referenceOnEnd({ ...model }))
      assert.equal(model["gen_ai.operation.name"], "chat")
      assert.equal(model["gen_ai.provider.name"], undefined)
      assert.equal(model["gen_ai.request.model"], undefined)
      assert.equal(model["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
      assert.equal(model["gen_ai.output.messages"], '[{"role":"assistant","parts":[{"type":"text","content":"x"}],"finish_reason":"stop"}]')
      assert.equal(model["gen_ai.usage.input_tokens"], 3)
      const tool = { "genkit:name": name, "genkit:metadata:subtype": "tool", "genkit:input": '{"city":"Paris"}', "genkit:output": '"sunny"' }
      assert.doesNotThrow(() => map(tool))
      assert.equal(tool["gen_ai.operation.name"], "execute_tool")
      assert.equal(tool["gen_ai.tool.name"], undefined)
      assert.equal(tool["gen_ai.tool.call.arguments"], '{"city":"Paris"}')
      assert.equal(tool["gen_ai.tool.call.result"], "sunny")
      for (const subtype of ["flow", "agent"]) {
        const flow = { "genkit:name": name, "genkit:metadata:subtype": subtype, "genkit:metadata:conversationId": "c1" }
        assert.doesNotThrow(() => map(flow))
        assert.equal(flow["gen_ai.operation.name"], "invoke_agent")
        assert.equal(flow["gen_ai.agent.name"], undefined)
        assert.equal(flow["gen_ai.conversation.id"], "c1")
      }
    }
  }
  assert.equal(mapSpanJs({ "genkit:name": bad[0], "genkit:metadata:subtype": "model" }) & 64, 64, "ATTRIBUTE_TYPE flag")
})

// Kind: a list the binding makes (finish reasons, stop sequences), with an index setter on
// Array.prototype (prototype pollution): complete mode set its elements, so the setter took them
// and the span got an empty list (the review of stop 22). Every list is now defined element by
// element, as an array literal is, in both modes and with or without a constant.
test("an index setter on Array.prototype never takes an element of a list the binding writes", () => {
  const lists = {
    one: '{"message":{"role":"model","content":[{"text":"x"}]},"finishReason":"stop"}',
    other: '{"message":{"role":"model","content":[{"text":"x"}]},"finishReason":"STOP"}',
    two: '{"candidates":[{"index":0,"message":{"role":"model","content":[{"text":"a"}]},"finishReason":"stop"},{"index":1,"message":{"role":"model","content":[{"text":"b"}]},"finishReason":"length"}]}',
  }
  const input = '{"messages":[{"role":"user","content":[{"text":"hi"}]}],"config":{"stopSequences":["END","STOP"]}}'
  const taken = []
  Object.defineProperty(Array.prototype, "0", { configurable: true, set: (v) => taken.push(v), get: () => "PROTO" })
  const got = {}
  try {
    for (const mode of ["reference", "complete"]) {
      const p = new GenkitForMaple({ mode })
      for (const [name, output] of Object.entries(lists)) {
        const a = { "genkit:name": "openai/gpt-4o", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": output }
        p.onEnd({ attributes: a, name: "regression", spanContext: () => ({ traceId: "1".repeat(32), spanId: "2".repeat(16) }) })
        got[`${mode} ${name}`] = [Object.hasOwn(a["gen_ai.response.finish_reasons"], 0), [...a["gen_ai.response.finish_reasons"]]]
        if (mode === "complete") got[`${mode} ${name} stop`] = [Object.hasOwn(a["gen_ai.request.stop_sequences"], 0), [...a["gen_ai.request.stop_sequences"]]]
      }
    }
  } finally {
    delete Array.prototype[0]
  }
  assert.deepEqual(taken, [], "the setter was never called")
  assert.deepEqual(got, {
    "reference one": [true, ["stop"]],
    "reference other": [true, ["STOP"]],
    "reference two": [true, ["stop", "length"]],
    "complete one": [true, ["stop"]],
    "complete one stop": [true, ["END", "STOP"]],
    "complete other": [true, ["STOP"]],
    "complete other stop": [true, ["END", "STOP"]],
    "complete two": [true, ["stop", "length"]],
    "complete two stop": [true, ["END", "STOP"]],
  })
})
