// Next.js runs register() once per server process (README, "Install and deploy": Next.js).
export async function register() {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    await import("./instrumentation.node")
  }
}
