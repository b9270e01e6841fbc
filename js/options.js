"use strict"
// The options of GenkitForMaple, validated once in the constructor (construction is the user's
// code, not the span path): an unknown option or a wrong type is a TypeError there, never an
// error in onEnd. Issue 10: `mode`, `cost`. Issue 11: `captureContent`, `scrubSecrets`,
// `secretPatterns`, `maxContentBytes` (js/content.js). Other options are added to VALIDATORS.
// The resolved object is what the native Mapper is constructed from (`new Mapper(resolved)`), in
// the processor and in any other entry (the native exporter): content control needs nothing else.

const { resolveCapture, CAPTURE_TOKENS, warnOnce } = require("./content")

const MODES = Object.freeze(["complete", "reference"])

/** The defaults: every rule of complete mode; content captured and scrubbed; the mode's cap. */
const DEFAULTS = Object.freeze({ mode: "complete", cost: true, captureContent: true, scrubSecrets: true, secretPatterns: Object.freeze([]), maxContentBytes: undefined })

/** One validator per option: returns what is wrong with a value, or `undefined` when it is valid. */
const VALIDATORS = {
  mode: (v) => (MODES.includes(v) ? undefined : `must be "complete" or "reference"`),
  cost: (v) => (typeof v === "boolean" ? undefined : "must be a boolean"),
  captureContent: (v) =>
    typeof v === "boolean" || (typeof v === "string" && CAPTURE_TOKENS.has(v.trim().toUpperCase()))
      ? undefined
      : "must be a boolean or one of NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT",
  scrubSecrets: (v) => (typeof v === "boolean" ? undefined : "must be a boolean"),
  secretPatterns: (v) =>
    Array.isArray(v) && v.length <= 1000 && v.every((p) => typeof p === "string" && p.length > 0 && p.length <= 10_000)
      ? undefined
      : "must be an array of non-empty strings (regex crate syntax)",
  maxContentBytes: (v) =>
    v === Infinity || (Number.isSafeInteger(v) && v >= 64) ? undefined : "must be an integer >= 64 (bytes) or Infinity",
}

function describe(value) {
  if (value === null) return "null"
  if (Array.isArray(value)) return "an array"
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === "object" || typeof value === "function") return `a ${typeof value}`
  return `${typeof value} ${String(value)}`
}

/**
 * The options with defaults applied, frozen. Throws a TypeError naming the option for an unknown
 * option, a wrong type or a value out of range; `undefined` values mean "the default".
 * @param {unknown} options
 * @param {NodeJS.ProcessEnv} [env] where the capture variable is read (default `process.env`)
 * @param {(message: string) => void} [warn] one warning per unrecognised variable value (diag)
 * @returns {Readonly<{ mode: "complete" | "reference", cost: boolean, captureContent: boolean, scrubSecrets: boolean, secretPatterns: readonly string[], maxContentBytes: number | undefined }>}
 */
function resolveOptions(options, env = process.env, warn = warnOnce) {
  if (options === undefined) options = {}
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`GenkitForMaple: options must be an object, got ${describe(options)}`)
  }
  const known = Object.keys(VALIDATORS)
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(VALIDATORS, key)) {
      throw new TypeError(`GenkitForMaple: unknown option "${key}" (known options: ${known.join(", ")})`)
    }
  }
  const resolved = { ...DEFAULTS }
  for (const key of known) {
    const value = options[key]
    if (value === undefined) continue
    const problem = VALIDATORS[key](value)
    if (problem !== undefined) {
      throw new TypeError(`GenkitForMaple: option "${key}" ${problem}, got ${describe(value)}`)
    }
    resolved[key] = value
  }
  // Capture: the option (validated above), else OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT.
  resolved.captureContent = resolveCapture(options.captureContent, env, warn)
  if (Array.isArray(resolved.secretPatterns)) resolved.secretPatterns = Object.freeze([...resolved.secretPatterns])
  return Object.freeze(resolved)
}

module.exports = { resolveOptions, DEFAULTS, MODES }
