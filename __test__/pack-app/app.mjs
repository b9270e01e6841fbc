// One Genkit flow, traced through genkit-for-maple installed from the packed tarball.
import { processor, sdk } from "./instrumentation.mjs"

import { createRequire } from "node:module"
import fs from "node:fs"
import { genkit, z } from "genkit"
import { setCustomMetadataAttribute } from "genkit/tracing"
import * as esm from "genkit-for-maple"

const ai = genkit({})

// A local, deterministic model: asks for the weather tool, then answers from its result.
const model = ai.defineModel(
  { name: "googleai/gemini-2.5-flash", supports: { multiturn: true, tools: true, systemRole: true } },
  async (request) => {
    const last = request.messages.at(-1)
    const response = last?.content.find((part) => part.toolResponse)?.toolResponse
    if (response === undefined) {
      return {
        message: {
          role: "model",
          content: [{ toolRequest: { name: "getWeather", ref: "call-1", input: { city: "Paris" } } }],
        },
        finishReason: "stop",
        usage: { inputTokens: 12, outputTokens: 7 },
      }
    }
    return {
      message: { role: "model", content: [{ text: `It is ${response.output.tempC} C in ${response.output.city}.` }] },
      finishReason: "stop",
      usage: { inputTokens: 30, outputTokens: 9 },
    }
  },
)

const getWeather = ai.defineTool(
  {
    name: "getWeather",
    description: "The current weather in a city",
    inputSchema: z.object({ city: z.string() }),
    outputSchema: z.object({ city: z.string(), tempC: z.number() }),
  },
  async ({ city }) => ({ city, tempC: 21 }),
)

const supportChat = ai.defineFlow(
  {
    name: "supportChat",
    inputSchema: z.object({ chatId: z.string(), text: z.string() }),
    outputSchema: z.string(),
  },
  async ({ chatId, text }) => {
    setCustomMetadataAttribute("conversationId", chatId)
    const response = await ai.generate({
      model,
      system: "You are a support agent.",
      prompt: text,
      tools: [getWeather],
    })
    return response.text
  },
)

let answer
try {
  answer = await supportChat({ chatId: "chat-42", text: "What is the weather in Paris?" })
} finally {
  await sdk.shutdown()
}

const require = createRequire(import.meta.url)
const cjs = require("genkit-for-maple")

// Every other subpath the package exports loads through both require and import.
const manifest = require("genkit-for-maple/package.json")
const subpaths = {}
for (const subpath of Object.keys(manifest.exports ?? {})) {
  if (subpath === "." || subpath === "./package.json") continue
  const specifier = `genkit-for-maple/${subpath.slice(2)}`
  const loads = {}
  try {
    loads.require = Object.keys(require(specifier)).length > 0
  } catch (error) {
    loads.require = String(error)
  }
  try {
    loads.import = Object.keys(await import(specifier)).length > 0
  } catch (error) {
    loads.import = String(error)
  }
  subpaths[subpath] = loads
}
const result = {
  answer,
  isNative: processor.isNative,
  cjsIsNative: new cjs.GenkitForMaple().isNative,
  sameClass: cjs.GenkitForMaple === esm.GenkitForMaple,
  esmKeys: Object.keys(esm).sort(),
  cjsKeys: Object.keys(cjs).sort(),
  requirePath: fs.realpathSync(require.resolve("genkit-for-maple")),
  importPath: fs.realpathSync(new URL(import.meta.resolve("genkit-for-maple"))),
  packageDir: fs.realpathSync(new URL("./node_modules/genkit-for-maple/", import.meta.url)),
  subpaths,
}
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`)
