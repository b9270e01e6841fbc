"use strict"
// The pure-JS mapping of genkit-for-maple: the same rules as the native core (core/src/mapping.rs),
// written in JavaScript. It is the fallback when the native binary cannot be loaded, the path for
// the rare values UTF-8 cannot carry (lone surrogates), the baseline of the benchmark and the
// differential oracle of the tests. Like the native path it never throws: where seed 000's
// reference processor would throw, the attributes that depend on the failing value are omitted and
// a problem flag is returned.
//
// Rules: seed 000 ("Add the span processor"); `candidates` answers: issue 5.

const P = Object.freeze({
  INPUT_NOT_JSON: 1,
  INPUT_SHAPE: 1 << 1,
  OUTPUT_NOT_JSON: 1 << 2,
  OUTPUT_SHAPE: 1 << 3,
  TOOL_OUTPUT_NOT_JSON: 1 << 4,
  NEEDS_JS: 1 << 5,
  ATTRIBUTE_TYPE: 1 << 6,
  PANIC: 1 << 7,
  OUT_OF_MEMORY: 1 << 8,
  WRITE_FAILED: 1 << 9,
  CONTENT_WITHHELD: 1 << 10,
  TOO_LARGE: 1 << 11,
})

/** What {@link read} returns when the attribute's getter (or Proxy trap) threw. */
const THREW = Symbol("getter threw")

/**
 * `attrs["genkit:input"]`, read once; `THREW` when a getter or Proxy trap of a user-made attribute
 * map throws (then only the attributes derived from it are omitted). The key is written out in
 * each reader: a named load, where one reader taking the key as a parameter made a keyed load
 * that stays megamorphic (`KeyedLoadIC_Megamorphic`, 3% of a tool span's time; BENCHMARKS.md
 * "Stop 44").
 */
function readInput(attrs) {
  try {
    return attrs["genkit:input"]
  } catch {
    return THREW
  }
}

/** `attrs["genkit:output"]`, read once, as `readInput` reads `genkit:input`. */
function readOutput(attrs) {
  try {
    return attrs["genkit:output"]
  } catch {
    return THREW
  }
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v)

/** Genkit part to GenAI part (seed 000 `toPart`); `undefined` for dropped parts. */
function toPart(part) {
  const { text, reasoning, toolRequest, toolResponse } = part
  if (text !== undefined) return { type: "text", content: text }
  if (reasoning !== undefined) return { type: "reasoning", content: reasoning }
  if (toolRequest) {
    return { type: "tool_call", id: toolRequest.ref, name: toolRequest.name, arguments: toolRequest.input }
  }
  if (toolResponse) return { type: "tool_call_response", id: toolResponse.ref, response: toolResponse.output }
  return undefined
}

function toParts(content) {
  const parts = []
  for (const part of content) {
    const converted = toPart(part)
    if (converted !== undefined) parts.push(converted)
  }
  return parts
}

/** A message the reference can convert: an object whose content is an array without null parts. */
const convertible = (m) => isObject(m) && Array.isArray(m.content) && !m.content.includes(null)

const toMessage = (m, withReason, finishReason) =>
  withReason
    ? { role: m.role === "model" ? "assistant" : m.role, parts: toParts(m.content), finish_reason: finishReason }
    : { role: m.role === "model" ? "assistant" : m.role, parts: toParts(m.content) }

/** JSON.stringify, or `undefined` when V8 cannot (nesting deeper than its stack allows). */
function stringify(value) {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/** Parses a string attribute; `undefined` for non-strings, `FAIL` when it is not JSON. */
const FAIL = Symbol("not JSON")
function parse(value) {
  if (typeof value !== "string") return undefined
  try {
    return JSON.parse(value)
  } catch {
    return FAIL
  }
}

/**
 * Writes the attributes `genkit:input` / `genkit:output` give a model span. Returns problem flags.
 * `rawInput` / `rawOutput`: the two attribute values when the caller has read them already (the
 * processor reads each once, so a getter is never called twice; `THREW` when it threw); read here
 * when not passed.
 * @param {Record<string, unknown>} attrs
 */
function mapModelAttributes(attrs, rawInput, rawOutput) {
  if (arguments.length < 3) {
    rawInput = readInput(attrs)
    rawOutput = readOutput(attrs)
  }
  let problems = 0
  const input = rawInput === THREW ? THREW : parse(rawInput)
  if (input === THREW) {
    problems |= P.ATTRIBUTE_TYPE | P.INPUT_NOT_JSON
  } else if (input === FAIL) {
    problems |= P.INPUT_NOT_JSON
  } else {
    const messages = input?.messages ?? []
    if (!Array.isArray(messages) || !messages.every(convertible)) {
      problems |= P.INPUT_SHAPE
    } else {
      const system = []
      const rest = []
      for (const m of messages) {
        if (m.role === "system") system.push(...toParts(m.content))
        else rest.push(toMessage(m, false))
      }
      const inputMessages = stringify(rest)
      const systemInstructions = system.length > 0 ? stringify(system) : null
      if (inputMessages === undefined || systemInstructions === undefined) {
        problems |= P.INPUT_SHAPE
      } else {
        attrs["gen_ai.input.messages"] = inputMessages
        if (systemInstructions !== null) attrs["gen_ai.system_instructions"] = systemInstructions
      }
    }
  }

  if (rawOutput === THREW) return problems | P.ATTRIBUTE_TYPE | P.OUTPUT_NOT_JSON
  const output = parse(rawOutput)
  if (output === FAIL) return problems | P.OUTPUT_NOT_JSON
  if (!isObject(output)) return problems
  let reasons
  if (output.message) {
    const outputMessages = convertible(output.message)
      ? stringify([toMessage(output.message, true, output.finishReason)])
      : undefined
    if (outputMessages !== undefined) {
      attrs["gen_ai.output.messages"] = outputMessages
    } else {
      problems |= P.OUTPUT_SHAPE
    }
  } else if (Array.isArray(output.candidates)) {
    const out = []
    const candidateReasons = []
    let bad = false
    for (const candidate of output.candidates) {
      if (!isObject(candidate) || !candidate.message) continue
      if (!convertible(candidate.message)) {
        bad = true
        continue
      }
      out.push(toMessage(candidate.message, true, candidate.finishReason))
      if (candidate.finishReason) candidateReasons.push(candidate.finishReason)
    }
    const outputMessages = bad || out.length === 0 ? undefined : stringify(out)
    if (bad || (out.length > 0 && outputMessages === undefined)) problems |= P.OUTPUT_SHAPE
    else if (out.length > 0) {
      attrs["gen_ai.output.messages"] = outputMessages
      if (candidateReasons.length > 0) reasons = candidateReasons
    }
  }
  if (reasons === undefined && output.finishReason) reasons = [output.finishReason]
  if (reasons !== undefined) attrs["gen_ai.response.finish_reasons"] = reasons
  const usage = isObject(output.usage) ? output.usage : undefined
  if (usage?.inputTokens !== undefined) attrs["gen_ai.usage.input_tokens"] = usage.inputTokens
  if (usage?.outputTokens !== undefined) attrs["gen_ai.usage.output_tokens"] = usage.outputTokens
  return problems
}

/**
 * Writes `gen_ai.tool.call.result` from a tool span's `genkit:output`. Returns problem flags.
 * `rawOutput`: the attribute's value when the caller has read it already (`THREW` when its getter
 * threw); read here when not passed.
 * @param {Record<string, unknown>} attrs
 */
function mapToolResult(attrs, rawOutput) {
  if (arguments.length < 2) rawOutput = readOutput(attrs)
  if (rawOutput === THREW) return P.ATTRIBUTE_TYPE | P.TOOL_OUTPUT_NOT_JSON
  const result = parse(rawOutput)
  if (result === FAIL) return P.TOOL_OUTPUT_NOT_JSON
  if (result === undefined) return 0
  if (typeof result === "string") {
    attrs["gen_ai.tool.call.result"] = result
    return 0
  }
  const text = stringify(result)
  // Nesting too deep for V8's JSON.stringify: leave the result out.
  if (text === undefined) return P.TOOL_OUTPUT_NOT_JSON
  attrs["gen_ai.tool.call.result"] = text
  return 0
}

/** Sets the attributes of a flow or agent span (seed 000): no JSON involved. */
function mapAgent(attrs) {
  attrs["gen_ai.operation.name"] = "invoke_agent"
  const name = nameOf(attrs)
  if (name !== undefined) attrs["gen_ai.agent.name"] = name
  // Set in the flow with setCustomMetadataAttribute, or by Genkit for defineAgent() chats.
  const conversationId = attrs["genkit:metadata:conversationId"] ?? attrs["genkit:metadata:agent:sessionId"]
  if (conversationId !== undefined) attrs["gen_ai.conversation.id"] = conversationId
  return name === undefined ? P.ATTRIBUTE_TYPE : 0
}

/**
 * `String(attrs["genkit:name"])` as seed 000 computes it, or `undefined` when the value cannot be
 * converted (an object whose toString throws): the reference throws there; here only the
 * attributes that copy the name are omitted.
 */
function nameOf(attrs) {
  try {
    const name = attrs["genkit:name"]
    // A string as it is (what `String` gives it) without the call of the `String` builtin.
    return typeof name === "string" ? name : String(name)
  } catch {
    return undefined
  }
}

/** Sets the model span attributes that copy `genkit:name` (seed 000). */
function mapModelName(attrs) {
  attrs["gen_ai.operation.name"] = "chat"
  const name = nameOf(attrs)
  if (name === undefined) return P.ATTRIBUTE_TYPE
  const slash = name.indexOf("/")
  attrs["gen_ai.provider.name"] = slash < 0 ? name : name.slice(0, slash)
  // `model.join("/") || name`: an empty remainder ("googleai/") falls back to the whole name.
  attrs["gen_ai.request.model"] = (slash < 0 ? "" : name.slice(slash + 1)) || name
  return 0
}

/** Sets the tool span attributes that copy attribute values (seed 000). */
function mapToolName(attrs) {
  const flags = mapToolOperation(attrs)
  return flags | mapToolArguments(attrs, readInput(attrs))
}

/** Sets `gen_ai.operation.name` and `gen_ai.tool.name` of a tool span (no content). */
function mapToolOperation(attrs) {
  attrs["gen_ai.operation.name"] = "execute_tool"
  const name = nameOf(attrs)
  if (name !== undefined) attrs["gen_ai.tool.name"] = name
  return name === undefined ? P.ATTRIBUTE_TYPE : 0
}

/**
 * Sets `gen_ai.tool.call.arguments` from `input`, the value of `genkit:input` as read once
 * (`THREW` when its getter threw: not written). Seed 000: the value as it is, `"{}"` when absent.
 */
function mapToolArguments(attrs, input) {
  if (input === THREW) return P.ATTRIBUTE_TYPE
  attrs["gen_ai.tool.call.arguments"] = input ?? "{}"
  return 0
}

/**
 * The whole pure-JS mapping of one span's attributes, in place. Returns problem flags.
 * @param {Record<string, unknown>} attrs
 */
function mapSpanJs(attrs) {
  switch (attrs["genkit:metadata:subtype"]) {
    case "flow":
    case "agent":
      return mapAgent(attrs)
    case "model":
      return mapModelName(attrs) | mapModelAttributes(attrs)
    case "tool":
      return mapToolName(attrs) | mapToolResult(attrs)
    default:
      return 0
  }
}

/** The flags after which the binding wrote nothing reliable and the span is mapped another way
 * (the JS twin, or complete mode's whole-span mapping). */
const TO_JS = P.NEEDS_JS | P.PANIC | P.OUT_OF_MEMORY | P.TOO_LARGE

module.exports = { P, TO_JS, FAIL, THREW, readInput, readOutput, parse, mapSpanJs, mapAgent, mapModelName, mapModelAttributes, mapToolName, mapToolOperation, mapToolArguments, mapToolResult }
