// The demo: two conversations of two turns with the support agent, exported over OTLP. With no
// OTLP endpoint set, the built-in local receiver gets the spans and this prints what Maple's Agent
// Sessions would show, then seed 003's "Check without Maple access"; exits 1 when a check fails.
import { sdk } from "./instrumentation.js"

import { DiagConsoleLogger, DiagLogLevel, diag } from "@opentelemetry/api"
import { MODEL_NAME, supportChat, usesGemini } from "./app.js"
import { conversations } from "./conversations.js"
import { localReceiver, receiverModule } from "./local-otlp.js"

// Export errors and genkit-for-maple's problem reports go through diag: print them, and count the
// errors (seed 003: the run must end with no export errors).
const diagErrors: string[] = []
const diagConsole = new DiagConsoleLogger()
diag.setLogger(
  {
    error: (message, ...args) => {
      diagErrors.push(message)
      diagConsole.error(message, ...args)
    },
    warn: (message, ...args) => diagConsole.warn(message, ...args),
    info: () => {},
    debug: () => {},
    verbose: () => {},
  },
  DiagLogLevel.WARN,
)

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
  // Flushes every span (BatchSpanProcessor) before the process exits. It rejects when an export
  // failed: report that instead of crashing.
  await sdk.shutdown().catch((error: unknown) => {
    diagErrors.push(`telemetry flush failed: ${error instanceof Error ? error.message : String(error)}`)
    console.error("telemetry flush failed:", error)
  })
}

const exportCheck = {
  name: "no export errors",
  ok: diagErrors.length === 0,
  detail: diagErrors.length === 0 ? "none reported through diag" : `${diagErrors.length}: ${diagErrors.slice(0, 3).join("; ")}`,
}
if (localReceiver) {
  const spans = localReceiver.spans()
  const stats = localReceiver.stats()
  await localReceiver.close()
  console.log(`\nThe receiver got ${stats.spans} spans in ${stats.accepted} OTLP trace request(s), ${stats.rejected} rejected${stats.ignored > 0 ? `, ${stats.ignored} metrics/logs request(s) ignored` : ""}.\n`)
  console.log("What Maple's Agent Sessions would show:\n")
  console.log(receiverModule.renderSessions(spans))
  const verdict = receiverModule.checkSessions(spans)
  verdict.checks.unshift(exportCheck)
  verdict.ok &&= exportCheck.ok
  console.log("Check without Maple access (seed 003):")
  console.log(receiverModule.renderChecks(verdict))
  if (!verdict.ok || stats.rejected > 0) failed = true
} else {
  console.log(`\n[${exportCheck.ok ? "ok" : "FAIL"}] ${exportCheck.name}: ${exportCheck.detail}`)
  if (exportCheck.ok) console.log("Open Agent Sessions in Maple to see the two conversations.")
  else failed = true
}
process.exitCode = failed ? 1 : 0
