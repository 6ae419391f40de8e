//! Webhook delivery: the daemon POSTs each appended thought to every
//! webhook that wants it (`mentisdb_core::webhooks` holds the registry,
//! cursors and payload).
//!
//! Contract:
//! - One worker per webhook delivers its pending thoughts (each chain's,
//!   from its cursor on) in index order within a chain. An append only wakes
//!   the workers; it never waits for a delivery.
//! - A delivery is `POST url` with the JSON payload, `X-MentisDB-Event:
//!   thought.appended`, `X-MentisDB-Delivery: <webhook id>:<index>:<chain>`
//!   (the same on every retry) and `X-MentisDB-Signature: sha256=<hex
//!   HMAC-SHA256 of the body with the webhook's secret>`. A 2xx answer
//!   acknowledges it: the cursor moves past it and is written durably. Any
//!   other answer, a timeout (5 s) or a refused connection is retried after
//!   `MENTISDB_WEBHOOK_RETRY_BASE_MS` (1 s), doubling up to
//!   `MENTISDB_WEBHOOK_RETRY_MAX_SECS` (300 s), until it succeeds or the
//!   webhook is deleted; later thoughts of that webhook wait (order is kept).
//! - Pending deliveries survive a restart: they are the chain's thoughts past
//!   the cursor. At least once: a delivery acknowledged just before a crash
//!   may be sent again; receivers drop repeats by `X-MentisDB-Delivery`.
//! - Targets (0.10.10's rule against server-side request forgery): http or
//!   https only; no `localhost`; no loopback, private, link-local, CGNAT,
//!   multicast, documentation or reserved address, unless inside
//!   `MENTISDB_WEBHOOK_ALLOWED_CIDRS`; every IANA special-purpose range,
//!   0.0.0.0/8 and the IPv4-mapped, -compatible and -translated IPv6 forms of
//!   refused IPv4 addresses are refused too. Checked at registration, and at
//!   each connection by the delivery client's own resolver
//!   ([`PinnedResolver`]): a host name is resolved once, refused when any of
//!   its addresses is, and the connection goes to exactly the checked
//!   addresses, so a name that flips to 127.0.0.1 after the check (DNS
//!   rebinding) never reaches it. Redirects are not followed and no proxy
//!   from the environment is used (a proxy would resolve the name itself).
//! - Live coordination events (`presence_updated`, `claim_expired`; see
//!   docs/agents.md "Coordination events") are not thoughts, so no cursor
//!   keeps them: each is POSTed once to every webhook that wants its chain
//!   and filters no thought types, with `X-MentisDB-Event: <event>`, a
//!   delivery id of its own, and up to [`LIVE_ATTEMPTS`] attempts; it is
//!   not sent again after a restart. A heartbeat is announced by the daemon
//!   that took it; an expiry by the daemon that delivers (all see it).
//! - Several daemons on one PostgreSQL database: only the daemon holding
//!   the delivery lease (an advisory lock, `MayDeliver`) delivers; it reads
//!   the registry (with its cursors) again when it takes the lease, and
//!   every daemon reads it again when another one rewrites it. When the
//!   holder stops or dies, another takes the lease within about a second
//!   and goes on from the stored cursors.
//!
//! This file delivers; `url_policy.rs` holds the rule on targets
//! ([`UrlPolicy`], [`PinnedResolver`]).

mod url_policy;

pub use url_policy::{system_lookup, Lookup, PinnedResolver, UrlPolicy};

use mentisdb_core::webhooks::{delivery_id, DeliveryTarget, WebhookTargets};
use mentisdb_core::events::{self, CoordinationEvent};
use mentisdb_core::presence::Presence;
use mentisdb_core::{AppendObserver, MentisDb, Thought};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long one delivery attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// Thoughts read from a chain at a time.
const BATCH: usize = 64;
/// How often workers look for pending deliveries without being woken
/// (thoughts another daemon appended on a shared store, missed wake-ups).
const RESCAN: Duration = Duration::from_secs(5);

/// Why webhooks cannot be set up, or why one delivery attempt failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// An entry of MENTISDB_WEBHOOK_ALLOWED_CIDRS is not a network.
    #[error("MENTISDB_WEBHOOK_ALLOWED_CIDRS: '{0}' is not a CIDR or an IP address")]
    NotCidr(String),
    /// An entry of MENTISDB_WEBHOOK_ALLOWED_CIDRS is broader than a /8.
    #[error("MENTISDB_WEBHOOK_ALLOWED_CIDRS: '{0}' is broader than /{min}", min = url_policy::MIN_PREFIX)]
    TooBroad(String),
    /// The delivery client cannot be built.
    #[error("webhook HTTP client: {0}")]
    Client(reqwest::Error),
    /// A registered URL does not parse (any more).
    #[error("{0}")]
    BadUrl(url::ParseError),
    /// The URL rule refuses the target.
    #[error("{0}")]
    Refused(String),
    /// The request got no answer (the error without the URL, which may hold a secret).
    #[error("request failed: {0}")]
    Request(reqwest::Error),
    /// The receiver answered, but not 2xx.
    #[error("receiver answered {0}")]
    Status(reqwest::StatusCode),
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` keyed with `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
    format!("sha256={}", hex::encode(ring::hmac::sign(&key, body).as_ref()))
}

/// Retry timing of failed deliveries.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The wait after the `failures`-th failed attempt in a row (1-based).
    pub fn after(&self, failures: u32) -> Duration {
        self.base.saturating_mul(1u32 << failures.saturating_sub(1).min(20)).min(self.max)
    }
}

/// Whether this daemon may deliver now: always on files, while it holds
/// the delivery lease on PostgreSQL.
pub type MayDeliver = Arc<dyn Fn() -> bool + Send + Sync>;

/// How often a daemon without the delivery lease looks again.
const LEASE_CHECK: Duration = Duration::from_secs(1);
/// Attempts at one live event before it is dropped.
pub const LIVE_ATTEMPTS: u32 = 3;
/// Live event deliveries in flight at once (all webhooks); past it new
/// live events are dropped (a dead receiver and frequent heartbeats must
/// not pile up tasks and connections).
pub const MAX_LIVE_IN_FLIGHT: usize = 64;
/// How often the delivering daemon looks for leases that ran out.
const EXPIRY_CHECK: Duration = Duration::from_millis(250);

/// Wakes the workers on appends, remembers deleted chains, and queues live events.
#[derive(Default)]
struct Wake {
    notify: Notify,
    deleted: Mutex<Vec<String>>,
    live: Mutex<Vec<CoordinationEvent>>,
}

impl AppendObserver for Wake {
    fn appended(&self, _chain_key: &str, _thought: &Thought) {
        self.notify.notify_one();
    }

    fn chain_deleted(&self, chain_key: &str) {
        self.deleted.lock().unwrap_or_else(|e| e.into_inner()).push(chain_key.to_string());
        self.notify.notify_one();
    }

    fn presence_updated(&self, presence: &Presence) {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).push(events::presence_updated(presence));
        self.notify.notify_one();
    }
}

/// The delivering side of webhooks, shared by its workers.
struct Deliverer {
    db: Arc<MentisDb>,
    /// Live event deliveries running now (at most [`MAX_LIVE_IN_FLIGHT`]).
    live_in_flight: std::sync::atomic::AtomicUsize,
    policy: UrlPolicy,
    client: reqwest::Client,
    backoff: Backoff,
    may_deliver: MayDeliver,
    shutdown: CancellationToken,
}

/// Installs the URL check on `db`'s webhook registry and starts delivering
/// until `shutdown`.
pub fn start(db: Arc<MentisDb>, policy: UrlPolicy, backoff: Backoff, may_deliver: MayDeliver, shutdown: CancellationToken) -> Result<(), WebhookError> {
    start_with_lookup(db, policy, backoff, may_deliver, shutdown, system_lookup())
}

/// [`start`] resolving host names with `lookup` (tests: a name whose answer changes).
pub fn start_with_lookup(db: Arc<MentisDb>, policy: UrlPolicy, backoff: Backoff, may_deliver: MayDeliver, shutdown: CancellationToken, lookup: Lookup) -> Result<(), WebhookError> {
    db.webhooks().set_targets(Some(Arc::new(policy.clone())));
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(Arc::new(PinnedResolver::new(policy.clone(), lookup)))
        .timeout(ATTEMPT_TIMEOUT)
        .user_agent(concat!("mentisdbd/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(WebhookError::Client)?;
    let wake = Arc::new(Wake::default());
    db.add_observer(wake.clone());
    let deliverer = Arc::new(Deliverer { db, live_in_flight: Default::default(), policy, client, backoff, may_deliver, shutdown });
    tokio::spawn(watch_expiries(deliverer.clone(), wake.clone()));
    tokio::spawn(manage(deliverer, wake));
    Ok(())
}

/// On the delivering daemon, queues `claim_expired` for every lease that
/// runs out (of the chains in memory) while some webhook is registered.
async fn watch_expiries(d: Arc<Deliverer>, wake: Arc<Wake>) {
    let mut from = d.db.now_millis();
    loop {
        tokio::select! {
            () = d.shutdown.cancelled() => return,
            () = tokio::time::sleep(EXPIRY_CHECK) => {}
        }
        let to = d.db.now_millis();
        if to > from && (d.may_deliver)() && !d.db.webhooks().list().is_empty() {
            let expired: Vec<CoordinationEvent> = d.db.leases_expired_between(from, to).iter().map(|(chain, lease)| events::claim_expired(chain, lease)).collect();
            if !expired.is_empty() {
                wake.live.lock().unwrap_or_else(|e| e.into_inner()).extend(expired);
                wake.notify.notify_one();
            }
        }
        from = from.max(to);
    }
}

/// Keeps one worker running for each webhook with pending deliveries.
async fn manage(d: Arc<Deliverer>, wake: Arc<Wake>) {
    let mut workers: std::collections::BTreeMap<String, tokio::task::JoinHandle<()>> = Default::default();
    let mut delivering = false;
    loop {
        let deleted: Vec<String> = std::mem::take(&mut *wake.deleted.lock().unwrap_or_else(|e| e.into_inner()));
        for chain in deleted {
            let db = d.db.clone();
            let forgotten = tokio::task::spawn_blocking(move || db.webhooks().forget_chain(db.storage(), &chain)).await;
            if let Ok(Err(e)) = forgotten {
                tracing::warn!(target: "mentisdb::webhooks", error = %e, "cannot reset webhook cursors of a deleted chain");
            }
        }
        let live: Vec<CoordinationEvent> = std::mem::take(&mut *wake.live.lock().unwrap_or_else(|e| e.into_inner()));
        for event in live {
            let chain = event.data["chain_key"].as_str().unwrap_or_default().to_string();
            for target in d.db.webhooks().targets().into_iter().filter(|t| t.webhook.wants_chain(&chain) && t.webhook.thought_type_filter.is_none()) {
                if d.live_in_flight.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= MAX_LIVE_IN_FLIGHT {
                    d.live_in_flight.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    tracing::warn!(target: "mentisdb::webhooks", webhook = %target.webhook.id, event = event.name, "live event dropped: {MAX_LIVE_IN_FLIGHT} live deliveries are in flight");
                    continue;
                }
                tokio::spawn(d.clone().deliver_live(target, event.clone()));
            }
        }
        workers.retain(|_, handle| !handle.is_finished());
        let allowed = (d.may_deliver)();
        if allowed && !delivering {
            // Just took the lease: the cursors are the stored ones, whoever wrote them.
            let db = d.db.clone();
            if let Ok(Err(e)) = tokio::task::spawn_blocking(move || db.webhooks().reload(db.storage())).await {
                tracing::warn!(target: "mentisdb::webhooks", error = %e, "cannot read the webhook registry; delivering from what this daemon holds");
            }
            tracing::info!(target: "mentisdb::webhooks", "this daemon delivers webhooks now");
        }
        delivering = allowed;
        if allowed {
            for target in d.db.webhooks().targets() {
                if !workers.contains_key(&target.webhook.id) && pending(&d.db, &target).is_some() {
                    let id = target.webhook.id.clone();
                    workers.insert(id.clone(), tokio::spawn(work(d.clone(), id)));
                }
            }
        }
        tokio::select! {
            () = d.shutdown.cancelled() => return,
            () = wake.notify.notified() => {}
            () = tokio::time::sleep(if allowed { RESCAN } else { LEASE_CHECK }) => {}
        }
    }
}

/// The first chain where `target` has thoughts to deliver, with them (at most [`BATCH`]).
fn pending(db: &MentisDb, target: &DeliveryTarget) -> Option<(String, Vec<Thought>)> {
    for key in db.chain_keys().into_iter().filter(|k| target.webhook.wants_chain(k)) {
        let from = target.cursors.get(&key).copied().unwrap_or(0);
        let thoughts = db.thoughts_in(&key, from, u64::MAX, BATCH).unwrap_or_default();
        if !thoughts.is_empty() {
            return Some((key, thoughts));
        }
    }
    None
}

/// Delivers webhook `id`'s pending thoughts until none is left, it is deleted, or shutdown.
async fn work(d: Arc<Deliverer>, id: String) {
    loop {
        let Some(target) = d.db.webhooks().targets().into_iter().find(|t| t.webhook.id == id) else { return };
        let Some((chain, thoughts)) = pending(&d.db, &target) else { return };
        // Thoughts the filter skips move the cursor in one write, before the next delivery.
        let mut skipped_to = None;
        for thought in thoughts {
            if !target.webhook.wants(&chain, &thought) {
                skipped_to = Some(thought.index + 1);
                continue;
            }
            if let Some(next) = skipped_to.take() {
                if !d.advance(&id, &chain, next, false).await {
                    return;
                }
            }
            // The lease went to another daemon: it goes on from the stored cursor.
            if !(d.may_deliver)() || !d.deliver(&target, &chain, &thought).await || !d.advance(&id, &chain, thought.index + 1, true).await {
                return;
            }
        }
        if let Some(next) = skipped_to {
            if !d.advance(&id, &chain, next, false).await {
                return;
            }
        }
    }
}

impl Deliverer {
    /// Moves webhook `id`'s cursor in `chain`, durably. `false` on shutdown
    /// or a storage failure (logged; the worker stops and is restarted later).
    async fn advance(&self, id: &str, chain: &str, next: u64, delivered: bool) -> bool {
        let (db, id, chain) = (self.db.clone(), id.to_string(), chain.to_string());
        let written = tokio::task::spawn_blocking(move || {
            let at = delivered.then(|| mentisdb_core::timestamp::format_rfc3339_millis(db.now_millis()));
            db.webhooks().advance(db.storage(), &id, &chain, next, at)
        })
        .await;
        match written {
            Ok(Ok(())) => !self.shutdown.is_cancelled(),
            Ok(Err(e)) => {
                tracing::warn!(target: "mentisdb::webhooks", error = %e, "cannot record a webhook delivery; it will be sent again");
                false
            }
            Err(_) => false,
        }
    }

    /// Sends one thought until the receiver acknowledges it. `false` when
    /// the webhook was deleted or the daemon stops first.
    async fn deliver(&self, target: &DeliveryTarget, chain: &str, thought: &Thought) -> bool {
        let id = &target.webhook.id;
        let delivery = delivery_id(id, chain, thought.index);
        let mut failures = 0u32;
        loop {
            let sent_at = mentisdb_core::timestamp::format_rfc3339_millis(self.db.now_millis());
            let body = mentisdb_core::events::webhook_payload(chain, thought, &sent_at).to_string();
            match self.attempt(target, &delivery, body).await {
                Ok(()) => {
                    tracing::info!(target: "mentisdb::webhooks", webhook = %id, delivery = %delivery, attempts = failures + 1, "delivered");
                    return true;
                }
                Err(e) => {
                    failures += 1;
                    let wait = self.backoff.after(failures);
                    tracing::warn!(target: "mentisdb::webhooks", webhook = %id, delivery = %delivery, attempt = failures, retry_in_ms = wait.as_millis() as u64, error = %e, "delivery failed");
                    self.db.webhooks().note_failure(id, format!("attempt {failures} of {delivery}: {e}"));
                    tokio::select! {
                        () = self.shutdown.cancelled() => return false,
                        () = tokio::time::sleep(wait) => {}
                    }
                    if !(self.may_deliver)() || !self.db.webhooks().list().iter().any(|w| &w.id == id) {
                        return false;
                    }
                }
            }
        }
    }

    /// Sends one live event, up to [`LIVE_ATTEMPTS`] times (fewer when the
    /// webhook is deleted meanwhile).
    async fn deliver_live(self: Arc<Self>, target: DeliveryTarget, event: CoordinationEvent) {
        // The slot is given back however the task ends (a panic included).
        struct Slot<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Slot<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let _slot = Slot(&self.live_in_flight);
        self.send_live(&target, &event).await;
    }

    async fn send_live(&self, target: &DeliveryTarget, event: &CoordinationEvent) {
        let id = &target.webhook.id;
        let delivery = format!("{id}:{}:{}", event.name, self.db.fresh_id());
        let sent_at = mentisdb_core::timestamp::format_rfc3339_millis(self.db.now_millis());
        let body = serde_json::json!({"event": event.name, "chain_key": event.data["chain_key"], "coordination": {"event": event.name, "data": event.data}, "timestamp": sent_at}).to_string();
        for failures in 1..=LIVE_ATTEMPTS {
            match self.attempt_event(target, event.name, &delivery, body.clone()).await {
                Ok(()) => return,
                Err(e) => {
                    tracing::warn!(target: "mentisdb::webhooks", webhook = %id, delivery = %delivery, attempt = failures, error = %e, "live event delivery failed");
                    self.db.webhooks().note_failure(id, format!("attempt {failures} of {delivery}: {e}"));
                    if failures == LIVE_ATTEMPTS {
                        return;
                    }
                    tokio::select! {
                        () = self.shutdown.cancelled() => return,
                        () = tokio::time::sleep(self.backoff.after(failures)) => {}
                    }
                    if !self.db.webhooks().list().iter().any(|w| &w.id == id) {
                        return;
                    }
                }
            }
        }
    }

    async fn attempt(&self, target: &DeliveryTarget, delivery: &str, body: String) -> Result<(), WebhookError> {
        self.attempt_event(target, "thought.appended", delivery, body).await
    }

    async fn attempt_event(&self, target: &DeliveryTarget, event: &str, delivery: &str, body: String) -> Result<(), WebhookError> {
        let url = reqwest::Url::parse(&target.webhook.url).map_err(WebhookError::BadUrl)?;
        // Literal addresses here; host names in the client's PinnedResolver.
        self.policy.check_url(url.as_str()).map_err(WebhookError::Refused)?;
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("x-mentisdb-event", event)
            .header("x-mentisdb-delivery", delivery)
            .header("x-mentisdb-signature", signature(&target.secret, body.as_bytes()))
            .body(body)
            .send()
            .await
            .map_err(|e| WebhookError::Request(e.without_url()))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(WebhookError::Status(status))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// A lookup that answers `answers` in turn (the last one from then on)
    /// and counts its calls.
    fn flipping(answers: Vec<IpAddr>, calls: Arc<std::sync::atomic::AtomicUsize>) -> Lookup {
        Arc::new(move |_name: String| {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let ip = answers[n.min(answers.len() - 1)];
            Box::pin(async move { Ok(vec![ip]) })
        })
    }

    /// Delivers to `http://flip.test:<receiver>/hook` with `lookup`; returns
    /// the connections the loopback receiver got and the lookups made.
    fn deliver_through(policy: UrlPolicy, answers: Vec<IpAddr>) -> (usize, usize) {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = receiver.local_addr().unwrap().port();
            let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let counted = hits.clone();
            tokio::spawn(async move {
                while let Ok((mut conn, _)) = receiver.accept().await {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    use tokio::io::AsyncWriteExt;
                    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
                }
            });
            let clock = Arc::new(mentisdb_core::FixedClock::new(1_795_000_000_000, 1));
            let db = Arc::new(MentisDb::open(Arc::new(mentisdb_core::MemoryStorage::new()), clock, Arc::new(mentisdb_core::SequentialIds::starting_at(1)), Default::default()).unwrap().0);
            let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let stop = CancellationToken::new();
            let backoff = Backoff { base: Duration::from_millis(20), max: Duration::from_millis(50) };
            start_with_lookup(db.clone(), policy, backoff, Arc::new(|| true), stop.clone(), flipping(answers, calls.clone())).unwrap();
            db.call("mentisdb_register_webhook", serde_json::json!({"url": format!("http://flip.test:{port}/hook")})).unwrap();
            db.call("mentisdb_append", serde_json::json!({"chain_key": "c", "agent_id": "a", "thought_type": "Finding", "content": "x"})).unwrap();
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while calls.load(std::sync::atomic::Ordering::SeqCst) < 4 && hits.load(std::sync::atomic::Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            stop.cancel();
            (hits.load(std::sync::atomic::Ordering::SeqCst), calls.load(std::sync::atomic::Ordering::SeqCst))
        })
    }

    /// DNS rebinding: a name answering a public address first and
    /// 127.0.0.1 afterwards never gets a delivery to loopback; the same
    /// name answering 127.0.0.1 where that is allowed is delivered, so the
    /// connection goes where this resolver said (the name is in no DNS).
    #[test]
    fn a_name_rebound_to_loopback_gets_no_delivery() {
        let public: IpAddr = "192.0.43.10".parse().unwrap();
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        let (hits, lookups) = deliver_through(UrlPolicy::default(), vec![public, loopback]);
        assert_eq!(hits, 0, "the loopback receiver was reached");
        assert!(lookups >= 4, "attempts went on: {lookups} lookups");
        let (hits, _) = deliver_through(UrlPolicy::parse("127.0.0.0/8").unwrap(), vec![loopback]);
        assert!(hits >= 1, "an allowed address is delivered to, through this resolver");
    }

    #[test]
    fn the_signature_is_rfc_4231_hmac_sha256() {
        // RFC 4231 test case 2.
        assert_eq!(signature("Jefe", b"what do ya want for nothing?"), "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let b = Backoff { base: Duration::from_millis(100), max: Duration::from_millis(500) };
        assert_eq!([1, 2, 3, 4, 40].map(|n| b.after(n).as_millis()), [100, 200, 400, 500, 500]);
    }
}
