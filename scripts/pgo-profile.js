"use strict"
// The profile of the profile-guided release build (BENCHMARKS.md "Stop 46"): LLVM's block counts of
// scripts/pgo-train.js run under an instrumented addon, which rustc's `-Cprofile-use` reads to lay
// out and inline the hot paths (the span reader, the writers, the scrubber's scan, the OTLP encoder).
//
// pgo/genkit-for-maple.profdata.gz: the indexed profile (`llvm-profdata merge --sparse`), gzipped;
// pgo/profile.json: `{ "llvm": <major>, "sources": <sha256> }`, the LLVM version of the
// llvm-profdata that wrote it (a rustc on an older LLVM cannot read a newer indexed format and would
// fail the build, so it builds without the profile instead) and the digest of the Rust sources it
// was made from (`sourcesDigest`; __test__/pgo.test.js fails when they changed since).
// `npm run pgo` (scripts/pgo.js) writes both.
//
// A profile made from other sources is still used: LLVM drops the counts of each function whose
// control flow changed ("function control flow change detected (hash mismatch)" warnings in the
// build) and optimizes it as without a profile. The answers never depend on the profile.
const { spawnSync } = require("node:child_process")
const crypto = require("node:crypto")
const fs = require("node:fs")
const path = require("node:path")
const zlib = require("node:zlib")

const root = path.join(__dirname, "..")
const PROFILE = path.join(root, "pgo", "genkit-for-maple.profdata.gz")
const META = path.join(root, "pgo", "profile.json")

/**
 * What the profile was made of, relative to the root, sorted: the files rustc compiles into the
 * addon, and the training run.
 */
function sources() {
  const out = ["Cargo.toml", "Cargo.lock", "build.rs", "core/Cargo.toml", "scripts/pgo-train.js"]
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith(".rs") || entry.name === "Cargo.toml") out.push(rel)
    }
  }
  for (const dir of ["src", "core/src", "vendor"]) walk(dir)
  return out.filter((f) => fs.existsSync(path.join(root, f))).sort()
}

/** SHA-256 of the names and contents of [`sources`]: pgo/profile.json's `sources`. */
function sourcesDigest() {
  const hash = crypto.createHash("sha256")
  for (const file of sources()) {
    const text = fs.readFileSync(path.join(root, file))
    hash.update(`${file}\0${text.length}\0`)
    hash.update(text)
  }
  return hash.digest("hex")
}

/** rustc's LLVM major version (`rustc -vV`), or undefined when rustc does not answer. */
function rustcLlvmMajor(env = process.env) {
  const r = spawnSync(env.RUSTC || "rustc", ["-vV"], { encoding: "utf8" })
  const m = /^LLVM version: (\d+)/m.exec(r.stdout ?? "")
  return m ? Number(m[1]) : undefined
}

/** `flags` (a list of rustc flags) and the caller's own RUSTFLAGS, as CARGO_ENCODED_RUSTFLAGS. */
function encoded(flags, env = process.env) {
  const own = env.CARGO_ENCODED_RUSTFLAGS !== undefined && env.CARGO_ENCODED_RUSTFLAGS !== ""
    ? env.CARGO_ENCODED_RUSTFLAGS.split("\x1f")
    : (env.RUSTFLAGS ?? "").split(/\s+/).filter((f) => f !== "")
  return [...own, ...flags].join("\x1f")
}

/**
 * The environment that makes cargo build with the profile: `{ env: { CARGO_ENCODED_RUSTFLAGS },
 * note }`, or `{ env: {}, note }` saying why the build goes without it (GENKIT_FOR_MAPLE_PGO=0, no
 * profile, a rustc whose LLVM is older than the profile's writer). The profile is unpacked into
 * target/pgo/ (a path without whitespace concerns: the flags are passed encoded, one per field).
 */
function profileEnv(env = process.env) {
  if (env.GENKIT_FOR_MAPLE_PGO === "0") return { env: {}, note: "without the profile (GENKIT_FOR_MAPLE_PGO=0)" }
  if (!fs.existsSync(PROFILE)) return { env: {}, note: `without a profile (${path.relative(root, PROFILE)} is missing)` }
  let wanted
  try {
    wanted = JSON.parse(fs.readFileSync(META, "utf8")).llvm
  } catch (error) {
    return { env: {}, note: `without the profile (${path.relative(root, META)}: ${error.message})` }
  }
  const llvm = rustcLlvmMajor(env)
  if (!(llvm >= wanted)) return { env: {}, note: `without the profile (it needs rustc on LLVM ${wanted} or newer, this rustc has ${llvm ?? "no answer"})` }
  const packed = fs.readFileSync(PROFILE)
  const digest = crypto.createHash("sha256").update(packed).digest("hex").slice(0, 16)
  const dir = path.join(root, "target", "pgo")
  const file = path.join(dir, `genkit-for-maple-${digest}.profdata`)
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true })
    const partial = `${file}.${process.pid}.partial`
    fs.writeFileSync(partial, zlib.gunzipSync(packed))
    fs.renameSync(partial, file)
  }
  return { env: { CARGO_ENCODED_RUSTFLAGS: encoded([`-Cprofile-use=${file}`], env) }, note: `with the profile ${path.relative(root, PROFILE)}` }
}

module.exports = { PROFILE, META, profileEnv, encoded, rustcLlvmMajor, sources, sourcesDigest }
