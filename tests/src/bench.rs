//! Helpers of the REST bench binaries (`src/bin/*bench*.rs`): concurrent
//! durable appends and a Server-Sent Events reader. They measure; they
//! assert only that requests succeed.

use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// One durable append (`POST /v1/thoughts`); its reply.
pub async fn append(client: &reqwest::Client, base: &str, chain: &str, content: String) -> serde_json::Value {
    let r = client.post(format!("{base}/v1/thoughts")).json(&json!({"chain_key": chain, "thought_type": "Finding", "content": content})).send().await.expect("append");
    assert!(r.status().is_success(), "append: {}", r.status());
    r.json().await.expect("append reply")
}

/// Appends `total` thoughts from `clients` tasks; client `c` sends to
/// `bases[c % bases.len()]` and chain `chain(c)`. Returns appends per second.
pub async fn appends(client: &reqwest::Client, bases: &[String], chain: impl Fn(usize) -> String, clients: usize, total: usize) -> f64 {
    appends_through(client, bases, Balancer::Pinned, chain, clients, total).await
}

/// How the bench's clients spread their appends over the instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balancer {
    /// Client `c` always sends to instance `c % instances`.
    Pinned,
    /// Every append goes to the next instance in turn, as an ordinary
    /// round-robin load balancer sends requests.
    RoundRobin,
}

/// [`appends`] with the instances chosen by `balancer`.
pub async fn appends_through(client: &reqwest::Client, bases: &[String], balancer: Balancer, chain: impl Fn(usize) -> String, clients: usize, total: usize) -> f64 {
    let next = Arc::new(AtomicUsize::new(0));
    let bases: Arc<[String]> = bases.into();
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (client, bases, chain, next) = (client.clone(), bases.clone(), chain(c), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let base = match balancer {
                        Balancer::Pinned => &bases[c % bases.len()],
                        Balancer::RoundRobin => &bases[i % bases.len()],
                    };
                    append(&client, base, &chain, format!("thought {i} of the bench")).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("append task");
    }
    total as f64 / started.elapsed().as_secs_f64()
}

/// Opens `GET /v1/events?chain_key=<chain>` and calls `on_event(data)` for
/// each `thought` event's data, until the stream ends.
pub async fn subscribe(client: reqwest::Client, base: String, chain: String, on_event: impl Fn(&str) + Send + 'static) {
    let mut r = client.get(format!("{base}/v1/events?chain_key={chain}")).send().await.expect("subscribe");
    assert!(r.status().is_success());
    let mut buffer = String::new();
    while let Ok(Some(chunk)) = r.chunk().await {
        buffer.push_str(std::str::from_utf8(&chunk).expect("utf-8 events"));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if event.lines().any(|l| l == "event: thought") {
                if let Some(data) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    on_event(data);
                }
            }
        }
    }
}

/// The `p`-quantile (0..=1) of sorted durations.
pub fn percentile(sorted: &[std::time::Duration], p: f64) -> std::time::Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// Append-to-event latency: subscribes to `chain` on `reader`, then appends
/// `count` thoughts one at a time through `writer` and times each from the
/// moment its append is sent until `reader`'s stream delivers it (waiting
/// up to 60 s for the last). Returns the latencies, sorted.
pub async fn event_latencies(client: &reqwest::Client, writer: &str, reader: &str, chain: &str, count: usize) -> Vec<std::time::Duration> {
    use std::sync::Mutex;
    let sent: Arc<Vec<Mutex<Option<Instant>>>> = Arc::new((0..count).map(|_| Mutex::new(None)).collect());
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(count)));
    let (s, l) = (sent.clone(), latencies.clone());
    let prefix = format!("{chain} ");
    let listening = tokio::spawn(subscribe(client.clone(), reader.to_string(), chain.to_string(), move |data| {
        let seen = Instant::now();
        let v: serde_json::Value = serde_json::from_str(data).expect("event data is JSON");
        let i: usize = v["thought"]["content"].as_str().and_then(|c| c.strip_prefix(&prefix)).and_then(|n| n.parse().ok()).expect("a timed thought");
        if let Some(at) = *s[i].lock().unwrap() {
            l.lock().unwrap().push(seen - at);
        }
    }));
    // The stream is open (its `ready` sent) before the first append.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    for (i, at) in sent.iter().enumerate() {
        *at.lock().unwrap() = Some(Instant::now());
        append(client, writer, chain, format!("{chain} {i}")).await;
    }
    let waited = Instant::now();
    while latencies.lock().unwrap().len() < count {
        assert!(waited.elapsed() < std::time::Duration::from_secs(60), "the stream did not deliver every thought within 60 s");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    listening.abort();
    let mut got = latencies.lock().unwrap().clone();
    got.sort();
    got
}

/// What the whole machine spent (Linux `/proc/stat`: every process,
/// PostgreSQL's included): busy CPU time and context switches so far.
#[derive(Debug, Clone, Copy)]
pub struct MachineWork {
    busy_ticks: u64,
    context_switches: u64,
}

impl MachineWork {
    /// Said instead of the figures where `/proc/stat` cannot be read.
    pub const UNKNOWN: &'static str = "machine work unknown (no /proc/stat)";

    /// Now; `None` without `/proc/stat`.
    pub fn now() -> Option<MachineWork> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
        // user nice system idle iowait irq softirq steal guest guest_nice: busy is
        // user + nice + system + irq + softirq (guest time is counted in user already).
        let busy_ticks = cpu.iter().enumerate().filter(|(i, _)| matches!(i, 0 | 1 | 2 | 5 | 6)).map(|(_, v)| v).sum();
        let context_switches = stat.lines().find_map(|l| l.strip_prefix("ctxt "))?.trim().parse().ok()?;
        Some(MachineWork { busy_ticks, context_switches })
    }

    /// "X CPU-ms and Y context switches per 1,000 appends" since `self`
    /// (the kernel counts CPU time in ticks of 10 ms).
    pub fn per_thousand_since(self, appends: usize) -> String {
        let Some(now) = MachineWork::now() else { return MachineWork::UNKNOWN.into() };
        let per = |v: u64| v as f64 * 1000.0 / appends.max(1) as f64;
        format!("{:.0} CPU-ms and {:.0} context switches per 1,000 appends", per((now.busy_ticks - self.busy_ticks) * 10), per(now.context_switches - self.context_switches))
    }
}
