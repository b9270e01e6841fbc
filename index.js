"use strict"
// genkit-for-maple: `const { GenkitForMaple } = require("genkit-for-maple")`.
const { GenkitForMaple } = require("./js/processor")
const { mapSpanJs } = require("./js/mapping")

module.exports = { GenkitForMaple, mapSpanJs }
