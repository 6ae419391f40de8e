//! Times the phases of append and open on N thoughts (a profiling aid, not a bench).
//! `cargo run --release -p mentisdb-core --example profile_phases -- 200000`
use mentisdb_core::{canonical, record, Chain, DbConfig, FixedClock, MemoryStorage, MentisDb, NewThought, SequentialIds, Storage, ThoughtType};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    let t0 = Instant::now();
    for i in 0..n {
        let mut t = NewThought::new(&format!("agent-{}", i % 8), ThoughtType::ALL[i % 28], &format!("observation number {i} about the cache subsystem and rollout"));
        t.tags = vec!["cache".into()];
        db.append("p", t).unwrap();
    }
    let append = t0.elapsed();
    drop(db);
    let name = storage.list("chains/").unwrap().into_iter().find(|n| n.ends_with(".mdb")).unwrap();
    let bytes = storage.read(&name).unwrap().unwrap();
    let t1 = Instant::now();
    let decoded = record::decode_chain(&bytes).unwrap();
    let decode = t1.elapsed();
    let t2 = Instant::now();
    let mut ok = 0;
    for t in &decoded.thoughts {
        if canonical::compute_thought_hash(t) == t.hash {
            ok += 1;
        }
    }
    let hash = t2.elapsed();
    let t3 = Instant::now();
    let chain = Chain::load(decoded, Default::default()).unwrap();
    let load = t3.elapsed();
    let t4 = Instant::now();
    let (db, _) = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(0, 1)), Arc::new(SequentialIds::starting_at(1 << 40)), DbConfig::default()).unwrap();
    let open = t4.elapsed();
    let t6 = Instant::now();
    db.call("mentisdb_search", serde_json::json!({"chain_key": "p", "text": "rollout", "limit": 10})).unwrap();
    let first_text = t6.elapsed();
    let t7 = Instant::now();
    db.call("mentisdb_ranked_search", serde_json::json!({"chain_key": "p", "text": "cache rollout"})).unwrap();
    let first_ranked = t7.elapsed();
    println!("after open: first text search {first_text:?} (builds the text signatures), first ranked search {first_ranked:?} (builds the ranked index)");
    let t5 = Instant::now();
    drop(db);
    let dropped = t5.elapsed();
    println!("MentisDb::open (sequential) {open:?}, then dropping it {dropped:?}");
    println!("n={n} append {:.2} us/op | decode {:?} | rehash {:?} ({ok}) | Chain::load (verify+commit) {:?} | {} thoughts",
        append.as_secs_f64() * 1e6 / n as f64, decode, hash, load, chain.len());
}
