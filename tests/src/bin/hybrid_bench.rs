//! `mentisdb-hybridbench`: how fast hybrid retrieval is for a user of
//! `mentisdbd --minilm-dir`, against an in-process daemon on a temp
//! directory, one LoCoMo conversation at a time (the `locomo-bench` ingest).
//!
//! 1. Append -> embedded: turns appended one at a time over REST; for each,
//!    the time from sending the append until the background worker has
//!    embedded and indexed it (p50, p99), the append's own latency beside.
//! 2. Embedding throughput: the rest of the turns appended by 8 clients at
//!    once; thoughts embedded per second until the index covers them all.
//! 3. Hybrid ranked queries over REST: every question of categories 1-4,
//!    `limit` 10, one at a time; p50 and p99 of the request, the question's
//!    embedding included (the chain's own words reuse their vectors).
//!
//! Prints figures; asserts nothing but that the work completes.
//! `cargo run --release -p mentisdb-tests --features minilm --bin mentisdb-hybridbench -- --minilm DIR [--conversation FILE]`

use clap::Parser;
use mentisdb_tests::bench::percentile;
use mentisdb_tests::locomo;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Parser)]
#[command(about = "Hybrid retrieval speed of mentisdbd with all-MiniLM-L6-v2: append-to-embedded, embedding throughput, ranked query latency.")]
struct Args {
    /// Directory with model.safetensors and tokenizer.json (scripts/fetch-minilm.sh).
    #[arg(long)]
    minilm: PathBuf,
    /// A LoCoMo conversation file.
    #[arg(long, default_value = "../shared/bench/locomo/conv-26.json")]
    conversation: PathBuf,
    /// Turns appended one at a time for the append-to-embedded figure.
    #[arg(long, default_value_t = 100)]
    one_at_a_time: usize,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let conv = locomo::load(&args.conversation).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = mentisdb_native::Config::for_dir(dir.path());
    config.minilm_dir = Some(args.minilm.clone());
    let daemon = mentisdb_native::start(&config).await.expect("start in-process daemon");
    let base = format!("http://{}", daemon.rest_addr);
    let client = reqwest::Client::builder().tcp_nodelay(true).build().expect("client");
    let chain = conv.name.clone();
    let indexed = |db: &mentisdb_core::MentisDb| db.read_chain(&chain, |c| c.map_or(0, |c| c.indexed_len())).unwrap_or(0);
    println!("in-process daemon with all-MiniLM-L6-v2: rest={base}; {} ({} turns, {} questions)", conv.name, conv.turns.len(), conv.questions.len());

    let append = |i: usize| {
        let (content, agent, dia) = &conv.turns[i];
        let body = json!({"chain_key": chain, "agent_id": agent, "thought_type": "FactLearned", "content": content, "tags": [format!("dia:{dia}")]});
        client.post(format!("{base}/v1/thoughts")).json(&body).send()
    };

    // 1. One at a time: append, then wait until the worker embedded it.
    let first = args.one_at_a_time.min(conv.turns.len());
    let (mut to_embedded, mut acked) = (Vec::new(), Vec::new());
    for i in 0..first {
        let sent = Instant::now();
        let reply = append(i).await.expect("append");
        assert!(reply.status().is_success(), "append {i}: {}", reply.status());
        acked.push(sent.elapsed());
        while indexed(&daemon.db) <= i {
            std::thread::sleep(Duration::from_micros(200));
        }
        to_embedded.push(sent.elapsed());
    }
    to_embedded.sort();
    acked.sort();
    println!(
        "append -> embedded, one at a time ({first} turns): p50 {:.1} ms, p99 {:.1} ms (the append alone: p50 {:.2} ms, p99 {:.2} ms)",
        ms(percentile(&to_embedded, 0.50)),
        ms(percentile(&to_embedded, 0.99)),
        ms(percentile(&acked, 0.50)),
        ms(percentile(&acked, 0.99))
    );

    // 2. The rest at once, 8 clients: thoughts embedded per second.
    let started = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(first));
    let total = conv.turns.len();
    let mut clients = Vec::new();
    for _ in 0..8 {
        let (next, client, base, turns, chain) = (next.clone(), client.clone(), base.clone(), conv.turns.clone(), chain.clone());
        clients.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((content, agent, dia)) = turns.get(i) else { return };
                let body = json!({"chain_key": chain, "agent_id": agent, "thought_type": "FactLearned", "content": content, "tags": [format!("dia:{dia}")]});
                let reply = client.post(format!("{base}/v1/thoughts")).json(&body).send().await.expect("append");
                assert!(reply.status().is_success());
            }
        }));
    }
    for c in clients {
        c.await.expect("client");
    }
    let appended = started.elapsed();
    while indexed(&daemon.db) < total {
        std::thread::sleep(Duration::from_millis(1));
    }
    let embedded = started.elapsed();
    let n = total - first;
    println!(
        "embedding throughput: {n} turns appended by 8 clients in {:.2} s, all embedded after {:.2} s: {:.0} thoughts/s (2 cores shared with the daemon and clients)",
        appended.as_secs_f64(),
        embedded.as_secs_f64(),
        n as f64 / embedded.as_secs_f64()
    );

    // 3. Hybrid ranked queries.
    let mut took = Vec::new();
    for (question, _, _) in &conv.questions {
        let sent = Instant::now();
        let reply = client.post(format!("{base}/v1/ranked-search")).json(&json!({"chain_key": chain, "text": question, "limit": 10})).send().await.expect("query");
        let body: serde_json::Value = reply.json().await.expect("reply");
        took.push(sent.elapsed());
        assert_eq!(body["backend"], "hybrid", "{body}");
    }
    took.sort();
    println!(
        "hybrid ranked search over REST ({} questions, {} thoughts): p50 {:.2} ms, p99 {:.2} ms",
        took.len(),
        total,
        ms(percentile(&took, 0.50)),
        ms(percentile(&took, 0.99))
    );
    daemon.shutdown().await;
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
