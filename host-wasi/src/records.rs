//! Conversions between the WIT records of the typed exports and the JSON of
//! the dispatcher. A typed export builds the tool's JSON arguments, calls
//! the same dispatcher as `memory.call`, and reads the result back into the
//! tool's typed reply ([`mentisdb_core::dispatch::replies`]), never field by
//! name: no tool logic here.

use crate::wit::{
    AppendRequest, BootstrapRequest, BootstrapResult, Forgotten, HeadInfo, MemoryScope, Relation, RelationKind, RelationRequest,
    SearchRequest, Thought, ThoughtRole, ThoughtType,
};
use mentisdb_core::dispatch::replies::{BootstrapReply, HeadReply};
use mentisdb_core::thought as core;
use serde_json::{json, Map, Value};

/// Pairs a WIT enum with its core twin. The `match`es are exhaustive both
/// ways, so a value added on one side only fails the build.
/// `Wit = Core` pairs a value whose Rust names differ (`LlmExtracted`, `LLMExtracted`).
macro_rules! enum_map {
    ($to_core:ident, $from_core:ident, $wit:ident, $core:ty, [$($v:ident),+ $(,)?] $(, [$($w:ident = $c:ident),+ $(,)?])?) => {
        /// The core value of a WIT enum value.
        pub fn $to_core(w: $wit) -> $core {
            match w { $($wit::$v => <$core>::$v,)+ $($($wit::$w => <$core>::$c,)+)? }
        }
        /// The WIT value of a core enum value.
        pub fn $from_core(c: $core) -> $wit {
            match c { $(<$core>::$v => $wit::$v,)+ $($(<$core>::$c => $wit::$w,)+)? }
        }
    };
}

enum_map!(thought_type_to_core, thought_type_from_core, ThoughtType, core::ThoughtType, [
    PreferenceUpdate, UserTrait, RelationshipUpdate, Finding, Insight, FactLearned, PatternDetected,
    Hypothesis, Mistake, Correction, AssumptionInvalidated, Constraint, Plan, Subgoal, Decision,
    StrategyShift, Wonder, Question, Idea, Experiment, ActionTaken, TaskComplete, Checkpoint,
    StateSnapshot, Handoff, Summary, Surprise, LessonLearned, Reframe, Goal,
], [LlmExtracted = LLMExtracted]);

/// The core value of a WIT memory scope (only requests carry one).
fn scope_to_core(s: MemoryScope) -> core::MemoryScope {
    match s {
        MemoryScope::User => core::MemoryScope::User,
        MemoryScope::Session => core::MemoryScope::Session,
        MemoryScope::Agent => core::MemoryScope::Agent,
    }
}

enum_map!(role_to_core, role_from_core, ThoughtRole, core::ThoughtRole, [
    Memory, WorkingMemory, Summary, Compression, Checkpoint, Handoff, Audit, Retrospective,
]);

enum_map!(relation_to_core, relation_from_core, RelationKind, core::RelationKind, [
    References, Summarizes, Corrects, Invalidates, CausedBy, Supports, Contradicts, DerivedFrom,
    ContinuesFrom, BranchesFrom, RelatedTo, Supersedes,
]);

/// An object from `(key, value)` pairs, leaving out nulls and empty lists
/// (an empty filter list means "no filter", not "match nothing").
fn args(pairs: Vec<(&str, Value)>) -> Value {
    let mut map = Map::new();
    for (k, v) in pairs {
        let empty = v.is_null() || v.as_array().is_some_and(|a| a.is_empty());
        if !empty {
            map.insert(k.to_string(), v);
        }
    }
    Value::Object(map)
}

/// Arguments of `mentisdb_bootstrap`.
pub fn bootstrap_args(r: BootstrapRequest) -> Value {
    args(vec![
        ("chain_key", json!(r.chain_key)),
        ("agent_id", json!(r.agent_id)),
        ("agent_name", json!(r.agent_name)),
        ("agent_owner", json!(r.agent_owner)),
        ("content", json!(r.content)),
        ("importance", json!(r.importance)),
        ("tags", json!(r.tags)),
        ("concepts", json!(r.concepts)),
        ("storage_adapter", json!(r.storage_adapter)),
    ])
}

/// Arguments of `mentisdb_append`.
pub fn append_args(r: AppendRequest) -> Value {
    args(vec![
        ("chain_key", json!(r.chain_key)),
        ("agent_id", json!(r.agent_id)),
        ("agent_name", json!(r.agent_name)),
        ("agent_owner", json!(r.agent_owner)),
        ("thought_type", json!(thought_type_to_core(r.thought_type).as_str())),
        ("role", json!(r.role.map(|x| role_to_core(x).as_str()))),
        ("content", json!(r.content)),
        ("importance", json!(r.importance)),
        ("confidence", json!(r.confidence)),
        ("tags", json!(r.tags)),
        ("concepts", json!(r.concepts)),
        ("refs", json!(r.refs)),
        ("relations", Value::Array(r.relations.into_iter().map(relation_arg).collect())),
        ("session_id", json!(r.session_id)),
        ("thought_id", json!(r.thought_id)),
        ("signing_key_id", json!(r.signing_key_id)),
        ("thought_signature", json!(r.thought_signature)),
        ("entity_type", json!(r.entity_type)),
        ("scope", json!(r.scope.map(|x| scope_to_core(x).as_str()))),
        ("fencing", r.fencing.map_or(Value::Null, |f| json!({"key": f.key, "token": f.token}))),
    ])
}

/// One entry of `mentisdb_append`'s `relations`.
fn relation_arg(r: RelationRequest) -> Value {
    args(vec![
        ("kind", json!(relation_to_core(r.kind).as_str())),
        ("target_id", json!(r.target_id)),
        ("target_index", json!(r.target_index)),
        ("chain_key", json!(r.chain_key)),
    ])
}

/// Arguments of `mentisdb_search`.
pub fn search_args(r: SearchRequest) -> Value {
    let types: Vec<&str> = r.thought_types.into_iter().map(|t| thought_type_to_core(t).as_str()).collect();
    let roles: Vec<&str> = r.roles.into_iter().map(|t| role_to_core(t).as_str()).collect();
    args(vec![
        ("chain_key", json!(r.chain_key)),
        ("text", json!(r.text)),
        ("thought_types", json!(types)),
        ("roles", json!(roles)),
        ("tags_any", json!(r.tags_any)),
        ("concepts_any", json!(r.concepts_any)),
        ("agent_ids", json!(r.agent_ids)),
        ("agent_names", json!(r.agent_names)),
        ("agent_owners", json!(r.agent_owners)),
        ("min_importance", json!(r.min_importance)),
        ("min_confidence", json!(r.min_confidence)),
        ("since", json!(r.since)),
        ("until", json!(r.until)),
        ("limit", json!(r.limit)),
        ("entity_type", json!(r.entity_type)),
        ("scope", json!(r.scope.map(|x| scope_to_core(x).as_str()))),
    ])
}

/// Arguments holding only an optional chain key (and more, for recent context).
pub fn chain_args(chain_key: Option<String>, last_n: Option<u32>) -> Value {
    args(vec![("chain_key", json!(chain_key)), ("last_n", json!(last_n))])
}


/// The WIT record of a stored thought.
///
/// Destructured without `..` (here and below): a field added to the core
/// type fails this build until the WIT record carries it too.
pub fn thought(t: core::Thought) -> Thought {
    let core::Thought {
        schema_version,
        id,
        index,
        timestamp_ms,
        timestamp_fraction,
        agent_id,
        agent_name,
        thought_type,
        role,
        content,
        importance,
        tags,
        concepts,
        extras,
        // Always null (`NoEpisode`): the WIT record has no field for it.
        source_episode: _,
        prev_hash,
        hash,
        content_salt,
    } = t;
    let core::ThoughtExtras { session_id, agent_owner, signing_key_id, thought_signature, confidence, refs, relations, entity_type, timestamp_text, forgotten } = extras.map(|e| *e).unwrap_or_default();
    Thought {
        schema_version: u32::from(schema_version),
        id: id.to_string(),
        index,
        timestamp: mentisdb_core::timestamp::format_rfc3339_text(timestamp_ms, timestamp_fraction, timestamp_text.as_deref()).to_string(),
        session_id: session_id.map(String::from),
        agent_id: agent_id.into(),
        agent_name: agent_name.into(),
        agent_owner: agent_owner.map(String::from),
        signing_key_id: signing_key_id.map(String::from),
        thought_signature: thought_signature.map(Vec::from),
        thought_type: thought_type_from_core(thought_type),
        role: role_from_core(role),
        content: content.into(),
        confidence,
        importance,
        tags: tags.iter().map(|l| l.to_string()).collect(),
        concepts: concepts.iter().map(|l| l.to_string()).collect(),
        refs,
        relations: relations.into_iter().map(relation).collect(),
        prev_hash: prev_hash.map(|h| h.to_hex()),
        hash: hash.to_hex(),
        content_salt: content_salt.map(|s| s.to_hex()),
        forgotten: forgotten.map(|f| {
            let core::Forgotten { content_digest, forgotten_at, forgotten_by, reason } = *f;
            Forgotten { content_digest, forgotten_at, forgotten_by, reason }
        }),
        entity_type: entity_type.map(String::from),
    }
}

/// The WIT record of a stored relation.
fn relation(r: core::ThoughtRelation) -> Relation {
    let core::ThoughtRelation { kind, target_id, target_index, chain_key, valid_at } = r;
    Relation { kind: relation_from_core(kind), target_id, target_index, chain_key, valid_at }
}

/// The WIT record of `mentisdb_bootstrap`'s reply.
pub fn bootstrap_result(r: BootstrapReply) -> BootstrapResult {
    // The skills are read through `memory.call` (see the WIT docs).
    let BootstrapReply { bootstrapped, thought_count, head_hash, available_skills: _ } = r;
    BootstrapResult { bootstrapped, thought_count, head_hash }
}

/// The WIT record of `mentisdb_head`'s reply.
pub fn head_info(r: HeadReply) -> HeadInfo {
    let HeadReply { chain_key, thought_count, head_hash, latest_thought, integrity_ok, storage_location } = r;
    HeadInfo { chain_key, thought_count, head_hash, latest_thought: latest_thought.map(thought), integrity_ok, storage_location }
}
