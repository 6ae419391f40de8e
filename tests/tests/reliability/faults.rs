//! Fault injection below the engine: a storage backend fails at every point
//! of a mixed workload (each `append`, `sync` and `write_atomic` call index,
//! over a binary chain, a JSONL chain, agent-registry sidecars and the skill
//! log), then the machine "crashes" (only the durable image survives, with
//! and without torn tails). Each failure must be reported with the backend's
//! cause, the engine must keep serving, and after reopening nothing
//! acknowledged may be missing. A dead object (every write to one chain
//! fails) must not stop the other chains.
//!
//! `cargo test -p mentisdb-tests --test reliability -- faults::`

use mentisdb_core::storage::fault::{CrashSimStorage, FailOp, FailingStorage};
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage, StorageError, ToolError};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

fn open(storage: Arc<dyn Storage>) -> (MentisDb, mentisdb_core::OpenReport) {
    MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 7)), Arc::new(SequentialIds::default()), DbConfig::default()).expect("open")
}

/// What the workload got acknowledged.
#[derive(Default, Debug)]
struct Acked {
    thoughts: BTreeMap<String, Vec<String>>,
    agents: Vec<(String, String)>,
    skills: Vec<String>,
    failures: Vec<String>,
}

const STEPS: usize = 16;

/// A workload touching every kind of object: chain records in both formats,
/// registry sidecars (write_atomic) and the skill log.
fn workload(db: &MentisDb) -> Acked {
    let mut acked = Acked::default();
    let note = |r: Result<Value, ToolError>, acked: &mut Acked| -> bool {
        match r {
            Ok(_) => true,
            Err(e) => {
                acked.failures.push(e.to_string());
                false
            }
        }
    };
    for (chain, format) in [("bin", "binary"), ("jl", "jsonl")] {
        if note(db.call("mentisdb_bootstrap", json!({"chain_key": chain, "content": "purpose", "storage_adapter": format})), &mut acked) {
            acked.thoughts.entry(chain.into()).or_default().push("purpose".into());
        }
    }
    for i in 0..STEPS {
        match i % 4 {
            0 | 1 => {
                let chain = if i % 4 == 0 { "bin" } else { "jl" };
                let content = format!("step {i}");
                if note(db.call("mentisdb_append", json!({"chain_key": chain, "thought_type": "Finding", "content": content})), &mut acked) {
                    acked.thoughts.entry(chain.into()).or_default().push(content);
                }
            }
            2 => {
                let agent = format!("agent-{i}");
                if note(db.call("mentisdb_upsert_agent", json!({"chain_key": "bin", "agent_id": agent, "agent_owner": "owner"})), &mut acked) {
                    acked.agents.push(("bin".into(), agent));
                }
            }
            _ => {
                let skill = format!("skill-{i}");
                let uploader = acked.agents.last().map(|(_, a)| a.clone()).unwrap_or_else(|| "agent-2".into());
                let r = db.call("mentisdb_upload_skill", json!({"chain_key": "bin", "agent_id": uploader, "skill_id": skill, "content": format!("# Skill {i}\n\nDo step {i}.\n")}));
                if note(r, &mut acked) {
                    acked.skills.push(skill);
                }
            }
        }
    }
    acked
}

/// Reopens `image` and checks every acknowledged effect is there, each
/// thought exactly once, and the store opens with no refusals.
fn check_recovered(image: MemoryStorage, acked: &Acked, what: &str) {
    let (db, report) = open(Arc::new(image));
    assert!(report.refused.is_empty(), "{what}: refused after reopen: {:?}", report.refused);
    for (chain, contents) in &acked.thoughts {
        let page = db.call("mentisdb_traverse_thoughts", json!({"chain_key": chain, "anchor_boundary": "genesis", "include_anchor": true, "chunk_size": 1000})).unwrap();
        let stored: Vec<String> = page["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap().to_string()).collect();
        for c in contents {
            assert_eq!(stored.iter().filter(|s| *s == c).count(), 1, "{what}: acknowledged {chain}/{c:?} must be present exactly once in {stored:?}");
        }
        assert_eq!(db.call("mentisdb_head", json!({"chain_key": chain})).unwrap()["integrity_ok"], true);
    }
    for (chain, agent) in &acked.agents {
        assert!(db.call("mentisdb_get_agent", json!({"chain_key": chain, "agent_id": agent})).is_ok(), "{what}: acknowledged agent {agent} lost");
    }
    for skill in &acked.skills {
        assert!(db.call("mentisdb_read_skill", json!({"skill_id": skill})).is_ok(), "{what}: acknowledged skill {skill} lost");
    }
}

#[test]
fn a_failure_at_every_write_sync_and_atomic_write_loses_nothing_acknowledged() {
    // How many calls of each kind the workload makes, measured on a clean run.
    let counter = Arc::new(FailingStorage::new(CrashSimStorage::new(MemoryStorage::new()), FailOp::Append, u64::MAX));
    let clean = workload(&open(counter.clone()).0);
    assert!(clean.failures.is_empty(), "{:?}", clean.failures);
    let mut points = 0;
    for op in [FailOp::Append, FailOp::Sync, FailOp::WriteAtomic] {
        let mut nth = 1;
        loop {
            let failing = Arc::new(FailingStorage::new(CrashSimStorage::new(MemoryStorage::new()), op, nth));
            let db = open(failing.clone()).0;
            let acked = workload(&db);
            if !failing.has_failed() {
                break; // past the last call of this kind
            }
            points += 1;
            let what = format!("{op:?}#{nth}");
            assert!(!acked.failures.is_empty(), "{what}: the injected failure is reported");
            for f in &acked.failures {
                assert!(f.contains("injected") || f.contains("does not exist") || f.contains("not registered") || f.contains("unknown agent") || f.contains("no agent"), "{what}: the error names its cause: {f}");
            }
            assert!(acked.failures.iter().any(|f| f.contains("injected")), "{what}: {:?}", acked.failures);
            // The engine keeps serving after the failure.
            db.call("mentisdb_append", json!({"chain_key": "after", "thought_type": "Finding", "content": "still serving"})).unwrap_or_else(|e| panic!("{what}: not serving after the failure: {e}"));
            for keep in [0, 3, 1 << 20] {
                check_recovered(failing.inner().crash_with_torn_tails(keep), &acked, &format!("{what} keep={keep}"));
            }
            nth += 1;
        }
        assert!(nth > 3, "{op:?}: the workload makes several calls ({})", nth - 1);
    }
    println!("fault injection: {points} failure points (append, sync, write_atomic), 3 crash images each, 0 acknowledged effects lost");
}

/// A backend where every write to objects under `dead_prefix` fails (a dead file).
#[derive(Debug)]
struct DeadObject<S: Storage> {
    inner: S,
    dead_prefix: String,
}

impl<S: Storage> DeadObject<S> {
    fn check(&self, name: &str) -> Result<(), StorageError> {
        if name.starts_with(&self.dead_prefix) {
            return Err(StorageError::io(name, "injected: device error on this file"));
        }
        Ok(())
    }
}

impl<S: Storage> Storage for DeadObject<S> {
    fn backend_name(&self) -> &'static str {
        "dead-object"
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        self.inner.list(prefix)
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.check(name)?;
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        self.check(name)?;
        self.inner.append_at(name, expected_len, bytes)
    }
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        self.inner.truncate(name, len)
    }
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        self.check(name)?;
        self.inner.sync(name)
    }
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.check(name)?;
        self.inner.write_atomic(name, bytes)
    }
    fn remove(&self, name: &str) -> Result<(), StorageError> {
        self.inner.remove(name)
    }
    fn location(&self, name: &str) -> String {
        self.inner.location(name)
    }
}

#[test]
fn a_dead_chain_file_fails_clearly_while_other_chains_keep_serving() {
    for format in ["binary", "jsonl"] {
        let sim = Arc::new(CrashSimStorage::new(MemoryStorage::new()));
        let mut acked: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        {
            let (db, _) = open(sim.clone());
            for chain in ["sick", "healthy"] {
                db.call("mentisdb_bootstrap", json!({"chain_key": chain, "content": "purpose", "storage_adapter": format})).unwrap();
                acked.entry(chain).or_default().push("purpose".into());
            }
        }
        let sick_object = mentisdb_core::naming::chain_object("sick", mentisdb_core::ChainFormat::parse(format).unwrap());
        let dead = Arc::new(DeadObject { inner: CrashSimStorageRef(sim.clone()), dead_prefix: sick_object.clone() });
        let (db, report) = open(dead.clone());
        assert!(report.refused.is_empty());
        for i in 0..10 {
            let e = db.call("mentisdb_append", json!({"chain_key": "sick", "thought_type": "Finding", "content": format!("lost {i}"), "thought_id": format!("sick-{i}")})).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains("injected: device error") && msg.contains(&sick_object), "{format}: the error names the object and the cause: {msg}");
            let content = format!("kept {i}");
            db.call("mentisdb_append", json!({"chain_key": "healthy", "thought_type": "Finding", "content": content, "thought_id": format!("healthy-{i}")})).unwrap();
            acked.entry("healthy").or_default().push(content);
            // Reads of the sick chain keep working.
            assert_eq!(db.call("mentisdb_head", json!({"chain_key": "sick"})).unwrap()["thought_count"], 1);
        }
        let (db, report) = open(Arc::new(sim.crash_with_torn_tails(5)));
        assert!(report.refused.is_empty(), "{:?}", report.refused);
        for (chain, contents) in &acked {
            let page = db.call("mentisdb_traverse_thoughts", json!({"chain_key": chain, "anchor_boundary": "genesis", "include_anchor": true, "chunk_size": 100})).unwrap();
            let stored: Vec<&str> = page["thoughts"].as_array().unwrap().iter().map(|t| t["content"].as_str().unwrap()).collect();
            assert_eq!(stored, contents.iter().map(String::as_str).collect::<Vec<_>>(), "{format}: {chain} after the crash");
        }
    }
}

/// Lets two wrappers share one crash-simulating backend.
#[derive(Debug)]
struct CrashSimStorageRef(Arc<CrashSimStorage<MemoryStorage>>);

impl Storage for CrashSimStorageRef {
    fn backend_name(&self) -> &'static str {
        self.0.backend_name()
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        self.0.list(prefix)
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.0.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.0.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        self.0.append_at(name, expected_len, bytes)
    }
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        self.0.truncate(name, len)
    }
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        self.0.sync(name)
    }
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.0.write_atomic(name, bytes)
    }
    fn remove(&self, name: &str) -> Result<(), StorageError> {
        self.0.remove(name)
    }
    fn location(&self, name: &str) -> String {
        self.0.location(name)
    }
}
