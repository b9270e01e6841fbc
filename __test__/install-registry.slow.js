"use strict"
// The registry path (issue 12): a local Verdaccio on 127.0.0.1 receives the packages as a release
// publishes them (`npm publish`, whose prepublishOnly `napi prepublish` publishes the platform
// package genkit-for-maple-<triple> with the binary and adds it to the main package's
// optionalDependencies; the main package carries no .node), and a fresh Genkit app
// (__test__/pack-app: the README's NodeSDK setup, one flow with a model and a tool call) installs it
// with the README's install line through npm install, pnpm add and yarn add (pnpm and yarn from the
// repo's devDependencies), then runs natively. Then `npm ci` from a lockfile written for another
// platform (`npm install --os=darwin --cpu=arm64`), that platform's node_modules run here as they are
// (pure JS, one warning), `npm install --os=linux ... --libc=glibc`, `npm ci --omit=dev`, and
// `npm ci --omit=optional`: the pure-JS mapping with one warning naming the missing package and the fix.
//
// Its own step of `npm test` (scripts/test-steps.json), not in `node --test __test__/`.
// Slow: every install resolves Genkit (about 900 MB of node_modules) through Verdaccio and its uplink;
// the npm and pnpm caches are the machine's own (shared with the other tests), so tarballs seen
// before come from there. Each step's time goes to the test's diagnostics.
const { describe, test, before, after } = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const path = require("node:path")
const { spawnSync } = require("node:child_process")
const { cleanEnv, show, scratch } = require("./helpers/bundle-app")
const { startRegistry, stageRelease } = require("./helpers/registry")
const { platformTriple } = require("../js/load")

const root = path.join(__dirname, "..")
const triple = platformTriple()
const platformPackage = `genkit-for-maple-${triple}`
const README_INSTALL = ["genkit-for-maple", "genkit", "@opentelemetry/api", "@opentelemetry/sdk-node", "@opentelemetry/sdk-trace-base@2", "@opentelemetry/exporter-trace-otlp-proto"]
const tmp = scratch("gfm-registry-")
let registry
let env

// One suite: its after hook runs as soon as its tests end (a top-level after hook waits for the
// event loop to drain, which the Verdaccio child and its sockets would never let happen).
describe("the registry path", () => {
before(async () => {
  assert.ok(fs.existsSync(path.join(root, `genkit-for-maple.${triple}.node`)), "no built addon: npm run build first")
  registry = await startRegistry(path.join(tmp, "registry"))
  env = cleanEnv({ ...registry.env, PATH: `${path.join(root, "node_modules", ".bin")}${path.delimiter}${process.env.PATH}` })
})
after(async () => {
  await registry?.stop()
  fs.rmSync(tmp, { recursive: true, force: true })
  process.stderr.write("# registry stopped, scratch removed\n")
})

function run(t, cmd, args, cwd, extra = {}) {
  const started = Date.now()
  const r = spawnSync(cmd, args, { cwd, env: { ...env, ...extra }, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  if (r.error) throw r.error
  const line = `${path.basename(cwd)}: ${cmd} ${args.join(" ")}: exit ${r.status}, ${((Date.now() - started) / 1000).toFixed(1)} s`
  t.diagnostic(line)
  process.stderr.write(`# ${line}\n`)
  assert.equal(r.status, 0, `${cmd} ${args.join(" ")}\n${show(r)}\n--- registry\n${registry.log().slice(-3000)}`)
  return r
}

/** A fresh app folder with the fixture app of __test__/pack-app. */
function freshApp(name) {
  const app = path.join(tmp, name)
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, "package.json"), `${JSON.stringify({ name: `app-${name}`, version: "1.0.0", private: true, type: "module" }, null, 2)}\n`)
  for (const f of ["app.mjs", "instrumentation.mjs"]) fs.copyFileSync(path.join(__dirname, "pack-app", f), path.join(app, f))
  return app
}

/** Runs the app; returns its RESULT, its spans and every diag warning it printed. */
function runApp(t, app) {
  const r = run(t, process.execPath, ["app.mjs"], app, { OTEL_LOG_LEVEL: "warn" })
  const lines = r.stdout.split("\n")
  const result = JSON.parse(lines.find((l) => l.startsWith("RESULT ")).slice(7))
  const spans = lines.filter((l) => l.startsWith("SPAN ")).map((l) => JSON.parse(l.slice(5)))
  const warnings = `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => l.includes("genkit-for-maple:"))
  return { result, spans, warnings }
}

/** The flow ran and every Genkit span got its gen_ai.* attributes. */
function assertMapped(out) {
  assert.equal(out.result.answer, "It is 21 C in Paris.")
  const ops = out.spans.map((s) => s.attributes["gen_ai.operation.name"]).filter(Boolean).sort()
  assert.deepStrictEqual(ops, ["chat", "chat", "execute_tool", "invoke_agent"])
  const flow = out.spans.find((s) => s.attributes["gen_ai.operation.name"] === "invoke_agent")
  assert.equal(flow.attributes["gen_ai.conversation.id"], "chat-42")
  const tool = out.spans.find((s) => s.attributes["gen_ai.operation.name"] === "execute_tool")
  assert.equal(tool.attributes["gen_ai.tool.call.result"], JSON.stringify({ city: "Paris", tempC: 21 }))
}

function assertNative(out, app) {
  assertMapped(out)
  assert.equal(out.result.isNative, true, out.warnings.join("\n"))
  assert.equal(out.result.cjsIsNative, true)
  assert.deepStrictEqual(out.warnings, [])
  // The main package holds no binary: it came from the platform package.
  assert.deepStrictEqual(fs.readdirSync(out.result.packageDir).filter((f) => f.endsWith(".node")), [])
  const binding = require.resolve(platformPackage, { paths: [out.result.packageDir] })
  assert.match(fs.realpathSync(binding), new RegExp(`${platformPackage.replace(/-/g, "\\-")}.*\\.node$`))
  assert.ok(fs.existsSync(app))
}

test("publish: napi prepublish + npm publish to Verdaccio, the release layout", (t) => {
  const stage = stageRelease(path.join(tmp, "stage"), triple)
  run(t, "npm", ["publish"], stage)
  const view = JSON.parse(run(t, "npm", ["view", "genkit-for-maple", "--json"], tmp).stdout)
  assert.deepStrictEqual(view.optionalDependencies, { [platformPackage]: view.version })
  const platform = JSON.parse(run(t, "npm", ["view", platformPackage, "--json"], tmp).stdout)
  assert.equal(platform.version, view.version)
  assert.deepStrictEqual(platform.os, [process.platform])
  assert.deepStrictEqual(platform.cpu, [process.arch])
})

let npmApp
test("npm install (the README's line) in a fresh Genkit app: native, the binary from the platform package", (t) => {
  npmApp = freshApp("npm")
  run(t, "npm", ["install", "--prefer-offline", ...README_INSTALL], npmApp)
  assertNative(runApp(t, npmApp), npmApp)
})

test("pnpm add: native", (t) => {
  const app = freshApp("pnpm")
  run(t, "pnpm", ["add", "--prefer-offline", `--registry=${registry.url}`, ...README_INSTALL], app)
  assertNative(runApp(t, app), app)
})

// Yarn classic enforces `engines`: @opentelemetry/sdk-node 0.2xx+ asks for Node >= 22.15, so on
// Node 20 `yarn add` fails before installing anything unless it is told --ignore-engines (README).
test("yarn add (classic): native", (t) => {
  const app = freshApp("yarn")
  const ignoreEngines = Number(process.versions.node.split(".")[0]) < 22 ? ["--ignore-engines"] : []
  run(t, "yarn", ["add", "--non-interactive", ...ignoreEngines, "--prefer-offline", `--registry=${registry.url}`, `--cache-folder=${path.join(tmp, "yarn-cache")}`, ...README_INSTALL], app)
  assertNative(runApp(t, app), app)
})

// Genkit 1.42 itself does not run after --omit=optional (it imports its optional dependency
// @cfworker/json-schema), so the probe here is the processor alone, on a flow span, through the
// diag logger OTEL_LOG_LEVEL would install.
test("npm ci --omit=optional: pure JS, one warning naming the missing platform package and the fix", (t) => {
  assert.ok(npmApp, "the npm install test ran")
  fs.rmSync(path.join(npmApp, "node_modules"), { recursive: true, force: true })
  run(t, "npm", ["ci", "--prefer-offline", "--omit=optional"], npmApp)
  assert.ok(!fs.existsSync(path.join(npmApp, "node_modules", platformPackage)))
  const probe = `
import { diag, DiagConsoleLogger, DiagLogLevel } from "@opentelemetry/api"
import { GenkitForMaple } from "genkit-for-maple"
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN)
const p = new GenkitForMaple({ mode: "reference" }) /* compared with seed 000 */
const attributes = { "genkit:type": "action", "genkit:metadata:subtype": "flow", "genkit:name": "supportChat" }
p.onEnd({ name: "supportChat", attributes })
p.onEnd({ name: "supportChat", attributes: { ...attributes } })
process.stdout.write("RESULT " + JSON.stringify({ isNative: p.isNative, op: attributes["gen_ai.operation.name"] }) + "\\n")
`
  fs.writeFileSync(path.join(npmApp, "probe.mjs"), probe)
  const r = run(t, process.execPath, ["probe.mjs"], npmApp)
  const result = JSON.parse(r.stdout.split("\n").find((l) => l.startsWith("RESULT ")).slice(7))
  assert.deepStrictEqual(result, { isNative: false, op: "invoke_agent" })
  const warnings = `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => l.includes("native binding unavailable"))
  assert.equal(warnings.length, 1, `${r.stdout}\n${r.stderr}`)
  assert.ok(warnings[0].includes(`Cannot find module '${platformPackage}'`), warnings[0])
  assert.ok(warnings[0].includes(`npm install ${platformPackage}`), warnings[0])
  assert.match(warnings[0], /--omit=optional/)
})

// Docker and serverless (README "Docker and serverless"): the build installs for the machine that
// runs the app. A node_modules installed on a Mac and copied into a Linux image or zip lacks the
// Linux package: pure JS with one warning naming it; `npm install --os=linux --cpu=<arch>
// --libc=glibc` (what a Mac runs before zipping for AWS Lambda) adds it; `npm ci` from the Mac's
// lockfile and `npm ci --omit=dev` (a production image) install it.
test("node_modules installed for darwin-arm64 (npm install --os=darwin --cpu=arm64) run here: pure JS with one warning; npm install --os=linux --cpu=<arch> --libc=glibc, then npm ci --omit=dev from the Mac's lockfile: native", (t) => {
  const app = freshApp("lock-darwin")
  run(t, "npm", ["install", "--prefer-offline", "--os=darwin", "--cpu=arm64", ...README_INSTALL], app)
  const lock = JSON.parse(fs.readFileSync(path.join(app, "package-lock.json"), "utf8"))
  // npm records every platform's optional package in the lockfile, this one too.
  assert.ok(lock.packages[`node_modules/${platformPackage}`], "the lockfile lists the platform package")
  assert.ok(!fs.existsSync(path.join(app, "node_modules", platformPackage)), "not installed for darwin")

  // The Mac's node_modules, copied as it is (a Docker COPY without .dockerignore, a zip).
  const copied = runApp(t, app)
  assert.equal(copied.result.answer, "It is 21 C in Paris.")
  assert.equal(copied.result.isNative, false)
  const ops = copied.spans.map((s) => s.attributes["gen_ai.operation.name"]).filter(Boolean).sort()
  assert.deepStrictEqual(ops, ["chat", "chat", "execute_tool", "invoke_agent"], "the pure-JS mapping ran")
  assert.equal(copied.warnings.length, 1, copied.warnings.join("\n"))
  assert.ok(copied.warnings[0].includes(`Cannot find module '${platformPackage}'`), copied.warnings[0])
  assert.ok(copied.warnings[0].includes(`npm install ${platformPackage}`), copied.warnings[0])

  // The fix on the Mac: install for the target platform.
  run(t, "npm", ["install", "--prefer-offline", "--os=linux", `--cpu=${process.arch}`, "--libc=glibc"], app)
  assertNative(runApp(t, app), app)

  // `npm ci` from the Mac's lockfile, as a Dockerfile runs it for a production image (--omit=dev:
  // the README's packages are all dependencies, so this is also plain `npm ci`).
  fs.rmSync(path.join(app, "node_modules"), { recursive: true, force: true })
  run(t, "npm", ["ci", "--prefer-offline", "--omit=dev"], app)
  assertNative(runApp(t, app), app)
})
})
