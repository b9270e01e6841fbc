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
    const options = convertLegacyHttpOptions(config, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" })
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
  }

  /** Whether batches are encoded natively (`false`: the official serializer runs). */
  get isNative() {
    return this._native !== undefined
  }

  export(items, resultCallback) {
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
      encoding = native.encodeOtlpTraces(items)
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

module.exports = { OTLPTraceExporter }
