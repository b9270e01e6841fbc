/**
 * The built-in local OTLP/HTTP receiver of genkit-for-maple (`genkit-for-maple/receiver`) and the
 * Agent Sessions view the demo prints. For local checks only; it keeps every span in memory.
 */

/**
 * A decoded span (ids as lowercase hex, times in ns as decimal strings). `resource` and `scope` are
 * shared by the spans of one `ResourceSpans` / `ScopeSpans` (the same objects, not copies).
 */
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
  /** Request counters and the reasons of the last 100 rejected requests. */
  stats(): { requests: number; accepted: number; rejected: number; ignored: number; gzipped: number; errors: string[]; spans: number }
  /** Stops listening. */
  close(): Promise<void>
}

/** Bounds on one request; a request over any of them is answered 413 with the reason. */
export interface ReceiverOptions {
  /** The port to listen on (default: a free port). */
  port?: number
  /** Largest request body, compressed or not, in bytes (default: 32 MiB). */
  maxBodyBytes?: number
  /** Largest body after gzip decompression, in bytes (zlib's `maxOutputLength`; default: 32 MiB). */
  maxDecodedBytes?: number
  /** Most spans in one request, counted on the wire before decoding (default: 50,000). */
  maxSpans?: number
  /** Most protobuf messages (spans, key-values, values, events, links) in one request (default: 1,000,000). */
  maxElements?: number
}

/**
 * Starts the receiver on 127.0.0.1 (a free port unless `port` is given). It accepts
 * `POST /v1/traces` with `application/x-protobuf` (optionally gzip), decodes it in Rust and answers
 * 200. Every failure is an answer whose body is the reason as text: 400 for a body that is not an
 * `ExportTraceServiceRequest` (or bad gzip, or nested deeper than 100 messages), 413 for a request
 * over a bound of {@link ReceiverOptions}, 415 for another content type or encoding, 404/405 for
 * other paths and methods; no request body can throw out of the receiver, and the next request is
 * served. The spans of one `ResourceSpans` share its `resource` and `scope` objects. Rejects when
 * the native binding cannot be loaded (the decoder is native).
 */
export declare function startReceiver(options?: ReceiverOptions): Promise<Receiver>

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
