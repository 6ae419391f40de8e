//! Core figures over the in-memory backend (docs/performance.md):
//! append rate, open + verify of 1M thoughts, filtered search on 100k thoughts,
//! and the cost of secret redaction per append.
//!
//! `cargo bench -p mentisdb-core --bench core` (`-- redact` for redaction only)

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mentisdb_core::redact;
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, NewThought, SequentialIds, Storage, ThoughtType};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const WORDS: &[&str] = &["deploy", "cache", "latency", "rate", "limit", "rollout", "schema", "migration", "canary", "token", "index", "memory", "agent", "plan", "retry", "queue"];

fn open(storage: Arc<MemoryStorage>) -> MentisDb {
    open_with(storage, DbConfig::default())
}

fn open_with(storage: Arc<MemoryStorage>, config: DbConfig) -> MentisDb {
    MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::starting_at(1 << 40)), config).unwrap().0
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

/// ~300 bytes of an agent's note without secrets, with near misses
/// (a URL without a password, `sk-learn`, "bearer", "Authorization").
fn note(i: usize) -> String {
    format!(
        "Deploy {i}: the {} rollout moved the cache to https://cache.internal:6379/0 and retried the queue. \
         We kept sk-learn for the ranking model; the bearer of the change is agent-{}. Authorization is still required \
         for the admin API, see docs at https://example.com/ops?run={i}. Latency dropped from 120 ms to 45 ms.",
        WORDS[i % 16],
        i % 8
    )
}

fn redaction(c: &mut Criterion) {
    let mut g = c.benchmark_group("append");
    g.throughput(Throughput::Elements(1));
    for (name, on) in [("redaction_on", true), ("redaction_off", false)] {
        let db = open_with(Arc::new(MemoryStorage::new()), DbConfig { redact_secrets: on, ..DbConfig::default() });
        let mut i = 0;
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    i += 1;
                    NewThought::new("agent-1", ThoughtType::Finding, &note(i))
                },
                |t| db.append("bench", t).unwrap(),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
    let mut g = c.benchmark_group("redact");
    let short = note(7);
    assert!(redact::scan(&short).is_empty(), "the note holds no secret");
    g.throughput(Throughput::Bytes(short.len() as u64));
    g.bench_function("scan_300b_note", |b| b.iter(|| redact::scan(std::hint::black_box(&short))));
    let mut big = String::new();
    for i in 0.. {
        if big.len() >= 256 * 1024 {
            break;
        }
        big.push_str(&note(i));
    }
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.bench_function("scan_256k", |b| b.iter(|| redact::scan(std::hint::black_box(&big))));
    // Hostile 256 KiB contents: one long run full of rule starts. Each must
    // cost about what ordinary text does (no rule reads a run again from
    // every start inside it).
    for (name, unit) in [("sk", "sk-"), ("jwt", "eyJ-"), ("pem", "-----BEGIN "), ("url", "a://b:c"), ("bearer", "Bearer x")] {
        let hostile = unit.repeat(256 * 1024 / unit.len());
        g.throughput(Throughput::Bytes(hostile.len() as u64));
        g.bench_function(format!("scan_256k_hostile_{name}"), |b| b.iter(|| redact::scan(std::hint::black_box(&hostile))));
    }
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

criterion_group!(benches, append, redaction, search, open_verify);
criterion_main!(benches);
