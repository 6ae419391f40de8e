//! Who may write to the registry: the acting agent is looked up in the
//! agent registry of the call's chain, must be active, and when it has an
//! active key its upload must carry a valid Ed25519 signature over the exact
//! UTF-8 bytes of the content.

use super::error::SkillError;
use super::registry::Actor;
use crate::agents::{AgentRecord, AgentStatus};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::signature::verify_detached;

/// Resolves `agent_id` in chain `chain_key` to an active agent record.
pub fn resolve_agent(db: &MentisDb, chain_key: &str, agent_id: &str) -> Result<AgentRecord, ToolError> {
    let rec = db.with_chain(chain_key, |c| c.and_then(|c| c.agents().get(agent_id).cloned()))?;
    let rec = rec.ok_or_else(|| SkillError::AgentNotRegistered { agent_id: agent_id.to_string(), chain_key: chain_key.to_string() })?;
    if rec.status != AgentStatus::Active {
        return Err(SkillError::AgentInactive { agent_id: agent_id.to_string(), chain_key: chain_key.to_string() }.into());
    }
    Ok(rec)
}

/// The acting agent as the registry records it.
pub fn actor(rec: &AgentRecord) -> Actor {
    Actor { agent_id: rec.agent_id.clone(), agent_name: rec.display_name.clone(), agent_owner: rec.agent_owner.clone() }
}

/// Checks an upload's signature against the agent's keys. Unsigned uploads
/// pass only when the agent has no active key; a signature that is present
/// must always verify against an active key of the agent.
pub fn check_upload_signature(rec: &AgentRecord, chain_key: &str, content: &str, signing_key_id: Option<&str>, signature: Option<&[u8]>) -> Result<(), SkillError> {
    let invalid = |reason: String| SkillError::SignatureInvalid { agent_id: rec.agent_id.clone(), reason };
    let active: Vec<&str> = rec.active_keys().map(|k| k.key_id.as_str()).collect();
    match (signing_key_id, signature) {
        (None, None) if active.is_empty() => Ok(()),
        (None, None) => Err(SkillError::SignatureRequired { agent_id: rec.agent_id.clone(), chain_key: chain_key.to_string() }),
        (Some(_), None) => Err(invalid("signing_key_id was given without skill_signature; pass both".into())),
        (None, Some(_)) => Err(invalid("skill_signature was given without signing_key_id; pass both".into())),
        (Some(key_id), Some(sig)) => {
            let listed = if active.is_empty() { "none".to_string() } else { active.join(", ") };
            let key = rec
                .public_keys
                .iter()
                .find(|k| k.key_id == key_id)
                .ok_or_else(|| invalid(format!("the agent has no key '{key_id}' in chain '{chain_key}' (active keys: {listed})")))?;
            if key.status != AgentStatus::Active {
                return Err(invalid(format!("key '{key_id}' is revoked (active keys: {listed})")));
            }
            verify_detached(&key.public_key_bytes, content.as_bytes(), sig).map_err(|m| invalid(format!("{m} (the signature must cover the exact UTF-8 bytes of content)")))
        }
    }
}
