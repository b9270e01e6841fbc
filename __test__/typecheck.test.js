"use strict"
// `tsc --noEmit --strict` (the root typescript) over the public types in index.d.ts:
// - __test__/types/sdk-ok.ts: the README's instrumentation.ts and GenkitForMaple as the SpanProcessor
//   of the OpenTelemetry SDKs installed at the root (sdk-node 0.301, sdk-trace 3.x, sdk-trace-base 2.x
//   and 1.x) must type-check, and __test__/types/esm.mts, the ES-module view (default and named imports);
// - __test__/types/sdk-wrong.ts: wrong uses must fail, each on its marked line with its code;
// - examples/support-agent, when it has a tsconfig.json.
// The seed's install set (sdk-node 0.223 with sdk-trace-base 1.25) is checked by pack.test.js in a
// freshly installed app.
const { test } = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

const root = path.join(__dirname, "..")
const tsc = require.resolve("typescript/bin/tsc", { paths: [root] })
const types = path.join(__dirname, "types")

function runTsc(args, cwd = root) {
  const r = spawnSync(process.execPath, [tsc, ...args, "--pretty", "false"], { cwd, encoding: "utf8" })
  if (r.error) throw r.error
  return { status: r.status, output: `${r.stdout}${r.stderr}` }
}

/** `file(line,col): error TSnnnn: text` lines of tsc's output, for one file name. */
function errorsIn(output, fileName) {
  const errors = []
  for (const line of output.split("\n")) {
    const m = /^(.*)\((\d+),(\d+)\): error (TS\d+): /.exec(line)
    if (m && path.basename(m[1]) === fileName) errors.push({ line: Number(m[2]), code: m[4], text: line })
  }
  return errors
}

test("index.d.ts: the README's NodeSDK setup and every SDK's SpanProcessor type-check under --strict", () => {
  const { status, output } = runTsc(["-p", path.join(types, "tsconfig.json")])
  assert.equal(output.trim(), "", `tsc reported:\n${output}`)
  assert.equal(status, 0)
})

test("index.d.ts: wrong uses fail to type-check, each on its marked line", () => {
  const file = path.join(types, "sdk-wrong.ts")
  const expected = new Map()
  fs.readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      const m = /\/\/ error: (TS\d+)\s*$/.exec(text)
      if (m) expected.set(i + 1, m[1])
    })
  assert.ok(expected.size >= 8, "sdk-wrong.ts marks its wrong lines")

  const { status, output } = runTsc(["-p", path.join(types, "tsconfig.wrong.json")])
  assert.notEqual(status, 0, "tsc accepted sdk-wrong.ts")
  const errors = errorsIn(output, "sdk-wrong.ts")
  // Every error of the run is in sdk-wrong.ts (none in index.d.ts or the SDKs' types).
  assert.equal(errors.length, output.trim().split("\n").filter((l) => /error TS\d+/.test(l)).length, output)
  const actual = new Map()
  for (const e of errors) if (!actual.has(e.line)) actual.set(e.line, e.code)
  assert.deepEqual(
    [...actual].sort((a, b) => a[0] - b[0]),
    [...expected].sort((a, b) => a[0] - b[0]),
    `tsc's errors (line, code) differ from the marked ones:\n${output}`,
  )
})

const example = path.join(root, "examples", "support-agent")
const exampleState = !fs.existsSync(example)
  ? "examples/support-agent does not exist yet"
  : !fs.existsSync(path.join(example, "tsconfig.json"))
    ? "examples/support-agent has no tsconfig.json yet"
    : undefined

test("examples/support-agent type-checks under tsc --noEmit --strict", { skip: exampleState }, () => {
  // Its dependencies (genkit-for-maple as file:../.., genkit, the SDK) come from its own node_modules;
  // a fresh clone has none until `npm run demo`, so install them from its lock file first.
  if (!fs.existsSync(path.join(example, "node_modules"))) {
    const lock = fs.existsSync(path.join(example, "package-lock.json"))
    const npm = spawnSync("npm", [lock ? "ci" : "install", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: example,
      encoding: "utf8",
      shell: process.platform === "win32",
    })
    assert.equal(npm.status, 0, `npm ${lock ? "ci" : "install"} in examples/support-agent failed:\n${npm.stdout}${npm.stderr}`)
  }
  const { status, output } = runTsc(["-p", path.join(example, "tsconfig.json"), "--noEmit", "--strict"], example)
  assert.equal(output.trim(), "", `tsc reported:\n${output}`)
  assert.equal(status, 0)
})
