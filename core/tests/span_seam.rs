//! The whole-span seam (`span::Mapper`): reference mode equals the reference rules, complete mode
//! applies issue 10's rules. Inputs are shaped as Genkit 1.42 writes them (corpus fixtures).

use genkit_for_maple_core::complete::{finish_reason, media_info, provider_name};
use genkit_for_maple_core::genkit::Raw;
use genkit_for_maple_core::span::{
    error_type, Mapper, Mode, Options, OtherInput, SpanInput, Status, Value,
};

fn mapper(mode: Mode) -> Mapper {
    Mapper::new(Options {
        mode,
        cost: true,
        ..Options::default()
    })
}

fn get<'a>(m: &'a genkit_for_maple_core::span::Mapped<'_>, key: &str) -> Option<&'a Value<'a>> {
    m.attributes.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

fn s(v: Option<&Value<'_>>) -> String {
    match v {
        Some(Value::Str(s)) => s.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

fn int(v: Option<&Value<'_>>) -> i64 {
    match v {
        Some(Value::Int(i)) => *i,
        other => panic!("not an int: {other:?}"),
    }
}

const GEMINI_OUT: &str = r#"{"candidates":[{"index":0,"message":{"role":"model","content":[{"reasoning":"think"},{"toolRequest":{"name":"getWeather","input":{"city":"Paris"}}}]},"finishReason":"stop","custom":{}}],"custom":{"usageMetadata":{"promptTokenCount":224},"modelVersion":"gemini-2.5-flash","responseId":"resp-1"},"usage":{"inputTokens":224,"outputTokens":21,"thoughtsTokens":37,"totalTokens":282,"cachedContentTokens":134,"inputImages":0}}"#;

#[test]
fn complete_gemini_tokens_finish_reason_provider_response() {
    let span = SpanInput {
        subtype: Some("model"),
        name: Some("googleai/gemini-2.5-flash"),
        input: Some(
            r#"{"messages":[{"role":"user","content":[{"text":"hi"}]}],"config":{"temperature":0.2,"maxOutputTokens":512,"topK":0,"stopSequences":["x"],"seed":7},"output":{"format":"json"}}"#,
        ),
        output: Some(GEMINI_OUT),
        ..SpanInput::default()
    };
    let m = mapper(Mode::Complete).map(&span);
    assert_eq!(m.problems, 0);
    assert_eq!(s(get(&m, "gen_ai.provider.name")), "gcp.gemini");
    assert_eq!(s(get(&m, "gen_ai.request.model")), "gemini-2.5-flash");
    assert_eq!(int(get(&m, "gen_ai.usage.input_tokens")), 224);
    assert_eq!(int(get(&m, "gen_ai.usage.output_tokens")), 21 + 37);
    assert_eq!(int(get(&m, "gen_ai.usage.reasoning.output_tokens")), 37);
    assert_eq!(int(get(&m, "gen_ai.usage.cache_read.input_tokens")), 134);
    assert!(get(&m, "gen_ai.usage.cache_write.input_tokens").is_none());
    assert_eq!(
        get(&m, "gen_ai.response.finish_reasons"),
        Some(&Value::Array(vec![Value::str("tool_call")]))
    );
    assert!(s(get(&m, "gen_ai.output.messages")).ends_with(r#""finish_reason":"tool_call"}]"#));
    assert_eq!(s(get(&m, "gen_ai.response.id")), "resp-1");
    assert_eq!(s(get(&m, "gen_ai.response.model")), "gemini-2.5-flash");
    assert_eq!(
        get(&m, "gen_ai.request.temperature"),
        Some(&Value::Double(0.2))
    );
    assert_eq!(int(get(&m, "gen_ai.request.max_tokens")), 512);
    assert_eq!(int(get(&m, "gen_ai.request.top_k")), 0);
    assert_eq!(int(get(&m, "gen_ai.request.seed")), 7);
    assert_eq!(
        get(&m, "gen_ai.request.stop_sequences"),
        Some(&Value::Array(vec![Value::str("x")]))
    );
    assert_eq!(s(get(&m, "gen_ai.output.type")), "json");
    assert!(get(&m, "error.type").is_none());
}

#[test]
fn complete_anthropic_adds_cache_reads_and_writes() {
    let out = r#"{"candidates":[{"index":0,"finishReason":"stop","message":{"role":"model","content":[{"text":"ok"}]}}],"usage":{"inputTokens":133,"outputTokens":97,"custom":{"cache_creation_input_tokens":2048,"cache_read_input_tokens":10}},"raw":{"id":"msg_1","model":"claude-sonnet-4-5-20250929"}}"#;
    let span = SpanInput {
        subtype: Some("model"),
        name: Some("anthropic/claude-sonnet-4-5"),
        output: Some(out),
        ..SpanInput::default()
    };
    let m = mapper(Mode::Complete).map(&span);
    assert_eq!(int(get(&m, "gen_ai.usage.input_tokens")), 133 + 2048 + 10);
    assert_eq!(int(get(&m, "gen_ai.usage.cache_read.input_tokens")), 10);
    assert_eq!(int(get(&m, "gen_ai.usage.cache_write.input_tokens")), 2048);
    assert_eq!(int(get(&m, "gen_ai.usage.output_tokens")), 97);
    assert_eq!(s(get(&m, "gen_ai.response.id")), "msg_1");
    assert_eq!(s(get(&m, "gen_ai.input.messages")), "[]");
}

#[test]
fn complete_openai_raw_details_and_no_invented_tokens() {
    let out = r#"{"finishReason":"length","message":{"role":"model","content":[{"text":"x"}]},"usage":{"inputTokens":112,"outputTokens":216},"raw":{"id":"chatcmpl-1","model":"gpt-5-mini","usage":{"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":192}}}}"#;
    let span = SpanInput {
        subtype: Some("model"),
        name: Some("openai/gpt-5-mini"),
        output: Some(out),
        ..SpanInput::default()
    };
    let m = mapper(Mode::Complete).map(&span);
    assert_eq!(int(get(&m, "gen_ai.usage.cache_read.input_tokens")), 0);
    assert_eq!(int(get(&m, "gen_ai.usage.reasoning.output_tokens")), 192);
    assert_eq!(int(get(&m, "gen_ai.usage.output_tokens")), 216);
    assert_eq!(
        get(&m, "gen_ai.response.finish_reasons"),
        Some(&Value::Array(vec![Value::str("length")]))
    );
    // No usage reported: no token attribute at all.
    let bare = SpanInput {
        output: Some(r#"{"finishReason":"stop","message":{"role":"model","content":[]}}"#),
        ..span
    };
    let m = mapper(Mode::Complete).map(&bare);
    assert!(m
        .attributes
        .iter()
        .all(|(k, _)| !k.starts_with("gen_ai.usage")));
}

/// `gen_ai.input.messages` of a Gemini model span whose `genkit:input` is `input`, in `mode`.
fn input_messages(input: &str, mode: Mode) -> String {
    let span = SpanInput {
        subtype: Some("model"),
        name: Some("googleai/gemini-2.5-flash"),
        input: Some(input),
        ..SpanInput::default()
    };
    s(get(&mapper(mode).map(&span), "gen_ai.input.messages")).to_string()
}

#[test]
fn complete_media_parts_never_copy_bytes() {
    let data = "A".repeat(3998);
    let input = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"text":"see"}},{{"media":{{"url":"data:image/png;base64,{data}==","contentType":"image/png"}}}},{{"media":{{"url":"https://x.test/a.jpg","contentType":"image/jpeg"}}}},{{"media":{{"url":"gs://b/v.mp4"}}}}]}}]}}"#
    );
    let messages = input_messages(&input, Mode::Complete);
    assert!(!messages.contains("AAAA"), "{messages}");
    let parsed: serde_json::Value = serde_json::from_str(&messages).unwrap();
    let parts = &parsed[0]["parts"];
    assert_eq!(parts[1]["type"], "blob");
    assert_eq!(parts[1]["modality"], "image");
    assert_eq!(parts[1]["mime_type"], "image/png");
    assert_eq!(parts[1]["size"], 2998);
    assert_eq!(parts[2]["type"], "uri");
    assert_eq!(parts[2]["uri"], "https://x.test/a.jpg");
    assert_eq!(parts[3]["type"], "uri");
    assert!(parts[3].get("modality").is_none());
    // Reference mode drops media parts, as seed 000 does.
    assert_eq!(
        input_messages(&input, Mode::Reference),
        r#"[{"role":"user","parts":[{"type":"text","content":"see"}]}]"#
    );
}

/// Issue 10 rule 7, every spelling: what a media URL is (`data:` or remote, base64 or not) and its
/// MIME type are read from the decoded text, so a header spelled with escapes (hand-made JSON;
/// `JSON.stringify` writes none there) never gets a `data:` URL's bytes copied as a `uri`.
#[test]
fn escaped_media_urls_are_classified_by_their_decoded_text() {
    let part = |url: &str, content_type: Option<&str>| -> (serde_json::Value, String) {
        let media = match content_type {
            Some(t) => format!(r#"{{"url":"{url}","contentType":"{t}"}}"#),
            None => format!(r#"{{"url":"{url}"}}"#),
        };
        let input = format!(
            r#"{{"messages":[{{"role":"user","content":[{{"text":"see"}},{{"media":{media}}}]}}]}}"#
        );
        let messages = input_messages(&input, Mode::Complete);
        let parsed: serde_json::Value = serde_json::from_str(&messages).unwrap();
        (
            parsed[0]["parts"].get(1).cloned().unwrap_or_default(),
            messages,
        )
    };
    for (url, size) in [
        (r"d\u0061ta:image/png;base64,QUJDREVG", 6),
        (r"data\u003aimage/png;base64,QUJDREVG", 6),
        (r"DATA:image/png;b\u0061se64,QUJDREVG", 6),
        (r"data:image/png;base64\u002cQUJDREVG", 6),
        (r"data:image\/png;base64,QUJDREVG", 6),
        (r"d\u0061ta:text/plain,QUJDREVG", 8),
    ] {
        let (p, messages) = part(url, None);
        assert!(!messages.contains("QUJD"), "{url}: {messages}");
        assert_eq!(p["type"], "blob", "{url}");
        assert_eq!(p["size"], size, "{url}");
    }
    let (p, _) = part(r"d\u0061ta:image/png;base64,QUJDREVG", None);
    assert_eq!(
        (p["modality"].as_str(), p["mime_type"].as_str()),
        (Some("image"), Some("image/png"))
    );
    // A MIME type spelled with escapes names its modality, and is written as JSON.stringify would.
    let (p, _) = part("https://x.test/a", Some(r"image\/jpeg"));
    assert_eq!(
        (p["type"].as_str(), p["modality"].as_str()),
        (Some("uri"), Some("image"))
    );
    assert_eq!(p["mime_type"], "image/jpeg");
    // A remote URL with escapes stays a remote URL, written as it was.
    let (p, messages) = part(r"https:\/\/x.test\/a.jpg", None);
    assert_eq!(p["uri"], "https://x.test/a.jpg");
    assert!(
        messages.contains(r#""uri":"https:\/\/x.test\/a.jpg""#),
        "{messages}"
    );
    // A header that cannot be read decoded (a lone surrogate escape, a header past the limit,
    // no comma) leaves the part out: its bytes are never copied.
    let long = format!(r"d\u0061ta:image/png;{}base64,QUJDREVG", "x".repeat(1100));
    for url in [
        r"d\ud800ata:image/png;base64,QUJDREVG",
        &long,
        r"d\u0061ta:image/pngQUJDREVG",
    ] {
        let (p, messages) = part(url, None);
        assert!(!messages.contains("QUJD"), "{url}: {messages}");
        assert!(p.is_null(), "{url}: {p}");
    }
}

#[test]
fn media_info_measures_data_urls() {
    let i = media_info("data:image/png;base64,AAAA").unwrap();
    assert_eq!((i.mime, i.data_size), (Some("image/png"), Some(3)));
    let i = media_info("data:text/plain;charset=utf-8,a%20b").unwrap();
    assert_eq!((i.mime, i.data_size), (Some("text/plain"), Some(3)));
    let i = media_info(r"data:image/png;base64,AA\u0041A").unwrap();
    assert_eq!(i.data_size, Some(3));
    assert!(media_info("data:image/png;base64").is_none());
    assert_eq!(media_info("https://a/b").unwrap().data_size, None);
}

#[test]
fn media_info_measures_long_base64_payloads_at_every_position() {
    // The scan works on blocks of 64 bytes: whitespace, an escape and padding are found in the
    // first block, across a block boundary and in the remainder alike.
    for len in [4usize, 60, 64, 68, 128, 200, 4096] {
        let plain = "A".repeat(len);
        let url = format!("data:image/png;base64,{plain}");
        assert_eq!(
            media_info(&url).unwrap().data_size,
            Some(len as u64 * 3 / 4),
            "{len}"
        );
        let padded = format!("data:image/png;base64,{}==", &plain[..len - 4]);
        let size = (len as u64 - 4) * 3 / 4;
        assert_eq!(media_info(&padded).unwrap().data_size, Some(size), "{len}");
        for at in [0, len / 2, len - 1] {
            let mut spaced = plain.clone();
            spaced.insert(at, '\n');
            let url = format!("data:image/png;base64,{spaced}");
            assert_eq!(
                media_info(&url).unwrap().data_size,
                Some(len as u64 * 3 / 4),
                "{len} {at}"
            );
            let mut escaped = plain.clone();
            escaped.replace_range(at..at + 1, r"\u0041");
            let url = format!("data:image/png;base64,{escaped}");
            assert_eq!(
                media_info(&url).unwrap().data_size,
                Some(len as u64 * 3 / 4),
                "{len} {at}"
            );
        }
    }
}

#[test]
fn finish_reason_vocabulary() {
    let raw = |s: &'static str| Raw::from_json(s).unwrap();
    let blocked = raw(r#""blocked""#);
    assert_eq!(
        finish_reason(Some(blocked), false).as_deref(),
        Some("content_filter")
    );
    let stop = raw(r#""stop""#);
    assert_eq!(
        finish_reason(Some(stop), true).as_deref(),
        Some("tool_call")
    );
    assert_eq!(finish_reason(Some(stop), false).as_deref(), Some("stop"));
    let other = raw(r#""other""#);
    assert_eq!(finish_reason(Some(other), false).as_deref(), Some("other"));
    assert_eq!(finish_reason(None, false), None);
}

#[test]
fn providers_from_the_registry() {
    for (prefix, name) in [
        ("googleai", "gcp.gemini"),
        ("vertexai", "gcp.vertex_ai"),
        ("openai", "openai"),
        ("anthropic", "anthropic"),
        ("deepseek", "deepseek"),
        ("xai", "x_ai"),
        ("mistral", "mistral_ai"),
        ("awsBedrock", "aws.bedrock"),
        ("azureOpenAI", "azure.ai.openai"),
        ("Ollama", "ollama"),
        ("local", "local"),
    ] {
        assert_eq!(provider_name(prefix), name);
    }
}

#[test]
fn error_type_from_the_exception_event() {
    let failed = |t: Option<&'static str>, st: Option<&'static str>| SpanInput {
        status: Status::Error,
        exception_type: t,
        exception_stacktrace: st,
        ..SpanInput::default()
    };
    assert_eq!(
        error_type(&failed(
            Some("403"),
            Some("GenkitError: PERMISSION_DENIED: no\n    at x")
        )),
        Some("GenkitError")
    );
    assert_eq!(
        error_type(&failed(Some("Error"), Some("Error: boom"))),
        Some("Error")
    );
    assert_eq!(
        error_type(&failed(Some("TypeError"), None)),
        Some("TypeError")
    );
    assert_eq!(
        error_type(&failed(None, Some("not an identifier here: x"))),
        Some("_OTHER")
    );
    assert_eq!(error_type(&SpanInput::default()), None);
    // A failed tool span: execute_tool with error.type and no result.
    let span = SpanInput {
        subtype: Some("tool"),
        name: Some("chargeCard"),
        input: Some(r#"{"amount":5}"#),
        ..failed(Some("403"), Some("GenkitError: PERMISSION_DENIED"))
    };
    let m = mapper(Mode::Complete).map(&span);
    assert_eq!(s(get(&m, "error.type")), "GenkitError");
    assert!(get(&m, "gen_ai.tool.call.result").is_none());
    // Reference mode writes no error.type.
    assert!(get(&mapper(Mode::Reference).map(&span), "error.type").is_none());
}

#[test]
fn tool_v2_result_from_output_and_content() {
    let out = r#"{"output":{"hits":2},"content":[{"text":"Doc 1"},{"media":{"url":"data:image/png;base64,iVBORw0KGgo=","contentType":"image/png"}}]}"#;
    let span = SpanInput {
        subtype: Some("tool.v2"),
        name: Some("fetchDocs"),
        input: Some(r#"{"topic":"t"}"#),
        output: Some(out),
        ..SpanInput::default()
    };
    let m = mapper(Mode::Complete).map(&span);
    assert_eq!(s(get(&m, "gen_ai.operation.name")), "execute_tool");
    assert_eq!(
        s(get(&m, "gen_ai.tool.call.result")),
        r#"{"output":{"hits":2},"content":[{"type":"text","content":"Doc 1"},{"type":"blob","modality":"image","mime_type":"image/png","size":8}]}"#
    );
    let only_output = SpanInput {
        output: Some(r#"{"output":"plain"}"#),
        ..span.clone()
    };
    assert_eq!(
        s(get(
            &mapper(Mode::Complete).map(&only_output),
            "gen_ai.tool.call.result"
        )),
        "plain"
    );
    // Reference mode: tool.v2 is not a tool call (seed 000).
    assert!(mapper(Mode::Reference).map(&span).attributes.is_empty());
}

#[test]
fn a_tool_input_that_is_not_a_string_number_and_boolean_as_they_are_other_types_left_out() {
    let problem = genkit_for_maple_core::problem::ATTRIBUTE_TYPE;
    for subtype in ["tool", "tool.v2"] {
        for (mode, modes) in [(Mode::Complete, "complete"), (Mode::Reference, "reference")] {
            if subtype == "tool.v2" && mode == Mode::Reference {
                continue; // not a tool call in reference mode (seed 000)
            }
            let span = |other| SpanInput {
                subtype: Some(subtype),
                name: Some("lookup"),
                other_input: other,
                output: Some(r#"{"r":2}"#),
                ..SpanInput::default()
            };
            fn args<'a>(m: &genkit_for_maple_core::span::Mapped<'a>) -> Option<Value<'a>> {
                m.attributes
                    .iter()
                    .find(|(k, _)| *k == "gen_ai.tool.call.arguments")
                    .map(|(_, v)| v.clone())
            }
            let what = format!("{subtype} {modes}");
            for (other, want) in [
                (OtherInput::Number(5.0), Value::Double(5.0)),
                (OtherInput::Number(-1.5), Value::Double(-1.5)),
                (OtherInput::Bool(false), Value::Bool(false)),
            ] {
                let m = mapper(mode).map(&span(Some(other)));
                assert_eq!(args(&m), Some(want), "{what}");
                assert_eq!(m.problems & problem, 0, "{what}");
                assert_eq!(
                    s(get(&m, "gen_ai.tool.call.result")),
                    r#"{"r":2}"#,
                    "{what}"
                );
            }
            // Nothing there: "{}" (seed 000); a string wins over `other_input`.
            let m = mapper(mode).map(&span(None));
            assert_eq!(s(get(&m, "gen_ai.tool.call.arguments")), "{}", "{what}");
            let text = SpanInput {
                input: Some(r#"{"q":1}"#),
                ..span(Some(OtherInput::Other))
            };
            let m = mapper(mode).map(&text);
            assert_eq!(
                s(get(&m, "gen_ai.tool.call.arguments")),
                r#"{"q":1}"#,
                "{what}"
            );
            // Another type: complete mode leaves the arguments out and says so; reference mode
            // hands the span to JavaScript, which copies the value as it is.
            let m = mapper(mode).map(&span(Some(OtherInput::Other)));
            if mode == Mode::Complete {
                assert_eq!(args(&m), None, "{what}");
                assert_ne!(m.problems & problem, 0, "{what}");
                assert_eq!(
                    s(get(&m, "gen_ai.tool.call.result")),
                    r#"{"r":2}"#,
                    "{what}"
                );
                assert_eq!(s(get(&m, "gen_ai.operation.name")), "execute_tool");
            } else {
                assert_ne!(
                    m.problems & genkit_for_maple_core::problem::NEEDS_JS,
                    0,
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn reference_mode_is_seed_000() {
    let span = SpanInput {
        subtype: Some("model"),
        name: Some("googleai/gemini-2.5-flash"),
        output: Some(GEMINI_OUT),
        ..SpanInput::default()
    };
    let m = mapper(Mode::Reference).map(&span);
    assert_eq!(s(get(&m, "gen_ai.provider.name")), "googleai");
    assert_eq!(int(get(&m, "gen_ai.usage.output_tokens")), 21);
    assert!(get(&m, "gen_ai.usage.reasoning.output_tokens").is_none());
    let flow = SpanInput {
        subtype: Some("flow"),
        conversation_id: Some(Value::Int(42)),
        ..SpanInput::default()
    };
    let m = mapper(Mode::Reference).map(&flow);
    assert_eq!(s(get(&m, "gen_ai.agent.name")), "undefined");
    assert_eq!(get(&m, "gen_ai.conversation.id"), Some(&Value::Int(42)));
}
