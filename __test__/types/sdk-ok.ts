// Type-checked by __test__/typecheck.test.js with `tsc --noEmit --strict` against the OpenTelemetry
// SDKs installed at the root: the README's instrumentation.ts (sdk-node 0.301 with sdk-trace-base 2.x
// and the proto exporter), and GenkitForMaple as the SpanProcessor of sdk-trace 3.x, sdk-trace-base 2.x
// and sdk-trace-base 1.x (`sdk-trace-base-1`). The seed's install set (sdk-node 0.223, sdk-trace-base
// 1.25) is type-checked in the packed app of __test__/pack.test.js.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { NodeSDK } from "@opentelemetry/sdk-node"
import * as trace3 from "@opentelemetry/sdk-trace"
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import {
  CONTENT_ATTRIBUTES,
  GenkitForMaple,
  type GenkitForMapleOptions,
  mapSpanJs,
  NoContentSpanExporter,
  NoContentSpanProcessor,
  type SpanWithAttributes,
} from "genkit-for-maple"
import * as trace1 from "sdk-trace-base-1"

// The README's instrumentation.ts.
export const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter())
export const sdk = new NodeSDK({ spanProcessors: [new GenkitForMaple(), spanProcessor] })

// The same as the brief writes it, inline.
export const sdkInline = new NodeSDK({
  spanProcessors: [new GenkitForMaple(), new BatchSpanProcessor(new OTLPTraceExporter())],
})

const options: GenkitForMapleOptions = {}
export const reference = new GenkitForMaple({ mode: "reference", cost: false })
export const complete = new GenkitForMaple({ mode: "complete" })
const processor = new GenkitForMaple(options)
export const native: boolean = processor.isNative
export const flushed: Promise<void> = processor.forceFlush().then(() => processor.shutdown())

// SpanProcessor of every SDK line.
export const asBase2: SpanProcessor = processor
export const provider2 = new BasicTracerProvider({ spanProcessors: [processor, spanProcessor] })
export const asTrace3: trace3.SpanProcessor = new GenkitForMaple()
export const provider3 = new trace3.TracerProvider({
  spanProcessors: [new GenkitForMaple(), new trace3.SimpleSpanProcessor({ exporter: new trace3.InMemorySpanExporter() })],
})
export const asBase1: trace1.SpanProcessor = new GenkitForMaple()
const provider1 = new trace1.BasicTracerProvider()
provider1.addSpanProcessor(new GenkitForMaple())
provider1.addSpanProcessor(new trace1.SimpleSpanProcessor(new trace1.InMemorySpanExporter()))

// A hand-made span and the pure-JS mapping.
const span: SpanWithAttributes = { name: "genkit:flow", attributes: { "genkit:metadata:subtype": "flow", "genkit:name": "f" } }
processor.onEnd(span)
processor.onStart(span, undefined)
export const flags: number = mapSpanJs({ "genkit:metadata:subtype": "flow", "genkit:name": "f" })

// The native exporter (genkit-for-maple/otlp) where the official one goes: the README's snippet,
// the official constructor options, SDK 2.x and 3.x span processors, and as a SpanExporter.
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base"
import { OTLPTraceExporter as NativeOTLPTraceExporter } from "genkit-for-maple/otlp"
export const nativeSpanProcessor = new BatchSpanProcessor(new NativeOTLPTraceExporter())
export const nativeSdk = new NodeSDK({ spanProcessors: [new GenkitForMaple(), nativeSpanProcessor] })
const nativeExporter = new NativeOTLPTraceExporter({
  url: "http://127.0.0.1:4318/v1/traces",
  headers: { Authorization: "Bearer x" },
  compression: CompressionAlgorithm.GZIP,
  timeoutMillis: 10_000,
  concurrencyLimit: 4,
})
export const nativeIsNative: boolean = nativeExporter.isNative
export const nativeTrace3 = new trace3.BatchSpanProcessor({ exporter: nativeExporter })
export const nativeFlushed: Promise<void> = nativeExporter.forceFlush().then(() => nativeExporter.shutdown())
// Content control (issue 11): capture modes, and a second backend without content.
export const quiet = [
  new GenkitForMaple({ captureContent: false }),
  new GenkitForMaple({ captureContent: "NO_CONTENT" }),
  new GenkitForMaple({ captureContent: "span_and_event" }),
  new GenkitForMaple({ mode: "reference", scrubSecrets: true, secretPatterns: ["INTERNAL-[0-9]{6}"], maxContentBytes: 100_000 }),
  new GenkitForMaple({ maxContentBytes: Infinity, scrubSecrets: false }),
]
export const contentKeys: readonly string[] = CONTENT_ATTRIBUTES
export const sdkTwoBackends = new NodeSDK({
  spanProcessors: [
    new GenkitForMaple(),
    new BatchSpanProcessor(new OTLPTraceExporter()),
    new BatchSpanProcessor(new NoContentSpanExporter(new OTLPTraceExporter(), { dropGenkitIO: true })),
    new NoContentSpanProcessor(new BatchSpanProcessor(new OTLPTraceExporter())),
  ],
})
export const provider3NoContent = new trace3.TracerProvider({
  spanProcessors: [
    new GenkitForMaple(),
    new trace3.SimpleSpanProcessor({ exporter: new NoContentSpanExporter(new trace3.InMemorySpanExporter()) }),
  ],
})
provider1.addSpanProcessor(new trace1.SimpleSpanProcessor(new NoContentSpanExporter(new trace1.InMemorySpanExporter())))
// Fused mode (the README's snippet): GenkitForMaple's options in the exporter.
export const fusedSpanProcessor = new BatchSpanProcessor(new NativeOTLPTraceExporter({ genkit: true }))
export const fusedSdk = new NodeSDK({ spanProcessors: [fusedSpanProcessor] })
export const fusedReference = new NativeOTLPTraceExporter({ genkit: { mode: "reference", cost: false }, omitGenkitInputOutput: true, url: "http://127.0.0.1:4318/v1/traces" })
export const fusedQuiet = new NativeOTLPTraceExporter({ genkit: { captureContent: "NO_CONTENT", scrubSecrets: true, maxContentBytes: 65_536 } })
