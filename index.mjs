// genkit-for-maple as an ES module: `import { GenkitForMaple } from "genkit-for-maple"`.
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const cjs = require("./index.js")

export const GenkitForMaple = cjs.GenkitForMaple
export const mapSpanJs = cjs.mapSpanJs
export default cjs
