//! The skill registry's way in from the engine: the [`MentisDb`] methods the
//! skill tools call, as the chain tools call [`MentisDb::with_chain`] and
//! [`MentisDb::append`], and the agent tools [`MentisDb::edit_agents`].

use super::MentisDb;
use crate::agents::{AgentRecord, AgentStatus};
use crate::skills::{SkillError, SkillRegistry, SkillWrite};
use crate::error::ToolError;

impl MentisDb {
    /// Runs `f` over the daemon-wide skill registry under its read lock.
    pub fn with_skills<R>(&self, f: impl FnOnce(&SkillRegistry) -> R) -> R {
        self.skills.read(f)
    }

    /// The registry record of `agent_id` in chain `chain_key`, which must be
    /// registered and active there to change skills.
    pub fn skill_agent(&self, chain_key: &str, agent_id: &str) -> Result<AgentRecord, ToolError> {
        let rec = self.with_chain(chain_key, |c| c.and_then(|c| c.agents().get(agent_id).cloned()))?;
        let rec = rec.ok_or_else(|| SkillError::AgentNotRegistered { agent_id: agent_id.to_string(), chain_key: chain_key.to_string() })?;
        if rec.status != AgentStatus::Active {
            return Err(SkillError::AgentInactive { agent_id: agent_id.to_string(), chain_key: chain_key.to_string() }.into());
        }
        Ok(rec)
    }

    /// Validates and durably writes one skill event: `prepare` sees the
    /// registry under its write lock and returns the event (with the
    /// upload's parsed document, when it has one); once the event is durable
    /// and applied, `view` reads the skill it changed (by id).
    pub fn commit_skill<R>(
        &self,
        prepare: impl FnOnce(&SkillRegistry) -> Result<SkillWrite, SkillError>,
        view: impl FnOnce(&SkillRegistry, &str) -> R,
    ) -> Result<R, ToolError> {
        Ok(self.skills.commit(self.storage(), prepare, view)?)
    }

    /// Deletes a skill and every version of it from the registry and its
    /// log (see [`crate::skills::SkillStore::delete`]); returns `view` of
    /// the skill as it was.
    pub fn delete_skill<R>(&self, skill_id: &str, view: impl FnOnce(&SkillRegistry) -> R) -> Result<R, ToolError> {
        Ok(self.skills.delete(self.storage(), skill_id, view)?)
    }
}
