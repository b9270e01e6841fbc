"use strict"
// webpack 5 (`target: "node"`, production) and Vite 7 (Rollup) SSR builds of a user's app importing
// genkit-for-maple, through their JS APIs: the build passes, the output runs where it was built
// (native: the package is found in the app's node_modules) and, when genkit-for-maple is inside the
// bundle, moved to a folder without node_modules it runs the pure-JS mapping with one diag warning
// naming the bundler. With the README's line (webpack `externals`, Vite's default SSR externals or
// `ssr.external`) it stays outside the bundle and runs natively, moved with node_modules too.
// Vite's dev server (middleware mode, ssrLoadModule) loads it natively at default settings and
// with ssr.external. Every run maps the real Genkit corpus and compares with its expected attributes.
const test = require("node:test")
const assert = require("node:assert/strict")
const fs = require("node:fs")
const path = require("node:path")
const { root, makeApp, runApp } = require("./helpers/bundle-app")

const webpack = require(require.resolve("webpack", { paths: [root] }))
const ctx = makeApp("gfm-webpack-vite-")
test.after(() => ctx.cleanup())

function assertNative(out) {
  assert.deepStrictEqual(out, { native: true, spans: out.spans, equal: out.spans, logs: [] })
  assert.ok(out.spans > 100)
}

function assertFallback(out, bundler) {
  assert.equal(out.native, false)
  assert.equal(out.equal, out.spans, "the pure-JS mapping writes every expected attribute")
  assert.equal(out.logs.length, 1, JSON.stringify(out.logs))
  assert.match(out.logs[0], /native binding unavailable/)
  assert.match(out.logs[0], bundler)
  assert.match(out.logs[0], /keep "genkit-for-maple" external/)
}

function move(dir, name, withNodeModules = false) {
  const to = path.join(ctx.tmp, name)
  fs.cpSync(dir, to, { recursive: true })
  if (withNodeModules) fs.cpSync(path.join(ctx.app, "node_modules"), path.join(to, "node_modules"), { recursive: true })
  return to
}

function webpackBuild(entry, out, extra = {}) {
  return new Promise((resolve, reject) => {
    webpack(
      { mode: "production", target: "node", context: ctx.app, entry: `./${entry}`, output: { path: path.join(ctx.app, out), filename: "main.js" }, ...extra },
      (error, stats) => {
        if (error) return reject(error)
        const info = stats.toJson({ all: false, errors: true, warnings: true })
        assert.deepStrictEqual(info.errors, [], "no build error")
        assert.deepStrictEqual(info.warnings, [], "no build warning")
        resolve(path.join(ctx.app, out))
      },
    )
  })
}

for (const entry of ["app.mjs", "app.cjs"]) {
  test(`webpack ${entry}: builds, native in place, pure JS with one warning naming webpack when moved`, async () => {
    const dist = await webpackBuild(entry, `dist-webpack-${entry}`)
    assert.match(fs.readFileSync(path.join(dist, "main.js"), "utf8"), /GenkitForMaple/, "bundled")
    assertNative(runApp(path.join(dist, "main.js"), ctx.spans))
    assertFallback(runApp(path.join(move(dist, `moved-webpack-${entry}`), "main.js"), ctx.spans), /bundled by webpack/)
  })

  test(`webpack ${entry} with externals: { "genkit-for-maple": "commonjs genkit-for-maple" }: native, moved with node_modules too`, async () => {
    const dist = await webpackBuild(entry, `dist-webpack-ext-${entry}`, { externals: { "genkit-for-maple": "commonjs genkit-for-maple" } })
    assert.doesNotMatch(fs.readFileSync(path.join(dist, "main.js"), "utf8"), /native binding unavailable/, "not bundled")
    assertNative(runApp(path.join(dist, "main.js"), ctx.spans))
    assertNative(runApp(path.join(move(dist, `moved-webpack-ext-${entry}`, true), "main.js"), ctx.spans))
  })
}

// A development build (`mode: "development"`, as `webpack --watch` and dev servers make it: modules
// wrapped in eval() with source URLs): the same loader answers.
test("webpack app.mjs in development mode (eval-wrapped modules): native in place, pure JS with one warning naming webpack when moved", async () => {
  const dist = await webpackBuild("app.mjs", "dist-webpack-dev", { mode: "development" })
  assert.match(fs.readFileSync(path.join(dist, "main.js"), "utf8"), /eval\(/, "a development build")
  assertNative(runApp(path.join(dist, "main.js"), ctx.spans))
  assertFallback(runApp(path.join(move(dist, "moved-webpack-dev"), "main.js"), ctx.spans), /bundled by webpack/)
})

async function viteBuild(out, ssr) {
  const { build } = await import(require.resolve("vite", { paths: [root] }).replace(/index\.cjs$/, "index.js"))
  await build({
    root: ctx.app,
    configFile: false,
    logLevel: "silent",
    ssr,
    build: { ssr: "app.mjs", outDir: out, emptyOutDir: true },
  })
  const dist = path.join(ctx.app, out)
  const file = fs.readdirSync(dist).find((f) => /\.(m?js)$/.test(f))
  return { dist, file }
}

test("Vite SSR build at default settings (dependencies external): native, moved with node_modules too", async () => {
  const { dist, file } = await viteBuild("dist-vite", undefined)
  assert.doesNotMatch(fs.readFileSync(path.join(dist, file), "utf8"), /native binding unavailable/, "not bundled")
  assertNative(runApp(path.join(dist, file), ctx.spans))
  assertNative(runApp(path.join(move(dist, "moved-vite", true), file), ctx.spans))
})

test("Vite SSR with ssr.noExternal: true (everything bundled by Rollup): native in place, pure JS with one warning when moved", async () => {
  const { dist, file } = await viteBuild("dist-vite-noext", { noExternal: true })
  assert.match(fs.readFileSync(path.join(dist, file), "utf8"), /native binding unavailable/, "bundled")
  assertNative(runApp(path.join(dist, file), ctx.spans))
  assertFallback(runApp(path.join(move(dist, "moved-vite-noext"), file), ctx.spans), /bundled by a bundler/)
})

test("Vite SSR with ssr.noExternal: true and ssr.external: [\"genkit-for-maple\"]: native", async () => {
  const { dist, file } = await viteBuild("dist-vite-ext", { noExternal: true, external: ["genkit-for-maple"] })
  assert.doesNotMatch(fs.readFileSync(path.join(dist, file), "utf8"), /native binding unavailable/, "not bundled")
  assertNative(runApp(path.join(dist, file), ctx.spans))
  assertNative(runApp(path.join(move(dist, "moved-vite-ext", true), file), ctx.spans))
})

// Vite's dev server (`vite dev`; frameworks built on Vite load server code the same way): app.mjs
// through `ssrLoadModule` in middleware mode (__test__/bundlers-app/vite-dev.mjs). Dependencies are
// external by default in development too, so Node loads the package and its binary.
// `ssr.noExternal: true` is left out: the dev server then evaluates every dependency as an ES
// module and cannot run CommonJS ones, Genkit's own among them ("exports is not defined"), so no
// Genkit app starts that way; with it, README's `ssr.external: ["genkit-for-maple"]` is tested.
function viteDev(ssr) {
  const vite = require.resolve("vite", { paths: [root] }).replace(/index\.cjs$/, "index.js")
  const env = { GFM_VITE: vite, ...(ssr ? { GFM_VITE_SSR: JSON.stringify(ssr) } : {}) }
  return runApp(path.join(ctx.app, "vite-dev.mjs"), ctx.spans, ctx.app, env)
}

test("Vite dev server (ssrLoadModule) at default settings: native", () => {
  assertNative(viteDev(undefined))
})

test("Vite dev server with ssr.noExternal: true and ssr.external: [\"genkit-for-maple\"]: native", () => {
  assertNative(viteDev({ noExternal: true, external: ["genkit-for-maple"] }))
})
