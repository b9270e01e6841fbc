// Demo only, imported by instrumentation.ts before it builds the SDK: when no OTLP endpoint is
// configured, start genkit-for-maple's built-in local OTLP/HTTP receiver on 127.0.0.1 (a free
// port) and point the exporter at it through OTEL_EXPORTER_OTLP_ENDPOINT. With
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set, e.g. to Maple's ingest,
// nothing starts and spans go there.
import * as receiverModule from "genkit-for-maple/receiver"
import type { Receiver } from "genkit-for-maple/receiver"

// The receiver ships in the genkit-for-maple package (js/receiver.js, next to the processor).
export { receiverModule }

const configured = process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT

export const localReceiver: Receiver | undefined = configured ? undefined : await receiverModule.startReceiver()
if (localReceiver) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = localReceiver.url
process.env.OTEL_SERVICE_NAME ??= "support-agent"
