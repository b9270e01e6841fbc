// Run by __test__/runtimes.test.js under Node 22/24, Bun and Deno: the real Genkit corpus through
// GenkitForMaple (compared with its expected attributes), then one real Genkit flow (model + tool
// call) traced through NodeSDK with the README's setup (../pack-app/instrumentation.mjs). Prints
// `SPAN` lines and one `RESULT` line.
import { processor, sdk } from "../pack-app/instrumentation.mjs"
import { readFileSync } from "node:fs"
import { genkit, z } from "genkit"
import { setCustomMetadataAttribute } from "genkit/tracing"
import { GenkitForMaple } from "genkit-for-maple"

const rows = JSON.parse(readFileSync(process.env.GFM_SPANS, "utf8"))
const corpus = new GenkitForMaple({ mode: "reference", scrubSecrets: false }) /* compared with seed 000: without the binding, secret scrubbing (on by default) withholds content */
let equal = 0
for (const row of rows) {
  const attributes = structuredClone(row.attributes)
  corpus.onEnd({ name: row.name, attributes })
  if (JSON.stringify(attributes) === JSON.stringify(row.expected_attributes)) equal++
}
// Issue 13: outputs written as slices of the input and ropes (String.prototype.slice / concat
// called from the binding), a tool result and a model span with long texts.
const a = "a".repeat(100_000)
const zh = "ж".repeat(100_000)
let long = 0
const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:output": `"${a}"` }
corpus.onEnd({ name: "t", attributes: tool })
if (tool["gen_ai.tool.call.result"] === a) long++
const chatSpan = { "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:input": `{"messages":[{"role":"user","content":[{"text":"${zh}"}]}]}`, "genkit:output": `{"message":{"role":"model","content":[{"text":"${a}"},{"text":"${zh}"}]},"finishReason":"stop"}` }
corpus.onEnd({ name: "m", attributes: chatSpan })
if (chatSpan["gen_ai.input.messages"] === `[{"role":"user","parts":[{"type":"text","content":"${zh}"}]}]`) long++
if (chatSpan["gen_ai.output.messages"] === `[{"role":"assistant","parts":[{"type":"text","content":"${a}"},{"type":"text","content":"${zh}"}],"finish_reason":"stop"}]`) long++

const ai = genkit({})
const model = ai.defineModel(
  { name: "googleai/gemini-2.5-flash", supports: { multiturn: true, tools: true, systemRole: true } },
  async (request) => {
    const response = request.messages.at(-1)?.content.find((part) => part.toolResponse)?.toolResponse
    if (response === undefined) {
      return {
        message: { role: "model", content: [{ toolRequest: { name: "getWeather", ref: "call-1", input: { city: "Paris" } } }] },
        finishReason: "stop",
        usage: { inputTokens: 12, outputTokens: 7 },
      }
    }
    return {
      message: { role: "model", content: [{ text: `It is ${response.output.tempC} C in ${response.output.city}.` }] },
      finishReason: "stop",
      usage: { inputTokens: 30, outputTokens: 9 },
    }
  },
)
const getWeather = ai.defineTool(
  { name: "getWeather", description: "The current weather in a city", inputSchema: z.object({ city: z.string() }), outputSchema: z.object({ city: z.string(), tempC: z.number() }) },
  async ({ city }) => ({ city, tempC: 21 }),
)
const supportChat = ai.defineFlow(
  { name: "supportChat", inputSchema: z.object({ chatId: z.string(), text: z.string() }), outputSchema: z.string() },
  async ({ chatId, text }) => {
    setCustomMetadataAttribute("conversationId", chatId)
    const response = await ai.generate({ model, system: "You are a support agent.", prompt: text, tools: [getWeather] })
    return response.text
  },
)
let answer
try {
  answer = await supportChat({ chatId: "chat-42", text: "What is the weather in Paris?" })
} finally {
  await sdk.shutdown()
}
process.stdout.write(`RESULT ${JSON.stringify({ answer, isNative: processor.isNative, corpusNative: corpus.isNative, spans: rows.length, equal, long })}\n`)
