//! One chain in memory: its thoughts, lookup indices, agent registry, and the
//! append and verification rules.
//!
//! The chain never touches storage itself; [`crate::db::MentisDb`] writes
//! the bytes [`Chain::prepare_append`] produces, then calls [`Chain::commit`].

use crate::agents::{AgentRegistry, AgentStatus};
use crate::canonical::{body_digest, compute_thought_hash, encode_thought_body};
use crate::error::{AppendError, VerifyError};
use crate::limits::{self, MAX_CONTENT_BYTES, MAX_REFS};
use crate::record::{ChainFormat, DecodedChain};
use crate::signature::{signable_payload, verify_detached};
use crate::thought::{RelationKind, Thought, ThoughtRelation, ThoughtRole, ThoughtType, THOUGHT_SCHEMA_VERSION};
use crate::derived::{Derived, SearchText};
use crate::host::{run_collect, Parallelism};
use crate::keyed_hash::KeyedState;
use crate::lookup::ThoughtLookup;
use crate::timestamp::parse_rfc3339_millis;
use crate::ranked::RankedIndex;
use std::sync::RwLockReadGuard;

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
        }
    }
}

/// Default importance when a caller gives none.
pub(crate) const DEFAULT_IMPORTANCE: f64 = 0.5;

/// An open, verified chain.
///
/// Committing a thought updates only what appends and lookups need (the
/// thoughts, id and hash lookups, agent activity). The query indices (text
/// filter, ranked retrieval) are `Derived` (`derived.rs`): they catch up with new thoughts
/// on the first query that needs them.
#[derive(Debug)]
pub struct Chain {
    chain_key: String,
    format: ChainFormat,
    thoughts: Vec<Thought>,
    /// Each thought's timestamp in epoch milliseconds, parsed once when it
    /// was committed or verified (parallel to `thoughts`).
    timestamps_ms: Vec<i64>,
    by_id: ThoughtLookup,
    by_hash: ThoughtLookup,
    agents: AgentRegistry,
    search_text: Derived<SearchText>,
    ranked: Derived<RankedIndex>,
}

/// Checks `t` as the thought at `position`, after one whose hash is
/// `prev`; `hash_mismatch` is the hash its body really has when that
/// differs from `t.hash`.
/// Returns the thought's timestamp in epoch milliseconds.
fn verify_next(position: u64, prev: Option<&str>, t: &Thought, hash_mismatch: Option<String>) -> Result<i64, VerifyError> {
    if t.index != position {
        return Err(VerifyError::IndexGap { position, found: t.index });
    }
    if t.prev_hash.as_deref() != prev {
        return Err(VerifyError::PrevHashMismatch { index: t.index, expected: prev.map(str::to_string), found: t.prev_hash.clone() });
    }
    if let Some(recomputed) = hash_mismatch {
        return Err(VerifyError::HashMismatch { index: t.index, expected: recomputed, found: t.hash.clone() });
    }
    if let Some(bad) = t.refs.iter().find(|r| **r >= t.index) {
        return Err(VerifyError::BadRef { index: t.index, target: *bad });
    }
    parse_rfc3339_millis(&t.timestamp).map_err(|_| VerifyError::BadTimestamp { index: t.index, timestamp: t.timestamp.clone() })
}

fn invalid(field: &'static str, message: impl std::fmt::Display) -> AppendError {
    AppendError::InvalidField { field, message: message.to_string() }
}

impl Chain {
    /// An empty chain whose lookup maps use the fixed default key (tests, tools).
    pub fn new(chain_key: &str, format: ChainFormat) -> Self {
        Self::with_hasher(chain_key, format, KeyedState::default())
    }

    /// An empty chain whose lookup maps are keyed by the host (see `keyed_hash.rs`).
    pub fn with_hasher(chain_key: &str, format: ChainFormat, hasher: KeyedState) -> Self {
        Chain {
            chain_key: chain_key.to_string(),
            format,
            thoughts: Vec::new(),
            timestamps_ms: Vec::new(),
            by_id: ThoughtLookup::new(hasher, |t| &t.id),
            by_hash: ThoughtLookup::new(hasher, |t| &t.hash),
            agents: AgentRegistry::default(),
            search_text: Derived::default(),
            ranked: Derived::new(RankedIndex::with_hasher(hasher)),
        }
    }

    /// Verifies decoded thoughts (hashes, links, indices, refs) and builds the chain.
    pub fn load(decoded: DecodedChain, agents: AgentRegistry) -> Result<Chain, VerifyError> {
        Self::load_with_hasher(decoded, agents, KeyedState::default())
    }

    /// [`Chain::load`] with host-keyed lookup maps.
    pub fn load_with_hasher(decoded: DecodedChain, agents: AgentRegistry, hasher: KeyedState) -> Result<Chain, VerifyError> {
        Self::load_with(decoded, agents, hasher, &crate::host::Sequential)
    }

    /// [`Chain::load_with_hasher`], building the id and hash lookups and the
    /// agents' activity in jobs the host may run at the same time.
    pub fn load_with(decoded: DecodedChain, agents: AgentRegistry, hasher: KeyedState, parallelism: &dyn Parallelism) -> Result<Chain, VerifyError> {
        let mut chain = Chain::with_hasher(&decoded.chain_key, decoded.format, hasher);
        let thoughts = decoded.thoughts;
        let mut mismatches = decoded.body_hash_mismatches.map(Vec::into_iter);
        let mut timestamps_ms = Vec::with_capacity(thoughts.len());
        for (pos, t) in thoughts.iter().enumerate() {
            let mismatch = match mismatches.as_mut() {
                // Binary: the decoder already hashed the stored body.
                Some(m) => m.next().flatten(),
                None => Some(compute_thought_hash(t)).filter(|h| *h != t.hash),
            };
            let prev = pos.checked_sub(1).map(|p| thoughts[p].hash.as_str());
            timestamps_ms.push(verify_next(pos as u64, prev, t, mismatch)?);
        }
        // Three independent structures over the verified thoughts.
        enum Built {
            Lookup(ThoughtLookup),
            Agents(AgentRegistry),
        }
        let lookup = |key_of: crate::lookup::KeyOf| {
            let mut l = ThoughtLookup::new(hasher, key_of);
            l.reserve(thoughts.len());
            (0..thoughts.len()).for_each(|pos| l.insert(&thoughts, pos));
            Built::Lookup(l)
        };
        let agents = std::sync::Mutex::new(Some(agents));
        let built = run_collect(parallelism, 3, |job| match job {
            0 => lookup(|t| &t.id),
            1 => lookup(|t| &t.hash),
            _ => {
                let mut agents = agents.lock().unwrap_or_else(|e| e.into_inner()).take().expect("one agents job");
                thoughts.iter().for_each(|t| agents.observe(t));
                Built::Agents(agents)
            }
        });
        for (job, b) in built.into_iter().enumerate() {
            match (job, b) {
                (0, Built::Lookup(l)) => chain.by_id = l,
                (1, Built::Lookup(l)) => chain.by_hash = l,
                (_, Built::Agents(a)) => chain.agents = a,
                _ => unreachable!("job order is kept"),
            }
        }
        chain.thoughts = thoughts;
        chain.timestamps_ms = timestamps_ms;
        Ok(chain)
    }


    /// Each thought's timestamp in epoch milliseconds, parallel to
    /// [`Chain::thoughts`] (parsed once, at commit or open).
    pub fn timestamps_millis(&self) -> &[i64] {
        &self.timestamps_ms
    }

    /// The chain's key.
    pub fn key(&self) -> &str {
        &self.chain_key
    }

    /// The chain's storage format.
    pub fn format(&self) -> ChainFormat {
        self.format
    }

    /// All thoughts in append order.
    pub fn thoughts(&self) -> &[Thought] {
        &self.thoughts
    }

    /// Number of thoughts.
    pub fn len(&self) -> usize {
        self.thoughts.len()
    }

    /// Whether the chain has no thoughts.
    pub fn is_empty(&self) -> bool {
        self.thoughts.is_empty()
    }

    /// The newest thought.
    pub fn head(&self) -> Option<&Thought> {
        self.thoughts.last()
    }

    /// The lower-cased text the `text` filter matches, caught up with every thought.
    pub(crate) fn search_text(&self) -> RwLockReadGuard<'_, SearchText> {
        self.search_text.get(&self.thoughts)
    }

    /// Looks a thought up by id.
    pub fn by_id(&self, id: &str) -> Option<&Thought> {
        self.by_id.get(&self.thoughts, id).map(|i| &self.thoughts[i])
    }

    /// Looks a thought up by hash (lowercase hex; upper case accepted).
    pub fn by_hash(&self, hash: &str) -> Option<&Thought> {
        self.by_hash.get(&self.thoughts, &hash.to_ascii_lowercase()).map(|i| &self.thoughts[i])
    }

    /// Looks a thought up by index.
    pub fn by_index(&self, index: u64) -> Option<&Thought> {
        usize::try_from(index).ok().and_then(|i| self.thoughts.get(i))
    }

    /// The ranked-retrieval index, caught up with every thought.
    pub fn ranked_index(&self) -> RwLockReadGuard<'_, RankedIndex> {
        self.ranked.get(&self.thoughts)
    }

    /// Brings the query indices up to date by at most `max` thoughts each;
    /// returns whether they cover the whole chain.
    pub fn warm_indexes(&self, max: usize) -> bool {
        let text = self.search_text.catch_up_some(&self.thoughts, max);
        self.ranked.catch_up_some(&self.thoughts, max) && text
    }

    /// Registers (or clears) the embedding provider; thoughts are embedded
    /// as the ranked index catches up with them.
    pub fn set_embedding_provider(&mut self, provider: Option<std::sync::Arc<dyn crate::ranked::EmbeddingProvider>>) {
        let index = self.ranked.get_mut();
        let covered = index.len();
        index.set_embedder(provider, &self.thoughts[..covered]);
    }

    /// The agent registry.
    pub fn agents(&self) -> &AgentRegistry {
        &self.agents
    }

    /// The agent registry, for registry edits (the caller persists the sidecar).
    pub fn agents_mut(&mut self) -> &mut AgentRegistry {
        &mut self.agents
    }

    /// Integrity of the tip without re-hashing the chain: the head's hash
    /// recomputes and links to its predecessor. The rest was verified at open
    /// and every later thought was built and hashed by [`Chain::prepare_append`].
    pub fn head_integrity_ok(&self) -> bool {
        match self.thoughts.last() {
            None => true,
            Some(head) => {
                let n = self.thoughts.len();
                let prev = if n >= 2 { Some(self.thoughts[n - 2].hash.clone()) } else { None };
                head.prev_hash == prev && compute_thought_hash(head) == head.hash
            }
        }
    }

    /// Validates a new thought (and `timestamp`, RFC 3339), checks its
    /// signature, and builds it with its index, timestamp, `prev_hash` and hash. Nothing changes until [`Chain::commit`].
    pub fn prepare_append(&self, input: NewThought, timestamp: String, fresh_id: String) -> Result<Thought, AppendError> {
        self.prepare_append_with_payload(input, timestamp, fresh_id).map(|(t, _)| t)
    }

    /// [`Chain::prepare_append`], also returning the binary record payload
    /// (the canonical body that was hashed, then the 32 hash bytes), so the
    /// caller can frame it without encoding or hashing again.
    pub fn prepare_append_with_payload(&self, input: NewThought, timestamp: String, fresh_id: String) -> Result<(Thought, Vec<u8>), AppendError> {
        limits::check_key("agent_id", &input.agent_id).map_err(|m| invalid("agent_id", m))?;
        parse_rfc3339_millis(&timestamp).map_err(|m| invalid("timestamp", m))?;
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
        limits::check_labels("tags", &input.tags).map_err(|m| invalid("tags", m))?;
        limits::check_labels("concepts", &input.concepts).map_err(|m| invalid("concepts", m))?;
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
        let id = match input.thought_id {
            Some(id) => {
                limits::check_key("thought_id", &id).map_err(|m| invalid("thought_id", m))?;
                id
            }
            None => fresh_id,
        };
        if self.by_id.contains(&self.thoughts, &id) {
            return Err(AppendError::DuplicateId { id });
        }
        if let Some(rec) = self.agents.get(&input.agent_id) {
            if rec.status == AgentStatus::Revoked {
                return Err(AppendError::AgentDisabled { agent_id: input.agent_id, chain_key: self.chain_key.clone() });
            }
        }
        let agent_name = input.agent_name.filter(|n| !n.trim().is_empty()).unwrap_or_else(|| input.agent_id.clone());
        let mut thought = Thought {
            schema_version: THOUGHT_SCHEMA_VERSION,
            id,
            index,
            timestamp,
            session_id: input.session_id,
            agent_id: input.agent_id,
            agent_name,
            agent_owner: input.agent_owner.filter(|o| !o.trim().is_empty()),
            signing_key_id: input.signing_key_id,
            thought_signature: input.thought_signature,
            thought_type: input.thought_type,
            role: input.role,
            content: input.content,
            confidence,
            importance,
            tags: input.tags,
            concepts: input.concepts,
            refs,
            relations,
            prev_hash: self.thoughts.last().map(|t| t.hash.clone()),
            hash: String::new(),
        };
        self.check_signature(&thought)?;
        let mut payload = encode_thought_body(&thought);
        let digest = body_digest(&payload);
        thought.hash = crate::sha256::to_hex(&digest);
        payload.extend_from_slice(&digest);
        Ok((thought, payload))
    }

    fn resolve_relation(&self, rel: RelationInput) -> Result<ThoughtRelation, AppendError> {
        let foreign = rel.chain_key.as_deref().is_some_and(|k| k != self.chain_key);
        if foreign {
            let target_id = rel.target_id.ok_or_else(|| invalid("relations", "a relation into another chain needs target_id"))?;
            limits::check_key("relations.target_id", &target_id).map_err(|m| invalid("relations", m))?;
            return Ok(ThoughtRelation { kind: rel.kind, target_id, target_index: None, chain_key: rel.chain_key });
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
        Ok(ThoughtRelation { kind: rel.kind, target_id: target.id.clone(), target_index: Some(target.index), chain_key: None })
    }

    fn check_signature(&self, t: &Thought) -> Result<(), AppendError> {
        let reject = |reason: &str| AppendError::SignatureInvalid { agent_id: t.agent_id.clone(), reason: reason.to_string() };
        let record = self.agents.get(&t.agent_id);
        let has_active_key = record.is_some_and(|r| r.active_keys().next().is_some());
        match (&t.signing_key_id, &t.thought_signature) {
            (None, None) if has_active_key => Err(AppendError::SignatureRequired { agent_id: t.agent_id.clone() }),
            (None, None) => Ok(()),
            (Some(_), None) | (None, Some(_)) => Err(reject("signing_key_id and thought_signature must be given together")),
            (Some(key_id), Some(sig)) => {
                let key = record
                    .and_then(|r| r.public_keys.iter().find(|k| &k.key_id == key_id))
                    .ok_or_else(|| reject(&format!("no key '{key_id}' is registered for this agent")))?;
                if key.status != AgentStatus::Active {
                    return Err(reject(&format!("key '{key_id}' is revoked")));
                }
                let payload = signable_payload(&self.chain_key, t, key_id);
                verify_detached(&key.public_key_bytes, &payload, sig).map_err(|e| reject(&e.to_string()))
            }
        }
    }

    /// Adds a prepared (or verified) thought to the in-memory state.
    ///
    /// # Panics
    /// When the thought's timestamp is not RFC 3339, which
    /// [`Chain::prepare_append`] and verification at open rule out.
    pub fn commit(&mut self, t: Thought) {
        let millis = parse_rfc3339_millis(&t.timestamp).expect("a committed thought has a verified RFC 3339 timestamp (see Chain::prepare_append)");
        self.timestamps_ms.push(millis);
        self.agents.observe(&t);
        self.thoughts.push(t);
        let pos = self.thoughts.len() - 1;
        self.by_id.insert(&self.thoughts, pos);
        self.by_hash.insert(&self.thoughts, pos);
    }
}
