// genkit-for-maple/otlp as an ES module: `import { OTLPTraceExporter } from "genkit-for-maple/otlp"`
// (the CommonJS class itself, so both module systems share one class). A plain import of the
// CommonJS file (no createRequire(import.meta.url)): Node links it through its CommonJS interop, and
// bundlers (webpack, Turbopack, esbuild, Rollup/Vite) follow it; webpack baked the build machine's
// path into a createRequire call, which failed at run time.
import cjs from "./otlp.js"

export const OTLPTraceExporter = cjs.OTLPTraceExporter
