//! Appending to a chain: what a caller sends ([`NewThought`],
//! [`RelationInput`]) and the rules a new thought must pass before
//! [`Chain::commit`] adds it: field limits, ref and relation targets, the
//! agent's status and, when it has an active key, its signature.

use super::replay::{replay_of, Prepared};
use super::Chain;
use crate::agents::AgentStatus;
use crate::canonical::{encode_and_hash, SALT_BYTES};
use crate::error::AppendError;
use crate::hex_bytes::{ContentSalt, ThoughtHash};
use crate::limits::{self, MAX_CONTENT_BYTES, MAX_REFS};
use crate::signature::{signable_payload, verify_detached};
use crate::thought::{RelationKind, Thought, ThoughtExtras, ThoughtRelation, ThoughtRole, ThoughtType, schema_version_for};
use crate::timestamp::{parse_rfc3339_millis, CanonicalText, TimestampFraction};

/// A relation as a caller sends it: the target by id or by index.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationInput {
    /// The kind of relation.
    pub kind: RelationKind,
    /// The target thought's id (this one or `target_index`).
    pub target_id: Option<String>,
    /// The target thought's index (this one or `target_id`).
    pub target_index: Option<u64>,
    /// The chain holding the target, when it is not this chain.
    pub chain_key: Option<String>,
}

/// Everything a caller supplies for a new thought.
#[derive(Debug, Clone, PartialEq)]
pub struct NewThought {
    /// Client-chosen id (required when signing); otherwise the host's id source picks one.
    pub thought_id: Option<String>,
    /// Id of the agent writing the thought.
    pub agent_id: String,
    /// The agent's display name (registers or updates it).
    pub agent_name: Option<String>,
    /// The agent's owner (registers or updates it).
    pub agent_owner: Option<String>,
    /// What kind of thought this is.
    pub thought_type: ThoughtType,
    /// The role the thought plays in a conversation.
    pub role: ThoughtRole,
    /// The thought's text.
    pub content: String,
    /// Importance in `0.0..=1.0`; the default when `None`.
    pub importance: Option<f64>,
    /// Confidence in `0.0..=1.0`, if the agent gave one.
    pub confidence: Option<f64>,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// Concepts the thought is about.
    pub concepts: Vec<String>,
    /// Indices of earlier thoughts it refers to.
    pub refs: Vec<u64>,
    /// Typed relations to earlier thoughts (here or in other chains).
    pub relations: Vec<RelationInput>,
    /// The session the thought belongs to, if any.
    pub session_id: Option<String>,
    /// Id of the agent key that signed the thought.
    pub signing_key_id: Option<String>,
    /// Ed25519 signature over the signable payload (with `signing_key_id`).
    pub thought_signature: Option<Vec<u8>>,
    /// What kind of entity the thought is about (trimmed; blank is none).
    /// A thought with one is schema 3 (`canonical.rs`).
    pub entity_type: Option<String>,
    /// Store the thought only while this lease's holder holds its key
    /// ([`crate::claims`]); it then carries the fence tag.
    pub fencing: Option<Fencing>,
    /// A claim record the engine writes ([`crate::claims`]): the only
    /// thoughts that may carry reserved tags.
    pub(crate) claim: Option<crate::claims::ClaimRecord>,
}

/// The lease an append is fenced with: a key of the chain and the fencing
/// token its claim answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fencing {
    /// The claimed key.
    pub key: String,
    /// The fencing token of the claim.
    pub token: u64,
}

impl NewThought {
    /// A minimal thought; set the other public fields as needed.
    pub fn new(agent_id: &str, thought_type: ThoughtType, content: &str) -> Self {
        NewThought {
            thought_id: None,
            agent_id: agent_id.to_string(),
            agent_name: None,
            agent_owner: None,
            thought_type,
            role: ThoughtRole::Memory,
            content: content.to_string(),
            importance: None,
            confidence: None,
            tags: Vec::new(),
            concepts: Vec::new(),
            refs: Vec::new(),
            relations: Vec::new(),
            session_id: None,
            signing_key_id: None,
            thought_signature: None,
            entity_type: None,
            fencing: None,
            claim: None,
        }
    }
}

/// Default importance when a caller gives none.
pub(crate) const DEFAULT_IMPORTANCE: f64 = 0.5;

fn invalid(field: &'static str, message: impl std::fmt::Display) -> AppendError {
    AppendError::InvalidField { field, message: message.to_string() }
}

impl Chain {
    /// Validates a new thought (and `timestamp`, RFC 3339), checks its
    /// signature, and builds it with its index, timestamp, `prev_hash` and hash. Nothing changes until [`Chain::commit`].
    /// `fresh_id` is its id unless the input names one; `salt` is its
    /// content salt (16 random bytes from the host: `canonical.rs` says why).
    /// A `thought_id` already in the chain is [`AppendError::DuplicateId`]
    /// here (or [`AppendError::Conflict`] when the fields differ).
    pub fn prepare_append(&self, input: NewThought, timestamp: String, fresh_id: String, salt: [u8; SALT_BYTES]) -> Result<Thought, AppendError> {
        match self.prepare_append_with_payload(input, timestamp, fresh_id, salt)? {
            Prepared::New { thought, .. } => Ok(thought),
            Prepared::Replay(t) => Err(AppendError::DuplicateId { id: t.id.to_string() }),
        }
    }

    /// [`Chain::prepare_append`], also returning the binary record payload
    /// (the canonical body that was hashed, then the 32 hash bytes), so the
    /// caller can frame it without encoding or hashing again. A `thought_id`
    /// already in the chain is a replay or a conflict (see `chain/replay.rs`).
    pub fn prepare_append_with_payload(&self, input: NewThought, timestamp: String, fresh_id: String, salt: [u8; SALT_BYTES]) -> Result<Prepared, AppendError> {
        limits::check_key("agent_id", &input.agent_id).map_err(|m| invalid("agent_id", m))?;
        // The engine's clock gives the canonical text; a caller's own is kept as given.
        let (at_ms, timestamp_fraction, timestamp_text) = match (CanonicalText::parse(&timestamp), TimestampFraction::parse(&timestamp)) {
            (Some(ms), _) => (ms, TimestampFraction::default(), None),
            (None, Some((ms, fraction))) => (ms, fraction, None),
            (None, None) => (parse_rfc3339_millis(&timestamp).map_err(|m| invalid("timestamp", m))?, TimestampFraction::default(), Some(timestamp.into_boxed_str())),
        };
        if input.content.trim().is_empty() {
            return Err(invalid("content", "must not be empty"));
        }
        if input.content.len() > MAX_CONTENT_BYTES {
            return Err(invalid("content", format!("is {} bytes; the limit is {MAX_CONTENT_BYTES}", input.content.len())));
        }
        for (field, v) in [("agent_name", &input.agent_name), ("agent_owner", &input.agent_owner), ("session_id", &input.session_id)] {
            if let Some(v) = v {
                limits::check_label(field, v, limits::MAX_LABEL_BYTES).map_err(|m| invalid(field, m))?;
            }
        }
        let entity_type = input.entity_type.as_deref().map(str::trim).filter(|e| !e.is_empty()).map(str::to_string);
        if let Some(e) = &entity_type {
            limits::check_label("entity_type", e, limits::MAX_LABEL_BYTES).map_err(|m| invalid("entity_type", m))?;
        }
        limits::check_labels("tags", &input.tags).map_err(|m| invalid("tags", m))?;
        limits::check_labels("concepts", &input.concepts).map_err(|m| invalid("concepts", m))?;
        let is_claim = input.claim.is_some();
        let mut tags = input.tags;
        let fence_added = self.coordination_tags(&mut tags, input.fencing.as_ref(), is_claim);
        let importance = limits::clamp_score("importance", input.importance.unwrap_or(DEFAULT_IMPORTANCE)).map_err(|m| invalid("importance", m))?;
        let confidence = input.confidence.map(|c| limits::clamp_score("confidence", c)).transpose().map_err(|m| invalid("confidence", m))?;
        let index = self.thoughts.len() as u64;
        if input.refs.len() > MAX_REFS || input.relations.len() > MAX_REFS {
            return Err(invalid("refs", format!("at most {MAX_REFS} refs and {MAX_REFS} relations per thought")));
        }
        let mut refs: Vec<u64> = Vec::with_capacity(input.refs.len());
        for r in input.refs {
            if r >= index {
                return Err(AppendError::UnknownTarget { field: "ref", target: r.to_string(), len: index });
            }
            if !refs.contains(&r) {
                refs.push(r);
            }
        }
        let relations = input.relations.into_iter().map(|rel| self.resolve_relation(rel)).collect::<Result<Vec<_>, _>>()?;
        // Only a caller-chosen id can name a stored thought (a replay); a
        // fresh id is new by construction.
        let (id, replayed) = match input.thought_id {
            Some(id) => {
                limits::check_key("thought_id", &id).map_err(|m| invalid("thought_id", m))?;
                let replayed = self.by_id(&id);
                (id, replayed)
            }
            None => (fresh_id, None),
        };
        // A replay answers the stored thought whatever the agent's status,
        // its claims or its fence now.
        if replayed.is_none() {
            self.check_coordination(&input.agent_id, &tags, input.fencing.as_ref(), input.claim.as_ref(), fence_added && input.thought_signature.is_some(), at_ms)?;
        }
        // The engine's claim records are written whatever the registry says of its agent id.
        if let Some(rec) = self.agents.get(&input.agent_id).filter(|_| replayed.is_none() && !is_claim) {
            if rec.status == AgentStatus::Revoked {
                return Err(AppendError::AgentDisabled { agent_id: input.agent_id, chain_key: self.chain_key.clone() });
            }
        }
        let agent_name = input.agent_name.filter(|n| !n.trim().is_empty()).unwrap_or_else(|| input.agent_id.clone());
        let mut thought = Thought {
            schema_version: schema_version_for(entity_type.as_deref()),
            timestamp_fraction,
            source_episode: Default::default(),
            id: crate::ThoughtId::from(id),
            index,
            timestamp_ms: at_ms,
            agent_id: self.labels.get(&input.agent_id),
            agent_name: self.labels.get(&agent_name),
            thought_type: input.thought_type,
            role: input.role,
            content: input.content.into(),
            importance,
            tags: self.labels.get_list(&tags),
            concepts: self.labels.get_list(&input.concepts),
            extras: ThoughtExtras {
                session_id: input.session_id.map(Into::into),
                agent_owner: input.agent_owner.filter(|o| !o.trim().is_empty()).map(Into::into),
                signing_key_id: input.signing_key_id.map(Into::into),
                thought_signature: input.thought_signature.map(Into::into),
                confidence,
                refs,
                relations,
                entity_type: entity_type.map(Into::into),
                timestamp_text,
                forgotten: None,
            }
            .boxed(),
            prev_hash: self.thoughts.last().map(|t| t.hash),
            hash: ThoughtHash::default(),
            content_salt: Some(ContentSalt::from(salt)),
        };
        thought.stamp_relations();
        if let Some(stored) = replayed {
            return replay_of(stored, &thought);
        }
        if !is_claim {
            self.check_signature(&thought)?;
        }
        let (mut payload, digest) = encode_and_hash(&thought);
        thought.hash = ThoughtHash::from(digest);
        payload.extend_from_slice(&digest);
        Ok(Prepared::New { thought, payload })
    }

    fn resolve_relation(&self, rel: RelationInput) -> Result<ThoughtRelation, AppendError> {
        let foreign = rel.chain_key.as_deref().is_some_and(|k| k != self.chain_key);
        if foreign {
            let target_id = rel.target_id.ok_or_else(|| invalid("relations", "a relation into another chain needs target_id"))?;
            limits::check_key("relations.target_id", &target_id).map_err(|m| invalid("relations", m))?;
            return Ok(ThoughtRelation { kind: rel.kind, target_id, target_index: None, chain_key: rel.chain_key, valid_at: None });
        }
        let target = match (&rel.target_id, rel.target_index) {
            (Some(id), None) => self.by_id(id),
            (None, Some(i)) => self.by_index(i),
            (Some(id), Some(i)) => self.by_index(i).filter(|t| &t.id == id),
            (None, None) => return Err(invalid("relations", "each relation needs target_id or target_index")),
        };
        let target = target.ok_or_else(|| AppendError::UnknownTarget {
            field: "relation target",
            target: rel.target_id.clone().unwrap_or_else(|| rel.target_index.unwrap_or_default().to_string()),
            len: self.thoughts.len() as u64,
        })?;
        Ok(ThoughtRelation { kind: rel.kind, target_id: target.id.to_string(), target_index: Some(target.index), chain_key: None, valid_at: None })
    }

    fn check_signature(&self, t: &Thought) -> Result<(), AppendError> {
        let reject = |reason: &str| AppendError::SignatureInvalid { agent_id: t.agent_id.to_string(), reason: reason.to_string() };
        let record = self.agents.get(&t.agent_id);
        let has_active_key = record.is_some_and(|r| r.active_keys().next().is_some());
        match (&t.signing_key_id(), &t.thought_signature()) {
            (None, None) if has_active_key => Err(AppendError::SignatureRequired { agent_id: t.agent_id.to_string() }),
            (None, None) => Ok(()),
            (Some(_), None) | (None, Some(_)) => Err(reject("signing_key_id and thought_signature must be given together")),
            (Some(key_id), Some(sig)) => {
                let key = record
                    .and_then(|r| r.public_keys.iter().find(|k| *k.key_id == **key_id))
                    .ok_or_else(|| reject(&format!("no key '{key_id}' is registered for this agent")))?;
                if key.status != AgentStatus::Active {
                    return Err(reject(&format!("key '{key_id}' is revoked")));
                }
                let payload = signable_payload(&self.chain_key, t, key_id);
                verify_detached(&key.public_key_bytes, &payload, sig).map_err(|e| reject(&e.to_string()))
            }
        }
    }
}
