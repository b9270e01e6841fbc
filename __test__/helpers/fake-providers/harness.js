"use strict"
// The real OpenTelemetry SDK around a Genkit app, as a user wires it: Genkit's own OTel setup
// disabled, an AsyncLocalStorage context manager, a global tracer provider (SDK 3.x TracerProvider
// or SDK 2.x BasicTracerProvider) whose processors are [snapshot, GenkitForMaple,
// SimpleSpanProcessor(InMemorySpanExporter)]. The snapshot processor (first, so before
// GenkitForMaple) keeps a copy of each span's attributes as Genkit wrote them: the oracle for
// "native equals pure JS on every span".
const assert = require("node:assert/strict")
const api = require("@opentelemetry/api")
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks")
const { disableGenkitOTelInitialization } = require("genkit/tracing")
const { GenkitForMaple } = require("../../..")
const { mapSpanJs } = require("../../../js/mapping")

/** Refuses every URL that is not on loopback: the plugins must never reach the real providers. */
function loopbackOnlyFetch(realFetch = globalThis.fetch) {
  const guarded = (input, init) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? String(input) : input.url)
    if (url.hostname !== "127.0.0.1") {
      return Promise.reject(new Error(`test fetch guard: refusing a request to ${url.origin}`))
    }
    return realFetch(input, init)
  }
  return guarded
}

/**
 * The tracer provider, from one of the two SDK lines a user may have:
 * "sdk-trace"      @opentelemetry/sdk-trace 3.x: `TracerProvider`, `SimpleSpanProcessor({ exporter })`
 * "sdk-trace-base" @opentelemetry/sdk-trace-base 2.x: `BasicTracerProvider`, `SimpleSpanProcessor(exporter)`
 */
function makeProvider(line, processors) {
  if (line === "sdk-trace") {
    const sdk = require("@opentelemetry/sdk-trace")
    const exporter = new sdk.InMemorySpanExporter()
    const provider = new sdk.TracerProvider({ spanProcessors: [...processors, new sdk.SimpleSpanProcessor({ exporter })] })
    return { provider, exporter }
  }
  if (line === "sdk-trace-base") {
    const sdk = require("@opentelemetry/sdk-trace-base")
    const exporter = new sdk.InMemorySpanExporter()
    const provider = new sdk.BasicTracerProvider({ spanProcessors: [...processors, new sdk.SimpleSpanProcessor(exporter)] })
    return { provider, exporter }
  }
  throw new Error(`unknown SDK ${line}`)
}

/** @param {{ sdk?: "sdk-trace" | "sdk-trace-base" }} [options] */
function setupTracing({ sdk = "sdk-trace" } = {}) {
  disableGenkitOTelInitialization()
  // google-genai calls the global fetch; the Anthropic SDK captures it when its client is built.
  const realFetch = globalThis.fetch
  globalThis.fetch = loopbackOnlyFetch(realFetch)

  const originals = new Map()
  const snapshot = {
    onStart() {},
    onEnd(span) {
      originals.set(span.spanContext().spanId, structuredClone(span.attributes))
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  }
  const processor = new GenkitForMaple({ mode: "reference" })
  const { provider, exporter } = makeProvider(sdk, [snapshot, processor])
  const contextManager = new AsyncLocalStorageContextManager().enable()
  api.context.setGlobalContextManager(contextManager)
  api.trace.setGlobalTracerProvider(provider)

  return {
    processor,
    exporter,
    originals,
    /** The spans of every trace a flow run produced since the last call, flushed. */
    async take() {
      await provider.forceFlush()
      const spans = exporter.getFinishedSpans().slice()
      exporter.reset()
      return spans
    },
    async shutdown() {
      await provider.shutdown()
      api.trace.disable()
      api.context.disable()
      globalThis.fetch = realFetch
    },
  }
}

/**
 * Every span: the attributes GenkitForMaple wrote equal the pure-JS mapping (`mapSpanJs`) of a
 * copy of the attributes Genkit wrote, and no `genkit:*` attribute was changed.
 */
function assertNativeEqualsJs(spans, originals) {
  assert.ok(spans.length > 0)
  for (const span of spans) {
    const original = originals.get(span.spanContext().spanId)
    assert.ok(original, `no snapshot of ${span.name}`)
    const js = structuredClone(original)
    assert.equal(mapSpanJs(js), 0, `pure-JS mapping reported problems on ${span.name}`)
    assert.deepStrictEqual(span.attributes, js, `native and pure JS differ on ${span.name}`)
    for (const [k, v] of Object.entries(original)) assert.deepStrictEqual(span.attributes[k], v, `${span.name}: ${k} changed`)
  }
}

const subtype = (span) => span.attributes["genkit:metadata:subtype"]
const json = (span, key) => {
  const v = span.attributes[key]
  assert.equal(typeof v, "string", `${span.name}: ${key} is not a string`)
  return JSON.parse(v)
}

/** The spans of one flow run, by kind, in start order. */
function byKind(spans) {
  const sorted = spans.slice().sort((a, b) => hr(a.startTime) - hr(b.startTime) || order(a, b))
  return {
    flows: sorted.filter((s) => subtype(s) === "flow"),
    chats: sorted.filter((s) => subtype(s) === "model"),
    tools: sorted.filter((s) => subtype(s) === "tool"),
  }
}
const hr = ([s, ns]) => s * 1e9 + ns
const order = (a, b) => (a.attributes["genkit:path"] ?? "").length - (b.attributes["genkit:path"] ?? "").length

module.exports = { setupTracing, assertNativeEqualsJs, byKind, json, loopbackOnlyFetch }
