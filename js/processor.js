"use strict"
// GenkitForMaple: the SpanProcessor users import. Routing, the native/JS choice, and diag reports.
// The mapping itself lives in Rust (core/src/mapping.rs) with a JS twin in ./mapping.js.

const js = require("./mapping")
const { P, TO_JS } = js
const { resolveOptions } = require("./options")
const { mapComplete, mapAgentComplete } = require("./complete")
const { isLocalRoot, endTrace } = require("./pairing")
const { contentGuard, guarded } = require("./content")
const sink = require("./sink")

// `diag` from @opentelemetry/api, an optional peer: without it problems are counted, not logged.
let diag
try {
  diag = require("@opentelemetry/api").diag
} catch {
  diag = undefined
}

// The native binding, loaded once (./load.js: bundler-proof, never throws). When it cannot be loaded
// (no prebuilt binary for this platform, a libc mismatch, a bundle without it, addons disabled),
// the pure-JS mapping runs instead, with one diag warning given at the first span: by then NodeSDK
// has installed the logger OTEL_LOG_LEVEL asks for, which it has not when the processor is built.
let native
let nativeError
let nativeWarned = false
function loadNative() {
  if (native !== undefined || nativeError !== undefined) return native
  const result = require("./load").loadBinding()
  if (result.binding !== undefined) {
    try {
      // The attribute sink's table of constants is the binding's own (src/sink.rs CONSTANTS).
      sink.useConstants(result.binding.sinkConstants())
      // A copy of the exports in fast mode: the addon's own exports object is a dictionary
      // (Node-API defines its properties one by one), so each `native.mapSpan` of a span was a
      // dictionary lookup (BENCHMARKS.md "Stop 44").
      native = { ...result.binding }
    } catch (error) {
      nativeError = { error } // a binding that cannot give its table is not used
    }
  } else nativeError = result
  return native
}

/** The one fallback warning per process, at the first span any processor sees. */
function warnNativeOnce() {
  if (nativeWarned || nativeError === undefined) return
  nativeWarned = true
  try {
    diag?.warn(`${require("./load").describe(nativeError)}. ${NO_SCRUBBER}`)
  } catch {
    // A diag logger that throws must not reach onEnd's caller.
  }
}

// Issue 11: the pure-JS mapping has no secret scrubber and no cap.
const NO_SCRUBBER =
  "The pure-JS mapping has no secret scrubber: while scrubSecrets is on (the default) it writes no content attributes (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions, gen_ai.tool.call.arguments, gen_ai.tool.call.result) rather than unscrubbed ones; scrubSecrets: false writes them unscrubbed."

const PROBLEM_TEXT = [
  [P.INPUT_NOT_JSON, "genkit:input is not valid JSON (truncated by an attribute value length limit?); gen_ai.input.messages and gen_ai.system_instructions omitted"],
  [P.INPUT_SHAPE, "genkit:input.messages has a shape Genkit does not write; gen_ai.input.messages and gen_ai.system_instructions omitted"],
  [P.OUTPUT_NOT_JSON, "genkit:output is not valid JSON (truncated by an attribute value length limit?); output attributes omitted"],
  [P.OUTPUT_SHAPE, "genkit:output message has a shape Genkit does not write; gen_ai.output.messages omitted"],
  [P.TOOL_OUTPUT_NOT_JSON, "genkit:output of a tool span is not valid JSON; gen_ai.tool.call.result omitted"],
  [P.PANIC, "the native mapping failed; the span was mapped in JavaScript"],
  [P.OUT_OF_MEMORY, "the native mapping could not allocate memory for this span; the span was mapped in JavaScript"],
  [P.TOO_LARGE, "genkit:input or genkit:output is longer than the native mapping takes (16 Mi UTF-16 code units); the span was mapped by the pure-JS reference mapping, without complete mode's rules (token usage, cost, tool call ids, errors)"],
  [P.ATTRIBUTE_TYPE, "unexpected error while mapping (an attribute whose getter threw or whose type Genkit does not write, such as a genkit:name that cannot be made a string or, in complete mode, a tool span's genkit:input that is neither a string, a number nor a boolean); some gen_ai.* attributes may be missing"],
  [P.WRITE_FAILED, "a gen_ai.* attribute could not be written (a setter or Proxy trap threw, or the attribute map is frozen); it is missing"],
  [P.CONTENT_WITHHELD, "a content attribute was not written: it could not be scrubbed or capped (no memory, its structure alone over maxContentBytes, a value too long to copy, a tool input that is neither a string, a number nor a boolean, or the pure-JS mapping, which has no secret scrubber); content is written scrubbed or not at all"],
]

const REPORT_INTERVAL_MS = 60_000

/** Rate-limited diag reports: at most one per problem kind per minute, naming the span. */
class Reporter {
  constructor() {
    this.last = new Map()
  }

  report(flags, span, detail) {
    for (const [flag, text] of PROBLEM_TEXT) {
      if ((flags & flag) === 0) continue
      const now = Date.now()
      const last = this.last.get(flag)
      if (last !== undefined && now - last < REPORT_INTERVAL_MS) continue
      this.last.set(flag, now)
      if (diag === undefined) continue
      try {
        const ctx = typeof span?.spanContext === "function" ? span.spanContext() : undefined
        const id = ctx ? ` ${ctx.traceId}/${ctx.spanId}` : ""
        diag.warn(`genkit-for-maple: span "${safeName(span)}"${id}: ${text}${detail ? ` (${detail})` : ""}`)
      } catch {
        // A diag logger that throws must not reach onEnd's caller.
      }
    }
  }
}

function safeName(span) {
  try {
    return String(span?.name)
  } catch {
    return "?"
  }
}

// The binding writes a tool result that is a range of `genkit:output` as a slice of it
// (`sink.stringSlice`). String.prototype.concat as it is when this module loads: a model span's
// long texts are joined to the JSON around them as a rope of slices (src/hollow.rs).
const { stringSlice } = sink
const stringConcat = String.prototype.concat

/**
 * A model span's JSON-derived attributes through the binding. `genkit:input` and `genkit:output`
 * are read once, here (a getter is never called twice, and one that throws costs only the
 * attributes derived from its value); the binding gets the values and only writes into `attrs`.
 * When it answers NEEDS_JS (a lone surrogate, a value serde_json refuses, a string longer than its
 * hand-off size), OUT_OF_MEMORY or PANIC, the JS twin maps the span from the same values.
 */
function mapModelNative(native, attrs, rulesId, guard) {
  const input = js.readInput(attrs)
  const output = js.readOutput(attrs)
  const inputThrew = input === js.THREW
  const out = sink.take()
  const inputValue = inputThrew ? undefined : input
  const outputValue = output === js.THREW ? undefined : output
  let flags = native.mapModelSpan(attrs, inputValue, outputValue, inputThrew, rulesId, stringSlice, stringConcat, out.buffer, out.values)
  flags |= sink.flush(attrs, out, (flags & TO_JS) !== 0, inputValue, outputValue)
  if (flags & TO_JS) return (flags & (P.PANIC | P.OUT_OF_MEMORY)) | guarded(attrs, guard, (t) => js.mapModelAttributes(t, input, output))
  return (
    flags |
    (inputThrew ? P.ATTRIBUTE_TYPE | P.INPUT_NOT_JSON : 0) |
    (output === js.THREW ? P.ATTRIBUTE_TYPE | P.OUTPUT_NOT_JSON : 0)
  )
}

/**
 * A tool span through the binding: `gen_ai.operation.name` and `gen_ai.tool.name` here (no
 * content), then `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` in ONE native call,
 * content rules applied there (issue 11); the same read-once rules as mapModelNative. The guard
 * runs only when the binding hands the span back (TO_JS).
 */
function mapToolNative(native, attrs, rulesId, guard) {
  const head = js.mapToolOperation(attrs)
  const input = js.readInput(attrs)
  const output = js.readOutput(attrs)
  const inputThrew = input === js.THREW
  const outputThrew = output === js.THREW
  const out = sink.take()
  const inputValue = inputThrew ? undefined : input
  const outputValue = outputThrew ? undefined : output
  let flags = native.mapToolSpan(attrs, outputValue, rulesId, stringSlice, inputValue, !inputThrew, out.buffer, out.values)
  flags |= sink.flush(attrs, out, (flags & TO_JS) !== 0, inputValue, outputValue)
  const threw = (inputThrew ? P.ATTRIBUTE_TYPE : 0) | (outputThrew ? P.ATTRIBUTE_TYPE | P.TOOL_OUTPUT_NOT_JSON : 0)
  if (flags & TO_JS) {
    const write = (t) => js.mapToolArguments(t, input) | (outputThrew ? 0 : js.mapToolResult(t, output))
    return head | threw | (flags & (P.PANIC | P.OUT_OF_MEMORY)) | guarded(attrs, guard, write)
  }
  return head | threw | flags
}

/** The message of the panic behind a PANIC flag (kept by the binding's panic hook), if any. */
function panicMessage(native) {
  try {
    return native?.takePanicMessage?.() ?? undefined
  } catch {
    return undefined
  }
}

/**
 * The native Mapper for resolved options, content control included (also the fused mode of
 * genkit-for-maple/otlp). Throws when a secret pattern does not compile.
 */
function newMapper(native, options) {
  return new native.Mapper(options)
}

/**
 * Adds the OpenTelemetry GenAI attributes (`gen_ai.*`) to Genkit's flow, agent, model and tool
 * spans in `onEnd`. See index.d.ts for the public contract.
 */
class GenkitForMaple {
  /**
   * @param {import("../index").GenkitForMapleOptions} [options] validated here: a TypeError for an
   * unknown option or a wrong type (js/options.js).
   */
  constructor(options) {
    this.options = resolveOptions(options)
    this.native = loadNative()
    this.problems = new Reporter()
    // Complete mode runs through the core's whole-span mapping (issue 10); without the binding
    // the pure-JS mapping runs reference mode (its one diag warning says so). The Mapper is made
    // from the resolved options, content control included (issue 11); reference mode's native
    // writers get it by its id (`rulesId`), the JavaScript writers the guard (js/content.js).
    let mapper
    try {
      mapper = this.native !== undefined ? newMapper(this.native, this.options) : undefined
    } catch (error) {
      throw new TypeError(`GenkitForMaple: option "secretPatterns": ${safeMessage(error)}`)
    }
    this.mapper = this.options.mode === "complete" ? mapper : undefined
    this.rules = mapper
    // Its id: how the binding's per-span entries take it (as a class instance napi-rs unwraps
    // and type-checks it on every call, 1.7-6k instructions; src/seam.rs `registered`).
    this.rulesId = mapper?.id
    this.guard = contentGuard(this.options, this.native, mapper)
    // Whether the Mapper may keep tool call id state (rule 5): set from what mapSpan answers,
    // cleared when spanEnded says none is left.
    this.holdsToolCalls = false
    // The binding's TOOL_CALL_STATE flag, read once (not a property load on every span).
    this.toolCallState = this.native?.TOOL_CALL_STATE ?? 0
    // Complete mode's own onEnd (`onEndComplete`), unless a subclass overrides onEnd or the
    // prototype's was replaced (a wrapper or spy: its `super.onEnd` / original then takes the
    // prototype's complete branch). Defined, not assigned: a frozen prototype's read-only onEnd
    // does not stop it, and it stays out of Object.keys.
    if (this.mapper !== undefined && inheritsOnEnd(this)) {
      Object.defineProperty(this, "onEnd", { value: onEndComplete, writable: true, configurable: true })
    }
  }

  /** Whether spans are mapped by the native binding (`true`) or the pure-JS mapping. */
  get isNative() {
    return this.native !== undefined
  }

  onStart() {}

  onEnd(span) {
    try {
      if (!nativeWarned) warnNativeOnce()
      const attrs = span.attributes
      if (attrs === null || typeof attrs !== "object") return
      const subtype = attrs["genkit:metadata:subtype"]
      const native = this.native
      let flags = 0
      if (this.mapper !== undefined) {
        flags = subtype === undefined ? 0 : mapComplete(this.rulesId, native, span, attrs, subtype, this.guard)
        const state = this.toolCallState
        if (flags & state) {
          this.holdsToolCalls = true
          flags &= ~state
        }
        // A local root span ended: its trace is complete, its tool call id state can go (rule 5).
        // Only asked while the mapper keeps any (a napi method call costs ~0.5 us a root span).
        if (this.holdsToolCalls && isLocalRoot(span)) this.holdsToolCalls = endTrace(this.mapper, span)
      } else if (subtype === undefined) {
        // util, flowStep, promptTemplate and non-Genkit spans: nothing to map.
      } else if (native !== undefined && (subtype === "flow" || subtype === "agent")) {
        // Flow and agent spans need no JSON and hold no content: the JS mapping is their fast
        // path, entered at their case.
        flags = js.mapAgent(attrs)
      } else if (native === undefined || (subtype !== "model" && subtype !== "tool")) {
        // Without the binding, everything goes through the JS mapping (content through the
        // guard); a subtype reference mode does not map (tool.v2, say) writes nothing there.
        flags = native === undefined ? guarded(attrs, this.guard, js.mapSpanJs) : js.mapSpanJs(attrs)
      } else if (subtype === "model") {
        flags = js.mapModelName(attrs) | mapModelNative(native, attrs, this.rulesId, this.guard)
      } else {
        flags = mapToolNative(native, attrs, this.rulesId, this.guard)
      }
      if (flags !== 0) this.problems.report(flags, span, flags & P.PANIC ? panicMessage(native) : undefined)
    } catch (error) {
      // Last line of defence (a getter that throws on a user-made attribute object, say): the span
      // still reaches the next processor with whatever was written.
      this.problems.report(P.ATTRIBUTE_TYPE, span, safeMessage(error))
    }
  }

  forceFlush() {
    return Promise.resolve()
  }

  shutdown() {
    return Promise.resolve()
  }
}

/** GenkitForMaple's own onEnd, as this module defines it. */
const prototypeOnEnd = GenkitForMaple.prototype.onEnd

/**
 * Whether `processor`'s onEnd is GenkitForMaple's own, as this module defines it: no subclass
 * overrides it and no wrapper or spy replaced it on the prototype. Outside the class: a method
 * naming the class gives every method a class scope context to reach it through (reference mode's
 * flows took 42 -> 48 ns; BENCHMARKS.md "Stop 52").
 */
function inheritsOnEnd(processor) {
  return Object.getPrototypeOf(processor).onEnd === prototypeOnEnd
}

/**
 * `onEnd` in complete mode, the processor's own property (set in the constructor): flow and
 * agent spans first, without the call of `mapComplete` (BENCHMARKS.md "Stop 52"); the same
 * attributes and reports as the prototype's onEnd in complete mode.
 * @this {GenkitForMaple}
 */
function onEndComplete(span) {
  try {
    if (!nativeWarned) warnNativeOnce()
    const attrs = span.attributes
    if (attrs === null || typeof attrs !== "object") return
    const subtype = attrs["genkit:metadata:subtype"]
    // No subtype (util, flowStep, promptTemplate and non-Genkit spans): nothing to map, tested
    // first (a flow test first cost these spans 2.5 ns). Flow and agent spans without
    // mapComplete's call.
    let flags = 0
    if (subtype !== undefined) {
      flags =
        subtype === "flow" || subtype === "agent"
          ? mapAgentComplete(this.native, span, attrs)
          : mapComplete(this.rulesId, this.native, span, attrs, subtype, this.guard)
    }
    // Rule 5's state as the prototype's complete branch keeps it, written out in both: that
    // branch calling a helper instead took reference mode's flows from 42 to 46 ns (V8 inlines
    // less into the prototype's onEnd; BENCHMARKS.md "Stop 52").
    const state = this.toolCallState
    if (flags & state) {
      this.holdsToolCalls = true
      flags &= ~state
    }
    if (this.holdsToolCalls && isLocalRoot(span)) this.holdsToolCalls = endTrace(this.mapper, span)
    if (flags !== 0) this.problems.report(flags, span, flags & P.PANIC ? panicMessage(this.native) : undefined)
  } catch (error) {
    this.problems.report(P.ATTRIBUTE_TYPE, span, safeMessage(error))
  }
}

function safeMessage(error) {
  try {
    return String(error?.message ?? error)
  } catch {
    return "?"
  }
}

module.exports = { GenkitForMaple, loadNative, newMapper }
