//! Crash tests in the redb style, for both chain formats: an append may be
//! interrupted at every point (short write, failed fsync, power loss with or
//! without a torn tail); after reopening, every acknowledged thought is there
//! and the chain verifies. The same checks over the real file backend
//! (crash image, torn tail cut on reopen) are part of
//! `mentisdb_fs_storage::self_check`, run natively by that crate's tests and
//! inside the WASI component by its `self-test` export.

use mentisdb_core::storage::fault::{CrashSimStorage, FailOp, FailingStorage};
use mentisdb_core::{ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, Storage};
use serde_json::{json, Value};
use std::sync::Arc;

const APPENDS: usize = 12;

fn open(storage: Arc<dyn Storage>, format: ChainFormat) -> (MentisDb, mentisdb_core::OpenReport) {
    let config = DbConfig { default_chain_key: "crash".into(), default_format: format, ..DbConfig::default() };
    MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 7)), Arc::new(mentisdb_std_host::OsRandomIds), config).expect("open")
}

fn append(db: &MentisDb, i: usize) -> Result<Value, mentisdb_core::ToolError> {
    db.call("mentisdb_append", json!({"chain_key": "crash", "thought_type": "Finding", "content": format!("fact number {i}"), "tags": ["t"]}))
}

/// Contents of the reopened chain, after checking it verifies.
fn recovered_contents(image: MemoryStorage, format: ChainFormat) -> Vec<String> {
    let (db, report) = open(Arc::new(image), format);
    assert!(report.refused.is_empty(), "nothing may be refused after a crash: {:?}", report.refused);
    let head = db.call("mentisdb_head", json!({"chain_key": "crash"})).unwrap();
    assert_eq!(head["integrity_ok"], true, "{head}");
    let n = head["thought_count"].as_u64().unwrap() as usize;
    let all = db.call("mentisdb_traverse_thoughts", json!({"chain_key": "crash", "anchor_boundary": "genesis", "direction": "forward", "include_anchor": true, "chunk_size": 1000})).unwrap();
    let contents: Vec<String> = all["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap().to_string()).collect();
    assert_eq!(contents.len(), n);
    contents
}

fn assert_acked_kept(acked: &[String], recovered: &[String], what: &str) {
    // Acknowledged thoughts are a prefix-ordered subsequence of what survived.
    let mut it = recovered.iter();
    for a in acked {
        assert!(it.any(|r| r == a), "{what}: acknowledged thought {a:?} lost; recovered {recovered:?}");
    }
}

#[test]
fn power_loss_after_every_append_keeps_every_acknowledged_thought() {
    for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
        let sim = Arc::new(CrashSimStorage::new(MemoryStorage::new()));
        let (db, _) = open(sim.clone(), format);
        let mut acked = Vec::new();
        for i in 0..APPENDS {
            append(&db, i).unwrap();
            acked.push(format!("fact number {i}"));
            for keep in [0, 3, 40, 100_000] {
                let recovered = recovered_contents(sim.crash_with_torn_tails(keep), format);
                assert_eq!(recovered, acked, "{format:?} keep={keep}: a crash after an acknowledged append keeps exactly the acknowledged thoughts");
            }
        }
    }
}

/// Runs the workload over a backend that fails the `nth` `op`, then crashes.
fn interrupted_run(format: ChainFormat, op: FailOp, nth: u64, keep: usize) -> (Vec<String>, bool) {
    let failing = Arc::new(FailingStorage::new(CrashSimStorage::new(MemoryStorage::new()), op, nth));
    let (db, _) = open(failing.clone(), format);
    let mut acked = Vec::new();
    for i in 0..APPENDS {
        if append(&db, i).is_ok() {
            acked.push(format!("fact number {i}"));
        }
    }
    let failed = failing.has_failed();
    let recovered = recovered_contents(failing.inner().crash_with_torn_tails(keep), format);
    assert_acked_kept(&acked, &recovered, &format!("{format:?} {op:?}#{nth} keep={keep}"));
    // Unacknowledged thoughts may survive only as whole, verified records.
    assert!(recovered.len() <= APPENDS);
    (acked, failed)
}

#[test]
fn a_failed_write_or_fsync_at_every_point_loses_nothing_acknowledged() {
    for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
        for op in [FailOp::Append, FailOp::Sync] {
            // +1 for the chain header's own append/sync.
            for nth in 1..=(APPENDS as u64 + 1) {
                for keep in [0, 5, 100_000] {
                    let (acked, failed) = interrupted_run(format, op, nth, keep);
                    assert!(failed, "{op:?}#{nth} was injected");
                    assert!(acked.len() >= APPENDS - 1, "{format:?} {op:?}#{nth}: only the injected failure may be refused, the process keeps serving ({} acked)", acked.len());
                }
            }
        }
    }
}

#[test]
fn a_failed_registry_write_leaves_the_registry_unchanged() {
    for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
        let failing = Arc::new(FailingStorage::new(CrashSimStorage::new(MemoryStorage::new()), FailOp::WriteAtomic, 2));
        let (db, _) = open(failing.clone(), format);
        let upsert = |name: &str| db.call("mentisdb_upsert_agent", json!({"chain_key": "crash", "agent_id": "a1", "display_name": name}));
        upsert("first").unwrap();
        assert!(upsert("second").is_err(), "the injected sidecar failure is reported");
        let agent = db.call("mentisdb_get_agent", json!({"chain_key": "crash", "agent_id": "a1"})).unwrap();
        assert_eq!(agent["agent"]["display_name"], "first");
        let (reopened, report) = open(Arc::new(failing.inner().crash()), format);
        assert!(report.refused.is_empty());
        let agent = reopened.call("mentisdb_get_agent", json!({"chain_key": "crash", "agent_id": "a1"})).unwrap();
        assert_eq!(agent["agent"]["display_name"], "first", "the durable sidecar is the last acknowledged one");
    }
}
