//! Authentication shared by the REST and MCP servers: the middleware that
//! turns the bearer token into an [`Identity`] (HTTP 401 when it names no
//! known token; HTTP 403 without tokens for a caller who is another local
//! user, `peer_user.rs`), and [`call_as`], the one way a transport runs a tool on
//! behalf of an identity (the access rule of [`crate::tokens::authorize`],
//! the call, the chain-list filter and the interaction log line).

use crate::tokens::{authorize, filter_chain_list, Forbidden, Identity, TokenStore};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use mentisdb_core::{MentisDb, NotQueued, Queued, ReplyLater, ToolError};
use mentisdb_core::json_text::JsonText;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// The tokens both servers check.
pub type AuthState = Arc<TokenStore>;

/// Middleware: 401 `{"error"}` unless the request carries a known token;
/// otherwise the [`Identity`] goes on as a request extension (MCP handlers
/// find it in the request parts rmcp puts in their context).
pub async fn require_token(State(auth): State<AuthState>, mut request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    match auth.identify(given) {
        Ok(identity) => {
            if let (Identity::Open, Some(why)) = (&identity, local_refusal(&request)) {
                let body = serde_json::json!({ "error": format!("this daemon has no tokens, so it answers only the user it runs as; {why}. To let other users in, give them a token: mentisdbd token add") });
                tracing::warn!(target: "mentisdb::security", path = %request.uri().path(), "refused a loopback call (no tokens configured): {why}");
                return (StatusCode::FORBIDDEN, Json(body)).into_response();
            }
            request.extensions_mut().insert(identity);
            next.run(request).await
        }
        Err(e) => {
            let body = serde_json::json!({ "error": e.to_string() });
            (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], Json(body)).into_response()
        }
    }
}

/// Why the connection's caller may not call without a token: another local
/// user, or one the kernel shows no owner for (`http/peer_user.rs`).
fn local_refusal(request: &Request) -> Option<String> {
    request.extensions().get::<axum::extract::ConnectInfo<super::peer_user::PeerUser>>().and_then(|c| c.0.refusal())
}

/// Why a call made through [`call_as`] failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The identity may not make this call (HTTP 403).
    #[error(transparent)]
    Forbidden(#[from] Forbidden),
    /// The tool failed.
    #[error(transparent)]
    Tool(#[from] ToolError),
}

/// Runs `tool` for `who` and logs it with the caller's name. Quick reads
/// run on the async worker (they only scan memory: microseconds to a few
/// milliseconds), and so does a ranked read that core answers at once
/// ([`MentisDb::call_raw_now`]: a small query over a chain in memory whose
/// indices are caught up and free, no model to run). An append on file
/// storage is written on the async worker too when its chain is in memory
/// and free ([`append_queued`]); its reply waits, on this task, for the
/// sync a drain makes for every append written meanwhile. Every other call
/// runs on the blocking pool: ranked queries may embed the query through a
/// model or wait for the index, other writes wait for storage.
pub async fn call_as(db: Arc<MentisDb>, who: Identity, tool: &'static str, args: Value) -> Result<JsonText, CallError> {
    if let Some(answered) = answer_now(&db, &who, tool, &args) {
        return answered;
    }
    if db.queues_appends(tool) {
        return append_queued(db, who, tool, args).await;
    }
    run_as(db, who, tool, args, move |db, who, caller, args| {
        let raw = db.call_raw_as(caller, tool, args)?;
        Ok(if tool == "mentisdb_list_chains" { filter_chain_list(who, raw) } else { raw })
    })
    .await
}

/// How many times an append whose chain is busy (its lock held for a few
/// microseconds by another append or the index worker) lets the event loop
/// run other tasks and tries again before it waits on the blocking pool.
/// Measured with `scripts/loadbench/switches.sh append`: with 4, 19% of
/// appends still went to the pool, with 16, 7%.
const BUSY_RETRIES: usize = 16;

/// Append tool `tool` written and acknowledged without a thread waiting for
/// its fsync ([`MentisDb::append_tool_now`]): written here when its chain is
/// in memory and free (trying again a few times, [`BUSY_RETRIES`]), else on
/// the blocking pool ([`mentisdb_core::Busy::wait`], which loads or creates
/// the chain and waits for its lock); either way its reply
/// is queued and arrives once a drain (on the blocking pool, one per chain
/// at a time) has synced the chain, which covers every append written
/// before the sync.
async fn append_queued(db: Arc<MentisDb>, who: Identity, tool: &'static str, args: Value) -> Result<JsonText, CallError> {
    let started = Instant::now();
    let result = async {
        authorize(&db, &who, tool, &args)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let later: ReplyLater = Box::new(move |reply| {
            // The caller may be gone (its connection closed): the append stands.
            let _ = tx.send(reply);
        });
        let mut attempt = db.append_tool_now(tool, args, later);
        for _ in 0..BUSY_RETRIES {
            match attempt {
                Err(NotQueued::Busy(busy)) if !busy.chain_not_in_memory() => {
                    tokio::task::yield_now().await;
                    attempt = busy.retry_now(&db);
                }
                _ => break,
            }
        }
        let queued = match attempt {
            Ok(queued) => queued,
            Err(NotQueued::Refused(e)) => return Err(e.into()),
            Err(NotQueued::Busy(busy)) => {
                let db = db.clone();
                // The drain is started inside the task: a request cancelled
                // while it waits (its client gone) never drops a drain, and
                // with it the replies of the appends queued behind it.
                let waited = tokio::task::spawn_blocking(move || {
                    let queued = busy.wait(&db)?;
                    if let Queued::Drain(drain) = queued {
                        tokio::task::spawn_blocking(move || drain.run(&db));
                    }
                    Ok(Queued::Joined)
                });
                waited.await.unwrap_or_else(|e| Err(interrupted(e)))?
            }
        };
        if let Queued::Drain(drain) = queued {
            let db = db.clone();
            tokio::task::spawn_blocking(move || drain.run(&db));
        }
        rx.await.unwrap_or_else(|e| Err(interrupted(e))).map_err(CallError::from)
    }
    .await;
    log_call(tool, &who, started, &result);
    result
}

/// The error of an append whose task ended without a reply (a panic, or
/// its drain dropped unrun as the daemon shuts down).
fn interrupted(e: impl std::fmt::Display) -> ToolError {
    ToolError::Unavailable(format!("the append was interrupted ({e}); retry it (with the same thought_id a retry is idempotent)"))
}

/// `tool` answered on the async worker when core can answer it now
/// ([`MentisDb::call_raw_now`]), and logged; `None` when it would wait (or
/// is refused: [`run_as`] refuses and logs it).
fn answer_now(db: &MentisDb, who: &Identity, tool: &'static str, args: &Value) -> Option<Result<JsonText, CallError>> {
    if !mentisdb_core::dispatch::may_answer_now(tool) {
        return None;
    }
    let started = Instant::now();
    authorize(db, who, tool, args).ok()?;
    let result = db.call_raw_now(tool, args)?.map_err(CallError::from);
    log_call(tool, who, started, &result);
    Some(result)
}

/// [`call_as`] for a core operation that does what `tool` does without its
/// JSON form (a chain object's raw bytes in and out): `who` must be allowed
/// `tool` with `args`, then `op` runs with them, where `tool` would, and is
/// logged as `tool`.
pub async fn run_as<T: Send + 'static>(
    db: Arc<MentisDb>,
    who: Identity,
    tool: &'static str,
    args: Value,
    op: impl FnOnce(&MentisDb, &Identity, Option<mentisdb_core::dispatch::Caller<'_>>, Value) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, CallError> {
    let started = Instant::now();
    let logged_as = who.clone();
    let run = move || -> Result<T, CallError> {
        let caller = authorize(&db, &who, tool, &args)?;
        Ok(op(&db, &who, caller, args)?)
    };
    let result = if mentisdb_core::dispatch::is_quick_read(tool) {
        run()
    } else {
        tokio::task::spawn_blocking(run)
            .await
            .unwrap_or_else(|e| Err(ToolError::Storage(mentisdb_core::StorageError::Unavailable(format!("tool task failed: {e}"))).into()))
    };
    log_call(tool, &logged_as, started, &result);
    result
}

/// The interaction log line of one call: tool, caller, time taken, outcome.
fn log_call<T>(tool: &str, who: &Identity, started: Instant, result: &Result<T, CallError>) {
    let micros = started.elapsed().as_micros() as u64;
    let caller = match who {
        Identity::Token(t) => &t.name,
        Identity::Open => "-",
    };
    match result {
        Ok(_) => tracing::info!(target: "mentisdb::interaction", tool, caller, micros, "ok"),
        Err(CallError::Forbidden(e)) => tracing::info!(target: "mentisdb::interaction", tool, caller, micros, kind = "forbidden", error = %e, "refused"),
        Err(CallError::Tool(e)) => tracing::info!(target: "mentisdb::interaction", tool, caller, micros, kind = e.kind().as_str(), error = %e, "error"),
    }
}
