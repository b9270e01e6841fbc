"use strict"
// Complete mode (issue 10), rule by rule, on spans of the real Genkit 1.42 runtime and the real
// model plugins: the corpus (__test__/fixtures/genkit-1.42-spans.jsonl), the plugin corpus and the
// scenario corpus (real google-genai, compat-oai, anthropic plugins against the fake provider
// servers: thinking/cache tokens, parallel equal tool calls, failing model and tool, multipart
// tool, media in and out, blocked answers, every request setting). Spans are fed to one
// `new GenkitForMaple()` (complete is the default) in the order they ended, as an SDK would.
// Expected values are read from each span's own Genkit data, never written here.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { load } = require("./helpers/fixtures")
const { spanOf, inEndOrder } = require("./helpers/spans")

const files = ["genkit-1.42-spans.jsonl", "genkit-1.42-plugin-spans.jsonl", "genkit-1.42-scenario-spans.jsonl"]

/** Every fixture row with the attributes complete mode gave it. */
function mapAll() {
  const processor = new GenkitForMaple()
  assert.equal(processor.isNative, true, "complete mode needs the native binding")
  const out = []
  for (const file of files) {
    const rows = inEndOrder(load(file))
    for (const row of rows) {
      const span = spanOf(row)
      processor.onEnd(span)
      out.push({ file, row, attrs: span.attributes, subtype: row.attributes["genkit:metadata:subtype"] })
    }
  }
  return out
}

const spans = mapAll()
const models = spans.filter((s) => s.subtype === "model")
const tools = spans.filter((s) => s.subtype === "tool" || s.subtype === "tool.v2")
const output = (s) => (typeof s.row.attributes["genkit:output"] === "string" ? JSON.parse(s.row.attributes["genkit:output"]) : undefined)
const input = (s) => JSON.parse(s.row.attributes["genkit:input"])
const prefix = (s) => s.row.attributes["genkit:name"].split("/")[0]
const isGemini = (s) => ["googleai", "vertexai"].includes(prefix(s))

test("every model span of the three corpora was mapped (chat)", () => {
  assert.ok(models.length >= 100, `${models.length} model spans`)
  for (const s of models) assert.equal(s.attrs["gen_ai.operation.name"], "chat", s.row.scenario)
})

test("rule 1: Gemini output tokens include thoughts; cache reads and reasoning from Genkit's usage", () => {
  let thinking = 0
  for (const s of models.filter(isGemini)) {
    const u = output(s)?.usage
    if (u === undefined) continue
    const a = s.attrs
    assert.equal(a["gen_ai.usage.input_tokens"], u.inputTokens, s.row.scenario)
    const expected = u.outputTokens === undefined && u.thoughtsTokens === undefined ? undefined : (u.outputTokens ?? 0) + (u.thoughtsTokens ?? 0)
    assert.equal(a["gen_ai.usage.output_tokens"], expected, s.row.scenario)
    assert.equal(a["gen_ai.usage.reasoning.output_tokens"], u.thoughtsTokens, s.row.scenario)
    assert.equal(a["gen_ai.usage.cache_read.input_tokens"], u.cachedContentTokens, s.row.scenario)
    assert.equal(a["gen_ai.usage.cache_write.input_tokens"], undefined)
    if (u.thoughtsTokens > 0) thinking++
  }
  assert.ok(thinking >= 5, `${thinking} Gemini spans with thinking tokens`)
})

test("rule 1: Claude input tokens add cache reads and writes (usage.custom)", () => {
  let cached = 0
  for (const s of models.filter((m) => prefix(m) === "anthropic")) {
    const u = output(s)?.usage
    if (typeof u?.custom?.cache_read_input_tokens !== "number") continue
    const read = u.custom.cache_read_input_tokens
    const write = u.custom.cache_creation_input_tokens
    assert.equal(s.attrs["gen_ai.usage.input_tokens"], u.inputTokens + read + write, s.row.scenario)
    assert.equal(s.attrs["gen_ai.usage.cache_read.input_tokens"], read)
    assert.equal(s.attrs["gen_ai.usage.cache_write.input_tokens"], write)
    assert.equal(s.attrs["gen_ai.usage.output_tokens"], u.outputTokens)
    if (read > 0 && write >= 0) cached++
  }
  assert.ok(cached >= 3, `${cached} Claude spans with cache reads`)
})

test("rule 1: OpenAI-compatible cached and reasoning counts from the raw usage details; never invented", () => {
  let details = 0
  for (const s of models.filter((m) => ["openai", "deepseek"].includes(prefix(m)))) {
    const o = output(s)
    if (o === undefined) continue
    const raw = o.raw?.usage
    assert.equal(s.attrs["gen_ai.usage.input_tokens"], o.usage?.inputTokens, s.row.scenario)
    assert.equal(s.attrs["gen_ai.usage.output_tokens"], o.usage?.outputTokens, s.row.scenario)
    const cached = raw?.prompt_tokens_details?.cached_tokens ?? raw?.prompt_cache_hit_tokens
    assert.equal(s.attrs["gen_ai.usage.cache_read.input_tokens"], cached, s.row.scenario)
    assert.equal(s.attrs["gen_ai.usage.reasoning.output_tokens"], raw?.completion_tokens_details?.reasoning_tokens, s.row.scenario)
    if (cached > 0) details++
  }
  assert.ok(details >= 2, `${details} OpenAI-compatible spans with cached tokens`)
  // Failed model calls report no usage: no token attribute at all.
  for (const s of models.filter((m) => m.row.status.code === 2)) {
    assert.deepEqual(Object.keys(s.attrs).filter((k) => k.startsWith("gen_ai.usage")), [], s.row.scenario)
  }
  // Usage only on chat spans; only registry keys.
  const registry = new Set(["input_tokens", "output_tokens", "cache_read.input_tokens", "cache_write.input_tokens", "reasoning.output_tokens", "cost"])
  for (const s of spans) {
    for (const k of Object.keys(s.attrs).filter((k) => k.startsWith("gen_ai.usage."))) {
      assert.equal(s.subtype, "model", k)
      assert.ok(registry.has(k.slice("gen_ai.usage.".length)), k)
      if (k !== "gen_ai.usage.cost") assert.ok(Number.isInteger(s.attrs[k]) && s.attrs[k] >= 0, `${k}=${s.attrs[k]}`)
    }
  }
})

test("rule 2: gen_ai.usage.cost, a positive USD double for known models, none for unknown ones", () => {
  let priced = 0
  for (const s of models) {
    const cost = s.attrs["gen_ai.usage.cost"]
    if (cost === undefined) continue
    assert.equal(typeof cost, "number")
    assert.ok(Number.isFinite(cost) && cost >= 0, `${cost}`)
    assert.ok(s.attrs["gen_ai.usage.input_tokens"] !== undefined)
    priced++
  }
  assert.ok(priced >= 50, `${priced} priced model spans`)
  // A local model (no provider prefix, not in the price data) is never priced, not even at 0.
  for (const s of models.filter((m) => !m.row.attributes["genkit:name"].includes("/"))) {
    assert.equal(s.attrs["gen_ai.usage.cost"], undefined, s.row.attributes["genkit:name"])
  }
  // cost: false turns it off.
  const off = new GenkitForMaple({ cost: false })
  const span = spanOf(models.find((m) => m.attrs["gen_ai.usage.cost"] !== undefined).row)
  off.onEnd(span)
  assert.equal(span.attributes["gen_ai.usage.cost"], undefined)
  assert.ok(span.attributes["gen_ai.usage.input_tokens"] !== undefined)
})

test("rule 3: gen_ai.provider.name from the semconv registry; unknown prefixes lowercased; model unchanged", () => {
  const registry = { googleai: "gcp.gemini", vertexai: "gcp.vertex_ai", openai: "openai", anthropic: "anthropic", deepseek: "deepseek" }
  for (const s of models) {
    const name = s.row.attributes["genkit:name"]
    const p = name.split("/")[0]
    assert.equal(s.attrs["gen_ai.provider.name"], registry[p] ?? p.toLowerCase(), name)
    assert.equal(s.attrs["gen_ai.request.model"], s.row.expected_attributes?.["gen_ai.request.model"] ?? (name.includes("/") ? name.slice(name.indexOf("/") + 1) : name))
  }
  assert.ok(models.some((s) => s.attrs["gen_ai.provider.name"] === "echomodel"), "a local model's name passes through lowercased")
})

test("rule 3 on every kind of genkit:name: short and long ASCII, non-ASCII, a lone surrogate, a number, absent", () => {
  const row = models[0].row
  const cases = [
    ["openai/gpt-4o", "openai", "gpt-4o"],
    [`openai/${"m".repeat(79)}`, "openai", "m".repeat(79)], // past the binding's 79-unit stack read
    [`Custom/${"x-".repeat(300)}`, "custom", "x-".repeat(300)],
    ["Ünicode/modèle-日本", "ünicode", "modèle-日本"],
    ["prov/a\ud800b", "prov", "a\ufffdb"], // UTF-8 on the wire: the lone surrogate as U+FFFD
    [42, "42", "42"], // String(42), as seed 000 reads genkit:name
  ]
  for (const [name, provider, model] of cases) {
    const span = spanOf(row)
    span.attributes["genkit:name"] = name
    new GenkitForMaple().onEnd(span)
    assert.equal(span.attributes["gen_ai.provider.name"], provider, String(name))
    assert.equal(span.attributes["gen_ai.request.model"], model, String(name))
    assert.equal(span.attributes["genkit:name"], name, "genkit:name unchanged")
  }
  const span = spanOf(row)
  delete span.attributes["genkit:name"]
  new GenkitForMaple().onEnd(span)
  assert.equal(span.attributes["gen_ai.operation.name"], "chat")
  assert.equal(span.attributes["gen_ai.request.model"], undefined, "no name, no model")
})

test("rule 4: error.type on every failed flow, model and tool span (the thrown error's name), never on a successful one", () => {
  let failed = 0
  for (const s of spans.filter((x) => ["flow", "agent", "model", "tool", "tool.v2"].includes(x.subtype))) {
    if (s.row.status.code !== 2) {
      assert.equal(s.attrs["error.type"], undefined, `${s.row.scenario} ${s.row.name}`)
      continue
    }
    failed++
    const event = s.row.events.find((e) => e.name === "exception")
    const stackName = event.attributes["exception.stacktrace"].split("\n")[0].split(":")[0]
    assert.equal(s.attrs["error.type"], stackName, s.row.scenario)
    assert.match(s.attrs["error.type"], /^(GenkitError|Error)$/)
  }
  assert.ok(failed >= 10, `${failed} failed spans`)
  // A failed model call still gets its input messages and model.
  for (const s of models.filter((m) => m.row.status.code === 2)) {
    assert.match(s.attrs["error.type"], /^(GenkitError|Error)$/)
    assert.ok(JSON.parse(s.attrs["gen_ai.input.messages"]).length >= 1, s.row.scenario)
    assert.ok(s.attrs["gen_ai.request.model"])
  }
})

test("rule 4 reads only the head of a stack trace: the same error.type for names around 128 bytes, long first lines and long stacks, on flow, model and tool spans", () => {
  // The binding reads the first 256 code units of exception.stacktrace (core span::stack_head);
  // the answers are those of the whole stack trace (its first line's name, when a JavaScript
  // identifier of at most 128 bytes, else exception.type, else _OTHER).
  const frames = "\n    at f (file:///app/x.js:1:2)".repeat(400) // 12 KB of frames
  const cases = [
    ["GenkitError: blocked" + frames, "400", "GenkitError"],
    ["E".repeat(63) + ": m" + frames, "400", "E".repeat(63)], // around the binding's first read of 64 units
    ["E".repeat(64) + ": m" + frames, "400", "E".repeat(64)],
    ["E".repeat(65) + ": m" + frames, "400", "E".repeat(65)],
    ["E".repeat(64), "400", "E".repeat(64)],
    ["E".repeat(65), "400", "E".repeat(65)],
    ["_OTHER: named so" + frames, "400", "_OTHER"], // the stack's name, whatever exception.type says
    ["not a name: x" + frames, "403", "403"],
    ["E".repeat(128) + ": m" + frames, "400", "E".repeat(128)],
    ["E".repeat(129) + ": m" + frames, "400", "400"],
    ["E".repeat(255) + ": m" + frames, undefined, "_OTHER"],
    ["E".repeat(300) + frames, "TypeError", "TypeError"], // no ':' in the first line
    ["Ünïcödé𝐀: m" + frames, "x", "Ünïcödé𝐀"],
    ["E".repeat(255) + "𝐀: m", "X", "X"], // a surrogate pair across the head's end
    ["Bad\ud800: m" + frames, "Y", "Y"], // a lone surrogate is not an identifier character
    ["x".repeat(70_000), "Z", "Z"],
  ]
  for (const subtype of ["flow", "model", "tool"]) {
    const row = spans.find((x) => x.subtype === subtype && x.row.status.code !== 2).row
    for (const [stack, type, expected] of cases) {
      const span = spanOf(row)
      span.status = { code: 2, message: "failed" }
      span.events = [{ name: "exception", attributes: { "exception.type": type, "exception.stacktrace": stack } }]
      new GenkitForMaple().onEnd(span)
      assert.equal(span.attributes["error.type"], expected, `${subtype}: ${JSON.stringify(stack.slice(0, 40))}`)
    }
  }
})

test("rule 4 on failed flows: the wrapper's ASCII reading of a stack trace's name answers only what the native rule answers", () => {
  // js/complete.js reads a failed flow's error name itself when the stack trace starts with an
  // ASCII identifier (asciiStackName) and calls the binding's errorType for everything else; where
  // it answers, its answer must be errorType's, whatever exception.type says.
  const { asciiStackName } = require("../js/complete.js")
  const { errorType } = require("../binding.js")
  const { mulberry32 } = require("./helpers/prng")
  const next = mulberry32(4)
  const pick = (list) => list[Math.floor(next() * list.length)]
  const pieces = ["E", "r", "Error", "Genkit", "_", "$", "0", "9", " ", ":", "\n", "\r", "\t", "-", ".", "(", "é", "Ü", "𝐀", "\ud800", "\udc00", "ſ", "K", "٣", "ǅ", "\u00a0", "\u2028"]
  let asked = 0
  let answered = 0
  for (let i = 0; i < 20_000; i++) {
    let stack = ""
    const n = Math.floor(next() * 8)
    for (let k = 0; k < n; k++) stack += pick(pieces)
    // Names around the 128-character limit and the 130-character head.
    if (next() < 0.2) stack = pick(["E", "e", "_", "$"]).repeat(120 + Math.floor(next() * 15)) + stack
    if (next() < 0.5) stack += pick([": message\n    at f (file:///a.js:1:2)", "\n    at g", ":", ""])
    const type = pick(["TypeError", "400", "", "  ", undefined])
    const fast = asciiStackName(stack)
    const expected = errorType(type, stack)
    asked++
    if (fast !== undefined) {
      answered++
      assert.equal(fast, expected, JSON.stringify(stack.slice(0, 60)))
    }
  }
  assert.ok(answered > asked / 20 && answered < asked, `${answered} of ${asked} answered by the wrapper`)
  // Not strings: always the binding's answer.
  for (const stack of [undefined, null, 42, {}, ["Error"]]) assert.equal(asciiStackName(stack), undefined)
  // The corpus's failed flows take the wrapper's reading.
  const failedFlows = spans.filter((x) => x.subtype === "flow" && x.row.status.code === 2)
  assert.ok(failedFlows.length >= 2)
  for (const s of failedFlows) {
    const stack = s.row.events.find((e) => e.name === "exception").attributes["exception.stacktrace"]
    assert.equal(asciiStackName(stack), s.attrs["error.type"])
  }
})

/** The tool requests of the model answers of a trace, in order. */
function askedIn(traceId) {
  return models
    .filter((m) => m.row.traceId === traceId && output(m) !== undefined)
    .flatMap((m) => {
      const o = output(m)
      const messages = o.message ? [o.message] : (o.candidates ?? []).map((c) => c.message)
      return messages.flatMap((msg) => msg?.content ?? []).filter((p) => p.toolRequest).map((p) => p.toolRequest)
    })
}

test("rule 5: gen_ai.tool.call.id is the ref of the model's tool request, each used once; parallel equal calls each get one of their ids", () => {
  let paired = 0
  for (const s of tools) {
    const id = s.attrs["gen_ai.tool.call.id"]
    if (id === undefined) continue
    paired++
    // The model answer before it in the same trace asked for this tool with this id and input.
    const asked = askedIn(s.row.traceId)
    const request = asked.find((r) => r.ref === id)
    assert.ok(request, `${s.row.scenario}: ${id} was asked for`)
    assert.equal(request.name, s.row.attributes["genkit:name"])
    assert.deepEqual(request.input, JSON.parse(s.row.attributes["genkit:input"]))
  }
  assert.ok(paired >= 20, `${paired} paired tool spans`)
  // Parallel calls with equal inputs: three tool spans, three different ids of the same answer.
  const parallel = tools.filter((s) => s.row.scenario?.includes("parallel tool calls with equal inputs"))
  const byTrace = new Map()
  for (const s of parallel) byTrace.set(s.row.traceId, [...(byTrace.get(s.row.traceId) ?? []), s])
  assert.ok(byTrace.size >= 4)
  let withRefs = 0
  for (const group of byTrace.values()) {
    const ids = group.map((s) => s.attrs["gen_ai.tool.call.id"])
    const refs = askedIn(group[0].row.traceId).map((r) => r.ref)
    if (refs.every((r) => r === undefined)) {
      // The plugin gave no call ids (Gemini): none is invented.
      assert.deepEqual(ids, group.map(() => undefined))
      continue
    }
    withRefs++
    assert.equal(new Set(ids).size, group.length, JSON.stringify(ids))
    // Every request's id is used once (equal calls are indistinguishable: Genkit's start times
    // are whole milliseconds, so each equal call gets one of their ids, each id once).
    assert.deepEqual([...ids].sort(), [...refs].sort())
  }
  assert.ok(withRefs >= 3, `${withRefs} parallel groups with call ids`)
})

test("rule 6: multipart tools (tool.v2) are execute_tool spans with output and content parts, media without bytes", () => {
  const v2 = tools.filter((s) => s.subtype === "tool.v2")
  assert.ok(v2.length >= 5)
  for (const s of v2) {
    assert.equal(s.attrs["gen_ai.operation.name"], "execute_tool")
    assert.equal(s.attrs["gen_ai.tool.name"], s.row.attributes["genkit:name"])
    assert.equal(s.attrs["gen_ai.tool.call.arguments"], s.row.attributes["genkit:input"])
    const o = output(s)
    const result = s.attrs["gen_ai.tool.call.result"]
    if (!o.content?.length) {
      assert.equal(result, typeof o.output === "string" ? o.output : JSON.stringify(o.output))
      continue
    }
    const parsed = JSON.parse(result)
    assert.deepEqual(parsed.output, o.output)
    assert.equal(parsed.content.length, o.content.filter((p) => p.text !== undefined || p.media).length)
    assert.ok(!result.includes("base64,"), "no inline bytes in the result")
  }
})

test("rule 7: media parts: remote URLs as uri parts, data: URLs as blob parts with the decoded size, never the bytes", () => {
  let blobs = 0
  let uris = 0
  for (const s of models) {
    const pairs = [
      [input(s).messages ?? [], [s.attrs["gen_ai.input.messages"], s.attrs["gen_ai.system_instructions"]]],
    ]
    const media = (input(s).messages ?? []).flatMap((m) => m.content).filter((p) => p.media)
    const o = output(s)
    const outMessages = o === undefined ? [] : o.message ? [o.message] : (o.candidates ?? []).map((c) => c.message).filter(Boolean)
    media.push(...outMessages.flatMap((m) => m.content).filter((p) => p.media))
    if (media.length === 0) continue
    const written = [s.attrs["gen_ai.input.messages"], s.attrs["gen_ai.output.messages"]].filter(Boolean).flatMap((t) => JSON.parse(t)).flatMap((m) => m.parts)
    for (const { media: m } of media) {
      if (m.url.startsWith("data:")) {
        const [header, data] = m.url.slice(5).split(",")
        const size = header.endsWith(";base64") ? Buffer.from(data, "base64").length : decodeURIComponent(data).length
        const part = written.find((p) => p.type === "blob" && p.size === size)
        assert.ok(part, `${s.row.scenario}: a blob part of ${size} bytes`)
        assert.equal(part.mime_type, m.contentType ?? header.split(";")[0])
        assert.equal(part.modality, part.mime_type.split("/")[0])
        assert.equal(part.content, undefined)
        blobs++
      } else {
        const part = written.find((p) => p.type === "uri" && p.uri === m.url)
        assert.ok(part, `${s.row.scenario}: a uri part for ${m.url}`)
        uris++
      }
    }
    for (const text of [s.attrs["gen_ai.input.messages"], s.attrs["gen_ai.output.messages"]]) {
      assert.ok(!text?.includes(";base64,"), "no data: URL copied")
    }
    void pairs
  }
  assert.ok(blobs >= 6 && uris >= 3, `${blobs} blob parts, ${uris} uri parts`)
})

test("rule 8: finish reasons in the semconv vocabulary, one per output message, equal to each message's", () => {
  const vocabulary = new Set(["stop", "length", "content_filter", "tool_call", "error", "other", "unknown", "interrupted"])
  let toolCalls = 0
  let filtered = 0
  for (const s of models) {
    const reasons = s.attrs["gen_ai.response.finish_reasons"]
    const messages = s.attrs["gen_ai.output.messages"] === undefined ? [] : JSON.parse(s.attrs["gen_ai.output.messages"])
    if (messages.length > 0) {
      assert.deepEqual(reasons, messages.map((m) => m.finish_reason), s.row.scenario)
    }
    for (const [i, m] of messages.entries()) {
      assert.ok(vocabulary.has(reasons[i]), reasons[i])
      const asks = m.parts.some((p) => p.type === "tool_call")
      if (asks) {
        assert.equal(m.finish_reason, "tool_call", s.row.scenario)
        toolCalls++
      }
    }
    const genkitReason = output(s)?.finishReason ?? output(s)?.candidates?.[0]?.finishReason
    const raw = output(s)?.raw
    // Claude's refusal (the plugin says "other") and OpenAI's (the plugin says "stop") too.
    const refused = raw?.stop_reason === "refusal" || (raw?.choices ?? []).some((c) => c.finish_reason === "content_filter" || c.message?.refusal)
    if (genkitReason === "blocked" || refused) {
      assert.deepEqual(reasons, ["content_filter"], s.row.scenario)
      filtered++
    }
  }
  assert.ok(toolCalls >= 20 && filtered >= 5, `${toolCalls} tool_call answers, ${filtered} blocked or refused`)
})

test("rule 9: request settings, output type, response id and model", () => {
  const keys = { temperature: "temperature", maxOutputTokens: "max_tokens", topP: "top_p", topK: "top_k", stopSequences: "stop_sequences", seed: "seed", frequencyPenalty: "frequency_penalty", presencePenalty: "presence_penalty" }
  let all = 0
  for (const s of models) {
    const config = input(s).config ?? {}
    for (const [genkit, semconv] of Object.entries(keys)) {
      assert.deepEqual(s.attrs[`gen_ai.request.${semconv}`], config[genkit], `${s.row.scenario} ${genkit}`)
    }
    if (Object.keys(keys).every((k) => k === "topK" || config[k] !== undefined)) all++
    const format = input(s).output?.format
    assert.equal(s.attrs["gen_ai.output.type"], format === undefined ? undefined : format === "text" ? "text" : format === "media" ? "image" : "json")
    const o = output(s)
    if (o === undefined) continue
    const id = o.raw?.id ?? o.custom?.responseId ?? o.custom?.id
    assert.equal(s.attrs["gen_ai.response.id"], id, s.row.scenario)
    const model = o.raw?.model ?? o.custom?.modelVersion ?? o.custom?.model
    assert.equal(s.attrs["gen_ai.response.model"], model, s.row.scenario)
  }
  assert.ok(all >= 2, `${all} spans with every request setting`)
  assert.ok(models.some((s) => s.attrs["gen_ai.output.type"] === "json"))
})

test("complete mode keeps what reference mode writes where no rule changes it", () => {
  for (const s of spans) {
    const expected = s.row.expected_attributes
    // tool.v2 is not a tool call for the reference (rule 6 changes it).
    if (expected === undefined || s.subtype === "tool.v2") continue
    for (const key of ["gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.conversation.id", "gen_ai.tool.name", "gen_ai.tool.call.arguments"]) {
      assert.deepEqual(s.attrs[key], expected[key], `${s.row.scenario} ${key}`)
    }
    const hasMedia = s.row.attributes["genkit:input"]?.includes('"media"')
    if (s.subtype === "model" && !hasMedia && expected["gen_ai.input.messages"] !== undefined) {
      assert.equal(s.attrs["gen_ai.input.messages"], expected["gen_ai.input.messages"], s.row.scenario)
      assert.equal(s.attrs["gen_ai.system_instructions"], expected["gen_ai.system_instructions"])
    }
    // genkit:* attributes are never changed.
    for (const [k, v] of Object.entries(s.row.attributes)) assert.deepEqual(s.attrs[k], v, k)
  }
})

test("rule 5's state: spanEnded is asked at a root span's end only while the mapper keeps tool call ids, and every trace's state is gone at the end", () => {
  const processor = new GenkitForMaple()
  const real = processor.mapper.spanEnded.bind(processor.mapper)
  let asked = 0
  let lastAnswer
  processor.mapper.spanEnded = (...args) => {
    asked++
    lastAnswer = real(...args)
    return lastAnswer
  }
  let roots = 0
  let rootsWithoutState = 0
  for (const file of files) {
    const rows = inEndOrder(load(file))
    for (const row of rows) {
      const span = spanOf(row)
      const root = span.parentSpanContext === undefined
      const before = asked
      if (root && !processor.holdsToolCalls) rootsWithoutState++
      processor.onEnd(span)
      if (root) {
        roots++
        // The mapper keeps state only while a trace's tool requests wait for their tool spans.
        if (processor.holdsToolCalls || asked > before) assert.equal(asked, before + 1, row.name)
      }
    }
  }
  assert.ok(roots > 20, `${roots} root spans`)
  assert.ok(asked > 0 && asked < roots, `spanEnded asked at ${asked} of ${roots} root ends`)
  assert.ok(rootsWithoutState > 0)
  // Every trace ended here: nothing is kept, and the processor knows it.
  assert.equal(lastAnswer, false)
  assert.equal(processor.holdsToolCalls, false)
  assert.equal(processor.mapper.spanEnded("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", true), false)
})
