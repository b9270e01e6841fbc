/**
 * The built-in local OTLP/HTTP receiver of genkit-for-maple (`genkit-for-maple/receiver`) and the
 * Agent Sessions view the demo prints. For local checks only; it keeps every span in memory.
 */

/** A span as the native `decodeOtlpTraces` lists it (ids as lowercase hex, times in ns as decimal strings). */
export interface DecodedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  startTimeUnixNano: string
  endTimeUnixNano: string
  status: { code: number; message: string }
  attributes: Record<string, unknown>
  resource: Record<string, unknown> | null
  scope: { name: string; version: string } | null
}

/** A running receiver. */
export interface Receiver {
  /** The OTLP endpoint, `http://127.0.0.1:<port>`; exporters append `/v1/traces`. */
  url: string
  /** The port it listens on. */
  port: number
  /** Every span received so far, in arrival order. */
  spans(): DecodedSpan[]
  /** Request counters and the reasons of rejected requests. */
  stats(): { requests: number; accepted: number; rejected: number; ignored: number; gzipped: number; errors: string[]; spans: number }
  /** Stops listening. */
  close(): Promise<void>
}

/**
 * Starts the receiver on 127.0.0.1 (a free port unless `port` is given). It accepts
 * `POST /v1/traces` with `application/x-protobuf` (optionally gzip), decodes it in Rust and answers
 * 200; a body that is not an `ExportTraceServiceRequest` gets 400. Rejects when the native binding
 * cannot be loaded (the decoder is native).
 */
export declare function startReceiver(options?: { port?: number }): Promise<Receiver>

/** Renders spans as Maple's Agent Sessions would show them: one block per conversation id, one turn per trace. */
export declare function renderSessions(spans: DecodedSpan[]): string

/** Seed 003's "Check without Maple access" over decoded spans; `ok` is false when any check fails. */
export declare function checkSessions(spans: DecodedSpan[]): {
  ok: boolean
  checks: { name: string; ok: boolean; detail: string }[]
}

/** Renders the result of {@link checkSessions} as a checklist with a verdict line. */
export declare function renderChecks(result: ReturnType<typeof checkSessions>): string

/** Groups spans into sessions and turns as Agent Sessions does. */
export declare function groupSessions(spans: DecodedSpan[]): unknown
