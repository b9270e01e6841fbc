// genkit-for-maple/otlp as an ES module: `import { OTLPTraceExporter } from "genkit-for-maple/otlp"`
// (the CommonJS class itself, so both module systems share one class).
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const cjs = require("./otlp.js")

export const OTLPTraceExporter = cjs.OTLPTraceExporter
