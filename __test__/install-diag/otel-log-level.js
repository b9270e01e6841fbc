// A user's setup that only sets OTEL_LOG_LEVEL: GenkitForMaple is built before NodeSDK installs the
// logger, so the fallback warning must come at the first span, once. Prints the outcome as JSON.
const { GenkitForMaple } = require(process.env.GFM_PACKAGE)
const processor = new GenkitForMaple()
const { NodeSDK } = require("@opentelemetry/sdk-node")
const { SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base")
const { trace } = require("@opentelemetry/api")
const exported = []
const exporter = { export: (spans, done) => { exported.push(...spans); done({ code: 0 }) }, shutdown: () => Promise.resolve(), forceFlush: () => Promise.resolve() }
const sdk = new NodeSDK({ spanProcessors: [processor, new SimpleSpanProcessor(exporter)], instrumentations: [] })
sdk.start()
for (let i = 0; i < 3; i++) {
  const span = trace.getTracer("install-diag").startSpan(`supportChat ${i}`)
  span.setAttributes({ "genkit:type": "action", "genkit:metadata:subtype": "flow", "genkit:name": "supportChat" })
  span.end()
}
sdk.shutdown().then(() => process.stdout.write(JSON.stringify({ native: processor.isNative, ops: exported.map((s) => s.attributes["gen_ai.operation.name"]) })))
