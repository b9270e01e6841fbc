#!/usr/bin/env node
"use strict"
// `npm run bench`: the pure-JS GenkitForMaple against the native one (mode "reference") and native
// mode "complete" (the default), one Node process per
// comparison (bench/case.js), and one table. Writes bench/results.json.
//
//   node bench/run.js                 every case (a few minutes)
//   node bench/run.js --smoke         two cases, a few iterations: checks it works (CI; also
//                                     when GENKIT_FOR_MAPLE_SMOKE=1)
//   node bench/run.js --only 'model-1000000'   cases whose id matches the regular expression
//                                     (without bench/content.js's table)
//
// Needs the release build of the addon (`npm run build`). Figures: net of the attribute-map copy
// each op makes (see bench/case.js), medians over interleaved rounds.

const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")

const argv = process.argv.slice(2)
const smoke = argv.includes("--smoke") || process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
const onlyAt = argv.indexOf("--only")
const only = onlyAt >= 0 ? new RegExp(argv[onlyAt + 1]) : undefined

try {
  require("../binding.js")
} catch (error) {
  console.error(`bench: the native addon does not load (${error.message}); run \`npm run build\` first`)
  process.exit(1)
}

// The floor variant needs the benchmark-only exports, compiled only with the cargo feature `bench`
// (never in the shipped or the test build): built here, beside the real addon, into
// target/bench-addon/ (about a minute), with the real addon's profile (scripts/pgo-profile.js): it
// fits the dependencies' code; this crate's own functions get no counts, since the `bench` feature
// changes their symbols' hashes, so the floor's own napi calls are compiled as without a profile.
const root = path.join(__dirname, "..")
const benchDir = path.join(root, "target", "bench-addon")
{
  const npx = process.platform === "win32" ? "npx.cmd" : "npx"
  const args = ["napi", "build", "--platform", "--release", "--features", "bench", "--output-dir", benchDir, "--no-js", "--dts", "bench-binding.d.ts"]
  const pgo = require("../scripts/pgo-profile.js").profileEnv()
  process.stderr.write(`bench: building the addon with the \`bench\` feature into target/bench-addon/, ${pgo.note}\n`)
  const r = spawnSync(npx, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], shell: process.platform === "win32", env: { ...process.env, ...pgo.env } })
  if (r.status !== 0) {
    console.error("bench: the build with --features bench failed")
    process.exit(1)
  }
}
const benchAddon = fs.readdirSync(benchDir).find((f) => f.endsWith(".node"))
if (benchAddon === undefined) {
  console.error(`bench: no .node file in ${benchDir}`)
  process.exit(1)
}
process.env.GENKIT_FOR_MAPLE_BENCH_ADDON = path.join(benchDir, benchAddon)

const SIZES = [1_000, 10_000, 100_000, 1_000_000, 5_000_000]
const all = [
  "corpus-model",
  "corpus-tool",
  "corpus-tool.v2",
  "corpus-flow",
  "corpus-other",
  ...SIZES.flatMap((size) => [`model-${size}-ascii`, `model-${size}-multi`]),
]
const cases = smoke ? ["corpus-model", "corpus-flow", "model-10000-multi"] : all.filter((id) => !only || only.test(id))

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ")
const loadBefore = load()
const started = Date.now()
const results = []
let failed = false
for (const id of cases) {
  const args = ["--expose-gc", "--max-semi-space-size=64", path.join(__dirname, "case.js"), id]
  if (smoke) args.push("--smoke")
  const r = spawnSync(process.execPath, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 })
  const line = r.stdout.trim().split("\n").pop()
  if (r.status !== 0 || !line) {
    console.error(`bench: case ${id} failed (exit ${r.status}${r.signal ? `, ${r.signal}` : ""})`)
    failed = true
    continue
  }
  const result = JSON.parse(line)
  results.push(result)
  process.stderr.write(`  ${id} done\n`)
}

// ------------------------------------------------------------------------------------------
const rows = results.map((r) => {
  const t = r.time
  const copy = t.copy.median
  const net = (v) => (v === undefined ? undefined : Math.max(v.median - copy, 1e-9))
  const spread = (v) => (v === undefined ? undefined : (100 * (v.p75 - v.p25)) / 2 / v.median)
  const heap = (v) => (v === undefined ? undefined : Math.max(0, v.bytesPerOp - r.heap.copy.bytesPerOp))
  const js = net(t.js)
  const nat = net(t.native)
  const floor = net(t.floor)
  const complete = net(t.complete)
  const ref = net(t.ref)
  const writesRef = net(t.writesRef)
  const writesComplete = net(t.writesComplete)
  return {
    case: r.case,
    kind: r.kind,
    spans: r.spans,
    inBytes: r.inBytes,
    copyNs: copy,
    jsNs: js,
    jsSpreadPct: spread(t.js),
    nativeNs: nat,
    nativeSpreadPct: spread(t.native),
    completeNs: complete,
    completeSpreadPct: spread(t.complete),
    completeOverReference: complete / nat,
    completeHeapBytes: heap(r.heap.complete),
    refNs: ref,
    refSpreadPct: spread(t.ref),
    refOverNative: ref / nat,
    refOverComplete: ref / complete,
    ratio: js / nat,
    jsMBs: (r.inBytes / js) * 1000,
    nativeMBs: (r.inBytes / nat) * 1000,
    floorNs: floor,
    nativeOverFloor: floor === undefined ? undefined : nat / floor,
    // Model spans: writing each mode's attributes alone (values made beforehand), and complete
    // mode's extra writes against mode "reference"'s whole span.
    writesRefNs: writesRef,
    writesCompleteNs: writesComplete,
    extraWritesOverNative: writesRef === undefined ? undefined : (writesComplete - writesRef) / nat,
    added: r.added,
    jsHeapBytes: heap(r.heap.js),
    nativeHeapBytes: heap(r.heap.native),
    floorHeapBytes: heap(r.heap.floor),
    outputStringBytes: r.outputStringBytes,
  }
})

const fmtNs = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(1)} µs` : `${ns.toFixed(0)} ns`)
const fmtBytes = (b) => (b === undefined ? "–" : b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(1)} MiB` : b >= 1024 ? `${(b / 1024).toFixed(1)} KiB` : `${b.toFixed(0)} B`)
const header = [
  "case",
  "in (UTF-8)",
  "reference TS /op (±)",
  "ref/native",
  "ref/complete",
  "JS /op (±)",
  "native /op (±)",
  "complete /op (±)",
  "complete/native",
  "JS/native",
  "JS MB/s",
  "native MB/s",
  "floor /op",
  "native/floor",
  "writes ref / complete (attributes)",
  "extra writes/native",
  "JS heap/op",
  "native heap/op",
  "complete heap/op",
  "out strings",
]
const table = [
  `| ${header.join(" | ")} |`,
  `| ${header.map(() => "---").join(" | ")} |`,
  ...rows.map((r) =>
    `| ${[
      r.case,
      fmtBytes(r.inBytes),
      `${fmtNs(r.refNs)} (±${r.refSpreadPct.toFixed(0)}%)`,
      `**${r.refOverNative.toFixed(2)}x**`,
      `**${r.refOverComplete.toFixed(2)}x**`,
      `${fmtNs(r.jsNs)} (±${r.jsSpreadPct.toFixed(0)}%)`,
      `${fmtNs(r.nativeNs)} (±${r.nativeSpreadPct.toFixed(0)}%)`,
      `${fmtNs(r.completeNs)} (±${r.completeSpreadPct.toFixed(0)}%)`,
      `${r.completeOverReference.toFixed(2)}x`,
      `**${r.ratio.toFixed(2)}x**`,
      r.jsMBs.toFixed(0),
      r.nativeMBs.toFixed(0),
      r.floorNs === undefined ? "–" : fmtNs(r.floorNs),
      r.nativeOverFloor === undefined ? "–" : `${r.nativeOverFloor.toFixed(2)}x`,
      r.writesRefNs === undefined ? "–" : `${fmtNs(r.writesRefNs)} / ${fmtNs(r.writesCompleteNs)} (${+r.added.reference.toFixed(1)} / ${+r.added.complete.toFixed(1)})`,
      r.extraWritesOverNative === undefined ? "–" : `${(100 * r.extraWritesOverNative).toFixed(1)}%`,
      fmtBytes(r.jsHeapBytes),
      fmtBytes(r.nativeHeapBytes),
      fmtBytes(r.completeHeapBytes),
      r.kind === "model" || r.kind === "tool" ? fmtBytes(r.outputStringBytes) : "–",
    ].join(" | ")} |`,
  ),
].join("\n")

const loadAfter = load()
const meta = {
  date: new Date().toISOString(),
  node: process.version,
  cpu: `${os.cpus()[0]?.model ?? "?"} x${os.cpus().length}`,
  loadavgBefore: loadBefore,
  loadavgAfter: loadAfter,
  smoke,
  seconds: Math.round((Date.now() - started) / 1000),
}
console.log(table)
console.log(
  `\n${meta.node}, ${meta.cpu}; load average (1/5/15 min) before ${loadBefore}, after ${loadAfter}; ${meta.seconds} s${smoke ? "; SMOKE MODE: figures meaningless" : ""}`,
)
console.log(
  "Per span (corpus groups: mean over the group's spans), net of the attribute-map copy; reference TS: seed 000's onEnd (the reference processor as users have it); JS and native: mode \"reference\" (the same output); complete: mode \"complete\" (the default, native); writes: only the attributes each mode adds, values made beforehand (model spans), and complete mode's extra writes as a share of mode \"reference\"'s span; ± = half the interquartile range; MB/s of genkit:input + genkit:output (UTF-8); heap = JS heap allocated per op, net of the copy; out strings = V8 size of the native output strings.",
)
fs.writeFileSync(path.join(__dirname, "results.json"), `${JSON.stringify({ meta, rows, raw: results }, null, 2)}\n`)

// Peak extra memory per span, native vs pure JS (bench/memory.js, its own processes).
{
  const r = spawnSync(process.execPath, [path.join(__dirname, "memory.js"), ...(smoke ? ["--smoke"] : [])], { stdio: "inherit" })
  if (r.status !== 0) {
    console.error("bench: bench/memory.js failed")
    failed = true
  }
}

// The cost of secret scrubbing and the content cap (issue 11): bench/content.js, its own process.
if (!only) {
  const r = spawnSync(process.execPath, [path.join(__dirname, "content.js"), ...(smoke ? ["--smoke"] : ["--json", path.join(__dirname, "content-results.json")])], { stdio: "inherit" })
  if (r.status !== 0) {
    console.error("bench: bench/content.js failed")
    failed = true
  }
}

if (failed || results.length === 0) process.exit(1)
if (smoke) {
  // Smoke: the harness works and every figure is a number.
  const bad = rows.filter((r) => !Number.isFinite(r.jsNs) || !Number.isFinite(r.nativeNs) || !Number.isFinite(r.completeNs))
  if (bad.length > 0) {
    console.error(`bench: non-numeric figures for ${bad.map((r) => r.case).join(", ")}`)
    process.exit(1)
  }
}

// The exporter figure (issue 8): bench/exporter.js, the whole pipeline per arrangement (its smoke
// run is a step of its own in scripts/test-steps.json).
if (!smoke && !only) {
  console.log("\nnode bench/exporter.js")
  const r = spawnSync(process.execPath, [path.join(__dirname, "exporter.js"), "--json", path.join(__dirname, "exporter-results.json")], { stdio: "inherit" })
  if (r.status !== 0) process.exit(r.status ?? 1)
}
