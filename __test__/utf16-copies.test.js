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

// Reference mode reads multi-byte inputs narrowed (src/narrow.rs: one byte a code unit, DEL for
// the others) and maps them as they are where that is exact; every case where it is not (a
// secret needle or a `\u` escape in an input, a user pattern, a cap, a placeholder that cannot be
// traced: a non-ASCII finish reason, a genuine DEL) takes the usual path: the same attributes
// as the pure-JS mapping, scrubbed where it scrubs.
test("narrowed reference mode: every reason to decline, and texts holding DEL, map as the pure-JS mapping", () => {
  const span = (messages, answer, finishReason = "stop") => ({
    "genkit:metadata:subtype": "model",
    "genkit:name": "googleai/gemini-2.5-flash",
    "genkit:input": JSON.stringify({ messages }),
    "genkit:output": JSON.stringify({ message: answer, finishReason, usage: { inputTokens: 1, outputTokens: 2 } }),
  })
  const user = (text) => ({ role: "user", content: [{ text }] })
  const model = (text) => ({ role: "model", content: [{ text }] })
  const cases = {
    clean: span([user("東京の天気は？ " + "x".repeat(50))], model("晴れです 😀")),
    "needle in input": span([user("my key sk-proj-abcdefghijklmnopqrstu0123456789 東京")], model("ok 😀")),
    "needle in output": span([user("東京")], model("use api_key=abcdefghijklmnop0123 please 😀")),
    "\\u escape": span([user("a \u0001 control and 東京")], model("😀")),
    "DEL in a text": span([user("del \u007f here 東京")], model("and \u007f there 😀")),
    "DEL beside placeholders": span([user("\u007f東\u007f京\u007f")], model("\u007f😀\u007f")),
    "non-ASCII finish reason": span([user("東京")], model("晴れ"), "停止"),
    "non-ASCII role": span([{ role: "利用者", content: [{ text: "東京" }] }], { role: "モデル", content: [{ text: "晴れ" }] }),
    "short pieces": span([user("é"), user("東"), user("😀"), model("ü")], model("ß")),
    "tool request and response": span(
      [user("天気"), { role: "model", content: [{ toolRequest: { ref: "r1", name: "天気", input: { 都市: "東京" } } }] }, { role: "tool", content: [{ toolResponse: { ref: "r1", name: "天気", output: "晴れ" } }] }],
      model("晴れ 😀"),
    ),
    "system instructions": span([{ role: "system", content: [{ text: "あなたは旅行の助手です" }] }, user("東京")], model("はい")),
  }
  for (const [name, attrs] of Object.entries(cases)) same(attrs, name)
  // A user pattern reads characters: it is applied, the span is not narrowed.
  const withPattern = new GenkitForMaple({ mode: "reference", secretPatterns: ["東京[0-9]+"] })
  const attrs = span([user("秘密 東京123 です " + "x".repeat(40))], model("東京456"))
  withPattern.onEnd({ name: "googleai/gemini-2.5-flash", attributes: attrs })
  assert.ok(attrs["gen_ai.input.messages"].includes("[REDACTED]"), attrs["gen_ai.input.messages"])
  assert.ok(!attrs["gen_ai.input.messages"].includes("東京123"))
  assert.ok(!attrs["gen_ai.output.messages"].includes("東京456"))
  // A cap counts UTF-8 bytes: a capped multi-byte span is capped as the cap's own rule says.
  const capped = new GenkitForMaple({ mode: "reference", maxContentBytes: 300 })
  const long = span([user("東".repeat(200)), user("京".repeat(200))], model("晴"))
  capped.onEnd({ name: "googleai/gemini-2.5-flash", attributes: long })
  assert.ok(Buffer.byteLength(long["gen_ai.input.messages"]) <= 300, long["gen_ai.input.messages"])
  // The scrubbed needles are scrubbed on the way the span took.
  const scrubbed = { ...cases["needle in input"] }
  new GenkitForMaple({ mode: "reference" }).onEnd({ name: "googleai/gemini-2.5-flash", attributes: scrubbed })
  assert.ok(scrubbed["gen_ai.input.messages"].includes("[REDACTED]"), scrubbed["gen_ai.input.messages"])
})
