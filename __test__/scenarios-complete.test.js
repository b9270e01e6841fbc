"use strict"
// Rules 2 (gen_ai.usage.cost) and 5 (gen_ai.tool.call.id) of issue 10 in complete mode, on the
// scenario corpus: live (real Genkit 1.42 and the real plugins against the fake providers, with
// GenkitForMaple in a real OpenTelemetry SDK pipeline: scripts/gen-scenario-corpus.js) and
// replayed from __test__/fixtures/genkit-1.42-scenario-spans.jsonl in the order the spans ended.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { load } = require("./helpers/fixtures")
const { generate } = require("../scripts/gen-scenario-corpus")

const M = 1e6
const subtype = (a) => a["genkit:metadata:subtype"]
const parse = (a, key) => (typeof a[key] === "string" ? JSON.parse(a[key]) : undefined)

/** A finished span as the SDK hands it to onEnd, from a corpus row. */
function spanOf(row) {
  return {
    name: row.name,
    attributes: structuredClone(row.attributes),
    status: row.status,
    events: row.events,
    endTime: row.endTime,
    spanContext: () => ({ traceId: row.traceId, spanId: row.spanId, traceFlags: 1 }),
    parentSpanContext: row.parentSpanId ? { traceId: row.traceId, spanId: row.parentSpanId, traceFlags: 1, isRemote: false } : undefined,
  }
}

/** The fixture through a processor, span by span in end order: rows with `mapped` attributes. */
function replay(processor, rows) {
  return rows.map((row) => {
    const span = spanOf(row)
    processor.onEnd(span)
    return { ...row, mapped: span.attributes }
  })
}

/**
 * Rule 5 on one run: every tool span of a plugin with call ids (compat-oai, anthropic) carries the
 * id of the tool_call part its own model answer has for it (same trace and parent, same name and
 * arguments), each id once per trace, and the next chat span answers that id with this tool's
 * result; google-genai (Gemini 2.5 sends no ids) tool spans carry none.
 */
function checkToolCallIds(rows) {
  const used = new Set()
  let withId = 0
  for (const tool of rows) {
    const t = tool.mapped
    if (subtype(t) !== "tool" && subtype(t) !== "tool.v2") continue
    const where = `${tool.scenario} / ${tool.name} ${tool.spanId}`
    assert.equal(t["gen_ai.operation.name"], "execute_tool", where)
    const id = t["gen_ai.tool.call.id"]
    if (tool.plugin === "google-genai") {
      assert.equal(id, undefined, `${where}: no call id to give`)
      continue
    }
    assert.equal(typeof id, "string", `${where}: a call id`)
    assert.ok(!used.has(`${tool.traceId}/${id}`), `${where}: ${id} given twice`)
    used.add(`${tool.traceId}/${id}`)
    const chat = rows.find((r) => r.traceId === tool.traceId && r.parentSpanId === tool.parentSpanId && subtype(r.mapped) === "model")
    const calls = parse(chat.mapped, "gen_ai.output.messages").flatMap((m) => m.parts.filter((p) => p.type === "tool_call"))
    const call = calls.find((c) => c.id === id)
    assert.ok(call, `${where}: ${id} is a tool call of its model answer`)
    assert.equal(call.name, tool.name)
    assert.deepStrictEqual(call.arguments, JSON.parse(t["gen_ai.tool.call.arguments"]))
    if (tool.status.code !== 2) {
      const next = rows.find(
        (r) =>
          r.traceId === tool.traceId &&
          subtype(r.mapped) === "model" &&
          (parse(r.mapped, "gen_ai.input.messages") ?? []).some((m) => m.parts.some((p) => p.type === "tool_call_response" && p.id === id)),
      )
      const response = parse(next.mapped, "gen_ai.input.messages")
        .flatMap((m) => m.parts)
        .find((p) => p.type === "tool_call_response" && p.id === id)
      const result = JSON.parse(t["gen_ai.tool.call.result"])
      assert.deepStrictEqual(subtype(t) === "tool.v2" ? result.output : result, response.response, `${where}: the next call got this result under ${id}`)
    }
    withId++
  }
  return withId
}

/** The chat spans of a scenario, in end order. */
const chats = (rows, scenario) => rows.filter((r) => r.scenario === scenario && subtype(r.mapped) === "model").map((r) => r.mapped)

function near(actual, expected, where) {
  assert.equal(typeof actual, "number", `${where}: gen_ai.usage.cost is a number`)
  assert.ok(Math.abs(actual - expected) < 1e-12, `${where}: cost ${actual}, expected ${expected}`)
}

/** Rule 2 with rule 1's counts: hand-computed prices (per million tokens, genai-prices 0.2.1). */
function checkCosts(rows) {
  const tokens = "tool loop with thinking / cache / reasoning token details"
  // Gemini 2.5 Flash: input 0.30, cache read 0.03, output 2.50 (thinking included). First call:
  // input 2260 (2048 cached), output 32 + 64 thoughts.
  const [g] = chats(rows, `google-genai: ${tokens}`)
  assert.equal(g["gen_ai.usage.output_tokens"], 96)
  near(g["gen_ai.usage.cost"], (212 * 0.3 + 2048 * 0.03 + 96 * 2.5) / M, "gemini-2.5-flash")
  // Claude Sonnet 4.5: input 3, cache write 3.75, cache read 0.30, output 15. The max-tokens
  // answer: 91 uncached + 1024 read + 1280 written.
  const [c] = chats(rows, "anthropic: max-tokens answer with cache reads and writes")
  assert.equal(c["gen_ai.usage.input_tokens"], 2395)
  near(c["gen_ai.usage.cost"], (91 * 3 + 1024 * 0.3 + 1280 * 3.75 + 64 * 15) / M, "claude-sonnet-4-5")
  // GPT-4o: input 2.50, cache read 1.25, output 10; GPT-5: 1.25, 0.125, 10.
  const [o] = chats(rows, `compat-oai openai: ${tokens}`)
  near(o["gen_ai.usage.cost"], (212 * 2.5 + 2048 * 1.25 + 96 * 10) / M, "gpt-4o")
  const [o5] = chats(rows, `compat-oai openai (reasoning): ${tokens}`)
  assert.equal(o5["gen_ai.usage.reasoning.output_tokens"], 64)
  near(o5["gen_ai.usage.cost"], (212 * 1.25 + 2048 * 0.125 + 96 * 10) / M, "gpt-5")
  // DeepSeek Chat: 0.27 / 0.07 / 1.10, half that off-peak (16:30-00:30 UTC): priced at the time of
  // the call, so either.
  const [d] = chats(rows, `compat-oai deepseek: ${tokens}`)
  const peak = (212 * 0.27 + 2048 * 0.07 + 96 * 1.1) / M
  assert.ok([peak, peak / 2].some((p) => Math.abs(d["gen_ai.usage.cost"] - p) < 1e-12), `deepseek-chat: ${d["gen_ai.usage.cost"]}`)
  // A blocked Gemini answer: the prompt is billed, no output.
  const [b] = chats(rows, "google-genai: blocked answer")
  near(b["gen_ai.usage.cost"], (141 * 0.3) / M, "blocked gemini-2.5-flash")
  // Every chat span with token counts has a cost (every model here is priced); failed calls
  // (no usage) have none, never 0.
  for (const r of rows) {
    const a = r.mapped
    if (subtype(a) !== "model") continue
    if (a["gen_ai.usage.input_tokens"] === undefined) assert.equal(a["gen_ai.usage.cost"], undefined, `${r.scenario}: no usage, no cost`)
    else assert.ok(a["gen_ai.usage.cost"] > 0, `${r.scenario} / ${r.name}: cost`)
  }
}

test("live: real Genkit + real plugins through GenkitForMaple in a real SDK pipeline: tool call ids and costs", async () => {
  const processor = new GenkitForMaple()
  assert.equal(processor.isNative, true)
  const rows = await generate({ processors: [processor] })
  assert.ok(rows.length > 100)
  assert.ok(checkToolCallIds(rows) >= 20)
  checkCosts(rows)
  // Parallel calls with equal inputs, in order: Paris, Paris, Rome get the answer's refs 0, 1, 2.
  for (const plugin of ["compat-oai openai", "anthropic"]) {
    const tools = rows.filter((r) => r.scenario === `${plugin}: parallel tool calls with equal inputs` && subtype(r.mapped) === "tool")
    const ids = tools.map((t) => t.mapped["gen_ai.tool.call.id"])
    assert.deepStrictEqual(
      ids.map((id) => id.slice(-2)),
      ["_0", "_1", "_2"],
      plugin,
    )
    assert.equal(JSON.parse(tools[2].mapped["gen_ai.tool.call.arguments"]).city, "Rome")
  }
})

test("replayed fixture: tool call ids and costs; the trace's state is freed by its root span", () => {
  const rows = load("genkit-1.42-scenario-spans.jsonl")
  const out = replay(new GenkitForMaple(), rows)
  assert.ok(checkToolCallIds(out) >= 20)
  checkCosts(out)
})

test("rule 2 prices each call at its span's end time (span.endTime), at the time of mapping without one", () => {
  const rows = load("genkit-1.42-scenario-spans.jsonl")
  const scenario = "compat-oai deepseek: tool loop with thinking / cache / reasoning token details"
  const first = rows.findIndex((r) => r.scenario === scenario && subtype(r.attributes) === "model")
  assert.ok(first >= 0)
  // DeepSeek Chat: 0.27 / 0.07 / 1.10 per million, half that off-peak (16:30-00:30 UTC).
  const peak = (212 * 0.27 + 2048 * 0.07 + 96 * 1.1) / M
  const day = Math.floor(rows[first].endTime[0] / 86400) * 86400
  const costAt = (endTime) => {
    const span = spanOf(rows[first])
    span.endTime = endTime
    new GenkitForMaple().onEnd(span)
    return span.attributes["gen_ai.usage.cost"]
  }
  near(costAt([day + 12 * 3600, 0]), peak, "12:00 UTC")
  near(costAt([day + 16 * 3600 + 29 * 60 + 59, 999_999_999]), peak, "16:29:59.999999999 UTC")
  near(costAt([day + 16 * 3600 + 30 * 60, 0]), peak / 2, "16:30 UTC")
  near(costAt([day + 20 * 3600, 500]), peak / 2, "20:00 UTC")
  // The recorded end time (17:03 UTC): off-peak, whenever the test runs.
  const recorded = rows[first].endTime[0] - day
  assert.ok(recorded >= 16.5 * 3600 && recorded < 24 * 3600, `${recorded}`)
  near(costAt(rows[first].endTime), peak / 2, "recorded end time")
  // No (or no usable) end time: priced now, one of the two.
  for (const endTime of [undefined, "yesterday", [Number.NaN, 0], [-1, 0]]) {
    const cost = costAt(endTime)
    assert.ok([peak, peak / 2].some((p) => Math.abs(cost - p) < 1e-12), `${JSON.stringify(endTime)}: ${cost}`)
  }
})

test("reference mode and cost: false write neither cost nor call ids; complete mode writes both", () => {
  const rows = load("genkit-1.42-scenario-spans.jsonl")
  const count = (out, key) => out.filter((r) => r.mapped[key] !== undefined).length
  const complete = replay(new GenkitForMaple({ mode: "complete" }), rows)
  assert.ok(count(complete, "gen_ai.usage.cost") > 30)
  assert.ok(count(complete, "gen_ai.tool.call.id") >= 20)
  const noCost = replay(new GenkitForMaple({ cost: false }), rows)
  assert.equal(count(noCost, "gen_ai.usage.cost"), 0)
  assert.equal(count(noCost, "gen_ai.tool.call.id"), count(complete, "gen_ai.tool.call.id"))
  const reference = replay(new GenkitForMaple({ mode: "reference" }), rows)
  assert.equal(count(reference, "gen_ai.usage.cost"), 0)
  assert.equal(count(reference, "gen_ai.tool.call.id"), 0)
})

test("a tool span whose model answer was never seen gets no id (a new processor mid-trace)", () => {
  const rows = load("genkit-1.42-scenario-spans.jsonl")
  const processor = new GenkitForMaple()
  // Only the tool spans: no model answer recorded, so nothing to pair with.
  const out = replay(
    processor,
    rows.filter((r) => subtype(r.attributes) === "tool" || subtype(r.attributes) === "tool.v2"),
  )
  assert.ok(out.length > 20)
  for (const r of out) assert.equal(r.mapped["gen_ai.tool.call.id"], undefined, r.scenario)
})
