"use strict"
// Issue 13: the built-in receiver under hostile bodies. Bounded work per request, every failure an
// answer with its reason (400/413/415), no uncaught exception from any body, and the next request
// served. Bodies are written with a small protobuf encoder (the field numbers of
// opentelemetry-proto's trace.proto / common.proto).
const { test, after } = require("node:test")
const assert = require("node:assert/strict")
const http = require("node:http")
const zlib = require("node:zlib")
const { startReceiver } = require("../js/receiver")

// --- protobuf wire format ---
const varint = (n) => {
  const out = []
  let v = BigInt(n)
  do {
    let b = Number(v & 0x7fn)
    v >>= 7n
    if (v > 0n) b |= 0x80
    out.push(b)
  } while (v > 0n)
  return Buffer.from(out)
}
const field = (n, payload) => Buffer.concat([varint((n << 3) | 2), varint(payload.length), payload])
const str = (n, s) => field(n, Buffer.from(s))
const anyString = (s) => str(1, s)
const keyValue = (k, valueBytes) => Buffer.concat([str(1, k), field(2, valueBytes)])
const span = (name, attrs = []) =>
  Buffer.concat([field(1, Buffer.alloc(16, 0xab)), field(2, Buffer.alloc(8, 1)), str(5, name), ...attrs.map((a) => field(9, a))])
/** An AnyValue holding `leaf` inside `depth` nested ArrayValues, built in one pass. */
function nested(leaf, depth) {
  const headers = []
  let len = leaf.length
  for (let i = 0; i < depth; i++) {
    const inner = Buffer.concat([varint((1 << 3) | 2), varint(len)])
    len += inner.length
    const outer = Buffer.concat([varint((5 << 3) | 2), varint(len)])
    len += outer.length
    headers.push(inner, outer)
  }
  return Buffer.concat([...headers.reverse(), leaf])
}
/** ExportTraceServiceRequest { resource_spans: [{ resource, scope_spans: [{ scope, spans }] }] } */
function request({ resourceAttrs = [], spans = [], spanCount = 0, emptySpan = false } = {}) {
  const resource = field(1, Buffer.concat(resourceAttrs.map((a) => field(1, a))))
  const scope = field(1, str(1, "test-scope"))
  const spanBytes = spans.map((s) => field(2, s))
  // `spanCount` empty spans: 2 bytes each.
  const empty = emptySpan || spanCount > 0 ? Buffer.alloc(spanCount * 2) : Buffer.alloc(0)
  for (let i = 0; i < spanCount; i++) empty[2 * i] = (2 << 3) | 2
  const scopeSpans = field(2, Buffer.concat([scope, ...spanBytes, empty]))
  return field(1, Buffer.concat([resource, scopeSpans]))
}

const receivers = []
after(async () => {
  for (const r of receivers) await r.close()
})
async function receiver(options) {
  const r = await startReceiver(options)
  receivers.push(r)
  return r
}

function post(url, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { "content-length": body.length, ...headers } }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }))
    })
    req.on("error", reject)
    req.end(body)
  })
}
const protobuf = { "content-type": "application/x-protobuf" }

/** The receiver still answers a valid request with 200 and keeps its spans. */
async function stillServes(r) {
  const before = r.spans().length
  const ok = await post(`${r.url}/v1/traces`, request({ spans: [span("after")] }), protobuf)
  assert.equal(ok.status, 200, ok.body)
  assert.equal(r.spans().length, before + 1)
  assert.equal(r.spans().at(-1).name, "after")
}

test("200,000 empty spans in one ResourceSpans (400 KB): 413 with the reason, then served", async () => {
  const r = await receiver()
  const body = request({ spanCount: 200_000 })
  assert.ok(body.length < 500_000)
  const res = await post(`${r.url}/v1/traces`, body, protobuf)
  assert.equal(res.status, 413)
  assert.match(res.body, /more than 50000 spans/)
  await stillServes(r)
})

test("200,000 spans within raised limits: all kept (no spread of 200,000 arguments)", async () => {
  const r = await receiver({ maxSpans: 300_000 })
  const res = await post(`${r.url}/v1/traces`, request({ spanCount: 200_000 }), protobuf)
  assert.equal(res.status, 200, res.body)
  assert.equal(r.stats().spans, 200_000)
  await stillServes(r)
})

test("a 1 MiB resource attribute with 2,000 spans: decoded once and shared by every span", async () => {
  const r = await receiver()
  const big = "r".repeat(1 << 20)
  const body = request({ resourceAttrs: [keyValue("big", anyString(big))], spanCount: 2_000 })
  const rss = process.memoryUsage().rss
  const res = await post(`${r.url}/v1/traces`, body, protobuf)
  assert.equal(res.status, 200, res.body)
  const spans = r.spans()
  assert.equal(spans.length, 2_000)
  assert.equal(spans[0].resource.big, big)
  assert.equal(spans[0].resource, spans[1_999].resource, "one object, shared")
  assert.deepStrictEqual(spans[0].scope, { name: "test-scope", version: "" })
  // It used to copy the resource into every span: ~4 GB of RSS.
  const grown = (process.memoryUsage().rss - rss) / 2 ** 20
  assert.ok(grown < 500, `RSS grew by ${grown.toFixed(0)} MiB`)
  await stillServes(r)
})

test("huge counts of messages, deep nesting, huge and bad lengths: 400/413 with the reason, then served", async () => {
  const r = await receiver()
  const url = `${r.url}/v1/traces`
  // 2,000,000 empty key-values in one span (4 MB): over the message limit.
  const emptyKv = Buffer.alloc(2_000_000 * 2)
  for (let i = 0; i < 2_000_000; i++) emptyKv[2 * i] = (9 << 3) | 2
  let res = await post(url, request({ spans: [Buffer.concat([str(5, "kv"), emptyKv])] }), protobuf)
  assert.equal(res.status, 413)
  assert.match(res.body, /protobuf messages/)
  // An attribute value nested 150 and 100,000 levels deep (arrays of arrays).
  for (const depth of [150, 100_000]) {
    const value = nested(anyString("leaf"), depth)
    res = await post(url, request({ spans: [span("deep", [keyValue("deep", value)])] }), protobuf)
    assert.equal(res.status, 400, `${depth}`)
    assert.match(res.body, /nested deeper than 100/)
  }
  // 40 levels (87 messages deep): fine, and the value is kept.
  res = await post(url, request({ spans: [span("deep-ok", [keyValue("deep", nested(anyString("leaf"), 40))])] }), protobuf)
  assert.equal(res.status, 200, res.body)
  let kept = r.spans().at(-1).attributes.deep
  for (let i = 0; i < 40; i++) kept = kept[0]
  assert.equal(kept, "leaf")
  // A length beyond the body, a varint of 11 bytes, a group, truncation at every position of a span.
  for (const bad of [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), Buffer.alloc(11, 0xff), Buffer.from([0x0b, 0x0c])]) {
    res = await post(url, bad, protobuf)
    assert.equal(res.status, 400, bad.toString("hex"))
    assert.match(res.body, /invalid ExportTraceServiceRequest/)
  }
  const whole = request({ spans: [span("cut", [keyValue("k", anyString("v"))])] })
  for (let cut = 1; cut < whole.length; cut++) {
    res = await post(url, whole.subarray(0, cut), protobuf)
    assert.ok(res.status === 400 || res.status === 200, `${cut}: ${res.status}`)
  }
  await stillServes(r)
})

test("huge strings: over the body limit 413, under it kept whole", async () => {
  const r = await receiver({ maxBodyBytes: 8 << 20 })
  const url = `${r.url}/v1/traces`
  let res = await post(url, request({ spans: [span("big", [keyValue("s", anyString("x".repeat(9 << 20)))])] }), protobuf)
  assert.equal(res.status, 413)
  assert.match(res.body, /larger than 8388608 bytes/)
  const text = "ж\u0001\"\\".repeat(1 << 19)
  res = await post(url, request({ spans: [span("big", [keyValue("s", anyString(text))])] }), protobuf)
  assert.equal(res.status, 200, res.body)
  assert.equal(r.spans().at(-1).attributes.s, text)
  await stillServes(r)
})

test("bad gzip and gzip bombs: 400 and 413 with the reason, then served", async () => {
  const r = await receiver({ maxDecodedBytes: 4 << 20 })
  const url = `${r.url}/v1/traces`
  const gz = { ...protobuf, "content-encoding": "gzip" }
  let res = await post(url, Buffer.from("not gzip at all"), gz)
  assert.equal(res.status, 400)
  assert.match(res.body, /bad gzip body/)
  res = await post(url, zlib.gzipSync(request({ spans: [span("gz")] })).subarray(0, 20), gz)
  assert.equal(res.status, 400)
  // 64 MiB of zeros, about 64 KB compressed.
  res = await post(url, zlib.gzipSync(Buffer.alloc(64 << 20)), gz)
  assert.equal(res.status, 413)
  assert.match(res.body, /after gzip decompression/)
  res = await post(url, zlib.gzipSync(request({ spans: [span("gz-ok")] })), gz)
  assert.equal(res.status, 200, res.body)
  assert.equal(r.spans().at(-1).name, "gz-ok")
  await stillServes(r)
})

test("wrong content types and encodings: 415 with the reason, then served", async () => {
  const r = await receiver()
  const url = `${r.url}/v1/traces`
  const body = request({ spans: [span("x")] })
  for (const headers of [
    { "content-type": "application/json" },
    { "content-type": "text/plain" },
    {},
    { "content-type": "application/x-protobuf", "content-encoding": "br" },
    { "content-type": "application/x-protobuf", "content-encoding": "deflate, gzip" },
  ]) {
    const res = await post(url, body, headers)
    assert.equal(res.status, 415, JSON.stringify(headers))
    assert.match(res.body, /content-(type|encoding)/)
  }
  assert.equal(r.stats().rejected, 5)
  await stillServes(r)
})
