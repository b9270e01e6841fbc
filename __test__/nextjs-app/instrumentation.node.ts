// The README's setup: GenkitForMaple before the exporting processor, the native OTLP exporter.
import { diag, DiagConsoleLogger, DiagLogLevel } from "@opentelemetry/api"
import { NodeSDK } from "@opentelemetry/sdk-node"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { disableGenkitOTelInitialization } from "genkit/tracing"
import { GenkitForMaple } from "genkit-for-maple"
import { OTLPTraceExporter } from "genkit-for-maple/otlp"

diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN)
// scrubSecrets: false: the test compares the transcript on the pure-JS path too, where secret
// scrubbing (on by default) withholds content.
const processor = new GenkitForMaple({ mode: "reference", scrubSecrets: false })
// The route reports which path runs.
;(globalThis as { __genkitForMaple?: GenkitForMaple }).__genkitForMaple = processor
export const sdk = new NodeSDK({
  spanProcessors: [processor, new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 50 })],
})
disableGenkitOTelInitialization()
sdk.start()
