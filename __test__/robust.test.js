"use strict"
// The families behind each dev adversarial case (issue 4), on the real corpus and on hand-made maps.
// Always: onEnd does not throw, genkit:* unchanged, native == pure JS after normalisation (except the
// documented depth case). Where the reference does not throw: native == reference after
// normalisation (outputs with candidates and no top-level message excepted: the reference ignores
// them by design). Where it throws: the attributes that do not depend on the failing value are
// still written, those that do are omitted.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { mapSpanJs } = require("../js/mapping")
const { referenceOnEnd } = require("./helpers/reference")
const { load } = require("./helpers/fixtures")
const { canon, writeJson, prng, nest, referenceComparable, argumentsWithheld } = require("./helpers/genkit-shapes")

const smoke = process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
let processor = new GenkitForMaple({ mode: "reference" })
const rows = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
const models = rows.filter((r) => r.attributes["genkit:metadata:subtype"] === "model")
// A synthetic model span with surrogate pairs, escapes and numbers, so cuts land inside each.
const SYNTHETIC = {
  "genkit:name": "googleai/gemini-2.5-flash",
  "genkit:metadata:subtype": "model",
  "genkit:input": JSON.stringify({ messages: [{ role: "system", content: [{ text: "Be terse 😀." }] }, { role: "user", content: [{ text: 'hé "q" \\ \n 😀😀 tab\t', metadata: { n: 12345.678e-3 } }, { toolRequest: { name: "x", ref: "1", input: { lat: -48.8566, big: 12345678901234567890 } } }] }] }),
  "genkit:output": JSON.stringify({ message: { role: "model", content: [{ text: "ok 😀 \"fine\"" }, { reasoning: "r\u00e9" }] }, finishReason: "stop", usage: { inputTokens: 1234, outputTokens: 56 } }),
}
const tools = rows.filter((r) => r.attributes["genkit:metadata:subtype"] === "tool")

const INPUT_KEYS = ["gen_ai.input.messages", "gen_ai.system_instructions"]
const OUTPUT_KEYS = ["gen_ai.output.messages", "gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"]

const pick = (attrs, keys) => Object.fromEntries(keys.filter((k) => attrs[k] !== undefined).map((k) => [k, attrs[k]]))
const without = (attrs, keys) => Object.fromEntries(Object.entries(attrs).filter(([k]) => !keys.includes(k)))

function runNative(attrs) {
  const out = { ...attrs }
  assert.doesNotThrow(() => processor.onEnd({ attributes: out, name: "robust", spanContext: () => ({ traceId: "t", spanId: "s" }) }))
  for (const [k, v] of Object.entries(attrs)) if (k.startsWith("genkit:")) assert.equal(out[k], v, `${k} changed`)
  return out
}
function runJs(attrs) {
  const out = { ...attrs }
  assert.doesNotThrow(() => mapSpanJs(out))
  return out
}
/** The reference's attributes, or `undefined` when it throws. */
function runReference(attrs) {
  const out = { ...attrs }
  try {
    referenceOnEnd(out)
    return out
  } catch {
    return undefined
  }
}

/**
 * The whole check for one model span attribute map. `side`: which attribute was damaged
 * ("input" or "output"), so that where the reference throws, the attributes of the other side
 * are compared with the undamaged mapping.
 */
function checkModel(attrs, { side, original, depthCase = false } = {}) {
  const native = runNative(attrs)
  const js = runJs(attrs)
  if (!depthCase) assert.deepStrictEqual(canon(native), canon(js), "native vs pure JS")
  const ref = runReference(attrs)
  if (ref !== undefined) {
    if (referenceComparable(attrs)) assert.deepStrictEqual(canon(native), canon(ref), "native vs reference")
    return { native, threw: false }
  }
  // The reference throws: the name attributes are still there, and the other side is intact.
  assert.equal(native["gen_ai.operation.name"], "chat")
  if (original !== undefined) {
    const clean = runNative(original)
    if (side === "input") {
      assert.deepStrictEqual(pick(native, OUTPUT_KEYS), pick(clean, OUTPUT_KEYS), "output side kept")
      for (const k of INPUT_KEYS) assert.equal(native[k], undefined, `${k} omitted`)
    } else if (side === "output") {
      assert.deepStrictEqual(pick(native, INPUT_KEYS), pick(clean, INPUT_KEYS), "input side kept")
    }
  }
  return { native, threw: true }
}

// ---------------------------------------------------------------------------------------------
// Truncation of real inputs and outputs.

/** Positions to cut at: every one (or a stride sample) plus those inside strings, escapes, numbers, surrogate pairs. */
function cutPositions(text, budget) {
  const set = new Set()
  const stride = Math.max(1, Math.floor(text.length / budget))
  for (let i = 0; i < text.length; i += stride) set.add(i)
  let inString = false
  let kinds = { string: 0, escape: 0, number: 0, pair: 0 }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    const code = text.charCodeAt(i)
    if (inString && c === "\\" && kinds.escape < 40) {
      set.add(i + 1).add(i + 2).add(i + 3)
      kinds.escape++
    }
    if (code >= 0xd800 && code <= 0xdbff && kinds.pair < 20) {
      set.add(i + 1) // between the two halves: a raw lone high surrogate remains
      kinds.pair++
    }
    if (!inString && /[0-9]/.test(c) && kinds.number < 40) {
      set.add(i + 1)
      kinds.number++
    }
    if (inString && kinds.string < 40 && i % 7 === 0) {
      set.add(i)
      kinds.string++
    }
    if (c === '"' && text[i - 1] !== "\\") inString = !inString
  }
  return [...set].filter((i) => i < text.length).sort((a, b) => a - b)
}

test("truncation of every real model input and output: dependent attributes omitted, the rest written", () => {
  let cuts = 0
  const budget = smoke ? 60 : 100000
  const kinds = { raw: 0 }
  for (const row of models.concat([{ name: "synthetic", attributes: SYNTHETIC }])) {
    for (const [key, side] of [
      ["genkit:input", "input"],
      ["genkit:output", "output"],
    ]) {
      const text = row.attributes[key]
      if (typeof text !== "string") continue
      for (const at of cutPositions(text, budget)) {
        const attrs = { ...row.attributes, [key]: text.slice(0, at) }
        if (!attrs[key].isWellFormed()) kinds.raw++
        const { native, threw } = checkModel(attrs, { side, original: row.attributes })
        assert.ok(threw, `a proper prefix of an object is not JSON (${row.name} ${key} @${at})`)
        if (side === "output") for (const k of OUTPUT_KEYS) assert.equal(native[k], undefined, k)
        cuts++
      }
    }
  }
  assert.ok(cuts > (smoke ? 2000 : 10000), `${cuts} cuts`)
  assert.ok(kinds.raw > 0, "some cuts split a surrogate pair")
})

test("truncation of every real tool output", () => {
  let cuts = 0
  for (const row of tools) {
    const text = row.attributes["genkit:output"]
    if (typeof text !== "string") continue
    for (const at of cutPositions(text, smoke ? 80 : 100000)) {
      const attrs = { ...row.attributes, "genkit:output": text.slice(0, at) }
      const native = runNative(attrs)
      assert.deepStrictEqual(canon(native), canon(runJs(attrs)))
      const ref = runReference(attrs)
      if (ref !== undefined) assert.deepStrictEqual(canon(native), canon(ref))
      else {
        assert.equal(native["gen_ai.tool.call.result"], undefined)
        assert.deepStrictEqual(without(native, ["gen_ai.tool.call.result", "gen_ai.tool.call.arguments", "genkit:output"]), without(row.expected_attributes, ["gen_ai.tool.call.result", "gen_ai.tool.call.arguments", "genkit:output"]))
      }
      cuts++
    }
  }
  assert.ok(cuts > 100, `${cuts} cuts`)
})

// ---------------------------------------------------------------------------------------------
// Text that is not JSON.

const NOT_JSON = [
  "", " ", "not json", "undefined", "NaN", "Infinity", "-Infinity", "{'a':1}", "{a:1}", "[1,]", '{"a":1,}', "01", "1.", ".5", "+1",
  "0x10", '"\\x"', '"\\u12"', '"\\ud83d\\u"', "\u00a0{}", "\ufeff{}", "{}{}", "{} x", "/* c */{}", "tru", "nul", '"unterminated',
  '{"a":1}\u0000', '"a\tb"', '"a\nb"', '{"messages":[}', "[", "{", '{"messages"', '{"messages":', "\u2028{}", "'str'", "`t`",
]

test("text that is not JSON, as model input, model output and tool output", () => {
  const good = models.find((r) => r.scenario && typeof r.attributes["genkit:output"] === "string" && r.attributes["genkit:output"].includes('"message"'))
  for (const text of NOT_JSON) {
    assert.throws(() => JSON.parse(text), SyntaxError, JSON.stringify(text))
    checkModel({ ...good.attributes, "genkit:input": text }, { side: "input", original: good.attributes })
    const { native } = checkModel({ ...good.attributes, "genkit:output": text }, { side: "output", original: good.attributes })
    for (const k of OUTPUT_KEYS) assert.equal(native[k], undefined, k)
    const tool = { "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:input": "{}", "genkit:output": text }
    const t = runNative(tool)
    assert.equal(t["gen_ai.tool.call.result"], undefined)
    assert.equal(t["gen_ai.tool.call.arguments"], "{}")
    assert.deepStrictEqual(canon(t), canon(runJs(tool)))
  }
})

// ---------------------------------------------------------------------------------------------
// Wrong shape at every level, null and wrongly typed fields.

const WRONG = [null, 0, 1, -0, "", "x", true, false, [], {}, [null], [1], ["a"], { a: 1 }, 2 ** 64, "1e400"]
const literal = (v) => (v === "1e400" ? "1e400" : JSON.stringify(v))

const INPUT = {
  messages: [
    { role: "system", content: [{ text: "Be terse." }] },
    { role: "user", content: [{ text: "weather?" }, { media: { url: "data:x" } }] },
    { role: "model", content: [{ reasoning: "think" }, { toolRequest: { name: "getWeather", ref: "1", input: { city: "Paris" } } }] },
    { role: "tool", content: [{ toolResponse: { name: "getWeather", ref: "1", output: { t: 20 } } }] },
  ],
  config: { temperature: 0 },
}
const OUTPUT = { message: { role: "model", content: [{ text: "sunny" }, { toolRequest: { name: "x", input: 1 } }] }, finishReason: "stop", usage: { inputTokens: 10, outputTokens: 2 } }
const CANDIDATES = { candidates: [{ index: 0, message: { role: "model", content: [{ text: "a" }] }, finishReason: "stop" }], usage: { inputTokens: 1 } }

/** Every path (array of keys) of a JSON value, root first. */
function paths(value, prefix = []) {
  const out = [prefix]
  if (value !== null && typeof value === "object") for (const k of Object.keys(value)) out.push(...paths(value[k], [...prefix, Array.isArray(value) ? Number(k) : k]))
  return out
}
/** JSON text of `value` with the node at `path` replaced by the JSON text `replacement`. */
function replaceAt(value, path, replacement) {
  const MARK = "\u0000MARK\u0000"
  if (path.length === 0) return replacement
  const copy = structuredClone(value)
  let node = copy
  for (const k of path.slice(0, -1)) node = node[k]
  node[path[path.length - 1]] = MARK
  return JSON.stringify(copy).replace(JSON.stringify(MARK), replacement)
}

test("wrong shape at every level of input, output and candidates: every JSON type at every position", () => {
  let cases = 0
  let threw = 0
  const base = { "genkit:name": "googleai/gemini-2.5-flash", "genkit:metadata:subtype": "model", "genkit:input": JSON.stringify(INPUT), "genkit:output": JSON.stringify(OUTPUT) }
  for (const [key, side, value] of [
    ["genkit:input", "input", INPUT],
    ["genkit:output", "output", OUTPUT],
    ["genkit:output", "output", CANDIDATES],
  ]) {
    const original = { ...base, [key]: JSON.stringify(value) }
    for (const path of paths(value)) {
      for (const wrong of WRONG) {
        const attrs = { ...original, [key]: replaceAt(value, path, literal(wrong)) }
        if (checkModel(attrs, { side, original }).threw) threw++
        // The same value with the key deleted.
        cases++
      }
      if (path.length > 0) {
        const parent = structuredClone(value)
        let node = parent
        for (const k of path.slice(0, -1)) node = node[k]
        if (Array.isArray(node)) node.splice(path[path.length - 1], 1)
        else delete node[path[path.length - 1]]
        checkModel({ ...original, [key]: JSON.stringify(parent) }, { side, original })
        cases++
      }
    }
  }
  assert.ok(cases > 500 && threw > 50, `${cases} cases, reference threw on ${threw}`)
})

test("tool spans: every JSON type as the output, and as the input", () => {
  for (const wrong of [...WRONG, { a: [1, { b: null }] }, "sunny", "1e5", "-0", '"\\ud83d"', " 1 "]) {
    for (const text of [literal(wrong), typeof wrong === "string" ? wrong : literal(wrong)]) {
      const tool = { "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:input": text, "genkit:output": text }
      const native = runNative(tool)
      assert.deepStrictEqual(canon(native), canon(runJs(tool)))
      const ref = runReference(tool)
      if (ref !== undefined) assert.deepStrictEqual(canon(native), canon(ref), text)
      else assert.equal(native["gen_ai.tool.call.result"], undefined)
      assert.equal(native["gen_ai.tool.call.arguments"], text)
    }
  }
})

// ---------------------------------------------------------------------------------------------
// Deep nesting, large strings.

const DEPTH = 100000
const deepArray = "[".repeat(DEPTH) + "]".repeat(DEPTH)
const deepObject = '{"a":'.repeat(DEPTH) + "1" + "}".repeat(DEPTH)

test(`nesting ${DEPTH} deep in every position: no throw, no crash, shape positions match JS and the reference`, () => {
  const msg = (part) => `{"messages":[{"role":"user","content":[${part}]}]}`
  const out = (part) => `{"message":{"role":"model","content":[${part}]},"finishReason":"stop","usage":{"inputTokens":1}}`
  const OK_OUT = out('{"text":"x"}')
  const OK_IN = msg('{"text":"x"}')
  for (const deep of [deepArray, deepObject]) {
    // Shape positions: the reference throws or ignores; native and JS agree.
    for (const input of [deep, `{"messages":${deep}}`, `{"messages":[${deep}]}`, `{"messages":[{"role":"user","content":${deep}}]}`, msg(deep), msg(`{"unknown":${deep},"text":"x"}`), `{"config":${deep},"messages":[]}`]) {
      checkModel({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": OK_OUT })
    }
    for (const output of [deep, `{"message":${deep}}`, out(deep), `{"message":{"role":"model","content":[]},"usage":${deep}}`, `{"candidates":${deep}}`, `{"candidates":[${deep}]}`, `{"custom":${deep},"finishReason":"stop"}`]) {
      checkModel({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": OK_IN, "genkit:output": output })
    }
  }
  // Copied positions (tool arguments, text, usage, finish reason, tool result): the documented
  // depth case. V8's JSON.stringify cannot write them (the reference throws, the pure-JS mapping
  // omits the attribute); native copies the JSON text as written.
  for (const deep of [deepArray, deepObject]) {
    const input = msg(`{"toolRequest":{"name":"x","input":${deep}}}`)
    const attrs = { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": out(`{"text":${deep}}`) }
    const native = runNative(attrs)
    const js = runJs(attrs)
    assert.equal(runReference(attrs), undefined)
    assert.equal(js["gen_ai.input.messages"], undefined)
    assert.equal(js["gen_ai.output.messages"], undefined)
    assert.equal(native["gen_ai.input.messages"], `[{"role":"user","parts":[{"type":"tool_call","name":"x","arguments":${deep}}]}]`)
    assert.equal(native["gen_ai.output.messages"], `[{"role":"assistant","parts":[{"type":"text","content":${deep}}],"finish_reason":"stop"}]`)
    for (const k of ["gen_ai.response.finish_reasons", "gen_ai.usage.input_tokens", "gen_ai.operation.name"]) assert.deepStrictEqual(native[k], js[k], k)
    const tool = { "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:input": deep, "genkit:output": deep }
    const t = runNative(tool)
    assert.equal(t["gen_ai.tool.call.result"], deep)
    assert.equal(t["gen_ai.tool.call.arguments"], deep)
    assert.equal(runJs(tool)["gen_ai.tool.call.result"], undefined)
  }
})

test("strings of several MB in text, tool input, tool output (ASCII, non-ASCII, escapes, surrogate pairs)", () => {
  const MB = smoke ? 3 : 8
  // The byte checks compare with the pure-JS twin, which has no secret scrubber: they run with
  // scrubSecrets: false. With scrubbing on (the default), values past the mapping's hand-off size
  // (16 Mi UTF-16 units) are mapped in JS and each content attribute goes through the binding's
  // filterContent (issue 11): scrubbed, never written unscrubbed.
  const scrubbing = processor
  processor = new GenkitForMaple({ mode: "reference", scrubSecrets: false })
  try {
    bigStrings(MB)
  } finally {
    processor = scrubbing
  }
  const big = "a".repeat(8 * 1024 * 1024 + 1024) // two of them: past the hand-off size
  const secret = "sk-proj-Abc123Def456Ghi789Jkl012Mno345"
  const input = `{"messages":[{"role":"user","content":[{"text":"${big} ${secret}"},{"toolRequest":{"name":"x","input":{"s":"${big}"}}}]}]}`
  const out = runNative({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": '{"message":{"role":"model","content":[{"text":"hi"}]},"finishReason":"stop"}' })
  const messages = JSON.parse(out["gen_ai.input.messages"])
  assert.equal(messages[0].parts[0].content, `${big} [REDACTED]`)
  assert.equal(out["gen_ai.output.messages"], '[{"role":"assistant","parts":[{"type":"text","content":"hi"}],"finish_reason":"stop"}]')
  assert.deepEqual(out["gen_ai.response.finish_reasons"], ["stop"])
})

function bigStrings(MB) {
  for (const unit of ["a", "é", "😀", '\\"', "\\n", "\\u00e9", "\\ud83d\\ude00"]) {
    const big = unit.repeat(Math.ceil((MB * 1024 * 1024) / unit.length))
    const input = `{"messages":[{"role":"user","content":[{"text":"${big}"},{"toolRequest":{"name":"x","input":{"s":"${big}"}}}]}]}`
    const output = `{"message":{"role":"model","content":[{"text":"${big}"}]},"finishReason":"stop","usage":{"inputTokens":5}}`
    checkModel({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": output })
    const tool = { "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:input": "{}", "genkit:output": `"${big}"` }
    const t = runNative(tool)
    assert.equal(t["gen_ai.tool.call.result"], JSON.parse(`"${big}"`))
    // Truncated: still several MB, not JSON.
    const cut = input.slice(0, input.length - 7)
    const { native } = checkModel({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": cut, "genkit:output": output }, { side: "input", original: { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": output } })
    // (Inputs past the native hand-off size are mapped in JS, which writes escapes decoded.)
    assert.equal(JSON.parse(native["gen_ai.output.messages"])[0].parts[0].content, JSON.parse(`"${big}"`))
  }
}

// ---------------------------------------------------------------------------------------------
// Lone surrogates, escaped and raw.

test("lone surrogates, escaped and raw, in every copied and compared position; raw ones go to the JS path", () => {
  // The binding reads UTF-16: a raw lone surrogate (no UTF-8 form) makes it write nothing and
  // return NEEDS_JS, and the processor maps the span in JS.
  const calls = { model: 0, tool: 0, needsJs: 0 }
  const spy = new GenkitForMaple({ mode: "reference" })
  const real = spy.native
  const { P } = require("../js/mapping")
  const count = (flags) => ((calls.needsJs += flags & P.NEEDS_JS ? 1 : 0), flags)
  spy.native = {
    mapModelSpan: (...args) => (calls.model++, count(real.mapModelSpan(...args))),
    mapToolSpan: (...args) => (calls.tool++, count(real.mapToolSpan(...args))),
  }
  for (const [lone, raw] of [
    ["\\ud83d", false],
    ["\\udc00", false],
    ["\ud83d", true],
    ["\ude00x", true],
    ["a\udbff", true],
  ]) {
    const s = `"${lone}"`
    const inputs = [
      `{"messages":[{"role":"user","content":[{"text":${s}},{"reasoning":${s}}]}]}`,
      `{"messages":[{"role":${s},"content":[{"toolRequest":{"name":${s},"ref":${s},"input":{${s}:${s}}}}]}]}`,
      `{"messages":[{"role":"system","content":[{"text":${s}}]},{"role":"tool","content":[{"toolResponse":{"name":"x","output":[${s}]}}]}]}`,
      `{${s}:1,"messages":[{"role":"user","content":[{${s}:2,"text":"ok"}]}]}`,
    ]
    const outputs = [
      `{"message":{"role":"model","content":[{"text":${s}}]},"finishReason":${s},"usage":{"inputTokens":${s},"outputTokens":1}}`,
      `{"message":{"role":"model","content":[]},"finishReason":"stop","usage":{${s}:1}}`,
    ]
    for (const input of inputs) {
      for (const output of outputs) {
        const attrs = { "genkit:name": `p/${JSON.parse(s)}`, "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": output }
        assert.equal(input.isWellFormed(), !raw)
        const before = calls.model
        const beforeJs = calls.needsJs
        const native = { ...attrs }
        spy.onEnd({ attributes: native, name: "lone" })
        assert.equal(calls.model - before, 1)
        if (raw) assert.equal(calls.needsJs - beforeJs, 1, "a raw lone surrogate is handed to the JS mapping")
        assert.deepStrictEqual(canon(native), canon(runJs(attrs)))
        assert.deepStrictEqual(canon(native), canon(runReference(attrs)))
      }
    }
    const tool = { "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:input": `{"a":${s}}`, "genkit:output": s }
    const before = calls.tool
    const beforeJs = calls.needsJs
    const native = { ...tool }
    spy.onEnd({ attributes: native, name: "lone" })
    assert.equal(calls.tool - before, 1)
    // Raw: no UTF-8 form; escaped: the decoded result text holds a lone surrogate. Both go to JS.
    assert.equal(calls.needsJs - beforeJs, 1)
    assert.equal(native["gen_ai.tool.call.result"], JSON.parse(s))
    assert.deepStrictEqual(canon(native), canon(runReference(tool)))
  }
})

// ---------------------------------------------------------------------------------------------
// Non-canonical JSON: duplicate keys, __proto__ and integer-like keys, exponent numbers and numbers
// beyond 2^53, escapes and whitespace; over the real corpus, each style alone and all together.

test("non-canonical JSON of every real span equals the reference after normalisation", () => {
  const styles = [
    { ws: true },
    { escapes: true },
    { numbers: true },
    { dupes: true },
    { extraKeys: true },
    { ws: true, escapes: true, numbers: true, dupes: true, extraKeys: true },
  ]
  let n = 0
  for (const row of models.concat(tools)) {
    for (const [i, style] of styles.entries()) {
      const attrs = { ...row.attributes }
      for (const key of ["genkit:input", "genkit:output"]) {
        if (typeof attrs[key] === "string") attrs[key] = writeJson(JSON.parse(attrs[key]), style, prng(n * 7 + i))
      }
      const native = runNative(attrs)
      assert.deepStrictEqual(canon(native), canon(runJs(attrs)), `${row.name} ${JSON.stringify(style)}`)
      // Extra keys add data inside copied JSON (tool arguments): compare with the reference then;
      // otherwise the answer is the corpus's expected_attributes (candidates included).
      if (!style.extraKeys) assert.deepStrictEqual(canon(native), canon({ ...row.expected_attributes, ...pick(attrs, ["genkit:input", "genkit:output"]) }), `${row.name} ${JSON.stringify(style)}`)
      else if (referenceComparable(attrs)) assert.deepStrictEqual(canon(native), canon(runReference(attrs)), `${row.name} ${JSON.stringify(style)}`)
      n++
    }
  }
  assert.ok(n > 300)
})

test("hand-made: duplicate keys (last wins), __proto__, integer-like keys, big and exponent numbers", () => {
  const cases = [
    ['{"messages":5,"messages":[{"role":"user","content":[{"text":"a"}]}]}', "last duplicate wins over a bad first"],
    ['{"messages":[{"role":"user","content":[{"text":"a"}]}],"messages":{"x":1}}', "a bad last duplicate wins"],
    ['{"messages":[{"role":"system","role":"user","content":[{"text":"a","text":"b"}]}]}', "duplicates inside a message and a part"],
    ['{"__proto__":{"messages":[{"role":"user","content":[]}]},"messages":[{"__proto__":{"role":"system"},"role":"user","content":[{"__proto__":{"text":"p"},"text":"t"}]}]}', "__proto__ keys are own keys"],
    ['{"messages":[{"role":"model","content":[{"toolRequest":{"name":"x","input":{"b":1,"2":2,"1":3,"__proto__":{"z":1}}}}]}]}', "integer-like and __proto__ keys in copied JSON"],
    ['{"messages":[{"role":"model","content":[{"toolRequest":{"name":"x","input":[12345678901234567890,1E400,-0,1e-400,0.1e1,5E+2,9007199254740993]}}]}]}', "numbers beyond 2^53 and in exponent form"],
    ['{"\\u006Dessages":[{"r\\u006fle":"\\u0073ystem","content":[{"te\\u0078t":"\\u0041\\/b"}]}]}', "escaped keys and values"],
    [' \t\n\r{ "messages" : [ { "role" : "user" , "content" : [ { "text" : "a" } ] } ] } \n', "whitespace everywhere"],
  ]
  const outputs = [
    '{"message":{"role":"model","content":[]},"finishReason":"stop","finishReason":"length","usage":{"inputTokens":1,"inputTokens":12345678901234567890,"outputTokens":1e2}}',
    '{"message":{"role":"\\u006dodel","content":[{"text":"x"}]},"usage":{"__proto__":{"inputTokens":5},"outputTokens":-0}}',
    '{"message":null,"message":{"role":"model","content":[]},"finishReason":"\\u0073top"}',
  ]
  for (const [input, about] of cases) {
    for (const output of outputs) {
      const attrs = { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": input, "genkit:output": output }
      const { threw } = checkModel(attrs, { side: "input", original: { ...attrs, "genkit:input": "{}" } })
      assert.equal(threw, about === "a bad last duplicate wins", about)
    }
  }
})

// ---------------------------------------------------------------------------------------------
// Non-string attribute values of every type.

test("non-string attribute values of every type, in every attribute the mapping reads", () => {
  const values = () => [
    5, 0, -1.5, NaN, true, false, null, undefined, 10n, Symbol("s"), [], ["a", "b"], [1, 2], [true], {},
    { messages: [] }, () => "f", new Date(0),
    { get messages() { throw new Error("getter") }, get message() { throw new Error("getter") } },
    { toString() { throw new Error("toString") }, valueOf() { throw new Error("valueOf") } },
    new Proxy({}, { get() { throw new Error("proxy") }, ownKeys() { throw new Error("proxy") } }),
  ]
  const IN = JSON.stringify(INPUT)
  const OUT = JSON.stringify(OUTPUT)
  const bases = [
    { "genkit:name": "googleai/gemini", "genkit:metadata:subtype": "model", "genkit:input": IN, "genkit:output": OUT },
    { "genkit:name": "getWeather", "genkit:metadata:subtype": "tool", "genkit:input": '{"city":"P"}', "genkit:output": '"sunny"' },
    { "genkit:name": "chat", "genkit:metadata:subtype": "flow", "genkit:metadata:conversationId": "c" },
    { "genkit:name": "chat", "genkit:metadata:subtype": "agent", "genkit:metadata:agent:sessionId": "s" },
  ]
  let n = 0
  for (const base of bases) {
    for (const key of ["genkit:name", "genkit:metadata:subtype", "genkit:input", "genkit:output", "genkit:metadata:conversationId", "genkit:metadata:agent:sessionId"]) {
      for (let i = 0; i < values().length; i++) {
        const value = values()[i]
        const attrs = { ...base, [key]: value }
        const native = { ...attrs }
        assert.doesNotThrow(() => processor.onEnd({ attributes: native, name: "odd" }))
        for (const k of Object.keys(attrs)) if (k.startsWith("genkit:")) assert.ok(Object.is(native[k], attrs[k]), k)
        const js = { ...attrs }
        assert.doesNotThrow(() => mapSpanJs(js))
        // The processor scrubs (the default): a tool span's non-string genkit:input is left out
        // of gen_ai.tool.call.arguments, where the rule-free mapping and the reference copy it.
        const withheld = argumentsWithheld(attrs, js)
        if (withheld) {
          assert.equal("gen_ai.tool.call.arguments" in native, false, `${String(i)}: left out`)
          delete js["gen_ai.tool.call.arguments"]
        }
        assert.deepStrictEqual(Object.keys(native).sort(), Object.keys(js).sort())
        for (const k of Object.keys(native)) if (k.startsWith("gen_ai.")) assert.ok(Object.is(native[k], js[k]) || JSON.stringify(native[k]) === JSON.stringify(js[k]), k)
        const ref = { ...attrs }
        let threw = false
        try {
          referenceOnEnd(ref)
        } catch {
          threw = true
        }
        if (!threw) {
          for (const k of new Set([...Object.keys(ref), ...Object.keys(native)])) {
            if (k.startsWith("gen_ai.") && !(withheld && k === "gen_ai.tool.call.arguments")) assert.ok(Object.is(native[k], ref[k]) || JSON.stringify(native[k]) === JSON.stringify(ref[k]), `${key}=${String(i)}: ${k}`)
          }
        } else if (["model", "tool", "flow", "agent"].includes(attrs["genkit:metadata:subtype"])) {
          // Only genkit:name can make the reference throw here: everything else is still written.
          assert.equal(key, "genkit:name")
          assert.ok(native["gen_ai.operation.name"])
          if (base["genkit:metadata:subtype"] === "model") assert.ok(native["gen_ai.input.messages"] && native["gen_ai.output.messages"])
          if (base["genkit:metadata:subtype"] === "tool") assert.equal(native["gen_ai.tool.call.result"], "sunny")
        }
        n++
      }
    }
  }
  assert.ok(n > 400)
})

test("an attribute map whose accessors throw, or that is frozen: no throw, the span passes on", () => {
  const OUT = JSON.stringify(OUTPUT)
  const throwing = { "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:output": OUT }
  Object.defineProperty(throwing, "genkit:input", { get() { throw new Error("getter") }, enumerable: true })
  const proxy = new Proxy({ "genkit:metadata:subtype": "model" }, { get(t, k) { if (k === "genkit:output") throw new Error("p"); return t[k] } })
  const frozen = Object.freeze({ "genkit:name": "a/b", "genkit:metadata:subtype": "model", "genkit:input": JSON.stringify(INPUT), "genkit:output": OUT })
  const frozenTool = Object.freeze({ "genkit:name": "t", "genkit:metadata:subtype": "tool", "genkit:output": "1" })
  for (const attributes of [throwing, proxy, frozen, frozenTool, null, undefined, 5, "x"]) {
    const next = []
    const span = { attributes, name: "odd-map" }
    assert.doesNotThrow(() => processor.onEnd(span))
    next.push(span)
    assert.equal(next[0], span)
  }
  assert.equal(throwing["gen_ai.operation.name"], "chat")
  assert.equal(frozen["gen_ai.operation.name"], undefined)
  for (const span of [undefined, null, {}, { get attributes() { throw new Error("x") } }]) assert.doesNotThrow(() => processor.onEnd(span))
})
