"use strict"
// The profile-guided release build (scripts/pgo-profile.js, BENCHMARKS.md "Stop 46"): the profile in
// pgo/ was made from the sources as they are (else `npm run pgo`), and the build's flags carry it,
// keep the caller's own flags, and leave it out where rustc could not read it.
const { test } = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const zlib = require("node:zlib")
const { PROFILE, META, profileEnv, sourcesDigest } = require("../scripts/pgo-profile.js")

/** The first 8 bytes of an indexed LLVM profile (`IndexedInstrProf::Magic`): `\xfflprofi\x81`. */
const INDEXED_MAGIC = Buffer.from([0xff, 0x6c, 0x70, 0x72, 0x6f, 0x66, 0x69, 0x81])

test("pgo/ holds an indexed LLVM profile made from the current Rust sources and training run", () => {
  const meta = JSON.parse(fs.readFileSync(META, "utf8"))
  assert.ok(Number.isInteger(meta.llvm) && meta.llvm >= 19, `profile.json's llvm: ${meta.llvm}`)
  assert.equal(
    meta.sources,
    sourcesDigest(),
    "the Rust sources (or scripts/pgo-train.js) changed since pgo/ was made: run `npm run pgo` (it needs llvm-profdata, see scripts/pgo.js) and commit pgo/",
  )
  const profile = zlib.gunzipSync(fs.readFileSync(PROFILE))
  assert.ok(profile.length > 10_000, `${profile.length} bytes`)
  assert.deepEqual(profile.subarray(0, 8), INDEXED_MAGIC)
})

test("the build's flags: the profile unpacked and passed after the caller's RUSTFLAGS", () => {
  const { env, note } = profileEnv({ ...process.env, RUSTFLAGS: " -g  -Cdebuginfo=1 ", CARGO_ENCODED_RUSTFLAGS: "" })
  assert.match(note, /^with the profile/)
  const flags = env.CARGO_ENCODED_RUSTFLAGS.split("\x1f")
  assert.equal(flags.length, 3)
  assert.deepEqual(flags.slice(0, 2), ["-g", "-Cdebuginfo=1"])
  const [, file] = /^-Cprofile-use=(.+)$/.exec(flags[2])
  assert.ok(path.isAbsolute(file))
  assert.deepEqual(fs.readFileSync(file), zlib.gunzipSync(fs.readFileSync(PROFILE)))
})

test("the build's flags: the caller's CARGO_ENCODED_RUSTFLAGS kept field by field (a space inside a flag too)", () => {
  const own = ["-Clink-arg=-Wl,-rpath,/opt/a dir", "-g"].join("\x1f")
  const { env } = profileEnv({ ...process.env, CARGO_ENCODED_RUSTFLAGS: own, RUSTFLAGS: "-Cignored" })
  const flags = env.CARGO_ENCODED_RUSTFLAGS.split("\x1f")
  assert.deepEqual(flags.slice(0, 2), ["-Clink-arg=-Wl,-rpath,/opt/a dir", "-g"])
  assert.match(flags[2], /^-Cprofile-use=/)
  assert.equal(flags.length, 3)
})

test("the build goes without the profile when asked to, or when rustc's LLVM is older than its writer", { skip: process.platform === "win32" && "the stand-in rustc is a shell script" }, () => {
  const off = profileEnv({ ...process.env, GENKIT_FOR_MAPLE_PGO: "0" })
  assert.deepEqual(off.env, {})
  assert.match(off.note, /GENKIT_FOR_MAPLE_PGO=0/)

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gfm-pgo-"))
  try {
    const { llvm } = JSON.parse(fs.readFileSync(META, "utf8"))
    const old = path.join(dir, "rustc")
    fs.writeFileSync(old, `#!/bin/sh\necho "rustc 1.70.0"\necho "LLVM version: ${llvm - 1}.0.0"\n`, { mode: 0o755 })
    const older = profileEnv({ ...process.env, RUSTC: old })
    assert.deepEqual(older.env, {})
    assert.match(older.note, new RegExp(`needs rustc on LLVM ${llvm} or newer, this rustc has ${llvm - 1}`))

    const same = path.join(dir, "rustc-same")
    fs.writeFileSync(same, `#!/bin/sh\necho "LLVM version: ${llvm}.1.0"\n`, { mode: 0o755 })
    assert.match(profileEnv({ ...process.env, RUSTC: same, CARGO_ENCODED_RUSTFLAGS: "" }).env.CARGO_ENCODED_RUSTFLAGS, /-Cprofile-use=/)

    const silent = path.join(dir, "rustc-silent")
    fs.writeFileSync(silent, "#!/bin/sh\nexit 1\n", { mode: 0o755 })
    assert.deepEqual(profileEnv({ ...process.env, RUSTC: silent }).env, {})
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
