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
 * Options of {@link GenkitForMaple}, all optional. Validated by the constructor: an unknown option
 * or a value of the wrong type throws a `TypeError` there, never from `onEnd`.
 */
/**
 * The capture modes of the OpenTelemetry GenAI instrumentations (semconv `ContentCapturingMode`,
 * seed 004), as `captureContent` and `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` spell them
 * (case-insensitive). This processor writes span attributes only, never events or log records:
 * - `SPAN_ONLY`, `SPAN_AND_EVENT` (and `true`): the content attributes are written (no event is
 *   emitted for `SPAN_AND_EVENT`);
 * - `NO_CONTENT`, `EVENT_ONLY` (and `false`): they are not (content belongs in events there, and
 *   this processor writes none).
 */
export type CaptureContentMode = "NO_CONTENT" | "SPAN_ONLY" | "EVENT_ONLY" | "SPAN_AND_EVENT"

export interface GenkitForMapleOptions {
  /**
   * Which attributes are written. Default `"complete"`.
   *
   * - `"complete"`: what Maple's Agent Sessions need to be right (issue 10), on top of the mapping
   *   below:
   *   1. tokens per provider (seed 003 "Tokens and cost", seed 002 "The spans and attributes Maple
   *      reads"): Gemini (`googleai/`, `vertexai/`) `gen_ai.usage.output_tokens` = `outputTokens +
   *      thoughtsTokens`, `gen_ai.usage.cache_read.input_tokens` = `cachedContentTokens`,
   *      `gen_ai.usage.reasoning.output_tokens` = `thoughtsTokens`; Anthropic
   *      `gen_ai.usage.input_tokens` = `inputTokens` + cache reads + cache writes
   *      (`usage.custom.cache_read_input_tokens` / `cache_creation_input_tokens`),
   *      `gen_ai.usage.cache_read.input_tokens`, `gen_ai.usage.cache_write.input_tokens`;
   *      OpenAI-compatible: counts as reported, cache reads and reasoning from the raw usage
   *      details; other plugins: Genkit's counts. Integers; a count the plugin does not report is
   *      not written (a reported `0` is).
   *   2. `gen_ai.usage.cost` (double, USD) when the model's price is known (see `cost`).
   *   3. `gen_ai.provider.name` from the semantic conventions registry (`googleai` -> `gcp.gemini`,
   *      `vertexai` -> `gcp.vertex_ai`, `xai` -> `x_ai`, `mistral` -> `mistral_ai`, ...); an
   *      unknown plugin prefix passes through lowercased (seed 004).
   *   4. `error.type` (string) on failed flow, agent, model and tool spans (status `ERROR`): the
   *      thrown error's name (seed 004: "In JavaScript, error.type is the thrown error's name"),
   *      read from the span's `exception` event (its stack trace's first word, else
   *      `exception.type`), else `_OTHER`.
   *   5. `gen_ai.tool.call.id` on `execute_tool` spans, paired with the model's tool request
   *      (seed 003 step 3).
   *   6. multipart tools (`tool.v2`) map like `tool`; the result is their `output`, or
   *      `{"output","content":[parts]}` when they return content parts.
   *   7. media parts (seed 004): a remote URL becomes `{"type":"uri","modality","mime_type","uri"}`,
   *      a `data:` URL `{"type":"blob","modality","mime_type","size"}` with the decoded size in
   *      bytes and never the bytes.
   *   8. finish reasons in the semantic conventions' vocabulary: `blocked` -> `content_filter`, an
   *      answer that asks for tools -> `tool_call`; one entry of `gen_ai.response.finish_reasons`
   *      per output message, equal to its `finish_reason` (`unknown` when the plugin reports none).
   *   9. `gen_ai.request.temperature`, `max_tokens`, `top_p`, `top_k`, `stop_sequences`, `seed`,
   *      `frequency_penalty`, `presence_penalty` from `genkit:input.config` when set;
   *      `gen_ai.output.type` (`json`, `text`, `image`) when an output format was asked;
   *      `gen_ai.response.id` / `gen_ai.response.model` when the plugin's response carries them.
   *
   *   Complete mode needs the native binding; without it the pure-JS fallback writes reference
   *   mode and its one `diag` warning says so.
   * - `"reference"`: exactly the attributes of the reference processor of Maple's guide (seed
   *   000), byte for byte, for comparing dashboards during a migration.
   */
  readonly mode?: "complete" | "reference"
  /**
   * Complete mode: write `gen_ai.usage.cost` (USD) from the token counts and bundled model
   * prices, cache rates applied; a model without a known price gets no cost attribute (never
   * `0`). Default `true`. Ignored in reference mode.
   */
  readonly cost?: boolean
  /**
   * Whether the five content attributes ({@link CONTENT_ATTRIBUTES}: `gen_ai.system_instructions`,
   * `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`) are written (issue 11; seed 003 "Content": "User wants no content →
   * skip those five attributes"). Every other attribute is written either way, on the native and
   * the pure-JS path alike.
   *
   * A boolean or a {@link CaptureContentMode} token (case-insensitive). When set, it beats the
   * variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`, which is read when the processor
   * is constructed (same tokens, plus `true`/`false`; unset or empty: the default; an unrecognised
   * token: one `diag.warn` and the default). Default: content on (Maple's transcripts are the point,
   * and seed 000's processor captures). Any other option value throws a `TypeError`.
   */
  readonly captureContent?: boolean | CaptureContentMode | Lowercase<CaptureContentMode>
  /**
   * Replace secrets inside the five content attributes by `[REDACTED]` before they are written
   * (issue 11; seed 003 "Content": "Never put API keys or `Authorization` headers in any
   * attribute"). Default `true`. Built-in patterns: `Authorization`/`Proxy-Authorization` and
   * `Bearer` values, OpenAI `sk-`/`sk-proj-`, Anthropic `sk-ant-`, Google `AIza...`, AWS access key
   * ids (`AKIA`/`ASIA`) and `aws_secret_access_key`-style pairs, GitHub (`ghp_`, `github_pat_`, ...),
   * Slack (`xox?-`, `xapp-`, webhooks), JWTs, PEM private key blocks, Maple `maple_sk_`/`maple_pk_`;
   * a string value under a credential key (`api_key`, `Authorization`, `client_secret`, ...; any
   * case, one `-`/`_` between words at most) is replaced whole. Patterns match the decoded text of each JSON string and are replaced in its raw
   * text: the JSON stays valid, only string contents change. Compiled once per processor; a
   * built-in pattern runs only where one of its literals occurs (`sk-`, `bearer`, ...), so text
   * without any costs one vectorised scan. The message attributes are scrubbed as they are
   * written: each value copied from `genkit:input`/`genkit:output` is scrubbed once, in the
   * mapping's pass; tool arguments and results (Genkit's text as it is) in their one pass.
   *
   * Scrubbed or nothing: content that cannot be scrubbed (no memory; the pure-JS fallback, which
   * has no scrubber; a value that is not a string, such as an array or an object an app put in a
   * tool span's `genkit:input`, which reference mode would copy as it is: only a number or a
   * boolean is) is not written (`diag` says so); never written unscrubbed. `genkit:input` and
   * `genkit:output` (Genkit's own attributes) are never changed.
   */
  readonly scrubSecrets?: boolean
  /**
   * Extra secret patterns, `regex` crate syntax (https://docs.rs/regex), compiled once with the
   * built-in ones; a group named `secret` limits the replacement to that group. A pattern that
   * does not compile throws a `TypeError` in the constructor (native binding only). Default none.
   */
  readonly secretPatterns?: readonly string[]
  /**
   * The cap per content attribute, in UTF-8 bytes (as OTLP carries it). Above it: the oldest
   * non-`system` messages of `gen_ai.input.messages` / `gen_ai.output.messages` are dropped whole
   * (the newest is always kept) until it fits; then the longest strings are cut inside their text
   * on a character boundary, ending in `...[truncated]`; the result always parses. The number of
   * dropped messages goes to `genkit_for_maple.content.dropped_messages` (integer) and the capped
   * attributes' names to `genkit_for_maple.content.capped` (string array); a value whose structure
   * alone exceeds the cap is not written. Default: `262144` (256 KiB) in complete mode, below a
   * Collector's 4 MiB gRPC message limit and Maple's 20 MiB request limit with three content
   * attributes and Genkit's own copies on a span; no cap in reference mode. An integer >= 64, or
   * `Infinity` for no cap. Without the native binding a value over the cap is not written. Under a
   * cap, a content value that is not a string is written only when it is a number or a boolean.
   */
  readonly maxContentBytes?: number
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
 *   (`"{}"` when absent; Genkit writes JSON text there: a value an app set that is not a string is
 *   copied as it is in reference mode while the content rules change nothing, and otherwise kept
 *   only when it is a number or a boolean, else left out with a `diag` report);
 *   `gen_ai.tool.call.result` = `genkit:output` (a JSON string result as its text).
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
  /**
   * Adds the `gen_ai.*` attributes to `span.attributes`, in place. Never throws. In mode
   * `"complete"` with the native binding, the constructor gives the instance its own `onEnd`
   * (non-enumerable; the same attributes, faster on flow spans) unless a subclass overrides `onEnd`
   * or the prototype's was replaced before: wrap or spy on the instance's `onEnd`, or on the
   * prototype before constructing.
   */
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

/**
 * The five span attributes that carry prompt, answer or tool payload text (seed 003 "Content"; the
 * GenAI semantic conventions' opt-in content attributes): `gen_ai.system_instructions`,
 * `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments`,
 * `gen_ai.tool.call.result`. Frozen.
 */
export declare const CONTENT_ATTRIBUTES: readonly [
  "gen_ai.system_instructions",
  "gen_ai.input.messages",
  "gen_ai.output.messages",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.result",
]

/** Options of {@link NoContentSpanExporter} and {@link NoContentSpanProcessor}. */
export interface NoContentOptions {
  /**
   * Also leave out Genkit's own copies of the payloads, `genkit:input` and `genkit:output`
   * (for a backend whose exporter does not redact them itself). Default `false`.
   */
  readonly dropGenkitIO?: boolean
}

/**
 * A `SpanExporter` that hands the exporter it wraps a view of each span without the
 * {@link CONTENT_ATTRIBUTES} (and without `genkit:input`/`genkit:output` with
 * {@link NoContentOptions.dropGenkitIO}), so that one provider can export the transcript to Maple
 * and keep it from another backend (issue 11). `GenkitForMaple` writes the `gen_ai.*` content into
 * the span object every later processor shares; this wrapper never changes that object: a span
 * that has none of the keys is passed as it is, any other as a `Proxy` whose `attributes` is a new
 * object without them (every other property and method is the span's own). Writes the wrapped
 * exporter makes to the view stay in the view.
 *
 * ```ts
 * new NodeSDK({ spanProcessors: [
 *   new GenkitForMaple(),
 *   new BatchSpanProcessor(new OTLPTraceExporter()),                          // Maple: the transcript
 *   new BatchSpanProcessor(new NoContentSpanExporter(otherBackendExporter)),  // no prompts, answers, tool payloads
 * ] })
 * ```
 *
 * Structural types: it fits the `SpanExporter` of OpenTelemetry JS SDK 1.x, 2.x and 3.x.
 */
export declare class NoContentSpanExporter<S extends SpanWithAttributes = SpanWithAttributes, R = unknown> {
  /** @param exporter the exporter that must not receive content. */
  constructor(
    exporter: {
      export(spans: S[], resultCallback: (result: R) => void): void
      shutdown(): Promise<void>
      forceFlush?(): Promise<void>
    },
    options?: NoContentOptions,
  )
  /** Exports the views of `spans` through the wrapped exporter. */
  export(spans: S[], resultCallback: (result: R) => void): void
  /** The wrapped exporter's `shutdown()`. */
  shutdown(): Promise<void>
  /** The wrapped exporter's `forceFlush()`, or a resolved promise when it has none. */
  forceFlush(): Promise<void>
}

/**
 * The same view, for a backend that comes as a `SpanProcessor` (the processor Genkit's
 * `@genkit-ai/google-cloud` builds for Cloud Trace, say): `onEnd` hands the wrapped processor the
 * span without the {@link CONTENT_ATTRIBUTES}; the other methods are passed through. Put it after
 * `GenkitForMaple`.
 */
export declare class NoContentSpanProcessor<Start = unknown, End extends SpanWithAttributes = SpanWithAttributes, Ctx = unknown> {
  /** @param processor the processor that must not receive content. */
  constructor(
    processor: {
      onStart(span: Start, parentContext: Ctx): void
      onEnd(span: End): void
      forceFlush(): Promise<void>
      shutdown(): Promise<void>
    },
    options?: NoContentOptions,
  )
  /** The wrapped processor's `onStart`. */
  onStart(span: Start, parentContext: Ctx): void
  /** The wrapped processor's `onEnd`, with the view of `span`. */
  onEnd(span: End): void
  /** The wrapped processor's `forceFlush()`. */
  forceFlush(): Promise<void>
  /** The wrapped processor's `shutdown()`. */
  shutdown(): Promise<void>
}
