"use strict"
// Content that stays out of another backend (issue 11, item 2): the Cloud Trace arrangement. One
// tracer provider, GenkitForMaple first, then
//   - Genkit's own Cloud Trace exporter (`AdjustingTraceExporter` of @genkit-ai/google-cloud 1.42,
//     which redacts genkit:input/genkit:output) with an in-memory exporter behind it, wrapped in
//     NoContentSpanExporter, and a second one behind NoContentSpanProcessor;
//   - the Maple-bound in-memory exporter, after them (so a change to the shared span would show);
//   - a control: the same Genkit exporter unwrapped, which receives the gen_ai.* copies in clear
//     (the finding).
// The spans come from the example's real Genkit app (flow, local model, tools). No network: the
// Google auth lookups are pointed at a local service-account file and metadata detection is off,
// and every socket connection is checked to be loopback.
const fs = require("node:fs")
const net = require("node:net")
const os = require("node:os")
const path = require("node:path")

// Before @genkit-ai/google-cloud (google-auth-library, gcp-metadata) is loaded.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gfm-cloudtrace-"))
const credentials = path.join(tmp, "service-account.json")
fs.writeFileSync(
  credentials,
  JSON.stringify({ type: "service_account", client_email: "test@test-project.iam.gserviceaccount.com", project_id: "test-project" }),
)
process.env.GOOGLE_APPLICATION_CREDENTIALS = credentials
process.env.GCLOUD_PROJECT = "test-project"
process.env.METADATA_SERVER_DETECTION = "none"
delete process.env.GEMINI_API_KEY
delete process.env.GOOGLE_API_KEY

// Guard: any connection that is not to a loopback address is refused and recorded.
const offLoopback = []
const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (...args) {
  const options = typeof args[0] === "object" && args[0] !== null ? args[0] : { port: args[0], host: args[1] }
  const host = options.path ? "unix" : String(options.host ?? "localhost")
  if (!(host === "unix" || host === "localhost" || host.startsWith("127.") || host === "::1")) {
    offLoopback.push(host)
    throw new Error(`test guard: connection to ${host} refused`)
  }
  return connect.apply(this, args)
}

const { test, before } = require("node:test")
const assert = require("node:assert/strict")
const { context, trace } = require("@opentelemetry/api")
const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks")
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base")
const { disableGenkitOTelInitialization } = require("genkit/tracing")
const googleCloud = require("@genkit-ai/google-cloud")
const { GenkitForMaple, NoContentSpanExporter, NoContentSpanProcessor, CONTENT_ATTRIBUTES } = require("..")

const appPath = path.join(__dirname, "..", "examples", "support-agent", "src", "app.ts")

/**
 * Genkit's Cloud Trace exporter (the class `enableGoogleCloudTelemetry` exports through), built by
 * Genkit's own `createSpanExporter` with `export: false`, which puts an in-memory exporter behind it
 * instead of the Cloud Trace API client. `GcpOpenTelemetry`'s constructor is not used: it builds a
 * resource with @opentelemetry/resources 1.x's `Resource` class, which the 3.x resources hoisted in
 * this dependency tree no longer has.
 */
async function genkitCloudTraceExporter() {
  const self = { config: { projectId: "test-project", export: false, exportInputAndOutput: false }, shouldExportTraces: () => false }
  const exporter = await googleCloud.GcpOpenTelemetry.prototype.createSpanExporter.call(self)
  assert.equal(exporter.constructor.name, "AdjustingTraceExporter")
  return { exporter, memory: googleCloud.__getSpanExporterForTesting() }
}

const secret = "ZEBRA-12345678"
let maple, wrapped, viaProcessor, control, app
const replies = []

before(async () => {
  disableGenkitOTelInitialization()
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  wrapped = await genkitCloudTraceExporter()
  viaProcessor = await genkitCloudTraceExporter()
  control = await genkitCloudTraceExporter()
  maple = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({
    spanProcessors: [
      new GenkitForMaple(),
      new SimpleSpanProcessor(new NoContentSpanExporter(wrapped.exporter)),
      new NoContentSpanProcessor(new SimpleSpanProcessor(viaProcessor.exporter)),
      new SimpleSpanProcessor(maple),
      new SimpleSpanProcessor(control.exporter),
    ],
  })
  assert.equal(trace.setGlobalTracerProvider(provider), true)
  const { tsImport } = await import("tsx/esm/api")
  app = await tsImport(appPath, __filename)
  assert.equal(app.usesGemini, false)
  for (const run of [
    { chatId: "ct-1", text: `Where is my order A-1001? My account is ${secret}.` },
    { chatId: "ct-2", text: `Order B-2002 arrived damaged, please refund it. Account ${secret}.` },
  ]) {
    replies.push(await app.supportChat(run))
  }
  await provider.forceFlush()
})

/**
 * Every payload string of the content attributes the Maple-bound exporter received, 8 characters
 * or longer: texts, tool arguments and results (not the GenAI message structure: roles, part
 * types, tool names and call ids, which other attributes carry too).
 */
const STRUCTURE = new Set(["type", "role", "name", "id", "finish_reason"])
function contentStrings(spans) {
  const out = new Set()
  const walk = (v) => {
    if (typeof v === "string") {
      if (v.length >= 8) out.add(v)
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x)
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) if (!STRUCTURE.has(k)) walk(x)
    }
  }
  for (const span of spans) {
    for (const key of CONTENT_ATTRIBUTES) {
      const value = span.attributes[key]
      if (value === undefined) continue
      try {
        walk(JSON.parse(value))
      } catch {
        walk(value)
      }
      walk(value)
    }
  }
  return [...out]
}

const everyValue = (span) => JSON.stringify(Object.values(span.attributes))

test("the Maple-bound exporter gets the transcript: prompts, answers, tool arguments and results", () => {
  const spans = maple.getFinishedSpans()
  const chats = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "chat")
  const tools = spans.filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool")
  assert.ok(chats.length >= 4 && tools.length >= 2)
  for (const chat of chats) {
    assert.match(chat.attributes["gen_ai.input.messages"], new RegExp(secret))
    assert.equal(typeof chat.attributes["gen_ai.system_instructions"], "string")
    assert.equal(typeof chat.attributes["gen_ai.output.messages"], "string")
  }
  for (const tool of tools) assert.equal(typeof tool.attributes["gen_ai.tool.call.arguments"], "string")
  assert.ok(tools.some((t) => typeof t.attributes["gen_ai.tool.call.result"] === "string"))
  assert.ok(contentStrings(spans).some((s) => s.includes(replies[0].slice(0, 20))), "the answer is in the transcript")
})

test("the control: Genkit's Cloud Trace exporter alone redacts genkit:input/output but exports the gen_ai.* copies", () => {
  const spans = control.memory.getFinishedSpans()
  assert.ok(spans.length > 0)
  const leaked = spans.filter((s) => everyValue(s).includes(secret))
  assert.ok(leaked.length > 0, "the issue's finding")
  for (const span of spans) {
    if ("genkit/input" in span.attributes) assert.equal(span.attributes["genkit/input"], "<redacted>")
  }
})

for (const [name, pick] of [
  ["NoContentSpanExporter", () => wrapped],
  ["NoContentSpanProcessor", () => viaProcessor],
]) {
  test(`${name} around Genkit's Cloud Trace exporter: no prompt, answer or tool payload reaches it`, () => {
    const spans = pick().memory.getFinishedSpans()
    const mapleSpans = maple.getFinishedSpans()
    assert.equal(spans.length, mapleSpans.length, "every span exported")
    const strings = contentStrings(mapleSpans)
    assert.ok(strings.length > 10)
    for (const span of spans) {
      for (const key of CONTENT_ATTRIBUTES) assert.ok(!(key in span.attributes), `${span.name}: ${key}`)
      const values = everyValue(span)
      assert.ok(!values.includes(secret), `${span.name} carries the user's text`)
      for (const s of strings) assert.ok(!values.includes(s), `${span.name} carries ${s.slice(0, 60)}`)
      if ("genkit/input" in span.attributes) assert.equal(span.attributes["genkit/input"], "<redacted>")
    }
    // Everything that is not content still reaches it: operation names, models, tokens, conversation ids.
    const attrs = spans.map((s) => s.attributes)
    assert.ok(attrs.some((a) => a["gen_ai.operation.name"] === "chat" && a["gen_ai.usage.input_tokens"] > 0))
    assert.ok(attrs.some((a) => a["gen_ai.operation.name"] === "invoke_agent" && a["gen_ai.conversation.id"] === "ct-2"))
    assert.ok(attrs.some((a) => a["gen_ai.tool.name"] === "getOrderStatus"))
  })
}

test("the shared span is not changed: the Maple-bound exporter, after the wrapped ones, still has every content attribute", () => {
  for (const span of maple.getFinishedSpans()) {
    const op = span.attributes["gen_ai.operation.name"]
    if (op === "chat") assert.ok("gen_ai.input.messages" in span.attributes)
    if (op === "execute_tool") assert.ok("gen_ai.tool.call.arguments" in span.attributes)
  }
})

test("dropGenkitIO leaves genkit:input and genkit:output out too; a span without content is passed as is", async () => {
  const memory = new InMemorySpanExporter()
  const exporter = new NoContentSpanExporter(memory, { dropGenkitIO: true })
  const spans = maple.getFinishedSpans()
  await new Promise((resolve) => exporter.export(spans, resolve))
  const out = memory.getFinishedSpans()
  assert.equal(out.length, spans.length)
  for (const [i, span] of out.entries()) {
    for (const key of [...CONTENT_ATTRIBUTES, "genkit:input", "genkit:output"]) assert.ok(!(key in span.attributes))
    assert.equal(span.spanContext().spanId, spans[i].spanContext().spanId)
    assert.equal(span.name, spans[i].name)
    assert.deepEqual(span.startTime, spans[i].startTime)
    const hadAny = [...CONTENT_ATTRIBUTES, "genkit:input", "genkit:output"].some((k) => k in spans[i].attributes)
    assert.equal(span === spans[i], !hadAny)
  }
  assert.ok(spans.some((s) => "genkit:input" in s.attributes), "the shared spans keep genkit:input")
})

test("no connection left the machine", () => {
  assert.deepEqual(offLoopback, [])
})
