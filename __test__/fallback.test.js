"use strict"
// Fallback (issue 4): when the native binary cannot be loaded, the pure-JS processor runs, with
// exactly one diag warning (however many processors are created), and the corpus still maps to
// expected_attributes. Simulated in child processes: (1) a require hook makes binding.js throw;
// (2) the package copied without its .node file.
const test = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { spawnSync } = require("node:child_process")

const root = path.join(__dirname, "..")
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gfm-fallback-"))

// The child: diag logger capturing, console spied, two processors, the corpus and the adversarial cases.
const child = (pkg) => `
const { diag, DiagLogLevel } = require("@opentelemetry/api")
const logs = []
diag.setLogger({ error: (m) => logs.push(["error", m]), warn: (m) => logs.push(["warn", m]), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
const consoleCalls = []
for (const m of ["log", "warn", "error", "info", "debug"]) console[m] = (...a) => consoleCalls.push(m)
const { GenkitForMaple } = require(${JSON.stringify(pkg)})
const { load } = require(${JSON.stringify(path.join(__dirname, "helpers", "fixtures.js"))})
const a = new GenkitForMaple({ mode: "reference", scrubSecrets: false }), b = new GenkitForMaple({ mode: "reference", scrubSecrets: false })
// Issue 11: without the binding there is no secret scrubber: with scrubbing on (the default) no
// content attribute is written, never an unscrubbed one; every other attribute is.
const scrubbing = new GenkitForMaple({ mode: "reference" })
const CONTENT = ["gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]
let contentWritten = 0, otherMismatches = 0
const rows = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
let mismatches = 0
for (const p of [a, b]) for (const row of rows) {
  const attrs = structuredClone(row.attributes)
  p.onEnd({ attributes: attrs, name: row.name })
  if (JSON.stringify(attrs) !== JSON.stringify(row.expected_attributes)) mismatches++
}
for (const row of rows) {
  const attrs = structuredClone(row.attributes)
  scrubbing.onEnd({ attributes: attrs, name: row.name })
  contentWritten += CONTENT.filter((k) => k in attrs).length
  const expected = Object.fromEntries(Object.entries(row.expected_attributes).filter(([k]) => !CONTENT.includes(k)))
  if (JSON.stringify(attrs) !== JSON.stringify(expected)) otherMismatches++
}
let threw = 0
for (const c of load("adversarial-dev.jsonl")) try { a.onEnd({ attributes: structuredClone(c.attributes), name: c.id }) } catch { threw++ }
process.stdout.write(JSON.stringify({ native: [a.isNative, b.isNative], mismatches, contentWritten, otherMismatches, mapped: 2 * rows.length, threw, logs: logs.filter(([, m]) => m.includes("native binding unavailable")), consoleCalls }))
`

function run(args, env = {}) {
  const r = spawnSync(process.execPath, args, { cwd: tmp, encoding: "utf8", env: { ...process.env, ...env, GENKIT_FOR_MAPLE_FORCE_JS: "" } })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function check(result, reason) {
  assert.deepStrictEqual(result.native, [false, false])
  assert.equal(result.mismatches, 0)
  assert.equal(result.contentWritten, 0, "no content without a scrubber")
  assert.equal(result.otherMismatches, 0)
  assert.equal(result.mapped, 312)
  assert.equal(result.threw, 0)
  assert.equal(result.logs.length, 1, "exactly one diag warning")
  assert.equal(result.logs[0][0], "warn")
  assert.match(result.logs[0][1], reason)
  assert.match(result.logs[0][1], /no secret scrubber: while scrubSecrets is on \(the default\) it writes no content attributes/)
  assert.deepStrictEqual(result.consoleCalls, [])
}

test("binding.js throws on require (a corrupt or incompatible binary): pure JS, one diag warning", () => {
  const hook = path.join(tmp, "break-binding.js")
  fs.writeFileSync(
    hook,
    `const Module = require("node:module")
const load = Module._load
Module._load = function (request, parent, isMain) {
  if (/binding(\\.js)?$/.test(request) && parent && /[\\\\/]js[\\\\/](processor|load)\\.js$/.test(parent.filename)) {
    throw new Error("simulated: invalid ELF header")
  }
  return load.apply(this, arguments)
}`,
  )
  const script = path.join(tmp, "child-hook.js")
  fs.writeFileSync(script, child(root))
  check(run(["--require", hook, script], { NODE_PATH: path.join(root, "node_modules") }), /native binding unavailable \(simulated: invalid ELF header\); using the pure-JS mapping/)
})

test("the package without its .node file (no prebuilt binary for this platform): pure JS, one diag warning", () => {
  const pkg = path.join(tmp, "pkg")
  fs.mkdirSync(path.join(pkg, "js"), { recursive: true })
  for (const f of ["index.js", "binding.js", "package.json"]) fs.copyFileSync(path.join(root, f), path.join(pkg, f))
  for (const f of fs.readdirSync(path.join(root, "js"))) fs.copyFileSync(path.join(root, "js", f), path.join(pkg, "js", f))
  assert.equal(fs.readdirSync(pkg).filter((f) => f.endsWith(".node")).length, 0)
  const script = path.join(tmp, "child-copy.js")
  fs.writeFileSync(script, child(pkg))
  // NODE_PATH: @opentelemetry/api from the repository; no platform package is installed there.
  check(run([script], { NODE_PATH: path.join(root, "node_modules") }), /native binding unavailable/)
})

test("GENKIT_FOR_MAPLE_FORCE_JS=1 forces the pure-JS path, with the same single warning", () => {
  const script = path.join(tmp, "child-force.js")
  fs.writeFileSync(script, child(root))
  const r = spawnSync(process.execPath, [script], { cwd: tmp, encoding: "utf8", env: { ...process.env, GENKIT_FOR_MAPLE_FORCE_JS: "1", NODE_PATH: path.join(root, "node_modules") } })
  assert.equal(r.status, 0, r.stderr)
  check(JSON.parse(r.stdout), /GENKIT_FOR_MAPLE_FORCE_JS=1/)
})
