"use strict"
// Capture mode (issue 11, item 1): OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT and the
// `captureContent` option. Each case runs in a child process (the variable is read when the
// processor is constructed, as a user's process would set it), on the native path and on the
// pure-JS path (GENKIT_FOR_MAPLE_FORCE_JS=1), over the real Genkit corpus plus spans that the
// native path hands to the JS mapping (a lone surrogate: NEEDS_JS). Without content, the five
// content attributes are absent and every other attribute equals the corpus' expected value.
const test = require("node:test")
const assert = require("node:assert/strict")
const path = require("node:path")
const { spawnSync } = require("node:child_process")

const root = path.join(__dirname, "..")
const CONTENT = [
  "gen_ai.system_instructions",
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
]

// The child: a diag logger that records, the corpus through one processor; prints a summary.
// Reference mode, whose output the corpus holds; without the binding, scrubSecrets: false (the
// pure-JS mapping has no scrubber and writes no content while scrubbing is on: fallback.test.js).
const child = (optionSource, forceJs, mode = "reference") => `
const { diag, DiagLogLevel } = require("@opentelemetry/api")
const logs = []
diag.setLogger({ error: (m) => logs.push(m), warn: (m) => logs.push(m), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
const { GenkitForMaple } = require(${JSON.stringify(root)})
const { load } = require(${JSON.stringify(path.join(__dirname, "helpers", "fixtures.js"))})
const CONTENT = ${JSON.stringify(CONTENT)}
const rows = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
// Spans the native path cannot carry (a lone surrogate in genkit:input / genkit:output): mapped in JS.
const surrogate = rows.filter((r) => ["model", "tool"].includes(r.attributes["genkit:metadata:subtype"]) && typeof r.attributes["genkit:output"] === "string").slice(0, 6).map((r) => {
  const attributes = structuredClone(r.attributes)
  attributes["genkit:output"] = attributes["genkit:output"].replace(/"text":"/, '"text":"\\ud800')
  if (typeof attributes["genkit:input"] === "string") attributes["genkit:input"] = attributes["genkit:input"].replace(/"text":"/, '"text":"\\ud800')
  return { attributes, surrogate: true }
})
const processor = new GenkitForMaple({ mode: ${JSON.stringify(mode)}, ${forceJs ? "scrubSecrets: false, " : ""}...(${optionSource || "{}"}) })
let withContent = 0, contentKeys = 0, otherMismatches = 0, fullMismatches = 0, spans = 0
for (const row of rows.concat(surrogate)) {
  const attrs = structuredClone(row.attributes)
  processor.onEnd({ attributes: attrs, name: "x" })
  spans++
  const present = CONTENT.filter((k) => k in attrs)
  contentKeys += present.length
  if (present.length > 0) withContent++
  if (row.surrogate) continue
  const strip = (o) => Object.fromEntries(Object.entries(o).filter(([k]) => !CONTENT.includes(k)))
  if (JSON.stringify(strip(attrs)) !== JSON.stringify(strip(row.expected_attributes))) otherMismatches++
  if (JSON.stringify(attrs) !== JSON.stringify(row.expected_attributes)) fullMismatches++
}
// The pure-JS path's "native binding unavailable" warning is not the capture mode's.
const captureLogs = logs.filter((m) => !m.includes("native binding unavailable"))
process.stdout.write(JSON.stringify({ native: processor.isNative, spans, withContent, contentKeys, otherMismatches, fullMismatches, logs: captureLogs }))
`

function run({ env, option = "", forceJs = false, mode }) {
  const childEnv = { ...process.env, GENKIT_FOR_MAPLE_FORCE_JS: forceJs ? "1" : "" }
  delete childEnv.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
  if (env !== undefined) childEnv.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT = env
  const r = spawnSync(process.execPath, ["-e", child(option, forceJs, mode)], { cwd: root, encoding: "utf8", env: childEnv })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.native, !forceJs)
  return out
}

const ON = [undefined, "", "SPAN_ONLY", "span_only", "SPAN_AND_EVENT", "true", "TRUE", " True "]
const OFF = ["NO_CONTENT", "no_content", "EVENT_ONLY", "event_only", "false", "FALSE"]

for (const forceJs of [false, true]) {
  const pathName = forceJs ? "pure JS" : "native"
  test(`${pathName}: content on for ${ON.map(String).join(", ")}: the corpus maps byte for byte`, () => {
    let reference
    for (const env of ON) {
      const out = run({ env, forceJs })
      assert.equal(out.fullMismatches, 0, `env ${env}`)
      assert.ok(out.contentKeys > 100, `env ${env}: content written`)
      assert.deepStrictEqual(out.logs, [], `env ${env}: no warning`)
      reference ??= out.contentKeys
      assert.equal(out.contentKeys, reference)
    }
  })

  test(`${pathName}: no content for ${OFF.join(", ")}: the five attributes absent, every other attribute written`, () => {
    for (const env of OFF) {
      const out = run({ env, forceJs })
      assert.equal(out.contentKeys, 0, `env ${env}`)
      assert.equal(out.withContent, 0)
      assert.equal(out.otherMismatches, 0, `env ${env}: the other attributes`)
      assert.ok(out.fullMismatches > 0, "the corpus does carry content")
      assert.deepStrictEqual(out.logs, [])
      if (!forceJs) {
        // Complete mode (the core's whole-span mapping) holds the same mode.
        const complete = run({ env, forceJs, mode: "complete" })
        assert.equal(complete.contentKeys, 0, `complete, env ${env}`)
        assert.ok(complete.spans > 100)
      }
    }
  })

  test(`${pathName}: an unrecognised token gives one diag warning and content on`, () => {
    const out = run({ env: "SPAN_ONLYY", forceJs })
    assert.equal(out.fullMismatches, 0)
    assert.ok(out.contentKeys > 100)
    const warnings = out.logs.filter((m) => m.includes("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"))
    assert.equal(warnings.length, 1)
    assert.match(warnings[0], /"SPAN_ONLYY"/)
  })

  test(`${pathName}: the captureContent option beats the variable`, () => {
    let out = run({ env: "NO_CONTENT", option: "{ captureContent: true }", forceJs })
    assert.equal(out.fullMismatches, 0)
    out = run({ env: "SPAN_ONLY", option: "{ captureContent: false }", forceJs })
    assert.equal(out.contentKeys, 0)
    assert.equal(out.otherMismatches, 0)
    out = run({ env: "garbage", option: '{ captureContent: "NO_CONTENT" }', forceJs })
    assert.equal(out.contentKeys, 0)
    assert.deepStrictEqual(out.logs, [], "the variable is not read when the option is set")
    out = run({ env: "NO_CONTENT", option: '{ captureContent: "span_and_event" }', forceJs })
    assert.equal(out.fullMismatches, 0)
  })
}

test("an unrecognised captureContent option throws a TypeError at construction", () => {
  const { GenkitForMaple } = require("..")
  for (const bad of ["NO_CONTNET", 1, null, {}]) {
    assert.throws(() => new GenkitForMaple({ captureContent: bad }), TypeError)
  }
})

// A tool span's genkit:input that is not a string (an app or a plugin that sets one): under rules
// that read values (scrubbing, a cap) only a number or a boolean is written as it is; an array or
// an object is left out, on both paths (the pure-JS one without scrubbing: it has no scrubber).
test("a tool span's non-string genkit:input under a cap: numbers and booleans kept, arrays and objects left out, on both paths", () => {
  const secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
  const source = `
const { GenkitForMaple } = require(${JSON.stringify(root)})
const { diag, DiagLogLevel } = require("@opentelemetry/api")
const logs = []
diag.setLogger({ error: (m) => logs.push(m), warn: (m) => logs.push(m), info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
const inputs = [[${JSON.stringify(secret)}, "x"], { key: ${JSON.stringify(secret)} }, new String(${JSON.stringify(secret)}), 5, false]
const out = []
for (const options of [{ scrubSecrets: false, maxContentBytes: 1 << 20 }, { scrubSecrets: false }]) {
  const processor = new GenkitForMaple({ mode: "reference", ...options })
  out.push(inputs.map((input) => {
    const attrs = { "genkit:metadata:subtype": "tool", "genkit:name": "lookup", "genkit:input": input, "genkit:output": '{"r":2}' }
    processor.onEnd({ attributes: attrs, name: "x" })
    const v = attrs["gen_ai.tool.call.arguments"]
    return { has: "gen_ai.tool.call.arguments" in attrs, same: v === input, result: attrs["gen_ai.tool.call.result"] }
  }))
}
process.stdout.write(JSON.stringify({ out, logs }))
`
  for (const forceJs of [false, true]) {
    const env = { ...process.env, GENKIT_FOR_MAPLE_FORCE_JS: forceJs ? "1" : "" }
    const r = spawnSync(process.execPath, ["-e", source], { cwd: root, encoding: "utf8", env })
    assert.equal(r.status, 0, r.stderr)
    const { out, logs } = JSON.parse(r.stdout)
    const [capped, open] = out
    const what = forceJs ? "pure JS" : "native"
    assert.ok(logs.some((m) => m.includes("a tool input that is neither a string")), `${what}: diag says why: ${logs.join(" | ")}`)
    assert.ok(!logs.join(" ").includes(secret), `${what}: diag does not repeat the value`)
    assert.deepEqual(
      capped.map((c) => c.has),
      [false, false, false, true, true],
      `${what}, a cap: arrays and objects left out`,
    )
    assert.ok(capped.slice(3).every((c) => c.same), `${what}, a cap: a number and a boolean as they are`)
    assert.ok(open.every((c) => c.has && c.same), `${what}, rules that change nothing: every value as it is (seed 000)`)
    assert.ok(capped.concat(open).every((c) => c.result === '{"r":2}'), `${what}: the result written`)
  }
})
