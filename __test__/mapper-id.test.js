"use strict"
// The binding's per-span entries (mapSpan, mapModelSpan, mapToolSpan) take the native Mapper by its
// id, looked up in its thread's registry (src/seam.rs `registered`), instead of as a class
// instance argument. Checked: an id that names no live mapper of this thread (never given, the id
// of a collected mapper, one made in a worker) maps nothing and answers PANIC, and the processor
// then maps the span in JavaScript with the same attributes; ids are distinct; a worker's mapper
// maps there.
const test = require("node:test")
const assert = require("node:assert/strict")
const v8 = require("node:v8")
const vm = require("node:vm")
const { Worker } = require("node:worker_threads")
const path = require("node:path")
const native = require("../binding.js")
const { GenkitForMaple, newMapper } = require("../js/processor")
const { resolveOptions } = require("../js/options")
const { P } = require("../js/mapping")
const { load } = require("./helpers/fixtures.js")
const { copyOf, shell } = require("./helpers/spans.js")

const spans = load("genkit-1.42-spans.jsonl")
const modelRow = spans.find((r) => r.attributes["genkit:metadata:subtype"] === "model" && r.status?.code !== 2)
const toolRow = spans.find((r) => r.attributes["genkit:metadata:subtype"] === "tool" && r.status?.code !== 2)

const added = (a, row) => Object.keys(a).filter((k) => !(k in row.attributes))

/** The three entries on a copy of `row` with mapper id `id`: [flags, attributes written]. */
function entryCalls(id) {
  const calls = []
  const m = copyOf(modelRow.attributes)
  calls.push(["mapSpan", native.mapSpan(id, m, m["genkit:input"], m["genkit:output"], 0, "model", String(m["genkit:name"]), 0, undefined, undefined, modelRow.traceId, modelRow.spanId, modelRow.parentSpanId), added(m, modelRow)])
  const r = copyOf(modelRow.attributes)
  calls.push(["mapModelSpan", native.mapModelSpan(r, r["genkit:input"], r["genkit:output"], false, id, String.prototype.slice, String.prototype.concat), added(r, modelRow)])
  const t = copyOf(toolRow.attributes)
  calls.push(["mapToolSpan", native.mapToolSpan(t, t["genkit:output"], id, String.prototype.slice, t["genkit:input"], true), added(t, toolRow)])
  return calls
}

test("an id that names no mapper: every per-span entry answers PANIC and writes nothing", () => {
  const live = newMapper(native, resolveOptions({ mode: "complete" }))
  // Numbers napi's u32 conversion would truncate or wrap onto the live id, and values that are
  // not numbers: none names it (and none throws).
  const near = [live.id + 0.5, live.id + 2 ** 32, live.id - 2 ** 32, live.id + 2 ** 53, String(live.id), BigInt(live.id), { valueOf: () => live.id }, [live.id], true, NaN, Infinity]
  for (const id of [0, live.id + 1000, 2 ** 32 - 1, -1, ...near]) {
    for (const [entry, flags, written] of entryCalls(id)) {
      assert.equal(flags & P.PANIC, P.PANIC, `${entry}(${String(id)})`)
      assert.deepEqual(written, [], `${entry}(${String(id)}) wrote nothing`)
    }
  }
  // Without an id: mapSpan maps nothing; mapModelSpan and mapToolSpan apply no content rules.
  for (const id of [undefined, null]) {
    const [[, spanFlags, spanWritten], [, modelFlags], [, toolFlags, toolWritten]] = entryCalls(id)
    assert.equal(spanFlags & P.PANIC, P.PANIC, `mapSpan(${id})`)
    assert.deepEqual(spanWritten, [], `mapSpan(${id})`)
    assert.equal(modelFlags & P.PANIC, 0, `mapModelSpan(${id})`)
    assert.equal(toolFlags & P.PANIC, 0, `mapToolSpan(${id})`)
    assert.ok(toolWritten.includes("gen_ai.tool.call.arguments"), `mapToolSpan(${id})`)
  }
  // The live one maps (the same calls, its id).
  for (const [entry, flags, written] of entryCalls(live.id)) {
    assert.equal(flags & (P.PANIC | P.NEEDS_JS), 0, entry)
    assert.ok(written.length > 0, `${entry} wrote`)
  }
})

test("ids are distinct integers from 1, one per mapper", () => {
  const ids = Array.from({ length: 50 }, () => newMapper(native, resolveOptions({ mode: "reference" })).id)
  assert.ok(ids.every((id) => Number.isInteger(id) && id >= 1))
  assert.equal(new Set(ids).size, ids.length)
})

test("a processor whose mapper id names none maps in JavaScript: the same attributes, PANIC reported", () => {
  for (const mode of ["reference", "complete"]) {
    for (const row of [modelRow, toolRow]) {
      const want = copyOf(row.attributes)
      new GenkitForMaple({ mode }).onEnd(shell(row, want))
      const p = new GenkitForMaple({ mode })
      const reported = []
      p.problems = { report: (flags) => reported.push(flags) }
      p.rulesId = 0
      const got = copyOf(row.attributes)
      p.onEnd(shell(row, got))
      assert.ok(reported.some((f) => f & P.PANIC), `${mode} ${row.name}: PANIC reported`)
      // The JavaScript mapping is reference mode's (complete mode's rules live in the core).
      const reference = copyOf(row.attributes)
      new GenkitForMaple({ mode: "reference" }).onEnd(shell(row, reference))
      assert.deepEqual(got, mode === "reference" ? want : reference, `${mode} ${row.name}`)
    }
  }
})

test("the id of a collected mapper names none", async () => {
  v8.setFlagsFromString("--expose-gc")
  const gc = vm.runInNewContext("gc")
  let id = (() => newMapper(native, resolveOptions({ mode: "complete" })).id)()
  let flags = entryCalls(id)[0][1]
  assert.equal(flags & P.PANIC, 0, "alive: maps")
  // napi runs a collected object's finalizer after the collection, from the event loop.
  for (let i = 0; i < 50 && (flags & P.PANIC) === 0; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 10))
    flags = entryCalls(id)[0][1]
  }
  assert.equal(flags & P.PANIC, P.PANIC, "collected: PANIC")
})

test("a mapper made in a worker maps there; its id names none on the main thread", async () => {
  const binding = path.join(__dirname, "..", "binding.js")
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads")
     const native = require(workerData.binding)
     const mapper = new native.Mapper({ mode: "complete", cost: false })
     const a = { "genkit:metadata:subtype": "tool", "genkit:name": "getWeather", "genkit:input": '{"city":"Paris"}', "genkit:output": '"sunny"' }
     const flags = native.mapSpan(mapper.id, a, a["genkit:input"], a["genkit:output"], 0, "tool", "getWeather", 0)
     parentPort.postMessage({ id: mapper.id, flags, result: a["gen_ai.tool.call.result"] })
     setTimeout(() => mapper.id, 1000) // alive while the main thread tries its id`,
    { eval: true, workerData: { binding } },
  )
  const message = await new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  })
  try {
    assert.equal(message.flags & (P.PANIC | P.NEEDS_JS), 0, "the worker maps with its mapper")
    assert.equal(message.result, "sunny")
    for (const [entry, flags, written] of entryCalls(message.id)) {
      assert.equal(flags & P.PANIC, P.PANIC, `${entry}: the worker's id on the main thread`)
      assert.deepEqual(written, [], entry)
    }
  } finally {
    await worker.terminate()
  }
})
