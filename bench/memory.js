#!/usr/bin/env node
"use strict"
// Peak extra memory per span, native vs pure JS (issue 13): one huge attribute, mapped once by
// GenkitForMaple.onEnd in a fresh process, for 1 MB, 50 MB and 256 MB of text, ASCII and two-byte
// (V8 stores "ж" in two bytes per character, so a two-byte attribute of N MB holds N/2 Mi
// characters), as a tool result (`genkit:output` a JSON string) and as a model answer
// (`genkit:output.message` text).
//
//   node bench/memory.js            every case, 3 runs each (median); `npm run bench` runs it
//   node bench/memory.js --smoke    1 MB only, one run: checks it works (CI)
//
// Method: the child builds the span's attribute map, flattens its strings, collects garbage,
// resets the kernel's peak-RSS mark (`/proc/self/clear_refs` 5, Linux), reads VmRSS, maps the
// span once, reads VmHWM: peak extra = VmHWM - VmRSS before (every allocation: Rust's, V8's heap
// and its large objects, the new attributes). Linux only.

const { spawnSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")

if (process.argv[2] === "--child") {
  child(...process.argv.slice(3))
} else {
  main()
}

function status() {
  const s = fs.readFileSync("/proc/self/status", "utf8")
  const kib = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)[1])
  return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 }
}

function child(route, kind, unit, mb) {
  if (route === "js") process.env.GENKIT_FOR_MAPLE_FORCE_JS = "1"
  const { GenkitForMaple } = require("..")
  const twoByte = unit.charCodeAt(0) > 0xff
  const count = Math.floor((Number(mb) * 1e6) / (twoByte ? 2 : 1))
  const [head, tail] =
    kind === "tool"
      ? ['"', '"']
      : ['{"message":{"role":"model","content":[{"text":"', '"}]},"finishReason":"stop","usage":{"inputTokens":1,"outputTokens":2}}']
  // The attribute as one flat, sequential V8 string (as the SDK holds it), written into a Buffer
  // outside the V8 heap and decoded once, so that no garbage of its size is left behind.
  const encoding = twoByte ? "utf16le" : "latin1"
  const width = twoByte ? 2 : 1
  const buf = Buffer.allocUnsafe((head.length + count + tail.length) * width)
  buf.write(head, 0, encoding)
  buf.fill(unit, head.length * width, (head.length + count) * width, encoding)
  buf.write(tail, (head.length + count) * width, encoding)
  const output = buf.toString(encoding)
  const textLength = count
  const attrs = { "genkit:metadata:subtype": kind, "genkit:name": kind === "tool" ? "t" : "g/m", "genkit:input": "{}", "genkit:output": output }
  // Issue 13's memory policy alone: reference mode, no secret scrubbing (without the binding it
  // withholds content) and no content cap (complete mode caps at 256 KiB), so both paths write the
  // whole value.
  const p = new GenkitForMaple({ mode: "reference", scrubSecrets: false, maxContentBytes: Infinity })
  if ((route === "native") !== p.isNative) throw new Error(`wanted ${route}, got isNative=${p.isNative}`)
  globalThis.gc()
  globalThis.gc()
  fs.writeFileSync("/proc/self/clear_refs", "5")
  const before = status()
  p.onEnd({ name: "s", attributes: attrs })
  const after = status()
  const written = attrs[kind === "tool" ? "gen_ai.tool.call.result" : "gen_ai.output.messages"]
  if (typeof written !== "string" || written.length < textLength) throw new Error("not mapped")
  process.stdout.write(JSON.stringify({ extra: after.hwm - before.rss }))
}

function main() {
  const smoke = process.argv.includes("--smoke") || process.env.GENKIT_FOR_MAPLE_SMOKE === "1"
  if (process.platform !== "linux") {
    console.log("bench/memory.js: Linux only (/proc/self/status); skipped")
    return
  }
  const sizes = smoke ? [1] : [1, 50, 256]
  const runs = smoke ? 1 : 3
  const rows = []
  for (const kind of ["tool", "model"]) {
    for (const mb of sizes) {
      for (const [unit, label] of [["a", "ASCII"], ["ж", "two-byte"]]) {
        const row = { kind, mb, text: label }
        for (const route of ["js", "native"]) {
          const extras = []
          for (let i = 0; i < runs; i++) {
            const r = spawnSync(process.execPath, ["--expose-gc", "--max-old-space-size=4096", __filename, "--child", route, kind, unit, String(mb)], { encoding: "utf8" })
            if (r.status !== 0) {
              console.error(`bench/memory.js: ${route} ${kind} ${mb} MB ${label} failed: ${r.stderr.slice(0, 400)}`)
              process.exit(1)
            }
            extras.push(JSON.parse(r.stdout).extra)
          }
          extras.sort((a, b) => a - b)
          row[route] = extras[extras.length >> 1]
        }
        rows.push(row)
        process.stderr.write(`  memory ${kind} ${mb} MB ${label} done\n`)
      }
    }
  }
  const mib = (b) => (b / 2 ** 20).toFixed(1)
  const lines = [
    "| span | attribute | JS peak extra (MiB) | native peak extra (MiB) | native / JS | attribute (MiB in V8) |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map((r) => {
      const v8 = (r.mb * 1e6) / 2 ** 20
      return `| ${r.kind} | ${r.mb} MB ${r.text} | ${mib(r.js)} | ${mib(r.native)} | ${(r.native / r.js).toFixed(2)}x | ${v8.toFixed(1)} |`
    }),
  ]
  console.log(lines.join("\n"))
  console.log(`\nPeak extra memory of one onEnd (VmHWM after - VmRSS before, median of ${runs}); ${smoke ? "SMOKE MODE: one size, one run" : ""}`)
  const file = path.join(__dirname, "memory-results.json")
  fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, smoke, rows }, null, 2)}\n`)
}
