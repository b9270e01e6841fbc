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

/** The tokens `captureContent` and the variable accept (upper-cased). */
const CAPTURE_TOKENS = new Set(["NO_CONTENT", "SPAN_ONLY", "EVENT_ONLY", "SPAN_AND_EVENT"])

// The capture-mode warnings already given (one per unrecognised value per process), to diag.
const captureWarnings = new Set()
function warnOnce(message) {
  if (captureWarnings.has(message)) return
  captureWarnings.add(message)
  try {
    require("@opentelemetry/api").diag.warn(message)
  } catch {
    // No @opentelemetry/api, or a logger that throws: nothing reaches the caller.
  }
}

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

// ---- Content on the paths that write it in JavaScript (issue 11) ----
// The native mapping applies capture, scrubbing and the cap itself (core/src/content.rs). The
// JavaScript writers (the reference mapping of spans the binding hands back, and the pure-JS
// fallback; reference mode's native tool spans write their arguments in Rust, in mapToolSpan)
// write into a scratch object first; each
// content attribute then goes through a guard before it reaches the span: the binding's
// `filterContent` (the same rules), or, without a binding, capture and "scrubbed or nothing".

/** `CONTENT_WITHHELD` of js/mapping.js's P (core problem::CONTENT_WITHHELD). */
const CONTENT_WITHHELD = 1 << 10

/** The default cap of complete mode (core cap::DEFAULT_MAX_CONTENT_BYTES); reference mode: none. */
const DEFAULT_MAX_CONTENT_BYTES = 256 * 1024

/** The cap of resolved options in bytes, `undefined` for none. */
function capOf(options) {
  const max = options.maxContentBytes ?? (options.mode === "complete" ? DEFAULT_MAX_CONTENT_BYTES : undefined)
  return max === Infinity ? undefined : max
}

/**
 * The guard of content attributes written in JavaScript: `(key, value) => [value | undefined,
 * flags]`, or `undefined` when content is written as it is (capture on, scrubbing off, no cap).
 * With the binding, its `filterContent` applies the mapper's rules; without it, there is no
 * scrubber and no cap: content is not written while scrubbing is on or a value is over the cap
 * (CONTENT_WITHHELD), never written unscrubbed.
 * @param {ReturnType<typeof import("./options").resolveOptions>} options
 * @param {any} native the binding, or undefined
 * @param {any} mapper the binding's Mapper of `options`, or undefined
 */
function contentGuard(options, native, mapper) {
  const max = capOf(options)
  if (options.captureContent && !options.scrubSecrets && max === undefined) return undefined
  if (!options.captureContent) return () => [undefined, 0]
  if (native !== undefined && mapper !== undefined && typeof native.filterContent === "function") {
    return (key, value) => {
      const r = native.filterContent(mapper, key, value)
      if (r === true) return [value, 0]
      if (r === false) return [undefined, CONTENT_WITHHELD]
      return [r.value, 0, r.dropped, r.capped]
    }
  }
  // Without the binding: the one "native binding unavailable" warning says content is withheld
  // while scrubbing is on; a value over the cap gets CONTENT_WITHHELD.
  // A value that is not a string under a cap: a number or a boolean as it is, anything else
  // (an array, an object) withheld, as the binding's filterContent does (src/content.rs
  // `writable_as_is`).
  return (_key, value) => {
    if (options.scrubSecrets) return [undefined, 0]
    if (max === undefined) return [value, 0]
    if (typeof value === "string") return Buffer.byteLength(value, "utf8") > max ? [undefined, CONTENT_WITHHELD] : [value, 0]
    return typeof value === "number" || typeof value === "boolean" ? [value, 0] : [undefined, CONTENT_WITHHELD]
  }
}

const IS_CONTENT = new Set(CONTENT_ATTRIBUTES)

/**
 * Runs `write(target)` (a JavaScript writer that reads and writes a span's attribute map) with
 * `guard` between it and `attrs`: it writes into a scratch object whose prototype is `attrs` (so
 * it reads the span's values), then each written attribute is copied to `attrs`, content ones
 * through `guard`. Returns the writer's flags and the guard's.
 */
function guarded(attrs, guard, write) {
  if (guard === undefined) return write(attrs)
  const scratch = Object.create(attrs)
  let flags = write(scratch)
  let dropped = 0
  const capped = []
  const set = (key, value) => {
    try {
      attrs[key] = value
    } catch {
      flags |= 1 << 9 // WRITE_FAILED
    }
  }
  for (const key of Object.keys(scratch)) {
    let value = scratch[key]
    if (IS_CONTENT.has(key)) {
      const [kept, f, d, c] = guard(key, value)
      flags |= f
      if (kept === undefined) continue
      value = kept
      dropped += d ?? 0
      if (c) capped.push(key)
    }
    set(key, value)
  }
  // As the native writers name them (core cap::DROPPED_MESSAGES, cap::CAPPED_ATTRIBUTES).
  if (dropped > 0) set("genkit_for_maple.content.dropped_messages", dropped)
  if (capped.length > 0) set("genkit_for_maple.content.capped", capped)
  return flags
}

module.exports = {
  contentGuard,
  guarded,
  capOf,
  CONTENT_WITHHELD,
  DEFAULT_MAX_CONTENT_BYTES,
  CONTENT_ATTRIBUTES,
  CAPTURE_ENV,
  CAPTURE_TOKENS,
  warnOnce,
  resolveCapture,
  viewWithout,
  NoContentSpanExporter,
  NoContentSpanProcessor,
}
