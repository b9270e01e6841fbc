"use strict"
// The package as a user gets it: `npm pack` after the release build, the tarball's file list, then
// a fresh Genkit app outside the repo (under os.tmpdir()) that installs the tarball with the seed's
// command (`npm install <tgz> genkit @opentelemetry/sdk-node @opentelemetry/sdk-trace-base
// @opentelemetry/exporter-trace-otlp-proto`: no install script of ours runs, npm 11 would not run it
// anyway), runs one flow through `new GenkitForMaple()` (__test__/pack-app/), and type-checks there.
//
// It downloads from the npm registry (through the shared ~/.npm cache, --prefer-offline): the
// install takes 40-100 s with a warm cache (genkit brings about 900 MB of node_modules), the whole
// file 1.5-4 minutes. The temporary directory is removed at the end, pass or fail.
const { test, after } = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { referenceOnEnd } = require("./helpers/reference")

const root = path.join(__dirname, "..")
const fixture = path.join(__dirname, "pack-app")
const tsc = require.resolve("typescript/bin/tsc", { paths: [root] })
const SEED_PACKAGES = [
  "genkit",
  "@opentelemetry/sdk-node",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-proto",
]

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "genkit-for-maple-pack-")))
const app = path.join(tmp, "app")
after(() => fs.rmSync(tmp, { recursive: true, force: true }))

// What the steps found, for the later steps; each test fails clearly when an earlier one did.
const state = {}

/**
 * The environment of the child processes: `npm test` exports the repo's npm config to its scripts
 * (npm_config_legacy_peer_deps=true from .npmrc, npm_config_local_prefix=<repo>, ...). The app must
 * install like a user's, so those go; where npm finds its cache, config files, registry and
 * certificates stays. Also gone: the switches of this package and of OpenTelemetry that would change
 * what the app does.
 */
function cleanEnv() {
  const keep = new Set([
    "npm_config_cache",
    "npm_config_userconfig",
    "npm_config_globalconfig",
    "npm_config_registry",
    "npm_config_cafile",
    "npm_config_proxy",
    "npm_config_https_proxy",
    "npm_config_noproxy",
    "npm_config_strict_ssl",
  ])
  const env = {}
  for (const [key, value] of Object.entries(process.env)) {
    const k = key.toLowerCase()
    if (k.startsWith("npm_") && !keep.has(k) && !/^npm_config_@.*:registry$/.test(k)) continue
    if (key === "INIT_CWD" || key === "NODE_OPTIONS" || key === "GENKIT_ENV") continue
    if (key.startsWith("GENKIT_FOR_MAPLE_") || key.startsWith("NAPI_RS_") || key.startsWith("OTEL_")) continue
    env[key] = value
  }
  return env
}

function run(cmd, args, cwd) {
  const started = Date.now()
  const r = spawnSync(cmd, args, {
    cwd,
    env: cleanEnv(),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    shell: process.platform === "win32" && cmd === "npm",
  })
  if (r.error) throw r.error
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, seconds: (Date.now() - started) / 1000 }
}

const show = (r) => `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`

test("npm pack: the tarball holds the entry points, the loader, js/ and the built .node, nothing else", (t) => {
  const nodeFiles = fs.readdirSync(root).filter((f) => /^genkit-for-maple\..+\.node$/.test(f))
  assert.ok(
    nodeFiles.length > 0 && fs.existsSync(path.join(root, "binding.js")),
    "no built addon at the repo root: run `npm run build` (npm test does) before this test",
  )
  assert.ok(!tmp.startsWith(root + path.sep), `the temporary directory ${tmp} is inside the repo`)

  const r = run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", tmp], root)
  assert.equal(r.status, 0, show(r))
  const [pack] = JSON.parse(r.stdout)
  const files = pack.files.map((f) => f.path.split(path.sep).join("/")).sort()
  t.diagnostic(`${pack.filename}: ${files.length} files, ${pack.size} bytes packed, ${pack.unpackedSize} unpacked`)

  const jsFiles = fs.readdirSync(path.join(root, "js")).map((f) => `js/${f}`)
  for (const required of [
    "package.json",
    "README.md",
    "index.js",
    "index.mjs",
    "index.d.ts",
    "binding.js",
    ...jsFiles,
    ...nodeFiles,
  ]) {
    assert.ok(files.includes(required), `${required} is missing from the tarball: ${files.join(", ")}`)
  }
  // An allow-list: no Rust sources, build output, tests, fixtures, examples or node_modules.
  const allowed = (f) =>
    /^(package\.json|README\.md|LICEN[CS]E(\.\w+)?|index\.(js|mjs|d\.ts)|binding\.js)$/.test(f) ||
    /^js\/[^/]+\.(js|mjs|d\.ts)$/.test(f) ||
    /^genkit-for-maple\.[^/]+\.node$/.test(f)
  assert.deepEqual(files.filter((f) => !allowed(f)), [], "files that do not belong in the package")
  for (const f of files) {
    assert.doesNotMatch(f, /^(src|core|target|node_modules|__test__|npm|examples|scripts|bench)\//, f)
  }

  // Installing must need no script of ours (npm 11 runs no dependency install script by default).
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
  for (const script of ["preinstall", "install", "postinstall", "prepare"]) {
    assert.equal(manifest.scripts?.[script], undefined, `package.json has a "${script}" script`)
  }
  state.tarball = path.join(tmp, pack.filename)
  assert.ok(fs.statSync(state.tarball).size > 0)
})

test("a fresh Genkit app outside the repo installs the tarball with the seed's packages", (t) => {
  assert.ok(state.tarball, "npm pack failed")
  fs.mkdirSync(app)
  fs.writeFileSync(
    path.join(app, "package.json"),
    `${JSON.stringify({ name: "genkit-for-maple-pack-app", private: true, type: "module" }, null, 2)}\n`,
  )
  for (const f of fs.readdirSync(fixture)) fs.copyFileSync(path.join(fixture, f), path.join(app, f))

  const r = run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", state.tarball, ...SEED_PACKAGES],
    app,
  )
  assert.equal(r.status, 0, show(r))
  const versions = {}
  for (const name of [...SEED_PACKAGES, "@opentelemetry/api", "genkit-for-maple"]) {
    versions[name] = JSON.parse(fs.readFileSync(path.join(app, "node_modules", name, "package.json"), "utf8")).version
  }
  t.diagnostic(`npm install took ${r.seconds.toFixed(1)} s; installed ${JSON.stringify(versions)}`)
  // The package came from the tarball, not from a link to the repo.
  const installed = path.join(app, "node_modules", "genkit-for-maple")
  assert.equal(fs.lstatSync(installed).isSymbolicLink(), false)
  assert.ok(fs.existsSync(path.join(installed, "binding.js")))
  state.installed = installed
})

test("one flow in the installed app: flow, chat and tool spans carry the gen_ai.* attributes, natively", () => {
  assert.ok(state.installed, "the install failed")
  const r = run(process.execPath, ["app.mjs"], app)
  assert.equal(r.status, 0, show(r))
  const lines = r.stdout.split("\n")
  const spans = lines.filter((l) => l.startsWith("SPAN ")).map((l) => JSON.parse(l.slice(5)))
  const resultLine = lines.find((l) => l.startsWith("RESULT "))
  assert.ok(resultLine, show(r))
  const result = JSON.parse(resultLine.slice(7))

  // Every other exported subpath (./receiver, ...) loads there through require and import.
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
  const subpaths = Object.keys(manifest.exports ?? {}).filter((s) => s !== "." && s !== "./package.json")
  assert.deepEqual(
    result.subpaths,
    Object.fromEntries(subpaths.map((s) => [s, { require: true, import: true }])),
    "exported subpaths that do not load in the installed app",
  )
  delete result.subpaths

  // How the package resolved there: from the app's node_modules, index.js / index.mjs, one class.
  assert.deepEqual(result, {
    answer: "It is 21 C in Paris.",
    isNative: true,
    cjsIsNative: true,
    sameClass: true,
    esmKeys: ["CONTENT_ATTRIBUTES", "GenkitForMaple", "NoContentSpanExporter", "NoContentSpanProcessor", "default", "mapSpanJs"],
    cjsKeys: ["CONTENT_ATTRIBUTES", "GenkitForMaple", "NoContentSpanExporter", "NoContentSpanProcessor", "mapSpanJs"],
    requirePath: path.join(state.installed, "index.js"),
    importPath: path.join(state.installed, "index.mjs"),
    packageDir: state.installed,
  })
  assert.doesNotMatch(r.stderr, /native binding unavailable/)

  const byOperation = (op) => spans.filter((s) => s.attributes["gen_ai.operation.name"] === op).map((s) => s.attributes)
  const [flow, ...moreFlows] = byOperation("invoke_agent")
  assert.deepEqual(moreFlows, [])
  assert.equal(flow["genkit:name"], "supportChat")
  assert.equal(flow["gen_ai.agent.name"], "supportChat")
  assert.equal(flow["gen_ai.conversation.id"], "chat-42")

  const user = { role: "user", parts: [{ type: "text", content: "What is the weather in Paris?" }] }
  const toolCall = { type: "tool_call", id: "call-1", name: "getWeather", arguments: { city: "Paris" } }
  const chats = byOperation("chat")
  assert.equal(chats.length, 2, "two model calls: the tool request, then the answer")
  for (const chat of chats) {
    assert.equal(chat["gen_ai.provider.name"], "googleai")
    assert.equal(chat["gen_ai.request.model"], "gemini-2.5-flash")
    assert.equal(chat["gen_ai.system_instructions"], '[{"type":"text","content":"You are a support agent."}]')
    assert.deepEqual(chat["gen_ai.response.finish_reasons"], ["stop"])
  }
  const [ask, answer] = chats
  assert.equal(ask["gen_ai.input.messages"], JSON.stringify([user]))
  assert.equal(
    ask["gen_ai.output.messages"],
    JSON.stringify([{ role: "assistant", parts: [toolCall], finish_reason: "stop" }]),
  )
  assert.equal(ask["gen_ai.usage.input_tokens"], 12)
  assert.equal(ask["gen_ai.usage.output_tokens"], 7)
  assert.equal(
    answer["gen_ai.input.messages"],
    JSON.stringify([
      user,
      { role: "assistant", parts: [toolCall] },
      {
        role: "tool",
        parts: [{ type: "tool_call_response", id: "call-1", response: { city: "Paris", tempC: 21 } }],
      },
    ]),
  )
  assert.equal(
    answer["gen_ai.output.messages"],
    JSON.stringify([
      { role: "assistant", parts: [{ type: "text", content: "It is 21 C in Paris." }], finish_reason: "stop" },
    ]),
  )
  assert.equal(answer["gen_ai.usage.input_tokens"], 30)
  assert.equal(answer["gen_ai.usage.output_tokens"], 9)

  const tools = byOperation("execute_tool")
  assert.deepEqual(tools.length, 1)
  assert.equal(tools[0]["gen_ai.tool.name"], "getWeather")
  assert.equal(tools[0]["gen_ai.tool.call.arguments"], '{"city":"Paris"}')
  assert.equal(tools[0]["gen_ai.tool.call.result"], '{"city":"Paris","tempC":21}')

  // Every exported span, the generate util spans included, is what the seed's reference processor
  // makes of the same genkit:* attributes: nothing more, nothing less.
  assert.ok(spans.length >= 6, `spans: ${spans.map((s) => s.name).join(", ")}`)
  for (const span of spans) {
    const expected = Object.fromEntries(Object.entries(span.attributes).filter(([k]) => !k.startsWith("gen_ai.")))
    referenceOnEnd(expected)
    assert.deepEqual(span.attributes, expected, span.name)
  }
})

/** The README's `instrumentation.ts` block, verbatim. */
function readmeInstrumentation() {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const block = /```ts\n(\/\/ instrumentation\.ts[^\n]*\n[\s\S]*?)```/.exec(readme)
  assert.ok(block, 'README.md has no ```ts block starting with "// instrumentation.ts"')
  assert.ok(
    block[1].includes("new GenkitForMaple(), ") || block[1].includes("new OTLPTraceExporter({ genkit: true })"),
    "the README's instrumentation.ts uses new GenkitForMaple() or the exporter's fused mode",
  )
  return block[1]
}

/** Writes a strict tsconfig.json over `files` into `dir` and runs the root's tsc there. */
function typecheck(dir, files) {
  fs.writeFileSync(
    path.join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        types: ["node"],
        // @types/node arrives with the seed's packages today; the repo's is the fallback.
        typeRoots: ["./node_modules/@types", path.join(root, "node_modules", "@types")],
        // genkit's own declarations do not compile without it (dotprompt imports handlebars'
        // untyped dist file: TS7016); index.d.ts itself is checked without it by typecheck.test.js.
        skipLibCheck: true,
      },
      files,
    }),
  )
  const r = run(process.execPath, [tsc, "-p", "tsconfig.json", "--pretty", "false"], dir)
  return `${r.stdout}${r.stderr}`
}

/** tsc errors as `file:line code: first line of the message`, keyed by file. */
function tscErrors(output, dir = app) {
  const byFile = new Map()
  let other = []
  for (const line of output.split("\n")) {
    const m = /^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$/.exec(line)
    if (!m) continue
    const file = path.basename(m[1])
    if (!byFile.has(file)) byFile.set(file, [])
    byFile.get(file).push({ line: Number(m[2]), code: m[3], message: m[4] })
    if (path.dirname(path.resolve(dir, m[1])) !== dir) other = [...other, line]
  }
  return { byFile, other }
}

test("tsc --noEmit --strict in the installed app: GenkitForMaple fits the SDK versions npm chose", (t) => {
  assert.ok(state.installed, "the install failed")
  // The README's instrumentation.ts, verbatim, and the same without GenkitForMaple in the array.
  const snippet = readmeInstrumentation()
  fs.writeFileSync(path.join(app, "instrumentation.ts"), snippet)
  fs.writeFileSync(
    path.join(app, "instrumentation-without.ts"),
    snippet.replace("new GenkitForMaple(), ", "").replace("new OTLPTraceExporter({ genkit: true })", "new OTLPTraceExporter()"),
  )

  const files = ["instrumentation.ts", "instrumentation-without.ts", "processor-types.ts", "wrong.ts"]
  const output = typecheck(app, files)
  const { byFile, other } = tscErrors(output)
  assert.deepEqual(other, [], "errors outside the app's own files")
  for (const file of byFile.keys()) assert.ok(files.includes(file), `an error in ${file}:\n${output}`)

  // 1. GenkitForMaple against the installed SDKs' own types: no error.
  assert.deepEqual(byFile.get("processor-types.ts") ?? [], [], output)

  // 2. Wrong uses fail, on exactly the marked lines: the packed index.d.ts is in use.
  const expected = []
  fs.readFileSync(path.join(app, "wrong.ts"), "utf8")
    .split("\n")
    .forEach((text, i) => {
      const m = /\/\/ error: (TS\d+)\s*$/.exec(text)
      if (m) expected.push({ line: i + 1, code: m[1] })
    })
  assert.deepEqual(
    (byFile.get("wrong.ts") ?? []).map(({ line, code }) => ({ line, code })),
    expected,
    output,
  )

  // 3. The README's instrumentation.ts: GenkitForMaple adds no error. With the seed's command npm
  //    pairs sdk-node 0.223 (built on sdk-trace-base 2.x) with a top-level sdk-trace-base 1.25
  //    (genkit pins ~1.25), whose BatchSpanProcessor does not fit sdk-node's SpanProcessor type:
  //    tsc rejects the README's file with or without GenkitForMaple. Those errors are reported here.
  const key = (e) => `${e.line} ${e.code} ${e.message}`
  const withProcessor = (byFile.get("instrumentation.ts") ?? []).map(key)
  const without = (byFile.get("instrumentation-without.ts") ?? []).map(key)
  assert.deepEqual(withProcessor, without, `errors GenkitForMaple causes in the README's instrumentation.ts:\n${output}`)
  if (withProcessor.length > 0) {
    t.diagnostic(
      "the README's instrumentation.ts does not type-check with the SDK versions the seed's command installs, " +
        "with or without GenkitForMaple (the same errors):",
    )
    for (const error of withProcessor) t.diagnostic(`  instrumentation.ts line ${error}`)
  }
})

// The README's own install command, when it is not the seed's (a pinned @opentelemetry/sdk-trace-base@2,
// say): a second fresh app installs exactly that, and there the README's instrumentation.ts must
// type-check with no error at all. When it is the seed's, the test above already covered it.
const readmeInstall = /^npm install (genkit-for-maple( [^\s]+)+)\s*$/m.exec(
  fs.readFileSync(path.join(root, "README.md"), "utf8"),
)
const readmePackages = readmeInstall ? readmeInstall[1].split(" ").filter((p) => p !== "genkit-for-maple") : []
const sameAsSeed = JSON.stringify([...readmePackages].sort()) === JSON.stringify([...SEED_PACKAGES].sort())

test(
  "the README's install command in a fresh app: the README's instrumentation.ts type-checks with no error",
  {
    skip: !readmeInstall
      ? "README.md has no `npm install genkit-for-maple ...` line"
      : sameAsSeed
        ? "the README's install command is the seed's: the app above is that install"
        : false,
  },
  (t) => {
    assert.ok(state.tarball, "npm pack failed")
    const dir = path.join(tmp, "readme-app")
    fs.mkdirSync(dir)
    fs.writeFileSync(
      path.join(dir, "package.json"),
      `${JSON.stringify({ name: "genkit-for-maple-readme-app", private: true, type: "module" }, null, 2)}\n`,
    )
    const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", state.tarball, ...readmePackages], dir)
    assert.equal(r.status, 0, show(r))
    t.diagnostic(`npm install ${readmePackages.join(" ")}: ${r.seconds.toFixed(1)} s`)
    fs.writeFileSync(path.join(dir, "instrumentation.ts"), readmeInstrumentation())
    const output = typecheck(dir, ["instrumentation.ts"])
    assert.equal(output.trim(), "", `tsc reported:\n${output}`)
  },
)
