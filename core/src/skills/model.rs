//! The skill registry's data model: formats, lifecycle statuses, the parsed
//! skill document and immutable versions (the JSON the tools return is in
//! `crate::dispatch::replies`).

use crate::named_enum::named_enum;
use serde::{Deserialize, Serialize};

/// Version of the registry (its log format and tool semantics).
pub const REGISTRY_VERSION: u32 = 1;
/// Newest skill-document schema version; uploads may declare `1..=` this.
pub const CURRENT_SCHEMA_VERSION: u32 = 1;

named_enum! {
    /// How a skill version was uploaded, or how it is read back: `markdown`
    /// (or `md`) or `json`, trimmed and case-insensitive.
    pub enum SkillFormat("skill format", TrimIgnoreCase) {
        /// Markdown with optional YAML-style frontmatter.
        Markdown = "markdown" | "md",
        /// A JSON skill document (see [`SkillDocument`]).
        Json = "json",
    }
}

impl SkillFormat {
    /// The format of content uploaded without an explicit `format`: JSON when
    /// it starts with `{`, Markdown otherwise.
    pub fn sniff(content: &str) -> Self {
        if content.trim_start().starts_with('{') {
            SkillFormat::Json
        } else {
            SkillFormat::Markdown
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            SkillFormat::Markdown => 1,
            SkillFormat::Json => 2,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(SkillFormat::Markdown),
            2 => Some(SkillFormat::Json),
            _ => None,
        }
    }
}

named_enum! {
    /// Lifecycle status of a skill (`active`, `deprecated` or `revoked`,
    /// trimmed and case-insensitive). `revoked` is final.
    pub enum SkillStatus("skill status", TrimIgnoreCase) {
        /// Served normally.
        Active = "active",
        /// Kept and readable, flagged in every read.
        Deprecated = "deprecated",
        /// Final: no new versions or status changes.
        Revoked = "revoked",
    }
}

impl SkillStatus {
    pub(crate) fn code(self) -> u8 {
        match self {
            SkillStatus::Active => 1,
            SkillStatus::Deprecated => 2,
            SkillStatus::Revoked => 3,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(SkillStatus::Active),
            2 => Some(SkillStatus::Deprecated),
            3 => Some(SkillStatus::Revoked),
            _ => None,
        }
    }
}

/// A skill's content, format-neutral. This is also the JSON skill document:
/// `{"schema_version":1,"name":..,"description":..,"tags":[..],"triggers":[..],"warnings":[..],"body":"<markdown>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillDocument {
    /// Document schema version (1).
    pub schema_version: u32,
    /// The skill's name.
    pub name: String,
    /// What the skill is for.
    pub description: String,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// Phrases or situations that should bring the skill up.
    pub triggers: Vec<String>,
    /// Cautions for whoever follows the skill.
    pub warnings: Vec<String>,
    /// The Markdown instructions (everything after the frontmatter).
    pub body: String,
}

/// One immutable uploaded version.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillVersion {
    /// The version's id.
    pub version_id: String,
    /// 1 for the first upload of a skill, then 2, 3, ...
    pub version_number: u64,
    /// Upload time, epoch milliseconds.
    pub uploaded_at_millis: i64,
    /// Upload time, RFC 3339.
    pub uploaded_at: String,
    /// The uploading agent's id.
    pub uploaded_by_agent_id: String,
    /// The uploading agent's display name.
    pub uploaded_by_agent_name: String,
    /// The uploading agent's owner, if any.
    pub uploaded_by_agent_owner: Option<String>,
    /// The authenticated caller of the upload (a host's token name), if any.
    pub uploaded_by_caller: Option<String>,
    /// The format the content was uploaded in.
    pub source_format: SkillFormat,
    /// SHA-256 of the content bytes, lowercase hex.
    pub content_hash: String,
    /// The uploaded text, byte for byte.
    pub content: String,
    /// Key id and Ed25519 signature over `content`, when the upload was signed.
    pub signature: Option<(String, Vec<u8>)>,
    /// The parsed document.
    pub document: SkillDocument,
}

/// One lifecycle change, kept forever.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StatusChange {
    #[schemars(with = "String")]
    /// The status set by this change.
    pub status: SkillStatus,
    /// Why, if the agent said.
    pub reason: Option<String>,
    /// Time of the change, RFC 3339.
    pub changed_at: String,
    /// The agent that made the change; `null` when the operator made it
    /// without naming an agent.
    pub changed_by_agent_id: Option<String>,
    /// The authenticated caller (a host's token name) that made the change, if any.
    pub changed_by_caller: Option<String>,
    /// Key that signed the change, when it was signed.
    pub signing_key_id: Option<String>,
    /// Ed25519 signature over the status payload, when it was signed.
    pub status_signature: Option<Vec<u8>>,
    #[serde(skip)]
    /// Time of the change, epoch milliseconds.
    pub changed_at_millis: i64,
}

/// A skill: its versions (oldest first, never empty) and lifecycle.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The skill's id.
    pub skill_id: String,
    /// Every uploaded version, oldest first.
    pub versions: Vec<SkillVersion>,
    /// The current lifecycle status.
    pub status: SkillStatus,
    /// Reason given with the current status, if any.
    pub status_reason: Option<String>,
    /// Every status change, oldest first.
    pub status_history: Vec<StatusChange>,
    /// Time of the latest upload or status change, epoch milliseconds.
    pub updated_at_millis: i64,
    /// Position of each version in `versions`, by version id (no scan per read).
    pub(crate) version_index: std::collections::BTreeMap<String, usize>,
}

impl Skill {
    /// The newest version.
    pub fn latest(&self) -> &SkillVersion {
        self.versions.last().expect("a skill always has a version")
    }

    /// The first version (its uploader is the creator).
    pub fn first(&self) -> &SkillVersion {
        self.versions.first().expect("a skill always has a version")
    }

    /// Looks a version up by id (a map lookup, never a scan or a replay).
    pub fn version(&self, version_id: &str) -> Option<&SkillVersion> {
        self.version_index.get(version_id).map(|i| &self.versions[*i])
    }

    /// Adds the next version (its number must be `versions.len() + 1`).
    pub(crate) fn push_version(&mut self, v: SkillVersion) {
        self.version_index.insert(v.version_id.clone(), self.versions.len());
        self.versions.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_round_trip() {
        assert_eq!(SkillFormat::parse("MD").unwrap(), SkillFormat::Markdown);
        assert_eq!(SkillFormat::parse("json").unwrap(), SkillFormat::Json);
        assert!(SkillFormat::parse("yaml").unwrap_err().to_string().contains("markdown, md, json"));
        for &f in SkillFormat::ALL {
            assert_eq!(SkillFormat::from_code(f.code()), Some(f));
            assert_eq!(SkillFormat::parse(f.as_str()).unwrap(), f);
        }
        for &s in SkillStatus::ALL {
            assert_eq!(SkillStatus::from_code(s.code()), Some(s));
            assert_eq!(SkillStatus::parse(s.as_str()).unwrap(), s);
        }
        assert!(SkillStatus::parse("gone").unwrap_err().to_string().contains("active, deprecated, revoked"));
        assert_eq!(SkillFormat::sniff("  {\"name\":1}"), SkillFormat::Json);
        assert_eq!(SkillFormat::sniff("# Title"), SkillFormat::Markdown);
    }
}
