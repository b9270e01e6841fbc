"use strict"
// Concurrency (issue 4): the addon loads and maps spans in the main thread and in two
// worker_threads at the same time (a shared start barrier); every thread's results equal the
// corpus's expected attributes, and adversarial spans never throw in any thread.
const test = require("node:test")
const assert = require("node:assert/strict")
const path = require("node:path")
const { Worker } = require("node:worker_threads")

const root = path.join(__dirname, "..")
const ROUNDS = process.env.GENKIT_FOR_MAPLE_SMOKE === "1" ? 20 : 100

// Runs in each thread: load the addon, wait for the barrier, map the corpus ROUNDS times.
const body = `
const { GenkitForMaple } = require(${JSON.stringify(root)})
const { load } = require(${JSON.stringify(path.join(__dirname, "helpers", "fixtures.js"))})
function work(barrier, rounds) {
  const processor = new GenkitForMaple({ mode: "reference" })
  const rows = load("genkit-1.42-spans.jsonl").concat(load("genkit-1.42-plugin-spans.jsonl"))
  const adversarial = load("adversarial-dev.jsonl")
  Atomics.add(barrier, 1, 1)
  Atomics.wait(barrier, 0, 0)
  let mismatches = 0, mapped = 0
  for (let r = 0; r < rounds; r++) {
    for (const row of rows) {
      const attrs = structuredClone(row.attributes)
      processor.onEnd({ attributes: attrs, name: row.name })
      if (JSON.stringify(attrs) !== JSON.stringify(row.expected_attributes)) mismatches++
      mapped++
    }
    for (const c of adversarial) processor.onEnd({ attributes: structuredClone(c.attributes), name: c.id })
  }
  return { native: processor.isNative, mismatches, mapped }
}
module.exports = work
`

test("the addon maps spans in the main thread and two workers at the same time", async () => {
  const fs = require("node:fs")
  const os = require("node:os")
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gfm-workers-")), "work.js")
  fs.writeFileSync(file, body)
  const barrier = new Int32Array(new SharedArrayBuffer(8))
  const workers = [0, 1].map(
    () =>
      new Worker(`const { parentPort, workerData } = require("node:worker_threads"); parentPort.postMessage(require(workerData.file)(new Int32Array(workerData.sab), workerData.rounds))`, {
        eval: true,
        workerData: { file, sab: barrier.buffer, rounds: ROUNDS },
      }),
  )
  const results = workers.map((w) => new Promise((resolve, reject) => (w.once("message", resolve), w.once("error", reject))))
  // Wait until both workers have loaded the addon and wait at the barrier, then release all three.
  while (Atomics.load(barrier, 1) < 2) await new Promise((r) => setTimeout(r, 5))
  Atomics.add(barrier, 1, 1)
  setImmediate(() => {
    Atomics.store(barrier, 0, 1)
    Atomics.notify(barrier, 0)
  })
  const barrier2 = new Int32Array(new SharedArrayBuffer(8))
  barrier2[0] = 1 // main thread: no wait
  await new Promise((r) => setImmediate(r))
  const main = require(file)(barrier2, ROUNDS)
  const all = [main, ...(await Promise.all(results))]
  for (const r of all) {
    assert.equal(r.native, true)
    assert.equal(r.mismatches, 0)
    assert.equal(r.mapped, 156 * ROUNDS)
  }
  await Promise.all(workers.map((w) => w.terminate()))
})
