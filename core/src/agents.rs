//! The per-chain agent registry: who writes to a chain, under which names,
//! with which keys.
//!
//! Registry edits (upsert, description, alias, keys, disable) are persisted as
//! a JSON sidecar written with [`crate::storage::Storage::write_atomic`].
//! Activity (`thought_count`, first/last seen) is derived from the chain when
//! it is opened and kept current on append, so appends never rewrite the sidecar.

use crate::storage::StorageError;
use crate::named_enum::named_enum;
use crate::signature::parse_public_key;
use crate::thought::Thought;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

named_enum! {
    /// Whether an agent (or one of its keys) may write: `active` or `revoked`
    /// (case-insensitive; `disabled` is accepted for `revoked`).
    pub enum AgentStatus("status", IgnoreCase) {
        /// May write.
        Active = "active",
        /// May no longer write; its history stays.
        Revoked = "revoked" (also "disabled"),
    }
}

named_enum! {
    /// The signature algorithm of an agent key (case-insensitive).
    pub enum KeyAlgorithm("algorithm", IgnoreCase) {
        /// Ed25519 (32-byte public keys, 64-byte signatures).
        Ed25519 = "ed25519",
    }
}

/// MentisDB 0.9 and 0.10 write an agent's and a key's status and a key's
/// algorithm by their variant names (`"Active"`, `"Revoked"`, `"Ed25519"`),
/// in replies and in the registry sidecar alike; they are read in any case.
mod variant_names {
    use super::{AgentStatus, KeyAlgorithm};
    use serde::Serializer;

    pub(super) fn status<S: Serializer>(v: &AgentStatus, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match v {
            AgentStatus::Active => "Active",
            AgentStatus::Revoked => "Revoked",
        })
    }

    pub(super) fn algorithm<S: Serializer>(v: &KeyAlgorithm, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match v {
            KeyAlgorithm::Ed25519 => "Ed25519",
        })
    }
}

/// One public verification key of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentKey {
    /// The key's id, unique within the agent.
    pub key_id: String,
    /// The signature algorithm the key verifies (`"Ed25519"`).
    #[serde(serialize_with = "variant_names::algorithm")]
    #[schemars(with = "String")]
    pub algorithm: KeyAlgorithm,
    /// The raw public key (32 bytes for Ed25519).
    pub public_key_bytes: Vec<u8>,
    #[schemars(with = "String")]
    #[serde(serialize_with = "variant_names::status")]
    /// Whether the key still verifies new signatures (`"Active"` or `"Revoked"`).
    pub status: AgentStatus,
    /// When the key was added (RFC 3339).
    pub added_at: String,
    /// When the key was revoked (RFC 3339), if it was.
    pub revoked_at: Option<String>,
}

/// One agent registry record, as the tools return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentRecord {
    /// The agent's id, unique within the chain.
    pub agent_id: String,
    /// The human-readable name shown for the agent.
    pub display_name: String,
    /// Who runs the agent (a person, team or organisation), if set.
    pub agent_owner: Option<String>,
    /// MentisDB 0.10.10's name of `agent_owner`: the same value, written for
    /// 0.10 clients (set only through `set_owner`; a stored copy is replaced
    /// by `agent_owner` when a sidecar is read).
    #[serde(default)]
    pub owner: Option<String>,
    /// Free-form description of the agent.
    pub description: Option<String>,
    /// Other names the agent has written under.
    pub aliases: Vec<String>,
    #[schemars(with = "String")]
    #[serde(serialize_with = "variant_names::status")]
    /// Whether the agent may append (`"Active"`) or is disabled (`"Revoked"`).
    pub status: AgentStatus,
    /// The agent's verification keys, active and revoked.
    pub public_keys: Vec<AgentKey>,
    #[serde(default)]
    /// Thoughts the agent has written to this chain.
    pub thought_count: u64,
    #[serde(default)]
    /// Index of the agent's first thought in the chain.
    pub first_seen_index: Option<u64>,
    #[serde(default)]
    /// Index of the agent's latest thought in the chain.
    pub last_seen_index: Option<u64>,
    #[serde(default)]
    /// Timestamp of the agent's first thought (RFC 3339).
    pub first_seen_at: Option<String>,
    #[serde(default)]
    /// Timestamp of the agent's latest thought (RFC 3339).
    pub last_seen_at: Option<String>,
}

impl AgentRecord {
    /// Whether `name` is the agent's display name or one of its aliases (any case).
    fn is_named(&self, name: &str) -> bool {
        self.display_name.eq_ignore_ascii_case(name) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// Gives the agent a new display name, keeping the old one among its
    /// aliases, as MentisDB 0.10 does (a new record's display name is its
    /// id, so the first rename lists the id as an alias).
    fn rename(&mut self, name: String) {
        let name = name.trim().to_string();
        if name.is_empty() {
            return;
        }
        let old = std::mem::replace(&mut self.display_name, name);
        // A new spelling of the same name is not another name.
        if !old.is_empty() && !old.eq_ignore_ascii_case(&self.display_name) && !self.aliases.iter().any(|a| a.eq_ignore_ascii_case(&old)) {
            self.aliases.push(old);
        }
    }

    /// Sets the owner under both of its names.
    fn set_owner(&mut self, owner: Option<String>) {
        self.owner.clone_from(&owner);
        self.agent_owner = owner;
    }

    fn new(agent_id: &str) -> Self {
        AgentRecord {
            agent_id: agent_id.to_string(),
            display_name: agent_id.to_string(),
            agent_owner: None,
            owner: None,
            description: None,
            aliases: Vec::new(),
            status: AgentStatus::Active,
            public_keys: Vec::new(),
            thought_count: 0,
            first_seen_index: None,
            last_seen_index: None,
            first_seen_at: None,
            last_seen_at: None,
        }
    }

    /// Keys that currently verify signatures.
    pub fn active_keys(&self) -> impl Iterator<Item = &AgentKey> {
        self.public_keys.iter().filter(|k| k.status == AgentStatus::Active)
    }

    /// Lower-cased registry text searched by `text` filters.
    pub fn search_text(&self) -> String {
        let mut s = format!("{} {}", self.agent_id, self.display_name);
        for part in [&self.agent_owner, &self.description].into_iter().flatten() {
            s.push(' ');
            s.push_str(part);
        }
        for a in &self.aliases {
            s.push(' ');
            s.push_str(a);
        }
        s.to_lowercase()
    }
}

/// Fields an upsert may set; `None` leaves a field unchanged.
#[derive(Debug, Clone, Default)]
pub struct AgentUpsert {
    /// New display name.
    pub display_name: Option<String>,
    /// New owner.
    pub agent_owner: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New status (`revoked` disables appends by the agent).
    pub status: Option<AgentStatus>,
}

/// The registry of one chain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentRegistry {
    agents: BTreeMap<String, AgentRecord>,
    /// Entity types declared with `mentisdb_upsert_entity_type`
    /// (`entity_types.rs`); absent from a sidecar that declares none.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    entity_types: BTreeSet<String>,
}

/// An agent-registry sidecar that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("agent registry sidecar: {0}")]
pub struct SidecarError(#[from] serde_json::Error);

impl AgentRegistry {
    /// Parses a sidecar; activity fields are reset (they are derived from the chain).
    pub fn from_sidecar(bytes: &[u8]) -> Result<Self, SidecarError> {
        let mut reg: AgentRegistry = serde_json::from_slice(bytes)?;
        for r in reg.agents.values_mut() {
            r.owner.clone_from(&r.agent_owner);
            r.thought_count = 0;
            r.first_seen_index = None;
            r.last_seen_index = None;
            r.first_seen_at = None;
            r.last_seen_at = None;
        }
        Ok(reg)
    }

    /// The sidecar bytes.
    pub fn to_sidecar(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("registry serializes")
    }

    /// Declares an entity type (trimmed by the caller); false when it was declared already.
    pub fn declare_entity_type(&mut self, label: &str) -> bool {
        self.entity_types.insert(label.to_string())
    }

    /// The declared entity types, in label order.
    pub fn declared_entity_types(&self) -> impl Iterator<Item = &str> {
        self.entity_types.iter().map(String::as_str)
    }

    /// Looks up an agent.
    pub fn get(&self, agent_id: &str) -> Option<&AgentRecord> {
        self.agents.get(agent_id)
    }

    /// All records, ordered by agent id.
    pub fn records(&self) -> impl Iterator<Item = &AgentRecord> {
        self.agents.values()
    }

    /// Number of registered agents.
    pub fn len(&self) -> usize {
        self.agents.len()
    }

    /// Whether no agent is registered.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    /// Records a committed thought: registers its producer when new and
    /// updates activity.
    pub fn observe(&mut self, t: &Thought) {
        if !self.agents.contains_key(t.agent_id.as_str()) {
            let mut r = AgentRecord::new(&t.agent_id);
            r.display_name = t.agent_name.to_string();
            r.set_owner(t.agent_owner().map(str::to_string));
            self.agents.insert(t.agent_id.to_string(), r);
        }
        let rec = self.agents.get_mut(t.agent_id.as_str()).expect("inserted above");
        rec.thought_count += 1;
        if rec.first_seen_index.is_none() {
            rec.first_seen_index = Some(t.index);
            rec.first_seen_at = Some(t.timestamp().to_string());
        }
        rec.last_seen_index = Some(t.index);
        // Reuses the previous timestamp's buffer (no allocation per thought).
        let last = rec.last_seen_at.get_or_insert_with(String::new);
        last.clear();
        last.push_str(&t.timestamp());
        if rec.agent_owner.is_none() && t.agent_owner().is_some() {
            rec.set_owner(t.agent_owner().map(str::to_string));
        }
    }

    fn get_mut(&mut self, chain_key: &str, agent_id: &str) -> Result<&mut AgentRecord, AgentError> {
        self.agents
            .get_mut(agent_id)
            .ok_or_else(|| AgentError::NotFound { agent_id: agent_id.to_string(), chain_key: chain_key.to_string() })
    }

    /// Creates or updates a record.
    pub fn upsert(&mut self, agent_id: &str, patch: AgentUpsert) -> &AgentRecord {
        let rec = self.agents.entry(agent_id.to_string()).or_insert_with(|| AgentRecord::new(agent_id));
        if let Some(v) = patch.display_name {
            rec.rename(v);
        }
        if let Some(v) = patch.agent_owner {
            rec.set_owner(Some(v));
        }
        if let Some(v) = patch.description {
            rec.description = Some(v);
        }
        if let Some(v) = patch.status {
            rec.status = v;
        }
        rec
    }

    /// Sets (or clears, with `None` or an empty string) the description.
    pub fn set_description(&mut self, chain_key: &str, agent_id: &str, description: Option<String>) -> Result<&AgentRecord, AgentError> {
        let rec = self.get_mut(chain_key, agent_id)?;
        rec.description = description.filter(|d| !d.trim().is_empty());
        Ok(rec)
    }

    /// Adds an alias (no duplicates).
    pub fn add_alias(&mut self, chain_key: &str, agent_id: &str, alias: &str) -> Result<&AgentRecord, AgentError> {
        let alias = alias.trim();
        if alias.is_empty() {
            return Err(AgentError::InvalidField { field: "alias", message: "must not be empty".into() });
        }
        let rec = self.get_mut(chain_key, agent_id)?;
        if !rec.is_named(alias) {
            rec.aliases.push(alias.to_string());
        }
        Ok(rec)
    }

    /// Adds or replaces a public key (replacing re-activates it).
    pub fn add_key(&mut self, chain_key: &str, agent_id: &str, key_id: &str, algorithm: KeyAlgorithm, public_key: Vec<u8>, now: &str) -> Result<&AgentRecord, AgentError> {
        if key_id.trim().is_empty() {
            return Err(AgentError::InvalidField { field: "key_id", message: "must not be empty".into() });
        }
        parse_public_key(&public_key).map_err(|e| AgentError::InvalidField { field: "public_key_bytes", message: e.to_string() })?;
        let rec = self.get_mut(chain_key, agent_id)?;
        let key = AgentKey {
            key_id: key_id.to_string(),
            algorithm,
            public_key_bytes: public_key,
            status: AgentStatus::Active,
            added_at: now.to_string(),
            revoked_at: None,
        };
        match rec.public_keys.iter_mut().find(|k| k.key_id == key_id) {
            Some(existing) => *existing = key,
            None => rec.public_keys.push(key),
        }
        Ok(rec)
    }

    /// Revokes a key; its history stays.
    pub fn revoke_key(&mut self, chain_key: &str, agent_id: &str, key_id: &str, now: &str) -> Result<&AgentRecord, AgentError> {
        let rec = self.get_mut(chain_key, agent_id)?;
        let key = rec
            .public_keys
            .iter_mut()
            .find(|k| k.key_id == key_id)
            .ok_or_else(|| AgentError::KeyNotFound { agent_id: agent_id.to_string(), key_id: key_id.to_string() })?;
        if key.status == AgentStatus::Active {
            key.status = AgentStatus::Revoked;
            key.revoked_at = Some(now.to_string());
        }
        Ok(rec)
    }

    /// Marks an agent revoked: it can no longer append.
    pub fn disable(&mut self, chain_key: &str, agent_id: &str) -> Result<&AgentRecord, AgentError> {
        let rec = self.get_mut(chain_key, agent_id)?;
        rec.status = AgentStatus::Revoked;
        Ok(rec)
    }
}

/// Why an agent-registry operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// No such agent in the chain's registry.
    #[error("agent '{agent_id}' is not registered in chain '{chain_key}'")]
    NotFound {
        /// The agent looked up.
        agent_id: String,
        /// The chain searched.
        chain_key: String,
    },
    /// No such key on the agent.
    #[error("agent '{agent_id}' has no key '{key_id}'")]
    KeyNotFound {
        /// The agent looked up.
        agent_id: String,
        /// The key id that is missing.
        key_id: String,
    },
    /// A field failed validation.
    #[error("invalid {field}: {message}")]
    InvalidField {
        /// The field that failed.
        field: &'static str,
        /// Why it failed.
        message: String,
    },
    /// Writing the registry failed; the registry is unchanged.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

