"use strict"
// Differential property test (issue 4): Genkit-shaped attribute maps and mutations of them
// (truncation, type swaps, deletions, nesting, non-canonical JSON, odd attribute types).
// Always: onEnd does not throw, genkit:* unchanged, native == pure JS (mapSpanJs) after
// normalisation; and native == reference wherever the reference does not throw (except outputs the
// reference ignores by design: candidates without a top-level message).
// Seeded; GENKIT_FOR_MAPLE_SMOKE=1 (CI) runs 300 cases, FUZZ_RUNS=n runs n, FUZZ_SEED=s reseeds.
const test = require("node:test")
const assert = require("node:assert/strict")
const fc = require("fast-check")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")
const { referenceOnEnd } = require("./helpers/reference")
const { canon, anySpan, modelSpan, toolSpan, referenceComparable, argumentsWithheld, cloneAttrs } = require("./helpers/genkit-shapes")

const smoke = process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
const runs = Number(process.env.FUZZ_RUNS ?? (smoke ? 300 : 1000))
const seed = Number(process.env.FUZZ_SEED ?? 20240604)
const processor = new GenkitForMaple({ mode: "reference" })

test("the native binding is loaded (the comparison is native vs JS)", () => assert.equal(processor.isNative, true))

/** Runs one attribute map through the three mappings; returns what the property checks. */
function differential(attrs) {
  const native = cloneAttrs(attrs)
  processor.onEnd({ attributes: native, name: "fuzz", spanContext: () => ({ traceId: "t", spanId: "s" }) })
  for (const k of Object.keys(attrs)) {
    if (k.startsWith("genkit:")) assert.deepStrictEqual(native[k], attrs[k], `${k} changed`)
  }
  const js = cloneAttrs(attrs)
  mapSpanJs(js)
  // The processor scrubs (the default): a non-string tool input is left out, not copied.
  const withheld = argumentsWithheld(attrs, js)
  if (withheld) {
    assert.equal("gen_ai.tool.call.arguments" in native, false, "a non-string tool input left out")
    delete js["gen_ai.tool.call.arguments"]
  }
  assert.deepStrictEqual(canon(native), canon(js), "native differs from the pure-JS mapping")
  const ref = cloneAttrs(attrs)
  let threw = false
  try {
    referenceOnEnd(ref)
  } catch {
    threw = true
  }
  if (withheld) delete ref["gen_ai.tool.call.arguments"]
  if (!threw && referenceComparable(attrs)) assert.deepStrictEqual(canon(native), canon(ref), "native differs from the reference")
  return threw
}

const params = (n, s) => ({ numRuns: n, seed: s, endOnFailure: true, verbose: 1 })

test(`differential: any Genkit span, ${runs} runs (seed ${seed})`, () => {
  fc.assert(fc.property(anySpan, (attrs) => void differential(attrs)), params(runs, seed))
})

test(`differential: model spans, ${runs} runs (seed ${seed + 1})`, () => {
  let threw = 0
  fc.assert(
    fc.property(modelSpan, (attrs) => {
      if (differential(attrs)) threw++
    }),
    params(runs, seed + 1),
  )
  // The generator reaches both sides: inputs the reference throws on, and inputs it maps.
  assert.ok(threw > 0 && threw < runs, `reference threw on ${threw} of ${runs}`)
})

test(`differential: tool spans, ${Math.ceil(runs / 2)} runs (seed ${seed + 2})`, () => {
  fc.assert(fc.property(toolSpan, (attrs) => void differential(attrs)), params(Math.ceil(runs / 2), seed + 2))
})
