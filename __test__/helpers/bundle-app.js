"use strict"
// A throwaway app outside the repo for the bundler tests: the package as `npm pack` makes it (the
// built .node inside, as in the repo's dev layout) and @opentelemetry/api installed with npm from
// the shared cache, the fixture app of __test__/bundlers-app/, and the real Genkit corpus spans.
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { spawnSync } = require("node:child_process")
const { load } = require("./fixtures")

const root = path.join(__dirname, "..", "..")

/** The environment of the child processes: npm's own config of `npm test` and this package's switches removed. */
function cleanEnv(extra = {}) {
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    const k = key.toLowerCase()
    if (k.startsWith("npm_") && k !== "npm_config_cache" && k !== "npm_config_registry") continue
    if (key === "INIT_CWD" || key === "NODE_OPTIONS" || key === "NODE_PATH") continue
    if (key.startsWith("GENKIT_FOR_MAPLE_") || key.startsWith("NAPI_RS_") || key.startsWith("OTEL_")) continue
    env[key] = value
  }
  return { ...env, ...extra }
}

function run(cmd, args, cwd, env = {}) {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(env), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (r.error) throw r.error
  return r
}

const show = (r) => `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`

/**
 * A scratch folder for installed apps: on tmpfs (/dev/shm) when it has 8 GB free, since removing
 * a Genkit node_modules from a disk mounted with `discard` takes minutes; else os.tmpdir().
 */
function scratch(prefix) {
  let base = os.tmpdir()
  try {
    const st = fs.statfsSync("/dev/shm")
    if (st.bavail * st.bsize > 8 * 1024 ** 3) {
      fs.accessSync("/dev/shm", fs.constants.W_OK)
      base = "/dev/shm"
    }
  } catch {
    // no tmpfs: the disk
  }
  return fs.realpathSync(fs.mkdtempSync(path.join(base, prefix)))
}

/** Makes the app; returns { tmp, app, spans, cleanup }. */
function makeApp(prefix) {
  const tmp = scratch(prefix)
  const app = path.join(tmp, "app")
  fs.mkdirSync(app)
  let r = run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], root)
  if (r.status !== 0) throw new Error(`npm pack: ${show(r)}`)
  const tgz = path.join(tmp, JSON.parse(r.stdout)[0].filename)
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "bundled-app", private: true }))
  r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock", tgz, "@opentelemetry/api@1"], app)
  if (r.status !== 0) throw new Error(`npm install: ${show(r)}`)
  for (const f of fs.readdirSync(path.join(__dirname, "..", "bundlers-app"))) fs.copyFileSync(path.join(__dirname, "..", "bundlers-app", f), path.join(app, f))
  const spans = path.join(tmp, "spans.json")
  fs.writeFileSync(spans, JSON.stringify(load("genkit-1.42-spans.jsonl")))
  return { tmp, app, spans, cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }) }
}

/** Runs a built app file with node (in `cwd`, with `env` added); returns its JSON line. */
function runApp(file, spans, cwd, env = {}) {
  const r = run(process.execPath, [file], cwd ?? path.dirname(file), { ...env, GFM_SPANS: spans })
  if (r.status !== 0) throw new Error(`${file}: ${show(r)}`)
  return JSON.parse(r.stdout.trim().split("\n").pop())
}

module.exports = { root, scratch, cleanEnv, run, show, makeApp, runApp }
