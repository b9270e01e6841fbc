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
}

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
}

/**
 * The next answer, from the last turn of the conversation.
 * @param {{ lastText: string, toolResult: unknown }} turn  the text of the last user message, and the
 *   parsed result of a tool call when the last message answers one (else undefined)
 * @returns {"toolCall" | "answer" | "poem" | "blocked" | "hello"}
 */
function decide({ lastText, toolResult }) {
  if (toolResult !== undefined) {
    if (JSON.stringify(toolResult) !== JSON.stringify(WEATHER)) {
      throw new Error(`unexpected tool result ${JSON.stringify(toolResult)}`)
    }
    return "answer"
  }
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

module.exports = { SYSTEM, PROMPTS, WEATHER, TEXT, USAGE, decide, pieces }
