"use strict"
// @genkit-ai/anthropic 0.3 (the `@anthropic-ai/sdk` client) against a fake Anthropic Messages
// server on 127.0.0.1, through the real OpenTelemetry SDK with GenkitForMaple. The plugin passes
// no base URL to the SDK, so the SDK's ANTHROPIC_BASE_URL variable points it at the fake (set
// before the plugin builds its client). The plugin answers in `candidates` (no top-level
// message): the transcript must still carry Claude's answers (issue 5).
const { before, after } = require("node:test")
const assert = require("node:assert/strict")
const { setupTracing } = require("./helpers/fake-providers/harness")
const { startAnthropic, SIGNATURE } = require("./helpers/fake-providers/anthropic")
const { pluginSuite, defineWeatherTool, text, reasoning, toolCall } = require("./helpers/fake-providers/suite")
const { TEXT, USAGE } = require("./helpers/fake-providers/script")

const API_KEY = "sk-ant-test-not-a-real-key"
const app = {}
const savedEnv = {}

before(async () => {
  // This file runs on the OpenTelemetry SDK 2.x line (sdk-trace-base BasicTracerProvider, as the
  // Genkit corpus was recorded); the other two on SDK 3.x. setupTracing also installs the
  // loopback-only global fetch that the Anthropic SDK picks up.
  app.tracing = setupTracing({ sdk: "sdk-trace-base" })
  app.fake = await startAnthropic({ apiKey: API_KEY })
  for (const k of ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS"]) {
    savedEnv[k] = process.env[k]
    delete process.env[k]
  }
  process.env.ANTHROPIC_BASE_URL = app.fake.url
  const { genkit } = require("genkit")
  const { anthropic } = require("@genkit-ai/anthropic")
  app.anthropic = anthropic
  app.ai = genkit({ plugins: [anthropic({ apiKey: API_KEY })] })
  app.tool = defineWeatherTool(app.ai)
})

after(async () => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  await app.fake?.close()
  await app.tracing?.shutdown()
})

pluginSuite({
  label: "anthropic (Claude)",
  app: () => app,
  flowName: "anthropicChatFlow",
  get modelRef() {
    return app.anthropic.model("claude-sonnet-4-5")
  },
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  outputForm: "candidates",
  parts(kind, { request }) {
    switch (kind) {
      case "toolCall":
        return [reasoning(TEXT.toolThinking), text(TEXT.toolPreamble), toolCall(request.toolCallId, "getWeather", { city: "Paris" })]
      case "answer":
        return [text(TEXT.answer)]
      case "poem":
        return [text(TEXT.poem)]
      case "hello":
        return [text(TEXT.hello)]
      case "blocked":
        return []
    }
  },
  // stop_reason: tool_use and end_turn -> stop, max_tokens -> length, refusal -> other.
  finish: { toolCall: "stop", answer: "stop", poem: "length", hello: "stop", blocked: "other" },
  // Genkit's usage: input_tokens as Anthropic counts it (cache reads and writes excluded) and
  // output_tokens.
  tokens(kind) {
    const u = USAGE[kind]
    return { input: u.input - u.cacheRead - u.cacheWrite, output: u.output }
  },
  rawUsage(output, kind) {
    const u = USAGE[kind]
    assert.deepStrictEqual(output.usage.custom, {
      cache_creation_input_tokens: u.cacheWrite,
      cache_read_input_tokens: u.cacheRead,
      ephemeral_5m_input_tokens: u.cacheWrite,
      ephemeral_1h_input_tokens: 0,
    })
    if (kind === "toolCall") {
      assert.equal(output.candidates[0].message.content[0].metadata.thoughtSignature, SIGNATURE)
    }
    if (kind === "blocked") assert.equal(output.raw.stop_reason, "refusal")
  },
  streamedRequest: (r) => r.body.stream === true,
  blockedThrows: false,
})
