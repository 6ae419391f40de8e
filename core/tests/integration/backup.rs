//! Backups in the core: a snapshot copies every object the engine owns with
//! a manifest, and `check_backup` accepts exactly what a snapshot made and
//! refuses anything changed, missing, added or unsound.

use crate::common;

use common::{fresh, ids, ok, reopen, T0};
use mentisdb_core::backup::{check_backup, sha256_hex, BackupError, BackupManifest, BACKUP_FORMAT};
use mentisdb_core::{naming, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, Storage};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

const SKILL: &str = "---\nname: Deploy\ndescription: how\ntags: [ops]\n---\n# Deploy\nRun it.\n";

/// A store with two chains (one JSONL), an agent registry, a skill and an
/// extra host object.
fn populated() -> (MentisDb, Arc<MemoryStorage>) {
    let (db, storage) = fresh();
    for i in 0..5 {
        ok(&db, "mentisdb_append", json!({"chain_key": "alpha", "agent_id": "ada", "thought_type": "Finding", "content": format!("alpha fact {i}")}));
    }
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "beta", "storage_adapter": "jsonl", "content": "beta decision"}));
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "alpha", "agent_id": "ada", "display_name": "Ada", "agent_owner": "ops"}));
    ok(&db, "mentisdb_upload_skill", json!({"chain_key": "alpha", "agent_id": "ada", "skill_id": "deploy", "content": SKILL}));
    storage.write_atomic("identity.ed25519", b"host key bytes").unwrap();
    (db, storage)
}

fn snapshot(db: &MentisDb) -> (BackupManifest, BTreeMap<String, Vec<u8>>) {
    let mut objects = BTreeMap::new();
    let manifest = db
        .snapshot("test 1.0", &["identity.ed25519", "absent.object"], |o| {
            assert!(o.step >= 1 && o.step <= o.steps, "step {} of {}", o.step, o.steps);
            objects.insert(o.name, o.bytes);
            Ok::<(), ()>(())
        })
        .unwrap();
    (manifest, objects)
}

fn check(manifest: &BackupManifest, objects: BTreeMap<String, Vec<u8>>) -> Result<mentisdb_core::backup::CheckedBackup, BackupError> {
    check_backup(manifest, objects, Arc::new(FixedClock::new(T0, 1)), ids(), DbConfig::default())
}

#[test]
fn a_snapshot_lists_every_object_and_restores_to_the_same_store() {
    let (db, storage) = populated();
    let (manifest, objects) = snapshot(&db);
    assert_eq!(manifest.format, BACKUP_FORMAT);
    assert_eq!(manifest.created_by, "test 1.0");
    let names: Vec<&str> = manifest.objects.iter().map(|o| o.name.as_str()).collect();
    let mut expected: Vec<String> = storage.list("").unwrap();
    expected.sort();
    assert_eq!(names, expected.iter().map(String::as_str).collect::<Vec<_>>(), "every stored object, nothing else");
    for o in &manifest.objects {
        let stored = storage.read(&o.name).unwrap().unwrap();
        assert_eq!((o.bytes, o.sha256.as_str()), (stored.len() as u64, sha256_hex(&stored).as_str()), "{}", o.name);
        assert_eq!(objects[&o.name], stored);
    }
    let chains: Vec<(&str, u64)> = manifest.chains.iter().map(|c| (c.chain_key.as_str(), c.thought_count)).collect();
    assert_eq!(chains, [("alpha", 5), ("beta", 1)]);
    let head = ok(&db, "mentisdb_head", json!({"chain_key": "alpha"}))["head_hash"].clone();
    assert_eq!(json!(manifest.chains[0].head_hash), head);

    // The manifest survives JSON, and the check hands back exactly the objects.
    let manifest: BackupManifest = serde_json::from_str(&serde_json::to_string(&manifest).unwrap()).unwrap();
    let checked = check(&manifest, objects.clone()).unwrap();
    assert_eq!((checked.chains, checked.thoughts, checked.refused.len(), checked.warnings.len()), (2, 6, 0, 0));
    assert_eq!(checked.objects, objects);

    // Opened again, the restored objects serve the same memory.
    let restored = reopen(Arc::new(MemoryStorage::from_objects(checked.objects).unwrap()));
    assert_eq!(ok(&restored, "mentisdb_head", json!({"chain_key": "alpha"}))["head_hash"], head);
    let agent = ok(&restored, "mentisdb_get_agent", json!({"chain_key": "alpha", "agent_id": "ada"}));
    assert_eq!((agent["agent"]["display_name"].as_str(), agent["agent"]["agent_owner"].as_str()), (Some("Ada"), Some("ops")), "{agent}");
    assert_eq!(ok(&restored, "mentisdb_read_skill", json!({"skill_id": "deploy"}))["skill_id"], "deploy");
}

#[test]
fn changed_missing_added_or_escaping_objects_are_refused() {
    let (db, _) = populated();
    let (manifest, objects) = snapshot(&db);
    let chain = naming::chain_object("alpha", ChainFormat::Binary);

    let mut flipped = objects.clone();
    let last = flipped.get_mut(&chain).unwrap().last_mut().unwrap();
    *last ^= 1;
    assert_eq!(check(&manifest, flipped).unwrap_err(), BackupError::DigestMismatch { name: chain.clone() });

    let mut cut = objects.clone();
    cut.get_mut(&chain).unwrap().pop();
    assert!(matches!(check(&manifest, cut).unwrap_err(), BackupError::SizeMismatch { name, .. } if name == chain));

    let mut missing = objects.clone();
    missing.remove(naming::SKILLS_LOG);
    assert_eq!(check(&manifest, missing).unwrap_err(), BackupError::Missing(naming::SKILLS_LOG.into()));

    let mut added = objects.clone();
    added.insert("chains/stowaway.mdb".into(), b"x".to_vec());
    assert_eq!(check(&manifest, added).unwrap_err(), BackupError::Unlisted("chains/stowaway.mdb".into()));

    let mut escaping = manifest.clone();
    escaping.objects[0].name = "../../etc/passwd".into();
    assert_eq!(check(&escaping, objects.clone()).unwrap_err(), BackupError::InvalidName("../../etc/passwd".into()));

    let mut future = manifest.clone();
    future.format = BACKUP_FORMAT + 1;
    assert_eq!(check(&future, objects.clone()).unwrap_err(), BackupError::UnsupportedFormat { found: BACKUP_FORMAT + 1 });

    let mut twice = manifest.clone();
    twice.objects.push(twice.objects[0].clone());
    assert!(matches!(check(&twice, objects.clone()).unwrap_err(), BackupError::Duplicate(_)));
}

#[test]
fn a_manifest_whose_chains_differ_from_the_objects_is_refused() {
    let (db, _) = populated();
    let (manifest, objects) = snapshot(&db);
    let mut longer = manifest.clone();
    longer.chains[0].thought_count += 1;
    assert!(matches!(check(&longer, objects.clone()).unwrap_err(), BackupError::Chain { chain_key, .. } if chain_key == "alpha"));

    let mut forgotten = manifest.clone();
    forgotten.chains.remove(1);
    assert!(matches!(check(&forgotten, objects.clone()).unwrap_err(), BackupError::Chain { chain_key, .. } if chain_key == "beta"));

    // A chain object whose bytes break the hash chain, listed with matching digests, is refused.
    let chain = manifest.chains[1].object.clone();
    let mut broken_objects = objects.clone();
    let text = String::from_utf8(broken_objects[&chain].clone()).unwrap().replace("beta decision", "beta decisiom");
    broken_objects.insert(chain.clone(), text.into_bytes());
    let mut broken = manifest.clone();
    let entry = broken.objects.iter_mut().find(|o| o.name == chain).unwrap();
    entry.sha256 = sha256_hex(&broken_objects[&chain]);
    let e = check(&broken, broken_objects).unwrap_err();
    assert!(matches!(&e, BackupError::Chain { reason, .. } if reason.contains("does not open")), "{e}");
}

#[test]
fn a_chain_refused_at_open_is_copied_and_stays_refused() {
    let (db, storage) = populated();
    let chain = snapshot(&db).0.chains[1].object.clone();
    drop(db);
    let text = String::from_utf8(storage.read(&chain).unwrap().unwrap()).unwrap().replace("beta decision", "beta decisiom");
    storage.write_atomic(&chain, text.as_bytes()).unwrap();
    let (db, _) = MentisDb::open(storage.clone(), Arc::new(FixedClock::new(T0, 1)), ids(), DbConfig::default()).unwrap();
    let (manifest, objects) = snapshot(&db);
    assert_eq!(manifest.refused.iter().map(|r| r.object.as_str()).collect::<Vec<_>>(), [chain.as_str()]);
    assert_eq!(objects[&chain], text.as_bytes(), "copied as it is");
    assert_eq!(manifest.chains.iter().map(|c| c.chain_key.as_str()).collect::<Vec<_>>(), ["alpha"]);
    let checked = check(&manifest, objects).unwrap();
    assert_eq!((checked.chains, checked.refused.len()), (1, 1));
}

#[test]
fn a_chain_deleted_before_the_snapshot_is_not_in_it() {
    let (db, _) = populated();
    db.delete_chain("beta").unwrap();
    let (manifest, objects) = snapshot(&db);
    assert_eq!(manifest.chains.len(), 1);
    assert!(!objects.keys().any(|k| k.contains("beta")));
    check(&manifest, objects).unwrap();
}
