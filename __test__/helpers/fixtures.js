"use strict"
// Loading the real Genkit corpus, copied into __test__/fixtures (tests read only these copies).
const fs = require("node:fs")
const path = require("node:path")

const dir = path.join(__dirname, "..", "fixtures")

/** Reads a JSONL fixture; attribute maps stored as JSON strings (large adversarial ones) are parsed. */
function load(name) {
  return fs
    .readFileSync(path.join(dir, name), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const row = JSON.parse(line)
      for (const key of ["attributes", "expected_attributes"]) {
        if (typeof row[key] === "string") row[key] = JSON.parse(row[key])
      }
      return row
    })
}

/**
 * Attributes compared after JSON.parse/JSON.stringify normalisation (corpus README): every
 * `gen_ai.*` string that parses as JSON is re-serialised (a tool result `1e400` or `-0` copied as
 * written by the native path equals the reference's `null` / `0` only after this).
 */
function normalise(attrs) {
  const out = {}
  for (const key of Object.keys(attrs).sort()) {
    const v = attrs[key]
    if (typeof v === "string" && key.startsWith("gen_ai.")) {
      try {
        out[key] = JSON.stringify(JSON.parse(v))
        continue
      } catch {}
    }
    out[key] = v
  }
  return out
}

module.exports = { load, normalise }
