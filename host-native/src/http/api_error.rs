//! The one way a REST failure leaves the daemon: an HTTP status and a
//! message, sent as `{"error": message}` (MENTISDB_REST.md's error
//! format), from tool errors, refused calls and unreadable requests alike.

use crate::http::auth::CallError;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use mentisdb_core::{ErrorKind, ToolError};
use serde_json::json;

/// A REST failure: an HTTP status and a human-readable message, sent as
/// `{"error": message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

/// The HTTP status of a tool error, by its [`ErrorKind`] (the one mapping;
/// the statuses MentisDB 0.10.10 answers): bad arguments and refused appends
/// 400, a missing chain, thought, agent, key, skill or tool 404, a refused
/// skill change (permission, signature, lifecycle) 403, a client-chosen id
/// naming something else 409, and server-side faults (storage, a chain
/// refused at open) 500.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::InvalidArguments | ErrorKind::AppendRejected => StatusCode::BAD_REQUEST,
        ErrorKind::UnknownTool | ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::SkillRejected => StatusCode::FORBIDDEN,
        ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Storage | ErrorKind::ChainRefused => StatusCode::INTERNAL_SERVER_ERROR,
        // 0.10.10 answers an unconfigured or failing model with a bare 500.
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl From<ToolError> for ApiError {
    /// The status [`status_of`] gives the error's kind; the message as is.
    fn from(e: ToolError) -> Self {
        ApiError::new(status_of(e.kind()), e.to_string())
    }
}

impl From<CallError> for ApiError {
    /// A refused call is 403; a tool failure as [`ToolError`] says.
    fn from(e: CallError) -> Self {
        match e {
            CallError::Forbidden(f) => ApiError::new(StatusCode::FORBIDDEN, f.0),
            CallError::Tool(t) => t.into(),
        }
    }
}

/// A body its `Content-Length` says is over the route's limit: HTTP 413
/// once the body was read and dropped (`body_limit.rs`), so the client sees
/// the answer. (A body without a length that grows past the limit is
/// refused by `DefaultBodyLimit` as it is read.)
pub(crate) async fn answer_oversized(State(limit): State<usize>, request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if !crate::http::body_limit::declared_over(&request, limit) {
        return next.run(request).await;
    }
    crate::http::body_limit::drain(request.into_body()).await;
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, TOO_LARGE.to_string()).into_response()
}

/// The message of HTTP 413.
const TOO_LARGE: &str = "request body is too large (limit set by MENTISDB_MAX_BODY_BYTES / --max-body-bytes)";

impl From<BytesRejection> for ApiError {
    fn from(r: BytesRejection) -> Self {
        let status = r.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            TOO_LARGE.to_string()
        } else {
            format!("cannot read request body: {}", r.body_text())
        };
        ApiError::new(status, message)
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, format!("malformed query string: {}", r.body_text()))
    }
}
