//! Skill search: every filter of `mentisdb_search_skill`, ANDed.
//!
//! Skill-level filters look at the skill and its latest version's metadata:
//! `text` (case-insensitive substring of skill_id, name, description, tags,
//! triggers), `skill_ids`, `names` (case-insensitive), `tags_any`,
//! `triggers_any` (case-insensitive, any overlap) and `statuses`.
//! Version-level filters (`uploaded_by_agent_ids`, `uploaded_by_agent_names`,
//! `uploaded_by_agent_owners`, `formats`, `schema_versions`, `since`, `until`)
//! match when at least one version satisfies all of them together. Results
//! are ordered newest activity first (`updated_at`, then skill_id).

use super::model::{Skill, SkillFormat, SkillStatus, SkillVersion};
use super::registry::SkillRegistry;

/// Default number of results.
pub const DEFAULT_LIMIT: usize = 100;

/// Fields the manifest lists as searchable.
pub const SEARCHABLE_FIELDS: &[&str] = &[
    "text",
    "skill_ids",
    "names",
    "tags_any",
    "triggers_any",
    "uploaded_by_agent_ids",
    "uploaded_by_agent_names",
    "uploaded_by_agent_owners",
    "statuses",
    "formats",
    "schema_versions",
    "since",
    "until",
];

/// A parsed search. Empty lists mean "no filter".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillQuery {
    /// Words to match in names, descriptions, tags, triggers and bodies.
    pub text: Option<String>,
    /// Only these skill ids.
    pub skill_ids: Vec<String>,
    /// Only skills with one of these names.
    pub names: Vec<String>,
    /// Only skills with at least one of these tags.
    pub tags_any: Vec<String>,
    /// Only skills with at least one of these triggers.
    pub triggers_any: Vec<String>,
    /// Only versions uploaded by one of these agent ids.
    pub uploaded_by_agent_ids: Vec<String>,
    /// Only versions uploaded by one of these agent names.
    pub uploaded_by_agent_names: Vec<String>,
    /// Only versions uploaded by agents with one of these owners.
    pub uploaded_by_agent_owners: Vec<String>,
    /// Only skills with one of these statuses.
    pub statuses: Vec<SkillStatus>,
    /// Only versions uploaded in one of these formats.
    pub formats: Vec<SkillFormat>,
    /// Only documents with one of these schema versions.
    pub schema_versions: Vec<u64>,
    /// Inclusive lower bound on a version's upload time, epoch ms.
    pub since: Option<i64>,
    /// Inclusive upper bound on a version's upload time, epoch ms.
    pub until: Option<i64>,
    /// At most this many results.
    pub limit: Option<usize>,
}

fn any_ci(wanted: &[String], have: &[String]) -> bool {
    wanted.is_empty() || wanted.iter().any(|w| have.iter().any(|h| h.to_lowercase() == w.trim().to_lowercase()))
}

impl SkillQuery {
    fn skill_matches(&self, s: &Skill) -> bool {
        let doc = &s.latest().document;
        if !self.skill_ids.is_empty() && !self.skill_ids.iter().any(|id| id == &s.skill_id) {
            return false;
        }
        if !self.names.is_empty() && !self.names.iter().any(|n| n.trim().to_lowercase() == doc.name.to_lowercase()) {
            return false;
        }
        if !any_ci(&self.tags_any, &doc.tags) || !any_ci(&self.triggers_any, &doc.triggers) {
            return false;
        }
        if !self.statuses.is_empty() && !self.statuses.contains(&s.status) {
            return false;
        }
        if let Some(text) = self.text.as_deref().map(|t| t.trim().to_lowercase()).filter(|t| !t.is_empty()) {
            let fields = [&s.skill_id, &doc.name, &doc.description];
            let hit = fields.iter().any(|f| f.to_lowercase().contains(&text)) || doc.tags.iter().chain(&doc.triggers).any(|f| f.to_lowercase().contains(&text));
            if !hit {
                return false;
            }
        }
        true
    }

    fn version_filters(&self) -> bool {
        !(self.uploaded_by_agent_ids.is_empty()
            && self.uploaded_by_agent_names.is_empty()
            && self.uploaded_by_agent_owners.is_empty()
            && self.formats.is_empty()
            && self.schema_versions.is_empty()
            && self.since.is_none()
            && self.until.is_none())
    }

    fn version_matches(&self, v: &SkillVersion) -> bool {
        (self.uploaded_by_agent_ids.is_empty() || self.uploaded_by_agent_ids.contains(&v.uploaded_by_agent_id))
            && (self.uploaded_by_agent_names.is_empty() || self.uploaded_by_agent_names.iter().any(|n| n.trim().eq_ignore_ascii_case(&v.uploaded_by_agent_name)))
            && (self.uploaded_by_agent_owners.is_empty() || v.uploaded_by_agent_owner.as_ref().is_some_and(|o| self.uploaded_by_agent_owners.iter().any(|w| w.trim().eq_ignore_ascii_case(o))))
            && (self.formats.is_empty() || self.formats.contains(&v.source_format))
            && (self.schema_versions.is_empty() || self.schema_versions.contains(&u64::from(v.document.schema_version)))
            && self.since.is_none_or(|t| v.uploaded_at_millis >= t)
            && self.until.is_none_or(|t| v.uploaded_at_millis <= t)
    }

    /// Whether a skill matches every filter.
    pub fn matches(&self, s: &Skill) -> bool {
        self.skill_matches(s) && (!self.version_filters() || s.versions.iter().any(|v| self.version_matches(v)))
    }

    /// The matching skills, newest activity first, at most `limit`.
    pub fn run<'r>(&self, registry: &'r SkillRegistry) -> Vec<&'r Skill> {
        let mut hits: Vec<&Skill> = registry.skills().filter(|s| self.matches(s)).collect();
        crate::sorting::sort_by(&mut hits, |a, b| b.updated_at_millis.cmp(&a.updated_at_millis).then_with(|| a.skill_id.cmp(&b.skill_id)));
        hits.truncate(self.limit.unwrap_or(DEFAULT_LIMIT));
        hits
    }
}
