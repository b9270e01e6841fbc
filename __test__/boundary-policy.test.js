"use strict"
// Issue 13 at the napi boundary: every napi status checked (a failed write is a problem flag, no
// napi call with an exception pending), values read once (a getter is never called twice, also
// when the span goes to the JS path), and a throwing getter costs only its attribute on every
// path (native, NEEDS_JS hand-off, pure JS). Mode "reference": the native path compared with the
// pure-JS one, which writes reference mode only; complete mode's reader (src/seam.rs) follows the
// memory policy (memory-limit.test.js) but does not yet read each value once or define array
// elements as own properties (open in issue 13).
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const path = require("node:path")
const { GenkitForMaple } = require("..")
const { P, mapSpanJs } = require("../js/mapping")

const root = path.join(__dirname, "..")
const INPUT = '{"messages":[{"role":"system","content":[{"text":"be brief"}]},{"role":"user","content":[{"text":"hi"}]}]}'
const OUTPUT = '{"message":{"role":"model","content":[{"text":"hello"}]},"finishReason":"stop","usage":{"inputTokens":3,"outputTokens":1}}'
// Routes: native, the NEEDS_JS hand-off (a raw lone surrogate), the pure-JS processor.
const LONE = '{"message":{"role":"model","content":[{"text":"\ud800"}]},"finishReason":"stop","usage":{"inputTokens":3,"outputTokens":1}}'
const processors = { native: new GenkitForMaple({ mode: "reference" }), js: Object.assign(new GenkitForMaple({ mode: "reference" }), { native: undefined }) }

/** A span whose `key` is a getter counting its calls, throwing when `throws`. */
function withGetter(base, key, value, throws) {
  const attrs = { ...base }
  const calls = { n: 0 }
  Object.defineProperty(attrs, key, {
    enumerable: true,
    configurable: true,
    get() {
      calls.n++
      if (throws) throw new Error("getter")
      return value
    },
  })
  return { attrs, calls }
}

const model = (input, output) => ({ "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": input, "genkit:output": output })

test("getters are called once on every path (native, NEEDS_JS hand-off, pure JS), model and tool spans", () => {
  for (const [route, output] of [["native", OUTPUT], ["handoff", LONE], ["js", OUTPUT]]) {
    const p = route === "js" ? processors.js : processors.native
    for (const key of ["genkit:input", "genkit:output"]) {
      const base = model(INPUT, output)
      const { attrs, calls } = withGetter(base, key, base[key], false)
      p.onEnd({ name: "s", attributes: attrs })
      assert.equal(calls.n, 1, `${route} ${key}`)
      const expected = mapSpanJs({ ...base })
      assert.equal(expected, 0)
      assert.equal(attrs["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
      assert.ok(attrs["gen_ai.output.messages"].startsWith('[{"role":"assistant"'), route)
    }
    const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": "{}" }
    const toolOutput = route === "handoff" ? '"\ud800"' : '"done"'
    const { attrs, calls } = withGetter(tool, "genkit:output", toolOutput, false)
    p.onEnd({ name: "t", attributes: attrs })
    assert.equal(calls.n, 1, `${route} tool`)
    assert.equal(attrs["gen_ai.tool.call.result"], JSON.parse(toolOutput))
  }
})

test("a throwing getter costs only the attributes derived from it, on every path", () => {
  for (const [route, output] of [["native", OUTPUT], ["handoff", LONE], ["js", OUTPUT]]) {
    const p = route === "js" ? processors.js : processors.native
    // genkit:input throws: the output attributes are still written.
    let span = withGetter(model(INPUT, output), "genkit:input", undefined, true)
    p.onEnd({ name: "s", attributes: span.attrs })
    assert.equal(span.calls.n, 1, route)
    assert.equal(span.attrs["gen_ai.input.messages"], undefined, route)
    assert.equal(span.attrs["gen_ai.system_instructions"], undefined, route)
    assert.ok(span.attrs["gen_ai.output.messages"].startsWith('[{"role":"assistant"'), route)
    assert.deepStrictEqual(span.attrs["gen_ai.response.finish_reasons"], ["stop"], route)
    assert.equal(span.attrs["gen_ai.usage.output_tokens"], 1, route)
    assert.equal(span.attrs["gen_ai.request.model"], "m", route)
    // genkit:output throws: the input attributes are still written.
    span = withGetter(model(INPUT, output), "genkit:output", undefined, true)
    p.onEnd({ name: "s", attributes: span.attrs })
    assert.equal(span.calls.n, 1, route)
    assert.equal(span.attrs["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]', route)
    assert.equal(span.attrs["gen_ai.system_instructions"], '[{"type":"text","content":"be brief"}]', route)
    assert.equal(span.attrs["gen_ai.output.messages"], undefined, route)
    // Tool span: genkit:input throws: the result is still written, and the other way round.
    const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": '{"a":1}', "genkit:output": route === "handoff" ? '"\ud800"' : '"done"' }
    span = withGetter(tool, "genkit:input", undefined, true)
    p.onEnd({ name: "t", attributes: span.attrs })
    assert.equal(span.attrs["gen_ai.tool.call.result"], JSON.parse(tool["genkit:output"]), route)
    assert.equal(span.attrs["gen_ai.tool.call.arguments"], undefined, route)
    assert.equal(span.attrs["gen_ai.tool.name"], "t", route)
    span = withGetter(tool, "genkit:output", undefined, true)
    p.onEnd({ name: "t", attributes: span.attrs })
    assert.equal(span.calls.n, 1, route)
    assert.equal(span.attrs["gen_ai.tool.call.arguments"], '{"a":1}', route)
    assert.equal(span.attrs["gen_ai.tool.call.result"], undefined, route)
  }
})

test("the binding reports the flags of a throwing getter like the JS mapping", () => {
  const binding = require("../binding.js")
  const { mapModelAttributes, THREW } = require("../js/mapping")
  for (const [input, output] of [[THREW, OUTPUT], [INPUT, THREW], [THREW, THREW]]) {
    const js = {}
    const jsFlags = mapModelAttributes(js, input, output)
    const p = processors.native
    const span = { ...model(INPUT, OUTPUT) }
    for (const [key, value] of [["genkit:input", input], ["genkit:output", output]]) {
      if (value === THREW) Object.defineProperty(span, key, { enumerable: true, get() { throw new Error("x") } })
    }
    const flags = []
    const report = p.problems.report
    p.problems.report = (f) => flags.push(f)
    p.onEnd({ name: "s", attributes: span })
    p.problems.report = report
    assert.deepStrictEqual(flags, [jsFlags])
    for (const k of Object.keys(js)) assert.deepStrictEqual(span[k], js[k], k)
    assert.ok(binding)
  }
})

test("a throwing index setter on Array.prototype: finish reasons still written (own data properties), nothing pending", () => {
  // In a child: the setter is process-wide.
  const script = `
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    let calls = 0
    const p = new GenkitForMaple({ mode: "reference" })
    const out = []
    const outputs = [
      ${JSON.stringify(OUTPUT)},
      '{"candidates":[{"message":{"role":"model","content":[]},"finishReason":"stop"},{"message":{"role":"model","content":[]},"finishReason":"length"}],"usage":{"inputTokens":1}}',
    ]
    const spans = outputs.map((output) => ({ "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": "{}", "genkit:output": output }))
    const setter = { configurable: true, set(v) { calls++; throw new Error("index setter") } }
    Object.defineProperty(Array.prototype, "0", setter)
    Object.defineProperty(Array.prototype, "1", setter)
    for (const attrs of spans) p.onEnd({ name: "s", attributes: attrs })
    delete Array.prototype[0]
    delete Array.prototype[1]
    for (const attrs of spans) {
      const reasons = attrs["gen_ai.response.finish_reasons"]
      out.push({ reasons: Object.getOwnPropertyNames(reasons ?? {}).map((k) => [k, reasons[k]]), tokens: attrs["gen_ai.usage.input_tokens"], messages: attrs["gen_ai.output.messages"] !== undefined })
    }
    process.stdout.write(JSON.stringify({ out, calls }))
  `
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" })
  assert.equal(r.status, 0, r.stderr)
  const { out, calls } = JSON.parse(r.stdout)
  assert.equal(calls, 0, "the prototype setter is never called")
  assert.deepStrictEqual(out[0], { reasons: [["0", "stop"], ["length", 1]], tokens: 3, messages: true })
  assert.deepStrictEqual(out[1], { reasons: [["0", "stop"], ["1", "length"], ["length", 2]], tokens: 1, messages: true })
})

test("a setter that throws on the attribute map is WRITE_FAILED: that attribute only, the others written", () => {
  const keys = ["gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"]
  for (const bad of keys) {
    const target = model(INPUT, OUTPUT)
    const attrs = new Proxy(target, {
      set(t, key, value) {
        if (key === bad) throw new Error("refused")
        t[key] = value
        return true
      },
    })
    const flags = []
    const p = new GenkitForMaple({ mode: "reference" })
    p.problems.report = (f) => flags.push(f)
    p.onEnd({ name: "s", attributes: attrs })
    assert.equal(target[bad], undefined, bad)
    for (const k of keys) if (k !== bad) assert.notEqual(target[k], undefined, `${k} when ${bad} throws`)
    assert.deepStrictEqual(flags, [P.WRITE_FAILED], bad)
  }
})

test("the panic hook keeps the message for diag (cargo test covers the hook; here: no panic, no message)", () => {
  const binding = require("../binding.js")
  assert.equal(binding.takePanicMessage(), null)
})
