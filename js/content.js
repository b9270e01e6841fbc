"use strict"
// Content control (issue 11): the capture mode of GenkitForMaple, and the span views with the
// content attributes left out that NoContentSpanExporter / NoContentSpanProcessor hand to another
// backend. Pure JS, no binding: the wrappers work wherever the processor does.

/**
 * The five span attributes that hold prompt, answer or tool payload text (seed 003, "Content";
 * GenAI semantic conventions, gen-ai-spans). Frozen.
 */
const CONTENT_ATTRIBUTES = Object.freeze([
  "gen_ai.system_instructions",
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
])

/** Genkit's own copies of the same payloads, left out too with `dropGenkitIO`. */
const GENKIT_IO_ATTRIBUTES = Object.freeze(["genkit:input", "genkit:output"])

/** The standard variable of the GenAI instrumentations (semconv ContentCapturingMode). */
const CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

/**
 * Token (upper-cased) -> whether this processor writes the content attributes. It writes span
 * attributes only, never events or log records: EVENT_ONLY (content in events, not on spans) writes
 * no content attributes, SPAN_AND_EVENT writes them (and no events). `true`/`false` are the older
 * instrumentations' spelling of SPAN_ONLY/NO_CONTENT.
 */
const TOKENS = new Map([
  ["NO_CONTENT", false],
  ["SPAN_ONLY", true],
  ["EVENT_ONLY", false],
  ["SPAN_AND_EVENT", true],
  ["TRUE", true],
  ["FALSE", false],
])

/** The default when neither the option nor the variable says: content on (seed 000 captures). */
const DEFAULT_CAPTURE = true

/**
 * Resolves whether content attributes are written. An explicit `captureContent` option (boolean, or
 * a token, case-insensitive) beats the variable; an option that is neither throws a TypeError (a
 * typo must not silently capture content). The variable is read once, here; an empty or unset
 * variable means the default; an unrecognised token gives one `warn(message)` and the default.
 * @param {unknown} option `options.captureContent`
 * @param {NodeJS.ProcessEnv} env
 * @param {(message: string) => void} warn
 * @returns {boolean}
 */
function resolveCapture(option, env, warn) {
  if (option !== undefined) {
    if (typeof option === "boolean") return option
    if (typeof option === "string") {
      const known = TOKENS.get(option.trim().toUpperCase())
      if (known !== undefined) return known
    }
    throw new TypeError(
      `genkit-for-maple: captureContent must be a boolean or one of NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT (got ${describe(option)})`,
    )
  }
  const raw = env[CAPTURE_ENV]
  if (raw === undefined || raw.trim() === "") return DEFAULT_CAPTURE
  const known = TOKENS.get(raw.trim().toUpperCase())
  if (known !== undefined) return known
  warn(
    `genkit-for-maple: ${CAPTURE_ENV}=${JSON.stringify(raw)} is not one of NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT, true, false; capturing content (the default)`,
  )
  return DEFAULT_CAPTURE
}

function describe(value) {
  try {
    return typeof value === "string" ? JSON.stringify(value) : typeof value
  } catch {
    return "?"
  }
}

/**
 * A view of `span` whose `attributes` leave out `keys`, or `span` itself when it has none of them.
 * The span is never changed: the view is a Proxy whose `attributes` is a new object (the other
 * properties, and methods such as `spanContext()`, are the span's own, called on the span).
 * @param {any} span a ReadableSpan
 * @param {readonly string[]} keys
 */
function viewWithout(span, keys) {
  const attrs = span?.attributes
  if (attrs === null || typeof attrs !== "object") return span
  let hit = false
  for (const key of keys) {
    if (Object.prototype.hasOwnProperty.call(attrs, key)) {
      hit = true
      break
    }
  }
  if (!hit) return span
  const filtered = {}
  for (const key of Object.keys(attrs)) {
    if (!keys.includes(key)) filtered[key] = attrs[key]
  }
  const descriptor = Object.getOwnPropertyDescriptor(span, "attributes")
  if (descriptor !== undefined && descriptor.configurable === false) return snapshot(span, filtered)
  // Writes a backend makes to the view (none of the SDK's exporters do) stay in the view.
  const written = new Map()
  return new Proxy(span, {
    get(target, property) {
      if (property === "attributes") return filtered
      if (written.has(property)) return written.get(property)
      const value = Reflect.get(target, property, target)
      // Methods run on the real span (class-private fields do not pass through a Proxy).
      return typeof value === "function" ? value.bind(target) : value
    },
    getOwnPropertyDescriptor(target, property) {
      const own = Reflect.getOwnPropertyDescriptor(target, property)
      if (property === "attributes" && own !== undefined) {
        return { value: filtered, writable: true, enumerable: own.enumerable, configurable: true }
      }
      return own
    },
    set(_target, property, value) {
      if (property === "attributes") return false
      written.set(property, value)
      return true
    },
    defineProperty() {
      return false
    },
    deleteProperty() {
      return false
    },
  })
}

/** The ReadableSpan fields of SDK 1.x-3.x, for spans a Proxy cannot stand in for (frozen ones). */
const SPAN_FIELDS = [
  "name",
  "kind",
  "parentSpanId",
  "parentSpanContext",
  "startTime",
  "endTime",
  "status",
  "links",
  "events",
  "duration",
  "ended",
  "resource",
  "instrumentationLibrary",
  "instrumentationScope",
  "droppedAttributesCount",
  "droppedEventsCount",
  "droppedLinksCount",
]

function snapshot(span, filtered) {
  const copy = { attributes: filtered }
  for (const key of SPAN_FIELDS) {
    if (key in span) copy[key] = span[key]
  }
  const spanContext = span.spanContext
  copy.spanContext = typeof spanContext === "function" ? () => spanContext.call(span) : () => spanContext
  return copy
}

function keysToDrop(options) {
  return options?.dropGenkitIO === true ? [...CONTENT_ATTRIBUTES, ...GENKIT_IO_ATTRIBUTES] : CONTENT_ATTRIBUTES
}

/**
 * A SpanExporter that hands `exporter` a view of each span without the content attributes (and
 * without `genkit:input`/`genkit:output` with `dropGenkitIO`). See index.d.ts.
 */
class NoContentSpanExporter {
  constructor(exporter, options = {}) {
    this.exporter = exporter
    this.keys = keysToDrop(options)
  }

  export(spans, resultCallback) {
    const keys = this.keys
    this.exporter.export(
      spans.map((span) => viewWithout(span, keys)),
      resultCallback,
    )
  }

  shutdown() {
    return this.exporter.shutdown()
  }

  forceFlush() {
    return typeof this.exporter.forceFlush === "function" ? this.exporter.forceFlush() : Promise.resolve()
  }
}

/**
 * A SpanProcessor that hands `processor` (Genkit's Cloud Trace processor, say) the same view in
 * `onEnd`. See index.d.ts.
 */
class NoContentSpanProcessor {
  constructor(processor, options = {}) {
    this.processor = processor
    this.keys = keysToDrop(options)
  }

  onStart(span, parentContext) {
    this.processor.onStart(span, parentContext)
  }

  onEnd(span) {
    this.processor.onEnd(viewWithout(span, this.keys))
  }

  forceFlush() {
    return this.processor.forceFlush()
  }

  shutdown() {
    return this.processor.shutdown()
  }
}

module.exports = {
  CONTENT_ATTRIBUTES,
  CAPTURE_ENV,
  resolveCapture,
  viewWithout,
  NoContentSpanExporter,
  NoContentSpanProcessor,
}
