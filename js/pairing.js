"use strict"
// Trace completion for tool call id pairing (issue 10, rule 5; core/src/pairing.rs): the native
// Mapper keeps the tool requests of model answers until their tool spans end; when a trace's local
// root span ends (a flow, a bare generate, a non-Genkit server span), what is left of that trace is
// dropped. Model and tool spans reach the Mapper through mapSpan; a root span usually does not.

/** Whether the span is its trace's local root: no parent, or a parent in another process. */
function isLocalRoot(span) {
  const parent = span.parentSpanContext
  if (parent !== undefined && parent !== null) return parent.isRemote === true
  // SDK 1.x: parentSpanId only.
  return typeof span.parentSpanId !== "string" || span.parentSpanId === ""
}

/**
 * Tells the native Mapper the root span of a trace ended. Returns whether the Mapper still keeps
 * tool call id state (for some trace); `true` when it could not be told.
 */
function endTrace(mapper, span) {
  const ctx = typeof span.spanContext === "function" ? span.spanContext() : undefined
  if (typeof ctx?.traceId === "string" && typeof ctx.spanId === "string") return mapper.spanEnded(ctx.traceId, ctx.spanId, true) !== false
  return true
}

module.exports = { isLocalRoot, endTrace }
