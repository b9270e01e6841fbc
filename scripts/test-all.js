#!/usr/bin/env node
"use strict"
// Every test of the project, in order; exits non-zero when any step fails. `npm test` runs it.
// Steps: release build of the addon (scripts/build.js), cargo fmt/clippy/test, node's test runner over __test__/,
// then the smoke runs (benchmark, fuzzing) that only check that they work.
// Each step's output goes to the terminal as it comes; the last lines of every failed step are printed
// again at the end, so a log that keeps only its end still shows why a step failed.
const { spawn } = require("node:child_process")
const path = require("node:path")

const root = path.join(__dirname, "..")
const smoke = process.env.CI === "true" || process.argv.includes("--smoke")
/** How many of a failed step's last output lines the summary repeats. */
const TAIL_LINES = 60

const steps = [
  ["build the native addon (release; linux-x64-gnu against glibc 2.17: scripts/build.js)", process.execPath, ["scripts/build.js"]],
  ["cargo fmt --check", "cargo", ["fmt", "--all", "--check"]],
  ["cargo clippy -D warnings", "cargo", ["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]],
  ["cargo test", "cargo", ["test", "--workspace"]],
  ["node --test __test__/", process.execPath, ["--test", "--test-concurrency=1", "__test__/"]],
]
for (const extra of require("./test-steps.json")) steps.push([extra.name, extra.cmd === "node" ? process.execPath : extra.cmd, extra.args])

/** Runs one step with its output passed through; resolves to `{ status, tail }` (the last lines). */
function run(cmd, args) {
  return new Promise((resolve) => {
    const env = { ...process.env, GENKIT_FOR_MAPLE_SMOKE: smoke ? "1" : process.env.GENKIT_FOR_MAPLE_SMOKE ?? "1" }
    const child = spawn(cmd, args, { cwd: root, stdio: ["inherit", "pipe", "pipe"], env })
    let tail = []
    const partial = { out: "", err: "" }
    const keep = (chunk, stream, which) => {
      stream.write(chunk)
      const lines = (partial[which] + chunk.toString("utf8")).split("\n")
      partial[which] = lines.pop()
      tail = tail.concat(lines).slice(-TAIL_LINES)
    }
    child.stdout.on("data", (c) => keep(c, process.stdout, "out"))
    child.stderr.on("data", (c) => keep(c, process.stderr, "err"))
    child.on("error", (error) => resolve({ status: null, tail: [...tail, String(error)] }))
    child.on("close", (status, signal) => {
      const rest = [partial.out, partial.err].filter((line) => line !== "")
      resolve({ status, signal, tail: tail.concat(rest).slice(-TAIL_LINES) })
    })
  })
}

async function main() {
  const failed = []
  for (const [name, cmd, args] of steps) {
    console.log(`\n=== ${name}: ${cmd} ${args.join(" ")}`)
    const started = Date.now()
    const { status, signal, tail } = await run(cmd, args)
    const ok = status === 0
    console.log(`=== ${ok ? "ok" : "FAILED"}: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
    if (!ok) failed.push({ name, status, signal, tail })
  }
  console.log(`\n${steps.length - failed.length} passed, ${failed.length} failed`)
  if (failed.length > 0) {
    for (const f of failed) {
      console.log(`\n--- the last ${f.tail.length} lines of the failed step "${f.name}" (exit ${f.status ?? f.signal}):`)
      for (const line of f.tail) console.log(line)
    }
    console.log(`\nfailed steps: ${failed.map((f) => f.name).join("; ")}`)
    process.exit(1)
  }
}
main()
