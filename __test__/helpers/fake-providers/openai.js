"use strict"
// Fake OpenAI Chat Completions API for @genkit-ai/compat-oai (the `openai` SDK 4.x):
//   POST {baseURL}/chat/completions, non-streaming and `stream: true` (SSE, `data: [DONE]`).
// Auth: `Authorization: Bearer <key>`. Answers chat.completion objects: `tool_calls` with
// finish_reason "tool_calls", a `refusal` (content null), finish_reason "length", usage with
// prompt_tokens_details.cached_tokens and completion_tokens_details.reasoning_tokens; streamed,
// chat.completion.chunk objects and, for `stream_options.include_usage`, the final usage chunk
// with empty `choices`.
// The same server also answers as DeepSeek (OpenAI-compatible, base URL without /v1): for
// `deepseek-reasoner` the message carries `reasoning_content`, which the plugin turns into a
// reasoning part, and usage adds prompt_cache_hit_tokens / prompt_cache_miss_tokens.
const { startServer } = require("./server")
const { TEXT, USAGE, CALLS, decide, pieces } = require("./script")

const CREATED = 1750000000

/** Rejects what Chat Completions rejects in a conversation: 400 with this message, or undefined. */
function invalid(body) {
  const calls = new Set()
  for (const [i, m] of body.messages.entries()) {
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) calls.add(c.id)
    if (m.role === "tool" && !calls.has(m.tool_call_id)) {
      return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages.[${i}])`
    }
  }
  return undefined
}

function lastTurn(body) {
  const last = body.messages.at(-1)
  if (last.role === "tool") {
    let first = body.messages.length - 1
    while (body.messages[first - 1]?.role === "tool") first--
    const results = body.messages.slice(first)
    const parse = (m) => {
      try {
        return JSON.parse(typeof m.content === "string" ? m.content : JSON.stringify(m.content))
      } catch {
        return m.content
      }
    }
    const toolResult = parse(results[0])
    if (results.length > 1 || JSON.stringify(toolResult) !== JSON.stringify({ ...toolResult, tempC: 18 })) {
      return { lastText: "", toolResult, toolResults: results.map((m) => ({ name: m.tool_call_id })) }
    }
    return { lastText: "", toolResult }
  }
  const content = typeof last.content === "string" ? last.content : last.content.map((p) => p.text ?? "").join("")
  return { lastText: content, toolResult: undefined }
}

const reasoner = (model) => model.startsWith("deepseek-reasoner")

function usage(kind, model) {
  const u = USAGE[kind]
  const out = {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: u.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
  if (model.startsWith("deepseek")) {
    out.prompt_cache_hit_tokens = u.cacheRead
    out.prompt_cache_miss_tokens = u.input - u.cacheRead
  }
  return out
}

/** The assistant message and finish_reason of one answer. */
function answer(kind, model, callId) {
  switch (kind) {
    case "parallelCalls":
    case "refundCall":
    case "notesCall":
      return {
        message: {
          role: "assistant",
          content: null,
          tool_calls: CALLS[kind].map(([name, input], i) => ({ id: `${callId}_${i}`, type: "function", function: { name, arguments: JSON.stringify(input) } })),
          refusal: null,
          annotations: [],
        },
        finish_reason: "tool_calls",
      }
    case "afterTools":
    case "describe":
    case "json":
      return { message: { role: "assistant", content: TEXT[kind], refusal: null, annotations: [] }, finish_reason: "stop" }
    case "toolCall":
      return {
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: callId, type: "function", function: { name: "getWeather", arguments: '{"city":"Paris"}' } },
          ],
          refusal: null,
          annotations: [],
        },
        finish_reason: "tool_calls",
      }
    case "answer":
      return {
        message: {
          role: "assistant",
          content: TEXT.answer,
          ...(reasoner(model) ? { reasoning_content: TEXT.answerThinking } : {}),
          refusal: null,
          annotations: [],
        },
        finish_reason: "stop",
      }
    case "poem":
      return { message: { role: "assistant", content: TEXT.poem, refusal: null, annotations: [] }, finish_reason: "length" }
    case "hello":
      return { message: { role: "assistant", content: TEXT.hello, refusal: null, annotations: [] }, finish_reason: "stop" }
    case "blocked":
      // OpenAI's refusal: the text is in `refusal`, `content` is null, finish_reason stays "stop".
      return { message: { role: "assistant", content: null, refusal: TEXT.refusal, annotations: [] }, finish_reason: "stop" }
    default:
      throw new Error(`no OpenAI answer for ${kind}`)
  }
}

function completion(kind, model, id, callId) {
  const { message, finish_reason } = answer(kind, model, callId)
  return {
    id,
    object: "chat.completion",
    created: CREATED,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason }],
    usage: usage(kind, model),
    service_tier: "default",
    system_fingerprint: "fp_fake0001",
  }
}

/** The chunks OpenAI streams for the same answer. */
function chunks(kind, model, id, callId, includeUsage) {
  const { message, finish_reason } = answer(kind, model, callId)
  const base = { id, object: "chat.completion.chunk", created: CREATED, model, service_tier: "default", system_fingerprint: "fp_fake0001" }
  const usageNull = includeUsage ? { usage: null } : {}
  const chunk = (delta, finish = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...usageNull,
  })
  const out = [chunk({ role: "assistant", content: message.content === null ? null : "", refusal: null })]
  if (message.reasoning_content) out.push(chunk({ reasoning_content: message.reasoning_content }))
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }))
    for (const args of pieces(call.function.arguments)) out.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }))
  }
  if (message.content) for (const content of pieces(message.content)) out.push(chunk({ content }))
  if (message.refusal) for (const refusal of pieces(message.refusal)) out.push(chunk({ refusal }))
  out.push(chunk({}, finish_reason))
  if (includeUsage) out.push({ ...base, choices: [], usage: usage(kind, model) })
  return out
}

/**
 * Starts the fake OpenAI-compatible API. Paths /v1/chat/completions (OpenAI base URL `<url>/v1`)
 * and /chat/completions (DeepSeek base URL `<url>`).
 * @param {{ apiKey: string }} options  the only key it accepts
 */
/**
 * `responseModels`: the model the answer reports for a requested one (the real API answers a
 * dated snapshot, `gpt-4o` -> `gpt-4o-2024-08-06`); by default the requested name.
 */
async function startOpenAI({ apiKey, responseModels = {} }) {
  let n = 0
  return startServer("openai", (req, reply) => {
    if (req.method !== "POST" || !/^(\/v1)?\/chat\/completions$/.test(req.path)) {
      return reply.json(404, { error: { message: `Unknown request URL: ${req.method} ${req.path}`, type: "invalid_request_error", param: null, code: "unknown_url" } })
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return reply.json(401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", param: null, code: "invalid_api_key" } })
    }
    const problem = invalid(req.body)
    if (problem) {
      return reply.json(400, { error: { message: problem, type: "invalid_request_error", param: "messages", code: null } })
    }
    const model = Object.hasOwn(responseModels, req.body.model) ? responseModels[req.body.model] : req.body.model
    const kind = decide(lastTurn(req.body))
    req.kind = kind
    if (kind === "modelError") return reply.json(400, { error: { message: TEXT.modelError, type: "invalid_request_error", param: null, code: null } })
    n++
    const id = `chatcmpl-fake${String(n).padStart(4, "0")}`
    const callId = `call_fake${String(n).padStart(4, "0")}`
    if (kind === "toolCall") req.toolCallId = callId
    const headers = { "x-request-id": `req_fake${n}`, "openai-processing-ms": "1" }
    if (!req.body.stream) return reply.json(200, completion(kind, model, id, callId), headers)
    const includeUsage = req.body.stream_options?.include_usage === true
    const events = chunks(kind, model, id, callId, includeUsage).map((c) => `data: ${JSON.stringify(c)}\n\n`)
    events.push("data: [DONE]\n\n")
    reply.sse(events, headers)
  })
}

module.exports = { startOpenAI }
