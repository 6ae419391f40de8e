//! One thought as a line of a `jsonl` chain object.
//!
//! Contract: the line is the thought's reply JSON (its `Serialize`, field
//! for field and in order) less what is derived when a thought is read:
//! `source_episode`, each relation's `valid_at`, and `entity_type` when
//! unset (MentisDB 0.10's reply fields, never stored, so the replies can
//! grow without changing a byte of the files); a genesis thought's
//! `prev_hash` is `null` where the reply sends `""` (as MentisDB does). A
//! field added to [`Thought`] is in the line with no change here. A line
//! must be exactly what [`line`] writes for the thought it parses to
//! (`record.rs` refuses any other), so an edit that parses to the same
//! thought cannot slip past the hash. `core/tests/integration/integrity.rs` opens a
//! chain written before the reply fields grew.

use crate::thought::Thought;

/// `t`'s JSONL line, without its newline.
///
/// The derived fields are cut out of the serialized JSON as text. That is
/// exact: in `serde_json`'s output a `"` inside a string is always written
/// `\"`, so `,"source_episode":` and the like (a comma, then an unescaped
/// quote) occur only as the object keys they name.
pub(crate) fn line(t: &Thought) -> Vec<u8> {
    let mut json = serde_json::to_vec(t).expect("a thought serializes");
    cut(&mut json, br#","source_episode":null"#);
    if t.prev_hash.is_none() {
        replace(&mut json, br#","prev_hash":"""#, br#","prev_hash":null"#);
    }
    if t.entity_type().is_none() {
        cut(&mut json, br#","entity_type":null"#);
    }
    for valid_at in t.relations().iter().filter_map(|r| r.valid_at.as_ref()) {
        let field = serde_json::to_vec(&serde_json::json!({ "valid_at": valid_at })).expect("a string serializes");
        // `{"valid_at":"..."}` as `,"valid_at":"..."`.
        let mut key = b",".to_vec();
        key.extend_from_slice(&field[1..field.len() - 1]);
        cut(&mut json, &key);
    }
    json
}

/// Removes the first occurrence of `what` from `json`.
fn cut(json: &mut Vec<u8>, what: &[u8]) {
    replace(json, what, b"");
}

/// Replaces the first occurrence of `what` in `json` with `with`.
fn replace(json: &mut Vec<u8>, what: &[u8], with: &[u8]) {
    if let Some(at) = json.windows(what.len()).position(|w| w == what) {
        json.splice(at..at + what.len(), with.iter().copied());
    }
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
        t.extras_mut().thought_signature = Some(vec![1, 2, 250].into());
        t.extras_mut().signing_key_id = Some("k1".into());
        t.hash = crate::hex_bytes::ThoughtHash::from([0xab; 32]);
        t.stamp_relations();
        let reply = String::from_utf8(serde_json::to_vec(&t).unwrap()).unwrap();
        let stamp = format!(",\"valid_at\":\"{}\"", t.timestamp());
        assert!(reply.contains(&stamp) && reply.contains(",\"entity_type\":null,\"source_episode\":null"), "{reply}");
        let legacy = reply.replace(&stamp, "").replace(",\"entity_type\":null,\"source_episode\":null", "");
        assert_eq!(String::from_utf8(line(&t)).unwrap(), legacy);
        // With an entity type the label stays, in its place.
        t.extras_mut().entity_type = Some("service".into());
        let reply = String::from_utf8(serde_json::to_vec(&t).unwrap()).unwrap();
        let legacy = reply.replace(&stamp, "").replace(",\"source_episode\":null", "");
        assert_eq!(String::from_utf8(line(&t)).unwrap(), legacy);
    }

    /// Bytes written by the format before the line was derived from the
    /// reply JSON (the hand-listed record it replaced wrote exactly these),
    /// for a thought whose text spells the derived fields' keys.
    #[test]
    fn a_line_keeps_its_bytes_when_the_text_spells_the_derived_keys() {
        let mut t = golden_thought();
        t.content = r#"a,"source_episode":null b,"entity_type":null c,"valid_at":"2026" \ "q""#.into();
        t.tags = crate::labels([r#","valid_at":"x""#]);
        t.concepts = crate::labels([r#"}],"entity_type":null"#]);
        t.hash = crate::hex_bytes::ThoughtHash::from([0xcd; 32]);
        t.stamp_relations();
        let written = String::from_utf8(line(&t)).unwrap();
        assert_eq!(
            written,
            r#"{"schema_version":1,"id":"00000000-0000-4000-8000-000000000002","index":1,"timestamp":"2026-11-22T09:30:00.000Z","session_id":"s-1","agent_id":"agent-42","agent_name":"Planner","agent_owner":"ops-team","signing_key_id":null,"thought_signature":null,"thought_type":"Constraint","role":"Memory","content":"a,\"source_episode\":null b,\"entity_type\":null c,\"valid_at\":\"2026\" \\ \"q\"","confidence":0.98,"importance":0.95,"tags":[",\"valid_at\":\"x\""],"concepts":["}],\"entity_type\":null"],"refs":[0],"relations":[{"kind":"Supports","target_id":"00000000-0000-4000-8000-000000000001","target_index":0,"chain_key":null}],"prev_hash":"abababababababababababababababababababababababababababababababab","hash":"cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"}"#
        );
    }

    /// Bytes the format wrote before the line was derived from the reply
    /// JSON (the hand-listed record it replaced wrote exactly these): a
    /// genesis thought, a signed schema-3 thought with a relation into this
    /// chain and one into another, a forgotten thought.
    #[test]
    fn lines_keep_their_bytes_for_every_kind_of_thought() {
        let genesis = Thought { index: 0, prev_hash: None, hash: crate::hex_bytes::ThoughtHash::from([0x01; 32]), ..golden_thought() };
        let mut signed = Thought { schema_version: 3, hash: crate::hex_bytes::ThoughtHash::from([0x02; 32]), ..crate::canonical::tests::golden_thought_v2() }.with_extras(|e| e.entity_type = Some("service".into()));
        signed.extras_mut().signing_key_id = Some("key-1".into());
        signed.extras_mut().thought_signature = Some(vec![0, 7, 255].into());
        signed.extras_mut().relations.push(crate::thought::ThoughtRelation { kind: crate::thought::RelationKind::References, target_id: "far-away".into(), target_index: None, chain_key: Some("other".into()), valid_at: None });
        signed.stamp_relations();
        let forgotten = Thought {
            content: Box::default(),
            tags: Default::default(),
            concepts: Default::default(),
            content_salt: None,
            hash: crate::hex_bytes::ThoughtHash::from([0x04; 32]),
            ..crate::canonical::tests::golden_thought_v2()
        }.with_forgotten(crate::thought::Forgotten { content_digest: "03".repeat(32), forgotten_at: "2026-11-23T00:00:00.000Z".into(), forgotten_by: "ops".into(), reason: "pii \"quoted\"".into() });
        let written: Vec<String> = [genesis, signed, forgotten].iter().map(|t| String::from_utf8(line(t)).unwrap()).collect();
        assert_eq!(
            written,
            [
            r#"{"schema_version":1,"id":"00000000-0000-4000-8000-000000000002","index":0,"timestamp":"2026-11-22T09:30:00.000Z","session_id":"s-1","agent_id":"agent-42","agent_name":"Planner","agent_owner":"ops-team","signing_key_id":null,"thought_signature":null,"thought_type":"Constraint","role":"Memory","content":"This deployment path must work without external APIs.","confidence":0.98,"importance":0.95,"tags":["security","ops"],"concepts":["offline-mode"],"refs":[0],"relations":[{"kind":"Supports","target_id":"00000000-0000-4000-8000-000000000001","target_index":0,"chain_key":null}],"prev_hash":null,"hash":"0101010101010101010101010101010101010101010101010101010101010101"}"#,
            r#"{"schema_version":3,"id":"00000000-0000-4000-8000-000000000002","index":1,"timestamp":"2026-11-22T09:30:00.000Z","session_id":"s-1","agent_id":"agent-42","agent_name":"Planner","agent_owner":"ops-team","signing_key_id":"key-1","thought_signature":[0,7,255],"thought_type":"Constraint","role":"Memory","content":"This deployment path must work without external APIs.","confidence":0.98,"importance":0.95,"tags":["security","ops"],"concepts":["offline-mode"],"refs":[0],"relations":[{"kind":"Supports","target_id":"00000000-0000-4000-8000-000000000001","target_index":0,"chain_key":null},{"kind":"References","target_id":"far-away","target_index":null,"chain_key":"other"}],"entity_type":"service","prev_hash":"abababababababababababababababababababababababababababababababab","hash":"0202020202020202020202020202020202020202020202020202020202020202","content_salt":"00112233445566778899aabbccddeeff"}"#,
            r#"{"schema_version":2,"id":"00000000-0000-4000-8000-000000000002","index":1,"timestamp":"2026-11-22T09:30:00.000Z","session_id":"s-1","agent_id":"agent-42","agent_name":"Planner","agent_owner":"ops-team","signing_key_id":null,"thought_signature":null,"thought_type":"Constraint","role":"Memory","content":"","confidence":0.98,"importance":0.95,"tags":[],"concepts":[],"refs":[0],"relations":[{"kind":"Supports","target_id":"00000000-0000-4000-8000-000000000001","target_index":0,"chain_key":null}],"prev_hash":"abababababababababababababababababababababababababababababababab","hash":"0404040404040404040404040404040404040404040404040404040404040404","forgotten":{"content_digest":"0303030303030303030303030303030303030303030303030303030303030303","forgotten_at":"2026-11-23T00:00:00.000Z","forgotten_by":"ops","reason":"pii \"quoted\""}}"#,
        ]
        );
    }
}
