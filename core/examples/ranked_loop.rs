//! Asks one LoCoMo conversation's questions over and over in process, the way
//! the daemon calls the dispatcher (a profiling aid for ranked queries, not a
//! bench): prints the per-query p50/p99 and queries/s after the index is built.
//! `cargo run --release -p mentisdb-core --example ranked_loop -- ../shared/bench/locomo/conv-26.json 20`
//! Under a profiler: `perf record -g target/release/examples/ranked_loop FILE 200`.
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(path), rounds) = (args.next(), args.next().and_then(|s| s.parse::<usize>().ok()).unwrap_or(20)) else {
        eprintln!("usage: ranked_loop <conv-*.json> [rounds]");
        std::process::exit(2);
    };
    let conv: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{path}: {e}")))).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    // Sessions sit under "conversation" in LoCoMo's release, at the top level here.
    let sessions = conv.get("conversation").unwrap_or(&conv).as_object().unwrap_or_else(|| fail(format!("{path}: not a LoCoMo conversation")));
    let mut turns = 0;
    for n in 1.. {
        let Some(session) = sessions.get(&format!("session_{n}")).and_then(Value::as_array) else { break };
        for turn in session {
            let args = json!({ "chain_key": "conv", "agent_id": turn["speaker"], "thought_type": "FactLearned", "content": turn["text"], "tags": [format!("dia:{}", turn["dia_id"].as_str().unwrap_or(""))] });
            db.call("mentisdb_append", args).unwrap();
            turns += 1;
        }
    }
    let questions: Vec<String> = conv["qa"].as_array().into_iter().flatten().filter(|q| q["category"] != 5).filter_map(|q| q["question"].as_str().map(|s| format!("{{\"chain_key\":\"conv\",\"text\":{},\"limit\":10}}", json!(s)))).collect();
    // The first query builds the ranked index; leave it out of the figures.
    db.call_raw("mentisdb_ranked_search", serde_json::from_str(&questions[0]).unwrap()).unwrap();
    let mut latencies = Vec::with_capacity(rounds * questions.len());
    let start = Instant::now();
    for _ in 0..rounds {
        for q in &questions {
            let t0 = Instant::now();
            // As the daemon does: the body parsed to a Value, the reply serialized once.
            let reply = db.call_raw("mentisdb_ranked_search", serde_json::from_str(q).unwrap()).unwrap();
            std::hint::black_box(reply.get().len());
            latencies.push(t0.elapsed());
        }
    }
    let total = start.elapsed();
    latencies.sort();
    let at = |q: f64| latencies.get(((latencies.len() as f64 * q).ceil() as usize).saturating_sub(1)).copied().unwrap_or(Duration::ZERO);
    println!(
        "{turns} turns, {} questions x {rounds}: {:.0} queries/s, p50 {:.1} us, p99 {:.1} us",
        questions.len(),
        latencies.len() as f64 / total.as_secs_f64(),
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

fn fail(reason: String) -> ! {
    eprintln!("ranked_loop: {reason}");
    std::process::exit(1)
}
