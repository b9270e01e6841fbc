/**
 * `genkit-for-maple/otlp`: an OTLP/HTTP protobuf trace exporter whose encoding is native (Rust,
 * opentelemetry-proto + prost), a drop-in for `OTLPTraceExporter` of
 * `@opentelemetry/exporter-trace-otlp-proto` 0.301.
 */
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base"
import type { OTLPExporterNodeConfigBase } from "@opentelemetry/otlp-exporter-base/node-http"
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace"

/**
 * Exports spans as OTLP/HTTP protobuf, like the official `OTLPTraceExporter`: the same
 * constructor options (`url`, `headers`, `compression`, `timeoutMillis`, `concurrencyLimit`,
 * `httpAgentOptions`, ...), the same `OTEL_EXPORTER_OTLP_*` and `OTEL_EXPORTER_OTLP_TRACES_*`
 * environment variables, the official delegate and HTTP transport (retries with backoff,
 * `Retry-After`, timeouts, gzip), and the same `export` / `forceFlush` / `shutdown` contract.
 *
 * Only serialization differs: `export()` reads the spans' fields (SDK 1.x, 2.x and 3.x spans) into
 * Rust on the calling thread, the `ExportTraceServiceRequest` is encoded on the libuv thread pool
 * (the same request as the official `ProtobufTraceSerializer` writes, field for field), then handed
 * to the official transport. The concurrency limit counts exports from `export()` to their result,
 * encoding included, so at most `concurrencyLimit` batches are held in memory.
 *
 * When a span cannot be read natively, or encoding fails, that batch is serialized by the official
 * `ProtobufTraceSerializer` (one `diag.warn` per minute); when the native binary does not load
 * (one `diag.warn`), every batch is, and the exporter is the official one.
 */
export declare class OTLPTraceExporter extends OTLPExporterBase<ReadableSpan[]> implements SpanExporter {
  constructor(config?: OTLPExporterNodeConfigBase)
  /** `true` when batches are encoded natively; `false` when the binary did not load. */
  readonly isNative: boolean
}
