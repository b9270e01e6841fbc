"use strict"
// Fake Gemini API (generativelanguage.googleapis.com, v1beta) for @genkit-ai/google-genai:
//   POST /v1beta/models/{model}:generateContent
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse
// Auth: `x-goog-api-key` header. Answers GenerateContentResponse objects: `thought: true` parts,
// `functionCall` parts (no id, as the Gemini API sends them), usageMetadata with
// cachedContentTokenCount and thoughtsTokenCount, finishReason STOP / MAX_TOKENS / SAFETY.
const { startServer } = require("./server")
const { TEXT, USAGE, CALLS, RED_PNG, decide, pieces } = require("./script")

const THOUGHT_SIGNATURE = "CiQBjz1rX2Zha2UtdGhvdWdodC1zaWduYXR1cmUtZm9yLXRlc3Rz"

/** Rejects what generateContent rejects in a conversation: 400 with this message, or undefined. */
function invalid(body) {
  if (!Array.isArray(body.contents) || body.contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified"
  for (const [i, c] of body.contents.entries()) {
    if (!Array.isArray(c.parts) || c.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`
    for (const p of c.parts) {
      const previous = body.contents[i - 1]
      if (p.functionResponse && !previous?.parts.some((q) => q.functionCall?.name === p.functionResponse.name)) {
        return `* GenerateContentRequest.contents[${i}]: a function response turn must come right after a function call turn.`
      }
    }
  }
  return undefined
}

/** The turn the script answers: the last `contents` entry (a user text or a functionResponse). */
function lastTurn(body) {
  const last = body.contents.at(-1)
  const responses = last.parts.filter((p) => p.functionResponse)
  const response = responses[0]
  if (responses.length > 0 && (responses.length > 1 || response.functionResponse.name !== "getWeather")) {
    return { lastText: "", toolResult: response.functionResponse.response, toolResults: responses.map((p) => ({ name: p.functionResponse.name })) }
  }
  if (response) {
    if (response.functionResponse.name !== "getWeather") throw new Error("functionResponse for an unknown tool")
    // Genkit wraps the tool output: { name, content: output }.
    return { lastText: "", toolResult: response.functionResponse.response.content }
  }
  return { lastText: last.parts.map((p) => p.text ?? "").join(""), toolResult: undefined }
}

/** Gemini's usageMetadata: promptTokenCount counts the cache; candidatesTokenCount excludes thoughts. */
function usageMetadata(kind) {
  const u = USAGE[kind]
  const meta = { promptTokenCount: u.input }
  if (u.output > 0) meta.candidatesTokenCount = u.output - u.reasoning
  meta.totalTokenCount = u.input + u.output
  if (u.cacheRead > 0) meta.cachedContentTokenCount = u.cacheRead
  meta.promptTokensDetails = [{ modality: "TEXT", tokenCount: u.input }]
  if (u.cacheRead > 0) meta.cacheTokensDetails = [{ modality: "TEXT", tokenCount: u.cacheRead }]
  if (u.reasoning > 0) meta.thoughtsTokenCount = u.reasoning
  return meta
}

const NEGLIGIBLE = [
  "HARM_CATEGORY_SEXUALLY_EXPLICIT",
  "HARM_CATEGORY_HATE_SPEECH",
  "HARM_CATEGORY_HARASSMENT",
].map((category) => ({ category, probability: "NEGLIGIBLE" }))

/** The answer's parts and finishReason (the thought text stays one part; answers may be split). */
function answer(kind) {
  switch (kind) {
    case "toolCall":
      return {
        parts: [
          { text: TEXT.toolThinking, thought: true },
          { functionCall: { name: "getWeather", args: { city: "Paris" } }, thoughtSignature: THOUGHT_SIGNATURE },
        ],
        finishReason: "STOP",
      }
    case "answer":
      return { parts: [{ text: TEXT.answerThinking, thought: true }, { text: TEXT.answer }], finishReason: "STOP" }
    case "poem":
      return { parts: [{ text: TEXT.poem }], finishReason: "MAX_TOKENS" }
    case "hello":
      return { parts: [{ text: TEXT.hello }], finishReason: "STOP" }
    case "parallelCalls":
    case "refundCall":
    case "notesCall":
      // Gemini 2.5 sends no call ids: the plugin's toolRequests carry no ref.
      return { parts: CALLS[kind].map(([name, args]) => ({ functionCall: { name, args } })), finishReason: "STOP" }
    case "afterTools":
      return { parts: [{ text: TEXT.afterTools }], finishReason: "STOP" }
    case "describe":
      return { parts: [{ text: TEXT.describe }], finishReason: "STOP" }
    case "image":
      // An image model's answer: the picture inline, and a line of text.
      return { parts: [{ text: TEXT.drawn }, { inlineData: { mimeType: "image/png", data: RED_PNG } }], finishReason: "STOP" }
    case "json":
      return { parts: [{ text: TEXT.json }], finishReason: "STOP" }
    case "blocked":
      // A candidate blocked by the safety filters: no content, the rating that blocked it.
      return {
        parts: undefined,
        finishReason: "SAFETY",
        safetyRatings: [
          ...NEGLIGIBLE,
          { category: "HARM_CATEGORY_DANGEROUS_CONTENT", probability: "HIGH", blocked: true },
        ],
      }
    default:
      throw new Error(`no Gemini answer for ${kind}`)
  }
}

function candidate(parts, extra) {
  const c = {}
  if (parts !== undefined) c.content = { parts, role: "model" }
  return { ...c, ...extra }
}

function generateContentResponse(kind, model, id) {
  const a = answer(kind)
  return {
    candidates: [
      candidate(a.parts, { finishReason: a.finishReason, index: 0, safetyRatings: a.safetyRatings ?? NEGLIGIBLE }),
    ],
    usageMetadata: usageMetadata(kind),
    modelVersion: model,
    responseId: id,
  }
}

/** The SSE chunks of streamGenerateContent: one part per chunk, text split, finishReason last. */
function streamChunks(kind, model, id) {
  const a = answer(kind)
  const base = { modelVersion: model, responseId: id }
  const partial = { promptTokenCount: USAGE[kind].input, totalTokenCount: USAGE[kind].input }
  if (a.parts === undefined) {
    return [{ candidates: [candidate(undefined, { finishReason: a.finishReason, index: 0, safetyRatings: a.safetyRatings })], usageMetadata: usageMetadata(kind), ...base }]
  }
  const split = []
  for (const part of a.parts) {
    if (typeof part.text === "string" && !part.thought) for (const text of pieces(part.text)) split.push({ text })
    else split.push(part)
  }
  return split.map((part, i) => {
    const last = i === split.length - 1
    const c = last ? candidate([part], { finishReason: a.finishReason, index: 0, safetyRatings: NEGLIGIBLE }) : candidate([part], { index: 0 })
    return { candidates: [c], usageMetadata: last ? usageMetadata(kind) : partial, ...base }
  })
}

/**
 * Starts the fake Gemini API.
 * @param {{ apiKey: string }} options  the only key it accepts
 */
async function startGemini({ apiKey }) {
  let n = 0
  const fake = await startServer("gemini", (req, reply) => {
    const m = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(req.path)
    if (req.method !== "POST" || !m) {
      return reply.json(404, { error: { code: 404, message: `${req.method} ${req.path} not found`, status: "NOT_FOUND" } })
    }
    if (req.headers["x-goog-api-key"] !== apiKey) {
      return reply.json(400, {
        error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" },
      })
    }
    const problem = invalid(req.body)
    if (problem) return reply.json(400, { error: { code: 400, message: problem, status: "INVALID_ARGUMENT" } })
    const [, model, method] = m
    const kind = decide(lastTurn(req.body))
    req.kind = kind
    if (kind === "modelError") return reply.json(400, { error: { code: 400, message: TEXT.modelError, status: "INVALID_ARGUMENT" } })
    const id = `fake-gemini-${++n}`
    if (method === "generateContent") return reply.json(200, generateContentResponse(kind, model, id))
    if (req.query.get("alt") !== "sse") throw new Error("streamGenerateContent without alt=sse")
    reply.sse(streamChunks(kind, model, id).map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`))
  })
  return fake
}

module.exports = { startGemini, THOUGHT_SIGNATURE }
