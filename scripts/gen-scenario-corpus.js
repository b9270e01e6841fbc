#!/usr/bin/env node
"use strict"
// Writes __test__/fixtures/genkit-1.42-scenario-spans.jsonl: the spans real Genkit 1.42 writes with
// the real model plugins (@genkit-ai/google-genai, @genkit-ai/compat-oai openai + deepseek,
// @genkit-ai/anthropic) for the scenarios issue 10's rules are tested on. The plugins' HTTP calls
// go to the fake provider servers of the plugin tests (__test__/helpers/fake-providers/) on
// 127.0.0.1; nothing leaves the machine (the global fetch refuses every other host).
//
//   node scripts/gen-scenario-corpus.js [out.jsonl]     (default: the fixture above)
//
// Scenarios, per plugin where its wire format has the feature:
// - token details: Gemini thinking + cached content, Claude cache reads and writes, OpenAI cached
//   and reasoning token details, DeepSeek cache hits (the weather tool loop and the max-tokens poem)
// - parallel tool calls with equal inputs (getWeather Paris, Paris, Rome in one answer)
// - a failing tool (issueRefund throws a GenkitError; the flow catches it) and a failing model
//   call (the provider answers 400; the flow fails)
// - a multipart tool (`ai.defineTool({ multipart: true })`, Genkit's `tool.v2` action: output
//   plus content parts, one of them a data: URL image)
// - media in (a remote https URL and a data: URL image in the user message), media out (Gemini
//   image model answering with inline image data)
// - a blocked answer (Gemini SAFETY, Claude / OpenAI refusal)
// - a config with every request setting the plugin accepts, and an output format request (JSON
//   with a schema)
// - the provider's response id / model, as each fake sends them (Gemini responseId/modelVersion,
//   OpenAI id/model, Anthropic id/model)
//
// One JSON object a line, in the order the spans ended (the fields of the plugin corpus):
// scenario, plugin, name, kind, traceId, spanId, parentSpanId, status, events, startTime, endTime
// ([seconds, nanoseconds]), instrumentationScope, attributes (as Genkit wrote them) and
// expected_attributes (the reference mapping plus candidate outputs: the package's pure-JS
// mapping in reference mode).
const fs = require("node:fs")
const path = require("node:path")
const api = require("@opentelemetry/api")
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks")
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base")

const root = path.join(__dirname, "..")
const fakes = path.join(root, "__test__", "helpers", "fake-providers")
const { loopbackOnlyFetch } = require(path.join(fakes, "harness"))
const { startGemini } = require(path.join(fakes, "gemini"))
const { startOpenAI } = require(path.join(fakes, "openai"))
const { startAnthropic } = require(path.join(fakes, "anthropic"))
const S = require(path.join(fakes, "script"))
const { mapSpanJs } = require(path.join(root, "js", "mapping"))

const OUT = process.argv[2] ?? path.join(root, "__test__", "fixtures", "genkit-1.42-scenario-spans.jsonl")
const KEYS = { gemini: "gemini-test-not-a-real-key", openai: "sk-test-not-a-real-key", anthropic: "sk-ant-test-not-a-real-key" }

/** A media part of the user message: a remote image (never fetched by the plugins) and a data: URL. */
const REMOTE_IMAGE = "https://storage.example.com/photos/red-square.png"
const DATA_IMAGE = `data:image/png;base64,${S.RED_PNG}`

/**
 * Runs every scenario and returns the finished spans with their scenario labels.
 * @param {{ processors?: object[] }} [options] span processors to run after Genkit wrote a span and
 *   before it is exported (a test passes `GenkitForMaple`); each row then also has `mapped`: the
 *   span's attributes after them. `attributes` are always Genkit's own.
 * @returns {Promise<object[]>} rows, in span end order
 */
async function generate({ processors = [] } = {}) {
  const { disableGenkitOTelInitialization } = require("genkit/tracing")
  disableGenkitOTelInitialization()
  const realFetch = globalThis.fetch
  const fetch = loopbackOnlyFetch(realFetch)
  globalThis.fetch = fetch

  const exporter = new InMemorySpanExporter()
  // The attributes as Genkit wrote them, before any other processor changes them.
  const originals = new Map()
  const snapshot = {
    onStart() {},
    onEnd: (span) => originals.set(span.spanContext().spanId, structuredClone(span.attributes)),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  }
  const provider = new BasicTracerProvider({ spanProcessors: [snapshot, ...processors, new SimpleSpanProcessor(exporter)] })
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.trace.setGlobalTracerProvider(provider)

  const gemini = await startGemini({ apiKey: KEYS.gemini })
  const openai = await startOpenAI({ apiKey: KEYS.openai })
  const anthropicFake = await startAnthropic({ apiKey: KEYS.anthropic })
  const savedBase = process.env.ANTHROPIC_BASE_URL
  process.env.ANTHROPIC_BASE_URL = anthropicFake.url
  const rows = []
  try {
    const { genkit, z, GenkitError } = require("genkit")
    const { setCustomMetadataAttribute } = require("genkit/tracing")
    const { googleAI } = require("@genkit-ai/google-genai")
    const { openAI } = require("@genkit-ai/compat-oai/openai")
    const { deepSeek } = require("@genkit-ai/compat-oai/deepseek")
    const { anthropic } = require("@genkit-ai/anthropic")
    const ai = genkit({
      plugins: [
        googleAI({ apiKey: KEYS.gemini, baseUrl: gemini.url }),
        openAI({ apiKey: KEYS.openai, baseURL: `${openai.url}/v1`, fetch, maxRetries: 0 }),
        deepSeek({ apiKey: KEYS.openai, baseURL: openai.url, fetch, maxRetries: 0 }),
        anthropic({ apiKey: KEYS.anthropic }),
      ],
    })

    const getWeather = ai.defineTool(
      {
        name: "getWeather",
        description: "Current weather in a city",
        inputSchema: z.object({ city: z.string() }),
        outputSchema: z.object({ city: z.string(), tempC: z.number(), conditions: z.string() }),
      },
      async ({ city }) => ({ ...S.WEATHER, city }),
    )
    const issueRefund = ai.defineTool(
      {
        name: "issueRefund",
        description: "Refunds an order",
        inputSchema: z.object({ orderId: z.string(), reason: z.string() }),
        outputSchema: z.object({ refunded: z.boolean() }),
      },
      async ({ orderId }) => {
        throw new GenkitError({ status: "UNAVAILABLE", message: `payments service unavailable (503): refund for ${orderId} not issued` })
      },
    )
    const fetchNotes = ai.defineTool(
      {
        name: "fetchNotes",
        description: "Release notes of a project, as text and a screenshot",
        inputSchema: z.object({ topic: z.string(), limit: z.number() }),
        multipart: true,
      },
      async ({ topic, limit }) => ({
        output: { topic, version: "1.42.0", items: limit },
        content: [{ text: "Genkit 1.42: multipart tools, faster tracing." }, { media: { url: DATA_IMAGE, contentType: "image/png" } }],
      }),
    )

    const flow = ai.defineFlow(
      { name: "scenarioFlow", inputSchema: z.any() },
      async ({ conversationId, request, catchErrors }) => {
        setCustomMetadataAttribute("conversationId", conversationId)
        try {
          if (request.stream) {
            const { stream, response } = ai.generateStream(request.options)
            for await (const _ of stream);
            return (await response).text
          }
          return (await ai.generate(request.options)).text
        } catch (e) {
          if (!catchErrors) throw e
          return `error: ${e.message}`
        }
      },
    )

    const plugins = [
      { plugin: "google-genai", model: "googleai/gemini-2.5-flash", imageModel: "googleai/gemini-2.5-flash-image", config: geminiConfig },
      { plugin: "compat-oai openai", model: "openai/gpt-4o", config: openAIConfig },
      { plugin: "compat-oai openai (reasoning)", model: "openai/gpt-5", config: openAIConfig, only: ["tokens"] },
      { plugin: "compat-oai deepseek", model: "deepseek/deepseek-chat", config: openAIConfig, only: ["tokens", "parallel"] },
      { plugin: "anthropic", model: "anthropic/claude-sonnet-4-5", config: anthropicConfig },
    ]
    let conversation = 0
    for (const p of plugins) {
      const run = async (scenario, prompt, extra = {}, { catchErrors = true, stream = false } = {}) => {
        const options = { model: p.model, system: S.SYSTEM, prompt, tools: [getWeather, issueRefund, fetchNotes], ...extra }
        exporter.reset()
        try {
          await flow({ conversationId: `scenario-${++conversation}`, request: { options, stream }, catchErrors })
        } catch {
          // A failing model call fails the flow: its spans are what the scenario is about.
        }
        await provider.forceFlush()
        for (const span of exporter.getFinishedSpans()) {
          const r = row(`${p.plugin}: ${scenario}`, p.plugin, span, originals.get(span.spanContext().spanId))
          if (processors.length > 0) r.mapped = { ...span.attributes }
          rows.push(r)
        }
      }
      const wants = (s) => !p.only || p.only.includes(s)
      if (wants("tokens")) {
        await run("tool loop with thinking / cache / reasoning token details", S.PROMPTS.weather)
        await run("max-tokens answer with cache reads and writes", S.PROMPTS.poem)
      }
      if (wants("parallel")) await run("parallel tool calls with equal inputs", S.PROMPTS.parallel)
      if (!p.only) {
        await run("parallel tool calls with equal inputs, streamed", S.PROMPTS.parallel, {}, { stream: true })
        await run("failing tool (GenkitError, caught by the flow)", S.PROMPTS.refund)
        await run("failing model call (provider answers 400)", S.PROMPTS.upstream, {}, { catchErrors: false })
        await run("multipart tool (tool.v2)", S.PROMPTS.notes)
        await run("media in: remote URL and data: URL", [
          { text: S.PROMPTS.describe },
          { media: { url: REMOTE_IMAGE, contentType: "image/png" } },
          { media: { url: DATA_IMAGE, contentType: "image/png" } },
        ])
        await run("blocked answer", S.PROMPTS.blocked)
        await run("every request setting", S.PROMPTS.settings, { config: p.config() })
        // @genkit-ai/anthropic 0.3 refuses it ("Only text output format is supported"): a model span
        // that fails without an HTTP call.
        const refused = p.plugin === "anthropic" ? " (refused by the plugin: the model span fails)" : ""
        await run(`output format: JSON with a schema${refused}`, S.PROMPTS.json, {
          output: { format: "json", schema: z.object({ cities: z.array(z.string()) }) },
        })
      }
      if (p.imageModel) await run("media out: image model answers with inline image data", S.PROMPTS.draw, { model: p.imageModel, tools: [] })
    }
  } finally {
    if (savedBase === undefined) delete process.env.ANTHROPIC_BASE_URL
    else process.env.ANTHROPIC_BASE_URL = savedBase
    await Promise.all([gemini.close(), openai.close(), anthropicFake.close()])
    await provider.shutdown()
    api.trace.disable()
    api.context.disable()
    globalThis.fetch = realFetch
  }
  return rows
}

/** Every request setting Genkit's common config and the Gemini plugin's config take. */
function geminiConfig() {
  return { temperature: 0.4, maxOutputTokens: 512, topP: 0.9, topK: 32, stopSequences: ["END"], seed: 42, frequencyPenalty: 0.5, presencePenalty: 0.25 }
}
/** OpenAI Chat Completions: no topK. */
function openAIConfig() {
  return { temperature: 0.4, maxOutputTokens: 512, topP: 0.9, stopSequences: ["END"], seed: 42, frequencyPenalty: 0.5, presencePenalty: 0.25 }
}
/** Anthropic Messages: no seed, no penalties. */
function anthropicConfig() {
  return { temperature: 0.4, maxOutputTokens: 512, topP: 0.9, topK: 32, stopSequences: ["END"] }
}

function row(scenario, plugin, span, original) {
  const attributes = structuredClone(original)
  const expected = structuredClone(attributes)
  mapSpanJs(expected)
  return {
    scenario,
    plugin,
    name: span.name,
    kind: span.kind,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? span.parentSpanId,
    status: { code: span.status.code, message: span.status.message ?? null },
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes, time: e.time })),
    startTime: span.startTime,
    endTime: span.endTime,
    instrumentationScope: { name: span.instrumentationScope?.name, version: span.instrumentationScope?.version },
    attributes,
    expected_attributes: expected,
  }
}

/**
 * The span shapes of rule 2's cost inputs that the corpus above leaves out, live (not written to
 * the fixture): Anthropic cache writes with a one-hour TTL through the anthropic plugin's stable
 * runner (`usage.custom`) and its beta runner (`config.apiVersion: "beta"`: the API's usage only in
 * `raw`), and an OpenAI answer reporting a dated snapshot of the requested model (as the real API
 * does). Each: the "max-tokens answer" turn (cache reads and writes), not streamed.
 * @param {{ processors: object[], cacheWrite1h: number, responseModels: Record<string, string> }} options
 * @returns {Promise<{ label: string, attributes: object }[]>} the model spans' attributes after the processors
 */
async function generateCostShapes({ processors, cacheWrite1h, responseModels }) {
  const { disableGenkitOTelInitialization } = require("genkit/tracing")
  disableGenkitOTelInitialization()
  const realFetch = globalThis.fetch
  const fetch = loopbackOnlyFetch(realFetch)
  globalThis.fetch = fetch
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [...processors, new SimpleSpanProcessor(exporter)] })
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.trace.setGlobalTracerProvider(provider)
  const openai = await startOpenAI({ apiKey: KEYS.openai, responseModels })
  const anthropicFake = await startAnthropic({ apiKey: KEYS.anthropic, cacheWrite1h })
  const savedBase = process.env.ANTHROPIC_BASE_URL
  process.env.ANTHROPIC_BASE_URL = anthropicFake.url
  const out = []
  try {
    const { genkit } = require("genkit")
    const { openAI } = require("@genkit-ai/compat-oai/openai")
    const { anthropic } = require("@genkit-ai/anthropic")
    const ai = genkit({
      plugins: [openAI({ apiKey: KEYS.openai, baseURL: `${openai.url}/v1`, fetch, maxRetries: 0 }), anthropic({ apiKey: KEYS.anthropic })],
    })
    const runs = [
      { label: "anthropic stable runner", model: "anthropic/claude-sonnet-4-5", config: {} },
      { label: "anthropic beta runner", model: "anthropic/claude-sonnet-4-5", config: { apiVersion: "beta" } },
      { label: "compat-oai openai", model: "openai/gpt-4o", config: {} },
    ]
    for (const run of runs) {
      exporter.reset()
      await ai.generate({ model: run.model, system: S.SYSTEM, prompt: S.PROMPTS.poem, config: run.config })
      await provider.forceFlush()
      for (const span of exporter.getFinishedSpans()) {
        if (span.attributes["genkit:metadata:subtype"] === "model") out.push({ label: run.label, attributes: { ...span.attributes } })
      }
    }
  } finally {
    globalThis.fetch = realFetch
    if (savedBase === undefined) delete process.env.ANTHROPIC_BASE_URL
    else process.env.ANTHROPIC_BASE_URL = savedBase
    await provider.shutdown()
    api.trace.disable()
    api.context.disable()
    await Promise.all([openai.close(), anthropicFake.close()])
  }
  return out
}

module.exports = { generate, generateCostShapes }

if (require.main === module) {
  generate().then(
    (rows) => {
      fs.writeFileSync(OUT, rows.map((r) => JSON.stringify(r)).join("\n") + "\n")
      const scenarios = new Set(rows.map((r) => r.scenario))
      console.log(`${rows.length} spans of ${scenarios.size} scenarios -> ${path.relative(process.cwd(), OUT)}`)
    },
    (e) => {
      console.error(e)
      process.exitCode = 1
    },
  )
}
