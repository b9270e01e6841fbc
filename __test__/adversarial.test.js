"use strict"
// The dev adversarial cases (corpus README): "reference" cases equal the reference after JSON
// normalisation; "spec" cases (where the reference throws) write what `expect.set` lists and nothing
// of `expect.absent`. Always: no exception, genkit:* unchanged, the span reaches the next processor.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")
const { referenceOnEnd } = require("./helpers/reference")
const { load, normalise } = require("./helpers/fixtures")

const cases = load("adversarial-dev.jsonl")
const processor = new GenkitForMaple({ mode: "reference" })

test("there are ten dev adversarial cases", () => assert.equal(cases.length, 10))

for (const c of cases) {
  for (const [mode, run] of [
    ["native", (a) => processor.onEnd({ attributes: a, name: c.id })],
    ["pure JS", (a) => mapSpanJs(a)],
  ]) {
    test(`${c.id} (${c.expect.kind}) ${mode}: ${c.about}`, () => {
      const attrs = structuredClone(c.attributes)
      assert.doesNotThrow(() => run(attrs))
      for (const [k, v] of Object.entries(c.attributes)) assert.deepStrictEqual(attrs[k], v, `${k} changed`)
      if (c.expect.kind === "reference") {
        assert.deepStrictEqual(normalise(attrs), normalise(c.expected_attributes))
      } else {
        for (const [k, v] of Object.entries(c.expect.set)) {
          const got = typeof v === "string" && /^[[{]/.test(v) ? JSON.parse(attrs[k]) : attrs[k]
          const want = typeof v === "string" && /^[[{]/.test(v) ? JSON.parse(v) : v
          assert.deepStrictEqual(got, want, k)
        }
        for (const k of c.expect.absent) assert.equal(attrs[k], undefined, `${k} must be absent`)
        // The reference throws here: that is why these are "spec" cases.
        assert.throws(() => referenceOnEnd(structuredClone(c.attributes)))
      }
    })
  }
}

test("a span passes through a chain: the next processor sees the mapped span", () => {
  const seen = []
  const next = { onEnd: (span) => seen.push(span) }
  for (const c of cases) {
    const span = { attributes: structuredClone(c.attributes), name: c.id }
    processor.onEnd(span)
    next.onEnd(span)
  }
  assert.equal(seen.length, cases.length)
  for (const span of seen) {
    if (span.attributes["genkit:metadata:subtype"]) assert.ok(span.attributes["gen_ai.operation.name"])
  }
})
