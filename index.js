"use strict"
// genkit-for-maple: `const { GenkitForMaple } = require("genkit-for-maple")`.
const { GenkitForMaple } = require("./js/processor")
const { mapSpanJs } = require("./js/mapping")
const { NoContentSpanExporter, NoContentSpanProcessor, CONTENT_ATTRIBUTES } = require("./js/content")

module.exports = { GenkitForMaple, mapSpanJs, NoContentSpanExporter, NoContentSpanProcessor, CONTENT_ATTRIBUTES }
