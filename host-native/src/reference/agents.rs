//! The reference's agent registry sidecar (`<chain>.agents.json`): display
//! names, owners, descriptions, aliases, public keys and disabled status,
//! written again through our agent tools.

use super::ReferenceError;
use crate::target::Target;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A reference agent record (its registry sidecar).
#[derive(Debug, Clone, Deserialize)]
pub(super) struct RefAgent {
    pub(super) agent_id: String,
    #[serde(default)]
    pub(super) display_name: Option<String>,
    #[serde(default)]
    pub(super) owner: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    public_keys: Vec<RefKey>,
    #[serde(default)]
    status: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct RefKey {
    key_id: String,
    algorithm: String,
    public_key_bytes: Vec<u8>,
    #[serde(default)]
    revoked_at: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RefAgents {
    #[serde(default)]
    agents: BTreeMap<String, RefAgent>,
}

pub(super) fn parse_agents(bytes: &[u8]) -> Result<Vec<RefAgent>, ReferenceError> {
    serde_json::from_slice::<RefAgents>(bytes).map(|a| a.agents.into_values().collect()).map_err(ReferenceError::AgentRegistry)
}

/// Writes the reference's agent records through the agent tools. A record
/// our rules refuse (e.g. a public key that is not a valid Ed25519 point)
/// is reported in `warnings` and the rest goes on.
pub(super) fn import_agents(db: &Target, chain_key: &str, agents: &[RefAgent], warnings: &mut Vec<String>) -> usize {
    for a in agents {
        let mut call = |tool: &str, args: Value| {
            if let Err(e) = db.call(tool, args) {
                warnings.push(format!("chain '{chain_key}', agent '{}': {tool}: {e}", a.agent_id));
            }
        };
        let mut args = json!({ "chain_key": chain_key, "agent_id": a.agent_id });
        if let Some(n) = a.display_name.as_deref().filter(|n| !n.trim().is_empty()) {
            args["display_name"] = json!(n);
        }
        if let Some(o) = a.owner.as_deref().filter(|o| !o.trim().is_empty()) {
            args["agent_owner"] = json!(o);
        }
        if let Some(d) = a.description.as_deref().filter(|d| !d.trim().is_empty()) {
            args["description"] = json!(d);
        }
        call("mentisdb_upsert_agent", args);
        // Every alias, the agent id included when the reference lists it (its first display name).
        for alias in &a.aliases {
            call("mentisdb_add_agent_alias", json!({ "chain_key": chain_key, "agent_id": a.agent_id, "alias": alias }));
        }
        for k in &a.public_keys {
            call("mentisdb_add_agent_key", json!({ "chain_key": chain_key, "agent_id": a.agent_id, "key_id": k.key_id, "algorithm": k.algorithm, "public_key_bytes": k.public_key_bytes }));
            if k.revoked_at.is_some() {
                call("mentisdb_revoke_agent_key", json!({ "chain_key": chain_key, "agent_id": a.agent_id, "key_id": k.key_id }));
            }
        }
        if matches!(a.status.as_deref(), Some("Revoked" | "Disabled" | "revoked" | "disabled")) {
            call("mentisdb_disable_agent", json!({ "chain_key": chain_key, "agent_id": a.agent_id }));
        }
    }
    agents.len()
}
