"use strict"
// Spans for the native OTLP exporter tests and bench: the real corpus replayed through real
// OpenTelemetry SDK 1.x, 2.x and 3.x providers (with events, links, status, kinds, a remote parent),
// and hand-made ReadableSpan-shaped objects with every attribute value type.
const { context, trace, SpanKind, SpanStatusCode, TraceFlags } = require("@opentelemetry/api")
const sdk1 = require("sdk-trace-base-1")
const sdk2 = require("@opentelemetry/sdk-trace-base")
const sdk3 = require("@opentelemetry/sdk-trace")
const { GenkitForMaple } = require("../..")
const { load } = require("./fixtures")

const SDKS = { 1: sdk1, 2: sdk2, 3: sdk3 }

/** Every corpus row: the real Genkit spans and the real-plugin spans. */
function corpusRows() {
  return load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
}

/** A provider of SDK line `line` whose spans end up in an in-memory exporter. */
function providerOf(line, { genkit = false, resource } = {}) {
  const sdk = SDKS[line]
  const exporter = new sdk.InMemorySpanExporter()
  const simple = line === 3 ? new sdk.SimpleSpanProcessor({ exporter }) : new sdk.SimpleSpanProcessor(exporter)
  const processors = genkit ? [new GenkitForMaple(), simple] : [simple]
  let provider
  if (line === 1) {
    provider = new sdk1.BasicTracerProvider(resource ? { resource } : {})
    for (const p of processors) provider.addSpanProcessor(p)
  } else if (line === 2) {
    provider = new sdk2.BasicTracerProvider({ spanProcessors: processors, ...(resource ? { resource } : {}) })
  } else {
    provider = new sdk3.TracerProvider({ spanProcessors: processors, ...(resource ? { resource } : {}) })
  }
  return { provider, exporter }
}

/**
 * Ends one span per row under SDK line `line` and returns the finished spans: two tracers (scopes),
 * parents and children, a remote parent with trace state, kinds, events with attributes, links,
 * error status, and the corpus attributes (mapped by GenkitForMaple when `genkit`).
 */
async function corpusSpans(line, rows, { genkit = false } = {}) {
  const { provider, exporter } = providerOf(line, { genkit })
  const tracers = [provider.getTracer("genkit", "1.42.0"), provider.getTracer("other-scope")]
  const remote = trace.setSpanContext(context.active(), {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  })
  const root = tracers[0].startSpan("root", { kind: SpanKind.SERVER }, remote)
  const ctx = trace.setSpan(context.active(), root)
  rows.forEach((row, i) => {
    const tracer = tracers[i % 7 === 3 ? 1 : 0]
    const links = i % 5 === 0 ? [{ context: root.spanContext(), attributes: { "link.i": i, ok: true } }] : []
    const span = tracer.startSpan(row.name ?? "span", { kind: i % 5, links }, ctx)
    span.setAttributes(structuredClone(row.attributes))
    if (i % 3 === 0) span.addEvent("checkpoint", { step: i, ratio: i / 7, label: `e${i}` })
    if (i % 4 === 1) span.addEvent("bare")
    if (row.status?.code === SpanStatusCode.ERROR || i % 11 === 0) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: row.status?.message || `failed ${i}` })
    }
    span.end()
  })
  root.end()
  await provider.forceFlush()
  const spans = exporter.getFinishedSpans()
  await provider.shutdown()
  return spans
}

/**
 * The view of an SDK 1.x span the official 0.301 serializer reads (it knows only the 2.x/3.x
 * `instrumentationScope` and `parentSpanContext`): the oracle for 1.x spans.
 */
function as2x(span) {
  if (span.instrumentationScope !== undefined) return span
  const view = Object.create(span)
  Object.defineProperty(view, "instrumentationScope", { value: span.instrumentationLibrary })
  Object.defineProperty(view, "parentSpanContext", {
    value: span.parentSpanId ? { spanId: span.parentSpanId, traceId: span.spanContext().traceId, traceFlags: 0 } : undefined,
  })
  return view
}

const hex = (n, seed) => Array.from({ length: n }, (_, i) => "0123456789abcdef"[(seed * 7 + i * 13) % 16]).join("")

/** A ReadableSpan-shaped object (the fields the serializers read), overridable. */
function fakeSpan(seed, over = {}) {
  const traceId = hex(32, seed)
  return {
    name: `span-${seed}`,
    kind: seed % 5,
    spanContext: () => ({ traceId, spanId: hex(16, seed + 1), traceFlags: seed % 2 }),
    parentSpanContext: seed % 2 ? { traceId, spanId: hex(16, seed + 2), traceFlags: 1, isRemote: seed % 4 === 1 } : undefined,
    startTime: [1764500000 + seed, 123456789],
    endTime: [1764500001 + seed, 987654321],
    status: { code: seed % 3 },
    attributes: {},
    links: [],
    events: [],
    duration: [1, 0],
    ended: true,
    resource: RESOURCES[0],
    instrumentationScope: SCOPES[0],
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...over,
  }
}

const RESOURCES = [
  { attributes: { "service.name": "genkit-app", "host.cores": 2, ratio: 0.5, up: true, tags: ["a", "b"] } },
  { attributes: { "service.name": "other" }, schemaUrl: "https://opentelemetry.io/schemas/1.26.0" },
  { attributes: {} },
]
const SCOPES = [
  { name: "genkit", version: "1.42.0" },
  { name: "genkit", version: "1.42.0" }, // same name, another object: its own scope group
  { name: "with-attrs", schemaUrl: "https://example.test/schema", attributes: { "scope.attr": "x", n: 1 }, droppedAttributesCount: 2 },
  { name: "", version: "" },
]

const LONE = "lone \ud800 high, \udc00 low, pair \ud83d\ude00, end \ud83d"

/** Attribute values of every type the official writer distinguishes, at every level. */
function everyValue() {
  return {
    str: "text",
    empty: "",
    multi: "東京 café 😀",
    lone: LONE,
    [LONE]: "key with lone surrogates",
    int: 42,
    negative: -7,
    zero: 0,
    negativeZero: -0,
    big: 2 ** 53 + 2,
    max: 2 ** 63 - 1024,
    tooBig: 2 ** 63,
    min: -(2 ** 63),
    tooSmall: -(2 ** 64),
    float: 3.25,
    tiny: 5e-324,
    nan: NaN,
    inf: Infinity,
    ninf: -Infinity,
    yes: true,
    no: false,
    nothing: null,
    undef: undefined,
    fn: () => 1,
    sym: Symbol("s"),
    bigint: 10n,
    bytes: new Uint8Array([0, 1, 255]),
    buffer: Buffer.from("buffer bytes"),
    slice: new Uint8Array([9, 8, 7, 6, 5]).subarray(1, 3),
    // Over shared memory (js/flat.js copies it before the native side reads it).
    shared: new Uint8Array(new SharedArrayBuffer(5)).fill(7).subarray(1, 4),
    int16: new Int16Array([1, -2]),
    clamped: new Uint8ClampedArray([3]),
    strings: ["a", "", LONE],
    numbers: [1, 2.5, -3, NaN],
    bools: [true, false],
    mixed: ["a", 1, 1.5, true, null, undefined, [2, ["deep"]], { k: "v" }, new Uint8Array([4])],
    // eslint-disable-next-line no-sparse-arrays
    holes: [1, , 3],
    emptyArray: [],
    object: { a: 1, b: { c: [1, "x"], d: null }, 10: "integer-like key", e: new Uint8Array(0) },
    emptyObject: {},
    date: new Date(0),
    map: new Map([["k", "v"]]),
    "1": "integer-like top-level key",
  }
}

/** Hand-made spans covering what real SDK spans rarely carry. */
function adversarialSpans() {
  const spans = []
  spans.push(fakeSpan(1, { attributes: everyValue() }))
  spans.push(fakeSpan(2, { name: LONE, status: { code: 2, message: `boom ${LONE}` } }))
  spans.push(fakeSpan(3, { attributes: { huge: "x".repeat(5 << 20), hugeMulti: "東京😀".repeat(300_000) } }))
  spans.push(
    fakeSpan(4, {
      events: [
        { name: "e1", time: [1764500000, 5], attributes: everyValue(), droppedAttributesCount: 3 },
        { name: "", time: [0, 0] },
        { name: LONE, time: [1764500000.5, 0.75], attributes: undefined, droppedAttributesCount: 0 },
      ],
      droppedEventsCount: 7,
      links: [
        {
          context: { traceId: hex(32, 9), spanId: hex(16, 9), traceFlags: 1, isRemote: true, traceState: { serialize: () => "a=1,b=2" } },
          attributes: { l: 1 },
          droppedAttributesCount: 1,
        },
        { context: { traceId: hex(32, 10), spanId: hex(16, 10), traceFlags: 0 } },
      ],
      droppedLinksCount: 5,
      droppedAttributesCount: 4294967297,
    }),
  )
  spans.push(
    fakeSpan(5, {
      spanContext: () => ({ traceId: "ABCDEFABCDEFABCDEFABCDEFABCDEFAB", spanId: "zz00ZZ..0011ggGG", traceFlags: 513, traceState: { serialize: () => "vendor=x" } }),
      kind: undefined,
      status: { code: 1, message: "" },
      droppedAttributesCount: undefined,
    }),
  )
  spans.push(fakeSpan(6, { traceState: undefined, kind: null, status: { code: 0, message: undefined }, parentSpanContext: { spanId: "" } }))
  spans.push(fakeSpan(7, { startTime: [0, 0], endTime: [4294967295, 999999999] }))
  // Resources and scopes: grouping by object identity, in order of first appearance.
  for (let i = 0; i < 12; i++) {
    spans.push(fakeSpan(10 + i, { resource: RESOURCES[(i * 5) % 3], instrumentationScope: SCOPES[i % 4], attributes: { i } }))
  }
  // A getter-backed attribute map and a null-prototype one.
  const getters = {}
  Object.defineProperty(getters, "computed", { get: () => "from a getter", enumerable: true })
  Object.defineProperty(getters, "hidden", { value: "not enumerable", enumerable: false })
  spans.push(fakeSpan(30, { attributes: getters }))
  spans.push(fakeSpan(31, { attributes: Object.assign(Object.create(null), { a: 1 }) }))
  spans.push(fakeSpan(32, { attributes: null }))
  return spans
}

module.exports = { corpusRows, corpusSpans, providerOf, as2x, fakeSpan, adversarialSpans, everyValue, LONE, RESOURCES, SCOPES, SDKS }
