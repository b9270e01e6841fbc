"use strict"
// Fake Anthropic Messages API for @genkit-ai/anthropic (the `@anthropic-ai/sdk` client, pointed
// here through ANTHROPIC_BASE_URL since the plugin passes no base URL):
//   POST /v1/messages, non-streaming and `stream: true` (SSE: message_start, content_block_start /
//   _delta / _stop, message_delta, message_stop, ping).
// Auth: `x-api-key` header, `anthropic-version` required. Answers Message objects: `thinking`
// blocks with a signature, `tool_use` blocks, stop_reason tool_use / end_turn / max_tokens /
// refusal, usage with cache_read_input_tokens and cache_creation_input_tokens (input_tokens
// excludes both, as Anthropic counts).
const { startServer } = require("./server")
const { TEXT, USAGE, CALLS, decide, pieces } = require("./script")

const SIGNATURE = "EqQBCkgIBhABGAIiQGZha2UtdGhpbmtpbmctc2lnbmF0dXJlLWZvci10ZXN0cw=="

/** Rejects what the Messages API rejects in a conversation: 400 with this message, or undefined. */
function invalid(body) {
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required"
  const last = body.messages.length - 1
  for (const [i, m] of body.messages.entries()) {
    if (Array.isArray(m.content) && m.content.length === 0 && !(i === last && m.role === "assistant")) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`
    }
    if (m.role !== "user" || !Array.isArray(m.content)) continue
    const previous = body.messages[i - 1]
    const uses = new Set((previous?.role === "assistant" && Array.isArray(previous.content) ? previous.content : []).filter((b) => b.type === "tool_use").map((b) => b.id))
    for (const b of m.content) {
      if (b.type === "tool_result" && !uses.has(b.tool_use_id)) {
        return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
      }
    }
  }
  return undefined
}

function lastTurn(body) {
  const last = body.messages.at(-1)
  const content = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content
  const results = content.filter((b) => b.type === "tool_result")
  const result = results[0]
  if (result && (results.length > 1 || !JSON.stringify(result.content).includes("tempC"))) {
    return { lastText: "", toolResult: result.content, toolResults: results.map((b) => ({ name: b.tool_use_id })) }
  }
  if (result) {
    const text = result.content.map((b) => b.text ?? "").join("")
    return { lastText: "", toolResult: JSON.parse(text) }
  }
  return { lastText: content.map((b) => b.text ?? "").join(""), toolResult: undefined }
}

function usage(kind, cacheWrite1h = 0) {
  const u = USAGE[kind]
  const hour = Math.min(cacheWrite1h, u.cacheWrite)
  return {
    input_tokens: u.input - u.cacheRead - u.cacheWrite,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite - hour, ephemeral_1h_input_tokens: hour },
    output_tokens: u.output,
    service_tier: "standard",
  }
}

/** The content blocks and stop_reason of one answer. */
function answer(kind, toolId) {
  switch (kind) {
    case "parallelCalls":
    case "refundCall":
    case "notesCall":
      return {
        content: [
          { type: "text", text: TEXT.toolPreamble },
          ...CALLS[kind].map(([name, input], i) => ({ type: "tool_use", id: `${toolId}_${i}`, name, input })),
        ],
        stop_reason: "tool_use",
      }
    case "afterTools":
      return { content: [{ type: "text", text: TEXT.afterTools }], stop_reason: "end_turn" }
    case "describe":
      return { content: [{ type: "text", text: TEXT.describe }], stop_reason: "end_turn" }
    case "json":
      return { content: [{ type: "text", text: TEXT.json }], stop_reason: "end_turn" }
    case "toolCall":
      return {
        content: [
          { type: "thinking", thinking: TEXT.toolThinking, signature: SIGNATURE },
          { type: "text", text: TEXT.toolPreamble },
          { type: "tool_use", id: toolId, name: "getWeather", input: { city: "Paris" } },
        ],
        stop_reason: "tool_use",
      }
    case "answer":
      return { content: [{ type: "text", text: TEXT.answer }], stop_reason: "end_turn" }
    case "poem":
      return { content: [{ type: "text", text: TEXT.poem }], stop_reason: "max_tokens" }
    case "hello":
      return { content: [{ type: "text", text: TEXT.hello }], stop_reason: "end_turn" }
    case "blocked":
      // Claude's streaming classifiers stop the answer: stop_reason "refusal", no content.
      return { content: [], stop_reason: "refusal" }
    default:
      throw new Error(`no Anthropic answer for ${kind}`)
  }
}

function message(kind, model, id, toolId, cacheWrite1h = 0) {
  const { content, stop_reason } = answer(kind, toolId)
  return { id, type: "message", role: "assistant", model, content, stop_reason, stop_sequence: null, usage: usage(kind, cacheWrite1h) }
}

const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

/** The SSE events Anthropic streams for the same answer. */
function events(kind, model, id, toolId) {
  const { content, stop_reason } = answer(kind, toolId)
  const u = usage(kind)
  const startUsage = { ...u, output_tokens: 1 }
  const out = [event("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } })]
  content.forEach((block, index) => {
    if (block.type === "thinking") {
      out.push(event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }))
      for (const thinking of pieces(block.thinking)) out.push(event("content_block_delta", { index, delta: { type: "thinking_delta", thinking } }))
      out.push(event("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } }))
    } else if (block.type === "text") {
      out.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }))
      if (index === 0) out.push(event("ping", {}))
      for (const text of pieces(block.text)) out.push(event("content_block_delta", { index, delta: { type: "text_delta", text } }))
    } else if (block.type === "tool_use") {
      out.push(event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } }))
      for (const partial_json of pieces(JSON.stringify(block.input))) {
        out.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }))
      }
    }
    out.push(event("content_block_stop", { index }))
  })
  out.push(
    event("message_delta", {
      delta: { stop_reason, stop_sequence: null },
      usage: {
        input_tokens: u.input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        output_tokens: u.output_tokens,
      },
    }),
  )
  out.push(event("message_stop", {}))
  return out
}

/**
 * Starts the fake Anthropic API; point the SDK at it with ANTHROPIC_BASE_URL=<url>.
 * @param {{ apiKey: string }} options  the only key it accepts
 */
/**
 * `cacheWrite1h`: how many of an answer's cache writes had a one-hour TTL (the rest: five minutes;
 * non-streamed answers); 0 by default.
 */
async function startAnthropic({ apiKey, cacheWrite1h = 0 }) {
  let n = 0
  return startServer("anthropic", (req, reply) => {
    if (req.method !== "POST" || req.path !== "/v1/messages") {
      return reply.json(404, { type: "error", error: { type: "not_found_error", message: `${req.method} ${req.path} not found` } })
    }
    if (req.headers["x-api-key"] !== apiKey) {
      return reply.json(401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } })
    }
    if (!req.headers["anthropic-version"]) {
      return reply.json(400, { type: "error", error: { type: "invalid_request_error", message: "anthropic-version header is required" } })
    }
    const problem = invalid(req.body)
    if (problem) return reply.json(400, { type: "error", error: { type: "invalid_request_error", message: problem } })
    const { model } = req.body
    const kind = decide(lastTurn(req.body))
    req.kind = kind
    if (kind === "modelError") return reply.json(400, { type: "error", error: { type: "invalid_request_error", message: TEXT.modelError } })
    n++
    const id = `msg_fake${String(n).padStart(4, "0")}`
    const toolId = `toolu_fake${String(n).padStart(4, "0")}`
    if (kind === "toolCall") req.toolCallId = toolId
    const headers = { "request-id": `req_fake${n}` }
    if (!req.body.stream) return reply.json(200, message(kind, model, id, toolId, cacheWrite1h), headers)
    reply.sse(events(kind, model, id, toolId), headers)
  })
}

module.exports = { startAnthropic, SIGNATURE }
