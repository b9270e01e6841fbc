"use strict"
// What the fake models "say": one deterministic script shared by the three fake providers, so each
// provider test runs the same conversations. Each fake reads the conversation from its own wire
// format, asks `decide` what to answer, and writes the answer in its own wire format.

const SYSTEM = "You are a concise weather assistant. Use getWeather for current conditions."

const PROMPTS = {
  weather: "What's the weather in Paris right now?",
  poem: "Now write me a long poem about that rain.",
  blocked: "Explain how to pick the lock on my neighbour's door.",
  hello: "Hi, who are you?",
  // The scenarios of the corpus generator (scripts/gen-scenario-corpus.js, issue 10).
  parallel: "Compare the weather: Paris, Paris again, and Rome.",
  refund: "Refund my order A-1001, it arrived broken.",
  upstream: "Trigger an upstream failure, please.",
  notes: "Fetch the release notes for Genkit.",
  describe: "What is in this picture?",
  draw: "Draw a small red square.",
  json: "List two cities as JSON.",
  settings: "Say hi with these settings.",
}

/** What the test's getWeather tool returns (and what the fakes expect to see back). */
const WEATHER = { city: "Paris", tempC: 18, conditions: "light rain" }

const TEXT = {
  toolThinking: 'The user wants current weather in Paris, so I should call getWeather with city "Paris".',
  toolPreamble: "Let me check the current weather in Paris.",
  answerThinking: "getWeather says 18°C and light rain; suggest an umbrella.",
  answer: "It's 18°C with light rain in Paris right now. Take an umbrella!",
  // A max-tokens answer is cut mid-sentence.
  poem: "Grey Paris rain on slate and stone,\nthe river hums a muted tone,\numbrellas bloom along the",
  refusal: "I'm sorry, but I can't help with that.",
  hello: "Hi! I'm a weather assistant. Ask me about the weather anywhere.",
  afterTools: "Paris: 18°C, light rain (asked twice). Rome: 18°C, light rain.",
  describe: "A small red square on a white background.",
  drawn: "Here is your red square.",
  json: '{"cities":["Paris","Rome"]}',
  modelError: "Request contains an invalid argument.",
}

/** The tool calls of the scenario answers: [name, input], in the order the model asks. */
const CALLS = {
  parallelCalls: [
    ["getWeather", { city: "Paris" }],
    ["getWeather", { city: "Paris" }],
    ["getWeather", { city: "Rome" }],
  ],
  refundCall: [["issueRefund", { orderId: "A-1001", reason: "broken" }]],
  notesCall: [["fetchNotes", { topic: "genkit", limit: 2 }]],
}

/** A 1x1 red PNG: the image a fake draws, and the data: URL media a scenario sends. */
const RED_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

/**
 * Token counts each kind of answer reports, in provider-neutral terms:
 * `input` every prompt token (cache reads and writes included), `cacheRead`, `cacheWrite`,
 * `output` every completion token (reasoning included), `reasoning`. Each fake writes them the
 * way its provider counts (Anthropic's input_tokens excludes the cache, Gemini's
 * candidatesTokenCount excludes thoughts).
 */
const USAGE = {
  toolCall: { input: 2260, cacheRead: 2048, cacheWrite: 0, output: 96, reasoning: 64 },
  answer: { input: 2330, cacheRead: 2048, cacheWrite: 0, output: 58, reasoning: 21 },
  poem: { input: 2395, cacheRead: 1024, cacheWrite: 1280, output: 64, reasoning: 0 },
  blocked: { input: 141, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
  hello: { input: 120, cacheRead: 0, cacheWrite: 0, output: 17, reasoning: 0 },
  parallelCalls: { input: 3100, cacheRead: 2048, cacheWrite: 512, output: 120, reasoning: 40 },
  afterTools: { input: 3400, cacheRead: 2560, cacheWrite: 0, output: 48, reasoning: 16 },
  refundCall: { input: 900, cacheRead: 0, cacheWrite: 0, output: 30, reasoning: 0 },
  notesCall: { input: 950, cacheRead: 0, cacheWrite: 0, output: 28, reasoning: 0 },
  describe: { input: 1390, cacheRead: 0, cacheWrite: 0, output: 12, reasoning: 0 },
  image: { input: 40, cacheRead: 0, cacheWrite: 0, output: 1290, reasoning: 0 },
  json: { input: 160, cacheRead: 0, cacheWrite: 0, output: 11, reasoning: 0 },
}

/**
 * The next answer, from the last turn of the conversation.
 * @param {{ lastText: string, toolResult: unknown, toolResults?: {name: string}[] }} turn  the text
 *   of the last user message, the parsed result of a tool call when the last message answers one
 *   (else undefined), and every tool result of the last message (names) when the fake reads them
 * @returns {string} an answer kind: "toolCall" | "answer" | "poem" | "blocked" | "hello", or a
 *   scenario kind: "parallelCalls" | "refundCall" | "notesCall" | "afterTools" | "modelError" |
 *   "describe" | "image" | "json"
 */
function decide({ lastText, toolResult, toolResults }) {
  // Results of other tools, or of several calls: the scenarios' generic answer.
  if (toolResults !== undefined && (toolResults.length !== 1 || toolResults[0].name !== "getWeather")) return "afterTools"
  if (toolResult !== undefined) {
    if (JSON.stringify(toolResult) !== JSON.stringify(WEATHER)) {
      throw new Error(`unexpected tool result ${JSON.stringify(toolResult)}`)
    }
    return "answer"
  }
  if (lastText.includes(PROMPTS.parallel)) return "parallelCalls"
  if (lastText.includes(PROMPTS.refund)) return "refundCall"
  if (lastText.includes(PROMPTS.upstream)) return "modelError"
  if (lastText.includes(PROMPTS.notes)) return "notesCall"
  if (lastText.includes(PROMPTS.describe)) return "describe"
  if (lastText.includes(PROMPTS.draw)) return "image"
  if (lastText.includes(PROMPTS.json)) return "json"
  if (lastText.includes("weather in")) return "toolCall"
  if (lastText.includes("poem")) return "poem"
  if (lastText.includes("lock")) return "blocked"
  return "hello"
}

/** Splits a string into `n` roughly equal pieces (streamed text arrives in several deltas). */
function pieces(s, n = 3) {
  const size = Math.ceil(s.length / n)
  const out = []
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
  return out
}

module.exports = { SYSTEM, PROMPTS, WEATHER, TEXT, USAGE, CALLS, RED_PNG, decide, pieces }
