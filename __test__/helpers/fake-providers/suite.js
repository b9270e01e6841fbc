"use strict"
// The real-plugin conversations, shared by the three plugin test files. A Genkit app as a user
// writes it (a chat flow that sets the conversation id, keeps the history per conversation and
// offers a getWeather tool) runs through the real plugin against a fake provider; each flow run's
// spans are checked: the flow span (invoke_agent, conversation id), each chat span (provider,
// model, system instructions, input messages, output messages, finish reasons, tokens) and each
// tool span (execute_tool, name, arguments, result), and native == pure JS on every span.
const test = require("node:test")
const assert = require("node:assert/strict")
const { z } = require("genkit")
const { setCustomMetadataAttribute } = require("genkit/tracing")
const { assertNativeEqualsJs, byKind, json } = require("./harness")
const { referenceOnEnd } = require("../reference")
const S = require("./script")

const text = (content) => ({ type: "text", content })
const reasoning = (content) => ({ type: "reasoning", content })
const toolCall = (id, name, args) => (id === undefined ? { type: "tool_call", name, arguments: args } : { type: "tool_call", id, name, arguments: args })

/** The getWeather tool of the test app (defined once per Genkit instance). */
function defineWeatherTool(ai) {
  return ai.defineTool(
    {
      name: "getWeather",
      description: "Current weather in a city",
      inputSchema: z.object({ city: z.string() }),
      outputSchema: z.object({ city: z.string(), tempC: z.number(), conditions: z.string() }),
    },
    async ({ city }) => ({ ...S.WEATHER, city }),
  )
}

/** The app's chat flow: conversation id on the flow span, history per conversation. */
function defineChatFlow(ai, { name, model, tool }) {
  const history = new Map()
  return ai.defineFlow(
    {
      name,
      inputSchema: z.object({ conversationId: z.string(), message: z.string(), stream: z.boolean() }),
    },
    async ({ conversationId, message, stream }) => {
      setCustomMetadataAttribute("conversationId", conversationId)
      const request = { model, system: S.SYSTEM, messages: history.get(conversationId) ?? [], prompt: message, tools: [tool] }
      let response
      const chunks = []
      if (stream) {
        const streamed = ai.generateStream(request)
        for await (const chunk of streamed.stream) chunks.push(chunk.text)
        response = await streamed.response
      } else {
        response = await ai.generate(request)
      }
      history.set(conversationId, response.messages.filter((m) => m.role !== "system"))
      return { text: response.text, chunks: chunks.length }
    },
  )
}

/**
 * Against seed 000's reference processor: with a top-level `message` the same attributes; with
 * `candidates` the reference writes no output messages and no finish reasons on chat spans (the
 * loss issue 5 fixes) and everything else the same.
 */
function assertAgainstReference(spans, originals, outputForm) {
  for (const span of spans) {
    const ref = structuredClone(originals.get(span.spanContext().spanId))
    referenceOnEnd(ref)
    const ours = { ...span.attributes }
    if (outputForm === "candidates" && ours["genkit:metadata:subtype"] === "model") {
      assert.equal(ref["gen_ai.output.messages"], undefined, `${span.name}: the reference loses the answer`)
      assert.equal(ref["gen_ai.response.finish_reasons"], undefined)
      delete ours["gen_ai.output.messages"]
      delete ours["gen_ai.response.finish_reasons"]
    }
    assert.deepStrictEqual(ours, ref, `${span.name}: differs from the reference beyond issue 5`)
  }
}

/**
 * Registers the tests of one plugin/model.
 * @param {object} c
 * @param {string} c.label             test name prefix
 * @param {() => {ai: object, fake: object, tool: object}} c.app  the running app (after `before`)
 * @param {string} c.flowName
 * @param {unknown} c.modelRef         what the flow passes as `model`
 * @param {string} c.provider, c.model the expected gen_ai.provider.name / gen_ai.request.model
 * @param {"candidates" | "message"} c.outputForm  how the plugin reports the answer in genkit:output
 * @param {(kind: string, ctx: {streamed: boolean, request: object}) => object[]} c.parts
 *   the GenAI parts of each answer as this plugin reports it
 * @param {Record<string, string>} c.finish  Genkit finish reason of each answer kind
 * @param {(kind: string) => {input?: number, output?: number}} c.tokens  usage tokens written
 * @param {(output: object, kind: string) => void} c.rawUsage  checks the provider's cache and
 *   reasoning counts reached genkit:output
 * @param {(request: object) => boolean} c.streamedRequest  whether a fake request was a stream
 * @param {boolean} c.blockedThrows    whether ai.generate throws on the safety/refusal answer
 * @param {(request: object) => boolean} [c.ownsRequest]  this suite's requests, when two suites
 *   share one fake server
 */
function pluginSuite(c) {
  let flow
  const getFlow = () => (flow ??= defineChatFlow(c.app().ai, { name: c.flowName, model: c.modelRef, tool: c.app().tool }))
  let conversations = 0

  /** One conversation: `turns` is a list of [prompt, [answer kinds of its model calls]]. */
  async function conversation(t, { streamed, turns }) {
    const { fake } = c.app()
    const conversationId = `${c.flowName}-conversation-${++conversations}`
    const expectedHistory = []
    for (const [prompt, kinds] of turns) {
      const firstRequest = fake.requests.length
      const run = getFlow()({ conversationId, message: prompt, stream: streamed })
      const blocked = kinds.includes("blocked")
      let result
      if (blocked && c.blockedThrows) {
        await assert.rejects(run, (e) => e.name === "GenerationBlockedError" || /blocked/i.test(e.message))
      } else {
        result = await run
      }
      const spans = await c.app().tracing.take()
      await t.test(`${streamed ? "streamed " : ""}turn "${prompt}"`, () => {
        const requests = fake.requests.slice(firstRequest)
        assert.deepStrictEqual(
          requests.map((r) => r.kind),
          kinds,
          "the fake answered these kinds, in order",
        )
        for (const r of requests) assert.equal(c.streamedRequest(r), streamed, "streaming endpoint used iff generateStream")
        if (result !== undefined && streamed && !blocked) assert.ok(result.chunks > 0, "generateStream delivered chunks")

        assertNativeEqualsJs(spans, c.app().tracing.originals)
        assertAgainstReference(spans, c.app().tracing.originals, c.outputForm)
        assert.equal(new Set(spans.map((s) => s.spanContext().traceId)).size, 1, "one trace per flow run")
        const { flows, chats, tools } = byKind(spans)

        // The flow span: invoke_agent with the conversation id.
        assert.equal(flows.length, 1)
        const f = flows[0].attributes
        assert.equal(f["gen_ai.operation.name"], "invoke_agent")
        assert.equal(f["gen_ai.agent.name"], c.flowName)
        assert.equal(f["gen_ai.conversation.id"], conversationId)

        // One chat span per model call, one tool span per tool call.
        assert.equal(chats.length, kinds.length)
        assert.equal(tools.length, kinds.filter((k) => k === "toolCall").length)
        expectedHistory.push({ role: "user", parts: [text(prompt)] })
        kinds.forEach((kind, i) => {
          const span = chats[i]
          const a = span.attributes
          const where = `${span.name} #${i} (${kind})`
          assert.equal(a["gen_ai.operation.name"], "chat", where)
          assert.equal(a["gen_ai.provider.name"], c.provider, where)
          assert.equal(a["gen_ai.request.model"], c.model, where)
          assert.deepStrictEqual(json(span, "gen_ai.system_instructions"), [text(S.SYSTEM)], where)
          assert.deepStrictEqual(json(span, "gen_ai.input.messages"), expectedHistory, `${where}: input messages`)

          const output = json(span, "genkit:output")
          if (c.outputForm === "candidates") {
            assert.equal(output.message, undefined, `${where}: the plugin answers in candidates`)
            assert.equal(output.candidates.length, 1, where)
          } else {
            assert.ok(output.message, `${where}: the plugin answers with a top-level message`)
          }
          const parts = c.parts(kind, { streamed, request: requests[i] })
          const finish = c.finish[kind]
          assert.deepStrictEqual(
            json(span, "gen_ai.output.messages"),
            [{ role: "assistant", parts, finish_reason: finish }],
            `${where}: output messages`,
          )
          assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], [finish], where)
          const tokens = c.tokens(kind)
          assert.equal(a["gen_ai.usage.input_tokens"], tokens.input, `${where}: input tokens`)
          assert.equal(a["gen_ai.usage.output_tokens"], tokens.output, `${where}: output tokens`)
          c.rawUsage(output, kind)

          if (kind === "toolCall") {
            const call = parts.find((p) => p.type === "tool_call")
            expectedHistory.push({ role: "assistant", parts })
            const tool = tools.shift()
            assert.equal(tool.attributes["gen_ai.operation.name"], "execute_tool")
            assert.equal(tool.attributes["gen_ai.tool.name"], "getWeather")
            assert.equal(tool.attributes["gen_ai.tool.call.arguments"], JSON.stringify(call.arguments))
            assert.equal(tool.attributes["gen_ai.tool.call.result"], JSON.stringify(S.WEATHER))
            const response = { type: "tool_call_response", response: S.WEATHER }
            expectedHistory.push({ role: "tool", parts: [call.id === undefined ? response : { type: "tool_call_response", id: call.id, response: S.WEATHER }] })
          } else if (!(kind === "blocked" && c.blockedThrows)) {
            expectedHistory.push({ role: "assistant", parts })
          }
        })
        if (blocked && c.blockedThrows) {
          // The failed turn is not kept: drop its user message from the expected history.
          expectedHistory.pop()
          assert.equal(flows[0].status.code, 2, "the blocked flow span is an error")
          assert.equal(f["genkit:output"], undefined)
        }
      })
    }
  }

  test(`${c.label}: GenkitForMaple maps with the native binding here`, () => {
    assert.equal(c.app().tracing.processor.isNative, process.env.GENKIT_FOR_MAPLE_FORCE_JS !== "1")
  })

  for (const streamed of [false, true]) {
    const mode = streamed ? "streaming (generateStream)" : "non-streaming (generate)"
    test(`${c.label}, ${mode}: two turns of one conversation: a tool call and its answer, then a max-tokens answer`, async (t) => {
      await conversation(t, {
        streamed,
        turns: [
          [S.PROMPTS.weather, ["toolCall", "answer"]],
          [S.PROMPTS.poem, ["poem"]],
        ],
      })
    })
    // The refusal comes last: after an empty assistant message a real Anthropic API rejects the
    // next request ("all messages must have non-empty content"), and so does the fake.
    test(`${c.label}, ${mode}: two turns of one conversation: a plain answer, then a safety block / refusal`, async (t) => {
      await conversation(t, {
        streamed,
        turns: [
          [S.PROMPTS.hello, ["hello"]],
          [S.PROMPTS.blocked, ["blocked"]],
        ],
      })
    })
  }

  test(`${c.label}: every request the plugin made reached the fake, was authorized and answered`, () => {
    const { fake } = c.app()
    const mine = c.ownsRequest ? fake.requests.filter(c.ownsRequest) : fake.requests
    // 2 modes x (3 model calls in the tool conversation + 2 in the blocked one)
    assert.equal(mine.length, 10)
    for (const r of mine) assert.ok(r.kind, `${r.method} ${r.path} was not answered (wrong path or key?)`)
  })
}

module.exports = { pluginSuite, defineWeatherTool, defineChatFlow, text, reasoning, toolCall }
