"use strict"
// One small deterministic PRNG (mulberry32) for everything that must write the same data from the
// same seed: the benchmark's synthetic spans and the fuzz arbitraries' JSON writer.

/** Returns a function giving floats in [0, 1), the same sequence for the same 32-bit seed. */
function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

module.exports = { mulberry32 }
