//! The CloudLLM tool endpoints of MentisDB 0.10 on the MCP port, for
//! cloudllm's remote `McpClientProtocol` (and every client written against it):
//!
//! - `POST /tools/list` answers `{"tools": [ToolMetadata...]}`: each tool's
//!   `name`, `description`, `parameters` (one `{name, type, description,
//!   required, default, items, properties}` per argument, flattened from
//!   the tool's JSON Schema) and `protocol_metadata` (`read_only`, `access`
//!   and the full `input_schema`).
//! - `POST /tools/execute` takes `{"tool", "parameters"}` (a tool name or its
//!   `thoughtchain_` alias; `parameters` an object or absent) and answers
//!   `{"result": {"success", "output", "error", "metadata"}}`: HTTP 200 with
//!   `success: true` and the tool's JSON result as `output`, or a failure
//!   (`success: false`, `output: null`, `error: "..."`) with HTTP 400 (bad
//!   request body or tool error), 403 (the token may not make the call) or
//!   404 (no such tool), 415 when the body is not sent as `application/json`.
//!
//! Both sit behind the same token middleware as every other route, and a
//! call goes through [`call_as`] like every other call.

use crate::http::auth::{call_as, require_token, AuthState, CallError};
use crate::tokens::Identity;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Extension, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use mentisdb_core::dispatch::{canonical_tool_name, listed_tools};
use mentisdb_core::{MentisDb, ToolError, ToolSpec};
use serde_json::{json, Value};
use std::sync::Arc;

/// The legacy routes, with their own body limit and the token check;
/// `/tools/list` lists the tools of `listed` (or of `?tools=<profile>`).
pub fn router(db: Arc<MentisDb>, auth: AuthState, max_body_bytes: usize, listed: Vec<&'static str>) -> Router {
    let list = move |uri: axum::http::Uri| async move {
        let names = match crate::http::mcp::requested_profile(uri.query()) {
            Some(Ok(names)) => names,
            Some(Err(e)) => return (StatusCode::BAD_REQUEST, Json(json!({ "error": e }))),
            None => listed.clone(),
        };
        let tools: Vec<Value> = listed_tools(&names).iter().map(tool_metadata).collect();
        (StatusCode::OK, Json(json!({ "tools": tools })))
    };
    Router::new()
        .route("/tools/list", post(list))
        .route("/tools/execute", post(execute))
        .layer(axum::middleware::from_fn_with_state(auth, require_token))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(db)
}

/// A failed execution: its status and the `ToolResult` failure body.
fn failure(status: StatusCode, error: impl Into<String>) -> (StatusCode, Json<Value>) {
    (status, Json(json!({ "result": { "success": false, "output": null, "error": error.into(), "metadata": {} } })))
}

async fn execute(State(db): State<Arc<MentisDb>>, Extension(who): Extension<Identity>, headers: HeaderMap, body: Result<Bytes, BytesRejection>) -> (StatusCode, Json<Value>) {
    let body = match body {
        Ok(b) => b,
        Err(r) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => return failure(r.status(), "request body is too large (limit set by MENTISDB_MAX_BODY_BYTES / --max-body-bytes)"),
        Err(r) => return failure(r.status(), format!("cannot read request body: {}", r.body_text())),
    };
    // Only JSON: a web page cannot send it to another origin unasked.
    let mime = crate::http::web_guard::mime_of(&headers);
    if !crate::http::web_guard::is_json(&mime) {
        let shown = if mime.is_empty() { "none" } else { mime.as_str() };
        return failure(StatusCode::UNSUPPORTED_MEDIA_TYPE, format!("expected content-type: application/json, got {shown}; send {{\"tool\": \"<name>\", \"parameters\": {{...}}}} as JSON"));
    }
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return failure(StatusCode::BAD_REQUEST, format!("malformed JSON body: {e}; send {{\"tool\": \"<name>\", \"parameters\": {{...}}}}")),
    };
    let Some(name) = request.get("tool").and_then(Value::as_str) else {
        return failure(StatusCode::BAD_REQUEST, "the body needs `tool` (a tool name, see POST /tools/list) and optionally `parameters` (an object)");
    };
    let parameters = request.get("parameters").cloned().unwrap_or(Value::Null);
    if !(parameters.is_object() || parameters.is_null()) {
        return failure(StatusCode::BAD_REQUEST, "`parameters` must be a JSON object of named arguments");
    }
    let Some(tool) = canonical_tool_name(name) else {
        return failure(StatusCode::NOT_FOUND, ToolError::UnknownTool(name.chars().take(80).collect()).to_string());
    };
    match call_as(db, who, tool, parameters).await {
        Ok(raw) => match serde_json::from_str::<Value>(raw.get()) {
            Ok(output) => (StatusCode::OK, Json(json!({ "result": { "success": true, "output": output, "error": null, "metadata": {} } }))),
            Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, format!("tool result is not JSON: {e}")),
        },
        Err(CallError::Forbidden(f)) => failure(StatusCode::FORBIDDEN, format!("403 forbidden: {f}")),
        Err(CallError::Tool(e @ ToolError::UnknownTool(_))) => failure(StatusCode::NOT_FOUND, e.to_string()),
        Err(CallError::Tool(e)) => failure(StatusCode::BAD_REQUEST, e.to_string()),
    }
}

/// One tool as cloudllm's `ToolMetadata`.
fn tool_metadata(spec: &ToolSpec) -> Value {
    let schema = &spec.input_schema;
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let parameters: Vec<Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| props.iter().map(|(name, p)| parameter(name, p, required.contains(&name.as_str()))).collect())
        .unwrap_or_default();
    json!({
        "name": spec.name,
        "description": spec.description,
        "parameters": parameters,
        "protocol_metadata": { "read_only": spec.read_only, "access": spec.access.to_string(), "input_schema": schema },
    })
}

/// One argument as cloudllm's `ToolParameter`.
fn parameter(name: &str, schema: &Value, required: bool) -> Value {
    let items = (param_type(schema) == "array").then(|| schema.get("items").map(param_type)).flatten();
    json!({
        "name": name,
        "type": param_type(schema),
        "description": schema.get("description").and_then(Value::as_str),
        "required": required,
        "default": schema.get("default").cloned(),
        "items": items,
        "properties": Value::Null,
    })
}

/// The cloudllm type (`string`, `number`, `integer`, `boolean`, `array`,
/// `object`) of a JSON Schema: its first non-null `type`; a `$ref` or
/// `anyOf` (a nested argument object) is `object`.
fn param_type(schema: &Value) -> &'static str {
    let named = match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    };
    match named {
        Some("string") => "string",
        Some("number") => "number",
        Some("integer") => "integer",
        Some("boolean") => "boolean",
        Some("array") => "array",
        _ => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_flatten_to_cloudllm_parameters() {
        let specs = mentisdb_core::tool_specs();
        let append = tool_metadata(specs.iter().find(|s| s.name == "mentisdb_append").unwrap());
        let params = append["parameters"].as_array().unwrap();
        let p = |n: &str| params.iter().find(|p| p["name"] == n).unwrap_or_else(|| panic!("no parameter {n}"));
        assert_eq!(p("content")["type"], "string");
        assert_eq!(p("content")["required"], true);
        assert_eq!(p("chain_key")["required"], false);
        assert_eq!(p("importance")["type"], "number");
        assert_eq!(p("tags")["type"], "array");
        assert_eq!(p("tags")["items"], "string");
        assert_eq!(p("relations")["items"], "object");
        assert_eq!(append["protocol_metadata"]["read_only"], false);
        let types = ["string", "number", "integer", "boolean", "array", "object"];
        for spec in &specs {
            for param in tool_metadata(spec)["parameters"].as_array().unwrap() {
                assert!(types.contains(&param["type"].as_str().unwrap()), "{}: {param}", spec.name);
            }
        }
    }
}
