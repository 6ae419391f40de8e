//! The reference's thought, as its files hold it: the serde shapes of
//! schema 2 and 3 (mirrored from the reference's documented layout, in its
//! declaration order, since bincode writes variant indices), their
//! conversions into ours, and the reference's own hash chain, checked
//! before anything is imported.

use mentisdb_core::{RelationKind, ThoughtRole, ThoughtType};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The reference's thought types, in its declaration order (bincode writes
/// the variant index).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) enum RefType {
    PreferenceUpdate, UserTrait, RelationshipUpdate, Finding, Insight, FactLearned, PatternDetected, Hypothesis, Mistake, Correction,
    LessonLearned, AssumptionInvalidated, Constraint, Plan, Subgoal, Decision, StrategyShift, Wonder, Question, Idea, Experiment,
    ActionTaken, TaskComplete, Checkpoint, StateSnapshot, Handoff, Summary, Surprise, Reframe, Goal, LLMExtracted,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) enum RefRole {
    Memory, WorkingMemory, Summary, Compression, Checkpoint, Handoff, Audit, Retrospective,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) enum RefRelationKind {
    References, Summarizes, Corrects, Invalidates, CausedBy, Supports, Contradicts, DerivedFrom, ContinuesFrom, BranchesFrom, RelatedTo, Supersedes,
}

/// The reference's thought types are ours, name for name (ours add none
/// the reference lacks); only the declaration order differs.
impl From<RefType> for ThoughtType {
    fn from(t: RefType) -> ThoughtType {
        match t {
            RefType::PreferenceUpdate => ThoughtType::PreferenceUpdate,
            RefType::UserTrait => ThoughtType::UserTrait,
            RefType::RelationshipUpdate => ThoughtType::RelationshipUpdate,
            RefType::Finding => ThoughtType::Finding,
            RefType::Insight => ThoughtType::Insight,
            RefType::FactLearned => ThoughtType::FactLearned,
            RefType::PatternDetected => ThoughtType::PatternDetected,
            RefType::Hypothesis => ThoughtType::Hypothesis,
            RefType::Mistake => ThoughtType::Mistake,
            RefType::Correction => ThoughtType::Correction,
            RefType::LessonLearned => ThoughtType::LessonLearned,
            RefType::AssumptionInvalidated => ThoughtType::AssumptionInvalidated,
            RefType::Constraint => ThoughtType::Constraint,
            RefType::Plan => ThoughtType::Plan,
            RefType::Subgoal => ThoughtType::Subgoal,
            RefType::Decision => ThoughtType::Decision,
            RefType::StrategyShift => ThoughtType::StrategyShift,
            RefType::Wonder => ThoughtType::Wonder,
            RefType::Question => ThoughtType::Question,
            RefType::Idea => ThoughtType::Idea,
            RefType::Experiment => ThoughtType::Experiment,
            RefType::ActionTaken => ThoughtType::ActionTaken,
            RefType::TaskComplete => ThoughtType::TaskComplete,
            RefType::Checkpoint => ThoughtType::Checkpoint,
            RefType::StateSnapshot => ThoughtType::StateSnapshot,
            RefType::Handoff => ThoughtType::Handoff,
            RefType::Summary => ThoughtType::Summary,
            RefType::Surprise => ThoughtType::Surprise,
            RefType::Reframe => ThoughtType::Reframe,
            RefType::Goal => ThoughtType::Goal,
            RefType::LLMExtracted => ThoughtType::LLMExtracted,
        }
    }
}

impl From<RefRole> for ThoughtRole {
    fn from(r: RefRole) -> ThoughtRole {
        match r {
            RefRole::Memory => ThoughtRole::Memory,
            RefRole::WorkingMemory => ThoughtRole::WorkingMemory,
            RefRole::Summary => ThoughtRole::Summary,
            RefRole::Compression => ThoughtRole::Compression,
            RefRole::Checkpoint => ThoughtRole::Checkpoint,
            RefRole::Handoff => ThoughtRole::Handoff,
            RefRole::Audit => ThoughtRole::Audit,
            RefRole::Retrospective => ThoughtRole::Retrospective,
        }
    }
}

impl From<RefRelationKind> for RelationKind {
    fn from(k: RefRelationKind) -> RelationKind {
        match k {
            RefRelationKind::References => RelationKind::References,
            RefRelationKind::Summarizes => RelationKind::Summarizes,
            RefRelationKind::Corrects => RelationKind::Corrects,
            RefRelationKind::Invalidates => RelationKind::Invalidates,
            RefRelationKind::CausedBy => RelationKind::CausedBy,
            RefRelationKind::Supports => RelationKind::Supports,
            RefRelationKind::Contradicts => RelationKind::Contradicts,
            RefRelationKind::DerivedFrom => RelationKind::DerivedFrom,
            RefRelationKind::ContinuesFrom => RelationKind::ContinuesFrom,
            RefRelationKind::BranchesFrom => RelationKind::BranchesFrom,
            RefRelationKind::RelatedTo => RelationKind::RelatedTo,
            RefRelationKind::Supersedes => RelationKind::Supersedes,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct RefRelation {
    pub(super) kind: RefRelationKind,
    pub(super) target_id: Uuid,
    #[serde(default)]
    pub(super) chain_key: Option<String>,
    #[serde(default)]
    pub(super) valid_at: Option<String>,
    #[serde(default)]
    pub(super) invalid_at: Option<String>,
}

/// A reference thought of schema 2 or 3 (timestamps are chrono's serde
/// string, kept as read so the reference hash can be recomputed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct RefThought {
    #[serde(default)]
    pub(super) schema_version: u32,
    pub(super) id: Uuid,
    pub(super) index: u64,
    pub(super) timestamp: String,
    pub(super) session_id: Option<Uuid>,
    pub(super) agent_id: String,
    #[serde(default)]
    pub(super) signing_key_id: Option<String>,
    #[serde(default)]
    pub(super) thought_signature: Option<Vec<u8>>,
    pub(super) thought_type: RefType,
    pub(super) role: RefRole,
    pub(super) content: String,
    pub(super) confidence: Option<f32>,
    pub(super) importance: f32,
    pub(super) tags: Vec<String>,
    pub(super) concepts: Vec<String>,
    pub(super) refs: Vec<u64>,
    pub(super) relations: Vec<RefRelation>,
    #[serde(default)]
    pub(super) entity_type: Option<String>,
    /// Read to keep the layout; not carried over (no such field here).
    #[serde(default)]
    #[allow(dead_code)]
    pub(super) source_episode: Option<String>,
    pub(super) prev_hash: String,
    pub(super) hash: String,
}

/// Schema 2's binary layout: schema 3 without `entity_type`/`source_episode`.
#[derive(Deserialize)]
pub(super) struct RefThoughtV2 {
    pub(super) schema_version: u32,
    pub(super) id: Uuid,
    pub(super) index: u64,
    pub(super) timestamp: String,
    pub(super) session_id: Option<Uuid>,
    pub(super) agent_id: String,
    pub(super) signing_key_id: Option<String>,
    pub(super) thought_signature: Option<Vec<u8>>,
    pub(super) thought_type: RefType,
    pub(super) role: RefRole,
    pub(super) content: String,
    pub(super) confidence: Option<f32>,
    pub(super) importance: f32,
    pub(super) tags: Vec<String>,
    pub(super) concepts: Vec<String>,
    pub(super) refs: Vec<u64>,
    pub(super) relations: Vec<RefRelation>,
    pub(super) prev_hash: String,
    pub(super) hash: String,
}

impl From<RefThoughtV2> for RefThought {
    fn from(t: RefThoughtV2) -> Self {
        RefThought {
            schema_version: t.schema_version, id: t.id, index: t.index, timestamp: t.timestamp, session_id: t.session_id, agent_id: t.agent_id,
            signing_key_id: t.signing_key_id, thought_signature: t.thought_signature, thought_type: t.thought_type, role: t.role, content: t.content,
            confidence: t.confidence, importance: t.importance, tags: t.tags, concepts: t.concepts, refs: t.refs, relations: t.relations,
            entity_type: None, source_episode: None, prev_hash: t.prev_hash, hash: t.hash,
        }
    }
}

/// The reference's hash: SHA-256 (lowercase hex) of the bincode encoding of
/// these fields in this order (entity_type and source_episode excluded).
#[derive(Serialize)]
struct RefHashInput<'a> {
    schema_version: u32,
    id: Uuid,
    index: u64,
    timestamp: &'a str,
    session_id: Option<Uuid>,
    agent_id: &'a str,
    signing_key_id: Option<&'a str>,
    thought_signature: Option<&'a [u8]>,
    thought_type: RefType,
    role: RefRole,
    content: &'a str,
    confidence: Option<f32>,
    importance: f32,
    tags: &'a [String],
    concepts: &'a [String],
    refs: &'a [u64],
    relations: &'a [RefRelation],
    prev_hash: &'a str,
}

pub(super) fn reference_hash(t: &RefThought) -> String {
    let input = RefHashInput {
        schema_version: t.schema_version, id: t.id, index: t.index, timestamp: &t.timestamp, session_id: t.session_id, agent_id: &t.agent_id,
        signing_key_id: t.signing_key_id.as_deref(), thought_signature: t.thought_signature.as_deref(), thought_type: t.thought_type, role: t.role,
        content: &t.content, confidence: t.confidence, importance: t.importance, tags: &t.tags, concepts: &t.concepts, refs: &t.refs,
        relations: &t.relations, prev_hash: &t.prev_hash,
    };
    let bytes = bincode::serde::encode_to_vec(&input, bincode::config::standard()).unwrap_or_default();
    hex::encode(ring::digest::digest(&ring::digest::SHA256, &bytes))
}

/// One decoded reference thought (opaque outside this module).
#[derive(Debug, Clone)]
pub struct RefThoughtPub(pub(super) RefThought);

/// A thought whose stored hash or link does not match the reference's own
/// hash chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashMismatch {
    pub chain_key: String,
    pub index: u64,
    pub id: String,
    pub reason: String,
}

/// Checks the reference's hash chain; every mismatch is returned.
pub fn check_reference_chain(chain_key: &str, thoughts: &[RefThoughtPub]) -> Vec<HashMismatch> {
    let mut out = Vec::new();
    let mut prev = String::new();
    for (pos, RefThoughtPub(t)) in thoughts.iter().enumerate() {
        let mut reasons = Vec::new();
        if t.index != pos as u64 {
            reasons.push(format!("index {} at position {pos}", t.index));
        }
        if t.prev_hash != prev {
            reasons.push("prev_hash does not name the previous thought's hash".to_string());
        }
        let computed = reference_hash(t);
        if computed != t.hash {
            reasons.push(format!("stored hash {} but the content hashes to {computed}", t.hash));
        }
        if !reasons.is_empty() {
            out.push(HashMismatch { chain_key: chain_key.to_string(), index: t.index, id: t.id.to_string(), reason: reasons.join("; ") });
        }
        prev = t.hash.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reference name, in the reference's declaration order (its bincode variant index).
    const TYPES: [RefType; 31] = [
        RefType::PreferenceUpdate, RefType::UserTrait, RefType::RelationshipUpdate, RefType::Finding, RefType::Insight, RefType::FactLearned, RefType::PatternDetected, RefType::Hypothesis,
        RefType::Mistake, RefType::Correction, RefType::LessonLearned, RefType::AssumptionInvalidated, RefType::Constraint, RefType::Plan, RefType::Subgoal, RefType::Decision,
        RefType::StrategyShift, RefType::Wonder, RefType::Question, RefType::Idea, RefType::Experiment, RefType::ActionTaken, RefType::TaskComplete, RefType::Checkpoint,
        RefType::StateSnapshot, RefType::Handoff, RefType::Summary, RefType::Surprise, RefType::Reframe, RefType::Goal, RefType::LLMExtracted,
    ];
    const ROLES: [RefRole; 8] = [RefRole::Memory, RefRole::WorkingMemory, RefRole::Summary, RefRole::Compression, RefRole::Checkpoint, RefRole::Handoff, RefRole::Audit, RefRole::Retrospective];
    const KINDS: [RefRelationKind; 12] = [
        RefRelationKind::References, RefRelationKind::Summarizes, RefRelationKind::Corrects, RefRelationKind::Invalidates, RefRelationKind::CausedBy, RefRelationKind::Supports,
        RefRelationKind::Contradicts, RefRelationKind::DerivedFrom, RefRelationKind::ContinuesFrom, RefRelationKind::BranchesFrom, RefRelationKind::RelatedTo, RefRelationKind::Supersedes,
    ];

    /// Each reference value becomes our value of the same name (the
    /// reference writes the name in JSONL), and bincode's variant index is
    /// the position in the reference's declaration.
    #[test]
    fn reference_enums_become_ours_by_name() {
        let config = bincode::config::standard();
        for (i, t) in TYPES.into_iter().enumerate() {
            let name = serde_json::to_value(t).unwrap();
            assert_eq!(ThoughtType::from(t).as_str(), name, "{name}");
            assert_eq!(bincode::serde::encode_to_vec(t, config).unwrap(), [i as u8], "{name}");
        }
        for (i, r) in ROLES.into_iter().enumerate() {
            let name = serde_json::to_value(r).unwrap();
            assert_eq!(ThoughtRole::from(r).as_str(), name, "{name}");
            assert_eq!(bincode::serde::encode_to_vec(r, config).unwrap(), [i as u8], "{name}");
        }
        for (i, k) in KINDS.into_iter().enumerate() {
            let name = serde_json::to_value(k).unwrap();
            assert_eq!(RelationKind::from(k).as_str(), name, "{name}");
            assert_eq!(bincode::serde::encode_to_vec(k, config).unwrap(), [i as u8], "{name}");
        }
    }
}
