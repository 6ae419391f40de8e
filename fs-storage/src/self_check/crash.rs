//! File-backend crash checks: the engine over [`crate::FsStorage`], crashed
//! at a sync point or left with a torn tail, reopens with every acknowledged
//! thought and a verified chain, in both chain formats.

use super::open;
use mentisdb_core::storage::fault::CrashSimStorage;
use mentisdb_core::{naming, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, OpenReport, SequentialIds, Storage};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

const CHAIN: &str = "crash";

/// Opens an engine; `ids_from` keeps ids of separate opens apart.
fn open_db(storage: Arc<dyn Storage>, format: ChainFormat, ids_from: u64) -> (MentisDb, OpenReport) {
    let config = DbConfig { default_chain_key: CHAIN.into(), default_format: format, ..DbConfig::default() };
    let clock = Arc::new(FixedClock::new(1_795_000_000_000, 7));
    MentisDb::open(storage, clock, Arc::new(SequentialIds::starting_at(ids_from)), config).expect("open the engine")
}

fn append(db: &MentisDb, i: usize) {
    db.call("mentisdb_append", json!({"chain_key": CHAIN, "thought_type": "Finding", "content": format!("fact number {i}"), "tags": ["t"]}))
        .unwrap_or_else(|e| panic!("append {i}: {e}"));
}

fn thought_count(db: &MentisDb) -> u64 {
    db.call("mentisdb_head", json!({"chain_key": CHAIN})).expect("head")["thought_count"].as_u64().expect("thought_count")
}

/// Contents of the chain in `image`, after checking it opens and verifies.
fn recovered_contents(image: MemoryStorage, format: ChainFormat) -> Vec<String> {
    let (db, report) = open_db(Arc::new(image), format, 1_000_000);
    assert!(report.refused.is_empty(), "nothing may be refused after a crash: {:?}", report.refused);
    let head = db.call("mentisdb_head", json!({"chain_key": CHAIN})).expect("head");
    assert_eq!(head["integrity_ok"], true, "{head}");
    let all = db
        .call("mentisdb_traverse_thoughts", json!({"chain_key": CHAIN, "anchor_boundary": "genesis", "direction": "forward", "include_anchor": true, "chunk_size": 1000}))
        .expect("traverse");
    all["thoughts"].as_array().expect("thoughts").iter().map(|t| t["content"].as_str().expect("content").to_string()).collect()
}

/// A power loss after five acknowledged appends (torn bytes after the last
/// sync point) keeps exactly the acknowledged thoughts.
pub(super) fn crash_image_keeps_acknowledged_thoughts(dir: &Path) {
    for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
        let dir = dir.join(format!("{format:?}"));
        let sim = Arc::new(CrashSimStorage::new(open(&dir)));
        let (db, _) = open_db(sim.clone(), format, 0);
        let mut acked = Vec::new();
        for i in 0..5 {
            append(&db, i);
            acked.push(format!("fact number {i}"));
        }
        assert_eq!(recovered_contents(sim.crash_with_torn_tails(9), format), acked, "{format:?}: the crash image must hold exactly the acknowledged thoughts");
    }
}

/// Garbage after the last record is cut from the file on reopen and
/// reported; the chain keeps serving and appending.
pub(super) fn torn_tail_is_cut_on_reopen(dir: &Path) {
    for (format, garbage) in [(ChainFormat::Binary, &[7u8, 0, 0, 0, 1, 2][..]), (ChainFormat::Jsonl, &b"{\"index\":5,\"content\":\"half a li"[..])] {
        let dir = dir.join(format!("{format:?}"));
        let object = naming::chain_object(CHAIN, format);
        {
            let storage = Arc::new(open(&dir));
            let (db, _) = open_db(storage.clone(), format, 0);
            for i in 0..3 {
                append(&db, i);
            }
            storage.append(&object, garbage).unwrap();
            storage.sync(&object).unwrap();
        }
        let path = dir.join(&object);
        let before = std::fs::metadata(&path).expect("chain file").len();
        let (db, report) = open_db(Arc::new(open(&dir)), format, 100);
        assert!(report.refused.is_empty(), "{:?}", report.refused);
        assert_eq!(report.chains[0].torn_tail_bytes, garbage.len(), "{format:?}: the torn tail is reported");
        assert_eq!(std::fs::metadata(&path).expect("chain file").len(), before - garbage.len() as u64, "{format:?}: the tail is cut on disk");
        assert_eq!(thought_count(&db), 3);
        append(&db, 3);
        let (db, report) = open_db(Arc::new(open(&dir)), format, 200);
        assert_eq!(report.chains[0].torn_tail_bytes, 0);
        assert_eq!(thought_count(&db), 4);
    }
}
