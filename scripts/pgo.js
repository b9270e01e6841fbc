#!/usr/bin/env node
"use strict"
// `npm run pgo`: makes the profile of the profile-guided release build (scripts/pgo-profile.js) and
// rebuilds the addon with it. Run it after changing the Rust code, so the new code is optimized
// with counts of its own (the build warns "hash mismatch" for each function the profile no longer
// fits), and commit pgo/.
//
// 1. builds the addon instrumented (`-Cprofile-generate`) into target/pgo-generate/ (the package's
//    own addon is not touched);
// 2. runs scripts/pgo-train.js with it (NAPI_RS_NATIVE_LIBRARY_PATH; the counts go to
//    target/pgo/raw/);
// 3. merges them with llvm-profdata (`merge --sparse`) into pgo/genkit-for-maple.profdata.gz and
//    records rustc's `-vV` answer (its host is the profile's target), the merging LLVM's major
//    version and the sources' digest in pgo/profile.json (scripts/pgo-profile.js);
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
const { PROFILE, META, rustcVersion, sourcesDigest, writeAtomic } = require("./pgo-profile.js")

const root = path.join(__dirname, "..")
const rawDir = path.join(root, "target", "pgo", "raw")
/** Where the instrumented addon goes: never the package root, whose addon stays the release one. */
const addonDir = path.join(root, "target", "pgo-generate", "addon")

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
function findProfdata(rustc) {
  const candidates = []
  if (process.env.LLVM_PROFDATA) candidates.push(process.env.LLVM_PROFDATA)
  const sysroot = spawnSync(process.env.RUSTC || "rustc", ["--print", "sysroot"], { cwd: root, encoding: "utf8" }).stdout?.trim()
  if (sysroot) candidates.push(path.join(sysroot, "lib", "rustlib", rustc.host, "bin", "llvm-profdata"))
  for (let n = rustc.llvm; n >= 19; n--) candidates.push(`llvm-profdata-${n}`, `/usr/lib/llvm-${n}/bin/llvm-profdata`)
  candidates.push("llvm-profdata")
  for (const bin of candidates) {
    const major = profdataMajor(bin)
    if (major !== undefined) return { bin, major }
  }
  fail(`no llvm-profdata found (tried ${candidates.join(", ")}); set LLVM_PROFDATA or install llvm-tools`)
}

/** Runs a step with its output passed through; stops here when it fails (the package's addon is untouched until step 4). */
function run(cmd, args, env = {}) {
  console.log(`pgo: ${[cmd, ...args].join(" ")}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } })
  if (r.status !== 0) fail(`${cmd} ${args.join(" ")} failed (${r.status ?? r.signal ?? r.error})`)
}

const rustc = rustcVersion()
if (rustc === undefined) fail("rustc -vV did not answer")
if (!rustc.stable) fail(`rustc ${rustc.rustc} is not a stable release with a commit hash: the release workflow pins the profile's rustc, which must be one`)
// The release workflow's profile-guided binary is linux-x64-gnu's; a profile made on another host
// fits only that host's target, and the release would lose it (`--any-host` to make one anyway).
if (rustc.host !== "x86_64-unknown-linux-gnu" && !process.argv.includes("--any-host")) {
  fail(`this host is ${rustc.host}: the release's profile is made on x86_64-unknown-linux-gnu (--any-host to make one for this host)`)
}
const profdata = findProfdata(rustc)
if (profdata.major > rustc.llvm) fail(`${profdata.bin} is LLVM ${profdata.major}, newer than rustc's LLVM ${rustc.llvm}, which could not read its profile`)

fs.rmSync(rawDir, { recursive: true, force: true })
fs.mkdirSync(rawDir, { recursive: true })
fs.rmSync(addonDir, { recursive: true, force: true })
// The caller's rustflags are not carried into the instrumented build: its counts are keyed by the
// functions' names, which rustflags do not change.
const instrumented = { GENKIT_FOR_MAPLE_PGO: "0", CARGO_ENCODED_RUSTFLAGS: `-Cprofile-generate=${rawDir}` }
// Its `build:` line says "without the profile (GENKIT_FOR_MAPLE_PGO=0)": this build makes one.
console.log("pgo: 1/4 the instrumented build")
run(process.execPath, ["scripts/build.js", "--target-dir", path.join("target", "pgo-generate"), "--output-dir", addonDir], instrumented)
const addon = fs.readdirSync(addonDir).find((f) => f.endsWith(".node"))
if (addon === undefined) fail(`the instrumented build left no .node in ${addonDir}`)
console.log("pgo: 2/4 the training run")
run(process.execPath, ["scripts/pgo-train.js"], {
  NAPI_RS_NATIVE_LIBRARY_PATH: path.join(addonDir, addon),
  LLVM_PROFILE_FILE: path.join(rawDir, "train-%p-%m.profraw"),
})
const raw = fs.readdirSync(rawDir).filter((f) => f.endsWith(".profraw")).map((f) => path.join(rawDir, f))
if (raw.length === 0) fail(`the training run wrote no counts into ${rawDir}`)
console.log("pgo: 3/4 the merge")
const merged = path.join(root, "target", "pgo", "merged.profdata")
run(profdata.bin, ["merge", "--sparse", "-o", merged, ...raw])
fs.mkdirSync(path.dirname(PROFILE), { recursive: true })
writeAtomic(PROFILE, zlib.gzipSync(fs.readFileSync(merged), { level: 9 }))
const meta = { rustcVV: rustc.vv, llvm: profdata.major, sources: sourcesDigest() }
writeAtomic(META, `${JSON.stringify(meta, null, 2)}\n`)
console.log(`pgo: wrote ${path.relative(root, PROFILE)} (${fs.statSync(PROFILE).size} bytes) and ${path.relative(root, META)}`)
console.log("pgo: 4/4 the release build, with the new profile")
run(process.execPath, ["scripts/build.js"])
