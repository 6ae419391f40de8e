//! Our chain object made from reference thoughts: the same ids, indices,
//! timestamps, agents, types, roles, scores, tags, concepts, refs,
//! relations and signatures, in our record format and rehashed with our
//! canonical hash. Every decoder's thoughts end here.

use super::agents::RefAgent;
use super::thought::RefThoughtPub;
use super::ReferenceError;
use mentisdb_core::canonical::compute_thought_hash;
use mentisdb_core::record::{encode_header, encode_thought};
use mentisdb_core::{ChainFormat, Thought, ThoughtExtras, ThoughtRelation};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Builds our chain object (header + records, our canonical hashes) from
/// the reference thoughts; agents' names and owners come from `agents`.
pub(super) fn build_chain(chain_key: &str, format: ChainFormat, thoughts: &[RefThoughtPub], agents: &[RefAgent]) -> Result<Vec<u8>, ReferenceError> {
    let by_agent: BTreeMap<&str, &RefAgent> = agents.iter().map(|a| (a.agent_id.as_str(), a)).collect();
    let index_of: BTreeMap<Uuid, u64> = thoughts.iter().map(|RefThoughtPub(t)| (t.id, t.index)).collect();
    let mut bytes = encode_header(format, chain_key);
    let mut prev: Option<mentisdb_core::ThoughtHash> = None;
    for RefThoughtPub(t) in thoughts {
        let agent = by_agent.get(t.agent_id.as_str());
        let name = agent.and_then(|a| a.display_name.clone()).filter(|n| !n.trim().is_empty()).unwrap_or_else(|| t.agent_id.clone());
        let entity_type = t.entity_type.clone().filter(|e| !e.trim().is_empty());
        let relations = t
            .relations
            .iter()
            .map(|r| {
                let local = r.chain_key.as_deref().is_none_or(|k| k == chain_key);
                ThoughtRelation { valid_at: None, kind: r.kind.into(), target_id: r.target_id.to_string(), target_index: if local { index_of.get(&r.target_id).copied() } else { None }, chain_key: r.chain_key.clone() }
            })
            .collect();
        let (timestamp_ms, timestamp_fraction, timestamp_text) = mentisdb_core::timestamp::timestamp_parts(&t.timestamp);
        let mut ours = Thought {
            // Schema 1 (no salt) keeps the thought as it was; a typed thought is schema 3, which needs a salt.
            schema_version: if entity_type.is_some() { 3 } else { 1 },
            timestamp_fraction,
            source_episode: Default::default(),
            id: t.id.to_string().into(),
            index: t.index,
            timestamp_ms,
            agent_id: t.agent_id.as_str().into(),
            agent_name: name.into(),
            thought_type: t.thought_type.into(),
            role: t.role.into(),
            content: t.content.as_str().into(),
            importance: f64::from(t.importance),
            tags: mentisdb_core::labels(&t.tags),
            concepts: mentisdb_core::labels(&t.concepts),
            extras: ThoughtExtras {
                session_id: t.session_id.map(|s| s.to_string().into()),
                agent_owner: agent.and_then(|a| a.owner.as_deref()).map(Into::into),
                signing_key_id: t.signing_key_id.as_deref().map(Into::into),
                thought_signature: t.thought_signature.as_deref().map(Into::into),
                confidence: t.confidence.map(f64::from),
                refs: t.refs.clone(),
                relations,
                entity_type: entity_type.as_deref().map(Into::into),
                timestamp_text,
                forgotten: None,
            }
            .boxed(),
            content_salt: None,
            prev_hash: prev,
            hash: Default::default(),
        };
        if entity_type.is_some() {
            // A random salt, as for any schema 3 thought: one derived from
            // the (public) id would let anyone confirm a guess of a forgotten
            // thought's content. Re-runs skip the chain, so nothing repeats it.
            let mut salt = [0u8; 16];
            getrandom::fill(&mut salt).map_err(ReferenceError::NoSalt)?;
            ours.content_salt = Some(salt.into());
        }
        ours.hash = compute_thought_hash(&ours);
        prev = Some(ours.hash);
        bytes.extend_from_slice(&encode_thought(format, &ours));
    }
    Ok(bytes)
}
