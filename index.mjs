// genkit-for-maple as an ES module: `import { GenkitForMaple } from "genkit-for-maple"`.
// A plain import of the CommonJS entry (no createRequire(import.meta.url)): Node links it through
// its CommonJS interop, and bundlers (esbuild, webpack, Rollup/Vite, Turbopack) follow it.
import cjs from "./index.js"

export const GenkitForMaple = cjs.GenkitForMaple
export const mapSpanJs = cjs.mapSpanJs
export const NoContentSpanExporter = cjs.NoContentSpanExporter
export const NoContentSpanProcessor = cjs.NoContentSpanProcessor
export const CONTENT_ATTRIBUTES = cjs.CONTENT_ATTRIBUTES
export default cjs
