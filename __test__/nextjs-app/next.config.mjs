// The test picks the arrangement through variables; each is a line of README's "Install and deploy".
const config = {}
if (process.env.GFM_EXTERNAL === "1") config.serverExternalPackages = ["genkit-for-maple"]
if (process.env.GFM_STANDALONE === "1") config.output = "standalone"
if (process.env.GFM_TRACE_INCLUDES === "1") {
  config.outputFileTracingIncludes = {
    "/*": ["./node_modules/genkit-for-maple/binding.js", "./node_modules/genkit-for-maple/*.node", "./node_modules/genkit-for-maple-*/**"],
  }
}
export default config
