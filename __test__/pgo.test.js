"use strict"
// The profile-guided release build (scripts/pgo-profile.js, BENCHMARKS.md "Stop 46"): the profile in
// pgo/ was made from the sources as they are (else `npm run pgo`), and the build's flags carry it
// where it applies, keep the caller's, and leave it out where it would not apply or would displace
// the caller's rustflags. The flag cases run against a stand-in rustc that answers as the profile's
// rustc did (or not), so they do not depend on the machine's toolchain or environment.
const { test } = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const zlib = require("node:zlib")
const crypto = require("node:crypto")
const { PROFILE, META, parseRustc, profileEnv, sourcesDigest, rustCode } = require("../scripts/pgo-profile.js")

/** The first 8 bytes of an indexed LLVM profile (`IndexedInstrProf::Magic`): `\xfflprofi\x81`. */
const INDEXED_MAGIC = Buffer.from([0xff, 0x6c, 0x70, 0x72, 0x6f, 0x66, 0x69, 0x81])
const meta = JSON.parse(fs.readFileSync(META, "utf8"))
/** The rustc the profile was made with, and its host: the profile's target. */
const made = parseRustc(meta.rustcVV)
const unpacked = zlib.gunzipSync(fs.readFileSync(PROFILE))
const skip = process.platform === "win32" && "the stand-in rustc is a shell script"

test("pgo/ holds an indexed LLVM profile made from the current sources and training run", () => {
  assert.match(made.rustc, /^\d+\.\d+\.\d+ \([0-9a-f]{40}\)$/)
  assert.ok(made.stable)
  const [, release, commit] = /^(\d+\.\d+\.\d+) \(([0-9a-f]{40})\)$/.exec(made.rustc)
  assert.match(meta.rustcVV, new RegExp(`^release: ${release.replace(/\./g, "\\.")}$`, "m"))
  assert.match(meta.rustcVV, new RegExp(`^commit-hash: ${commit}$`, "m"))
  // The release workflow's profile-guided binary: a profile made on another host would not fit it.
  assert.equal(made.host, "x86_64-unknown-linux-gnu")
  assert.ok(Number.isInteger(meta.llvm) && meta.llvm >= 19, `profile.json's llvm: ${meta.llvm}`)
  assert.equal(
    meta.sources,
    sourcesDigest(),
    "the Rust sources or the training run's inputs changed since pgo/ was made: run `npm run pgo` (it needs llvm-profdata, see scripts/pgo.js) and commit pgo/",
  )
  assert.ok(unpacked.length > 10_000, `${unpacked.length} bytes`)
  assert.deepEqual(unpacked.subarray(0, 8), INDEXED_MAGIC)
})

test("the release workflow builds with the rustc the profile was made with", () => {
  const workflow = fs.readFileSync(path.join(__dirname, "..", ".github", "workflows", "release.yml"), "utf8")
  const pinned = /uses: dtolnay\/rust-toolchain@master\s+with:\s+toolchain: "([^"]+)"/.exec(workflow)?.[1]
  assert.equal(pinned, made.release, "release.yml's toolchain is not pgo/profile.json's rustc: the published linux-x64-gnu binary would not be profile-guided")
})

/** A temp dir with stand-in rustc scripts and an empty CARGO_HOME; `env(extra)` builds an environment. */
function sandbox() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gfm-pgo-"))
  const rustc = (name, body) => {
    const file = path.join(dir, name)
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
    return file
  }
  /** A stand-in that answers `vv` to `rustc -vV`. */
  const answer = (vv) => {
    const text = path.join(dir, `vv-${crypto.randomUUID()}.txt`)
    fs.writeFileSync(text, `${vv}\n`)
    return `cat '${text}'`
  }
  const same = rustc("rustc", answer(meta.rustcVV))
  const cargoHome = path.join(dir, "cargo-home")
  fs.mkdirSync(cargoHome)
  const env = (extra = {}) => ({ PATH: process.env.PATH, HOME: process.env.HOME, CARGO_HOME: cargoHome, RUSTC: same, ...extra })
  return { dir, rustc, answer, cargoHome, env, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}

/** `profileEnv(env, target)` leaves the profile out, with a note matching `pattern`. */
function assertWithout(env, target, pattern) {
  const r = profileEnv(env, target)
  assert.deepEqual(r.env, {})
  assert.match(r.note, pattern)
}

/** The file a `-Cprofile-use=<file>` flag names, checked to hold the unpacked profile. */
function usedProfile(flag) {
  const [, file] = /^-Cprofile-use=(.+)$/.exec(flag)
  assert.ok(path.isAbsolute(file))
  assert.deepEqual(fs.readFileSync(file), unpacked)
  return file
}

test("the build's flags: the profile added to RUSTFLAGS, after the caller's own, for napi build to extend", { skip }, () => {
  const box = sandbox()
  try {
    const plain = profileEnv(box.env(), made.host)
    assert.match(plain.note, /^with the profile/)
    assert.deepEqual(Object.keys(plain.env), ["RUSTFLAGS"])
    usedProfile(plain.env.RUSTFLAGS)

    const own = profileEnv(box.env({ RUSTFLAGS: " -g  -Cdebuginfo=1 " }))
    const flags = own.env.RUSTFLAGS.split(/\s+/)
    assert.deepEqual(flags.slice(0, 2), ["-g", "-Cdebuginfo=1"])
    assert.equal(flags.length, 3)
    usedProfile(flags[2])

    // RUSTFLAGS set makes cargo ignore config rustflags already: the profile displaces nothing.
    fs.writeFileSync(path.join(box.cargoHome, "config.toml"), '[build]\nrustflags = ["-Ctarget-cpu=native"]\n')
    assert.match(profileEnv(box.env({ RUSTFLAGS: "-g" })).note, /^with the profile/)
  } finally {
    box.cleanup()
  }
})

test("the build's flags: the caller's CARGO_ENCODED_RUSTFLAGS kept field by field (a space inside a flag too)", { skip }, () => {
  const box = sandbox()
  try {
    const own = ["-Clink-arg=-Wl,-rpath,/opt/a dir", "-g"].join("\x1f")
    const { env } = profileEnv(box.env({ CARGO_ENCODED_RUSTFLAGS: own, RUSTFLAGS: "-Cignored" }))
    assert.deepEqual(Object.keys(env), ["CARGO_ENCODED_RUSTFLAGS"])
    const flags = env.CARGO_ENCODED_RUSTFLAGS.split("\x1f")
    assert.deepEqual(flags.slice(0, 2), ["-Clink-arg=-Wl,-rpath,/opt/a dir", "-g"])
    assert.equal(flags.length, 3)
    usedProfile(flags[2])
    // Set but empty is set: cargo then reads no other source, and neither does the profile.
    const empty = profileEnv(box.env({ CARGO_ENCODED_RUSTFLAGS: "", RUSTFLAGS: "-Cignored" }))
    assert.deepEqual(empty.env.CARGO_ENCODED_RUSTFLAGS.split("\x1f").length, 1)
    usedProfile(empty.env.CARGO_ENCODED_RUSTFLAGS)
  } finally {
    box.cleanup()
  }
})

test("the build goes without the profile where its flag would displace or clash with the caller's rustflags", { skip }, () => {
  const box = sandbox()
  try {
    assertWithout(box.env({ CARGO_BUILD_RUSTFLAGS: "-g" }), made.host, /displace the rustflags of CARGO_BUILD_RUSTFLAGS/)
    assertWithout(box.env({ CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS: "-g" }), made.host, /CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS/)
    const config = path.join(box.cargoHome, "config.toml")
    fs.writeFileSync(config, '[target.x86_64-unknown-linux-gnu]\nrustflags = ["-Ctarget-cpu=native"]\n')
    assertWithout(box.env(), made.host, new RegExp(config.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    fs.rmSync(config)
    assertWithout(box.env({ RUSTFLAGS: "-Cprofile-generate=/tmp/x" }), made.host, /have a profile or coverage flag/)
    assertWithout(box.env({ CARGO_ENCODED_RUSTFLAGS: "-Cprofile-use=/tmp/x.profdata" }), made.host, /have a profile or coverage flag/)
    assertWithout(box.env({ RUSTFLAGS: "-C instrument-coverage" }), made.host, /have a profile or coverage flag/)
    // A commented-out line or another key's value is not a rustflags setting; `build.rustflags` is.
    fs.writeFileSync(config, '# rustflags = ["-g"]\n[env]\nX = "rustflags"\n')
    assert.match(profileEnv(box.env(), made.host).note, /^with the profile/)
    fs.writeFileSync(config, 'build.rustflags = ["-g"]\n')
    assertWithout(box.env(), made.host, /displace the rustflags of/)
  } finally {
    box.cleanup()
  }
})

test("the build goes without the profile when asked to, or where it would not apply (another rustc or target)", { skip }, () => {
  const box = sandbox()
  try {
    assertWithout(box.env({ GENKIT_FOR_MAPLE_PGO: "0" }), made.host, /GENKIT_FOR_MAPLE_PGO=0/)
    assertWithout(box.env(), "aarch64-apple-darwin", new RegExp(`made for ${made.host}, this build is for aarch64-apple-darwin`))
    const older = meta.rustcVV.replace(/^release: .*$/m, "release: 1.94.1").replace(/^rustc \S+/, "rustc 1.94.1")
    assertWithout(box.env({ RUSTC: box.rustc("rustc-other", box.answer(older)) }), made.host, /this is rustc 1\.94\.1 .*names would not match/)
    // The same release and commit built on another LLVM (a distribution's rustc): other hashes.
    const distro = meta.rustcVV.replace(/^LLVM version: .*$/m, "LLVM version: 18.1.8")
    assertWithout(box.env({ RUSTC: box.rustc("rustc-distro", box.answer(distro)) }), made.host, /of another build \(rustc -vV differs\)/)
    const silent = box.rustc("rustc-silent", "exit 1")
    assertWithout(box.env({ RUSTC: silent }), made.host, /rustc -vV did not answer/)
    // The same rustc and target: with it (the host's triple when no target is named).
    assert.match(profileEnv(box.env(), undefined).note, /^with the profile/)
  } finally {
    box.cleanup()
  }
})

test("npm run build crosses with the glibc 2.17 toolchain only for the linux-x64-gnu binary, and keeps a caller's --target", () => {
  const { plan, targetArg, TRIPLE } = require("../scripts/build.js")
  // How the target is read: the last of its spellings, none after `--` (cargo's), else CARGO_BUILD_TARGET.
  assert.equal(targetArg(["--target", "a"], {}), "a")
  assert.equal(targetArg(["--target=a", "-t", "b"], {}), "b")
  assert.equal(targetArg(["-t=c", "--strip"], {}), "c")
  assert.equal(targetArg(["--", "--target", "d"], {}), undefined)
  assert.equal(targetArg([], { CARGO_BUILD_TARGET: "e" }), "e")
  assert.equal(targetArg(["--target", "a"], { CARGO_BUILD_TARGET: "e" }), "a")
  assert.equal(targetArg([], { CARGO_BUILD_TARGET: "" }), undefined)

  const host = (args, env = {}, platform = "linux", arch = "x64", glibc = true) => plan(args, env, platform, arch, glibc)
  // The linux-x64-gnu binary on a glibc x64 host: the cross toolchain, the profile's target.
  for (const args of [[], ["--target", TRIPLE], ["--strip"]]) {
    const p = host(args)
    assert.equal(p.cross, true)
    assert.equal(p.target, TRIPLE)
    assert.deepEqual(p.args.slice(-3), ["--use-napi-cross", "--target", TRIPLE])
    assert.equal(targetArg(p.args, {}), TRIPLE)
  }
  // Another target: the caller's, as asked (it used to be replaced by the toolchain's own --target).
  for (const [args, env] of [[["--target", "aarch64-unknown-linux-gnu"], {}], [["-t=aarch64-unknown-linux-gnu"], {}], [[], { CARGO_BUILD_TARGET: "aarch64-unknown-linux-gnu" }]]) {
    const p = host(args, env)
    assert.equal(p.cross, false)
    assert.equal(p.target, "aarch64-unknown-linux-gnu")
    assert.ok(!p.args.includes("--use-napi-cross"))
    assert.equal(targetArg(p.args, env), "aarch64-unknown-linux-gnu")
  }
  // Plain napi build elsewhere, or when asked for the host's toolchain; the profile's target is then the host's.
  for (const p of [host([], { GENKIT_FOR_MAPLE_HOST_TOOLCHAIN: "1" }), host([], {}, "linux", "x64", false), host([], {}, "darwin", "arm64"), host([], {}, "linux", "arm64")]) {
    assert.equal(p.cross, false)
    assert.equal(p.target, undefined)
    assert.deepEqual(p.args, ["build", "--platform", "--release", "--js", "binding.js", "--dts", "binding.d.ts"])
  }
})

test("the profile is unpacked once a version; other versions' copies go after an hour, younger ones and other files stay", () => {
  const { unpack } = require("../scripts/pgo-profile.js")
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gfm-unpack-"))
  try {
    const packed = fs.readFileSync(PROFILE)
    const old = Date.now() / 1000 - 2 * 3600
    const make = (name, stale) => {
      fs.writeFileSync(path.join(dir, name), "x")
      if (stale) fs.utimesSync(path.join(dir, name), old, old)
    }
    make("genkit-for-maple-0000000000000000.profdata", true) // another version, stale: removed
    make("genkit-for-maple-1111111111111111.profdata.123.partial", true) // another build's partial copy, stale: removed
    make("genkit-for-maple-2222222222222222.profdata", false) // another version, young (in use): kept
    make("genkit-for-maple-3333333333333333.profdata.9.partial", false) // a partial copy being written: kept
    make("other-tool.profdata", true) // not ours: kept
    make("genkit-for-maple-notes.txt", true) // not a profile: kept
    const file = unpack(dir, packed)
    assert.equal(path.dirname(file), dir)
    assert.match(path.basename(file), /^genkit-for-maple-[0-9a-f]{16}\.profdata$/)
    assert.deepEqual(fs.readFileSync(file), unpacked)
    assert.deepEqual(fs.readdirSync(dir).sort(), [
      "genkit-for-maple-2222222222222222.profdata",
      "genkit-for-maple-3333333333333333.profdata.9.partial",
      path.basename(file),
      "genkit-for-maple-notes.txt",
      "other-tool.profdata",
    ].sort())
    // Unpacked again: the same file, left as it is; a copy cut short is written again.
    const mtime = fs.statSync(file).mtimeMs
    assert.equal(unpack(dir, packed), file)
    assert.equal(fs.statSync(file).mtimeMs, mtime)
    fs.truncateSync(file, 100)
    fs.utimesSync(file, old, old) // its own version, however old, is never removed as stale
    assert.equal(unpack(dir, packed), file)
    assert.deepEqual(fs.readFileSync(file), unpacked)
    assert.ok(!fs.readdirSync(dir).some((f) => f.endsWith(".partial") && f.includes(String(process.pid))))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test("the sources digest reads Rust without its comments and layout, and with every literal as written", () => {
  const code = [
    "/// A doc comment.",
    "#[inline]",
    "pub fn f<'a>(s: &'a str) -> usize { // why",
    "    let url = \"http://x // not a comment\"; /* a block /* nested */ comment */",
    "    let raw = r#\"a \" // b /* c\"#;",
    "    let quote = '\"'; let escaped = '\\''; let slash = b'/'; let wide = '\u{1F600}'; let face = '😀';",
    "    'outer: loop { break 'outer; }",
    "    s.len() + url.len() + raw.len()",
    "}",
  ].join("\n")
  const expected =
    "#[inline] pub fn f<'a>(s: &'a str) -> usize { let url = \"http://x // not a comment\"; let raw = r#\"a \" // b /* c\"#; " +
    "let quote = '\"'; let escaped = '\\''; let slash = b'/'; let wide = '\u{1F600}'; let face = '😀'; 'outer: loop { break 'outer; } s.len() + url.len() + raw.len() }"
  assert.equal(rustCode(code), expected)
  // Comments and layout alone: the same code.
  const relaid = code.replace("// why", "// another reason\n\n   /** more */").replace(/^ {4}/gm, "\t\t").replace("/// A doc comment.", "//! Inner.\n/// Other words.")
  assert.equal(rustCode(relaid), expected)
  // Any change to a token or a literal (whitespace or a comment-like text inside one too): another.
  for (const [from, to] of [
    ["s.len() +", "s.len() -"],
    ["// not a comment", "//  not a comment"],
    ["// b /* c", "// b /* d"],
    ["let quote = '\"'", "let quote = '\\''"],
    ["b'/'", "b'*'"],
    ["'outer: loop", "'inner: loop"],
    ["#[inline]", "#[inline(always)]"],
  ]) {
    assert.ok(code.includes(from), from)
    assert.notEqual(rustCode(code.replace(from, to)), expected, `${from} -> ${to}`)
  }
})
