//! A source scrubber limited to a region (`SourceScrubber::of_region`: the extent of the pieces
//! the message writers copy, `genkit::Extent`) must answer every value exactly as the scrubber
//! does on the value alone (`Scrubber::json`, `json_inner`, `text`), wherever the region lies:
//! values inside it, outside it, straddling its ends, needles that start in the bytes before it
//! and end inside, and a region that is no range of the source. Only the speed may depend on it.

use genkit_for_maple_core::genkit::{Extent, GenerateRequest, Shape};
use genkit_for_maple_core::scrub::{Scrubber, SourceScrubber};
use proptest::prelude::*;
use std::borrow::Cow;

/// Bits of text a source is made of: prose, secrets, look-alikes, needles cut in two, escapes.
const BITS: &[&str] = &[
    "plain words ",
    "東京 😀 café ",
    "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x",
    "AKIAIOSFODNN7EXAMPLE",
    "Bearer abcDEF123456ghiJKL789",
    "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB",
    "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----",
    "xox",
    "sk-",
    "bea",
    "rer token",
    "task-force",
    "\\\"quoted\\\"",
    "\\u0073k-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4",
    "\\n",
];

const KEYS: &[&str] = &["note", "api_key", "Authorization", "q", "client_secret"];

/// A JSON object text of `"key":"value"` members built from `choices`, and the byte ranges of
/// every string literal in it (with quotes) and of every literal's inside.
/// Byte ranges (start, end) of a text.
type Ranges = Vec<(usize, usize)>;

fn source(choices: &[(usize, Vec<usize>)]) -> (String, Ranges, Ranges) {
    let mut s = String::from("{");
    let mut literals = Vec::new();
    let mut insides = Vec::new();
    for (i, (key, bits)) in choices.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        s.push_str(KEYS[key % KEYS.len()]);
        s.push_str("\":");
        let start = s.len();
        s.push('"');
        for &b in bits {
            s.push_str(BITS[b % BITS.len()]);
        }
        s.push('"');
        literals.push((start, s.len()));
        insides.push((start + 1, s.len() - 1));
    }
    s.push('}');
    (s, literals, insides)
}

/// The value `Scrubber::json` gives the literal alone, as an owned string.
fn alone(scrubber: &Scrubber, literal: &str) -> String {
    scrubber.json(literal).unwrap().into_owned()
}

fn check(
    scrubber: &Scrubber,
    text: &str,
    literals: &[(usize, usize)],
    insides: &[(usize, usize)],
    region: Option<std::ops::Range<usize>>,
) {
    let src = SourceScrubber::of_region(Some(scrubber), text, region.clone())
        .expect("a scrubber is given");
    for &(a, b) in literals {
        let literal = &text[a..b];
        assert_eq!(
            src.json(literal).unwrap(),
            alone(scrubber, literal),
            "json of {literal:?}, region {region:?}"
        );
    }
    for &(a, b) in insides {
        let inside = &text[a..b];
        assert_eq!(
            src.json_inner(inside).unwrap(),
            scrubber.json_inner(inside).unwrap(),
            "json_inner of {inside:?}, region {region:?}"
        );
        // Texts decoded from a literal without escapes are slices of it.
        if !inside.contains('\\') {
            assert_eq!(
                src.text(inside).unwrap(),
                scrubber.text(inside).unwrap(),
                "text of {inside:?}, region {region:?}"
            );
        }
    }
    // The whole object, a slice too (inside the region only when the region is all of it).
    assert_eq!(src.json(text).unwrap(), alone(scrubber, text));
}

fn members() -> impl Strategy<Value = Vec<(usize, Vec<usize>)>> {
    prop::collection::vec(
        (0..KEYS.len(), prop::collection::vec(0..BITS.len(), 0..5)),
        1..7,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Any region whose ends fall on the edges of members, of literals, or anywhere at all.
    #[test]
    fn a_region_changes_no_answer(choices in members(), a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let scrubber = Scrubber::with_defaults();
        let (text, literals, insides) = source(&choices);
        // Ends at char boundaries (a range of the text), anywhere in it.
        let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        let (x, y) = (*a.get(&bounds), *b.get(&bounds));
        check(&scrubber, &text, &literals, &insides, Some(x.min(y)..x.max(y)));
        // The extent of some literals, as the writers' regions are.
        let (i, j) = (a.index(literals.len()), b.index(literals.len()));
        check(&scrubber, &text, &literals, &insides, Some(literals[i.min(j)].0..literals[i.max(j)].1));
        // No region, and a range that is not one of the text.
        check(&scrubber, &text, &literals, &insides, None);
        check(&scrubber, &text, &literals, &insides, Some(0..text.len() + 1));
    }
}

#[test]
fn only_the_region_and_the_bytes_before_it_are_scanned() {
    let scrubber = Scrubber::with_defaults();
    const KEY: &str = "sk-4f9aQ2bX7cD1eF3gH5iJ6kL8mN0pQ2rS4tU6vW8x";
    // A tool definition with a needle outside the messages, a clean message inside.
    let text = format!(
        r#"{{"tools":[{{"description":"takes a {KEY}"}}],"messages":[{{"role":"user","content":[{{"text":"hello there"}}]}}],"config":{{"note":"bearer of news"}}}}"#
    );
    let request: Shape<GenerateRequest> = serde_json::from_str(&text).unwrap();
    let Shape::Object(request) = request else {
        panic!("an object")
    };
    let Some(genkit_for_maple_core::genkit::ArrayShape::Array(messages)) = &request.messages else {
        panic!("messages")
    };
    let region = Extent::of_messages(messages.iter().filter_map(Shape::object))
        .in_source(&text)
        .unwrap();
    // From the role's literal to the text's.
    assert_eq!(
        &text[region.clone()],
        r#""user","content":[{"text":"hello there""#
    );
    let src = SourceScrubber::of_region(Some(&scrubber), &text, Some(region.clone())).unwrap();
    let hello = &text[text.find("\"hello").unwrap()..][..13];
    assert_eq!(hello, "\"hello there\"");
    // Borrowed: the value is inside the scanned region, which has no needle.
    assert!(matches!(src.json(hello).unwrap(), Cow::Borrowed(_)));
    // Outside the region: scanned on its own, the secret replaced.
    let description = &text[text.find("\"takes").unwrap()..][..KEY.len() + 10];
    assert_eq!(src.json(description).unwrap(), "\"takes a [REDACTED]\"");
    assert_eq!(
        src.json(&text[text.find("\"bearer").unwrap()..][..16])
            .unwrap(),
        "\"bearer of news\""
    );

    // A needle that starts before the region and ends inside it (in the bytes scanned before
    // the region): its value is answered as on its own.
    let text = "{\"a\":\"AKIAIOSFODNN7EXAMPLE\"}";
    let at = text.find("AKIA").unwrap();
    let value = &text[at + 2..text.len() - 2];
    let src =
        SourceScrubber::of_region(Some(&scrubber), text, Some(at + 2..text.len() - 2)).unwrap();
    assert_eq!(src.text(value).unwrap(), scrubber.text(value).unwrap());
}

#[test]
fn the_extent_runs_from_the_first_piece_to_the_last() {
    // Messages without pieces at both ends and in the middle; fields in any order.
    let text = r#"{"messages":[{},{"content":[]},{"content":[{"text":"a"}],"role":"user"},{"content":[]},{"role":"model","content":[{"media":{"url":"https://x/y.png"}},{"toolRequest":{"input":{"x":1},"name":"t"}}]},{"content":[{"data":{"k":2}}]},{}],"tools":[{"name":"t"}]}"#;
    let Shape::Object(request) = serde_json::from_str::<Shape<GenerateRequest>>(text).unwrap()
    else {
        panic!("an object")
    };
    let Some(genkit_for_maple_core::genkit::ArrayShape::Array(messages)) = &request.messages else {
        panic!("messages")
    };
    let region = Extent::of_messages(messages.iter().filter_map(Shape::object))
        .in_source(text)
        .unwrap();
    assert_eq!(
        &text[region],
        r#""a"}],"role":"user"},{"content":[]},{"role":"model","content":[{"media":{"url":"https://x/y.png"}},{"toolRequest":{"input":{"x":1},"name":"t""#
    );
    // No piece at all, or pieces of another text: no range.
    let empty: [&genkit_for_maple_core::genkit::Message; 0] = [];
    assert_eq!(Extent::of_messages(empty).in_source(text), None);
    assert_eq!(
        Extent::of_messages(messages.iter().filter_map(Shape::object)).in_source("{}"),
        None
    );
}
