#!/usr/bin/env node
"use strict"
// `npm run pgo`: makes the profile of the profile-guided release build (scripts/pgo-profile.js) and
// rebuilds the addon with it. Run it after changing the Rust code, so the new code is optimized
// with counts of its own (the build warns "hash mismatch" for each function the profile no longer
// fits), and commit pgo/.
//
// 1. builds the addon instrumented (`-Cprofile-generate`, into target/pgo-generate/);
// 2. runs scripts/pgo-train.js with it (the counts go to target/pgo/raw/);
// 3. merges them with llvm-profdata (`merge --sparse`) into pgo/genkit-for-maple.profdata.gz and
//    records the merging LLVM's major version and the sources' digest in pgo/profile.json;
// 4. runs the release build (scripts/build.js), which reads the new profile.
//
// llvm-profdata must read the raw format of rustc's LLVM: LLVM_PROFDATA=<path>, else rustup's
// (`rustup component add llvm-tools`), else `llvm-profdata-<N>` or /usr/lib/llvm-<N>/ for N from
// rustc's LLVM down to 19 (Debian's `llvm-19` reads rustc 1.95's LLVM 22 counts), else
// `llvm-profdata` on the PATH.
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")
const zlib = require("node:zlib")
const { PROFILE, META, encoded, rustcLlvmMajor, sourcesDigest } = require("./pgo-profile.js")

const root = path.join(__dirname, "..")
const rawDir = path.join(root, "target", "pgo", "raw")

function fail(message) {
  console.error(`pgo: ${message}`)
  process.exit(1)
}

/** The LLVM major version an llvm-profdata reports, or undefined when it does not run. */
function profdataMajor(bin) {
  const r = spawnSync(bin, ["--version"], { encoding: "utf8" })
  const m = /LLVM version (\d+)/.exec(`${r.stdout ?? ""}${r.stderr ?? ""}`)
  return r.status === 0 && m ? Number(m[1]) : undefined
}

/** The llvm-profdata to use and its LLVM major version. */
function findProfdata(llvm) {
  const candidates = []
  if (process.env.LLVM_PROFDATA) candidates.push(process.env.LLVM_PROFDATA)
  const sysroot = spawnSync("rustc", ["--print", "sysroot"], { encoding: "utf8" }).stdout?.trim()
  const host = /^host: (\S+)/m.exec(spawnSync("rustc", ["-vV"], { encoding: "utf8" }).stdout ?? "")?.[1]
  if (sysroot && host) candidates.push(path.join(sysroot, "lib", "rustlib", host, "bin", "llvm-profdata"))
  for (let n = llvm; n >= 19; n--) candidates.push(`llvm-profdata-${n}`, `/usr/lib/llvm-${n}/bin/llvm-profdata`)
  candidates.push("llvm-profdata")
  for (const bin of candidates) {
    const major = profdataMajor(bin)
    if (major !== undefined) return { bin, major }
  }
  fail(`no llvm-profdata found (tried ${candidates.join(", ")}); set LLVM_PROFDATA or install llvm-tools`)
}

/** Runs a step with its output passed through; throws when it fails. */
function run(cmd, args, env = {}) {
  console.log(`pgo: ${[cmd, ...args].join(" ")}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } })
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status ?? r.signal ?? r.error})`)
}

const llvm = rustcLlvmMajor()
if (llvm === undefined) fail("rustc -vV did not give its LLVM version")
const profdata = findProfdata(llvm)
if (profdata.major > llvm) fail(`${profdata.bin} is LLVM ${profdata.major}, newer than rustc's LLVM ${llvm}, which could not read its profile`)

fs.rmSync(rawDir, { recursive: true, force: true })
fs.mkdirSync(rawDir, { recursive: true })
const instrumented = {
  GENKIT_FOR_MAPLE_PGO: "0",
  CARGO_ENCODED_RUSTFLAGS: encoded([`-Cprofile-generate=${rawDir}`]),
}
try {
  run(process.execPath, ["scripts/build.js", "--target-dir", path.join("target", "pgo-generate")], instrumented)
  run(process.execPath, ["scripts/pgo-train.js"], { LLVM_PROFILE_FILE: path.join(rawDir, "train-%p-%m.profraw") })
  const raw = fs.readdirSync(rawDir).filter((f) => f.endsWith(".profraw")).map((f) => path.join(rawDir, f))
  if (raw.length === 0) throw new Error(`the training run wrote no counts into ${rawDir}`)
  const merged = path.join(root, "target", "pgo", "merged.profdata")
  run(profdata.bin, ["merge", "--sparse", "-o", merged, ...raw])
  fs.mkdirSync(path.dirname(PROFILE), { recursive: true })
  fs.writeFileSync(PROFILE, zlib.gzipSync(fs.readFileSync(merged), { level: 9 }))
  fs.writeFileSync(META, `${JSON.stringify({ llvm: profdata.major, sources: sourcesDigest() }, null, 2)}\n`)
  console.log(`pgo: wrote ${path.relative(root, PROFILE)} (${fs.statSync(PROFILE).size} bytes, llvm-profdata ${profdata.major})`)
} catch (error) {
  console.error(`pgo: ${error.message}`)
  process.exitCode = 1
} finally {
  // The package's addon is the instrumented one until this rebuild (with the new profile, or the
  // previous one when a step above failed).
  try {
    run(process.execPath, ["scripts/build.js"])
  } catch (error) {
    console.error(`pgo: ${error.message}`)
    process.exitCode = 1
  }
}
