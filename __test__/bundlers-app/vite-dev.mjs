// `vite dev` for a server-side app (__test__/bundlers-webpack-vite.test.js): a Vite dev server in
// middleware mode loads app.mjs through its SSR module loader (`ssrLoadModule`), as frameworks
// built on Vite do for each request in development, then closes. GFM_VITE is the path of Vite's
// ESM entry (Vite is the repo's devDependency, not the app's); GFM_VITE_SSR, when set, is the
// JSON of the `ssr` options.
const { createServer } = await import(process.env.GFM_VITE)
const server = await createServer({
  root: import.meta.dirname,
  configFile: false,
  logLevel: "silent",
  appType: "custom",
  server: { middlewareMode: true, hmr: false, watch: null },
  ssr: process.env.GFM_VITE_SSR ? JSON.parse(process.env.GFM_VITE_SSR) : undefined,
})
try {
  await server.ssrLoadModule("/app.mjs")
} finally {
  await server.close()
}
