//! Build step: the tools' argument schemas (`src/dispatch/input_schemas.json`,
//! pretty-printed so that its diffs can be reviewed) are embedded twice:
//! minified, every byte of whitespace outside strings dropped and nothing
//! else changed (key order included), for OpenAPI; and in the form agents
//! are shown (`src/dispatch/listing_schema.rs`), for `tools/list`.

use std::path::PathBuf;

#[path = "src/dispatch/listing_schema.rs"]
#[allow(dead_code)]
mod listing_schema;

fn main() {
    let source = "src/dispatch/input_schemas.json";
    println!("cargo::rerun-if-changed={source}");
    let text = std::fs::read_to_string(source).expect("src/dispatch/input_schemas.json is readable");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("input_schemas.min.json");
    std::fs::write(&out, minified(&text)).expect("OUT_DIR is writable");
    let full: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).expect("input_schemas.json is a JSON object");
    let listed: serde_json::Map<String, serde_json::Value> = full.into_iter().map(|(tool, schema)| (tool, listing_schema::for_listing(schema))).collect();
    let listed = serde_json::to_string(&listed).expect("schemas serialize");
    std::fs::write(out.with_file_name("listing_schemas.min.json"), listed).expect("OUT_DIR is writable");
}

/// `json` without the whitespace between its tokens.
fn minified(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            (in_string, escaped) = match (escaped, c) {
                (true, _) => (true, false),
                (false, '\\') => (true, true),
                (false, '"') => (false, false),
                _ => (true, false),
            };
        } else if !c.is_ascii_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}
