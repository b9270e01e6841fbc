"use strict"
// The behaviour of seed 000's pure-TypeScript GenkitForMaple.onEnd, re-expressed for the tests: it
// throws exactly where the reference throws (JSON.parse errors, `.filter`/`.map` of non-arrays,
// destructuring null). It is the oracle for "a drop-in for the reference"; the package itself
// never runs it.

function part(p) {
  const { text, reasoning, toolRequest: req, toolResponse: res } = p
  if (text !== undefined) return { type: "text", content: text }
  if (reasoning !== undefined) return { type: "reasoning", content: reasoning }
  if (req) return { type: "tool_call", id: req.ref, name: req.name, arguments: req.input }
  if (res) return { type: "tool_call_response", id: res.ref, response: res.output }
}
const parts = (content) => content.map(part).filter((x) => x !== undefined)
const messages = (list) => list.map((m) => ({ role: m.role === "model" ? "assistant" : m.role, parts: parts(m.content) }))

function referenceOnEnd(attrs) {
  const json = (key) => (typeof attrs[key] === "string" ? JSON.parse(attrs[key]) : undefined)
  const name = String(attrs["genkit:name"])
  const subtype = attrs["genkit:metadata:subtype"]
  if (subtype === "flow" || subtype === "agent") {
    attrs["gen_ai.operation.name"] = "invoke_agent"
    attrs["gen_ai.agent.name"] = name
    const id = attrs["genkit:metadata:conversationId"] ?? attrs["genkit:metadata:agent:sessionId"]
    if (id !== undefined) attrs["gen_ai.conversation.id"] = id
  } else if (subtype === "model") {
    const input = json("genkit:input")
    const output = json("genkit:output")
    const [provider, ...rest] = name.split("/")
    const list = input?.messages ?? []
    const system = list.filter((m) => m.role === "system").flatMap((m) => parts(m.content))
    attrs["gen_ai.operation.name"] = "chat"
    attrs["gen_ai.provider.name"] = provider
    attrs["gen_ai.request.model"] = rest.join("/") || name
    attrs["gen_ai.input.messages"] = JSON.stringify(messages(list.filter((m) => m.role !== "system")))
    if (system.length > 0) attrs["gen_ai.system_instructions"] = JSON.stringify(system)
    if (output?.message) {
      attrs["gen_ai.output.messages"] = JSON.stringify(
        messages([output.message]).map((m) => ({ ...m, finish_reason: output.finishReason })),
      )
    }
    if (output?.finishReason) attrs["gen_ai.response.finish_reasons"] = [output.finishReason]
    if (output?.usage?.inputTokens !== undefined) attrs["gen_ai.usage.input_tokens"] = output.usage.inputTokens
    if (output?.usage?.outputTokens !== undefined) attrs["gen_ai.usage.output_tokens"] = output.usage.outputTokens
  } else if (subtype === "tool") {
    attrs["gen_ai.operation.name"] = "execute_tool"
    attrs["gen_ai.tool.name"] = name
    attrs["gen_ai.tool.call.arguments"] = attrs["genkit:input"] ?? "{}"
    const result = json("genkit:output")
    if (result !== undefined) attrs["gen_ai.tool.call.result"] = typeof result === "string" ? result : JSON.stringify(result)
  }
}

module.exports = { referenceOnEnd }
