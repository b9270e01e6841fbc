// Demo only, imported by instrumentation.ts before it builds the SDK: when no OTLP endpoint is
// configured, start genkit-for-maple's built-in local OTLP/HTTP receiver on 127.0.0.1 (a free
// port) and point the exporter at it through OTEL_EXPORTER_OTLP_ENDPOINT. With
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, e.g. to Maple's ingest,
// nothing starts and spans go there.
import { createRequire } from "node:module"
import path from "node:path"

/** A span as the receiver decodes it (`decodeOtlpTraces` of the native binding). */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  kind: number
  startTimeUnixNano: string
  endTimeUnixNano: string
  status: { code: number; message: string }
  attributes: Record<string, unknown>
}

export interface Receiver {
  url: string
  port: number
  spans(): ReceivedSpan[]
  stats(): { requests: number; accepted: number; rejected: number; ignored: number; gzipped: number; errors: string[]; spans: number }
  close(): Promise<void>
}

export interface Verdict {
  ok: boolean
  checks: { name: string; ok: boolean; detail: string }[]
}

interface ReceiverModule {
  startReceiver(options?: { port?: number }): Promise<Receiver>
  renderSessions(spans: ReceivedSpan[]): string
  checkSessions(spans: ReceivedSpan[]): Verdict
  renderChecks(verdict: Verdict): string
}

// The receiver ships in the genkit-for-maple package (js/receiver.js, next to the processor).
const require = createRequire(import.meta.url)
const packageDir = path.dirname(require.resolve("genkit-for-maple/package.json"))
export const receiverModule = require(path.join(packageDir, "js", "receiver.js")) as ReceiverModule

const configured = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT

export const localReceiver: Receiver | undefined = configured ? undefined : await receiverModule.startReceiver()
if (localReceiver) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = localReceiver.url
process.env.OTEL_SERVICE_NAME ??= "support-agent"
