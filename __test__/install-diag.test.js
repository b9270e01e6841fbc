"use strict"
// The fallback warning (issue 12, item 5): it names the deepest real cause (walking error.cause),
// the platform triple, the package looked for, the fix and GENKIT_FOR_MAPLE_FORCE_JS, and it is
// given at the first span, once, so a logger NodeSDK installs from OTEL_LOG_LEVEL after the
// processor was built still shows it. Real Node processes: the permission model, the package
// without any binary, NodeSDK with OTEL_LOG_LEVEL.
const test = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { spawnSync } = require("node:child_process")
const { platformTriple } = require("../js/load")

const root = path.join(__dirname, "..")
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "gfm-install-diag-")))
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
const triple = platformTriple()
const env = { ...process.env, GENKIT_FOR_MAPLE_FORCE_JS: "", NODE_PATH: path.join(root, "node_modules") }
delete env.OTEL_LOG_LEVEL

// The package as the registry gives it without its optional platform package: JS files only.
const bare = path.join(tmp, "node_modules", "genkit-for-maple")
fs.mkdirSync(path.join(bare, "js"), { recursive: true })
for (const f of ["index.js", "index.mjs", "binding.js", "package.json"]) fs.copyFileSync(path.join(root, f), path.join(bare, f))
for (const f of fs.readdirSync(path.join(root, "js"))) fs.copyFileSync(path.join(root, "js", f), path.join(bare, "js", f))

// One model span of the real corpus, mapped, and every diag warning.
const probe = (pkg) => `
const { diag, DiagLogLevel } = require("@opentelemetry/api")
const logs = []
diag.setLogger({ error: (m) => logs.push(m), warn: (m) => logs.push(m), info() {}, debug() {}, verbose() {} }, DiagLogLevel.WARN)
const { GenkitForMaple } = require(${JSON.stringify(pkg)})
const p = new GenkitForMaple({ mode: "reference", scrubSecrets: false }) /* compared with seed 000: without the binding, secret scrubbing (on by default) withholds content */
const atConstruction = logs.length
const row = require(${JSON.stringify(path.join(__dirname, "helpers", "fixtures.js"))}).load("genkit-1.42-spans.jsonl").find((r) => r.attributes["genkit:metadata:subtype"] === "model")
const attrs = structuredClone(row.attributes)
p.onEnd({ name: row.name, attributes: attrs })
p.onEnd({ name: row.name, attributes: structuredClone(row.attributes) })
process.stdout.write(JSON.stringify({ native: p.isNative, atConstruction, equal: JSON.stringify(attrs) === JSON.stringify(row.expected_attributes), logs }))
`

function runProbe(args, pkg) {
  const script = path.join(tmp, `probe-${Math.random().toString(36).slice(2)}.js`)
  fs.writeFileSync(script, probe(pkg))
  const r = spawnSync(process.execPath, [...args, script], { cwd: tmp, encoding: "utf8", env })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function checkFallback(out, cause, fix) {
  assert.equal(out.native, false)
  assert.equal(out.equal, true, "the pure-JS mapping writes the corpus's expected attributes")
  assert.equal(out.atConstruction, 0, "no warning in the constructor")
  assert.equal(out.logs.length, 1, `one warning: ${JSON.stringify(out.logs)}`)
  const [warning] = out.logs
  assert.match(warning, /native binding unavailable/)
  assert.ok(warning.includes(cause), `the cause ${cause} in: ${warning}`)
  assert.ok(warning.includes(`Platform ${triple}`), warning)
  assert.ok(warning.includes(`genkit-for-maple-${triple}`), warning)
  assert.match(warning, fix)
  assert.match(warning, /GENKIT_FOR_MAPLE_FORCE_JS=1/)
  assert.doesNotMatch(warning, /npm has a bug/, "the generated loader's generic advice is not the cause")
}

test("permission model: the warning names 'loading addons is disabled' (four causes down) and --allow-addons", () => {
  const out = runProbe(["--experimental-permission", "--allow-fs-read=*", "--no-warnings"], root)
  checkFallback(out, "loading addons is disabled", /--allow-addons/)
})

test("--no-addons: same cause and fix", () => {
  checkFallback(runProbe(["--no-addons", "--no-warnings"], root), "addons", /--allow-addons|addons disabled/)
})

test("no platform package installed: the warning names the missing package and how to install it", () => {
  const out = runProbe([], bare)
  checkFallback(out, `Cannot find module 'genkit-for-maple-${triple}'`, new RegExp(`npm install genkit-for-maple-${triple}`))
})

test("the built package loads natively: no warning", () => {
  const out = runProbe([], root)
  assert.equal(out.native, true)
  assert.equal(out.equal, true)
  assert.deepStrictEqual(out.logs, [])
})

test("OTEL_LOG_LEVEL only: NodeSDK's logger, installed after the processor was built, shows the warning once", () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, "install-diag", "otel-log-level.js")], {
    cwd: tmp,
    encoding: "utf8",
    env: { ...env, GFM_PACKAGE: bare, OTEL_LOG_LEVEL: "warn", OTEL_TRACES_EXPORTER: "none" },
  })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.deepStrictEqual(out, { native: false, ops: ["invoke_agent", "invoke_agent", "invoke_agent"] })
  const warnings = r.stderr.split("\n").filter((l) => l.includes("native binding unavailable"))
  assert.equal(warnings.length, 1, r.stderr)
  assert.ok(warnings[0].includes(`genkit-for-maple-${triple}`), warnings[0])
})
