// The README's instrumentation.ts at run time, exporting to stdout instead of OTLP: one
// `SPAN {"name","attributes"}` line per ended span, after GenkitForMaple's onEnd ran. Mode
// "reference", so that every span can be compared with what seed 000's processor writes (complete
// mode, the default, is tested on the same real spans in __test__/complete-*.test.js).
import { NodeSDK } from "@opentelemetry/sdk-node"
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { disableGenkitOTelInitialization } from "genkit/tracing"
import { GenkitForMaple } from "genkit-for-maple"

const stdoutExporter = {
  export(spans, done) {
    for (const span of spans) {
      process.stdout.write(`SPAN ${JSON.stringify({ name: span.name, attributes: span.attributes })}\n`)
    }
    done({ code: 0 })
  },
  shutdown() {
    return Promise.resolve()
  },
  forceFlush() {
    return Promise.resolve()
  },
}

export const processor = new GenkitForMaple({ mode: "reference" })
export const sdk = new NodeSDK({ spanProcessors: [processor, new SimpleSpanProcessor(stdoutExporter)] })

disableGenkitOTelInitialization()
sdk.start()
