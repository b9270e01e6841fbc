#!/usr/bin/env node
"use strict"
// Instructions per corpus model span (BENCHMARKS.md, "Issue 9c: instruction counts"): maps the 37
// model spans of the real Genkit corpus N times with one GenkitForMaple, each on a fresh copy of
// its attribute map; `copy` only copies; `ts` runs the reference processor itself instead (seed
// 000's onEnd as its TypeScript compiles, __test__/helpers/reference.js: issue 9's baseline);
// `floor` only reads the genkit:* strings a native mapping reads and sets the strings it writes,
// no JSON work (the benchmark-only `benchFloor`: the addon `npm run bench` builds into
// target/bench-addon/, named by GENKIT_FOR_MAPLE_BENCH_ADDON). Run under callgrind for two N and
// divide the difference of the totals by the spans between them (start-up, JIT warm-up and the
// price data's load cancel out), e.g. N = 60 and 260 for the corpus (7,400 spans between them):
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node --single-threaded --hash-seed=1 bench/instructions.js complete 260
// `--hash-seed=1`: V8 derives its string-hash secret from a random seed at start-up with a
// primality test whose cost varies by 4-19 million instructions from one process to the next
// (`HashSeed::InitializeRoots`): without a fixed seed that is +-1-2k instructions a span in the
// difference of two runs (BENCHMARKS.md "Stop 27").
// Both N past warm-up: V8 optimizes the wrapper's larger functions (complete mode's `mapComplete`,
// the sink's `flush`) only after a thousand calls or more, and a smaller first N counts their
// compilation as a per-span cost (BENCHMARKS.md "Stop 22": N = 10 / 60 put 38k instructions of
// TurboFan into complete mode's corpus figure). With `<size> <ascii|multi>` after N, one synthetic
// model span of bench/synth.js instead (1 KB: N = 6000 and 16000, 10 KB: 1300 and 3300, 1 MB: 3
// and 13, 5 MB: 2 and 6). `--root <checkout>` measures another build; `--subtype tool` the
// corpus's tool spans (or flow spans, ...) instead of its model spans; `--no-scrub` with
// `scrubSecrets: false` (the reference processor scrubs nothing: the like-for-like comparison).
// Usage: node bench/instructions.js <reference|complete|copy|ts|floor> <N> [<size> <ascii|multi>] [--root <checkout>] [--subtype <subtype>] [--no-scrub]
const path = require("node:path")
const argv = process.argv.slice(2)
const rootAt = argv.indexOf("--root")
const root = rootAt >= 0 ? path.resolve(argv.splice(rootAt, 2)[1]) : path.join(__dirname, "..")
const subtypeAt = argv.indexOf("--subtype")
const subtype = subtypeAt >= 0 ? argv.splice(subtypeAt, 2)[1] : "model"
const noScrubAt = argv.indexOf("--no-scrub")
const scrubSecrets = noScrubAt < 0
if (!scrubSecrets) argv.splice(noScrubAt, 1)
const { GenkitForMaple } = require(root)
const { load } = require(path.join(__dirname, "..", "__test__", "helpers", "fixtures.js"))
const { modelSpan, END_TIME } = require(path.join(__dirname, "synth.js"))
const { referenceOnEnd } = require(path.join(__dirname, "..", "__test__", "helpers", "reference.js"))

const [mode, n, size, script] = [argv[0], Number(argv[1]), Number(argv[2]), argv[3]]
if (!["reference", "complete", "copy", "ts", "floor"].includes(mode) || !(n > 0) || (argv.length > 2 && !(size > 0 && ["ascii", "multi"].includes(script)))) {
  console.error("usage: node bench/instructions.js <reference|complete|copy|ts|floor> <N> [<size> <ascii|multi>] [--root <checkout>] [--subtype <subtype>] [--no-scrub]")
  process.exit(2)
}
const rows =
  argv.length > 2
    ? [{ name: "m", attributes: modelSpan(size, script) }]
    : load("genkit-1.42-spans.jsonl").filter((r) => r.attributes["genkit:metadata:subtype"] === subtype)
const entries = rows.map((r) => Object.entries(r.attributes))
const ctx = { traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 }
const shells = rows.map((s) => ({
  name: s.name,
  spanContext: () => ctx,
  status: s.status ?? { code: 0 },
  events: s.events ?? [],
  parentSpanContext: s.parentSpanId ? { spanId: s.parentSpanId } : undefined,
  // The corpus span's end time (a fixed one for a synthetic span), as the SDK's ended spans have.
  endTime: s.endTime ?? END_TIME,
}))
/** The floor's `onEnd`: benchFloor with the strings reference mode writes for each row (as bench/case.js's floor). */
function floorProcessor() {
  const addon = process.env.GENKIT_FOR_MAPLE_BENCH_ADDON
  if (!addon) {
    console.error("floor needs GENKIT_FOR_MAPLE_BENCH_ADDON: the addon built with --features bench (npm run bench builds it into target/bench-addon/)")
    process.exit(2)
  }
  const bench = require(path.resolve(addon))
  const strings = ["gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages", "gen_ai.tool.call.result"]
  const reference = new GenkitForMaple({ mode: "reference", scrubSecrets })
  rows.forEach((r, i) => {
    const a = Object.fromEntries(entries[i])
    reference.onEnd({ ...shells[i], attributes: a })
    const keys = strings.filter((k) => typeof a[k] === "string" && r.attributes[k] === undefined)
    shells[i].floorSlot = bench.benchFloorPrepare(keys, keys.map((k) => a[k]))
  })
  const model = subtype === "model" || argv.length > 2
  return { isNative: true, onEnd: (span) => bench.benchFloor(span.attributes, span.floorSlot, model ? span.attributes["genkit:input"] : undefined, span.attributes["genkit:output"]) }
}
const processor =
  mode === "copy"
    ? undefined
    : mode === "ts"
      ? { isNative: true, onEnd: (span) => referenceOnEnd(span.attributes) }
      : mode === "floor"
        ? floorProcessor()
        : new GenkitForMaple({ mode, scrubSecrets })
if (processor !== undefined && !processor.isNative) {
  console.error("the native binding did not load (npm run build): the counts would be the pure-JS path's")
  process.exit(1)
}
for (let round = 0; round < n; round++) {
  for (let i = 0; i < shells.length; i++) {
    const attributes = {}
    for (const [k, v] of entries[i]) attributes[k] = v
    shells[i].attributes = attributes
    processor?.onEnd(shells[i])
  }
}
console.log(JSON.stringify({ mode, scrubSecrets, spans: n * shells.length }))
