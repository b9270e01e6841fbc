"use strict"
// The order of the variants in each timing round (bench/case.js, bench/content.js): shuffled with a
// fixed-seed linear congruential generator, so rounds differ from each other but every run is the same.

/** A copy of `list` in an order drawn from `seed` (a non-negative integer); Fisher-Yates. */
function shuffle(list, seed) {
  const out = [...list]
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    const j = seed % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

module.exports = { shuffle }
