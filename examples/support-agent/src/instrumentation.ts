// instrumentation.ts, as in Maple's guide "Trace Genkit agents with OpenTelemetry", with the
// genkit-for-maple package's native OTLP exporter in fused mode (`genkit: true`): it writes the
// gen_ai.* attributes while encoding, off the event loop, so no GenkitForMaple span processor is
// needed in the provider. main.ts imports it first.
import "./local-otlp.js" // demo only: the local receiver when no OTLP endpoint is set

import { NodeSDK } from "@opentelemetry/sdk-node"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { disableGenkitOTelInitialization } from "genkit/tracing"
import { OTLPTraceExporter } from "genkit-for-maple/otlp"

// genkit: true maps Genkit spans to gen_ai.* in the exporter (GenkitForMaple's options also work here)
export const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ genkit: true }))

// Reads OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_*
export const sdk = new NodeSDK({ spanProcessors: [spanProcessor] })

// `genkit start` sets GENKIT_ENV=dev: leave the Developer UI's own tracing alone there
if (process.env.GENKIT_ENV !== "dev") {
  disableGenkitOTelInitialization()
  sdk.start()
}
