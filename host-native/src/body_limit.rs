//! Request bodies over the daemon's limit (`MENTISDB_MAX_BODY_BYTES`).
//!
//! Such a request is answered HTTP 413 only after the rest of its body was
//! read and dropped (up to [`DRAIN_LIMIT`]): most clients write their whole
//! body before they read the answer, and a server that answers and closes
//! mid-body leaves them a reset connection instead of the 413 and its
//! message. Past [`DRAIN_LIMIT`] the connection is closed.

use axum::body::{Body, Bytes};
use tokio_stream::StreamExt;

/// Most bytes of an oversized body read (and dropped) before answering.
pub const DRAIN_LIMIT: u64 = 64 << 20;

/// `body` whole when it is at most `max` bytes; `None` (the rest of the body
/// read and dropped, up to [`DRAIN_LIMIT`]) when it is larger. `Err` when
/// the client's body fails (a broken connection).
pub async fn read_within(body: Body, max: usize) -> Result<Option<Bytes>, axum::Error> {
    let mut stream = body.into_data_stream();
    let mut kept = Vec::new();
    let mut seen: u64 = 0;
    while let Some(data) = stream.next().await {
        let data = data?;
        seen += data.len() as u64;
        if seen <= max as u64 {
            kept.extend_from_slice(&data);
        } else if seen > DRAIN_LIMIT {
            return Ok(None);
        }
    }
    Ok((seen <= max as u64).then(|| Bytes::from(kept)))
}

/// Whether `request` says (`Content-Length`) its body is over `max` bytes.
pub fn declared_over(request: &axum::extract::Request, max: usize) -> bool {
    let length = request.headers().get(axum::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    length.is_some_and(|n| n > max as u64)
}

/// Reads and drops the rest of `body` (up to [`DRAIN_LIMIT`]).
pub async fn drain(body: Body) {
    let _ = read_within(body, 0).await;
}
