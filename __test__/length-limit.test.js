"use strict"
// Real Genkit with an attribute value length limit of 200 (issue 4), set as the
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT env var and as spanLimits.attributeValueLengthLimit: a small
// Genkit app (a local ai.defineModel model, a tool, a flow with a conversation id) runs in a child
// process. With GenkitForMaple every flow returns normally, every span is exported and flow, model
// and tool spans carry gen_ai.operation.name. With the reference processor (seed 000, as a
// SpanProcessor) in the same setting the flow fails and the model span is lost: the setting really
// truncates genkit:input, so this test can fail.
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")

const LIMIT = 200

async function child() {
  const { context, trace } = require("@opentelemetry/api")
  const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks")
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base")
  const { disableGenkitOTelInitialization, setCustomMetadataAttribute } = require("genkit/tracing")
  const { genkit, z } = require("genkit")
  const { GenkitForMaple } = require("..")
  const { referenceOnEnd } = require("./helpers/reference")

  const which = process.env.GFM_PROCESSOR
  const processor =
    which === "reference"
      ? { onStart() {}, onEnd: (span) => referenceOnEnd(span.attributes), forceFlush: async () => {}, shutdown: async () => {} }
      : new GenkitForMaple({ mode: "reference" })
  const counted = { started: 0, ended: 0 }
  const counter = { onStart: () => counted.started++, onEnd: () => counted.ended++, forceFlush: async () => {}, shutdown: async () => {} }
  const exporter = new InMemorySpanExporter()
  disableGenkitOTelInitialization()
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const spanLimits = process.env.GFM_LIMIT_VIA === "spanLimits" ? { spanLimits: { attributeValueLengthLimit: LIMIT } } : {}
  const provider = new BasicTracerProvider({ ...spanLimits, spanProcessors: [counter, processor, new SimpleSpanProcessor(exporter)] })
  trace.setGlobalTracerProvider(provider)

  const ai = genkit({ plugins: [] })
  const SYSTEM = "You are the weather assistant of a travel agency. ".repeat(6) + "Answer with one sentence. 😀 é"
  ai.defineModel({ name: "local/weather-model", supports: { multiturn: true, tools: true, systemRole: true } }, async (request) => {
    const last = request.messages.at(-1)
    if (last.role !== "tool") {
      return {
        message: { role: "model", content: [{ text: "Let me look that up for you, one moment please. ".repeat(3) }, { toolRequest: { name: "getWeather", ref: "call_1", input: { city: "Paris", detail: "x".repeat(250) } } }] },
        finishReason: "stop",
        usage: { inputTokens: 120, outputTokens: 20 },
      }
    }
    return {
      message: { role: "model", content: [{ text: `It is ${JSON.stringify(last.content[0].toolResponse.output).length} characters of weather: mild, 18 °C, light rain. `.repeat(4) }] },
      finishReason: "stop",
      usage: { inputTokens: 300, outputTokens: 40 },
    }
  })
  const getWeather = ai.defineTool(
    { name: "getWeather", description: "Current weather for a city", inputSchema: z.object({ city: z.string(), detail: z.string() }), outputSchema: z.any() },
    async ({ city }) => ({ city, tempC: 18, conditions: "light rain ".repeat(30), hourly: Array.from({ length: 12 }, (_, h) => ({ h, t: 15 + (h % 4) })) }),
  )
  const chatFlow = ai.defineFlow({ name: "chatFlow", inputSchema: z.object({ chatId: z.string(), text: z.string() }), outputSchema: z.string() }, async ({ chatId, text }) => {
    setCustomMetadataAttribute("conversationId", chatId)
    const response = await ai.generate({ model: "local/weather-model", system: SYSTEM, prompt: text + " " + "Please be precise. ".repeat(10), tools: [getWeather] })
    return response.text
  })

  const flows = []
  for (const [chatId, text] of [
    ["chat-1", "What is the weather in Paris?"],
    ["chat-1", "And tomorrow?"],
    ["chat-2", "Weather in Zürich, please."],
  ]) {
    try {
      const out = await chatFlow({ chatId, text })
      flows.push({ ok: true, length: out.length })
    } catch (error) {
      flows.push({ ok: false, error: `${error?.name}: ${error?.message}`.slice(0, 200) })
    }
  }
  await provider.forceFlush()
  const spans = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    subtype: s.attributes["genkit:metadata:subtype"],
    op: s.attributes["gen_ai.operation.name"],
    conversation: s.attributes["gen_ai.conversation.id"],
    inputLength: typeof s.attributes["genkit:input"] === "string" ? s.attributes["genkit:input"].length : -1,
    gen: Object.keys(s.attributes).filter((k) => k.startsWith("gen_ai.")),
  }))
  process.stdout.write(JSON.stringify({ flows, spans, counted }))
}

function run(processor, via) {
  const env = { ...process.env, GFM_LENGTH_LIMIT_CHILD: "1", GFM_PROCESSOR: processor, GFM_LIMIT_VIA: via, GEMINI_API_KEY: "", GOOGLE_API_KEY: "" }
  delete env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
  if (via === "env") env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT = String(LIMIT)
  const r = spawnSync(process.execPath, [__filename], { cwd: __dirname, env, encoding: "utf8", timeout: 120_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

if (process.env.GFM_LENGTH_LIMIT_CHILD === "1") {
  child().catch((error) => {
    console.error(error)
    process.exit(1)
  })
} else {
  for (const via of ["env", "spanLimits"]) {
    test(`attribute value length limit ${LIMIT} via ${via}: GenkitForMaple keeps every flow and span; the reference loses them`, () => {
      const ours = run("genkit-for-maple", via)
      assert.deepStrictEqual(
        ours.flows.map((f) => f.ok),
        [true, true, true],
        JSON.stringify(ours.flows),
      )
      assert.equal(ours.counted.started, ours.counted.ended)
      assert.equal(ours.spans.length, ours.counted.started, "every span is exported")
      const bySubtype = (s) => ours.spans.filter((x) => x.subtype === s)
      assert.equal(bySubtype("flow").length, 3)
      assert.ok(bySubtype("model").length >= 6, "two model calls per flow")
      assert.equal(bySubtype("tool").length, 3)
      for (const s of ours.spans.filter((x) => ["flow", "model", "tool"].includes(x.subtype))) {
        assert.equal(s.op, { flow: "invoke_agent", model: "chat", tool: "execute_tool" }[s.subtype], s.name)
      }
      assert.deepStrictEqual(bySubtype("flow").map((s) => s.conversation), ["chat-1", "chat-1", "chat-2"])
      // The limit really applied: genkit:input is cut to 200 characters on model spans.
      assert.ok(bySubtype("model").every((s) => s.inputLength === LIMIT), JSON.stringify(bySubtype("model")))
      for (const s of bySubtype("model")) {
        assert.ok(s.gen.includes("gen_ai.request.model"))
        assert.ok(!s.gen.includes("gen_ai.input.messages"), "a cut input gives no input messages")
      }

      const ref = run("reference", via)
      assert.ok(ref.flows.some((f) => !f.ok && /SyntaxError|JSON/.test(f.error)), `the reference fails the flow: ${JSON.stringify(ref.flows)}`)
      assert.ok(ref.spans.length < ref.counted.started, "the reference loses spans")
      assert.equal(ref.spans.filter((s) => s.subtype === "model").length, 0, "no model span reaches the exporter")
    })
  }
}
