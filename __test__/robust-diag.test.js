"use strict"
// diag reports (issue 4): at most one per problem kind per minute per processor, naming the span
// (name, trace id, span id) and the reason; never the console; a throwing diag logger is harmless.
const test = require("node:test")
const assert = require("node:assert/strict")
const { diag, DiagLogLevel } = require("@opentelemetry/api")
const { GenkitForMaple } = require("..")

const IN = '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
const OUT = '{"message":{"role":"model","content":[{"text":"x"}]},"finishReason":"stop"}'
const model = (input, output) => ({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": output })
const KINDS = {
  "genkit:input is not valid JSON": () => model(IN.slice(0, 20), OUT),
  "genkit:input.messages has a shape": () => model('{"messages":{"a":1}}', OUT),
  "genkit:output is not valid JSON": () => model(IN, OUT.slice(0, 20)),
  "genkit:output message has a shape": () => model(IN, '{"message":5,"finishReason":"stop"}'),
  "genkit:output of a tool span is not valid JSON": () => ({ "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:output": "not json" }),
  "unexpected error while mapping": () => ({ ...model(IN, OUT), "genkit:name": { toString() { throw new Error("x") } } }),
}

test("complete mode: a tool span's genkit:input that is an array or an object is left out of the arguments, and diag says why", (t) => {
  const { logs } = capture(t)
  const processor = new GenkitForMaple({ mode: "complete" })
  for (const [i, input] of [[["a", "b"]], [{ q: 1 }], [7], [true]].map(([v], i) => [i, v])) {
    const attrs = { "genkit:name": "lookup", "genkit:metadata:subtype": "tool", "genkit:input": input, "genkit:output": '"ok"' }
    processor.onEnd({ attributes: attrs, name: `tool-${i}`, spanContext: () => ({ traceId: "a".repeat(32), spanId: "b".repeat(16) }) })
    const scalar = typeof input !== "object"
    assert.equal("gen_ai.tool.call.arguments" in attrs, scalar, `input ${i}`)
    if (scalar) assert.equal(attrs["gen_ai.tool.call.arguments"], input)
    assert.equal(attrs["gen_ai.tool.call.result"], "ok")
    assert.ok(Object.is(attrs["genkit:input"], input), "genkit:input unchanged")
  }
  const warns = logs.filter((l) => l.level === "warn" && l.message.startsWith("genkit-for-maple: span"))
  // One report a kind a minute: the first array names it.
  assert.equal(warns.length, 1, warns.map((l) => l.message).join("\n"))
  assert.match(warns[0].message, /span "tool-0" .*a tool span's genkit:input that is neither a string, a number nor a boolean/)
})

function capture(t) {
  const logs = []
  const record = (level) => (message, ...args) => logs.push({ level, message: String(message), args })
  diag.disable()
  diag.setLogger({ error: record("error"), warn: record("warn"), info: record("info"), debug: record("debug"), verbose: record("verbose") }, DiagLogLevel.ALL)
  const consoleCalls = []
  assert.ok(logs.length <= 1) // at most the API's own "logger overwritten" notice
  for (const m of ["log", "warn", "error", "info", "debug", "trace", "dir"]) t.mock.method(console, m, (...a) => consoleCalls.push([m, a]))
  t.after(() => {
    try {
      diag.disable()
    } catch {}
  })
  return { logs, consoleCalls }
}

test("one diag warning per problem kind per minute, naming the span and the reason; never the console", (t) => {
  let now = 1_000_000
  t.mock.method(Date, "now", () => now)
  const { logs, consoleCalls } = capture(t)
  const processor = new GenkitForMaple({ mode: "reference" })
  const spanOf = (attributes, i) => ({ attributes, name: `span-${i}`, spanContext: () => ({ traceId: `trace${i}`, spanId: `span${i}` }) })
  const runAll = (offset) => {
    let i = offset
    for (let round = 0; round < 25; round++) for (const make of Object.values(KINDS)) processor.onEnd(spanOf(make(), i++))
  }
  runAll(0)
  const warns = () => logs.filter((l) => l.level === "warn" && l.message.startsWith("genkit-for-maple: span"))
  assert.equal(warns().length, Object.keys(KINDS).length, warns().map((l) => l.message).join("\n"))
  for (const [reason] of Object.entries(KINDS)) {
    const hits = warns().filter((l) => l.message.includes(reason))
    assert.equal(hits.length, 1, reason)
    assert.match(hits[0].message, /span "span-\d+" trace\d+\/span\d+: /)
  }
  // 59 s later: still silent. 61 s after the first report: one more of each kind.
  now += 59_000
  runAll(1000)
  assert.equal(warns().length, Object.keys(KINDS).length)
  now += 2_001
  runAll(2000)
  assert.equal(warns().length, 2 * Object.keys(KINDS).length)
  assert.match(warns().at(-1).message, /span-2\d{3}/)
  assert.deepStrictEqual(consoleCalls, [], "nothing on the console")
  // Clean spans are never reported.
  const before = logs.length
  now += 120_000
  for (let i = 0; i < 50; i++) processor.onEnd(spanOf(model(IN, OUT), i))
  assert.equal(logs.length, before)
})

test("a diag logger that throws, and spans without name or spanContext, do not reach onEnd's caller", (t) => {
  const { consoleCalls } = capture(t)
  const boom = () => {
    throw new Error("logger")
  }
  diag.disable()
  try {
    // setLogger itself may log through the new logger.
    diag.setLogger({ error: boom, warn: boom, info: boom, debug: boom, verbose: boom }, DiagLogLevel.ALL)
  } catch {}
  for (const make of Object.values(KINDS)) {
    const processor = new GenkitForMaple({ mode: "reference" })
    assert.doesNotThrow(() => processor.onEnd({ attributes: make() }))
    assert.doesNotThrow(() => processor.onEnd({ attributes: make(), get name() { throw new Error("n") }, spanContext() { throw new Error("c") } }))
  }
  assert.deepStrictEqual(consoleCalls, [])
})
