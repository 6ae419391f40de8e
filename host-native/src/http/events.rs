//! `GET /v1/events`: appended thoughts as Server-Sent Events, for the
//! explorer's live timeline and any other client.
//!
//! Contract:
//! - Query: `chain_key=K` (one chain) or `chain_keys=K1,K2` (several, at most
//!   256); with
//!   neither, every chain the caller's token may read (chains created later
//!   included). Naming a chain the token does not cover is 403.
//! - First event `ready`, data `{"chains": {"<key>": <next_index>, ...}}`:
//!   where the stream starts (chains at 0 are left out). Then one `thought`
//!   event per appended thought, data `{"chain_key", "thought"}` (the thought
//!   as `mentisdb_get_thought` returns it), in index order within a chain;
//!   `chain_deleted`, data `{"chain_key"}`; and `lagged`, data
//!   `{"missed": n}`, when the stream fell behind (a client may re-read its
//!   views; the stream itself goes on without a gap).
//! - Coordination events (docs/agents.md "Coordination events"): a claim,
//!   fact or review record is also sent as `claim_acquired`,
//!   `claim_released`, `fact_recorded`, `fact_closed`, `review_requested` or
//!   `review_decided`, just before its `thought` event and without an `id:`
//!   (so resuming from the thought's cursor never repeats or drops it);
//!   `claim_expired` (from a 250 ms timer over the chains in memory) and
//!   `presence_updated` (a heartbeat) are live only: not resent on resume.
//! - Every `thought` event's `id:` is an opaque cursor ([`EventCursor`]); reconnecting
//!   with `Last-Event-ID: <id>` resumes after that event with no gap and no
//!   repeat, even across a daemon restart (the chains are the log).
//! - A slow reader never slows appends: the engine's observer only sends a
//!   small signal into a bounded broadcast channel; a reader that falls more
//!   than [`SIGNAL_BUFFER`] signals behind is told `lagged` and catches up by
//!   reading the chains from its cursor.
//! - Comment lines (`:`) every 15 s keep idle connections open.
//! - Every stream ends when the daemon stops (it never holds up a shutdown).

use crate::http::api_error::ApiError;
use crate::tokens::Identity;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use mentisdb_core::events::{self, coordination_event, CoordinationEvent, EventCursor};
use mentisdb_core::presence::Presence;
use mentisdb_core::{AppendObserver, MentisDb, Thought};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

/// Where `GET` opens an event stream.
pub const EVENTS_PATH: &str = "/v1/events";
/// Signals a stream may fall behind before it is told `lagged`.
pub const SIGNAL_BUFFER: usize = 4096;
/// Events a stream holds for a slow client before it stops reading signals.
const EVENT_BUFFER: usize = 64;
/// Thoughts read from a chain at a time while catching up.
const CATCH_UP_CHUNK: usize = 256;

/// What the engine tells the streams: small, so sending never waits.
#[derive(Debug, Clone)]
enum Signal {
    /// Every thought of the chain up to `index` is durable; `data` is the
    /// `thought` event's data for that index, serialized once for every
    /// stream, and `coordination` the coordination event it also is, if any.
    Appended { chain_key: Arc<str>, index: u64, data: Arc<str>, coordination: Option<Live> },
    Deleted(Arc<str>),
    /// A coordination event that is not a thought (`claim_expired`, `presence_updated`).
    Live(Live),
}

/// A coordination event as streams send it: name, chain and serialized data.
#[derive(Debug, Clone)]
struct Live {
    name: &'static str,
    chain_key: Arc<str>,
    data: Arc<str>,
}

impl Live {
    fn of(e: CoordinationEvent) -> Live {
        let chain_key = e.data["chain_key"].as_str().unwrap_or_default().into();
        Live { name: e.name, chain_key, data: e.data.to_string().into() }
    }
}

/// The data of a `thought` event.
#[derive(serde::Serialize)]
struct ThoughtEvent<'a> {
    chain_key: &'a str,
    thought: &'a Thought,
}

fn thought_data(chain_key: &str, thought: &Thought) -> String {
    serde_json::to_string(&ThoughtEvent { chain_key, thought }).expect("a thought serializes")
}

/// The engine's observer feeding every open stream.
#[derive(Debug, Clone)]
pub struct EventHub {
    signals: broadcast::Sender<Signal>,
    /// Ends every stream (the daemon is stopping: open streams must not
    /// hold its graceful shutdown).
    shutdown: CancellationToken,
}

impl EventHub {
    /// A hub registered with `db`: from now on every durable thought is
    /// signalled; every stream ends when `shutdown` fires.
    pub fn attach(db: &MentisDb, shutdown: CancellationToken) -> Arc<EventHub> {
        Self::attach_with_buffer(db, SIGNAL_BUFFER, shutdown)
    }

    /// [`EventHub::attach`] with a signal buffer of `signals` (tests make it small).
    pub fn attach_with_buffer(db: &MentisDb, signals: usize, shutdown: CancellationToken) -> Arc<EventHub> {
        let hub = Arc::new(EventHub { signals: broadcast::channel(signals).0, shutdown });
        db.add_observer(hub.clone());
        hub
    }
}

impl AppendObserver for EventHub {
    fn appended(&self, chain_key: &str, thought: &Thought) {
        // Nobody listening: nothing to serialize or send.
        if self.signals.receiver_count() == 0 {
            return;
        }
        let data = thought_data(chain_key, thought).into();
        let coordination = coordination_event(chain_key, thought).map(Live::of);
        let _ = self.signals.send(Signal::Appended { chain_key: chain_key.into(), index: thought.index, data, coordination });
    }

    fn chain_deleted(&self, chain_key: &str) {
        let _ = self.signals.send(Signal::Deleted(chain_key.into()));
    }

    fn presence_updated(&self, presence: &Presence) {
        if self.signals.receiver_count() > 0 {
            let _ = self.signals.send(Signal::Live(Live::of(events::presence_updated(presence))));
        }
    }
}

impl EventHub {
    /// Announces `claim_expired` for every lease of a chain in memory
    /// that runs out from now on, checking every `every` until `shutdown`.
    /// (Expiry needs no writer: a lease past its deadline is free; this only
    /// tells the streams.)
    pub async fn announce_expired_claims(self: Arc<Self>, db: Arc<MentisDb>, every: std::time::Duration) {
        let mut from = db.now_millis();
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            let to = db.now_millis();
            if to <= from || self.signals.receiver_count() == 0 {
                from = from.max(to);
                continue;
            }
            for (chain_key, lease) in db.leases_expired_between(from, to) {
                let _ = self.signals.send(Signal::Live(Live::of(events::claim_expired(&chain_key, &lease))));
            }
            from = to;
        }
    }
}

/// Which chains a stream follows.
#[derive(Debug, Clone)]
enum Follow {
    Named(BTreeSet<String>),
    /// Every chain the identity may read.
    All,
}

fn may_read(who: &Identity, key: &str) -> bool {
    match who {
        Identity::Open => true,
        Identity::Token(token) => token.covers(key),
    }
}

impl Follow {
    fn includes(&self, who: &Identity, key: &str) -> bool {
        may_read(who, key)
            && match self {
                Follow::Named(keys) => keys.contains(key),
                Follow::All => true,
            }
    }

    fn chains(&self, db: &MentisDb, who: &Identity) -> Vec<String> {
        match self {
            Follow::Named(keys) => keys.iter().cloned().collect(),
            Follow::All => db.chain_keys().into_iter().filter(|k| may_read(who, k)).collect(),
        }
    }
}

/// One open stream: what it follows, where it stands, and where events go.
struct Stream {
    db: Arc<MentisDb>,
    who: Identity,
    follow: Follow,
    cursor: EventCursor,
    out: mpsc::Sender<Result<Event, Infallible>>,
}

/// The client went away.
struct Gone;

impl Stream {
    async fn send(&self, name: &str, data: serde_json::Value) -> Result<(), Gone> {
        self.send_text(name, &data.to_string()).await
    }

    async fn send_text(&self, name: &str, data: &str) -> Result<(), Gone> {
        let event = Event::default().event(name).id(self.cursor.render()).data(data);
        self.out.send(Ok(event)).await.map_err(|_| Gone)
    }

    /// A coordination event. It carries no `id:`: a thought's is sent just
    /// before the thought itself, so a client resuming from the thought's
    /// cursor has it, and one cut off between the two gets both again.
    async fn send_live(&self, live: &Live) -> Result<(), Gone> {
        let event = Event::default().event(live.name).data(&*live.data);
        self.out.send(Ok(event)).await.map_err(|_| Gone)
    }

    /// Sends chain `key`'s thoughts from the cursor up to index `until`
    /// (exclusive), in order, advancing the cursor with each.
    async fn send_thoughts(&mut self, key: &str, until: u64) -> Result<(), Gone> {
        loop {
            let from = self.cursor.next_index(key).unwrap_or(0);
            if from >= until {
                return Ok(());
            }
            let thoughts = self.db.thoughts_in(key, from, until, CATCH_UP_CHUNK).unwrap_or_default();
            if thoughts.is_empty() {
                return Ok(());
            }
            for thought in thoughts {
                if let Some(e) = coordination_event(key, &thought) {
                    self.send_live(&Live::of(e)).await?;
                }
                self.cursor.advance(key, thought.index + 1);
                self.send_text("thought", &thought_data(key, &thought)).await?;
            }
        }
    }

    /// Sends what every followed chain holds past the cursor.
    async fn catch_up(&mut self) -> Result<(), Gone> {
        for key in self.follow.chains(&self.db, &self.who) {
            self.send_thoughts(&key, u64::MAX).await?;
        }
        Ok(())
    }

    async fn run(mut self, mut signals: broadcast::Receiver<Signal>, resumed: bool) -> Result<(), Gone> {
        let chains: BTreeMap<String, u64> = self.cursor.chains().filter(|(_, n)| *n > 0).map(|(k, n)| (k.to_string(), n)).collect();
        self.send("ready", json!({ "chains": chains })).await?;
        if resumed {
            self.catch_up().await?;
        }
        loop {
            match signals.recv().await {
                Ok(Signal::Appended { chain_key, index, data, coordination }) if self.follow.includes(&self.who, &chain_key) => {
                    // The usual case, the next thought in order: sent as serialized once.
                    if self.cursor.next_index(&chain_key).unwrap_or(0) == index {
                        if let Some(live) = &coordination {
                            self.send_live(live).await?;
                        }
                        self.cursor.advance(&chain_key, index + 1);
                        self.send_text("thought", &data).await?;
                    } else {
                        self.send_thoughts(&chain_key, index + 1).await?;
                    }
                }
                Ok(Signal::Deleted(chain_key)) if self.follow.includes(&self.who, &chain_key) => {
                    self.cursor.remove(&chain_key);
                    self.send("chain_deleted", json!({ "chain_key": &*chain_key })).await?;
                }
                Ok(Signal::Live(live)) if self.follow.includes(&self.who, &live.chain_key) => self.send_live(&live).await?,
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    self.send("lagged", json!({ "missed": missed })).await?;
                    self.catch_up().await?;
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            }
        }
    }
}

/// What the event stream reads: the engine and the hub of its appends
/// (taken from the REST router's state).
#[derive(Clone)]
pub struct EventsState {
    pub db: Arc<MentisDb>,
    pub events: Arc<EventHub>,
}

/// `GET /v1/events`: see the module docs.
pub async fn events(
    State(st): State<EventsState>,
    Extension(who): Extension<Identity>,
    headers: HeaderMap,
    query: Result<Query<BTreeMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query?;
    let named: BTreeSet<String> = query
        .get("chain_key")
        .into_iter()
        .chain(query.get("chain_keys"))
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect();
    if named.len() > mentisdb_core::limits::MAX_LIST_ITEMS {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, format!("chain_keys names {} chains; the limit is {} (omit it to follow every chain)", named.len(), mentisdb_core::limits::MAX_LIST_ITEMS)));
    }
    if let Some(unknown) = query.keys().find(|k| !matches!(k.as_str(), "chain_key" | "chain_keys")) {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, format!("unknown query parameter '{unknown}'; use chain_key or chain_keys")));
    }
    for key in &named {
        mentisdb_core::limits::check_key("chain_key", key).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
        if let Identity::Token(token) = &who {
            if !token.covers(key) {
                return Err(ApiError::new(StatusCode::FORBIDDEN, format!("token '{}' lacks scope 'read' for chain '{key}' (the event stream needs read)", token.name)));
            }
        }
    }
    let follow = if named.is_empty() { Follow::All } else { Follow::Named(named) };
    let resume = headers.get("last-event-id").map(|v| v.to_str().unwrap_or_default().to_string());
    let hub = st.events.clone();
    // Subscribe before reading where the chains stand: nothing falls between.
    let signals = hub.signals.subscribe();
    let mut cursor = match &resume {
        Some(text) => EventCursor::parse(text).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?,
        None => {
            let mut cursor = EventCursor::default();
            for key in follow.chains(&st.db, &who) {
                cursor.advance(&key, st.db.thought_count(&key).unwrap_or(0));
            }
            cursor
        }
    };
    cursor.retain(|k| follow.includes(&who, k));
    let (out, events) = mpsc::channel(EVENT_BUFFER);
    let stream = Stream { db: st.db.clone(), who, follow, cursor, out };
    let shutdown = hub.shutdown.clone();
    tokio::spawn(async move {
        // Dropping the stream on shutdown ends the response, even while it
        // waits on a client that does not read.
        tokio::select! {
            () = shutdown.cancelled() => {}
            _ = stream.run(signals, resume.is_some()) => {}
        }
    });
    Ok(Sse::new(ReceiverStream::new(events)).keep_alive(KeepAlive::default()).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, SequentialIds};

    fn engine() -> Arc<MentisDb> {
        let clock = Arc::new(FixedClock::new(1_800_000_000_000, 1));
        Arc::new(MentisDb::open(Arc::new(MemoryStorage::new()), clock, Arc::new(SequentialIds::default()), DbConfig::default()).unwrap().0)
    }

    fn append(db: &MentisDb, key: &str, n: usize) {
        db.call("mentisdb_append", json!({"chain_key": key, "thought_type": "Idea", "content": format!("thought {n}")})).unwrap();
    }

    /// The event name and data of what a stream sent (the SSE text of each event).
    fn drain(events: &mut mpsc::Receiver<Result<Event, Infallible>>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(Ok(event)) = events.try_recv() {
            // `Event` only shows itself through its wire form.
            let text = format!("{event:?}");
            let name = text.split("event: ").nth(1).and_then(|r| r.split('\\').next()).unwrap_or("?").to_string();
            let index = text.split("\\\"index\\\":").nth(1).and_then(|r| r.split(',').next()).map(|i| format!(" {i}")).unwrap_or_default();
            out.push(format!("{name}{index}"));
        }
        out
    }

    #[tokio::test]
    async fn a_reader_that_fell_behind_is_told_and_catches_up_without_a_gap_while_appends_never_waited() {
        let db = engine();
        let hub = EventHub::attach_with_buffer(&db, 4, CancellationToken::new());
        let signals = hub.signals.subscribe();
        let (out, mut events) = mpsc::channel(1000);
        let stream = Stream { db: db.clone(), who: Identity::Open, follow: Follow::Named(["c".to_string()].into()), cursor: EventCursor::default(), out };
        // Twenty appends while nobody reads the stream: none of them waits.
        for n in 0..20 {
            append(&db, "c", n);
        }
        let task = tokio::spawn(stream.run(signals, false));
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let seen = drain(&mut events);
        assert_eq!(seen[0], "ready");
        assert_eq!(seen[1], "lagged");
        let indexes: Vec<String> = seen[2..].to_vec();
        assert_eq!(indexes, (0..20).map(|i| format!("thought {i}")).collect::<Vec<_>>(), "every thought once, in order: {seen:?}");
        // The stream goes on live after catching up.
        append(&db, "c", 20);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(drain(&mut events), ["thought 20"]);
        task.abort();
    }
}
