// The support agent: a Genkit app with three tools and one flow, `supportChat`. Importing this
// module starts no OpenTelemetry SDK (instrumentation.ts does, in main.ts), so tests can run the
// flow with their own tracer provider.
//
// The model is `googleai/gemini-2.5-flash`: the real one from @genkit-ai/google-genai when
// GEMINI_API_KEY or GOOGLE_API_KEY is set, else a local deterministic stand-in (no network).
import { googleAI } from "@genkit-ai/google-genai"
import { genkit, z, type MessageData } from "genkit"
import { setCustomMetadataAttribute } from "genkit/tracing"
import { MODEL_NAME, TOOL_FAILED_NOTE, respond } from "./local-model.js"

export { MODEL_NAME, TOOL_FAILED_NOTE, countTokens, reportedUsage } from "./local-model.js"

export const usesGemini = Boolean(process.env.GEMINI_API_KEY || process.env.GOOGLE_API_KEY)

export const ai = genkit({ plugins: usesGemini ? [googleAI()] : [], model: MODEL_NAME })

if (!usesGemini) {
  ai.defineModel(
    {
      name: MODEL_NAME,
      label: "Gemini 2.5 Flash (local deterministic stand-in)",
      supports: { multiturn: true, tools: true, systemRole: true },
    },
    async (request) => respond(request),
  )
}

export const SYSTEM_PROMPT =
  "You are the support agent of Paper Lantern Books. Be brief and friendly. Use the tools to look up orders and policies and to issue refunds."

const ORDERS: Record<string, { status: string; carrier: string; eta: string }> = {
  "A-1001": { status: "shipped", carrier: "DHL", eta: "2025-06-03" },
  "B-2002": { status: "delivered", carrier: "UPS", eta: "2025-05-28" },
}

const POLICIES = {
  returns: "Books can be returned within 30 days. Damaged books are refunded in full, return shipping is free.",
  shipping: "Orders ship within 2 working days; delivery takes 3 to 5 working days.",
}

/** Returns an object. */
export const getOrderStatus = ai.defineTool(
  {
    name: "getOrderStatus",
    description: "Shipping status of an order",
    inputSchema: z.object({ orderId: z.string() }),
    outputSchema: z.object({ orderId: z.string(), status: z.string(), carrier: z.string(), eta: z.string() }),
  },
  async ({ orderId }) => ({ orderId, ...(ORDERS[orderId] ?? { status: "unknown", carrier: "none", eta: "unknown" }) }),
)

/** Returns a string. */
export const lookupPolicy = ai.defineTool(
  {
    name: "lookupPolicy",
    description: "The shop's policy on a topic",
    inputSchema: z.object({ topic: z.enum(["returns", "shipping"]) }),
    outputSchema: z.string(),
  },
  async ({ topic }) => POLICIES[topic],
)

/** Always fails: the payments service is down. */
export const issueRefund = ai.defineTool(
  {
    name: "issueRefund",
    description: "Refund an order in full",
    inputSchema: z.object({ orderId: z.string(), reason: z.string() }),
    outputSchema: z.object({ refundId: z.string() }),
  },
  async ({ orderId }) => {
    throw new Error(`payments service unavailable (503): refund for ${orderId} not issued`)
  },
)

// One history per conversation (a database in a real backend). System messages are not stored:
// every turn passes the system prompt again.
const histories = new Map<string, MessageData[]>()

export const supportChat = ai.defineFlow(
  {
    name: "supportChat",
    inputSchema: z.object({ chatId: z.string(), text: z.string() }),
    outputSchema: z.string(),
  },
  async ({ chatId, text }) => {
    setCustomMetadataAttribute("conversationId", chatId)

    const messages = histories.get(chatId) ?? []
    let response
    try {
      response = await ai.generate({
        system: SYSTEM_PROMPT,
        messages,
        prompt: text,
        tools: [getOrderStatus, lookupPolicy, issueRefund],
      })
    } catch (error) {
      // A failing tool aborts Genkit's tool loop. Answer anyway, telling the model what failed,
      // without tools; the failed tool span stays in the trace with its error status.
      const reason = error instanceof Error ? error.message : String(error)
      response = await ai.generate({ system: `${SYSTEM_PROMPT}\n${TOOL_FAILED_NOTE} ${reason}`, messages, prompt: text })
    }
    histories.set(
      chatId,
      response.messages.filter((m) => m.role !== "system"),
    )
    return response.text
  },
)
