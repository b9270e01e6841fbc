"use strict"
// The options of GenkitForMaple (issue 10 "API"): validated in the constructor; complete mode
// survives the spans the native reader hands back (1e400, lone surrogates); the pure-JS fallback
// says in its one diag warning that it writes reference mode; the core's whole-span seam in
// reference mode equals the reference output on the real corpora.
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const path = require("node:path")
const { GenkitForMaple } = require("..")
const binding = require("../binding.js")
const { load, normalise } = require("./helpers/fixtures")

test("options: defaults, valid values, and a TypeError naming the option for anything else", () => {
  assert.deepEqual(new GenkitForMaple().options, { mode: "complete", cost: true, captureContent: true, scrubSecrets: true, secretPatterns: [], maxContentBytes: undefined })
  assert.deepEqual(new GenkitForMaple({}).options, { mode: "complete", cost: true, captureContent: true, scrubSecrets: true, secretPatterns: [], maxContentBytes: undefined })
  assert.deepEqual(new GenkitForMaple({ mode: "reference" }).options, { mode: "reference", cost: true, captureContent: true, scrubSecrets: true, secretPatterns: [], maxContentBytes: undefined })
  assert.deepEqual(new GenkitForMaple({ cost: false, mode: undefined }).options, { mode: "complete", cost: false, captureContent: true, scrubSecrets: true, secretPatterns: [], maxContentBytes: undefined })
  const bad = [
    [null, /options must be an object, got null/],
    [42, /options must be an object, got number 42/],
    ["complete", /options must be an object/],
    [[], /options must be an object, got an array/],
    [{ mode: "full" }, /option "mode" must be "complete" or "reference", got "full"/],
    [{ mode: 1 }, /option "mode" must be/],
    [{ cost: "yes" }, /option "cost" must be a boolean, got "yes"/],
    [{ cost: 0 }, /option "cost" must be a boolean, got number 0/],
    [{ captureContnet: false }, /unknown option "captureContnet" \(known options: mode, cost/],
  ]
  for (const [options, message] of bad) {
    assert.throws(() => new GenkitForMaple(options), (e) => e instanceof TypeError && message.test(e.message), JSON.stringify(options))
  }
})

const modelAttrs = (input, output) => ({
  "genkit:metadata:subtype": "model",
  "genkit:name": "googleai/gemini-2.5-flash",
  "genkit:input": input,
  "genkit:output": output,
})
const usage = '"usage":{"inputTokens":10,"outputTokens":4,"thoughtsTokens":6,"cachedContentTokens":3}'

test("complete mode keeps its rules on JSON the native reader refuses (1e400, lone surrogate escapes in keys)", () => {
  const p = new GenkitForMaple()
  const cases = [
    // A number beyond f64 (Infinity in JavaScript) where a Genkit shape is read.
    modelAttrs('{"messages":[{"role":"user","content":[{"text":"hi"}]}],"config":{"temperature":1e400}}', `{"message":{"role":"model","content":[{"text":"ok"}]},"finishReason":"stop",${usage},"custom":{"x":1e400}}`),
    // A lone surrogate escape in a key, and a raw lone surrogate in the text.
    modelAttrs(`{"messages":[{"role":"user","content":[{"text":"a\ud800b","\\udc00":1}]}]}`, `{"message":{"role":"model","content":[{"text":"ok"}]},"finishReason":"stop",${usage}}`),
  ]
  for (const attrs of cases) {
    const before = { ...attrs }
    p.onEnd({ name: "m", attributes: attrs })
    assert.equal(attrs["gen_ai.provider.name"], "gcp.gemini")
    assert.equal(attrs["gen_ai.usage.output_tokens"], 10, "thinking tokens added")
    assert.equal(attrs["gen_ai.usage.reasoning.output_tokens"], 6)
    assert.equal(attrs["gen_ai.usage.cache_read.input_tokens"], 3)
    assert.deepEqual(JSON.parse(attrs["gen_ai.output.messages"]), [{ role: "assistant", parts: [{ type: "text", content: "ok" }], finish_reason: "stop" }])
    assert.equal(JSON.parse(attrs["gen_ai.input.messages"])[0].parts[0].type, "text")
    for (const [k, v] of Object.entries(before)) assert.equal(attrs[k], v, `${k} unchanged`)
  }
  // The raw lone surrogate is U+FFFD in the transcript (what the OTLP wire carries for it).
  assert.equal(JSON.parse(cases[1]["gen_ai.input.messages"])[0].parts[0].content, "a\ufffdb")
  // A tool span whose result is a string with a lone surrogate escape.
  const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": "{}", "genkit:output": '"x\\ud800"' }
  p.onEnd({ name: "t", attributes: tool, status: { code: 2 }, events: [{ name: "exception", attributes: { "exception.type": "TypeError", "exception.stacktrace": "TypeError: bad\n  at x" } }] })
  assert.equal(tool["gen_ai.tool.call.result"], "x\ufffd")
  assert.equal(tool["error.type"], "TypeError")
})

test("complete mode never throws and never changes genkit:* on odd spans", () => {
  const p = new GenkitForMaple()
  const odd = [
    { "genkit:metadata:subtype": "model" },
    { "genkit:metadata:subtype": "model", "genkit:name": 42, "genkit:input": "{", "genkit:output": "[" },
    { "genkit:metadata:subtype": "tool.v2", "genkit:output": '{"output":1,"content":[null,{"media":{"url":7}}]}' },
    { "genkit:metadata:subtype": "flow", "genkit:name": { toString: () => { throw new Error("x") } } },
    modelAttrs('{"messages":[{"role":"user","content":[{"media":{"url":"data:image/png;base64"}}]}]}', '{"candidates":[{"message":{"role":"model","content":[{"media":{"url":"data:,"}}]}}]}'),
  ]
  for (const attrs of odd) {
    const before = { ...attrs }
    assert.doesNotThrow(() => p.onEnd({ name: "odd", attributes: attrs, status: { code: 2 }, events: "not an array" }))
    for (const [k, v] of Object.entries(before)) assert.equal(attrs[k], v)
  }
  assert.equal(odd[1]["gen_ai.provider.name"], "42")
  assert.equal(odd[2]["gen_ai.tool.call.result"], '{"output":1,"content":[]}')
  assert.equal(odd[2]["error.type"], "_OTHER")
  assert.deepEqual(JSON.parse(odd[4]["gen_ai.output.messages"]), [{ role: "assistant", parts: [{ type: "blob", size: 0 }], finish_reason: "unknown" }])
})

test("the pure-JS fallback writes reference mode and its one diag warning says so", () => {
  const script = `
    const { diag, DiagLogLevel } = require("@opentelemetry/api")
    const warnings = []
    diag.setLogger({ warn: (m) => warnings.push(m), error() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN)
    const { GenkitForMaple } = require(${JSON.stringify(path.join(__dirname, ".."))})
    const p = new GenkitForMaple(), q = new GenkitForMaple({ mode: "complete" })
    const attrs = { "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:output": '{"usage":{"inputTokens":1,"outputTokens":2,"thoughtsTokens":3}}' }
    p.onEnd({ name: "m", attributes: attrs })
    process.stdout.write(JSON.stringify({ warnings, native: p.isNative || q.isNative, attrs }))
  `
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, GENKIT_FOR_MAPLE_FORCE_JS: "1" } })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.native, false)
  assert.equal(out.warnings.length, 1, JSON.stringify(out.warnings))
  assert.match(out.warnings[0], /pure-JS mapping, which writes reference mode only \(mode "complete" needs the native binding/)
  assert.equal(out.attrs["gen_ai.provider.name"], "googleai")
  assert.equal(out.attrs["gen_ai.usage.output_tokens"], 2)
})

test("the core's whole-span seam in reference mode writes the reference output on every real model and tool span", () => {
  const mapper = new binding.Mapper({ mode: "reference", cost: false })
  let n = 0
  for (const file of ["genkit-1.42-spans.jsonl", "genkit-1.42-plugin-spans.jsonl", "genkit-1.42-scenario-spans.jsonl"]) {
    for (const row of load(file)) {
      const subtype = row.attributes["genkit:metadata:subtype"]
      if (subtype !== "model" && subtype !== "tool") continue
      const attrs = { ...row.attributes }
      const flags = binding.mapSpan(mapper.id, attrs, attrs["genkit:input"], attrs["genkit:output"], 0, subtype, String(attrs["genkit:name"]), row.status.code, undefined, undefined, row.traceId, row.spanId, row.parentSpanId)
      assert.equal(flags, 0, row.scenario)
      assert.deepEqual(normalise(attrs), normalise(row.expected_attributes), `${file}: ${row.scenario} ${row.name}`)
      n++
    }
  }
  assert.ok(n >= 140, `${n} spans`)
})
