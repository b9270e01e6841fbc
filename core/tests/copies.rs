//! Recorded copies (`Out::recording`, issue 9): on every model span of the real Genkit corpora,
//! as written and with multi-byte text added to every string value, in reference mode
//! (`map_model_recorded`) and complete mode (`SpanInput::record_copies`), with and without the
//! secret scrubber: recording changes no attribute, and every recorded piece is what it claims
//! (its bytes in the output equal the bytes at its address in `genkit:input` or `genkit:output`).
//! The pieces cover most of the multi-byte text, which is what makes them worth recording.

use genkit_for_maple_core::out::{Copied, Recording};
use genkit_for_maple_core::scrub::Scrubber;
use genkit_for_maple_core::span::{Mapper, Mode, Options, SpanInput, Value};
use genkit_for_maple_core::{map_model_recorded, ModelAttributes};
use std::path::Path;

fn model_rows() -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for file in [
        "genkit-1.42-spans.jsonl",
        "genkit-1.42-plugin-spans.jsonl",
        "genkit-1.42-scenario-spans.jsonl",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../__test__/fixtures")
            .join(file);
        let text = std::fs::read_to_string(&path).expect("fixture readable");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: serde_json::Value = serde_json::from_str(line).expect("a JSON row");
            let attrs = &row["attributes"];
            if attrs["genkit:metadata:subtype"] != "model" {
                continue;
            }
            let get = |k: &str| attrs[k].as_str().map(str::to_string);
            out.push((
                get("genkit:name").unwrap_or_default(),
                get("genkit:input"),
                get("genkit:output"),
            ));
        }
    }
    out
}

/// `text` (JSON) with multi-byte text appended to every string value (keys unchanged).
fn multi_byte(text: &str) -> String {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => s.push_str(" 東京の天気 😀 crème brûlée, 서울"),
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            serde_json::Value::Object(o) => o.values_mut().for_each(walk),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut v) => {
            walk(&mut v);
            serde_json::to_string(&v).expect("serialisable")
        }
        Err(_) => text.to_string(),
    }
}

/// Checks every piece of `copies` against `text` and the sources; returns the bytes they cover.
fn check(text: &str, copies: &[Copied], sources: &[&str]) -> usize {
    let mut covered = 0;
    let mut last_end = 0;
    for c in copies {
        assert!(c.at >= last_end, "pieces in output order, not overlapping");
        last_end = c.at + c.len;
        let piece = &text.as_bytes()[c.at..c.at + c.len];
        let source = sources
            .iter()
            .find(|s| {
                let start = s.as_ptr() as usize;
                c.src >= start && c.src + c.len <= start + s.len()
            })
            .expect("a piece lies in its source"); // ok: a test; a failure is the test failing
        let from = c.src - source.as_ptr() as usize;
        assert_eq!(piece, &source.as_bytes()[from..from + c.len]);
        covered += c.len;
    }
    covered
}

fn non_ascii(s: &str) -> usize {
    s.bytes().filter(|b| *b >= 0x80).count()
}

fn same_attributes(a: &ModelAttributes<'_>, b: &ModelAttributes<'_>) {
    assert_eq!(a.input_messages, b.input_messages);
    assert_eq!(a.system_instructions, b.system_instructions);
    assert_eq!(a.output_messages, b.output_messages);
    assert_eq!(
        format!("{:?}", a.finish_reasons),
        format!("{:?}", b.finish_reasons)
    );
    assert_eq!(a.problems, b.problems);
}

#[test]
fn reference_mode_records_true_pieces_and_changes_nothing() {
    let rows = model_rows();
    assert!(rows.len() > 40, "{}", rows.len());
    let scrubber = Scrubber::with_defaults();
    let (mut covered, mut wide) = (0, 0);
    for (_, input, output) in &rows {
        for variant in [false, true] {
            let input = input.as_deref().map(|t| {
                if variant {
                    multi_byte(t)
                } else {
                    t.to_string()
                }
            });
            let output = output.as_deref().map(|t| {
                if variant {
                    multi_byte(t)
                } else {
                    t.to_string()
                }
            });
            let (i, o) = (input.as_deref(), output.as_deref());
            for scrub in [None, Some(&scrubber)] {
                let plain = map_model_recorded(i, o, scrub, None);
                let recorded = map_model_recorded(i, o, scrub, Some(Recording::Long(1)));
                same_attributes(&plain, &recorded);
                assert!(plain.copies.iter().all(Vec::is_empty));
                let sources: Vec<&str> = [i, o].into_iter().flatten().collect();
                for (text, copies) in [
                    (&recorded.input_messages, &recorded.copies[0]),
                    (&recorded.system_instructions, &recorded.copies[1]),
                    (&recorded.output_messages, &recorded.copies[2]),
                ] {
                    let Some(text) = text else {
                        assert!(copies.is_empty());
                        continue;
                    };
                    let c = check(text, copies, &sources);
                    if variant {
                        covered += c;
                        wide += text.len().min(non_ascii(text) * 4);
                    }
                }
            }
        }
    }
    // Most of the multi-byte output text is in pieces (the writers' own structure is not).
    assert!(covered * 2 > wide, "covered {covered} of about {wide}");
}

#[test]
fn complete_mode_records_true_pieces_and_changes_nothing() {
    let rows = model_rows();
    let options = Options {
        mode: Mode::Complete,
        cost: true,
        ..Options::default()
    };
    let mut with_copies = 0;
    for (name, input, output) in &rows {
        for variant in [false, true] {
            let input = input.as_deref().map(|t| {
                if variant {
                    multi_byte(t)
                } else {
                    t.to_string()
                }
            });
            let output = output.as_deref().map(|t| {
                if variant {
                    multi_byte(t)
                } else {
                    t.to_string()
                }
            });
            let span = SpanInput {
                subtype: Some("model"),
                name: Some(name),
                input: input.as_deref(),
                output: output.as_deref(),
                ..SpanInput::default()
            };
            let plain = Mapper::new(options.clone()).map(&span);
            let mut recorded = Mapper::new(options.clone()).map(&SpanInput {
                record_copies: true,
                ..span.clone()
            });
            assert_eq!(
                format!("{:?}", plain.attributes),
                format!("{:?}", recorded.attributes)
            );
            assert!(plain.copies.is_empty());
            let sources: Vec<&str> = [span.input, span.output].into_iter().flatten().collect();
            for key in [
                "gen_ai.input.messages",
                "gen_ai.system_instructions",
                "gen_ai.output.messages",
            ] {
                let copies = recorded.take_copies(key);
                let Some(Value::Str(text)) = recorded.get(key) else {
                    assert!(copies.is_empty(), "{key}");
                    continue;
                };
                check(text, &copies, &sources);
                with_copies += usize::from(!copies.is_empty());
            }
        }
    }
    assert!(with_copies > 40, "{with_copies}");
}

#[test]
fn a_capped_attribute_has_no_pieces() {
    let long = "é".repeat(4000);
    let input = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"text":"{long}"}}]}},{{"role":"user","content":[{{"text":"{long}"}}]}}]}}"#
    );
    let options = Options {
        mode: Mode::Complete,
        max_content_bytes: Some(9000),
        ..Options::default()
    };
    let span = SpanInput {
        subtype: Some("model"),
        name: Some("googleai/gemini-2.5-flash"),
        input: Some(&input),
        record_copies: true,
        ..SpanInput::default()
    };
    let mut mapped = Mapper::new(options).map(&span);
    assert!(matches!(
        mapped.get("gen_ai.input.messages"),
        Some(Value::Str(s)) if s.len() < 9000
    ));
    assert!(mapped.take_copies("gen_ai.input.messages").is_empty());
}
