"use strict"
// Genkit-shaped attribute maps for the property tests (fast-check arbitraries), their mutations
// (tree: type swaps, deletions, nesting, null; text: truncation, non-canonical JSON), and re-exports
// `canon` (fixtures.js `normalise`), the JSON.parse/JSON.stringify normalisation used to compare
// native, pure JS and the reference.
const { mulberry32: prng } = require("./prng.js")
const { normalise: canon } = require("./fixtures.js")

const fc = require("fast-check")

// ---------------------------------------------------------------------------------------------
// Arbitraries of Genkit values (what genkit 1.42 writes into genkit:input / genkit:output).

const unit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme-ascii", maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\\", '"', "\n", "\u0000", "\u2028", "é", "😀", "\u007f") },
  // Lone surrogates: JSON.stringify escapes them (\ud83d); `rawSurrogates` below keeps them raw.
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
)
const text = fc.array(unit, { maxLength: 24 }).map((a) => a.join(""))

const scalar = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 2 ** 53 + 2, 1e21, 1.5e-7, true, false, null, "", "0"),
)
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(text, fc.constantFrom("__proto__", "1", "0", "10", "constructor", "toString")), tie("value"), {
    maxKeys: 4,
  }),
})).value

const optional = (arb) => fc.option(arb, { nil: undefined, freq: 3 })
const clean = (o) => {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return o
}

const toolRequest = fc
  .record({ name: fc.constantFrom("getWeather", "search", "x"), ref: optional(fc.constantFrom("0", "call_1", "c2")), input: optional(jsonValue) })
  .map(clean)
const toolResponse = fc
  .record({ name: fc.constantFrom("getWeather", "search"), ref: optional(fc.constantFrom("0", "call_1")), output: optional(jsonValue) })
  .map(clean)
const part = fc.oneof(
  { weight: 5, arbitrary: fc.record({ text }) },
  { weight: 1, arbitrary: fc.record({ reasoning: text }) },
  { weight: 2, arbitrary: fc.record({ toolRequest }) },
  { weight: 2, arbitrary: fc.record({ toolResponse }) },
  { weight: 1, arbitrary: fc.record({ media: fc.record({ url: fc.constantFrom("data:image/png;base64,iVBORw0KGgo=", "https://x/y.png"), contentType: fc.constant("image/png") }) }) },
  { weight: 1, arbitrary: fc.record({ data: jsonValue }) },
  { weight: 1, arbitrary: fc.record({ text, metadata: fc.record({ purpose: fc.constant("thinking") }) }) },
)
const role = fc.constantFrom("user", "model", "system", "tool")
const message = fc.record({ role, content: fc.array(part, { maxLength: 4 }) })
const request = fc
  .record({
    messages: fc.array(message, { maxLength: 5 }),
    config: optional(fc.record({ temperature: fc.double({ min: 0, max: 2, noNaN: true }) })),
    tools: optional(fc.array(fc.record({ name: fc.constant("getWeather"), description: text }), { maxLength: 2 })),
    output: optional(fc.record({ format: fc.constant("json") })),
  })
  .map(clean)
const finishReason = fc.constantFrom("stop", "length", "blocked", "other", "unknown", "interrupted")
const usage = fc
  .record({
    inputTokens: optional(fc.nat(100000)),
    outputTokens: optional(fc.nat(100000)),
    thoughtsTokens: optional(fc.nat(1000)),
    cachedContentTokens: optional(fc.nat(1000)),
  })
  .map(clean)
const modelMessage = fc.record({ role: fc.constant("model"), content: fc.array(part, { maxLength: 4 }) })
const response = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({ message: modelMessage, finishReason: optional(finishReason), usage: optional(usage), latencyMs: optional(fc.double({ min: 0, max: 1e4, noNaN: true })) })
      .map(clean),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        candidates: fc.array(fc.record({ index: fc.nat(3), message: modelMessage, finishReason }), { maxLength: 3 }),
        usage: optional(usage),
      })
      .map(clean),
  },
)

// ---------------------------------------------------------------------------------------------
// Tree mutations: pick a node by index (pre-order) and swap its type, delete it, null it, nest it.

function nodes(root) {
  const out = []
  const walk = (v, parent, key, depth) => {
    out.push({ v, parent, key })
    if (depth > 12 || v === null || typeof v !== "object") return
    for (const k of Object.keys(v)) walk(v[k], v, Array.isArray(v) ? Number(k) : k, depth + 1)
  }
  walk(root, null, null, 0)
  return out
}

const replacement = fc.oneof(
  fc.constantFrom(null, 0, 1, -0, true, false, "", "x", [], {}, [null], 2 ** 64, 1e400 /* Infinity: stringified as null */),
  jsonValue,
)
const treeOp = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom("replace", "delete", "null", "nest", "wrap", "dupe"),
  with: replacement,
  depth: fc.integer({ min: 1, max: 300 }),
})

function nest(v, depth) {
  let out = v
  for (let i = 0; i < depth; i++) out = i % 2 ? { a: out } : [out]
  return out
}

/** Applies tree mutations to a (cloned) JSON value. Returns the new root. */
function mutateTree(value, ops) {
  let root = structuredClone(value)
  for (const op of ops) {
    const list = nodes(root)
    const target = list[op.at % list.length]
    const set = (nv) => {
      if (target.parent === null) root = nv
      else target.parent[target.key] = nv
    }
    switch (op.kind) {
      case "replace":
        set(structuredClone(op.with))
        break
      case "null":
        set(null)
        break
      case "delete":
        if (target.parent === null) root = undefined
        else if (Array.isArray(target.parent)) target.parent.splice(target.key, 1)
        else delete target.parent[target.key]
        break
      case "nest":
        set(nest(target.v, op.depth))
        break
      case "wrap":
        set([target.v])
        break
      case "dupe":
        if (Array.isArray(target.parent)) target.parent.push(structuredClone(target.v))
        break
    }
    if (root === undefined) break
  }
  return root
}

// ---------------------------------------------------------------------------------------------
// Text: a JSON writer with non-canonical choices, and text mutations.

/**
 * Writes `value` as JSON text that `JSON.parse` reads back to the same value, with the choices of
 * `style`: whitespace, `\u` escapes and `\/`, numbers in exponent form, duplicate keys (a decoy
 * first: the last one wins), extra `__proto__` and integer-like keys, lone surrogates left raw.
 */
function writeJson(value, style, rnd) {
  const pick = (p) => rnd() < p
  const ws = () => (style.ws && pick(0.3) ? [" ", "\n", "\t", "\r", "  "][Math.floor(rnd() * 5)] : "")
  const str = (s) => {
    let out = '"'
    for (const ch of s) {
      const c = ch.codePointAt(0)
      if (ch === '"') out += '\\"'
      else if (ch === "\\") out += "\\\\"
      else if (c < 0x20) out += "\\u" + c.toString(16).padStart(4, "0")
      else if (c >= 0xd800 && c <= 0xdfff) out += style.rawSurrogates && pick(0.5) ? ch : "\\u" + c.toString(16)
      else if (style.escapes && pick(0.2)) {
        if (ch === "/") out += "\\/"
        else if (c > 0xffff) out += [...ch].map((u) => "\\u" + u.charCodeAt(0).toString(16).toUpperCase()).join("")
        else out += "\\u" + c.toString(16).padStart(4, "0")
      } else out += ch
    }
    return out + '"'
  }
  const num = (n) => {
    if (!Number.isFinite(n)) return "null"
    if (Object.is(n, -0)) return style.numbers && pick(0.5) ? "-0" : "0"
    if (style.numbers && pick(0.5)) {
      const e = n.toExponential()
      return pick(0.5) ? e.toUpperCase() : e
    }
    return String(n)
  }
  const write = (v) => {
    if (v === null || v === undefined) return "null"
    if (typeof v === "string") return str(v)
    if (typeof v === "number") return num(v)
    if (typeof v === "boolean") return String(v)
    if (Array.isArray(v)) return "[" + ws() + v.map((x) => write(x) + ws()).join("," + ws()) + "]"
    const entries = []
    for (const k of Object.keys(v)) {
      if (v[k] === undefined) continue
      if (style.dupes && pick(0.15)) entries.push(str(k) + ws() + ":" + ws() + write(pick(0.5) ? null : [1, { text: 5 }]))
      entries.push(str(k) + ws() + ":" + ws() + write(v[k]))
    }
    if (style.extraKeys && pick(0.2)) entries.push(str(pick(0.5) ? "__proto__" : "7") + ":" + write({ role: "system", text: "decoy" }))
    return "{" + ws() + entries.join("," + ws()) + ws() + "}"
  }
  return ws() + write(value) + ws()
}

const style = fc.record({
  ws: fc.boolean(),
  escapes: fc.boolean(),
  numbers: fc.boolean(),
  dupes: fc.boolean(),
  extraKeys: fc.boolean(),
  rawSurrogates: fc.boolean(),
})


/** Serialises a mutated value: canonical (JSON.stringify) or through the non-canonical writer. */
const serialised = (valueArb) =>
  fc.tuple(valueArb, fc.array(treeOp, { maxLength: 3 }), fc.option(style, { freq: 2 }), fc.nat()).map(([v, ops, st, seed]) => {
    const mutated = ops.length > 0 ? mutateTree(v, ops) : v
    if (mutated === undefined) return undefined
    return st === null ? JSON.stringify(mutated) : writeJson(mutated, st, prng(seed))
  })

/** Cuts a text at a position (or leaves it); positions are drawn over the whole length. */
const truncation = fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { freq: 4 })
const cut = (textValue, at) => (at === null || typeof textValue !== "string" ? textValue : textValue.slice(0, Math.floor(at * textValue.length)))

// A non-string attribute value (the SDK keeps primitives and arrays; users can put anything).
const oddValue = fc.constantFrom(5, 0, -1.5, true, false, null, undefined, [], ["a", "b"], [1, 2], { messages: [] }, 10n)

const attrText = (valueArb) =>
  fc.oneof({ weight: 8, arbitrary: fc.tuple(serialised(valueArb), truncation).map(([t, at]) => cut(t, at)) }, { weight: 1, arbitrary: oddValue }, { weight: 1, arbitrary: text })

const modelName = fc.oneof(fc.constantFrom("googleai/gemini-2.5-flash", "openai/gpt-4o", "anthropic/claude/x", "local", "googleai/", "/x", ""), oddValue)

/** A model span's attribute map. */
const modelSpan = fc
  .record({
    "genkit:name": modelName,
    "genkit:type": fc.constant("action"),
    "genkit:metadata:subtype": fc.constant("model"),
    "genkit:input": attrText(request),
    "genkit:output": attrText(response),
    "genkit:path": fc.constant("/{flow,t:flow}/{generate,t:util}/{googleai/gemini,t:action,s:model}"),
  })
  .map(clean)

/** A tool span's attribute map. */
const toolSpan = fc
  .record({
    "genkit:name": fc.oneof(fc.constantFrom("getWeather", "search"), oddValue),
    "genkit:type": fc.constant("action"),
    "genkit:metadata:subtype": fc.constant("tool"),
    "genkit:input": attrText(jsonValue),
    "genkit:output": attrText(fc.oneof(jsonValue, text)),
  })
  .map(clean)

/** A flow / agent span's attribute map. */
const flowSpan = fc
  .record({
    "genkit:name": fc.oneof(fc.constantFrom("chatFlow", "agent"), oddValue),
    "genkit:type": fc.constant("action"),
    "genkit:metadata:subtype": fc.constantFrom("flow", "agent"),
    "genkit:metadata:conversationId": optional(fc.oneof(text, fc.integer(), oddValue)),
    "genkit:metadata:agent:sessionId": optional(text),
    "genkit:input": optional(attrText(jsonValue)),
  })
  .map(clean)

const anySpan = fc.oneof({ weight: 6, arbitrary: modelSpan }, { weight: 3, arbitrary: toolSpan }, { weight: 1, arbitrary: flowSpan })

/**
 * Whether the reference's answer is comparable: not when the reference ignores the output by
 * design (a `candidates` key without a truthy top-level message, issue 5).
 */
function referenceComparable(attrs) {
  if (attrs["genkit:metadata:subtype"] !== "model" || typeof attrs["genkit:output"] !== "string") return true
  let output
  try {
    output = JSON.parse(attrs["genkit:output"])
  } catch {
    return true
  }
  return !(output !== null && typeof output === "object" && "candidates" in output && !output.message)
}

/**
 * Whether content rules that read values (scrubbing, the default; a cap) leave a tool span's
 * `gen_ai.tool.call.arguments` out where the rule-free mapping and the reference copy
 * `genkit:input` as it is: a value that is not a string, a number, a boolean, null or undefined
 * (an array, an object, a symbol, a BigInt) is never written unscrubbed (index.d.ts
 * `scrubSecrets`). `mapped` is the rule-free mapping's attributes: only a value it wrote counts.
 */
function argumentsWithheld(attrs, mapped) {
  const input = attrs["genkit:input"]
  return (
    attrs["genkit:metadata:subtype"] === "tool" &&
    input != null &&
    !["string", "number", "boolean"].includes(typeof input) &&
    "gen_ai.tool.call.arguments" in mapped
  )
}

/** A structured clone that also copies BigInt and undefined values (structuredClone does). */
const cloneAttrs = (attrs) => structuredClone(attrs)

module.exports = {
  canon,
  text,
  jsonValue,
  part,
  message,
  request,
  response,
  modelSpan,
  toolSpan,
  flowSpan,
  anySpan,
  mutateTree,
  writeJson,
  prng,
  nest,
  referenceComparable,
  argumentsWithheld,
  cloneAttrs,
}
