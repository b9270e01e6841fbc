#!/usr/bin/env node
"use strict"
// What one native Mapper costs to make and keep (BENCHMARKS.md "Stop 24"): makes N mappers
// (default 200) of one option set, all kept alive, and prints the process's RSS growth and wall
// time per mapper. The built-in secret patterns are compiled at the first scrubbing mapper and
// shared by the rest.
// Usage: node bench/mapper.js [N] [--no-scrub]
const path = require("node:path")
const binding = require(path.join(__dirname, "..", "binding.js"))

const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200)
const scrubSecrets = !process.argv.includes("--no-scrub")
const keep = []
const rss = process.memoryUsage().rss
const t = process.hrtime.bigint()
for (let i = 0; i < n; i++) keep.push(new binding.Mapper({ mode: "complete", cost: false, scrubSecrets }))
const us = Number(process.hrtime.bigint() - t) / n / 1e3
const kb = (process.memoryUsage().rss - rss) / n / 1024
console.log(`${n} mappers (scrubSecrets: ${scrubSecrets}): ${kb.toFixed(1)} KB of RSS and ${us.toFixed(0)} us each`)
