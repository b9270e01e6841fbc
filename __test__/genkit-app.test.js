"use strict"
// The example's real Genkit app (examples/support-agent/src/app.ts, genkit 1.x) run in this process
// with a real OpenTelemetry tracer provider: GenkitForMaple, then SimpleSpanProcessor with an
// InMemorySpanExporter. The example's flow, its local deterministic model and its three tools
// (object result, string result, failing) produce real Genkit spans; the test checks the gen_ai.*
// attributes GenkitForMaple wrote on them against the values the app and its model produced.
//
// Only root devDependencies are needed (genkit, tsx, the SDK): app.ts resolves genkit from the
// example's node_modules when installed, else from the root's.
const { test, before } = require("node:test")
const assert = require("node:assert/strict")
const path = require("node:path")
const { context, trace, SpanStatusCode } = require("@opentelemetry/api")
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks")
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base")
const { disableGenkitOTelInitialization } = require("genkit/tracing")
const { GenkitForMaple } = require("..")

const appPath = path.join(__dirname, "..", "examples", "support-agent", "src", "app.ts")

// The local model, never the Gemini API, whatever the environment holds.
delete process.env.GEMINI_API_KEY
delete process.env.GOOGLE_API_KEY

/** Copies every genkit:* attribute as the span ends, before GenkitForMaple runs. */
class GenkitSnapshot {
  constructor() {
    this.before = new Map()
  }
  onStart() {}
  onEnd(span) {
    const genkit = Object.fromEntries(Object.entries(span.attributes).filter(([k]) => k.startsWith("genkit:")))
    this.before.set(span.spanContext().spanId, structuredClone(genkit))
  }
  forceFlush() {
    return Promise.resolve()
  }
  shutdown() {
    return Promise.resolve()
  }
}

const exporter = new InMemorySpanExporter()
const snapshot = new GenkitSnapshot()
const processor = new GenkitForMaple({ mode: "reference" })
let app
let turns

const hr = (t) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1])
const byStart = (a, b) => (hr(a.startTime) < hr(b.startTime) ? -1 : 1)
const opOf = (span) => span.attributes["gen_ai.operation.name"]
const json = (span, key) => {
  const value = span.attributes[key]
  assert.equal(typeof value, "string", `${span.name}: ${key} is a string`)
  return JSON.parse(value)
}
const text = (content) => ({ type: "text", content })

before(async () => {
  disableGenkitOTelInitialization()
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  const provider = new BasicTracerProvider({
    spanProcessors: [snapshot, processor, new SimpleSpanProcessor(exporter)],
  })
  assert.equal(trace.setGlobalTracerProvider(provider), true)

  // tsx's ESM API (its CommonJS build of tsImport cannot load its own ESM half).
  const { tsImport } = await import("tsx/esm/api")
  app = await tsImport(appPath, __filename)
  assert.equal(app.usesGemini, false)

  // Three turns: a tool with an object result, a tool with a string result (same conversation),
  // and a failing tool in another conversation. One trace per flow run.
  const runs = [
    { chatId: "test-chat-1", text: "Where is my order A-1001?" },
    { chatId: "test-chat-1", text: "What is your return policy?" },
    { chatId: "test-chat-2", text: "Order B-2002 arrived damaged, please refund it." },
  ]
  turns = []
  for (const run of runs) {
    const usageBefore = app.reportedUsage.length
    exporter.reset()
    const reply = await app.supportChat(run)
    const spans = exporter.getFinishedSpans().slice().sort(byStart)
    turns.push({ ...run, reply, spans, usage: app.reportedUsage.slice(usageBefore) })
  }
})

test("the processor runs natively in the app", () => {
  assert.equal(processor.isNative, true)
})

test("each flow run is one trace with an invoke_agent root carrying agent name and conversation id", () => {
  for (const turn of turns) {
    assert.equal(new Set(turn.spans.map((s) => s.spanContext().traceId)).size, 1, "one trace per turn")
    const flows = turn.spans.filter((s) => s.attributes["genkit:metadata:subtype"] === "flow")
    assert.equal(flows.length, 1)
    const flow = flows[0]
    assert.equal(flow.name, "supportChat")
    assert.equal(flow.parentSpanContext, undefined, "the flow span is the root")
    assert.equal(flow.attributes["gen_ai.operation.name"], "invoke_agent")
    assert.equal(flow.attributes["gen_ai.agent.name"], "supportChat")
    assert.equal(flow.attributes["gen_ai.conversation.id"], turn.chatId)
    assert.equal(flow.attributes["genkit:metadata:conversationId"], turn.chatId)
    assert.equal(flow.status.code, SpanStatusCode.UNSET, "the flow answered")
    // Usage only on chat spans, and every span the mapping classifies is a Genkit flow/model/tool span.
    for (const span of turn.spans) {
      const usage = Object.keys(span.attributes).filter((k) => k.startsWith("gen_ai.usage."))
      if (usage.length > 0) assert.equal(opOf(span), "chat", `${span.name} has usage`)
    }
  }
  assert.equal(turns[0].reply, "Order A-1001 is shipped with DHL; expected delivery 2025-06-03.")
})

test("model spans: chat, provider googleai, model gemini-2.5-flash, the real messages and the model's token counts", () => {
  const [first] = turns
  const chats = first.spans.filter((s) => s.attributes["genkit:metadata:subtype"] === "model")
  assert.equal(chats.length, 2, "one chat span per tool-loop step")
  for (const chat of chats) {
    assert.equal(chat.name, "googleai/gemini-2.5-flash")
    assert.equal(opOf(chat), "chat")
    assert.equal(chat.attributes["gen_ai.provider.name"], "googleai")
    assert.equal(chat.attributes["gen_ai.request.model"], "gemini-2.5-flash")
    assert.deepEqual(json(chat, "gen_ai.system_instructions"), [text(app.SYSTEM_PROMPT)])
    assert.deepEqual(chat.attributes["gen_ai.response.finish_reasons"], ["stop"])
  }

  const user = { role: "user", parts: [text("Where is my order A-1001?")] }
  const toolCall = {
    type: "tool_call",
    id: "call_2",
    name: "getOrderStatus",
    arguments: { orderId: "A-1001" },
  }
  const order = { orderId: "A-1001", status: "shipped", carrier: "DHL", eta: "2025-06-03" }
  // Step 1: the user's message in, a tool call out.
  assert.deepEqual(json(chats[0], "gen_ai.input.messages"), [user])
  assert.deepEqual(json(chats[0], "gen_ai.output.messages"), [
    { role: "assistant", parts: [text("Let me check that with getOrderStatus."), toolCall], finish_reason: "stop" },
  ])
  // Step 2: the tool's result in, the answer out.
  assert.deepEqual(json(chats[1], "gen_ai.input.messages"), [
    user,
    { role: "assistant", parts: [text("Let me check that with getOrderStatus."), toolCall] },
    { role: "tool", parts: [{ type: "tool_call_response", id: "call_2", response: order }] },
  ])
  assert.deepEqual(json(chats[1], "gen_ai.output.messages"), [
    { role: "assistant", parts: [text(first.reply)], finish_reason: "stop" },
  ])

  // Tokens: exactly what the local model reported, in call order; the first call's input is the
  // system prompt and the user's text at one token per 4 characters.
  assert.equal(first.usage.length, 2)
  chats.forEach((chat, i) => {
    assert.equal(chat.attributes["gen_ai.usage.input_tokens"], first.usage[i].inputTokens)
    assert.equal(chat.attributes["gen_ai.usage.output_tokens"], first.usage[i].outputTokens)
  })
  assert.equal(first.usage[0].inputTokens, Math.ceil((app.SYSTEM_PROMPT + first.text).length / 4))
  assert.equal(first.usage[0].outputTokens, Math.ceil(("Let me check that with getOrderStatus." + '{"orderId":"A-1001"}').length / 4))
})

test("the second turn's model input carries the conversation's history", () => {
  const chats = turns[1].spans.filter((s) => opOf(s) === "chat")
  const input = json(chats[0], "gen_ai.input.messages")
  assert.deepEqual(
    input.map((m) => m.role),
    ["user", "assistant", "tool", "assistant", "user"],
  )
  assert.deepEqual(input[0], { role: "user", parts: [text("Where is my order A-1001?")] })
  assert.deepEqual(input[4], { role: "user", parts: [text("What is your return policy?")] })
})

test("tool spans: execute_tool with name, JSON arguments and the result (object as JSON, string as text)", () => {
  const [objectTool] = turns[0].spans.filter((s) => opOf(s) === "execute_tool")
  assert.equal(objectTool.name, "getOrderStatus")
  assert.equal(objectTool.attributes["gen_ai.tool.name"], "getOrderStatus")
  assert.equal(objectTool.attributes["gen_ai.tool.call.arguments"], '{"orderId":"A-1001"}')
  assert.deepEqual(JSON.parse(objectTool.attributes["gen_ai.tool.call.result"]), {
    orderId: "A-1001",
    status: "shipped",
    carrier: "DHL",
    eta: "2025-06-03",
  })

  const [stringTool] = turns[1].spans.filter((s) => opOf(s) === "execute_tool")
  assert.equal(stringTool.attributes["gen_ai.tool.name"], "lookupPolicy")
  assert.equal(stringTool.attributes["gen_ai.tool.call.arguments"], '{"topic":"returns"}')
  const policy = "Books can be returned within 30 days. Damaged books are refunded in full, return shipping is free."
  assert.equal(stringTool.attributes["gen_ai.tool.call.result"], policy, "a string result is its plain text")
  assert.equal(turns[1].reply, `Here is our policy: ${policy}`)
})

test("a failing tool: execute_tool with arguments, error status, no result; the flow still answers", () => {
  const turn = turns[2]
  const tools = turn.spans.filter((s) => opOf(s) === "execute_tool")
  assert.equal(tools.length, 1)
  const [failed] = tools
  assert.equal(failed.attributes["gen_ai.tool.name"], "issueRefund")
  assert.deepEqual(JSON.parse(failed.attributes["gen_ai.tool.call.arguments"]), { orderId: "B-2002", reason: "damaged" })
  assert.equal(failed.status.code, SpanStatusCode.ERROR)
  assert.equal(failed.status.message, "payments service unavailable (503): refund for B-2002 not issued")
  assert.equal(Object.hasOwn(failed.attributes, "gen_ai.tool.call.result"), false)

  // The recovery call: the failure is in its system instructions, and the flow's answer is its output.
  const chats = turn.spans.filter((s) => opOf(s) === "chat")
  assert.equal(chats.length, 2)
  const system = json(chats[1], "gen_ai.system_instructions")
  assert.deepEqual(system, [
    text(`${app.SYSTEM_PROMPT}\n${app.TOOL_FAILED_NOTE} payments service unavailable (503): refund for B-2002 not issued`),
  ])
  assert.deepEqual(json(chats[1], "gen_ai.output.messages"), [
    { role: "assistant", parts: [text(turn.reply)], finish_reason: "stop" },
  ])
  assert.match(turn.reply, /couldn't do that right now \(payments service unavailable \(503\)/)
})

test("GenkitForMaple changed no genkit:* attribute", () => {
  let checked = 0
  for (const turn of turns) {
    for (const span of turn.spans) {
      const before = snapshot.before.get(span.spanContext().spanId)
      const after = Object.fromEntries(Object.entries(span.attributes).filter(([k]) => k.startsWith("genkit:")))
      assert.deepEqual(after, before, span.name)
      checked++
    }
  }
  assert.ok(checked >= 15, `${checked} spans checked`)
})
