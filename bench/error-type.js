#!/usr/bin/env node
"use strict"
// Rule 4 on a failed flow span in complete mode (BENCHMARKS.md "Stop 51"): the cost of one call of
// each way of naming the error, over the exception events of the real corpus's failed flows
// (__test__/fixtures/genkit-1.42-spans.jsonl):
//   errorType(type, stack)            the binding's rule, the two strings passed
//   errorType(...exceptionOf(span))   as js/complete.js called it before Stop 51 (a spread of a new array)
//   errorType()                       the call alone: a Node-API call and its answer's string
//   asciiStackName(stack)             the wrapper's reading of an ASCII name (js/complete.js)
// Median ns a call (tinybench, 5 rounds of 200 ms, each sample a batch of 1,000 calls; ± half the
// interquartile range of the rounds' medians).
//
//   node bench/error-type.js [--smoke]
const { Bench } = require("tinybench")
const native = require("../binding.js")
const { exceptionOf, asciiStackName } = require("../js/complete.js")
const { load } = require("../__test__/helpers/fixtures.js")

const smoke = process.argv.includes("--smoke")
const spans = load("genkit-1.42-spans.jsonl")
  .filter((row) => ["flow", "agent"].includes(row.attributes["genkit:metadata:subtype"]) && row.status?.code === 2)
  .map((row) => ({ status: row.status, events: row.events }))
if (spans.length === 0) throw new Error("the corpus has no failed flow span")
const exceptions = spans.map(exceptionOf)

/** Calls in one timed sample: a single call is below the timer's resolution. */
const BATCH = 1000
let sink
/** `call(i)` for the exceptions in turn, BATCH times. */
const batched = (call) => () => {
  for (let k = 0; k < BATCH; k++) sink = call(k % spans.length)
}
const calls = {
  "errorType(type, stack)": batched((i) => native.errorType(exceptions[i][0], exceptions[i][1])),
  "errorType(...exceptionOf(span))": batched((i) => native.errorType(...exceptionOf(spans[i]))),
  "errorType()": batched(() => native.errorType()),
  "asciiStackName(stack)": batched((i) => asciiStackName(exceptions[i][1])),
}

async function main() {
  const bench = new Bench({ time: smoke ? 5 : 200, iterations: smoke ? 2 : 5, warmup: !smoke })
  for (const [name, fn] of Object.entries(calls)) bench.add(name, fn)
  const rounds = smoke ? 1 : 5
  const samples = Object.fromEntries(Object.keys(calls).map((n) => [n, []]))
  for (let round = 0; round < rounds; round++) {
    await bench.run()
    for (const task of bench.tasks) samples[task.name].push((task.result.latency.p50 * 1e6) / BATCH)
  }
  const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  console.log(`${spans.length} failed flow spans of the corpus; ${process.version}${smoke ? "; SMOKE MODE: figures meaningless" : ""}`)
  for (const [name, list] of Object.entries(samples)) {
    const sorted = [...list].sort((a, b) => a - b)
    const median = quantile(sorted, 0.5)
    const spread = (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 2
    console.log(`${name.padEnd(34)} ${median.toFixed(1)} ns (±${((100 * spread) / median).toFixed(0)}%)`)
  }
  // The last answer, so that no call is optimised away.
  if (sink === undefined) console.log("(the last call answered undefined)")
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
