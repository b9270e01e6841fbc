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

/** `shell` of corpus row `row` with a fresh copy of its attribute map. */
function spanOf(row) {
  return shell(row, copyOf(row.attributes))
}

/** Corpus rows in the order their spans ended, as an SDK hands them over (rows without end times as they are). */
function inEndOrder(rows) {
  const endNs = (row) => (Array.isArray(row.endTime) ? row.endTime[0] * 1e9 + row.endTime[1] : Number(row.endTime))
  return rows[0]?.endTime === undefined ? rows : rows.sort((a, b) => endNs(a) - endNs(b))
}

module.exports = { copyOf, shell, spanOf, inEndOrder }
