//! Tool call id pairing (rule 5 of issue 10) replayed on the real Genkit spans: the corpus
//! (`genkit-1.42-spans.jsonl`), the plugin corpus and the scenario corpus (real plugins against the
//! fake providers, `scripts/gen-scenario-corpus.js`), fed in the order the spans ended, as a span
//! processor sees them. Every tool span gets the ref of a request for the same tool with an equal
//! input from the model answer of its own `generate` span, each ref once, and the ref the next model
//! call answers with its `toolResponse` where the output tells calls apart; a tool span whose
//! request has no ref (Gemini 2.5) gets none; the state is empty once every trace ended.

mod common;
use common::rows;

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use genkit_for_maple_core::pairing::{SpanKey, ToolCallPairing};
use serde_json::Value;

fn attr<'a>(row: &'a Value, key: &str) -> Option<&'a str> {
    row["attributes"][key].as_str()
}

fn parsed(row: &Value, key: &str) -> Value {
    attr(row, key)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null)
}

fn answer(row: &Value) -> Value {
    let out = parsed(row, "genkit:output");
    if out["message"].is_object() {
        out["message"].clone()
    } else {
        out["candidates"][0]["message"].clone()
    }
}

fn parent(row: &Value) -> Option<&str> {
    row["parentSpanId"].as_str().filter(|s| !s.is_empty())
}

struct Replay {
    tools: usize,
    with_id: usize,
    without_ref: usize,
}

fn replay(file: &str) -> Replay {
    let rows = rows(file);
    let now = Instant::now();
    let mut state = ToolCallPairing::new();
    let mut given: HashSet<(String, String)> = HashSet::new();
    // What the next model calls answered: (trace, ref) -> tool output.
    let mut responses: HashMap<(String, String), Value> = HashMap::new();
    for row in &rows {
        if attr(row, "genkit:metadata:subtype") == Some("model") {
            for m in parsed(row, "genkit:input")["messages"]
                .as_array()
                .into_iter()
                .flatten()
            {
                for p in m["content"].as_array().into_iter().flatten() {
                    if let Some(r) = p["toolResponse"]["ref"].as_str() {
                        responses.insert(
                            (row["traceId"].as_str().unwrap_or("").into(), r.into()),
                            p["toolResponse"]["output"].clone(),
                        );
                    }
                }
            }
        }
    }
    let mut replay = Replay {
        tools: 0,
        with_id: 0,
        without_ref: 0,
    };
    for row in &rows {
        let trace = row["traceId"].as_str().expect("trace id");
        let span = row["spanId"].as_str().expect("span id");
        match attr(row, "genkit:metadata:subtype") {
            Some("model") => {
                if let (Some(p), Some(out)) = (parent(row), attr(row, "genkit:output")) {
                    state.record_model_output(
                        SpanKey::from_hex(trace, p).expect("hex ids"),
                        out,
                        now,
                    );
                }
            }
            Some("tool") | Some("tool.v2") => {
                let name = attr(row, "genkit:name").expect("tool name");
                let p = parent(row).expect("a tool span has a parent");
                let input_text = attr(row, "genkit:input");
                let input: Value = input_text
                    .and_then(|s| serde_json::from_str(s).ok())
                    .unwrap_or(Value::Null);
                // The requests of the model answer under the same parent that asked for this call.
                let asked: Vec<Option<String>> = rows
                    .iter()
                    .filter(|m| {
                        m["traceId"] == row["traceId"]
                            && attr(m, "genkit:metadata:subtype") == Some("model")
                            && parent(m) == Some(p)
                    })
                    .flat_map(|m| answer(m)["content"].as_array().cloned().unwrap_or_default())
                    .filter(|c| {
                        c["toolRequest"]["name"] == name && c["toolRequest"]["input"] == input
                    })
                    .map(|c| c["toolRequest"]["ref"].as_str().map(String::from))
                    .collect();
                let id = state.tool_call_id(
                    SpanKey::from_hex(trace, p).expect("hex ids"),
                    name,
                    input_text,
                    now,
                );
                replay.tools += 1;
                let where_ = format!("{} / {name} {span}", row["scenario"]);
                if asked.is_empty() || asked.iter().all(Option::is_none) {
                    assert_eq!(id, None, "{where_}: nothing to pair with");
                    replay.without_ref += usize::from(!asked.is_empty());
                    continue;
                }
                let id =
                    id.unwrap_or_else(|| panic!("{where_}: no id although the model asked for it"));
                assert!(
                    asked.contains(&Some(id.clone())),
                    "{where_}: {id} is not a ref of this call"
                );
                assert!(
                    given.insert((trace.into(), id.clone())),
                    "{where_}: {id} given twice"
                );
                // The next model call got this tool's output under that ref.
                if let (Some(out), Some(answered)) = (
                    attr(row, "genkit:output"),
                    responses.get(&(trace.into(), id.clone())),
                ) {
                    let out: Value = serde_json::from_str(out).unwrap_or(Value::Null);
                    let mine = if attr(row, "genkit:metadata:subtype") == Some("tool.v2") {
                        out["output"].clone()
                    } else {
                        out
                    };
                    assert_eq!(
                        &mine, answered,
                        "{where_}: the next model call answered {id} with another output"
                    );
                }
                replay.with_id += 1;
            }
            _ => {}
        }
        state.span_ended(
            SpanKey::from_hex(trace, span).expect("hex ids"),
            parent(row).is_none(),
        );
    }
    assert_eq!(
        state.pending(),
        0,
        "{file}: requests left after every trace ended"
    );
    replay
}

#[test]
fn main_corpus() {
    let r = replay("genkit-1.42-spans.jsonl");
    assert!(
        r.tools >= 15 && r.with_id >= 15,
        "{} tool spans, {} with id",
        r.tools,
        r.with_id
    );
}

#[test]
fn plugin_corpus() {
    let r = replay("genkit-1.42-plugin-spans.jsonl");
    // google-genai: no ref; compat-oai and anthropic: the provider's call id.
    assert!(
        r.with_id >= 2 && r.without_ref >= 1,
        "{} with id, {} without ref",
        r.with_id,
        r.without_ref
    );
}

#[test]
fn scenario_corpus_parallel_equal_calls_failing_and_multipart_tools() {
    let r = replay("genkit-1.42-scenario-spans.jsonl");
    // 32 tool spans: 9 of google-genai (no refs), 23 of compat-oai and anthropic.
    assert_eq!(r.tools, 32);
    assert!(
        r.with_id == 23 && r.without_ref == 9,
        "{} with id, {} without ref",
        r.with_id,
        r.without_ref
    );
}

/// The same corpus through the whole-span seam (`span::Mapper`, complete mode), as the processor
/// and the native exporter call it: the tool spans of compat-oai and anthropic get their call ids,
/// google-genai's none; every priced chat span gets a cost; reference mode writes neither.
#[test]
fn scenario_corpus_through_the_seam() {
    use genkit_for_maple_core::span::{Mapper, Mode, Options, SpanInput, Status, Value};
    let rows = rows("genkit-1.42-scenario-spans.jsonl");
    for mode in [Mode::Complete, Mode::Reference] {
        let mut mapper = Mapper::new(Options {
            mode,
            cost: true,
            ..Options::default()
        });
        let (mut ids, mut costs) = (0, 0);
        for row in &rows {
            let subtype = attr(row, "genkit:metadata:subtype");
            let span = SpanInput {
                status: Status::from_code(row["status"]["code"].as_u64().unwrap_or(0) as u32),
                ..span_of(row)
            };
            let mapped = mapper.map(&span);
            let get = |key: &str| {
                mapped
                    .attributes
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| v.clone())
            };
            if let Some(Value::Str(id)) = get("gen_ai.tool.call.id") {
                assert_ne!(row["plugin"], "google-genai");
                assert!(
                    id.starts_with("call_fake") || id.starts_with("toolu_fake"),
                    "{id}"
                );
                ids += 1;
            }
            if let Some(Value::Double(cost)) = get("gen_ai.usage.cost") {
                assert!(cost > 0.0 && cost < 0.1, "{} {cost}", row["scenario"]);
                costs += 1;
            }
            if subtype.is_none() {
                let root = parent(row).is_none();
                mapper.span_ended(
                    span.trace_id.unwrap_or_default(),
                    span.span_id.unwrap_or_default(),
                    root,
                );
            }
        }
        match mode {
            Mode::Complete => {
                assert_eq!(ids, 23, "every call of compat-oai and anthropic");
                // Every chat span with usage: all but the 3 failed model calls and anthropic's
                // refused JSON request.
                let chats = rows
                    .iter()
                    .filter(|r| attr(r, "genkit:metadata:subtype") == Some("model"))
                    .count();
                assert_eq!(costs, chats - 4);
            }
            Mode::Reference => assert_eq!((ids, costs), (0, 0)),
        }
    }
}

/// The tool call ids of every tool span of `file`, in the order the spans ended, from the state
/// fed directly (`record_model_output` parses each model answer itself).
fn direct_ids(file: &str) -> Vec<Option<String>> {
    let now = Instant::now();
    let mut state = ToolCallPairing::new();
    let mut ids = Vec::new();
    for row in rows(file) {
        let trace = row["traceId"].as_str().expect("trace id");
        let key = |span: &str| SpanKey::from_hex(trace, span).expect("hex ids");
        match attr(&row, "genkit:metadata:subtype") {
            Some("model") => {
                if let (Some(p), Some(out)) = (parent(&row), attr(&row, "genkit:output")) {
                    state.record_model_output(key(p), out, now);
                }
            }
            Some("tool") | Some("tool.v2") => ids.push(state.tool_call_id(
                key(parent(&row).expect("a parent")),
                attr(&row, "genkit:name").expect("tool name"),
                attr(&row, "genkit:input"),
                now,
            )),
            _ => {}
        }
        state.span_ended(
            key(row["spanId"].as_str().expect("span id")),
            parent(&row).is_none(),
        );
    }
    ids
}

/// A corpus row as the whole-span seam takes it: subtype, name, the two texts and the ids.
fn span_of(row: &Value) -> genkit_for_maple_core::span::SpanInput<'_> {
    use genkit_for_maple_core::span::{parse_hex, SpanInput};
    SpanInput {
        subtype: attr(row, "genkit:metadata:subtype"),
        name: attr(row, "genkit:name"),
        input: attr(row, "genkit:input"),
        output: attr(row, "genkit:output"),
        trace_id: row["traceId"].as_str().and_then(parse_hex),
        span_id: row["spanId"].as_str().and_then(parse_hex),
        parent_span_id: parent(row).and_then(parse_hex),
        ..SpanInput::default()
    }
}

/// The same through the whole-span seam in complete mode, where the tool requests come from the
/// mapping's own parse of each model answer (`complete::map_collecting`), not from a second one.
fn seam_ids(file: &str) -> Vec<Option<String>> {
    use genkit_for_maple_core::span::{Mapper, Mode, Options, Value as V};
    let mut mapper = Mapper::new(Options {
        mode: Mode::Complete,
        ..Options::default()
    });
    let mut ids = Vec::new();
    for row in rows(file) {
        let subtype = attr(&row, "genkit:metadata:subtype");
        let span = span_of(&row);
        if matches!(subtype, Some("model" | "tool" | "tool.v2")) {
            let mapped = mapper.map(&span);
            if subtype != Some("model") {
                ids.push(
                    mapped
                        .attributes
                        .iter()
                        .find(|(k, _)| *k == "gen_ai.tool.call.id")
                        .map(|(_, v)| match v {
                            V::Str(s) => s.to_string(),
                            other => panic!("a tool call id that is not a string: {other:?}"),
                        }),
                );
            }
        } else {
            mapper.span_ended(
                span.trace_id.expect("trace id"),
                span.span_id.expect("span id"),
                span.parent_span_id.is_none(),
            );
        }
    }
    assert!(
        !mapper.holds_tool_calls(),
        "{file}: state left after every trace ended"
    );
    ids
}

#[test]
fn the_seam_pairs_every_corpus_as_the_state_fed_directly_does() {
    for file in [
        "genkit-1.42-spans.jsonl",
        "genkit-1.42-plugin-spans.jsonl",
        "genkit-1.42-scenario-spans.jsonl",
    ] {
        let direct = direct_ids(file);
        assert!(
            direct.iter().filter(|id| id.is_some()).count() >= 2,
            "{file}: {direct:?}"
        );
        assert_eq!(seam_ids(file), direct, "{file}");
    }
}

/// The tool call id a tool span `getWeather({"city":"Paris"})` gets through the seam (complete
/// mode) after a model span under the same parent answered `output`.
fn id_after(output: &str) -> Option<String> {
    use genkit_for_maple_core::span::{Mapper, Mode, Options, SpanInput, Value as V};
    let mut mapper = Mapper::new(Options {
        mode: Mode::Complete,
        ..Options::default()
    });
    let (trace, parent) = ([7u8; 16], Some([1u8; 8]));
    mapper.map(&SpanInput {
        subtype: Some("model"),
        name: Some("openai/gpt-4o"),
        output: Some(output),
        trace_id: Some(trace),
        span_id: Some([2u8; 8]),
        parent_span_id: parent,
        ..SpanInput::default()
    });
    let mapped = mapper.map(&SpanInput {
        subtype: Some("tool"),
        name: Some("getWeather"),
        input: Some(r#"{"city":"Paris"}"#),
        output: Some("\"sunny\""),
        trace_id: Some(trace),
        span_id: Some([3u8; 8]),
        parent_span_id: parent,
        ..SpanInput::default()
    });
    let id = mapped
        .attributes
        .iter()
        .find(|(k, _)| *k == "gen_ai.tool.call.id");
    id.map(|(_, v)| match v {
        V::Str(s) => s.to_string(),
        other => panic!("not a string: {other:?}"),
    })
}

/// The answer forms the one parse of complete mode reads for rule 5, each paired as its output
/// messages show it: the top-level message, the first candidate's, key and value escapes (the
/// parse unescapes them; a text search for `"toolRequest"` would not), and none for an answer
/// whose `message` is not an object (complete mode writes no output message for it either).
#[test]
fn every_answer_form_pairs_as_its_output_messages_show_it() {
    let request = r#"{"toolRequest":{"name":"getWeather","ref":"r1","input":{"city":"Paris"}}}"#;
    let escaped = r#"{"tool\u0052equest":{"n\u0061me":"get\u0057eather","ref":"r\u0031","input":{"city":"Pa\u0072is"}}}"#;
    let message = |part: &str| format!(r#"{{"role":"model","content":[{part}]}}"#);
    let cases = [
        (format!(r#"{{"message":{}}}"#, message(request)), Some("r1")),
        (
            format!(
                r#"{{"candidates":[{{"index":0,"message":{}}}]}}"#,
                message(request)
            ),
            Some("r1"),
        ),
        (
            format!(
                r#"{{"message":null,"candidates":[{{"message":{}}}]}}"#,
                message(request)
            ),
            Some("r1"),
        ),
        (format!(r#"{{"message":{}}}"#, message(escaped)), Some("r1")),
        // The second candidate is not the answer Genkit acts on.
        (
            format!(
                r#"{{"candidates":[{{"message":{{"role":"model","content":[]}}}},{{"message":{}}}]}}"#,
                message(request)
            ),
            None,
        ),
        (
            format!(
                r#"{{"message":"hi","candidates":[{{"message":{}}}]}}"#,
                message(request)
            ),
            None,
        ),
        (
            format!(
                r#"{{"message":[1],"candidates":[{{"message":{}}}]}}"#,
                message(request)
            ),
            None,
        ),
    ];
    for (output, want) in &cases {
        assert_eq!(id_after(output).as_deref(), *want, "{output}");
    }
}

/// `Mapper::map_with_ids` (the napi binding's `mapSpan`: the span's ids read from JavaScript only
/// when rule 5 uses them) maps every span of the three corpora, in the order they ended, as
/// `Mapper::map` maps it with its ids in the span, and keeps tool call id state alike; it asks
/// for the ids (at most once: an `FnOnce`) for every model answer with tool requests, and
/// otherwise only while the mapper keeps state.
#[test]
fn ids_asked_only_for_rule_5_map_as_ids_given() {
    use genkit_for_maple_core::span::{Mapper, Mode, Options, SpanInput, TraceIds};
    use std::cell::Cell;
    for file in [
        "genkit-1.42-spans.jsonl",
        "genkit-1.42-plugin-spans.jsonl",
        "genkit-1.42-scenario-spans.jsonl",
    ] {
        let options = Options {
            mode: Mode::Complete,
            cost: true,
            ..Options::default()
        };
        let (mut given, mut lazy) = (Mapper::new(options.clone()), Mapper::new(options));
        let (mut mapped, mut asked, mut paired) = (0, 0, 0);
        for row in rows(file) {
            let subtype = attr(&row, "genkit:metadata:subtype");
            let span = span_of(&row);
            if subtype.is_none() {
                for m in [&mut given, &mut lazy] {
                    m.span_ended(
                        span.trace_id.expect("trace id"),
                        span.span_id.expect("span id"),
                        span.parent_span_id.is_none(),
                    );
                }
                continue;
            }
            let held = lazy.holds_tool_calls();
            let requests = subtype == Some("model")
                && span.output.is_some_and(|o| o.contains("\"toolRequest\""));
            let calls = Cell::new(0);
            let without_ids = SpanInput {
                trace_id: None,
                span_id: None,
                parent_span_id: None,
                ..span.clone()
            };
            let got = lazy.map_with_ids(&without_ids, || {
                calls.set(calls.get() + 1);
                TraceIds::of(&span)
            });
            let want = given.map(&span);
            assert_eq!(
                format!("{:?}", got.attributes),
                format!("{:?}", want.attributes),
                "{file}: {:?}",
                row["spanId"]
            );
            assert_eq!(got.problems, want.problems);
            assert_eq!(lazy.holds_tool_calls(), given.holds_tool_calls());
            if !held && !requests {
                assert_eq!(calls.get(), 0, "{file}: ids asked without a use");
            }
            if requests {
                assert_eq!(calls.get(), 1, "{file}: a model answer's tool requests");
            }
            mapped += 1;
            asked += calls.get();
            paired += usize::from(
                got.attributes
                    .iter()
                    .any(|(k, _)| *k == "gen_ai.tool.call.id"),
            );
        }
        assert!(
            asked > 0 && asked < mapped,
            "{file}: ids asked for {asked} of {mapped} spans"
        );
        assert!(paired > 0, "{file}: no tool call id");
        assert!(!lazy.holds_tool_calls(), "{file}: state left");
    }
}
