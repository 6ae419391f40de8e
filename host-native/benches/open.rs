//! Opening + verifying 1M thoughts the way `mentisdbd` does at startup:
//! records decoded and hashed on the daemon's threads ([`ScopedThreads`]),
//! over the in-memory backend so the figure is the engine's, not the disk's.
//! The single-threaded figure (browser, WASI) is `cargo bench -p mentisdb-core --bench core`.
//!
//! `cargo bench -p mentisdb-native --bench open`

use criterion::{criterion_group, criterion_main, Criterion};
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, NewThought, SequentialIds, Storage, ThoughtType};
use mentisdb_std_host::ScopedThreads;
use std::sync::Arc;
use std::time::Duration;

fn open(storage: Arc<MemoryStorage>) -> MentisDb {
    let config = DbConfig { parallelism: Arc::new(ScopedThreads::per_cpu()), ..DbConfig::default() };
    MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::starting_at(1 << 40)), config).unwrap().0
}

fn open_verify(c: &mut Criterion) {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(storage.clone());
    // The same thoughts as the core bench.
    const WORDS: &[&str] = &["deploy", "cache", "latency", "rate", "limit", "rollout", "schema", "migration", "canary", "token", "index", "memory", "agent", "plan", "retry", "queue"];
    // `cargo test --all-targets` runs benches once without `--bench`: a small chain then.
    let n = if std::env::args().any(|a| a == "--bench") { 1_000_000 } else { 1_000 };
    for i in 0..n {
        let content = format!("{} {} {} observation number {i} about the {} subsystem", WORDS[i % 16], WORDS[(i / 16) % 16], WORDS[(i / 256) % 16], WORDS[(i * 7) % 16]);
        let mut t = NewThought::new(&format!("agent-{}", i % 8), ThoughtType::ALL[i % ThoughtType::ALL.len()], &content);
        t.importance = Some((i % 10) as f64 / 10.0);
        t.tags = vec![WORDS[(i * 3) % 16].to_string()];
        db.append("bench", t).unwrap();
    }
    drop(db);
    let mut g = c.benchmark_group("open");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.bench_function("open_and_verify_1m_thoughts_threads", |b| b.iter_with_large_drop(|| open(storage.clone())));
    g.finish();
}

criterion_group!(benches, open_verify);
criterion_main!(benches);
