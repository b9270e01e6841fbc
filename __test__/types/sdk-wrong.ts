// Wrong uses of the public types. __test__/typecheck.test.js runs `tsc --noEmit --strict` over this
// file and asserts that tsc reports an error on exactly the lines marked `// error: TSnnnn`
// (with that code), and on no other line: the types must reject these, or the typecheck test
// of sdk-ok.ts proves nothing.
import { NodeSDK } from "@opentelemetry/sdk-node"
import { GenkitForMaple, mapSpanJs } from "genkit-for-maple"
import { OTLPTraceExporter } from "genkit-for-maple/otlp"

const processor = new GenkitForMaple()

new GenkitForMaple(42) // error: TS2559
new GenkitForMaple("complete") // error: TS2559
new GenkitForMaple({ mode: "full" }) // error: TS2322
new GenkitForMaple({ colour: "blue" }) // error: TS2353
new GenkitForMaple({ captureContent: "yes" }) // error: TS2322
new GenkitForMaple({ maxContentBytes: "1mb" }) // error: TS2322
new GenkitForMaple({ captureContnet: true }) // error: TS2561
processor.flush() // error: TS2339
processor.isNative = false // error: TS2540
processor.onEnd(42) // error: TS2345
const notAPromise: string = processor.shutdown() // error: TS2322
const flags: string = mapSpanJs({}) // error: TS2322
new NodeSDK({ spanProcessors: [GenkitForMaple] }) // error: TS2739
new OTLPTraceExporter({ genkit: { mode: "full" } }) // error: TS2322
new OTLPTraceExporter({ genkit: "yes" }) // error: TS2322

export { notAPromise, flags }
