"use strict"
// The attribute sink (src/sink.rs, js/sink.js): the binding records a span's gen_ai.* attributes
// and the wrapper writes them with named stores, so V8 keeps Genkit's attribute maps in fast mode
// (issue 9). Checked: every named store writes the key of the binding's table it stands for; the
// attribute maps of real corpus spans stay in fast mode in both modes (they became dictionaries
// when napi wrote them); a full, missing or wrong sink gives the same attributes as the sink; a
// setter that re-enters onEnd gets a sink of its own.
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const path = require("node:path")
const native = require("../binding.js")
const { GenkitForMaple } = require("..")
const { newMapper, loadNative } = require("../js/processor")
const { resolveOptions } = require("../js/options")
const sink = require("../js/sink")
const { P } = require("../js/mapping")
const { load } = require("./helpers/fixtures.js")
const { copyOf, shell } = require("./helpers/spans.js")

const root = path.join(__dirname, "..")
const spans = load("genkit-1.42-spans.jsonl")
const modelRows = spans.filter((r) => r.attributes["genkit:metadata:subtype"] === "model")
const toolRows = spans.filter((r) => r.attributes["genkit:metadata:subtype"] === "tool")

const entries = (a) => Object.keys(a).map((k) => [k, a[k]])
/** The sink's code of `key` with value kind `kind` (src/sink.rs, Layout). */
const KEYS = native.sinkKeys()
const code = (key, kind) => ((KEYS.indexOf(key) + 1) << sink.KIND_BITS) | kind

/**
 * Reference mode's binding call on a copy of `row`'s attributes `a` with the sink `codes`/`values`,
 * after what GenkitForMaple does before it (the JS-written attributes). Returns the binding's flags.
 */
function referenceCall(row, a, rules, codes, values) {
  const mapping = require("../js/mapping")
  if (row.attributes["genkit:metadata:subtype"] === "model") {
    mapping.mapModelName(a)
    return native.mapModelSpan(a, a["genkit:input"], a["genkit:output"], false, rules, String.prototype.slice, String.prototype.concat, codes, values)
  }
  mapping.mapToolOperation(a)
  return native.mapToolSpan(a, a["genkit:output"], rules, String.prototype.slice, a["genkit:input"], true, codes, values)
}

test("js/sink.js writes each key of src/sink.rs's table under its own code", () => {
  assert.ok(KEYS.length >= 30)
  for (const [i, key] of KEYS.entries()) {
    const out = sink.take()
    out.codes[0] = 1
    out.codes[1] = ((i + 1) << sink.KIND_BITS) | 1 // a number
    out.codes[2] = i + 0.5
    const a = {}
    assert.equal(sink.flush(a, out, false), 0)
    assert.deepEqual(entries(a), [[key, i + 0.5]], key)
  }
})

test("flush: every value kind, a key by name, discard, and the sink lets go of the values", () => {
  const out = sink.take()
  const big = "x".repeat(1000)
  const codes = [
    [code("gen_ai.operation.name", 0), 0], // = values[0]
    [code("gen_ai.usage.input_tokens", 1), 42], // = 42
    [(0 << sink.KIND_BITS) | 0, 0], // values[1] = values[2]
    [code("error.type", 2), 0], // = true (no such write in the core: the kind is checked)
    [code("error.type", 3), 0], // then false
  ]
  out.codes[0] = codes.length
  codes.forEach(([c, n], i) => {
    out.codes[1 + 2 * i] = c
    out.codes[2 + 2 * i] = n
  })
  out.values[0] = "chat"
  out.values[1] = "x.custom.key"
  out.values[2] = big
  const a = {}
  assert.equal(sink.flush(a, out, false), 0)
  assert.deepEqual(entries(a), [["gen_ai.operation.name", "chat"], ["gen_ai.usage.input_tokens", 42], ["x.custom.key", big], ["error.type", false]])
  assert.equal(out.values[2], undefined, "the sink keeps no value of the span")
  assert.equal(out.codes[0], 0)
  const again = sink.take()
  again.codes[0] = 1
  again.codes[1] = code("gen_ai.operation.name", 0)
  again.values[0] = "chat"
  const b = {}
  assert.equal(sink.flush(b, again, true), 0)
  assert.deepEqual(entries(b), [], "discarded")
  assert.equal(again.values[0], undefined)
})

test("flush: SLICE values are consecutive ranges of the one text, wherever the text's element is; discard still consumes it", () => {
  const out = sink.take()
  const text = "chat" + "y".repeat(40) + "googleai/gemini-2.5-flash"
  const codes = [
    [(0 << sink.KIND_BITS) | 0, 0], // values[0] = values[1] (a key by name before the text)
    [code("gen_ai.operation.name", sink.SLICE), 4], // values[2] is the text: [0, 4)
    [code("gen_ai.usage.input_tokens", 1), 7],
    [code("gen_ai.input.messages", sink.SLICE), 44], // [4, 44)
    [code("gen_ai.output.messages", 0), 0], // = values[3]
    [code("gen_ai.request.model", sink.SLICE), text.length], // [44, end)
    [code("gen_ai.system_instructions", sink.SLICE), text.length], // empty
  ]
  out.codes[0] = codes.length
  codes.forEach(([c, n], i) => {
    out.codes[1 + 2 * i] = c
    out.codes[2 + 2 * i] = n
  })
  out.values[0] = "x.custom.key"
  out.values[1] = 1.5
  out.values[2] = text
  out.values[3] = "ünïcode"
  const a = {}
  assert.equal(sink.flush(a, out, false), 0)
  assert.deepEqual(entries(a), [
    ["x.custom.key", 1.5],
    ["gen_ai.operation.name", "chat"],
    ["gen_ai.usage.input_tokens", 7],
    ["gen_ai.input.messages", "y".repeat(40)],
    ["gen_ai.output.messages", "ünïcode"],
    ["gen_ai.request.model", "googleai/gemini-2.5-flash"],
    ["gen_ai.system_instructions", ""],
  ])
  assert.deepEqual(out.values.slice(0, 4), [undefined, undefined, undefined, undefined], "the sink keeps no value of the span")
  // A sink of two entries: a SLICE [0, 4) of `text`, then a value `after`.
  const sliceThenValue = (after) => {
    const two = sink.take()
    two.codes[0] = 2
    two.codes[1] = code("gen_ai.operation.name", sink.SLICE)
    two.codes[2] = 4
    two.codes[3] = code("gen_ai.output.messages", 0)
    two.values[0] = text
    two.values[1] = after
    return two
  }
  // String.prototype.slice replaced after load: the sink still takes its ranges with the original.
  const again = sliceThenValue("kept")
  const original = String.prototype.slice
  String.prototype.slice = () => "polluted"
  try {
    const b = {}
    assert.equal(sink.flush(b, again, false), 0)
    assert.deepEqual(entries(b), [["gen_ai.operation.name", "chat"], ["gen_ai.output.messages", "kept"]])
  } finally {
    String.prototype.slice = original
  }
  // Discarded: the text's element is consumed, so the values after it are where they belong.
  const third = sliceThenValue("after")
  const c = {}
  assert.equal(sink.flush(c, third, true), 0)
  assert.deepEqual(entries(c), [])
  assert.deepEqual(third.values.slice(0, 2), [undefined, undefined])
})

test("the binding sends a span's ASCII strings as ranges of one text (SLICE), and writes them itself when that text cannot be set", () => {
  const reference = new GenkitForMaple({ mode: "reference" })
  const complete = new GenkitForMaple({ mode: "complete" })
  // Tool spans whose result is a JSON string (its text goes in as a range; an object result as
  // written is the call's own output value, ARGUMENT).
  const stringResults = toolRows.filter((r) => typeof r.attributes["genkit:output"] === "string" && r.attributes["genkit:output"].startsWith('"'))
  assert.ok(stringResults.length >= 2)
  for (const row of [...modelRows.slice(0, 4), ...stringResults.slice(0, 3)]) {
    const expected = copyOf(row.attributes)
    reference.onEnd(shell(row, expected))
    // A sink of the caller's: which kinds the binding recorded.
    const call = (values) => {
      const a = copyOf(row.attributes)
      const codes = new Float64Array(129)
      let flags = referenceCall(row, a, reference.rulesId, codes, values)
      const kinds = Array.from({ length: codes[0] }, (_, i) => codes[1 + 2 * i] & ((1 << sink.KIND_BITS) - 1))
      // The element of `values` the text is in: where the wrapper's cursor is at the first SLICE.
      let textAt = -1
      for (let i = 0, v = 0; i < codes[0] && textAt < 0; i++) {
        if (codes[1 + 2 * i] >>> sink.KIND_BITS === 0) v++
        if (kinds[i] === 0) v++
        else if (kinds[i] === sink.SLICE) textAt = v
      }
      flags |= sink.write(a, { codes, values }, false, a["genkit:input"], a["genkit:output"])
      return { a, flags, kinds, textAt }
    }
    const plainValues = () => Array.from({ length: 128 }, () => undefined)
    const got = call(plainValues())
    assert.equal(got.flags & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0, row.name)
    assert.ok(got.kinds.includes(sink.SLICE), `${row.name}: an ASCII string went in as a range`)
    assert.deepEqual(entries(got.a), entries(expected), row.name)
    // The text's element refuses a string (a setter of the caller's): every entry is written by
    // the binding, in order, and codes[0] says there is nothing left for the wrapper.
    // The same call again with a setter on the text's element that refuses a string.
    assert.ok(got.textAt >= 0, row.name)
    const refusing = plainValues()
    Object.defineProperty(refusing, got.textAt, {
      get: () => undefined,
      set(v) {
        if (typeof v === "string") throw new Error("refused")
      },
    })
    const direct = call(refusing)
    assert.equal(direct.flags & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0, `${row.name}: direct`)
    assert.deepEqual(direct.kinds, [], `${row.name}: nothing left in codes`)
    assert.deepEqual(entries(direct.a), entries(expected), `${row.name}: direct`)
    // Complete mode, sink and all, gives the same attributes as before the change (its own expected).
    const c = copyOf(row.attributes)
    complete.onEnd(shell(row, c))
    assert.ok(Object.keys(c).length > Object.keys(row.attributes).length, `${row.name}: complete mode wrote`)
  }
})

test("js/sink.js takes src/sink.rs's constants when the binding loads, and writes each as a string and as a new one-element list", () => {
  // The processor's copy of the binding's exports (fast properties), the same entries.
  assert.equal(loadNative().sinkConstants, native.sinkConstants)
  assert.equal(loadNative().mapSpan, native.mapSpan)
  const CONSTANTS = sink.constants()
  assert.deepEqual([...CONSTANTS], native.sinkConstants())
  assert.ok(CONSTANTS.includes("chat") && CONSTANTS.includes("stop") && CONSTANTS.includes("gcp.gemini"))
  assert.throws(() => sink.useConstants(["chat", 1]), TypeError)
  assert.equal(sink.constants(), CONSTANTS, "a bad table is refused, the one in use kept")
  const lists = []
  for (const [i, text] of CONSTANTS.entries()) {
    const out = sink.take()
    out.codes[0] = 2
    out.codes[1] = code("gen_ai.operation.name", 4)
    out.codes[2] = i
    out.codes[3] = code("gen_ai.response.finish_reasons", 5)
    out.codes[4] = i
    const a = {}
    assert.equal(sink.flush(a, out, false), 0)
    assert.deepEqual(entries(a), [["gen_ai.operation.name", text], ["gen_ai.response.finish_reasons", [text]]], text)
    lists.push(a["gen_ai.response.finish_reasons"])
  }
  // Each span gets its own array: a change to one span's list never reaches another's.
  lists[0].push("x")
  const out = sink.take()
  out.codes[0] = 1
  out.codes[1] = code("gen_ai.response.finish_reasons", 5)
  out.codes[2] = 0
  const b = {}
  sink.flush(b, out, false)
  assert.deepEqual(b["gen_ai.response.finish_reasons"], [CONSTANTS[0]])
})

test("the binding's constants reach the span as the same values, sink or not, in both modes", () => {
  const row = modelRows.find((r) => JSON.parse(r.attributes["genkit:output"]).finishReason === "stop" && !r.attributes["genkit:output"].includes("toolRequest"))
  assert.ok(row, "a corpus model span that stopped")
  for (const mode of ["reference", "complete"]) {
    const a = copyOf(row.attributes)
    new GenkitForMaple({ mode }).onEnd(shell(row, a))
    assert.deepEqual(a["gen_ai.response.finish_reasons"], ["stop"], mode)
    assert.equal(a["gen_ai.operation.name"], "chat", mode)
    assert.equal(a["gen_ai.provider.name"], mode === "complete" ? "gcp.gemini" : "googleai", mode)
    // Without a sink the binding makes the values itself (src/sink.rs `constant_value` aside).
    const b = copyOf(row.attributes)
    const mapper = newMapper(native, resolveOptions({ mode }))
    if (mode === "complete") {
      const flags = native.mapSpan(mapper.id, b, b["genkit:input"], b["genkit:output"], 0, "model", row.attributes["genkit:name"], 0, undefined, undefined, row.traceId, row.spanId, row.parentSpanId, undefined, undefined)
      assert.equal(flags & P.NEEDS_JS, 0)
      assert.deepEqual(b["gen_ai.response.finish_reasons"], ["stop"])
      assert.equal(b["gen_ai.provider.name"], "gcp.gemini")
      assert.equal(b["gen_ai.operation.name"], "chat")
    }
  }
})

test("flush: a throwing setter is WRITE_FAILED for its attribute, the others are written", () => {
  const out = sink.take()
  out.codes[0] = 2
  out.codes[1] = code("gen_ai.usage.input_tokens", 1)
  out.codes[2] = 3
  out.codes[3] = code("gen_ai.usage.output_tokens", 1)
  out.codes[4] = 4
  const a = {}
  Object.defineProperty(a, "gen_ai.usage.input_tokens", { set() { throw new Error("no") }, configurable: true })
  assert.equal(sink.flush(a, out, false), P.WRITE_FAILED)
  assert.equal(a["gen_ai.usage.output_tokens"], 4)
  const frozen = Object.freeze({})
  const more = sink.take()
  more.codes[0] = 1
  more.codes[1] = code("gen_ai.usage.output_tokens", 1)
  assert.equal(sink.flush(frozen, more, false), P.WRITE_FAILED, "a frozen map")
})

test("real corpus spans keep fast properties after onEnd in both modes (napi's keyed writes made them dictionaries)", () => {
  const script = `
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    const { load } = require(${JSON.stringify(path.join(__dirname, "helpers", "fixtures.js"))})
    const rows = load("genkit-1.42-spans.jsonl").filter((r) => ["model", "tool"].includes(r.attributes["genkit:metadata:subtype"]))
    const out = {}
    for (const mode of ["reference", "complete"]) {
      const p = new GenkitForMaple({ mode })
      let fast = 0, added = 0
      for (const row of rows) {
        const a = {}
        for (const [k, v] of Object.entries(row.attributes)) a[k] = v
        const before = Object.keys(a).length
        p.onEnd({ name: row.name, attributes: a, spanContext: () => ({ traceId: row.traceId, spanId: row.spanId }), status: row.status, events: [] })
        added += Object.keys(a).length - before
        if (%HasFastProperties(a)) fast++
      }
      out[mode] = { fast, spans: rows.length, added }
    }
    process.stdout.write(JSON.stringify(out))
  `
  const r = spawnSync(process.execPath, ["--allow-natives-syntax", "-e", script], { encoding: "utf8" })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  for (const mode of ["reference", "complete"]) {
    assert.ok(out[mode].added > out[mode].spans * 3, `${mode}: attributes were written (${out[mode].added})`)
    assert.equal(out[mode].fast, out[mode].spans, `${mode}: every attribute map in fast mode`)
  }
})

test("a sink that is full, missing or not a sink: the same attributes, in the same order where it had room", () => {
  const variants = {
    none: () => [undefined, undefined],
    full: () => [new Float64Array(3), [undefined]], // room for one entry
    wrong: () => [new Uint8Array(64), [undefined]],
    notArray: () => [new Float64Array(129), {}],
  }
  const reference = new GenkitForMaple({ mode: "reference" })
  for (const row of [...modelRows.slice(0, 6), ...toolRows.slice(0, 4)]) {
    const expected = copyOf(row.attributes)
    reference.onEnd(shell(row, expected))
    for (const [name, make] of Object.entries(variants)) {
      const a = copyOf(row.attributes)
      const [codes, values] = make()
      let flags = referenceCall(row, a, reference.rulesId, codes, values)
      if (values !== undefined && codes instanceof Float64Array && Array.isArray(values)) {
        flags |= sink.write(a, { codes, values }, false, a["genkit:input"], a["genkit:output"])
      }
      assert.equal(flags & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0, `${row.name} ${name}`)
      assert.deepEqual(Object.fromEntries(entries(a)), Object.fromEntries(entries(expected)), `${row.name} ${name}`)
      if (name !== "full") assert.deepEqual(Object.keys(a), Object.keys(expected), `${row.name} ${name}: order`)
    }
  }
})

test("a setter that ends another span inside the write (re-entering onEnd) gets a sink of its own", () => {
  for (const mode of ["reference", "complete"]) {
    const p = new GenkitForMaple({ mode })
    const [outer, inner] = modelRows
    const expectedOuter = copyOf(outer.attributes)
    const expectedInner = copyOf(inner.attributes)
    const q = new GenkitForMaple({ mode })
    q.onEnd(shell(outer, expectedOuter))
    q.onEnd(shell(inner, expectedInner))
    const a = copyOf(outer.attributes)
    const b = copyOf(inner.attributes)
    let stored
    let reentered = 0
    Object.defineProperty(a, "gen_ai.input.messages", {
      enumerable: true,
      configurable: true,
      get: () => stored,
      set(v) {
        reentered++
        p.onEnd(shell(inner, b))
        stored = v
      },
    })
    p.onEnd(shell(outer, a))
    assert.equal(reentered, 1, mode)
    const plain = (o) => Object.fromEntries(Object.keys(o).map((k) => [k, o[k]]))
    assert.deepEqual(plain(b), plain(expectedInner), `${mode}: the inner span`)
    assert.deepEqual(plain(a), plain(expectedOuter), `${mode}: the outer span`)
  }
})

test("complete mode: a sink whose buffer is detached before or during the call: every attribute still written, constants too", () => {
  const row = modelRows.find((r) => !r.attributes["genkit:output"].includes("toolRequest"))
  const expected = copyOf(row.attributes)
  new GenkitForMaple({ mode: "complete" }).onEnd(shell(row, expected))
  const plain = (o) => Object.fromEntries(Object.keys(o).filter((k) => !k.startsWith("genkit:")).map((k) => [k, o[k]]))
  assert.equal(expected["gen_ai.operation.name"], "chat")
  assert.deepEqual(expected["gen_ai.response.finish_reasons"], ["stop"])
  assert.ok(Object.keys(plain(expected)).length > 10)

  // Before: a getter of genkit:input (read by the wrapper, before the binding call) detaches the
  // buffer of the sink the call will take; the binding writes into the attribute map itself.
  const p = new GenkitForMaple({ mode: "complete" })
  const next = sink.take()
  sink.flush({}, next, true)
  const a = copyOf(row.attributes)
  const input = a["genkit:input"]
  let detached = 0
  Object.defineProperty(a, "genkit:input", {
    enumerable: true,
    configurable: true,
    get() {
      if (next.codes.length > 0) {
        structuredClone(next.codes.buffer, { transfer: [next.codes.buffer] })
        detached++
      }
      return input
    },
  })
  p.onEnd(shell(row, a))
  assert.equal(detached, 1, "the getter ran once")
  assert.deepEqual(plain(a), plain(expected))
  // The detached sink is not reused: the next span gets a working one.
  const b = copyOf(row.attributes)
  p.onEnd(shell(row, b))
  assert.deepEqual(plain(b), plain(expected))
  assert.notEqual(sink.take(), next)

  // During: a caller's values array whose element setter detaches the codes while the binding
  // fills it (the wrapper's array has no setter: only a direct caller can do this). The binding
  // finds the codes gone when it returns and writes every recorded entry itself (src/sink.rs
  // `write_directly`), the constants as strings and a new one-element list.
  const mapper = newMapper(native, resolveOptions({ mode: "complete" }))
  const codes = new Float64Array(1 + 2 * 64)
  const values = Array.from({ length: 128 }, () => undefined)
  let kept
  let during = 0
  Object.defineProperty(values, "0", {
    configurable: true,
    get: () => kept,
    set(v) {
      kept = v
      if (codes.length > 0) {
        structuredClone(codes.buffer, { transfer: [codes.buffer] })
        during++
      }
    },
  })
  const c = copyOf(row.attributes)
  const ctx = shell(row, c).spanContext()
  const flags = native.mapSpan(mapper.id, c, c["genkit:input"], c["genkit:output"], 0, "model", c["genkit:name"], 0, undefined, undefined, ctx.traceId, ctx.spanId, row.parentSpanId, row.endTime?.[0], row.endTime?.[1], codes, values)
  assert.equal(during, 1, "the codes were detached inside the call")
  assert.equal(flags & (P.NEEDS_JS | P.PANIC), 0)
  assert.deepEqual(plain(c), plain(expected))
})

/** The binding's call for tool span `row` on its copy `a` in `mode`, with the sink `codes`/`values`, after what the wrapper writes first. */
function toolCall(mode, rulesId, row, a, codes, values) {
  if (mode === "reference") return referenceCall(row, a, rulesId, codes, values)
  require("../js/mapping").mapToolOperation(a)
  return native.mapSpan(rulesId, a, a["genkit:input"], a["genkit:output"], 0, "tool", String(a["genkit:name"]), row.status?.code ?? 0, undefined, undefined, row.traceId, row.spanId, row.parentSpanId, undefined, undefined, codes, values)
}

test("a tool span's arguments and JSON result as written come back as the call's own values (ARGUMENT), not as elements of values", () => {
  const kindsOf = (codes) => Array.from({ length: codes[0] }, (_, i) => [codes[1 + 2 * i] & ((1 << sink.KIND_BITS) - 1), codes[2 + 2 * i]])
  for (const mode of ["reference", "complete"]) {
    const p = new GenkitForMaple({ mode })
    let named = 0
    for (const row of toolRows) {
      const expected = copyOf(row.attributes)
      new GenkitForMaple({ mode }).onEnd(shell(row, expected))
      const a = copyOf(row.attributes)
      const codes = new Float64Array(129)
      const values = Array.from({ length: 128 }, () => undefined)
      let flags = toolCall(mode, p.rulesId, row, a, codes, values)
      assert.equal(flags & (P.NEEDS_JS | P.PANIC), 0, `${mode} ${row.name}`)
      const kinds = kindsOf(codes)
      const args = kinds.filter(([kind]) => kind === sink.ARGUMENT)
      for (const [, which] of args) assert.ok(which === 0 || which === 1, `${mode} ${row.name}: argument ${which}`)
      named += args.length
      // Written from the values handed to write: swapped ones land where the entries say.
      const swapped = copyOf(a)
      sink.write(swapped, { codes: Float64Array.from(codes), values: [...values] }, false, "IN", "OUT")
      for (const [key, value] of Object.entries(swapped)) {
        if (value === "IN") assert.equal(expected[key], row.attributes["genkit:input"], `${mode} ${row.name} ${key}: the input`)
        if (value === "OUT") assert.equal(expected[key], row.attributes["genkit:output"], `${mode} ${row.name} ${key}: the output`)
      }
      flags |= sink.write(a, { codes, values }, false, a["genkit:input"], a["genkit:output"])
      if (mode === "reference") assert.deepEqual(entries(a), entries(expected), `${mode} ${row.name}`)
      else for (const key of ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]) assert.equal(a[key], expected[key], `${mode} ${row.name} ${key}`)
    }
    // Every corpus tool span's arguments are an object written as it is.
    assert.ok(named >= toolRows.length, `${mode}: ${named} ARGUMENT entries over ${toolRows.length} tool spans`)
  }
})

test("a value that only looks like an argument is not one: scrubbed arguments, and complete mode's input with a lone surrogate (written with U+FFFD)", () => {
  const row = toolRows[0]
  const kinds = (codes) => Array.from({ length: codes[0] }, (_, i) => codes[1 + 2 * i] & ((1 << sink.KIND_BITS) - 1))
  const secret = JSON.stringify({ city: "Paris", token: "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789" })
  const lone = '{"city":"Par\ud800is"}'
  for (const [mode, input, want] of [
    ["reference", secret, (v) => v !== secret && !v.includes("abcdefghijklmnop")],
    ["complete", secret, (v) => v !== secret && !v.includes("abcdefghijklmnop")],
    ["complete", lone, (v) => v === '{"city":"Par\ufffdis"}'],
  ]) {
    const p = new GenkitForMaple({ mode })
    const a = copyOf(row.attributes)
    a["genkit:input"] = input
    const codes = new Float64Array(129)
    const values = Array.from({ length: 128 }, () => undefined)
    const flags = toolCall(mode, p.rulesId, row, a, codes, values)
    assert.equal(flags & (P.NEEDS_JS | P.PANIC), 0, mode)
    const argumentEntries = kinds(codes).filter((k) => k === sink.ARGUMENT).length
    sink.write(a, { codes, values }, false, a["genkit:input"], a["genkit:output"])
    const written = a["gen_ai.tool.call.arguments"]
    assert.equal(typeof written, "string", `${mode}: arguments written`)
    assert.ok(want(written), `${mode}: ${JSON.stringify(written)}`)
    // Only the result (a JSON value as written) may still be an argument.
    assert.ok(argumentEntries <= 1, `${mode}: ${argumentEntries} ARGUMENT entries`)
  }
})

test("a one-element list of a short ASCII string outside the constants goes in as a range of the text made a list (SLICE_LIST), sink or not, in both modes", () => {
  // flush: each SLICE_LIST entry is a new array of its range; ranges run on from the SLICEs.
  const out = sink.take()
  const text = "chat\n\nUser:MAX_TOKENS_X"
  const codes = [
    [code("gen_ai.operation.name", sink.SLICE), 4],
    [code("gen_ai.request.stop_sequences", sink.SLICE_LIST), 11],
    [code("gen_ai.response.finish_reasons", sink.SLICE_LIST), text.length],
  ]
  out.codes[0] = codes.length
  codes.forEach(([c, n], i) => {
    out.codes[1 + 2 * i] = c
    out.codes[2 + 2 * i] = n
  })
  out.values[0] = text
  const a = {}
  assert.equal(sink.flush(a, out, false), 0)
  assert.deepEqual(entries(a), [
    ["gen_ai.operation.name", "chat"],
    ["gen_ai.request.stop_sequences", ["\n\nUser:"]],
    ["gen_ai.response.finish_reasons", ["MAX_TOKENS_X"]],
  ])
  assert.equal(out.values[0], undefined)

  // The binding: a model span asking for one stop sequence, answered with a finish reason the
  // constants do not list (reference mode copies Genkit's reason).
  const base = modelRows.find((r) => JSON.parse(r.attributes["genkit:output"]).finishReason === "stop")
  const input = JSON.parse(base.attributes["genkit:input"])
  input.config = { ...(input.config ?? {}), stopSequences: ["\n\nUser:"] }
  const output = JSON.parse(base.attributes["genkit:output"])
  output.finishReason = "MAX_TOKENS_X"
  const row = { ...base, attributes: { ...base.attributes, "genkit:input": JSON.stringify(input), "genkit:output": JSON.stringify(output) } }
  const kindsOf = (c) => Array.from({ length: c[0] }, (_, i) => c[1 + 2 * i] & ((1 << sink.KIND_BITS) - 1))
  const plain = (o) => Object.fromEntries(Object.keys(o).filter((k) => !k.startsWith("genkit:")).map((k) => [k, o[k]]))
  const values = () => Array.from({ length: 128 }, () => undefined)
  // Reference mode: the reason as a list, through the sink and without one.
  const reference = new GenkitForMaple({ mode: "reference" })
  const expected = copyOf(row.attributes)
  reference.onEnd(shell(row, expected))
  assert.deepEqual(expected["gen_ai.response.finish_reasons"], ["MAX_TOKENS_X"])
  const r = copyOf(row.attributes)
  const rCodes = new Float64Array(129)
  const rValues = values()
  let flags = referenceCall(row, r, reference.rulesId, rCodes, rValues)
  assert.ok(kindsOf(rCodes).includes(sink.SLICE_LIST), "reference: the reason went in as SLICE_LIST")
  flags |= sink.write(r, { codes: rCodes, values: rValues }, false, r["genkit:input"], r["genkit:output"])
  assert.equal(flags & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0)
  assert.deepEqual(plain(r), plain(expected))
  const r2 = copyOf(row.attributes)
  assert.equal(referenceCall(row, r2, reference.rulesId, undefined, undefined) & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0)
  assert.deepEqual(plain(r2), plain(expected), "reference: no sink")

  // Complete mode: the stop sequences as a list; the sink's, none, and the binding's own write
  // when the text's element refuses a string (src/sink.rs `write_directly`).
  const complete = new GenkitForMaple({ mode: "complete" })
  const want = copyOf(row.attributes)
  complete.onEnd(shell(row, want))
  assert.deepEqual(want["gen_ai.request.stop_sequences"], ["\n\nUser:"])
  const mapper = newMapper(native, resolveOptions({ mode: "complete" }))
  const completeCall = (c, codes, vals) =>
    native.mapSpan(mapper.id, c, c["genkit:input"], c["genkit:output"], 0, "model", String(c["genkit:name"]), 0, undefined, undefined, row.traceId, row.spanId, row.parentSpanId, row.endTime?.[0], row.endTime?.[1], codes, vals)
  const c1 = copyOf(row.attributes)
  const cCodes = new Float64Array(129)
  const cValues = values()
  flags = completeCall(c1, cCodes, cValues)
  assert.ok(kindsOf(cCodes).includes(sink.SLICE_LIST), "complete: the stop sequences went in as SLICE_LIST")
  // The element of values the text is in (the wrapper's cursor at the first range), before the write empties the codes.
  let textAt = -1
  for (let i = 0, v = 0; i < cCodes[0] && textAt < 0; i++) {
    if (cCodes[1 + 2 * i] >>> sink.KIND_BITS === 0) v++
    const kind = cCodes[1 + 2 * i] & ((1 << sink.KIND_BITS) - 1)
    if (kind === 0) v++
    else if (kind === sink.SLICE || kind === sink.SLICE_LIST) textAt = v
  }
  assert.ok(textAt >= 0)
  flags |= sink.write(c1, { codes: cCodes, values: cValues }, false, c1["genkit:input"], c1["genkit:output"])
  assert.equal(flags & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0)
  const c2 = copyOf(row.attributes)
  assert.equal(completeCall(c2, undefined, undefined) & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0)
  const c3 = copyOf(row.attributes)
  const refusing = values()
  Object.defineProperty(refusing, textAt, {
    get: () => undefined,
    set(v) {
      if (typeof v === "string") throw new Error("refused")
    },
  })
  const c3Codes = new Float64Array(129)
  assert.equal(completeCall(c3, c3Codes, refusing) & (P.NEEDS_JS | P.PANIC | P.WRITE_FAILED), 0)
  assert.equal(c3Codes[0], 0, "the binding wrote every entry itself")
  // The mapper pairs tool call ids across calls: compare what does not depend on that state.
  for (const got of [c1, c2, c3]) {
    assert.deepEqual(got["gen_ai.request.stop_sequences"], ["\n\nUser:"])
    assert.deepEqual(plain(got), plain(want))
  }
  assert.notEqual(c1["gen_ai.request.stop_sequences"], c2["gen_ai.request.stop_sequences"], "a new array per span")
})
