//! The OpenAPI 3.1 document of the REST API, served at `GET /openapi.json`.
//!
//! Contract: the document is generated, never written by hand. Every path and
//! method comes from the route table [`ROUTES`] (plus `/health` and the
//! backup and flush routes, which are not tools); a POST's
//! request body schema is the tool's input schema, the same JSON Schema MCP
//! `tools/list` serves; a GET's query parameters are that schema's
//! properties; the 200 response schema is the tool's reply schema
//! ([`mentisdb_core::dispatch::output_schema`]). Errors are `{"error": "..."}`
//! with the statuses [`crate::http::api_error::status_of`] gives. Schemas that the tool
//! schemas share (`$defs`) move to `components/schemas`, so every `$ref`
//! resolves inside the document. When the daemon requires tokens the document
//! declares bearer authentication on every operation.

use crate::http::routes::{Reply, Route, ROUTES};
use mentisdb_core::dispatch::{output_schema, tool_specs, ToolSpec};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The document, built once per form (open daemon, daemon with tokens).
pub fn document(tokens_required: bool) -> &'static Value {
    static OPEN: OnceLock<Value> = OnceLock::new();
    static TOKENS: OnceLock<Value> = OnceLock::new();
    let cell = if tokens_required { &TOKENS } else { &OPEN };
    cell.get_or_init(|| build(tokens_required))
}

fn build(tokens_required: bool) -> Value {
    // OpenAPI states the full argument schemas (text patterns, integer
    // formats): generated requests must be valid ones.
    let mut full = mentisdb_core::full_input_schemas();
    let specs: BTreeMap<&str, ToolSpec> = tool_specs()
        .into_iter()
        .map(|mut s| {
            s.input_schema = full.remove(s.name).expect("every tool has a full schema");
            (s.name, s)
        })
        .collect();
    let mut components = Components::default();
    let mut paths = Map::new();
    paths.insert("/health".into(), json!({"get": {
        "operationId": "health",
        "summary": "Health: the daemon answers, and whether its storage backend does (a PostgreSQL round trip).",
        "responses": {
            "200": {"description": "The daemon and its storage answer.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["status", "service", "storage"],
                "properties": {"status": {"type": "string"}, "service": {"type": "string"}, "storage": {"type": "object", "required": ["backend", "reachable", "group_writes", "lost_races"], "properties": {"backend": {"type": "string"}, "reachable": {"type": "boolean"}, "group_writes": {"type": "integer", "minimum": 0, "description": "Conditional writes of append groups since the daemon started (retries included)."}, "lost_races": {"type": "integer", "minimum": 0, "description": "Of those, writes refused because another daemon on the shared database appended to the chain first (each re-based and written again)."}}}}
            }}}},
            "503": {"description": "The storage backend does not answer; reads of chains in memory still work.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["status", "service", "storage", "error"],
                "properties": {"status": {"type": "string"}, "service": {"type": "string"}, "error": {"type": "string"}, "storage": {"type": "object"}}
            }}}}
        },
        "security": []
    }}));
    paths.insert(crate::http::routes::BACKUP_PATH.into(), json!({"get": {
        "operationId": "backup",
        "summary": "A consistent backup of the whole store as one .tar.gz (objects/<name> entries, then manifest.json with every object's SHA-256); admin on all chains.",
        "responses": {
            "200": {"description": "The archive, streamed while the daemon keeps serving.", "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}}},
            "401": {"$ref": "#/components/responses/401"},
            "403": {"$ref": "#/components/responses/403"},
        }
    }}));
    paths.insert(crate::http::routes::FLUSH_PATH.into(), json!({"post": {
        "operationId": "flush",
        "summary": "Make every chain object and the skill log durable now (MentisDB 0.10's route; every acknowledged append already is); admin on all chains.",
        "responses": {
            "200": {"description": "Flushed.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["status", "chains"],
                "properties": {"status": {"const": "flushed"}, "chains": {"type": "integer", "minimum": 0}}
            }}}},
            "401": {"$ref": "#/components/responses/401"},
            "403": {"$ref": "#/components/responses/403"},
            "500": {"$ref": "#/components/responses/500"},
        }
    }}));
    for route in ROUTES {
        let spec = specs.get(route.tool).unwrap_or_else(|| panic!("route {} names unknown tool {}", route.path, route.tool));
        let op = operation(route, spec, &mut components);
        let entry = paths.entry(route.path).or_insert_with(|| json!({}));
        entry[route.method.to_ascii_lowercase()] = op;
    }
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "MentisDB REST API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Durable, hash-chained agent memory. Every endpoint calls one MCP tool with the same arguments (operationId names it); errors are {\"error\": message}."
        },
        "paths": paths,
        "components": {"schemas": components.schemas, "responses": error_responses()},
    });
    if tokens_required {
        doc["components"]["securitySchemes"] = json!({"bearer": {"type": "http", "scheme": "bearer", "description": "A token of MENTISDB_TOKENS_FILE or MENTISDB_API_TOKEN."}});
        doc["security"] = json!([{"bearer": []}]);
    }
    doc
}

/// One operation: the tool's arguments in, its reply or an error out.
fn operation(route: &Route, spec: &ToolSpec, components: &mut Components) -> Value {
    let input = components.adopt(spec.input_schema.clone());
    let mut op = json!({
        "operationId": spec.name,
        "summary": first_sentence(spec.description),
        "description": spec.description,
        "responses": responses(route, spec, components),
    });
    let path_key = json!({"name": "chain_key", "in": "path", "required": true, "schema": input["properties"]["chain_key"].clone()});
    if matches!(route.reply, Reply::ChainBytes) {
        op["parameters"] = json!([path_key]);
    } else if matches!(route.reply, Reply::FromChainBytes) {
        op["parameters"] = json!([path_key]);
        op["requestBody"] = json!({"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}});
    } else if route.method == "DELETE" {
        // The path's `{name}` segments are the arguments.
        let names = route.path.split('/').filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'));
        op["parameters"] = names.map(|n| json!({"name": n, "in": "path", "required": true, "schema": input["properties"][n].clone()})).collect();
    } else if route.method == "GET" {
        op["parameters"] = Value::Array(query_parameters(&input));
    } else {
        // An empty body is `{}`: required when `{}` is not valid arguments.
        let required = input.get("required").and_then(Value::as_array).is_some_and(|r| !r.is_empty()) || input.get("oneOf").is_some();
        op["requestBody"] = json!({"required": required, "content": {"application/json": {"schema": input}}});
    }
    op
}

/// A GET takes its arguments as query-string pairs, each one a string.
fn query_parameters(input: &Value) -> Vec<Value> {
    let required: Vec<&str> = input.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(props) = input.get("properties").and_then(Value::as_object) else { return Vec::new() };
    props
        .iter()
        .map(|(name, schema)| {
            let mut p = json!({"name": name, "in": "query", "required": required.contains(&name.as_str()), "schema": {"type": "string"}});
            for keyword in ["pattern", "format"] {
                if let Some(v) = schema.get(keyword) {
                    p["schema"][keyword] = v.clone();
                }
            }
            if let Some(d) = schema.get("description") {
                p["description"] = d.clone();
            }
            p
        })
        .collect()
}

fn responses(route: &Route, spec: &ToolSpec, components: &mut Components) -> Value {
    let ok = match route.reply {
        Reply::Json => {
            let schema = output_schema(spec.name).map(|s| components.adopt(s)).unwrap_or_else(|| json!({"type": "object"}));
            json!({"description": "The tool's result.", "content": {"application/json": {"schema": schema}}})
        }
        Reply::Markdown => json!({"description": "The Markdown document.", "content": {"text/markdown": {"schema": {"type": "string"}}}}),
        Reply::ChainBytes => json!({"description": "The chain object's bytes, as stored.", "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}),
        Reply::FromChainBytes => {
            let schema = output_schema(spec.name).map(|s| components.adopt(s)).unwrap_or_else(|| json!({"type": "object"}));
            json!({"description": "The tool's result.", "content": {"application/json": {"schema": schema}}})
        }
    };
    let mut r = json!({"200": ok});
    let mut codes = vec!["400", "401", "403", "404", "409", "500", "503"];
    if route.method == "POST" {
        codes.extend(["413", "415"]);
    }
    for code in codes {
        r[code] = json!({"$ref": format!("#/components/responses/{code}")});
    }
    r
}

fn error_responses() -> Value {
    let error = json!({"type": "object", "required": ["error"], "properties": {"error": {"type": "string", "description": "What went wrong, for a person to read."}}});
    let why = [
        ("400", "Invalid arguments or a refused append."),
        ("401", "A token is required and none, or an unknown one, was given."),
        ("403", "The token lacks the scope or chain, or a skill change was refused."),
        ("404", "No such chain, thought, agent, key or skill."),
        ("405", "Method not allowed on this path."),
        ("409", "A conflict, e.g. a client-chosen id that already exists."),
        ("413", "The request body is over MENTISDB_MAX_BODY_BYTES."),
        ("415", "The body is not application/json."),
        ("500", "Storage failed or a stored chain was refused."),
        ("503", "A needed service (e.g. the chat model) is unavailable."),
    ];
    let mut out = Map::new();
    for (code, description) in why {
        let mut r = json!({"description": description, "content": {"application/json": {"schema": error.clone()}}});
        if code == "401" {
            r["headers"] = json!({"WWW-Authenticate": {"schema": {"type": "string"}}});
        }
        out.insert(code.into(), r);
    }
    Value::Object(out)
}

fn first_sentence(text: &str) -> String {
    match text.find(". ") {
        Some(i) => text[..=i].to_string(),
        None => text.to_string(),
    }
}

/// Shared schemas, gathered from every tool's `$defs`.
#[derive(Default)]
struct Components {
    schemas: Map<String, Value>,
}

impl Components {
    /// Moves `schema`'s `$defs` into the components (renaming one whose name
    /// is taken by a different schema), drops `$schema`, and points every
    /// `$ref` at the components.
    fn adopt(&mut self, mut schema: Value) -> Value {
        let Some(obj) = schema.as_object_mut() else { return schema };
        obj.remove("$schema");
        obj.remove("title");
        let defs = obj.remove("$defs").and_then(|d| if let Value::Object(m) = d { Some(m) } else { None }).unwrap_or_default();
        let mut renames = BTreeMap::new();
        for (name, def) in &defs {
            let mut chosen = name.clone();
            let mut n = 2;
            while self.schemas.get(&chosen).is_some_and(|existing| !same_after_refs(existing, def, &defs)) {
                chosen = format!("{name}{n}");
                n += 1;
            }
            renames.insert(name.clone(), chosen);
        }
        for (name, mut def) in defs {
            rewrite_refs(&mut def, &renames);
            self.schemas.insert(renames[&name].clone(), def);
        }
        rewrite_refs(&mut schema, &renames);
        schema
    }
}

/// Whether an already adopted schema equals `def` once `def`'s refs point at
/// the components under their own names.
fn same_after_refs(existing: &Value, def: &Value, defs: &Map<String, Value>) -> bool {
    let identity: BTreeMap<String, String> = defs.keys().map(|k| (k.clone(), k.clone())).collect();
    let mut d = def.clone();
    rewrite_refs(&mut d, &identity);
    *existing == d
}

fn rewrite_refs(v: &mut Value, renames: &BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get_mut("$ref") {
                if let Some(name) = r.strip_prefix("#/$defs/") {
                    let target = renames.get(name).cloned().unwrap_or_else(|| name.to_string());
                    *r = format!("#/components/schemas/{target}");
                }
            }
            m.values_mut().for_each(|x| rewrite_refs(x, renames));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rewrite_refs(x, renames)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|x| refs(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_route_is_an_operation_with_its_tool_schema() {
        let doc = build(false);
        assert_eq!(doc["openapi"], "3.1.0");
        for route in ROUTES {
            let op = &doc["paths"][route.path][route.method.to_ascii_lowercase()];
            assert_eq!(op["operationId"], route.tool, "{} {}", route.method, route.path);
            assert!(op["responses"]["200"].is_object());
        }
        let append = &doc["paths"]["/v1/thoughts"]["post"]["requestBody"]["content"]["application/json"]["schema"];
        let spec = tool_specs().into_iter().find(|s| s.name == "mentisdb_append").unwrap();
        assert_eq!(append["properties"].as_object().unwrap().keys().collect::<Vec<_>>(), spec.input_schema["properties"].as_object().unwrap().keys().collect::<Vec<_>>());
        assert!(doc.get("security").is_none(), "an open daemon needs no token");
        assert_eq!(build(true)["security"], json!([{"bearer": []}]));
    }

    #[test]
    fn every_ref_resolves_inside_the_document() {
        let doc = build(true);
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.iter().any(|r| r.starts_with("#/components/schemas/")), "the tool schemas share definitions");
        for r in all {
            let pointer = r.strip_prefix('#').unwrap_or_else(|| panic!("external ref {r}"));
            assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
        }
    }
}
