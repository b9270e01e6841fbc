"use strict"
// Issue 13: the native path never aborts, whatever the size. Each case runs in a child process
// limited to 2.3 GB of address space (`prlimit --as`) with a 1.5 GB V8 heap, as a new user tried
// it: a 256 MiB attribute (ASCII and two-byte, tool result and model answer) is mapped and the
// process exits 0 (it used to abort with `memory allocation of 805306374 bytes failed`). Around
// the native hand-off size (bindings' nativeLimits().handoffUnits) both sides map the same.
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const path = require("node:path")

const root = path.join(__dirname, "..")
const hasPrlimit = spawnSync("prlimit", ["--version"]).status === 0

/** Runs one span of `kind` with a `mib` MiB text of `unit` under the address-space limit. */
function underLimit(kind, unit, mib) {
  const script = `
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    const unit = ${JSON.stringify(unit)}
    const text = unit.repeat(${mib} * 2 ** 20 / (unit.charCodeAt(0) > 0xff ? 2 : 1))
    // No content cap (complete mode caps at 256 KiB by default) and no scrubbing: issue 13's
    // memory policy of the mapping itself (issue 11's cap and scrubber are measured elsewhere).
    const p = new GenkitForMaple({ maxContentBytes: Infinity, scrubSecrets: false })
    const attrs = ${JSON.stringify(kind)} === "tool"
      ? { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": "{}", "genkit:output": '"' + text + '"' }
      : { "genkit:metadata:subtype": "model", "genkit:name": "g/m", "genkit:output": '{"message":{"role":"model","content":[{"text":"' + text + '"}]},"finishReason":"stop"}' }
    p.onEnd({ name: "s", attributes: attrs })
    const out = ${JSON.stringify(kind)} === "tool" ? attrs["gen_ai.tool.call.result"] : attrs["gen_ai.output.messages"]
    // The model answer is checked piecewise: a second 256 MiB string would exhaust the heap here.
    const head = '[{"role":"assistant","parts":[{"type":"text","content":"'
    const tail = '"}],"finish_reason":"stop"}]'
    const same = ${JSON.stringify(kind)} === "tool"
      ? out === text
      : typeof out === "string" && out.length === head.length + text.length + tail.length && out.startsWith(head) && out.endsWith(tail) &&
        out.slice(head.length, head.length + 4096) === text.slice(0, 4096) && out.slice(-tail.length - 4096, -tail.length) === text.slice(-4096)
    process.stdout.write(JSON.stringify({ native: p.isNative, same }))
  `
  return spawnSync("prlimit", ["--as=2300000000", process.execPath, "--max-old-space-size=1500", "-e", script], {
    encoding: "utf8",
    maxBuffer: 1 << 20,
  })
}

for (const kind of ["tool", "model"]) {
  for (const [unit, label] of [["a", "ASCII"], ["ж", "two-byte"]]) {
    test(`a 256 MiB ${label} ${kind} attribute under a 2.3 GB address-space limit: mapped, exit 0`, { skip: !hasPrlimit && "no prlimit" }, () => {
      const r = underLimit(kind, unit, 256)
      assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ""}: ${r.stderr.slice(0, 500)}`)
      assert.equal(r.stderr, "")
      assert.deepStrictEqual(JSON.parse(r.stdout), { native: true, same: true })
    })
  }
}

test("around the hand-off size, every length maps the same on both paths (ASCII, two-byte, escapes)", () => {
  const binding = require("../binding.js")
  const { GenkitForMaple } = require("..")
  const { mapSpanJs } = require("../js/mapping")
  const { handoffUnits, latin1Units } = binding.nativeLimits()
  assert.ok(latin1Units < handoffUnits)
  const p = new GenkitForMaple({ maxContentBytes: Infinity }) // (complete mode's default cap is 256 KiB)
  // Lengths of the whole attribute value: each side of both limits.
  for (const total of [latin1Units - 1, latin1Units, latin1Units + 1, handoffUnits - 1, handoffUnits, handoffUnits + 1]) {
    for (const unit of ["a", "ж", "\\n", "😀"]) {
      const body = unit.repeat(Math.floor((total - 2) / unit.length))
      const output = `"${body}${"a".repeat(total - 2 - body.length)}"`
      assert.equal(output.length, total)
      const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:output": output }
      const js = { ...tool }
      p.onEnd({ name: "s", attributes: tool })
      mapSpanJs(js)
      assert.ok(tool["gen_ai.tool.call.result"] === js["gen_ai.tool.call.result"], `${total} ${unit}`)
      assert.equal(tool["gen_ai.tool.call.result"].length, JSON.parse(output).length)
    }
  }
})

test("complete mode, a value over the hand-off size: the reference mapping in JS, and diag says so (not 'could not allocate memory')", () => {
  const { diag, DiagLogLevel } = require("@opentelemetry/api")
  const binding = require("../binding.js")
  const { GenkitForMaple } = require("..")
  const { mapSpanJs } = require("../js/mapping")
  const { handoffUnits } = binding.nativeLimits()
  const logs = []
  diag.setLogger({ error: (m) => logs.push(m), warn: (m) => logs.push(m), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
  try {
    for (const [label, over] of [["over", 1], ["at", 0]]) {
      logs.length = 0
      const p = new GenkitForMaple({ maxContentBytes: Infinity, scrubSecrets: false })
      const text = "a".repeat(handoffUnits - 2 + over)
      // A number input: complete mode's whole-span mapping (its tool path, js/complete.js
      // mapToolFast, streams a long plain result as a slice and has no hand-off size).
      const tool = { "genkit:metadata:subtype": "tool", "genkit:name": "t", "genkit:input": 7, "genkit:output": `"${text}"` }
      const js = { ...tool }
      p.onEnd({ name: "big", attributes: tool })
      mapSpanJs(js)
      assert.ok(tool["gen_ai.tool.call.result"] === text, `${label}: the result written`)
      assert.equal(tool["gen_ai.tool.call.result"], js["gen_ai.tool.call.result"])
      const said = logs.join(" | ")
      assert.ok(!said.includes("could not allocate memory"), `${label}: ${said}`)
      if (over) assert.ok(said.includes("longer than the native mapping takes") && said.includes('"big"'), said)
      else assert.equal(said, "", "at the hand-off size: mapped natively, nothing to say")
    }
  } finally {
    diag.disable()
  }
})

test("complete mode's fallback over the hand-off size: a tool.v2 span mapped as a tool, each getter called once", () => {
  const binding = require("../binding.js")
  const { GenkitForMaple } = require("..")
  const { handoffUnits } = binding.nativeLimits()
  const p = new GenkitForMaple({ maxContentBytes: Infinity, scrubSecrets: false })
  const text = "b".repeat(handoffUnits)
  for (const subtype of ["tool", "tool.v2", "model"]) {
    const reads = { "genkit:input": 0, "genkit:output": 0 }
    const values = {
      "genkit:input": subtype === "model" ? JSON.stringify({ messages: [{ role: "user", content: [{ text }] }] }) : '{"q":1}',
      "genkit:output": subtype === "model" ? JSON.stringify({ message: { role: "model", content: [{ text: "ok" }] }, finishReason: "stop" }) : `"${text}"`,
    }
    const attrs = { "genkit:metadata:subtype": subtype, "genkit:name": subtype === "model" ? "g/m" : "lookup" }
    for (const key of Object.keys(reads)) {
      Object.defineProperty(attrs, key, { enumerable: true, get: () => (reads[key]++, values[key]) })
    }
    p.onEnd({ name: "big", attributes: attrs })
    assert.deepEqual(reads, { "genkit:input": 1, "genkit:output": 1 }, `${subtype}: each getter once`)
    if (subtype === "model") {
      assert.equal(attrs["gen_ai.operation.name"], "chat")
      assert.equal(JSON.parse(attrs["gen_ai.input.messages"])[0].parts[0].content, text)
      assert.deepEqual(attrs["gen_ai.response.finish_reasons"], ["stop"])
    } else {
      assert.equal(attrs["gen_ai.operation.name"], "execute_tool", subtype)
      assert.equal(attrs["gen_ai.tool.name"], "lookup")
      assert.equal(attrs["gen_ai.tool.call.arguments"], '{"q":1}')
      assert.ok(attrs["gen_ai.tool.call.result"] === text, `${subtype}: the result`)
    }
  }
})
