#!/usr/bin/env node
"use strict"
// onEnd's own cost per span, as BENCHMARKS.md "Stop 18" gives it: thread CPU time (the addon's
// benchThreadCpuNs, so other processes on the machine do not count), fresh attribute maps built key
// by key as the SDK builds them, distinct trace ids, the minimum of 10 batches (the medians move
// with GC timing on a small VM; the minima by a few per cent). Also two boundary costs: one
// `Mapper.spanEnded` call, and the `Mapper` argument of `mapToolSpan`.
//
//   node bench/onend.js                      every case, both modes and the reference processor
//   node bench/onend.js --root <checkout>    the same against another build (its js/ and addon)
//   node bench/onend.js --only 'corpus'      cases whose name matches
const path = require("node:path")
const crypto = require("node:crypto")

const argv = process.argv.slice(2)
const rootAt = argv.indexOf("--root")
const root = rootAt >= 0 ? path.resolve(argv[rootAt + 1]) : path.join(__dirname, "..")
const onlyAt = argv.indexOf("--only")
const only = onlyAt >= 0 ? new RegExp(argv[onlyAt + 1]) : undefined
const { GenkitForMaple } = require(path.join(root, "js", "processor.js"))
const native = require(path.join(root, "binding.js"))
const { modelSpan } = require("./synth.js")
const { referenceOnEnd } = require("../__test__/helpers/reference.js")
const { load } = require("../__test__/helpers/fixtures.js")
const clock = native.benchThreadCpuNs

const corpus = load("genkit-1.42-spans.jsonl")
const ofSubtype = (s) => corpus.filter((r) => r.attributes["genkit:metadata:subtype"] === s)
const synthetic = (size, script) => {
  const attributes = modelSpan(size, script)
  return Array.from({ length: 16 }, () => ({ name: "m", attributes, traceId: crypto.randomBytes(16).toString("hex"), spanId: crypto.randomBytes(8).toString("hex") }))
}
const cases = [
  ["synthetic 1 KB ASCII", () => synthetic(1_000, "ascii")],
  ["synthetic 1 KB multi-byte", () => synthetic(1_000, "multi")],
  ["synthetic 1 MB multi-byte", () => synthetic(1_000_000, "multi")],
  ["corpus model spans", () => ofSubtype("model")],
  ["corpus tool spans", () => ofSubtype("tool")],
  ["corpus flow spans", () => ofSubtype("flow")],
].filter(([name]) => !only || only.test(name))

/** Min and median per span over 10 batches (after 2 warm-up batches) of `fn` on fresh copies. */
function measure(rows, fn) {
  const entries = rows.map((r) => Object.entries(r.attributes))
  const shells = rows.map((r) => ({
    name: r.name,
    attributes: undefined,
    spanContext: () => ({ traceId: r.traceId, spanId: r.spanId, traceFlags: 1 }),
    parentSpanContext: r.parentSpanId ? { spanId: r.parentSpanId } : undefined,
    status: r.status ?? { code: 0 },
    events: r.events ?? [],
    endTime: r.endTime ?? [1_700_000_000, 5],
  }))
  const bytes = rows.reduce((n, r) => n + (r.attributes["genkit:input"]?.length ?? 0), 0) / rows.length
  const rounds = Math.max(1, Math.round(2e6 / Math.max(1000, bytes) / rows.length))
  const per = []
  for (let b = 0; b < 12; b++) {
    const t = clock()
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < rows.length; i++) {
        const a = {}
        const e = entries[i]
        for (let k = 0; k < e.length; k++) a[e[k][0]] = e[k][1]
        shells[i].attributes = a
        fn(shells[i])
      }
    }
    if (b >= 2) per.push((clock() - t) / (rounds * rows.length) / 1e3)
  }
  per.sort((x, y) => x - y)
  return { min: per[0], median: per[per.length >> 1] }
}

const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(2)} us`)
const reference = new GenkitForMaple({ mode: "reference" })
const complete = new GenkitForMaple({ mode: "complete" })
if (!reference.isNative) throw new Error("the native binding did not load (npm run build)")
console.log(`onEnd per span (${root}); thread CPU, min / median of 10 batches`)
for (const [name, rows] of cases) {
  const r = rows()
  const cells = {
    "reference TS": measure(r, (s) => referenceOnEnd(s.attributes)),
    reference: measure(r, (s) => reference.onEnd(s)),
    complete: measure(r, (s) => complete.onEnd(s)),
  }
  console.log(`${name.padEnd(28)} ${Object.entries(cells).map(([k, v]) => `${k} ${fmt(v.min)} / ${fmt(v.median)}`).join("   ")}`)
}

// Boundary costs (nanoseconds a call, min of 5 runs of 100,000).
if (!only) {
  const ns = (fn) => {
    const runs = []
    for (let k = 0; k < 5; k++) {
      const t = clock()
      for (let i = 0; i < 100_000; i++) fn()
      runs.push((clock() - t) / 100_000)
    }
    return Math.min(...runs).toFixed(0)
  }
  const mapper = complete.mapper
  console.log(`Mapper.spanEnded: ${ns(() => mapper.spanEnded("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", true))} ns a call`)
  const unscrubbed = new GenkitForMaple({ mode: "reference", scrubSecrets: false })
  const tool = (rules) => () => native.mapToolSpan({}, '{"ok":true}', rules, String.prototype.slice, '{"q":1}', true)
  console.log(`mapToolSpan of a tiny tool span: with the Mapper argument ${ns(tool(unscrubbed.rulesId))} ns, without ${ns(tool(undefined))} ns`)
}
