#!/usr/bin/env node
"use strict"
// Every test of the project, in order; exits non-zero when any step fails. `npm test` runs it.
// Steps: release build of the addon (scripts/build.js), cargo fmt/clippy/test, node's test runner over __test__/,
// then the smoke runs (benchmark, fuzzing) that only check that they work.
const { spawnSync } = require("node:child_process")
const path = require("node:path")

const root = path.join(__dirname, "..")
const smoke = process.env.CI === "true" || process.argv.includes("--smoke")

const steps = [
  ["build the native addon (release; linux-x64-gnu against glibc 2.17: scripts/build.js)", process.execPath, ["scripts/build.js"]],
  ["cargo fmt --check", "cargo", ["fmt", "--all", "--check"]],
  ["cargo clippy -D warnings", "cargo", ["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]],
  ["cargo test", "cargo", ["test", "--workspace"]],
  ["node --test __test__/", process.execPath, ["--test", "--test-concurrency=1", "__test__/"]],
]
for (const extra of require("./test-steps.json")) steps.push([extra.name, extra.cmd === "node" ? process.execPath : extra.cmd, extra.args])

const failed = []
for (const [name, cmd, args] of steps) {
  console.log(`\n=== ${name}: ${cmd} ${args.join(" ")}`)
  const started = Date.now()
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, GENKIT_FOR_MAPLE_SMOKE: smoke ? "1" : process.env.GENKIT_FOR_MAPLE_SMOKE ?? "1" } })
  const ok = r.status === 0
  console.log(`=== ${ok ? "ok" : "FAILED"}: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
  if (!ok) failed.push(name)
}
console.log(`\n${steps.length - failed.length} passed, ${failed.length} failed`)
if (failed.length > 0) {
  console.log(`failed steps: ${failed.join("; ")}`)
  process.exit(1)
}
