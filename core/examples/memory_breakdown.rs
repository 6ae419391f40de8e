//! Where an engine's memory goes, per thought (a measuring aid for
//! docs/performance.md, not a test).
//!
//! Appends N thoughts shaped like `scripts/loadbench/append.lua`'s (~80 bytes
//! of content, two tags, one concept, eight agents) to one chain on the
//! in-memory backend, counting live heap bytes with a wrapping allocator, and
//! prints the bytes per thought of each part: the thoughts themselves (the
//! `Thought` structs and each heap string they own), the engine's lookups
//! beside them, the text filter's index, the ranked index. The storage
//! backend's copy of the chain is measured and left out (the daemon's is on
//! disk).
//!
//! `cargo run --release -p mentisdb-core --example memory_breakdown -- 100000`
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, NewThought, SequentialIds, Label, Storage, Thought, ThoughtExtras, ThoughtType};
use std::sync::Arc;

/// The system allocator, counting the bytes it has handed out and not had back.
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

fn live() -> isize {
    ALLOCATOR.allocated() as isize
}

/// The heap bytes an id owns: none for a UUID (kept as its 16 bytes).
fn id_heap(id: &mentisdb_core::ThoughtId) -> usize {
    match id.as_text() {
        mentisdb_core::IdText::Written(text) => text.len(),
        mentisdb_core::IdText::Made(_) => 0,
    }
}

/// The heap bytes one thought's strings and lists own (capacities, as
/// allocated; its hashes and salt are inline bytes).
fn owned_heap(t: &Thought, seen: &mut std::collections::BTreeSet<usize>) -> usize {
    let o = |s: &Option<Box<str>>| s.as_ref().map_or(0, |s| s.len());
    // A label's text is counted once per chain (the first thought holding
    // it), with the Arc's two counts and the text's pointer and length; the
    // rest share it.
    let mut label = |l: &Label| if !l.is_empty() && seen.insert(l.as_ptr() as usize) { l.len() + 32 } else { 0 };
    let labels = [&t.agent_id, &t.agent_name].into_iter().chain(t.tags.iter()).chain(t.concepts.iter()).map(&mut label).sum::<usize>();
    // So is a list of tags or concepts (`LabelList`).
    let mut list = |l: &mentisdb_core::LabelList| if !l.is_empty() && seen.insert(l.as_ptr() as usize) { std::mem::size_of_val(&**l) + 32 } else { 0 };
    let lists = list(&t.tags) + list(&t.concepts);
    let extras = t.extras.as_deref().map_or(0, |e| {
        std::mem::size_of::<ThoughtExtras>()
            + o(&e.session_id)
            + o(&e.agent_owner)
            + o(&e.signing_key_id)
            + e.thought_signature.as_ref().map_or(0, |s| s.len())
            + e.refs.capacity() * 8
            + e.relations.capacity() * std::mem::size_of::<mentisdb_core::ThoughtRelation>()
            + o(&e.entity_type)
            + o(&e.timestamp_text)
            + e.forgotten.as_ref().map_or(0, |f| std::mem::size_of::<mentisdb_core::Forgotten>() + f.content_digest.len() + f.forgotten_at.len() + f.forgotten_by.len() + f.reason.len())
    });
    id_heap(&t.id) + t.content.len() + lists + labels + extras
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let per = |bytes: isize| bytes as f64 / n as f64;
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(1_795_339_800_000, 3)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    let before = live();
    for i in 1..=n {
        let mut t = NewThought::new(&format!("agent-{}", i % 8), ThoughtType::Finding, &format!("Thought {i} about database latency observed during load testing of the daemon."));
        t.importance = Some((i % 10) as f64 / 10.0);
        t.tags = vec![format!("t{}", i % 20), "bench".into()];
        t.concepts = vec!["memory".into()];
        db.append("bench-append", t).unwrap();
    }
    let after_appends = live();
    let (structs, strings) = db
        .with_chain("bench-append", |c| {
            let c = c.expect("the chain exists");
            (c.len() * std::mem::size_of::<Thought>(), {
                let mut seen = std::collections::BTreeSet::new();
                c.thoughts().iter().map(|t| owned_heap(t, &mut seen)).sum::<usize>()
            })
        })
        .unwrap();
    let before_text = live();
    db.call("mentisdb_search", serde_json::json!({"chain_key": "bench-append", "text": "latency", "limit": 10})).unwrap();
    let text = live() - before_text;
    let before_ranked = live();
    db.call("mentisdb_ranked_search", serde_json::json!({"chain_key": "bench-append", "text": "database latency"})).unwrap();
    let ranked = live() - before_ranked;
    // What the engine holds is what dropping it gives back; the rest is the
    // backend's copy of the chain (with its buffers' slack).
    let with_engine = live();
    drop(db);
    let engine = with_engine - live();
    let stored = live() - before;
    let appended = after_appends - before - stored;

    println!("{n} thoughts; live heap bytes per thought:");
    println!("  the in-memory backend's copy of the chain (left out):      {:7.1}", per(stored));
    println!("  appended (thoughts + the engine's lookups):               {:7.1}", per(appended));
    println!("    Thought structs ({} B each, at the chain's length):     {:7.1}", std::mem::size_of::<Thought>(), per(structs as isize));
    println!("    strings and lists the thoughts own:                      {:7.1}", per(strings as isize));
    println!("    the rest (list slack, id/hash lookups, agents):          {:7.1}", per(appended - (structs + strings) as isize));
    println!("  text filter signatures (first text search):               {:7.1}", per(text));
    println!("  ranked index (first ranked search):                       {:7.1}", per(ranked));
    println!("  the engine in all (what dropping it gave back):          {:7.1}", per(engine));
}
