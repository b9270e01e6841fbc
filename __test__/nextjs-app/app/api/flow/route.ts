// A route handler running a Genkit flow with a model call (a model defined in the app: the spans
// are the real Genkit runtime's).
import { genkit, z } from "genkit"

const ai = genkit({})
const echo = ai.defineModel({ name: "test/echo" }, async (request) => ({
  message: { role: "model", content: [{ text: `echo: ${request.messages.at(-1)?.content[0]?.text ?? ""}` }] },
  finishReason: "stop",
  usage: { inputTokens: 3, outputTokens: 5 },
}))
const nextFlow = ai.defineFlow({ name: "nextFlow", inputSchema: z.string(), outputSchema: z.string() }, async (input) => {
  const { text } = await ai.generate({ model: echo, prompt: input })
  return text
})

export const dynamic = "force-dynamic"

export async function GET() {
  const text = await nextFlow("hello from next")
  const processor = (globalThis as { __genkitForMaple?: { isNative: boolean } }).__genkitForMaple
  return Response.json({ text, native: processor?.isNative ?? null })
}
