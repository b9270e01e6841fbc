#!/usr/bin/env node
"use strict"
// The exporter figure (issue 8): per exported span, through a real BatchSpanProcessor (sdk-trace-base
// 2.x) and OTLP/HTTP to a receiver in another process, compared in one run:
//   reference  : the reference processor (seed 000's onEnd, __test__/helpers/reference.js) + official OTLPTraceExporter
//   processor  : GenkitForMaple + official OTLPTraceExporter (@opentelemetry/exporter-trace-otlp-proto)
//   native     : GenkitForMaple + genkit-for-maple/otlp OTLPTraceExporter
//   fused      : genkit-for-maple/otlp OTLPTraceExporter({ genkit: true }) alone (the mapping on the
//                thread pool, while encoding)
//   copy       : genkit-for-maple/otlp OTLPTraceExporter alone, no mapping: its main-thread figure is
//                the cost of copying the span's fields (strings) out of V8, fused mode's floor (its
//                wire bytes are the unmapped spans')
// Figures per span:
//   main  : main-thread (event-loop) CPU time from span.end() to the batch handed to the HTTP transport:
//           time inside span.end() (the processors' onEnd, the BatchSpanProcessor's queueing), inside
//           the exporter's export() and, for the native exporter, inside the continuation that hands
//           the encoded bytes to the official delegate (the thread's CPU clock around each, nested
//           calls counted once). Span creation and setAttributes are not counted. Printed with its
//           two parts: `exporter` (inside the exporter's export() and continuation, also when the
//           BatchSpanProcessor calls export() from inside span.end()) and `processors` (the rest:
//           the processors' onEnd, the BatchSpanProcessor's queueing).
//   cpu   : CPU time of the process on all threads (process.cpuUsage, user + system) from the first
//           span.end() to the end of the run (forceFlush), minus the span creation time: the main
//           thread, the libuv pool (native encoding, gzip), V8's GC threads.
//   wire  : request body bytes the receiver got, per span.
// Workloads: the corpus model spans, all corpus spans, synthetic model spans (bench/synth.js) of
// 1 KB - 5 MB of genkit:input, ASCII and multi-byte. Each (workload, arrangement) is run twice,
// interleaved, and the second run is reported (the first warms the JIT and the allocator).
//
//   node bench/exporter.js [--smoke] [--only <workload name part>] [--json out.json]
const { spawn } = require("node:child_process")
const http = require("node:http")
const path = require("node:path")
const fs = require("node:fs")
const native = require("../binding.js")

const argv = process.argv.slice(2)
if (argv[0] === "--receiver") receiver()
else main().catch((error) => {
  console.error(error)
  process.exit(1)
})

/** The receiver process: answers 200 to every POST and counts body bytes; GET /stats reports them. */
function receiver() {
  let bytes = 0
  let requests = 0
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      res.end(JSON.stringify({ bytes, requests }))
      return
    }
    req.on("data", (c) => (bytes += c.length))
    req.on("end", () => {
      requests++
      res.writeHead(200, { "content-type": "application/x-protobuf" })
      res.end()
    })
  })
  server.listen(0, "127.0.0.1", () => console.log(server.address().port))
  process.on("disconnect", () => process.exit(0))
}

async function startReceiverProcess() {
  const child = spawn(process.execPath, [__filename, "--receiver"], { stdio: ["ignore", "pipe", "inherit", "ipc"] })
  const port = await new Promise((resolve, reject) => {
    child.stdout.once("data", (d) => resolve(Number(String(d).trim())))
    child.once("exit", (code) => reject(new Error(`receiver exited ${code}`)))
  })
  const stats = () =>
    new Promise((resolve, reject) => {
      http.get(`http://127.0.0.1:${port}/stats`, (res) => {
        let body = ""
        res.on("data", (c) => (body += c))
        res.on("end", () => resolve(JSON.parse(body)))
      }).on("error", reject)
    })
  return { url: `http://127.0.0.1:${port}/v1/traces`, stats, stop: () => child.disconnect() }
}

async function main() {
  const smoke = argv.includes("--smoke") || process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
  const jsonAt = argv.indexOf("--json")
  const root = path.join(__dirname, "..")
  const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base")
  const Official = require("@opentelemetry/exporter-trace-otlp-proto").OTLPTraceExporter
  const { OTLPTraceExporter: Native } = require(path.join(root, "js", "otlp.js"))
  const { GenkitForMaple } = require(root)
  const { referenceOnEnd } = require(path.join(root, "__test__", "helpers", "reference.js"))
  const { load } = require(path.join(root, "__test__", "helpers", "fixtures.js"))
  const { modelSpan } = require("./synth.js")

  const corpus = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
  const models = corpus.filter((r) => r.attributes["genkit:metadata:subtype"] === "model")
  const workloads = [
    { name: `corpus model spans (${models.length})`, rows: models.map((r) => r.attributes), count: smoke ? 64 : 2048 },
    { name: `all corpus spans (${corpus.length})`, rows: corpus.map((r) => r.attributes), count: smoke ? 64 : 2048 },
  ]
  const sizes = smoke ? [10_000] : [1_000, 10_000, 100_000, 1_000_000, 5_000_000]
  for (const size of sizes) {
    for (const script of smoke ? ["multi"] : ["ascii", "multi"]) {
      const count = smoke ? 16 : Math.max(6, Math.min(2048, Math.round(40e6 / size / 4)))
      workloads.push({ name: `synthetic ${label(size)} ${script}`, rows: [modelSpan(size, script)], count })
    }
  }

  const reference = { onStart() {}, onEnd: (span) => referenceOnEnd(span.attributes), forceFlush: async () => {}, shutdown: async () => {} }
  const arrangements = {
    reference: (url) => ({ processors: [reference], exporter: new Official({ url }) }),
    processor: (url) => ({ processors: [new GenkitForMaple()], exporter: new Official({ url }) }),
    native: (url) => ({ processors: [new GenkitForMaple()], exporter: new Native({ url }) }),
    fused: (url) => ({ processors: [], exporter: new Native({ url, genkit: true }) }),
    copy: (url) => ({ processors: [], exporter: new Native({ url }) }),
  }

  const onlyAt = argv.indexOf("--only")
  if (onlyAt >= 0) workloads.splice(0, workloads.length, ...workloads.filter((w) => w.name.includes(argv[onlyAt + 1])))
  const rx = await startReceiverProcess()
  const results = []
  console.log(`exporter bench (Node ${process.version}, ${smoke ? "smoke: figures meaningless" : "full"}); per span: main-thread us, CPU us (all threads), wire bytes`)
  for (const w of workloads) {
    const row = { workload: w.name }
    for (const round of [0, 1]) {
      for (const [name, make] of Object.entries(arrangements)) {
        const r = await run(make(rx.url), w, rx, { BasicTracerProvider, BatchSpanProcessor, Native })
        if (round === 1 || smoke) row[name] = r
      }
    }
    results.push(row)
    const f = (r) =>
      `${r.main.toFixed(1).padStart(9)} ${r.processors.toFixed(1).padStart(10)} ${r.exporter.toFixed(1).padStart(9)} ${r.cpu.toFixed(1).padStart(9)} ${String(Math.round(r.wire)).padStart(9)}`
    console.log(`\n${w.name} (${w.count} spans)`)
    console.log(`  ${"".padEnd(10)} ${"main us".padStart(9)} ${"processors".padStart(10)} ${"exporter".padStart(9)} ${"cpu us".padStart(9)} ${"wire B".padStart(9)}`)
    for (const k of Object.keys(arrangements)) console.log(`  ${k.padEnd(10)} ${f(row[k])}`)
    console.log(
      `  main-thread: reference/native ${(row.reference.main / row.native.main).toFixed(1)}x, processor/native ${(row.processor.main / row.native.main).toFixed(1)}x;` +
        ` cpu native/reference ${(row.native.cpu / row.reference.cpu).toFixed(2)}`,
    )
    console.log(
      `  fused: reference/fused ${(row.reference.main / row.fused.main).toFixed(1)}x main-thread, fused/copy ${(row.fused.main / row.copy.main).toFixed(2)}x;` +
        ` cpu fused/reference ${(row.fused.cpu / row.reference.cpu).toFixed(2)}`,
    )
  }
  rx.stop()
  const bad = results.filter((row) => Object.keys(arrangements).some((k) => !Number.isFinite(row[k].main) || !(row[k].wire > 0)))
  if (bad.length > 0) {
    console.error(`exporter bench: missing figures or nothing received for ${bad.map((r) => r.workload).join(", ")}`)
    process.exit(1)
  }
  if (jsonAt >= 0) fs.writeFileSync(argv[jsonAt + 1], JSON.stringify(results, null, 2))
}

function label(size) {
  return size >= 1e6 ? `${size / 1e6} MB` : `${size / 1e3} KB`
}

/** One (workload, arrangement) run; figures per span. */
async function run({ processors, exporter }, w, rx, { BasicTracerProvider, BatchSpanProcessor, Native }) {
  // Thread CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID) through the addon), not wall time: on a
  // busy machine the wall clock also counts the time other processes hold the core.
  const clock = native.benchThreadCpuNs
  // Main-thread time, and the part of it inside the exporter (export(), the continuation that
  // hands the bytes over), wherever that runs: the BatchSpanProcessor calls export() from inside
  // span.end() when a batch fills. Each clock counts a call nested in one it times once.
  const clocked = () => {
    const c = { ns: 0, depth: 0 }
    c.wrap = (fn) =>
      function (...args) {
        if (c.depth > 0) return fn.apply(this, args)
        c.depth++
        const t = clock()
        try {
          return fn.apply(this, args)
        } finally {
          c.ns += clock() - t
          c.depth--
        }
      }
    return c
  }
  const main = clocked()
  const inExporter = clocked()
  const exporterPart = (fn) => inExporter.wrap(main.wrap(fn))
  exporter.export = exporterPart(exporter.export)
  if (exporter instanceof Native) {
    exporter._sendCounted = exporterPart(exporter._sendCounted)
    // Fused mode: spans the processor maps on the main thread (none in these workloads).
    exporter._view = exporterPart(exporter._view)
  }
  const bsp = new BatchSpanProcessor(exporter, { maxExportBatchSize: 512, maxQueueSize: 1 << 20, scheduledDelayMillis: 50 })
  const provider = new BasicTracerProvider({ spanProcessors: [...processors, bsp] })
  const tracer = provider.getTracer("genkit", "1.42.0")
  const before = await rx.stats()
  let creation = 0
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < w.count; i++) {
    const t = clock()
    const span = tracer.startSpan("span")
    span.setAttributes(w.rows[i % w.rows.length])
    creation += clock() - t
    main.wrap(() => span.end())()
    // Let the exports run as they would in an app that does other work between spans.
    if (i % 64 === 63) await new Promise((r) => setImmediate(r))
  }
  await provider.forceFlush()
  const cpu = process.cpuUsage(cpu0)
  await provider.shutdown()
  const after = await rx.stats()
  const n = w.count
  return {
    main: main.ns / 1e3 / n,
    processors: (main.ns - inExporter.ns) / 1e3 / n,
    exporter: inExporter.ns / 1e3 / n,
    cpu: (cpu.user + cpu.system - creation / 1e3) / n,
    wire: (after.bytes - before.bytes) / n,
    requests: after.requests - before.requests,
  }
}
