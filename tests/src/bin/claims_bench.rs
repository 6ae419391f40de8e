//! `mentisdb-claimsbench`: claims through in-process `mentisdbd` instances
//! (durable: fsync on, an answered claim is committed).
//!
//! 1. claim + release pairs per second, 16 clients per instance, each on
//!    keys of its own (no contention): through one instance on files, and
//!    with `--pg-url` through 1 and 3 instances on one PostgreSQL database;
//! 2. acquire latency: a claim of a free key answered, one at a time, p50 and p99;
//! 3. hand-over: holder A releases a key through the first instance; B,
//!    watching the chain's event stream on the last instance, claims it as
//!    soon as the release arrives. From sending the release to B's claim
//!    answered, p50 and p99.
//!
//! Prints figures; asserts only that requests succeed. Run:
//! `cargo run --release -p mentisdb-tests --bin mentisdb-claimsbench` (files), or
//! `./scripts/pg-bench.sh`-style with a server: `... -- --pg-url postgres://...`.

use clap::Parser;
use mentisdb_tests::bench::{percentile, subscribe};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[derive(Debug, Parser)]
#[command(about = "Claims through mentisdbd: claim+release pairs/s, acquire latency, hand-over latency.")]
struct Args {
    /// Admin URL of a PostgreSQL server: also run through 1 and 3 instances on a fresh database in it.
    #[arg(long)]
    pg_url: Option<String>,
    /// Claim + release pairs in each throughput phase.
    #[arg(long, default_value_t = 5_000)]
    pairs: usize,
    /// Clients per instance in the throughput phases.
    #[arg(long, default_value_t = 16)]
    clients_per_instance: usize,
    /// Acquisitions and hand-overs timed one at a time.
    #[arg(long, default_value_t = 500)]
    timed: usize,
}

async fn post(client: &reqwest::Client, base: &str, path: &str, body: Value) -> Value {
    let r = client.post(format!("{base}{path}")).json(&body).send().await.expect("request");
    assert!(r.status().is_success(), "{path}: {}", r.status());
    r.json().await.expect("reply")
}

async fn claim(client: &reqwest::Client, base: &str, chain: &str, key: &str, holder: &str) -> Value {
    post(client, base, "/v1/claims", json!({"chain_key": chain, "key": key, "holder": holder, "ttl_ms": 60_000})).await
}

async fn release(client: &reqwest::Client, base: &str, chain: &str, key: &str, holder: &str) -> Value {
    post(client, base, "/v1/claims/release", json!({"chain_key": chain, "key": key, "holder": holder})).await
}

/// Claim + release pairs per second from `clients` tasks spread over `bases`, each on its own keys.
async fn pairs_per_second(client: &reqwest::Client, bases: &[String], chain: &str, clients: usize, pairs: usize) -> f64 {
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (client, base, chain) = (client.clone(), bases[c % bases.len()].clone(), chain.to_string());
            let n = pairs / clients + usize::from(c < pairs % clients);
            tokio::spawn(async move {
                for i in 0..n {
                    let (key, holder) = (format!("k-{c}-{}", i % 4), format!("h-{c}"));
                    let got = claim(&client, &base, &chain, &key, &holder).await;
                    assert_eq!(got["ok"], true, "{got}");
                    release(&client, &base, &chain, &key, &holder).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("client");
    }
    pairs as f64 / started.elapsed().as_secs_f64()
}

async fn timings(client: &reqwest::Client, bases: &[String], chain: &str, n: usize) {
    let (first, last) = (&bases[0], &bases[bases.len() - 1]);
    let mut acquire = Vec::with_capacity(n);
    for i in 0..n {
        let key = format!("free-{i}");
        let sent = Instant::now();
        claim(client, first, chain, &key, "a").await;
        acquire.push(sent.elapsed());
        release(client, first, chain, &key, "a").await;
    }
    acquire.sort();
    println!("  acquire a free key: {n} claims, p50 {:.2} ms, p99 {:.2} ms", ms(percentile(&acquire, 0.5)), ms(percentile(&acquire, 0.99)));

    // B watches the chain's stream on the last instance and claims each key as its release arrives.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let listening = tokio::spawn(subscribe(client.clone(), last.clone(), chain.to_string(), move |data| {
        let v: Value = serde_json::from_str(data).expect("event data is JSON");
        let Some(content) = v["thought"]["content"].as_str() else { return };
        if let Ok(r) = serde_json::from_str::<Value>(content) {
            if r["claim"] == "release" && r["holder"] == "a" {
                let _ = tx.send(r["key"].as_str().unwrap_or_default().to_string());
            }
        }
    }));
    tokio::time::sleep(Duration::from_millis(300)).await;
    while rx.try_recv().is_ok() {}
    let mut handover = Vec::with_capacity(n);
    for i in 0..n {
        let key = format!("handover-{i}");
        claim(client, first, chain, &key, "a").await;
        let sent = Instant::now();
        release(client, first, chain, &key, "a").await;
        loop {
            let seen = tokio::time::timeout(Duration::from_secs(30), rx.recv()).await.expect("the release arrives").expect("stream open");
            if seen == key {
                break;
            }
        }
        let got = claim(client, last, chain, &key, "b").await;
        assert_eq!(got["ok"], true, "{got}");
        handover.push(sent.elapsed());
    }
    listening.abort();
    handover.sort();
    println!(
        "  hand-over (A's release sent -> B, told by its event stream on {}, holds the key): {n}, p50 {:.2} ms, p99 {:.2} ms",
        if bases.len() > 1 { "another instance" } else { "the same instance" },
        ms(percentile(&handover, 0.5)),
        ms(percentile(&handover, 0.99))
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn start(config: &mentisdb_native::Config) -> mentisdb_native::RunningDaemon {
    mentisdb_native::start(config).await.expect("start an instance")
}

fn main() {
    let args = Args::parse();
    // Before the runtime: the synchronous PostgreSQL client runs one of its own.
    let pg = args.pg_url.as_ref().map(|u| mentisdb_pg_storage::testdb::fresh_database(u, "claims").expect("a fresh database"));
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime").block_on(run(args, pg));
}

async fn run(args: Args, pg: Option<String>) {
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).tcp_nodelay(true).build().expect("client");
    let per = args.clients_per_instance;
    let dir = tempfile::tempdir().expect("temp dir");
    let files = start(&mentisdb_native::Config::for_dir(dir.path().join("files"))).await;
    let base = vec![format!("http://{}", files.rest_addr)];
    println!("1 instance on files:");
    let rate = pairs_per_second(&client, &base, "bench", per, args.pairs).await;
    println!("  claim + release, {per} clients on keys of their own: {rate:.0} pairs/s");
    timings(&client, &base, "timed", args.timed).await;
    drop(files);

    if let Some(url) = pg {
        let mut daemons = Vec::new();
        for i in 0..3 {
            let mut config = mentisdb_native::Config::for_dir(dir.path().join(format!("pg-{i}")));
            config.storage_url = Some(mentisdb_native::config::StorageUrl::from_arg(&url).expect("infallible"));
            daemons.push(start(&config).await);
        }
        let bases: Vec<String> = daemons.iter().map(|d| format!("http://{}", d.rest_addr)).collect();
        println!("PostgreSQL, 1 instance:");
        let one = pairs_per_second(&client, &bases[..1], "pg-one", per, args.pairs).await;
        println!("  claim + release, {per} clients: {one:.0} pairs/s");
        println!("PostgreSQL, 3 instances (one chain):");
        let three = pairs_per_second(&client, &bases, "pg-three", 3 * per, args.pairs).await;
        println!("  claim + release, {} clients: {three:.0} pairs/s", 3 * per);
        timings(&client, &bases, "pg-timed", args.timed).await;
    }
}
