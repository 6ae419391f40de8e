//! Exports one function that runs a small workload through the core's
//! dispatcher over in-memory storage, so that a wasm build of this crate links
//! (and would import) everything the engine touches.

use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds};
use std::sync::Arc;

/// Appends `n` thoughts, searches, renders, and returns the number of matches.
#[no_mangle]
pub extern "C" fn mentisdb_probe(n: u32) -> u32 {
    let (db, _) = MentisDb::open(
        Arc::new(MemoryStorage::new()),
        Arc::new(FixedClock::new(1_795_000_000_000, 1)),
        Arc::new(SequentialIds::default()),
        DbConfig::default(),
    )
    .expect("open");
    for i in 0..n {
        let _ = db.call("mentisdb_append", serde_json::json!({"thought_type": "Insight", "content": format!("probe {i}")}));
    }
    let mut matched = 0;
    for tool in mentisdb_core::tool_specs() {
        if let Ok(v) = db.call(tool.name, serde_json::json!({"text": "probe", "agent_id": "a", "content": "x", "skill_id": "s"})) {
            matched += v.to_string().len() as u32;
        }
    }
    matched
}
