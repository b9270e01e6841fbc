const { context, trace } = require("@opentelemetry/api")
const sdk2 = require("@opentelemetry/sdk-trace-base")
const native = require("/work/wt-i8/binding.js")
const { load } = require("/work/wt-i8/__test__/helpers/fixtures")
const rows = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
const exporter = new sdk2.InMemorySpanExporter()
const provider = new sdk2.BasicTracerProvider({ spanProcessors: [new sdk2.SimpleSpanProcessor(exporter)] })
const tracer = provider.getTracer("genkit", "1.42.0")
const mode = process.argv[2]
for (const r of rows) { const s = tracer.startSpan(r.name ?? "x"); if (mode === "attrs") s.setAttributes(r.attributes); s.end() }
const spans = exporter.getFinishedSpans()
;(async () => {
  let read = 0n
  for (let i = 0; i < 400; i++) { const t = process.hrtime.bigint(); const p = native.encodeOtlpTraces(spans); read += process.hrtime.bigint() - t; await p }
  console.log(mode, "native read us/span", Number(read) / 400e3 / spans.length)
})()
