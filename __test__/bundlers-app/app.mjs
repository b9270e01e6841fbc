// A user's app bundled by esbuild, webpack or Rollup/Vite (__test__/bundlers-*.test.js): maps the
// real Genkit spans in the JSON file named by GFM_SPANS and prints the outcome as one JSON line.
import { readFileSync } from "node:fs"
import { diag, DiagLogLevel } from "@opentelemetry/api"
import { GenkitForMaple } from "genkit-for-maple"

const logs = []
diag.setLogger({ error: (m) => logs.push(m), warn: (m) => logs.push(m), info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN)
const processor = new GenkitForMaple({ mode: "reference", scrubSecrets: false }) /* compared with seed 000: without the binding, secret scrubbing (on by default) withholds content */
const rows = JSON.parse(readFileSync(process.env.GFM_SPANS, "utf8"))
let equal = 0
for (const row of rows) {
  const attributes = structuredClone(row.attributes)
  processor.onEnd({ name: row.name, attributes })
  if (JSON.stringify(attributes) === JSON.stringify(row.expected_attributes)) equal++
}
console.log(JSON.stringify({ native: processor.isNative, spans: rows.length, equal, logs }))
