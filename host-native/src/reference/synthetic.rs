//! Synthetic reference chains, written in the reference's own formats, for
//! the import figure and tests (no reference code needed to make one).

use super::thought::{reference_hash, RefRelation, RefRelationKind, RefRole, RefThought, RefType};
use uuid::Uuid;

/// A synthetic reference chain of `n` thoughts in the reference's own file
/// format (binary `.tcbin`, or legacy JSONL when `jsonl`), with a valid
/// reference hash chain: for the import figure and tests (no reference code
/// needed to make one).
pub fn synthetic_reference_chain(n: usize, jsonl: bool) -> Vec<u8> {
    let types = [RefType::Finding, RefType::Decision, RefType::FactLearned, RefType::Plan, RefType::LessonLearned];
    let mut out = Vec::new();
    let mut prev = String::new();
    for i in 0..n {
        let mut t = RefThought {
            schema_version: 3,
            id: Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0000 + i as u128),
            index: i as u64,
            timestamp: format!("2026-01-{:02}T{:02}:{:02}:{:02}.{:09}Z", 1 + (i / 86_400) % 28, (i / 3600) % 24, (i / 60) % 60, i % 60, i),
            session_id: None,
            agent_id: format!("agent-{}", i % 7),
            signing_key_id: None,
            thought_signature: None,
            thought_type: types[i % types.len()],
            role: RefRole::Memory,
            content: format!("Thought {i}: the service on host-{} answered in {} ms after the deploy.", i % 13, 10 + i % 500),
            confidence: Some(0.5),
            importance: 0.25 + (i % 4) as f32 * 0.25,
            tags: vec![format!("t{}", i % 20)],
            concepts: vec!["service".into()],
            refs: if i > 0 { vec![(i - 1) as u64] } else { vec![] },
            relations: if i > 0 { vec![RefRelation { kind: RefRelationKind::References, target_id: Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0000 + (i - 1) as u128), chain_key: None, valid_at: None, invalid_at: None }] } else { vec![] },
            entity_type: None,
            source_episode: None,
            prev_hash: prev.clone(),
            hash: String::new(),
        };
        t.hash = reference_hash(&t);
        prev = t.hash.clone();
        if jsonl {
            out.extend_from_slice(serde_json::to_string(&t).expect("a thought serializes").as_bytes());
            out.push(b'\n');
        } else {
            let payload = bincode::serde::encode_to_vec(&t, bincode::config::standard()).expect("a thought encodes");
            out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            out.extend_from_slice(&payload);
        }
    }
    out
}
