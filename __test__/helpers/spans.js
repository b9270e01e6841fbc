"use strict"
// Corpus rows as the processor sees them: a fresh attribute map and a ReadableSpan-shaped shell.

/** A fresh attribute map built key by key, as the SDK's setAttribute builds it. */
function copyOf(attributes) {
  const a = {}
  for (const [k, v] of Object.entries(attributes)) a[k] = v
  return a
}

/** A ReadableSpan-shaped object of corpus row `row` with the attribute map `attributes`. */
function shell(row, attributes) {
  return {
    name: row.name,
    attributes,
    spanContext: () => ({ traceId: row.traceId, spanId: row.spanId, traceFlags: 1 }),
    parentSpanContext: row.parentSpanId ? { spanId: row.parentSpanId } : undefined,
    status: row.status ?? { code: 0 },
    events: row.events ?? [],
    endTime: row.endTime,
  }
}

module.exports = { copyOf, shell }
