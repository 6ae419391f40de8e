//! One thought as a line of a `jsonl` chain object.
//!
//! Contract: the line is the JSON of the thought's stored fields, in this
//! order, with the omissions the format has always had: `entity_type` only
//! when set, `content_salt` and `forgotten` only when present, no
//! `source_episode` and no relation `valid_at`. Those two are reply fields
//! derived when a thought is read (MentisDB 0.10's shapes), never stored,
//! so the tool replies can grow without changing a byte of the files. A
//! line must be exactly what [`line`] writes for the thought it parses to
//! (`record.rs` refuses any other), so an edit that parses to the same
//! thought cannot slip past the hash.

use crate::thought::{Forgotten, RelationKind, Thought, ThoughtRole, ThoughtType};
use serde::Serialize;

#[derive(Serialize)]
struct Record<'a> {
    schema_version: u32,
    id: &'a str,
    index: u64,
    timestamp: &'a str,
    session_id: Option<&'a str>,
    agent_id: &'a str,
    agent_name: &'a str,
    agent_owner: Option<&'a str>,
    signing_key_id: Option<&'a str>,
    thought_signature: Option<&'a [u8]>,
    thought_type: ThoughtType,
    role: ThoughtRole,
    content: &'a str,
    confidence: Option<f64>,
    importance: f64,
    tags: &'a [String],
    concepts: &'a [String],
    refs: &'a [u64],
    relations: Vec<Relation<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entity_type: Option<&'a str>,
    prev_hash: Option<&'a str>,
    hash: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content_salt: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    forgotten: Option<&'a Forgotten>,
}

#[derive(Serialize)]
struct Relation<'a> {
    kind: RelationKind,
    target_id: &'a str,
    target_index: Option<u64>,
    chain_key: Option<&'a str>,
}

/// `t`'s JSONL line, without its newline.
pub(crate) fn line(t: &Thought) -> Vec<u8> {
    let record = Record {
        schema_version: t.schema_version,
        id: &t.id,
        index: t.index,
        timestamp: &t.timestamp,
        session_id: t.session_id.as_deref(),
        agent_id: &t.agent_id,
        agent_name: &t.agent_name,
        agent_owner: t.agent_owner.as_deref(),
        signing_key_id: t.signing_key_id.as_deref(),
        thought_signature: t.thought_signature.as_deref(),
        thought_type: t.thought_type,
        role: t.role,
        content: &t.content,
        confidence: t.confidence,
        importance: t.importance,
        tags: &t.tags,
        concepts: &t.concepts,
        refs: &t.refs,
        relations: t.relations.iter().map(|r| Relation { kind: r.kind, target_id: &r.target_id, target_index: r.target_index, chain_key: r.chain_key.as_deref() }).collect(),
        entity_type: t.entity_type.as_deref(),
        prev_hash: t.prev_hash.as_deref(),
        hash: &t.hash,
        content_salt: t.content_salt.as_deref(),
        forgotten: t.forgotten.as_deref(),
    };
    serde_json::to_vec(&record).expect("a thought serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    /// The line is the thought's JSON as the format always wrote it: the
    /// reply JSON minus the derived fields, byte for byte (signature bytes,
    /// relations, optional fields and their order included).
    #[test]
    fn a_line_is_the_reply_json_without_the_derived_fields() {
        let mut t = golden_thought();
        t.thought_signature = Some(vec![1, 2, 250]);
        t.signing_key_id = Some("k1".into());
        t.hash = "ab".repeat(32);
        t.stamp_relations();
        let reply = String::from_utf8(serde_json::to_vec(&t).unwrap()).unwrap();
        let stamp = format!(",\"valid_at\":\"{}\"", t.timestamp);
        assert!(reply.contains(&stamp) && reply.contains(",\"entity_type\":null,\"source_episode\":null"), "{reply}");
        let legacy = reply.replace(&stamp, "").replace(",\"entity_type\":null,\"source_episode\":null", "");
        assert_eq!(String::from_utf8(line(&t)).unwrap(), legacy);
        // With an entity type the label stays, in its place.
        t.entity_type = Some("service".into());
        let reply = String::from_utf8(serde_json::to_vec(&t).unwrap()).unwrap();
        let legacy = reply.replace(&stamp, "").replace(",\"source_episode\":null", "");
        assert_eq!(String::from_utf8(line(&t)).unwrap(), legacy);
    }
}
