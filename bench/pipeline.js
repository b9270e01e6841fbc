#!/usr/bin/env node
"use strict"
// The pipeline figure of BENCHMARKS.md: N flows of a Genkit app through the real SDK, and the
// event-loop time GenkitForMaple.onEnd takes per span, native against pure JS.
//
//   node bench/pipeline.js [--flows N] [--smoke]
//
// Each mode (native, js) runs in a child process of its own: a Genkit app (a local `ai.defineModel`
// model that calls a tool then answers, the tool, a flow that sets the conversation id and keeps
// the conversation's history, so model spans grow turn by turn) under a BasicTracerProvider with
// [GenkitForMaple, BatchSpanProcessor(OTLPTraceExporter (protobuf))] exporting to a loopback
// HTTP receiver that answers 200. onEnd is wrapped with process.hrtime.bigint(). The JS mode sets
// GENKIT_FOR_MAPLE_FORCE_JS=1.

const { spawnSync } = require("node:child_process")
const path = require("node:path")

const argv = process.argv.slice(2)
const smoke = argv.includes("--smoke") || process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
const flowsAt = argv.indexOf("--flows")
const FLOWS = flowsAt >= 0 ? Number(argv[flowsAt + 1]) : smoke ? 6 : 1000

if (argv[0] === "--child") {
  child(argv[1]).catch((error) => {
    console.error(error)
    process.exit(1)
  })
} else {
  parent()
}

function parent() {
  // Two texts: ASCII only, and with a few multi-byte characters (°, à, an emoji) as real chats
  // have them, which makes V8 keep the span's JSON as two-byte strings.
  for (const script of smoke ? ["multi"] : ["ascii", "multi"]) {
    const results = {}
    // Interleaved: native, js, native, js; the second run of each is reported (the first warms
    // the disk cache and the module graph).
    for (const round of smoke ? [1] : [0, 1]) {
      for (const mode of ["native", "js"]) {
        const env = { ...process.env, GENKIT_FOR_MAPLE_PIPELINE_TEXT: script }
        if (mode === "js") env.GENKIT_FOR_MAPLE_FORCE_JS = "1"
        else delete env.GENKIT_FOR_MAPLE_FORCE_JS
        const r = spawnSync(process.execPath, [__filename, "--child", mode, "--flows", String(FLOWS)], {
          env,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "inherit"],
        })
        if (r.status !== 0) {
          console.error(`pipeline: the ${mode} run failed (exit ${r.status})`)
          process.exit(1)
        }
        if (round === 1 || smoke) results[mode] = JSON.parse(r.stdout.trim().split("\n").pop())
      }
    }
    report(script, results)
  }
}

function report(script, { native, js }) {
  const kinds = [...new Set([...Object.keys(native.byKind), ...Object.keys(js.byKind)])]
  const us = (ns) => (ns / 1000).toFixed(2)
  const lines = [
    `Text: ${script}`,
    "",
    `| span kind | spans per run | JS onEnd mean (median) µs | native onEnd mean (median) µs | JS/native (mean) |`,
    `| --- | --- | --- | --- | --- |`,
  ]
  for (const kind of [...kinds.sort(), "all"]) {
    const a = kind === "all" ? js.all : js.byKind[kind]
    const b = kind === "all" ? native.all : native.byKind[kind]
    lines.push(`| ${kind} | ${b.count} | ${us(a.mean)} (${us(a.median)}) | ${us(b.mean)} (${us(b.median)}) | ${(a.mean / b.mean).toFixed(2)}x |`)
  }
  console.log(lines.join("\n"))
  if (smoke) console.log("SMOKE MODE: a few cold flows, figures meaningless (first calls include loading and JIT)")
  console.log(
    `\n${FLOWS} flows per run; mean genkit:input of model spans ${(native.modelInputBytes / 1024).toFixed(1)} KiB; ` +
      `processor time per flow: JS ${us(js.totalNs / FLOWS)} µs, native ${us(native.totalNs / FLOWS)} µs; ` +
      `exported spans: JS ${js.exported}, native ${native.exported}; wall time per flow: JS ${us(js.wallNs / FLOWS)} µs, native ${us(native.wallNs / FLOWS)} µs\n`,
  )
  if (!native.isNative || js.isNative) {
    console.error("pipeline: the modes did not run the paths they name")
    process.exit(1)
  }
  if (native.exported === 0 || js.exported === 0 || native.mapped === 0) {
    console.error("pipeline: nothing was exported or mapped")
    process.exit(1)
  }
}

async function child(mode) {
  const http = require("node:http")
  const { context, trace } = require("@opentelemetry/api")
  const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks")
  const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base")
  const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto")
  const { disableGenkitOTelInitialization } = require("genkit/tracing")
  const { GenkitForMaple } = require(path.join(__dirname, ".."))

  // The loopback receiver: reads the body, answers 200 with an empty ExportTraceServiceResponse.
  let exportedBytes = 0
  let requests = 0
  const server = http.createServer((req, res) => {
    req.on("data", (chunk) => {
      exportedBytes += chunk.length
    })
    req.on("end", () => {
      requests++
      res.writeHead(200, { "content-type": "application/x-protobuf" })
      res.end()
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${server.address().port}/v1/traces`

  // GenkitForMaple with its onEnd timed.
  const processor = new GenkitForMaple()
  const samples = new Map() // kind -> ns[]
  let modelInputBytes = 0
  let modelSpans = 0
  const onEnd = processor.onEnd.bind(processor)
  processor.onEnd = (span) => {
    const start = process.hrtime.bigint()
    onEnd(span)
    const ns = Number(process.hrtime.bigint() - start)
    const subtype = span.attributes["genkit:metadata:subtype"]
    const kind = subtype === "model" || subtype === "tool" || subtype === "flow" ? subtype : "other"
    if (!samples.has(kind)) samples.set(kind, [])
    samples.get(kind).push(ns)
    if (kind === "model") {
      modelSpans++
      modelInputBytes += Buffer.byteLength(String(span.attributes["genkit:input"] ?? ""))
    }
  }
  let exported = 0
  const exporter = new OTLPTraceExporter({ url })
  const exportSpans = exporter.export.bind(exporter)
  exporter.export = (spans, done) => {
    exported += spans.length
    exportSpans(spans, done)
  }
  const batch = new BatchSpanProcessor(exporter, { maxQueueSize: 8192, maxExportBatchSize: 512, scheduledDelayMillis: 200 })

  disableGenkitOTelInitialization()
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const provider = new BasicTracerProvider({ spanProcessors: [processor, batch] })
  trace.setGlobalTracerProvider(provider)

  const { genkit, z } = await import("genkit")
  const { setCustomMetadataAttribute } = await import("genkit/tracing")
  const ai = genkit({})
  const MODEL = "local/travel-1"
  ai.defineModel({ name: MODEL, supports: { multiturn: true, tools: true, systemRole: true } }, async (request) => {
    const last = request.messages[request.messages.length - 1]
    const toolResult = last.content.find((p) => p.toolResponse)
    const usage = { inputTokens: JSON.stringify(request.messages).length >> 2, outputTokens: 40 }
    if (!toolResult) {
      return {
        message: {
          role: "model",
          content: [
            { reasoning: "The user asks about the weather; call the tool first." },
            { toolRequest: { name: "getWeather", ref: "call_1", input: { city: "Paris", days: 3 } } },
          ],
        },
        finishReason: "stop",
        usage,
      }
    }
    const w = toolResult.toolResponse.output
    return {
      message: {
        role: "model",
        content: [{ text: `In ${w.city} it is ${w.tempC}${deg} and ${w.conditions}. The next days: ${w.forecast.map((d) => `${d.day} ${d.highC}${deg}`).join(", ")}. Have a nice trip!${multi ? " 😀" : ""}` }],
      },
      finishReason: "stop",
      usage,
    }
  })
  const getWeather = ai.defineTool(
    {
      name: "getWeather",
      description: "Current weather and forecast for a city",
      inputSchema: z.object({ city: z.string(), days: z.number() }),
      outputSchema: z.object({ city: z.string(), tempC: z.number(), conditions: z.string(), forecast: z.array(z.object({ day: z.string(), highC: z.number() })) }),
    },
    async ({ city, days }) => ({
      city,
      tempC: 18.5,
      conditions: "partly cloudy",
      forecast: Array.from({ length: days }, (_, i) => ({ day: ["mon", "tue", "wed"][i % 3], highC: 20 + i })),
    }),
  )
  const histories = new Map()
  const chat = ai.defineFlow({ name: "travelChat", inputSchema: z.object({ chatId: z.string(), text: z.string() }) }, async ({ chatId, text }) => {
    setCustomMetadataAttribute("conversationId", chatId)
    const messages = histories.get(chatId) ?? []
    const response = await ai.generate({
      model: MODEL,
      system: "You are a concise travel assistant. Use the tools when helpful.",
      messages,
      prompt: text,
      tools: [getWeather],
    })
    histories.set(chatId, response.messages.filter((m) => m.role !== "system"))
    return response.text
  })

  const multi = process.env.GENKIT_FOR_MAPLE_PIPELINE_TEXT !== "ascii"
  const deg = multi ? "°C" : " C"
  const TURNS = 8 // a conversation of 8 turns, then a new one: model spans from ~1 KB to ~20 KB
  const started = process.hrtime.bigint()
  for (let i = 0; i < FLOWS; i++) {
    await chat({ chatId: `chat-${Math.floor(i / TURNS)}`, text: `Turn ${i % TURNS}: what is the weather in Paris this week? ${multi ? "Merci beaucoup, à bientôt." : "Thanks a lot."}` })
  }
  const wallNs = Number(process.hrtime.bigint() - started)
  await provider.forceFlush()
  await provider.shutdown()
  server.close()

  const summary = (list) => {
    const s = [...list].sort((a, b) => a - b)
    return { count: s.length, mean: s.reduce((a, b) => a + b, 0) / s.length, median: s[s.length >> 1] }
  }
  const all = [...samples.values()].flat()
  const mapped = (samples.get("model")?.length ?? 0) + (samples.get("tool")?.length ?? 0)
  process.stdout.write(
    `${JSON.stringify({
      mode,
      isNative: processor.isNative,
      byKind: Object.fromEntries([...samples].map(([k, v]) => [k, summary(v)])),
      all: summary(all),
      totalNs: all.reduce((a, b) => a + b, 0),
      wallNs,
      modelInputBytes: modelInputBytes / Math.max(1, modelSpans),
      exported,
      exportedBytes,
      requests,
      mapped,
    })}\n`,
  )
}
