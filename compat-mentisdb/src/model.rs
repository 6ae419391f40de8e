//! MentisDB 0.10.10's data shapes: [`ThoughtInput`] (what to append),
//! [`Thought`] (what was committed, converted from the engine's thought)
//! and [`ThoughtQuery`] (a filter description).

use crate::{ThoughtRelationKind, ThoughtRole, ThoughtType};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// A thought id as a `Uuid`: this engine's ids are UUIDs; an id a client
/// chose that is not one maps to the UUID of the first 16 bytes of its
/// SHA-256 (stable, so lookups by that `Uuid` still work).
fn uuid_of(id: &str) -> Uuid {
    Uuid::parse_str(id).unwrap_or_else(|_| {
        let digest = Sha256::digest(id.as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        Uuid::from_bytes(bytes)
    })
}

/// A typed edge from one thought to another (0.10.10's shape; the
/// temporal bounds are not stored by this engine and read as `None`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ThoughtRelation {
    /// What the relation means.
    pub kind: ThoughtRelationKind,
    /// The target thought's id.
    pub target_id: Uuid,
    /// The target's chain when it is not this chain.
    #[serde(default)]
    pub chain_key: Option<String>,
    /// When the relation became valid (not stored: `None` when read).
    #[serde(default)]
    pub valid_at: Option<DateTime<Utc>>,
    /// When the relation stopped being valid (not stored: `None` when read).
    #[serde(default)]
    pub invalid_at: Option<DateTime<Utc>>,
}

impl ThoughtRelation {
    /// A same-chain relation of `kind` to `target_id`.
    pub fn new(kind: ThoughtRelationKind, target_id: Uuid) -> Self {
        ThoughtRelation { kind, target_id, chain_key: None, valid_at: None, invalid_at: None }
    }
}

/// A committed thought (0.10.10's public fields).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Thought {
    /// Record schema version (this engine's: 1, 2 or 3).
    pub schema_version: u32,
    /// Stable unique id.
    pub id: Uuid,
    /// Zero-based position in the chain.
    pub index: u64,
    /// When it was committed.
    pub timestamp: DateTime<Utc>,
    /// Session it belongs to, if any.
    pub session_id: Option<Uuid>,
    /// The producing agent.
    pub agent_id: String,
    /// Key id of the signature, if signed.
    #[serde(default)]
    pub signing_key_id: Option<String>,
    /// Detached Ed25519 signature, if signed.
    #[serde(default)]
    pub thought_signature: Option<Vec<u8>>,
    /// Semantic kind.
    pub thought_type: ThoughtType,
    /// Operational role.
    pub role: ThoughtRole,
    /// The text.
    pub content: String,
    /// Confidence in 0..=1, if given.
    pub confidence: Option<f32>,
    /// Importance in 0..=1.
    pub importance: f32,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// Concept labels.
    pub concepts: Vec<String>,
    /// Indices of earlier thoughts it refers to.
    pub refs: Vec<u64>,
    /// Typed relations.
    pub relations: Vec<ThoughtRelation>,
    /// Entity type label, if any.
    #[serde(default)]
    pub entity_type: Option<String>,
    /// Episode it came from (not stored by this engine: `None`).
    #[serde(default)]
    pub source_episode: Option<String>,
    /// The previous thought's hash (empty for the first thought).
    pub prev_hash: String,
    /// This thought's hash (the engine's canonical SHA-256).
    pub hash: String,
}

impl Thought {
    /// The engine's thought in 0.10.10's shape.
    pub(crate) fn from_core(t: &mentisdb_core::Thought) -> Thought {
        Thought {
            schema_version: u32::from(t.schema_version),
            id: uuid_of(&t.id.as_text()),
            index: t.index,
            timestamp: DateTime::parse_from_rfc3339(&t.timestamp()).map(|d| d.with_timezone(&Utc)).unwrap_or_default(),
            session_id: t.session_id().map(uuid_of),
            agent_id: t.agent_id.to_string(),
            signing_key_id: t.signing_key_id().map(str::to_string),
            thought_signature: t.thought_signature().map(<[u8]>::to_vec),
            thought_type: t.thought_type,
            role: t.role,
            content: t.content.to_string(),
            confidence: t.confidence().map(|c| c as f32),
            importance: t.importance as f32,
            tags: t.tags.iter().map(|l| l.to_string()).collect(),
            concepts: t.concepts.iter().map(|l| l.to_string()).collect(),
            refs: t.refs().to_vec(),
            relations: t.relations().iter().map(|r| ThoughtRelation { kind: r.kind, target_id: uuid_of(&r.target_id), chain_key: r.chain_key.clone(), valid_at: r.valid_at.as_deref().and_then(|v| DateTime::parse_from_rfc3339(v).ok()).map(|d| d.with_timezone(&Utc)), invalid_at: None }).collect(),
            entity_type: t.entity_type().map(str::to_string),
            source_episode: None,
            prev_hash: t.prev_hash.map(|h| h.to_hex()).unwrap_or_default(),
            hash: t.hash.to_hex(),
        }
    }
}

/// A thought to append (0.10.10's builder).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThoughtInput {
    /// Session id, if any.
    pub session_id: Option<Uuid>,
    /// Agent display name for the registry.
    pub agent_name: Option<String>,
    /// Agent owner for the registry.
    pub agent_owner: Option<String>,
    /// Key id of the signature, if signed.
    pub signing_key_id: Option<String>,
    /// Detached signature, if signed.
    pub thought_signature: Option<Vec<u8>>,
    /// Semantic kind.
    pub thought_type: ThoughtType,
    /// Operational role (default `Memory`).
    pub role: ThoughtRole,
    /// The text.
    pub content: String,
    /// Confidence, if any.
    pub confidence: Option<f32>,
    /// Importance (default 0.5).
    pub importance: f32,
    /// Tags.
    pub tags: Vec<String>,
    /// Concepts.
    pub concepts: Vec<String>,
    /// Indices of earlier thoughts.
    pub refs: Vec<u64>,
    /// Typed relations (targets by id).
    pub relations: Vec<ThoughtRelation>,
    /// Entity type label.
    pub entity_type: Option<String>,
    /// Episode (accepted, not stored by this engine).
    #[serde(default)]
    pub source_episode: Option<String>,
}

impl ThoughtInput {
    /// A thought of `thought_type` with `content`, role `Memory`, importance 0.5.
    pub fn new(thought_type: ThoughtType, content: impl Into<String>) -> Self {
        ThoughtInput {
            session_id: None,
            agent_name: None,
            agent_owner: None,
            signing_key_id: None,
            thought_signature: None,
            thought_type,
            role: ThoughtRole::Memory,
            content: content.into(),
            confidence: None,
            importance: 0.5,
            tags: Vec::new(),
            concepts: Vec::new(),
            refs: Vec::new(),
            relations: Vec::new(),
            entity_type: None,
            source_episode: None,
        }
    }
    /// Sets the session id.
    pub fn with_session_id(mut self, session_id: Uuid) -> Self {
        self.session_id = Some(session_id);
        self
    }
    /// Sets the agent display name.
    pub fn with_agent_name(mut self, agent_name: impl Into<String>) -> Self {
        self.agent_name = Some(agent_name.into());
        self
    }
    /// Sets the agent owner.
    pub fn with_agent_owner(mut self, agent_owner: impl Into<String>) -> Self {
        self.agent_owner = Some(agent_owner.into());
        self
    }
    /// Sets the signing key id.
    pub fn with_signing_key_id(mut self, signing_key_id: impl Into<String>) -> Self {
        self.signing_key_id = Some(signing_key_id.into());
        self
    }
    /// Sets the detached signature.
    pub fn with_thought_signature(mut self, thought_signature: Vec<u8>) -> Self {
        self.thought_signature = Some(thought_signature);
        self
    }
    /// Sets the role.
    pub fn with_role(mut self, role: ThoughtRole) -> Self {
        self.role = role;
        self
    }
    /// Sets the confidence, clamped to 0..=1 (a non-finite value is ignored).
    pub fn with_confidence(mut self, confidence: f32) -> Self {
        if confidence.is_finite() {
            self.confidence = Some(confidence.clamp(0.0, 1.0));
        }
        self
    }
    /// Sets the importance, clamped to 0..=1 (non-finite: 0.5).
    pub fn with_importance(mut self, importance: f32) -> Self {
        self.importance = if importance.is_finite() { importance.clamp(0.0, 1.0) } else { 0.5 };
        self
    }
    /// Replaces the tags.
    pub fn with_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }
    /// Replaces the concepts.
    pub fn with_concepts<I, S>(mut self, concepts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.concepts = concepts.into_iter().map(Into::into).collect();
        self
    }
    /// Replaces the refs.
    pub fn with_refs(mut self, refs: Vec<u64>) -> Self {
        self.refs = refs;
        self
    }
    /// Replaces the relations.
    pub fn with_relations(mut self, relations: Vec<ThoughtRelation>) -> Self {
        self.relations = relations;
        self
    }
    /// Sets the entity type.
    pub fn with_entity_type(mut self, entity_type: impl Into<String>) -> Self {
        self.entity_type = Some(entity_type.into());
        self
    }
    /// Sets the source episode (not stored by this engine).
    pub fn with_source_episode(mut self, source_episode: impl Into<String>) -> Self {
        self.source_episode = Some(source_episode.into());
        self
    }
    /// Adds a relation to a thought of another chain.
    pub fn with_cross_chain_relation(mut self, kind: ThoughtRelationKind, chain_key: impl Into<String>, target_id: Uuid) -> Self {
        self.relations.push(ThoughtRelation { kind, target_id, chain_key: Some(chain_key.into()), valid_at: None, invalid_at: None });
        self
    }
}

/// A retrieval filter (0.10.10's type and builders; this crate has no
/// `MentisDb::query`: filter [`crate::MentisDb::thoughts`] or use `mentisdbd`'s search).
#[derive(Debug, Clone, Default)]
pub struct ThoughtQuery {
    /// Types to match.
    pub thought_types: Option<Vec<ThoughtType>>,
    /// Roles to match.
    pub roles: Option<Vec<ThoughtRole>>,
    /// Agent ids to match.
    pub agent_ids: Option<Vec<String>>,
    /// Agent names to match.
    pub agent_names: Option<Vec<String>>,
    /// Agent owners to match.
    pub agent_owners: Option<Vec<String>>,
    /// Match when any tag matches.
    pub tags_any: Vec<String>,
    /// Match when any concept matches.
    pub concepts_any: Vec<String>,
    /// Text to look for.
    pub text_contains: Option<String>,
    /// Minimum importance.
    pub min_importance: Option<f32>,
    /// Minimum confidence.
    pub min_confidence: Option<f32>,
    /// Earliest timestamp, inclusive.
    pub since: Option<DateTime<Utc>>,
    /// Latest timestamp, inclusive.
    pub until: Option<DateTime<Utc>>,
    /// Most thoughts to return.
    pub limit: Option<usize>,
    /// Entity type to match.
    pub entity_type: Option<String>,
    /// Source episode to match.
    pub source_episode: Option<String>,
    /// Include superseded, corrected or invalidated thoughts.
    pub include_invalidated: bool,
}

fn strings<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Vec<String> {
    items.into_iter().map(Into::into).collect()
}

impl ThoughtQuery {
    /// A filter matching everything.
    pub fn new() -> Self {
        Self::default()
    }
    /// Matches these types.
    pub fn with_types(mut self, thought_types: Vec<ThoughtType>) -> Self {
        self.thought_types = Some(thought_types);
        self
    }
    /// Matches these roles.
    pub fn with_roles(mut self, roles: Vec<ThoughtRole>) -> Self {
        self.roles = Some(roles);
        self
    }
    /// Matches these agent ids.
    pub fn with_agent_ids<I: IntoIterator<Item = S>, S: Into<String>>(mut self, agent_ids: I) -> Self {
        self.agent_ids = Some(strings(agent_ids));
        self
    }
    /// Matches these agent names.
    pub fn with_agent_names<I: IntoIterator<Item = S>, S: Into<String>>(mut self, agent_names: I) -> Self {
        self.agent_names = Some(strings(agent_names));
        self
    }
    /// Matches these agent owners.
    pub fn with_agent_owners<I: IntoIterator<Item = S>, S: Into<String>>(mut self, agent_owners: I) -> Self {
        self.agent_owners = Some(strings(agent_owners));
        self
    }
    /// Matches any of these tags.
    pub fn with_tags_any<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags_any = strings(tags);
        self
    }
    /// Matches any of these concepts.
    pub fn with_concepts_any<I: IntoIterator<Item = S>, S: Into<String>>(mut self, concepts: I) -> Self {
        self.concepts_any = strings(concepts);
        self
    }
    /// Matches this text.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text_contains = Some(text.into());
        self
    }
    /// Minimum importance.
    pub fn with_min_importance(mut self, importance: f32) -> Self {
        self.min_importance = Some(importance);
        self
    }
    /// Minimum confidence.
    pub fn with_min_confidence(mut self, confidence: f32) -> Self {
        self.min_confidence = Some(confidence);
        self
    }
    /// Earliest timestamp.
    pub fn with_since(mut self, since: DateTime<Utc>) -> Self {
        self.since = Some(since);
        self
    }
    /// Latest timestamp.
    pub fn with_until(mut self, until: DateTime<Utc>) -> Self {
        self.until = Some(until);
        self
    }
    /// Most results.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }
    /// Entity type.
    pub fn with_entity_type(mut self, entity_type: impl Into<String>) -> Self {
        self.entity_type = Some(entity_type.into());
        self
    }
    /// Source episode.
    pub fn with_source_episode(mut self, source_episode: impl Into<String>) -> Self {
        self.source_episode = Some(source_episode.into());
        self
    }
    /// Include invalidated thoughts.
    pub fn with_include_invalidated(mut self, include_invalidated: bool) -> Self {
        self.include_invalidated = include_invalidated;
        self
    }
}
