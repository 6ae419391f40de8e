//! Core figures over the in-memory backend (README "Performance"):
//! append rate, open + verify of 1M thoughts, filtered search on 100k thoughts.
//!
//! `cargo bench -p mentisdb-core --bench core`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, NewThought, SequentialIds, Storage, ThoughtType};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const WORDS: &[&str] = &["deploy", "cache", "latency", "rate", "limit", "rollout", "schema", "migration", "canary", "token", "index", "memory", "agent", "plan", "retry", "queue"];

fn open(storage: Arc<MemoryStorage>) -> MentisDb {
    MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::starting_at(1 << 40)), DbConfig::default()).unwrap().0
}

fn thought(i: usize) -> NewThought {
    let tt = ThoughtType::ALL[i % ThoughtType::ALL.len()];
    let content = format!("{} {} {} observation number {i} about the {} subsystem", WORDS[i % 16], WORDS[(i / 16) % 16], WORDS[(i / 256) % 16], WORDS[(i * 7) % 16]);
    let mut t = NewThought::new(&format!("agent-{}", i % 8), tt, &content);
    t.importance = Some((i % 10) as f64 / 10.0);
    t.tags = vec![WORDS[(i * 3) % 16].to_string()];
    t
}

fn filled(n: usize) -> (Arc<MemoryStorage>, MentisDb) {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(storage.clone());
    for i in 0..n {
        db.append("bench", thought(i)).unwrap();
    }
    (storage, db)
}

fn append(c: &mut Criterion) {
    let mut g = c.benchmark_group("append");
    g.throughput(Throughput::Elements(1));
    let db = open(Arc::new(MemoryStorage::new()));
    let mut i = 0;
    g.bench_function("in_memory_append", |b| {
        b.iter_batched(
            || {
                i += 1;
                thought(i)
            },
            |t| db.append("bench", t).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn open_verify(c: &mut Criterion) {
    let (storage, db) = filled(1_000_000);
    drop(db);
    let mut g = c.benchmark_group("open");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.bench_function("open_and_verify_1m_thoughts", |b| b.iter_with_large_drop(|| open(storage.clone())));
    g.finish();
}

fn search(c: &mut Criterion) {
    let (_, db) = filled(100_000);
    let mut g = c.benchmark_group("search_100k");
    let cases = [
        ("types_importance_text_limit10", json!({"chain_key": "bench", "thought_types": ["Decision", "Insight", "Plan"], "min_importance": 0.5, "text": "canary", "limit": 10})),
        ("agent_tag_limit10", json!({"chain_key": "bench", "agent_ids": ["agent-3"], "tags_any": ["cache"], "limit": 10})),
        ("rare_text_all_matches", json!({"chain_key": "bench", "text": "observation number 99999 "})),
    ];
    for (name, args) in cases {
        g.bench_function(name, |b| b.iter(|| db.call("mentisdb_search", args.clone()).unwrap()));
    }
    g.finish();
}

criterion_group!(benches, append, search, open_verify);
criterion_main!(benches);
