"use strict"
// Next.js (issue 12): a real app (__test__/nextjs-app: instrumentation.ts registering the README's
// setup, a route handler running a Genkit flow with a model call) built with Next.js 16 (Turbopack,
// its default bundler) and Next.js 15 (webpack, its default), started on 127.0.0.1, with the spans
// arriving at the package's own OTLP receiver with gen_ai.* attributes:
// - default settings: `next build` + `next start`, and the same build moved to another folder
//   (as a CI or Docker build deployed elsewhere is): native;
// - `next dev` (Next.js 16 with Turbopack, 15 with webpack: each one's default): native;
// - `output: "standalone"` with README's lines (`serverExternalPackages` + `outputFileTracingIncludes`),
//   the standalone folder moved elsewhere: native;
// - `output: "standalone"` at default settings, moved: the binary is not in the traced output, so the
//   pure-JS mapping runs, the route still answers and the spans still carry gen_ai.*, with one
//   warning per component (processor, exporter) naming the bundler and the fix.
// Its own step of `npm test` (scripts/test-steps.json): each Next.js install and build takes minutes.
const { describe, test, before, after } = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const path = require("node:path")
const { spawn, spawnSync } = require("node:child_process")
const { cleanEnv, show, scratch, root } = require("./helpers/bundle-app")
const { startReceiver } = require("../js/receiver")

/** The longest one `npm install` of a Next.js app may take (two minutes on a good day). */
const INSTALL_MS = 8 * 60_000

const fixture = path.join(__dirname, "nextjs-app")
const tmp = scratch("gfm-next-")
let tgz

function run(t, cmd, args, cwd, env = {}) {
  const started = Date.now()
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv({ NEXT_TELEMETRY_DISABLED: "1", ...env }), encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  if (r.error) throw r.error
  const line = `${path.basename(cwd)}: ${cmd} ${args.join(" ")}: exit ${r.status}, ${((Date.now() - started) / 1000).toFixed(1)} s`
  t.diagnostic(line)
  process.stderr.write(`# ${line}\n`)
  assert.equal(r.status, 0, `${cmd} ${args.join(" ")}\n${show(r)}`)
  return r
}

function copyDir(from, to) {
  fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true })
}

/**
 * Starts a server (`cmd args` in `cwd`, listening on 127.0.0.1:port), GETs /api/flow until it
 * answers (bounded), stops it, and returns the answer, the spans the receiver got and the
 * server's output.
 */
async function serve(t, cwd, cmd, args) {
  const receiver = await startReceiver()
  const port = 20000 + Math.floor(Math.random() * 20000)
  const child = spawn(cmd, [...args], {
    cwd,
    env: cleanEnv({ NEXT_TELEMETRY_DISABLED: "1", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, PORT: String(port), HOSTNAME: "127.0.0.1" }),
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: `next dev` and `next start` start workers, stopped with it.
    detached: true,
  })
  let output = ""
  child.stdout.on("data", (d) => (output += d))
  child.stderr.on("data", (d) => (output += d))
  let exited = false
  child.on("exit", () => (exited = true))
  let answer
  const started = Date.now()
  try {
    while (answer === undefined && !exited && Date.now() - started < 180_000) {
      await new Promise((r) => setTimeout(r, 500))
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/flow`, { signal: AbortSignal.timeout(120_000) })
        answer = { status: res.status, body: await res.text() }
      } catch {
        // not listening yet
      }
    }
    // The batch processor exports within 50 ms; wait for the flow's spans (bounded).
    for (let i = 0; i < 100 && !receiver.spans().some((s) => s.name === "nextFlow"); i++) await new Promise((r) => setTimeout(r, 100))
  } finally {
    try {
      process.kill(-child.pid, "SIGTERM")
    } catch {
      child.kill("SIGTERM")
    }
    await new Promise((r) => (exited ? r() : child.once("exit", r)))
    child.stdout.destroy()
    child.stderr.destroy()
    await receiver.close()
  }
  t.diagnostic(`${path.basename(cwd)}: ${cmd} ${args.join(" ")}: answered in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  assert.ok(answer, `no answer from the server\n${output.slice(-4000)}`)
  assert.equal(answer.status, 200, `${answer.body.slice(0, 2000)}\n${output.slice(-4000)}`)
  return { answer: JSON.parse(answer.body), spans: receiver.spans(), output }
}

const warningsOf = (output) => output.split("\n").filter((l) => l.includes("native binding unavailable"))

/** The route's answer and the spans: the flow ran, and the spans carry the gen_ai.* attributes. */
function assertMapped(result, native) {
  assert.equal(result.answer.text, "echo: hello from next")
  assert.equal(result.answer.native, native, result.output.slice(-4000))
  const flow = result.spans.find((s) => s.name === "nextFlow")
  const model = result.spans.find((s) => s.attributes["genkit:metadata:subtype"] === "model")
  assert.ok(flow && model, `spans: ${result.spans.map((s) => s.name).join(", ")}`)
  assert.equal(flow.attributes["gen_ai.operation.name"], "invoke_agent")
  assert.equal(flow.attributes["gen_ai.agent.name"], "nextFlow")
  assert.equal(model.attributes["gen_ai.operation.name"], "chat")
  assert.equal(model.attributes["gen_ai.request.model"], "echo")
  assert.equal(model.attributes["gen_ai.usage.output_tokens"], 5)
  const output = JSON.parse(model.attributes["gen_ai.output.messages"])
  assert.equal(output[0].parts[0].content, "echo: hello from next")
}

// One suite around everything: its after hook runs as soon as its tests end (a top-level after hook
// waits for the event loop to drain).
describe("Next.js", () => {
before(() => {
  const r = spawnSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], { cwd: root, env: cleanEnv(), encoding: "utf8" })
  assert.equal(r.status, 0, show(r))
  tgz = path.join(tmp, JSON.parse(r.stdout)[0].filename)
})

after(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

// GFM_NEXT_MAJOR=15 (or 16) runs one version only, for local iteration.
const majors = [
  [16, "Turbopack"],
  [15, "webpack"],
].filter(([major]) => process.env.GFM_NEXT_MAJOR === undefined || String(major) === process.env.GFM_NEXT_MAJOR)
for (const [major, bundler] of majors) {
  describe(`Next.js ${major} (${bundler})`, () => {
    const app = path.join(tmp, `next${major}`)
    const build = (t, env = {}) => {
      fs.rmSync(path.join(app, ".next"), { recursive: true, force: true })
      return run(t, process.execPath, [path.join(app, "node_modules", "next", "dist", "bin", "next"), "build"], app, env)
    }
    const next = (dir) => path.join(dir, "node_modules", "next", "dist", "bin", "next")

    before(() => {
      copyDir(fixture, app)
      fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: `next${major}-app`, private: true }))
      // npm's client has been seen to stall for good mid-install (idle, no socket open): such an
      // install is stopped after INSTALL_MS and tried once more; an install that fails is not.
      const install = () =>
        spawnSync(
          "npm",
          ["install", "--no-audit", "--no-fund", "--prefer-offline", `next@${major}`, "react@19", "react-dom@19", "typescript@5", "@types/node@20", "@types/react@19", "genkit@1", "@opentelemetry/api@1", "@opentelemetry/sdk-node", "@opentelemetry/sdk-trace-base@2", tgz],
          { cwd: app, env: cleanEnv(), encoding: "utf8", maxBuffer: 256 * 1024 * 1024, timeout: INSTALL_MS, killSignal: "SIGKILL" },
        )
      let r = install()
      if (r.error?.code === "ETIMEDOUT") r = install()
      assert.equal(r.status, 0, show(r))
    })

    test("default settings: next build, next start, then the build moved to another folder: native", async (t) => {
      build(t)
      assertMapped(await serve(t, app, process.execPath, [next(app), "start", "-H", "127.0.0.1"]), true)
      const moved = `${app}-moved`
      fs.renameSync(app, moved)
      try {
        const result = await serve(t, moved, process.execPath, [next(moved), "start", "-H", "127.0.0.1"])
        assertMapped(result, true)
        assert.deepEqual(warningsOf(result.output), [])
      } finally {
        fs.renameSync(moved, app)
      }
    })

    test(`next dev (${bundler}, the default of Next.js ${major}): native`, async (t) => {
      fs.rmSync(path.join(app, ".next"), { recursive: true, force: true })
      const result = await serve(t, app, process.execPath, [next(app), "dev", "-H", "127.0.0.1"])
      assertMapped(result, true)
      assert.deepEqual(warningsOf(result.output), [])
    })

    // Next.js 15's standalone output of a Genkit app does not start, with or without this package:
    // its tracer leaves out async-function/require.mjs, which a dependency of Genkit's loads
    // ("Cannot find module .../node_modules/async-function/require.mjs"). Next.js 16's does.
    const standalone = major >= 16 ? {} : { skip: "Next.js 15's standalone output of a Genkit app misses async-function/require.mjs (not this package's file)" }

    test('output "standalone" with serverExternalPackages and outputFileTracingIncludes (README), moved: native', standalone, async (t) => {
      build(t, { GFM_STANDALONE: "1", GFM_EXTERNAL: "1", GFM_TRACE_INCLUDES: "1" })
      const moved = path.join(tmp, `standalone${major}`)
      copyDir(path.join(app, ".next", "standalone"), moved)
      try {
        const result = await serve(t, moved, process.execPath, ["server.js"])
        assertMapped(result, true)
        assert.deepEqual(warningsOf(result.output), [])
      } finally {
        fs.rmSync(moved, { recursive: true, force: true })
      }
    })

    test('output "standalone" at default settings, moved: pure JS, the spans mapped, one warning per component naming the cause', standalone, async (t) => {
      build(t, { GFM_STANDALONE: "1" })
      const moved = path.join(tmp, `standalone${major}-default`)
      copyDir(path.join(app, ".next", "standalone"), moved)
      try {
        const result = await serve(t, moved, process.execPath, ["server.js"])
        assertMapped(result, false)
        const warnings = warningsOf(result.output)
        assert.equal(warnings.filter((w) => w.startsWith("genkit-for-maple:")).length, 1, warnings.join("\n"))
        assert.equal(warnings.filter((w) => w.startsWith("genkit-for-maple/otlp:")).length, 1, warnings.join("\n"))
        for (const w of warnings) assert.match(w, /serverExternalPackages|keep "genkit-for-maple" external|outputFileTracingIncludes/, w)
      } finally {
        fs.rmSync(moved, { recursive: true, force: true })
      }
    })
  })
}
})
