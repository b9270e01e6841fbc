"use strict"
// Fused mode of genkit-for-maple/otlp (issue 8, items 3-5): `new OTLPTraceExporter({ genkit })` maps
// Genkit spans to gen_ai.* while encoding, without GenkitForMaple in the provider. For every span of
// every corpus (real Genkit + real plugins under SDK 1.x/2.x/3.x, the scenario corpus with its
// traces and tool call ids, hand-made adversarial spans), in batches through one exporter, the
// request it sends over real OTLP/HTTP on 127.0.0.1 (decoded with the official proto definitions)
// equals the official ProtobufTraceSerializer's request for the same spans after GenkitForMaple
// (same options) mapped them in the same order, field for field.
const { test, after } = require("node:test")
const assert = require("node:assert/strict")
const http = require("node:http")
const { diag, DiagLogLevel, SpanStatusCode } = require("@opentelemetry/api")
const { ProtobufTraceSerializer } = require("@opentelemetry/otlp-transformer")
const { BatchSpanProcessor, SimpleSpanProcessor, InMemorySpanExporter, TracerProvider } = require("@opentelemetry/sdk-trace")
const { OTLPTraceExporter } = require("genkit-for-maple/otlp")
const { GenkitForMaple } = require("..")
const native = require("../binding.js")
const { load } = require("./helpers/fixtures")
const { corpusRows, corpusSpans, as2x, fakeSpan, adversarialSpans, everyValue, LONE } = require("./helpers/otlp-spans")

const decode = (bytes) => native.decodeOtlpTraceRequest(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length))

// One receiver for the file: keeps every request body, decoded.
let receiver
async function startReceiver() {
  if (receiver) return receiver
  const bodies = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      bodies.push(native.decodeOtlpTraceRequest(Buffer.concat(chunks)))
      res.writeHead(200)
      res.end()
    })
  })
  await new Promise((done) => server.listen(0, "127.0.0.1", done))
  receiver = { url: `http://127.0.0.1:${server.address().port}/v1/traces`, bodies, server }
  return receiver
}
after(() => receiver && new Promise((done) => { receiver.server.close(() => done()); receiver.server.closeAllConnections() }))

const exportOnce = (exporter, spans) => new Promise((done) => exporter.export(spans, done))

/** What GenkitForMaple (in the provider, before the official exporter) leaves: a mapped view. */
function processed(processor, span, omit = false) {
  const view = Object.create(span)
  const attrs = span.attributes
  Object.defineProperty(view, "attributes", { value: attrs && typeof attrs === "object" ? { ...attrs } : attrs })
  processor.onEnd(view)
  if (omit && view.attributes) {
    delete view.attributes["genkit:input"]
    delete view.attributes["genkit:output"]
  }
  return view
}

function firstDifference(want, got, what) {
  const a = want.split("\n")
  const b = got.split("\n")
  const i = a.findIndex((line, k) => line !== b[k])
  return `${what}: requests differ at line ${i}: official ${JSON.stringify(a[i]?.slice(0, 300))}, fused ${JSON.stringify(b[i]?.slice(0, 300))}`
}

/**
 * Exports `spans` in batches of `size` through one fused exporter (`genkit`, `omit`) and through
 * GenkitForMaple(`genkit`) + the official serializer; asserts every request is equal. `concurrent`:
 * all batches handed over at once (the pairing state must still see them in order).
 */
async function assertFusedEqualsProcessor(spans, { genkit = true, omit = false, size = 7, concurrent = false, what, inJs }) {
  const r = await startReceiver()
  const exporter = new OTLPTraceExporter({ url: r.url, genkit, concurrencyLimit: 1000, ...(omit ? { omitGenkitInputOutput: true } : {}) })
  assert.equal(exporter.isNative, true)
  // Spans the exporter hands to the processor (the rest are mapped natively on the thread pool).
  let processorCalls = 0
  const onEnd = exporter._fused.processor.onEnd.bind(exporter._fused.processor)
  exporter._fused.processor.onEnd = (span) => {
    processorCalls++
    onEnd(span)
  }
  const processor = new GenkitForMaple(genkit === true ? undefined : genkit)
  const batches = []
  for (let i = 0; i < spans.length; i += size) batches.push(spans.slice(i, i + size))
  const want = batches.map((batch) => decode(ProtobufTraceSerializer.serializeRequest(batch.map((s) => as2x(processed(processor, s, omit))))))
  const first = r.bodies.length
  if (concurrent) {
    const results = await Promise.all(batches.map((b) => exportOnce(exporter, b)))
    for (const result of results) assert.deepEqual(result, { code: 0 })
  } else {
    for (const b of batches) assert.deepEqual(await exportOnce(exporter, b), { code: 0 })
  }
  await exporter.shutdown()
  const got = r.bodies.slice(first)
  assert.equal(got.length, batches.length)
  // HTTP requests may arrive out of order when concurrent: compare as sorted lists then.
  const order = (list) => (concurrent ? [...list].sort() : list)
  const [w, g] = [order(want), order(got)]
  for (let i = 0; i < w.length; i++) if (w[i] !== g[i]) assert.fail(firstDifference(w[i], g[i], `${what}, batch ${i}`))
  if (inJs !== undefined) inJs(processorCalls)
  return got.join("\n")
}

const OPTIONS = [true, { mode: "reference" }, { mode: "complete", cost: false }]
const rows = corpusRows()

for (const line of [1, 2, 3]) {
  test(`real Genkit corpus, SDK ${line}.x: fused request = GenkitForMaple + official serializer, every option set`, async () => {
    const spans = await corpusSpans(line, rows)
    for (const genkit of OPTIONS) {
      // Every corpus span is mapped natively: none goes through the processor.
      const inJs = (n) => assert.equal(n, 0)
      const text = await assertFusedEqualsProcessor(spans, { genkit, inJs, what: `SDK ${line}.x ${JSON.stringify(genkit)}` })
      // Not vacuous: the mapping is in the request.
      assert.ok(text.includes('key: "gen_ai.input.messages"') && text.includes('key: "gen_ai.tool.call.arguments"'))
    }
  })
}

/** A ReadableSpan of the scenario corpus: its own trace, span and parent ids, status and events. */
function scenarioSpan(row, i) {
  return fakeSpan(i, {
    name: row.name,
    kind: row.kind ?? 0,
    spanContext: () => ({ traceId: row.traceId, spanId: row.spanId, traceFlags: 1 }),
    parentSpanContext: row.parentSpanId ? { traceId: row.traceId, spanId: row.parentSpanId, traceFlags: 1, isRemote: false } : undefined,
    startTime: row.startTime,
    endTime: row.endTime,
    status: { code: row.status?.code ?? 0, ...(row.status?.message ? { message: row.status.message } : {}) },
    events: (row.events ?? []).map((e) => ({ name: e.name, time: e.time, attributes: e.attributes, droppedAttributesCount: 0 })),
    attributes: structuredClone(row.attributes),
  })
}

test("scenario corpus (tool call ids across batches, costs, errors): equal in every option set, sequential and concurrent batches", async () => {
  const spans = load("genkit-1.42-scenario-spans.jsonl").map(scenarioSpan)
  for (const genkit of OPTIONS) {
    for (const size of [1, 5, 512]) {
      const inJs = (n) => assert.equal(n, 0)
      await assertFusedEqualsProcessor(spans, { genkit, size, inJs, what: `scenario ${JSON.stringify(genkit)} batches of ${size}` })
    }
  }
  const text = await assertFusedEqualsProcessor(spans, { size: 3, concurrent: true, what: "scenario, concurrent" })
  assert.ok(text.includes('key: "gen_ai.tool.call.id"') && text.includes('key: "gen_ai.usage.cost"') && text.includes('key: "error.type"'))
})

/** Genkit spans the core cannot map exactly as the processor does, and odd attribute types. */
function adversarialGenkitSpans() {
  const input = (text) => JSON.stringify({ messages: [{ role: "user", content: [{ text }] }] })
  const output = JSON.stringify({ message: { role: "model", content: [{ text: "ok" }] }, finishReason: "stop", usage: { inputTokens: 3, outputTokens: 1 } })
  const model = (i, over) => fakeSpan(100 + i, { attributes: { "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:input": input("hi"), "genkit:output": output, ...over } })
  const spans = [
    model(0, { "genkit:input": input(LONE) }), // lone surrogates in the string
    model(1, { "genkit:input": '{"messages":[{"role":"user","content":[{"text":"\\ud800 escaped"}]}]}' }), // ... as a JSON escape
    model(2, { "genkit:output": output.replace('"outputTokens":1', '"outputTokens":1e400') }), // JSON.parse: Infinity
    model(3, { "genkit:input": input("x".repeat(5 << 20)) }), // huge
    model(4, { "genkit:input": input("東京😀".repeat(300_000)) }), // huge, multi-byte
    model(5, { "genkit:name": 42 }), // not a string: String(42)
    model(6, { "genkit:input": 7, "genkit:output": ["a"] }), // not strings
    model(7, { "genkit:input": "{not json" }), // a problem flag (diag), attributes still written
    model(8, { "gen_ai.operation.name": "set before", "gen_ai.request.model": "also" }), // existing keys: overwritten in place
    model(9, { "genkit:name": undefined }),
    fakeSpan(120, { attributes: { "genkit:metadata:subtype": "flow", "genkit:name": "f", "genkit:metadata:conversationId": 17 } }),
    fakeSpan(121, { attributes: { "genkit:metadata:subtype": "agent", "genkit:metadata:agent:sessionId": ["s", 1] } }),
    fakeSpan(122, { attributes: { "genkit:metadata:subtype": "flow", "genkit:metadata:conversationId": null, "genkit:metadata:agent:sessionId": "s2" } }),
    fakeSpan(123, {
      status: { code: SpanStatusCode.ERROR, message: "failed" },
      events: [{ name: "exception", time: [1, 2], attributes: { "exception.type": "403", "exception.stacktrace": "GenkitError: denied\n    at x" } }],
      attributes: { "genkit:metadata:subtype": "tool", "genkit:name": "lookup", "genkit:input": '{"q":1}', "genkit:output": '{"r":2}' },
    }),
    fakeSpan(124, { attributes: { "genkit:metadata:subtype": "tool.v2", "genkit:name": "t2", "genkit:input": "{}", "genkit:output": "not json" } }),
    fakeSpan(125, { attributes: { "genkit:metadata:subtype": 5, "genkit:name": "odd subtype" } }),
    fakeSpan(126, { attributes: { ...everyValue(), "genkit:metadata:subtype": "model", "genkit:name": "openai/gpt-4o", "genkit:output": output } }),
  ]
  return spans.concat(adversarialSpans())
}

test("adversarial spans (lone surrogates, 1e400, 5 MB values, odd types, existing keys, every attribute type, events, links, status, dropped counts, resources, scopes): equal", async () => {
  const spans = adversarialGenkitSpans()
  // Not vacuous: some spans (not all) take the processor's path.
  const inJs = (n) => assert.ok(n >= 3 && n < spans.length, `${n} spans mapped by the processor`)
  for (const genkit of OPTIONS) {
    await assertFusedEqualsProcessor(spans, { genkit, size: 4, inJs, what: `adversarial ${JSON.stringify(genkit)}` })
  }
  await assertFusedEqualsProcessor(spans, { size: 512, inJs, what: "adversarial, one batch" })
})

test("a tool span's genkit:input that is not a string: as it is when the rules change nothing, a number or a boolean kept, anything else left out under scrubbing or a cap, and in complete mode (processor = fused)", async () => {
  const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
  const inputs = [[secret, "x"], { key: secret }, new String(secret), [1, 2], 5, true, 1.5]
  const tool = (i, input) =>
    fakeSpan(140 + i, { attributes: { "genkit:metadata:subtype": "tool", "genkit:name": "lookup", "genkit:input": input, "genkit:output": '{"r":2}' } })
  const spans = inputs.map((input, i) => tool(i, input))
  const rules = [
    { genkit: { mode: "reference" }, reads: true },
    { genkit: { mode: "reference", scrubSecrets: false, maxContentBytes: 1 << 20 }, reads: true },
    { genkit: { mode: "reference", scrubSecrets: false }, reads: false },
  ]
  // Complete mode: a number or a boolean as it is, any other type left out whatever the rules.
  for (const genkit of [{ mode: "complete" }, { mode: "complete", scrubSecrets: false, maxContentBytes: Infinity }]) {
    await assertFusedEqualsProcessor(spans, { genkit, size: 3, what: `non-string tool input ${JSON.stringify(genkit)}` })
    const text = await assertFusedEqualsProcessor(spans, { genkit, omit: true, size: 3, what: `non-string tool input, omit, ${JSON.stringify(genkit)}` })
    assert.equal(text.includes(secret), false, `${JSON.stringify(genkit)}: no secret in the request`)
    const processor = new GenkitForMaple(genkit)
    for (const [i, input] of inputs.entries()) {
      const view = processed(processor, spans[i])
      const written = view.attributes["gen_ai.tool.call.arguments"]
      if (typeof input === "number" || typeof input === "boolean") assert.equal(written, input, `${JSON.stringify(genkit)} input ${i}: as it is`)
      else assert.ok(!("gen_ai.tool.call.arguments" in view.attributes), `${JSON.stringify(genkit)} input ${i}: left out`)
      assert.equal(view.attributes["gen_ai.operation.name"], "execute_tool")
      assert.equal(view.attributes["gen_ai.tool.call.result"], '{"r":2}')
    }
  }
  for (const { genkit, reads } of rules) {
    await assertFusedEqualsProcessor(spans, { genkit, size: 3, what: `non-string tool input ${JSON.stringify(genkit)}` })
    // Without genkit:input (which carries the secret as the app wrote it), the request has the
    // secret only where the mapping copied it: only under rules that change nothing.
    const text = await assertFusedEqualsProcessor(spans, { genkit, omit: true, size: 3, what: `non-string tool input, omit, ${JSON.stringify(genkit)}` })
    assert.equal(text.includes(secret), !reads, `${JSON.stringify(genkit)}: the secret in the request`)
    // The processor's attributes, span by span.
    const processor = new GenkitForMaple(genkit)
    for (const [i, input] of inputs.entries()) {
      const view = processed(processor, spans[i])
      const written = view.attributes["gen_ai.tool.call.arguments"]
      const scalar = typeof input === "number" || typeof input === "boolean"
      if (!reads || scalar) assert.equal(written, input, `${JSON.stringify(genkit)} input ${i}: written as it is`)
      else assert.ok(!("gen_ai.tool.call.arguments" in view.attributes), `${JSON.stringify(genkit)} input ${i}: left out`)
      assert.equal(view.attributes["gen_ai.tool.call.result"], '{"r":2}')
    }
  }
})

test("omitGenkitInputOutput: genkit:input/genkit:output left out of this export only", async () => {
  const spans = load("genkit-1.42-scenario-spans.jsonl").map(scenarioSpan).concat(adversarialGenkitSpans())
  const text = await assertFusedEqualsProcessor(spans, { omit: true, size: 16, what: "omit" })
  assert.ok(!text.includes('key: "genkit:input"') && !text.includes('key: "genkit:output"'))
  assert.ok(text.includes('key: "gen_ai.output.messages"'))
  // The spans themselves are untouched.
  assert.ok(spans.some((s) => typeof s.attributes["genkit:input"] === "string"))
})

test("in a real provider: other exporters see untouched spans; the fused exporter's request carries the mapping", async () => {
  const r = await startReceiver()
  const first = r.bodies.length
  const memory = new InMemorySpanExporter()
  const fused = new OTLPTraceExporter({ url: r.url, genkit: true })
  const provider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: fused }), new SimpleSpanProcessor({ exporter: memory })] })
  const tracer = provider.getTracer("genkit")
  for (const row of rows.slice(0, 40)) {
    const span = tracer.startSpan(row.name ?? "span")
    span.setAttributes(structuredClone(row.attributes))
    span.end()
  }
  await provider.forceFlush()
  const untouched = memory.getFinishedSpans()
  await provider.shutdown()
  assert.equal(untouched.length, 40)
  for (const s of untouched) assert.ok(!Object.keys(s.attributes).some((k) => k.startsWith("gen_ai.")))
  const text = r.bodies.slice(first).join("\n")
  assert.equal(text.split("trace_id:").length - 1, 40)
  assert.ok(text.includes('key: "gen_ai.operation.name"'))
})

test("options: the processor's validation (TypeError), omit needs genkit", () => {
  assert.throws(() => new OTLPTraceExporter({ genkit: { mode: "fast" } }), TypeError)
  assert.throws(() => new OTLPTraceExporter({ genkit: { colour: 1 } }), /unknown option "colour"/)
  assert.throws(() => new OTLPTraceExporter({ genkit: "yes" }), TypeError)
  assert.throws(() => new OTLPTraceExporter({ omitGenkitInputOutput: true }), TypeError)
  assert.throws(() => new OTLPTraceExporter({ genkit: true, omitGenkitInputOutput: 1 }), TypeError)
  new OTLPTraceExporter({ genkit: false }).shutdown()
})

test("a batch the native reader refuses: the processor on copies + the official serializer, one diag warning", async () => {
  const warnings = []
  diag.setLogger({ warn: (m) => warnings.push(m), error() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN)
  try {
    const spans = load("genkit-1.42-scenario-spans.jsonl").map(scenarioSpan).slice(0, 30)
    // A name the native reader refuses (the official serializer writes it as it can).
    const bad = [...spans.slice(0, 10), fakeSpan(9, { name: 5 }), ...spans.slice(10)]
    const r = await startReceiver()
    const first = r.bodies.length
    const exporter = new OTLPTraceExporter({ url: r.url, genkit: true })
    assert.deepEqual(await exportOnce(exporter, bad), { code: 0 })
    await exporter.shutdown()
    const processor = new GenkitForMaple()
    const want = decode(ProtobufTraceSerializer.serializeRequest(bad.map((s) => processed(processor, s)).map(as2x)))
    assert.equal(r.bodies[first], want)
    assert.ok(want.includes('key: "gen_ai.input.messages"'))
    assert.equal(warnings.filter((w) => w.includes("native encoding failed")).length, 1)
  } finally {
    diag.disable()
  }
})
