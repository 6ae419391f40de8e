//! Storage object names derived from caller-controlled keys.
//!
//! A `chain_key` or `skill_id` never reaches a storage name as given: it is
//! escaped to `[A-Za-z0-9_-]` (other bytes become `_xx` hex), cut to 64
//! characters, and suffixed with 16 hex digits of its SHA-256 so that
//! distinct keys never share an object.

use crate::record::ChainFormat;


/// Prefix of every chain object.
pub const CHAINS_PREFIX: &str = "chains/";
/// The skill registry's append-only log.
pub const SKILLS_LOG: &str = "skills/registry.log";
/// The webhook registry with each webhook's delivery cursors (`webhooks.rs`).
pub const WEBHOOKS_OBJECT: &str = "webhooks.json";

/// The escaped, hash-suffixed stem for a key.
pub fn safe_stem(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 17);
    for b in key.bytes() {
        if out.len() >= 64 {
            break;
        }
        if b.is_ascii_alphanumeric() || b == b'-' {
            out.push(b as char);
        } else {
            out.push('_');
            out.push_str(&hex::encode([b]));
        }
    }
    let digest = crate::sha256::digest(&[key.as_bytes()]);
    out.push('.');
    out.push_str(&hex::encode(&digest[..8]));
    out
}

/// The object holding a chain's thoughts.
pub fn chain_object(chain_key: &str, format: ChainFormat) -> String {
    format!("{CHAINS_PREFIX}{}.{}", safe_stem(chain_key), format.extension())
}

/// The sidecar object holding a chain's agent registry.
pub fn agents_object(chain_key: &str) -> String {
    format!("{CHAINS_PREFIX}{}.agents.json", safe_stem(chain_key))
}

/// The object where a replica keeps the last checkpoint it accepted for a
/// chain (`crate::sync`).
pub fn replica_object(chain_key: &str) -> String {
    format!("replicas/{}.json", safe_stem(chain_key))
}

/// Where the presence entries of chain `chain_key` are stored: every name
/// starting with this is one agent session's entry (`crate::presence`).
pub fn presence_prefix(chain_key: &str) -> String {
    format!("presence/{}.", safe_stem(chain_key))
}

/// The object holding one agent session's presence in a chain.
pub fn presence_object(chain_key: &str, agent_id: &str, session_id: &str) -> String {
    format!("{}{}.json", presence_prefix(chain_key), safe_stem(&format!("{agent_id}\0{session_id}")))
}

/// Whether an object name is a chain object (not a sidecar).
pub fn is_chain_object(name: &str) -> bool {
    name.starts_with(CHAINS_PREFIX) && (name.ends_with(".mdb") || name.ends_with(".jsonl"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::validate_object_name;

    #[test]
    fn hostile_keys_stay_inside() {
        for key in ["../../etc/passwd", "/abs", "a/b", "..", "", "x\0y", "ünï", &"k".repeat(5000), "C:\\win"] {
            let name = chain_object(key, ChainFormat::Binary);
            validate_object_name(&name).unwrap_or_else(|_| panic!("{key:?} -> {name:?}"));
            assert!(name.len() < 120);
            validate_object_name(&agents_object(key)).unwrap();
            validate_object_name(&presence_object(key, key, key)).unwrap();
            assert!(presence_object(key, "a", "s").starts_with(&presence_prefix(key)));
        }
    }

    #[test]
    fn distinct_keys_distinct_names() {
        assert_ne!(safe_stem("a/b"), safe_stem("a_2fb"));
        assert_ne!(safe_stem(&"k".repeat(100)), safe_stem(&"k".repeat(101)));
        assert!(safe_stem("borganism-brain").starts_with("borganism-brain."));
    }
}
