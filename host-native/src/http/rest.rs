//! The REST server: one route table mapping `METHOD path` to a tool name.
//!
//! Every route calls [`crate::http::auth::call_as`] (access rule, then
//! [`MentisDb::call_raw_as`]) with the JSON body (POST) or the
//! query string (GET) as arguments; no tool logic lives here. Errors of any
//! kind (tool errors, malformed JSON, wrong content type, oversized bodies,
//! unknown paths) leave through [`ApiError`], the one place that turns a
//! failure into a `{"error": "..."}` JSON response.

use crate::http::auth::{call_as, require_token, run_as, AuthState};
use crate::http::api_error::{answer_oversized, ApiError};
use crate::http::routes::{Reply, Route, BACKUP_PATH, CHAIN_BYTES_TYPE, FLUSH_PATH, ROUTES};
use crate::tokens::Identity;
use mentisdb_core::dispatch::replies::MarkdownReply;
use mentisdb_core::dispatch::Access;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Extension, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::{Json, Router};
use mentisdb_core::{MentisDb, ToolError};
use mentisdb_core::json_text::JsonText;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

impl axum::extract::FromRef<RestState> for crate::http::events::EventsState {
    fn from_ref(st: &RestState) -> Self {
        crate::http::events::EventsState { db: st.db.clone(), events: st.events.clone() }
    }
}

/// Shared state of the REST router.
#[derive(Clone)]
pub struct RestState {
    pub db: Arc<MentisDb>,
    /// Feeds `GET /v1/events` (`events.rs`).
    pub events: Arc<crate::http::events::EventHub>,
}

/// Parses a POST body: empty means no arguments; otherwise it must be JSON.
fn parse_body(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let mime = crate::http::web_guard::mime_of(headers);
    if !crate::http::web_guard::is_json(&mime) {
        let shown = if content_type.is_empty() { "none" } else { content_type };
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("expected content-type: application/json, got {shown}; send the arguments as a JSON object"),
        ));
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("malformed JSON body: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "the JSON body must be an object of named arguments"));
    }
    Ok(value)
}

fn reply(route: &Route, raw: JsonText) -> Result<Response, ApiError> {
    match route.reply {
        Reply::Markdown => match serde_json::from_str::<MarkdownReply>(raw.get()) {
            Ok(md) => Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], md.markdown).into_response()),
            Err(e) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{}'s reply is not a Markdown document: {e}", route.tool))),
        },
        // The dispatcher's JSON text is the body, as it was serialized.
        Reply::Json | Reply::ChainBytes | Reply::FromChainBytes => Ok(([(header::CONTENT_TYPE, "application/json")], raw.into_string()).into_response()),
    }
}

fn method_router(route: Route) -> MethodRouter<RestState> {
    if matches!(route.reply, Reply::ChainBytes) {
        get(move |State(st): State<RestState>, Extension(who): Extension<Identity>, Path(chain_key): Path<String>| async move {
            // The object's bytes as stored, straight from the engine (the
            // tool's reply would carry them as base64).
            let (_, _, bytes) = run_as(st.db, who, route.tool, json!({ "chain_key": chain_key.clone() }), move |db, _, _, _| db.export_chain(Some(&chain_key))).await?;
            Ok::<_, ApiError>(([(header::CONTENT_TYPE, CHAIN_BYTES_TYPE)], bytes).into_response())
        })
    } else if matches!(route.reply, Reply::FromChainBytes) {
        post(move |State(st): State<RestState>, Extension(who): Extension<Identity>, Path(chain_key): Path<String>, headers: HeaderMap, body: Result<Bytes, BytesRejection>| async move {
            let body = body?;
            let mime = crate::http::web_guard::mime_of(&headers);
            if mime != CHAIN_BYTES_TYPE {
                let shown = if mime.is_empty() { "none" } else { mime.as_str() };
                return Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, format!("expected content-type: {CHAIN_BYTES_TYPE} (the chain object's bytes), got {shown}")));
            }
            // Checked as the tool with its chain; the bytes go to the engine as they came.
            let checked = json!({ "chain_key": chain_key.clone(), "chain_base64": "" });
            let imported = run_as(st.db, who, route.tool, checked, move |db, _, caller, _| db.import_chain_object(caller, &chain_key, &body)).await?;
            Ok(Json(imported).into_response())
        })
    } else if route.method == "DELETE" {
        axum::routing::delete(move |State(st): State<RestState>, Extension(who): Extension<Identity>, Path(params): Path<BTreeMap<String, String>>| async move {
            let args = Value::Object(params.into_iter().map(|(k, v)| (k, Value::String(v))).collect());
            let value = call_as(st.db, who, route.tool, args).await?;
            reply(&route, value)
        })
    } else if route.method == "GET" {
        get(move |State(st): State<RestState>, Extension(who): Extension<Identity>, query: Result<Query<BTreeMap<String, String>>, QueryRejection>| async move {
            let Query(query) = query?;
            let args = if query.is_empty() { Value::Null } else { Value::Object(query.into_iter().map(|(k, v)| (k, Value::String(v))).collect::<Map<_, _>>()) };
            let value = call_as(st.db, who, route.tool, args).await?;
            reply(&route, value)
        })
    } else {
        post(move |State(st): State<RestState>, Extension(who): Extension<Identity>, headers: HeaderMap, body: Result<Bytes, BytesRejection>| async move {
            let args = parse_body(&headers, &body?)?;
            let value = call_as(st.db, who, route.tool, args).await?;
            reply(&route, value)
        })
    }
}

/// How long one storage probe may take before `/health` says unavailable.
const HEALTH_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How often the storage is probed for `/health`.
const HEALTH_PROBE_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What `/health` answers: the outcome of the latest storage probe, kept up
/// to date by a background task ([`HealthState::watch`]), so a load
/// balancer polling `/health` never makes the daemon touch storage.
#[derive(Default)]
pub struct HealthState {
    /// Why the latest probe failed; `None` while storage answers.
    failure: std::sync::RwLock<Option<String>>,
}

impl HealthState {
    /// Probes `db`'s storage now and every [`HEALTH_PROBE_EVERY`] until `stop`.
    pub fn watch(db: Arc<MentisDb>, stop: tokio_util::sync::CancellationToken) -> Arc<HealthState> {
        let state = Arc::new(HealthState::default());
        let kept = state.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(HEALTH_PROBE_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let probed = db.clone();
                let probe = tokio::time::timeout(HEALTH_PROBE_TIMEOUT, tokio::task::spawn_blocking(move || probed.storage().probe())).await;
                let failure = match probe {
                    Ok(Ok(Ok(()))) => None,
                    Ok(Ok(Err(e))) => Some(e.to_string()),
                    Ok(Err(e)) => Some(format!("the probe failed: {e}")),
                    Err(_) => Some(format!("no answer within {} s", HEALTH_PROBE_TIMEOUT.as_secs())),
                };
                *kept.failure.write().unwrap_or_else(|e| e.into_inner()) = failure;
            }
        });
        state
    }

    fn failure(&self) -> Option<String> {
        self.failure.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// `GET /health`: 200 `{"status": "ok", "service", "storage": {"backend",
/// "reachable": true, "group_writes", "lost_races"}}` while the storage
/// backend answers ([`mentisdb_core::Storage::probe`], run every second in
/// the background: a round trip to PostgreSQL; file storage always
/// answers); 503 with `"status": "unavailable"`, `reachable: false` and the
/// reason in `error` when it does not (reads of chains in memory still work
/// then; writes answer 503 until it is back). Public: when tokens are on, a
/// request without a known token gets only `{"status", "service"}` (up or
/// down, for a load balancer). Reads state only: no storage access per call.
async fn health(State((db, auth, state)): State<(Arc<MentisDb>, AuthState, Arc<HealthState>)>, headers: HeaderMap) -> Response {
    let detailed = !auth.enabled() || auth.identify(headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok())).is_ok();
    let failure = state.failure();
    let (status, word) = if failure.is_none() { (StatusCode::OK, "ok") } else { (StatusCode::SERVICE_UNAVAILABLE, "unavailable") };
    let mut body = json!({ "status": word, "service": "mentisdb" });
    if detailed {
        let writes = db.write_counts();
        body["storage"] = json!({"backend": db.storage().backend_name(), "reachable": failure.is_none(), "group_writes": writes.group_writes, "lost_races": writes.lost_races});
        if let Some(error) = failure {
            body["error"] = json!(error);
        }
    }
    (status, Json(body)).into_response()
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such endpoint; GET /openapi.json lists every endpoint (the explorer is at /explorer/)")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method not allowed on this endpoint; GET /openapi.json lists each endpoint's methods")
}

/// `GET /openapi.json`: the generated OpenAPI document; public, like `/health`.
async fn openapi_document(State(auth): State<AuthState>) -> Json<Value> {
    Json(crate::http::openapi::document(auth.enabled()).clone())
}

/// 403 unless `who` is admin on every chain (`*`), as daemon-wide
/// operations outside the tools (backup, flush) need.
fn require_admin_on_all(who: &Identity, what: &str) -> Result<(), ApiError> {
    match who {
        Identity::Token(token) if !(token.scope == Access::Admin && token.covers_all()) => {
            Err(ApiError::new(StatusCode::FORBIDDEN, format!("token '{}' lacks scope 'admin' for all chains ('*') ({what} needs admin)", token.name)))
        }
        _ => Ok(()),
    }
}


/// `POST /v1/admin/flush`: syncs every chain object and the skill log
/// (`MentisDb::flush_all`); `{"status": "flushed", "chains": n}`. Every
/// acknowledged append is durable already, so this changes nothing a client
/// can see; it exists for 0.10's clients and scripts. Admin on `*`.
async fn flush(State(st): State<RestState>, Extension(who): Extension<Identity>) -> Result<Json<Value>, ApiError> {
    require_admin_on_all(&who, "a flush")?;
    let db = st.db.clone();
    let synced = tokio::task::spawn_blocking(move || db.flush_all()).await.map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let chains = synced.map_err(|e| ApiError::from(ToolError::Storage(e)))?;
    Ok(Json(json!({ "status": "flushed", "chains": chains })))
}


/// `GET /v1/admin/backup`: a consistent backup of every chain, sidecar, the
/// skill registry and the daemon's identity as one `.tar.gz`
/// (`backup.rs`), streamed while the daemon keeps serving. Not a tool: it
/// needs `admin` on `*` when tokens are on, as daemon-wide changes do.
async fn backup_archive(State(st): State<RestState>, Extension(who): Extension<Identity>) -> Result<Response, ApiError> {
    require_admin_on_all(&who, "a backup")?;
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let db = st.db.clone();
    let started = std::time::Instant::now();
    tokio::task::spawn_blocking(move || {
        let mut out = crate::infra::backup::ChunkSender::new(tx);
        match crate::infra::backup::write_archive(&db, &mut out, |_| {}).and_then(|m| std::io::Write::flush(&mut out).map(|()| m)) {
            Ok(manifest) => tracing::info!(objects = manifest.objects.len(), chains = manifest.chains.len(), ms = started.elapsed().as_millis() as u64, "backup streamed"),
            Err(e) => {
                tracing::warn!(error = %e, "backup stopped");
                out.fail(e);
            }
        }
    });
    let name = format!("mentisdb-backup-{}.tar.gz", mentisdb_core::timestamp::format_rfc3339_millis(st.db.now_millis()).replace([':', '.'], "-"));
    let body = axum::body::Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
    Ok(([(header::CONTENT_TYPE, "application/gzip".to_string()), (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\""))], body).into_response())
}

/// The REST router: the route table, `/health`, `/openapi.json`, the
/// backup archive, the event stream (`events.rs`), the body limit and auth,
/// and with `explorer` the explorer page (public, outside the token
/// middleware: its files hold no data; its API calls carry the token).
/// `max_import_bytes` is the body limit of `POST /v1/chains/{chain_key}/import`
/// (a whole chain object; admin only), `max_body_bytes` that of every other route.
/// `explorer` serves the explorer page; `shutdown` ends every event stream.
pub fn router(db: Arc<MentisDb>, auth: AuthState, max_body_bytes: usize, max_import_bytes: usize, explorer: bool, cors_origins: &[String], shutdown: tokio_util::sync::CancellationToken) -> Router {
    let health_state = (db.clone(), auth.clone(), HealthState::watch(db.clone(), shutdown.clone()));
    let events = crate::http::events::EventHub::attach(&db, shutdown);
    tokio::spawn(events.clone().announce_expired_claims(db.clone(), std::time::Duration::from_millis(250)));
    let mut api = Router::new().route(BACKUP_PATH, get(backup_archive)).route(crate::http::events::EVENTS_PATH, get(crate::http::events::events)).route(FLUSH_PATH, post(flush));
    for route in ROUTES {
        let mut methods = method_router(*route);
        let imports = matches!(route.reply, Reply::FromChainBytes);
        let limit = if imports { max_import_bytes } else { max_body_bytes };
        if imports {
            // Inside the router-wide limit below, so this one applies here.
            methods = methods.layer(DefaultBodyLimit::max(limit));
        }
        methods = methods.layer(axum::middleware::from_fn_with_state(limit, answer_oversized));
        api = api.route(route.path, methods);
    }
    let api = api
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(auth.clone(), require_token))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(RestState { db, events });
    let public = Router::new().route("/openapi.json", get(openapi_document)).with_state(auth);
    let outer = Router::new().route("/health", get(health)).with_state(health_state).merge(public);
    let outer = if explorer { outer.merge(crate::http::explorer::router()) } else { outer };
    match cors(cors_origins) {
        Some(layer) => outer.merge(api).layer(layer),
        None => outer.merge(api),
    }
}

/// CORS for exactly `origins` (none: no CORS headers, browsers allow only
/// same-origin calls). Outside the token check, so preflights need no token;
/// the calls themselves still do.
fn cors(origins: &[String]) -> Option<tower_http::cors::CorsLayer> {
    use axum::http::{header, HeaderName, HeaderValue, Method};
    let origins: Vec<HeaderValue> = origins.iter().map(|o| o.trim().trim_end_matches('/')).filter(|o| !o.is_empty()).filter_map(|o| HeaderValue::from_str(o).ok()).collect();
    if origins.is_empty() {
        return None;
    }
    Some(
        tower_http::cors::CorsLayer::new()
            .allow_origin(tower_http::cors::AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE, HeaderName::from_static("last-event-id")])
            .max_age(std::time::Duration::from_secs(600)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_unique_and_names_a_tool() {
        let mut seen = std::collections::BTreeSet::new();
        for r in ROUTES {
            assert!(seen.insert((r.method, r.path)), "duplicate route {} {}", r.method, r.path);
            assert!(matches!(r.method, "GET" | "POST" | "DELETE"), "{} {}", r.method, r.path);
            assert!(r.tool.starts_with("mentisdb_"));
        }
    }

    #[test]
    fn every_core_tool_has_a_route() {
        for spec in mentisdb_core::tool_specs() {
            assert!(ROUTES.iter().any(|r| r.tool == spec.name), "tool {} has no REST route", spec.name);
        }
    }

    #[test]
    fn body_parsing_errors_are_clear() {
        let mut h = HeaderMap::new();
        assert_eq!(parse_body(&h, b"").unwrap(), Value::Null);
        assert_eq!(parse_body(&h, b"{}").unwrap_err().status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        h.insert(header::CONTENT_TYPE, "application/json; charset=utf-8".parse().unwrap());
        assert_eq!(parse_body(&h, b"{\"a\":1}").unwrap(), json!({"a": 1}));
        let e = parse_body(&h, b"{oops").unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert!(e.message.contains("malformed JSON"));
        assert_eq!(parse_body(&h, b"[1]").unwrap_err().status, StatusCode::BAD_REQUEST);
    }
}
