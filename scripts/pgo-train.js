#!/usr/bin/env node
"use strict"
// The training run of the profile-guided build (`npm run pgo`, scripts/pgo.js runs it under the
// instrumented addon; on its own it runs against whatever addon is built, which only costs time).
//
// What it maps is what a Genkit app's spans look like, not the benchmark's inputs, so the
// benchmark's rows stay measurements the profile was not trained on:
// - the real Genkit 1.42 spans of __test__/fixtures/genkit-1.42-scenario-spans.jsonl and
//   genkit-1.42-plugin-spans.jsonl (every plugin and scenario recorded: flows, model, tool, embedder
//   and other spans), not genkit-1.42-spans.jsonl, the benchmark's corpus;
// - synthetic model spans of bench/synth.js at 3, 30 and 300 KB and 2 MB of `genkit:input`, ASCII
//   and multi-byte (the benchmark's are 1, 10 and 100 KB, 1 and 5 MB);
// - the same synthetic spans with a credential in a message (the secret scrubber's hit path);
// through `GenkitForMaple` in both modes (`onEnd` as the SDK calls it), and through the real SDK into
// `genkit-for-maple/otlp`'s exporter, plain and fused, to an OTLP/HTTP receiver on 127.0.0.1 that
// this script starts and stops.
//
//   node scripts/pgo-train.js
const http = require("node:http")
const path = require("node:path")

const root = path.join(__dirname, "..")
const { GenkitForMaple } = require(root)
const { OTLPTraceExporter } = require(path.join(root, "js", "otlp.js"))
const { load } = require(path.join(root, "__test__", "helpers", "fixtures.js"))
const { modelSpan } = require(path.join(root, "bench", "synth.js"))

/** A model span's attributes with a credential in its last user text (the scrubber replaces it). */
function withSecret(attrs) {
  const input = JSON.parse(attrs["genkit:input"])
  const user = input.messages.findLast((m) => m.role === "user")
  user?.content.push({ text: "my key is sk-proj-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a and the password is hunter22" })
  return { ...attrs, "genkit:input": JSON.stringify(input) }
}

const corpus = [...load("genkit-1.42-scenario-spans.jsonl"), ...load("genkit-1.42-plugin-spans.jsonl")]
const synthetic = []
for (const size of [3_000, 30_000, 300_000, 2_000_000]) {
  for (const script of ["ascii", "multi"]) {
    const attrs = modelSpan(size, script)
    // Spans of every size map about the same number of bytes in all.
    const times = Math.max(2, Math.round(6e7 / size / 8))
    synthetic.push({ name: "googleai/gemini-2.5-flash", attributes: attrs, times })
    synthetic.push({ name: "googleai/gemini-2.5-flash", attributes: withSecret(attrs), times: Math.ceil(times / 8) })
  }
}
const rows = [...corpus.map((r) => ({ ...r, times: 200 })), ...synthetic]

// 1. onEnd, as the SDK calls it, on a fresh attribute map each time (the processor adds to it).
const ctx = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 }
for (const processor of [new GenkitForMaple({ mode: "reference" }), new GenkitForMaple({ mode: "complete" })]) {
  if (!processor.isNative) throw new Error("pgo-train: the native binding did not load")
  for (const row of rows) {
    const span = {
      name: row.name,
      spanContext: () => ctx,
      parentSpanContext: row.parentSpanId ? { spanId: row.parentSpanId } : undefined,
      status: row.status ?? { code: 0 },
      events: row.events ?? [],
      attributes: undefined,
    }
    for (let i = 0; i < row.times; i++) {
      span.attributes = { ...row.attributes }
      processor.onEnd(span)
    }
  }
}

// 2. The exporter, plain (after the processor) and fused, through the real SDK to a local receiver.
async function exportAll() {
  const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base")
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/x-protobuf" })
      res.end()
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${server.address().port}/v1/traces`
  try {
    for (const fused of [false, true]) {
      const exporter = new OTLPTraceExporter(fused ? { url, genkit: true } : { url })
      const processors = fused ? [] : [new GenkitForMaple()]
      const provider = new BasicTracerProvider({
        spanProcessors: [...processors, new BatchSpanProcessor(exporter, { maxExportBatchSize: 256, maxQueueSize: 1 << 16, scheduledDelayMillis: 20 })],
      })
      const tracer = provider.getTracer("genkit-tracer", "v1")
      let n = 0
      for (const row of rows) {
        for (let i = 0; i < Math.ceil(row.times / 10); i++) {
          const span = tracer.startSpan(row.name)
          span.setAttributes(row.attributes)
          span.end()
          if (++n % 64 === 0) await new Promise((resolve) => setImmediate(resolve))
        }
      }
      await provider.forceFlush()
      await provider.shutdown()
    }
  } finally {
    server.close()
  }
}

exportAll().then(
  () => console.log(`pgo-train: ${rows.length} span shapes mapped in both modes and exported plain and fused`),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
