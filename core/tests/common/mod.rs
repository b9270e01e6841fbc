//! What the integration tests share: the real span corpora of `__test__/fixtures`.

use std::path::Path;

/// The rows of fixture `file` (one JSON object a line: a span with its `attributes`).
pub fn rows(file: &str) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../__test__/fixtures")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}
