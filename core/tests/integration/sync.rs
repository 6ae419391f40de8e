//! Offline-first replicas (`mentisdb_core::sync`): a replica engine follows a
//! "daemon" engine through its tools (the transport is `call`, as REST would
//! carry it), pushes what it wrote offline, verifies checkpoints, proofs and
//! records, and refuses a daemon that rewrote history.

use crate::common;

use common::{fresh, ok};
use ed25519_dalek::{Signer, SigningKey};
use mentisdb_core::checkpoint::{self, CheckpointSigner};
use mentisdb_core::signature::signable_payload;
use mentisdb_core::sync::{SyncError, SyncReply, SyncReport, SyncRequest, SyncSession, SyncStep};
use mentisdb_core::{ErrorKind, MemoryStorage, MentisDb, Storage, Thought, ThoughtRole, ThoughtType};
use serde_json::{json, Value};
use std::sync::Arc;

const SEED: [u8; 32] = [9u8; 32];
const CHAIN: &str = "notes";

fn signer() -> CheckpointSigner {
    CheckpointSigner::new("test-daemon", &SEED).unwrap()
}

fn verifier() -> String {
    let s = signer();
    checkpoint::verifier_key(s.name(), &s.public_key())
}

fn daemon() -> (MentisDb, Arc<MemoryStorage>) {
    let (db, storage) = fresh();
    db.set_checkpoint_signer(Some(signer()), None);
    (db, storage)
}

/// What a REST host answers for `request`.
fn answer(daemon: &MentisDb, request: &SyncRequest) -> (u16, String) {
    match daemon.call(request.tool, request.body.clone()) {
        Ok(v) => (200, v.to_string()),
        Err(e) => (if e.kind() == ErrorKind::NotFound { 404 } else { 400 }, json!({"error": e.to_string()}).to_string()),
    }
}

/// Runs a whole sync, letting `tamper` change each reply.
fn sync_with(daemon: &MentisDb, replica: &MentisDb, mut tamper: impl FnMut(&SyncRequest, &mut String)) -> Result<SyncReport, SyncError> {
    let mut session = SyncSession::new(replica, CHAIN, &verifier())?;
    let mut reply: Option<(u16, String)> = None;
    loop {
        let step = session.step(replica, reply.as_ref().map(|(status, body)| SyncReply { status: *status, body }))?;
        match step {
            SyncStep::Done(report) => return Ok(report),
            SyncStep::Send(request) => {
                let (status, mut body) = answer(daemon, &request);
                tamper(&request, &mut body);
                reply = Some((status, body));
            }
        }
    }
}

fn sync(daemon: &MentisDb, replica: &MentisDb) -> Result<SyncReport, SyncError> {
    sync_with(daemon, replica, |_, _| {})
}

fn append(db: &MentisDb, content: &str, extra: Value) -> Value {
    let mut args = json!({"chain_key": CHAIN, "agent_id": "a", "thought_type": "Insight", "content": content});
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    ok(db, "mentisdb_append", args)["thought"].clone()
}

fn thoughts(db: &MentisDb) -> Vec<Value> {
    ok(db, "mentisdb_search", json!({"chain_key": CHAIN, "limit": 10000}))["thoughts"].as_array().unwrap().clone()
}

fn head(db: &MentisDb) -> (u64, Value) {
    let h = ok(db, "mentisdb_head", json!({"chain_key": CHAIN}));
    (h["thought_count"].as_u64().unwrap(), h["head_hash"].clone())
}

/// Both engines hold the same chain, thought for thought.
fn assert_same(daemon: &MentisDb, replica: &MentisDb) {
    assert_eq!(head(daemon), head(replica));
    assert_eq!(thoughts(daemon), thoughts(replica));
}

#[test]
fn a_new_replica_takes_the_daemons_chain_and_a_second_sync_takes_only_what_is_new() {
    let (d, _) = daemon();
    let (r, _) = fresh();
    for i in 0..5 {
        append(&d, &format!("daemon {i}"), json!({}));
    }
    let first = sync(&d, &r).unwrap();
    assert_eq!((first.pushed, first.pulled, first.tree_size), (0, 5, 5));
    assert_eq!(first.head_hash, head(&d).1.as_str().map(str::to_string));
    assert_same(&d, &r);
    let again = sync(&d, &r).unwrap();
    assert_eq!((again.pushed, again.pulled, again.tree_size), (0, 0, 5), "nothing new");
    append(&d, "daemon 5", json!({}));
    let third = sync(&d, &r).unwrap();
    assert_eq!((third.pulled, third.tree_size), (1, 6));
    assert_same(&d, &r);
}

#[test]
fn offline_writes_on_both_sides_end_as_one_chain_with_the_replicas_thoughts_after_the_daemons() {
    let (d, _) = daemon();
    let (r, storage) = fresh();
    append(&d, "shared 0", json!({}));
    append(&d, "shared 1", json!({}));
    sync(&d, &r).unwrap();
    // Offline: the daemon goes on, and so does the replica.
    append(&d, "daemon while offline", json!({}));
    let local = append(&r, "replica offline 1", json!({"refs": [1]}));
    assert_eq!(local["index"], 2);
    append(&r, "replica offline 2", json!({"refs": [2], "relations": [{"kind": "supports", "target_index": 2}]}));
    append(&r, "forgotten before it was pushed", json!({}));
    ok(&r, "mentisdb_forget_thought", json!({"chain_key": CHAIN, "thought_index": 4, "reason": "test"}));

    let report = sync(&d, &r).unwrap();
    assert_eq!((report.pushed, report.replayed, report.skipped_forgotten), (2, 0, 1));
    assert_eq!(report.tree_size, 5);
    assert_same(&d, &r);
    let all = thoughts(&r);
    let order: Vec<&str> = all.iter().map(|t| t["content"].as_str().unwrap()).collect();
    assert_eq!(order, ["shared 0", "shared 1", "daemon while offline", "replica offline 1", "replica offline 2"]);
    assert_eq!(all[3]["id"], local["id"], "the id survives the push");
    assert_eq!(all[3]["refs"], json!([1]), "a ref into shared history is kept");
    assert_eq!(all[4]["refs"], json!([3]), "a ref to an offline thought follows it");
    assert_eq!(all[4]["relations"][0]["target_index"], 3);
    // The replica reopens to the synced chain and its state.
    let reopened = common::reopen(storage);
    assert_eq!(head(&reopened), head(&d));
    assert_eq!(sync(&d, &reopened).unwrap().pulled, 0);
}

#[test]
fn a_push_retried_after_a_crash_replays_instead_of_duplicating() {
    let (d, _) = daemon();
    let (r, _) = fresh();
    append(&d, "shared", json!({}));
    sync(&d, &r).unwrap();
    append(&r, "offline", json!({"thought_id": "offline-1"}));
    // The first sync dies right after the daemon stored the push.
    let mut session = SyncSession::new(&r, CHAIN, &verifier()).unwrap();
    let SyncStep::Send(push) = session.step(&r, None).unwrap() else { panic!("a push first") };
    assert_eq!(push.tool, "mentisdb_append_batch");
    assert_eq!(answer(&d, &push).0, 200);
    drop(session);
    let report = sync(&d, &r).unwrap();
    assert_eq!((report.pushed, report.replayed, report.tree_size), (0, 1, 2));
    assert_same(&d, &r);
}

#[test]
fn a_signed_offline_thought_keeps_a_valid_signature_at_its_new_position() {
    let (d, _) = daemon();
    let (r, _) = fresh();
    let sk = SigningKey::from_bytes(&[3u8; 32]);
    for db in [&d, &r] {
        ok(db, "mentisdb_upsert_agent", json!({"chain_key": CHAIN, "agent_id": "signer"}));
        ok(db, "mentisdb_add_agent_key", json!({"chain_key": CHAIN, "agent_id": "signer", "key_id": "k1", "algorithm": "ed25519",
            "public_key_bytes": sk.verifying_key().to_bytes().to_vec()}));
    }
    append(&d, "shared", json!({}));
    sync(&d, &r).unwrap();
    append(&d, "daemon meanwhile", json!({}));
    let mut draft: Thought = serde_json::from_value(append(&r, "draft", json!({}))).unwrap();
    draft.id = "signed-1".into();
    draft.agent_id = "signer".into();
    draft.agent_name = "signer".into();
    draft.thought_type = ThoughtType::Decision;
    draft.role = ThoughtRole::Memory;
    draft.content = "signed offline".into();
    draft.importance = 0.5;
    let sig = sk.sign(&signable_payload(CHAIN, &draft, "k1")).to_bytes().to_vec();
    // The draft above is local; sync pushes both it and the signed one.
    let signed = append(&r, "signed offline", json!({"agent_id": "signer", "thought_type": "Decision", "thought_id": "signed-1", "signing_key_id": "k1", "thought_signature": sig}));
    assert_eq!(signed["index"], 2);
    let report = sync(&d, &r).unwrap();
    assert_eq!(report.pushed, 2);
    assert_same(&d, &r);
    let on_daemon = ok(&d, "mentisdb_get_thought", json!({"chain_key": CHAIN, "thought_id": "signed-1"}))["thought"].clone();
    assert_eq!(on_daemon["index"], 3, "after the daemon's thought");
    assert_eq!(on_daemon["thought_signature"], signed["thought_signature"]);
}

#[test]
fn local_appends_racing_the_apply_are_pushed_too() {
    let (d, _) = daemon();
    let (r, _) = fresh();
    append(&d, "shared", json!({}));
    let mut raced = false;
    let report = {
        let r2 = &r;
        sync_with(&d, r2, |request, _| {
            if request.tool == "mentisdb_chain_records" && !raced {
                raced = true;
                append(r2, "written during the sync", json!({}));
            }
        })
        .unwrap()
    };
    assert!(raced);
    assert_eq!((report.pushed, report.tree_size), (1, 2));
    assert_same(&d, &r);
}

/// A daemon over `storage` that signs with the same key (a restart).
fn restart(storage: &Arc<MemoryStorage>) -> MentisDb {
    let db = common::reopen(storage.clone());
    db.set_checkpoint_signer(Some(signer()), None);
    db
}

fn expect_fork(result: Result<SyncReport, SyncError>) -> (String, Option<String>) {
    match result {
        Err(SyncError::Fork { accepted, offered, reason, .. }) => {
            assert!(!reason.is_empty());
            // Both checkpoints verify with the daemon's key: the fork is provable.
            let s = signer();
            let a = checkpoint::verify_checkpoint(&accepted, s.name(), &s.public_key()).unwrap();
            if let Some(o) = &offered {
                let o = checkpoint::verify_checkpoint(o, s.name(), &s.public_key()).unwrap();
                assert!(o.tree_size < a.tree_size || o.root != a.root || o.tree_size > a.tree_size);
            }
            (accepted, offered)
        }
        other => panic!("expected a fork, got {other:?}"),
    }
}

#[test]
fn a_daemon_that_rewrote_history_is_refused_with_both_checkpoints() {
    let (d, storage) = daemon();
    let (r, _) = fresh();
    for i in 0..4 {
        append(&d, &format!("original {i}"), json!({}));
    }
    sync(&d, &r).unwrap();
    let before = head(&r);
    // Tamper with the daemon's stored chain: cut its last two records and
    // write two others, a chain that verifies on its own.
    let object = storage.list("chains/").unwrap().into_iter().find(|n| n.ends_with(".mdb")).unwrap();
    let bytes = storage.read(&object).unwrap().unwrap();
    let first_two = {
        use base64::Engine as _;
        let decode = |v: Value| base64::engine::general_purpose::STANDARD.decode(v["records_base64"].as_str().unwrap()).unwrap();
        let two = decode(ok(&d, "mentisdb_chain_records", json!({"chain_key": CHAIN, "from": 0, "to": 2})));
        let all = decode(ok(&d, "mentisdb_chain_records", json!({"chain_key": CHAIN})));
        assert!(bytes.ends_with(&all), "records are the file's bytes");
        [&bytes[..bytes.len() - all.len()], &two[..]].concat()
    };
    drop(d);
    storage.write_atomic(&object, &first_two).unwrap();
    let d = restart(&storage);
    assert_eq!(head(&d).0, 2);
    // Rolled back: shorter than what the replica accepted.
    expect_fork(sync(&d, &r));
    // Rewritten: longer again, but not an extension.
    for i in 0..3 {
        append(&d, &format!("rewritten {i}"), json!({}));
    }
    let (_, offered) = expect_fork(sync(&d, &r));
    assert!(offered.is_some());
    assert_eq!(head(&r), before, "nothing local changed");
}

#[test]
fn records_that_do_not_match_the_checkpoint_or_a_wrong_key_are_refused() {
    let (d, _) = daemon();
    let (r, _) = fresh();
    for i in 0..3 {
        append(&d, &format!("daemon {i}"), json!({}));
    }
    // A record whose content was changed in flight (JSONL would show it; the
    // binary body no longer hashes to its hash).
    let tampered = sync_with(&d, &r, |request, body| {
        if request.tool == "mentisdb_chain_records" {
            let mut v: Value = serde_json::from_str(body).unwrap();
            use base64::Engine as _;
            let mut bytes = base64::engine::general_purpose::STANDARD.decode(v["records_base64"].as_str().unwrap()).unwrap();
            let at = bytes.windows(8).position(|w| w == b"daemon 1").unwrap();
            bytes[at] = b'D';
            v["records_base64"] = json!(base64::engine::general_purpose::STANDARD.encode(&bytes));
            *body = v.to_string();
        }
    });
    assert!(matches!(tampered, Err(SyncError::BadRecords { .. }) | Err(SyncError::BadReply { .. })), "{tampered:?}");
    assert_eq!(ok(&r, "mentisdb_list_chains", json!({}))["chains"].as_array().unwrap().len(), 0, "nothing stored");
    // A signature by another key.
    let other = CheckpointSigner::new("test-daemon", &[1u8; 32]).unwrap();
    let bad_key = sync_with(&d, &r, |request, body| {
        if request.tool == "mentisdb_checkpoint" {
            let mut v: Value = serde_json::from_str(body).unwrap();
            let note = v["checkpoint"].as_str().unwrap();
            let head = checkpoint::verify_checkpoint(note, signer().name(), &signer().public_key()).unwrap();
            v["checkpoint"] = json!(other.sign(&head));
            *body = v.to_string();
        }
    });
    assert!(matches!(bad_key, Err(SyncError::BadCheckpoint(_))), "{bad_key:?}");
    // Not a verifier key at all.
    assert!(matches!(SyncSession::new(&r, CHAIN, "nonsense"), Err(SyncError::BadVerifierKey(_))));
    // A daemon without the chain and a replica without it: nothing to do.
    let (empty, _) = daemon();
    let report = sync(&empty, &r).unwrap();
    assert_eq!((report.tree_size, report.pulled), (0, 0));
}

#[test]
fn chain_records_pages_and_append_batch_limits() {
    let (d, _) = daemon();
    for i in 0..5 {
        append(&d, &format!("t{i}"), json!({}));
    }
    let page = ok(&d, "mentisdb_chain_records", json!({"chain_key": CHAIN, "from": 1, "limit": 2}));
    assert_eq!((page["from"].clone(), page["count"].clone(), page["next"].clone(), page["thought_count"].clone()), (json!(1), json!(2), json!(3), json!(5)));
    let last = ok(&d, "mentisdb_chain_records", json!({"chain_key": CHAIN, "from": 3}));
    assert_eq!((last["count"].clone(), last["next"].clone()), (json!(2), Value::Null));
    assert!(d.call("mentisdb_chain_records", json!({"chain_key": CHAIN, "to": 6})).unwrap_err().to_string().contains("past the chain's length"));
    assert_eq!(d.call("mentisdb_chain_records", json!({"chain_key": "nope"})).unwrap_err().kind(), ErrorKind::NotFound);

    let item = |id: &str| json!({"thought_type": "Finding", "content": format!("batch {id}"), "thought_id": id});
    let batch = ok(&d, "mentisdb_append_batch", json!({"chain_key": CHAIN, "thoughts": [item("b1"), item("b2")]}));
    assert_eq!(batch["thoughts"].as_array().unwrap().iter().map(|t| t["index"].as_u64().unwrap()).collect::<Vec<_>>(), [5, 6]);
    assert_eq!(batch["thought_count"], 7);
    let again = ok(&d, "mentisdb_append_batch", json!({"chain_key": CHAIN, "thoughts": [item("b1"), item("b2"), item("b3")]}));
    let replays: Vec<bool> = again["thoughts"].as_array().unwrap().iter().map(|t| t["replay"].as_bool().unwrap()).collect();
    assert_eq!(replays, [true, true, false]);
    assert!(d.call("mentisdb_append_batch", json!({"chain_key": CHAIN, "thoughts": []})).is_err());
    let mut conflicting = item("b1");
    conflicting["content"] = json!("another body under a used id");
    let e = d.call("mentisdb_append_batch", json!({"chain_key": CHAIN, "thoughts": [item("b4"), conflicting]})).unwrap_err();
    assert!(e.to_string().starts_with("thoughts[1]: "), "{e}");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(head(&d).0, 9, "b4 stayed stored");
    let other_chain = json!({"chain_key": CHAIN, "thoughts": [{"chain_key": "elsewhere", "thought_type": "Finding", "content": "x"}]});
    assert!(d.call("mentisdb_append_batch", other_chain).unwrap_err().to_string().contains("not the batch's chain"));
}

#[test]
fn a_replicas_claims_stay_local_and_its_fenced_thoughts_arrive_without_the_fence() {
    let (d, _) = daemon();
    let (r, _) = fresh();
    append(&d, "shared 0", json!({}));
    sync(&d, &r).unwrap();
    let claim = ok(&r, "mentisdb_claim", json!({"chain_key": CHAIN, "key": "render", "holder": "tab", "ttl_ms": 600000}));
    assert_eq!(claim["ok"], true);
    append(&r, "rendered offline", json!({"agent_id": "tab", "fencing": {"key": "render", "token": 1}}));
    let report = sync(&d, &r).unwrap();
    assert_eq!((report.pushed, report.skipped_claims), (1, 1), "{report:?}");
    assert_same(&d, &r);
    let pushed = thoughts(&d).into_iter().find(|t| t["content"] == "rendered offline").unwrap();
    assert_eq!(pushed["tags"], json!([]), "the lease it named was the replica's");
}
