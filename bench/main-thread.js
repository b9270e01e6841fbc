#!/usr/bin/env node
"use strict"
// Main-thread cost per span of an arrangement in a real provider (BENCHMARKS.md "Stop 23"): the
// synthetic model span of bench/synth.js through a BasicTracerProvider (sdk-trace-base 2.x) with a
// BatchSpanProcessor of 512, the native exporter's HTTP send stubbed out (no network). Prints the
// main thread's CPU time per span after 4 warm-up batches. For instructions, run it under callgrind
// for two round counts and divide the difference of the main thread's totals (file `-01`) by the
// spans between them:
//   valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=/tmp/mt.%p node --single-threaded bench/main-thread.js native 5
//   (and 15: 5,120 spans between them; the first 4 rounds are warm-up, so <rounds> must be over 4);
//   `none` is the baseline (span creation, the batch processor).
// Arrangements: none, proc (GenkitForMaple), native (GenkitForMaple + genkit-for-maple/otlp),
// copy (the native exporter alone), ref (the reference processor), official (the reference
// processor + the official ProtobufTraceSerializer).
// Usage: node bench/main-thread.js <arrangement> <rounds> [<size> <ascii|multi>]
const path = require("node:path")
const root = path.join(__dirname, "..")
const [arr, rounds, size, script] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4] || 1000), process.argv[5] || "ascii"]
const ARRANGEMENTS = ["none", "proc", "native", "copy", "ref", "official"]
if (!ARRANGEMENTS.includes(arr) || !(rounds > 4)) {
  console.error(`usage: node bench/main-thread.js <${ARRANGEMENTS.join("|")}> <rounds > 4> [<size> <ascii|multi>]`)
  process.exit(2)
}
const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base")
const { ProtobufTraceSerializer } = require("@opentelemetry/otlp-transformer")
const { OTLPTraceExporter: Native } = require(path.join(root, "js", "otlp.js"))
const { GenkitForMaple } = require(root)
const { referenceOnEnd } = require(path.join(root, "__test__", "helpers", "reference.js"))
const { modelSpan } = require(path.join(__dirname, "synth.js"))
const clock = require(path.join(root, "binding.js")).benchThreadCpuNs

const row = modelSpan(size, script)
const reference = { onStart() {}, onEnd: (s) => referenceOnEnd(s.attributes), forceFlush: async () => {}, shutdown: async () => {} }
const nothing = { export: (items, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} }
let processors = []
let exporter = nothing
if (arr === "proc" || arr === "native") processors = [new GenkitForMaple()]
if (arr === "ref" || arr === "official") processors = [reference]
if (arr === "native" || arr === "copy") {
  exporter = new Native({ url: "http://127.0.0.1:9/v1/traces" })
  exporter._sendCounted = (bytes, items, done) => done({ code: 0 })
}
if (arr === "official") {
  exporter = { ...nothing, export: (items, done) => (ProtobufTraceSerializer.serializeRequest(items), done({ code: 0 })) }
}
const bsp = new BatchSpanProcessor(exporter, { maxExportBatchSize: 512, maxQueueSize: 1 << 20, scheduledDelayMillis: 1e9 })
const provider = new BasicTracerProvider({ spanProcessors: [...processors, bsp] })
const tracer = provider.getTracer("genkit", "1.42.0")
;(async () => {
  let t0 = 0
  for (let r = 0; r < rounds; r++) {
    if (r === 4) t0 = clock()
    for (let i = 0; i < 512; i++) {
      const span = tracer.startSpan("span")
      span.setAttributes(row)
      span.end()
    }
    await provider.forceFlush()
  }
  const us = (clock() - t0) / ((rounds - 4) * 512) / 1e3
  console.log(`${arr}: ${us.toFixed(2)} us of main-thread CPU per span (${size} ${script}, ${(rounds - 4) * 512} spans after warm-up)`)
})()
