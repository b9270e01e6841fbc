"use strict"
// Both span shapes (issue 4): spans from a real BasicTracerProvider of OpenTelemetry SDK 1.x
// (Genkit's bundled line: `instrumentationLibrary`, `parentSpanId`), 2.x and 3.x
// (`instrumentationScope`, `parentSpanContext`) map identically: the same gen_ai.* attributes,
// equal to the corpus's expected attributes, with GenkitForMaple before an exporting processor.
const test = require("node:test")
const assert = require("node:assert/strict")
const { context, trace } = require("@opentelemetry/api")
const sdk1 = require("sdk-trace-base-1")
const sdk2 = require("@opentelemetry/sdk-trace-base")
const sdk3 = require("@opentelemetry/sdk-trace")
const { GenkitForMaple } = require("..")
const { load } = require("./helpers/fixtures")

const rows = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
const adversarial = load("adversarial-dev.jsonl")

function providerOf(line) {
  const exporter = new (line === 1 ? sdk1 : line === 2 ? sdk2 : sdk3).InMemorySpanExporter()
  const Simple = (line === 1 ? sdk1 : line === 2 ? sdk2 : sdk3).SimpleSpanProcessor
  // SDK 3.x's SimpleSpanProcessor takes `{ exporter }`.
  const processors = [new GenkitForMaple({ mode: "reference" }), line === 3 ? new Simple({ exporter }) : new Simple(exporter)]
  let provider
  if (line === 1) {
    provider = new sdk1.BasicTracerProvider()
    for (const p of processors) provider.addSpanProcessor(p)
  } else if (line === 2) {
    provider = new sdk2.BasicTracerProvider({ spanProcessors: processors })
  } else {
    provider = new sdk3.TracerProvider({ spanProcessors: processors })
  }
  return { provider, exporter }
}

/** Ends one span per row (all children of one parent span) and returns the exported spans. */
async function run(line, inputs) {
  const { provider, exporter } = providerOf(line)
  const tracer = provider.getTracer("genkit", "1.42.0")
  const parent = tracer.startSpan("parent")
  const ctx = trace.setSpan(context.active(), parent)
  for (const attributes of inputs) {
    const span = tracer.startSpan("span", { attributes: {} }, ctx)
    // The attributes as Genkit sets them (setAttributes keeps primitives and arrays).
    span.setAttributes(attributes)
    span.end()
  }
  parent.end()
  await provider.forceFlush()
  const spans = exporter.getFinishedSpans().filter((s) => s.name === "span")
  await provider.shutdown()
  return spans
}

const genAi = (attrs) => Object.fromEntries(Object.entries(attrs).filter(([k]) => k.startsWith("gen_ai.")))

test("SDK 1.x, 2.x and 3.x spans: the shapes differ, the gen_ai.* attributes are identical and expected", async () => {
  const inputs = rows.map((r) => r.attributes)
  const [s1, s2, s3] = [await run(1, inputs), await run(2, inputs), await run(3, inputs)]
  // The shapes really differ.
  assert.ok(s1[0].instrumentationLibrary && typeof s1[0].parentSpanId === "string")
  assert.equal(s1[0].instrumentationScope, undefined)
  for (const s of [s2[0], s3[0]]) {
    assert.ok(s.instrumentationScope && s.parentSpanContext)
    assert.equal(s.parentSpanId, undefined)
  }
  for (const spans of [s1, s2, s3]) assert.equal(spans.length, rows.length)
  for (let i = 0; i < rows.length; i++) {
    const want = genAi(rows[i].expected_attributes)
    assert.deepStrictEqual(genAi(s1[i].attributes), want, rows[i].name)
    assert.deepStrictEqual(genAi(s2[i].attributes), want, rows[i].name)
    assert.deepStrictEqual(genAi(s3[i].attributes), want, rows[i].name)
    for (const [k, v] of Object.entries(rows[i].attributes)) assert.deepStrictEqual(s1[i].attributes[k], v)
  }
})

test("SDK 1.x, 2.x and 3.x: the adversarial spans map identically too", async () => {
  const inputs = adversarial.map((c) => c.attributes)
  const [s1, s2, s3] = [await run(1, inputs), await run(2, inputs), await run(3, inputs)]
  for (let i = 0; i < inputs.length; i++) {
    assert.ok(s1[i].attributes["gen_ai.operation.name"], adversarial[i].id)
    assert.deepStrictEqual(genAi(s1[i].attributes), genAi(s2[i].attributes), adversarial[i].id)
    assert.deepStrictEqual(genAi(s2[i].attributes), genAi(s3[i].attributes), adversarial[i].id)
  }
})
