"use strict"
// Secret scrubbing and size caps (issue 11, items 3 and 4) through the processor, on real Genkit
// spans (the 1.42 corpus), in both modes: each secret kind in a transcript, a tool's arguments and
// its result is replaced by [REDACTED], look-alikes stay, the JSON stays valid; a 30 MB history is
// capped to a parseable attribute (oldest non-system messages dropped whole, the count written);
// a single multi-byte part is cut inside its text at every byte boundary. The core's property tests
// (core/tests/content_props.rs) cover the same rules on generated input.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { load } = require("./helpers/fixtures")

const rows = load("genkit-1.42-spans.jsonl")
const model = rows.find((r) => r.attributes["genkit:metadata:subtype"] === "model" && JSON.parse(r.attributes["genkit:input"]).messages.length >= 2)
const tool = rows.find((r) => r.attributes["genkit:metadata:subtype"] === "tool")
const CONTENT = ["gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]

// One of each kind the default patterns cover (fake values in the providers' documented formats).
const SECRETS = {
  authorization: ["Authorization: Bearer abcdefghijklmnop1234567890", "abcdefghijklmnop1234567890"],
  bearer: ["token Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"],
  openai: ["sk-abcdefghijklmnopqrstuvwxyz1234567890", "sk-abcdefghijklmnopqrstuvwxyz1234567890"],
  openaiProject: ["sk-proj-Abc123Def456Ghi789Jkl012Mno345", "sk-proj-Abc123Def456Ghi789Jkl012Mno345"],
  anthropic: ["sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"],
  google: ["AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"],
  awsKeyId: ["AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"],
  awsSecretPair: ["aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  github: ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
  slack: ["xoxb-1234567890-1234567890-abcdefghijklmnopqrstuvwx", "xoxb-1234567890-1234567890-abcdefghijklmnopqrstuvwx"],
  jwt: ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
  privateKey: ["-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"],
  mapleSecret: ["maple_sk_abcdefghijklmnop1234567890", "maple_sk_abcdefghijklmnop1234567890"],
  maplePublic: ["maple_pk_abcdefghijklmnop1234567890", "maple_pk_abcdefghijklmnop1234567890"],
}
// Text that looks like a secret's prefix but is not one: kept as written.
const LOOKALIKES = ["task-force", "sk-learn", "the bearer of good news", "risk-averse planning", "AIza is a prefix", "ghp_short", "xoxb-", "-----BEGIN PUBLIC KEY-----", "maple_sk_", "authorization pending"]

function end(processor, row, attributes) {
  const attrs = { ...row.attributes, ...attributes }
  processor.onEnd({ attributes: attrs, name: row.name, status: row.status, events: [], spanContext: () => ({ traceId: row.traceId, spanId: row.spanId }), parentSpanContext: row.parentSpanId ? { spanId: row.parentSpanId } : undefined })
  return attrs
}

/** The real model span with `text` added to its last user message and to its answer. */
function withText(text) {
  const input = JSON.parse(model.attributes["genkit:input"])
  const user = input.messages.findLast((m) => m.role === "user")
  user.content.push({ text })
  const output = JSON.parse(model.attributes["genkit:output"])
  const message = output.message ?? output.candidates?.[0]?.message
  message.content.push({ text })
  return { "genkit:input": JSON.stringify(input), "genkit:output": JSON.stringify(output) }
}

for (const mode of ["complete", "reference"]) {
  test(`${mode}: every secret kind in a transcript, tool arguments and a tool result is replaced; look-alikes stay; JSON stays valid`, () => {
    const processor = new GenkitForMaple({ mode })
    assert.equal(processor.isNative, true)
    for (const [kind, [text, secret]] of Object.entries(SECRETS)) {
      const body = `see ${text} and ${LOOKALIKES.join(", ")}`
      const m = end(processor, model, withText(body))
      const t = end(processor, tool, { "genkit:input": JSON.stringify({ city: "Paris", note: body }), "genkit:output": JSON.stringify({ ok: true, log: body }) })
      const s = end(processor, tool, { "genkit:output": JSON.stringify(body) }) // a string result: its text
      for (const [attrs, keys] of [[m, ["gen_ai.input.messages", "gen_ai.output.messages"]], [t, ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]], [s, ["gen_ai.tool.call.result"]]]) {
        for (const key of keys) {
          const value = attrs[key]
          assert.equal(typeof value, "string", `${kind} ${key} written`)
          assert.ok(!value.includes(secret), `${mode} ${kind}: ${key} still holds the secret: ${value.slice(0, 300)}`)
          assert.ok(value.includes("[REDACTED]"), `${kind} ${key}`)
          for (const lookalike of LOOKALIKES) assert.ok(value.includes(lookalike), `${kind} ${key}: look-alike "${lookalike}" kept`)
          if (!(attrs === s && key === "gen_ai.tool.call.result")) JSON.parse(value)
        }
        // Genkit's own attributes are never changed.
        for (const k of Object.keys(attrs)) if (k.startsWith("genkit:")) assert.ok(k in model.attributes || k in tool.attributes || k === "genkit:input" || k === "genkit:output")
      }
      assert.ok(m["genkit:input"].includes(secret), "genkit:input itself is the user's: unchanged")
    }
  })

  test(`${mode}: a user pattern is scrubbed too; scrubSecrets: false writes the transcript as mapped`, () => {
    const body = "ticket INTERNAL-998877 and sk-abcdefghijklmnopqrstuvwxyz1234567890"
    const extra = end(new GenkitForMaple({ mode, secretPatterns: ["INTERNAL-[0-9]{6}"] }), model, withText(body))
    assert.ok(!extra["gen_ai.input.messages"].includes("INTERNAL-998877"))
    assert.ok(!extra["gen_ai.input.messages"].includes("sk-abcdefghijklmnopqrstuvwxyz1234567890"))
    const off = end(new GenkitForMaple({ mode, scrubSecrets: false }), model, withText(body))
    assert.ok(off["gen_ai.input.messages"].includes("INTERNAL-998877 and sk-abcdefghijklmnopqrstuvwxyz1234567890"))
    assert.throws(() => new GenkitForMaple({ mode, secretPatterns: ["(unclosed"] }), TypeError)
  })

  test(`${mode}: a user pattern that matches only decoded text (a quote) is applied to tool arguments and results, and to the transcript`, () => {
    const processor = new GenkitForMaple({ mode, secretPatterns: ['password="[^"]+"'] })
    const t = end(processor, tool, { "genkit:input": JSON.stringify({ cmd: 'login password="hunter22"' }), "genkit:output": JSON.stringify({ out: 'password="hunter22"' }) })
    const m = end(processor, model, withText('login password="hunter22"'))
    for (const [attrs, key] of [[t, "gen_ai.tool.call.arguments"], [t, "gen_ai.tool.call.result"], [m, "gen_ai.input.messages"], [m, "gen_ai.output.messages"]]) {
      assert.ok(!attrs[key].includes("hunter22") && attrs[key].includes("[REDACTED]"), `${mode} ${key}: ${attrs[key].slice(0, 200)}`)
      JSON.parse(attrs[key])
    }
  })

  test(`${mode}: a 30 MB history is capped to a parseable attribute; oldest non-system messages dropped whole, counted`, () => {
    const input = JSON.parse(model.attributes["genkit:input"])
    const system = input.messages.find((m) => m.role === "system")
    const turns = []
    let size = 0
    for (let i = 0; size < 30 * 1024 * 1024; i++) {
      const text = `turn ${i}: ${"é😀 plan the trip ".repeat(200)}`
      turns.push({ role: i % 2 ? "model" : "user", content: [{ text }] })
      size += Buffer.byteLength(text)
    }
    turns.push({ role: "user", content: [{ text: "the last question" }] })
    input.messages = [system, ...turns]
    const genkitInput = JSON.stringify(input)
    assert.ok(Buffer.byteLength(genkitInput) > 30 * 1024 * 1024)
    const max = mode === "complete" ? 256 * 1024 : 100_000
    const processor = new GenkitForMaple(mode === "complete" ? { mode } : { mode, maxContentBytes: max })
    const attrs = end(processor, model, { "genkit:input": genkitInput })
    const written = attrs["gen_ai.input.messages"]
    assert.ok(Buffer.byteLength(written) <= max, `${Buffer.byteLength(written)} <= ${max}`)
    const messages = JSON.parse(written)
    assert.equal(messages.at(-1).parts[0].content, "the last question", "the newest message is kept")
    const kept = messages.length
    // (The system message goes to gen_ai.system_instructions; `turns` ends with the last question.)
    assert.equal(attrs["genkit_for_maple.content.dropped_messages"], turns.length - kept)
    assert.ok(attrs["genkit_for_maple.content.capped"].includes("gen_ai.input.messages"))
    // Whole messages: every kept one is a turn as written.
    for (const m of messages) assert.match(m.parts[0].content, /^(turn \d+: (é😀 plan the trip ){200}|the last question)$/)
    assert.equal(attrs["genkit:input"], genkitInput)
  })

  test(`${mode}: one multi-byte part bigger than the cap is cut inside its text at every byte boundary, with the marker`, () => {
    const text = "aé😀€ü".repeat(40) // 1, 2, 4, 3, 2 bytes
    const span = { "genkit:input": JSON.stringify({ messages: [{ role: "user", content: [{ text }] }] }) }
    for (let max = 140; max < 140 + 12 * 5; max++) {
      // (the message structure around the text is about 70 bytes; every 12 consecutive caps cut
      // after each byte of the 1+2+4+3+2-byte cycle)
      const attrs = end(new GenkitForMaple({ mode, maxContentBytes: max }), model, span)
      const written = attrs["gen_ai.input.messages"]
      assert.ok(Buffer.byteLength(written) <= max, `max ${max}: ${Buffer.byteLength(written)}`)
      const content = JSON.parse(written)[0].parts[0].content
      assert.ok(content.endsWith("...[truncated]"), `max ${max}: ${content}`)
      const kept = content.slice(0, -"...[truncated]".length)
      assert.ok(text.startsWith(kept), `max ${max}: a prefix of the text, on a character boundary`)
      assert.ok(!content.includes("\ufffd"))
      assert.equal(attrs["genkit_for_maple.content.dropped_messages"], undefined, "the newest message is never dropped")
    }
  })
}

test("reference mode has no cap unless one is set; the corpus content attributes are unchanged by scrubbing", () => {
  const processor = new GenkitForMaple({ mode: "reference" })
  const big = { "genkit:input": JSON.stringify({ messages: [{ role: "user", content: [{ text: "x".repeat(400 * 1024) }] }] }) }
  const attrs = end(processor, model, big)
  assert.ok(Buffer.byteLength(attrs["gen_ai.input.messages"]) > 400 * 1024)
  for (const row of rows) {
    const out = { ...row.attributes }
    processor.onEnd({ attributes: out, name: row.name })
    for (const key of CONTENT) assert.equal(out[key], row.expected_attributes[key], `${row.name} ${key}`)
  }
})

test("reference mode: a native tool span is one binding call (mapToolSpan) with the content rules applied in Rust, no filterContent", () => {
  const secret = SECRETS.openaiProject[0]
  const variants = [{}, { maxContentBytes: 64 }, { scrubSecrets: false, maxContentBytes: 64 }, { captureContent: false }]
  for (const options of variants) {
    const processor = new GenkitForMaple({ mode: "reference", ...options })
    const real = processor.native
    const calls = []
    processor.native = new Proxy(real, { get: (target, key) => (typeof target[key] === "function" ? (...args) => (calls.push(key), target[key](...args)) : target[key]) })
    const long = "word ".repeat(40)
    const inputs = [JSON.stringify({ key: secret, note: long }), `plain text ${secret} ${long}`, 42, { object: true }, null, undefined]
    for (const input of inputs) {
      calls.length = 0
      const attrs = end(processor, tool, { "genkit:input": input, "genkit:output": JSON.stringify({ log: `${secret} ${long}` }) })
      assert.deepEqual(calls, ["mapToolSpan"], `${JSON.stringify(options)} ${typeof input}: one call`)
      const args = attrs["gen_ai.tool.call.arguments"]
      if (options.captureContent === false) {
        for (const key of CONTENT) assert.equal(key in attrs, false, key)
        assert.equal(attrs["gen_ai.operation.name"], "execute_tool")
        continue
      }
      // Every variant here reads values (scrubbing or a cap): a number as it is, null/undefined
      // "{}" (seed 000), an object left out (never written unscrubbed).
      if (typeof input === "object" && input !== null) assert.equal("gen_ai.tool.call.arguments" in attrs, false, `${JSON.stringify(options)}: an object left out`)
      else if (typeof input !== "string") assert.deepEqual(args, input ?? "{}", "a number as it is, null/undefined \"{}\"")
      else if (options.scrubSecrets !== false) assert.ok(!args.includes(secret) && args.includes("[REDACTED]"), args)
      if (options.maxContentBytes !== undefined) {
        if (typeof input === "string") assert.ok(Buffer.byteLength(args) <= 64, args)
        assert.ok(Buffer.byteLength(attrs["gen_ai.tool.call.result"]) <= 64)
        // Both capped attributes named, in writing order.
        const capped = typeof input === "string" ? ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"] : ["gen_ai.tool.call.result"]
        assert.deepEqual(attrs["genkit_for_maple.content.capped"], capped)
      }
    }
  }
})

for (const mode of ["reference", "complete"]) {
  test(`${mode}: tool arguments the rules leave as they are are written as the value itself; look-alike characters, lone surrogates, escapes and the cap are read exactly`, () => {
    const secret = SECRETS.openaiProject[0]
    const output = JSON.stringify({ ok: true })
    const at = (options, input) => end(new GenkitForMaple({ mode, ...options }), tool, { "genkit:input": input, "genkit:output": output })["gen_ai.tool.call.arguments"]
    // Characters whose UTF-16 code unit has an ASCII low byte (ų is U+0173: `s`; š U+0161: `a`):
    // the binding's Latin-1 screen reads `sk-`, `akia`, the text holds none.
    for (const input of [JSON.stringify({ q: "ųk-1234567890abcdefghijklmnopqrstuv" }), JSON.stringify({ q: "škia ųecret ěyJ" })]) assert.equal(at({}, input), input)
    // A lone surrogate in clean arguments: reference mode writes the value itself, surrogate
    // included (seed 000); complete mode's payloads are UTF-8 (U+FFFD in its place).
    const lone = `{"q":"\uD83D city"}`
    assert.equal(at({}, lone), mode === "reference" ? lone : lone.replace("\uD83D", "\uFFFD"))
    // A real secret next to a lone surrogate, and one spelled with a \u escape inside a JSON string.
    for (const input of [`{"q":"\uD83D ${secret}"}`, `{"q":"\\u0073k-proj-Abc123Def456Ghi789Jkl012Mno345"}`]) {
      const args = at({}, input)
      assert.ok(!args.includes("Abc123Def456Ghi789Jkl012Mno345") && args.includes("[REDACTED]"), args)
    }
    // The cap counts UTF-8 bytes: 22 three-byte characters fit 66 bytes, 23 do not.
    const fits = "日本語".repeat(7) + "日"
    assert.equal(at({ maxContentBytes: 66 }, fits), fits)
    const over = `${fits}本`
    const capped = at({ maxContentBytes: 66 }, over)
    assert.ok(capped !== over && Buffer.byteLength(capped) <= 66, capped)
    // Longer than the screen reads: the exact path, the same answer.
    const long = JSON.stringify({ q: "city ".repeat(100) })
    assert.equal(at({}, long), long)
    // The result, screened in the same scan: look-alike characters as they are, a JSON string's
    // text decoded; a secret as written, inside a JSON string's escapes, or spelled with \u is
    // replaced; with clean arguments beside it or not.
    const result = (input, output) => end(new GenkitForMaple({ mode }), tool, { "genkit:input": input, "genkit:output": output })["gen_ai.tool.call.result"]
    for (const input of [JSON.stringify({ city: "Paris" }), `{"q":"${secret}"}`, 42]) {
      const lookalike = JSON.stringify({ q: "ųk-1234567890abcdefghijklmnopqrstuv", t: "škia" })
      assert.equal(result(input, lookalike), lookalike)
      // Text beyond ASCII (one read of the output gives its screen and its text): as written.
      const wide = JSON.stringify({ city: "Zürich", sky: "雨 😀", t: 12 })
      assert.equal(result(input, wide), wide)
      // Longer than the screen reads: the exact path.
      const longResult = JSON.stringify({ q: "city ".repeat(100) })
      assert.equal(result(input, longResult), longResult)
      // A lone surrogate: reference mode as the reference processor writes it (escaped by
      // JSON.stringify inside an object, a string result the string itself); complete mode's
      // payloads are UTF-8 (U+FFFD in its place).
      assert.equal(result(input, `{"q":"\uD83D city"}`), mode === "reference" ? `{"q":"\\ud83d city"}` : `{"q":"\uFFFD city"}`)
      assert.equal(result(input, `"\uD83D"`), mode === "reference" ? "\uD83D" : "\uFFFD")
      assert.equal(result(input, JSON.stringify("It is 14:05\nin Zurich")), "It is 14:05\nin Zurich")
      for (const output of [JSON.stringify({ log: secret }), JSON.stringify({ log: `${"city ".repeat(100)}${secret}` }), JSON.stringify(`line one\n${secret}`), `"\\u0073k-proj-Abc123Def456Ghi789Jkl012Mno345"`]) {
        const got = result(input, output)
        assert.ok(!got.includes("Abc123Def456Ghi789Jkl012Mno345") && got.includes("[REDACTED]"), `${output}: ${got}`)
      }
    }
  })
}
