//! The accept loop every HTTP listener runs, plain or TLS, with the limits
//! that keep one caller from starving the others.
//!
//! A local program (any user's) or a web page can open connections and
//! then send nothing, or send slowly. Each holds a file descriptor; enough
//! of them and the daemon could open no chain file and accept no client.
//! So each listener:
//!
//! - holds at most [`Limits::connections`] connections at once. A caller
//!   past that closes an *idle* connection: no request in flight (a
//!   request runs from its call until its reply is handed over, or a
//!   streamed reply ends, and while its body is read) and no reply waiting
//!   to be read. First goes the one that has waited longest without
//!   sending any request (silent, mid-handshake, part of a request's
//!   headers: a real client sends its request at once), else the one idle
//!   longest between requests (HTTP/1 keep-alive, HTTP/2 with no stream).
//!   A busy connection is never closed for room, so when every one is busy,
//!   new callers wait in the kernel's queue;
//! - asks a connection idle for [`Limits::idle`] to finish (HTTP/2 says
//!   GOAWAY) and drops it a second later if still idle, HTTP/1 or HTTP/2,
//!   plain or TLS (after the TLS handshake too). An HTTP/1 request is not
//!   in flight until its headers are whole, so headers sent slowly get no
//!   longer (hyper's `header_read_timeout`, without a timer armed for every
//!   request);
//! - gives a TLS handshake [`Limits::handshake`]; a request body
//!   [`Limits::body_stall`] between two of its chunks and
//!   [`Limits::body_total`] in all; a caller [`Limits::write_stall`] to
//!   read any of a reply waiting for it;
//! - on `stop`, stops accepting, asks every connection to finish (idle
//!   ones are dropped a second later), lets requests in flight finish for
//!   at most [`Limits::drain`] (event streams end by themselves on the
//!   daemon's shutdown token), then drops the rest.
//!
//! Each accepted connection's caller is looked up once ([`PeerUser`]) and
//! handed to the routes as `ConnectInfo<PeerUser>`.

use super::peer_user::PeerUser;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{ConnectInfo, Request};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// The limits one listener keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once.
    pub connections: usize,
    /// Time a connection may stay open with no request in flight.
    pub idle: Duration,
    /// Time to finish a TLS handshake.
    pub handshake: Duration,
    /// Time between two chunks of a request body.
    pub body_stall: Duration,
    /// Time a whole request body may take.
    pub body_total: Duration,
    /// Time a reply may wait for the caller to read any of it.
    pub write_stall: Duration,
    /// Time requests in flight get to finish after a stop.
    pub drain: Duration,
}

impl Limits {
    /// The daemon's limits, for `listeners` listeners sharing a budget of
    /// `descriptors` open files: each listener may hold a share of what is
    /// left after a quarter (at least 256) is kept for chain files, logs and
    /// outgoing calls, between 16 and 4,096 connections.
    pub fn for_daemon(listeners: usize, descriptors: u64) -> Limits {
        let kept = (descriptors / 4).max(256);
        let share = descriptors.saturating_sub(kept) / listeners.max(1) as u64;
        Limits {
            connections: share.clamp(16, 4096) as usize,
            idle: Duration::from_secs(30),
            handshake: Duration::from_secs(10),
            body_stall: Duration::from_secs(30),
            body_total: Duration::from_secs(300),
            write_stall: Duration::from_secs(60),
            drain: Duration::from_secs(30),
        }
    }
}

/// A TLS listener's configuration (rustls, ring).
pub type TlsConfig = Arc<rustls::ServerConfig>;

/// Serves `app` on `listener`, over TLS when `tls` is given, until `stop`.
pub async fn serve(listener: TcpListener, app: axum::Router, tls: Option<TlsConfig>, limits: Limits, stop: CancellationToken) -> std::io::Result<()> {
    let server = listener.local_addr()?;
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let mut http = auto::Builder::new(TokioExecutor::new());
    // No hyper header timer (it re-arms a timer for every request): a
    // connection sending headers slowly has no request in flight, so the
    // idle limit closes it.
    http.http2().timer(TokioTimer::new()).keep_alive_interval(Duration::from_secs(20)).keep_alive_timeout(Duration::from_secs(20));
    let open = Open { slots: Arc::new(Semaphore::new(limits.connections)), connections: Arc::default(), start: Instant::now() };
    let dropped = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    let mut failed_accepts = 0u32;
    while let Some((stream, peer)) = accept(&listener, &stop, &mut failed_accepts).await {
        let Some(slot) = open.make_room(&stop).await else { break };
        // Small replies (events, errors) go out at once.
        let _ = stream.set_nodelay(true);
        let activity = open.add(slot);
        let (app, http, tls, stop, dropped) = (app.clone(), http.clone(), tls.clone(), stop.clone(), dropped.clone());
        tasks.spawn(async move {
            let ends = Ends { stop, dropped, limits };
            let caller = ConnectInfo(PeerUser::of(peer, server));
            let app = tower::Layer::layer(&axum::Extension(caller), app);
            let service = TowerToHyperService::new(Tracked { app, activity: activity.clone(), body_stall: limits.body_stall, body_total: limits.body_total });
            let served = match tls {
                None => run(&http, TokioIo::new(Watched { io: stream, activity: activity.clone() }), service, &activity, &ends).await,
                Some(tls) => {
                    let handshake = tokio::select! {
                        done = tokio::time::timeout(limits.handshake, tls.accept(Watched { io: stream, activity: activity.clone() })) => done,
                        () = activity.evicted.cancelled() => return,
                        () = ends.stop.cancelled() => return,
                    };
                    match handshake {
                        Ok(Ok(stream)) => run(&http, TokioIo::new(stream), service, &activity, &ends).await,
                        Ok(Err(e)) => return tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => return tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            };
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
        // Finished connections' tasks, so the set does not grow.
        while tasks.try_join_next().is_some() {}
    }
    drop(listener);
    if tokio::time::timeout(limits.drain, async { while tasks.join_next().await.is_some() {} }).await.is_err() {
        tracing::info!(%server, open = tasks.len(), "requests still running after the drain time; closing their connections");
        dropped.cancel();
        tasks.shutdown().await;
    }
    Ok(())
}

/// The next accepted connection, or `None` once `stop` is cancelled.
async fn accept(listener: &TcpListener, stop: &CancellationToken, failed: &mut u32) -> Option<(tokio::net::TcpStream, SocketAddr)> {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => return None,
        };
        match accepted {
            Ok(accepted) => {
                *failed = 0;
                return Some(accepted);
            }
            // A caller that gave up before it was accepted costs nothing.
            Err(e) if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) => {}
            // Anything else (out of descriptors, most often) is logged once a
            // run of failures and waited out instead of spinning.
            Err(e) => {
                if *failed == 0 {
                    tracing::warn!(server = ?listener.local_addr().ok(), error = %e, "cannot accept connections; trying again every 100 ms");
                }
                *failed += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// A listener's open connections and its slots for more.
struct Open {
    slots: Arc<Semaphore>,
    connections: Arc<Mutex<Connections>>,
    start: Instant,
}

/// Each open connection's activity, by a number of its own (weak: a
/// connection leaves when its last holder drops its activity).
#[derive(Default)]
struct Connections {
    next: u64,
    open: HashMap<u64, Weak<Activity>>,
}

impl Open {
    /// A free slot; at the cap, an idle connection is closed to make one
    /// (see the module docs for which), or (none idle) the slot comes when
    /// a connection closes.
    /// `None` once `stop` is cancelled.
    async fn make_room(&self, stop: &CancellationToken) -> Option<OwnedSemaphorePermit> {
        loop {
            if let Ok(slot) = self.slots.clone().try_acquire_owned() {
                return Some(slot);
            }
            self.evict_longest_idle();
            tokio::select! {
                slot = self.slots.clone().acquire_owned() => return Some(slot.expect("the semaphore is never closed")),
                // An evicted connection may have started a request meanwhile: look again.
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
                () = stop.cancelled() => return None,
            }
        }
    }

    fn evict_longest_idle(&self) {
        // Taken out of the lock first: dropping the last hold of an
        // activity takes the lock again.
        let open: Vec<Arc<Activity>> = self.connections.lock().unwrap_or_else(|e| e.into_inner()).open.values().filter_map(Weak::upgrade).collect();
        // Those that never sent a request first (a real client sends at
        // once), then those idle between requests; the longest idle first.
        if open.iter().any(|a| a.evicted.is_cancelled() && a.idle_since().is_some()) {
            // One is on its way out.
            return;
        }
        let idlest = open.iter().filter(|a| !a.evicted.is_cancelled()).filter_map(|a| a.idle_since().map(|since| ((a.served.load(Ordering::Relaxed), since), a))).min_by_key(|(key, _)| *key);
        if let Some((_, activity)) = idlest {
            activity.evicted.cancel();
        }
    }

    /// Registers a new connection holding `slot`; it leaves when its
    /// activity is dropped.
    fn add(&self, slot: OwnedSemaphorePermit) -> Arc<Activity> {
        let mut connections = self.connections.lock().unwrap_or_else(|e| e.into_inner());
        let id = connections.next;
        connections.next += 1;
        let activity = Arc::new(Activity { in_flight: AtomicUsize::new(0), served: AtomicBool::new(false), last_write: AtomicU64::new(0), write_blocked_since: AtomicU64::new(0), idle_since: AtomicU64::new(0), start: self.start, evicted: CancellationToken::new(), leave: Some((id, self.connections.clone(), slot)) });
        activity.idle_since.store(activity.now(), Ordering::Relaxed);
        connections.open.insert(id, Arc::downgrade(&activity));
        activity
    }
}

/// What one connection is doing: shared by its task, its requests (while
/// they run) and the cap.
struct Activity {
    in_flight: AtomicUsize,
    /// Whether it has sent a request yet.
    served: AtomicBool,
    /// When its last request ended (or it was accepted), in milliseconds
    /// from `start`.
    idle_since: AtomicU64,
    /// When it last wrote to the caller, in milliseconds from `start`.
    last_write: AtomicU64,
    /// Since when a write has waited for the caller to read (milliseconds
    /// from `start`, plus one; 0: none waits).
    write_blocked_since: AtomicU64,
    start: Instant,
    /// Cancelled to close the connection for room (taken only while idle).
    evicted: CancellationToken,
    /// Its place in [`Connections`] and its slot, given back when it closes.
    leave: Option<(u64, Arc<Mutex<Connections>>, OwnedSemaphorePermit)>,
}

impl Activity {
    fn now(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn begin(&self) {
        self.served.store(true, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::SeqCst);
    }

    fn end(&self) {
        self.idle_since.store(self.now(), Ordering::SeqCst);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// Since when the connection has had nothing to do: no request in
    /// flight, no reply waiting to be read, nothing written (`None` while a
    /// request runs or a write waits).
    fn idle_since(&self) -> Option<u64> {
        let busy = self.in_flight.load(Ordering::SeqCst) > 0 || self.write_blocked_since.load(Ordering::SeqCst) > 0;
        (!busy).then(|| self.idle_since.load(Ordering::SeqCst).max(self.last_write.load(Ordering::SeqCst)))
    }

    /// Notes a write to the caller: done, or waiting for the caller to read.
    fn wrote(&self, waiting: bool) {
        if waiting {
            if self.write_blocked_since.load(Ordering::Relaxed) == 0 {
                self.write_blocked_since.store(self.now() + 1, Ordering::SeqCst);
            }
        } else {
            self.last_write.store(self.now(), Ordering::Relaxed);
            self.write_blocked_since.store(0, Ordering::SeqCst);
        }
    }

    /// How long a write has waited for the caller to read (zero if none).
    fn write_stalled_for(&self) -> Duration {
        match self.write_blocked_since.load(Ordering::SeqCst) {
            0 => Duration::ZERO,
            since => Duration::from_millis(self.now().saturating_sub(since - 1)),
        }
    }

    /// How long the connection has been idle (zero while a request runs).
    fn idle_for(&self) -> Duration {
        self.idle_since().map_or(Duration::ZERO, |since| Duration::from_millis(self.now().saturating_sub(since)))
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Some((id, connections, _slot)) = self.leave.take() {
            connections.lock().unwrap_or_else(|e| e.into_inner()).open.remove(&id);
        }
    }
}

/// How a connection may be told to end.
struct Ends {
    stop: CancellationToken,
    dropped: CancellationToken,
    limits: Limits,
}

/// Serves one connection until it ends, is idle too long, is evicted, or
/// the listener stops.
async fn run<I, S>(http: &auto::Builder<TokioExecutor>, io: I, service: S, activity: &Arc<Activity>, ends: &Ends) -> Result<(), Box<dyn std::error::Error + Send + Sync>>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::Service<Request<hyper::body::Incoming>, Response = axum::response::Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = http.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let limits = &ends.limits;
    // When the connection was asked to finish (HTTP/2 says GOAWAY); still
    // idle a second later, it is dropped.
    let mut asked: Option<Instant> = None;
    loop {
        // Looked at again when it would have been idle long enough, at
        // least every quarter of the idle time, and (idle) a second after
        // asking; not sooner while a request still runs after the ask.
        let mut check = Instant::now() + limits.idle.saturating_sub(activity.idle_for()).min(limits.idle / 4).max(Duration::from_millis(10));
        if let Some(at) = asked.filter(|_| activity.idle_since().is_some()) {
            check = check.min((at + GRACE).max(Instant::now() + Duration::from_millis(10)));
        }
        tokio::select! {
            biased;
            served = conn.as_mut() => return served,
            () = ends.dropped.cancelled() => return Ok(()),
            () = activity.evicted.cancelled(), if asked.is_none() => {
                if activity.idle_since().is_some() {
                    return Ok(());
                }
                asked = Some(Instant::now());
                conn.as_mut().graceful_shutdown();
            }
            () = ends.stop.cancelled(), if asked.is_none() => {
                asked = Some(Instant::now());
                conn.as_mut().graceful_shutdown();
            }
            () = tokio::time::sleep_until(check) => {
                if activity.write_stalled_for() >= limits.write_stall {
                    return Err(format!("the caller read nothing of its reply for {} s", limits.write_stall.as_secs()).into());
                }
                match asked {
                    Some(at) if at.elapsed() >= GRACE && activity.idle_since().is_some() => return Ok(()),
                    Some(_) => {}
                    None if activity.idle_for() >= limits.idle => {
                        asked = Some(Instant::now());
                        conn.as_mut().graceful_shutdown();
                    }
                    None => {}
                }
            }
        }
    }
}

/// How long a connection asked to finish may stay idle before it is dropped.
const GRACE: Duration = Duration::from_secs(1);

/// A connection's socket, noting each write in its [`Activity`] (a reply
/// is not idle while the caller still reads it).
struct Watched<T> {
    io: T,
    activity: Arc<Activity>,
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Watched<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Watched<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        self.activity.wrote(written.is_pending());
        written
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[std::io::IoSlice<'_>]) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.activity.wrote(written.is_pending());
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The routes of one connection, counting its requests in flight (from the
/// call until the reply is handed over to hyper, or a streamed reply's body
/// is dropped; and a request body until it ends; the socket wrapper
/// [`Watched`] covers the bytes still unsent) and bounding the wait for a
/// request body.
#[derive(Clone)]
struct Tracked<S> {
    app: S,
    activity: Arc<Activity>,
    body_stall: Duration,
    body_total: Duration,
}

impl<S> tower::Service<Request<hyper::body::Incoming>> for Tracked<S>
where
    S: tower::Service<Request, Response = axum::response::Response, Error = std::convert::Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<hyper::body::Incoming>) -> Self::Future {
        let running = Running::begin(self.activity.clone());
        let (stall, total) = (self.body_stall, self.body_total);
        // The body counts as a request in flight of its own while it is read,
        // even after the reply (`body_limit.rs` drains what a handler left).
        let reading = Some(Running::begin(self.activity.clone()));
        let request = request.map(|body| Body::new(StallGuard { body, stall, deadline: None, started: Instant::now(), ends: None, total, _reading: reading }));
        let reply = self.app.clone().oneshot(request);
        Box::pin(async move {
            let reply = reply.await?;
            // A reply whose body is all in memory is done once handed
            // over; one streamed (events, a backup) runs until it ends.
            if reply.body().size_hint().exact().is_some() {
                return Ok(reply);
            }
            Ok(reply.map(|body| Body::new(Replying { body, _running: running })))
        })
    }
}

/// One request in flight on a connection, until dropped.
struct Running(Arc<Activity>);

impl Running {
    fn begin(activity: Arc<Activity>) -> Running {
        activity.begin();
        Running(activity)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A reply's body, keeping its request counted until it is sent or dropped.
struct Replying {
    body: Body,
    _running: Running,
}

impl HttpBody for Replying {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A request body that fails when its next chunk takes longer than `stall`
/// (timed only while one is awaited: most bodies come with their headers).
struct StallGuard {
    body: hyper::body::Incoming,
    stall: Duration,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    started: Instant,
    /// When the whole body must have come (made when a chunk is first awaited).
    ends: Option<Pin<Box<tokio::time::Sleep>>>,
    total: Duration,
    /// The body counted in flight until its end, or until it is dropped.
    _reading: Option<Running>,
}

impl HttpBody for StallGuard {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                self.deadline = None;
                if frame.is_none() {
                    self._reading = None;
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let end = self.started + self.total;
                let ends = self.ends.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(end)));
                if std::future::Future::poll(ends.as_mut(), cx).is_ready() {
                    return Poll::Ready(Some(Err(format!("the request body took longer than {} s", self.total.as_secs()).into())));
                }
                let stall = self.stall;
                let deadline = self.deadline.get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
                match std::future::Future::poll(deadline.as_mut(), cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(format!("no part of the request body came within {} s", stall.as_secs()).into()))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Serves a small app with `limits` on a loopback port: `/` answers at
    /// once, `/wait` after a second, `/body` reads its body, `/who` names
    /// its caller.
    async fn start(limits: Limits) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<std::io::Result<()>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new()
            .route("/", axum::routing::get(|| async { "up" }))
            .route("/wait", axum::routing::get(|| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                "up"
            }))
            .route("/body", axum::routing::post(|body: Bytes| async move { format!("{} bytes up", body.len()) }))
            .route("/who", axum::routing::get(|ConnectInfo(who): ConnectInfo<PeerUser>| async move { format!("{who:?} up") }))
            .route("/big", axum::routing::get(|| async { format!("{}up", "x".repeat(8 << 20)) }))
            .route("/stream", axum::routing::get(|| async {
                let ticks = tokio_stream::StreamExt::map(tokio_stream::StreamExt::take(tokio_stream::wrappers::IntervalStream::new(tokio::time::interval(Duration::from_millis(500))), 4), |_| Ok::<_, std::convert::Infallible>(Bytes::from_static(b".")));
                Body::from_stream(tokio_stream::StreamExt::chain(ticks, tokio_stream::once(Ok(Bytes::from_static(b"up")))))
            }));
        let stop = CancellationToken::new();
        let task = tokio::spawn(serve(listener, app, None, limits, stop.clone()));
        (addr, stop, task)
    }

    fn limits(connections: usize, idle: Duration) -> Limits {
        Limits { connections, idle, handshake: Duration::from_secs(1), body_stall: Duration::from_millis(300), body_total: Duration::from_secs(60), write_stall: Duration::from_secs(5), drain: Duration::from_secs(5) }
    }

    /// Sends a GET of `path` on `stream`.
    async fn send(stream: &mut TcpStream, path: &str) {
        stream.write_all(format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n").as_bytes()).await.unwrap();
    }

    /// Reads until a reply's body ends in "up"; panics if the connection closes first.
    async fn reply(stream: &mut TcpStream) -> String {
        let mut reply = Vec::new();
        let mut buf = [0u8; 1024];
        while !reply.ends_with(b"up") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before the reply: {}", String::from_utf8_lossy(&reply));
            reply.extend_from_slice(&buf[..n]);
        }
        String::from_utf8(reply).unwrap()
    }

    async fn get(stream: &mut TcpStream, path: &str) -> String {
        send(stream, path).await;
        reply(stream).await
    }

    /// Whether the daemon closes `stream` within `within`.
    async fn closed_within(stream: &mut (impl tokio::io::AsyncRead + Unpin), within: Duration) -> bool {
        let mut buf = [0u8; 256];
        tokio::time::timeout(within, async {
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await
        .is_ok()
    }

    #[tokio::test]
    async fn idle_and_slow_connections_are_closed() {
        let (addr, stop, task) = start(limits(8, Duration::from_millis(300))).await;
        let mut silent = TcpStream::connect(addr).await.unwrap();
        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        let mut part_of_h2 = TcpStream::connect(addr).await.unwrap();
        part_of_h2.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
        let mut kept_alive = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut kept_alive, "/").await.starts_with("HTTP/1.1 200"));
        for stream in [&mut silent, &mut slow, &mut part_of_h2, &mut kept_alive] {
            assert!(closed_within(stream, Duration::from_secs(10)).await, "the daemon closes a connection with no request in flight");
        }
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_request_in_flight_keeps_its_connection_and_a_stalled_body_ends() {
        let (addr, stop, task) = start(limits(8, Duration::from_millis(300))).await;
        let mut waiting = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut waiting, "/wait").await.starts_with("HTTP/1.1 200"), "a request longer than the idle time is served");
        let mut stalled = TcpStream::connect(addr).await.unwrap();
        stalled.write_all(b"POST /body HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 100\r\n\r\nten bytes.").await.unwrap();
        let mut answer = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut answer)).await;
        assert!(ended.is_ok(), "a body that stops coming holds its connection");
        let mut who = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut who, "/who").await.starts_with("HTTP/1.1 200"), "every request knows its caller");
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn at_the_cap_a_caller_displaces_the_longest_idle_connection() {
        let (addr, stop, task) = start(limits(3, Duration::from_secs(60))).await;
        // All three have been served once; the first, idle longest, is busy again.
        let mut streams = Vec::new();
        for _ in 0..3 {
            let mut s = TcpStream::connect(addr).await.unwrap();
            assert!(get(&mut s, "/").await.starts_with("HTTP/1.1 200"));
            streams.push(s);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let [mut busy, mut oldest_idle, mut newer_idle] = <[TcpStream; 3]>::try_from(streams).unwrap();
        send(&mut busy, "/wait").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut caller = TcpStream::connect(addr).await.unwrap();
        let served = tokio::time::timeout(Duration::from_secs(10), get(&mut caller, "/")).await.expect("a new caller is served at the cap");
        assert!(served.starts_with("HTTP/1.1 200"));
        assert!(closed_within(&mut oldest_idle, Duration::from_secs(5)).await, "the longest-idle connection made room");
        assert!(!closed_within(&mut newer_idle, Duration::from_millis(300)).await, "only one connection made room");
        assert!(reply(&mut busy).await.starts_with("HTTP/1.1 200"), "a connection serving a request is never closed for room");
        assert!(get(&mut busy, "/").await.starts_with("HTTP/1.1 200"), "nor asked to close after it");
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_reply_still_read_or_streamed_keeps_its_connection() {
        let (addr, stop, task) = start(limits(8, Duration::from_millis(300))).await;
        let mut streamed = TcpStream::connect(addr).await.unwrap();
        send(&mut streamed, "/stream").await;
        let mut body = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), async {
            let mut buf = [0u8; 1024];
            // Chunked: four one-byte chunks 500 ms apart, "up", then the last chunk.
            while !body.ends_with(b"up\r\n0\r\n\r\n") {
                let n = streamed.read(&mut buf).await.unwrap();
                assert!(n > 0, "closed mid-stream: {}", String::from_utf8_lossy(&body));
                body.extend_from_slice(&buf[..n]);
            }
        })
        .await
        .expect("a streamed reply longer than the idle time ends");
        assert_eq!(String::from_utf8_lossy(&body).matches("\r\n.\r\n").count(), 4);
        let mut slow_reader = TcpStream::connect(addr).await.unwrap();
        send(&mut slow_reader, "/big").await;
        // Reads nothing for longer than the idle time and the grace after it, then all of it.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let mut all = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), async {
            let mut buf = vec![0u8; 1 << 16];
            while !all.ends_with(b"up") {
                let n = slow_reader.read(&mut buf).await.unwrap();
                assert!(n > 0, "closed after {} bytes of an 8 MiB reply", all.len());
                all.extend_from_slice(&buf[..n]);
            }
        })
        .await
        .expect("the whole reply came");
        assert!(all.len() > 8 << 20);
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn at_the_cap_silent_connections_go_before_kept_alive_ones() {
        let (addr, stop, task) = start(limits(2, Duration::from_secs(60))).await;
        let mut kept_alive = TcpStream::connect(addr).await.unwrap();
        assert!(get(&mut kept_alive, "/").await.starts_with("HTTP/1.1 200"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut silent = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut caller = TcpStream::connect(addr).await.unwrap();
        assert!(tokio::time::timeout(Duration::from_secs(10), get(&mut caller, "/")).await.expect("served at the cap").starts_with("HTTP/1.1 200"));
        assert!(closed_within(&mut silent, Duration::from_secs(5)).await, "the silent connection made room");
        assert!(get(&mut kept_alive, "/").await.starts_with("HTTP/1.1 200"), "the client between requests kept its connection");
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn when_every_connection_is_busy_a_caller_waits_for_one() {
        let (addr, stop, task) = start(limits(2, Duration::from_secs(60))).await;
        let mut first = TcpStream::connect(addr).await.unwrap();
        let mut second = TcpStream::connect(addr).await.unwrap();
        send(&mut first, "/wait").await;
        send(&mut second, "/wait").await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut third = TcpStream::connect(addr).await.unwrap();
        send(&mut third, "/").await;
        let mut buf = [0u8; 64];
        assert!(tokio::time::timeout(Duration::from_millis(400), third.read(&mut buf)).await.is_err(), "a third connection was served beside two busy ones");
        let served = tokio::time::timeout(Duration::from_secs(10), reply(&mut third)).await.expect("served once a connection fell idle");
        assert!(served.starts_with("HTTP/1.1 200"));
        for busy in [&mut first, &mut second] {
            assert!(reply(busy).await.starts_with("HTTP/1.1 200"), "both busy requests were answered");
        }
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_stop_lets_requests_in_flight_finish() {
        let (addr, stop, task) = start(limits(8, Duration::from_secs(60))).await;
        let mut busy = TcpStream::connect(addr).await.unwrap();
        send(&mut busy, "/wait").await;
        let mut idle = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        stop.cancel();
        assert!(closed_within(&mut idle, Duration::from_millis(500)).await, "an idle connection closes at once on a stop");
        assert!(reply(&mut busy).await.starts_with("HTTP/1.1 200"), "the request in flight was answered");
        task.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_tls_connection_silent_after_its_handshake_is_closed() {
        use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName};
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        crate::infra::tls_cert::ensure(&cert, &key).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/", axum::routing::get(|| async { "up" }));
        let stop = CancellationToken::new();
        let task = tokio::spawn(serve(listener, app, Some(crate::daemon::tls_config(&cert, &key).unwrap()), limits(8, Duration::from_millis(300)), stop.clone()));
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from_pem_file(&cert).unwrap()).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider())).with_safe_default_protocol_versions().unwrap().with_root_certificates(roots).with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
        let connect = || async { connector.connect(ServerName::try_from("localhost").unwrap(), TcpStream::connect(addr).await.unwrap()).await.expect("TLS handshake") };
        let mut asking = connect().await;
        asking.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\n\r\n").await.unwrap();
        let mut reply = [0u8; 512];
        let n = asking.read(&mut reply).await.unwrap();
        assert!(reply[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&reply[..n]));
        let mut silent = connect().await;
        assert!(closed_within(&mut silent, Duration::from_secs(10)).await, "a TLS connection with no request after its handshake is closed");
        stop.cancel();
        task.await.unwrap().unwrap();
    }

    #[test]
    fn the_daemons_share_of_descriptors_is_bounded() {
        assert_eq!(Limits::for_daemon(2, 1024).connections, 384);
        assert_eq!(Limits::for_daemon(4, 256).connections, 16);
        assert_eq!(Limits::for_daemon(2, 1 << 20).connections, 4096);
    }
}
