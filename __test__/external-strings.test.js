"use strict"
// Issue 9: long attribute values made as external strings (src/external.rs). From 128 KiB of
// characters in V8's form, the native mapping hands V8 the buffer it wrote (ASCII, as Latin-1) or
// one UTF-16 buffer made for the string, instead of a copy in V8's large-object space; V8 frees
// them through their finalizer when it collects the strings, and is told of their bytes
// (napi_adjust_external_memory) so that it collects them. Checked here: the same attributes with
// and without (GENKIT_FOR_MAPLE_EXTERNAL_STRINGS=0), equal to the pure-JS mapping in reference
// mode; the bytes are counted while the strings live and given back once they are collected,
// including when V8 decides when (no explicit gc); a worker that exits or is terminated with
// such strings alive does not take the process down.
const test = require("node:test")
const assert = require("node:assert/strict")
const { spawnSync } = require("node:child_process")
const { Worker } = require("node:worker_threads")
const path = require("node:path")

const root = path.join(__dirname, "..")
const synth = path.join(root, "bench", "synth.js")
const OUTPUTS = ["gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages"]

/** Runs `script` in a child Node.js with `env` added; answers its JSON output. */
function child(script, env = {}, args = []) {
  const r = spawnSync(process.execPath, [...args, "-e", script], {
    encoding: "utf8",
    maxBuffer: 64 << 20,
    env: { ...process.env, ...env },
  })
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ""}: ${r.stderr.slice(0, 2000)}`)
  return JSON.parse(r.stdout)
}

// Maps synthetic model spans of these sizes in both modes; prints every attribute the processor
// added and how much V8's external memory grew while the mapped attribute maps were held.
const MAP_SPANS = `
  const { GenkitForMaple } = require(${JSON.stringify(root)})
  const { modelSpan } = require(${JSON.stringify(synth)})
  const out = { cases: [], external: 0, longBytes: 0 }
  const held = []
  const before = process.memoryUsage().external
  for (const mode of ["reference", "complete"]) {
    // No cap in complete mode: its 256 KiB default would keep the long outputs short.
    const p = new GenkitForMaple({ mode, maxContentBytes: Infinity })
    for (const size of [60000, 200000, 1200000]) {
      for (const script of ["ascii", "multi"]) {
        const attrs = modelSpan(size, script)
        const keys = new Set(Object.keys(attrs))
        p.onEnd({ name: "googleai/gemini-2.5-flash", attributes: attrs, spanContext: () => ({ traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 1 }), status: { code: 0 }, events: [] })
        held.push(attrs)
        const added = Object.fromEntries(Object.entries(attrs).filter(([k]) => !keys.has(k)))
        for (const k of ${JSON.stringify(OUTPUTS)}) {
          const v = added[k]
          if (typeof v !== "string") continue
          const ascii = /^[\\x00-\\x7f]*$/.test(v)
          if ((ascii ? 1 : 2) * v.length >= 128 * 1024) out.longBytes += (ascii ? 1 : 2) * v.length
        }
        out.cases.push({ mode, size, script, added })
      }
    }
  }
  out.external = process.memoryUsage().external - before
  process.stdout.write(JSON.stringify(out))
`

test("long outputs: the same attributes with and without external strings, and their bytes counted by V8", () => {
  const on = child(MAP_SPANS)
  const off = child(MAP_SPANS, { GENKIT_FOR_MAPLE_EXTERNAL_STRINGS: "0" })
  assert.equal(on.cases.length, 12)
  assert.deepStrictEqual(on.cases, off.cases)
  // Every case wrote its messages (the long ones are what this is about).
  for (const c of on.cases) {
    assert.equal(typeof c.added["gen_ai.input.messages"], "string", `${c.mode} ${c.size} ${c.script}`)
    assert.equal(typeof c.added["gen_ai.output.messages"], "string", `${c.mode} ${c.size} ${c.script}`)
  }
  // 200 KB and 1.2 MB spans in both scripts and modes hold several MB of long outputs.
  assert.ok(on.longBytes > 8e6, `${on.longBytes}`)
  // With external strings V8 counts their bytes as external memory (within what other external
  // memory the process freed meanwhile); copied into its heap, not.
  assert.ok(on.external >= 0.9 * on.longBytes, `external ${on.external} < ${on.longBytes}`)
  assert.ok(off.external < 2e6, `external ${off.external} without external strings`)
})

test("reference mode: long outputs equal the pure-JS mapping's, byte for byte", () => {
  const { GenkitForMaple } = require("..")
  const { modelSpan } = require(synth)
  const native = new GenkitForMaple({ mode: "reference" })
  const pure = new GenkitForMaple({ mode: "reference" })
  pure.native = undefined
  for (const size of [200000, 1200000]) {
    for (const script of ["ascii", "multi"]) {
      const a = modelSpan(size, script)
      const b = modelSpan(size, script)
      native.onEnd({ name: "googleai/gemini-2.5-flash", attributes: a })
      pure.onEnd({ name: "googleai/gemini-2.5-flash", attributes: b })
      for (const k of OUTPUTS) assert.ok(a[k] === b[k], `${size} ${script} ${k}`)
      // Usable as any string: parsed, sliced, joined, measured.
      const messages = JSON.parse(a["gen_ai.input.messages"])
      assert.ok(Array.isArray(messages) && messages.length > 10)
      assert.equal((a["gen_ai.output.messages"] + "").slice(0, 2), "[{")
      assert.equal(Buffer.byteLength(a["gen_ai.input.messages"]), Buffer.byteLength(b["gen_ai.input.messages"]))
    }
  }
})

test("collected external strings give their memory back, with and without an explicit gc", () => {
  const script = `
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    const { modelSpan } = require(${JSON.stringify(synth)})
    const p = new GenkitForMaple({ mode: "reference" })
    const spans = { ascii: modelSpan(1000000, "ascii"), multi: modelSpan(1000000, "multi") }
    const entries = Object.fromEntries(Object.entries(spans).map(([k, v]) => [k, Object.entries(v)]))
    const copy = (list) => { const a = {}; for (const [k, v] of list) a[k] = v; return a }
    const base = process.memoryUsage()
    let peakRss = 0, peakExternal = 0, written = 0
    // 400 spans of 1 MB (about 1.4 GB of output strings), results dropped, no gc() called: V8
    // collects them because it is told of their bytes.
    for (let i = 0; i < 400; i++) {
      const attrs = copy(entries[i % 2 ? "multi" : "ascii"])
      p.onEnd({ name: "googleai/gemini-2.5-flash", attributes: attrs })
      written += attrs["gen_ai.input.messages"].length
      const m = process.memoryUsage()
      peakRss = Math.max(peakRss, m.rss)
      peakExternal = Math.max(peakExternal, m.external)
    }
    globalThis.gc(); globalThis.gc()
    const after = process.memoryUsage()
    process.stdout.write(JSON.stringify({ written, baseRss: base.rss, baseExternal: base.external, peakRss, peakExternal, afterExternal: after.external, afterRss: after.rss }))
  `
  const r = child(script, {}, ["--expose-gc"])
  assert.ok(r.written > 400 * 900000, `${r.written}`)
  // Without V8 being told, this loop held every string: 1.2 GB after 1,000 such spans.
  assert.ok(r.peakExternal - r.baseExternal < 400e6, `peak external ${r.peakExternal - r.baseExternal}`)
  assert.ok(r.peakRss - r.baseRss < 600e6, `peak RSS growth ${r.peakRss - r.baseRss}`)
  // Once collected, the bytes are off V8's count again (within what the last span holds).
  assert.ok(r.afterExternal - r.baseExternal < 8e6, `external after gc ${r.afterExternal - r.baseExternal}`)
})

test("a worker that ends with external strings alive (exit and terminate) leaves the process running", async () => {
  const body = `
    const { parentPort, workerData } = require("node:worker_threads")
    const { GenkitForMaple } = require(${JSON.stringify(root)})
    const { modelSpan } = require(${JSON.stringify(synth)})
    const p = new GenkitForMaple({ mode: "complete", maxContentBytes: Infinity })
    globalThis.kept = []
    for (let i = 0; i < 6; i++) {
      const attrs = modelSpan(300000, i % 2 ? "multi" : "ascii")
      p.onEnd({ name: "googleai/gemini-2.5-flash", attributes: attrs })
      globalThis.kept.push(attrs)
    }
    parentPort.postMessage(globalThis.kept.map((a) => a["gen_ai.input.messages"].length))
    if (workerData.how === "exit") process.exit(0)
    else setInterval(() => {}, 1000)
  `
  for (const how of ["exit", "terminate"]) {
    const w = new Worker(body, { eval: true, workerData: { how } })
    const lengths = await new Promise((resolve, reject) => (w.once("message", resolve), w.once("error", reject)))
    assert.equal(lengths.length, 6)
    for (const n of lengths) assert.ok(n > 100000, `${n}`)
    const code = how === "exit" ? await new Promise((resolve) => w.once("exit", resolve)) : await w.terminate()
    assert.equal(code, how === "exit" ? 0 : 1)
  }
  // The main thread still maps long spans natively afterwards.
  const { GenkitForMaple } = require("..")
  const { modelSpan } = require(synth)
  const p = new GenkitForMaple({ mode: "reference" })
  const attrs = modelSpan(300000, "multi")
  p.onEnd({ name: "googleai/gemini-2.5-flash", attributes: attrs })
  assert.ok(p.isNative)
  assert.ok(attrs["gen_ai.input.messages"].length > 100000)
})

test("the addon loaded only in a worker that exits with external strings alive: the process survives", () => {
  // V8 finalizes a worker's external strings when its isolate is deleted, after Node.js has
  // unloaded the addons the worker loaded (dlclose / FreeLibrary): the addon pins its image
  // before its first external string (src/external.rs), so the finalizer's code is still there.
  const script = `
    const { Worker } = require("node:worker_threads")
    const body = ${JSON.stringify(`
      const { parentPort } = require("node:worker_threads")
      const { GenkitForMaple } = require(${JSON.stringify(root)})
      const { modelSpan } = require(${JSON.stringify(synth)})
      const p = new GenkitForMaple({ mode: "reference" })
      globalThis.kept = []
      for (let i = 0; i < 4; i++) {
        const attrs = modelSpan(300000, i % 2 ? "multi" : "ascii")
        p.onEnd({ name: "googleai/gemini-2.5-flash", attributes: attrs })
        globalThis.kept.push(attrs)
      }
      parentPort.postMessage(p.isNative)
    `)}
    let runs = 0
    function once() {
      const w = new Worker(body, { eval: true })
      w.once("message", (native) => { if (!native) { console.error("not native"); process.exit(3) } })
      w.once("exit", () => {
        globalThis.gc()
        if (++runs < 3) once()
        else setTimeout(() => { globalThis.gc(); process.stdout.write(JSON.stringify({ runs })) }, 50)
      })
    }
    once()
  `
  assert.deepStrictEqual(child(script, {}, ["--expose-gc"]), { runs: 3 })
})
