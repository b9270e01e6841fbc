// Type-checked by __test__/pack.test.js (tsc --noEmit --strict) in the app installed from the
// tarball with the seed's command: GenkitForMaple is the SpanProcessor that the installed
// @opentelemetry/sdk-node and @opentelemetry/sdk-trace-base expect, whatever versions npm chose.
// Must report no error at all.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { NodeSDK } from "@opentelemetry/sdk-node"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { disableGenkitOTelInitialization } from "genkit/tracing"
import { GenkitForMaple, type GenkitForMapleOptions } from "genkit-for-maple"

type NodeSdkSpanProcessors = NonNullable<NonNullable<ConstructorParameters<typeof NodeSDK>[0]>["spanProcessors"]>

const options: GenkitForMapleOptions = {}
export const forNodeSdk: NodeSdkSpanProcessors = [new GenkitForMaple(options)]
export const forSdkTraceBase: SpanProcessor = new GenkitForMaple()
export const sdk = new NodeSDK({ spanProcessors: [new GenkitForMaple(), ...forNodeSdk] })
export const exporter = new OTLPTraceExporter()
export const native: boolean = new GenkitForMaple().isNative

if (process.env.GENKIT_ENV !== "dev") {
  disableGenkitOTelInitialization()
  sdk.start()
}
