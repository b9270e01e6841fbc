"use strict"
// The attribute sink (src/sink.rs): the binding records the attributes of a span here and this
// module writes them into the span's attribute map with named stores (`attrs["gen_ai.x"] = v`),
// as the reference processor of seed 000 writes them. V8 keeps an object written that way in
// fast mode (up to 128 properties); the same writes made through napi are keyed stores, which
// turn a Genkit span's attribute map into a dictionary after 12 added properties, and cost a key
// lookup and a runtime transition each (issue 9; BENCHMARKS.md "Stop 18").

const { P } = require("./mapping")

/** Entries one sink holds; a span that writes more has the rest written by the binding itself. */
const ENTRIES = 64

/** Bits of a code below its key (src/sink.rs `KIND_BITS`). */
const KIND_BITS = 4

/** The kind of a value that is a range of the call's one text (src/sink.rs `SLICE`). */
const SLICE = 6

/** The kind of a value that is a new one-element array of a range of the call's text (src/sink.rs `SLICE_LIST`). */
const SLICE_LIST = 8

/** The kind of a value that is the call's own `genkit:input` (number 0) or `genkit:output` (1) (src/sink.rs `ARGUMENT`). */
const ARGUMENT = 7

/**
 * `String.prototype.slice` as it is when this module loads: what the binding's tool path is given
 * to write a result that is a range of `genkit:output` as a slice of it (V8 shares the characters,
 * no copy; issue 13), in reference and complete mode alike.
 */
const stringSlice = String.prototype.slice

/** [`stringSlice`], called on a string. */
const sliceOf = Function.prototype.call.bind(stringSlice)

/**
 * Strings the binding names by their index instead of making them (src/sink.rs `CONSTANTS`): the
 * binding's own table, handed over by `useConstants` when it loads (js/processor.js), so the two
 * cannot differ.
 */
let CONSTANTS = Object.freeze([])

/** Takes the binding's table (`sinkConstants()`); throws a TypeError for anything but strings. */
function useConstants(list) {
  if (!Array.isArray(list) || !list.every((c) => typeof c === "string")) throw new TypeError("the binding's sink constants are not a list of strings")
  CONSTANTS = Object.freeze([...list])
}

/** The table in use. */
function constants() {
  return CONSTANTS
}

/**
 * The value of entry `i` of kind `kind` other than 0 (src/sink.rs, Layout): 1 its number, 2
 * `true`, 3 `false`, 4 the constant its number names, 5 a new one-element array of it.
 */
function scalar(codes, i, kind) {
  switch (kind) {
    case 1: return codes[2 + 2 * i]
    case 2: return true
    case 3: return false
    case 4: return CONSTANTS[codes[2 + 2 * i]]
    case 5: return [CONSTANTS[codes[2 + 2 * i]]]
    default: return undefined
  }
}

/**
 * Assigns `value` to attribute `code` of `a` (1 + the key's index in src/sink.rs `KEYS`, in its
 * order: the tests check every case against the binding's `sinkKeys()`), each key its own named
 * store; `name` for code 0 (a key the table does not list). Throws what the assignment throws.
 */
function put(a, code, name, value) {
  switch (code) {
    case 1: a["gen_ai.operation.name"] = value; return
    case 2: a["gen_ai.provider.name"] = value; return
    case 3: a["gen_ai.request.model"] = value; return
    case 4: a["gen_ai.input.messages"] = value; return
    case 5: a["gen_ai.system_instructions"] = value; return
    case 6: a["gen_ai.request.temperature"] = value; return
    case 7: a["gen_ai.request.max_tokens"] = value; return
    case 8: a["gen_ai.request.top_p"] = value; return
    case 9: a["gen_ai.request.top_k"] = value; return
    case 10: a["gen_ai.request.stop_sequences"] = value; return
    case 11: a["gen_ai.request.seed"] = value; return
    case 12: a["gen_ai.request.frequency_penalty"] = value; return
    case 13: a["gen_ai.request.presence_penalty"] = value; return
    case 14: a["gen_ai.output.type"] = value; return
    case 15: a["gen_ai.output.messages"] = value; return
    case 16: a["gen_ai.response.finish_reasons"] = value; return
    case 17: a["gen_ai.usage.input_tokens"] = value; return
    case 18: a["gen_ai.usage.output_tokens"] = value; return
    case 19: a["gen_ai.usage.cache_read.input_tokens"] = value; return
    case 20: a["gen_ai.usage.cache_write.input_tokens"] = value; return
    case 21: a["gen_ai.usage.reasoning.output_tokens"] = value; return
    case 22: a["gen_ai.response.id"] = value; return
    case 23: a["gen_ai.usage.cost"] = value; return
    case 24: a["gen_ai.response.model"] = value; return
    case 25: a["error.type"] = value; return
    case 26: a["gen_ai.tool.name"] = value; return
    case 27: a["gen_ai.tool.call.arguments"] = value; return
    case 28: a["gen_ai.tool.call.result"] = value; return
    case 29: a["gen_ai.tool.call.id"] = value; return
    case 30: a["gen_ai.agent.name"] = value; return
    case 31: a["gen_ai.conversation.id"] = value; return
    case 32: a["genkit_for_maple.content.dropped_messages"] = value; return
    case 33: a["genkit_for_maple.content.capped"] = value; return
    default: a[name] = value
  }
}

/**
 * A sink: `codes` (count, then code and number per entry), a view of all of `buffer` (what the
 * binding is given), and `values` (src/sink.rs, Layout).
 * Class fields are own properties from the start, so assigning them never reaches a setter a
 * user put on a prototype (nor do the writes into `values`, whose elements all exist).
 */
class Sink {
  // The binding is given the buffer: its memory is cheaper to reach than the typed array's.
  buffer = new ArrayBuffer(Float64Array.BYTES_PER_ELEMENT * (1 + 2 * ENTRIES))
  codes = new Float64Array(this.buffer)
  values = Array.from({ length: 2 * ENTRIES }, () => undefined)
  next = undefined
}

// Free sinks, a list through `next` (no Array method, which an index setter on Array.prototype
// would reach). A call takes one and gives it back after writing, so a setter on the attribute
// map that ends another span (re-entering onEnd) gets a sink of its own.
let free = new Sink()

/** A sink for one binding call. */
function take() {
  const sink = free
  if (sink === undefined) return new Sink()
  free = sink.next
  sink.next = undefined
  return sink
}

/**
 * Writes what the binding recorded in `sink` into `attrs`, in the order it recorded them (a
 * SLICE value is the binding's text, the element of `values` where the first one was recorded,
 * from the previous SLICE's (or SLICE_LIST's) end to its number, a SLICE_LIST value a new array
 * of that one range; an ARGUMENT value is `input` or `output`, the
 * `genkit:input` and `genkit:output` values the binding call was given). With
 * `discard`, writes nothing (the span is mapped again in JavaScript). Either way the sink lets go
 * of the span's values. Returns WRITE_FAILED when an assignment threw (a setter, a Proxy trap, a
 * frozen map); the other attributes are still written.
 */
function write(attrs, sink, discard, input, output) {
  const { codes, values } = sink
  const n = codes[0]
  let flags = 0
  let v = 0
  let text
  let at = 0
  for (let i = 0; i < n; i++) {
    const code = codes[1 + 2 * i]
    const key = code >>> KIND_BITS
    const name = key === 0 ? values[v++] : undefined
    const kind = code & ((1 << KIND_BITS) - 1)
    let value
    const start = at
    if (kind === 0) value = values[v++]
    else if (kind === SLICE || kind === SLICE_LIST) {
      if (text === undefined) text = values[v++]
      at = codes[2 + 2 * i]
    } else if (kind === ARGUMENT) value = codes[2 + 2 * i] === 0 ? input : output
    else value = scalar(codes, i, kind)
    if (discard) continue
    try {
      if (kind === SLICE) value = sliceOf(text, start, at)
      else if (kind === SLICE_LIST) value = [sliceOf(text, start, at)]
      put(attrs, key, name, value)
    } catch {
      flags |= P.WRITE_FAILED
    }
  }
  // The values are the span's: not kept alive by the sink until the next span.
  for (let i = 0; i < v; i++) values[i] = undefined
  codes[0] = 0
  return flags
}

/** [`write`], then gives the sink (one `take` returned) back for the next call. */
function flush(attrs, sink, discard, input, output) {
  const flags = write(attrs, sink, discard, input, output)
  // A sink whose buffer was detached (transferred by code that reached it) is not reused.
  if (sink.codes.length === 0) return flags
  sink.next = free
  free = sink
  return flags
}

module.exports = { stringSlice, take, write, flush, useConstants, constants, KIND_BITS, SLICE, SLICE_LIST, ARGUMENT }
