"use strict"
// Issue 12: the linux-x64-gnu binary links against glibc 2.17 (scripts/build.js), so Amazon Linux 2,
// Debian 10/11, Ubuntu 18.04/20.04 and RHEL/CentOS 7/8 load it. `objdump -T` lists the symbol
// versions the binary needs from glibc and libstdc++; this test fails when either floor rises.
const { test } = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

const root = path.join(__dirname, "..")
const binary = path.join(root, "genkit-for-maple.linux-x64-gnu.node")
/** glibc 2.17: RHEL/CentOS 7, the oldest glibc napi-rs's cross toolchain targets. */
const GLIBC_FLOOR = [2, 17]
/** libstdc++ of gcc 4.8.5 (the toolchain's, RHEL/CentOS 7's system compiler). */
const GLIBCXX_FLOOR = [3, 4, 19]

const applies = process.platform === "linux" && process.arch === "x64" && process.env.GENKIT_FOR_MAPLE_HOST_TOOLCHAIN !== "1"

function compare(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** `{ GLIBC: [[2, 14], ...], GLIBCXX: [[3, 4], ...] }`: the versions in `objdump -T`'s symbol table. */
function neededVersions(file) {
  const r = spawnSync("objdump", ["-T", file], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 })
  assert.equal(r.status, 0, `objdump -T failed: ${r.stderr || r.error}`)
  const found = { GLIBC: new Map(), GLIBCXX: new Map() }
  for (const [, lib, version] of r.stdout.matchAll(/\((GLIBC|GLIBCXX)_([0-9.]+)\)/g)) {
    found[lib].set(version, version.split(".").map(Number))
  }
  return { GLIBC: [...found.GLIBC.values()], GLIBCXX: [...found.GLIBCXX.values()], text: r.stdout }
}

test("the linux-x64-gnu binary needs at most glibc 2.17 and libstdc++ 3.4.19 (objdump -T)", { skip: !applies && "not a linux-x64 build" }, () => {
  assert.ok(fs.existsSync(binary), "no built addon at the repo root: run `npm run build` (npm test does) first")
  const { GLIBC, GLIBCXX, text } = neededVersions(binary)
  assert.ok(GLIBC.length > 0, "objdump -T lists no GLIBC_ version: not a dynamically linked glibc binary?")
  const over = (list, floor) => list.filter((v) => compare(v, floor) > 0).map((v) => v.join("."))
  const glibcOver = over(GLIBC, GLIBC_FLOOR)
  const cxxOver = over(GLIBCXX, GLIBCXX_FLOOR)
  const lines = (versions) => text.split("\n").filter((l) => versions.some((v) => l.includes(`_${v})`)))
  assert.deepEqual(glibcOver, [], `the binary needs a glibc newer than 2.17:\n${lines(glibcOver).join("\n")}`)
  assert.deepEqual(cxxOver, [], `the binary needs a libstdc++ newer than 3.4.19:\n${lines(cxxOver).join("\n")}`)
})

test("the floor check itself: a binary linked against this machine's glibc is caught", { skip: !applies && "not a linux-x64 build" }, () => {
  // node itself is linked against the build machine's glibc (2.28 or newer for Node 20): the same
  // parsing must report versions above the floor, or the check above could never fail.
  const { GLIBC } = neededVersions(process.execPath)
  const newest = GLIBC.reduce((a, b) => (compare(a, b) >= 0 ? a : b))
  assert.ok(compare(newest, GLIBC_FLOOR) > 0, `node needs glibc ${newest.join(".")}; expected above 2.17`)
})
