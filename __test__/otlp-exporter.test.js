"use strict"
// The native OTLP/protobuf encoding of genkit-for-maple/otlp (issue 8) against the official
// ProtobufTraceSerializer of @opentelemetry/otlp-transformer: for every corpus span (real Genkit and
// real plugins, raw and mapped by GenkitForMaple) from real SDK 1.x, 2.x and 3.x providers, and for
// hand-made spans with every attribute type, lone surrogates, 5 MB values, events, links, status,
// dropped counts, several resources and scopes, both byte streams are decoded with the official
// proto definitions (opentelemetry-proto) and must be equal field for field.
const test = require("node:test")
const assert = require("node:assert/strict")
const { ProtobufTraceSerializer } = require("@opentelemetry/otlp-transformer")
const native = require("../binding.js")
const flat = require("../js/flat.js")
const { corpusRows, corpusSpans, as2x, adversarialSpans, fakeSpan, everyValue } = require("./helpers/otlp-spans")

const decode = (bytes) => native.decodeOtlpTraceRequest(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length))

/** Encodes `spans` both ways and asserts the decoded requests are equal; returns the decoded text. */
async function assertSameRequest(spans, what) {
  const official = ProtobufTraceSerializer.serializeRequest(spans.map(as2x))
  const want = decode(official)
  // Both readers: the native one (src/export.rs) and the JavaScript one (js/flat.js + src/flat.rs).
  const viaFlat = flat.read(spans, (...args) => native.encodeOtlpFlat(...args))
  assert.ok(viaFlat instanceof Promise, `${what}: the JavaScript reader read the batch`)
  assertSameText(decode(await viaFlat), want, `${what} (JavaScript reader)`)
  return assertSameText(decode(await native.encodeOtlpTraces(spans)), want, what)
}

function assertSameText(got, want, what) {
  if (got !== want) {
    // Show the first differing line, not two multi-megabyte strings.
    const a = want.split("\n")
    const b = got.split("\n")
    const i = a.findIndex((line, k) => line !== b[k])
    assert.fail(`${what}: requests differ at line ${i}: official ${JSON.stringify(a[i]?.slice(0, 200))}, native ${JSON.stringify(b[i]?.slice(0, 200))}`)
  }
  return got
}

const rows = corpusRows()

for (const line of [1, 2, 3]) {
  for (const genkit of [false, true]) {
    test(`every corpus span, SDK ${line}.x${genkit ? ", mapped by GenkitForMaple" : ""}: the same request as the official serializer`, async () => {
      const spans = await corpusSpans(line, rows, { genkit })
      assert.equal(spans.length, rows.length + 1)
      const text = await assertSameRequest(spans, `SDK ${line}.x`)
      // Not vacuous: the request holds the spans, their parents, events, links, both scopes.
      assert.equal(text.split("trace_id:").length - 1, spans.length + spans.filter((s) => s.links.length).length)
      assert.ok(text.includes('name: "other-scope"') && text.includes('name: "checkpoint"'))
      assert.ok(text.includes("parent_span_id: ["))
      // SDK 1.x spans do not say whether their parent is remote (no parentSpanContext).
      if (line > 1) assert.ok(text.includes("flags: 769"), "remote parent flags (0x301)")
      if (genkit) assert.ok(text.includes('key: "gen_ai.input.messages"'))
      // Batches of every size the BatchSpanProcessor makes, including one span and none.
      for (const n of [0, 1, 7]) await assertSameRequest(spans.slice(0, n), `SDK ${line}.x, ${n} spans`)
    })
  }
}

test("hand-made spans: every attribute type, lone surrogates, 5 MB values, events, links, status, dropped counts, resources, scopes", async () => {
  const spans = adversarialSpans()
  const text = await assertSameRequest(spans, "adversarial")
  // Resources and scopes grouped by identity in order of first appearance.
  assert.equal(text.split("ResourceSpans {").length - 1, 3)
  assert.ok(text.includes("\\u{fffd}") || text.includes("\u{fffd}"), "lone surrogates became U+FFFD")
  for (const s of spans) await assertSameRequest([s], s.name)
})

test("each attribute value type on its own, at the top level and nested", async () => {
  for (const [key, value] of Object.entries(everyValue())) {
    await assertSameRequest([fakeSpan(1, { attributes: { [key]: value } })], key)
    await assertSameRequest([fakeSpan(1, { attributes: { nested: [value, { inner: value }] } })], `nested ${key}`)
  }
})

test("a span the official serializer would not read is refused by the native reader, with the reason, and no pending exception", () => {
  const bad = [
    [fakeSpan(1, { name: 5 }), /name/],
    [fakeSpan(1, { spanContext: () => ({ traceId: "abc", spanId: "00", traceFlags: 0 }) }), /odd length/],
    [fakeSpan(1, { startTime: "now" }), /HrTime/],
    [fakeSpan(1, { events: "none" }), /array/],
    [fakeSpan(1, { resource: undefined }), /resource/],
    [fakeSpan(1, { instrumentationScope: undefined }), /scope/],
    [fakeSpan(1, { spanContext: () => { throw new Error("getter") } }), /threw/],
    [fakeSpan(1, { attributes: { deep: JSON.parse("[".repeat(200) + "]".repeat(200)) } }), /deep/],
  ]
  for (const [span, reason] of bad) {
    assert.throws(() => native.encodeOtlpTraces([span]), reason)
    // The JavaScript reader refuses it too (the exporter then asks the native reader).
    assert.equal(flat.read([span], () => "read"), undefined)
    // The next call works: nothing was left pending.
    assert.ok(native.encodeOtlpTraces([fakeSpan(2)]) instanceof Promise)
  }
  assert.throws(() => native.encodeOtlpTraces({}), /array/)
  assert.equal(flat.read({}, () => "read"), undefined)
  assert.equal(flat.read([fakeSpan(2)], () => "read"), "read")
})

test("the JavaScript reader's string forms: Latin-1 and UTF-16 chunks, strings split across chunks and big strings, surrogates at string boundaries", async () => {
  // js/flat.js joins strings into chunks of at most 32768 units (Latin-1 when no unit is above
  // 0xFF), passes strings of 16384 units or more on their own, and the native side splits them
  // by length: every boundary kind, each next to the others.
  const attributes = {
    ascii: "plain text",
    latin1: "café ÿ ©",
    cjk: "漢字かな",
    emoji: "🙂 pair",
    highAtEnd: "ends with \ud83d",
    lowAtStart: "\ude42 starts with a low surrogate",
    bigAscii: "a".repeat(20000),
    bigLatin1: "é".repeat(17000),
    bigWide: "x".repeat(16383) + "\u4e00",
    nearChunk: "b".repeat(16383),
    empty: "",
  }
  const spans = []
  for (let i = 0; i < 12; i++) {
    // Spans alternating one-byte and two-byte content, so chunks of both kinds follow each other.
    const extra = i % 2 === 0 ? { [`k${i}`]: "z".repeat(3000 * i) } : { [`k${i}`]: "ω".repeat(2500 * i) }
    spans.push(fakeSpan(i + 1, { name: i % 3 === 0 ? "spän" : "span", attributes: { ...attributes, ...extra } }))
  }
  const text = await assertSameRequest(spans, "string forms")
  assert.ok(text.includes("café ÿ ©") && text.includes("漢字かな"))
  for (const s of spans) await assertSameRequest([s], `string forms, ${s.name}`)
})
