"use strict"
// The problem flags are defined once in Rust (core/src/mapping.rs `problem`) and mirrored in
// js/mapping.js `P`; the two must agree bit for bit, or diag reports would name the wrong problem.
const test = require("node:test")
const assert = require("node:assert/strict")
const binding = require("../binding.js")
const { P } = require("../js/mapping")

test("native problem flags equal the pure-JS ones", () => {
  // camelCase names of the binding (napi-rs renames the Rust fields) to the JS constant names.
  const upper = (name) => name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()
  const native = Object.fromEntries(Object.entries(binding.problemFlags()).map(([k, v]) => [upper(k), v]))
  assert.deepStrictEqual(native, { ...P })
  assert.ok(Object.keys(P).length >= 9, "every flag is listed")
  const bits = Object.values(P)
  // Every flag has a diag text (js/processor.js PROBLEM_TEXT) except NEEDS_JS, which is routing.
  const texts = require("fs").readFileSync(require("path").join(__dirname, "../js/processor.js"), "utf8")
  for (const name of Object.keys(P)) if (name !== "NEEDS_JS") assert.match(texts, new RegExp(`\\[P\\.${name},`), name)
  assert.equal(new Set(bits).size, bits.length)
  for (const b of bits) assert.equal(b & (b - 1), 0, `${b} is one bit`)
})

test("native and JS report the same flags for the same bad input", () => {
  const cases = [
    { "genkit:input": "{\"messages\":[", "genkit:output": "{}" },
    { "genkit:input": "{\"messages\":{}}", "genkit:output": "nope" },
    { "genkit:output": "{\"message\":{\"role\":\"model\",\"content\":\"x\"}}" },
  ]
  for (const c of cases) {
    const a = { ...c }
    const b = { ...c }
    const nativeFlags = binding.mapModelSpan(a, a["genkit:input"], a["genkit:output"], false)
    const jsFlags = require("../js/mapping").mapModelAttributes(b)
    assert.equal(nativeFlags, jsFlags, JSON.stringify(c))
    assert.notEqual(nativeFlags, 0)
    assert.deepStrictEqual(a, b)
  }
})
