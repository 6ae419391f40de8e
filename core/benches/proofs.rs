//! Provable-memory figures at 1M thoughts: building the Merkle tree,
//! inclusion and consistency proof generation and verification (proof size
//! in hashes is printed), and the checkpoint signing rate.
//!
//! Run: `cargo bench -p mentisdb-core --bench proofs`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use mentisdb_core::checkpoint::{verify_checkpoint, CheckpointSigner, TreeHead};
use mentisdb_core::merkle::{leaf_hash, verify_consistency, verify_inclusion, MerkleTree};

const N: u64 = 1_000_000;

fn tree() -> MerkleTree {
    let mut t = MerkleTree::new();
    for i in 0..N {
        t.push_leaf_hash(leaf_hash(&mentisdb_core::merkle::leaf_hash(&i.to_le_bytes())));
    }
    t
}

fn proofs(c: &mut Criterion) {
    let started = std::time::Instant::now();
    let t = tree();
    println!("tree of {N} leaves: built in {:?}, {} MB of hashes ({} bytes a leaf)", started.elapsed(), t.hash_bytes() / 1_000_000, t.hash_bytes() as u64 / N);
    let root = t.root(N).unwrap();
    let (i, m) = (N / 3 + 7, N / 2 + 13);
    let incl = t.inclusion_proof(i, N).unwrap();
    let cons = t.consistency_proof(m, N).unwrap();
    println!("inclusion proof at n={N}: {} hashes; consistency proof {m}->{N}: {} hashes", incl.len(), cons.len());
    let (leaf, old_root) = (t.leaf(i).unwrap(), t.root(m).unwrap());
    c.bench_function("root_1m", |b| b.iter(|| t.root(black_box(N)).unwrap()));
    c.bench_function("inclusion_proof_1m", |b| b.iter(|| t.inclusion_proof(black_box(i), N).unwrap()));
    c.bench_function("verify_inclusion_1m", |b| b.iter(|| assert!(verify_inclusion(&leaf, black_box(i), N, &incl, &root))));
    c.bench_function("consistency_proof_1m", |b| b.iter(|| t.consistency_proof(black_box(m), N).unwrap()));
    c.bench_function("verify_consistency_1m", |b| b.iter(|| assert!(verify_consistency(black_box(m), N, &old_root, &root, &cons))));
    let signer = CheckpointSigner::new("bench-daemon", &[9u8; 32]).unwrap();
    let head = TreeHead { origin: "bench-daemon/chain".into(), tree_size: N, root };
    let note = signer.sign(&head);
    let pk = signer.public_key();
    c.bench_function("sign_checkpoint", |b| b.iter(|| signer.sign(black_box(&head))));
    c.bench_function("verify_checkpoint", |b| b.iter(|| verify_checkpoint(black_box(&note), "bench-daemon", &pk).unwrap()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = proofs
}
criterion_main!(benches);
