//! Complete mode over narrowed texts (`Mapper::map_narrowed`, issue 9): the napi binding hands
//! the core `genkit:input` / `genkit:output` with one byte per UTF-16 code unit, every unit above
//! 0x7F as a placeholder byte. Where the answer is exact the attributes are those of the original
//! texts with each placeholder run put back from the recorded copies; where it is not, the mapping
//! declines before rule 5's tool call state changes.

use genkit_for_maple_core::out::Copied;
use genkit_for_maple_core::span::{Mapped, Mapper, Mode, Options, SpanInput, TraceIds, Value};

const PLACEHOLDER: u8 = 0x7F;

/// The narrowed form of `text` (one byte a UTF-16 unit) and its UTF-16 units.
fn narrow(text: &str) -> (String, Vec<u16>) {
    let units: Vec<u16> = text.encode_utf16().collect();
    let bytes: Vec<u8> = units.iter().map(|&u| u.min(0x7F) as u8).collect();
    (String::from_utf8(bytes).expect("ASCII"), units)
}

/// `text` of a narrowed message attribute with every copied piece put back from the units of the
/// source it was copied from (`sources`: narrowed text and units).
fn rebuild(text: &str, key: &str, mapped: &Mapped<'_>, sources: &[(&str, &[u16])]) -> String {
    let copies = mapped
        .copies
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, c)| c.clone())
        .unwrap_or_default();
    let mut units: Vec<u16> = Vec::new();
    let mut done = 0;
    for c in copies {
        units.extend(text.as_bytes()[done..c.at].iter().map(|&b| u16::from(b)));
        let (narrowed, source_units) = sources
            .iter()
            .find(|(s, _)| {
                let start = s.as_ptr() as usize;
                c.src >= start && c.src + c.len <= start + s.len()
            })
            .expect("a copy lies in a source");
        let from = c.src - narrowed.as_ptr() as usize;
        if source_units.is_empty() {
            // A transcoded source: its bytes are its UTF-8.
            units.extend(narrowed[from..from + c.len].encode_utf16());
        } else {
            units.extend_from_slice(&source_units[from..from + c.len]);
        }
        done = c.at + c.len;
    }
    units.extend(text.as_bytes()[done..].iter().map(|&b| u16::from(b)));
    String::from_utf16(&units).expect("well-formed")
}

/// The source of a recorded copy: its narrowed text and units, and where the copy starts there.
fn source_of<'s>(c: &Copied, sources: &[(&'s str, &'s [u16])]) -> Option<(&'s [u16], usize)> {
    sources.iter().find_map(|(s, units)| {
        let start = s.as_ptr() as usize;
        (c.src >= start && c.src + c.len <= start + s.len()).then(|| (*units, c.src - start))
    })
}

/// `Mapper::map_narrowed`'s `utf8_extra` for copies from `sources`: the UTF-8 length of the
/// characters the copied units stand for, less one byte a unit.
fn utf8_extra<'s>(sources: &'s [(&'s str, &'s [u16])]) -> impl Fn(&Copied) -> Option<usize> + 's {
    move |c| {
        let (units, from) = source_of(c, sources)?;
        if units.is_empty() {
            return Some(0); // a transcoded source: its bytes are its UTF-8
        }
        let text = String::from_utf16(&units[from..from + c.len]).ok()?;
        Some(text.len() - c.len)
    }
}

/// The test spans' ids, given by `ids` only (`map_narrowed` reads no id of its span).
const IDS: TraceIds = TraceIds {
    trace_id: Some([7; 16]),
    span_id: Some([1; 8]),
    parent_span_id: Some([2; 8]),
};

fn span<'a>(input: &'a str, output: &'a str, narrowed: bool) -> SpanInput<'a> {
    SpanInput {
        subtype: Some("model"),
        name: Some("googleai/gemini-2.5-flash"),
        input: Some(input),
        output: Some(output),
        narrowed: narrowed.then_some(PLACEHOLDER),
        ..SpanInput::default()
    }
}

fn texts(tool_name: &str) -> (String, String) {
    let input = serde_json::json!({"messages": [
        {"role": "system", "content": [{"text": "あなたは助手です"}]},
        {"role": "user", "content": [{"text": "東京の天気は？ 😀 \"quoted\"\n"}]},
    ]})
    .to_string();
    let output = serde_json::json!({
        "message": {"role": "model", "content": [{"text": "調べます"}, {"toolRequest": {"name": tool_name, "ref": "r1", "input": {"city": "Tokyo"}}}]},
        "finishReason": "stop",
        "usage": {"inputTokens": 10, "outputTokens": 5}
    })
    .to_string();
    (input, output)
}

#[test]
fn a_clean_span_maps_as_its_original_texts() {
    let (input, output) = texts("getWeather");
    let mut usual = Mapper::new(Options::default());
    let expected = usual.map_with_ids(&span(&input, &output, false), || IDS);
    let (narrow_in, units_in) = narrow(&input);
    let (narrow_out, units_out) = narrow(&output);
    let mut mapper = Mapper::new(Options::default());
    let narrowed_span = span(&narrow_in, &narrow_out, true);
    let sources = [
        (narrow_in.as_str(), &units_in[..]),
        (narrow_out.as_str(), &units_out[..]),
    ];
    let (mapped, ()) = mapper
        .map_narrowed(&narrowed_span, || IDS, utf8_extra(&sources), |_| Some(()))
        .expect("a clean span is mapped narrowed");
    assert!(
        mapper.holds_tool_calls(),
        "the answer's tool request is kept (rule 5)"
    );
    assert_same(&mapped, &expected, &sources, "narrowed");
}

/// A tool request holding the placeholder declines the narrowed mapping only where rule 5 keeps
/// it: not for a span without a parent (a root model span), which is mapped narrowed, as its
/// original texts, and leaves no state.
#[test]
fn a_root_span_is_mapped_narrowed_with_any_tool_request() {
    let (input, output) = texts("天気");
    let root = || TraceIds {
        parent_span_id: None,
        ..IDS
    };
    let expected =
        Mapper::new(Options::default()).map_with_ids(&span(&input, &output, false), root);
    let (narrow_in, units_in) = narrow(&input);
    let (narrow_out, units_out) = narrow(&output);
    let sources = [
        (narrow_in.as_str(), &units_in[..]),
        (narrow_out.as_str(), &units_out[..]),
    ];
    let mut mapper = Mapper::new(Options::default());
    let (mapped, ()) = mapper
        .map_narrowed(
            &span(&narrow_in, &narrow_out, true),
            root,
            utf8_extra(&sources),
            |_| Some(()),
        )
        .expect("a root span is mapped narrowed");
    assert!(!mapper.holds_tool_calls(), "nothing kept without a parent");
    assert_same(&mapped, &expected, &sources, "narrowed");
}

#[test]
fn a_declined_span_leaves_the_tool_call_state_as_it_was() {
    // The tool request's name holds a placeholder: rule 5 would keep a wrong name.
    let (input, output) = texts("天気");
    let (narrow_in, _) = narrow(&input);
    let (narrow_out, _) = narrow(&output);
    let mut mapper = Mapper::new(Options::default());
    assert!(mapper
        .map_narrowed(
            &span(&narrow_in, &narrow_out, true),
            || IDS,
            |_| None,
            |_| Some(())
        )
        .is_none());
    assert!(!mapper.holds_tool_calls());
    // A build that cannot be made declines too, before the state changes.
    let (input, output) = texts("getWeather");
    let (narrow_in, _) = narrow(&input);
    let (narrow_out, _) = narrow(&output);
    assert!(mapper
        .map_narrowed(
            &span(&narrow_in, &narrow_out, true),
            || IDS,
            |_| None,
            |_| None::<()>
        )
        .is_none());
    assert!(!mapper.holds_tool_calls());
    // Reference mode, and a span not marked narrowed, are never mapped this way.
    let mut reference = Mapper::new(Options {
        mode: Mode::Reference,
        ..Options::default()
    });
    assert!(reference
        .map_narrowed(
            &span(&narrow_in, &narrow_out, true),
            || IDS,
            |_| None,
            |_| Some(())
        )
        .is_none());
    assert!(mapper
        .map_narrowed(
            &span(&narrow_in, &narrow_out, false),
            || IDS,
            |_| None,
            |_| Some(())
        )
        .is_none());
    // The same span is then mapped the usual way, once.
    let mapped = mapper.map_with_ids(&span(&input, &output, false), || IDS);
    assert_eq!(mapped.problems, 0);
    assert!(mapper.holds_tool_calls());
}

/// Every attribute of `narrowed` (message attributes rebuilt from their copies) equal to `usual`'s.
fn assert_same(narrowed: &Mapped<'_>, usual: &Mapped<'_>, sources: &[(&str, &[u16])], label: &str) {
    let keys = |m: &Mapped<'_>| m.attributes.iter().map(|(k, _)| *k).collect::<Vec<_>>();
    assert_eq!(keys(narrowed), keys(usual), "{label}: keys");
    for ((key, got), (_, want)) in narrowed.attributes.iter().zip(&usual.attributes) {
        match (got, want) {
            (Value::Str(g), Value::Str(w)) if g.as_bytes().contains(&PLACEHOLDER) => {
                assert_eq!(&rebuild(g, key, narrowed, sources), w, "{label}: {key}")
            }
            _ => assert_eq!(got, want, "{label}: {key}"),
        }
    }
}

/// A history of `n` user/model turns in several scripts (1-, 2-, 3- and 4-byte UTF-8), then a
/// question, and a short answer.
fn history(n: usize, turn_units: usize) -> (String, String) {
    let words = [
        "Ça va très bien ",
        "Привет мир ",
        "東京の天気は晴れ ",
        "😀 emoji 🎉 ",
        "plain ascii ",
    ];
    let text = |i: usize| words[i % words.len()].repeat(turn_units / 12 + 1);
    let mut messages =
        vec![serde_json::json!({"role": "system", "content": [{"text": "あなたは助手です"}]})];
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "model" };
        messages.push(serde_json::json!({"role": role, "content": [{"text": text(i)}]}));
    }
    messages.push(serde_json::json!({"role": "user", "content": [{"text": "最後の質問 😀"}]}));
    let input = serde_json::json!({ "messages": messages }).to_string();
    let output = serde_json::json!({
        "message": {"role": "model", "content": [{"text": "答え 😀"}]},
        "finishReason": "stop",
        "usage": {"inputTokens": 10, "outputTokens": 5}
    })
    .to_string();
    (input, output)
}

#[test]
fn messages_over_the_cap_are_dropped_as_on_the_original_texts() {
    // Caps from well under to well over the history's UTF-8 size, its narrowed size between:
    // the narrowed mapping drops the messages the usual path drops (by UTF-8 size), or declines
    // where the usual path would shorten strings; never anything else.
    let (input, output) = history(40, 300);
    let (narrow_in, units_in) = narrow(&input);
    let (narrow_out, units_out) = narrow(&output);
    let sources = [
        (narrow_in.as_str(), &units_in[..]),
        (narrow_out.as_str(), &units_out[..]),
    ];
    let (mut narrowed_count, mut dropped_seen) = (0, 0);
    for max in (200..input.len() + 2000).step_by(997) {
        let options = || Options {
            max_content_bytes: Some(max),
            ..Options::default()
        };
        let usual = Mapper::new(options()).map(&span(&input, &output, false));
        let mut mapper = Mapper::new(options());
        let got = mapper.map_narrowed(
            &span(&narrow_in, &narrow_out, true),
            || IDS,
            utf8_extra(&sources),
            |_| Some(()),
        );
        let has = |key: &str| usual.attributes.iter().any(|(k, _)| *k == key);
        let shortened = has("genkit_for_maple.content.capped")
            && usual.attributes.iter().any(|(k, v)| {
                *k == "gen_ai.input.messages"
                    && matches!(v, Value::Str(s) if s.contains("...[truncated]"))
            });
        match got {
            Some((mapped, ())) => {
                narrowed_count += 1;
                assert!(
                    !shortened,
                    "cap {max}: narrowed where the usual path shortens"
                );
                if has("genkit_for_maple.content.dropped_messages") {
                    dropped_seen += 1;
                }
                assert_same(&mapped, &usual, &sources, &format!("cap {max}"));
            }
            None => assert!(
                shortened || usual.problems != 0,
                "cap {max}: declined where the usual path only drops messages"
            ),
        }
    }
    assert!(
        narrowed_count > 5 && dropped_seen > 3,
        "{narrowed_count} narrowed, {dropped_seen} with messages dropped"
    );
}

#[test]
fn a_transcoded_answer_over_the_cap_gets_the_usual_cap_beside_a_narrowed_input() {
    // The binding transcodes an answer over the cap in UTF-8 instead of narrowing it (src/seam.rs):
    // its output message holds no placeholder, and the narrowed mapping caps it as the usual path
    // does (the text shortened), while the history beside it is narrowed, its oldest messages
    // dropped by their UTF-8 sizes. Answers in 1- to 4-byte scripts, caps from under the
    // answer alone to over everything: the narrowed mapping never declines where only the answer
    // is shortened, and writes what the usual path writes.
    let (input, _) = history(12, 200);
    let (narrow_in, units_in) = narrow(&input);
    let mut shortened_answers = 0;
    for (a, word) in ["plain ascii ", "Ça va très ", "東京の天気 ", "😀 🎉 ok "]
        .iter()
        .enumerate()
    {
        for repeat in [40usize, 300, 2_000] {
            let output = serde_json::json!({
                "message": {"role": "model", "content": [
                    {"reasoning": "考え中 ".repeat(repeat / 4 + 1)},
                    {"text": word.repeat(repeat)},
                ]},
                "finishReason": "stop",
                "usage": {"inputTokens": 10, "outputTokens": 5}
            })
            .to_string();
            // The answer as the binding hands it over, transcoded: no units kept for it here.
            let sources = [
                (narrow_in.as_str(), &units_in[..]),
                (output.as_str(), &[][..]),
            ];
            for max in (300..input.len() + output.len() + 3000).step_by(1499) {
                let options = || Options {
                    max_content_bytes: Some(max),
                    ..Options::default()
                };
                let usual = Mapper::new(options()).map(&span(&input, &output, false));
                let got = Mapper::new(options()).map_narrowed(
                    &span(&narrow_in, &output, true),
                    || IDS,
                    utf8_extra(&sources),
                    |_| Some(()),
                );
                let shortened = |key: &str| {
                    usual.attributes.iter().any(|(k, v)| {
                        *k == key && matches!(v, Value::Str(s) if s.contains("...[truncated]"))
                    })
                };
                let label = format!("answer {a} x{repeat}, cap {max}");
                match got {
                    Some((mapped, ())) => {
                        assert!(!shortened("gen_ai.input.messages"), "{label}: narrowed");
                        if shortened("gen_ai.output.messages") {
                            shortened_answers += 1;
                        }
                        assert_same(&mapped, &usual, &sources, &label);
                    }
                    None => assert!(
                        shortened("gen_ai.input.messages")
                            || shortened("gen_ai.system_instructions")
                            || usual.problems != 0,
                        "{label}: declined where only the answer is shortened"
                    ),
                }
            }
        }
    }
    assert!(
        shortened_answers > 20,
        "{shortened_answers} answers shortened narrowed"
    );
}
