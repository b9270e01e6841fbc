#!/usr/bin/env node
"use strict"
// The release build of the addon (`npm run build`, the first step of `npm test`).
//
// On a Linux x64 host building the linux-x64-gnu binary, it links against glibc 2.17 (issue 12:
// Amazon Linux 2, Debian 10/11, Ubuntu 18.04/20.04, RHEL/CentOS 7 and 8 load it) with the prebuilt
// crosstool-NG toolchain of `@napi-rs/cross-toolchain-x64-target-x86_64` (a devDependency: gcc
// 4.8.5, a glibc 2.17 sysroot) through `napi build --use-napi-cross`:
// - napi's own download of that toolchain fetches the package at the version of
//   `@napi-rs/cross-toolchain` it ships with, which is not published for this target (the newest
//   is 1.0.0), so the toolchain is unpacked here, from the devDependency, into the folder napi
//   reads (`~/.napi-rs/cross-toolchain/<version>/<triple>`; napi skips the download when its
//   package.json is there).
// - gcc 4.8.5 cannot compile simdutf's AVX2/AVX-512 kernels, so C++ is compiled by the host's g++
//   with the pre-C++11 string ABI (`-D_GLIBCXX_USE_CXX11_ABI=0`, the ABI of the sysroot's
//   libstdc++) and linked by the toolchain: the binary needs GLIBCXX_3.4 only.
// __test__/glibc-floor.test.js checks the floor with `objdump -T` and fails when it rises.
//
// Elsewhere (macOS, Windows, arm64, musl), for a `--target` other than x86_64-unknown-linux-gnu (the
// caller's target is kept: cross-compiling to aarch64, say) and with GENKIT_FOR_MAPLE_HOST_TOOLCHAIN=1
// it is the plain `napi build` (a linux-x64-gnu binary then needs the build machine's glibc).
//
// It is profile-guided (rustc's `-Cprofile-use` with pgo/'s profile; `npm run pgo` makes it:
// scripts/pgo.js) where the profile applies: the rustc and the target it was made with, and no
// rustflags of the caller's it would displace (scripts/pgo-profile.js); GENKIT_FOR_MAPLE_PGO=0
// builds without it. Extra arguments are napi build's (`node scripts/build.js --target-dir ...`).
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { profileEnv } = require("./pgo-profile.js")

const root = path.join(__dirname, "..")
const TRIPLE = "x86_64-unknown-linux-gnu"

function isGlibc() {
  try {
    return Boolean(process.report.getReport().header.glibcVersionRuntime)
  } catch {
    return false
  }
}

/** The folder `napi build --use-napi-cross` reads the toolchain from, unpacked when missing. */
function toolchain() {
  const cliDir = path.dirname(require.resolve("@napi-rs/cli/package.json", { paths: [root] }))
  const { version } = require(require.resolve("@napi-rs/cross-toolchain/package.json", { paths: [cliDir, root] }))
  const dir = path.join(os.homedir(), ".napi-rs", "cross-toolchain", version, TRIPLE)
  if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "bin", `${TRIPLE}-gcc`))) return dir
  const archive = require("@napi-rs/cross-toolchain-x64-target-x86_64").toolchainPath
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  console.log(`build: unpacking the glibc 2.17 toolchain into ${dir}`)
  const r = spawnSync("tar", ["-xJf", archive, "-C", dir], { stdio: "inherit" })
  if (r.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true })
    throw new Error(`tar -xJf ${archive} failed (status ${r.status}); xz-utils is needed to unpack the toolchain`)
  }
  return dir
}

function napi(args, env) {
  const cliDir = path.dirname(require.resolve("@napi-rs/cli/package.json", { paths: [root] }))
  const bin = path.join(cliDir, require(path.join(cliDir, "package.json")).bin.napi)
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, stdio: "inherit", env: { ...process.env, ...env } })
  return r.status ?? 1
}

/**
 * The triple napi build is given: a `--target <t>`, `--target=<t>`, `-t <t>` or `-t=<t>` among its
 * arguments (the last one, as napi's parser takes; not after `--`, which are cargo's), else
 * CARGO_BUILD_TARGET, else undefined (the host's).
 */
function targetArg(args, env = process.env) {
  let target
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    if (args[i] === "--target" || args[i] === "-t") target = args[++i]
    else if (args[i].startsWith("--target=")) target = args[i].slice("--target=".length)
    else if (args[i].startsWith("-t=")) target = args[i].slice("-t=".length)
  }
  return target ?? (env.CARGO_BUILD_TARGET || undefined)
}

/**
 * How `npm run build` builds for `args` (napi build's extra arguments) in `env` on a host of
 * `platform`/`arch`: `{ cross, target, args }`. `cross`: through the glibc 2.17 toolchain, only for
 * the linux-x64-gnu binary on a glibc x64 Linux host (no target named, or that one); `target` the
 * triple the profile must fit (the host's when undefined); `args` napi build's whole argument list.
 */
function plan(args, env = process.env, platform = process.platform, arch = process.arch, glibc = isGlibc()) {
  const asked = targetArg(args, env)
  const cross = platform === "linux" && arch === "x64" && glibc && env.GENKIT_FOR_MAPLE_HOST_TOOLCHAIN !== "1" && (asked === undefined || asked === TRIPLE)
  const base = ["build", "--platform", "--release", "--js", "binding.js", "--dts", "binding.d.ts", ...args]
  return cross ? { cross, target: TRIPLE, args: [...base, "--use-napi-cross", "--target", TRIPLE] } : { cross, target: asked, args: base }
}

function main() {
  const how = plan(process.argv.slice(2))
  // Profile-guided where pgo/'s profile applies (scripts/pgo-profile.js says when, and the line
  // below which way this build went).
  const pgo = profileEnv(process.env, how.target)
  console.log(`build: release build ${pgo.note}`)
  if (!how.cross) return napi(how.args, pgo.env)
  toolchain()
  const underscored = TRIPLE.replace(/-/g, "_")
  return napi(how.args, {
    ...pgo.env,
    [`CXX_${underscored}`]: process.env[`CXX_${underscored}`] ?? "g++",
    [`CXXFLAGS_${underscored}`]: `-D_GLIBCXX_USE_CXX11_ABI=0 ${process.env[`CXXFLAGS_${underscored}`] ?? ""}`.trim(),
  })
}

if (require.main === module) process.exit(main())

module.exports = { plan, targetArg, TRIPLE }
