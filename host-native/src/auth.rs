//! Optional bearer-token check shared by the REST and MCP servers.

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The configured token, if any. `None` lets every request through.
#[derive(Debug, Clone, Default)]
pub struct AuthState {
    token: Option<Arc<str>>,
}

impl AuthState {
    pub fn new(token: Option<&str>) -> Self {
        AuthState { token: token.map(Arc::from) }
    }

    /// Whether an `Authorization` header value carries the token.
    pub fn accepts(&self, authorization: Option<&str>) -> bool {
        let Some(token) = &self.token else { return true };
        let Some(given) = authorization.and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer "))) else {
            return false;
        };
        constant_time_eq(given.trim().as_bytes(), token.as_bytes())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Middleware: 401 `{"error"}` unless the request carries the token.
pub async fn require_token(State(auth): State<AuthState>, request: Request, next: Next) -> Response {
    let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    if auth.accepts(given) {
        return next.run(request).await;
    }
    let body = serde_json::json!({ "error": "missing or wrong API token: send 'Authorization: Bearer <MENTISDB_API_TOKEN>'" });
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_checks() {
        assert!(AuthState::new(None).accepts(None));
        let a = AuthState::new(Some("s3cret"));
        assert!(a.accepts(Some("Bearer s3cret")));
        assert!(!a.accepts(Some("Bearer s3cres")));
        assert!(!a.accepts(Some("s3cret")));
        assert!(!a.accepts(None));
    }
}
