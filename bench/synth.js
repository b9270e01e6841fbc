"use strict"
// Synthetic model spans shaped like the ones Genkit 1.42 writes (see __test__/fixtures): `genkit:input`
// is a GenerateRequest (a system message, alternating user/model turns with reasoning, text and
// toolRequest parts, tool messages with toolResponse parts holding nested JSON, `config`, `tools`
// with JSON schemas, `output`), `genkit:output` a GenerateResponse (message, finishReason, usage,
// custom). Deterministic: the same (size, script) always gives the same strings.
const { mulberry32: rng } = require("../__test__/helpers/prng.js")

const ASCII_WORDS = (
  "the weather in paris is mild today with light rain expected later please check the booking " +
  "reference and confirm the itinerary for next week flight hotel train schedule price summary " +
  "temperature forecast humidity wind city museum opening hours ticket availability restaurant"
).split(" ")

// Multi-byte: CJK, emoji (astral, surrogate pairs in V8), accented Latin; V8 keeps these two-byte.
const MULTI_WORDS = [
  "東京の天気は晴れ", "明日は雨が降るでしょう", "予約番号を確認してください", "北京", "서울의 날씨", "감사합니다",
  "😀", "🚆", "🌧️", "👍🏽", "café", "crème brûlée", "Zürich", "São Paulo", "naïve", "Ærøskøbing", "déjà vu",
  "the", "weather", "is", "nice", "and", "price", "€42", "—", "«bonjour»",
]

function words(next, script, count) {
  const list = script === "multi" ? MULTI_WORDS : ASCII_WORDS
  const out = []
  for (let i = 0; i < count; i++) {
    out.push(list[Math.floor(next() * list.length)])
    // Some escapes Genkit's JSON.stringify writes: newlines, quotes, tabs.
    const r = next()
    if (r < 0.02) out.push("\n")
    else if (r < 0.03) out.push('"quoted"')
    else if (r < 0.035) out.push("\t")
  }
  return out.join(" ")
}

const TOOLS = [
  {
    name: "getWeather",
    description: "Current weather for a city",
    inputSchema: {
      type: "object",
      properties: { city: { type: "string", description: "City name" }, units: { type: "string", enum: ["metric", "imperial"] } },
      required: ["city"],
      additionalProperties: true,
      $schema: "http://json-schema.org/draft-07/schema#",
    },
    outputSchema: {
      type: "object",
      properties: {
        city: { type: "string" },
        tempC: { type: "number" },
        conditions: { type: "string" },
        humid: { type: "boolean" },
        forecast: { type: "array", items: { type: "object", properties: { day: { type: "string" }, highC: { type: "number" } } } },
      },
      required: ["city", "tempC", "conditions", "humid"],
      additionalProperties: true,
      $schema: "http://json-schema.org/draft-07/schema#",
    },
    key: "/tool/getWeather",
  },
  {
    name: "searchBookings",
    description: "Search the customer's bookings",
    inputSchema: {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 50 }, filters: { type: "object", additionalProperties: { type: "string" } } },
      required: ["query"],
      additionalProperties: true,
      $schema: "http://json-schema.org/draft-07/schema#",
    },
    key: "/tool/searchBookings",
  },
]

const SMALL_TOOL = {
  name: "getWeather",
  description: "Current weather for a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}

/**
 * One synthetic model span's attributes with `genkit:input` of about `size` UTF-16 code units.
 * @param {number} size target length of `genkit:input`
 * @param {"ascii"|"multi"} script
 */
function modelSpan(size, script) {
  const next = rng(size * 7 + (script === "multi" ? 1 : 0))
  const w = (n) => words(next, script, n)
  // Per-turn text scales gently with the size so 5 MB spans are not 50k tiny messages.
  const scale = Math.max(1, Math.round(Math.sqrt(size / 1000)))
  const messages = [{ role: "system", content: [{ text: `You are a concise travel assistant. ${w(8 * scale)}` }] }]
  const request = {
    messages,
    config: { temperature: 0.2, maxOutputTokens: 1024, topK: 40, stopSequences: ["\n\nUser:"] },
    // A ~1 KB request has room for one small tool definition only.
    tools: size < 5000 ? [SMALL_TOOL] : TOOLS,
    output: { format: "text" },
  }
  let turn = 0
  const base = JSON.stringify(request).length
  let length = base
  const push = (m) => {
    messages.push(m)
    length += JSON.stringify(m).length + 1
  }
  while (length < size) {
    const id = `call_${turn}_0`
    push({ role: "user", content: [{ text: w(6 * scale) }] })
    if (length >= size) break
    if (turn % 2 === 0) {
      push({
        role: "model",
        content: [
          { reasoning: w(4 * scale) },
          { text: w(2 * scale) },
          { toolRequest: { ref: id, name: "getWeather", input: { city: w(1), units: "metric", options: { days: 3, detail: [1, 2, 3] } } } },
        ],
      })
      push({
        role: "tool",
        content: [
          {
            toolResponse: {
              ref: id,
              name: "getWeather",
              output: {
                city: w(1),
                tempC: Math.round(next() * 300) / 10,
                conditions: w(3),
                humid: next() < 0.5,
                forecast: [
                  { day: "mon", highC: 21.5, note: w(scale) },
                  { day: "tue", highC: 19, note: w(scale) },
                ],
              },
            },
          },
        ],
      })
      push({ role: "model", content: [{ text: w(8 * scale) }] })
    } else {
      push({ role: "model", content: [{ reasoning: w(3 * scale) }, { text: w(10 * scale) }] })
    }
    turn++
  }
  const input = JSON.stringify(request)
  const answer = w(Math.max(8, Math.round(size / 60)))
  const output = JSON.stringify({
    message: { role: "model", content: [{ reasoning: w(2 * scale) }, { text: answer }] },
    finishReason: "stop",
    usage: { inputTokens: Math.round(size / 4), outputTokens: Math.round(answer.length / 4), totalTokens: Math.round(size / 4 + answer.length / 4) },
    custom: { responseId: `resp-${size}`, modelVersion: "gemini-2.5-flash" },
    latencyMs: 812.5,
  })
  return {
    "genkit:type": "action",
    "genkit:metadata:subtype": "model",
    "genkit:key": "/model/googleai/gemini-2.5-flash",
    "genkit:name": "googleai/gemini-2.5-flash",
    "genkit:path": "/{chatFlow,t:flow}/{generate,t:util}/{googleai/gemini-2.5-flash,t:action,s:model}",
    "genkit:input": input,
    "genkit:output": output,
    "genkit:state": "success",
  }
}

/** The end time (HrTime) the benchmarks give a synthetic span, as every span the SDK ends has one:
 * complete mode prices a call at it (without one it reads the clock). */
const END_TIME = Object.freeze([1_795_976_634, 455_252_805])

module.exports = { modelSpan, END_TIME }
