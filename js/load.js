"use strict"
// Finds and loads the native binding without ever breaking a bundler's build or the app's start.
//
// The binding is loaded through Node's own `require` (from `process.getBuiltinModule("module")`),
// never a `require(...)` a bundler can see: esbuild, webpack, Rollup/Vite and Turbopack cannot
// place a `.node` file in a bundle, and the ones that try fail the build or the app. When this file
// runs from node_modules (not bundled) it loads the package's `binding.js` beside it, which tries
// `genkit-for-maple.<triple>.node` in the package and then the platform package
// `genkit-for-maple-<triple>`. Bundled, it looks for the package from the app's directory (and the
// working directory), which works when the bundler kept the package external or the deployment
// ships node_modules. When nothing loads, the caller runs the pure-JS mapping and gives the one
// warning `describe()` writes: the deepest real cause, the platform triple, the package looked for,
// the likely fix, and GENKIT_FOR_MAPLE_FORCE_JS.

const PACKAGE = "genkit-for-maple"

/** Node's `require`, obtained so no bundler rewrites it; `undefined` where there is none. */
function nodeRequire(anchor) {
  let mod
  try {
    mod = typeof process.getBuiltinModule === "function" ? process.getBuiltinModule("module") : undefined
  } catch {
    mod = undefined
  }
  if (mod === undefined) {
    // Node < 20.16: the plain CommonJS `module` object of this file, when it is Node's.
    try {
      if (typeof module === "object" && module !== null && typeof module.constructor?.createRequire === "function") {
        mod = module.constructor
      }
    } catch {
      mod = undefined
    }
  }
  if (mod === undefined || typeof mod.createRequire !== "function") return undefined
  return mod.createRequire(anchor)
}

/** The napi-rs platform triple of this process: linux-x64-gnu, darwin-arm64, win32-x64-msvc, ... */
function platformTriple() {
  const { platform, arch } = process
  if (platform === "win32") return `win32-${arch}-msvc`
  if (platform !== "linux") return `${platform}-${arch}`
  let glibc
  try {
    glibc = process.report?.getReport?.().header?.glibcVersionRuntime
  } catch {
    glibc = undefined
  }
  return `linux-${arch}-${glibc ? "gnu" : "musl"}`
}

/** The glibc version of this process ("2.36"), or undefined (musl, not Linux). */
function glibcVersion() {
  try {
    return process.report?.getReport?.().header?.glibcVersionRuntime
  } catch {
    return undefined
  }
}

/**
 * Whether this file was bundled: its own path is not `<...>/genkit-for-maple/js/load.js` (or it
 * has none), and the name of the bundler when it can be told.
 */
function bundlerOf() {
  let file
  try {
    file = typeof __filename === "string" ? __filename : undefined
  } catch {
    file = undefined
  }
  // Turbopack keeps the name but moves it under a virtual root ("/ROOT/node_modules/..."): the path
  // must also exist.
  const own = file !== undefined && /[\\/]js[\\/]load\.js$/.test(file) && exists(file)
  if (own) return undefined
  // eslint-disable-next-line no-undef
  if (typeof __webpack_require__ === "function") return "webpack"
  // eslint-disable-next-line no-undef
  if (typeof __turbopack_context__ !== "undefined" || typeof globalThis.TURBOPACK !== "undefined" || file?.startsWith("/ROOT/")) return "Turbopack"
  return "a bundler (esbuild, Rollup/Vite, Turbopack, ...)"
}

/** Whether a file exists (`true` where that cannot be told: no `fs` without a bundler seeing it). */
function exists(file) {
  try {
    const fs = typeof process.getBuiltinModule === "function" ? process.getBuiltinModule("fs") : undefined
    return fs === undefined ? true : fs.existsSync(file)
  } catch {
    return true
  }
}

/** The directories to look for the package from when bundled: the entry script's and the working directory. */
function searchAnchors() {
  const anchors = []
  try {
    const main = process.argv[1]
    if (typeof main === "string" && main !== "") anchors.push(main)
  } catch {
    // no argv
  }
  try {
    anchors.push(`${process.cwd()}/noop.js`)
  } catch {
    // no cwd
  }
  return anchors
}

/**
 * Loads the binding. Returns `{ binding }` or `{ error, bundler }`; never throws.
 * `GENKIT_FOR_MAPLE_FORCE_JS=1` returns `{ forced: true }` without trying, unless
 * `honourForceJs` is false (the receiver: the switch chooses the processor's mapping, and the
 * receiver has no JavaScript decoder).
 */
function loadBinding({ honourForceJs = true } = {}) {
  if (honourForceJs && process.env.GENKIT_FOR_MAPLE_FORCE_JS === "1") return { forced: true }
  const bundler = bundlerOf()
  const errors = []
  if (bundler === undefined) {
    try {
      const req = nodeRequire(__filename)
      if (req === undefined) throw new Error("this runtime has no Node.js module loader (require) for native addons")
      // A computed specifier: a bundler that ever sees this line must not follow it.
      const spec = ["..", "binding.js"].join("/")
      return { binding: req(spec) }
    } catch (error) {
      return { error, bundler }
    }
  }
  for (const anchor of searchAnchors()) {
    try {
      const req = nodeRequire(anchor)
      if (req === undefined) throw new Error("this runtime has no Node.js module loader (require) for native addons")
      const dir = req.resolve([PACKAGE, "package.json"].join("/")).replace(/[\\/]package\.json$/, "")
      return { binding: req([dir, "binding.js"].join("/")), bundler }
    } catch (error) {
      errors.push(error)
    }
  }
  return { error: errors.find((e) => !/Cannot find (module|package)/.test(String(e?.message))) ?? errors[0], bundler, notFound: true }
}

/** Every message of an error's `cause` chain (arrays and AggregateError included), outermost first. */
function causeChain(error) {
  const out = []
  const seen = new Set()
  const queue = [error]
  while (queue.length > 0 && out.length < 64) {
    const e = queue.shift()
    if (e === null || e === undefined || seen.has(e)) continue
    seen.add(e)
    let message
    try {
      message = typeof e?.message === "string" ? e.message : String(e)
    } catch {
      message = "?"
    }
    out.push(message.split("\n")[0])
    try {
      if (Array.isArray(e?.errors)) queue.push(...e.errors)
      if (Array.isArray(e?.cause)) queue.push(...e.cause)
      else if (e?.cause !== undefined) queue.push(e.cause)
    } catch {
      // a throwing getter: stop here
    }
  }
  return out
}

const NOISE = /^(Cannot find native binding|Failed to load native binding|Cannot find module '[^']*(wasi|wasm32)[^']*')/

/**
 * The deepest cause that says more than "not found": a loader error of the addon itself (permission
 * model, glibc too old, wrong ELF), else the "not found" the chain ends in.
 */
function deepestCause(error) {
  const chain = causeChain(error).filter((m) => !NOISE.test(m))
  const real = chain.filter((m) => !/^Cannot find module/.test(m))
  if (real.length > 0) return real[real.length - 1]
  const pkg = chain.find((m) => m.includes(`'${PACKAGE}-`))
  if (pkg !== undefined) return pkg
  return chain.length > 0 ? chain[chain.length - 1] : causeChain(error)[0] ?? "unknown error"
}

/** What the pure-JS mapping does not do (issue 10: the fallback writes reference mode only). */
const JS_PATH = 'using the pure-JS mapping, which writes reference mode only (mode "complete" needs the native binding: no cost, cache/reasoning tokens, registry provider names, error.type, tool call ids, media parts)'

/**
 * The warning text for a failed load (see loadBinding); one line. `consequence` says what runs
 * instead (the processor's pure-JS mapping by default; the exporter passes its own).
 */
function describe(result, consequence = JS_PATH, who = PACKAGE) {
  if (result.forced) {
    return `${who}: native binding unavailable (GENKIT_FOR_MAPLE_FORCE_JS=1); ${consequence}`
  }
  const triple = platformTriple()
  const pkg = `${PACKAGE}-${triple}`
  const cause = deepestCause(result.error)
  let fix
  if (/addons? (is|are) disabled|ERR_DLOPEN_DISABLED|--no-addons/i.test(cause)) {
    fix = "Node.js runs with addons disabled (the permission model or --no-addons): allow them (--allow-addons) to get the native path"
  } else if (/GLIBC_|GLIBCXX_|version `/.test(cause)) {
    fix = `the binary needs a newer glibc than this system's ${glibcVersion() ?? "?"}`
  } else if (/Cannot find module '\.\.\/binding\.js'/.test(cause)) {
    fix = `the package's binding.js and binary are missing beside js/load.js: a file tracer left them out (Next.js output "standalone": add them with outputFileTracingIncludes, README "Install and deploy")`
  } else if (result.bundler !== undefined) {
    fix = `this code was bundled by ${result.bundler}, which cannot carry the .node binary: keep "${PACKAGE}" external (README, "Install and deploy") and ship node_modules with the app`
  } else if (/Cannot find module/.test(cause)) {
    fix = `the optional dependency ${pkg} is not installed (npm ci --omit=optional, or a lockfile written on another platform): run \`npm install ${pkg}\` here, or regenerate the lockfile on this platform`
  } else {
    fix = `reinstall ${pkg}`
  }
  return (
    `${who}: native binding unavailable (${cause}); ${consequence}. ` +
    `Platform ${triple}, looked for ${PACKAGE}.${triple}.node and the package ${pkg}; ${fix}. ` +
    "GENKIT_FOR_MAPLE_FORCE_JS=1 chooses this on purpose."
  )
}

module.exports = { loadBinding, describe, deepestCause, platformTriple }
