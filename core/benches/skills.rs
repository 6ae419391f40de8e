//! Skill registry: upload 1,000 versions of one skill, then read the first
//! and the last version. Reads are served from the in-memory index built at
//! open, so reading version 1 and version 1,000 cost the same; reopening
//! (replaying the log) is linear in the log size.
//!
//! Run: `cargo bench -p mentisdb-core --bench skills`

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
use serde_json::{json, Value};
use std::sync::Arc;

const VERSIONS: usize = 1_000;

fn content(i: usize) -> String {
    format!(
        "---\nname: Deploy Service\ndescription: Ship the service safely, revision {i}\ntags: [ops, deploy]\ntriggers: [ship it]\n---\n# Deploy Service\n\n{}\nRevision {i}.\n",
        "1. Run the tests.\n2. Build the release.\n3. Roll out by region and watch the dashboards.\n".repeat(8)
    )
}

fn open(storage: Arc<dyn Storage>) -> MentisDb {
    MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap().0
}

fn upload_all(db: &MentisDb) -> Vec<String> {
    db.call("mentisdb_upsert_agent", json!({"chain_key": "bench", "agent_id": "bencher", "agent_owner": "bench"})).unwrap();
    (0..VERSIONS)
        .map(|i| {
            let s = db.call("mentisdb_upload_skill", json!({"chain_key": "bench", "agent_id": "bencher", "skill_id": "deploy", "content": content(i)})).unwrap();
            s["skill"]["latest_version_id"].as_str().unwrap().to_string()
        })
        .collect()
}

fn read(db: &MentisDb, version_id: &str) -> Value {
    db.call("mentisdb_read_skill", json!({"skill_id": "deploy", "version_id": version_id})).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("skills");
    g.sample_size(10);
    g.bench_function("upload_1000_versions", |b| {
        b.iter_batched(|| open(Arc::new(MemoryStorage::new())), |db| black_box(upload_all(&db)), BatchSize::PerIteration)
    });
    let storage: Arc<MemoryStorage> = Arc::new(MemoryStorage::new());
    let db = open(storage.clone());
    let ids = upload_all(&db);
    assert_eq!(read(&db, &ids[0])["content"], content(0));
    assert_eq!(read(&db, &ids[VERSIONS - 1])["content"], content(VERSIONS - 1));
    g.sample_size(100);
    g.bench_function("read_first_of_1000", |b| b.iter(|| black_box(read(&db, &ids[0]))));
    g.bench_function("read_last_of_1000", |b| b.iter(|| black_box(read(&db, &ids[VERSIONS - 1]))));
    let text = content(0);
    g.bench_function("safety_scan_one_version", |b| b.iter(|| black_box(mentisdb_core::skills::safety::scan(black_box(&text)))));
    g.sample_size(10);
    g.bench_function("reopen_replay_1000_versions", |b| b.iter(|| black_box(open(storage.clone()))));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
