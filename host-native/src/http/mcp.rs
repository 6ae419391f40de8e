//! The MCP server, on the official Rust SDK (`rmcp`): one [`ServerHandler`]
//! over the shared [`MentisDb`], served over streamable HTTP (at `/` and
//! `/mcp` of the MCP port) and over stdio.
//!
//! - `initialize`: protocol version negotiation is rmcp's; server info is
//!   `mentisdb`, and `instructions` tell agents to read `mentisdb_skill_md`.
//! - `tools/list`: [`mentisdb_core::tool_specs`], each with its JSON Schema
//!   and the annotations that differ from MCP's defaults: `readOnlyHint`
//!   for the reads, `destructiveHint: false` for the writes that only add
//!   (the deletions and forgetting keep the default, destructive).
//! - `tools/call`: [`crate::http::auth::call_as`] (the token's access rule, then
//!   [`MentisDb::call_raw_as`]); a tool may be named by its MentisDB 0.10
//!   `thoughtchain_` alias too. A call the token may not make is an
//!   `isError` result starting `403 forbidden:`. The JSON result is returned as text
//!   content and as structured content. Tool failures are `isError: true`
//!   results carrying the message; an unknown tool name is a JSON-RPC
//!   invalid-params error (a protocol fault, per the MCP spec).
//! - `resources/list` and `resources/read`: one resource,
//!   [`SKILL_RESOURCE_URI`] (`mentisdb://skill/core`, `text/markdown`), the
//!   text of `mentisdb_skill_md`, read through [`crate::http::auth::call_as`] like
//!   a tool call; another URI is a JSON-RPC resource-not-found error.
//! - Beside MCP the port serves MentisDB 0.10's CloudLLM endpoints
//!   `POST /tools/list` and `POST /tools/execute` ([`crate::http::legacy`]) and
//!   `GET /health`.
//! - Origin and Host (web pages, DNS rebinding) are checked in front of
//!   every listener by [`crate::http::web_guard`].

use crate::http::auth::{call_as, require_token, AuthState, CallError};
use crate::tokens::Identity;
use axum::Router;
use mentisdb_core::{tool_specs, MentisDb, ToolError, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use mentisdb_core::json_text::JsonText;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The MCP resource holding the MentisDB operating skill, as MentisDB 0.10 names it.
pub const SKILL_RESOURCE_URI: &str = "mentisdb://skill/core";

/// What `initialize` tells an agent before anything else.
pub const INSTRUCTIONS: &str = "MentisDB is durable, append-only, hash-chained memory for agents. \
Before using any other tool, read the resource `mentisdb://skill/core` (`resources/read`; or call \
`mentisdb_skill_md` when your client has no resources) and follow the skill it returns: it explains \
chains, thought types, roles, refs and the recommended workflow (list chains, bootstrap once, load \
recent context at session start, search before acting, append durable thoughts while working, \
append a retrospective after hard failures, end with a Summary/Checkpoint/Handoff).";

/// The MCP service: a handle on the shared database, the tool list and the
/// tools it lists unless a request asks for another profile.
#[derive(Clone)]
pub struct MentisMcp {
    db: Arc<MentisDb>,
    tools: Arc<Vec<Tool>>,
    listed: Arc<Vec<&'static str>>,
}

impl std::fmt::Debug for MentisMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MentisMcp").field("tools", &self.tools.len()).finish()
    }
}

/// Writes that change or remove what is stored rather than only add to it
/// (MCP `destructiveHint`, its default for a write): erasures, and edits of
/// the agent registry, entity types and skill statuses.
const DESTRUCTIVE_TOOLS: &[&str] = &[
    "mentisdb_forget_thought",
    "mentisdb_delete_chain",
    "mentisdb_merge_chains",
    "mentisdb_delete_skill",
    "mentisdb_delete_webhook",
    "mentisdb_upsert_agent",
    "mentisdb_set_agent_description",
    "mentisdb_add_agent_key",
    "mentisdb_revoke_agent_key",
    "mentisdb_disable_agent",
    "mentisdb_upsert_entity_type",
    "mentisdb_deprecate_skill",
    "mentisdb_revoke_skill",
];

/// `specs` as MCP tools.
fn tool_list(specs: Vec<ToolSpec>) -> Vec<Tool> {
    specs
        .into_iter()
        .map(|spec| {
            let schema = match spec.input_schema {
                Value::Object(map) => map,
                _ => Default::default(),
            };
            let mut tool = Tool::default();
            tool.name = Cow::Borrowed(spec.name);
            tool.description = Some(Cow::Borrowed(spec.description));
            tool.input_schema = Arc::new(schema);
            // Only hints that differ from MCP's defaults (`readOnlyHint`
            // false, `destructiveHint` true, `openWorldHint` true) are
            // listed: every listed byte costs each agent's context. Most
            // writes only add (an append, a claim or fact record, an
            // import); erasures and registry edits change what is stored. Webhooks and extraction reach outside the
            // daemon, so no tool claims a closed world.
            tool.annotations = if spec.read_only {
                Some(ToolAnnotations::new().read_only(true))
            } else if DESTRUCTIVE_TOOLS.contains(&spec.name) {
                None
            } else {
                Some(ToolAnnotations::new().destructive(false))
            };
            tool
        })
        .collect()
}

impl MentisMcp {
    /// The service listing the tools of `listed` (a profile: `select_tools`).
    pub fn new(db: Arc<MentisDb>, listed: Vec<&'static str>) -> Self {
        MentisMcp { db, tools: Arc::new(tool_list(tool_specs())), listed: Arc::new(listed) }
    }
}

/// The tool profile a request asks for with `?tools=...` (on `/mcp` or
/// `/tools/list`), if it does.
pub fn requested_profile(query: Option<&str>) -> Option<Result<Vec<&'static str>, String>> {
    let (_, value) = url::form_urlencoded::parse(query?.as_bytes()).find(|(k, _)| k == "tools")?;
    Some(mentisdb_core::dispatch::select_tools(&value))
}

/// The one mapping from a tool outcome to an MCP result. A refused call is
/// an `isError` result whose text starts with `403 forbidden:`, so agents
/// can read why.
fn to_mcp_result(result: Result<JsonText, CallError>) -> Result<CallToolResult, ErrorData> {
    match result {
        Ok(raw) => {
            let value: Value = serde_json::from_str(raw.get()).map_err(|e| ErrorData::internal_error(format!("tool result is not JSON: {e}"), None))?;
            let mut r = CallToolResult::success(vec![ContentBlock::text(raw.into_string())]);
            r.structured_content = Some(value);
            Ok(r)
        }
        Err(CallError::Forbidden(f)) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("403 forbidden: {f}"))])),
        Err(CallError::Tool(ToolError::UnknownTool(name))) => Err(ErrorData::invalid_params(format!("unknown tool '{name}'; call tools/list for the tool names"), None)),
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())])),
    }
}

impl ServerHandler for MentisMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("mentisdb", env!("CARGO_PKG_VERSION")).with_title("MentisDB"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        let asked = context.extensions.get::<axum::http::request::Parts>().and_then(|p| requested_profile(p.uri.query()));
        let listed = match asked {
            Some(Ok(names)) => names,
            Some(Err(e)) => return Err(ErrorData::invalid_params(e, None)),
            None => (*self.listed).clone(),
        };
        Ok(ListToolsResult::with_all_items(tool_list(mentisdb_core::dispatch::listed_tools(&listed))))
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        let Some(name) = mentisdb_core::dispatch::canonical_tool_name(&request.name) else {
            return Err(ErrorData::invalid_params(format!("unknown tool '{}'; call tools/list for the tool names", request.name), None));
        };
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        to_mcp_result(call_as(self.db.clone(), caller(&context)?, name, args).await).map(CallToolResponse::from)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let name = mentisdb_core::dispatch::canonical_tool_name(name)?;
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn list_resources(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        let skill = Resource::new(SKILL_RESOURCE_URI, "mentisdb-skill-core")
            .with_title("MentisDB operating skill")
            .with_description("Read this first: how to use MentisDB memory (chains, bootstrap, search before acting, durable thoughts, checkpoints).")
            .with_mime_type("text/markdown");
        Ok(ListResourcesResult::with_all_items(vec![skill]))
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != SKILL_RESOURCE_URI {
            let shown: String = request.uri.chars().take(200).collect();
            return Err(ErrorData::resource_not_found(format!("no resource '{shown}'; resources/list names {SKILL_RESOURCE_URI}"), None));
        }
        let raw = match call_as(self.db.clone(), caller(&context)?, "mentisdb_skill_md", Value::Null).await {
            Ok(raw) => raw,
            Err(CallError::Forbidden(f)) => return Err(ErrorData::invalid_request(format!("403 forbidden: {f}"), None)),
            Err(e) => return Err(ErrorData::internal_error(e.to_string(), None)),
        };
        let reply: Value = serde_json::from_str(raw.get()).map_err(|e| ErrorData::internal_error(format!("skill text is not JSON: {e}"), None))?;
        let text = reply.get("markdown").and_then(Value::as_str).ok_or_else(|| ErrorData::internal_error("mentisdb_skill_md returned no markdown", None))?;
        let contents = ResourceContents::text(text, SKILL_RESOURCE_URI).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Who is calling: over HTTP the auth middleware put the caller in the
/// request parts; stdio has no parts and no tokens (a local process).
fn caller(context: &RequestContext<RoleServer>) -> Result<Identity, ErrorData> {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => parts.extensions.get::<Identity>().cloned().ok_or_else(|| ErrorData::internal_error("request reached MCP without passing the token check", None)),
        None => Ok(Identity::Open),
    }
}

/// The streamable-HTTP router: the service at `/` and `/mcp`, behind auth.
/// Host and Origin are checked for every listener by `web_guard.rs`, so
/// rmcp's own checks are off (one rule, one list of allowed names).
pub fn router(db: Arc<MentisDb>, auth: AuthState, max_body_bytes: usize, listed: Vec<&'static str>, shutdown: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts().disable_allowed_origins().with_max_request_body_bytes(max_body_bytes).with_cancellation_token(shutdown);
    let service = MentisMcp::new(db.clone(), listed.clone());
    let http = StreamableHttpService::new(move || Ok(service.clone()), Arc::new(LocalSessionManager::default()), config);
    let owners = Arc::new(SessionOwners::default());
    Router::new()
        .route_service("/mcp", http.clone())
        .route_service("/", http)
        .layer(axum::middleware::from_fn_with_state(max_body_bytes, reject_malformed_json))
        .layer(axum::middleware::from_fn_with_state(owners, bind_sessions))
        .layer(axum::middleware::from_fn_with_state(auth.clone(), require_token))
        .merge(crate::http::legacy::router(db, auth, max_body_bytes, listed))
        .route("/health", axum::routing::get(|| async { axum::Json(serde_json::json!({ "status": "ok", "service": "mentisdb" })) }))
}

/// Which token opened each MCP session (`None`: no tokens configured), so
/// that a session id answers only to the token that opened it: another
/// token cannot use, or end, a session it learned the id of.
#[derive(Default)]
struct SessionOwners {
    sessions: std::sync::Mutex<std::collections::HashMap<String, Owner>>,
    opened: std::sync::atomic::AtomicU64,
}

/// A session's owner (its token's name; `None` without tokens) and when it
/// was opened (a counter: the oldest is forgotten first).
type Owner = (Option<Arc<str>>, u64);

/// Sessions remembered at most; past it the oldest is forgotten, and its
/// client is told to initialize again (HTTP 404, as for an expired session).
const MAX_SESSIONS: usize = 65_536;

/// Middleware (inside the token check): a request naming a session must
/// come with the token that opened it; the answer to `initialize` records
/// its new session's owner; a successful DELETE forgets it.
async fn bind_sessions(axum::extract::State(owners): axum::extract::State<Arc<SessionOwners>>, request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    use axum::response::IntoResponse;
    let caller: Option<Arc<str>> = match request.extensions().get::<Identity>() {
        Some(Identity::Token(t)) => Some(t.name.clone()),
        _ => None,
    };
    let session = request.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    if let Some(id) = &session {
        let owner = owners.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(id).map(|(o, _)| o.clone());
        if owner.as_ref() != Some(&caller) {
            let message = match owner {
                Some(_) => "this MCP session was opened with another token; initialize a session of your own",
                None => "no such MCP session; initialize again",
            };
            return (axum::http::StatusCode::NOT_FOUND, axum::Json(serde_json::json!({ "error": message }))).into_response();
        }
    }
    let deleting = request.method() == axum::http::Method::DELETE;
    let response = next.run(request).await;
    let mut sessions = owners.sessions.lock().unwrap_or_else(|e| e.into_inner());
    match (&session, response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())) {
        (Some(id), _) if deleting && response.status().is_success() => {
            sessions.remove(id);
        }
        (None, Some(new)) => {
            let n = owners.opened.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            sessions.insert(new.to_string(), (caller, n));
            if sessions.len() > MAX_SESSIONS {
                if let Some(oldest) = sessions.iter().min_by_key(|(_, (_, n))| *n).map(|(k, _)| k.clone()) {
                    sessions.remove(&oldest);
                }
            }
        }
        _ => {}
    }
    drop(sessions);
    response
}

/// A POST body that is not JSON is a JSON-RPC parse error (-32700, HTTP
/// 400), as the spec asks for protocol faults; rmcp alone answers 415
/// with a plain-text message. Oversized bodies are HTTP 413, answered once
/// the body was read (`body_limit.rs`).
async fn reject_malformed_json(
    axum::extract::State(max_body_bytes): axum::extract::State<usize>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    use axum::response::IntoResponse;
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let rpc_error = |status: StatusCode, code: i32, message: String| {
        (status, axum::Json(serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}))).into_response()
    };
    let (parts, body) = request.into_parts();
    let bytes = match crate::http::body_limit::read_within(body, max_body_bytes).await {
        Ok(Some(b)) => b,
        Ok(None) => {
            let message = format!("request body exceeds {max_body_bytes} bytes (MENTISDB_MAX_BODY_BYTES / --max-body-bytes)");
            return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, message);
        }
        Err(e) => return rpc_error(StatusCode::BAD_REQUEST, -32700, format!("cannot read the request body: {e}")),
    };
    let message = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => v,
        Err(e) => return rpc_error(StatusCode::BAD_REQUEST, -32700, format!("parse error: the request body is not valid JSON ({e})")),
    };
    // rmcp reports tools/call params it cannot deserialize as "method not
    // found" (-32601); they are invalid params (-32602).
    if message["method"] == "tools/call" {
        let params = &message["params"];
        let bad = if !params.is_object() {
            Some("params must be an object with a string `name` and an object `arguments`")
        } else if !params["name"].is_string() {
            Some("params.name must be the tool name (a string); call tools/list for the tool names")
        } else if !(params["arguments"].is_object() || params["arguments"].is_null()) {
            Some("params.arguments must be a JSON object")
        } else {
            None
        };
        if let Some(why) = bad {
            let body = serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": format!("invalid params for tools/call: {why}")}});
            return (StatusCode::OK, axum::Json(body)).into_response();
        }
    }
    next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))).await
}

/// Serves MCP over stdin/stdout until the client closes the stream,
/// listing the tools of `listed`.
pub async fn serve_stdio(db: Arc<MentisDb>, listed: Vec<&'static str>) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    use rmcp::ServiceExt;
    let running = MentisMcp::new(db, listed).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema() {
        let tools = tool_list(tool_specs());
        assert_eq!(tools.len(), tool_specs().len());
        for t in &tools {
            assert_eq!(t.input_schema.get("type").and_then(Value::as_str), Some("object"), "{}", t.name);
            assert!(t.description.as_deref().is_some_and(|d| !d.is_empty()));
        }
    }

    #[test]
    fn reads_and_writes_are_annotated() {
        let tools = tool_list(tool_specs());
        let hint = |name: &str| tools.iter().find(|t| t.name == name).and_then(|t| t.annotations.as_ref()).and_then(|a| a.read_only_hint);
        for read in ["mentisdb_search", "mentisdb_head", "mentisdb_ranked_search", "mentisdb_read_skill"] {
            assert_eq!(hint(read), Some(true), "{read}");
        }
        // A write is not read-only by MCP's default: the hint is left out.
        for write in ["mentisdb_append", "mentisdb_bootstrap", "mentisdb_upsert_agent", "mentisdb_upload_skill"] {
            assert_eq!(hint(write), None, "{write}");
        }
        // A write that only adds says so; one that erases keeps MCP's
        // default (destructive); a read says nothing of it.
        let destructive = |t: &Tool| t.annotations.as_ref().and_then(|a| a.destructive_hint).unwrap_or(true);
        let read_only = |t: &Tool| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        for t in tools.iter().filter(|t| !read_only(t)) {
            assert_eq!(destructive(t), DESTRUCTIVE_TOOLS.contains(&t.name.as_ref()), "{}", t.name);
        }
        assert!(destructive(tools.iter().find(|t| t.name == "mentisdb_delete_chain").unwrap()));
        assert!(!destructive(tools.iter().find(|t| t.name == "mentisdb_append").unwrap()));
        // No tool claims a closed world: webhooks and extraction reach outside.
        assert!(tools.iter().all(|t| t.annotations.as_ref().and_then(|a| a.open_world_hint).is_none()));
    }

    #[test]
    fn tool_failures_are_error_results() {
        let r = to_mcp_result(Err(ToolError::NotFound("no such thought".into()).into())).unwrap();
        assert_eq!(r.is_error, Some(true));
        assert!(to_mcp_result(Err(ToolError::UnknownTool("x".into()).into())).is_err());
        let r = to_mcp_result(Err(crate::tokens::Forbidden("token 't' lacks scope 'admin'".into()).into())).unwrap();
        assert_eq!(r.is_error, Some(true));
        assert!(format!("{:?}", r.content).contains("403 forbidden: token 't' lacks scope 'admin'"));
        let ok = to_mcp_result(Ok(JsonText::parse(r#"{"a":1}"#).unwrap())).unwrap();
        assert_eq!(ok.structured_content, Some(serde_json::json!({"a": 1})));
    }
}
