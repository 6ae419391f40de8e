//! Replies of the agent-registry tools.

use crate::agents::AgentRecord;
use crate::entity_types::EntityTypeRecord;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One agent of `mentisdb_list_agents`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentSummary {
    /// Producer id.
    pub agent_id: String,
    /// The registry's display name.
    pub agent_name: String,
    /// Owner / tenant label.
    pub agent_owner: Option<String>,
}

/// `mentisdb_list_agents`: the agents that have written to a chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentListReply {
    /// The chain asked about.
    pub chain_key: String,
    /// Agents with at least one thought, in registry order.
    pub agents: Vec<AgentSummary>,
}

/// `mentisdb_list_agent_registry`: every registry record of a chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentRegistryReply<A = AgentRecord> {
    /// The chain asked about.
    pub chain_key: String,
    /// Every record, in registry order.
    pub agents: Vec<A>,
}

/// One agent record: `mentisdb_get_agent` and every registry edit
/// (upsert, description, alias, keys, disable) return the record after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentReply<A = AgentRecord> {
    /// The chain whose registry holds the agent.
    pub chain_key: String,
    /// The full record.
    pub agent: A,
}

/// `mentisdb_list_entity_types`: every entity type of a chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntityTypeListReply {
    /// The chain asked about.
    pub chain_key: String,
    /// Declared and used labels, in label order.
    pub entity_types: Vec<EntityTypeRecord>,
}

/// `mentisdb_upsert_entity_type`: the record after the upsert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntityTypeReply {
    /// The chain whose registry holds the label.
    pub chain_key: String,
    /// The label's record.
    pub entity_type: EntityTypeRecord,
}
