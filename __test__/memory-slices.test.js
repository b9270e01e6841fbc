"use strict"
// Issue 13, memory per span: outputs that are a range of the input are written as slices of it
// (src/slice.rs). A tool span's `gen_ai.tool.call.result` that is the text of a JSON string
// without escapes, or a JSON value as written, is `output.slice(a, b)`; a long `genkit:output`
// that is one JSON string without escapes is checked in chunks (32 Ki units) without being copied
// into Rust. Every case is compared with the pure-JS mapping (mapSpanJs), on every chunk boundary,
// escape position, surrogate and JSON shape, with and without content rules that read the value.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")

const CHUNK = 32 << 10
const STREAM = 64 << 10
const plain = new GenkitForMaple({ mode: "reference", scrubSecrets: false })
const scrubbing = new GenkitForMaple({ mode: "reference" })
assert.ok(plain.isNative, "the binding must be loaded (npm run build)")

const tool = (output) => ({ "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": "{}", "genkit:output": output })

/** Maps `output` natively and with the pure-JS mapping; both must write the same attributes. */
function same(output, p = plain, label = "") {
  const native = tool(output)
  p.onEnd({ name: "t", attributes: native })
  const js = tool(output)
  mapSpanJs(js)
  const what = `${label} length ${output.length}`
  assert.equal(native["gen_ai.tool.call.result"], js["gen_ai.tool.call.result"], what)
  assert.deepEqual(Object.keys(native).sort(), Object.keys(js).sort(), what)
  return native["gen_ai.tool.call.result"]
}

/** A JSON string literal of `n` units of `unit`, with `insert` written at `at` (inside the quotes). */
function literal(n, unit, insert = "", at = 0) {
  const body = unit.repeat(n)
  return `"${body.slice(0, at)}${insert}${body.slice(at)}"`
}

test("long plain JSON strings: every length around the stream size and the chunk boundaries, ASCII, two-byte, surrogate pairs", () => {
  for (const unit of ["a", "ж", "😀"]) {
    for (const total of [STREAM - 1, STREAM, STREAM + 1, 2 * CHUNK + 1, 3 * CHUNK - 1, 3 * CHUNK, 3 * CHUNK + 2, 200_001]) {
      const n = Math.floor((total - 2) / unit.length)
      const output = literal(n, unit)
      const result = same(output, plain, unit)
      assert.equal(result, output.slice(1, -1))
    }
  }
})

test("a pair split across a chunk boundary and lone surrogates are kept as JSON.parse keeps them", () => {
  for (const at of [CHUNK - 2, CHUNK - 1, CHUNK, 2 * CHUNK - 1, STREAM + 5]) {
    for (const insert of ["😀", "\ud800", "\udc00", "\udbff\udbff", "\udc00\ud800"]) {
      same(literal(STREAM + 10, "b", insert, at), plain, `insert ${JSON.stringify(insert)} at ${at}`)
    }
  }
})

test("escapes, quotes and control characters at every chunk position fall back to the full mapping", () => {
  const positions = [0, 1, CHUNK - 2, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK - 1, STREAM + 8, STREAM + 9]
  for (const unit of ["a", "ж"]) {
    for (const insert of ['\\"', "\\\\", "\\n", "\\u0041", "\\ud800", '"', "\n", "\u001f", "\\"]) {
      for (const at of positions) {
        same(literal(STREAM + 10, unit, insert, at), plain, `${unit} ${JSON.stringify(insert)} at ${at}`)
      }
    }
  }
})

test("other long tool outputs: whitespace around the string, no closing quote, JSON values as written, not JSON", () => {
  const body = "x".repeat(STREAM)
  for (const output of [
    ` "${body}"`,
    `"${body}" `,
    `\n"${body}"\t`,
    `"${body}`,
    `${body}"`,
    `"${body}"x`,
    `["${body}"]`,
    `{"k":"${body}"}`,
    `{"k":"${body}","k":1}`,
    `[1, 2, "${body}" ]`,
    `  {"k":"${body}"}  `,
    body,
    `"${body}""`,
    '"' + "ж".repeat(STREAM) + '"',
  ]) {
    const label = JSON.stringify(output.slice(0, 12))
    let parsed
    try {
      parsed = JSON.parse(output)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || typeof parsed === "string") {
      same(output, plain, label)
      continue
    }
    // A JSON value is written as written (README, "JSON as JSON.parse reads it"): equal to the
    // pure-JS mapping after JSON.parse.
    const attrs = tool(output)
    plain.onEnd({ name: "t", attributes: attrs })
    const js = tool(output)
    mapSpanJs(js)
    assert.ok(attrs["gen_ai.tool.call.result"] === output.trim(), label)
    assert.deepEqual(JSON.parse(attrs["gen_ai.tool.call.result"]), JSON.parse(js["gen_ai.tool.call.result"]), label)
  }
})

test("with secret scrubbing on: a result the scrubber leaves alone is a slice of the output, one it changes is written changed", () => {
  const clean = literal(STREAM + 3, "c")
  const native = tool(clean)
  scrubbing.onEnd({ name: "t", attributes: native })
  assert.equal(native["gen_ai.tool.call.result"], clean.slice(1, -1))
  for (const output of [`{"data":"${"d".repeat(5000)}","n":1}`, `"${"é".repeat(5000)}"`, `  [1,"${"q".repeat(100)}"]  `]) {
    const attrs = tool(output)
    scrubbing.onEnd({ name: "t", attributes: attrs })
    const js = tool(output)
    mapSpanJs(js)
    assert.equal(attrs["gen_ai.tool.call.result"], js["gen_ai.tool.call.result"])
  }
  const secret = `"key sk-ant-api03-${"A".repeat(90)} ${"z".repeat(STREAM)}"`
  const attrs = tool(secret)
  scrubbing.onEnd({ name: "t", attributes: attrs })
  assert.ok(!attrs["gen_ai.tool.call.result"].includes("sk-ant-api03"), "scrubbed")
})

test("with secret scrubbing on, a long result the scrubber leaves alone is made by the slice function the binding is given (a range of the output, not a copy); a short one never calls it", () => {
  const calls = []
  function slice(...args) {
    calls.push([this.length, ...args])
    return String.prototype.slice.apply(this, args)
  }
  const cases = [
    [literal(STREAM + 3, "c"), [[STREAM + 5, 1, STREAM + 4]]],
    [literal(5000, "é"), [[5002, 1, 5001]]],
    [literal(5000, "😀"), [[10002, 1, 10001]]],
    // Short texts are copied; a JSON value as written is the output itself.
    [literal(100, "c"), []],
    [`{"data":"${"d".repeat(5000)}","n":1}`, []],
  ]
  for (const [output, expected] of cases) {
    calls.length = 0
    const attrs = tool(output)
    const flags = scrubbing.native.mapToolSpan(attrs, output, scrubbing.rulesId, slice, attrs["genkit:input"], true)
    assert.equal(flags, 0, `length ${output.length}`)
    assert.deepEqual(calls, expected, `length ${output.length}`)
    const js = tool(output)
    mapSpanJs(js)
    assert.equal(attrs["gen_ai.tool.call.result"], js["gen_ai.tool.call.result"], `length ${output.length}`)
  }
})

test("a String.prototype.slice replaced after the processor loaded is not called", () => {
  const original = String.prototype.slice
  const outputs = [literal(STREAM * 2, "s"), `{"k":"${"v".repeat(1000)}"}`]
  const spans = outputs.map(tool)
  let calls = 0
  String.prototype.slice = function (...args) {
    calls++
    return original.apply(this, args)
  }
  try {
    for (const attrs of spans) plain.onEnd({ name: "t", attributes: attrs })
  } finally {
    String.prototype.slice = original
  }
  assert.equal(calls, 0)
  assert.equal(spans[0]["gen_ai.tool.call.result"], outputs[0].slice(1, -1))
  assert.equal(spans[1]["gen_ai.tool.call.result"], outputs[1])
})

// Model spans (src/hollow.rs): string literals of 4096 units or more without escapes are kept out
// of the native copy and written as slices joined by String.prototype.concat.
const HOLLOW = 4096
const model = (input, output) => ({ "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": input, "genkit:output": output })
const KEYS = ["gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"]

/** Maps a model span natively and with the pure-JS mapping: the same attributes and flags. */
function sameModel(input, output, label) {
  const native = model(input, output)
  plain.onEnd({ name: "m", attributes: native })
  const js = model(input, output)
  mapSpanJs(js)
  for (const key of KEYS) {
    const a = native[key]
    const b = js[key]
    if (typeof a === "string" && typeof b === "string" && a !== b) {
      // JSON copied as written (README): equal after JSON.parse.
      assert.deepEqual(JSON.parse(a), JSON.parse(b), `${label} ${key}`)
    } else {
      assert.deepEqual(a, b, `${label} ${key}`)
    }
  }
  return native
}

const answer = (text, extra = "") => `{"message":{"role":"model","content":[{"text":${text}}${extra}]},"finishReason":"stop","usage":{"inputTokens":1,"outputTokens":2}}`
const request = (system, user) => `{"messages":[{"role":"system","content":[{"text":${system}}]},{"role":"user","content":[{"text":${user}}]}]}`

test("model answers: long texts at every length around the literal threshold and the chunk boundaries, ASCII, two-byte, pairs", () => {
  for (const unit of ["a", "ж", "😀"]) {
    for (const n of [STREAM, STREAM + 1, 3 * CHUNK + 7, 200_000]) {
      const text = JSON.stringify(unit.repeat(Math.ceil(n / unit.length)))
      const attrs = sameModel("{}", answer(text), unit)
      assert.ok(attrs["gen_ai.output.messages"].includes(text.slice(1, -1)))
      sameModel(request(text, text), answer('"short"'), `input ${unit}`)
    }
    // Several long texts, short ones, and literals just below and at the threshold.
    const parts = [HOLLOW - 3, HOLLOW - 2, HOLLOW - 1, HOLLOW, 5, STREAM, 70_000].map((n) => `{"text":${JSON.stringify(unit.repeat(Math.ceil(n / unit.length)))}}`)
    sameModel(request('"s"', JSON.stringify("u".repeat(STREAM))), `{"message":{"role":"model","content":[${parts.join(",")}]},"finishReason":"length"}`, `parts ${unit}`)
  }
})

test("model answers: escapes, control characters, lone surrogates, placeholder look-alikes and unterminated texts go the usual way, equal to the pure-JS mapping", () => {
  const long = "t".repeat(STREAM)
  for (const [insert, at] of [
    ["\\n", 0], ["\\n", 10], ["\\n", CHUNK], ["\\n", STREAM - 1], ['\\"', 5000], ["\\u0000", 100], ["\\\\u0000", 100],
    ["\n", 7000], ["\u0001", CHUNK + 1],
    // A raw control character before the literal grows long (not JSON, whatever follows it).
    ["\n", 0], ["\n", 10], ["\u0001", 4000], ["\u001f", HOLLOW - 10], ["\ud800", 6000], ["\udc00", CHUNK], ["\ud83d", STREAM - 1], ["😀", CHUNK - 1],
  ]) {
    const text = `"${long.slice(0, at)}${insert}${long.slice(at)}"`
    sameModel("{}", answer(text), `${JSON.stringify(insert)} at ${at}`)
    sameModel(request(text, '"u"'), answer('"a"'), `input ${JSON.stringify(insert)} at ${at}`)
  }
  sameModel("{}", answer(JSON.stringify(long), ',{"text":"\\u0000"}'), "a real \\u0000 elsewhere")
  sameModel("{}", answer(`"${long}`), "unterminated")
  sameModel("{}", `{"message":{"role":"model","content":[{"text":"${long}"}]},"finishReason":"stop"`, "cut")
  sameModel("{}", `${answer(JSON.stringify(long))}x`, "trailing text")
})

test("model answers: long values in every other position (role, finish reason, tool requests, media, candidates, usage, keys) equal to the pure-JS mapping", () => {
  const long = JSON.stringify("r".repeat(STREAM))
  const outputs = [
    `{"message":{"role":${long},"content":[{"text":"hi"}]},"finishReason":"stop"}`,
    `{"message":{"role":"model","content":[{"text":"hi"}]},"finishReason":${long}}`,
    `{"message":{"role":"model","content":[{"toolRequest":{"name":${long},"ref":${long},"input":{"q":${long},"n":[1,${long}]}}}]},"finishReason":"stop"}`,
    `{"message":{"role":"model","content":[{"media":{"url":"data:image/png;base64,${"A".repeat(STREAM)}","contentType":"image/png"}},{"text":"caption"}]}}`,
    `{"candidates":[{"message":{"role":"model","content":[{"text":${long}}]},"finishReason":"stop"},{"message":{"role":"model","content":[{"text":${long}}]},"finishReason":${long}}]}`,
    `{"message":{"role":"model","content":[{"text":${long}}]},"usage":{"inputTokens":${long},"outputTokens":3}}`,
    `{"message":{"role":"model","content":[{"text":"x","${"k".repeat(STREAM)}":1},{"reasoning":${long}}]},${long}:1,"finishReason":"stop"}`,
    `{"message":{"role":"model","content":[{"text":${long}},{"text":${long}}]},"message":{"role":"model","content":[{"text":${long}}]}}`,
    `[${long}]`,
    long,
    `{"message":null,"padding":${long}}`,
  ]
  for (const [i, output] of outputs.entries()) sameModel("{}", output, `output ${i}`)
  sameModel(`{"messages":[{"role":${long},"content":[{"text":${long}}]},{"role":"system","content":[{"text":"a"},{"text":${long}}]}],"config":${long}}`, answer('"b"'), "input roles")
  sameModel(`{"messages":"${"m".repeat(STREAM)}"}`, answer(long), "input shape")
})

test("model answers: the rope equals the flat string, and a String.prototype patched after the processor loaded is not called", () => {
  const text = JSON.stringify("p".repeat(STREAM * 2))
  const output = answer(text)
  const original = { slice: String.prototype.slice, concat: String.prototype.concat }
  let calls = 0
  // (The JS wrapper's own name mapping slices `genkit:name`: only calls on the long attribute count.)
  String.prototype.slice = function (...a) {
    if (this.length >= STREAM) calls++
    return original.slice.apply(this, a)
  }
  String.prototype.concat = function (...a) {
    calls++
    return original.concat.apply(this, a)
  }
  const attrs = model("{}", output)
  try {
    plain.onEnd({ name: "m", attributes: attrs })
  } finally {
    Object.assign(String.prototype, original)
  }
  assert.equal(calls, 0)
  assert.equal(attrs["gen_ai.output.messages"], `[{"role":"assistant","parts":[{"type":"text","content":${text}}],"finish_reason":"stop"}]`)
})

test("random Genkit-shaped answers and requests with long and short literals (seeded): the native path equals the pure-JS mapping", () => {
  let state = Number(process.env.FUZZ_SEED ?? 13)
  const rand = (n) => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state % n
  }
  const pieces = ["a", "ж", "😀", "\\n", '\\"', "\\u0041", "\\ud83d\\ude00", "\ud800", "\u0001", "\\u0000", "\\\\"]
  const literal = () => {
    const long = rand(3) > 0
    const n = long ? HOLLOW - 2 + rand(3) * rand(40_000) : rand(20)
    let body = pieces[rand(3)].repeat(n)
    if (rand(4) === 0) {
      const at = rand(body.length + 1)
      body = body.slice(0, at) + pieces[rand(pieces.length)] + body.slice(at)
    }
    return `"${body}"`
  }
  const part = () => [`{"text":${literal()}}`, `{"reasoning":${literal()}}`, `{"toolRequest":{"name":${literal()},"input":{"q":${literal()}}}}`, `{"media":{"url":${literal()}}}`][rand(4)]
  const message = (role) => `{"role":${role ?? literal()},"content":[${Array.from({ length: 1 + rand(3) }, part).join(",")}]}`
  for (let i = 0; i < 60; i++) {
    const output = rand(2)
      ? `{"message":${message('"model"')},"finishReason":${rand(5) ? '"stop"' : literal()},"usage":{"inputTokens":${rand(9)},"outputTokens":${rand(9)}}}`
      : `{"candidates":[{"message":${message('"model"')},"finishReason":"stop"},{"message":${message()}}]}`
    const input = `{"messages":[${message('"system"')},${message('"user"')}]}`
    const cut = rand(6) === 0 ? rand(output.length) : output.length
    sameModel(rand(3) ? input : "{}", output.slice(0, cut), `seed run ${i}`)
  }
})
