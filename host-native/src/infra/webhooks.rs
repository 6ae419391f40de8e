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
//! - Several daemons on one PostgreSQL database: only the daemon holding
//!   the delivery lease (an advisory lock, `MayDeliver`) delivers; it reads
//!   the registry (with its cursors) again when it takes the lease, and
//!   every daemon reads it again when another one rewrites it. When the
//!   holder stops or dies, another takes the lease within about a second
//!   and goes on from the stored cursors.

use ipnet::IpNet;
use mentisdb_core::webhooks::{delivery_id, payload, DeliveryTarget, WebhookTargets};
use mentisdb_core::{AppendObserver, MentisDb, Thought};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// How long one delivery attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// Thoughts read from a chain at a time.
const BATCH: usize = 64;
/// The broadest allowed network (`/8`), so an allow-list cannot switch the rule off.
const MIN_PREFIX: u8 = 8;
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
    #[error("MENTISDB_WEBHOOK_ALLOWED_CIDRS: '{0}' is broader than /{MIN_PREFIX}")]
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

/// Which targets webhooks may reach: public addresses, plus the allowed networks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    allowed: Vec<IpNet>,
}

impl UrlPolicy {
    /// Parses `MENTISDB_WEBHOOK_ALLOWED_CIDRS`: CIDRs or bare addresses,
    /// separated by commas or spaces; each at most a /8.
    pub fn parse(list: &str) -> Result<UrlPolicy, WebhookError> {
        let mut allowed = Vec::new();
        for entry in list.split(|c: char| c == ',' || c.is_whitespace()).filter(|e| !e.is_empty()) {
            let net = match entry.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => entry.parse::<IpAddr>().map(IpNet::from).map_err(|_| WebhookError::NotCidr(entry.to_string()))?,
            };
            if net.prefix_len() < MIN_PREFIX {
                return Err(WebhookError::TooBroad(entry.to_string()));
            }
            allowed.push(net.trunc());
        }
        Ok(UrlPolicy { allowed })
    }

    /// Whether a delivery may go to `ip`.
    pub fn permits(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        !is_internal(ip) || self.allowed.iter().any(|net| net.contains(&ip))
    }

    fn refused(ip: IpAddr) -> String {
        format!("webhook URL points to an internal address ({ip}); loopback, private, link-local and similar addresses need MENTISDB_WEBHOOK_ALLOWED_CIDRS")
    }

}

/// Resolves a host name to its addresses: [`system_lookup`] in the daemon;
/// tests hand in their own (a name that changes its answer).
pub type Lookup = Arc<dyn Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<Vec<IpAddr>>> + Send>> + Send + Sync>;

/// The system's resolver.
pub fn system_lookup() -> Lookup {
    Arc::new(|name: String| Box::pin(async move { Ok(tokio::net::lookup_host((name.as_str(), 0)).await?.map(|a| a.ip()).collect()) }))
}

/// The delivery client's resolver: resolves a name once, refuses it when
/// any address is not permitted, and gives the client exactly the checked
/// addresses to connect to (the check and the connection see one answer).
pub struct PinnedResolver {
    policy: UrlPolicy,
    lookup: Lookup,
}

impl reqwest::dns::Resolve for PinnedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (policy, lookup, host) = (self.policy.clone(), self.lookup.clone(), name.as_str().to_string());
        Box::pin(async move {
            let ips = lookup(host.clone()).await?;
            if ips.is_empty() {
                return Err(format!("{host} resolves to no address").into());
            }
            if let Some(bad) = ips.iter().find(|ip| !policy.permits(**ip)) {
                tracing::warn!(target: "mentisdb::webhooks", host = %host, address = %bad, "webhook host resolves to an internal address; not delivered");
                return Err(UrlPolicy::refused(*bad).into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(ips.into_iter().map(|ip| std::net::SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

impl WebhookTargets for UrlPolicy {
    fn check_url(&self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("invalid webhook URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("webhook URL scheme '{}' is not allowed; use http or https", parsed.scheme()));
        }
        match parsed.host() {
            None => Err("webhook URL has no host".to_string()),
            Some(url::Host::Domain(d)) => {
                let d = d.trim_end_matches('.').to_ascii_lowercase();
                if d == "localhost" || d.ends_with(".localhost") {
                    Err("webhook URLs pointing to localhost are not allowed; use an address listed in MENTISDB_WEBHOOK_ALLOWED_CIDRS".to_string())
                } else {
                    Ok(())
                }
            }
            Some(url::Host::Ipv4(ip)) => self.permits(IpAddr::V4(ip)).then_some(()).ok_or_else(|| Self::refused(IpAddr::V4(ip))),
            Some(url::Host::Ipv6(ip)) => self.permits(IpAddr::V6(ip)).then_some(()).ok_or_else(|| Self::refused(IpAddr::V6(ip))),
        }
    }
}

/// Addresses inside a network that is not the public internet.
fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    a == 0 // "this network" 0.0.0.0/8: 0.x.y.z reaches the host itself on Linux
        || v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || (a == 100 && (b & 0xc0) == 64) // CGNAT 100.64.0.0/10
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // protocol assignments, TEST-NET-1
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || (a == 198 && (b & 0xfe) == 18) // benchmarking 198.18.0.0/15
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || a >= 240 // reserved
}

fn is_internal_v6(v6: Ipv6Addr) -> bool {
    if v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() {
        return true;
    }
    let seg = v6.segments();
    // IPv4-translated ::ffff:0:a.b.c.d (SIIT) carries an IPv4 address too.
    let translated = (seg[..4] == [0, 0, 0, 0] && seg[4] == 0xffff && seg[5] == 0).then(|| Ipv4Addr::new((seg[6] >> 8) as u8, seg[6] as u8, (seg[7] >> 8) as u8, seg[7] as u8));
    if let Some(v4) = v6.to_ipv4_mapped().or_else(|| v6.to_ipv4()).or(translated) {
        return is_internal_v4(v4);
    }
    (seg[0] == 0x64 && seg[1] == 0xff9b) // NAT64 (well-known and local-use) reaches IPv4 targets
        || (seg[0] == 0x100 && seg[1..4] == [0, 0, 0]) // discard-only 100::/64
        || (seg[0] == 0x2001 && seg[1] < 0x200) // IETF protocol assignments 2001::/23 (Teredo, benchmarking, ORCHID)
        || (seg[0] == 0x3fff && seg[1] < 0x1000) // documentation 3fff::/20
        || seg[0] == 0x5f00 // segment routing 5f00::/16
        || seg[0] == 0x2002 // 6to4
        || (seg[0] & 0xfe00) == 0xfc00 // unique local
        || (seg[0] & 0xffc0) == 0xfe80 // link-local
        || (seg[0] & 0xffc0) == 0xfec0 // site-local
        || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
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

/// Wakes the workers on appends and remembers deleted chains.
#[derive(Default)]
struct Wake {
    notify: Notify,
    deleted: Mutex<Vec<String>>,
}

impl AppendObserver for Wake {
    fn appended(&self, _chain_key: &str, _thought: &Thought) {
        self.notify.notify_one();
    }

    fn chain_deleted(&self, chain_key: &str) {
        self.deleted.lock().unwrap_or_else(|e| e.into_inner()).push(chain_key.to_string());
        self.notify.notify_one();
    }
}

/// The delivering side of webhooks, shared by its workers.
struct Deliverer {
    db: Arc<MentisDb>,
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
        .dns_resolver(Arc::new(PinnedResolver { policy: policy.clone(), lookup }))
        .timeout(ATTEMPT_TIMEOUT)
        .user_agent(concat!("mentisdbd/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(WebhookError::Client)?;
    let wake = Arc::new(Wake::default());
    db.add_observer(wake.clone());
    let deliverer = Arc::new(Deliverer { db, policy, client, backoff, may_deliver, shutdown });
    tokio::spawn(manage(deliverer, wake));
    Ok(())
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
            let body = payload(chain, thought, &sent_at).to_string();
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

    async fn attempt(&self, target: &DeliveryTarget, delivery: &str, body: String) -> Result<(), WebhookError> {
        let url = reqwest::Url::parse(&target.webhook.url).map_err(WebhookError::BadUrl)?;
        // Literal addresses here; host names in the client's PinnedResolver.
        self.policy.check_url(url.as_str()).map_err(WebhookError::Refused)?;
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("x-mentisdb-event", "thought.appended")
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

    #[test]
    fn internal_targets_are_refused_unless_allowed() {
        let strict = UrlPolicy::default();
        for url in ["http://127.0.0.1:8080/x", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/latest", "http://[::ffff:192.168.0.1]/", "http://localhost/", "http://a.localhost./"] {
            assert!(strict.check_url(url).is_err(), "{url}");
        }
        assert!(strict.check_url("https://hooks.example.com/in").is_ok());
        assert!(strict.check_url("http://93.184.216.34/").is_ok());
        assert!(strict.check_url("ftp://93.184.216.34/").unwrap_err().contains("scheme"));
        let allowed = UrlPolicy::parse("127.0.0.1, 10.8.0.0/24").unwrap();
        assert!(allowed.check_url("http://127.0.0.1:8080/x").is_ok());
        assert!(allowed.check_url("http://10.8.0.9/").is_ok());
        assert!(allowed.check_url("http://10.9.0.1/").is_err());
        assert!(allowed.check_url("http://localhost/").is_err(), "a host name 'localhost' stays refused");
        assert!(UrlPolicy::parse("0.0.0.0/1").unwrap_err().to_string().contains("broader than /8"));
        assert!(UrlPolicy::parse("nonsense").is_err());
        assert_eq!(UrlPolicy::parse(" ").unwrap(), UrlPolicy::default());
        // 0.0.0.0/8, IPv4 in IPv6 (mapped, compatible, translated), special-purpose ranges.
        for url in ["http://0.0.0.1/", "http://0.1.2.3/", "http://[::ffff:0:7f00:1]/", "http://[::ffff:127.0.0.1]/", "http://[::127.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[100::1]/", "http://[2001:2::1]/", "http://[3fff::1]/", "http://192.88.99.1/"] {
            assert!(strict.check_url(url).is_err(), "{url}");
        }
        assert!(strict.check_url("http://[2606:4700::1111]/").is_ok(), "a public IPv6 address");
    }

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
