//! The daemon-wide skill registry (filled in by the skills issue).

/// Why a skill-registry operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// Placeholder until the registry lands.
    #[error("the skill registry is not available yet")]
    Unavailable,
}

impl SkillError {
    /// A stable, machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "skill"
    }
}

use crate::storage::{Storage, StorageError};

/// The persisted skill registry (placeholder until the skills issue lands).
#[derive(Debug, Default)]
pub struct SkillStore {}

impl SkillStore {
    /// Loads the registry from storage.
    pub fn open(_storage: &dyn Storage) -> Result<Self, StorageError> {
        Ok(SkillStore {})
    }
}

/// The skill tools (none until the skills issue lands).
pub mod tools {
    /// The skill tool table.
    pub const TOOLS: &[crate::dispatch::ToolDef] = &[];
}
