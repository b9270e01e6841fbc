"use strict"
// Complete mode's tool path (js/complete.js `mapToolFast`, BENCHMARKS.md "Stop 47"): a `tool` span
// (failed or not) with a string `genkit:name` and a string or absent input and output, goes
// through the binding's tool path (`mapToolSpan`, the reference path's writers) with rule 5's
// tool call id added by the same call, instead of the whole-span mapping (`mapSpan`). Both must
// give the same attributes in the same order, the same flags and the same tool call id state.
// Each span here is mapped twice, by two native Mappers made from the same options and fed the
// same spans in the same order: one through `mapComplete` as the processor calls it, one with the
// whole-span path forced (`whole`).
const test = require("node:test")
const assert = require("node:assert/strict")
const { loadNative, newMapper } = require("../js/processor.js")
const { mapComplete } = require("../js/complete.js")
const { isLocalRoot, endTrace } = require("../js/pairing.js")
const { resolveOptions } = require("../js/options.js")
const { P } = require("../js/mapping.js")
const { load } = require("./helpers/fixtures")
const { mulberry32 } = require("./helpers/prng")

const native = loadNative()
const files = ["genkit-1.42-spans.jsonl", "genkit-1.42-plugin-spans.jsonl", "genkit-1.42-scenario-spans.jsonl"]

/** A ReadableSpan-like object of a fixture row (SDK 2.x shape), with its own attribute map. */
function spanOf(row, attributes = row.attributes) {
  return {
    name: row.name,
    attributes: { ...attributes },
    status: row.status ?? { code: 0 },
    events: row.events ?? [],
    endTime: row.endTime,
    spanContext: () => ({ traceId: row.traceId, spanId: row.spanId, traceFlags: 1 }),
    parentSpanContext: row.parentSpanId ? { spanId: row.parentSpanId } : undefined,
  }
}

/** Two Mappers of the same options; `map(row)` maps a row with each and returns both results. */
function pair(options) {
  const resolved = resolveOptions(options)
  const sides = [false, true].map((whole) => ({ whole, mapper: newMapper(native, resolved) }))
  return (row, attributes) =>
    sides.map(({ whole, mapper }) => {
      const span = spanOf(row, attributes)
      const subtype = span.attributes["genkit:metadata:subtype"]
      const flags = subtype === undefined ? 0 : mapComplete(mapper.id, native, span, span.attributes, subtype, undefined, whole)
      // The processor's end of trace (rule 5's state of a finished trace dropped).
      const holds = isLocalRoot(span) ? endTrace(mapper, span) : undefined
      return { attrs: Object.entries(span.attributes), flags, holds }
    })
}

function assertSame([fast, whole], what) {
  assert.deepEqual(fast.attrs, whole.attrs, `${what}: attributes`)
  assert.equal(fast.flags, whole.flags, `${what}: flags`)
  assert.equal(fast.holds, whole.holds, `${what}: tool call id state`)
}

/** Every fixture row, in the order the spans ended. */
function rowsOf(file) {
  const rows = load(file)
  if (rows[0].endTime !== undefined) rows.sort((a, b) => a.endTime[0] - b.endTime[0] || a.endTime[1] - b.endTime[1])
  return rows
}

test("the real corpora: every span gives what the whole-span mapping gives, tool call ids included", { skip: native === undefined && "no binding" }, () => {
  for (const options of [{}, { scrubSecrets: false }, { captureContent: false }, { maxContentBytes: 64 }, { secretPatterns: ["Paris|London"] }]) {
    let tools = 0
    let ids = 0
    for (const file of files) {
      const map = pair(options)
      for (const row of rowsOf(file)) {
        const results = map(row)
        assertSame(results, `${JSON.stringify(options)} ${file} ${row.name}`)
        if (row.attributes["genkit:metadata:subtype"] === "tool") {
          tools++
          if (results[0].attrs.some(([k]) => k === "gen_ai.tool.call.id")) ids++
        }
      }
    }
    assert.ok(tools >= 13, `${tools} tool spans`)
    // The pairing ran on the tool path: the corpora's tool spans follow their model answers.
    if (options.captureContent !== false) assert.ok(ids >= 5, `${JSON.stringify(options)}: ${ids} tool call ids`)
  }
})

// Tool span values of every kind the two paths could read differently.
const LONE = "lone \ud800 surrogate"
const SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0".repeat(3)
const inputs = [
  '{"city":"Paris"}', '{"b":1,"a":[1.0,2e0]}', "", "not json", "null", "42", '"a string"', undefined, null,
  `{"key":"${SECRET}"}`, `{"text":"${"é".repeat(3000)}"}`, `{"text":"${"x".repeat(70000)}"}`, `{"q":"${LONE}"}`,
  `{"q":"\\ud800"}`, '{"q":"\ud83d city"}', 7, true, { an: "object" },
]
const outputs = [
  '{"tempC":18.5}', '"plain text"', `"${SECRET}"`, "[1,2,3]", "not json", "", undefined, null, "1e400",
  `{"text":"${"y".repeat(200000)}"}`, `"${"z".repeat(200000)}"`, `"${"ü".repeat(5000)}"`, `{"q":"${LONE}"}`, '"\\ud800"', 12, false,
]

// Failed tool spans: exception events whose stack trace names the error, or only their type
// does, or neither; a type or stack that is not a string; no event; a long stack.
const exception = (attributes) => ({ status: { code: 2, message: "boom" }, events: [{ name: "exception", attributes }] })
const FAILURES = [
  exception({ "exception.type": "Error", "exception.message": "boom", "exception.stacktrace": "TypeError: boom\n    at tool (file.js:1:1)" }),
  exception({ "exception.type": "GenkitError", "exception.stacktrace": "not a stack" }),
  exception({ "exception.type": "RangeError" }),
  exception({ "exception.stacktrace": "FAILED_PRECONDITION: no booking\n    at x" }),
  exception({ "exception.type": 42, "exception.stacktrace": { not: "a string" } }),
  exception({ "exception.type": "ÜberError", "exception.stacktrace": `${"a".repeat(5000)}\n at y` }),
  exception({ "exception.type": "Bad\ud800Error", "exception.stacktrace": "\udc00: lone\n at z" }),
  exception({ "exception.type": "   ", "exception.stacktrace": "   \n at w" }),
  exception({}),
  { status: { code: 2 }, events: [] },
  { status: { code: 2 }, events: [{ name: "log", attributes: { "exception.type": "NotThisOne" } }, { name: "exception", attributes: { "exception.type": "ThisOne" } }] },
]

test("tool spans of every input and output kind, with and without a tool request to pair with, failed or not", { skip: native === undefined && "no binding" }, () => {
  const random = mulberry32(47)
  const trace = "5".repeat(32)
  const parent = "6".repeat(16)
  for (const options of [{}, { scrubSecrets: false }, { captureContent: false }, { maxContentBytes: 100 }, { secretPatterns: ["city"] }]) {
    const map = pair(options)
    // Mappers that never see a model answer: no tool call id state, nothing paired or read for it.
    const stateless = pair(options)
    let n = 0
    for (const input of inputs) {
      for (const output of outputs) {
        if (random() < 0.5 && typeof input !== "object") {
          // A model answer asking for this very call first: the tool span has a request to pair with.
          const args = typeof input === "string" && input.startsWith("{") ? input : "{}"
          const answer = `{"message":{"role":"model","content":[{"toolRequest":{"ref":"call_${n}","name":"getWeather","input":${args}}}]},"finishReason":"stop"}`
          const model = { name: "googleai/gemini-2.5-flash", traceId: trace, spanId: (n * 2 + 1).toString(16).padStart(16, "0"), parentSpanId: parent, endTime: [1764547200, n] }
          assertSame(map(model, { "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:input": '{"messages":[]}', "genkit:output": answer }), `model ${n}`)
        }
        const row = { name: "getWeather", traceId: trace, spanId: (n * 2 + 2).toString(16).padStart(16, "0"), parentSpanId: parent, endTime: [1764547200, n] }
        // A third of them failed (rule 4's error.type from the exception event).
        if (random() < 0.33) Object.assign(row, FAILURES[Math.floor(random() * FAILURES.length)])
        const attributes = { "genkit:type": "action", "genkit:metadata:subtype": "tool", "genkit:name": "getWeather" }
        if (input !== undefined) attributes["genkit:input"] = input
        if (output !== undefined) attributes["genkit:output"] = output
        const what = `${JSON.stringify(options)} input ${JSON.stringify(input)?.slice(0, 40)} output ${JSON.stringify(output)?.slice(0, 40)}`
        assertSame(map(row, attributes), what)
        assertSame(stateless(row, attributes), `${what}, no state`)
        n++
      }
    }
    // The trace's root ends: its state goes on both sides alike.
    assertSame(map({ name: "chatFlow", traceId: trace, spanId: "7".repeat(16) }, { "genkit:metadata:subtype": "flow", "genkit:name": "chatFlow" }), "root")
  }
})

/** A model span (span id 11...1) of `trace` under `parent` whose answer asks for one tool call. */
function askingFor(trace, parent, ref, name, input) {
  const answer = `{"message":{"role":"model","content":[{"toolRequest":{"ref":"${ref}","name":"${name}","input":${input}}}]},"finishReason":"stop"}`
  return spanOf(
    { name: "googleai/gemini-2.5-flash", traceId: trace, spanId: "1".repeat(16), parentSpanId: parent },
    { "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:input": '{"messages":[]}', "genkit:output": answer },
  )
}

test("mapToolSpan's complete argument: only `true` pairs and masks a result problem of uncaptured content; any other value (the name and ids given) maps as reference mode", { skip: native === undefined && "no binding" }, () => {
  const trace = "8".repeat(32)
  const parent = "9".repeat(16)
  const ODD = [undefined, false, 1, "true", {}, null]
  /** A complete-mode Mapper holding one tool request (`call_0`) in `trace`, made by mapping its model answer. */
  const holding = (options) => {
    const mapper = newMapper(native, resolveOptions(options))
    const model = askingFor(trace, parent, "call_0", "getWeather", "{}")
    const flags = mapComplete(mapper.id, native, model, model.attributes, "model", undefined)
    assert.ok(flags & native.TOOL_CALL_STATE, "the model answer's tool request is kept")
    return mapper
  }
  const tool = (mapper, complete, output) => {
    const a = { "genkit:metadata:subtype": "tool", "genkit:name": "getWeather", "genkit:input": "{}", "genkit:output": output }
    const flags = native.mapToolSpan(a, output, mapper.id, String.prototype.slice, "{}", true, undefined, undefined, complete, "getWeather", trace, "2".repeat(16), parent)
    return { a, flags }
  }
  for (const complete of [true, ...ODD]) {
    const mapper = holding({})
    const { a, flags } = tool(mapper, complete, '{"temp":3}')
    assert.equal(a["gen_ai.tool.call.result"], '{"temp":3}', String(complete))
    if (complete === true) {
      assert.equal(a["gen_ai.tool.call.id"], "call_0")
      assert.equal(flags & native.TOOL_CALL_STATE, 0, "the one request paired: no state left")
    } else {
      assert.equal(a["gen_ai.tool.call.id"], undefined, String(complete))
      assert.equal(flags & native.TOOL_CALL_STATE, 0, `${String(complete)}: not asked`)
      // The request is still there: a complete call afterwards pairs it.
      assert.equal(tool(mapper, true, '{"temp":3}').a["gen_ai.tool.call.id"], "call_0", String(complete))
    }
    const off = holding({ captureContent: false })
    const broken = tool(off, complete, "{not json")
    assert.equal(broken.a["gen_ai.tool.call.result"], undefined)
    assert.equal(broken.flags & P.TOOL_OUTPUT_NOT_JSON, complete === true ? 0 : P.TOOL_OUTPUT_NOT_JSON, String(complete))
  }
})

test("a failed tool span takes the tool path: one mapToolSpan call, no mapSpan, error.type before the tool call id", { skip: native === undefined && "no binding" }, () => {
  const calls = { mapToolSpan: 0, mapSpan: 0 }
  const counted = { ...native, mapToolSpan: (...a) => (calls.mapToolSpan++, native.mapToolSpan(...a)), mapSpan: (...a) => (calls.mapSpan++, native.mapSpan(...a)) }
  const trace = "a".repeat(32)
  const parent = "b".repeat(16)
  const mapper = newMapper(native, resolveOptions({}))
  const model = askingFor(trace, parent, "call_9", "chargeCard", '{"amountCents":1299}')
  mapComplete(mapper.id, counted, model, model.attributes, "model", undefined)
  calls.mapSpan = 0
  const row = { name: "chargeCard", traceId: trace, spanId: "2".repeat(16), parentSpanId: parent, ...FAILURES[0] }
  const span = spanOf(row, { "genkit:metadata:subtype": "tool", "genkit:name": "chargeCard", "genkit:input": '{"amountCents":1299}' })
  const flags = mapComplete(mapper.id, counted, span, span.attributes, "tool", undefined)
  assert.deepEqual(calls, { mapToolSpan: 1, mapSpan: 0 })
  assert.equal(flags & ~native.TOOL_CALL_STATE, 0)
  assert.deepEqual(
    Object.entries(span.attributes).filter(([k]) => !k.startsWith("genkit:")),
    [
      ["gen_ai.operation.name", "execute_tool"],
      ["gen_ai.tool.name", "chargeCard"],
      ["gen_ai.tool.call.arguments", '{"amountCents":1299}'],
      ["error.type", "TypeError"],
      ["gen_ai.tool.call.id", "call_9"],
    ],
  )
})
