//! `mentisdb-eventsbench`: the cost of `GET /v1/events` subscribers, against
//! an in-process `mentisdbd` on a temp directory.
//!
//! 1. Durable appends (16 clients, one chain) with no subscriber, then the
//!    same with `--subscribers` event streams open on that chain; it also
//!    reports how long after the last append every subscriber had every event.
//! 2. Append-to-event latency: one append at a time, one subscriber; the time
//!    from sending the append to reading its `thought` event off the stream
//!    (the append's fsync included), p50 and p99.
//!
//! Prints figures; asserts only that every subscriber got every event.
//! `cargo run --release -p mentisdb-tests --bin mentisdb-eventsbench`

use clap::Parser;
use mentisdb_tests::bench::{appends, event_latencies, percentile, subscribe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Parser)]
#[command(about = "Event-stream bench for mentisdbd: appends/s with and without subscribers, append-to-event latency.")]
struct Args {
    /// Appends in each throughput phase.
    #[arg(long, default_value_t = 10_000)]
    appends: usize,
    /// Concurrent append clients.
    #[arg(long, default_value_t = 16)]
    append_clients: usize,
    /// Event streams open during the second phase.
    #[arg(long, default_value_t = 100)]
    subscribers: usize,
    /// Appends timed one at a time for the latency figure.
    #[arg(long, default_value_t = 2_000)]
    latency_appends: usize,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().expect("temp dir");
    let daemon = mentisdb_native::start(&mentisdb_native::Config::for_dir(dir.path())).await.expect("start in-process daemon");
    let base = format!("http://{}", daemon.rest_addr);
    let client = reqwest::Client::builder().pool_max_idle_per_host(1024).tcp_nodelay(true).build().expect("client");
    println!("in-process daemon: rest={base} (file storage, fsync per acknowledged append)");

    let bases = [base.clone()];
    let none = appends(&client, &bases, |_| "quiet".into(), args.append_clients, args.appends).await;
    println!("durable appends, no subscriber: {} appends, {} clients, {none:.0} appends/s", args.appends, args.append_clients);

    let received: Arc<Vec<AtomicUsize>> = Arc::new((0..args.subscribers).map(|_| AtomicUsize::new(0)).collect());
    for s in 0..args.subscribers {
        let received = received.clone();
        tokio::spawn(subscribe(client.clone(), base.clone(), "watched".into(), move |_| {
            received[s].fetch_add(1, Ordering::Relaxed);
        }));
    }
    // Every stream is open (its `ready` sent) before the appends start.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let with = appends(&client, &bases, |_| "watched".into(), args.append_clients, args.appends).await;
    let appended = Instant::now();
    while received.iter().any(|r| r.load(Ordering::Relaxed) < args.appends) {
        assert!(appended.elapsed() < Duration::from_secs(120), "subscribers did not get every event within 120 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "durable appends, {} subscribers: {} appends, {} clients, {with:.0} appends/s ({:+.1}% against none); every subscriber had every event {} ms after the last append",
        args.subscribers,
        args.appends,
        args.append_clients,
        (with / none - 1.0) * 100.0,
        appended.elapsed().as_millis()
    );

    let got = event_latencies(&client, &base, &base, "latency", args.latency_appends).await;
    println!(
        "append -> event latency (one at a time, one subscriber): {} appends, p50 {:.2} ms, p99 {:.2} ms",
        got.len(),
        percentile(&got, 0.5).as_secs_f64() * 1e3,
        percentile(&got, 0.99).as_secs_f64() * 1e3
    );
    daemon.shutdown().await;
}
