"use strict"
// Issue 9: a non-ASCII message attribute is built from the span's own UTF-16 (src/copies.rs): the
// pieces the core's writers copied from genkit:input / genkit:output (recorded by core
// `Out::recording`) take the inputs' code units, only the rest is transcoded. Whatever the sizes
// and scripts (ASCII and multi-byte inputs in every combination, surrogate pairs, text next to
// escapes), both modes write what the pure-JS mapping writes, below and above the size from which
// outputs become external strings.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { modelSpan } = require("../bench/synth.js")

const MESSAGES = ["gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages"]

function pureJs() {
  const p = new GenkitForMaple({ mode: "reference" })
  p.native = undefined
  return p
}

/** Maps `attrs` with each processor on its own copy; asserts the message attributes are equal. */
function same(attrs, label) {
  const expected = { ...attrs }
  pureJs().onEnd({ name: "googleai/gemini-2.5-flash", attributes: expected })
  for (const mode of ["reference", "complete"]) {
    const got = { ...attrs }
    const p = new GenkitForMaple({ mode, maxContentBytes: Infinity })
    assert.ok(p.isNative)
    p.onEnd({ name: "googleai/gemini-2.5-flash", attributes: got })
    for (const k of MESSAGES) assert.ok(got[k] === expected[k], `${label} ${mode} ${k}: ${String(got[k]).slice(0, 80)} vs ${String(expected[k]).slice(0, 80)}`)
  }
  return expected
}

test("synthetic model spans, ASCII and multi-byte inputs in every combination, every size: as the pure-JS mapping", () => {
  for (const size of [300, 2000, 20000, 70000, 300000]) {
    const ascii = modelSpan(size, "ascii")
    const multi = modelSpan(size, "multi")
    for (const [input, output, label] of [
      [ascii, ascii, "ascii/ascii"],
      [multi, multi, "multi/multi"],
      [ascii, multi, "ascii/multi"],
      [multi, ascii, "multi/ascii"],
    ]) {
      const attrs = { ...ascii, "genkit:input": input["genkit:input"], "genkit:output": output["genkit:output"] }
      const expected = same(attrs, `${size} ${label}`)
      assert.equal(typeof expected["gen_ai.input.messages"], "string")
    }
  }
})

test("multi-byte text at the edges of the copied pieces: surrogate pairs, escapes, empty and one-character texts", () => {
  const texts = ["😀", "é", "日本", "a😀", "😀a", "\n😀\n", '"😀"', "\\😀", "", "x".repeat(40) + "😀", "😀".repeat(40), "\u00ff\u0100\u07ff\u0800\uffff", "\t東京\t" + "q".repeat(33)]
  const parts = texts.map((text) => ({ text }))
  const input = JSON.stringify({
    messages: [
      { role: "system", content: [{ text: "système 😀 " + "s".repeat(50) }] },
      { role: "user", content: parts },
      { role: "model", content: [{ reasoning: "思考 " + "r".repeat(40) }, { toolRequest: { ref: "call_😀_0", name: "getWeather", input: { city: "東京", note: "x".repeat(40) } } }] },
      { role: "tool", content: [{ toolResponse: { ref: "call_😀_0", name: "getWeather", output: { temp: 21, text: "晴れ " + "y".repeat(40) } } }] },
    ],
  })
  const output = JSON.stringify({ message: { role: "model", content: parts.concat([{ text: "end 終わり" }]) }, finishReason: "stop", usage: { inputTokens: 3, outputTokens: 4 } })
  const attrs = { "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:input": input, "genkit:output": output }
  same(attrs, "edges")
  // The same texts long enough for external strings (over 128 KiB of UTF-16).
  const long = { ...attrs, "genkit:input": input.replace('"messages":[', `"messages":[{"role":"user","content":[{"text":"${"長".repeat(70000)}"}]},`) }
  const expected = same(long, "edges, long")
  assert.ok(expected["gen_ai.input.messages"].length > 70000)
})
