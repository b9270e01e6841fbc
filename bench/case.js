"use strict"
// One comparison of `npm run bench`, in a process of its own (bench/run.js spawns it):
//
//   node --expose-gc --max-semi-space-size=64 bench/case.js <case> [--smoke]
//
// <case>: corpus-model | corpus-tool | corpus-tool.v2 | corpus-flow | corpus-other (real Genkit 1.42
// spans, grouped the way GenkitForMaple routes them: `tool.v2` spans are mapped by complete mode
// only, as tool spans; the reference processor and mode "reference" write nothing for them, nor for
// "other" spans), each also with `-ok` (its spans that did not fail: corpus-flow-ok is corpus-flow
// less the two failed flows, on which complete mode adds rule 4's error.type), or
// model-<size>-<ascii|multi> (bench/synth.js). Every span carries its end time
// (the corpus's; a fixed one for synthetic spans), as the SDK's ended spans do.
//
// Variants, interleaved round by round (the order shuffled each round), each op mapping fresh
// copies of the spans' attribute maps, built key by key from `{}` the way the SDK's
// `Span.setAttribute` builds them (a `{ ...spread }` copy gets hidden classes that make every
// later property add migrate the object: not what onEnd sees):
//   copy    only the copy: its time and heap are subtracted from the others (net figures)
//   js      GenkitForMaple.onEnd on the pure-JS path (the instance's native binding removed:
//           what GENKIT_FOR_MAPLE_FORCE_JS=1 gives)
//   native  GenkitForMaple.onEnd on the native path (mode "reference": the same output as js)
//   complete  GenkitForMaple.onEnd in mode "complete" (the default; issue 10's rules, native)
//   ref     the reference processor as users have it: seed 000's onEnd (plain JavaScript, as its
//           TypeScript compiles; __test__/helpers/reference.js, the tests' oracle), issue 9's
//           baseline
//   writesRef, writesComplete  model spans: only the attributes mode "reference" / mode
//           "complete" adds, written in its order with their values made beforehand (no mapping,
//           no string made): the floor of writing each mode's attributes, whose difference is the
//           part of complete mode's extra cost no mapping can remove
//   floor   model/tool spans: benchFloor (benchmark-only, src/lib.rs, cargo feature `bench`: the
//           addon bench/run.js builds into target/bench-addon/, named by
//           GENKIT_FOR_MAPLE_BENCH_ADDON; the variant is left out without it): read the genkit:*
//           strings into Rust and create the native output strings, no JSON work
// Before timing, every span is mapped by both paths and the results must be identical.
// Prints one JSON line on stdout.

const v8 = require("node:v8")
const { PerformanceObserver } = require("node:perf_hooks")
const { Bench } = require("tinybench")
const { GenkitForMaple } = require("../js/processor.js")
const native = require("../binding.js")
// The benchmark-only exports (benchFloor, benchFloorPrepare) live in the addon built with the
// cargo feature `bench`; without it the floor variant is skipped.
const benchAddon = process.env.GENKIT_FOR_MAPLE_BENCH_ADDON ? require(process.env.GENKIT_FOR_MAPLE_BENCH_ADDON) : undefined
const { load } = require("../__test__/helpers/fixtures.js")
const { modelSpan, END_TIME } = require("./synth.js")
const { referenceOnEnd } = require("../__test__/helpers/reference.js")

if (typeof globalThis.gc !== "function") {
  console.error("bench/case.js needs --expose-gc")
  process.exit(2)
}
const gc = globalThis.gc

const caseId = process.argv[2]
const smoke = process.argv.includes("--smoke") || process.env.GENKIT_FOR_MAPLE_SMOKE === "1"

/** How the processor routes a span: model, tool, tool.v2, flow (flow/agent) or other. */
function group(attrs) {
  const subtype = attrs["genkit:metadata:subtype"]
  if (subtype === "flow" || subtype === "agent") return "flow"
  if (subtype === "model" || subtype === "tool" || subtype === "tool.v2") return subtype
  return "other"
}

function spansOf(id) {
  const corpus = /^corpus-(model|tool|tool\.v2|flow|other)(-ok)?$/.exec(id)
  if (corpus) {
    return load("genkit-1.42-spans.jsonl")
      .filter((row) => group(row.attributes) === corpus[1] && (corpus[2] === undefined || row.status?.code !== 2))
      .map((row) => ({ name: row.name, attributes: row.attributes, parentSpanId: row.parentSpanId, status: row.status, events: row.events, endTime: row.endTime }))
  }
  const synth = /^model-(\d+)-(ascii|multi)$/.exec(id)
  if (synth) {
    return [{ name: "googleai/gemini-2.5-flash", attributes: modelSpan(Number(synth[1]), synth[2]), endTime: END_TIME }]
  }
  throw new Error(`unknown case ${id}`)
}

const spans = spansOf(caseId)
const entries = spans.map((s) => Object.entries(s.attributes))
/** A fresh attribute map of span `i`, built as the SDK builds it. */
function copyOf(i) {
  const list = entries[i]
  const a = {}
  for (let k = 0; k < list.length; k++) a[list[k][0]] = list[k][1]
  return a
}
const kind = caseId.startsWith("corpus-") ? caseId.slice(7).replace(/-ok$/, "") : "model"
const jsProcessor = new GenkitForMaple({ mode: "reference" })
jsProcessor.native = undefined
const nativeProcessor = new GenkitForMaple({ mode: "reference" })
if (!nativeProcessor.isNative) throw new Error("native binding not loaded")
const completeProcessor = new GenkitForMaple({ mode: "complete" })

const ctx = { traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 }
const spanContext = () => ctx
// One span-like object per span, reused; each op gives it a fresh copy of the attributes.
const shells = spans.map((s) => ({
  name: s.name,
  attributes: undefined,
  spanContext,
  parentSpanContext: s.parentSpanId ? { spanId: s.parentSpanId } : undefined,
  status: s.status ?? { code: 0 },
  events: s.events ?? [],
  endTime: s.endTime,
}))

// --- correctness: both paths write the same attributes, byte for byte ---
const sorted = (a) => JSON.stringify(Object.keys(a).sort().map((k) => [k, a[k]]))
const OUTPUT_STRINGS = ["gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages", "gen_ai.tool.call.result"]
let outputStringBytes = 0 // V8 heap bytes of the native output strings of one op (header + payload)
const floorSlots = []
for (const [i, s] of spans.entries()) {
  const a = copyOf(i)
  const b = copyOf(i)
  jsProcessor.onEnd({ name: s.name, attributes: a, spanContext })
  nativeProcessor.onEnd({ name: s.name, attributes: b, spanContext })
  if (sorted(a) !== sorted(b)) {
    console.error(`${caseId}: the JS and native paths disagree on span "${s.name}"`)
    process.exit(1)
  }
  const keys = OUTPUT_STRINGS.filter((k) => typeof b[k] === "string" && s.attributes[k] === undefined)
  for (const k of keys) {
    const v = b[k]
    // eslint-disable-next-line no-control-regex
    const ascii = /^[\x00-\x7f]*$/.test(v)
    outputStringBytes += 16 + Math.ceil(((ascii ? 1 : 2) * v.length) / 8) * 8
  }
  if (benchAddon) floorSlots.push(benchAddon.benchFloorPrepare(keys, keys.map((k) => b[k])))
}
const withFloor = benchAddon !== undefined && (kind === "model" || kind === "tool")

/** The attributes `processor` adds to each span, in the order it writes them, values included. */
function addedBy(processor) {
  return spans.map((s, i) => {
    shells[i].attributes = copyOf(i)
    processor.onEnd(shells[i])
    const added = Object.entries(shells[i].attributes).filter(([k]) => !Object.hasOwn(s.attributes, k))
    shells[i].attributes = undefined
    return added
  })
}
/** The mean length of `lists`. */
const meanLength = (lists) => lists.reduce((n, l) => n + l.length, 0) / lists.length
const withWrites = kind === "model"
const writes = withWrites ? { reference: addedBy(nativeProcessor), complete: addedBy(completeProcessor) } : undefined

const utf8 = (v) => (typeof v === "string" ? Buffer.byteLength(v) : 0)
const inBytes = spans.reduce((n, s) => n + utf8(s.attributes["genkit:input"]) + utf8(s.attributes["genkit:output"]), 0)
const inChars = spans.reduce((n, s) => n + (s.attributes["genkit:input"]?.length ?? 0), 0)
// Small spans are mapped `batch` times per sample so that a sample is well above timer resolution.
const batch = Math.max(1, Math.min(64, Math.floor(20000 / Math.max(1, inChars))))
const perOp = batch * spans.length

let sink
const variants = {
  copy() {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        sink = shells[i]
      }
    }
  },
  js() {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        jsProcessor.onEnd(shells[i])
      }
    }
  },
  native() {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        nativeProcessor.onEnd(shells[i])
      }
    }
  },
  complete() {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        completeProcessor.onEnd(shells[i])
      }
    }
  },
  ref() {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        referenceOnEnd(shells[i].attributes)
      }
    }
  },
}
if (withWrites) {
  const writer = (lists) => () => {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        const a = shells[i].attributes
        const list = lists[i]
        for (let k = 0; k < list.length; k++) a[list[k][0]] = list[k][1]
      }
    }
  }
  variants.writesRef = writer(writes.reference)
  variants.writesComplete = writer(writes.complete)
}
if (withFloor) {
  const readInput = kind === "model"
  variants.floor = () => {
    for (let r = 0; r < batch; r++) {
      for (let i = 0; i < spans.length; i++) {
        shells[i].attributes = copyOf(i)
        const a = shells[i].attributes
        benchAddon.benchFloor(a, floorSlots[i], readInput ? a["genkit:input"] : undefined, a["genkit:output"])
      }
    }
  }
}
const names = Object.keys(variants)

// --- time: rounds of one short tinybench run per variant, order shuffled each round ---
const { shuffle } = require("./order")

const rounds = smoke ? 2 : 8
const roundTime = smoke ? 5 : 120 // ms per variant per round
const samples = Object.fromEntries(names.map((n) => [n, []]))
for (let round = 0; round <= rounds; round++) {
  for (const name of shuffle(names, round + 1)) {
    const bench = new Bench({ time: roundTime, iterations: smoke ? 2 : 5, warmup: false, retainSamples: true })
    bench.add(name, variants[name])
    bench.runSync()
    const result = bench.tasks[0].result
    if (result.state !== "completed") throw new Error(`${caseId} ${name}: ${result.state} ${result.error ?? ""}`)
    // Round 0 is the warm-up (JIT tiers, buffers grown): discarded.
    if (round > 0) for (const ms of result.latency.samples) samples[name].push((ms * 1e6) / perOp)
  }
}

function stats(list) {
  const s = [...list].sort((a, b) => a - b)
  const q = (p) => {
    const x = (s.length - 1) * p
    const lo = Math.floor(x)
    return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (x - lo)
  }
  return { median: q(0.5), p25: q(0.25), p75: q(0.75), n: s.length }
}

// --- JS heap allocated per op: gc, N ops without a GC in between, used heap after minus before ---
async function allocated(fn) {
  const measure = async (ops) => {
    gc()
    gc()
    let collections = 0
    const observer = new PerformanceObserver((list) => {
      collections += list.getEntries().length
    })
    observer.observe({ entryTypes: ["gc"] })
    const before = v8.getHeapStatistics().used_heap_size
    for (let i = 0; i < ops; i++) fn()
    const after = v8.getHeapStatistics().used_heap_size
    await new Promise((resolve) => setTimeout(resolve, 20))
    observer.disconnect()
    sink = undefined
    return { bytes: (after - before) / ops, collections }
  }
  const first = await measure(1)
  let ops = Math.max(1, Math.min(smoke ? 20 : 2000, Math.floor((24 << 20) / Math.max(1, first.bytes))))
  for (;;) {
    const m = await measure(ops)
    if (m.collections === 0 || ops === 1) return { ...m, ops }
    ops = Math.max(1, Math.floor(ops / 4))
  }
}

async function main() {
  const heap = {}
  for (const name of names) heap[name] = await allocated(variants[name])
  const result = {
    case: caseId,
    kind,
    spans: spans.length,
    batch,
    inBytes: inBytes / spans.length,
    outputStringBytes: outputStringBytes / spans.length,
    // Attributes each mode adds per span (mean over the spans).
    added: withWrites ? { reference: meanLength(writes.reference), complete: meanLength(writes.complete) } : undefined,
    time: Object.fromEntries(names.map((n) => [n, stats(samples[n])])),
    heap: Object.fromEntries(names.map((n) => [n, { bytesPerOp: heap[n].bytes / perOp, ops: heap[n].ops, gcs: heap[n].collections }])),
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
