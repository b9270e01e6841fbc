// The ES-module view of the types (an .mts file resolves "genkit-for-maple" with the "import"
// condition): named and default imports are typed as index.mjs exports them at run time.
import defaultExport, { GenkitForMaple, mapSpanJs } from "genkit-for-maple"
import * as namespace from "genkit-for-maple"

export const same: boolean = defaultExport.GenkitForMaple === GenkitForMaple && namespace.mapSpanJs === mapSpanJs
export const processor: GenkitForMaple = new defaultExport.GenkitForMaple({})
export const native: boolean = new namespace.GenkitForMaple().isNative

// genkit-for-maple/otlp through the "import" condition.
import { OTLPTraceExporter } from "genkit-for-maple/otlp"
export const exporterIsNative: boolean = new OTLPTraceExporter({ url: "http://127.0.0.1:4318/v1/traces" }).isNative
