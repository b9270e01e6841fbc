"use strict"
// The built-in local OTLP/HTTP receiver of genkit-for-maple, and the Agent Sessions view of what it
// received. The demo (examples/support-agent) exports to it when OTEL_EXPORTER_OTLP_ENDPOINT is unset.
//
// - startReceiver(): an HTTP server on 127.0.0.1 that accepts `POST /v1/traces` with
//   `application/x-protobuf` (an ExportTraceServiceRequest, gzip or not), decodes it in Rust
//   (`decodeOtlpTraces` of the native binding: opentelemetry-proto + prost) and keeps the spans.
// - renderSessions(spans): what Maple's Agent Sessions would show: one block per conversation id,
//   one turn per trace, the transcript, each chat span's provider/model/tokens, each tool call.
// - checkSessions(spans): seed 003's "Check without Maple access" as a list of checks.
//
// This is not the onEnd path, but one request must not bring the process down: the work per
// request is bounded (body and decompressed size, spans and protobuf messages counted on the wire
// before decoding, each resource and scope decoded once per ResourceSpans and shared by its spans),
// every failure is an answer (400 invalid, 413 too large, 415 unsupported, with the reason as
// text), nothing a body holds can throw out of the request handler, and the next request is served.

const http = require("node:http")
const zlib = require("node:zlib")
const { parse, FAIL } = require("./mapping")

/** Largest request body accepted, compressed or not (bytes). */
const MAX_BODY_BYTES = 32 * 1024 * 1024
/** Largest body after gzip decompression (bytes): zlib's `maxOutputLength`. */
const MAX_DECODED_BYTES = 32 * 1024 * 1024
/** Most spans in one request (a BatchSpanProcessor sends 512 by default). */
const MAX_SPANS = 50_000
/** Most protobuf messages (spans, key-values, values, events, links) in one request. */
const MAX_ELEMENTS = 1_000_000
// OTLP/HTTP: POSTs to these paths of the same endpoint are accepted. Only traces are decoded; the
// NodeSDK also sets up OTLP metric and log exporters from the same endpoint, which get a 200 so they
// report no export error.
const TRACES = "/v1/traces"
const IGNORED = new Set(["/v1/metrics", "/v1/logs"])

let decoder
/** The native `decodeOtlpTraces` (through ./load.js, bundler-proof); throws if the binding cannot be loaded. */
function loadDecoder() {
  if (decoder === undefined) {
    const load = require("./load")
    const result = load.loadBinding({ honourForceJs: false })
    if (result.binding === undefined) throw new Error(load.describe(result, "the receiver cannot decode OTLP", "genkit-for-maple/receiver"))
    decoder = result.binding.decodeOtlpTraces
  }
  return decoder
}

/** Why a request was refused: the HTTP status and the reason sent back as text. */
class Refused extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

/**
 * Decodes a request body into spans. The native decoder writes each resource and scope once per
 * group; every span gets a reference to its group's objects (shared, not copied).
 * @returns {object[]} the spans, as {@link DecodedSpan}
 */
function decodeOtlpTraces(body, limits) {
  let json
  try {
    json = loadDecoder()(body, limits.maxSpans, limits.maxElements)
  } catch (error) {
    const message = String(error?.message ?? error)
    throw new Refused(message.startsWith("request too large") ? 413 : 400, message)
  }
  let groups
  try {
    groups = JSON.parse(json)
  } catch (error) {
    throw new Refused(413, `request too large: its spans cannot be held as JSON (${error.message})`)
  }
  const spans = []
  for (const group of groups) {
    for (const scopeSpans of group.scopes) {
      for (const span of scopeSpans.spans) {
        span.resource = group.resource
        span.scope = scopeSpans.scope
        spans.push(span)
      }
    }
  }
  return spans
}

/**
 * Starts the receiver on 127.0.0.1 (a free port unless `port` is given).
 * @param {{ port?: number, maxBodyBytes?: number, maxDecodedBytes?: number, maxSpans?: number, maxElements?: number }} [options]
 *   bounds per request (defaults: 32 MiB body, 32 MiB after gzip, 50,000 spans, 1,000,000 protobuf messages)
 * @returns {Promise<{ url: string, port: number, spans(): object[], stats(): object, close(): Promise<void> }>}
 *   `url` is the OTLP endpoint (`http://127.0.0.1:<port>`; exporters append `/v1/traces`).
 */
function startReceiver({
  port = 0,
  maxBodyBytes = MAX_BODY_BYTES,
  maxDecodedBytes = MAX_DECODED_BYTES,
  maxSpans = MAX_SPANS,
  maxElements = MAX_ELEMENTS,
} = {}) {
  try {
    loadDecoder()
  } catch (error) {
    return Promise.reject(new Error(`the OTLP receiver needs the native binding: ${error.message}`))
  }
  const limits = { maxSpans, maxElements }
  const received = []
  const stats = { requests: 0, accepted: 0, rejected: 0, ignored: 0, gzipped: 0, errors: [] }
  // The reasons of the last rejected requests (bounded: a client sending bad requests in a loop
  // must not grow it without end).
  const MAX_ERRORS = 100

  const handle = (req, res) => {
    stats.requests++
    const reply = (status, body = Buffer.alloc(0), type = "application/x-protobuf") => {
      if (res.headersSent || res.destroyed) return
      res.writeHead(status, { "content-type": type, "content-length": body.length })
      res.end(body)
    }
    const reject = (status, why) => {
      stats.rejected++
      const reason = why.length > 500 ? `${why.slice(0, 499)}…` : why
      stats.errors.push(`${status} ${reason}`)
      if (stats.errors.length > MAX_ERRORS) stats.errors.shift()
      reply(status, Buffer.from(reason), "text/plain; charset=utf-8")
    }
    const path = (req.url ?? "").split("?")[0]
    if (path !== TRACES && !IGNORED.has(path)) return drain(req, () => reject(404, `no OTLP endpoint at ${path}`))
    if (req.method !== "POST") return drain(req, () => reject(405, "only POST is accepted"))
    const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase()
    if (type !== "application/x-protobuf") {
      return drain(req, () => reject(415, `content-type ${type || "(none)"} is not application/x-protobuf`))
    }
    const encoding = String(req.headers["content-encoding"] ?? "identity").trim().toLowerCase()
    if (encoding !== "gzip" && encoding !== "identity") {
      return drain(req, () => reject(415, `content-encoding ${encoding} is not supported`))
    }

    const chunks = []
    let size = 0
    let tooLarge = false
    req.on("data", (chunk) => {
      size += chunk.length
      if (size > maxBodyBytes) tooLarge = true
      else chunks.push(chunk)
    })
    req.on("error", () => {})
    req.on("end", () => {
      try {
        if (tooLarge) return reject(413, `request body larger than ${maxBodyBytes} bytes`)
        if (IGNORED.has(path)) {
          stats.ignored++
          return reply(200)
        }
        let body = Buffer.concat(chunks)
        chunks.length = 0
        if (encoding === "gzip") {
          try {
            body = zlib.gunzipSync(body, { maxOutputLength: maxDecodedBytes })
          } catch (error) {
            if (error?.code === "ERR_BUFFER_TOO_LARGE") {
              return reject(413, `request body larger than ${maxDecodedBytes} bytes after gzip decompression`)
            }
            return reject(400, `bad gzip body: ${String(error?.message ?? error)}`)
          }
          stats.gzipped++
        }
        const spans = decodeOtlpTraces(body, limits)
        // One push per span: a spread of 200,000 arguments overflows the stack.
        for (const span of spans) received.push(span)
        stats.accepted++
        // An empty ExportTraceServiceResponse: a protobuf message with no fields is zero bytes.
        reply(200)
      } catch (error) {
        if (error instanceof Refused) return reject(error.status, error.message)
        reject(500, `the receiver failed on this request: ${String(error?.message ?? error)}`)
      }
    })
  }

  const server = http.createServer((req, res) => {
    try {
      handle(req, res)
    } catch (error) {
      try {
        stats.rejected++
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" })
        res.end(String(error?.message ?? error))
      } catch {
        res.destroy()
      }
    }
  })
  // A malformed request line or header: answer 400 and close that connection only.
  server.on("clientError", (_error, socket) => {
    try {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
      else socket.destroy()
    } catch {
      socket.destroy()
    }
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject)
      const { port: actual } = server.address()
      resolve({
        url: `http://127.0.0.1:${actual}`,
        port: actual,
        spans: () => received.slice(),
        stats: () => ({ ...stats, errors: stats.errors.slice(), spans: received.length }),
        close: () =>
          new Promise((done) => {
            server.close(() => done())
            server.closeAllConnections?.()
          }),
      })
    })
  })
}

function drain(req, then) {
  req.resume()
  req.on("end", then)
  req.on("error", () => {})
}

// ---------------------------------------------------------------------------------------------
// The Agent Sessions view

const OP = "gen_ai.operation.name"
const GENKIT_SUBTYPES = { flow: "invoke_agent", agent: "invoke_agent", model: "chat", tool: "execute_tool" }
const MESSAGE_KEYS = ["gen_ai.system_instructions", "gen_ai.input.messages", "gen_ai.output.messages"]
const ERROR = 2 // OTLP Status.code STATUS_CODE_ERROR

const nanos = (span) => {
  try {
    return BigInt(span.startTimeUnixNano ?? 0)
  } catch {
    return 0n
  }
}
const byStart = (a, b) => (nanos(a) < nanos(b) ? -1 : nanos(a) > nanos(b) ? 1 : 0)
const attrsOf = (span) => span.attributes ?? {}

/** A JSON attribute's value, `undefined` when it is not a string or not JSON. */
function parseJson(value) {
  const parsed = parse(value)
  return parsed === FAIL ? undefined : parsed
}

/**
 * Groups spans as Agent Sessions does: a turn is a trace with at least one classified span
 * (`gen_ai.operation.name`); its session is the `gen_ai.conversation.id` of a classified span of the
 * trace (the lexically larger one if there are several), else `trace:<trace id>`.
 */
function groupSessions(spans) {
  const traces = new Map()
  for (const span of spans) {
    if (!traces.has(span.traceId)) traces.set(span.traceId, [])
    traces.get(span.traceId).push(span)
  }
  const sessions = new Map()
  for (const [traceId, traceSpans] of traces) {
    traceSpans.sort(byStart)
    const classified = traceSpans.filter((s) => attrsOf(s)[OP] !== undefined)
    if (classified.length === 0) continue
    const ids = classified
      .map((s) => attrsOf(s)["gen_ai.conversation.id"])
      .filter((id) => id !== undefined && id !== null && id !== "")
      .map(String)
      .sort()
    const conversationId = ids.length > 0 ? ids[ids.length - 1] : undefined
    const key = conversationId ?? `trace:${traceId}`
    const agent = classified.find((s) => attrsOf(s)[OP] === "invoke_agent")
    const turn = {
      traceId,
      conversationId,
      agent,
      start: nanos(traceSpans[0]),
      chats: classified.filter((s) => attrsOf(s)[OP] === "chat"),
      tools: classified.filter((s) => attrsOf(s)[OP] === "execute_tool"),
      timeline: classified.filter((s) => attrsOf(s)[OP] !== "invoke_agent"),
    }
    if (!sessions.has(key)) sessions.set(key, { id: key, conversationId, turns: [] })
    sessions.get(key).turns.push(turn)
  }
  const list = [...sessions.values()]
  for (const session of list) session.turns.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
  list.sort((a, b) => (a.turns[0].start < b.turns[0].start ? -1 : a.turns[0].start > b.turns[0].start ? 1 : 0))
  return list
}

const oneLine = (text, max = 160) => {
  const s = String(text).replace(/\s+/g, " ").trim()
  return s.length > max ? `${s.slice(0, max - 1)}…` : s
}
const compact = (value) => oneLine(typeof value === "string" ? value : JSON.stringify(value))

function partText(part) {
  switch (part?.type) {
    case "text":
      return oneLine(part.content, 240)
    case "reasoning":
      return `(thinking) ${oneLine(part.content)}`
    case "tool_call":
      return `→ tool call ${part.name}(${compact(part.arguments ?? {})})${part.id ? ` [${part.id}]` : ""}`
    case "tool_call_response":
      return `← tool result ${compact(part.response)}${part.id ? ` [${part.id}]` : ""}`
    default:
      return `(${part?.type ?? "part"})`
  }
}

const messageKey = (m) => JSON.stringify({ role: m?.role, parts: m?.parts })
const ROLE_WIDTH = 10

/** The transcript lines of one turn: new system instructions, then every message not shown yet. */
function transcript(turn, shown) {
  const lines = []
  for (const chat of turn.chats) {
    const a = attrsOf(chat)
    const system = parseJson(a["gen_ai.system_instructions"])
    if (Array.isArray(system)) {
      const text = system.map(partText).join(" ")
      if (shown.system !== text) {
        // An extended prompt (the app added a line) shows only what was added.
        const added = shown.system !== undefined && text.startsWith(shown.system) ? `+ ${text.slice(shown.system.length).trim()}` : text
        lines.push(`${"system".padEnd(ROLE_WIDTH)} ${added}`)
        shown.system = text
      }
    }
    for (const key of ["gen_ai.input.messages", "gen_ai.output.messages"]) {
      const messages = parseJson(a[key])
      if (!Array.isArray(messages)) continue
      for (const m of messages) {
        const k = messageKey(m)
        if (shown.messages.has(k)) continue
        shown.messages.add(k)
        const parts = Array.isArray(m?.parts) ? m.parts : []
        const role = String(m?.role ?? "?").padEnd(ROLE_WIDTH)
        if (parts.length === 0) lines.push(`${role} (no content)`)
        parts.forEach((p, i) => lines.push(`${i === 0 ? role : " ".repeat(ROLE_WIDTH)} ${partText(p)}`))
      }
    }
  }
  return lines
}

function spanLine(span) {
  const a = attrsOf(span)
  const failed = span.status?.code === ERROR
  const errorType = a["error.type"] !== undefined ? ` (${a["error.type"]})` : ""
  if (a[OP] === "chat") {
    const tokens =
      a["gen_ai.usage.input_tokens"] !== undefined || a["gen_ai.usage.output_tokens"] !== undefined
        ? `tokens in ${a["gen_ai.usage.input_tokens"] ?? "?"} / out ${a["gen_ai.usage.output_tokens"] ?? "?"}${tokenDetails(a)}`
        : "no token usage"
    const reasons = Array.isArray(a["gen_ai.response.finish_reasons"]) ? `  finish ${a["gen_ai.response.finish_reasons"].join(",")}` : ""
    const cost = typeof a[COST] === "number" ? `  cost ${usd(a[COST])}` : ""
    return `chat ${a["gen_ai.provider.name"] ?? "?"} ${a["gen_ai.request.model"] ?? "?"}  ${tokens}${cost}${reasons}${failed ? `  FAILED${errorType}: ${span.status.message}` : ""}`
  }
  if (a[OP] === "execute_tool") {
    const args = `(${compact(a["gen_ai.tool.call.arguments"] ?? "")})`
    const id = a["gen_ai.tool.call.id"] !== undefined ? ` [${a["gen_ai.tool.call.id"]}]` : ""
    const outcome = failed
      ? `FAILED${errorType}: ${oneLine(span.status.message || "error")}`
      : a["gen_ai.tool.call.result"] !== undefined
        ? `→ ${compact(a["gen_ai.tool.call.result"])}`
        : "→ (no result)"
    return `execute_tool ${a["gen_ai.tool.name"] ?? span.name}${args}${id} ${outcome}`
  }
  return `${a[OP]} ${span.name}`
}

const COST = "gen_ai.usage.cost"
const DETAILS = [
  ["gen_ai.usage.cache_read.input_tokens", "cache read"],
  ["gen_ai.usage.cache_write.input_tokens", "cache write"],
  ["gen_ai.usage.reasoning.output_tokens", "reasoning"],
]

/** ` (cache read 12, reasoning 30)` for the token details a chat span carries, else "". */
function tokenDetails(a) {
  const parts = DETAILS.filter(([k]) => typeof a[k] === "number").map(([k, name]) => `${name} ${a[k]}`)
  return parts.length > 0 ? ` (${parts.join(", ")})` : ""
}

/** A cost in USD, to the millionth of a dollar. */
const usd = (v) => `$${v.toFixed(6)}`

/** Sums the token usage and cost of a list of chat spans (`cost` undefined when none is priced). */
function tokens(chats) {
  let input = 0
  let output = 0
  let cost
  for (const c of chats) {
    const a = attrsOf(c)
    if (typeof a["gen_ai.usage.input_tokens"] === "number") input += a["gen_ai.usage.input_tokens"]
    if (typeof a["gen_ai.usage.output_tokens"] === "number") output += a["gen_ai.usage.output_tokens"]
    if (typeof a[COST] === "number") cost = (cost ?? 0) + a[COST]
  }
  return { input, output, cost }
}

/**
 * Renders decoded spans (as `decodeOtlpTraces` returns them) the way Maple's Agent Sessions would
 * show them: one block per session (conversation id), one turn per trace, the transcript
 * (system instructions, user, assistant, tool calls and results), then the turn's chat and
 * execute_tool spans in order with provider, model, tokens, arguments and results or failures.
 * @param {object[]} spans
 * @returns {string}
 */
function renderSessions(spans) {
  const sessions = groupSessions(spans)
  if (sessions.length === 0) return "No agent sessions: no span carries gen_ai.operation.name.\n"
  const out = []
  for (const session of sessions) {
    const chats = session.turns.flatMap((t) => t.chats)
    const total = tokens(chats)
    const agents = [...new Set(session.turns.map((t) => attrsOf(t.agent ?? {})["gen_ai.agent.name"]).filter(Boolean))]
    out.push(
      `Session ${session.id}  (agent ${agents.join(", ") || "?"}; ${session.turns.length} turn${session.turns.length === 1 ? "" : "s"}; ` +
        `${chats.length} model call${chats.length === 1 ? "" : "s"}; tokens in ${total.input} / out ${total.output}; ` +
        `${total.cost === undefined ? "unpriced" : `cost ${usd(total.cost)}`})`,
    )
    const shown = { system: undefined, messages: new Set() }
    session.turns.forEach((turn, i) => {
      const agent = turn.agent ? `invoke_agent ${attrsOf(turn.agent)["gen_ai.agent.name"] ?? turn.agent.name}` : "no invoke_agent span"
      const failed = turn.agent?.status?.code === ERROR ? `  FAILED: ${turn.agent.status.message}` : ""
      out.push(`  Turn ${i + 1}  ${agent}  trace ${turn.traceId}${failed}`)
      for (const line of transcript(turn, shown)) out.push(`    ${line}`)
      out.push("    spans:")
      for (const span of turn.timeline) out.push(`      ${spanLine(span)}`)
    })
    out.push("")
  }
  return out.join("\n")
}

/**
 * Seed 003's "Check without Maple access" over decoded spans.
 * @param {object[]} spans
 * @returns {{ ok: boolean, checks: { name: string, ok: boolean, detail: string }[] }}
 */
function checkSessions(spans) {
  const checks = []
  const add = (name, failures, okDetail) =>
    checks.push({
      name,
      ok: failures.length === 0,
      detail: failures.length === 0 ? okDetail : `${failures.length} failing: ${failures.slice(0, 5).join("; ")}${failures.length > 5 ? "; …" : ""}`,
    })
  const label = (s) => `"${s.name}" ${String(s.spanId ?? "").slice(0, 16)}`

  const turns = groupSessions(spans).flatMap((s) => s.turns)
  const agentTurns = turns.filter((t) => t.agent !== undefined)
  add(
    "spans arrived, with agent turns",
    spans.length === 0 ? ["no spans"] : agentTurns.length === 0 ? ["no invoke_agent span"] : [],
    `${spans.length} spans, ${agentTurns.length} turns`,
  )

  const genkit = spans.filter((s) => Object.hasOwn(GENKIT_SUBTYPES, attrsOf(s)["genkit:metadata:subtype"]))
  add(
    "every Genkit flow/model/tool span carries gen_ai.operation.name",
    genkit
      .filter((s) => attrsOf(s)[OP] !== GENKIT_SUBTYPES[attrsOf(s)["genkit:metadata:subtype"]])
      .map((s) => `${label(s)} (${attrsOf(s)["genkit:metadata:subtype"]}) has ${attrsOf(s)[OP] ?? "none"}`),
    `${genkit.length} Genkit spans`,
  )

  const messageFailures = []
  let messageCount = 0
  for (const s of spans) {
    for (const key of MESSAGE_KEYS) {
      const value = attrsOf(s)[key]
      if (value === undefined) continue
      messageCount++
      if (!Array.isArray(parseJson(value))) messageFailures.push(`${label(s)} ${key} is not a JSON array`)
    }
  }
  add("every messages attribute parses as JSON", messageFailures, `${messageCount} attributes`)

  add(
    "every turn has a conversation id",
    turns.filter((t) => t.conversationId === undefined).map((t) => `trace ${t.traceId}`),
    `${turns.length} turns`,
  )

  add(
    "token usage only on chat spans",
    spans
      .filter((s) => Object.keys(attrsOf(s)).some((k) => k.startsWith("gen_ai.usage.")) && attrsOf(s)[OP] !== "chat")
      .map((s) => `${label(s)} (${attrsOf(s)[OP] ?? "unclassified"})`),
    `${spans.filter((s) => attrsOf(s)["gen_ai.usage.input_tokens"] !== undefined).length} chat spans with usage`,
  )

  // Seed 003 step 6/9: failed spans carry error.type, successful ones do not.
  const classified = spans.filter((s) => attrsOf(s)[OP] !== undefined)
  add(
    "failed spans carry error.type, successful ones none",
    classified
      .filter((s) => (s.status?.code === ERROR) !== (typeof attrsOf(s)["error.type"] === "string" && attrsOf(s)["error.type"] !== ""))
      .map((s) => `${label(s)} status ${s.status?.code ?? 0}, error.type ${attrsOf(s)["error.type"] ?? "none"}`),
    `${classified.filter((s) => s.status?.code === ERROR).length} failed spans with error.type`,
  )

  // Seed 003 step 9: tool spans carry call ids matching the model's tool calls (in the same trace).
  const callIds = new Map()
  for (const s of spans) {
    for (const m of asArray(parseJson(attrsOf(s)["gen_ai.output.messages"]))) {
      for (const p of asArray(m?.parts)) {
        if (p?.type === "tool_call" && p.id !== undefined) {
          if (!callIds.has(s.traceId)) callIds.set(s.traceId, new Set())
          callIds.get(s.traceId).add(p.id)
        }
      }
    }
  }
  const toolSpans = spans.filter((s) => attrsOf(s)[OP] === "execute_tool")
  add(
    "tool spans carry the model's tool call ids",
    toolSpans
      .filter((s) => callIds.has(s.traceId) && !callIds.get(s.traceId).has(attrsOf(s)["gen_ai.tool.call.id"]))
      .map((s) => `${label(s)} gen_ai.tool.call.id ${attrsOf(s)["gen_ai.tool.call.id"] ?? "missing"}`),
    `${toolSpans.filter((s) => attrsOf(s)["gen_ai.tool.call.id"] !== undefined).length} of ${toolSpans.length} tool spans with ids`,
  )

  // Seed 003 step 7: integer token details within their totals; cost a non-negative number.
  const chatSpans = spans.filter((s) => attrsOf(s)[OP] === "chat")
  add(
    "token details and cost are consistent",
    chatSpans.flatMap((s) => {
      const a = attrsOf(s)
      const bad = []
      for (const [k] of DETAILS) if (a[k] !== undefined && !Number.isInteger(a[k])) bad.push(`${k} ${a[k]}`)
      const read = a["gen_ai.usage.cache_read.input_tokens"] ?? 0
      const write = a["gen_ai.usage.cache_write.input_tokens"] ?? 0
      if (a["gen_ai.usage.input_tokens"] !== undefined && read + write > a["gen_ai.usage.input_tokens"]) bad.push("cache tokens above input_tokens")
      if ((a["gen_ai.usage.reasoning.output_tokens"] ?? 0) > (a["gen_ai.usage.output_tokens"] ?? Infinity)) bad.push("reasoning above output_tokens")
      if (a[COST] !== undefined && !(typeof a[COST] === "number" && a[COST] >= 0)) bad.push(`cost ${a[COST]}`)
      return bad.map((b) => `${label(s)} ${b}`)
    }),
    `${chatSpans.filter((s) => typeof attrsOf(s)[COST] === "number").length} of ${chatSpans.length} chat spans priced`,
  )

  return { ok: checks.every((c) => c.ok), checks }
}

const asArray = (v) => (Array.isArray(v) ? v : [])

/** The checklist as text: one `[ok]`/`[FAIL]` line per check, then the verdict. */
function renderChecks({ ok, checks }) {
  const lines = checks.map((c) => `  [${c.ok ? "ok" : "FAIL"}] ${c.name}: ${c.detail}`)
  lines.push(ok ? "Verdict: every check passed." : `Verdict: ${checks.filter((c) => !c.ok).length} check(s) failed.`)
  return lines.join("\n")
}

module.exports = { startReceiver, renderSessions, checkSessions, renderChecks, groupSessions }
