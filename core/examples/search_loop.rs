//! The filtered search `scripts/loadbench/search.lua` sends, over the 1,000
//! thoughts `scripts/loadbench/seed_search.py` seeds, in process (a profiling
//! aid, not a bench): prints per-call p50 for a search with hits, one with
//! none, and `mentisdb_head`, each as the daemon calls the dispatcher.
//! `cargo run --release -p mentisdb-core --example search_loop -- 20000`
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let (db, _) = MentisDb::open(Arc::new(MemoryStorage::new()) as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    let types = ["Finding", "Decision", "Constraint", "Insight", "Mistake", "Correction", "Plan"];
    let topics = ["rate limit", "deployment", "database latency", "memory", "rust", "embeddings"];
    for i in 0..1000usize {
        db.call("mentisdb_append", json!({"chain_key": "bench-search", "agent_id": format!("agent-{}", i % 8), "thought_type": types[i % 7],
            "importance": (i % 10) as f64 / 10.0, "tags": [format!("t{}", i % 20), "bench"], "concepts": [topics[i % 6]],
            "content": format!("Thought {i} about {} observed during load testing of the daemon.", topics[(i / 3) % 6])})).unwrap();
    }
    let search = |text: &str| json!({"chain_key": "bench-search", "text": text, "thought_types": ["Finding", "Decision", "Insight", "Mistake"], "min_importance": 0.3, "limit": 10});
    let only = std::env::args().nth(2);
    for (name, tool, args) in [("search, 10 hits", "mentisdb_search", search("memory")), ("search, no hit", "mentisdb_search", search("zzzqqq")), ("head", "mentisdb_head", json!({"chain_key": "bench-search"}))] {
        if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
            continue;
        }
        let mut times = Vec::with_capacity(rounds);
        let mut bytes = 0;
        for _ in 0..rounds {
            let body = serde_json::to_vec(&args).unwrap();
            let t = Instant::now();
            let args: Value = serde_json::from_slice(&body).unwrap();
            let raw = db.call_raw(tool, args).unwrap();
            bytes = raw.get().len();
            times.push(t.elapsed().as_nanos() as f64 / 1000.0);
        }
        times.sort_by(f64::total_cmp);
        println!("{name}: p50 {:.1} us, p99 {:.1} us, reply {bytes} B", times[rounds / 2], times[rounds * 99 / 100]);
    }
}
