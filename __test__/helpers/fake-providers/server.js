"use strict"
// A loopback HTTP server for the fake providers: binds 127.0.0.1 on port 0, parses JSON bodies,
// records every request, answers JSON or SSE. Nothing here knows a provider's format.
const http = require("node:http")

/**
 * @param {string} name  provider name, for error messages
 * @param {(req: {method: string, path: string, query: URLSearchParams, headers: object, body: any}, reply: Reply) => void} route
 * @returns {Promise<{url: string, requests: object[], close: () => Promise<void>}>}
 */
async function startServer(name, route) {
  const requests = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      const url = new URL(req.url, "http://127.0.0.1")
      const text = Buffer.concat(chunks).toString("utf8")
      let body
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        body = text
      }
      const record = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body }
      requests.push(record)
      const reply = new Reply(res)
      try {
        route(record, reply)
      } catch (error) {
        record.error = error
        if (!res.headersSent) reply.json(500, { error: { message: `fake ${name}: ${error.message}` } })
        else res.end()
      }
    })
  })
  // No keep-alive: every request gets its own connection, so close() never waits on idle sockets.
  server.keepAliveTimeout = 1
  await new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", resolve)
  })
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

class Reply {
  constructor(res) {
    this.res = res
  }

  json(status, value, headers = {}) {
    const body = JSON.stringify(value)
    this.res.writeHead(status, { "content-type": "application/json; charset=utf-8", connection: "close", ...headers })
    this.res.end(body)
  }

  /** Server-sent events: `events` are strings already framed by the caller (`data: ...\n\n`). */
  sse(events, headers = {}) {
    this.res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "close",
      ...headers,
    })
    for (const e of events) this.res.write(e)
    this.res.end()
  }
}

module.exports = { startServer }
