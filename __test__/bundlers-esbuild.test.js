"use strict"
// esbuild at default settings (`--bundle --platform=node`, ESM and CommonJS output) on a user's app
// importing genkit-for-maple: the build passes (no `.node` loader needed), the bundle runs where
// it was built (native: the package is found in the app's node_modules), and moved to a folder
// without node_modules it runs the pure-JS mapping with one diag warning naming the bundler. With
// the README's `--external:genkit-for-maple` it is native, moved together with node_modules too.
// Every run maps the real Genkit corpus and compares with its expected attributes.
const test = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const path = require("node:path")
const { root, run, show, makeApp, runApp } = require("./helpers/bundle-app")

// esbuild's JS API (the CLI's options): it needs no install script, which npm 11 may not run.
const esbuild = require(require.resolve("esbuild", { paths: [root] }))
const ctx = makeApp("gfm-esbuild-")
test.after(() => ctx.cleanup())

function build(src, format, out, external = []) {
  const r = esbuild.buildSync({ absWorkingDir: ctx.app, entryPoints: [src], bundle: true, platform: "node", format, outfile: out, external, logLevel: "silent" })
  assert.deepStrictEqual(r.errors, [])
  assert.deepStrictEqual(r.warnings, [], "no warning either")
  return path.join(ctx.app, out)
}

function assertNative(out) {
  assert.deepStrictEqual(out, { native: true, spans: out.spans, equal: out.spans, logs: [] })
  assert.ok(out.spans > 100)
}

function assertFallback(out) {
  assert.equal(out.native, false)
  assert.equal(out.equal, out.spans, "the pure-JS mapping writes every expected attribute")
  assert.equal(out.logs.length, 1, JSON.stringify(out.logs))
  assert.match(out.logs[0], /native binding unavailable/)
  assert.match(out.logs[0], /bundled by .*esbuild/)
  assert.match(out.logs[0], /keep "genkit-for-maple" external/)
}

/** Copies the built file alone (or with node_modules) to a new folder, as a deploy would. */
function move(file, name, withNodeModules = false) {
  const dir = path.join(ctx.tmp, name)
  fs.mkdirSync(dir, { recursive: true })
  const to = path.join(dir, path.basename(file))
  fs.copyFileSync(file, to)
  if (withNodeModules) fs.cpSync(path.join(ctx.app, "node_modules"), path.join(dir, "node_modules"), { recursive: true })
  if (file.endsWith(".mjs")) fs.writeFileSync(path.join(dir, "package.json"), "{}")
  return to
}

for (const [src, format, ext] of [["app.mjs", "esm", "mjs"], ["app.mjs", "cjs", "cjs"], ["app.cjs", "cjs", "cjs"]]) {
  test(`esbuild ${src} --format=${format}: builds, native in place, pure JS with one warning naming the bundler when moved`, () => {
    const file = build(src, format, `dist/${format}-${src}.${ext}`)
    assertNative(runApp(file, ctx.spans))
    assertFallback(runApp(move(file, `moved-${format}-${src}`), ctx.spans))
  })

  test(`esbuild ${src} --format=${format} --external:genkit-for-maple: native in place and moved with node_modules`, () => {
    const file = build(src, format, `dist/ext-${format}-${src}.${ext}`, ["genkit-for-maple"])
    assert.doesNotMatch(fs.readFileSync(file, "utf8"), /class GenkitForMaple/, "the package stays outside the bundle")
    assertNative(runApp(file, ctx.spans))
    assertNative(runApp(move(file, `moved-ext-${format}-${src}`, true), ctx.spans))
  })
}

test("GENKIT_FOR_MAPLE_FORCE_JS=1 in an esbuild ESM bundle: runs, pure JS", () => {
  const file = build("app.mjs", "esm", "dist/force.mjs")
  const r = run(process.execPath, [file], ctx.app, { GFM_SPANS: ctx.spans, GENKIT_FOR_MAPLE_FORCE_JS: "1" })
  assert.equal(r.status, 0, show(r))
  const out = JSON.parse(r.stdout)
  assert.equal(out.native, false)
  assert.equal(out.equal, out.spans)
  assert.match(out.logs[0], /GENKIT_FOR_MAPLE_FORCE_JS=1/)
})
