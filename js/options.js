"use strict"
// The options of GenkitForMaple, validated once in the constructor (construction is the user's
// code, not the span path): an unknown option or a wrong type is a TypeError there, never an
// error in onEnd. Issue 10: `mode`, `cost`. Other options are added to VALIDATORS.

const MODES = Object.freeze(["complete", "reference"])

/** The defaults: every rule of complete mode. */
const DEFAULTS = Object.freeze({ mode: "complete", cost: true })

/** One validator per option: returns what is wrong with a value, or `undefined` when it is valid. */
const VALIDATORS = {
  mode: (v) => (MODES.includes(v) ? undefined : `must be "complete" or "reference"`),
  cost: (v) => (typeof v === "boolean" ? undefined : "must be a boolean"),
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
 * @returns {Readonly<{ mode: "complete" | "reference", cost: boolean }>}
 */
function resolveOptions(options) {
  if (options === undefined) return DEFAULTS
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
  return Object.freeze(resolved)
}

module.exports = { resolveOptions, DEFAULTS, MODES }
