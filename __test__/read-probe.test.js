"use strict"
// The native reader's ASCII probe (src/lib.rs `Call::read_ascii`): a string of 64 Ki units or
// more is read as bytes by one UTF-8 write of at most its length when it is ASCII; a unit above
// 0x7F in its first 2,048 units settles that it is not without that write. Every position of the
// first wide unit around the probe's end, in both attributes, maps as the pure-JS mapping maps
// it; so does one wide unit at the very end (the write stops short of the length, or holds a
// non-ASCII byte), including a Latin-1 character, a character whose low byte is ASCII (`Ł`,
// U+0141: a Latin-1 read would have made it `A`) and a lone surrogate (`\uFFFD` in UTF-8).
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple, mapSpanJs } = require("..")

const PROBE = 2048
const LONG = 70_000 // above the Latin-1 read's 64 Ki units

/** A model span whose input and output texts are `LONG` units with `wide` at `at` (or none). */
function span(at, wide) {
  const text = (n) => {
    const chars = "abcdefghij".repeat(Math.ceil(n / 10)).slice(0, n).split("")
    if (at !== undefined) chars.splice(at, wide.length, ...wide)
    return chars.join("")
  }
  const input = JSON.stringify({ messages: [{ role: "user", content: [{ text: text(LONG) }] }] })
  const output = JSON.stringify({ message: { role: "model", content: [{ text: text(LONG) }] }, finishReason: "stop", usage: { inputTokens: 1, outputTokens: 2 } })
  return { "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:input": input, "genkit:output": output }
}

test("a wide unit at every position around the probe's end, ASCII throughout, two-byte and a surrogate pair: as the JS mapping", () => {
  // Scrubbing on (the default): the texts hold no secret, and the long attributes are read whole
  // (without it reference mode reads them in chunks, src/hollow.rs).
  const processor = new GenkitForMaple({ mode: "reference" })
  assert.equal(processor.isNative, true)
  const positions = [undefined, 0, 1, 30, PROBE - 40, PROBE - 30, PROBE - 2, PROBE - 1, PROBE, PROBE + 1, 5000, 65_000, LONG - 3, LONG - 2, LONG - 1]
  for (const wide of [["é"], ["日"], ["\ud83d", "\ude00"], ["Ł"], ["\u00ff"], ["\u0080"], ["\ud800"]]) {
    for (const at of positions) {
      const attrs = span(at, wide)
      const expected = { ...attrs }
      mapSpanJs(expected)
      const got = { ...attrs }
      processor.onEnd({ name: "s", attributes: got, spanContext: () => ({}) })
      for (const key of ["gen_ai.input.messages", "gen_ai.output.messages"]) {
        assert.equal(typeof got[key], "string", `${key} written (${wide.join("")} at ${at})`)
        assert.equal(got[key], expected[key], `${key}: ${wide.join("")} at ${at}`)
      }
    }
  }
})
