"use strict"
// The span reader of genkit-for-maple/otlp (issue 8): reads a batch of ReadableSpans (SDK 1.x, 2.x,
// 3.x) in JavaScript, where property reads are inline-cached, into a flat form that the native
// side copies in a handful of napi calls (src/flat.rs: encodeOtlpFlat, fusedReadFlat), instead of
// several napi calls per field and per attribute (src/export.rs, now the fallback reader).
//
// No JavaScript object is created per span: numbers go into one reused Float64Array, strings are
// appended with `+` into strings of at most CHUNK units (ropes, which V8 flattens once when the
// chunk is tested for wide units: one copy, then one napi call each, as Latin-1 when no unit is
// above 0xFF; cheaper than collecting them in an array for `join`, whose `push` and join builtins
// cost about 10k instructions a mapped 1 KB span, BENCHMARKS.md "Stop 25"); strings of BIG units or more
// are passed as they are; Uint8Array values by reference. The native side splits the strings by their lengths and transcodes them on the libuv
// thread pool (so lone surrogates never pair across two strings).
//
// The rules are src/export.rs's (which follow the official ProtobufTraceSerializer): the same
// fields, the same truthiness and type tests. Where that reader refuses a batch this one refuses
// it too (read() returns false); the exporter then runs the native reader, which refuses it with
// its reason, and the official serializer encodes the batch.
//
// The stream (numbers; `str` is a length L >= 0 of units in the joined strings, or -(k + 1) for
// bigs[k]; an empty string is 0):
//   batch     : count, then per span: resource group (index, or -1 then resource), scope group
//               (index in the resource, or -1 then scope), span
//   resource  : attributes, schemaUrl str
//   scope     : name str, version str, attributes, droppedAttributesCount, schemaUrl str
//   span      : traceId str, spanId str, traceState str, traceFlags, parent span id str (0: none),
//               parent remote 0|1, name str, kind + 1 (0: none), start s, ns, end s, ns,
//               attributes, droppedAttributesCount, events (count, each: s, ns, name str,
//               attributes, dropped), droppedEventsCount, links (count, each: traceId str,
//               spanId str, traceState str, attributes, dropped, traceFlags, remote 0|1),
//               droppedLinksCount, status message str, status code
//   attributes: count, then per key: key str, value
//   value     : 0 empty | 1 str | 2 0|1 (boolean) | 3 number | 4 (the next of `bytes`) |
//               5 count values (array) | 6 attributes (key-value list)

const { isUint8Array, isSharedArrayBuffer } = require("node:util").types

/** Nesting depth of attribute values read (src/export.rs's MAX_DEPTH). */
const MAX_DEPTH = 64
/** Strings of at least this many UTF-16 units are not joined (one napi call each is nothing next to their copy). */
const BIG = 16384
/**
 * Chunks are at most this many units: small enough for V8's young generation (a larger
 * string is a fresh large-object allocation, page faults included, on every batch: measured
 * 1.5-2x slower per span), large enough that the napi calls per chunk do not matter.
 */
const CHUNK = 32768
/** The numbers buffer shrinks back to this after a batch that grew it further. */
const KEEP = 1 << 16

const REFUSED = new Error("refused")
/**
 * A code unit above 0xFF: a string without one is copied as Latin-1 (one byte a unit, half the
 * UTF-16 copy). V8 answers at once for its one-byte strings, which cannot match; on a two-byte
 * string the scan stops at the first such unit.
 */
const WIDE = /[^\x00-\xff]/

let nums = new Float64Array(KEEP)
let n = 0
/** The chunk being built: strings of the batch appended with `+`. */
let part = ""
let chunks = []
let bigs = []
/** Per string of `chunks`, then of `bigs`: whether it holds a code unit above 0xFF (read as UTF-16, else as Latin-1). */
let wide = []
let bytes = []
let busy = false

function grow() {
  const next = new Float64Array(nums.length * 2)
  next.set(nums)
  nums = next
}

function num(x) {
  if (n === nums.length) grow()
  nums[n++] = x
}

function flush() {
  if (part.length > 0) {
    chunks.push(part)
    wide.push(WIDE.test(part))
    part = ""
  }
}

function str(s) {
  const len = s.length
  if (len === 0) {
    num(0)
  } else if (len >= BIG) {
    bigs.push(s)
    num(-bigs.length)
  } else {
    if (part.length + len > CHUNK) flush()
    part += s
    num(len)
  }
}

function requiredString(s) {
  if (typeof s !== "string") throw REFUSED
  str(s)
}

/** `if (x) writeString(x)`. */
function optionalString(s) {
  if (!s) num(0)
  else requiredString(s)
}

/** A trace or span id: a string of even length (hexToBinary). */
function id(s) {
  if (typeof s !== "string" || (s.length & 1) !== 0) throw REFUSED
  str(s)
}

/** A count written with writeVarint: a number, or undefined (0). */
function count(v) {
  if (typeof v === "number") num(v)
  else if (v === undefined) num(0)
  else throw REFUSED
}

/** `x || 0`, then writeVarint. */
function countOrZero(v) {
  if (!v) num(0)
  else count(v)
}

/** traceFlags as `& 255` reads them (undefined is 0). */
function flags(v) {
  if (typeof v === "number") num(v)
  else if (v === undefined) num(0)
  else throw REFUSED
}

function isObject(v) {
  return typeof v === "object" && v !== null
}

function hrTime(t) {
  if (!isObject(t)) throw REFUSED
  const s = t[0]
  const ns = t[1]
  if (typeof s !== "number" || typeof ns !== "number") throw REFUSED
  num(s)
  num(ns)
}

function keyValues(object, depth) {
  const keys = Object.keys(object)
  const len = keys.length
  num(len)
  for (let i = 0; i < len; i++) {
    const key = keys[i]
    str(key)
    anyValue(object[key], depth)
  }
}

function attributes(v) {
  if (!v) {
    num(0)
    return
  }
  const t = typeof v
  if (t !== "object" && t !== "function") throw REFUSED
  keyValues(v, 0)
}

function anyValue(v, depth) {
  switch (typeof v) {
    case "string":
      num(1)
      str(v)
      return
    case "boolean":
      num(2)
      num(v ? 1 : 0)
      return
    case "number":
      num(3)
      num(v)
      return
    case "object":
      if (v === null) break
      if (depth >= MAX_DEPTH) throw REFUSED
      if (isUint8Array(v)) {
        // Over a SharedArrayBuffer another thread may write the bytes while the native side
        // copies them: copy them here first (rare; the only object this reader makes per value).
        bytes.push(isSharedArrayBuffer(v.buffer) ? new Uint8Array(v) : v)
        num(4)
      } else if (Array.isArray(v)) {
        const len = v.length
        num(5)
        num(len)
        for (let i = 0; i < len; i++) anyValue(v[i], depth + 1)
      } else {
        num(6)
        keyValues(v, depth + 1)
      }
      return
  }
  num(0)
}

/** `traceState?.serialize()` when truthy. */
function traceState(context) {
  const state = context.traceState
  if (state === undefined || state === null) {
    num(0)
    return
  }
  const serialize = state.serialize
  if (typeof serialize !== "function") throw REFUSED
  optionalString(serialize.call(state))
}

function resource(r) {
  if (!isObject(r)) throw REFUSED
  attributes(r.attributes)
  optionalString(r.schemaUrl)
}

function scope(s) {
  if (!isObject(s)) throw REFUSED
  requiredString(s.name)
  optionalString(s.version)
  attributes(s.attributes)
  countOrZero(s.droppedAttributesCount)
  optionalString(s.schemaUrl)
}

function event(e) {
  if (!isObject(e)) throw REFUSED
  hrTime(e.time)
  requiredString(e.name)
  attributes(e.attributes)
  countOrZero(e.droppedAttributesCount)
}

function link(l) {
  if (!isObject(l)) throw REFUSED
  const context = l.context
  if (!isObject(context)) throw REFUSED
  id(context.traceId)
  id(context.spanId)
  traceState(context)
  attributes(l.attributes)
  countOrZero(l.droppedAttributesCount)
  flags(context.traceFlags)
  num(context.isRemote ? 1 : 0)
}

function list(items, each) {
  if (!Array.isArray(items)) throw REFUSED
  const len = items.length
  num(len)
  for (let i = 0; i < len; i++) each(items[i])
}

function span(s) {
  const spanContext = s.spanContext
  if (typeof spanContext !== "function") throw REFUSED
  const context = spanContext.call(s)
  if (!isObject(context)) throw REFUSED
  id(context.traceId)
  id(context.spanId)
  traceState(context)
  flags(context.traceFlags)

  // Parent: SDK 2.x/3.x parentSpanContext, SDK 1.x parentSpanId.
  const parent = s.parentSpanContext
  if (isObject(parent)) {
    const parentId = parent.spanId
    if (parentId) id(parentId)
    else num(0)
    num(parent.isRemote ? 1 : 0)
  } else if (parent === undefined) {
    const parentId = s.parentSpanId
    if (parentId) id(parentId)
    else num(0)
    num(0)
  } else {
    num(0)
    num(0)
  }

  requiredString(s.name)
  const kind = s.kind
  if (kind === undefined || kind === null) num(0)
  else if (typeof kind === "number") num(kind + 1)
  else throw REFUSED
  hrTime(s.startTime)
  hrTime(s.endTime)
  attributes(s.attributes)
  count(s.droppedAttributesCount)
  list(s.events, event)
  count(s.droppedEventsCount)
  list(s.links, link)
  count(s.droppedLinksCount)
  const status = s.status
  if (!isObject(status)) throw REFUSED
  optionalString(status.message)
  const code = status.code
  if (typeof code === "number") num(code)
  else if (code === undefined) num(0)
  else throw REFUSED
}

function batch(spans) {
  if (!Array.isArray(spans)) throw REFUSED
  const len = spans.length
  num(len)
  // Resources and, per resource, scopes, by identity in order of first appearance.
  const resources = []
  const scopes = []
  for (let i = 0; i < len; i++) {
    const s = spans[i]
    if (!isObject(s)) throw REFUSED
    const r = s.resource
    let sc = s.instrumentationScope
    // SDK 1.x.
    if (sc === undefined) sc = s.instrumentationLibrary
    let g = resources.lastIndexOf(r)
    if (g < 0) {
      num(-1)
      resource(r)
      resources.push(r)
      scopes.push([])
      g = resources.length - 1
    } else {
      num(g)
    }
    const known = scopes[g]
    const k = known.lastIndexOf(sc)
    if (k < 0) {
      num(-1)
      scope(sc)
      known.push(sc)
    } else {
      num(k)
    }
    span(s)
  }
  flush()
  for (let i = 0; i < bigs.length; i++) wide.push(WIDE.test(bigs[i]))
}

function clear() {
  n = 0
  part = ""
  chunks = []
  bigs = []
  wide = []
  bytes = []
  if (nums.length > KEEP) nums = new Float64Array(KEEP)
}

/**
 * Reads `spans` and calls `use(nums, length, chunks, bigs, wide, bytes)` with the flat form (valid
 * during the call only: the buffers are reused), returning what it returns; `undefined`, with
 * nothing called, when the batch is refused (a structure the official serializer would not read,
 * a getter that throws) or a read is already under way (a getter that exports).
 */
function read(spans, use) {
  if (busy) return undefined
  busy = true
  try {
    try {
      batch(spans)
    } catch {
      return undefined
    }
    return use(nums, n, chunks, bigs, wide, bytes)
  } finally {
    clear()
    busy = false
  }
}

module.exports = { read }
