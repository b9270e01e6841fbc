"use strict"
// The profile of the profile-guided release build (BENCHMARKS.md "Stop 46"): LLVM's block counts of
// scripts/pgo-train.js run under an instrumented addon, which rustc's `-Cprofile-use` reads to lay
// out and inline the hot paths (the span reader, the writers, the scrubber's scan, the OTLP encoder).
//
// pgo/genkit-for-maple.profdata.gz: the indexed profile (`llvm-profdata merge --sparse`), gzipped.
// pgo/profile.json: what it was made with and from:
//   rustcVV  `rustc -vV`'s whole answer. The profile names each function by its symbol, whose hash
//            cargo derives from that answer (version, commit, host, LLVM) and from the target and
//            the features: with another rustc no name matches and the profile would do nothing,
//            silently. Its `host` is the target the profile was made for (scripts/pgo.js builds for
//            the host), for the same reason; `parseRustc` reads both;
//   llvm     the LLVM major version of the llvm-profdata that wrote it (at most rustc's: pgo.js
//            checks), for the record;
//   sources  the SHA-256 of the sources and training inputs it was made from (`sourcesDigest`;
//            __test__/pgo.test.js fails when they changed since).
// `npm run pgo` (scripts/pgo.js) writes both files.
//
// The build uses the profile only where it applies (`profileEnv`): the same rustc and target, and no
// rustflags of the caller's that the flag would displace. A profile made from other sources is still
// used: LLVM drops the counts of each function whose control flow changed ("function control flow
// change detected (hash mismatch)" warnings) and optimizes it as without a profile. The answers
// never depend on the profile.
const { spawnSync } = require("node:child_process")
const crypto = require("node:crypto")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const zlib = require("node:zlib")

const root = path.join(__dirname, "..")
const PROFILE = path.join(root, "pgo", "genkit-for-maple.profdata.gz")
const META = path.join(root, "pgo", "profile.json")

/**
 * What the profile was made of, relative to the root, sorted: the files rustc compiles into the
 * addon, and the training run with its inputs. Not js/: the wrapper's changes rarely change which
 * native paths run, and asking for a new profile at each would be a cost without a gain.
 */
function sources() {
  const out = [
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "core/Cargo.toml",
    "scripts/pgo-train.js",
    "bench/synth.js",
    "__test__/helpers/fixtures.js",
    "__test__/helpers/prng.js",
    "__test__/fixtures/genkit-1.42-scenario-spans.jsonl",
    "__test__/fixtures/genkit-1.42-plugin-spans.jsonl",
  ]
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

/**
 * Rust source `text` without what cannot change the compiled code, and so the profile: comments
 * (line, block, nested and doc comments: a doc comment is an attribute rustdoc reads, which the
 * control flow LLVM's profile is keyed by never sees) each as one space, and each run of whitespace
 * as one space. String, byte-string, raw-string and character literals are kept as written (a `//`
 * or `"` inside one is not a comment or a string). Conservative: tokens merely spaced differently
 * (`a+b`, `a + b`) count as a change, so a code change can never look like none.
 */
function rustCode(text) {
  let out = ""
  let i = 0
  const n = text.length
  /** Appends one space unless the output already ends with one (or is empty). */
  const space = () => {
    if (out.length > 0 && out[out.length - 1] !== " ") out += " "
  }
  /** The end of a quoted literal opened by the quote at `at` (escapes skipped). */
  const quoted = (at, quote) => {
    let j = at + 1
    while (j < n && text[j] !== quote) j += text[j] === "\\" ? 2 : 1
    return Math.min(j + 1, n)
  }
  while (i < n) {
    const c = text[i]
    const next = text[i + 1]
    if (c === "/" && next === "/") {
      while (i < n && text[i] !== "\n") i++
      space()
    } else if (c === "/" && next === "*") {
      let depth = 0
      do {
        if (text[i] === "/" && text[i + 1] === "*") {
          depth++
          i += 2
        } else if (text[i] === "*" && text[i + 1] === "/") {
          depth--
          i += 2
        } else i++
      } while (depth > 0 && i < n)
      space()
    } else if (/\s/.test(c)) {
      while (i < n && /\s/.test(text[i])) i++
      space()
    } else if (/[rb]/.test(c) && !/[\w]/.test(text[i - 1] ?? "") && /^(b?r)(#*)"/.test(text.slice(i, i + 258))) {
      // A raw string r"..", r#".."#, br#".."#: up to the quote followed by as many hashes.
      const [open, , hashes] = /^(b?r)(#*)"/.exec(text.slice(i, i + 258))
      const close = text.indexOf(`"${hashes}`, i + open.length)
      const end = close < 0 ? n : close + 1 + hashes.length
      out += text.slice(i, end)
      i = end
    } else if (c === '"') {
      const end = quoted(i, '"')
      out += text.slice(i, end)
      i = end
    } else if (c === "'") {
      // A character literal ('x', '\n', '"', '\u{1F600}') or a lifetime / label ('a, 'static).
      const point = text.codePointAt(i + 1)
      const width = point === undefined ? 0 : point > 0xffff ? 2 : 1
      const end = text[i + 1] === "\\" ? quoted(i, "'") : text[i + 1 + width] === "'" ? i + 2 + width : i + 1
      out += text.slice(i, end)
      i = end
    } else {
      out += c
      i++
    }
  }
  return out.trimEnd()
}

/**
 * SHA-256 of the names and contents of `sources()`, line endings as LF (a Windows checkout with
 * `core.autocrlf` has the same digest), Rust files as `rustCode` reads them (an edit of comments or
 * layout alone asks for no new profile): pgo/profile.json's `sources`.
 */
function sourcesDigest() {
  const hash = crypto.createHash("sha256")
  for (const file of sources()) {
    let text = fs.readFileSync(path.join(root, file), "utf8").replace(/\r\n/g, "\n")
    if (file.endsWith(".rs")) text = rustCode(text)
    const bytes = Buffer.from(text, "utf8")
    hash.update(`${file}\0${bytes.length}\0`)
    hash.update(bytes)
  }
  return hash.digest("hex")
}

/**
 * A `rustc -vV` answer read: `{ rustc, release, vv, host, llvm, stable }` (`rustc` its release and
 * commit hash for messages, `vv` the answer with line endings as LF, trimmed), or undefined when it
 * has no release or LLVM version.
 */
function parseRustc(text) {
  const vv = text.replace(/\r\n/g, "\n").trim()
  const field = (name) => new RegExp(`^${name}: (\\S+)`, "m").exec(vv)?.[1]
  const release = field("release")
  const commit = field("commit-hash")
  const llvm = Number(field("LLVM version")?.split(".")[0])
  if (release === undefined || !(llvm > 0)) return undefined
  const stable = /^\d+\.\d+\.\d+$/.test(release) && /^[0-9a-f]{40}$/.test(commit ?? "")
  return { rustc: `${release} (${commit ?? "unknown"})`, release, vv, host: field("host"), llvm, stable }
}

/** `rustc -vV` of the rustc cargo runs for this root, read by `parseRustc`; undefined when it fails. */
function rustcVersion(env = process.env) {
  const r = spawnSync(env.RUSTC || "rustc", ["-vV"], { cwd: root, encoding: "utf8", env })
  return r.status === 0 ? parseRustc(r.stdout ?? "") : undefined
}

/** Writes `data` to `file` through a temporary file beside it and a rename. */
function writeAtomic(file, data) {
  const partial = `${file}.${process.pid}.partial`
  fs.writeFileSync(partial, data)
  try {
    fs.renameSync(partial, file)
  } catch (error) {
    fs.rmSync(partial, { force: true })
    throw error
  }
}

/** Cargo config files that set rustflags, which RUSTFLAGS would displace (cargo reads one source). */
function configRustflags(env) {
  const files = []
  for (let dir = root; ; dir = path.dirname(dir)) {
    files.push(path.join(dir, ".cargo", "config.toml"), path.join(dir, ".cargo", "config"))
    if (path.dirname(dir) === dir) break
  }
  const home = env.CARGO_HOME || path.join(os.homedir(), ".cargo")
  files.push(path.join(home, "config.toml"), path.join(home, "config"))
  return files.filter((f) => {
    try {
      return /^[^#\n]*\brustflags\s*=/m.test(fs.readFileSync(f, "utf8"))
    } catch {
      return false
    }
  })
}

/**
 * The profile unpacked (once a version) into `dir`; its path. Other versions' files an hour old or
 * more are removed (a younger one may be in use by a build that started before a pull).
 */
function unpack(dir, packed) {
  const digest = crypto.createHash("sha256").update(packed).digest("hex").slice(0, 16)
  const name = `genkit-for-maple-${digest}.profdata`
  const file = path.join(dir, name)
  fs.mkdirSync(dir, { recursive: true })
  for (const old of fs.readdirSync(dir)) {
    if (old.startsWith(name) || !old.startsWith("genkit-for-maple-") || !/\.profdata(\.\d+\.partial)?$/.test(old)) continue
    try {
      if (Date.now() - fs.statSync(path.join(dir, old)).mtimeMs > 3600_000) fs.rmSync(path.join(dir, old), { force: true })
    } catch {
      // Removed by another build meanwhile.
    }
  }
  const bytes = zlib.gunzipSync(packed)
  // A copy cut short (a crash while writing it: the rename makes that unlikely) is written again.
  if (!fs.existsSync(file) || fs.statSync(file).size !== bytes.length) {
    try {
      writeAtomic(file, bytes)
    } catch (error) {
      // Another build renamed the same bytes first (on Windows the rename fails while its rustc
      // reads the file): that file is the one to use.
      if (!fs.existsSync(file)) throw error
    }
  }
  return file
}

/**
 * The environment that makes cargo build the addon for `target` (a triple; the host's when absent)
 * with the profile: `{ env, note }`, where `env` adds `-Cprofile-use=<file>` to the caller's
 * `CARGO_ENCODED_RUSTFLAGS` when it is set, else to `RUSTFLAGS` (which napi build extends with its
 * own flags, such as musl's `-crt-static`). `{ env: {}, note }` says why the build goes without it:
 * GENKIT_FOR_MAPLE_PGO=0; no profile, or one that cannot be read; another rustc or target than the
 * profile's (it would not apply); rustflags of the caller's that RUSTFLAGS would displace
 * (`CARGO_BUILD_RUSTFLAGS`, `CARGO_TARGET_<triple>_RUSTFLAGS`, a cargo config's `rustflags`); a
 * profile flag of the caller's own.
 */
function profileEnv(env = process.env, target = undefined) {
  const without = (why) => ({ env: {}, note: `without the profile (${why})` })
  if (env.GENKIT_FOR_MAPLE_PGO === "0") return without("GENKIT_FOR_MAPLE_PGO=0")
  let meta
  let packed
  try {
    meta = JSON.parse(fs.readFileSync(META, "utf8"))
    packed = fs.readFileSync(PROFILE)
  } catch (error) {
    return without(`pgo/ has no readable profile: ${error.message}`)
  }
  const made = parseRustc(String(meta.rustcVV))
  if (made === undefined) return without("pgo/profile.json names no rustc")
  const rustc = rustcVersion(env)
  if (rustc === undefined) return without("rustc -vV did not answer")
  // The same answer means the same LLVM too, so the profile (written by an llvm-profdata no newer
  // than that LLVM) is readable.
  if (rustc.vv !== made.vv) return without(`it was made with rustc ${made.rustc}, this is rustc ${rustc.rustc}${rustc.rustc === made.rustc ? " of another build (rustc -vV differs)" : ""}: its names would not match`)
  const triple = target ?? rustc.host
  if (triple !== made.host) return without(`it was made for ${made.host}, this build is for ${triple}`)
  // Cargo takes its rustflags from one source: CARGO_ENCODED_RUSTFLAGS, else RUSTFLAGS (either set,
  // even empty), else the target's and its cfg sections' (environment and config files), else the
  // build's. Any of those would be displaced by a RUSTFLAGS of ours (a config section for another
  // triple too, to be safe).
  if (env.CARGO_ENCODED_RUSTFLAGS === undefined && env.RUSTFLAGS === undefined) {
    const displaced = Object.keys(env).filter((k) => k === "CARGO_BUILD_RUSTFLAGS" || /^CARGO_TARGET_.+_RUSTFLAGS$/.test(k))
    displaced.push(...configRustflags(env))
    if (displaced.length > 0) return without(`its flag would displace the rustflags of ${displaced.join(", ")}`)
  }
  const own = env.CARGO_ENCODED_RUSTFLAGS ?? env.RUSTFLAGS ?? ""
  if (/profile-(use|generate|sample-use)|instrument-coverage/.test(own)) return without("the caller's rustflags have a profile or coverage flag, which rustc does not take with -Cprofile-use")
  // RUSTFLAGS is split at whitespace: a root with a space in its path unpacks into the temp dir.
  let dir = path.join(root, "target", "pgo")
  if (env.CARGO_ENCODED_RUSTFLAGS === undefined && /\s/.test(dir)) {
    dir = path.join(os.tmpdir(), `genkit-for-maple-pgo-${process.getuid?.() ?? os.userInfo().username}`)
  }
  let file
  try {
    file = unpack(dir, packed)
  } catch (error) {
    return without(`unpacking ${path.relative(root, PROFILE)} failed: ${error.message}`)
  }
  const flag = `-Cprofile-use=${file}`
  const note = `with the profile ${path.relative(root, PROFILE)}`
  if (env.CARGO_ENCODED_RUSTFLAGS !== undefined) {
    return { env: { CARGO_ENCODED_RUSTFLAGS: own === "" ? flag : `${own}\x1f${flag}` }, note }
  }
  if (/\s/.test(file)) return without(`its unpacked path has whitespace: ${file}`)
  return { env: { RUSTFLAGS: own.trim() === "" ? flag : `${own.trim()} ${flag}` }, note }
}

module.exports = { PROFILE, META, profileEnv, parseRustc, rustcVersion, sources, sourcesDigest, rustCode, writeAtomic, unpack }
