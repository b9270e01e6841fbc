"use strict"
// Complete mode in the processor (issue 10): model and tool.v2 spans go through the core's
// whole-span mapping (the binding's `mapSpan`, given a `Mapper` by its id; core/src/span.rs and
// core/src/complete.rs, where every rule lives), tool spans through the binding's tool path
// (`mapToolFast`, the same attributes; `mapSpan` where it hands a span back); flow and agent
// spans keep their JS fast path (no native call) and call the native `errorType` only when they
// failed with a stack trace that does not start with an ASCII name (`asciiStackName`). The
// pure-JS mapping carries reference mode only.

const js = require("./mapping")
const { P } = js
const { guarded } = require("./content")
const sink = require("./sink")

const str = (v) => (typeof v === "string" ? v : undefined)
const num = (v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined)

/** The span's status code (0 unset, 1 ok, 2 error). */
function statusCode(span) {
  const code = span.status?.code
  return code === 1 || code === 2 ? code : 0
}

/** `exception.type` and `exception.stacktrace` of the span's first exception event. */
function exceptionOf(span) {
  const events = span.events
  if (!Array.isArray(events)) return [undefined, undefined]
  for (const event of events) {
    if (event?.name !== "exception") continue
    const a = event.attributes ?? {}
    return [str(a["exception.type"]), str(a["exception.stacktrace"])]
  }
  return [undefined, undefined]
}

/**
 * Rule 4's error name when a stack trace's first line starts with an ASCII JavaScript identifier
 * of at most 128 characters followed by `:`, a line end or the end of the trace (V8's
 * `Name: message`): that identifier, the answer `errorType` gives whatever `exception.type` is
 * (core `span::error_type`: for ASCII, an identifier character is exactly `[A-Za-z0-9_$]`, a letter,
 * `_` or `$` first). `undefined` in every other case, which `errorType` answers instead (a
 * non-ASCII name, no name, a trace that is no string): the rule itself lives in the core, this only
 * spares a failed flow the native call for the common shape. Reads at most the first 129
 * characters.
 */
function asciiStackName(stack) {
  if (typeof stack !== "string") return undefined
  // A name is 128 characters at most: what ends it is among the first 129.
  const n = Math.min(stack.length, 129)
  for (let i = 0; i < n; i++) {
    const c = stack.charCodeAt(i)
    if (c === 58 || c === 10) return i === 0 ? undefined : stack.slice(0, i) // ':' or '\n'
    const letter = (c | 32) >= 97 && (c | 32) <= 122
    if (!letter && c !== 95 && c !== 36 && !(i > 0 && c >= 48 && c <= 57)) return undefined
  }
  // No ':' or line end: the whole trace, when it is short enough to be a name.
  return stack.length > 0 && stack.length <= 128 ? stack : undefined
}

function nameOf(attrs) {
  const v = attrs["genkit:name"]
  return typeof v === "string" || v === undefined ? v : String(v)
}

/** Replaces lone surrogates in every string and key of a parsed JSON value (UTF-8 cannot carry
 * them; the OTLP wire would carry U+FFFD). Keys are defined, never assigned (`__proto__`). */
function wellFormed(value) {
  if (typeof value === "string") return value.toWellFormed()
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(wellFormed)
  const out = {}
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key.toWellFormed(), { value: wellFormed(value[key]), enumerable: true, writable: true, configurable: true })
  }
  return out
}

/** A JSON attribute as JSON text the core reads: `JSON.parse` semantics (`1e400` is `null` after
 * `JSON.stringify`, as the reference writes it), lone surrogates as U+FFFD. */
function normaliseJson(text) {
  if (typeof text !== "string") return text
  let value
  try {
    value = JSON.parse(text)
  } catch {
    return text.toWellFormed()
  }
  return JSON.stringify(wellFormed(value))
}

/**
 * Complete mode's last resort for a model or tool span the binding hands back: the reference
 * mapping in JavaScript (seed 000's attributes), from `input` / `output` as the caller read them
 * once (`js.THREW` when a getter threw), with a `tool.v2` span mapped as a tool, as complete mode
 * maps it natively. Returns problem flags.
 */
function referenceMapping(attrs, subtype, input, output) {
  if (subtype === "model") return js.mapModelName(attrs) | js.mapModelAttributes(attrs, input, output)
  return js.mapToolOperation(attrs) | js.mapToolArguments(attrs, input) | js.mapToolResult(attrs, output)
}

/** A `genkit:input` / `genkit:output` value the tool path takes as it is: a well-formed string
 * (complete mode writes a lone surrogate as U+FFFD, the tool path as it is), or none. */
const isText = (v) => (typeof v === "string" ? v.isWellFormed() : v === undefined || v === null)

/**
 * A `tool` span whose `genkit:name` is a string and whose input and output are strings or
 * absent, through the binding's tool path (`mapToolSpan`, the reference path's: for such a span
 * its writers give exactly what complete mode's whole-span mapping gives, content rules
 * included), with rule 4's `error.type` of a failed span (`status` 2, from its exception event's
 * `type` and `stack`) and rule 5's `gen_ai.tool.call.id` added by the same call (the mapper's
 * tool call id state, as `mapSpan` uses it). About half the cost of `mapSpan` (BENCHMARKS.md
 * "Stop 47", "Stop 49"). Returns the flags, or `undefined` when the binding handed the span back
 * (nothing written by it, the state unchanged): the caller then maps it with `mapSpan` from the
 * same values.
 */
function mapToolFast(mapperId, native, attrs, name, input, output, traceId, spanId, parent, status, type, stack) {
  try {
    attrs["gen_ai.operation.name"] = "execute_tool"
    attrs["gen_ai.tool.name"] = name
  } catch {
    return undefined // a setter or a frozen map: the whole-span path reports it
  }
  const out = sink.take()
  let flags = native.mapToolSpan(attrs, output, mapperId, sink.stringSlice, input, true, out.buffer, out.values, true, name, traceId, spanId, parent, status, type, stack)
  flags |= sink.flush(attrs, out, (flags & js.TO_JS) !== 0, input, output)
  return flags & js.TO_JS ? undefined : flags
}

/**
 * A flow or agent span in complete mode, in place: reference mode's attributes (`js.mapAgent`)
 * and, on a failed span (`status` 2), rule 4's `error.type`. Returns problem flags.
 */
function mapAgentComplete(native, span, attrs) {
  const flags = js.mapAgent(attrs)
  // Rule 4 on flows, only when the span failed (rare): the stack trace's ASCII name read here,
  // anything else answered by the native rule (`asciiStackName`).
  if (statusCode(span) === 2) {
    const [type, stack] = exceptionOf(span)
    attrs["error.type"] = asciiStackName(stack) ?? native.errorType(type, stack)
  }
  return flags
}

/**
 * Maps one span in complete mode, in place. Returns problem flags, and the binding's
 * TOOL_CALL_STATE when the mapper keeps tool call id state afterwards.
 * @param {number} mapperId the native Mapper's `id` (the binding's `mapSpan` takes the mapper by it)
 * @param {{ mapSpan: Function, errorType: Function }} native the binding
 * @param {((key: string, value: unknown) => [unknown, number]) | undefined} guard content control of
 *   the JavaScript fallback's writes (js/content.js, issue 11)
 * @param {boolean} [whole] every model and tool span through `mapSpan`, the tool path left out
 *   (the tests compare the two on the same spans)
 */
function mapComplete(mapperId, native, span, attrs, subtype, guard, whole = false) {
  switch (subtype) {
    case "flow":
    case "agent":
      return mapAgentComplete(native, span, attrs)
    case "model":
    case "tool":
    case "tool.v2":
      break
    default:
      return 0
  }
  let name
  let flags = 0
  try {
    name = nameOf(attrs)
  } catch {
    flags |= P.ATTRIBUTE_TYPE
  }
  const status = statusCode(span)
  // No array made for a span that did not fail (most of them).
  let type, stack
  if (status === 2) [type, stack] = exceptionOf(span)
  const ctx = typeof span.spanContext === "function" ? span.spanContext() : undefined
  const parent = str(span.parentSpanContext?.spanId) ?? str(span.parentSpanId)
  const traceId = str(ctx?.traceId)
  const spanId = str(ctx?.spanId)
  // Read once, here (a getter is never called twice; one that throws costs only what derives
  // from its value), as the reference path reads them (js/processor.js mapModelNative).
  const input = js.readInput(attrs)
  const output = js.readOutput(attrs)
  if (!whole && subtype === "tool" && typeof name === "string" && isText(input) && isText(output)) {
    const fast = mapToolFast(mapperId, native, attrs, name, input, output, traceId, spanId, parent, status, type, stack)
    if (fast !== undefined) return fast
  }
  // The span's end time (HrTime [seconds, nanoseconds]): rule 2 prices the call at that time.
  let end
  try {
    end = span.endTime
  } catch {
    end = undefined // a throwing getter: priced at the time of mapping
  }
  const endSeconds = num(end?.[0])
  const endNanos = endSeconds === undefined ? undefined : num(end[1])
  const threw = (input === js.THREW ? 1 : 0) | (output === js.THREW ? 2 : 0)
  // A direct call (not a spread of an argument array): this runs for every model and tool span.
  let out = sink.take()
  const inputValue = threw & 1 ? undefined : input
  const outputValue = threw & 2 ? undefined : output
  let result = native.mapSpan(mapperId, attrs, inputValue, outputValue, threw, subtype, name, status, type, stack, traceId, spanId, parent, endSeconds, endNanos, out.buffer, out.values)
  result |= sink.flush(attrs, out, (result & (P.NEEDS_JS | P.PANIC)) !== 0, inputValue, outputValue)
  if (result & (P.NEEDS_JS | P.PANIC)) {
    // The mapper keeps tool call id state (native TOOL_CALL_STATE): passed on to the processor
    // whatever the retry answers (on the usual path it is in `result` already).
    let state = result & native.TOOL_CALL_STATE
    // JSON the core's reader refuses but JSON.parse accepts (`1e400`, a lone surrogate escape in
    // a key): map a normalised copy, so complete mode's rules still apply.
    // What the first call reports (the fallback's reason), whatever the retry answers.
    const handedBack = result & (P.PANIC | P.OUT_OF_MEMORY | P.TOO_LARGE)
    // The reference mapping in JS, from the values read above (a getter is never called twice).
    const reference = (t) => referenceMapping(t, subtype, input, output)
    // Out of memory or over the hand-off size: a normalised copy would not help.
    if (result & (P.OUT_OF_MEMORY | P.TOO_LARGE)) return flags | state | handedBack | guarded(attrs, guard, reference)
    let copy
    try {
      copy = { "genkit:input": threw & 1 ? undefined : normaliseJson(input), "genkit:output": threw & 2 ? undefined : normaliseJson(output) }
    } catch {
      copy = undefined // nesting deeper than V8's JSON.stringify can write
    }
    // What the core writes goes through the sink into attrs, in its order.
    out = sink.take()
    result =
      copy === undefined
        ? P.NEEDS_JS
        : native.mapSpan(mapperId, copy, copy["genkit:input"], copy["genkit:output"], threw, subtype, name, status, type, stack, traceId, spanId, parent, endSeconds, endNanos, out.buffer, out.values)
    result |= sink.flush(attrs, out, (result & (P.NEEDS_JS | P.PANIC)) !== 0, copy?.["genkit:input"], copy?.["genkit:output"])
    state |= result & native.TOOL_CALL_STATE
    if (result & (P.NEEDS_JS | P.PANIC)) {
      // Last resort: the reference mapping in JS.
      return flags | state | handedBack | (result & (P.PANIC | P.OUT_OF_MEMORY)) | guarded(attrs, guard, reference)
    }
    // Attributes past the sink's room were written into the copy itself.
    for (const key of Object.keys(copy)) {
      if (!key.startsWith("genkit:")) attrs[key] = copy[key]
    }
    result |= handedBack | state
  }
  return flags | result
}

module.exports = { mapComplete, mapAgentComplete, normaliseJson, statusCode, exceptionOf, asciiStackName }
