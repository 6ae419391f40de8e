//! Provable memory: RFC 9162 proofs and signed checkpoints, through the
//! tools and the pure verifiers; every single-bit change is rejected.

use crate::common;

use common::{err, fresh, ok, reopen};
use mentisdb_core::checkpoint::{self, verify_checkpoint, CheckpointError, CheckpointSigner};
use mentisdb_core::merkle::{leaf_hash, verify_consistency, verify_inclusion, Hash, MerkleTree};
use mentisdb_core::{MentisDb, ToolError};
use proptest::prelude::*;
use serde_json::{json, Value};

const SEED: [u8; 32] = [7u8; 32];

fn signer() -> CheckpointSigner {
    CheckpointSigner::new("test-daemon", &SEED).unwrap()
}

fn h(v: &Value) -> Hash {
    hex::decode(v.as_str().unwrap()).unwrap().try_into().unwrap()
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array().unwrap().iter().map(h).collect()
}

fn append_n(db: &MentisDb, n: usize) -> Vec<Value> {
    (0..n).map(|i| ok(db, "mentisdb_append", json!({"chain_key": "p", "agent_id": "a", "thought_type": "Insight", "content": format!("thought {i}")}))).collect()
}

fn flip_each_bit(h: &Hash) -> impl Iterator<Item = Hash> + '_ {
    (0..256).map(move |b| {
        let mut x = *h;
        x[b / 8] ^= 1 << (b % 8);
        x
    })
}

#[test]
fn append_replies_carry_the_leaf_hash_that_the_inclusion_proof_proves() {
    let (db, _) = fresh();
    let replies = append_n(&db, 11);
    for (i, r) in replies.iter().enumerate() {
        let raw: [u8; 32] = hex::decode(r["thought"]["hash"].as_str().unwrap()).unwrap().try_into().unwrap();
        assert_eq!(h(&r["leaf_hash"]), leaf_hash(&raw));
        let p = ok(&db, "mentisdb_inclusion_proof", json!({"chain_key": "p", "index": i, "tree_size": 11}));
        assert_eq!(p["leaf_hash"], r["leaf_hash"]);
        assert_eq!(p["tree_size"], 11);
        assert!(verify_inclusion(&h(&p["leaf_hash"]), i as u64, 11, &hashes(&p["hashes"]), &h(&p["root"])), "thought {i}");
    }
}

#[test]
fn every_single_bit_change_to_an_inclusion_proof_root_or_leaf_is_rejected() {
    let (db, _) = fresh();
    append_n(&db, 13);
    let p = ok(&db, "mentisdb_inclusion_proof", json!({"chain_key": "p", "index": 6}));
    let (leaf, root, path) = (h(&p["leaf_hash"]), h(&p["root"]), hashes(&p["hashes"]));
    assert!(verify_inclusion(&leaf, 6, 13, &path, &root));
    for k in 0..path.len() {
        for bad in flip_each_bit(&path[k]) {
            let mut q = path.clone();
            q[k] = bad;
            assert!(!verify_inclusion(&leaf, 6, 13, &q, &root));
        }
    }
    assert!(flip_each_bit(&root).all(|r| !verify_inclusion(&leaf, 6, 13, &path, &r)));
    assert!(flip_each_bit(&leaf).all(|l| !verify_inclusion(&l, 6, 13, &path, &root)));
    assert!(!verify_inclusion(&leaf, 7, 13, &path, &root));
    assert!(!verify_inclusion(&leaf, 6, 13, &path[..path.len() - 1], &root));
}

#[test]
fn every_single_bit_change_to_a_consistency_proof_or_its_roots_is_rejected() {
    let (db, _) = fresh();
    append_n(&db, 21);
    let p = ok(&db, "mentisdb_consistency_proof", json!({"chain_key": "p", "first": 6, "second": 21}));
    let (a, b, path) = (h(&p["first_root"]), h(&p["second_root"]), hashes(&p["hashes"]));
    assert!(verify_consistency(6, 21, &a, &b, &path));
    for k in 0..path.len() {
        for bad in flip_each_bit(&path[k]) {
            let mut q = path.clone();
            q[k] = bad;
            assert!(!verify_consistency(6, 21, &a, &b, &q));
        }
    }
    assert!(flip_each_bit(&a).all(|x| !verify_consistency(6, 21, &x, &b, &path)));
    assert!(flip_each_bit(&b).all(|x| !verify_consistency(6, 21, &a, &x, &path)));
    // The roots agree with the inclusion proofs' roots at each size.
    let i = ok(&db, "mentisdb_inclusion_proof", json!({"chain_key": "p", "index": 0, "tree_size": 6}));
    assert_eq!(h(&i["root"]), a);
}

#[test]
fn checkpoints_are_signed_notes_and_every_single_bit_change_is_rejected() {
    let (db, _) = fresh();
    assert!(matches!(err(&db, "mentisdb_checkpoint", json!({"chain_key": "p"})), ToolError::Unavailable(_)));
    db.set_checkpoint_signer(Some(signer()), None);
    append_n(&db, 5);
    let c = ok(&db, "mentisdb_checkpoint", json!({"chain_key": "p"}));
    let note = c["checkpoint"].as_str().unwrap();
    let lines: Vec<&str> = note.split('\n').collect();
    assert_eq!(lines[0], "test-daemon/p");
    assert_eq!(lines[1], "5");
    assert_eq!(lines[3], "");
    assert!(lines[4].starts_with("\u{2014} test-daemon "), "{note}");
    let id = ok(&db, "mentisdb_identity", json!({}));
    let pk: [u8; 32] = h(&id["public_key"]);
    assert_eq!(id["key_id"], hex::encode(checkpoint::key_id("test-daemon", &pk)));
    let head = verify_checkpoint(note, "test-daemon", &pk).unwrap();
    assert_eq!((head.origin.as_str(), head.tree_size, hex::encode(head.root)), ("test-daemon/p", 5, c["root"].as_str().unwrap().to_string()));
    let incl = ok(&db, "mentisdb_inclusion_proof", json!({"chain_key": "p", "index": 2}));
    assert_eq!(incl["root"], c["root"]);
    // Every bit of the note (text, root, signature) matters.
    let bytes = note.as_bytes();
    for i in 0..bytes.len() {
        for b in 0..8 {
            let mut m = bytes.to_vec();
            m[i] ^= 1 << b;
            if let Ok(text) = std::str::from_utf8(&m) {
                assert!(verify_checkpoint(text, "test-daemon", &pk).is_err(), "byte {i} bit {b} accepted");
            }
        }
    }
    // Another key or name does not verify it.
    let other = CheckpointSigner::new("test-daemon", &[8u8; 32]).unwrap().public_key();
    assert_eq!(verify_checkpoint(note, "test-daemon", &other), Err(CheckpointError::NotSigned("test-daemon".into())));
    assert_eq!(verify_checkpoint(note, "someone-else", &pk), Err(CheckpointError::NotSigned("someone-else".into())));
}

#[test]
fn automatic_checkpoints_follow_appends_at_most_once_an_interval() {
    let (db, _) = fresh();
    db.set_checkpoint_signer(Some(signer()), Some(3_600_000));
    append_n(&db, 1);
    let first = db.latest_checkpoint("p").expect("the first append makes a checkpoint");
    assert_eq!(first.tree_size, 1);
    append_n(&db, 3);
    assert_eq!(db.latest_checkpoint("p").unwrap(), first, "within the interval no new checkpoint");
    db.set_checkpoint_signer(Some(signer()), Some(0));
    append_n(&db, 1);
    assert_eq!(db.latest_checkpoint("p").unwrap().tree_size, 5);
}

#[test]
fn proofs_survive_reopening_and_bad_sizes_are_invalid_arguments() {
    let (db, storage) = fresh();
    append_n(&db, 9);
    let before = ok(&db, "mentisdb_consistency_proof", json!({"chain_key": "p", "first": 3}));
    let db = reopen(storage);
    let after = ok(&db, "mentisdb_consistency_proof", json!({"chain_key": "p", "first": 3, "second": 9}));
    assert_eq!(before, after);
    for (tool, args) in [
        ("mentisdb_inclusion_proof", json!({"chain_key": "p", "index": 9})),
        ("mentisdb_inclusion_proof", json!({"chain_key": "p", "index": 0, "tree_size": 10})),
        ("mentisdb_consistency_proof", json!({"chain_key": "p", "first": 0, "second": 9})),
        ("mentisdb_consistency_proof", json!({"chain_key": "p", "first": 5, "second": 4})),
        ("mentisdb_consistency_proof", json!({"chain_key": "p", "first": 5, "second": 10})),
    ] {
        assert!(matches!(err(&db, tool, args.clone()), ToolError::InvalidArguments { .. }), "{tool} {args}");
    }
    assert!(matches!(err(&db, "mentisdb_inclusion_proof", json!({"chain_key": "nope", "index": 0})), ToolError::NotFound(_)));
}

fn tree(n: u64) -> MerkleTree {
    let mut t = MerkleTree::new();
    (0..n).for_each(|i| t.push_leaf_hash(leaf_hash(&i.to_le_bytes())));
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn inclusion_and_consistency_verify_for_random_sizes(n in 1u64..3000, a in any::<u64>(), b in any::<u64>()) {
        let t = tree(n);
        let (i, m) = (a % n, 1 + b % n);
        let root = t.root(n).unwrap();
        let p = t.inclusion_proof(i, n).unwrap();
        prop_assert!(p.len() <= 64 - (n - 1).leading_zeros() as usize);
        prop_assert!(verify_inclusion(&t.leaf(i).unwrap(), i, n, &p, &root));
        let c = t.consistency_proof(m, n).unwrap();
        prop_assert!(verify_consistency(m, n, &t.root(m).unwrap(), &root, &c));
        if m < n {
            // A proof for another older size does not verify.
            prop_assert!(!verify_consistency(m, n, &t.root(m - 1).unwrap(), &root, &c) || m == 1);
        }
    }
}

#[test]
fn verifier_keys_read_back_and_a_wrong_id_is_refused() {
    use mentisdb_core::checkpoint::{parse_verifier_key, verifier_key, CheckpointSigner};
    let signer = CheckpointSigner::new("mentisdb-test", &[7; 32]).unwrap();
    let text = verifier_key(signer.name(), &signer.public_key());
    assert_eq!(parse_verifier_key(&text).unwrap(), (signer.name().to_string(), signer.public_key()));
    let other = verifier_key("someone-else", &signer.public_key());
    let forged = format!("{}+{}", signer.name(), other.split_once('+').unwrap().1);
    assert!(parse_verifier_key(&forged).is_err());
    assert!(parse_verifier_key("no-plus-signs").is_err());
    // Base64 keys may hold '+' (about half of all keys do): every one of
    // 64 seeds reads back, and the seeds include keys with '+' in them.
    let mut with_plus = 0;
    for seed in 0..64u8 {
        let signer = CheckpointSigner::new("mentisdb-test", &[seed; 32]).unwrap();
        let text = verifier_key(signer.name(), &signer.public_key());
        with_plus += usize::from(text.matches('+').count() > 2);
        assert_eq!(parse_verifier_key(&text).unwrap().1, signer.public_key(), "{text}");
    }
    assert!(with_plus > 0, "no seed gave a key with '+'");
}
