//! Crash harness: the real `mentisdbd` is SIGKILLed at random moments while
//! several clients append over REST; after every restart the chains must
//! open and verify, hold every acknowledged append exactly once, and hold
//! nothing that is not a whole record of something a client sent.
//!
//! CI runs a modest number of cycles. The long run (>= 50 cycles):
//! `MENTISDB_CRASH_CYCLES=60 cargo test -p mentisdb-tests --test reliability -- crash:: --nocapture`
//! Knobs: `MENTISDB_CRASH_CYCLES` (default 12), `MENTISDB_CRASH_WRITERS`
//! (default 6), `MENTISDB_CRASH_SEED` (default: time-based, printed).

use mentisdb_tests::daemon::{all_thoughts, client, data_dir, head, ok, Daemon};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// xorshift64*: enough randomness for kill timing, reproducible from the seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One chain per storage format, so both record formats see torn tails.
const CHAINS: [(&str, &str); 2] = [("crash-binary", "binary"), ("crash-jsonl", "jsonl")];

#[derive(Default)]
struct Ledger {
    /// content -> (chain, thought id) of every acknowledged (HTTP 200) append.
    acked: BTreeMap<String, (String, String)>,
    /// content of every append ever sent (acknowledged or not).
    sent: BTreeSet<String>,
}

/// Appends from `writers` threads until `stop`; records what was sent and acknowledged.
fn run_writers(d: &Daemon, cycle: u64, writers: u64, ledger: &Arc<Mutex<Ledger>>, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    (0..writers)
        .map(|w| {
            let url = format!("{}/v1/thoughts", d.rest);
            let ledger = ledger.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let c = reqwest::blocking::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let (chain, _) = CHAINS[((w + n) % 2) as usize];
                    let content = format!("cycle {cycle} writer {w} append {n} {}", "payload ".repeat((n % 7) as usize));
                    n += 1;
                    ledger.lock().unwrap().sent.insert(content.clone());
                    let body = json!({"chain_key": chain, "thought_type": "Finding", "content": content, "tags": ["crash"], "importance": 0.5});
                    let Ok(r) = c.post(&url).json(&body).send() else { break };
                    if r.status().as_u16() != 200 {
                        break;
                    }
                    let Ok(v) = r.json::<Value>() else { break };
                    let id = v["thought"]["id"].as_str().expect("acknowledged append returns the thought").to_string();
                    assert_eq!(v["thought"]["content"], content.as_str());
                    ledger.lock().unwrap().acked.insert(content, (chain.to_string(), id));
                }
            })
        })
        .collect()
}

/// The checks after a restart: chains open and verify; every acknowledged
/// append is present exactly once with its id; every stored thought is a
/// whole record of something a client sent; indices are 0..n with no gap.
fn check_recovered(d: &Daemon, ledger: &Ledger, cycle: u64) -> usize {
    assert_eq!(d.refused_at_startup(), 0, "cycle {cycle}: a chain was refused at startup: {}\n{}", d.startup_line, d.stderr());
    let c = client();
    let mut seen: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut total = 0;
    for (chain, _) in CHAINS {
        let (_, count) = head(&c, d, chain);
        let thoughts = all_thoughts(&c, d, chain);
        assert_eq!(Some(thoughts.len() as u64), count.as_u64(), "cycle {cycle}: traversal of {chain} sees every thought");
        for (i, t) in thoughts.iter().enumerate() {
            assert_eq!(t["index"], i as u64, "cycle {cycle}: {chain} indices are contiguous");
            if i > 0 {
                assert_eq!(t["prev_hash"], thoughts[i - 1]["hash"], "cycle {cycle}: {chain} is one linear chain");
            }
            let content = t["content"].as_str().unwrap().to_string();
            if content == "purpose" {
                continue;
            }
            assert!(ledger.sent.contains(&content), "cycle {cycle}: {chain}[{i}] holds content no client sent: {content:?}");
            let prev = seen.insert(content.clone(), (chain.to_string(), t["id"].as_str().unwrap().to_string()));
            assert!(prev.is_none(), "cycle {cycle}: {content:?} is stored twice");
        }
        total += thoughts.len();
    }
    for (content, (chain, id)) in &ledger.acked {
        match seen.get(content) {
            Some((c2, id2)) => assert!(c2 == chain && id2 == id, "cycle {cycle}: {content:?} moved: acked as {chain}/{id}, found {c2}/{id2}"),
            None => panic!("cycle {cycle}: acknowledged append LOST: {chain}/{id} {content:?}"),
        }
    }
    total
}

#[test]
fn sigkill_at_random_moments_loses_no_acknowledged_append() {
    let cycles = env_or("MENTISDB_CRASH_CYCLES", 12);
    let writers = env_or("MENTISDB_CRASH_WRITERS", 6);
    let seed = env_or("MENTISDB_CRASH_SEED", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1);
    println!("crash harness: cycles={cycles} writers={writers} seed={seed}");
    let mut rng = Rng(seed);
    let (_root, dir) = data_dir();
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    {
        let d = Daemon::start(&dir, &[], &[]);
        let c = client();
        for (chain, format) in CHAINS {
            ok(&c, &d, "/v1/bootstrap", json!({"chain_key": chain, "content": "purpose", "storage_adapter": format}));
        }
        d.kill();
    }
    let started = Instant::now();
    for cycle in 0..cycles {
        let d = Daemon::start(&dir, &[], &[]);
        check_recovered(&d, &ledger.lock().unwrap(), cycle);
        let stop = Arc::new(AtomicBool::new(false));
        let handles = run_writers(&d, cycle, writers, &ledger, &stop);
        // Kill somewhere between 50 ms and 1.5 s into the load.
        std::thread::sleep(Duration::from_millis(50 + rng.below(1450)));
        d.kill();
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().expect("writer thread");
        }
    }
    let d = Daemon::start(&dir, &[], &[]);
    let stored = check_recovered(&d, &ledger.lock().unwrap(), cycles);
    let l = ledger.lock().unwrap();
    println!(
        "crash harness: {cycles} SIGKILL cycles in {:.1}s, {} appends sent, {} acknowledged, 0 acknowledged lost, {} thoughts stored (incl. 2 bootstrap), {} appends in flight at the kill (never acknowledged) survived as whole records",
        started.elapsed().as_secs_f64(),
        l.sent.len(),
        l.acked.len(),
        stored,
        stored - 2 - l.acked.len(),
    );
    assert!(l.acked.len() as u64 >= cycles, "the load acknowledged appends in most cycles ({} acked)", l.acked.len());
}
