//! Who may write to the registry: the acting agent is looked up in the
//! agent registry of the call's chain and must be active
//! ([`crate::MentisDb::skill_agent`]). When it has an
//! active key, its upload must carry a valid Ed25519 signature over the exact
//! UTF-8 bytes of the content, and its deprecation or revocation one over
//! [`status_payload`].

use super::error::SkillError;
use super::registry::Actor;
use crate::agents::{AgentRecord, AgentStatus};
use crate::signature::verify_detached;

/// The acting agent as the registry records it.
pub fn actor(rec: &AgentRecord) -> Actor {
    Actor { agent_id: rec.agent_id.clone(), agent_name: rec.display_name.clone(), agent_owner: rec.agent_owner.clone() }
}

/// How a keyed agent signs an upload.
pub const UPLOAD_SIGNING: &str = "skill uploads must be signed: pass signing_key_id and skill_signature (Ed25519 over the exact UTF-8 bytes of content)";
/// How a keyed agent signs a deprecation or revocation.
pub const STATUS_SIGNING: &str = "skill status changes must be signed: pass signing_key_id and status_signature (Ed25519 over the UTF-8 bytes of \"mentisdb/skill-status/v1\\n<skill_id>\\n<deprecated|revoked>\\n<latest_version_id>\\n<reason or empty>\")";

/// The bytes an agent signs to deprecate or revoke a skill. Binding the
/// latest version id means a signed change cannot be replayed after a new
/// version was uploaded. Fields cannot contain newlines except the last
/// (`skill_id` has no control characters, version ids are UUIDs).
pub fn status_payload(skill_id: &str, status: &str, latest_version_id: &str, reason: Option<&str>) -> Vec<u8> {
    format!("mentisdb/skill-status/v1\n{skill_id}\n{status}\n{latest_version_id}\n{}", reason.unwrap_or("")).into_bytes()
}

/// Checks a signature over `message` against the agent's keys. Unsigned
/// requests pass only when the agent has no active key (`how` says how to
/// sign); a signature that is present must verify against an active key.
pub fn check_signature(rec: &AgentRecord, chain_key: &str, message: &[u8], signing_key_id: Option<&str>, signature: Option<&[u8]>, sig_field: &str, how: &'static str) -> Result<(), SkillError> {
    let invalid = |reason: String| SkillError::SignatureInvalid { agent_id: rec.agent_id.clone(), reason };
    let active: Vec<&str> = rec.active_keys().map(|k| k.key_id.as_str()).collect();
    match (signing_key_id, signature) {
        (None, None) if active.is_empty() => Ok(()),
        (None, None) => Err(SkillError::SignatureRequired { agent_id: rec.agent_id.clone(), chain_key: chain_key.to_string(), how }),
        (Some(_), None) => Err(invalid(format!("signing_key_id was given without {sig_field}; pass both"))),
        (None, Some(_)) => Err(invalid(format!("{sig_field} was given without signing_key_id; pass both"))),
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
            verify_detached(&key.public_key_bytes, message, sig).map_err(|m| invalid(format!("{m}; {how}")))
        }
    }
}
