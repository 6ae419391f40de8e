//! `mentisdb-loadbench`: REST load against an in-process `mentisdbd` on a
//! temp directory (or `--url` of a running daemon), with keep-alive clients.
//!
//! Phase 1: durable appends to one chain from `--append-clients` concurrent
//! clients (every response is sent only after the append was fsynced).
//! Phase 2: filtered `POST /v1/search` from `--search-clients` clients over a
//! chain of `--search-chain-size` thoughts.
//! Prints throughput and latency percentiles; asserts nothing.
//!
//! `cargo run --release -p mentisdb-tests --bin mentisdb-loadbench` (it lives
//! in the test crate so its HTTP client does not ship with `mentisdbd`).

use clap::Parser;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Parser)]
#[command(about = "REST load bench for mentisdbd: durable appends and filtered search.")]
struct Args {
    /// Target a running daemon's REST base URL instead of an in-process one.
    #[arg(long)]
    url: Option<String>,
    /// Bearer token for --url.
    #[arg(long)]
    token: Option<String>,
    /// Total appends in phase 1.
    #[arg(long, default_value_t = 20_000)]
    appends: usize,
    /// Concurrent append clients.
    #[arg(long, default_value_t = 16)]
    append_clients: usize,
    /// Thoughts in the searched chain.
    #[arg(long, default_value_t = 1_000)]
    search_chain_size: usize,
    /// Total searches in phase 2.
    #[arg(long, default_value_t = 200_000)]
    searches: usize,
    /// Concurrent search clients.
    #[arg(long, default_value_t = 64)]
    search_clients: usize,
    /// Data directory for the in-process daemon (default: a temp dir).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// In-process daemon with scoped tokens on: a token file of 20 tokens,
    /// requests carry a `write` token for `bench-*` (compare with a run
    /// without it for the cost of the check).
    #[arg(long)]
    scoped_tokens: bool,
    /// Also time the same search through `MentisDb::call` directly (no HTTP),
    /// single-threaded, to separate engine cost from transport cost.
    #[arg(long)]
    direct: bool,
}

/// CPU seconds (user + system) this process has used, from `/proc/self/stat`
/// (Linux; clock ticks of 1/100 s). `None` elsewhere.
fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

struct Outcome {
    cpu_secs: Option<f64>,
    elapsed: Duration,
    latencies: Vec<Duration>,
    errors: usize,
}

fn append_body(chain: &str, i: usize) -> Value {
    let types = ["Finding", "Decision", "Constraint", "Insight", "Mistake", "Correction", "Plan"];
    let topics = ["rate limit", "deployment", "database latency", "memory", "rust", "embeddings"];
    json!({
        "chain_key": chain,
        "agent_id": format!("agent-{}", i % 8),
        "agent_name": format!("Agent {}", i % 8),
        "thought_type": types[i % types.len()],
        "importance": (i % 10) as f64 / 10.0,
        "tags": [format!("t{}", i % 20), "bench"],
        "concepts": [topics[i % topics.len()]],
        "content": format!("Thought {i} about {} observed during load testing of the daemon.", topics[(i / 3) % topics.len()]),
    })
}

fn search_body(chain: &str, i: usize) -> Value {
    let topics = ["rate limit", "deployment", "database", "memory", "rust", "embeddings"];
    json!({
        "chain_key": chain,
        "text": topics[i % topics.len()],
        "thought_types": ["Finding", "Decision", "Insight", "Mistake"],
        "min_importance": 0.3,
        "limit": 10,
    })
}

async fn run(client: reqwest::Client, url: String, token: Option<String>, clients: usize, total: usize, body: impl Fn(usize) -> Value + Send + Sync + 'static) -> Outcome {
    let next = Arc::new(AtomicUsize::new(0));
    let body = Arc::new(body);
    let cpu_before = process_cpu_secs();
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (client, url, token, next, body) = (client.clone(), url.clone(), token.clone(), next.clone(), body.clone());
            tokio::spawn(async move {
                let mut lat = Vec::new();
                let mut errors = 0;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let payload = serde_json::to_vec(&body(i)).expect("json");
                    let t = Instant::now();
                    let mut req = client.post(&url).header("content-type", "application/json").body(payload);
                    if let Some(tok) = &token {
                        req = req.bearer_auth(tok);
                    }
                    match req.send().await {
                        Ok(r) if r.status().is_success() => {
                            let _ = r.bytes().await;
                        }
                        Ok(r) => {
                            errors += 1;
                            if errors == 1 {
                                eprintln!("HTTP {}: {}", r.status(), r.text().await.unwrap_or_default());
                            }
                        }
                        Err(e) => {
                            errors += 1;
                            if errors == 1 {
                                eprintln!("request failed: {e}");
                            }
                        }
                    }
                    lat.push(t.elapsed());
                }
                (lat, errors)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(total);
    let mut errors = 0;
    for t in tasks {
        let (l, e) = t.await.expect("client task");
        latencies.extend(l);
        errors += e;
    }
    let cpu_secs = cpu_before.zip(process_cpu_secs()).map(|(a, b)| b - a);
    Outcome { cpu_secs, elapsed: started.elapsed(), latencies, errors }
}

fn report(name: &str, clients: usize, mut o: Outcome) {
    o.latencies.sort();
    let pct = |p: f64| o.latencies.get(((o.latencies.len() as f64 * p) as usize).min(o.latencies.len().saturating_sub(1))).copied().unwrap_or_default();
    let n = o.latencies.len();
    let cpu = o.cpu_secs.map(|c| format!(", CPU {c:.2}s = {:.0} us/request (server + client)", c * 1e6 / n.max(1) as f64)).unwrap_or_default();
    println!(
        "{name}: {n} requests, {clients} clients, {:.2}s, {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, errors {}{cpu}",
        o.elapsed.as_secs_f64(),
        n as f64 / o.elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        o.errors
    );
}

#[tokio::main]
async fn main() {
    let mut args = Args::parse();
    let mut _temp = None;
    let mut _daemon = None;
    let base = match &args.url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => {
            let dir = match &args.dir {
                Some(d) => d.clone(),
                None => {
                    let t = tempfile::tempdir().expect("temp dir");
                    let p = t.path().to_path_buf();
                    _temp = Some(t);
                    p
                }
            };
            let mut config = mentisdb_native::Config::for_dir(&dir);
            if args.scoped_tokens {
                use mentisdb_native::tokens::add_token;
                let file = dir.join("bench-tokens.toml");
                for i in 0..19 {
                    add_token(&file, &format!("filler-{i}"), mentisdb_core::dispatch::Access::Read, &[format!("other-{i}-*")]).expect("token file");
                }
                args.token = Some(add_token(&file, "bench", mentisdb_core::dispatch::Access::Write, &["bench-*".to_string()]).expect("token file"));
                config.tokens_file = Some(file);
            }
            let d = mentisdb_native::start(&config).await.expect("start in-process daemon");
            println!("scoped tokens: {}", if args.scoped_tokens { "on (20 tokens, write on bench-*)" } else { "off" });
            println!("in-process daemon: rest={} dir={} (file storage, fsync per acknowledged append, group commit)", d.rest_addr, dir.display());
            let url = format!("http://{}", d.rest_addr);
            _daemon = Some(d);
            url
        }
    };
    let direct_db = _daemon.as_ref().map(|d| d.db.clone());
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).tcp_nodelay(true).build().expect("client");
    let run_id = std::process::id();
    let append_chain = format!("bench-append-{run_id}");
    let chain = append_chain.clone();
    let o = run(client.clone(), format!("{base}/v1/thoughts"), args.token.clone(), args.append_clients, args.appends, move |i| append_body(&chain, i)).await;
    report("durable appends (POST /v1/thoughts, one chain)", args.append_clients, o);

    let search_chain = format!("bench-search-{run_id}");
    let chain = search_chain.clone();
    let seeded = run(client.clone(), format!("{base}/v1/thoughts"), args.token.clone(), 16, args.search_chain_size, move |i| append_body(&chain, i)).await;
    assert_eq!(seeded.errors, 0, "seeding the search chain failed");
    if let (true, Some(db)) = (args.direct, direct_db) {
        let n = 20_000;
        let cpu_before = process_cpu_secs();
        let started = Instant::now();
        for i in 0..n {
            db.call("mentisdb_search", search_body(&search_chain, i)).expect("direct search");
        }
        let secs = started.elapsed().as_secs_f64();
        let cpu = cpu_before.zip(process_cpu_secs()).map(|(a, b)| format!(", CPU {:.1} us/call", (b - a) * 1e6 / n as f64)).unwrap_or_default();
        println!("direct MentisDb::call(mentisdb_search), 1 thread: {n} calls, {:.0} calls/s, {:.1} us/call wall{cpu}", n as f64 / secs, secs * 1e6 / n as f64);
    }
    let chain = search_chain.clone();
    let o = run(client, format!("{base}/v1/search"), args.token.clone(), args.search_clients, args.searches, move |i| search_body(&chain, i)).await;
    report(&format!("filtered search (POST /v1/search, chain of {} thoughts, limit 10)", args.search_chain_size), args.search_clients, o);
}
