"use strict"
// The per-span entries as plain Node-API callbacks (src/raw.rs): they convert their own
// arguments, leniently (a value of another type counts as not given), so they never throw where
// napi-rs's conversions did; and the sink's codes as the wrapper's ArrayBuffer (src/sink.rs
// `float64_elements`), which may be detached or, when a caller makes it resizable, shrunk while
// the binding runs: the binding then writes every attribute itself.
const test = require("node:test")
const assert = require("node:assert/strict")
const native = require("../binding.js")
const { newMapper } = require("../js/processor")
const { resolveOptions } = require("../js/options")
const { P } = require("../js/mapping")
const { load } = require("./helpers/fixtures.js")
const { copyOf } = require("./helpers/spans.js")

const spans = load("genkit-1.42-spans.jsonl")
const modelRow = spans.find((r) => r.attributes["genkit:metadata:subtype"] === "model")
const toolRow = spans.find((r) => r.attributes["genkit:metadata:subtype"] === "tool" && r.attributes["genkit:output"] !== undefined)
const reference = newMapper(native, resolveOptions({ mode: "reference" }))
const complete = newMapper(native, resolveOptions({ mode: "complete" }))

const gen = (a) => Object.fromEntries(Object.entries(a).filter(([k]) => k.startsWith("gen_ai.")))
const ODD = [undefined, null, 1.5, -1, 2 ** 40, NaN, "7", "", {}, [], Symbol("s"), 10n, () => 1, new Float64Array(3), new ArrayBuffer(8)]

/** The three entries with well-formed arguments for a fresh copy of the row's attributes. */
const calls = {
  mapModelSpan: (a) => [a, a["genkit:input"], a["genkit:output"], false, reference.id, String.prototype.slice, String.prototype.concat],
  mapToolSpan: (a) => [a, a["genkit:output"], reference.id, String.prototype.slice, a["genkit:input"], true],
  mapSpan: (a) => [complete.id, a, a["genkit:input"], a["genkit:output"], 0, "tool", String(a["genkit:name"]), 0, undefined, undefined, toolRow.traceId, toolRow.spanId, toolRow.parentSpanId, 1, 0],
  // Complete mode's tool path: the sink (its two arguments in the middle), then the span's name,
  // ids, status and exception. The mapper first holds a tool request for this span (so the name,
  // the ids and the input are read: with no state they are not).
  "mapToolSpan complete": (a) => {
    asks(toolRow)
    return [a, a["genkit:output"], complete.id, String.prototype.slice, a["genkit:input"], true, undefined, undefined, true, String(a["genkit:name"]), toolRow.traceId, toolRow.spanId, toolRow.parentSpanId, 2, "Error", "TypeError: boom\n    at x"]
  },
}
/** Has `complete` keep a tool request for `row` (its trace and parent), from a model answer. */
function asks(row) {
  const answer = JSON.stringify({ message: { role: "model", content: [{ toolRequest: { ref: "call_1", name: row.attributes["genkit:name"], input: JSON.parse(row.attributes["genkit:input"] ?? "{}") } }] } })
  const m = { "genkit:metadata:subtype": "model", "genkit:input": '{"messages":[]}', "genkit:output": answer }
  const flags = native.mapSpan(complete.id, m, m["genkit:input"], answer, 0, "model", "googleai/gemini-2.5-flash", 0, undefined, undefined, row.traceId, "1".repeat(16), row.parentSpanId, 1, 0)
  assert.ok(flags & native.TOOL_CALL_STATE, "the request is kept")
}
const rowOf = { mapModelSpan: modelRow, mapToolSpan: toolRow, mapSpan: toolRow, "mapToolSpan complete": toolRow }
/** The binding's entry a `calls` key names. */
const entry = (name) => native[name.split(" ")[0]]

test("each entry answers a number for every argument of every odd type, in every position, and never throws", () => {
  for (const [name, args] of Object.entries(calls)) {
    // The sink's two as well (the complete tool path's list holds them already).
    const n = args(copyOf(rowOf[name].attributes)).length + (name.endsWith("complete") ? 0 : 2)
    for (let at = 0; at < n; at++) {
      for (const odd of ODD) {
        const a = copyOf(rowOf[name].attributes)
        const argv = args(a)
        while (argv.length < n) argv.push(undefined)
        argv[at] = odd
        const flags = entry(name)(...argv)
        assert.equal(typeof flags, "number", `${name} argument ${at} = ${String(odd?.toString?.() ?? odd)}`)
        assert.ok(Number.isInteger(flags) && flags >= 0, `${name} argument ${at}: ${flags}`)
      }
    }
    assert.equal(typeof entry(name)(), "number", `${name}()`)
  }
})

test("lenient arguments map as the absent ones would: a tool span's withArguments that is not a boolean writes no arguments; complete mode's threw and status that are not numbers are 0", () => {
  const a = copyOf(toolRow.attributes)
  const flags = native.mapToolSpan(a, a["genkit:output"], reference.id, String.prototype.slice, a["genkit:input"], "yes")
  assert.equal(flags, 0)
  assert.equal(a["gen_ai.tool.call.arguments"], undefined)
  assert.equal(typeof a["gen_ai.tool.call.result"], "string")

  const b = copyOf(toolRow.attributes)
  const c = copyOf(toolRow.attributes)
  const argv = calls.mapSpan(b)
  native.mapSpan(...argv)
  const odd = calls.mapSpan(c)
  odd[4] = "0" // threw
  odd[7] = {} // status
  native.mapSpan(...odd)
  assert.deepEqual(gen(c), gen(b))
  assert.ok(Object.keys(gen(b)).length >= 4, "the tool span was mapped")
})

test("the sink's codes as an ArrayBuffer give what a Float64Array gives, in both modes", () => {
  for (const [name, row] of [["mapModelSpan", modelRow], ["mapToolSpan", toolRow], ["mapSpan", toolRow]]) {
    const out = {}
    for (const kind of ["buffer", "typed"]) {
      const buffer = new ArrayBuffer(8 * 129)
      const codes = new Float64Array(buffer)
      const values = Array.from({ length: 128 }, () => undefined)
      const a = copyOf(row.attributes)
      const flags = native[name](...calls[name](a), kind === "buffer" ? buffer : codes, values)
      assert.equal(flags & (P.NEEDS_JS | P.PANIC), 0)
      out[kind] = { n: codes[0], codes: Array.from(codes.subarray(0, 1 + 2 * codes[0])), gen: gen(a) }
    }
    assert.ok(out.buffer.n > 0, `${name}: entries recorded in the buffer`)
    assert.deepEqual(out.buffer, out.typed, name)
  }
})

test("a resizable ArrayBuffer shrunk, or a buffer detached, while the binding runs: every attribute is written directly, none into the old memory", () => {
  const expected = copyOf(toolRow.attributes)
  native.mapToolSpan(...calls.mapToolSpan(expected))
  for (const how of ["shrunk", "detached", "too small"]) {
    const buffer = how === "shrunk" ? new ArrayBuffer(8 * 129, { maxByteLength: 8 * 129 }) : new ArrayBuffer(how === "too small" ? 8 : 8 * 129)
    const values = Array.from({ length: 128 }, () => undefined)
    let kept
    let during = 0
    Object.defineProperty(values, "0", {
      configurable: true,
      get: () => kept,
      set(v) {
        kept = v
        if (how === "shrunk" && buffer.byteLength > 0) buffer.resize(0), during++
        if (how === "detached" && buffer.byteLength > 0) structuredClone(buffer, { transfer: [buffer] }), during++
      },
    })
    const a = copyOf(toolRow.attributes)
    // A string result with an escape: its text is not a range of the output, so it goes into
    // the sink's text, which is set into `values` (its setter runs) before the codes are read.
    a["genkit:output"] = JSON.stringify("It is 14:05\nin Zurich")
    const e = copyOf(expected)
    e["genkit:output"] = a["genkit:output"]
    native.mapToolSpan(...calls.mapToolSpan(e))
    assert.equal(e["gen_ai.tool.call.result"], "It is 14:05\nin Zurich")
    const flags = native.mapToolSpan(...calls.mapToolSpan(a), buffer, values)
    if (how !== "too small") assert.equal(during, 1, `${how}: inside the call`)
    assert.equal(flags & (P.NEEDS_JS | P.PANIC), 0, how)
    assert.deepEqual(gen(a), gen(e), how)
    assert.equal(buffer.byteLength, 0 + (how === "too small" ? 8 : 0), how)
  }
})

test("a sink whose values are not an Array (an array-like object, a typed array, a string) is no sink: each entry writes every attribute into the map itself", () => {
  for (const [name, args] of Object.entries(calls)) {
    const e = copyOf(rowOf[name].attributes)
    entry(name)(...args(e))
    assert.ok(Object.keys(gen(e)).length >= 2, `${name}: the attributes without a sink`)
    for (const values of [{ length: 128 }, Object.assign(Object.create(Array.prototype), { length: 128 }), new Float64Array(128), "x".repeat(128)]) {
      const buffer = new ArrayBuffer(8 * 129)
      const a = copyOf(rowOf[name].attributes)
      const argv = args(a)
      // The sink's two arguments at their place in each entry's list.
      const at = name === "mapSpan" ? 15 : name === "mapModelSpan" ? 7 : 6
      while (argv.length < at) argv.push(undefined)
      argv.splice(at, 2, buffer, values)
      const flags = entry(name)(...argv)
      assert.equal(flags & (P.NEEDS_JS | P.PANIC), 0, `${name}: ${Object.prototype.toString.call(values)}`)
      assert.deepEqual(gen(a), gen(e), `${name}: ${Object.prototype.toString.call(values)}`)
      assert.equal(new Float64Array(buffer)[0], 0, `${name}: nothing recorded in the codes`)
    }
  }
})
