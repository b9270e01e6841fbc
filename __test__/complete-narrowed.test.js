"use strict"
// Issue 9: complete mode reads a model span's multi-byte genkit:input / genkit:output narrowed
// (one byte a UTF-16 code unit, DEL for every unit above 0x7F; core `Mapper::map_narrowed`,
// src/seam.rs) and maps them as they are where that is exact. Every attribute must be what the
// usual path (the texts transcoded to UTF-8) writes, and rule 5's tool call state must end the same.
// The oracle is the same processor with a user secret pattern that matches nothing: a user
// pattern may read characters, so that processor never narrows, and a pattern that never matches
// changes nothing. Cases: clean spans of every size around the narrowing thresholds, and every
// reason the narrowed mapping declines (a secret needle, a `\u` escape, non-ASCII finish
// reasons, response ids, stop sequences, tool requests, media URLs, a cap that would shorten a
// narrowed message's text, a lone surrogate, a short multi-byte input beside a long output),
// beside spans that narrow with a DEL, non-ASCII roles, system instructions, messages over the cap
// dropped, or an answer over the cap (transcoded, not narrowed, and shortened by the usual cap).
// Both paths write the same attributes by design, so each case also asserts which path it took,
// by the binding's count of narrowed spans (`narrowedSpanCount`).
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { narrowedSpanCount } = require("../binding.js")
const { modelSpan } = require("../bench/synth.js")

const NEVER = ["zq_never_matches_[0-9]{64}"]
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
let spanCounter = 0

/**
 * A span shell as the SDK ends it: `spanId` (the same for both processors, so that rule 5's
 * state follows the same span ids on both), a parent that no span id here can equal (so rule 5
 * keeps tool call state until the test ends), status.
 */
function shell(attributes, spanId) {
  return {
    name: attributes["genkit:name"] ?? "m",
    attributes,
    spanContext: () => ({ traceId: TRACE, spanId, traceFlags: 1 }),
    parentSpanContext: { traceId: TRACE, spanId: PARENT },
    status: { code: 0 },
    events: [],
    endTime: [1_767_000_000, 0],
  }
}

const PARENT = "f0f0f0f0f0f0f0f0"

/**
 * Ends the same spans, in order, on the default complete processor and on the oracle; asserts
 * every attribute equal, and that `narrowed` of the spans took the narrowed path (the oracle
 * never does).
 */
function sameAsUsual(spans, label, narrowed, options = {}) {
  const before = narrowedSpanCount()
  const results = compare(spans, label, options)
  assert.equal(narrowedSpanCount() - before, narrowed, `${label}: spans mapped narrowed`)
  return results
}

function compare(spans, label, options) {
  const narrowing = new GenkitForMaple({ ...options })
  const usual = new GenkitForMaple({ ...options, secretPatterns: NEVER })
  assert.ok(narrowing.isNative && usual.isNative)
  const results = []
  for (const [i, attrs] of spans.entries()) {
    const a = { ...attrs }
    const b = { ...attrs }
    const spanId = (++spanCounter).toString(16).padStart(16, "0")
    narrowing.onEnd(shell(a, spanId))
    usual.onEnd(shell(b, spanId))
    assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${label} #${i}: keys`)
    for (const k of Object.keys(b)) assert.ok(Object.is(a[k], b[k]) || JSON.stringify(a[k]) === JSON.stringify(b[k]), `${label} #${i} ${k}: ${String(a[k]).slice(0, 120)} vs ${String(b[k]).slice(0, 120)}`)
    results.push(a)
  }
  return results
}

const long = (text, units) => text.repeat(Math.ceil(units / text.length)).slice(0, units)
const user = (text) => ({ role: "user", content: [{ text }] })
const model = (text) => ({ role: "model", content: [{ text }] })
/** A model span with a long multi-byte history first, so genkit:input is narrowed (over 2048 units). */
function span(messages, answer, extra = {}) {
  const history = [user(long("東京の天気は晴れ、気温は二十度です。😀 ", 3000)), model(long("Ça va très bien, merci ! ", 600))]
  return {
    "genkit:metadata:subtype": "model",
    "genkit:name": "googleai/gemini-2.5-flash",
    "genkit:input": JSON.stringify({ messages: history.concat(messages), config: extra.config ?? { temperature: 0.3 } }),
    "genkit:output": JSON.stringify({ message: answer, finishReason: extra.finishReason ?? "stop", usage: { inputTokens: 1200, outputTokens: 34 }, custom: extra.custom ?? {} }),
  }
}

test("complete mode, narrowed: synthetic spans of every size, ASCII and multi-byte in every combination, as the usual path", () => {
  // Which narrow, per size, for multi/multi, ascii/multi, multi/ascii: a multi-byte input from
  // 2048 UTF-16 units (NARROW_MIN_UNITS; the 1 KB span's is shorter), a multi-byte output beside
  // an ASCII input only from 2048 units itself (the 3 and 10 KB spans' answers are shorter). At
  // 300 KB the input messages are over the default cap (256 KiB) in UTF-8: the narrowed mapping
  // drops the oldest messages by their UTF-8 sizes, as the usual path does.
  const narrows = { 1000: [0, 0, 0], 3000: [1, 0, 1], 10000: [1, 0, 1], 40000: [1, 1, 1], 100000: [1, 1, 1], 300000: [1, 1, 1] }
  for (const size of [1000, 3000, 10000, 40000, 100000, 300000]) {
    const ascii = modelSpan(size, "ascii")
    const multi = modelSpan(size, "multi")
    for (const [k, [input, output, label]] of [
      [multi, multi, "multi/multi"],
      [ascii, multi, "ascii/multi"],
      [multi, ascii, "multi/ascii"],
    ].entries()) {
      const attrs = { ...ascii, "genkit:input": input["genkit:input"], "genkit:output": output["genkit:output"] }
      const [got] = sameAsUsual([attrs], `${size} ${label}`, narrows[size][k])
      assert.equal(typeof got["gen_ai.input.messages"], "string")
      assert.equal(typeof got["gen_ai.usage.cost"], "number")
      if (size === 300000) {
        assert.ok(got["genkit_for_maple.content.dropped_messages"] > 0, `${size} ${label}: messages dropped`)
        assert.ok(Buffer.byteLength(got["gen_ai.input.messages"]) <= 256 * 1024)
      }
    }
  }
})

test("complete mode, narrowed: every reason to decline maps as the usual path", () => {
  // [spans, how many narrow]: a DEL (the placeholder's byte) is restored from the units, a role
  // and system instructions are message content; the others decline.
  const cases = {
    clean: [[span([user("東京")], model("晴れです 😀"))], 1],
    "needle in input": [[span([user("my key sk-proj-abcdefghijklmnopqrstu0123456789 東京")], model("ok 😀"))], 0],
    "needle in output": [[span([user("東京")], model("use api_key=abcdefghijklmnop0123 please 😀"))], 0],
    "\\u escape": [[span([user("a \u0001 control and 東京")], model("😀"))], 0],
    "DEL in a text": [[span([user("del \u007f here 東京")], model("and \u007f there 😀"))], 1],
    "non-ASCII finish reason": [[span([user("東京")], model("晴れ"), { finishReason: "停止" })], 0],
    "non-ASCII role": [[span([{ role: "利用者", content: [{ text: "東京" }] }], { role: "モデル", content: [{ text: "晴れ" }] })], 1],
    "non-ASCII response id and model": [[span([user("東京")], model("晴れ"), { custom: { responseId: "応答-1", modelVersion: "ジェミニ-2.5" } })], 0],
    "non-ASCII stop sequences and output format": [[span([user("東京")], model("晴れ"), { config: { stopSequences: ["終わり", "end"], temperature: 0.1 } })], 0],
    "system instructions": [[span([{ role: "system", content: [{ text: "あなたは旅行の助手です" }] }, user("東京")], model("はい"))], 1],
    "media, remote and data URLs": [
      [
        span(
          [{ role: "user", content: [{ text: "見て" }, { media: { url: "https://例え.jp/画像.png", contentType: "image/png" } }, { media: { url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB", contentType: "image/png" } }] }],
          model("見ました"),
        ),
      ],
      0,
    ],
    "media URL with non-ASCII in the data": [[span([{ role: "user", content: [{ media: { url: "data:text/plain;charset=utf-8,東京" } }] }], model("はい"))], 0],
    "media part in a multi-byte answer": [[span([user("写真を")], { role: "model", content: [{ text: "どうぞ" }, { media: { url: "data:image/png;base64,iVBORw0KGgo=", contentType: "image/png" } }] })], 0],
    // Only a media part written from a text holding the placeholder declines: a "media" key that
    // is no part (a tool's output), or a media part in an ASCII answer beside the multi-byte
    // prompt, or in an ASCII prompt beside a long multi-byte answer, is mapped narrowed.
    "a media key that is no part": [[span([{ role: "tool", content: [{ toolResponse: { name: "camera", ref: "c1", output: { media: "東京の写真", url: "data:x" } } }] }], model("はい"))], 1],
    "media part in an ASCII answer": [[span([user("a photo?")], { role: "model", content: [{ text: "here" }, { media: { url: "https://x.test/a.png", contentType: "image/png" } }] })], 1],
    "media part in an ASCII prompt, a multi-byte answer": [
      [
        {
          ...span([], model("")),
          "genkit:input": JSON.stringify({ messages: [{ role: "user", content: [{ text: "what is this?" }, { media: { url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", contentType: "image/png" } }] }] }),
          "genkit:output": JSON.stringify({ message: model(long("これは東京の写真です。😀 ", 3000)), finishReason: "stop", usage: { inputTokens: 12, outputTokens: 900 } }),
        },
      ],
      1,
    ],
  }
  for (const [name, [spans, narrowed]] of Object.entries(cases)) sameAsUsual(spans, name, narrowed)
})

test("complete mode, narrowed: tool requests with multi-byte names, refs and inputs pair with their tool spans as on the usual path", () => {
  // A tool request holding a multi-byte name, ref or input makes the model span decline.
  for (const [name, ref, input, narrowed] of [
    ["getWeather", "call_1", { city: "Paris" }, 1],
    ["天気", "call_2", { city: "Paris" }, 0],
    ["getWeather", "呼び出し_3", { city: "Paris" }, 0],
    ["getWeather", "call_4", { 都市: "東京" }, 0],
  ]) {
    const request = span([user("天気は？")], { role: "model", content: [{ text: "調べます" }, { toolRequest: { name, ref, input } }] })
    const tool = {
      "genkit:metadata:subtype": "tool",
      "genkit:name": name,
      "genkit:input": JSON.stringify(input),
      "genkit:output": JSON.stringify({ 天気: "晴れ" }),
    }
    const [, toolAttrs] = sameAsUsual([request, tool], `tool ${name} ${ref}`, narrowed)
    assert.equal(toolAttrs["gen_ai.tool.call.id"], ref, `${name} ${ref}`)
  }
})

test("complete mode, narrowed: caps, lone surrogates and mixed inputs map as the usual path", () => {
  // Under the default cap (256 KiB a content attribute): messages that fit, messages whose
  // UTF-8 only is over it (narrowed length under, three bytes a character), and far over it.
  // One long newest message (the history before it is dropped): narrowed where the UTF-8 text
  // fits the cap; over it the cap would shorten the message's text, which the narrowed mapping
  // declines (100,000 and 125,000 units: 300 and 375 KB of UTF-8, narrowed 100 and 125 KB).
  for (const [units, narrowed] of [[20_000, 1], [100_000, 0], [125_000, 0], [400_000, 0]]) {
    const big = span([user(long("東", units))], model("晴れ"))
    const [got] = sameAsUsual([big], `cap ${units}`, narrowed)
    assert.ok(Buffer.byteLength(got["gen_ai.input.messages"]) <= 256 * 1024)
  }
  // A cap of the user's, smaller: the history and the first long message dropped (by their
  // UTF-8 sizes: 15 KB each, 5 KB narrowed), the newest kept.
  const [dropped] = sameAsUsual([span([user(long("京", 5000)), user(long("都", 5000))], model("はい"))], "cap 20000", 1, { maxContentBytes: 20_000 })
  assert.equal(dropped["genkit_for_maple.content.dropped_messages"], 3)
  assert.ok(Buffer.byteLength(dropped["gen_ai.input.messages"]) <= 20_000)
  sameAsUsual([span([user(long("京", 5000))], model("はい"))], "no cap", 1, { maxContentBytes: Infinity })
  // An answer over the cap in UTF-8 (whether over it in UTF-16 units too or not) is transcoded,
  // not narrowed: its output message holds no placeholder and gets the usual cap (its text
  // shortened) while the input stays narrowed. An answer just under the cap in UTF-8 stays
  // narrowed.
  for (const units of [25_000, 15_000, 6_667, 6_600, 3_000]) {
    const [got] = sameAsUsual([span([user("東京")], model(long("長", units)))], `answer of ${units} units`, 1, { maxContentBytes: 20_000 })
    const capped = units * 3 + 100 > 20_000
    assert.deepEqual(got["genkit_for_maple.content.capped"], capped ? ["gen_ai.output.messages"] : undefined, `answer of ${units} units`)
    assert.ok(Buffer.byteLength(got["gen_ai.output.messages"]) <= 20_000)
  }
  // Both over the cap: the history's oldest messages dropped (narrowed) and the answer shortened
  // (transcoded), reported in the usual order.
  const [both] = sameAsUsual([span([user(long("京", 5000)), user(long("都", 5000))], model(long("長い答え😀", 30_000)))], "history and answer over the cap", 1, { maxContentBytes: 20_000 })
  assert.deepEqual(both["genkit_for_maple.content.capped"], ["gen_ai.input.messages", "gen_ai.output.messages"])
  assert.equal(both["genkit_for_maple.content.dropped_messages"], 3)
  // Over the default cap (256 KiB) in units: an answer of several scripts, a DEL in it, reasoning
  // and a tool request with a multi-byte ref beside it, an ASCII answer, a custom block over the
  // cap (the output message itself small).
  const parts = (text) => ({ role: "model", content: [{ reasoning: "考え中 " + long("理由", 2000) }, { text }, { toolRequest: { name: "getWeather", ref: "r-長", input: { city: "東京" } } }] })
  sameAsUsual([span([user("東京")], model(long("Zürich 東京 😀 ", 300_000)))], "default cap, multi-byte answer", 1)
  // A DEL in a transcoded answer is taken for a placeholder (its text cannot be shortened
  // narrowed): declined, the usual path.
  sameAsUsual([span([user("東京")], model(long("del \x7f 東京 ", 300_000)))], "default cap, DEL in the answer", 0)
  sameAsUsual([span([user("東京")], parts(long("長い答え", 300_000)))], "default cap, reasoning and a tool request", 1)
  sameAsUsual([span([user("東京")], model(long("plain ascii answer ", 300_000)))], "default cap, ASCII answer", 1)
  sameAsUsual([span([user("東京")], model("短い"), { custom: { raw: long("生の応答", 300_000) } })], "default cap, custom over it", 1)
  // A DEL in an answer transcoded for being over the cap in UTF-8 (a large custom block, or the
  // answer itself) while its output message fits: taken for a placeholder, its piece cannot be
  // rebuilt from units (the answer's offsets are UTF-8's): declined, the usual path (a helper's
  // fuzzing found it written from the wrong units, b5adb50).
  const delInput = JSON.stringify({ messages: [user("東".repeat(2100))] })
  const delAnswer = (message, custom) => ({ "genkit:metadata:subtype": "model", "genkit:name": "googleai/gemini-2.5-flash", "genkit:input": delInput, "genkit:output": JSON.stringify({ message, finishReason: "stop", custom }) })
  sameAsUsual([delAnswer(model("del \x7f 東京"), { raw: "x".repeat(20_010) })], "DEL in a transcoded answer, custom over the cap", 0, { maxContentBytes: 20_000 })
  sameAsUsual([delAnswer(model("\x7f" + "ж".repeat(9900)), { raw: "東".repeat(10_100) })], "DEL in a transcoded answer over the cap in UTF-8", 0, { maxContentBytes: 20_000 })
  sameAsUsual([delAnswer(model("no del 東京"), { raw: "x".repeat(20_010) })], "a transcoded answer without DEL, custom over the cap", 1, { maxContentBytes: 20_000 })
  // The same answers beside an ASCII history (nothing narrowed: the usual path).
  const ascii = (answer) => ({ ...span([], answer), "genkit:input": JSON.stringify({ messages: [user("plain ASCII question")] }) })
  sameAsUsual([ascii(model(long("長い答え", 25_000)))], "ASCII input, answer over the cap", 0, { maxContentBytes: 20_000 })
  // A lone surrogate in one input (read lossily, not narrowed) beside a narrowed other.
  const lone = span([user("bad \ud800 surrogate")], model(long("長い答え😀", 5000)))
  sameAsUsual([lone], "lone surrogate in input", 0)
  const loneOut = span([user("東京")], model("bad \udc00 surrogate " + long("長", 3000)))
  sameAsUsual([loneOut], "lone surrogate in output", 0)
  // A short multi-byte input (transcoded) beside a long multi-byte output, and the reverse.
  const shortInput = {
    "genkit:metadata:subtype": "model",
    "genkit:name": "googleai/gemini-2.5-flash",
    "genkit:input": JSON.stringify({ messages: [user("短い")] }),
    "genkit:output": JSON.stringify({ message: model(long("長い答え😀", 8000)), finishReason: "stop" }),
  }
  sameAsUsual([shortInput], "short input, long output", 0)
  sameAsUsual([{ ...shortInput, "genkit:input": span([user("x")], model("y"))["genkit:input"], "genkit:output": JSON.stringify({ message: model("短"), finishReason: "stop" }) }], "long input, short output", 1)
  // ASCII input, long multi-byte output.
  sameAsUsual([{ ...shortInput, "genkit:input": JSON.stringify({ messages: [user("plain ASCII question")] }) }], "ASCII input, long output", 1)
})
