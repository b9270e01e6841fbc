"use strict"
// genkit-for-maple/otlp: OTLPTraceExporter, a drop-in for the one of
// @opentelemetry/exporter-trace-otlp-proto whose OTLP/protobuf encoding is native (issue 8).
//
// Everything but serialization is the official code: the configuration (constructor options and
// OTEL_EXPORTER_OTLP_* / OTEL_EXPORTER_OTLP_TRACES_* variables through convertLegacyHttpOptions),
// the export delegate (concurrency limit, partial-success handling, self-observability metrics),
// the retrying OTLP/HTTP transport (timeouts, retries, headers, agents, gzip through zlib streams).
// export() reads the spans' fields into Rust on the calling thread (the only main-thread work),
// the request is encoded on the libuv thread pool, and the bytes are handed to the official delegate.

const { OTLPExporterBase } = require("@opentelemetry/otlp-exporter-base")
const { createOtlpHttpExportDelegate, convertLegacyHttpOptions } = require("@opentelemetry/otlp-exporter-base/node-http")
const { ProtobufTraceSerializer, TraceExporterMetricsHelper } = require("@opentelemetry/otlp-transformer")
const { diag } = require("@opentelemetry/api")
const flat = require("./flat")

/** `FAILED` of @opentelemetry/core. */
const FAILED = 1
/** The official exporter's self-observability component type (semconv `otel.component.type`). */
const COMPONENT_TYPE = "otlp_http_span_exporter"

let native
let nativeError
/** The binding through ./load.js (bundler-proof, never throws), as the processor loads it. */
function loadNative() {
  if (native !== undefined || nativeError !== undefined) return native
  const load = require("./load")
  const result = load.loadBinding()
  if (result.binding !== undefined && typeof result.binding.encodeOtlpTraces === "function") {
    native = result.binding
    return native
  }
  nativeError = result.binding !== undefined ? { error: new Error("the binary has no encodeOtlpTraces") } : result
  native = undefined
  let text
  try {
    text = load.describe(nativeError, "spans are serialized by the official ProtobufTraceSerializer", "genkit-for-maple/otlp")
  } catch {
    text = "genkit-for-maple/otlp: native binding unavailable; spans are serialized by the official ProtobufTraceSerializer"
  }
  diag.warn(text)
  return native
}

/**
 * The delegate's serializer. Our export() puts the bytes (or `OFFICIAL`) in `next` right before
 * calling the delegate, which calls serializeRequest synchronously, once.
 */
const OFFICIAL = Symbol("official")
function createSerializer() {
  return {
    next: OFFICIAL,
    serializeRequest(spans) {
      const next = this.next
      this.next = OFFICIAL
      return next === OFFICIAL ? ProtobufTraceSerializer.serializeRequest(spans) : next
    },
    deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
  }
}

const WARN_INTERVAL_MS = 60_000

/**
 * OTLP/HTTP protobuf trace exporter with native encoding; same constructor options, environment
 * variables and contract as `OTLPTraceExporter` of `@opentelemetry/exporter-trace-otlp-proto`.
 * Types in ./otlp.d.ts.
 */
class OTLPTraceExporter extends OTLPExporterBase {
  /** @param {import("@opentelemetry/otlp-exporter-base/node-http").OTLPExporterNodeConfigBase} [config] */
  constructor(config = {}) {
    const { genkit, omitGenkitInputOutput, ...httpConfig } = config ?? {}
    // Validated before anything else is made: a TypeError for a wrong option, as GenkitForMaple.
    const fused = fusedOptions(genkit, omitGenkitInputOutput)
    const options = convertLegacyHttpOptions(httpConfig, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" })
    const serializer = createSerializer()
    super(createOtlpHttpExportDelegate(options, serializer, COMPONENT_TYPE, TraceExporterMetricsHelper, config.selfObsMeterProvider))
    this._serializer = serializer
    this._native = loadNative()
    this._concurrencyLimit = options.concurrencyLimit
    /** Exports accepted and not yet called back (encoding, or in the delegate). */
    this._inFlight = 0
    /** Promises of the encodings under way, for forceFlush. */
    this._encoding = new Set()
    this._lastWarning = -Infinity
    /** Fused mode (option `genkit`): the processor whose mapping the request carries. */
    this._fused = fused === undefined ? undefined : createFused(fused)
  }

  /** Whether batches are encoded natively (`false`: the official serializer runs). */
  get isNative() {
    return this._native !== undefined
  }

  export(items, resultCallback) {
    if (this._fused !== undefined) {
      this._exportFused(items, resultCallback)
      return
    }
    const native = this._native
    if (native === undefined) {
      super.export(items, resultCallback)
      return
    }
    // The official delegate's concurrency limit, counted over encoding + sending.
    if (this._inFlight >= this._concurrencyLimit) {
      resultCallback({ code: FAILED, error: new Error("Concurrent export limit reached") })
      return
    }
    let encoding
    try {
      // The JavaScript reader (./flat.js); a batch it refuses goes to the native reader, which
      // refuses it with the reason.
      encoding = readFlat(native, items, native.encodeOtlpFlat) ?? native.encodeOtlpTraces(items)
    } catch (error) {
      // A span the native reader does not accept: the official serializer, now, as the official exporter.
      this._warn(error)
      this._send(OFFICIAL, items, resultCallback)
      return
    }
    this._inFlight++
    const done = (result) => {
      this._inFlight--
      resultCallback(result)
    }
    const pending = encoding.then(
      (bytes) => this._sendCounted(bytes, items, done),
      (error) => {
        this._warn(error)
        this._sendCounted(OFFICIAL, items, done)
      },
    )
    this._encoding.add(pending)
    pending.finally(() => this._encoding.delete(pending))
  }

  /**
   * Fused mode: reads the batch now (the only main-thread work), then, after the batches before it
   * (the pairing state sees spans in end order), maps and encodes it on the thread pool; spans the
   * core cannot map exactly as the processor would are mapped by the processor, on a copy, here.
   * Any failure: the processor on copies of every span, and the official serializer.
   */
  _exportFused(items, resultCallback) {
    if (this._inFlight >= this._concurrencyLimit) {
      resultCallback({ code: FAILED, error: new Error("Concurrent export limit reached") })
      return
    }
    this._inFlight++
    const done = (result) => {
      this._inFlight--
      resultCallback(result)
    }
    const fused = this._fused
    let batch
    if (fused.native !== undefined) {
      try {
        const n = fused.native
        batch = readFlat(n, items, n.fusedReadFlat, fused.mapper, fused.omit) ?? n.fusedRead(items, fused.mapper, fused.omit)
      } catch (error) {
        this._warn(error)
      }
    }
    const mapping = fused.tail.then(() => (batch === undefined ? { views: this._views(items) } : this._mapFused(batch, items)))
    // The next batch maps after this one, whatever happens to this one.
    fused.tail = mapping.then(NOOP, NOOP)
    const pending = mapping.then(
      (out) => this._sendCounted(out.bytes ?? OFFICIAL, out.bytes === undefined ? out.views : items, done),
      (error) => done({ code: FAILED, error }),
    )
    this._encoding.add(pending)
    pending.finally(() => this._encoding.delete(pending))
  }

  /** Maps and encodes a batch read by fusedRead: `{ bytes }`, or `{ views }` after a failure. */
  async _mapFused(batch, items) {
    const fused = this._fused
    // Each round maps at least one span: bounded by the batch size.
    for (let round = 0; round <= items.length; round++) {
      let out
      try {
        out = await batch.map()
      } catch (error) {
        this._warn(error)
        return { views: this._views(items) }
      }
      if (typeof out !== "number") {
        const problems = batch.problems
        if (problems !== 0) fused.processor.problems.report(problems, items[batch.problemSpan])
        return { bytes: out }
      }
      // The processor maps this span, on a copy, with the same Mapper state.
      try {
        batch.replaceAttributes(out, this._view(items[out], false).attributes)
      } catch (error) {
        this._warn(error)
        return { views: this._views(items) }
      }
    }
    return { views: this._views(items) }
  }

  /** The span as the processor leaves it, without touching it: a view with mapped attributes. */
  _view(span, omit = this._fused.omit) {
    const view = Object.create(span)
    const attrs = span.attributes
    const copy = attrs !== null && typeof attrs === "object" ? { ...attrs } : attrs
    Object.defineProperty(view, "attributes", { value: copy, enumerable: true, writable: true, configurable: true })
    this._fused.processor.onEnd(view)
    if (omit && copy !== null && typeof copy === "object") {
      delete copy["genkit:input"]
      delete copy["genkit:output"]
    }
    return view
  }

  /** Every span as the processor leaves it (the fallback: the official serializer reads these). */
  _views(items) {
    return Array.isArray(items) ? items.map((span) => this._view(span)) : items
  }

  /** Hands `bytes` (or the official serializer) to the delegate for `items`. */
  _send(bytes, items, resultCallback) {
    this._serializer.next = bytes
    try {
      super.export(items, resultCallback)
    } finally {
      this._serializer.next = OFFICIAL
    }
  }

  /** `_send` from a promise callback: a throw (the official serializer on a broken span) fails the export. */
  _sendCounted(bytes, items, done) {
    try {
      this._send(bytes, items, done)
    } catch (error) {
      done({ code: FAILED, error })
    }
  }

  _warn(error) {
    const now = Date.now()
    if (now - this._lastWarning < WARN_INTERVAL_MS) return
    this._lastWarning = now
    try {
      diag.warn(`genkit-for-maple/otlp: native encoding failed (${error?.message ?? error}); this batch was serialized by the official ProtobufTraceSerializer`)
    } catch {
      // A diag logger that throws must not fail the export.
    }
  }

  async forceFlush() {
    while (this._encoding.size > 0) await Promise.allSettled([...this._encoding])
    return super.forceFlush()
  }

  async shutdown() {
    while (this._encoding.size > 0) await Promise.allSettled([...this._encoding])
    return super.shutdown()
  }
}

const NOOP = () => {}

/**
 * `fn(nums, len, chunks, bigs, wide, bytes, ...extra)` on the batch as ./flat.js reads it (`fn` is
 * encodeOtlpFlat or fusedReadFlat); `undefined` when the binding has no `fn` or the batch is
 * refused by the JavaScript reader.
 */
function readFlat(native, items, fn, ...extra) {
  if (typeof fn !== "function") return undefined
  return flat.read(items, (nums, len, chunks, bigs, wide, bytes) => fn.call(native, nums, len, chunks, bigs, wide, bytes, ...extra))
}

/**
 * The fused options from the constructor's `genkit` and `omitGenkitInputOutput`; `undefined` when
 * fused mode is off. `genkit`: `true` (the processor's defaults) or GenkitForMaple's options
 * object, validated by the processor's own resolveOptions (a TypeError when wrong).
 */
function fusedOptions(genkit, omit) {
  if (omit !== undefined && typeof omit !== "boolean") {
    throw new TypeError(`OTLPTraceExporter: option "omitGenkitInputOutput" must be a boolean, got ${typeof omit}`)
  }
  if (genkit === undefined || genkit === false) {
    if (omit === true) throw new TypeError(`OTLPTraceExporter: option "omitGenkitInputOutput" needs the option "genkit"`)
    return undefined
  }
  if (genkit !== true && (genkit === null || typeof genkit !== "object" || Array.isArray(genkit))) {
    throw new TypeError(`OTLPTraceExporter: option "genkit" must be true or GenkitForMaple's options object`)
  }
  return { options: genkit === true ? undefined : genkit, omit: omit === true }
}

/** The processor (same options, same Mapper constructor) and the native Mapper fused mode uses. */
function createFused({ options, omit }) {
  // Lazily required: the exporter alone does not load the processor.
  const { GenkitForMaple, newMapper } = require("./processor")
  const processor = new GenkitForMaple(options)
  const native = typeof processor.native?.fusedRead === "function" ? processor.native : undefined
  // Complete mode: the processor's own Mapper (its state is shared with the spans it maps here);
  // reference mode keeps no state: a Mapper made the same way.
  const mapper = native === undefined ? undefined : (processor.rules ?? newMapper(native, processor.options))
  return { processor, native, mapper, omit, tail: Promise.resolve() }
}

module.exports = { OTLPTraceExporter }
