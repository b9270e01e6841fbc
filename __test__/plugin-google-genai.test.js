"use strict"
// @genkit-ai/google-genai 1.42 (Gemini Developer API) against a fake Gemini server on 127.0.0.1,
// through the real OpenTelemetry SDK with GenkitForMaple. The plugin answers in `candidates`
// (no top-level message): the transcript must still carry Gemini's answers (issue 5).
const { before, after } = require("node:test")
const assert = require("node:assert/strict")
const { setupTracing } = require("./helpers/fake-providers/harness")
const { startGemini, THOUGHT_SIGNATURE } = require("./helpers/fake-providers/gemini")
const { pluginSuite, defineWeatherTool, text, reasoning, toolCall } = require("./helpers/fake-providers/suite")
const { TEXT, USAGE, pieces } = require("./helpers/fake-providers/script")

const API_KEY = "test-gemini-key-not-real"
const app = {}

before(async () => {
  app.tracing = setupTracing()
  app.fake = await startGemini({ apiKey: API_KEY })
  const { genkit } = require("genkit")
  const { googleAI } = require("@genkit-ai/google-genai")
  app.googleAI = googleAI
  app.ai = genkit({ plugins: [googleAI({ apiKey: API_KEY, baseUrl: app.fake.url })] })
  app.tool = defineWeatherTool(app.ai)
})

after(async () => {
  await app.fake?.close()
  await app.tracing?.shutdown()
})

// Streamed Gemini text arrives in several chunks, and the plugin keeps one part per chunk.
const answerText = (s, streamed) => (streamed ? pieces(s).map(text) : [text(s)])

pluginSuite({
  label: "google-genai (Gemini)",
  app: () => app,
  flowName: "geminiChatFlow",
  get modelRef() {
    return app.googleAI.model("gemini-2.5-flash")
  },
  provider: "googleai",
  model: "gemini-2.5-flash",
  outputForm: "candidates",
  parts(kind, { streamed }) {
    switch (kind) {
      case "toolCall":
        // Gemini's functionCall has no id: no `id` in the tool_call part.
        return [reasoning(TEXT.toolThinking), toolCall(undefined, "getWeather", { city: "Paris" })]
      case "answer":
        return [reasoning(TEXT.answerThinking), ...answerText(TEXT.answer, streamed)]
      case "poem":
        return answerText(TEXT.poem, streamed)
      case "hello":
        return answerText(TEXT.hello, streamed)
      case "blocked":
        return []
    }
  },
  finish: { toolCall: "stop", answer: "stop", poem: "length", hello: "stop", blocked: "blocked" },
  // Genkit's usage: inputTokens = promptTokenCount (cache included), outputTokens =
  // candidatesTokenCount (thoughts excluded; absent when the candidate was blocked).
  tokens(kind) {
    const u = USAGE[kind]
    return { input: u.input, output: kind === "blocked" ? undefined : u.output - u.reasoning }
  },
  rawUsage(output, kind) {
    const u = USAGE[kind]
    assert.equal(output.usage.cachedContentTokens, u.cacheRead || undefined)
    assert.equal(output.usage.thoughtsTokens, u.reasoning || undefined)
    assert.equal(output.usage.totalTokens, u.input + u.output)
    if (kind === "toolCall") {
      assert.equal(output.candidates[0].message.content[1].metadata.thoughtSignature, THOUGHT_SIGNATURE)
    }
    if (kind === "blocked") {
      assert.equal(output.custom.candidates[0].finishReason, "SAFETY")
      assert.ok(output.candidates[0].custom.safetyRatings.some((r) => r.blocked === true))
    }
  },
  streamedRequest: (r) => r.path.endsWith(":streamGenerateContent") && r.query.get("alt") === "sse",
  blockedThrows: true,
})
