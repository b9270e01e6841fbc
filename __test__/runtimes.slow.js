"use strict"
// Runtimes (issue 12): the real Genkit corpus and one real Genkit flow (NodeSDK, the README's setup,
// a model and a tool call) under Node.js 22 and 24, Bun and Deno, each installed from the npm
// registry by scripts/runtimes.js. Each must load the native binding (isNative) and write the
// corpus's expected attributes and the flow's gen_ai.* attributes. Its own step of `npm test`.
const test = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { spawnSync } = require("node:child_process")
const { runtimes } = require("../scripts/runtimes")
const { load } = require("./helpers/fixtures")
const { cleanEnv } = require("./helpers/bundle-app")

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "gfm-runtimes-"))
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
const spans = path.join(tmp, "spans.json")
const rows = load("genkit-1.42-spans.jsonl")
fs.writeFileSync(spans, JSON.stringify(rows))
const found = runtimes()
const ARGS = { deno: ["run", "--allow-all"] }

for (const name of ["node22", "node24", "bun", "deno"]) {
  test(`${name}: native, the corpus byte for byte, a Genkit flow with gen_ai.* attributes`, { skip: found[name] === undefined && `no ${name} package for ${process.platform}-${process.arch}` }, (t) => {
    const r = spawnSync(found[name], [...(ARGS[name] ?? []), path.join(__dirname, "runtimes", "probe.mjs")], {
      cwd: path.join(__dirname, "runtimes"),
      encoding: "utf8",
      env: cleanEnv({ GFM_SPANS: spans, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" }),
      maxBuffer: 64 * 1024 * 1024,
      timeout: 300_000,
    })
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
    const version = spawnSync(found[name], ["--version"], { encoding: "utf8" }).stdout.trim().split("\n")[0]
    t.diagnostic(version)
    const lines = r.stdout.split("\n")
    const result = JSON.parse(lines.find((l) => l.startsWith("RESULT ")).slice(7))
    assert.deepStrictEqual(result, { answer: "It is 21 C in Paris.", isNative: true, corpusNative: true, spans: rows.length, equal: rows.length, long: 3 })
    const flowSpans = lines.filter((l) => l.startsWith("SPAN ")).map((l) => JSON.parse(l.slice(5)))
    const ops = flowSpans.map((s) => s.attributes["gen_ai.operation.name"]).filter(Boolean).sort()
    assert.deepStrictEqual(ops, ["chat", "chat", "execute_tool", "invoke_agent"])
    const chat = flowSpans.find((s) => s.attributes["gen_ai.operation.name"] === "chat")
    assert.equal(chat.attributes["gen_ai.request.model"], "gemini-2.5-flash")
    assert.equal(flowSpans.find((s) => s.attributes["gen_ai.operation.name"] === "invoke_agent").attributes["gen_ai.conversation.id"], "chat-42")
  })
}
