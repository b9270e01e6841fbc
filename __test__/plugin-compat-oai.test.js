"use strict"
// @genkit-ai/compat-oai 1.42 (the `openai` SDK 4.x) against a fake OpenAI-compatible server on
// 127.0.0.1, through the real OpenTelemetry SDK with GenkitForMaple: the `openai` plugin
// (gpt-5-mini, base URL <fake>/v1) and the `deepseek` plugin (deepseek-reasoner, whose
// `reasoning_content` the plugin turns into reasoning parts). The plugin answers with a
// top-level `message` (the reference behaviour).
const { before, after, test } = require("node:test")
const assert = require("node:assert/strict")
const { setupTracing, loopbackOnlyFetch } = require("./helpers/fake-providers/harness")
const { startOpenAI } = require("./helpers/fake-providers/openai")
const { pluginSuite, defineWeatherTool, text, reasoning, toolCall } = require("./helpers/fake-providers/suite")
const { TEXT, USAGE } = require("./helpers/fake-providers/script")

const API_KEY = "sk-test-not-a-real-key"
const app = {}

before(async () => {
  app.tracing = setupTracing()
  app.fake = await startOpenAI({ apiKey: API_KEY })
  const { genkit } = require("genkit")
  const { openAI } = require("@genkit-ai/compat-oai/openai")
  const { deepSeek } = require("@genkit-ai/compat-oai/deepseek")
  app.openAI = openAI
  app.deepSeek = deepSeek
  // The openai SDK 4 fetches with its own shim (node-fetch), not the global fetch: give it the
  // loopback-only guard explicitly (the plugin passes its options to `new OpenAI`).
  const fetch = loopbackOnlyFetch()
  app.ai = genkit({
    plugins: [
      openAI({ apiKey: API_KEY, baseURL: `${app.fake.url}/v1`, fetch, maxRetries: 0 }),
      deepSeek({ apiKey: API_KEY, baseURL: app.fake.url, fetch, maxRetries: 0 }),
    ],
  })
  app.tool = defineWeatherTool(app.ai)
})

after(async () => {
  await app.fake?.close()
  await app.tracing?.shutdown()
})

const common = {
  app: () => app,
  outputForm: "message",
  // OpenAI's refusal: `content` null, the text in `refusal`, finish_reason "stop". The plugin
  // reads neither `refusal` nor a null content: an empty answer, finish reason "stop".
  finish: { toolCall: "stop", answer: "stop", poem: "length", hello: "stop", blocked: "stop" },
  // Genkit's usage: prompt_tokens (cache included) and completion_tokens (reasoning included).
  tokens: (kind) => ({ input: USAGE[kind].input, output: USAGE[kind].output }),
  rawUsage(output, kind) {
    const u = USAGE[kind]
    assert.equal(output.raw.usage.prompt_tokens_details.cached_tokens, u.cacheRead)
    assert.equal(output.raw.usage.completion_tokens_details.reasoning_tokens, u.reasoning)
    assert.equal(output.usage.totalTokens, u.input + u.output)
    if (kind === "blocked") assert.equal(output.raw.choices[0].message.refusal, TEXT.refusal)
  },
  streamedRequest: (r) => r.body.stream === true && r.body.stream_options?.include_usage === true,
  blockedThrows: false,
}

/** The GenAI parts of each answer; `thinking` when the model sends reasoning_content. */
function parts(thinking) {
  return (kind, { request }) => {
    switch (kind) {
      case "toolCall":
        // With tool_calls the plugin keeps only the calls.
        return [toolCall(request.toolCallId, "getWeather", { city: "Paris" })]
      case "answer":
        return thinking ? [reasoning(TEXT.answerThinking), text(TEXT.answer)] : [text(TEXT.answer)]
      case "poem":
        return [text(TEXT.poem)]
      case "hello":
        return [text(TEXT.hello)]
      case "blocked":
        return []
    }
  }
}

pluginSuite({
  ...common,
  label: "compat-oai openai (gpt-5-mini)",
  flowName: "openaiChatFlow",
  get modelRef() {
    return app.openAI.model("gpt-5-mini")
  },
  provider: "openai",
  model: "gpt-5-mini",
  parts: parts(false),
  ownsRequest: (r) => r.path === "/v1/chat/completions",
})

pluginSuite({
  ...common,
  label: "compat-oai deepseek (deepseek-reasoner)",
  flowName: "deepseekChatFlow",
  get modelRef() {
    return app.deepSeek.model("deepseek-reasoner")
  },
  provider: "deepseek",
  model: "deepseek-reasoner",
  parts: parts(true),
  ownsRequest: (r) => r.path === "/chat/completions",
})

test("the loopback-only fetch guard refuses the real providers' hosts", async () => {
  const fetch = loopbackOnlyFetch(() => Promise.resolve("reached"))
  for (const url of ["https://api.openai.com/v1/chat/completions", "https://api.deepseek.com/chat/completions", "http://localhost:1/x"]) {
    await assert.rejects(fetch(url, {}), /test fetch guard: refusing/)
  }
  assert.equal(await fetch(`${app.fake.url}/v1/chat/completions`, {}), "reached")
})
