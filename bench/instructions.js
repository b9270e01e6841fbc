#!/usr/bin/env node
"use strict"
// Instructions per corpus model span (BENCHMARKS.md, "Issue 9c: instruction counts"): maps the 37
// model spans of the real Genkit corpus N times with one GenkitForMaple, each on a fresh copy of
// its attribute map; `copy` only copies. Run under callgrind for N = 10 and N = 110 and divide the
// difference of the totals by 3,700 (start-up, JIT warm-up and the price data's load cancel out):
//   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p node --single-threaded bench/instructions.js complete 110
// Usage: node bench/instructions.js <reference|complete|copy> <N>
const path = require("node:path")
const { GenkitForMaple } = require(path.join(__dirname, ".."))
const { load } = require(path.join(__dirname, "..", "__test__", "helpers", "fixtures.js"))

const [mode, n] = [process.argv[2], Number(process.argv[3])]
if (!["reference", "complete", "copy"].includes(mode) || !(n > 0)) {
  console.error("usage: node bench/instructions.js <reference|complete|copy> <N>")
  process.exit(2)
}
const rows = load("genkit-1.42-spans.jsonl").filter((r) => r.attributes["genkit:metadata:subtype"] === "model")
const entries = rows.map((r) => Object.entries(r.attributes))
const ctx = { traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 }
const shells = rows.map((s) => ({
  name: s.name,
  spanContext: () => ctx,
  status: s.status ?? { code: 0 },
  events: s.events ?? [],
  parentSpanContext: s.parentSpanId ? { spanId: s.parentSpanId } : undefined,
}))
const processor = mode === "copy" ? undefined : new GenkitForMaple({ mode })
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
console.log(JSON.stringify({ mode, spans: n * shells.length }))
