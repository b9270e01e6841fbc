"use strict"
// Complete mode's own onEnd (js/processor.js `onEndComplete`, an instance property set by the
// constructor, BENCHMARKS.md "Stop 52") against the prototype's onEnd in complete mode, which a
// subclass's `super.onEnd` reaches: the same attributes and the same problem reports on every span
// of the three real corpora, fed in the order they ended (rule 5's tool call id state carried
// across spans), and on hostile spans; a subclass that overrides onEnd keeps its override.
const test = require("node:test")
const assert = require("node:assert/strict")
const { GenkitForMaple } = require("..")
const { load } = require("./helpers/fixtures")
const { spanOf, inEndOrder } = require("./helpers/spans")

const files = ["genkit-1.42-spans.jsonl", "genkit-1.42-plugin-spans.jsonl", "genkit-1.42-scenario-spans.jsonl"]

const failedFlow = (stack) => ({
  name: "failing",
  attributes: { "genkit:metadata:subtype": "flow", "genkit:name": "failing" },
  status: { code: 2 },
  events: [{ name: "exception", attributes: { "exception.type": "Error", "exception.stacktrace": stack } }],
  spanContext: () => ({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" }),
})

/** Spans no Genkit writes, each made fresh for each processor: the try/catch and guard paths. */
const hostile = [
  () => ({ name: "null attributes", attributes: null }),
  () => ({
    name: "throwing attributes",
    get attributes() {
      throw new Error("boom")
    },
  }),
  () => ({
    name: "throwing subtype",
    attributes: Object.defineProperty({}, "genkit:metadata:subtype", {
      get() {
        throw new Error("boom")
      },
      enumerable: true,
    }),
  }),
  () => ({ name: "frozen flow", attributes: Object.freeze({ "genkit:metadata:subtype": "flow", "genkit:name": "f" }) }),
  () => ({ name: "agent, number name", attributes: { "genkit:metadata:subtype": "agent", "genkit:name": 7, "genkit:metadata:agent:sessionId": "s-1" } }),
  () => ({
    name: "flow, throwing name",
    attributes: Object.defineProperty({ "genkit:metadata:subtype": "flow" }, "genkit:name", {
      get() {
        throw new Error("boom")
      },
      enumerable: true,
    }),
  }),
  () => failedFlow("TypeError: x is not a function\n    at f (a.js:1:1)"),
  () => failedFlow("ÉchecDeFlux: non\n    at f (a.js:1:1)"),
  () => failedFlow(undefined),
  () => ({ name: "util", attributes: { "genkit:metadata:subtype": "util", "genkit:name": "u" } }),
  () => ({ name: "no subtype", attributes: { "genkit:name": "n" } }),
]

/** A copy of an attribute map whose getters may throw ("threw" for those). */
function snapshot(attrs) {
  const copy = {}
  for (const key of Object.keys(attrs)) {
    try {
      copy[key] = attrs[key]
    } catch {
      copy[key] = "threw"
    }
  }
  return copy
}

/** Every span's attributes and reported problem flags, through `onEnd(processor, span)`. */
function run(processor, onEnd) {
  const reported = []
  const report = processor.problems.report.bind(processor.problems)
  processor.problems.report = (flags, span, detail) => {
    reported.push([span.name, flags, detail])
    return report(flags, span, detail)
  }
  const attributes = []
  for (const file of files) {
    const rows = inEndOrder(load(file))
    for (const row of rows) {
      const span = spanOf(row)
      onEnd(processor, span)
      attributes.push(span.attributes)
    }
  }
  for (const make of hostile) {
    const span = make()
    assert.doesNotThrow(() => onEnd(processor, span), span.name)
    let attrs
    try {
      attrs = span.attributes
    } catch {
      attrs = "threw"
    }
    attributes.push(attrs === null || typeof attrs !== "object" ? attrs : snapshot(attrs))
  }
  return { attributes, reported, holdsToolCalls: processor.holdsToolCalls }
}

class Overriding extends GenkitForMaple {
  constructor(options) {
    super(options)
    this.calls = 0
  }
  onEnd(span) {
    this.calls++
    super.onEnd(span)
  }
}
class Plain extends GenkitForMaple {}

test("complete mode's own onEnd gives what the prototype's onEnd gives in complete mode, span by span", () => {
  const own = new GenkitForMaple()
  // The shortcut is what is compared: complete mode's instance answers with its own onEnd.
  assert.notEqual(own.onEnd, GenkitForMaple.prototype.onEnd)
  assert.equal(new GenkitForMaple({ mode: "reference" }).onEnd, GenkitForMaple.prototype.onEnd)
  const viaOwn = run(own, (p, span) => p.onEnd(span))
  const viaPrototype = run(new GenkitForMaple(), (p, span) => GenkitForMaple.prototype.onEnd.call(p, span))
  assert.ok(viaOwn.attributes.length > 300, `${viaOwn.attributes.length} spans`)
  assert.deepEqual(viaOwn.attributes, viaPrototype.attributes)
  assert.deepEqual(viaOwn.reported, viaPrototype.reported)
  assert.equal(viaOwn.holdsToolCalls, viaPrototype.holdsToolCalls)
  // Real values: flows mapped, failed ones named, tool call ids paired, problems reported.
  const flows = viaOwn.attributes.filter((a) => a?.["gen_ai.operation.name"] === "invoke_agent")
  assert.ok(flows.length > 20, `${flows.length} flow and agent spans`)
  assert.ok(flows.some((a) => a["error.type"] === "TypeError"))
  assert.ok(flows.some((a) => a["error.type"] === "ÉchecDeFlux"))
  assert.ok(viaOwn.attributes.some((a) => typeof a?.["gen_ai.tool.call.id"] === "string"))
  assert.ok(viaOwn.reported.some(([name]) => name === "throwing attributes"))
  assert.ok(viaOwn.reported.some(([name]) => name === "frozen flow"))
})

test("a subclass that overrides onEnd keeps its override; its super.onEnd maps in complete mode", () => {
  const sub = new Overriding()
  assert.equal(sub.onEnd, Overriding.prototype.onEnd)
  const viaSub = run(sub, (p, span) => p.onEnd(span))
  const viaOwn = run(new GenkitForMaple(), (p, span) => p.onEnd(span))
  assert.equal(sub.calls, viaOwn.attributes.length)
  assert.deepEqual(viaSub.attributes, viaOwn.attributes)
  assert.deepEqual(viaSub.reported, viaOwn.reported)
  // A subclass that does not override onEnd takes complete mode's own.
  const plain = new Plain()
  assert.notEqual(plain.onEnd, GenkitForMaple.prototype.onEnd)
  assert.deepEqual(run(plain, (p, span) => p.onEnd(span)).attributes, viaOwn.attributes)
})

test("a wrapper or spy put on the prototype's onEnd before a processor is made sees its spans", () => {
  const original = GenkitForMaple.prototype.onEnd
  const seen = []
  GenkitForMaple.prototype.onEnd = function (span) {
    seen.push(span.name)
    return original.call(this, span)
  }
  try {
    const wrapped = new GenkitForMaple()
    assert.equal(wrapped.onEnd, GenkitForMaple.prototype.onEnd)
    const viaWrapper = run(wrapped, (p, span) => p.onEnd(span))
    assert.equal(seen.length, viaWrapper.attributes.length)
    assert.deepEqual(viaWrapper.attributes, run(new Overriding(), (p, span) => p.onEnd(span)).attributes)
  } finally {
    GenkitForMaple.prototype.onEnd = original
  }
  assert.notEqual(new GenkitForMaple().onEnd, GenkitForMaple.prototype.onEnd)
})

// Last in this file: the prototype stays frozen.
test("a frozen prototype (SES harden, Object.freeze) does not stop complete mode's processor", () => {
  Object.freeze(GenkitForMaple.prototype)
  const processor = new GenkitForMaple()
  assert.notEqual(processor.onEnd, GenkitForMaple.prototype.onEnd)
  assert.ok(!Object.keys(processor).includes("onEnd"))
  const span = failedFlow("RangeError: too far")
  processor.onEnd(span)
  assert.equal(span.attributes["error.type"], "RangeError")
  assert.equal(span.attributes["gen_ai.operation.name"], "invoke_agent")
})
