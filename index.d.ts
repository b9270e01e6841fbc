/**
 * genkit-for-maple: an OpenTelemetry span processor that adds the GenAI semantic-convention
 * attributes (`gen_ai.*`, https://opentelemetry.io/docs/specs/semconv/gen-ai/) that Maple's Agent
 * Sessions read to Genkit's spans, computed by a native (Rust, napi-rs) binding with a pure-JS
 * fallback.
 *
 * The types are structural so that the processor fits `NodeSDK`, `BasicTracerProvider` and
 * `NodeTracerProvider` of OpenTelemetry JS SDK 1.x, 2.x and 3.x without this package depending on
 * any of them.
 */

/** An attribute value as the OpenTelemetry JS API defines it (`@opentelemetry/api` `AttributeValue`). */
export type AttributeValue =
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>

/**
 * The part of an ended span the processor reads: its attribute map, which it extends in place.
 * Every SDK's `ReadableSpan` has it.
 *
 * The values are `unknown` on purpose: `@opentelemetry/api` 1.10 types `Attributes` as
 * `{ [key: string]: AnyValue }` with `AnyValue = unknown`, while 1.9 and older use
 * `AttributeValue | undefined`. Only `unknown` accepts the `ReadableSpan` of both, so that
 * `new GenkitForMaple()` is a `SpanProcessor` whichever API version the SDK was built against.
 */
export interface SpanWithAttributes {
  /** The span's attributes; `gen_ai.*` keys are added to this same object. */
  readonly attributes: { [key: string]: unknown }
  /** The span's name, used in diagnostic reports. */
  readonly name?: string
}

/**
 * Options of {@link GenkitForMaple}. Empty for now; later options (content capture, token
 * details) will be added here without breaking the constructor.
 *
 * The index signature makes an empty options type that still rejects wrong arguments: a bare `{}`
 * type would accept `new GenkitForMaple(42)` and `{ typo: true }`. When the first real (optional)
 * option is added, drop the signature: an all-optional type rejects those on its own.
 */
export interface GenkitForMapleOptions {
  readonly [option: string]: never
}

/**
 * The OpenTelemetry `SpanProcessor` that maps Genkit spans to the GenAI semantic conventions.
 *
 * Put it before the exporting processor:
 * ```ts
 * new NodeSDK({ spanProcessors: [new GenkitForMaple(), new BatchSpanProcessor(new OTLPTraceExporter())] })
 * ```
 *
 * In `onEnd`, by `genkit:metadata:subtype` (seed 000 "Add the span processor", seed 001 mapping table):
 * - `flow`, `agent`: `gen_ai.operation.name` = `invoke_agent`, `gen_ai.agent.name` = `genkit:name`,
 *   `gen_ai.conversation.id` = `genkit:metadata:conversationId` ?? `genkit:metadata:agent:sessionId`
 *   (type kept: a number stays a number).
 * - `model`: `chat`; `gen_ai.provider.name` / `gen_ai.request.model` (the `genkit:name` before / after
 *   the first `/`); `gen_ai.input.messages` and `gen_ai.system_instructions` (JSON strings) from
 *   `genkit:input.messages`; `gen_ai.output.messages` (JSON string) and
 *   `gen_ai.response.finish_reasons` (string array) from `genkit:output.message`, or, when the plugin
 *   answers in the `candidates` form (`@genkit-ai/google-genai`, `@genkit-ai/anthropic`), one output
 *   message per candidate; `gen_ai.usage.input_tokens` / `gen_ai.usage.output_tokens` (integers)
 *   from `genkit:output.usage`.
 * - `tool`: `execute_tool`; `gen_ai.tool.name`; `gen_ai.tool.call.arguments` = `genkit:input`
 *   (`"{}"` when absent); `gen_ai.tool.call.result` = `genkit:output` (a JSON string result as its text).
 * - anything else: untouched.
 *
 * Message JSON (seed 002/003): `[{"role","parts":[{"type":"text","content"} | {"type":"reasoning","content"}
 * | {"type":"tool_call","id","name","arguments"} | {"type":"tool_call_response","id","response"}],
 * "finish_reason"?}]`; role `model` becomes `assistant`; media, data and custom parts are left out.
 *
 * Errors: never throws from any method. When an attribute cannot be derived (truncated JSON, a
 * shape Genkit does not write), that attribute is omitted, the others are written, `genkit:*`
 * attributes are never changed, and the reason is reported through `diag` from
 * `@opentelemetry/api` at most once per problem kind per minute.
 */
export declare class GenkitForMaple {
  /** @param options see {@link GenkitForMapleOptions}. */
  constructor(options?: GenkitForMapleOptions)
  /** `true` when the native binding is loaded; `false` when the pure-JS mapping runs (one `diag.warn` said why). */
  readonly isNative: boolean
  /** Does nothing: Genkit sets `genkit:input`/`genkit:output` just before the span ends. */
  onStart(span: unknown, parentContext: unknown): void
  /** Adds the `gen_ai.*` attributes to `span.attributes`, in place. Never throws. */
  onEnd(span: SpanWithAttributes): void
  /** Resolves at once: the processor buffers nothing. */
  forceFlush(): Promise<void>
  /** Resolves at once: the processor holds no resources. */
  shutdown(): Promise<void>
}

/**
 * The package's pure-JS mapping of one attribute map, in place: the same rules as the native
 * binding. Returns problem flags (`0` when every attribute could be derived). Never throws on
 * JSON-derived input. Exposed for benchmarks and tests.
 */
export declare function mapSpanJs(attributes: { [key: string]: unknown }): number
