// The local stand-in for Gemini 2.5 Flash: a deterministic model with no network. Like a real model
// in a tool loop it first asks for a tool (picked from the user's words), then answers from the tool
// results, and it reports token usage. `respond` is a plain function so it can be read and tested
// on its own; app.ts registers it with `ai.defineModel` under the name `googleai/gemini-2.5-flash`.
import type { GenerateRequest, GenerateResponseData, MessageData, Part } from "genkit"

export const MODEL_NAME = "googleai/gemini-2.5-flash"

/** The flow adds this line to the system prompt when a tool failed, followed by the error message. */
export const TOOL_FAILED_NOTE = "A tool call failed with this error:"

/** Tokens the local model reports for a text: one per 4 characters, rounded up. */
export const countTokens = (text: string): number => Math.ceil(text.length / 4)

/** Every usage the local model reported, in call order (tests compare spans against it). */
export const reportedUsage: {
  inputTokens: number
  outputTokens: number
  thoughtsTokens?: number
  cachedContentTokens?: number
}[] = []

const partText = (part: Part): string =>
  part.text ??
  (part.toolRequest ? JSON.stringify(part.toolRequest.input ?? {}) : "") +
    (part.toolResponse ? JSON.stringify(part.toolResponse.output ?? null) : "")

const messageText = (message: MessageData): string => message.content.map(partText).join("")

const textOf = (message: MessageData | undefined): string =>
  (message?.content ?? [])
    .map((p) => p.text ?? "")
    .join("")
    .trim()

/** The tool call the model asks for, chosen from the user's words, or none. */
function chooseTool(text: string, tools: Set<string>): { name: string; input: Record<string, unknown> } | undefined {
  const orderId = /\b([A-Z]-\d{4})\b/.exec(text)?.[1]
  if (/polic(y|ies)/i.test(text) && tools.has("lookupPolicy")) {
    return { name: "lookupPolicy", input: { topic: /ship/i.test(text) ? "shipping" : "returns" } }
  }
  if (/refund/i.test(text) && orderId && tools.has("issueRefund")) {
    return { name: "issueRefund", input: { orderId, reason: /damaged/i.test(text) ? "damaged" : "other" } }
  }
  if (orderId && tools.has("getOrderStatus")) return { name: "getOrderStatus", input: { orderId } }
  return undefined
}

/** The answer to a tool's result. */
function fromToolResult(name: string, output: unknown): string {
  if (name === "getOrderStatus" && output && typeof output === "object") {
    const o = output as { orderId?: string; status?: string; carrier?: string; eta?: string }
    return `Order ${o.orderId} is ${o.status} with ${o.carrier}; expected delivery ${o.eta}.`
  }
  if (name === "lookupPolicy" && typeof output === "string") return `Here is our policy: ${output}`
  return `The ${name} tool returned ${JSON.stringify(output)}.`
}

/** The local model: asks for a tool first, answers from its result, reports usage. */
export function respond(request: GenerateRequest): GenerateResponseData {
  const messages = request.messages
  const last = messages.at(-1)
  const system = messages.filter((m) => m.role === "system").map(textOf).join("\n")
  const tools = new Set((request.tools ?? []).map((t) => t.name))
  let content: Part[]

  if (last?.role === "tool") {
    content = [
      {
        text: last.content
          .filter((p) => p.toolResponse)
          .map((p) => fromToolResult(p.toolResponse!.name, p.toolResponse!.output))
          .join(" "),
      },
    ]
  } else if (system.includes(TOOL_FAILED_NOTE)) {
    const reason = system.slice(system.indexOf(TOOL_FAILED_NOTE) + TOOL_FAILED_NOTE.length).trim()
    content = [
      {
        text: `I'm sorry, I couldn't do that right now (${reason}). I've passed your request to a human agent, who will follow up by email.`,
      },
    ]
  } else {
    const text = textOf(last)
    const call = chooseTool(text, tools)
    content = call
      ? [
          { text: `Let me check that with ${call.name}.` },
          { toolRequest: { name: call.name, ref: `call_${messages.length}`, input: call.input } },
        ]
      : [{ text: "Happy to help! Could you tell me your order number (like A-1001)?" }]
  }

  const inputTokens = countTokens(messages.map(messageText).join(""))
  const outputTokens = countTokens(content.map(partText).join(""))
  // Like Gemini 2.5 Flash, it "thinks" before choosing a tool (thoughtsTokens, not counted in
  // outputTokens) and reads the prompt prefix it saw on the previous call from the context cache
  // (cachedContentTokens, counted in inputTokens).
  const chose = content.some((p) => p.toolRequest)
  const thoughtsTokens = chose ? countTokens(`Which tool answers "${textOf(last)}"?`) : undefined
  const cachedContentTokens = messages.length > 2 ? countTokens(system) : undefined
  const usage = { inputTokens, outputTokens, thoughtsTokens, cachedContentTokens }
  reportedUsage.push(usage)
  return {
    message: { role: "model", content },
    finishReason: "stop",
    usage: { ...usage, totalTokens: inputTokens + outputTokens + (thoughtsTokens ?? 0) },
  }
}
