//! Why a skill-registry operation failed.

use crate::error_kind::ErrorKind;
use crate::storage::StorageError;

/// Why a skill-registry operation failed. Nothing was stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The content does not parse in its format.
    #[error("invalid {format} skill content: {error}")]
    InvalidContent {
        /// The format the content was parsed as.
        format: &'static str,
        /// The parse error.
        error: super::document::DocumentError,
    },
    /// An argument failed validation.
    #[error("invalid {field}: {message}")]
    InvalidField {
        /// The argument's name.
        field: &'static str,
        /// Why it failed.
        message: String,
    },
    /// No skill with this id.
    #[error("no skill '{skill_id}' in the registry; call mentisdb_list_skills or mentisdb_search_skill for the stored ids")]
    NotFound {
        /// The id looked up.
        skill_id: String,
    },
    /// The skill has no version with this id.
    #[error("skill '{skill_id}' has no version '{version_id}'; call mentisdb_skill_versions for its version ids")]
    VersionNotFound {
        /// The skill.
        skill_id: String,
        /// The version id looked up.
        version_id: String,
    },
    /// The acting agent is not in the chain's agent registry.
    #[error("agent '{agent_id}' is not registered in chain '{chain_key}'; register it first with mentisdb_upsert_agent on that chain")]
    AgentNotRegistered {
        /// The acting agent.
        agent_id: String,
        /// The chain whose registry was searched.
        chain_key: String,
    },
    /// The acting agent is disabled.
    #[error("agent '{agent_id}' is not active (status revoked) in chain '{chain_key}' and cannot change skills")]
    AgentInactive {
        /// The acting agent.
        agent_id: String,
        /// The chain where it is disabled.
        chain_key: String,
    },
    /// The agent has an active key but the upload or status change is unsigned.
    #[error("agent '{agent_id}' has an active signing key in chain '{chain_key}', so {how}")]
    SignatureRequired {
        /// The acting agent.
        agent_id: String,
        /// The chain holding its key.
        chain_key: String,
        /// What the caller must pass.
        how: &'static str,
    },
    /// The signature does not verify, or names an unknown or revoked key.
    #[error("skill signature rejected for agent '{agent_id}': {reason}")]
    SignatureInvalid {
        /// The agent the signature claims.
        agent_id: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The agent's owner differs from the skill creator's.
    #[error("agent '{agent_id}' may not {action} skill '{skill_id}': only agents with the same agent_owner as the skill's creator may add versions, deprecate or revoke it ({owner_rule})")]
    NotOwner {
        /// The acting agent.
        agent_id: String,
        /// The skill.
        skill_id: String,
        /// What it tried (e.g. `revoke`).
        action: &'static str,
        /// The owners involved, for the message.
        owner_rule: String,
    },
    /// The skill is revoked; revocation is final.
    #[error("skill '{skill_id}' is revoked, which is final: it cannot be {action}; upload the content under a new skill_id")]
    Revoked {
        /// The revoked skill.
        skill_id: String,
        /// What was attempted.
        action: &'static str,
    },
    /// The registry log is damaged; the registry serves reads only.
    #[error("the skill registry is read-only because its log is damaged: {0}")]
    ReadOnly(String),
    /// Writing failed; the registry is unchanged.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl SkillError {
    /// A stable, machine-readable kind: `invalid_arguments`, `not_found`,
    /// `skill_rejected` (permission, signature or lifecycle) or `storage`.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SkillError::InvalidContent { .. } | SkillError::InvalidField { .. } => ErrorKind::InvalidArguments,
            SkillError::NotFound { .. } | SkillError::VersionNotFound { .. } | SkillError::AgentNotRegistered { .. } => ErrorKind::NotFound,
            SkillError::AgentInactive { .. }
            | SkillError::SignatureRequired { .. }
            | SkillError::SignatureInvalid { .. }
            | SkillError::NotOwner { .. }
            | SkillError::Revoked { .. } => ErrorKind::SkillRejected,
            SkillError::ReadOnly(_) | SkillError::Storage(_) => ErrorKind::Storage,
        }
    }
}
