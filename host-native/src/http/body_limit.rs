//! Request bodies: over the daemon's limit (`MENTISDB_MAX_BODY_BYTES`), and
//! left unread by whoever answered.
//!
//! A request over the limit is answered HTTP 413 only after the rest of its
//! body was read and dropped (up to [`DRAIN_LIMIT`]): most clients write
//! their whole body before they read the answer, and a server that answers
//! and closes mid-body leaves them a reset connection instead of the 413 and
//! its message. Past [`DRAIN_LIMIT`] the connection is closed.
//!
//! The same holds for every answer given without reading the body (a
//! `POST /tools/list`, a 401 for a missing token, a 404): a connection
//! closed with unread input makes the kernel send a reset, which throws away
//! whatever part of the answer was not yet sent. [`read_rest_after_reply`]
//! reads such a body to its end once it is dropped.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
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

/// Middleware for every listener: a request body dropped before its end
/// (its handler ignored it, or the request was refused before it was read)
/// is read to its end and dropped in the background (up to [`DRAIN_LIMIT`]),
/// so the connection closes cleanly after the answer instead of resetting.
pub async fn read_rest_after_reply(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    next.run(axum::extract::Request::from_parts(parts, Body::new(DrainOnDrop(Some(body))))).await
}

/// A request body that, dropped before its end, hands the rest to [`drain`].
struct DrainOnDrop(Option<Body>);

impl HttpBody for DrainOnDrop {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        match self.0.as_mut() {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.0.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.as_ref().map(HttpBody::size_hint).unwrap_or_else(|| http_body::SizeHint::with_exact(0))
    }
}

impl Drop for DrainOnDrop {
    fn drop(&mut self) {
        let Some(body) = self.0.take().filter(|body| !body.is_end_stream()) else { return };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(drain(body));
        }
    }
}
