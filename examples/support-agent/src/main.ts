// The demo: two conversations of two turns with the support agent, exported over OTLP. With no
// OTLP endpoint set, the built-in local receiver gets the spans and this prints what Maple's Agent
// Sessions would show, then seed 003's "Check without Maple access"; exits 1 when a check fails.
import { sdk } from "./instrumentation.js"

import { DiagConsoleLogger, DiagLogLevel, diag } from "@opentelemetry/api"
import { MODEL_NAME, supportChat, usesGemini } from "./app.js"
import { conversations } from "./conversations.js"
import { localReceiver, receiverModule } from "./local-otlp.js"

// Export errors and genkit-for-maple's problem reports go through diag.
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN)

console.log(
  `support-agent: model ${MODEL_NAME} (${usesGemini ? "Gemini API" : "local deterministic stand-in, no network"}); ` +
    `exporting to ${localReceiver ? `the built-in receiver at ${localReceiver.url}` : process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT}\n`,
)

let failed = false
try {
  for (const { chatId, turns } of conversations) {
    for (const text of turns) {
      console.log(`[${chatId}] user:  ${text}`)
      const reply = await supportChat({ chatId, text })
      console.log(`[${chatId}] agent: ${reply}`)
    }
  }
} catch (error) {
  failed = true
  console.error("the conversation failed:", error)
} finally {
  // Flushes every span (BatchSpanProcessor) before the process exits.
  await sdk.shutdown()
}

if (localReceiver) {
  const spans = localReceiver.spans()
  const stats = localReceiver.stats()
  await localReceiver.close()
  console.log(`\nThe receiver got ${stats.spans} spans in ${stats.accepted} OTLP trace request(s), ${stats.rejected} rejected.\n`)
  console.log("What Maple's Agent Sessions would show:\n")
  console.log(receiverModule.renderSessions(spans))
  const verdict = receiverModule.checkSessions(spans)
  console.log("Check without Maple access (seed 003):")
  console.log(receiverModule.renderChecks(verdict))
  if (!verdict.ok || stats.rejected > 0) failed = true
} else {
  console.log("\nSpans exported; open Agent Sessions in Maple to see the two conversations.")
}
process.exitCode = failed ? 1 : 0
