"use strict"
// The napi boundary under re-entrancy and number edge cases (found by an adversarial review):
// a getter on the attribute map that re-enters onEnd, numbers that round to zero differently.
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const path = require("node:path")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")

const root = path.join(__dirname, "..")

test("a getter that re-enters onEnd: both spans mapped natively, nothing on the console", () => {
  const script = `
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    const p = new GenkitForMaple({ mode: "reference" })
    const flags = []
    const native = p.native
    p.native = { mapModelSpan: (...args) => { const f = native.mapModelSpan(...args); flags.push(f); return f }, mapToolSpan: (...args) => { const f = native.mapToolSpan(...args); flags.push(f); return f } }
    const inner = { "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": '{"messages":[{"role":"user","content":[{"text":"in"}]}]}' }
    const outer = { "genkit:metadata:subtype": "model", "genkit:name": "g/m" }
    Object.defineProperty(outer, "genkit:input", { enumerable: true, get() {
      p.onEnd({ name: "inner", attributes: inner })
      return '{"messages":[{"role":"user","content":[{"text":"out"}]}]}'
    } })
    for (let i = 0; i < 50; i++) p.onEnd({ name: "outer", attributes: outer })
    const toolInner = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:output": '"x"' }
    const tool = new Proxy({ "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:output": '{"a":1}' }, {
      set(target, key, value) { if (key === "gen_ai.tool.call.result") p.onEnd({ name: "t2", attributes: toolInner }); target[key] = value; return true },
    })
    p.onEnd({ name: "tool", attributes: tool })
    process.stdout.write(JSON.stringify({ flags, inner: inner["gen_ai.input.messages"], outer: outer["gen_ai.input.messages"], tool: tool["gen_ai.tool.call.result"], toolInner: toolInner["gen_ai.tool.call.result"] }))
  `
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, RUST_BACKTRACE: "1" } })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stderr, "", "nothing may reach the console")
  const out = JSON.parse(r.stdout)
  assert.equal(out.inner, '[{"role":"user","parts":[{"type":"text","content":"in"}]}]')
  assert.equal(out.outer, '[{"role":"user","parts":[{"type":"text","content":"out"}]}]')
  assert.equal(out.tool, '{"a":1}')
  assert.equal(out.toolInner, "x")
  assert.ok(out.flags.length >= 102)
  assert.deepStrictEqual([...new Set(out.flags)], [0], "no PANIC or NEEDS_JS flag")
})

test("numbers next to the smallest subnormal have JSON.parse's truthiness in every shape position", () => {
  const processor = new GenkitForMaple({ mode: "reference" })
  for (const n of ["2.4703282292062328e-324", "2.4703282292062327e-324", "5e-324", "1e-400", "-0.0", "0e99", "4.9406564584124654e-324"]) {
    const attrSets = [
      { "genkit:input": `{"messages":[{"role":"model","content":[{"toolRequest":${n}},{"toolResponse":${n}}]}]}` },
      { "genkit:output": `{"message":${n},"candidates":[{"message":{"role":"model","content":[]},"finishReason":"stop"}],"finishReason":${n}}` },
      { "genkit:output": `{"candidates":[{"message":${n},"finishReason":"stop"}]}` },
    ]
    for (const extra of attrSets) {
      const base = { "genkit:metadata:subtype": "model", "genkit:name": "g/m", ...extra }
      const native = { ...base }
      const js = { ...base }
      processor.onEnd({ name: "n", attributes: native })
      mapSpanJs(js)
      assert.deepStrictEqual(native, js, `${n} in ${JSON.stringify(extra)}`)
    }
  }
})

test("memory stays bounded on a huge array of parts the mapping drops (no per-element storage)", () => {
  // 10 MB of `0,` parts: storing an entry per element cost ~90x the input (1 GB) before.
  const script = `
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    const input = '{"messages":[{"role":"user","content":[' + "0,".repeat(5e6) + '{"text":"kept"}]}]}'
    const attrs = { "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": input }
    const before = process.resourceUsage().maxRSS
    new GenkitForMaple({ mode: "reference" }).onEnd({ name: "s", attributes: attrs })
    const grown = (process.resourceUsage().maxRSS - before) / 1024
    process.stdout.write(JSON.stringify({ grown, out: attrs["gen_ai.input.messages"] }))
  `
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" })
  assert.equal(r.status, 0, r.stderr)
  const { grown, out } = JSON.parse(r.stdout)
  assert.equal(out, '[{"role":"user","parts":[{"type":"text","content":"kept"}]}]')
  assert.ok(grown < 200, `maxRSS grew by ${grown.toFixed(0)} MB for a 10 MB input`)
})

test("a getter that throws on one genkit attribute loses only what depends on it", () => {
  const processor = new GenkitForMaple({ mode: "reference" })
  const boom = () => {
    throw new Error("boom")
  }
  const input = '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
  const output = '{"message":{"role":"model","content":[{"text":"yo"}]},"finishReason":"stop","usage":{"inputTokens":3}}'

  const badOutput = { "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": input }
  Object.defineProperty(badOutput, "genkit:output", { enumerable: true, get: boom })
  assert.doesNotThrow(() => processor.onEnd({ name: "m", attributes: badOutput }))
  assert.equal(badOutput["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
  assert.equal(badOutput["gen_ai.output.messages"], undefined)
  assert.equal(badOutput["gen_ai.operation.name"], "chat")

  const badInput = { "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:output": output }
  Object.defineProperty(badInput, "genkit:input", { enumerable: true, get: boom })
  assert.doesNotThrow(() => processor.onEnd({ name: "m", attributes: badInput }))
  assert.equal(badInput["gen_ai.input.messages"], undefined)
  assert.equal(badInput["gen_ai.output.messages"], '[{"role":"assistant","parts":[{"type":"text","content":"yo"}],"finish_reason":"stop"}]')
  assert.deepStrictEqual(badInput["gen_ai.response.finish_reasons"], ["stop"])
  assert.equal(badInput["gen_ai.usage.input_tokens"], 3)

  const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": "{}" }
  Object.defineProperty(tool, "genkit:output", { enumerable: true, get: boom })
  assert.doesNotThrow(() => processor.onEnd({ name: "t", attributes: tool }))
  assert.equal(tool["gen_ai.tool.name"], "t")
  assert.equal(tool["gen_ai.tool.call.result"], undefined)
})

test("a setter that throws for one gen_ai attribute loses only that attribute", () => {
  const target = {
    "genkit:metadata:subtype": "model",
    "genkit:name": "g/m",
    "genkit:input": '{"messages":[]}',
    "genkit:output": '{"message":{"role":"model","content":[]},"finishReason":"stop"}',
  }
  const attrs = new Proxy(target, {
    set(o, k, v) {
      if (k === "gen_ai.input.messages") throw new Error("no")
      o[k] = v
      return true
    },
  })
  assert.doesNotThrow(() => new GenkitForMaple({ mode: "reference" }).onEnd({ name: "x", attributes: attrs }))
  assert.equal(target["gen_ai.input.messages"], undefined)
  assert.equal(target["gen_ai.output.messages"], '[{"role":"assistant","parts":[],"finish_reason":"stop"}]')
  assert.deepStrictEqual(target["gen_ai.response.finish_reasons"], ["stop"])
})
