"use strict"
// A local npm registry for the install tests: Verdaccio (the npm package, a devDependency) on
// 127.0.0.1 at a free port, started and stopped by the test. Packages named genkit-for-maple* are
// served only from what the test publishes; everything else is proxied to the npm registry this
// machine's npm uses (its uplink). The packages are published as a release publishes them:
// `napi pre-publish` (package.json's prepublishOnly) publishes the platform package from npm/<triple>/
// with the binary and writes the main package's optionalDependencies, then `npm publish` the main
// package without any .node file.
const fs = require("node:fs")
const net = require("node:net")
const path = require("node:path")
const { spawn, spawnSync } = require("node:child_process")
const { cleanEnv } = require("./bundle-app")

const root = path.join(__dirname, "..", "..")

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function upstream() {
  const r = spawnSync("npm", ["config", "get", "registry"], { cwd: root, encoding: "utf8", env: cleanEnv() })
  const url = (r.stdout || "").trim()
  return /^https?:\/\//.test(url) ? url : "https://registry.npmjs.org/"
}

/** Starts Verdaccio in `dir`; returns { url, npmrc, env, stop }. */
async function startRegistry(dir) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/`
  fs.mkdirSync(path.join(dir, "storage"), { recursive: true })
  const config = path.join(dir, "config.yaml")
  fs.writeFileSync(
    config,
    `storage: ${JSON.stringify(path.join(dir, "storage"))}
auth:
  htpasswd:
    file: ${JSON.stringify(path.join(dir, "htpasswd"))}
    max_users: 100
    algorithm: md5
uplinks:
  npmjs:
    url: ${JSON.stringify(upstream())}
    cache: false
    timeout: 60s
packages:
  "genkit-for-maple*":
    access: $all
    publish: $authenticated
  "**":
    access: $all
    publish: $authenticated
    proxy: npmjs
server:
  keepAliveTimeout: 60
web:
  enable: false
log: { type: stdout, format: pretty, level: warn }
`,
  )
  const bin = path.join(root, "node_modules", "verdaccio", "bin", "verdaccio")
  const child = spawn(process.execPath, [bin, "--config", config, "--listen", `127.0.0.1:${port}`], {
    cwd: dir,
    env: cleanEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  })
  // Nothing of the registry keeps the test's event loop alive; the test stops it.
  child.unref()
  let log = ""
  child.stdout.on("data", (d) => (log += d))
  child.stderr.on("data", (d) => (log += d))
  // Stopped within 10 s at most, whatever state it is in.
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      const done = setTimeout(resolve, 10_000)
      child.once("exit", () => {
        clearTimeout(done)
        resolve()
      })
      child.kill("SIGTERM")
      setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      }, 5000).unref()
    })
  // Up when /-/ping answers: at most 60 s.
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited ${child.exitCode}: ${log}`)
    try {
      const res = await fetch(`${url}-/ping`)
      if (res.ok) break
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`verdaccio did not answer in 60 s: ${log}`)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  // A user, and its token for npm publish.
  const res = await fetch(`${url}-/user/org.couchdb.user:release`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "release", password: "release-password", email: "release@example.invalid" }),
  })
  const { token } = await res.json()
  if (!token) throw new Error(`no token from verdaccio (${res.status})`)
  const npmrc = path.join(dir, "npmrc")
  fs.writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\naudit=false\nfund=false\n`)
  // Every client reads the registry from here: npm and pnpm through npm_config_*, yarn through its own flag too.
  const env = { npm_config_userconfig: npmrc, npm_config_registry: url, YARN_REGISTRY: url }
  return { url, npmrc, env, stop, log: () => log }
}

/**
 * The release layout in `stage/`: the main package's files (package.json "files", no .node), and
 * npm/<triple>/ with the binary built at the repo root, for the one target this machine builds.
 */
function stageRelease(stage, triple) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
  const target = { "linux-x64-gnu": "x86_64-unknown-linux-gnu" }[triple]
  if (target === undefined) throw new Error(`no release target for ${triple} here`)
  fs.mkdirSync(stage, { recursive: true })
  for (const entry of [...pkg.files, "README.md", "LICENSE"]) {
    if (entry.includes("*")) continue
    fs.cpSync(path.join(root, entry), path.join(stage, entry), { recursive: true })
  }
  // The release publishes every target from CI; here only the one this machine builds.
  pkg.napi = { ...pkg.napi, targets: [target] }
  delete pkg.devDependencies
  delete pkg.overrides
  fs.writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`)
  const dir = path.join(stage, "npm", triple)
  fs.cpSync(path.join(root, "npm", triple), dir, { recursive: true })
  const binary = `genkit-for-maple.${triple}.node`
  fs.copyFileSync(path.join(root, binary), path.join(dir, binary))
  return stage
}

module.exports = { startRegistry, stageRelease }
