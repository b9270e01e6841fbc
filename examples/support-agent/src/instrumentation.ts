// instrumentation.ts, as in Maple's guide "Trace Genkit agents with OpenTelemetry", with the
// genkit-for-maple package as the span processor and its native OTLP exporter (a drop-in for the
// one of @opentelemetry/exporter-trace-otlp-proto that encodes off the event loop). main.ts
// imports it first.
import "./local-otlp.js" // demo only: the local receiver when no OTLP endpoint is set

import { NodeSDK } from "@opentelemetry/sdk-node"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { disableGenkitOTelInitialization } from "genkit/tracing"
import { GenkitForMaple } from "genkit-for-maple"
import { OTLPTraceExporter } from "genkit-for-maple/otlp"

export const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter())

// Reads OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_*
export const sdk = new NodeSDK({ spanProcessors: [new GenkitForMaple(), spanProcessor] })

// `genkit start` sets GENKIT_ENV=dev: leave the Developer UI's own tracing alone there
if (process.env.GENKIT_ENV !== "dev") {
  disableGenkitOTelInitialization()
  sdk.start()
}
