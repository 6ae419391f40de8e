//! The accept loop every HTTP listener runs, plain or TLS, with the limits
//! that keep one caller from starving the others.
//!
//! A local program (any user's) or a web page can open connections and
//! then send nothing. Each holds a file descriptor; enough of them and the
//! daemon could open no chain file and accept no client. So each listener:
//!
//! - holds at most [`Limits::connections`] connections at once; a caller
//!   past that closes the connection that has waited longest without
//!   sending a request (a real client sends at once), or, when every
//!   connection has sent one, waits until one closes;
//! - closes an HTTP/1 connection that takes longer than
//!   [`Limits::header_read`] to send a request's headers, idle keep-alive
//!   time included (hyper's `header_read_timeout`);
//! - closes a TLS connection whose handshake takes longer than
//!   [`Limits::handshake`];
//! - closes an HTTP/2 connection that stops answering pings.
//!
//! Each accepted connection's caller is looked up once ([`PeerUser`]) and
//! handed to the routes as `ConnectInfo<PeerUser>`. On `stop`, the loop
//! stops accepting, asks open connections to finish their requests, and
//! waits at most [`Limits::drain`] for them (MCP event streams never end by
//! themselves).

use super::peer_user::PeerUser;
use axum::extract::{ConnectInfo, Request};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// The limits one listener keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once.
    pub connections: usize,
    /// Time to send a request's headers, from the connection's start or
    /// the end of its last reply.
    pub header_read: Duration,
    /// Time to finish a TLS handshake.
    pub handshake: Duration,
    /// Time open connections get to finish after a stop.
    pub drain: Duration,
}

impl Limits {
    /// The daemon's limits, for `listeners` listeners sharing a budget of
    /// `descriptors` open files: each listener may hold a share of what is
    /// left after 256 descriptors are kept for chain files, logs and
    /// outgoing calls, between 32 and 4,096 connections.
    pub fn for_daemon(listeners: usize, descriptors: u64) -> Limits {
        let share = descriptors.saturating_sub(256) / listeners.max(1) as u64;
        Limits { connections: share.clamp(32, 4096) as usize, header_read: Duration::from_secs(30), handshake: Duration::from_secs(10), drain: Duration::from_secs(5) }
    }
}

/// A TLS listener's configuration (rustls, ring).
pub type TlsConfig = Arc<rustls::ServerConfig>;

/// Serves `app` on `listener`, over TLS when `tls` is given, until `stop`.
pub async fn serve(listener: TcpListener, app: axum::Router, tls: Option<TlsConfig>, limits: Limits, stop: CancellationToken) -> std::io::Result<()> {
    let server = listener.local_addr()?;
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let mut http = auto::Builder::new(TokioExecutor::new());
    http.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read);
    http.http2().timer(TokioTimer::new()).keep_alive_interval(Duration::from_secs(20)).keep_alive_timeout(Duration::from_secs(20));
    let open = Arc::new(Semaphore::new(limits.connections));
    let silent = Arc::new(Silent::default());
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    pause_after(&e, server).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let slot = match open.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                // At the cap: the connection that has waited longest without
                // a request makes room; with none, wait for one to close.
                silent.evict_oldest();
                tokio::select! {
                    slot = open.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                    () = stop.cancelled() => break,
                }
            }
        };
        // Entered here, not in the task: a task not yet run still counts as
        // silent, so the cap always finds one to close.
        let waiting = silent.enter();
        let (app, http, tls, watcher) = (app.clone(), http.clone(), tls.clone(), graceful.watcher());
        tokio::spawn(async move {
            let _slot = slot;
            let caller = ConnectInfo(PeerUser::of(peer, server));
            let app = app.layer(axum::Extension(caller)).map_request(|r: Request<hyper::body::Incoming>| r.map(axum::body::Body::new));
            let service = TowerToHyperService::new(app);
            let served = match tls {
                None => {
                    let first = tokio::select! {
                        first = first_bytes_within(&stream, limits.header_read) => first,
                        () = waiting.evicted() => false,
                    };
                    if !first {
                        return tracing::debug!(%peer, "no request within the header time, or closed at the cap");
                    }
                    drop(waiting);
                    watcher.watch(http.serve_connection_with_upgrades(TokioIo::new(stream), service).into_owned()).await
                }
                Some(tls) => {
                    let handshake = tokio::select! {
                        done = tokio::time::timeout(limits.handshake, tls.accept(stream)) => done,
                        () = waiting.evicted() => return tracing::debug!(%peer, "closed at the cap during its TLS handshake"),
                    };
                    match handshake {
                        Ok(Ok(stream)) => {
                            drop(waiting);
                            watcher.watch(http.serve_connection_with_upgrades(TokioIo::new(stream), service).into_owned()).await
                        }
                        Ok(Err(e)) => return tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            };
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(limits.drain, graceful.shutdown()).await.is_err() {
        tracing::debug!(%server, "connections still open after the drain time; closing them");
    }
    Ok(())
}

/// The connections that have sent nothing yet (no request bytes, or no
/// finished TLS handshake), oldest first: the first to close when a
/// listener is at its cap, since a real client sends its request at once.
#[derive(Default)]
struct Silent {
    next: std::sync::atomic::AtomicU64,
    waiting: std::sync::Mutex<std::collections::VecDeque<(u64, CancellationToken)>>,
}

/// One connection's place in [`Silent`], left when dropped.
struct Waiting {
    id: u64,
    evict: CancellationToken,
    silent: Arc<Silent>,
}

impl Silent {
    fn enter(self: &Arc<Self>) -> Waiting {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let evict = CancellationToken::new();
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).push_back((id, evict.clone()));
        Waiting { id, evict, silent: self.clone() }
    }

    /// Closes the connection that has waited longest, if any waits.
    fn evict_oldest(&self) {
        if let Some((_, evict)) = self.waiting.lock().unwrap_or_else(|e| e.into_inner()).pop_front() {
            evict.cancel();
        }
    }
}

impl Waiting {
    async fn evicted(&self) {
        self.evict.cancelled().await
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiting = self.silent.waiting.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = waiting.iter().position(|(id, _)| *id == self.id) {
            waiting.remove(at);
        }
    }
}

/// Whether a plain connection's first bytes arrive within `limit`: enough
/// to tell HTTP/1 from HTTP/2 (hyper waits for them with no timeout of its
/// own, and its header timeout starts after).
async fn first_bytes_within(stream: &tokio::net::TcpStream, limit: Duration) -> bool {
    const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let deadline = tokio::time::Instant::now() + limit;
    let mut seen = [0u8; 24];
    loop {
        match tokio::time::timeout_at(deadline, stream.peek(&mut seen)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return false,
            Ok(Ok(n)) if n == seen.len() || !H2_PREFACE.starts_with(&seen[..n]) => return true,
            // A prefix of the HTTP/2 preface: wait for more (peek returns
            // at once while those bytes sit unread).
            Ok(Ok(_)) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// After a failed accept: a caller that gave up before it was accepted
/// costs nothing; anything else (out of descriptors, most often) is logged
/// and waited out for a moment instead of spinning.
async fn pause_after(e: &std::io::Error, server: SocketAddr) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::warn!(%server, error = %e, "cannot accept a connection; trying again in 100 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
}


#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Serves a one-route app with `limits` on a loopback port.
    async fn start(limits: Limits) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<std::io::Result<()>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/", axum::routing::get(|| async { "up" }));
        let stop = CancellationToken::new();
        let task = tokio::spawn(serve(listener, app, None, limits, stop.clone()));
        (addr, stop, task)
    }

    fn limits(connections: usize, header_read: Duration) -> Limits {
        Limits { connections, header_read, handshake: Duration::from_secs(1), drain: Duration::from_millis(200) }
    }

    /// Sends one GET on `stream` and reads until the reply's body.
    async fn get(stream: &mut TcpStream) -> String {
        stream.write_all(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").await.unwrap();
        let mut reply = Vec::new();
        let mut buf = [0u8; 1024];
        while !reply.ends_with(b"up") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before the reply: {}", String::from_utf8_lossy(&reply));
            reply.extend_from_slice(&buf[..n]);
        }
        String::from_utf8(reply).unwrap()
    }

    #[tokio::test]
    async fn a_caller_that_sends_no_headers_is_closed() {
        let (addr, stop, task) = start(limits(8, Duration::from_millis(300))).await;
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        let mut kept_alive = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut kept_alive).await.starts_with("HTTP/1.1 200"));
        for stream in [&mut silent, &mut slow, &mut kept_alive] {
            let mut buf = [0u8; 256];
            let closed = tokio::time::timeout(Duration::from_secs(10), async {
                loop {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                }
            });
            closed.await.expect("the daemon closes a connection that sends no request");
        }
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn past_the_cap_callers_wait_for_a_free_connection() {
        let (addr, stop, task) = start(limits(2, Duration::from_secs(60))).await;
        let mut first = TcpStream::connect(addr).await.unwrap();
        let mut second = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut first).await.starts_with("HTTP/1.1 200"));
        assert!(get(&mut second).await.starts_with("HTTP/1.1 200"));
        // The kernel completes the third handshake; the daemon does not take
        // the connection until one of the two closes.
        let mut third = TcpStream::connect(addr).await.unwrap();
        third.write_all(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").await.unwrap();
        let mut buf = [0u8; 1024];
        assert!(tokio::time::timeout(Duration::from_millis(500), third.read(&mut buf)).await.is_err(), "a third connection was served beside two open ones");
        drop(first);
        let n = tokio::time::timeout(Duration::from_secs(10), third.read(&mut buf)).await.expect("served once a connection closed").unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        assert!(get(&mut second).await.starts_with("HTTP/1.1 200"), "an open connection keeps being served");
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn at_the_cap_a_caller_displaces_the_longest_silent_connection() {
        let (addr, stop, task) = start(limits(3, Duration::from_secs(60))).await;
        let mut active = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut active).await.starts_with("HTTP/1.1 200"));
        let mut oldest_silent = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut newer_silent = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut caller = TcpStream::connect(addr).await.unwrap();
        let served = tokio::time::timeout(Duration::from_secs(10), get(&mut caller)).await.expect("a new caller is served at the cap");
        assert!(served.starts_with("HTTP/1.1 200"));
        let mut buf = [0u8; 16];
        assert_eq!(tokio::time::timeout(Duration::from_secs(5), oldest_silent.read(&mut buf)).await.expect("the oldest silent connection is closed").unwrap_or(0), 0);
        assert!(tokio::time::timeout(Duration::from_millis(300), newer_silent.read(&mut buf)).await.is_err(), "only one silent connection made room");
        assert!(get(&mut active).await.starts_with("HTTP/1.1 200"), "a connection that sent a request is never displaced");
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[test]
    fn the_daemons_share_of_descriptors_is_bounded() {
        assert_eq!(Limits::for_daemon(2, 1024).connections, 384);
        assert_eq!(Limits::for_daemon(4, 256).connections, 32);
        assert_eq!(Limits::for_daemon(2, 1 << 20).connections, 4096);
    }
}
