"use strict"
// The built-in local OTLP/HTTP receiver (js/receiver.js): the official OTLPTraceExporter
// (@opentelemetry/exporter-trace-otlp-proto) posts real Genkit spans, mapped by GenkitForMaple, to it
// on loopback, and the request decoded in Rust carries the gen_ai.* attributes with their values;
// bad requests get 4xx and the receiver keeps working; renderSessions/checkSessions on fixed spans.
const { test, after } = require("node:test")
const assert = require("node:assert/strict")
const http = require("node:http")
const { context, trace, SpanStatusCode } = require("@opentelemetry/api")
const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-proto")
const { BatchSpanProcessor, TracerProvider } = require("@opentelemetry/sdk-trace")
const { GenkitForMaple } = require("..")
const { startReceiver, renderSessions, checkSessions, renderChecks } = require("../js/receiver")
const { load } = require("./helpers/fixtures")

const corpus = load("genkit-1.42-spans.jsonl")
// Four real Genkit turns: object and string tool results (conv-A), a failing tool caught in the flow (conv-D).
const rows = corpus.filter((r) => r.scenario.startsWith("conv-A ") || r.scenario.startsWith("conv-D "))

const receivers = []
after(async () => {
  for (const r of receivers) await r.close()
})
async function receiver() {
  const r = await startReceiver()
  receivers.push(r)
  return r
}

/** Replays corpus rows as real SDK spans (same names, parents, attributes, status, times). */
function replay(tracer, replayRows) {
  const traces = new Map()
  for (const row of replayRows) {
    if (!traces.has(row.traceId)) traces.set(row.traceId, [])
    traces.get(row.traceId).push(row)
  }
  const bySpanId = new Map()
  for (const traceRows of traces.values()) {
    // Parents start first (the file lists spans in end order, children before parents).
    const rowOf = new Map(traceRows.map((row) => [row.spanId, row]))
    const start = (row) => {
      if (bySpanId.has(row.spanId)) return bySpanId.get(row.spanId)
      const parentRow = rowOf.get(row.parentSpanId)
      const parent = parentRow ? start(parentRow) : undefined
      const ctx = parent ? trace.setSpan(context.active(), parent) : context.active()
      const span = tracer.startSpan(row.name, { kind: row.kind, startTime: row.startTime, root: !parent }, ctx)
      bySpanId.set(row.spanId, span)
      return span
    }
    traceRows.forEach(start)
    for (const row of traceRows) {
      const span = bySpanId.get(row.spanId)
      span.setAttributes(structuredClone(row.attributes))
      if (row.status.code === SpanStatusCode.ERROR) span.setStatus({ code: SpanStatusCode.ERROR, message: row.status.message })
      span.end(row.endTime)
    }
  }
  return bySpanId
}

function post(url, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }))
    })
    req.on("error", reject)
    req.end(body)
  })
}

/** Exports the corpus rows through GenkitForMaple and the official OTLP exporter to `r`. */
async function exportRows(r, replayRows, options = {}) {
  const exporter = new OTLPTraceExporter({ url: `${r.url}/v1/traces`, ...options })
  const provider = new TracerProvider({
    spanProcessors: [new GenkitForMaple({ mode: "reference" }), new BatchSpanProcessor({ exporter })],
  })
  const created = replay(provider.getTracer("genkit-tracer", "v1"), replayRows)
  await provider.forceFlush()
  await provider.shutdown()
  return created
}

test("the receiver listens on 127.0.0.1 on a free port", async () => {
  const r = await receiver()
  assert.match(r.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  assert.ok(r.port > 0)
  assert.equal(r.url, `http://127.0.0.1:${r.port}`)
})

test("OTLPTraceExporter -> receiver: every decoded span carries the attributes GenkitForMaple wrote", async () => {
  assert.equal(rows.length, 19)
  const r = await receiver()
  const created = await exportRows(r, rows)
  const stats = r.stats()
  assert.ok(stats.accepted >= 1)
  assert.equal(stats.rejected, 0)

  const spans = r.spans()
  assert.equal(spans.length, rows.length)
  const bySpanId = new Map(spans.map((s) => [s.spanId, s]))
  for (const row of rows) {
    const sent = created.get(row.spanId).spanContext()
    const got = bySpanId.get(sent.spanId)
    assert.ok(got, `${row.name} arrived`)
    assert.equal(got.traceId, sent.traceId)
    assert.equal(got.name, row.name)
    // Same keys and values as the corpus's expected attributes: genkit:* as Genkit wrote them and
    // gen_ai.* as the reference mapping writes them (ints stay ints, arrays stay arrays).
    assert.deepEqual(got.attributes, row.expected_attributes, `${row.scenario} / ${row.name}`)
    assert.equal(got.status.code, row.status.code)
    assert.equal(got.scope.name, "genkit-tracer")
  }

  // A few values spelled out.
  const chat = spans.find((s) => s.attributes["gen_ai.operation.name"] === "chat")
  assert.equal(chat.attributes["gen_ai.provider.name"], "googleai")
  assert.equal(chat.attributes["gen_ai.request.model"], "gemini-2.5-flash")
  assert.equal(typeof chat.attributes["gen_ai.usage.input_tokens"], "number")
  const failed = spans.find((s) => s.attributes["gen_ai.tool.name"] === "chargeCard")
  assert.equal(failed.attributes["gen_ai.operation.name"], "execute_tool")
  assert.equal(failed.attributes["gen_ai.tool.call.arguments"], '{"amountCents":1299,"currency":"EUR"}')
  assert.equal(failed.status.code, 2)
  assert.equal(failed.status.message, "PERMISSION_DENIED: card charging is not allowed for this user")
  assert.equal(Object.hasOwn(failed.attributes, "gen_ai.tool.call.result"), false)
  const flows = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "invoke_agent")
  assert.deepEqual(flows.map((s) => s.attributes["gen_ai.conversation.id"]).sort(), ["conv-A", "conv-A", "conv-D", "conv-D"])

  // The Agent Sessions view and the checklist of these real spans.
  const view = renderSessions(spans)
  assert.match(view, /^Session conv-A {2}\(agent chatFlow; 2 turns; 4 model calls; tokens in \d+ \/ out \d+; unpriced\)$/m)
  assert.match(view, /^Session conv-D {2}\(agent resilientChatFlow; 2 turns; 2 model calls;/m)
  assert.match(view, /execute_tool chargeCard\(\{"amountCents":1299,"currency":"EUR"\}\) FAILED: PERMISSION_DENIED: card charging is not allowed for this user/)
  // Reference mode (seed 000) writes no error.type and no tool call ids: exactly those checks fail
  // (seed 001 "Known gaps").
  const verdict = checkSessions(spans)
  assert.deepEqual(
    verdict.checks.filter((c) => !c.ok).map((c) => c.name),
    ["failed spans carry error.type, successful ones none", "tool spans carry the model's tool call ids"],
    renderChecks(verdict),
  )
})

test("a malformed body gets 400, other bad requests 404/405/415, and the receiver keeps working", async () => {
  const r = await receiver()
  const url = `${r.url}/v1/traces`
  const protobuf = { "content-type": "application/x-protobuf" }

  const garbage = await post(url, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), protobuf)
  assert.equal(garbage.status, 400)
  assert.match(garbage.body, /invalid ExportTraceServiceRequest/)
  assert.equal((await post(`${r.url}/v1/nothing`, Buffer.alloc(0), protobuf)).status, 404)
  assert.equal((await post(url, "{}", { "content-type": "application/json" })).status, 415)
  const get = await new Promise((resolve, reject) =>
    http.get(url, (res) => resolve(res.statusCode) || res.resume()).on("error", reject),
  )
  assert.equal(get, 405)
  assert.equal(r.spans().length, 0)

  // Still works, with the official exporter.
  const one = rows.filter((row) => row.traceId === rows[0].traceId)
  await exportRows(r, one)
  assert.equal(r.spans().length, one.length)
  const stats = r.stats()
  assert.equal(stats.rejected, 4)
  assert.ok(stats.accepted >= 1)
  assert.equal(stats.errors.length, 4)
  assert.match(stats.errors[0], /^400 invalid ExportTraceServiceRequest/)

  // gzip, as the exporter sends with OTEL_EXPORTER_OTLP_COMPRESSION=gzip.
  const other = rows.filter((row) => row.traceId === rows[rows.length - 1].traceId)
  await exportRows(r, other, { compression: "gzip" })
  assert.equal(r.stats().gzipped, 1)
  assert.equal(r.spans().length, one.length + other.length)
  assert.deepEqual(
    r.spans().slice(one.length).map((s) => s.attributes),
    other.map((row) => row.expected_attributes),
  )

  // An empty body is a valid, empty request.
  assert.equal((await post(url, Buffer.alloc(0), protobuf)).status, 200)
  assert.equal(r.spans().length, one.length + other.length)
})

// ---------------------------------------------------------------------------------------------
// renderSessions / checkSessions on a fixed list of decoded spans.

const TRACE_1 = "11".repeat(16)
const TRACE_2 = "22".repeat(16)

function span(traceId, spanId, name, start, attributes, status = { code: 0, message: "" }) {
  return {
    traceId,
    spanId,
    parentSpanId: "",
    name,
    kind: 1,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(start + 1000),
    status,
    attributes,
  }
}

function fixedSpans() {
  const system = JSON.stringify([{ type: "text", content: "Be brief." }])
  const user = { role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] }
  const call = { type: "tool_call", id: "c1", name: "getWeather", arguments: { city: "Paris" } }
  const toolCallMsg = { role: "assistant", parts: [call] }
  const toolResult = { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: { tempC: 21 } }] }
  return [
    // Listed out of order on purpose: turns and spans are ordered by start time.
    span(TRACE_2, "b1", "support", 5000, {
      "genkit:metadata:subtype": "flow",
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "support",
      "gen_ai.conversation.id": "chat-7",
    }),
    span(TRACE_2, "b2", "lookup", 5100, {
      "genkit:metadata:subtype": "tool",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup",
      "gen_ai.tool.call.arguments": '{"q":"x"}',
      "error.type": "Error",
    }, { code: 2, message: "lookup is down" }),
    span(TRACE_1, "a1", "support", 1000, {
      "genkit:metadata:subtype": "flow",
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "support",
      "gen_ai.conversation.id": "chat-7",
    }),
    span(TRACE_1, "a2", "googleai/gemini-2.5-flash", 1100, {
      "genkit:metadata:subtype": "model",
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "googleai",
      "gen_ai.request.model": "gemini-2.5-flash",
      "gen_ai.system_instructions": system,
      "gen_ai.input.messages": JSON.stringify([user]),
      "gen_ai.output.messages": JSON.stringify([{ ...toolCallMsg, finish_reason: "stop" }]),
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 4,
      "gen_ai.usage.cache_read.input_tokens": 6,
      "gen_ai.usage.reasoning.output_tokens": 2,
      "gen_ai.usage.cost": 0.0000125,
    }),
    span(TRACE_1, "a3", "getWeather", 1200, {
      "genkit:metadata:subtype": "tool",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "getWeather",
      "gen_ai.tool.call.arguments": '{"city":"Paris"}',
      "gen_ai.tool.call.id": "c1",
      "gen_ai.tool.call.result": '{"tempC":21}',
    }),
    span(TRACE_1, "a4", "googleai/gemini-2.5-flash", 1300, {
      "genkit:metadata:subtype": "model",
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "googleai",
      "gen_ai.request.model": "gemini-2.5-flash",
      "gen_ai.system_instructions": system,
      "gen_ai.input.messages": JSON.stringify([user, toolCallMsg, toolResult]),
      "gen_ai.output.messages": JSON.stringify([
        { role: "assistant", parts: [{ type: "text", content: "21 C in Paris." }], finish_reason: "stop" },
      ]),
      "gen_ai.usage.input_tokens": 20,
      "gen_ai.usage.output_tokens": 8,
    }),
    span(TRACE_1, "a5", "generate", 1050, { "genkit:type": "util" }),
  ]
}

test("renderSessions: one block per conversation, turns in order, transcript, chat and tool lines", () => {
  assert.equal(
    renderSessions(fixedSpans()),
    [
      "Session chat-7  (agent support; 2 turns; 2 model calls; tokens in 30 / out 12; cost $0.000013)",
      `  Turn 1  invoke_agent support  trace ${TRACE_1}`,
      "    system     Be brief.",
      "    user       Weather in Paris?",
      '    assistant  → tool call getWeather({"city":"Paris"}) [c1]',
      '    tool       ← tool result {"tempC":21} [c1]',
      "    assistant  21 C in Paris.",
      "    spans:",
      "      chat googleai gemini-2.5-flash  tokens in 10 / out 4 (cache read 6, reasoning 2)  cost $0.000013  finish stop",
      '      execute_tool getWeather({"city":"Paris"}) [c1] → {"tempC":21}',
      "      chat googleai gemini-2.5-flash  tokens in 20 / out 8",
      `  Turn 2  invoke_agent support  trace ${TRACE_2}`,
      "    spans:",
      '      execute_tool lookup({"q":"x"}) FAILED (Error): lookup is down',
      "",
    ].join("\n"),
  )
  assert.equal(renderSessions([]), "No agent sessions: no span carries gen_ai.operation.name.\n")
})

test("checkSessions: all eight checks pass on good spans", () => {
  const verdict = checkSessions(fixedSpans())
  assert.equal(verdict.ok, true)
  assert.deepEqual(
    verdict.checks.map((c) => [c.name, c.ok]),
    [
      ["spans arrived, with agent turns", true],
      ["every Genkit flow/model/tool span carries gen_ai.operation.name", true],
      ["every messages attribute parses as JSON", true],
      ["every turn has a conversation id", true],
      ["token usage only on chat spans", true],
      ["failed spans carry error.type, successful ones none", true],
      ["tool spans carry the model's tool call ids", true],
      ["token details and cost are consistent", true],
    ],
  )
  assert.equal(verdict.checks[0].detail, "7 spans, 2 turns")
  assert.equal(verdict.checks[1].detail, "6 Genkit spans")
  assert.equal(verdict.checks[2].detail, "6 attributes")
  assert.match(renderChecks(verdict), /Verdict: every check passed\.$/)
})

test("checkSessions: each broken span fails exactly its check, and ok becomes false", () => {
  const cases = [
    ["spans arrived, with agent turns", () => []],
    [
      "every Genkit flow/model/tool span carries gen_ai.operation.name",
      (spans) => delete spans.find((s) => s.spanId === "a3").attributes["gen_ai.operation.name"],
    ],
    [
      "every messages attribute parses as JSON",
      (spans) => {
        const a = spans.find((s) => s.spanId === "a4").attributes
        a["gen_ai.input.messages"] = a["gen_ai.input.messages"].slice(0, 40) // truncated by a length limit
      },
    ],
    [
      "every turn has a conversation id",
      (spans) => delete spans.find((s) => s.spanId === "b1").attributes["gen_ai.conversation.id"],
    ],
    [
      "token usage only on chat spans",
      (spans) => (spans.find((s) => s.spanId === "a1").attributes["gen_ai.usage.input_tokens"] = 30),
    ],
    [
      "failed spans carry error.type, successful ones none",
      (spans) => delete spans.find((s) => s.spanId === "b2").attributes["error.type"],
    ],
    [
      "tool spans carry the model's tool call ids",
      (spans) => (spans.find((s) => s.spanId === "a3").attributes["gen_ai.tool.call.id"] = "c2"),
    ],
    [
      "token details and cost are consistent",
      (spans) => (spans.find((s) => s.spanId === "a2").attributes["gen_ai.usage.reasoning.output_tokens"] = 5),
    ],
  ]
  for (const [name, breakIt] of cases) {
    let spans = fixedSpans()
    const replaced = breakIt(spans)
    if (Array.isArray(replaced)) spans = replaced
    const verdict = checkSessions(spans)
    assert.equal(verdict.ok, false, name)
    const failing = verdict.checks.filter((c) => !c.ok).map((c) => c.name)
    assert.deepEqual(failing, [name])
    assert.match(verdict.checks.find((c) => c.name === name).detail, /failing|no spans/)
    assert.match(renderChecks(verdict), new RegExp(`\\[FAIL\\] ${name.replace(/[/.]/g, "\\$&")}`))
  }
})
