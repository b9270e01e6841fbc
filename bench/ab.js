#!/usr/bin/env node
"use strict"
// Paired A/B rounds of two builds in one process (BENCHMARKS.md "Stop 35"): the time of `onEnd` per
// span of build A (another checkout, `--a <checkout>`, built, with its own js/ and addon) and of
// build B (this checkout, or `--b <checkout>`), in rounds whose order alternates, each round also
// timing the attribute-map copy alone. Thread CPU time (the addon's benchThreadCpuNs: other
// processes on the machine do not count). Prints, per case, the median per-span time of each
// build with the copy subtracted and the median of the per-round ratios B/A: a build against itself
// gives the noise (`--a .`). Ratios below 1: B is faster.
//
//   node bench/ab.js --a /tmp/base                                  corpus model and tool spans, reference mode
//   node bench/ab.js --a /tmp/base --mode complete --rounds 60
//   node bench/ab.js --a /tmp/base --case corpus-tool --case model-10000-ascii --case model-10000-multi
//
// Cases: corpus-model, corpus-tool, corpus-flow, corpus-other (the real corpus's spans of that
// kind) and model-<size>-<ascii|multi> (one synthetic model span of bench/synth.js, as bench/run.js).
const path = require("node:path")
const { modelSpan, END_TIME } = require("./synth.js")
const { load } = require("../__test__/helpers/fixtures.js")

const argv = process.argv.slice(2)
const opt = (name, fallback) => {
  const at = argv.indexOf(name)
  return at >= 0 ? argv[at + 1] : fallback
}
const all = (name) => argv.flatMap((a, i) => (a === name ? [argv[i + 1]] : []))
if (opt("--a") === undefined) {
  console.error("usage: node bench/ab.js --a <checkout> [--b <checkout>] [--mode reference|complete] [--rounds N] [--case <case>]...")
  process.exit(2)
}
const rootA = path.resolve(opt("--a"))
const rootB = path.resolve(opt("--b", path.join(__dirname, "..")))
const mode = opt("--mode", "reference")
const rounds = Number(opt("--rounds", "40"))
const caseNames = all("--case").length > 0 ? all("--case") : ["corpus-model", "corpus-tool"]

const clock = require(path.join(rootB, "binding.js")).benchThreadCpuNs
const processors = [rootA, rootB].map((root) => {
  const { GenkitForMaple } = require(path.join(root, "js", "processor.js"))
  const p = new GenkitForMaple({ mode })
  if (!p.isNative) throw new Error(`the native binding of ${root} did not load (npm run build there)`)
  return p
})

const corpus = load("genkit-1.42-spans.jsonl")
const kinds = { model: ["model"], tool: ["tool"], flow: ["flow", "agent"] }
function rowsOf(name) {
  const corpusKind = /^corpus-(model|tool|flow|other)$/.exec(name)
  if (corpusKind) {
    const subtypes = kinds[corpusKind[1]]
    const known = Object.values(kinds).flat()
    return corpus.filter((r) => {
      const s = r.attributes["genkit:metadata:subtype"]
      return subtypes ? subtypes.includes(s) : !known.includes(s)
    })
  }
  const synthetic = /^model-(\d+)-(ascii|multi)$/.exec(name)
  if (synthetic) return [{ name: "m", attributes: modelSpan(Number(synthetic[1]), synthetic[2]) }]
  throw new Error(`unknown case ${name}`)
}

/** Span shells with fresh attribute maps built key by key, as the SDK's setAttribute builds them. */
function batchOf(rows) {
  const entries = rows.map((r) => Object.entries(r.attributes))
  const shells = rows.map((r, i) => ({
    name: r.name,
    attributes: undefined,
    spanContext: () => ({ traceId: r.traceId ?? "0af7651916cd43dd8448eb211c80319c", spanId: r.spanId ?? `${i}`.padStart(16, "0"), traceFlags: 1 }),
    parentSpanContext: r.parentSpanId ? { spanId: r.parentSpanId } : undefined,
    status: r.status ?? { code: 0 },
    events: r.events ?? [],
    endTime: r.endTime ?? END_TIME,
  }))
  const bytes = rows.reduce((n, r) => n + (r.attributes["genkit:input"]?.length ?? 0), 0) / rows.length
  const repeat = Math.max(1, Math.round(4e6 / Math.max(2000, bytes) / rows.length))
  return (fn) => {
    const t = clock()
    for (let r = 0; r < repeat; r++) {
      for (let i = 0; i < shells.length; i++) {
        const a = {}
        const e = entries[i]
        for (let k = 0; k < e.length; k++) a[e[k][0]] = e[k][1]
        shells[i].attributes = a
        fn(shells[i])
      }
    }
    return (clock() - t) / (repeat * shells.length)
  }
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} us` : `${ns.toFixed(0)} ns`)

console.log(`A = ${rootA}\nB = ${rootB}\nmode ${mode}, ${rounds} rounds (after 5 warm-up rounds), thread CPU per span, copy subtracted`)
for (const name of caseNames) {
  const run = batchOf(rowsOf(name))
  const copy = () => {}
  const [a, b] = processors.map((p) => (s) => p.onEnd(s))
  const times = { a: [], b: [], ratio: [] }
  for (let round = 0; round < rounds + 5; round++) {
    const order = round % 2 === 0 ? ["a", "b"] : ["b", "a"]
    const got = {}
    for (const which of order) got[which] = run(which === "a" ? a : b)
    const base = run(copy)
    if (round < 5) continue
    const ta = got.a - base
    const tb = got.b - base
    times.a.push(ta)
    times.b.push(tb)
    times.ratio.push(tb / ta)
  }
  const q = (xs, f) => [...xs].sort((x, y) => x - y)[Math.floor(f * (xs.length - 1))]
  console.log(
    `${name.padEnd(20)} A ${fmt(median(times.a)).padStart(9)}  B ${fmt(median(times.b)).padStart(9)}  B/A ${median(times.ratio).toFixed(3)} (quartiles ${q(times.ratio, 0.25).toFixed(3)}-${q(times.ratio, 0.75).toFixed(3)})`,
  )
}
