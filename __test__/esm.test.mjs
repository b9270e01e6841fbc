// The package's two entry points, resolved by name through package.json "exports" (a package may
// import itself by name): `import { GenkitForMaple } from "genkit-for-maple"` (index.mjs) and
// `require("genkit-for-maple")` (index.js) give the same class, so a span processor made through
// one is the other's too (no dual-package hazard). pack.test.js checks the same in an installed app.
import { test } from "node:test"
import assert from "node:assert/strict"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import path from "node:path"

import * as esm from "genkit-for-maple"
import defaultExport, { GenkitForMaple, mapSpanJs } from "genkit-for-maple"

const require = createRequire(import.meta.url)
const cjs = require("genkit-for-maple")
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")

test("require and import resolve to index.js and index.mjs of this package", () => {
  assert.equal(require.resolve("genkit-for-maple"), path.join(root, "index.js"))
  assert.equal(import.meta.resolve("genkit-for-maple"), new URL("../index.mjs", import.meta.url).href)
})

test("the ES module exports exactly the CommonJS exports, the same objects, plus default", () => {
  assert.deepEqual(Object.keys(esm).sort(), [...Object.keys(cjs), "default"].sort())
  for (const key of Object.keys(cjs)) assert.equal(esm[key], cjs[key], key)
  assert.equal(defaultExport, cjs)
  assert.equal(GenkitForMaple, cjs.GenkitForMaple)
  assert.equal(mapSpanJs, cjs.mapSpanJs)
  assert.equal(typeof GenkitForMaple, "function")
})

test("GenkitForMaple from the ES module is a native SpanProcessor that maps a flow span", async () => {
  const processor = new GenkitForMaple({ mode: "reference" })
  assert.ok(processor instanceof cjs.GenkitForMaple)
  assert.equal(processor.isNative, true)
  for (const method of ["onStart", "onEnd", "forceFlush", "shutdown"]) assert.equal(typeof processor[method], "function")

  const attributes = {
    "genkit:metadata:subtype": "flow",
    "genkit:name": "supportChat",
    "genkit:metadata:conversationId": "chat-1",
  }
  processor.onEnd({ name: "supportChat", attributes })
  assert.deepEqual(attributes, {
    "genkit:metadata:subtype": "flow",
    "genkit:name": "supportChat",
    "genkit:metadata:conversationId": "chat-1",
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "supportChat",
    "gen_ai.conversation.id": "chat-1",
  })

  const model = {
    "genkit:metadata:subtype": "model",
    "genkit:name": "googleai/gemini-2.5-flash",
    "genkit:input": JSON.stringify({ messages: [{ role: "user", content: [{ text: "hi" }] }] }),
    "genkit:output": JSON.stringify({
      message: { role: "model", content: [{ text: "hello" }] },
      finishReason: "stop",
      usage: { inputTokens: 3, outputTokens: 5 },
    }),
  }
  processor.onEnd({ name: "googleai/gemini-2.5-flash", attributes: model })
  assert.equal(model["gen_ai.operation.name"], "chat")
  assert.equal(model["gen_ai.provider.name"], "googleai")
  assert.equal(model["gen_ai.request.model"], "gemini-2.5-flash")
  assert.equal(model["gen_ai.input.messages"], '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]')
  assert.equal(
    model["gen_ai.output.messages"],
    '[{"role":"assistant","parts":[{"type":"text","content":"hello"}],"finish_reason":"stop"}]',
  )
  assert.deepEqual(model["gen_ai.response.finish_reasons"], ["stop"])
  assert.equal(model["gen_ai.usage.input_tokens"], 3)
  assert.equal(model["gen_ai.usage.output_tokens"], 5)

  await processor.forceFlush()
  await processor.shutdown()
})
