"use strict"
// The cost of content control (issue 11): secret scrubbing and the size cap, per span, on the
// native path, in mode "reference" and "complete". `npm run bench` runs it (bench/run.js); alone:
//
//   node bench/content.js            1 KB, 100 KB, 5 MB (about a minute)
//   node bench/content.js --smoke    1 KB, a few iterations: checks it works (figures meaningless)
//
// Spans: a synthetic model span (bench/synth.js, ASCII text) and a tool span whose arguments and
// result are JSON of the same size; each with content that holds no secret ("clean": it does hold
// look-alikes such as `task-force` and `bearer of`, which pass the prefilter and run the regexes)
// and with three secrets in it ("secrets": an OpenAI key, a bearer token, an AWS access key id in
// `genkit:input`, one more in `genkit:output`).
//
// Variants, per mode, each a GenkitForMaple with these options:
//   off        scrubSecrets false, maxContentBytes Infinity (no scrubbing, no cap: the baseline)
//   scrub      scrubSecrets true (the default), no cap
//   cap        scrubSecrets false, maxContentBytes = half the span's `genkit:input` (the cap
//              triggers: messages dropped, strings cut)
//   scrub+cap  both
// Interleaved rounds (order shuffled each round), each op mapping a fresh copy of the attribute
// map; figures are medians per span net of the copy, and the ratio to `off` in the same mode.
// Before timing, the outputs are checked: `scrub` on "secrets" content writes [REDACTED] and no
// secret; `cap` writes genkit_for_maple.content.capped.

const { GenkitForMaple } = require("../js/processor.js")
const { modelSpan } = require("./synth.js")
const { mulberry32: rng } = require("../__test__/helpers/prng.js")

const smoke = process.argv.includes("--smoke") || process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
const SIZES = smoke ? [1_000] : [1_000, 100_000, 5_000_000]

const SECRETS = ["sk-proj-Abc123Def456Ghi789Jkl012Mno345", "Bearer eyAbc123Def456Ghi789Jkl012", "AKIAIOSFODNN7EXAMPLE"]
const OUT_SECRET = "AIzaSyA1234567890abcdefghijklmnopqrstuv"

/** `json` with `secrets` put between two words of its text, at spread-out positions. */
function withSecrets(json, secrets) {
  let out = json
  const gap = /[a-z] [a-z]/g
  for (const [i, secret] of secrets.entries()) {
    gap.lastIndex = Math.floor((out.length * (i + 1)) / (secrets.length + 1))
    let m = gap.exec(out)
    if (m === null) {
      gap.lastIndex = 0
      m = gap.exec(out)
    }
    if (m === null) throw new Error("no place for a secret")
    const at = m.index + 1
    out = `${out.slice(0, at)} ${secret} ${out.slice(at + 1)}`
  }
  return out
}

// Look-alikes every span holds (clean content too): they pass the prefilter.
const LOOK_ALIKES = " task-force sk-learn the bearer of good news authorization pending "

function toolSpan(size) {
  const next = rng(size * 13 + 5)
  const words = "the weather in paris is mild today with light rain expected later please check booking".split(" ")
  const text = (n) => Array.from({ length: n }, () => words[Math.floor(next() * words.length)]).join(" ")
  const items = []
  let length = 0
  while (length < size) {
    const item = { id: `b-${items.length}`, note: text(12) + (items.length % 20 === 0 ? LOOK_ALIKES : ""), price: Math.round(next() * 1e4) / 100, ok: next() < 0.5 }
    items.push(item)
    length += JSON.stringify(item).length + 1
  }
  return {
    "genkit:type": "action",
    "genkit:metadata:subtype": "tool",
    "genkit:key": "/tool/searchBookings",
    "genkit:name": "searchBookings",
    "genkit:path": "/{chatFlow,t:flow}/{generate,t:util}/{searchBookings,t:action,s:tool}",
    "genkit:input": JSON.stringify({ query: text(Math.max(4, Math.round(size / 60))) + LOOK_ALIKES, limit: 50 }),
    "genkit:output": JSON.stringify({ items }),
    "genkit:state": "success",
  }
}

function spanOf(kind, size, content) {
  const attributes = kind === "model" ? modelSpan(size, "ascii") : toolSpan(size)
  if (kind === "model") {
    // Look-alikes in the clean model span too, in a few places.
    attributes["genkit:input"] = attributes["genkit:input"].replace(/ the /g, (m, at) => (at % 7919 < 40 ? LOOK_ALIKES : m))
  }
  if (content === "secrets") {
    attributes["genkit:input"] = withSecrets(attributes["genkit:input"], SECRETS)
    attributes["genkit:output"] = withSecrets(attributes["genkit:output"], [OUT_SECRET])
  }
  JSON.parse(attributes["genkit:input"])
  JSON.parse(attributes["genkit:output"])
  return { name: kind === "model" ? "googleai/gemini-2.5-flash" : "searchBookings", attributes }
}

const ctx = { traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 1 }
const spanContext = () => ctx

const { shuffle } = require("./order")
const median = (list) => {
  const s = [...list].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const CONTENT_KEYS = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]

/** One case: every variant in both modes on one span; returns rows. */
function run(kind, size, content) {
  const span = spanOf(kind, size, content)
  const entries = Object.entries(span.attributes)
  const copy = () => {
    const a = {}
    for (let k = 0; k < entries.length; k++) a[entries[k][0]] = entries[k][1]
    return a
  }
  const cap = Math.max(64, Math.floor(Buffer.byteLength(span.attributes["genkit:input"]) / 2))
  const variants = { copy: undefined }
  for (const mode of ["reference", "complete"]) {
    const make = (scrubSecrets, maxContentBytes) => new GenkitForMaple({ mode, scrubSecrets, maxContentBytes })
    variants[`${mode} off`] = make(false, Infinity)
    variants[`${mode} scrub`] = make(true, Infinity)
    variants[`${mode} cap`] = make(false, cap)
    variants[`${mode} scrub+cap`] = make(true, cap)
  }
  const names = Object.keys(variants)
  const shell = { name: span.name, attributes: undefined, spanContext, status: { code: 0 }, events: [] }
  const once = (p) => {
    shell.attributes = copy()
    if (p !== undefined) p.onEnd(shell)
    return shell.attributes
  }
  // The outputs: what each variant is meant to do, it does.
  for (const name of names.slice(1)) {
    const p = variants[name]
    if (!p.isNative) throw new Error("the native binding is not loaded (npm run build)")
    const a = once(p)
    const written = CONTENT_KEYS.filter((k) => typeof a[k] === "string").map((k) => a[k])
    if (written.length === 0) throw new Error(`${kind} ${size} ${content} ${name}: no content written`)
    const text = written.join("\n")
    if (name.includes("scrub") && content === "secrets" && (!text.includes("[REDACTED]") || SECRETS.some((s) => text.includes(s.slice(-12))))) {
      throw new Error(`${kind} ${size} ${content} ${name}: secrets not scrubbed`)
    }
    if (name.endsWith(" off") && content === "secrets" && !text.includes(SECRETS[0])) throw new Error(`${name}: content changed without scrubbing`)
    if (name.includes("cap") && a["genkit_for_maple.content.capped"] === undefined) throw new Error(`${kind} ${size} ${content} ${name}: the cap did not trigger`)
    if (!name.includes("cap") && a["genkit_for_maple.content.capped"] !== undefined) throw new Error(`${name}: capped without a cap`)
  }
  // Time: ops per sample so a sample lasts about `sampleMs`.
  const sampleMs = smoke ? 2 : 40
  const rounds = smoke ? 2 : size >= 1e6 ? 5 : 9
  const t0 = process.hrtime.bigint()
  once(variants["reference off"])
  const oneMs = Number(process.hrtime.bigint() - t0) / 1e6
  const ops = Math.max(1, Math.min(2000, Math.round(sampleMs / Math.max(oneMs, 1e-4))))
  const samples = Object.fromEntries(names.map((n) => [n, []]))
  for (let round = 0; round <= rounds; round++) {
    for (const name of shuffle(names, round + 7)) {
      const p = variants[name]
      const start = process.hrtime.bigint()
      for (let i = 0; i < ops; i++) once(p)
      const ns = Number(process.hrtime.bigint() - start) / ops
      if (round > 0) samples[name].push(ns)
    }
  }
  const copyNs = median(samples.copy)
  const net = Object.fromEntries(names.slice(1).map((n) => [n, Math.max(median(samples[n]) - copyNs, 1)]))
  const rows = []
  for (const mode of ["reference", "complete"]) {
    const off = net[`${mode} off`]
    rows.push({
      kind,
      size,
      content,
      mode,
      cap,
      offNs: off,
      scrubNs: net[`${mode} scrub`],
      capNs: net[`${mode} cap`],
      scrubCapNs: net[`${mode} scrub+cap`],
    })
  }
  return rows
}

const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(ns >= 1e4 ? 0 : 1)} µs`)
const fmtSize = (n) => (n >= 1e6 ? `${n / 1e6} MB` : `${n / 1e3} KB`)

const started = Date.now()
const rows = []
for (const size of SIZES) {
  for (const kind of ["model", "tool"]) {
    for (const content of ["clean", "secrets"]) rows.push(...run(kind, size, content))
  }
}
const bad = rows.filter((r) => ![r.offNs, r.scrubNs, r.capNs, r.scrubCapNs].every(Number.isFinite))
if (bad.length > 0) {
  console.error("bench/content.js: non-numeric figures")
  process.exit(1)
}
const r2 = (a, b) => `${(a / b).toFixed(2)}x`
console.log(
  [
    "\nContent control (issue 11): native GenkitForMaple.onEnd per span; ratios to scrubbing and cap off in the same mode",
    "| span | content | mode | off | scrub | cap | scrub+cap |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.kind} ${fmtSize(r.size)} | ${r.content} | ${r.mode} | ${fmt(r.offNs)} | ${fmt(r.scrubNs)} (${r2(r.scrubNs, r.offNs)}) | ${fmt(r.capNs)} (${r2(r.capNs, r.offNs)}) | ${fmt(r.scrubCapNs)} (${r2(r.scrubCapNs, r.offNs)}) |`,
    ),
  ].join("\n"),
)
console.log(`cap = half the span's genkit:input in bytes; ${Math.round((Date.now() - started) / 1000)} s${smoke ? "; SMOKE MODE: figures meaningless" : ""}`)
if (process.argv.includes("--json")) {
  require("node:fs").writeFileSync(process.argv[process.argv.indexOf("--json") + 1], `${JSON.stringify({ rows }, null, 2)}\n`)
}
