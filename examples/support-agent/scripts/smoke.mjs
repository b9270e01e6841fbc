// A step of the repository's `npm test` (scripts/test-steps.json): runs the demo as `npm run demo`
// does, against the built-in local receiver with the local model, and fails unless it exits 0 with
// both sessions shown, every check passed and no export error on stderr. Installs the example's
// dependencies from its lock file first when they are missing.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import path from "node:path"
import { fileURLToPath } from "node:url"

const example = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")

if (!existsSync(path.join(example, "node_modules"))) {
  const npm = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: example, stdio: "inherit", shell: process.platform === "win32" })
  if (npm.status !== 0) {
    console.error("npm ci in examples/support-agent failed")
    process.exit(1)
  }
}

const env = { ...process.env }
for (const key of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "GEMINI_API_KEY", "GOOGLE_API_KEY"]) delete env[key]
const tsx = createRequire(path.join(example, "package.json")).resolve("tsx/cli")
const run = spawnSync(process.execPath, [tsx, "src/main.ts"], { cwd: example, env, encoding: "utf8", timeout: 300_000 })
process.stdout.write(run.stdout ?? "")
process.stderr.write(run.stderr ?? "")

const problems = []
if (run.status !== 0) problems.push(`the demo exited with ${run.status ?? run.signal ?? run.error}`)
for (const session of ["chat-ada-1001", "chat-ben-2002"]) {
  if (!new RegExp(`^Session ${session} +\\(agent supportChat; 2 turns;`, "m").test(run.stdout ?? "")) problems.push(`no two-turn session ${session}`)
}
if (!(run.stdout ?? "").includes("Verdict: every check passed.")) problems.push("the checklist did not pass")
// Complete mode (the default): cost, cache/reasoning tokens and tool call ids are shown.
if (!/^Session chat-ada-1001 .*; cost \$\d+\.\d{6}\)$/m.test(run.stdout ?? "")) problems.push("no session cost")
if (!/^ +chat gcp\.gemini gemini-2\.5-flash {2}tokens in \d+ \/ out \d+ \((cache read \d+, )?reasoning \d+\) {2}cost \$/m.test(run.stdout ?? "")) problems.push("no chat line with reasoning tokens and cost")
if (!/cache read \d+/.test(run.stdout ?? "")) problems.push("no cache read tokens")
if (!/^ +execute_tool \w+\(.*\) \[call_\d+\] /m.test(run.stdout ?? "")) problems.push("no tool call id on execute_tool lines")
if (/Failed to export|OTLPExporterError|\b401\b/.test(run.stderr ?? "")) problems.push("export errors on stderr")
if (problems.length > 0) {
  console.error(`\ndemo smoke run FAILED: ${problems.join("; ")}`)
  process.exit(1)
}
console.log("\ndemo smoke run passed")
