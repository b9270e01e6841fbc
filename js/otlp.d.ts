/**
 * `genkit-for-maple/otlp`: an OTLP/HTTP protobuf trace exporter whose encoding is native (Rust,
 * opentelemetry-proto + prost), a drop-in for `OTLPTraceExporter` of
 * `@opentelemetry/exporter-trace-otlp-proto` 0.301.
 */
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base"
import type { OTLPExporterNodeConfigBase } from "@opentelemetry/otlp-exporter-base/node-http"
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace"
import type { GenkitForMapleOptions } from "../index"

/** The official exporter's configuration, plus fused mode (genkit-for-maple). */
export interface OTLPTraceExporterConfig extends OTLPExporterNodeConfigBase {
  /**
   * Fused mode: `true` (`GenkitForMaple`'s defaults) or `GenkitForMaple`'s options object (`mode`,
   * `cost`, and every option `GenkitForMaple` takes, validated by the same code: a `TypeError` for
   * an unknown option or a wrong value). This exporter then writes the `gen_ai.*` attributes of
   * Genkit's flow, agent, model and tool spans into the request while encoding, on the libuv
   * thread pool, straight from `genkit:input` / `genkit:output`: no `GenkitForMaple` in the
   * provider, no `gen_ai.*` JavaScript string, and the spans themselves are not changed (other
   * exporters and processors see them as Genkit wrote them). The request equals, field for field,
   * what `GenkitForMaple` with the same options followed by the official exporter sends (attribute
   * order included: the span's own attributes, then the `gen_ai.*` ones in the processor's order;
   * a key the span already had is overwritten in place). Spans only JavaScript maps exactly (lone
   * surrogate escapes in the JSON, numbers such as `1e400`, values above the hand-off size,
   * non-string names) are mapped by a `GenkitForMaple` held by the exporter, on a copy. Do not
   * also put `GenkitForMaple` in the provider (its spans would be mapped twice). Default: off.
   */
  genkit?: boolean | GenkitForMapleOptions
  /**
   * With `genkit`: leave `genkit:input` and `genkit:output` out of this exporter's requests (the
   * transcript is then sent once, as `gen_ai.*`); the spans keep them. A `TypeError` without
   * `genkit`. Default `false`.
   */
  omitGenkitInputOutput?: boolean
}

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
  /** @throws TypeError for a wrong `genkit` or `omitGenkitInputOutput` option. */
  constructor(config?: OTLPTraceExporterConfig)
  /** `true` when batches are encoded natively; `false` when the binary did not load. */
  readonly isNative: boolean
}
