//! Load against the real daemon.
//!
//! - 64 concurrent writers append to one chain; the result must be one
//!   linear chain that verifies (also after a SIGKILL + restart) holding
//!   every acknowledged append exactly once, with zero failed requests.
//! - A sustained mixed read/write load (writers plus search, traversal,
//!   recent-context, head and markdown readers) with zero errors; the
//!   daemon's RSS is sampled and reported, never asserted.
//!
//! Durations are short in CI; the full runs are
//! `MENTISDB_LOAD_WRITER_SECS=30 MENTISDB_LOAD_MIXED_SECS=60 cargo test --release -p mentisdb-tests --test reliability -- load:: --nocapture --test-threads 1`
//! (build the daemon with `cargo build --release -p mentisdb-native --bin mentisdbd` first).

use mentisdb_tests::daemon::{all_thoughts, client, data_dir, head, ok, Daemon};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn secs(name: &str, default: u64) -> Duration {
    Duration::from_secs(std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[test]
fn sixty_four_writers_on_one_chain_end_in_one_verified_linear_chain() {
    let duration = secs("MENTISDB_LOAD_WRITER_SECS", 4);
    let writers = 64;
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    let c = client();
    ok(&c, &d, "/v1/bootstrap", json!({"chain_key": "load", "content": "purpose"}));
    let acked: Arc<Mutex<BTreeMap<String, (String, u64)>>> = Arc::default();
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let latencies: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let started = Instant::now();
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (url, acked, errors, latencies) = (format!("{}/v1/thoughts", d.rest), acked.clone(), errors.clone(), latencies.clone());
            std::thread::spawn(move || {
                let c = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
                let mut n = 0;
                let mut mine = Vec::new();
                while started.elapsed() < duration {
                    let content = format!("writer {w} append {n}");
                    n += 1;
                    let t0 = Instant::now();
                    let r = c.post(&url).json(&json!({"chain_key": "load", "thought_type": "Finding", "content": content, "tags": [format!("w{w}")]})).send();
                    let elapsed = t0.elapsed();
                    match r {
                        Ok(r) if r.status().as_u16() == 200 => {
                            let v: Value = r.json().unwrap();
                            mine.push(elapsed);
                            acked.lock().unwrap().insert(content, (v["thought"]["id"].as_str().unwrap().to_string(), v["thought"]["index"].as_u64().unwrap()));
                        }
                        Ok(r) => errors.lock().unwrap().push(format!("HTTP {}: {}", r.status(), r.text().unwrap_or_default())),
                        Err(e) => errors.lock().unwrap().push(e.to_string()),
                    }
                }
                latencies.lock().unwrap().extend(mine);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let wall = started.elapsed();
    let errors = errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{} failed requests, first: {:?}", errors.len(), errors.first());
    let acked = acked.lock().unwrap().clone();
    let check = |d: &Daemon, when: &str| {
        let (_, count) = head(&c, d, "load");
        let thoughts = all_thoughts(&c, d, "load");
        assert_eq!(count.as_u64(), Some(thoughts.len() as u64));
        assert_eq!(thoughts.len(), acked.len() + 1, "{when}: every acknowledged append and nothing else");
        let mut by_content = BTreeMap::new();
        for (i, t) in thoughts.iter().enumerate() {
            assert_eq!(t["index"], i as u64, "{when}: linear indices");
            if i > 0 {
                assert_eq!(t["prev_hash"], thoughts[i - 1]["hash"], "{when}: one linear hash chain");
            }
            assert!(by_content.insert(t["content"].as_str().unwrap().to_string(), (t["id"].as_str().unwrap().to_string(), i as u64)).is_none(), "{when}: no duplicates");
        }
        for (content, at) in &acked {
            assert_eq!(by_content.get(content), Some(at), "{when}: {content} stored with the acknowledged id and index");
        }
    };
    check(&d, "live");
    d.kill();
    let d = Daemon::start(&dir, &[], &[]);
    assert_eq!(d.refused_at_startup(), 0);
    check(&d, "after SIGKILL + restart");
    let mut lat = latencies.lock().unwrap().clone();
    lat.sort();
    println!(
        "64 writers x {:.1}s on one chain: {} appends acknowledged, 0 errors, {:.0} appends/s, latency p50 {:?} p99 {:?} max {:?}; chain verified linear live and after SIGKILL+restart",
        wall.as_secs_f64(),
        acked.len(),
        acked.len() as f64 / wall.as_secs_f64(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or_default()
    );
}

#[test]
fn sustained_mixed_load_has_no_errors_and_reports_memory() {
    let duration = secs("MENTISDB_LOAD_MIXED_SECS", 5);
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    let c = client();
    for chain in ["mix-a", "mix-b"] {
        ok(&c, &d, "/v1/bootstrap", json!({"chain_key": chain, "content": "purpose"}));
        for i in 0..200 {
            ok(&c, &d, "/v1/thoughts", json!({"chain_key": chain, "thought_type": "Finding", "content": format!("warm-up fact {i} about rust memory"), "tags": ["warm"]}));
        }
    }
    let writes = Arc::new(AtomicU64::new(0));
    let reads = Arc::new(AtomicU64::new(0));
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    // Runs `workers` (even = writer, odd = reader) for `duration`; returns RSS at start, end and max.
    let run = |workers: &[u64], duration: Duration| -> (u64, u64, u64) {
        let rss_start = d.rss_kib().expect("daemon RSS");
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        for &w in workers {
            let (rest, stop, writes, reads, errors) = (d.rest.clone(), stop.clone(), writes.clone(), reads.clone(), errors.clone());
            handles.push(std::thread::spawn(move || {
                let c = reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let chain = if (w + n).is_multiple_of(2) { "mix-a" } else { "mix-b" };
                    n += 1;
                    let (path, body) = match (w % 2, n % 5) {
                        (0, _) => ("/v1/thoughts", json!({"chain_key": chain, "thought_type": "Decision", "content": format!("writer {w} decision {n} on rust memory"), "tags": ["mixed"], "refs": [0]})),
                        (_, 0) => ("/v1/search", json!({"chain_key": chain, "text": "rust", "tags_any": ["mixed", "warm"], "limit": 20})),
                        (_, 1) => ("/v1/thoughts/traverse", json!({"chain_key": chain, "anchor_boundary": "head", "direction": "backward", "chunk_size": 25})),
                        (_, 2) => ("/v1/recent-context", json!({"chain_key": chain, "last_n": 12})),
                        (_, 3) => ("/v1/head", json!({"chain_key": chain})),
                        _ => ("/v1/memory-markdown", json!({"chain_key": chain, "limit": 30})),
                    };
                    match c.post(format!("{rest}{path}")).json(&body).send() {
                        Ok(r) if r.status().as_u16() == 200 => {
                            let _ = r.bytes();
                            if path == "/v1/thoughts" { writes.fetch_add(1, Ordering::Relaxed) } else { reads.fetch_add(1, Ordering::Relaxed) };
                        }
                        Ok(r) => errors.lock().unwrap().push(format!("{path}: HTTP {} {}", r.status(), r.text().unwrap_or_default())),
                        Err(e) => errors.lock().unwrap().push(format!("{path}: {e}")),
                    }
                }
            }));
        }
        let started = Instant::now();
        let mut rss_max = rss_start;
        while started.elapsed() < duration {
            std::thread::sleep(Duration::from_millis(500));
            rss_max = rss_max.max(d.rss_kib().unwrap_or(0));
        }
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().unwrap();
        }
        (rss_start, d.rss_kib().expect("daemon RSS"), rss_max)
    };
    let started = Instant::now();
    let (rss_start, rss_end, rss_max) = run(&[0, 1, 2, 3, 4, 5, 6, 7], duration);
    let wall = started.elapsed();
    let thoughts_added = writes.load(Ordering::Relaxed);
    let mixed_reads = reads.load(Ordering::Relaxed);
    // Then readers only: with no data growth, memory should stay put.
    let (ro_start, ro_end, ro_max) = run(&[1, 3, 5, 7], duration / 2);
    let errors = errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{} errors, first: {:?}", errors.len(), errors.first());
    for chain in ["mix-a", "mix-b"] {
        head(&c, &d, chain);
    }
    println!(
        "read-only phase {:.0}s: RSS start {ro_start} KiB, end {ro_end} KiB, max {ro_max} KiB; mixed-phase RSS growth per appended thought: {:.2} KiB (chains are held in memory)",
        (duration / 2).as_secs_f64(),
        (rss_end as f64 - rss_start as f64) / thoughts_added.max(1) as f64
    );
    let (w, r) = (thoughts_added, mixed_reads);
    println!(
        "mixed load {:.1}s (4 writers + 4 readers, 2 chains): {w} writes ({:.0}/s), {r} reads ({:.0}/s), 0 errors; daemon RSS start {rss_start} KiB, end {rss_end} KiB, max {rss_max} KiB",
        wall.as_secs_f64(),
        w as f64 / wall.as_secs_f64(),
        r as f64 / wall.as_secs_f64()
    );
}
