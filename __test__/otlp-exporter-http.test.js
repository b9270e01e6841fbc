"use strict"
// genkit-for-maple/otlp's OTLPTraceExporter end to end over real OTLP/HTTP on 127.0.0.1, beside the
// official OTLPTraceExporter of @opentelemetry/exporter-trace-otlp-proto: the same request bodies
// (decoded with the official proto definitions), options and environment variables, gzip, retries,
// timeouts, the concurrency limit, forceFlush/shutdown, the fallback to the official serializer
// with one diag warning, and the binary that does not load (GENKIT_FOR_MAPLE_FORCE_JS=1).
const { test, after } = require("node:test")
const assert = require("node:assert/strict")
const http = require("node:http")
const zlib = require("node:zlib")
const path = require("node:path")
const { spawnSync } = require("node:child_process")
const { diag, DiagLogLevel } = require("@opentelemetry/api")
const Official = require("@opentelemetry/exporter-trace-otlp-proto").OTLPTraceExporter
const { BatchSpanProcessor, TracerProvider } = require("@opentelemetry/sdk-trace")
const { OTLPTraceExporter } = require("genkit-for-maple/otlp")
const native = require("../binding.js")
const { startReceiver } = require("../js/receiver")
const { corpusRows, corpusSpans, fakeSpan } = require("./helpers/otlp-spans")

const servers = []
after(async () => {
  for (const s of servers) await new Promise((done) => { s.close(() => done()); s.closeAllConnections() })
})

/**
 * A raw OTLP/HTTP endpoint: keeps every request (path, headers, body decoded with the official
 * proto definitions) and answers with `respond(request number)`: a status, or "hang".
 */
async function rawReceiver(respond = () => 200) {
  const requests = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      let body = Buffer.concat(chunks)
      if (req.headers["content-encoding"] === "gzip") body = zlib.gunzipSync(body)
      requests.push({ path: req.url, headers: req.headers, decoded: native.decodeOtlpTraceRequest(body), size: body.length })
      const answer = respond(requests.length)
      if (answer === "hang") return
      res.writeHead(answer, answer === 503 ? { "retry-after": "0" } : {})
      res.end()
    })
  })
  await new Promise((done) => server.listen(0, "127.0.0.1", done))
  servers.push(server)
  return { url: `http://127.0.0.1:${server.address().port}`, requests }
}

const exportOnce = (exporter, spans) => new Promise((done) => exporter.export(spans, done))

let spansCache
async function spans() {
  spansCache ??= await corpusSpans(2, corpusRows(), { genkit: true })
  return spansCache
}

/** Sets environment variables for the duration of `fn` (the exporters read them when constructed). */
async function withEnv(vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  Object.assign(process.env, vars)
  try {
    return await fn()
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

test("the same request bodies as the official exporter, plain and gzip, with the same headers", async () => {
  const all = await spans()
  for (const compression of ["none", "gzip"]) {
    const r = await rawReceiver()
    const config = { url: `${r.url}/v1/traces`, compression, headers: { "x-api-key": "k1" } }
    const ours = new OTLPTraceExporter(config)
    assert.equal(ours.isNative, true)
    const theirs = new Official(config)
    assert.deepEqual(await exportOnce(ours, all), { code: 0 })
    assert.deepEqual(await exportOnce(theirs, all), { code: 0 })
    await ours.shutdown()
    await theirs.shutdown()
    const [a, b] = r.requests
    assert.equal(r.requests.length, 2)
    assert.equal(a.decoded, b.decoded, `${compression}: decoded requests differ`)
    assert.ok(a.decoded.includes("gen_ai.input.messages"))
    for (const h of ["content-type", "content-encoding", "x-api-key", "user-agent"]) assert.equal(a.headers[h], b.headers[h], h)
    assert.equal(a.headers["content-encoding"], compression === "gzip" ? "gzip" : undefined)
    assert.equal(a.path, "/v1/traces")
  }
})

test("OTEL_EXPORTER_OTLP_* and OTEL_EXPORTER_OTLP_TRACES_* variables are honoured as by the official exporter", async () => {
  const r = await rawReceiver()
  const all = (await spans()).slice(0, 5)
  await withEnv(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20secret,x-a=1",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-a=2",
      OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: "gzip",
    },
    async () => {
      for (const Exporter of [OTLPTraceExporter, Official]) {
        const e = new Exporter()
        assert.deepEqual(await exportOnce(e, all), { code: 0 })
        await e.shutdown()
      }
    },
  )
  const [a, b] = r.requests
  assert.equal(a.path, "/v1/traces")
  assert.equal(a.headers.authorization, "Bearer secret")
  assert.equal(a.headers["x-a"], "2")
  assert.equal(a.headers["content-encoding"], "gzip")
  for (const h of ["authorization", "x-a", "content-encoding"]) assert.equal(a.headers[h], b.headers[h])
  assert.equal(a.decoded, b.decoded)

  const r2 = await rawReceiver()
  await withEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${r2.url}/custom/path` }, async () => {
    const e = new OTLPTraceExporter()
    assert.deepEqual(await exportOnce(e, all), { code: 0 })
    await e.shutdown()
  })
  assert.equal(r2.requests[0].path, "/custom/path")
})

test("retries on 503 with Retry-After, then succeeds; the same body every attempt", async () => {
  const r = await rawReceiver((n) => (n <= 2 ? 503 : 200))
  const e = new OTLPTraceExporter({ url: `${r.url}/v1/traces` })
  assert.deepEqual(await exportOnce(e, (await spans()).slice(0, 3)), { code: 0 })
  await e.shutdown()
  assert.equal(r.requests.length, 3)
  assert.ok(r.requests.every((q) => q.decoded === r.requests[0].decoded))
})

test("a non-retryable status fails the export with the official error", async () => {
  const r = await rawReceiver(() => 400)
  const e = new OTLPTraceExporter({ url: `${r.url}/v1/traces` })
  const result = await exportOnce(e, (await spans()).slice(0, 1))
  assert.equal(result.code, 1)
  assert.equal(result.error.name, "OTLPExporterError")
  assert.equal(result.error.code, 400)
  await e.shutdown()
})

test("timeoutMillis: a receiver that never answers fails the export; concurrencyLimit counts exports being encoded or sent", async () => {
  const r = await rawReceiver(() => "hang")
  const e = new OTLPTraceExporter({ url: `${r.url}/v1/traces`, timeoutMillis: 300, concurrencyLimit: 1 })
  const started = Date.now()
  const first = exportOnce(e, (await spans()).slice(0, 2))
  // The first export is still encoding or sending: the limit of 1 is reached.
  const second = await exportOnce(e, (await spans()).slice(0, 2))
  assert.equal(second.code, 1)
  assert.match(second.error.message, /Concurrent export limit reached/)
  const result = await first
  assert.equal(result.code, 1)
  assert.match(String(result.error?.message), /timed out/i)
  assert.ok(Date.now() - started >= 250)
  await e.shutdown()
})

test("forceFlush waits for batches still being encoded and sent", async () => {
  const r = await rawReceiver()
  const e = new OTLPTraceExporter({ url: `${r.url}/v1/traces` })
  const results = []
  const all = await spans()
  for (let i = 0; i < 4; i++) e.export(all.slice(i * 10, i * 10 + 10), (res) => results.push(res.code))
  await e.forceFlush()
  assert.deepEqual(results, [0, 0, 0, 0])
  assert.equal(r.requests.length, 4)
  await e.shutdown()
})

test("a span the native reader refuses: that batch goes through the official serializer, with one diag warning", async () => {
  const warnings = []
  diag.setLogger({ warn: (m) => warnings.push(m), error() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN)
  try {
    const r = await rawReceiver()
    const e = new OTLPTraceExporter({ url: `${r.url}/v1/traces` })
    const theirs = new Official({ url: `${r.url}/v1/traces` })
    // A ReadableSpan-shaped object whose id has an odd length: the official serializer writes it anyway.
    const odd = fakeSpan(1, { spanContext: () => ({ traceId: "abc", spanId: "0102030405060708", traceFlags: 1 }) })
    const batch = [...(await spans()).slice(0, 3), odd]
    assert.throws(() => native.encodeOtlpTraces(batch))
    for (const x of [e, e, theirs]) {
      const result = await exportOnce(x, batch)
      assert.equal(result.code, 0, String(result.error))
    }
    await e.shutdown()
    await theirs.shutdown()
    assert.equal(r.requests.length, 3)
    assert.equal(r.requests[0].decoded, r.requests[2].decoded)
    const ours = warnings.filter((w) => w.includes("genkit-for-maple/otlp"))
    assert.equal(ours.length, 1, "one warning per minute, not per batch")
    assert.match(ours[0], /official ProtobufTraceSerializer/)
  } finally {
    diag.disable()
  }
})

test("through a real BatchSpanProcessor into the built-in receiver: every span arrives as the official exporter delivers it", async () => {
  const received = {}
  for (const [name, Exporter] of [["ours", OTLPTraceExporter], ["official", Official]]) {
    const receiver = await startReceiver()
    const provider = new TracerProvider({
      spanProcessors: [new BatchSpanProcessor({ exporter: new Exporter({ url: `${receiver.url}/v1/traces` }), maxExportBatchSize: 64 })],
    })
    const tracer = provider.getTracer("genkit", "1.42.0")
    for (const row of corpusRows()) {
      const span = tracer.startSpan(row.name)
      span.setAttributes(row.attributes)
      span.end()
    }
    await provider.shutdown()
    received[name] = receiver.spans()
    assert.deepEqual(receiver.stats().errors, [])
    await receiver.close()
  }
  assert.equal(received.ours.length, corpusRows().length)
  // Batches may arrive in another order (encoding is asynchronous): compare as sorted lists.
  const strip = (spans) => spans.map(({ traceId, spanId, startTimeUnixNano, endTimeUnixNano, ...rest }) => JSON.stringify(rest)).sort()
  assert.deepEqual(strip(received.ours), strip(received.official))
})

test("a binary that does not load gives the official exporter (GENKIT_FOR_MAPLE_FORCE_JS=1), with one diag warning", () => {
  const script = `
    const { diag, DiagLogLevel } = require("@opentelemetry/api")
    const warnings = []
    diag.setLogger({ warn: (m) => warnings.push(m), error() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN)
    const { OTLPTraceExporter } = require("genkit-for-maple/otlp")
    const { startReceiver } = require(${JSON.stringify(path.join(__dirname, "..", "js", "receiver.js"))})
    const { BasicTracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace-base")
    ;(async () => {
      const r = await startReceiver()
      const exporter = new OTLPTraceExporter({ url: r.url + "/v1/traces" })
      new OTLPTraceExporter({ url: r.url + "/v1/traces" })
      const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] })
      provider.getTracer("t").startSpan("one").end()
      await provider.shutdown()
      console.log(JSON.stringify({ isNative: exporter.isNative, spans: r.spans().map((s) => s.name), warnings }))
      await r.close()
    })()`
  const out = spawnSync(process.execPath, ["-e", script], {
    cwd: path.join(__dirname, ".."),
    env: { ...process.env, GENKIT_FOR_MAPLE_FORCE_JS: "1" },
    encoding: "utf8",
    timeout: 60_000,
  })
  assert.equal(out.status, 0, out.stderr)
  const result = JSON.parse(out.stdout.trim().split("\n").pop())
  assert.equal(result.isNative, false)
  assert.deepEqual(result.spans, ["one"])
  assert.equal(result.warnings.filter((w) => w.includes("native binding unavailable")).length, 1)
})

test("batches are read by the JavaScript reader (js/flat.js); the per-field napi reader only reads a batch it refuses", async () => {
  const all = await spans()
  const r = await rawReceiver()
  const calls = { flat: 0, napi: 0, fusedFlat: 0, fusedNapi: 0 }
  const counting = (binding) => ({
    ...binding,
    encodeOtlpFlat: (...a) => (calls.flat++, binding.encodeOtlpFlat(...a)),
    encodeOtlpTraces: (...a) => (calls.napi++, binding.encodeOtlpTraces(...a)),
    fusedReadFlat: (...a) => (calls.fusedFlat++, binding.fusedReadFlat(...a)),
    fusedRead: (...a) => (calls.fusedNapi++, binding.fusedRead(...a)),
  })
  const plain = new OTLPTraceExporter({ url: `${r.url}/v1/traces` })
  plain._native = counting(plain._native)
  const fused = new OTLPTraceExporter({ url: `${r.url}/v1/traces`, genkit: true })
  fused._fused.native = counting(fused._fused.native)
  assert.deepEqual(await exportOnce(plain, all), { code: 0 })
  assert.deepEqual(await exportOnce(fused, all), { code: 0 })
  assert.deepEqual(calls, { flat: 1, napi: 0, fusedFlat: 1, fusedNapi: 0 })
  // A name the JavaScript reader refuses: the napi reader is asked (and refuses it with its reason).
  const bad = [fakeSpan(1, { name: 5 })]
  assert.deepEqual(await exportOnce(plain, bad), { code: 0 })
  assert.deepEqual(await exportOnce(fused, bad), { code: 0 })
  assert.deepEqual(calls, { flat: 1, napi: 1, fusedFlat: 1, fusedNapi: 1 })
  await plain.shutdown()
  await fused.shutdown()
})
